"""SUT parameters from typed fields: one dataclass per SUT says how its `k=v` parameters parse.

    @record(frozen=True)
    class MyParams:
        workers: int = param(2, "worker threads", low=1)
        mode: str = param("sleep", "how time passes", choices=("sleep", "spin"))

    @takes(MyParams)
    def from_params(p: MyParams) -> tuple[SUT, QSL]: ...

From the fields come the parsing (by type), the defaults, the checks (numbers finite and in
range, a value among its choices), the refusals (an unknown key with a did-you-mean, a repeated
key) and the `--list-suts` text, so every SUT, proctor's or a user's, reads its parameters the
same way. Field types: `str`, `int`, `float`, `bool`, `X | None` (not given: None), and
`tuple[str, ...]` (a list: `k=A|B`, or the key repeated, the one key that may be).

Booleans have one vocabulary everywhere: true/false, 1/0, yes/no, on/off, in any case.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import math
import re
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from proctor.errors import ConfigError
from proctor.suts.context import RunContext, takes_context
from proctor.typed_records import record

TRUE_WORDS = ("true", "1", "yes", "on")
FALSE_WORDS = ("false", "0", "no", "off")
BOOL_WORDS = "true/false, 1/0, yes/no or on/off"
LIST_SEPARATOR = "|"  # a list value: k=A|B (',' separates parameters)

T = TypeVar("T")
R = TypeVar("R")


@record(frozen=True, slots=True)
class Param:
    """One parameter as `--list-suts` shows it: default "" means required."""

    name: str
    default: str
    help: str = ""


@record(frozen=True, slots=True)
class _Meta:
    help: str = ""
    low: float | None = None
    high: float | None = None
    low_open: bool = False  # low itself is out of range
    choices: tuple[str, ...] = ()
    key: str | None = None  # the k= name when it is not the field's (e.g. `in`, a keyword)
    aliases: str | None = None  # a regex of further keys for this field (node1=, node2=, ...)
    shown: str | None = None  # the default as --list-suts shows it, when it is derived


_META = "proctor.param"


def param(
    default: Any = dataclasses.MISSING,
    help: str = "",  # noqa: A002 - the word users write
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    choices: Sequence[str] = (),
    key: str | None = None,
    aliases: str | None = None,
    shown: str | None = None,
) -> Any:
    """A dataclass field that is a SUT parameter: its default, what it does and what it accepts."""
    meta = _Meta(help, low, high, low_open, tuple(choices), key, aliases, shown)
    return dataclasses.field(default=default, metadata={_META: meta})


@record(frozen=True, slots=True)
class _Field:
    name: str  # the dataclass field
    key: str  # the k= name
    kind: Any  # str, int, float, bool or tuple (a list of str)
    optional: bool
    meta: _Meta
    default: Any  # dataclasses.MISSING when required


def _kind(annotation: Any) -> tuple[Any, bool]:
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and type(None) in args:
        inner = [a for a in args if a is not type(None)]
        if len(inner) == 1:
            return _kind(inner[0])[0], True
    if typing.get_origin(annotation) is tuple:
        return tuple, False
    if annotation in (str, int, float, bool):
        return annotation, False
    raise TypeError(f"a SUT parameter is str, int, float, bool, X | None or tuple[str, ...], not {annotation}")


_FIELDS: dict[type, tuple[_Field, ...]] = {}


def fields(cls: type) -> tuple[_Field, ...]:
    """The parameters a params dataclass declares, in declaration order."""
    if cls not in _FIELDS:
        _FIELDS[cls] = _read_fields(cls)
    return _FIELDS[cls]


def _read_fields(cls: type) -> tuple[_Field, ...]:
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        meta = f.metadata.get(_META, _Meta())
        kind, optional = _kind(hints[f.name])
        default = f.default if f.default_factory is dataclasses.MISSING else f.default_factory()
        out.append(_Field(f.name, meta.key or f.name, kind, optional, meta, default))
    return tuple(out)


def is_params(obj: object) -> bool:
    """True for a dataclass type that can declare SUT parameters."""
    return isinstance(obj, type) and dataclasses.is_dataclass(obj)


def _field_for(cls: type, key: str) -> _Field | None:
    for f in fields(cls):
        if key == f.key or (f.meta.aliases and re.fullmatch(f.meta.aliases, key)):
            return f
    return None


def unknown_key(key: str, known: Sequence[str], sut: str) -> ConfigError:
    """The one error for a key a SUT does not take: the closest known key, and all of them."""
    hint = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    return ConfigError(
        f"unknown {sut} SUT parameter '{key}'"
        + (f"; did you mean '{hint[0]}'?" if hint else "")
        + f" (known: {', '.join(known) or 'none'}; see proctor run --list-suts)",
        key=key,
    )


def repeated_key(key: str, sut: str) -> ConfigError:
    return ConfigError(f"given twice to the {sut} SUT; give each parameter once", key=key)


def merge(pairs: Sequence[tuple[str, str]], cls: type | None, sut: str) -> dict[str, str]:
    """k=v pairs as given -> one value per key; a repeated key is refused, except a list's (joined with '|')."""
    out: dict[str, str] = {}
    for key, value in pairs:
        if key in out:
            f = _field_for(cls, key) if cls is not None else None
            if f is None or f.kind is not tuple:
                raise repeated_key(key, sut)
            out[key] = f"{out[key]}{LIST_SEPARATOR}{value}"
        else:
            out[key] = value
    return out


def parse_bool(raw: str, key: str) -> bool:
    word = raw.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise ConfigError(f"'{raw}' is not a yes/no value; give {BOOL_WORDS}", key=key)


def _range_text(f: _Field) -> str:
    m = f.meta
    if m.low is not None and m.high is not None:
        return f"{'(' if m.low_open else '['}{m.low:g}, {m.high:g}]"
    if m.low is not None:
        return f"{'>' if m.low_open else '>='} {m.low:g}"
    if m.high is not None:
        return f"<= {m.high:g}"
    return ""


def _number(f: _Field, raw: str) -> int | float:
    what = "an integer" if f.kind is int else "a finite number"
    try:
        value: int | float = int(raw) if f.kind is int else float(raw)
    except ValueError:
        raise ConfigError(f"'{raw}' is not {what}", key=f.key) from None
    if not math.isfinite(value):
        raise ConfigError(f"'{raw}' is not {what}", key=f.key)
    m = f.meta
    low_bad = m.low is not None and (value <= m.low if m.low_open else value < m.low)
    high_bad = m.high is not None and value > m.high
    if low_bad or high_bad:
        raise ConfigError(f"{raw} is out of range: give {what} {_range_text(f)}", key=f.key)
    return value


def _value(f: _Field, raw: str | Sequence[str]) -> Any:
    if f.kind is tuple:
        items = [raw] if isinstance(raw, str) else list(raw)
        return tuple(v.strip() for item in items for v in str(item).split(LIST_SEPARATOR) if v.strip())
    if not isinstance(raw, str):
        raise repeated_key(f.key, "")
    if f.optional and raw.strip() == "":
        return None
    if f.kind is bool:
        return parse_bool(raw, f.key)
    if f.kind in (int, float):
        return _number(f, raw.strip())
    if f.meta.choices and raw not in f.meta.choices:
        hint = difflib.get_close_matches(raw, f.meta.choices, n=1, cutoff=0.6)
        raise ConfigError(
            f"'{raw}' is not one of {', '.join(f.meta.choices)}" + (f"; did you mean '{hint[0]}'?" if hint else ""),
            key=f.key,
        )
    return raw


def parse(cls: type[T], params: Mapping[str, str | Sequence[str]], sut: str) -> T:
    """The params dataclass from `k=v` strings (a list's value may also be a sequence of strings)."""
    values: dict[str, Any] = {}
    for key, raw in params.items():
        f = _field_for(cls, key)
        if f is None:
            raise unknown_key(key, [g.key for g in fields(cls)], sut)
        value = _value(f, raw)
        if f.name in values and f.kind is tuple:  # node=A,node1=B: one list
            value = values[f.name] + value
        values[f.name] = value
    missing = [f.key for f in fields(cls) if f.default is dataclasses.MISSING and f.name not in values]
    if missing:
        raise ConfigError(f"the {sut} SUT needs {missing[0]}=...", key=missing[0])
    return cls(**values)


def _shown(f: _Field) -> str:
    if f.meta.shown is not None:
        return f.meta.shown
    if f.default is dataclasses.MISSING:
        return ""
    if f.default is None:
        return "none"
    if f.kind is bool:
        return "1" if f.default else "0"
    if f.kind is tuple:
        return LIST_SEPARATOR.join(f.default)
    return str(f.default)


def _accepts(f: _Field) -> str:
    if f.kind is bool:
        return BOOL_WORDS
    if f.meta.choices:
        return "one of " + ", ".join(f.meta.choices)
    if f.kind is tuple:
        return f"a list: A{LIST_SEPARATOR}B or the key repeated"
    return _range_text(f)


def describe(cls: type) -> list[Param]:
    """What `--list-suts` shows: each key, its default and its help with what it accepts."""
    out = []
    for f in fields(cls):
        accepts = _accepts(f)
        text = f.meta.help + (f" [{accepts}]" if accepts else "")
        out.append(Param(f.key, _shown(f), text.strip()))
    return out


def takes(cls: type[T], sut: str) -> Callable[[Callable[..., R]], Callable[..., R]]:
    """Make `factory(p: cls)` a registry factory: it takes `k=v` strings, parses them into `cls` and
    calls the factory; `factory.PARAMS` is `cls`, so `--list-suts` shows the fields. `sut` names the
    SUT in error messages. A factory `f(p, context=None)` also gets the run's `RunContext`
    (suts/context.py: the benchmark and mode) when the registry has one."""

    def wrap(factory: Callable[..., R]) -> Callable[..., R]:
        wants_context = takes_context(factory)

        @functools.wraps(factory)
        def from_strings(*, context: RunContext | None = None, **params: str | Sequence[str]) -> R:
            parsed = parse(cls, params, sut)
            return factory(parsed, context=context) if wants_context else factory(parsed)

        from_strings.PARAMS = cls  # type: ignore[attr-defined]
        from_strings.TAKES_CONTEXT = wants_context  # type: ignore[attr-defined]
        return from_strings

    return wrap


__all__ = [
    "BOOL_WORDS",
    "FALSE_WORDS",
    "TRUE_WORDS",
    "Param",
    "describe",
    "fields",
    "is_params",
    "merge",
    "param",
    "parse",
    "parse_bool",
    "takes",
    "unknown_key",
]
