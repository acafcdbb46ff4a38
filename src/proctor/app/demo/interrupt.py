"""Ctrl-C during the demo: the first stops it where it stands, a second exits at once.

A run in progress is stopped by the engine's own Ctrl-C handling (issuing stops, the SUT gets its
drain, the logs are written marked incomplete) and the run session closes the SUT (`ClosableSUT`:
it drops what is still queued); the demo only stops going on to the next phase.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from proctor.loadgen import stop_signals


class StopFlag:
    """Set on the first Ctrl-C, and when the demo ends on an interrupt it caught elsewhere."""

    def __init__(self) -> None:
        self.event = threading.Event()

    @property
    def is_set(self) -> bool:
        return self.event.is_set()

    def check(self) -> None:
        """Between phases: a Ctrl-C that landed inside a thread or C call still stops the demo."""
        if self.is_set:
            raise KeyboardInterrupt


@contextmanager
def interruptible(stop: StopFlag) -> Iterator[None]:
    """For the demo's duration: the first stop signal (Ctrl-C; SIGTERM or SIGHUP where the process
    handles them, stop_signals.install) sets `stop` and raises its KeyboardInterrupt in the main
    thread (once); a second one exits at once with 128 + the signal. Outside the main thread: no-op."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        if stop.is_set:
            os.write(2, b"\ninterrupted again: exiting now\n")
            os._exit(128 + signum)
        stop.event.set()
        raise stop_signals.interruption(signum)

    previous = {
        sig: signal.signal(sig, handler) for sig in stop_signals.STOP_SIGNALS if callable(signal.getsignal(sig))
    }
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


__all__ = ["StopFlag", "interruptible"]
