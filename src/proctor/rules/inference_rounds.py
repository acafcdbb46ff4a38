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

import sys
from collections.abc import Iterable, Mapping
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
from proctor.rules.rounds import CURRENT_ROUND, ROUNDS, SEEDS, Layout, unknown_round
from proctor.typed_records import field, record

OFFICIAL_REPO = "mlcommons/inference"
RULES_FAQ_METRIC = "Inference rules §FAQ ('Which one is reported as the final metric? Scheduled samples per second')"


def official(tag: str, path: str, what: str = "") -> str:
    """A `source` string naming the official file and tag a row was read from."""
    return f"{OFFICIAL_REPO} {tag}:{path}" + (f" {what}" if what else "")


@record(frozen=True, slots=True)
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


@record(frozen=True, slots=True)
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

# The current round's (v6.1) audit lists: the official checker's `models_TEST0x` lists (HEAD
# tools/submission/submission_checker/constants.py, v6.1), by official benchmark name as older rounds
# state theirs. `proctor audit all` and the checker both read them through `round_table().audits`;
# TEST07/08/09 are audits proctor checks for but does not run.
AUDITS_V61: Mapping[str, tuple[str, ...]] = {
    "resnet": ("TEST01", "TEST04"),
    "bert-99": ("TEST01",),
    "bert-99.9": ("TEST01",),
    "3d-unet-99": ("TEST01",),
    "3d-unet-99.9": ("TEST01",),
    "stable-diffusion-xl": ("TEST01", "TEST04"),
    "rgat": ("TEST01",),
    "whisper": ("TEST01",),
    "yolo-99": ("TEST01",),
    "yolo-95": ("TEST01",),
    "wan-2.2-t2v-a14b": ("TEST04",),
    "llama2-70b-99.9": ("TEST06",),
    "llama2-70b-interactive-99": ("TEST06",),
    "llama2-70b-interactive-99.9": ("TEST06",),
    "llama3.1-8b": ("TEST06",),
    "llama3.1-8b-interactive": ("TEST06",),
    "deepseek-r1": ("TEST06",),
    "gpt-oss-120b": ("TEST07", "TEST09"),
    "e2e-rag-qna": ("TEST09",),
    "dlrm-v3": ("TEST08",),
}
AUDITS_V61_SOURCE = official("HEAD", "tools/submission/submission_checker/constants.py", "v6.1 models_TEST0x")


# TEST01's fallback (the performance-mode accuracy against the accuracy run's, when the logged
# responses differ): the largest relative difference, in percent, per official model and target
# metric; any other: 0.1 for a 99.9 % model, else 1. The same in every round's checker (tags v4.1,
# v5.0.1, v5.1.1 submission_checker.py and HEAD constants.py, MODEL_CONFIG[...]["accuracy-delta-perc"]).
TEST01_DELTA_PERC: Mapping[str, Mapping[str, float]] = {"stable-diffusion-xl": {"clip_score": 1.0, "fid_score": 2.0}}
TEST01_DELTA_SOURCE = official(
    "v5.1.1", "tools/submission/submission_checker.py", "check_compliance_acc_dir; get_delta_perc"
)


def delta_perc_of_test01(model: str, metric: str, high_accuracy: bool) -> float:
    """The TEST01 fallback's bound for one metric of `model` (its official name)."""
    own = TEST01_DELTA_PERC.get(model, {}).get(metric.lower())
    if own is not None:
        return own
    return 0.1 if high_accuracy else 1.0


@record(frozen=True, slots=True)
class FolderName:
    """What a benchmark folder's name stands for where the round's official checker does not list it
    as one of its model names (`get_mlperf_model`): the official model name it is taken as, and
    whether the name spells the reference model (False: another model, e.g. MobileNet taken as a
    ResNet50-class result, which only the open division may run; rules §Closed Division)."""

    model: str
    reference: bool


@record(frozen=True, slots=True)
class FolderGuess:
    """One step of the official checker's backwards-compatibility guess, in its order: a folder name
    containing `contains` is taken as `name.model`, which the round's mapping then maps again."""

    contains: str
    name: FolderName


@record(frozen=True, slots=True)
class FolderNames:
    """How the round's official checker maps a benchmark folder's name it does not list: (a) the
    round's model_mapping table (exact names), (b) the submitter's model_mapping.json (open division
    only), (c) the guess (a substring of the name), then the round's table again."""

    mapping: Mapping[str, FolderName]
    guesses: tuple[FolderGuess, ...]
    source: str


@record(frozen=True, slots=True)
class FolderBenchmark:
    """A benchmark folder's benchmark: its variant, and how its name was mapped (None: the table
    names it directly)."""

    variant: Variant
    official: str  # the model name the round's official checker gives the folder (resnet50 -> resnet)
    via: str | None = None
    reference: bool = True  # False: the name declares a model other than the reference


_RESNET, _OTHER_RESNET = FolderName("resnet", True), FolderName("resnet", False)


def folder_names(mapping: Mapping[str, FolderName], source: str, *extra_guesses: FolderGuess) -> FolderNames:
    """A round's FolderNames: its mapping, and the guess every checker from v4.1 on makes (the
    `"mobilenet" in model or "efficientnet" in model or "resnet50" in model` test, then bert-99.9,
    then bert-99), with `extra_guesses` after them (HEAD's llama3_1-405b)."""
    guesses = (
        FolderGuess("mobilenet", _OTHER_RESNET),
        FolderGuess("efficientnet", _OTHER_RESNET),
        FolderGuess("resnet50", _RESNET),
        FolderGuess("bert-99.9", FolderName("bert-99.9", True)),
        FolderGuess("bert-99", FolderName("bert-99", True)),
        *extra_guesses,
    )
    return FolderNames(mapping=mapping, guesses=guesses, source=source)


# MODEL_CONFIG[round]["model_mapping"] of v4.1 (tag v4.1); later rounds add to it.
MAPPING_V41: Mapping[str, FolderName] = {
    "ssd-resnet34": FolderName("retinanet", False),  # SSD-ResNet34 is the retired detector, not RetinaNet
    "mobilenet": _OTHER_RESNET,
    "resnet50": _RESNET,
}
MAPPING_V50: Mapping[str, FolderName] = {**MAPPING_V41, "llama3_1-405b": FolderName("llama3.1-405b", True)}
MAPPING_V51: Mapping[str, FolderName] = {
    **MAPPING_V50,
    "llama3_1-8b": FolderName("llama3.1-8b", True),
    "llama3_1-8b-edge": FolderName("llama3.1-8b-edge", True),
}
# HEAD's checker (v6.0 and v6.1): the v5.1 mapping, and one more guess
FOLDER_NAMES_HEAD = folder_names(
    MAPPING_V51,
    official(
        "HEAD",
        "tools/submission/submission_checker/configuration/configuration.py",
        'get_mlperf_model; constants.py MODEL_CONFIG["v6.0"|"v6.1"]["model_mapping"]',
    ),
    FolderGuess("llama3_1-405b", FolderName("llama3.1-405b", True)),
)


@record(frozen=True, slots=True)
class EqualIssue:
    """The models (official names) whose performance runs the round's official checker requires in
    equal issue mode (the detail log's effective_sample_concatenate_permutation true, as the round's
    mlperf.conf sets sample_concatenate_permutation); `closed_only`: it checks closed and network
    results only."""

    models: frozenset[str]
    closed_only: bool
    source: str


@record(frozen=True, slots=True)
class InferenceRound:
    """One round: its benchmarks, seeds, and the metric conventions its official checker follows."""

    name: str
    benchmarks: tuple[Benchmark, ...]
    seeds: tuple[int, int, int]
    # The Server (and Interactive) metric of a benchmark without token latencies.
    server_field: ResultField
    # Where its submission tree keeps the implementation, audits and measurements.
    layout: Layout
    # Per benchmark name: the metric field of a scenario where it is not the default.
    result_fields: Mapping[str, Mapping[Category, ResultField]] = field(default_factory=dict)
    # Per official benchmark name (as the round's checker lists them): the audits it requires.
    audits: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # The seeds a TEST05 audit runs with (v4.1 and earlier; later rounds have no TEST05).
    test05_seeds: tuple[int, int, int] | None = None
    # Per benchmark name: what its accuracy folder must hold beside the logs (none: nothing).
    accuracy_artifacts: Mapping[str, AccuracyArtifacts] = field(default_factory=dict)
    # How the round's official checker maps a folder name it does not list (None: HEAD's)
    folder_names: FolderNames | None = None
    # None: the round's checker requires no equal issue mode (v4.1 computes it and never fails on it;
    # HEAD's check for v6.x names v4.1 only)
    equal_issue: EqualIssue | None = None
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

    def audits_of(self, names: Iterable[str]) -> tuple[str, ...]:
        """The audits the round's checker requires of a result its folder and variant give these
        official names for: the first name (sorted) the round's lists hold; () for none."""
        return next((self.audits[n] for n in sorted(names) if n in self.audits), ())

    def folder_benchmark(
        self, folder: str, submitter_mapping: Mapping[str, str] | None = None
    ) -> FolderBenchmark:
        """The benchmark a results/<system>/<folder> holds, found as the round's official checker
        finds it: the table's own names first, then the round's mapping, then `submitter_mapping`
        (the open division's model_mapping.json), then the guess and the mapping again.

        Raises KeyError naming the folder when none of them gives a benchmark of this round."""
        names = self.folder_names or FOLDER_NAMES_HEAD
        try:
            variant = self.table.resolve(folder)
        except KeyError as exc:
            unknown = exc
        else:
            own = names.mapping.get(folder)
            return FolderBenchmark(variant, own.model if own is not None else folder)
        own = names.mapping.get(folder)
        if own is not None:
            return self._mapped(own.model, f"the {self.name} model_mapping table", own.reference, unknown)
        theirs = submitter_mapping.get(folder) if submitter_mapping is not None else None
        if isinstance(theirs, str) and theirs:  # the official skips an empty value
            return self._mapped(theirs, "model_mapping.json", True, unknown)
        guess = next((g for g in names.guesses if g.contains in folder), None)
        if guess is None:
            raise unknown
        again = names.mapping.get(guess.name.model)
        model = again.model if again is not None else guess.name.model
        how = f"the {self.name} checker's guess ('{guess.contains}' in the name)"
        return self._mapped(model, how, guess.name.reference and (again is None or again.reference), unknown)

    def _mapped(self, model: str, how: str, reference: bool, unknown: KeyError) -> FolderBenchmark:
        try:
            variant = self.table.resolve(model)
        except KeyError:
            raise unknown from None
        return FolderBenchmark(variant, model, f"{model!r} by {how}", reference)


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
            layout=Layout.RESULTS,
            audits=AUDITS_V61,
            accuracy_artifacts={"wan-2.2-t2v-a14b": WAN_V61_VIDEOS},
            source=f"Inference rules (current text); seeds: the {version} mlperf.conf",
        )
    name = f"proctor.rules.{module}"
    __import__(name)  # not importlib.import_module: importlib's own module is not loaded on a check's path
    found: InferenceRound = sys.modules[name].ROUND
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
    "AUDITS_V61",
    "AUDITS_V61_SOURCE",
    "COMPLETED",
    "FOLDER_NAMES_HEAD",
    "FolderBenchmark",
    "FolderGuess",
    "FolderName",
    "EqualIssue",
    "FolderNames",
    "TEST01_DELTA_PERC",
    "TEST01_DELTA_SOURCE",
    "delta_perc_of_test01",
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
