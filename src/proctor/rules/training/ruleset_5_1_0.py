"""Training compliance rules, ruleset 5.1.0: every config of the official checker as a table.

Drafted by `generate_tables.py` from mlperf_logging 4.1.68 `training_5.1.0/*.yaml`, then
reviewed. Config names are the YAML names without `.yaml` ("common", "closed_<benchmark>", ...).
Where the rules text and the official checker differ, see docs/deviations.md (training section).
"""

# ruff: noqa: E501, E712, E731

from __future__ import annotations

from proctor.rules.training import ruleset_5_0_0 as _previous
from proctor.rules.training.types import Check, Config, KeyRule, Req, Ruleset, is_integer, math

# Tables this ruleset keeps word for word from 5.0.0: the same objects.
_PREVIOUS = _previous.RULESET.configs

__all__ = ["RULESET", "is_integer", "math"]


def _closed_common_submission_benchmark_post(s, v, ll) -> None:
    s.enqueue("closed_{}".format(v["value"]))


def _closed_llama31_405b_opt_learning_rate_warmup_steps_post(s, v, ll) -> None:
    s["opt_learning_rate_warmup_steps"] = math.ceil(8000 * 1152 / s["global_batch_size"])


def _closed_llama31_8b_opt_learning_rate_warmup_steps_post(s, v, ll) -> None:
    s["opt_learning_rate_warmup_steps"] = v["value"]


def _open_common_submission_benchmark_post(s, v, ll) -> None:
    s.enqueue("open_{}".format(v["value"]))


_closed_llama31_405b = _PREVIOUS["closed_llama31_405b"].derive(
    # the warmup rule now comes before the decay rule
    drop=("opt_learning_rate_decay_steps", "opt_learning_rate_warmup_steps"),
    add=(
        KeyRule(
            "opt_learning_rate_warmup_steps",
            Req.EXACTLY_ONE,
            post=_closed_llama31_405b_opt_learning_rate_warmup_steps_post,
            source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
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
            source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
        ),
    ),
    before="opt_learning_rate_decay_schedule",
)

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
                        checks=(
                            Check(
                                "v['value'] in ['retinanet', 'flux1', 'dlrm_dcnv2', 'llama31_8b', 'rgat', 'llama2_70b_lora', 'llama31_405b']",
                                lambda s, v, ll: (
                                    v["value"]
                                    in (
                                        "retinanet",
                                        "flux1",
                                        "dlrm_dcnv2",
                                        "llama31_8b",
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
            _PREVIOUS["closed_dlrm_dcnv2"],  # unchanged since 5.0.0
            Config(
                "closed_flux1",
                (
                    KeyRule(
                        "global_batch_size",
                        Req.AT_LEAST_ONE,
                        checks=(Check("v['value'] >= 0", lambda s, v, ll: v["value"] >= 0),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "evaluation_frequency",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 262144", lambda s, v, ll: v["value"] == 262144),),
                        source="§9 Training Loop: evaluation frequency and thoroughness",
                    ),
                    KeyRule(
                        "opt_name",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 'adamw'", lambda s, v, ll: v["value"] == "adamw"),),
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
                        checks=(Check("v['value'] == 1e-08", lambda s, v, ll: v["value"] == 1e-08),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_adamw_weight_decay",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 0.1", lambda s, v, ll: v["value"] == 0.1),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_base_learning_rate",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] >= 0.0", lambda s, v, ll: v["value"] >= 0.0),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_learning_rate_warmup_steps",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] >= 0", lambda s, v, ll: v["value"] >= 0),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_gradient_clip_norm",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 1.0", lambda s, v, ll: v["value"] == 1.0),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
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
                            "v['value'] <= 0.586 and v['value'] > 0.0",
                            lambda s, v, ll: v["value"] <= 0.586 and v["value"] > 0.0,
                        ),
                        source="§3 Benchmarks: closed quality targets; §9 Training Loop: quality measure and evaluation frequency",
                    ),
                ),
                begin=None,
            ),
            _PREVIOUS["closed_llama2_70b_lora"],  # unchanged since 5.0.0
            _closed_llama31_405b,
            _closed_llama31_405b.derive(
                name="closed_llama31_8b",
                drop=("init_checkpoint_step",),
                replace=(
                    KeyRule(
                        "opt_base_learning_rate",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_learning_rate_warmup_steps",
                        Req.EXACTLY_ONE,
                        post=_closed_llama31_8b_opt_learning_rate_warmup_steps_post,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
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
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "eval_samples",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 1024", lambda s, v, ll: v["value"] == 1024),),
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
                            "(v['value'] <= 3.3) and v['value'] > 0.0",
                            lambda s, v, ll: (v["value"] <= 3.3) and v["value"] > 0.0,
                        ),
                        source="§3 Benchmarks: closed quality targets; §9 Training Loop: quality measure and evaluation frequency",
                    ),
                ),
                add=(
                    KeyRule(
                        "max_steps",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 1200000", lambda s, v, ll: v["value"] == 1200000),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                ),
            ),
            _PREVIOUS["closed_retinanet"],  # unchanged since 5.0.0
            _PREVIOUS["closed_rgat"],  # unchanged since 5.0.0
            _PREVIOUS["common"].derive(
                add=(
                    KeyRule(
                        "submission_org",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] != ''", lambda s, v, ll: v["value"] != ""),),
                        source="§12 Benchmark Results (submission identification; enforced by the official checker)",
                    ),
                    KeyRule(
                        "submission_platform",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] != ''", lambda s, v, ll: v["value"] != ""),),
                        source="§12 Benchmark Results (submission identification; enforced by the official checker)",
                    ),
                ),
                before="submission_division",
            ),
            _PREVIOUS["open_bert"],  # unchanged since 5.0.0
            _PREVIOUS["open_common"].derive(
                replace=(
                    KeyRule(
                        "submission_benchmark",
                        Req.EXACTLY_ONE,
                        checks=(
                            Check(
                                "v['value'] in ['retinanet', 'flux1', 'dlrm_dcnv2', 'llama31_8b', 'rgat', 'llama2_70b_lora', 'llama31_405b']",
                                lambda s, v, ll: (
                                    v["value"]
                                    in (
                                        "retinanet",
                                        "flux1",
                                        "dlrm_dcnv2",
                                        "llama31_8b",
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
            _PREVIOUS["open_dlrm_dcnv2"],  # unchanged since 5.0.0
            Config(
                "open_flux1",
                (
                    KeyRule(
                        "averaged_validation_loss",
                        Req.AT_LEAST_ONE,
                        checks=(
                            Check(
                                "'samples_count' in v['metadata']",
                                lambda s, v, ll: "samples_count" in v["metadata"],
                            ),
                        ),
                        atleast_one=Check(
                            "v['value'] <= 0.586 and v['value'] > 0.0",
                            lambda s, v, ll: v["value"] <= 0.586 and v["value"] > 0.0,
                        ),
                        source="§9 Training Loop: OPEN stopping criteria; §3 Benchmarks quality targets",
                    ),
                ),
                begin=None,
            ),
            _PREVIOUS["open_llama2_70b_lora"],  # unchanged since 5.0.0
            _PREVIOUS["open_llama31_405b"],  # unchanged since 5.0.0
            Config(
                "open_llama31_8b",
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
            _PREVIOUS["open_retinanet"],  # unchanged since 5.0.0
            _PREVIOUS["open_rgat"],  # unchanged since 5.0.0
        )
    },
    benchmarks=("retinanet", "flux1", "dlrm_dcnv2", "llama31_8b", "rgat", "llama2_70b_lora", "llama31_405b"),
    init_limit_mins=_previous.RULESET.init_limit_mins,
)
