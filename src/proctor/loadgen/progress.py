"""Progress of a run: the events the engine emits between phases, and a cheap look at a phase.

`ProgressHooks` declares every event the engine calls (settings, expected length, phase start and
end, FindPeakPerformance probes, SUT notices, the end); the base does nothing. What draws them (the
live line of `proctor run` and `proctor sweep`) is the CLI's: `cli/live_progress.py`. `snapshot`
reads a phase's records arrays from the caller's own thread, a bounded window of recent samples,
so its cost does not grow with the run; nothing here runs on the issue path.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from proctor.loadgen.records import NOT_SET, Records, Schedule
from proctor.typed_records import field, record

WINDOW = 20_000  # recent samples the running percentiles are computed over
TOKEN_TAIL = 1 << 20  # samples past the all-done frontier whose tokens are summed per look (bounded)
CLOSED_LOOP_SCENARIOS = ("SingleStream", "MultiStream")  # a query waits for the last: they end at their bounds


class ProgressHooks:
    """The engine's progress callbacks; the base does nothing (`progress=None` means this)."""

    def on_settings(self, effective: Any) -> None:
        """The effective settings of the phase about to start (called just before `on_phase`)."""

    def on_sets(self, mode: Any, samples: Sequence[int]) -> None:
        """A run of `mode` issues over several loaded sets, one phase each, `samples[i]` in set i (an
        accuracy run: the whole QSL, performance_sample_count at a time); called before the first."""

    def on_expected(self, expected: Any) -> None:
        """A performance phase's expected length and why (a loadgen.expected.Expected), before it
        starts issuing (called just before `on_phase`)."""

    def on_phase(self, mode: Any, schedule: Schedule, records: Records, tracker: Any) -> None:
        """A phase (accuracy set or performance run) is about to start issuing."""

    def on_phase_end(self, mode: Any, records: Records) -> None:
        """Its issuing and waiting ended (normally or not)."""

    def on_probe(self, probe: Any) -> None:
        """FindPeakPerformance finished one probe (a find_peak.Probe)."""

    def on_notice(self, line: str) -> None:
        """A SUT fault or stall, to be said at once (sut_faults.FaultTally). Called on SUT threads,
        under the completion lock: queue the line, never block."""

    def on_end(self, outcome: Any) -> None:
        """The run ended and its logs are written."""


@record(frozen=True, slots=True)
class Snapshot:
    elapsed_s: float
    queries_issued: int
    samples_issued: int
    samples_completed: int
    qps: float  # completed samples per second so far
    latency_ms: dict[float, float]  # running percentiles over the recent window
    total_samples: int | None = None  # the phase's samples (an estimate for SingleStream/MultiStream)
    eta_s: float | None = None  # seconds until the phase should end (None: none to give; inf: not known yet)
    ttft_ms: dict[float, float] = field(default_factory=dict)  # token latencies, over the recent window
    tpot_ms: dict[float, float] = field(default_factory=dict)
    tokens_per_s: float | None = None  # output tokens so far per second (None: not a token run)
    waiting_s: float = 0.0  # > 0: nothing completed this long with samples outstanding (no ETA then)
    expected_s: float | None = None  # the phase's expected length, said before it started (loadgen.expected)
    expected_exact: bool = False  # the schedule fixes it (Server)
    expected_at_least: bool = False  # a lower bound (a closed loop: the SUT's latency decides past it)


@record(slots=True)
class TokenTally:
    """Output tokens so far, without re-reading the whole run each look: the samples before
    `frontier` are all done, their tokens summed once in `done_tokens`; a look sums at most
    TOKEN_TAIL samples past it."""

    frontier: int = 0
    done_tokens: int = 0

    def total(self, records: Records, issued: int) -> int:
        tokens, done = records.sample_n_tokens, records.sample_done_ns
        hi = min(issued, self.frontier + TOKEN_TAIL)
        pending = np.flatnonzero(done[self.frontier:hi] == NOT_SET)
        new_frontier = self.frontier + int(pending[0]) if pending.size else hi
        self.done_tokens += int(tokens[self.frontier:new_frontier].sum(dtype=np.int64))
        self.frontier = new_frontier
        return self.done_tokens + int(tokens[self.frontier:hi].sum(dtype=np.int64))


@record(frozen=True, slots=True)
class Plan:
    """What ends a phase, for the ETA: the effective settings' bounds (None: the schedule alone)."""

    scenario: str = ""
    performance: bool = False
    min_duration_s: float = 0.0
    min_queries: int = 0
    samples_per_query: int = 1

    @classmethod
    def of(cls, effective: Any, mode: Any) -> Plan:
        if effective is None:
            return cls()
        return cls(
            str(effective.scenario),
            str(mode) == "PerformanceOnly",
            effective.min_duration_ms / 1000.0,
            int(effective.min_query_count),
            max(int(effective.samples_per_query), 1),
        )


def _total_and_eta(
    schedule: Schedule, plan: Plan, elapsed: float, queries_issued: int, done: int, rate: float
) -> tuple[int | None, float | None]:
    """(total samples, seconds left) of a phase: SingleStream/MultiStream performance runs end at
    min_duration and min_query_count (the schedule is only their upper bound); a Server run at its
    last scheduled query (past the official queries, an early-stopping extension's last); anything
    else when its schedule's samples are done."""
    if plan.performance and plan.scenario in CLOSED_LOOP_SCENARIOS:
        # each query is issued when the last is done: the rate of completed queries (none yet: no ETA,
        # rather than one that grows with every second the first query takes)
        qrate = (done // plan.samples_per_query) / elapsed if elapsed > 0 else 0.0
        if qrate <= 0:
            return None, math.inf
        queries = max(plan.min_queries, math.ceil(qrate * plan.min_duration_s))
        left = max(plan.min_duration_s - elapsed, (plan.min_queries - queries_issued) / qrate, 0.0)
        return min(queries, schedule.n_queries) * plan.samples_per_query, left
    last = schedule.nominal_queries
    if not 0 < last < schedule.n_queries or queries_issued > last:  # no extension, or it is under way
        last = schedule.n_queries
    total = int(schedule.query_offsets[last])
    left_by_count = (total - done) / rate if rate > 0 else None
    if plan.scenario == "Server" and last > 0:
        left_by_time = float(schedule.scheduled_ns[last - 1]) / 1e9 - elapsed
        return total, max(left_by_time, left_by_count or 0.0, 0.0)
    return total, None if left_by_count is None else max(left_by_count, 0.0)


def _quantiles(values: np.ndarray) -> dict[float, float]:
    if not values.size:
        return {}
    q = np.quantile(values, (0.5, 0.99))
    return {0.5: float(q[0]), 0.99: float(q[1])}


def snapshot(
    schedule: Schedule,
    records: Records,
    completed: int,
    now_ns: int,
    *,
    plan: Plan | None = None,
    tally: TokenTally | None = None,
    waiting_s: float = 0.0,
) -> Snapshot:
    """A cheap look at a run in progress (reads at most WINDOW samples; with `tally`, the tokens of
    at most TOKEN_TAIL more)."""
    start = records.start_ns
    elapsed = max(now_ns - start, 0) / 1e9 if start else 0.0
    issued = records.n_samples_issued
    lo = max(0, issued - WINDOW)
    done = records.sample_done_ns[lo:issued]
    lat_ms: dict[float, float] = {}
    ttft_ms: dict[float, float] = {}
    tpot_ms: dict[float, float] = {}
    tokens = records.sample_first_token_ns.flags.writeable  # token latencies are being recorded
    if done.size:
        queries = np.searchsorted(schedule.query_offsets, np.arange(lo, issued), side="right") - 1
        ok = done != NOT_SET
        if ok.any():
            sched = records.query_scheduled_ns[queries[ok]]
            lat = (done[ok] - sched) / 1e6
            for p in (0.5, 0.9, 0.99):
                lat_ms[p] = float(np.quantile(lat, p))
            if tokens and (plan is None or plan.scenario != "Offline"):  # Offline reports no TTFT/TPOT
                first = records.sample_first_token_ns[lo:issued][ok]
                has = first != NOT_SET
                ttft_ms = _quantiles((first[has] - sched[has]) / 1e6)
                per = np.maximum(records.sample_n_tokens[lo:issued][ok][has] - 1, 1)
                tpot_ms = _quantiles((done[ok][has] - first[has]) / per / 1e6)
    rate = completed / elapsed if elapsed > 0 else 0.0
    total, eta = (None, None)
    if plan is not None:
        # SingleStream/MultiStream issue a query when the one before is done: issued is done, within one
        total, eta = _total_and_eta(schedule, plan, elapsed, records.n_queries_issued, completed, rate)
    tokens_per_s = None
    if tokens and tally is not None:
        tokens_per_s = tally.total(records, issued) / elapsed if elapsed > 0 else 0.0
    return Snapshot(
        elapsed,
        records.n_queries_issued,
        issued,
        completed,
        rate,
        lat_ms,
        total,
        eta,
        ttft_ms,
        tpot_ms,
        tokens_per_s,
        waiting_s,
    )
