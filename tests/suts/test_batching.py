"""The dynamic batcher: bounded batches, each sample completed once with its own output, the
dispatch rules (full batch, max wait, flush, greedy), errors surfaced, completion adapters."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from proctor.errors import ConfigError, RunError
from proctor.loadgen.types import QuerySampleResponse
from proctor.suts.batching import DynamicBatcher, via_responses

WAIT_S = 10.0  # generous bound on waiting for worker threads; never a measured duration


class Sink:
    """Collects completions; `done` is set once `expect` samples have completed."""

    def __init__(self, expect: int) -> None:
        self.expect = expect
        self.ids: list[np.ndarray] = []
        self.outputs: list[np.ndarray | None] = []
        self.lock = threading.Lock()
        self.done = threading.Event()

    def __call__(self, ids: np.ndarray, outputs: np.ndarray | None) -> None:
        with self.lock:
            self.ids.append(ids.copy())
            self.outputs.append(None if outputs is None else outputs.copy())
            if sum(i.size for i in self.ids) >= self.expect:
                self.done.set()

    def wait(self) -> None:
        assert self.done.wait(WAIT_S), f"only {sum(i.size for i in self.ids)} of {self.expect} completed"


def double(indices: np.ndarray) -> np.ndarray:
    return indices * 2


@pytest.mark.parametrize(("max_batch", "workers"), [(1, 1), (7, 2), (64, 3)])
def test_offline_style_submit_completes_every_sample_once_in_bounded_batches(max_batch, workers):
    n = 500
    sink = Sink(n)
    b = DynamicBatcher(double, sink, max_batch=max_batch, workers=workers)
    ids = np.arange(n) + 1000
    indices = (np.arange(n) * 7) % 97
    b.submit(ids, indices)
    b.flush()
    sink.wait()
    b.close()
    all_ids = np.concatenate(sink.ids)
    all_out = np.concatenate(sink.outputs)
    assert sorted(all_ids.tolist()) == ids.tolist()
    assert all(o.shape[1] == 1 for o in sink.outputs)
    np.testing.assert_array_equal(all_out[:, 0], 2 * indices[all_ids - 1000])
    assert max(i.size for i in sink.ids) <= max_batch
    # everything was queued at once, so all batches are full except at most one per worker
    assert sum(i.size < max_batch for i in sink.ids) <= workers
    assert b.samples == n and b.batches == len(sink.ids)


def test_partial_batch_waits_for_flush_when_max_wait_is_long():
    sink = Sink(3)
    b = DynamicBatcher(double, sink, max_batch=8, max_wait_us=60e6, workers=2)
    b.submit([1, 2, 3], [10, 11, 12])
    assert not sink.done.wait(0.05)  # nothing dispatched: not full, not waited out, no flush
    assert b.pending == 3
    b.flush()
    sink.wait()
    b.close()
    assert [i.tolist() for i in sink.ids] == [[1, 2, 3]]


def test_partial_batch_goes_out_after_max_wait_without_flush():
    sink = Sink(2)
    b = DynamicBatcher(double, sink, max_batch=8, max_wait_us=2000, workers=1)
    b.submit([5], [1])
    b.submit([6], [2])
    sink.wait()
    b.close()
    assert sorted(np.concatenate(sink.ids).tolist()) == [5, 6]


def test_greedy_batching_collects_what_queued_while_the_worker_was_busy():
    release = threading.Event()
    first = threading.Event()

    def slow(indices: np.ndarray) -> np.ndarray:
        if not first.is_set():
            first.set()
            release.wait(WAIT_S)
        return indices

    sink = Sink(11)
    b = DynamicBatcher(slow, sink, max_batch=4, max_wait_us=0, workers=1)
    b.submit([0], [0])
    assert first.wait(WAIT_S)  # the only worker is now busy with batch [0]
    for i in range(1, 11):  # single-sample issues, like Server queries
        b.submit([i], [i])
    release.set()
    sink.wait()
    b.close()
    assert [i.tolist() for i in sink.ids] == [[0], [1, 2, 3, 4], [5, 6, 7, 8], [9, 10]]
    assert b.batch_sizes.tolist() == [0, 1, 1, 0, 2]


def test_chunks_are_split_and_joined_in_arrival_order():
    sink = Sink(10)
    b = DynamicBatcher(double, sink, max_batch=4, max_wait_us=60e6, workers=1)
    for chunk in ([0, 1, 2], [3], [4, 5, 6, 7, 8], [9]):
        b.submit(chunk, chunk)
    b.flush()
    sink.wait()
    b.close()
    assert [i.tolist() for i in sink.ids] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


def test_concurrent_submitters_lose_nothing():
    n_threads, per = 4, 250
    sink = Sink(n_threads * per)
    b = DynamicBatcher(double, sink, max_batch=16, workers=3)

    def issue(t: int) -> None:
        for k in range(per):
            i = t * per + k
            b.submit([i], [i])

    threads = [threading.Thread(target=issue, args=(t,)) for t in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    b.flush()
    sink.wait()
    b.close()
    ids = np.concatenate(sink.ids)
    assert np.array_equal(np.sort(ids), np.arange(n_threads * per))
    np.testing.assert_array_equal(np.concatenate(sink.outputs)[:, 0], ids * 2)


def test_a_failing_batch_is_still_completed_and_close_raises():
    def boom(indices: np.ndarray) -> np.ndarray:
        if 13 in indices:
            raise ValueError("model exploded")
        return indices

    sink = Sink(20)
    b = DynamicBatcher(boom, sink, max_batch=5, workers=2)
    b.submit(np.arange(20), np.arange(20))
    b.flush()
    sink.wait()
    with pytest.raises(RunError, match="model exploded"):
        b.close()
    failed = [i.tolist() for i, o in zip(sink.ids, sink.outputs, strict=True) if o is None]
    assert len(failed) == 1 and 13 in failed[0]
    with pytest.raises(RunError, match="closed"):
        b.submit([1], [1])


def test_close_drops_what_is_queued_counts_it_and_warns_nobody(caplog):
    """After an interrupted run the SUT drops its queue on close (ClosableSUT's promise): counted,
    logged below warning level (the run's own logs say what completed), never processed."""
    started, release = threading.Event(), threading.Event()

    def slow(indices: np.ndarray) -> np.ndarray:
        started.set()
        release.wait(WAIT_S)
        return indices

    sink = Sink(4)
    b = DynamicBatcher(slow, sink, max_batch=4, workers=1)
    b.submit(np.arange(100), np.arange(100))
    assert started.wait(WAIT_S)  # the one worker holds a batch of 4; 96 stay queued
    with caplog.at_level("INFO", logger="proctor.suts.batching"):
        b.close(timeout=0.0)  # the worker is still inside its batch: nothing else can be taken
    assert b.dropped == 96 and b.pending == 0
    release.set()
    sink.wait()
    assert sum(i.size for i in sink.ids) == 4  # the batch in hand completed; nothing queued ran
    dropped = [r for r in caplog.records if "dropped at close" in r.getMessage()]
    assert [r.levelname for r in dropped] == ["INFO"] and "96 queued samples" in dropped[0].getMessage()


def test_via_responses_builds_one_response_per_sample_with_its_row():
    got: list[QuerySampleResponse] = []
    complete = via_responses(got.extend)
    complete(np.array([4, 9]), np.array([[1, 2], [3, 4]], np.int32))
    complete(np.array([5]), None)
    assert [r.id for r in got] == [4, 9, 5]
    assert got[0].data.tobytes() == np.array([1, 2], np.int32).tobytes()
    assert got[1].data.tolist() == [3, 4] and got[2].data is None


def test_default_completion_is_proctors_array_path(monkeypatch):
    from proctor.loadgen import completion

    calls = []
    monkeypatch.setattr(
        completion, "complete_arrays", lambda ids, n_tokens, data, t_ns=None: calls.append((ids, n_tokens, data))
    )
    done = threading.Event()
    b = DynamicBatcher(lambda idx: (done.set(), idx)[1], max_batch=4, workers=1)
    b.submit([7, 8], [1, 2])
    b.flush()
    assert done.wait(WAIT_S)
    b.close()
    assert len(calls) == 1
    ids, n_tokens, data = calls[0]
    assert ids.tolist() == [7, 8] and n_tokens is None and data[:, 0].tolist() == [1, 2]


@pytest.mark.parametrize(
    ("kw", "key"),
    [({"max_batch": 0}, "max_batch"), ({"max_wait_us": -1}, "max_wait_us"), ({"workers": 0}, "workers")],
)
def test_bad_settings_name_their_key(kw, key):
    with pytest.raises(ConfigError, match=f"key '{key}'"):
        DynamicBatcher(double, lambda i, o: None, **kw)


def test_mismatched_arrays_are_refused():
    b = DynamicBatcher(double, lambda i, o: None, workers=1)
    with pytest.raises(ValueError, match="2 ids but 1 indices"):
        b.submit([1, 2], [1])
    b.submit([], [])
    assert b.pending == 0
    b.close()
