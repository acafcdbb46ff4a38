"""A synthetic system under test: a real, timed workload without a model.

Worker threads take queued samples in batches of up to `batch`, "serve" each batch for a drawn
service time (one draw per batch, as an accelerator whose batch cost does not depend on its size),
then complete every sample with a deterministic payload: the sample's QSL index as 8 little-endian
bytes, so accuracy runs have data to check. `workers=0` completes inline inside the issue call
(the instant SUT used by the differential tests). With `tokens=N` each sample reports its first
token after 1/N of the service time and completes with n_tokens=N.

Samples travel as numpy arrays (`issue_query_arrays`) unless `api=objects`, which exercises the
QuerySample path. The in-memory QSL records what is loaded so tests can check the engine loads
every sample it issues.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import deque
from typing import Any

import numpy as np

from proctor.errors import ConfigError
from proctor.loadgen import completion
from proctor.loadgen.qsl import SimpleQSL
from proctor.loadgen.sink import CompletionSink
from proctor.loadgen.types import QuerySample, QuerySampleResponse
from proctor.suts.params import param, takes
from proctor.typed_records import record

log = logging.getLogger(__name__)
DISTRIBUTIONS = ("const", "exp", "lognormal")
MODES = ("sleep", "spin")
COMPACT_MIN = 1 << 16  # issue calls above this many samples are queued compactly


class InMemoryQSL(SimpleQSL):
    """A QSL of `total` samples of which `perf` fit in memory; remembers what is loaded."""

    def __init__(self, total: int = 1024, perf: int = 256, name: str = "synthetic-qsl") -> None:
        if total < 1 or not 1 <= perf <= total:
            raise ConfigError(f"need 1 <= perf ({perf}) <= total ({total})", key="qsl")
        super().__init__(total, perf, name)
        self.loaded = np.zeros(total, np.int64)  # load count per index (MultiStream sets repeat entries)
        self.load_calls: list[int] = []  # size of each load call
        self.ever_loaded = np.zeros(total, bool)

    def load_samples(self, indices: list[int]) -> None:
        idx = np.asarray(indices, np.int64)
        np.add.at(self.loaded, idx, 1)
        self.ever_loaded[idx] = True
        self.load_calls.append(int(idx.size))

    def unload_samples(self, indices: list[int]) -> None:
        np.subtract.at(self.loaded, np.asarray(indices, np.int64), 1)


@record(frozen=True, slots=True)
class SyntheticParams:
    service_us: float = 100.0
    dist: str = "const"
    sigma: float = 0.5  # lognormal shape
    workers: int = 2
    batch: int = 1
    mode: str = "sleep"
    tokens: int = 0
    seed: int = 0
    api: str = "arrays"

    def __post_init__(self) -> None:
        if self.dist not in DISTRIBUTIONS:
            raise ConfigError(
                f"dist must be one of {', '.join(DISTRIBUTIONS)}, not '{self.dist}'", key="dist"
            )
        if self.mode not in MODES:
            raise ConfigError(f"mode must be one of {', '.join(MODES)}, not '{self.mode}'", key="mode")
        if self.api not in ("arrays", "objects"):
            raise ConfigError(f"api must be arrays or objects, not '{self.api}'", key="api")
        for key in ("workers", "tokens", "seed"):
            if getattr(self, key) < 0:
                raise ConfigError("must be >= 0", key=key)
        if self.batch < 1:
            raise ConfigError("must be >= 1", key="batch")
        for key in ("service_us", "sigma"):  # nan/inf would kill the worker threads mid-run
            value = getattr(self, key)
            if not (math.isfinite(value) and value >= 0):
                raise ConfigError(f"must be a finite number >= 0, not {value}", key=key)
        if self.service_us * 1000 >= 2**62:
            raise ConfigError(f"{self.service_us:g} us is too long for a service time", key="service_us")
        if self.tokens == 1:
            raise ConfigError("token latencies need at least 2 tokens", key="tokens")


class SyntheticSUT:
    issue_from_completion = True  # issuing only queues: the closed loop may issue from a worker
    def __init__(self, params: SyntheticParams | None = None) -> None:
        self.params = p = params or SyntheticParams()
        self._rng = np.random.default_rng(p.seed)
        self._rng_lock = threading.Lock()
        # (ids, indices); a large call is kept compact: (first id, indices in their narrowest type)
        self._queue: deque[tuple[np.ndarray | int, np.ndarray]] = deque()
        self._cv = threading.Condition()
        self._closed = False
        self._stop = threading.Event()  # set by close(): sleeping workers wake at once
        self.issued_samples = 0
        self.flushes = 0
        self.sink: CompletionSink = completion.ForwardingSink()  # the run's sink once started
        self._threads = [
            threading.Thread(target=self._worker, name=f"synthetic-sut-{i}", daemon=True)
            for i in range(p.workers)
        ]
        for t in self._threads:
            t.start()
        if p.api == "objects":
            self.issue_query_arrays = None  # type: ignore[assignment]  # the engine then uses issue_query

    @property
    def name(self) -> str:
        p = self.params
        return (
            f"synthetic(service_us={p.service_us:g},dist={p.dist},workers={p.workers},"
            f"batch={p.batch},mode={p.mode},tokens={p.tokens})"
        )

    # --- the SUT interface ----------------------------------------------------------------------

    def start(self, sink: CompletionSink) -> None:
        """Complete through the run's sink (`sink.StartableSUT`); until then, the module functions."""
        self.sink = sink

    def issue_query_arrays(self, ids: np.ndarray, indices: np.ndarray) -> None:
        self._submit(ids, indices)

    def issue_query(self, samples: list[QuerySample]) -> None:
        n = len(samples)
        ids = np.fromiter((s.id for s in samples), np.int64, n)
        idx = np.fromiter((s.index for s in samples), np.int64, n)
        self._submit(ids, idx)

    def flush_queries(self) -> None:
        self.flushes += 1

    def close(self, timeout: float = 1.0) -> None:
        """Stop within `timeout` seconds in all: queued samples are dropped, a worker's current
        service time is cut short (its samples are not completed)."""
        with self._cv:
            self._closed = True
            self._queue.clear()
            self._stop.set()
            self._cv.notify_all()
        deadline = time.monotonic() + timeout
        for t in self._threads:
            t.join(max(0.0, deadline - time.monotonic()))

    def __enter__(self) -> SyntheticSUT:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- the workload ---------------------------------------------------------------------------

    def _submit(self, ids: np.ndarray, idx: np.ndarray) -> None:
        self.issued_samples += len(ids)
        if not self._threads:
            for a in range(0, len(ids), self.params.batch):
                self._serve(ids[a : a + self.params.batch], idx[a : a + self.params.batch])
            return
        item: tuple[np.ndarray | int, np.ndarray] = (ids, idx)
        n = len(ids)
        if n > COMPACT_MIN and int(ids[-1]) - int(ids[0]) == n - 1 and bool(np.all(np.diff(ids) == 1)):
            top = int(idx.max())
            small = np.uint16 if top < 1 << 16 else np.uint32 if top < 1 << 32 else np.int64
            item = (int(ids[0]), idx.astype(small) if idx.min() >= 0 else idx)  # 2 bytes a sample, not 16
        with self._cv:
            self._queue.append(item)
            self._cv.notify()

    def _take(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Up to `batch` samples from the head of the queue; None when closed."""
        batch = self.params.batch
        with self._cv:
            while not self._queue:
                if self._closed:
                    return None
                self._cv.wait()
            ids, idx = self._queue.popleft()
            if len(idx) > batch:
                rest = ids + batch if isinstance(ids, int) else ids[batch:]
                self._queue.appendleft((rest, idx[batch:]))
                ids, idx = (ids if isinstance(ids, int) else ids[:batch]), idx[:batch]
            if self._queue:
                self._cv.notify()
        if isinstance(ids, int):
            return np.arange(ids, ids + len(idx), dtype=np.int64), idx.astype(np.int64)
        return ids, idx

    def _worker(self) -> None:
        while (item := self._take()) is not None:
            try:
                self._serve(*item)
            except BaseException as exc:  # noqa: BLE001 - a worker must outlive one bad batch
                if not self.sink.report_failure(exc, "synthetic SUT worker"):
                    log.error("synthetic SUT worker failed: %s", completion.failure_kind(exc))

    def _service_ns(self) -> int:
        p = self.params
        if p.service_us <= 0:
            return 0
        if p.dist == "const":
            return int(p.service_us * 1000)
        with self._rng_lock:
            if p.dist == "exp":
                draw = self._rng.exponential(p.service_us)
            else:  # lognormal with the requested mean
                draw = self._rng.lognormal(np.log(p.service_us) - p.sigma**2 / 2, p.sigma)
        return int(draw * 1000)

    def _busy(self, ns: int) -> None:
        if ns <= 0:
            return
        if self.params.mode == "sleep":
            self._stop.wait(ns * 1e-9)
            return
        end = time.perf_counter_ns() + ns
        while time.perf_counter_ns() < end and not self._stop.is_set():
            pass

    def _serve(self, ids: np.ndarray, idx: np.ndarray) -> None:
        p = self.params
        service = self._service_ns()
        if self._stop.is_set():
            return
        payload = idx.astype("<i8").reshape(-1, 1)
        if p.tokens:
            first = service // p.tokens
            self._busy(first)
            self.sink.first_token(
                [QuerySampleResponse(i, row) for i, row in zip(ids.tolist(), payload, strict=True)]
            )
            self._busy(service - first)
            if self._stop.is_set():
                return
            self.sink.complete_arrays(ids, np.full(len(ids), p.tokens, np.int64), data=payload)
        else:
            self._busy(service)
            if self._stop.is_set():
                return
            self.sink.complete_arrays(ids, None, data=payload)


_D = SyntheticParams()


@record(frozen=True, slots=True)
class SyntheticSpec:
    """`--sut synthetic:k=v,...`: the SUT's parameters (defaults from SyntheticParams) and its QSL's."""

    service_us: float = param(_D.service_us, "service time per batch, microseconds", low=0)
    dist: str = param(_D.dist, "service time distribution", choices=DISTRIBUTIONS)
    sigma: float = param(_D.sigma, "lognormal shape", low=0)
    workers: int = param(_D.workers, "worker threads (0: complete inline)", low=0)
    batch: int = param(_D.batch, "largest batch a worker serves", low=1)
    mode: str = param(_D.mode, "how service time passes", choices=MODES)
    tokens: int = param(_D.tokens, "output tokens per sample (0: no token latencies; else at least 2)", low=0)
    seed: int = param(_D.seed, "random seed of the service times", low=0)
    api: str = param(_D.api, "completion API", choices=("arrays", "objects"))
    total: int = param(1024, "QSL total sample count", low=1)
    perf: int | None = param(None, "QSL performance sample count (at most total)", low=1, shown="min(256, total)")


@takes(SyntheticSpec, "synthetic")
def from_params(p: SyntheticSpec) -> tuple[SyntheticSUT, InMemoryQSL]:
    """`--sut synthetic:service_us=200,workers=4,total=1024,perf=256` -> (sut, qsl)."""
    sp = SyntheticParams(**{name: getattr(p, name) for name in SyntheticParams.__dataclass_fields__})
    return SyntheticSUT(sp), InMemoryQSL(p.total, min(256, p.total) if p.perf is None else p.perf)


class FixedServiceQueue:
    """One server with a fixed service time per query, first come first served, in virtual time:
    query k finishes at max(its arrival, query k-1's finish) + service, and one thread completes
    it at that instant via `complete(item)`. Its capacity is exactly 1 / service queries/s and its
    latencies depend only on the arrival times, not on how late the thread wakes (a late wake-up
    delays one completion, never the ones after it), so the highest rate meeting a latency bound is
    set by queueing. Engine-neutral: `complete` is the engine's completion call, so the same queue
    serves proctor and the official LoadGen in side-by-side searches (bench, find-peak tests)."""

    def __init__(self, service_s: float, complete: Any) -> None:
        self.service_ns = int(service_s * 1e9)
        self.complete = complete
        self._q: deque[tuple[int, Any]] = deque()
        self._cv = threading.Condition()
        self._closed = False
        self._last_finish = 0
        self._thread = threading.Thread(target=self._loop, name="fixed-service-queue", daemon=True)
        self._thread.start()

    def put(self, item: Any) -> None:
        """One query arrives now."""
        now = time.monotonic_ns()
        with self._cv:
            self._last_finish = max(now, self._last_finish) + self.service_ns
            self._q.append((self._last_finish, item))
            self._cv.notify()

    def _loop(self) -> None:
        while True:
            with self._cv:
                while not self._q and not self._closed:
                    self._cv.wait()
                if not self._q:
                    return
                finish, item = self._q.popleft()
            left = finish - time.monotonic_ns()
            if left > 0:
                time.sleep(left * 1e-9)
            self.complete(item)

    def close(self) -> None:
        """Completes what is queued, then stops the thread."""
        with self._cv:
            self._closed = True
            self._cv.notify()
        self._thread.join()
