"""`proctor run`: one LoadGen test against a named SUT, with a live line and a plain verdict.

Settings come as the official harnesses build them: the shipped mlperf.conf for `--model`, then
`--user-conf`, then the command-line overrides. A run by the full rules lasts at least 600 s, so
unless the user gives a user.conf, a duration or `--full`, the minimum duration is cut to
DEFAULT_DURATION_MS and the verdict says the run is a short one.

Exit status: 0 valid (accuracy-only: finished without errors), 1 invalid or failed, 2 usage or
configuration error, 130 interrupted.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from proctor.cli.apps import app
from proctor.errors import ConfigError, ProctorError, RunError
from proctor.loadgen.types import Scenario, TestMode

DEFAULT_DURATION_MS = 10_000  # the short default run; --full keeps mlperf.conf's 600 s
EXIT_VALID, EXIT_INVALID, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class Engine(StrEnum):
    PROCTOR = "proctor"
    OFFICIAL = "official"


def build_settings(
    scenario: Scenario,
    mode: TestMode | None,
    model: str,
    user_conf: Path | None,
    *,
    full: bool = False,
    duration_ms: int | None = None,
    target_qps: float | None = None,
    expected_latency_ms: float | None = None,
    min_queries: int | None = None,
    max_duration_ms: int | None = None,
) -> tuple[Any, bool]:
    """TestSettings from mlperf.conf + user.conf + overrides; also whether the duration was cut short."""
    from proctor.loadgen.conf import load_conf_files
    from proctor.loadgen.settings import TestSettings

    settings = load_conf_files(TestSettings(scenario=scenario), model, str(scenario), user_conf=user_conf)
    settings.scenario = scenario
    if mode is not None:
        settings.mode = mode
    short = False
    if duration_ms is not None:
        settings.min_duration_ms = duration_ms
    elif user_conf is None and not full:
        settings.min_duration_ms = min(settings.min_duration_ms, DEFAULT_DURATION_MS)
        short = True
    if max_duration_ms is not None:
        settings.max_duration_ms = max_duration_ms
    if min_queries is not None:
        settings.min_query_count = min_queries
    if target_qps is not None:
        if scenario == Scenario.SERVER:
            settings.server_target_qps = target_qps
        elif scenario == Scenario.OFFLINE:
            settings.offline_expected_qps = target_qps
        else:
            raise ConfigError(
                f"applies to Server and Offline; use --expected-latency-ms for {scenario}", key="--target-qps"
            )
    if expected_latency_ms is not None:
        if scenario == Scenario.SINGLE_STREAM:
            settings.single_stream_expected_latency_ns = expected_latency_ms * 1e6
        elif scenario == Scenario.MULTI_STREAM:
            settings.multi_stream_expected_latency_ns = expected_latency_ms * 1e6
        else:
            raise ConfigError(
                f"applies to SingleStream and MultiStream; use --target-qps for {scenario}",
                key="--expected-latency-ms",
            )
    return settings, short


def _ms(ns: float) -> str:
    return f"{ns / 1e6:.3f} ms"


def metric_of(result: Any) -> tuple[str, str]:
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


def outcome_table(outcome: Any, settings: Any) -> Table:
    table = Table(title="proctor run", show_header=False)
    table.add_column(style="bold")
    table.add_column()
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
    table.add_row("logs", str(outcome.log_paths["detail"].parent))
    return table


def verdict(outcome: Any, settings: Any, short: bool) -> tuple[bool, list[str]]:
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
            lines.append(f"VALID: {name} = {value}")
        else:
            lines.append("INVALID:")
            lines.extend(f"  - {reason}" for reason in r.reasons)
            if not r.reasons:
                lines.extend(f"  - {rec}" for rec in r.recommendations)
    if outcome.errors:
        ok = False
        lines.append(f"{outcome.errors} error(s) in {outcome.log_paths['detail']} (grep error_runtime)")
    if short:
        lines.append(
            f"note: min_duration was cut to {settings.min_duration_ms} ms for a quick run; "
            "pass --full (or a user.conf) for a run by the full rules"
        )
    return ok, lines


def _peak_progress_class() -> type:
    from proctor.loadgen.progress import LiveProgress

    class _PeakProgress(LiveProgress):
        """The live line, plus one printed line per FindPeakPerformance probe with its verdict."""

        def on_probe(self, probe: Any) -> None:
            verdict_text = "[green]PASS[/green]" if probe.passed else "[red]FAIL[/red]"
            self.console.print(
                f"probe {probe.index} ({probe.stage}): target_qps {probe.target_qps:,.4f} -> "
                f"{verdict_text}  {escape(probe.detail)}",
                soft_wrap=True,
            )

    return _PeakProgress


def PeakProgress(console: Console) -> Any:  # noqa: N802  (a factory standing for a class)
    return _peak_progress_class()(console)


def peak_lines(outcome: Any) -> list[str]:
    """FindPeakPerformance: the peak and each probe, for the verdict."""
    found = getattr(outcome, "find_peak", None)
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


def _run_official(
    the_sut: Any,
    qsl: Any,
    settings: Any,
    log_settings: Any,
    audit_conf: Path,
    short: bool,
    console: Console,
    err: Console,
) -> None:
    """--engine official: one official StartTest with the same SUT; a verdict from its detail log."""
    from proctor.suts.official_engine import run_official

    try:
        out = run_official(the_sut, qsl, settings, log_settings, audit_config=audit_conf)
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/yellow]", soft_wrap=True)
        raise typer.Exit(EXIT_INTERRUPTED) from None
    except ConfigError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(EXIT_USAGE) from None
    except ProctorError as exc:
        err.print(f"[red]run failed:[/red] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(EXIT_INVALID) from None
    finally:
        close = getattr(the_sut, "close", None)
        if close is not None:
            close()
    accuracy_only = str(settings.mode) == TestMode.ACCURACY_ONLY
    lines = [
        f"engine: official mlperf_loadgen ({out.wall_s:.1f} s); logs in {out.log_paths['detail'].parent}"
    ]
    if accuracy_only:
        ok = out.errors == 0
        lines.append("DONE: accuracy run finished" if ok else "FAILED: accuracy run logged errors")
    elif out.valid:
        ok = out.errors == 0
        lines.append(f"VALID: {out.metric[0]} = {out.metric[1]}" if out.metric else "VALID")
    else:
        ok = False
        lines.append("INVALID: " + str(out.detail.get("result_invalid_reason") or "see the summary"))
    lines += [f"  - {m}" for m in out.error_messages[:10]]
    if out.errors:
        ok = False
        lines.append(f"{out.errors} error(s) in {out.log_paths['detail']}")
    if short:
        lines.append(
            f"note: min_duration was cut to {settings.min_duration_ms} ms for a quick run; "
            "pass --full (or a user.conf) for a run by the full rules"
        )
    for line in lines:
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(EXIT_VALID if ok else EXIT_INVALID)


@app.command("run")
def run_cmd(
    scenario: Annotated[
        Scenario, typer.Option("--scenario", "-s", help="SingleStream, MultiStream, Server or Offline.")
    ],
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
    output: Annotated[Path, typer.Option("--output", "-o", help="Directory for the four log files.")] = Path(
        "proctor-logs"
    ),
    sut: Annotated[
        str, typer.Option("--sut", help="NAME[:key=value,...], e.g. synthetic:service_us=200,workers=4.")
    ] = "synthetic",
    duration_ms: Annotated[
        int | None, typer.Option("--duration-ms", min=0, help="min_duration_ms override.")
    ] = None,
    max_duration_ms: Annotated[
        int | None, typer.Option("--max-duration-ms", min=0, help="max_duration_ms override.")
    ] = None,
    target_qps: Annotated[
        float | None, typer.Option("--target-qps", min=0, help="Server target / Offline expected QPS.")
    ] = None,
    expected_latency_ms: Annotated[
        float | None,
        typer.Option("--expected-latency-ms", min=0, help="SingleStream/MultiStream expected latency."),
    ] = None,
    min_queries: Annotated[
        int | None, typer.Option("--min-queries", min=0, help="min_query_count override.")
    ] = None,
    timeout_s: Annotated[
        float | None, typer.Option("--timeout-s", min=0, help="Give up on a stuck SUT after this.")
    ] = None,
    drain_s: Annotated[
        float, typer.Option("--drain-s", min=0, help="After Ctrl-C, wait this long for the SUT to drain.")
    ] = 1.0,
    full: Annotated[
        bool, typer.Option("--full", help=f"Keep the conf's min duration (else {DEFAULT_DURATION_MS} ms).")
    ] = False,
    no_trace: Annotated[bool, typer.Option("--no-trace", help="Do not write the trace file.")] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No live line, no table; verdict only.")
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
    """Run one MLPerf Inference test (the official LoadGen's StartTest) and judge it."""
    from proctor.loadgen.engine import run_test
    from proctor.loadgen.settings import LogOutputSettings, LogSettings
    from proctor.suts import registry

    console = Console()
    err = Console(stderr=True)
    try:
        settings, short = build_settings(
            scenario,
            mode,
            model,
            user_conf,
            full=full,
            duration_ms=duration_ms,
            target_qps=target_qps,
            expected_latency_ms=expected_latency_ms,
            min_queries=min_queries,
            max_duration_ms=max_duration_ms,
        )
        the_sut, qsl = registry.build(sut)
    except ConfigError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(EXIT_USAGE) from None
    log_settings = LogSettings(log_output=LogOutputSettings(outdir=str(output)), enable_trace=not no_trace)
    if engine == Engine.OFFICIAL:
        _run_official(the_sut, qsl, settings, log_settings, audit_conf, short, console, err)
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
        err.print(
            f"[yellow]interrupted[/yellow]: partial logs in {escape(str(output))} (summary marked incomplete)",
            soft_wrap=True,
        )
        raise typer.Exit(EXIT_INTERRUPTED) from None
    except ConfigError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(EXIT_USAGE) from None
    except RunError as exc:
        err.print(f"[red]run failed:[/red] {escape(str(exc))}", soft_wrap=True)
        if exc.__cause__ is not None:
            import traceback

            err.print(
                "".join(traceback.format_exception(exc.__cause__)).rstrip(), markup=False, highlight=False
            )
        raise typer.Exit(EXIT_INVALID) from None
    except ProctorError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(EXIT_INVALID) from None
    finally:
        close = getattr(the_sut, "close", None)
        if close is not None:
            close()
    ok, lines = verdict(outcome, settings, short)
    lines += peak_lines(outcome)
    if audit_conf.is_file():
        lines.append(f"note: {audit_conf} was applied (as the official LoadGen applies audit.config)")
    if not quiet:
        console.print(outcome_table(outcome, settings))
    for line in lines:
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(EXIT_VALID if ok else EXIT_INVALID)
