"""A SUT is given up on when it stops completing, not when it is slow: without max_duration the
engine's limit is a wait with no completion, so an Offline query that takes long on a loaded host
still finishes (and its verdict does not depend on the host's load)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from proctor.loadgen import engine
from proctor.loadgen.engine import run_test
from proctor.loadgen.settings import LogOutputSettings, LogSettings, TestSettings
from proctor.loadgen.sink import CompletionSink
from proctor.loadgen.types import QuerySample, QuerySampleResponse, Scenario, TestMode
from proctor.suts.synthetic import InMemoryQSL

STALL_NS = 400_000_000  # the test's floor of the stuck limit (the engine's is 60 s)


class TricklingSUT:
    """Completes one sample every `gap_s` from its own thread; stops for good after `stop_after`."""

    def __init__(self, gap_s: float, stop_after: int | None = None) -> None:
        self.gap_s, self.stop_after = gap_s, stop_after
        self.sink: CompletionSink | None = None
        self.thread: threading.Thread | None = None
        self.done = threading.Event()

    def start(self, sink: CompletionSink) -> None:
        self.sink = sink

    def issue_query(self, samples: list[QuerySample]) -> None:
        ids = [s.id for s in samples]

        def work() -> None:
            for k, i in enumerate(ids):
                if self.done.is_set() or (self.stop_after is not None and k >= self.stop_after):
                    return
                time.sleep(self.gap_s)
                assert self.sink is not None
                self.sink.complete([QuerySampleResponse(i)])

        self.thread = threading.Thread(target=work, daemon=True)
        self.thread.start()

    def flush_queries(self) -> None:
        pass

    def close(self) -> None:
        self.done.set()
        if self.thread is not None:
            self.thread.join(timeout=5)


def offline(n: int) -> TestSettings:
    return TestSettings(
        scenario=Scenario.OFFLINE,
        mode=TestMode.PERFORMANCE_ONLY,
        offline_expected_qps=n,
        min_duration_ms=1000,  # the stuck limit: max(MIN_TIMEOUT_NS, 2 x this) = 2 s
        min_query_count=1,
        max_query_count=1,
    )


@pytest.fixture
def short_stall(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "MIN_TIMEOUT_NS", STALL_NS)


def run(sut: TricklingSUT, tmp_path: Path, n: int) -> engine.RunOutcome:
    logs = LogSettings(log_output=LogOutputSettings(outdir=str(tmp_path)), enable_trace=False)
    try:
        return run_test(sut, InMemoryQSL(n, n), offline(n), logs, audit_config=None)
    finally:
        sut.close()


def test_a_slow_sut_that_keeps_completing_finishes(tmp_path: Path, short_stall: None) -> None:
    """One sample every 0.2 s: about 3.5 s in all, past the 2 s that once ended the run, but never
    2 s without a completion."""
    out = run(TricklingSUT(gap_s=0.2), tmp_path, 16)
    assert not out.incomplete, out.incomplete_reason
    assert out.result is not None and out.result.sample_count >= 16
    assert out.result.samples.max > 2_000_000_000  # the last sample came after the old overall limit
    assert out.errors == 0


def test_a_sut_that_stops_completing_is_given_up_on(tmp_path: Path, short_stall: None) -> None:
    t0 = time.monotonic()
    out = run(TricklingSUT(gap_s=0.02, stop_after=5), tmp_path, 16)
    assert out.incomplete
    issued = out.records.n_samples_issued if out.records is not None else 0
    assert issued >= 16
    assert f"did not complete {issued - 5} of {issued} issued samples" in out.incomplete_reason
    assert time.monotonic() - t0 < 30  # bounded by the stuck limit, not by the SUT
