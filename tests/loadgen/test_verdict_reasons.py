"""Issue 23 (journey 2): an invalid run's reasons name the true cause, the command-line option that
fixes it and the value that would pass (results._reasons), on hand-built records. The CLI's flags
come from its labels (cli/run_options.SETTING_FLAGS, handed to the engine as EngineOptions.labels);
without labels (a library or official-API run) the reasons name the settings instead (issue 32 item 5)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.cli.run_options import SETTING_FLAGS
from proctor.loadgen import early_stopping as es
from proctor.loadgen.option_names import OptionNames
from proctor.loadgen.results import projected_queries, summarize
from proctor.loadgen.types import Scenario
from tests.loadgen.test_results import build, make_eff

CLI = OptionNames(SETTING_FLAGS)  # the names `proctor run` hands the engine
FLAG = re.compile(r"(?<![\w-])--[a-z]")
P99_NONE_OVER = 459  # f(0) + 0 at p99: the fewest Server queries early stopping accepts


def _llm_server(n: int, qps: float, ttft_ns: int = 2_000_000) -> tuple[object, object, object]:
    """n token queries at `qps`, every TTFT and TPOT well under its target (the README's LLM run)."""
    sched = (np.arange(n, dtype=np.int64) * (1e9 / qps)).astype(np.int64)
    first = np.full(n, ttft_ns, np.int64)
    lat = np.full(n, 12_000_000, np.int64)
    tokens = np.full(n, 11, np.int64)  # TPOT 1 ms
    schedule, rec = build(sched, lat, first=first, tokens=tokens)
    eff = make_eff(
        Scenario.SERVER,
        target_qps=qps,
        target_latency_percentile=0.99,
        use_token_latencies=True,
        server_ttft_latency=2_000_000_000,
        server_tpot_latency=200_000_000,
        min_duration_ms=1,
        min_query_count=1,
        min_sample_count=1,
    )
    return eff, schedule, rec


def test_too_few_queries_is_named_with_the_duration_and_query_count_that_pass():
    """200 queries at 20 qps (`--quick`), no token over: not "too many tokens over the targets"."""
    eff, schedule, rec = _llm_server(200, 20.0)
    r = summarize(eff, schedule, rec, names=CLI)
    assert r.perf_constraints_met and not r.early_stopping_met and not r.valid
    assert (r.ttft_overlatency_count, r.tpot_overlatency_count) == (0, 0)
    assert es.server_required_queries(0, 0.99) == P99_NONE_OVER
    [reason] = r.reasons
    assert reason == (
        "early stopping: too few queries, not too slow: 200 queries, none over the TTFT/TPOT bounds: 259 short "
        "of the 459 queries a 99th percentile estimate then needs: run longer: --duration-ms 26000 at "
        "--target-qps 20 (~520 queries), or --min-queries 459 (min_query_count)"
    )
    assert "too many" not in reason


def test_the_recommended_query_count_passes():
    """The run the reason asks for (459 queries, none over) is valid: the number is the one that passes."""
    eff, schedule, rec = _llm_server(P99_NONE_OVER, 20.0)
    assert summarize(eff, schedule, rec).valid
    eff, schedule, rec = _llm_server(P99_NONE_OVER - 1, 20.0)
    assert not summarize(eff, schedule, rec).valid


def _latency_server(n: int, over: int) -> tuple[object, object, object]:
    sched = np.arange(n, dtype=np.int64) * 1_000_000  # 1000 qps
    lat = np.full(n, 5_000_000, np.int64)
    lat[:over] = 50_000_000  # over a 10 ms target
    schedule, rec = build(sched, lat)
    eff = make_eff(
        Scenario.SERVER,
        target_latency_ns=10_000_000,
        target_latency_percentile=0.99,
        min_duration_ms=1,
        min_query_count=1,
        min_sample_count=1,
    )
    return eff, schedule, rec


def test_a_few_over_latency_is_still_too_few_queries_with_a_projected_count():
    eff, schedule, rec = _latency_server(1000, 4)
    r = summarize(eff, schedule, rec, names=CLI)
    need = es.server_required_queries(4, 0.99)
    assert r.perf_constraints_met and not r.early_stopping_met and need > 1000
    projected = projected_queries(4, 1000, 0.99)
    assert projected is not None and projected >= need
    [reason] = r.reasons
    assert reason.startswith(
        f"early stopping: too few queries, not too slow: 1000 queries, 4 over the latency bound: {need - 1000} "
        f"short of the {need} queries a 99th percentile estimate then needs: run longer: --duration-ms "
    )
    assert reason.endswith(f"--min-queries {projected} (min_query_count)")
    # at the same share of late queries, the projected count passes
    eff, schedule, rec = _latency_server(projected, int(np.ceil(4 / 1000 * projected)))
    assert summarize(eff, schedule, rec).early_stopping_met


def test_too_many_over_latency_asks_for_a_lower_rate():
    eff, schedule, rec = _latency_server(1000, 30)  # 3% over at p99: no run length passes
    r = summarize(eff, schedule, rec, names=CLI)
    assert projected_queries(30, 1000, 0.99) is None
    es_reason = [x for x in r.reasons if x.startswith("early stopping")]
    need = es.server_required_queries(30, 0.99)
    assert es_reason == [
        "early stopping: too many queries over latency (30 of 1000, 3.00%; no run length passes unless well "
        "under 1% are): "
        f"1000 queries, 30 over the latency bound: {need - 1000} short of the {need} queries a 99th percentile "
        "estimate then needs: lower --target-qps (server_target_qps, now 1000)"
    ]
    assert any("lower --target-qps (server_target_qps, now 1000)" in x for x in r.reasons if "latency is" in x)


def test_offline_too_short_names_target_qps_and_a_value():
    """An Offline query that ended before min_duration: `--target-qps` with a value above the measured
    rate (issue 23: was "raise offline_expected_qps", the conf key and no value)."""
    n = 1000
    sched = np.zeros(1, np.int64)
    lat = np.arange(1, n + 1, dtype=np.int64) * 100_000  # 1000 samples in 0.1 s: 10,000 samples/s
    schedule, rec = build(sched, lat, spq=n)
    eff = make_eff(Scenario.OFFLINE, target_qps=5000.0, min_duration_ms=1000, samples_per_query=n)
    r = summarize(eff, schedule, rec, names=CLI)
    assert not r.min_duration_met and r.samples_per_second == pytest.approx(10_000)
    [reason] = [x for x in r.reasons if "min_duration" in x]
    assert "offline_expected_qps" in reason and "raise offline_expected_qps" not in reason
    assert "the SUT did 10,000 samples/s, more than the 5000 asked: --target-qps 11000 or more" in reason


def _single_stream(n: int = 20, latency_ns: int = 5_000_000) -> tuple[object, object, object]:
    """n queries one after another, each `latency_ns`: short of a 1 s min_duration and of the
    queries a 90th percentile estimate needs."""
    sched = np.arange(n, dtype=np.int64) * latency_ns
    schedule, rec = build(sched, np.full(n, latency_ns, np.int64))
    eff = make_eff(Scenario.SINGLE_STREAM, min_duration_ms=1000, min_query_count=1, min_sample_count=1)
    return eff, schedule, rec


def _cut_short_server() -> tuple[object, object, object]:
    """A Server schedule that ends (at 0.1 s) long before its 5 s min_duration."""
    eff, schedule, rec = _latency_server(100, 0)
    return make_eff(Scenario.SERVER, target_latency_ns=10_000_000, min_duration_ms=5000, min_query_count=1,
                    min_sample_count=1), schedule, rec


def test_a_stream_run_names_the_expected_latency_and_the_query_count():
    """SingleStream too short: the expected latency to lower (the measured mean, 5 ms), and the early-stopping
    fix; the CLI's words name its flags with the setting beside them."""
    eff, schedule, rec = _single_stream()
    r = summarize(eff, schedule, rec, names=CLI)
    need = es.min_queries(0.9)
    assert [f.fix for f in r.failures] == [
        "lower --expected-latency-ms 5 or less (the measured mean latency) (single_stream_expected_latency_ns): "
        "more queries are generated",
        f"--min-queries {need} (min_query_count), or run longer (--duration-ms) or lower --expected-latency-ms",
    ]
    eff, schedule, rec = _cut_short_server()
    [fix] = [f.fix for f in summarize(eff, schedule, rec, names=CLI).failures if f.check == "min_duration"]
    assert fix.endswith("raise --max-duration-ms (max_duration) or max_query_count")


UNLABELLED = [  # (the run, the check, its advice without labels: the settings a library caller sets)
    (lambda: _llm_server(200, 20.0), "early_stopping",
     "run longer: min_duration 26000 at server_target_qps 20 (~520 queries), or min_query_count 459"),
    (lambda: _latency_server(1000, 30), "early_stopping", "lower server_target_qps (now 1000)"),
    (lambda: _latency_server(1000, 30), "latency", "lower server_target_qps (now 1000)"),
    (_single_stream, "min_duration",
     "lower single_stream_expected_latency_ns 5000000 or less (the measured mean latency): more queries are generated"),
    (_single_stream, "early_stopping",
     f"min_query_count {es.min_queries(0.9)}, or run longer (min_duration) or lower single_stream_expected_latency_ns"),
    (_cut_short_server, "min_duration",
     "the schedule was cut short (max_duration or max_query_count, or the run stopped): raise max_duration or "
     "max_query_count"),
]


@pytest.mark.parametrize("run,check,fix", UNLABELLED)
def test_without_labels_the_advice_names_the_setting_and_no_flag(run, check, fix):
    """A library or official-API run (no labels: EngineOptions() as compat/ builds it) reads the settings it
    can set, never a command-line flag; the same run with the CLI's labels names the flags."""
    eff, schedule, rec = run()
    r = summarize(eff, schedule, rec)
    assert [f.fix for f in r.failures if f.check == check] == [fix]
    assert not any(FLAG.search(line) for line in r.reasons), r.reasons
    labelled = summarize(eff, schedule, rec, names=CLI)
    assert any(FLAG.search(f.fix) for f in labelled.failures if f.check == check)
    assert [f.fact for f in labelled.failures] == [f.fact for f in r.failures]  # the facts are the same


def test_without_labels_offline_names_offline_expected_qps_with_the_value():
    n = 1000
    schedule, rec = build(np.zeros(1, np.int64), np.arange(1, n + 1, dtype=np.int64) * 100_000, spq=n)
    eff = make_eff(Scenario.OFFLINE, target_qps=5000.0, min_duration_ms=1000, samples_per_query=n)
    [reason] = [x for x in summarize(eff, schedule, rec).reasons if "min_duration" in x]
    assert reason.endswith(
        "the SUT did 10,000 samples/s, more than the 5000 asked: offline_expected_qps 11000 or more makes the "
        "single query last min_duration"
    )


def test_projection_bounds():
    assert projected_queries(0, 200, 0.99) == P99_NONE_OVER
    assert projected_queries(10, 1000, 0.99) is None  # 1%: never
    assert projected_queries(999, 100_000, 0.99) is None  # 0.999%: beyond PROJECTION_LIMIT queries
    n = projected_queries(5, 1000, 0.99)  # 0.5%: a run of n queries with 0.5% over passes
    assert n is not None and es.server_required_queries(int(np.ceil(0.005 * n)), 0.99) <= n
    assert projected_queries(0, 0, 0.9) == es.server_required_queries(0, 0.9)


@settings(max_examples=30, deadline=None)
@given(over=st.integers(0, 40), queries=st.integers(1, 20_000), percentile=st.sampled_from([0.9, 0.99]))
def test_a_projected_count_passes_at_the_share_seen(over, queries, percentile):
    """Whatever the counts, the count the verdict recommends passes early stopping if queries keep going
    over latency in the same share; None only where the share is at or near 1 - percentile."""
    over = min(over, queries)
    n = projected_queries(over, queries, percentile)
    share = over / queries
    if n is None:
        assert share > (1 - percentile) / 2
    else:
        assert n >= es.server_required_queries(over, percentile)
        assert es.server_required_queries(int(np.ceil(share * n)), percentile) <= n


def test_the_run_table_shows_the_queries_early_stopping_needs():
    from rich.console import Console

    from proctor.app.render import outcome_table
    from proctor.loadgen.engine import RunOutcome

    eff, schedule, rec = _llm_server(200, 20.0)
    r = summarize(eff, schedule, rec)
    outcome = RunOutcome(
        result=r, valid=False, incomplete=False, incomplete_reason="", errors=0, warnings=0,
        scenario="Server", mode="PerformanceOnly", log_paths={},
    )  # type: ignore[arg-type]
    console = Console(width=120, record=True)
    console.print(outcome_table(outcome))
    text = console.export_text()
    assert "early stopping: queries / needed" in text and "200 / 459 (NOT met)" in text


def test_the_run_table_prints_no_data_not_zero_when_no_sample_completed():
    """48 queries, every sample failed: a percentile of nothing is "-", never 0.000 ms, and the failed
    samples have their own row beside the log's error entries (which may be fewer: "repeated N times")."""
    from rich.console import Console

    from proctor.app.render import outcome_table
    from proctor.loadgen.engine import RunOutcome
    from proctor.loadgen.results import PerformanceResult

    r = PerformanceResult(scenario="Server", mode="PerformanceOnly", target_percentile=0.99,
                          use_token_latencies=True, query_count=48, sample_count=0, failed_samples=48)
    outcome = RunOutcome(
        result=r, valid=False, incomplete=False, incomplete_reason="", errors=2, warnings=0,
        scenario="Server", mode="PerformanceOnly", log_paths={},
    )  # type: ignore[arg-type]
    console = Console(width=160, record=True)
    console.print(outcome_table(outcome))
    text = console.export_text()
    assert "0.000" not in text, text
    assert re.search(r"TTFT p99 / TPOT p99\s*│ - / -", text), text
    assert re.search(r"latency p50 / p90 / p99 / p99.9\s*│ - / - / - / -", text), text
    assert re.search(r"samples failed\s*│ 48", text), text
    assert re.search(r"log errors / warnings\s*│ 2 / 0", text), text
