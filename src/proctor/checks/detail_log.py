"""Detail logs for the checks: the engine's one reader (`proctor.loadgen.logs.reader`), with what it
could not read turned into findings instead of exceptions.

Both the official LoadGen and proctor write one `:::MLLOG` JSON object per line (LoadGen++ logs use
`:::ENDPTS`). The checks need a key -> value view, the line each key came from (so a finding can
point at it), and the lines flagged `is_error`; a file that cannot be read, or a line that is not a
record, becomes a finding naming the file (and line).
"""

from __future__ import annotations

from pathlib import Path

from proctor.errors import LogFormatError
from proctor.findings import Finding
from proctor.loadgen.logs.reader import DetailLogData, read_detail

__all__ = ["DetailLogData", "load_detail_log", "short"]

MAX_BAD_LINES_LISTED = 5


def short(value: object, limit: int = 120) -> str:
    """A value's repr for a message, cut at `limit` characters (a log value can be megabytes)."""
    try:
        text = repr(value)
    except RecursionError:  # pragma: no cover - the reader refuses deep values already
        text = f"<{type(value).__name__} nested too deeply>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def load_detail_log(path: str | Path) -> tuple[DetailLogData, list[Finding]]:
    """Read one detail log; the findings say what made (parts of) it unreadable."""
    p = str(path)
    try:
        log = read_detail(p, keep_entries=False)
    except LogFormatError as exc:
        rule = "detail_log_parse" if "MLLOG" in str(exc) else "detail_log_read"
        hint = "this is not a LoadGen detail log" if rule == "detail_log_parse" else "fix the file's permissions or type"
        return DetailLogData(p), [Finding(rule=rule, path=p, message=f"{exc}; {hint}")]
    problems = [
        Finding(
            rule="detail_log_parse",
            path=p,
            line=bad.line,
            message=f"line {bad.line} is not a valid :::MLLOG record ({short(bad.reason, 200)}); "
            "regenerate the log instead of editing it",
        )
        for bad in log.bad_lines[:MAX_BAD_LINES_LISTED]
    ]
    if log.n_bad_lines > MAX_BAD_LINES_LISTED:
        more = log.n_bad_lines - MAX_BAD_LINES_LISTED
        problems.append(
            Finding(rule="detail_log_parse", path=p, message=f"{more} more unreadable lines in this log")
        )
    return log, problems
