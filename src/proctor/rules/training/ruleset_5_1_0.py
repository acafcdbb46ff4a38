"""Training compliance rules, ruleset 5.1.0: every config of the official checker as a table.

Drafted by `generate_tables.py` from mlperf_logging 4.1.68 `training_5.1.0/*.yaml`, then
reviewed. Config names are the YAML names without `.yaml` ("common", "closed_<benchmark>", ...).
Where the rules text and the official checker differ, see docs/deviations.md (training section).
"""

# ruff: noqa: E501, E712, E731

from __future__ import annotations

from proctor.rules.training import ruleset_5_0_0 as _previous
from proctor.rules.training.checks import (
    all_of,
    benchmark_in,
    eq,
    ge,
    grouped,
    gt,
    in_metadata,
    le,
    lt,
    ne,
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
    OPEN_TARGET,
    SUBMISSION,
)
from proctor.rules.training.types import Check, Config, KeyRule, Req, Ruleset, is_integer, math

# Tables this ruleset keeps word for word from 5.0.0: the same objects.
_PREVIOUS = _previous.RULESET.configs

__all__ = ["RULESET", "is_integer", "math"]


def _closed_llama31_405b_opt_learning_rate_warmup_steps_post(s, v, ll) -> None:
    s["opt_learning_rate_warmup_steps"] = math.ceil(8000 * 1152 / s["global_batch_size"])


def _closed_llama31_8b_opt_learning_rate_warmup_steps_post(s, v, ll) -> None:
    s["opt_learning_rate_warmup_steps"] = v["value"]


_closed_llama31_405b = _PREVIOUS["closed_llama31_405b"].derive(
    # the warmup rule now comes before the decay rule
    drop=("opt_learning_rate_decay_steps", "opt_learning_rate_warmup_steps"),
    add=(
        KeyRule(
            "opt_learning_rate_warmup_steps",
            Req.EXACTLY_ONE,
            post=_closed_llama31_405b_opt_learning_rate_warmup_steps_post,
            source=HYPERPARAMETERS,
        ),
        KeyRule(
            "opt_learning_rate_decay_steps",
            Req.EXACTLY_ONE,
            checks=(
                Check(
                    "v['value'] == math.ceil(1_200_000 * 1152 / s['global_batch_size'] ) - s['opt_learning_rate_warmup_steps']",
                    lambda s, v, ll: (
                        v["value"]
                        == math.ceil(1_200_000 * 1152 / s["global_batch_size"])
                        - s["opt_learning_rate_warmup_steps"]
                    ),
                ),
            ),
            source=HYPERPARAMETERS,
        ),
    ),
    before="opt_learning_rate_decay_schedule",
)

# §3 Benchmarks: the benchmarks of this round's tables (submission_benchmark names one of them)
_BENCHMARKS = ("retinanet", "flux1", "dlrm_dcnv2", "llama31_8b", "rgat", "llama2_70b_lora", "llama31_405b")

RULESET = Ruleset(
    "5.1.0",
    {
        c.name: c
        for c in (
            _PREVIOUS["closed_bert"],  # unchanged since 5.0.0
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
            _PREVIOUS["closed_dlrm_dcnv2"],  # unchanged since 5.0.0
            Config(
                "closed_flux1",
                (
                    KeyRule("global_batch_size", Req.AT_LEAST_ONE, checks=(ge(0),), source=HYPERPARAMETERS),
                    KeyRule("evaluation_frequency", Req.EXACTLY_ONE, checks=(eq(262144),), source=EVALUATION),
                    KeyRule("opt_name", Req.EXACTLY_ONE, checks=(eq("adamw"),), source=HYPERPARAMETERS),
                    KeyRule("opt_adamw_beta_1", Req.EXACTLY_ONE, checks=(eq(0.9),), source=HYPERPARAMETERS),
                    KeyRule("opt_adamw_beta_2", Req.EXACTLY_ONE, checks=(eq(0.95),), source=HYPERPARAMETERS),
                    KeyRule(
                        "opt_adamw_epsilon", Req.EXACTLY_ONE, checks=(eq(1e-08),), source=HYPERPARAMETERS
                    ),
                    KeyRule(
                        "opt_adamw_weight_decay", Req.EXACTLY_ONE, checks=(eq(0.1),), source=HYPERPARAMETERS
                    ),
                    KeyRule(
                        "opt_base_learning_rate", Req.EXACTLY_ONE, checks=(ge(0.0),), source=HYPERPARAMETERS
                    ),
                    KeyRule(
                        "opt_learning_rate_warmup_steps",
                        Req.EXACTLY_ONE,
                        checks=(ge(0),),
                        source=HYPERPARAMETERS,
                    ),
                    KeyRule(
                        "opt_gradient_clip_norm", Req.EXACTLY_ONE, checks=(eq(1.0),), source=HYPERPARAMETERS
                    ),
                    KeyRule(
                        "eval_accuracy",
                        Req.AT_LEAST_ONE,
                        checks=(in_metadata("samples_count"),),
                        atleast_one=all_of(le(0.586), gt(0.0)),
                        source=CLOSED_TARGET,
                    ),
                ),
            ),
            _PREVIOUS["closed_llama2_70b_lora"],  # unchanged since 5.0.0
            _closed_llama31_405b,
            _closed_llama31_405b.derive(
                name="closed_llama31_8b",
                drop=("init_checkpoint_step",),
                replace=(
                    KeyRule("opt_base_learning_rate", Req.EXACTLY_ONE, source=HYPERPARAMETERS),
                    KeyRule(
                        "opt_learning_rate_warmup_steps",
                        Req.EXACTLY_ONE,
                        post=_closed_llama31_8b_opt_learning_rate_warmup_steps_post,
                        source=HYPERPARAMETERS,
                    ),
                    KeyRule(
                        "opt_learning_rate_decay_steps",
                        Req.EXACTLY_ONE,
                        checks=(
                            Check(
                                "v['value'] == 1_200_000 - s['opt_learning_rate_warmup_steps']",
                                lambda s, v, ll: (
                                    v["value"] == 1_200_000 - s["opt_learning_rate_warmup_steps"]
                                ),
                            ),
                        ),
                        source=HYPERPARAMETERS,
                    ),
                    KeyRule("eval_samples", Req.EXACTLY_ONE, checks=(eq(1024),), source=EVALUATION),
                    KeyRule(
                        "eval_accuracy",
                        Req.AT_LEAST_ONE,
                        checks=(in_metadata("samples_count"),),
                        atleast_one=all_of(grouped(le(3.3)), gt(0.0)),
                        source=CLOSED_TARGET,
                    ),
                ),
                add=(KeyRule("max_steps", Req.EXACTLY_ONE, checks=(eq(1200000),), source=HYPERPARAMETERS),),
            ),
            _PREVIOUS["closed_retinanet"],  # unchanged since 5.0.0
            _PREVIOUS["closed_rgat"],  # unchanged since 5.0.0
            _PREVIOUS["common"].derive(
                add=(
                    KeyRule("submission_org", Req.EXACTLY_ONE, checks=(ne(""),), source=SUBMISSION),
                    KeyRule("submission_platform", Req.EXACTLY_ONE, checks=(ne(""),), source=SUBMISSION),
                ),
                before="submission_division",
            ),
            _PREVIOUS["open_bert"],  # unchanged since 5.0.0
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
            _PREVIOUS["open_dlrm_dcnv2"],  # unchanged since 5.0.0
            Config(
                "open_flux1",
                (
                    KeyRule(
                        "averaged_validation_loss",
                        Req.AT_LEAST_ONE,
                        checks=(in_metadata("samples_count"),),
                        atleast_one=all_of(le(0.586), gt(0.0)),
                        source=OPEN_TARGET,
                    ),
                ),
            ),
            _PREVIOUS["open_llama2_70b_lora"],  # unchanged since 5.0.0
            _PREVIOUS["open_llama31_405b"],  # unchanged since 5.0.0
            Config(
                "open_llama31_8b",
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
            _PREVIOUS["open_retinanet"],  # unchanged since 5.0.0
            _PREVIOUS["open_rgat"],  # unchanged since 5.0.0
        )
    },
    benchmarks=_BENCHMARKS,
    init_limit_mins=_previous.RULESET.init_limit_mins,
)
