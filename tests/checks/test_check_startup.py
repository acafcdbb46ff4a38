"""What `proctor check submission` loads to check a small tree, with --json or printing into a
pipe: none of the modules whose import cost more than the check itself (issue 33 §3). orjson (it
imports dataclasses, inspect, uuid and datetime), dataclasses, typer and rich stay out, and so do the
standard library's modules the check needs no part of at run time (typing: 3 ms; decimal: 2 ms; signal,
importlib, array, bisect); the verdict is the one the tree has."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from proctor.rules.rounds import ROUNDS
from tests.checks.checks_corpus import build_valid_tree

HEAVY = ("orjson", "dataclasses", "inspect", "uuid", "datetime", "typer", "rich", "numpy", "scipy",
         "typing", "decimal", "signal", "importlib", "array", "bisect")  # fmt: skip
PROBE = (
    "import atexit, sys\n"
    "atexit.register(lambda: sys.stderr.write('loaded:' + ','.join(m for m in {heavy!r} if m in sys.modules) + '\\n'))\n"
    "sys.argv = ['proctor', 'check', 'submission', {tree!r}, '--round', {round_!r}, *{json_flag!r}]\n"
    "from proctor.cli.entry import main\n"
    "main()\n"
)


@pytest.mark.parametrize("round_", ROUNDS)
def test_a_small_tree_is_checked_without_the_heavy_modules(tmp_path: Path, round_: str) -> None:
    """Each round's rules load without them too (a round's table is built from the one before it)."""
    tree = build_valid_tree(tmp_path) / "closed" / "UntetherAI"
    res = _check(tree, round_, ["--json"], tmp_path)
    assert res.returncode == (0 if round_ == "v4.1" else 1), res.stderr  # the tree is v4.1's
    assert json.loads(res.stdout)["verdict"] == ("VALID" if round_ == "v4.1" else "INVALID")
    assert _loaded(res) == ["loaded:"]  # none of HEAVY


def test_the_plain_report_to_a_pipe_needs_no_rich(tmp_path: Path) -> None:
    """Without --json, into a pipe: the findings, the results as plain columns and the verdict line,
    with none of HEAVY loaded (rich was a third of a small tree's check)."""
    tree = build_valid_tree(tmp_path) / "closed" / "UntetherAI"
    res = _check(tree, "v4.1", [], tmp_path)
    assert res.returncode == 0, res.stderr
    doc = json.loads(_check(tree, "v4.1", ["--json"], tmp_path).stdout)
    lines = res.stdout.splitlines()
    assert lines[-1] == f"VALID: {len(doc['results'])} result(s), 0 error(s), {len(doc['findings'])} other finding(s)"
    header = lines.index(next(line for line in lines if line.startswith("system ")))
    assert lines[header].split() == ["system", "benchmark", "scenario", "metric", "value", "units", "valid"]
    rows = [line.split() for line in lines[header + 2 : -1]]
    assert [(r[0], r[1], r[2]) for r in rows] == [(r["system"], r["benchmark"], r["scenario"]) for r in doc["results"]]
    assert all(f["message"] in res.stdout for f in doc["findings"])
    assert _loaded(res) == ["loaded:"]


def _check(tree: Path, round_: str, json_flag: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    code = PROBE.format(heavy=HEAVY, tree=str(tree), round_=round_, json_flag=json_flag)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=cwd)


def _loaded(res: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in res.stderr.splitlines() if line.startswith("loaded:")]
