"""A run set: the `result_*.txt` logs of one system and benchmark, read once into what scoring needs.

Every checker downstream (RCP, scoring, package, summary) works from the same `RunInfo`s, so a log
is streamed once (`mllog_lines.iter_log`) and the facts are taken by key, never by substring: time
to train (run_start to run_stop), converged or not (run_stop status), samples or epochs to converge,
global batch size and benchmark.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

import numpy as np
import orjson

from proctor.errors import LogFormatError
from proctor.findings import Finding, Severity
from proctor.mllog_lines import BadLine, iter_log
from proctor.rules.training.benchmarks import official
from proctor.rules.training.rulesets import metric_step_key
from proctor.training.plausibility import LogPlausibility, is_implausible
from proctor.trees import FILE, LINK, MISSING, is_dir, is_file, kind, not_a_file, real_root
from proctor.typed_records import field, record

Unit = Literal["auto", "samples", "epochs", "train_samples"]
NOT_CONVERGED = math.inf
_RESULT_RE = re.compile(r"^result_(.*)\.txt$")
EVAL_KEYS = ("eval_accuracy", "eval_error")


@record(slots=True)
class RunInfo:
    path: Path
    benchmark: str | None = None
    division: str | None = None
    org: str | None = None
    batch_size: float | None = None
    run_start_ms: float | None = None
    run_stop_ms: float | None = None
    status: str | None = None  # run_stop metadata status
    converged: bool = False  # run_stop status == "success"
    samples_to_converge: float = NOT_CONVERGED  # epochs or samples, inf when not converged
    unit: str | None = None  # "samples", "epochs", "train_samples"
    final_quality: float | None = None  # the last eval_accuracy value (the closed quality measure)
    findings: list[Finding] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def implausible(self) -> bool:
        """The log cannot be true (training/plausibility.py): no time, quality or count is taken from it."""
        return any(is_implausible(f) for f in self.findings)

    @property
    def time_to_train_ms(self) -> float | None:
        if self.run_start_ms is None or self.run_stop_ms is None or self.implausible:
            return None
        return self.run_stop_ms - self.run_start_ms

    @property
    def minutes(self) -> float | None:
        t = self.time_to_train_ms
        return None if t is None else t / 60000.0


def _num(value: Any) -> float | None:
    """A log value as a float (None: not a number); an int too large for a float is infinite."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def read_run(path: str | Path, *, unit: Unit = "auto", ruleset: str | None = None) -> RunInfo:
    """Stream one result log; problems become findings on the run, never exceptions."""
    p = Path(path)
    info = RunInfo(path=p)
    last_eval_samples: float | None = None
    last_eval_epoch: float | None = None
    train_samples: float | None = None
    # evaluations that log several metrics, by step (a record's `metric_targets`)
    metric_evals: dict[float, dict[str, float]] = {}
    metric_step = metric_step_key(ruleset)
    plausible = LogPlausibility(str(p))
    try:
        for rec in iter_log(p):
            if isinstance(rec, BadLine):
                info.findings.append(
                    Finding(
                        "log_line",
                        f"unreadable MLLOG line: {rec.reason}",
                        Severity.WARNING,
                        path=str(p),
                        line=rec.line,
                    )
                )
                continue
            plausible.add(rec)
            key, md = rec.key, rec.metadata
            if key == "submission_benchmark":
                info.benchmark = str(rec.value)
            elif key == "submission_division":
                info.division = str(rec.value)
            elif key == "submission_org":
                info.org = str(rec.value)
            elif key == "global_batch_size":
                bs = _num(rec.value)
                if bs is None or not (math.isfinite(bs) and bs > 0):
                    info.findings.append(
                        Finding(
                            "global_batch_size",
                            f"global_batch_size at line {rec.line} is not a positive finite number",
                            path=str(p),
                            line=rec.line,
                            key=key,
                            value=rec.value,
                        )
                    )
                else:
                    info.batch_size = bs
            elif key == "train_samples":
                train_samples = _num(rec.value)
            elif key in EVAL_KEYS:
                if key == "eval_accuracy" and (q := _num(rec.value)) is not None:
                    info.final_quality = q
                if (s := _num(md.get("samples_count"))) is not None:
                    last_eval_samples = s
                if (e := _num(md.get("epoch_num"))) is not None:
                    last_eval_epoch = round(e, 3)
                metric = md.get("metric")
                step = _num(md.get(metric_step))
                val = _num(rec.value)
                if metric is not None and step is not None and val is not None:
                    metric_evals.setdefault(step, {})[str(metric)] = val
            elif key == "run_start":
                if info.run_start_ms is None:
                    info.run_start_ms = _num(rec.time_ms)
            elif key == "run_stop":
                if info.run_stop_ms is None:
                    info.run_stop_ms = _num(rec.time_ms)
                st = md.get("status")
                info.status = None if st is None else str(st)
    except OSError as exc:  # unreadable (permissions, a vanished file): a finding on this run
        info.findings.append(
            Finding("log_read", f"cannot read {p}: {exc.strerror or exc}", path=str(p), key="file")
        )
        return info

    info.findings.extend(plausible.findings())
    info.converged = info.status == "success" and not info.implausible
    if info.run_start_ms is None:
        info.findings.append(
            Finding("run_start", "no run_start: time to train is unknown", path=str(p), key="run_start")
        )
    if info.run_stop_ms is None:
        info.findings.append(
            Finding("run_stop", "no run_stop: the run did not finish", path=str(p), key="run_stop")
        )
    if not info.converged:
        return info

    known = official(info.benchmark)
    if unit == "train_samples" and not (known and known.train_samples_convergence):  # as the official flag
        unit = "auto"
    chosen: float | None
    if unit == "train_samples":
        chosen, info.unit = train_samples, "train_samples"
    elif known and known.metric_targets and metric_evals:
        passing = [
            s
            for s, m in metric_evals.items()
            if all(t.metric in m and t.met(m[t.metric]) for t in known.metric_targets)
        ]
        chosen, info.unit = (min(passing) if passing else None), "samples"
    elif unit == "samples" or (unit == "auto" and known and known.converges_in == "samples"):
        chosen, info.unit = last_eval_samples, "samples"
    elif unit == "epochs" or last_eval_epoch is not None:
        chosen, info.unit = last_eval_epoch, "epochs"
    else:  # a benchmark proctor does not know that logs samples only
        chosen, info.unit = last_eval_samples, "samples"
    if chosen is None:
        info.findings.append(
            Finding(
                "convergence",
                f"converged run logs no eval with {info.unit}",
                path=str(p),
                key="eval_accuracy",
            )
        )
    else:
        info.samples_to_converge = chosen
    return info


def _result_sort_key(p: Path) -> tuple[int, int | str]:
    m = _RESULT_RE.match(p.name)
    tail = m.group(1) if m else p.name
    return (0, int(tail)) if tail.isdigit() else (1, tail)


def result_files(directory: str | Path) -> list[Path]:
    """`result_*.txt` in a benchmark folder, in run-number order (result_2 before result_10): regular
    files reached through no link (proctor.trees); `stray_result_files` names the others."""
    d = real_root(directory)
    return sorted((f for f in d.glob("result_*.txt") if is_file(f)), key=_result_sort_key)


def stray_result_files(directory: str | Path) -> list[Finding]:
    """A finding per `result_*.txt` that is not read: a link (in or out of the tree), FIFO or device."""
    d = real_root(directory)
    try:
        stray = sorted(f for f in d.glob("result_*.txt") if kind(f) not in (FILE, MISSING))
    except OSError:
        return []
    return [Finding("result_files", f"{f.name}: {not_a_file(f)}", path=str(f)) for f in stray[:100]]


def unreadable_dirs(root: str | Path, depth: int = 3) -> list[Path]:
    """Folders under `root` (to `depth` levels, symlinks not followed) that cannot be listed."""
    out: list[Path] = []
    stack = [(Path(root), 0)]
    while stack:
        d, level = stack.pop()
        try:
            entries = list(os.scandir(d))
        except OSError:
            out.append(d)
            continue
        if level < depth:
            stack.extend((Path(e.path), level + 1) for e in entries if e.is_dir(follow_symlinks=False))
    return sorted(out)


@record(slots=True)
class RunSet:
    directory: Path
    runs: list[RunInfo]
    system: str | None = None
    folder_benchmark: str | None = None  # the folder's name
    scaling_factor: float = 1.0  # from scaling.json (002 §11), 1 when absent
    findings: list[Finding] = field(default_factory=list)

    @property
    def benchmark(self) -> str | None:
        names = [r.benchmark for r in self.runs if r.benchmark]
        return names[0] if names else self.folder_benchmark

    @property
    def batch_size(self) -> float | None:
        sizes = [r.batch_size for r in self.runs if r.batch_size is not None]
        return sizes[0] if sizes else None

    def minutes(self) -> np.ndarray:
        """Time to train per run in minutes, NaN where unknown."""
        return np.array([np.nan if r.minutes is None else r.minutes for r in self.runs], dtype=np.float64)

    def converged(self) -> np.ndarray:
        return np.array([r.converged and r.minutes is not None for r in self.runs], dtype=bool)

    def samples(self) -> np.ndarray:
        return np.array([r.samples_to_converge for r in self.runs], dtype=np.float64)

    def consistency_findings(self) -> list[Finding]:
        """Batch size and benchmark must be the same in every run (official rcp_checker, too)."""
        out: list[Finding] = []
        benches = {r.benchmark for r in self.runs if r.benchmark}
        if len(benches) > 1:
            out.append(
                Finding(
                    "benchmark_consistency",
                    "runs log different submission_benchmark values",
                    path=str(self.directory),
                    key="submission_benchmark",
                    value=sorted(benches),
                )
            )
        sizes = {r.batch_size for r in self.runs}
        if len(sizes) > 1:
            out.append(
                Finding(
                    "batch_size_consistency",
                    "runs log different global_batch_size values",
                    path=str(self.directory),
                    key="global_batch_size",
                    value=sorted(s for s in sizes if s is not None),
                )
            )
        return out


# The factor is RCP mean / submission mean of a run set that passed the RCP test (002 §13), so it is
# at least 1 and at most the largest speedup the t-test allows; no published RCP allows 10x.
MAX_SCALING_FACTOR = 10.0


def read_scaling(directory: str | Path) -> tuple[float, list[Finding]]:
    """scaling.json's factor (1 when absent); a file that cannot be used is an error finding."""
    path = Path(directory) / "scaling.json"
    got = kind(path)
    if got != FILE:  # a FIFO, a link (never followed) or a folder: never opened
        if got == LINK:
            return 1.0, [_scaling_error(path, f"scaling.json is not read: {not_a_file(path, got)}")]
        if got != MISSING:
            return 1.0, [_scaling_error(path, "scaling.json is not a regular file")]
        return 1.0, []
    try:
        obj = orjson.loads(path.read_bytes())
        if not isinstance(obj, dict) or "scaling_factor" not in obj:
            raise ValueError("it must be an object with 'scaling_factor'")
        factor = obj["scaling_factor"]
        if isinstance(factor, bool) or not isinstance(factor, int | float):
            raise ValueError(f"scaling_factor must be a number, got {_brief(factor)}")
        if not (1.0 <= float(factor) <= MAX_SCALING_FACTOR):
            raise ValueError(f"scaling_factor must be between 1 and {MAX_SCALING_FACTOR:g}, got {factor!r}")
        return float(factor), []
    except orjson.JSONDecodeError as exc:
        return 1.0, [_scaling_error(path, f"scaling.json is not valid JSON: {exc}")]
    except OSError as exc:
        return 1.0, [_scaling_error(path, f"scaling.json cannot be read: {exc.strerror or exc}")]
    except (OverflowError, ValueError) as exc:
        return 1.0, [_scaling_error(path, f"scaling.json cannot be used: {exc}")]


def _brief(x: Any) -> str:
    text = type(x).__name__ if isinstance(x, dict | list) else repr(x)
    return text[:60]


def _scaling_error(path: Path, message: str) -> Finding:
    return Finding("scaling_json", message, path=str(path), key="scaling_factor", source="002 §11 Benchmark Results")


def read_run_set(
    directory: str | os.PathLike[str],
    *,
    unit: Unit = "auto",
    ruleset: str | None = None,
    files: Iterable[str | Path] | None = None,
) -> RunSet:
    d = real_root(directory)
    try:
        paths = [Path(f) for f in files] if files is not None else result_files(d)
        stray = stray_result_files(d) if files is None else []
    except OSError as exc:
        raise LogFormatError(f"cannot list the folder: {exc.strerror or exc}", file=str(d)) from exc
    runs = [read_run(f, unit=unit, ruleset=ruleset) for f in paths]
    factor, findings = read_scaling(d)
    findings = stray + findings
    rs = RunSet(
        directory=d,
        runs=runs,
        system=d.parent.name,
        folder_benchmark=d.name,
        scaling_factor=factor,
        findings=findings,
    )
    if not runs:
        rs.findings.append(Finding("result_files", "no result_*.txt in the folder", path=str(d)))
    return rs


def find_benchmark_dirs(root: str | Path) -> list[Path]:
    """Benchmark folders under a package (`results/<sys>/<b>`), a system folder, or one folder."""
    r = real_root(root)
    if result_files(r):
        return [r]
    base = r / "results" if is_dir(r / "results") else r
    found: set[Path] = set()
    for pattern in ("*/result_*.txt", "*/*/result_*.txt", "*/*/*/result_*.txt"):
        found |= {p.parent for p in base.glob(pattern) if p.parent.name != "power" and is_dir(p.parent)}
    return sorted(found)
