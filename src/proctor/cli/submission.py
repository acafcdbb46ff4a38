"""Commands: `proctor submission truncate-accuracy` and `proctor submission package`.

Bad input (a missing folder, an existing output folder, neither --output nor --backup, no folder of
the --submitter) is one error line and exit 2; truncate-accuracy with nothing to truncate is a
success (exit 0) that says so; `package --check` exits 1 when the assembled tree fails the checker.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from proctor.cli.apps import app, examples
from proctor.cli.output import (
    EXIT_INVALID,
    EXIT_OK,
    check_round,
    console,
    fail,
    print_findings,
    print_table,
    table,
)
from proctor.cli.shared_options import AllowUnofficialOpt, RoundOpt, SkipExtraAccuracyFilesOpt
from proctor.rules.rounds import CURRENT_ROUND

submission_app = typer.Typer(
    help="Assemble an inference submission tree and prepare it for the official checker.",
    no_args_is_help=True,
    rich_markup_mode=None,
    epilog=examples(
        "proctor submission init runs --submitter ACME --framework 'onnxruntime 1.20'",
        "proctor submission package RUNS_DIR -o SUBMISSION --submitter ACME --system system.json",
        "proctor submission truncate-accuracy --input SUBMISSION --submitter ACME -o TRUNCATED",
    ),
)
app.add_typer(submission_app, name="submission")


@submission_app.command(
    "init",
    epilog=examples(
        "proctor submission init runs --submitter ACME --framework 'onnxruntime 1.20'",
        "proctor submission init runs --submitter ACME --system-name my-server --system-type datacenter",
        "proctor submission init runs --submitter ACME --framework 'onnxruntime 1.20' --accelerators 0",
    ),
)
def init_cmd(
    runs: Annotated[
        Path, typer.Argument(metavar="RUNS_DIR", help="The folder of runs `package` will read (created if missing).")
    ],
    submitter: Annotated[str, typer.Option("--submitter", metavar="NAME", help="The submitter's name.")],
    system_name: Annotated[
        str, typer.Option("--system-name", metavar="NAME", help="The system's name in the results tree.")
    ] = "my-system",
    framework: Annotated[
        str, typer.Option("--framework", metavar="TEXT", help="The inference framework and its version (left "
                          "empty if not given: the checker then asks for it).")
    ] = "",
    division: Annotated[
        str, typer.Option("--division", metavar="DIVISION", help="closed, network or open.")
    ] = "closed",
    status: Annotated[
        str, typer.Option("--status", metavar="STATUS", help="available, preview or rdi.")
    ] = "available",
    system_type: Annotated[
        str, typer.Option("--system-type", metavar="TYPE", help="edge or datacenter (which suite applies).")
    ] = "edge",
    accelerators: Annotated[
        int | None, typer.Option(
            "--accelerators", metavar="N", min=0, max=1 << 20,
            help="Accelerators per node the SUT used (0: a CPU-only run; the accelerator fields then say "
            "N/A). Left to fill in if not given.",
        )
    ] = None,
) -> None:
    """Write RUNS_DIR/system.json (this machine's description) and RUNS_DIR/measurements.json (to fill
    in) where they do not exist yet; `package` reads both. What only you know is left empty, and
    the checker names each empty field, so a template never passes as a finished description."""
    from proctor.errors import TreeError
    from proctor.submission.describe import write_templates
    from proctor.submission.package import DIVISIONS
    from proctor.trees import safe_name

    try:
        safe_name(system_name, "--system-name")
        safe_name(submitter, "--submitter")  # the submitter's folder under the division, later
    except TreeError as exc:
        fail(str(exc))
    if division not in DIVISIONS:
        fail(f"--division {division!r}: use one of {', '.join(DIVISIONS)}")
    if system_type not in ("edge", "datacenter"):
        fail(f"--system-type {system_type!r}: use edge or datacenter")
    if runs.exists() and not runs.is_dir():
        fail(f"{runs}: is a file; give the folder of runs")
    try:
        written = write_templates(runs, submitter=submitter, system_name=system_name, division=division,
                                  status=status, framework=framework, system_type=system_type,
                                  accelerators=accelerators)
    except TreeError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"{exc.filename or runs}: cannot write it ({exc.strerror or exc}); give a folder you can write")
    out = console()
    if not written:
        out.print(f"nothing to write: {runs} already has system.json and measurements.json", markup=False)
    for path, todo in written:
        out.print(f"wrote {path}" + (f"; fill in: {todo}" if todo else ""), markup=False, soft_wrap=True)
    out.print("then: README.md (how to reproduce) and user.conf beside them", markup=False)


@submission_app.command(
    "truncate-accuracy",
    epilog=examples(
        "proctor submission truncate-accuracy --input SUBMISSION --submitter ACME -o TRUNCATED",
        "proctor submission truncate-accuracy --input SUBMISSION --submitter ACME --backup BACKUP",
    ),
)
def truncate_cmd(
    input_dir: Annotated[
        Path, typer.Option(
            "--input", metavar="DIR", help="The submission root (holding closed/open/network)."
        )
    ],
    submitter: Annotated[
        str, typer.Option("--submitter", metavar="NAME", help="Only this submitter's folders.")
    ],
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            metavar="DIR",
            help="Write a truncated copy here (a new folder); the input stays.",
        ),
    ] = None,
    backup: Annotated[
        Path | None,
        typer.Option(
            "--backup",
            metavar="DIR",
            help="Truncate in place, saving each original accuracy log under this folder.",
        ),
    ] = None,
    scenarios_to_skip: Annotated[
        str | None,
        typer.Option(
            "--scenarios-to-skip",
            metavar="SCENARIO,...",
            help="Comma-separated scenario folders to leave alone.",
        ),
    ] = None,
) -> None:
    """Truncate accuracy logs to the checker's size limit, appending each full log's hash to accuracy.txt.

    Exit 0 when every log is done, nothing needing truncation included (it says so); 1 when a log
    could not be processed; 2 when the input is wrong (no folder of that submitter, among others).
    """
    from proctor.errors import TreeError
    from proctor.submission.truncate import TruncateError, copy_submission, submitter_folders, truncate_tree
    from proctor.trees import real_root, safe_name, show

    if output is None and backup is None:
        fail(
            "give --output NEW_FOLDER (truncate a copy) or --backup FOLDER (truncate in place, originals saved)"
        )
    try:
        safe_name(submitter, "--submitter")
    except TreeError as exc:
        fail(str(exc))
    if not input_dir.is_dir():
        fail(f"--input {input_dir}: not a folder; give the submission root holding closed/open/network")
    input_dir = real_root(input_dir)
    mine, seen = submitter_folders(input_dir, submitter)
    if not mine:  # the official script does nothing and exits 0: a misspelt name would pass unnoticed
        fail(
            f"--submitter {submitter}: no closed/, open/ or network/ folder of {input_dir} holds it"
            + (f" (submitters there: {', '.join(show(n) for n in seen[:10])})" if seen else "")
        )
    root = input_dir
    if output is not None:
        try:
            root = copy_submission(input_dir, output, submitter)
        except (TruncateError, TreeError) as exc:
            fail(str(exc))
    skip = [s for s in (scenarios_to_skip or "").split(",") if s]
    try:
        report = truncate_tree(root, submitter, backup, skip)
    except TreeError as exc:  # refused before anything was written
        fail(str(exc))
    out = console()
    tbl = table("accuracy log", "what happened", labels=(0, 1))
    for path in report.truncated:
        tbl.add_row(str(path.relative_to(root)), "truncated; hash written to accuracy.txt")
    for path, why in report.skipped:
        tbl.add_row(str(path.relative_to(root)), f"skipped: {why}")
    for path, why in report.problems:
        tbl.add_row(str(path.relative_to(root)), f"ERROR: {why}")
    print_table(out, tbl, [("tree", str(root))] + ([("originals", str(backup))] if backup else []))
    out.print(
        f"{len(report.truncated)} truncated, {len(report.skipped)} skipped, {len(report.problems)} error(s); "
        "keep the originals in case MLCommons asks for the full logs",
        markup=False,
    )
    if not report.truncated and not report.problems:  # a no-op is a success, said as one
        out.print(
            f"nothing needed truncating: {submitter}'s {len(report.skipped)} accuracy log(s) are all within "
            "the limit with their hash in accuracy.txt, or have none to truncate"
            if report.skipped
            else f"nothing needed truncating: no accuracy log under {submitter}'s results/",
            markup=False,
        )
    raise typer.Exit(EXIT_INVALID if report.problems else EXIT_OK)


@submission_app.command(
    "package",
    epilog=examples(
        "proctor submission package RUNS_DIR -o SUBMISSION --submitter ACME --system system.json",
        "proctor submission package RUNS_DIR -o OPEN --submitter ACME --system sys.json --division open",
        "proctor submission package runs --audits audits -o SUBMISSION --submitter ACME --allow-unofficial-loadgen",
    ),
)
def package_cmd(
    runs: Annotated[
        Path, typer.Argument(
            metavar="RUNS_DIR", help="A folder of proctor runs (see `proctor submission package --help`)."
        )
    ],
    output: Annotated[
        Path, typer.Option(
            "-o", "--output", metavar="DIR", help="The submission root to write (a new folder)."
        )
    ],
    submitter: Annotated[
        str, typer.Option(
            "--submitter", metavar="NAME", help="The submitter's name (the folder under the division)."
        )
    ],
    system: Annotated[
        Path | None, typer.Option(
            "--system", metavar="FILE", help="The system description JSON (systems/<name>.json); default "
            "RUNS_DIR/system.json, as `proctor submission init` writes it."
        )
    ] = None,
    division: Annotated[
        str, typer.Option("--division", metavar="DIVISION", help="closed, network or open.")
    ] = "closed",
    round_: RoundOpt = CURRENT_ROUND,
    check: Annotated[
        bool, typer.Option("--check/--no-check", help="Run proctor's checker on the result.")
    ] = True,
    allow_unofficial: AllowUnofficialOpt = False,
    skip_extra_accuracy_files: SkipExtraAccuracyFilesOpt = False,
    audits: Annotated[
        list[Path] | None,
        typer.Option(
            "--audits",
            metavar="DIR",
            help="A folder `proctor audit -o DIR` wrote: its TEST0x folders join the runs of the same "
            "benchmark and scenario (repeatable).",
        ),
    ] = None,
) -> None:
    """Assemble an official-layout submission tree from proctor runs, truncating the accuracy logs.

    RUNS holds `<benchmark>/<scenario>/{performance/run_1,accuracy}` run folders, as `proctor run -o`
    writes them (e.g. `-o runs/digits/Offline/performance/run_1`, and `--mode AccuracyOnly -o
    runs/digits/Offline/accuracy`, which writes accuracy.txt), optionally `<benchmark>/<scenario>/TEST0x/`
    audit folders, user.conf and measurements.json per scenario or at the top, and a README.md. The
    audits `proctor audit -o DIR` wrote come in with --audits DIR (or RUNS may be that DIR itself).
    """
    from proctor.errors import TreeError
    from proctor.submission.package import PackageError, package

    check_round(round_)
    try:
        result = package(
            runs,
            output,
            submitter=submitter,
            system_json=system,
            division=division,
            version=round_,
            audits=audits or (),
        )
    except (PackageError, TreeError) as exc:
        fail(str(exc))
    out = console()
    tbl = table("benchmark", "scenario", "parts", labels=(0, 1, 2))
    for row in result.rows:
        tbl.add_row(row.benchmark, row.scenario, ", ".join(row.parts))
    print_table(out, tbl, [("submission", str(result.root))])
    for note in result.notes:
        out.print(f"note: {note}", markup=False)
    if not check:
        raise typer.Exit(EXIT_OK)
    from proctor.checks.loadgen_origin import unofficial_verdict
    from proctor.checks.submission import check_submission

    report = check_submission(
        output, round_, allow_unofficial_loadgen=allow_unofficial, skip_extra_accuracy_files=skip_extra_accuracy_files
    )
    print_findings(out, report.findings, indent="")
    out.print("checker: " + ("VALID" if report.valid else "INVALID"), markup=False)
    if report.unofficial_logs:
        out.print(unofficial_verdict(report.unofficial_logs, allow_unofficial), markup=False, soft_wrap=True)
    raise typer.Exit(EXIT_OK if report.valid else EXIT_INVALID)
