"""mlperf_log_samples.bin: proctor's compact per-sample record of a run (what the report draws from).

The Chrome trace costs ~290 bytes and a formatted JSON event per sample; this file holds the same
per-sample numbers in a few bytes each. It is written in bounded row chunks (`write_sample_chunks`:
one pass finds each column's range, a second writes its bytes), so a run of hundreds of millions of
samples needs no column-sized temporary to write it, and read as whole numpy arrays. It is
proctor's own file (the official LoadGen has none); the trace is still written with `--trace`.

Layout, little-endian, version 1:

    offset  size  field
    0       8     magic b"PRSMPL\\r\\n" (the CR LF catches text-mode mangling)
    8       2     version (u16) = 1
    10      2     number of columns C (u16, at most MAX_COLUMNS)
    12      4     reserved (u32) = 0
    16      8     number of samples N (u64, at most the file's size in bytes)
    24      8     origin_ns (i64): the run clock at which the logs opened (the trace's ts origin)
    32      24*C  column descriptors: id (u8), dtype code (u8), delta (u8: 0 or 1), 5 zero bytes,
                  base (i64), fill (i64)
    32+24C  ...   each column's N values in descriptor order, N * itemsize(code) bytes each

A column's values are `base + stored` (delta 0) or `base + cumsum(stored)` (delta 1), computed in
int64; the writer picks the narrowest dtype code that holds `stored` (0: every stored value is
`fill`, no bytes; then u8, u16, u32, i8, i16, i32, i64). The file size must equal the header's
sizes exactly, and the latency column is always stored (never constant), so N is at most the
file's size: a reader allocates at most a fixed multiple of the bytes it was given, and reads at
most `max_rows` rows (the first ones of each column) whatever the file holds.

Column ids (rows: the samples with a result, in issue order; failed and unfinished samples have no
row, as in the trace):

    1 seq          sample sequence number (the response id's order)      delta
    2 query        query index                                           delta
    3 sample_idx   QSL index
    4 issue        issue time of its query, ns after origin_ns           delta
    5 latency      complete - issue (ns)
    6 scheduled    scheduled - issue (ns, <= 0 when the issue was late)
    7 has_first    1 when the sample has a first-token time (LLM runs)
    8 first_token  first token - issue (ns; meaningless where has_first is 0)
    9 n_tokens     output tokens

Columns 1-6 are always written; 7-9 in runs that recorded tokens (all three or none). Unknown ids
are skipped (a later version may add columns), so the format can grow without breaking readers.
A typical run takes 8-24 bytes per sample.

What a reader takes is what a run records (`_check_ranges`): times and ids in [0, MAX_TIME_NS) (104
days in ns, and the largest integers a double holds exactly, so the report's float arithmetic is
exact), `scheduled` in (-MAX_TIME_NS, MAX_TIME_NS), a first token within its sample's latency, a
token count up to MAX_SAMPLE_TOKENS. A file holding anything else is refused whole, naming the file
and the column (as any other damage), never read into numbers whose sums wrap.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import numpy as np

from proctor.errors import LogFormatError
from proctor.loadgen.logs.reader import open_regular
from proctor.trees import open_output
from proctor.typed_records import record

MAGIC = b"PRSMPL\r\n"
VERSION = 1
MAX_COLUMNS = 64
MAX_SAMPLES = 50_000_000  # rows read by default (as the trace reader): ~4 GB of int64 columns at most
MAX_ABS_NS = 1 << 62  # an encoded base, fill or stored value beyond this is no writer's
MAX_TIME_NS = 1 << 53  # a time, span or id a run records is below this (104 days in ns; exact in a double)
MAX_SAMPLE_TOKENS = 1 << 32  # output tokens of one sample, at most

_HEADER = struct.Struct("<8sHHIQq")
_COLUMN = struct.Struct("<BBB5xqq")

SEQ, QUERY, SAMPLE_IDX, ISSUE, LATENCY, SCHEDULED, HAS_FIRST, FIRST_TOKEN, N_TOKENS = range(1, 10)
NAMES = {SEQ: "seq", QUERY: "query", SAMPLE_IDX: "sample_idx", ISSUE: "issue", LATENCY: "latency",
         SCHEDULED: "scheduled", HAS_FIRST: "has_first", FIRST_TOKEN: "first_token", N_TOKENS: "n_tokens"}
# each column's range [low, high) on read (first_token: checked against its row's latency as well)
_RANGES = {
    SEQ: (0, MAX_TIME_NS), QUERY: (0, MAX_TIME_NS), SAMPLE_IDX: (0, MAX_TIME_NS), ISSUE: (0, MAX_TIME_NS),
    LATENCY: (0, MAX_TIME_NS), SCHEDULED: (1 - MAX_TIME_NS, MAX_TIME_NS), HAS_FIRST: (0, 2),
    FIRST_TOKEN: (0, MAX_TIME_NS), N_TOKENS: (0, MAX_SAMPLE_TOKENS + 1),
}
_DELTA = {SEQ: True, QUERY: True, ISSUE: True}
_REQUIRED = (SEQ, QUERY, SAMPLE_IDX, ISSUE, LATENCY, SCHEDULED)
_TOKENS = (HAS_FIRST, FIRST_TOKEN, N_TOKENS)

# dtype code -> numpy dtype (None: a constant column, no bytes)
_CODES: dict[int, np.dtype | None] = {
    0: None,
    1: np.dtype("<u1"), 2: np.dtype("<u2"), 3: np.dtype("<u4"),
    4: np.dtype("<i1"), 5: np.dtype("<i2"), 6: np.dtype("<i4"), 7: np.dtype("<i8"),
}


@record(slots=True)
class SampleColumns:
    """The decoded columns, int64 each (first_token etc. None when the run recorded no tokens)."""

    origin_ns: int
    seq: np.ndarray
    query: np.ndarray
    sample_idx: np.ndarray
    issue_ns: np.ndarray  # after origin_ns
    latency_ns: np.ndarray
    scheduled_ns: np.ndarray  # relative to issue
    has_first: np.ndarray | None = None  # bool
    first_token_ns: np.ndarray | None = None  # relative to issue
    n_tokens: np.ndarray | None = None
    truncated: bool = False  # the file holds more rows than were read

    @property
    def n(self) -> int:
        return int(self.seq.shape[0])


# --- writing ---------------------------------------------------------------------------------------

WRITE_CHUNK = 1 << 20  # rows encoded per step: the writer's temporaries follow this, never N
_WRAP = 1 << 64


def _wrapped(x: int) -> int:
    """`x` as int64 arithmetic leaves it (the writer's stored values wrap as numpy's do)."""
    return (x + (1 << 63)) % _WRAP - (1 << 63)


def _narrowest(lo: int, hi: int) -> int:
    """The smallest dtype code holding every value in [lo, hi] (lo == hi == 0 is the constant)."""
    for code in (1, 2, 3) if lo >= 0 else (4, 5, 6):
        info = np.iinfo(_CODES[code])
        if info.min <= lo and hi <= info.max:
            return code
    return 7


class _Column:
    """One column's encoding, found in a first pass over its chunks and applied in a second.

    Stored values are `v - base` (min as base) or the steps `v[i] - v[i-1]` (delta; the first step
    repeats the second, so an evenly spaced column is one constant step), in int64 arithmetic."""

    __slots__ = ("cid", "delta", "rows", "lo", "hi", "first", "second", "prev", "base", "code", "fill", "rewrap")

    def __init__(self, cid: int) -> None:
        self.cid, self.delta = cid, _DELTA.get(cid, False)
        self.rows = 0
        self.lo: int | None = None  # of the values (plain) or of the steps after the first (delta)
        self.hi: int | None = None
        self.first: int | None = None  # delta: the first two values
        self.second: int | None = None
        self.prev: np.ndarray | None = None  # delta: the last value so far, as a 1-element int64 array
        self.base = self.code = self.fill = 0
        self.rewrap = False  # plain: the span passes int64, so the stored range takes a pass of its own

    def _extend(self, lo: int, hi: int) -> None:
        self.lo = lo if self.lo is None else min(self.lo, lo)
        self.hi = hi if self.hi is None else max(self.hi, hi)

    def scan(self, v: np.ndarray) -> None:
        """Pass 1 over the next values (for the first-token column, only the rows that have one)."""
        if v.size == 0:
            return
        if self.delta:
            if self.first is None:
                self.first = int(v[0])
            if self.second is None and self.prev is not None:
                self.second = int(v[0])
            elif self.second is None and v.size > 1:
                self.second = int(v[1])
            steps = np.diff(v) if self.prev is None else np.diff(v, prepend=self.prev)
            if steps.size:
                self._extend(int(steps.min()), int(steps.max()))
            self.prev = v[-1:]
        else:
            self._extend(int(v.min()), int(v.max()))

    def settle(self, rows: int) -> None:
        """After pass 1 over `rows` rows: base, dtype code and fill."""
        self.rows, self.prev = rows, None
        if rows == 0:
            return
        if self.delta:
            assert self.first is not None
            step = self.second - self.first if self.second is not None else 0
            if abs(self.first - step) >= MAX_ABS_NS:
                step = 0
            self.base = self.first - step
            self._extend(_wrapped(step), _wrapped(step))
        else:
            lo, hi = (0, 0) if self.lo is None else (self.lo, self.hi)  # first-token: no row has one
            assert hi is not None
            self.base = lo
            self.lo, self.hi = 0, hi - lo
            self.rewrap = hi - lo > np.iinfo(np.int64).max
            if self.rewrap:  # its range as stored takes a pass of its own (`rescan`, then `choose`)
                self.lo = self.hi = None
                return
        self.choose()

    def rescan(self, v: np.ndarray) -> None:
        """The extra pass of a plain column whose stored values wrap: their range as stored."""
        if v.size:
            stored = v - np.int64(self.base)
            self._extend(int(stored.min()), int(stored.max()))

    def choose(self) -> None:
        """The dtype code (0 and the fill: a constant column) from the stored range."""
        assert self.lo is not None and self.hi is not None
        self.rewrap = False
        if self.lo == self.hi and self.cid != LATENCY:
            self.code, self.fill = 0, self.lo
        else:
            self.code = _narrowest(self.lo, self.hi)

    def descriptor(self) -> bytes:
        return _COLUMN.pack(self.cid, self.code, int(self.delta), self.base, self.fill)

    def nbytes(self) -> int:
        dtype = _CODES[self.code]
        return 0 if dtype is None else self.rows * dtype.itemsize

    def encode(self, v: np.ndarray) -> np.ndarray | None:
        """Pass 2: the next values as stored (None: a constant column, no bytes)."""
        dtype = _CODES[self.code]
        if dtype is None or v.size == 0:
            return None
        if self.delta:
            start = np.array([self.base], np.int64) if self.prev is None else self.prev
            stored = np.diff(v, prepend=start)
            self.prev = v[-1:].copy()
        else:
            stored = v - np.int64(self.base)
        return stored.astype(dtype, copy=False)


SampleChunks = Callable[[], Iterable[SampleColumns]]


def write_samples(path: str | Path, cols: SampleColumns) -> int:
    """Write the file (replacing any) from whole columns; returns its size in bytes."""
    n = cols.n
    tokens = cols.has_first is not None and cols.first_token_ns is not None and cols.n_tokens is not None
    every = [cols.seq, cols.query, cols.sample_idx, cols.issue_ns, cols.latency_ns, cols.scheduled_ns]
    if tokens:
        every += [v for v in (cols.has_first, cols.first_token_ns, cols.n_tokens) if v is not None]
    if any(np.shape(v) != (n,) for v in every):
        raise ValueError("every column must hold one value per sample")

    def chunks() -> Iterator[SampleColumns]:
        for a in range(0, n, WRITE_CHUNK):
            yield _rows_of(cols, a, a + WRITE_CHUNK)

    return write_sample_chunks(path, cols.origin_ns, chunks, tokens=tokens)


def write_sample_chunks(path: str | Path, origin_ns: int, chunks: SampleChunks, *, tokens: bool) -> int:
    """Write the file (replacing any) from consecutive row chunks: `chunks()` is called twice (the
    columns' ranges, then their bytes) and must give the same rows both times (ValueError
    otherwise). Nothing in memory follows the number of rows but a few ints per chunk; the bytes are
    those one step over the whole columns would write. Returns the file's size."""
    ids = _REQUIRED + (_TOKENS if tokens else ())
    cols = {cid: _Column(cid) for cid in ids}
    sizes: list[int] = []
    filler: int | None = None  # first-token: rows without one take the first present value
    for chunk in chunks():
        sizes.append(chunk.n)
        for cid, v in _values(chunk, tokens, present_only=True):
            cols[cid].scan(v)
            if cid == FIRST_TOKEN and filler is None and v.size:
                filler = int(v[0])
    n = sum(sizes)
    for col in cols.values():
        col.settle(n)
    if any(col.rewrap for col in cols.values()):  # values no run records; still written exactly
        for chunk in chunks():
            for cid, v in _values(chunk, tokens, filler=filler):
                if cols[cid].rewrap:
                    cols[cid].rescan(v)
        for col in cols.values():
            if col.rewrap:
                col.choose()
    descs = [cols[cid].descriptor() for cid in ids]
    offset, starts = _HEADER.size + _COLUMN.size * len(ids), {}
    for cid in ids:
        starts[cid] = offset
        offset += cols[cid].nbytes()
    with open_output(path, "wb") as fh:  # never through a link placed in the folder
        fh.write(_HEADER.pack(MAGIC, VERSION, len(ids), 0, n, int(origin_ns)))
        fh.write(b"".join(descs))
        k = 0
        for chunk in chunks():
            if k >= len(sizes) or chunk.n != sizes[k]:
                raise ValueError("the samples changed while the file was written")
            k += 1
            for cid, v in _values(chunk, tokens, filler=filler):
                data = cols[cid].encode(v)
                if data is not None:
                    fh.seek(starts[cid])
                    fh.write(data.data)
                    starts[cid] += data.nbytes
        if k != len(sizes):
            raise ValueError("the samples changed while the file was written")
    return offset


def _rows_of(cols: SampleColumns, a: int, b: int) -> SampleColumns:
    """Rows [a, b) of every column (views)."""
    def part(v: np.ndarray | None) -> np.ndarray | None:
        return None if v is None else v[a:b]

    return SampleColumns(cols.origin_ns, cols.seq[a:b], cols.query[a:b], cols.sample_idx[a:b], cols.issue_ns[a:b],
                         cols.latency_ns[a:b], cols.scheduled_ns[a:b], part(cols.has_first),
                         part(cols.first_token_ns), part(cols.n_tokens))


def _values(cols: SampleColumns, tokens: bool, *, present_only: bool = False,
            filler: int | None = None) -> Iterator[tuple[int, np.ndarray]]:
    """Each column's values as int64, in descriptor order. The first-token column: only the rows
    that have one (`present_only`), or every row, those without one taking `filler` (0 when no row
    has one), so a run where some samples have no first token needs no wider type."""
    for cid, v in ((SEQ, cols.seq), (QUERY, cols.query), (SAMPLE_IDX, cols.sample_idx), (ISSUE, cols.issue_ns),
                   (LATENCY, cols.latency_ns), (SCHEDULED, cols.scheduled_ns)):
        yield cid, np.asarray(v).astype(np.int64, copy=False)
    if not tokens:
        return
    assert cols.has_first is not None and cols.first_token_ns is not None and cols.n_tokens is not None
    has = np.asarray(cols.has_first).astype(bool, copy=False)
    first = np.asarray(cols.first_token_ns).astype(np.int64, copy=False)
    yield HAS_FIRST, has.astype(np.int64)
    if present_only:
        yield FIRST_TOKEN, first[has]
    else:
        yield FIRST_TOKEN, np.where(has, first, np.int64(0 if filler is None else filler))
    yield N_TOKENS, np.asarray(cols.n_tokens).astype(np.int64, copy=False)


# --- reading ---------------------------------------------------------------------------------------


def read_samples(path: str | Path, max_rows: int = MAX_SAMPLES) -> SampleColumns:
    """Read and check a samples file (its first `max_rows` rows: `truncated` says when there were
    more); LogFormatError (naming the file and what is wrong) otherwise.

    Every size comes from the header and is checked against the file's size before anything is
    read or allocated; values outside any run's range are refused, never wrapped into numbers.
    """
    p = str(path)
    with open_regular(p) as fh:
        try:
            size = os.fstat(fh.fileno()).st_size
            head = fh.read(_HEADER.size)
            if len(head) < _HEADER.size:
                raise LogFormatError(f"{len(head)} bytes: shorter than the {_HEADER.size}-byte header", file=p)
            magic, version, ncol, _, n, origin = _HEADER.unpack(head)
            if magic != MAGIC:
                raise LogFormatError("not a proctor samples file (wrong magic bytes)", file=p)
            if version != VERSION:
                raise LogFormatError(f"format version {version}; this proctor reads version {VERSION}", file=p)
            if ncol > MAX_COLUMNS:
                raise LogFormatError(f"{ncol} columns: more than {MAX_COLUMNS}", file=p)
            if n > size:
                raise LogFormatError(f"{n} samples in {size} bytes: a header no writer makes", file=p)
            raw = fh.read(_COLUMN.size * ncol)
            if len(raw) < _COLUMN.size * ncol:
                raise LogFormatError("truncated in the column descriptors", file=p)
            descs = [_COLUMN.unpack_from(raw, k * _COLUMN.size) for k in range(ncol)]
            expected = _HEADER.size + _COLUMN.size * ncol
            for cid, code, delta, _, _ in descs:
                if code not in _CODES:
                    raise LogFormatError(f"column {cid}: unknown dtype code {code}", file=p)
                dtype = _CODES[code]
                if delta > 1:
                    raise LogFormatError(f"column {cid}: delta flag {delta} (0 or 1)", file=p)
                expected += 0 if dtype is None else n * dtype.itemsize
            if expected != size:
                raise LogFormatError(
                    f"{size} bytes, but its header describes {expected} ({n} samples, {ncol} columns): "
                    "truncated or not written whole", file=p)
            ids = [d[0] for d in descs]
            known = [cid for cid in ids if cid in _REQUIRED or cid in _TOKENS]
            if len(set(known)) != len(known):
                raise LogFormatError("a column appears twice", file=p)
            missing = [cid for cid in _REQUIRED if cid not in ids]
            if missing:
                raise LogFormatError(f"required column(s) {missing} missing", file=p)
            tokens = [cid for cid in _TOKENS if cid in ids]
            if tokens and len(tokens) != len(_TOKENS):
                raise LogFormatError("token columns 7-9 must appear together", file=p)
            values: dict[int, np.ndarray] = {}
            offset = _HEADER.size + _COLUMN.size * ncol
            for cid, code, delta, base, fill in descs:
                dtype = _CODES[code]
                nbytes = 0 if dtype is None else n * dtype.itemsize
                if cid in known:
                    values[cid] = _decode(fh, p, cid, dtype, min(n, max(max_rows, 0)), offset, bool(delta), base, fill)
                offset += nbytes
        except OSError as exc:
            raise LogFormatError(f"cannot read it: {exc.strerror or exc}", file=p) from None
    _check_ranges(p, values)
    out = SampleColumns(origin, values[SEQ], values[QUERY], values[SAMPLE_IDX], values[ISSUE],
                        values[LATENCY], values[SCHEDULED], truncated=n > max_rows)
    if tokens:
        has = values[HAS_FIRST].astype(bool)
        out.has_first, out.first_token_ns, out.n_tokens = has, values[FIRST_TOKEN], values[N_TOKENS]
    return out


def _check_ranges(p: str, values: dict[int, np.ndarray]) -> None:
    """Every value within what a run records (`_RANGES`), a first token within its sample's latency;
    LogFormatError naming the column, its first row out of range and the range, otherwise."""
    for cid, v in values.items():
        lo, hi = _RANGES[cid]
        if cid == FIRST_TOKEN:  # only rows that have a first token: the others hold a filler
            has = values[HAS_FIRST].astype(bool)
            bad = has & ((v < lo) | (v > values[LATENCY]))
            what = "between 0 and the sample's latency"
        else:
            bad = (v < lo) | (v >= hi)
            what = f"in [{lo}, {hi})"
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise LogFormatError(
                f"column {cid} ({NAMES[cid]}), row {row}: {int(v[row])} is not {what}, as a run records it",
                file=p)


def _decode(fh: object, p: str, cid: int, dtype: np.dtype | None, n: int, offset: int, delta: bool,
            base: int, fill: int) -> np.ndarray:
    """One column as int64, its range checked (|value| < MAX_ABS_NS; sums checked before they could wrap)."""
    if abs(base) >= MAX_ABS_NS or abs(fill) >= MAX_ABS_NS:
        raise LogFormatError(f"column {cid} ({NAMES[cid]}): base or fill out of range", file=p)
    if dtype is None:
        stored = np.full(n, fill, np.int64)
    else:
        fh.seek(offset)  # type: ignore[attr-defined]
        data = fh.read(n * dtype.itemsize)  # type: ignore[attr-defined]
        if len(data) != n * dtype.itemsize:
            raise LogFormatError(f"column {cid} ({NAMES[cid]}): truncated while reading", file=p)
        stored = np.frombuffer(data, dtype)
    if stored.size and stored.dtype.itemsize == 8 and max(-int(stored.min()), int(stored.max())) >= MAX_ABS_NS:
        raise LogFormatError(f"column {cid} ({NAMES[cid]}): a value out of range", file=p)
    wide = stored.astype(np.int64)
    if delta:
        # |step| < 2**62 and n < 2**26 steps could still wrap; bound the running sum by a float sum first
        if stored.size and float(np.abs(wide).astype(np.float64).sum()) >= MAX_ABS_NS:
            raise LogFormatError(f"column {cid} ({NAMES[cid]}): its running sum leaves any run's range", file=p)
        wide = np.cumsum(wide)
    return wide + np.int64(base)
