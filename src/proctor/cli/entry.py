"""The `proctor` console script and `python -m proctor`: the command line's process, from its first import.

Start-up makes some thirty thousand objects (modules, classes, functions, the rules' tables) that are
never garbage, and the cyclic collector, which runs every 700 net new objects, walked them again and
again while they were made: 4 to 6 ms of the 75 ms `proctor check submission` takes on a small tree
(issue 33 §3). So from this module's import on, the collector waits for START_THRESHOLD net new
objects instead:

- a fast-path command (cli/fast_path.py: it reads a tree and prints) keeps that threshold to its end.
  A check of the largest published trees ends below it (26k-28k), so it runs no collection at all;
  a hostile tree that makes more still gets collections, so garbage stays bounded;
- any other command gets the usual thresholds back before typer parses the line, with the start-up's
  objects frozen (`gc.freeze`) so its collections no longer walk them: a run's collections scan only
  what the run made.

Only this entry does so: a program that imports proctor keeps its own collector settings, and a
process whose collector is off keeps it off.
"""

from __future__ import annotations

import gc

START_THRESHOLD = 100_000  # net new objects between collections while the command line starts

_usual = gc.get_threshold()
_held = gc.isenabled()  # the collector was on: ours to tune, and to give back
if _held:
    gc.set_threshold(START_THRESHOLD, *_usual[1:])


def release_collector() -> None:
    """Give the collector its usual thresholds back, start-up objects frozen, if this entry changed
    them; idempotent."""
    global _held
    if _held:
        _held = False
        gc.freeze()
        gc.set_threshold(*_usual)


def main() -> None:
    from proctor.cli.main import main as run_command_line

    run_command_line(before_typer=release_collector)
