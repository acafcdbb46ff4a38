"""Entry point: importing each command module registers its commands on the shared apps."""

from __future__ import annotations

import importlib

from proctor.cli.apps import app

# One module per group of commands; each owns its commands and imports only cli.apps.
COMMAND_MODULES = (
    "proctor.cli.run",
    "proctor.cli.early_stopping",
    "proctor.cli.training_checks",
    "proctor.cli.training_results",
    "proctor.cli.inference_checks",
    "proctor.cli.workloads",
)


def _register() -> None:
    for name in COMMAND_MODULES:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:  # a real import error inside the module must surface
                raise


def main() -> None:
    _register()
    app()
