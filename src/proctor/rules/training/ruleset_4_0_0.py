"""Training compliance rules, ruleset 4.0.0: every config of the official checker as a table.

Drafted by `generate_tables.py` from mlperf_logging 4.1.68 `training_4.0.0/*.yaml`, then
reviewed. Config names are the YAML names without `.yaml` ("common", "closed_<benchmark>", ...).
Where the rules text and the official checker differ, see docs/deviations.md (training section).
"""

# ruff: noqa: E501, E712, E731

from __future__ import annotations

from proctor.rules.training.types import Check, Config, KeyRule, Req, Ruleset, is_integer, math

__all__ = ["INIT_LIMIT_MINS", "RULESET", "is_integer", "math"]

# rules §11 Run Results: maximum model initialization time, 30 minutes Closed, 4 hours Open
INIT_LIMIT_MINS = {"closed": 30, "open": 240}


def _closed_bert_global_batch_size_post(s, v, ll) -> None:
    s["global_batch_size"] = v["value"]


def _closed_common_submission_benchmark_post(s, v, ll) -> None:
    s.enqueue("closed_{}".format(v["value"]))


def _closed_gpt3_global_batch_size_post(s, v, ll) -> None:
    s["global_batch_size"] = v["value"]


def _closed_llama2_70b_lora_global_batch_size_post(s, v, ll) -> None:
    s["global_batch_size"] = v["value"]


def _closed_resnet_opt_name_post(s, v, ll) -> None:
    s.enqueue("closed_resnet_{}".format(v["value"]))


def _common_begin(s) -> None:
    s.update(
        {
            "init_started": False,
            "init_stopped": False,
            "run_started": False,
            "run_stopped": False,
            "in_epoch": False,
            "last_epoch": 0,
            "in_block": False,
            "block_first_epoch": -1,
            "first_init_start": 9e99,
            "compile_time_mins": 0,
        }
    )


def _common_submission_division_post(s, v, ll) -> None:
    s.enqueue("{}_common".format(v["value"]))
    s["compile_time_mins"] = INIT_LIMIT_MINS["open" if v["value"] == "open" else "closed"]


def _common_init_start_post(s, v, ll) -> None:
    s["init_started"] = True
    s["first_init_start"] = min(s["first_init_start"], ll.timestamp)


def _common_init_stop_post(s, v, ll) -> None:
    s["init_stopped"] = True


def _common_run_start_post(s, v, ll) -> None:
    s["run_started"] = True


def _common_run_stop_post(s, v, ll) -> None:
    s["run_stopped"] = True


def _open_common_submission_benchmark_post(s, v, ll) -> None:
    s.enqueue("open_{}".format(v["value"]))


def _open_gpt3_global_batch_size_post(s, v, ll) -> None:
    s["global_batch_size"] = v["value"]


# Not expressible as tables (they rewrite the log lines): closed_stable_diffusion, open_stable_diffusion

RULESET = Ruleset(
    "4.0.0",
    {
        c.name: c
        for c in (
            Config(
                "closed_bert",
                (
                    KeyRule(
                        "global_batch_size",
                        Req.EXACTLY_ONE,
                        post=_closed_bert_global_batch_size_post,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_base_learning_rate",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_lamb_epsilon",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_learning_rate_training_steps",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_learning_rate_warmup_steps",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "num_warmup_steps",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "start_warmup_step",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_lamb_beta_1",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_lamb_beta_2",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_lamb_weight_decay_rate",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
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
                            "(v['value'] >= 0.720) and v['value'] < 1.0",
                            lambda s, v, ll: (v["value"] >= 0.720) and v["value"] < 1.0,
                        ),
                        source="§3 Benchmarks: closed quality targets; §9 Training Loop: quality measure and evaluation frequency",
                    ),
                ),
                begin=None,
            ),
            Config(
                "closed_common",
                (
                    KeyRule(
                        "submission_benchmark",
                        Req.EXACTLY_ONE,
                        checks=(
                            Check(
                                "v['value'] in ['resnet', 'ssd', 'stable_diffusion', 'maskrcnn', 'gpt3', 'dlrm_dcnv2', 'bert', 'rnnt', 'unet3d', 'gnn','llama2_70b_lora']",
                                lambda s, v, ll: (
                                    v["value"]
                                    in (
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
                                    or v["value"] in s.benchmarks
                                ),
                            ),
                        ),
                        post=_closed_common_submission_benchmark_post,
                        source="§3 Benchmarks",
                    ),
                    KeyRule(
                        "gradient_accumulation_steps",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] > 0", lambda s, v, ll: v["value"] > 0),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                ),
                begin=None,
            ),
            Config(
                "closed_dlrm_dcnv2",
                (
                    KeyRule(
                        "global_batch_size",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_name",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 'adagrad'", lambda s, v, ll: v["value"] == "adagrad"),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_base_learning_rate",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_adagrad_learning_rate_decay",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 0", lambda s, v, ll: v["value"] == 0),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_weight_decay",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 0", lambda s, v, ll: v["value"] == 0),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_adagrad_initial_accumulator_value",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 0", lambda s, v, ll: v["value"] == 0),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_adagrad_epsilon",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 1e-8", lambda s, v, ll: v["value"] == 1e-8),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_learning_rate_warmup_steps",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 0", lambda s, v, ll: v["value"] == 0),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_learning_rate_decay_start_step",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 0", lambda s, v, ll: v["value"] == 0),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_learning_rate_decay_steps",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 0", lambda s, v, ll: v["value"] == 0),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
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
                            "v['value'] >= 0.80275 and v['value'] <= 1.0",
                            lambda s, v, ll: v["value"] >= 0.80275 and v["value"] <= 1.0,
                        ),
                        source="§3 Benchmarks: closed quality targets; §9 Training Loop: quality measure and evaluation frequency",
                    ),
                    KeyRule(
                        "eval_samples",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 89137319", lambda s, v, ll: v["value"] == 89137319),),
                        source="§9 Training Loop: evaluation frequency and thoroughness",
                    ),
                ),
                begin=None,
            ),
            Config(
                "closed_gnn",
                (
                    KeyRule(
                        "global_batch_size",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] > 0", lambda s, v, ll: v["value"] > 0),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_name",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 'adam'", lambda s, v, ll: v["value"] == "adam"),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_base_learning_rate",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] >= 0.0", lambda s, v, ll: v["value"] >= 0.0),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
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
                            "v['value'] >= 0.72 and v['value'] < 1.0",
                            lambda s, v, ll: v["value"] >= 0.72 and v["value"] < 1.0,
                        ),
                        source="§3 Benchmarks: closed quality targets; §9 Training Loop: quality measure and evaluation frequency",
                    ),
                ),
                begin=None,
            ),
            Config(
                "closed_gpt3",
                (
                    KeyRule(
                        "global_batch_size",
                        Req.EXACTLY_ONE,
                        post=_closed_gpt3_global_batch_size_post,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "max_sequence_length",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 2048", lambda s, v, ll: v["value"] == 2048),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_name",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 'adam'", lambda s, v, ll: v["value"] == "adam"),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_base_learning_rate",
                        Req.EXACTLY_ONE,
                        checks=(
                            Check(
                                "v['value'] == 2e-5 or v['value'] == 3e-5",
                                lambda s, v, ll: v["value"] == 2e-5 or v["value"] == 3e-5,
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
                        "opt_adam_beta_1",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 0.9", lambda s, v, ll: v["value"] == 0.9),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_adam_beta_2",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 0.95", lambda s, v, ll: v["value"] == 0.95),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_adam_epsilon",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 1e-8", lambda s, v, ll: v["value"] == 1e-8),),
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
                            "(v['value'] <= 2.69) and v['value'] > 2.6",
                            lambda s, v, ll: (v["value"] <= 2.69) and v["value"] > 2.6,
                        ),
                        source="§3 Benchmarks: closed quality targets; §9 Training Loop: quality measure and evaluation frequency",
                    ),
                    KeyRule(
                        "init_checkpoint_step",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] > 0", lambda s, v, ll: v["value"] > 0),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                ),
                begin=None,
            ),
            Config(
                "closed_llama2_70b_lora",
                (
                    KeyRule(
                        "global_batch_size",
                        Req.EXACTLY_ONE,
                        post=_closed_llama2_70b_lora_global_batch_size_post,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_base_learning_rate",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "lora_alpha",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_learning_rate_training_steps",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_gradient_clip_norm",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_adamw_weight_decay",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "gradient_accumulation_steps",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "lora_alpha",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "lora_rank",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 16", lambda s, v, ll: v["value"] == 16),),
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
                            "(v['value'] <= 0.925) and v['value'] > 0.0",
                            lambda s, v, ll: (v["value"] <= 0.925) and v["value"] > 0.0,
                        ),
                        source="§3 Benchmarks: closed quality targets; §9 Training Loop: quality measure and evaluation frequency",
                    ),
                ),
                begin=None,
            ),
            Config(
                "closed_resnet",
                (
                    KeyRule(
                        "global_batch_size",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] > 0", lambda s, v, ll: v["value"] > 0),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_name",
                        Req.EXACTLY_ONE,
                        checks=(
                            Check(
                                "v['value'] in ['sgd', 'lars']",
                                lambda s, v, ll: v["value"] in ["sgd", "lars"],
                            ),
                        ),
                        post=_closed_resnet_opt_name_post,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
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
                            "v['value'] >= 0.7590 and v['value'] < 1.0",
                            lambda s, v, ll: v["value"] >= 0.7590 and v["value"] < 1.0,
                        ),
                        source="§3 Benchmarks: closed quality targets; §9 Training Loop: quality measure and evaluation frequency",
                    ),
                ),
                begin=None,
            ),
            Config(
                "closed_resnet_lars",
                (
                    KeyRule(
                        "lars_opt_base_learning_rate",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "lars_opt_end_learning_rate",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 0.0001", lambda s, v, ll: v["value"] == 0.0001),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "lars_opt_learning_rate_decay_poly_power",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 2", lambda s, v, ll: v["value"] == 2),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "lars_opt_learning_rate_decay_steps",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "lars_epsilon",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 0.0", lambda s, v, ll: v["value"] == 0.0),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "lars_opt_learning_rate_warmup_epochs",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "lars_opt_momentum",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "lars_opt_weight_decay",
                        Req.EXACTLY_ONE,
                        checks=(
                            Check(
                                "is_integer(math.log2(v['value'] / 0.0001))",
                                lambda s, v, ll: is_integer(math.log2(v["value"] / 0.0001)),
                            ),
                        ),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                ),
                begin=None,
            ),
            Config(
                "closed_resnet_sgd",
                (
                    KeyRule(
                        "sgd_opt_base_learning_rate",
                        Req.EXACTLY_ONE,
                        checks=(
                            Check(
                                "is_integer(v['value'] / 0.001)",
                                lambda s, v, ll: is_integer(v["value"] / 0.001),
                            ),
                        ),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "sgd_opt_end_learning_rate",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 0.0001", lambda s, v, ll: v["value"] == 0.0001),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "sgd_opt_learning_rate_decay_poly_power",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "sgd_opt_learning_rate_decay_steps",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "sgd_opt_weight_decay",
                        Req.EXACTLY_ONE,
                        checks=(
                            Check(
                                "is_integer(math.log2(v['value'] / 0.0001))",
                                lambda s, v, ll: is_integer(math.log2(v["value"] / 0.0001)),
                            ),
                        ),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "sgd_opt_momentum",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "model_bn_span",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_learning_rate_warmup_epochs",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                ),
                begin=None,
            ),
            Config(
                "closed_ssd",
                (
                    KeyRule(
                        "global_batch_size",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_name",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 'adam'", lambda s, v, ll: v["value"] == "adam"),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_base_learning_rate",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] >= 0.0", lambda s, v, ll: v["value"] >= 0.0),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_weight_decay",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 0.0", lambda s, v, ll: v["value"] == 0.0),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_learning_rate_warmup_epochs",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] >= 0.0", lambda s, v, ll: v["value"] >= 0.0),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_learning_rate_warmup_factor",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] >= 0.0", lambda s, v, ll: v["value"] >= 0.0),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
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
                            "v['value'] >= 0.340 and v['value'] < 1.0",
                            lambda s, v, ll: v["value"] >= 0.340 and v["value"] < 1.0,
                        ),
                        source="§3 Benchmarks: closed quality targets; §9 Training Loop: quality measure and evaluation frequency",
                    ),
                ),
                begin=None,
            ),
            Config(
                "closed_unet3d",
                (
                    KeyRule(
                        "global_batch_size",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_name",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_base_learning_rate",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_learning_rate_warmup_epochs",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] >= 0", lambda s, v, ll: v["value"] >= 0),),
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_learning_rate_decay_boundary_epochs",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_learning_rate_decay_factor",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_weight_decay",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "train_samples",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 168", lambda s, v, ll: v["value"] == 168),),
                        source="§9 Training Loop: evaluation frequency and thoroughness",
                    ),
                    KeyRule(
                        "eval_samples",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 42", lambda s, v, ll: v["value"] == 42),),
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
                        atleast_one=Check("v['value'] >= 0.908", lambda s, v, ll: v["value"] >= 0.908),
                        source="§3 Benchmarks: closed quality targets; §9 Training Loop: quality measure and evaluation frequency",
                    ),
                    KeyRule(
                        "seed",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "opt_momentum",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "oversampling",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "training_input_shape",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "validation_input_shape",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                    KeyRule(
                        "validation_overlap",
                        Req.EXACTLY_ONE,
                        source="§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)",
                    ),
                ),
                begin=None,
            ),
            Config(
                "common",
                (
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
                    KeyRule(
                        "submission_division",
                        Req.EXACTLY_ONE,
                        checks=(
                            Check(
                                "v['value'] in ['closed', 'open']",
                                lambda s, v, ll: v["value"] in ["closed", "open"],
                            ),
                        ),
                        post=_common_submission_division_post,
                        source="§4 Divisions",
                    ),
                    KeyRule(
                        "submission_status",
                        Req.EXACTLY_ONE,
                        checks=(
                            Check(
                                "v['value'] in ['cloud', 'onprem', 'preview', 'research']",
                                lambda s, v, ll: v["value"] in ["cloud", "onprem", "preview", "research"],
                            ),
                        ),
                        source="§12 Benchmark Results (submission identification; enforced by the official checker)",
                    ),
                    KeyRule(
                        "cache_clear",
                        Req.AT_LEAST_ONE,
                        checks=(Check("'value' in v", lambda s, v, ll: "value" in v),),
                        source="§6 Data Set: flush the cache or restart the system prior to benchmarking",
                    ),
                    KeyRule(
                        "init_start",
                        Req.AT_LEAST_ONE,
                        checks=(
                            Check("not s['init_stopped']", lambda s, v, ll: not s["init_stopped"]),
                            Check("not s['run_started']", lambda s, v, ll: not s["run_started"]),
                        ),
                        post=_common_init_start_post,
                        source="§11 Run Results: maximum model initialization time (30 min Closed, 4 h Open)",
                    ),
                    KeyRule(
                        "init_stop",
                        Req.EXACTLY_ONE,
                        checks=(
                            Check("s['init_started']", lambda s, v, ll: s["init_started"]),
                            Check("not s['run_started']", lambda s, v, ll: not s["run_started"]),
                            Check(
                                "ll.timestamp - s['first_init_start'] < (s['compile_time_mins']*60*1e3)",
                                lambda s, v, ll: (
                                    ll.timestamp - s["first_init_start"] < (s["compile_time_mins"] * 60 * 1e3)
                                ),
                            ),
                        ),
                        post=_common_init_stop_post,
                        source="§11 Run Results: maximum model initialization time (30 min Closed, 4 h Open)",
                    ),
                    KeyRule(
                        "run_start",
                        Req.EXACTLY_ONE,
                        checks=(
                            Check(
                                "( s['init_stopped'] == True )", lambda s, v, ll: s["init_stopped"] == True
                            ),
                        ),
                        post=_common_run_start_post,
                        source="§11 Run Results: the clock starts before the dataset is touched and stops at the target",
                    ),
                    KeyRule(
                        "run_stop",
                        Req.EXACTLY_ONE,
                        checks=(
                            Check("s['run_started']", lambda s, v, ll: s["run_started"]),
                            Check("'status' in v['metadata']", lambda s, v, ll: "status" in v["metadata"]),
                        ),
                        post=_common_run_stop_post,
                        source="§11 Run Results: the clock starts before the dataset is touched and stops at the target",
                    ),
                    KeyRule(
                        "block_start",
                        Req.AT_LEAST_ONE_OR,
                        alternatives=("epoch_start",),
                        checks=(
                            Check("s['run_started']", lambda s, v, ll: s["run_started"]),
                            Check(
                                "('epoch_count' in v['metadata']) | ('samples_count' in v['metadata'])",
                                lambda s, v, ll: (
                                    ("epoch_count" in v["metadata"]) | ("samples_count" in v["metadata"])
                                ),
                            ),
                            Check(
                                "'first_epoch_num' in v['metadata'] if 'epoch_count' in v['metadata'] else True",
                                lambda s, v, ll: (
                                    "first_epoch_num" in v["metadata"]
                                    if "epoch_count" in v["metadata"]
                                    else True
                                ),
                            ),
                            Check(
                                "v['metadata']['epoch_count'] > 0 if 'epoch_count' in v['metadata'] else True",
                                lambda s, v, ll: (
                                    v["metadata"]["epoch_count"] > 0
                                    if "epoch_count" in v["metadata"]
                                    else True
                                ),
                            ),
                            Check(
                                "v['metadata']['samples_count'] >= 0 if 'samples_count' in v['metadata'] else True",
                                lambda s, v, ll: (
                                    v["metadata"]["samples_count"] >= 0
                                    if "samples_count" in v["metadata"]
                                    else True
                                ),
                            ),
                        ),
                        source="§9 Training Loop: evaluation frequency and thoroughness",
                    ),
                    KeyRule(
                        "block_stop",
                        Req.AT_LEAST_ONE_OR,
                        alternatives=("epoch_stop",),
                        checks=(
                            Check(
                                "('first_epoch_num' in v['metadata']) | ('samples_count' in v['metadata'])",
                                lambda s, v, ll: (
                                    ("first_epoch_num" in v["metadata"]) | ("samples_count" in v["metadata"])
                                ),
                            ),
                        ),
                        source="§9 Training Loop: evaluation frequency and thoroughness",
                    ),
                    KeyRule(
                        "epoch_start",
                        Req.AT_LEAST_ONE_OR,
                        alternatives=("block_start",),
                        checks=(
                            Check(
                                "'epoch_num' in v['metadata']", lambda s, v, ll: "epoch_num" in v["metadata"]
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
                                "'epoch_num' in v['metadata']", lambda s, v, ll: "epoch_num" in v["metadata"]
                            ),
                        ),
                        source="§9 Training Loop: evaluation frequency and thoroughness",
                    ),
                    KeyRule(
                        "eval_start",
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
                        "eval_stop",
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
                    KeyRule(
                        "eval_accuracy",
                        Req.AT_LEAST_ONE,
                        checks=(
                            Check(
                                "('epoch_num' in v['metadata']) | ('samples_count' in v['metadata'])",
                                lambda s, v, ll: (
                                    ("epoch_num" in v["metadata"]) | ("samples_count" in v["metadata"])
                                ),
                            ),
                        ),
                        source="§3 Benchmarks: closed quality targets; §9 Training Loop: quality measure and evaluation frequency",
                    ),
                    KeyRule(
                        "train_samples",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] != ''", lambda s, v, ll: v["value"] != ""),),
                        source="§9 Training Loop: evaluation frequency and thoroughness",
                    ),
                    KeyRule(
                        "eval_samples",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] != ''", lambda s, v, ll: v["value"] != ""),),
                        source="§9 Training Loop: evaluation frequency and thoroughness",
                    ),
                ),
                begin=_common_begin,
            ),
            Config(
                "open_bert",
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
                "open_common",
                (
                    KeyRule(
                        "submission_benchmark",
                        Req.EXACTLY_ONE,
                        checks=(
                            Check(
                                "v['value'] in ['resnet', 'ssd', 'stable_diffusion', 'maskrcnn', 'gpt3', 'dlrm_dcnv2', 'bert', 'rnnt', 'unet3d', 'gnn']",
                                lambda s, v, ll: (
                                    v["value"]
                                    in (
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
                                    )
                                    or v["value"] in s.benchmarks
                                ),
                            ),
                        ),
                        post=_open_common_submission_benchmark_post,
                        source="§3 Benchmarks",
                    ),
                ),
                begin=None,
            ),
            Config(
                "open_dlrm_dcnv2",
                (
                    KeyRule(
                        "eval_accuracy",
                        Req.AT_LEAST_ONE,
                        checks=(
                            Check(
                                "'epoch_num' in v['metadata']", lambda s, v, ll: "epoch_num" in v["metadata"]
                            ),
                        ),
                        atleast_one=Check("v['value'] <= 1.0", lambda s, v, ll: v["value"] <= 1.0),
                        source="§9 Training Loop: OPEN stopping criteria; §3 Benchmarks quality targets",
                    ),
                ),
                begin=None,
            ),
            Config(
                "open_gnn",
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
                "open_gpt3",
                (
                    KeyRule(
                        "global_batch_size",
                        Req.EXACTLY_ONE,
                        post=_open_gpt3_global_batch_size_post,
                        source="§9 Training Loop: OPEN hyperparameters (as the official open table enforces)",
                    ),
                    KeyRule(
                        "max_sequence_length",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 2048", lambda s, v, ll: v["value"] == 2048),),
                        source="§9 Training Loop: OPEN hyperparameters (as the official open table enforces)",
                    ),
                    KeyRule(
                        "opt_name",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 'adam'", lambda s, v, ll: v["value"] == "adam"),),
                        source="§9 Training Loop: OPEN hyperparameters (as the official open table enforces)",
                    ),
                    KeyRule(
                        "opt_base_learning_rate",
                        Req.EXACTLY_ONE,
                        checks=(
                            Check(
                                "v['value'] == 2e-5 or v['value'] == 3e-5",
                                lambda s, v, ll: v["value"] == 2e-5 or v["value"] == 3e-5,
                            ),
                        ),
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
                        checks=(
                            Check(
                                "v['value'] == 'cosine with linear warmup'",
                                lambda s, v, ll: v["value"] == "cosine with linear warmup",
                            ),
                        ),
                        source="§9 Training Loop: OPEN hyperparameters (as the official open table enforces)",
                    ),
                    KeyRule(
                        "opt_adam_beta_1",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 0.9", lambda s, v, ll: v["value"] == 0.9),),
                        source="§9 Training Loop: OPEN hyperparameters (as the official open table enforces)",
                    ),
                    KeyRule(
                        "opt_adam_beta_2",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 0.95", lambda s, v, ll: v["value"] == 0.95),),
                        source="§9 Training Loop: OPEN hyperparameters (as the official open table enforces)",
                    ),
                    KeyRule(
                        "opt_adam_epsilon",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 1e-8", lambda s, v, ll: v["value"] == 1e-8),),
                        source="§9 Training Loop: OPEN hyperparameters (as the official open table enforces)",
                    ),
                    KeyRule(
                        "opt_gradient_clip_norm",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] == 1.0", lambda s, v, ll: v["value"] == 1.0),),
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
                            "(v['value'] <= 2.69) and v['value'] > 2.6",
                            lambda s, v, ll: (v["value"] <= 2.69) and v["value"] > 2.6,
                        ),
                        source="§9 Training Loop: OPEN stopping criteria; §3 Benchmarks quality targets",
                    ),
                    KeyRule(
                        "init_checkpoint_step",
                        Req.EXACTLY_ONE,
                        checks=(Check("v['value'] > 0", lambda s, v, ll: v["value"] > 0),),
                        source="§9 Training Loop: OPEN hyperparameters (as the official open table enforces)",
                    ),
                ),
                begin=None,
            ),
            Config(
                "open_llama2_70b_lora",
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
                "open_resnet",
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
                "open_ssd",
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
                "open_unet3d",
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
    ),
    init_limit_mins=INIT_LIMIT_MINS,
)
