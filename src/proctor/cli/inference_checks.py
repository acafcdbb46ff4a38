"""Commands: `proctor check submission`, `proctor bandwidth`, `proctor summarize` (parse, call, print)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import orjson
import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from proctor.cli.apps import app, check_app
from proctor.rules.inference import CURRENT_ROUND, SEEDS, resolve

_out = Console(highlight=False)
_err = Console(stderr=True, highlight=False)

VersionOpt = Annotated[
    str, typer.Option("--round", help=f"Submission round whose seeds apply ({', '.join(SEEDS)}).")
]


def _check_version(version: str) -> None:
    if version not in SEEDS:
        _err.print(f"[red]unknown round {version!r}; use one of {', '.join(SEEDS)}[/red]")
        raise typer.Exit(2)


@check_app.command("submission")
def submission_cmd(
    directory: Annotated[
        Path,
        typer.Argument(
            help="Submission root (holding closed/open/network) or one <division>/<submitter> folder."
        ),
    ],
    version: VersionOpt = CURRENT_ROUND,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Check a submission tree against the inference rules; exit 0 if valid, 1 if not."""
    from proctor.checks.submission import check_submission

    _check_version(version)
    if not directory.is_dir():
        _err.print(f"[red]{directory}: not a directory[/red]")
        raise typer.Exit(2)
    report = check_submission(directory, version)
    if as_json:
        sys.stdout.write(orjson.dumps(report.to_dict(), option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        for f in report.findings:
            colour = {"error": "red", "warning": "yellow"}.get(f.severity.value, "cyan")
            where = f.path + (f":{f.line}" if f.line else "") if f.path else ""
            _out.print(
                f"[{colour}]{f.severity.value.upper()}[/{colour}] {escape(f'[{f.rule}] {where}')}\n"
                f"    {escape(f.message)}"
            )
        table = Table("system", "benchmark", "scenario", "metric", "value", "units", "valid")
        for r in report.results:
            table.add_row(
                r.system,
                r.benchmark,
                r.scenario,
                r.metric,
                "" if r.value is None else f"{r.value:.6g}",
                r.units,
                "yes" if r.valid else "NO",
            )
        _out.print(table)
        n_err = sum(f.failed for f in report.findings)
        _out.print(
            f"{'VALID' if report.valid else 'INVALID'}: {n_err} error(s), "
            f"{len(report.findings) - n_err} other finding(s)"
        )
    raise typer.Exit(0 if report.valid else 1)


@app.command("bandwidth")
def bandwidth_cmd(
    benchmark: Annotated[str, typer.Argument(help="Benchmark name (mlperf.conf or rules spelling).")],
    throughput: Annotated[float, typer.Option("--throughput", help="Achieved samples per second.")],
    dtype_size: Annotated[int, typer.Option("--dtype-size", help="Bytes per input/output element.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Minimum ingress and egress bandwidth (bytes/s) from the rules' datacenter bandwidth appendix."""
    from proctor.checks.bandwidth import minimum_bandwidth

    try:
        req = minimum_bandwidth(resolve(benchmark).benchmark, throughput, dtype_size)
    except (KeyError, ValueError) as exc:
        _err.print(f"[red]{exc.args[0] if exc.args else exc}[/red]")
        raise typer.Exit(2) from None
    if as_json:
        sys.stdout.write(orjson.dumps(req.to_dict(), option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    _out.print(f"{req.benchmark} at {req.throughput:g} samples/s, dtype size {req.dtype_size} B")
    _out.print(f"  ingress: {req.ingress_bytes_per_s:.6g} bytes/s  ({req.ingress_formula})", markup=False)
    _out.print(f"  egress:  {req.egress_bytes_per_s:.6g} bytes/s  ({req.egress_formula})", markup=False)
    for note in req.notes:
        _out.print(f"  note: {note}", markup=False)


@app.command("summarize")
def summarize_cmd(
    directory: Annotated[Path, typer.Argument(help="Submission root or <division>/<submitter> folder.")],
    as_csv: Annotated[bool, typer.Option("--csv", help="Print CSV.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    version: VersionOpt = CURRENT_ROUND,
) -> None:
    """One row per system, benchmark and scenario with the metric the rules name and its units."""
    from proctor.checks.summarize import summarize, to_csv, to_json

    _check_version(version)
    if not directory.is_dir():
        _err.print(f"[red]{directory}: not a directory[/red]")
        raise typer.Exit(2)
    rows = summarize(directory, version)
    if as_json:
        sys.stdout.write(to_json(rows).decode() + "\n")
    elif as_csv:
        sys.stdout.write(to_csv(rows))
    else:
        table = Table("system", "benchmark", "scenario", "metric", "value", "units", "valid")
        for r in rows:
            table.add_row(
                r.system,
                r.benchmark,
                r.scenario,
                r.metric,
                "" if r.value is None else f"{r.value:.6g}",
                r.units,
                "yes" if r.valid else "NO",
            )
        _out.print(table)
