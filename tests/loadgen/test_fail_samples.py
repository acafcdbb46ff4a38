"""`fail_samples`: a sample the SUT could not answer ends the wait but is never a result."""

from __future__ import annotations

import numpy as np

from proctor.loadgen import completion
from proctor.loadgen.engine import run_test
from proctor.loadgen.logs.reader import read_detail
from proctor.loadgen.settings import LogOutputSettings, LogSettings, TestSettings
from proctor.loadgen.types import QuerySampleResponse, Scenario, TestMode
from proctor.suts.synthetic import InMemoryQSL


class HalfFailingSUT:
    """Fails every sample whose QSL index is odd, answers the others at once."""

    name = "half-failing"

    def issue_query(self, samples):
        ok = [s for s in samples if s.index % 2 == 0]
        bad = [s.id for s in samples if s.index % 2 == 1]
        if bad:
            completion.fail_samples(bad, "HTTP 500 from http://127.0.0.1:9/v1/completions")
        completion.query_samples_complete([QuerySampleResponse(s.id, np.int64(s.index).tobytes()) for s in ok])

    def flush_queries(self):
        pass


def _run(tmp_path, scenario):
    settings = TestSettings(
        scenario=scenario, mode=TestMode.PERFORMANCE_ONLY, min_duration_ms=30, min_query_count=20,
        server_target_qps=2000.0, offline_expected_qps=2000.0, single_stream_expected_latency_ns=100_000,
    )
    logs = LogSettings(log_output=LogOutputSettings(outdir=str(tmp_path)), enable_trace=False)
    return run_test(HalfFailingSUT(), InMemoryQSL(64, 64), settings, logs)


def test_failed_samples_are_left_out_and_make_the_run_invalid(tmp_path):
    out = _run(tmp_path, Scenario.SERVER)
    r = out.result
    assert r is not None and r.failed_samples > 0
    issued = r.failed_samples + r.sample_count
    assert r.sample_count > 0 and abs(r.failed_samples - r.sample_count) <= 0.3 * issued
    assert not out.valid and not r.valid
    assert any("failed" in reason for reason in r.reasons)
    summary = (tmp_path / "mlperf_log_summary.txt").read_text()
    assert "Result is : INVALID" in summary and f"({r.failed_samples} failed)" in summary
    errors = read_detail(tmp_path / "mlperf_log_detail.txt").errors
    assert any("HTTP 500" in str(e) for e in errors)


def test_offline_query_with_failures_still_ends(tmp_path):
    out = _run(tmp_path, Scenario.OFFLINE)
    assert out.result is not None and out.result.failed_samples > 0
    assert not out.valid
