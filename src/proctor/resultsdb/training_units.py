"""One training submitter package as rows: one per system and benchmark, its time to train as the
summary scores it (`training.summarize.score_benchmark`: olympic mean, scaling.json or the RCP's
normalization), its verdict from the package checker (`training.package.check_package`: layout,
system descriptions, compliance of every run, seeds, RCPs) and the score's own rules.

Each run log is checked for compliance once (the package checker and the score share the answers).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from proctor.findings import Finding
from proctor.resultsdb.layout import TRAINING, Unit, ruleset
from proctor.resultsdb.rows import (
    INVALID,
    VALID,
    capped,
    counts,
    finding_rows,
    finite,
    relative,
    sort_findings,
    system_columns,
)
from proctor.rules.training.benchmarks import allowed_benchmarks
from proctor.training.benchmarks import registered
from proctor.training.package import ComplianceFn, check_package, default_compliance, read_system
from proctor.training.summarize import score_benchmark, system_bench_dirs, system_dirs
from proctor.trees import FILE, kind, real_root

METRIC, UNITS = "time to train", "minutes"


def _memo(comp: ComplianceFn | None) -> ComplianceFn | None:
    if comp is None:
        return None
    seen: dict[tuple[str, str, str | None], tuple[bool, list[Finding]]] = {}

    def run(path: Path, rs: str, bench: str | None) -> tuple[bool, list[Finding]]:
        key = (str(path), rs, bench)
        if key not in seen:
            seen[key] = comp(path, rs, bench)
        return seen[key]

    return run


def unit_rows(unit: Unit, round_: str, tree: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(result rows, finding rows) of one submitter package, checked by `round_`'s ruleset."""
    rs_name = ruleset(round_)
    root = real_root(unit.path)
    comp = _memo(default_compliance(rs_name))
    report = check_package(root, rs_name, compliance=comp)
    allowed = set(allowed_benchmarks(rs_name)) | set(registered(rs_name))
    base = {"round": round_, "suite": TRAINING, "unit": unit.id}
    scored: list[tuple[Path, dict[str, Any] | None, Any, list[Finding]]] = []
    for sys_dir in system_dirs(root):
        desc_path = root / "systems" / f"{sys_dir.name}.json"
        desc = read_system(desc_path)[0] if kind(desc_path) == FILE else None
        division = desc.get("division") if desc and isinstance(desc.get("division"), str) else None
        for bdir in sorted(system_bench_dirs(sys_dir)):
            own: list[Finding] = []
            if bdir.name not in allowed:
                own.append(
                    Finding(
                        "benchmark",
                        f"'{bdir.name}' is not a benchmark of training {round_} (ruleset {rs_name}): not a result of it",
                        path=str(bdir),
                    )
                )
                scored.append((bdir, desc, None, own))
                continue
            _, score, _ = score_benchmark(bdir, rs_name, division, comp)
            own += [f for f in score.findings if f.failed]
            scored.append((bdir, desc, score, own))
    keys = [(b.parent.name, b.name) for b, _, _, _ in scored]
    owned = sort_findings(report.findings, root, keys, 2)
    results: list[dict[str, Any]] = []
    findings: list[dict[str, Any]] = []
    for (bdir, desc, score, own), key in zip(scored, keys, strict=True):
        listed = owned.by_result.pop(key, [])
        seen = {(f.rule, f.path, f.message) for f in listed}
        mine = listed + [f for f in own if (f.rule, f.path, f.message) not in seen]
        errors, warnings = counts(mine + owned.by_system.get(key[0], []))
        rel = relative(bdir, tree)
        valid = score is not None and score.valid and not errors
        results.append(
            {
                **base,
                **system_columns(desc),
                "division": (desc or {}).get("division") if isinstance((desc or {}).get("division"), str) else None,
                "category": None,
                "submitter": unit.submitter,
                "system": key[0],
                "benchmark": bdir.name,
                "benchmark_folder": bdir.name,
                "scenario": "",
                "metric": METRIC,
                "value": finite(score.score_minutes) if score is not None else None,
                "units": UNITS,
                "higher_is_better": False,
                "per_accelerator": None,  # a time: per accelerator means nothing
                "inferred_from": None,
                "power": None,
                "power_units": None,
                "efficiency": None,
                "verdict": VALID if valid else INVALID,
                "errors": errors,
                "warnings": warnings,
                "path": rel,
                "tree": str(tree),
            }
        )
        findings.extend(finding_rows(mine, base, tree, rel, None))
    for folder, fs in owned.by_result.items():  # about a benchmark folder that is no result
        findings.extend(finding_rows(fs, base, tree, None, folder[0]))
    for sys_name, fs in owned.by_system.items():
        findings.extend(finding_rows(fs, base, tree, None, sys_name))
    for folder, fs in owned.by_folder.items():
        findings.extend(finding_rows(fs, base, tree, None, folder[0] if folder else None))
    findings.extend(finding_rows(owned.unit, base, tree, None, None))
    return results, capped(findings, base)


__all__ = ["METRIC", "UNITS", "unit_rows"]
