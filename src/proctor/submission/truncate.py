"""Accuracy-log truncation, as the official `tools/submission/truncate_accuracy_log.py` does it.

A submitted `mlperf_log_accuracy.json` may be at most MAX_ACCURACY_LOG_SIZE bytes (the official
checker refuses a larger one; the limit, the truncated form and the hash line are stated once in
`proctor.submission_files`, which the checker reads too). The official tool appends `hash=<sha256 of the full log>` to the
`accuracy.txt` beside it and keeps the first and last VIEWABLE_SIZE characters of the log with
TRUNCATION_MARK between them. It walks `<division>/<submitter>/results/<system>/<benchmark>/
<scenario>/` (the result's `accuracy/` and the `accuracy/` of each audit whose record names its
truncation, audits/specs.py: TEST01, TEST07, TEST09),
either on a copy of the tree (`output`) or in place after saving each original (`backup`).

proctor writes the same bytes. It works on bytes, not decoded text: a log with non-ASCII or CRLF
would make the official tool crash or change newlines (docs/deviations.md, "truncate-accuracy").
The tree is someone else's: nothing is followed through a link, the copy keeps only links inside a
submitter's code, and every write replaces a file rather than writing through it (proctor.trees;
docs/deviations.md, "Issue 30: untrusted trees").
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path

from proctor.audits.specs import Truncation, spec_of
from proctor.errors import TruncateError
from proctor.submission_files import (
    CODE_FOLDERS,
    MAX_ACCURACY_LOG_SIZE,
    TRUNCATION_MARK,
    VIEWABLE_SIZE,
    hash_lines,
    truncate_bytes,
)
from proctor.trees import (
    DIR,
    FILE,
    MISSING,
    Budget,
    check_tree,
    copy_file,
    copy_tree,
    kind,
    make_dir,
    make_dirs,
    new_folder,
    not_a_file,
    open_file,
    read_bytes,
    real_root,
    replace,
    show,
)
from proctor.typed_records import field, record

DIVISIONS = ("closed", "open", "network")


def file_hash(path: Path) -> str:
    """sha256 of the file's bytes, hex, as the official tool writes it (read without following a link)."""
    h = hashlib.sha256()
    with os.fdopen(open_file(path), "rb") as fh:
        for block in iter(lambda: fh.read(1 << 16), b""):
            h.update(block)
    return h.hexdigest()


def truncated_file(path: Path) -> bytes:
    """truncate_bytes of the file's bytes, reading only its head and tail (a log may be gigabytes)."""
    with os.fdopen(open_file(path), "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size <= 2 * VIEWABLE_SIZE:
            return truncate_bytes(fh.read(2 * VIEWABLE_SIZE + 1))
        head = fh.read(VIEWABLE_SIZE)
        fh.seek(size - VIEWABLE_SIZE)
        return head + TRUNCATION_MARK + fh.read(VIEWABLE_SIZE)


@record(slots=True)
class TruncateReport:
    truncated: list[Path] = field(default_factory=list)
    skipped: list[tuple[Path, str]] = field(default_factory=list)  # (folder, why): as the official logs it
    problems: list[tuple[Path, str]] = field(default_factory=list)  # errors the official logs and moves past


def _dirs(path: Path) -> list[Path]:
    """The sub-folders of `path`, in name order; a link is never one (`trees.kind`)."""
    try:
        return sorted(p for p in path.iterdir() if kind(p) == DIR)
    except OSError:
        return []


def _is_endpoints(scenario_dir: Path) -> bool:
    return any(kind(scenario_dir / n) != MISSING for n in ("config.yaml", "config.yml"))


def submitter_folders(root: Path, submitter: str) -> tuple[list[Path], list[str]]:
    """(the <division>/<submitter> folders of `submitter` under `root`, every submitter name seen there)."""
    found: list[Path] = []
    names: set[str] = set()
    for division in _dirs(root):
        if division.name not in DIVISIONS:
            continue
        for sub in _dirs(division):
            names.add(sub.name)
            if sub.name == submitter:
                found.append(sub)
    return found, sorted(names)


def _targets(root: Path, submitter: str | None, skip: Iterable[str]) -> Iterable[tuple[Path, str | None]]:
    """(folder holding accuracy/, audit name or None) in the order the official walk visits them."""
    skip = set(skip)
    for division in _dirs(root):
        if division.name not in DIVISIONS:
            continue
        for sub in _dirs(division):
            if submitter and sub.name != submitter:
                continue
            for system in _dirs(sub / "results"):
                for model in _dirs(system):
                    for scenario in _dirs(model):
                        if scenario.name in skip:
                            continue
                        for test in _dirs(scenario):
                            if test.name.startswith("TEST"):
                                spec = spec_of(test.name)
                                if spec is not None and spec.truncation is not None:
                                    yield test, test.name
                            else:
                                yield scenario, None


def _truncation(test: str) -> Truncation | None:
    spec = spec_of(test)
    return spec.truncation if spec is not None else None


MAX_ACCURACY_TXT = 16 << 20  # an accuracy script prints a few lines; a larger accuracy.txt is not one


def check_submitter_trees(root: Path, submitter: str | None) -> None:
    """Refuse (TreeError naming the path) before anything is written: a link out of a submitter's
    folder, a link outside its code, a loop, a FIFO, a device, or a tree past proctor's bounds."""
    for division in _dirs(root):
        if division.name not in DIVISIONS:
            continue
        for sub in _dirs(division):
            if not submitter or sub.name == submitter:
                check_tree(sub, links_ok_under=CODE_FOLDERS)


def truncate_tree(
    root: Path,
    submitter: str | None,
    backup: Path | None = None,
    scenarios_to_skip: Iterable[str] = (),
    log: Callable[[str], None] | None = None,
) -> TruncateReport:
    """Truncate every accuracy log under `root` in place (originals saved under `backup` first).

    The submitter folders are checked first (`check_submitter_trees`: TreeError, nothing written);
    a file is replaced by a new one, never written through a link; the backup goes into new files
    under `backup`."""
    root = real_root(root)
    check_submitter_trees(root, submitter)
    report = TruncateReport()
    say = log or (lambda _m: None)
    for name, test in _targets(root, submitter, scenarios_to_skip):
        acc_dir = name / "accuracy"
        acc_log = acc_dir / "mlperf_log_accuracy.json"
        acc_txt = acc_dir / "accuracy.txt"
        log_kind = kind(acc_log)
        if log_kind != FILE:
            if log_kind == MISSING and _is_endpoints(name):
                report.skipped.append((name, "an endpoints submission; nothing to truncate"))
            else:
                report.problems.append((acc_log, not_a_file(acc_log, log_kind)))
            continue
        hash_val: str | None = None
        old_txt = b""
        fresh_txt = test is not None and _truncation(test) is Truncation.NEW  # no accuracy script ran on it
        if not fresh_txt:
            txt_kind = kind(acc_txt)
            if txt_kind != FILE:
                report.problems.append(
                    (acc_txt, "missing; run the accuracy script to write it, then truncate")
                    if txt_kind == MISSING
                    else (acc_txt, not_a_file(acc_txt, txt_kind))
                )
                continue
            old_txt = read_bytes(acc_txt, MAX_ACCURACY_TXT + 1)
            if len(old_txt) > MAX_ACCURACY_TXT:
                report.problems.append((acc_txt, f"larger than {MAX_ACCURACY_TXT} bytes: not an accuracy script's output"))
                continue
            found = hash_lines(old_txt.decode("utf-8", "replace"))
            hash_val = found[0] if found else None
        if hash_val and os.lstat(acc_log).st_size < MAX_ACCURACY_LOG_SIZE:
            report.skipped.append((acc_dir, "already has a hash and its log is truncated"))
            continue
        if backup is not None:
            dst = backup / name.relative_to(root) / "accuracy" / "mlperf_log_accuracy.json"
            if os.path.lexists(dst):
                report.problems.append((acc_log, f"not processed: the backup {show(dst)} already exists"))
                continue
            backup.mkdir(parents=True, exist_ok=True)  # the user's folder, made as named
            backup = real_root(backup)
            dst = backup / name.relative_to(root) / "accuracy" / "mlperf_log_accuracy.json"
            make_dirs(dst.parent, backup)
            copy_file(acc_log, dst)
        digest = file_hash(acc_log)
        if fresh_txt:
            replace(acc_txt, f"hash={digest}\n".encode())
        else:
            replace(acc_txt, old_txt + f"\nhash={digest}\n".encode())
        replace(acc_log, truncated_file(acc_log))
        report.truncated.append(acc_log)
        say(f"{acc_log} truncated")
    return report


def copy_submission(src: Path, dst: Path, submitter: str | None) -> Path:
    """Copy the <division>/<submitter> folders of `src` to a new `dst` (the official --output mode);
    the copy's root. Nothing is written when a submitter's tree is refused (`check_submitter_trees`)."""
    src = real_root(src)
    if os.path.lexists(dst):
        raise TruncateError(f"{show(dst)}: the output folder already exists; give a new one")
    if os.path.realpath(dst).startswith(os.path.realpath(src).rstrip(os.sep) + os.sep):
        raise TruncateError(f"--output {show(dst)}: inside --input {show(src)}; give a folder outside it")
    check_submitter_trees(src, submitter)
    out = new_folder(dst, "--output")
    budget = Budget()
    try:
        for division in _dirs(src):
            if division.name not in DIVISIONS:
                continue
            for sub in _dirs(division):
                if submitter and sub.name != submitter:
                    continue
                if kind(out / division.name) == MISSING:
                    make_dir(out / division.name)
                copy_tree(sub, out / division.name / sub.name, links_ok_under=CODE_FOLDERS, budget=budget)
    except BaseException:
        shutil.rmtree(out, ignore_errors=True)  # proctor's own new folder: nothing half-copied stays
        raise
    return out
