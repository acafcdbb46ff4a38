"""LLM accuracy scoring: ROUGE (proctor's, as the reference scripts compute it), exact match and the
generation length, from an accuracy log, printed as the reference scripts print them."""

from __future__ import annotations

import re

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from proctor.checks.accuracy import parse_accuracy_text
from proctor.clients import llm_accuracy
from proctor.clients.llm_dataset import LLMSample
from proctor.errors import LogFormatError

SAMPLES = [LLMSample(prompt="p0", output="the cat sat down"), LLMSample(prompt="p1", output="a dog ran"),
           LLMSample(prompt="p2")]


def test_scores_against_the_reference_outputs():
    scores = llm_accuracy.score({0: b"the cat sat", 1: b" a dog ran\n", 2: b"unscored"}, SAMPLES, {0: 3, 1: 4, 2: 5})
    assert scores["scored"] == 2 and scores["logged"] == 3
    assert scores["exact_match"] == pytest.approx(50.0)
    # rouge1 of "the cat sat" against "the cat sat down": P 1, R 3/4, F 6/7; the second is exact
    assert scores["rouge1"] == round(100 * (6 / 7 + 1) / 2, 4)
    # rouge2: bigrams P 2/2, R 2/3 -> F 4/5
    assert scores["rouge2"] == round(100 * (4 / 5 + 1) / 2, 4)
    # the scripts' generation length: characters of the scored outputs, tokens over every logged one
    assert scores["gen_len"] == len("the cat sat") + len("a dog ran") and scores["gen_num"] == 2
    assert scores["gen_tok_len"] == 12 and scores["tokens_per_sample"] == 4.0


def test_without_token_counts_there_is_no_tokens_per_sample():
    scores = llm_accuracy.score({0: b"the cat sat down"}, SAMPLES)
    assert scores["exact_match"] == 100.0 and scores["rougeL"] == 100.0
    assert "tokens_per_sample" not in scores and "gen_tok_len" not in scores


def _log(tmp_path, entries) -> str:
    path = tmp_path / "mlperf_log_accuracy.json"
    path.write_bytes(orjson.dumps(entries))
    return str(path)


def test_the_first_entry_of_an_index_counts(tmp_path):
    log = _log(tmp_path, [
        {"seq_id": 0, "qsl_idx": 1, "data": b"a dog ran".hex(), "token_count": 3},
        {"seq_id": 1, "qsl_idx": 1, "data": b"nothing".hex(), "token_count": 9},
    ])
    outputs, tokens = llm_accuracy.read_entries(log)
    assert outputs == {1: b"a dog ran"} and tokens == {1: 3}
    assert llm_accuracy.score_log(log, SAMPLES)["exact_match"] == 100.0


def test_the_text_is_what_the_checkers_read(tmp_path):
    scores = llm_accuracy.score({0: b"the cat sat", 1: b"a dog ran"}, SAMPLES, {0: 3, 1: 3})
    text = llm_accuracy.accuracy_text(scores)
    assert text.startswith("\nResults\n\n{'rouge1': ")
    got = parse_accuracy_text(text)
    assert got["rouge1"] == scores["rouge1"] and got["tokens_per_sample"] == 3.0 and got["gen_len"] == 20
    # the official checker's patterns (submission_checker/constants.py ACC_PATTERN)
    assert float(re.match(r".*'rouge1':\s+'?([\d.]+)'?.*", text, re.S).group(1)) == scores["rouge1"]
    assert re.search(r".*'tokens_per_sample':\s([\d.]+).*", text).group(1) == "3.0"
    assert re.search(r".*'gen_len':\s([\d.]+).*", text).group(1) == "20"
    assert re.search(r".*'exact_match':\s([\d.]+).*", text).group(1) == "50.0"


@pytest.mark.parametrize("body", [b"{}", b"[1]", b'[{"qsl_idx": "0", "data": "00"}]', b'[{"qsl_idx": 0, "data": "zz"}]',
                                  b"not json"])
def test_a_bad_log_is_one_error(tmp_path, body):
    path = tmp_path / "log.json"
    path.write_bytes(body)
    with pytest.raises(LogFormatError):
        llm_accuracy.read_entries(path)


@given(st.binary(max_size=300))
def test_any_bytes_read_or_refused(tmp_path_factory, body):
    path = tmp_path_factory.mktemp("fuzz") / "log.json"
    path.write_bytes(body)
    try:
        outputs, tokens = llm_accuracy.read_entries(path)
    except LogFormatError:
        return
    assert set(tokens) <= set(outputs)


@given(st.lists(st.fixed_dictionaries({"qsl_idx": st.integers(-5, 5), "data": st.binary(max_size=20).map(bytes.hex)},
                                      optional={"token_count": st.one_of(st.integers(-3, 50), st.none(), st.text())}),
                max_size=8))
def test_any_entries_score_in_range(tmp_path_factory, entries):
    path = tmp_path_factory.mktemp("fuzz") / "log.json"
    path.write_bytes(orjson.dumps(entries))
    scores = llm_accuracy.score_log(path, SAMPLES)
    assert 0 <= scores["scored"] <= min(scores["logged"], 2)
    for key in ("rouge1", "rouge2", "rougeL", "exact_match"):
        assert key not in scores or 0.0 <= scores[key] <= 100.0
