"""proctor's ROUGE: the figures the reference LLM accuracy scripts compute (rouge_score + NLTK Porter)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from proctor.clients import rouge

# Porter's own examples (the paper, with NLTK's extensions where they differ) and NLTK's stems
STEMS = {
    "caresses": "caress", "ponies": "poni", "ties": "tie", "cats": "cat", "feed": "feed", "agreed": "agre",
    "plastered": "plaster", "bled": "bled", "motoring": "motor", "sing": "sing", "conflated": "conflat",
    "troubled": "troubl", "sized": "size", "hopping": "hop", "tanned": "tan", "falling": "fall",
    "hissing": "hiss", "fizzed": "fizz", "failing": "fail", "filing": "file", "happy": "happi",
    "relational": "relat", "conditional": "condit", "rational": "ration", "valenci": "valenc",
    "hesitanci": "hesit", "digitizer": "digit", "conformabli": "conform", "radicalli": "radic",
    "differentli": "differ", "vileli": "vile", "analogousli": "analog", "vietnamization": "vietnam",
    "predication": "predic", "operator": "oper", "feudalism": "feudal", "decisiveness": "decis",
    "hopefulness": "hope", "callousness": "callous", "formaliti": "formal", "sensitiviti": "sensit",
    "sensibiliti": "sensibl", "triplicate": "triplic", "formative": "form", "formalize": "formal",
    "electriciti": "electr", "electrical": "electr", "hopeful": "hope", "goodness": "good",
    "revival": "reviv", "allowance": "allow", "inference": "infer", "airliner": "airlin",
    "gyroscopic": "gyroscop", "adjustable": "adjust", "defensible": "defens", "irritant": "irrit",
    "replacement": "replac", "adjustment": "adjust", "dependent": "depend", "adoption": "adopt",
    "communism": "commun", "activate": "activ", "angulariti": "angular", "homologous": "homolog",
    "effective": "effect", "bowdlerize": "bowdler", "probate": "probat", "rate": "rate", "cease": "ceas",
    "controll": "control", "roll": "roll", "generously": "gener",
    # NLTK's extensions: irregular forms, -ies/-ied on four letters, y -> i after a consonant, logi
    "enjoy": "enjoy", "skies": "sky", "dying": "die", "spied": "spi", "died": "die", "flies": "fli",
    "geology": "geolog", "running": "run", "news": "news", "innings": "inning",
}


@pytest.mark.parametrize(("word", "stem"), sorted(STEMS.items()))
def test_porter_stems(word: str, stem: str) -> None:
    assert rouge.porter_stem(word) == stem


def test_tokens_as_rouge_score_makes_them() -> None:
    # lower-cased, split on anything but a-z0-9 (accents and punctuation too), 4+ letter tokens stemmed
    assert rouge.tokenize("The CATS' running-shoes, café 42!") == ["the", "cat", "run", "shoe", "caf", "42"]
    assert rouge.tokenize("") == [] and rouge.tokenize("!!! ...") == []


def test_scores_by_hand() -> None:
    # pred "the cat sat", ref "the cat sat down": rouge1 P 1 R 3/4 -> 6/7; rouge2 P 1 R 2/3 -> 4/5; L = 1
    s = rouge.score("the cat sat", "the cat sat down")
    assert s.rouge1 == pytest.approx(6 / 7) and s.rouge2 == pytest.approx(4 / 5)
    assert s.rougeL == pytest.approx(6 / 7)
    # order matters for L, not for 1: "b a" vs "a b" -> rouge1 1, LCS 1 of 2 -> 1/2, no common bigram
    s = rouge.score("b a", "a b")
    assert (s.rouge1, s.rouge2, s.rougeL) == (1.0, 0.0, 0.5)
    # repeated n-grams are clipped to the reference's count
    assert rouge.score("the the the", "the").rouge1 == pytest.approx(2 * (1 / 3) * 1 / (1 / 3 + 1))
    assert rouge.score("", "x").rouge1 == 0.0 and rouge.score("x", "").rougeL == 0.0
    # stemming makes forms match, as use_stemmer=True does
    assert rouge.score("dogs running", "dog runs").rouge1 == 1.0


def test_mean_is_percent_to_four_decimals() -> None:
    got = rouge.mean_scores([("the cat sat", "the cat sat down"), ("a dog", "a dog")])
    assert got == {"rouge1": round(100 * (6 / 7 + 1) / 2, 4), "rouge2": round(100 * (4 / 5 + 1) / 2, 4),
                   "rougeL": round(100 * (6 / 7 + 1) / 2, 4)}


def _lcs_table(a: list[str], b: list[str]) -> int:
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


@given(st.lists(st.sampled_from("abcde"), max_size=40), st.lists(st.sampled_from("abcdef"), max_size=40))
def test_bit_parallel_lcs_equals_the_table(a: list[str], b: list[str]) -> None:
    assert rouge.lcs_length(a, b) == _lcs_table(a, b) == rouge.lcs_length(b, a)


@given(st.text(max_size=200), st.text(max_size=200))
def test_any_text_scores_in_range(pred: str, ref: str) -> None:
    s = rouge.score(pred, ref)
    assert all(0.0 <= v <= 1.0 for v in (s.rouge1, s.rouge2, s.rougeL))
    if rouge.tokenize(pred) and rouge.tokenize(pred) == rouge.tokenize(ref):
        assert s.rouge1 == s.rougeL == 1.0


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=30))
def test_a_stem_is_lowercase_alnum_and_stable(word: str) -> None:
    stem = rouge.porter_stem(word)
    assert stem and stem.isalnum() and len(stem) <= len(word) + 1


def test_agrees_with_rouge_score_when_installed() -> None:
    rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
    pairs = [(w + " " + v, v + " generously " + w) for w, v in zip(STEMS, reversed(list(STEMS)), strict=True)]
    for pred, ref in pairs:
        want = scorer.score(ref, pred)
        got = rouge.score(pred, ref)
        assert (got.rouge1, got.rouge2, got.rougeL) == pytest.approx(
            (want["rouge1"].fmeasure, want["rouge2"].fmeasure, want["rougeL"].fmeasure)
        )
