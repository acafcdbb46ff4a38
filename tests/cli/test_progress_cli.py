"""Issue 23, journey 10: without a terminal `proctor run` prints a plain progress line now and then
(every 10 s by default; PROCTOR_PROGRESS_INTERVAL_S here), with done of total and the ETA, and for
token runs TTFT/TPOT percentiles and tokens/s so far; the table names each warning it counts."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import orjson

from proctor.cli.live_progress import PLAIN_INTERVAL_ENV, PLAIN_INTERVAL_S


def proctor(*args: object, cwd: Path, interval: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    env.pop(PLAIN_INTERVAL_ENV, None)
    if interval is not None:
        env[PLAIN_INTERVAL_ENV] = interval
    return subprocess.run(
        [sys.executable, "-m", "proctor", *map(str, args)], capture_output=True, text=True, cwd=cwd, env=env,
        timeout=300,
    )


def _progress_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("PerformanceOnly")]


def test_default_interval_is_ten_seconds() -> None:
    assert PLAIN_INTERVAL_S == 10.0


def test_without_a_terminal_progress_is_plain_lines(tmp_path: Path) -> None:
    # a Server run lasts its schedule (1.5 s): several 0.2 s intervals, then the phase's final line
    res = proctor("run", "-s", "Server", "--sut", "synthetic:service_us=100,workers=2", "--target-qps", "200",
                  "--duration-ms", "1500", "--no-trace", "--no-report", "-o", tmp_path / "logs",
                  cwd=tmp_path, interval="0.2")
    assert res.returncode in (0, 1), res.stderr
    lines = _progress_lines(res.stderr)
    assert len(lines) >= 3, res.stderr  # at least two timed lines and the final one
    assert "\x1b[" not in res.stderr  # no terminal control: plain lines
    totals = [int(re.search(r"done of ([\d,]+)", line).group(1).replace(",", "")) for line in lines]  # type: ignore[union-attr]
    # the schedule's total; an early-stopping extension, once under way, adds its queries
    assert totals == sorted(totals)
    assert all("ETA " in line for line in lines[:-1]) and "ETA" not in lines[-1]
    done = [int(re.search(r"/ (\d+) done", line).group(1)) for line in lines]  # type: ignore[union-attr]
    assert done == sorted(done) and done[-1] == totals[-1]


def test_a_closed_loop_ends_saying_what_it_issued_not_its_estimate(tmp_path: Path) -> None:
    # a closed loop's total is estimated from the rate while it runs; once it ended at its bounds the
    # final line's total is what was issued (it once read "5 issued / 5 done of 4")
    res = proctor("sweep", "--concurrency", "1,2", "--sut", "synthetic:service_us=300000", "--duration-ms", "1000",
                  "-o", tmp_path / "sweep", cwd=tmp_path, interval="0.2")
    assert res.returncode == 0, res.stderr
    lines = [line for line in (res.stdout + res.stderr).splitlines() if line.startswith("PerformanceOnly")]
    finals = [line for line in lines if "ETA" not in line]  # a point's last line has no time left
    assert len(finals) == 2, lines
    for line in finals:
        m = re.search(r"samples (\d+) issued / (\d+) done of ([\d,]+)", line)
        assert m is not None, line
        issued, done, total = int(m.group(1)), int(m.group(2)), int(m.group(3).replace(",", ""))
        assert issued == done == total >= 4, line


def test_token_run_line_shows_ttft_tpot_and_tokens_per_second(tmp_path: Path) -> None:
    res = proctor("run", "-s", "Server", "--model", "llama2-70b", "--sut", "synthetic:service_us=1000,workers=4,tokens=16",
                  "--target-qps", "100", "--duration-ms", "600", "--no-trace", "--no-report", "-o", tmp_path / "logs",
                  "--json", cwd=tmp_path, interval="0.2")
    assert res.returncode in (0, 1), res.stderr
    final = _progress_lines(res.stderr)[-1]
    assert re.search(r"TTFT p50 [\d.]+ / p99 [\d.]+ ms", final), final
    assert re.search(r"TPOT p50 [\d.]+ / p99 [\d.]+ ms", final), final
    tok_s = int(re.search(r"([\d,]+) tok/s", final).group(1).replace(",", ""))  # type: ignore[union-attr]
    doc = orjson.loads(res.stdout)  # --json: the document alone on stdout, progress on stderr
    nums = doc["numbers"]
    assert nums["token_count"] == 16 * nums["sample_count"] and tok_s > 0
    assert {"ttft_p50_ns", "ttft_p99_ns", "tpot_p50_ns", "tpot_p99_ns", "ttft_target_ns"} <= set(nums)


def test_the_table_names_each_warning_it_counts(tmp_path: Path) -> None:
    (tmp_path / "audit.config").write_text("")  # applied, and the official warning says so
    args = ("run", "-s", "Offline", "--sut", "synthetic:service_us=0,workers=0,batch=4096", "--duration-ms", "0",
            "--min-queries", "2000", "--no-trace", "--no-report", "-o", tmp_path / "logs")
    res = proctor(*args, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert re.search(r"log errors / warnings\s*│ 0 / 1 \(each named below\)", res.stdout), res.stdout
    assert "warning: Found Audit Config file (audit.config)." in res.stdout
    doc = orjson.loads(proctor(*args, "--json", cwd=tmp_path).stdout)
    assert doc["warnings"] == [
        "Found Audit Config file (audit.config). Overriding TestSettings from audit.config file."
    ]
    assert [f["severity"] for f in doc["findings"]] == ["warning"]


def test_an_accuracy_runs_last_line_counts_every_sample_it_scored(tmp_path: Path) -> None:
    # digits' 600 accuracy samples go in loaded sets of 256 (one phase each); the last line once read
    # "88 issued / 88 done of 88" while 600 were scored
    res = proctor("run", "-s", "Offline", "--sut", "digits:backend=numpy", "--model", "digits", "--mode",
                  "AccuracyOnly", "--no-report", "-o", tmp_path / "acc", cwd=tmp_path, interval="0.2")
    assert res.returncode == 0, res.stderr
    lines = [line for line in res.stderr.splitlines() if line.startswith("AccuracyOnly")]
    scored = re.fullmatch(r"accuracy=[\d.]+%, good=\d+, total=(\d+)", (tmp_path / "acc/accuracy.txt").read_text().strip())
    assert scored is not None
    total = int(scored.group(1))
    m = re.search(r"^AccuracyOnly set (\d+)/(\d+) .* queries (\d+)  samples (\d+) issued / (\d+) done of ([\d,]+)",
                  lines[-1])
    assert m is not None, lines
    n_set, n_sets, queries, issued, done, of = (int(g.replace(",", "")) for g in m.groups())
    assert issued == done == of == total == 600 and n_set == n_sets == queries == 3, lines[-1]
    finals = [int(re.search(r"(\d+) done", line).group(1)) for line in lines]  # type: ignore[union-attr]
    assert finals == sorted(finals) and finals[-1] == total  # each set's line counts the sets before it
