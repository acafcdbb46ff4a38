"""mlperf_log_samples.bin: round trips exactly, and its reader survives hostile files (issue 23).

Every size in the header is checked against the file's size before anything is allocated, so a
header claiming 50M samples over a few bytes is refused at once; any other damage is a
LogFormatError naming the file, never another exception.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from proctor.errors import LogFormatError
from proctor.loadgen.logs.samples import MAGIC, MAX_SAMPLES, SampleColumns, read_samples, write_samples


def _columns(n: int, seed: int = 0, tokens: bool = True) -> SampleColumns:
    rng = np.random.default_rng(seed)
    seq = np.cumsum(rng.integers(1, 3, n))  # a few failed samples leave gaps
    query = seq // 3
    issue = np.cumsum(rng.integers(0, 5_000_000_000, n))  # gaps past the 32-bit range too
    cols = SampleColumns(
        origin_ns=123_456_789,
        seq=seq,
        query=query,
        sample_idx=rng.integers(0, 24576, n),
        issue_ns=issue,
        latency_ns=rng.integers(0, 30_000_000_000, n),
        scheduled_ns=-rng.integers(0, 1_000_000, n),
    )
    if tokens:
        has = rng.random(n) < 0.9
        cols.has_first = has
        first = (cols.latency_ns * rng.random(n)).astype(np.int64)  # a first token comes within its latency
        cols.first_token_ns = np.where(has, first, -1)
        cols.n_tokens = rng.integers(0, 2000, n)
    return cols


def test_round_trip_is_exact(tmp_path: Path) -> None:
    src = _columns(5000)
    p = tmp_path / "s.bin"
    size = write_samples(p, src)
    assert size == p.stat().st_size
    got = read_samples(p)
    assert got.origin_ns == src.origin_ns and got.n == 5000
    for name in ("seq", "query", "sample_idx", "issue_ns", "latency_ns", "scheduled_ns", "n_tokens"):
        assert np.array_equal(getattr(got, name), getattr(src, name)), name
    assert got.has_first is not None and src.has_first is not None and got.first_token_ns is not None
    assert np.array_equal(got.has_first, src.has_first)
    assert np.array_equal(got.first_token_ns[got.has_first], src.first_token_ns[src.has_first])  # type: ignore[index]


def test_without_tokens_and_empty(tmp_path: Path) -> None:
    src = _columns(100, tokens=False)
    write_samples(tmp_path / "a.bin", src)
    got = read_samples(tmp_path / "a.bin")
    assert got.first_token_ns is None and got.has_first is None and got.n_tokens is None
    assert np.array_equal(got.latency_ns, src.latency_ns)
    empty = _columns(0)
    write_samples(tmp_path / "e.bin", empty)
    assert read_samples(tmp_path / "e.bin").n == 0


def test_constant_columns_take_no_bytes(tmp_path: Path) -> None:
    """An Offline query: one issue time, one query, consecutive sequence numbers: those columns are free."""
    n = 100_000
    cols = SampleColumns(0, np.arange(n), np.zeros(n, np.int64), np.arange(n) % 1024, np.full(n, 5_000),
                         np.arange(n) * 10, np.zeros(n, np.int64))
    size = write_samples(tmp_path / "o.bin", cols)
    assert size == 32 + 6 * 24 + n * (2 + 4)  # sample_idx u16, latency u32; the rest constant
    got = read_samples(tmp_path / "o.bin")
    assert np.array_equal(got.issue_ns, cols.issue_ns) and np.array_equal(got.seq, cols.seq)


def _valid_bytes(tmp_path: Path, n: int = 50) -> bytes:
    p = tmp_path / "v.bin"
    write_samples(p, _columns(n, seed=1))
    return p.read_bytes()


def test_header_sizes_are_checked_against_the_file(tmp_path: Path) -> None:
    good = _valid_bytes(tmp_path)
    p = tmp_path / "h.bin"
    for n in (MAX_SAMPLES, 2**63, 51):  # a claim the file cannot hold
        p.write_bytes(good[:16] + struct.pack("<Q", n) + good[24:])
        with pytest.raises(LogFormatError, match="h.bin"):
            read_samples(p)
    p.write_bytes(good[:-1])
    with pytest.raises(LogFormatError, match="truncated or not written whole"):
        read_samples(p)
    p.write_bytes(b"PK\x03\x04" + good[4:])
    with pytest.raises(LogFormatError, match="wrong magic"):
        read_samples(p)
    p.write_bytes(good[:8] + struct.pack("<H", 2) + good[10:])
    with pytest.raises(LogFormatError, match="version 2"):
        read_samples(p)


def test_a_constant_run_still_stores_its_latencies_and_max_rows_bounds_the_read(tmp_path: Path) -> None:
    """Even when every column is constant the file holds a byte per sample, so N is bounded by its size."""
    n = 1000
    same = np.zeros(n, np.int64)
    size = write_samples(tmp_path / "c.bin", SampleColumns(0, np.arange(n), same, same, same, same + 7, same))
    assert size == 32 + 6 * 24 + n  # latency: u8 zeros over base 7
    got = read_samples(tmp_path / "c.bin", max_rows=10)
    assert got.n == 10 and got.truncated and np.array_equal(got.seq, np.arange(10))
    assert np.array_equal(got.latency_ns, np.full(10, 7))
    assert not read_samples(tmp_path / "c.bin").truncated


def test_values_out_of_any_runs_range_are_refused(tmp_path: Path) -> None:
    cols = _columns(10, tokens=False)
    cols.latency_ns = np.full(10, -5)
    write_samples(tmp_path / "n.bin", cols)
    with pytest.raises(LogFormatError, match=r"column 5 \(latency\), row 0: -5 is not in \[0, "):
        read_samples(tmp_path / "n.bin")
    cols = _columns(10, tokens=False)
    cols.issue_ns = np.array([0, 2**62 - 1] * 5)  # deltas whose running sum would wrap
    write_samples(tmp_path / "w.bin", cols)
    with pytest.raises(LogFormatError, match="range"):
        read_samples(tmp_path / "w.bin")


def test_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(LogFormatError, match="not a regular file"):
        read_samples(tmp_path)


def _read_or_refuse(p: Path, data: bytes) -> None:
    p.write_bytes(data)
    try:
        got = read_samples(p)
    except LogFormatError:
        return
    assert got.n <= len(data)  # what a reader allocates follows the file, not the header
    assert got.latency_ns.min(initial=0) >= 0


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=600))
def test_random_bytes_never_crash(tmp_path: Path, data: bytes) -> None:
    _read_or_refuse(tmp_path / "r.bin", data)
    _read_or_refuse(tmp_path / "m.bin", MAGIC + data)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    edits=st.lists(st.tuples(st.integers(0, 2000), st.integers(0, 255)), min_size=1, max_size=8),
    cut=st.one_of(st.none(), st.integers(0, 2000)),
)
def test_damaged_files_never_crash(tmp_path: Path, edits: list[tuple[int, int]], cut: int | None) -> None:
    good = bytearray(_valid_bytes(tmp_path, 30))
    for pos, value in edits:
        good[pos % len(good)] = value
    _read_or_refuse(tmp_path / "d.bin", bytes(good if cut is None else good[:cut]))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    ncol=st.integers(0, 70), n=st.integers(0, 2**64 - 1), code=st.integers(0, 255), delta=st.integers(0, 255),
    base=st.integers(-(2**63), 2**63 - 1), cid=st.integers(0, 255), tail=st.binary(max_size=200),
)
def test_forged_headers_never_crash(tmp_path: Path, ncol: int, n: int, code: int, delta: int, base: int, cid: int,
                                    tail: bytes) -> None:
    head = MAGIC + struct.pack("<HHIQq", 1, ncol, 0, n, 0)
    desc = b"".join(struct.pack("<BBB5xqq", (cid + k) % 256, code, delta, base, base // 3)
                    for k in range(min(ncol, 12)))
    _read_or_refuse(tmp_path / "f.bin", head + desc + tail)


# --- values a run cannot record (issue 30 §6): refused by column, sums that cannot wrap --------------

from proctor.loadgen.logs.samples import MAX_SAMPLE_TOKENS, MAX_TIME_NS  # noqa: E402
from proctor.report.data import InferenceRun, _trace_stats, read_samples_file  # noqa: E402

_EDGES = [0, 1, -1, MAX_TIME_NS - 1, MAX_TIME_NS, -MAX_TIME_NS, 2**62 - 1, 2**62, -(2**62), 2**63 - 1, -(2**63),
          MAX_SAMPLE_TOKENS, MAX_SAMPLE_TOKENS + 1, 3_000_000_000]
_VALUE = st.one_of(st.sampled_from(_EDGES), st.integers(-(2**63), 2**63 - 1), st.integers(0, 10**12))


def _report_stats(p: Path) -> InferenceRun | None:
    notes: list[str] = []
    s = read_samples_file(p, notes)
    if s is None:
        return None
    run = InferenceRun(name="x", directory=p.parent, scenario="Server", samples=s)
    _trace_stats(run)
    return run


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), n=st.integers(1, 40), tokens=st.booleans())
def test_any_values_are_refused_by_column_or_read_within_a_runs_range(tmp_path: Path, data: st.DataObject,
                                                                     n: int, tokens: bool) -> None:
    """Any int64 values in any column: the reader refuses the file naming the column, or every value
    it returns is one a run records; the report's mean then lies within [min, max] (no sum wraps)."""
    cols = _columns(n, tokens=tokens)
    names = ["seq", "query", "sample_idx", "issue_ns", "latency_ns", "scheduled_ns"] + (
        ["first_token_ns", "n_tokens"] if tokens else [])
    for name in data.draw(st.lists(st.sampled_from(names), max_size=3, unique=True)):
        setattr(cols, name, np.array(data.draw(st.lists(_VALUE, min_size=n, max_size=n)), dtype=np.int64))
    p = tmp_path / "v.bin"
    write_samples(p, cols)
    try:
        got = read_samples(p)
    except LogFormatError as exc:
        event("refused: " + str(exc).split(": ", 2)[1].split(",")[0])  # the column it names
        assert str(p) in str(exc) and ("column" in str(exc)) and "\n" not in str(exc)
        assert _report_stats(p) is None  # the report leaves it out (with a note) rather than fail
        return
    for v in (got.seq, got.query, got.sample_idx, got.issue_ns, got.latency_ns):
        assert v.min() >= 0 and v.max() < MAX_TIME_NS
    assert np.abs(got.scheduled_ns).max() < MAX_TIME_NS
    if got.n_tokens is not None and got.first_token_ns is not None and got.has_first is not None:
        assert got.n_tokens.min() >= 0 and got.n_tokens.max() <= MAX_SAMPLE_TOKENS
        h = got.has_first
        assert (got.first_token_ns[h] >= 0).all() and (got.first_token_ns[h] <= got.latency_ns[h]).all()
    event("read")
    run = _report_stats(p)
    assert run is not None and run.trace_scheduled is not None
    lat = run.trace_scheduled
    assert lat.min is not None and lat.mean is not None and lat.max is not None
    assert lat.min <= lat.mean <= lat.max


def test_values_past_2_62_are_refused_naming_the_column(tmp_path: Path) -> None:
    """The issue's file: latencies over 2**62 (base 2**61 + stored up to 2**62 - 1, each within the
    encoding's bound), whose sums wrapped in the report."""
    cols = _columns(10, tokens=False)
    cols.latency_ns = np.array([2**61, 2**61 + 2**62 - 1] * 5, dtype=np.int64)
    write_samples(tmp_path / "big.bin", cols)
    with pytest.raises(LogFormatError, match=r"big\.bin: column 5 \(latency\), row 0: 2305843009213693952 is not"):
        read_samples(tmp_path / "big.bin")


def test_the_reports_mean_of_values_whose_int64_sum_wraps_is_exact(tmp_path: Path) -> None:
    """2048 latencies of 2**53 - 1 ns each: their int64 sum wraps (2**64); the mean stays the value."""
    n = 2048
    cols = _columns(n, tokens=False)
    cols.latency_ns = np.full(n, MAX_TIME_NS - 1, np.int64)
    cols.latency_ns[0] = MAX_TIME_NS - 2  # not constant (the latency column is always stored anyway)
    cols.scheduled_ns = np.zeros(n, np.int64)
    write_samples(tmp_path / "w.bin", cols)
    assert int(read_samples(tmp_path / "w.bin").latency_ns.sum(dtype=np.int64)) < 0  # what wrapped before
    run = _report_stats(tmp_path / "w.bin")
    assert run is not None and run.trace_scheduled is not None
    lat = run.trace_scheduled
    assert lat.min == MAX_TIME_NS - 2 and lat.max == MAX_TIME_NS - 1
    assert lat.mean == float(((MAX_TIME_NS - 1) * n - 1) // n)  # the exact sum, floor-divided as the summary


@given(values=st.lists(st.integers(-(2**63), 2**63 - 1), max_size=200))
def test_exact_sum_is_the_sum(values: list[int]) -> None:
    from proctor.loadgen.results import exact_sum

    assert exact_sum(np.array(values, dtype=np.int64)) == sum(values)


# --- written in bounded chunks (issue 33 §1): the same bytes as one step over the whole columns -----

import struct as _struct  # noqa: E402

from proctor.loadgen.logs import samples as samples_mod  # noqa: E402


def _reference_bytes(cols: SampleColumns) -> bytes:
    """The file as the one-step writer made it: each whole column encoded at once (the formula the
    docstring gives), the reference the chunked writer must match byte for byte."""
    n = cols.n
    columns = [(1, cols.seq), (2, cols.query), (3, cols.sample_idx), (4, cols.issue_ns), (5, cols.latency_ns),
               (6, cols.scheduled_ns)]
    if cols.has_first is not None and cols.first_token_ns is not None and cols.n_tokens is not None:
        has = cols.has_first.astype(bool)
        first = cols.first_token_ns.astype(np.int64)
        if has.any() and not has.all():
            first = np.where(has, first, first[has][0])
        elif not has.any():
            first = np.zeros(n, np.int64)
        columns += [(7, has.astype(np.int64)), (8, first), (9, cols.n_tokens)]
    codes = [np.dtype(x) for x in ("<u1", "<u2", "<u4", "<i1", "<i2", "<i4", "<i8")]
    descs, datas = [], []
    for cid, values in columns:
        v = values.astype(np.int64, copy=False)
        delta = cid in (1, 2, 4)
        if v.size == 0:
            descs.append(_struct.pack("<BBB5xqq", cid, 0, int(delta), 0, 0))
            continue
        if delta:
            step = int(v[1]) - int(v[0]) if v.size > 1 else 0
            if abs(int(v[0]) - step) >= 2**62:
                step = 0
            base = int(v[0]) - step
            stored = np.diff(v, prepend=np.int64(base))
        else:
            base = int(v.min())
            stored = v - base
        lo, hi = int(stored.min()), int(stored.max())
        if lo == hi and cid != 5:
            descs.append(_struct.pack("<BBB5xqq", cid, 0, int(delta), base, lo))
            continue
        code = next((k for k, dt in enumerate(codes, 1) if (lo >= 0) == (k <= 3) and np.iinfo(dt).min <= lo
                     and hi <= np.iinfo(dt).max), 7)
        descs.append(_struct.pack("<BBB5xqq", cid, code, int(delta), base, 0))
        datas.append(stored.astype(codes[code - 1]).tobytes())
    head = _struct.pack("<8sHHIQq", MAGIC, 1, len(descs), 0, n, cols.origin_ns)
    return head + b"".join(descs) + b"".join(datas)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), n=st.integers(0, 60), tokens=st.booleans(), chunk=st.integers(1, 70))
def test_chunked_writer_writes_the_one_step_bytes(tmp_path: Path, data: st.DataObject, n: int, tokens: bool,
                                                  chunk: int) -> None:
    """Any int64 values in any column (steps and spans that wrap included), any chunk size: the
    file's bytes are those of the whole-column formula."""
    cols = _columns(n, seed=n, tokens=tokens)
    names = ["seq", "query", "sample_idx", "issue_ns", "latency_ns", "scheduled_ns"] + (
        ["first_token_ns", "n_tokens"] if tokens else [])
    for name in data.draw(st.lists(st.sampled_from(names), max_size=3, unique=True)):
        setattr(cols, name, np.array(data.draw(st.lists(_VALUE, min_size=n, max_size=n)), dtype=np.int64))
    if tokens and data.draw(st.booleans()):
        cols.has_first = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    want = _reference_bytes(cols)
    old = samples_mod.WRITE_CHUNK
    samples_mod.WRITE_CHUNK = chunk
    try:
        size = write_samples(tmp_path / "c.bin", cols)
    finally:
        samples_mod.WRITE_CHUNK = old
    assert (tmp_path / "c.bin").read_bytes() == want
    assert size == len(want)


def test_rows_changing_between_the_passes_are_refused(tmp_path: Path) -> None:
    """A chunk source whose rows differ on the second call (a completion landing during the write)
    fails the write rather than writing values outside the ranges its header declares."""
    src = _columns(100, tokens=False)
    calls = [0]

    def chunks():  # type: ignore[no-untyped-def]
        calls[0] += 1
        m = 100 if calls[0] == 1 else 99
        yield samples_mod._rows_of(src, 0, m)

    with pytest.raises(ValueError, match="changed while the file was written"):
        samples_mod.write_sample_chunks(tmp_path / "x.bin", 0, chunks, tokens=False)


def test_chunked_writer_holds_no_whole_column(tmp_path: Path) -> None:
    """What the writer allocates follows its chunk, not the rows: 4M rows in chunks of 64k rows
    peak at under 64k * 80 bytes of numpy memory beyond the columns themselves (tracemalloc counts
    numpy's buffers: a deterministic size, not RSS)."""
    import tracemalloc

    n = 4_000_000
    cols = SampleColumns(0, np.arange(n), np.zeros(n, np.int64), np.arange(n) % 1024, np.full(n, 5_000),
                         np.arange(n) * 10 % 7919, np.zeros(n, np.int64))
    old = samples_mod.WRITE_CHUNK
    samples_mod.WRITE_CHUNK = 1 << 16
    try:
        tracemalloc.start()
        write_samples(tmp_path / "m.bin", cols)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        samples_mod.WRITE_CHUNK = old
    assert peak < (1 << 16) * 80
    assert np.array_equal(read_samples(tmp_path / "m.bin").latency_ns, cols.latency_ns)
