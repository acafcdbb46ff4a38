"""The MLPerf Inference benchmarks as data: one typed row per benchmark, each traceable to the rules.

Every number here is copied from the MLPerf Inference rules (the "Inference rules" document,
inference_rules.adoc), and `source` fields name the table or appendix it comes from. Where the rules text has no number and the
shipped `mlperf.conf` does (e.g. the ResNet50 Server bound), the row says so in its `source`.

Names are the official `mlperf.conf` model names (`llama3_1-8b`, `resnet50`); the rules' display
names ("Llama3.1-8B") and the submission-layout names (`llama3.1-8b`, `resnet`, `llama2-70b-99.9`,
`llama2-70b-interactive-99`) resolve through `resolve()`.
"""

from __future__ import annotations

import math
import re
from enum import StrEnum

from proctor.typed_records import field, record

RULES = "Inference rules"
DC_TABLE = f"{RULES} §Benchmarks, Datacenter suite table"
EDGE_TABLE = f"{RULES} §Benchmarks, Edge suite table"
DC_REQUIRED = f"{RULES} [[dc-required-scenarios]]"
EDGE_REQUIRED = f"{RULES} [[edge-required-scenarios]]"
PARAMS_TABLE = f"{RULES} §Additional inference parameters"
SAMPLE_TABLE = f"{RULES} §Scenarios, 'definition of one sample' table"
BW_INGRESS = f"{RULES} [[appendix-bw]] Ingress Bandwidth"
BW_EGRESS = f"{RULES} [[appendix-bw]] Egress Bandwidth"
SPEC_DECODING = f"{RULES} [[appendix-speculative-decoding]]"
PROCTOR_WORKLOAD = "proctor reference workload (proctor.workloads.digits), not an MLPerf rules table"
CONF = "shipped mlperf.conf (loadgen 6.0.17)"
OFFICIAL_DATASET = (
    "official checker constants (tools/submission/submission_checker/constants.py, v6.1 'dataset-size')"
)
OFFICIAL_ACC_COUNT = (
    "official checker constants (v6.1 'accuracy-sample-count') and the shipped mlperf.conf "
    "(accuracy_sample_count_override)"
)
NETWORK_QSL_TABLE = f"{RULES} §Network Division, Benchmarks and QSL Preprocessing table"
NETWORK_GENERAL = f"{RULES} §Network Division, General Constraints"
NETWORK_SETUP = f"{RULES} §Network Division, SUT over the Network and Setup Constraints"
NETWORK_QDL = f"{RULES} §Network Division, QDL Constraints"
DC_MINIMUM = f"{RULES} §Benchmarks, Minimum requirements of a datacenter system"
# The FP32 reference DICE: the reference implementation's README measures 0.86170 and the official
# checker bounds by it; the rules' table transcribes 0.86330 (docs/deviations.md, issue 21: tables).
UNET_DICE_SRC = (
    "mlcommons/inference vision/medical_imaging/3d-unet-kits19/README.md (FP32 'mean = 0.86170') and "
    "the official checker's accuracy-target; the rules' table says 0.86330 (checked as a warning)"
)
# NE is torchrec's normalized entropy (cross entropy / entropy of the background rate): lower is better.
DLRM_NE_SRC = (
    "mlcommons/inference recommendation/dlrm_v3 (utils.py: torchrec NEMetricComputation; README: "
    "'within 99.9% of the reference'); the official checker's v6.1 table bounds DLRM_NE from below"
)

# §Scenarios table: "Duration 600 seconds" for every scenario.
MIN_DURATION_MS = 600_000
# §Scenarios table: Offline "At least 24,576" samples per query, or N when the accuracy dataset is smaller.
OFFLINE_MIN_SAMPLES = 24_576
# §Scenarios table: Multistream "Samples/query 8".
MULTISTREAM_SAMPLES_PER_QUERY = 8
# §Inferred results (edge): multistream = 8 x SS p99; offline = 8000 / MS mean ms; offline = 1000 / SS mean ms.
INFERRED_MS_FACTOR = 8
INFERRED_OFFLINE_FROM_MS_NUMERATOR = 8000.0
INFERRED_OFFLINE_FROM_SS_NUMERATOR = 1000.0
# §Benchmarks: "Accuracy results must be reported to five significant figures with round to even."
ACCURACY_SIGNIFICANT_FIGURES = 5


# The fields every measurements JSON must fill: the official checker's SYSTEM_IMP_REQUIRED_FILES
# (tools/submission/submission_checker.py, v5.1); read by proctor's checker and `submission init`.
MEASUREMENT_FIELDS = (
    "input_data_types", "retraining", "starting_weights_filename", "weight_data_types", "weight_transformations",
)  # fmt: skip

# The fields every system description holds: the official SYSTEM_DESC_REQUIRED_FIELDS, the same list at
# tags v4.1, v5.0.1, v5.1.1 and HEAD (tools/submission/submission_checker.py; HEAD:
# submission_checker/constants.py, where network_speed_mbit is commented out).
SYSTEM_FIELDS = (
    "division", "submitter", "status", "system_name", "number_of_nodes", "host_processor_model_name",
    "host_processors_per_node", "host_processor_core_count", "host_memory_capacity", "host_storage_capacity",
    "host_storage_type", "accelerators_per_node", "accelerator_model_name", "accelerator_memory_capacity",
    "framework", "operating_system", "system_type", "other_software_stack", "host_processor_frequency",
    "host_processor_caches", "host_memory_configuration", "host_processor_interconnect", "host_networking",
    "host_networking_topology", "accelerator_frequency", "accelerator_host_interconnect",
    "accelerator_interconnect", "accelerator_interconnect_topology", "accelerator_memory_configuration",
    "accelerator_on-chip_memories", "cooling", "hw_notes", "sw_notes", "host_network_card_count",
    "system_type_detail",
)  # fmt: skip
# Of those, the ones that must hold a meaningful response: SYSTEM_DESC_MEANINGFUL_RESPONSE_REQUIRED_FIELDS
# (the same 26 at every tag above). Read by proctor's checker and `submission init`.
SYSTEM_MEANINGFUL = (
    "division", "submitter", "system_type", "status", "system_name", "number_of_nodes",
    "host_processor_model_name", "host_processors_per_node", "host_processor_core_count", "host_memory_capacity",
    "host_memory_configuration", "host_storage_capacity", "host_storage_type", "host_networking",
    "host_network_card_count", "host_networking_topology", "accelerators_per_node", "accelerator_model_name",
    "accelerator_memory_capacity", "accelerator_host_interconnect", "accelerator_memory_configuration",
    "accelerator_interconnect", "cooling", "framework", "operating_system", "other_software_stack",
)  # fmt: skip


def empty_response(value: object) -> bool:
    """Whether the official checker calls a JSON value empty: `not value` (check_system_desc_id,
    check_measurement_dir), so "", 0, 0.0, false, null, [] and {} are empty, and "0" or " " are not."""
    return not value


# §Network Division, General Constraints: "Currently permitted fabric interconnects are Ethernet,
# IEEE802.11, Infiniband, and 3GPP" and "Examples of forbidden bus interconnect include:
# PCIe/CXL/CCIX, Hypertransport, NVLink, QPI, UPI, and ICI (interchip interconnect)".
PERMITTED_FABRICS = ("ethernet", "ieee802.11", "infiniband", "3gpp")
FORBIDDEN_BUS_INTERCONNECTS = ("PCIe", "CXL", "CCIX", "HyperTransport", "NVLink", "QPI", "UPI", "ICI")
# §Network Division, Benchmarks and QSL Preprocessing: the compression options of the table.
COMPRESSION_OPTIONS = {
    "none": "No compression",
    "lossless": "Lossless compression",
    "original": "The original compression of the dataset (JPEG)",
}


class Suite(StrEnum):
    DATACENTER = "datacenter"
    EDGE = "edge"


class Category(StrEnum):
    """The scenario directory names of a submission; Interactive is Server with tighter limits."""

    SINGLE_STREAM = "SingleStream"
    MULTI_STREAM = "MultiStream"
    SERVER = "Server"
    INTERACTIVE = "Interactive"
    OFFLINE = "Offline"


@record(frozen=True, slots=True)
class QualityTarget:
    """One metric's bound: `threshold` when the rules give it, else `fraction` x `reference`."""

    metric: str
    reference: float | None  # the FP32/FP16/BF16 reference value, in `unit`
    unit: str = ""  # "%" or "" (a fraction or a plain score)
    threshold: float | None = None  # a bound the rules state directly (e.g. Qwen3-VL ">= 0.7824")
    higher_is_better: bool = True
    # Lower-is-better only: True bounds the complement (100 - WER >= fraction x (100 - ref), the
    # official whisper form); False bounds the value itself (NE <= ref x (2 - fraction)).
    complement: bool = False
    source: str = ""  # where the direction (or a bound not in the rules' table) comes from
    # A second reference another source gives for the same metric: a result that meets `reference`
    # but not this one gets a warning (3D-UNet: the rules text's 0.86330 beside the reference's 0.86170).
    advisory_reference: float | None = None
    upper: float | None = None  # a stated upper bound too (an older round's SDXL CLIP/FID range)


@record(frozen=True, slots=True)
class QualityLevel:
    """One accuracy level (99 %, 99.9 %, ...) and the metrics it bounds."""

    fraction: float
    precision: str  # "FP32", "FP16", "BF16", ...
    targets: tuple[QualityTarget, ...]

    @property
    def suffix(self) -> str:
        """The submission-name suffix: 0.99 -> "99", 0.999 -> "99.9"."""
        return f"{self.fraction * 100:g}"

    def threshold(self, target: QualityTarget) -> float | None:
        """The bound a result must reach (higher-is-better) or stay within (lower-is-better)."""
        if target.threshold is not None:
            return target.threshold
        if target.reference is None:
            return None
        if target.higher_is_better:
            return target.reference * self.fraction
        if target.complement:
            return 100.0 - self.fraction * (100.0 - target.reference)
        return target.reference * (2.0 - self.fraction)


@record(frozen=True, slots=True)
class GenerationBound:
    """LLM output-length bound: `low` (and `high`) fractions of the reference value, exclusive."""

    metric: str  # "tokens_per_sample" or "gen_len" (total generated length)
    reference: float
    low: float = 0.9
    high: float | None = None


@record(frozen=True, slots=True)
class LatencyLimit:
    """A Server or Interactive bound: one latency (ns) or TTFT and TPOT p99 limits (ns)."""

    latency_ns: int | None = None
    ttft_ns: int | None = None
    tpot_ns: int | None = None
    source: str = DC_TABLE

    @property
    def uses_tokens(self) -> bool:
        return self.ttft_ns is not None


@record(frozen=True, slots=True)
class Bandwidth:
    """Bytes per sample of one direction: `per_dtype` x dtype_size + `fixed`; None = "> 0"."""

    per_dtype: int | None = None
    fixed: int | None = None
    formula: str = "negligible"
    note: str = ""

    @property
    def negligible(self) -> bool:
        return self.per_dtype is None and self.fixed is None

    def bytes_per_second(self, throughput: float, dtype_size: int) -> float:
        if self.negligible:
            return 0.0
        return throughput * ((self.per_dtype or 0) * dtype_size + (self.fixed or 0))


@record(frozen=True, slots=True)
class SpeculativeDecoding:
    scenario: str
    algorithm: str
    configuration: str
    head: str


@record(frozen=True, slots=True)
class Benchmark:
    name: str  # mlperf.conf model name
    display: str  # the rules' name
    area: str
    task: str
    dataset: str
    qsl_size: dict[Suite, int]  # one entry per suite the benchmark belongs to
    quality: tuple[QualityLevel, ...]
    sample: str  # definition of one sample
    aliases: tuple[str, ...] = ()
    generation: tuple[GenerationBound, ...] = ()
    latency: dict[Category, LatencyLimit] = field(default_factory=dict)
    # Per suite: each inner tuple is one requirement; any one scenario of it satisfies it.
    required: dict[Suite, tuple[tuple[Category, ...], ...]] = field(default_factory=dict)
    parameters: dict[str, int] = field(default_factory=dict)
    ingress: Bandwidth | None = None  # None: the appendix has no row
    egress: Bandwidth | None = None
    speculative: tuple[SpeculativeDecoding, ...] = ()
    accuracy_dataset_size: int | None = None  # the accuracy run's dataset (one copy), every suite
    accuracy_dataset_by_suite: dict[Suite, int] = field(default_factory=dict)  # where the suites differ
    accuracy_dataset_source: str = ""
    # Counts the official checker expects for one category where the rules give none: accepted with
    # a warning (e.g. its 8,000-sample Qwen3-VL Interactive subset).
    accuracy_dataset_tolerated: dict[Category, int] = field(default_factory=dict)
    # Network division (§Benchmarks and QSL Preprocessing): the QSL-side compression the rules allow
    # ("none", "lossless", "original": the dataset's own JPEG); absent from the table = none.
    network_compression: tuple[str, ...] = ("none",)
    accuracy_only: bool = False
    source: str = DC_TABLE
    notes: str = ""

    @property
    def suites(self) -> tuple[Suite, ...]:
        return tuple(self.qsl_size)

    @property
    def is_llm(self) -> bool:
        """Token-latency benchmarks: TTFT/TPOT limits, metric in tokens per second."""
        return any(limit.uses_tokens for limit in self.latency.values())

    def level(self, fraction: float | None = None) -> QualityLevel:
        if fraction is None:
            return self.quality[0]
        for lvl in self.quality:
            if abs(lvl.fraction - fraction) < 1e-12:
                return lvl
        raise KeyError(f"{self.name}: no {fraction * 100:g}% quality level in the rules")

    def dataset_size(self, suite: Suite | None = None) -> int | None:
        """The accuracy run's dataset in `suite` (one copy); None where no source gives it."""
        if suite is not None and suite in self.accuracy_dataset_by_suite:
            return self.accuracy_dataset_by_suite[suite]
        if self.accuracy_dataset_size is not None:
            return self.accuracy_dataset_size
        if suite is None and self.accuracy_dataset_by_suite:
            return max(self.accuracy_dataset_by_suite.values())  # unknown suite: the strictest
        return None

    def offline_min_samples(self, suite: Suite | None = None) -> int:
        """§Scenarios note **: at least 24,576 samples, or N if the accuracy dataset (of `suite`:
        Llama3.1-8B has 13,368 in the datacenter, 5,000 on the edge) has N < 24,576. N is never taken
        below the suite's QSL size, which is drawn from that dataset (GPT-OSS-120B: 6,396, as the
        official checker, although its accuracy run logs 4,395)."""
        sizes = (
            [self.qsl_size[suite]]
            if suite is not None and suite in self.qsl_size
            else list(self.qsl_size.values())
        )
        n = max([self.dataset_size(suite) or 0, *sizes])
        return min(OFFLINE_MIN_SAMPLES, n or OFFLINE_MIN_SAMPLES)


def _ms(value: float) -> int:
    return round(value * 1_000_000)


def _tok(ttft_ms: float, tpot_ms: float, source: str = DC_TABLE) -> LatencyLimit:
    return LatencyLimit(ttft_ns=_ms(ttft_ms), tpot_ns=_ms(tpot_ms), source=source)


def _per_sample(symbols: str, *sizes: int) -> Bandwidth:
    """The appendix's `symbols*dtype_size` bytes a sample, the sizes given once and multiplied out."""
    return Bandwidth(
        math.prod(sizes), formula=f"{symbols}*dtype_size = {'*'.join(map(str, sizes))}*dtype_size"
    )


def _lvl(fraction: float, precision: str, *targets: QualityTarget) -> QualityLevel:
    return QualityLevel(fraction, precision, targets)


def _both_levels(precision: str, *targets: QualityTarget) -> tuple[QualityLevel, ...]:
    """The 99 % and 99.9 % levels of a benchmark whose rules row bounds the same metrics at both."""
    return (_lvl(0.99, precision, *targets), _lvl(0.999, precision, *targets))


def _t(metric: str, reference: float | None, unit: str = "", **kw: object) -> QualityTarget:
    return QualityTarget(metric, reference, unit, **kw)  # type: ignore[arg-type]


_SS, _MS, _SRV, _INT, _OFF = (
    Category.SINGLE_STREAM,
    Category.MULTI_STREAM,
    Category.SERVER,
    Category.INTERACTIVE,
    Category.OFFLINE,
)
_DC, _EDGE = Suite.DATACENTER, Suite.EDGE
_NEG = Bandwidth()

BENCHMARKS: tuple[Benchmark, ...] = (
    Benchmark(
        name="resnet50",
        display="Resnet50-v1.5",
        aliases=("resnet", "resnet50-v1.5"),
        area="Vision",
        task="Image classification",
        dataset="ImageNet (224x224)",
        qsl_size={_DC: 1024, _EDGE: 1024},
        quality=(_lvl(0.99, "FP32", _t("accuracy", 76.46, "%")),),
        sample="one image",
        latency={_SRV: LatencyLimit(latency_ns=_ms(15), source=CONF)},
        required={_DC: ((_SRV,), (_OFF,)), _EDGE: ((_SS,), (_MS,), (_OFF,))},
        ingress=_per_sample("C*H*W", 3, 224, 224),
        egress=_NEG,
        accuracy_dataset_size=50_000,
        accuracy_dataset_source=OFFICIAL_DATASET,
        network_compression=("none", "lossless", "original"),
        source=EDGE_TABLE,
        notes="No datacenter row in the rules' table; the datacenter required-scenarios table lists "
        "Image classification (Server, Offline) and the bandwidth appendix lists it. Server bound "
        "(15 ms) and the 50,000-image ImageNet validation set are from mlperf.conf / the dataset.",
    ),
    Benchmark(
        name="retinanet",
        display="Retinanet",
        aliases=(),
        area="Vision",
        task="Object detection (large)",
        dataset="OpenImages (800x800)",
        qsl_size={},
        quality=(),
        sample="one image",
        latency={_SRV: LatencyLimit(latency_ns=_ms(100), source=CONF)},
        ingress=_per_sample("C*H*W", 3, 800, 800),
        egress=_NEG,
        accuracy_dataset_size=24_781,
        accuracy_dataset_source=f"{OFFICIAL_DATASET.replace('v6.1', 'v6.0')}",
        network_compression=("none", "lossless", "original"),
        source=BW_INGRESS,
        notes="Only in the bandwidth appendix and the network-division QSL table; in no suite table.",
    ),
    Benchmark(
        name="yolo",
        display="YOLO11l",
        aliases=("yolo11l",),
        area="Vision",
        task="Object detection",
        dataset="COCO 2017 MLPerf subset (1525 images, 80 classes)",
        qsl_size={_EDGE: 64},
        quality=(
            _lvl(0.95, "FP32", _t("mAP", None, threshold=0.5073)),
            _lvl(0.99, "FP32", _t("mAP", None, threshold=0.5287)),
        ),
        sample="one image",
        required={_EDGE: ((_SS,), (_MS,), (_OFF,))},
        accuracy_dataset_size=1525,
        accuracy_dataset_source=f"{EDGE_TABLE} dataset column ('1525 images'; = {OFFICIAL_DATASET})",
        source=EDGE_TABLE,
    ),
    Benchmark(
        name="3d-unet",
        display="3D UNET",
        aliases=("3dunet", "3d-unet-kits19"),
        area="Vision",
        task="Medical image segmentation",
        dataset="KiTS 2019",
        qsl_size={_DC: 42, _EDGE: 42},
        quality=_both_levels("FP32", _t("DICE", 0.86170, source=UNET_DICE_SRC, advisory_reference=0.86330)),
        sample="one image",
        required={_DC: ((_OFF,),), _EDGE: ((_SS,), (_OFF,))},
        accuracy_dataset_size=43,
        accuracy_dataset_source=f"{OFFICIAL_DATASET}; mlperf.conf 3d-unet.Offline.min_query_count = 43 "
        "(the rules' QSL Size column says 42)",
        network_compression=("none", "lossless"),
        ingress=_per_sample("avg(C*D*H*W)", 32944795),
        egress=_per_sample("avg(C*D*H*W)", 32944795),
    ),
    Benchmark(
        name="bert",
        display="BERT",
        aliases=("bert-large",),
        area="Language",
        task="Language processing",
        dataset="SQuAD v1.1 (max_seq_len=384)",
        qsl_size={_EDGE: 10833},
        quality=_both_levels("FP32", _t("f1", 90.874, "%")),
        sample="one sequence",
        required={_EDGE: ((_SS,), (_OFF,))},
        ingress=_per_sample("num_inputs*max_seq_len", 3, 384),
        egress=_NEG,
        accuracy_dataset_size=10833,
        accuracy_dataset_source=f"{EDGE_TABLE} 'QSL Size' (= {OFFICIAL_DATASET})",
        network_compression=("none", "lossless"),
        source=EDGE_TABLE,
    ),
    Benchmark(
        name="llama3_1-8b",
        display="Llama3.1-8B",
        aliases=("llama3.1-8b", "llama3_1-8b-edge", "llama3.1-8b-edge"),
        area="Language",
        task="Summarization",
        dataset="CNN Dailymail (v3.0.0, max_seq_len=2048)",
        qsl_size={_DC: 13368, _EDGE: 5000},
        quality=_both_levels("FP32", _t("rouge1", 42.9865), _t("rouge2", 20.1235), _t("rougeL", 29.9881)),
        generation=(GenerationBound("gen_len", 8167644, low=0.9),),
        sample="one sequence",
        latency={_SRV: _tok(2000, 100), _INT: _tok(500, 30)},
        required={_DC: ((_SRV, _INT), (_OFF,)), _EDGE: ((_SS,), (_OFF,))},
        parameters={"min_new_tokens": 1, "max_new_tokens": 128},
        ingress=_per_sample("max_seq_len", 2048),
        egress=_NEG,
        accuracy_dataset_by_suite={_DC: 13368, _EDGE: 5000},
        accuracy_dataset_source=f"{DC_TABLE} / {EDGE_TABLE} 'QSL Size' (= {OFFICIAL_DATASET})",
    ),
    Benchmark(
        name="llama2-70b",
        display="Llama2-70b",
        aliases=(),
        area="Language",
        task="Question Answering",
        dataset="OpenOrca (max_seq_len=1024)",
        qsl_size={_DC: 24576},
        quality=(_lvl(0.999, "FP32", _t("rouge1", 44.4312), _t("rouge2", 22.0352), _t("rougeL", 28.6162)),),
        generation=(GenerationBound("tokens_per_sample", 294.45, low=0.9),),
        sample="one sequence",
        latency={_SRV: _tok(2000, 200), _INT: _tok(450, 40)},
        required={_DC: ((_SRV, _INT), (_OFF,))},
        parameters={"max_new_tokens": 1024},
        ingress=_per_sample("max_seq_len", 1024),
        egress=_per_sample("max_output_len", 1024),
        accuracy_dataset_size=24576,
        accuracy_dataset_source=f"{DC_TABLE} 'QSL Size' (= {OFFICIAL_DATASET})",
        notes="The rules give only the 99.9% level; the official checker also knows llama2-70b-99.",
    ),
    Benchmark(
        name="llama3_1-405b",
        display="Llama3.1-405B",
        aliases=("llama3.1-405b",),
        area="Language",
        task="Text Generation",
        dataset="Subset of LongBench, LongDataCollections, Ruler, GovReport",
        qsl_size={_DC: 8313},
        quality=(_lvl(0.99, "FP16", _t("rougeL", 21.6666), _t("exact_match", 90.1335)),),
        generation=(GenerationBound("tokens_per_sample", 684.68, low=0.9, high=1.1),),
        sample="one sequence",
        latency={_SRV: _tok(6000, 175), _INT: _tok(4500, 80)},
        required={_DC: ((_SRV, _INT), (_OFF,))},
        parameters={"min_new_tokens": 2, "max_new_tokens": 20000},
        ingress=_per_sample("max_seq_len", 20000),
        egress=_per_sample("max_output_len", 20000),
        accuracy_dataset_size=8313,
        accuracy_dataset_source=f"{DC_TABLE} 'QSL Size' (= {OFFICIAL_DATASET})",
    ),
    Benchmark(
        name="mixtral-8x7b",
        display="Mixtral-8x7B",
        aliases=(),
        area="Language",
        task="Text Generation (Question Answering, Math and Code Generation)",
        dataset="OpenOrca, GSM8K, MBXP (5k samples each, max_seq_len=2048)",
        qsl_size={_DC: 15000},
        quality=(
            _lvl(
                0.99,
                "FP16",
                _t("rouge1", 45.5989),
                _t("rouge2", 23.3526),
                _t("rougeL", 30.4608),
                _t("gsm8k", 73.66, "%"),
                _t("mbxp", 60.16, "%"),
            ),
        ),
        generation=(GenerationBound("tokens_per_sample", 144.84, low=0.9, high=1.1),),
        sample="one sequence",
        latency={_SRV: _tok(2000, 200)},
        required={_DC: ((_SRV, _INT), (_OFF,))},
        parameters={"min_new_tokens": 2, "max_new_tokens": 1024},
        ingress=_per_sample("max_seq_len", 2048),
        egress=_per_sample("max_output_len", 2048),
        accuracy_dataset_size=15000,
        accuracy_dataset_source=f"{DC_TABLE} 'QSL Size' (= {OFFICIAL_DATASET.replace('v6.1', 'v6.0')})",
        notes="Only one (Server) TTFT/TPOT pair in the rules: an Interactive result has no limit to meet.",
    ),
    Benchmark(
        name="deepseek-r1",
        display="DeepSeek-r1",
        aliases=("deepseek",),
        area="Language",
        task="Reasoning",
        dataset="mlperf_deepseek_r1",
        qsl_size={_DC: 4388},
        quality=(_lvl(0.99, "FP16", _t("exact_match", 81.9132, "%")),),
        sample="one sequence",
        latency={_SRV: _tok(2000, 80), _INT: _tok(1500, 15)},
        required={_DC: ((_SRV,), (_OFF,))},
        parameters={"min_new_tokens": 1, "max_new_tokens": 20000},
        ingress=_per_sample("max_seq_len", 3136),
        egress=_per_sample("max_seq_len", 20000),
        accuracy_dataset_size=4388,
        accuracy_dataset_source=f"{DC_TABLE} 'QSL Size' (= {OFFICIAL_DATASET})",
        speculative=(
            SpeculativeDecoding(
                "Interactive",
                "EAGLE-style decoding with deepseek-ai/deepseek-r1 MTP head",
                "speculative-num-steps=3, speculative-eagle-topk=1.0",
                "https://huggingface.co/deepseek-ai/DeepSeek-R1",
            ),
        ),
    ),
    Benchmark(
        name="gpt-oss-120b",
        display="GPT-OSS-120B",
        aliases=("gpt-oss",),
        area="Language",
        task="Text Generation (Question Answering, Math and Code Generation)",
        dataset="AIME25, GPQA Diamond, LiveCodeBench v6",
        qsl_size={_DC: 6396},
        quality=(_lvl(0.99, "FP16", _t("exact_match", 83.13, "%")),),
        sample="one sequence",
        latency={_SRV: _tok(3000, 80), _INT: _tok(2000, 20)},
        required={_DC: ((_SRV, _INT), (_OFF,))},
        parameters={
            "min_new_tokens": 1,
            "max_new_tokens_accuracy": 32768,
            "max_new_tokens_performance": 10000,
        },
        ingress=_per_sample("max_seq_len", 15330),
        egress=Bandwidth(
            10000,
            formula="max_output_len*dtype_size = 10000*dtype_size (performance)",
            note="accuracy mode: 32768*dtype_size",
        ),
        accuracy_dataset_size=4395,
        accuracy_dataset_source=f"{OFFICIAL_ACC_COUNT}; the rules' QSL Size (6396) is the performance set",
        speculative=(
            SpeculativeDecoding(
                "Interactive",
                "EAGLE3-style decoding with nvidia/gpt-oss-120b-Eagle3-long-context MTP head",
                "speculative-num-steps=3, speculative-eagle-topk=1.0",
                "https://huggingface.co/nvidia/gpt-oss-120b-Eagle3-long-context",
            ),
        ),
        notes="Score = sum(dataset_correct / dataset_repeats) over AIME25 x8, GPQA x5, LiveCodeBench x3.",
    ),
    Benchmark(
        name="qwen3-vl-235b-a22b",
        display="Qwen3-VL-235B-A22B",
        aliases=("qwen3-vl",),
        area="Vision",
        task="Visual Language Model",
        dataset="Shopify Product Catalogue",
        qsl_size={_DC: 48289},
        quality=(_lvl(0.99, "BF16", _t("f1_hierarchical", None, threshold=0.7824)),),
        sample="one prompt that contains some text and a base64-encoded image",
        latency={_SRV: LatencyLimit(latency_ns=_ms(12000)), _INT: LatencyLimit(latency_ns=_ms(1500))},
        required={_DC: ((_SRV, _INT), (_OFF,))},
        ingress=Bandwidth(27051, formula="text+image+chat_template+http_header = 27051*dtype_size"),
        egress=Bandwidth(500, formula="json_response_size = ~500*dtype_size"),
        accuracy_dataset_size=48289,
        accuracy_dataset_source=f"{DC_TABLE} 'QSL Size' (= {OFFICIAL_DATASET})",
        accuracy_dataset_tolerated={_INT: 8000},
    ),
    Benchmark(
        name="dlrm-v3",
        display="DLRMv3",
        aliases=("dlrmv3",),
        area="Commerce",
        task="Recommendation",
        dataset="Synthetic Streaming 100B Dataset",
        qsl_size={_DC: 34996},
        quality=(
            _lvl(
                0.999,
                "FP32",
                _t("NE", 86.687, "%", higher_is_better=False, source=DLRM_NE_SRC),
                _t("accuracy", 69.651, "%"),
                _t("AUC", 78.663, "%"),
            ),
        ),
        sample="one request (containing one user history sequence and 2048 candidates)",
        latency={_SRV: LatencyLimit(latency_ns=_ms(80))},
        required={_DC: ((_SRV,), (_OFF,))},
        ingress=Bandwidth(
            fixed=98368,
            formula="(2 + 6*uih_seq_len + 6*num_candidates)*int64_size = 98368",
            note="int64 inputs: dtype_size does not apply",
        ),
        egress=_NEG,
        accuracy_dataset_size=349823,
        accuracy_dataset_source=f"{OFFICIAL_DATASET} (the rules' QSL Size 34996 is the requests the reference "
        "accuracy was evaluated on, README)",
        network_compression=("none", "lossless"),
    ),
    Benchmark(
        name="wan-2.2-t2v-a14b",
        display="WAN-2.2-T2V-A14B",
        aliases=("wan-2.2",),
        area="Generative",
        task="Text to video",
        dataset="VBench prompts",
        qsl_size={_DC: 248},
        quality=(_lvl(0.99, "BF16", _t("vbench_score", None, threshold=69.7752)),),
        sample="a pair of positive and negative prompts",
        required={_DC: ((_SS,), (_OFF,))},
        ingress=_NEG,
        egress=Bandwidth(
            224_870_400,
            formula="video_frames*height*width*channels*dtype_size = 81*720*1280*3*dtype_size",
            note="the rules' bandwidth column (224,870,400) is used; 81*720*1280*3 is 223,948,800",
        ),
        accuracy_dataset_size=248,
        accuracy_dataset_source=f"{DC_TABLE} 'QSL Size' (= {OFFICIAL_DATASET})",
    ),
    Benchmark(
        name="rgat",
        display="RGAT",
        aliases=(),
        area="Graph",
        task="Node classification",
        dataset="IGBH",
        qsl_size={_DC: 788379},
        quality=(_lvl(0.99, "FP32", _t("accuracy", 72.86, "%")),),
        sample="one node id",
        required={_DC: ((_OFF,),)},
        ingress=_NEG,
        egress=_NEG,
        accuracy_dataset_size=788379,
        accuracy_dataset_source=f"{DC_TABLE} 'QSL Size' (= {OFFICIAL_DATASET})",
    ),
    Benchmark(
        name="whisper",
        display="Whisper",
        aliases=(),
        area="Audio",
        task="Speech to Text",
        dataset="LibriSpeech",
        qsl_size={_DC: 1633, _EDGE: 1633},
        quality=_both_levels("FP32", _t("WER", 2.0671, "%", higher_is_better=False, complement=True)),
        sample="one audio",
        required={_DC: ((_OFF,),), _EDGE: ((_OFF,),)},
        accuracy_dataset_size=1633,
        accuracy_dataset_source=f"{DC_TABLE} 'QSL Size' (= {OFFICIAL_DATASET})",
        notes="A WER bound at 99% of FP32 is read as word accuracy: (100 - WER) >= 0.99 x (100 - 2.0671).",
    ),
    Benchmark(
        name="e2e-rag",
        display="E2E-RAG",
        aliases=("rag",),
        area="Language",
        task="Retrieval Augmented Generation",
        dataset="FRAMES (multi-hop QA over Wikipedia)",
        qsl_size={_DC: 824},
        quality=(_lvl(0.97, "FP32", _t("llm_judge_score", None, "%")),),
        sample="one multi-hop question",
        required={_DC: ((_OFF,),)},
        ingress=_NEG,
        egress=_NEG,
        accuracy_dataset_size=824,
        accuracy_dataset_source=f"{DC_TABLE} 'QSL Size' (= {OFFICIAL_DATASET} 'e2e-rag-qna')",
        notes="The rules give no fixed reference (LLM Judge score ~35% +/- ~3%): no automatic target.",
    ),
    Benchmark(
        name="pointpainting",
        display="PointPainting",
        aliases=(),
        area="Automotive",
        task="3D Object Detection",
        dataset="Waymo Open Dataset",
        qsl_size={_EDGE: 1024},
        quality=(_lvl(0.999, "FP32", _t("mAP", 0.5425)),),
        sample="five images and one lidar point cloud",
        required={_EDGE: ((_SS,),)},
        accuracy_dataset_size=39987,
        accuracy_dataset_source=OFFICIAL_DATASET.replace("v6.1", "v6.0"),
        source=EDGE_TABLE,
        notes="Single Stream with 99.9% tail latency.",
    ),
    Benchmark(
        name="qwen3.6-27b",
        display="Qwen3.6-27B",
        aliases=("qwen3_6-27b",),
        area="Language",
        task="Agentic Function Calling",
        dataset="gorilla-llm/gorilla-eval-set (BFCL v4 single-turn)",
        qsl_size={_EDGE: 995},
        quality=(
            _lvl(
                0.97,
                "Q4_K_M",
                _t("single_turn_overall", 86.23, "%", threshold=83.64),
                _t("non_live_normalized", 87.96, "%", threshold=85.32),
            ),
        ),
        sample="one function-calling prompt",
        required={_EDGE: ((_OFF,),)},
        speculative=(
            SpeculativeDecoding(
                "SingleStream",
                "Chain- or tree-based MTP using the reference Qwen3.6-27B MTP head",
                "Lossless (greedy-equivalent); num-steps / tree size submitter-reported",
                "https://huggingface.co/Qwen/Qwen3.6-27B",
            ),
        ),
        accuracy_dataset_size=995,
        accuracy_dataset_source=f"{EDGE_TABLE} 'QSL Size' (= {OFFICIAL_DATASET})",
        accuracy_only=True,
        source=EDGE_TABLE,
    ),
    # Not an MLPerf benchmark: proctor's own reference workload (proctor.workloads.digits), shaped like
    # an edge image-classification row so a whole submission can be built and checked on a laptop.
    # Numbers are that package's constants (a test keeps them equal).
    Benchmark(
        name="digits",
        display="digits",
        area="Vision",
        task="Image classification (proctor reference workload)",
        dataset="scikit-learn digits (UCI optdigits test set, 8x8 images, 10 classes)",
        qsl_size={_EDGE: 256},
        quality=_both_levels("FP32", _t("accuracy", 94.167, "%")),
        sample="one image",
        latency={_SRV: LatencyLimit(latency_ns=_ms(10), source=PROCTOR_WORKLOAD)},
        required={_EDGE: ((_SS,), (_OFF,))},
        accuracy_dataset_size=600,
        accuracy_dataset_source=PROCTOR_WORKLOAD,
        network_compression=("none", "lossless"),
        source=PROCTOR_WORKLOAD,
        notes="proctor's reference workload, not in the rules; Server bound = mlperf.conf's default 10 ms.",
    ),
)

BY_NAME: dict[str, Benchmark] = {b.name: b for b in BENCHMARKS}


@record(frozen=True, slots=True)
class ConfDisagreement:
    """A bound where the rules' table and the shipped mlperf.conf differ, and which one governs."""

    model: str  # the mlperf.conf model name
    setting: str  # "ttft", "tpot" or "latency" (Server target latency)
    rules_ms: float
    conf_ms: float  # what the shipped mlperf.conf resolves to
    governs: str  # "rules" or "mlperf.conf"
    why: str


# Decided per benchmark: the rules' table governs unless the round's official mlperf.conf is newer
# and says otherwise. The rules text in use lists Qwen3.6-27B, a benchmark of the v6.1 round that the
# shipped mlperf.conf (its last bound change: 2026-02, "Add missing fields for gpt-oss-120b-interactive")
# does not know yet, so the table is the newer statement. A run judged by the tighter conf bound and
# meeting the rules' one is valid with a warning; a run against a looser bound is invalid.
CONF_DISAGREEMENTS: tuple[ConfDisagreement, ...] = (
    ConfDisagreement(
        "gpt-oss-120b-interactive",
        "tpot",
        20,
        15,
        "rules",
        f"{DC_TABLE}: 'Interactive: TTFT/TPOT: 2000 ms/20 ms'; mlperf.conf "
        "gpt-oss-120b-interactive.Server.tpot_latency = 15 (the official checker's LLM_LATENCY_LIMITS: 15)",
    ),
    ConfDisagreement(
        "qwen3-vl-235b-a22b-interactive",
        "latency",
        1500,
        10,
        "rules",
        f"{DC_TABLE}: 'Interactive: 1.5s'; mlperf.conf has no qwen3-vl-235b-a22b-interactive line, so "
        "*.Server.target_latency = 10 applies (the official checker's latency-constraint: 1.5 s)",
    ),
)

# Conf-model names of the Interactive category (mlperf.conf spells them "<model>-interactive").
INTERACTIVE_SUFFIX = "-interactive"


def _norm(text: str) -> str:
    return text.strip().lower().replace("_", "-").replace(" ", "")


_SUFFIX = re.compile(r"^(?P<base>.+?)(?P<inter>-interactive)?(?:-(?P<level>\d+(?:\.\d+)?))?$")


@record(frozen=True, slots=True)
class Variant:
    """A benchmark as a submission names it: quality level and Server/Interactive category."""

    benchmark: Benchmark
    level: QualityLevel | None
    interactive: bool
    name: str

    @property
    def conf_model(self) -> str:
        return self.benchmark.name + (INTERACTIVE_SUFFIX if self.interactive else "")


class BenchmarkTable:
    """One round's benchmarks and the index of their spellings that `resolve` reads."""

    def __init__(self, benchmarks: tuple[Benchmark, ...]) -> None:
        self.benchmarks = benchmarks
        self.by_name: dict[str, Benchmark] = {b.name: b for b in benchmarks}
        self._index: dict[str, Benchmark] = {}
        for b in benchmarks:
            for key in (b.name, b.display, *b.aliases):
                self._index[_norm(key)] = b

    def resolve(self, name: str) -> Variant:
        """Map any spelling ("llama2-70b-interactive-99.9", "Llama3.1-8B", "resnet") to a Variant.

        Raises KeyError naming the input when nothing matches.
        """
        key = _norm(name)
        if key in self._index:
            b = self._index[key]
            return Variant(b, b.quality[0] if b.quality else None, False, name)
        m = _SUFFIX.match(key)
        if m:
            base = self._index.get(m["base"]) or self._index.get(_norm(m["base"].replace(".", "-", 1)))
            if base is not None:
                level = None
                if m["level"]:
                    fraction = float(m["level"]) / 100
                    level = base.level(fraction)  # KeyError when the rules have no such level
                elif base.quality:
                    level = base.quality[0]
                return Variant(base, level, bool(m["inter"]), name)
        raise KeyError(f"unknown benchmark {name!r}; {self.did_you_mean(name)}")

    def did_you_mean(self, name: str) -> str:
        """One short hint for a misspelt name (the closest known spelling), not the whole list."""
        import difflib  # only to suggest a name: not loaded at start

        close = difflib.get_close_matches(_norm(name)[:200], list(self._index), n=1, cutoff=0.5)
        if close:
            return f"did you mean {self._index[close[0]].name!r}?"
        return f"use an mlperf.conf model name such as {', '.join(sorted(self.by_name)[:3])}"


TABLE = BenchmarkTable(BENCHMARKS)  # the current round's; older rounds: inference_rounds.round_table


def resolve(name: str, table: BenchmarkTable | None = None) -> Variant:
    """`name` in `table` (None: the current round's); KeyError when it has no such benchmark."""
    return (table or TABLE).resolve(name)


def did_you_mean(name: str, table: BenchmarkTable | None = None) -> str:
    return (table or TABLE).did_you_mean(name)


def required_scenarios(benchmark: Benchmark, suite: Suite) -> tuple[tuple[Category, ...], ...]:
    return benchmark.required.get(suite, ())


def latency_limit(benchmark: Benchmark, category: Category) -> LatencyLimit | None:
    return benchmark.latency.get(category)
