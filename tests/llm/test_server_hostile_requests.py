"""`proctor serve llm` and `proctor serve node` answer every malformed request with a 4xx and write
no traceback (issue 22, class 5); failures are logged one line per kind, counted and rate-limited."""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proctor.serving.guard import FailureLog

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def _status(port: int, raw: bytes) -> int:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(raw)
        head = b""
        while b"\r\n" not in head:
            part = s.recv(4096)
            if not part:
                break
            head += part
    line = head.split(b"\r\n", 1)[0].split()
    return int(line[1]) if len(line) > 1 and line[1].isdigit() else 0


def _post(port: int, path: str, body: bytes, extra: bytes = b"") -> int:
    return _status(port, b"POST " + path.encode() + b" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                   + extra + b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)


def _no_tracebacks(caplog) -> None:
    assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records if r.exc_info]


def test_named_malformed_requests_get_4xx(llm_server, caplog):
    caplog.set_level(logging.WARNING)
    chat = "/v1/chat/completions"
    with llm_server(ttft_ms=1, tpot_ms=1) as server:
        p = server.port
        for text in (5, None, [1], {"a": 1}):
            body = json.dumps({"messages": [{"role": "user", "content": [{"type": "text", "text": text}]}],
                               "max_tokens": 3}).encode()
            assert _post(p, chat, body) == 400, text
        assert _post(p, chat, b"not gzip", b"Content-Encoding: gzip\r\n") == 415
        assert _post(p, chat, b"x", b"Content-Encoding: br\r\n") == 415
        assert _post(p, "/v1/completions", b"{") == 400
        assert _post(p, "/v1/completions", b'{"prompt": "a", "max_tokens": 1e400}') == 400
        big = b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 999999999999\r\n\r\n"
        assert _status(p, big) == 413
        # an image part is skipped, a text part is read
        ok = json.dumps({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": 5}},
                                                                   {"type": "text", "text": "hi"}]}],
                         "max_tokens": 2}).encode()
        assert _post(p, chat, ok) == 200
    _no_tracebacks(caplog)


def test_any_json_body_gets_an_answer_not_a_traceback(llm_server, caplog):
    caplog.set_level(logging.WARNING)
    with llm_server(ttft_ms=0, tpot_ms=0) as server:

        @settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
        @given(body=JSON, chat=st.booleans())
        def check(body, chat):
            wrapped = {"messages": body, "max_tokens": 2} if chat else {"prompt": body, "max_tokens": 2}
            for payload in (body, wrapped):
                path = "/v1/chat/completions" if chat else "/v1/completions"
                assert _post(server.port, path, orjson.dumps(payload)) in (200, 400), payload

        check()
    _no_tracebacks(caplog)


def test_clients_that_reset_mid_stream_leave_no_tracebacks(tmp_path):
    err = tmp_path / "err.txt"
    srv = subprocess.Popen([sys.executable, "-m", "proctor", "serve", "llm", "--port", "0", "--ttft-ms", "1",
                            "--tpot-ms", "1"], stdout=subprocess.PIPE, stderr=err.open("w"), text=True)
    try:
        port = int(srv.stdout.readline().split("http://127.0.0.1:")[1].split()[0])
        body = json.dumps({"prompt": "hi", "max_tokens": 500, "stream": True}).encode()
        for _ in range(20):
            with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
                s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
                s.recv(100)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # RST
        assert _post(port, "/v1/completions", b'{"prompt": "a", "max_tokens": 2}') == 200  # still serving
    finally:
        srv.terminate()
        srv.wait(timeout=30)
    assert "Traceback" not in err.read_text()


def test_failure_lines_are_rate_limited_per_kind(caplog):
    caplog.set_level(logging.WARNING)
    log = FailureLog(logging.getLogger("t"))
    for _ in range(100):
        log.note("bad_body", "x\ny")
    log.note("other", "z")
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 8  # 1, 2, 4, ..., 64 of bad_body, and other's first
    assert lines[0] == "bad_body (1 so far): x\\x0ay" and log.counts["bad_body"] == 100


def _answer(port: int, raw: bytes) -> int:
    """The status a server gives raw bytes, 0 when it closes without one (both are fine answers)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        try:
            s.sendall(raw)
            s.shutdown(socket.SHUT_WR)
            head = s.recv(64)
        except (ConnectionResetError, BrokenPipeError):
            return 0
    parts = head.split(b" ", 2)
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0


HEAD_PIECES = st.sampled_from([
    b"POST /v1/completions HTTP/1.1\r\n", b"GET /health HTTP/1.1\r\n", b"Host: x\r\n", b"Content-Length: 5\r\n",
    b"Content-Length: -1\r\n", b"Content-Length: 99999999999999999999\r\n", b"Transfer-Encoding: chunked\r\n",
    b"Transfer-Encoding: gzip, chunked\r\n", b"Content-Encoding: gzip\r\n", b"X: " + b"a" * 9000 + b"\r\n",
    b"\r\n", b"5\r\nhello\r\n0\r\n\r\n", b"zz\r\n", b'{"prompt": "a", "max_tokens": 2}', b"\x00\xff", b" \t",
])


def test_any_head_and_framing_gets_an_answer_or_a_close(llm_server, caplog):
    caplog.set_level(logging.WARNING)
    with llm_server(ttft_ms=0, tpot_ms=0) as server:

        @settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
        @given(st.lists(HEAD_PIECES | st.binary(max_size=40), max_size=10))
        def check(pieces):
            status = _answer(server.port, b"".join(pieces))
            assert status == 0 or 200 <= status < 500, status

        check()
        assert _post(server.port, "/v1/completions", b'{"prompt": "a", "max_tokens": 2}') == 200  # still serving
    _no_tracebacks(caplog)
