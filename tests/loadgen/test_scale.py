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


class _WorkerSUT:
    """Completes each query on its own thread; `chain` sets issue_from_completion."""

    name = "worker-sut"

    def __init__(self, chain: bool, fail_at: int = -1, never: bool = False) -> None:
        import queue
        import threading

        self.issue_from_completion = chain
        self.q: queue.SimpleQueue[tuple[np.ndarray, np.ndarray] | None] = queue.SimpleQueue()
        self.threads: list[int] = []
        self.calls = 0
        self.fail_at, self.never = fail_at, never
        self.t = threading.Thread(target=self._loop, daemon=True)
        self.t.start()

    def _loop(self) -> None:
        import threading

        while (item := self.q.get()) is not None:
            if not self.never:
                completion.complete_arrays(item[0])
                self.threads.append(threading.get_ident())

    def issue_query(self, samples: object) -> None:
        raise AssertionError

    def issue_query_arrays(self, ids: np.ndarray, indices: np.ndarray) -> None:
        self.calls += 1
        if self.calls == self.fail_at:
            raise ValueError("issue failed")
        self.q.put((ids.copy(), indices.copy()))

    def flush_queries(self) -> None:
        pass

    def close(self) -> None:
        self.q.put(None)
        self.t.join()


@pytest.mark.parametrize("scenario", [Scenario.SINGLE_STREAM, Scenario.MULTI_STREAM])
def test_chained_closed_loop_matches_the_gate_loop(tmp_path: Path, scenario: Scenario) -> None:
    outs = []
    for chain in (False, True):
        sut = _WorkerSUT(chain)
        ts = TestSettings(scenario=scenario, min_query_count=300, min_duration_ms=0, performance_sample_count_override=64)
        ls = LogSettings(log_output=LogOutputSettings(outdir=str(tmp_path / str(chain))), enable_trace=False)
        out = run_test(sut, InMemoryQSL(64, 64), ts, ls, audit_config=None)
        sut.close()
        assert out.records is not None and not out.incomplete
        n = out.records.n_queries_issued
        assert n == 300 and out.issue_stop_reason == "done"
        assert np.all(out.records.query_done_ns[:n] >= out.records.query_issued_ns[:n])
        assert np.all(out.records.query_issued_ns[1:n] >= out.records.query_done_ns[: n - 1])  # closed loop
        outs.append(out)
    assert outs[0].result is not None and outs[1].result is not None
    assert outs[0].result.query_count == outs[1].result.query_count


def test_chained_loop_sut_raising_on_a_worker_is_the_run_error(tmp_path: Path) -> None:
    from proctor.errors import RunError

    sut = _WorkerSUT(True, fail_at=5)
    ts = TestSettings(scenario=Scenario.SINGLE_STREAM, min_query_count=50, min_duration_ms=0)
    ls = LogSettings(log_output=LogOutputSettings(outdir=str(tmp_path)), enable_trace=False)
    with pytest.raises(RunError, match="ValueError"):
        run_test(sut, InMemoryQSL(64, 64), ts, ls, audit_config=None)
    sut.close()
    assert sut.calls == 5


def test_chained_loop_gives_up_on_a_stuck_sut(tmp_path: Path) -> None:
    sut = _WorkerSUT(True, never=True)
    ts = TestSettings(scenario=Scenario.SINGLE_STREAM, min_query_count=50, min_duration_ms=0)
    ls = LogSettings(log_output=LogOutputSettings(outdir=str(tmp_path)), enable_trace=False)
    out = run_test(sut, InMemoryQSL(64, 64), ts, ls, audit_config=None, timeout_s=0.2)
    sut.close()
    assert out.incomplete and not out.valid and sut.calls == 1
    assert out.issue_stop_reason == "timeout"


# --- the per-sample files in bounded chunks (issue 33 §1) --------------------------------------------


def _ragged_run(seed: int) -> tuple[object, object]:
    """A schedule of queries of 1-9 samples and records with unfinished, failed and token-less samples,
    fewer queries issued than scheduled: every case the row selection handles."""
    from proctor.loadgen.records import Records, Schedule

    gen = np.random.default_rng(seed)
    sizes = gen.integers(1, 10, 60)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    ns = int(offsets[-1])
    sched = Schedule(np.cumsum(gen.integers(0, 10**6, 60)).astype(np.int64), offsets,
                     gen.integers(0, 500, ns).astype(np.uint16))
    rec = Records.allocate(sched, start_ns=10**9, tokens=True)
    rec.n_queries_issued = 50
    rec.query_scheduled_ns[:] = sched.scheduled_ns + 10**9
    rec.query_issued_ns[:] = rec.query_scheduled_ns + gen.integers(0, 1000, 60)
    q_of = np.repeat(np.arange(60), sizes)
    rec.sample_done_ns[:] = rec.query_issued_ns[q_of] + gen.integers(1, 10**7, ns)
    rec.sample_done_ns[gen.random(ns) < 0.1] = NOT_SET
    rec.sample_failed = (gen.random(ns) < 0.05).astype(np.uint8)
    first = rec.query_issued_ns[q_of] + gen.integers(0, 1000, ns)
    rec.sample_first_token_ns[:] = np.where(gen.random(ns) < 0.8, first, NOT_SET)
    rec.sample_n_tokens[:] = gen.integers(2, 50, ns)
    return sched, rec


def _whole_array_columns(sched: object, rec: object, origin: int) -> object:
    """The samples file's columns as one step over whole arrays computed them before chunking."""
    from proctor.loadgen.logs.samples import SampleColumns

    nq = rec.n_queries_issued  # type: ignore[attr-defined]
    offsets = sched.query_offsets[: nq + 1]  # type: ignore[attr-defined]
    ns = int(offsets[nq])
    keep = (rec.sample_done_ns[:ns] != NOT_SET) & (rec.sample_failed[:ns] == 0)  # type: ignore[attr-defined]
    seq = np.flatnonzero(keep)
    query = np.searchsorted(offsets, seq, side="right") - 1
    issue = rec.query_issued_ns[query]  # type: ignore[attr-defined]
    first = rec.sample_first_token_ns[seq]  # type: ignore[attr-defined]
    return SampleColumns(origin, seq, query, sched.sample_index[seq], issue - origin,  # type: ignore[attr-defined]
                         rec.sample_done_ns[seq] - issue, rec.query_scheduled_ns[query] - issue,  # type: ignore[attr-defined]
                         first != NOT_SET, first - issue, rec.sample_n_tokens[seq])  # type: ignore[attr-defined]


@pytest.mark.parametrize("chunk", [1, 7, 64, 1 << 18])
def test_per_sample_files_in_row_chunks_equal_whole_arrays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          chunk: int) -> None:
    import io
    import types

    from proctor.loadgen import engine
    from proctor.loadgen.logs.samples import read_samples, write_samples
    from proctor.loadgen.logs.trace import TraceLog

    sched, rec = _ragged_run(chunk)
    origin = 5 * 10**8
    write_samples(tmp_path / "whole.bin", _whole_array_columns(sched, rec, origin))  # type: ignore[arg-type]
    monkeypatch.setattr(engine, "ROW_CHUNK", chunk)
    monkeypatch.setattr(engine, "TRACE_CHUNK", chunk)
    logs = types.SimpleNamespace(samples=tmp_path / "chunked.bin", origin_ns=origin)
    engine._write_samples(logs, sched, rec)  # type: ignore[arg-type]
    assert (tmp_path / "chunked.bin").read_bytes() == (tmp_path / "whole.bin").read_bytes()
    got = read_samples(tmp_path / "chunked.bin")
    assert got.n > 200 and got.has_first is not None and not got.has_first.all()  # the cases are there
    texts = []
    for size in (chunk, 1 << 16):
        monkeypatch.setattr(engine, "TRACE_CHUNK", size)
        out = io.StringIO()
        engine._write_trace(TraceLog(out, start_ns=origin, pid=1), sched, rec)  # type: ignore[arg-type]
        texts.append(out.getvalue())
    assert texts[0] == texts[1] and texts[0].count('"ph":"b"') == got.n


class _InstantSUT:
    """Completes every issue call inline with one array call."""

    name = "instant"

    def issue_query(self, samples: object) -> None:
        raise AssertionError("the array path is used")

    def issue_query_arrays(self, ids: np.ndarray, indices: np.ndarray) -> None:
        completion.complete_arrays(ids)

    def flush_queries(self) -> None:
        pass


def _offline_peak(tmp: Path, samples: int) -> int:
    """The most numpy and Python memory held at once during a whole Offline run_test (tracemalloc
    counts numpy's buffers): a deterministic size, not RSS."""
    import tracemalloc

    ts = TestSettings(scenario=Scenario.OFFLINE, mode=TestMode.PERFORMANCE_ONLY, min_query_count=samples,
                      min_duration_ms=0, performance_sample_count_override=1024)
    ls = LogSettings(log_output=LogOutputSettings(outdir=str(tmp / str(samples))), enable_trace=False)
    tracemalloc.start()
    try:
        out = run_test(_InstantSUT(), InMemoryQSL(1024, 1024), ts, ls, audit_config=None, clock=ManualClock())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert out.result is not None and out.result.sample_count == samples  # type: ignore[attr-defined]
    return peak


def test_offline_run_holds_at_most_16_bytes_per_sample(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33 §1: with the large-run paths on (chunked issue, streamed statistics, the samples
    file in row chunks), what an Offline run holds at once grows by at most 16 bytes per sample:
    the records (8-byte completion times, 2-byte indices) and nothing else the size of the run."""
    for module, name in ((issuer, "ISSUE_CHUNK"), (results, "STREAM_CHUNK")):
        monkeypatch.setattr(module, name, 1 << 14)
    from proctor.loadgen import engine

    monkeypatch.setattr(engine, "ROW_CHUNK", 1 << 14)
    monkeypatch.setattr(results, "STREAM_MIN_SAMPLES", 1)
    monkeypatch.setattr(results, "GATHER_LIMIT", 1 << 14)
    lo, hi = 200_000, 1_200_000
    per_sample = (_offline_peak(tmp_path, hi) - _offline_peak(tmp_path, lo)) / (hi - lo)
    assert per_sample <= 16, per_sample
    assert (tmp_path / str(hi) / "mlperf_log_samples.bin").stat().st_size > hi  # the file was written


@pytest.mark.parametrize("chunk", [1, 2, 3, 1 << 20])
def test_largest_query_reads_the_offsets_a_slice_at_a_time(chunk: int) -> None:
    """The split of big Offline queries is decided by the largest query, found without a temporary
    the size of the schedule: the same answer at every slice size, including at slice edges."""
    gen = np.random.default_rng(chunk)
    for _ in range(50):
        sizes = gen.integers(0, 9, int(gen.integers(1, 40)))
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        assert issuer._largest_query(offsets, chunk) == int(sizes.max())
    assert issuer._largest_query(np.zeros(1, np.int64), chunk) == 0


def test_sliced_fill_and_last_completion_equal_whole_array_formulas(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33 §4: the records' fill in slices (a Ctrl-C lands between them) is np.full's, and the
    last completion found from the end a slice at a time is the whole array's, at any slice size."""
    from proctor.loadgen import records as records_mod

    gen = np.random.default_rng(3)
    for slice_ in (1, 2, 7, 1 << 20):
        monkeypatch.setattr(records_mod, "FILL_CHUNK", slice_)
        for n in (0, 1, 5, 33):
            assert np.array_equal(records_mod.unset(n), np.full(n, NOT_SET, np.int64))
        for _ in range(40):
            done = np.where(gen.random(40) < gen.random(), gen.integers(0, 10**9, 40), NOT_SET)
            n = int(gen.integers(0, 41))
            hits = np.flatnonzero(done[:n] != NOT_SET)
            assert records_mod.done_end(done, n) == (int(hits[-1]) + 1 if hits.size else 0)
