"""Sweeps and goodput (issue 24, section 2): the option readers, the goodput search against a system
of known capacity, and the closed loop with N queries in flight (never an MLPerf verdict)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.app import sweep as sw
from proctor.app.session import build_settings
from proctor.errors import ConfigError
from proctor.loadgen import find_peak
from proctor.loadgen.engine import run_test
from proctor.loadgen.logs.reader import read_detail
from proctor.loadgen.logs.recompute import recompute
from proctor.loadgen.settings import LogOutputSettings, LogSettings
from proctor.loadgen.types import Scenario
from proctor.suts.synthetic import InMemoryQSL, SyntheticParams, SyntheticSUT

# --- the option readers ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("4,8,16", [4.0, 8.0, 16.0]),
        (" 2.5 , 5 ", [2.5, 5.0]),
        ("4:64:x2", [4.0, 8.0, 16.0, 32.0, 64.0]),
        ("4:60:x2", [4.0, 8.0, 16.0, 32.0]),
        ("10:50:+10", [10.0, 20.0, 30.0, 40.0, 50.0]),
        ("1:1:x2", [1.0]),
    ],
)
def test_rates_are_a_list_or_a_range(text, values):
    assert sw.parse_values(text, "--rates") == values


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "give a list"),
        ("4,x", "'x' is not a number"),
        ("0,4", "must be a finite number > 0"),
        ("8,4", "increasing, each once"),
        ("4,4", "increasing, each once"),
        ("nan", "must be a finite number > 0"),
        ("4:64", "START:STOP:xFACTOR"),
        ("64:4:x2", "STOP (4) is below START (64)"),
        ("4:64:x1", "a factor must be > 1"),
        ("4:64:*2", "the step is xFACTOR"),
        ("1:1000000:+1", "more than 64 points"),
    ],
)
def test_bad_rates_are_refused_naming_the_option(text, why):
    with pytest.raises(ConfigError) as exc:
        sw.parse_values(text, "--rates")
    assert why in str(exc.value)
    assert "--rates" in str(exc.value)


def test_a_concurrency_is_a_whole_number():
    assert sw.parse_concurrencies("1:16:x2") == [1, 2, 4, 8, 16]
    with pytest.raises(ConfigError, match="whole number of requests, not 1.5"):
        sw.parse_concurrencies("1,1.5")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789.,:x+-e naN", max_size=24))
def test_any_option_text_is_a_short_increasing_list_or_one_config_error(text):
    try:
        values = sw.parse_values(text, "--rates")
    except ConfigError as exc:
        assert "--rates" in str(exc)
        return
    assert 1 <= len(values) <= sw.MAX_POINTS
    assert all(math.isfinite(v) and v > 0 for v in values)
    assert all(b > a for a, b in zip(values, values[1:], strict=False))


# --- goodput against a system of known capacity ----------------------------------------------------------


def capacity_probe(capacity: float, calls: list[float]):
    def probe(rate: float, stage: str) -> tuple[bool, str]:
        calls.append(rate)
        return rate <= capacity, f"{stage} at {rate:g}"

    return probe


@pytest.mark.parametrize("capacity", [123.4, 517.0, 1000.0, 9999.0])
@pytest.mark.parametrize("tolerance", [0.02, 0.05, 0.1])
def test_goodput_brackets_the_capacity_to_the_tolerance(capacity, tolerance):
    calls: list[float] = []
    found = sw.goodput_search(capacity_probe(capacity, calls), 10.0, tolerance)
    assert found.found and found.reached and found.stopped == ""
    assert found.lower <= capacity < found.upper
    assert found.upper / found.lower - 1 <= tolerance
    # doubling from 10 until the first failure, then one probe per halving of log(hi/lo)
    doubles = math.floor(math.log2(capacity / 10)) + 2
    narrows = math.ceil(math.log2(math.log(2) / math.log(1 + tolerance)))
    assert len(found.probes) == doubles + narrows
    assert [p.stage for p in found.probes] == ["double"] * doubles + ["narrow"] * narrows
    assert [p.rate for p in found.probes] == calls
    assert all(p.passed == (p.rate <= capacity) for p in found.probes)


def test_goodput_halves_from_a_start_above_the_capacity():
    found = sw.goodput_search(capacity_probe(30.0, []), 1000.0, 0.02)
    assert [p.stage for p in found.probes][:6] == ["double", "halve", "halve", "halve", "halve", "halve"]
    assert found.probes[5].rate == 31.25 and not found.probes[5].passed
    assert found.probes[6].rate == 15.625 and found.probes[6].passed
    assert found.lower <= 30.0 < found.upper and found.reached


def test_goodput_without_a_passing_rate_says_so():
    found = sw.goodput_search(capacity_probe(0.0, []), 8.0, 0.02, min_rate=1.0)
    assert not found.found and found.lower == 0.0
    assert [p.rate for p in found.probes] == [8.0, 4.0, 2.0, 1.0]
    assert found.stopped == "no rate down to 1 passed"
    assert found.to_json()["goodput_qps"] is None


def test_goodput_stops_halving_when_the_latency_does_not_come_from_the_load():
    """A SUT slower than the bound at any rate (or a busy host): each halving doubles a probe's
    length, so the search stops once a 4x lower rate, kept up with, left the latency as far over."""
    calls: list[float] = []

    def slow(rate: float, stage: str):
        calls.append(rate)
        return False, "p99 over", 5.0 * (1 + 0.01 * len(calls))  # kept up, 5x the bound whatever the rate

    found = sw.goodput_search(slow, 50.0, 0.02)
    assert calls == [50.0, 25.0, 12.5] and not found.found and found.upper == 12.5
    assert found.stopped.startswith("no rate down to 12.5 passed: at 50 and 12.5 QPS the SUT kept up")
    assert "does not come from the load" in found.stopped


@pytest.mark.parametrize(
    ("strains", "probes"),
    [
        ((None, None, None, None), 6),  # over capacity: latency grows with the run, not the rate: go on
        ((5.0, 3.0, 2.0, 1.4, 1.1), 6),  # each 4x lower rate at least halved the excess: load-driven
        ((5.0, 5.0, 5.0), 3),
        ((1.2, 1.15, 1.12), 3),  # a small excess that barely moves stops too
    ],
)
def test_goodput_halving_goes_on_while_lowering_the_rate_may_pass(strains, probes):
    def probe(rate: float, stage: str):
        k = len(calls)
        calls.append(rate)
        return rate <= 1.0, "", (strains[k] if k < len(strains) else None)

    calls: list[float] = []
    found = sw.goodput_search(probe, 50.0, 0.5)
    assert len([p for p in found.probes if p.stage != "narrow" and not p.passed]) == probes
    assert found.found == (probes == 6)


def test_goodput_stops_at_the_highest_rate_allowed():
    found = sw.goodput_search(capacity_probe(1e9, []), 10.0, 0.02, max_rate=100.0)
    assert found.found and found.lower == 80.0 and found.upper == 0.0 and not found.reached
    assert found.stopped == "passed up to the highest rate allowed (100)"


@pytest.mark.parametrize(("start", "tolerance"), [(0.0, 0.02), (-1.0, 0.02), (math.nan, 0.02), (1.0, 0.0), (1.0, 1e-4), (1.0, 1.0)])
def test_goodput_refuses_a_bad_start_or_tolerance(start, tolerance):
    with pytest.raises(ConfigError):
        sw.goodput_search(capacity_probe(1.0, []), start, tolerance)


def test_goodput_needs_far_fewer_runs_than_find_peak_performance():
    """The same system (capacity 517 QPS) and start: the official search bisects to one decimal
    (the official defaults: step 1, i.e. doubling, then one decimal of precision)."""
    peak = find_peak.search(lambda q, stage: (q <= 517.0, "", None), 10.0, 1.0, 1)
    mine = sw.goodput_search(capacity_probe(517.0, []), 10.0, 0.02)
    assert len(peak.probes) == 19 and len(mine.probes) == 13
    assert mine.upper / mine.lower - 1 <= 0.02


# --- the closed loop with N in flight --------------------------------------------------------------------


def closed_loop_run(tmp_path, n: int):
    resolved = build_settings(Scenario.SINGLE_STREAM, None, "resnet50", None, duration_ms=300, min_queries=64)
    s = resolved.settings
    s.single_stream_expected_latency_ns = 10_000_000 / n
    sut = SyntheticSUT(SyntheticParams(service_us=10_000, workers=8))
    try:
        return run_test(
            sut, InMemoryQSL(64, 64), s, LogSettings(log_output=LogOutputSettings(outdir=str(tmp_path))),
            audit_config=None, concurrency=n,
        )
    finally:
        sut.close()


def in_flight_at_each_issue(outcome) -> np.ndarray:
    rec = outcome.records
    n = rec.n_queries_issued
    issued, done = rec.query_issued_ns[:n], rec.query_done_ns[:n]
    return np.array([int(np.sum((issued[:q] <= issued[q]) & (done[:q] > issued[q]))) + 1 for q in range(n)])


@pytest.mark.parametrize("n", [1, 4])
def test_a_closed_loop_keeps_n_queries_in_flight_and_is_never_valid(tmp_path, n):
    outcome = closed_loop_run(tmp_path, n)
    assert outcome.errors == 0 and outcome.issue_stop_reason == "done"
    assert int(in_flight_at_each_issue(outcome).max()) == n
    # the verdict: never VALID, whatever the numbers, and the logs say why
    assert not outcome.valid and outcome.result is not None and not outcome.result.valid
    # a library run passes no labels: the reason names the options it sets, no command-line flag
    assert outcome.invalid_reasons[0] == (
        f"closed loop with {n} queries in flight (concurrency): not an MLPerf scenario, so no MLPerf verdict; "
        "for one run scenario Server or SingleStream without concurrency"
    )
    summary = (tmp_path / "mlperf_log_summary.txt").read_text()
    assert "Result is : INVALID" in summary
    assert f"  MLPerf scenario : NO (closed loop, {n} queries in flight)" in summary
    detail = read_detail(tmp_path / "mlperf_log_detail.txt")
    assert detail.require("result_validity") == "INVALID"
    assert detail.require("proctor_closed_loop_in_flight") == n
    again = recompute(detail)
    assert not again.valid and again.mismatches == []


def test_more_in_flight_serves_more_per_second(tmp_path):
    one = closed_loop_run(tmp_path / "1", 1).result
    four = closed_loop_run(tmp_path / "4", 4).result
    assert one is not None and four is not None
    rate = [r.sample_count / r.final_query_done_s for r in (one, four)]
    assert rate[1] > 2 * rate[0]  # 8 workers: 4 in flight are served side by side


def test_a_closed_loop_needs_singlestream_settings(tmp_path):
    s = build_settings(Scenario.SERVER, None, "resnet50", None, duration_ms=100, target_qps=10).settings
    sut = SyntheticSUT(SyntheticParams(service_us=0, workers=0))
    with pytest.raises(ConfigError, match="SingleStream settings only"):
        run_test(sut, InMemoryQSL(8, 8), s, LogSettings(log_output=LogOutputSettings(outdir=str(tmp_path))),
                 concurrency=4)


def test_a_closed_loop_point_ends_at_its_duration_on_an_equal_issue_benchmark(tmp_path):
    """llama2-70b issues equally (queries padded to whole passes over the loaded set): a closed-loop
    point still ends at --duration-ms, not after hundreds of 50 ms requests."""
    from proctor.app.session import RunRequest

    request = RunRequest(scenario=Scenario.SINGLE_STREAM, sut="synthetic:service_us=50000,workers=1,tokens=10",
                         model="llama2-70b", duration_ms=300, trace=False, output_dir=tmp_path)
    point = sw.point_runner(request)("concurrency", 1.0, tmp_path / "c1")
    assert point.valid is None and point.mlperf is False and point.errors == 0
    assert 3 <= point.samples <= 12  # 300 ms of 50 ms requests, one at a time
    assert point.ttft_ms is not None and point.tpot_ms is not None and point.tokens_per_s is not None
    detail = read_detail(tmp_path / "c1" / "mlperf_log_detail.txt")
    assert detail.require("effective_min_query_count") == 1
    assert detail.require("effective_sample_concatenate_permutation") is False
    # a closed loop has no bound of its own: its requests are judged against the Server bounds
    assert point.slo_ms == {"ttft": 2000.0, "tpot": 200.0} and point.slo_attainment == 1.0
    assert point.goodput_per_s == point.requests_per_s


def test_a_points_requests_per_second_is_the_verdicts_number(tmp_path):
    """issue 34 §5: the table's requests/s (24.03) and the verdict's (23.98) differed: n / t against the
    official (n - 1) / t. A point's requests/s is now the run's one figure, the verdict's metric."""
    from proctor.app.session import RunRequest
    from proctor.report.sweep import figure_text

    request = RunRequest(scenario=Scenario.SERVER, sut="synthetic:service_us=2000,workers=4", duration_ms=300,
                         trace=False, output_dir=tmp_path)
    point = sw.point_runner(request)("rate", 200.0, tmp_path / "r")
    detail = read_detail(tmp_path / "r" / "mlperf_log_detail.txt")
    # the detail log prints 6 significant digits
    assert point.requests_per_s == pytest.approx(detail.require("result_completed_samples_per_sec"), rel=5e-6)
    summary = (tmp_path / "r" / "mlperf_log_summary.txt").read_text()  # whatever the verdict (load may fail it)
    assert f"Completed samples per second    : {figure_text('rate', point.requests_per_s)}\n" in summary
    assert detail.require("proctor_requests_per_sec") == detail.require("result_completed_samples_per_sec")
    # and point_of takes it from the outcome's own result, not a count of its own
    resolved = build_settings(Scenario.SERVER, None, "resnet50", None, duration_ms=300, target_qps=200)
    sut = SyntheticSUT(SyntheticParams(service_us=2000, workers=4))
    try:
        out = run_test(sut, InMemoryQSL(64, 64), resolved.settings,
                       LogSettings(log_output=LogOutputSettings(outdir=str(tmp_path / "o"))), audit_config=None)
    finally:
        sut.close()
    p = sw.point_of(out, "rate", 200.0, out.valid, [], "o")
    assert p.requests_per_s == out.metric.value == out.result.completed_samples_per_sec
