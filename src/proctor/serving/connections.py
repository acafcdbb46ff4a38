"""What bounds a connection to proctor's servers, whatever the other side does (`proctor serve llm`,
`proctor serve node`): without these, idle, trickling and half-sent connections stayed open until the
file-descriptor limit.

Each connection is in one phase with one deadline (`limits.ConnectionLimits`, the defaults there):
- idle: connected, or its last answer handed over, and no byte of a next request: `idle_s`
  (aiohttp's keep-alive timeout is set to the same);
- head: a request's first byte arrived, its head is not complete: `header_s` from that byte (a
  slowloris head trickled a byte at a time ends here);
- body: the head was read: the body must have arrived whole `body_s` after it;
- answer: the handler runs: no deadline but the write one: a client that stops reading (the
  transport's writes paused) for `send_s` is dropped.
A connection past its deadline is aborted (counted, one log line per kind per doubling, as the other
failures, `guard.FailureLog`). Connections beyond `max_connections` are answered 503 at once
and closed (after a short, bounded wait for the request they may have sent, so the answer is read
rather than reset); the cap is held below the process's file-descriptor limit.

`GuardedProtocol` wraps the HTTP server's protocol of one connection; `phases()` is the aiohttp
middleware that tells it where a request is (head read, answer done). `listen()` binds a server
behind both.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Callable
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Middleware

from proctor.serving.guard import FailureLog, Handler
from proctor.serving.limits import REFUSE_LINGER_S, ConnectionLimits, fd_cap
from proctor.typed_records import field, record

log = logging.getLogger("proctor.serving")

_IDLE, _HEAD, _BODY, _ANSWER = range(4)
_PHASE_NAMES = {_IDLE: "idle", _HEAD: "header", _BODY: "body"}
_REFUSAL = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\n"
            b"Content-Length: %d\r\n\r\n")


@record(slots=True)
class Gate:
    """One server's open connections, by transport, and what its bounds did (`counts`)."""

    limits: ConnectionLimits
    failures: FailureLog
    cap: int = 0  # the effective cap (`fd_cap`), set by `listen`
    open: dict[Any, GuardedProtocol] = field(default_factory=dict)
    lingering: int = 0  # refused connections still being read for their request
    counts: Counter[str] = field(default_factory=Counter)  # refused, idle/header/body/send timeouts

    def __post_init__(self) -> None:
        self.cap = self.cap or self.limits.max_connections


class GuardedProtocol(asyncio.Protocol):
    """One connection's phases and deadline in front of the HTTP protocol `make_inner()` builds (made
    only for a connection within the cap)."""

    __slots__ = ("_deadline", "_gate", "_make_inner", "_phase", "_send_timer", "_timer", "body", "inner",
                 "transport")

    def __init__(self, gate: Gate, make_inner: Callable[[], asyncio.Protocol]) -> None:
        self._gate = gate
        self._make_inner = make_inner
        self.inner: asyncio.Protocol | None = None
        self.transport: asyncio.Transport | None = None
        self._phase = _IDLE
        self._timer: asyncio.TimerHandle | None = None
        self._send_timer: asyncio.TimerHandle | None = None
        self.body: Any = None  # the current request's payload (a StreamReader), in the body phase

    # --- asyncio.Protocol ------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        gate = self._gate
        if len(gate.open) >= gate.cap:
            self._refuse()
            return
        gate.open[transport] = self
        self.inner = self._make_inner()
        self._arm(_IDLE, gate.limits.idle_s)
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        inner = self.inner
        if inner is None:  # a refused connection: its request is read and dropped
            return
        if self._phase == _IDLE:
            self._arm(_HEAD, self._gate.limits.header_s)
        inner.data_received(data)

    def eof_received(self) -> bool | None:
        if self.inner is None:
            return None  # close
        return self.inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        if self._send_timer is not None:
            self._send_timer.cancel()
            self._send_timer = None
        if self.inner is None:
            self._gate.lingering -= 1
            return
        self._gate.open.pop(self.transport, None)
        self.body = None
        self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        if self.inner is not None:
            self._send_timer = asyncio.get_running_loop().call_later(self._gate.limits.send_s, self._send_expired)
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self._send_timer is not None:
            self._send_timer.cancel()
            self._send_timer = None
        if self.inner is not None:
            self.inner.resume_writing()

    # --- the phases (the middleware's calls) ------------------------------------------------------

    def head_read(self, body: Any) -> None:
        """The request's head was read; `body` (its payload) must arrive within body_s."""
        self.body = body
        self._arm(_BODY, self._gate.limits.body_s)

    def answered(self) -> None:
        """The handler handed its answer over: the connection waits for a next request."""
        self.body = None
        self._arm(_IDLE, self._gate.limits.idle_s)

    # --- deadlines -------------------------------------------------------------------------------

    def _arm(self, phase: int, seconds: float) -> None:
        self._cancel()
        self._phase = phase
        self._timer = asyncio.get_running_loop().call_later(seconds, self._expired)

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expired(self) -> None:
        self._timer = None
        phase = self._phase
        if phase == _BODY:
            body = self.body
            if body is None or body.is_eof():  # the body is in: the handler's time is its own
                self._phase = _ANSWER
                return
        if phase == _ANSWER:
            return
        name = _PHASE_NAMES[phase]
        self._gate.counts[f"{name}_timeout"] += 1
        if phase != _IDLE:  # an idle connection closing is keep-alive's end, not a failure
            limit = getattr(self._gate.limits, f"{'header' if phase == _HEAD else 'body'}_s")
            self._gate.failures.note(f"{name}_timeout", f"{self._peer()}: the request's {name} took over {limit:g} s")
        self._abort()

    def _send_expired(self) -> None:
        self._send_timer = None
        self._gate.counts["send_timeout"] += 1
        self._gate.failures.note("send_timeout", f"{self._peer()}: read none of its answer for "
                                 f"{self._gate.limits.send_s:g} s")
        self._abort()

    def _abort(self) -> None:
        if self.transport is not None:
            self.transport.abort()

    def _peer(self) -> str:
        peer = self.transport.get_extra_info("peername") if self.transport is not None else None
        return f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) and len(peer) >= 2 else "a client"

    def _refuse(self) -> None:
        """Over the cap: answer 503, stop writing, read what the client sent for a moment, close."""
        gate, transport = self._gate, self.transport
        assert transport is not None
        gate.counts["refused"] += 1
        gate.failures.note("over_connection_cap", f"{self._peer()}: {gate.cap} connections are open")
        if gate.lingering >= gate.cap:  # refusals pile up: no waiting for their requests
            gate.lingering += 1
            transport.abort()
            return
        gate.lingering += 1
        body = (b'{"error": {"message": "this server holds %d connections at most; try again", "code": 503}}'
                % gate.cap)
        transport.write(_REFUSAL % len(body) + body)
        if transport.can_write_eof():
            transport.write_eof()
        self._timer = asyncio.get_running_loop().call_later(REFUSE_LINGER_S, transport.abort)


def phases(gate: Gate) -> Middleware:
    """The middleware that tells a request's connection its head was read and its answer is done
    (outermost, so every answer, a refusal of the guard's too, ends its phase)."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        conn = gate.open.get(request.transport)
        if conn is not None:
            conn.head_read(request.content)
        try:
            return await handler(request)
        finally:
            if conn is not None:
                conn.answered()

    return middleware


async def listen(
    runner: web.AppRunner, gate: Gate, host: str, port: int,
    wrap: Callable[[asyncio.Protocol], asyncio.Protocol] | None = None,
) -> asyncio.Server:
    """Serve `runner` (set up) on host:port behind `gate`; `wrap` puts a protocol between the guard and
    aiohttp's (the LLM server's arrival stamps). The cap is held below the descriptor limit."""
    server = runner.server
    assert server is not None, "runner.setup() first"
    gate.cap = fd_cap(gate.limits.max_connections)
    if gate.cap < gate.limits.max_connections:
        log.warning("the open-file limit holds this server to %d connections (--max-connections %d)",
                    gate.cap, gate.limits.max_connections)

    def inner() -> asyncio.Protocol:
        proto: asyncio.Protocol = server()
        return wrap(proto) if wrap is not None else proto

    loop = asyncio.get_running_loop()
    return await loop.create_server(lambda: GuardedProtocol(gate, inner), host, port, backlog=4096,
                                    reuse_address=True)


def runner_options(limits: ConnectionLimits) -> dict[str, Any]:
    """aiohttp's own knobs for the same bounds (its keep-alive timeout)."""
    return {"keepalive_timeout": limits.idle_s}


__all__ = ["Gate", "GuardedProtocol", "listen", "phases", "runner_options"]
