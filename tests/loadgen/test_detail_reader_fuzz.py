"""The detail-log reader's one-pass loop gives what reading line by line through `parse_line` gives:
the same values, lines, errors, warnings, entries and bad lines (with their texts and reasons), or
the same refusal, on hostile bytes (broken JSON, lenient numbers, lone surrogates, deep nesting
around both depth limits, whitespace and brackets around the marker, lone CRs, overlong lines)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proctor.errors import LogFormatError
from proctor.loadgen.logs import reader
from proctor.loadgen.logs.reader import MAX_DEPTH, MAX_KEPT, DetailLogData, Entry, read_detail
from proctor.mllog_lines import ENDPOINTS_MARKER, MARKER, BadLine, nested_deeper

pytestmark = pytest.mark.fuzz

LINE_DEPTH = 64  # mllog_lines.MAX_DEPTH, as the line decoder had it
# the reader's own bound (a test sets a short one through the fixture, which lasts all its examples)
FULL_LINE_BYTES = reader.MAX_LINE_BYTES


def _old_parse_line(text: bytes, lineno: int) -> tuple[str, dict] | BadLine | None:
    """The line decoder as it was (one LogLine per line): (key, record) or a BadLine."""
    for marker in (MARKER, ENDPOINTS_MARKER):
        pos = text.find(marker)
        if pos >= 0:
            break
    else:
        return None
    show = text[:200].decode("utf-8", "replace").rstrip("\r\n")
    payload = text[pos + len(marker):].strip()
    try:
        obj = json.loads(payload)  # the bytes, as the official tools' json.loads reads them
    except (ValueError, RecursionError) as exc:
        return BadLine(lineno, show, f"malformed JSON: {exc}")
    if not isinstance(obj, dict) or "key" not in obj:
        return BadLine(lineno, show, "not an object with a 'key'")
    if payload.count(b"{") + payload.count(b"[") > LINE_DEPTH and nested_deeper(obj, LINE_DEPTH):
        return BadLine(lineno, show, f"a value is nested deeper than {LINE_DEPTH} levels")
    obj = json.loads(json.dumps(obj, ensure_ascii=False).encode("utf-8", "replace"))  # no lone surrogates
    return str(obj["key"]), obj


def _numbered(path: Path, max_bytes: int) -> Iterator[tuple[int, bytes | None]]:
    """iter_lines as it was: every readline chunk split by bytes.splitlines."""
    lineno = 0
    with open(path, "rb") as fh:
        while chunk := fh.readline(max_bytes):
            if len(chunk) >= max_bytes and not chunk.endswith(b"\n"):
                while chunk and not chunk.endswith(b"\n"):
                    chunk = fh.readline(max_bytes)
                lineno += 1
                yield lineno, None
                continue
            for line in chunk.splitlines():
                lineno += 1
                yield lineno, line


def _old_item(lineno: int, text: bytes | None, max_bytes: int) -> tuple[str, dict] | BadLine | None:
    if text is None:
        return BadLine(lineno, "", f"line longer than {max_bytes} bytes")
    try:
        item = _old_parse_line(text, lineno)
    except (RecursionError, ValueError, TypeError) as exc:
        return BadLine(lineno, text[:200].decode("utf-8", "replace"), f"unreadable record: {type(exc).__name__}")
    if isinstance(item, tuple) and text.count(b"[") + text.count(b"{") > MAX_DEPTH and nested_deeper(
        item[1].get("value"), MAX_DEPTH
    ):
        return BadLine(lineno, text[:200].decode("utf-8", "replace"), f"value nested deeper than {MAX_DEPTH} levels")
    return item


def _old_read(path: Path, strict: bool, keep_entries: bool, max_bytes: int) -> DetailLogData:
    """read_detail as it was: iter_lines -> parse_line -> the depth rule -> one Entry per line."""
    data = DetailLogData(path=str(path))
    for lineno, text in _numbered(path, max_bytes):
        item = _old_item(lineno, text, max_bytes)
        if item is None:
            continue
        if isinstance(item, BadLine):
            if strict:
                raise LogFormatError(item.reason, file=str(path), line=item.line)
            data.n_bad_lines += 1
            if len(data.bad_lines) < MAX_KEPT:
                data.bad_lines.append(item)
            continue
        key, obj = item
        meta = obj.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        entry = Entry(lineno, key, obj.get("value"))
        if keep_entries:
            data.entries.append(entry)
        if keep_entries or key != reader.SKIMMED_KEY:  # no check reads it: not kept
            data.values[key] = entry.value
        data.lines[key] = lineno
        if meta.get("is_error") is True or key.startswith("error_"):
            data.n_errors += 1
            data.errors.append(entry)
        if meta.get("is_warning") is True or key.startswith("warning_"):
            data.n_warnings += 1
            data.warnings.append(entry)
    if not data.values and not data.n_bad_lines:
        raise LogFormatError("no :::MLLOG lines: not a detail log", file=str(path))
    return data


def _nest(n: int) -> str:
    return "[" * n + "1" + "]" * n


VALUES = st.one_of(
    st.sampled_from(["null", "true", "1", "-2.5", "NaN", "Infinity", "1e400", '"\\ud800"', '"x"', "[1, 2, 3]",
                     '{"a": [1, {"b": 2}]}', "[]", "[01,2]", "[1,,2]", "[,1]", "[1,]", "[0,0]", "[0]", "[10,0,3]",
                     "[1,-2]", "[1,2.5]", "[1,2e3]", "[0,[1]]", "[1,2]]"]),
    st.integers(1, 80).map(_nest),
    st.lists(st.integers(0, 10**6), max_size=6).map(lambda v: json.dumps(v, separators=(",", ":"))),  # LoadGen's lists  # around both depth limits (32 for a value, 64 for a line)
    st.text(max_size=12).map(json.dumps),
)
KEYS = st.sampled_from(['"effective_scenario"', '"loaded_qsl_set"', '"error_x"', '"warning_y"', '"k"', "7", "null", '["a"]', '"k\\u0000"'])
METAS = st.sampled_from(['{"is_error": true}', '{"is_warning": true}', '{"is_error": 1}', "{}", "[]", "null", "3"])
AROUND = st.sampled_from([b"", b" ", b"  ", b"\t", b"\x0b", b"\x0c", b" \x0c", b"\r"])
PREFIX = st.sampled_from([b"", b"[1,0]<stdout>:", b"{{[[", b"noise ", b":::ENDPTS"])


@st.composite
def lines(draw: st.DrawFn) -> bytes:
    out: list[bytes] = []
    for _ in range(draw(st.integers(0, 10))):
        kind = draw(st.integers(0, 7))
        marker = draw(st.sampled_from([MARKER, MARKER, ENDPOINTS_MARKER]))
        if kind <= 3:
            body = f'{{"key": {draw(KEYS)}, "value": {draw(VALUES)}, "metadata": {draw(METAS)}}}'.encode()
            out.append(draw(PREFIX) + marker + draw(AROUND) + body + draw(AROUND))
        elif kind == 4:
            out.append(draw(PREFIX) + marker + draw(st.binary(max_size=40)))
        elif kind == 5:
            out.append(draw(st.binary(max_size=40)))
        elif kind == 6:
            out.append(marker + b" " + draw(VALUES).encode())
        else:  # LoadGen's loaded_qsl_set line, whole or broken after its list (the checkers skim the list)
            tail = draw(st.sampled_from([b"}", b",}", b', "metadata": {"is_error": true}}', b"", b" ]}", b', "value": 1}',
                                         b"e0}", b".5}", b"0}"]))  # fmt: skip
            out.append(marker + b' {"key": "loaded_qsl_set", "value": ' + draw(VALUES).encode() + tail)
    sep = draw(st.sampled_from([b"\n", b"\r\n", b"\r"]))
    return sep.join(out) + draw(st.sampled_from([b"", sep]))


def _view(data: DetailLogData) -> tuple[object, ...]:
    return (repr(data.values), data.lines, data.entries, data.errors, data.warnings, data.bad_lines,
            data.n_errors, data.n_warnings, data.n_bad_lines)


def _outcome(read: Callable[[], DetailLogData]) -> tuple[object, ...]:
    try:
        return ("read", _view(read()))
    except LogFormatError as exc:
        return ("refused", str(exc))


@given(data=lines(), strict=st.booleans(), keep=st.booleans(), short=st.booleans())
@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
def test_one_pass_reader_equals_line_by_line(tmp_path: Path, data: bytes, strict: bool, keep: bool, short: bool,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    max_bytes = 64 if short else FULL_LINE_BYTES  # short: the overlong-line path too
    monkeypatch.setattr(reader, "MAX_LINE_BYTES", max_bytes)
    monkeypatch.setattr(reader.iter_lines, "__defaults__", (max_bytes,))
    path = tmp_path / "mlperf_log_detail.txt"
    path.write_bytes(data)
    got = _outcome(lambda: read_detail(path, strict=strict, keep_entries=keep))
    want = _outcome(lambda: _old_read(path, strict, keep, max_bytes))
    assert got == want


ESCAPED = st.sampled_from(['"\\ud800"', '"\\udc00x"', '"\\u00e9"', '"a\\"b"', '"\\\\u"', '"\\n"', '"tab\\tx"'])
LOADGEN_SHAPED = st.one_of(  # mostly the shape read in place; each other case sends the line to _decode_line
    st.builds(
        lambda prefix, gap, key, value, meta, tail: prefix + MARKER + gap
        + f'{{"key": {key}, "value": {value}, "metadata": {meta}}}'.encode() + tail,
        st.sampled_from([b"", b"", b"", b"[1,0]<stdout>:", b":::MLLOG", b"x :::ENDPTS "]),
        st.sampled_from([b" ", b" ", b" ", b"", b"x", b"\t", b"  "]),
        st.one_of(KEYS, ESCAPED),
        st.one_of(VALUES, ESCAPED, ESCAPED.map(lambda s: f"[{s}]")),
        METAS,
        st.sampled_from([b"", b"", b"", b"", b" ", b"\t", b"}", b"x", b" :::MLLOG {}"]),
    ),
    st.sampled_from([b"", b"plain program output, longer than the short bound of sixty-four bytes", b"x"]),
)


@given(
    shaped=st.lists(LOADGEN_SHAPED, min_size=1, max_size=12),
    other=st.one_of(st.just([]), st.lists(lines(), max_size=2)),  # a CR or a non-ASCII byte: streamed
    keep=st.booleans(),
    strict=st.booleans(),
    short=st.booleans(),
    end=st.sampled_from([b"", b"\n"]),
)
@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
def test_a_log_read_whole_reads_as_the_streamed_one(tmp_path: Path, shaped: list[bytes], other: list[bytes], keep: bool,
                                                      strict: bool, short: bool, end: bytes,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A small ASCII log is read whole, its LoadGen-shaped lines decoded in place (reader._read_whole);
    it gives what streaming the same file line by line gives, bad lines and refusals included."""
    max_bytes = 64 if short else FULL_LINE_BYTES
    monkeypatch.setattr(reader, "MAX_LINE_BYTES", max_bytes)
    monkeypatch.setattr(reader.iter_lines, "__defaults__", (max_bytes,))
    path = tmp_path / "mlperf_log_detail.txt"
    path.write_bytes(b"\n".join(shaped + other) + end)
    whole = _outcome(lambda: reader._read_detail(str(path), strict, keep))
    with monkeypatch.context() as streamed:  # (the fixture lasts all examples: this, only this read)
        streamed.setattr(reader, "WHOLE_BYTES", -1)
        assert _outcome(lambda: reader._read_detail(str(path), strict, keep)) == whole


def test_loadgens_own_log_is_read_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    line = b':::MLLOG {"key": "k%d", "value": %d, "metadata": {"is_error": false, "is_warning": false}}'
    path = tmp_path / "mlperf_log_detail.txt"
    path.write_bytes(b"\n".join(line % (i, i) for i in range(50)) + b"\n")
    decoded: list[bytes | None] = []
    keep_line = reader._keep_line
    monkeypatch.setattr(reader, "_keep_line", lambda d, n, text, *a: decoded.append(text) or keep_line(d, n, text, *a))
    data = reader._read_detail(str(path), False, False)
    assert decoded == [] and data.values == {f"k{i}": i for i in range(50)} and data.lines["k49"] == 50


@pytest.mark.parametrize("value", [_nest(MAX_DEPTH + 1), '"\\ud800"', '"x"} :::MLLOG {"key": "y"'])
def test_a_line_of_loadgens_shape_that_needs_more_reads_as_streamed(tmp_path: Path, value: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Too deep, an escape, a second record: such a line in LoadGen's shape is decoded as a streamed
    log decodes it (a bad line; the surrogate replaced; the first record's text refused whole)."""
    path = tmp_path / "mlperf_log_detail.txt"
    path.write_bytes(f':::MLLOG {{"key": "k", "value": {value}, "metadata": {{}}}}\n'.encode())
    whole = _outcome(lambda: reader._read_detail(str(path), False, False))
    monkeypatch.setattr(reader, "WHOLE_BYTES", -1)
    assert _outcome(lambda: reader._read_detail(str(path), False, False)) == whole
    assert whole[0] == "read" and (whole[1][0] == "{}") is (value != '"\\ud800"')
