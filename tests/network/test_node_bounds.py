"""A node reads no more than its own bound (issue 22, class 2): a declared body over it gets 413
before a byte is read, a chunked one is refused once it passes the bound; the node's memory stays
near where it was, and it keeps serving."""

from __future__ import annotations

import socket
import urllib.request
from pathlib import Path

from test_network_sut import start_node

from proctor.serving.node_server import MAX_REQUEST_SAMPLES


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _status(sock: socket.socket) -> int:
    head = b""
    while b"\r\n" not in head:
        part = sock.recv(4096)
        if not part:
            break
        head += part
    return int(head.split()[1]) if head.startswith(b"HTTP/") else 0


def test_oversized_requests_are_refused_without_being_buffered():
    node = start_node("digits:backend=numpy")
    try:
        port = int(node.url.rsplit(":", 1)[1])
        before = _peak_rss_mb(node.proc.pid)
        infer = b"POST /v2/models/digits/infer HTTP/1.1\r\nHost: x\r\nInference-Header-Content-Length: 10\r\n"
        with socket.create_connection(("127.0.0.1", port), timeout=30) as s:  # declared: refused unread
            s.sendall(infer + b"Content-Length: 300000000\r\n\r\n")
            assert _status(s) == 413
        cap = MAX_REQUEST_SAMPLES * 64 * 4 + (1 << 20)  # 64 float32 inputs per digits sample
        with socket.create_connection(("127.0.0.1", port), timeout=30) as s:  # chunked: refused past the cap
            s.sendall(infer + b"Transfer-Encoding: chunked\r\n\r\n")
            piece = b"%x\r\n" % (1 << 20) + b"\0" * (1 << 20) + b"\r\n"
            sent = 0
            try:
                while sent < cap + (64 << 20):
                    s.sendall(piece)
                    sent += 1 << 20
            except (BrokenPipeError, ConnectionResetError):
                pass
            s.settimeout(30)
            try:
                status = _status(s)
            except ConnectionResetError:
                status = 413  # refused and closed before the client read the answer
            print("chunked status", status)
            assert status in (413, 0)
        grew = _peak_rss_mb(node.proc.pid) - before
        print(f"peak RSS before {before:.0f} MB, grew {grew:.0f} MB, cap {cap >> 20} MiB")
        assert grew < cap / (1 << 20) + 48, f"peak RSS grew {grew:.0f} MB"
        with urllib.request.urlopen(f"{node.url}/v2/health/ready", timeout=30) as resp:  # still serving
            assert resp.status == 200
    finally:
        node.stop()
