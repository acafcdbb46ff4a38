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
        self._open: set[int] = set()
        self.elapsed_s = 0.0
        self.left = 0  # requests still in flight when the wait ended (the per-request timeout passed)

    def settled(self, i: int, kind: str | None) -> None:
        with self._cond:
            if i not in self._open:
                return  # ended after the wait for it did: already counted as left
            self._open.discard(i)
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
                self._open.update(i for i, _ in batch)
            self._issue(batch)
        deadline = time.monotonic() + wait_s
        with self._cond:
            while self._open and (left := deadline - time.monotonic()) > 0:
                self._cond.wait(left)
            self.left = len(self._open)
            self._open.clear()
        self.elapsed_s = time.monotonic() - t0

    def line(self, connections: int) -> str:
        """The warm-up's account: what the SUT report and the detail log say."""
        parts = [f"{connections} connections opened ahead"] if connections else []
        if self.sent:
            what = f"{self.sent} requests in {self.elapsed_s:.2f} s ({self.streams} in flight"
            if self.faults:
                what += ", failed: " + ", ".join(f"{k} {v}" for k, v in sorted(self.faults.items()))
            if self.left:
                what += f", {self.left} still open after the per-request timeout"
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
