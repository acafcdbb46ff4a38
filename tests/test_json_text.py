"""proctor.json_text: `loads` gives what `json.loads` gives on the UTF-8 text, whether it decodes with
`json` or (once enough was read) with orjson; `dumps_indented` writes what orjson's OPT_INDENT_2 wrote,
a float that is not finite as null."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor import json_text


@pytest.fixture(params=["json", "orjson"])
def decoder(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Each test runs with loads on json (nothing read yet, orjson not imported) and on orjson."""
    monkeypatch.setattr(json_text, "_decoded", 0)
    monkeypatch.setattr(json_text, "_orjson", orjson if request.param == "orjson" else None)
    if request.param == "json":  # nothing read yet, and orjson (which the tests import) not seen
        monkeypatch.setattr(json_text, "ORJSON_AFTER", 1 << 62)
        monkeypatch.setattr(json_text, "sys", SimpleNamespace(modules={}))
    yield request.param


def _outcome(fn: Any, data: bytes) -> tuple[str, Any]:
    try:
        return "value", repr(fn(data))  # repr: NaN equals itself, and 1 and 1.0 differ
    except RecursionError:
        return "refused", "RecursionError"
    except ValueError as exc:  # worded as json words it (a finding quotes it)
        return "refused", f"{type(exc).__name__}: {exc}"


@contextmanager
def _decoding_with(fast: Any) -> Iterator[None]:
    """loads on orjson (`fast`), or on json alone (None: orjson, which this module imports, unseen)."""
    saved = json_text._orjson, json_text.sys, json_text._decoded
    json_text._orjson, json_text._decoded = fast, 0
    if fast is None:
        json_text.sys = SimpleNamespace(modules={})  # type: ignore[assignment]
    try:
        yield
    finally:
        json_text._orjson, json_text.sys, json_text._decoded = saved


def _json(data: bytes) -> Any:
    return json.loads(data.decode("utf-8"))


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=True) | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
)
EDGES = [b"18446744073709551616", b"-9223372036854775809", b"18446744073709551615", b"[1e400, -1e400]", b"NaN",
         b'"\\ud800"', b'"\xed\xa0\x80"', b"\xef\xbb\xbf{}", b'{"a": 1, "a": 2}', b"-0", b"1E5", b"[]\n", b"{}\x00",
         "{}".encode("utf-16"), b"", b"[" * 100_000, b'"\xff"', b"123456789012345678901234567890",
         b'{"key": "x", "value": 12345678901234567890123}']  # fmt: skip


@pytest.mark.parametrize("data", EDGES, ids=range(len(EDGES)))
def test_edges_read_as_json_reads_them(decoder: str, data: bytes) -> None:
    assert _outcome(json_text.loads, data) == _outcome(_json, data)


@given(value=JSON_VALUES, spaced=st.booleans())
@settings(max_examples=300, deadline=None)
def test_any_json_text_reads_as_json_reads_it(value: Any, spaced: bool) -> None:
    data = json.dumps(value, ensure_ascii=spaced, separators=(", ", ": ") if spaced else (",", ":")).encode()
    for fast in (None, orjson):
        with _decoding_with(fast):
            assert _outcome(json_text.loads, data) == _outcome(_json, data)


@given(data=st.binary(max_size=64))
@settings(max_examples=300, deadline=None)
def test_any_bytes_read_as_json_reads_them(data: bytes) -> None:
    for fast in (None, orjson):
        with _decoding_with(fast):
            assert _outcome(json_text.loads, data) == _outcome(_json, data)


def test_orjson_is_imported_only_past_the_threshold() -> None:
    """A process that decodes less than ORJSON_AFTER bytes never imports orjson; past it, it does."""
    code = (
        "import sys\n"
        "from proctor import json_text\n"
        "line = b'{\"key\": \"k\", \"value\": [1, 2, 3]}'\n"
        "for _ in range(json_text.ORJSON_AFTER // len(line)):\n"
        "    json_text.loads(line)\n"
        "print('orjson' in sys.modules)\n"
        "json_text.loads(line)\n"
        "print('orjson' in sys.modules)\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.stdout.split() == ["False", "True"], res.stderr


@given(value=JSON_VALUES)
@settings(max_examples=200, deadline=None)
def test_dumps_indented_writes_what_orjson_wrote(value: Any) -> None:
    try:
        want = orjson.loads(orjson.dumps(value, option=orjson.OPT_INDENT_2))
    except orjson.JSONEncodeError:  # a lone surrogate or an integer past 64 bits: not in a report
        return
    got = json_text.dumps_indented(value)
    assert repr(json.loads(got)) == repr(want)  # a bare NaN would read back as nan, not None


def test_dumps_indented_layout_and_non_finite_floats() -> None:
    doc = {"verdict": "VALID", "n": [1, 2.5, math.nan, -math.inf], "e": {}, "l": [], "t": "é\n"}
    assert json_text.dumps_indented(doc) == orjson.dumps(doc, option=orjson.OPT_INDENT_2)
