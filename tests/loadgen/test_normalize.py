"""normalize(): the official TestSettingsInternal, by hand and against the official detail log."""

from __future__ import annotations

import atexit
import dataclasses
import shutil
import tempfile
from pathlib import Path

import pytest

from proctor.loadgen.normalize import normalize
from proctor.loadgen.resolve import start_settings
from proctor.loadgen.settings import EffectiveSettings
from proctor.loadgen.settings import TestSettings as Settings
from proctor.loadgen.types import Scenario
from proctor.loadgen.types import TestMode as Mode
from proctor.mllog_lines import LogLine, iter_log

SEEDS = dict(
    qsl_rng_seed=2085463073848966840,
    sample_index_rng_seed=2747215439041700203,
    schedule_rng_seed=16159082839903944936,
)


def test_offline_samples_per_query_formula():
    s = Settings(
        scenario=Scenario.OFFLINE, min_duration_ms=600000, offline_expected_qps=100.0, min_query_count=24576
    )
    e = normalize(s, 50000, 1024)
    # max(min_query_count, u64(1.1 * 600 s * 100 qps)) = max(24576, 66000)
    assert e.samples_per_query == 66000
    assert (e.min_query_count, e.target_duration_ms, e.min_duration_ms) == (1, 0, 600000)
    assert e.min_sample_count == 66000
    e = normalize(dataclasses.replace(s, offline_expected_qps=10.0), 50000, 1024)
    assert e.samples_per_query == 24576  # u64(6600.000000000001) < min_query_count
    e = normalize(dataclasses.replace(s, performance_issue_unique=True), 50000, 1024)
    assert e.samples_per_query == 1024
    # 1.1 * 0.3 * 1000 = 330.00000000000006 in doubles: truncates to 330
    e = normalize(
        Settings(
            scenario=Scenario.OFFLINE, min_duration_ms=300, offline_expected_qps=1000.0, min_query_count=1
        ),
        10,
        10,
    )
    assert e.samples_per_query == 330


def test_single_stream_and_multistream_rates():
    e = normalize(Settings(single_stream_expected_latency_ns=2_500_000.0), 100, 10)
    assert (e.target_qps, e.max_async_queries, e.samples_per_query, e.target_latency_ns) == (400.0, 1, 1, 0)
    assert e.target_latency_percentile == 0.9
    e = normalize(
        Settings(
            scenario=Scenario.MULTI_STREAM,
            multi_stream_expected_latency_ns=80e6,
            multi_stream_samples_per_query=8,
            min_query_count=662,
        ),
        100,
        10,
    )
    assert (e.target_qps, e.samples_per_query, e.min_sample_count) == (12.5, 8, 662 * 8)
    assert e.target_latency_percentile == 0.99


def test_server_fields_and_overrides():
    s = Settings(
        scenario=Scenario.SERVER,
        server_target_qps=123.5,
        server_target_latency_ns=15_000_000,
        server_max_async_queries=7,
        performance_sample_count_override=33,
        accuracy_sample_count_override=44,
        **SEEDS,
    )
    e = normalize(s, 100, 10)
    assert (e.target_qps, e.target_latency_ns, e.max_async_queries) == (123.5, 15_000_000, 7)
    assert (e.performance_sample_count, e.accuracy_sample_count) == (33, 44)
    assert (e.qsl_rng_seed, e.schedule_rng_seed) == (SEEDS["qsl_rng_seed"], SEEDS["schedule_rng_seed"])
    e = normalize(
        dataclasses.replace(
            s, performance_sample_count_override=0, accuracy_sample_count_override=0, server_target_qps=-1.0
        ),
        100,
        10,
    )
    assert (e.performance_sample_count, e.accuracy_sample_count, e.target_qps) == (10, 100, 1.0)


def test_single_stream_equal_issue_rounds_min_query_count():
    s = Settings(
        min_duration_ms=200,
        min_query_count=10,
        single_stream_expected_latency_ns=10e6,
        sample_concatenate_permutation=True,
    )
    # max(10, 2 * 0.2 s * 100 qps) = 40, then + (psc - 40 % psc): a full extra set when divisible
    assert normalize(s, 100, 10).min_query_count == 50
    assert normalize(s, 100, 15).min_query_count == 45
    assert (
        normalize(dataclasses.replace(s, performance_sample_count_override=15), 100, 10).min_query_count == 50
    )
    assert (
        normalize(dataclasses.replace(s, sample_concatenate_permutation=False), 100, 10).min_query_count == 10
    )


def test_test05_forces_performance_mode_and_seeds():
    s = Settings(
        mode=Mode.ACCURACY_ONLY,
        test05=True,
        test05_qsl_rng_seed=1,
        test05_sample_index_rng_seed=2,
        test05_schedule_rng_seed=3,
        **SEEDS,
    )
    e = normalize(start_settings(s, None), 10, 10)
    assert e.requested is not None and e.requested.test05
    assert e.test_mode is Mode.PERFORMANCE_ONLY
    assert (e.qsl_rng_seed, e.sample_index_rng_seed, e.schedule_rng_seed) == (1, 2, 3)


# ------------------------------------------------------------------ differential vs official


def official_effective(settings: dict, total: int, perf_count: int) -> dict:
    lg = pytest.importorskip("mlperf_loadgen")
    scen = {s.value: getattr(lg.TestScenario, s.value) for s in Scenario}
    modes = {m.value: getattr(lg.TestMode, m.value) for m in Mode}
    ts = lg.TestSettings()
    for k, v in settings.items():
        if k == "scenario":
            v = scen[str(v)]
        elif k == "mode":
            v = modes[str(v)]
        setattr(
            ts, {"server_ttft_latency": "ttft_latency", "server_tpot_latency": "tpot_latency"}.get(k, k), v
        )

    def issue(qs):
        lg.QuerySamplesComplete([lg.QuerySampleResponse(q.id, 0, 0) for q in qs])

    sut = lg.ConstructSUT(issue, lambda: None)
    qsl = lg.ConstructQSL(total, perf_count, lambda i: None, lambda i: None)
    out = tempfile.mkdtemp(prefix="proctor-norm-")
    atexit.register(shutil.rmtree, out, True)  # hypothesis calls this many times: no tmp_path
    log = lg.LogSettings()
    log.log_output.outdir = out
    log.enable_trace = False
    lg.StartTestWithLogSettings(sut, qsl, ts, log, str(Path(out) / "no-audit.config"))
    lg.DestroyQSL(qsl)
    lg.DestroySUT(sut)
    eff = {}
    for rec in iter_log(Path(out) / "mlperf_log_detail.txt"):
        if isinstance(rec, LogLine) and rec.key.startswith("effective_"):
            eff.setdefault(rec.key[len("effective_") :], rec.value)
    return eff


def as_logged(v):
    """The official detail log prints doubles with 6 significant digits and enums by name."""
    if isinstance(v, bool):
        return v
    if isinstance(v, float):
        return float(f"{v:.6g}")
    if isinstance(v, Scenario | Mode):
        return v.value
    return v


ACC = Mode.ACCURACY_ONLY
GRID = [
    # Accuracy-mode runs issue each of the few samples once, whatever the durations: cheap.
    dict(
        scenario=Scenario.SINGLE_STREAM,
        mode=ACC,
        min_duration_ms=600000,
        min_query_count=100,
        single_stream_expected_latency_ns=1_234_567.0,
    ),
    dict(
        scenario=Scenario.SINGLE_STREAM,
        mode=ACC,
        min_duration_ms=600000,
        min_query_count=1024,
        single_stream_expected_latency_ns=3e6,
        sample_concatenate_permutation=True,
    ),
    dict(
        scenario=Scenario.SINGLE_STREAM,
        mode=ACC,
        min_duration_ms=700,
        min_query_count=7,
        single_stream_expected_latency_ns=9e6,
        sample_concatenate_permutation=True,
        performance_sample_count_override=6,
    ),
    dict(
        scenario=Scenario.MULTI_STREAM,
        mode=ACC,
        min_duration_ms=600000,
        min_query_count=662,
        multi_stream_expected_latency_ns=80e6,
        multi_stream_samples_per_query=8,
        multi_stream_target_latency_percentile=0.99,
    ),
    dict(
        scenario=Scenario.MULTI_STREAM,
        mode=ACC,
        min_duration_ms=1000,
        min_query_count=5,
        multi_stream_expected_latency_ns=3.3e6,
        multi_stream_samples_per_query=3,
        sample_concatenate_permutation=True,
    ),
    dict(
        scenario=Scenario.SERVER,
        mode=ACC,
        min_duration_ms=600000,
        min_query_count=270336,
        server_target_qps=1234.56,
        server_target_latency_ns=15_000_000,
        server_max_async_queries=5,
        server_target_latency_percentile=0.999,
        accuracy_sample_count_override=6,
    ),
    # (use_token_latencies is left out: it prints no effective_* key, and the official LoadGen
    # crashes on a SUT that reports no tokens.)
    dict(
        scenario=Scenario.SERVER,
        mode=ACC,
        min_duration_ms=600000,
        server_target_qps=700.0,
        server_coalesce_queries=True,
        sample_concatenate_permutation=True,
    ),
    dict(
        scenario=Scenario.OFFLINE,
        mode=ACC,
        min_duration_ms=600000,
        min_query_count=24576,
        offline_expected_qps=100.0,
    ),
    dict(
        scenario=Scenario.OFFLINE,
        mode=ACC,
        min_duration_ms=600000,
        min_query_count=24576,
        offline_expected_qps=10.0,
        performance_sample_count_override=5,
    ),
    dict(
        scenario=Scenario.OFFLINE,
        mode=ACC,
        min_duration_ms=300,
        min_query_count=1,
        offline_expected_qps=1000.0,
        performance_issue_unique=True,
    ),
    dict(
        scenario=Scenario.OFFLINE,
        mode=ACC,
        min_duration_ms=1000,
        min_query_count=3,
        offline_expected_qps=333.3,
        performance_issue_same=True,
        performance_issue_same_index=2,
        sample_concatenate_permutation=True,
        accuracy_log_probability=0.25,
        accuracy_log_rng_seed=9,
        accuracy_log_sampling_target=3,
        max_query_count=99,
        max_duration_ms=12345,
    ),
    # Short performance runs (tiny durations) cover the non-accuracy paths and test05.
    dict(
        scenario=Scenario.SINGLE_STREAM,
        mode=Mode.PERFORMANCE_ONLY,
        min_duration_ms=20,
        min_query_count=5,
        single_stream_expected_latency_ns=1e6,
        test05=True,
        test05_qsl_rng_seed=11,
        test05_sample_index_rng_seed=12,
        test05_schedule_rng_seed=13,
        print_timestamps=False,
    ),
    dict(
        scenario=Scenario.SERVER,
        mode=Mode.PERFORMANCE_ONLY,
        min_duration_ms=30,
        min_query_count=5,
        server_target_qps=500.0,
        performance_issue_unique=True,
    ),
]


@pytest.mark.official
@pytest.mark.parametrize("case", range(len(GRID)))
def test_effective_settings_equal_official(case):
    requested = {**SEEDS, **GRID[case]}
    total, perf_count = 12, 8
    official = official_effective(requested, total, perf_count)
    ours = normalize(start_settings(Settings(**requested), None), total, perf_count)
    names = EffectiveSettings.LOGGED + ("accuracy_sample_count", "sample_concatenate_permutation")
    assert set(names) <= set(official)
    mismatches = {
        n: (official[n], as_logged(getattr(ours, n)))
        for n in names
        if official[n] != as_logged(getattr(ours, n))
    }
    assert mismatches == {}
