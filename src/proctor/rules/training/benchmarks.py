"""Every training benchmark as one record, `TrainingBenchmark`: the one home of what proctor knows of it.

A record holds a benchmark's facts, each traceable to where it comes from (`cite`, keyed by field,
or the `source` of the object the field holds: a cadence, a table, an allowance): its run count N and olympic drop (002 §11), how its
convergence point is read for the RCP test (002 §13), the evaluation cadence the harness paces (§9
evaluation frequency table), the rules-text tables proctor runs after the official checker's
(`rules_text.py`, per ruleset) and the special cases (Stable Diffusion's two metrics, Llama 3.1 405B's
one-evaluation allowance, bert's train_samples reading). The official benchmarks are the records below
and `ROUNDS` lists each round's; every consumer (scoring, RCP, package, summary, harness, compliance,
the results database) looks a benchmark up here, never by comparing its name.

A benchmark outside the official tables (proctor's `digits_train`) is the same record, declared by
entry point (`proctor.training.benchmarks`): it brings its compliance tables in `tables`, its N and
RCP file, and for the harness its quality target, cadence and reporting. The facts only the official
checkers read (`official_facts`) stay at their defaults there.

The official compliance tables are not here: they are the official checker's YAML, table for table,
in `ruleset_<x_y_z>.py` (pinned by hash, with the checker's own list of benchmark names per ruleset).

Adding an official benchmark: one record below (its N with the rules-text row, and each fact that is
not the default, cited), its name in the rounds of `ROUNDS` that have it, its tables in the ruleset
module and its RCP file under `rules/training_rcps/training_<ruleset>/`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import KW_ONLY
from typing import Literal

from proctor.rules.training import rules_text
from proctor.rules.training.package import DIVISIONS
from proctor.rules.training.scoring import DEFAULT_OLYMPIC_DROP
from proctor.rules.training.sections import EVALUATION_TABLE
from proctor.rules.training.types import Cadence, Check, Config, KeyRule, Req
from proctor.typed_records import field, record

# The official rcp_checker's names for the list of convergence points in an RCP record.
EPOCHS_KEY = "Epochs to converge"
SAMPLES_KEY = "samples to converge"


@record(frozen=True, slots=True)
class MetricTarget:
    """One metric of a benchmark whose evaluations log several (`metadata.metric`) and a bound on it."""

    metric: str
    bound: float
    op: Literal["<=", ">="]

    def met(self, value: float) -> bool:
        return value <= self.bound if self.op == "<=" else value >= self.bound


@record(frozen=True, slots=True)
class EarlyConvergence:
    """A benchmark allowed to converge `samples` earlier than its RCP allows, in the rounds named."""

    samples: int
    rulesets: frozenset[str]  # the rounds the rules text names
    official_from: tuple[int, ...]  # the official rcp_checker applies it to every ruleset from this one
    source: str

    def applies(self, ruleset: str, *, official: bool) -> bool:
        if official:
            return tuple(int(x) for x in ruleset.split(".")) >= self.official_from
        return ruleset in self.rulesets


@record(frozen=True, slots=True)
class TrainingBenchmark:
    """One training benchmark: what the checkers, the scorer and the harness know of it."""

    name: str
    tables: Mapping[str, Config]  # division -> `<division>_<name>`; {} for an official one (ruleset module)
    runs_required: int  # N: result files per submission (olympic scoring drops the extremes)
    rcps: str | os.PathLike[str] | None = None  # RCP JSON in the official format; None: the shipped files
    source: str = field(default="", compare=False)  # where it was declared (an entry point)
    _: KW_ONLY
    # --- what the harness reads (an extension's; an official one's target is in its ruleset's tables)
    target: Check | None = None  # the quality target, checked on an `eval_key` line
    cadence: Cadence | None = None  # when the harness evaluates, by global batch size
    reporting: str = "samples_count"  # the metadata an evaluation is logged with (or "epoch_num")
    eval_key: str = "eval_accuracy"
    # --- facts of the official benchmarks (`official_facts`: a declaration leaves them as they are)
    olympic_drop: int = DEFAULT_OLYMPIC_DROP  # runs dropped each side; as many non-converging tolerated
    converges_in: Literal["epochs", "samples"] = "epochs"  # epochs: epoch_num, else samples_count
    rcp_points_key: str = EPOCHS_KEY  # the name of the convergence list in its official RCP files
    metric_targets: tuple[MetricTarget, ...] = ()  # convergence: the first step meeting every bound
    train_samples_convergence: bool = False  # may read convergence from train_samples (official flag)
    early_convergence: EarlyConvergence | None = None
    rules_text: Mapping[str, Config] = field(default_factory=dict)  # ruleset -> closed rules-text table
    cite: Mapping[str, str] = field(default_factory=dict, compare=False)  # field -> where it comes from

    def __post_init__(self) -> None:
        if not self.name or not self.name.isidentifier():
            raise ValueError(f"benchmark name {self.name!r} must be a word such as 'digits_train'")
        for division, table in self.tables.items():
            if division not in DIVISIONS:
                raise ValueError(f"{self.name}: division {division!r} is not one of {', '.join(DIVISIONS)}")
            if table.name != f"{division}_{self.name}":
                raise ValueError(
                    f"{self.name}: the {division} table is named {table.name!r}, not '{division}_{self.name}'"
                )
        if (
            isinstance(self.runs_required, bool)
            or not isinstance(self.runs_required, int)
            or self.runs_required < 1
        ):
            raise ValueError(
                f"{self.name}: runs_required must be a positive integer, got {self.runs_required!r}"
            )

    @classmethod
    def from_target(
        cls,
        name: str,
        runs_required: int,
        target: Check,
        *,
        cadence: Cadence | None = None,
        reporting: str = "samples_count",
        hyperparameters: tuple[KeyRule, ...] = (),
        eval_key: str = "eval_accuracy",
        rcps: str | os.PathLike[str] | None = None,
        source: str = "",
    ) -> TrainingBenchmark:
        """A benchmark whose table, in both divisions, is its hyperparameter rules and the quality target:
        at least one `eval_key` line, each with `reporting` in its metadata, one meeting `target`."""
        eval_rule = KeyRule(
            eval_key,
            Req.AT_LEAST_ONE,
            checks=(Check(f"'{reporting}' in v['metadata']", lambda s, v, ll: reporting in v["metadata"]),),
            atleast_one=target,
            source=source,
        )
        tables = {d: Config(f"{d}_{name}", (*hyperparameters, eval_rule), source=source) for d in DIVISIONS}
        return cls(
            name,
            tables,
            runs_required,
            rcps,
            target=target,
            cadence=cadence,
            reporting=reporting,
            eval_key=eval_key,
        )

    @property
    def max_non_converged(self) -> int:
        """Non-converging runs tolerated: "a single non-converging run may be treated as the slowest run
        and dropped" (002 §11); unet3d tolerates as many as it drops (official tools: 4)."""
        return self.olympic_drop

    def official_facts(self) -> dict[str, object]:
        """The facts only the official checkers read (an entry point's declaration leaves them unset)."""
        return {
            "olympic_drop": self.olympic_drop,
            "converges_in": self.converges_in,
            "rcp_points_key": self.rcp_points_key,
            "metric_targets": self.metric_targets,
            "train_samples_convergence": self.train_samples_convergence,
            "early_convergence": self.early_convergence,
            "rules_text": dict(self.rules_text),
        }


def declared_official_facts(bench: TrainingBenchmark) -> list[str]:
    """The official-only facts a declared benchmark sets (an entry point's may set none)."""
    plain = TrainingBenchmark(bench.name, {}, 1).official_facts()
    return [k for k, v in bench.official_facts().items() if v != plain[k]]


# The harness's cadences: the rules text §9 Training Loop "Evaluation frequency" table (v6.1), and the
# official 6.1.0 tables where the text is cut short (deepseek's and qwen's first evaluation, dlrmv4's
# data-percent grid). The checker's tables hold the checks.
def _every(n: int) -> Cadence:
    """Every n samples, rounded up to a whole number of batches (CEIL(n / gbs) * gbs)."""
    return Cadence(
        lambda g: math.ceil(n / g) * g,
        lambda g: math.ceil(n / g) * g,
        f"{EVALUATION_TABLE}: every {n} samples",
    )


def _dlrm_interval(g: int) -> int:
    return max(1, math.ceil(0.001 * 2290835423 / g)) * g


# 002 §13 "Epoch reporting": these report "Training sample(s) (integer)", as the official rcp_checker
# reads them (the samples_count of the last evaluation).
_SAMPLES = "002 §13 Epoch reporting table: training samples (mlperf-logging 4.1.68 rcp_checker)"
_SAMPLES_KEY = "mlperf-logging 4.1.68 rcp_checker._process_raw_rcp_data: 'samples to converge'"
# §9 evaluation frequency table: "every N sequences" (the harness's cadence and the rules-text check)
_PRETRAINING_EVERY = 12288  # llama31_8b, gpt_oss_20b
_LORA_EVERY = 384  # llama2_70b_lora


def _deprecated(name: str, runs: int, row: str) -> TrainingBenchmark:
    """A deprecated benchmark proctor knows only the run count of (002 §24.5's results table)."""
    return TrainingBenchmark(name, {}, runs, cite={"runs_required": f"002 §24.5 table: {row} = {runs}"})


# --- 002 §11 "Benchmark Results", table "Minimum Number of Runs" (current benchmarks) -------------
FLUX1 = TrainingBenchmark(
    "flux1",
    {},
    10,
    converges_in="samples",
    rcp_points_key=SAMPLES_KEY,
    cadence=_every(262144),
    cite={
        "runs_required": "002 §11 table: Vision / Text to Image = 10",
        "converges_in": _SAMPLES,
        "rcp_points_key": _SAMPLES_KEY,
    },
)
GPT_OSS_20B = TrainingBenchmark(
    "gpt_oss_20b",
    {},
    10,
    converges_in="samples",
    cadence=_every(_PRETRAINING_EVERY),
    rules_text={
        "6.0.0": rules_text.pretraining("gpt_oss_20b", every=_PRETRAINING_EVERY, end_lr_also=4e-5),
        "6.1.0": rules_text.pretraining("gpt_oss_20b", every=_PRETRAINING_EVERY),
    },
    cite={
        "runs_required": "002 §11 table: Language / Small LLM MoE pretraining = 10",
        "converges_in": _SAMPLES,
    },
)
LLAMA31_8B = TrainingBenchmark(
    "llama31_8b",
    {},
    10,
    converges_in="samples",
    cadence=_every(_PRETRAINING_EVERY),
    # not in v5.1, its first round: 8 of its 30 published closed results evaluate every 8,192, 21,888
    # or 24,576 sequences (Cisco, Dell, HPE, University of Florida), which the v6.1 row's "every 12288
    # sequences" does not allow and the v5.1 review accepted: that round's row is not the text here
    rules_text=dict.fromkeys(
        ("6.0.0", "6.1.0"), rules_text.pretraining("llama31_8b", every=_PRETRAINING_EVERY)
    ),
    cite={"runs_required": "002 §11 table: Language / Small LLM pretraining = 10", "converges_in": _SAMPLES},
)
DEEPSEEKV3_671B = TrainingBenchmark(
    "deepseekv3_671b",
    {},
    3,
    converges_in="samples",
    # first evaluation at gbs*floor(42 + 24576/gbs) (official FIRST_CHECK); later ones are not
    # constrained by the checker, so the harness evaluates every step after the first
    cadence=Cadence(
        lambda g: g * math.floor(42 + 24576 / g),
        lambda g: g,
        f"{EVALUATION_TABLE}: deepseekv3_671b first evaluation",
    ),
    rules_text=dict.fromkeys(("6.0.0", "6.1.0"), rules_text.moe_pretraining("deepseekv3_671b")),
    cite={"runs_required": "002 §11 table: Language / LLM MoE pretraining = 3", "converges_in": _SAMPLES},
)
LLAMA2_70B_LORA = TrainingBenchmark(
    "llama2_70b_lora",
    {},
    10,
    converges_in="samples",
    rcp_points_key=SAMPLES_KEY,
    cadence=_every(_LORA_EVERY),
    # the rules text is v6.1's; the older rounds' rows were the same where published logs show it
    # (the v4.0 LoRA logs comply)
    rules_text=dict.fromkeys(
        ("4.0.0", "4.1.0", "5.0.0", "5.1.0", "6.0.0", "6.1.0"),
        rules_text.lora_finetuning("llama2_70b_lora", every=_LORA_EVERY),
    ),
    cite={
        "runs_required": "002 §11 table: Language / LLM finetuning = 10",
        "converges_in": _SAMPLES,
        "rcp_points_key": _SAMPLES_KEY,
    },
)
QWEN35_397B_GRPO = TrainingBenchmark(
    "qwen35_397b_grpo",
    {},
    3,
    converges_in="samples",
    cadence=Cadence(
        lambda g: g * math.ceil(2.5 + 3840 / g),
        lambda g: g,
        f"{EVALUATION_TABLE}: qwen35_397b_grpo validation schedule",
    ),
    rules_text={"6.1.0": rules_text.grpo_post_training("qwen35_397b_grpo")},
    cite={"runs_required": "002 §11 table: Language / LLM post training = 3*", "converges_in": _SAMPLES},
)
DLRMV4 = TrainingBenchmark(
    "dlrmv4",
    {},
    10,
    converges_in="samples",
    cadence=Cadence(
        lambda g: math.ceil(math.floor((4480 * g + 135331840) / 3) / _dlrm_interval(g)) * _dlrm_interval(g),
        _dlrm_interval,
        f"{EVALUATION_TABLE}: dlrm_v4 every eval_every_data_pct",
    ),
    rules_text={"6.1.0": rules_text.recommendation("dlrmv4")},
    cite={"runs_required": "002 §11 table: Commerce / Recommendation = 10", "converges_in": _SAMPLES},
)
# --- 002 §24.5 "Deprecated benchmarks results" ----------------------------------------------------
BERT = TrainingBenchmark(
    "bert",
    {},
    10,
    train_samples_convergence=True,
    cite={
        "runs_required": "002 §24.5 table: Language / NLP = 10",
        "train_samples_convergence": "mlperf-logging 4.1.68 package_checker --rcp_bert_train_samples "
        "(bert only): convergence from train_samples",
    },
)
LLAMA31_405B = TrainingBenchmark(
    "llama31_405b",
    {},
    3,
    converges_in="samples",
    # 002 §20 (Appendix: v5.0 Specific Rules): "we allow submissions that converge 1 evaluation (46,080
    # samples) earlier than generally allowed by the reference". The appendix says "This exception only
    # applies to v5.0"; §14 (Appendix: Benchmark Specific Rules, Llama31_405B) carries it into v5.1:
    # "For all v5.0 and v5.1 specific rules that applied to Llama31_405B (maximum GBS constraint at 9216,
    # single-evaluation-earlier RCP allowance, sparse evaluation schedule), see the v5.0 Specific Rules
    # appendix". So the rounds it names: v5.0 and v5.1 (the official rcp_checker: every ruleset >= 5.0.0,
    # 6.0.0 too; docs/deviations.md).
    early_convergence=EarlyConvergence(
        46080,
        frozenset({"5.0.0", "5.1.0"}),
        (5, 0, 0),
        "002 §20 Appendix: v5.0 Specific Rules (one evaluation, 46,080 samples, earlier); "
        "§14 Llama31_405B: the v5.0 and v5.1 specific rules",
    ),
    cite={"runs_required": "002 §24.5 table: Language / LLM pretraining = 3", "converges_in": _SAMPLES},
)
RESNET = _deprecated("resnet", 5, "Vision / Image classification")
UNET3D = TrainingBenchmark(
    "unet3d",
    {},
    40,
    olympic_drop=4,
    cite={
        "runs_required": "002 §24.5 table: Vision / Image segmentation (medical) = 40",
        "olympic_drop": "mlperf-logging 4.1.68 result_summarizer/rcp_checker: 4 for unet3d (40 runs)",
    },
)
STABLE_DIFFUSION = TrainingBenchmark(
    "stable_diffusion",
    {},
    10,
    # the first eval step whose FID and CLIP both meet the target
    metric_targets=(MetricTarget("FID", 90.0, "<="), MetricTarget("CLIP", 0.15, ">=")),
    cite={
        "runs_required": "002 §24.5 table: Vision / Stable Diffusion v2.0 = 10",
        "metric_targets": "002 §24.2 targets; official rcp_checker: FID <= 90 and CLIP >= 0.15, step unit "
        "samples_count, step_num in 3.1.0",
    },
)
MASKRCNN = _deprecated("maskrcnn", 5, "Vision / Object detection (heavy weight)")
SSD = _deprecated("ssd", 5, "Vision / Object detection (light weight)")
RETINANET = _deprecated("retinanet", 5, "Vision / Object detection (light weight)")
RNNT = _deprecated("rnnt", 10, "Language / Speech recognition")
GNN = _deprecated("gnn", 10, "Graphs / Node classification")
RGAT = _deprecated("rgat", 10, "Graphs / Node classification")
DLRM_DCNV2 = _deprecated("dlrm_dcnv2", 10, "Commerce / Recommendation")
GPT3 = TrainingBenchmark(
    "gpt3",
    {},
    3,
    cite={"runs_required": "not in the 002 tables; mlperf-logging 4.1.68 benchmark_meta.py: gpt3 = 3"},
)

# fmt: off
OFFICIAL: Mapping[str, TrainingBenchmark] = {
    b.name: b
    for b in (
        FLUX1, GPT_OSS_20B, LLAMA31_8B, DEEPSEEKV3_671B, LLAMA2_70B_LORA, QWEN35_397B_GRPO, DLRMV4, BERT,
        LLAMA31_405B, RESNET, UNET3D, STABLE_DIFFUSION, MASKRCNN, SSD, RETINANET, RNNT, GNN, RGAT,
        DLRM_DCNV2, GPT3,
    )
}
# fmt: on

# The benchmarks of each round, by ruleset major.minor, in the official order: mlperf-logging 4.1.68
# benchmark_meta._ALL_ALLOWED_BENCHMARKS["training"].
ROUNDS: Mapping[str, tuple[TrainingBenchmark, ...]] = {
    "4.0": (BERT, DLRM_DCNV2, GPT3, RESNET, SSD, UNET3D, STABLE_DIFFUSION, LLAMA2_70B_LORA, GNN),
    "4.1": (BERT, DLRM_DCNV2, GPT3, SSD, STABLE_DIFFUSION, LLAMA2_70B_LORA, GNN),
    "5.0": (BERT, DLRM_DCNV2, RETINANET, STABLE_DIFFUSION, LLAMA2_70B_LORA, RGAT, LLAMA31_405B),
    "5.1": (LLAMA31_8B, DLRM_DCNV2, RETINANET, FLUX1, LLAMA2_70B_LORA, RGAT, LLAMA31_405B),
    "6.0": (LLAMA31_8B, DLRM_DCNV2, FLUX1, LLAMA2_70B_LORA, LLAMA31_405B, GPT_OSS_20B, DEEPSEEKV3_671B),
    "6.1": (LLAMA31_8B, FLUX1, LLAMA2_70B_LORA, GPT_OSS_20B, DEEPSEEKV3_671B, QWEN35_397B_GRPO, DLRMV4),
}


def official(name: object) -> TrainingBenchmark | None:
    """The official record of a benchmark name (any round), None for any other name or value."""
    return OFFICIAL.get(name) if isinstance(name, str) else None


def round_benchmarks(ruleset: str) -> tuple[TrainingBenchmark, ...]:
    """The official benchmarks of a ruleset's round ("6.1.0" and "6.1" alike); () for an unknown one."""
    return ROUNDS.get(".".join(ruleset.split(".")[:2]), ())


def allowed_benchmarks(ruleset: str) -> tuple[str, ...]:
    return tuple(b.name for b in round_benchmarks(ruleset))


def runs_required(benchmark: str, custom: int | None = None) -> int | None:
    """N for a benchmark; `custom` wins (for proctor's own benchmarks), None when unknown."""
    if custom is not None:
        return custom
    rec = official(benchmark)
    return rec.runs_required if rec else None


def olympic_drop(benchmark: str) -> int:
    rec = official(benchmark)
    return rec.olympic_drop if rec else DEFAULT_OLYMPIC_DROP


def max_non_converged(benchmark: str) -> int:
    rec = official(benchmark)
    return rec.max_non_converged if rec else DEFAULT_OLYMPIC_DROP


def rules_text_table(ruleset: str, division: object, benchmark: object) -> Config | None:
    """The rules-text table for a log's division and benchmark under `ruleset` (None: nothing to add);
    Open is free ("OPEN: Hyperparameters and optimizer may be freely changed", §9)."""
    rec = official(benchmark)
    if division != "closed" or rec is None:
        return None
    return rec.rules_text.get(ruleset)


def rules_text_tables() -> list[tuple[str, str, Config]]:
    """(benchmark, ruleset, table) for every ruleset a rules-text table applies to."""
    return [(b.name, rs, cfg) for b in OFFICIAL.values() for rs, cfg in sorted(b.rules_text.items())]


def rules_text_keys() -> frozenset[str]:
    return frozenset(k.name for _, _, cfg in rules_text_tables() for k in cfg.keys)


__all__ = [
    "EPOCHS_KEY",
    "OFFICIAL",
    "ROUNDS",
    "SAMPLES_KEY",
    "EarlyConvergence",
    "MetricTarget",
    "TrainingBenchmark",
    "allowed_benchmarks",
    "declared_official_facts",
    "max_non_converged",
    "official",
    "olympic_drop",
    "round_benchmarks",
    "rules_text_keys",
    "rules_text_table",
    "rules_text_tables",
    "runs_required",
]
