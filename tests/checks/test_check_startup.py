"""What `proctor check submission --json` loads to check a small tree: none of the modules whose
import cost more than the check itself (issue 33 §3). orjson (it imports dataclasses, inspect, uuid
and datetime), dataclasses, typer and rich stay out; the verdict is the one the tree has."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from proctor.rules.rounds import ROUNDS
from tests.checks.checks_corpus import build_valid_tree

HEAVY = ("orjson", "dataclasses", "inspect", "uuid", "datetime", "typer", "rich", "numpy", "scipy")
PROBE = (
    "import atexit, sys\n"
    "atexit.register(lambda: sys.stderr.write('loaded:' + ','.join(m for m in {heavy!r} if m in sys.modules) + '\\n'))\n"
    "sys.argv = ['proctor', 'check', 'submission', {tree!r}, '--round', {round_!r}, '--json']\n"
    "from proctor.cli.entry import main\n"
    "main()\n"
)


@pytest.mark.parametrize("round_", ROUNDS)
def test_a_small_tree_is_checked_without_the_heavy_modules(tmp_path: Path, round_: str) -> None:
    """Each round's rules load without them too (a round's table is built from the one before it)."""
    tree = build_valid_tree(tmp_path) / "closed" / "UntetherAI"
    res = subprocess.run([sys.executable, "-c", PROBE.format(heavy=HEAVY, tree=str(tree), round_=round_)],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)  # fmt: skip
    assert res.returncode == (0 if round_ == "v4.1" else 1), res.stderr  # the tree is v4.1's
    assert json.loads(res.stdout)["verdict"] == ("VALID" if round_ == "v4.1" else "INVALID")
    loaded = [line for line in res.stderr.splitlines() if line.startswith("loaded:")]
    assert loaded == ["loaded:"]  # none of HEAVY
