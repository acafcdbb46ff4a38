"""Training compliance rules, ruleset 4.1.0: every config of the official checker as a table.

Drafted by `generate_tables.py` from mlperf_logging 4.1.68 `training_4.1.0/*.yaml`, then
reviewed. Config names are the YAML names without `.yaml` ("common", "closed_<benchmark>", ...).
Where the rules text and the official checker differ, see docs/deviations.md (training section).
"""

# ruff: noqa: E501, E712, E731

from __future__ import annotations

from proctor.rules.training import ruleset_4_0_0 as _previous
from proctor.rules.training.checks import (
    benchmark_in,
)
from proctor.rules.training.ruleset_4_0_0 import _closed_common_submission_benchmark_post
from proctor.rules.training.sections import BENCHMARKS
from proctor.rules.training.types import KeyRule, Req, Ruleset, is_integer, math

# Tables this ruleset keeps word for word from 4.0.0: the same objects.
_PREVIOUS = _previous.RULESET.configs

__all__ = ["RULESET", "is_integer", "math"]


# Not expressible as tables (they rewrite the log lines): closed_stable_diffusion, open_stable_diffusion

# §3 Benchmarks: the benchmarks of this round's tables (submission_benchmark names one of them)
_BENCHMARKS = (
    "resnet",
    "ssd",
    "stable_diffusion",
    "maskrcnn",
    "gpt3",
    "dlrm_dcnv2",
    "bert",
    "rnnt",
    "unet3d",
    "gnn",
    "llama2_70b_lora",
)

RULESET = Ruleset(
    "4.1.0",
    {
        c.name: c
        for c in (
            _PREVIOUS["closed_bert"],  # unchanged since 4.0.0
            _PREVIOUS["closed_common"].derive(
                replace=(
                    KeyRule(
                        "submission_benchmark",
                        Req.EXACTLY_ONE,
                        checks=(benchmark_in(*_BENCHMARKS),),
                        post=_closed_common_submission_benchmark_post,
                        source=BENCHMARKS,
                    ),
                ),
            ),
            _PREVIOUS["closed_dlrm_dcnv2"],  # unchanged since 4.0.0
            _PREVIOUS["closed_gnn"],  # unchanged since 4.0.0
            _PREVIOUS["closed_gpt3"],  # unchanged since 4.0.0
            _PREVIOUS["closed_llama2_70b_lora"].derive(
                # 4.0.0 listed lora_alpha twice; 4.1.0 keeps only the second place
                drop=("lora_alpha",),
                add=(_PREVIOUS["closed_llama2_70b_lora"].by_key()["lora_alpha"],),
                before="lora_rank",
            ),
            _PREVIOUS["closed_ssd"],  # unchanged since 4.0.0
            _PREVIOUS["common"].derive(
                drop=("submission_status",),
            ),
            _PREVIOUS["open_bert"],  # unchanged since 4.0.0
            _PREVIOUS["open_common"],  # unchanged since 4.0.0
            _PREVIOUS["open_dlrm_dcnv2"],  # unchanged since 4.0.0
            _PREVIOUS["open_gnn"],  # unchanged since 4.0.0
            _PREVIOUS["open_gpt3"],  # unchanged since 4.0.0
            _PREVIOUS["open_llama2_70b_lora"],  # unchanged since 4.0.0
            _PREVIOUS["open_ssd"],  # unchanged since 4.0.0
        )
    },
    benchmarks=_BENCHMARKS,
    init_limit_mins=_previous.RULESET.init_limit_mins,
)
