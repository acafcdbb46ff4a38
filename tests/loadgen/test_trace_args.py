"""The trace's Sample events: the official args unchanged, proctor's args equal to the engine's records."""

from __future__ import annotations

import re

import numpy as np
import orjson

from proctor.loadgen.clock import ManualClock
from proctor.loadgen.engine import run_test
from proctor.loadgen.logs.trace import TraceLog
from proctor.loadgen.records import NOT_SET
from proctor.loadgen.settings import LogOutputSettings, LogSettings, TestSettings
from proctor.loadgen.types import Scenario, TestMode
from proctor.suts.synthetic import InMemoryQSL, SyntheticParams, SyntheticSUT

OFFICIAL = ("sample_seq", "query_seq", "sample_idx", "issue_start_ns", "complete_ns")


def _begins(path) -> list[dict]:
    doc = orjson.loads(path.read_bytes())  # the whole file stays valid JSON
    return [e for e in doc["traceEvents"] if e.get("name") == "Sample" and e["ph"] == "b"]


def test_ts_text_is_the_official_microseconds(tmp_path) -> None:
    rng = np.random.default_rng(1)
    for start, lo in ((0, 0), (10**6, 0)):  # the integer path, then negative times (the float path)
        issue = rng.integers(lo, 10**13, 500)
        done = issue + rng.integers(0, 10**9, 500)
        p = tmp_path / f"t{start}.json"
        with TraceLog(p, start_ns=start, pid=3) as tr:
            tr.samples(np.arange(500), np.arange(500), np.zeros(500, np.int64), issue, done)
        ts = re.findall(r"\"id\":\d+,\"ts\":([-0-9.]+)", p.read_text())
        want = [f"{(v - start) / 1000.0:.3f}" for pair in zip(issue, done, strict=True) for v in pair]
        assert ts == want


def test_token_args_and_rows_without_a_first_token(tmp_path) -> None:
    p = tmp_path / "t.json"
    with TraceLog(p, start_ns=0, pid=1) as tr:
        tr.samples(np.array([0, 1, 2]), np.array([0, 0, 1]), np.array([7, 8, 9]), np.array([100, 100, 300]),
                   np.array([900, 950, 700]), scheduled_ns=np.array([90, 90, 300]),
                   first_token_ns=np.array([150, NOT_SET, 400]), n_tokens=np.array([5, 1, 3]))
    args = [e["args"] for e in _begins(p)]
    assert [tuple(a)[:5] for a in args] == [OFFICIAL] * 3  # the official args first, unchanged
    assert args[0] == {"sample_seq": 0, "query_seq": 0, "sample_idx": 7, "issue_start_ns": 0, "complete_ns": 800,
                       "scheduled_ns": -10, "n_tokens": 5, "first_token_ns": 50}
    assert "first_token_ns" not in args[1] and args[1]["n_tokens"] == 1
    assert args[2]["scheduled_ns"] == 0 and args[2]["first_token_ns"] == 100


def _logs(tmp_path) -> LogSettings:
    return LogSettings(log_output=LogOutputSettings(outdir=str(tmp_path)), enable_trace=True)


def test_llm_server_trace_args_equal_the_records(tmp_path) -> None:
    sut = SyntheticSUT(SyntheticParams(service_us=200, workers=2, tokens=4))
    ts = TestSettings(scenario=Scenario.SERVER, mode=TestMode.PERFORMANCE_ONLY, min_duration_ms=30,
                      min_query_count=100, server_target_qps=2000.0, use_token_latencies=True)
    try:
        out = run_test(sut, InMemoryQSL(64, 16), ts, _logs(tmp_path), audit_config=None)
    finally:
        sut.close()
    rec = out.records
    ev = _begins(out.log_paths["trace"])
    assert len(ev) == out.result.sample_count == rec.n_samples_issued
    seq = np.array([e["args"]["sample_seq"] for e in ev])
    q = np.array([e["args"]["query_seq"] for e in ev])
    issued = rec.query_issued_ns[q]
    assert [e["args"]["scheduled_ns"] for e in ev] == (rec.query_scheduled_ns[q] - issued).tolist()
    assert [e["args"]["first_token_ns"] for e in ev] == (rec.sample_first_token_ns[seq] - issued).tolist()
    assert [e["args"]["n_tokens"] for e in ev] == rec.sample_n_tokens[seq].tolist() == [4] * len(ev)
    assert [e["args"]["complete_ns"] for e in ev] == (rec.sample_done_ns[seq] - issued).tolist()


def test_single_stream_without_tokens_is_scheduled_at_issue(tmp_path) -> None:
    clock = ManualClock()
    ts = TestSettings(scenario=Scenario.SINGLE_STREAM, mode=TestMode.PERFORMANCE_ONLY, min_duration_ms=0,
                      min_query_count=20, single_stream_expected_latency_ns=1e6)
    from test_engine import RecordingSUT

    out = run_test(RecordingSUT(clock, service_ns=5000), InMemoryQSL(64, 16), ts, _logs(tmp_path),
                   audit_config=None, clock=clock)
    ev = _begins(out.log_paths["trace"])
    assert len(ev) == out.records.n_samples_issued
    assert all(e["args"]["scheduled_ns"] == 0 and e["args"]["complete_ns"] == 5000 for e in ev)
    assert all(set(e["args"]) == {*OFFICIAL, "scheduled_ns"} for e in ev)


def test_failed_samples_get_no_event(tmp_path) -> None:
    from test_fail_samples import HalfFailingSUT

    ts = TestSettings(scenario=Scenario.SERVER, mode=TestMode.PERFORMANCE_ONLY, min_duration_ms=30,
                      min_query_count=40, server_target_qps=2000.0)
    out = run_test(HalfFailingSUT(), InMemoryQSL(64, 64), ts, _logs(tmp_path), audit_config=None)
    assert out.result.failed_samples > 0
    ev = _begins(out.log_paths["trace"])
    assert len(ev) == out.result.sample_count == out.records.n_samples_issued - out.result.failed_samples
    assert all(e["args"]["sample_idx"] % 2 == 0 for e in ev)  # the SUT fails the odd indices
