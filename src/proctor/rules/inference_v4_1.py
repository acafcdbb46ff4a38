"""The MLPerf Inference v4.1 round's benchmarks, as its official checker and mlperf.conf state them.

Sources (mlcommons/inference, tag v4.1): tools/submission/submission_checker.py MODEL_CONFIG["v4.1"]
(models, required scenarios, accuracy targets and upper limits, performance sample counts,
latency constraints, seeds), OFFLINE_MIN_SPQ_SINCE_V4, RESULT_FIELD_NEW / RESULT_FIELD_BENCHMARK_OVERWRITE
["v4.1"], LLM_LATENCY_LIMITS, the compliance test lists of check_compliance_dir; and mlperf.conf
(Server target_latency, ttft/tpot, performance_sample_count_override, seeds). Accuracy-dataset sizes
are the official checker's "dataset-size" table of tag v5.1 (the first to state them; the datasets
did not change), except DLRMv2's, which that table gives two ways (204800 at v5.1, 330067 at v5.1.1):
left unchecked.
"""

from __future__ import annotations

from proctor.rules.inference import Benchmark, Category, GenerationBound, Suite
from proctor.rules.inference_rounds import (
    COMPLETED,
    COMPLETED_TOKENS,
    INFERRED_COMPLETED_TOKENS,
    INFERRED_TOKENS,
    MAPPING_V41,
    TOKENS,
    AccuracyArtifacts,
    InferenceRound,
    folder_names,
    latency,
    level,
    official,
    target,
    tokens,
    two_levels,
)
from proctor.rules.rounds import SEEDS

TAG = "v4.1"
CHECKER = official(TAG, "tools/submission/submission_checker.py", 'MODEL_CONFIG["v4.1"]')
CONF = official(TAG, "mlperf.conf")
LLM_LIMITS = official(TAG, "tools/submission/submission_checker.py", "LLM_LATENCY_LIMITS")
DATASET_SIZES = official("v5.1", "tools/submission/submission_checker.py", '"dataset-size"')

_SS, _MS, _SRV, _INT, _OFF = (
    Category.SINGLE_STREAM,
    Category.MULTI_STREAM,
    Category.SERVER,
    Category.INTERACTIVE,
    Category.OFFLINE,
)
_DC, _EDGE = Suite.DATACENTER, Suite.EDGE


RESNET = Benchmark(
    name="resnet50",
    display="Resnet50-v1.5",
    aliases=("resnet", "resnet50-v1.5"),
    area="Vision",
    task="Image classification",
    dataset="ImageNet (224x224)",
    qsl_size={_DC: 1024, _EDGE: 1024},
    quality=(level(0.99, "FP32", target("accuracy", 76.46, "%")),),
    sample="one image",
    latency={_SRV: latency(15, CONF)},
    required={_DC: ((_SRV,), (_OFF,)), _EDGE: ((_SS,), (_MS,), (_OFF,))},
    accuracy_dataset_size=50_000,
    source=CHECKER,
)
RETINANET = Benchmark(
    name="retinanet",
    display="Retinanet",
    area="Vision",
    task="Object detection (large)",
    dataset="OpenImages (800x800)",
    qsl_size={_DC: 64, _EDGE: 64},
    quality=(level(0.99, "FP32", target("mAP", 37.55, "%")),),
    sample="one image",
    latency={_SRV: latency(100, CONF)},
    required={_DC: ((_SRV,), (_OFF,)), _EDGE: ((_SS,), (_MS,), (_OFF,))},
    accuracy_dataset_size=24_781,
    source=CHECKER,
)
BERT = Benchmark(
    name="bert",
    display="BERT",
    aliases=("bert-large",),
    area="Language",
    task="Language processing",
    dataset="SQuAD v1.1 (max_seq_len=384)",
    qsl_size={_DC: 10833, _EDGE: 10833},
    quality=two_levels("FP32", target("f1", 90.874, "%")),
    sample="one sequence",
    latency={_SRV: latency(130, CONF)},
    required={_DC: ((_SRV,), (_OFF,)), _EDGE: ((_SS,), (_OFF,))},
    accuracy_dataset_size=10833,
    source=CHECKER,
    notes="v4.1 lists only bert-99 for edge; proctor's table bounds levels per benchmark, not per suite.",
)
DLRM_V2 = Benchmark(
    name="dlrm-v2",
    display="DLRMv2",
    aliases=("dlrmv2", "dlrm-dcnv2"),
    area="Commerce",
    task="Recommendation",
    dataset="Criteo 1TB Click Logs (multi-hot)",
    qsl_size={_DC: 204800},
    quality=two_levels("FP32", target("AUC", 80.31, "%")),
    sample="one user-item interaction record",
    latency={_SRV: latency(60, CONF)},
    required={_DC: ((_SRV,), (_OFF,))},
    source=CHECKER,
)
UNET = Benchmark(
    name="3d-unet",
    display="3D UNET",
    aliases=("3dunet", "3d-unet-kits19"),
    area="Vision",
    task="Medical image segmentation",
    dataset="KiTS 2019",
    qsl_size={_DC: 43, _EDGE: 43},
    quality=two_levels("FP32", target("DICE", 0.86170)),
    sample="one image",
    required={_DC: ((_OFF,),), _EDGE: ((_SS,), (_OFF,))},
    accuracy_dataset_size=43,
    source=CHECKER,
    notes="Reference DICE 0.86170 and 43 samples as the official checker states them for this round.",
)
GPTJ = Benchmark(
    name="gptj",
    display="GPT-J",
    aliases=("gpt-j", "gptj-6b"),
    area="Language",
    task="Summarization",
    dataset="CNN Dailymail (v3.0.0, max_seq_len=2048)",
    qsl_size={_DC: 13368, _EDGE: 13368},
    quality=two_levels("FP32", target("rouge1", 42.9865), target("rouge2", 20.1235), target("rougeL", 29.9881)),
    generation=(GenerationBound("gen_len", 4016878, low=0.9),),
    sample="one sequence",
    # GPT-J infers token latencies (infer_token_latencies = 1): its Server bound is one latency.
    latency={_SRV: latency(20_000, CONF)},
    required={_DC: ((_SRV,), (_OFF,)), _EDGE: ((_SS,), (_OFF,))},
    parameters={"max_new_tokens": 128},
    accuracy_dataset_size=13368,
    source=CHECKER,
)
LLAMA2_70B = Benchmark(
    name="llama2-70b",
    display="Llama2-70b",
    area="Language",
    task="Question Answering",
    dataset="OpenOrca (max_seq_len=1024)",
    qsl_size={_DC: 24576},
    quality=two_levels("FP32", target("rouge1", 44.4312), target("rouge2", 22.0352), target("rougeL", 28.6162)),
    generation=(GenerationBound("tokens_per_sample", 294.45, low=0.9, high=1.1),),
    sample="one sequence",
    latency={_SRV: tokens(2000, 200, LLM_LIMITS)},
    required={_DC: ((_SRV,), (_OFF,))},
    parameters={"max_new_tokens": 1024},
    accuracy_dataset_size=24576,
    source=CHECKER,
)
SDXL = Benchmark(
    name="stable-diffusion-xl",
    display="Stable Diffusion XL",
    aliases=("sdxl", "stable-diffusion-xl-base"),
    area="Generative",
    task="Text to image",
    dataset="COCO 2014 captions (5000 prompts)",
    qsl_size={_DC: 5000, _EDGE: 5000},
    # Not a fraction of a reference: the checker's accuracy-target and accuracy-upper-limit ranges.
    quality=(
        level(
            0.99,
            "FP32",
            target("CLIP_SCORE", None, threshold=31.68631873, upper=31.81331801),
            target("FID_SCORE", None, threshold=23.01085758, upper=23.95007626),
        ),
    ),
    sample="one prompt",
    latency={_SRV: latency(20_000, CONF)},
    required={_DC: ((_SRV,), (_OFF,)), _EDGE: ((_SS,), (_OFF,))},
    accuracy_dataset_size=5000,
    source=CHECKER,
)
MIXTRAL = Benchmark(
    name="mixtral-8x7b",
    display="Mixtral-8x7B",
    area="Language",
    task="Text Generation (Question Answering, Math and Code Generation)",
    dataset="OpenOrca, GSM8K, MBXP (5k samples each, max_seq_len=2048)",
    qsl_size={_DC: 15000},
    quality=(
        level(
            0.99,
            "FP16",
            target("rouge1", 45.4911),
            target("rouge2", 23.2829),
            target("rougeL", 30.3615),
            target("gsm8k", 73.78, "%"),
            target("mbxp", 60.12, "%"),
        ),
    ),
    generation=(GenerationBound("tokens_per_sample", 145.9, low=0.9, high=1.1),),
    sample="one sequence",
    latency={_SRV: tokens(2000, 200, LLM_LIMITS)},
    required={_DC: ((_SRV,), (_OFF,))},
    parameters={"max_new_tokens": 1024},
    accuracy_dataset_size=15000,
    source=CHECKER,
)

BENCHMARKS: tuple[Benchmark, ...] = (RESNET, RETINANET, BERT, DLRM_V2, UNET, GPTJ, LLAMA2_70B, SDXL, MIXTRAL)

# RESULT_FIELD_BENCHMARK_OVERWRITE["v4.1"]: the token benchmarks' metrics (GPT-J's are inferred).
RESULT_FIELDS = {
    "gptj": {_OFF: INFERRED_TOKENS, _SRV: INFERRED_COMPLETED_TOKENS},
    "llama2-70b": {_OFF: TOKENS, _SRV: COMPLETED_TOKENS},
    "mixtral-8x7b": {_OFF: TOKENS, _SRV: COMPLETED_TOKENS},
}

# check_compliance_dir at tag v4.1: TEST01/TEST04/TEST05, less the removals it lists per model,
# TEST06 for the token LLMs.
AUDITS: dict[str, tuple[str, ...]] = {
    "resnet": ("TEST01", "TEST04", "TEST05"),
    "retinanet": ("TEST01", "TEST05"),
    "bert-99": ("TEST01", "TEST05"),
    "bert-99.9": ("TEST01", "TEST05"),
    "dlrm-v2-99": ("TEST01", "TEST05"),
    "dlrm-v2-99.9": ("TEST01", "TEST05"),
    "3d-unet-99": ("TEST01", "TEST05"),
    "3d-unet-99.9": ("TEST01", "TEST05"),
    "gptj-99": (),
    "gptj-99.9": (),
    "llama2-70b-99": ("TEST06",),
    "llama2-70b-99.9": ("TEST06",),
    "stable-diffusion-xl": ("TEST01", "TEST04"),
    "mixtral-8x7b": ("TEST06",),
}

# REQUIRED_ACC_BENCHMARK["stable-diffusion-xl"]["v4.1"]: ten of the generated images and the captions
# file in accuracy/images/ (the checker of this tag has no switch to skip it).
ACCURACY_ARTIFACTS = {
    "stable-diffusion-xl": AccuracyArtifacts(
        folder="images",
        stems=("4655", "2569", "1303", "109", "4509", "3009", "2179", "1826", "2094", "3340"),
        suffix=".png",
        required_in_open=False,
        source=official(TAG, "tools/submission/submission_checker.py", 'REQUIRED_ACC_BENCHMARK["stable-diffusion-xl"]'),
    )
}

# get_mlperf_model: the folder names the round's checker maps to its model names
FOLDER_NAMES = folder_names(
    MAPPING_V41, official("v4.1", "tools/submission/submission_checker.py", 'MODEL_CONFIG["v4.1"]["model_mapping"]')
)

ROUND = InferenceRound(
    name=TAG,
    benchmarks=BENCHMARKS,
    seeds=SEEDS[TAG],
    server_field=COMPLETED,  # RESULT_FIELD_NEW["v4.1"]["Server"]
    result_fields=RESULT_FIELDS,
    audits=AUDITS,
    # MODEL_CONFIG["v4.1"]["test05_seeds"] = mlperf.conf's test05_*_rng_seed
    test05_seeds=(16799458546791641818, 5453809927556429288, 5435552105434836064),
    accuracy_artifacts=ACCURACY_ARTIFACTS,
    folder_names=FOLDER_NAMES,
    source=CHECKER,
)

__all__ = ["BENCHMARKS", "ROUND"]
