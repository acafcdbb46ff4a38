"""What `proctor check submission` and `proctor summarize` do with a tree: check or summarize it,
print the report and give the exit status.

Free of typer: the typer commands (cli/inference_checks.py) and the fast path (cli/fast_path.py)
both call these, so a well-formed `proctor check submission DIR --json` starts without loading
typer. A bad input is one error line and exit 2 (`fail`), a checked tree that fails the rules exit 1.
"""

from __future__ import annotations

import sys
from pathlib import Path

from proctor.cli.output import (
    EXIT_INVALID,
    EXIT_OK,
    check_round,
    console,
    fail,
    is_terminal,
    print_findings,
    print_table,
    table,
    write_findings,
)
from proctor.rules.rounds import CURRENT_ROUND
from proctor.tables import plain_table

TYPE_CHECKING = False
if TYPE_CHECKING:
    from proctor.checks.submission import ResultRow

LEVEL = (
    "a submission root (holding closed/open/network) or one <division>/<submitter> folder "
    "(holding systems/ and results/)"
)


def check_directory(directory: Path) -> None:
    if not directory.is_dir():
        fail(f"{directory}: not a folder; give {LEVEL}")


RESULT_COLUMNS = ("system", "benchmark", "scenario", "metric", "value", "units", "valid")


def results_table(rows: list[ResultRow]) -> None:
    """The results, one row each (and the official summary's power row under a result with power):
    rich's table on a terminal, plain columns in a pipe or a file (no rich to import: a third of a
    small tree's check)."""
    cells: list[tuple[str, ...]] = []
    for r in rows:
        value = "" if r.value is None else f"{r.value:.6g}"
        cells.append((r.system, r.benchmark, r.scenario, r.metric, value, r.units, "yes" if r.valid else "NO"))
        if r.power is not None:
            cells.append((r.system, r.benchmark, r.scenario, "power", f"{r.power.metric:.6g}", r.power.units, ""))
    if not is_terminal():
        sys.stdout.write(plain_table(RESULT_COLUMNS, cells))
        return
    tbl = table(*RESULT_COLUMNS, labels=(0, 1, 3))
    for row in cells:
        tbl.add_row(*row)
    print_table(console(), tbl)


def check_submission_command(
    directory: Path,
    round_: str = CURRENT_ROUND,
    as_json: bool = False,
    allow_unofficial: bool = False,
    skip_extra_accuracy_files: bool = False,
) -> int:
    """`proctor check submission`: 0 if the tree is valid, 1 if not."""
    from proctor.checks.loadgen_origin import unofficial_verdict
    from proctor.checks.submission import check_submission
    from proctor.json_text import dumps_indented

    check_round(round_)
    check_directory(directory)
    report = check_submission(
        directory, round_, allow_unofficial_loadgen=allow_unofficial, skip_extra_accuracy_files=skip_extra_accuracy_files
    )
    verdict = "INVALID" if not report.valid else "VALID" if report.submittable else "VALID (development only)"
    if as_json:
        doc = {"kind": "proctor.check.submission", "version": 1, "verdict": verdict, **report.to_dict()}
        sys.stdout.write(dumps_indented(doc).decode() + "\n")
    else:
        n_err = sum(f.failed for f in report.findings)
        lines = [f"{verdict}: {len(report.results)} result(s), {n_err} error(s), "
                 f"{len(report.findings) - n_err} other finding(s)"]  # fmt: skip
        if report.unofficial_logs:
            lines.append(unofficial_verdict(report.unofficial_logs, allow_unofficial))
        if is_terminal():
            out = console()
            print_findings(out, report.findings, indent="")
            results_table(report.results)
            for line in lines:
                out.print(line, markup=False, soft_wrap=True)
        else:
            write_findings(report.findings, indent="")
            results_table(report.results)
            sys.stdout.write("".join(line + "\n" for line in lines))
    return EXIT_OK if report.valid else EXIT_INVALID


def summarize_command(
    directory: Path, as_csv: bool = False, as_json: bool = False, round_: str = CURRENT_ROUND
) -> int:
    """`proctor summarize`: 0, or exit 2 when the tree holds no results."""
    from proctor.checks.summarize import summarize, to_csv, to_json

    check_round(round_)
    check_directory(directory)
    rows = summarize(directory, round_)
    if not rows:
        fail(f"{directory}: no results found; give {LEVEL}, with results/<system>/<benchmark>/<scenario>")
    if as_json:
        sys.stdout.write(to_json(rows).decode() + "\n")
    elif as_csv:
        sys.stdout.write(to_csv(rows))
    else:
        results_table(rows)
    return EXIT_OK
