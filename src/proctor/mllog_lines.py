"""Streaming reader of `:::MLLOG {json}` lines, shared by the loadgen detail log and training logs.

Both official tools write one JSON object per line behind a `:::MLLOG` marker; launchers often add
a prefix (rank tags such as `[1,0]<stdout>:`). The reader never loads a whole file: it yields one
record per marked line and turns a line it cannot read into a `BadLine` with its number, so a
checker can report it as a finding instead of crashing.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

MARKER = b":::MLLOG"
ENDPOINTS_MARKER = b":::ENDPTS"


@dataclass(frozen=True, slots=True)
class LogLine:
    line: int                 # 1-based line number in the file
    key: str
    value: Any
    time_ms: float | None
    event_type: str | None
    namespace: str | None
    metadata: dict[str, Any]
    raw: dict[str, Any]       # the whole decoded object, for readers that need other fields


@dataclass(frozen=True, slots=True)
class BadLine:
    line: int
    text: str
    reason: str


def parse_line(text: bytes, lineno: int, markers: tuple[bytes, ...] = (MARKER,)) -> LogLine | BadLine | None:
    """Decode one physical line; None when it carries no marker (plain program output)."""
    for marker in markers:
        pos = text.find(marker)
        if pos >= 0:
            break
    else:
        return None
    payload = text[pos + len(marker):].strip()
    try:
        obj = orjson.loads(payload)
    except orjson.JSONDecodeError as exc:
        return BadLine(lineno, text.decode("utf-8", "replace").rstrip("\r\n"), f"malformed JSON: {exc}")
    if not isinstance(obj, dict) or "key" not in obj:
        return BadLine(lineno, text.decode("utf-8", "replace").rstrip("\r\n"), "not an object with a 'key'")
    meta = obj.get("metadata")
    return LogLine(
        line=lineno,
        key=str(obj["key"]),
        value=obj.get("value"),
        time_ms=obj.get("time_ms"),
        event_type=obj.get("event_type"),
        namespace=obj.get("namespace"),
        metadata=meta if isinstance(meta, dict) else {},
        raw=obj,
    )


def iter_log(path: str | Path, markers: tuple[bytes, ...] = (MARKER,)) -> Iterator[LogLine | BadLine]:
    """Yield every marked line of a file in order, streaming (constant memory)."""
    with open(path, "rb") as fh:
        for lineno, text in enumerate(fh, start=1):
            rec = parse_line(text, lineno, markers)
            if rec is not None:
                yield rec
