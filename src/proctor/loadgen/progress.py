"""Progress of a run for people: hooks the engine calls between phases, and a live line.

Nothing here runs on the issue path: the display polls the records arrays from its own thread
(four times a second on a terminal), reading a bounded window of recent samples, so its cost does
not grow with the run. The line says what is done of the total and when the phase should end
(ETA) and, for a performance run, its elapsed time against the expected length said before it
started (loadgen.expected), and for runs with token latencies TTFT/TPOT percentiles and tokens/s so far. Without a
terminal (a pipe, a file, CI) it prints one plain line every `PLAIN_INTERVAL_S` instead, and a
final line per phase.
"""

from __future__ import annotations

import dataclasses
import math
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from proctor.loadgen.records import NOT_SET, Records, Schedule

WINDOW = 20_000  # recent samples the running percentiles are computed over
TOKEN_TAIL = 1 << 20  # samples past the all-done frontier whose tokens are summed per look (bounded)
PLAIN_INTERVAL_S = 10.0  # without a terminal: one progress line this often
PLAIN_INTERVAL_ENV = "PROCTOR_PROGRESS_INTERVAL_S"  # overrides it (tests, CI logs that want more or fewer)
CLOSED_LOOP_SCENARIOS = ("SingleStream", "MultiStream")  # a query waits for the last: they end at their bounds


def default_plain_interval_s() -> float:
    """PLAIN_INTERVAL_S, or the environment's override when it is a number > 0."""
    try:
        value = float(os.environ.get(PLAIN_INTERVAL_ENV, ""))
    except ValueError:
        return PLAIN_INTERVAL_S
    return value if math.isfinite(value) and value > 0 else PLAIN_INTERVAL_S


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


@dataclass(frozen=True, slots=True)
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


@dataclass(slots=True)
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


@dataclass(frozen=True, slots=True)
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


def _eta_text(seconds: float) -> str:
    if seconds >= 3600:
        return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60):02d} min"
    if seconds >= 60:
        return f"{int(seconds // 60)} min {int(seconds % 60):02d} s"
    return f"{seconds:.0f} s"


def format_snapshot(s: Snapshot, label: str) -> str:
    pct = "  ".join(f"p{int(p * 100)} {v:.3f} ms" for p, v in s.latency_ms.items())
    of = f" of {s.total_samples:,}" if s.total_samples is not None else ""
    if s.eta_s is None:
        eta = ""
    elif s.eta_s == math.inf:
        eta = "  ETA unknown until a query completes"
    else:
        eta = f"  ETA {_eta_text(s.eta_s)}"
    if s.waiting_s > 0:  # an ETA from a rate that is not moving only grows: say what is happening
        eta = f"  waiting for the SUT: nothing completed in {_eta_text(s.waiting_s)}"
    expected = ""
    if s.expected_s is not None:
        sign = ">=" if s.expected_at_least else "" if s.expected_exact else "~"
        # under 10 s whole seconds say too little (a 0.5 s bound read ">=0 s")
        length = f"{s.expected_s:.1f} s" if s.expected_s < 10 else _eta_text(s.expected_s)
        expected = f" / {sign}{length}"
    line = (
        f"{label}  {s.elapsed_s:6.1f} s{expected}  queries {s.queries_issued}  samples {s.samples_issued} issued / "
        f"{s.samples_completed} done{of}{eta}  {s.qps:,.0f}/s  {pct}"
    )
    if s.ttft_ms:
        line += "  TTFT " + " / ".join(f"p{int(p * 100)} {v:.1f}" for p, v in s.ttft_ms.items()) + " ms"
    if s.tpot_ms:
        line += "  TPOT " + " / ".join(f"p{int(p * 100)} {v:.2f}" for p, v in s.tpot_ms.items()) + " ms"
    if s.tokens_per_s is not None:
        line += f"  {s.tokens_per_s:,.0f} tok/s"
    return line


@dataclass(slots=True)
class SetTally:
    """A run issued over several loaded sets (`on_sets`): what the sets before this one did, so each
    line counts the whole run's queries and samples of its total, not one set's."""

    mode: str
    sizes: list[int]
    index: int = -1  # the set in progress
    queries: int = 0
    issued: int = 0
    done: int = 0
    elapsed_s: float = 0.0

    def label(self) -> str:
        return f"{self.mode} set {self.index + 1}/{len(self.sizes)}"

    def whole(self, s: Snapshot) -> Snapshot:
        """The set's snapshot as the run's: the earlier sets' counts added, of all the sets' samples."""
        elapsed = self.elapsed_s + s.elapsed_s
        done = self.done + s.samples_completed
        total = sum(self.sizes)
        rate = done / elapsed if elapsed > 0 else 0.0
        eta = None if s.eta_s is None else ((total - done) / rate if rate > 0 else None)
        return dataclasses.replace(
            s, elapsed_s=elapsed, queries_issued=self.queries + s.queries_issued,
            samples_issued=self.issued + s.samples_issued, samples_completed=done, qps=rate,
            total_samples=total, eta_s=eta,
        )

    def add(self, s: Snapshot) -> None:
        """A set ended with snapshot `s` (its own counts)."""
        self.queries += s.queries_issued
        self.issued += s.samples_issued
        self.done += s.samples_completed
        self.elapsed_s += s.elapsed_s


class LiveProgress(ProgressHooks):
    """A live line on a terminal: elapsed time, done of total, ETA, throughput, running latency
    percentiles (and for token runs TTFT/TPOT and tokens/s so far).

    When the console is not a terminal (a pipe, a file) nothing is drawn live: a plain line every
    `plain_interval_s` (default `default_plain_interval_s()`: 10 s) and one final line per phase, each
    newline-terminated, so nothing printed after it is glued to it. A notice (`on_notice`: a SUT
    fault, a stall) is printed at once either way, as a `warning:` line of its own."""

    def __init__(
        self, console: Any | None = None, interval_s: float = 0.25, plain_interval_s: float | None = None
    ) -> None:
        from rich.console import Console

        self.console = console or Console(stderr=True)
        self.interval_s = interval_s
        self.plain_interval_s = plain_interval_s if plain_interval_s is not None else default_plain_interval_s()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._live: Any = None
        self._phase: tuple[Schedule, Records, Any, str] | None = None
        self._effective: Any = None
        self._plan = Plan()
        self._tally = TokenTally()
        self._sets: SetTally | None = None  # a run over several loaded sets (accuracy)
        self._expected: Any = None  # the coming performance phase's expected length (on_expected)
        self.updates = 0
        self._notices: list[str] = []
        self._notice_lock = threading.Lock()
        self._wake = threading.Event()  # a notice came: print it now, not at the next tick

    def on_notice(self, line: str) -> None:
        with self._notice_lock:
            self._notices.append(line)
        self._wake.set()

    def _flush_notices(self) -> None:
        with self._notice_lock:
            lines, self._notices = self._notices, []
        for line in lines:
            self.console.print(f"warning: {line}", markup=False, highlight=False, soft_wrap=True)

    def _tick(self, timeout_s: float) -> bool:
        """Wait up to `timeout_s` or until a notice comes (printed then); False once stopped."""
        self._wake.wait(timeout_s)
        self._wake.clear()
        self._flush_notices()
        return not self._stop.is_set()

    def on_end(self, outcome: Any) -> None:
        self._flush_notices()  # the run's end: the count lines, a fault said after the last phase
        self._sets = None

    def on_sets(self, mode: Any, samples: Sequence[int]) -> None:
        self._sets = SetTally(str(mode), [int(n) for n in samples]) if len(samples) > 1 else None

    def on_settings(self, effective: Any) -> None:
        self._effective = effective

    def on_expected(self, expected: Any) -> None:
        """Say how long the run will last and why, before it starts."""
        self._expected = expected
        self.console.print(expected.text, markup=False, highlight=False, soft_wrap=True)

    def _look(self, now_ns: int | None = None, *, final: bool = False) -> str:
        assert self._phase is not None
        schedule, records, tracker, label = self._phase
        if now_ns is None:
            now_ns = time.perf_counter_ns()
        snap = snapshot(
            schedule, records, tracker.completed_samples, now_ns, plan=self._plan, tally=self._tally,
            waiting_s=0.0 if final else float(getattr(tracker, "waiting_s", 0.0)),
        )
        if self._expected is not None and label == "PerformanceOnly":
            snap = dataclasses.replace(snap, expected_s=self._expected.seconds,
                                       expected_exact=bool(self._expected.exact),
                                       expected_at_least=bool(getattr(self._expected, "at_least", False)))
        if final:  # the phase ended: no time left to estimate; past the official queries (an
            # early-stopping extension, which stops when it can), or where the total was only an
            # estimate from the rate (a closed loop ends at its bounds), the total is what was issued
            nominal = schedule.nominal_queries
            past = 0 < nominal < schedule.n_queries and records.n_queries_issued > nominal
            past = past or (self._plan.performance and self._plan.scenario in CLOSED_LOOP_SCENARIOS)
            snap = dataclasses.replace(
                snap, eta_s=None, total_samples=snap.samples_issued if past else snap.total_samples
            )
        sets = self._sets
        if sets is not None and sets.mode == label:
            whole = sets.whole(snap)
            if final:
                sets.add(snap)
            return format_snapshot(whole, sets.label())
        return format_snapshot(snap, label)

    def on_phase(self, mode: Any, schedule: Schedule, records: Records, tracker: Any) -> None:
        from rich.live import Live
        from rich.text import Text

        self._stop.clear()
        self._phase = (schedule, records, tracker, str(mode))
        if self._sets is not None and self._sets.mode == str(mode):
            self._sets.index += 1
        self._plan = Plan.of(self._effective, mode)
        if str(mode) != "PerformanceOnly":
            self._expected = None
        self._tally = TokenTally()
        if not self.console.is_terminal:  # a pipe or a file: a plain line now and then
            self._thread = threading.Thread(target=self._plain_loop, name="proctor-progress", daemon=True)
            self._thread.start()
            return
        self._live = Live(
            Text(f"{mode}: starting"), console=self.console, refresh_per_second=4, transient=False
        )
        self._live.start()

        def loop() -> None:
            next_at = time.monotonic() + self.interval_s
            while self._tick(max(next_at - time.monotonic(), 0.0)):
                if time.monotonic() >= next_at:
                    next_at = time.monotonic() + self.interval_s
                    self._live.update(Text(self._look()))
                    self.updates += 1

        self._thread = threading.Thread(target=loop, name="proctor-progress", daemon=True)
        self._thread.start()

    def _plain_loop(self) -> None:
        next_at = time.monotonic() + self.plain_interval_s
        while self._tick(max(next_at - time.monotonic(), 0.0)):
            if time.monotonic() >= next_at:
                next_at = time.monotonic() + self.plain_interval_s
                self.console.print(self._look(), markup=False, highlight=False, soft_wrap=True)
                self.updates += 1

    def on_phase_end(self, mode: Any, records: Records) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
            self._thread = None
        self._flush_notices()
        if self._phase is None:
            return
        end = records.end_ns if records.end_ns != NOT_SET else time.perf_counter_ns()
        final = self._look(end, final=True)
        self._phase = None
        if self._live is not None:
            from rich.text import Text

            self._live.update(Text(final))
            self._live.stop()
            self._live = None
        else:
            self.console.print(final, markup=False, highlight=False, soft_wrap=True)
