"""The MLPerf Inference v5.0 round's benchmarks, as its official checker and mlperf.conf state them.

Sources (mlcommons/inference, tag v5.0.1, the round's final checker): tools/submission/
submission_checker.py MODEL_CONFIG["v5.0"], OFFLINE_MIN_SPQ_SINCE_V4, RESULT_FIELD_NEW /
RESULT_FIELD_BENCHMARK_OVERWRITE["v5.0"], LLM_LATENCY_LIMITS, check_compliance_dir; loadgen/mlperf.conf.
Rows equal to v4.1's are reused; every difference is written out here: BERT leaves the datacenter
suite, Mixtral's references change, Llama2-70B gains its Interactive variant (llama2-70b-interactive-*,
TTFT 450 ms / TPOT 40 ms), Llama3.1-405B and R-GAT join.
"""

from __future__ import annotations

from proctor.rules import inference_v4_1 as v41
from proctor.rules.inference import Benchmark, Category, GenerationBound, Suite
from proctor.rules.inference_rounds import (
    COMPLETED,
    COMPLETED_TOKENS,
    MAPPING_V50,
    TOKENS,
    EqualIssue,
    InferenceRound,
    folder_names,
    level,
    official,
    target,
    tokens,
)
from proctor.rules.rounds import SEEDS, Layout
from proctor.typed_records import replace

TAG = "v5.0"
CHECKER = official("v5.0.1", "tools/submission/submission_checker.py", 'MODEL_CONFIG["v5.0"]')
CONF = official("v5.0.1", "loadgen/mlperf.conf")
LLM_LIMITS = official("v5.0.1", "tools/submission/submission_checker.py", "LLM_LATENCY_LIMITS")
# The Interactive bounds: the llama2-70b-interactive limits of LLM_LATENCY_LIMITS at tag v5.1.1 ("for v5.0").
INTERACTIVE_LIMITS = official("v5.1.1", "tools/submission/submission_checker.py", "LLM_LATENCY_LIMITS")

_SS, _SRV, _INT, _OFF = Category.SINGLE_STREAM, Category.SERVER, Category.INTERACTIVE, Category.OFFLINE
_DC, _EDGE = Suite.DATACENTER, Suite.EDGE

RESNET = replace(v41.RESNET, source=CHECKER)
RETINANET = replace(v41.RETINANET, source=CHECKER)
BERT = replace(
    v41.BERT,
    qsl_size={_EDGE: 10833},
    latency={},
    required={_EDGE: ((_SS,), (_OFF,))},
    source=CHECKER,
    notes="Edge only in v5.0 (no datacenter required scenarios).",
)
DLRM_V2 = replace(v41.DLRM_V2, source=CHECKER)
UNET = replace(v41.UNET, source=CHECKER)
GPTJ = replace(v41.GPTJ, source=CHECKER)
LLAMA2_70B = replace(
    v41.LLAMA2_70B,
    latency={_SRV: tokens(2000, 200, LLM_LIMITS), _INT: tokens(450, 40, INTERACTIVE_LIMITS)},
    required={_DC: ((_SRV, _INT), (_OFF,))},
    source=CHECKER,
    notes="llama2-70b-interactive-99/99.9 are Server runs held to the Interactive bounds.",
)
SDXL = replace(v41.SDXL, source=CHECKER)
MIXTRAL = replace(
    v41.MIXTRAL,
    quality=(
        level(
            0.99,
            "FP16",
            target("rouge1", 45.5989),
            target("rouge2", 23.3526),
            target("rougeL", 30.4608),
            target("gsm8k", 73.66, "%"),
            target("mbxp", 60.16, "%"),
        ),
    ),
    # accuracy-target: TOKENS_PER_SAMPLE 144.84 * 0.9; accuracy-upper-limit: 145.9 * 1.1 (two references).
    generation=(
        GenerationBound("tokens_per_sample", 144.84, low=0.9),
        GenerationBound("tokens_per_sample", 145.9, low=0.0, high=1.1),
    ),
    source=CHECKER,
)
LLAMA3_405B = Benchmark(
    name="llama3_1-405b",
    display="Llama3.1-405B",
    aliases=("llama3.1-405b",),
    area="Language",
    task="Text Generation",
    dataset="Subset of LongBench, LongDataCollections, Ruler, GovReport",
    qsl_size={_DC: 8313},
    quality=(level(0.99, "FP16", target("rougeL", 21.6666), target("exact_match", 90.1335)),),
    generation=(GenerationBound("tokens_per_sample", 684.68, low=0.9, high=1.1),),
    sample="one sequence",
    latency={_SRV: tokens(6000, 175, LLM_LIMITS)},
    required={_DC: ((_SRV,), (_OFF,))},
    parameters={"max_new_tokens": 20000},
    accuracy_dataset_size=8313,
    source=CHECKER,
)
RGAT = Benchmark(
    name="rgat",
    display="RGAT",
    area="Graph",
    task="Node classification",
    dataset="IGBH",
    qsl_size={_DC: 788379},
    quality=(level(0.99, "FP32", target("accuracy", 72.86, "%")),),
    sample="one node id",
    required={_DC: ((_OFF,),)},
    accuracy_dataset_size=788379,
    source=CHECKER,
)

BENCHMARKS: tuple[Benchmark, ...] = (
    RESNET, RETINANET, BERT, DLRM_V2, UNET, GPTJ, LLAMA2_70B, SDXL, MIXTRAL, LLAMA3_405B, RGAT,
)  # fmt: skip

RESULT_FIELDS = {**v41.RESULT_FIELDS, "llama3_1-405b": {_OFF: TOKENS, _SRV: COMPLETED_TOKENS}}

# check_compliance_dir at tag v5.0.1: TEST01/TEST04 less the removals, TEST06 for the token LLMs.
AUDITS: dict[str, tuple[str, ...]] = {
    "resnet": ("TEST01", "TEST04"),
    "retinanet": ("TEST01",),
    "bert-99": ("TEST01",),
    "bert-99.9": ("TEST01",),
    "dlrm-v2-99": ("TEST01",),
    "dlrm-v2-99.9": ("TEST01",),
    "3d-unet-99": ("TEST01",),
    "3d-unet-99.9": ("TEST01",),
    "gptj-99": (),
    "gptj-99.9": (),
    "llama2-70b-99": ("TEST06",),
    "llama2-70b-99.9": ("TEST06",),
    "llama2-70b-interactive-99": ("TEST06",),
    "llama2-70b-interactive-99.9": ("TEST06",),
    "stable-diffusion-xl": ("TEST01", "TEST04"),
    "mixtral-8x7b": ("TEST06",),
    "llama3.1-405b": ("TEST06",),
    "rgat": ("TEST01",),
}

# No accuracy artifacts: REQUIRED_ACC_BENCHMARK at tag v5.0.1 lists SDXL images for v4.0 and v4.1 only
# (the v5.0 list appears at tag v5.1, after the round was reviewed).

# get_mlperf_model: the folder names the round's checker maps to its model names
FOLDER_NAMES = folder_names(
    MAPPING_V50, official("v5.0.1", "tools/submission/submission_checker.py", 'MODEL_CONFIG["v5.0"]["model_mapping"]')
)

# Config.requires_equal_issue: the models whose runs need equal issue mode; closed and network results only
EQUAL_ISSUE = EqualIssue(
    models=frozenset(
        {
            "3d-unet-99",
            "3d-unet-99.9",
            "gptj-99",
            "gptj-99.9",
            "llama2-70b-99",
            "llama2-70b-99.9",
            "llama2-70b-interactive-99",
            "llama2-70b-interactive-99.9",
            "mixtral-8x7b",
            "llama3.1-405b",
            "rgat",
        }
    ),
    closed_only=True,
    source=official("v5.0.1", "tools/submission/submission_checker.py", "Config.requires_equal_issue; check_performance_dir"),
)

ROUND = InferenceRound(
    name=TAG,
    benchmarks=BENCHMARKS,
    seeds=SEEDS[TAG],
    server_field=COMPLETED,  # RESULT_FIELD_NEW["v5.0"]["Server"]
    layout=Layout.COMPLIANCE,
    result_fields=RESULT_FIELDS,
    audits=AUDITS,
    folder_names=FOLDER_NAMES,
    equal_issue=EQUAL_ISSUE,
    source=CHECKER,
)

__all__ = ["BENCHMARKS", "ROUND"]
