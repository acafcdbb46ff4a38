"""A training result folder (result_*.txt of one benchmark) read into plain numbers for the report.

Time to train and the olympic selection come from `proctor.training.scoring`, the RCP verdict from
`proctor.training.rcp.check_rcp` and the batch-size curve from its `RcpTable`, so the report shows
exactly what `proctor training score` / `check-rcp` decide. The eval curves are the `eval_accuracy`
(or `eval_error`) lines of each log; the quality target is read from the ruleset's table (the
expression of the benchmark's `eval_accuracy` rule), never guessed.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import TYPE_CHECKING

from proctor.errors import LogFormatError, ProctorError
from proctor.mllog_lines import BadLine, iter_log
from proctor.rules.training_rcps import RcpRecord, available_rulesets, load_rcps
from proctor.training.runs import EVAL_KEYS, RunSet, read_run_set, result_files
from proctor.typed_records import field, record

if TYPE_CHECKING:  # the RCP check and scoring load scipy.stats (a second): only a training report needs them
    from proctor.training.rcp import RcpCheck, RcpPoint
    from proctor.training.scoring import BenchmarkScore

MAX_EVALS = 100_000  # eval points kept per run (a real log has tens)
_TARGET = re.compile(r"v\['value'\]\s*(<=|>=|<|>)\s*([-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)")


@record(slots=True)
class EvalCurve:
    run: str
    x: list[float] = field(default_factory=list)  # epochs or samples
    y: list[float] = field(default_factory=list)
    unit: str = "samples"
    key: str = "eval_accuracy"


@record(slots=True)
class TrainingResult:
    name: str
    directory: Path
    ruleset: str
    benchmark: str | None
    batch_size: float | None
    runs: list[str]
    minutes: list[float | None]
    converged: list[bool]
    samples_to_converge: list[float | None]
    score: BenchmarkScore
    rcp: RcpCheck
    rcp_points: list[RcpPoint] = field(default_factory=list)
    rcp_pruned: list[RcpPoint] = field(default_factory=list)
    curves: list[EvalCurve] = field(default_factory=list)
    target: tuple[str, float] | None = None  # (operator, value) of the quality target
    notes: list[str] = field(default_factory=list)


def is_training_dir(d: Path) -> bool:
    return bool(result_files(d))


def pick_ruleset(benchmark: str | None, batch_size: float | None) -> str:
    """The newest ruleset with an RCP at this batch size, else the newest with RCPs for the benchmark."""
    versions = sorted(available_rulesets(), key=lambda v: tuple(int(x) for x in v.split(".")), reverse=True)
    if benchmark:
        having = [v for v in versions if _records(v, benchmark)]
        exact = [v for v in having if any(r.batch_size == batch_size for r in _records(v, benchmark))]
        if exact or having:
            return (exact or having)[0]
    return versions[0]


def _records(ruleset: str, benchmark: str) -> list[RcpRecord]:
    try:
        return list(load_rcps(ruleset, benchmark))
    except (ProctorError, ValueError, OSError):
        return []


def quality_target(ruleset: str, benchmark: str | None) -> tuple[str, float] | None:
    """(operator, value) of the benchmark's quality target in the ruleset's table, if it has one."""
    if not benchmark:
        return None
    from proctor.training.compliance import ruleset_with

    try:
        rs = ruleset_with(ruleset)  # the official tables and the registered benchmarks (digits_train)
    except (ValueError, ProctorError):
        return None
    for division in ("closed", "open"):
        cfg = rs.configs.get(f"{division}_{benchmark}")
        if cfg is None:
            continue
        for key in EVAL_KEYS:
            rule = cfg.by_key().get(key)
            if rule is not None and rule.atleast_one is not None:
                m = _TARGET.search(rule.atleast_one.expr)
                if m:
                    return m.group(1), float(m.group(2))
    return None


def eval_curve(path: Path) -> EvalCurve:
    """The eval points of one log, by epoch when the log reports epochs, else by samples."""
    curve = EvalCurve(run=path.stem)
    by_epoch: list[tuple[float, float]] = []
    by_samples: list[tuple[float, float]] = []
    try:
        for rec in iter_log(path):
            if isinstance(rec, BadLine) or rec.key not in EVAL_KEYS:
                continue
            val = _finite(rec.value)
            if val is None:
                continue
            curve.key = rec.key
            md = rec.metadata if isinstance(rec.metadata, dict) else {}
            if (e := _finite(md.get("epoch_num"))) is not None:
                by_epoch.append((e, val))
            if (s := _finite(md.get("samples_count"))) is not None:
                by_samples.append((s, val))
            if len(by_epoch) + len(by_samples) >= 2 * MAX_EVALS:
                break
    except OSError:
        return curve
    pts, curve.unit = (by_samples, "samples") if len(by_samples) >= len(by_epoch) and by_samples else (by_epoch, "epochs")
    pts.sort()
    curve.x = [p[0] for p in pts]
    curve.y = [p[1] for p in pts]
    return curve


def _finite(v: object) -> float | None:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    f = float(v)
    return f if math.isfinite(f) else None


def read_training(directory: str | Path, *, ruleset: str | None = None, name: str | None = None) -> TrainingResult:
    """Read one benchmark folder; LogFormatError when it holds no result_*.txt."""
    from proctor.training.rcp import RcpTable, check_rcp
    from proctor.training.scoring import score_run_set

    d = Path(directory)
    if not result_files(d):
        raise LogFormatError("no result_*.txt: not a training benchmark folder", file=str(d))
    rs: RunSet = read_run_set(d, ruleset=ruleset)
    rules = ruleset or pick_ruleset(rs.benchmark, rs.batch_size)
    rs = read_run_set(d, ruleset=rules) if ruleset is None else rs
    score = score_run_set(rs)
    rcp = check_rcp(rs, rules)
    out = TrainingResult(
        name=name or f"{d.parent.name}/{d.name}",
        directory=d,
        ruleset=rules,
        benchmark=rs.benchmark,
        batch_size=rs.batch_size,
        runs=[r.name for r in rs.runs],
        minutes=[r.minutes for r in rs.runs],
        converged=[bool(c) for c in rs.converged()],
        samples_to_converge=[s if math.isfinite(s) else None for s in rs.samples().tolist()],
        score=score,
        rcp=rcp,
    )
    if rs.benchmark:
        recs = _records(rules, rs.benchmark)
        if recs:
            table = RcpTable(rs.benchmark, recs)
            out.rcp_points, out.rcp_pruned = table.points, table.pruned
    out.target = quality_target(rules, rs.benchmark)
    if out.target is None:
        out.notes.append(f"no quality target for {rs.benchmark or 'this benchmark'} in ruleset {rules}")
    out.curves = [eval_curve(p) for p in result_files(d)]
    if ruleset is None:
        out.notes.append(f"ruleset {rules} chosen for its RCPs (pass --ruleset to choose another)")
    return out
