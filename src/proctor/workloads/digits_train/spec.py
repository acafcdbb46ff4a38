"""`digits_train` as a benchmark table: what the harness runs and what the compliance checker checks.

proctor's own reference benchmark is not in the official tables, so it brings its entry the way an
official benchmark's YAML would: the closed hyperparameter rules, the evaluation cadence and the
quality target, with its N and its shipped RCPs. `SPEC` is its record (the shape of the official
benchmarks' records, `rules/training/benchmarks.py`) and `training_benchmark` declares it for the
6.1.0 ruleset; pyproject.toml names it in the entry-point group "proctor.training_benchmarks", which
the training checkers read when they look a benchmark up (they never import this module).
"""

from __future__ import annotations

import math
from importlib import resources
from pathlib import Path
from typing import Any

from proctor.rules.training.types import Cadence, Check, Config, KeyRule, Req
from proctor.training.benchmarks import DIVISIONS, TrainingBenchmark
from proctor.workloads.digits_train import (
    BENCHMARK,
    EVAL_EVERY_SAMPLES,
    LEARNING_RATE,
    QUALITY_TARGET,
    RUNS_PER_SUBMISSION,
)

RULESETS = ("6.1.0",)
# Rules of the training rules text that this table applies to a new benchmark.
_SRC_TARGET = "002 §3 Benchmarks (quality target); proctor digits_train: eval_accuracy >= 0.95"
_SRC_HP = "002 §9 Training Loop: hyperparameters (closed: reference values unless tunable)"
_SRC_EVAL = "002 §9 Training Loop: evaluation frequency (digits_train: every 512 samples)"
OPT_NAME = "adam"
SHIPPED = "rcps_digits_train.json"  # the reference RCPs (reference_rcps.py wrote them)


def eval_interval(global_batch_size: int) -> int:
    """Samples between evaluations: 512 rounded up to whole global batches, as the rules' tables do."""
    return math.ceil(EVAL_EVERY_SAMPLES / global_batch_size) * global_batch_size


CADENCE = Cadence(eval_interval, eval_interval, _SRC_EVAL)
TARGET = Check(f"v['value'] >= {QUALITY_TARGET}", lambda s, v, ll: v["value"] >= QUALITY_TARGET)


def _is_pos_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x > 0


def _gbs_post(s: Any, v: dict[str, Any], ll: Any) -> None:
    s["gbs"] = v["value"]


def _on_cadence(s: Any, v: dict[str, Any], ll: Any) -> bool:
    gbs = s.get("gbs")
    n = v["metadata"].get("samples_count")
    return _is_pos_int(gbs) and isinstance(n, int) and n % eval_interval(gbs) == 0


def _eval_rule(closed: bool) -> KeyRule:
    checks = [Check("'samples_count' in v['metadata']", lambda s, v, ll: "samples_count" in v["metadata"])]
    if closed:
        checks.append(Check("samples_count % (ceil(512 / s['gbs']) * s['gbs']) == 0", _on_cadence))
    return KeyRule(
        "eval_accuracy",
        Req.AT_LEAST_ONE,
        checks=tuple(checks),
        atleast_one=TARGET,
        source=f"{_SRC_EVAL}; {_SRC_TARGET}",
    )


def config(division: str) -> Config:
    """The `<division>_digits_train` table run after `<division>_common`."""
    if division == "open":
        return Config(f"open_{BENCHMARK}", (_eval_rule(False),), source=_SRC_TARGET)
    keys = (
        KeyRule(
            "global_batch_size",
            Req.EXACTLY_ONE,
            checks=(Check("is a positive integer", lambda s, v, ll: _is_pos_int(v["value"])),),
            post=_gbs_post,
            source=_SRC_HP + ": global_batch_size is tunable",
        ),
        KeyRule(
            "opt_name",
            Req.EXACTLY_ONE,
            checks=(Check(f"v['value'] == '{OPT_NAME}'", lambda s, v, ll: v["value"] == OPT_NAME),),
            source=_SRC_HP,
        ),
        KeyRule(
            "opt_base_learning_rate",
            Req.EXACTLY_ONE,
            checks=(Check(f"v['value'] == {LEARNING_RATE}", lambda s, v, ll: v["value"] == LEARNING_RATE),),
            source=_SRC_HP,
        ),
        _eval_rule(True),
    )
    return Config(f"closed_{BENCHMARK}", keys, source=_SRC_HP)


def shipped_path() -> Path:
    """The RCP file that ships with proctor (in the official format)."""
    return Path(str(resources.files("proctor.workloads.digits_train").joinpath(SHIPPED)))


SPEC = TrainingBenchmark(
    BENCHMARK,
    {division: config(division) for division in DIVISIONS},
    RUNS_PER_SUBMISSION,
    shipped_path(),
    target=TARGET,
    cadence=CADENCE,
    reporting="samples_count",
)


def training_benchmark(ruleset: str) -> TrainingBenchmark | None:
    """The entry point: digits_train's record (tables, N, RCPs, target, cadence) for `ruleset` (None:
    not in that ruleset)."""
    return SPEC if ruleset in RULESETS else None
