"""The issuer: the only timed code. It hands the pre-built schedule to the SUT and stamps records.

Two loops, after the official IssueQueryController (spec official-loadgen.md §3 "Issue loop"):
- closed loop (SingleStream, MultiStream): issue query q, then wait until it completes; its
  scheduled time is its issue time (rules "Load Generator": "sends the next query as soon as the
  previous query is processed").
- open loop (Server, Offline): query q is due at start + its scheduled offset; sleep until it (spinning
  the last microseconds only while the host wakes us on time: clock.MonotonicClock); late queries go
  at once; with coalescing, every further query already due is added to the same call (each keeps
  its own scheduled time). Offline's queries are all due at start.

Stop rules: every loop stops once the run is aborted (`CompletionTracker.abort`: the SUT stopped the
run, or it answers only ids never issued). Not in accuracy mode, which issues everything: after an
issue, non-Server scenarios stop once `issued >= min_query_count` and `issue time - start >= target
duration`; every scenario stops
with an error on max_query_count, on max_duration, and (Server) when more than
server_max_async_queries queries are outstanding. Running out of generated queries before the
minimum is an error. Server performance runs may go on past the official queries while the rules'
early-stopping procedure needs more (`extension`, loadgen/early_stopping_extension.py). The loop builds no Python object per sample for array SUTs
(`issue_query_arrays`); for the others the QuerySample objects are built before the clock starts.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

import numpy as np

from proctor.loadgen.clock import PREEMPTED_NS, Clock, MonotonicClock
from proctor.loadgen.completion import CompletionTracker
from proctor.loadgen.early_stopping_extension import BOUND, EXTENSION_SOURCE, MET, ExtensionWatch
from proctor.loadgen.records import Records, Schedule
from proctor.loadgen.settings import EffectiveSettings
from proctor.loadgen.types import (
    ArraySUT,
    CompletionIssuingSUT,
    QuerySample,
    Scenario,
    SystemUnderTest,
    WarmableSUT,
)
from proctor.typed_records import record

# Above this many samples the QuerySample objects are built per query while issuing instead of
# all up front (memory: ~100 bytes each).
PREBUILD_LIMIT = 4_000_000
# A query larger than this (a large Offline run) goes to the SUT in several issue calls of this many
# samples, so no per-sample id array (8 bytes each) or object list exists for the whole query.
ISSUE_CHUNK = 1 << 18

RAN_OUT = (
    "Ending early: Ran out of generated queries to issue before the minimum query count and test duration "
    "were reached. Please update the relevant expected latency or target qps in the TestSettings "
    "so they are more accurate."
)


PR_SET_TIMERSLACK, PR_GET_TIMERSLACK = 29, 30  # linux/prctl.h
ISSUE_TIMER_SLACK_NS = 1_000
# At or below this Server rate the issuing thread keeps the fine slack whether or not the clock spins:
# there its CPU cost (~5 us per wait, see fine_timer_slack) is at most 0.5 % of a core, and it takes
# the default 50 us slack off every arrival. Measured here (2 cores, shared) at 50 req/s against
# `proctor serve llm`, TTFT p50 from the schedule minus from the send, 3 alternating runs: 167 us
# (148-187) with the slack following the spin, 114 us (90-132) with the fine slack throughout, issue
# lateness p99 not worse (0.90 -> 0.70 ms); a spin at that rate: 98 us but p99 3.5 ms (12.9 ms once).
FINE_SLACK_MAX_QPS = 1_000.0


@contextmanager
def fine_timer_slack(clock: Clock | None = None) -> Iterator[None]:
    """Linux wakes a sleeping thread up to its timer slack (50 us by default) late. With 1 us for the
    issuing thread, the Server loop can sleep to within a few microseconds of each arrival and spin
    only briefly: a long spin on a loaded machine gets the issuer preempted for milliseconds (measured
    here: p99 lateness 1.6-4.7 ms with 100 us of spinning, 40-60 us with this slack and 30 us).
    With an adaptive `MonotonicClock` the fine slack follows its spin: while the host preempts the
    issuer (spin off) the thread keeps its own slack, as the official's issue thread does; a precise
    timer costs CPU on every wait (measured here in a VM: 15 -> 20 us per Server query at 10k QPS)
    and saves nothing when wake-ups are late by a time slice anyway."""
    prctl = _prctl()
    old = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0) if prctl is not None else -1
    if old <= 0:
        yield
        return

    def fine(on: bool) -> None:
        prctl(PR_SET_TIMERSLACK, ISSUE_TIMER_SLACK_NS if on else old, 0, 0, 0)

    adaptive = clock if isinstance(clock, MonotonicClock) else None
    if adaptive is not None:
        adaptive.on_precise = fine
    fine(adaptive is None or adaptive.precise)
    try:
        yield
    finally:
        if adaptive is not None:
            adaptive.on_precise = None
        prctl(PR_SET_TIMERSLACK, old, 0, 0, 0)


@contextmanager
def warm_spins(clock: Clock, sut: SystemUnderTest) -> Iterator[None]:
    """A SUT that can run its issue path dry (types.WarmableSUT) does so in each low-rate spin
    (clock.WARM_LEAD_NS). Measured here (2-core VM, 4 req/s against `proctor serve llm`, bench
    --breakdown, 2 runs each): issue_query -> send stamp p50 51 -> 28-31 us, schedule -> issue_query
    77 -> 51-56 us."""
    if not isinstance(clock, MonotonicClock) or not isinstance(sut, WarmableSUT):
        yield
        return
    clock.on_spin = sut.warm_issue
    try:
        yield
    finally:
        clock.on_spin = None


# CPython's default switch interval (5 ms) lets a thread that holds the GIL in pure Python code keep
# it that long while the issuer waits for it: that much lateness on every Server arrival.
ISSUE_SWITCH_INTERVAL_S = 0.0005


@contextmanager
def short_switch_interval(interval_s: float = ISSUE_SWITCH_INTERVAL_S) -> Iterator[None]:
    """The GIL is handed over after `interval_s` (not CPython's 5 ms) while queries are issued, so a
    SUT or host thread spinning in Python delays an issue by at most about that much. Measured with
    such a thread beside a worker SUT (bench --contention gil): Server p50 issue lateness 3.5 ms ->
    0.5 ms. A smaller interval the process already set is kept."""
    old = sys.getswitchinterval()
    if interval_s < old:
        sys.setswitchinterval(interval_s)
    try:
        yield
    finally:
        if interval_s < old:
            sys.setswitchinterval(old)


@cache
def _prctl() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


ABORTED = "aborted"  # the issue outcome when the tracker was aborted (CompletionTracker.abort)


@record(slots=True)
class IssueOutcome:
    # "done", "exhausted", "ran_out", "max_query_count", "max_duration", "too_many_outstanding", "timeout",
    # "early_stopping_met" (Server: the criterion held after extra queries), "aborted"
    stop_reason: str
    start_ns: int
    end_issue_ns: int
    wall_start_ns: int  # time.monotonic_ns() at the start: timeouts are wall time whatever the clock


def _issue_fn(sut: SystemUnderTest, schedule: Schedule, id_base: int = 0) -> Callable[[int, int], None]:
    """A function issuing samples [a, b) to the SUT, in the form the SUT prefers; sample s goes out
    with response id id_base + s."""
    fn = _issue_fn_whole(sut, schedule, id_base)
    if schedule.n_samples <= ISSUE_CHUNK or _largest_query(schedule.query_offsets) <= ISSUE_CHUNK:
        return fn  # no query needs splitting: no wrapper on the per-query path (SingleStream, Server)

    def issue_chunked(a: int, b: int) -> None:
        for c in range(a, b, ISSUE_CHUNK):
            fn(c, min(c + ISSUE_CHUNK, b))

    return issue_chunked


def _largest_query(offsets: np.ndarray, chunk: int = 1 << 20) -> int:
    """The most samples in one query (the steps of `offsets`, a slice at a time: no temporary the
    size of a long schedule)."""
    return max((int(np.diff(offsets[a : a + chunk + 1]).max()) for a in range(0, offsets.shape[0] - 1, chunk)),
               default=0)


def _issue_fn_whole(sut: SystemUnderTest, schedule: Schedule, id_base: int) -> Callable[[int, int], None]:
    arrays = sut.issue_query_arrays if isinstance(sut, ArraySUT) else None
    idx = schedule.sample_index
    if arrays is not None:
        if schedule.n_samples <= PREBUILD_LIMIT and idx.dtype == np.int64:
            seq = np.arange(id_base, id_base + schedule.n_samples, dtype=np.int64)

            def issue_arrays(a: int, b: int) -> None:
                arrays(seq[a:b], idx[a:b])

            return issue_arrays

        def issue_arrays_built(a: int, b: int) -> None:  # ids made per call; indices widened per call
            arrays(np.arange(id_base + a, id_base + b, dtype=np.int64), idx[a:b].astype(np.int64))

        return issue_arrays_built
    issue_query = sut.issue_query
    if schedule.n_samples <= PREBUILD_LIMIT:
        samples = [QuerySample(i, x) for i, x in enumerate(schedule.sample_index.tolist(), id_base)]

        def issue_prebuilt(a: int, b: int) -> None:
            issue_query(samples[a:b])

        return issue_prebuilt
    idx_arr = schedule.sample_index

    def issue_built(a: int, b: int) -> None:
        issue_query([QuerySample(i, x) for i, x in enumerate(idx_arr[a:b].tolist(), id_base + a)])

    return issue_built


class Issuer:
    """Drives one schedule through the SUT. `run` returns when issuing ended (not when all completed)."""

    def __init__(
        self,
        sut: SystemUnderTest,
        schedule: Schedule,
        id_base: int,
        records: Records,
        tracker: CompletionTracker,
        eff: EffectiveSettings,
        clock: Clock,
        *,
        accuracy: bool,
        limit_ns: int | None,
        stall_ns: int,
        error: Callable[[str], None],
        info: Callable[[str], None] | None = None,
    ) -> None:
        self.sut, self.schedule, self.records, self.tracker = sut, schedule, records, tracker
        self.eff, self.clock, self.accuracy = eff, clock, accuracy
        self.limit_ns = limit_ns  # the whole run (issue + wait) may take at most this long (None: no limit)
        self.stall_ns = stall_ns  # the longest wait for one closed-loop query
        self.error = error
        self.info = info or (lambda message: None)
        self._issue = _issue_fn(sut, schedule, id_base)
        # Server: the rules' early-stopping procedure past the official queries (None: stop there)
        self.extension: ExtensionWatch | None = None
        # > 0: a closed loop keeping this many queries in flight (`proctor sweep --concurrency`, the
        # peers' everyday mode); not an MLPerf scenario: the engine marks such a run INVALID
        self.concurrency = 0

    def run(self) -> IssueOutcome:
        if self.eff.scenario == Scenario.OFFLINE:  # one query, due at once: no lateness to save
            with fine_timer_slack():
                return self._open_loop()
        if self.eff.scenario in (Scenario.SINGLE_STREAM, Scenario.MULTI_STREAM):
            with fine_timer_slack(), short_switch_interval():
                if self.concurrency > 0:
                    return self._concurrent_loop(self.concurrency)
                if isinstance(self.sut, CompletionIssuingSUT) and self.sut.issue_from_completion is True:
                    return self._closed_loop_chained()
                return self._closed_loop()
        # Server: the slack follows the spin, except at low rates where the fine one costs next to nothing
        follow = self.clock if self.eff.target_qps > FINE_SLACK_MAX_QPS else None
        with fine_timer_slack(follow), short_switch_interval(), warm_spins(self.clock, self.sut):
            return self._open_loop()

    def _stop_check(self, n_issued: int, t: int, start: int) -> str | None:
        """The official after-issue checks, in their order; None means keep going."""
        eff = self.eff
        if self.accuracy:
            return None
        if (
            eff.scenario != Scenario.SERVER
            and n_issued >= eff.min_query_count
            and t - start >= eff.target_duration_ms * 1_000_000
        ):
            self.info("Ending naturally: Minimum query count and test duration met.")
            return "done"
        if eff.max_query_count and n_issued >= eff.max_query_count:
            self.error(f"Ending early: Max query count reached. query_count={n_issued}")
            return "max_query_count"
        if eff.max_duration_ms and t - start > eff.max_duration_ms * 1_000_000:
            self.error(f"Ending early: Max test duration reached. duration_ns={t - start}")
            return "max_duration"
        if eff.scenario == Scenario.SERVER and eff.max_async_queries:
            outstanding = n_issued - self.tracker.completed_queries
            if outstanding > eff.max_async_queries:
                self.error(
                    f"Ending early: Too many outstanding queries. issued={n_issued} outstanding={outstanding}"
                )
                return "too_many_outstanding"
        return None

    def _exhausted(self) -> str:
        if self.accuracy or self.eff.scenario == Scenario.SERVER:
            return "exhausted"
        self.error(RAN_OUT)
        return "ran_out"

    def _closed_loop(self) -> IssueOutcome:
        rec, tracker, issue = self.records, self.tracker, self._issue
        offs = self.schedule.query_offsets.tolist()
        qsched, qissued = rec.query_scheduled_ns.data, rec.query_issued_ns.data
        now = self.clock.now_ns
        gate_acquire = tracker.gate.acquire
        nq = self.schedule.n_queries
        wall = time.monotonic_ns
        start = now()
        wall_start = wall()
        rec.start_ns = start
        deadline = None if self.limit_ns is None else wall_start + self.limit_ns
        stall_s = self.stall_ns * 1e-9
        checks = not self.accuracy
        mqc = self.eff.min_query_count
        target_ns = self.eff.target_duration_ms * 1_000_000
        max_checks = bool(self.eff.max_query_count or self.eff.max_duration_ms)
        reason = ""
        q = 0
        while q < nq:
            b = offs[q + 1]
            tracker.issued_end = b
            tracker.await_query(q)
            t = now()
            qsched[q] = t
            qissued[q] = t
            issue(offs[q], b)
            q += 1
            rec.n_queries_issued = q
            rec.n_samples_issued = b
            # Block at once, so a SUT thread gets the GIL without waiting for our bookkeeping (an
            # inline SUT already released the gate); the official after-issue checks follow (same
            # outcome: the run waits for this query anyway).
            if not gate_acquire(False):
                wait_s = stall_s if deadline is None else min(stall_s, (deadline - wall()) * 1e-9)
                if tracker.abort_reason:  # before the wait: an abort while this query was armed releases it
                    reason = ABORTED
                    break
                if wait_s <= 0 or not gate_acquire(True, wait_s):
                    stop = self._stop_check(q, t, start)
                    reason = "timeout" if stop in (None, "done") else stop
                    break
            if tracker.abort_reason:  # the SUT stopped the run (or was found answering ids never issued)
                reason = ABORTED
                break
            # the checks of _stop_check, which can only fire past these thresholds
            if (
                checks
                and ((q >= mqc and t - start >= target_ns) or max_checks)
                and (stop := self._stop_check(q, t, start)) is not None
            ):
                reason = stop
                break
        else:
            reason = self._exhausted()
        return IssueOutcome(reason, start, now(), wall_start)

    def _concurrent_loop(self, n: int) -> IssueOutcome:
        """A closed loop with `n` queries in flight: query q is issued once q - n + 1 queries have
        completed (any of them), so a completion frees its slot at once. Each query's scheduled time
        is its issue time, as in `_closed_loop`; the same after-issue checks and stall limit apply."""
        rec, tracker, issue = self.records, self.tracker, self._issue
        offs = self.schedule.query_offsets.tolist()
        qsched, qissued = rec.query_scheduled_ns.data, rec.query_issued_ns.data
        now = self.clock.now_ns
        gate_acquire = tracker.gate.acquire
        nq = self.schedule.n_queries
        wall = time.monotonic_ns
        start = now()
        wall_start = wall()
        rec.start_ns = start
        deadline = None if self.limit_ns is None else wall_start + self.limit_ns
        stall_s = self.stall_ns * 1e-9
        checks = not self.accuracy
        mqc = self.eff.min_query_count
        target_ns = self.eff.target_duration_ms * 1_000_000
        max_checks = bool(self.eff.max_query_count or self.eff.max_duration_ms)
        reason = ""
        q = 0
        while q < nq:
            if q >= n and not tracker.await_completed(q - n + 1):
                wait_s = stall_s if deadline is None else min(stall_s, (deadline - wall()) * 1e-9)
                if tracker.abort_reason:
                    reason = ABORTED
                    break
                if wait_s <= 0 or not gate_acquire(True, wait_s):
                    stop = self._stop_check(q, now(), start)
                    reason = "timeout" if stop in (None, "done") else stop
                    break
            if tracker.abort_reason:
                reason = ABORTED
                break
            b = offs[q + 1]
            tracker.issued_end = b
            t = now()
            qsched[q] = t
            qissued[q] = t
            issue(offs[q], b)
            q += 1
            rec.n_queries_issued = q
            rec.n_samples_issued = b
            if (
                checks
                and ((q >= mqc and t - start >= target_ns) or max_checks)
                and (stop := self._stop_check(q, t, start)) is not None
            ):
                reason = stop
                break
        else:
            reason = self._exhausted()
        return IssueOutcome(reason, start, now(), wall_start)

    def _closed_loop_chained(self) -> IssueOutcome:
        """The closed loop for SUTs that declare `issue_from_completion = True` (their issue call
        never waits on their own completing threads): the thread that completes query q issues
        q + 1 itself, so a worker-thread SUT runs SingleStream without a thread hand-off per query.
        This thread issues the first query, runs the steps of inline completions, and watches the
        stall and time limits. Same stamps, checks and order as `_closed_loop`; the step keeps its
        state in closure cells and calls `_stop_check` only past its thresholds (per-query cost on
        the completing thread is the SUT's throughput here)."""
        rec, tracker, issue = self.records, self.tracker, self._issue
        offs = self.schedule.query_offsets.tolist()
        qsched, qissued = rec.query_scheduled_ns.data, rec.query_issued_ns.data
        now = self.clock.now_ns
        await_query = tracker.await_query
        nq = self.schedule.n_queries
        checks = not self.accuracy
        mqc = self.eff.min_query_count
        target_ns = self.eff.target_duration_ms * 1_000_000
        max_checks = bool(self.eff.max_query_count or self.eff.max_duration_ms)
        stop_check = self._stop_check
        step_lock = threading.Lock()
        finished = threading.Event()
        q_next, t_last = 0, 0  # the next query to issue; the issue time of the last one
        reason: str = ""
        error: BaseException | None = None
        stopped = False
        start = now()
        wall_start = time.monotonic_ns()
        rec.start_ns = start

        def finish(why: str) -> None:
            nonlocal reason, stopped
            reason, stopped = why, True
            finished.set()
            with contextlib.suppress(RuntimeError):  # wake this thread's watch at once
                tracker.gate.release()

        def step() -> None:  # query q - 1 completed (or q is 0): the after-issue checks, then issue query q
            nonlocal error, q_next, t_last
            with step_lock:
                if stopped:
                    return
                try:
                    q = q_next
                    if (
                        checks
                        and ((q >= mqc and t_last - start >= target_ns) or max_checks)
                        and (stop := stop_check(q, t_last, start)) is not None
                    ):
                        finish(stop)
                    elif q >= nq:
                        finish(self._exhausted())
                    elif tracker.abort_reason:
                        finish(ABORTED)
                    else:  # the state is updated before the SUT sees q
                        b = offs[q + 1]
                        tracker.issued_end = b
                        await_query(q)
                        t = now()
                        qsched[q] = t
                        qissued[q] = t
                        q_next, t_last = q + 1, t
                        rec.n_queries_issued = q + 1
                        rec.n_samples_issued = b
                        issue(offs[q], b)
                except BaseException as exc:  # the SUT raised on a completing thread: the run's error
                    error = exc
                    finish("error")

        tracker.set_chain(step)
        deadline = None if self.limit_ns is None else wall_start + self.limit_ns
        try:
            step()  # the first query (its checks cannot fire before anything was issued)
            last_q, last_change = -1, time.monotonic_ns()
            gate_acquire = tracker.gate.acquire
            while not stopped:  # set with `finished`, and cheaper to read
                if tracker.abort_reason:  # the SUT's answers will never complete what is issued
                    with step_lock:
                        if not finished.is_set():
                            finish(ABORTED)
                    break
                if gate_acquire(False):  # completed inline on this thread: step here
                    step()
                    continue
                wall = time.monotonic_ns()
                if q_next != last_q:
                    last_q, last_change = q_next, wall
                left = last_change + self.stall_ns - wall
                if deadline is not None:
                    left = min(left, deadline - wall)
                if left <= 0:
                    with step_lock:
                        if not finished.is_set():
                            stop = stop_check(q_next, t_last, start)
                            finish("timeout" if stop in (None, "done") else str(stop))
                    break
                if tracker.gate.acquire(True, min(left * 1e-9, 0.05)):
                    step()
                    continue
        except BaseException:
            stopped = True  # Ctrl-C here: completing threads issue nothing more
            raise
        finally:
            tracker.set_chain(None)
        with step_lock:  # a step still running on a completing thread ends first
            pass
        if error is not None:
            raise error
        return IssueOutcome(reason, start, now(), wall_start)

    def _open_loop(self) -> IssueOutcome:
        rec, tracker, issue = self.records, self.tracker, self._issue
        offs = self.schedule.query_offsets.tolist()
        sched = self.schedule.scheduled_ns
        if self.eff.scenario == Scenario.OFFLINE:
            sched = np.zeros_like(sched)  # every Offline query is due at the start
        rel = sched.tolist()
        qsched, qissued = rec.query_scheduled_ns, rec.query_issued_ns
        # memoryviews take a Python int faster than numpy scalar assignment does
        qsched_mv, qissued_mv = qsched.data, qissued.data
        now, sleep_until = self.clock.now_ns, self.clock.sleep_until
        # an adaptive clock also learns of arrivals found long overdue (preempted outside its sleeps)
        note_late = getattr(self.clock, "note_late", None)
        coalesce = self.eff.server_coalesce_queries and self.eff.scenario == Scenario.SERVER
        nq = len(rel)
        eff = self.eff
        checks = not self.accuracy and (
            eff.scenario != Scenario.SERVER
            or eff.max_query_count
            or eff.max_duration_ms
            or eff.max_async_queries
        )
        watch = self.extension if not self.accuracy and eff.scenario == Scenario.SERVER else None
        if watch is None:
            nq = min(nq, self.schedule.nominal_queries)  # extra queries are only for the procedure
        watch_from = self.schedule.nominal_queries if watch is not None else nq + 1
        start = now()
        wall_start = time.monotonic_ns()
        rec.start_ns = start
        reason = ""
        q = 0
        while q < nq:
            due = start + rel[q]
            t = now()
            if t < due:
                sleep_until(due)
                t = now()
            elif t - due > PREEMPTED_NS and note_late is not None:
                note_late()
            e = q + 1
            if coalesce:
                horizon = t - start
                while e < nq and rel[e] <= horizon:
                    e += 1
            b = offs[e]
            tracker.issued_end = b
            if e == q + 1:
                qsched_mv[q] = due
                qissued_mv[q] = t
            else:
                qsched[q:e] = sched[q:e] + start
                qissued[q:e] = t
            issue(offs[q], b)
            q = e
            rec.n_queries_issued = q
            rec.n_samples_issued = b
            if tracker.abort_reason:  # the SUT stopped the run, or answers only ids never issued
                reason = ABORTED
                break
            # the checks of _stop_check, inlined: none of them can fire unless its limit is set
            if checks and (stop := self._stop_check(q, t, start)) is not None:
                reason = stop
                if watch is not None and watch.extending:
                    rec.extension_stop = stop  # a limit of the run ended the procedure
                break
            if q >= watch_from and watch is not None and (why := watch.check(q, t)) is not None:
                rec.extension_stop = why
                if why == MET:
                    self.info(f"Early stopping met after {q - watch.nominal} extra queries ({EXTENSION_SOURCE})")
                    reason = "early_stopping_met"
                else:
                    reason = self._exhausted()
                break
        else:
            reason = self._exhausted()
            if watch is not None and watch.extending:
                rec.extension_stop = BOUND
        return IssueOutcome(reason, start, now(), wall_start)
