"""Streaming reader of `:::MLLOG {json}` lines, shared by the loadgen detail log and training logs.

Both official tools write one JSON object per line behind a `:::MLLOG` marker; launchers often add
a prefix (rank tags such as `[1,0]<stdout>:`). `iter_log` never loads a whole file: it yields one
record per marked line and turns a line it cannot read into a `BadLine` with its number, so a
checker can report it as a finding instead of crashing.

Hostile input stays bounded: a line longer than `MAX_LINE_BYTES` is skipped as a BadLine without
being held whole, a value nested deeper than `MAX_DEPTH` is a BadLine (printing or re-serialising it
would overflow the stack), and `NaN`/`Infinity`/`1e400` are read as the official tools' `json.loads`
reads them (proctor's own logger writes them for a diverged loss).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from proctor import json_text
from proctor.text_files import universal_lines
from proctor.typed_records import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MARKER = b":::MLLOG"
ENDPOINTS_MARKER = b":::ENDPTS"
MAX_LINE_BYTES = 16 * 1024 * 1024  # no real MLLOG line comes near this
MAX_DEPTH = 64  # real values are at most a few levels deep


@record(frozen=True, slots=True)
class LogLine:
    line: int                 # 1-based line number in the file
    key: str
    value: Any
    time_ms: float | None
    event_type: str | None
    namespace: str | None
    metadata: dict[str, Any]
    raw: dict[str, Any]       # the whole decoded object, for readers that need other fields


@record(frozen=True, slots=True)
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
    obj = decode_record(text[pos + len(marker):].strip())
    if isinstance(obj, str):
        return BadLine(lineno, _show(text), obj)
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


def decode_record(payload: bytes, brackets: int | None = None) -> dict[str, Any] | str:
    """The object a marked line carries (`payload`: what follows the marker, stripped, or with only
    JSON's whitespace around it), or why it is not a record. The one decoding of a record: parse_line
    and the detail-log reader both use it. `brackets`: at least the payload's count of "[" and "{"
    when the caller counted them already (at most MAX_DEPTH of them: no depth walk)."""
    lenient = False
    try:
        obj = json_text.loads(payload)
    except (ValueError, RecursionError):
        try:  # text that is not UTF-8 (UTF-16, or surrogates encoded): what the official tools' json.loads reads
            obj = json.loads(payload.strip())  # stripped: a refusal names the place in the stripped text
            lenient = True
        except (ValueError, RecursionError) as exc:
            return f"malformed JSON: {exc}"
    if not isinstance(obj, dict) or "key" not in obj:
        return "not an object with a 'key'"
    # Depth never exceeds the number of brackets: most lines skip the walk (a detail log has ~1000).
    if (
        (brackets is None or brackets > MAX_DEPTH)
        and payload.count(b"{") + payload.count(b"[") > MAX_DEPTH
        and nested_deeper(obj, MAX_DEPTH)
    ):
        return f"a value is nested deeper than {MAX_DEPTH} levels"
    if lenient or b"\\u" in payload:  # json.loads lets lone surrogates ("\ud800") through; they cannot be printed
        obj = json.loads(json.dumps(obj, ensure_ascii=False).encode("utf-8", "replace"))
    record: dict[str, Any] = obj
    return record


def _show(text: bytes) -> str:
    return text[:200].decode("utf-8", "replace").rstrip("\r\n")


def nested_deeper(obj: Any, limit: int) -> bool:
    """Whether lists/dicts in `obj` nest more than `limit` levels (iterative: no recursion)."""
    stack: list[tuple[Any, int]] = [(obj, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values() if isinstance(v, dict | list))
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item if isinstance(v, dict | list))
    return False


def iter_log(path: str | Path, markers: tuple[bytes, ...] = (MARKER,)) -> Iterator[LogLine | BadLine]:
    """Yield every marked line of a file in order, streaming (memory bounded by MAX_LINE_BYTES)."""
    with open(path, "rb") as fh:
        lineno = 0
        while True:
            text = fh.readline(MAX_LINE_BYTES)
            if not text:
                return
            lineno += 1
            if len(text) >= MAX_LINE_BYTES and not text.endswith(b"\n"):
                head = text
                while text and not text.endswith(b"\n"):  # skip the rest without keeping it
                    text = fh.readline(MAX_LINE_BYTES)
                if any(m in head for m in markers):
                    yield BadLine(lineno, _show(head), f"line longer than {MAX_LINE_BYTES} bytes")
                continue
            lines = universal_lines(text)  # a lone CR ends a line, as the official tools' readers see it
            lineno += len(lines) - 1
            for i, line in enumerate(lines):
                rec = parse_line(line, lineno - len(lines) + 1 + i, markers)
                if rec is not None:
                    yield rec
