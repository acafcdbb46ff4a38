"""cli/entry.py: the console script runs its start-up and its fast-path commands without the cyclic
collector, gives it back (start-up objects frozen) to every command typer parses, and leaves the
collector of a program that only imports proctor alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

PROBE = (
    "import atexit, gc, sys\n"
    "{setup}\n"
    "atexit.register(lambda: print('collector', gc.isenabled(), gc.get_freeze_count() > 0, flush=True))\n"
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


def test_a_fast_path_command_runs_without_the_collector(tmp_path: Path) -> None:
    rc, state = _collector_at_exit(["check", "submission", str(tmp_path / "missing"), "--json"], tmp_path)
    assert rc == 2
    assert state == "collector False False"


@pytest.mark.parametrize("args", [["--version"], ["check", "submission", "--help"]])
def test_a_typer_command_gets_the_collector_back_with_start_up_frozen(tmp_path: Path, args: list[str]) -> None:
    rc, state = _collector_at_exit(args, tmp_path)
    assert rc == 0
    assert state == "collector True True"


def test_a_collector_already_off_is_not_switched_on(tmp_path: Path) -> None:
    """The entry gives back only what it took: a process that had the collector off keeps it off."""
    rc, state = _collector_at_exit(["--version"], tmp_path, setup="gc.disable()")
    assert rc == 0
    assert state == "collector False False"


def test_importing_proctor_leaves_the_collector_alone(tmp_path: Path) -> None:
    code = "import gc, proctor, proctor.cli.main, proctor.checks.submission\nprint(gc.isenabled())\n"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert res.stdout.strip() == "True"


def test_python_dash_m_proctor_is_the_entry(tmp_path: Path) -> None:
    code = "import runpy, gc, sys\nsys.argv = ['proctor', '--version']\n" \
           "import atexit\natexit.register(lambda: print('frozen', gc.get_freeze_count() > 0, flush=True))\n" \
           "runpy.run_module('proctor', run_name='__main__')\n"  # fmt: skip
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert res.returncode == 0 and res.stdout.startswith("proctor ")
    assert "frozen True" in res.stdout
