"""Accuracy-log truncation, as the official `tools/submission/truncate_accuracy_log.py` does it.

A submitted `mlperf_log_accuracy.json` may be at most MAX_ACCURACY_LOG_SIZE bytes (the official
checker refuses a larger one). The official tool appends `hash=<sha256 of the full log>` to the
`accuracy.txt` beside it and keeps the first and last VIEWABLE_SIZE characters of the log with
TRUNCATION_MARK between them. It walks `<division>/<submitter>/results/<system>/<benchmark>/
<scenario>/` (the result's `accuracy/` and, for TEST01/TEST07/TEST09, the audit's `accuracy/`),
either on a copy of the tree (`output`) or in place after saving each original (`backup`).

proctor writes the same bytes. It works on bytes, not decoded text: a log with non-ASCII or CRLF
would make the official tool crash or change newlines (docs/deviations.md, "truncate-accuracy").
"""

from __future__ import annotations

import hashlib
import re
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from proctor.errors import TruncateError
from proctor.text_files import split_lines

MAX_ACCURACY_LOG_SIZE = 10 * 1024  # bytes; the official checker's limit
VIEWABLE_SIZE = 4096  # kept from the head and from the tail
TRUNCATION_MARK = b"\n\n...\n\n"
DIVISIONS = ("closed", "open", "network")
HASH_TESTS = ("TEST01", "TEST07", "TEST09")  # audits whose folder holds an accuracy log
NO_ACCURACY_TXT = ("TEST07", "TEST09")  # the hash goes to a fresh accuracy.txt
_HASH_LINE = re.compile(r"^hash=(\w+)$")  # the official pattern, [\w\d]+
SHA256_HEX = re.compile(r"^[0-9a-f]{64}$")


def file_hash(path: Path) -> str:
    """sha256 of the file's bytes, hex, as the official tool writes it."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 16), b""):
            h.update(block)
    return h.hexdigest()


def hash_lines(text: str) -> list[str]:
    """The values of every `hash=` line of an accuracy.txt, in order (the official reads the first).

    Lines are split as Python's `for line in f` splits them (universal newlines: "\\r\\n", "\\r" and
    "\\n"), so a CRLF file's hash line counts as it does for the official; a value the official
    regex would not take is left out.
    """
    out = []
    for line in split_lines(text):
        m = _HASH_LINE.match(line)
        if m:
            out.append(m.group(1))
    return out


def lf_form(data: bytes) -> bytes:
    """`data` with its line ends made LF (b"\\r\\n" and a lone b"\\r", as universal newlines read
    them): the log LoadGen wrote before a copy converted its line ends (git's autocrlf on Windows).
    LoadGen's JSON never holds a raw CR (a string escapes it), so nothing else changes; the same
    object when there is no CR."""
    if b"\r" not in data:
        return data
    return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")


def truncate_bytes(data: bytes) -> bytes:
    """The truncated log: unchanged below VIEWABLE_SIZE bytes, else head + mark + tail.

    As the official tool, a log of VIEWABLE_SIZE to 2*VIEWABLE_SIZE+7 bytes is rewritten too (and
    grows, its head and tail overlapping).
    """
    if len(data) < VIEWABLE_SIZE:
        return data
    return data[:VIEWABLE_SIZE] + TRUNCATION_MARK + data[len(data) - VIEWABLE_SIZE :]


def is_truncated(data: bytes) -> bool:
    """Whether `data` has the shape truncate_bytes gives a long log."""
    n = VIEWABLE_SIZE
    return len(data) == 2 * n + len(TRUNCATION_MARK) and data[n : n + len(TRUNCATION_MARK)] == TRUNCATION_MARK


@dataclass(slots=True)
class TruncateReport:
    truncated: list[Path] = field(default_factory=list)
    skipped: list[tuple[Path, str]] = field(default_factory=list)  # (folder, why): as the official logs it
    problems: list[tuple[Path, str]] = field(default_factory=list)  # errors the official logs and moves past


def _dirs(path: Path) -> list[Path]:
    try:
        return [p for p in path.iterdir() if p.is_dir()]
    except OSError:
        return []


def _is_endpoints(scenario_dir: Path) -> bool:
    return any((scenario_dir / n).exists() for n in ("config.yaml", "config.yml"))


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
                                if test.name in HASH_TESTS:
                                    yield test, test.name
                            else:
                                yield scenario, None


def truncate_tree(
    root: Path,
    submitter: str | None,
    backup: Path | None = None,
    scenarios_to_skip: Iterable[str] = (),
    log: Callable[[str], None] | None = None,
) -> TruncateReport:
    """Truncate every accuracy log under `root` in place (originals saved under `backup` first)."""
    report = TruncateReport()
    say = log or (lambda _m: None)
    for name, test in _targets(root, submitter, scenarios_to_skip):
        acc_dir = name / "accuracy"
        acc_log = acc_dir / "mlperf_log_accuracy.json"
        acc_txt = acc_dir / "accuracy.txt"
        if not acc_log.exists():
            if _is_endpoints(name):
                report.skipped.append((name, "an endpoints submission; nothing to truncate"))
            else:
                report.problems.append((acc_log, "missing"))
            continue
        hash_val: str | None = None
        if test not in NO_ACCURACY_TXT:
            if not acc_txt.exists():
                report.problems.append(
                    (acc_txt, "missing; run the accuracy script to write it, then truncate")
                )
                continue
            found = hash_lines(acc_txt.read_bytes().decode("utf-8", "replace"))
            hash_val = found[0] if found else None
        if hash_val and acc_log.stat().st_size < MAX_ACCURACY_LOG_SIZE:
            report.skipped.append((acc_dir, "already has a hash and its log is truncated"))
            continue
        if backup is not None:
            dst = backup / name.relative_to(root) / "accuracy" / "mlperf_log_accuracy.json"
            if dst.exists():
                report.problems.append((acc_log, f"not processed: the backup {dst} already exists"))
                continue
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(acc_log, dst)
        digest = file_hash(acc_log)
        if test in NO_ACCURACY_TXT:
            acc_txt.write_bytes(f"hash={digest}\n".encode())
        else:
            with acc_txt.open("ab") as fh:
                fh.write(f"\nhash={digest}\n".encode())
        acc_log.write_bytes(truncate_bytes(acc_log.read_bytes()))
        report.truncated.append(acc_log)
        say(f"{acc_log} truncated")
    return report


def copy_submission(src: Path, dst: Path, submitter: str | None) -> None:
    """Copy the <division>/<submitter> folders of `src` to a new `dst` (the official --output mode)."""
    if dst.exists():
        raise TruncateError(f"{dst}: the output folder already exists; give a new one")
    dst.mkdir(parents=True)
    for division in _dirs(src):
        if division.name not in DIVISIONS:
            continue
        for sub in _dirs(division):
            if submitter and sub.name != submitter:
                continue
            shutil.copytree(sub, dst / division.name / sub.name, symlinks=True)
