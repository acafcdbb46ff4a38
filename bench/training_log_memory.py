"""Peak memory of `proctor training check-log` on a large log of evaluation lines (goal: < 200 MB RSS).

    python bench/training_log_memory.py [--mb 200] [--keep PATH]

The log is a valid 6.1.0 llama31_8b run whose run is followed by evaluation lines (eval_start,
eval_accuracy, eval_stop: keys the rules name, so the checker cannot skip them) up to the size
asked for. The checker runs in a child process (`python -m proctor training check-log FILE`); its
peak resident set comes from getrusage(RUSAGE_CHILDREN).ru_maxrss. Prints the size, the verdict's
exit status, the time and the peak RSS in MiB.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from proctor.training.mllog import encode_line

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root, for tests.support
from tests.support import synthetic_logs as sl  # noqa: E402


def make_log(path: Path, mb: float) -> None:
    """A valid run, then evaluation lines until the file is `mb` megabytes."""
    events = sl.valid_events("llama31_8b")
    i_stop = next(i for i, e in enumerate(events) if e.key == "run_stop")
    head, tail = sl.render(events[:i_stop]), sl.render(events[i_stop:])
    t = events[i_stop - 1].time_ms
    target = int(mb * 1_000_000)
    md = {"file": "train.py", "lineno": 10}
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(head)
        size, n = len(head), 0
        while size < target:
            n += 1
            t += 1.0
            meta = {**md, "samples_count": 1_000_000 + n}
            block = "".join(
                encode_line("", t, et, key, value, meta) + "\n"
                for key, value, et in (
                    ("eval_start", None, "INTERVAL_START"),
                    ("eval_accuracy", 3.5, "POINT_IN_TIME"),
                    ("eval_stop", None, "INTERVAL_END"),
                )
            )
            fh.write(block)
            size += len(block)
        fh.write(tail)


def peak_rss_mib(log: Path) -> tuple[int, float, float]:
    """(exit status, seconds, peak RSS MiB) of the checker in a child process."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "proctor", "training", "check-log", str(log)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    dt = time.perf_counter() - t0
    kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux
    return proc.returncode, dt, kib / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=200.0)
    ap.add_argument("--keep", type=Path, default=None, help="write the log here and keep it")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log = args.keep or Path(tmp) / "result_0.txt"
        make_log(log, args.mb)
        rc, dt, rss = peak_rss_mib(log)
        print(f"log {log.stat().st_size / 1e6:.1f} MB, exit {rc}, {dt:.1f} s, peak RSS {rss:.1f} MiB")


if __name__ == "__main__":
    main()
