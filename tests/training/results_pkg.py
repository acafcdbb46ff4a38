"""Synthetic training result logs and packages (llama31_8b, ruleset 6.1.0) that the official tools accept.

Shared by the RCP, scoring, package and summary tests; every log is written line by line in the
official `:::MLLOG` format, so the official mlperf-logging checkers can be run on the same files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

T0 = 1_700_000_000_000

LLAMA_HP: dict[str, Any] = {
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
DISCLOSURE: dict[str, Any] = {
    "lowest_numerical_precision_in_linear": "fp8",
    "lowest_numerical_precision_in_attn": "bfloat16",
    "lowest_numerical_precision_in_comm": "bfloat16",
    "tensor_parallelism": 1,
    "pipeline_parallelism": 1,
    "context_parallelism": 1,
    "expert_parallelism": 1,
    "micro_batch_size": 1,
    "config_filename": "config.sh",
}

SYSTEM: dict[str, Any] = {
    "submitter": "acme",
    "division": "closed",
    "status": "Available on-premise",
    "system_name": "sys1",
    "number_of_nodes": "1",
    "host_processors_per_node": "2",
    "host_processor_model_name": "CPU-X",
    "host_processor_core_count": "64",
    "host_processor_vcpu_count": "128",
    "host_processor_frequency": "",
    "host_processor_caches": "",
    "host_processor_interconnect": "",
    "host_memory_capacity": "1 TB",
    "host_storage_type": "NVMe",
    "host_storage_capacity": "8 TB",
    "host_networking": "",
    "host_networking_topology": "",
    "host_memory_configuration": "",
    "accelerators_per_node": "8",
    "accelerator_model_name": "X100",
    "accelerator_host_interconnect": "",
    "accelerator_frequency": "",
    "accelerator_on-chip_memories": "",
    "accelerator_memory_configuration": "",
    "accelerator_memory_capacity": "",
    "accelerator_interconnect": "",
    "accelerator_interconnect_topology": "",
    "cooling": "air",
    "hw_notes": "",
    "framework": "PyTorch",
    "other_software_stack": "",
    "operating_system": "Linux",
    "sw_notes": "",
}


def _line(
    t: float,
    key: str,
    value: Any = None,
    md: dict[str, Any] | None = None,
    event: str = "POINT_IN_TIME",
    lineno: int = 10,
) -> str:
    obj = {
        "namespace": "",
        "time_ms": t,
        "event_type": event,
        "key": key,
        "value": value,
        "metadata": {"file": "train.py", "lineno": lineno, **(md or {})},
    }
    return ":::MLLOG " + json.dumps(obj) + "\n"


def llama_log(
    path: Path,
    *,
    samples: int,
    minutes: float,
    gbs: int = 32,
    converged: bool = True,
    seed: int = 1,
    start_ms: float = T0,
    benchmark: str = "llama31_8b",
    division: str = "closed",
    with_run_stop: bool = True,
) -> Path:
    """One run: converges at `samples` (last eval) after `minutes` between run_start and run_stop."""
    t = float(start_ms)
    out = [_line(t, "cache_clear", True), _line(t + 1, "init_start", event="INTERVAL_START")]
    for k, v in (
        ("submission_benchmark", benchmark),
        ("submission_division", division),
        ("submission_org", "acme"),
        ("submission_platform", "1xX100"),
        ("submission_status", "onprem"),
    ):
        out.append(_line(t + 2, k, v))
    out.append(_line(t + 3, "seed", seed, lineno=42))
    for k, v in {**DISCLOSURE, "global_batch_size": gbs, **LLAMA_HP}.items():
        out.append(_line(t + 4, k, v))
    out.append(_line(t + 5, "train_samples", 1_000_000))
    out.append(_line(t + 1000, "init_stop", event="INTERVAL_END"))
    run_start = t + 2000
    run_stop = run_start + minutes * 60000.0
    out.append(_line(run_start, "run_start", event="INTERVAL_START"))
    # the rules' cadence (every 12288 sequences, §9 evaluation frequency table), ending at `samples`
    evals = [samples - 12288, samples] if samples > 12288 else [samples]
    target = 0.9 if division == "open" else 3.29  # open llama31_8b's target is < 1.0
    accs = [3.6, target if converged else 3.5][-len(evals) :]
    prev = 0
    for i, (n, acc) in enumerate(zip(evals, accs, strict=True)):
        te = run_start + (run_stop - run_start) * (i + 1) / (len(evals) + 1)
        out.append(
            _line(
                te,
                "block_start",
                None,
                {"samples_count": prev, "first_epoch_num": 0, "epoch_count": 1},
                "INTERVAL_START",
            )
        )
        out.append(
            _line(te + 1, "block_stop", None, {"samples_count": n, "first_epoch_num": 0}, "INTERVAL_END")
        )
        out.append(_line(te + 2, "eval_start", None, {"samples_count": n}, "INTERVAL_START"))
        out.append(_line(te + 3, "eval_accuracy", acc, {"samples_count": n}))
        out.append(_line(te + 4, "eval_stop", None, {"samples_count": n}, "INTERVAL_END"))
        prev = n
    if with_run_stop:
        out.append(
            _line(
                run_stop,
                "run_stop",
                None,
                {"status": "success" if converged else "aborted", "samples_count": prev},
                "INTERVAL_END",
            )
        )
    path.write_text("".join(out), encoding="utf-8")
    return path


def write_run_set(
    folder: Path,
    samples: list[int],
    minutes: list[float],
    *,
    gbs: int = 32,
    failed: tuple[int, ...] = (),
    start_offsets_min: list[float] | None = None,
    division: str = "closed",
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i, (s, m) in enumerate(zip(samples, minutes, strict=True)):
        start = T0 + (start_offsets_min[i] * 60000.0 if start_offsets_min else i * 10_000_000.0)
        llama_log(
            folder / f"result_{i}.txt",
            samples=s,
            minutes=m,
            gbs=gbs,
            converged=i not in failed,
            seed=1000 + i,
            start_ms=start,
            division=division,
        )
    return folder


def write_package(
    root: Path,
    systems: dict[str, dict[str, tuple[list[int], list[float]]]],
    *,
    gbs: int = 32,
    division: str = "closed",
    failed: tuple[int, ...] = (),
    system_overrides: dict[str, Any] | None = None,
) -> Path:
    """`root/systems/<s>.json` and `root/results/<s>/llama31_8b/result_*.txt` for each system."""
    (root / "systems").mkdir(parents=True, exist_ok=True)
    for name, benches in systems.items():
        desc = {**SYSTEM, "system_name": name, "division": division, **(system_overrides or {})}
        (root / "systems" / f"{name}.json").write_text(json.dumps(desc), encoding="utf-8")
        for bench, (samples, minutes) in benches.items():
            write_run_set(
                root / "results" / name / bench, samples, minutes, gbs=gbs, failed=failed, division=division
            )
    return root
