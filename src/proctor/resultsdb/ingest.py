"""Published results trees into the database, one submitter folder (a unit) at a time.

Each unit is fingerprinted first (`trees.fingerprint`: one stat per file, nothing opened); a unit
whose fingerprint and checking proctor are those stored is skipped, so ingesting an unchanged tree
again costs a walk. Any other unit is checked by its suite's checker and its rows replace the stored
ones in one transaction: memory holds one unit's rows at a time, and an interrupted ingest leaves
every unit as it was or new. A unit the checker could not get through (a bug it met) is stored with
an `ingest` finding saying so and the rest go on. Ingesting a whole tree again removes the units
no longer in it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, Protocol

from proctor.findings import Finding
from proctor.resultsdb.layout import INFERENCE, Plan, Unit, plan
from proctor.resultsdb.rows import INVALID, finding_rows
from proctor.resultsdb.store import SCHEMA_VERSION, Store, text
from proctor.trees import fingerprint
from proctor.typed_records import field, record
from proctor.version import __version__

CHECKED_BY = f"proctor {__version__}, schema {SCHEMA_VERSION}"


class Progress(Protocol):
    """What an ingest reports while it works (the CLI draws a bar on a terminal)."""

    def begin(self, what: str, units: int, files: int) -> None: ...

    def unit(self, unit: str) -> None: ...

    def advance(self, files: int) -> None: ...

    def end(self) -> None: ...


@record(slots=True)
class TreeStats:
    tree: str
    suite: str
    round: str
    round_from: str
    units: int = 0
    checked: int = 0
    unchanged: int = 0
    removed: int = 0
    results: int = 0  # rows written by the units checked
    invalid: int = 0
    findings: int = 0
    files: int = 0  # files of the units checked
    bytes: int = 0
    seconds: float = 0.0
    failed: list[str] = field(default_factory=list)  # units the checker could not get through

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _rows(unit: Unit, p: Plan, allow_unofficial: bool) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    # the checkers (and numpy, scipy) load only when a unit is checked: an unchanged tree costs a walk
    from proctor.resultsdb import inference_units, training_units

    if p.suite == INFERENCE:
        return inference_units.unit_rows(unit, p.round, p.root, allow_unofficial_loadgen=allow_unofficial)
    return training_units.unit_rows(unit, p.round, p.root)


def plans(directories: Sequence[str | Path], round_: str | None = None, suite: str | None = None) -> list[Plan]:
    """Every folder's plan, before any work: one that cannot be read stops the command."""
    return [plan(d, round_, suite) for d in directories]


def ingest(
    store: Store,
    planned: Sequence[Plan],
    *,
    progress: Progress | None = None,
    force: bool = False,
    allow_unofficial_loadgen: bool = False,
) -> list[TreeStats]:
    """Ingest each plan's units into `store`; per tree, what was checked, skipped and removed."""
    out: list[TreeStats] = []
    seen: set[tuple[str, str, str]] = set()
    for p in planned:
        stats = TreeStats(str(p.root), p.suite, p.round, p.round_from, units=len(p.units))
        start = time.perf_counter()
        todo: list[tuple[Unit, Any]] = []
        for unit in p.units:
            key = (p.round, p.suite, unit.id)
            if key in seen:
                continue
            seen.add(key)
            fp = fingerprint(unit.path)
            stored = store.unit(*key)
            if (not force and stored is not None and stored["fingerprint"] == fp.digest
                    and stored["checked_by"] == CHECKED_BY):
                stats.unchanged += 1
                if stored["tree"] != str(p.root):
                    store.move_unit(*key, str(p.root))
                continue
            todo.append((unit, fp))
        if progress is not None:
            progress.begin(f"{p.suite} {p.round}", len(todo), sum(fp.files for _, fp in todo))
        try:
            for unit, fp in todo:
                if progress is not None:
                    progress.unit(unit.id)
                began = time.perf_counter()
                try:
                    results, findings = _rows(unit, p, allow_unofficial_loadgen)
                except (KeyboardInterrupt, MemoryError):
                    raise
                except Exception as exc:  # noqa: BLE001 - one unit a checker could not get through stops no other
                    results, findings = [], list(_failed(unit, p, exc))
                    stats.failed.append(unit.id)
                record = {
                    "round": p.round,
                    "suite": p.suite,
                    "unit": unit.id,
                    "tree": str(p.root),
                    "fingerprint": fp.digest,
                    "files": fp.files,
                    "bytes": fp.bytes,
                    "results": len(results),
                    "invalid": sum(r["verdict"] == INVALID for r in results),
                    "findings": len(findings),
                    "checked_by": CHECKED_BY,
                    "seconds": time.perf_counter() - began,
                }
                store.replace_unit(record, results, findings)
                stats.checked += 1
                stats.results += record["results"]
                stats.invalid += record["invalid"]
                stats.findings += record["findings"]
                stats.files += fp.files
                stats.bytes += fp.bytes
                if progress is not None:
                    progress.advance(fp.files)
        finally:
            if progress is not None:
                progress.end()
        if p.whole:
            present = {u.id for u in p.units}
            for unit_id in store.units(p.round, p.suite, str(p.root)):
                if unit_id not in present:
                    store.remove_unit(p.round, p.suite, unit_id)
                    stats.removed += 1
        stats.seconds = time.perf_counter() - start
        out.append(stats)
    return out


def _failed(unit: Unit, p: Plan, exc: Exception) -> Any:
    why = text(f"{type(exc).__name__}: {exc}", 500)
    finding = Finding(
        "ingest",
        f"proctor's checker stopped on this submitter folder ({why}); its results are not stored: a bug in "
        f"proctor {__version__}, please report it with the folder",
        path=str(unit.path),
    )
    return finding_rows([finding], {"round": p.round, "suite": p.suite, "unit": unit.id}, p.root, None, None)


__all__ = ["CHECKED_BY", "Progress", "TreeStats", "ingest", "plans"]
