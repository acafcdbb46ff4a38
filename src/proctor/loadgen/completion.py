"""The completion path: SUT threads report finished samples here, the engine's records fill up.

A response id is the sample's sequence number, so a completion is a few array writes and a
per-query countdown under one lock, with one clock read per call (as the official
QuerySamplesComplete does). Protocol errors (unknown id, double completion, a first token after
completion, a bad token count) are counted and reported like the official `error_runtime`; the
run goes on.

A SUT completes through the sink it was started with (`sink.StartableSUT`: the run's `RunSink`,
which forwards to the phase's `CompletionTracker`). `query_samples_complete`, `first_token_complete`
and `complete_arrays` remain as module functions because the official API has them: a harness
calls them without a handle to the run. They forward to the one sink registered in this process
(`attach` / `detach` / `active`: the only module-level state, read nowhere else); two runs at once
in one process are refused. Response ids are validated in one place (`CompletionTracker._seq`;
the array path's vectorised check is its batch form).

Each phase hands the SUT ids offset by a per-phase base (a generation token, `id_base`), so a
completion left over from an earlier phase or test is reported as an unknown id and never lands on
a sample of this one. `fail_samples` ends samples the SUT could not answer without making them
results (they are left out of the latencies and make the run invalid). `report_failure` lets a SUT's worker threads report an exception to the run:
the first failure of each kind goes to the detail log, the rest are counted (`FaultCounter`).

`t_ns` (optional on the three completion calls): the event's time on the engine clock
(`time.perf_counter_ns`, CLOCK_MONOTONIC, one clock for every process of the machine), taken where
the event was seen, e.g. in a worker process, so a late delivery does not lengthen the latency. A
stamp before the sample's issue (or, for a completion, before its first token) is refused as an
error for that sample; one from the future is clamped to now (the first such one is an error).
Without `t_ns` the call reads the clock itself, at no extra cost.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import operator
import re
import threading
from array import array
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from proctor.errors import RunError
from proctor.loadgen.records import NOT_SET, Records, Schedule
from proctor.loadgen.sink import CompletionSink
from proctor.loadgen.sut_faults import FaultKind, FaultTally
from proctor.loadgen.types import QuerySampleResponse

SMALL_BATCH = 16  # complete_arrays batches up to this size take the scalar path
ID_GENERATION_BITS = 32  # ids of phase g are g << 32 + sequence number: no phase has 2**32 samples
INDEX_LOOKUP = 1 << 20  # an unknown id is compared with the QSL indices of at most this many issued samples
_NUMBER = re.compile(r"(?<![A-Za-z_])\d+(?:\.\d+)?")  # ids, indices, counts: not part of a kind
KIND_HEAD = 80  # a failure's kind: its type and the first this-many characters of its message

log = logging.getLogger(__name__)
_generations = itertools.count(1)


def next_id_base() -> int:
    """A fresh id base for one phase (the generation token of its response ids)."""
    return next(_generations) << ID_GENERATION_BITS


def failure_text(exc: BaseException | str) -> str:
    """`Type: first line of the message`, cut to KIND_HEAD characters: what a log line shows."""
    if isinstance(exc, str):
        text = exc
    else:
        message = str(exc).strip().splitlines()
        text = type(exc).__name__ + (f": {message[0]}" if message else "")
    return text if len(text) <= KIND_HEAD else text[: KIND_HEAD - 3] + "..."


def failure_kind(exc: BaseException | str) -> str:
    """`failure_text` with its numbers masked: failures that differ only in sample ids, ports or
    counts are one kind, counted together."""
    return _NUMBER.sub("N", failure_text(exc))


class FaultCounter:
    """SUT failures by kind: the first of each kind is reported at once, the others counted, so a
    model failing thousands of batches gives a few lines, not thousands."""

    def __init__(self, error_sink: Callable[[str], None] | None = None) -> None:
        self._sink = error_sink
        self._lock = threading.Lock()
        self.kinds: dict[str, int] = {}

    def report(self, exc: BaseException | str, where: str = "") -> bool:
        """Count one failure; True (and one detail-log error) when it is the first of its kind."""
        kind = failure_kind(exc)
        with self._lock:
            n = self.kinds.get(kind, 0) + 1
            self.kinds[kind] = n
        if n == 1 and self._sink is not None:
            text = failure_text(exc)
            self._sink(f"SUT failure{f' ({where})' if where else ''}: {text} (later ones of this kind are counted)")
        return n == 1

    @property
    def total(self) -> int:
        return sum(self.kinds.values())

    def summary_lines(self) -> list[str]:
        """One line per kind that repeated: what the run reports at its end."""
        return [f"SUT failure repeated {n - 1} more time(s): {kind}" for kind, n in self.kinds.items() if n > 1]


class AccuracyBudget:
    """Caps on the payload bytes the accuracy log takes: per response and over the whole run.

    The official LoadGen logs any payload (docs/deviations.md); a SUT returning a runaway buffer
    would otherwise fill the disk. A refused payload is reported once per kind of refusal.
    """

    def __init__(self, per_response: int, total: int) -> None:
        self.per_response, self.total = per_response, total
        self.used = 0
        self.refused = 0
        self._lock = threading.Lock()

    def admit(self, nbytes: int) -> str | None:
        """None if `nbytes` may be logged (and counts them), else why not."""
        if nbytes > self.per_response:
            why = f"{nbytes} bytes is over the cap of {self.per_response} bytes per response"
        else:
            with self._lock:
                if self.used + nbytes <= self.total:
                    self.used += nbytes
                    return None
            why = f"the accuracy log reached its cap of {self.total} payload bytes in total"
        with self._lock:
            self.refused += 1
        return why


def payload_size(r: Any) -> int:
    """The byte size of a response's payload without copying it (`nbytes` if the response says)."""
    n = getattr(r, "nbytes", None)
    if n is not None:
        return int(n)
    data = r.data
    if data is None:
        return 0
    if isinstance(data, np.ndarray | memoryview):
        return int(data.nbytes)
    return len(data)


def as_id(i: Any) -> int | None:
    """A response id as an int, or None if it is not an integer (bools and floats are not)."""
    if isinstance(i, bool | float):
        return None
    try:
        return operator.index(i)
    except TypeError:
        return None

# (seq_id, qsl_idx, data, n_tokens, token_data) for each sample whose output is logged.
AccuracySink = Callable[[int, int, bytes, int, bytes | None], None]
ErrorSink = Callable[[str], None]


def as_bytes(data: Any) -> bytes:
    """A private copy of a response payload (the SUT may reuse its buffer once we return)."""
    if data is None:
        return b""
    if isinstance(data, bytes):
        return data
    if isinstance(data, np.ndarray):
        return np.ascontiguousarray(data).tobytes()
    return bytes(memoryview(data).cast("B")) if isinstance(data, memoryview) else bytes(data)


def _uniform_size(offsets: np.ndarray) -> int:
    """The common query size when every query but the last has it and the last is no longer, else 0."""
    nq = int(offsets.shape[0]) - 1
    if nq <= 0:
        return 1
    size = int(offsets[1] - offsets[0])
    if size <= 0:
        return 0
    if nq > 1 and not np.array_equal(offsets[:-1], np.arange(nq, dtype=np.int64) * size):
        return 0
    return size if int(offsets[-1] - offsets[-2]) <= size else 0


TWICE = "completed twice"  # what the completion paths say of a sample completed again
_FT = "FirstTokenComplete"  # its answers complete nothing: they never count as misdirected completions


class _NoId:
    """Stands for the id of an item that is not a response at all."""

    __slots__ = ("item",)

    def __init__(self, item: Any) -> None:
        self.item = item


class CompletionTracker:
    """The state one run's completions write into; thread-safe, every method callable from any thread."""

    def __init__(
        self,
        schedule: Schedule,
        records: Records,
        now_ns: Callable[[], int],
        *,
        log_all_data: bool,
        use_tokens: bool,
        needs_first_token: bool,
        accuracy_sink: AccuracySink | None = None,
        error_sink: ErrorSink | None = None,
        id_base: int = 0,
        faults: FaultCounter | None = None,
        budget: AccuracyBudget | None = None,
        sut_faults: FaultTally | None = None,
    ) -> None:
        counts = np.diff(schedule.query_offsets)
        # Every schedule gives its queries one size except, at most, the last (Offline accuracy):
        # then a sample's query is s // size and nothing per sample is kept for it.
        self._spq = _uniform_size(schedule.query_offsets)
        self._sample_query_np: np.ndarray | None = None
        self._sample_query: array[int] | None = None
        if self._spq == 0:  # array('q'): fast scalar indexing, numpy view for the array path
            self._sample_query = array(
                "q", np.repeat(np.arange(schedule.n_queries, dtype=np.int64), counts).tobytes()
            )
            self._sample_query_np = np.frombuffer(self._sample_query, np.int64)
        self._sample_index = schedule.sample_index
        self._remaining = array("q", counts.astype(np.int64).tobytes())
        self._multi = (counts > 1).astype(np.uint8).tobytes()  # queries of more than one sample
        self._offsets = array("q", np.asarray(schedule.query_offsets, np.int64).tobytes())
        self._records = records
        self._sample_done = records.sample_done_ns
        self._sample_done_mv = records.sample_done_ns.data  # a memoryview: fast scalar writes
        self._query_done_mv = records.query_done_ns.data
        self._first_token = records.sample_first_token_ns
        self._n_tokens = records.sample_n_tokens
        self._query_done = records.query_done_ns
        # A sample is done once its sample_done_ns is set, has its first token once its
        # sample_first_token_ns is: no per-sample flags besides the records themselves.
        if use_tokens:
            records.writable_tokens()
        self._first_token_mv = records.sample_first_token_ns.data
        mask = schedule.accuracy_log_mask
        self._log_all = log_all_data
        self._any_logged = log_all_data or (mask is not None and bool(np.any(mask)))
        self._log_mask: Any = b""  # never read unless some sample is logged (and not all are)
        if self._any_logged and not log_all_data and mask is not None:
            self._log_mask = np.ascontiguousarray(mask, dtype=bool).view(np.uint8).data
        self._token_data: dict[int, bytes] = {}
        self._plain = not use_tokens and not self._any_logged  # complete_arrays may take its 1-id path
        self._use_tokens = use_tokens
        self._needs_ft = needs_first_token and use_tokens
        self._now = now_ns
        self._lock = threading.Lock()
        self._accuracy_sink = accuracy_sink
        self._error_sink = error_sink
        self.id_base = id_base  # the SUT sees sample s as response id id_base + s
        self.faults = faults if faults is not None else FaultCounter(self._error)
        self.sut_faults = sut_faults if sut_faults is not None else FaultTally()
        # answers since the last completion that completed nothing (ids never issued, not responses):
        # `_streak` of them while `completed_samples` stayed `_streak_mark` (misdirected())
        self._streak = 0
        self._streak_mark = -1
        self.waiting_s = 0.0  # > 0: nothing completed this long while samples were outstanding (PhaseWatch)
        self.first_tokens = 0  # first tokens reported (progress of a token run before any completion)
        self._budget = budget
        self._budget_reported: set[str] = set()
        self.issued_end = 0  # samples [0, issued_end) have been handed to the SUT
        self.completed_samples = 0
        self.completed_queries = 0
        self.error_count = 0
        self._awaited = -1  # query the closed-loop issuer waits for (-1: none)
        self._await_count = -1  # completed queries the N-in-flight loop waits for (-1: none)
        self.gate = threading.Lock()  # held; released when the awaited query completes
        self.gate.acquire()
        # Closed loop with a SUT that allows it: the thread completing the awaited query calls
        # `_chain` (the issuer's next step) itself once it left the lock: no thread hand-off.
        self._chain: Callable[[], None] | None = None
        self._issuer_thread = 0
        self._chain_due = False
        self._chaining = threading.local()
        self._target = -1  # samples to wait for once issuing has ended
        self._pending_logs = 0  # completion calls still copying payloads to the accuracy log
        self.future_stamps = 0  # t_ns stamps after the clock's now (clamped to now)
        self.all_done = threading.Event()
        self.abort_reason = ""  # the SUT gave up on the run (`abort`): the engine stops waiting
        self.abort_kind = FaultKind.ABORTED  # what ended it: the SUT's abort, or ids never issued

    # --- issuer side --------------------------------------------------------------------------

    def await_query(self, q: int) -> None:
        """Arm the gate for query `q` (called before issuing it) so its completion releases the issuer."""
        self._awaited = q

    def await_completed(self, n: int) -> bool:
        """The N-in-flight closed loop (`proctor sweep --concurrency`): True when at least `n`
        queries have completed; else arm the gate to be released once they have (and return False)."""
        with self._lock:
            if self.completed_queries >= n:
                return True
            self._await_count = n
            return False

    def finish_issuing(self, n_samples_issued: int) -> None:
        with self._lock:
            self._target = n_samples_issued
            self._check_done()

    def output_logged(self, response_id: int) -> bool:
        """Whether this sample's payload goes to the accuracy log (`sink.CompletionSink`)."""
        if not self._any_logged:
            return False
        s = response_id - self.id_base
        return self._log_all or (0 <= s < len(self._log_mask) and bool(self._log_mask[s]))

    def outstanding_ids(self, limit: int = 5) -> tuple[int, list[int]]:
        """How many issued samples have not completed, and the first few of their ids."""
        with self._lock:
            pending = np.flatnonzero(self._sample_done[: self.issued_end] == NOT_SET)
        return int(pending.size), pending[:limit].tolist()

    # --- SUT side -----------------------------------------------------------------------------

    def report_failure(self, exc: BaseException | str, where: str = "") -> bool:
        """A failure in the SUT's own threads (`sink.CompletionSink`): counted by kind."""
        self.faults.report(exc, where)
        return True

    def abort(self, reason: str, kind: FaultKind = FaultKind.ABORTED) -> bool:
        """The SUT cannot go on (its endpoint stopped answering; `kind` UNKNOWN_ID: the engine found
        its answers misdirected): issuing stops, the engine stops waiting for what is outstanding
        and ends the run incomplete with `reason` (the first one given). An issuer waiting for a
        query's completion is released (it sees `abort_reason` and stops)."""
        with self._lock:
            if self.abort_reason:
                return True
            self.abort_reason, self.abort_kind = reason, kind
            if (self._awaited >= 0 or self._await_count >= 0) and self._chain is None:
                self._awaited = self._await_count = -1
                self.gate.release()
        return True

    def misdirected(self) -> tuple[int, int]:
        """(answers that completed nothing since the last sample completed, samples outstanding);
        (0, n) once a sample completed after the first such answer."""
        with self._lock:
            outstanding = self.issued_end - self.completed_samples
            if self._streak_mark != self.completed_samples:
                return 0, outstanding
            return self._streak, outstanding

    def _unanswered(
        self, kind: FaultKind, detail: str, n: int = 1, completion: bool = True, hint: str = ""
    ) -> None:
        """Caller holds the lock: `n` answers that completed nothing (`kind`), counted by kind; a
        completion's count towards the misdirected streak (`misdirected`)."""
        self.sut_faults.add(kind, detail, n, hint=hint)
        if completion and kind in (FaultKind.UNKNOWN_ID, FaultKind.NOT_AN_ID):
            if self._streak_mark != self.completed_samples:
                self._streak_mark, self._streak = self.completed_samples, 0
            self._streak += n

    def _id_fault(self, j: int) -> tuple[FaultKind, str, str]:
        """Caller holds the lock: (kind, detail, hint) of an integer response id that is no issued
        sample of this phase: an earlier phase's (stale), or never issued (the hint says when it is
        the QSL index of an issued sample: the SUT passed sample.index)."""
        gen, base_gen = j >> ID_GENERATION_BITS, self.id_base >> ID_GENERATION_BITS
        if 0 < gen < base_gen:
            return FaultKind.STALE_ID, str(j), ""
        issued = self._sample_index[: min(self.issued_end, INDEX_LOOKUP)]
        if 0 <= j < (1 << ID_GENERATION_BITS) and issued.size and bool(np.any(issued == j)):
            return FaultKind.UNKNOWN_ID, str(j), f"{j} is the QSL index of an issued sample: sample.index where sample.id belongs"
        return FaultKind.UNKNOWN_ID, str(j), ""

    def error(self, message: str) -> None:
        """A protocol error of the SUT or its harness: counted and written to the detail log."""
        self._error(message)

    def _error(self, message: str) -> None:
        self.error_count += 1
        self._records.errors.append(message)
        if self._error_sink is not None:
            with contextlib.suppress(ValueError):  # the detail log closed under a straggling SUT thread
                self._error_sink(message)

    def _bad_id(self, who: str, i: Any) -> None:
        item = i.item if isinstance(i, _NoId) else i
        text = repr(item)
        if len(text) > 60:
            text = text[:57] + "..."
        if isinstance(i, _NoId):
            self._error(f"{who}: {text} (a {type(item).__name__}) is not a QuerySampleResponse")
            self._unanswered(FaultKind.NOT_AN_ID, f"{text} (a {type(item).__name__})", completion=who != _FT)
            return
        self._error(
            f"{who}: response id {text} is not an integer (a {type(i).__name__}); pass back the `id` "
            "of the QuerySample the SUT was given"
        )
        self._unanswered(
            FaultKind.NOT_AN_ID, f"a response whose id is {text} (a {type(i).__name__})", completion=who != _FT
        )

    def _seq(self, who: str, i: Any, done_msg: str | None, quiet: bool = False) -> int:
        """Caller holds the lock. THE id check: the sample sequence number of response id `i`, or -1
        (and, unless `quiet`, one error naming `who`) when `i` is not an integer, not an issued
        sample of this phase, or (`done_msg`: what the call would do twice) already completed.
        The completion loops let the common case (an int id of an issued, open sample) past with an
        inline test and call this for everything else."""
        j = i if type(i) is int else None if isinstance(i, _NoId) else as_id(i)
        if j is None:
            if not quiet:
                self._bad_id(who, i)
            return -1
        s = j - self.id_base
        if not 0 <= s < self.issued_end:
            if not quiet:
                self._error(f"{who}: unknown response id {j}")
                kind, detail, hint = self._id_fault(j)
                self._unanswered(kind, detail, completion=who != _FT, hint=hint)
            return -1
        if done_msg is not None and self._sample_done_mv[s] != NOT_SET:
            if not quiet:
                self._error(f"{who}: sample {j} {done_msg}")
                if done_msg == TWICE:
                    failed = self._records.sample_failed
                    self.sut_faults.add(
                        FaultKind.AFTER_FAIL if failed is not None and failed[s] else FaultKind.DUPLICATE, str(j)
                    )
            return -1
        return s

    def _query_of(self, s: int) -> int:
        """The query sample `s` belongs to."""
        sq = self._sample_query
        return s // self._spq if sq is None else sq[s]

    def _stamp(self, t_ns: Any, who: str) -> int | None:
        """The event's time: now when the caller gave none; else the caller's, checked: an int,
        clamped to now when it is in the future (the first such one is an error, later ones are
        counted); None (and an error) if not an int."""
        if t_ns is None:
            return self._now()
        t = as_id(t_ns)
        if t is None:
            self._error(f"{who}: t_ns={t_ns!r} is not an integer timestamp (time.perf_counter_ns)")
            return None
        now = self._now()
        if t > now:
            with self._lock:
                self.future_stamps += 1
                first = self.future_stamps == 1
            if first:
                self._error(
                    f"{who}: t_ns={t} is {t - now} ns after the clock's now; clamped to now "
                    "(later ones are counted)"
                )
            return now
        return t

    def _early(self, who: str, i: int, s: int, t: int, done: bool) -> bool:
        """Caller holds the lock, `s` is issued: True (and an error) when stamp `t` is before the
        sample's issue, or, for a completion (`done`), before its first token."""
        issued = int(self._records.query_issued_ns[self._query_of(s)])
        if t < issued:
            self._error(f"{who}: t_ns={t} of sample {i} is {issued - t} ns before its issue; refused")
            return True
        if done and self._use_tokens:
            ft = self._first_token_mv[s]
            if ft != NOT_SET and t < ft:
                self._error(f"{who}: t_ns={t} of sample {i} is {ft - t} ns before its first token; refused")
                return True
        return False

    def _timely(self, who: str, ids: Sequence[Any], t: int) -> list[int]:
        """Caller holds the lock: the positions of `ids` whose stamp `t` is not refused (ids that are
        not issued samples are kept: the completion path reports them as it always does)."""
        keep: list[int] = []
        base = self.id_base
        for k, i in enumerate(ids):
            s = self._seq(who, i, "", quiet=True)
            if s >= 0 and self._early(who, s + base, s, t, True):
                continue
            keep.append(k)
        return keep

    def _query_finished(self, q: int, t: int) -> None:
        if self._multi[q]:
            # the clock is read before the lock: a sample stamped later may have finished first
            a, b = self._offsets[q], self._offsets[q + 1]
            t = max(t, int(self._sample_done[a:b].max()))
        self._query_done_mv[q] = t
        self.completed_queries += 1
        if 0 <= self._await_count <= self.completed_queries:
            self._await_count = -1
            self.gate.release()
        if q == self._awaited:
            self._awaited = -1
            if self._chain is not None and threading.get_ident() != self._issuer_thread:
                self._chain_due = True  # the completing thread issues the next query (run_chain)
            else:
                self.gate.release()

    def _complete_loop(
        self, t: int, ids: Sequence[Any], ntoks: list[Any] | None, who: str
    ) -> list[tuple[int, int]]:
        """The scalar path (caller holds the lock); returns (position, sequence number) of each
        sample whose output is logged."""
        issued, rem, sq, spq = self.issued_end, self._remaining, self._sample_query, self._spq
        sample_done, base = self._sample_done_mv, self.id_base
        logged: list[tuple[int, int]] = []
        n_ok = 0
        for k, i in enumerate(ids):
            s = i - base if type(i) is int else -1
            if not (0 <= s < issued and sample_done[s] == NOT_SET):
                s = self._seq(who, i, TWICE)
                if s < 0:
                    continue
                i = s + base
            if self._use_tokens:
                n = 0 if ntoks is None else ntoks[k]
                if type(n) is not int:
                    n = as_id(n) or 0
                if n <= 1:
                    self._error(f"{who}: sample {i} reported n_tokens={n}; token latencies need at least 2")
                if self._needs_ft and self._first_token_mv[s] == NOT_SET:
                    self._error(f"{who}: sample {i} completed before its first token")
                self._n_tokens[s] = n
            sample_done[s] = t
            n_ok += 1
            q = s if spq == 1 else s // spq if sq is None else sq[s]
            rem[q] -= 1
            if rem[q] == 0:
                self._query_finished(q, t)
            if self._any_logged and (self._log_all or self._log_mask[s]):
                logged.append((k, s))
        self.completed_samples += n_ok
        if logged:
            self._pending_logs += 1
        self._check_done()
        return logged

    def set_chain(self, step: Callable[[], None] | None) -> None:
        """Let completing threads run `step` (the issuer's next step) when the awaited query ends."""
        self._issuer_thread = threading.get_ident()
        self._chain = step

    def run_chain(self) -> None:
        """After a completion call left the lock: run the issuer's step if that call ended the
        awaited query. A step whose issue completes inline on this thread loops here, never recurses."""
        if not self._chain_due or getattr(self._chaining, "active", False):
            return
        self._chaining.active = True
        try:
            while True:
                with self._lock:
                    if not self._chain_due:
                        return
                    self._chain_due = False
                    step = self._chain
                if step is not None:
                    step()
        finally:
            self._chaining.active = False

    def fail(self, ids: Sequence[Any], reason: str) -> None:
        try:
            self._fail(ids, reason)
        finally:
            self.run_chain()

    def _fail(self, ids: Sequence[Any], reason: str) -> None:
        """Samples the SUT could not answer (an HTTP error, a dead node): they end, so the run goes
        on, but they are marked failed: left out of every latency statistic and the run is invalid.
        The first failure of each kind goes to the detail log, the rest are counted."""
        t = self._now()
        rec = self._records
        with self._lock:
            if rec.sample_failed is None:  # one byte per sample, only in runs where something failed
                rec.sample_failed = np.zeros(self._sample_done.shape[0], np.uint8)
            failed = rec.sample_failed
            done = self._sample_done_mv
            n_new = 0
            for i in ids:
                s = self._seq("fail_samples", i, "already completed")
                if s < 0:
                    continue
                failed[s] = 1
                done[s] = t
                n_new += 1
                q = self._query_of(s)
                self._remaining[q] -= 1
                if self._remaining[q] == 0:
                    self._query_finished(q, t)
            rec.failed_samples += n_new
            self.completed_samples += n_new
            self._check_done()
        if n_new:
            self.faults.report(reason, f"{n_new} sample(s) failed")
            self.sut_faults.add(FaultKind.FAILED, failure_text(reason), n_new)

    def complete(
        self,
        responses: Sequence[Any],
        response_cb: Callable[[Any], None] | None = None,
        *,
        t_ns: int | None = None,
    ) -> None:
        try:
            self._complete(responses, response_cb, t_ns)
        finally:
            self.run_chain()

    def _complete(
        self,
        responses: Sequence[Any],
        response_cb: Callable[[Any], None] | None = None,
        t_ns: int | None = None,
    ) -> None:
        who = "QuerySamplesComplete"
        t = self._stamp(t_ns, who)
        if t is None:
            return
        try:
            ids: list[Any] = [r.id for r in responses]
        except AttributeError:  # not all of them are responses: each such item is reported
            ids = [r.id if hasattr(r, "id") else _NoId(r) for r in responses]
        ntoks = [getattr(r, "n_tokens", 0) for r in responses] if self._use_tokens else None
        with self._lock:
            if t_ns is None:
                logged = self._complete_loop(t, ids, ntoks, who)
            else:
                pos = self._timely(who, ids, t)
                logged = self._complete_loop(
                    t, [ids[k] for k in pos], None if ntoks is None else [ntoks[k] for k in pos], who
                )
                logged = [(pos[k], s) for k, s in logged]
        if logged:
            self._log_outputs([(s, responses[k]) for k, s in logged], response_cb)

    def complete_arrays(
        self,
        ids: np.ndarray,
        n_tokens: np.ndarray | None = None,
        data: np.ndarray | None = None,
        *,
        t_ns: int | None = None,
    ) -> None:
        """The array path: one vectorised write per batch; `data` (optional) holds one row per id."""
        try:
            # A closed loop's query of one sample, nothing to log or count, an issued and open id:
            # completed here, inline (SingleStream's per-query cost is these lines). Anything else,
            # untouched, takes the full path, which also reports what is wrong with an id.
            if self._plain and t_ns is None and type(ids) is np.ndarray and ids.shape == (1,):
                t = self._now()
                s = ids.item(0)
                if type(s) is int:
                    s -= self.id_base
                    with self._lock:
                        if 0 <= s < self.issued_end and self._sample_done_mv[s] == NOT_SET:
                            self._sample_done_mv[s] = t
                            sq = self._sample_query
                            q = s // self._spq if sq is None else sq[s]
                            left = self._remaining[q] - 1
                            self._remaining[q] = left
                            if left == 0:
                                self._query_finished(q, t)
                            n = self.completed_samples = self.completed_samples + 1
                            if 0 <= self._target <= n and self._pending_logs == 0:  # _check_done
                                self.all_done.set()
                            return
            self._complete_arrays(ids, n_tokens, data, t_ns)
        finally:
            if self._chain_due:
                self.run_chain()

    def _complete_arrays(
        self,
        ids: np.ndarray,
        n_tokens: np.ndarray | None = None,
        data: np.ndarray | None = None,
        t_ns: int | None = None,
    ) -> None:
        t = self._stamp(t_ns, "complete_arrays")
        if t is None:
            return
        if not isinstance(ids, np.ndarray) or ids.dtype.kind not in "iu":
            ids = np.asarray(ids) if _all_ints(ids) else np.asarray(list(ids), dtype=object)
        if t_ns is not None:  # refuse the samples the stamp is too early for, before anything else
            with self._lock:
                pos = self._timely("complete_arrays", ids.tolist(), t)
            if len(pos) < len(ids):
                ids = ids[pos]
                n_tokens = None if n_tokens is None else np.asarray(n_tokens)[pos]
                data = None if data is None else np.asarray(data)[pos]
                if not len(ids):
                    return
        if self._plain and ids.shape == (1,) and ids.dtype.kind in "iu":  # nothing to log or count
            i = int(ids[0]) - self.id_base
            with self._lock:
                if 0 <= i < self.issued_end and self._sample_done_mv[i] == NOT_SET:
                    self._sample_done_mv[i] = t
                    q = self._query_of(i)
                    left = self._remaining[q] - 1
                    self._remaining[q] = left
                    if left == 0:
                        self._query_finished(q, t)
                    self.completed_samples += 1
                    self._check_done()
                    return
            # a bad id: the general path below reports it
        if len(ids) <= SMALL_BATCH or ids.dtype.kind not in "iu":  # a short Python loop is cheaper
            id_list = ids.tolist()
            ntoks = None if n_tokens is None else np.asarray(n_tokens, np.int64).tolist()
            with self._lock:
                logged = self._complete_loop(t, id_list, ntoks, "complete_arrays")
            if logged:
                self._log_outputs(
                    [
                        (
                            s,
                            QuerySampleResponse(
                                s, None if data is None else data[k], 0 if ntoks is None else ntoks[k]
                            ),
                        )
                        for k, s in logged
                    ],
                    None,
                )
            return
        base = self.id_base
        ids = np.asarray(ids, np.int64) - base if base else np.asarray(ids, np.int64)
        with self._lock:
            issued = self.issued_end
            # the common case, checked with three cheap array ops: ascending ids (so no repeats), in
            # range, none completed before; anything else takes the full per-id validation
            ascending = bool(ids[0] >= 0 and ids[-1] < issued and np.all(ids[1:] > ids[:-1]))
            if not ascending or bool((self._sample_done[ids] != NOT_SET).any()):
                ascending = False
                keep = (ids >= 0) & (ids < issued)
                unknown = ids[~keep]
                for i in unknown[:10].tolist():
                    self._error(f"complete_arrays: unknown response id {i + base}")
                if unknown.size:  # each kind counted, the first of each named
                    gen = (unknown + base) >> ID_GENERATION_BITS
                    stale = (gen > 0) & (gen < base >> ID_GENERATION_BITS)
                    for part in (unknown[stale], unknown[~stale]):
                        if part.size:
                            kind, detail, hint = self._id_fault(int(part[0]) + base)
                            self._unanswered(kind, detail, int(part.size), hint=hint)
                dup = np.zeros(ids.size, bool)
                dup[keep] = self._sample_done[ids[keep]] != NOT_SET
                if ids.size > 1:
                    _, first = np.unique(ids, return_index=True)
                    again = np.ones(ids.size, bool)
                    again[first] = False
                    dup |= again & keep
                for i in ids[dup][:10].tolist():
                    self._error(f"complete_arrays: sample {i + base} {TWICE}")
                if dup.any():
                    twice = ids[dup]
                    failed = self._records.sample_failed
                    after = np.zeros(twice.size, bool) if failed is None else failed[twice] != 0
                    if after.any():
                        self.sut_faults.add(FaultKind.AFTER_FAIL, str(int(twice[after][0]) + base), int(after.sum()))
                    if not after.all():
                        self.sut_faults.add(
                            FaultKind.DUPLICATE, str(int(twice[~after][0]) + base), int((~after).sum())
                        )
                keep &= ~dup
                n_bad = ids.size - int(np.count_nonzero(keep))
                if n_bad > 20:
                    self._error(
                        f"complete_arrays: {n_bad} responses rejected in one call (first ones listed above)"
                    )
                if n_bad:
                    ids = ids[keep]
                    n_tokens = None if n_tokens is None else np.asarray(n_tokens)[keep]
                    data = None if data is None else np.asarray(data)[keep]
            if self._use_tokens:
                nt = np.zeros(ids.size, np.int64) if n_tokens is None else np.asarray(n_tokens, np.int64)
                for i in ids[nt <= 1][:10].tolist():
                    self._error(f"complete_arrays: sample {i + base} reported fewer than 2 tokens")
                if self._needs_ft:
                    for i in ids[self._first_token[ids] == NOT_SET][:10].tolist():
                        self._error(f"complete_arrays: sample {i + base} completed before its first token")
                self._n_tokens[ids] = nt
            self._sample_done[ids] = t
            if ids.size == 1:
                qs, counts = [self._query_of(int(ids[0]))], [1]
            elif ascending and (q0 := self._query_of(int(ids[0]))) == self._query_of(int(ids[-1])):
                qs, counts = [q0], [int(ids.size)]  # one query's samples
            else:
                per = ids // self._spq if self._sample_query_np is None else self._sample_query_np[ids]
                uq, cnt = np.unique(per, return_counts=True)
                qs, counts = uq.tolist(), cnt.tolist()
            rem = self._remaining
            for q, c in zip(qs, counts, strict=True):
                rem[q] -= c
                if rem[q] == 0:
                    self._query_finished(q, t)
            self.completed_samples += int(ids.size)
            pick = None
            if self._any_logged and ids.size:
                pick = (
                    np.ones(ids.size, bool)
                    if self._log_all
                    else np.frombuffer(self._log_mask, np.uint8)[ids] != 0
                )
                if pick.any():
                    self._pending_logs += 1
                else:
                    pick = None
            self._check_done()
        if pick is not None:
            rows = None if data is None else np.asarray(data)[pick]
            self._log_outputs(
                [
                    (i, QuerySampleResponse(i, None if rows is None else rows[k], int(self._n_tokens[i])))
                    for k, i in enumerate(ids[pick].tolist())
                ],
                None,
            )

    def first_token(
        self,
        responses: Sequence[Any],
        response_cb: Callable[[Any], None] | None = None,
        *,
        t_ns: int | None = None,
    ) -> None:
        keep: list[tuple[int, bytes]] = []
        who = _FT
        t = self._stamp(t_ns, who)
        if t is None:
            return
        with self._lock:
            if not self._first_token.flags.writeable:  # a first token in a run without token latencies
                self._records.writable_tokens()
                self._first_token, self._n_tokens = self._records.sample_first_token_ns, self._records.sample_n_tokens
                self._first_token_mv = self._first_token.data
            has_ft, base = self._first_token_mv, self.id_base
            for r in responses:
                s = self._seq(who, r.id if hasattr(r, "id") else _NoId(r), "reported its first token after completion")
                if s < 0:
                    continue
                i = s + base
                if has_ft[s] != NOT_SET:
                    self._error(f"{who}: sample {i} reported its first token twice")
                    continue
                if t_ns is not None and self._early(who, i, s, t, False):
                    continue
                has_ft[s] = t
                self.first_tokens += 1
                if self._any_logged and (self._log_all or self._log_mask[s]):
                    if response_cb is not None:
                        response_cb(r)
                    payload = self._read_payload(who, i, r)
                    if payload is not None:
                        keep.append((s, payload))
            for i, b in keep:
                self._token_data[i] = b

    def _read_payload(self, who: str, rid: int, r: Any) -> bytes | None:
        """A copy of a response's payload for the accuracy log, or None (and an error) if it is over
        the accuracy budget or cannot be read."""
        try:
            if self._budget is not None:
                why = self._budget.admit(payload_size(r))
                if why is not None:
                    kind = "total" if "in total" in why else "per response"
                    if kind not in self._budget_reported:  # once per kind; the engine adds the count
                        self._budget_reported.add(kind)
                        self._error(f"{who}: the payload of response id {rid} was not logged: {why}")
                    return None
            return as_bytes(r.data)
        except Exception as exc:  # noqa: BLE001 - a bad payload is the SUT's error, not the run's end
            self._error(f"{who}: cannot read the payload of response id {rid}: {type(exc).__name__}: {exc}")
            return None

    def _check_done(self) -> None:
        """Caller holds the lock. Done = every issued sample completed and its payload logged, so the
        engine never closes the accuracy log under a completion thread that is still writing."""
        if 0 <= self._target <= self.completed_samples and self._pending_logs == 0:
            self.all_done.set()

    def _log_outputs(
        self, logged: list[tuple[int, QuerySampleResponse]], response_cb: Callable[[Any], None] | None
    ) -> None:
        """Copy and log payloads outside the lock (one pending-log count per call, taken by the caller)."""
        sink = self._accuracy_sink
        try:
            for i, r in logged:
                if response_cb is not None:
                    response_cb(r)
                data = self._read_payload("QuerySamplesComplete", i + self.id_base, r)
                with self._lock:
                    token_data = self._token_data.pop(i, None)
                if sink is not None and data is not None:
                    sink(i, int(self._sample_index[i]), data, int(r.n_tokens), token_data)
        finally:
            with self._lock:
                self._pending_logs -= 1
                self._check_done()


# --- routing: a sink that forwards to another, swapped while runs come and go ---------------------


class RunSink:
    """A sink that forwards to its `target` (the phase's tracker, the official-engine route, a
    node's router), or drops and counts what arrives while it has none. The engine hands one to a
    started SUT (`sink.StartableSUT.start`) and points it at each phase's tracker in turn; the module
    functions below forward through another, `_route`, for the official API. One attribute read more
    per call than the target itself, none per sample."""

    __slots__ = ("target",)

    def __init__(self) -> None:
        self.target: CompletionSink | None = None

    def complete(
        self,
        responses: Sequence[Any],
        response_cb: Callable[[Any], None] | None = None,
        *,
        t_ns: int | None = None,
    ) -> None:
        """Report finished samples (any thread). `response_cb` runs right before a logged payload is
        copied; `t_ns`: when they finished on the engine clock (default: now; see the module doc)."""
        target = self.target
        if target is None:
            _drop(len(responses))
        else:
            target.complete(responses, response_cb, t_ns=t_ns)

    def complete_arrays(
        self,
        ids: np.ndarray,
        n_tokens: np.ndarray | None = None,
        data: np.ndarray | None = None,
        *,
        t_ns: int | None = None,
    ) -> None:
        """Report finished samples by id array: the fast path for array SUTs (`data`: one row per id;
        `t_ns`: one time for all of them)."""
        target = self.target
        if target is None:
            _drop(len(ids))
        else:
            target.complete_arrays(ids, n_tokens, data, t_ns=t_ns)

    def first_token(
        self,
        responses: Sequence[Any],
        response_cb: Callable[[Any], None] | None = None,
        *,
        t_ns: int | None = None,
    ) -> None:
        """Report the first output token of samples (token-latency runs, any thread); `t_ns` as for
        `complete`. `response_cb` runs under the run's completion lock: it must not call back here."""
        target = self.target
        if target is None:
            _drop(len(responses))
        else:
            target.first_token(responses, response_cb, t_ns=t_ns)

    def fail(self, ids: Sequence[Any], reason: str) -> None:
        """Report samples the SUT failed to answer (any thread): errors, never results."""
        target = self.target
        if target is None:
            _drop(len(ids))
        else:
            target.fail(ids, reason)

    def report_failure(self, exc: BaseException | str, where: str = "") -> bool:
        """A SUT thread's failure: the first of each kind goes to the detail log as an error, later
        ones are counted. False when nothing takes it."""
        target = self.target
        return target is not None and target.report_failure(exc, where)

    def output_logged(self, response_id: int) -> bool:
        """Whether the run logs this sample's output (accuracy log): a SUT that ships outputs from
        another process ships only those."""
        target = self.target
        return target is not None and target.output_logged(response_id)

    def abort(self, reason: str) -> bool:
        """The SUT cannot go on: the run ends incomplete, saying `reason` (`CompletionTracker.abort`).
        False when no run takes it."""
        abort = getattr(self.target, "abort", None)
        return bool(abort(reason)) if abort is not None else False


# The official API has SUTs complete through module functions with no handle to the run, so a
# process holds one registered sink: the phase's CompletionTracker while proctor's engine runs, the
# official-engine route, or a KServe node's router. `_route.target` is written only by attach/detach.
_route = RunSink()
_route_error: ErrorSink | None = None  # where a harness's protocol errors go (the tracker's log)
_slot_lock = threading.Lock()
late_completions = 0  # completions that arrived with no run in progress (dropped)
_warned_late = False


class ForwardingSink:
    """What a SUT holds until the engine hands it the run's own sink (`StartableSUT.start`): each
    call goes through the module function of the same job, as an official-API SUT's would (so a
    spy on those functions sees it too)."""

    def complete(
        self,
        responses: Sequence[Any],
        response_cb: Callable[[Any], None] | None = None,
        *,
        t_ns: int | None = None,
    ) -> None:
        query_samples_complete(responses, response_cb, t_ns=t_ns)

    def complete_arrays(
        self,
        ids: np.ndarray,
        n_tokens: np.ndarray | None = None,
        data: np.ndarray | None = None,
        *,
        t_ns: int | None = None,
    ) -> None:
        complete_arrays(ids, n_tokens, data, t_ns=t_ns)

    def first_token(
        self,
        responses: Sequence[Any],
        response_cb: Callable[[Any], None] | None = None,
        *,
        t_ns: int | None = None,
    ) -> None:
        first_token_complete(responses, response_cb, t_ns=t_ns)

    def fail(self, ids: Sequence[Any], reason: str) -> None:
        fail_samples(ids, reason)

    def report_failure(self, exc: BaseException | str, where: str = "") -> bool:
        return report_failure(exc, where)

    def output_logged(self, response_id: int) -> bool:
        return output_logged(response_id)

    def abort(self, reason: str) -> bool:
        return _route.abort(reason)


def attach(sink: CompletionSink, error: ErrorSink | None = None) -> None:
    """Register the sink the module functions forward to; a second one at once is refused.
    `error` takes a harness's protocol errors (default: the tracker's own error log)."""
    global _route_error, _warned_late
    with _slot_lock:
        if _route.target is not None:
            raise RunError("another run is already in progress in this process")
        _route.target = sink
        _route_error = error if error is not None or not isinstance(sink, CompletionTracker) else sink.error
        _warned_late = False


def detach(sink: CompletionSink) -> None:
    """Unregister `sink` (nothing happens if another one is registered)."""
    global _route_error
    with _slot_lock:
        if _route.target is sink:
            _route.target = _route_error = None


def active() -> CompletionSink | None:
    """The registered sink, or None between runs."""
    return _route.target


def log_error(message: str) -> bool:
    """A harness's protocol error (e.g. not a list of responses) for the run in progress: False when
    none takes it."""
    error = _route_error
    if error is None:
        return False
    error(message)
    return True


def _drop(n: int) -> None:
    """Completions with no run in progress: counted, and said once per gap between runs."""
    global late_completions, _warned_late
    late_completions += n
    if not _warned_late:
        _warned_late = True
        log.info("%d completion(s) arrived with no test running (after it ended?); dropped", n)


def _all_ints(ids: Any) -> bool:
    try:
        return all(type(i) is int for i in ids)
    except TypeError:
        return False


# --- the official API's module functions: each forwards to the run in progress ---------------------

report_failure = _route.report_failure  # a SUT thread's failure: first of each kind logged, rest counted
fail_samples = _route.fail  # samples the SUT failed to answer: errors, never results
query_samples_complete = _route.complete  # finished samples (any thread); `t_ns`: when, on the engine clock
first_token_complete = _route.first_token  # first output tokens (token-latency runs; any thread)
complete_arrays = _route.complete_arrays  # finished samples by id array: the fast path, no object per sample
output_logged = _route.output_logged  # whether the run logs this sample's output (accuracy log)


__all__ = [
    "NOT_SET",
    "CompletionTracker",
    "active",
    "log_error",
    "ForwardingSink",
    "RunSink",
    "as_bytes",
    "attach",
    "complete_arrays",
    "detach",
    "fail_samples",
    "first_token_complete",
    "output_logged",
    "query_samples_complete",
    "report_failure",
]
