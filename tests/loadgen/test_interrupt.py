"""Ctrl-C, hung and failing SUTs: the run ends promptly with its verdict and logs, faults counted."""

from __future__ import annotations

import _thread
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from io import StringIO
from pathlib import Path

import numpy as np
import pytest

from proctor.cli.live_progress import LiveProgress
from proctor.errors import ConfigError, RunError
from proctor.loadgen import completion
from proctor.loadgen.engine import run_test
from proctor.loadgen.logs.reader import read_detail
from proctor.loadgen.logs.summary import INCOMPLETE_MARK
from proctor.loadgen.settings import LogOutputSettings, LogSettings, TestSettings
from proctor.loadgen.types import QuerySampleResponse, Scenario, TestMode
from proctor.suts import synthetic
from proctor.suts.batching import DynamicBatcher
from proctor.suts.synthetic import InMemoryQSL, SyntheticParams, SyntheticSUT

SRC = Path(__file__).resolve().parents[2] / "src"
GUARD_S = 120  # hang guard for subprocesses; never a measured duration


def go(tmp_path, sut, scenario=Scenario.OFFLINE, **kw):
    ts = TestSettings(
        scenario=scenario,
        mode=TestMode.PERFORMANCE_ONLY,
        min_duration_ms=0,
        min_query_count=64,
        offline_expected_qps=1.0,
        single_stream_expected_latency_ns=1e5,
    )
    return run_test(
        sut, InMemoryQSL(64, 64), ts, LogSettings(log_output=LogOutputSettings(outdir=str(tmp_path))),
        audit_config=None, **kw,
    )


def test_cli_ctrl_c_exits_130_with_logs_marked_incomplete(tmp_path):
    out = tmp_path / "logs"
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "proctor", "run", "-s", "Offline", "--duration-ms", "60000", "--no-trace",
         "--sut", "synthetic:service_us=200000,workers=2", "-o", str(out), "--drain-s", "0.5"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True,
    )
    try:
        detail = out / "mlperf_log_detail.txt"
        deadline = time.monotonic() + GUARD_S
        while time.monotonic() < deadline and proc.poll() is None:
            if detail.is_file() and "Starting performance mode" in detail.read_text(errors="replace"):
                break
            time.sleep(0.05)
        time.sleep(1.5)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=GUARD_S)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    summary = (out / "mlperf_log_summary.txt").read_text()
    assert f"{INCOMPLETE_MARK} interrupted" in summary
    assert "No errors encountered" not in summary
    assert "interrupted" in read_detail(detail).require("proctor_run_incomplete")
    assert "Traceback" not in stderr
    # a pipe gets whole lines: the progress line ends before the interrupted note starts
    assert any(line.startswith("interrupted") for line in stderr.splitlines()), stderr


def test_interrupt_while_the_sut_holds_work_drains_briefly_then_reraises(tmp_path):
    sut = SyntheticSUT(SyntheticParams(service_us=1e8, workers=1))  # 100 s per batch: never done
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            go(tmp_path, sut, drain_s=0.1, timeout_s=GUARD_S)
    finally:
        timer.cancel()
        sut.close()
    assert not any(t.is_alive() for t in sut._threads)  # close() woke the sleeping worker
    summary = (tmp_path / "mlperf_log_summary.txt").read_text()
    assert f"{INCOMPLETE_MARK} interrupted" in summary
    errors = [str(e.value) for e in read_detail(tmp_path / "mlperf_log_detail.txt").errors]
    # none completed in the 0.3 s before the signal: the drain is not waited for, and the line says why
    assert any("not drained: " in e and "samples open, none completed in" in e for e in errors), errors
    assert completion.active() is None


def test_a_sut_raising_system_exit_is_an_error_not_a_clean_run(tmp_path):
    class Exits:
        name = "exits"

        def issue_query(self, samples):
            raise SystemExit(3)

        def flush_queries(self):
            pass

    with pytest.raises(RunError, match="SystemExit") as info:
        go(tmp_path, Exits())
    assert isinstance(info.value.__cause__, SystemExit)
    summary = (tmp_path / "mlperf_log_summary.txt").read_text()
    assert "No errors encountered" not in summary and INCOMPLETE_MARK in summary
    assert read_detail(tmp_path / "mlperf_log_detail.txt").require("num_errors") >= 1


class FailingBatchSUT:
    """A batcher whose model raises on every batch (as a SUT whose samples were unloaded)."""

    name = "failing-batches"

    def __init__(self, exc_factory):
        self.exc_factory = exc_factory
        self.batcher = DynamicBatcher(self._process, max_batch=4, workers=2, name="failing")

    def _process(self, indices):
        raise self.exc_factory(indices)

    def issue_query_arrays(self, ids, indices):
        self.batcher.submit(ids, indices)

    def issue_query(self, samples):
        self.batcher.submit([s.id for s in samples], [s.index for s in samples])

    def flush_queries(self):
        self.batcher.flush()


def test_many_failing_batches_give_one_traceback_and_counts(tmp_path, caplog):
    sut = FailingBatchSUT(lambda idx: RuntimeError(f"sample {int(idx[0])} not loaded"))
    with caplog.at_level(logging.ERROR, logger="proctor.suts.batching"):
        out = go(tmp_path, sut)  # 64 samples in batches of 4: 16 failures, one kind per message head
        sut.batcher.close(raise_error=False)
    assert not out.incomplete and out.sut_failures == 16
    tracebacks = [r for r in caplog.records if r.exc_info]
    assert len(tracebacks) == 1
    detail = read_detail(out.log_paths["detail"])
    texts = [str(e.value) for e in detail.errors]
    assert all("SUT failure" in t for t in texts) and len(texts) == out.errors
    assert out.errors <= 2 * 16 and out.result is not None  # the run ended with its result
    assert "ERRORS encountered" in out.log_paths["summary"].read_text()


def test_one_kind_of_failure_is_counted_in_one_line(tmp_path, caplog):
    sut = FailingBatchSUT(lambda idx: RuntimeError("model exploded"))
    with caplog.at_level(logging.ERROR, logger="proctor.suts.batching"):
        out = go(tmp_path, sut)
        sut.batcher.close(raise_error=False)
    texts = [str(e.value) for e in read_detail(out.log_paths["detail"]).errors]
    assert out.sut_failures == 16 and out.errors == 2
    assert "RuntimeError: model exploded" in texts[0]
    assert "repeated 15 more time(s): RuntimeError: model exploded" in texts[1]
    assert len([r for r in caplog.records if r.name == "proctor.suts.batching"]) == 1


def test_hung_sut_is_reported_with_its_queries_and_closes_promptly(tmp_path):
    sut = SyntheticSUT(SyntheticParams(service_us=1e8, workers=2))
    try:
        out = go(tmp_path, sut, scenario=Scenario.SINGLE_STREAM, timeout_s=0.2)
    finally:
        sut.close(timeout=GUARD_S)
    assert out.incomplete and "first outstanding: queries [0]" in out.incomplete_reason
    assert not any(t.is_alive() for t in sut._threads)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-1", "1e300"])
def test_synthetic_service_time_must_be_finite(value):
    with pytest.raises(ConfigError, match="key 'service_us'"):
        synthetic.from_params(service_us=value)


def test_synthetic_sigma_must_be_finite():
    with pytest.raises(ConfigError, match="key 'sigma'"):
        synthetic.from_params(sigma="nan", dist="lognormal")


@pytest.mark.parametrize("kw", [{"drain_s": float("nan")}, {"drain_s": -1.0}, {"timeout_s": float("inf")}])
def test_bad_run_limits_are_refused(tmp_path, kw):
    with pytest.raises(ConfigError, match=f"key '{next(iter(kw))}'"):
        go(tmp_path, SyntheticSUT(SyntheticParams(workers=0)), **kw)


def test_progress_in_a_pipe_prints_one_whole_line_per_phase(tmp_path):
    from rich.console import Console

    buf = StringIO()
    progress = LiveProgress(Console(file=buf, force_terminal=False, width=200))
    out = go(tmp_path, SyntheticSUT(SyntheticParams(workers=0)), progress=progress)
    text = buf.getvalue()
    assert text.endswith("\n")
    lines = text.splitlines()  # the phase's expected length said before it starts, then its one progress line
    assert len(lines) == 2 and lines[0].startswith("expected length: "), lines
    assert f"{out.records.n_samples_issued} issued" in lines[1]


def test_fault_counter_keeps_one_line_per_kind():
    seen = []
    faults = completion.FaultCounter(seen.append)
    for k in range(5):
        faults.report(ValueError(f"bad {'ab'[k % 2]} at sample {k}\nsecond line"))
    assert faults.total == 5 and len(seen) == 2
    assert "bad a at sample 0" in seen[0]  # the first of a kind is shown as it was
    assert faults.summary_lines() == [  # a kind ignores numbers (sample ids, ports, counts)
        "SUT failure repeated 2 more time(s): ValueError: bad a at sample N",
        "SUT failure repeated 1 more time(s): ValueError: bad b at sample N",
    ]
    assert completion.failure_kind("x" * 500).endswith("...")
    assert np.isscalar(faults.total)


def test_ctrl_c_during_find_peak_ends_the_search_with_logs(tmp_path):
    class InterruptAt:
        name = "interrupt-at"

        def __init__(self, n):
            self.n = n

        def issue_query(self, samples):
            self.n -= 1
            if self.n < 0:
                raise KeyboardInterrupt
            completion.query_samples_complete([QuerySampleResponse(s.id) for s in samples])

        def flush_queries(self):
            pass

    ts = TestSettings(
        scenario=Scenario.SERVER, mode=TestMode.FIND_PEAK_PERFORMANCE, min_duration_ms=0,
        min_query_count=20, server_target_qps=1000.0,
    )
    with pytest.raises(KeyboardInterrupt):
        run_test(
            InterruptAt(30), InMemoryQSL(64, 64), ts,
            LogSettings(log_output=LogOutputSettings(outdir=str(tmp_path))), audit_config=None, drain_s=0.1,
        )
    assert f"{INCOMPLETE_MARK} interrupted" in (tmp_path / "mlperf_log_summary.txt").read_text()
    assert completion.active() is None


# --- issue 33 §4: a stop that does not wait on what cannot finish --------------------------------------


class _HoldsMost:
    """An array SUT completing the first `done` samples of each issue call at once and holding the rest."""

    name = "holds-most"

    def __init__(self, done: int) -> None:
        self.done = done

    def issue_query(self, samples: object) -> None:
        raise AssertionError("the array path is used")

    def issue_query_arrays(self, ids: np.ndarray, indices: np.ndarray) -> None:
        completion.complete_arrays(ids[: self.done].copy())

    def flush_queries(self) -> None:
        pass


def _interrupted(tmp_path: Path, sut: object, samples: int, drain_s: float) -> list[str]:
    ts = TestSettings(scenario=Scenario.OFFLINE, mode=TestMode.PERFORMANCE_ONLY, min_duration_ms=0,
                      min_query_count=samples, offline_expected_qps=1.0)
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            run_test(sut, InMemoryQSL(64, 64), ts, LogSettings(log_output=LogOutputSettings(outdir=str(tmp_path))),
                     audit_config=None, drain_s=drain_s, timeout_s=GUARD_S)
    finally:
        timer.cancel()
    assert f"{INCOMPLETE_MARK} interrupted" in (tmp_path / "mlperf_log_summary.txt").read_text()
    return [str(e.value) for e in read_detail(tmp_path / "mlperf_log_detail.txt").errors]


def test_a_sut_holding_far_more_than_it_completes_per_drain_is_not_waited_for(tmp_path):
    """10 of 100,000 samples completed at once, the rest held: at that rate the drain (60 s here)
    could never end the query, so the stop does not wait for it and says why."""
    errors = _interrupted(tmp_path, _HoldsMost(10), 100_000, drain_s=60.0)
    line = next(e for e in errors if e.startswith("run interrupted"))
    assert "not drained: 99990 samples open" in line and "s of work at the SUT's rate so far" in line, line
    from proctor.loadgen.logs.samples import read_samples

    got = read_samples(tmp_path / "mlperf_log_samples.bin")  # the completed ones, read up to the last
    assert got.n == 10 and got.seq.tolist() == list(range(10))


def test_a_sut_holding_little_gets_its_drain(tmp_path):
    """All but 5 of 2,000 completed: the 5 could complete within the drain, so it is waited for."""
    errors = _interrupted(tmp_path, _HoldsMost(1995), 2000, drain_s=0.1)
    line = next(e for e in errors if e.startswith("run interrupted"))
    assert "not drained after 0.1 s" in line, line


class _StopsWhileLoading(InMemoryQSL):
    """A QSL whose loading is where the stop lands (before any issuing): deterministic, no timer."""

    def load_samples(self, indices: list[int]) -> None:
        raise KeyboardInterrupt


def test_a_stop_outside_the_timed_issuing_is_an_error_in_the_summary(tmp_path):
    """Stopped while setting up a phase: the summary is marked incomplete and never says "No errors
    encountered" (the phase's own handler, which logs the error, never ran)."""
    ts = TestSettings(scenario=Scenario.OFFLINE, mode=TestMode.PERFORMANCE_ONLY, min_duration_ms=0,
                      min_query_count=64, offline_expected_qps=1.0)
    with pytest.raises(KeyboardInterrupt):
        run_test(SyntheticSUT(SyntheticParams(workers=0)), _StopsWhileLoading(64, 64), ts,
                 LogSettings(log_output=LogOutputSettings(outdir=str(tmp_path))), audit_config=None,
                 timeout_s=GUARD_S)
    summary = (tmp_path / "mlperf_log_summary.txt").read_text()
    assert f"{INCOMPLETE_MARK} interrupted" in summary and "No errors encountered" not in summary, summary
    errors = [str(e.value) for e in read_detail(tmp_path / "mlperf_log_detail.txt").errors]
    assert sum("outside the timed issuing" in e for e in errors) == 1, errors
