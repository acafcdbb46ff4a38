"""The `proctor` console script and `python -m proctor`: the command line's process, from its first import.

Start-up allocates some hundred thousand objects (modules, classes, functions, the rules' tables)
that are never garbage, and the cyclic collector walked them again and again while they were made:
4 to 6 ms of the 75 ms `proctor check submission` takes on a small tree (issue 33 §3). So the
collector is off from this module's import on:

- a fast-path command (cli/fast_path.py: it reads a tree and prints) finishes without it. What it
  makes is freed by reference counting; the cycles it leaves are a few hundred to a few thousand
  objects on the largest published trees (the peak memory is the same with the collector on);
- any other command gets it back before typer parses the line, with the start-up's objects frozen
  (`gc.freeze`) so its passes no longer walk them: a run's collections scan only what the run made.

Only this entry does so: a program that imports proctor keeps its own collector settings.
"""

from __future__ import annotations

import gc

_held = gc.isenabled()  # the collector was on (and is ours to give back)
gc.disable()


def release_collector() -> None:
    """Give the collector back (on, start-up objects frozen) if this entry took it; idempotent."""
    global _held
    if _held:
        _held = False
        gc.freeze()
        gc.enable()


def main() -> None:
    from proctor.cli.main import main as run_command_line

    run_command_line(before_typer=release_collector)
