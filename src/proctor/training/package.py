"""The training submission package checker: layout, system descriptions, compliance, seeds, RCPs.

One pass over `DIR/systems/*.json` and `DIR/results/<system>/<benchmark>/result_*.txt` collects every
finding into one report whose verdict is the exit status (the official package checker always exits
0 and writes its verdict in a log line). Closed-division benchmark folders also get the seed check
and the RCP check; bypass flags come from the options or from `package_checker_params` files in the
package root, the system folder or the benchmark folder (002 §13).

Hostile trees give findings, never a crash or a hang: only regular files are opened (a FIFO named
like a system JSON would block forever), and an unreadable file or folder is a finding naming it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from proctor.findings import Finding, Severity, is_valid
from proctor.mllog_lines import MAX_DEPTH, nested_deeper
from proctor.rules.training import benchmarks
from proctor.rules.training import package as layout
from proctor.rules.training.rulesets import CURRENT_RULESET
from proctor.training.benchmarks import TrainingBenchmark, resolve
from proctor.training.plausibility import is_implausible
from proctor.training.rcp import CustomRcps, Policy, RcpCheck, check_rcp
from proctor.training.runs import RunSet, Unit, read_run_set, result_files, unreadable_dirs
from proctor.training.scoring import median_window
from proctor.trees import FILE, MISSING, is_dir, is_file, kind, real_root, scan
from proctor.typed_records import field, record, replace

SRC_RESULTS = "002 §11 Run Results / Benchmark Results"
SRC_RCP = "002 §13 Reference Convergence Points"
SRC_SYSTEM = "mlperf-logging 4.1.68 system_desc_checker"
SRC_WINDOW = (
    "002 §12 Benchmark Results: M > N runs, the median set of N consecutive runs is scored "
    "(invalid sets count as infinite; an invalid median set makes the result invalid)"
)

# path -> (valid, findings); None when no compliance checker can run for the ruleset.
ComplianceFn = Callable[[Path, str, str | None], tuple[bool, list[Finding]]]
SeedFn = Callable[[Path], list[Finding]]


def default_compliance(
    ruleset: str, extra_benchmarks: Iterable[TrainingBenchmark] | None = None
) -> ComplianceFn | None:
    """proctor's compliance checker for rulesets it has tables for, else None.

    `extra_benchmarks`: the benchmarks outside the official tables (None: those registered when a
    file is checked)."""
    try:
        from proctor.training import compliance
    except ImportError:
        return None
    if ruleset not in compliance.available_rulesets():
        return None
    extra = list(extra_benchmarks) if extra_benchmarks is not None else None

    def run(path: Path, rs: str, benchmark: str | None) -> tuple[bool, list[Finding]]:
        rep = compliance.check_file(path, rs, benchmark=benchmark, extra_benchmarks=extra)
        return rep.valid, list(rep.findings)

    return run


def default_seed_check() -> SeedFn | None:
    try:
        from proctor.training import seeds
    except ImportError:
        return None
    return seeds.check_seeds


@record(slots=True)
class PackageReport:
    directory: str
    ruleset: str
    findings: list[Finding] = field(default_factory=list)
    rcp: list[RcpCheck] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)  # benchmark folders checked

    @property
    def valid(self) -> bool:
        return is_valid(self.findings)

    def to_dict(self) -> dict[str, Any]:
        return {
            "directory": self.directory,
            "ruleset": self.ruleset,
            "valid": self.valid,
            "checked": self.checked,
            "rcp": [r.to_dict() for r in self.rcp],
            "findings": [f.to_dict() for f in self.findings],
        }


def read_params(*folders: Path) -> set[str]:
    """Flags named in `package_checker_params` files, one a line (the rules' bypass mechanism)."""
    flags: set[str] = set()
    for folder in folders:
        path = folder / layout.PARAMS_FILE
        if is_file(path):
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue  # reported by the tree scan as unreadable
            for line in text.splitlines():
                if line.strip():
                    flags.add(line.strip().removeprefix("--"))
    return flags


def read_system(path: Path) -> tuple[dict[str, Any] | None, list[Finding]]:
    """The system description JSON object, or findings saying why it cannot be used."""
    if not is_file(path):  # a FIFO, a device, a folder or a link (never followed): never opened
        return None, [
            Finding(
                "system_json",
                "system description is not a regular file",
                path=str(path),
                source=SRC_SYSTEM,
            )
        ]
    try:
        obj = orjson.loads(path.read_bytes())
    except OSError as exc:
        return None, [
            Finding(
                "system_json",
                f"system description cannot be read: {exc.strerror or exc}",
                path=str(path),
                source=SRC_SYSTEM,
            )
        ]
    except orjson.JSONDecodeError as exc:
        return None, [
            Finding(
                "system_json", f"system description is not valid JSON: {exc}", path=str(path), source=SRC_SYSTEM
            )
        ]
    if isinstance(obj, dict) and nested_deeper(obj, MAX_DEPTH):
        return None, [
            Finding(
                "system_json",
                f"system description nests values more than {MAX_DEPTH} levels deep",
                path=str(path),
                source=SRC_SYSTEM,
            )
        ]
    if not isinstance(obj, dict):
        return None, [
            Finding(
                "system_json", "system description must be a JSON object", path=str(path), source=SRC_SYSTEM
            )
        ]
    return obj, []


def check_system(path: Path, ruleset: str) -> list[Finding]:
    obj, out = read_system(path)
    if obj is None:
        return out
    for key in layout.SYSTEM_REQUIRED_FIELDS:
        if key not in obj:
            out.append(
                Finding("system_field", f"missing field '{key}'", path=str(path), key=key, source=SRC_SYSTEM)
            )
    major = int(ruleset.split(".")[0])
    status = obj.get("status")
    if status is not None and major >= layout.STATUS_MIN_MAJOR and status not in layout.SYSTEM_STATUS_VALUES:
        out.append(
            Finding(
                "system_status",
                f"status {_brief(status)} is not an allowed value",
                path=str(path),
                key="status",
                value=status,
                expected=list(layout.SYSTEM_STATUS_VALUES),
                source=SRC_SYSTEM,
            )
        )
    div = obj.get("division")
    if div is not None and div not in layout.DIVISIONS:
        out.append(
            Finding(
                "system_division",
                f"division {_brief(div)} is neither closed nor open",
                path=str(path),
                key="division",
                value=div,
                expected=list(layout.DIVISIONS),
            )
        )
    return out


def _brief(x: Any) -> str:
    return type(x).__name__ if isinstance(x, dict | list) else repr(x)[:60]


def _subdirs(folder: Path) -> list[Path]:
    """Sub-folders (a link is not followed: the tree scan names it); [] when unreadable (reported apart)."""
    try:
        return sorted(p for p in folder.iterdir() if is_dir(p)) if is_dir(folder) else []
    except OSError:
        return []


def _entries(folder: Path) -> list[Path]:
    try:
        return list(folder.iterdir())
    except OSError:
        return []


def _tree_findings(root: Path) -> tuple[list[Finding], bool]:
    """(unreadable folders, every link, FIFO, socket and device anywhere in the package and unreadable
    package files; whether the package is within proctor's bounds). No link is followed: a package
    needs none (proctor.trees)."""
    out = [
        Finding("unreadable", f"folder cannot be listed: {d}", path=str(d), source=SRC_RESULTS)
        for d in unreadable_dirs(root, depth=4)
    ]
    found = scan(root)
    out += [
        Finding("not_a_file", f"{p} is not read: {why}", path=str(p), source=SRC_RESULTS)
        for p, why in found.problems
        if not why.startswith("cannot be listed")  # unreadable_dirs named it
    ]
    if found.more:
        out.append(Finding("not_a_file", f"{found.more} more links, FIFOs or devices", path=str(root)))
    if found.stopped:
        out.append(Finding("tree", f"{found.stopped}; the package was not checked", path=str(root)))
    for sub, pattern in (("systems", "*.json"), ("results", "*/*/result_*.txt"), ("results", "*/*/scaling.json")):
        for p in sorted((root / sub).glob(pattern)):
            if kind(p) == FILE and not os.access(p, os.R_OK):
                out.append(Finding("unreadable", f"file cannot be read: {p}", path=str(p), source=SRC_RESULTS))
    return out, not found.stopped


def check_package(
    directory: str | os.PathLike[str],
    ruleset: str = CURRENT_RULESET,
    *,
    rcp_bypass: bool = False,
    seed_bypass: bool = False,
    unit: Unit = "auto",
    policy: Policy = "rules",
    set_scaling: bool = False,
    custom_rcps: CustomRcps | None = None,
    compliance: ComplianceFn | None | str = "auto",
    seed_check: SeedFn | None | str = "auto",
    extra_benchmarks: Iterable[TrainingBenchmark] | None = None,
) -> PackageReport:
    """Check a whole package.

    Benchmarks outside the ruleset's tables (their compliance tables, N and RCPs) are those the
    entry points declare, read once here (None), or exactly `extra_benchmarks`.
    """
    root = real_root(directory)
    rep = PackageReport(str(root), ruleset)
    extra = resolve(ruleset, extra_benchmarks)
    benches = list(extra.values())
    comp = default_compliance(ruleset, benches) if isinstance(compliance, str) else compliance
    seeds = default_seed_check() if isinstance(seed_check, str) else seed_check
    allowed = set(benchmarks.allowed_benchmarks(ruleset)) | set(extra)
    if not allowed:
        rep.findings.append(Finding("ruleset", f"unknown training ruleset {ruleset!r}", key="ruleset"))
    if comp is None:
        rep.findings.append(
            Finding(
                "compliance",
                f"no compliance tables for ruleset {ruleset}: run logs were not checked for compliance",
                Severity.WARNING,
            )
        )

    systems_dir, results_dir = root / "systems", root / "results"
    for d, what in ((systems_dir, "systems"), (results_dir, "results")):
        if not is_dir(d):
            rep.findings.append(Finding("layout", f"the package has no '{what}/' folder", path=str(d)))
    tree, within_bounds = _tree_findings(root)
    rep.findings.extend(tree)
    if not within_bounds:
        return rep
    for sys_json in sorted(p for p in systems_dir.glob("*.json") if is_file(p)):
        rep.findings.extend(check_system(sys_json, ruleset))
    root_flags = read_params(root)

    for sys_dir in _subdirs(results_dir):
        desc_path = systems_dir / f"{sys_dir.name}.json"
        desc, errs = (
            read_system(desc_path)
            if kind(desc_path) != MISSING
            else (
                None,
                [
                    Finding(
                        "system_json",
                        f"results/{sys_dir.name} has no systems/{sys_dir.name}.json",
                        path=str(desc_path),
                        source=SRC_SYSTEM,
                    )
                ],
            )
        )
        rep.findings.extend(errs if kind(desc_path) != FILE else [])
        division = (desc or {}).get("division", "")
        sys_flags = read_params(sys_dir)
        for bdir in _subdirs(sys_dir):
            bench = bdir.name
            if bench not in allowed:
                rep.findings.append(
                    Finding(
                        "benchmark",
                        f"'{bench}' is not a benchmark of ruleset {ruleset}: skipped",
                        Severity.WARNING,
                        path=str(bdir),
                    )
                )
                continue
            rep.checked.append(str(bdir))
            _check_benchmark(
                rep,
                bdir,
                bench,
                ruleset,
                division,
                root_flags | sys_flags | read_params(bdir),
                rcp_bypass=rcp_bypass,
                seed_bypass=seed_bypass,
                unit=unit,
                policy=policy,
                set_scaling=set_scaling,
                custom_rcps=custom_rcps,
                comp=comp,
                seeds=seeds,
                extra=benches,
            )
    return rep


def _check_benchmark(
    rep: PackageReport,
    bdir: Path,
    bench: str,
    ruleset: str,
    division: str,
    flags: set[str],
    *,
    rcp_bypass: bool,
    seed_bypass: bool,
    unit: Unit,
    policy: Policy,
    set_scaling: bool,
    custom_rcps: CustomRcps | None,
    comp: ComplianceFn | None,
    seeds: SeedFn | None,
    extra: list[TrainingBenchmark],
) -> None:
    files = result_files(bdir)
    n_extra = next((b.runs_required for b in extra if b.name == bench), None)
    n = benchmarks.runs_required(bench, n_extra)
    if n is not None and len(files) < n:
        rep.findings.append(
            Finding(
                "run_count",
                f"{len(files)} result_*.txt files, the benchmark needs {n}",
                path=str(bdir),
                value=len(files),
                expected=n,
                source=SRC_RESULTS,
            )
        )
    others = [
        p.name
        for p in _entries(bdir)
        if is_file(p) and p not in files and p.name not in (layout.PARAMS_FILE, "scaling.json")
    ]
    if others:
        rep.findings.append(
            Finding(
                "file_names",
                "files not named result_*.txt",
                Severity.WARNING,
                path=str(bdir),
                value=sorted(others),
            )
        )
    bad: list[str] = []
    if comp is not None:
        for f in files:
            try:
                ok, fnd = comp(f, ruleset, bench)
            except Exception as exc:  # a checker crash is a finding on that file, not a crash of ours
                ok, fnd = False, [Finding("compliance", f"compliance check failed: {exc}", path=str(f))]
            if not ok:
                bad.append(f.name)
                # a run olympic scoring may drop is one that ran; a log that cannot be true stays an error
                rep.findings.extend(
                    x if not x.failed or is_implausible(x) else _as(x, Severity.WARNING) for x in fnd
                )
    rs = None
    if n is not None and len(files) > n:
        # M > N (002 §12): the median window of N consecutive runs is the result, as `score` scores it
        rs = read_run_set(bdir, unit=unit, ruleset=ruleset)
        rs = _median_window(rep, rs, n, set(bad))
    elif bad:
        allowed_bad = benchmarks.max_non_converged(bench)
        if len(bad) <= allowed_bad:
            rep.findings.append(
                Finding(
                    "compliance",
                    f"{len(bad)} run(s) do not comply ({', '.join(bad)}): accepted under olympic scoring",
                    Severity.WARNING,
                    path=str(bdir),
                    source=SRC_RESULTS,
                )
            )
        else:
            rep.findings.append(
                Finding(
                    "compliance",
                    f"{len(bad)} runs do not comply ({', '.join(bad)}); at most {allowed_bad} may be dropped",
                    path=str(bdir),
                    value=bad,
                    source=SRC_RESULTS,
                )
            )
    if division != "closed" or ruleset not in layout.RCP_RULESETS:
        return
    if seed_bypass or layout.PARAM_SEED_BYPASS in flags:
        rep.findings.append(Finding("seeds", "seed check bypassed", Severity.WARNING, path=str(bdir)))
    elif seeds is None:
        rep.findings.append(
            Finding("seeds", "no seed checker available: seeds not checked", Severity.WARNING, path=str(bdir))
        )
    else:
        rep.findings.extend(seeds(bdir))
    if rs is None:
        rs = read_run_set(bdir, unit=unit, ruleset=ruleset)
    res = check_rcp(
        rs,
        ruleset,
        custom_rcps,
        bypass=rcp_bypass or layout.PARAM_RCP_BYPASS in flags,
        unit=unit,
        policy=policy,
        set_scaling=set_scaling,
        runs_required=n_extra,
        extra_benchmarks=extra,
    )
    rep.rcp.append(res)
    rep.findings.extend(
        f
        for f in res.findings
        if f.rule.startswith("rcp") or f.rule.endswith("consistency") or f.rule == "scaling_json"
    )


def _median_window(rep: PackageReport, rs: RunSet, n: int, bad: set[str]) -> RunSet:
    """The N runs that make the result when a folder holds M > N (002 §12): every window of N runs
    consecutive in start order is olympic-scored, a non-converging or non-complying run counting as
    infinite, and the median window is the result; the result is invalid when that window is. The
    scorer (`scoring.score_run_set`) picks the same window, so `check-package` and `score` agree."""
    bench = rs.benchmark or ""
    ok = rs.converged() & np.array([r.name not in bad for r in rs.runs], dtype=bool)
    starts = np.array([np.nan if r.run_start_ms is None else r.run_start_ms for r in rs.runs])
    drop, max_failed = benchmarks.olympic_drop(bench), benchmarks.max_non_converged(bench)
    pick, scores, idx = median_window(starts, rs.minutes(), ok, n, drop, max_failed)
    used = [rs.runs[i].name for i in idx]
    if math.isfinite(scores[pick]):
        rep.findings.append(
            Finding(
                "run_window",
                f"{len(rs.runs)} runs > {n}: the median of {len(scores)} windows of {n} consecutive runs "
                f"is the result ({', '.join(used)})",
                Severity.INFO,
                path=str(rs.directory),
                value=used,
                extra={"window_scores": scores},
                source=SRC_WINDOW,
            )
        )
    else:
        rep.findings.append(
            Finding(
                "run_window",
                f"{len(rs.runs)} runs > {n}: the median window of {n} consecutive runs ({', '.join(used)}) "
                f"is not a valid result (more runs fail than olympic scoring drops), so the result is invalid",
                path=str(rs.directory),
                value=used,
                extra={"window_scores": scores},
                source=SRC_WINDOW,
            )
        )
    return replace(rs, runs=[rs.runs[i] for i in idx])


def _as(f: Finding, sev: Severity) -> Finding:
    return replace(f, severity=sev)
