"""The `digits_train` training loop under proctor's run harness, and a run set of N runs.

The loop is the rules' shape: initialize (model built before the clock), log the hyperparameters and
disclosure keys, start the clock, train on global batches, evaluate on the benchmark's cadence
(every 512 samples, as whole batches), stop the clock when the target is reached (status success)
or at the sample budget (status aborted). Run it distributed with
`torchrun --nproc_per_node 2 -m proctor.workloads.digits_train --backend torch --output result_0.txt`.
"""

from __future__ import annotations

import io
import os
import time
from pathlib import Path

import numpy as np

from proctor.training import constants as C
from proctor.training.harness import TrainingRun
from proctor.training.mllog import MLLogger
from proctor.typed_records import field, record
from proctor.workloads.digits_train import (
    BENCHMARK,
    DEFAULT_BATCH_SIZE,
    LEARNING_RATE,
    MAX_TRAIN_SAMPLES,
)
from proctor.workloads.digits_train.backends import make_backend
from proctor.workloads.digits_train.data import BatchOrder, load_split
from proctor.workloads.digits_train.spec import OPT_NAME, SPEC


@record(frozen=True, slots=True)
class RunResult:
    seed: int
    batch_size: int
    backend: str
    status: str  # "success" or "aborted"
    samples_to_converge: int | None  # samples_count of the evaluation that reached the target
    accuracy: float  # the last evaluation
    evals: int
    seconds: float  # wall time of the timed part (run_start .. run_stop)
    path: Path | None = None
    world_size: int = 1
    accuracies: tuple[float, ...] = field(default=(), repr=False)


def train_run(
    output: str | Path | None,
    *,
    seed: int,
    batch_size: int = DEFAULT_BATCH_SIZE,
    backend: str = "sklearn",
    division: str = "closed",
    learning_rate: float = LEARNING_RATE,
    max_samples: int = MAX_TRAIN_SAMPLES,
    org: str = "proctor",
    platform: str = "local-cpu",
    config_filename: str | None = None,
) -> RunResult:
    """One run; writes its MLLOG to `output` (rank 0 only; None: no log, for reference RCPs)."""
    split = load_split()
    rank = int(os.environ.get("RANK", "0") or 0)  # torchrun's; the sklearn path never imports torch
    quiet = MLLogger(stream=_Discard()) if output is None else None  # reference runs log nothing
    with TrainingRun(
        BENCHMARK, division, output, seed=seed, org=org, platform=platform, spec=SPEC, rank=rank, logger=quiet
    ) as run:
        be = make_backend(backend, split, seed=seed, batch_size=batch_size, learning_rate=learning_rate)
        try:
            run.log_hyperparameters(
                {
                    C.GLOBAL_BATCH_SIZE: batch_size,
                    C.GRADIENT_ACCUMULATION_STEPS: 1,
                    C.OPT_NAME: OPT_NAME,
                    C.OPT_BASE_LR: learning_rate,
                    C.TRAIN_SAMPLES: int(split.x_train.shape[0]),
                    C.EVAL_SAMPLES: int(split.x_eval.shape[0]),
                    C.LOWEST_NUMERICAL_PRECISION_IN_LINEAR: be.precision,
                    C.LOWEST_NUMERICAL_PRECISION_IN_ATTN: be.precision,  # no attention: the model's lowest
                    C.LOWEST_NUMERICAL_PRECISION_IN_COMM: be.precision,
                    C.TENSOR_PARALLELISM: 1,
                    C.PIPELINE_PARALLELISM: 1,
                    C.CONTEXT_PARALLELISM: 1,
                    C.EXPERT_PARALLELISM: 1,
                    C.MICRO_BATCH_SIZE: batch_size // be.world_size,
                    C.CONFIG_FILENAME: config_filename or f"digits_train_{backend}_bs{batch_size}",
                }
            )
            order = BatchOrder(int(split.x_train.shape[0]), batch_size, seed)
            accs: list[float] = []
            seen, status, reached_at = 0, C.ABORTED, None
            t0 = time.perf_counter()
            run.start()  # the harness opens and closes the training blocks around evaluations
            while seen < max_samples:
                be.train_step(order.next())
                seen += batch_size
                if run.should_eval(seen):
                    accs.append(be.evaluate())
                    if run.eval(accs[-1], samples_count=seen):
                        status, reached_at = C.SUCCESS, seen
                        break
            run.stop(status)
            seconds = time.perf_counter() - t0
        finally:
            be.close()
    return RunResult(
        seed,
        batch_size,
        backend,
        status,
        reached_at,
        accs[-1] if accs else float("nan"),
        len(accs),
        seconds,
        Path(output) if output is not None else None,
        be.world_size,
        tuple(accs),
    )


class _Discard(io.StringIO):
    """A stream that keeps nothing (reference runs log nothing)."""

    def write(self, s: str) -> int:
        return len(s)

    def close(self) -> None:
        pass


def run_seeds(n: int, base_seed: int) -> list[int]:
    """N distinct seeds drawn from one base seed, so a run set is reproducible and no seed repeats."""
    seeds: list[int] = []
    ss = np.random.SeedSequence(base_seed)
    while len(seeds) < n:
        for s in ss.generate_state(n, dtype=np.uint32).tolist():
            if s not in seeds and len(seeds) < n:
                seeds.append(int(s) % 2**31)
        ss = ss.spawn(1)[0]
    return seeds


def train_runs(
    directory: str | Path,
    n: int,
    *,
    base_seed: int = 1,
    batch_size: int = DEFAULT_BATCH_SIZE,
    backend: str = "sklearn",
    division: str = "closed",
    org: str = "proctor",
    platform: str = "local-cpu",
) -> list[RunResult]:
    """N runs into `directory/result_<i>.txt`, the layout of results/<system>/<benchmark>/."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    return [
        train_run(
            d / f"result_{i}.txt",
            seed=seed,
            batch_size=batch_size,
            backend=backend,
            division=division,
            org=org,
            platform=platform,
        )
        for i, seed in enumerate(run_seeds(n, base_seed))
    ]
