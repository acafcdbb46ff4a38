"""Requested settings -> the settings a run actually uses (official TestSettingsInternal).

Kept pure and separate from the engine so the same numbers can be checked against a detail log's
`effective_*` lines without running anything. Every conversion copies the official arithmetic,
including its integer truncations (docs/architecture.md, "Inference"; official
test_settings_internal.cc), because the submission checker compares these values exactly.
"""

from __future__ import annotations

from proctor.errors import ConfigError, SettingRangeError
from proctor.loadgen.scenarios import Scenario, TestMode
from proctor.loadgen.settings import (
    INT64_MAX,
    MAX_COUNT,
    EffectiveSettings,
    TestSettings,
    value_problem,
)

_NS_PER_S = 1_000_000_000
_OFFLINE_SLACK = 1.1  # loadgen kSlack: generate 10% more samples than min duration needs
_U64 = 1 << 64


def _u64(x: float) -> int:
    """C++ `uint64_t(double)`: truncation toward zero (the official casts never see negatives)."""
    return int(x) % _U64 if x >= 0 else 0


def normalize(settings: TestSettings, qsl_total: int, qsl_perf_count: int) -> EffectiveSettings:
    """The official TestSettingsInternal for `settings` and a QSL of the given sizes.

    `settings` are what StartTest runs, audit.config and test05 already applied
    (`resolve.start_settings`); the result keeps them as `requested`.
    """
    s = settings
    scenario = Scenario(s.scenario)
    mode = TestMode(s.mode)
    qsl_seed, index_seed, schedule_seed = s.qsl_rng_seed, s.sample_index_rng_seed, s.schedule_rng_seed

    target_latency_ns = 0
    if scenario is Scenario.SINGLE_STREAM:
        if s.single_stream_expected_latency_ns <= 0:
            raise ConfigError(
                "single_stream_expected_latency_ns must be > 0", key="single_stream_expected_latency_ns"
            )
        target_qps = _NS_PER_S / float(s.single_stream_expected_latency_ns)
        max_async = 1
        percentile = s.single_stream_target_latency_percentile
    elif scenario is Scenario.MULTI_STREAM:
        if s.multi_stream_expected_latency_ns <= 0:
            raise ConfigError(
                "multi_stream_expected_latency_ns must be > 0", key="multi_stream_expected_latency_ns"
            )
        target_qps = _NS_PER_S / float(s.multi_stream_expected_latency_ns)
        max_async = 1
        percentile = s.multi_stream_target_latency_percentile
    elif scenario is Scenario.SERVER:
        # A negative request is logged as an error by the official code, which keeps 1.0.
        target_qps = float(s.server_target_qps) if s.server_target_qps >= 0.0 else 1.0
        target_latency_ns = int(s.server_target_latency_ns)
        percentile = s.server_target_latency_percentile
        max_async = int(s.server_max_async_queries)
    else:
        percentile = 0.99  # unused in Offline; the official code sets it to avoid garbage
        target_qps = float(s.offline_expected_qps) if s.offline_expected_qps >= 0.0 else 1.0
        max_async = 1

    psc = s.performance_sample_count_override or qsl_perf_count
    accuracy_count = s.accuracy_sample_count_override or qsl_total
    spq = int(s.multi_stream_samples_per_query) if scenario is Scenario.MULTI_STREAM else 1
    min_query_count = int(s.min_query_count)
    target_duration_ms = int(s.min_duration_ms)
    min_duration_s = target_duration_ms / 1000.0

    if scenario is Scenario.OFFLINE:
        target_sample_count = _u64(_OFFLINE_SLACK * min_duration_s * target_qps)
        spq = psc if s.performance_issue_unique else max(min_query_count, target_sample_count)
        min_query_count = 1
        target_duration_ms = 0

    if scenario is Scenario.SINGLE_STREAM and s.sample_concatenate_permutation and qsl_perf_count > 0:
        # Equal issue: at least the queries 2x the expected rate gives, rounded up past a multiple
        # of the QSL-reported performance count (a full extra set when already a multiple).
        min_query_count = max(min_query_count, _u64(2.0 * min_duration_s * target_qps))
        min_query_count += qsl_perf_count - min_query_count % qsl_perf_count

    eff = EffectiveSettings(
        scenario=scenario,
        test_mode=mode,
        samples_per_query=spq,
        target_qps=target_qps,
        target_latency_ns=target_latency_ns,
        target_latency_percentile=percentile,
        max_async_queries=max_async,
        target_duration_ms=target_duration_ms,
        min_duration_ms=int(s.min_duration_ms),
        max_duration_ms=int(s.max_duration_ms),
        min_query_count=min_query_count,
        max_query_count=int(s.max_query_count),
        min_sample_count=min_query_count * spq,
        qsl_rng_seed=int(qsl_seed),
        sample_index_rng_seed=int(index_seed),
        schedule_rng_seed=int(schedule_seed),
        accuracy_log_rng_seed=int(s.accuracy_log_rng_seed),
        accuracy_log_probability=float(s.accuracy_log_probability),
        accuracy_log_sampling_target=int(s.accuracy_log_sampling_target),
        print_timestamps=bool(s.print_timestamps),
        performance_issue_unique=bool(s.performance_issue_unique),
        performance_issue_same=bool(s.performance_issue_same),
        performance_issue_same_index=int(s.performance_issue_same_index),
        performance_sample_count=int(psc),
        accuracy_sample_count=int(accuracy_count),
        sample_concatenate_permutation=bool(s.sample_concatenate_permutation),
        use_token_latencies=bool(s.use_token_latencies),
        server_ttft_latency=int(s.server_ttft_latency),
        server_tpot_latency=int(s.server_tpot_latency),
        infer_token_latencies=bool(s.infer_token_latencies),
        token_latency_scaling_factor=int(s.token_latency_scaling_factor),
        server_coalesce_queries=bool(s.server_coalesce_queries),
        server_num_issue_query_threads=int(s.server_num_issue_query_threads),
        server_find_peak_qps_decimals_of_precision=int(s.server_find_peak_qps_decimals_of_precision),
        server_find_peak_qps_boundary_step_size=float(s.server_find_peak_qps_boundary_step_size),
        requested=s,
    )
    guard(eff, qsl_total)
    return eff


# effective value -> the requested field it comes from (for the message), its range's name in RANGES
_GUARDED: tuple[tuple[str, str, str], ...] = (
    ("target_latency_ns", "server_target_latency_ns", "server_target_latency_ns"),
    ("min_duration_ms", "min_duration_ms", "min_duration_ms"),
    ("max_duration_ms", "max_duration_ms", "max_duration_ms"),
    ("max_query_count", "max_query_count", "max_query_count"),
    ("min_query_count", "min_query_count", "min_query_count"),
    ("min_sample_count", "min_query_count", "min_query_count"),
    ("performance_sample_count", "performance_sample_count_override", "performance_sample_count_override"),
    ("accuracy_sample_count", "accuracy_sample_count_override", "accuracy_sample_count_override"),
    ("qsl_rng_seed", "qsl_rng_seed", "qsl_rng_seed"),
    ("sample_index_rng_seed", "sample_index_rng_seed", "sample_index_rng_seed"),
    ("schedule_rng_seed", "schedule_rng_seed", "schedule_rng_seed"),
    ("accuracy_log_rng_seed", "accuracy_log_rng_seed", "accuracy_log_rng_seed"),
    ("accuracy_log_probability", "accuracy_log_probability", "accuracy_log_probability"),
    ("accuracy_log_sampling_target", "accuracy_log_sampling_target", "accuracy_log_sampling_target"),
    ("performance_issue_same_index", "performance_issue_same_index", "performance_issue_same_index"),
    ("server_ttft_latency", "server_ttft_latency", "server_ttft_latency"),
    ("server_tpot_latency", "server_tpot_latency", "server_tpot_latency"),
    ("token_latency_scaling_factor", "token_latency_scaling_factor", "token_latency_scaling_factor"),
)
_RATE_SOURCE = {
    Scenario.SINGLE_STREAM: "single_stream_expected_latency_ns",
    Scenario.MULTI_STREAM: "multi_stream_expected_latency_ns",
    Scenario.SERVER: "server_target_qps",
    Scenario.OFFLINE: "offline_expected_qps",
}


def guard(eff: EffectiveSettings, qsl_total: int) -> None:
    """The second line after check_settings (resolve.py), on the values a run computes, whatever
    built the settings: each effective value in its legal range (settings.RANGES), the index
    performance_issue_same issues inside the loaded set, and the schedule within the int64 ns clock.
    Raises SettingRangeError naming the requested field; nothing past it can overflow or index out."""
    rate_field = _RATE_SOURCE[eff.scenario]
    problem = value_problem("server_target_qps", eff.target_qps)
    if problem:
        raise SettingRangeError(f"effective target_qps {problem}", key=rate_field)
    for name, source, range_name in _GUARDED:
        problem = value_problem(range_name, getattr(eff, name))
        if problem:
            raise SettingRangeError(f"effective {name} {problem}", key=source)
    if eff.samples_per_query > MAX_COUNT or eff.samples_per_query < 1:
        source = "offline_expected_qps" if eff.scenario is Scenario.OFFLINE else "multi_stream_samples_per_query"
        raise SettingRangeError(
            f"effective samples_per_query {eff.samples_per_query} is out of range: must be >= 1 and <= {MAX_COUNT}",
            key=source,
        )
    if eff.min_sample_count > MAX_COUNT:
        raise SettingRangeError(f"effective min_sample_count {eff.min_sample_count} is past {MAX_COUNT}", key="min_query_count")
    loaded = min(int(eff.performance_sample_count), int(qsl_total))
    if eff.performance_issue_same and eff.performance_issue_same_index >= loaded:
        raise SettingRangeError(
            f"{eff.performance_issue_same_index} is not an index of the loaded set of {loaded} samples "
            f"(performance_sample_count {eff.performance_sample_count}, QSL total {qsl_total}): give 0 to "
            f"{max(loaded - 1, 0)}",
            key="performance_issue_same_index",
        )
    span_ns = _schedule_span_ns(eff, qsl_total)
    if span_ns * 4 > INT64_MAX:
        raise SettingRangeError(
            f"the schedule would span ~{span_ns / _NS_PER_S / 31_557_600:,.0f} years, past the int64 "
            f"nanosecond clock; lower min_query_count (or the QSL's count) or raise the rate",
            key=rate_field,
        )


def _schedule_span_ns(eff: EffectiveSettings, qsl_total: int) -> float:
    """About the last timestamp the schedule generates (ns): its queries at the target rate (an
    accuracy phase issues every loaded sample), or its duration (non-Server: 2 x min_duration)."""
    period_ns = _NS_PER_S / eff.target_qps
    if eff.scenario is Scenario.OFFLINE:
        return period_ns  # one query at 0; the next slot ends the schedule
    gen_ns = (1 if eff.scenario is Scenario.SERVER else 2) * eff.target_duration_ms * 1_000_000
    queries = float(eff.min_query_count)
    if eff.sample_concatenate_permutation:
        queries += eff.performance_sample_count  # equal issue pads to a whole set
    if eff.test_mode in (TestMode.ACCURACY_ONLY, TestMode.SUBMISSION_RUN):
        queries = max(queries, min(eff.accuracy_sample_count, qsl_total) / max(eff.samples_per_query, 1))
    return max(float(gen_ns), (queries + 1) * period_ns)
