"""The typer apps every command module registers on (imported, never run, by those modules)."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="proctor",
    help="Run ML benchmarks by the MLPerf rules, measure them, and check the results.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
training_app = typer.Typer(help="MLPerf Training: logs, compliance, convergence, scoring.", no_args_is_help=True)
check_app = typer.Typer(help="MLPerf Inference checks: submissions and results.", no_args_is_help=True)
app.add_typer(training_app, name="training")
app.add_typer(check_app, name="check")
