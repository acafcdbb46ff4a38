"""A watch beside one phase: a thread that says at once what the SUT is not doing.

It reads the tracker's counters four times a second (never the records, never on the issue path):

- nothing completed for `notice_s` while samples are outstanding: one line saying so, and what to
  check when nothing has completed at all (the tracker's `waiting_s` tells the progress line to
  show "waiting for the SUT" instead of an ETA that only grows);
- every answer since the SUT's last completion was an id that was never issued (or no response at
  all), at least as many as the samples outstanding, for `notice_s` on end: those samples will
  never complete, so the run is aborted (`CompletionTracker.abort`) instead of waiting out the
  stuck limit. An honest SUT, however slow, never answers an id it was not given, so the abort
  cannot end a slow run; one real completion resets the evidence.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from proctor.loadgen.completion import CompletionTracker
from proctor.loadgen.sut_faults import COMPLETE_HOW, FaultKind, FaultTally

POLL_S = 0.25
STALL_KEY = "stall"  # FaultTally.notice_once key of the "nothing has completed" line


def stall_line(idle_s: float, issued: int, done: int, started: bool, give_up: str) -> str:
    """The line said when nothing completed for `idle_s` with samples outstanding."""
    if not started:  # nothing at all since the phase began
        return (
            f"waiting for the SUT: nothing has completed in {idle_s:.0f} s ({issued} sample(s) issued, none "
            f"completed): {COMPLETE_HOW}; {give_up}"
        )
    return (
        f"waiting for the SUT: nothing has completed in the last {idle_s:.0f} s ({issued - done} of {issued} "
        f"issued samples outstanding, {done} completed); {give_up}"
    )


def misdirected_reason(answers: int, outstanding: int, waited_s: float) -> str:
    return (
        f"the run stopped after {waited_s:.0f} s: the SUT's last {answers} answer(s) were ids never "
        f"issued, and none completed the {outstanding} sample(s) left open"
    )


class PhaseWatch:
    """The watch thread of one phase; `start` before issuing, `stop` once the phase ended."""

    def __init__(
        self,
        tracker: CompletionTracker,
        tally: FaultTally,
        notice_s: float,
        give_up: str,
        *,
        poll_s: float = POLL_S,
        clock: Callable[[], int] = time.monotonic_ns,
    ) -> None:
        self.tracker, self.tally = tracker, tally
        self.notice_ns = int(notice_s * 1e9)
        self.give_up = give_up
        self.poll_s = poll_s
        self.clock = clock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_seen = -1  # completions and first tokens at the last change
        self._last_change: int | None = None  # when they last changed (or nothing was outstanding)
        self._noted = False  # the stall line was said for this stall
        self._since: int | None = None  # since when the answers have been misdirected
        self._prev_issued = 0

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="proctor-phase-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
            self._thread = None
        self.tracker.waiting_s = 0.0

    def _run(self) -> None:
        while not self._stop.wait(self.poll_s):
            if not self.look(self.clock()):
                return

    def look(self, now: int) -> bool:
        """One look at the tracker at time `now` (ns on `clock`); False once the run was aborted."""
        tracker = self.tracker
        done, issued = tracker.completed_samples, tracker.issued_end
        seen = done + tracker.first_tokens  # a first token is progress too (an LLM's long outputs)
        if self._last_change is None or seen != self._last_seen or issued <= done:
            self._last_seen, self._last_change, self._noted = seen, now, False
            tracker.waiting_s = 0.0
        answers, outstanding = tracker.misdirected()
        lag, self._prev_issued = issued - self._prev_issued, issued  # issued since the last look: not answered yet
        if answers > 0 and outstanding > 0 and answers + lag >= outstanding:
            self._since = now if self._since is None else self._since
            if now - self._since >= self.notice_ns:
                waited = (now - self._last_change) / 1e9
                tracker.abort(misdirected_reason(answers, outstanding, waited), FaultKind.UNKNOWN_ID)
                return False
        else:
            self._since = None
        if now - self._last_change >= self.notice_ns and issued > done:
            idle = (now - self._last_change) / 1e9
            tracker.waiting_s = idle
            if not self._noted and answers == 0:  # misdirected answers: their own line said what is wrong
                self._noted = True
                self.tally.notice_once(STALL_KEY, stall_line(idle, issued, done, seen > 0, self.give_up))
        return True


__all__ = ["POLL_S", "PhaseWatch", "misdirected_reason", "stall_line"]
