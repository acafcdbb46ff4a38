"""`python -m proctor.workloads.digits_train`: one run, the entry point torchrun launches per rank."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from proctor.workloads.digits_train import DEFAULT_BATCH_SIZE


def main(
    output: Annotated[Path, typer.Option(help="result_<i>.txt to write (rank 0 writes)")],
    seed: Annotated[int, typer.Option(help="the run's seed")],
    batch_size: Annotated[int, typer.Option(help="global batch size")] = DEFAULT_BATCH_SIZE,
    backend: Annotated[str, typer.Option(help="sklearn or torch")] = "torch",
    division: Annotated[str, typer.Option(help="closed or open")] = "closed",
    platform: Annotated[str, typer.Option(help="submission_platform")] = "local-cpu",
) -> None:
    from proctor.workloads.digits_train.train import train_run

    r = train_run(
        output, seed=seed, batch_size=batch_size, backend=backend, division=division, platform=platform
    )
    if int(os.environ.get("RANK", "0") or 0) == 0:
        typer.echo(
            f"{r.status} samples_to_converge={r.samples_to_converge} accuracy={r.accuracy:.4f} "
            f"world_size={r.world_size}"
        )


if __name__ == "__main__":
    typer.run(main)
