"""`proctor submission package`: an official-layout submission tree from a folder of proctor runs.

RUNS: `<benchmark>/<scenario>/{performance[/run_1],accuracy}` (the folders `proctor run -o` wrote;
accuracy/ with the accuracy.txt an accuracy run writes), optional `<benchmark>/<scenario>/TEST0x/`
audit folders, and `user.conf`, `mlperf.conf`, `measurements.json`, `README.md` per scenario or at
the top of RUNS. RUNS may also be what `proctor audit -o OUT` wrote (`OUT/results/<system>/<benchmark>/
<scenario>/...`), and `audits` adds the TEST0x folders of other `proctor audit -o` outputs to the rows
of the same benchmark and scenario. An accuracy folder of proctor's own workload (digits) without
accuracy.txt is scored here (its TEST01 audit's too); any other needs its accuracy script's output.
The round decides the layout: v6.x keeps audits and measurements in the result's folder, up to v5.1
they go under `compliance/` and `measurements/`. The accuracy logs are then truncated with their
hashes (`truncate.py`), so the tree is ready for the official checker.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from proctor.errors import PackageError
from proctor.loadgen.output_lock import LOCK_NAME, owned
from proctor.submission.describe import SYSTEM_FILE
from proctor.submission.truncate import truncate_tree

PERF_FILES = ("mlperf_log_detail.txt", "mlperf_log_summary.txt")
ACC_FILES = ("mlperf_log_detail.txt", "mlperf_log_accuracy.json", "accuracy.txt")
SIDE_FILES = ("measurements.json", "README.md", "user.conf", "mlperf.conf")
DIVISIONS = ("closed", "network", "open")

SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
# proctor's own files (the lock a killed run may leave, output_lock)
PROCTOR_ONLY = shutil.ignore_patterns("mlperf_log_samples.bin", "report.html", LOCK_NAME)


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
            if name == "accuracy.txt":
                raise PackageError(
                    f"{src / name}: missing; `proctor run --mode AccuracyOnly` writes it where proctor can "
                    "score the run, else add --accuracy-script CMD (the benchmark's accuracy script)"
                )
            raise PackageError(f"{src / name}: missing; the {what} run must be a complete LoadGen output")
        shutil.copy(src / name, dst / name)


PROCTOR_SCORED = ("digits",)  # benchmarks whose accuracy logs proctor scores itself


def _score_missing(acc: Path, bench: str) -> str | None:
    """Write accuracy.txt for an accuracy folder of proctor's own workload that lacks one."""
    log, txt = acc / "mlperf_log_accuracy.json", acc / "accuracy.txt"
    if bench not in PROCTOR_SCORED or txt.exists() or not log.is_file():
        return None
    from proctor.workloads.digits.accuracy import evaluate

    txt.write_text(evaluate(log).line() + "\n")
    return f"{acc}: accuracy.txt written by proctor's {bench} accuracy script"


def _scenario_dirs(runs: Path) -> list[Path]:
    """`<benchmark>/<scenario>` folders with an accuracy run: at the top of RUNS, or under the
    `results/<system>/` of a `proctor audit -o` output."""
    for pattern in ("*/*", "results/*/*/*"):
        found = sorted(p for p in runs.glob(pattern) if p.is_dir() and (p / "accuracy").is_dir())
        if found:
            return found
    return []


def audit_folders(folder: Path) -> dict[tuple[str, str], list[Path]]:
    """(benchmark, scenario) -> its TEST0x folders in a `proctor audit -o` output (either layout)."""
    found: dict[tuple[str, str], list[Path]] = {}
    for pattern in ("results/*/*/*/TEST0*", "compliance/*/*/*/TEST0*", "*/*/TEST0*"):
        for test in sorted(folder.glob(pattern)):
            if test.is_dir():
                found.setdefault((test.parent.parent.name, test.parent.name), []).append(test)
        if found:
            break
    return found


def _side(runs: Path, scen: Path, name: str) -> Path | None:
    for cand in (scen / name, scen.parent / name, runs / name):
        if cand.is_file():
            return cand
    return None


def system_name_of(path: Path) -> str:
    """RUNS/system.json (as `submission init` writes it) names its system in `system_name`: the
    folder name under systems/ and results/, checked to be one safe path component."""
    try:
        data = path.read_bytes()[: 1 << 20]
        name = orjson.loads(data).get("system_name") if data else None
    except (OSError, orjson.JSONDecodeError, AttributeError) as exc:
        raise PackageError(f"{path}: not a system description JSON ({exc}); fix it or give --system FILE") from exc
    if not isinstance(name, str) or not SAFE_NAME.fullmatch(name):
        raise PackageError(
            f"{path}: system_name {name!r} must be a folder name (letters, digits, '.', '_', '-'); fix it"
        )
    return name


def package(
    runs: Path,
    output: Path,
    *,
    submitter: str,
    system_json: Path | None,
    division: str,
    version: str,
    audits: Sequence[Path] = (),
) -> PackageResult:
    if division not in DIVISIONS:
        raise PackageError(f"--division {division!r}: use one of {', '.join(DIVISIONS)}")
    if not runs.is_dir():
        raise PackageError(f"{runs}: not a folder of runs")
    init = f"or `proctor submission init {runs} --submitter NAME` writes one for this machine"
    named = system_json  # --system FILE names the system by its file name (systems/<name>.json)
    if system_json is None:
        system_json = runs / SYSTEM_FILE
        if not system_json.is_file():
            raise PackageError(f"--system not given and no {system_json}: give --system FILE, {init}")
    if not system_json.is_file():
        raise PackageError(f"--system {system_json}: not a file; give the system description JSON, {init}")
    if output.exists():
        raise PackageError(f"{output}: already exists; give a new folder")
    extra: dict[tuple[str, str], list[Path]] = {}
    for folder in audits:
        got = audit_folders(folder) if folder.is_dir() else {}
        if not got:
            raise PackageError(
                f"--audits {folder}: no TEST0x folders under results/<system>/<benchmark>/<scenario>/ "
                "(give the folder `proctor audit -o` wrote)"
            )
        for key, tests in got.items():
            extra.setdefault(key, []).extend(tests)
    v5 = version.startswith(("v4", "v5"))
    system = system_json.stem if named is not None else system_name_of(system_json)
    sub = output / division / submitter
    result = PackageResult(output)
    scen_dirs = _scenario_dirs(runs)
    if not scen_dirs:
        raise PackageError(
            f"{runs}: no <benchmark>/<scenario>/accuracy run folders found (e.g. `proctor run --mode "
            f"AccuracyOnly -o {runs}/digits/Offline/accuracy`)"
        )
    rows = {(p.parent.name, p.name) for p in scen_dirs}
    for bench, name in sorted(set(extra) - rows):
        result.notes.append(f"--audits: {bench}/{name} has audit folders but no runs in {runs}; left out")
    try:  # made here, once: a second packaging into it finds it there
        output.mkdir(parents=True)
    except FileExistsError:
        raise PackageError(f"{output}: already exists; give a new folder") from None
    with owned(output, "proctor submission package"):  # no run or package writes into it meanwhile
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
            acc_files: tuple[str, ...] = ACC_FILES
            if bench in PROCTOR_SCORED and not (scen / "accuracy" / "accuracy.txt").exists():
                acc_files = tuple(n for n in ACC_FILES if n != "accuracy.txt")  # scored in the copy below
            _copy(scen / "accuracy", res / "accuracy", acc_files, "accuracy")
            note = _score_missing(res / "accuracy", bench)
            result.notes += [note] if note else []
            if (scen / "accuracy" / "mlperf_log_summary.txt").is_file():
                shutil.copy(
                    scen / "accuracy" / "mlperf_log_summary.txt", res / "accuracy" / "mlperf_log_summary.txt"
                )
            row.parts.append("accuracy")
            audit_dirs = {p.name: p for p in sorted(scen.glob("TEST0*")) if p.is_dir()}
            for test in extra.get((bench, name), []):
                if test.name in audit_dirs:
                    raise PackageError(
                        f"--audits {test}: {bench}/{name} already has a {test.name} in {audit_dirs[test.name]}"
                    )
                audit_dirs[test.name] = test
            for tname, test in sorted(audit_dirs.items()):
                dst = (sub / "compliance" / system / bench / name / tname) if v5 else res / tname
                shutil.copytree(test, dst, ignore=PROCTOR_ONLY)  # the checker flags unknown files
                if (dst / "accuracy").is_dir():  # TEST01: the accuracy script's output on its log
                    note = _score_missing(dst / "accuracy", bench)
                    result.notes += [note] if note else []
                row.parts.append(tname)
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
