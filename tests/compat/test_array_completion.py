"""The array completion path (`complete_arrays`) that fast harnesses use: its cheap check for the
common batch (ascending, fresh, in range) must not let a bad batch through."""

from __future__ import annotations

import numpy as np

from proctor.loadgen.completion import CompletionTracker
from proctor.loadgen.records import NOT_SET, Records, Schedule


def tracker(n_queries: int = 2, per_query: int = 40) -> tuple[CompletionTracker, Records, list[str]]:
    schedule = Schedule(
        scheduled_ns=np.zeros(n_queries, np.int64),
        query_offsets=np.arange(0, (n_queries + 1) * per_query, per_query, dtype=np.int64),
        sample_index=np.arange(n_queries * per_query, dtype=np.int64) % 7,
    )
    records = Records.allocate(schedule)
    clock = iter(range(1000, 10**9, 1000))
    errors: list[str] = []
    t = CompletionTracker(
        schedule,
        records,
        lambda: next(clock),
        log_all_data=False,
        use_tokens=False,
        needs_first_token=False,
        error_sink=errors.append,
    )
    t.issued_end = schedule.n_samples
    return t, records, errors


def test_clean_batches_complete_their_queries():
    t, rec, errors = tracker()
    t.complete_arrays(np.arange(0, 30))
    assert rec.query_done_ns[0] == NOT_SET and t.completed_samples == 30
    t.complete_arrays(np.arange(30, 60))  # spans both queries: query 0 ends, query 1 is half done
    assert rec.query_done_ns[0] == 2000 and rec.query_done_ns[1] == NOT_SET
    t.complete_arrays(np.arange(60, 80))
    assert rec.query_done_ns[1] == 3000 and t.completed_queries == 2 and not errors
    assert (rec.sample_done_ns[:30] == 1000).all() and (rec.sample_done_ns[30:60] == 2000).all()


def test_bad_batches_are_caught_and_the_good_ids_kept():
    t, rec, errors = tracker()
    t.complete_arrays(np.arange(0, 20))
    bad = np.array([5, 25, 24, 10**6, *range(26, 44), 26])  # done before, unsorted, unknown, repeated
    t.complete_arrays(bad)
    assert sum("completed twice" in e for e in errors) == 2  # id 5 (earlier batch) and 26 (repeated)
    assert sum("unknown response id" in e for e in errors) == 1
    assert t.completed_samples == 20 + 20  # 24, 25 and 26..43
    assert rec.query_done_ns[0] == NOT_SET  # 20..23 still outstanding
    t.complete_arrays(np.arange(20, 24)[::-1].copy())
    assert rec.query_done_ns[0] != NOT_SET and t.completed_queries == 1


def test_single_ids_take_the_short_path_and_still_report_errors():
    t, rec, errors = tracker(n_queries=3, per_query=1)
    t.complete_arrays(np.array([1]))
    assert rec.query_done_ns.tolist() == [NOT_SET, 1000, NOT_SET] and t.completed_queries == 1
    t.complete_arrays(np.array([1]))
    t.complete_arrays(np.array([7]))
    assert errors == ["complete_arrays: sample 1 completed twice", "complete_arrays: unknown response id 7"]
    assert t.completed_samples == 1


# --- issue 33 §2: the inline one-id path in complete_arrays gives what the full path gives -----------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_DTYPES = ["int64", "int8", "uint64", "uint16", "float64", "bool", "object"]
_ID = st.one_of(st.integers(-3, 8), st.sampled_from([2**63 - 1, -(2**63), 10**6]))


def _fixed_clock_tracker(plain: bool) -> tuple[CompletionTracker, Records, list[str]]:
    t, rec, errors = tracker(n_queries=6, per_query=1)
    t._now = lambda: 5000  # one time for every read: the two paths read the clock a different number of times
    t._plain = plain  # False: every call takes the full path (the reference)
    return t, rec, errors


@settings(max_examples=300, deadline=None)
@given(calls=st.lists(st.tuples(_ID, st.sampled_from(_DTYPES), st.booleans()), max_size=12))
def test_the_one_id_path_equals_the_full_path(calls: list[tuple[int, str, bool]]) -> None:
    """Any single ids (repeated, unknown, negative, of any dtype, 1-D or 2-D): the records, counts and
    errors are those of the full path."""
    fast, rec_f, err_f = _fixed_clock_tracker(True)
    ref, rec_r, err_r = _fixed_clock_tracker(False)
    for value, dtype, flat in calls:
        for t in (fast, ref):
            try:
                ids = np.array([value], dtype=dtype)
            except OverflowError:  # a value the dtype cannot hold: no such array to send
                continue
            t.complete_arrays(ids if flat else ids.reshape(1, 1))
    assert np.array_equal(rec_f.sample_done_ns, rec_r.sample_done_ns)
    assert np.array_equal(rec_f.query_done_ns, rec_r.query_done_ns)
    assert (fast.completed_samples, fast.completed_queries) == (ref.completed_samples, ref.completed_queries)
    assert err_f == err_r
