"""Constructors of the common checks: one value gives both the constraint's text and its test.

A table writes `eq(0.9)` once instead of `Check("v['value'] == 0.9", lambda s, v, ll: v["value"] == 0.9)`,
so the words a finding prints and the test the checker runs cannot drift apart. The text is the
official checker's expression, spelled as its YAML spells it (the findings and the pinned table
hashes show it): a constant is written as Python writes it, or as `spelled("1e-8")` where the
official text spells the number otherwise. Each constructor builds a closure over its constant;
nothing is parsed or evaluated at run time. Irregular constraints stay `Check(text, function)`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from proctor.rules.training.types import Check, is_integer

__all__ = [
    "all_of",
    "any_of",
    "benchmark_in",
    "between",
    "eq",
    "ge",
    "grouped",
    "gt",
    "in_metadata",
    "in_metadata_any",
    "integer",
    "le",
    "lt",
    "ne",
    "one_of",
    "spelled",
]

_V = "v['value']"


class Spelled(float):
    """A number that keeps the spelling the official text gives it (`1e-8`, `0.720`)."""

    __slots__ = ("text",)
    text: str

    def __new__(cls, text: str) -> Spelled:
        self = super().__new__(cls, text.replace("_", ""))
        self.text = text
        return self

    def __repr__(self) -> str:
        return self.text


def spelled(text: str) -> Spelled:
    """The number `text` denotes, written in a constraint as `text` is."""
    return Spelled(text)


Constant = str | int | float


def _text(value: Constant) -> str:
    return repr(value)


def _plain(value: Constant) -> Constant:
    return float(value) if isinstance(value, Spelled) else value


def _compare(op: Callable[[Any, Any], Any], symbol: str, value: Constant) -> Check:
    c = _plain(value)
    return Check(f"{_V} {symbol} {_text(value)}", lambda s, v, ll: op(v["value"], c))


def eq(value: Constant) -> Check:
    """The value equals `value`."""
    return _compare(operator.eq, "==", value)


def ne(value: Constant) -> Check:
    """The value differs from `value` (`ne('')`: not empty)."""
    return _compare(operator.ne, "!=", value)


def gt(value: Constant) -> Check:
    return _compare(operator.gt, ">", value)


def ge(value: Constant) -> Check:
    return _compare(operator.ge, ">=", value)


def lt(value: Constant) -> Check:
    return _compare(operator.lt, "<", value)


def le(value: Constant) -> Check:
    return _compare(operator.le, "<=", value)


def between(low: Constant, high: Constant) -> Check:
    """`low <= value <= high`, both ends included."""
    lo, hi = _plain(low), _plain(high)
    return Check(f"{_text(low)} <= {_V} <= {_text(high)}", lambda s, v, ll: lo <= v["value"] <= hi)


def _listed(values: tuple[Constant, ...]) -> str:
    return "[" + ", ".join(_text(x) for x in values) + "]"


def one_of(*values: Constant) -> Check:
    """The value is one of `values`."""
    allowed = tuple(_plain(x) for x in values)
    return Check(f"{_V} in {_listed(values)}", lambda s, v, ll: v["value"] in allowed)


def benchmark_in(*names: str) -> Check:
    """`submission_benchmark` names a benchmark of the rules' tables, or one the checker was given
    beside them (`State.benchmarks`); the text names the tables' own, as the official one does."""
    allowed = tuple(names)
    return Check(
        f"{_V} in {_listed(names)}", lambda s, v, ll: v["value"] in allowed or v["value"] in s.benchmarks
    )


def integer() -> Check:
    """The value is within 1e-5 of an integer (the official `is_integer`)."""
    return Check(f"is_integer({_V})", lambda s, v, ll: is_integer(v["value"]))


def in_metadata(key: str) -> Check:
    """The line's metadata carries `key`."""
    return Check(f"{key!r} in v['metadata']", lambda s, v, ll: key in v["metadata"])


def in_metadata_any(*keys: str) -> Check:
    """The line's metadata carries at least one of `keys`."""
    text = " | ".join(f"({k!r} in v['metadata'])" for k in keys)
    return Check(text, lambda s, v, ll: any(k in v["metadata"] for k in keys))


def grouped(check: Check) -> Check:
    """The same check, its text in parentheses (as the official text writes some conjunctions)."""
    return Check(f"({check.expr})", check.fn)


def all_of(first: Check, *rest: Check) -> Check:
    """Every check holds, tried in order as `and` does (a later one is not run once one fails)."""
    checks = (first, *rest)
    return Check(" and ".join(c.expr for c in checks), lambda s, v, ll: _all(checks, s, v, ll))


def _all(checks: tuple[Check, ...], s: Any, v: dict[str, Any], ll: Any) -> Any:
    out: Any = True
    for c in checks:
        out = c.fn(s, v, ll)
        if not out:
            break
    return out


def any_of(first: Check, *rest: Check) -> Check:
    """At least one check holds, tried in order as `or` does."""
    checks = (first, *rest)
    return Check(" or ".join(c.expr for c in checks), lambda s, v, ll: _any(checks, s, v, ll))


def _any(checks: tuple[Check, ...], s: Any, v: dict[str, Any], ll: Any) -> Any:
    out: Any = False
    for c in checks:
        out = c.fn(s, v, ll)
        if out:
            break
    return out
