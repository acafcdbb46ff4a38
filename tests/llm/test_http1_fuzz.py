"""Hostile responses for the raw transport's HTTP/1.1 parser: any bytes, cut anywhere.

Properties: only `HTTP1Error` escapes; the body does not depend on where the bytes were cut;
what the parser buffers stays under its bounds (a head flood or an endless chunk-size line is an
error, not memory); a well-formed chunked or Content-Length response gives back its body whole."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from proctor.clients.http1 import MAX_CHUNK_LINE, HTTP1Error, ResponseParser

pytestmark = pytest.mark.fuzz

HEAD_MAX = 4096  # a small bound, so floods hit it fast


def feed_cut(raw: bytes, cuts: list[int]) -> tuple[ResponseParser, bytes, bool]:
    """Feed raw in pieces cut at `cuts`; (parser, body, ended properly) or HTTP1Error."""
    p = ResponseParser(max_head=HEAD_MAX)
    body = b""
    last = 0
    for c in [*sorted(set(c % (len(raw) + 1) for c in cuts)), len(raw)]:
        body += b"".join(p.feed(raw[last:c]))
        assert len(p._buf) <= max(HEAD_MAX, MAX_CHUNK_LINE) + 2  # bounded buffering
        last = c
    return p, body, p.close()


def chunked(body: bytes, sizes: list[int], ext: list[bytes]) -> bytes:
    out, pos, k = b"", 0, 0
    while pos < len(body):
        n = max(1, sizes[k % len(sizes)] if sizes else len(body))
        piece = body[pos : pos + n]
        e = ext[k % len(ext)] if ext else b""
        out += b"%x%s\r\n%s\r\n" % (len(piece), e, piece)
        pos += n
        k += 1
    return out + b"0\r\n\r\n"


cut_lists = st.lists(st.integers(0, 10_000), max_size=12)
exts = st.lists(st.sampled_from([b"", b";a=b", b"; name=\"v\"", b";x"]), max_size=3)


@given(st.binary(max_size=400), st.lists(st.integers(1, 40), max_size=5), exts, cut_lists)
def test_a_chunked_body_comes_back_whole_however_it_is_cut(body, sizes, ext, cuts):
    raw = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    raw += chunked(body, sizes, ext)
    p, got, ended = feed_cut(raw, cuts)
    assert (p.status, got, ended, p.done, p.keep_alive) == (200, body, True, True, True)


@given(st.binary(max_size=400), cut_lists, st.sampled_from([b"\r\n", b"\n"]))
def test_a_content_length_body_comes_back_whole(body, cuts, eol):
    raw = eol.join([b"HTTP/1.1 429 Too Many Requests", b"Content-Length: %d" % len(body), b"", b""]) + body
    p, got, ended = feed_cut(raw, cuts)
    assert (p.status, got, ended) == (429, body, True)


@given(st.binary(max_size=300), cut_lists)
def test_read_until_close(body, cuts):
    p, got, ended = feed_cut(b"HTTP/1.0 200 OK\r\n\r\n" + body, cuts)
    assert (got, ended, p.keep_alive) == (body, True, False)


def parts():
    return st.one_of(
        st.binary(max_size=60),
        st.sampled_from([b"HTTP/1.1 200 OK\r\n", b"HTTP/1.1 100 Continue\r\n\r\n", b"HTTP/2 200\r\n",
                         b"HTTP/1.1 20 OK\r\n", b"Transfer-Encoding: chunked\r\n", b"Content-Length: 5\r\n",
                         b"Content-Length: 99999999999999999999999\r\n", b"Content-Length: 1, 2\r\n",
                         b"Transfer-Encoding: gzip\r\n", b"Connection: close\r\n", b"\r\n", b"\n",
                         b"ffffffffffffffff\r\n", b"1" * 5000 + b"\r\n", b"5;ext=\xff\xfe\r\n", b"abcde\r\n",
                         b"0\r\nX-Trailer: 1\r\n\r\n", b" folded\r\n", b"\xc3\x28\xa0\xa1", b"X: " + b"y" * 5000]),
    )


@given(st.lists(parts(), max_size=30), cut_lists)
def test_any_bytes_give_a_body_or_http1error(pieces, cuts):
    raw = b"".join(pieces)
    try:
        p, _, _ = feed_cut(raw, cuts)
    except HTTP1Error:
        return
    assert p.status == 0 or 200 <= p.status <= 999


@given(st.integers(1, 300))
def test_a_header_flood_is_an_error_not_memory(n):
    p = ResponseParser(max_head=HEAD_MAX)
    p.feed(b"HTTP/1.1 200 OK\r\n")
    with pytest.raises(HTTP1Error, match="head is longer|header fields"):
        for _ in range(n + 400):
            p.feed(b"X-Flood: %d\r\n" % n)
    assert len(p._buf) <= HEAD_MAX + 64


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        (b"HTTP/1.1 OK\r\n\r\n", "status line"),
        (b"SPDY/3 200 OK\r\n\r\n", "status line"),
        (b"HTTP/1.1 200 OK\r\nno colon\r\n\r\n", "header line"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "Content-Length"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", "conflicting"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "chunk size"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nabc", "CRLF"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"1" * (MAX_CHUNK_LINE + 10), "chunk-size line"),
        (b"HTTP/1.1 101 Switching Protocols\r\n\r\n", "101"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nextra", "after the end"),
    ],
)
def test_bad_responses_are_named(raw, words):
    with pytest.raises(HTTP1Error, match=words):
        ResponseParser().feed(raw)


def test_huge_chunk_sizes_stream_without_buffering():
    p = ResponseParser()
    p.feed(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n")
    assert b"".join(p.feed(b"x" * 1000)) == b"x" * 1000 and not p._buf and not p.close()


def test_interim_responses_are_skipped():
    p = ResponseParser()
    body = p.feed(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi")
    assert (p.status, b"".join(body), p.done) == (200, b"hi", True)


def test_chunk_extensions_of_any_length_are_skipped_in_bounded_memory():
    """Issue 22 class 4: both transports take long chunk extensions (aiohttp does); the raw parser
    skips them as they stream, keeping no more than the size token."""
    from proctor.clients.http1 import ResponseParser
    from proctor.clients.stream import MAX_CHUNK_LINE

    p = ResponseParser()
    body = b"data: x\n\n"
    wire = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + f"{len(body):x};ext=".encode()
            + b"a" * (1 << 20) + b"\r\n" + body + b"\r\n0\r\n\r\n")
    got = b""
    biggest = 0
    for k in range(0, len(wire), 1000):
        got += b"".join(p.feed(wire[k : k + 1000]))
        biggest = max(biggest, len(p._buf))
    assert got == body and p.done and biggest <= MAX_CHUNK_LINE
