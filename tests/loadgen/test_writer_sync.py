"""The detail log's writer thread can be synced: the engine drains it before the timed part."""

from __future__ import annotations

import io
import threading

from proctor.loadgen.logs.writer_thread import WriterThread


class _SlowFile(io.StringIO):
    """Holds each write until released, so a sync that returned early would be seen."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()

    def write(self, s: str) -> int:
        self.release.wait(5)
        return super().write(s)


def test_sync_waits_for_everything_queued() -> None:
    f = _SlowFile()
    w = WriterThread(f, lambda item: f"{item}\n", flush_interval_s=10)
    for i in range(100):
        w.put(i)
    assert w.sync(timeout_s=0.05) is False  # the file holds the write: not synced yet
    f.release.set()
    assert w.sync(timeout_s=5) is True
    assert f.getvalue().split() == [str(i) for i in range(100)]
    w.close()
    assert f.getvalue().split() == [str(i) for i in range(100)]  # the sync markers write nothing


def test_sync_after_close_returns_at_once() -> None:
    f = io.StringIO()
    w = WriterThread(f, str)
    w.put("a")
    w.close()
    assert w.sync(timeout_s=0) is True
    assert f.getvalue() == "a"
