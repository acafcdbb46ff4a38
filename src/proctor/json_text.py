"""JSON text to values and back for the readers of submitted logs, as the standard library reads and
writes it, at orjson's speed where that pays.

A check of a small tree decodes well under a megabyte of JSON, and importing orjson (it imports
dataclasses, inspect, uuid and datetime) cost more CPU than decoding that with `json` (issue 33 §3):
so `loads` decodes with `json` until the process has decoded `ORJSON_AFTER` bytes, and with orjson
from then on. The value is the same either way. orjson is asked first only where it gives what
`json.loads` gives: it refuses some text `json` accepts (NaN, lone surrogates), and `json` then reads
it; and it turns whole numbers past 64 bits into floats, so a text holding a run of 19 digits (the
shortest such number) goes to `json`.
"""

from __future__ import annotations

import json
import json.decoder
import math
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ORJSON_AFTER = 2 << 20  # bytes decoded by json before orjson's import pays for itself
_LONG_NUMBER = b"9" * 19  # digits in a row, after _DIGITS: a whole number orjson may not hold
_DIGITS = bytes(0x39 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))

_SPACE = " \t\n\r"  # JSON's whitespace
# what json.loads scans with (the C scanner where built): scan(text, i) -> (the value at text[i], where
# it ends), StopIteration where no value starts there; typeshed does not declare the attribute
scan = json.decoder.JSONDecoder().scan_once  # type: ignore[attr-defined]

_decoded = 0
_orjson: Any = None


def loads(data: bytes) -> Any:
    """The value `json.loads(data.decode("utf-8"))` gives, raising what it raises (ValueError,
    UnicodeDecodeError among them, or RecursionError)."""
    global _decoded, _orjson
    _decoded += len(data)
    if _orjson is None and (_decoded > ORJSON_AFTER or "orjson" in sys.modules):
        import orjson

        _orjson = orjson
    if _orjson is not None and _LONG_NUMBER not in data.translate(_DIGITS):
        try:
            return _orjson.loads(data)
        except _orjson.JSONDecodeError:
            pass  # json decides: it reads some of what orjson refuses, and says why it refuses the rest
    text = data.decode("utf-8")
    start = len(text) - len(text.lstrip(_SPACE)) if text[:1] in _SPACE else 0
    if text[:1] != "\ufeff":  # json.loads's own steps (its scanner, then only whitespace after the
        try:  # value), without its layers of Python calls: a third of a short line's decoding
            value, end = scan(text, start)
            if end == len(text) or not text[end:].strip(_SPACE):
                return value
        except StopIteration:
            pass
    return json.loads(text)  # a refusal, worded as json words it


def dumps_indented(value: Any) -> bytes:
    """`value` (dicts with text keys, lists, text, numbers, booleans, None) as UTF-8 JSON text
    indented by two spaces. A float that is not finite is written as null, as orjson writes it:
    `NaN` is not JSON."""
    try:
        text = json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False)
    except ValueError:
        text = json.dumps(_finite(value), indent=2, ensure_ascii=False, allow_nan=False)
    return text.encode("utf-8")


def _finite(value: Any) -> Any:
    """`value` with each float that is not finite replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value
