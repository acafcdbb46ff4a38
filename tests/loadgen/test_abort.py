"""`abort`: a SUT that cannot go on (its endpoint stopped answering) ends the run incomplete at once,
instead of the engine waiting out the stall limit for samples that will never come back."""

from __future__ import annotations

import pytest

from proctor.errors import RunError
from proctor.loadgen import completion
from proctor.loadgen.engine import run_test
from proctor.loadgen.settings import LogOutputSettings, LogSettings, TestSettings
from proctor.loadgen.types import Scenario, TestMode
from proctor.suts.synthetic import InMemoryQSL

REASON = "test SUT: the endpoint stopped answering at 2026-01-01T00:00:00.000Z"


class AbortingSUT:
    """Fails the first sample it is given, then aborts the run; answers nothing else."""

    name = "aborting"

    def __init__(self, abort: bool) -> None:
        self.abort = abort

    def issue_query(self, samples):
        completion.fail_samples([samples[0].id], "connect: refused")
        if self.abort:
            assert completion.ForwardingSink().abort(REASON)

    def flush_queries(self):
        pass


def _run(tmp_path, sut, timeout_s):
    settings = TestSettings(scenario=Scenario.OFFLINE, mode=TestMode.PERFORMANCE_ONLY, min_duration_ms=100,
                            min_query_count=1, offline_expected_qps=1000.0)
    logs = LogSettings(log_output=LogOutputSettings(outdir=str(tmp_path)), enable_trace=False)
    return run_test(sut, InMemoryQSL(64, 64), settings, logs, timeout_s=timeout_s)


def test_an_aborted_offline_run_ends_incomplete_with_the_reason(tmp_path):
    out = _run(tmp_path, AbortingSUT(abort=True), timeout_s=30)  # ended by the abort, not the limit
    n = out.records.n_samples_issued
    assert out.incomplete and out.records.incomplete_reason == f"{REASON} ({n - 1} of {n} issued samples open)"
    assert not out.valid and out.result.failed_samples == 1
    summary = (tmp_path / "mlperf_log_summary.txt").read_text()
    assert REASON in summary and "INVALID" in summary
    assert REASON in (tmp_path / "mlperf_log_detail.txt").read_text()


def test_without_an_abort_the_same_run_waits_for_its_limit(tmp_path):
    out = _run(tmp_path, AbortingSUT(abort=False), timeout_s=0.5)
    assert out.incomplete and "did not complete" in out.records.incomplete_reason


def test_abort_with_no_run_in_progress_is_refused():
    assert completion.ForwardingSink().abort(REASON) is False


class FailAllThenAbortSUT:
    """Fails every sample inside the issue call (as a client whose connects are refused at once),
    and stops the run at the fifth: when issuing stops, no sample is left open."""

    name = "fail-all"

    def __init__(self) -> None:
        self.failed = 0

    def issue_query(self, samples):
        completion.fail_samples([s.id for s in samples], "connect: refused")
        self.failed += len(samples)
        if self.failed >= 5:
            completion.ForwardingSink().abort(REASON)

    def flush_queries(self):
        pass


def test_an_abort_with_nothing_left_open_still_ends_the_run_incomplete(tmp_path):
    """The abort was lost when every issued sample had already settled: a Server run scheduled for
    2,000 queries then read as whole, ending INVALID for its failed samples instead of INCOMPLETE
    with the SUT's reason (tests/llm/test_endpoint_down.py met it as a flake under load)."""
    sut = FailAllThenAbortSUT()
    out = _server_run(tmp_path, sut)
    n = out.records.n_samples_issued
    assert n < 2000 and sut.failed == n  # issuing stopped at the abort, with every issued sample failed
    assert out.incomplete and out.records.incomplete_reason == f"{REASON} (0 of {n} issued samples open)"
    assert not out.valid


class AbortThenRaiseSUT:
    """Fails its first query; in the second, stops the run and raises: the order a loaded host gave
    the openai SUT (its tally's abort on one thread, then EndpointDown from the engine's next issue
    on another, before the issuer looked at the stop). `message`: what it raises with."""

    name = "abort-then-raise"

    def __init__(self, message: str) -> None:
        self.message = message
        self.calls = 0

    def issue_query(self, samples):
        self.calls += 1
        completion.fail_samples([s.id for s in samples], "connect: refused")
        if self.calls == 2:
            assert completion.ForwardingSink().abort(REASON)
            raise ConnectionError(self.message)

    def flush_queries(self):
        pass


def _server_run(tmp_path, sut):
    """A Server run scheduled for 2,000 queries at 1,000 qps: long enough that only a stop ends it early."""
    settings = TestSettings(scenario=Scenario.SERVER, mode=TestMode.PERFORMANCE_ONLY, min_duration_ms=100,
                            min_query_count=2000, server_target_qps=1000.0, server_target_latency_ns=10**9)
    logs = LogSettings(log_output=LogOutputSettings(outdir=str(tmp_path)), enable_trace=False)
    return run_test(sut, InMemoryQSL(64, 64), settings, logs, timeout_s=30)


@pytest.mark.parametrize("message", [REASON, "socket closed"])
def test_a_sut_that_raises_after_its_abort_ends_the_run_as_the_abort_does(tmp_path, message):
    """The stop is the cause, the exception its consequence: the run ends incomplete with the SUT's
    reason and returns, as when the issuer sees the stop first (it raised RunError, so which of the
    two a run gave depended on the threads' timing: tests/llm/test_endpoint_down.py flaked on it)."""
    sut = AbortThenRaiseSUT(message)
    out = _server_run(tmp_path, sut)
    n = out.records.n_samples_issued
    assert out.incomplete and not out.valid and n < 2000
    assert out.records.incomplete_reason.startswith(REASON + " (")
    detail = (tmp_path / "mlperf_log_detail.txt").read_text()
    assert REASON in detail and "INVALID" in (tmp_path / "mlperf_log_summary.txt").read_text()
    # an exception that says something else than the stop is kept in the log, not dropped
    assert ("after it stopped the run" in detail) is (message != REASON)
    if message != REASON:
        assert "ConnectionError: socket closed" in detail


def test_a_sut_that_raises_without_an_abort_is_still_a_run_error(tmp_path):
    class RaisingSUT(AbortThenRaiseSUT):
        def issue_query(self, samples):
            raise ConnectionError("socket closed")

    with pytest.raises(RunError, match="the SUT raised ConnectionError") as err:
        _server_run(tmp_path, RaisingSUT("x"))
    assert err.value.outcome is not None and err.value.outcome.incomplete
