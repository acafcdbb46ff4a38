"""Every LLM client against one server of known timing, each by its own process: bench/llm_client.py's
default mode (and `--url URL`).

Clients: `bare` (blocking sockets, one thread per stream: the floor, bench/llm_client.bare_ttfts),
`proctor` (the openai SUT under proctor's engine, Server scenario), and, with `--peer-python PATH`
(a venv's interpreter; the venv's `bin/aiperf` or `bin/guidellm` says which), AIPerf and GuideLLM by
their own command lines. Each client run is its own child process against a fresh server: the
independent stub (bench/llm_stub.py, standard library only, truth TTFT `--ttft-ms`, `--tpot-ms` per
further token, `--tokens` tokens), or `--url URL` (one server for all, truth unknown: figures over the
bare client). The order of the clients rotates from one repeat to the next. `--together` adds a case
per rate with proctor and bare at once at half the rate each, on one server.

Per run: TTFT and latency p50 and p99 (proctor and bare: from each request's place in the schedule,
the rules' TTFT, so each one's lateness waking for a request counts; AIPerf and GuideLLM from their own
send, the only figure they have), over the truth and over the bare client of the same repeat, and
from the send for proctor and bare; the client's CPU (utime + stime of its process tree from /proc, sampled every 0.1 s) over the
window in which the stub saw requests arrive (with `--url`: the client's whole life, from
`os.wait4`'s rusage), in % of one core; the stub's own lateness (first chunk written - arrival -
TTFT), the part of everyone's error that is the server's. Warm-up: proctor `warmup=W`, AIPerf
`--warmup-request-count W`, the bare client one request per thread, all before their timed part;
GuideLLM has no separate warm-up phase (its `warmup` drops the first part of the timed run).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import orjson
from bench.llm_client import tree_cpu_s  # the one /proc walk (llm_client imports this module lazily)

STUB = Path(__file__).with_name("llm_stub.py")
CLIENT = Path(__file__).with_name("llm_client.py")
TICK = os.sysconf("SC_CLK_TCK")
GOAL_MS = 0.2


class TreeCpu:
    """(monotonic ns, CPU s) of a process tree every 0.1 s, on a thread; `percent(a, b)` over a window."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.samples: list[tuple[int, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.1):
            with contextlib.suppress(OSError, ValueError):
                self.samples.append((time.monotonic_ns(), tree_cpu_s(self.pid)))

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def percent(self, a: int, b: int) -> float:
        """CPU % of one core from the last sample at or before `a` to the first at or after `b`."""
        s = self.samples
        lo = max((x for x in s if x[0] <= a), default=None, key=lambda x: x[0])
        hi = min((x for x in s if x[0] >= b), default=None, key=lambda x: x[0])
        if lo is None or hi is None or hi[0] <= lo[0]:
            return float("nan")
        return 100 * (hi[1] - lo[1]) / ((hi[0] - lo[0]) / 1e9)


@contextlib.contextmanager
def stub_server(args: argparse.Namespace, log: Path) -> Iterator[str]:
    """A fresh independent stub (bench/llm_stub.py) in its own process; yields its URL; its log is
    written when it stops."""
    cmd = [sys.executable, str(STUB), "--ttft-ms", str(args.ttft_ms), "--tpot-ms", str(args.tpot_ms),
           "--tokens", str(args.tokens), "--log", str(log)] + (["--close"] if args.stub_close else [])
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": ""})
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        m = re.match(r"listening (\d+)", line)
        if not m:
            raise SystemExit(f"the stub did not start: {line!r}")
        yield f"http://127.0.0.1:{m.group(1)}"
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def stub_log(log: Path) -> np.ndarray:
    """A stub's log: one row per request (arrival, first written, last written), ns, float64."""
    if not log.is_file() or not log.stat().st_size:
        return np.zeros((0, 3))
    return np.loadtxt(log, dtype=np.float64, ndmin=2)


def peer_kind(python: str) -> str:
    """Which peer a venv's interpreter runs: the venv's bin/ holds `aiperf` or `guidellm`."""
    bindir = Path(python).parent
    for name in ("aiperf", "guidellm"):
        if (bindir / name).exists():
            return name
    raise SystemExit(f"--peer-python {python}: no aiperf or guidellm beside it")


def client_cmd(kind: str, args: argparse.Namespace, url: str, rate: float, out: Path, work: Path) -> list[str]:
    """The command line of one client run, writing its results under `out`."""
    if kind in ("bare", "proctor"):
        cmd = [sys.executable, str(CLIENT), "--child", kind, "--url", url, "--model", args.model, "--rate", f"{rate:g}",
               "--seconds", f"{args.seconds:g}", "--child-out", str(out), "--tokens", str(args.tokens),
               "--ttft-ms", str(args.ttft_ms), "--tpot-ms", str(args.tpot_ms), "--warmup", str(args.warmup)]
        return cmd + [f"--sut-param={k}={v}" for k, v in args.sut_params.items()]
    python = args.peers[kind]
    exe = str(Path(python).parent / kind)
    if kind == "aiperf":
        return [exe, "profile", "--model", args.model, "--url", url, "--endpoint-type", "completions", "--streaming",
                "--tokenizer", args.tokenizer, "--use-server-token-count", "--use-legacy-max-tokens",
                "--synthetic-input-tokens-mean", "32", "--synthetic-input-tokens-stddev", "0",
                "--output-tokens-mean", str(args.tokens), "--output-tokens-stddev", "0",
                "--request-rate", f"{rate:g}", "--request-rate-mode", "poisson",
                "--benchmark-duration", f"{args.seconds:g}", "--warmup-request-count", str(args.warmup),
                "--artifact-dir", str(out)]
    return [exe, "run", "--backend", f"kind=openai_http,target={url},model={args.model},request_format=/v1/completions",
            "--profile", f"kind=poisson,rate={rate:g}",
            "--data", f"kind=synthetic_text,prompt_tokens=32,output_tokens={args.tokens}",
            "--tokenizer", f"kind=huggingface_auto,model={args.tokenizer}",
            "--constraint", f"kind=max_duration,seconds={args.seconds:g}",
            "--output", f"kind=json,path={out / 'guidellm.json'}", "--disable-console-interactive"]


def pcts(x: np.ndarray) -> tuple[float, float, int]:
    x = x[~np.isnan(x)]
    return (float(np.median(x)), float(np.percentile(x, 99)), int(x.size)) if x.size else (float("nan"),) * 2 + (0,)


def server_times(sent: np.ndarray, srv: np.ndarray) -> np.ndarray:
    """Per client request (its send, ns), the stub's own time to its first token (first written -
    arrival, ms) for the stub record that arrived next after the send (within PAIR_NS, each once);
    NaN where none pairs."""
    out = np.full(sent.shape, np.nan)
    if not len(srv):
        return out
    order = np.argsort(srv[:, 0])
    arr, took = srv[order, 0], np.zeros(len(order), bool)
    for k in np.argsort(sent):
        if np.isnan(sent[k]):
            continue
        j = int(np.searchsorted(arr, sent[k]))
        while j < len(arr) and took[j]:
            j += 1
        if j < len(arr) and arr[j] - sent[k] <= PAIR_NS:
            took[j] = True
            row = srv[order[j]]
            out[k] = (row[1] - row[0]) / 1e6
    return out


PAIR_NS = 5_000_000  # a request reaches the stub within this of its send (loopback; else it is not paired)


def results(kind: str, out: Path, srv: np.ndarray) -> dict[str, Any]:
    """TTFT and latency p50/p99 (ms) and the request count from a finished client run's files; for
    bare and proctor also `net`: TTFT less the stub's own time to that request's first token (each
    request paired with the stub's log by its send), the part that is the client's and the wire's."""
    if kind in ("bare", "proctor"):
        a = np.load(out / "times.npy")  # columns: TTFT, latency (ms, from the schedule), TTFT from send, send ns
        t50, t99, n = pcts(a[:, 0])
        l50, l99, _ = pcts(a[:, 1])
        s50, s99, _ = pcts(a[:, 2])
        own = server_times(a[:, 3], srv)
        n50, n99, paired = pcts(a[:, 0] - own)
        m50, m99, _ = pcts(a[:, 2] - own)
        fails = int(np.isnan(a[:, 0]).sum())
        # proctor's report: requests that had to wait for a connect (its child prints the report)
        m = re.search(rb"connections: \d+ opened ahead of requests, (\d+) while a request waited",
                      (out / "client.log").read_bytes())
        return {"n": n, "ttft": (t50, t99), "lat": (l50, l99), "send": (s50, s99), "net": (n50, n99),
                "ttft_each": a[:, 0].copy(), "send_each": a[:, 2].copy(),  # contiguous: --json writes them
                "net_send": (m50, m99), "paired": paired, "fail": fails, "waited": int(m.group(1)) if m else -1}
    if kind == "aiperf":
        d = orjson.loads((out / "profile_export_aiperf.json").read_bytes())
        t, lat = d["time_to_first_token"], d["request_latency"]
        nan = (float("nan"), float("nan"))
        return {"n": int(t["count"]), "ttft": (float(t["p50"]), float(t["p99"])), "net": nan, "paired": 0,
                "lat": (float(lat["p50"]), float(lat["p99"])), "send": (float(t["p50"]), float(t["p99"])), "fail": 0}
    m = orjson.loads((out / "guidellm.json").read_bytes())["benchmarks"][0]["metrics"]

    def ok(key: str) -> tuple[float, float, int]:
        got = (m.get(key) or {}).get("successful") or {}
        p = got.get("percentiles") or {}
        return float(got.get("median", "nan")), float(p.get("p99", "nan")), int(got.get("count", 0))

    t50, t99, n = ok("time_to_first_token_ms")
    l50, l99, _ = ok("request_latency")
    l50, l99 = l50 * 1e3, l99 * 1e3  # seconds
    nan = (float("nan"), float("nan"))
    return {"n": n, "ttft": (t50, t99), "lat": (l50, l99), "send": (t50, t99), "net": nan, "paired": 0, "fail": 0}


def run_clients(kinds: list[str], args: argparse.Namespace, rate: float, work: Path) -> list[dict[str, Any]]:
    """Run `kinds` at once (each at `rate`) against one fresh stub (or args.url); one result each."""
    log = work / "stub.log"
    with contextlib.ExitStack() as stack:
        url = args.url or stack.enter_context(stub_server(args, log))
        procs = []
        for kind in kinds:
            out = work / kind
            out.mkdir(parents=True, exist_ok=True)
            cmd = client_cmd(kind, args, url, rate, out, work)
            env = {**os.environ} if kind in ("bare", "proctor") else {
                k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
            with (out / "client.log").open("wb") as f:
                p = subprocess.Popen(cmd, cwd=str(out), env=env, stdout=f, stderr=subprocess.STDOUT)
            t_start = time.monotonic_ns()
            procs.append((kind, p, out, TreeCpu(p.pid), t_start))
        got = []
        for kind, p, out, cpu, t_start in procs:
            try:
                _, status, ru = os.wait4(p.pid, 0)
            except ChildProcessError:
                status, ru = 1, None
            p.returncode = os.waitstatus_to_exitcode(status)
            cpu.stop()
            got.append((kind, p, out, cpu, t_start, time.monotonic_ns(), ru))
    srv = stub_log(log) if not args.url else np.zeros((0, 3))
    first, last = (int(srv[:, 0].min()), int(srv[:, 0].max())) if len(srv) else (0, 0)
    late = (srv[:, 1] - srv[:, 0]) / 1e3 - args.ttft_ms * 1e3
    late50, late99 = (float(np.median(late)), float(np.percentile(late, 99))) if len(srv) else (float("nan"),) * 2
    n_srv = len(srv)
    rows = []
    for kind, p, out, cpu, t_start, t_end, ru in got:
        try:
            r = results(kind, out, srv)
        except (OSError, KeyError, ValueError, IndexError) as exc:
            tail = (out / "client.log").read_bytes()[-600:].decode("utf-8", "replace")
            print(f"{kind} at {rate:g} req/s: no results (exit {p.returncode}: {exc}); log tail: {tail}", file=sys.stderr)
            continue
        total = (ru.ru_utime + ru.ru_stime) if ru is not None else float("nan")
        window = cpu.percent(first, last) if first and last > first else 100 * total / ((t_end - t_start) / 1e9)
        rows.append({"client": kind, "rate": rate, **r, "cpu_pct": window, "cpu_s": total,
                     "srv_late_us": (late50, late99), "srv_n": n_srv})
    return rows


def compare(args: argparse.Namespace, rates: list[float]) -> list[dict[str, Any]]:
    kinds = ["bare", "proctor", *args.peers]
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="llm-compare-") as tmp:
        work = Path(tmp)
        if args.peers:
            args.tokenizer = tokenizer_for(next(iter(args.peers.values())), work)
        for rate, k in itertools.product(rates, range(args.repeat)):
            order = kinds[k % len(kinds):] + kinds[: k % len(kinds)]
            for kind in order:
                run_dir = work / f"r{rate:g}-{k}-{kind}"
                for r in run_clients([kind], args, rate, run_dir):
                    rows.append({**r, "case": f"{rate:g} req/s", "repeat": k + 1})
            if args.together:
                run_dir = work / f"t{rate:g}-{k}"
                for r in run_clients(["bare", "proctor"], args, rate / 2, run_dir):
                    rows.append({**r, "case": f"{rate:g} together", "repeat": k + 1})
            print(f"done: {rate:g} req/s repeat {k + 1} ({' '.join(order)})", file=sys.stderr)
    return rows


def tokenizer_for(python: str, work: Path) -> str:
    """A local byte-level tokenizer folder for the peers (tests.support.hf_tiny, no download)."""
    tok = work / "tokenizer"
    script = Path(__file__).resolve().parents[1] / "tests" / "support" / "hf_tiny.py"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run([python, str(script), str(tok), "--tokenizer-only"], env=env, check=True, capture_output=True,
                   timeout=300)
    return str(tok.resolve())


def print_compare(args: argparse.Namespace, rows: list[dict[str, Any]], load: tuple[float, ...]) -> None:
    truth_lat = args.ttft_ms + (args.tokens - 1) * args.tpot_ms
    where = args.url or (f"the independent stub (bench/llm_stub.py), fresh per run: TTFT {args.ttft_ms:g} ms, "
                         f"{args.tpot_ms:g} ms per further token, {args.tokens} tokens, latency {truth_lat:g} ms")
    print(f"server: {where}; {args.seconds:g} s per run, {args.repeat} repeats, order rotated; load average "
          f"{load[0]:.2f} at the start, {os.getloadavg()[0]:.2f} at the end, on {os.cpu_count()} cores")
    print("ms; proctor's and bare's TTFT and latency are the rules' (from each request's place in the schedule), "
          "the peers' from their send; "
          "'- bare': minus the bare client's of the same repeat and case; net: TTFT less the stub's own time to that "
          "request's first token (paired by send time: the client's part and the wire's); CPU% of one core over the "
          "requests' window; srv: the stub's own lateness; wait: proctor's requests that waited for a connect")
    print(f"{'client':9} {'case':14} {'rep':>3} {'n':>5} {'TTFT50':>8} {'TTFT99':>8} {'-truth50':>8} {'-truth99':>8} "
          f"{'-bare50':>8} {'-bare99':>8} {'net50':>7} {'net99':>7} {'lat50':>8} {'lat99':>8} {'CPU%':>6} {'cpu s':>6} "
          f"{'srv50us':>7} {'srv99us':>7} {'fail':>4} {'wait':>4}")
    bare = {(r["case"], r["repeat"]): r for r in rows if r["client"] == "bare"}
    for r in rows:
        b = bare.get((r["case"], r["repeat"]))
        r["over_bare"] = ((r["ttft"][0] - b["ttft"][0], r["ttft"][1] - b["ttft"][1]) if b is not None
                          else (float("nan"),) * 2)
        r["over_truth"] = (r["ttft"][0] - args.ttft_ms, r["ttft"][1] - args.ttft_ms)
        r["net_over_bare"] = ((r["net"][0] - b["net"][0], r["net"][1] - b["net"][1]) if b is not None
                              else (float("nan"),) * 2)
        r["send_over_bare"] = ((r["send"][0] - b["send"][0], r["send"][1] - b["send"][1]) if b is not None
                               else (float("nan"),) * 2)
        ns = r.get("net_send")
        r["net_send_over_bare"] = ((ns[0] - b["net_send"][0], ns[1] - b["net_send"][1]) if b is not None and ns
                                   else (float("nan"),) * 2)
        print(f"{r['client']:9} {r['case']:14} {r['repeat']:3d} {r['n']:5d} {r['ttft'][0]:8.3f} {r['ttft'][1]:8.3f} "
              f"{r['over_truth'][0]:+8.3f} {r['over_truth'][1]:+8.3f} {r['over_bare'][0]:+8.3f} {r['over_bare'][1]:+8.3f} "
              f"{r['net'][0]:7.3f} {r['net'][1]:7.3f} {r['lat'][0]:8.3f} {r['lat'][1]:8.3f} {r['cpu_pct']:6.1f} {r['cpu_s']:6.2f} {r['srv_late_us'][0]:7.0f} "
              f"{r['srv_late_us'][1]:7.0f} {r['fail']:4d} {r.get('waited', -1) if r.get('waited', -1) >= 0 else '':>4}")
    print("medians over repeats (TTFT - bare, p50 / p99, ms; CPU %):")
    for case in dict.fromkeys(r["case"] for r in rows):
        cells = {}
        for client in dict.fromkeys(r["client"] for r in rows if r["case"] == case):
            mine = [r for r in rows if r["case"] == case and r["client"] == client]
            cells[client] = (float(np.median([r["over_bare"][0] for r in mine])),
                             float(np.median([r["over_bare"][1] for r in mine])),
                             float(np.median([r["cpu_pct"] for r in mine])),
                             float(np.median([r["net_over_bare"][0] for r in mine])),
                             float(np.median([r["net_over_bare"][1] for r in mine])),
                             float(np.median([r["send_over_bare"][0] for r in mine])),
                             float(np.median([r["send_over_bare"][1] for r in mine])),
                             float(np.median([r["net_send_over_bare"][0] for r in mine])),
                             float(np.median([r["net_send_over_bare"][1] for r in mine])))
        text = "; ".join(f"{c} {v[0]:+.3f} / {v[1]:+.3f} ({v[2]:.1f} %)" for c, v in cells.items() if c != "bare")
        if "proctor" in cells:
            p = cells["proctor"]
            text += (f"; proctor from its send (as the peers measure) {p[5]:+.3f} / {p[6]:+.3f}; net of the stub's "
                     f"own time per request: from the schedule {p[3]:+.3f} / {p[4]:+.3f}, from the send "
                     f"{p[7]:+.3f} / {p[8]:+.3f}; bare {cells['bare'][2]:.1f} %")
        p = cells.get("proctor")
        verdict = ""
        if p is not None:
            goal = p[0] <= GOAL_MS and p[1] <= GOAL_MS
            goal_send = p[5] <= GOAL_MS and p[6] <= GOAL_MS
            ahead = all(p[0] <= v[0] and p[1] <= v[1] for c, v in cells.items() if c not in ("bare", "proctor"))
            verdict = (f"; goal <= {GOAL_MS} ms over bare at p50 and p99: {'met' if goal else 'NOT met'} from the "
                       f"schedule, {'met' if goal_send else 'NOT met'} from the send"
                       + (f"; ahead of every peer: {'yes' if ahead else 'NO'}" if len(cells) > 2 else ""))
        print(f"  {case}: {text}{verdict}")
        pooled = {c: [r for r in rows if r["case"] == case and r["client"] == c] for c in ("bare", "proctor")}
        if all(pooled.values()) and all("ttft_each" in r for v in pooled.values() for r in v):
            # a p99 of one 30 s run at 4 req/s is its second-largest value: over every repeat's requests at once
            # it is a figure, not an outlier
            each = {c: (np.concatenate([r["ttft_each"] for r in v]), np.concatenate([r["send_each"] for r in v]))
                    for c, v in pooled.items()}
            (pt, ps), (bt, bs) = each["proctor"], each["bare"]
            pp = [pcts(x) for x in (pt, ps, bt, bs)]
            print(f"    pooled over the repeats (proctor n={pp[0][2]}, bare n={pp[2][2]}): proctor - bare p50 / p99 "
                  f"from the schedule {pp[0][0] - pp[2][0]:+.3f} / {pp[0][1] - pp[2][1]:+.3f}, from the send "
                  f"{pp[1][0] - pp[3][0]:+.3f} / {pp[1][1] - pp[3][1]:+.3f}")


# --- the children: one client run each --------------------------------------------------------------------


def child(args: argparse.Namespace) -> None:
    """`--child bare|proctor`: one run at --rate for --seconds against --url; per-request times in
    --child-out/times.npy (ms: TTFT and latency from the schedule, TTFT from the send; NaN: failed; then the send, ns)."""
    from bench.llm_client import bare_ttfts, openai_params, request_bodies

    out = Path(args.child_out)
    per_req_s = (args.ttft_ms + (args.tokens - 1) * args.tpot_ms) / 1e3
    if args.child == "bare":
        t = bare_ttfts(args.url, request_bodies(args), args.rate, args.seconds, per_req_s, warm=args.warmup > 0)
        # kernel stamps, as proctor's; the send on CLOCK_MONOTONIC (perf_counter_ns), as the stub's log.
        # TTFT and latency from the request's place in the schedule, as proctor's (the rules'): the thread's
        # lateness waking for it counts, as proctor's issue lateness does; then TTFT from the send.
        late = t[:, 4]
        np.save(out / "times.npy", np.stack([t[:, 1] + late, t[:, 2] + late, t[:, 1], t[:, 3]], 1))
        return
    from proctor.clients.openai import from_params
    from proctor.loadgen.completion import ID_GENERATION_BITS
    from proctor.loadgen.engine import run_test
    from proctor.loadgen.records import NOT_SET
    from proctor.loadgen.settings import LogOutputSettings, LogSettings, TestSettings
    from proctor.loadgen.types import Scenario, TestMode

    sut, qsl = from_params(**openai_params(args, args.url), model=args.model, warmup=str(args.warmup))
    times = sut.record_times()
    settings = TestSettings(scenario=Scenario.SERVER, mode=TestMode.PERFORMANCE_ONLY, use_token_latencies=True,
                            server_target_qps=args.rate, min_duration_ms=int(args.seconds * 1000), min_query_count=1)
    try:
        with tempfile.TemporaryDirectory() as logs:
            o = run_test(sut, qsl, settings, LogSettings(LogOutputSettings(outdir=logs)), audit_config=None,
                         early_stopping_extension=False)
    finally:
        sut.close()
    rec = o.records
    assert rec is not None
    n = rec.n_samples_issued
    sched = rec.query_scheduled_ns[:n].astype(float)
    first, done = rec.sample_first_token_ns[:n], rec.sample_done_ns[:n]
    ok = (first != NOT_SET) & (done != NOT_SET)
    sent = np.full(n, np.nan)
    mask = (1 << ID_GENERATION_BITS) - 1
    for i, rt in times.items():
        if i >= 0 and rt.sent and (i & mask) < n:
            sent[i & mask] = rt.sent
    ttft = np.where(ok, (first - sched) / 1e6, np.nan)
    lat = np.where(ok, (done - sched) / 1e6, np.nan)
    ttft_send = np.where(ok, (first - sent) / 1e6, np.nan)
    np.save(out / "times.npy", np.stack([ttft, lat, ttft_send, sent], 1))
    print("\n".join(o.sut_report), file=sys.stderr)


__all__ = ["child", "compare", "peer_kind", "print_compare"]
