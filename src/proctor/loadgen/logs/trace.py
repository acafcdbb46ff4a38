"""mlperf_log_trace.json: a Chrome trace (chrome://tracing, Perfetto) in the official layout.

Events are `X` spans and per-sample async `b`/`e` pairs, timestamps in microseconds with 3
decimals; the file ends with a `LastTrace` event and `otherData`. With tracing off the official
leaves an empty file, and so does `TraceLog(path, enabled=False)`. Per-sample events are written
from whole arrays after the run, never from the timed path.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import IO, Any

import numpy as np
import orjson

from proctor.loadgen.records import NOT_SET
from proctor.trees import open_output

VERSION = "MLPerf LoadGen v1.0"


_FRAC = [f"{k:03d}" for k in range(1000)]


def _us(ns: int) -> str:
    return f"{ns / 1000.0:.3f}"


class TraceLog:
    """Trace writer; `ts` values are ns relative to `start_ns` (the run's clock origin)."""

    def __init__(
        self,
        path_or_file: str | Path | IO[str],
        *,
        enabled: bool = True,
        start_ns: int = 0,
        pid: int | None = None,
    ) -> None:
        if hasattr(path_or_file, "write"):
            self._file: IO[str] = path_or_file  # type: ignore[assignment]
            self._owns = False
        else:
            self._file = open_output(path_or_file)  # never through a link placed in the folder
            self._owns = True
        self.enabled = enabled
        self._start = start_ns
        self._pid = os.getpid() if pid is None else pid
        self._lock = threading.Lock()
        self._closed = False
        if enabled:
            self._file.write('{"traceEvents":[\n')

    def span(
        self,
        name: str,
        start_ns: int,
        dur_ns: int,
        *,
        tid: int | None = None,
        args: dict[str, Any] | None = None,
    ) -> None:
        """A complete (`ph: X`) event."""
        if not self.enabled:
            return
        tid = threading.get_native_id() if tid is None else tid
        line = (
            f'{{"name":"{name}","ph":"X","pid":{self._pid},"tid":{tid},"ts":{_us(start_ns - self._start)},'
            f'"dur":{_us(dur_ns)},"args":{orjson.dumps(args or {}).decode()}}},\n'
        )
        with self._lock:
            self._file.write(line)

    def samples(
        self,
        sample_seq: np.ndarray,
        query_seq: np.ndarray,
        sample_idx: np.ndarray,
        issue_ns: np.ndarray,
        complete_ns: np.ndarray,
        *,
        scheduled_ns: np.ndarray | None = None,
        first_token_ns: np.ndarray | None = None,
        n_tokens: np.ndarray | None = None,
    ) -> None:
        """One async `Sample` begin/end pair per sample (official ph b/e), from arrays of equal length.

        Times are absolute on the run clock; the args hold them relative to issue. Besides the
        official args (sample_seq, query_seq, sample_idx, issue_start_ns, complete_ns), proctor adds
        `scheduled_ns` (the query's scheduled time: <= 0 when the issue was late) when given, and
        `n_tokens` plus `first_token_ns` (left out where it is NOT_SET) when `n_tokens` is given, so
        a report can count latency from the schedule and draw TTFT/TPOT per sample.
        """
        n = int(sample_seq.shape[0])
        if not self.enabled or n == 0:
            return
        rel_issue = issue_ns - self._start
        rel_end = rel_issue + (complete_ns - issue_ns)
        if min(int(rel_issue.min()), int(rel_end.min())) < 0:  # never from the engine: _us's exact text
            bu, br = [_us(x) for x in rel_issue.tolist()], [""] * n
            eu, er = [_us(x) for x in rel_end.tolist()], [""] * n
            dot = ""
        else:  # integer formatting of the microseconds is the same text as _us, and faster
            bu, br = (a.tolist() for a in np.divmod(rel_issue, 1000))
            eu, er = (a.tolist() for a in np.divmod(rel_end, 1000))
            br, er = [_FRAC[x] for x in br], [_FRAC[x] for x in er]
            dot = "."
        seq = sample_seq.tolist()
        cols: list[list[Any]] = [seq, bu, br, seq, query_seq.tolist(), sample_idx.tolist(),
                                 (complete_ns - issue_ns).tolist()]
        extra = ""
        if scheduled_ns is not None:
            cols.append((scheduled_ns - issue_ns).tolist())
            extra += ',"scheduled_ns":%d'
        ft: list[int] | None = None  # relative first-token times; rows without one are marked in `has`
        has = None
        if n_tokens is not None:
            cols.append(n_tokens.tolist())
            extra += ',"n_tokens":%d'
            if first_token_ns is not None:
                has = first_token_ns != NOT_SET
                ft = (first_token_ns - issue_ns).tolist()
        pid = self._pid
        head = (f'{{"name":"Sample","cat":"default","ph":"b","pid":{pid},"id":%d,"ts":%s{dot}%s,'
                '"args":{"sample_seq":%d,"query_seq":%d,"sample_idx":%d,"issue_start_ns":0,"complete_ns":%d')
        tail = f'}}}},\n{{"name":"Sample","cat":"default","ph":"e", "pid":{pid},"id":%d,"ts":%s{dot}%s}},\n'
        plain, with_first = head + extra + tail, head + extra + ',"first_token_ns":%d' + tail
        end = [seq, eu, er]
        if ft is None or has is None or not has.any():
            text = "".join([plain % row for row in zip(*cols, *end, strict=True)])
        elif has.all():
            text = "".join([with_first % row for row in zip(*cols, ft, *end, strict=True)])
        else:  # some samples have no first token: their events leave first_token_ns out
            k = len(cols)
            text = "".join([
                with_first % row if h else plain % (row[:k] + row[k + 1 :])
                for h, row in zip(has.tolist(), zip(*cols, ft, *end, strict=True), strict=True)
            ])
        with self._lock:
            self._file.write(text)

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self.enabled:
                epoch_us = time.time_ns() / 1000.0
                self._file.write(
                    '{"name":"LastTrace"}\n],\n"displayTimeUnit":"ns",\n"otherData":{\n'
                    f'"ts":{epoch_us:.3f},\n"version":"{VERSION}"\n}}\n}}\n'
                )
            self._file.flush()
            if self._owns:
                self._file.close()

    def __enter__(self) -> TraceLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
