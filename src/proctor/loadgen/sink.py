"""The SUT seam: the engine hands a SUT a `CompletionSink`; the SUT reports through it.

A SUT needs only `issue_query` and `flush_queries` (`types.SystemUnderTest`). The rest of its
lifecycle is optional and declared here as Protocols, so the engine checks a capability by type,
never by probing attributes:

    start(sink)   before the first issue: the sink to complete through (`StartableSUT`)
    warm_up(n)    after start, before the timed part: connect and warm up (`WarmUpSUT`)
    report()      after the run: lines the SUT wants kept in the logs (`ReportingSUT`)
    close()       after the run, within about a second (`types.ClosableSUT`)

Every sink call may come from any thread and takes an optional `t_ns`: the event's time on the
engine clock (`time.perf_counter_ns`), taken where it was seen; without it the sink reads the clock.
proctor's engine starts a SUT with the run's `completion.RunSink`, which forwards to the
`CompletionTracker` of the phase in progress (a run has one per phase: accuracy, performance, each
FindPeakPerformance probe); the tracker, the official-engine route and a KServe node's router are
sinks too.
A SUT that never gets a sink (the official API's harnesses) completes through the module-level
functions in `completion`, which forward to the run in progress.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

ResponseCallback = Callable[[Any], None]  # called with a response right before its data is copied


@runtime_checkable
class CompletionSink(Protocol):
    """Where a SUT reports what became of the samples it was issued."""

    def complete(
        self,
        responses: Sequence[Any],
        response_cb: ResponseCallback | None = None,
        *,
        t_ns: int | None = None,
    ) -> None:
        """Samples finished (`QuerySampleResponse`s: id, data, n_tokens)."""

    def complete_arrays(
        self,
        ids: np.ndarray,
        n_tokens: np.ndarray | None = None,
        data: np.ndarray | None = None,
        *,
        t_ns: int | None = None,
    ) -> None:
        """Samples finished, by id array (`data`: one row per id): no Python object per sample."""

    def first_token(
        self,
        responses: Sequence[Any],
        response_cb: ResponseCallback | None = None,
        *,
        t_ns: int | None = None,
    ) -> None:
        """The first output token of samples (token-latency runs)."""

    def fail(self, ids: Sequence[int], reason: str) -> None:
        """Samples the SUT could not answer: errors, never results (the run is invalid)."""

    def report_failure(self, exc: BaseException | str, where: str = "") -> bool:
        """A failure in the SUT's own threads: the first of each kind is logged, later ones counted.
        False when nothing takes it (no run in progress)."""

    def output_logged(self, response_id: int) -> bool:
        """Whether this sample's output goes to the accuracy log (so a SUT ships only those)."""


@runtime_checkable
class StartableSUT(Protocol):
    """A SUT that takes its sink before the first issue (and may start its workers there)."""

    def start(self, sink: CompletionSink) -> None: ...


@runtime_checkable
class WarmUpSUT(Protocol):
    """A SUT that gets ready before the clock starts: the rules' run procedure has the SUT start up
    and signal readiness before LoadGen starts its clock (Inference rules, LoadGen Operation, steps
    2-3), so connections opened and requests sent here are not timed. `in_flight`: the most queries
    the run keeps in flight when the engine knows it (a closed loop's N, SingleStream 1, MultiStream
    its samples per query), 0 when it does not (Server, Offline). Returns one line saying what was
    done ("" for nothing), which the engine logs before the first phase (detail key proctor_warmup).
    Not to be confused with `types.WarmableSUT.warm_issue`, the dry issue path before each query."""

    def warm_up(self, in_flight: int) -> str: ...


@runtime_checkable
class ReportingSUT(Protocol):
    """A SUT with its own account of the run (token-count sources, faults by kind, lost samples):
    the run session writes these lines into the logs before they close."""

    def report(self) -> list[str]: ...


__all__ = ["CompletionSink", "ReportingSUT", "ResponseCallback", "StartableSUT", "WarmUpSUT"]
