"""How long `proctor run` takes to stop after Ctrl-C or SIGTERM, drain included (the goal: <= 1 s by
default), and whether the logs it leaves are whole and marked incomplete.

Starts `proctor serve llm` (slow streams, so requests are in flight when the signal comes), runs
`proctor run` against it on both transports and on the synthetic SUT, sends the signal (SIGINT, then
SIGTERM) once the timed part is under way, and prints the time from the signal to the process's exit
(median of --repeat), the exit codes (130 after SIGINT, 143 after SIGTERM) and how many runs left a
summary marked incomplete.

    python bench/ctrl_c_stop.py [--repeat 5] [--signal INT|TERM]
"""

from __future__ import annotations

import argparse
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _stop_time(spec: str, out: Path, sig: signal.Signals) -> tuple[float, int, bool]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "proctor", "run", "--sut", spec, "--scenario", "Server", "--no-trace", "-o", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    detail = out / "mlperf_log_detail.txt"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if detail.is_file() and "Starting performance mode" in detail.read_text(errors="replace"):
            break
        time.sleep(0.05)
    time.sleep(1.0)  # requests in flight
    t = time.monotonic()
    proc.send_signal(sig)
    rc = proc.wait(timeout=60)
    elapsed = time.monotonic() - t
    summary = out / "mlperf_log_summary.txt"
    marked = summary.is_file() and "Run incomplete: interrupted" in summary.read_text(errors="replace")
    return elapsed, rc, marked


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--signal", choices=("INT", "TERM"), action="append", help="default: both")
    args = ap.parse_args()
    server = subprocess.Popen(
        [sys.executable, "-m", "proctor", "serve", "llm", "--port", "0", "--ttft-ms", "50", "--tpot-ms", "50"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    try:
        assert server.stdout is not None
        url = next(w for w in server.stdout.readline().split() if w.startswith("http://"))
        specs = {
            "openai http=raw": f"openai:url={url},synthetic=64,max_tokens=200",
            "openai http=aiohttp": f"openai:url={url},synthetic=64,max_tokens=200,http=aiohttp",
            "synthetic": "synthetic:service_us=200000,workers=2",
        }
        signals = [signal.Signals[f"SIG{name}"] for name in (args.signal or ["INT", "TERM"])]
        print(f"{'SUT':<22}{'signal':<9}{'median stop (s)':>16}{'max (s)':>10}  exit codes  marked incomplete")
        with tempfile.TemporaryDirectory() as tmp:
            for sig in signals:
                for name, spec in specs.items():
                    runs = [
                        _stop_time(spec, Path(tmp) / f"{sig.name}_{name.replace(' ', '_')}{k}", sig)
                        for k in range(args.repeat)
                    ]
                    times = [t for t, _, _ in runs]
                    codes = sorted({rc for _, rc, _ in runs})
                    marked = sum(m for _, _, m in runs)
                    print(f"{name:<22}{sig.name:<9}{statistics.median(times):>16.2f}{max(times):>10.2f}  "
                          f"{codes!s:<10}  {marked}/{len(runs)}")
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
