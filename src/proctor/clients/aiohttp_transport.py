"""The aiohttp transport of the openai SUT (`http=aiohttp`, and every https:// endpoint).

One aiohttp session on the client's asyncio loop: each request is a task that posts the body
and reads the stream with `iter_any`, so a chunk is interpreted as soon as aiohttp hands it over.
`submit` (any thread) hands requests to the loop; `start` (the loop thread) makes their tasks.
Faults map to the kinds of `stream.FAULT_KINDS` with the same messages as the raw transport.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import aiohttp

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

    async def open(self) -> None:
        self._loop = asyncio.get_running_loop()
        connector = aiohttp.TCPConnector(limit=self.config.max_connections, limit_per_host=0)
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
                self.bind(st, idx)
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
                    st.take(len(chunk))  # past what the request allows: cut (StreamOverrun)
                    if self.events(i, parser.feed(chunk), st):
                        break
                else:
                    self.events(i, parser.close(), st)
        except aiohttp.ConnectionTimeoutError as exc:
            fail(i, idx, "connect", f"connect timeout to {ep.url}: {exc}")
            return
        except aiohttp.SocketTimeoutError:
            fail(i, idx, "stall", f"no data from {ep.url} for {self.config.stall_s:g} s")
            return
        except TimeoutError:
            fail(i, idx, "timeout", f"request to {ep.url} took over {self.config.timeout_s:g} s")
            return
        except aiohttp.ClientConnectorError as exc:
            fail(i, idx, "connect", f"cannot connect to {ep.url}: {exc.os_error or exc}")
            return
        except (aiohttp.ClientPayloadError, aiohttp.ServerDisconnectedError, aiohttp.ClientOSError) as exc:
            fail(i, idx, "dropped", f"stream from {ep.url} broke off: {type(exc).__name__}: {exc}")
            return
        except SSEError as exc:
            fail(i, idx, "protocol", f"{ep.url}: {exc}")
            return
        except aiohttp.ClientError as exc:
            fail(i, idx, "http_error", f"{ep.url}: {type(exc).__name__}: {exc}")
            return
        finally:
            ep.outstanding -= 1
        self.finish(i, idx, st, ep.url)


__all__ = ["AiohttpClient"]
