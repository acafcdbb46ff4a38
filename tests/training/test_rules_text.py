"""The rules-text checks (rules/training/rules_text.py): each rule rejects the log that breaks it with a
finding naming the rule, accepts its compliant counterpart, and is one the official checker does not
make (it accepts the breaking log), which docs/deviations.md lists."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proctor.rules.training import rules_text
from proctor.training.compliance import ComplianceReport, check_file
from tests.support import synthetic_logs as sl

from .official_oracle import official_verdict


def _insert_after(events: list[sl.Event], after: str, key: str, value: Any) -> list[sl.Event]:
    """A copy with a `key` event right after the first `after` event."""
    i = next(i for i, e in enumerate(events) if e.key == after)
    return [*events[: i + 1], replace(events[i], key=key, value=value), *events[i + 1 :]]


def _evals_at(events: list[sl.Event], points: list[int]) -> list[sl.Event]:
    """A copy whose evaluations (block/eval events and run_stop) sit at `points` samples."""
    out: list[sl.Event] = []
    n = 0
    for e in events:
        if e.key in ("eval_start", "eval_accuracy", "eval_stop", "block_stop"):
            e = replace(e, metadata={**e.metadata, "samples_count": points[n]})
            if e.key == "eval_stop":
                n += 1
        out.append(e)
    return out


def _check(
    tmp_path: Path, events: list[sl.Event], ruleset: str = "6.1.0", name: str = "r.txt"
) -> ComplianceReport:
    return check_file(sl.write_log(tmp_path / name, events), ruleset)


def _rules_text_errors(rep: ComplianceReport) -> list[tuple[str, str | None]]:
    return [(f.rule, f.source) for f in rep.errors if f.rule.startswith("rules_text:")]


# (benchmark, key, breaking value, compliant value, section the finding cites)
FIXED: list[tuple[str, str, Any, Any, str]] = [
    ("llama2_70b_lora", "opt_gradient_clip_norm", 1.0, 0.3, "opt_gradient_clip_norm"),
    ("llama2_70b_lora", "lora_alpha", 16, 32, "lora_alpha"),
    ("llama2_70b_lora", "opt_adamw_weight_decay", 0.1, 1e-4, "opt_adamw_weight_decay"),
    (
        "llama31_8b",
        "opt_end_learning_rate",
        4e-6,
        4e-5,
        "opt_end_learning_rate = opt_base_learning_rate * 0.1",
    ),
    (
        "gpt_oss_20b",
        "opt_end_learning_rate",
        4e-4,
        4e-5,
        "opt_end_learning_rate = opt_base_learning_rate * 0.1",
    ),
]


@pytest.mark.parametrize(("bench", "key", "bad", "good", "cited"), FIXED)
def test_fixed_value_breaking_and_compliant(
    bench: str, key: str, bad: Any, good: Any, cited: str, tmp_path: Path
) -> None:
    base = sl.valid_events(bench)
    broken = _check(tmp_path, sl.with_value(base, key, bad), name="bad.txt")
    assert not broken.valid
    errors = _rules_text_errors(broken)
    assert errors and all(rule == f"rules_text:{key}" for rule, _ in errors)
    assert all(src and src.startswith(rules_text.HP_TABLE) and cited in src for _, src in errors)
    assert any("official checker does not check" in f.message for f in broken.errors)
    assert _check(tmp_path, sl.with_value(base, key, good), name="good.txt").valid


# keys the reference does not log: checked when a log carries them, never required
LOGGED_IF_PRESENT: list[tuple[str, str, Any, Any]] = [
    ("llama31_8b", "dropout", 0.1, 0.0),
    ("gpt_oss_20b", "dropout", 0.05, 0.0),
    ("llama2_70b_lora", "lora_dropout", 0.05, 0.1),
    ("llama2_70b_lora", "max_sequence_length", 4096, 8196),
    ("llama2_70b_lora", "max_sequence_length", 2048, 8192),
    ("deepseekv3_671b", "moe_routed_bias_update_rate", 1e-2, 1e-3),
    ("qwen35_397b_grpo", "grpo.use_dynamic_sampling", True, False),
    ("qwen35_397b_grpo", "loss_fn.truncated_importance_sampling_ratio", 1.2, 1.002),
    ("qwen35_397b_grpo", "loss_fn.truncated_importance_sampling_ratio_min", 0.9, 0.999),
    ("qwen35_397b_grpo", "agent_max_turns", 50, 30),
    ("qwen35_397b_grpo", "data.shuffle", True, False),
    ("qwen35_397b_grpo", "policy.megatron_cfg.draft.enabled", True, False),
    ("qwen35_397b_grpo", "lora", True, False),
    ("dlrmv4", "opt_sparse_epsilon", 1e-6, 1e-8),
    ("dlrmv4", "opt_sparse_weight_decay", 0.1, 0.0),
    ("dlrmv4", "hstu_attn_num_layers", 4, 3),
    ("dlrmv4", "history_length", 2048, 4086),
]


@pytest.mark.parametrize(("bench", "key", "bad", "good"), LOGGED_IF_PRESENT)
def test_fixed_when_logged(bench: str, key: str, bad: Any, good: Any, tmp_path: Path) -> None:
    base = sl.valid_events(bench)
    assert _check(tmp_path, base, name="none.txt").valid  # not logged: not required
    broken = _check(tmp_path, _insert_after(base, "global_batch_size", key, bad), name="bad.txt")
    assert [rule for rule, _ in _rules_text_errors(broken)] == [f"rules_text:{key}"]
    assert not broken.valid
    assert _check(tmp_path, _insert_after(base, "global_batch_size", key, good), name="good.txt").valid


def test_end_learning_rate_logged_before_base_is_checked(tmp_path: Path) -> None:
    base = sl.with_value(sl.valid_events("llama31_8b"), "opt_end_learning_rate", 4e-6)
    i_base = next(i for i, e in enumerate(base) if e.key == "opt_base_learning_rate")
    i_end = next(i for i, e in enumerate(base) if e.key == "opt_end_learning_rate")
    swapped = list(base)
    swapped[i_base], swapped[i_end] = swapped[i_end], swapped[i_base]
    rep = _check(tmp_path, swapped)
    assert [r for r, _ in _rules_text_errors(rep)] == ["rules_text:opt_base_learning_rate"]


def test_gpt_oss_v60_exception_allows_4e5_only_in_6_0_0(tmp_path: Path) -> None:
    # §21 v6.0 Specific Rules: end LR 4e-5 (the reference's default) or 0.1 x base, in v6.0 only
    ev = sl.with_value(sl.valid_events("gpt_oss_20b"), "opt_base_learning_rate", 8e-4)
    assert _check(tmp_path, ev, "6.0.0", "v60.txt").valid
    rep = _check(tmp_path, ev, "6.1.0", "v61.txt")
    assert [r for r, _ in _rules_text_errors(rep)] == ["rules_text:opt_end_learning_rate"]
    other = sl.with_value(ev, "opt_end_learning_rate", 5e-5)  # neither 4e-5 nor 0.1 x base
    assert not _check(tmp_path, other, "6.0.0", "v60_other.txt").valid


@pytest.mark.parametrize(
    ("bench", "points", "ok"),
    [
        ("llama31_8b", [12288, 24576, 36864], True),
        ("llama31_8b", [12256, 24544, 36832], True),  # published v5.1 logs: k * 12288 - gbs
        ("llama31_8b", [12288, 18432, 24576], False),  # every 6144: twice as often
        ("llama31_8b", [12288, 36864, 61440], False),  # every 24576: half as often
        ("gpt_oss_20b", [12288, 24576, 30720], False),
        ("llama2_70b_lora", [1536, 1920, 2304], True),  # published v4.0 logs start at 1536
        ("llama2_70b_lora", [384, 1152, 1920], False),  # every 768
    ],
)
def test_evaluation_cadence(bench: str, points: list[int], ok: bool, tmp_path: Path) -> None:
    rep = _check(tmp_path, _evals_at(sl.valid_events(bench), points))
    errors = _rules_text_errors(rep)
    assert rep.valid is ok
    if not ok:
        assert {r for r, _ in errors} == {"rules_text:eval_accuracy"}
        assert all(src and src.startswith(rules_text.EVAL_TABLE) for _, src in errors)


def test_cadence_rounds_to_the_batch(tmp_path: Path) -> None:
    # gbs 5000: points rounded up each (15000, 25000, 40000): gaps of 10000 and 15000, both within a batch
    ev = sl.with_value(sl.valid_events("llama31_8b"), "global_batch_size", 5000)
    assert _check(tmp_path, _evals_at(ev, [15000, 25000, 40000])).valid
    assert not _check(tmp_path, _evals_at(ev, [15000, 20000, 25000]), name="b.txt").valid


def test_open_division_is_free(tmp_path: Path) -> None:
    # "OPEN: Hyperparameters and optimizer may be freely changed" (§9)
    ev = sl.with_value(sl.valid_events("llama2_70b_lora", "open"), "opt_gradient_clip_norm", 1.0)
    ev = _evals_at(ev, [384, 1152, 1920])
    rep = _check(tmp_path, ev)
    assert rep.valid and not _rules_text_errors(rep)


def test_tables_cite_the_rules_and_apply_to_rounds_with_the_benchmark() -> None:
    from proctor.rules.training.benchmarks import allowed_benchmarks, rules_text_table, rules_text_tables

    for bench, ruleset, cfg in rules_text_tables():
        assert bench in allowed_benchmarks(ruleset), (bench, ruleset)
        assert cfg.name == f"closed_{bench}"
        for rule in cfg.keys:
            assert rule.source.startswith("§9 Training Loop"), rule
    assert rules_text_table("6.1.0", "open", "llama31_8b") is None
    assert rules_text_table("5.0.0", "closed", "llama31_8b") is None
    # v5.1's published closed results evaluate at cadences the v6.1 row forbids (the review took them)
    assert rules_text_table("5.1.0", "closed", "llama31_8b") is None
    assert rules_text_table("6.0.0", "closed", "llama31_8b") is not None


@pytest.mark.official
@pytest.mark.parametrize(
    ("bench", "key", "bad"),
    [(b, k, bad) for b, k, bad, _, _ in FIXED] + [(b, k, bad) for b, k, bad, _ in LOGGED_IF_PRESENT],
)
def test_official_checker_does_not_check_these(bench: str, key: str, bad: Any, tmp_path: Path) -> None:
    """The difference docs/deviations.md lists: the official checker accepts every breaking log."""
    base = sl.valid_events(bench)
    events = (
        sl.with_value(base, key, bad)
        if any(e.key == key for e in base)
        else _insert_after(base, "global_batch_size", key, bad)
    )
    path = sl.write_log(tmp_path / "r.txt", events)
    assert official_verdict(str(path)) is True
    assert check_file(path).valid is False


@pytest.mark.official
def test_official_checker_does_not_check_cadence(tmp_path: Path) -> None:
    path = sl.write_log(tmp_path / "r.txt", _evals_at(sl.valid_events("llama31_8b"), [12288, 18432, 24576]))
    assert official_verdict(str(path)) is True and check_file(path).valid is False


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    gbs=st.integers(1, 30000),
    first=st.integers(0, 50000),
    gaps=st.lists(st.integers(0, 60000), min_size=1, max_size=4),
)
def test_cadence_property(tmp_path: Path, gbs: int, first: int, gaps: list[int]) -> None:
    """Any evaluation schedule: a rules_text finding exactly when some non-zero gap is a batch or more
    away from 12288 sequences."""
    points = [first]
    for g in gaps:
        points.append(points[-1] + g)
    base = sl.with_value(sl.valid_events("llama31_8b"), "global_batch_size", gbs)
    n_evals = sum(e.key == "eval_accuracy" for e in base)
    events = _evals_at(base, (points + [points[-1]] * n_evals)[:n_evals])
    rep = _check(tmp_path, events, name="p.txt")
    gaps_used = [b - a for a, b in zip(points[:n_evals], points[1:n_evals], strict=False)]
    off = any(g != 0 and abs(g - 12288) >= gbs for g in gaps_used)
    assert bool(_rules_text_errors(rep)) is off


_HOSTILE = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(10**20), 10**20),
    st.text(max_size=8),
    st.none(),
    st.booleans(),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(end=_HOSTILE, dropout=_HOSTILE, samples=_HOSTILE)
def test_hostile_values_are_findings_not_crashes(
    tmp_path: Path, end: Any, dropout: Any, samples: Any
) -> None:
    base = sl.with_value(sl.valid_events("llama31_8b"), "opt_end_learning_rate", end)
    base = _insert_after(base, "global_batch_size", "dropout", dropout)
    last = max(i for i, e in enumerate(base) if e.key == "eval_accuracy")
    base[last] = replace(base[last], metadata={**base[last].metadata, "samples_count": samples})
    rep = _check(tmp_path, base, name="h.txt")
    rules = {r for r, _ in _rules_text_errors(rep)}
    good_end = (
        isinstance(end, int | float)
        and not isinstance(end, bool)
        and math.isfinite(end)
        and math.isclose(end, 4e-5, rel_tol=1e-6)
    )
    assert ("rules_text:opt_end_learning_rate" in rules) is not good_end
    assert ("rules_text:dropout" in rules) is not (dropout == 0.0 and not isinstance(dropout, str))
