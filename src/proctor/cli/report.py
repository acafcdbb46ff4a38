"""`proctor report RUN_DIR... [-o report.html] [--png DIR]`: one HTML file people can read.

Each RUN_DIR is an inference run folder (the LoadGen logs, proctor's or the official's), a training
benchmark folder (result_*.txt), or a folder holding such folders (a sweep, a submission tree).
Exit status (README, "Exit status"): 0 the report was written (whatever the runs' verdicts), 2 the
input is wrong (a missing folder, no logs in it, an unwritable output), 130 interrupted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from proctor.cli import output
from proctor.cli.apps import app, examples
from proctor.errors import ProctorError


@app.command(
    "report",
    epilog=examples(
        "proctor report proctor-logs",
        "proctor report run1 run2 -o compare.html --png figures",
    ),
)
def report_cmd(
    run_dirs: Annotated[
        list[Path], typer.Argument(
            metavar="RUN_DIR", help="run folders (LoadGen logs or result_*.txt), or folders holding them"
        )
    ],
    out: Annotated[
        Path, typer.Option("--output", "-o", metavar="FILE", help="the HTML file to write")
    ] = Path("report.html"),
    png: Annotated[
        Path | None, typer.Option(
            "--png", metavar="DIR", help="also write every figure as a PNG file into this folder"
        )
    ] = None,
    ruleset: Annotated[
        str | None, typer.Option(
            metavar="VERSION", help="training ruleset for the RCP check and target (default: chosen by RCPs)"
        )
    ] = None,
    no_trace: Annotated[
        bool, typer.Option(
            "--no-trace", help="do not read per-sample data (mlperf_log_samples.bin or the trace) even when present")
    ] = False,
) -> None:
    """Write a self-contained HTML report (plots, verdicts, comparisons) of inference and training runs."""
    from proctor.report import build_report, write_report

    if out.is_dir():
        output.fail(f"-o {out}: is a folder; give the HTML file to write, e.g. {out / 'report.html'}")
    if png is not None and png.exists() and not png.is_dir():
        output.fail(f"--png {png}: is a file; give a folder for the PNG files")
    try:
        rep = build_report(list(run_dirs), ruleset=ruleset, read_trace=not no_trace)
    except KeyboardInterrupt:
        output.interrupted("interrupted: no report written")
    except ProctorError as exc:
        output.fail(str(exc))
    err = output.console(stderr=True)
    for d, why in rep.skipped:
        err.print(f"skipped {d}: {why}", markup=False)
    for run in rep.runs:  # the report says so on its page; the terminal too, as a run's own verdict did
        if run.incomplete:
            err.print(f"note: {run.directory}: the run did not finish: {run.incomplete}", markup=False, soft_wrap=True)
    try:
        written = write_report(rep, out, png)
    except KeyboardInterrupt:
        output.interrupted("interrupted: the report may be incomplete")
    except OSError as exc:
        output.fail(f"cannot write the report: {exc.filename or out}: {exc.strerror or exc}")
    except ProctorError as exc:  # a link where the report goes: nothing is written through it
        output.fail(f"cannot write the report: {exc}")
    con = output.console()
    con.print(f"report: {written[0]}", markup=False, soft_wrap=True)
    if png is not None:
        con.print(f"{len(written) - 1} PNG files in {png}", markup=False, soft_wrap=True)
    raise typer.Exit(output.EXIT_OK)
