"""What the openai SUT counts for its report, and the completion sink its outcomes go to.

Fed by the in-process outcome sink (`openai.LocalSink`) or by the events of the worker processes
(`openai_procs.WorkerPool`'s reader thread), in the engine's process only.
"""

from __future__ import annotations

import datetime as dt
import logging
from array import array
from collections import Counter
from typing import Any

import numpy as np

from proctor.clients.request_export import RequestLog
from proctor.clients.stream import Endpoint, Times, times_of
from proctor.loadgen.completion import ForwardingSink
from proctor.loadgen.sink import CompletionSink
from proctor.typed_records import record
from proctor.untrusted_text import printable

log = logging.getLogger("proctor.clients.openai")
FAULT_MESSAGE_LIMIT = 500  # characters of one fault's message in the logs
# This many requests in a row to one endpoint that could not connect (no answer, no completion, no
# other fault of that endpoint in between) and the endpoint is taken for down. Counted per endpoint
# (`url=A,url=B`), so a live endpoint's answers never hide a dead one's refusals. A down endpoint
# is dropped with one log line (it gets no more requests; the others carry the run); when every
# endpoint is down the run stops issuing and ends incomplete at once, instead of failing every
# sample left in its schedule. Enough to ride out a restart's refusals of one burst of concurrent
# requests, few enough that a dead server costs a fraction of a second.
MAX_CONSECUTIVE_CONNECT_FAILURES = 32


class EndpointDown(ConnectionError):
    """Every endpoint stopped answering during a run (`MAX_CONSECUTIVE_CONNECT_FAILURES` each):
    raised to the engine by the next issue, which ends the run incomplete with this message."""


@record(slots=True)
class _Streak:
    """One endpoint's connect faults in a row."""

    count: int = 0
    since: dt.datetime | None = None  # when the streak began
    settled: int = 0  # the endpoint's settled requests (sent - outstanding) at its last connect fault


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
        # the endpoints the transports send to (the SUT sets its own: the same objects, whose
        # `sent` and `outstanding` counts tell whether anything else settled between two faults)
        self.endpoints: list[Endpoint] = []
        self._streaks: dict[int, _Streak] = {}  # endpoint index -> its streak; -1: no endpoint named
        self.dropped: list[str] = []  # one line per endpoint taken for down while others went on
        self.down = ""  # why the endpoints are taken for down (set once; the run is ended)
        self.export: RequestLog | None = None  # per-request notes for the export (export=FILE)
        self.warming: Any = None  # clients.warmup.WarmUp: takes the warm-up requests' outcomes (ids < 0)

    def warm_settled(self, i: int, kind: str | None) -> None:
        """A warm-up request ended (kind: its fault, None: completed): counted there, nowhere else."""
        if self.warming is not None:
            self.warming.settled(i, kind)

    def note_sent(self, i: int, t_issue: int, t_sent: int) -> None:
        self.lateness_ns.append(t_sent - t_issue)
        if self.export is not None:
            self.export.sent(i, t_sent)
        times = self.times
        if times is not None:
            rt = times_of(times, i)
            rt.issued, rt.sent = t_issue, t_sent

    def note_done(self, i: int, source: str, mismatch: bool) -> None:
        self._streaks.pop(-1, None)  # an answer: a streak no endpoint was named for starts again
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
            self._streaks.pop(-1, None)
            return
        self._connect_fault(message)

    def _endpoint_of(self, message: str) -> int:
        """The endpoint a connect fault names ("cannot connect to URL: ...", "connect timeout to
        URL: ..."), -1 when none (or no endpoints are known)."""
        for k, ep in enumerate(self.endpoints):
            if f" to {ep.url}:" in message:
                return k
        return -1

    def _connect_fault(self, message: str) -> None:
        k = self._endpoint_of(message)
        st = self._streaks.setdefault(k, _Streak())
        if k >= 0:
            ep = self.endpoints[k]
            settled = ep.sent - ep.outstanding
            # each fault settles its own request; more settled since the last fault: an answer came
            if st.count and settled - st.settled > 1:
                st.count = 0
            st.settled = settled
        if st.count == 0:
            st.since = dt.datetime.now(dt.UTC)
        st.count += 1
        if st.count != MAX_CONSECUTIVE_CONNECT_FAILURES or self.down:
            return
        since = _utc(st.since or dt.datetime.now(dt.UTC))
        what = f"{st.count} requests in a row could not connect (last: {message[:200]})"
        live = [e for e in self.endpoints if not e.down and e is not self.endpoints[k]] if k >= 0 else []
        if live:  # the others carry the run: this one gets no more requests
            ep = self.endpoints[k]
            ep.down = True
            line = (f"openai SUT: endpoint {ep.url} stopped answering at {since}: {what}; dropped after "
                    f"{ep.sent} requests, the run goes on with {len(live)} other endpoint(s)")
            self.dropped.append(line)
            log.warning("%s", line)
            return
        if k >= 0:
            self.endpoints[k].down = True
        where = f"the endpoint {self.endpoints[k].url}" if k >= 0 else "the endpoint"
        earlier = f" (after {len(self.dropped)} other(s) were dropped)" if self.dropped else ""
        down = (
            f"openai SUT: {where} stopped answering at {since}: {what}{earlier}; "
            "the run stopped issuing and ended incomplete"
        )
        # the run's stop first, then `down`: an issue that sees `down` raises EndpointDown, and the
        # engine takes that for the stop's consequence only once the stop is recorded
        abort = getattr(self.sink, "abort", None)
        if abort is not None:
            abort(down)
        self.down = down
        log.warning("%s", down)

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
