"""What both HTTP transports of the openai SUT share: one stream's interpretation, the endpoints,
the outcome sink a transport reports to, the per-request timestamps, and the base client.

`StreamState` reads a stream's SSE events (pure, fuzzed). `StreamClient` is the transport-neutral
part of a client: the endpoints and their in-flight counts, the request bodies, the tokenizer, and
`events`/`finish`, which turn a stream's events into the sink's calls. The transports
(`aiohttp_transport.AiohttpClient`, `http1.RawClient`) subclass it and add the I/O; the SUT picks
one through `transport.make_transport`.

`RequestTimes`: a request's hops on the engine clock, named fields the transports (and the SUT's
outcome sink) fill while a SUT records them (`OpenAISUT.record_times`): one record per request,
none per token, nothing at all when not recording.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import struct
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

import orjson

from proctor.clients.openai_config import OpenAIConfig, endpoint_url
from proctor.errors import ConfigError, StreamOverrun
from proctor.typed_records import field, record

FAULT_KINDS = (
    "http_429",  # the server refused for load (429 Too Many Requests)
    "http_error",  # any other non-200 answer, or an error object inside the stream
    "connect",  # no connection (refused, unreachable, connect timeout)
    "timeout",  # the per-request timeout passed
    "stall",  # no byte arrived for the no-progress timeout
    "dropped",  # the connection closed before the stream ended
    "protocol",  # the stream is not SSE the client can follow
    "no_count",  # the stream ended but no source gave its token count
    "worker",  # the worker process carrying the stream died (procs=N)
)
MAX_ERROR_BODY = 2048
MAX_CHUNK_LINE = 4096  # a chunk-size line with its extensions: longer is a protocol fault (both transports)
MAX_TOKENIZER_BYTES = 256 << 20  # the largest tokenizer.json read (real ones are a few MiB)
# The request-body keys that bound a stream's output tokens (OpenAI, vLLM/TGI spellings).
TOKEN_LIMIT_KEYS = ("max_tokens", "max_completion_tokens", "max_new_tokens")

# What one stream may carry, from what its request allows (never from what the server declares or
# sends): past either bound the stream is cut as a protocol fault (`StreamOverrun`), so a server
# that streams forever costs a bounded number of reads and bytes (one streaming tokens forever for a
# max_tokens=3 request grew the client from 118 to 760 MB in 15 s).
# - Tokens: counted exactly where a chunk carries token ids or logprobs (past the limit the stream
#   would be refused at its end anyway, `StreamClient.finish`); a content chunk without them counts as
#   one token, with STREAM_CHUNK_SLACK chunks of room (a detokenizer may flush a held-back character
#   in a chunk of its own). Role-only, finish-only and usage chunks carry no token and are not counted:
#   the official counts (usage.completion_tokens, the reference SUTs' token ids) do not count them.
# - Bytes: STREAM_BASE_BYTES (the head, role, finish and usage chunks, an error body) + the request
#   body x STREAM_ECHO_PER_BODY_BYTE (a server may echo the prompt: vLLM's prompt_token_ids, echo=true)
#   + STREAM_BYTES_PER_TOKEN per token allowed (a chat chunk with 20 top_logprobs is ~2 KiB). Counted
#   as they arrive, on both transports: every byte of the response (its head, interim answers and
#   chunk framing too, which carry no body byte), and a drain after its end.
# Time is bounded apart from these: timeout_s per request, stall_s without a byte.
STREAM_CHUNK_SLACK = 8
STREAM_BASE_BYTES = 1 << 20
STREAM_ECHO_PER_BODY_BYTE = 8
STREAM_BYTES_PER_TOKEN = 16 << 10
UNBOUNDED = 1 << 62  # a StreamState made without a request's bounds (pure uses, tests)


# --- one stream's interpretation (pure, fuzzed) ---------------------------------------------------


@record(slots=True)
class StreamState:
    """What the chunks of one stream said so far, within what its request allows: `feed` and `take`
    raise `StreamOverrun` once the stream passes `max_tokens` (see STREAM_CHUNK_SLACK) or `max_bytes`."""

    max_tokens: int = UNBOUNDED  # the request's output-token limit
    max_bytes: int = UNBOUNDED  # the bytes its response may take (`stream_bytes`)
    nbytes: int = 0  # bytes read so far (`take`)
    text: list[str] = field(default_factory=list)
    ids: list[int] = field(default_factory=list)
    n_ids: int = 0  # tokens counted from per-chunk ids or logprobs
    bare: int = 0  # content chunks that carried neither (one token each, for the bound)
    ids_source: str = "token_ids"  # which of the two ("logprobs" once a chunk counted by them)
    ids_complete: bool = True  # every content chunk carried its token ids
    usage_tokens: int | None = None
    done: bool = False  # `data: [DONE]`
    finished: bool = False  # a choice reported its finish_reason
    first: bool = False  # a token has been seen
    junk: int = 0  # events that were not JSON objects of the expected shape
    error: str | None = None  # the server put an error object in the stream

    @property
    def ended(self) -> bool:
        """The stream said it was complete (servers differ in how: [DONE], finish_reason, usage)."""
        return self.done or self.finished or self.usage_tokens is not None

    def feed(self, data: bytes) -> bool:
        """Interpret one event's data; True when this event carried the stream's first token."""
        if data.strip() == b"[DONE]":
            self.done = True
            return False
        try:
            obj = orjson.loads(data)
        except (orjson.JSONDecodeError, RecursionError):
            self.junk += 1
            return False
        if not isinstance(obj, dict):
            self.junk += 1
            return False
        err = obj.get("error")
        if err:
            self.error = (err.get("message") if isinstance(err, dict) else None) or str(err)[:200]
            return False
        usage = obj.get("usage")
        if isinstance(usage, dict):
            ct = usage.get("completion_tokens")
            if type(ct) is int and ct >= 0:
                self.usage_tokens = ct
        choices = obj.get("choices")
        if not isinstance(choices, list) or not choices:
            return False
        c = choices[0]  # n=1: one choice per request
        if not isinstance(c, dict):
            self.junk += 1
            return False
        if c.get("finish_reason"):
            self.finished = True
        text = c.get("text")
        if text is None:
            delta = c.get("delta")
            if isinstance(delta, dict):
                text = delta.get("content") or delta.get("reasoning_content")
        if not isinstance(text, str):
            text = ""
        n = self._count_ids(c)
        if not text and not n:
            return False  # role-only, empty, usage-only or finish-only chunk
        n_ids, bare = (self.n_ids, self.bare + 1) if n is None else (self.n_ids + n, self.bare)
        if n_ids > self.max_tokens or n_ids + bare > self.max_tokens + STREAM_CHUNK_SLACK:
            what = (f"{n_ids} token ids" if n_ids > self.max_tokens
                    else f"{n_ids + bare} tokens ({bare} content chunks without token ids)")
            raise StreamOverrun(f"the stream passed what its request allows: {what} for at most "
                                f"{self.max_tokens}; cut")
        self.n_ids, self.bare = n_ids, bare
        if n is None:
            self.ids_complete = False
        self.text.append(text)
        was_first = not self.first
        self.first = True
        return was_first

    def take(self, n: int) -> None:
        """n more bytes of the response were read: past `max_bytes` the stream is cut."""
        self.nbytes += n
        if self.nbytes > self.max_bytes:
            raise StreamOverrun(f"the stream passed {self.max_bytes} bytes, what a request of at most "
                                f"{self.max_tokens} tokens allows ({self.nbytes} read); cut")

    def _count_ids(self, c: dict[str, Any]) -> int | None:
        """Tokens in this chunk from ids or logprobs when the server sent them, else None."""
        ids = c.get("token_ids")
        if isinstance(ids, list) and all(type(t) is int for t in ids):
            if self.n_ids + len(ids) <= self.max_tokens:  # kept only within the bound (else `feed` cuts)
                self.ids.extend(ids)
            return len(ids)
        lp = c.get("logprobs")
        if isinstance(lp, dict):
            per = lp.get("tokens")  # completions
            if per is None:
                per = lp.get("content")  # chat
            if isinstance(per, list):
                self.ids_source = "logprobs"
                return len(per)
        return None

    def token_count(self, tokenizer: Any = None) -> tuple[int, str] | None:
        """(count, source) by the first exact source available, None when there is none."""
        if self.first and self.ids_complete and self.n_ids:
            return self.n_ids, self.ids_source
        if self.usage_tokens is not None:
            return self.usage_tokens, "usage"
        if tokenizer is not None:
            return len(tokenizer.encode("".join(self.text), add_special_tokens=False).ids), "tokenizer"
        if not self.first:
            return 0, "empty"
        return None

    def output(self) -> bytes:
        return "".join(self.text).encode("utf-8", "surrogatepass")


# --- the pieces a transport is made of -------------------------------------------------------------


@record(slots=True)
class Endpoint:
    """One endpoint URL and its request counts (guarded by the owner's lock where threads share it)."""

    url: str
    outstanding: int = 0
    sent: int = 0
    down: bool = False  # taken for down (`tally.MAX_CONSECUTIVE_CONNECT_FAILURES`): sent nothing more


def least_busy(endpoints: list[Endpoint]) -> int:
    """The index of the endpoint with the fewest requests in flight (the first of a tie), among
    those not taken for down."""
    if len(endpoints) == 1:
        return 0
    return min(range(len(endpoints)), key=lambda k: (endpoints[k].down, endpoints[k].outstanding))


@record(slots=True)
class RequestTimes:
    """One request's hops, perf_counter_ns on the engine clock; 0: not reached, or not a hop of this
    transport. With procs=N only `issued`, `sent`, `first_token` and `done` travel back (the workers'
    stamps)."""

    issued: int = 0  # the SUT's issue call took the request (the engine's issue)
    queued: int = 0  # aiohttp: the loop thread took it
    started: int = 0  # aiohttp: its request task began
    sent: int = 0  # the send stamp: the request goes to the socket now (the send lateness's end)
    written: int = 0  # raw: the send call returned
    head: int = 0  # the response's status line and headers were read
    first_byte: int = 0  # the first body bytes arrived (raw: at the socket; aiohttp: in the request task)
    first_token: int = 0  # the first token was handed to the sink
    done: int = 0  # the stream's outcome was handed to the sink


Times = dict[int, RequestTimes]  # response id -> its record, while a SUT records them


def times_of(times: Times, i: int) -> RequestTimes:
    """Request i's record, made on first use."""
    rt = times.get(i)
    if rt is None:
        rt = times[i] = RequestTimes()
    return rt


class StreamSink(Protocol):
    """Where a transport reports each request's outcome (any order of samples, the loop's thread;
    `sent` also from the issuing thread with the raw transport).

    `t_ns`: when the event was seen on the engine clock, None for "now"."""

    def sent(self, i: int, t_issue: int, t_sent: int) -> None: ...

    def first_token(self, i: int, text: bytes, t_ns: int | None = None) -> None: ...

    def complete(
        self, i: int, output: bytes, n: int, source: str, mismatch: bool, t_ns: int | None = None
    ) -> None: ...

    def fail(self, i: int, idx: int, kind: str, message: str) -> None: ...

    def junk(self, n: int) -> None: ...


# one request handed to a client: (response id, QSL index, endpoint index or -1, engine issue time)
Request = tuple[int, int, int, int]


def load_tokenizer(path: str) -> Any:
    """A `tokenizers` tokenizer from a local tokenizer.json (or a folder holding one)."""
    try:
        tokenizer_cls = importlib.import_module("tokenizers").Tokenizer
    except ImportError:
        raise ConfigError(
            "tokenizer= needs the 'tokenizers' package (pip install tokenizers)", key="tokenizer"
        ) from None
    p = Path(path)
    if p.is_dir():
        p = p / "tokenizer.json"
    if not p.is_file():
        raise ConfigError(f"tokenizer={path}: no tokenizer.json there", key="tokenizer")
    if p.stat().st_size > MAX_TOKENIZER_BYTES:
        raise ConfigError(f"tokenizer={path}: {p} is over {MAX_TOKENIZER_BYTES >> 20} MiB", key="tokenizer")
    try:
        return tokenizer_cls.from_file(str(p))
    except Exception as exc:  # noqa: BLE001 - the library raises bare Exceptions for a bad file
        why = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        raise ConfigError(f"tokenizer={path}: {p} is not a tokenizer.json ({why})", key="tokenizer") from None


def raise_fd_limit() -> None:
    """Thousands of streams need thousands of sockets: lift the soft open-file limit to the hard one."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft != resource.RLIM_INFINITY and (hard == resource.RLIM_INFINITY or soft < hard):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard if hard != resource.RLIM_INFINITY else 65536, hard))
    except (ImportError, ValueError, OSError):
        pass


def new_loop() -> asyncio.AbstractEventLoop:
    """An event loop for a client's thread: uvloop's when it is installed."""
    try:
        loop: asyncio.AbstractEventLoop = importlib.import_module("uvloop").new_event_loop()  # optional
        return loop
    except ImportError:
        return asyncio.new_event_loop()


def token_limit(body: bytes, default: int) -> int:
    """The most output tokens a request asked for: the largest of its body's limit keys, else
    `default`. A server's count above it is a protocol fault, not a number to add up."""
    try:
        obj = orjson.loads(body)
    except orjson.JSONDecodeError:
        return default
    if not isinstance(obj, dict):
        return default
    found = [v for v in map(obj.get, TOKEN_LIMIT_KEYS) if type(v) is int and v >= 0]
    return max(found, default=default)


def stream_bytes(max_tokens: int, body_bytes: int) -> int:
    """The most bytes a response to a request of `body_bytes` asking at most `max_tokens` may take
    (see STREAM_BASE_BYTES)."""
    return (STREAM_BASE_BYTES + STREAM_ECHO_PER_BODY_BYTE * body_bytes
            + STREAM_BYTES_PER_TOKEN * (max_tokens + STREAM_CHUNK_SLACK))


def _count_text(n: int) -> str:
    """A count from the wire for a message: its digits when short, else its size."""
    return str(n) if n < 10**12 else f"about 10^{len(str(n)) - 1}"


def refusal(status: int, headers: Mapping[str, str], url: str, body: str) -> tuple[str, str]:
    """(fault kind, message) of a non-200 answer; a redirect is named and never followed."""
    if 300 <= status < 400:
        where = headers.get("location") or headers.get("Location") or ""
        return "http_error", (
            f"HTTP {status} redirect, not followed: {url} -> {where[:200]!r}; give the final URL"
        )
    return ("http_429" if status == 429 else "http_error"), f"HTTP {status} from {url}: {body.strip()[:200]}"


def unasked_encoding(headers: Mapping[str, str]) -> str | None:
    """The Content-Encoding of a 200 answer when it is not identity (proctor asks for identity)."""
    enc = headers.get("content-encoding") or headers.get("Content-Encoding")
    if enc and enc.strip().lower() != "identity":
        return enc.strip()[:40]
    return None


def request_headers() -> dict[str, str]:
    """The headers of every request: JSON, and the API key when OPENAI_API_KEY is set."""
    # identity: a compressed stream would be read one way by one transport and another by the other
    headers = {"Content-Type": "application/json", "Accept-Encoding": "identity"}
    key = os.environ.get("OPENAI_API_KEY")
    if key:
        headers["Authorization"] = f"Bearer {key}"
    return headers


class StreamClient:
    """The transport-neutral part of a client: endpoints, bodies, tokenizer, and the turning of a
    stream's events into sink calls. A transport adds `open`, `shut`, `start` and `submit`."""

    def __init__(self, config: OpenAIConfig, body: Callable[[int], bytes], sink: StreamSink) -> None:
        self.config = config
        self.body = body  # QSL index -> request body
        self.sink = sink
        self.tokenizer = load_tokenizer(config.tokenizer) if config.tokenizer else None
        self.endpoints = [Endpoint(endpoint_url(u, config.api)) for u in config.urls]
        self.headers = request_headers()
        self.times: Times | None = None  # set to the SUT's records to have the hops stamped
        self.export: Any = None  # request_export.RequestLog while the SUT exports (chunks per request)
        self.ids_out = config.output == "ids"  # log int32 token ids, not text (TEST06 reads them)
        self._limits: dict[int, tuple[int, int]] = {}  # QSL index -> its request's (tokens, bytes) bounds
        raise_fd_limit()

    def _bounds(self, idx: int) -> tuple[int, int]:
        """Sample idx's output-token limit and response-byte bound, from its request body, once."""
        b = self._limits.get(idx)
        if b is None:
            body = self.body(idx)
            lim = token_limit(body, self.config.max_tokens)
            b = self._limits[idx] = (lim, stream_bytes(lim, len(body)))
        return b

    def limit(self, idx: int) -> int:
        """Sample idx's output-token limit, read from its request body once."""
        return self._bounds(idx)[0]

    def bind(self, st: StreamState, idx: int) -> None:
        """Bound sample idx's stream by what its request allows (the first time its response is read:
        the loop thread's, off the issuing path, since the first use parses the body)."""
        st.max_tokens, st.max_bytes = self._bounds(idx)

    def events(self, i: int, events: list[bytes], st: StreamState, t_ns: int | None = None) -> bool:
        """Interpret events as they arrive; True once the stream said [DONE] or reported an error.
        t_ns: when their bytes arrived (the raw transport's stamp), None for "now"."""
        seen = len(st.text)
        for ev in events:
            if st.feed(ev):
                first = (ids_bytes(st.ids[:1]) or b"") if self.ids_out else st.text[0].encode()
                self.sink.first_token(i, first, t_ns)
            if st.done or st.error:
                if self.export is not None:
                    self._export_chunks(i, st, seen, t_ns)
                return True
        if self.export is not None:
            self._export_chunks(i, st, seen, t_ns)
        return False

    def _export_chunks(self, i: int, st: StreamState, seen: int, t_ns: int | None) -> None:
        """The per-request export's chunk count and the last content chunk's arrival."""
        if len(st.text) > seen:
            self.export.note_chunks(i, len(st.text), t_ns or time.perf_counter_ns())

    def finish(self, i: int, idx: int, st: StreamState, url: str, t_ns: int | None = None) -> None:
        """The stream ended: complete the sample with its token count, or fail it saying why."""
        if st.junk:
            self.sink.junk(st.junk)
        if st.error:
            self.sink.fail(i, idx, "http_error", f"{url} sent an error in the stream: {st.error}")
            return
        if not st.ended:
            self.sink.fail(i, idx, "dropped", f"the stream from {url} ended without [DONE], finish_reason or usage")
            return
        counted = st.token_count(self.tokenizer)
        if counted is None:
            self.sink.fail(
                i,
                idx,
                "no_count",
                f"{url} sent no token ids, logprobs or usage record; give logprobs=1 or tokenizer=PATH",
            )
            return
        n, source = counted
        limit = self.limit(idx)
        if n > limit:  # never taken as a count: it would skew tokens/s (or overflow the sums)
            self.sink.fail(
                i, idx, "protocol", f"{url} reported {_count_text(n)} output tokens ({source}) for a request "
                f"of at most {limit}",
            )
            return
        mismatch = source in ("token_ids", "logprobs") and st.usage_tokens is not None and st.usage_tokens != n
        if not self.ids_out:
            self.sink.complete(i, st.output(), n, source, mismatch, t_ns)
        elif source == "token_ids" and len(st.ids) == n and (data := ids_bytes(st.ids)) is not None:
            self.sink.complete(i, data, n, source, mismatch, t_ns)
        else:  # output=ids logs what the server generated, never a re-tokenized guess
            self.sink.fail(i, idx, "no_count", f"{url} sent no int32 token ids with every chunk; output=ids needs "
                           "them (vLLM return_token_ids, proctor serve llm)")


def ids_bytes(ids: list[int]) -> bytes | None:
    """Token ids as the MLPerf LLM references log them: int32, little-endian; None when one is
    outside int32 (the server's ids are not trusted)."""
    try:
        return struct.pack(f"<{len(ids)}i", *ids)
    except struct.error:
        return None


__all__ = [
    "FAULT_KINDS",
    "MAX_CHUNK_LINE",
    "MAX_ERROR_BODY",
    "STREAM_BASE_BYTES",
    "STREAM_BYTES_PER_TOKEN",
    "STREAM_CHUNK_SLACK",
    "STREAM_ECHO_PER_BODY_BYTE",
    "Endpoint",
    "Request",
    "RequestTimes",
    "StreamClient",
    "StreamSink",
    "StreamState",
    "Times",
    "least_busy",
    "load_tokenizer",
    "new_loop",
    "raise_fd_limit",
    "refusal",
    "request_headers",
    "stream_bytes",
    "times_of",
    "token_limit",
    "unasked_encoding",
]
