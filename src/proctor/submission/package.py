"""`proctor submission package`: an official-layout submission tree from a folder of proctor runs.

RUNS: `<benchmark>/<scenario>/{performance[/run_1],accuracy}` (the LoadGen outputs; accuracy/ with
the accuracy script's accuracy.txt), optional `<benchmark>/<scenario>/TEST0x/` audit folders, and
`user.conf`, `mlperf.conf`, `measurements.json`, `README.md` per scenario or at the top of RUNS.
The round decides the layout: v6.x keeps audits and measurements in the result's folder, up to v5.1
they go under `compliance/` and `measurements/`. The accuracy logs are then truncated with their
hashes (`truncate.py`), so the tree is ready for the official checker.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from proctor.errors import PackageError
from proctor.submission.truncate import truncate_tree

PERF_FILES = ("mlperf_log_detail.txt", "mlperf_log_summary.txt")
ACC_FILES = ("mlperf_log_detail.txt", "mlperf_log_accuracy.json", "accuracy.txt")
SIDE_FILES = ("measurements.json", "README.md", "user.conf", "mlperf.conf")
DIVISIONS = ("closed", "network", "open")


@dataclass(slots=True)
class PackagedRow:
    benchmark: str
    scenario: str
    parts: list[str] = field(default_factory=list)


@dataclass(slots=True)
class PackageResult:
    root: Path
    rows: list[PackagedRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _copy(src: Path, dst: Path, names: tuple[str, ...], what: str) -> None:
    dst.mkdir(parents=True, exist_ok=True)
    for name in names:
        if not (src / name).is_file():
            raise PackageError(f"{src / name}: missing; the {what} run must be a complete LoadGen output")
        shutil.copy(src / name, dst / name)


def _side(runs: Path, scen: Path, name: str) -> Path | None:
    for cand in (scen / name, scen.parent / name, runs / name):
        if cand.is_file():
            return cand
    return None


def package(
    runs: Path, output: Path, *, submitter: str, system_json: Path, division: str, version: str
) -> PackageResult:
    if division not in DIVISIONS:
        raise PackageError(f"--division {division!r}: use one of {', '.join(DIVISIONS)}")
    if not runs.is_dir():
        raise PackageError(f"{runs}: not a folder of runs")
    if not system_json.is_file():
        raise PackageError(f"--system {system_json}: not a file; give the system description JSON")
    if output.exists():
        raise PackageError(f"{output}: already exists; give a new folder")
    v5 = version.startswith(("v4", "v5"))
    system = system_json.stem
    sub = output / division / submitter
    result = PackageResult(output)
    scen_dirs = sorted(p for p in runs.glob("*/*") if p.is_dir() and (p / "accuracy").is_dir())
    if not scen_dirs:
        raise PackageError(f"{runs}: no <benchmark>/<scenario>/accuracy run folders found")
    (sub / "systems").mkdir(parents=True)
    shutil.copy(system_json, sub / "systems" / f"{system}.json")
    code = sub / ("code" if v5 else "src")
    code.mkdir()
    readme = _side(runs, runs, "README.md")
    (code / "README.md").write_text(readme.read_text() if readme else "Produced with proctor.\n")
    for scen in scen_dirs:
        bench, name = scen.parent.name, scen.name
        row = PackagedRow(bench, name)
        res = sub / "results" / system / bench / name
        perf = (
            scen / "performance" / "run_1"
            if (scen / "performance" / "run_1").is_dir()
            else scen / "performance"
        )
        if perf.is_dir():
            _copy(perf, res / "performance" / "run_1", PERF_FILES, "performance")
            row.parts.append("performance")
        _copy(scen / "accuracy", res / "accuracy", ACC_FILES, "accuracy")
        if (scen / "accuracy" / "mlperf_log_summary.txt").is_file():
            shutil.copy(
                scen / "accuracy" / "mlperf_log_summary.txt", res / "accuracy" / "mlperf_log_summary.txt"
            )
        row.parts.append("accuracy")
        for test in sorted(p for p in scen.glob("TEST0*") if p.is_dir()):
            dst = (sub / "compliance" / system / bench / name / test.name) if v5 else res / test.name
            shutil.copytree(test, dst, ignore=shutil.ignore_patterns("mlperf_log_samples.bin"))  # proctor's own
            row.parts.append(test.name)
        meas = sub / "measurements" / system / bench / name if v5 else res
        meas.mkdir(parents=True, exist_ok=True)
        for side in SIDE_FILES:
            src = _side(runs, scen, side)
            if src is None:
                if side != "mlperf.conf":
                    result.notes.append(f"{bench}/{name}: no {side} in the runs; the checker will ask for it")
                continue
            target = meas / (f"{system}.json" if v5 and side == "measurements.json" else side)
            shutil.copy(src, target)
            row.parts.append(side)
        result.rows.append(row)
    rep = truncate_tree(output, submitter)
    result.notes += [f"{p}: {why}" for p, why in rep.problems]
    return result
