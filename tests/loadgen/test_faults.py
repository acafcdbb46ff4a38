"""Runs that do not finish: a raising SUT, a SUT that never completes, Ctrl-C. The logs must stay."""

from __future__ import annotations

import numpy as np
import orjson
import pytest

from proctor.errors import RunError
from proctor.loadgen import completion
from proctor.loadgen.clock import ManualClock
from proctor.loadgen.engine import run_test
from proctor.loadgen.logs.reader import read_detail
from proctor.loadgen.logs.summary import INCOMPLETE_MARK
from proctor.loadgen.settings import LogOutputSettings, LogSettings, TestSettings
from proctor.loadgen.types import QuerySampleResponse, Scenario, TestMode
from proctor.suts.synthetic import InMemoryQSL


class FaultySUT:
    """Completes inline until query `fail_at`, where it raises `exc` (or stops completing, if None)."""

    name = "faulty-sut"

    def __init__(self, fail_at: int, exc: BaseException | None) -> None:
        self.fail_at, self.exc, self.issued = fail_at, exc, 0

    def issue_query(self, samples):
        self.issued += 1
        if self.issued > self.fail_at:
            if self.exc is not None:
                raise self.exc
            return  # swallowed: never completed
        completion.query_samples_complete([QuerySampleResponse(s.id, b"\x01") for s in samples])

    def flush_queries(self):
        pass


def go(tmp_path, sut, scenario=Scenario.SINGLE_STREAM, mode=TestMode.PERFORMANCE_ONLY, **kw):
    ts = TestSettings(
        scenario=scenario,
        mode=mode,
        min_duration_ms=20,
        min_query_count=50,
        single_stream_expected_latency_ns=1e5,
        server_target_qps=2000.0,
    )
    return run_test(
        sut,
        InMemoryQSL(64, 16),
        ts,
        LogSettings(log_output=LogOutputSettings(outdir=str(tmp_path))),
        audit_config=None,
        **kw,
    )


def test_sut_exception_stops_the_run_and_keeps_the_logs(tmp_path):
    boom = ValueError("model exploded")
    with pytest.raises(RunError, match="model exploded") as info:
        go(tmp_path, FaultySUT(fail_at=5, exc=boom))
    assert info.value.__cause__ is boom  # the SUT's traceback is chained
    detail = read_detail(tmp_path / "mlperf_log_detail.txt")
    assert any("model exploded" in str(e.value) and "5 queries" in str(e.value) for e in detail.errors)
    assert detail.require("result_query_count") == 5  # what ran before the fault is measured
    assert detail.require("proctor_run_incomplete").startswith("the SUT raised ValueError")
    summary = (tmp_path / "mlperf_log_summary.txt").read_text()
    assert INCOMPLETE_MARK in summary and "Result is : INVALID" in summary
    assert orjson.loads((tmp_path / "mlperf_log_accuracy.json").read_bytes()) == []
    trace = orjson.loads((tmp_path / "mlperf_log_trace.json").read_bytes())  # still valid JSON
    assert trace["traceEvents"][-1] == {"name": "LastTrace"}
    assert completion.active() is None  # the slot is free for the next run


def test_closed_loop_sut_that_never_completes_times_out(tmp_path):
    out = go(tmp_path, FaultySUT(fail_at=3, exc=None), timeout_s=0.2)
    assert out.incomplete and not out.valid
    assert out.issue_stop_reason == "timeout"
    assert out.records.n_queries_issued == 4
    assert "did not complete 1 of 4 issued samples" in out.incomplete_reason
    assert "first outstanding: queries [3], response ids [" in out.incomplete_reason
    summary = out.log_paths["summary"].read_text()
    assert INCOMPLETE_MARK in summary and "did not complete 1 of 4" in summary


def test_server_sut_that_never_completes_names_the_outstanding_queries(tmp_path):
    out = go(
        tmp_path,
        FaultySUT(fail_at=10, exc=None),
        scenario=Scenario.SERVER,
        clock=ManualClock(),
        timeout_s=0.2,
    )
    n = out.records.n_samples_issued
    assert out.incomplete and n == out.schedule.n_queries
    assert f"did not complete {n - 10} of {n} issued samples" in out.incomplete_reason
    assert "first outstanding: queries [10, 11, 12, 13, 14]" in out.incomplete_reason
    assert out.result is not None and not out.result.complete
    assert out.result.sample_count == 10
    assert read_detail(out.log_paths["detail"]).require("num_errors") == out.errors == 1


def test_accuracy_run_that_stalls_times_out(tmp_path):
    out = go(tmp_path, FaultySUT(fail_at=20, exc=None), mode=TestMode.ACCURACY_ONLY, timeout_s=0.2)
    assert out.incomplete and "did not complete" in out.incomplete_reason
    entries = orjson.loads(out.log_paths["accuracy"].read_bytes())
    assert len(entries) == 16 + 4  # the first set, then 4 of the second


def test_ctrl_c_writes_a_partial_summary_then_reraises(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        go(tmp_path, FaultySUT(fail_at=7, exc=KeyboardInterrupt()))
    summary = (tmp_path / "mlperf_log_summary.txt").read_text()
    assert INCOMPLETE_MARK in summary and "interrupted" in summary
    detail = read_detail(tmp_path / "mlperf_log_detail.txt")
    assert detail.require("result_query_count") == 7
    assert detail.require("result_validity") == "INVALID"
    assert "interrupted" in detail.require("proctor_run_incomplete")
    assert completion.active() is None


def test_a_ctrl_c_while_the_logs_are_written_is_held_until_they_are_whole(tmp_path, monkeypatch):
    """The run had ended: its logs are written whole (the summary's verdict included), then the
    Ctrl-C counts and the caller stops."""
    import os
    import signal

    from proctor.loadgen import engine

    close = engine._close_logs

    def ctrl_c_then_close(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)  # lands in the middle of writing the logs
        close(*args, **kwargs)

    monkeypatch.setattr(engine, "_close_logs", ctrl_c_then_close)
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        go(tmp_path, FaultySUT(fail_at=10**9, exc=None))
    assert signal.getsignal(signal.SIGINT) is before
    summary = (tmp_path / "mlperf_log_summary.txt").read_text()
    assert "Result is" in summary and INCOMPLETE_MARK not in summary  # the whole run, as measured
    assert read_detail(tmp_path / "mlperf_log_detail.txt").require("result_query_count") >= 50


def test_late_completion_after_a_timeout_does_not_touch_the_finished_run(tmp_path):
    class Late(FaultySUT):
        def __init__(self):
            super().__init__(fail_at=2, exc=None)
            self.held = []

        def issue_query(self, samples):
            self.held.extend(s.id for s in samples)
            super().issue_query(samples)

    sut = Late()
    out = go(tmp_path, sut, timeout_s=0.1)
    done_before = out.records.sample_done_ns.copy()
    before = completion.late_completions
    completion.query_samples_complete([QuerySampleResponse(sut.held[-1])])
    assert completion.late_completions == before + 1
    assert np.array_equal(out.records.sample_done_ns, done_before)


def test_unwritable_output_directory_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    ts = TestSettings(scenario=Scenario.OFFLINE)
    with pytest.raises(RunError, match="cannot open log file"):
        run_test(
            FaultySUT(1, None),
            InMemoryQSL(8, 8),
            ts,
            LogSettings(log_output=LogOutputSettings(outdir=str(blocker / "sub"))),
            audit_config=None,
        )


def test_refused_settings_are_logged_and_raised(tmp_path):
    from proctor.errors import ConfigError

    ts = TestSettings(scenario=Scenario.SINGLE_STREAM, single_stream_expected_latency_ns=0)
    with pytest.raises(ConfigError, match="single_stream_expected_latency_ns"):
        run_test(
            FaultySUT(1, None),
            InMemoryQSL(8, 8),
            ts,
            LogSettings(log_output=LogOutputSettings(outdir=str(tmp_path))),
            audit_config=None,
        )
    detail = read_detail(tmp_path / "mlperf_log_detail.txt")
    assert [e.key for e in detail.errors] == ["error_invalid_test_settings"]
    assert "1 ERROR encountered. See detailed log." in (tmp_path / "mlperf_log_summary.txt").read_text()


def test_submission_run_stops_when_its_accuracy_phase_fails(tmp_path):
    sut = FaultySUT(fail_at=2, exc=None)
    out = go(tmp_path, sut, scenario=Scenario.OFFLINE, mode=TestMode.SUBMISSION_RUN, timeout_s=0.1)
    assert out.incomplete and out.result is None and out.records is None
    assert sut.issued == 3  # 2 accuracy sets done, the third stalls
