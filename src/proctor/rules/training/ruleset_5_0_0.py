"""Training compliance rules, ruleset 5.0.0: every config of the official checker as a table.

Drafted by `generate_tables.py` from mlperf_logging 4.1.68 `training_5.0.0/*.yaml`, then
reviewed. Config names are the YAML names without `.yaml` ("common", "closed_<benchmark>", ...).
Where the rules text and the official checker differ, see docs/deviations.md (training section).
"""

# ruff: noqa: E501, E712, E731

from __future__ import annotations

from proctor.rules.training import ruleset_4_1_0 as _previous
from proctor.rules.training.types import Check, Config, KeyRule, Req, Ruleset, is_integer, math

# Tables this ruleset keeps word for word from 4.1.0: the same objects.
_PREVIOUS = _previous.RULESET.configs

__all__ = ["RULESET", "is_integer", "math"]


def _closed_common_submission_benchmark_post(s, v, ll) -> None:
    s.enqueue("closed_{}".format(v["value"]))


def _closed_llama31_405b_global_batch_size_post(s, v, ll) -> None:
    s["global_batch_size"] = v["value"]


def _open_common_submission_benchmark_post(s, v, ll) -> None:
    s.enqueue("open_{}".format(v["value"]))


def _open_llama31_405b_global_batch_size_post(s, v, ll) -> None:
    s["global_batch_size"] = v["value"]


# Not expressible as tables (they rewrite the log lines): closed_stable_diffusion, open_stable_diffusion

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
                        checks=(
                            Check(
                                "v['value'] in ['retinanet', 'stable_diffusion', 'dlrm_dcnv2', 'bert', 'rgat', 'llama2_70b_lora', 'llama31_405b']",
                                lambda s, v, ll: (
                                    v["value"]
                                    in (
                                        "retinanet",
                                        "stable_diffusion",
                                        "dlrm_dcnv2",
                                        "bert",
                                        "rgat",
                                        "llama2_70b_lora",
                                        "llama31_405b",
                                    )
                                    or v["value"] in s.benchmarks
                                ),
                            ),
                        ),
                        post=_closed_common_submission_benchmark_post,
                        source="§3 Benchmarks",
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
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "max_sequence_length",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 8192", lambda s, v, ll: v["value"] == 8192),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_name",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 'adamw'", lambda s, v, ll: v["value"] == "adamw"),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_base_learning_rate",
                        Req.EXACTLY_ONE,
                        checks=(
                            Check(
                                "v['value'] * 1152 == s['global_batch_size'] * 8e-5",
                                lambda s, v, ll: v["value"] * 1152 == s["global_batch_size"] * 8e-5,
                            ),
                        ),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_end_learning_rate",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_learning_rate_decay_steps",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_learning_rate_warmup_steps",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_learning_rate_decay_schedule",
                        Req.EXACTLY_ONE,
                        checks=(
                            Check(
                                "v['value'] == 'cosine with linear warmup'",
                                lambda s, v, ll: v["value"] == "cosine with linear warmup",
                            ),
                        ),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_adamw_beta_1",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 0.9", lambda s, v, ll: v["value"] == 0.9),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_adamw_beta_2",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 0.95", lambda s, v, ll: v["value"] == 0.95),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_adamw_epsilon",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 1e-05", lambda s, v, ll: v["value"] == 1e-05),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_adamw_weight_decay",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 0.1", lambda s, v, ll: v["value"] == 0.1),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_gradient_clip_norm",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 1.0", lambda s, v, ll: v["value"] == 1.0),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "gradient_accumulation_steps",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] > 0", lambda s, v, ll: v["value"] > 0),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "eval_samples",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 5760", lambda s, v, ll: v["value"] == 5760),),
                        source="§9 Training Loop: evaluation frequency and thoroughness",
                    ),
                    KeyRule(
                        "eval_accuracy",
                        Req.AT_LEAST_ONE,
                        checks=(
                            Check(
                                "'samples_count' in v['metadata']",
                                lambda s, v, ll: "samples_count" in v["metadata"],
                            ),
                        ),
                        atleast_one=Check(
                            "(v['value'] <= 5.6) and v['value'] > 0.0",
                            lambda s, v, ll: (v["value"] <= 5.6) and v["value"] > 0.0,
                        ),
                        source="§3 Benchmarks: closed quality targets; §9 Training Loop: quality measure and evaluation frequency",
                    ),
                    KeyRule(
                        "init_checkpoint_step",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 0", lambda s, v, ll: v["value"] == 0),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                ),
                begin=None,
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
                        checks=(
                            Check(
                                "('epoch_num' in v['metadata']) | ('samples_count' in v['metadata'])",
                                lambda s, v, ll: (
                                    ("epoch_num" in v["metadata"]) | ("samples_count" in v["metadata"])
                                ),
                            ),
                        ),
                        source="§9 Training Loop: evaluation frequency and thoroughness",
                    ),
                    KeyRule(
                        "epoch_stop",
                        Req.AT_LEAST_ONE_OR,
                        alternatives=("block_stop",),
                        checks=(
                            Check(
                                "('epoch_num' in v['metadata']) | ('samples_count' in v['metadata'])",
                                lambda s, v, ll: (
                                    ("epoch_num" in v["metadata"]) | ("samples_count" in v["metadata"])
                                ),
                            ),
                        ),
                        source="§9 Training Loop: evaluation frequency and thoroughness",
                    ),
                ),
            ),
            _PREVIOUS["open_bert"],  # unchanged since 4.1.0
            _PREVIOUS["open_common"].derive(
                replace=(
                    KeyRule(
                        "submission_benchmark",
                        Req.EXACTLY_ONE,
                        checks=(
                            Check(
                                "v['value'] in ['retinanet', 'stable_diffusion', 'dlrm_dcnv2', 'bert', 'rgat', 'llama2_70b_lora', 'llama31_405b']",
                                lambda s, v, ll: (
                                    v["value"]
                                    in (
                                        "retinanet",
                                        "stable_diffusion",
                                        "dlrm_dcnv2",
                                        "bert",
                                        "rgat",
                                        "llama2_70b_lora",
                                        "llama31_405b",
                                    )
                                    or v["value"] in s.benchmarks
                                ),
                            ),
                        ),
                        post=_open_common_submission_benchmark_post,
                        source="§3 Benchmarks",
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
                        source="§9 Training Loop: OPEN hyperparameters (as the official open table enforces)",
                    ),
                    KeyRule(
                        "max_sequence_length",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 8192", lambda s, v, ll: v["value"] == 8192),),
                        source="§9 Training Loop: OPEN hyperparameters (as the official open table enforces)",
                    ),
                    KeyRule(
                        "opt_name",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 'adamw'", lambda s, v, ll: v["value"] == "adamw"),),
                        source="§9 Training Loop: OPEN hyperparameters (as the official open table enforces)",
                    ),
                    KeyRule(
                        "opt_base_learning_rate",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: OPEN hyperparameters (as the official open table enforces)",
                    ),
                    KeyRule(
                        "opt_end_learning_rate",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: OPEN hyperparameters (as the official open table enforces)",
                    ),
                    KeyRule(
                        "opt_learning_rate_decay_steps",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: OPEN hyperparameters (as the official open table enforces)",
                    ),
                    KeyRule(
                        "opt_learning_rate_warmup_steps",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: OPEN hyperparameters (as the official open table enforces)",
                    ),
                    KeyRule(
                        "opt_learning_rate_decay_schedule",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: OPEN hyperparameters (as the official open table enforces)",
                    ),
                    KeyRule(
                        "opt_adamw_beta_1",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: OPEN hyperparameters (as the official open table enforces)",
                    ),
                    KeyRule(
                        "opt_adamw_beta_2",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: OPEN hyperparameters (as the official open table enforces)",
                    ),
                    KeyRule(
                        "opt_adamw_epsilon",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: OPEN hyperparameters (as the official open table enforces)",
                    ),
                    KeyRule(
                        "opt_adamw_weight_decay",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: OPEN hyperparameters (as the official open table enforces)",
                    ),
                    KeyRule(
                        "opt_gradient_clip_norm",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: OPEN hyperparameters (as the official open table enforces)",
                    ),
                    KeyRule(
                        "gradient_accumulation_steps",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] > 0", lambda s, v, ll: v["value"] > 0),),
                        source="§9 Training Loop: OPEN hyperparameters (as the official open table enforces)",
                    ),
                    KeyRule(
                        "eval_samples",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 5760", lambda s, v, ll: v["value"] == 5760),),
                        source="§9 Training Loop: evaluation frequency and thoroughness",
                    ),
                    KeyRule(
                        "eval_accuracy",
                        Req.AT_LEAST_ONE,
                        checks=(
                            Check(
                                "'epoch_num' in v['metadata']", lambda s, v, ll: "epoch_num" in v["metadata"]
                            ),
                        ),
                        atleast_one=Check(
                            "(v['value'] <= 5.6) and v['value'] > 0.0",
                            lambda s, v, ll: (v["value"] <= 5.6) and v["value"] > 0.0,
                        ),
                        source="§9 Training Loop: OPEN stopping criteria; §3 Benchmarks quality targets",
                    ),
                    KeyRule(
                        "init_checkpoint_step",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 0", lambda s, v, ll: v["value"] == 0),),
                        source="§9 Training Loop: OPEN hyperparameters (as the official open table enforces)",
                    ),
                ),
                begin=None,
            ),
            Config(
                "open_retinanet",
                (
                    KeyRule(
                        "eval_accuracy",
                        Req.AT_LEAST_ONE,
                        checks=(
                            Check(
                                "'epoch_num' in v['metadata']", lambda s, v, ll: "epoch_num" in v["metadata"]
                            ),
                        ),
                        atleast_one=Check("v['value'] < 1.0", lambda s, v, ll: v["value"] < 1.0),
                        source="§9 Training Loop: OPEN stopping criteria; §3 Benchmarks quality targets",
                    ),
                ),
                begin=None,
            ),
            Config(
                "open_rgat",
                (
                    KeyRule(
                        "eval_accuracy",
                        Req.AT_LEAST_ONE,
                        checks=(
                            Check(
                                "'epoch_num' in v['metadata']", lambda s, v, ll: "epoch_num" in v["metadata"]
                            ),
                        ),
                        atleast_one=Check("v['value'] < 1.0", lambda s, v, ll: v["value"] < 1.0),
                        source="§9 Training Loop: OPEN stopping criteria; §3 Benchmarks quality targets",
                    ),
                ),
                begin=None,
            ),
        )
    },
    benchmarks=(
        "retinanet",
        "stable_diffusion",
        "dlrm_dcnv2",
        "bert",
        "rgat",
        "llama2_70b_lora",
        "llama31_405b",
    ),
    init_limit_mins=_previous.RULESET.init_limit_mins,
)
