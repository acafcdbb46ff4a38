"""Counts a server reports are untrusted input (issue 22, class 1): a token count must be an integer
within [0, the request's max tokens]; anything above is a protocol fault, never a number summed."""

from __future__ import annotations

import numpy as np
import orjson
from hypothesis import given, settings
from hypothesis import strategies as st
from test_openai_sut import run

from proctor.clients.openai import from_params
from proctor.clients.openai_config import OpenAIConfig
from proctor.clients.stream import StreamClient, StreamState, token_limit
from proctor.loadgen.types import Scenario
from tests.support.hostile_http import completion, hostile_server


class _Sink:
    def __init__(self) -> None:
        self.done: list[tuple[int, int, str]] = []
        self.failed: list[tuple[int, str, str]] = []

    def sent(self, i: int, t_issue: int, t_sent: int) -> None: ...

    def first_token(self, i: int, text: bytes, t_ns: int | None = None) -> None: ...

    def complete(self, i, output, n, source, mismatch, t_ns=None) -> None:  # noqa: ANN001
        self.done.append((i, n, source))

    def fail(self, i: int, idx: int, kind: str, message: str) -> None:
        self.failed.append((i, kind, message))

    def junk(self, n: int) -> None: ...


def _client(max_tokens: int, body_max: int | None = None) -> tuple[StreamClient, _Sink]:
    cfg = OpenAIConfig(urls=("http://127.0.0.1:9",), model="m", max_tokens=max_tokens)
    body = orjson.dumps({"max_tokens": body_max if body_max is not None else max_tokens, "prompt": "x"})
    sink = _Sink()
    return StreamClient(cfg, lambda idx: body, sink), sink


@settings(max_examples=300, deadline=None)
@given(count=st.integers(min_value=-(2**70), max_value=2**70), limit=st.integers(1, 10_000))
def test_a_usage_count_is_taken_only_within_the_requests_limit(count, limit):
    client, sink = _client(limit)
    state = StreamState()
    client.events(0, [orjson.dumps({"choices": [{"text": "hi"}]}),
                      b'{"choices":[],"usage":{"completion_tokens":%d}}' % count, b"[DONE]"], state)
    client.finish(0, 0, state, "http://x")
    if 0 <= count <= limit:
        assert sink.done == [(0, count, "usage")] and not sink.failed
    elif count < 0 or count >= 2**64:  # not a count (or not JSON orjson takes): no count source
        assert sink.failed and sink.failed[0][1] == "no_count"
    else:
        assert not sink.done and sink.failed[0][1] == "protocol"
        assert f"at most {limit}" in sink.failed[0][2] and len(sink.failed[0][2]) < 200


def test_token_ids_beyond_the_limit_are_a_protocol_fault():
    client, sink = _client(3)
    state = StreamState()
    client.events(0, [orjson.dumps({"choices": [{"text": "a b c d e", "token_ids": [1, 2, 3, 4, 5]}]}), b"[DONE]"], state)
    client.finish(0, 0, state, "http://x")
    assert sink.failed[0][1] == "protocol" and not sink.done


def test_the_limit_is_the_request_bodys_own():
    assert token_limit(b'{"max_tokens": 7}', 128) == 7
    assert token_limit(b'{"max_completion_tokens": 9, "max_tokens": 3}', 128) == 9
    assert token_limit(b'{"max_tokens": "7"}', 128) == 128
    assert token_limit(b"[1]", 5) == 5 and token_limit(b"not json", 5) == 5


def _usage_server(count: int):
    return hostile_server(lambda req: completion("a b c", usage={"completion_tokens": count}))


def test_hostile_usage_counts_fail_their_samples_at_once_on_both_transports(tmp_path, http):
    for count in (2**64 - 1, 2**63 - 1, 1000):
        with _usage_server(count) as srv:
            sut, qsl = from_params(url=f"http://127.0.0.1:{srv.port}", synthetic="6", http=http, max_tokens="3")
            out = run(tmp_path / str(count), sut, qsl, Scenario.OFFLINE, min_query_count=1)
        n = out.records.n_samples_issued
        assert not out.incomplete and not out.valid
        assert sut.faults == {"protocol": n} and out.result.failed_samples == n
        assert int(out.records.sample_n_tokens[:n].sum()) == 0


def test_an_honest_count_at_the_limit_is_taken(tmp_path, http):
    with _usage_server(3) as srv:
        sut, qsl = from_params(url=f"http://127.0.0.1:{srv.port}", synthetic="6", http=http, max_tokens="3")
        out = run(tmp_path, sut, qsl, Scenario.OFFLINE, min_query_count=1)
    n = out.records.n_samples_issued
    assert not sut.faults and np.all(out.records.sample_n_tokens[:n] == 3)


def _one_fault(tmp_path, http, respond):
    with hostile_server(respond) as srv:
        sut, qsl = from_params(url=f"http://127.0.0.1:{srv.port}", synthetic="4", http=http, max_tokens="3")
        out = run(tmp_path, sut, qsl, Scenario.OFFLINE, min_query_count=1)
    return sut, out, srv


def test_a_redirect_is_never_followed_on_either_transport(tmp_path, http):
    """Issue 22 class 4: a 307 to another host is a fault on both transports, named as a redirect."""
    with hostile_server(lambda req: completion("a", usage={"completion_tokens": 1})) as elsewhere:
        target = f"http://127.0.0.1:{elsewhere.port}/v1/completions"
        redirect = (f"HTTP/1.1 307 Temporary Redirect\r\nLocation: {target}\r\nContent-Length: 0\r\n\r\n").encode()
        sut, out, _ = _one_fault(tmp_path, http, lambda req: redirect)
        assert not elsewhere.requests  # nothing went to the other host
    n = out.records.n_samples_issued
    assert sut.faults == {"http_error": n} and not out.valid
    texts = [str(e.value) for e in out_errors(out)]
    assert any("redirect, not followed" in t for t in texts)


def test_an_unasked_compressed_body_is_one_fault_on_both_transports(tmp_path, http):
    import gzip

    plain = completion("a b", usage={"completion_tokens": 2})
    head, _, body = plain.partition(b"\r\n\r\n")
    gz = gzip.compress(b'data: {"choices":[{"text":"a b","finish_reason":"length"}],"usage":{"completion_tokens":2}}\n\n'
                       b"data: [DONE]\n\n")
    response = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Encoding: gzip\r\n"
                b"Content-Length: %d\r\n\r\n" % len(gz)) + gz
    sut, out, srv = _one_fault(tmp_path, http, lambda req: response)
    n = out.records.n_samples_issued
    assert sut.faults == {"protocol": n}
    assert all(b"accept-encoding: identity" in r.lower() for r in srv.requests)


def out_errors(out):
    from proctor.loadgen.logs.reader import read_detail

    return read_detail(out.log_paths["detail"]).errors


def test_a_long_chunk_extension_is_one_behaviour_on_both_transports(tmp_path, http):
    body = b'data: {"choices":[{"text":"a","finish_reason":"length"}],"usage":{"completion_tokens":1}}\n\ndata: [DONE]\n\n'
    resp = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
            + f"{len(body):x};x={'a' * 70000}\r\n".encode() + body + b"\r\n0\r\n\r\n")
    sut, out, _ = _one_fault(tmp_path, http, lambda req: resp)
    n = out.records.n_samples_issued
    assert not sut.faults and sut.count_sources == {"usage": n}
