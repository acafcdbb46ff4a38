"""`proctor training init` and `proctor training package`: the ends of the training journey.

init -> train -> package -> check-package -> summarize, as the inference journey runs
`submission init` -> `run` -> `submission package`. Bad input (an unknown status or division, a
runs folder without a system description or without result logs, an existing output folder) is one
error line and exit 2; `package` exits 1 when the package it wrote fails `check-package`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from proctor.cli import output
from proctor.cli.apps import examples, training_app
from proctor.cli.shared_options import RulesetOpt
from proctor.rules.training.rulesets import CURRENT_RULESET


@training_app.command(
    "init",
    epilog=examples(
        "proctor training init runs --submitter ACME --framework 'scikit-learn 1.5'",
        "proctor training init runs --submitter ACME --system-name my-server --status cloud --division open",
    ),
)
def init_cmd(
    runs: Annotated[
        Path,
        typer.Argument(metavar="RUNS_DIR", help="The folder of runs `training package` will read (created if missing)."),
    ],
    submitter: Annotated[str, typer.Option("--submitter", metavar="NAME", help="The submitter's name.")],
    system_name: Annotated[
        str, typer.Option("--system-name", metavar="NAME", help="The system's name (systems/<name>.json, results/<name>/).")
    ] = "my-system",
    framework: Annotated[
        str,
        typer.Option(
            "--framework", metavar="TEXT", help="The training framework and its version (left empty if not given)."
        ),
    ] = "",
    division: Annotated[str, typer.Option("--division", metavar="DIVISION", help="closed or open.")] = "closed",
    status: Annotated[
        str,
        typer.Option(
            "--status",
            metavar="STATUS",
            help="available (on-premise), cloud, preview or rdi; or the value itself, e.g. 'Available cloud'.",
        ),
    ] = "available",
) -> None:
    """Write RUNS_DIR/system.json, this machine's description in the training form, where it does not
    exist yet; `training package` reads it. What proctor cannot read from the machine is left empty
    for you to fill in."""
    from proctor.rules.training.package import DIVISIONS, STATUS_ALIASES
    from proctor.submission.package import SAFE_NAME
    from proctor.submission.training_package import training_status, write_system_template

    if not SAFE_NAME.fullmatch(system_name):
        output.fail(f"--system-name {system_name!r}: use a folder name (letters, digits, '.', '_', '-')")
    if division not in DIVISIONS:
        output.fail(f"--division {division!r}: use one of {', '.join(DIVISIONS)}")
    value = training_status(status)
    if value is None:
        output.fail(f"--status {status!r}: use one of {', '.join(STATUS_ALIASES)} (or the value itself)")
    if runs.exists() and not runs.is_dir():
        output.fail(f"{runs}: is a file; give the folder of runs")
    try:
        path = write_system_template(
            runs, submitter=submitter, system_name=system_name, division=division, status=value,
            framework=framework,
        )
    except OSError as exc:
        output.fail(f"{runs}: cannot write system.json: {exc.strerror or exc}")
    out = output.console()
    if path is None:
        out.print(f"nothing to write: {runs / 'system.json'} already exists", markup=False)
    else:
        todo = "" if framework else "; fill in: framework (and any accelerator you used)"
        out.print(f"wrote {path}{todo}", markup=False, soft_wrap=True)
    out.print(
        f"then: proctor training train -o {runs}/digits_train (or your runs as {runs}/<benchmark>/result_*.txt), "
        f"then proctor training package {runs} -o SUBMISSION",
        markup=False,
        soft_wrap=True,
    )


@training_app.command(
    "package",
    epilog=examples(
        "proctor training package runs -o SUBMISSION",
        "proctor training package runs -o SUBMISSION --system sys.json --ruleset 6.1.0 --no-check",
    ),
)
def package_cmd(
    runs: Annotated[
        Path,
        typer.Argument(
            metavar="RUNS_DIR", help="Folder of <benchmark>/result_*.txt and system.json (`training init`, `train -o`)."
        ),
    ],
    out_dir: Annotated[
        Path, typer.Option("-o", "--output", metavar="DIR", help="The package to write (a new folder).")
    ],
    system: Annotated[
        Path | None,
        typer.Option(
            "--system", metavar="FILE", help="The system description JSON; default RUNS_DIR/system.json (`training init`)."
        ),
    ] = None,
    ruleset: RulesetOpt = CURRENT_RULESET,
    check: Annotated[bool, typer.Option("--check/--no-check", help="Run `check-package` on the result.")] = True,
) -> None:
    """Assemble a training submission package: systems/<system>.json, results/<system>/<benchmark>/
    result_*.txt and benchmarks/<benchmark>/ from RUNS_DIR, then check it as `check-package` does.

    Exit 0 when the package is written (and valid, when checked), 1 when it fails the check, 2 when
    RUNS_DIR cannot make a package (the error line says what to add)."""
    from proctor.errors import PackageError
    from proctor.submission.training_package import package_runs
    from proctor.training.compliance import available_rulesets

    if ruleset not in available_rulesets():
        output.fail(f"unknown training ruleset {ruleset!r} for --ruleset; known: {', '.join(available_rulesets())}")
    try:
        result = package_runs(runs, out_dir, system_json=system)
    except PackageError as exc:
        output.fail(str(exc))
    except OSError as exc:
        output.fail(f"{out_dir}: cannot write the package: {exc.strerror or exc}")
    out = output.console()
    t = output.table("benchmark", "runs", "code (benchmarks/)", labels=(0, 1, 2))
    for b in result.benchmarks:
        t.add_row(b.name, str(len(b.runs)), b.readme or "placeholder README.md")
    output.print_table(
        out, t, [("package", str(result.root)), ("system", result.system), ("division", result.division)]
    )
    for note in result.notes:
        out.print(f"note: {note}", markup=False, soft_wrap=True)
    if not check:
        raise typer.Exit(output.EXIT_OK)
    from proctor.training.package import check_package

    rep = check_package(out_dir, ruleset)
    output.print_findings(out, [f for f in rep.findings if f.severity.value != "info"], indent="")
    out.print(
        f"check-package: {'PACKAGE VALID' if rep.valid else 'PACKAGE INVALID'} ({len(rep.checked)} benchmark folders)",
        markup=False,
    )
    out.print(f"then: proctor training summarize {out_dir}", markup=False)
    raise typer.Exit(output.EXIT_OK if rep.valid else output.EXIT_INVALID)
