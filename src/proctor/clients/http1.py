"""A lean HTTP/1.1 streaming transport for the openai SUT (`http=raw`, the default).

Why: with aiohttp, a first token crossed ~0.6 ms of client hops (a cross-thread wake, a task, the
request writer, the stream reader hand-off) that counted against TTFT. Here the request is written
by the engine's issuing thread itself with one non-blocking `sendmsg` on an idle keep-alive
connection, and a token's time is when its bytes arrived: the kernel's receive stamp of the read
(SO_TIMESTAMPNS, `rx_stamp=kernel`: each connection read with `recvmsg` into one preallocated
buffer), else the read's return (`rx_stamp=user`: asyncio's `buffer_updated`), before any parsing.

Pieces: `ResponseParser` (pure, fuzzed: status line, headers bounded by `MAX_HEAD`, Content-Length,
chunked transfer-encoding with extensions and trailers, or read-until-close), `_Conn` (an
`asyncio.BufferedProtocol`, one keep-alive connection), `RawClient` (a `stream.StreamClient` with its pool,
a `transport.Transport` as the aiohttp client is: the same endpoint choice, `concurrency` limit,
sink calls, fault kinds and messages; the stream interpretation is StreamClient's `events`/`finish`).
While the SUT records `RequestTimes`, it stamps `written` (the send returned), `head` and
`first_byte` (the same stamp the first token gets).

Thread-safety, the invariants:
- `RawClient._lock` guards the idle lists, each endpoint's `outstanding`/`sent`, the in-flight
  count, the waiting queue and the set of active requests.
- A connection is either idle (in one idle list, `req` None) or owned by one request. Only the
  owner writes to it. The issuing thread takes an idle connection, sets `conn.req` (so
  `buffer_updated` never sees a response without its request) and sends, all under the lock.
- Each connection keeps a dup of its socket for those sends; the loop closes that dup only under
  the lock, so a send never meets a closed (or reused) file descriptor. The transport owns the
  original socket; the TCP connection ends once both are closed (`_Conn.close` closes both). With
  kernel stamps the loop reads the dup (`recvmsg`, `_Conn.read_own`) and the transport, its reading
  paused, only writes and closes; the loop unwatches the dup before anything closes it.
- The loop thread owns reading, parsing, timers and finishing. It gives a connection back to the
  idle list (under the lock) only once its response was read to the end and it may be reused
  (HTTP/1.1 keep-alive, no `Connection: close`, not read-until-close).
- A partial send hands the rest to the loop (`call_soon_threadsafe(transport.write)`); a
  connection whose request was not written whole is never reused.
- An idle connection the server closed is dropped by the loop when its FIN arrives; one idle for
  over a second is also peeked at (MSG_PEEK) before reuse, in case the loop has not seen it yet. A
  send that fails before writing a byte is retried once on a fresh connection; once any byte is
  written there is no retry: it is a fault (never counted twice).
- Timeouts (per request, no progress) are checked by one sweeper timer on the loop, not armed per
  request, so a sent request costs the loop nothing until its bytes come back; the connect timeout
  bounds each connect. https:// endpoints use the aiohttp transport (`transport.make_transport`).

Connecting ahead: a request that finds no idle connection waits for a connect (a getaddrinfo, a
handshake, a task on the loop: ~1 ms counted against its TTFT; with a small accept backlog, seconds).
So `warm` idle connections per endpoint are kept ready: opened at start, and topped up on the loop
(`_top_up`) as requests take them or used connections close, off the issuing path; `preconnect(n)`
(the SUT's warm-up, before the timed part) opens n per endpoint, PRECONNECT_PARALLEL at a time. A
connection that closes unused does not trigger a top-up (a server that closes every new connection
would make a connect loop); the next request taken does. `connects_ahead` and `connects_waited`
count both kinds for the SUT's report.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import platform
import re
import socket
import struct
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from proctor.clients.openai_config import OpenAIConfig
from proctor.clients.sse import SSEError, SSEParser
from proctor.clients.stream import (
    MAX_CHUNK_LINE,
    MAX_ERROR_BODY,
    Request,
    StreamClient,
    StreamSink,
    StreamState,
    Times,
    least_busy,
    refusal,
    times_of,
    unasked_encoding,
)
from proctor.errors import HTTP1Error, StreamOverrun

log = logging.getLogger("proctor.clients.openai")

MAX_HEAD = 64 << 10  # a response head (status line + headers) above 64 KiB is a protocol fault
MAX_HEADERS = 128
DEFAULT_WARM = 4  # idle connections kept ready per endpoint: opened at start, topped up as requests take them
# connects in progress at once per endpoint while connecting ahead (`preconnect`): a burst of SYNs
# into a server's small accept backlog is dropped and retried a second or more later (64 streams
# opened at once: 45-52 of 11,264 requests had TTFT of 1-14 s); a few at a time are not
PRECONNECT_PARALLEL = 8
# an idle connection older than this is peeked at before reuse (a server's keep-alive timeout may
# have closed it: uvicorn's is 5 s); a younger one is not (a syscall on the issuing path)
PEEK_AFTER_NS = 1_000_000_000


# --- the response parser (pure, fuzzed) ------------------------------------------------------------

_HEAD, _LENGTH, _SIZE, _DATA, _DATA_END, _TRAILER, _CLOSE, _DONE = range(8)
_HEAD_END = re.compile(rb"\n\r?\n")  # a head ends at its first blank line (CRLF or bare LF)


class ResponseParser:
    """Feed the bytes of one response; get its body's bytes as they come.

    After the head: `status`, `headers` (lower-case names; repeated ones joined with ", "),
    `keep_alive` (the connection may carry another request once `done`). `close()` at EOF says
    whether the response ended properly (True for a read-until-close body). Memory is bounded: the
    body passes through; only a head, a chunk-size line or a trailer is buffered, each bounded."""

    __slots__ = ("_buf", "_left", "_max_head", "_state", "done", "headers", "keep_alive", "status")

    def __init__(self, max_head: int = MAX_HEAD) -> None:
        self.status = 0
        self.headers: dict[str, str] = {}
        self.keep_alive = False
        self.done = False
        self._state = _HEAD
        self._buf = b""
        self._left = 0
        self._max_head = max_head

    def feed(self, data: bytes) -> list[bytes]:
        out: list[bytes] = []
        buf = self._buf + data if self._buf else data
        self._buf = b""
        pos, n = 0, len(buf)
        while pos < n:
            s = self._state
            if s in (_DATA, _LENGTH):
                take = min(self._left, n - pos)
                out.append(buf[pos : pos + take] if pos or take < n else buf)
                pos += take
                self._left -= take
                if not self._left:
                    if s == _LENGTH:
                        self._end()
                    else:
                        self._state = _DATA_END
            elif s == _SIZE:
                # the size, then optional ";extensions" up to the newline: extensions are skipped as
                # they stream (any length, as aiohttp takes them), the size itself is bounded
                nl = buf.find(b"\n", pos)
                end = nl if nl >= 0 else n
                semi = buf.find(b";", pos, min(end, pos + MAX_CHUNK_LINE))
                if semi < 0 and end - pos > MAX_CHUNK_LINE:
                    raise HTTP1Error(f"a chunk-size line is longer than {MAX_CHUNK_LINE} bytes")
                if nl < 0:
                    self._buf = buf[pos : semi + 1] if semi >= 0 else buf[pos:]  # extension bytes dropped
                    return out
                size = buf[pos : semi if semi >= 0 else nl].strip()
                pos = nl + 1
                if not size or len(size) > 16 or size.strip(b"0123456789abcdefABCDEF"):
                    raise HTTP1Error(f"bad chunk size {size[:20]!r}")
                self._left = int(size, 16)
                self._state = _DATA if self._left else _TRAILER
            elif s == _DATA_END:
                if buf[pos : pos + 1] == b"\n":
                    pos += 1
                elif buf[pos : pos + 2] == b"\r\n":
                    pos += 2
                elif buf[pos:] == b"\r":
                    self._buf = b"\r"
                    return out
                else:
                    raise HTTP1Error("a chunk's data is not followed by CRLF")
                self._state = _SIZE
            elif s == _CLOSE:
                out.append(buf[pos:] if pos else buf)
                return out
            elif s in (_HEAD, _TRAILER):
                pos = self._head(buf, pos)
                if pos < 0:
                    return out
            else:  # _DONE: nothing may follow a response we did not ask another for
                raise HTTP1Error("the server sent bytes after the end of the response")
        return out

    def close(self) -> bool:
        """The connection ended: True when the response was complete (or read-until-close)."""
        if self._state == _CLOSE:
            self._end()
        return self.done

    def _end(self) -> None:
        self._state = _DONE
        self.done = True

    def _trailer(self, buf: bytes, pos: int) -> int:
        """Skip the trailer fields up to the blank line; the new position, -1 when incomplete."""
        while True:
            nl = buf.find(b"\n", pos)
            if nl < 0:
                if len(buf) - pos > self._max_head:
                    raise HTTP1Error(f"a trailer line is longer than {self._max_head} bytes")
                self._buf = buf[pos:]
                return -1
            line, pos = buf[pos:nl].rstrip(b"\r"), nl + 1
            if not line:
                self._end()
                return pos

    def _head(self, buf: bytes, pos: int) -> int:
        """Parse a response head starting at pos; the new position, -1 when incomplete."""
        if self._state == _TRAILER:
            return self._trailer(buf, pos)
        # the head's end, searched once and no further than a head may reach: a stream of interim
        # responses is read in linear time (two unbounded finds made it quadratic)
        m = _HEAD_END.search(buf, pos, pos + self._max_head + 3)
        if m is None:
            if len(buf) - pos > self._max_head:
                raise HTTP1Error(f"the response head is longer than {self._max_head} bytes")
            self._buf = buf[pos:]
            return -1
        end, nxt = m.start(), m.end()
        if end - pos > self._max_head:
            raise HTTP1Error(f"the response head is longer than {self._max_head} bytes")
        block = buf[pos : end + 1]
        lines = block.decode("latin-1").split("\n")
        status_line = lines[0].rstrip("\r")
        version, _, rest = status_line.partition(" ")
        code = rest[:3]
        if version not in ("HTTP/1.1", "HTTP/1.0") or len(code) != 3 or not code.isdigit() or rest[3:4] not in ("", " "):
            raise HTTP1Error(f"bad status line {status_line[:60]!r}")
        status = int(code)
        headers: dict[str, str] = {}
        count = 0
        for raw in lines[1:]:
            line = raw.rstrip("\r")
            if not line:
                continue
            count += 1
            if count > MAX_HEADERS:
                raise HTTP1Error(f"more than {MAX_HEADERS} header fields")
            name, sep, value = line.partition(":")
            if not sep or not name or name != name.strip() or line[:1] in " \t":
                raise HTTP1Error(f"bad header line {line[:60]!r}")
            key, value = name.lower(), value.strip()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        if 100 <= status < 200:
            if status == 101:
                raise HTTP1Error("the server switched protocols (101), which was not asked for")
            return nxt  # an interim response: the real one follows
        self.status, self.headers = status, headers
        conn = {t.strip().lower() for t in headers.get("connection", "").split(",")}
        self.keep_alive = "keep-alive" in conn if version == "HTTP/1.0" else "close" not in conn
        te = headers.get("transfer-encoding")
        cl = headers.get("content-length")
        if te is not None:
            if te.rsplit(",", 1)[-1].strip().lower() == "chunked":
                self._state = _SIZE
            else:
                self._state, self.keep_alive = _CLOSE, False
        elif cl is not None:
            values = {v.strip() for v in cl.split(",")}
            if len(values) != 1:
                raise HTTP1Error(f"conflicting Content-Length {cl[:60]!r}")
            v = values.pop()
            if not v.isdigit() or not v.isascii() or len(v) > 18:
                raise HTTP1Error(f"bad Content-Length {v[:30]!r}")
            self._left = int(v)
            self._state = _LENGTH
            if not self._left:
                self._end()
        elif status in (204, 304):
            self._end()
        else:
            self._state, self.keep_alive = _CLOSE, False
        return nxt


# --- one connection, one request --------------------------------------------------------------------


class _Req:
    """One request's state from its send to its end (the loop thread's, after the send)."""

    __slots__ = ("i", "idx", "e", "t_issue", "t_start", "t_last", "conn", "parser", "sse", "st", "err",
                 "reported", "whole", "retried")

    def __init__(self, i: int, idx: int, e: int, t_issue: int) -> None:
        self.i, self.idx, self.e, self.t_issue = i, idx, e, t_issue
        self.t_start = self.t_last = 0
        self.conn: _Conn | None = None
        self.parser = ResponseParser()
        self.sse = SSEParser()
        self.st = StreamState()  # bounded by what the request allows on the first read (StreamClient.bind)
        self.err = b""  # the body of an error answer, up to MAX_ERROR_BODY
        self.reported = False  # the sink has this request's outcome (its connection may still drain)
        self.whole = True  # the request was written whole (else the connection is not reused)
        self.retried = False


# The kernel's software receive timestamp of a read's bytes (Linux SO_TIMESTAMPNS; SCM_TIMESTAMPNS is the
# same number; 35 on every Linux architecture but sparc/parisc/alpha, whose values differ: there, none).
# A read after a wake-up returns ~100 us after its bytes arrived on this machine (an idle 2-core VM,
# loopback, p50: 105 us to a blocking recv, 125 us to the asyncio loop): that wait is the client's,
# not the server's, and it grows with the client's own load. With the arrival time a first token is
# timed as a packet capture would time it. The stamp is CLOCK_REALTIME, moved onto perf_counter_ns by
# the two clocks' offset (WallOffset, held steady); TCP gives the latest segment the read consumed (never an
# earlier time than all of its bytes were here).
SO_TIMESTAMPNS = 35 if sys.platform.startswith("linux") and platform.machine().startswith(
    ("x86", "i686", "aarch64", "arm", "ppc", "riscv", "s390", "mips", "loongarch")) else 0
_TIMESPEC = struct.Struct("@qq")
RX_ANC = socket.CMSG_SPACE(_TIMESPEC.size) if hasattr(socket, "CMSG_SPACE") else 0


class WallOffset:
    """CLOCK_REALTIME minus perf_counter_ns, held steady between refreshes. Read afresh at each
    stamp, a preemption between the two clock reads moved the offset by microseconds from one read
    to the next, enough on a busy host to put a stream's last bytes before its first (the engine
    then refused the completion and the run stalled). One estimate per REFRESH_NS follows slewing;
    the pair with the narrowest perf bracket of a few is taken."""

    REFRESH_NS = 500_000_000
    TRIES = 5

    def __init__(self, perf: Callable[[], int] = time.perf_counter_ns, wall: Callable[[], int] = time.time_ns):
        self._perf, self._wall = perf, wall
        self.value = 0
        self.at: int | None = None

    def measure(self) -> int:
        best_span, best = -1, 0
        for _ in range(self.TRIES):
            a = self._perf()
            w = self._wall()
            b = self._perf()
            if best_span < 0 or b - a < best_span:
                best_span, best = b - a, w - (a + b) // 2
        return best

    def get(self, now: int) -> int:
        """The offset at perf time `now` (a refresh when the last is REFRESH_NS old)."""
        at = self.at
        if at is None or not 0 <= now - at < self.REFRESH_NS:
            self.value = self.measure()
            self.at = now
        return self.value


WALL_OFFSET = WallOffset()  # one per process: the loop threads only read it, or refresh it alike


def rx_time(anc: list[tuple[int, int, bytes]], low: int, high: int) -> int:
    """The kernel's receive time of a read's bytes on perf_counter_ns, if one came and it lies in
    [low, high] (the request's send or its last read, the read's return: outside that the wall clock
    was stepped in between); else `high`. Times of one stream never go backwards."""
    for level, kind, data in anc:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(data) >= _TIMESPEC.size:
            sec, nsec = _TIMESPEC.unpack_from(data)
            t: int = sec * 1_000_000_000 + nsec - WALL_OFFSET.get(high)
            if low <= t <= high:
                return t
    return high


# One receive buffer per client, read into by the loop thread (asyncio.BufferedProtocol): asyncio's
# plain `data_received` path allocates a fresh 256 KiB bytes object for every read (an mmap and page
# faults each time). Measured here (2 shared cores), loopback wake to the protocol's stamp, p50 of 4
# alternating runs: 151 us with data_received, 84 us reading into this buffer (a blocking recv thread:
# 54 us); against `proctor serve llm` at 50 req/s, TTFT p50 from the send, 6 alternating runs: -35 us
# (5 of 6 lower), client CPU 5.4 -> 4.9 % of a core.
RECV_BUFFER = 256 * 1024


class _Conn(asyncio.BufferedProtocol):
    """One keep-alive connection to one endpoint."""

    def __init__(self, client: RawClient, e: int) -> None:
        self.client, self.e = client, e
        self.transport: asyncio.Transport | None = None
        self.sock: socket.socket | None = None  # a dup for the issuing thread's sends
        self.req: _Req | None = None
        self.alive = False
        self.t_idle = 0  # when it last went idle (perf_counter_ns)
        self.used = False  # it carried a request (its close then tops the idle list up again)
        self.reading = -1  # the fd this connection reads itself (recvmsg, kernel stamps); -1: the transport reads
        self.error: OSError | None = None  # why its own read ended the connection

    def itself(self) -> _Conn:
        """The protocol factory of this one connection."""
        return self

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.alive = True

    def get_buffer(self, sizehint: int) -> memoryview:
        return self.client._rbuf

    def buffer_updated(self, nbytes: int) -> None:
        t = time.perf_counter_ns()  # the first-token time: before any parsing
        req = self.req
        if req is None:  # bytes nobody asked for
            self.close()
            return
        self.client._data(req, bytes(self.client._rbuf[:nbytes]), t)  # copied: the buffer is read into again

    def read_own(self, loop: asyncio.AbstractEventLoop) -> None:
        """Read this connection with recvmsg from now on, for the kernel's receive stamps: the
        transport stops reading (it still writes and closes), the loop watches the dup."""
        assert self.transport is not None and self.sock is not None
        self.transport.pause_reading()
        self.reading = self.sock.fileno()
        loop.add_reader(self.reading, self._readable)

    def _readable(self) -> None:
        sock = self.sock
        if sock is None:
            return
        rbuf = self.client._rbuf
        try:
            n, anc, _, _ = sock.recvmsg_into((rbuf,), RX_ANC)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self.error = exc
            self._end_reading()
            return
        t = time.perf_counter_ns()
        if not n:  # EOF: the transport closes, connection_lost follows
            self._end_reading()
            return
        req = self.req
        if req is None:  # bytes nobody asked for
            self.close()
            return
        if anc:  # not before this stream's last bytes (t_last: the send, then each read's time)
            t = rx_time(anc, req.t_last, t)
        self.client._data(req, bytes(rbuf[:n]), t)

    def _end_reading(self) -> None:
        self._stop_reading()
        self.alive = False
        if self.transport is not None:
            self.transport.close()

    def _stop_reading(self) -> None:
        """Unwatch the dup before it closes (the loop thread's, as every reader change)."""
        if self.reading >= 0:
            self.client._loop.remove_reader(self.reading)  # type: ignore[union-attr]
            self.reading = -1

    def eof_received(self) -> bool | None:
        return None  # close the transport: connection_lost follows

    def connection_lost(self, exc: Exception | None) -> None:
        self.alive = False
        self._stop_reading()
        self.client._lost(self, exc or self.error)

    def close(self) -> None:
        """Close the connection: the dup under the lock (never under a send), then the transport."""
        self.alive = False
        self._stop_reading()
        with self.client._lock:
            if self.sock is not None:
                self.sock.close()
                self.sock = None
        if self.transport is not None:
            self.transport.close()


# --- the client -------------------------------------------------------------------------------------


class RawClient(StreamClient):
    """`StreamClient` over `_Conn` connections: see the module doc for who touches what."""

    def __init__(
        self, config: OpenAIConfig, body: Callable[[int], bytes], sink: StreamSink, warm: int = DEFAULT_WARM
    ) -> None:
        super().__init__(config, body, sink)
        self.warm = warm
        # reading each connection itself with recvmsg for the kernel's stamps (see SO_TIMESTAMPNS)
        self._kernel_stamps = config.rx_stamp == "kernel" and SO_TIMESTAMPNS > 0 and RX_ANC > 0
        self._lock = threading.Lock()
        self._idle: list[list[_Conn]] = [[] for _ in self.endpoints]
        self._active: set[_Req] = set()
        self._waiting: deque[Request] = deque()
        self._in_flight = 0
        self._conns: set[_Conn] = set()
        self._rbuf = memoryview(bytearray(RECV_BUFFER))  # every connection's reads (the loop thread's)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closing = False
        self._addr: list[tuple[str, int]] = []
        self._prefix: list[bytes] = []
        self._heads: dict[tuple[int, int], bytes] = {}
        self._last_idx = -1  # the last request's sample: `dry_submit` builds its body's head again
        self._opening = [0] * len(self.endpoints)  # connects ahead in progress, per endpoint
        self._top_up_due = [False] * len(self.endpoints)  # a `_top_up` is scheduled on the loop
        self._infos: list[list[Any] | None] = [None] * len(self.endpoints)  # each endpoint's addresses, resolved once
        self.connects_ahead = 0  # connections opened before a request needed them (start, warm-up, top-up)
        self.connects_waited = 0  # requests that found no idle connection and waited for a connect
        extra = "".join(f"{k}: {v}\r\n" for k, v in self.headers.items() if k.lower() != "content-type")
        for ep in self.endpoints:
            u = urlsplit(ep.url)
            path = u.path + (f"?{u.query}" if u.query else "")
            self._addr.append((u.hostname or "127.0.0.1", u.port or 80))
            self._prefix.append(
                f"POST {path} HTTP/1.1\r\nHost: {u.netloc}\r\nUser-Agent: proctor\r\nAccept: text/event-stream\r\n"
                f"Content-Type: application/json\r\n{extra}".encode("latin-1")
            )
        t = min(config.stall_s, config.timeout_s) / 5
        self._tick = min(max(t, 0.005), 0.5)
        self._sweeper: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def _head(self, e: int, n: int) -> bytes:
        """The request head for endpoint e and a body of n bytes (cached: a few lengths per dataset)."""
        h = self._heads.get((e, n))
        if h is None:
            h = self._heads[(e, n)] = self._prefix[e] + b"Content-Length: %d\r\n\r\n" % n
        return h

    async def open(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._sweeper = self._loop.call_later(self._tick, self._sweep)
        await self.preconnect(self.warm)

    async def preconnect(self, n: int) -> int:
        """Open connections until each endpoint has n idle ones (PRECONNECT_PARALLEL connects at a
        time per endpoint); how many were opened. One that fails is left out (a request connects
        then, as it would have)."""

        async def one(e: int, gate: asyncio.Semaphore) -> int:
            async with gate:
                if self._closing:
                    return 0
                try:
                    c = await self._connect(e)
                except (OSError, TimeoutError):
                    return 0
                return int(self._park(c))

        jobs = []
        for e in range(len(self.endpoints)):
            with self._lock:
                missing = n - len(self._idle[e]) - self._opening[e]
            gate = asyncio.Semaphore(PRECONNECT_PARALLEL)
            jobs += [one(e, gate) for _ in range(missing)]
        opened = sum(await asyncio.gather(*jobs)) if jobs else 0
        self.connects_ahead += opened
        return opened

    def connect_counts(self) -> tuple[int, int] | None:
        return self.connects_ahead, self.connects_waited

    def _park(self, c: _Conn) -> bool:
        """A fresh connection joins its endpoint's idle list (False: it is already gone)."""
        with self._lock:
            if not c.alive or self._closing:
                return False
            c.t_idle = time.perf_counter_ns()
            self._idle[c.e].append(c)
        return True

    def _top_up(self, e: int) -> None:
        """The loop's: connect ahead until endpoint e has `warm` idle connections (with the ones opening)."""
        loop = self._loop
        with self._lock:
            self._top_up_due[e] = False
            missing = self.warm - len(self._idle[e]) - self._opening[e]
            if self._closing or missing <= 0 or self.endpoints[e].down or loop is None:
                return
            self._opening[e] += missing
        for _ in range(missing):
            t = loop.create_task(self._spare(e))
            self._tasks.add(t)
            t.add_done_callback(self._tasks.discard)

    async def _spare(self, e: int) -> None:
        try:
            c = await self._connect(e)
        except (OSError, TimeoutError):
            return
        finally:
            with self._lock:
                self._opening[e] -= 1
        if self._park(c):
            self.connects_ahead += 1

    async def shut(self) -> None:
        """Drop the streams in flight (no outcome reported, as the aiohttp path's cancel) and close."""
        self._closing = True
        if self._sweeper is not None:
            self._sweeper.cancel()
        tasks = list(self._tasks)
        for t in tasks:
            t.cancel()
        for c in list(self._conns):
            c.req = None
            c.close()
        if tasks:  # connects in progress end here, not as pending tasks of a closed loop
            await asyncio.wait(tasks, timeout=1.0)
        await asyncio.sleep(0)

    async def _connect(self, e: int) -> _Conn:
        loop = self._loop
        assert loop is not None
        host, port = self._addr[e]
        infos = self._infos[e]
        if infos is None:  # resolved once per endpoint: a connect ahead or not, no executor hop after the first
            infos = list(await asyncio.wait_for(
                loop.getaddrinfo(host, port, type=socket.SOCK_STREAM), self.config.connect_s
            ))
            if infos:
                self._infos[e] = infos
        err: BaseException = OSError(f"no address for {host}")
        for family, kind, proto, _, addr in infos:
            sock = socket.socket(family, kind, proto)
            conn = _Conn(self, e)
            dup: socket.socket | None = None
            try:
                sock.setblocking(False)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                if self._kernel_stamps:
                    with contextlib.suppress(OSError):  # refused: no stamps come, the reads' times are used
                        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
                await asyncio.wait_for(loop.sock_connect(sock, addr), self.config.connect_s)
                dup = sock.dup()  # before the transport takes the socket (uvloop detaches it)
                await loop.create_connection(conn.itself, sock=sock)
            except BaseException as exc:
                sock.close()
                if dup is not None:
                    dup.close()
                if not isinstance(exc, OSError | TimeoutError):
                    raise
                err = exc
                continue
            dup.setblocking(False)
            conn.sock = dup
            if self._kernel_stamps:
                conn.read_own(loop)
            self._conns.add(conn)
            return conn
        raise err

    # --- issuing: any thread ---------------------------------------------------------------------

    def start(self, requests: list[Request]) -> None:
        """The loop's entry (worker processes): the same as `submit` from the loop thread."""
        self.submit(requests)

    def dry_submit(self) -> None:
        """`submit`'s pure parts, dry: the endpoint choice, the idle list, a request's state, the
        last body and its head (at low rates this code is cold when a request is due); the issuing
        thread's, through OpenAISUT.warm_issue."""
        with self._lock:
            e = least_busy(self.endpoints)
            idle = self._idle[e]
            c = idle[-1] if idle else None
            if c is not None:
                _ = c.alive and c.sock is not None and time.perf_counter_ns() - c.t_idle < PEEK_AFTER_NS
        _Req(-1, -1, e, 0)
        if self._last_idx >= 0:
            self._head(e, len(self.body(self._last_idx)))

    def submit(self, requests: list[Request]) -> None:
        """Send each request now on an idle connection (from this thread), else have the loop open
        one; beyond `concurrency` in flight, queue it for the loop to start when one ends."""
        cap = self.config.concurrency
        eps = self.endpoints
        times = self.times
        loop = self._loop
        assert loop is not None
        for i, idx, e, t in requests:
            req = _Req(i, idx, e, t)
            with self._lock:
                if self._closing:
                    return
                if cap and self._in_flight >= cap:
                    self._waiting.append((i, idx, e, t))
                    continue
                self._in_flight += 1
                if e < 0:
                    e = req.e = least_busy(eps)
                ep = eps[e]
                ep.outstanding += 1
                ep.sent += 1
                self._active.add(req)
                idle = self._idle[e]
                conn = None
                now = time.perf_counter_ns()
                while idle:
                    c = idle.pop()
                    if c.alive and c.sock is not None and (now - c.t_idle < PEEK_AFTER_NS or _quiet(c.sock)):
                        conn = c
                        break
                    if c.alive:  # the server closed it (or sent bytes nobody asked for): not reused
                        c.alive = False
                        loop.call_soon_threadsafe(c.close)
                body = self.body(idx)
                head = self._head(e, len(body))
                self._last_idx = idx
                req.t_start = req.t_last = time.perf_counter_ns()
                self.sink.sent(i, t, req.t_start)
                if conn is not None:
                    req.conn, conn.req = conn, req  # before the send: a response always finds its request
                    conn.used = True
                    sock = conn.sock
                    assert sock is not None
                    try:
                        n = sock.sendmsg((head, body))
                    except BlockingIOError:
                        n = 0
                    except OSError:  # the server closed it while idle: nothing written, retry afresh
                        req.conn = conn.req = None
                        req.retried = True
                        conn.alive = False
                        loop.call_soon_threadsafe(conn.close)
                        conn = None
                        n = -1
                    if times is not None and conn is not None:
                        times_of(times, i).written = time.perf_counter_ns()
                    if conn is not None and n < len(head) + len(body):
                        req.whole = False
                        rest = (head + body)[n:]
                        loop.call_soon_threadsafe(self._write_rest, req, conn, rest)
                due = not self._top_up_due[e] and len(idle) + self._opening[e] < self.warm
                if due:  # after the send: the connect ahead is the loop's, off this request's path
                    self._top_up_due[e] = True
            if due:
                self._in_loop(self._top_up, e)
            if conn is None:
                self._in_loop(self._open_send, req, head, body)

    def _in_loop(self, fn: Callable[..., Any], *args: Any) -> None:
        loop = self._loop
        assert loop is not None
        try:
            on_loop = asyncio.get_running_loop() is loop
        except RuntimeError:
            on_loop = False
        if on_loop:
            fn(*args)
        else:
            loop.call_soon_threadsafe(fn, *args)

    # --- the loop thread ----------------------------------------------------------------------------

    def _write_rest(self, req: _Req, conn: _Conn, rest: bytes) -> None:
        if conn.req is req and conn.transport is not None and not req.reported:
            conn.transport.write(rest)
            req.whole = True

    def _open_send(self, req: _Req, head: bytes, body: bytes) -> None:
        t = asyncio.get_running_loop().create_task(self._open_send_async(req, head, body))
        self._tasks.add(t)
        t.add_done_callback(self._tasks.discard)

    async def _open_send_async(self, req: _Req, head: bytes, body: bytes) -> None:
        url = self.endpoints[req.e].url
        self.connects_waited += 1
        try:
            conn = await self._connect(req.e)
        except TimeoutError as exc:
            self._fault(req, "connect", f"connect timeout to {url}: {exc}")
            return
        except OSError as exc:
            self._fault(req, "connect", f"cannot connect to {url}: {exc}")
            return
        if req.reported or self._closing:  # timed out meanwhile
            self._release(conn, True)
            return
        req.conn, conn.req = conn, req
        conn.used = True
        req.t_last = time.perf_counter_ns()
        assert conn.transport is not None
        conn.transport.write(head + body)
        if self.times is not None:
            times_of(self.times, req.i).written = time.perf_counter_ns()

    def _data(self, req: _Req, data: bytes, t: int) -> None:
        req.t_last = t
        p = req.parser
        url = self.endpoints[req.e].url
        if not req.st.nbytes:
            self.bind(req.st, req.idx)
        try:
            req.st.take(len(data))  # every byte of the response counts, its framing and a drain too
            pieces = p.feed(data)
        except (HTTP1Error, StreamOverrun) as exc:
            if req.reported:
                self._drop(req)
            else:
                self._fault(req, "protocol", f"{url}: {exc}")
            return
        if req.reported:  # draining the rest of a reported stream
            if p.done:
                self._drained(req)
            return
        if not p.status:
            return
        if self.times is not None:
            _stamp(self.times, req.i, t, pieces)
        if p.status != 200:
            for piece in pieces:
                req.err += piece[: MAX_ERROR_BODY - len(req.err)]
            if p.done or len(req.err) >= MAX_ERROR_BODY:
                self._http_error(req)
            return
        enc = unasked_encoding(p.headers)
        if enc is not None:
            self._fault(req, "protocol", f"{url} sent a {enc!r}-encoded body; proctor asks for identity")
            return
        st = req.st
        try:
            for piece in pieces:
                if self.events(req.i, req.sse.feed(piece), st, t):
                    self._complete(req, t)
                    return
            if p.done:
                self.events(req.i, req.sse.close(), st, t)
                self._complete(req, t)
        except SSEError as exc:
            self._fault(req, "protocol", f"{url}: {exc}")

    def _complete(self, req: _Req, t: int) -> None:
        """The stream said it ended (or its body did): report it; keep the connection until drained.
        A drained connection is idle again before the report, so the request the engine issues on
        this completion (a closed loop, SingleStream) finds it instead of connecting."""
        self._settle(req)
        if req.parser.done:
            self._drained(req)
        self.finish(req.i, req.idx, req.st, self.endpoints[req.e].url, t)

    def _http_error(self, req: _Req) -> None:
        p = req.parser
        kind, message = refusal(p.status, p.headers, self.endpoints[req.e].url, req.err.decode("utf-8", "replace"))
        self._settle(req)
        self.sink.fail(req.i, req.idx, kind, message)
        if p.done:
            self._drained(req)
        else:
            self._drop(req)

    def _fault(self, req: _Req, kind: str, message: str) -> None:
        """A fault: report it, close the request's connection (never reused after a fault)."""
        if req.reported:
            return
        self._settle(req)
        self.sink.fail(req.i, req.idx, kind, message)
        self._drop(req)

    def _settle(self, req: _Req) -> None:
        """The request's outcome is about to be reported: free its slot and its endpoint count, and
        start a waiting request if the concurrency limit held one back."""
        req.reported = True
        nxt = None
        with self._lock:
            self._in_flight -= 1
            self.endpoints[req.e].outstanding -= 1
            if not req.conn or req.parser.done:
                self._active.discard(req)
            if self._waiting and not self._closing:
                nxt = self._waiting.popleft()
        if nxt is not None:  # after this callback, so the connection it frees can carry it
            asyncio.get_running_loop().call_soon(self.submit, [nxt])

    def _drained(self, req: _Req) -> None:
        """The response was read to its end: the connection goes back to the idle list if it may."""
        conn = req.conn
        with self._lock:
            self._active.discard(req)
        if conn is None:
            return
        conn.req = req.conn = None
        self._release(conn, req.parser.keep_alive and req.whole)

    def _release(self, conn: _Conn, reuse: bool) -> None:
        if reuse and conn.alive and not self._closing:
            with self._lock:
                conn.req = None
                conn.t_idle = time.perf_counter_ns()
                self._idle[conn.e].append(conn)
        else:
            conn.req = None
            conn.close()

    def _drop(self, req: _Req) -> None:
        conn = req.conn
        with self._lock:
            self._active.discard(req)
        if conn is not None:
            conn.req = req.conn = None
            conn.close()

    def _lost(self, conn: _Conn, exc: Exception | None) -> None:
        with self._lock:
            if conn.sock is not None:
                conn.sock.close()
                conn.sock = None
            with contextlib.suppress(ValueError):
                self._idle[conn.e].remove(conn)
        self._conns.discard(conn)
        if conn.used and not self._closing:  # a used connection closed: another ready in its place
            self._top_up(conn.e)
        req = conn.req
        if req is None or self._closing:
            return
        conn.req = req.conn = None
        if req.reported:
            with self._lock:
                self._active.discard(req)
            return
        url = self.endpoints[req.e].url
        p = req.parser
        if p.status and p.status != 200:
            p.close()
            self._http_error(req)
            return
        if p.status == 200 and p.close():  # the body ended with the connection (read-until-close)
            try:
                self.events(req.i, req.sse.close(), req.st, time.perf_counter_ns())
            except SSEError as err:
                self._fault(req, "protocol", f"{url}: {err}")
                return
            self._complete(req, time.perf_counter_ns())
            return
        why = "the server closed the connection" if exc is None else f"{type(exc).__name__}: {exc}"
        self._fault(req, "dropped", f"stream from {url} broke off: {why}")

    def _sweep(self) -> None:
        """The timeouts of every active request: per request, no progress, a drain that hangs."""
        loop = self._loop
        assert loop is not None
        now = time.perf_counter_ns()
        total, stall = int(self.config.timeout_s * 1e9), int(self.config.stall_s * 1e9)
        with self._lock:
            active = list(self._active)
        for req in active:
            url = self.endpoints[req.e].url
            if req.reported:
                if now - req.t_last > stall:
                    self._drop(req)
            elif now - req.t_start > total:
                self._fault(req, "timeout", f"request to {url} took over {self.config.timeout_s:g} s")
            elif req.conn is not None and now - req.t_last > stall:
                if req.parser.status and req.parser.status != 200:
                    self._http_error(req)
                else:
                    self._fault(req, "stall", f"no data from {url} for {self.config.stall_s:g} s")
        if not self._closing:
            self._sweeper = loop.call_later(self._tick, self._sweep)


def _quiet(sock: socket.socket) -> bool:
    """An idle connection has nothing to read: no FIN the loop has not seen yet, no stray bytes
    (one peek, so a request is not sent into a connection the server already closed)."""
    try:
        sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)  # EOF (b"") or bytes: not quiet
    except BlockingIOError:
        return True
    except OSError:
        return False
    return False


def _stamp(times: Times, i: int, t: int, pieces: list[bytes]) -> None:
    """The response's head and first body bytes arrived at `t` (kept while the SUT records times)."""
    rt = times_of(times, i)
    if not rt.head:
        rt.head = t
    if not rt.first_byte and any(pieces):
        rt.first_byte = t


__all__ = ["DEFAULT_WARM", "MAX_HEAD", "HTTP1Error", "RawClient", "ResponseParser"]
