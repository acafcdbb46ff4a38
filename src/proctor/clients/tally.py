"""What the openai SUT counts for its report, and the completion sink its outcomes go to.

Fed by the in-process outcome sink (`openai.LocalSink`) or by the events of the worker processes
(`openai_procs.WorkerPool`'s reader thread), in the engine's process only.
"""

from __future__ import annotations

import datetime as dt
import logging
from array import array
from collections import Counter

import numpy as np

from proctor.clients.request_export import RequestLog
from proctor.clients.stream import Times, times_of
from proctor.loadgen.completion import ForwardingSink
from proctor.loadgen.sink import CompletionSink
from proctor.untrusted_text import printable

log = logging.getLogger("proctor.clients.openai")
FAULT_MESSAGE_LIMIT = 500  # characters of one fault's message in the logs
# This many requests in a row that could not connect (no answer, no completion, no other fault in
# between) and the endpoint is taken for down: the run stops issuing and ends incomplete at once,
# instead of failing every sample left in its schedule. Enough to ride out a restart's refusals of
# one burst of concurrent requests, few enough that a dead server costs a fraction of a second.
MAX_CONSECUTIVE_CONNECT_FAILURES = 32


class EndpointDown(ConnectionError):
    """The endpoints stopped answering during a run (`MAX_CONSECUTIVE_CONNECT_FAILURES`): raised to
    the engine by the next issue, which ends the run incomplete with this message."""


def _utc(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


class Tally:
    """Token count sources, faults per kind, send lateness; and `sink`, where samples complete:
    a `ForwardingSink` (the run in progress) until the engine hands the SUT its own (`start`)."""

    def __init__(self) -> None:
        self.sink: CompletionSink = ForwardingSink()
        self.faults: Counter[str] = Counter()
        self.count_sources: Counter[str] = Counter()
        self.count_mismatches = 0  # token ids and usage disagreed (the ids were used)
        self.junk_events = 0
        self.lateness_ns = array("q")  # each request's send time - the engine's issue time
        self.times: Times | None = None  # response id -> its hops, while they are recorded
        self.connect_streak = 0  # connect faults since the last completion or other outcome
        self._streak_since: dt.datetime | None = None  # when the current streak began
        self.down = ""  # why the endpoints are taken for down (set once; the run is ended)
        self.export: RequestLog | None = None  # per-request notes for the export (export=FILE)

    def note_sent(self, i: int, t_issue: int, t_sent: int) -> None:
        self.lateness_ns.append(t_sent - t_issue)
        if self.export is not None:
            self.export.sent(i, t_sent)
        times = self.times
        if times is not None:
            rt = times_of(times, i)
            rt.issued, rt.sent = t_issue, t_sent

    def note_done(self, i: int, source: str, mismatch: bool) -> None:
        self.connect_streak = 0
        if self.export is not None:
            self.export.done(i, source)
        if mismatch:
            self.count_mismatches += 1
        if source not in self.count_sources:
            log.info("token counts from %s (first sample %d)", source, i)
        self.count_sources[source] += 1

    def fail(self, i: int, idx: int, kind: str, message: str) -> None:
        message = printable(message, FAULT_MESSAGE_LIMIT)  # it may quote what the server sent
        self.faults[kind] += 1
        if self.export is not None:
            self.export.failed(i, kind)
        if self.faults[kind] == 1:  # one console line per kind; report() gives the counts
            log.warning("openai SUT: sample %d (QSL index %d) failed: %s: %s (later %s faults are counted, "
                        "not shown)", i, idx, kind, message, kind)
        # counted by kind (the first of each in the detail log); the sample is no result
        self.sink.fail([i], f"openai SUT: {kind}: {message}")
        if kind != "connect":
            self.connect_streak = 0
            return
        if self.connect_streak == 0:
            self._streak_since = dt.datetime.now(dt.UTC)
        self.connect_streak += 1
        if self.connect_streak >= MAX_CONSECUTIVE_CONNECT_FAILURES and not self.down:
            since = self._streak_since or dt.datetime.now(dt.UTC)
            self.down = (
                f"openai SUT: the endpoint stopped answering at {_utc(since)}: "
                f"{self.connect_streak} requests in a row could not connect (last: {message[:200]}); "
                "the run stopped issuing and ended incomplete"
            )
            log.warning("%s", self.down)
            abort = getattr(self.sink, "abort", None)
            if abort is not None:
                abort(self.down)

    def lateness_line(self) -> str | None:
        lat = np.frombuffer(self.lateness_ns, np.int64) if len(self.lateness_ns) else None
        if lat is None:
            return None
        p50, p99 = np.percentile(lat, [50, 99])
        return (
            f"send lateness (request sent - engine issue) over {lat.size} requests: "
            f"p50 {p50 / 1e6:.3f} ms, p99 {p99 / 1e6:.3f} ms, max {int(lat.max()) / 1e6:.3f} ms"
        )


__all__ = ["MAX_CONSECUTIVE_CONNECT_FAILURES", "EndpointDown", "Tally"]
