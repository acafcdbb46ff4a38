"""The README's Network-division example, read from README.md so the doc and this test cannot drift
(issue 31 §3: as written it ended INVALID, too fast, on a fast machine): its two `proctor serve node`
commands (on ephemeral ports instead of 8001/8002) and its `proctor run`, which must end VALID on
this machine whatever its speed (`--fit` sizes the Offline query to the nodes)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import threading
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"


def readme_network_commands() -> tuple[list[list[str]], list[str]]:
    """(the `proctor serve node` commands, the `proctor run ... --sut network:...` command) of README.md,
    each split like a shell (comments dropped)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = [shlex.split(line, comments=True) for block in re.findall(r"```bash\n(.*?)```", text, re.S)
             for line in block.replace("\\\n", " ").splitlines()]
    nodes = [w for w in lines if w[:3] == ["proctor", "serve", "node"]]
    runs = [w for w in lines if w[:2] == ["proctor", "run"] and any(x.startswith("network:") for x in w)]
    assert len(nodes) == 2 and len(runs) == 1, (nodes, runs)
    return nodes, runs[0]


def _env() -> dict[str, str]:
    return {**os.environ, "COLUMNS": "250", "PYTHONPATH": str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _start(words: list[str]) -> tuple[subprocess.Popen[str], str, str]:
    """A README node command on an ephemeral port: (process, the README's URL for it, its real URL)."""
    port = words[words.index("--port") + 1]
    words = [*words[:words.index("--port")], "--port", "0", *words[words.index("--port") + 2:]]
    proc = subprocess.Popen([sys.executable, "-m", *words], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, env=_env())
    line: list[str] = []
    reader = threading.Thread(target=lambda: line.append(proc.stderr.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(120)
    found = re.search(r" on (http://127\.0\.0\.1:\d+)$", line[0].strip()) if line else None
    if found is None:
        proc.kill()
        pytest.fail(f"{shlex.join(words)} did not start: {line}")
    return proc, f"http://127.0.0.1:{port}", found.group(1)


def test_the_readme_parses_to_two_nodes_and_one_network_run() -> None:
    nodes, run = readme_network_commands()
    assert [w[w.index("--port") + 1] for w in nodes] == ["8001", "8002"]
    spec = run[run.index("--sut") + 1]
    assert spec == "network:node=http://127.0.0.1:8001,node=http://127.0.0.1:8002"
    assert "--scenario" in run and run[run.index("--scenario") + 1] == "Offline"


def test_the_readme_network_example_ends_valid(tmp_path: Path) -> None:
    nodes, run = readme_network_commands()
    started = [_start(w) for w in nodes]
    try:
        spec = run[run.index("--sut") + 1]
        for _, readme_url, url in started:
            spec = spec.replace(readme_url, url)
        words = [*run[:run.index("--sut")], "--sut", spec, *run[run.index("--sut") + 2:], "--no-report",
                 "-o", str(tmp_path / "logs")]
        res = subprocess.run([sys.executable, "-m", *words], capture_output=True, text=True, env=_env(),
                             cwd=tmp_path, timeout=600)
    finally:
        for proc, _, _ in started:
            proc.kill()
            proc.wait(30)
    assert res.returncode == 0, res.stdout + res.stderr[-3000:]
    verdict = [line for line in res.stdout.splitlines() if "VALID" in line]
    assert verdict and verdict[0].startswith("VALID for these settings; not a submission run: min_duration 10 s")
    for note in (line for line in res.stdout.splitlines() if line.startswith("note: --fit: ")):
        assert re.fullmatch(r"note: --fit: run \d ended before min_duration at [\d.e+]+ samples/s \(asked [\d.e+]+\): "
                            r"made again with offline_expected_qps [\d.e+]+ \(1\.5 x that rate\)", note), note
