"""One inference submitter folder as rows: the submission checker's verdict and metric per result
(`checks.submission.check_submission`, the code `proctor check submission` and `proctor summarize`
run), the system description's columns (`checks.system_description`), and every finding tied to
the result it is about (`rows.sort_findings`).

A result folder the checker could not make a result of (a log it could not read, a scenario folder
with a wrong name) is still a row, INVALID, with the findings that say why.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from proctor.checks.submission import ResultRow, check_submission
from proctor.checks.system_description import check_system_description, system_suites
from proctor.findings import Finding
from proctor.resultsdb.layout import INFERENCE, Unit
from proctor.resultsdb.rows import (
    INVALID,
    SCENARIOS,
    VALID,
    benchmark_name,
    capped,
    counts,
    finding_rows,
    finite,
    higher_is_better,
    per_accelerator,
    relative,
    scenario_key,
    sort_findings,
    system_columns,
)
from proctor.rules.inference_rounds import InferenceRound, round_table
from proctor.trees import DIR, FILE, kind, read_bytes, real_root

MAX_MAPPING = 1 << 20  # model_mapping.json is a few lines
MAX_SCENARIOS = 20  # scenario folders recorded under a benchmark folder the checker made no result of


def _mapping(unit: Path) -> dict[str, str]:
    """model_mapping.json (the checker reports what is wrong with it; here it only names benchmarks)."""
    path = unit / "model_mapping.json"
    if kind(path) != FILE:
        return {}
    try:
        data = orjson.loads(read_bytes(path, MAX_MAPPING + 1)[: MAX_MAPPING + 1])
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, str)} if isinstance(data, dict) else {}


def unit_rows(
    unit: Unit, round_: str, tree: Path, *, allow_unofficial_loadgen: bool = False
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(result rows, finding rows) of one `<division>/<submitter>` folder, checked by `round_`'s rules."""
    rnd = round_table(round_)
    report = check_submission(unit.path, round_, allow_unofficial_loadgen=allow_unofficial_loadgen)
    root = real_root(unit.path)  # the folder the checker names its paths under
    keyed: dict[tuple[str, ...], ResultRow] = {}
    for r in report.results:
        parts = Path(r.path).relative_to(root).parts
        keyed[(parts[1], parts[2], scenario_key(parts[3]))] = r
    owned = sort_findings(report.findings, root, keyed, 3)
    base = {"round": round_, "suite": INFERENCE, "unit": unit.id}
    mapping = _mapping(root)
    descs: dict[str, tuple[dict[str, Any] | None, str | None]] = {}

    def system(name: str) -> tuple[dict[str, Any] | None, str | None]:
        if name not in descs:
            desc, _ = check_system_description(root / "systems" / f"{name}.json", unit.division, unit.submitter)
            suites = system_suites(desc)
            descs[name] = (desc, ",".join(s.value for s in suites) or None)
        return descs[name]

    results: list[dict[str, Any]] = []
    findings: list[dict[str, Any]] = []
    names = {k: Path(r.path).name for k, r in keyed.items()}
    for k in owned.by_result:
        names.setdefault(k, _folder_name(owned.by_result[k], k[2]))
    for (sys_name, folder), fs in owned.by_folder.items():  # a benchmark folder the checker made no result of
        if counts(fs)[0] and not any(k[:2] == (sys_name, folder) for k in names):
            for scen in _scenario_folders(root / "results" / sys_name / folder) or [""]:
                names[(sys_name, folder, scenario_key(scen))] = scen
    keys = list(keyed) + sorted(k for k in names if k not in keyed)
    for key in keys:
        sys_name, folder, scen = key
        own = owned.by_result.get(key, [])
        shared = owned.by_folder.get((sys_name, folder), []) + owned.by_system.get(sys_name, [])
        errors, warnings = counts(own + shared)
        row = keyed.get(key)
        if row is None and not errors:
            continue  # only warnings about a folder that is no result: the unit's
        desc, category = system(sys_name)
        path = root / "results" / sys_name / folder / names[key] if row is None else Path(row.path)
        rel = relative(path, tree)
        results.append(
            {
                **base,
                **_columns(rnd, row, folder, scen, mapping),
                **system_columns(desc),
                "division": unit.division,
                "category": "edge" if folder.endswith("-edge") else category,
                "submitter": unit.submitter,
                "system": sys_name,
                "benchmark_folder": folder,
                "verdict": VALID if row is not None and row.valid and not errors else INVALID,
                "errors": errors,
                "warnings": warnings,
                "path": rel,
                "tree": str(tree),
            }
        )
        cols = results[-1]
        cols["per_accelerator"] = per_accelerator(cols["value"], cols["units"], cols["accelerators"])
        findings.extend(finding_rows(own, base, tree, rel, None))
    for (sys_name, _), fs in owned.by_folder.items():
        findings.extend(finding_rows(fs, base, tree, None, sys_name))
    for sys_name, fs in owned.by_system.items():
        findings.extend(finding_rows(fs, base, tree, None, sys_name))
    findings.extend(finding_rows(owned.unit, base, tree, None, None))
    return results, capped(findings, base)


def _folder_name(own: list[Finding], scen: str) -> str:
    """A result folder's own name, from a finding's path (its key holds the name compared loosely)."""
    for f in own:
        parts = Path(f.path or "").parts
        for i, part in enumerate(parts[:-1]):
            if part == "results" and i + 3 < len(parts) and scenario_key(parts[i + 3]) == scen:
                return parts[i + 3]
    return scen


def _scenario_folders(bench: Path) -> list[str]:
    """The folder names under a benchmark folder (links and files are none), at most MAX_SCENARIOS."""
    try:
        out = []
        for i, p in enumerate(bench.iterdir()):
            if i >= MAX_SCENARIOS * 10:
                break
            if kind(p) == DIR and not p.name.startswith("."):
                out.append(p.name)
        return sorted(out)[:MAX_SCENARIOS]
    except OSError:
        return []


def _columns(
    rnd: InferenceRound, row: ResultRow | None, folder: str, scen: str, mapping: dict[str, str]
) -> dict[str, Any]:
    """The measured columns of a result; a folder with no result has its names and no value."""
    name = benchmark_name(rnd, folder, mapping)
    if row is None:
        return {
            "benchmark": name,
            "scenario": SCENARIOS.get(scen, scen),
            "metric": "n/a",
            "value": None,
            "units": "",
            "higher_is_better": None,
            "inferred_from": None,
            "power": None,
            "power_units": None,
            "efficiency": None,
        }
    power = row.power
    return {
        "benchmark": name,
        "scenario": row.scenario,
        "metric": row.metric,
        "value": finite(row.value),
        "units": row.units,
        "higher_is_better": higher_is_better(row.units) if row.units else None,
        "inferred_from": row.inferred_from,
        "power": finite(power.metric) if power else None,
        "power_units": power.units if power else None,
        "efficiency": finite(power.efficiency) if power else None,
    }


__all__ = ["unit_rows"]
