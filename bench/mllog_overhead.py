"""Cost of one logged event: proctor's mllog against the official `mlperf_logging.mllog`.

    python bench/mllog_overhead.py [--events 20000]

Both loggers write the same lines to a file in the same temporary folder (the official one through
its `logging.FileHandler`, as `mllog.config(filename=...)` sets it up); the script prints the
microseconds per event of each and the ratio (goal: proctor at most a tenth of the official).
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from pathlib import Path

from proctor.training import mllog as pm


def _loop(logger, n: int) -> float:
    t = time.perf_counter()
    for i in range(n):
        logger.event("train_loss", 3.25, metadata={"samples_count": i * 32, "step_num": i})
    return (time.perf_counter() - t) / n * 1e6


def main() -> None:
    from mlperf_logging.mllog import mllog as om

    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=20000)
    n = ap.parse_args().events
    with tempfile.TemporaryDirectory() as tmp:
        lg = logging.getLogger("bench_official_mllog")
        lg.propagate = False
        lg.setLevel(logging.INFO)
        lg.addHandler(logging.FileHandler(Path(tmp) / "official.txt"))
        official = om.MLLogger(logger=lg)
        ours = pm.MLLogger(stream=open(Path(tmp) / "proctor.txt", "w"))  # noqa: SIM115
        _loop(official, 500), _loop(ours, 500)  # warm up
        us_official = min(_loop(official, n) for _ in range(3))
        us_ours = min(_loop(ours, n) for _ in range(3))
        ours.close()
        for h in lg.handlers:
            h.close()
        same = (Path(tmp) / "official.txt").stat().st_size == (Path(tmp) / "proctor.txt").stat().st_size
    print(f"official mllog: {us_official:.1f} us/event")
    print(f"proctor mllog:  {us_ours:.1f} us/event")
    print(f"ratio: {us_ours / us_official:.3f} (goal <= 0.1); output sizes {'equal' if same else 'differ'}")


if __name__ == "__main__":
    main()
