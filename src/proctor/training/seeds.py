"""The seed checker (rules §5 Basics, "From v4.1 onwards, the seeds should be logged").

Every run logs a seed through mllog (so the record carries the source file and line); no two
runs log the same seed on the same line of the same file; more than one seed in a run is a
warning. Like the official checker, a repeated (file, line, seed) even within one file is an
error, a seed that is not an integer is an error, and a file with unreadable lines is an error.
A log that cannot be true (training/plausibility.py: a clock that goes back, run_stop before
run_start, a non-finite quality) is an error here too: its seeds vouch for no real run.
"""

from __future__ import annotations

from pathlib import Path

from proctor.findings import Finding, Severity
from proctor.mllog_lines import BadLine
from proctor.training.logparse import iter_records
from proctor.training.plausibility import LogPlausibility
from proctor.training.runs import stray_result_files
from proctor.trees import is_file, real_root

SOURCE = "§5 Basics: random numbers and seed logging (v4.1 onwards)"


def result_files(directory: str | Path) -> list[Path]:
    """The run logs of one benchmark directory, in the official order (sorted names)."""
    return sorted(p for p in real_root(directory).glob("result_*.txt") if is_file(p))  # no link followed


def check_seeds(directory: str | Path) -> list[Finding]:
    """Seed findings for every `result_*.txt` in `directory` (empty list: all good)."""
    findings: list[Finding] = [  # a link, FIFO or device named result_*.txt: named, never read
        Finding(rule="seeds:not_a_file", message=f.message, path=f.path, source=SOURCE)
        for f in stray_result_files(directory)
    ]
    owners: dict[tuple[str, int, int], str] = {}
    files = result_files(directory)
    if not files:
        return findings + [
            Finding(
                rule="seeds:no_results",
                message=f"no result_*.txt files in {directory}",
                path=str(directory),
                source=SOURCE,
            )
        ]
    for path in files:
        try:
            n = _check_file(path, owners, findings)
        except OSError as exc:  # unreadable: a finding naming the file, the other runs still checked
            findings.append(
                Finding(
                    rule="seeds:unreadable",
                    message=f"{path} cannot be read: {exc.strerror or exc}",
                    path=str(path),
                    source=SOURCE,
                )
            )
            continue
        p = str(path)
        if n == 0:
            findings.append(
                Finding(
                    rule="seeds:missing",
                    message=f"{path.name} logs no seed",
                    path=p,
                    key="seed",
                    expected="at least one seed",
                    source=SOURCE,
                )
            )
        elif n > 1:
            findings.append(
                Finding(
                    rule="seeds:several",
                    message=f"{path.name} logs {n} seeds; one seed per run should be enough",
                    severity=Severity.WARNING,
                    path=p,
                    key="seed",
                    value=n,
                    source=SOURCE,
                )
            )
    return findings


def _check_file(path: Path, owners: dict[tuple[str, int, int], str], findings: list[Finding]) -> int:
    """Add the seed findings of one run to `findings`; the number of seeds it logs."""
    p = str(path)
    n = 0
    plausible = LogPlausibility(p)
    for rec in iter_records(path):
        if isinstance(rec, BadLine):
            findings.append(
                Finding(
                    rule="seeds:parse",
                    message=f"{path.name} line {rec.line} cannot be read: {rec.reason}",
                    path=p,
                    line=rec.line,
                    source=SOURCE,
                )
            )
            continue
        plausible.add(rec)
        if rec.key != "seed":
            continue
        n += 1
        src_file, src_line = rec.metadata.get("file"), rec.metadata.get("lineno")
        try:
            seed = int(rec.value)
        except (TypeError, ValueError, OverflowError):
            findings.append(
                Finding(
                    rule="seeds:not_integer",
                    message=f"{path.name} line {rec.line}: seed {rec.value!r} is not an integer",
                    path=p,
                    line=rec.line,
                    key="seed",
                    value=rec.value,
                    expected="an integer",
                    source=SOURCE,
                )
            )
            continue

        def not_through_mllog(what: str, line: int = rec.line, value: int = seed) -> Finding:
            return Finding(
                rule="seeds:not_through_mllog",
                message=f"{path.name} line {line}: {what}; seeds must be logged through mllog",
                path=p,
                line=line,
                key="seed",
                value=value,
                source=SOURCE,
            )

        if src_file is None or src_line is None:
            findings.append(not_through_mllog("the seed record has no file/lineno metadata"))
            continue
        try:
            triple = (str(src_file), int(src_line), seed)
        except (TypeError, ValueError, OverflowError):
            findings.append(
                not_through_mllog(f"the seed record's lineno {str(src_line)[:40]!r} is not a line number")
            )
            continue
        first = owners.get(triple)
        if first is not None:
            findings.append(
                Finding(
                    rule="seeds:duplicate",
                    message=f"{path.name} logs seed {seed} on {src_file}:{src_line}, "
                    f"but {Path(first).name} already logs the same seed on the same line",
                    path=p,
                    line=rec.line,
                    key="seed",
                    value=seed,
                    expected="a seed no other run logs on this line",
                    source=SOURCE,
                    extra={"first": first},
                )
            )
        else:
            owners[triple] = p
    findings.extend(plausible.findings())
    return n
