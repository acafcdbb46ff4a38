"""Readers of the official detail and summary logs (and of proctor's own, which share the format).

`read_detail` streams `:::MLLOG` / `:::ENDPTS` lines through `proctor.mllog_lines` (CRLF and
launcher prefixes are fine); lines that are not JSON are kept as `bad_lines` with their numbers
instead of stopping the read. `read_summary` turns `name : value` lines into a dict.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proctor.errors import LogFormatError
from proctor.mllog_lines import ENDPOINTS_MARKER, MARKER, BadLine, iter_log


@dataclass(frozen=True, slots=True)
class Entry:
    line: int
    key: str
    value: Any


@dataclass(slots=True)
class DetailLogData:
    path: str
    values: dict[str, Any] = field(default_factory=dict)  # key -> value, last one wins
    entries: list[Entry] = field(default_factory=list)  # every line, in order
    errors: list[Entry] = field(default_factory=list)  # metadata.is_error or error_* keys
    warnings: list[Entry] = field(default_factory=list)
    bad_lines: list[BadLine] = field(default_factory=list)

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    def require(self, key: str) -> Any:
        """The value of `key`, or a LogFormatError naming the file and the key."""
        if key not in self.values:
            raise LogFormatError(f"key '{key}' not found", file=self.path)
        return self.values[key]

    def line_of(self, key: str) -> int | None:
        for e in reversed(self.entries):
            if e.key == key:
                return e.line
        return None


def read_detail(path: str | Path, *, strict: bool = False) -> DetailLogData:
    """Parse a detail log; `strict=True` raises LogFormatError at the first bad line."""
    p = Path(path)
    if not p.is_file():
        raise LogFormatError("no such file", file=str(p))
    data = DetailLogData(path=str(p))
    for item in iter_log(p, markers=(MARKER, ENDPOINTS_MARKER)):
        if isinstance(item, BadLine):
            if strict:
                raise LogFormatError(item.reason, file=str(p), line=item.line)
            data.bad_lines.append(item)
            continue
        entry = Entry(item.line, item.key, item.value)
        data.entries.append(entry)
        data.values[item.key] = item.value
        meta = item.metadata or {}
        if meta.get("is_error") or item.key.startswith("error_"):
            data.errors.append(entry)
        if meta.get("is_warning") or item.key.startswith("warning_"):
            data.warnings.append(entry)
    if not data.entries and not data.bad_lines:
        raise LogFormatError("no :::MLLOG lines: not a detail log", file=str(p))
    return data


_NUMBER = re.compile(r"^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")
_FOOTER_WARN = re.compile(r"^(No|\d+) warnings? encountered")
_FOOTER_ERR = re.compile(r"^(No|\d+) (ERRORS?|errors) encountered")


def _scalar(text: str) -> Any:
    if _NUMBER.match(text):
        return int(text) if re.fullmatch(r"-?\d+", text) else float(text)
    return text


def read_summary(path: str | Path) -> dict[str, Any]:
    """Parse mlperf_log_summary.txt into a dict.

    Top-level `name : value` pairs keep their label (e.g. `'90.0th percentile latency (ns)'`,
    `'Result is'`); sections come as sub-dicts: `additional_stats`, `per_query` (MultiStream),
    `test_parameters`; plus `recommendations`, `early_stopping` (label -> text), `warnings`,
    `errors` (counts) and `run_incomplete` (proctor's note, or None).
    """
    p = Path(path)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise LogFormatError("no such file", file=str(p)) from None
    out: dict[str, Any] = {
        "recommendations": [],
        "early_stopping": {},
        "additional_stats": {},
        "test_parameters": {},
        "warnings": None,
        "errors": None,
        "run_incomplete": None,
    }
    section = "head"
    block: str | None = None  # "recommendations" or an early-stopping label
    for i, raw in enumerate(lines, 1):
        line = raw.rstrip("\r")
        if not line.strip() or set(line) == {"="}:
            block = None if not line.strip() else block
            continue
        if line == "MLPerf Results Summary":
            section = "head"
            continue
        if line == "Additional Stats":
            section, block = "additional_stats", None
            continue
        if line == "Test Parameters Used":
            section, block = "test_parameters", None
            continue
        if m := _FOOTER_WARN.match(line):
            out["warnings"] = 0 if m.group(1) == "No" else int(m.group(1))
            continue
        if m := _FOOTER_ERR.match(line):
            out["errors"] = 0 if m.group(1) == "No" else int(m.group(1))
            section = "tail"
            continue
        if line.startswith("PROCTOR: Run incomplete:"):
            out["run_incomplete"] = line.split(":", 2)[2].strip()
            continue
        if section == "tail":
            continue  # proctor's incomplete-run note repeats the verdict in words
        if section == "head":
            if line == "Recommendations:":
                block = "recommendations"
                continue
            if line.endswith("Early Stopping Result:"):
                block = line[: -len(" Result:")].strip()
                out["early_stopping"][block] = ""
                continue
            if block == "recommendations" and line.startswith((" * ", "   ")):
                if line.startswith(" * "):
                    out["recommendations"].append(line[3:])
                else:
                    out["recommendations"][-1] += "\n" + line
                continue
            if block not in (None, "recommendations"):
                prev = out["early_stopping"][block]
                out["early_stopping"][block] = (prev + "\n" + line) if prev else line
                continue
        if section == "additional_stats" and line.startswith("Per-query latency"):
            section = "per_query"
            out.setdefault("per_query", {})
            continue
        if section == "test_parameters" and line.startswith(
            ("WARNING:", "Generated", "Check", "samples_per_query value")
        ):
            out.setdefault("equal_issue_warning", True)
            continue
        if ":" not in line:
            raise LogFormatError(f"unexpected line {line!r}", file=str(p), line=i)
        label, _, value = line.partition(":")
        label, value = label.strip(), value.strip()
        target = out if section == "head" else out[section]
        target[label] = _scalar(value)
    return out
