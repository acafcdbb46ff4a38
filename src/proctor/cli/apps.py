"""The typer apps every command module registers on (imported, never run, by those modules).

The root group loads a command's module the first time the command is looked up (`COMMANDS`
says which module holds it), so `proctor --version` imports no command module and
`proctor X` imports only X's; `proctor --help` lists every command, loading each module, which
keeps its top-level imports light (typer, the standard library) and imports libraries inside
the command bodies. Help is click's plain text (`rich_markup_mode=None` on every app): typer's
rich help formatter alone costs about as much as the rest of `proctor --help` together.
"""

from __future__ import annotations

import importlib
from typing import Any

import typer
from typer.core import TyperGroup

# Top-level command or group -> the modules that register it (a group's subcommands may come
# from several). tests/cli/test_fast_start.py checks this against an eager registration.
COMMANDS: dict[str, tuple[str, ...]] = {
    "run": ("proctor.cli.run",),
    "audit": ("proctor.cli.audit",),
    "demo": ("proctor.cli.workloads",),
    "report": ("proctor.cli.report",),
    "early-stopping": ("proctor.cli.early_stopping",),
    "bandwidth": ("proctor.cli.inference_checks",),
    "summarize": ("proctor.cli.inference_checks",),
    "check": ("proctor.cli.inference_checks",),
    "submission": ("proctor.cli.submission",),
    "training": ("proctor.cli.training_checks", "proctor.cli.training_results", "proctor.cli.workloads"),
    "serve": ("proctor.cli.serve",),
}


def load(modules: tuple[str, ...]) -> None:
    """Import command modules; one that is missing is skipped (a trimmed install), any other error surfaces."""
    for name in modules:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise


class LazyGroup(TyperGroup):
    """A root group whose commands are built when first looked up, from the modules that register them."""

    def list_commands(self, ctx: Any) -> list[str]:
        return [*COMMANDS, *(n for n in self.commands if n not in COMMANDS)]

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """`proctor --help` lists every command: load them all, then build the command tree once
        (building it afresh per command looked up cost a quadratic number of signature reads)."""
        loaded: set[str] = self.__dict__.setdefault("_loaded", set())
        missing = [name for name in COMMANDS if name not in loaded]
        if missing:
            for name in missing:
                load(COMMANDS[name])
                loaded.add(name)
            fresh = typer.main.get_command(app)
            if isinstance(fresh, TyperGroup):
                for name in missing:
                    if name in fresh.commands:
                        self.commands[name] = fresh.commands[name]
        super().format_commands(ctx, formatter)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        modules = COMMANDS.get(cmd_name)
        loaded: set[str] = self.__dict__.setdefault("_loaded", set())
        if modules is not None and cmd_name not in loaded:
            load(modules)
            loaded.add(cmd_name)
            # the modules registered on the typer apps after this group was built: build it afresh
            fresh = typer.main.get_command(app)
            if isinstance(fresh, TyperGroup) and cmd_name in fresh.commands:
                self.commands[cmd_name] = fresh.commands[cmd_name]
        return super().get_command(ctx, cmd_name)


app = typer.Typer(
    name="proctor",
    help="Run ML benchmarks by the MLPerf rules, measure them, and check the results.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=LazyGroup,
    rich_markup_mode=None,
)
training_app = typer.Typer(
    help="MLPerf Training: logs, compliance, convergence, scoring.", no_args_is_help=True, rich_markup_mode=None
)
check_app = typer.Typer(
    help="MLPerf Inference checks: submissions and results.", no_args_is_help=True, rich_markup_mode=None
)
app.add_typer(training_app, name="training")
app.add_typer(check_app, name="check")
