"""`proctor run`: one LoadGen test against a SUT, with a live line and a plain verdict.

Settings come from the one pipeline (loadgen/resolve.py) as the official harnesses build them:
the shipped mlperf.conf for `--model`, then `--user-conf`, then the command-line overrides. By
default a run follows mlperf.conf, 600 s and all, as the official LoadGen does. A shorter run is
asked for (`--duration-ms`, `--quick`); it is valid for its settings but not a submission run, and
the logs themselves say so (detail key `proctor_short_run`, a line after the summary's footer).

Exit status (README, "Exit status"): 0 valid (accuracy-only: finished without errors), 1 invalid or
failed, 2 usage or configuration error, 130 interrupted.
"""

from __future__ import annotations

import math
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from proctor.cli import output
from proctor.cli.apps import app
from proctor.errors import ConfigError, ProctorError, RunError
from proctor.loadgen.progress import LiveProgress
from proctor.loadgen.resolve import CLI_OPTIONS, Confs, Overrides, Resolved, resolve_settings
from proctor.loadgen.settings import LogOutputSettings, LogSettings, TestSettings
from proctor.loadgen.types import Scenario, TestMode

if TYPE_CHECKING:
    from proctor.compat.official_engine import OfficialOutcome
    from proctor.loadgen.engine import RunOutcome
    from proctor.loadgen.find_peak import Probe
    from proctor.loadgen.results import PerformanceResult

QUICK_DURATION_MS = 10_000  # --quick: a 10 s run, marked as not a submission run
EXIT_VALID, EXIT_INVALID, EXIT_USAGE, EXIT_INTERRUPTED = (
    output.EXIT_OK,
    output.EXIT_INVALID,
    output.EXIT_USAGE,
    output.EXIT_INTERRUPTED,
)


class Engine(StrEnum):
    PROCTOR = "proctor"
    OFFICIAL = "official"


def build_settings(
    scenario: Scenario | str,
    mode: TestMode | None,
    model: str,
    user_conf: Path | str | None,
    *,
    duration_ms: int | None = None,
    target_qps: float | None = None,
    expected_latency_ms: float | None = None,
    min_queries: int | None = None,
    max_duration_ms: int | None = None,
) -> Resolved:
    """The command line's settings: `resolve_settings` with the options as overrides."""
    return resolve_settings(
        model,
        scenario,
        mode,
        Confs(user_conf=user_conf),
        Overrides(
            min_duration_ms=duration_ms,
            max_duration_ms=max_duration_ms,
            target_qps=target_qps,
            expected_latency_ms=expected_latency_ms,
            min_query_count=min_queries,
            labels=CLI_OPTIONS,
        ),
    )


def _ms(ns: float) -> str:
    return f"{ns / 1e6:.3f} ms"


def metric_of(result: PerformanceResult) -> tuple[str, str]:
    """The scenario's headline metric, named as the rules name it."""
    sc = result.scenario
    if sc == "SingleStream":
        return (
            f"{result.target_percentile * 100:g}th percentile latency (early stopping estimate)",
            _ms(result.early_stopping_latency_ss),
        )
    if sc == "MultiStream":
        return (
            f"{result.target_percentile * 100:g}th percentile per-query latency (early stopping estimate)",
            _ms(result.early_stopping_latency_ms),
        )
    if sc == "Server":
        return "completed samples per second", f"{result.completed_samples_per_sec:,.2f}"
    return "samples per second", f"{result.samples_per_second:,.2f}"


def outcome_table(outcome: RunOutcome, settings: TestSettings) -> Table:
    """The run in rows; values never wrap or cut (the logs path goes under the table)."""
    table = output.table("", "", title="proctor run", show_header=False)
    table.add_row("scenario", str(settings.scenario))
    table.add_row("mode", str(settings.mode))
    r = outcome.result
    if r is not None:
        name, value = metric_of(r)
        table.add_row(name, value)
        table.add_row("queries / samples", f"{r.query_count} / {r.sample_count}")
        s = r.samples
        table.add_row("latency min / mean / max", f"{_ms(s.min)} / {_ms(s.mean)} / {_ms(s.max)}")
        table.add_row(
            "latency p50 / p90 / p99 / p99.9",
            " / ".join(_ms(s.percentiles[p]) for p in (0.5, 0.9, 0.99, 0.999)),
        )
        if r.use_token_latencies and r.scenario != "Offline":
            table.add_row(
                "TTFT p99 / TPOT p99", f"{_ms(r.ttft.percentiles[0.99])} / {_ms(r.tpot.percentiles[0.99])}"
            )
        table.add_row(
            "issue lateness p50 / p99 / max",
            f"{r.issue_lateness_p50_ns / 1e3:.1f} / {r.issue_lateness_p99_ns / 1e3:.1f} / "
            f"{r.issue_lateness_max_ns / 1e3:.1f} us",
        )
    if outcome.accuracy_samples:
        table.add_row("accuracy log entries", str(outcome.accuracy_samples))
    table.add_row("errors / warnings", f"{outcome.errors} / {outcome.warnings}")
    return table


def html_report(log_dir: Path, err: Console) -> list[tuple[str, str]]:
    """Write report.html next to the logs: [("report", path)], or [] with a warning when it cannot."""
    from proctor.report import report_for_run

    try:
        return [("report", str(report_for_run(log_dir)))]
    except (ProctorError, OSError) as exc:
        err.print(f"warning: report.html not written: {exc}", markup=False)
        return []


def _valid_line(text: str, short_run: str) -> str:
    """`VALID: ...`, or for a short run `VALID for these settings; not a submission run: why: ...`."""
    if not short_run:
        return f"VALID: {text}" if text else "VALID"
    return f"VALID for these settings; not a submission run: {short_run}" + (f"; {text}" if text else "")


def verdict(outcome: RunOutcome, settings: TestSettings, short_run: str = "") -> tuple[bool, list[str]]:
    """(passed, lines): VALID, or every failed check with its numbers and what to change."""
    lines: list[str] = []
    accuracy_only = str(settings.mode) == TestMode.ACCURACY_ONLY
    if outcome.incomplete:
        lines.append(f"INCOMPLETE: {outcome.incomplete_reason}")
    r = outcome.result
    if accuracy_only:
        ok = not outcome.incomplete and outcome.errors == 0
        if ok:
            lines.append(
                f"DONE: accuracy run finished; {outcome.accuracy_samples} outputs in "
                f"{outcome.log_paths['accuracy']}"
            )
    elif r is None:
        ok = False
        lines.append("INVALID: no performance result (nothing completed)")
    else:
        ok = bool(outcome.valid)
        if ok:
            name, value = metric_of(r)
            lines.append(_valid_line(f"{name} = {value}", short_run))
        else:
            lines.append("INVALID:")
            lines.extend(f"  - {reason}" for reason in r.reasons)
            if not r.reasons:
                lines.extend(f"  - {rec}" for rec in r.recommendations)
    if outcome.errors:
        ok = False
        lines.append(f"{outcome.errors} error(s) in {outcome.log_paths['detail']} (grep error_runtime)")
    if short_run and not (ok and not accuracy_only):
        lines.append(f"note: not a submission run: {short_run}")
    return ok, lines


class PeakProgress(LiveProgress):
    """The live line, plus one printed line per FindPeakPerformance probe with its verdict."""

    def on_probe(self, probe: Probe) -> None:
        verdict_text = "[green]PASS[/green]" if probe.passed else "[red]FAIL[/red]"
        self.console.print(
            f"probe {probe.index} ({probe.stage}): target_qps {probe.target_qps:,.4f} -> "
            f"{verdict_text}  {escape(probe.detail)}",
            soft_wrap=True,
        )


def sut_report_lines(the_sut: object) -> list[str]:
    """What a remote SUT says about its run (token-count sources, faults per kind, lost samples)."""
    report = getattr(the_sut, "report", None)
    if not callable(report):
        return []
    text = report()
    items = text if isinstance(text, list | tuple) else str(text).splitlines()
    return [f"sut: {line}" for line in items if str(line).strip()]


def record_sut_report(log_paths: dict[str, Path], lines: list[str]) -> None:
    """Keep the SUT's own account (e.g. samples lost with a node) in the logs, not only on screen."""
    from proctor.loadgen.logs.detail import append_record

    if not lines:
        return
    if log_paths["detail"].is_file():
        append_record(log_paths["detail"], "proctor_sut_report", lines)
    if log_paths["summary"].is_file():
        with open(log_paths["summary"], "a", encoding="utf-8", newline="\n") as f:
            f.write("\n" + "".join(f"PROCTOR: {line}\n" for line in lines))


def peak_lines(outcome: RunOutcome) -> list[str]:
    """FindPeakPerformance: the peak and each probe, for the verdict."""
    found = outcome.find_peak
    if found is None:
        return []
    lines = [
        f"{'peak' if found.found else 'base rate failed; no peak'}: target_qps {found.peak_qps:,.4f} "
        f"after {len(found.probes)} probes (the reported run is the last passing one)"
    ]
    lines += [
        f"  probe {p.index} {p.stage:8s} {p.target_qps:14,.4f} QPS  {'pass' if p.passed else 'FAIL'}"
        for p in found.probes
    ]
    return lines


def mark_short_run(log_paths: dict[str, Path], reason: str) -> None:
    """Write the short-run mark into the logs themselves: a detail-log key and a summary line."""
    from proctor.loadgen.logs.detail import SHORT_RUN_KEY, append_record
    from proctor.loadgen.logs.summary import append_short_run

    if not reason:
        return
    if log_paths["detail"].is_file():
        append_record(log_paths["detail"], SHORT_RUN_KEY, reason)
    if log_paths["summary"].is_file():
        append_short_run(log_paths["summary"], reason)


def _close(the_sut: object) -> None:
    close = getattr(the_sut, "close", None)
    if close is not None:
        close()


def _print_lines(out: Console, lines: list[str]) -> None:
    for line in lines:
        out.print(line, markup=False, highlight=False, soft_wrap=True)


def _official_verdict(out: OfficialOutcome, settings: TestSettings, short_run: str) -> tuple[bool, list[str]]:
    accuracy_only = str(settings.mode) == TestMode.ACCURACY_ONLY
    lines = [f"engine: official mlperf_loadgen ({out.wall_s:.1f} s)"]
    if accuracy_only:
        ok = out.errors == 0
        lines.append("DONE: accuracy run finished" if ok else "FAILED: accuracy run logged errors")
    elif out.valid:
        ok = out.errors == 0
        lines.append(_valid_line(f"{out.metric[0]} = {out.metric[1]}" if out.metric else "", short_run))
    else:
        ok = False
        lines.append("INVALID: " + str(out.detail.get("result_invalid_reason") or "see the summary"))
    lines += [f"  - {m}" for m in out.error_messages[:10]]
    if out.errors:
        ok = False
        lines.append(f"{out.errors} error(s) in {out.log_paths['detail']}")
    if short_run and not (ok and not accuracy_only):
        lines.append(f"note: not a submission run: {short_run}")
    return ok, lines


def _run_official(
    the_sut: object,
    qsl: object,
    resolved: Resolved,
    log_settings: LogSettings,
    audit_conf: Path,
    console: Console,
) -> None:
    """--engine official: one official StartTest with the same SUT; a verdict from its detail log."""
    from proctor.compat.official_engine import run_official

    settings = resolved.settings
    try:
        out = run_official(the_sut, qsl, settings, log_settings, audit_config=audit_conf)
    except KeyboardInterrupt:
        output.interrupted()
    except ConfigError as exc:
        output.fail(str(exc), EXIT_USAGE)
    except ProctorError as exc:
        output.fail(f"run failed: {exc}", EXIT_INVALID)
    finally:
        _close(the_sut)
    mark_short_run(out.log_paths, resolved.short_run)
    ok, lines = _official_verdict(out, settings, resolved.short_run)
    _print_lines(console, lines)
    console.print(f"logs: {out.log_paths['detail'].parent}", markup=False, soft_wrap=True)
    raise typer.Exit(EXIT_VALID if ok else EXIT_INVALID)


def _check_number(value: float | None, option: str) -> None:
    if value is not None and (not math.isfinite(value) or value <= 0):
        output.fail(f"{option} must be a finite number > 0, got {value!r}")


def check_output_dir(path: Path, option: str = "--output") -> None:
    """The log folder must be a folder or creatable as one: say so before anything runs."""
    for p in (path, *path.parents):
        if p.exists():
            if not p.is_dir():
                what = "is a file" if p == path else f"is under {p}, which is a file"
                output.fail(f"{option} {path}: {what}; give a folder for the log files")
            return


def list_suts(out: Console) -> None:
    """Every registered SUT with its parameters and defaults (`--list-suts`)."""
    from proctor.suts import registry

    out.print(
        "SUTs (--sut NAME[:k=v,...]; also module.path:factory[:k=v,...] or path/file.py:factory[:k=v,...]):",
        markup=False,
        soft_wrap=True,
    )
    for name, target, params in registry.describe():
        out.print(f"\n{name}  ({target})", markup=False, soft_wrap=True)
        if isinstance(params, str):
            out.print(f"  {params}", markup=False, soft_wrap=True)
            continue
        if not params:
            out.print("  (no parameters)", markup=False, soft_wrap=True)
        for p in params:
            default = f"={p.default}" if p.default != "" else " (required)"
            out.print(
                f"  {p.name}{default}" + (f"  {p.help}" if p.help else ""), markup=False, soft_wrap=True
            )


SUT_HELP = (
    "NAME[:k=v,...] for a registered SUT (see --list-suts), e.g. synthetic:service_us=200,workers=4; "
    "or your own: my_package.module:factory[:k=v,...] or path/to/file.py:factory[:k=v,...], where "
    "factory(**params) returns (sut, qsl)."
)


@app.command("run")
def run_cmd(
    scenario: Annotated[
        Scenario | None,
        typer.Option("--scenario", "-s", help="SingleStream, MultiStream, Server or Offline."),
    ] = None,
    mode: Annotated[
        TestMode | None, typer.Option("--mode", "-m", help="Default: PerformanceOnly (or the conf's mode).")
    ] = None,
    model: Annotated[
        str, typer.Option("--model", help="Model name for the mlperf.conf lookup.")
    ] = "resnet50",
    user_conf: Annotated[
        Path | None, typer.Option("--user-conf", exists=True, dir_okay=False, help="user.conf to apply.")
    ] = None,
    audit_conf: Annotated[
        Path, typer.Option("--audit-conf", help="audit.config, applied if it exists.")
    ] = Path("audit.config"),
    output_dir: Annotated[
        Path, typer.Option("--output", "-o", help="Directory for the four log files.")
    ] = Path("proctor-logs"),
    sut: Annotated[str, typer.Option("--sut", help=SUT_HELP)] = "synthetic",
    dataset: Annotated[
        Path | None,
        typer.Option(
            "--dataset",
            help="JSONL dataset for LLM SUTs (one object per line: prompt or input_ids, optional output); "
            "passed to the SUT as dataset=FILE.",
        ),
    ] = None,
    list_suts_flag: Annotated[
        bool, typer.Option("--list-suts", help="List the registered SUTs with their parameters and exit.")
    ] = False,
    duration_ms: Annotated[
        int | None,
        typer.Option("--duration-ms", help="min_duration_ms override (a shorter run is marked in the logs)."),
    ] = None,
    quick: Annotated[
        bool,
        typer.Option(
            "--quick", help=f"A {QUICK_DURATION_MS // 1000} s run (--duration-ms {QUICK_DURATION_MS})."
        ),
    ] = False,
    max_duration_ms: Annotated[
        int | None, typer.Option("--max-duration-ms", help="max_duration_ms override.")
    ] = None,
    target_qps: Annotated[
        float | None, typer.Option("--target-qps", help="Server target / Offline expected QPS.")
    ] = None,
    expected_latency_ms: Annotated[
        float | None,
        typer.Option("--expected-latency-ms", help="SingleStream/MultiStream expected latency."),
    ] = None,
    min_queries: Annotated[
        int | None, typer.Option("--min-queries", help="min_query_count override.")
    ] = None,
    timeout_s: Annotated[
        float | None, typer.Option("--timeout-s", help="Give up on a stuck SUT after this.")
    ] = None,
    drain_s: Annotated[
        float, typer.Option("--drain-s", min=0, help="After Ctrl-C, wait this long for the SUT to drain.")
    ] = 1.0,
    full: Annotated[
        bool, typer.Option("--full", hidden=True, help="No effect: mlperf.conf's durations are the default.")
    ] = False,
    no_trace: Annotated[bool, typer.Option("--no-trace", help="Do not write the trace file.")] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No live line, no table; verdict only.")
    ] = False,
    no_report: Annotated[
        bool, typer.Option("--no-report", help="Do not write report.html next to the logs.")
    ] = False,
    engine: Annotated[
        Engine,
        typer.Option(
            "--engine",
            help="proctor, or official: the same SUT driven by the official "
            "mlperf_loadgen (pip install mlcommons-loadgen) for submission logs.",
        ),
    ] = Engine.PROCTOR,
) -> None:
    """Run one MLPerf Inference test (the official LoadGen's StartTest) and judge it.

    By default the run lasts as long as mlperf.conf says (600 s); --quick or --duration-ms make a
    shorter run, marked in its logs as not a submission run.
    """
    from proctor.loadgen.engine import run_test
    from proctor.suts import registry

    console = output.console()
    err = output.console(stderr=True)
    if list_suts_flag:
        list_suts(console)
        raise typer.Exit(EXIT_VALID)
    if scenario is None:
        output.fail("missing option --scenario (SingleStream, MultiStream, Server or Offline)")
    if quick and duration_ms is not None:
        output.fail("--quick and --duration-ms exclude each other (--quick is --duration-ms 10000)")
    if quick:
        duration_ms = QUICK_DURATION_MS
    _check_number(timeout_s, "--timeout-s")
    check_output_dir(output_dir)
    try:
        resolved = build_settings(
            scenario,
            mode,
            model,
            user_conf,
            duration_ms=duration_ms,
            target_qps=target_qps,
            expected_latency_ms=expected_latency_ms,
            min_queries=min_queries,
            max_duration_ms=max_duration_ms,
        )
        if dataset is not None:
            if not dataset.is_file():
                raise ConfigError(f"{dataset}: no such file (a JSONL dataset)", key="--dataset")
            sut = registry.with_param(sut, "dataset", str(dataset))
        the_sut, qsl = registry.build(sut)
    except ConfigError as exc:
        output.fail(str(exc))
    settings = resolved.settings
    log_settings = LogSettings(
        log_output=LogOutputSettings(outdir=str(output_dir)), enable_trace=not no_trace
    )
    if engine == Engine.OFFICIAL:
        _run_official(the_sut, qsl, resolved, log_settings, audit_conf, console)
    progress = None if quiet else PeakProgress(err)
    try:
        outcome = run_test(
            the_sut,
            qsl,
            settings,
            log_settings,
            audit_config=audit_conf,
            progress=progress,
            timeout_s=timeout_s,
            drain_s=drain_s,
        )
    except KeyboardInterrupt:
        output.interrupted(
            f"interrupted: partial logs in {output_dir} (summary marked incomplete)"
        )
    except ConfigError as exc:
        output.fail(str(exc), EXIT_USAGE)
    except RunError as exc:
        if output.debug() and exc.__cause__ is not None:
            import traceback

            err.print(
                "".join(traceback.format_exception(exc.__cause__)).rstrip(), markup=False, highlight=False
            )
        output.fail(f"run failed: {exc}", EXIT_INVALID)
    except ProctorError as exc:
        output.fail(str(exc), EXIT_INVALID)
    finally:
        _close(the_sut)
    mark_short_run(outcome.log_paths, resolved.short_run)
    ok, lines = verdict(outcome, settings, resolved.short_run)
    lines += peak_lines(outcome)
    sut_lines = sut_report_lines(the_sut)
    record_sut_report(outcome.log_paths, sut_lines)
    lines += sut_lines
    if audit_conf.is_file():
        lines.append(f"note: {audit_conf} was applied (as the official LoadGen applies audit.config)")
    paths = [("logs", str(outcome.log_paths["detail"].parent))]
    if not no_report:  # issue 15: the HTML report next to the logs
        paths += html_report(outcome.log_paths["detail"].parent, err)
    if not quiet:
        output.print_table(console, outcome_table(outcome, settings), paths)
    _print_lines(console, lines)
    raise typer.Exit(EXIT_VALID if ok else EXIT_INVALID)
