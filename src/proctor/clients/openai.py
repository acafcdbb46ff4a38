"""A SUT that drives OpenAI-compatible LLM endpoints over HTTP, streaming (vLLM, SGLang, TGI, ...).

`--sut openai:url=URL[,url=URL2...],model=NAME,api=completions|chat,dataset=FILE`: every sample
becomes one streamed `/v1/completions` or `/v1/chat/completions` request (`stream: true`,
`stream_options.include_usage`) over keep-alive connections, read by one asyncio loop in a
background thread (thousands of concurrent streams). Transport `http=raw` (the default,
`proctor.clients.http1`): the engine's issuing thread writes each pre-built request itself on an idle
connection and the first-token time is read where the bytes arrive; `http=aiohttp`: one aiohttp
session on the loop (also what carries https:// endpoints). The first chunk that carries
a token calls `first_token_complete` and the end of the stream `query_samples_complete` with the
token count, both the moment the chunk is parsed, so the engine stamps TTFT and TPOT itself.

Token counts are exact or nothing: from the token ids the server returns (`token_ids`, vLLM's
`return_token_ids`, or per-token `logprobs`), else from the stream's usage record, else by
re-tokenizing the text with a local tokenizer (`tokenizer=PATH`, the `tokenizers` package); a
chunk is never taken for one token. `count_sources` says which source each sample used.

Faults (HTTP errors, 429s, connect errors, per-request timeouts, stalls past the no-progress
timeout, dropped streams, broken SSE, a stream without a token count) are counted per kind in
`faults`, logged with the sample, sent to the run's error log, and the sample completes with
n_tokens=0 and no first token: the engine counts it as an error, it adds no TTFT (the percentile
counts it above every measured one) and no per-token time of its own.

Structure: `StreamClient` is the request and stream machinery (one asyncio loop, its aiohttp
session); it reports every outcome through a small `Sink`. With `procs=0` (the default) one client
runs on a loop thread in the engine's process and its `LocalSink` calls the completion functions
at once. With `procs=N` the client runs in N worker processes (`openai_procs`) whose sink sends
event tuples stamped with `time.perf_counter_ns` (the engine's clock, shared by every process of
the machine) back in batches; the engine's process keeps the one schedule and applies them with
their `t_ns`. Both paths measure the send lateness (request sent - engine issue) for `report()`.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import threading
import time
from array import array
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

import aiohttp
import numpy as np
import orjson

from proctor.clients.llm_dataset import LENGTH_DISTS, LLMDataset, LLMSample, load_jsonl, synthetic
from proctor.clients.sse import SSEError, SSEParser
from proctor.errors import ConfigError
from proctor.loadgen import completion
from proctor.loadgen.types import QuerySample, QuerySampleResponse
from proctor.suts.params import param, takes

log = logging.getLogger("proctor.clients.openai")

APIS = {"completions": "/v1/completions", "chat": "/v1/chat/completions"}
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
HTTP_TRANSPORTS = ("raw", "aiohttp")
MAX_PROCS = 256


# --- one stream's interpretation (pure, fuzzed) ---------------------------------------------------


@dataclass(slots=True)
class StreamState:
    """What the chunks of one stream said so far."""

    text: list[str] = field(default_factory=list)
    ids: list[int] = field(default_factory=list)
    n_ids: int = 0  # tokens counted from per-chunk ids or logprobs
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
        self.text.append(text)
        if n is None:
            self.ids_complete = False
        else:
            self.n_ids += n
        was_first = not self.first
        self.first = True
        return was_first

    def _count_ids(self, c: dict[str, Any]) -> int | None:
        """Tokens in this chunk from ids or logprobs when the server sent them, else None."""
        ids = c.get("token_ids")
        if isinstance(ids, list) and all(type(t) is int for t in ids):
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


# --- configuration --------------------------------------------------------------------------------


def endpoint_url(url: str, api: str) -> str:
    """A base URL (`http://host:port`, `.../v1`) or a full endpoint URL to the endpoint to POST to."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(f"url={url!r}: expected http://HOST:PORT[/v1]", key="url")
    path = parts.path.rstrip("/")
    if path.endswith(("/completions", "/chat/completions")):
        return url
    if path.endswith("/v1"):
        path = path[: -len("/v1")]
    return f"{parts.scheme}://{parts.netloc}{path}{APIS[api]}"


@dataclass(frozen=True, slots=True)
class OpenAIConfig:
    urls: tuple[str, ...]
    model: str
    api: str = "completions"
    max_tokens: int = 128
    timeout_s: float = 600.0  # per request, from send to the end of its stream
    stall_s: float = 60.0  # no byte for this long: the stream is given up
    connect_s: float = 10.0
    concurrency: int = 0  # streams in flight at most (0: no limit beyond max_connections)
    max_connections: int = 8192
    token_ids: bool = False  # ask for token ids (vLLM `return_token_ids`)
    ignore_eos: bool = False  # generate exactly max_tokens (vLLM/SGLang `ignore_eos` + `min_tokens`)
    logprobs: bool = False  # ask for per-token logprobs and count their entries (llama.cpp, OpenAI)
    tokenizer: str | None = None
    procs: int = 0  # worker processes carrying the streams (0: one loop thread in this process)
    http: str = "raw"  # transport: "raw" (proctor.clients.http1) or "aiohttp"
    warm: int = 4  # connections opened per endpoint at start (http=raw)
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.urls:
            raise ConfigError("the openai SUT needs url=http://HOST:PORT", key="url")
        if self.api not in APIS:
            raise ConfigError(f"api={self.api!r}: expected one of {', '.join(APIS)}", key="api")
        if not 1 <= self.max_tokens <= 1_000_000:
            raise ConfigError(f"max_tokens={self.max_tokens}: expected 1..1000000", key="max_tokens")
        for key in ("timeout_s", "stall_s", "connect_s"):
            v = getattr(self, key)
            if not 0 < v <= 86_400:
                raise ConfigError(f"{key}={v}: expected seconds in (0, 86400]", key=key)
        if self.http not in HTTP_TRANSPORTS:
            raise ConfigError(f"http={self.http!r}: expected one of {', '.join(HTTP_TRANSPORTS)}", key="http")
        if not 0 <= self.warm <= 1024:
            raise ConfigError(f"warm={self.warm}: expected 0..1024 connections per endpoint", key="warm")
        if not 0 <= self.procs <= MAX_PROCS:
            raise ConfigError(f"procs={self.procs}: expected 0..{MAX_PROCS}", key="procs")
        if 0 < self.concurrency < self.procs:
            raise ConfigError(
                f"concurrency={self.concurrency} is split over procs={self.procs} workers: give at least "
                "one stream per worker",
                key="concurrency",
            )

    def body(self, s: LLMSample) -> bytes:
        """The JSON request body of one sample (built at load time, outside the timed part)."""
        n = s.max_tokens or self.max_tokens
        req: dict[str, Any] = {"model": self.model, "max_tokens": n, "temperature": 0.0}
        if self.api == "chat":
            if s.prompt is None:
                raise ConfigError("api=chat needs text prompts; this sample has only input_ids", key="api")
            req["messages"] = [{"role": "user", "content": s.prompt}]
        else:
            req["prompt"] = list(s.input_ids) if s.input_ids is not None else s.prompt
        req["stream"] = True
        req["stream_options"] = {"include_usage": True}
        if self.token_ids:
            req["return_token_ids"] = True
        if self.logprobs:  # one entry per token: an exact count where no usage record comes
            if self.api == "chat":  # some servers (llama.cpp's Python one) send none without top_logprobs
                req["logprobs"], req["top_logprobs"] = True, 0
            else:
                req["logprobs"] = 1
        if self.ignore_eos:
            req["ignore_eos"] = True
            req["min_tokens"] = n
        req.update(self.extra)
        return orjson.dumps(req)


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
    return tokenizer_cls.from_file(str(p))


# --- the SUT ---------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Endpoint:
    url: str
    outstanding: int = 0
    sent: int = 0


def _raise_fd_limit() -> None:
    """Thousands of streams need thousands of sockets: lift the soft open-file limit to the hard one."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft != resource.RLIM_INFINITY and (hard == resource.RLIM_INFINITY or soft < hard):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard if hard != resource.RLIM_INFINITY else 65536, hard))
    except (ImportError, ValueError, OSError):
        pass


def _new_loop() -> asyncio.AbstractEventLoop:
    try:
        loop: asyncio.AbstractEventLoop = importlib.import_module("uvloop").new_event_loop()  # optional
        return loop
    except ImportError:
        return asyncio.new_event_loop()


class Sink(Protocol):
    """Where a `StreamClient` reports each request's outcome (any order of samples, one loop thread).

    `t_ns`: when the event was seen on the engine clock, None for "now" (the in-process sink lets
    the engine read its clock, as before)."""

    def sent(self, i: int, t_issue: int, t_sent: int) -> None: ...

    def first_token(self, i: int, text: bytes, t_ns: int | None = None) -> None: ...

    def complete(
        self, i: int, output: bytes, n: int, source: str, mismatch: bool, t_ns: int | None = None
    ) -> None: ...

    def fail(self, i: int, idx: int, kind: str, message: str) -> None: ...

    def junk(self, n: int) -> None: ...


class Tally:
    """What the SUT reports at the end: token count sources, faults per kind, send lateness. Fed by
    the in-process sink or by the events of the worker processes (the engine's process only)."""

    def __init__(self) -> None:
        self.faults: Counter[str] = Counter()
        self.count_sources: Counter[str] = Counter()
        self.count_mismatches = 0  # token ids and usage disagreed (the ids were used)
        self.junk_events = 0
        self.lateness_ns = array("q")  # each request's send time - the engine's issue time
        self.sent_ns: dict[int, int] | None = None  # set to {} to record each request's send time

    def note_sent(self, i: int, t_issue: int, t_sent: int) -> None:
        self.lateness_ns.append(t_sent - t_issue)
        if self.sent_ns is not None:
            self.sent_ns[i] = t_sent

    def note_done(self, i: int, source: str, mismatch: bool) -> None:
        if mismatch:
            self.count_mismatches += 1
        if source not in self.count_sources:
            log.info("token counts from %s (first sample %d)", source, i)
        self.count_sources[source] += 1

    def fail(self, i: int, idx: int, kind: str, message: str) -> None:
        self.faults[kind] += 1
        text = f"openai SUT: sample {i} (QSL index {idx}) failed: {kind}: {message}"
        log.warning(text)
        # counted by kind (the first of each in the detail log); the sample is no result
        completion.fail_samples([i], f"openai SUT: {kind}: {message}")

    def lateness_line(self) -> str | None:
        lat = np.frombuffer(self.lateness_ns, np.int64) if len(self.lateness_ns) else None
        if lat is None:
            return None
        p50, p99 = np.percentile(lat, [50, 99])
        return (
            f"send lateness (request sent - engine issue) over {lat.size} requests: "
            f"p50 {p50 / 1e6:.3f} ms, p99 {p99 / 1e6:.3f} ms, max {int(lat.max()) / 1e6:.3f} ms"
        )


class LocalSink:
    """The in-process path: every outcome goes to the completion functions at once."""

    def __init__(self, tally: Tally) -> None:
        self.tally = tally

    def sent(self, i: int, t_issue: int, t_sent: int) -> None:
        self.tally.note_sent(i, t_issue, t_sent)

    def first_token(self, i: int, text: bytes, t_ns: int | None = None) -> None:
        completion.first_token_complete([QuerySampleResponse(i, text)], t_ns=t_ns)

    def complete(
        self, i: int, output: bytes, n: int, source: str, mismatch: bool, t_ns: int | None = None
    ) -> None:
        self.tally.note_done(i, source, mismatch)
        completion.query_samples_complete([QuerySampleResponse(i, output, n)], t_ns=t_ns)

    def fail(self, i: int, idx: int, kind: str, message: str) -> None:
        self.tally.fail(i, idx, kind, message)

    def junk(self, n: int) -> None:
        self.tally.junk_events += n


# one request handed to a client: (response id, QSL index, endpoint index or -1, engine issue time)
Request = tuple[int, int, int, int]


class StreamClient:
    """The request and stream machinery of one asyncio loop: streams each sample to an endpoint
    (the one given, else the one with the fewest requests in flight) and reports to its sink."""

    def __init__(self, config: OpenAIConfig, body: Callable[[int], bytes], sink: Sink) -> None:
        self.config = config
        self.body = body  # QSL index -> request body
        self.sink = sink
        self.tokenizer = load_tokenizer(config.tokenizer) if config.tokenizer else None
        self.endpoints = [_Endpoint(endpoint_url(u, config.api)) for u in config.urls]
        self._headers = {"Content-Type": "application/json"}
        key = os.environ.get("OPENAI_API_KEY")
        if key:
            self._headers["Authorization"] = f"Bearer {key}"
        self._timeout = aiohttp.ClientTimeout(
            total=config.timeout_s, sock_connect=config.connect_s, sock_read=config.stall_s
        )
        _raise_fd_limit()
        self._tasks: set[asyncio.Task[None]] = set()
        self._session: aiohttp.ClientSession | None = None
        self._sem: asyncio.Semaphore | None = None

    async def open(self) -> None:
        connector = aiohttp.TCPConnector(limit=self.config.max_connections, limit_per_host=0)
        self._session = aiohttp.ClientSession(connector=connector, headers=self._headers)
        if self.config.concurrency > 0:
            self._sem = asyncio.Semaphore(self.config.concurrency)

    async def shut(self) -> None:
        """Cancel the streams in flight and close the session."""
        for t in list(self._tasks):
            t.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._session is not None:
            await self._session.close()

    # --- the loop ---------------------------------------------------------------------------------

    def start(self, requests: list[Request]) -> None:
        loop, tasks = asyncio.get_running_loop(), self._tasks
        for i, idx, e, t_issue in requests:
            t = loop.create_task(self._request(i, idx, e, t_issue))
            tasks.add(t)
            t.add_done_callback(tasks.discard)

    async def _request(self, i: int, idx: int, e: int, t_issue: int) -> None:
        if self._sem is None:
            await self._stream(i, idx, e, t_issue)
        else:
            async with self._sem:
                await self._stream(i, idx, e, t_issue)

    async def _stream(self, i: int, idx: int, e: int = -1, t_issue: int = 0) -> None:
        if e >= 0:
            ep = self.endpoints[e]
        else:
            ep = min(self.endpoints, key=_outstanding) if len(self.endpoints) > 1 else self.endpoints[0]
        body = self.body(idx)
        st = StreamState()
        ep.outstanding += 1
        ep.sent += 1
        self.sink.sent(i, t_issue, time.perf_counter_ns())
        assert self._session is not None
        try:
            async with self._session.post(ep.url, data=body, timeout=self._timeout) as resp:
                if resp.status != 200:
                    text = (await resp.content.read(MAX_ERROR_BODY)).decode("utf-8", "replace")
                    kind = "http_429" if resp.status == 429 else "http_error"
                    self._fail(i, idx, kind, f"HTTP {resp.status} from {ep.url}: {text.strip()[:200]}")
                    return
                parser = SSEParser()
                async for chunk in resp.content.iter_any():
                    if self._events(i, parser.feed(chunk), st):
                        break
                else:
                    self._events(i, parser.close(), st)
        except aiohttp.ConnectionTimeoutError as exc:
            self._fail(i, idx, "connect", f"connect timeout to {ep.url}: {exc}")
            return
        except aiohttp.SocketTimeoutError:
            self._fail(i, idx, "stall", f"no data from {ep.url} for {self.config.stall_s:g} s")
            return
        except TimeoutError:
            self._fail(i, idx, "timeout", f"request to {ep.url} took over {self.config.timeout_s:g} s")
            return
        except aiohttp.ClientConnectorError as exc:
            self._fail(i, idx, "connect", f"cannot connect to {ep.url}: {exc.os_error or exc}")
            return
        except (aiohttp.ClientPayloadError, aiohttp.ServerDisconnectedError, aiohttp.ClientOSError) as exc:
            self._fail(i, idx, "dropped", f"stream from {ep.url} broke off: {type(exc).__name__}: {exc}")
            return
        except SSEError as exc:
            self._fail(i, idx, "protocol", f"{ep.url}: {exc}")
            return
        except aiohttp.ClientError as exc:
            self._fail(i, idx, "http_error", f"{ep.url}: {type(exc).__name__}: {exc}")
            return
        finally:
            ep.outstanding -= 1
        self._finish(i, idx, st, ep.url)

    def _events(self, i: int, events: list[bytes], st: StreamState, t_ns: int | None = None) -> bool:
        """Interpret events as they arrive; True once the stream said [DONE] or reported an error.
        t_ns: when their bytes arrived (the raw transport's stamp), None for "now"."""
        for ev in events:
            if st.feed(ev):
                self.sink.first_token(i, st.text[0].encode(), t_ns)
            if st.done or st.error:
                return True
        return False

    def _finish(self, i: int, idx: int, st: StreamState, url: str, t_ns: int | None = None) -> None:
        if st.junk:
            self.sink.junk(st.junk)
        if st.error:
            self._fail(i, idx, "http_error", f"{url} sent an error in the stream: {st.error}")
            return
        if not st.ended:
            self._fail(i, idx, "dropped", f"the stream from {url} ended without [DONE], finish_reason or usage")
            return
        counted = st.token_count(self.tokenizer)
        if counted is None:
            self._fail(
                i,
                idx,
                "no_count",
                f"{url} sent no token ids, logprobs or usage record; give logprobs=1 or tokenizer=PATH",
            )
            return
        n, source = counted
        mismatch = source in ("token_ids", "logprobs") and st.usage_tokens is not None and st.usage_tokens != n
        self.sink.complete(i, st.output(), n, source, mismatch, t_ns)

    def _fail(self, i: int, idx: int, kind: str, message: str) -> None:
        self.sink.fail(i, idx, kind, message)


# how a worker process finds the samples: ("jsonl", path) | ("synthetic", n, in, out, seed) |
# ("samples", [LLMSample, ...]) (a dataset built in code: sent once at start)
DatasetSpec = tuple[Any, ...]


def make_client(config: OpenAIConfig, body: Callable[[int], bytes], sink: Sink) -> StreamClient:
    """The config's transport: the raw HTTP/1.1 client (http=raw, http:// endpoints) or aiohttp."""
    if config.http == "raw":
        from proctor.clients.http1 import make_client as raw

        return raw(config, body, sink)
    return StreamClient(config, body, sink)


def load_dataset(spec: DatasetSpec) -> list[LLMSample]:
    """The samples a dataset spec names (the engine's process and each worker load them alike)."""
    kind = spec[0]
    if kind == "jsonl":
        return load_jsonl(spec[1])
    if kind == "synthetic":
        return synthetic(int(spec[1]), str(spec[2]), str(spec[3]), int(spec[4]))
    if kind == "samples":
        return list(spec[1])
    raise ConfigError(f"unknown dataset spec {kind!r}", key="dataset")


class OpenAISUT(Tally):
    """Streams each sample to the endpoint with the fewest requests in flight; see the module doc."""

    def __init__(self, config: OpenAIConfig, qsl: LLMDataset, dataset: DatasetSpec | None = None) -> None:
        super().__init__()
        self.config = config
        self.qsl = qsl
        self._closed = False
        self.pool: Any = None
        self.client: StreamClient | None = None
        if config.procs > 0:
            from proctor.clients.openai_procs import WorkerPool

            self.endpoints = [_Endpoint(endpoint_url(u, config.api)) for u in config.urls]
            self.pool = WorkerPool(config, dataset or ("samples", qsl.samples), self)
            return
        self.client = make_client(config, self._body, LocalSink(self))
        self._direct = getattr(self.client, "issue", None)  # the raw transport sends from the caller
        self.tokenizer = self.client.tokenizer
        self.endpoints = self.client.endpoints
        self._loop = _new_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="openai-sut", daemon=True)
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.client.open(), self._loop).result()

    def _body(self, idx: int) -> bytes:
        body = self.qsl.bodies.get(idx)
        if body is None:  # not loaded (a caller outside the engine): build it now
            body = self.config.body(self.qsl.samples[idx])
        return body

    @property
    def name(self) -> str:
        return f"openai:{self.config.model}@{','.join(e.url for e in self.endpoints)}"

    # --- the engine's calls (any thread) ------------------------------------------------------------

    def issue_query(self, samples: list[QuerySample]) -> None:
        self._issue([(s.id, s.index) for s in samples])

    def issue_query_arrays(self, ids: np.ndarray, indices: np.ndarray) -> None:
        self._issue(list(zip(ids.tolist(), indices.tolist(), strict=True)))

    def _issue(self, pairs: list[tuple[int, int]]) -> None:
        t = time.perf_counter_ns()
        if self.pool is not None:
            self.pool.issue(pairs, t)
            return
        if self._direct is not None:
            self._direct([(i, idx, -1, t) for i, idx in pairs])
            return
        assert self.client is not None
        self._loop.call_soon_threadsafe(self.client.start, [(i, idx, -1, t) for i, idx in pairs])

    def flush_queries(self) -> None:
        pass

    # --- reporting and shutdown ----------------------------------------------------------------------

    def report(self) -> list[str]:
        """Lines for the run's summary: token count sources, faults per kind, requests per endpoint,
        send lateness (and the worker processes with procs=N)."""
        lines = [
            "token counts from: "
            + (", ".join(f"{k} {v}" for k, v in sorted(self.count_sources.items())) or "no completed stream")
        ]
        if self.count_mismatches:
            lines.append(f"token ids and usage disagreed on {self.count_mismatches} streams (ids used)")
        faults = {k: self.faults[k] for k in FAULT_KINDS if self.faults[k]}
        lines.append(
            "faults: " + (", ".join(f"{k} {v}" for k, v in faults.items()) if faults else "none")
        )
        if self.junk_events:
            lines.append(f"{self.junk_events} stream events were not JSON chunks (ignored)")
        if len(self.endpoints) > 1:
            lines.append("requests per endpoint: " + ", ".join(f"{e.url} {e.sent}" for e in self.endpoints))
        late = self.lateness_line()
        if late:
            lines.append(late)
        if self.pool is not None:
            lines += self.pool.report()
        return lines

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self.pool is not None:
            self.pool.close()
            return
        assert self.client is not None
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(self.client.shut(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        if not self._thread.is_alive():
            self._loop.close()

    def __enter__(self) -> OpenAISUT:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _outstanding(e: _Endpoint) -> int:
    return e.outstanding


# --- the registry factory ---------------------------------------------------------------------------

_D = OpenAIConfig(urls=("http://127.0.0.1:8000",), model="default")  # the defaults, stated once


@dataclass(frozen=True, slots=True)
class OpenAIParams:
    """`--sut openai:k=v,...`; the client's defaults are OpenAIConfig's."""

    url: tuple[str, ...] = param((), "endpoint base URL (http://HOST:PORT[/v1]); several: fewest in flight first",
                                 shown="")
    model: str = param(_D.model, "model name sent in each request")
    api: str = param(_D.api, "endpoint", choices=tuple(APIS))
    dataset: str | None = param(None, "(or synthetic=N) JSONL file: prompt or input_ids, optional output and "
                                "max_tokens per line")
    synthetic: int | None = param(None, "N synthetic prompts instead of dataset= (lengths from in= and out=)", low=1)
    input_len: str = param("const:128", "synthetic input length, DIST:MEAN[:SPREAD] (DIST one of "
                           f"{', '.join(LENGTH_DISTS)})", key="in")
    output_len: str | None = param(None, "synthetic output length, as in=", key="out", shown="const:MAX_TOKENS")
    seed: int = param(0, "seed of the synthetic dataset", low=0)
    perf_count: int = param(0, "QSL performance sample count (0: all samples)", low=0)
    max_tokens: int = param(_D.max_tokens, "output tokens per request unless the sample sets max_tokens",
                            low=1, high=1_000_000)
    concurrency: int = param(_D.concurrency, "streams in flight at most (0: no limit)", low=0)
    timeout_s: float = param(_D.timeout_s, "per-request limit, send to end of stream", low=0, high=86_400,
                             low_open=True)
    stall_s: float = param(_D.stall_s, "no-progress limit: no byte for this long fails the stream", low=0,
                           high=86_400, low_open=True)
    connect_s: float = param(_D.connect_s, "connect timeout", low=0, high=86_400, low_open=True)
    token_ids: bool = param(_D.token_ids, "ask for token ids (vLLM return_token_ids) and count them")
    ignore_eos: bool = param(_D.ignore_eos, "ask for exactly max_tokens (vLLM/SGLang ignore_eos, min_tokens)")
    logprobs: bool = param(_D.logprobs, "ask for per-token logprobs and count their entries (servers without usage)")
    tokenizer: str | None = param(_D.tokenizer, "local tokenizer.json (or its folder) to count tokens when the "
                                  "server gives none")
    procs: int = param(_D.procs, "worker processes carrying the streams (0: one loop thread in the engine's "
                       "process); the engine keeps the schedule, workers stamp events on the shared clock",
                       low=0, high=MAX_PROCS)
    http: str = param(_D.http, "transport: raw (lean HTTP/1.1, requests written from the issuing thread; "
                      "https: aiohttp) or aiohttp", choices=HTTP_TRANSPORTS)
    warm: int = param(_D.warm, "connections opened per endpoint at start (http=raw)", low=0, high=1024)


@takes(OpenAIParams, "openai")
def from_params(p: OpenAIParams) -> tuple[OpenAISUT, LLMDataset]:
    """`openai:url=URL[,url=URL2],model=NAME,api=completions|chat,dataset=FILE | synthetic=N,in=..,out=..`
    (every key: OpenAIParams, or `proctor run --list-suts`)."""
    cfg = OpenAIConfig(
        urls=p.url, model=p.model, api=p.api, max_tokens=p.max_tokens, timeout_s=p.timeout_s, stall_s=p.stall_s,
        connect_s=p.connect_s, concurrency=p.concurrency, token_ids=p.token_ids, ignore_eos=p.ignore_eos,
        logprobs=p.logprobs, tokenizer=p.tokenizer, procs=p.procs, http=p.http, warm=p.warm,
    )
    if p.dataset and p.synthetic:
        raise ConfigError("give dataset=FILE or synthetic=N, not both", key="dataset")
    spec: DatasetSpec
    if p.dataset:
        spec = ("jsonl", p.dataset)
        samples = load_dataset(spec)
        name = Path(p.dataset).name
    elif p.synthetic:
        spec = ("synthetic", p.synthetic, p.input_len, p.output_len or f"const:{cfg.max_tokens}", p.seed)
        samples = load_dataset(spec)
        name = f"synthetic-{len(samples)}"
    else:
        raise ConfigError("the openai SUT needs dataset=FILE (JSONL) or synthetic=N", key="dataset")
    qsl = LLMDataset(samples, cfg.body, performance_count=p.perf_count, name=name)
    return OpenAISUT(cfg, qsl, spec), qsl


__all__ = [
    "APIS",
    "FAULT_KINDS",
    "LocalSink",
    "OpenAIConfig",
    "OpenAIParams",
    "OpenAISUT",
    "Sink",
    "StreamClient",
    "StreamState",
    "Tally",
    "endpoint_url",
    "from_params",
    "load_dataset",
    "make_client",
]
