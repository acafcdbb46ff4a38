"""The per-request export of an LLM run (`--sut openai:...,export=FILE`): one JSON line per request,
enough to recompute every figure of the run's summary.

While the run goes, the SUT notes what only it knows into `RequestLog`, numpy arrays indexed by
the sample's sequence number (the low `ID_GENERATION_BITS` of the engine's response id; a new
phase's ids start the log afresh, so it holds the last phase: the one the run reports), grown by doubling: the send stamp, the token
count's source, the fault kind, the number of content chunks. No Python object per request. At the
end, `write_export` joins them with the engine's own records (schedule, issue, first token,
completion, token count: `loadgen.records`) and writes the file.

The file: a header line `{"proctor_request_export": 1, "scenario", "mode", "target_percentile",
"use_token_latencies", "queries", "samples", "clock": "ns since the run's start"}`, then one line
per issued sample: `id`, `qsl` (its QSL index), `query`, `scheduled_ns`, `issued_ns`, `sent_ns`,
`first_token_ns`, `done_ns` (each ns since the run's start, null where not reached), `tokens`,
`source` (token_ids, logprobs, usage, tokenizer, empty; null when it failed), `fault` (a
`stream.FAULT_KINDS` kind, null when it completed; `failed` when the engine counted it failed for
another reason), `chunks` (content chunks received: text or token ids) and `last_chunk_ns` (when the
last of them arrived; the first one's time is `first_token_ns`), both null when no content chunk
came. With procs=N the workers count the chunks and send the count and the last one's time back
with each outcome (`openai_procs`). `figures` recomputes the summary's figures from a file
by the official definitions (`loadgen.results`), the round trip its test checks.

A CSV file holds the columns alone (a plain table, as CSV readers expect); its header goes beside it
as `FILE.csv.meta.json` (`meta_path`), the same object the JSONL header line and the Parquet schema
metadata hold, which `read_export` reads back with the CSV.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from proctor.clients.stream import FAULT_KINDS
from proctor.column_files import META_KEY, Column, ColumnWriter, file_format, pyarrow_parquet
from proctor.errors import ConfigError, LogFormatError
from proctor.loadgen.completion import ID_GENERATION_BITS
from proctor.loadgen.records import NOT_SET
from proctor.trees import read_at_most

EXPORT_VERSION = 1
SOURCES = ("token_ids", "logprobs", "usage", "tokenizer", "empty")
MAX_EXPORT_SEQ = 1 << 31  # a sequence number past this is not noted (no run has that many samples)
SEQ_MASK = (1 << ID_GENERATION_BITS) - 1
MAX_EXPORT_LINE = 4096  # bytes of one line when reading an export back
MAX_EXPORT_LINES = 100_000_000


class RequestLog:
    """What the SUT knows per request, in arrays indexed by response id (grown by doubling, under a
    lock: the issuing thread and the loop thread, or with procs=N the workers' reader thread, write)."""

    def __init__(self, capacity: int = 1024) -> None:
        self._lock = threading.Lock()
        self._capacity = capacity
        self.generation = -1  # the phase whose requests are noted (response id >> ID_GENERATION_BITS)
        self.ignored = 0  # notes for ids of an earlier phase, or past MAX_EXPORT_SEQ
        self._reset()

    def _reset(self) -> None:
        n = self._capacity
        self.sent_ns = np.zeros(n, np.int64)
        self.source = np.zeros(n, np.int8)  # 1 + index in SOURCES (0: none)
        self.fault = np.zeros(n, np.int8)  # 1 + index in FAULT_KINDS (0: none)
        self.chunks = np.full(n, -1, np.int32)
        self.last_chunk_ns = np.zeros(n, np.int64)

    def _room(self, rid: int) -> int:
        """The sequence number of response id rid with room for it, or -1 when it is not noted."""
        gen, i = rid >> ID_GENERATION_BITS, rid & SEQ_MASK
        if gen != self.generation:
            if gen < self.generation or rid < 0:  # a straggler of an earlier phase
                self.ignored += 1
                return -1
            self.generation = gen
            self._reset()
        if i >= MAX_EXPORT_SEQ:
            self.ignored += 1
            return -1
        n = self.sent_ns.shape[0]
        if i >= n:
            size = max(n * 2, i + 1)
            for name in ("sent_ns", "source", "fault", "chunks", "last_chunk_ns"):
                old = getattr(self, name)
                new = np.full(size, -1 if name == "chunks" else 0, old.dtype)
                new[:n] = old
                setattr(self, name, new)
        return i

    def sent(self, rid: int, t_ns: int) -> None:
        with self._lock:
            if (i := self._room(rid)) >= 0:
                self.sent_ns[i] = t_ns

    def done(self, rid: int, source: str) -> None:
        code = SOURCES.index(source) + 1 if source in SOURCES else 0
        with self._lock:
            if (i := self._room(rid)) >= 0:
                self.source[i] = code

    def failed(self, rid: int, kind: str) -> None:
        code = FAULT_KINDS.index(kind) + 1 if kind in FAULT_KINDS else 0
        with self._lock:
            if (i := self._room(rid)) >= 0:
                self.fault[i] = code

    def note_chunks(self, rid: int, n: int, t_ns: int) -> None:
        """n content chunks so far, the last one arrived at t_ns."""
        with self._lock:
            if (i := self._room(rid)) >= 0:
                self.chunks[i] = min(n, 2**31 - 1)
                self.last_chunk_ns[i] = t_ns

    def column(self, name: str, n: int) -> np.ndarray:
        """The first n entries of one array (padded with its 'not noted' value)."""
        a: np.ndarray = getattr(self, name)
        if a.shape[0] >= n:
            return a[:n]
        out = np.full(n, -1 if name == "chunks" else 0, a.dtype)
        out[: a.shape[0]] = a
        return out


WRITE_CHUNK = 1 << 16  # rows formatted at a time (bounds what is held while writing)
SLO_COLUMNS = ("met_ttft", "met_tpot", "met_latency", "met_all")  # per-request SLO verdicts
COLUMNS: tuple[Column, ...] = (
    ("id", "int"), ("qsl", "int"), ("query", "int"), ("scheduled_ns", "int"), ("issued_ns", "int"),
    ("sent_ns", "int"), ("first_token_ns", "int"), ("done_ns", "int"), ("tokens", "int"), ("source", "str"),
    ("fault", "str"), ("chunks", "int"), ("last_chunk_ns", "int"), *((name, "bool") for name in SLO_COLUMNS),
)
ROW_FIELDS = tuple(name for name, _ in COLUMNS)


def _times(a: np.ndarray, start: int) -> list[int | None]:
    """Each stamp relative to the run's start; None (null) where not reached (NOT_SET or 0)."""
    return [None if v == NOT_SET or v == 0 else v - start for v in a.tolist()]


def _names(codes: np.ndarray, names: tuple[str, ...]) -> list[str | None]:
    """Coded names (0: None, k: names[k - 1])."""
    table: list[str | None] = [None, *names]
    return [table[c] for c in codes.tolist()]


def check_export_path(path: str) -> str:
    """Before the run: the format the name says (.jsonl, .csv, .parquet) and, for Parquet, that
    pyarrow is there; a folder to write it in. ConfigError (key export) naming what to change."""
    fmt = file_format(path, "export")
    if fmt == "parquet":
        pyarrow_parquet(f"a Parquet export ({Path(path).name})", "export")
    if not Path(path).resolve().parent.is_dir():
        raise ConfigError(f"export={path}: no folder {Path(path).parent} to write it in", key="export")
    return fmt


def write_export(path: str | Path, outcome: Any, log: RequestLog | None) -> int:
    """Write the export of a finished run (`loadgen.engine.RunOutcome`) in the format its name says
    (`column_files`: JSONL with the header line first, CSV, Parquet with the header as schema
    metadata); the lines a JSONL file has (header included). ConfigError when the run left no
    per-sample records (the official engine)."""
    schedule, records = outcome.schedule, outcome.records
    if schedule is None or records is None:
        raise ConfigError("the per-request export needs proctor's engine (the official one keeps no "
                          "per-sample records)", key="export")
    nq = int(records.n_queries_issued)
    ns = int(schedule.query_offsets[nq]) if nq > 0 else 0
    start = int(records.start_ns)
    counts = np.diff(schedule.query_offsets[: nq + 1])
    query_of = np.repeat(np.arange(nq, dtype=np.int64), counts)
    failed = (np.zeros(ns, bool) if records.sample_failed is None
              else np.asarray(records.sample_failed[:ns]) != 0)
    eff = outcome.effective
    result = outcome.result
    att = None if result is None else result.attainment
    header = {
        "proctor_request_export": EXPORT_VERSION,
        "scenario": outcome.scenario,
        "mode": outcome.mode,
        "target_percentile": None if eff is None else float(eff.target_latency_percentile),
        "use_token_latencies": None if eff is None else bool(eff.use_token_latencies),
        "queries": nq,
        "samples": ns,
        "clock": "ns since the run's start",
        "slo_targets_ns": None if att is None else dict(att.targets_ns),
        "slo_source": None if att is None else att.source,
    }
    if log is None:
        log = RequestLog(1)
    sent, src, fault, chunks, last = (
        log.column(c, ns) for c in ("sent_ns", "source", "fault", "chunks", "last_chunk_ns")
    )
    # a failed sample has no count source; one the engine failed without a SUT fault is "failed"
    fault_codes = np.where((fault == 0) & failed, len(FAULT_KINDS) + 1, fault)
    done = np.asarray(records.sample_done_ns[:ns])
    ended = (done != NOT_SET) & ~failed  # a completed sample: judged against the SLO targets
    masks = {} if att is None else att.masks
    if file_format(path, "export") == "csv":  # the run's header beside the plain table
        Path(meta_path(path)).write_bytes(orjson.dumps(header, option=orjson.OPT_INDENT_2) + b"\n")
    with ColumnWriter(path, COLUMNS, meta=header, key="export") as w:
        for a in range(0, ns, WRITE_CHUNK):
            b = min(a + WRITE_CHUNK, ns)
            q = query_of[a:b]
            judged = ended[a:b].tolist()
            slo: list[list[bool | None]] = []
            for name in SLO_COLUMNS:
                mask = masks.get(name.removeprefix("met_"))
                if mask is None or mask.shape[0] < b:
                    slo.append([None] * (b - a))
                else:  # a sample that did not complete meets nothing, but is not judged here
                    slo.append([m if j else None for m, j in zip(mask[a:b].tolist(), judged, strict=True)])
            w.write([
                list(range(a, b)),
                np.asarray(schedule.sample_index[a:b]).tolist(),
                q.tolist(),
                _times(records.query_scheduled_ns[q], start),
                _times(records.query_issued_ns[q], start),
                _times(sent[a:b], start),
                _times(records.sample_first_token_ns[a:b], start),
                _times(done[a:b], start),
                np.asarray(records.sample_n_tokens[a:b]).tolist(),
                _names(np.where(failed[a:b], 0, src[a:b]), SOURCES),
                _names(fault_codes[a:b], (*FAULT_KINDS, "failed")),
                [None if c < 0 else c for c in chunks[a:b].tolist()],
                _times(last[a:b], start),
                *slo,
            ])
    return ns + 1


# --- reading an export back ---------------------------------------------------------------------------

MAX_CSV_CELL = 256  # characters of one CSV cell when reading an export back
KIND_OF = dict(COLUMNS)


MAX_META_BYTES = 64 * 1024  # a CSV export's header file, read back


def meta_path(path: str | Path) -> str:
    """Where a CSV export's header goes: beside it, `FILE.csv.meta.json`."""
    return f"{path}.meta.json"


def _read_meta(p: str) -> dict[str, Any]:
    """A CSV export's header file ({} where there is none); bounded, LogFormatError when it is not one."""
    meta = Path(meta_path(p))
    if not meta.is_file():
        return {}
    with open(meta, "rb") as f:
        raw = read_at_most(f, MAX_META_BYTES)
    if len(raw) > MAX_META_BYTES:
        raise LogFormatError(f"more than {MAX_META_BYTES} bytes", file=str(meta))
    try:
        header = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise LogFormatError(f"not JSON ({exc})", file=str(meta)) from None
    if not isinstance(header, dict) or header.get("proctor_request_export") != EXPORT_VERSION:
        raise LogFormatError("not a proctor request export header", file=str(meta))
    return header


def read_export(path: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The header and rows of an export file, JSONL, CSV or Parquet by its extension (bounded: lines,
    cells, rows; LogFormatError naming the line or row). A CSV export's header is its
    `FILE.csv.meta.json` ({} where there is none)."""
    fmt = file_format(path, "export")
    if fmt == "csv":
        return _read_meta(str(path)), _read_csv(str(path))
    if fmt == "parquet":
        return _read_parquet(str(path))
    return _read_jsonl(str(path))


def _read_jsonl(p: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    rows: list[dict[str, Any]] = []
    header: dict[str, Any] | None = None
    with open(p, "rb") as f:
        n = 0
        while raw := f.readline(MAX_EXPORT_LINE + 1):
            n += 1
            if len(raw) > MAX_EXPORT_LINE:
                raise LogFormatError(f"the line is longer than {MAX_EXPORT_LINE} bytes", file=p, line=n)
            try:
                obj = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                raise LogFormatError(f"not valid JSON ({exc})", file=p, line=n) from None
            if not isinstance(obj, dict):
                raise LogFormatError("expected a JSON object", file=p, line=n)
            if header is None:
                if obj.get("proctor_request_export") != EXPORT_VERSION:
                    raise LogFormatError("not a proctor request export (no header line)", file=p, line=n)
                header = obj
            else:
                rows.append(obj)
            if n > MAX_EXPORT_LINES:
                raise LogFormatError(f"more than {MAX_EXPORT_LINES} lines", file=p, line=n)
    if header is None:
        raise LogFormatError("the file is empty", file=p)
    return header, rows


def _cell(text: str, kind: str, p: str, line: int, name: str) -> Any:
    """A CSV cell back to its value (empty: None)."""
    if text == "":
        return None
    if kind == "str":
        return text
    if kind == "bool" and text in ("true", "false"):
        return text == "true"
    if kind == "int" and len(text) <= 20 and text.lstrip("-").isdigit():
        return int(text)
    raise LogFormatError(f"column '{name}' holds {text[:40]!r}, not a{'n' if kind == 'int' else ''} {kind}",
                         file=p, line=line)


def _read_csv(p: str) -> list[dict[str, Any]]:
    import csv

    rows: list[dict[str, Any]] = []
    with open(p, encoding="utf-8", newline="", errors="strict") as f:
        reader = csv.reader(f)
        try:
            names = next(reader, None)
            if names is None:
                raise LogFormatError("the file is empty", file=p)
            missing = [c for c in ROW_FIELDS if c not in names]
            if missing:
                raise LogFormatError(f"not a proctor request export: no column {', '.join(missing[:3])} (columns: "
                                     f"{', '.join(n[:40] for n in names[:20])})", file=p, line=1)
            for r in reader:
                if len(r) != len(names) or any(len(c) > MAX_CSV_CELL for c in r):
                    raise LogFormatError(f"expected {len(names)} cells of at most {MAX_CSV_CELL} characters",
                                         file=p, line=reader.line_num)
                rows.append({k: _cell(v, KIND_OF.get(k, "str"), p, reader.line_num, k) for k, v in zip(names, r,
                                                                                                    strict=True)})
                if len(rows) > MAX_EXPORT_LINES:
                    raise LogFormatError(f"more than {MAX_EXPORT_LINES} rows", file=p, line=reader.line_num)
        except csv.Error as exc:
            raise LogFormatError(f"not valid CSV ({exc})", file=p, line=reader.line_num) from None
        except UnicodeDecodeError:
            raise LogFormatError("not UTF-8 text", file=p, line=reader.line_num + 1) from None
    return rows


def _read_parquet(p: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    pq = pyarrow_parquet("reading a Parquet export")
    try:
        with open(p, "rb") as fh:
            pf = pq.ParquetFile(fh)
            if pf.metadata.num_rows > MAX_EXPORT_LINES:
                raise LogFormatError(f"more than {MAX_EXPORT_LINES} rows", file=p)
            meta = pf.schema_arrow.metadata or {}
            names = list(pf.schema_arrow.names)
            missing = [c for c in ROW_FIELDS if c not in names]
            if missing:
                raise LogFormatError(f"not a proctor request export: no column {', '.join(missing[:3])}", file=p)
            rows: list[dict[str, Any]] = []
            for batch in pf.iter_batches(batch_size=WRITE_CHUNK, columns=list(ROW_FIELDS)):
                rows += batch.to_pylist()
    except LogFormatError:
        raise
    except Exception as exc:  # noqa: BLE001 - pyarrow raises its own error types for a bad file
        why = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        raise LogFormatError(f"not a readable Parquet file ({why})", file=p) from None
    try:
        header = orjson.loads(meta.get(META_KEY, b"{}"))
    except orjson.JSONDecodeError:
        header = None
    if not isinstance(header, dict) or header.get("proctor_request_export") != EXPORT_VERSION:
        raise LogFormatError("not a proctor request export (no header in the schema metadata)", file=p)
    return header, rows


def _order(values: np.ndarray, k: int, p: float) -> int:
    """The official order statistic: sorted[int(k * p)] (clamped), k the official divisor."""
    values = np.sort(values)
    return int(values[min(int(k * p), values.shape[0] - 1)]) if values.shape[0] else 0


def figures(
    path: str | Path, percentiles: tuple[float, ...] = (0.5, 0.9, 0.95, 0.97, 0.99, 0.999), *,
    scenario: str | None = None, slo_targets_ns: dict[str, int] | None = None,
) -> dict[str, Any]:
    """The summary's figures recomputed from an export alone (ns; tokens/s), the official way:
    latency = done - scheduled of each completed sample; TTFT = first token - scheduled; TPOT =
    (latency - TTFT) // max(tokens - 1, 1); percentiles sorted[int(n * p)] over the n completed
    samples; tokens/s and requests/s over the last query's completion (Offline: the longest latency;
    requests/s (n - 1) / it, Offline n / it); and per-request SLO attainment against the header's
    targets (or `slo_targets_ns`): a completed sample within each, a failed one within none, goodput
    = requests/s x met / completed. `scenario` stands in for a header that does not say (a CSV without
    its meta file)."""
    header, rows = read_export(path)
    scenario = header.get("scenario") or scenario

    def col(name: str) -> np.ndarray:
        values = [NOT_SET if r.get(name) is None else r[name] for r in rows]
        for n, v in enumerate(values, 2):
            if type(v) is not int or not -(2**62) <= v <= 2**62:
                raise LogFormatError(f"'{name}' must be an integer or null, got {v!r:.40}", file=str(path), line=n)
        return np.array(values, np.int64)

    sched, first, done, tokens = col("scheduled_ns"), col("first_token_ns"), col("done_ns"), col("tokens")
    faulted = np.array([r.get("fault") is not None for r in rows], bool)
    ok = (done != NOT_SET) & ~faulted
    lat_all = done - sched
    lat = lat_all[ok]
    n = int(lat.shape[0])
    has_first = ok & (first != NOT_SET)
    ttft_all = first - sched
    ttft = ttft_all[has_first]
    tpot_all = (lat_all - ttft_all) // np.maximum(tokens - 1, 1)
    tpot = tpot_all[has_first]
    token_count = int(tokens[ok].sum())
    out: dict[str, Any] = {
        "completed": n,
        "token_count": token_count,
        "latency": {p: _order(lat, n, p) for p in percentiles},
        "ttft": {p: _order(ttft, n, p) for p in percentiles},
        "tpot": {p: _order(tpot, n, p) for p in percentiles},
        "latency_max": int(lat.max()) if n else 0,
    }
    queries = col("query")
    rate = float("nan")
    if rows:
        last = queries == queries.max()
        ended = done[last & (done != NOT_SET)]
        last_done = int(ended.max()) if ended.shape[0] else 0
        out["final_query_done_ns"] = last_done
        offline = scenario == "Offline"
        secs = (out["latency_max"] if offline else last_done) / 1e9
        out["tokens_per_second"] = token_count / secs if secs > 0 else float("nan")
        count = n if offline else max(n - 1, 0)
        rate = count / secs if secs > 0 else (float("nan") if count == 0 else float("inf"))
        out["requests_per_second"] = rate
    targets = header.get("slo_targets_ns") or slo_targets_ns
    measures = {"latency": (ok, lat_all), "ttft": (has_first, ttft_all), "tpot": (has_first, tpot_all)}
    if targets is not None and not (isinstance(targets, dict) and all(
        k in measures and type(v) is int and 0 <= v <= 2**62 for k, v in targets.items()
    )):
        raise LogFormatError(f"'slo_targets_ns' must map ttft, tpot, latency to ns, got {targets!r:.60}",
                             file=str(path), line=1)
    if targets:
        met: dict[str, int] = {}
        every = ok.copy()
        for name, target in targets.items():
            where, values = measures[name]
            within = where & (values <= int(target))
            met[name] = int(np.count_nonzero(within))
            every &= within
        met_all = int(np.count_nonzero(every))
        judged = n + int(np.count_nonzero(faulted))
        out["slo"] = {
            "targets_ns": dict(targets), "met": met, "met_all": met_all, "judged": judged,
            "attainment": met_all / judged if judged else 0.0,
            "goodput_per_s": rate * met_all / n if n else 0.0,
        }
    return out


__all__ = ["COLUMNS", "EXPORT_VERSION", "SOURCES", "RequestLog", "check_export_path", "figures", "meta_path", "read_export",
           "write_export"]
