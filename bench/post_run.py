"""What a big Offline run leaves behind and how long it takes after its timed part (issue 23, journey 7).

Runs a >= 1M-sample Offline `proctor run` on the synthetic SUT (each run in a fresh child process,
the session as `proctor run` drives it: logs, summary, samples file, report.html), and prints per
run: the samples, each output file's size and bytes per sample, the timed part (first issue to the
last completion, from the engine's progress hooks), the post-run part (from there to the session's
return: results, logs, samples file or trace, report) and its ratio to the budget, 3 s + 10 % of
the timed part (<= 1.00 meets it). No timed assertion anywhere: a shared machine's figures vary.

    python bench/post_run.py [--samples 1100000] [--trace] [--timed-s 2]

`--trace` adds a run that also writes the Chrome trace (--trace), for comparison.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BUDGET_S, BUDGET_FRACTION = 3.0, 0.10


def child(out: Path, samples: int, timed_s: float, trace: bool) -> dict[str, Any]:
    """One run in this process; the figures as a dict."""
    from proctor.app.session import RunRequest, RunSession
    from proctor.loadgen.progress import ProgressHooks
    from proctor.loadgen.types import Scenario

    marks: dict[str, float] = {}

    class Hooks(ProgressHooks):
        def on_phase(self, mode: Any, schedule: Any, records: Any, tracker: Any) -> None:
            marks["start"] = time.perf_counter()

        def on_phase_end(self, mode: Any, records: Any) -> None:
            marks["end"] = time.perf_counter()

        def on_end(self, outcome: Any) -> None:
            marks["logs"] = time.perf_counter()

    # Offline issues target_qps * min_duration * 1.1 samples; workers serve batches of 8192 so the
    # timed part lasts about timed_s
    duration_ms = 1000
    qps = samples / 1.1
    batches = samples / 8192
    service_us = max(timed_s * 1e6 * 2 / batches, 0.0)  # two workers
    req = RunRequest(
        scenario=Scenario.OFFLINE,
        sut=f"synthetic:workers=2,batch=8192,service_us={service_us:.0f}",
        output_dir=out,
        duration_ms=duration_ms,
        target_qps=qps,
        trace=trace,
        audit_conf=out / "no-audit.config",
    )
    session = RunSession(req)
    session.prepare()
    result = session.execute(progress=Hooks())
    done = time.perf_counter()
    rec = result.outcome.records
    n = 0 if rec is None else int(rec.n_samples_issued)
    files = {p.name: p.stat().st_size for p in sorted(out.iterdir()) if p.is_file()}
    return {"samples": n, "timed_s": marks["end"] - marks["start"], "post_s": done - marks["end"],
            "logs_s": marks["logs"] - marks["end"], "report_s": done - marks["logs"], "files": files,
            "verdict": result.lines[0] if result.lines else ""}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=1_100_000, help="samples in the Offline query (>= 1M)")
    ap.add_argument("--timed-s", type=float, default=2.0, help="about how long the timed part lasts")
    ap.add_argument("--trace", action="store_true", help="also a run with --trace")
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--with-trace", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        print(json.dumps(child(args.child, args.samples, args.timed_s, args.with_trace)))
        return
    for trace in (False, True) if args.trace else (False,):
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [sys.executable, __file__, "--child", str(Path(tmp) / "run"), "--samples", str(args.samples),
                   "--timed-s", str(args.timed_s)] + (["--with-trace"] if trace else [])
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                sys.exit(f"child run failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}")
            r = json.loads(proc.stdout.strip().splitlines()[-1])
        n = max(r["samples"], 1)
        budget = BUDGET_S + BUDGET_FRACTION * r["timed_s"]
        print(f"{'proctor run --trace' if trace else 'proctor run (default)'}: {r['samples']:,} samples; "
              f"{r['verdict'][:100]}")
        for name, size in r["files"].items():
            print(f"  {name:28s} {size:>14,} bytes  {size / n:8.2f} bytes/sample")
        print(f"  timed part {r['timed_s']:.2f} s; after it {r['post_s']:.2f} s (results and logs "
              f"{r['logs_s']:.2f} s, report.html {r['report_s']:.2f} s); budget 3 s + 10 % = {budget:.2f} s; "
              f"ratio {r['post_s'] / budget:.2f}")


if __name__ == "__main__":
    main()
