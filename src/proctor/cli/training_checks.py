"""`proctor training check-log` and `check-seeds`: the compliance and seed checkers on the command line.

Exit status (README, "Exit status"): 0 every file complies, 1 checked and found invalid (a log with
no `:::MLLOG` record is an invalid log: it was read and holds nothing to comply), 2 the input is
wrong (a missing path, a folder where a file is wanted, a FIFO or device, an unknown ruleset, a
folder without `result_*.txt`), 130 interrupted.
"""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Annotated

import typer

from proctor.cli import output
from proctor.cli.apps import examples, training_app


def _dumps(obj: object) -> str:
    """JSON of a report: log values that JSON cannot hold (NaN, huge ints, deep nesting) as text."""
    import orjson

    from proctor.training.compliance import jsonable

    return orjson.dumps(jsonable(obj)).decode()


def _readable_file(path: Path) -> None:
    """Exit 2 unless `path` is a regular file (a FIFO would block the checker)."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        output.fail(f"{path}: {exc.strerror or exc}")
    if not stat.S_ISREG(mode):
        output.fail(f"{path} is not a regular file: give a training result log (result_*.txt)")


@training_app.command(
    "check-log",
    epilog=examples(
        "proctor training check-log result_0.txt --ruleset 6.1.0",
        "proctor training check-log results/sys/bert/result_*.txt --json",
    ),
)
def check_log(
    files: Annotated[
        list[Path], typer.Argument(
            metavar="FILE", help="training result logs (result_*.txt)", exists=True, dir_okay=False
        )
    ],
    ruleset: Annotated[
        str | None,
        typer.Option(
            metavar="VERSION",
            help="training ruleset, e.g. 6.1.0 (default: the newest; an unknown one lists the known)",
        ),
    ] = None,
    json: Annotated[bool, typer.Option("--json", help="one JSON object per file")] = False,
) -> None:
    """Check training logs against the ruleset.

    Exit 0 when every file complies, 1 when one does not (a file with no :::MLLOG record is an
    invalid log), 2 for bad input (missing file, not a regular file, unknown ruleset).
    """
    from rich.markup import escape

    from proctor.training.compliance import available_rulesets, check_file, suggest_ruleset

    if ruleset is not None and ruleset not in available_rulesets():
        output.fail(f"unknown training ruleset {ruleset!r} for --ruleset; known: {', '.join(available_rulesets())}")
    for path in files:
        _readable_file(path)
    out = output.console()
    ok = True
    for path in files:
        report = check_file(path, ruleset)
        ok = ok and report.valid
        hint = suggest_ruleset(report) if ruleset is None else None
        if json:
            obj = report.to_json()
            if hint:
                obj["hint"] = hint
            typer.echo(_dumps(obj))
            continue
        verdict = "[green]VALID[/green]" if report.valid else "[red]INVALID[/red]"
        what = ", ".join(x for x in (report.benchmark, report.division) if x)
        out.print(f"{escape(str(path))}: {verdict} ({escape(what) + ', ' if what else ''}ruleset {report.ruleset})")
        output.print_findings(out, report.findings)
        if hint:
            out.print(f"  [yellow]hint[/yellow]: {escape(hint)}")
    raise typer.Exit(output.EXIT_OK if ok else output.EXIT_INVALID)


@training_app.command(
    "check-seeds",
    epilog=examples(
        "proctor training check-seeds results/sys/bert",
        "proctor training check-seeds results/sys/bert --json",
    ),
)
def check_seeds_cmd(
    directory: Annotated[
        Path, typer.Argument(
            metavar="DIR", help="a benchmark directory holding result_*.txt", exists=True, file_okay=False
        )
    ],
    json: Annotated[bool, typer.Option("--json", help="print the findings as JSON")] = False,
) -> None:
    """Check the seeds logged by every run in DIR.

    Exit 0 when there is no error, 1 when a seed is missing, repeated or unreadable, 2 when DIR
    holds no result_*.txt (give a benchmark folder: results/<system>/<benchmark>).
    """
    from rich.markup import escape

    from proctor.findings import is_valid
    from proctor.training.seeds import check_seeds, result_files

    if not result_files(directory):
        output.fail(
            f"no result_*.txt in {directory}: give a benchmark folder (results/<system>/<benchmark>)"
        )
    findings = check_seeds(directory)
    valid = is_valid(findings)
    if json:
        typer.echo(
            _dumps({"directory": str(directory), "valid": valid, "findings": [f.to_dict() for f in findings]})
        )
    else:
        out = output.console()
        out.print(f"{escape(str(directory))}: {'[green]VALID[/green]' if valid else '[red]INVALID[/red]'}")
        output.print_findings(out, findings)
    raise typer.Exit(output.EXIT_OK if valid else output.EXIT_INVALID)
