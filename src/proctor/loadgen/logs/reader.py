"""The one reader of detail logs (official and proctor's own share the format) and of summaries.

`read_detail` reads `:::MLLOG` / `:::ENDPTS` lines, each decoded as `proctor.mllog_lines` decodes
a record (CRLF and launcher prefixes are fine): a log of at most WHOLE_BYTES of plain ASCII (what
LoadGen writes) is read in one piece, any other is streamed; only a bounded number of error, warning
and bad lines is kept (all are counted), so a huge or hostile log costs bounded memory beyond its
distinct keys. A line that is not JSON, longer than `MAX_LINE_BYTES` or holds a
value nested deeper than `MAX_DEPTH` is kept as a `BadLine` with its number instead of stopping
the read. Only regular files are opened (a FIFO named like a log would block forever). Inside
`proctor.trees.reading()` a log read again (unchanged) is parsed once.
`read_summary` turns `name : value` lines into a dict. Both raise `LogFormatError` (naming the
file, and the line where there is one) for anything they cannot read.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

from proctor import json_text
from proctor.errors import LogFormatError
from proctor.mllog_lines import ENDPOINTS_MARKER, MARKER, BadLine, decode_record, nested_deeper
from proctor.text_files import universal_lines
from proctor.trees import parsed
from proctor.typed_records import NamedTuple, field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any

MAX_LINE_BYTES = 4 << 20  # a detail-log line is a few hundred bytes; anything this long is not one
MAX_DEPTH = 32  # LoadGen values are scalars or flat lists; deeper nesting is not a LoadGen value
MAX_KEPT = 1000  # errors, warnings and bad lines kept per log (all of them are counted)
# A key whose value no check reads, and which LoadGen writes as a list as long as the performance sample
# count (24,576 numbers for llama2, 204,800 for dlrm): read_detail(keep_entries=False) checks that its
# line is JSON without making the list, which was most of the JSON a small tree's check decoded.
SKIMMED_KEY = "loaded_qsl_set"
_SKIMMED_HEAD = b'{"key": "loaded_qsl_set", "value": ['  # as LoadGen writes it; any other form is decoded
_DIGITS_AND_COMMAS = b"0123456789,"


class Entry(NamedTuple):
    line: int
    key: str
    value: Any


@record(slots=True)
class DetailLogData:
    """What a detail log holds: the last value of each key and the line it came from, plus what broke."""

    path: str
    values: dict[str, Any] = field(default_factory=dict)  # key -> value, last one wins
    lines: dict[str, int] = field(default_factory=dict)  # key -> line of that last value
    entries: list[Entry] = field(default_factory=list)  # every line, in order (keep_entries=True)
    errors: list[Entry] = field(default_factory=list)  # metadata.is_error or error_* keys (first MAX_KEPT)
    warnings: list[Entry] = field(default_factory=list)  # (first MAX_KEPT)
    bad_lines: list[BadLine] = field(default_factory=list)  # (first MAX_KEPT)
    n_errors: int = 0
    n_warnings: int = 0
    n_bad_lines: int = 0

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    def __contains__(self, key: str) -> bool:
        return key in self.values

    def require(self, key: str) -> Any:
        """The value of `key`, or a LogFormatError naming the file and the key."""
        if key not in self.values:
            raise LogFormatError(f"key '{key}' not found", file=self.path)
        return self.values[key]

    def line_of(self, key: str) -> int | None:
        return self.lines.get(key)


def open_regular(path: str | Path) -> IO[bytes]:
    """Open a regular file for reading, or raise LogFormatError saying why not (never blocks). A log
    that is itself a link is refused: a run's folder is a tree, and no link in it is followed."""
    p = str(path)
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        raise LogFormatError("no such file", file=p) from None
    except OSError as exc:
        raise LogFormatError(f"cannot read it: {exc.strerror or exc}", file=p) from None
    if stat.S_ISLNK(st.st_mode):
        raise LogFormatError("a link: proctor follows no link to a log; copy the file here", file=p)
    if not stat.S_ISREG(st.st_mode):
        raise LogFormatError("not a regular file (a folder, FIFO or device); expected a log file", file=p)
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0))
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # replaced between the two looks
            os.close(fd)
            raise LogFormatError("not a regular file", file=p)
        return os.fdopen(fd, "rb")
    except OSError as exc:
        raise LogFormatError(f"cannot read it: {exc.strerror or exc}", file=p) from None


def iter_lines(fh: IO[bytes], max_bytes: int = MAX_LINE_BYTES) -> Iterator[tuple[int, bytes | None]]:
    """(number, line) for each line, streaming, without its line end; None for a line longer than
    `max_bytes` (skipped). Lines end as the official Python readers' `for line in f` ends them:
    b"\\n", b"\\r\\n" or a lone b"\\r" (proctor.text_files.universal_lines)."""
    lineno = 0
    while True:
        chunk = fh.readline(max_bytes)
        if not chunk:
            return
        if len(chunk) >= max_bytes and not chunk.endswith(b"\n"):
            while chunk and not chunk.endswith(b"\n"):  # drop the rest of the overlong line
                chunk = fh.readline(max_bytes)
            lineno += 1
            yield lineno, None
            continue
        if b"\r" not in chunk:  # one line (readline stops at the first b"\n")
            lineno += 1
            yield lineno, chunk[:-1] if chunk.endswith(b"\n") else chunk
            continue
        for line in universal_lines(chunk):
            lineno += 1
            yield lineno, line


def _skimmed(payload: bytes) -> bytes | None:
    """The record `payload` holds with its `loaded_qsl_set` list of whole numbers replaced by `[]`, so
    the rest decodes in microseconds: an array for an array, so what follows reads as it did (a number
    in its place would read `[1]e0` as `0e0`). None when the list is not one JSON reads as such (digits
    and single commas, no leading zeros, not empty): that line is decoded whole, as any other."""
    start = len(_SKIMMED_HEAD)
    end = payload.find(b"]", start)
    if end <= start:
        return None
    items = payload[start:end]
    if items.translate(None, _DIGITS_AND_COMMAS) or items[0] == 0x2C or items[-1] == 0x2C or b",," in items:
        return None
    if items[0] == 0x30 and len(items) > 1 and items[1] != 0x2C:  # a leading zero: not JSON
        return None
    at = items.find(b",0")
    while at >= 0:
        if at + 2 < len(items) and items[at + 2] != 0x2C:
            return None
        at = items.find(b",0", at + 2)
    return payload[: start - 1] + b"[]" + payload[end + 1 :]


def read_detail(path: str | Path, *, strict: bool = False, keep_entries: bool = True) -> DetailLogData:
    """Parse a detail log, streaming; `strict=True` raises LogFormatError at the first bad line.

    `keep_entries=False` keeps only the last value per key (what the checkers need) so memory does
    not grow with the number of lines, and no value for SKIMMED_KEY (its line is checked, and its
    line number kept). Raises LogFormatError when the file cannot be read or holds
    no `:::MLLOG` line.
    """
    p = str(path)
    if keep_entries:
        return _read_detail(p, strict, keep_entries)
    # inside a tree reading (the submission checker), a log read again is parsed once
    return parsed(p, f"detail log, strict={strict}", lambda: _read_detail(p, strict, keep_entries))


WHOLE_BYTES = 16 << 20  # a detail log up to this size (most are under 1 MB) is read in one piece


def _read_detail(p: str, strict: bool, keep_entries: bool) -> DetailLogData:
    """One pass over the lines. A log of at most WHOLE_BYTES of ASCII with plain line ends (what
    LoadGen writes) is read whole and each line in LoadGen's own shape, `:::MLLOG {...}`, is decoded
    in place by json's scanner; any other line, and every line of any other log (streamed), goes
    through `_decode_line`, so both give the same values and the same bad lines."""
    data = DetailLogData(path=p)
    with open_regular(p) as fh:
        try:
            whole = _whole(fh)
            if whole is None:
                for lineno, text in iter_lines(fh):
                    _keep_line(data, lineno, text, strict, keep_entries)
            else:
                _read_whole(data, whole, strict, keep_entries)
        except OSError as exc:
            raise LogFormatError(f"cannot read it: {exc.strerror or exc}", file=p) from None
    if not data.values and not data.n_bad_lines:
        raise LogFormatError("no :::MLLOG lines: not a detail log", file=p)
    return data


def _whole(fh: IO[bytes]) -> bytes | None:
    """The file's bytes when it is at most WHOLE_BYTES of ASCII without a carriage return, else None
    with the file at its start (to be streamed)."""
    size = os.fstat(fh.fileno()).st_size
    if size > WHOLE_BYTES:
        return None
    whole = fh.read(size + 1)  # one byte more than its size: a file that grew since is streamed
    if len(whole) <= size and whole.isascii() and b"\r" not in whole:
        return whole
    fh.seek(0)
    return None


def _read_whole(data: DetailLogData, whole: bytes, strict: bool, keep_entries: bool) -> None:
    """`_keep_line` for each line of `whole`; a line of LoadGen's shape (the marker, one space, an
    object that ends the line, no escape, no deep nesting) decoded without being copied out first:
    a small tree's check spent most of its reading on each line's own slicing and decoding."""
    text = whole.decode("ascii")
    scan, n, lineno, pos = json_text.scan, len(text), 0, 0
    marker, endpoints, skim_head = MARKER.decode(), ENDPOINTS_MARKER.decode(), _SKIMMED_HEAD.decode()
    after_marker = len(marker) + 1  # the marker and one space
    values, lines_of = data.values, data.lines
    while pos < n:
        nl = text.find("\n", pos)
        if nl < 0:
            nl = n
        lineno += 1
        at = text.find(marker, pos, nl)
        begin = at + after_marker
        if nl - pos >= MAX_LINE_BYTES:  # as iter_lines finds it when the file is streamed
            _keep_line(data, lineno, None, strict, keep_entries)
        elif at < 0:
            if text.find(endpoints, pos, nl) >= 0:
                _keep_line(data, lineno, whole[pos:nl], strict, keep_entries)
            # else plain program output
        elif (
            not text.startswith(" {", begin - 1)
            or (not keep_entries and text.startswith(skim_head, begin))
            or text.find("\\u", begin, nl) >= 0
            or text.count("[", pos, nl) + text.count("{", pos, nl) > MAX_DEPTH
        ):
            _keep_line(data, lineno, whole[pos:nl], strict, keep_entries)
        else:
            try:
                rec, end = scan(text, begin)
            except (StopIteration, ValueError, RecursionError):
                end = -1
            if end != nl or not isinstance(rec, dict) or "key" not in rec:
                _keep_line(data, lineno, whole[pos:nl], strict, keep_entries)
            else:
                key, value, meta = str(rec["key"]), rec.get("value"), rec.get("metadata")
                if keep_entries or key != SKIMMED_KEY:
                    values[key] = value
                lines_of[key] = lineno
                if keep_entries or key.startswith(("error_", "warning_")) or _flagged(meta):
                    _keep_flags(data, lineno, key, value, meta, keep_entries)
        pos = nl + 1


def _decode_line(text: bytes, keep_entries: bool) -> tuple[str, Any, Any] | str | None:
    """A line's (key, value, metadata); why it is not a record; or None when it has no marker
    (plain program output)."""
    pos = text.find(MARKER)
    start = pos + len(MARKER)
    if pos < 0:
        pos = text.find(ENDPOINTS_MARKER)
        if pos < 0:
            return None
        start = pos + len(ENDPOINTS_MARKER)
    payload = text[start:]
    if not (payload.endswith(b"}") and (payload[:1] == b"{" or payload[:2] == b" {")):
        payload = payload.strip()  # else only the space after the marker, which JSON allows
    skim = None
    if not keep_entries:  # LoadGen writes one space after the marker
        lead = payload.find(_SKIMMED_HEAD, 0, len(_SKIMMED_HEAD) + 1)
        if lead == 0 or (lead == 1 and payload[0] == 0x20):
            skim = _skimmed(payload[lead:])
    brackets = 0  # a skimmed record's value is [], nested in nothing: its long line is not counted
    try:
        rec = decode_record(skim) if skim is not None else None
        if rec is None or isinstance(rec, str) or _flagged(rec.get("metadata")):
            # the line whole: why it is not a record, as the line itself says it; or an error's value
            brackets = text.count(b"[") + text.count(b"{")  # the line's: at least the payload's
            rec = decode_record(payload, brackets)
        if isinstance(rec, str):
            return rec
        value = rec.get("value")
    except (RecursionError, ValueError, TypeError) as exc:
        return f"unreadable record: {type(exc).__name__}"
    # depth never exceeds the line's bracket count: most lines skip the walk
    if brackets > MAX_DEPTH and nested_deeper(value, MAX_DEPTH):
        return f"value nested deeper than {MAX_DEPTH} levels"
    return str(rec["key"]), value, rec.get("metadata")


def _flagged(meta: object) -> bool:
    """Whether a record's metadata marks it an error or a warning (kept with its value)."""
    return isinstance(meta, dict) and (meta.get("is_error") is True or meta.get("is_warning") is True)


def _keep_line(data: DetailLogData, lineno: int, text: bytes | None, strict: bool, keep_entries: bool) -> None:
    """Decode one line (None: longer than MAX_LINE_BYTES) and keep what it says in `data`."""
    got = f"line longer than {MAX_LINE_BYTES} bytes" if text is None else _decode_line(text, keep_entries)
    if got is None:
        return
    if isinstance(got, str):
        if strict:
            raise LogFormatError(got, file=data.path, line=lineno)
        data.n_bad_lines += 1
        if len(data.bad_lines) < MAX_KEPT:  # the line as text (it holds no line end), none when too long
            data.bad_lines.append(BadLine(lineno, "" if text is None else text[:200].decode("utf-8", "replace"), got))
        return
    key, value, meta = got
    if keep_entries or key != SKIMMED_KEY:
        data.values[key] = value
    data.lines[key] = lineno
    _keep_flags(data, lineno, key, value, meta, keep_entries)


def _keep_flags(data: DetailLogData, lineno: int, key: str, value: Any, meta: Any, keep_entries: bool) -> None:
    """The line as an entry (keep_entries), and as an error or a warning where it is one."""
    flags = meta if isinstance(meta, dict) else None
    error = key.startswith("error_") or (flags is not None and flags.get("is_error") is True)
    warning = key.startswith("warning_") or (flags is not None and flags.get("is_warning") is True)
    if keep_entries or error or warning:
        entry = Entry(lineno, key, value)
        if keep_entries:
            data.entries.append(entry)
        if error:
            data.n_errors += 1
            if len(data.errors) < MAX_KEPT:
                data.errors.append(entry)
        if warning:
            data.n_warnings += 1
            if len(data.warnings) < MAX_KEPT:
                data.warnings.append(entry)


_NUMBER = re.compile(r"^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")
_FOOTER_WARN = re.compile(r"^(No|\d{1,18}) warnings? encountered")
MAX_SUMMARY_LINE = 64 << 10
_FOOTER_ERR = re.compile(r"^(No|\d{1,18}) (ERRORS?|errors) encountered")


def _scalar(text: str) -> Any:
    if len(text) <= 64 and _NUMBER.match(text):  # a longer "number" is not one LoadGen printed
        return int(text) if re.fullmatch(r"-?\d+", text) else float(text)
    return text


def read_summary(path: str | Path) -> dict[str, Any]:
    """Parse mlperf_log_summary.txt into a dict.

    Top-level `name : value` pairs keep their label (e.g. `'90.0th percentile latency (ns)'`,
    `'Result is'`); sections come as sub-dicts: `additional_stats`, `per_query` (MultiStream),
    `test_parameters`; plus `recommendations`, `early_stopping` (label -> text), `warnings`,
    `errors` (counts), `run_incomplete` (proctor's note, or None) and `lines` ("section/label" ->
    the line it was read from; "footer/errors" for the error count).
    """
    p = str(path)
    with open_regular(p) as fh:
        return _parse_summary(p, _decoded(p, fh))


def _decoded(p: str, fh: IO[bytes]) -> Iterator[tuple[int, str]]:
    try:
        for i, raw in iter_lines(fh, MAX_SUMMARY_LINE):
            if raw is None:
                raise LogFormatError(f"line longer than {MAX_SUMMARY_LINE} bytes: not a summary", file=p, line=i)
            try:
                yield i, raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError:
                raise LogFormatError("not UTF-8 text: not a LoadGen summary", file=p, line=i) from None
    except OSError as exc:
        raise LogFormatError(f"cannot read it: {exc.strerror or exc}", file=p) from None


def _parse_summary(p: str, lines: Iterator[tuple[int, str]]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "recommendations": [],
        "early_stopping": {},
        "additional_stats": {},
        "test_parameters": {},
        "warnings": None,
        "errors": None,
        "run_incomplete": None,
        "lines": {},  # "<section>/<label>" -> its line number (sections as above, head for the top)
    }
    lines_of: dict[str, int] = out["lines"]
    reserved = frozenset(out) | {"per_query", "equal_issue_warning"}  # the parser's own keys
    section = "head"
    block: str | None = None  # "recommendations" or an early-stopping label
    for i, line in lines:
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
            lines_of["footer/errors"] = i
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
                lines_of[f"early_stopping/{block}"] = i
                continue
            if block == "recommendations" and line.startswith((" * ", "   ")):
                if line.startswith(" * ") or not out["recommendations"]:
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
            raise LogFormatError(f"unexpected line {line[:80]!r}", file=p, line=i)
        label, _, value = line.partition(":")
        label, value = label.strip(), value.strip()
        if section == "head" and label in reserved:
            raise LogFormatError(f"unexpected line {line[:80]!r}", file=p, line=i)
        target = out if section == "head" else out[section]
        target[label] = _scalar(value)
        lines_of[f"{section}/{label}"] = i
    return out
