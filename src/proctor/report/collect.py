"""Which runs a report covers: the folders given, or the run folders found below them.

A folder holding `mlperf_log_detail.txt` or `mlperf_log_summary.txt` is an inference run; one
holding `result_*.txt` is a training benchmark folder; any other folder is searched (a few levels
down, in name order) so a submission tree or a sweep's parent folder can be given whole.
"""

from __future__ import annotations

import os
from pathlib import Path

from proctor.errors import LogFormatError, ProctorError
from proctor.report.data import InferenceRun, is_run_dir, read_run
from proctor.report.training import TrainingResult, is_training_dir, read_training
from proctor.trees import real_root
from proctor.typed_records import field, record

MAX_DEPTH = 8
MAX_RUNS = 500  # a report of more runs than this is not one a person reads


@record(slots=True)
class Report:
    runs: list[InferenceRun] = field(default_factory=list)
    trainings: list[TrainingResult] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (folder, why)


def find_dirs(root: Path) -> list[Path]:
    """Run and training folders at or below `root`, in path order."""
    if is_run_dir(root) or is_training_dir(root):
        return [root]
    found: list[Path] = []
    base_depth = len(root.parts)
    for dirpath, dirnames, _ in os.walk(root):
        dirnames.sort()
        d = Path(dirpath)
        if len(d.parts) - base_depth >= MAX_DEPTH:
            dirnames.clear()
        if d != root and (is_run_dir(d) or is_training_dir(d)):
            found.append(d)
            if len(found) >= MAX_RUNS:
                break
    return found


def _name(d: Path, root: Path) -> str:
    rel = d.relative_to(root) if d != root else Path(root.name or str(root))
    return str(rel) if str(rel) != "." else (root.resolve().name or str(root))


def build_report(paths: list[Path], *, ruleset: str | None = None, read_trace: bool = True) -> Report:
    """Read every run below `paths`; a folder that cannot be read is listed in `skipped`.

    Raises ProctorError when a path is missing or no run at all is found.
    """
    rep = Report()
    names: set[str] = set()
    for given in paths:
        root = real_root(given)  # links at and above the root are the user's; below it none is followed
        if not root.exists():
            raise LogFormatError("no such file or folder", file=str(root))
        if not root.is_dir():
            raise LogFormatError("not a folder: give a run folder (holding the LoadGen logs) or "
                                 "a training benchmark folder (holding result_*.txt)", file=str(root))
        dirs = find_dirs(root)
        if not dirs:
            raise LogFormatError("no LoadGen logs (mlperf_log_detail.txt / mlperf_log_summary.txt) and no "
                                 "result_*.txt in it or below", file=str(root))
        for d in dirs:
            name = _name(d, root) if len(paths) == 1 or d != root else "/".join(root.resolve().parts[-3:])
            while name in names:
                name += "'"
            names.add(name)
            try:
                if is_run_dir(d):
                    rep.runs.append(read_run(d, name=name, read_trace=read_trace))
                if is_training_dir(d):
                    rep.trainings.append(read_training(d, ruleset=ruleset, name=name))
            except (ProctorError, ValueError) as exc:
                rep.skipped.append((str(d), str(exc)))
    if not rep.runs and not rep.trainings:
        why = rep.skipped[0][1] if rep.skipped else "nothing found"
        raise LogFormatError(f"no readable run: {why}", file=str(paths[0]))
    return rep
