"""An OpenAI-compatible streaming stub of known timing, independent of proctor (standard library only).

`python bench/llm_stub.py --ttft-ms 40 --tpot-ms 4 --tokens 16 [--port 0] [--log FILE] [--close]
[--backlog N]`: answers `POST .../completions` and `.../chat/completions` with an SSE stream (chunked
HTTP/1.1, keep-alive unless `--close`) of `--tokens` tokens, one per chunk, the first `--ttft-ms`
after the request's last byte was read and each further one `--tpot-ms` after the previous one's
deadline, then a finish chunk, a usage record and `[DONE]`; `GET /v1/models` lists model "stub", `GET /health`
answers 200. One
thread per connection, each write at its deadline with `time.sleep` (no event-loop timer rounding).
It prints `listening PORT` once bound. With `--log FILE` it writes, at SIGTERM or SIGINT, one line
per request: `arrival first_written last_written` in ns of CLOCK_MONOTONIC (the clock every process
of the machine shares): when its body was read, when its first token's chunk and its last byte were
written; the truth of a client's TTFT is --ttft-ms, what the stub adds on top (its lateness) is
`first_written - arrival - ttft`.

It imports nothing from proctor, so what it measures is not proctor's own server seen by its own
client (bench/llm_client.py starts a fresh one per client run).
"""

from __future__ import annotations

import argparse
import json
import signal
import socket
import sys
import threading
import time

MAX_HEAD = 64 << 10
MAX_BODY = 16 << 20


def _now() -> int:
    return time.monotonic_ns()


def _sleep_until(t_ns: int) -> None:
    left = t_ns - _now()
    if left > 0:
        time.sleep(left / 1e9)


class Stub:
    def __init__(self, args: argparse.Namespace) -> None:
        self.ttft_ns = int(args.ttft_ms * 1e6)
        self.tpot_ns = int(args.tpot_ms * 1e6)
        self.tokens = args.tokens
        self.close = args.close
        self.lock = threading.Lock()
        self.records: list[tuple[int, int, int]] = []

    def stream(self, conn: socket.socket, arrival: int, chat: bool) -> tuple[int, int]:
        def chunk(obj: object) -> bytes:
            data = b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"
            return b"%x\r\n%s\r\n" % (len(data), data)

        head = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"
                + (b"Connection: close\r\n" if self.close else b"") + b"\r\n")
        conn.sendall(head)  # the head at once, as servers send it; the first token comes at its deadline
        first = 0
        for k in range(self.tokens):
            piece = {"delta": {"content": f"w{k} "}} if chat else {"text": f"w{k} "}
            out = chunk({"id": "s", "object": "text_completion", "choices": [{"index": 0, **piece}]})
            _sleep_until(arrival + self.ttft_ns + k * self.tpot_ns)
            conn.sendall(out)
            if not first:
                first = _now()
        end = chunk({"choices": [{"index": 0, "text": "", "finish_reason": "length"}]})
        end += chunk({"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": self.tokens,
                                               "total_tokens": self.tokens + 1}})
        end += b"%x\r\ndata: [DONE]\n\n\r\n0\r\n\r\n" % len(b"data: [DONE]\n\n")
        conn.sendall(end)
        return first, _now()

    def serve(self, conn: socket.socket) -> None:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        buf = b""
        with conn:
            while True:
                while b"\r\n\r\n" not in buf:
                    got = conn.recv(65536)
                    if not got or len(buf) > MAX_HEAD:
                        return
                    buf += got
                head, _, buf = buf.partition(b"\r\n\r\n")
                lines = head.split(b"\r\n")
                length = 0
                for line in lines[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length" and value.strip().isdigit():
                        length = min(int(value), MAX_BODY)
                while len(buf) < length:
                    got = conn.recv(65536)
                    if not got:
                        return
                    buf += got
                arrival = _now()
                buf = buf[length:]
                target = lines[0].split(b" ")[1] if len(lines[0].split(b" ")) > 1 else b""
                if lines[0].startswith(b"GET") and target.endswith(b"/health"):
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
                    continue
                if lines[0].startswith(b"GET") and target.endswith(b"/models"):
                    body = b'{"object":"list","data":[{"id":"stub","object":"model","owned_by":"stub"}]}'
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                                 % (len(body), body))
                    continue
                if not target.endswith(b"completions"):
                    conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
                    continue
                try:
                    first, last = self.stream(conn, arrival, target.endswith(b"chat/completions"))
                except (BrokenPipeError, ConnectionResetError):
                    return  # the client hung up mid-stream (a peer drops what is in flight as its time ends)
                with self.lock:
                    self.records.append((arrival, first, last))
                if self.close:
                    return


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--ttft-ms", type=float, default=40.0)
    ap.add_argument("--tpot-ms", type=float, default=4.0)
    ap.add_argument("--tokens", type=int, default=16)
    ap.add_argument("--backlog", type=int, default=128)
    ap.add_argument("--close", action="store_true", help="Connection: close after each response")
    ap.add_argument("--log", default="")
    args = ap.parse_args()
    stub = Stub(args)
    lsock = socket.socket()
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind(("127.0.0.1", args.port))
    lsock.listen(args.backlog)

    def stop(*_: object) -> None:
        if args.log:
            with open(args.log, "w") as f, stub.lock:
                f.writelines(f"{a} {b} {c}\n" for a, b, c in stub.records)
        sys.stdout.flush()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"listening {lsock.getsockname()[1]}", flush=True)
    while True:
        conn, _ = lsock.accept()
        threading.Thread(target=stub.serve, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    main()
