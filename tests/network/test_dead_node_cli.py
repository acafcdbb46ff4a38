"""Issue 31 §3 as a user walks it: two `proctor serve node` processes, a `proctor run` over both,
one node killed mid-run (once the live line shows completions). The run goes on, the dead node is
one stderr line, its samples are answered by the other node and the verdict says so; with both
nodes killed the run ends at once with one line per node and exit 1."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

SRC = Path(__file__).resolve().parents[2] / "src"
# 396,000 samples in the one Offline query: seconds of work for two digits nodes on any machine, so
# a node killed at the first completions dies mid-run; a min_duration of 0.1 s is met on any machine,
# so the verdict does not depend on the machine's speed or load
RUN = ("--scenario", "Offline", "--duration-ms", "100", "--target-qps", "3600000", "--no-report")
DONE = re.compile(r"issued / ([\d,]+) done")


def _env() -> dict[str, str]:
    return {**os.environ, "COLUMNS": "250", "PROCTOR_PROGRESS_INTERVAL_S": "0.3",
            "PYTHONPATH": str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", "")}


class Node:
    """`proctor serve node --sut digits:backend=numpy --port 0`, its URL read from its ready line."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "proctor", "serve", "node", "--sut", "digits:backend=numpy", "--port", "0"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=_env(),
        )
        line: list[str] = []
        reader = threading.Thread(target=lambda: line.append(self.proc.stderr.readline()), daemon=True)  # type: ignore[union-attr]
        reader.start()
        reader.join(120)
        found = re.search(r" on (http://127\.0\.0\.1:\d+)$", line[0].strip()) if line else None
        if found is None:
            self.stop()
            pytest.fail(f"proctor serve node did not start: {line}")
        self.url = found.group(1)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)


def _run_killing(tmp_path: Path, nodes: list[Node], kill: list[Node]) -> tuple[int, list[str], str]:
    """`proctor run` over `nodes`; `kill` are killed once a live line shows completed samples."""
    spec = "network:" + ",".join(f"node={n.url}" for n in nodes)
    run = subprocess.Popen([sys.executable, "-m", "proctor", "run", *RUN, "--sut", spec, "-o", str(tmp_path / "logs")],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
    err: list[str] = []
    killed = threading.Event()

    def read_stderr() -> None:
        for line in run.stderr:  # type: ignore[union-attr]
            err.append(line.rstrip("\n"))
            done = DONE.search(line)
            if done and int(done.group(1).replace(",", "")) > 0 and not killed.is_set():
                for n in kill:
                    n.stop()
                killed.set()

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    watchdog = threading.Timer(600, run.kill)  # a bound on the whole run, not a timed assertion
    watchdog.start()
    try:
        out = run.stdout.read()  # type: ignore[union-attr]  # (stderr is the reader thread's)
        run.wait()
    finally:
        watchdog.cancel()
    reader.join(30)
    assert killed.is_set(), "no live line showed completions: " + "\n".join(err[-5:])
    return run.returncode, err, out


def test_a_node_killed_mid_run_is_one_line_and_its_samples_go_to_the_other(tmp_path: Path) -> None:
    nodes = [Node(), Node()]
    try:
        rc, err, out = _run_killing(tmp_path, nodes, kill=[nodes[1]])
    finally:
        for n in nodes:
            n.stop()
    dead = nodes[1].url
    about = [line for line in err if dead in line]
    assert rc == 0, out + "\n".join(err[-20:])
    assert len(about) == 1, about  # one line, not one per failed request
    assert re.search(rf"\({re.escape(dead)}\) is down at t=[\d.]+ s \(3 requests in a row unanswered", about[0])
    assert re.search(r"its [\d,]+ outstanding sample\(s\) are re-dispatched to 1 live node\(s\)$", about[0])
    assert "VALID for these settings" in out
    moved = re.search(rf"^sut: node \S+ \({re.escape(dead)}\) went down at t=[\d.]+ s: ([\d,]+) of its samples "
                      r"re-dispatched to live nodes, none failed$", out, re.M)
    assert moved is not None and int(moved.group(1).replace(",", "")) > 0, out
    others = [line for line in err if "issued /" not in line and not line.startswith("expected length: ")]
    assert len(others) == 1, others  # the node's line is all besides the live line and what the run will take


def test_with_every_node_killed_the_run_ends_at_once_with_one_line_per_node(tmp_path: Path) -> None:
    nodes = [Node(), Node()]
    try:
        rc, err, out = _run_killing(tmp_path, nodes, kill=nodes)
    finally:
        for n in nodes:
            n.stop()
    assert rc == 1, out + "\n".join(err[-20:])
    for n in nodes:
        assert len([line for line in err if f"({n.url}) is down at t=" in line]) == 1, err
    said = [line for line in err + out.splitlines() if "every node is down" in line]
    # one line per node, then at most the engine's first failed sample and its count: never one per sample
    others = [line for line in err if "issued /" not in line and not line.startswith("expected length: ")]
    assert said and len(others) <= len(nodes) + 2, err
