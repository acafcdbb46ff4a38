"""How truly LLM clients measure a server of known timing: proctor beside a bare socket, AIPerf and GuideLLM.

By default (bench/llm_compare.py): every client by its own process against a fresh independent stub
per run (bench/llm_stub.py, standard library only: TTFT --ttft-ms, --tpot-ms per further token,
--tokens tokens), at each rate of --cases (default 4 and 50 req/s, Poisson), --repeat times with the
clients' order rotated; `--together` adds proctor and the bare client at once at half the rate each.
It prints each client's TTFT p50 and p99 over the truth and over the bare client of the same repeat,
the same less the stub's own time per request (paired by send time: what is the client's), latency
p50/p99, and the CPU of each client's process tree over the requests' window; then the medians
against the goal (<= 0.2 ms over bare at p50 and p99). `--peer-python PATH` (repeatable, a venv's
interpreter with aiperf or guidellm) adds that peer. `--url URL` runs the same against any server
(the truth unknown: figures over the bare client), `--serve NAME` against one the bench starts.

    python bench/llm_client.py [--cases 4,50] [--seconds 10] [--repeat 3] [--together]
        [--peer-python /venvs/aiperf/bin/python] [--peer-python /venvs/guidellm/bin/python] [--json]
    python bench/llm_client.py --url http://127.0.0.1:8000 [--model NAME]

`--proctor-server` (also implied by --breakdown): the older table against `proctor serve llm`, below.

Starts `proctor serve llm` in its own process with injected timing (default: TTFT 40 ms, 4 ms per
further token, 16 tokens in SSE chunks of 1-3, a usage record) and drives it with proctor's
engine at 4 req/s and 50 req/s (Server scenario) and at 64 concurrent streams (Offline, the SUT
capped at 64 in flight). For each case: proctor's TTFT and TPOT p50 against the truth (error in
%), the client's CPU use (user+system time of this process over the wall time, in % of one core),
the achieved against the requested rate, the issue lateness p99, and the token count check.

GuideLLM and AIPerf rows (`--peers-python PATH`, an interpreter with guidellm, aiperf and
transformers): each case runs proctor, then GuideLLM, then AIPerf back to back against the same
server, so they see the same machine load. Both need a Hugging Face tokenizer: a byte-level BPE one
is written locally (tests.support.hf_tiny, no download) and given as an absolute folder path
(AIPerf refuses a local folder under HF_HUB_OFFLINE=1, so it is not set). AIPerf is told to use
the server's token counts (`--use-server-token-count`; it re-tokenizes the text otherwise). The
rules' TPOT is GuideLLM's and AIPerf's ITL column (GuideLLM's "TPOT" is latency / tokens).

TTFT is proctor's by the rules (from the scheduled issue time, so its own issue lateness counts
against it); `send ms` is TTFT from the moment the request was sent, which is what the peers
report (for them both columns are the same).

CPU % is the client's process tree (utime+stime from /proc) over the window in which the server
saw its requests arrive (the server's /stats), so start-up and teardown are left out for all.
`late99` is proctor's issue lateness p99; for the peers, their own nearest metric: GuideLLM's
request_dispatch_delay p99, AIPerf's credit_to_start_latency p99. `--sweep 100,200,400` adds rate
cases and prints, per client, the highest rate with late99 under 1 ms and 95 % of it achieved.

`srv50us`/`srv99us`: the server's own lateness writing each first content chunk after its
deadline (arrival + TTFT, arrival = the request's first byte read), from `GET /stats/lateness`,
reset before each client's case: the part of a client's TTFT error that is the server's, the same
for every client. `--raw` adds a bare blocking-socket client per rate case (no client overhead).

Scale (`sN` cases): N long streams held by this one asyncio client process against a second
server with long, chunked streams (`--scale-tokens 1000 --scale-tpot-ms 8 --scale-chunk 100`: 8 s
per stream, a chunk every 0.8 s), in the Server scenario at N / stream length req/s for at least
three stream lengths; `open` is the most streams in flight the client saw (its send and end
times), `fault` faults + errors (must be 0), CPU% over the whole run.

`--breakdown RATE` instead times every hop of proctor's first token at one rate, from the
per-request timestamps the transports fill (`OpenAISUT.record_times`, `RequestTimes`): with
`--http aiohttp` schedule -> issue_query -> loop thread -> request task -> send stamp -> response
head / first body chunk in the task -> first token to the sink -> engine stamp; with the raw
transport (the default) schedule -> issue_query -> send stamp -> sendmsg returned -> first byte
read -> first token to the sink -> engine stamp. `--http raw,aiohttp` gives a proctor row per
transport.

Each case runs `--seconds` (default 10): on a shared machine the figures are noisy; the load
average is printed with the table.

With `--url URL` (vLLM, SGLang, `proctor serve llm` started apart, ...) the bare client and
proctor send the same request bodies. Only completions endpoints over http:// with chunked streams
(what vLLM, SGLang and llama.cpp's server send). `--serve NAME --serve-python PY` starts a server
itself on loopback, with a tiny random-weight model written locally (nothing downloaded), runs the
comparison against it and stops it (also on SIGTERM): `transformers` is `transformers serve` (PY: an interpreter with
transformers[serving] and CPU torch; model: tests.support.hf_tiny, HF_HUB_OFFLINE=1); `llamacpp` is
llama.cpp's server from llama-cpp-python (PY: one with llama-cpp-python[server] and gguf; model: a
GGUF from tests.support.gguf_tiny). llama.cpp's server sends no usage record, so it is started with
`--logits_all true` and proctor asks for per-token logprobs (`logprobs=1`): exact counts (give
`--sut-param logprobs=1` too against one started apart with `--url`). On CPU the tiny GGUF serves one
request at a time; pick rates it sustains with `--cases`.

    python bench/llm_client.py --proctor-server [--seconds 10] [--cases 4,50,c64,s1000,s2000,s4000] [--raw]
        [--peers-python PATH] [--sweep R1,R2] [--breakdown RATE] [--http raw,aiohttp] [--json]
    python bench/llm_client.py --serve transformers|llamacpp --serve-python VENV/bin/python [--cases 1,4]
        [--repeat 3] [--together]
    python bench/llm_client.py --url http://127.0.0.1:8080 --sut-param logprobs=1   # llama.cpp started apart
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import asdict
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import orjson

from proctor.clients.http1 import RX_ANC, SO_TIMESTAMPNS, rx_time
from proctor.clients.openai import from_params
from proctor.clients.openai_config import endpoint_url
from proctor.clients.preflight import models_url
from proctor.clients.stream import request_headers
from proctor.loadgen.completion import ID_GENERATION_BITS
from proctor.loadgen.engine import run_test
from proctor.loadgen.records import NOT_SET
from proctor.loadgen.settings import LogOutputSettings, LogSettings, TestSettings
from proctor.loadgen.types import Scenario, TestMode

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root, for tests.support
from tests.support import gguf_tiny, hf_tiny  # noqa: E402
from tests.support.child_server import ServerStartError, child_server, free_port  # noqa: E402


def scale_truth(args: argparse.Namespace) -> argparse.Namespace:
    """The scale server's settings as the truth of its cases: long streams, big chunks, so the
    server is not the bottleneck while one client process holds thousands of streams."""
    return argparse.Namespace(**{**vars(args), "tokens": args.scale_tokens, "tpot_ms": args.scale_tpot_ms,
                                 "chunk": args.scale_chunk})


def start_server(args: argparse.Namespace) -> tuple[subprocess.Popen[str], int]:
    cmd = [sys.executable, "-m", "proctor", "serve", "llm", "--port", "0", "--ttft-ms", str(args.ttft_ms),
           "--tpot-ms", str(args.tpot_ms), "--chunk", args.chunk]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    SERVER_PID[0] = proc.pid
    assert proc.stdout is not None
    line = proc.stdout.readline()
    m = re.search(r":(\d+) ", line)
    if not m:
        proc.kill()
        raise SystemExit(f"the server did not start: {line!r}")
    return proc, int(m.group(1))


def server_lateness(port: int, reset: bool = False) -> dict[str, Any]:
    """The server's own emission lateness since the last reset (`reset`: start a new window)."""
    req = urllib.request.Request(f"http://127.0.0.1:{port}/stats/" + ("reset" if reset else "lateness"),
                                 method="POST" if reset else "GET")
    with urllib.request.urlopen(req, timeout=5) as r:
        return dict(orjson.loads(r.read()))


def with_server_lateness(port: int, make: Any) -> Any:
    """Run one client's case between a reset and a read of the server's lateness; add it to the row."""
    server_lateness(port, reset=True)
    r = make()
    if r is not None:
        lat = server_lateness(port)
        for part in ("first", "later"):
            lat[part] = {k: float("nan") if v is None else v for k, v in lat[part].items()}
        r["srv_first_p50_us"], r["srv_first_p99_us"] = lat["first"]["p50_us"], lat["first"]["p99_us"]
        r["srv_later_p99_us"], r["srv_early"] = lat["later"]["p99_us"], lat["first"]["early"] + lat["later"]["early"]
        r["srv_timer"] = lat["timer"]
    return r


TICK = os.sysconf("SC_CLK_TCK")
SERVER_PID = [0]  # the server process, sampled alongside each client


def proc_cpu_s(pid: int) -> float:
    """utime+stime (s) of one process (all its threads), from /proc."""
    raw = Path(f"/proc/{pid}/stat").read_bytes()
    f = raw[raw.rindex(b")") + 2:].split()
    return (int(f[11]) + int(f[12])) / TICK


def tree_cpu_s(root: int) -> float:
    """utime+stime (s) of a process and its live descendants, from /proc."""
    parent: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            raw = Path(f"/proc/{d}/stat").read_bytes()
        except OSError:
            continue
        f = raw[raw.rindex(b")") + 2:].split()
        parent[int(d)], ticks[int(d)] = int(f[1]), int(f[11]) + int(f[12])
    keep, frontier = {root}, [root]
    while frontier:
        p = frontier.pop()
        kids = [c for c, pp in parent.items() if pp == p and c not in keep]
        keep.update(kids)
        frontier.extend(kids)
    return sum(ticks.get(p, 0) for p in keep) / TICK


class CpuWindow:
    """Samples a client's CPU and the server's request count; CPU % over the window with requests."""

    def __init__(self, pid: int, port: int, tree: bool = True) -> None:
        """tree: count the descendants too (a peer's worker processes); False for this process,
        whose child is the server."""
        self.pid, self.port = pid, port
        self.cpu_s = tree_cpu_s if tree else proc_cpu_s
        self.samples: list[tuple[float, int, float, float]] = []  # time, requests, client CPU, server CPU
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def requests(self) -> int:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/stats", timeout=5) as r:
            return int(orjson.loads(r.read()).get("requests", 0))

    def _run(self) -> None:
        while not self._stop.wait(0.25):
            with contextlib.suppress(OSError, ValueError):
                self.samples.append(
                    (time.monotonic(), self.requests(), self.cpu_s(self.pid), proc_cpu_s(SERVER_PID[0]))
                )

    def __enter__(self) -> CpuWindow:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def percent(self, col: int = 2) -> float:
        """Client (col 2) or server (col 3) CPU % of one core, from the sample before the first new
        request to the last one."""
        s = self.samples
        if len(s) < 3:
            return float("nan")
        r0 = s[0][1]
        first = next((k for k, x in enumerate(s) if x[1] > r0), None)
        last = max((k for k in range(1, len(s)) if s[k][1] > s[k - 1][1]), default=None)
        if first is None or last is None or last <= first - 1:
            return float("nan")
        a, b = s[max(first - 1, 0)], s[last]
        return 100 * (b[col] - a[col]) / (b[0] - a[0]) if b[0] > a[0] else float("nan")


def openai_params(args: argparse.Namespace, url: str) -> dict[str, str]:
    """proctor's openai SUT params for the bench's requests: 1024 synthetic 32-word prompts asking
    --tokens each, plus --sut-param and what a --serve server needs for exact counts (logprobs=1)."""
    return {"url": url, "synthetic": "1024", "in": "const:32", "out": f"const:{args.tokens}", **args.sut_params}


def request_bodies(args: argparse.Namespace) -> list[bytes]:
    """The bodies proctor's SUT sends to args.url, built by its own config (no request made): the bare
    client sends the same bytes, `logprobs` included where proctor asks for them (llama.cpp: the
    server's first token comes later with them, so a body without them would favour the bare client)."""
    sut, _ = from_params(**openai_params(args, args.url), model=args.model, preflight="0")
    try:
        return [sut.config.body(s) for s in sut.qsl.samples]
    finally:
        sut.close()


def proctor_case(port: int, args: argparse.Namespace, label: str, rate: float, streams: int,
                 keep: bool = False, http: str = "raw", url: str = "") -> Any:
    """One proctor row; keep: (row, run output, each request's RequestTimes by response id). `url`: any
    server (the `--url` mode: no server CPU window, the truth unknown)."""
    params = {**openai_params(args, url or f"http://127.0.0.1:{port}"), "http": http}
    if url:
        params["model"] = args.model
    if streams:
        params["concurrency"] = str(streams)
    sut, qsl = from_params(**params)
    per_req_s = (args.ttft_ms + (args.tokens - 1) * args.tpot_ms) / 1e3
    times = sut.record_times()  # each request's send time: TTFT from the send, as the peers measure it
    if streams:
        expected = streams / per_req_s
        settings = TestSettings(scenario=Scenario.OFFLINE, mode=TestMode.PERFORMANCE_ONLY,
                                use_token_latencies=True, offline_expected_qps=expected,
                                min_duration_ms=int(args.seconds * 1000 / 1.1), min_query_count=1)
        requested = expected
    else:
        settings = TestSettings(scenario=Scenario.SERVER, mode=TestMode.PERFORMANCE_ONLY,
                                use_token_latencies=True, server_target_qps=rate,
                                min_duration_ms=int(args.seconds * 1000), min_query_count=1)
        requested = rate
    t0, c0 = time.monotonic(), os.times()
    window = contextlib.nullcontext(None) if url else CpuWindow(os.getpid(), port, tree=False)
    with tempfile.TemporaryDirectory() as out_dir, window as cpu:
        out = run_test(sut, qsl, settings, LogSettings(LogOutputSettings(outdir=out_dir)), audit_config=None)
    c1 = os.times()
    run_cpu_pct = 100 * (c1.user + c1.system - c0.user - c0.system) / (time.monotonic() - t0)
    sut.close()
    rec, res = out.records, out.result
    assert rec is not None and res is not None
    n = rec.n_samples_issued
    ntok = rec.sample_n_tokens[:n]
    keys = sorted(i for i, t in times.items() if t.sent)
    sent = np.array([times[i].sent for i in keys], np.int64)
    ids = np.array(keys, np.int64) & ((1 << ID_GENERATION_BITS) - 1)  # response id -> sample position
    first, done = rec.sample_first_token_ns[ids], rec.sample_done_ns[ids]
    ok = (first != NOT_SET) & (done != NOT_SET)
    ttft_send = float(np.median(first[ok] - sent[ok])) / 1e6
    ended = done != NOT_SET
    inflight = max_in_flight(sent[ended], done[ended])
    if streams:
        ttft = ttft_send
        tpot = float(np.median((done[ok] - first[ok]) / np.maximum(ntok[ids][ok] - 1, 1))) / 1e6
        achieved = n / res.max_latency_s if res.max_latency_s else 0.0
        late = float("nan")
    else:
        ttft, tpot = res.ttft.percentiles[0.5] / 1e6, res.tpot.percentiles[0.5] / 1e6
        achieved = res.completed_samples_per_sec
        late = res.issue_lateness_p99_ns / 1e6
    row = {
        "client": f"proctor/{http}", "case": label, "requests": n,
        "ttft_ms": ttft, "ttft_err_pct": 100 * (ttft - args.ttft_ms) / args.ttft_ms,
        "ttft_send_ms": ttft_send, "ttft_send_err_pct": 100 * (ttft_send - args.ttft_ms) / args.ttft_ms,
        "tpot_ms": tpot, "tpot_err_pct": 100 * (tpot - args.tpot_ms) / args.tpot_ms,
        # long streams: the whole run (streams go on long after the last request arrived)
        "cpu_pct": run_cpu_pct if label.endswith("long") or cpu is None else cpu.percent(),
        "server_cpu_pct": cpu.percent(3) if cpu is not None else float("nan"),
        "requested": requested, "achieved": achieved,
        "late_p99_ms": late, "tokens_exact": bool(np.all(ntok == args.tokens)),
        "faults": sum(sut.faults.values()), "errors": out.errors, "inflight": inflight,
    }
    return (row, out, times) if keep else row


def bare_ttfts(url: str, bodies: list[bytes], rate: float, seconds: float, per_req_s: float,
               warm: bool = False) -> np.ndarray:
    """A bare client on any http:// completions endpoint: blocking sockets, one thread each,
    keep-alive, requests at `rate` (Poisson) for `seconds`, each body in turn; each request's TTFT (ms)
    from the send to the recv that holds the first `data: {` event (NaN: failed): column 0 stamped
    when that recv returned (no client overhead beyond a syscall and the thread's wake-up), column 1
    at the kernel's receive time of its bytes (SO_TIMESTAMPNS, as proctor's raw transport stamps; the
    recv's time where the OS gives none); column 2 the latency, from the send to the recv that ended
    the stream; column 3 the send (perf_counter_ns); column 4 the send's lateness (ms after the request's
    place in the schedule: the thread's wake-up from its sleep, what any client that keeps a schedule pays).
    The server's own lateness is in all. `warm`: each thread first sends one request it
    does not time (the others' warm-up), before the schedule starts."""
    parts = urlsplit(endpoint_url(url, "completions"))
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    extra = "".join(f"{k}: {v}\r\n" for k, v in request_headers().items() if k != "Content-Type")
    heads = [(f"POST {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\nContent-Type: application/json\r\n{extra}"
              f"Content-Length: {len(b)}\r\n\r\n").encode() + b for b in bodies]
    n_req = max(1, int(rate * seconds))
    # threads enough that a request all but never waits for its thread's previous one to end (that wait
    # would count as the thread's lateness): 2 at 4 req/s delayed about 6 % of requests
    n_threads = max(8, int(rate * per_req_s * 3) + 1)
    ttft = np.full((n_req, 5), np.nan)
    # Poisson arrivals, as proctor's Server scenario issues them (a burst meets the server's queue alike)
    at = np.cumsum(np.random.default_rng(0).exponential(1 / rate, n_req))
    t0 = [0.0]  # set once every thread connected (and warmed up): the schedule starts then
    ready = threading.Barrier(n_threads + 1, action=lambda: t0.__setitem__(0, time.perf_counter() + 0.05))

    def connect() -> socket.socket:
        s = socket.create_connection((host, port), timeout=60)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if SO_TIMESTAMPNS:
            s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        return s

    def stale(s: socket.socket) -> bool:
        """EOF waiting on an idle connection (select first: a socket with a timeout would wait in recv)."""
        try:
            return bool(select.select([s], [], [], 0)[0]) and s.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def warm_up(s: socket.socket) -> None:
        s.sendall(heads[0])
        buf = b""
        while not buf.endswith(b"0\r\n\r\n"):
            got = s.recv(65536)
            if not got:
                raise OSError("closed during the warm-up")
            buf += got

    def worker(j: int) -> None:
        try:
            s = connect()
            if warm:
                warm_up(s)
        except OSError:
            return
        finally:
            ready.wait()
        try:
            for k in range(j, n_req, n_threads):
                due = t0[0] + at[k]
                delay = due - time.perf_counter()
                if delay > 0:
                    time.sleep(delay)
                buf, first, first_k = b"", 0, 0
                request = heads[k % len(heads)]
                if stale(s):  # the server closed it while idle (uvicorn: after 5 s): a new one, before the stamp
                    s.close()
                    s = connect()
                sent = time.perf_counter_ns()
                s.sendall(request)
                while not buf.endswith(b"0\r\n\r\n"):  # the chunked stream's end
                    got, anc, _, _ = s.recvmsg(65536, RX_ANC)
                    if not got:  # the server closed: this request ends here, the next one reconnects
                        s.close()
                        s = connect()
                        break
                    if not first and b"data: {" in buf[-8:] + got:
                        first = time.perf_counter_ns()
                        first_k = rx_time(anc, sent, first)
                    buf += got
                if first and buf.startswith(b"HTTP/1.1 200"):
                    ttft[k] = ((first - sent) / 1e6, (first_k - sent) / 1e6, (time.perf_counter_ns() - sent) / 1e6, sent,
                               sent / 1e6 - due * 1e3)
        except OSError:
            pass
        finally:
            s.close()

    threads = [threading.Thread(target=worker, args=(j,), daemon=True) for j in range(n_threads)]
    for t in threads:
        t.start()
    ready.wait()
    for t in threads:
        t.join(timeout=seconds + 120)
    return ttft


def raw_case(port: int, args: argparse.Namespace, label: str, rate: float) -> dict[str, Any]:
    """The bare client's row against the bench's own server (`bare_ttfts`)."""
    n_req = max(1, int(rate * args.seconds))
    per_req_s = (args.ttft_ms + (args.tokens - 1) * args.tpot_ms) / 1e3
    body = orjson.dumps({"model": "proctor-tiny", "prompt": "ba " * 32, "max_tokens": args.tokens, "stream": True,
                         "stream_options": {"include_usage": True}})
    ttft = bare_ttfts(f"http://127.0.0.1:{port}", [body], rate, args.seconds, per_req_s)[:, 0]
    ok = ttft[~np.isnan(ttft)]
    med = float(np.median(ok)) if ok.size else float("nan")
    return {"client": "raw", "case": label, "requests": int(ok.size), "ttft_ms": med,
            "ttft_err_pct": 100 * (med - args.ttft_ms) / args.ttft_ms, "ttft_send_ms": med,
            "ttft_send_err_pct": 100 * (med - args.ttft_ms) / args.ttft_ms, "tpot_ms": float("nan"),
            "tpot_err_pct": float("nan"), "cpu_pct": float("nan"), "server_cpu_pct": float("nan"),
            "requested": rate, "achieved": float("nan"), "late_p99_ms": float("nan"),
            "tokens_exact": True, "faults": n_req - int(ok.size), "errors": 0}


# (stage, from, to): RequestTimes fields, "sched" and "stamp" (the engine's schedule and first-token
# stamp) and "first_byte_ttft" (the first body bytes less the injected TTFT)
STAGES = {
    "aiohttp": (
        ("schedule -> issue_query", "sched", "issued"),
        ("issue_query -> loop thread", "issued", "queued"),
        ("loop -> request task", "queued", "started"),
        ("task -> send stamp", "started", "sent"),
        ("send -> response head read", "sent", "head"),
        ("send -> first chunk in the task, - TTFT", "sent", "first_byte_ttft"),
        ("first chunk -> first token to the sink", "first_byte", "first_token"),
        ("first token to the sink -> engine stamp", "first_token", "stamp"),
    ),
    "raw": (
        ("schedule -> issue_query", "sched", "issued"),
        ("issue_query -> send stamp", "issued", "sent"),
        ("send stamp -> issue returned (sendmsg)", "sent", "written"),
        ("written -> first byte read, - TTFT", "written", "first_byte_ttft"),
        ("first byte -> first token to the sink", "first_byte", "first_token"),
        ("first token to the sink -> engine stamp", "first_token", "stamp"),
    ),
}


def breakdown(port: int, args: argparse.Namespace, rate: float) -> list[tuple[str, float, float, float]]:
    """One proctor case at `rate`, every hop of the first token read from the per-request
    timestamps the transport filled: [(stage, p50 us, p90 us, p99 us)], for the transport `--http` names
    first. The `-> first byte` stage holds the injected TTFT (subtracted), the server's lateness and
    the loopback delivery."""
    http = args.http.split(",")[0]
    row, out, times = proctor_case(port, args, f"{rate:g} req/s", rate, 0, keep=True, http=http)
    rec = out.records
    mask = (1 << ID_GENERATION_BITS) - 1
    ttft_ns = int(args.ttft_ms * 1e6)
    stamps: list[dict[str, int]] = []
    for i, rt in times.items():
        pos = i & mask
        st = {hop: t for hop, t in asdict(rt).items() if t}  # RequestTimes' named hops that were reached
        st["sched"] = int(rec.query_scheduled_ns[pos])
        if rec.sample_first_token_ns[pos] != NOT_SET:
            st["stamp"] = int(rec.sample_first_token_ns[pos])
        if "first_byte" in st:
            st["first_byte_ttft"] = st["first_byte"] - ttft_ns
        stamps.append(st)
    res = []
    for name, a, b in STAGES[http]:
        d = np.array([st[b] - st[a] for st in stamps if a in st and b in st], float)
        res.append((name, *(float(np.percentile(d, q)) / 1e3 if d.size else float("nan") for q in (50, 90, 99))))
    print(f"breakdown of http={http}: TTFT error {row['ttft_err_pct']:+.2f}% from the schedule, "
          f"{row['ttft_send_err_pct']:+.2f}% from the send", file=sys.stderr)
    return res


def max_in_flight(starts: np.ndarray, ends: np.ndarray) -> int:
    """The most streams open at once, from each stream's send and end times (the client's own)."""
    ev = np.concatenate([np.stack([starts, np.ones_like(starts)], 1), np.stack([ends, -np.ones_like(ends)], 1)])
    ev = ev[np.lexsort((ev[:, 1], ev[:, 0]))]  # at a tie an end comes before a start
    return int(np.max(np.cumsum(ev[:, 1]))) if ev.size else 0


def scale_rows(args: argparse.Namespace, counts: list[int]) -> list[dict[str, Any]]:
    """Thousands of concurrent streams held by this one asyncio client process, against a server of
    its own with long, chunked streams: the Server scenario at N / stream length req/s (Poisson),
    so about N streams are open once one stream length has passed, without an Offline burst of N
    requests at once that no Python server answers within its TTFT. Each case runs at least three
    stream lengths; `open` is the most streams in flight the client saw."""
    truth = scale_truth(args)
    per_req_s = (truth.ttft_ms + (truth.tokens - 1) * truth.tpot_ms) / 1e3
    truth.seconds = max(args.seconds, 3 * per_req_s)
    proc, port = start_server(truth)
    rows = []
    try:
        for n in counts:
            for http in args.http.split(","):
                rows.append(with_server_lateness(
                    port, lambda n=n, h=http: proctor_case(port, truth, f"{n} long", n / per_req_s, 0, http=h)))
            print(f"done: {n} long streams", file=sys.stderr)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return rows


# --- the peers ------------------------------------------------------------------------------------


def peer_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # the peers' own venv, not proctor's source tree
    return env


def run_peer(cmd: list[str], port: int, cwd: str, log: Path) -> tuple[int, tuple[float, float]]:
    """Run a peer to its end (bounded), sampling CPU; (exit code, (its CPU %, the server's CPU %))."""
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, cwd=cwd, env=peer_env(), stdout=out, stderr=subprocess.STDOUT)
        with CpuWindow(proc.pid, port) as cpu:
            try:
                rc = proc.wait(timeout=600)
            except subprocess.TimeoutExpired:
                proc.kill()
                rc = proc.wait(timeout=30)
    return rc, (cpu.percent(), cpu.percent(3))


def guidellm_row(args: argparse.Namespace, port: int, label: str, rate: float, streams: int,
                 tok: str, work: Path) -> dict[str, Any] | None:
    exe = str(Path(args.peers_python).parent / "guidellm")
    out = work / "guidellm.json"
    profile = f"kind=concurrent,streams={streams}" if streams else f"kind=poisson,rate={rate:g}"
    cmd = [exe, "run", "--backend",
           f"kind=openai_http,target=http://127.0.0.1:{port},model=proctor-tiny,request_format=/v1/completions",
           "--profile", profile, "--data", f"kind=synthetic_text,prompt_tokens=32,output_tokens={args.tokens}",
           "--tokenizer", f"kind=huggingface_auto,model={tok}",
           "--constraint", f"kind=max_duration,seconds={args.seconds:g}",
           "--output", f"kind=json,path={out}", "--disable-console-interactive"]
    rc, cpu = run_peer(cmd, port, str(work), work / "guidellm.log")
    if rc != 0 or not out.is_file():
        print(f"guidellm {label}: exit {rc}; see {work / 'guidellm.log'}", file=sys.stderr)
        return None
    m = orjson.loads(out.read_bytes())["benchmarks"][0]["metrics"]

    def ok(key: str) -> dict[str, Any]:
        """A metric's statistics over the successful requests (NaN where GuideLLM left it out)."""
        got = (m.get(key) or {}).get("successful")
        nan = float("nan")
        return dict(got) if got else {"count": 0, "median": nan, "mean": nan, "min": nan, "max": nan,
                                      "percentiles": {"p99": nan}}

    ttft, itl, ntok = ok("time_to_first_token_ms"), ok("inter_token_latency_ms"), ok("output_token_count")
    return row("guidellm", label, args, int(ttft["count"]), float(ttft["median"]), float(itl["median"]), cpu,
               rate or float("nan"), float(ok("requests_per_second")["mean"]),
               1e3 * float(ok("request_dispatch_delay")["percentiles"]["p99"]),
               ntok["min"] == ntok["max"] == args.tokens)


def aiperf_row(args: argparse.Namespace, port: int, label: str, rate: float, streams: int,
               tok: str, work: Path) -> dict[str, Any] | None:
    exe = str(Path(args.peers_python).parent / "aiperf")
    art = work / "aiperf"
    load = ["--concurrency", str(streams)] if streams else ["--request-rate", f"{rate:g}"]
    cmd = [exe, "profile", "--model", "proctor-tiny", "--url", f"http://127.0.0.1:{port}",
           "--endpoint-type", "completions", "--streaming", "--tokenizer", tok, "--use-server-token-count",
           "--use-legacy-max-tokens", "--synthetic-input-tokens-mean", "32", "--synthetic-input-tokens-stddev",
           "0", "--output-tokens-mean", str(args.tokens), "--output-tokens-stddev", "0", *load,
           "--benchmark-duration", f"{args.seconds:g}", "--artifact-dir", str(art)]
    rc, cpu = run_peer(cmd, port, str(work), work / "aiperf.log")
    res = art / "profile_export_aiperf.json"
    if rc != 0 or not res.is_file():
        print(f"aiperf {label}: exit {rc}; see {work / 'aiperf.log'}", file=sys.stderr)
        return None
    d = orjson.loads(res.read_bytes())
    osl = d["output_sequence_length"]
    return row("aiperf", label, args, int(d["time_to_first_token"]["count"]),
               float(d["time_to_first_token"]["p50"]), float(d["inter_token_latency"]["p50"]), cpu,
               rate or float("nan"), float(d["request_throughput"]["avg"]),
               float(d["credit_to_start_latency"]["p99"]), osl["min"] == osl["max"] == args.tokens)


def row(client: str, label: str, args: argparse.Namespace, n: int, ttft: float, tpot: float,
        cpu: tuple[float, float],
        requested: float, achieved: float, late: float, exact: bool) -> dict[str, Any]:
    return {
        "client": client, "case": label, "requests": n,
        "ttft_ms": ttft, "ttft_err_pct": 100 * (ttft - args.ttft_ms) / args.ttft_ms,
        "ttft_send_ms": ttft, "ttft_send_err_pct": 100 * (ttft - args.ttft_ms) / args.ttft_ms,
        "tpot_ms": tpot, "tpot_err_pct": 100 * (tpot - args.tpot_ms) / args.tpot_ms,
        "cpu_pct": cpu[0], "server_cpu_pct": cpu[1], "requested": requested, "achieved": achieved, "late_p99_ms": late,
        "tokens_exact": exact, "faults": 0, "errors": 0,
    }


def peer_rows(args: argparse.Namespace, port: int, label: str, rate: float, streams: int,
              tok: str, work: Path) -> list[dict[str, Any]]:
    rows = []
    for make in (guidellm_row, aiperf_row):
        case_dir = work / f"{make.__name__}-{label.replace(' ', '_').replace('/', '_')}"
        case_dir.mkdir(parents=True, exist_ok=True)
        r = with_server_lateness(port, lambda m=make, d=case_dir: m(args, port, label, rate, streams, tok, d))
        if r is not None:
            if streams:
                r["requested"] = streams / ((args.ttft_ms + (args.tokens - 1) * args.tpot_ms) / 1e3)
            rows.append(r)
    return rows


def make_tokenizer(args: argparse.Namespace, work: Path) -> str:
    tok = work / "tokenizer"
    subprocess.run([args.peers_python, hf_tiny.__file__, str(tok), "--tokenizer-only"], env=peer_env(),
                   check=True, capture_output=True, timeout=300)
    return str(tok.resolve())


# --- any server: proctor against a bare socket where the truth is unknown ---------------------------


def served_model(url: str) -> str:
    """The first model the server's `GET /v1/models` lists (bounded read)."""
    with urllib.request.urlopen(models_url(url, "completions"), timeout=10) as r:
        data = orjson.loads(r.read(1 << 20))
    return str(data["data"][0]["id"])


TRANSFORMERS_SERVE = ("import sys; from transformers.cli.transformers import main; sys.argv[0] = 'transformers'; "
                      "sys.exit(main())")
SERVE_START_S = 180.0  # a bound on writing the tiny model and loading it (seconds, on a busy 2-core machine)


def write_tiny(name: str, python: str, script: str, out: Path, env: dict[str, str]) -> None:
    """Write a tiny model with a tests.support script, run by the server's interpreter (bounded)."""
    made = subprocess.run([python, script, str(out)], env=env, capture_output=True, text=True, timeout=SERVE_START_S)
    if made.returncode:
        raise SystemExit(f"--serve {name}: {Path(script).name} exited {made.returncode}: {made.stderr[-1000:]}")


@contextlib.contextmanager
def started(name: str, cmd: list[str], port: int, ready: str, work: Path, env: dict[str, str]) -> Any:
    """A server the bench started (tests.support.child_server: poll `ready` until 200, stop it afterwards,
    also on SIGTERM, which main turns into SystemExit); yields its base URL."""
    url = f"http://127.0.0.1:{port}"
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(child_server(name, cmd, url + ready, work / "serve.log", SERVE_START_S, env))
        except ServerStartError as e:
            raise SystemExit(f"--serve: {e}") from None
        yield url


@contextlib.contextmanager
def transformers_serve(python: str, work: Path) -> Any:
    """`transformers serve` on loopback with a tiny random-weight model written here (tests.support.hf_tiny,
    offline: HF_HUB_OFFLINE=1, nothing downloaded), run by `python` (a venv with transformers[serving]
    and torch); yields (its base URL, the model name it serves, the openai SUT's extra params): its
    usage record gives exact counts, so none."""
    env = dict(peer_env(), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_HOME=str(work / "hf-home"))
    model = work / "tiny-llama"
    write_tiny("transformers", python, hf_tiny.__file__, model, env)
    port = free_port()
    cmd = [python, "-c", TRANSFORMERS_SERVE, "serve", str(model), "--host", "127.0.0.1", "--port", str(port),
           "--device", "cpu"]
    with started("transformers serve", cmd, port, "/health", work, env) as url:
        yield url, str(model), {}


LLAMACPP_MODEL = "tiny"  # the alias the server lists in /v1/models (else the GGUF's path)


@contextlib.contextmanager
def llamacpp_serve(python: str, work: Path) -> Any:
    """llama.cpp's server (`python -m llama_cpp.server`, llama-cpp-python[server]) on loopback with a tiny
    random-weight GGUF written here (tests.support.gguf_tiny, nothing downloaded), run by `python`;
    yields (its base URL, the model name, the openai SUT's extra params). It sends no usage record, so
    proctor's counts are exact only from per-token logprobs: served with `--logits_all true` and asked
    for with the SUT's `logprobs=1` (without them every sample fails `no_count`). `--interrupt_requests
    false`: by default a request that arrives stops the stream in progress (llama-cpp-python 0.3.x), and
    proctor fails each such cut-off sample (1 token) where the bare client times its first token alike."""
    env = peer_env()
    model = work / "tiny.gguf"
    write_tiny("llamacpp", python, gguf_tiny.__file__, model, env)
    port = free_port()
    cmd = [python, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", LLAMACPP_MODEL,
           "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--logits_all", "true", "--interrupt_requests", "false"]
    with started("llama.cpp server", cmd, port, "/v1/models", work, env) as url:
        yield url, LLAMACPP_MODEL, {"logprobs": "1"}


SERVERS = {"transformers": transformers_serve, "llamacpp": llamacpp_serve}
SERVE_PYTHON = {"transformers": "transformers[serving] and CPU torch", "llamacpp": "llama-cpp-python[server] and gguf"}


# --- the table ------------------------------------------------------------------------------------


def sustained(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Per client, the highest requested rate with late99 < 1 ms and >= 95 % of the rate achieved."""
    best: dict[str, float] = {}
    for r in rows:
        if r["case"].endswith("streams"):
            continue
        if r["late_p99_ms"] < 1.0 and r["achieved"] >= 0.95 * r["requested"]:
            best[r["client"]] = max(best.get(r["client"], 0.0), r["requested"])
        else:
            best.setdefault(r["client"], 0.0)
    return best


def print_table(args: argparse.Namespace, rows: list[dict[str, Any]], load: tuple[float, ...]) -> None:
    if any(r["case"].endswith("long") for r in rows):
        t = scale_truth(args)
        print(f"'long' cases: their own server, TTFT {t.ttft_ms:g} ms, TPOT {t.tpot_ms:g} ms, {t.tokens} tokens in "
              f"chunks of {t.chunk}; CPU% over the whole run; open = most streams in flight (client's count)")
    print(f"truth: TTFT {args.ttft_ms:g} ms, TPOT {args.tpot_ms:g} ms, {args.tokens} tokens in chunks of "
          f"{args.chunk}, usage record; {args.seconds:g} s per case; load average {load[0]:.2f} at the start, "
          f"{os.getloadavg()[0]:.2f} at the end, on {os.cpu_count()} cores")
    head = f"{'client':15} {'case':11} {'n':>5} {'TTFT ms':>8} {'err%':>6} {'send ms':>8} {'err%':>6} " \
           f"{'TPOT ms':>8} {'err%':>6} " \
           f"{'CPU%':>5} {'srv%':>5} {'req/s':>7} {'got/s':>7} {'late99':>7} {'srv50us':>7} {'srv99us':>7} " \
           f"{'open':>5} {'fault':>5} tokens"
    print(head)
    nan = float("nan")
    for r in rows:
        print(f"{r['client']:15} {r['case']:11} {r['requests']:5d} {r['ttft_ms']:8.2f} {r['ttft_err_pct']:+6.1f} "
              f"{r['ttft_send_ms']:8.2f} {r['ttft_send_err_pct']:+6.1f} {r['tpot_ms']:8.3f} {r['tpot_err_pct']:+6.1f} {r['cpu_pct']:5.1f} {r['server_cpu_pct']:5.1f} {r['requested']:7.1f} "
              f"{r['achieved']:7.1f} {r['late_p99_ms']:7.2f} {r.get('srv_first_p50_us', nan):7.0f} "
              f"{r.get('srv_first_p99_us', nan):7.0f} {r.get('inflight', 0) or '':>5} {r['faults'] + r['errors']:5d} "
              f"{'exact' if r['tokens_exact'] else 'WRONG'}")
    best = sustained(rows)
    if best:
        print("highest rate with late99 < 1 ms and >= 95% achieved (of the rates run): "
              + ", ".join(f"{c} {v:g} req/s" if v else f"{c} none" for c, v in best.items()))


BENCH_SETS = ("url", "model", "synthetic", "in", "out", "http", "concurrency")  # proctor_case's own params


def run_compare(args: argparse.Namespace, cases: list[str], load: tuple[float, ...]) -> None:
    """Every client by its own process, a fresh stub per run (or args.url): bench/llm_compare.py."""
    from bench.llm_compare import compare, peer_kind, print_compare

    args.peers = {peer_kind(p): p for p in args.peer_python}
    rows = compare(args, [float(c) for c in cases if c[0].isdigit()])
    if args.json:
        print(orjson.dumps(rows, option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY).decode())
    else:
        print_compare(args, rows, load)


def sut_params(given: list[str]) -> dict[str, str]:
    """--sut-param KEY=VALUE pairs as the openai SUT's params (those the bench sets itself refused)."""
    out: dict[str, str] = {}
    for kv in given:
        key, sep, value = kv.partition("=")
        if not sep or not key:
            raise ValueError(f"--sut-param {kv!r}: expected KEY=VALUE")
        if key in BENCH_SETS:
            raise ValueError(f"--sut-param {key}: the bench sets it (use the bench's own option)")
        out[key] = value
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=10.0, help="length of each case")
    ap.add_argument("--ttft-ms", type=float, default=40.0)
    ap.add_argument("--tpot-ms", type=float, default=4.0)
    ap.add_argument("--tokens", type=int, default=16)
    ap.add_argument("--chunk", default="1-3")
    ap.add_argument("--cases", default="4,50",
                    help="comma list: a rate (req/s); with --proctor-server also cN (N streams) or sN (N long "
                         "streams, the scale server)")
    ap.add_argument("--proctor-server", action="store_true",
                    help="the table against `proctor serve llm` (its /stats CPU window and lateness), not the comparison")
    ap.add_argument("--scale-tokens", type=int, default=1000, help="scale server: tokens per stream")
    ap.add_argument("--scale-tpot-ms", type=float, default=8.0, help="scale server: time per token")
    ap.add_argument("--scale-chunk", default="100",
                    help="scale server: tokens per chunk (100 x 8 ms: a chunk every 0.8 s, so the server keeps up)")
    ap.add_argument("--sweep", default="", help="more rates (comma list) for the sustained-rate line")
    ap.add_argument("--peers-python", help="interpreter with guidellm, aiperf and transformers (else no peer rows)")
    ap.add_argument("--raw", action="store_true", help="add a bare-socket client row for each rate case")
    ap.add_argument("--breakdown", type=float, default=0.0,
                    help="instead of the table: where proctor's first-token microseconds go at this rate")
    ap.add_argument("--http", default="raw",
                    help="proctor's transport(s), comma list: raw, aiohttp (a row each; --breakdown: the first)")
    ap.add_argument("--url", default="",
                    help="any server (http://HOST:PORT[/v1]) instead of a fresh stub per run: the truth unknown, "
                         "every client against the bare one")
    ap.add_argument("--model", default="", help="--url: the model name to ask (default: the first in /v1/models)")
    ap.add_argument("--peer-python", action="append", default=[], metavar="PATH",
                    help="a venv's interpreter whose bin/ has aiperf or guidellm (repeatable): that peer joins")
    ap.add_argument("--warmup", type=int, default=8,
                    help="warm-up requests before each client's timed part (proctor warmup=, AIPerf "
                         "--warmup-request-count; the bare client: one per thread)")
    ap.add_argument("--stub-close", action="store_true", help="the stub closes the connection after each response")
    ap.add_argument("--child", default="", choices=["", "bare", "proctor"], help=argparse.SUPPRESS)
    ap.add_argument("--child-out", default="", help=argparse.SUPPRESS)
    ap.add_argument("--rate", type=float, default=0.0, help=argparse.SUPPRESS)
    ap.add_argument("--serve", default="", choices=["", *SERVERS], metavar="NAME",
                    help="the --url mode against a server the bench starts on loopback with a tiny random-weight "
                         "model written here, offline: 'transformers' (transformers serve) or 'llamacpp' "
                         "(llama.cpp's server from llama-cpp-python, exact counts from logprobs=1)")
    ap.add_argument("--serve-python", default="",
                    help="--serve: the server's interpreter (transformers: " + SERVE_PYTHON["transformers"]
                         + "; llamacpp: " + SERVE_PYTHON["llamacpp"] + ")")
    ap.add_argument("--sut-param", action="append", default=[], metavar="KEY=VALUE",
                    help="an extra openai SUT parameter for proctor's requests, repeatable (e.g. logprobs=1 for a "
                         "llama.cpp server started apart: it sends no usage record)")
    ap.add_argument("--together", action="store_true",
                    help="add a case per rate: proctor and the bare client at once, each at half the rate, on one "
                         "server (a server whose speed drifts is the same for both)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each client per rate (medians reported)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    cases = [c for c in (args.cases + "," + args.sweep).split(",") if c]
    peers = bool(args.peers_python and os.path.exists(args.peers_python))
    load = os.getloadavg()
    try:
        args.sut_params = sut_params(args.sut_param)
    except ValueError as e:
        ap.error(str(e))
    if args.child:
        from bench.llm_compare import child

        child(args)
        return
    if args.serve:
        if not args.serve_python:
            ap.error(f"--serve {args.serve}: give --serve-python PATH (an interpreter with {SERVE_PYTHON[args.serve]})")
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # killed: still stop the server it started
        with tempfile.TemporaryDirectory(prefix="llm-bench-serve-") as tmp, \
                SERVERS[args.serve](args.serve_python, Path(tmp)) as (url, model, needs):
            args.url, args.model = url, model
            args.sut_params = {**needs, **args.sut_params}
            run_compare(args, cases, load)
        return
    if not (args.proctor_server or args.breakdown):
        if args.url:
            args.model = args.model or served_model(args.url)
        else:
            args.model = args.model or "stub"
        run_compare(args, cases, load)
        return
    rows: list[dict[str, Any]] = []
    if any(c.startswith("s") for c in cases):
        rows.extend(scale_rows(args, [int(c[1:]) for c in cases if c.startswith("s")]))
        cases = [c for c in cases if not c.startswith("s")]
    proc, port = start_server(args)
    if args.breakdown:
        try:
            stages = breakdown(port, args, args.breakdown)
        finally:
            proc.terminate()
            proc.wait(timeout=10)
        print(f"{'stage (first token, ' + format(args.breakdown, 'g') + ' req/s)':40} "
              f"{'p50 us':>8} {'p90 us':>8} {'p99 us':>8}")
        for name, p50, p90, p99 in stages:
            print(f"{name:40} {p50:8.1f} {p90:8.1f} {p99:8.1f}")
        return
    try:
        with tempfile.TemporaryDirectory(prefix="llm-bench-") as tmp:
            work = Path(tmp)
            tok = make_tokenizer(args, work) if peers else ""
            for case in cases:
                streams = int(case[1:]) if case.startswith("c") else 0
                rate = 0.0 if streams else float(case)
                label = f"{streams} streams" if streams else f"{rate:g} req/s"
                if args.raw and not streams:
                    rows.append(with_server_lateness(port, lambda lb=label, r=rate: raw_case(port, args, lb, r)))
                for http in args.http.split(","):
                    rows.append(with_server_lateness(
                        port, lambda lb=label, r=rate, n=streams, h=http: proctor_case(port, args, lb, r, n, http=h)))
                if peers:
                    rows.extend(peer_rows(args, port, label, rate, streams, tok, work))
                print(f"done: {label}", file=sys.stderr)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    if not cases and not rows:
        return
    if args.json:
        print(orjson.dumps(rows, option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY).decode())
        return
    print_table(args, rows, load)


if __name__ == "__main__":
    main()
