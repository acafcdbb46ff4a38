"""Types of the training compliance tables: one `Ruleset` of `Config`s of `KeyRule`s.

The shape follows the official checker's YAML (a config per division and benchmark, a rule per
log key, a requirement on how often the key occurs, checks run on each line, and code that keeps a
state across lines), so the verdicts line up with the official one; the difference is that each
check is a Python function (never text executed at run time) with the constraint in words for the
finding, and each rule cites the rules-text section it comes from (`sections.py`). The common checks
come from the constructors in `checks.py`, which give the words and the function from one value.

Check functions take `(s, v, ll)`: `s` the config's `State` (a dict, fresh per config), `v` the
line's `{"value": ..., "metadata": {...}}` and `ll` the `Line` (timestamp, key, line number).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping
from enum import StrEnum
from typing import Any

from proctor.typed_records import field, record


class Req(StrEnum):
    EXACTLY_ONE = "EXACTLY_ONE"
    AT_LEAST_ONE = "AT_LEAST_ONE"
    AT_LEAST = "AT_LEAST"  # with KeyRule.at_least = n
    AT_LEAST_ONE_OR = "AT_LEAST_ONE_OR"  # with KeyRule.alternatives
    OPTIONAL = "OPTIONAL"
    NONE = "NONE"  # no occurrence requirement


class State(dict):
    """The cross-line state `s` of one config; `enqueue` queues the next config to run."""

    def __init__(self, enqueue: Callable[[str], None], benchmarks: frozenset[str]) -> None:
        super().__init__()
        self.enqueue = enqueue
        self.benchmarks = benchmarks  # names accepted as submission_benchmark (tables + registered)


@record(frozen=True, slots=True)
class Line:
    """What a check may read of a log line (the official `LogLine` fields)."""

    lineno: int  # 1-based physical line number in the file
    key: str
    timestamp: float
    value: dict[str, Any]  # {"value": ..., "metadata": {...}}


CheckFn = Callable[[State, dict[str, Any], Line], Any]
ActionFn = Callable[[State, dict[str, Any], Line], None]


@record(frozen=True, slots=True)
class Check:
    expr: str  # the constraint in words (the official expression where there is one)
    fn: CheckFn


@record(frozen=True, slots=True)
class KeyRule:
    name: str
    req: Req = Req.NONE
    checks: tuple[Check, ...] = ()
    pre: ActionFn | None = None
    post: ActionFn | None = None
    first_check: tuple[Check, ...] = ()  # only on the key's first occurrence
    atleast_one: Check | None = None  # must hold on at least one occurrence (quality target)
    at_least: int = 1  # for Req.AT_LEAST
    alternatives: tuple[str, ...] = ()  # for Req.AT_LEAST_ONE_OR
    source: str = ""  # rules-text section


@record(frozen=True, slots=True)
class EndRule:
    pre: Callable[[State], None] | None = None
    checks: tuple[tuple[str, Callable[[State], Any]], ...] = ()


@record(frozen=True, slots=True)
class Config:
    name: str  # e.g. "common", "closed_common", "closed_llama31_8b"
    keys: tuple[KeyRule, ...]
    begin: Callable[[State], None] | None = None
    end: EndRule | None = None
    source: str = ""

    def by_key(self) -> dict[str, KeyRule]:
        return {k.name: k for k in self.keys}

    def derive(
        self,
        *,
        replace: Iterable[KeyRule] = (),
        drop: Iterable[str] = (),
        add: Iterable[KeyRule] = (),
        before: str | None = None,
        name: str | None = None,
        cite: Mapping[str, str] | None = None,
    ) -> Config:
        """This table as a later ruleset (or a sibling benchmark) changes it, rule by rule.

        `drop` removes the rules of those keys; `replace` puts each rule in the place of the rule
        of its key; `add` appends new rules, or inserts them before the rule of key `before`.
        `cite` maps a section to the one the derived table cites instead, in every rule (a
        sibling table that restates this one under another section, as open_gpt3 does closed_gpt3).
        Everything else (the other rules, `begin`, `end`, `source`) is kept, so a ruleset module
        reads as the difference the rules text made. A key that is not there to drop or replace,
        or added twice, or a section no rule cites, is an error in the table, not a silent no-op.
        """
        keys = list(self.keys)
        names = [k.name for k in keys]
        for key in drop:
            if key not in names:
                raise ValueError(f"{self.name}: cannot drop {key!r}, no such rule")
            keys = [k for k in keys if k.name != key]
            names = [k.name for k in keys]
        for rule in replace:
            if rule.name not in names:
                raise ValueError(f"{self.name}: cannot replace {rule.name!r}, no such rule")
            keys = [rule if k.name == rule.name else k for k in keys]
        new = tuple(add)
        for rule in new:
            if rule.name in names or [r.name for r in new].count(rule.name) > 1:
                raise ValueError(f"{self.name}: {rule.name!r} is added twice")
        if before is None:
            at = len(keys)
        elif before in names:
            at = names.index(before)
        else:
            raise ValueError(f"{self.name}: cannot add before {before!r}, no such rule")
        keys[at:at] = new
        if cite:
            unused = set(cite) - {k.source for k in keys}
            if unused:
                raise ValueError(f"{self.name}: no rule cites {sorted(unused)!r}")
            keys = [dataclasses.replace(k, source=cite.get(k.source, k.source)) for k in keys]
        return dataclasses.replace(self, name=name or self.name, keys=tuple(keys))


@record(slots=True)
class Ruleset:
    version: str  # "6.1.0"
    configs: dict[str, Config]
    benchmarks: tuple[str, ...]  # benchmarks of the rules' tables
    root: str = "common"
    # benchmarks outside the official tables (proctor.training.benchmarks), on the copy a lookup makes;
    # a ruleset module's own object never holds any
    extra_benchmarks: frozenset[str] = frozenset()
    # what a run needs before the checker sees its log (the harness reads these, no copy):
    init_limit_mins: Mapping[str, int] = field(default_factory=dict)  # per division, §11 Run Results
    precisions: tuple[str, ...] = ()  # approved numerical formats, §5 Basics (from 6.0.0 on)

    def allowed_benchmarks(self) -> frozenset[str]:
        return frozenset(self.benchmarks) | self.extra_benchmarks


def is_integer(value: Any) -> bool:
    """The official checker's `is_integer`: within 1e-5 of an integer."""
    return abs(round(value) - value) < 0.00001


__all__ = ["Check", "Config", "EndRule", "KeyRule", "Line", "Req", "Ruleset", "State", "is_integer", "math"]


@record(frozen=True, slots=True)
class Cadence:
    """When a benchmark evaluates, in training samples, as a function of the global batch size."""

    first: Callable[[int], int]  # samples_count of the first evaluation
    interval: Callable[[int], int]  # samples between later evaluations
    source: str = ""
