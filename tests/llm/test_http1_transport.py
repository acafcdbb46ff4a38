"""The raw HTTP/1.1 transport against a hand-written server: the response framings servers use
(chunked, Content-Length, `Connection: close`, HTTP/1.0 read-until-close, an interim 100), error
answers, a broken status line, and a request too big for one send. Every request reaches the
server once (never sent twice), faults are counted by kind, the rest complete with exact counts."""

from __future__ import annotations

import socket
import threading
from collections import Counter

import orjson
import pytest
from test_openai_sut import Scenario, run  # tests/llm is on sys.path

from proctor.clients.http1 import RawClient
from proctor.clients.openai import from_params

SSE = (b'data: {"choices":[{"index":0,"text":"a"}]}\n\n'
       b'data: {"choices":[{"index":0,"text":" b"}]}\n\n'
       b'data: {"choices":[],"usage":{"completion_tokens":2}}\n\ndata: [DONE]\n\n')


def chunked(body: bytes) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(body[k:k + 40]), body[k:k + 40]) for k in range(0, len(body), 40)) + b"0\r\n\r\n"


ANSWERS = {
    "chunked": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(SSE),
    "length": b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(SSE), SSE),
    "close": b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(SSE), SSE),
    "http10": b"HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\n\r\n" + SSE,
    "continue": b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(SSE),
    "429": b"HTTP/1.1 429 Too Many Requests\r\nContent-Length: 4\r\n\r\nslow",
    "bad": b"HTTP/9 200 OK\r\n\r\n" + SSE,
}
CLOSES = {"close", "http10", "bad"}


class Stub:
    """One thread per connection; request k gets the answer modes[k % len(modes)]."""

    def __init__(self, modes: list[str]) -> None:
        self.modes = modes
        self.requests = 0
        self.bodies: list[int] = []
        self.conns = 0
        self.lock = threading.Lock()
        self.srv = socket.create_server(("127.0.0.1", 0))
        self.port = self.srv.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                c, _ = self.srv.accept()
            except OSError:
                return
            with self.lock:
                self.conns += 1
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c: socket.socket) -> None:
        buf = b""
        with c:
            while True:
                while b"\r\n\r\n" not in buf:
                    got = c.recv(65536)
                    if not got:
                        return
                    buf += got
                head, _, buf = buf.partition(b"\r\n\r\n")
                n = int(next(h for h in head.split(b"\r\n") if h.lower().startswith(b"content-length:")).split(b":")[1])
                while len(buf) < n:
                    got = c.recv(1 << 20)
                    if not got:
                        return
                    buf += got
                orjson.loads(buf[:n])  # the body arrived whole
                buf = buf[n:]
                with self.lock:
                    mode = self.modes[self.requests % len(self.modes)]
                    self.requests += 1
                    self.bodies.append(n)
                c.sendall(ANSWERS[mode])
                if mode in CLOSES:
                    return

    def close(self) -> None:
        self.srv.close()


def test_every_framing_and_fault_kind_over_the_raw_transport(tmp_path):
    modes = ["chunked", "length", "close", "http10", "continue", "429", "bad", "chunked"]
    stub = Stub(modes)
    try:
        sut, qsl = from_params(url=f"http://127.0.0.1:{stub.port}", synthetic="16", concurrency="1", warm="1",
                               stall_s="5", out="const:2", preflight="0")  # the stub answers POSTs only
        out = run(tmp_path, sut, qsl, Scenario.OFFLINE, min_query_count=16)
    finally:
        stub.close()
    n = out.records.n_samples_issued
    per = Counter(modes[k % len(modes)] for k in range(n))
    assert stub.requests == n  # each request reached the server exactly once
    assert sut.faults == {"http_429": per["429"], "protocol": per["bad"]}
    assert sut.count_sources == {"usage": n - per["429"] - per["bad"]}
    # a connection the server closes (or may close) is not reused; the others are
    assert stub.conns <= 1 + per["close"] + per["http10"] + per["bad"] + per["429"]


def test_a_request_too_big_for_one_send_is_finished_by_the_loop(tmp_path, monkeypatch):
    rests = []
    write_rest = RawClient._write_rest
    monkeypatch.setattr(RawClient, "_write_rest", lambda self, req, conn, rest: (rests.append(len(rest)),
                                                                                 write_rest(self, req, conn, rest)))
    data = tmp_path / "big.jsonl"
    prompts = ["a " * (3 << 20), "small prompt"]
    data.write_bytes(b"\n".join(orjson.dumps({"prompt": p, "max_tokens": 2}) for p in prompts))
    stub = Stub(["chunked"])
    try:
        sut, qsl = from_params(url=f"http://127.0.0.1:{stub.port}", dataset=str(data), concurrency="1", warm="1",
                               preflight="0")  # the stub answers POSTs only
        out = run(tmp_path, sut, qsl, Scenario.OFFLINE, min_query_count=2)
    finally:
        stub.close()
    n = out.records.n_samples_issued
    assert out.errors == 0 and sut.count_sources == {"usage": n} and stub.requests == n
    assert max(stub.bodies) > 6 << 20
    assert rests and all(0 < r < max(stub.bodies) for r in rests)  # sent in part at once, the rest by the loop


def test_an_idle_connection_the_server_closed_is_not_quiet():
    from proctor.clients.http1 import _quiet

    a, b = socket.socketpair()
    with a, b:
        a.setblocking(False)
        assert _quiet(a)
        b.sendall(b"x")  # stray bytes
        assert not _quiet(a) and a.recv(1) == b"x" and _quiet(a)
        b.close()  # the FIN
        assert not _quiet(a)


BLOCK_S = 0.6  # the client's loop is kept busy this long after each send


def _busy_loop_ttfts(tmp_path, monkeypatch, rx_stamp: str):
    """Each sample's TTFT (s) when the client's loop is busy as the answer arrives: the stub answers
    at once, the loop reads it only after BLOCK_S."""
    import time

    submit = RawClient.submit

    def busy_then_submit(self, requests):
        self._loop.call_soon_threadsafe(time.sleep, BLOCK_S)  # the loop is busy when the bytes come
        submit(self, requests)

    monkeypatch.setattr(RawClient, "submit", busy_then_submit)
    stub = Stub(["chunked"])
    try:
        sut, qsl = from_params(url=f"http://127.0.0.1:{stub.port}", synthetic="4", warm="1", out="const:2",
                               preflight="0", rx_stamp=rx_stamp)
        out = run(tmp_path, sut, qsl, Scenario.SINGLE_STREAM, min_query_count=3, min_duration_ms=0)
    finally:
        stub.close()
    rec = out.records
    n = rec.n_samples_issued
    assert n >= 3 and out.errors == 0 and sut.count_sources == {"usage": n}
    return (rec.sample_first_token_ns[:n] - rec.query_issued_ns[:n]) / 1e9


def test_kernel_stamps_time_the_arrival_not_the_clients_read(tmp_path, monkeypatch):
    """rx_stamp=kernel: the bytes' arrival (SO_TIMESTAMPNS), whatever the client's loop was doing;
    rx_stamp=user: the read, after the loop was free. Linux only (elsewhere kernel = user)."""
    import sys

    from proctor.clients.http1 import SO_TIMESTAMPNS

    user = _busy_loop_ttfts(tmp_path / "user", monkeypatch, "user")
    assert user.min() >= BLOCK_S * 0.9
    if not (sys.platform.startswith("linux") and SO_TIMESTAMPNS):
        return
    kernel = _busy_loop_ttfts(tmp_path / "kernel", monkeypatch, "kernel")
    assert (kernel > 0).all() and kernel.max() < BLOCK_S / 2


def test_rx_time_takes_the_kernel_stamp_only_inside_the_request_window():
    import struct
    import time

    from proctor.clients.http1 import SO_TIMESTAMPNS, rx_time

    offset = time.time_ns() - time.perf_counter_ns()
    now = time.perf_counter_ns()

    def anc(t_mono: int, level: int = socket.SOL_SOCKET, kind: int = SO_TIMESTAMPNS or 35):
        real = t_mono + offset
        return [(level, kind, struct.pack("@qq", real // 1_000_000_000, real % 1_000_000_000))]

    got = rx_time(anc(now - 5_000_000), now - 10_000_000, now)
    if SO_TIMESTAMPNS:
        assert abs(got - (now - 5_000_000)) < 1_000_000  # the clocks' offset, estimated: within a millisecond
    assert rx_time(anc(now - 20_000_000), now - 10_000_000, now) == now  # before the send: a stepped clock
    assert rx_time(anc(now + 20_000_000), now - 10_000_000, now) == now  # after the read
    assert rx_time([], now - 10, now) == now
    assert rx_time(anc(now - 5, level=socket.IPPROTO_TCP), now - 10, now) == now
    assert rx_time([(socket.SOL_SOCKET, SO_TIMESTAMPNS or 35, b"\x01\x02")], now - 10, now) == now  # short


def test_the_wall_offset_is_the_narrowest_pair_and_holds_between_refreshes():
    """A stamp's conversion must not move with a preemption between two clock reads (a stream's last
    bytes were once timed 8.5 us before its first, and the engine refused the completion)."""
    from proctor.clients.http1 import WallOffset

    perf_reads = iter([100, 900, 1000, 1010, 2000, 2600, 5000, 5002, 6000, 6100])  # brackets 800, 10, 600, 2, 100
    wall_reads = iter([10_000, 11_000, 12_000, 15_001, 16_000])
    off = WallOffset(perf=lambda: next(perf_reads), wall=lambda: next(wall_reads))
    assert off.measure() == 15_001 - 5001  # the pair whose perf reads were 2 ns apart
    calls = {"n": 0}

    def perf() -> int:
        calls["n"] += 1
        return 1_000 * calls["n"] + (50_000 if calls["n"] % 3 == 0 else 0)  # a preemption now and then

    off = WallOffset(perf=perf, wall=lambda: 7_000_000_000)
    first = off.get(10)
    measured = calls["n"]
    assert all(off.get(10 + k * 1_000_000) == first for k in range(400))  # 0.4 s: no re-read, one value
    assert calls["n"] == measured
    off.get(10 + WallOffset.REFRESH_NS)  # half a second on: read again (slewing is followed)
    assert calls["n"] == measured + 2 * WallOffset.TRIES
    off.get(5)  # a time before the last refresh: read again, never a stale value
    assert calls["n"] == measured + 4 * WallOffset.TRIES


def test_a_later_read_is_never_timed_before_the_last():
    import struct

    from proctor.clients.http1 import SO_TIMESTAMPNS, WALL_OFFSET, rx_time

    if not SO_TIMESTAMPNS:
        pytest.skip("no kernel receive stamps on this platform")
    import time

    now = time.perf_counter_ns()
    offset = WALL_OFFSET.get(now)
    real = now - 1_000 + offset
    anc = [(socket.SOL_SOCKET, SO_TIMESTAMPNS, struct.pack("@qq", real // 1_000_000_000, real % 1_000_000_000))]
    assert rx_time(anc, now - 2_000, now) == now - 1_000  # after the last read: the kernel's time
    assert rx_time(anc, now - 500, now) == now  # before the stream's last read: the read's own time


def test_a_dry_submit_sends_and_counts_nothing(tmp_path):
    """The issuer's warm-up (WarmableSUT.warm_issue) between real requests leaves no trace."""
    from proctor.loadgen.types import WarmableSUT

    stub = Stub(["chunked"])
    try:
        sut, qsl = from_params(url=f"http://127.0.0.1:{stub.port}", synthetic="8", warm="1", out="const:2",
                               preflight="0")
        assert isinstance(sut, WarmableSUT)
        submit = RawClient.dry_submit
        calls = []

        def counted(self):
            calls.append(1)
            submit(self)

        RawClient.dry_submit = counted
        try:
            out = run(tmp_path, sut, qsl, Scenario.SERVER, min_query_count=8, min_duration_ms=0,
                      server_target_qps=20.0)  # sparse waits: the spin (and its warm-up) may run
            for _ in range(5):  # and more of them, by hand, after the run
                sut.warm_issue()
        finally:
            RawClient.dry_submit = submit
    finally:
        stub.close()
    n = out.records.n_samples_issued
    assert out.errors == 0 and sut.count_sources == {"usage": n}
    assert stub.requests == n  # each request reached the server once; no dry one did
    assert sum(e.sent for e in sut.endpoints) == n and all(e.outstanding == 0 for e in sut.endpoints)
