"""The signals that ask a run to stop, handled one way (issue 30 §5): Ctrl-C (SIGINT), SIGTERM (what
`kill`, systemd, Kubernetes and CI runners send) and SIGHUP (the terminal closed).

Python turns SIGINT into KeyboardInterrupt by default, but SIGTERM and SIGHUP kill the process at
once: a run stopped that way left a 0-byte summary and accuracy log with no incomplete mark. With
`install()` (the command line calls it) each raises `Stopped`, a KeyboardInterrupt, so every path
that keeps a Ctrl-C'd run's logs whole and marked incomplete keeps a SIGTERM'd one's the same way;
`held()` defers all three while the logs are written. The exit status is the shells' 128 + the
signal's number: 130 after Ctrl-C, 143 after SIGTERM, 129 after SIGHUP (README, "Exit status").
"""

from __future__ import annotations

import contextlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    import signal as _signal
    from collections.abc import Iterator
    from types import FrameType
    from typing import Any
else:  # `signal`'s C core, which mypy knows as `signal`: `signal` builds three enums (0.7 ms of a check)
    import _signal

# the signals a run treats as "stop now, keep the logs"; SIGQUIT keeps its core dump
STOP_SIGNALS: tuple[int, ...] = (_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP)
_NAMES = {_signal.SIGINT: "Ctrl-C", _signal.SIGTERM: "SIGTERM", _signal.SIGHUP: "SIGHUP"}


class Stopped(KeyboardInterrupt):
    """A stop signal other than Ctrl-C, raised where Ctrl-C raises KeyboardInterrupt."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by {signal_name(signum)}")
        self.signum = int(signum)


def signal_name(signum: int) -> str:
    import signal  # its names: only when a signal is reported

    try:
        return _NAMES.get(signal.Signals(signum), signal.Signals(signum).name)
    except ValueError:
        return f"signal {signum}"


def interruption(signum: int) -> KeyboardInterrupt:
    """The exception a stop signal raises: KeyboardInterrupt for SIGINT, Stopped for the others."""
    return KeyboardInterrupt() if signum == _signal.SIGINT else Stopped(signum)


def signal_of(exc: BaseException | None) -> int:
    """The signal that raised `exc` or the exception it was raised from (a command's own
    KeyboardInterrupt, such as the demo's, keeps its cause); SIGINT for a plain KeyboardInterrupt."""
    for _ in range(8):
        if exc is None or isinstance(exc, Stopped):
            break
        exc = exc.__cause__
    return exc.signum if isinstance(exc, Stopped) else int(_signal.SIGINT)


def exit_status(exc: BaseException | None) -> int:
    """128 + the signal's number: 130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP."""
    return 128 + signal_of(exc)


def reason(exc: BaseException | None) -> str:
    """The incomplete mark's text: "interrupted (Ctrl-C)", "interrupted (SIGTERM)", ..."""
    return f"interrupted ({signal_name(signal_of(exc))})"


def keep_partial(exc: BaseException, partial: object) -> None:
    """Hand what a stopped run had when it stopped (its RunOutcome; a session's result) up with the
    exception, so a caller can still report it (`--json`: the partial result, incomplete)."""
    vars(exc)["partial"] = partial


def partial_of(exc: BaseException) -> object | None:
    return vars(exc).get("partial")


def _raise(signum: int, _frame: FrameType | None) -> None:
    raise Stopped(signum)


def install() -> None:
    """SIGTERM and SIGHUP raise Stopped in the main thread from now on, where nothing else handles
    them already (a server's own handler, an embedding program's). The process's entry point calls
    it; a library run (run_test) leaves the program's signal handling as it found it."""
    for sig in STOP_SIGNALS:
        if sig == _signal.SIGINT:
            continue  # Python's own handler already raises KeyboardInterrupt
        # outside the main thread signal.signal raises ValueError: nothing changes there
        with contextlib.suppress(ValueError, OSError):
            if _signal.getsignal(sig) == _signal.SIG_DFL:
                _signal.signal(sig, _raise)


@contextlib.contextmanager
def held() -> Iterator[list[int]]:
    """Hold the stop signals while the logs are written: one raised in the middle of writing them left
    a summary empty (seen once in CI, a Ctrl-C landing as a short run ended). Yields a list that gets
    the number of each signal that came meanwhile; the caller raises `interruption(got[0])` after.
    Only a signal Python handles is held (one left to the system's default still ends the process,
    as the program asked); only the main thread can hold them, elsewhere nothing changes."""
    got: list[int] = []
    import signal  # here, not at start: a check's command line holds no signal
    import threading  # nor starts a thread

    if threading.current_thread() is not threading.main_thread():
        yield got
        return
    previous: dict[int, Any] = {}
    try:
        for sig in STOP_SIGNALS:
            handler = signal.getsignal(sig)
            if callable(handler):
                previous[sig] = signal.signal(sig, lambda signum, _frame: got.append(signum))
    except (ValueError, OSError):  # no signals here (an embedded interpreter)
        pass
    try:
        yield got
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


__all__ = [
    "STOP_SIGNALS",
    "Stopped",
    "exit_status",
    "held",
    "install",
    "interruption",
    "keep_partial",
    "partial_of",
    "reason",
    "signal_name",
    "signal_of",
]
