"""Each submission round proctor checks, as data: its benchmark table, seeds and the conventions of
its official checker that the rules leave open (which LoadGen key a result's metric is read from).

A published result is checked against the round it was submitted to: v4.1 has GPT-J and a
datacenter BERT, v5.0 adds Llama3.1-405B and R-GAT, v5.1 drops GPT-J and adds Llama3.1-8B,
DeepSeek-R1, Whisper and PointPainting, v6.0 adds GPT-OSS-120B, Qwen3-VL, DLRMv3, WAN-2.2 and YOLO.
The current round's table is `inference.BENCHMARKS` (the rules text); older tables live one module
per round (`inference_v4_1`, ..., `inference_v6_0`) and every row there cites the official file and
tag it was read from. Modules load on first use, so a command that
checks the current round never imports the older tables.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache

from proctor.rules.inference import (
    BENCHMARKS,
    Benchmark,
    BenchmarkTable,
    Category,
    LatencyLimit,
    QualityLevel,
    QualityTarget,
    Variant,
)
from proctor.rules.rounds import CURRENT_ROUND, ROUNDS, SEEDS, unknown_round

OFFICIAL_REPO = "mlcommons/inference"
RULES_FAQ_METRIC = "Inference rules §FAQ ('Which one is reported as the final metric? Scheduled samples per second')"


def official(tag: str, path: str, what: str = "") -> str:
    """A `source` string naming the official file and tag a row was read from."""
    return f"{OFFICIAL_REPO} {tag}:{path}" + (f" {what}" if what else "")


@dataclass(frozen=True, slots=True)
class ResultField:
    """Where a result's metric is read from: the detail-log key, its name and its units."""

    key: str
    name: str
    units: str


SCHEDULED = ResultField("result_scheduled_samples_per_sec", "scheduled samples per second", "samples/s")
COMPLETED = ResultField("result_completed_samples_per_sec", "completed samples per second", "samples/s")
TOKENS = ResultField("result_tokens_per_second", "tokens per second", "tokens/s")
COMPLETED_TOKENS = ResultField("result_completed_tokens_per_second", "completed tokens per second", "tokens/s")
INFERRED_TOKENS = ResultField("result_inferred_tokens_per_second", "inferred tokens per second", "tokens/s")
INFERRED_COMPLETED_TOKENS = ResultField(
    "result_inferred_completed_tokens_per_second", "inferred completed tokens per second", "tokens/s"
)


@dataclass(frozen=True, slots=True)
class AccuracyArtifacts:
    """Files a benchmark's `accuracy/` folder holds beside the logs for reviewers to look at (SDXL's
    generated images, WAN's videos): the round's official REQUIRED_ACC_BENCHMARK entry.

    The official compares names up to their first "." (`f.split(".")[0]`), so `2747.png` and
    `2747.jpeg` both count; a missing `captions` file is named in its message but does not fail the
    check. Its switch --skip-extra-accuracy-files-check skips the whole check."""

    folder: str  # under accuracy/: "images", "videos"
    stems: tuple[str, ...]  # the required names, up to their first "."
    suffix: str  # the extension the official names a missing file with: ".png", ".mp4"
    # False: the round's checker keeps an open result whose accuracy check failed (v4.1-v5.1
    # "accuracy not valid but taken for open"); the HEAD checker (v6.x) fails it in every division
    required_in_open: bool
    source: str
    captions: str = "captions"  # the stem of the captions file (captions.txt)


# The current round's (v6.1) entries; older rounds carry theirs in their own module.
WAN_V61_VIDEOS = AccuracyArtifacts(
    folder="videos",
    stems=("130", "106", "84", "59", "12", "123", "43", "22", "238", "32"),
    suffix=".mp4",
    required_in_open=True,
    source=official(
        "HEAD", "tools/submission/submission_checker/constants.py", 'REQUIRED_ACC_BENCHMARK["wan-2.2-t2v-a14b"]["v6.1"]'
    ),
)


@dataclass(frozen=True, slots=True)
class InferenceRound:
    """One round: its benchmarks, seeds, and the metric conventions its official checker follows."""

    name: str
    benchmarks: tuple[Benchmark, ...]
    seeds: tuple[int, int, int]
    # The Server (and Interactive) metric of a benchmark without token latencies.
    server_field: ResultField
    # Per benchmark name: the metric field of a scenario where it is not the default.
    result_fields: Mapping[str, Mapping[Category, ResultField]] = field(default_factory=dict)
    # Per official benchmark name (as the round's checker lists them): the audits it requires;
    # None: the current lists (audits/configs.py REQUIRED_AUDITS).
    audits: Mapping[str, tuple[str, ...]] | None = None
    # The seeds a TEST05 audit runs with (v4.1 and earlier; later rounds have no TEST05).
    test05_seeds: tuple[int, int, int] | None = None
    # Per benchmark name: what its accuracy folder must hold beside the logs (none: nothing).
    accuracy_artifacts: Mapping[str, AccuracyArtifacts] = field(default_factory=dict)
    source: str = ""
    table: BenchmarkTable = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "table", BenchmarkTable(self.benchmarks))

    def result_field(self, benchmark: Benchmark, category: Category) -> ResultField | None:
        """The round's own metric field for this benchmark and scenario; None: the rules' default."""
        own = self.result_fields.get(benchmark.name, {}).get(category)
        if own is not None:
            return own
        if category in (Category.SERVER, Category.INTERACTIVE) and not benchmark.is_llm:
            return self.server_field
        return None


# The module holding each older round's table; the current round uses inference.BENCHMARKS.
_MODULES = {
    "v4.1": "inference_v4_1",
    "v5.0": "inference_v5_0",
    "v5.1": "inference_v5_1",
    "v6.0": "inference_v6_0",
}


@cache
def round_table(version: str = CURRENT_ROUND) -> InferenceRound:
    """The round `version` (e.g. "v5.1"); ValueError naming the known rounds for any other."""
    if version not in ROUNDS:
        raise ValueError(unknown_round(version))
    module = _MODULES.get(version)
    if module is None:
        return InferenceRound(
            name=version,
            benchmarks=BENCHMARKS,
            seeds=SEEDS[version],
            server_field=SCHEDULED,
            accuracy_artifacts={"wan-2.2-t2v-a14b": WAN_V61_VIDEOS},
            source=f"Inference rules (current text); seeds: the {version} mlperf.conf",
        )
    found: InferenceRound = importlib.import_module(f"proctor.rules.{module}").ROUND
    return found


def resolve(name: str, version: str = CURRENT_ROUND) -> Variant:
    """`name` in the benchmark table of round `version`; KeyError when that round has no such benchmark."""
    return round_table(version).table.resolve(name)


# Small builders for the older tables (the rows stay readable as data).
def ms(value: float) -> int:
    return round(value * 1_000_000)


def latency(value_ms: float, source: str) -> LatencyLimit:
    return LatencyLimit(latency_ns=ms(value_ms), source=source)


def tokens(ttft_ms: float, tpot_ms: float, source: str) -> LatencyLimit:
    return LatencyLimit(ttft_ns=ms(ttft_ms), tpot_ns=ms(tpot_ms), source=source)


def level(fraction: float, precision: str, *targets: QualityTarget) -> QualityLevel:
    return QualityLevel(fraction, precision, targets)


def two_levels(precision: str, *targets: QualityTarget) -> tuple[QualityLevel, ...]:
    """The 99 % and 99.9 % levels of a benchmark whose two names bound the same metrics."""
    return (level(0.99, precision, *targets), level(0.999, precision, *targets))


def target(
    metric: str,
    reference: float | None,
    unit: str = "",
    *,
    threshold: float | None = None,
    upper: float | None = None,
    higher_is_better: bool = True,
) -> QualityTarget:
    return QualityTarget(
        metric, reference, unit, threshold=threshold, higher_is_better=higher_is_better, upper=upper
    )


__all__ = [
    "COMPLETED",
    "AccuracyArtifacts",
    "COMPLETED_TOKENS",
    "INFERRED_COMPLETED_TOKENS",
    "INFERRED_TOKENS",
    "SCHEDULED",
    "TOKENS",
    "InferenceRound",
    "ResultField",
    "latency",
    "level",
    "official",
    "resolve",
    "round_table",
    "target",
    "tokens",
    "two_levels",
]
