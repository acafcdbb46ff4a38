"""Edge results inferred from another scenario's run, by the rules' three formulas.

The rules (§Benchmarks, after the edge required-scenarios table): a MultiStream result inferred from
SingleStream is 8 x the SingleStream 99th-percentile latency reported by LoadGen; an Offline result is
8000 / the MultiStream mean latency in ms, or 1000 / the SingleStream mean latency in ms. The 99th
percentile LoadGen reports for a SingleStream run is its early-stopping estimate
(`early_stopping_latency_ms`), as the MultiStream metric itself is (§Scenarios table: "99%-ile
early-stopping latency estimate"); the official checkers of every round read that key too. The inferred result's
accuracy is the base result's, and the submission holds a copy of the base result's directories
under the inferred scenario's name. Only edge systems may infer.
"""

from __future__ import annotations

from proctor.rules.inference import (
    INFERRED_MS_FACTOR,
    INFERRED_OFFLINE_FROM_MS_NUMERATOR,
    INFERRED_OFFLINE_FROM_SS_NUMERATOR,
    RULES,
    Category,
)
from proctor.typed_records import record

SOURCE = f"{RULES} §Benchmarks, inferred results (edge)"
NS_PER_MS = 1_000_000

# (inferred scenario, base scenario) pairs the rules allow.
ALLOWED: frozenset[tuple[Category, Category]] = frozenset(
    {
        (Category.MULTI_STREAM, Category.SINGLE_STREAM),
        (Category.OFFLINE, Category.MULTI_STREAM),
        (Category.OFFLINE, Category.SINGLE_STREAM),
    }
)


def multistream_from_singlestream_ms(ss_p99_latency_ms: float) -> float:
    """MultiStream latency (ms) = 8 x SingleStream p99 latency (ms): 25 ms -> 200 ms."""
    return INFERRED_MS_FACTOR * ss_p99_latency_ms


def offline_from_multistream(ms_mean_latency_ms: float) -> float:
    """Offline samples/s = 8000 / MultiStream mean latency (ms): 200 ms -> 40/s."""
    if ms_mean_latency_ms <= 0:
        raise ValueError("the MultiStream mean latency must be positive")
    return INFERRED_OFFLINE_FROM_MS_NUMERATOR / ms_mean_latency_ms


def offline_from_singlestream(ss_mean_latency_ms: float) -> float:
    """Offline samples/s = 1000 / SingleStream mean latency (ms): 25 ms -> 40/s."""
    if ss_mean_latency_ms <= 0:
        raise ValueError("the SingleStream mean latency must be positive")
    return INFERRED_OFFLINE_FROM_SS_NUMERATOR / ss_mean_latency_ms


@record(frozen=True, slots=True)
class InferredResult:
    scenario: Category
    base: Category
    value: float
    units: str
    formula: str


def infer(target: Category, base: Category, values: dict[str, object]) -> InferredResult:
    """Compute an inferred metric from the base run's detail-log values (latencies in ns).

    Raises ValueError for a pair the rules do not allow, KeyError when a needed key is missing.
    """
    if (target, base) not in ALLOWED:
        raise ValueError(f"the rules do not allow inferring {target} from {base}")
    if target is Category.MULTI_STREAM:
        p99 = float(values["early_stopping_latency_ms"]) / NS_PER_MS  # type: ignore[arg-type]
        if p99 <= 0:  # LoadGen logs 0 when too few queries ran for the estimate
            raise ValueError("the SingleStream run had too few queries for its 99th percentile early-stopping estimate")
        return InferredResult(
            target,
            base,
            multistream_from_singlestream_ms(p99),
            "ms",
            "8 x SingleStream 99th percentile early-stopping latency estimate",
        )
    if base is Category.MULTI_STREAM:
        mean = float(values["result_mean_query_latency_ns"]) / NS_PER_MS  # type: ignore[arg-type]
        return InferredResult(
            target, base, offline_from_multistream(mean), "samples/s", "8000 / MultiStream mean latency (ms)"
        )
    mean = float(values["result_mean_latency_ns"]) / NS_PER_MS  # type: ignore[arg-type]
    return InferredResult(
        target, base, offline_from_singlestream(mean), "samples/s", "1000 / SingleStream mean latency (ms)"
    )
