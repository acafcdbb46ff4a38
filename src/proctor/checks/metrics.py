"""The metric the rules name for a result, read from its detail log, in the summary's units.

§Scenarios table and FAQ: SingleStream / MultiStream report the 90th / 99th percentile
early-stopping latency estimate (PointPainting: its 99.9th), Server "Scheduled samples per second",
Offline measured samples per second; benchmarks with TTFT/TPOT limits report tokens per second.
An inferred edge result carries the value of the rules' formula instead.
"""

from __future__ import annotations

from proctor.checks.inferred import infer
from proctor.rules.inference import Benchmark, Category
from proctor.typed_records import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from proctor.rules.inference_rounds import ResultField

NS_PER_MS = 1_000_000


@record(frozen=True, slots=True)
class Metric:
    name: str
    value: float | None
    units: str


def _number(value: Any, divisor: float = 1.0) -> float | None:
    if value is None:
        return None
    try:
        return float(value) / divisor
    except (TypeError, ValueError):
        return None


def result_metric(
    benchmark: Benchmark,
    category: Category,
    values: dict[str, Any],
    inferred_from: Category | None = None,
    field: ResultField | None = None,
) -> Metric:
    """The rules' metric, or `field` where the round's official checker reads another key (an older
    round's completed samples per second, GPT-J's inferred tokens per second).

    Raises KeyError / ValueError when an inferred result lacks what its formula needs."""
    if inferred_from is not None:
        res = infer(category, inferred_from, values)
        return Metric(f"inferred: {res.formula}", res.value, res.units)
    if field is not None:
        divisor = NS_PER_MS if field.units == "ms" and field.key.endswith("_ns") else 1.0
        return Metric(field.name, _number(values.get(field.key), divisor), field.units)
    if category in (Category.SINGLE_STREAM, Category.MULTI_STREAM):
        default = 0.9 if category is Category.SINGLE_STREAM else 0.99
        pct = float(values.get("effective_target_latency_percentile", default)) * 100
        key = (
            "early_stopping_latency_ss" if category is Category.SINGLE_STREAM else "early_stopping_latency_ms"
        )
        return Metric(
            f"{pct:g}th percentile early-stopping latency", _number(values.get(key), NS_PER_MS), "ms"
        )
    if category in (Category.SERVER, Category.INTERACTIVE):
        if benchmark.is_llm:
            return Metric(
                "completed tokens per second",
                _number(values.get("result_completed_tokens_per_second")),
                "tokens/s",
            )
        return Metric(
            "scheduled samples per second",
            _number(values.get("result_scheduled_samples_per_sec")),
            "samples/s",
        )
    if benchmark.is_llm:
        return Metric("tokens per second", _number(values.get("result_tokens_per_second")), "tokens/s")
    return Metric("samples per second", _number(values.get("result_samples_per_second")), "samples/s")
