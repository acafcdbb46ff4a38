"""A background thread that owns one output file, so callers on the hot path only enqueue.

Like the official LoadGen's IO thread: producers append to a queue, one thread formats and writes,
and it flushes at least every `flush_interval_s` so an interrupted run keeps what was logged.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import IO, Any

_STOP = object()


class WriterThread:
    """Runs `render(item) -> str` on queued items in a daemon thread and writes the text."""

    def __init__(
        self,
        file: IO[str],
        render: Callable[[Any], str],
        *,
        flush_interval_s: float = 0.1,
        name: str = "proctor-log-writer",
    ) -> None:
        self._file = file
        self._render = render
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._interval = flush_interval_s
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._closed = False
        self._thread.start()

    def put(self, item: Any) -> None:
        if self._closed:
            raise ValueError("log already closed")
        self._queue.put(item)

    def sync(self, timeout_s: float = 1.0) -> bool:
        """Wait (at most `timeout_s`) until everything queued so far is written: the engine calls it
        before issuing, so this thread is not rendering (holding the GIL) while queries are timed."""
        if self._closed:
            return True
        done = threading.Event()
        self._queue.put(done)
        return done.wait(timeout_s)

    def _run(self) -> None:
        stop = False
        while not stop:
            try:
                item = self._queue.get(timeout=self._interval)
            except queue.Empty:
                self._file.flush()
                continue
            chunks: list[str] = []
            synced: list[threading.Event] = []
            while True:
                if item is _STOP:
                    stop = True
                    break
                try:
                    if isinstance(item, threading.Event):
                        synced.append(item)
                    else:
                        chunks.append(self._render(item))
                except Exception as exc:  # keep writing the rest; surface on close()
                    self._error = self._error or exc
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
            if chunks:
                self._file.write("".join(chunks))
            self._file.flush()
            for done in synced:
                done.set()

    def close(self) -> None:
        """Drain the queue, flush, stop the thread; re-raise a rendering error if one happened."""
        if self._closed:
            return
        self._closed = True
        self._queue.put(_STOP)
        self._thread.join()
        self._file.flush()
        if self._error is not None:
            raise self._error
