"""A scripted HTTP server on loopback for client tests: it reads each request (head and a
Content-Length body) and answers with whatever bytes the test's `respond(request)` returns, however
wrong: bytes, or an iterable of byte pieces written one after another (a stream that need not end:
it is written until the client goes, or until `cap` bytes (STREAM_CAP), so a client that never cuts it ends
the test instead of hanging it). It serves on its own thread; `requests` keeps what it was sent and
`sent` how many bytes each answer wrote."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import orjson

Respond = Callable[[bytes], bytes | Iterable[bytes]]
STREAM_CAP = 256 << 20  # the most one streamed answer writes


@dataclass
class HostileServer:
    port: int = 0
    requests: list[bytes] = field(default_factory=list)
    sent: list[int] = field(default_factory=list)  # bytes written per answer (a streamed one: so far)


def sse(*events: object, done: bool = True) -> bytes:
    """A 200 text/event-stream response (chunked) carrying `events` as JSON data lines."""
    body = b"".join(b"data: " + orjson.dumps(e) + b"\n\n" for e in events) + (b"data: [DONE]\n\n" if done else b"")
    return (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
        + f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n"
    )


def completion(text: str, usage: object | None = None, **extra: object) -> bytes:
    """One completions-API stream: a text chunk, a finish chunk, then a usage record if given."""
    events: list[object] = [{"choices": [{"index": 0, "text": text, **extra}]},
                            {"choices": [{"index": 0, "text": "", "finish_reason": "length"}]}]
    if usage is not None:
        events.append({"choices": [], "usage": usage})
    return sse(*events)


def chunked(piece: bytes) -> bytes:
    """One chunk of a chunked body."""
    return b"%x\r\n%s\r\n" % (len(piece), piece)


STREAM_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"


async def _handle(
    respond: Respond, state: HostileServer, cap: int, r: asyncio.StreamReader, w: asyncio.StreamWriter
) -> None:
    try:
        while True:
            head = await r.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip())
            body = await r.readexactly(length) if length else b""
            state.requests.append(head + body)
            answer = respond(head + body)
            k = len(state.sent)
            state.sent.append(0)
            for piece in [answer] if isinstance(answer, bytes) else answer:
                w.write(piece)
                state.sent[k] += len(piece)
                await w.drain()
                if state.sent[k] >= cap:
                    break
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, ValueError):
        pass
    except asyncio.CancelledError:
        w.close()
        raise
    finally:
        w.close()


@contextmanager
def hostile_server(respond: Respond, cap: int = STREAM_CAP) -> Iterator[HostileServer]:
    """Serve `respond` on 127.0.0.1 (an ephemeral port) until the block ends."""
    loop = asyncio.new_event_loop()
    state = HostileServer()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    tasks: set[asyncio.Task[None]] = set()

    async def serve(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        tasks.add(task)
        try:
            await _handle(respond, state, cap, r, w)
        finally:
            tasks.discard(task)

    async def start() -> asyncio.base_events.Server:
        return await asyncio.start_server(serve, "127.0.0.1", 0)

    async def stop() -> None:
        server.close()
        for t in list(tasks):
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await server.wait_closed()

    server = asyncio.run_coroutine_threadsafe(start(), loop).result(timeout=10)
    state.port = server.sockets[0].getsockname()[1]
    try:
        yield state
    finally:
        asyncio.run_coroutine_threadsafe(stop(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()
