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

VERSION = "MLPerf LoadGen v1.0"


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
            self._file = open(path_or_file, "w", encoding="utf-8", newline="\n")  # noqa: SIM115
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
    ) -> None:
        """One async `Sample` begin/end pair per sample (official ph b/e), from arrays of equal length.

        `issue_ns`/`complete_ns` are absolute on the run clock; the args hold them relative to issue.
        """
        if not self.enabled or sample_seq.shape[0] == 0:
            return
        pid = self._pid
        rel_issue = issue_ns - self._start
        chunks = []
        for s, q, i, b, e in zip(
            sample_seq.tolist(),
            query_seq.tolist(),
            sample_idx.tolist(),
            rel_issue.tolist(),
            (complete_ns - issue_ns).tolist(),
            strict=True,
        ):
            chunks.append(
                f'{{"name":"Sample","cat":"default","ph":"b","pid":{pid},"id":{s},"ts":{_us(b)},'
                f'"args":{{"sample_seq":{s},"query_seq":{q},"sample_idx":{i},"issue_start_ns":0,'
                f'"complete_ns":{e}}}}},\n'
                f'{{"name":"Sample","cat":"default","ph":"e", "pid":{pid},"id":{s},"ts":{_us(b + e)}}},\n'
            )
        with self._lock:
            self._file.write("".join(chunks))

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
