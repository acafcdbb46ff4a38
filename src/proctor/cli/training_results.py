"""`proctor training check-rcp | score | check-package | summarize`: training results on the command line.

Every command exits 1 when what it checks fails (the official package checker always exits 0).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any

import orjson
import typer
from rich.console import Console
from rich.table import Table

from proctor.cli.apps import training_app
from proctor.errors import ProctorError
from proctor.findings import Finding
from proctor.training.package import check_package, default_compliance
from proctor.training.rcp import check_rcp
from proctor.training.runs import find_benchmark_dirs, read_run_set
from proctor.training.scoring import score_run_set, utilization, weighted_geometric_mean
from proctor.training.summarize import summarize, to_csv, write_outputs

_out = Console(highlight=False, soft_wrap=True)

Ruleset = Annotated[str, typer.Option(help="training ruleset, e.g. 6.1.0")]
Json = Annotated[bool, typer.Option("--json", help="print JSON instead of tables")]
Official = Annotated[
    bool,
    typer.Option(
        "--official-stats",
        help="RCP statistics exactly as mlperf-logging "
        "(untrimmed reference stdev) instead of the rules' (trimmed)",
    ),
]


def _dump(obj: Any) -> None:
    typer.echo(orjson.dumps(obj, default=str, option=orjson.OPT_SERIALIZE_NUMPY).decode())


def _fmt(x: float | None, digits: int = 6) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    return f"{x:.{digits}g}"


def _print_findings(findings: list[Finding]) -> None:
    for f in findings:
        colour = "red" if f.failed else ("yellow" if f.severity.value == "warning" else "dim")
        where = f"{f.path}" + (f":{f.line}" if f.line is not None else "") if f.path else ""
        _out.print(
            f"  [{colour}]{f.severity.value.upper()}[/{colour}] {f.rule}: {f.message}"
            + (f"  ({where})" if where else ""),
            markup=True,
        )


def _rel(path: str, base: Path) -> str:
    try:
        return str(Path(path).relative_to(base)) or "."
    except ValueError:
        return path


def _dirs(directory: Path) -> list[Path]:
    dirs = find_benchmark_dirs(directory)
    if not dirs:
        raise typer.BadParameter(f"no result_*.txt under {directory}", param_hint="DIR")
    return dirs


@training_app.command("check-rcp")
def check_rcp_cmd(
    directory: Annotated[
        Path, typer.Argument(help="benchmark folder, system folder or package", exists=True, file_okay=False)
    ],
    ruleset: Ruleset = "6.1.0",
    rcp_bypass: Annotated[
        bool, typer.Option("--rcp-bypass", help="a failing RCP test passes, flagged")
    ] = False,
    custom_rcps: Annotated[
        Path | None,
        typer.Option(
            "--custom-rcps",
            help="RCP JSON (official format) to use instead of the shipped tables",
            exists=True,
            dir_okay=False,
        ),
    ] = None,
    full_rcps: Annotated[bool, typer.Option("--full-rcps", help="use every RCP, not the pruned set")] = False,
    bert_train_samples: Annotated[
        bool, typer.Option("--bert-train-samples", help="bert: convergence from train_samples")
    ] = False,
    set_scaling: Annotated[
        bool, typer.Option("--set-scaling", help="write scaling.json as the package checker does")
    ] = False,
    official_stats: Official = False,
    json: Json = False,
) -> None:
    """Check convergence against the Reference Convergence Points; exit 1 when a benchmark fails."""
    results = []
    try:
        for d in _dirs(directory):
            results.append(
                check_rcp(
                    d,
                    ruleset,
                    custom_rcps,
                    bypass=rcp_bypass,
                    pruned=not full_rcps,
                    unit="train_samples" if bert_train_samples else "auto",
                    policy="official" if official_stats else "rules",
                    set_scaling=set_scaling,
                )
            )
    except ProctorError as exc:
        raise typer.BadParameter(str(exc)) from exc
    ok = all(r.passed for r in results)
    if json:
        _dump(results[0].to_dict() if len(results) == 1 else [r.to_dict() for r in results])
        raise typer.Exit(0 if ok else 1)
    t = Table(
        "folder", "benchmark", "BS", "RCP", "submission mean", "RCP mean", "min allowed", "verdict", "scaling"
    )
    for r in results:
        verdict = (
            ("[yellow]PASS (bypass)[/yellow]" if r.bypassed else "[green]PASS[/green]")
            if r.passed
            else "[red]FAIL[/red]"
        )
        t.add_row(
            _rel(r.directory or "", directory),
            r.benchmark or "?",
            _fmt(r.batch_size),
            r.rcp,
            _fmt(r.submission_mean, 8),
            _fmt(r.rcp_mean, 8),
            _fmt(r.min_allowed, 8),
            verdict,
            _fmt(r.scaling_factor, 8),
        )
    _out.print(t)
    for r in results:
        _out.print(f"{r.directory}: {r.message}")
        _print_findings([f for f in r.findings if f.rule not in ("rcp",)])
    raise typer.Exit(0 if ok else 1)


@training_app.command("score")
def score_cmd(
    directory: Annotated[
        Path, typer.Argument(help="benchmark folder, system folder or package", exists=True, file_okay=False)
    ],
    ruleset: Ruleset = "6.1.0",
    runs: Annotated[int | None, typer.Option(help="N for a benchmark without a rules entry")] = None,
    reference: Annotated[
        list[str] | None, typer.Option(help="BENCH=MINUTES reference result to normalize to (repeatable)")
    ] = None,
    weight: Annotated[
        list[str] | None,
        typer.Option(help="BENCH=W weight of the geometric mean of normalized scores (repeatable)"),
    ] = None,
    model_flops: Annotated[
        float | None, typer.Option(help="model tensor FLOPs of one run (utilization)")
    ] = None,
    peak_flops: Annotated[float | None, typer.Option(help="peak system tensor FLOP/s (utilization)")] = None,
    compliance: Annotated[bool, typer.Option(help="count non-compliant runs as non-converging")] = False,
    no_scaling: Annotated[bool, typer.Option("--no-scaling", help="ignore scaling.json")] = False,
    json: Json = False,
) -> None:
    """Olympic scores per benchmark (time to train, minutes); exit 1 when a result is invalid."""
    refs = _pairs(reference, "--reference")
    weights = _pairs(weight, "--weight")
    comp = default_compliance(ruleset) if compliance else None
    scores = []
    for d in _dirs(directory):
        rs = read_run_set(d, ruleset=ruleset)
        bench = rs.benchmark or d.name
        pred = (lambda p, c=comp, b=bench: c(p, ruleset, b)[0]) if comp else None
        sc = score_run_set(
            rs,
            runs_required=runs,
            compliance=pred,
            reference_minutes=refs.get(bench),
            apply_scaling=not no_scaling,
        )
        row = sc.to_dict()
        if model_flops is not None and peak_flops is not None and sc.runtime_seconds:
            row["utilization"] = utilization(model_flops, peak_flops, sc.runtime_seconds)
        scores.append((sc, row))
    ok = all(sc.valid for sc, _ in scores)
    norm = {sc.benchmark: sc.normalized for sc, _ in scores if sc.normalized}
    summary = None
    if norm:
        keys = sorted(norm)
        summary = weighted_geometric_mean([norm[k] for k in keys], [weights.get(k, 1.0) for k in keys])
    if json:
        out: Any = [row for _, row in scores]
        if summary is not None:
            out = {"benchmarks": out, "weighted_geometric_mean": summary}
        _dump(out)
        raise typer.Exit(0 if ok else 1)
    t = Table("folder", "benchmark", "runs", "dropped", "score (min)", "scaling", "normalized", "valid")
    for sc, _ in scores:
        t.add_row(
            _rel(sc.directory, directory),
            sc.benchmark or "?",
            str(sc.runs),
            ", ".join(sc.dropped),
            _fmt(sc.score_minutes, 10),
            _fmt(sc.scaling_factor, 8),
            _fmt(sc.normalized),
            "[green]yes[/green]" if sc.valid else "[red]no[/red]",
        )
    _out.print(t)
    for sc, row in scores:
        if "utilization" in row:
            _out.print(f"{sc.directory}: utilization {row['utilization']:.4f}")
        _print_findings([f for f in sc.findings if f.severity.value != "info"])
    if summary is not None:
        _out.print(f"weighted geometric mean of normalized scores: {summary:.6g}")
    raise typer.Exit(0 if ok else 1)


def _pairs(items: list[str] | None, opt: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        try:
            out[name] = float(value)
        except ValueError:
            sep = ""
        if not sep or not name:
            raise typer.BadParameter(f"expected BENCH=NUMBER, got {item!r}", param_hint=opt)
    return out


@training_app.command("check-package")
def check_package_cmd(
    directory: Annotated[
        Path, typer.Argument(help="submission package (systems/, results/)", exists=True, file_okay=False)
    ],
    ruleset: Ruleset = "6.1.0",
    rcp_bypass: Annotated[bool, typer.Option("--rcp-bypass")] = False,
    seed_checker_bypass: Annotated[bool, typer.Option("--seed-checker-bypass")] = False,
    bert_train_samples: Annotated[bool, typer.Option("--rcp-bert-train-samples")] = False,
    custom_rcps: Annotated[Path | None, typer.Option("--custom-rcps", exists=True, dir_okay=False)] = None,
    set_scaling: Annotated[bool, typer.Option("--set-scaling", help="write scaling.json files")] = False,
    extra_benchmark: Annotated[
        list[str] | None,
        typer.Option(help="BENCH=N: a benchmark outside the ruleset (e.g. digits_train=5), repeatable"),
    ] = None,
    official_stats: Official = False,
    json: Json = False,
) -> None:
    """Check a training submission package; exit 1 when it has an error."""
    extra: dict[str, int] = {}
    for item in extra_benchmark or []:
        name, sep, runs = item.partition("=")
        if not sep or not runs.strip().isdigit():
            raise typer.BadParameter(f"'{item}' is not BENCH=N", param_hint="--extra-benchmark")
        extra[name.strip()] = int(runs)
    try:
        rep = check_package(
            directory,
            ruleset,
            rcp_bypass=rcp_bypass,
            seed_bypass=seed_checker_bypass,
            unit="train_samples" if bert_train_samples else "auto",
            set_scaling=set_scaling,
            policy="official" if official_stats else "rules",
            custom_rcps=custom_rcps,
            extra_benchmarks=extra,
        )
    except ProctorError as exc:
        raise typer.BadParameter(str(exc)) from exc
    if json:
        _dump(rep.to_dict())
        raise typer.Exit(0 if rep.valid else 1)
    _print_findings(rep.findings)
    for r in rep.rcp:
        _out.print(f"RCP {r.directory}: {r.message} ({'pass' if r.passed else 'FAIL'})")
    _out.print(
        f"{directory}: "
        + ("[green]PACKAGE VALID[/green]" if rep.valid else "[red]PACKAGE INVALID[/red]")
        + f" ({len(rep.checked)} benchmark folders)",
        markup=True,
    )
    raise typer.Exit(0 if rep.valid else 1)


@training_app.command("summarize")
def summarize_cmd(
    directories: Annotated[
        list[Path], typer.Argument(help="submission folders", exists=True, file_okay=False)
    ],
    ruleset: Ruleset = "6.1.0",
    csv: Annotated[
        Path | None, typer.Option("--csv", help="write X.csv, X_detailed.csv, X.json, X_detailed.json")
    ] = None,
    official_stats: Official = False,
    json: Json = False,
) -> None:
    """One row per system with a score per benchmark, plus the detailed table."""
    s = summarize(directories, ruleset, policy="official" if official_stats else "rules")
    if csv is not None:
        for p in write_outputs(s, csv):
            typer.echo(f"wrote {p}", err=True)
    if json:
        _dump(s.to_dict())
    elif csv is None:
        typer.echo(to_csv(s.columns, s.rows))
        typer.echo(to_csv(s.detailed_columns, s.detailed), nl=False)
    if not json:
        _print_findings(s.findings)
    raise typer.Exit(0 if all(not f.failed for f in s.findings) else 1)
