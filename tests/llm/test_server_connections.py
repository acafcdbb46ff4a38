"""`proctor serve llm` and `proctor serve node` bound every connection themselves (issue 30 §6): an
idle, trickling or half-sent connection is closed at its deadline, a client that reads none of its
answer is dropped, and a connection over the cap is answered 503 at once while the ones within it are
served. Servers run in this process on 127.0.0.1 with short bounds; what is asserted is that the
server closed or answered (a socket timeout only keeps a broken server from hanging the test)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import orjson
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from conftest import running_server
from proctor.errors import ConfigError
from proctor.loadgen import completion
from proctor.serving.limits import ConnectionLimits, fd_cap
from proctor.serving.llm_server import ServerOptions

SHORT = dict(header_s=0.3, body_s=0.3, idle_s=0.3, send_s=0.5)
HANG_GUARD_S = 30  # a socket read waits at most this long: a server that never closes fails the test


@contextmanager
def node_server(limits: ConnectionLimits) -> Iterator[object]:
    """`proctor serve node` in this process (the synthetic SUT), on its own loop thread."""
    from proctor.serving.node_server import start_node

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    node = asyncio.run_coroutine_threadsafe(
        start_node("synthetic:service_us=0,workers=1", limits=limits), loop).result(timeout=30)
    try:
        yield node
    finally:
        node.model.router.fail_all("test over")
        asyncio.run_coroutine_threadsafe(node.stop(), loop).result(timeout=30)
        with contextlib.suppress(Exception):
            node.model.sut.close()
        completion.detach(node.model.router)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()


@contextmanager
def serving(kind: str, **limits: float) -> Iterator[tuple[int, object]]:
    """(port, gate) of a server of `kind` with these connection limits."""
    lim = ConnectionLimits(**{**SHORT, **limits})
    if kind == "llm":
        with running_server(ServerOptions(ttft_ms=0, tpot_ms=0), lim) as server:
            yield server.port, server.gate
    else:
        with node_server(lim) as node:
            yield node.port, node.gate


# a request each server answers: (head without its final blank line, body)
REQUEST = {
    "llm": (b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n",
            orjson.dumps({"prompt": "a b c", "max_tokens": 2})),
    "node": (b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n", b""),
}


def _whole(kind: str) -> bytes:
    head, body = REQUEST[kind]
    return head + b"Content-Length: %d\r\n\r\n" % len(body) + body


def _connect(port: int) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=HANG_GUARD_S)
    return s


def _closed(s: socket.socket) -> bool:
    """Read until the server closes (True) or the hang guard passes (False); answers are skipped."""
    try:
        while s.recv(65536):
            pass
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False
    return True


def _status(s: socket.socket) -> int:
    head = b""
    with contextlib.suppress(ConnectionResetError):
        while b"\r\n" not in head:
            part = s.recv(4096)
            if not part:
                break
            head += part
    words = head.split(b"\r\n", 1)[0].split()
    return int(words[1]) if len(words) > 1 and words[1].isdigit() else 0


def _trickle(s: socket.socket, data: bytes, pause_s: float = 0.02) -> int:
    """Send data a byte at a time; the bytes sent before the server closed (len(data) if it never did)."""
    for k in range(len(data)):
        try:
            s.send(data[k : k + 1])
        except (BrokenPipeError, ConnectionResetError):
            return k
        time.sleep(pause_s)
    return len(data)


SERVERS = ["llm", "node"]


@pytest.mark.parametrize("kind", SERVERS)
def test_an_idle_connection_is_closed(kind):
    with serving(kind) as (port, gate), _connect(port) as s:
        assert _closed(s)
    assert gate.counts["idle_timeout"] >= 1


@pytest.mark.parametrize("kind", SERVERS)
def test_a_trickled_head_is_closed_before_it_ends(kind):
    head, _ = REQUEST[kind]
    long_head = head + b"X-Pad: " + b"p" * 2000 + b"\r\n\r\n"
    with serving(kind) as (port, gate), _connect(port) as s:
        sent = _trickle(s, long_head)
        assert sent < len(long_head) or _closed(s)
    assert gate.counts["header_timeout"] == 1


@pytest.mark.parametrize("kind", SERVERS)
def test_a_half_sent_head_is_closed(kind):
    head, _ = REQUEST[kind]
    with serving(kind, idle_s=60) as (port, gate), _connect(port) as s:
        s.sendall(head[: len(head) // 2])
        assert _closed(s)
    assert gate.counts["header_timeout"] == 1 and not gate.counts["idle_timeout"]


POST_HEAD = {
    "llm": REQUEST["llm"][0],
    "node": b"POST /v2/models/synthetic/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n",
}


@pytest.mark.parametrize("kind", SERVERS)
def test_a_trickled_or_half_sent_body_is_closed(kind):
    head, body = POST_HEAD[kind], b'{"inputs": ['
    declared = head + b"Content-Length: 4000\r\n\r\n"
    with serving(kind, idle_s=60) as (port, gate):
        with _connect(port) as s:
            s.sendall(declared + body[:5])  # half sent, then nothing
            assert _closed(s)
        with _connect(port) as s:
            s.sendall(declared)
            sent = _trickle(s, b" " * 4000)
            assert sent < 4000 or _closed(s)
    assert gate.counts["body_timeout"] == 2


def test_a_client_that_reads_nothing_is_dropped():
    """Long streams (30 pipelined requests, megabytes past any socket buffer) to a client whose receive
    window is a few KiB and who never reads."""
    body = orjson.dumps({"prompt": "a b c", "max_tokens": 100_000, "stream": True})
    with running_server(ServerOptions(ttft_ms=0, tpot_ms=0, chunk=(1000, 1000)),
                        ConnectionLimits(**{**SHORT, "idle_s": 60, "body_s": 60})) as server:
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.settimeout(HANG_GUARD_S)
        s.connect(("127.0.0.1", server.port))
        with s:
            s.sendall((REQUEST["llm"][0] + b"Content-Length: %d\r\n\r\n" % len(body) + body) * 30)
            for _ in range(HANG_GUARD_S * 10):  # the server gives up on it: its connection goes
                if server.gate.counts["send_timeout"]:
                    break
                time.sleep(0.1)
        assert server.gate.counts["send_timeout"] == 1


@pytest.mark.parametrize("kind", SERVERS)
def test_a_connection_over_the_cap_is_refused_and_the_others_are_served(kind):
    with serving(kind, idle_s=60, header_s=60, max_connections=3) as (port, gate):
        held = [_connect(port) for _ in range(3)]
        try:
            for _ in range(HANG_GUARD_S * 10):  # the server has taken all three
                if len(gate.open) == 3:
                    break
                time.sleep(0.01)
            with _connect(port) as extra:
                extra.sendall(_whole(kind))
                assert _status(extra) == 503
                assert _closed(extra)
            assert gate.counts["refused"] == 1
            held[0].sendall(_whole(kind))  # within the cap: served as ever
            assert _status(held[0]) == 200
            held.pop().close()
            for _ in range(HANG_GUARD_S * 10):
                if len(gate.open) == 2:
                    break
                time.sleep(0.01)
            with _connect(port) as again:  # a freed place is taken again
                again.sendall(_whole(kind))
                assert _status(again) == 200
        finally:
            for s in held:
                s.close()


@pytest.mark.parametrize("kind", SERVERS)
def test_a_normal_request_is_served_and_its_connection_kept_until_idle(kind):
    with serving(kind, idle_s=0.5) as (port, gate), _connect(port) as s:
        for _ in range(3):  # keep-alive: several requests on one connection
            s.sendall(_whole(kind))
            assert _status(s) == 200
            time.sleep(0.05)
            _drain(s)
        assert _closed(s)
    assert not gate.counts["header_timeout"] and not gate.counts["body_timeout"]


def _drain(s: socket.socket) -> None:
    s.setblocking(False)
    with contextlib.suppress(BlockingIOError):
        while s.recv(65536):
            pass
    s.settimeout(HANG_GUARD_S)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_whatever_a_client_sends_then_stops_its_connection_is_closed(data):
    """Any prefix of a request (or any bytes), then silence: the server answers or not, and closes."""
    kind = data.draw(st.sampled_from(SERVERS))
    whole = _whole(kind)
    sent = data.draw(st.one_of(
        st.just(whole),
        st.integers(0, len(whole)).map(lambda k: whole[:k]),
        st.binary(max_size=300),
        st.binary(max_size=300).map(lambda b: whole[: len(whole) // 2] + b),
    ))
    with _SERVERS[kind]() as port, _connect(port) as s:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            s.sendall(sent)
        status = _status(s)
        event(f"{kind}: {'answered ' + str(status) if status else 'no answer'}, then closed")
        assert _closed(s), sent


@contextmanager
def _llm_port() -> Iterator[int]:
    with serving("llm") as (port, _):
        yield port


@contextmanager
def _node_port() -> Iterator[int]:
    with serving("node") as (port, _):
        yield port


_SERVERS = {"llm": _llm_port, "node": _node_port}


def test_the_limits_are_checked():
    for bad in (dict(header_s=0), dict(body_s=-1), dict(idle_s=float("nan")), dict(send_s=1e9),
                dict(max_connections=0)):
        with pytest.raises(ConfigError):
            ConnectionLimits(**bad)
    assert 1 <= fd_cap(10**6) <= 10**6 and fd_cap(5) == 5
