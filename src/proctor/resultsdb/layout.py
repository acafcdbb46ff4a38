"""What a folder given to `proctor results` holds: which suite, which round, which submitter folders.

A published inference results repository holds `<division>/<submitter>/` folders (closed, open,
network); a training one holds `<submitter>/` packages (systems/, results/<system>/<benchmark>/
result_*.txt). A whole repository, one division, or some submitter folders may be given. The round
is the one given, else the one the tree names: a folder on its path called like the official
repositories (`inference_results_v5.1`, `training_results_v5.1`), else the heading of the given
folder's README.md ("MLPerf Inference v5.1 results"). Folders are listed one level at a time without following a link
(proctor.trees): a link is not a submitter, and nothing outside the tree is read.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from proctor.errors import ResultsError
from proctor.rules.rounds import ROUNDS as INFERENCE_ROUNDS
from proctor.rules.training.benchmarks import ROUNDS as TRAINING_TABLES
from proctor.trees import DIR, FILE, MAX_ENTRIES, kind, read_bytes, real_root, show
from proctor.typed_records import field, record

INFERENCE, TRAINING = "inference", "training"
SUITES = (INFERENCE, TRAINING)
DIVISIONS = ("closed", "network", "open")
TRAINING_ROUNDS: tuple[str, ...] = tuple(f"v{k}" for k in TRAINING_TABLES)
_NAMED = re.compile(r"(inference|training)_results_(v\d+\.\d+)", re.IGNORECASE)
_README = re.compile(r"MLPerf\W{0,3}\s*(Inference|Training)\s+(v\d+\.\d+)", re.IGNORECASE)
README_BYTES = 4096  # the heading is on the first lines


@record(frozen=True, slots=True)
class Unit:
    """One submitter folder: what is checked (and skipped or replaced) as a whole."""

    suite: str
    id: str  # "closed/ACME" (inference) or "ACME" (training): the same whichever level was given
    path: Path
    division: str  # "" for training (each system description says it)
    submitter: str


@record(slots=True)
class Plan:
    root: Path  # the tree the units' paths are relative to (the folder above each unit id)
    suite: str
    round: str
    round_from: str  # how the round was found, in words
    units: list[Unit] = field(default_factory=list)
    whole: bool = False  # a whole tree was given: its units no longer there are stale


def ruleset(round_: str) -> str:
    """The training ruleset of a round: v5.1 -> 5.1.0."""
    return round_.removeprefix("v") + ".0"


def check_round(round_: str, suite: str) -> str:
    known = INFERENCE_ROUNDS if suite == INFERENCE else TRAINING_ROUNDS
    if round_ not in known:
        raise ResultsError(f"--round {round_!r} is not a known {suite} round; use one of {', '.join(known)}")
    return round_


def _subdirs(folder: Path) -> list[Path]:
    """The visible sub-folders, in name order; a link, a FIFO or an unreadable folder is none."""
    try:
        out = []
        for i, p in enumerate(folder.iterdir()):
            if i >= MAX_ENTRIES:
                break
            if not p.name.startswith(".") and kind(p) == DIR:
                out.append(p)
        return sorted(out)
    except OSError:
        return []


def _has_training_results(pkg: Path) -> bool:
    """A training package: results/<system>/<benchmark>/result_*.txt (a glance at the first few)."""
    for system in _subdirs(pkg / "results")[:50]:
        for bench in _subdirs(system)[:50]:
            try:
                if any(p.name.startswith("result_") and p.name.endswith(".txt") and kind(p) == FILE
                       for p in bench.iterdir()):
                    return True
            except OSError:
                continue
    return False


def _is_package(p: Path) -> bool:
    return kind(p / "results") == DIR or kind(p / "systems") == DIR


def _inference_units(root: Path) -> tuple[Path, list[Unit], bool] | None:
    """(tree root, units, whole tree?) when `root` is an inference tree, a division or a submitter."""
    if root.parent.name.lower() in DIVISIONS and _is_package(root) and not _has_training_results(root):
        div = root.parent.name.lower()
        return root.parent.parent, [Unit(INFERENCE, f"{root.parent.name}/{root.name}", root, div, root.name)], False
    if root.name.lower() in DIVISIONS:
        div = root.name.lower()
        units = [Unit(INFERENCE, f"{root.name}/{s.name}", s, div, s.name) for s in _subdirs(root)]
        return (root.parent, units, False) if units else None
    divisions = [d for d in _subdirs(root) if d.name.lower() in DIVISIONS]
    units = [
        Unit(INFERENCE, f"{d.name}/{s.name}", s, d.name.lower(), s.name) for d in divisions for s in _subdirs(d)
    ]
    return (root, units, True) if units else None


def _training_units(root: Path) -> tuple[Path, list[Unit], bool] | None:
    if _is_package(root) and _has_training_results(root):
        return root.parent, [Unit(TRAINING, root.name, root, "", root.name)], False
    units = [Unit(TRAINING, s.name, s, "", s.name) for s in _subdirs(root) if _is_package(s)]
    units = [u for u in units if _has_training_results(u.path)] or units
    return (root, units, True) if units else None


def _named_round(root: Path) -> tuple[str, str, str] | None:
    """(suite, round, how) from a folder name on the path (the clone's), else the README.md heading."""
    for part in reversed(root.parts):
        m = _NAMED.search(part)
        if m:
            return m[1].lower(), m[2].lower(), f"the folder {part!r} names it"
    readme = root / "README.md"
    if kind(readme) == FILE:
        try:
            head = read_bytes(readme, README_BYTES).decode("utf-8", "replace")
        except OSError:
            head = ""
        m = _README.search(head)
        if m:
            return m[1].lower(), m[2].lower(), f"README.md says MLPerf {m[1]} {m[2]}"
    return None


def plan(
    directory: str | Path,
    round_: str | None = None,
    suite: str | None = None,
    *,
    default_round: Callable[[str], str | None] | None = None,
) -> Plan:
    """The units of `directory` and the round and suite they are checked by; ResultsError naming the
    folder and the option to give when it cannot tell. `default_round(suite)` gives the round of a
    tree that names none (compare: the newest round in the database)."""
    given = Path(directory)
    got = kind(given)
    if got == "missing":
        raise ResultsError(f"{show(given)}: no such folder")
    root = real_root(given).absolute()
    if kind(root) != DIR:
        raise ResultsError(f"{show(given)}: not a folder; give a results tree, a division or a submitter folder")
    if suite is not None and suite not in SUITES:
        raise ResultsError(f"--suite {suite!r}: use inference or training")
    named = _named_round(root)
    want = suite or (named[0] if named else None)
    found = None
    if want in (None, INFERENCE):
        found = _inference_units(root)
        if found is not None:
            want = INFERENCE
    if found is None and want in (None, TRAINING):
        found = _training_units(root)
        if found is not None:
            want = TRAINING
    if found is None or want is None:
        what = {
            INFERENCE: "an inference results tree (closed|open|network/<submitter>/results/...)",
            TRAINING: "a training results tree (<submitter>/results/<system>/<benchmark>/result_*.txt)",
        }
        expected = what[want] if want else f"{what[INFERENCE]} or {what[TRAINING]}"
        raise ResultsError(f"{show(given)}: no submitter folders found; expected {expected}")
    tree, units, whole = found
    if round_ is not None:
        how = "--round"
    elif named is not None and named[0] == want:
        round_, how = named[1], named[2]
    elif default_round is not None and (fallback := default_round(want)) is not None:
        round_, how = fallback, f"the newest {want} round in the database"
    else:
        raise ResultsError(
            f"{show(given)}: which round? neither its README.md nor a folder on its path "
            f"({want}_results_vX.Y) names it; give --round (e.g. --round v5.1)"
        )
    return Plan(tree, want, check_round(round_, want), how, units, whole)


__all__ = ["DIVISIONS", "INFERENCE", "SUITES", "TRAINING", "TRAINING_ROUNDS", "Plan", "Unit", "check_round", "plan", "ruleset"]
