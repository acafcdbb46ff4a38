"""Reference convergence points for `digits_train`, in the official RCP JSON format.

The rules ("Reference Convergence Points") ask the reference for at least 2N convergence points per
batch size at a few batch sizes; this module runs the reference that many times and writes them as
`rcps_<benchmark>.json` records (`"Epochs to converge"` holds samples, as the official LLM tables do).
The shipped `rcps_digits_train.json` was written by `proctor training reference-rcps` with the
defaults below; regenerate it whenever the workload's hyperparameters change.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson

from proctor.workloads.digits_train import (
    BENCHMARK,
    EVAL_EVERY_SAMPLES,
    HIDDEN_UNITS,
    LEARNING_RATE,
    RCP_BATCH_SIZES,
    RUNS_PER_SUBMISSION,
)
from proctor.workloads.digits_train.spec import OPT_NAME
from proctor.workloads.digits_train.train import RunResult, run_seeds, train_run

REFERENCE_BASE_SEED = 20_000  # apart from the seeds `train`/`demo` use, so submissions are independent runs


def record_name(batch_size: int) -> str:
    return f"{BENCHMARK}_ref_{batch_size}"


def generate(
    batch_sizes: Sequence[int] = RCP_BATCH_SIZES,
    runs: int = 2 * RUNS_PER_SUBMISSION,
    *,
    backend: str = "sklearn",
    base_seed: int = REFERENCE_BASE_SEED,
    on_run: Callable[[RunResult], None] | None = None,
) -> dict[str, Any]:
    """Run the reference `runs` times per batch size; every run must converge (else RuntimeError)."""
    if runs < 3:
        raise ValueError("an RCP needs at least 3 convergence points (the rules ask for 2N)")
    table: dict[str, Any] = {}
    for i, bs in enumerate(batch_sizes):
        points: list[int] = []
        for seed in run_seeds(runs, base_seed + i):
            r = train_run(None, seed=seed, batch_size=bs, backend=backend)
            if on_run is not None:
                on_run(r)
            if r.samples_to_converge is None:
                raise RuntimeError(f"reference run (batch size {bs}, seed {seed}) did not reach the target")
            points.append(r.samples_to_converge)
        table[record_name(bs)] = {
            "Benchmark": BENCHMARK,
            "Creator": "proctor",
            "When": "Reference RCPs of the proctor digits_train workload",
            "Platform": f"CPU ({backend} backend)",
            "Precision": "FP32",
            "BS": bs,
            "Hyperparams": {
                "opt_name": OPT_NAME,
                "opt_base_learning_rate": LEARNING_RATE,
                "hidden_units": HIDDEN_UNITS,
                "eval_every_samples": EVAL_EVERY_SAMPLES,
                "gradient_accumulation_steps": 1,
                "base_seed": base_seed + i,
            },
            "Epochs to converge": points,
        }
    return table


def write(table: dict[str, Any], path: str | Path) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(orjson.dumps(table, option=orjson.OPT_INDENT_2) + b"\n")
    return p

