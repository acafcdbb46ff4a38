"""The MLPerf Inference v5.1 round's benchmarks, as its official checker and mlperf.conf state them.

Sources (mlcommons/inference, tag v5.1.1, the round's final checker): tools/submission/
submission_checker.py MODEL_CONFIG["v5.1"] (with its "dataset-size" table), OFFLINE_MIN_SPQ_SINCE_V4,
RESULT_FIELD_NEW / RESULT_FIELD_BENCHMARK_OVERWRITE["v5.1"], LLM_LATENCY_LIMITS, check_compliance_dir;
loadgen/mlperf.conf. Rows equal to v5.0's are reused; the differences are written out here: GPT-J
leaves, ResNet50 is edge only, the LLMs' Server results become optional beside Interactive (one of
the two is required), Llama3.1-8B (datacenter and edge, each with its own references),
DeepSeek-R1, Whisper and PointPainting join.
"""

from __future__ import annotations

from proctor.rules import inference_v5_0 as v50
from proctor.rules.inference import Benchmark, Category, GenerationBound, Suite
from proctor.rules.inference_rounds import (
    COMPLETED,
    COMPLETED_TOKENS,
    MAPPING_V51,
    TOKENS,
    AccuracyArtifacts,
    EqualIssue,
    InferenceRound,
    ResultField,
    folder_names,
    level,
    official,
    target,
    tokens,
)
from proctor.rules.rounds import SEEDS, Layout
from proctor.typed_records import replace

TAG = "v5.1"
CHECKER = official("v5.1.1", "tools/submission/submission_checker.py", 'MODEL_CONFIG["v5.1"]')
LLM_LIMITS = official("v5.1.1", "tools/submission/submission_checker.py", "LLM_LATENCY_LIMITS")

_SS, _SRV, _INT, _OFF = Category.SINGLE_STREAM, Category.SERVER, Category.INTERACTIVE, Category.OFFLINE
_DC, _EDGE = Suite.DATACENTER, Suite.EDGE
_SERVER_OR_INTERACTIVE = ((_SRV, _INT), (_OFF,))  # "one of [Server, Interactive] is required"

RESNET = replace(
    v50.RESNET,
    qsl_size={_EDGE: 1024},
    latency={},
    required={_EDGE: ((_SS,), (Category.MULTI_STREAM,), (_OFF,))},
    source=CHECKER,
    notes="Edge only in v5.1 (no datacenter required scenarios).",
)
RETINANET = replace(v50.RETINANET, source=CHECKER)
BERT = replace(v50.BERT, source=CHECKER)
DLRM_V2 = replace(v50.DLRM_V2, source=CHECKER)
UNET = replace(v50.UNET, source=CHECKER)
LLAMA2_70B = replace(
    v50.LLAMA2_70B,
    latency={_SRV: tokens(2000, 200, LLM_LIMITS), _INT: tokens(450, 40, LLM_LIMITS)},
    required={_DC: _SERVER_OR_INTERACTIVE},
    source=CHECKER,
)
SDXL = replace(v50.SDXL, source=CHECKER)
MIXTRAL = replace(v50.MIXTRAL, source=CHECKER)
LLAMA3_405B = replace(
    v50.LLAMA3_405B,
    latency={_SRV: tokens(6000, 175, LLM_LIMITS), _INT: tokens(4500, 80, LLM_LIMITS)},
    required={_DC: _SERVER_OR_INTERACTIVE},
    source=CHECKER,
)
RGAT = replace(v50.RGAT, source=CHECKER)
LLAMA3_8B = Benchmark(
    name="llama3_1-8b",
    display="Llama3.1-8B",
    aliases=("llama3.1-8b",),
    area="Language",
    task="Summarization",
    dataset="CNN Dailymail (v3.0.0, max_seq_len=2048)",
    qsl_size={_DC: 13368},
    quality=(
        level(
            0.99,
            "FP32",
            target("rouge1", 38.7792),
            target("rouge2", 15.9075),
            target("rougeL", 24.4957),
            target("rougeLsum", 35.793),
        ),
    ),
    generation=(GenerationBound("gen_len", 8167644, low=0.9, high=1.1),),
    sample="one sequence",
    latency={_SRV: tokens(2000, 100, LLM_LIMITS), _INT: tokens(500, 30, LLM_LIMITS)},
    required={_DC: _SERVER_OR_INTERACTIVE},
    parameters={"max_new_tokens": 128},
    accuracy_dataset_size=13368,
    source=CHECKER,
)
LLAMA3_8B_EDGE = Benchmark(
    name="llama3_1-8b-edge",
    display="Llama3.1-8B (edge)",
    aliases=("llama3.1-8b-edge",),
    area="Language",
    task="Summarization",
    dataset="CNN Dailymail (v3.0.0, 5000-sample edge subset)",
    qsl_size={_EDGE: 5000},
    quality=(
        level(
            0.99,
            "FP32",
            target("rouge1", 39.06),
            target("rouge2", 16.1147),
            target("rougeL", 24.6375),
            target("rougeLsum", 36.124),
        ),
    ),
    generation=(GenerationBound("gen_len", 3051113, low=0.9, high=1.1),),
    sample="one sequence",
    required={_EDGE: ((_SS,), (_OFF,))},
    parameters={"max_new_tokens": 128},
    accuracy_dataset_size=5000,
    source=CHECKER,
)
DEEPSEEK_R1 = Benchmark(
    name="deepseek-r1",
    display="DeepSeek-r1",
    aliases=("deepseek",),
    area="Language",
    task="Reasoning",
    dataset="mlperf_deepseek_r1",
    qsl_size={_DC: 4388},
    quality=(level(0.99, "FP16", target("exact_match", 81.3582, "%")),),
    generation=(GenerationBound("tokens_per_sample", 3886.2274, low=0.9, high=1.1),),
    sample="one sequence",
    latency={_SRV: tokens(2000, 80, LLM_LIMITS)},
    required={_DC: ((_SRV,), (_OFF,))},
    accuracy_dataset_size=4388,
    source=CHECKER,
)
WHISPER = Benchmark(
    name="whisper",
    display="Whisper",
    area="Audio",
    task="Speech to Text",
    dataset="LibriSpeech",
    qsl_size={_DC: 1633, _EDGE: 1633},
    # ("ACCURACY", (100.0 - 2.0671) * 0.99): word accuracy, read from the script's "accuracy=" value.
    quality=(level(0.99, "FP32", target("accuracy", 100.0 - 2.0671, "%")),),
    sample="one audio",
    required={_DC: ((_OFF,),), _EDGE: ((_OFF,),)},
    accuracy_dataset_size=1633,
    source=CHECKER,
)
POINTPAINTING = Benchmark(
    name="pointpainting",
    display="PointPainting",
    area="Automotive",
    task="3D Object Detection",
    dataset="Waymo Open Dataset",
    qsl_size={_EDGE: 1024},
    quality=(level(0.999, "FP32", target("mAP", 0.5425)),),
    sample="five images and one lidar point cloud",
    required={_EDGE: ((_SS,),)},
    accuracy_dataset_size=39987,
    source=CHECKER,
)

BENCHMARKS: tuple[Benchmark, ...] = (
    RESNET, RETINANET, BERT, DLRM_V2, UNET, LLAMA3_8B, LLAMA3_8B_EDGE, LLAMA2_70B, SDXL, MIXTRAL,
    LLAMA3_405B, RGAT, POINTPAINTING, DEEPSEEK_R1, WHISPER,
)  # fmt: skip

# RESULT_FIELD_BENCHMARK_OVERWRITE["v5.1"] at tag v5.1.1.
RESULT_FIELDS = {
    "llama2-70b": {_OFF: TOKENS, _SRV: COMPLETED_TOKENS},
    "llama3_1-8b": {_OFF: TOKENS, _SRV: COMPLETED_TOKENS},
    "llama3_1-8b-edge": {
        _OFF: TOKENS,
        _SS: ResultField("result_90.00_percentile_latency_ns", "90th percentile latency", "ms"),
    },
    "mixtral-8x7b": {_OFF: TOKENS, _SRV: COMPLETED_TOKENS},
    "llama3_1-405b": {_OFF: TOKENS, _SRV: COMPLETED_TOKENS},
    "deepseek-r1": {_OFF: TOKENS, _SRV: COMPLETED_TOKENS},
    "whisper": {_OFF: TOKENS},
}

# check_compliance_dir at tag v5.1.1.
AUDITS: dict[str, tuple[str, ...]] = {
    "resnet": ("TEST01", "TEST04"),
    "retinanet": ("TEST01",),
    "bert-99": ("TEST01",),
    "bert-99.9": ("TEST01",),
    "dlrm-v2-99": ("TEST01",),
    "dlrm-v2-99.9": ("TEST01",),
    "3d-unet-99": ("TEST01",),
    "3d-unet-99.9": ("TEST01",),
    "llama3.1-8b": ("TEST06",),
    "llama3.1-8b-edge": (),
    "llama2-70b-99": ("TEST06",),
    "llama2-70b-99.9": ("TEST06",),
    "stable-diffusion-xl": ("TEST01", "TEST04"),
    "mixtral-8x7b": ("TEST06",),
    "llama3.1-405b": ("TEST06",),
    "rgat": ("TEST01",),
    "pointpainting": ("TEST01", "TEST04"),
    "deepseek-r1": ("TEST06",),
    "whisper": ("TEST01",),
}

# REQUIRED_ACC_BENCHMARK["stable-diffusion-xl"]["v5.1"] at tag v5.1.1: ten of the generated images and
# the captions file in accuracy/images/ (--skip-extra-accuracy-files-check skips it).
ACCURACY_ARTIFACTS = {
    "stable-diffusion-xl": AccuracyArtifacts(
        folder="images",
        stems=("2747", "2235", "2165", "1515", "1538", "1367", "2419", "4629", "3657", "4532"),
        suffix=".png",
        required_in_open=False,
        source=official("v5.1.1", "tools/submission/submission_checker.py", 'REQUIRED_ACC_BENCHMARK["stable-diffusion-xl"]'),
    )
}

# get_mlperf_model: the folder names the round's checker maps to its model names
FOLDER_NAMES = folder_names(
    MAPPING_V51, official("v5.1.1", "tools/submission/submission_checker.py", 'MODEL_CONFIG["v5.1"]["model_mapping"]')
)

# Config.requires_equal_issue: the models whose runs need equal issue mode; every division (the function takes no division)
EQUAL_ISSUE = EqualIssue(
    models=frozenset(
        {
            "3d-unet-99",
            "3d-unet-99.9",
            "gptj-99",
            "gptj-99.9",
            "llama2-70b-99",
            "llama2-70b-99.9",
            "mixtral-8x7b",
            "llama3.1-405b",
            "llama3.1-8b",
            "llama3.1-8b-edge",
            "deepseek-r1",
            "rgat",
            "whisper",
        }
    ),
    closed_only=False,
    source=official("v5.1.1", "tools/submission/submission_checker.py", "Config.requires_equal_issue; check_performance_dir"),
)

ROUND = InferenceRound(
    name=TAG,
    benchmarks=BENCHMARKS,
    seeds=SEEDS[TAG],
    server_field=COMPLETED,  # RESULT_FIELD_NEW["v5.1"]["Server"]
    layout=Layout.COMPLIANCE,
    result_fields=RESULT_FIELDS,
    audits=AUDITS,
    accuracy_artifacts=ACCURACY_ARTIFACTS,
    folder_names=FOLDER_NAMES,
    equal_issue=EQUAL_ISSUE,
    source=CHECKER,
)

__all__ = ["BENCHMARKS", "ROUND"]
