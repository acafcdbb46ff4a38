"""A `CompletionSink` that records every call, for tests of SUTs started with their own sink."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np


class RecordingSink:
    """Records each call by kind (thread-safe); `ended` is set once `expect` samples completed or
    failed, so a test waits on an event instead of sleeping."""

    def __init__(self, expect: int) -> None:
        self.expect = expect
        self.lock = threading.Lock()
        self.firsts: list[tuple[int, bytes, int | None]] = []  # (id, data, t_ns)
        self.completes: list[tuple[int, bytes, int, int | None]] = []  # (id, data, n_tokens, t_ns)
        self.arrays: list[tuple[list[int], np.ndarray | None, int | None]] = []  # (ids, data, t_ns)
        self.fails: list[tuple[list[int], str]] = []
        self.failures: list[str] = []
        self.ended = threading.Event()

    def _ended(self) -> None:
        done = len(self.completes) + sum(len(a[0]) for a in self.arrays) + sum(len(f[0]) for f in self.fails)
        if done >= self.expect:
            self.ended.set()

    def complete(self, responses: Sequence[Any], response_cb: Any = None, *, t_ns: int | None = None) -> None:
        with self.lock:
            self.completes += [(int(r.id), bytes(r.data), int(r.n_tokens), t_ns) for r in responses]
            self._ended()

    def complete_arrays(
        self, ids: np.ndarray, n_tokens: np.ndarray | None = None, data: np.ndarray | None = None,
        *, t_ns: int | None = None,
    ) -> None:
        with self.lock:
            self.arrays.append((ids.tolist(), None if data is None else np.array(data), t_ns))
            self._ended()

    def first_token(self, responses: Sequence[Any], response_cb: Any = None, *, t_ns: int | None = None) -> None:
        with self.lock:
            self.firsts += [(int(r.id), bytes(r.data), t_ns) for r in responses]

    def fail(self, ids: Sequence[int], reason: str) -> None:
        with self.lock:
            self.fails.append((list(ids), reason))
            self._ended()

    def report_failure(self, exc: BaseException | str, where: str = "") -> bool:
        with self.lock:
            self.failures.append(str(exc))
        return True

    def output_logged(self, response_id: int) -> bool:
        return True
