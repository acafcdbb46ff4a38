"""A dynamic batcher for model SUTs: one code path for every scenario.

Samples arrive as (response id, QSL index) arrays, from any number of issue calls. Worker threads
take up to `max_batch` queued samples at a time and run `process(indices) -> outputs` on them, then
hand `(ids, outputs)` to `complete`. A worker dispatches when a full batch is queued, when the
oldest queued sample has waited `max_wait_us`, or after `flush()` (FlushQueries: the issuer will
send nothing more for now). With `max_wait_us=0` batching is greedy: a free worker takes whatever
is queued, so batches grow only when the workers are busy - SingleStream runs at batch 1, Offline
in full batches, Server in between, with no scenario switch anywhere.

Completion is injected: the default completes through the batcher's sink (`start(sink)`: the run's
`CompletionSink`; until then `completion.ForwardingSink`, the module functions) by its array path
(one vectorised write per batch, no per-sample objects); `via_responses(fn)` adapts any
`QuerySamplesComplete`-style function (proctor's `query_samples_complete`, a test double), and
`official_complete` is the official `mlperf_loadgen`'s. Outputs are one row per sample (a 1-D
output becomes a column) so every sample's payload is the bytes of its row.

If `process` raises, the batch is still completed (with no data) so the run can end. Failures are
summarized, not echoed: the first is logged with its traceback, the first of each further kind
(exception type + message head) in one line, the rest only counted (`failures`); each is reported
to the run in progress (`report_failure`: the detail log counts them as errors). `close()` logs the
counts and raises the first error again (unless `raise_error=False`).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from proctor.errors import ConfigError, RunError
from proctor.loadgen.completion import ForwardingSink, failure_kind
from proctor.loadgen.sink import CompletionSink

Process = Callable[[np.ndarray], np.ndarray]  # QSL indices -> one output row per sample
Complete = Callable[[np.ndarray, np.ndarray | None], None]  # (response ids, outputs or None)

log = logging.getLogger(__name__)


def complete_arrays(ids: np.ndarray, outputs: np.ndarray | None) -> None:
    """proctor's module-level array completion path (`completion.complete_arrays`)."""
    from proctor.loadgen import completion

    completion.complete_arrays(ids, None, outputs)


def via_responses(fn: Callable[[list[Any]], Any]) -> Complete:
    """Adapt a function taking a list of QuerySampleResponse (proctor's `query_samples_complete`)."""
    from proctor.loadgen.types import QuerySampleResponse

    def complete(ids: np.ndarray, outputs: np.ndarray | None) -> None:
        if outputs is None:
            fn([QuerySampleResponse(i) for i in ids.tolist()])
        else:
            fn([QuerySampleResponse(i, outputs[k]) for k, i in enumerate(ids.tolist())])

    return complete


def official_complete(ids: np.ndarray, outputs: np.ndarray | None) -> None:
    """The official LoadGen's QuerySamplesComplete; it copies each row before returning."""
    import mlperf_loadgen as lg

    if outputs is None:
        lg.QuerySamplesComplete([lg.QuerySampleResponse(i, 0, 0) for i in ids.tolist()])
        return
    rows = np.ascontiguousarray(outputs)
    size = rows.strides[0] if rows.shape[0] else 0
    base = rows.ctypes.data
    lg.QuerySamplesComplete(
        [lg.QuerySampleResponse(i, base + k * size, size) for k, i in enumerate(ids.tolist())]
    )


class DynamicBatcher:
    """Queue -> batches of at most `max_batch` -> `process` on `workers` threads -> `complete`."""

    def __init__(
        self,
        process: Process,
        complete: Complete | None = None,
        *,
        max_batch: int = 64,
        max_wait_us: float = 0.0,
        workers: int = 2,
        name: str = "batcher",
        clock: Callable[[], int] = time.monotonic_ns,
    ) -> None:
        if max_batch < 1:
            raise ConfigError(f"must be >= 1, not {max_batch}", key="max_batch")
        if max_wait_us < 0:
            raise ConfigError(f"must be >= 0, not {max_wait_us}", key="max_wait_us")
        if workers < 1:
            raise ConfigError(f"must be >= 1, not {workers}", key="workers")
        self._process = process
        self.name = name
        self.sink: CompletionSink = ForwardingSink()  # the run's sink once started
        self._complete = complete if complete is not None else self._complete_to_sink
        self.max_batch = max_batch
        self.max_wait_ns = int(max_wait_us * 1000)
        self._clock = clock
        self._cond = threading.Condition(threading.Lock())
        self._chunks: deque[list[Any]] = deque()  # [ids, indices, arrival_ns]
        self._pending = 0
        self._draining = False  # flush() asked: dispatch without waiting
        self._closing = False
        self.batch_sizes = np.zeros(max_batch + 1, np.int64)  # histogram: batches of each size
        self.error: BaseException | None = None
        self.failures: dict[str, int] = {}  # failed batches by kind (exception type + message head)
        self.dropped = 0  # samples still queued at close (an aborted run's leftovers)
        self._threads = [
            threading.Thread(target=self._work, name=f"{name}-{i}", daemon=True) for i in range(workers)
        ]
        for t in self._threads:
            t.start()

    def start(self, sink: CompletionSink) -> None:
        """Complete (and report failures) through `sink` from now on (`sink.StartableSUT`)."""
        self.sink = sink

    def _complete_to_sink(self, ids: np.ndarray, outputs: np.ndarray | None) -> None:
        self.sink.complete_arrays(ids, None, outputs)

    # --- issue side ---------------------------------------------------------------------------

    def submit(self, ids: np.ndarray | Sequence[int], indices: np.ndarray | Sequence[int]) -> None:
        ids = np.asarray(ids, np.int64).reshape(-1)
        indices = np.asarray(indices, np.int64).reshape(-1)
        if ids.shape != indices.shape:
            raise ValueError(f"{ids.size} ids but {indices.size} indices")
        if not ids.size:
            return
        with self._cond:
            if self._closing:
                raise RunError("the batcher is closed")
            self._chunks.append([ids, indices, self._clock()])
            self._pending += ids.size
            full = self._pending // self.max_batch
            self._cond.notify(max(1, min(full, len(self._threads))))

    def flush(self) -> None:
        with self._cond:
            if self._pending:
                self._draining = True
                self._cond.notify_all()

    def close(self, timeout: float = 1.0, *, raise_error: bool = True) -> None:
        """Stop: drop what is still queued (a finished run has nothing queued; an interrupted or
        timed-out one must not wait for it), give the workers' current batches `timeout` seconds in
        all, log the failure counts and raise the first processing error if any."""
        with self._cond:
            self._closing = True
            self.dropped += self._pending
            self._chunks.clear()
            self._pending = 0
            self._cond.notify_all()
        deadline = time.monotonic() + timeout
        for t in self._threads:
            t.join(max(0.0, deadline - time.monotonic()))
        if self.dropped:  # what ClosableSUT.close() promises after an interrupted or timed-out run, whose
            # logs and verdict already say how many samples completed: not a warning on the user's screen
            log.info("%s: %d queued samples dropped at close", self.name, self.dropped)
        if self.failures:
            log.warning(
                "%s: %d batch(es) failed: %s",
                self.name,
                sum(self.failures.values()),
                "; ".join(f"{n} x {kind}" for kind, n in self.failures.items()),
            )
            self.failures = {}  # said once
        if self.error is not None and raise_error:
            raise RunError(f"processing a batch failed: {self.error!r}") from self.error

    @property
    def pending(self) -> int:
        return self._pending

    @property
    def batches(self) -> int:
        return int(self.batch_sizes.sum())

    @property
    def samples(self) -> int:
        return int(np.dot(self.batch_sizes, np.arange(self.batch_sizes.size)))

    # --- workers ------------------------------------------------------------------------------

    def _take(self) -> tuple[np.ndarray, np.ndarray]:
        """Pop up to max_batch queued samples, oldest first (called with the lock held)."""
        want = min(self.max_batch, self._pending)
        ids_parts, idx_parts = [], []
        got = 0
        while got < want:
            chunk = self._chunks[0]
            n = chunk[0].size
            k = min(n, want - got)
            ids_parts.append(chunk[0][:k])
            idx_parts.append(chunk[1][:k])
            if k == n:
                self._chunks.popleft()
            else:
                chunk[0], chunk[1] = chunk[0][k:], chunk[1][k:]
            got += k
        self._pending -= got
        if not self._pending:
            self._draining = False
        if len(ids_parts) == 1:
            return ids_parts[0], idx_parts[0]
        return np.concatenate(ids_parts), np.concatenate(idx_parts)

    def _next_batch(self) -> tuple[np.ndarray, np.ndarray] | None:
        with self._cond:
            while True:
                n = self._pending
                if n >= self.max_batch or (n and (self._draining or self._closing)):
                    break
                if n:
                    left = self._chunks[0][2] + self.max_wait_ns - self._clock()
                    if left <= 0:
                        break
                    self._cond.wait(left / 1e9)
                elif self._closing:
                    return None
                else:
                    self._cond.wait()
            batch = self._take()
            self.batch_sizes[batch[0].size] += 1
            if self._pending:
                self._cond.notify()
            return batch

    def _work(self) -> None:
        while (batch := self._next_batch()) is not None:
            ids, indices = batch
            outputs: np.ndarray | None
            try:
                outputs = np.asarray(self._process(indices))
                outputs = outputs.reshape(ids.size, -1)
            except BaseException as exc:  # noqa: BLE001 - the run must still end; close() re-raises
                self._failed(exc, f"batch of {ids.size} samples")
                outputs = None
            try:
                self._complete(ids, outputs)
            except BaseException as exc:  # noqa: BLE001
                self._failed(exc, f"completing a batch of {ids.size} samples")

    def _failed(self, exc: BaseException, what: str) -> None:
        """Count a failure by kind; log the first with its traceback, a new kind in one line."""
        kind = failure_kind(exc)
        with self._cond:
            first = self.error is None
            if first:
                self.error = exc
            n = self.failures.get(kind, 0) + 1
            self.failures[kind] = n
        if first:
            log.error("%s: %s failed (later failures are counted, not printed)", self.name, what, exc_info=exc)
        elif n == 1:
            log.error("%s: %s failed: %s", self.name, what, kind)
        with contextlib.suppress(Exception):  # reporting must never stop a worker
            self.sink.report_failure(exc, f"{self.name}: {what}")


__all__ = ["Complete", "DynamicBatcher", "Process", "complete_arrays", "official_complete", "via_responses"]
