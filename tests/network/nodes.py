"""Start `proctor serve node` processes for the network tests (subprocesses: a node attaches the
completion routing that a test run in this process needs for itself)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[2] / "src")
START = "from proctor.serving.node_server import main; main()"


@dataclass
class NodeProcess:
    proc: subprocess.Popen[str]
    url: str
    name: str

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = SRC + os.pathsep + e.get("PYTHONPATH", "")
    return e


def start_node(sut: str, *, prefix: Sequence[str] = (), host: str = "127.0.0.1", wait_s: float = 60) -> NodeProcess:
    """A node on an ephemeral port; its `READY url name` line says where (bounded wait)."""
    proc = subprocess.Popen(
        [*prefix, sys.executable, "-c", START, "--sut", sut, "--host", host, "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env(),
    )
    line: list[str] = []
    reader = threading.Thread(target=lambda: line.append(proc.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(wait_s)
    words = line[0].split() if line else []
    if len(words) != 3 or words[0] != "READY":
        proc.kill()
        err = proc.stderr.read() if proc.stderr else ""  # type: ignore[union-attr]
        pytest.fail(f"node {sut} did not start: {line} {err[-2000:]}")
    return NodeProcess(proc, words[1], words[2])
