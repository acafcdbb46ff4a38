"""TestSettings and LogSettings: every field of the official ones, with the same defaults.

Field names follow the official C++ `mlperf::TestSettings` (test_settings.h). The official Python
binding and the conf files spell two of them without `server_`: SHORT_NAMES is the one map of those
names, used by the conf reader, the compat layer and the official-engine adapter.
"""

from __future__ import annotations

import math
import operator

from proctor.errors import SettingRangeError
from proctor.loadgen.scenarios import Scenario, TestMode
from proctor.typed_records import field, fields_of, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import ClassVar

# field -> the name the official Python binding (python_api.cc) and conf files use for it
SHORT_NAMES: dict[str, str] = {"server_ttft_latency": "ttft_latency", "server_tpot_latency": "tpot_latency"}
FIELD_OF_SHORT_NAME: dict[str, str] = {v: k for k, v in SHORT_NAMES.items()}


def binding_name(field_name: str) -> str:
    """The official Python binding's name for a TestSettings field."""
    return SHORT_NAMES.get(field_name, field_name)


def field_name(binding: str) -> str:
    """The TestSettings field for a name of the official Python binding."""
    return FIELD_OF_SHORT_NAME.get(binding, binding)


@record(slots=True)
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
        return tuple(f.name for f in fields_of(cls))


# --- the legal values of every numeric setting (issue 30 §4) ------------------------------------------
#
# One table, read in three places: the conf reader (an error names file:line:key), check_settings
# (the option or the field that set a value) and normalize (the effective values, whatever built
# the settings). The bounds make every legal value a run finite in time and memory: rates and
# latencies fit the int64 nanosecond clock with room for the sums a schedule makes, counts stay exact
# in a double (the size of what a run generates is then bounded by the memory check in resolve.py).
# The official LoadGen takes any 64-bit value and wraps, clamps or overflows (docs/deviations.md).

NS_PER_S = 1_000_000_000
INT64_MAX = (1 << 63) - 1  # the nanosecond clock: every timestamp of a run is an int64
U64_MAX = (1 << 64) - 1  # the official settings' unsigned fields
MAX_SPAN_NS = 10**18  # ~31.7 years: the longest duration or latency bound; non-Server schedules run to
#                       2 x min_duration, and a timestamp plus a bound still fits INT64_MAX
MIN_QPS = 1e-6  # one query per ~11.6 days: the longest mean gap (x 44, the longest exponential draw, fits)
MAX_QPS = 1e9  # one query per nanosecond, the schedule's resolution
MAX_COUNT = 1 << 53  # query, sample and token counts: exact in a double, far past any machine's memory


@record(frozen=True, slots=True)
class Range:
    """A numeric setting's legal values, `low` to `high` inclusive (`low` excluded when `above`)."""

    low: float
    high: float
    unit: str  # how the values are counted, for messages
    whole: bool = False  # an integer field (an official u64/int)
    above: bool = False

    def contains(self, value: float) -> bool:
        """Whether `value` is legal; an int is compared exactly (no float rounding near 2**64)."""
        if isinstance(value, float) and not math.isfinite(value):
            return False
        return bool((value > self.low if self.above else value >= self.low) and value <= self.high)

    def text(self, scale: float = 1.0, unit: str | None = None) -> str:
        """'>= LOW and <= HIGH UNIT', in units of `scale` (a conf key's: ms for a ns field, ...)."""
        low, high = (self.low / scale, self.high / scale) if scale != 1 else (self.low, self.high)
        lo = f"> {_num(low)}" if self.above else f">= {_num(low)}"
        unit = self.unit if unit is None else unit
        return f"{lo} and <= {_num(high)}" + (f" {unit}" if unit else "")


def _num(x: float) -> str:
    """Exact for the 64-bit limits (a seed's 18446744073709551615), short for the rest (1e+09)."""
    if isinstance(x, int) and x >= 1 << 53 and x % 1000:
        return str(x)
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e7 else f"{x:g}"


_RATE = Range(MIN_QPS, MAX_QPS, "queries per second")
_EXPECTED_LATENCY = Range(NS_PER_S / MAX_QPS, NS_PER_S / MIN_QPS, "ns")  # the rates' reciprocals
_BOUND_NS = Range(0, MAX_SPAN_NS, "ns", whole=True)
_DURATION_MS = Range(0, MAX_SPAN_NS // 1_000_000, "ms", whole=True)
_PERCENTILE = Range(0.0, 1.0, "(a fraction of the queries)", above=True)
_COUNT = Range(0, MAX_COUNT, "", whole=True)
_SEED = Range(0, U64_MAX, "(a 64-bit unsigned seed)", whole=True)

# TestSettings field -> its legal values. Every numeric field is here (a test checks it); bool and
# enum fields are checked by type (BOOL_FIELDS, and Scenario/TestMode themselves).
RANGES: dict[str, Range] = {
    "single_stream_expected_latency_ns": _EXPECTED_LATENCY,
    "single_stream_target_latency_percentile": _PERCENTILE,
    "multi_stream_expected_latency_ns": _EXPECTED_LATENCY,
    "multi_stream_target_latency_percentile": _PERCENTILE,
    "multi_stream_samples_per_query": Range(1, MAX_COUNT, "", whole=True),
    "server_target_qps": _RATE,
    "server_target_latency_ns": _BOUND_NS,
    "server_target_latency_percentile": _PERCENTILE,
    # the search ends when floor(x * 10^p) meet: past 15 decimals a double holds no more digits, and
    # below -9 (tens of ... 1e9 QPS) every legal rate is one step
    "server_find_peak_qps_decimals_of_precision": Range(-9, 15, "decimals", whole=True),
    "server_find_peak_qps_boundary_step_size": Range(0.0, 1e3, "(upper = lower x (1 + step))", above=True),
    "server_max_async_queries": _COUNT,
    "server_num_issue_query_threads": _COUNT,
    "offline_expected_qps": _RATE,
    "min_duration_ms": _DURATION_MS,
    "max_duration_ms": _DURATION_MS,
    "min_query_count": _COUNT,
    "max_query_count": _COUNT,
    "qsl_rng_seed": _SEED,
    "sample_index_rng_seed": _SEED,
    "schedule_rng_seed": _SEED,
    "accuracy_log_rng_seed": _SEED,
    "accuracy_log_probability": Range(0.0, 1.0, "(a fraction)"),
    "accuracy_log_sampling_target": _COUNT,
    "test05_qsl_rng_seed": _SEED,
    "test05_sample_index_rng_seed": _SEED,
    "test05_schedule_rng_seed": _SEED,
    # an index into the loaded set: also < the set's size, checked where the QSL is known (normalize)
    "performance_issue_same_index": Range(0, U64_MAX, "", whole=True),
    "performance_sample_count_override": _COUNT,
    "accuracy_sample_count_override": _COUNT,
    "server_ttft_latency": _BOUND_NS,
    "server_tpot_latency": _BOUND_NS,
    "token_latency_scaling_factor": _COUNT,
}
BOOL_FIELDS = (
    "server_coalesce_queries", "sample_concatenate_permutation", "test05", "print_timestamps",
    "performance_issue_unique", "performance_issue_same", "use_token_latencies", "infer_token_latencies",
)
# run_test's own numbers (not TestSettings fields): `--timeout-s`, `--drain-s`
RUN_ARGUMENT_RANGES: dict[str, Range] = {
    "timeout_s": Range(0.0, MAX_SPAN_NS / NS_PER_S, "s", above=True),
    "drain_s": Range(0.0, MAX_SPAN_NS / NS_PER_S, "s"),
}


def value_problem(
    name: str, value: object, *, scale: float = 1.0, shown: str | None = None, unit: str | None = None
) -> str:
    """Why `value` cannot be setting `name` ("" when it can): a wrong type, NaN, inf or out of range.

    `scale`, `shown` and `unit` give the message in the units the value was written in (a conf key
    in ms for a ns field, a percentile in percent)."""
    if name in BOOL_FIELDS:
        if isinstance(value, bool) or (type(value) is int and value in (0, 1)):
            return ""
        return f"must be true or false (or 1 or 0), got {_short(repr(value))}"
    rng = RANGES.get(name) or RUN_ARGUMENT_RANGES.get(name)
    if rng is None:
        return ""
    text = shown if shown is not None else _short(repr(value))
    if isinstance(value, bool | str | bytes) or value is None:
        return f"must be a number, got {_short(repr(value))}"
    number: float
    if rng.whole:
        if hasattr(value, "__index__"):  # int, numpy integers (what `typing.SupportsIndex` checks)
            number = operator.index(value)
        elif isinstance(value, float) and value.is_integer():  # min_duration_ms=2000.0 is taken
            number = int(value)
        else:
            return f"must be a whole number, got {text}"
    else:
        if not (hasattr(value, "__float__") or hasattr(value, "__index__")):
            return f"must be a number, got {text}"
        try:
            number = float(value)  # type: ignore[arg-type]  # it has __float__ or __index__ (above)
        except (TypeError, ValueError, OverflowError):
            return f"must be a number, got {text}"
        if not math.isfinite(number):
            return f"must be a finite number, got {text}"
    if not rng.contains(number):
        return f"{text} is out of range: must be {rng.text(scale, unit)}"
    return ""


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def check_field(name: str, value: object) -> None:
    """Raise SettingRangeError (a ConfigError and a ValueError) naming `name` when `value` cannot be it."""
    problem = value_problem(name, value)
    if problem:
        raise SettingRangeError(problem, key=name)


@record(slots=True)
class LogOutputSettings:
    outdir: str = "."
    prefix: str = "mlperf_log_"
    suffix: str = ""
    prefix_with_datetime: bool = False
    copy_detail_to_stdout: bool = False
    copy_summary_to_stdout: bool = False


@record(slots=True)
class LogSettings:
    log_output: LogOutputSettings = field(default_factory=LogOutputSettings)
    log_mode: str = "AsyncPoll"
    log_mode_async_poll_interval_ms: int = 1000
    enable_trace: bool = True


@record(slots=True)
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
