"""The typer apps every command module registers on (imported, never run, by those modules), and
the root command's own options (`--version`, `--debug`).

The root group loads a command's module the first time the command is looked up (`COMMANDS`
says which module holds it), so `proctor --version` imports no command module and
`proctor X` imports only X's; `proctor --help` lists every command from `SUMMARY` without loading
any. A command module keeps its top-level imports light (typer, the standard library) and imports
libraries inside the command bodies. Help is click's plain text (`rich_markup_mode=None` on every app): typer's
rich help formatter alone costs about as much as the rest of `proctor --help` together. A command's
parameters are coerced without pydantic where the value is plain (cli/param_coercion.py).
"""

from __future__ import annotations

import importlib
from typing import Any

import typer
from typer.core import TyperGroup

from proctor.cli import param_coercion

param_coercion.install()  # plain option values coerced without pydantic (its import alone costs ~50 ms)

# Top-level command or group -> the modules that register it (a group's subcommands may come
# from several). tests/cli/test_fast_start.py checks this against an eager registration.
COMMANDS: dict[str, tuple[str, ...]] = {
    "run": ("proctor.cli.run",),
    "audit": ("proctor.cli.audit",),
    "sweep": ("proctor.cli.sweep",),
    "demo": ("proctor.cli.workloads",),
    "report": ("proctor.cli.report",),
    "early-stopping": ("proctor.cli.early_stopping",),
    "bandwidth": ("proctor.cli.inference_checks",),
    "summarize": ("proctor.cli.inference_checks",),
    "check": ("proctor.cli.inference_checks",),
    "submission": ("proctor.cli.submission",),
    "training": (
        "proctor.cli.training_package",
        "proctor.cli.workloads",
        "proctor.cli.training_checks",
        "proctor.cli.training_results",
    ),
    "serve": ("proctor.cli.serve",),
    "results": ("proctor.cli.results",),
}


# Top-level command -> the start of its help, for `proctor --help` without loading any command
# module; tests/cli/test_fast_start.py checks each against the command's own help.
SUMMARY: dict[str, str] = {
    "run": "Run one MLPerf Inference test (the official LoadGen's StartTest) and judge it.",
    "audit": "Run MLPerf Inference compliance audits and verify them.",
    "sweep": "Run a SUT at many loads: one table, sweep.json, sweep.csv/.parquet and sweep.html; or find its goodput.",
    "demo": "One benchmark round on the reference workloads.",
    "report": "Write a self-contained HTML report (plots, verdicts, comparisons) of inference and training runs.",
    "early-stopping": "Early stopping (MLPerf Inference rules, appendix): queries needed and the percentile reported.",
    "bandwidth": "Minimum ingress and egress bandwidth (bytes/s) from the rules' datacenter bandwidth appendix.",
    "summarize": "One row per system, benchmark and scenario with the metric the rules name and its units.",
    "check": "MLPerf Inference checks: submissions and results.",
    "submission": "Assemble an inference submission tree and prepare it for the official checker.",
    "training": "MLPerf Training: logs, compliance, convergence, scoring.",
    "serve": "Serve a model or SUT over the network (loopback by default).",
    "results": "Published results in one database: ingest rounds, query them, compare your result.",
}

def examples(*lines: str) -> str:
    """A command's epilog: an "Examples" section, one command per line, kept as written (click's
    `\\b` marker stops the rewrap)."""
    return "Examples:\n\n\b\n" + "\n".join(f"  {line}" for line in lines)


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
        """`proctor --help` lists every command from `SUMMARY`: no command module is loaded, no
        command built (a command outside the table, registered by hand, is built as usual)."""
        rows = []
        for name in self.list_commands(ctx):
            text = SUMMARY.get(name)
            if text is None:
                cmd = self.get_command(ctx, name)
                if cmd is None or cmd.hidden:
                    continue
                text = cmd.get_short_help_str(formatter.width)
            rows.append((name, text))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

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

    def invoke(self, ctx: Any) -> Any:
        """A stop signal a command did not handle itself (typer would exit 130 without a word,
        whatever the signal): the one "interrupted" line and 128 + the signal (cli/output.py)."""
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt as exc:
            from proctor.cli import output

            output.interrupted(exc=exc)


app = typer.Typer(
    name="proctor",
    help="Run ML benchmarks by the MLPerf rules, measure them, and check the results.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=LazyGroup,
    rich_markup_mode=None,
    epilog=examples(
        "proctor demo",
        "proctor run --scenario Offline --sut digits:backend=numpy --target-qps 5000 --quick",
        "proctor check submission SUBMISSION",
        "proctor training check-package SUBMISSION",
        "proctor COMMAND --help",
    ),
)
training_app = typer.Typer(
    help="MLPerf Training: logs, compliance, convergence, scoring.",
    no_args_is_help=True,
    rich_markup_mode=None,
    epilog=examples(
        "proctor training init runs --submitter ACME --framework 'scikit-learn 1.5'",
        "proctor training train -o runs/digits_train",
        "proctor training package runs -o SUBMISSION",
        "proctor training check-package SUBMISSION",
        "proctor training summarize SUBMISSION",
        "proctor training check-log result_0.txt",
    ),
)
check_app = typer.Typer(
    help="MLPerf Inference checks: submissions and results.",
    no_args_is_help=True,
    rich_markup_mode=None,
    epilog=examples("proctor check submission SUBMISSION", "proctor check submission SUBMISSION --json"),
)
results_app = typer.Typer(
    help="Published results in one database: ingest rounds, query them, compare your result.",
    no_args_is_help=True,
    rich_markup_mode=None,
    epilog=examples(
        "proctor results ingest inference_results_v5.1 training_results_v5.1",
        "proctor results compare runs/resnet50/Offline/performance/run_1 --accelerators 8 -o compare.html",
        "proctor results query \"SELECT submitter, value FROM results WHERE benchmark = 'resnet50' LIMIT 5\"",
    ),
)


def _version(value: bool) -> None:
    if value:
        from proctor.version import __version__

        typer.echo(f"proctor {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", is_eager=True, callback=_version, help="Print proctor's version and exit."
    ),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks instead of one-line errors."),
) -> None:
    """Run ML benchmarks by the MLPerf rules, measure them, and check the results."""
    if debug:
        from proctor.cli import output

        output.set_debug(True)


app.add_typer(training_app, name="training")
app.add_typer(check_app, name="check")
app.add_typer(results_app, name="results")
