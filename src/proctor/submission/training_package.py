"""A training submission package from proctor's runs: `proctor training init` and `training package`.

`init` writes RUNS/system.json: this machine's description (`describe.py`, the one
`proctor submission init` writes for inference) in the training form: the fields the training
system description checker requires (`rules/training/package.py`), every value as text as the
published training descriptions hold them (the official checker joins the core and accelerator
counts as strings and fails on a number), the status one of the training values.

`package` copies RUNS/<benchmark>/result_*.txt (as `proctor training train -o RUNS/<benchmark>`
writes them) into the official layout: `systems/<system>.json`, `results/<system>/<benchmark>/
result_*.txt` and `benchmarks/<benchmark>/` for the code. That folder is what `check-package`,
`summarize` and the official package checker take.

RUNS is hostile input: nothing outside it is read (a linked benchmark folder or result file is
refused, not followed), only regular files are copied, every name is one safe path component, and
the package is written to a new folder.
"""

from __future__ import annotations

import shutil
import stat
from pathlib import Path
from typing import Any

from proctor.errors import PackageError
from proctor.rules.training import package as layout
from proctor.submission.describe import SYSTEM_FILE, this_machine, write_json
from proctor.submission.package import SAFE_NAME, system_name_of
from proctor.training.package import read_system
from proctor.training.runs import result_files
from proctor.typed_records import field, record

README = "README.md"


def training_status(text: str) -> str | None:
    """The training status value `text` names (a short name or the value itself); None: none."""
    if text in layout.SYSTEM_STATUS_VALUES:
        return text
    return layout.STATUS_ALIASES.get(text.strip().lower())


def system_template(
    *, submitter: str, system_name: str, division: str, status: str, framework: str
) -> dict[str, str]:
    """This machine's description with the fields the training checkers require, each as text."""
    desc = this_machine(
        submitter=submitter, system_name=system_name, division=division, status=status, framework=framework
    )
    return {k: _text(desc.get(k, "")) for k in layout.SYSTEM_REQUIRED_FIELDS}


def _text(v: Any) -> str:
    return v if isinstance(v, str) else str(v)


def write_system_template(runs: Path, **fields: str) -> Path | None:
    """RUNS/system.json where it does not exist yet (never overwritten); the path, None when it exists."""
    path = runs / SYSTEM_FILE
    if path.exists() or path.is_symlink():
        return None
    write_json(path, system_template(**fields))
    return path


@record(slots=True)
class PackagedBenchmark:
    name: str
    runs: list[str]
    readme: str  # where benchmarks/<name>/README.md came from ("" when it is a placeholder)


@record(slots=True)
class Packaged:
    root: Path
    system: str
    division: str
    benchmarks: list[PackagedBenchmark] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _regular(path: Path) -> bool:
    """A regular file that is not a link (a link could lead outside RUNS)."""
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


def _benchmark_dirs(runs: Path) -> list[Path]:
    """RUNS/<benchmark> folders holding result_*.txt; a linked folder or log is an error."""
    try:
        entries = sorted(runs.iterdir())
    except OSError as exc:
        raise PackageError(f"{runs}: cannot be listed: {exc.strerror or exc}") from exc
    found: list[Path] = []
    for d in entries:
        if d.name.startswith("."):
            continue
        if d.is_symlink():
            if d.is_dir() and result_files(d):
                raise PackageError(f"{d}: a link to a folder; put the runs themselves in {runs}, not a link")
            continue
        if not d.is_dir():
            continue
        named = sorted(d.glob("result_*.txt"))  # links, FIFOs and folders too: each is refused
        if not named:
            continue
        if not SAFE_NAME.fullmatch(d.name):
            raise PackageError(f"{d}: a benchmark folder name is letters, digits, '.', '_', '-'; rename it")
        for log in named:
            if not _regular(log):
                raise PackageError(f"{log}: not a regular file (a link?); put the log itself in {d}")
        found.append(d)
    return found


def _system(runs: Path, system_json: Path | None) -> tuple[Path, str, str]:
    """The system description to package: its path, system name and division."""
    init = f"`proctor training init {runs} --submitter NAME` writes one for this machine"
    path = system_json if system_json is not None else runs / SYSTEM_FILE
    if not path.exists():
        opt = "--system FILE" if system_json is not None else f"--system not given and no {path}"
        raise PackageError(f"{opt}: give the system description JSON, or {init}")
    if not path.is_file() or (system_json is None and path.is_symlink()):
        raise PackageError(f"{path}: not a regular file; give the system description JSON, or {init}")
    desc, errors = read_system(path)
    if desc is None:
        raise PackageError(f"{path}: {errors[0].message}; fix it, or {init}")
    name = system_name_of(path)
    division = desc.get("division")
    if division not in layout.DIVISIONS:
        raise PackageError(
            f"{path}: division {str(division)[:40]!r} must be one of {', '.join(layout.DIVISIONS)}; fix it"
        )
    return path, name, str(division)


def package_runs(runs: Path, output: Path, *, system_json: Path | None = None) -> Packaged:
    """Write the package of RUNS's benchmark folders to `output` (a new folder)."""
    if not runs.is_dir():
        raise PackageError(f"{runs}: not a folder of runs; give the folder `training init` and `train -o` wrote")
    sys_path, system, division = _system(runs, system_json)
    if output.exists() or output.is_symlink():
        raise PackageError(f"{output}: already exists; give a new folder for -o/--output")
    benches = _benchmark_dirs(runs)
    if not benches:
        raise PackageError(
            f"{runs}: no <benchmark>/result_*.txt (e.g. `proctor training train -o {runs}/digits_train`)"
        )
    out = Packaged(output, system, division)
    (output / "systems").mkdir(parents=True)
    shutil.copyfile(sys_path, output / "systems" / f"{system}.json")
    for bdir in benches:
        dst = output / "results" / system / bdir.name
        dst.mkdir(parents=True)
        logs = result_files(bdir)
        for log in logs:
            shutil.copyfile(log, dst / log.name)
        code = output / "benchmarks" / bdir.name
        code.mkdir(parents=True)
        readme = next((p for p in (bdir / README, runs / README) if _regular(p)), None)
        if readme is not None:
            shutil.copyfile(readme, code / README)
        else:
            (code / README).write_text(
                f"The implementation that produced results/{system}/{bdir.name}/ and how to run it.\n",
                encoding="utf-8",
            )
            out.notes.append(
                f"benchmarks/{bdir.name}/{README} is a placeholder: put the benchmark's code there "
                f"(or a {README} in {bdir} or {runs} before packaging)"
            )
        out.benchmarks.append(
            PackagedBenchmark(bdir.name, [p.name for p in logs], str(readme) if readme else "")
        )
    return out


__all__ = [
    "Packaged",
    "PackagedBenchmark",
    "package_runs",
    "system_template",
    "training_status",
    "write_system_template",
]
