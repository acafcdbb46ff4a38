"""`proctor submission package`: an official-layout submission tree from a folder of proctor runs.

RUNS: `<benchmark>/<scenario>/{performance[/run_1],accuracy}` (the folders `proctor run -o` wrote;
accuracy/ with the accuracy.txt an accuracy run writes), optional `<benchmark>/<scenario>/TEST0x/`
audit folders, and `user.conf`, `mlperf.conf`, `measurements.json`, `README.md` per scenario or at
the top of RUNS. RUNS may also be what `proctor audit -o OUT` wrote (`OUT/results/<system>/<benchmark>/
<scenario>/...`), and `audits` adds the TEST0x folders of other `proctor audit -o` outputs to the rows
of the same benchmark and scenario. An accuracy folder of proctor's own workload (digits) without
accuracy.txt is scored here (its TEST01 audit's too); any other needs its accuracy script's output.
The round's `Layout` decides where things go: v6.x keeps audits and measurements in the result's folder, up to v5.1
they go under `compliance/` and `measurements/`. The accuracy logs are then truncated with their
hashes (`truncate.py`), so the tree is ready for the official checker.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path, PurePath

import orjson

from proctor.errors import PackageError, TreeError
from proctor.loadgen.logs.verdict import VERDICT_FILE
from proctor.loadgen.output_lock import LOCK_NAME, owned
from proctor.rules.inference_rounds import round_table
from proctor.rules.rounds import Layout
from proctor.submission.describe import SYSTEM_FILE
from proctor.submission.truncate import truncate_tree
from proctor.trees import (
    DIR,
    FILE,
    MISSING,
    SAFE_NAME,
    Budget,
    copy_file,
    copy_tree,
    kind,
    make_dirs,
    new_folder,
    not_a_file,
    read_bytes,
    real_root,
    safe_name,
    show,
    write_new,
)
from proctor.typed_records import field, record

PERF_FILES = ("mlperf_log_detail.txt", "mlperf_log_summary.txt")
ACC_FILES = ("mlperf_log_detail.txt", "mlperf_log_accuracy.json", "accuracy.txt")
SIDE_FILES = ("measurements.json", "README.md", "user.conf", "mlperf.conf")
DIVISIONS = ("closed", "network", "open")
# proctor's own files, left out of audit copies (the lock a killed run may leave: loadgen.output_lock)
PROCTOR_FILES = ("mlperf_log_samples.bin", "report.html", VERDICT_FILE, LOCK_NAME)
MAX_SIDE_FILE = 1 << 20  # a README or system description; read no more

__all__ = ["DIVISIONS", "SAFE_NAME", "PackageResult", "PackagedRow", "audit_folders", "package", "system_name_of"]


@record(slots=True)
class PackagedRow:
    benchmark: str
    scenario: str
    parts: list[str] = field(default_factory=list)


@record(slots=True)
class PackageResult:
    root: Path
    rows: list[PackagedRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _proctor_only(rel: PurePath) -> bool:
    return rel.name in PROCTOR_FILES


class _Writer:
    """Every file `package` writes, under its new output folder and within one copy budget."""

    def __init__(self, top: Path) -> None:
        self.top = top
        self.budget = Budget()

    def folder(self, path: Path) -> Path:
        make_dirs(path, self.top)
        return path

    def copy(self, src: Path, dst: Path) -> None:
        self.folder(dst.parent)
        copy_file(src, dst, self.budget)

    def tree(self, src: Path, dst: Path) -> None:
        self.folder(dst.parent)
        copy_tree(src, dst, skip=_proctor_only, budget=self.budget)


def _copy(w: _Writer, src: Path, dst: Path, names: tuple[str, ...], what: str) -> None:
    w.folder(dst)
    for name in names:
        got = kind(src / name)
        if got != FILE:
            if got == MISSING and name == "accuracy.txt":
                raise PackageError(
                    f"{show(src / name)}: missing; `proctor run --mode AccuracyOnly` writes it where proctor can "
                    "score the run, else add --accuracy-script CMD (the benchmark's accuracy script)"
                )
            if got == MISSING:
                raise PackageError(f"{show(src / name)}: missing; the {what} run must be a complete LoadGen output")
            raise PackageError(f"{show(src / name)}: {not_a_file(src / name, got)}")
        w.copy(src / name, dst / name)


PROCTOR_SCORED = ("digits",)  # benchmarks whose accuracy logs proctor scores itself


def _score_missing(acc: Path, bench: str) -> str | None:
    """Write accuracy.txt for an accuracy folder of proctor's own workload that lacks one."""
    log, txt = acc / "mlperf_log_accuracy.json", acc / "accuracy.txt"
    if bench not in PROCTOR_SCORED or kind(txt) != MISSING or kind(log) != FILE:
        return None
    from proctor.workloads.digits.accuracy import evaluate

    write_new(txt, (evaluate(log).line() + "\n").encode())
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
    """The nearest `name` (scenario, benchmark, RUNS: never above RUNS); a link or FIFO there is
    refused, not skipped."""
    cands = (scen / name, scen.parent / name, runs / name) if scen != runs else (runs / name,)
    for cand in cands:
        got = kind(cand)
        if got == FILE:
            return cand
        if got != MISSING:
            raise PackageError(f"{show(cand)}: {not_a_file(cand, got)}")
    return None


def system_name_of(path: Path) -> str:
    """RUNS/system.json (as `submission init` writes it) names its system in `system_name`: the
    folder name under systems/ and results/, checked to be one safe path component."""
    try:
        data = read_bytes(path, MAX_SIDE_FILE)
        name = orjson.loads(data).get("system_name") if data else None
    except (OSError, TreeError, orjson.JSONDecodeError, AttributeError) as exc:
        raise PackageError(f"{show(path)}: not a system description JSON ({exc}); fix it or give --system FILE") from exc
    if not isinstance(name, str) or not SAFE_NAME.fullmatch(name):
        raise PackageError(
            f"{show(path)}: system_name {show(repr(name))} must be a folder name (letters, digits, '.', '_', '-', "
            "starting with a letter or digit); fix it"
        )
    return name


def _names(bench: str, scenario: str, where: Path) -> None:
    """A benchmark or scenario folder name of RUNS becomes a folder of the tree: one safe name."""
    for name in (bench, scenario):
        try:
            safe_name(name, f"{show(where)}: the folder name")
        except TreeError as exc:
            raise PackageError(str(exc)) from None


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
    """The tree at `output` (a new folder; removed again when packaging stops with an error)."""
    if division not in DIVISIONS:
        raise PackageError(f"--division {division!r}: use one of {', '.join(DIVISIONS)}")
    try:
        safe_name(submitter, "--submitter")
    except TreeError as exc:
        raise PackageError(str(exc)) from None
    if not runs.is_dir():
        raise PackageError(f"{show(runs)}: not a folder of runs")
    runs = real_root(runs)
    init = f"or `proctor submission init {runs} --submitter NAME` writes one for this machine"
    named = system_json  # --system FILE names the system by its file name (systems/<name>.json)
    if system_json is None:
        system_json = runs / SYSTEM_FILE
        got = kind(system_json)
        if got == MISSING:
            raise PackageError(f"--system not given and no {show(system_json)}: give --system FILE, {init}")
        if got != FILE:
            raise PackageError(f"{show(system_json)}: {not_a_file(system_json, got)}")
    elif not system_json.is_file():
        raise PackageError(f"--system {show(system_json)}: not a file; give the system description JSON, {init}")
    else:
        system_json = real_root(system_json)
    if os.path.lexists(output):
        raise PackageError(f"{show(output)}: already exists; give a new folder")
    extra: dict[tuple[str, str], list[Path]] = {}
    for folder in audits:
        got_audits = audit_folders(real_root(folder)) if folder.is_dir() else {}
        if not got_audits:
            raise PackageError(
                f"--audits {show(folder)}: no TEST0x folders under results/<system>/<benchmark>/<scenario>/ "
                "(give the folder `proctor audit -o` wrote)"
            )
        for key, tests in got_audits.items():
            extra.setdefault(key, []).extend(tests)
    try:
        layout = round_table(version).layout
    except ValueError as exc:
        raise PackageError(f"--round {exc}") from None
    if named is not None:
        try:
            system = safe_name(
                named.stem,
                f"--system {show(named)}: the file's name (systems/<name>.json, results/<name>/)",
            )
        except TreeError as exc:
            raise PackageError(str(exc)) from None
    else:
        system = system_name_of(system_json)
    scen_dirs = _scenario_dirs(runs)
    if not scen_dirs:
        raise PackageError(
            f"{show(runs)}: no <benchmark>/<scenario>/accuracy run folders found (e.g. `proctor run --mode "
            f"AccuracyOnly -o {runs}/digits/Offline/accuracy`)"
        )
    for scen in scen_dirs:
        _names(scen.parent.name, scen.name, scen)
    for (bench, name), tests in extra.items():
        _names(bench, name, tests[0])
    try:
        top = new_folder(output, "-o")
    except TreeError as exc:
        raise PackageError(str(exc)) from None
    try:
        with owned(top, "proctor submission package"):  # no run or package writes into it meanwhile
            return _package(runs, top, submitter, system, system_json, division, layout, scen_dirs, extra)
    except BaseException:
        shutil.rmtree(top, ignore_errors=True)  # proctor's own new folder: no half-made tree stays
        raise


def _package(
    runs: Path,
    top: Path,
    submitter: str,
    system: str,
    system_json: Path,
    division: str,
    layout: Layout,
    scen_dirs: list[Path],
    extra: dict[tuple[str, str], list[Path]],
) -> PackageResult:
    w = _Writer(top)
    sub = top / division / submitter
    result = PackageResult(top)
    rows = {(p.parent.name, p.name) for p in scen_dirs}
    for bench, name in sorted(set(extra) - rows):
        result.notes.append(f"--audits: {bench}/{name} has audit folders but no runs in {runs}; left out")
    try:
        w.copy(system_json, sub / "systems" / f"{system}.json")
        code = w.folder(sub / layout.code_folder)
        readme = _side(runs, runs, "README.md")
        write_new(code / "README.md", read_bytes(readme, MAX_SIDE_FILE) if readme else b"Produced with proctor.\n")
        for scen in scen_dirs:
            result.rows.append(_package_row(w, runs, scen, sub, system, layout, extra, result))
    except TreeError as exc:
        raise PackageError(str(exc)) from None
    rep = truncate_tree(top, submitter)
    result.notes += [f"{p}: {why}" for p, why in rep.problems]
    return result


def _package_row(
    w: _Writer,
    runs: Path,
    scen: Path,
    sub: Path,
    system: str,
    layout: Layout,
    extra: dict[tuple[str, str], list[Path]],
    result: PackageResult,
) -> PackagedRow:
    bench, name = scen.parent.name, scen.name
    row = PackagedRow(bench, name)
    res = sub / "results" / system / bench / name
    perf = scen / "performance" / "run_1" if kind(scen / "performance" / "run_1") == DIR else scen / "performance"
    if kind(perf) == DIR:
        _copy(w, perf, res / "performance" / "run_1", PERF_FILES, "performance")
        row.parts.append("performance")
    acc_files: tuple[str, ...] = ACC_FILES
    if bench in PROCTOR_SCORED and kind(scen / "accuracy" / "accuracy.txt") == MISSING:
        acc_files = tuple(n for n in ACC_FILES if n != "accuracy.txt")  # scored in the copy below
    _copy(w, scen / "accuracy", res / "accuracy", acc_files, "accuracy")
    note = _score_missing(res / "accuracy", bench)
    result.notes += [note] if note else []
    if kind(scen / "accuracy" / "mlperf_log_summary.txt") == FILE:
        w.copy(scen / "accuracy" / "mlperf_log_summary.txt", res / "accuracy" / "mlperf_log_summary.txt")
    row.parts.append("accuracy")
    audit_dirs = {p.name: p for p in sorted(scen.glob("TEST0*")) if p.is_dir()}
    for test in extra.get((bench, name), []):
        if test.name in audit_dirs:
            raise PackageError(
                f"--audits {show(test)}: {bench}/{name} already has a {test.name} in {show(audit_dirs[test.name])}"
            )
        audit_dirs[test.name] = test
    for tname, test in sorted(audit_dirs.items()):
        safe_name(tname, f"{show(test)}: the audit folder name")
        dst = layout.audit_dir(sub, system, bench, name, tname)
        w.tree(test, dst)  # proctor's own files left out: the checker flags unknown files
        if kind(dst / "accuracy") == DIR:  # TEST01: the accuracy script's output on its log
            note = _score_missing(dst / "accuracy", bench)
            result.notes += [note] if note else []
        row.parts.append(tname)
    meas = w.folder(layout.measurements_dir(sub, system, bench, name))
    for side in SIDE_FILES:
        src = _side(runs, scen, side)
        if src is None:
            if side != "mlperf.conf":
                result.notes.append(f"{bench}/{name}: no {side} in the runs; the checker will ask for it")
            continue
        w.copy(src, meas / (layout.measurements_name(system) if side == "measurements.json" else side))
        row.parts.append(side)
    return row
