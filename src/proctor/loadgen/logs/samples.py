"""mlperf_log_samples.bin: proctor's compact per-sample record of a run (what the report draws from).

The Chrome trace costs ~290 bytes and a formatted JSON event per sample; this file holds the same
per-sample numbers in a few bytes each and is written and read as whole numpy arrays. It is
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
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from proctor.errors import LogFormatError
from proctor.loadgen.logs.reader import open_regular
from proctor.trees import open_output

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


@dataclass(slots=True)
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


def _narrowest(lo: int, hi: int) -> int:
    """The smallest dtype code holding every value in [lo, hi] (lo == hi == 0 is the constant)."""
    for code in (1, 2, 3) if lo >= 0 else (4, 5, 6):
        info = np.iinfo(_CODES[code])
        if info.min <= lo and hi <= info.max:
            return code
    return 7


def _encode(col_id: int, values: np.ndarray) -> tuple[bytes, bytes]:
    """(descriptor, data) of one column of int64 values (the latency column never constant)."""
    v = values.astype(np.int64, copy=False)
    delta = _DELTA.get(col_id, False)
    if v.size == 0:
        return _COLUMN.pack(col_id, 0, int(delta), 0, 0), b""
    if delta:  # the first step repeats the second, so an evenly spaced column is one constant step
        step = int(v[1]) - int(v[0]) if v.size > 1 else 0
        if abs(int(v[0]) - step) >= MAX_ABS_NS:
            step = 0
        base = int(v[0]) - step
        stored = np.diff(v, prepend=np.int64(base))
    else:
        base = int(v.min())
        stored = v - base
    lo, hi = int(stored.min()), int(stored.max())
    if lo == hi and col_id != LATENCY:
        return _COLUMN.pack(col_id, 0, int(delta), base, lo), b""
    code = _narrowest(lo, hi)
    dtype = _CODES[code]
    assert dtype is not None
    return _COLUMN.pack(col_id, code, int(delta), base, 0), stored.astype(dtype).tobytes()


def write_samples(path: str | Path, cols: SampleColumns) -> int:
    """Write the file (replacing any); returns its size in bytes."""
    n = cols.n
    columns: list[tuple[int, np.ndarray]] = [
        (SEQ, cols.seq), (QUERY, cols.query), (SAMPLE_IDX, cols.sample_idx), (ISSUE, cols.issue_ns),
        (LATENCY, cols.latency_ns), (SCHEDULED, cols.scheduled_ns),
    ]
    if cols.has_first is not None and cols.first_token_ns is not None and cols.n_tokens is not None:
        has = cols.has_first.astype(bool)
        first = cols.first_token_ns.astype(np.int64)
        if has.any() and not has.all():  # rows without a first token take a present value: no wider dtype
            first = np.where(has, first, first[has][0])
        elif not has.any():
            first = np.zeros(n, np.int64)
        columns += [(HAS_FIRST, has.astype(np.int64)), (FIRST_TOKEN, first), (N_TOKENS, cols.n_tokens)]
    for _, values in columns:
        if values.shape != (n,):
            raise ValueError("every column must hold one value per sample")
    encoded = [_encode(cid, values) for cid, values in columns]
    size = _HEADER.size
    with open_output(path, "wb") as fh:  # never through a link placed in the folder
        fh.write(_HEADER.pack(MAGIC, VERSION, len(encoded), 0, n, int(cols.origin_ns)))
        for desc, _ in encoded:
            fh.write(desc)
            size += len(desc)
        for _, data in encoded:
            fh.write(data)
            size += len(data)
    return size


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
