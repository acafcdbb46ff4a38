"""Issue 31 §2, walked as a new user: the README's own-SUT file with one mistake each, run with
`proctor run` as a subprocess. Each failure's first verdict line is its true cause, with advice only
where it follows; the first fault is said on stderr at once; every run that wrote logs writes
report.html, which shows the same verdict. Assertions are on exit codes and text, never on time."""

from __future__ import annotations

import html
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
GUARD_S = 240  # a subprocess that runs longer than this is killed (the test then fails)
PERF_ADVICE = ("--expected-latency-ms", "--target-qps", "Increase the target QPS", "--min-queries", "--duration-ms")

# The README's own-SUT file (its QuerySampleResponse line and sleep are the journey's mistake).
SUT = """\
import time

import proctor


class MySUT:
    def __init__(self):
        self.n = 0

    def issue_query(self, samples):
        for s in samples:
            self.n += 1
{body}

    def flush_queries(self):
        pass


def make():
    return MySUT(), proctor.SimpleQSL(1024)
"""
BODIES = {
    "index": "            proctor.query_samples_complete([proctor.QuerySampleResponse(s.index)])",
    "twice": "            proctor.query_samples_complete([proctor.QuerySampleResponse(s.id)])\n"
             "            proctor.query_samples_complete([proctor.QuerySampleResponse(s.id)])",
    "never": "            pass",
    "raises": "            if self.n > 20:\n                raise RuntimeError('model crashed')\n"
              "            proctor.query_samples_complete([proctor.QuerySampleResponse(s.id)])",
}


def _sut(tmp_path: Path, kind: str) -> str:
    (tmp_path / "my_sut.py").write_text(SUT.format(body=BODIES[kind]), encoding="utf-8")
    return "my_sut.py:make"


def _proctor(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC), "PROCTOR_PROGRESS_INTERVAL_S": "0.5"}
    return subprocess.run([sys.executable, "-m", "proctor", *args], capture_output=True, text=True, cwd=tmp_path,
                          env=env, timeout=GUARD_S)


def _verdict(stdout: str) -> list[str]:
    """The verdict's lines: from its first word to the error count."""
    lines = stdout.splitlines()
    start = next(k for k, line in enumerate(lines) if re.match(r"(VALID|INVALID|INCOMPLETE|FAILED)\b", line))
    return lines[start:]


def _report_shows(out: Path, first: str) -> None:
    """report.html was written and its headline is the verdict's first line."""
    page = (out / "report.html").read_text(encoding="utf-8")
    word, _, cause = first.partition(": ")
    assert f'data-verdict="{word}"' in page
    assert html.escape(cause, quote=True) in page or html.escape(cause, quote=False) in page


def test_completing_with_sample_index_stops_within_seconds_and_says_so(tmp_path):
    r = _proctor(tmp_path, "run", "--sut", _sut(tmp_path, "index"), "--scenario", "SingleStream",
                 "--duration-ms", "500", "-o", "out")
    assert r.returncode == 1, r.stdout + r.stderr
    first, *more = _verdict(r.stdout)
    assert first.startswith("INCOMPLETE: the SUT completed 1 response id(s) that were never issued (first: ")
    assert "is the QSL index of an issued sample: sample.index where sample.id belongs" in first
    assert "QuerySampleResponse(sample.id)" in first
    assert any("the run stopped after" in line and "ids never issued" in line for line in more)
    assert not any(a in line for line in [first, *more] for a in PERF_ADVICE)  # the checks that follow: facts only
    said = [line for line in r.stderr.splitlines() if line.startswith("warning: the SUT completed response id")]
    assert len(said) == 1 and "no sample was issued with that id" in said[0]
    assert "Traceback" not in r.stderr
    _report_shows(tmp_path / "out", first)


def test_completing_each_sample_twice_is_the_first_line_not_min_duration(tmp_path):
    r = _proctor(tmp_path, "run", "--sut", _sut(tmp_path, "twice"), "--scenario", "SingleStream",
                 "--duration-ms", "300", "-o", "out")
    assert r.returncode == 1, r.stdout + r.stderr
    first, *more = _verdict(r.stdout)
    m = re.match(r"INVALID: the SUT completed (\d+) sample\(s\) twice \(first: response id \d+\): complete each "
                 r"sample exactly once", first)
    assert m, first
    n = int(m.group(1))
    errors = re.search(r"^(\d+) error\(s\) in ", r.stdout, re.M)
    assert errors and int(errors.group(1)) >= n  # each second completion is a logged error
    assert not any(a in line for line in [first, *more] for a in PERF_ADVICE)
    said = [line for line in r.stderr.splitlines() if "twice" in line]
    assert said[0].startswith("warning: the SUT completed sample ") and said[0].endswith("later ones are counted")
    assert f"warning: in all, the SUT completed {n} sample(s) twice" in r.stderr
    _report_shows(tmp_path / "out", first)


def test_a_sut_that_never_completes_is_said_within_seconds_with_what_to_check(tmp_path):
    r = _proctor(tmp_path, "run", "--sut", _sut(tmp_path, "never"), "--scenario", "SingleStream",
                 "--duration-ms", "500", "--timeout-s", "5", "-o", "out")
    assert r.returncode == 1, r.stdout + r.stderr
    err = r.stderr.splitlines()
    waiting = [line for line in err if line.startswith("warning: waiting for the SUT: nothing has completed in 3 s")]
    assert len(waiting) == 1, r.stderr
    assert "proctor.query_samples_complete" in waiting[0] and "sample.id" in waiting[0]
    assert "--timeout-s 5 s" in waiting[0]
    progress = [line for line in err if line.startswith("PerformanceOnly")]
    assert progress and not any(re.search(r"ETA \d", line) for line in progress)  # no ETA that only grows
    assert any("waiting for the SUT: nothing completed in" in line for line in progress)
    first, *_ = _verdict(r.stdout)
    assert first.startswith("INCOMPLETE: the SUT did not complete 1 of 1 issued samples: none completed in ")
    assert "proctor gives up after --timeout-s 5 s" in first and "QuerySamplesComplete" in first
    _report_shows(tmp_path / "out", first)


def test_a_sut_that_raises_is_judged_and_reported(tmp_path):
    r = _proctor(tmp_path, "--debug", "run", "--sut", _sut(tmp_path, "raises"), "--scenario", "SingleStream",
                 "--duration-ms", "500", "-o", "out")
    assert r.returncode == 1, r.stdout + r.stderr
    first, *more = _verdict(r.stdout)
    assert first.startswith("INCOMPLETE: the SUT raised RuntimeError: model crashed while queries were issued (")
    assert "proctor --debug run" in first
    assert not any(a in line for line in [first, *more] for a in PERF_ADVICE)
    assert "Traceback" in r.stderr and "raise RuntimeError('model crashed')" in r.stderr  # --debug: the SUT's
    assert "queries / samples" in r.stdout  # the table, as for any run
    _report_shows(tmp_path / "out", first)
    for name in ("summary", "detail"):
        assert (tmp_path / "out" / f"mlperf_log_{name}.txt").is_file()


def test_a_raising_sut_in_a_sweep_is_advised_with_the_sweep_command(tmp_path):
    """The traceback advice names the command that ran (`proctor --debug sweep ...`), not `run`."""
    _proctor(tmp_path, "sweep", "--sut", _sut(tmp_path, "raises"), "--concurrency", "1", "--duration-ms", "300",
             "-o", "out")
    verdict = (tmp_path / "out" / "concurrency-1" / "proctor_verdict.json").read_text()
    assert "`proctor --debug sweep ...` shows its traceback" in verdict
    assert "proctor --debug run" not in verdict


def test_without_debug_a_raising_sut_shows_no_traceback(tmp_path):
    r = _proctor(tmp_path, "run", "--sut", _sut(tmp_path, "raises"), "--scenario", "SingleStream",
                 "--duration-ms", "500", "-o", "out", "--no-report")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert _verdict(r.stdout)[0].startswith("INCOMPLETE: the SUT raised RuntimeError: model crashed")
    assert not (tmp_path / "out" / "report.html").exists()


def test_timeout_default_is_in_the_help(tmp_path):
    r = _proctor(tmp_path, "run", "--help")
    text = " ".join(r.stdout.split())
    assert "--timeout-s" in text and "Default: 60 s without a completion" in text


def test_an_interrupted_run_writes_its_report(tmp_path):
    out = tmp_path / "logs"
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "proctor", "run", "-s", "Offline", "--duration-ms", "60000",
         "--sut", "synthetic:service_us=200000,workers=2", "-o", str(out), "--drain-s", "0.2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True, cwd=tmp_path,
    )
    try:
        detail = out / "mlperf_log_detail.txt"
        deadline = time.monotonic() + GUARD_S
        while time.monotonic() < deadline and proc.poll() is None:
            if detail.is_file() and "Starting performance mode" in detail.read_text(errors="replace"):
                break
            time.sleep(0.05)
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=GUARD_S)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "interrupted" in page
    assert "data:image/png" not in page and 'id="page-note"' in page  # no figure delays the stop; it says so
    assert any(line.startswith("interrupted: partial logs and report.html in") for line in stderr.splitlines())


@pytest.mark.parametrize("model", ["resnet50", "digits"])
def test_test06_on_a_benchmark_that_is_not_an_llm_is_exit_2(tmp_path, model):
    r = _proctor(tmp_path, "audit", "TEST06", "--sut", "digits", "--model", model, "--scenario", "Offline",
                 "--quick", "-o", "aud")
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0] == (f"error: TEST06 does not apply to {model}: it checks an LLM's token outputs (first token, "
                        f"EOS, token counts) and {model} is not an LLM benchmark; its audits: TEST01, TEST04 "
                        "(`proctor audit all` runs them)")
    assert not (tmp_path / "aud").exists()  # refused before anything ran
