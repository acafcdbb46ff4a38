"""The openai SUT's warm-up: requests sent before the timed part, never part of the run's results.

The rules' run procedure has the SUT start up and signal readiness before LoadGen starts its clock
(Inference rules, LoadGen Operation, steps 2-3), so what a SUT does to get ready is not timed. A
server's first requests are slow (lazy compilation, CUDA graphs, allocator growth, a cold
connection), and a client's first ones too (connects, cold code). `warmup=N` sends N requests and
`warmup_s=S` keeps sending for S seconds, each with `streams` in flight, and waits for every one to
end, all before the engine's first issue (`OpenAISUT.warm_up`, the engine's `sink.WarmUpSUT` call).

A warm-up request's response id and body index are negative (-1, -2, ...): a run's ids are >= 0, so
every outcome of one is told apart wherever it arrives (the in-process sink, a worker's events), even
one that ends late, and none reaches the run's completion sink, its faults, its token counts, its
send lateness or the per-request export.

Its body is a dataset sample's with the prompt reversed (text by characters, token ids in reverse
order): the same length and cost, but no prefix in common with any timed prompt, so a server's
prefix cache holds none of them afterwards (the rules forbid caching queries or responses).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace

from proctor.clients.llm_dataset import LLMSample
from proctor.clients.openai_config import OpenAIConfig

MAX_WARMUP_REQUESTS = 1_000_000
MAX_WARMUP_S = 86_400.0
WAIT_MARGIN_S = 5.0  # past the per-request timeout, the wait for the last warm-up outcomes ends
# Once every warm-up request was sent, the wait for the last ones ends LAG_FACTOR x the longest any
# of them took (at least LAG_MIN_S) after the latest outcome: a request whose connection the server
# never accepted (a full accept backlog drops the handshake's last ACK; the client's side is open)
# would otherwise hold the warm-up for the whole stall timeout (60 s), though the others show how
# long a request takes. Such a request stays open on its own connection, which the run never gets;
# it ends in its own time, counted as the warm-up's.
LAG_FACTOR = 4.0
LAG_MIN_S = 2.0


def warm_id(k: int) -> int:
    """The response id of the k-th warm-up request (k >= 0): negative, never a run's."""
    return -1 - k


def is_warm(i: int) -> bool:
    """Whether a response id (or body index) is a warm-up request's."""
    return i < 0


def warm_index(k: int, n_samples: int) -> int:
    """The body index of the k-th warm-up request: the samples in turn, negative."""
    return -1 - (k % max(n_samples, 1))


def warm_sample(s: LLMSample) -> LLMSample:
    """A sample of the same length whose prompt starts nowhere a dataset prompt does: reversed."""
    return replace(
        s,
        prompt=None if s.prompt is None else s.prompt[::-1],
        input_ids=None if s.input_ids is None else tuple(reversed(s.input_ids)),
    )


def warm_body(config: OpenAIConfig, samples: Sequence[LLMSample], idx: int) -> bytes:
    """The request body of warm-up body index `idx` (< 0)."""
    return config.body(warm_sample(samples[(-1 - idx) % len(samples)]))


class WarmUp:
    """One warm-up: `streams` requests in flight until `requests` were sent and `seconds` passed.
    `issue(ids, body_indices)` sends (from this thread); `settled(i, kind)` (any thread) takes each
    outcome: kind None for a completed stream, else its fault kind."""

    def __init__(
        self,
        issue: Callable[[list[tuple[int, int]]], None],
        n_samples: int,
        requests: int,
        seconds: float,
        streams: int,
    ) -> None:
        self._issue = issue
        self._n = n_samples
        self.requests, self.seconds = requests, seconds
        self.streams = max(1, streams)
        self._cond = threading.Condition()
        self.sent = 0
        self.completed = 0
        self.faults: Counter[str] = Counter()
        self._open: dict[int, float] = {}  # id -> when it was sent (monotonic)
        self._longest = 0.0  # the longest any warm-up request took so far (s)
        self._last = 0.0  # when the latest outcome came (monotonic)
        self.elapsed_s = 0.0
        self.left = 0  # requests still in flight when the wait ended (the per-request timeout passed)
        self.peak = 0  # the most requests in flight at once (at most `streams`, at most `sent`)

    def settled(self, i: int, kind: str | None) -> None:
        with self._cond:
            t_sent = self._open.pop(i, None)
            if t_sent is None:
                return  # ended after the wait for it did: already counted as left
            self._last = time.monotonic()
            self._longest = max(self._longest, self._last - t_sent)
            if kind is None:
                self.completed += 1
            else:
                self.faults[kind] += 1
            self._cond.notify()

    def _more(self, t0: float) -> bool:
        return self.sent < self.requests or time.monotonic() - t0 < self.seconds

    def run(self, wait_s: float) -> None:
        """Send and wait; returns once every request ended, or `wait_s` after the last was sent."""
        t0 = time.monotonic()
        while True:
            with self._cond:
                while len(self._open) >= self.streams:
                    self._cond.wait(0.05 if self.seconds else None)
                    if self.seconds and not self._more(t0):
                        break
                if not self._more(t0):
                    break
                room = self.streams - len(self._open)
                if self.requests and not self.seconds:
                    room = min(room, self.requests - self.sent)
                batch = [(warm_id(self.sent + k), warm_index(self.sent + k, self._n)) for k in range(room)]
                self.sent += len(batch)
                now = time.monotonic()
                self._open.update((i, now) for i, _ in batch)
                self.peak = max(self.peak, len(self._open))
            self._issue(batch)
        deadline = time.monotonic() + wait_s
        with self._cond:
            while self._open:
                now = time.monotonic()
                end = deadline
                if self._last:  # the others show how long a request takes here
                    end = min(end, self._last + max(LAG_MIN_S, LAG_FACTOR * self._longest))
                if now >= end:
                    break
                self._cond.wait(end - now)
            self.left = len(self._open)
            self._open.clear()
        self.elapsed_s = time.monotonic() - t0

    def line(self, connections: int) -> str:
        """The warm-up's account: what the SUT report and the detail log say."""
        parts = [f"{connections} connections opened ahead"] if connections else []
        if self.sent:
            what = f"{self.sent} requests in {self.elapsed_s:.2f} s ({self.peak} in flight"
            if self.faults:
                what += ", failed: " + ", ".join(f"{k} {v}" for k, v in sorted(self.faults.items()))
            if self.left:
                what += f", {self.left} not answered in time, left open on connections the run does not use"
            parts.append(what + ")")
        return "warm-up: " + ", ".join(parts) + ", not timed" if parts else ""


__all__ = [
    "MAX_WARMUP_REQUESTS",
    "MAX_WARMUP_S",
    "WAIT_MARGIN_S",
    "WarmUp",
    "is_warm",
    "warm_body",
    "warm_id",
    "warm_index",
    "warm_sample",
]
