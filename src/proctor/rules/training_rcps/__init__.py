"""Reference Convergence Points (RCPs) as shipped data, with a typed loader.

The JSON files are verbatim copies of mlcommons/logging's `rcp_checker/training_<ruleset>/rcps_<b>.json`
(rules "Reference Convergence Points": references provide 2N convergence points per batch size).
4.0.0, 5.0.0, 5.1.0, 6.0.0 and 6.1.0 come from mlcommons/logging at commit 7bbf792; 4.1.0 and
6.1.0's rcps_dlrmv4.json from the mlperf-logging 4.1.68 wheel.
Custom tables (a proctor benchmark such as `digits_train`, or temporary RCPs a WG accepted) use the
same format and are read with `load_rcp_file`.
"""

from __future__ import annotations

import math
import os
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from proctor.errors import ConfigError
from proctor.rules.training.benchmarks import EPOCHS_KEY, SAMPLES_KEY, official
from proctor.typed_records import field, record

# Official files name their list as the benchmark's record says (`rcp_points_key`: "samples to
# converge" or "Epochs to converge", rcp_checker._process_raw_rcp_data); a custom file may use either.
CONVERGENCE_KEYS = (EPOCHS_KEY, SAMPLES_KEY)


@record(frozen=True, slots=True)
class RcpRecord:
    """One reference batch size: its 2N convergence points (epochs or samples)."""

    name: str
    benchmark: str
    batch_size: int | float
    points: np.ndarray  # float64, as listed in the file
    hyperparams: dict[str, Any] = field(default_factory=dict)
    creator: str | None = None
    platform: str | None = None
    precision: str | None = None


def _parse_record(name: str, obj: Any, where: str) -> RcpRecord:
    if not isinstance(obj, dict):
        raise ConfigError("an RCP record must be an object", file=where, key=name)
    for key in ("Benchmark", "BS"):
        if key not in obj:
            raise ConfigError(f"RCP record lacks '{key}'", file=where, key=name)
    bench = obj["Benchmark"]
    if not isinstance(bench, str) or not bench:
        raise ConfigError(f"'Benchmark' must be a benchmark name, got {_brief(bench)}", file=where, key=name)
    rec = official(bench)
    preferred = rec.rcp_points_key if rec else EPOCHS_KEY
    keys = [preferred] + [k for k in CONVERGENCE_KEYS if k != preferred]
    points = next((obj[k] for k in keys if k in obj), None)
    if points is None:
        raise ConfigError(f"RCP record lacks '{preferred}'", file=where, key=name)
    if (
        not isinstance(points, list)
        or len(points) < 3
        or not all(
            isinstance(p, int | float) and not isinstance(p, bool) and _finite(p) and p > 0 for p in points
        )
    ):
        raise ConfigError(
            "convergence points must be a list of at least 3 positive finite numbers", file=where, key=name
        )
    bs = obj["BS"]
    if not isinstance(bs, int | float) or isinstance(bs, bool) or not _finite(bs) or bs <= 0:
        raise ConfigError(f"'BS' must be a positive number, got {_brief(bs)}", file=where, key=name)
    hp = obj.get("Hyperparams") or {}
    return RcpRecord(
        name=name,
        benchmark=str(bench),
        batch_size=int(bs) if float(bs).is_integer() else bs,
        points=np.asarray(points, dtype=np.float64),
        hyperparams=dict(hp) if isinstance(hp, dict) else {},
        creator=obj.get("Creator"),
        platform=obj.get("Platform"),
        precision=obj.get("Precision"),
    )


def _finite(x: int | float) -> bool:
    try:
        return math.isfinite(x)
    except OverflowError:  # an int too large for a float
        return False


def _brief(x: Any) -> str:
    return type(x).__name__ if isinstance(x, dict | list) else repr(x)[:60]


def parse_rcp_table(data: bytes, where: str) -> dict[str, list[RcpRecord]]:
    """Records of one RCP JSON document grouped by benchmark, in file order."""
    try:
        raw = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise ConfigError(f"not valid JSON: {exc}", file=where) from exc
    if not isinstance(raw, dict):
        raise ConfigError("an RCP file must be an object of named records", file=where)
    out: dict[str, list[RcpRecord]] = {}
    for name, obj in raw.items():
        rec = _parse_record(name, obj, where)
        out.setdefault(rec.benchmark, []).append(rec)
    return out


def load_rcp_file(path: str | os.PathLike[str]) -> dict[str, list[RcpRecord]]:
    """A custom RCP file (official format), grouped by benchmark."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read RCP file: {exc.strerror}", file=str(p)) from exc
    return parse_rcp_table(data, str(p))


def _root() -> Any:
    return resources.files(__name__)


@cache
def available_rulesets() -> tuple[str, ...]:
    names = [e.name.removeprefix("training_") for e in _root().iterdir() if e.name.startswith("training_")]
    return tuple(sorted(names, key=lambda v: tuple(int(x) for x in v.split("."))))


@cache
def benchmarks_with_rcps(ruleset: str) -> tuple[str, ...]:
    folder = _root() / f"training_{ruleset}"
    if not folder.is_dir():
        return ()
    return tuple(sorted(e.name[5:-5] for e in folder.iterdir() if e.name.startswith("rcps_")))


@cache
def _load_shipped(ruleset: str, benchmark: str) -> tuple[RcpRecord, ...]:
    entry = _root() / f"training_{ruleset}" / f"rcps_{benchmark}.json"
    if not entry.is_file():
        return ()
    table = parse_rcp_table(entry.read_bytes(), f"training_{ruleset}/rcps_{benchmark}.json")
    return tuple(table.get(benchmark, []))


def load_rcps(ruleset: str, benchmark: str) -> list[RcpRecord]:
    """The shipped RCP records of a benchmark for a ruleset; empty when there are none."""
    if ruleset not in available_rulesets():
        raise ConfigError(
            f"no RCP tables for ruleset {ruleset!r}; shipped: {', '.join(available_rulesets())}",
            key="ruleset",
        )
    return list(_load_shipped(ruleset, benchmark))
