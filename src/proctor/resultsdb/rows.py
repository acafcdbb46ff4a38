"""What both suites' rows share: a benchmark's one name across spellings, a system description's
columns, a metric's direction and value per accelerator, and findings tied to the result they are about.

A finding belongs to a result when its path lies in that result's folders (inference: results/,
compliance/ and measurements/ `<system>/<benchmark>/<scenario>`; training: results/<system>/
<benchmark>), to every result of a benchmark folder when it is about that folder (a required
scenario missing), and to every result of a system when it is about the system's description;
any other finding is the unit's. A result is INVALID when the checker rejects it or any error
finding that belongs to it (its system's description included).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Iterator
from pathlib import Path, PurePath
from typing import Any

from proctor.findings import Finding, Severity
from proctor.resultsdb.store import text
from proctor.rules.inference import Category
from proctor.rules.inference_rounds import InferenceRound
from proctor.typed_records import field, record

VALID, INVALID = "VALID", "INVALID"
LOWER_IS_BETTER = ("ms", "s", "minutes")  # latency and time to train; every other metric is a rate
MAX_FINDINGS = 20_000  # stored per unit; past this only their count is stored
MAX_COUNT = 1 << 31


def finite(value: float | None) -> float | None:
    """A measured number, or None when it is no finite number (a log may claim inf or nan)."""
    return value if isinstance(value, int | float) and math.isfinite(value) else None


def higher_is_better(units: str | None) -> bool:
    return (units or "") not in LOWER_IS_BETTER


def per_accelerator(value: float | None, units: str | None, accelerators: int | None) -> float | None:
    """value / accelerators for a throughput; None for a latency or time (per accelerator means
    nothing there), a system without accelerators, or no value."""
    if value is None or not math.isfinite(value) or not higher_is_better(units) or not accelerators:
        return None
    return value / accelerators


def whole(value: Any) -> int | None:
    """A count from a description: a whole number, or a string holding one; else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        s = value.strip()
        if not s.isdigit() or len(s) > 12:
            return None
        value = int(s)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return value if isinstance(value, int) and 0 <= value < MAX_COUNT else None


def field_text(desc: dict[str, Any] | None, key: str, limit: int = 300) -> str | None:
    value = (desc or {}).get(key)
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    return text(value, limit)


def system_columns(desc: dict[str, Any] | None) -> dict[str, Any]:
    """The columns a system description gives every result of the system (None where it says nothing
    usable: a hostile description gives no crash, only empty columns)."""
    per_node, nodes = whole((desc or {}).get("accelerators_per_node")), whole((desc or {}).get("number_of_nodes"))
    total = per_node * nodes if per_node is not None and nodes is not None else None
    return {
        "availability": field_text(desc, "status"),
        "system_name": field_text(desc, "system_name"),
        "accelerator": field_text(desc, "accelerator_model_name"),
        "accelerators_per_node": per_node,
        "nodes": nodes,
        "accelerators": total if total is None or total < MAX_COUNT else None,
        "host_processor": field_text(desc, "host_processor_model_name"),
        "framework": field_text(desc, "framework"),
    }


def relative(path: str | os.PathLike[str] | None, tree: Path) -> str | None:
    """A checker's path as it lies in the tree (relative to it); one outside it as given."""
    if path is None:
        return None
    try:
        return PurePath(path).relative_to(tree).as_posix()
    except ValueError:
        return os.fspath(path)


def scenario_key(name: str) -> str:
    """Scenario folders compared as the checker reads them (Server, server, single_stream ...)."""
    return name.replace("-", "").replace("_", "").lower()


SCENARIOS = {scenario_key(c.value): c.value for c in Category}


def benchmark_name(rnd: InferenceRound, folder: str, mapping: dict[str, str] | None = None) -> str:
    """The round table's name of a benchmark folder ("resnet" and "resnet50" are both resnet50; the
    accuracy level is kept where the benchmark has several: llama2-70b-99.9); the folder's own name
    when the table has none."""
    for name in (mapping or {}).get(folder, folder), folder.removesuffix("-edge"):
        try:
            variant = rnd.table.resolve(name)
        except KeyError:
            continue
        bench = variant.benchmark
        level = variant.level
        if level is not None and len(bench.quality) > 1:
            return f"{bench.name}-{level.suffix}"
        return bench.name
    return folder


@record(slots=True)
class Owned:
    """The findings of one unit, sorted by what they are about."""

    by_result: dict[tuple[str, ...], list[Finding]] = field(default_factory=dict)
    by_folder: dict[tuple[str, ...], list[Finding]] = field(default_factory=dict)  # a benchmark folder
    by_system: dict[str, list[Finding]] = field(default_factory=dict)
    unit: list[Finding] = field(default_factory=list)


def sort_findings(
    findings: Iterable[Finding], unit_root: Path, result_parts: Iterable[tuple[str, ...]], depth: int
) -> Owned:
    """Sort a unit's findings: `result_parts` are the results' keys (a result folder's path parts
    below the unit, first part dropped, scenario compared as `scenario_key`), `depth` their length
    (3 for inference: system, benchmark, scenario; 2 for training: system, benchmark)."""
    known = set(result_parts)
    out = Owned()
    for f in findings:
        parts = _parts(f.path, unit_root)
        key = _key(parts, depth)
        if key is not None and (key in known or parts[0] == "results"):
            out.by_result.setdefault(key, []).append(f)
        elif parts and parts[0] == "results" and len(parts) == depth:  # a benchmark folder (inference)
            out.by_folder.setdefault(tuple(parts[1:]), []).append(f)
        elif parts and parts[0] == "systems" and len(parts) == 2 and parts[1].endswith(".json"):
            out.by_system.setdefault(parts[1].removesuffix(".json"), []).append(f)
        else:
            out.unit.append(f)
    return out


def _parts(path: str | None, unit_root: Path) -> tuple[str, ...]:
    if not path:
        return ()
    try:
        return PurePath(path).relative_to(unit_root).parts
    except ValueError:
        return ()


def _key(parts: tuple[str, ...], depth: int) -> tuple[str, ...] | None:
    if len(parts) < depth + 1 or parts[0] not in ("results", "compliance", "measurements"):
        return None
    if depth == 3:
        return (parts[1], parts[2], scenario_key(parts[3]))
    return tuple(parts[1 : depth + 1]) if parts[0] == "results" else None


def counts(findings: Iterable[Finding]) -> tuple[int, int]:
    errors = warnings = 0
    for f in findings:
        errors += f.severity is Severity.ERROR
        warnings += f.severity is Severity.WARNING
    return errors, warnings


def finding_rows(
    findings: Iterable[Finding], base: dict[str, Any], tree: Path, result_path: str | None, system: str | None
) -> Iterator[dict[str, Any]]:
    for f in findings:
        yield {
            **base,
            "result_path": result_path,
            "system": system,
            "severity": f.severity.value,
            "rule": f.rule,
            "path": relative(f.path, tree),
            "line": f.line if isinstance(f.line, int) and 0 <= f.line < MAX_COUNT else None,
            "key": f.key,
            "message": f.message,
            "source": f.source,
        }


def capped(rows: list[dict[str, Any]], base: dict[str, Any]) -> list[dict[str, Any]]:
    """At most MAX_FINDINGS finding rows per unit; the rest counted in one more."""
    if len(rows) <= MAX_FINDINGS:
        return rows
    more = len(rows) - MAX_FINDINGS
    note = {
        **base,
        "result_path": None,
        "system": None,
        "severity": Severity.WARNING.value,
        "rule": "findings_cut",
        "path": None,
        "line": None,
        "key": None,
        "message": f"{more} more findings in this submitter folder were not stored (at most {MAX_FINDINGS} are)",
        "source": None,
    }
    return [*rows[:MAX_FINDINGS], note]


__all__ = [
    "INVALID",
    "SCENARIOS",
    "LOWER_IS_BETTER",
    "VALID",
    "Owned",
    "benchmark_name",
    "capped",
    "counts",
    "field_text",
    "finding_rows",
    "finite",
    "higher_is_better",
    "per_accelerator",
    "relative",
    "scenario_key",
    "sort_findings",
    "system_columns",
    "whole",
]
