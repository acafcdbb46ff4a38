"""The aiohttp transport of the openai SUT (`http=aiohttp`, and every https:// endpoint).

One aiohttp session on the client's asyncio loop: each request is a task that posts the body
and reads the stream with `iter_any`, so a chunk is interpreted as soon as aiohttp hands it over.
`submit` (any thread) hands requests to the loop; `start` (the loop thread) makes their tasks.
Faults map to the kinds of `stream.FAULT_KINDS` with the same messages as the raw transport.

A response's bytes are counted as they arrive on the connection (`_CountingHandler`, aiohttp's
connection protocol with a count in front), as the raw transport counts them: the head, interim
answers and chunk framing too, which aiohttp's parser reads without handing anything over. Past what
the request allows the connection is aborted and the sample fails as a protocol fault. Where an
aiohttp release has no connection-protocol factory to replace, the body bytes are counted instead.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, cast

import aiohttp
from aiohttp.client_proto import ResponseHandler

from proctor.clients.openai_config import OpenAIConfig
from proctor.clients.sse import SSEError, SSEParser
from proctor.clients.stream import (
    MAX_ERROR_BODY,
    Request,
    StreamClient,
    StreamSink,
    StreamState,
    least_busy,
    refusal,
    times_of,
    unasked_encoding,
)
from proctor.errors import StreamOverrun


class _Wire:
    """One request's stream as its connection protocol counts it; `overrun` once it passed its bound."""

    __slots__ = ("overrun", "st")

    def __init__(self, st: StreamState) -> None:
        self.st: StreamState | None = st  # None once the request is over (its connection may stay open)
        self.overrun: StreamOverrun | None = None


# the request being sent from this task: aiohttp calls `set_response_params` in the request's task
_WIRE: ContextVar[_Wire | None] = ContextVar("proctor_wire", default=None)


class _CountingHandler(ResponseHandler):
    """aiohttp's connection protocol, counting each byte of a response against its request's bound."""

    _wire: _Wire | None = None

    def set_response_params(self, *args: Any, **kwargs: Any) -> None:
        self._wire = _WIRE.get()  # a new request on this connection: its own count
        super().set_response_params(*args, **kwargs)

    def data_received(self, data: bytes) -> None:
        wire = self._wire
        if wire is not None and wire.st is not None and data:
            if wire.overrun is not None:
                return  # cut: nothing more is read
            try:
                wire.st.take(len(data))
            except StreamOverrun as exc:
                wire.overrun = exc
                if self.transport is not None:
                    self.transport.abort()  # the read in progress ends (the fault is the overrun's)
                return
        super().data_received(data)


def _count_wire(connector: aiohttp.TCPConnector, loop: asyncio.AbstractEventLoop) -> bool:
    """Have the connector's connections count their bytes (True), where this aiohttp makes them
    with a factory that can be replaced."""
    if not callable(getattr(connector, "_factory", None)):
        return False
    connector._factory = cast("functools.partial[ResponseHandler]", functools.partial(_CountingHandler, loop=loop))
    return True


class AiohttpClient(StreamClient):
    """Streams each sample over one aiohttp session to the endpoint given, else the one with the
    fewest requests in flight, and reports to its sink."""

    def __init__(self, config: OpenAIConfig, body: Callable[[int], bytes], sink: StreamSink) -> None:
        super().__init__(config, body, sink)
        self._timeout = aiohttp.ClientTimeout(
            total=config.timeout_s, sock_connect=config.connect_s, sock_read=config.stall_s
        )
        self._tasks: set[asyncio.Task[None]] = set()
        self._session: aiohttp.ClientSession | None = None
        self._sem: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wire_counted = False  # the connections count every byte (else the body's are counted)

    async def open(self) -> None:
        self._loop = asyncio.get_running_loop()
        connector = aiohttp.TCPConnector(limit=self.config.max_connections, limit_per_host=0)
        self._wire_counted = _count_wire(connector, self._loop)
        self._session = aiohttp.ClientSession(connector=connector, headers=self.headers, auto_decompress=False)
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

    def dry_submit(self) -> None:
        """Nothing to warm: its requests leave from the loop thread (`start`), not the issuing one."""

    async def preconnect(self, n: int) -> int:
        """aiohttp opens its connections with requests (the warm-up's open the ones a run keeps)."""
        return 0

    def connect_counts(self) -> tuple[int, int] | None:
        return None

    def submit(self, requests: list[Request]) -> None:
        """From any thread: the loop starts the requests' tasks."""
        loop = self._loop
        assert loop is not None, "open() first"
        loop.call_soon_threadsafe(self.start, requests)

    # --- the loop ---------------------------------------------------------------------------------

    def start(self, requests: list[Request]) -> None:
        loop, tasks = asyncio.get_running_loop(), self._tasks
        times = self.times
        if times is not None:
            t = time.perf_counter_ns()
            for r in requests:
                times_of(times, r[0]).queued = t
        for i, idx, e, t_issue in requests:
            task = loop.create_task(self._request(i, idx, e, t_issue))
            tasks.add(task)
            task.add_done_callback(tasks.discard)

    async def _request(self, i: int, idx: int, e: int, t_issue: int) -> None:
        if self._sem is None:
            await self._stream(i, idx, e, t_issue)
        else:
            async with self._sem:
                await self._stream(i, idx, e, t_issue)

    async def _stream(self, i: int, idx: int, e: int = -1, t_issue: int = 0) -> None:
        rt = None if self.times is None else times_of(self.times, i)
        if rt is not None:
            rt.started = time.perf_counter_ns()
        ep = self.endpoints[e if e >= 0 else least_busy(self.endpoints)]
        body = self.body(idx)
        st = StreamState()
        self.bind(st, idx)
        wire = _Wire(st)
        token = _WIRE.set(wire if self._wire_counted else None)
        ep.outstanding += 1
        ep.sent += 1
        self.sink.sent(i, t_issue, time.perf_counter_ns())
        assert self._session is not None
        fail = self.sink.fail
        try:
            async with self._session.post(
                ep.url, data=body, timeout=self._timeout, allow_redirects=False
            ) as resp:
                if rt is not None:
                    rt.head = time.perf_counter_ns()
                if resp.status != 200:
                    text = (await resp.content.read(MAX_ERROR_BODY)).decode("utf-8", "replace")
                    fail(i, idx, *refusal(resp.status, resp.headers, ep.url, text))
                    return
                enc = unasked_encoding(resp.headers)
                if enc is not None:
                    fail(i, idx, "protocol", f"{ep.url} sent a {enc!r}-encoded body; proctor asks for identity")
                    return
                parser = SSEParser()
                async for chunk in resp.content.iter_any():
                    if rt is not None and not rt.first_byte:
                        rt.first_byte = time.perf_counter_ns()
                    if not self._wire_counted:
                        st.take(len(chunk))  # past what the request allows: cut (StreamOverrun)
                    if self.events(i, parser.feed(chunk), st):
                        break
                else:
                    self.events(i, parser.close(), st)
        except (aiohttp.ClientError, TimeoutError, SSEError) as exc:
            fail(i, idx, *self._fault(exc, ep.url, wire))
            return
        finally:
            ep.outstanding -= 1
            _WIRE.reset(token)
            wire.st = None
        self.finish(i, idx, st, ep.url)  # (bytes past the bound after the stream's end only close it)

    def _fault(self, exc: BaseException, url: str, wire: _Wire) -> tuple[str, str]:
        """(fault kind, message) of a request that raised; a connection cut for its bound is `protocol`."""
        if wire.overrun is not None:
            return "protocol", f"{url}: {wire.overrun}"
        if isinstance(exc, aiohttp.ConnectionTimeoutError):
            return "connect", f"connect timeout to {url}: {exc}"
        if isinstance(exc, aiohttp.SocketTimeoutError):
            return "stall", f"no data from {url} for {self.config.stall_s:g} s"
        if isinstance(exc, TimeoutError):
            return "timeout", f"request to {url} took over {self.config.timeout_s:g} s"
        if isinstance(exc, aiohttp.ClientConnectorError):
            return "connect", f"cannot connect to {url}: {exc.os_error or exc}"
        if isinstance(exc, aiohttp.ClientPayloadError | aiohttp.ServerDisconnectedError | aiohttp.ClientOSError):
            return "dropped", f"stream from {url} broke off: {type(exc).__name__}: {exc}"
        if isinstance(exc, SSEError):
            return "protocol", f"{url}: {exc}"
        return "http_error", f"{url}: {type(exc).__name__}: {exc}"


__all__ = ["AiohttpClient"]
