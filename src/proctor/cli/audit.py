"""`proctor audit TEST01|TEST04|TEST06|all`: run the compliance audits and verify them.

The same run options as `proctor run`. Without `--results` the reference runs (performance and,
for TEST01, accuracy) are made first into `OUT/results/<system>/<benchmark>/<scenario>/`; with
`--results DIR` (a folder holding `performance/run_1/` and `accuracy/`) they are taken from there,
and with `--audit-logs DIR` as well nothing is run: the audit logs in DIR are only verified (e.g.
logs from the official LoadGen). The layout and rules: proctor.audits.run, proctor.audits.verify.

Exit status: 0 every audit passed, 1 one failed (or a run failed), 2 bad input, 130 interrupted.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from proctor.audits.configs import Audit, required_audits
from proctor.audits.run import (
    AuditOutcome,
    Layout,
    RunLogs,
    Runner,
    Test06Options,
    Tree,
    run_audits,
    verify_audit,
)
from proctor.audits.verify import TEST06_DTYPES
from proctor.cli import output
from proctor.cli.apps import app
from proctor.cli.run import (
    QUICK_DURATION_MS,
    SUT_HELP,
    Engine,
    _check_number,
    _close,
    build_settings,
    mark_short_run,
)
from proctor.errors import ConfigError, LogFormatError, ProctorError, RunError
from proctor.loadgen.settings import LogOutputSettings, LogSettings, TestSettings
from proctor.loadgen.types import Scenario


class Which(StrEnum):
    TEST01 = "TEST01"
    TEST04 = "TEST04"
    TEST06 = "TEST06"
    ALL = "all"


def make_runner(
    sut: str, engine: Engine, *, short_run: str, timeout_s: float | None, drain_s: float, trace: bool
) -> Runner:
    """One run per call with a freshly built SUT, on proctor's engine or the official LoadGen."""
    from proctor.suts import registry

    def run(settings: TestSettings, outdir: Path, conf: Path | None) -> RunLogs:
        outdir.mkdir(parents=True, exist_ok=True)
        log_settings = LogSettings(log_output=LogOutputSettings(outdir=str(outdir)), enable_trace=trace)
        the_sut, qsl = registry.build(sut)
        problem = ""
        try:
            if engine == Engine.OFFICIAL:
                from proctor.compat.official_engine import run_official

                official = run_official(the_sut, qsl, settings, log_settings, audit_config=conf)
                paths, errors = official.log_paths, official.errors
            else:
                from proctor.loadgen.engine import run_test

                outcome = run_test(
                    the_sut, qsl, settings, log_settings, audit_config=conf, timeout_s=timeout_s, drain_s=drain_s
                )
                paths, errors = outcome.log_paths, outcome.errors
                if outcome.incomplete:
                    problem = f"incomplete: {outcome.incomplete_reason}"
                elif outcome.sut_failures:
                    problem = f"{outcome.sut_failures} SUT failure(s) reported"
        finally:
            _close(the_sut)
        mark_short_run(paths, short_run)
        if errors and not problem:
            problem = f"{errors} error(s) in {paths['detail']}"
        return RunLogs(paths["detail"], paths["summary"], paths["accuracy"], errors, problem)

    return run


def print_outcomes(out: Console, outcomes: list[AuditOutcome]) -> None:
    for o in outcomes:
        out.print(f"{o.audit}: {'PASS' if o.passed else 'FAIL'}  ({o.folder})", markup=False, soft_wrap=True)
        for v in o.verdicts:
            last = next((line for line in reversed(v.lines) if line.strip()), "")
            nums = ", ".join(
                f"{k} {val:.6g}" if isinstance(val, float) else f"{k} {val}"
                for k, val in v.numbers.items()
                if not isinstance(val, list)
            )
            out.print(f"  {v.check}: {last}" + (f" ({nums})" if nums else ""), markup=False, soft_wrap=True)
            for note in v.notes:
                out.print(f"    - {note}", markup=False, soft_wrap=True)
        for note in o.notes:
            out.print(f"  note: {note}", markup=False, soft_wrap=True)


@app.command("audit")
def audit_cmd(
    which: Annotated[Which, typer.Argument(help="TEST01, TEST04, TEST06, or all (the benchmark's audits).")],
    scenario: Annotated[
        Scenario | None, typer.Option("--scenario", "-s", help="SingleStream, MultiStream, Server or Offline.")
    ] = None,
    model: Annotated[str, typer.Option("--model", help="Model name for the mlperf.conf lookup.")] = "resnet50",
    sut: Annotated[str, typer.Option("--sut", help=SUT_HELP)] = "synthetic",
    output_dir: Annotated[Path, typer.Option("--output", "-o", help="Folder for the trees and logs.")] = Path(
        "proctor-audit"
    ),
    system: Annotated[str, typer.Option("--system", help="System name in the tree (<system>).")] = "proctor",
    benchmark: Annotated[
        str | None, typer.Option("--benchmark", help="Benchmark name in the tree (default: --model).")
    ] = None,
    layout: Annotated[
        Layout,
        typer.Option("--layout", help="results (rounds v6.0+: audits next to performance/) or compliance (to v5.1)."),
    ] = Layout.RESULTS,
    results: Annotated[
        Path | None,
        typer.Option("--results", help="Existing reference runs: a folder with performance/run_1/ and accuracy/."),
    ] = None,
    audit_logs: Annotated[
        Path | None,
        typer.Option("--audit-logs", help="Verify only: the audit run's logs are in this folder (needs --results)."),
    ] = None,
    user_conf: Annotated[
        Path | None, typer.Option("--user-conf", exists=True, dir_okay=False, help="user.conf to apply.")
    ] = None,
    dataset: Annotated[Path | None, typer.Option("--dataset", help="JSONL dataset for LLM SUTs.")] = None,
    duration_ms: Annotated[int | None, typer.Option("--duration-ms", help="min_duration_ms override.")] = None,
    quick: Annotated[bool, typer.Option("--quick", help="--duration-ms 10000.")] = False,
    max_duration_ms: Annotated[int | None, typer.Option("--max-duration-ms", help="max_duration_ms override.")] = None,
    target_qps: Annotated[float | None, typer.Option("--target-qps", help="Server/Offline QPS.")] = None,
    expected_latency_ms: Annotated[
        float | None, typer.Option("--expected-latency-ms", help="SingleStream/MultiStream expected latency.")
    ] = None,
    min_queries: Annotated[int | None, typer.Option("--min-queries", help="min_query_count override.")] = None,
    timeout_s: Annotated[float | None, typer.Option("--timeout-s", help="Give up on a stuck SUT after this.")] = None,
    drain_s: Annotated[float, typer.Option("--drain-s", min=0, help="After Ctrl-C, wait this long.")] = 1.0,
    engine: Annotated[Engine, typer.Option("--engine", help="proctor, or official (mlperf_loadgen).")] = Engine.PROCTOR,
    no_trace: Annotated[bool, typer.Option("--no-trace", help="Do not write trace files.")] = False,
    eos_token_id: Annotated[int, typer.Option("--eos-token-id", help="TEST06: the tokenizer's EOS id.")] = 2,
    dtype: Annotated[str, typer.Option("--dtype", help="TEST06: output token type (int32, int64, ...).")] = "int32",
) -> None:
    """Run MLPerf Inference compliance audits (TEST01, TEST04, TEST06) and verify them."""
    out = output.console()
    if scenario is None:
        output.fail("missing option --scenario (SingleStream, MultiStream, Server or Offline)")
    if quick and duration_ms is not None:
        output.fail("--quick and --duration-ms exclude each other (--quick is --duration-ms 10000)")
    if quick:
        duration_ms = QUICK_DURATION_MS
    if dtype not in TEST06_DTYPES:
        output.fail(f"--dtype must be one of {', '.join(TEST06_DTYPES)}, not {dtype!r}")
    if audit_logs is not None and results is None:
        output.fail("--audit-logs needs --results (the reference runs to compare against)")
    _check_number(timeout_s, "--timeout-s")
    audits = required_audits(model) if which == Which.ALL else (Audit(which.value),)
    if audit_logs is not None and len(audits) != 1:
        output.fail("--audit-logs verifies one audit: name TEST01, TEST04 or TEST06, not all")
    tree = Tree(output_dir, system, benchmark or model, str(scenario), layout, results)
    t06 = Test06Options(dtype, eos_token_id)
    short_run = ""
    try:
        if audit_logs is not None:
            outcomes = [verify_audit(audits[0], tree, audit_logs, test06=t06)]
        else:
            resolved = build_settings(
                scenario,
                None,
                model,
                user_conf,
                duration_ms=duration_ms,
                target_qps=target_qps,
                expected_latency_ms=expected_latency_ms,
                min_queries=min_queries,
                max_duration_ms=max_duration_ms,
            )
            spec = sut
            if dataset is not None:
                from proctor.suts import registry

                if not dataset.is_file():
                    raise ConfigError(f"{dataset}: no such file (a JSONL dataset)", key="--dataset")
                spec = registry.with_param(sut, "dataset", str(dataset))
            short_run = resolved.short_run
            runner = make_runner(
                spec, engine, short_run=short_run, timeout_s=timeout_s, drain_s=drain_s, trace=not no_trace
            )
            outcomes = run_audits(runner, resolved.settings, model, tree, audits, test06=t06)
    except KeyboardInterrupt:
        output.interrupted(f"interrupted: partial logs in {output_dir}")
    except (ConfigError, LogFormatError) as exc:
        output.fail(str(exc))
    except RunError as exc:
        output.fail(f"run failed: {exc}", output.EXIT_INVALID)
    except ProctorError as exc:
        output.fail(str(exc), output.EXIT_INVALID)
    print_outcomes(out, outcomes)
    if short_run:
        out.print(f"note: not submission runs: {short_run}", markup=False, soft_wrap=True)
    raise typer.Exit(output.EXIT_OK if all(o.passed for o in outcomes) else output.EXIT_INVALID)
