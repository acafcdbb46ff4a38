"""`proctor run`: one LoadGen test against a SUT, with a live line and a plain verdict.

Settings come from the one pipeline (loadgen/resolve.py) as the official harnesses build them:
the shipped mlperf.conf for `--model`, then `--user-conf`, then the command-line overrides. By
default a run follows mlperf.conf, 600 s and all, as the official LoadGen does. A shorter run is
asked for (`--duration-ms`, `--quick`); it is valid for its settings but not a submission run, and
the logs themselves say so (detail key `proctor_short_run`, a line after the summary's footer).

The run itself is the app layer's (`proctor.app.session`: settings, SUT, engine, verdict, report);
this command parses, calls it and prints.

Exit status (README, "Exit status"): 0 valid (accuracy-only: finished without errors), 1 invalid or
failed, 2 usage or configuration error, 130 interrupted. With `--json` stdout holds one document
(`proctor.schemas.RUN`, built by `proctor.app.documents`) and the exit status is the same.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from proctor.cli import output
from proctor.cli.apps import app, examples
from proctor.cli.run_options import RunOptions, run_options
from proctor.errors import ConfigError, ProctorError, RunError, TreeError
from proctor.loadgen.scenarios import TestMode

if TYPE_CHECKING:
    from rich.console import Console


def print_lines(out: Console, lines: list[str]) -> None:
    for line in lines:
        out.print(line, markup=False, highlight=False, soft_wrap=True)


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


def run_failed(exc: BaseException, err: Console) -> NoReturn:
    """Exit for a run that raised: 2 for refused settings or an output folder proctor will not write
    into (a link, FIFO or device where a log goes), 1 for a failed run (its cause with --debug)."""
    if isinstance(exc, ConfigError | TreeError):
        output.fail(str(exc), output.EXIT_USAGE)
    if isinstance(exc, RunError):
        if output.debug() and exc.__cause__ is not None:
            import traceback

            err.print("".join(traceback.format_exception(exc.__cause__)).rstrip(), markup=False, highlight=False)
        output.fail(f"run failed: {exc}", output.EXIT_INVALID)
    output.fail(str(exc), output.EXIT_INVALID)


@app.command(
    "run",
    epilog=examples(
        "proctor run --scenario Offline --sut digits:backend=numpy --target-qps 5000",
        "proctor run -s Server --sut synthetic:service_us=200,workers=4 --target-qps 500 --quick -o logs",
        "proctor run -s Offline --sut path/to/sut.py:make_sut --mode AccuracyOnly -o acc",
        "proctor run -s Offline --sut digits:backend=numpy --model digits --mode AccuracyOnly "
        "-o runs/digits/Offline/accuracy",
        "proctor run -s Offline --sut openai:url=http://localhost:8000/v1 --model llama2-70b --dataset d.jsonl "
        "--mode AccuracyOnly --accuracy-script 'python evaluate.py --mlperf-accuracy-file {log}' -o acc",
        "proctor run -s Offline --sut digits --target-qps 5000 --quick --json > outcome.json",
        "proctor run -s Offline --sut digits --target-qps 5000 --quick --fit",
        "proctor run --list-suts",
    ),
)
@run_options(output_default=Path("proctor-logs"), output_help="Directory for the four log files.")
def run_cmd(
    opts: RunOptions,
    mode: Annotated[
        TestMode | None, typer.Option("--mode", "-m", help="Default: PerformanceOnly (or the conf's mode).")
    ] = None,
    audit_conf: Annotated[
        Path, typer.Option("--audit-conf", metavar="FILE", help="audit.config, applied if it exists.")
    ] = Path("audit.config"),
    no_report: Annotated[
        bool, typer.Option("--no-report", help="Do not write report.html next to the logs.")
    ] = False,
    fit: Annotated[
        bool,
        typer.Option(
            "--fit",
            help="Offline: when the SUT finished the run before min_duration (faster than --target-qps), "
            "make it again asking 1.5 x the rate that run measured (at most twice); the verdict says each "
            "time. Without it such a run is INVALID and its verdict names the --target-qps that fits.",
        ),
    ] = False,
    accuracy_script: Annotated[
        str | None,
        typer.Option(
            "--accuracy-script",
            metavar="CMD",
            help="AccuracyOnly: score with this command (split like a shell, run without one; {log} = the "
            "accuracy log, {dir} = the log folder, {dataset} = --dataset); its stdout becomes accuracy.txt. "
            "Without it proctor scores what it can: digits, and LLM datasets with reference outputs "
            "(ROUGE, exact match, tokens per sample).",
        ),
    ] = None,
) -> None:
    """Run one MLPerf Inference test (the official LoadGen's StartTest) and judge it.

    By default the run lasts as long as mlperf.conf says (600 s); --quick or --duration-ms make a
    shorter run, marked in its logs as not a submission run. An AccuracyOnly run writes accuracy.txt
    beside its logs and prints the score against the benchmark's targets (exit 1 below every one).
    """
    from proctor.app.render import outcome_table, warning_rows
    from proctor.app.session import RunSession
    from proctor.cli.peak_progress import PeakProgress

    console = output.console()
    err = output.console(stderr=True)
    if opts.list_suts_flag:
        list_suts(console)
        raise typer.Exit(output.EXIT_OK)
    session = RunSession(
        opts.request(mode=mode, audit_conf=audit_conf, report=not no_report, accuracy_script=accuracy_script, fit=fit)
    )
    try:
        session.prepare()
    except ConfigError as exc:
        output.fail(str(exc))
    try:
        result = session.execute(
            progress=None if opts.quiet else PeakProgress(err),
            say=lambda line: err.print(line, markup=False, highlight=False, soft_wrap=True),
        )
    except KeyboardInterrupt as exc:  # Ctrl-C, SIGTERM, SIGHUP: the logs are whole, marked incomplete
        from proctor.app.session import SessionResult
        from proctor.loadgen import stop_signals

        partial = stop_signals.partial_of(exc)
        if opts.as_json and isinstance(partial, SessionResult):  # the partial result: verdict INCOMPLETE
            from proctor.app.documents import dumps, run_document

            short_run = session.resolved.short_run if session.resolved is not None else ""
            sys.stdout.write(dumps(run_document(partial, stop_signals.exit_status(exc), short_run)))
        html, detail = opts.output_dir / "report.html", opts.output_dir / "mlperf_log_detail.txt"
        fresh = html.is_file() and detail.is_file() and html.stat().st_mtime >= detail.stat().st_mtime
        report = " and report.html" if fresh and not no_report else ""
        output.interrupted(f"interrupted: partial logs{report} in {opts.output_dir} (summary marked incomplete)", exc)
    except ProctorError as exc:
        if opts.as_json and not isinstance(exc, ConfigError | TreeError):  # exit 1 still prints its document
            from proctor.app.documents import dumps, failed_run_document

            req = session.request
            sys.stdout.write(dumps(failed_run_document(
                str(req.scenario), str(req.mode or ""), str(exc), str(opts.output_dir))))
        run_failed(exc, err)
    if result.failure is not None and output.debug() and result.failure.__cause__ is not None:
        import traceback  # the SUT's exception that ended the run

        err.print("".join(traceback.format_exception(result.failure.__cause__)).rstrip(), markup=False,
                  highlight=False)
    for warning in result.warnings:
        err.print(warning, markup=False)
    code = output.EXIT_OK if result.ok else output.EXIT_INVALID
    if opts.as_json:  # one document on stdout, nothing else
        from proctor.app.documents import dumps, run_document

        short_run = session.resolved.short_run if session.resolved is not None else ""
        sys.stdout.write(dumps(run_document(result, code, short_run)))
        raise typer.Exit(code)
    if result.outcome.engine == "official":
        print_lines(console, result.lines)
        for name, path in result.paths:
            console.print(f"{name}: {path}", markup=False, soft_wrap=True)
    else:
        if not opts.quiet:
            rows = warning_rows(result.outcome) + result.paths
            output.print_table(console, outcome_table(result.outcome), rows)
        print_lines(console, result.lines)
    raise typer.Exit(code)
