"""What a SUT did wrong, as data: each kind of fault, its rank as the cause of a run's verdict, the
line said the moment it is first seen, and the advice that follows from it.

A run's verdict names its true cause first (`app.session.verdict`). A SUT fault outranks every
performance check (min_duration, min queries, early stopping, latency bounds): those follow from
it, so they are listed as facts without their advice. Among faults, the order of `FAULTS` is the
rank: the fault that ended the run (the SUT raised, stopped the run, answered only ids that were
never issued) before the ones it merely logged (a sample completed twice), and the stuck limit
last (a SUT that never answers is stuck for a reason the earlier kinds name when they are seen).

Live: the first fault of each kind goes to the run's notice hook at once (one line; later ones are
counted, and one count line per kind follows at the end of the phase), so a user sees within a
second what the detail log would tell them after the run. The tally is thread-safe: SUT threads add
to it under the completion tracker's lock, so a notice hook must only queue its line.

Light on purpose (no numpy): `proctor run --help` reads STUCK_LIMIT_S from here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from enum import StrEnum

from proctor.loadgen.option_names import NO_LABELS, OptionNames
from proctor.typed_records import record

STUCK_LIMIT_S = 60  # the engine gives up on a SUT after max(this, 2 x min_duration) without a completion
NOTICE_MIN_S = 3.0  # "nothing has completed" is said after max(this, NOTICE_FACTOR x expected latency)
NOTICE_FACTOR = 10.0

COMPLETE_HOW = (
    "the SUT must call proctor.query_samples_complete (QuerySamplesComplete) once for each issued sample, "
    "from any thread, with QuerySampleResponse(sample.id) (the id it was given, not sample.index)"
)
# The options a class's advice names ({option} in it), each with its words where the caller gives no
# label (OptionNames): the stuck limit is EngineOptions.timeout_s; a raising SUT's traceback is on the
# exception the run raises (RunError, chained to the SUT's).
ADVICE_OPTIONS = {"timeout_s": "timeout_s", "debug": "the exception the run raised"}


class FaultKind(StrEnum):
    RAISED = "raised"  # the SUT (or QSL) raised while queries were issued: the run ended there
    ABORTED = "aborted"  # the SUT stopped the run (sink.abort: its endpoint stopped answering)
    UNKNOWN_ID = "unknown_id"  # a completion with a response id that was never issued
    NOT_AN_ID = "not_an_id"  # a completion that is not a response with an integer id
    STALE_ID = "stale_id"  # a completion of a sample of an earlier test or phase
    AFTER_FAIL = "after_fail"  # a sample completed after the SUT failed it
    DUPLICATE = "duplicate"  # a sample completed twice
    FAILED = "failed"  # samples the SUT failed (fail_samples): no result
    STALLED = "stalled"  # nothing completed for the stuck limit: the run gave up waiting


@record(frozen=True, slots=True)
class FaultClass:
    """One kind of fault: `first` is said the moment it is first seen (`{detail}`: that instance);
    `cause` is the verdict's words (`{n}` the count, `{detail}` the first instance); `advice` what
    to change, following from the cause (`{timeout_s}`, ...: an option of ADVICE_OPTIONS, named as
    the caller names it)."""

    kind: FaultKind
    first: str
    cause: str
    advice: str

    def advice_for(self, names: OptionNames) -> str:
        return self.advice.format(**{option: names.name(option, own) for option, own in ADVICE_OPTIONS.items()})


# In rank order: the first kind a run has is its verdict's first line.
FAULTS: tuple[FaultClass, ...] = (
    FaultClass(
        FaultKind.RAISED,
        "the SUT raised {detail}",
        "the SUT raised {detail}",
        "fix the SUT ({debug} shows its traceback)",
    ),
    FaultClass(
        FaultKind.ABORTED,
        "the SUT stopped the run: {detail}",
        "the SUT stopped the run: {detail}",
        "find out why it stopped (the server's own log), then run again",
    ),
    FaultClass(
        FaultKind.UNKNOWN_ID,
        "the SUT completed response id {detail}: no sample was issued with that id",
        "the SUT completed {n} response id(s) that were never issued (first: {detail})",
        "complete each sample with the id it was issued: QuerySampleResponse(sample.id); sample.index is "
        "the QSL index, not an id",
    ),
    FaultClass(
        FaultKind.NOT_AN_ID,
        "the SUT passed {detail} where a response belongs",
        "the SUT passed {n} value(s) that are not responses with an integer id (first: {detail})",
        "pass a list of QuerySampleResponse(sample.id, ...), one per finished sample",
    ),
    FaultClass(
        FaultKind.STALE_ID,
        "the SUT completed response id {detail}: a sample of an earlier test or phase",
        "the SUT completed {n} response id(s) of an earlier test or phase (first: {detail})",
        "complete only the samples of the test in progress",
    ),
    FaultClass(
        FaultKind.AFTER_FAIL,
        "the SUT completed sample {detail} after failing it",
        "the SUT completed {n} sample(s) it had already failed (first: response id {detail})",
        "end each sample once: fail_samples or QuerySamplesComplete, not both",
    ),
    FaultClass(
        FaultKind.DUPLICATE,
        "the SUT completed sample {detail} twice",
        "the SUT completed {n} sample(s) twice (first: response id {detail})",
        "complete each sample exactly once (each second completion is a logged error, and the submission "
        "checker rejects a log with errors)",
    ),
    FaultClass(
        FaultKind.FAILED,
        "the SUT failed a sample: {detail}",
        "the SUT failed {n} sample(s) (first: {detail})",
        "a failed sample is no result: fix what failed it (the first of each kind is in the detail log: "
        "grep error_runtime)",
    ),
    FaultClass(
        FaultKind.STALLED,
        "{detail}",
        "{detail}",
        COMPLETE_HOW + "; a SUT this slow needs a longer {timeout_s}",
    ),
)
BY_KIND: dict[FaultKind, FaultClass] = {c.kind: c for c in FAULTS}
RANK: dict[FaultKind, int] = {c.kind: k for k, c in enumerate(FAULTS)}


@record(slots=True)
class Fault:
    """One kind of fault in one run: how often, its first instance, and advice where the class's
    own does not fit this instance; `names` names the options the class's advice mentions."""

    kind: FaultKind
    count: int
    detail: str
    advice_override: str = ""
    hint: str = ""  # what the first instance suggests (an unknown id that is a QSL index)
    names: OptionNames = NO_LABELS

    @property
    def cause(self) -> str:
        text = BY_KIND[self.kind].cause.format(n=self.count, detail=self.detail)
        return f"{text}; {self.hint}" if self.hint else text

    @property
    def advice(self) -> str:
        return self.advice_override or BY_KIND[self.kind].advice_for(self.names)

    @property
    def line(self) -> str:
        """The cause and what to do: a verdict's first line after its INVALID/INCOMPLETE."""
        return f"{self.cause}: {self.advice}" if self.advice else self.cause


class FaultTally:
    """The SUT faults of one run, by kind (thread-safe). The first of each kind goes to `notice` at
    once; `notice_once` says a one-off line (the stall notice) under its own key. The advice names
    options as `names` says (the caller's labels)."""

    def __init__(self, notice: Callable[[str], None] | None = None, names: OptionNames = NO_LABELS) -> None:
        self._notice = notice
        self._names = names
        self._lock = threading.Lock()
        self._faults: dict[FaultKind, Fault] = {}
        self._said: dict[str, int] = {}

    def add(self, kind: FaultKind, detail: str, n: int = 1, advice: str = "", hint: str = "") -> None:
        """Count `n` faults of `kind`; the first one's `detail` (and `hint`) is kept, and said at once."""
        if n <= 0:
            return
        with self._lock:
            fault = self._faults.get(kind)
            first = fault is None
            if fault is None:
                self._faults[kind] = Fault(kind, n, detail, advice, hint, self._names)
            else:
                fault.count += n
        if first and self._notice is not None and kind not in _ENDS_RUN:
            line = BY_KIND[kind].first.format(detail=detail) + (f"; {hint}" if hint else "")
            self._notice(f"{line}; later ones are counted")

    def notice_once(self, key: str, line: str) -> bool:
        """Say `line` the first time `key` comes; later ones are counted. True when said."""
        with self._lock:
            n = self._said.get(key, 0) + 1
            self._said[key] = n
        if n == 1 and self._notice is not None:
            self._notice(line)
        return n == 1

    def times(self, key: str) -> int:
        with self._lock:
            return self._said.get(key, 0)

    def count(self, kind: FaultKind) -> int:
        with self._lock:
            fault = self._faults.get(kind)
            return 0 if fault is None else fault.count

    def ranked(self) -> list[Fault]:
        """Every kind seen, the true cause first (`FAULTS` order)."""
        with self._lock:
            faults = [Fault(f.kind, f.count, f.detail, f.advice_override, f.hint, f.names) for f in self._faults.values()]
        return sorted(faults, key=lambda f: RANK[f.kind])

    def count_lines(self) -> list[str]:
        """One line per kind seen more than once: what the end of a phase adds to the first line."""
        return [f"in all, {f.cause}" for f in self.ranked() if f.count > 1]


# Kinds that end the run: the verdict says them a moment later (a SUT that stops the run says why itself)
_ENDS_RUN = (FaultKind.RAISED, FaultKind.ABORTED, FaultKind.STALLED)


def notice_bound_s(expected_latency_s: float) -> float:
    """How long nothing may complete, while samples are outstanding, before the run says so: a few
    seconds, or NOTICE_FACTOR times the latency the settings expect if that is longer."""
    return max(NOTICE_MIN_S, NOTICE_FACTOR * max(expected_latency_s, 0.0))


__all__ = [
    "ADVICE_OPTIONS",
    "BY_KIND",
    "COMPLETE_HOW",
    "FAULTS",
    "NOTICE_MIN_S",
    "STUCK_LIMIT_S",
    "Fault",
    "FaultClass",
    "FaultKind",
    "FaultTally",
    "notice_bound_s",
]
