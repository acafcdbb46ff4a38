"""Evaluation cadence of the 6.1.0 benchmarks, for the run harness (the checker's tables hold the
checks). Rules text §9 Training Loop, "Evaluation frequency" table, and the official 6.1.0 tables
where the text is cut short (deepseek's and qwen's first evaluation, dlrmv4's data-percent grid).
"""

from __future__ import annotations

import math

from proctor.rules.training.sections import EVALUATION_TABLE as _SRC
from proctor.rules.training.types import Cadence


def _every(n: int) -> Cadence:
    """Every n samples, rounded up to a whole number of batches (CEIL(n / gbs) * gbs)."""
    return Cadence(
        lambda g: math.ceil(n / g) * g, lambda g: math.ceil(n / g) * g, f"{_SRC}: every {n} samples"
    )


def _dlrm_interval(g: int) -> int:
    return max(1, math.ceil(0.001 * 2290835423 / g)) * g


CADENCE: dict[str, Cadence] = {
    "llama31_8b": _every(12288),
    "gpt_oss_20b": _every(12288),
    "llama2_70b_lora": _every(384),
    "flux1": _every(262144),
    # first evaluation at gbs*floor(42 + 24576/gbs) (official FIRST_CHECK); later ones are not
    # constrained by the checker, so the harness evaluates every step after the first
    "deepseekv3_671b": Cadence(
        lambda g: g * math.floor(42 + 24576 / g), lambda g: g, f"{_SRC}: deepseekv3_671b first evaluation"
    ),
    "qwen35_397b_grpo": Cadence(
        lambda g: g * math.ceil(2.5 + 3840 / g), lambda g: g, f"{_SRC}: qwen35_397b_grpo validation schedule"
    ),
    "dlrmv4": Cadence(
        lambda g: math.ceil(math.floor((4480 * g + 135331840) / 3) / _dlrm_interval(g)) * _dlrm_interval(g),
        _dlrm_interval,
        f"{_SRC}: dlrm_v4 every eval_every_data_pct",
    ),
}
