"""The engine's time source: integer nanoseconds on one monotonic clock.

Everything timed goes through a `Clock` so tests can drive the issuer with a `ManualClock` and
assert exact timestamps instead of measuring wall time.
"""

from __future__ import annotations

import functools
import os
import threading
import time
from collections.abc import Callable
from typing import Protocol

# time.sleep overshoots by tens of microseconds on Linux; while the spin is on, sleep until this much
# before the deadline, then spin (yielding the GIL) so Server queries leave close to their schedule.
SPIN_MARGIN_NS = 100_000
# A wait that ends this much past its deadline was preempted (or waited for the GIL): a wake-up costs
# tens of microseconds, plus up to the thread's timer slack (50 us by default) when not spinning.
PREEMPTED_NS = 200_000
# The spin is decided per window of this many waits: on in the next window when at most
# SPIN_MAX_LATE of them ended preempted, off (pure sleeping) otherwise. With the fine timer slack
# it goes with, the spin saves ~50 us of lateness and costs ~10 us of CPU per query (measured here at
# 10k QPS), so it runs only where the host is demonstrably idle.
SPIN_WINDOW = 256
SPIN_MAX_LATE = 0
# At low rates a window also closes after this much time once it holds SPIN_MIN_WAITS waits: there
# the spin costs next to nothing (margin x rate), and 256 waits at 4 queries/s would take a minute.
SPIN_WINDOW_NS = 1_000_000_000
SPIN_MIN_WAITS = 8
# Turned off after it was on, the spin needs twice as many precise windows in a row as the last time
# to come back (1, 2, 4, ... up to this many): on a host that preempts every few windows it stays off.
SPIN_BACKOFF_MAX = 64
# Sparse waits (a window's mean wait at least this long: Server at <= 100 queries/s) spin differently.
# There a spin is a small share of the thread's time, so it costs the issuer nothing in the scheduler's
# fairness, and the wake-up after a long idle sleep is the slow one: measured here (an idle 2-core VM,
# 1 us timer slack) 60-120 us p50, 170-200 us p90, beyond a fixed 30 us margin. So the margin is
# learned: the p90 of the last window's wake-up overshoots plus SPIN_PAD_NS, at least the clock's own
# margin and at most SPARSE_SPIN_SHARE of the mean wait (and SPIN_MAX_NS); it is on whenever the host is
# not crowded (late waits do not turn it off: a longer spin is what absorbs them). Measured against
# `proctor serve llm` at 4 req/s (bench/llm_client.py --breakdown 4): schedule -> issue_query p50
# 135-188 us with the fixed margin, 77 us with the learned one, 51-56 us adding the warm-up below.
# Tried and not kept: sparse waits spinning from the first arrival (told the schedule's rate) and
# judging the host by one look per wait (the majority) instead of one per window. The clock's own
# lateness fell (--breakdown 4: schedule -> issue_query p90 158-178 -> 101-134 us), but against the
# independent stub (bench/llm_client.py --cases 4,50 --together, 3 alternating repeats) TTFT p50 over
# the bare client rose in all four cells, by 34-61 us from the schedule and 57-71 us from the send.
SPARSE_WAIT_NS = 10_000_000
SPARSE_SPIN_SHARE = 0.01
SPIN_PAD_NS = 20_000
SPIN_MAX_NS = 1_000_000
# With `on_spin` set (the issuer's dry run of its issue path, see loadgen.types.WarmableSUT), a sparse
# spin starts this much earlier still and runs it once, first, if at least WARM_MIN_NS remain.
WARM_LEAD_NS = 100_000
WARM_MIN_NS = 50_000
# Where the kernel tells how many tasks are runnable right now (the 4th field: runnable/total).
LOADAVG_PATH = "/proc/loadavg"


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def host_crowded(cpus: int | None = None, path: str = LOADAVG_PATH) -> bool | None:
    """Whether more tasks are runnable on the host right now than there are CPUs for this process
    (the caller counted: it is running); None where the kernel does not say (not Linux).

    A spin is only free on a CPU nobody else wants: with every CPU taken (a CPU hog per core beside
    the run), each microsecond spun counts against the issuer in the scheduler's fairness, which
    then leaves it runnable but off the CPU for a whole tick (4 ms) on later wake-ups. Traced here
    (sched_switch/sched_wakeup) beside one hog per core at 10k QPS: with the spin's trial windows,
    Server p99 lateness 2.4-2.9 ms in 4 of 4 runs; sleeping only, 0.07-2.3 ms, as the official's.
    Lateness alone cannot tell: the waits before a trial are as punctual there as on an idle host.
    """
    try:  # three syscalls (open() would make nine): this runs on the issuing thread
        fd = os.open(path, os.O_RDONLY)
        try:
            text = os.read(fd, 256)
        finally:
            os.close(fd)
        running = int(text.split()[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):
        return None
    return running > (usable_cpus() if cpus is None else cpus)


class Clock(Protocol):
    def now_ns(self) -> int: ...

    def sleep_until(self, t_ns: int) -> None: ...


class MonotonicClock:
    """`time.perf_counter_ns`: CLOCK_MONOTONIC on Linux, the finest clock Python offers.

    `sleep_until` spins (up to `spin_margin_ns` before the deadline) only while the recent waits were
    precise. On a contended host a spinning thread uses up its CPU share, and the scheduler then
    leaves it off the CPU for whole time slices (milliseconds) when it next wakes; there pure
    sleeping, as the official LoadGen does, is later by tens of microseconds but never by a slice.
    The choice is made from SPIN_WINDOW waits at a time, never from one, and starts with sleeping;
    a window also counts as late when, at its end, `crowded()` says every CPU is wanted (the spin
    would take a CPU from another task: see host_crowded).
    `on_precise`, when set, is told each change (True: spinning from now on), so the issuer can
    give the thread a fine timer slack only while it spins (issuer.fine_timer_slack).
    """

    __slots__ = (
        "_clean",
        "_clean_needed",
        "_crowded",
        "_late",
        "_overshoots",
        "_waited",
        "_window_start",
        "_sleep",
        "_waits",
        "margin_ns",
        "now_ns",
        "on_precise",
        "on_spin",
        "sparse",
        "spin_margin_ns",
    )

    def __init__(
        self,
        spin_margin_ns: int = SPIN_MARGIN_NS,
        *,
        now_ns: Callable[[], int] = time.perf_counter_ns,
        sleep: Callable[[float], None] = time.sleep,
        crowded: Callable[[], bool | None] | None = None,
    ) -> None:
        self.now_ns = now_ns
        self._crowded = crowded or functools.partial(host_crowded, usable_cpus())  # CPUs read once
        self._sleep = sleep  # injectable so tests can play a host's wake-ups
        self.spin_margin_ns = spin_margin_ns  # the spin when it is on
        self.margin_ns = 0  # the spin now: 0 (sleep to the deadline) until a window was precise
        self.on_precise: Callable[[bool], None] | None = None
        # called once at the start of a sparse spin (the issuer's warm-up); sparse: the last window's
        # waits were sparse (SPARSE_WAIT_NS)
        self.on_spin: Callable[[], None] | None = None
        self.sparse = False
        self._waits = 0
        self._late = 0
        self._clean = 0  # precise windows in a row while the spin is off
        self._clean_needed = 1  # how many turn it on
        self._window_start = -1  # when the current window's first wait ended (-1: none yet)
        self._overshoots: list[int] = []  # this window's sleeps: how long past their target each woke
        self._waited = 0  # this window's waits, summed (ns)

    def sleep_until(self, t_ns: int) -> None:
        now, sleep = self.now_ns, self._sleep
        remaining = t_ns - now()
        if remaining <= 0:
            return  # nothing waited: nothing learned
        margin = self.margin_ns
        if remaining > margin:
            sleep((remaining - margin) * 1e-9)
            end = now()
            if len(self._overshoots) < SPIN_WINDOW:
                self._overshoots.append(end - (t_ns - margin))
        else:
            end = now()
        if margin and self.sparse and self.on_spin is not None and t_ns - end >= WARM_MIN_NS:
            self.on_spin()
            end = now()
        while end < t_ns:
            sleep(0)  # releases the GIL so completion threads are not starved while we spin
            end = now()
        self._waits += 1
        self._waited += remaining
        if end - t_ns > PREEMPTED_NS:
            self._late += 1
        if self._window_start < 0:
            self._window_start = end
        if self._waits >= SPIN_WINDOW or (
            self._waits >= SPIN_MIN_WAITS and end - self._window_start >= SPIN_WINDOW_NS
        ):
            self._decide()

    def note_late(self) -> None:
        """The caller found a deadline already PREEMPTED_NS past without waiting (it was preempted
        while running, or it runs behind): a late wait for the spin's window."""
        self._waits += 1
        self._late += 1
        if self._waits >= SPIN_WINDOW:
            self._decide()

    def _decide(self) -> None:
        clean = self._late <= SPIN_MAX_LATE
        waits, waited, overshoots = self._waits, self._waited, self._overshoots
        self._waits = self._late = self._waited = 0
        self._overshoots = []
        self._window_start = -1
        if self.spin_margin_ns <= 0:  # no spin asked for: always sleeping
            return
        self.sparse = bool(waits and waited >= SPARSE_WAIT_NS * waits)
        if self.sparse:
            self._decide_sparse(waited // waits, overshoots)
            return
        if clean and self._crowded() is True:  # once per window: one small file read (~2 us)
            clean = False
        if self.precise:
            if clean:
                return
            self._clean_needed = min(2 * self._clean_needed, SPIN_BACKOFF_MAX)  # the trial failed
            self._set(False)
        elif not clean:
            self._clean = 0
        else:
            self._clean += 1
            if self._clean >= self._clean_needed:
                self._clean = 0
                self._set(True)

    def _decide_sparse(self, mean_wait: int, overshoots: list[int]) -> None:
        """Sparse waits: on unless the host is crowded, the margin learned (see SPARSE_WAIT_NS)."""
        if self._crowded() is True:
            if self.precise:
                self._set(False)
            return
        cap = max(self.spin_margin_ns, min(SPIN_MAX_NS, int(mean_wait * SPARSE_SPIN_SHARE)))
        learned = SPIN_PAD_NS + (WARM_LEAD_NS if self.on_spin is not None else 0)
        if overshoots:
            overshoots.sort()
            learned += max(0, overshoots[-(-9 * len(overshoots) // 10) - 1])  # the p90 (nearest rank)
        margin = min(max(self.spin_margin_ns, learned), cap)
        if self.precise:
            self.margin_ns = margin
        else:
            self._clean = 0
            self._set(True, margin)

    def _set(self, precise: bool, margin: int = 0) -> None:
        self.margin_ns = (margin or self.spin_margin_ns) if precise else 0
        if self.on_precise is not None:
            self.on_precise(precise)

    @property
    def precise(self) -> bool:
        """Whether waits spin now (the last window's waits all ended on time)."""
        return self.margin_ns > 0


class ManualClock:
    """A clock that only moves when told to: sleeping jumps to the deadline, `advance` adds."""

    def __init__(self, start_ns: int = 1_000_000_000, tick_ns: int = 0) -> None:
        self._t = start_ns
        self._tick = tick_ns  # added on every read, so successive reads differ when wanted
        self._lock = threading.Lock()

    def now_ns(self) -> int:
        with self._lock:
            t = self._t
            self._t += self._tick
            return t

    def sleep_until(self, t_ns: int) -> None:
        with self._lock:
            self._t = max(self._t, t_ns)

    def advance(self, dt_ns: int) -> None:
        with self._lock:
            self._t += dt_ns
