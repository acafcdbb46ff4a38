"""Speculative decoding, as data: where the rules allow it, what a result must report, how it counts.

The rules ([[appendix-speculative-decoding]] and §Model Equivalence's allowed techniques) allow it
only for the appendix table's benchmark/scenario rows, with the reference MTP head, algorithm and
configuration. The rows' wording stays in `rules.inference` (`Benchmark.speculative`); this module
holds what the checker compares: the fixed configuration, the reference head, whether the head may
be quantized, and the fields a result declares it with (the rules name no field; proctor reads one
object in the result's measurements JSON, listed in docs/deviations.md).
"""

from __future__ import annotations

from proctor.rules.inference import RULES, SPEC_DECODING, Category
from proctor.typed_records import field, record

ALLOWED_TECHNIQUES = f"{RULES} §Model Equivalence, allowed techniques ('Speculative decoding is allowed ...')"
TPOT_DEFINITION = (
    f"{RULES} §Benchmarks, footnote llm_ttft_tpot ('TPOT ... measures the average interval between all the "
    "tokens generated')"
)

# The measurements JSON key a result declares speculative decoding with: absent, false or null = not
# used; an object = used, holding the fields below.
DECLARATION_KEY = "speculative_decoding"
FIELD_ALGORITHM = "algorithm"
FIELD_HEAD = "mtp_head"
FIELD_CONFIGURATION = "configuration"
FIELD_HEAD_QUANTIZED = "mtp_head_quantized"
FIELD_LOSSLESS = "lossless"
REQUIRED_FIELDS = (FIELD_ALGORITHM, FIELD_HEAD, FIELD_CONFIGURATION)
# Words that say a result's README or notes describe speculative decoding (a declaration is then due).
MENTIONS = (
    "speculative decoding",
    "speculative-decoding",
    "eagle3",
    "eagle-style",
    "mtp head",
    "draft model",
)


@record(frozen=True, slots=True)
class SpeculativeRule:
    """One row of the appendix table as the checker applies it."""

    benchmark: str  # Benchmark.name
    categories: tuple[Category, ...]  # the scenario directories the row covers
    head: str  # the reference MTP head
    fixed: dict[str, float] = field(default_factory=dict)  # configuration the row fixes
    reported: tuple[str, ...] = ()  # configuration of which the result must report at least one key
    head_quantization: bool = False  # the head may be quantized with the base model (lossless only)
    source: str = SPEC_DECODING


_FIXED_EAGLE = {"speculative-num-steps": 3.0, "speculative-eagle-topk": 1.0}

SPECULATIVE_RULES: tuple[SpeculativeRule, ...] = (
    SpeculativeRule(
        "deepseek-r1",
        (Category.INTERACTIVE,),
        "https://huggingface.co/deepseek-ai/DeepSeek-R1",
        fixed=_FIXED_EAGLE,
        source=f"{SPEC_DECODING}, row DeepSeek-r1 / Interactive",
    ),
    SpeculativeRule(
        "gpt-oss-120b",
        (Category.INTERACTIVE,),
        "https://huggingface.co/nvidia/gpt-oss-120b-Eagle3-long-context",
        fixed=_FIXED_EAGLE,
        source=f"{SPEC_DECODING}, row GPT-OSS-120B / Interactive",
    ),
    # "Edge-Agentic (single-stream)": the benchmark's one required scenario is Offline (accuracy
    # only), which runs the same agentic workload; both directories are covered (docs/deviations.md).
    SpeculativeRule(
        "qwen3.6-27b",
        (Category.SINGLE_STREAM, Category.OFFLINE),
        "https://huggingface.co/Qwen/Qwen3.6-27B",
        reported=("num-steps", "speculative-num-steps", "tree-size"),
        head_quantization=True,
        source=f"{SPEC_DECODING}, row Qwen3.6-27B / Edge-Agentic ('num-steps / tree size submitter-reported')",
    ),
)


def speculative_rule(benchmark: str, category: Category) -> SpeculativeRule | None:
    """The appendix row allowing speculative decoding for this benchmark and scenario, if any."""
    for rule in SPECULATIVE_RULES:
        if rule.benchmark == benchmark and category in rule.categories:
            return rule
    return None


__all__ = [
    "ALLOWED_TECHNIQUES",
    "DECLARATION_KEY",
    "MENTIONS",
    "REQUIRED_FIELDS",
    "SPECULATIVE_RULES",
    "TPOT_DEFINITION",
    "SpeculativeRule",
    "speculative_rule",
]
