"""The engine's time source: integer nanoseconds on one monotonic clock.

Everything timed goes through a `Clock` so tests can drive the issuer with a `ManualClock` and
assert exact timestamps instead of measuring wall time.
"""

from __future__ import annotations

import threading
import time
from typing import Protocol

# time.sleep overshoots by tens of microseconds on Linux; sleep until this much before the
# deadline, then spin (yielding the GIL) so Server queries leave close to their scheduled time.
SPIN_MARGIN_NS = 100_000


class Clock(Protocol):
    def now_ns(self) -> int: ...

    def sleep_until(self, t_ns: int) -> None: ...


class MonotonicClock:
    """`time.perf_counter_ns`: CLOCK_MONOTONIC on Linux, the finest clock Python offers."""

    __slots__ = ("now_ns", "spin_margin_ns")

    def __init__(self, spin_margin_ns: int = SPIN_MARGIN_NS) -> None:
        self.now_ns = time.perf_counter_ns
        self.spin_margin_ns = spin_margin_ns

    def sleep_until(self, t_ns: int) -> None:
        now = time.perf_counter_ns
        remaining = t_ns - now()
        if remaining > self.spin_margin_ns:
            time.sleep((remaining - self.spin_margin_ns) * 1e-9)
        while now() < t_ns:
            time.sleep(0)  # releases the GIL so completion threads are not starved while we spin


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
