"""Olympic scoring of a run set (002 §11 "Benchmark Results").

Time to train is run_start to run_stop; the fastest and slowest runs are dropped (4 each side for
unet3d) and the rest averaged; one non-converging run counts as the slowest, more than one makes the
result invalid. `scaling.json` multiplies the score; a reference time normalizes it. With more runs
than the minimum (M > N) the runs are sorted by start time, every window of N consecutive runs is
scored, invalid windows count as infinite, and the median window is the result.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import scipy.stats

from proctor.findings import Finding, Severity
from proctor.rules.training import benchmarks
from proctor.training.plausibility import is_implausible
from proctor.training.runs import RunSet
from proctor.typed_records import field, record, replace

SOURCE = "002 §11 Benchmark Results"
OPEN_QUALITY_SOURCE = (
    "002 §9 Training Loop: OPEN ... the reported results must include the geometric mean of the final "
    "quality as measured by the closed quality measure"
)
IMPLAUSIBLE_SOURCE = "002 §11 Run Results: a wall-clock time to train from run_start to run_stop"
Compliance = Callable[[Path], bool]


@record(frozen=True, slots=True)
class Olympic:
    score: float | None  # minutes, None when invalid
    kept: np.ndarray  # indices of the averaged runs
    dropped: np.ndarray  # indices of the dropped runs
    failed: int  # runs that did not converge (or have no time)


def olympic(minutes: np.ndarray, ok: np.ndarray, drop: int, max_failed: int) -> Olympic:
    """Drop `drop` runs each side, failed runs counting as the slowest; None when too many failed."""
    t = np.where(ok, minutes, np.inf)
    order = np.argsort(t, kind="stable")
    failed = int(np.count_nonzero(~ok))
    n = len(t)
    kept, dropped = order[drop : n - drop], np.concatenate([order[:drop], order[n - drop :]])
    if failed > max_failed or kept.size == 0 or not np.all(np.isfinite(t[kept])):
        return Olympic(None, kept, dropped, failed)
    vals = [float(v) for v in t[kept]]  # Python sum in sorted order: the official summarizer's sum
    return Olympic(sum(vals) / len(vals), kept, dropped, failed)


@record(slots=True)
class BenchmarkScore:
    benchmark: str | None
    directory: str
    runs: int
    dropped: list[str]
    score_minutes: float | None  # scaled by scaling.json
    unscaled_minutes: float | None
    scaling_factor: float
    valid: bool
    used: list[str] = field(default_factory=list)  # runs in the scored window (all when M == N)
    runtime_seconds: float | None = None  # mean of the averaged runs (utilization)
    normalized: float | None = None  # reference / score, when a reference is given
    # geometric mean of the scored runs' final eval_accuracy (002 §9: an Open result must report it)
    final_quality_geomean: float | None = None
    division: str | None = None
    findings: list[Finding] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "benchmark": self.benchmark,
            "runs": self.runs,
            "dropped": self.dropped,
            "score_minutes": self.score_minutes,
            "valid": self.valid,
            "unscaled_minutes": self.unscaled_minutes,
            "scaling_factor": self.scaling_factor,
            "used": self.used,
            "normalized": self.normalized,
            "division": self.division,
            "final_quality_geomean": self.final_quality_geomean,
            "directory": self.directory,
            "findings": [f.to_dict() for f in self.findings],
        }


def median_window(
    start_ms: np.ndarray, minutes: np.ndarray, ok: np.ndarray, n: int, drop: int, max_failed: int
) -> tuple[int, list[float], np.ndarray]:
    """M > N: index of the median window of N runs in start order (lower median for an even count)."""
    order = np.argsort(np.where(np.isnan(start_ms), np.inf, start_ms), kind="stable")
    scores: list[float] = []
    for w in range(len(order) - n + 1):
        idx = order[w : w + n]
        res = olympic(minutes[idx], ok[idx], drop, max_failed)
        scores.append(math.inf if res.score is None else res.score)
    rank = np.argsort(np.asarray(scores), kind="stable")
    pick = int(rank[(len(scores) - 1) // 2])
    return pick, scores, order[pick : pick + n]


def score_run_set(
    rs: RunSet,
    *,
    runs_required: int | None = None,
    compliance: Compliance | None = None,
    reference_minutes: float | None = None,
    apply_scaling: bool = True,
    window: bool = True,
) -> BenchmarkScore:
    """Score one benchmark folder; findings say why a result is invalid."""
    bench = rs.benchmark or ""
    names = [r.name for r in rs.runs]
    minutes = rs.minutes()
    ok = rs.converged()
    findings = list(rs.findings)
    findings.extend(f for r in rs.runs for f in r.findings if f.rule == "log_read")  # unverifiable
    implausible = [r for r in rs.runs if r.implausible]  # logs that cannot be true: no score from them
    findings.extend(f for r in implausible for f in r.findings if is_implausible(f))
    if implausible:
        findings.append(
            Finding(
                "implausible_runs",
                f"no score: {len(implausible)} log(s) cannot be true ({', '.join(r.name for r in implausible)}); "
                "fix or replace the run, a score from its times would be false",
                path=str(rs.directory),
                value=[r.name for r in implausible],
                source=IMPLAUSIBLE_SOURCE,
            )
        )
    if compliance is not None:
        for i, r in enumerate(rs.runs):
            if ok[i] and not compliance(r.path):
                ok[i] = False
                findings.append(
                    Finding(
                        "compliance",
                        "run does not comply: counted as non-converging",
                        Severity.WARNING,
                        path=str(r.path),
                        source=SOURCE,
                    )
                )
    for i, r in enumerate(rs.runs):
        if not ok[i] and r.minutes is not None and not r.converged:
            findings.append(
                Finding(
                    "converged",
                    f"run did not converge (run_stop status {r.status!r})",
                    Severity.INFO,
                    path=str(r.path),
                    key="run_stop",
                    value=r.status,
                )
            )
    drop = benchmarks.olympic_drop(bench)
    max_failed = benchmarks.max_non_converged(bench)
    n = benchmarks.runs_required(bench, runs_required)
    idx = np.arange(len(rs.runs))
    if n is not None and len(rs.runs) < n:
        findings.append(
            Finding(
                "run_count",
                f"{len(rs.runs)} runs, the benchmark needs {n}",
                path=str(rs.directory),
                value=len(rs.runs),
                expected=n,
                source=SOURCE,
            )
        )
    elif n is not None and len(rs.runs) > n and window:
        starts = np.array([np.nan if r.run_start_ms is None else r.run_start_ms for r in rs.runs])
        pick, scores, idx = median_window(starts, minutes, ok, n, drop, max_failed)
        findings.append(
            Finding(
                "run_window",
                f"{len(rs.runs)} runs > {n}: scored the median of "
                f"{len(scores)} windows of {n} consecutive runs (window {pick + 1})",
                Severity.INFO,
                path=str(rs.directory),
                extra={"window_scores": scores},
                source=SOURCE,
            )
        )
    res = olympic(minutes[idx], ok[idx], drop, max_failed)
    if res.failed > max_failed:
        findings.append(
            Finding(
                "non_converged",
                f"{res.failed} runs did not converge; at most {max_failed} may be dropped",
                path=str(rs.directory),
                value=res.failed,
                expected=max_failed,
                source=SOURCE,
            )
        )
    division = next((r.division for r in rs.runs if r.division), None)
    geomean, missing = final_quality_geomean([rs.runs[i] for i in idx])
    if division == "open" and missing:
        findings.append(
            Finding(
                "open_final_quality",
                f"an Open result must report the geometric mean of the final quality by the closed quality "
                f"measure; no positive final eval_accuracy in {', '.join(missing)}",
                path=str(rs.directory),
                key="eval_accuracy",
                value=missing,
                source=OPEN_QUALITY_SOURCE,
            )
        )
    if implausible:
        res = replace(res, score=None)
    bad = ("run_count", "log_read", "open_final_quality", "implausible_runs") + (
        ("scaling_json",) if apply_scaling else ()
    )
    valid = res.score is not None and not any(f.failed for f in findings if f.rule in bad)
    factor = rs.scaling_factor if apply_scaling else 1.0
    score = None if res.score is None else res.score * factor
    out = BenchmarkScore(
        benchmark=rs.benchmark,
        directory=str(rs.directory),
        runs=len(rs.runs),
        dropped=[names[i] for i in idx[res.dropped]]
        + [names[i] for i in sorted(set(range(len(names))) - set(idx.tolist()))],
        score_minutes=score,
        unscaled_minutes=res.score,
        scaling_factor=factor,
        valid=valid,
        used=[names[i] for i in idx],
        runtime_seconds=None if res.score is None else res.score * 60.0,
        final_quality_geomean=geomean,
        division=division,
        findings=findings,
    )
    if reference_minutes is not None and score:
        out.normalized = normalize(score, reference_minutes)
    return out


def final_quality_geomean(runs: Sequence[Any]) -> tuple[float | None, list[str]]:
    """The geometric mean of the runs' final quality (their last eval_accuracy), and the runs without
    a positive one (then None: a geometric mean needs every value positive)."""
    missing = [
        r.name
        for r in runs
        if r.final_quality is None or not (math.isfinite(r.final_quality) and r.final_quality > 0)
    ]
    if missing or not runs:
        return None, missing
    return float(scipy.stats.gmean(np.array([r.final_quality for r in runs], dtype=np.float64))), []


def normalize(score_minutes: float, reference_minutes: float) -> float:
    """002 §11: reference result / benchmark result, so a faster result is a larger number."""
    return reference_minutes / score_minutes


def weighted_geometric_mean(values: Sequence[float], weights: Sequence[float] | None = None) -> float:
    """A custom summary over benchmarks (e.g. of normalized scores); weights default to equal."""
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0 or np.any(v <= 0):
        raise ValueError("geometric mean needs positive values")
    w = None if weights is None else np.asarray(weights, dtype=np.float64)
    return float(scipy.stats.gmean(v, weights=w))


def utilization(model_tensor_flops: float, peak_flops_per_second: float, runtime_seconds: float) -> float:
    """002 §23: model_tensor_flops / (peak_system_tensor_flops_per_second * runtime_seconds)."""
    if peak_flops_per_second <= 0 or runtime_seconds <= 0:
        raise ValueError("peak FLOP/s and runtime must be positive")
    return model_tensor_flops / (peak_flops_per_second * runtime_seconds)
