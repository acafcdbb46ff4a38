"""Precise emission for test servers whose timing is the truth a client is measured against.

asyncio's own timers are late by up to a millisecond and more: epoll's timeout is whole
milliseconds, rounded up, and an idle CPU (here a VM) adds its wake-up time. A server that injects
"TTFT 40 ms" and sleeps 40 ms with asyncio delivers 40.5-41 ms, and every client then looks worse
than it is. `PreciseTimer` wakes the loop at `deadline - lead` with a timerfd (Linux, nanosecond
absolute deadlines on CLOCK_MONOTONIC, the clock of `time.monotonic` and the loop), or with
`loop.call_at` where there is none (lead 1.5 ms then), and covers the last `lead` by letting the
loop spin (`call_soon` re-checks, so other streams' I/O keeps flowing while it waits): a deadline
is resolved at the first loop pass at or after it, never before. Spinning costs CPU (lead x
deadlines per second): past `MAX_SPIN_FRACTION` of a second it stops until the next second, so a
server with thousands of streams does not starve the client it shares the machine with.

`StampedProtocol` records when a request's first byte reached the process (the protocol's
`data_received`, before the HTTP parser and the handler task), so deadlines count from arrival.
`LatenessHist` keeps the server's own emission lateness (bounded memory) so a benchmark reports it
apart from the client's error.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import heapq
import itertools
import math
import os
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

CLOCK_MONOTONIC = 1
TFD_TIMER_ABSTIME = 1
LEAD_TIMERFD_S = 0.0003  # a timerfd wake in a VM is ~70-200 us late: spin the last 0.3 ms
LEAD_LOOP_S = 0.0015  # asyncio's call_at rounds up to the millisecond: spin the last 1.5 ms
MAX_SPIN_FRACTION = 0.25  # spin at most this share of each second; past it, wake on the timer alone


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


class _Itimerspec(ctypes.Structure):
    _fields_ = [("it_interval", _Timespec), ("it_value", _Timespec)]


class TimerFD:
    """A Linux timerfd on CLOCK_MONOTONIC armed at absolute times (ctypes: os.timerfd_* is 3.13+)."""

    def __init__(self) -> None:
        if not sys.platform.startswith("linux"):
            raise OSError("timerfd is Linux only")
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        self._settime = libc.timerfd_settime
        fd = libc.timerfd_create(CLOCK_MONOTONIC, os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "timerfd_create failed")
        self.fd: int = fd

    def arm(self, t: float) -> None:
        """Fire at monotonic time t (s); rounded up to the nanosecond so it is never early."""
        ns = max(1, math.ceil(t * 1e9))
        spec = _Itimerspec(_Timespec(0, 0), _Timespec(ns // 1_000_000_000, ns % 1_000_000_000))
        if self._settime(self.fd, TFD_TIMER_ABSTIME, ctypes.byref(spec), None) != 0:
            raise OSError(ctypes.get_errno(), "timerfd_settime failed")

    def clear(self) -> None:
        with contextlib.suppress(BlockingIOError, InterruptedError):
            os.read(self.fd, 8)

    def close(self) -> None:
        os.close(self.fd)


class PreciseTimer:
    """`await timer.wait(deadline)` returns at the first loop pass at or after `deadline`.

    One heap of deadlines and one wake source for all of them (thousands of streams cost one
    timer). `clock` and `timerfd` are injectable so the scheduling logic is tested without time.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, *, clock: Callable[[], float] = time.monotonic,
                 timerfd: bool = True, lead_s: float | None = None) -> None:
        self.loop = loop
        self.clock = clock
        self._heap: list[tuple[float, int, asyncio.Future[None]]] = []
        self._seq = itertools.count()
        self._fd: TimerFD | None = None
        if timerfd:
            try:
                self._fd = TimerFD()
                loop.add_reader(self._fd.fd, self._on_fd)
            except (OSError, AttributeError, NotImplementedError):
                if self._fd is not None:
                    self._fd.close()
                self._fd = None
        self.lead = lead_s if lead_s is not None else (LEAD_TIMERFD_S if self._fd else LEAD_LOOP_S)
        self.armed: float | None = None  # the wake time set now (None: none)
        self._handle: asyncio.TimerHandle | None = None
        self._spinning = False
        self.spins = 0  # loop passes spent waiting inside the lead (the cost of precision)
        self.spin_s = 0.0  # time spent spinning in the current one-second window
        self._window = 0.0
        self._last_tick = 0.0

    @property
    def kind(self) -> str:
        return "timerfd" if self._fd is not None else "loop"

    def wait(self, deadline: float) -> asyncio.Future[None]:
        fut: asyncio.Future[None] = self.loop.create_future()
        if deadline <= self.clock():
            fut.set_result(None)
            return fut
        heapq.heappush(self._heap, (deadline, next(self._seq), fut))
        if self._heap[0][2] is fut and not self._spinning:
            self._schedule(self.clock())
        return fut

    def _schedule(self, now: float) -> None:
        """Arm the wake source for the earliest live deadline, or spin when it is within the lead."""
        heap = self._heap
        while heap and heap[0][2].done():  # a client that left: its wait was cancelled
            heapq.heappop(heap)
        if not heap:
            return
        if now - self._window >= 1.0:
            self._window, self.spin_s = now, 0.0
        wake = heap[0][0] - (self.lead if self.spin_s < MAX_SPIN_FRACTION else 0.0)
        if wake <= now:
            self._last_tick = now
            self._spinning = True
            self.loop.call_soon(self._tick)
        elif wake != self.armed:
            self._arm(wake)

    def _arm(self, wake: float) -> None:
        self.armed = wake
        if self._fd is not None:
            self._fd.arm(wake)
        else:
            if self._handle is not None:
                self._handle.cancel()
            self._handle = self.loop.call_at(wake, self._on_fd)

    def _on_fd(self) -> None:
        if self._fd is not None:
            self._fd.clear()
        self.armed = None
        self._handle = None
        if not self._spinning:
            self._tick()

    def _tick(self) -> None:
        """Resolve every deadline that has come, in order; then spin or re-arm for the next."""
        now = self.clock()
        if self._spinning:
            self.spin_s += now - self._last_tick
        self._spinning = False
        heap = self._heap
        while heap and heap[0][0] <= now:
            fut = heapq.heappop(heap)[2]
            if not fut.done():
                fut.set_result(None)
        if heap:
            self.spins += 1
        self._schedule(now)

    def close(self) -> None:
        if self._fd is not None:
            self.loop.remove_reader(self._fd.fd)
            self._fd.close()
            self._fd = None
        if self._handle is not None:
            self._handle.cancel()
        for _, _, fut in self._heap:
            fut.cancel()
        self._heap.clear()


class LatenessHist:
    """Lateness samples (s) in 1 us buckets up to 100 ms (above: the last bucket), for percentiles."""

    BUCKETS = 100_000

    def __init__(self) -> None:
        self.counts = np.zeros(self.BUCKETS + 1, np.int64)
        self.n = 0
        self.max_s = 0.0
        self.early = 0  # samples below zero: must stay 0 (a deadline is never resolved early)

    def add(self, late_s: float) -> None:
        if late_s < 0:
            self.early += 1
            late_s = 0.0
        us = int(late_s * 1e6)
        self.counts[us if us < self.BUCKETS else self.BUCKETS] += 1
        self.n += 1
        if late_s > self.max_s:
            self.max_s = late_s

    def percentiles(self, qs: tuple[float, ...] = (50, 90, 99)) -> list[float]:
        """The q-th percentiles (0..100) in us: the upper edge of the bucket holding each."""
        if not self.n:
            return [float("nan")] * len(qs)
        cum = np.cumsum(self.counts)
        out = []
        for q in qs:
            k = int(np.searchsorted(cum, max(1, math.ceil(q / 100 * self.n))))
            out.append(float(k + 1) if k < self.BUCKETS else self.max_s * 1e6)
        return out

    def summary(self) -> dict[str, Any]:
        """JSON-ready: the percentiles are null while there is no sample."""
        p50, p90, p99 = self.percentiles() if self.n else (None, None, None)
        return {"n": self.n, "p50_us": p50, "p90_us": p90, "p99_us": p99, "max_us": self.max_s * 1e6,
                "early": self.early}


class StampedProtocol(asyncio.Protocol):
    """Wraps an HTTP server protocol: `rx` is the time the current request's first byte was read.

    The handler takes `rx` as the request's arrival and calls `rearm()` when its answer is done;
    HTTP/1.1 clients send the next request on a connection only after the answer, so the next
    first byte starts the next request.
    """

    __slots__ = ("_registry", "inner", "rx", "transport")

    def __init__(self, inner: asyncio.Protocol, registry: dict[Any, StampedProtocol]) -> None:
        self.inner = inner
        self._registry = registry
        self.rx: float | None = None
        self.transport: asyncio.BaseTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self._registry[transport] = self
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self.rx is None:
            self.rx = time.monotonic()
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self._registry.pop(self.transport, None)
        self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()

    def rearm(self) -> None:
        self.rx = None


__all__ = ["LatenessHist", "PreciseTimer", "StampedProtocol", "TimerFD"]
