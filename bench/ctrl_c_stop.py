"""How long `proctor run` takes to stop after Ctrl-C or SIGTERM, drain included (the goal: <= 1 s by
default), and whether the logs it leaves are whole and marked incomplete.

Starts `proctor serve llm` (slow streams, so requests are in flight when the signal comes), runs
`proctor run` against it on both transports and on the synthetic SUT (Server), and an Offline run
of the digits SUT (its batcher busy with millions of queued samples), sends the signal (SIGINT, then
SIGTERM) once the timed part is under way, and prints the time from the signal to the process's exit
(median of --repeat), the exit codes (130 after SIGINT, 143 after SIGTERM) and how many runs left
whole logs (a summary and detail log marked incomplete, a samples file that reads). `--hogs N` runs
N CPU-bound processes beside it (issue 33 §4: <= 1 s beside two); the 1-minute load is printed.

    python bench/ctrl_c_stop.py [--repeat 5] [--signal INT|TERM] [--hogs 2] [--only digits]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Offline digits: ~10M samples at the requested rate, so the query is far from done at the signal
DIGITS_OFFLINE = ["--scenario", "Offline", "--target-qps", "300000", "--duration-ms", "30000", "--no-report"]


def _whole(out: Path) -> bool:
    """The logs of an interrupted run are whole: the summary and the detail log say incomplete, and the
    samples file reads (it exists once the performance phase began: a stop during start-up leaves none)."""
    from proctor.loadgen.logs.reader import read_detail
    from proctor.loadgen.logs.samples import read_samples
    from proctor.loadgen.logs.summary import INCOMPLETE_MARK

    summary = out / "mlperf_log_summary.txt"
    if not summary.is_file() or f"{INCOMPLETE_MARK} interrupted" not in summary.read_text(errors="replace"):
        return False
    try:
        if "interrupted" not in str(read_detail(out / "mlperf_log_detail.txt").require("proctor_run_incomplete")):
            return False
        if (out / "mlperf_log_samples.bin").exists():
            read_samples(out / "mlperf_log_samples.bin")
    except Exception:  # noqa: BLE001 - any failure to read is a log that is not whole
        return False
    return True


def _stop_time(spec: str, out: Path, sig: signal.Signals, args: list[str] | None = None,
               after: float = 1.0) -> tuple[float, int, bool]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "proctor", "run", "--sut", spec,
         *(args or ["--scenario", "Server"]), "--no-trace", "-o", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    detail = out / "mlperf_log_detail.txt"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if detail.is_file() and "Starting performance mode" in detail.read_text(errors="replace"):
            break
        time.sleep(0.05)
    time.sleep(after)  # requests in flight
    t = time.monotonic()
    proc.send_signal(sig)
    rc = proc.wait(timeout=60)
    return time.monotonic() - t, rc, _whole(out)


def _bytecode() -> str:
    """Whether proctor's modules load from cached bytecode, as an installed proctor's do: a stopped run
    imports its report's modules after the signal, and compiling them from source costs a few
    tenths of a second (`python -m compileall` on the package caches them)."""
    import proctor

    cache = Path(proctor.__file__).parent / "report" / "__pycache__"
    return "bytecode cached" if cache.is_dir() and any(cache.iterdir()) else "modules compiled from source on each run"


def _hogs(n: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--signal", choices=("INT", "TERM"), action="append", help="default: both")
    ap.add_argument("--hogs", type=int, default=0, help="CPU-bound processes beside the runs")
    ap.add_argument("--after", type=float, default=1.0, help="seconds from the performance phase's start to the signal")
    ap.add_argument("--only", default="", help="comma list of SUT names (prefixes): openai, synthetic, digits")
    args = ap.parse_args()
    server = subprocess.Popen(
        [sys.executable, "-m", "proctor", "serve", "llm", "--port", "0", "--ttft-ms", "50", "--tpot-ms", "50"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    hogs = _hogs(args.hogs)
    try:
        assert server.stdout is not None
        url = next(w for w in server.stdout.readline().split() if w.startswith("http://"))
        specs: dict[str, tuple[str, list[str] | None]] = {
            "openai http=raw": (f"openai:url={url},synthetic=64,max_tokens=200", None),
            "openai http=aiohttp": (f"openai:url={url},synthetic=64,max_tokens=200,http=aiohttp", None),
            "synthetic": ("synthetic:service_us=200000,workers=2", None),
            "digits Offline": ("digits", DIGITS_OFFLINE),
        }
        only = [w for w in args.only.split(",") if w]
        specs = {k: v for k, v in specs.items() if not only or any(k.startswith(w) for w in only)}
        signals = [signal.Signals[f"SIG{name}"] for name in (args.signal or ["INT", "TERM"])]
        print(f"1-min load {os.getloadavg()[0]:.2f}; {args.hogs} CPU hog(s) beside the runs; {os.cpu_count()} CPUs; "
              f"signal {args.after:g} s into the performance phase; {_bytecode()}")
        print(f"{'SUT':<22}{'signal':<9}{'median stop (s)':>16}{'max (s)':>10}  exit codes  logs whole")
        with tempfile.TemporaryDirectory() as tmp:
            for sig in signals:
                for name, (spec, extra) in specs.items():
                    runs = [
                        _stop_time(spec, Path(tmp) / f"{sig.name}_{name.replace(' ', '_')}{k}", sig, extra, args.after)
                        for k in range(args.repeat)
                    ]
                    times = [t for t, _, _ in runs]
                    codes = sorted({rc for _, rc, _ in runs})
                    whole = sum(w for _, _, w in runs)
                    print(f"{name:<22}{sig.name:<9}{statistics.median(times):>16.2f}{max(times):>10.2f}  "
                          f"{codes!s:<10}  {whole}/{len(runs)}")
        print(f"1-min load after: {os.getloadavg()[0]:.2f}")
    finally:
        for h in hogs:
            h.kill()
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
