"""Launch one `digits_train` run under `torchrun --nproc_per_node K` (gloo on CPU).

torch.distributed does the distribution: this only starts the launcher (`python -m
torch.distributed.run`, torchrun's module) on the workload's entry point and reads the run back from
the log rank 0 wrote, so a distributed run is checked exactly like a single-process one.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from proctor.errors import RunError
from proctor.workloads.digits_train import DEFAULT_BATCH_SIZE


def torchrun_command(
    output: str | Path,
    *,
    seed: int,
    nproc: int = 2,
    batch_size: int = DEFAULT_BATCH_SIZE,
    division: str = "closed",
    platform: str = "local-cpu",
) -> list[str]:
    return [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc_per_node={nproc}",
        "-m",
        "proctor.workloads.digits_train",
        "--backend",
        "torch",
        "--output",
        str(output),
        "--seed",
        str(seed),
        "--batch-size",
        str(batch_size),
        "--division",
        division,
        "--platform",
        platform,
    ]


def run_distributed(
    output: str | Path,
    *,
    seed: int,
    nproc: int = 2,
    batch_size: int = DEFAULT_BATCH_SIZE,
    division: str = "closed",
    platform: str = "local-cpu",
    timeout_s: float = 600.0,
) -> str:
    """Run to the end; returns rank 0's one-line report. RunError with the launcher's output on failure."""
    if nproc < 1:
        raise ValueError("nproc must be at least 1")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.run(
        torchrun_command(
            output, seed=seed, nproc=nproc, batch_size=batch_size, division=division, platform=platform
        ),
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout_s,
        check=False,
    )
    if proc.returncode != 0:
        raise RunError(f"torchrun exited with {proc.returncode}:\n{proc.stdout[-2000:]}{proc.stderr[-4000:]}")
    return proc.stdout.strip()
