"""`proctor training check-log` and `check-seeds`: the compliance and seed checkers on the command line."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import orjson
import typer
from rich.console import Console

from proctor.cli.apps import training_app
from proctor.findings import Finding, is_valid
from proctor.training.compliance import available_rulesets, check_file
from proctor.training.seeds import check_seeds

_out = Console(highlight=False, soft_wrap=True)


def _print_finding(f: Finding) -> None:
    where = f":{f.line}" if f.line is not None else ""
    key = f" [{f.key}]" if f.key else ""
    colour = "red" if f.failed else "yellow"
    _out.print(f"  [{colour}]{f.severity.value.upper()}[/{colour}]{where}{key} {f.message}", markup=True)
    if f.source:
        _out.print(f"      rule: {f.source}", markup=False)


@training_app.command("check-log")
def check_log(
    files: Annotated[
        list[Path], typer.Argument(help="training result logs (result_*.txt)", exists=True, dir_okay=False)
    ],
    ruleset: Annotated[
        str, typer.Option(help=f"training ruleset: {', '.join(available_rulesets())}")
    ] = "6.1.0",
    json: Annotated[bool, typer.Option("--json", help="one JSON object per file")] = False,
) -> None:
    """Check training logs against the ruleset; exit 0 only when every file complies."""
    ok = True
    for path in files:
        try:
            report = check_file(path, ruleset)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from exc
        ok = ok and report.valid
        if json:
            typer.echo(orjson.dumps(report.to_json()).decode())
            continue
        verdict = "[green]VALID[/green]" if report.valid else "[red]INVALID[/red]"
        _out.print(
            f"{path}: {verdict} ({report.benchmark}, {report.division}, ruleset {report.ruleset})",
            markup=True,
        )
        for f in report.findings:
            _print_finding(f)
    raise typer.Exit(0 if ok else 1)


@training_app.command("check-seeds")
def check_seeds_cmd(
    directory: Annotated[
        Path, typer.Argument(help="a benchmark directory holding result_*.txt", exists=True, file_okay=False)
    ],
    json: Annotated[bool, typer.Option("--json", help="print the findings as JSON")] = False,
) -> None:
    """Check the seeds logged by every run in DIR; exit 0 only when there is no error."""
    findings = check_seeds(directory)
    valid = is_valid(findings)
    if json:
        typer.echo(
            orjson.dumps(
                {"directory": str(directory), "valid": valid, "findings": [f.to_dict() for f in findings]},
                default=str,
            ).decode()
        )
    else:
        _out.print(f"{directory}: {'[green]VALID[/green]' if valid else '[red]INVALID[/red]'}", markup=True)
        for f in findings:
            _print_finding(f)
    raise typer.Exit(0 if valid else 1)
