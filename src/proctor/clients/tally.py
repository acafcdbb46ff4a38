"""What the openai SUT counts for its report, and the completion sink its outcomes go to.

Fed by the in-process outcome sink (`openai.LocalSink`) or by the events of the worker processes
(`openai_procs.WorkerPool`'s reader thread), in the engine's process only.
"""

from __future__ import annotations

import logging
from array import array
from collections import Counter

import numpy as np

from proctor.clients.stream import Times, times_of
from proctor.loadgen.completion import ForwardingSink
from proctor.loadgen.sink import CompletionSink
from proctor.untrusted_text import printable

log = logging.getLogger("proctor.clients.openai")
FAULT_MESSAGE_LIMIT = 500  # characters of one fault's message in the logs


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

    def note_sent(self, i: int, t_issue: int, t_sent: int) -> None:
        self.lateness_ns.append(t_sent - t_issue)
        times = self.times
        if times is not None:
            rt = times_of(times, i)
            rt.issued, rt.sent = t_issue, t_sent

    def note_done(self, i: int, source: str, mismatch: bool) -> None:
        if mismatch:
            self.count_mismatches += 1
        if source not in self.count_sources:
            log.info("token counts from %s (first sample %d)", source, i)
        self.count_sources[source] += 1

    def fail(self, i: int, idx: int, kind: str, message: str) -> None:
        message = printable(message, FAULT_MESSAGE_LIMIT)  # it may quote what the server sent
        self.faults[kind] += 1
        text = f"openai SUT: sample {i} (QSL index {idx}) failed: {kind}: {message}"
        log.warning(text)
        # counted by kind (the first of each in the detail log); the sample is no result
        self.sink.fail([i], f"openai SUT: {kind}: {message}")

    def lateness_line(self) -> str | None:
        lat = np.frombuffer(self.lateness_ns, np.int64) if len(self.lateness_ns) else None
        if lat is None:
            return None
        p50, p99 = np.percentile(lat, [50, 99])
        return (
            f"send lateness (request sent - engine issue) over {lat.size} requests: "
            f"p50 {p50 / 1e6:.3f} ms, p99 {p99 / 1e6:.3f} ms, max {int(lat.max()) / 1e6:.3f} ms"
        )


__all__ = ["Tally"]
