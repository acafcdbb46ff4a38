"""A thin reader of `mlperf_log_detail.txt` for the checks: last value per key, plus what broke.

Both the official LoadGen and proctor write one `:::MLLOG` JSON object per line (LoadGen++ logs use
`:::ENDPTS`). The checks need a key -> value view, the line each key came from (so a finding can
point at it), and the lines flagged `is_error`. Bad lines become findings instead of exceptions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proctor.findings import Finding
from proctor.mllog_lines import ENDPOINTS_MARKER, MARKER, BadLine, iter_log


@dataclass(slots=True)
class DetailLog:
    path: str
    values: dict[str, Any] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    errors: list[tuple[int, str, Any]] = field(default_factory=list)  # (line, key, value) with is_error
    problems: list[Finding] = field(default_factory=list)  # unreadable lines / file

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    def __contains__(self, key: str) -> bool:
        return key in self.values

    def line_of(self, key: str) -> int | None:
        return self.lines.get(key)


def read_detail_log(path: str | Path) -> DetailLog:
    """Stream the file once; later lines of the same key win (as LoadGen's own parsers do)."""
    log = DetailLog(str(path))
    try:
        records = iter_log(path, markers=(MARKER, ENDPOINTS_MARKER))
        for rec in records:
            if isinstance(rec, BadLine):
                log.problems.append(
                    Finding(
                        rule="detail_log_parse",
                        path=str(path),
                        line=rec.line,
                        message=f"line {rec.line} is not a valid :::MLLOG record ({rec.reason}); "
                        "regenerate the log instead of editing it",
                    )
                )
                continue
            log.values[rec.key] = rec.value
            log.lines[rec.key] = rec.line
            if rec.metadata.get("is_error"):
                log.errors.append((rec.line, rec.key, rec.value))
    except OSError as exc:
        log.problems.append(
            Finding(
                rule="detail_log_read",
                path=str(path),
                message=f"cannot read the detail log: {exc.strerror or exc}",
            )
        )
    if not log.values and not log.problems:
        log.problems.append(
            Finding(
                rule="detail_log_parse",
                path=str(path),
                message="no :::MLLOG records: this is not a LoadGen detail log",
            )
        )
    return log
