"""The engine's large-run paths give what its small-run paths give: chunked issue, streamed
statistics and trace, chunked accuracy-log mask, narrow sample indices (issue 14)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from proctor.loadgen import completion, issuer, results, schedule
from proctor.loadgen import rng as _rng
from proctor.loadgen.clock import ManualClock
from proctor.loadgen.engine import run_test
from proctor.loadgen.normalize import normalize
from proctor.loadgen.records import NOT_SET
from proctor.loadgen.results import LatencyStats, streamed_stats
from proctor.loadgen.settings import LogOutputSettings, LogSettings, TestSettings
from proctor.loadgen.types import Scenario, TestMode
from proctor.suts.synthetic import InMemoryQSL


class RecordingSUT:
    """An array SUT completing inline after advancing a ManualClock by `service_ns` per call."""

    name = "recording-sut"

    def __init__(self, clock: ManualClock, service_ns: int = 0, arrays: bool = True) -> None:
        self.clock, self.service_ns = clock, service_ns
        self.calls: list[tuple[list[int], list[int]]] = []

    def issue_query(self, samples: object) -> None:
        raise AssertionError("the array path is used")

    def issue_query_arrays(self, ids: np.ndarray, indices: np.ndarray) -> None:
        assert ids.dtype == np.int64 and indices.dtype == np.int64
        self.calls.append((ids.tolist(), indices.tolist()))
        self.clock.advance(self.service_ns)
        completion.complete_arrays(ids, None, data=indices.astype("<i8").reshape(-1, 1))

    def flush_queries(self) -> None:
        pass


def _reference_mask(eff: object, n: int, first: int) -> np.ndarray:
    """The mask formula on one whole array (what schedule.accuracy_log_mask computed before chunking)."""
    seq_rng = _rng.MT19937(5489)
    seq_rng.advance(2 * first)
    values = _rng.uniform_real_array(seq_rng, n)
    offset = _rng.uniform_real(_rng.MT19937(eff.accuracy_log_rng_seed))  # type: ignore[attr-defined]
    v = values + offset
    v = np.where(v < 1.0, v, v - 1.0)
    return v <= eff.accuracy_log_probability  # type: ignore[attr-defined,no-any-return]


@pytest.mark.parametrize("prob", [0.0, 0.3, 1.0])
def test_chunked_mask_equals_whole_array_formula(monkeypatch: pytest.MonkeyPatch, prob: float) -> None:
    monkeypatch.setattr(schedule, "MASK_CHUNK", 1000)
    ts = TestSettings(scenario=Scenario.OFFLINE, accuracy_log_probability=prob, accuracy_log_rng_seed=7)
    eff = normalize(ts, 1024, 1024)
    got = schedule.accuracy_log_mask(eff, 4321, first_sample_seq=17)
    assert np.array_equal(got, _reference_mask(eff, 4321, 17))
    assert got.sum() == (0 if prob == 0 else 4321 if prob == 1 else got.sum())


def test_streamed_stats_equal_sorted_stats() -> None:
    gen = np.random.default_rng(1)
    for trial in range(120):
        n = int(gen.integers(1, 3000))
        kind = trial % 4
        if kind == 0:
            done = gen.integers(0, 10**12, n)
        elif kind == 1:
            done = gen.integers(5, 9, n)  # heavy ties
        elif kind == 2:
            done = np.full(n, 7)  # one value
        else:
            done = gen.exponential(1e6, n).astype(np.int64) + 10**9
        done = done.astype(np.int64)
        done[gen.random(n) < 0.1] = NOT_SET
        failed = (gen.random(n) < 0.05).astype(np.uint8) if trial % 3 == 0 else None
        pct = (0.9, 0.99, 0.5, 0.123)[trial % 4]
        ok = done != NOT_SET
        if failed is not None:
            ok &= failed == 0
        want = LatencyStats.of((done[ok] - 123).copy(), pct)
        got = streamed_stats(
            done,
            123,
            failed,
            pct,
            chunk=int(gen.integers(1, 700)),
            bins=int(gen.choice([2, 4, 16, 256])),
            gather=int(gen.integers(1, 50)),
        )
        assert got == want, trial


def test_streamed_stats_mean_wraps_like_int64() -> None:
    done = np.full(4, 2**62, np.int64)
    want = LatencyStats.of(done.copy(), 0.9)  # the int64 sum wraps, as the official accumulator
    assert streamed_stats(done, 0, None, 0.9) == want


def _offline_run(tmp: Path, name: str, samples: int, service_ns: int) -> tuple[dict[str, bytes], list[int]]:
    clock = ManualClock()
    sut = RecordingSUT(clock, service_ns=service_ns, arrays=True)
    ts = TestSettings(
        scenario=Scenario.OFFLINE,
        mode=TestMode.PERFORMANCE_ONLY,
        min_query_count=samples,
        min_duration_ms=0,
        accuracy_log_probability=0.05,
        performance_sample_count_override=300,
    )
    out = tmp / name
    ls = LogSettings(log_output=LogOutputSettings(outdir=str(out)), enable_trace=True)
    run_test(sut, InMemoryQSL(1000, 300), ts, ls, audit_config=None, clock=clock)
    volatile = (b"loadgen_build", b"test_datetime", b"power_", b"get_sut_name_duration", b"file_sha1")
    files = {
        p.name: b"\n".join(line for line in p.read_bytes().splitlines() if not (line.startswith(b'"ts":') or any(k in line for k in volatile)))
        for p in sorted(out.iterdir())
    }
    return files, [len(ids) for ids, _ in sut.calls]


def _same(a: dict[str, bytes], b: dict[str, bytes]) -> None:
    assert a.keys() == b.keys()
    for name in a:
        assert a[name] == b[name], name


def test_streamed_statistics_give_the_same_logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(issuer, "ISSUE_CHUNK", 1000)  # three calls, three completion times
    sorted_path, calls = _offline_run(tmp_path, "sorted", 2500, 1000)
    assert calls == [1000, 1000, 500]  # one query, three issue calls
    monkeypatch.setattr(results, "STREAM_MIN_SAMPLES", 1)
    streamed, _ = _offline_run(tmp_path, "streamed", 2500, 1000)
    _same(sorted_path, streamed)
    assert b'"result_50.00_percentile_latency_ns", "value": 2000' in streamed["mlperf_log_detail.txt"]


def test_chunked_issue_and_mask_give_the_same_logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    whole, calls = _offline_run(tmp_path, "whole", 2500, 0)
    assert calls == [2500]
    monkeypatch.setattr(issuer, "ISSUE_CHUNK", 1000)
    monkeypatch.setattr(schedule, "MASK_CHUNK", 77)
    chunked, calls = _offline_run(tmp_path, "chunked", 2500, 0)
    assert calls == [1000, 1000, 500]
    _same(whole, chunked)
    assert whole["mlperf_log_accuracy.json"].count(b"seq_id") > 50  # ~5% of 2500 samples logged


def test_offline_schedule_uses_narrow_indices() -> None:
    ts = TestSettings(scenario=Scenario.OFFLINE, min_query_count=5000, min_duration_ms=0)
    eff = normalize(ts, 70000, 70000)
    loaded = schedule.loadable_sets(eff, 70000, TestMode.PERFORMANCE_ONLY)[0]
    sch = schedule.generate_schedule(eff, loaded, TestMode.PERFORMANCE_ONLY)
    assert sch.sample_index.dtype == np.uint32  # 70000 indices do not fit 16 bits
    assert np.array_equal(sch.sample_index, np.resize(loaded, sch.n_samples))
    eq = dataclasses.replace(eff, sample_concatenate_permutation=True)
    a = schedule.generate_schedule(eq, loaded[:100], TestMode.PERFORMANCE_ONLY)
    schedule_chunk = schedule.OFFLINE_SHUFFLE_CHUNK
    try:
        schedule.OFFLINE_SHUFFLE_CHUNK = 100  # one repeat per pass
        b = schedule.generate_schedule(eq, loaded[:100], TestMode.PERFORMANCE_ONLY)
    finally:
        schedule.OFFLINE_SHUFFLE_CHUNK = schedule_chunk
    assert np.array_equal(a.sample_index, b.sample_index)
