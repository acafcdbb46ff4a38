"""Training compliance rules, ruleset 5.0.0: every config of the official checker as a table.

Drafted by `generate_tables.py` from mlperf_logging 4.1.68 `training_5.0.0/*.yaml`, then
reviewed. Config names are the YAML names without `.yaml` ("common", "closed_<benchmark>", ...).
Where the rules text and the official checker differ, see docs/deviations.md (training section).
"""

# ruff: noqa: E501, E712, E731

from __future__ import annotations

from proctor.rules.training import ruleset_4_1_0 as _previous
from proctor.rules.training.checks import (
    all_of,
    benchmark_in,
    eq,
    grouped,
    gt,
    in_metadata,
    in_metadata_any,
    le,
    lt,
)
from proctor.rules.training.ruleset_4_0_0 import (
    _closed_common_submission_benchmark_post,
    _open_common_submission_benchmark_post,
)
from proctor.rules.training.sections import (
    BENCHMARKS,
    CLOSED_TARGET,
    EVALUATION,
    HYPERPARAMETERS,
    OPEN_HYPERPARAMETERS,
    OPEN_TARGET,
)
from proctor.rules.training.types import Check, Config, KeyRule, Req, Ruleset, is_integer, math

# Tables this ruleset keeps word for word from 4.1.0: the same objects.
_PREVIOUS = _previous.RULESET.configs

__all__ = ["RULESET", "is_integer", "math"]


def _closed_llama31_405b_global_batch_size_post(s, v, ll) -> None:
    s["global_batch_size"] = v["value"]


def _open_llama31_405b_global_batch_size_post(s, v, ll) -> None:
    s["global_batch_size"] = v["value"]


# Not expressible as tables (they rewrite the log lines): closed_stable_diffusion, open_stable_diffusion

# §3 Benchmarks: the benchmarks of this round's tables (submission_benchmark names one of them)
_BENCHMARKS = (
    "retinanet",
    "stable_diffusion",
    "dlrm_dcnv2",
    "bert",
    "rgat",
    "llama2_70b_lora",
    "llama31_405b",
)

RULESET = Ruleset(
    "5.0.0",
    {
        c.name: c
        for c in (
            _PREVIOUS["closed_bert"],  # unchanged since 4.1.0
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
            _PREVIOUS["closed_dlrm_dcnv2"],  # unchanged since 4.1.0
            _PREVIOUS["closed_llama2_70b_lora"],  # unchanged since 4.1.0
            Config(
                "closed_llama31_405b",
                (
                    KeyRule(
                        "global_batch_size",
                        Req.EXACTLY_ONE,
                        post=_closed_llama31_405b_global_batch_size_post,
                        source=HYPERPARAMETERS,
                    ),
                    KeyRule(
                        "max_sequence_length", Req.EXACTLY_ONE, checks=(eq(8192),), source=HYPERPARAMETERS
                    ),
                    KeyRule("opt_name", Req.EXACTLY_ONE, checks=(eq("adamw"),), source=HYPERPARAMETERS),
                    KeyRule(
                        "opt_base_learning_rate",
                        Req.EXACTLY_ONE,
                        checks=(
                            Check(
                                "v['value'] * 1152 == s['global_batch_size'] * 8e-5",
                                lambda s, v, ll: v["value"] * 1152 == s["global_batch_size"] * 8e-5,
                            ),
                        ),
                        source=HYPERPARAMETERS,
                    ),
                    KeyRule("opt_end_learning_rate", Req.EXACTLY_ONE, source=HYPERPARAMETERS),
                    KeyRule("opt_learning_rate_decay_steps", Req.EXACTLY_ONE, source=HYPERPARAMETERS),
                    KeyRule("opt_learning_rate_warmup_steps", Req.EXACTLY_ONE, source=HYPERPARAMETERS),
                    KeyRule(
                        "opt_learning_rate_decay_schedule",
                        Req.EXACTLY_ONE,
                        checks=(eq("cosine with linear warmup"),),
                        source=HYPERPARAMETERS,
                    ),
                    KeyRule("opt_adamw_beta_1", Req.EXACTLY_ONE, checks=(eq(0.9),), source=HYPERPARAMETERS),
                    KeyRule("opt_adamw_beta_2", Req.EXACTLY_ONE, checks=(eq(0.95),), source=HYPERPARAMETERS),
                    KeyRule(
                        "opt_adamw_epsilon", Req.EXACTLY_ONE, checks=(eq(1e-05),), source=HYPERPARAMETERS
                    ),
                    KeyRule(
                        "opt_adamw_weight_decay", Req.EXACTLY_ONE, checks=(eq(0.1),), source=HYPERPARAMETERS
                    ),
                    KeyRule(
                        "opt_gradient_clip_norm", Req.EXACTLY_ONE, checks=(eq(1.0),), source=HYPERPARAMETERS
                    ),
                    KeyRule(
                        "gradient_accumulation_steps",
                        Req.EXACTLY_ONE,
                        checks=(gt(0),),
                        source=HYPERPARAMETERS,
                    ),
                    KeyRule("eval_samples", Req.EXACTLY_ONE, checks=(eq(5760),), source=EVALUATION),
                    KeyRule(
                        "eval_accuracy",
                        Req.AT_LEAST_ONE,
                        checks=(in_metadata("samples_count"),),
                        atleast_one=all_of(grouped(le(5.6)), gt(0.0)),
                        source=CLOSED_TARGET,
                    ),
                    KeyRule("init_checkpoint_step", Req.EXACTLY_ONE, checks=(eq(0),), source=HYPERPARAMETERS),
                ),
            ),
            _PREVIOUS["closed_ssd"].derive(
                name="closed_retinanet",
            ),
            _PREVIOUS["closed_gnn"].derive(
                name="closed_rgat",
            ),
            _PREVIOUS["common"].derive(
                drop=(
                    "submission_org",
                    "submission_platform",
                ),
                replace=(
                    KeyRule(
                        "epoch_start",
                        Req.AT_LEAST_ONE_OR,
                        alternatives=("block_start",),
                        checks=(in_metadata_any("epoch_num", "samples_count"),),
                        source=EVALUATION,
                    ),
                    KeyRule(
                        "epoch_stop",
                        Req.AT_LEAST_ONE_OR,
                        alternatives=("block_stop",),
                        checks=(in_metadata_any("epoch_num", "samples_count"),),
                        source=EVALUATION,
                    ),
                ),
            ),
            _PREVIOUS["open_bert"],  # unchanged since 4.1.0
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
            _PREVIOUS["open_dlrm_dcnv2"],  # unchanged since 4.1.0
            _PREVIOUS["open_llama2_70b_lora"],  # unchanged since 4.1.0
            Config(
                "open_llama31_405b",
                (
                    KeyRule(
                        "global_batch_size",
                        Req.EXACTLY_ONE,
                        post=_open_llama31_405b_global_batch_size_post,
                        source=OPEN_HYPERPARAMETERS,
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
                    KeyRule("opt_learning_rate_decay_steps", Req.EXACTLY_ONE, source=OPEN_HYPERPARAMETERS),
                    KeyRule("opt_learning_rate_warmup_steps", Req.EXACTLY_ONE, source=OPEN_HYPERPARAMETERS),
                    KeyRule("opt_learning_rate_decay_schedule", Req.EXACTLY_ONE, source=OPEN_HYPERPARAMETERS),
                    KeyRule("opt_adamw_beta_1", Req.EXACTLY_ONE, source=OPEN_HYPERPARAMETERS),
                    KeyRule("opt_adamw_beta_2", Req.EXACTLY_ONE, source=OPEN_HYPERPARAMETERS),
                    KeyRule("opt_adamw_epsilon", Req.EXACTLY_ONE, source=OPEN_HYPERPARAMETERS),
                    KeyRule("opt_adamw_weight_decay", Req.EXACTLY_ONE, source=OPEN_HYPERPARAMETERS),
                    KeyRule("opt_gradient_clip_norm", Req.EXACTLY_ONE, source=OPEN_HYPERPARAMETERS),
                    KeyRule(
                        "gradient_accumulation_steps",
                        Req.EXACTLY_ONE,
                        checks=(gt(0),),
                        source=OPEN_HYPERPARAMETERS,
                    ),
                    KeyRule("eval_samples", Req.EXACTLY_ONE, checks=(eq(5760),), source=EVALUATION),
                    KeyRule(
                        "eval_accuracy",
                        Req.AT_LEAST_ONE,
                        checks=(in_metadata("epoch_num"),),
                        atleast_one=all_of(grouped(le(5.6)), gt(0.0)),
                        source=OPEN_TARGET,
                    ),
                    KeyRule(
                        "init_checkpoint_step", Req.EXACTLY_ONE, checks=(eq(0),), source=OPEN_HYPERPARAMETERS
                    ),
                ),
            ),
            Config(
                "open_retinanet",
                (
                    KeyRule(
                        "eval_accuracy",
                        Req.AT_LEAST_ONE,
                        checks=(in_metadata("epoch_num"),),
                        atleast_one=lt(1.0),
                        source=OPEN_TARGET,
                    ),
                ),
            ),
            Config(
                "open_rgat",
                (
                    KeyRule(
                        "eval_accuracy",
                        Req.AT_LEAST_ONE,
                        checks=(in_metadata("epoch_num"),),
                        atleast_one=lt(1.0),
                        source=OPEN_TARGET,
                    ),
                ),
            ),
        )
    },
    benchmarks=_BENCHMARKS,
    init_limit_mins=_previous.RULESET.init_limit_mins,
)
