"""The expected length of a run, said before it starts, and why (issue 34 §6): the issue's examples, the
README's, and a real run whose last query is scheduled where the expectation said."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from proctor.app.session import build_settings
from proctor.cli.live_progress import format_snapshot
from proctor.cli.run_options import SETTING_FLAGS
from proctor.loadgen.early_stopping_extension import extension_queries
from proctor.loadgen.engine import run_test
from proctor.loadgen.expected import Expected, expected_length
from proctor.loadgen.logs.reader import read_detail
from proctor.loadgen.normalize import normalize
from proctor.loadgen.option_names import NO_LABELS, OptionNames
from proctor.loadgen.progress import ProgressHooks, Snapshot
from proctor.loadgen.resolve import start_settings
from proctor.loadgen.schedule import generate_schedule, loadable_sets
from proctor.loadgen.settings import LogOutputSettings, LogSettings
from proctor.loadgen.types import Scenario, TestMode
from proctor.suts.synthetic import InMemoryQSL, SyntheticParams, SyntheticSUT

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()
PERF = TestMode.PERFORMANCE_ONLY


CLI = OptionNames(SETTING_FLAGS)  # the names `proctor run` hands the engine (EngineOptions.labels)


def expect(model: str, scenario: Scenario, prompts: int, *, extend: bool = True, names: OptionNames = CLI,
           **options) -> tuple[Expected, object]:
    """What `proctor run --model M --scenario S --duration-ms ... --target-qps ...` over `prompts`
    samples expects, and the schedule it will run (the engine's own steps); `names` NO_LABELS: what
    a library run with the same settings expects."""
    resolved = build_settings(scenario, PERF, model, None, **options)
    eff = normalize(start_settings(resolved.settings, None), prompts, prompts)
    loaded = loadable_sets(eff, prompts, PERF)[0]
    extra = None
    if extend and extension_queries(eff, 1, PERF):
        extra = lambda n: extension_queries(eff, n, PERF)  # noqa: E731
    schedule = generate_schedule(eff, loaded, PERF, extra_queries=extra)
    return expected_length(eff, schedule, PERF, len(loaded), names=names), schedule


def test_the_issues_examples_are_foreseen_with_their_causes():
    # "3 s with 1,024 prompts ran 49 s": equal issue rounds 100 queries up to a pass over the prompts
    e, schedule = expect("llama3_1-8b", Scenario.SERVER, 1024, duration_ms=3000, target_qps=20)
    assert e.queries == 1024 and e.exact
    assert e.seconds == schedule.scheduled_ns[1023] / 1e9 and 48 < e.seconds < 51
    assert e.text.startswith("expected length: 49 s (1,024 queries): min_duration 3 s at 20 QPS gives 57 queries; "
                             "min_query_count asks 100; rounded up to 1,024, whole passes over the 1,024 loaded "
                             "samples (equal issue: sample_concatenate_permutation)")
    # "20 s at 50 req/s lasted 39 s": with 1,900 prompts, 1,036 queries become 1,900
    e, schedule = expect("llama3_1-8b", Scenario.SERVER, 1900, duration_ms=20_000, target_qps=50)
    assert e.queries == 1900 and 36 < e.seconds < 39 and e.seconds == schedule.scheduled_ns[1899] / 1e9
    assert "min_duration 20 s at 50 QPS gives 1,036 queries; rounded up to 1,900" in e.text


@pytest.mark.parametrize(
    ("said", "prompts", "queries", "seconds"),
    [("30 s at 20 qps give 624 queries (31 s)\nwith 24 prompts", 24, 624, 31),
     ("1,000 queries (48 s) with 500 or 1,000 prompts", 500, 1000, 48),
     ("1,000 queries (48 s) with 500 or 1,000 prompts", 1000, 1000, 48)],
)
def test_the_readmes_llm_run(said, prompts, queries, seconds):
    assert said in README
    e, _ = expect("llama3_1-8b", Scenario.SERVER, prompts, duration_ms=30_000, target_qps=20)
    assert e.queries == queries and round(e.seconds) == seconds


def test_the_readmes_quick_llm_run_is_too_short_for_early_stopping():
    assert "(`--quick` with 24 prompts: 216 and 216 more are too few" in README
    e, schedule = expect("llama3_1-8b", Scenario.SERVER, 24, duration_ms=10_000, target_qps=20)
    assert schedule.nominal_queries == 216 and schedule.n_queries == 432 and e.queries == 432
    assert ("a 99th percentile early-stopping estimate needs 459 queries with none over latency, 662 while one is "
            "still in flight (counted as over): proctor issues them (the rules' early-stopping procedure), at most "
            "216 more: 432 in all are too few, the run will be INVALID (--min-queries 459 or a longer --duration-ms)"
            ) in e.text
    # a library run (no labels) is told the settings it sets, no command-line flag
    e, _ = expect("llama3_1-8b", Scenario.SERVER, 24, names=NO_LABELS, duration_ms=10_000, target_qps=20)
    assert e.text.endswith("432 in all are too few, the run will be INVALID (min_query_count 459 or a longer "
                           "min_duration)") and "--" not in e.text
    # a goodput probe stops where the official LoadGen stops: the same cause, said as what it costs
    e, _ = expect("llama3_1-8b", Scenario.SERVER, 24, extend=False, duration_ms=10_000, target_qps=20)
    assert e.queries == 216 and e.text.endswith("needs 459 queries even with none over latency: fewer make the "
                                                "run INVALID")


def test_the_readmes_other_runs():
    # "--target-qps 500 --quick  # 10-20 s"
    assert "--sut synthetic:service_us=200,workers=4 --target-qps 500 --quick  # 10-20 s" in README
    e, _ = expect("resnet50", Scenario.SERVER, 1024, duration_ms=10_000, target_qps=500)
    assert 10 <= e.seconds < 10.1 and e.text == f"expected length: 10 s ({e.queries:,} queries): min_duration 10 s at 500 QPS"
    # "--target-qps 12000 --fit  # rules' 600 s: ~12 min at 11,000 samples/s"
    assert "--target-qps 12000 --fit  # rules' 600 s: ~12 min at 11,000 samples/s" in README
    e, _ = expect("resnet50", Scenario.OFFLINE, 1024, target_qps=12000)
    assert e.samples == 7_920_000 and e.seconds == 660 and not e.exact
    assert e.text.startswith("expected length: ~11.0 min (1 query, 7,920,000 samples): min_duration 10.0 min x "
                             "12000 samples/s x 1.1 = 7,920,000 samples")
    assert pytest.approx(12, abs=0.1) == 7_920_000 / 11_000 / 60  # the README's ~12 min at the rate it measures


@pytest.mark.parametrize(
    ("scenario", "options", "flag", "setting"),
    [(Scenario.OFFLINE, {"target_qps": 12000}, "(--target-qps)", "(offline_expected_qps)"),
     (Scenario.SINGLE_STREAM, {"duration_ms": 100}, "(--expected-latency-ms)", "(single_stream_expected_latency_ns)"),
     (Scenario.MULTI_STREAM, {"duration_ms": 100}, "(--expected-latency-ms)", "(multi_stream_expected_latency_ns)")],
)
def test_the_rate_a_length_assumes_is_named_as_the_caller_sets_it(scenario, options, flag, setting):
    """The CLI's run names the flag that sets the rate it assumes; a library run the setting it sets."""
    cli, _ = expect("resnet50", scenario, 1024, **options)
    library, _ = expect("resnet50", scenario, 1024, names=NO_LABELS, **options)
    assert f"the settings expect {flag}" in cli.text and flag not in library.text
    assert f"the settings expect {setting}" in library.text and "--" not in library.text
    assert cli.text.replace(flag, setting) == library.text


def test_a_stream_run_names_its_equal_issue_rounding_and_a_too_short_estimate():
    e, _ = expect("llama3_1-8b", Scenario.SINGLE_STREAM, 1024, duration_ms=10_000)
    assert e.queries == 2048 and e.seconds == pytest.approx(20.48)
    assert "min_query_count 100 rounded up to 2,048" in e.text
    e, _ = expect("resnet50", Scenario.SINGLE_STREAM, 64, duration_ms=100, min_queries=10)
    assert e.queries == 10 and "a 90th percentile early-stopping estimate needs 64 queries: fewer make the run " \
                               "INVALID" in e.text


class Heard(ProgressHooks):
    def __init__(self) -> None:
        self.expected: list[Expected] = []

    def on_expected(self, expected: Expected) -> None:
        self.expected.append(expected)


def test_a_run_says_it_before_it_starts_and_ends_where_it_said(tmp_path):
    # 1.2 s at 400 QPS: ~480 queries, past the 459 early stopping needs; no extension, whatever the
    # host's load does to the latencies (a query over the bound would make the rules' procedure add some)
    resolved = build_settings(Scenario.SERVER, PERF, "resnet50", None, duration_ms=1200, target_qps=400)
    sut = SyntheticSUT(SyntheticParams(service_us=100, workers=4))
    heard = Heard()
    try:
        out = run_test(sut, InMemoryQSL(64, 64), resolved.settings,
                       LogSettings(log_output=LogOutputSettings(outdir=str(tmp_path))), audit_config=None,
                       progress=heard, early_stopping_extension=False)
    finally:
        sut.close()
    [e] = heard.expected
    rec = out.records
    n = rec.n_queries_issued
    assert e.queries == n == out.schedule.n_queries > 459 and e.text.endswith("min_duration 1.2 s at 400 QPS")
    assert e.seconds == (rec.query_scheduled_ns[n - 1] - rec.start_ns) / 1e9
    assert read_detail(tmp_path / "mlperf_log_detail.txt").require("proctor_expected_length") == e.text


def test_the_progress_line_shows_elapsed_against_expected():
    snap = Snapshot(12.3, 10, 10, 9, 1.0, {}, 100, 3.0, expected_s=49.4, expected_exact=True)
    assert format_snapshot(snap, "PerformanceOnly").startswith("PerformanceOnly    12.3 s / 49 s  queries 10")
    snap = Snapshot(2.0, 1, 1, 1, 1.0, {}, expected_s=660.0)
    assert "  2.0 s / ~11 min 00 s  queries" in format_snapshot(snap, "PerformanceOnly")
    assert " / " not in format_snapshot(Snapshot(2.0, 1, 1, 1, 1.0, {}), "AccuracyOnly").split("queries")[0]


def test_a_server_run_that_needs_the_procedure_gives_its_range():
    # measured against proctor serve llm (TTFT 40-70 ms): 256 queries scheduled, 512 issued in 26.6 s
    e, schedule = expect("llama3_1-8b", Scenario.SERVER, 64, duration_ms=10_000, target_qps=20)
    assert (schedule.nominal_queries, schedule.n_queries) == (256, 512)
    assert (e.low_queries, e.queries) == (459, 512) and not e.exact
    assert e.low_seconds == schedule.scheduled_ns[458] / 1e9 and e.seconds == schedule.scheduled_ns[511] / 1e9
    assert e.text.startswith(f"expected length: ~{e.low_seconds:.0f}-{e.seconds:.0f} s (459-512 queries): ")


def test_every_expectation_names_its_cause():
    rng = np.random.default_rng(5)
    for _ in range(12):
        prompts = int(rng.integers(1, 3000))
        qps = float(rng.choice([1, 7.5, 20, 300]))
        e, schedule = expect("llama3_1-8b", Scenario.SERVER, prompts, duration_ms=int(rng.integers(100, 20_000)),
                             target_qps=qps)
        assert e.why and e.why[0].startswith("min_duration")
        assert e.queries <= schedule.n_queries and e.seconds == schedule.scheduled_ns[e.queries - 1] / 1e9


def test_a_closed_loop_says_the_bound_it_has_not_the_settings_latency(tmp_path):
    """`proctor sweep --concurrency 1`: the length is the SUT's (latency x min_query_count / N, or
    min_duration): the line says "at least" min_duration and min_query_count, not a count from the
    10 ms --expected-latency-ms (it said ~2 s, 200 queries; the run took 13.2 s, 24 queries)."""
    resolved = build_settings(Scenario.SINGLE_STREAM, PERF, "resnet50", None, duration_ms=50, min_queries=6)
    sut = SyntheticSUT(SyntheticParams(service_us=2000, workers=2))
    heard = Heard()
    try:
        out = run_test(sut, InMemoryQSL(64, 64), resolved.settings,
                       LogSettings(log_output=LogOutputSettings(outdir=str(tmp_path))), audit_config=None,
                       progress=heard, concurrency=2)
    finally:
        sut.close()
    [e] = heard.expected
    assert e.at_least and e.seconds == pytest.approx(0.05) and e.queries == 6
    assert e.text.startswith("expected length: at least 0.05 s and 6 queries: a closed loop with 2 in flight "
                             "ends once both min_duration 0.05 s and min_query_count 6 are met"), e.text
    assert "--expected-latency-ms" not in e.text
    assert out.records.n_queries_issued >= e.queries  # a bound: the run never ends before it
    snap = Snapshot(13.2, 24, 24, 24, 1.8, {}, expected_s=2.0, expected_at_least=True)
    assert "  13.2 s / >=2.0 s  queries 24" in format_snapshot(snap, "PerformanceOnly")
    snap = Snapshot(0.8, 8, 8, 8, 10.0, {}, expected_s=0.5, expected_at_least=True)
    assert "  0.8 s / >=0.5 s  queries 8" in format_snapshot(snap, "PerformanceOnly")


class WarmingSUT(SyntheticSUT):
    """A synthetic SUT with a warm-up (sink.WarmUpSUT), as the openai SUT's warmup_s=2 reports it."""

    def warm_up(self, in_flight: int) -> str:
        return "warm-up: 16 requests in 2.21 s (4 in flight), not timed"


def test_the_expected_length_says_the_warm_up_before_it(tmp_path):
    """warmup_s=2: the line said ~4.94 s and left out the 2.21 s warm-up before it; now it says it."""
    resolved = build_settings(Scenario.SERVER, PERF, "resnet50", None, duration_ms=300, target_qps=400)
    sut = WarmingSUT(SyntheticParams(service_us=100, workers=4))
    heard = Heard()
    try:
        run_test(sut, InMemoryQSL(64, 64), resolved.settings,
                 LogSettings(log_output=LogOutputSettings(outdir=str(tmp_path))), audit_config=None,
                 progress=heard, early_stopping_extension=False)
    finally:
        sut.close()
    [e] = heard.expected
    assert e.warmup == "warm-up: 16 requests in 2.21 s (4 in flight), not timed"
    assert e.text.endswith("; before it, not in it: warm-up: 16 requests in 2.21 s (4 in flight), not timed")
    assert read_detail(tmp_path / "mlperf_log_detail.txt").require("proctor_expected_length") == e.text
