"""TestSettings and LogSettings: every field of the official ones, with the same defaults.

Field names follow the official C++ `mlperf::TestSettings` (test_settings.h). The official Python
binding and the conf files spell two of them without `server_`: SHORT_NAMES is the one map of those
names, used by the conf reader, the compat layer and the official-engine adapter.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import ClassVar

from proctor.loadgen.types import Scenario, TestMode

# field -> the name the official Python binding (python_api.cc) and conf files use for it
SHORT_NAMES: dict[str, str] = {"server_ttft_latency": "ttft_latency", "server_tpot_latency": "tpot_latency"}
FIELD_OF_SHORT_NAME: dict[str, str] = {v: k for k, v in SHORT_NAMES.items()}


def binding_name(field_name: str) -> str:
    """The official Python binding's name for a TestSettings field."""
    return SHORT_NAMES.get(field_name, field_name)


def field_name(binding: str) -> str:
    """The TestSettings field for a name of the official Python binding."""
    return FIELD_OF_SHORT_NAME.get(binding, binding)


@dataclass(slots=True)
class TestSettings:
    scenario: Scenario = Scenario.SINGLE_STREAM
    mode: TestMode = TestMode.PERFORMANCE_ONLY
    single_stream_expected_latency_ns: float = 1_000_000.0
    single_stream_target_latency_percentile: float = 0.90
    multi_stream_expected_latency_ns: float = 8_000_000.0
    multi_stream_target_latency_percentile: float = 0.99
    multi_stream_samples_per_query: int = 8
    server_target_qps: float = 1.0
    server_target_latency_ns: int = 100_000_000
    server_target_latency_percentile: float = 0.99
    server_coalesce_queries: bool = False
    server_find_peak_qps_decimals_of_precision: int = 1
    server_find_peak_qps_boundary_step_size: float = 1.0
    server_max_async_queries: int = 0
    server_num_issue_query_threads: int = 0
    offline_expected_qps: float = 1.0
    sample_concatenate_permutation: bool = False
    min_duration_ms: int = 10_000
    max_duration_ms: int = 0
    min_query_count: int = 100
    max_query_count: int = 0
    qsl_rng_seed: int = 0
    sample_index_rng_seed: int = 0
    schedule_rng_seed: int = 0
    accuracy_log_rng_seed: int = 0
    accuracy_log_probability: float = 0.0
    accuracy_log_sampling_target: int = 0
    test05: bool = False
    test05_qsl_rng_seed: int = 0
    test05_sample_index_rng_seed: int = 0
    test05_schedule_rng_seed: int = 0
    print_timestamps: bool = False
    performance_issue_unique: bool = False
    performance_issue_same: bool = False
    performance_issue_same_index: int = 0
    performance_sample_count_override: int = 0
    accuracy_sample_count_override: int = 0
    use_token_latencies: bool = False
    server_ttft_latency: int = 100_000_000
    server_tpot_latency: int = 100_000_000
    infer_token_latencies: bool = False
    token_latency_scaling_factor: int = 0

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))


@dataclass(slots=True)
class LogOutputSettings:
    outdir: str = "."
    prefix: str = "mlperf_log_"
    suffix: str = ""
    prefix_with_datetime: bool = False
    copy_detail_to_stdout: bool = False
    copy_summary_to_stdout: bool = False


@dataclass(slots=True)
class LogSettings:
    log_output: LogOutputSettings = field(default_factory=LogOutputSettings)
    log_mode: str = "AsyncPoll"
    log_mode_async_poll_interval_ms: int = 1000
    enable_trace: bool = True


@dataclass(slots=True)
class EffectiveSettings:
    """The normalized settings a run actually uses (official TestSettingsInternal).

    Produced by `proctor.loadgen.normalize.normalize`; the fields that the official detail log
    prints as `effective_<name>` keep that name here. Like the official struct's `requested`
    member, `requested` keeps the settings these were derived from (after audit.config and test05).
    """

    scenario: Scenario
    test_mode: TestMode
    samples_per_query: int
    target_qps: float
    target_latency_ns: int
    target_latency_percentile: float
    max_async_queries: int
    target_duration_ms: int
    min_duration_ms: int
    max_duration_ms: int
    min_query_count: int
    max_query_count: int
    min_sample_count: int
    qsl_rng_seed: int
    sample_index_rng_seed: int
    schedule_rng_seed: int
    accuracy_log_rng_seed: int
    accuracy_log_probability: float
    accuracy_log_sampling_target: int
    print_timestamps: bool
    performance_issue_unique: bool
    performance_issue_same: bool
    performance_issue_same_index: int
    performance_sample_count: int
    # Not printed as effective_* by the official LoadGen, but part of its internal settings.
    accuracy_sample_count: int = 0
    sample_concatenate_permutation: bool = False
    use_token_latencies: bool = False
    server_ttft_latency: int = 100_000_000
    server_tpot_latency: int = 100_000_000
    infer_token_latencies: bool = False
    token_latency_scaling_factor: int = 0
    server_coalesce_queries: bool = False
    server_num_issue_query_threads: int = 0
    server_find_peak_qps_decimals_of_precision: int = 1
    server_find_peak_qps_boundary_step_size: float = 1.0
    requested: TestSettings | None = None

    # The official detail log prints these, in this order, as effective_<name>.
    LOGGED: ClassVar[tuple[str, ...]] = (
        "scenario", "test_mode", "samples_per_query", "target_qps", "target_latency_ns",
        "target_latency_percentile", "max_async_queries", "target_duration_ms", "min_duration_ms",
        "max_duration_ms", "min_query_count", "max_query_count", "min_sample_count", "qsl_rng_seed",
        "sample_index_rng_seed", "schedule_rng_seed", "accuracy_log_rng_seed",
        "accuracy_log_probability", "accuracy_log_sampling_target", "print_timestamps",
        "performance_issue_unique", "performance_issue_same", "performance_issue_same_index",
        "performance_sample_count",
    )
