"""cli/entry.py: the console script runs its start-up and its fast-path commands with the cyclic
collector waiting for START_THRESHOLD new objects, gives every command typer parses the usual
thresholds back (start-up objects frozen), and leaves the collector of a program that only imports
proctor alone."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = (
    "import atexit, gc, sys\n"
    "{setup}\n"
    "def state():\n"
    "    start = sys.modules['proctor.cli.entry'].START_THRESHOLD\n"
    "    at = 'start' if gc.get_threshold()[0] == start else 'usual' if gc.get_threshold() == usual else '?'\n"
    "    print('collector', gc.isenabled(), at, gc.get_freeze_count() > 0, flush=True)\n"
    "usual = gc.get_threshold()\n"
    "atexit.register(state)\n"
    "sys.argv = ['proctor', *{args!r}]\n"
    "from proctor.cli.entry import main\n"
    "main()\n"
)


def _collector_at_exit(args: list[str], tmp_path: Path, setup: str = "") -> tuple[int, str]:
    res = subprocess.run([sys.executable, "-c", PROBE.format(args=args, setup=setup)], capture_output=True,
                         text=True, cwd=tmp_path, timeout=120)  # fmt: skip
    lines = [line for line in res.stdout.splitlines() if line.startswith("collector ")]
    assert len(lines) == 1, (res.stdout, res.stderr)
    return res.returncode, lines[0]


def test_a_fast_path_command_runs_with_the_start_up_threshold(tmp_path: Path) -> None:
    rc, state = _collector_at_exit(["check", "submission", str(tmp_path / "missing"), "--json"], tmp_path)
    assert rc == 2
    assert state == "collector True start False"


def test_a_fast_path_check_of_a_tree_runs_no_collection(tmp_path: Path) -> None:
    """The threshold is above what a check makes: from the entry's import to the exit, no collection
    runs (gc.get_stats counts them)."""
    tree = tmp_path / "closed" / "ACME"
    (tree / "results").mkdir(parents=True)
    code = (
        "import atexit, gc, sys\n"
        "def runs():\n"
        "    return sum(s['collections'] for s in gc.get_stats())\n"
        "import proctor.cli.entry\n"
        "at_entry = runs()\n"
        "atexit.register(lambda: print('collections since the entry', runs() - at_entry, flush=True))\n"
        f"sys.argv = ['proctor', 'check', 'submission', {str(tree)!r}, '--json']\n"
        "proctor.cli.entry.main()\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert res.returncode in (0, 1), res.stderr
    assert "collections since the entry 0" in res.stdout.splitlines()


@pytest.mark.parametrize("args", [["--version"], ["check", "submission", "--help"]])
def test_a_typer_command_gets_the_collector_back_with_start_up_frozen(tmp_path: Path, args: list[str]) -> None:
    rc, state = _collector_at_exit(args, tmp_path)
    assert rc == 0
    assert state == "collector True usual True"


def test_a_collector_already_off_is_not_switched_on(tmp_path: Path) -> None:
    """The entry gives back only what it took: a process that had the collector off keeps it off."""
    rc, state = _collector_at_exit(["--version"], tmp_path, setup="gc.disable()")
    assert rc == 0
    assert state == "collector False usual False"


def test_importing_proctor_leaves_the_collector_alone(tmp_path: Path) -> None:
    code = "import gc, proctor, proctor.cli.main, proctor.checks.submission\nprint(gc.isenabled(), gc.get_threshold())\n"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert res.stdout.strip() == f"True {gc.get_threshold()}"


def test_python_dash_m_proctor_is_the_entry(tmp_path: Path) -> None:
    code = "import runpy, gc, sys\nsys.argv = ['proctor', '--version']\n" \
           "import atexit\natexit.register(lambda: print('frozen', gc.get_freeze_count() > 0, flush=True))\n" \
           "runpy.run_module('proctor', run_name='__main__')\n"  # fmt: skip
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert res.returncode == 0 and res.stdout.startswith("proctor ")
    assert "frozen True" in res.stdout
