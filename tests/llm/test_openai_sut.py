"""The openai SUT end to end through the engine against `proctor serve llm` on loopback.

Timing assertions are floors only (the server sends nothing before its deadline, so TTFT >= the
injected TTFT and the last token >= TTFT + 7 x TPOT): a loaded machine only adds time, and an upper
bound, however generous, failed on a CI host beside two CPU hogs (TTFT p50 456 ms for a 30 ms truth).
How close to the truth proctor measures is bench/llm_client.py's figure; token and fault counts are exact.
"""

from __future__ import annotations

import socket

import numpy as np
import orjson
import pytest

from proctor.clients import llm_accuracy
from proctor.clients.llm_dataset import load_jsonl
from proctor.clients.openai import endpoint_url, from_params
from proctor.errors import ConfigError
from proctor.loadgen.engine import run_test
from proctor.loadgen.logs.reader import read_detail
from proctor.loadgen.records import NOT_SET
from proctor.loadgen.settings import LogOutputSettings, LogSettings, TestSettings
from proctor.loadgen.types import Scenario, TestMode
from proctor.serving.llm_server import Faults, TinyLM

MS = 1_000_000


def run(tmp_path, sut, qsl, scenario=Scenario.SERVER, mode=TestMode.PERFORMANCE_ONLY, **kw):
    base = dict(
        scenario=scenario,
        mode=mode,
        use_token_latencies=True,
        min_duration_ms=500,
        min_query_count=16,
        server_target_qps=40.0,
        offline_expected_qps=16.0,
    )
    base.update(kw)
    try:
        return run_test(
            sut,
            qsl,
            TestSettings(**base),
            LogSettings(LogOutputSettings(outdir=str(tmp_path))),
            audit_config=None,
            timeout_s=60,
        )
    finally:
        sut.close()


def url(server) -> str:
    return f"http://127.0.0.1:{server.port}"


def synth(server, n=32, out=8, **kw):
    return from_params(url=url(server), synthetic=str(n), **{"in": "const:12", "out": f"const:{out}"}, **kw)


def test_server_scenario_measures_the_injected_ttft_and_tpot(tmp_path, llm_server, http):
    with llm_server(ttft_ms=30, tpot_ms=3, chunk=(1, 3)) as server:
        sut, qsl = synth(server, http=http)
        out = run(tmp_path, sut, qsl)
    res, rec, n = out.result, out.records, out.records.n_samples_issued
    assert out.errors == 0 and not out.incomplete and n >= 16
    assert np.all(rec.sample_n_tokens[:n] == 8)  # exact, though chunks held 1-3 tokens
    assert res.token_count == 8 * n
    done, first = rec.sample_done_ns[:n], rec.sample_first_token_ns[:n]
    assert np.all(first != NOT_SET) and np.all(first <= done)  # the first token is timed, before the end
    assert res.ttft.min >= 30 * MS  # no token before its deadline: arrival + 30 ms
    assert res.samples.min >= (30 + 7 * 3) * MS  # the 8th token's deadline: arrival + 30 ms + 7 x 3 ms
    assert 0 < res.tpot.min <= res.tpot.percentiles[0.5] <= (res.samples.max - res.ttft.min) // 7
    assert sut.count_sources == {"usage": n} and not sut.faults


def test_offline_counts_from_token_ids(tmp_path, llm_server, http):
    with llm_server(ttft_ms=5, tpot_ms=1, chunk=(2, 4)) as server:
        sut, qsl = synth(server, http=http, n=24, out=6, token_ids="1")
        out = run(tmp_path, sut, qsl, Scenario.OFFLINE)
    n = out.records.n_samples_issued
    assert out.errors == 0 and not out.incomplete and n >= 16
    assert np.all(out.records.sample_n_tokens[:n] == 6)
    assert sut.count_sources == {"token_ids": n} and sut.count_mismatches == 0


def test_chat_without_done_and_usage_on_the_final_chunk(tmp_path, llm_server, http):
    """The `transformers serve` shape: usage rides on the last chunk and no [DONE] follows."""
    with llm_server(ttft_ms=5, tpot_ms=1, chunk=(1, 2), usage="final", done=False) as server:
        sut, qsl = synth(server, http=http, n=16, out=5, api="chat")
        out = run(tmp_path, sut, qsl, min_query_count=8)
    n = out.records.n_samples_issued
    assert out.errors == 0 and not out.incomplete
    assert np.all(out.records.sample_n_tokens[:n] == 5)
    assert np.all(out.records.sample_first_token_ns[:n] != NOT_SET)
    assert sut.count_sources == {"usage": n}


def test_accuracy_outputs_equal_the_models_reference(tmp_path, llm_server, http):
    model = TinyLM()
    prompts = [f"sample {k} " + " ".join(model.words[(7 * k + j) % 50] for j in range(k % 9 + 1)) for k in range(12)]
    data = tmp_path / "data.jsonl"
    data.write_bytes(
        b"\n".join(
            orjson.dumps({"prompt": p, "output": model.reference(p, 4 + k % 5), "max_tokens": 4 + k % 5})
            for k, p in enumerate(prompts)
        )
    )
    with llm_server(ttft_ms=2, tpot_ms=1, chunk=(1, 3)) as server:
        sut, qsl = from_params(http=http, url=url(server), dataset=str(data), api="chat")
        out = run(tmp_path, sut, qsl, Scenario.OFFLINE, TestMode.ACCURACY_ONLY)
    assert out.errors == 0 and out.accuracy_samples == 12
    scores = llm_accuracy.score_log(out.log_paths["accuracy"], load_jsonl(data))
    assert scores["scored"] == 12 and scores["exact_match"] == 100.0 and scores["rougeL"] == 100.0
    # the token counts the log carries (token_count), as the reference scripts sum them
    assert scores["gen_tok_len"] == sum(4 + k % 5 for k in range(12)) == 69 and scores["tokens_per_sample"] == 5.8


def test_a_wrong_output_is_not_an_exact_match(tmp_path):
    from proctor.clients.llm_dataset import LLMSample

    samples = [LLMSample(prompt="a", output="x y"), LLMSample(prompt="b", output="z")]
    s = llm_accuracy.score({0: b" x y", 1: b"q"}, samples)
    assert s["scored"] == 2 and s["exact_match"] == 50.0


def test_each_fault_kind_is_counted_and_the_run_finishes(tmp_path, llm_server, http):
    faults = Faults(rate_429=0.15, rate_500=0.15, stall=0.1, drop=0.1, stall_s=3.0)
    with llm_server(ttft_ms=2, tpot_ms=1, faults=faults, seed=3) as server:
        # probe=0: the server's own counts are compared with the SUT's, request for request
        sut, qsl = synth(server, http=http, n=40, out=6, stall_s="0.5", probe="0")
        out = run(tmp_path, sut, qsl, min_query_count=40, server_target_qps=80.0)
        stats = dict(server.stats)
    assert not out.incomplete
    assert sut.faults["http_429"] == stats.get("429", 0) > 0
    assert sut.faults["http_error"] == stats.get("500", 0) > 0
    assert sut.faults["stall"] == stats.get("stall", 0) > 0
    assert sut.faults["dropped"] == stats.get("drop", 0) > 0
    failed = sum(sut.faults.values())
    n = out.records.n_samples_issued
    assert sut.count_sources["usage"] == n - failed
    # every failure is a failed sample (no result, the run invalid); the first of each kind is an
    # error line naming it, and none reports a token count
    assert out.result.failed_samples == failed and not out.valid
    texts = [str(e.value) for e in read_detail(out.log_paths["detail"]).errors]
    for kind in ("http_429", "http_error", "stall", "dropped"):
        assert any(f"openai SUT: {kind}" in t for t in texts), kind
    assert int(np.count_nonzero(out.records.sample_n_tokens[:n] == 0)) == failed
    # a failed query adds no TTFT: the TTFT stats hold only the successful ones
    assert out.result.ttft.count == n - failed


def test_a_slow_stream_hits_the_per_request_timeout(tmp_path, llm_server, http):
    with llm_server(ttft_ms=1, tpot_ms=40) as server:
        sut, qsl = synth(server, http=http, n=4, out=60, timeout_s="0.3")
        out = run(tmp_path, sut, qsl, Scenario.OFFLINE, min_query_count=1)
    assert not out.incomplete and sut.faults == {"timeout": out.records.n_samples_issued}


def test_a_dead_endpoint_fails_fast_and_does_not_hang(tmp_path, http):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sut, qsl = from_params(http=http, url=f"http://127.0.0.1:{port}", synthetic="8", connect_s="2", preflight="0")
    out = run(tmp_path, sut, qsl, Scenario.OFFLINE, min_query_count=1)
    assert not out.incomplete and sut.faults == {"connect": out.records.n_samples_issued}
    assert out.result.failed_samples == out.records.n_samples_issued and out.errors >= 1
    assert out.result.sample_count == 0 and not out.valid


def test_a_silent_endpoint_is_given_up_on_by_the_no_progress_timeout(tmp_path, http):
    with socket.socket() as srv:  # accepts connections, never answers
        srv.bind(("127.0.0.1", 0))
        srv.listen(64)
        sut, qsl = from_params(http=http, url=f"http://127.0.0.1:{srv.getsockname()[1]}", synthetic="4", stall_s="0.3",
                               preflight="0")
        out = run(tmp_path, sut, qsl, Scenario.OFFLINE, min_query_count=1)
    assert not out.incomplete and sut.faults == {"stall": out.records.n_samples_issued}


def test_no_count_source_is_a_fault_not_a_guess(tmp_path, llm_server, http):
    # no usage record, no logprobs, and no probe to find that out before the run (probe=0)
    with llm_server(ttft_ms=1, tpot_ms=1, chunk=(2, 2), usage="none", logprobs=False) as server:
        sut, qsl = synth(server, http=http, n=4, out=6, probe="0")
        out = run(tmp_path, sut, qsl, Scenario.OFFLINE, min_query_count=1)
    assert sut.faults == {"no_count": out.records.n_samples_issued} and not sut.count_sources


def test_a_server_with_nothing_to_count_by_is_refused_before_the_run(llm_server):
    """No token ids, no usage, no logprobs, no tokenizer: every sample would fail (no_count), so the
    preflight refuses the run in one line (ConfigError: exit 2) naming what lacks and what to give."""
    with (llm_server(ttft_ms=1, tpot_ms=1, chunk=(2, 2), usage="none", logprobs=False, token_ids=False) as server,
          pytest.raises(ConfigError) as caught):
        synth(server, n=4, out=6)
    message = str(caught.value)
    assert message.startswith("key 'tokenizer': http://127.0.0.1:") and "\n" not in message
    assert ("the server sends no token ids, no usage record and no logprobs, so no output token can be counted "
            "and every sample would fail (no_count): give tokenizer=PATH") in message


def test_tokenizer_counts_when_the_server_sends_no_usage(tmp_path, llm_server):
    tokenizers = pytest.importorskip("tokenizers")
    model = TinyLM()
    vocab = {w: i for i, w in enumerate(model.words)} | {"[UNK]": len(model.words)}
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tok.save(str(tmp_path / "tokenizer.json"))
    with llm_server(ttft_ms=1, tpot_ms=1, chunk=(1, 3), usage="none") as server:
        sut, qsl = synth(server, n=8, out=7, tokenizer=str(tmp_path))
        out = run(tmp_path, sut, qsl, Scenario.OFFLINE, min_query_count=1)
    n = out.records.n_samples_issued
    assert sut.count_sources == {"tokenizer": n} and np.all(out.records.sample_n_tokens[:n] == 7)


def test_two_endpoints_share_the_load(tmp_path, llm_server, http):
    with llm_server(ttft_ms=20, tpot_ms=2) as a, llm_server(ttft_ms=20, tpot_ms=2) as b:
        sut, qsl = from_params(http=http, url=[url(a), url(b)], synthetic="32", out="const:4")
        out = run(tmp_path, sut, qsl, Scenario.OFFLINE)
        sa, sb = a.stats["requests"], b.stats["requests"]
    # the preflight's probe (what each server offers for counting tokens) is one request to each
    assert out.errors == 0 and sa + sb == out.records.n_samples_issued + 2
    assert abs(sa - sb) <= 1  # all issued at once: fewest-outstanding alternates
    assert any("requests per endpoint" in line for line in sut.report())


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({"synthetic": "4", "api": "rest"}, "api"),
        ({"synthetic": "4", "max_tokens": "lots"}, "max_tokens"),
        ({"synthetic": "4", "in": "zipf:3"}, "DIST"),
        ({}, "dataset"),
        ({"synthetic": "4", "colour": "red"}, "unknown"),
        ({"synthetic": "4", "timeout_s": "0"}, "timeout_s"),
        ({"synthetic": "4", "http": "h2"}, "http"),
        ({"synthetic": "4", "warm": "-1"}, "warm"),
    ],
)
def test_bad_parameters_are_named(params, words):
    with pytest.raises(ConfigError, match=words):
        from_params(url="http://127.0.0.1:9", **params)


def test_endpoint_urls():
    assert endpoint_url("http://h:1", "chat") == "http://h:1/v1/chat/completions"
    assert endpoint_url("http://h:1/v1/", "completions") == "http://h:1/v1/completions"
    assert endpoint_url("http://h:1/x/v1/completions", "chat") == "http://h:1/x/v1/completions"
    with pytest.raises(ConfigError):
        endpoint_url("h:1", "chat")


def test_the_raw_transport_is_the_default_and_reuses_its_connections(tmp_path, llm_server):
    from proctor.clients.http1 import RawClient

    with llm_server(ttft_ms=2, tpot_ms=1) as server:
        sut, qsl = synth(server, n=24, out=4, warm="2")
        assert isinstance(sut.client, RawClient)
        out = run(tmp_path, sut, qsl, Scenario.OFFLINE, min_query_count=24)
    assert out.errors == 0 and sut.count_sources == {"usage": out.records.n_samples_issued}


def test_https_goes_over_aiohttp():
    from proctor.clients.http1 import RawClient

    sut, _ = from_params(url="https://127.0.0.1:9", synthetic="2", connect_s="1", preflight="0")
    try:
        assert sut.client is not None and not isinstance(sut.client, RawClient)
    finally:
        sut.close()
