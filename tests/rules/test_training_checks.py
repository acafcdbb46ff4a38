"""The check constructors of the training tables: one value gives the text and the test, and they agree."""

from __future__ import annotations

from typing import Any

import pytest

from proctor.rules.training.checks import (
    all_of,
    any_of,
    benchmark_in,
    between,
    eq,
    ge,
    grouped,
    gt,
    in_metadata,
    in_metadata_any,
    integer,
    le,
    lt,
    ne,
    one_of,
    spelled,
)
from proctor.rules.training.types import Check, Config, KeyRule, State


def _state(*benchmarks: str) -> State:
    return State(lambda name: None, frozenset(benchmarks))


def _ok(c: Check, value: Any, metadata: dict[str, Any] | None = None, s: State | None = None) -> Any:
    return c.fn(s if s is not None else _state(), {"value": value, "metadata": metadata or {}}, None)


@pytest.mark.parametrize(
    ("check", "text", "passes", "fails"),
    [
        (eq(0.9), "v['value'] == 0.9", [0.9], [0.95, 0, "0.9"]),
        (eq("adamw"), "v['value'] == 'adamw'", ["adamw"], ["adam", ""]),
        (eq(0), "v['value'] == 0", [0, 0.0], [1]),
        (eq(0.0), "v['value'] == 0.0", [0], [1e-9]),
        (ne(""), "v['value'] != ''", ["x"], [""]),
        (gt(0), "v['value'] > 0", [1, 1e-9], [0, -1]),
        (ge(15360), "v['value'] >= 15360", [15360, 15361], [15359]),
        (lt(1.0), "v['value'] < 1.0", [0.99], [1.0, 2]),
        (le(1.0), "v['value'] <= 1.0", [1.0, 0], [1.01]),
        (between(0.0, 1.0), "0.0 <= v['value'] <= 1.0", [0.0, 0.5, 1.0], [-0.1, 1.1]),
        (one_of("closed", "open"), "v['value'] in ['closed', 'open']", ["open"], ["Open", ""]),
        (integer(), "is_integer(v['value'])", [3, 3.000001], [3.1]),
        (all_of(integer(), gt(0)), "is_integer(v['value']) and v['value'] > 0", [2], [0, 2.5]),
        (all_of(grouped(le(3.6)), gt(0.0)), "(v['value'] <= 3.6) and v['value'] > 0.0", [3.6, 0.1], [0.0, 3.7]),
        (any_of(eq(spelled("2e-5")), eq(spelled("3e-5"))), "v['value'] == 2e-5 or v['value'] == 3e-5", [2e-5, 3e-5], [1e-5]),
        (eq(spelled("1e-8")), "v['value'] == 1e-8", [1e-8], [1e-7]),
        (all_of(ge(spelled("0.720")), lt(1.0)), "v['value'] >= 0.720 and v['value'] < 1.0", [0.72, 0.9], [0.71, 1.0]),
    ],
)  # fmt: skip
def test_text_and_test_from_one_value(check: Check, text: str, passes: list[Any], fails: list[Any]) -> None:
    assert check.expr == text
    assert all(_ok(check, x) for x in passes), passes
    assert not any(_ok(check, x) for x in fails), fails


def test_a_check_is_a_closure_named_as_a_lambda() -> None:
    """The pinned table dump writes a check's function by its name: the constructors' are lambdas."""
    for c in (eq(1), between(0, 1), one_of("a"), all_of(gt(0), lt(2)), any_of(gt(0)), in_metadata("x")):
        assert c.fn.__name__ == "<lambda>"


def test_spelled_keeps_the_text_and_compares_as_the_number() -> None:
    x = spelled("0.7590")
    assert (repr(x), x == 0.759, isinstance(x, float)) == ("0.7590", True, True)
    assert repr(eq(spelled("1e-8")).expr) != repr(eq(1e-8).expr)  # Python writes 1e-08


def test_comparisons_fail_as_the_official_expression_does() -> None:
    """A value of the wrong type raises (the finding says it cannot evaluate), as `v > 0` would."""
    with pytest.raises(TypeError):
        _ok(gt(0), "3")
    with pytest.raises(TypeError):
        _ok(all_of(integer(), gt(0)), None)
    assert _ok(all_of(eq(1), gt("x")), 2) is False  # `and` stops at the first failing check


def test_benchmark_in_accepts_the_tables_and_those_given_beside_them() -> None:
    c = benchmark_in("bert", "gpt3")
    assert c.expr == "v['value'] in ['bert', 'gpt3']"
    assert _ok(c, "bert") and not _ok(c, "digits_train")
    assert _ok(c, "digits_train", s=_state("digits_train"))


def test_metadata_checks() -> None:
    assert in_metadata("epoch_num").expr == "'epoch_num' in v['metadata']"
    assert _ok(in_metadata("epoch_num"), 0, {"epoch_num": 1}) and not _ok(in_metadata("epoch_num"), 0, {})
    both = in_metadata_any("epoch_num", "samples_count")
    assert both.expr == "('epoch_num' in v['metadata']) | ('samples_count' in v['metadata'])"
    assert (
        _ok(both, 0, {"samples_count": 1}) and _ok(both, 0, {"epoch_num": 1}) and not _ok(both, 0, {"x": 1})
    )


def test_derive_cite_maps_sections_and_refuses_one_no_rule_cites() -> None:
    base = Config("closed_x", (KeyRule("a", source="§9 closed"), KeyRule("b", source="§3")))
    d = base.derive(name="open_x", cite={"§9 closed": "§9 open"})
    assert [(k.name, k.source) for k in d.keys] == [("a", "§9 open"), ("b", "§3")] and d.name == "open_x"
    assert base.keys[0].source == "§9 closed"
    with pytest.raises(ValueError, match="no rule cites"):
        base.derive(cite={"§7": "§8"})
