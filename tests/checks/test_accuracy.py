"""Accuracy targets, the rules' rounding, and the LLM generation-length bounds."""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.checks.accuracy import (
    check_accuracy,
    format_significant,
    parse_accuracy_text,
    round_significant,
)
from proctor.rules.inference import BY_NAME, resolve

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "inference" / "v4.1"


def test_the_rules_rounding_example() -> None:
    # "98.9995% should be recorded as 99.000%"
    assert format_significant(98.9995) == "99.000"
    assert round_significant(98.9995) == 99.0


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.23455, "1.2346"),  # tie, odd neighbour: up
        (1.23445, "1.2344"),  # tie, even neighbour: stays
        (0.8633049, "0.86330"),  # trailing zeros kept
        (9.99995, "10.000"),  # carry into a new digit keeps five figures
        (123456.5, "123460"),
    ],
)
def test_round_half_to_even_at_five_significant_figures(value: float, text: str) -> None:
    assert format_significant(value) == text
    assert round_significant(value) == float(text)


def _decimal_rounding(value: float, figures: int) -> tuple[float, str]:
    """The rules' rounding as the decimal module does it: the reference for the digit arithmetic."""
    d = Decimal(repr(value))
    exponent = d.adjusted() - figures + 1
    q = d.quantize(Decimal(1).scaleb(exponent), rounding=ROUND_HALF_EVEN)
    rounded = float(q)
    if q.adjusted() != d.adjusted():
        q = q.quantize(Decimal(1).scaleb(exponent + 1), rounding=ROUND_HALF_EVEN)
    return rounded, f"{q:f}"


_TIES = st.builds(
    lambda sign, digits, tail, exponent: float(f"{sign}{digits}{tail}e{exponent}"),
    st.sampled_from(["", "-"]),
    st.integers(1, 99999),
    st.sampled_from(["", "5", "50", "4999", "5001"]),
    st.integers(-40, 40),
)


@settings(max_examples=3000, deadline=None)
@given(st.one_of(st.floats(allow_nan=False, allow_infinity=False), _TIES), st.sampled_from([1, 3, 5, 8]))
def test_rounding_is_decimals_half_even_on_the_shortest_repr(value: float, figures: int) -> None:
    if value == 0:
        return
    rounded, text = _decimal_rounding(value, figures)
    assert round_significant(value, figures) == rounded
    assert format_significant(value, figures) == text


def test_rounding_decides_at_the_boundary() -> None:
    lvl = resolve("resnet").level
    assert lvl is not None
    threshold = lvl.threshold(lvl.targets[0])
    assert threshold == pytest.approx(75.6954)
    # 75.69541 >= 75.6954 unrounded, but is reported as 75.695: below the target
    findings, results = check_accuracy(BY_NAME["resnet50"], lvl, {"accuracy": 75.69541})
    assert [f.rule for f in findings] == ["accuracy_target"] and results[0].rounded == 75.695
    # llama2-70b-99.9 rouge1 target 44.3868...: 44.38675 rounds to 44.387 and passes
    l70 = resolve("llama2-70b-99.9")
    ok, _ = check_accuracy(
        l70.benchmark,
        l70.level,
        {"rouge1": 44.38675, "rouge2": 30, "rougel": 30, "tokens_per_sample": 294.45},
    )
    assert ok == []


def test_corpus_accuracy_outputs_meet_their_targets() -> None:
    if not CORPUS.is_dir():
        pytest.skip("corpus not available")
    l70 = resolve("llama2-70b-99.9")
    values = parse_accuracy_text(
        (CORPUS / "NVIDIA/B200-SXM-180GBx1_TRT/llama2-70b-99.9/Server/accuracy.txt").read_text()
    )
    assert values["rouge1"] == 44.8023 and values["tokens_per_sample"] == 273.9
    findings, results = check_accuracy(l70.benchmark, l70.level, values)
    assert findings == []
    assert [r.metric for r in results] == ["rouge1", "rouge2", "rougeL", "tokens_per_sample"]
    rn = resolve("resnet")
    values = parse_accuracy_text(
        (CORPUS / "UntetherAI/h13_u2_preview/resnet50/offline/accuracy.txt").read_text()
    )
    assert values["accuracy"] == 75.952
    assert check_accuracy(rn.benchmark, rn.level, values)[0] == []


def test_generation_length_bounds() -> None:
    l70 = resolve("llama2-70b-99.9")
    good = {"rouge1": 45, "rouge2": 23, "rougel": 29}
    # more than 90% of 294.45 = 265.005
    assert check_accuracy(l70.benchmark, l70.level, good | {"tokens_per_sample": 265.01})[0] == []
    f, _ = check_accuracy(l70.benchmark, l70.level, good | {"tokens_per_sample": 265.0})
    assert [x.rule for x in f] == ["generation_length"]
    f, _ = check_accuracy(l70.benchmark, l70.level, good)
    assert [x.rule for x in f] == ["generation_length_missing"]
    # Llama3.1-405B: between 90% and 110% of 684.68
    b = BY_NAME["llama3_1-405b"]
    ok = {"rougel": 22, "exact_match": 91}
    assert check_accuracy(b, b.level(), ok | {"tokens_per_sample": 700})[0] == []
    f, _ = check_accuracy(b, b.level(), ok | {"tokens_per_sample": 753.2})
    assert [x.rule for x in f] == ["generation_length"] and "below 110%" in f[0].message


def test_error_rates_and_units() -> None:
    w = BY_NAME["whisper"]
    # 99% of FP32 word accuracy: 100 - WER >= 0.99 * 97.9329 -> WER <= 3.0464
    assert check_accuracy(w, w.level(0.99), {"wer": 3.04})[0] == []
    assert check_accuracy(w, w.level(0.99), {"wer": 3.05})[0][0].rule == "accuracy_target"
    assert check_accuracy(w, w.level(0.999), {"wer": 2.2})[0][0].rule == "accuracy_target"
    # RGAT: the rules say 72.86 %, the script may print a fraction
    r = BY_NAME["rgat"]
    assert check_accuracy(r, r.level(), {"accuracy": 0.7214})[0] == []  # 72.14 >= 72.1314
    assert check_accuracy(r, r.level(), {"accuracy": 0.7213})[0] != []
    # E2E-RAG has no numeric target: a warning, not an error
    e = BY_NAME["e2e-rag"]
    f, _ = check_accuracy(e, e.level(), {"score": 35.0})
    assert [(x.rule, x.failed) for x in f] == [("accuracy_target", False)]


def test_parse_accuracy_script_shapes() -> None:
    assert parse_accuracy_text('{"exact_match": 83.1, "f1": 90.9}') == {"exact_match": 83.1, "f1": 90.9}
    assert parse_accuracy_text("mAP=37.551%\nhash=12ab") == {"map": 37.551}
    assert parse_accuracy_text("Accuracy: mean = 0.86330, kidney = 0.9") == {
        "accuracy": 0.8633,
        "kidney": 0.9,
    }
