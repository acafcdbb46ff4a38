"""A stream is bounded by what its request allows, not by the server (issue 30 §6): a server that
streams past max_tokens, or past the bytes those tokens can take, is cut as a protocol fault on both
transports, whatever shape the excess takes. What the client read is counted (the fault message
says it), never timed."""

from __future__ import annotations

import asyncio
import itertools
import re
from collections.abc import Iterator

import orjson
import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from test_openai_sut import run

from proctor.clients.openai import from_params
from proctor.clients.openai_config import OpenAIConfig
from proctor.clients.sse import SSEParser
from proctor.clients.stream import (
    STREAM_CHUNK_SLACK,
    StreamClient,
    StreamState,
    stream_bytes,
)
from proctor.errors import SSEError, StreamOverrun
from proctor.loadgen.types import Scenario
from tests.support.hostile_http import STREAM_CAP, STREAM_HEAD, chunked, hostile_server

MAX_TOKENS = 3
READ = 256 << 10  # the most one read hands over (the raw transport's receive buffer; aiohttp's is smaller)


def _event(obj: object) -> bytes:
    return b"data: " + orjson.dumps(obj) + b"\n\n"


def _forever(piece: bytes, first: bytes = b"") -> Iterator[bytes]:
    """A chunked 200 stream: `first`, then `piece` again and again (64 KiB per write)."""
    yield STREAM_HEAD + (chunked(first) if first else b"")
    block = chunked(piece * max(1, (64 << 10) // len(piece)))
    while True:
        yield block


_TOKEN = _event({"choices": [{"index": 0, "text": " tok"}]})
_TOKEN_IDS = _event({"choices": [{"index": 0, "text": " tok", "token_ids": [7]}]})
_USAGE = _event({"choices": [], "usage": {"completion_tokens": 1}})
_ROLE = _event({"choices": [{"index": 0, "delta": {"role": "assistant"}}]})


def _giant_token() -> Iterator[bytes]:
    """One content event whose text never ends (no newline ever comes)."""
    yield STREAM_HEAD + chunked(b'data: {"choices":[{"text":"')
    block = chunked(b"a" * (64 << 10))
    while True:
        yield block


def _endless_chunk_extension() -> Iterator[bytes]:
    """A chunk-size line whose extension never ends."""
    yield STREAM_HEAD + b"5;ext="
    while True:
        yield b"x" * (64 << 10)


def _endless_header() -> Iterator[bytes]:
    yield b"HTTP/1.1 200 OK\r\nX-Pad: "
    while True:
        yield b"p" * (64 << 10)


def _endless_interim_responses() -> Iterator[bytes]:
    """`100 Continue` heads, one after another, and never the response."""
    block = b"HTTP/1.1 100 Continue\r\n\r\n" * 2000
    while True:
        yield block


def _after_done() -> Iterator[bytes]:
    """A complete, honest stream, then more of the same body forever after [DONE]."""
    yield STREAM_HEAD + chunked(_TOKEN + _TOKEN + _event({"choices": [{"text": "", "finish_reason": "length"}],
                                                          "usage": {"completion_tokens": 2}}) + b"data: [DONE]\n\n")
    block = chunked(b": after the end\n\n" * 4096)
    while True:
        yield block


# each shape of "more than was asked": (stream, what the client gets on raw, on aiohttp)
HOSTILE = {
    "endless_tokens": (lambda: _forever(_TOKEN), "protocol"),
    "endless_token_ids": (lambda: _forever(_TOKEN_IDS), "protocol"),
    "many_ids_in_one_chunk": (lambda: _forever(_event({"choices": [{"text": "x", "token_ids": list(range(5000))}]})),
                              "protocol"),
    "giant_token": (_giant_token, "protocol"),
    "endless_newlines": (lambda: _forever(b"\n"), "protocol"),
    "endless_spaces_one_line": (lambda: _forever(b" "), "protocol"),
    "endless_comments": (lambda: _forever(b": keep-alive\n\n"), "protocol"),
    "endless_other_fields": (lambda: _forever(b"event: ping\nid: 1\nretry: 5\n\n"), "protocol"),
    "endless_usage_chunks": (lambda: _forever(_USAGE), "protocol"),
    "endless_role_chunks": (lambda: _forever(_ROLE), "protocol"),
    "endless_junk_events": (lambda: _forever(b"data: not json\n\n"), "protocol"),
    "endless_empty_data": (lambda: _forever(b"data:\n\n"), "protocol"),
    "endless_data_lines_one_event": (lambda: _forever(b"data: x\n"), "protocol"),
}


def _faults(tmp_path, http: str, stream, cap: int = STREAM_CAP, **kw: str):
    with hostile_server(lambda req: stream(), cap) as srv:
        sut, qsl = from_params(url=f"http://127.0.0.1:{srv.port}", synthetic="2", http=http,
                               max_tokens=str(MAX_TOKENS), **{"stall_s": "5", "probe": "0", **kw})
        errors: list[str] = []  # every fault's message, as the SUT got it
        fail = sut.fail
        sut.fail = lambda i, idx, kind, message: (errors.append(message), fail(i, idx, kind, message))[1]
        out = run(tmp_path, sut, qsl, Scenario.OFFLINE, min_query_count=1)
    n = out.records.n_samples_issued
    return sut, out, n, errors, srv


def _bound() -> int:
    """The byte bound of a synthetic request at most 4 KiB long (the body is under that)."""
    return stream_bytes(MAX_TOKENS, 4096)


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_stream_past_what_was_asked_is_cut_on_both_transports(tmp_path, http, case):
    stream, kind = HOSTILE[case]
    # the bound, not the stall timer, must end each stream: a busy host parses 1 MiB of 7-byte events slowly
    sut, out, n, errors, srv = _faults(tmp_path, http, stream, stall_s="60")
    assert sut.faults == {kind: n} and out.result.failed_samples == n and not out.valid
    assert not out.incomplete
    assert all(s < STREAM_CAP for s in srv.sent)  # every stream was left long before the server's cap
    cut = [e for e in errors if "cut" in e]
    assert cut, errors
    for e in cut:
        assert len(e) < 700 and "\n" not in e
        if m := re.search(r"passed (\d+) bytes.*\((\d+) read\)", e):  # a byte cut: within one read of it
            bound, read = int(m.group(1)), int(m.group(2))
            assert stream_bytes(MAX_TOKENS, 0) < bound <= _bound() and bound < read <= bound + READ
        if m := re.search(r": (\d+) token", e):  # a token cut: one event past the bound
            assert int(m.group(1)) <= MAX_TOKENS + STREAM_CHUNK_SLACK + 5000


FRAMING = {"endless_chunk_extension": _endless_chunk_extension,
           "endless_interim_responses": _endless_interim_responses}


@pytest.mark.parametrize("case", sorted(FRAMING))
def test_framing_without_end_is_cut_on_both_transports(tmp_path, http, case):
    """An endless chunk extension or run of interim responses carries no body byte: both transports
    count every byte of a response as it arrives (the raw parser reads interim heads in linear time:
    they once took it seconds per read), and cut it past the bound."""
    sut, out, n, errors, srv = _faults(tmp_path, http, FRAMING[case])
    assert sut.faults == {"protocol": n} and not out.valid and all(s < STREAM_CAP for s in srv.sent)
    assert all("cut" in e for e in errors)


def test_an_endless_header_is_a_fault_on_both_transports(tmp_path, http):
    """The raw transport's head bound (64 KiB) or aiohttp's line limit (8190 bytes): a fault at once."""
    sut, out, n, errors, srv = _faults(tmp_path, http, _endless_header)
    assert sum(sut.faults.values()) == n and set(sut.faults) <= {"protocol", "http_error"} and not out.valid
    assert all(s < STREAM_CAP for s in srv.sent)


def test_bytes_after_the_end_do_not_keep_a_connection_forever(tmp_path, http):
    """[DONE], then the body goes on: the sample is complete; the drain is bounded by the same bytes."""
    sut, out, n, errors, srv = _faults(tmp_path, http, _after_done)
    assert not sut.faults and sut.count_sources == {"usage": n}
    assert all(s < STREAM_CAP for s in srv.sent)


def test_an_honest_stream_at_the_limit_is_not_cut(tmp_path, http):
    events = [{"choices": [{"index": 0, "text": f" t{k}", "token_ids": [k]}]} for k in range(MAX_TOKENS)]
    events.append({"choices": [{"index": 0, "text": "", "finish_reason": "length"}]})
    events.append({"choices": [], "usage": {"completion_tokens": MAX_TOKENS}})
    body = b"".join(_event(e) for e in events) + b"data: [DONE]\n\n"
    sut, out, n, errors, srv = _faults(tmp_path, http, lambda: iter([STREAM_HEAD + chunked(body) + b"0\r\n\r\n"]))
    assert not sut.faults and sut.count_sources == {"token_ids": n}


# --- the bound itself, over any stream (pure) -----------------------------------------------------

_PIECE = st.sampled_from([
    _TOKEN, _TOKEN_IDS, _USAGE, _ROLE, b": c\n\n", b"\n", b" ", b"data: x\n\n", b"event: e\n",
    _event({"choices": [{"text": "abc" * 50}]}), _event({"choices": [{"text": "y", "token_ids": [1, 2, 3]}]}),
    _event({"choices": [{"text": "", "finish_reason": "stop"}]}),
])


def _client(limit: int) -> StreamClient:
    cfg = OpenAIConfig(urls=("http://127.0.0.1:9",), model="m", max_tokens=limit)

    class _Quiet:
        def first_token(self, *a: object) -> None: ...

    return StreamClient(cfg, lambda idx: orjson.dumps({"max_tokens": limit, "prompt": "p"}), _Quiet())  # type: ignore[arg-type]


@given(pieces=st.lists(_PIECE, min_size=1, max_size=40), repeat=st.integers(1, 3000),
       limit=st.integers(1, 64), cut=st.integers(1, 9000))
def test_what_a_stream_holds_stays_within_its_bound(pieces, repeat, limit, cut):
    """Any stream, cut anywhere into reads: the client stops with StreamOverrun (or the stream ends) and
    never holds more tokens or text than its request allows, nor reads far past its byte bound."""
    client = _client(limit)
    state = StreamState()
    client.bind(state, 0)
    sse = SSEParser()
    wire = b"".join(itertools.islice(itertools.cycle(pieces), len(pieces) * repeat))
    stopped = None
    for k in range(0, len(wire), cut):
        data = wire[k : k + cut]
        try:
            state.take(len(data))
            if client.events(0, sse.feed(data), state):
                stopped = "ended"
                break
        except StreamOverrun:
            stopped = "cut"
            break
        except SSEError:
            stopped = "line"
            break
    event(f"stream: {stopped or 'read whole'}")
    assert state.n_ids <= limit and state.n_ids + state.bare <= limit + STREAM_CHUNK_SLACK
    assert len(state.ids) <= limit
    held = sum(len(t) for t in state.text)
    assert held <= state.nbytes <= state.max_bytes + cut
    if stopped is None:  # read to the end: it never passed a bound
        assert state.nbytes <= state.max_bytes


def test_aiohttp_without_a_replaceable_factory_counts_the_body(tmp_path, monkeypatch):
    """An aiohttp release whose connector has no protocol factory to replace: the body bytes are
    counted instead, and a stream past the bound is still cut."""
    import aiohttp

    from proctor.clients import aiohttp_transport

    async def installs() -> bool:
        connector = aiohttp.TCPConnector()
        try:
            return aiohttp_transport._count_wire(connector, asyncio.get_running_loop())
        finally:
            await connector.close()

    assert not aiohttp_transport._count_wire(object(), None)  # type: ignore[arg-type]
    assert asyncio.run(installs())  # this aiohttp has one
    monkeypatch.setattr(aiohttp_transport, "_count_wire", lambda connector, loop: False)
    for k, case in enumerate(("endless_comments", "endless_tokens")):
        sut, out, n, errors, srv = _faults(tmp_path / str(k), "aiohttp", HOSTILE[case][0])
        assert sut.faults == {"protocol": n} and all("cut" in e for e in errors)
