"""Hostile input for the parsers of outside data: the SSE stream, its chunks, the JSONL dataset."""

from __future__ import annotations

import json

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from proctor.clients.llm_dataset import LLMSample, parse_length, parse_line
from proctor.clients.sse import SSEError, SSEParser
from proctor.clients.stream import StreamState
from proctor.errors import ConfigError

pytestmark = pytest.mark.fuzz

payloads = st.lists(
    st.one_of(
        st.builds(lambda t: orjson.dumps({"choices": [{"index": 0, "text": t}]}), st.text(max_size=20)),
        st.just(b"[DONE]"),
        st.binary(max_size=30).filter(lambda b: b"\n" not in b and b"\r" not in b),
    ),
    max_size=12,
)


def feed_split(parser: SSEParser, raw: bytes, cuts: list[int]) -> list[bytes]:
    out: list[bytes] = []
    last = 0
    for c in sorted(set(cuts)):
        out += parser.feed(raw[last:c])
        last = c
    out += parser.feed(raw[last:])
    return out + parser.close()


@given(payloads, st.lists(st.integers(0, 2000), max_size=20), st.sampled_from([b"\n", b"\r\n", b"\r"]))
def test_sse_events_do_not_depend_on_chunk_boundaries(datas, cuts, eol):
    raw = b"".join(b"data: " + d + eol + eol for d in datas)
    whole = SSEParser().feed(raw) + SSEParser().close()
    parser = SSEParser()
    assert feed_split(parser, raw, [c % (len(raw) + 1) for c in cuts]) == datas
    assert SSEParser().feed(raw) == datas or whole == []


@given(st.binary(max_size=400), st.lists(st.integers(0, 400), max_size=10))
def test_sse_parser_takes_any_bytes(raw, cuts):
    parser = SSEParser(max_line=64)
    try:
        events = feed_split(parser, raw, cuts)
    except SSEError:
        return
    assert all(isinstance(e, bytes) and len(e) <= 64 for e in events)


def test_an_event_of_endless_short_lines_is_a_protocol_error_not_a_memory_sink():
    """Each `data:` line short, the blank line that ends the event never sent: bounded as one line."""
    parser = SSEParser(max_line=1024)
    with pytest.raises(SSEError, match="event is longer than 1024"):
        for _ in range(1000):
            parser.feed(b"data: xxxxxxxx\n")
    assert parser.feed(b"data: ok\n\n") == [b"ok"]  # the parser is usable again (the event was dropped)


def test_a_huge_line_is_a_protocol_error_not_a_memory_sink():
    parser = SSEParser(max_line=1024)
    with pytest.raises(SSEError):
        for _ in range(100):
            parser.feed(b"x" * 100)


def test_junk_lines_and_comments_are_skipped():
    raw = b": keep-alive\nevent: x\nid: 3\ndata:{\"a\":1}\nretry: 5\n\ndata: [DONE]\n\n"
    assert SSEParser().feed(raw) == [b'{"a":1}', b"[DONE]"]


chunk_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(
        ["choices", "text", "delta", "content", "usage", "completion_tokens", "token_ids", "logprobs",
         "tokens", "finish_reason", "error", "message", "role"]), inner, max_size=4),
    max_leaves=20,
)


@given(st.lists(chunk_values | st.binary(max_size=40), max_size=10))
def test_stream_state_takes_any_chunk(chunks):
    state = StreamState()
    firsts = 0
    for c in chunks:
        data = c if isinstance(c, bytes) else json.dumps(c).encode()
        firsts += state.feed(data)
    assert firsts <= 1
    counted = state.token_count()
    assert counted is None or counted[0] >= 0


def test_stream_state_shapes():
    s = StreamState()
    assert not s.feed(b'{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}')  # role only
    assert not s.feed(b'{"choices":[]}')  # empty
    assert s.feed(b'{"choices":[{"index":0,"delta":{"content":" a b c"}}]}')  # several tokens, first
    assert not s.feed(b'{"choices":[{"index":0,"delta":{"content":" d"},"finish_reason":"length"}]}')
    assert s.token_count() is None  # no ids, no usage: never chunks as tokens
    assert not s.feed(b'{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4}}')  # usage only
    assert s.token_count() == (4, "usage") and s.ended and s.output() == b" a b c d"
    deep = b"[" * 1000 + b"]" * 1000
    assert not s.feed(deep) and s.junk == 1


@given(st.binary(max_size=300))
def test_dataset_line_takes_any_bytes(raw):
    try:
        parse_line(raw, "f.jsonl", 1)
    except ConfigError as exc:
        assert "f.jsonl:1:" in str(exc)


@given(
    st.one_of(
        st.dictionaries(st.text(max_size=5), chunk_values, max_size=4),
        st.fixed_dictionaries({"prompt": chunk_values}),
        st.fixed_dictionaries({"input_ids": chunk_values, "output": chunk_values}),
    )
)
def test_dataset_line_takes_any_json(obj):
    try:
        s = parse_line(json.dumps(obj).encode(), "f.jsonl", 7)
    except ConfigError as exc:
        assert "f.jsonl:7:" in str(exc)
    else:
        assert s is not None and (s.prompt is not None or s.input_ids is not None)


@given(st.text(max_size=50), st.one_of(st.none(), st.text(max_size=20)), st.one_of(st.none(), st.integers(1, 10**6)))
def test_a_valid_dataset_line_stays_valid(prompt, output, max_tokens):
    obj = {"prompt": prompt, "output": output, "max_tokens": max_tokens}
    raw = b"\xef\xbb\xbf" + orjson.dumps(obj) + b"\r\n"
    assert parse_line(raw, "f", 1) == LLMSample(prompt, None, output, max_tokens)


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        (b'{"input_ids": [1, -2]}', "token ids"),
        (b'{"input_ids": [1e400]}', "JSON"),
        (b'{"input_ids": [1.5]}', "token ids"),
        (b'{"input_ids": [' + b"9" * 5000 + b"]}", "valid JSON"),
        (b'{"prompt": 5}', "must be a string"),
        (b"[1]", "JSON object"),
        (b'{"output": "x"}', "needs 'prompt'"),
        (b'{"prompt": "x", "max_tokens": 0}', "max_tokens"),
        (b'{"prompt": "x", "max_tokens": true}', "max_tokens"),
        (b"\xff\xfe", "valid JSON"),
        (b"[" * 1000 + b"]" * 1000, "JSON"),
    ],
)
def test_bad_dataset_lines_are_named(raw, words):
    with pytest.raises(ConfigError, match=words):
        parse_line(raw, "d.jsonl", 3)


@given(st.text(max_size=30))
def test_length_specs(spec):
    try:
        dist, mean, spread = parse_length(spec, "in")
    except ConfigError:
        return
    assert mean >= 1 and spread >= 0
