"""The live line's figures (issue 23, journey 10; issue 24 §5): done of total, ETA, and for token
runs TTFT/TPOT percentiles and tokens/s so far, from hand-built records with known values."""

from __future__ import annotations

import numpy as np
import pytest

from proctor.cli import live_progress as progress
from proctor.cli.live_progress import format_snapshot
from proctor.loadgen.progress import Plan, TokenTally, snapshot
from proctor.loadgen.records import NOT_SET, Records, Schedule

S = 1_000_000_000
MS = 1_000_000


def _schedule(n_queries: int, spq: int = 1, period_ns: int = 10 * MS) -> Schedule:
    return Schedule(
        scheduled_ns=np.arange(n_queries, dtype=np.int64) * period_ns,
        query_offsets=np.arange(n_queries + 1, dtype=np.int64) * spq,
        sample_index=np.zeros(n_queries * spq, np.int64),
    )


def test_offline_total_and_eta_from_the_rate_so_far() -> None:
    sched = _schedule(1, spq=1000)
    rec = Records.allocate(sched, start_ns=S, tokens=False)
    rec.n_queries_issued, rec.n_samples_issued = 1, 1000
    rec.query_scheduled_ns[0] = S
    rec.sample_done_ns[:250] = S + np.arange(250) * MS
    snap = snapshot(sched, rec, 250, 2 * S, plan=Plan("Offline", True, 600.0, 1, 1000))
    assert snap.total_samples == 1000 and snap.qps == pytest.approx(250.0)
    assert snap.eta_s == pytest.approx(3.0)  # 750 left at 250/s
    line = format_snapshot(snap, "PerformanceOnly")
    assert "250 done of 1,000" in line and "ETA 3 s" in line and "TTFT" not in line and "tok/s" not in line


def test_server_eta_is_the_schedule_left_when_it_is_longer() -> None:
    sched = _schedule(1000, period_ns=10 * MS)  # the last query at 9.99 s
    rec = Records.allocate(sched, start_ns=S, tokens=False)
    rec.n_queries_issued = rec.n_samples_issued = 100
    rec.query_scheduled_ns[:100] = S + sched.scheduled_ns[:100]
    rec.sample_done_ns[:100] = rec.query_scheduled_ns[:100] + MS
    snap = snapshot(sched, rec, 100, 2 * S, plan=Plan("Server", True, 10.0, 100, 1))
    assert snap.total_samples == 1000
    assert snap.eta_s == pytest.approx(9.0)  # 900 samples left at 100/s outlast the 8.99 s of schedule
    snap = snapshot(sched, rec, 300, 2 * S, plan=Plan("Server", True, 10.0, 100, 1))
    assert snap.eta_s == pytest.approx(8.99)  # at 300/s the schedule left (9.99 s - 1 s) is longer
    assert "ETA 9 s" in format_snapshot(snap, "PerformanceOnly")


def test_single_stream_ends_at_min_duration_and_min_queries() -> None:
    sched = _schedule(10_000)  # the schedule is only an upper bound
    rec = Records.allocate(sched, start_ns=S, tokens=False)
    rec.n_queries_issued = rec.n_samples_issued = 200  # 100 queries/s over 2 s
    snap = snapshot(sched, rec, 200, 3 * S, plan=Plan("SingleStream", True, 5.0, 1024, 1))
    assert snap.total_samples == 1024  # min_query_count outweighs 100/s x 5 s
    assert snap.eta_s == pytest.approx(8.24)  # 824 queries left at 100/s, past min_duration (3 s left)
    assert "ETA 8 s" in format_snapshot(snap, "PerformanceOnly")


def test_token_run_ttft_tpot_and_tokens_per_second() -> None:
    n = 100
    sched = _schedule(n, period_ns=10 * MS)
    rec = Records.allocate(sched, start_ns=S, tokens=True)
    rec.n_queries_issued = rec.n_samples_issued = n
    rec.query_scheduled_ns[:] = S + sched.scheduled_ns
    first = rec.query_scheduled_ns + 20 * MS + np.arange(n) * 10_000  # TTFT 20.00 .. 20.99 ms
    rec.sample_first_token_ns[:] = first
    rec.sample_n_tokens[:] = 11  # 10 gaps of 2 ms: TPOT 2 ms
    rec.sample_done_ns[:] = first + 20 * MS
    rec.sample_done_ns[90:] = NOT_SET  # ten still streaming: their tokens so far count, not their latency
    rec.sample_n_tokens[90:] = 5
    tally = TokenTally()
    snap = snapshot(sched, rec, 90, 3 * S, plan=Plan("Server", True, 1.0, 1, 1), tally=tally)
    assert snap.ttft_ms[0.5] == pytest.approx(20.445, abs=0.01) and snap.ttft_ms[0.99] < 21.0
    assert snap.tpot_ms == {0.5: pytest.approx(2.0), 0.99: pytest.approx(2.0)}
    assert snap.tokens_per_s == pytest.approx((90 * 11 + 10 * 5) / 2.0)
    assert tally.frontier == 90 and tally.done_tokens == 90 * 11  # the done prefix is summed once
    line = format_snapshot(snap, "PerformanceOnly")
    assert "TTFT p50 20.4 / p99 20.9 ms" in line and "TPOT p50 2.00 / p99 2.00 ms" in line
    assert "520 tok/s" in line
    # the rest completes: the tally moves on from its frontier
    rec.sample_done_ns[90:] = first[90:] + 20 * MS
    rec.sample_n_tokens[90:] = 11
    again = snapshot(sched, rec, 100, 3 * S, plan=Plan("Server", True, 1.0, 1, 1), tally=tally)
    assert again.tokens_per_s == pytest.approx(100 * 11 / 2.0) and tally.frontier == 100


def test_offline_token_run_shows_tokens_per_second_but_no_ttft() -> None:
    sched = _schedule(1, spq=10)
    rec = Records.allocate(sched, start_ns=S, tokens=True)
    rec.n_queries_issued, rec.n_samples_issued = 1, 10
    rec.query_scheduled_ns[0] = S
    rec.sample_first_token_ns[:] = S + MS
    rec.sample_done_ns[:] = S + 2 * MS
    rec.sample_n_tokens[:] = 7
    snap = snapshot(sched, rec, 10, 2 * S, plan=Plan("Offline", True, 1.0, 1, 10), tally=TokenTally())
    assert snap.ttft_ms == {} and snap.tokens_per_s == pytest.approx(70.0)


@pytest.mark.parametrize(("value", "expected"), [("", 10.0), ("0.5", 0.5), ("0", 10.0), ("nan", 10.0), ("x", 10.0)])
def test_plain_interval_default_and_override(monkeypatch: pytest.MonkeyPatch, value: str, expected: float) -> None:
    monkeypatch.setenv(progress.PLAIN_INTERVAL_ENV, value)
    assert progress.default_plain_interval_s() == expected
