"""How truly proctor's openai SUT measures an LLM server whose timing is known.

Starts `proctor serve llm` in its own process with injected timing (default: TTFT 40 ms, 4 ms per
further token, 16 tokens in SSE chunks of 1-3, a usage record) and drives it with proctor's
engine at 4 req/s and 50 req/s (Server scenario) and at 64 concurrent streams (Offline, the SUT
capped at 64 in flight). For each case: proctor's TTFT and TPOT p50 against the truth (error in
%), the client's CPU use (user+system time of this process over the wall time, in % of one core),
the achieved against the requested rate, the issue lateness p99, and the token count check.

GuideLLM and AIPerf rows need those tools in another interpreter (`--peers-python PATH`) and a
local tokenizer; they are skipped when absent. Each case runs `--seconds` (default 10): on a
shared machine the figures are noisy, so run it when the machine is quiet and read them as such.

    python bench/llm_client.py [--seconds 10] [--json]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from typing import Any

import numpy as np
import orjson

from proctor.loadgen.engine import run_test
from proctor.loadgen.records import NOT_SET
from proctor.loadgen.settings import LogOutputSettings, LogSettings, TestSettings
from proctor.loadgen.types import Scenario, TestMode
from proctor.suts.openai import from_params


def start_server(args: argparse.Namespace) -> tuple[subprocess.Popen[str], int]:
    cmd = [sys.executable, "-m", "proctor", "serve", "llm", "--port", "0", "--ttft-ms", str(args.ttft_ms),
           "--tpot-ms", str(args.tpot_ms), "--chunk", args.chunk]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    m = re.search(r":(\d+) ", line)
    if not m:
        proc.kill()
        raise SystemExit(f"the server did not start: {line!r}")
    return proc, int(m.group(1))


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def proctor_case(port: int, args: argparse.Namespace, label: str, rate: float, streams: int) -> dict[str, Any]:
    n_samples = 1024
    params = {"url": f"http://127.0.0.1:{port}", "synthetic": str(n_samples), "in": "const:32",
              "out": f"const:{args.tokens}"}
    if streams:
        params["concurrency"] = str(streams)
    sut, qsl = from_params(**params)
    per_req_s = (args.ttft_ms + (args.tokens - 1) * args.tpot_ms) / 1e3
    if streams:
        sut.sent_ns = {}
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
    with tempfile.TemporaryDirectory() as out_dir:
        c0, w0 = cpu_s(), time.perf_counter()
        out = run_test(sut, qsl, settings, LogSettings(LogOutputSettings(outdir=out_dir)), audit_config=None)
        cpu, wall = cpu_s() - c0, time.perf_counter() - w0
    sut.close()
    rec, res = out.records, out.result
    assert rec is not None and res is not None
    n = rec.n_samples_issued
    ntok = rec.sample_n_tokens[:n]
    if streams:
        ids = np.array(sorted(sut.sent_ns), np.int64)
        sent = np.array([sut.sent_ns[i] for i in ids.tolist()], np.int64)
        first, done = rec.sample_first_token_ns[ids], rec.sample_done_ns[ids]
        ok = (first != NOT_SET) & (done != NOT_SET)
        ttft = float(np.median(first[ok] - sent[ok])) / 1e6
        tpot = float(np.median((done[ok] - first[ok]) / np.maximum(ntok[ids][ok] - 1, 1))) / 1e6
        achieved = n / res.max_latency_s if res.max_latency_s else 0.0
        late = float("nan")
    else:
        ttft, tpot = res.ttft.percentiles[0.5] / 1e6, res.tpot.percentiles[0.5] / 1e6
        achieved = res.completed_samples_per_sec
        late = res.issue_lateness_p99_ns / 1e6
    return {
        "client": "proctor", "case": label, "requests": n,
        "ttft_ms": ttft, "ttft_err_pct": 100 * (ttft - args.ttft_ms) / args.ttft_ms,
        "tpot_ms": tpot, "tpot_err_pct": 100 * (tpot - args.tpot_ms) / args.tpot_ms,
        "cpu_pct": 100 * cpu / wall, "requested": requested, "achieved": achieved,
        "late_p99_ms": late, "tokens_exact": bool(np.all(ntok == args.tokens)),
        "faults": sum(sut.faults.values()), "errors": out.errors,
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=10.0, help="length of each case")
    ap.add_argument("--ttft-ms", type=float, default=40.0)
    ap.add_argument("--tpot-ms", type=float, default=4.0)
    ap.add_argument("--tokens", type=int, default=16)
    ap.add_argument("--chunk", default="1-3")
    ap.add_argument("--cases", default="4,50,c64", help="comma list: a rate (req/s) or cN (N streams)")
    ap.add_argument("--peers-python", help="interpreter with guidellm/aiperf installed (rows skipped if absent)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    proc, port = start_server(args)
    rows = []
    try:
        for case in args.cases.split(","):
            streams = int(case[1:]) if case.startswith("c") else 0
            rate = 0.0 if streams else float(case)
            label = f"{streams} streams" if streams else f"{rate:g} req/s"
            rows.append(proctor_case(port, args, label, rate, streams))
            if args.peers_python:
                rows.extend(peer_rows(args, port, label))
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    if args.json:
        print(orjson.dumps(rows, option=orjson.OPT_INDENT_2).decode())
        return
    print(f"truth: TTFT {args.ttft_ms:g} ms, TPOT {args.tpot_ms:g} ms, {args.tokens} tokens in chunks of "
          f"{args.chunk}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    head = f"{'client':8} {'case':11} {'n':>5} {'TTFT ms':>8} {'err%':>6} {'TPOT ms':>8} {'err%':>6} " \
           f"{'CPU%':>5} {'req/s':>7} {'got/s':>7} {'late99':>7} tokens"
    print(head)
    for r in rows:
        print(f"{r['client']:8} {r['case']:11} {r['requests']:5d} {r['ttft_ms']:8.2f} {r['ttft_err_pct']:+6.1f} "
              f"{r['tpot_ms']:8.3f} {r['tpot_err_pct']:+6.1f} {r['cpu_pct']:5.1f} {r['requested']:7.1f} "
              f"{r['achieved']:7.1f} {r['late_p99_ms']:7.2f} {'exact' if r['tokens_exact'] else 'WRONG'}")


def peer_rows(args: argparse.Namespace, port: int, label: str) -> list[dict[str, Any]]:
    """GuideLLM/AIPerf rows: not wired up yet (both need a local Hugging Face tokenizer); skipped."""
    py = args.peers_python
    if not py or not os.path.exists(py):
        return []
    print(f"peers: {label}: skipped (peer runs are not wired up in this version)", file=sys.stderr)
    return []


if __name__ == "__main__":
    main()
