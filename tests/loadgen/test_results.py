"""summarize(): metrics and validity on hand-built records, with exact expectations."""

from __future__ import annotations

import numpy as np
import pytest

from proctor.loadgen import early_stopping as es
from proctor.loadgen.logs.reader import read_summary
from proctor.loadgen.logs.summary import render_summary
from proctor.loadgen.records import NOT_SET, Records, Schedule
from proctor.loadgen.results import summarize
from proctor.loadgen.settings import EffectiveSettings
from proctor.loadgen.types import Scenario
from proctor.loadgen.types import TestMode as Mode


def make_eff(scenario: Scenario, **kw) -> EffectiveSettings:
    base = dict(
        scenario=scenario,
        test_mode=Mode.PERFORMANCE_ONLY,
        samples_per_query=1,
        target_qps=1000.0,
        target_latency_ns=0,
        target_latency_percentile=0.9,
        max_async_queries=1,
        target_duration_ms=100,
        min_duration_ms=100,
        max_duration_ms=0,
        min_query_count=10,
        max_query_count=0,
        min_sample_count=10,
        qsl_rng_seed=0,
        sample_index_rng_seed=0,
        schedule_rng_seed=0,
        accuracy_log_rng_seed=0,
        accuracy_log_probability=0.0,
        accuracy_log_sampling_target=0,
        print_timestamps=False,
        performance_issue_unique=False,
        performance_issue_same=False,
        performance_issue_same_index=0,
        performance_sample_count=64,
        accuracy_sample_count=64,
    )
    base.update(kw)
    return EffectiveSettings(**base)


def build(
    sched: np.ndarray,
    lat: np.ndarray,
    spq: int = 1,
    issued: np.ndarray | None = None,
    first: np.ndarray | None = None,
    tokens: np.ndarray | None = None,
) -> tuple[Schedule, Records]:
    """Queries at `sched` ns (absolute, start 0); sample latencies `lat` (per sample)."""
    nq = sched.shape[0]
    schedule = Schedule(
        scheduled_ns=sched.copy(),
        query_offsets=np.arange(nq + 1, dtype=np.int64) * spq,
        sample_index=np.zeros(nq * spq, np.int64),
    )
    rec = Records.allocate(schedule, start_ns=0)
    rec.query_scheduled_ns[:] = sched
    rec.query_issued_ns[:] = sched if issued is None else issued
    done = np.repeat(sched, spq) + lat
    rec.sample_done_ns[:] = done
    rec.query_done_ns[:] = done.reshape(nq, spq).max(axis=1)
    if first is not None:
        rec.sample_first_token_ns[:] = np.repeat(sched, spq) + first
    if tokens is not None:
        rec.sample_n_tokens[:] = tokens
    rec.n_queries_issued, rec.n_samples_issued = nq, nq * spq
    return schedule, rec


def test_single_stream_metrics_exact():
    n = 200
    lat = (np.arange(n, dtype=np.int64)[::-1] + 1) * 1000  # 200000 .. 1000 ns
    sched = np.cumsum(lat) - lat  # back to back
    schedule, rec = build(sched, lat)
    eff = make_eff(Scenario.SINGLE_STREAM, min_duration_ms=1, min_query_count=100, min_sample_count=100)
    r = summarize(eff, schedule, rec)
    s = np.sort(lat)
    assert r.sample_count == r.query_count == n
    assert r.samples.min == 1000 and r.samples.max == 200000
    assert r.samples.mean == int(lat.sum() // n) == 100500
    assert r.samples.percentiles[0.5] == s[100] and r.samples.percentiles[0.999] == s[199]
    assert r.samples.target == s[int(n * 0.9)] == 181000
    assert r.final_query_issued_s == sched[-1] / 1e9
    assert r.qps_with_loadgen_overhead == pytest.approx((n - 1) / (sched[-1] / 1e9))
    assert r.qps_without_loadgen_overhead == pytest.approx(1 / (100500 / 1e9))
    t = 10  # n=200, p90: f(10) + 10 <= 200 < f(11) + 11 (sequential finder)
    assert es.min_passing(10, 0.9) + 10 <= n < es.min_passing(11, 0.9) + 11
    assert r.early_stopping_t == t and r.early_stopping_latency_ss == s[n - t]
    assert r.valid and r.min_duration_met and r.min_queries_met and r.early_stopping_met
    assert r.recommendations == [] and r.reasons == []


def test_single_stream_invalid_reasons():
    lat = np.full(20, 1000, np.int64)
    sched = np.arange(20, dtype=np.int64) * 1000
    schedule, rec = build(sched, lat)
    eff = make_eff(Scenario.SINGLE_STREAM, min_duration_ms=600000, min_query_count=100, min_sample_count=100)
    r = summarize(eff, schedule, rec)
    assert not r.valid and not r.min_duration_met and not r.min_queries_met and not r.early_stopping_met
    assert r.recommendations[0].startswith("Decrease the expected latency")
    assert r.recommendations[1].startswith("The test exited early")
    assert r.invalid_reason == (
        "Decrease the expected latency so the loadgen pre-generates more queries. "
        "The test exited early, before enough queries were issued."
    )
    assert any("min_duration is 600 s" in x for x in r.reasons)
    assert any("issued 20 queries / 20 samples but the minimum is 100" in x for x in r.reasons)
    assert any("needs at least 64" in x for x in r.reasons)
    assert "Only processed 20 queries" in r.early_stopping_text


def test_server_metrics_and_constraints():
    n = 1000
    sched = np.arange(n, dtype=np.int64) * 1_000_000  # 1000 qps
    lat = np.full(n, 5_000_000, np.int64)
    lat[:15] = 50_000_000  # 15 over a 10 ms target
    issued = sched + np.arange(n, dtype=np.int64) % 7  # issue lateness 0..6 ns
    schedule, rec = build(sched, lat, issued=issued)
    eff = make_eff(
        Scenario.SERVER,
        target_latency_ns=10_000_000,
        target_latency_percentile=0.99,
        min_duration_ms=500,
        min_query_count=100,
        min_sample_count=100,
    )
    r = summarize(eff, schedule, rec)
    assert r.overlatency_count == 15
    assert r.scheduled_samples_per_sec == pytest.approx(999 / 0.999)
    assert r.completed_samples_per_sec == pytest.approx(999 / ((sched[-1] + 5_000_000) / 1e9))
    assert r.samples.target == 50_000_000 and not r.perf_constraints_met
    assert r.recommendations == ["Reduce target QPS to improve latency."]
    # 15 over-latency queries need f(15) + 15 queries: far more than 1000
    assert not r.early_stopping_met and "Would need to run at least" in r.early_stopping_text
    assert r.issue_lateness_max_ns == 6 and r.issue_lateness_p50_ns == 3
    lat[:15] = 5_000_000
    schedule, rec = build(sched, lat)
    ok = summarize(eff, schedule, rec)
    assert ok.perf_constraints_met and ok.overlatency_count == 0 and ok.early_stopping_met and ok.valid


def test_multistream_query_latency_is_slowest_sample():
    nq, spq = 700, 4
    sched = np.arange(nq, dtype=np.int64) * 100_000
    lat = np.tile(np.array([10, 20, 30, 40], np.int64), nq) * 1000
    lat[4 * 5 + 2] = 90_000  # query 5 slowest sample
    schedule, rec = build(sched, lat, spq=spq)
    eff = make_eff(
        Scenario.MULTI_STREAM,
        samples_per_query=spq,
        target_latency_percentile=0.99,
        min_duration_ms=1,
        min_query_count=662,
        min_sample_count=662 * spq,
    )
    r = summarize(eff, schedule, rec)
    assert r.queries.count == nq and r.queries.max == 90_000 and r.queries.min == 40_000
    assert r.queries.target == 40_000 and r.sample_count == nq * spq
    assert r.early_stopping_met and r.early_stopping_t == 1  # 700 queries: nothing discarded
    assert r.early_stopping_latency_ms == 90_000 and r.valid


def test_offline_samples_per_second():
    spq = 50
    lat = np.arange(1, spq + 1, dtype=np.int64) * 1_000_000
    schedule, rec = build(np.zeros(1, np.int64), lat, spq=spq)
    eff = make_eff(
        Scenario.OFFLINE, samples_per_query=spq, min_duration_ms=100, min_query_count=1, min_sample_count=spq
    )
    r = summarize(eff, schedule, rec)
    assert r.max_latency_s == 0.05 and r.samples_per_second == pytest.approx(1000.0)
    assert not r.min_duration_met and r.early_stopping_met and r.early_stopping_text == ""
    assert r.recommendations == [
        "Increase expected QPS so the loadgen pre-generates a larger (coalesced) query."
    ]


def test_server_tokens():
    n = 500
    sched = np.arange(n, dtype=np.int64) * 1_000_000
    first = np.full(n, 2_000_000, np.int64)
    lat = np.full(n, 12_000_000, np.int64)
    tokens = np.full(n, 11, np.int64)  # tpot = 10 ms / 10 = 1 ms
    schedule, rec = build(sched, lat, first=first, tokens=tokens)
    eff = make_eff(
        Scenario.SERVER,
        target_latency_percentile=0.99,
        use_token_latencies=True,
        server_ttft_latency=3_000_000,
        server_tpot_latency=900_000,
        min_duration_ms=1,
        min_query_count=1,
        min_sample_count=1,
    )
    r = summarize(eff, schedule, rec)
    assert r.token_count == 5500 and r.ttft.target == 2_000_000 and r.tpot.target == 1_000_000
    assert r.tpot.mean == 1_000_000 and r.ttft.mean == 2_000_000
    assert not r.perf_constraints_met and r.recommendations == [
        "TPOT constrain not met: Reduce target QPS to improve latency."
    ]
    final_done = (sched[-1] + 12_000_000) / 1e9
    assert r.completed_tokens_per_second == pytest.approx(5500 / final_done)
    assert r.token_throughput == pytest.approx(5500 / (12_000_000 * n))  # the official quirk
    # every TPOT is over 900 us: early stopping on TPOT fails and TTFT is not evaluated
    assert not r.early_stopping_met and r.early_stopping_ttft_text == ""


def test_incomplete_run_summarizes_what_completed(tmp_path):
    n = 100
    sched = np.arange(n, dtype=np.int64) * 1000
    schedule, rec = build(sched, np.full(n, 500, np.int64))
    rec.sample_done_ns[60:] = NOT_SET
    rec.query_done_ns[60:] = NOT_SET
    rec.incomplete, rec.incomplete_reason = True, "interrupted by the user"
    eff = make_eff(
        Scenario.SERVER,
        target_latency_ns=10**6,
        target_latency_percentile=0.99,
        min_duration_ms=0,
        min_query_count=1,
        min_sample_count=1,
    )
    r = summarize(eff, schedule, rec)
    assert not r.complete and r.query_count == 100 and r.sample_count == 60
    assert r.samples.mean == 500 and not r.valid
    assert r.final_query_done_s == (59 * 1000 + 500) / 1e9
    assert any("did not finish (interrupted by the user)" in x for x in r.reasons)
    text = render_summary(r, eff, "sut")
    assert text.rstrip().splitlines()[-3:-1] == [
        "Result is : INVALID",
        "PROCTOR: Run incomplete: interrupted by the user",
    ]
    (tmp_path / "s.txt").write_text(text)
    parsed = read_summary(tmp_path / "s.txt")
    assert parsed["run_incomplete"] == "interrupted by the user" and parsed["Result is"] == "INVALID"
    assert parsed["additional_stats"]["Mean latency (ns)"] == 500


# --- per-request SLO attainment and goodput (issue 34 §2) -------------------------------------------


def _token_server(n: int = 40):
    """A Server token run: sample k has TTFT 10k us, 5 + k % 7 tokens, TPOT 1000 + 50 k ns."""
    sched = np.arange(n, dtype=np.int64) * 10_000_000
    first = np.arange(n, dtype=np.int64) * 10_000
    tokens = 5 + np.arange(n, dtype=np.int64) % 7
    tpot = 1_000 + 50 * np.arange(n, dtype=np.int64)
    lat = first + tpot * (tokens - 1)
    schedule, rec = build(sched, lat, first=first, tokens=tokens)
    eff = make_eff(Scenario.SERVER, target_qps=100.0, target_latency_percentile=0.99, use_token_latencies=True,
                   server_ttft_latency=200_000, server_tpot_latency=2_500, min_query_count=n)
    return eff, schedule, rec, first, tpot


def test_attainment_judges_each_request_against_the_benchmarks_bounds():
    from proctor.loadgen.results import BENCHMARK_BOUNDS

    eff, schedule, rec, ttft, tpot = _token_server()
    r = summarize(eff, schedule, rec)
    att = r.attainment
    assert att is not None and att.targets_ns == {"ttft": 200_000, "tpot": 2_500} and att.source == BENCHMARK_BOUNDS
    met_ttft, met_tpot = ttft <= 200_000, tpot <= 2_500
    assert att.met == {"ttft": int(met_ttft.sum()), "tpot": int(met_tpot.sum())} == {"ttft": 21, "tpot": 31}
    assert att.met_all == int((met_ttft & met_tpot).sum()) == 21 and att.judged == att.completed == 40
    assert att.share == 21 / 40
    # goodput: the run's requests/s (the verdict's completed samples per second) x the share met
    assert r.requests_per_second == r.completed_samples_per_sec
    assert att.goodput_per_s == pytest.approx(r.completed_samples_per_sec * 21 / 40, rel=1e-15)
    assert att.masks["all"].tolist() == (met_ttft & met_tpot).tolist()


def test_attainment_targets_set_by_the_user_and_failed_requests():
    from proctor.loadgen.results import SLOTargets

    eff, schedule, rec, ttft, tpot = _token_server()
    rec.sample_failed = np.zeros(40, np.uint8)
    rec.sample_failed[[0, 1]] = 1  # failed: no result, counted as requests that met nothing
    rec.failed_samples = 2
    r = summarize(eff, schedule, rec, SLOTargets(ttft_ns=100_000, source="set by --slo-ttft-ms"))
    att = r.attainment
    assert att.targets_ns == {"ttft": 100_000, "tpot": 2_500}  # TPOT: still the benchmark's bound
    assert att.source == "set by --slo-ttft-ms; TPOT the benchmark's bound"
    ok = np.ones(40, bool)
    ok[[0, 1]] = False
    assert att.met["ttft"] == int((ok & (ttft <= 100_000)).sum()) == 9
    assert att.met_all == 9 and att.judged == 40 and att.completed == 38
    assert att.goodput_per_s == pytest.approx(r.requests_per_second * 9 / 38, rel=1e-15)
    # the summary's lines say it, beside the MLPerf verdict
    lines = att.lines()
    assert lines[0].startswith("SLO attainment: 9 of 40 requests (22.50%) met every SLO target (TTFT <= 0.1 ms, "
                               "TPOT <= 0.0025 ms; set by --slo-ttft-ms; TPOT the benchmark's bound)")
    assert f"goodput: {att.goodput_per_s:.2f} requests/s" in lines[1]


def test_attainment_where_the_scenario_has_no_bound():
    from proctor.loadgen.results import SLOTargets

    n = 30
    sched = np.arange(n, dtype=np.int64) * 1_000_000
    lat = (np.arange(n, dtype=np.int64) + 1) * 100_000
    schedule, rec = build(sched, lat)
    eff = make_eff(Scenario.SINGLE_STREAM, min_query_count=n)
    assert summarize(eff, schedule, rec).attainment is None  # SingleStream: no bound, none given
    r = summarize(eff, schedule, rec, SLOTargets(ttft_ns=5, latency_ns=1_000_000))
    att = r.attainment
    assert att.targets_ns == {"latency": 1_000_000} and att.ignored == ("TTFT",)
    assert att.met_all == 10 and att.share == 10 / 30
    # requests/s of a run without a rate metric: (n - 1) / the last completion, as Server counts it
    assert r.requests_per_second == pytest.approx((n - 1) / r.final_query_done_s, rel=1e-15)
    assert "SLO targets not judged (TTFT)" in att.lines()[-1]


def test_attainment_in_the_logs(tmp_path):
    from proctor.loadgen.logs.summary import annotation_text, attainment_lines

    eff, schedule, rec, _, _ = _token_server()
    r = summarize(eff, schedule, rec)
    text = annotation_text("", (), attainment_lines(r))
    assert text.splitlines()[1:] == [f"PROCTOR: {line}" for line in r.attainment.lines()]
