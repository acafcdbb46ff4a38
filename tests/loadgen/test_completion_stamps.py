"""`t_ns` on the completion calls: an event's time taken where it was seen (another process), checked
against the sample's issue, its first token and the clock's now. ManualClock-driven: exact values."""

from __future__ import annotations

import numpy as np
import pytest

from proctor.loadgen import completion
from proctor.loadgen.clock import ManualClock
from proctor.loadgen.completion import CompletionTracker
from proctor.loadgen.records import NOT_SET, Records, Schedule
from proctor.loadgen.types import QuerySampleResponse as R

T0 = 1_000_000_000


def make(n_queries=4, per_query=1, *, tokens=True, log_all=False):
    """A tracker over n_queries queries of per_query samples, all issued at T0 + 100 * q."""
    clock = ManualClock(T0)
    nq = n_queries
    sched = Schedule(
        scheduled_ns=np.arange(nq, dtype=np.int64) * 100,
        query_offsets=np.arange(nq + 1, dtype=np.int64) * per_query,
        sample_index=np.arange(nq * per_query, dtype=np.int64),
    )
    rec = Records.allocate(sched, T0, tokens=tokens)
    logged: list[tuple[int, bytes, int, bytes | None]] = []
    tr = CompletionTracker(
        sched, rec, clock.now_ns, log_all_data=log_all, use_tokens=tokens, needs_first_token=tokens,
        accuracy_sink=lambda s, idx, data, n, tok: logged.append((s, data, n, tok)),
    )
    rec.query_issued_ns[:] = T0 + np.arange(nq, dtype=np.int64) * 100
    tr.issued_end = nq * per_query
    clock.advance(10_000)  # now = T0 + 10 us: every sample is issued, stamps up to now are valid
    return tr, rec, clock, logged


def test_stamps_are_taken_as_given():
    tr, rec, _, _ = make()
    tr.first_token([R(1, b"a")], t_ns=T0 + 150)
    tr.complete([R(1, b"ab", 5)], t_ns=T0 + 400)
    tr.complete_arrays(np.array([2, 3]), np.array([3, 4]), t_ns=T0 + 900)
    assert rec.sample_first_token_ns[1] == T0 + 150
    assert rec.sample_done_ns.tolist() == [NOT_SET, T0 + 400, T0 + 900, T0 + 900]
    assert rec.query_done_ns.tolist() == [NOT_SET, T0 + 400, T0 + 900, T0 + 900]
    assert rec.sample_n_tokens.tolist() == [0, 5, 3, 4]
    # sample 2 and 3 had no first token: the usual error; the stamps themselves raised none
    assert tr.error_count == 2 and all("before its first token" in e for e in rec.errors)


def test_without_a_stamp_the_clock_is_read():
    tr, rec, clock, _ = make(tokens=False)
    completion.attach(tr)
    try:
        completion.query_samples_complete([R(0, b"")])
        clock.advance(7)
        completion.complete_arrays(np.array([1]))
        completion.query_samples_complete([R(2, b"")], t_ns=T0 + 250)
    finally:
        completion.detach(tr)
    assert rec.sample_done_ns[:3].tolist() == [T0 + 10_000, T0 + 10_007, T0 + 250]
    assert tr.error_count == 0


@pytest.mark.parametrize("call", ["first", "complete", "arrays"])
def test_a_stamp_before_the_issue_is_refused_for_that_sample(call):
    tr, rec, _, _ = make(tokens=call == "first")
    t = T0 + 150  # after sample 1's issue (T0 + 100), before sample 2's (T0 + 200)
    if call == "first":
        tr.first_token([R(1, b"x"), R(2, b"y")], t_ns=t)
        assert rec.sample_first_token_ns[1:3].tolist() == [t, NOT_SET]
    elif call == "complete":
        tr.complete([R(1, b""), R(2, b"")], t_ns=t)
    else:
        tr.complete_arrays(np.array([1, 2]), t_ns=t)
    if call != "first":
        assert rec.sample_done_ns[1:3].tolist() == [t, NOT_SET]
        assert tr.completed_samples == 1
    assert tr.error_count == 1 and "sample 2 is 50 ns before its issue; refused" in rec.errors[0]


def test_a_completion_stamped_before_its_first_token_is_refused():
    tr, rec, _, _ = make()
    tr.first_token([R(0, b"x")], t_ns=T0 + 500)
    tr.complete([R(0, b"xy", 2)], t_ns=T0 + 400)
    assert rec.sample_done_ns[0] == NOT_SET and tr.completed_samples == 0
    assert "100 ns before its first token" in rec.errors[-1]
    tr.complete([R(0, b"xy", 2)], t_ns=T0 + 600)  # a good one still lands
    assert rec.sample_done_ns[0] == T0 + 600 and tr.error_count == 1


def test_a_stamp_from_the_future_is_clamped_to_now_with_one_error():
    tr, rec, _, _ = make(tokens=False)
    now = T0 + 10_000
    tr.complete([R(0, b"")], t_ns=now + 5)
    tr.complete_arrays(np.array([1]), t_ns=now + 99)
    tr.complete([R(2, b"")], t_ns=now)  # exactly now is not the future
    assert rec.sample_done_ns[:3].tolist() == [now, now, now]
    assert tr.future_stamps == 2 and tr.error_count == 1
    assert "5 ns after the clock's now; clamped" in rec.errors[0]


@pytest.mark.parametrize("bad", [1.5, "12", None.__class__, True])
def test_a_stamp_that_is_not_an_integer_is_an_error(bad):
    tr, rec, _, _ = make(tokens=False)
    tr.complete([R(0, b"")], t_ns=bad)
    assert rec.sample_done_ns[0] == NOT_SET and tr.error_count == 1 and "not an integer" in rec.errors[0]


def test_numpy_stamps_and_bad_ids_in_a_stamped_call():
    tr, rec, _, _ = make(tokens=False)
    tr.complete([R(0, b""), R(99, b""), R("x", b"")], t_ns=np.int64(T0 + 50))
    assert rec.sample_done_ns[0] == T0 + 50
    assert tr.error_count == 2 and "unknown response id 99" in rec.errors[0]
    tr.complete_arrays(np.array([0, 1]), t_ns=T0 + 300)  # 0 twice: reported as before
    assert rec.sample_done_ns[1] == T0 + 300 and "completed twice" in rec.errors[-1]


def test_stamped_outputs_reach_the_accuracy_log():
    tr, rec, _, logged = make(n_queries=2, per_query=2, log_all=True)
    tr.first_token([R(0, b"he"), R(1, b"x")], t_ns=T0 + 10)
    tr.complete([R(1, b"xyz", 3), R(0, b"hello", 2)], t_ns=T0 + 20)
    assert sorted(logged) == [(0, b"hello", 2, b"he"), (1, b"xyz", 3, b"x")]
    assert rec.query_done_ns[0] == T0 + 20 and tr.error_count == 0


def test_a_multi_sample_query_ends_at_its_latest_stamp():
    tr, rec, _, _ = make(n_queries=1, per_query=3, tokens=False)
    tr.complete([R(2, b"")], t_ns=T0 + 700)
    tr.complete_arrays(np.array([0, 1]), t_ns=T0 + 300)
    assert rec.sample_done_ns.tolist() == [T0 + 300, T0 + 300, T0 + 700]
    assert rec.query_done_ns[0] == T0 + 700


def test_output_logged_follows_the_mask():
    tr, _, _, _ = make(log_all=True)
    assert not completion.output_logged(0)  # no run in progress
    completion.attach(tr)
    try:
        assert completion.output_logged(0) and completion.output_logged(3)
    finally:
        completion.detach(tr)
    tr, _, _, _ = make()
    assert not tr.output_logged(0)
