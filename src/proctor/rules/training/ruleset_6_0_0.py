"""Training compliance rules, ruleset 6.0.0: every config of the official checker as a table.

Drafted by `generate_tables.py` from mlperf_logging 4.1.68 `training_6.0.0/*.yaml`, then
reviewed. Config names are the YAML names without `.yaml` ("common", "closed_<benchmark>", ...).
Where the rules text and the official checker differ, see docs/deviations.md (training section).
"""

# ruff: noqa: E501, E712, E731

from __future__ import annotations

from proctor.rules.training import ruleset_5_1_0 as _previous
from proctor.rules.training.checks import (
    all_of,
    benchmark_in,
    eq,
    ge,
    grouped,
    gt,
    in_metadata,
    integer,
    le,
    lt,
    one_of,
)
from proctor.rules.training.ruleset_4_0_0 import (
    _closed_common_submission_benchmark_post,
    _open_common_submission_benchmark_post,
)
from proctor.rules.training.sections import (
    BENCHMARKS,
    CLOSED_TARGET,
    DISCLOSURE,
    EVALUATION,
    HYPERPARAMETERS,
    OPEN_HYPERPARAMETERS,
    OPEN_TARGET,
)
from proctor.rules.training.types import Check, Config, KeyRule, Req, Ruleset, is_integer, math

# Tables this ruleset keeps word for word from 5.1.0: the same objects.
_PREVIOUS = _previous.RULESET.configs

__all__ = ["PRECISIONS", "RULESET", "is_integer", "math"]


# rules §5 Basics: the approved numerical formats of the lowest_numerical_precision_* keys
PRECISIONS = (
    "fp64",
    "fp32",
    "tf32",
    "fp16",
    "fp8",
    "nvfp4",
    "mxfp4",
    "bfloat16",
    "Graphcore FLOAT 16.16",
    "int8",
    "uint8",
    "int4",
    "uint4",
)
_in_precisions = one_of(*PRECISIONS)
_PRECISION_KEYS = (
    "lowest_numerical_precision_in_linear",
    "lowest_numerical_precision_in_attn",
    "lowest_numerical_precision_in_comm",
)
_PARALLELISM_KEYS = (
    "tensor_parallelism",
    "pipeline_parallelism",
    "context_parallelism",
    "expert_parallelism",
    "micro_batch_size",
)
_integer = integer()


def _closed_deepseekv3_671b_global_batch_size_post(s, v, ll) -> None:
    s["global_batch_size"] = v["value"]


def _closed_deepseekv3_671b_opt_learning_rate_warmup_steps_post(s, v, ll) -> None:
    s["opt_learning_rate_warmup_steps"] = v["value"]


def _open_deepseekv3_671b_global_batch_size_post(s, v, ll) -> None:
    s["global_batch_size"] = v["value"]


# §3 Benchmarks: the benchmarks of this round's tables (submission_benchmark names one of them)
_BENCHMARKS = (
    "flux1",
    "dlrm_dcnv2",
    "llama31_8b",
    "llama2_70b_lora",
    "llama31_405b",
    "gpt_oss_20b",
    "deepseekv3_671b",
)

RULESET = Ruleset(
    "6.0.0",
    {
        c.name: c
        for c in (
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
            Config(
                "closed_deepseekv3_671b",
                (
                    KeyRule(
                        "global_batch_size",
                        Req.EXACTLY_ONE,
                        checks=(ge(15360),),
                        post=_closed_deepseekv3_671b_global_batch_size_post,
                        source=HYPERPARAMETERS,
                    ),
                    KeyRule(
                        "max_sequence_length", Req.EXACTLY_ONE, checks=(eq(4096),), source=HYPERPARAMETERS
                    ),
                    KeyRule("opt_name", Req.EXACTLY_ONE, checks=(eq("adamw"),), source=HYPERPARAMETERS),
                    KeyRule(
                        "opt_base_learning_rate",
                        Req.EXACTLY_ONE,
                        checks=(
                            Check(
                                "abs(v['value'] - 2.4e-05 * (s['global_batch_size'] / 16384) ** 0.5) < 1e-9",
                                lambda s, v, ll: (
                                    abs(v["value"] - 2.4e-05 * (s["global_batch_size"] / 16384) ** 0.5) < 1e-9
                                ),
                            ),
                        ),
                        source=HYPERPARAMETERS,
                    ),
                    KeyRule("max_steps", Req.EXACTLY_ONE, source=HYPERPARAMETERS),
                    KeyRule(
                        "opt_learning_rate_warmup_steps",
                        Req.EXACTLY_ONE,
                        checks=(eq(4),),
                        post=_closed_deepseekv3_671b_opt_learning_rate_warmup_steps_post,
                        source=HYPERPARAMETERS,
                    ),
                    KeyRule(
                        "opt_learning_rate_decay_steps",
                        Req.EXACTLY_ONE,
                        checks=(
                            Check(
                                "v['value'] == 12000 - s['opt_learning_rate_warmup_steps']",
                                lambda s, v, ll: v["value"] == 12000 - s["opt_learning_rate_warmup_steps"],
                            ),
                        ),
                        source=HYPERPARAMETERS,
                    ),
                    KeyRule(
                        "opt_learning_rate_decay_schedule",
                        Req.EXACTLY_ONE,
                        checks=(eq("cosine with linear warmup"),),
                        source=HYPERPARAMETERS,
                    ),
                    KeyRule("opt_adamw_beta_1", Req.EXACTLY_ONE, checks=(eq(0.9),), source=HYPERPARAMETERS),
                    KeyRule("opt_adamw_beta_2", Req.EXACTLY_ONE, checks=(eq(0.95),), source=HYPERPARAMETERS),
                    KeyRule(
                        "opt_adamw_epsilon", Req.EXACTLY_ONE, checks=(eq(1e-08),), source=HYPERPARAMETERS
                    ),
                    KeyRule(
                        "opt_adamw_weight_decay", Req.EXACTLY_ONE, checks=(eq(0.1),), source=HYPERPARAMETERS
                    ),
                    KeyRule(
                        "opt_gradient_clip_norm", Req.EXACTLY_ONE, checks=(eq(1.0),), source=HYPERPARAMETERS
                    ),
                    KeyRule(
                        "moe_aux_loss_coeff", Req.EXACTLY_ONE, checks=(eq(0.01),), source=HYPERPARAMETERS
                    ),
                    KeyRule(
                        "gradient_accumulation_steps",
                        Req.EXACTLY_ONE,
                        checks=(gt(0),),
                        source=HYPERPARAMETERS,
                    ),
                    KeyRule("eval_samples", Req.EXACTLY_ONE, checks=(eq(1024),), source=EVALUATION),
                    KeyRule(
                        "eval_accuracy",
                        Req.AT_LEAST_ONE,
                        checks=(in_metadata("samples_count"),),
                        atleast_one=all_of(grouped(le(3.6)), gt(0.0)),
                        source=CLOSED_TARGET,
                    ),
                ),
            ),
            _PREVIOUS["closed_dlrm_dcnv2"],  # unchanged since 5.1.0
            _PREVIOUS["closed_flux1"],  # unchanged since 5.1.0
            _PREVIOUS["closed_llama31_8b"].derive(
                name="closed_gpt_oss_20b",
                replace=(
                    KeyRule(
                        "eval_accuracy",
                        Req.AT_LEAST_ONE,
                        checks=(in_metadata("samples_count"),),
                        atleast_one=all_of(grouped(le(3.34)), gt(0.0)),
                        source=CLOSED_TARGET,
                    ),
                ),
            ),
            _PREVIOUS["closed_llama2_70b_lora"],  # unchanged since 5.1.0
            _PREVIOUS["closed_llama31_405b"],  # unchanged since 5.1.0
            _PREVIOUS["closed_llama31_8b"],  # unchanged since 5.1.0
            _PREVIOUS["common"].derive(
                # rules §5 Basics: the v6.1 disclosure keys, optional in the 6.0.0 tables
                add=(
                    *(
                        KeyRule(k, Req.OPTIONAL, checks=(_in_precisions,), source=DISCLOSURE)
                        for k in _PRECISION_KEYS
                    ),
                    *(
                        KeyRule(k, Req.OPTIONAL, checks=(_integer,), source=DISCLOSURE)
                        for k in _PARALLELISM_KEYS
                    ),
                    KeyRule("config_filename", Req.OPTIONAL, source=DISCLOSURE),
                ),
            ),
            _PREVIOUS["open_common"].derive(
                replace=(
                    KeyRule(
                        "submission_benchmark",
                        Req.EXACTLY_ONE,
                        checks=(benchmark_in(*_BENCHMARKS),),
                        post=_open_common_submission_benchmark_post,
                        source=BENCHMARKS,
                    ),
                ),
            ),
            Config(
                "open_deepseekv3_671b",
                (
                    KeyRule(
                        "global_batch_size",
                        Req.EXACTLY_ONE,
                        checks=(ge(15360),),
                        post=_open_deepseekv3_671b_global_batch_size_post,
                        source=OPEN_HYPERPARAMETERS,
                    ),
                    KeyRule(
                        "max_sequence_length",
                        Req.EXACTLY_ONE,
                        checks=(eq(4096),),
                        source=OPEN_HYPERPARAMETERS,
                    ),
                    KeyRule("opt_name", Req.EXACTLY_ONE, checks=(eq("adamw"),), source=OPEN_HYPERPARAMETERS),
                    KeyRule("max_steps", Req.EXACTLY_ONE, source=OPEN_HYPERPARAMETERS),
                    KeyRule("opt_base_learning_rate", Req.EXACTLY_ONE, source=OPEN_HYPERPARAMETERS),
                    KeyRule("opt_learning_rate_warmup_steps", Req.EXACTLY_ONE, source=OPEN_HYPERPARAMETERS),
                    KeyRule("opt_learning_rate_decay_steps", Req.EXACTLY_ONE, source=OPEN_HYPERPARAMETERS),
                    KeyRule("opt_learning_rate_decay_schedule", Req.EXACTLY_ONE, source=OPEN_HYPERPARAMETERS),
                    KeyRule("opt_adamw_beta_1", Req.EXACTLY_ONE, source=OPEN_HYPERPARAMETERS),
                    KeyRule("opt_adamw_beta_2", Req.EXACTLY_ONE, source=OPEN_HYPERPARAMETERS),
                    KeyRule("opt_adamw_epsilon", Req.EXACTLY_ONE, source=OPEN_HYPERPARAMETERS),
                    KeyRule("opt_adamw_weight_decay", Req.EXACTLY_ONE, source=OPEN_HYPERPARAMETERS),
                    KeyRule("opt_gradient_clip_norm", Req.EXACTLY_ONE, source=OPEN_HYPERPARAMETERS),
                    KeyRule("moe_aux_loss_coeff", Req.EXACTLY_ONE, source=OPEN_HYPERPARAMETERS),
                    KeyRule(
                        "gradient_accumulation_steps",
                        Req.EXACTLY_ONE,
                        checks=(gt(0),),
                        source=OPEN_HYPERPARAMETERS,
                    ),
                    KeyRule("eval_samples", Req.EXACTLY_ONE, checks=(eq(1024),), source=EVALUATION),
                    KeyRule(
                        "eval_accuracy",
                        Req.AT_LEAST_ONE,
                        checks=(in_metadata("samples_count"),),
                        atleast_one=all_of(grouped(le(3.6)), gt(0.0)),
                        source=OPEN_TARGET,
                    ),
                ),
            ),
            _PREVIOUS["open_dlrm_dcnv2"],  # unchanged since 5.1.0
            _PREVIOUS["open_flux1"],  # unchanged since 5.1.0
            Config(
                "open_gpt_oss_20b",
                (
                    KeyRule(
                        "eval_accuracy",
                        Req.AT_LEAST_ONE,
                        checks=(in_metadata("samples_count"),),
                        atleast_one=all_of(grouped(le(3.34)), gt(0.0)),
                        source=OPEN_TARGET,
                    ),
                    KeyRule(
                        "max_sequence_length",
                        Req.EXACTLY_ONE,
                        checks=(eq(8192),),
                        source=OPEN_HYPERPARAMETERS,
                    ),
                    KeyRule("opt_name", Req.EXACTLY_ONE, checks=(eq("adamw"),), source=OPEN_HYPERPARAMETERS),
                    KeyRule("opt_base_learning_rate", Req.EXACTLY_ONE, source=OPEN_HYPERPARAMETERS),
                    KeyRule("opt_end_learning_rate", Req.EXACTLY_ONE, source=OPEN_HYPERPARAMETERS),
                    KeyRule("opt_learning_rate_warmup_steps", Req.EXACTLY_ONE, source=OPEN_HYPERPARAMETERS),
                    KeyRule("opt_learning_rate_decay_steps", Req.EXACTLY_ONE, source=OPEN_HYPERPARAMETERS),
                    KeyRule("opt_learning_rate_decay_schedule", Req.EXACTLY_ONE, source=OPEN_HYPERPARAMETERS),
                    KeyRule("opt_adamw_beta_1", Req.EXACTLY_ONE, source=OPEN_HYPERPARAMETERS),
                    KeyRule("opt_adamw_beta_2", Req.EXACTLY_ONE, source=OPEN_HYPERPARAMETERS),
                    KeyRule("opt_adamw_epsilon", Req.EXACTLY_ONE, source=OPEN_HYPERPARAMETERS),
                    KeyRule("opt_adamw_weight_decay", Req.EXACTLY_ONE, source=OPEN_HYPERPARAMETERS),
                    KeyRule("opt_gradient_clip_norm", Req.EXACTLY_ONE, source=OPEN_HYPERPARAMETERS),
                    KeyRule("gradient_accumulation_steps", Req.EXACTLY_ONE, source=OPEN_HYPERPARAMETERS),
                    KeyRule("eval_samples", Req.EXACTLY_ONE, source=EVALUATION),
                    KeyRule("max_steps", Req.EXACTLY_ONE, source=OPEN_HYPERPARAMETERS),
                ),
            ),
            _PREVIOUS["open_llama2_70b_lora"].derive(
                replace=(
                    KeyRule(
                        "eval_accuracy",
                        Req.AT_LEAST_ONE,
                        checks=(in_metadata("samples_count"),),
                        atleast_one=lt(1.0),
                        source=OPEN_TARGET,
                    ),
                ),
            ),
            _PREVIOUS["open_llama31_405b"].derive(
                replace=(
                    KeyRule(
                        "eval_accuracy",
                        Req.AT_LEAST_ONE,
                        checks=(in_metadata("samples_count"),),
                        atleast_one=all_of(grouped(le(5.6)), gt(0.0)),
                        source=OPEN_TARGET,
                    ),
                ),
            ),
            _PREVIOUS["open_llama31_8b"].derive(
                replace=(
                    KeyRule(
                        "eval_accuracy",
                        Req.AT_LEAST_ONE,
                        checks=(in_metadata("samples_count"),),
                        atleast_one=lt(1.0),
                        source=OPEN_TARGET,
                    ),
                ),
            ),
        )
    },
    benchmarks=_BENCHMARKS,
    init_limit_mins=_previous.RULESET.init_limit_mins,
    precisions=PRECISIONS,
)
