"""Synthetic training logs that comply with ruleset 6.1.0, for tests, mutations and benchmarks.

One valid event list per benchmark and division (values chosen inside every constraint of the
rules' hyperparameter tables and evaluation schedules); tests mutate single events to get logs
the checkers must reject, and `bench/compliance_speed.py` pads them to ~100 MB.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from proctor.training.mllog import encode_line

BENCHMARKS_6_1_0 = (
    "llama31_8b",
    "gpt_oss_20b",
    "llama2_70b_lora",
    "flux1",
    "deepseekv3_671b",
    "qwen35_397b_grpo",
    "dlrmv4",
)


@dataclass(frozen=True, slots=True)
class Event:
    key: str
    value: Any = None
    metadata: dict[str, Any] = field(default_factory=dict)
    time_ms: float = 0.0
    event_type: str = "POINT_IN_TIME"


_LLM = {
    "global_batch_size": 32,
    "max_sequence_length": 8192,
    "opt_name": "adamw",
    "opt_base_learning_rate": 4e-4,
    "opt_end_learning_rate": 4e-5,
    "opt_learning_rate_warmup_steps": 1000,
    "opt_learning_rate_decay_steps": 1_199_000,
    "opt_learning_rate_decay_schedule": "cosine with linear warmup",
    "opt_adamw_beta_1": 0.9,
    "opt_adamw_beta_2": 0.95,
    "opt_adamw_epsilon": 1e-05,
    "opt_adamw_weight_decay": 0.1,
    "opt_gradient_clip_norm": 1.0,
    "gradient_accumulation_steps": 1,
    "eval_samples": 1024,
    "max_steps": 1200000,
}

_DLRM_GBS = 8192
_DLRM_I = max(1, math.ceil(0.001 * 2290835423 / _DLRM_GBS)) * _DLRM_GBS
_DLRM_FIRST = math.ceil(math.floor((4480 * _DLRM_GBS + 135331840) / 3) / _DLRM_I) * _DLRM_I

HYPERPARAMETERS: dict[str, dict[str, Any]] = {
    "llama31_8b": dict(_LLM),
    "gpt_oss_20b": dict(_LLM),
    "llama2_70b_lora": {
        "global_batch_size": 8,
        "opt_base_learning_rate": 4e-4,
        "opt_learning_rate_training_steps": 1024,
        "opt_gradient_clip_norm": 0.3,
        "opt_adamw_weight_decay": 1e-4,
        "gradient_accumulation_steps": 1,
        "lora_alpha": 32,
        "lora_rank": 16,
        "eval_samples": 173,
    },
    "flux1": {
        "global_batch_size": 1024,
        "evaluation_frequency": 262144,
        "opt_name": "adamw",
        "opt_adamw_beta_1": 0.9,
        "opt_adamw_beta_2": 0.95,
        "opt_adamw_epsilon": 1e-08,
        "opt_adamw_weight_decay": 0.1,
        "opt_base_learning_rate": 1e-4,
        "opt_learning_rate_warmup_steps": 0,
        "opt_gradient_clip_norm": 1.0,
        "gradient_accumulation_steps": 1,
        "eval_samples": 29696,
    },
    "deepseekv3_671b": {
        "global_batch_size": 16384,
        "max_sequence_length": 4096,
        "opt_name": "adamw",
        "opt_base_learning_rate": 2.4e-05,
        "max_steps": 12000,
        "opt_learning_rate_warmup_steps": 4,
        "opt_learning_rate_decay_steps": 11996,
        "opt_learning_rate_decay_schedule": "cosine with linear warmup",
        "opt_adamw_beta_1": 0.9,
        "opt_adamw_beta_2": 0.95,
        "opt_adamw_epsilon": 1e-08,
        "opt_adamw_weight_decay": 0.1,
        "opt_gradient_clip_norm": 1.0,
        "moe_aux_loss_coeff": 0.01,
        "gradient_accumulation_steps": 1,
        "eval_samples": 1024,
    },
    "qwen35_397b_grpo": {
        "global_batch_size": 256,
        "max_sequence_length": 65536,
        "eval_samples": 251,
        "init_checkpoint_step": 0,
        "max_steps": 100,
        "opt_name": "adamw",
        "opt_base_learning_rate": 1e-06,
        "opt_adamw_beta_1": 0.9,
        "opt_adamw_beta_2": 0.999,
        "opt_adamw_epsilon": 1e-8,
        "opt_adamw_weight_decay": 0.0,
        "opt_gradient_clip_norm": 0.125,
        "opt_learning_rate_warmup_steps": 0,
        "opt_learning_rate_decay_schedule": "constant",
        "generation_training_rollout_temperature": 1.0,
        "generation_training_rollout_top_p": 1.0,
        "generation_validation_rollout_temperature": 0.1,
        "generation_validation_rollout_top_p": 0.95,
        "num_prompts_per_step": 16,
        "num_generations_per_prompt": 16,
        "gradient_accumulation_steps": 1,
    },
    "dlrmv4": {
        "global_batch_size": _DLRM_GBS,
        "gradient_accumulation_steps": 1,
        "train_samples": 2290835423,
        "eval_samples": 2058204,
        "max_sequence_length": 4096,
        "opt_name": "Adam",
        "opt_base_learning_rate": 1e-6,
        "opt_adam_beta_1": 0.95,
        "opt_adam_beta_2": 0.999,
        "opt_adam_epsilon": 1e-8,
        "opt_weight_decay": 0.0,
        "opt_gradient_clip_norm": 1.0,
        "opt_sparse_name": "RowWiseAdagrad",
        "opt_sparse_base_learning_rate": 1e-6,
        "opt_learning_rate_warmup_steps": 24000,
        "opt_learning_rate_warmup_start_lr": 0.0,
        "eval_every_data_pct": 0.001,
    },
}

# (samples_count of each evaluation, accuracy values ending at the target)
EVALS: dict[str, tuple[list[int], list[float]]] = {
    "llama31_8b": ([12288, 24576, 36864], [3.9, 3.5, 3.29]),
    "gpt_oss_20b": ([12288, 24576, 36864], [3.9, 3.5, 3.33]),
    "llama2_70b_lora": ([384, 768, 1152], [0.99, 0.95, 0.92]),
    "flux1": ([262144, 524288, 786432], [0.7, 0.6, 0.58]),
    "deepseekv3_671b": ([704512, 704512 + 16384, 704512 + 2 * 16384], [3.9, 3.7, 3.55]),
    "qwen35_397b_grpo": ([4608, 4864, 5120], [0.5, 0.6, 0.7]),
    "dlrmv4": ([_DLRM_FIRST, _DLRM_FIRST + _DLRM_I, _DLRM_FIRST + 2 * _DLRM_I], [0.70, 0.74, 0.751]),
}

DISCLOSURE: dict[str, Any] = {
    "lowest_numerical_precision_in_linear": "fp8",
    "lowest_numerical_precision_in_attn": "bfloat16",
    "lowest_numerical_precision_in_comm": "bfloat16",
    "tensor_parallelism": 1,
    "pipeline_parallelism": 1,
    "context_parallelism": 1,
    "expert_parallelism": 1,
    "micro_batch_size": 1,
    "config_filename": "config_DGXB200_1x8x1.sh",
}


def valid_events(
    benchmark: str,
    division: str = "closed",
    *,
    t0: float = 1_700_000_000_000.0,
    init_ms: float = 60_000.0,
    seed: int = 1234,
) -> list[Event]:
    """A complete compliant 6.1.0 run of `benchmark` in `division`, in log order."""
    hp = dict(HYPERPARAMETERS[benchmark])
    samples, accs = EVALS[benchmark]
    if division == "open" and benchmark in ("llama31_8b", "llama2_70b_lora"):
        accs = [*accs[:-1], 0.9]  # so that the official open tables (value below 1.0) accept it too
    meta = {"file": "train.py", "lineno": 10}
    ev: list[Event] = []
    t = t0

    def add(
        key: str,
        value: Any = None,
        md: dict[str, Any] | None = None,
        dt: float = 1.0,
        et: str = "POINT_IN_TIME",
    ) -> None:
        nonlocal t
        t += dt
        ev.append(Event(key, value, {**meta, **(md or {})}, t, et))

    add("cache_clear", True)
    add("init_start", None, et="INTERVAL_START")
    for k, v in (
        ("submission_benchmark", benchmark),
        ("submission_division", division),
        ("submission_org", "proctor"),
        ("submission_platform", "1xTEST"),
        ("submission_status", "onprem"),
    ):
        add(k, v)
    add("seed", seed, {"lineno": 42})
    for k, v in DISCLOSURE.items():
        add(k, v)
    for k, v in hp.items():
        add(k, v)
    if "train_samples" not in hp:
        add("train_samples", 1_000_000)
    add("init_stop", None, dt=init_ms, et="INTERVAL_END")
    add("run_start", None, et="INTERVAL_START")
    prev = 0
    for n, acc in zip(samples, accs, strict=True):
        add(
            "block_start",
            None,
            {"samples_count": prev, "first_epoch_num": 0, "epoch_count": 1},
            et="INTERVAL_START",
        )
        add("block_stop", None, {"samples_count": n, "first_epoch_num": 0}, dt=1000.0, et="INTERVAL_END")
        add("eval_start", None, {"samples_count": n}, et="INTERVAL_START")
        add("eval_accuracy", acc, {"samples_count": n})
        if benchmark == "flux1" and division == "open":
            add("averaged_validation_loss", acc, {"samples_count": n})
        add("eval_stop", None, {"samples_count": n}, et="INTERVAL_END")
        prev = n
    add("run_stop", None, {"status": "success", "samples_count": prev}, et="INTERVAL_END")
    return ev


def render(events: list[Event]) -> str:
    return "".join(
        encode_line("", e.time_ms, e.event_type, e.key, e.value, e.metadata) + "\n" for e in events
    )


def write_log(path: str | Path, events: list[Event], prefix: str = "") -> Path:
    """Write events as `:::MLLOG` lines (with an optional rank-tag `prefix` on each line)."""
    p = Path(path)
    text = render(events)
    if prefix:
        text = "".join(prefix + line + "\n" for line in text.splitlines())
    p.write_text(text, encoding="utf-8")
    return p


def with_value(events: list[Event], key: str, value: Any) -> list[Event]:
    """A copy with every `key` event's value replaced."""
    return [replace(e, value=value) if e.key == key else e for e in events]


def without(events: list[Event], key: str) -> list[Event]:
    return [e for e in events if e.key != key]


def duplicated(events: list[Event], key: str, value: Any = None) -> list[Event]:
    """A copy with the first `key` event repeated right after itself (optionally with another value)."""
    out: list[Event] = []
    done = False
    for e in events:
        out.append(e)
        if e.key == key and not done:
            out.append(replace(e, value=e.value if value is None else value))
            done = True
    return out
