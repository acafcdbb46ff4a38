"""LLM accuracy scoring: ROUGE comes from the `rouge-score` package (extra `llm`), never a hand-written one."""

from __future__ import annotations

import pytest

from proctor.clients import llm_accuracy
from proctor.clients.llm_dataset import LLMSample

SAMPLES = [LLMSample(prompt="p0", output="the cat sat down"), LLMSample(prompt="p1", output="a dog ran"),
           LLMSample(prompt="p2")]


def test_rouge_is_the_packages():
    pytest.importorskip("rouge_score")
    scores = llm_accuracy.score({0: b"the cat sat", 1: b" a dog ran\n", 2: b"unscored"}, SAMPLES)
    assert scores["scored"] == 2 and scores["logged"] == 3
    assert scores["exact_match"] == pytest.approx(50.0)
    # rouge1 of "the cat sat" against "the cat sat down": P 1, R 3/4, F 6/7; the second is exact
    assert scores["rouge1"] == pytest.approx(100 * (6 / 7 + 1) / 2)
    # rouge2: bigrams P 2/2, R 2/3 -> F 4/5
    assert scores["rouge2"] == pytest.approx(100 * (4 / 5 + 1) / 2)


def test_without_the_package_rouge_is_absent(monkeypatch):
    monkeypatch.setattr(llm_accuracy, "rouge_available", lambda: False)
    scores = llm_accuracy.score({0: b"the cat sat down"}, SAMPLES)
    assert scores == {"scored": 1, "logged": 1, "exact_match": 100.0}
