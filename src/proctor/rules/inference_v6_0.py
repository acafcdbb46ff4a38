"""The MLPerf Inference v6.0 round's benchmarks, as the official checker states them for that round.

Sources (mlcommons/inference; the mirror has no v6.0 tag, so the newest checker's table for the
round): HEAD:tools/submission/submission_checker/constants.py MODEL_CONFIG["v6.0"] (models, required
and optional scenarios, accuracy targets, dataset sizes, models_TEST0x), LLM_LATENCY_LIMITS,
RESULT_FIELD_NEW / RESULT_FIELD_BENCHMARK_OVERWRITE["v6.0"]; HEAD:loadgen/mlperf.conf for the
latency bounds LoadGen applies. Rows equal to v5.1's are reused; the benchmarks new in v6.0
(GPT-OSS-120B, Qwen3-VL, DLRMv3, WAN-2.2, YOLO) are the current table's rows, with every v6.0
difference written out here.
"""

from __future__ import annotations

from proctor.rules import inference as current
from proctor.rules import inference_v5_1 as v51
from proctor.rules.inference import Benchmark, Category, Suite
from proctor.rules.inference_rounds import COMPLETED, AccuracyArtifacts, InferenceRound, official, tokens
from proctor.rules.rounds import SEEDS, Layout
from proctor.typed_records import replace

TAG = "v6.0"
CHECKER = official("HEAD", "tools/submission/submission_checker/constants.py", 'MODEL_CONFIG["v6.0"]')
LLM_LIMITS = official("HEAD", "tools/submission/submission_checker/constants.py", "LLM_LATENCY_LIMITS")

_SS, _MS, _SRV, _INT, _OFF = (
    Category.SINGLE_STREAM,
    Category.MULTI_STREAM,
    Category.SERVER,
    Category.INTERACTIVE,
    Category.OFFLINE,
)
_DC, _EDGE = Suite.DATACENTER, Suite.EDGE
_SERVER_OR_INTERACTIVE = ((_SRV, _INT), (_OFF,))

RESNET = replace(v51.RESNET, source=CHECKER)  # edge only
RETINANET = replace(
    v51.RETINANET, qsl_size={}, latency={}, required={}, source=CHECKER,
    notes="Listed among v6.0's models but required in neither suite: no suite accepts it.",
)  # fmt: skip
BERT = replace(v51.BERT, source=CHECKER)
UNET = replace(v51.UNET, source=CHECKER)
LLAMA3_8B = replace(v51.LLAMA3_8B, source=CHECKER)
LLAMA3_8B_EDGE = replace(v51.LLAMA3_8B_EDGE, source=CHECKER)
LLAMA2_70B = replace(v51.LLAMA2_70B, source=CHECKER)
SDXL = replace(
    v51.SDXL, qsl_size={_EDGE: 5000}, latency={}, required={_EDGE: ((_SS,), (_OFF,))}, source=CHECKER,
    notes="Edge only in v6.0 (no datacenter required scenarios).",
)  # fmt: skip
MIXTRAL = replace(v51.MIXTRAL, source=CHECKER)
LLAMA3_405B = replace(v51.LLAMA3_405B, source=CHECKER)
RGAT = replace(v51.RGAT, source=CHECKER)
POINTPAINTING = replace(
    v51.POINTPAINTING, qsl_size={}, required={}, source=CHECKER,
    notes="Listed among v6.0's models but required in neither suite: no suite accepts it.",
)  # fmt: skip
DEEPSEEK_R1 = replace(
    v51.DEEPSEEK_R1,
    latency={_SRV: tokens(2000, 80, LLM_LIMITS), _INT: tokens(1500, 15, LLM_LIMITS)},
    required={_DC: _SERVER_OR_INTERACTIVE},
    source=CHECKER,
)
WHISPER = replace(v51.WHISPER, source=CHECKER)
GPT_OSS = replace(
    current.BY_NAME["gpt-oss-120b"],
    qsl_size={_DC: 6396},
    # gpt-oss-120b(-interactive).Server.ttft/tpot_latency in mlperf.conf and LLM_LATENCY_LIMITS
    latency={_SRV: tokens(3000, 80, LLM_LIMITS), _INT: tokens(2000, 15, LLM_LIMITS)},
    required={_DC: _SERVER_OR_INTERACTIVE},
    accuracy_dataset_size=None,  # "dataset-size" 6396 beside accuracy_sample_count_override 4395: unsettled
    source=CHECKER,
)
QWEN3_VL = replace(
    current.BY_NAME["qwen3-vl-235b-a22b"],
    qsl_size={_DC: 48289},
    latency={_SRV: current.LatencyLimit(latency_ns=12_000_000_000, source=CHECKER)},
    required={_DC: ((_SRV,), (_OFF,))},
    accuracy_dataset_size=48289,
    source=CHECKER,
    notes="v6.0 requires Server (no Interactive category for Qwen3-VL in that round).",
)
DLRM_V3 = replace(current.BY_NAME["dlrm-v3"], required={_DC: ((_SRV,), (_OFF,))}, source=CHECKER)
WAN = replace(current.BY_NAME["wan-2.2-t2v-a14b"], required={_DC: ((_SS,), (_OFF,))}, source=CHECKER)
YOLO = replace(current.BY_NAME["yolo"], required={_EDGE: ((_SS,), (_MS,), (_OFF,))}, source=CHECKER)

BENCHMARKS: tuple[Benchmark, ...] = (
    RESNET, RETINANET, BERT, UNET, LLAMA3_8B, LLAMA3_8B_EDGE, LLAMA2_70B, SDXL, MIXTRAL, LLAMA3_405B, RGAT,
    POINTPAINTING, DEEPSEEK_R1, WHISPER, GPT_OSS, QWEN3_VL, DLRM_V3, WAN, YOLO,
)  # fmt: skip

# RESULT_FIELD_BENCHMARK_OVERWRITE["v6.0"]: the token benchmarks as v5.1 (GPT-OSS-120B's like theirs).
RESULT_FIELDS = {**v51.RESULT_FIELDS, "gpt-oss-120b": v51.RESULT_FIELDS["llama2-70b"]}

# MODEL_CONFIG["v6.0"]["models_TEST0x"]
AUDITS: dict[str, tuple[str, ...]] = {
    "resnet": ("TEST01", "TEST04"),
    "retinanet": ("TEST01",),
    "bert-99": ("TEST01",),
    "bert-99.9": ("TEST01",),
    "3d-unet-99": ("TEST01",),
    "3d-unet-99.9": ("TEST01",),
    "stable-diffusion-xl": ("TEST01", "TEST04"),
    "rgat": ("TEST01",),
    "pointpainting": ("TEST01", "TEST04"),
    "whisper": ("TEST01",),
    "yolo-99": ("TEST01",),
    "yolo-95": ("TEST01",),
    "wan-2.2-t2v-a14b": ("TEST04",),
    "llama2-70b-99": ("TEST06",),
    "llama2-70b-99.9": ("TEST06",),
    "llama3.1-405b": ("TEST06",),
    "llama3.1-8b": ("TEST06",),
    "llama3.1-8b-edge": (),
    "mixtral-8x7b": ("TEST06",),
    "deepseek-r1": ("TEST06",),
    "gpt-oss-120b": ("TEST07", "TEST09"),
    "dlrm-v3": ("TEST08",),
    "qwen3-vl-235b-a22b": (),
}

# REQUIRED_ACC_BENCHMARK[...]["v6.0"]: ten generated images (SDXL) or videos (WAN-2.2) and the captions
# file; this checker fails the result in every division without them.
_EXTRA = official("HEAD", "tools/submission/submission_checker/constants.py", "REQUIRED_ACC_BENCHMARK")
ACCURACY_ARTIFACTS = {
    "stable-diffusion-xl": AccuracyArtifacts(
        folder="images",
        stems=("1311", "2476", "3644", "2188", "4114", "52", "388", "1195", "3427", "2289"),
        suffix=".png",
        required_in_open=True,
        source=_EXTRA + '["stable-diffusion-xl"]["v6.0"]',
    ),
    "wan-2.2-t2v-a14b": AccuracyArtifacts(
        folder="videos",
        stems=("130", "106", "84", "59", "12", "31", "86", "122", "233", "96"),
        suffix=".mp4",
        required_in_open=True,
        source=_EXTRA + '["wan-2.2-t2v-a14b"]["v6.0"]',
    ),
}

ROUND = InferenceRound(
    name=TAG,
    benchmarks=BENCHMARKS,
    seeds=SEEDS[TAG],
    server_field=COMPLETED,  # RESULT_FIELD_NEW["v6.0"]["Server"]
    layout=Layout.RESULTS,
    result_fields=RESULT_FIELDS,
    audits=AUDITS,
    accuracy_artifacts=ACCURACY_ARTIFACTS,
    source=CHECKER,
)

__all__ = ["BENCHMARKS", "ROUND"]
