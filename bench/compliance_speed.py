"""Time proctor's training compliance checker against the official one on a ~100 MB log.

    python bench/compliance_speed.py [--mb 100] [--keep PATH]

The log is a valid 6.1.0 llama31_8b run padded with what real logs carry between the events:
framework output and per-step `:::MLLOG` lines with keys no rule names (rank-tag prefixed). Both
checkers run in this process on the same file; the script prints both times and the ratio
(goal: proctor at least 5x faster) and that the verdicts agree.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

from proctor.training.compliance import check_file
from proctor.training.mllog import encode_line

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root, for tests.support
from tests.support import synthetic_logs as sl  # noqa: E402


def make_log(path: Path, mb: float) -> None:
    events = sl.valid_events("llama31_8b")
    i_run = next(i for i, e in enumerate(events) if e.key == "run_start")
    head, tail = sl.render(events[: i_run + 1]), sl.render(events[i_run + 1 :])
    t0 = events[i_run].time_ms
    chunk = []
    for step in range(1000):
        chunk.append(
            f"[1,0]<stdout>: iteration {step}/1200000 | lr 4.0E-04 | loss 3.{step % 97:02d} | "
            f"grad norm 0.{step % 89:02d} | tokens/s 123456.7\n"
        )
        chunk.append(
            "[1,0]<stdout>:"
            + encode_line(
                "",
                t0 + step,
                "POINT_IN_TIME",
                "train_loss",
                3.0 + step / 1e4,
                {
                    "file": "megatron/training.py",
                    "lineno": 1234,
                    "samples_count": step * 32,
                    "step_num": step,
                },
            )
            + "\n"
        )
    block = "".join(chunk).encode()
    target = int(mb * 1e6)
    with open(path, "wb") as fh:
        fh.write(head.encode())
        written = len(head)
        while written < target:
            fh.write(block)
            written += len(block)
        fh.write(tail.encode())


def official(path: Path) -> bool:
    from mlperf_logging.compliance_checker import mlp_compliance as mlp

    mlp.enqueued_configs.clear()
    logging.disable(logging.CRITICAL)
    try:
        checker = mlp.make_checker("training", "6.1.0", quiet=True, werror=False)
        return bool(checker.check_file(str(path), os.path.join("training_6.1.0", "common.yaml")))
    finally:
        logging.disable(logging.NOTSET)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=100.0)
    ap.add_argument("--keep", type=Path, default=None)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or Path(tmp) / "result_0.txt"
        make_log(path, args.mb)
        size = path.stat().st_size / 1e6
        t = time.perf_counter()
        ours = check_file(path).valid
        t_ours = time.perf_counter() - t
        t = time.perf_counter()
        theirs = official(path)
        t_official = time.perf_counter() - t
    print(f"log: {size:.1f} MB")
    print(f"proctor:  {t_ours:.2f} s  valid={ours}")
    print(f"official: {t_official:.2f} s  valid={theirs}")
    print(
        f"speed-up: {t_official / t_ours:.1f}x (goal >= 5x); verdicts {'agree' if ours == theirs else 'DIFFER'}"
    )


if __name__ == "__main__":
    main()
