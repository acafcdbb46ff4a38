"""What a server offers for counting tokens, found at preflight (issue 34 §7): the probe's answer read
(`clients.offer`), what follows for a run (the exact count source, logprobs=1 asked where only they
count, whether TEST06 can pass), against scripted servers, `proctor serve llm` acting as vLLM and as
llama.cpp's Python server, and hostile answers."""

from __future__ import annotations

import time

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from proctor.clients.offer import Offer, answer_complete, dechunk, plan_counts, read_offer, split_answer
from proctor.clients.openai import from_params
from proctor.clients.preflight import MAX_PROBE_ANSWER, PROBE_ASKS, probe_offer
from proctor.loadgen.engine import run_test
from proctor.loadgen.settings import LogOutputSettings, LogSettings, TestSettings
from proctor.loadgen.types import Scenario, TestMode
from tests.support.hostile_http import STREAM_HEAD, chunked, hostile_server, sse

URL = "http://x/v1/completions"


def answer(*events: object) -> bytes:
    return sse(*events)


def test_a_vllm_like_stream_offers_ids_logprobs_and_usage():
    raw = answer({"choices": [{"text": "a", "token_ids": [5], "logprobs": {"tokens": ["a"]}}]},
                 {"choices": [{"text": " b", "token_ids": [6], "logprobs": {"tokens": [" b"]}}]},
                 {"choices": [{"text": "", "finish_reason": "length"}]},
                 {"choices": [], "usage": {"completion_tokens": 2}})
    offer = read_offer(URL, raw)
    assert (offer.token_ids, offer.logprobs, offer.usage, offer.known) == (True, True, True, True)


def test_a_llamacpp_like_stream_offers_logprobs_alone():
    # llama-cpp-python's server: one chunk per token, no usage record, logprobs when asked (chat shape too)
    raw = answer({"choices": [{"delta": {"content": "a"}, "logprobs": {"content": [{"token": "a"}]}}]},
                 {"choices": [{"delta": {"content": ""}, "logprobs": {"content": [{"token": "\u00e9"}]}}]},
                 {"choices": [{"delta": {}, "finish_reason": "length"}]})
    offer = read_offer(URL, raw)
    assert (offer.token_ids, offer.logprobs, offer.usage) == (False, True, False)
    plan = plan_counts([offer], ids_asked=False, logprobs=None, tokenizer=False)
    assert plan.logprobs and plan.source.startswith("logprobs, one entry per token (logprobs=1 added")
    assert "TEST06 cannot pass: the server sends no token ids" in plan.lines[-1]
    # the user's word wins: logprobs=0 leaves nothing exact, and it is said before the run
    plan = plan_counts([offer], ids_asked=False, logprobs=False, tokenizer=False)
    assert not plan.logprobs and plan.warn and plan.lines[1].startswith("preflight: no exact token count")
    assert plan.refusal == ""  # the server has logprobs (and may send them unasked): the run goes on, warned
    # a server with nothing to count by, even when asked: refused before the run, one line
    bare = Offer(URL, 200, token_ids=False, logprobs=False, usage=False)
    plan = plan_counts([bare], ids_asked=False, logprobs=None, tokenizer=False)
    assert plan.refusal == (f"{URL}: the server sends no token ids, no usage record and no logprobs, so no output "
                            "token can be counted and every sample would fail (no_count): give tokenizer=PATH "
                            "(the served model's tokenizer.json)")
    assert plan_counts([bare], ids_asked=False, logprobs=None, tokenizer=True).refusal == ""
    # token ids offered when asked, not asked: the server may send them anyway (counted then): not refused
    ids_only = Offer(URL, 200, token_ids=True, logprobs=False, usage=False)
    assert plan_counts([ids_only], ids_asked=False, logprobs=None, tokenizer=False).refusal == ""
    # a local tokenizer given: used as asked, no logprobs added
    plan = plan_counts([offer], ids_asked=False, logprobs=None, tokenizer=True)
    assert not plan.logprobs and plan.source.startswith("the local tokenizer")


@pytest.mark.parametrize(
    ("offers", "ids_asked", "source", "test06"),
    [
        ([Offer(URL, 200, token_ids=True, usage=True)], True, "token ids", "can pass"),
        ([Offer(URL, 200, token_ids=True, usage=True)], False, "the usage record", "can pass"),
        ([Offer(URL, 200, usage=True)], True, "the usage record", "cannot pass"),
        # two endpoints: what every one offers
        ([Offer(URL, 200, usage=True, token_ids=True), Offer("http://y", 200, usage=True)], True,
         "the usage record", "cannot pass"),
        ([Offer(URL, problem="HTTP 500")], False, "the stream (not known before the run)", None),
    ],
)
def test_the_plan_follows_every_endpoints_offer(offers, ids_asked, source, test06):
    plan = plan_counts(offers, ids_asked=ids_asked, logprobs=None, tokenizer=False)
    assert plan.source == source and not plan.logprobs and not plan.warn
    said = " ".join(plan.lines)
    assert (f"TEST06 {test06}" in said) if test06 else "TEST06" not in said


def test_a_chunked_answer_and_a_broken_one():
    body = b"data: " + orjson.dumps({"choices": [{"text": "x", "token_ids": [1]}]}) + b"\n\n"
    raw = STREAM_HEAD + chunked(body[:10]) + chunked(body[10:]) + b"0\r\n\r\n"
    assert read_offer(URL, raw).token_ids
    assert dechunk(b"zz\r\nabc") == b"" and dechunk(b"3\r\nabc\r\n") == b"abc"
    assert read_offer(URL, b"SSH-2.0-OpenSSH\r\n\r\n").problem.startswith("the answer is not HTTP")
    assert read_offer(URL, b"HTTP/1.1 404 Not Found\r\n\r\n").problem == "HTTP 404"
    assert read_offer(URL, answer({"choices": [{"text": ""}]})).problem == "the stream carried no token"
    with pytest.raises(ValueError):
        split_answer(b"HTTP/1.1 200 OK\r\n")  # no end of head


@pytest.mark.fuzz
@given(st.binary(max_size=2000))
def test_any_answer_is_an_offer(raw):
    assert answer_complete(raw) in (True, False)
    offer = read_offer(URL, raw)
    assert isinstance(offer, Offer) and "\n" not in offer.describe()
    offer = read_offer(URL, STREAM_HEAD + raw)
    assert offer.known or offer.problem


@pytest.mark.fuzz
@given(st.lists(st.recursive(st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=3),
                             lambda x: st.lists(x, max_size=3) | st.dictionaries(st.sampled_from(
                                 ["choices", "text", "delta", "content", "token_ids", "logprobs", "tokens",
                                  "usage", "completion_tokens"]), x, max_size=3), max_leaves=12), max_size=6))
def test_any_events_are_an_offer(events):
    offer = read_offer(URL, sse(*events))
    assert offer.known or offer.problem in ("the stream carried no token",)


# --- the probe, against servers -----------------------------------------------------------------------


def test_a_server_refusing_a_field_is_asked_again_without_it():
    # an OpenAI-strict server: 400 for the vLLM field return_token_ids; then an answer with usage only
    def respond(request: bytes) -> bytes:
        if b"return_token_ids" in request:
            body = b'{"error": {"message": "Unrecognized request argument: return_token_ids"}}'
            return b"HTTP/1.1 400 Bad Request\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
        return answer({"choices": [{"text": "hi"}]}, {"choices": [], "usage": {"completion_tokens": 1}})

    with hostile_server(respond) as server:
        offer = probe_offer(f"http://127.0.0.1:{server.port}", "completions", "m", 5.0)
    assert offer.refused == ("return_token_ids",) and offer.usage and not offer.token_ids
    assert "refused return_token_ids" in offer.describe()
    first, second = (orjson.loads(r.split(b"\r\n\r\n", 1)[1]) for r in server.requests)
    assert first["return_token_ids"] and first["logprobs"] == 1 and first["stream_options"]["include_usage"]
    assert "return_token_ids" not in second and second["max_tokens"] == 4
    assert PROBE_ASKS[0] == "return_token_ids"


def test_a_server_that_streams_forever_costs_a_bounded_probe():
    def respond(request: bytes):
        yield STREAM_HEAD
        while True:
            yield chunked(b"data: " + orjson.dumps({"choices": [{"text": "x" * 1000}]}) + b"\n\n")

    with hostile_server(respond) as server:
        t0 = time.monotonic()
        offer = probe_offer(f"http://127.0.0.1:{server.port}", "completions", "m", 5.0)
        took = time.monotonic() - t0
    assert offer.known and not offer.usage and not offer.logprobs  # read what came, up to the bound
    assert server.sent[0] <= MAX_PROBE_ANSWER + (4 << 20)  # it stopped reading: the server's writes stalled
    assert took < 30


def test_a_silent_server_is_not_known_and_changes_nothing():
    def respond(request: bytes):
        yield b"HTTP/1.1 200 OK\r\n"  # then nothing

    with hostile_server(respond) as server:
        offer = probe_offer(f"http://127.0.0.1:{server.port}", "completions", "m", 0.5)
    assert offer.problem == "no complete answer within 0.5 s"
    assert plan_counts([offer], ids_asked=False, logprobs=None, tokenizer=False).logprobs is False


def _run(tmp_path, sut, qsl):
    try:
        return run_test(sut, qsl, TestSettings(scenario=Scenario.OFFLINE, mode=TestMode.PERFORMANCE_ONLY,
                                               use_token_latencies=True, min_duration_ms=100, min_query_count=8),
                        LogSettings(LogOutputSettings(outdir=str(tmp_path))), audit_config=None, timeout_s=60)
    finally:
        sut.close()


def test_a_llamacpp_like_server_gets_logprobs_asked_and_every_count_is_exact(tmp_path, llm_server, http):
    # proctor serve llm --usage none --no-token-ids: what llama-cpp-python's server sends
    with llm_server(ttft_ms=1, tpot_ms=1, usage="none", token_ids=False) as server:
        sut, qsl = from_params(http=http, url=f"http://127.0.0.1:{server.port}", synthetic="8",
                               **{"in": "const:4", "out": "const:5"})
        assert sut.config.logprobs  # asked in every request
        out = _run(tmp_path, sut, qsl)
    n = out.records.n_samples_issued
    assert sut.count_sources == {"logprobs": n} and not sut.faults and out.result.token_count == 5 * n
    report = sut.report()
    assert any("token ids no, logprobs yes, usage no" in line for line in report)
    assert "preflight: TEST06 cannot pass: the server sends no token ids, and TEST06 checks the token ids each " \
           "response logs (output=ids)" in report
    summary = out.log_paths["summary"].read_text()
    assert "PROCTOR: sut: preflight: token counts from logprobs, one entry per token" in summary


def test_a_vllm_like_server_counts_from_usage_and_can_pass_test06(tmp_path, llm_server):
    with llm_server(ttft_ms=1, tpot_ms=1) as server:
        sut, qsl = from_params(url=f"http://127.0.0.1:{server.port}", synthetic="8", output="ids",
                               **{"in": "const:4", "out": "const:5"})
        assert not sut.config.logprobs
        out = _run(tmp_path, sut, qsl)
    assert sut.count_sources == {"token_ids": out.records.n_samples_issued}
    assert "preflight: token counts from token ids" in sut.report()
    assert "preflight: TEST06 can pass: the server sends token ids (run the audit with output=ids)" in sut.report()
