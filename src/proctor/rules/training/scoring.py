"""How many runs a training result needs, how many olympic scoring drops, how convergence is counted.

Each entry cites where it comes from: "002 §11" is the Training rules' "Run Results"/"Benchmark
Results" tables (the MLPerf Training rules text; docs/deviations.md cites it the same way),
"002 §24.5" the deprecated benchmarks' results table, "002 §13" the RCP section with its "Epoch
reporting" table. Numbers the rules text does not state (gpt3's run count, unet3d's drop count,
the benchmarks that report samples) come from the official mlperf-logging 4.1.68
(`benchmark_meta.py`, `rcp_checker.py`) and say so.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RunCount:
    runs: int
    source: str


# Minimum number of runs per benchmark (= the N of the RCP t-test, references give 2N points).
RUNS_REQUIRED: dict[str, RunCount] = {
    # 002 §11 "Benchmark Results", table "Minimum Number of Runs" (current benchmarks)
    "flux1": RunCount(10, "002 §11 table: Vision / Text to Image = 10"),
    "gpt_oss_20b": RunCount(10, "002 §11 table: Language / Small LLM MoE pretraining = 10"),
    "llama31_8b": RunCount(10, "002 §11 table: Language / Small LLM pretraining = 10"),
    "deepseekv3_671b": RunCount(3, "002 §11 table: Language / LLM MoE pretraining = 3"),
    "llama2_70b_lora": RunCount(10, "002 §11 table: Language / LLM finetuning = 10"),
    "qwen35_397b_grpo": RunCount(3, "002 §11 table: Language / LLM post training = 3*"),
    "dlrmv4": RunCount(10, "002 §11 table: Commerce / Recommendation = 10"),
    # 002 §24.5 "Deprecated benchmarks results"
    "bert": RunCount(10, "002 §24.5 table: Language / NLP = 10"),
    "llama31_405b": RunCount(3, "002 §24.5 table: Language / LLM pretraining = 3"),
    "resnet": RunCount(5, "002 §24.5 table: Vision / Image classification = 5"),
    "unet3d": RunCount(40, "002 §24.5 table: Vision / Image segmentation (medical) = 40"),
    "stable_diffusion": RunCount(10, "002 §24.5 table: Vision / Stable Diffusion v2.0 = 10"),
    "maskrcnn": RunCount(5, "002 §24.5 table: Vision / Object detection (heavy weight) = 5"),
    "ssd": RunCount(5, "002 §24.5 table: Vision / Object detection (light weight) = 5"),
    "retinanet": RunCount(5, "002 §24.5 table: Vision / Object detection (light weight) = 5"),
    "rnnt": RunCount(10, "002 §24.5 table: Language / Speech recognition = 10"),
    "gnn": RunCount(10, "002 §24.5 table: Graphs / Node classification = 10"),
    "rgat": RunCount(10, "002 §24.5 table: Graphs / Node classification = 10"),
    "dlrm_dcnv2": RunCount(10, "002 §24.5 table: Commerce / Recommendation = 10"),
    "gpt3": RunCount(3, "not in the 002 tables; mlperf-logging 4.1.68 benchmark_meta.py: gpt3 = 3"),
}

# Runs dropped on each side by olympic scoring: "dropping the fastest and slowest runs" (002 §11).
DEFAULT_OLYMPIC_DROP = 1
OLYMPIC_DROP: dict[str, RunCount] = {
    "unet3d": RunCount(4, "mlperf-logging 4.1.68 result_summarizer/rcp_checker: 4 for unet3d (40 runs)"),
}

# Non-converging runs tolerated: "a single non-converging run may be treated as the slowest run and
# dropped. A benchmark result is invalid if there is more than one non-converging run." (002 §11)
# unet3d tolerates as many as it drops (official tools: 4).


def runs_required(benchmark: str, custom: int | None = None) -> int | None:
    """N for a benchmark; `custom` wins (for proctor's own benchmarks), None when unknown."""
    if custom is not None:
        return custom
    rc = RUNS_REQUIRED.get(benchmark)
    return rc.runs if rc else None


def olympic_drop(benchmark: str) -> int:
    rc = OLYMPIC_DROP.get(benchmark)
    return rc.runs if rc else DEFAULT_OLYMPIC_DROP


def max_non_converged(benchmark: str) -> int:
    return olympic_drop(benchmark)


# Benchmarks whose convergence point is the `samples_count` of the last eval (002 §13 "Epoch
# reporting": "Training sample(s) (integer)"), as the official rcp_checker reads them.
SAMPLE_CONVERGENCE_BENCHMARKS = frozenset(
    {
        "llama2_70b_lora",
        "flux1",
        "llama31_405b",
        "llama31_8b",
        "gpt_oss_20b",
        "deepseekv3_671b",
        "qwen35_397b_grpo",
        "dlrmv4",
    }
)
# Stable Diffusion: the first eval step whose FID and CLIP both meet the target (002 §24.2 targets;
# official rcp_checker: FID <= 90 and CLIP >= 0.15, step unit samples_count, step_num in 3.1.0).
STABLE_DIFFUSION_TARGET = {"FID": (90.0, "<="), "CLIP": (0.15, ">=")}

# 002 §20 (Appendix: v5.0 Specific Rules): Llama 3.1 405B may converge one evaluation (46,080
# samples) earlier than the RCP allows ("we allow submissions that converge 1 evaluation (46,080
# samples) earlier than generally allowed by the reference"). The appendix says "This exception only
# applies to v5.0"; §14 (Appendix: Benchmark Specific Rules, Llama31_405B) carries it into v5.1: "For
# all v5.0 and v5.1 specific rules that applied to Llama31_405B (maximum GBS constraint at 9216,
# single-evaluation-earlier RCP allowance, sparse evaluation schedule), see the v5.0 Specific Rules
# appendix". So the rounds it names: v5.0 and v5.1 (the official rcp_checker: every ruleset >= 5.0.0,
# 6.0.0 too; docs/deviations.md).
LLAMA405B_EARLY_SAMPLES = 46080
LLAMA405B_EARLY_RULESETS = frozenset({"5.0.0", "5.1.0"})
LLAMA405B_EARLY_SOURCE = (
    "002 §20 Appendix: v5.0 Specific Rules (one evaluation, 46,080 samples, earlier); "
    "§14 Llama31_405B: the v5.0 and v5.1 specific rules"
)

# RCP t-test (002 §13): one-sided, similar variances, p = 0.05.
RCP_ALPHA = 0.05
RCP_TOLERANCE = 1e-4  # bisection width, as the official checker
