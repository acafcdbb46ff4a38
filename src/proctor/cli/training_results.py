"""`proctor training check-rcp | score | check-package | summarize`: training results on the command line.

Exit status (README, "Exit status"): 0 valid, 1 checked and found invalid (the official package
checker always exits 0); `summarize` exits 0 whenever it could summarize; 2 the input is wrong (a missing folder, a file where a folder is wanted, a
folder with no result_*.txt at any level these commands read, a bad option value), 130 interrupted.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from proctor.cli import output
from proctor.cli.apps import examples, training_app
from proctor.cli.shared_options import RulesetOpt
from proctor.errors import ProctorError
from proctor.rules.training.rulesets import CURRENT_RULESET

if TYPE_CHECKING:
    from proctor.training.benchmarks import TrainingBenchmark

Json = Annotated[bool, typer.Option("--json", help="print JSON instead of tables")]
Official = Annotated[
    bool,
    typer.Option(
        "--official-stats",
        help="RCP statistics exactly as mlperf-logging "
        "(untrimmed reference stdev) instead of the rules' (trimmed)",
    ),
]
# Benchmarks outside the ruleset's tables (digits_train) come with their tables, N and RCPs from their
# entry points; this hidden override only changes N of one (the demo's short run sets, `--training-runs`).
ExtraRuns = Annotated[
    list[str] | None,
    typer.Option(
        "--extra-benchmark",
        hidden=True,
        metavar="BENCH=N",
        help="BENCH=N: N runs for a registered benchmark outside the ruleset (e.g. digits_train=3)",
    ),
]


def _extra_benchmarks(ruleset: str, items: list[str] | None) -> list[TrainingBenchmark] | None:
    """The registered benchmarks with the N of `--extra-benchmark BENCH=N` (None: no override given)."""
    if not items:
        return None
    from proctor.training.benchmarks import registered

    try:
        known = registered(ruleset)
    except ProctorError as exc:
        output.fail(str(exc))
    runs: dict[str, int] = {}
    for item in items:
        name, sep, n = (x.strip() for x in item.partition("="))
        if not sep or not name or not n.isdigit() or not 0 < int(n) <= 1000:
            output.fail(f"--extra-benchmark: {item!r} is not BENCH=N (N a run count, 1 to 1000)")
        if name not in known:
            output.fail(
                f"--extra-benchmark: {name!r} is not a registered benchmark outside ruleset {ruleset} "
                f"(registered: {', '.join(known) or 'none'})"
            )
        runs[name] = int(n)
    return [replace(b, runs_required=runs.get(b.name, b.runs_required)) for b in known.values()]


def _dump(obj: Any) -> None:
    import orjson

    from proctor.training.compliance import jsonable

    typer.echo(orjson.dumps(jsonable(obj)).decode())


def _fmt(x: float | None, digits: int = 6) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    return f"{x:.{digits}g}"


def _rel(path: str, base: Path) -> str:
    try:
        return str(Path(path).relative_to(base)) or "."
    except ValueError:
        return path


def _dirs(directory: Path) -> list[Path]:
    """Benchmark folders under DIR; exit 2 naming the levels read when there is none."""
    from proctor.training.runs import find_benchmark_dirs

    dirs = find_benchmark_dirs(directory)
    if not dirs:
        output.fail(
            f"no result_*.txt in {directory} or below: give a benchmark folder, a system folder "
            "(results/<system>) or a package (holding results/<system>/<benchmark>/result_*.txt)"
        )
    return dirs


CustomRcpsOpt = Annotated[
    Path | None,
    typer.Option(
        "--custom-rcps",
        metavar="FILE",
        help="RCP JSON (official format) to use instead of the shipped tables",
        exists=True,
        dir_okay=False,
    ),
]

@training_app.command(
    "check-rcp",
    epilog=examples(
        "proctor training check-rcp results/sys/bert",
        "proctor training check-rcp SUBMISSION --bert-train-samples --json",
    ),
)
def check_rcp_cmd(
    directory: Annotated[
        Path, typer.Argument(
            metavar="DIR", help="benchmark folder, system folder or package", exists=True, file_okay=False
        )
    ],
    ruleset: RulesetOpt = CURRENT_RULESET,
    rcp_bypass: Annotated[
        bool, typer.Option("--rcp-bypass", help="a failing RCP test passes, flagged")
    ] = False,
    custom_rcps: CustomRcpsOpt = None,
    full_rcps: Annotated[bool, typer.Option("--full-rcps", help="use every RCP, not the pruned set")] = False,
    bert_train_samples: Annotated[
        bool, typer.Option("--bert-train-samples", help="bert: convergence from train_samples")
    ] = False,
    set_scaling: Annotated[
        bool, typer.Option("--set-scaling", help="write scaling.json as the package checker does")
    ] = False,
    official_stats: Official = False,
    extra_benchmark: ExtraRuns = None,
    json: Json = False,
) -> None:
    """Check convergence against the Reference Convergence Points; exit 1 when a benchmark fails."""
    from proctor.training.rcp import check_rcp

    results = []
    dirs = _dirs(directory)
    extra = _extra_benchmarks(ruleset, extra_benchmark)
    try:
        for d in dirs:
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
                    extra_benchmarks=extra,
                )
            )
    except ProctorError as exc:
        output.fail(str(exc))
    ok = all(r.passed for r in results)
    if json:
        _dump(results[0].to_dict() if len(results) == 1 else [r.to_dict() for r in results])
        raise typer.Exit(_code(ok))
    out = output.console()
    t = output.table(
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
    output.print_table(out, t)
    for r in results:
        out.print(f"{r.directory}: {r.message}", markup=False)
        output.print_findings(out, [f for f in r.findings if f.rule not in ("rcp",)])
    raise typer.Exit(_code(ok))


def _code(ok: bool) -> int:
    return output.EXIT_OK if ok else output.EXIT_INVALID


@training_app.command(
    "score",
    epilog=examples(
        "proctor training score results/sys",
        "proctor training score SUBMISSION --reference bert=20.5 --weight bert=2 --json",
    ),
)
def score_cmd(
    directory: Annotated[
        Path, typer.Argument(
            metavar="DIR", help="benchmark folder, system folder or package", exists=True, file_okay=False
        )
    ],
    ruleset: RulesetOpt = CURRENT_RULESET,
    runs: Annotated[
        int | None, typer.Option(metavar="N", help="N for a benchmark without a rules entry")
    ] = None,
    reference: Annotated[
        list[str] | None, typer.Option(
            metavar="BENCH=MINUTES", help="BENCH=MINUTES reference result to normalize to (repeatable)"
        )
    ] = None,
    weight: Annotated[
        list[str] | None,
        typer.Option(
            metavar="BENCH=W", help="BENCH=W weight of the geometric mean of normalized scores (repeatable)"
        ),
    ] = None,
    model_flops: Annotated[
        float | None, typer.Option(metavar="FLOPS", help="model tensor FLOPs of one run (utilization)")
    ] = None,
    peak_flops: Annotated[
        float | None, typer.Option(metavar="FLOP_PER_S", help="peak system tensor FLOP/s (utilization)")
    ] = None,
    compliance: Annotated[bool, typer.Option(help="count non-compliant runs as non-converging")] = False,
    no_scaling: Annotated[bool, typer.Option("--no-scaling", help="ignore scaling.json")] = False,
    json: Json = False,
) -> None:
    """Olympic scores per benchmark (time to train, minutes); exit 1 when a result is invalid."""
    from proctor.training.package import default_compliance
    from proctor.training.runs import read_run_set
    from proctor.training.scoring import score_run_set, utilization, weighted_geometric_mean

    refs = _pairs(reference, "--reference")
    weights = _pairs(weight, "--weight")
    comp = default_compliance(ruleset) if compliance else None
    scores = []
    for d in _dirs(directory):
        try:
            rs = read_run_set(d, ruleset=ruleset)
        except ProctorError as exc:
            output.fail(str(exc))
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
    norm = {sc.benchmark or "?": sc.normalized for sc, _ in scores if sc.normalized}
    summary = None
    if norm:
        keys = sorted(norm)
        summary = weighted_geometric_mean([norm[k] for k in keys], [weights.get(k, 1.0) for k in keys])
    if json:
        doc: Any = [row for _, row in scores]
        if summary is not None:
            doc = {"benchmarks": doc, "weighted_geometric_mean": summary}
        _dump(doc)
        raise typer.Exit(_code(ok))
    out = output.console()
    t = output.table(
        "folder", "benchmark", "runs", "dropped", "score (min)", "scaling", "normalized", "valid", labels=(0, 3)
    )
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
    output.print_table(out, t)
    for sc, row in scores:
        if "utilization" in row:
            out.print(f"{sc.directory}: utilization {row['utilization']:.4f}", markup=False)
        if sc.division == "open":  # 002 §9: an Open result reports the final quality's geometric mean
            out.print(
                f"{sc.directory}: geometric mean of the final quality {_fmt(sc.final_quality_geomean)}",
                markup=False,
            )
        output.print_findings(out, [f for f in sc.findings if f.severity.value != "info"])
    if summary is not None:
        out.print(f"weighted geometric mean of normalized scores: {summary:.6g}")
    raise typer.Exit(_code(ok))


def _pairs(items: list[str] | None, opt: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        try:
            out[name] = float(value)
        except ValueError:
            sep = ""
        if not sep or not name:
            output.fail(f"{opt}: expected BENCH=NUMBER, got {item!r}")
        if not (math.isfinite(out[name]) and out[name] > 0):
            output.fail(f"{opt}: {item!r} must be a positive finite number")
    return out


@training_app.command(
    "check-package",
    epilog=examples(
        "proctor training check-package SUBMISSION",
        "proctor training check-package SUBMISSION --ruleset 5.0.0 --set-scaling --json",
    ),
)
def check_package_cmd(
    directory: Annotated[
        Path, typer.Argument(
            metavar="DIR", help="submission package (systems/, results/)", exists=True, file_okay=False
        )
    ],
    ruleset: RulesetOpt = CURRENT_RULESET,
    rcp_bypass: Annotated[
        bool, typer.Option(
            "--rcp-bypass", help="a failing RCP test passes, flagged (as check-rcp --rcp-bypass)"
        )
    ] = False,
    seed_checker_bypass: Annotated[
        bool, typer.Option("--seed-checker-bypass", help="a failing seed check passes, flagged")
    ] = False,
    bert_train_samples: Annotated[
        bool, typer.Option("--bert-train-samples", help="bert: convergence from train_samples")
    ] = False,
    # the old spelling (the official package checker's --rcp_bert_train_samples), kept for scripts
    rcp_bert_train_samples: Annotated[
        bool,
        typer.Option(
            "--rcp-bert-train-samples", hidden=True, help="old spelling of --bert-train-samples"
        ),
    ] = False,
    custom_rcps: CustomRcpsOpt = None,
    set_scaling: Annotated[bool, typer.Option("--set-scaling", help="write scaling.json files")] = False,
    extra_benchmark: ExtraRuns = None,
    official_stats: Official = False,
    json: Json = False,
) -> None:
    """Check a training submission package; exit 1 when it has an error."""
    from rich.markup import escape

    from proctor.training.package import check_package

    extra = _extra_benchmarks(ruleset, extra_benchmark)
    if not (directory / "systems").is_dir() and not (directory / "results").is_dir():
        output.fail(
            f"{directory} is not a training submission package: it has neither systems/ nor results/ "
            "(give the folder that holds them)"
        )
    try:
        rep = check_package(
            directory,
            ruleset,
            rcp_bypass=rcp_bypass,
            seed_bypass=seed_checker_bypass,
            unit="train_samples" if bert_train_samples or rcp_bert_train_samples else "auto",
            set_scaling=set_scaling,
            policy="official" if official_stats else "rules",
            custom_rcps=custom_rcps,
            extra_benchmarks=extra,
        )
    except ProctorError as exc:
        output.fail(str(exc))
    if json:
        _dump(rep.to_dict())
        raise typer.Exit(_code(rep.valid))
    out = output.console()
    output.print_findings(out, rep.findings)
    for r in rep.rcp:
        out.print(f"RCP {r.directory}: {r.message} ({'pass' if r.passed else 'FAIL'})", markup=False)
    out.print(
        f"{escape(str(directory))}: "
        + ("[green]PACKAGE VALID[/green]" if rep.valid else "[red]PACKAGE INVALID[/red]")
        + f" ({len(rep.checked)} benchmark folders)"
    )
    raise typer.Exit(_code(rep.valid))


@training_app.command(
    "summarize",
    epilog=examples(
        "proctor training summarize SUBMISSION",
        "proctor training summarize SUB1 SUB2 --csv -o summary.csv",
    ),
)
def summarize_cmd(
    directories: Annotated[
        list[Path], typer.Argument(metavar="DIR", help="submission folders", exists=True, file_okay=False)
    ],
    ruleset: RulesetOpt = CURRENT_RULESET,
    as_csv: Annotated[bool, typer.Option("--csv", help="print the summary as CSV")] = False,
    output_file: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--output",
            metavar="FILE",
            help="also write FILE (CSV), FILE_detailed.csv, FILE.json, FILE_detailed.json",
        ),
    ] = None,
    official_stats: Official = False,
    json: Json = False,
) -> None:
    """One row per system with a score per benchmark, plus the detailed table.

    Exit 0 when it could summarize (an invalid result is a row and a finding, as in `proctor
    summarize`; `check-package` judges), 2 when a folder holds no system with results (give a
    submission folder: systems/ and results/<system>/<benchmark>/result_*.txt).
    """
    from proctor.training.summarize import (
        SPEC_COLUMNS,
        URL_COLUMNS,
        summarize,
        system_dirs,
        to_csv,
        write_outputs,
    )

    for d in directories:
        if not system_dirs(d):
            output.fail(
                f"no system with results in {d}: give a submission folder (holding systems/ and "
                "results/<system>/<benchmark>/result_*.txt) or its results/ folder"
            )
    if output_file is not None and (output_file.is_dir() or not output_file.parent.is_dir()):
        output.fail(f"-o/--output: {output_file} must be a file in an existing folder")
    try:
        s = summarize(directories, ruleset, policy="official" if official_stats else "rules")
    except ProctorError as exc:
        output.fail(str(exc))
    if output_file is not None:
        try:
            written = write_outputs(s, output_file)
        except ProctorError as exc:  # a link where an output goes: nothing written through it
            output.fail(str(exc))
        except OSError as exc:
            output.fail(f"cannot write {exc.filename or output_file}: {exc.strerror or exc}")
        for p in written:
            typer.echo(f"wrote {p}", err=True)
    if json:
        _dump(s.to_dict())
    elif as_csv:
        typer.echo(to_csv(s.columns, s.rows), nl=False)
    else:
        out = output.console()
        skip = frozenset((*SPEC_COLUMNS, *URL_COLUMNS))
        benches = [c for c in s.columns if c not in skip and any(r.get(c) is not None for r in s.rows)]
        t = output.table("system", "submitter", "division", *benches, labels=(0, 1))
        for r in s.rows:
            t.add_row(
                str(r.get("system") or "?"),
                str(r.get("submitter") or "?"),
                str(r.get("division") or "?"),
                *(_fmt(r.get(b), 8) for b in benches),
            )
        output.print_table(out, t)
        for q in s.open_final_quality:  # 002 §9: an Open result reports this
            out.print(
                f"{q['system']} {q['benchmark']} (open): geometric mean of the final quality "
                f"{_fmt(q['final_quality_geomean'])}",
                markup=False,
            )
    if not json:
        output.print_findings(output.console(stderr=as_csv), s.findings)
    raise typer.Exit(output.EXIT_OK)  # a summary that could be made exits 0, invalid rows or not
