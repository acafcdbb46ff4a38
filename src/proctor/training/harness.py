"""A training-run harness that makes the compliant run the easy path.

    with TrainingRun(benchmark="digits_train", division="closed", output="result_0.txt", seed=7,
                     spec=SPEC) as run:  # a record, as workloads/digits_train/spec.py
        run.log_hyperparameters({"global_batch_size": 64, **disclosure})
        run.start()
        while ...:
            if run.should_eval(samples) and run.eval(acc, samples_count=samples):
                break
        run.stop("success")

It writes the submission keys, `cache_clear`, `init_start`/`init_stop`, the seed (once, through
the logger), the hyperparameters and the nine v6.1 disclosure keys, checking them before the clock
starts; it opens and closes the training blocks around each evaluation itself; it refuses to
start the clock once the initialization limit is spent (rules §11 Run Results: 30 minutes Closed,
4 hours Open); it paces evaluations by the benchmark's cadence (`should_eval`) and tells the
caller when the quality target is reached. Only rank 0 writes (torch.distributed when initialized, else the RANK variable).
"""

from __future__ import annotations

import io
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from proctor.errors import RunError
from proctor.rules.training.benchmarks import TrainingBenchmark, official
from proctor.rules.training.types import Cadence, Line, State
from proctor.training import constants as C
from proctor.training.compliance import DEFAULT_RULESET, get_ruleset, target_reached
from proctor.training.mllog import MLLogger

_PRECISION_KEYS = (
    C.LOWEST_NUMERICAL_PRECISION_IN_LINEAR,
    C.LOWEST_NUMERICAL_PRECISION_IN_ATTN,
    C.LOWEST_NUMERICAL_PRECISION_IN_COMM,
)
_INT_KEYS = (
    C.TENSOR_PARALLELISM,
    C.PIPELINE_PARALLELISM,
    C.CONTEXT_PARALLELISM,
    C.EXPERT_PARALLELISM,
    C.MICRO_BATCH_SIZE,
)


def current_rank() -> int:
    """This process's rank: torch.distributed when it is initialized, else $RANK, else 0."""
    try:
        import torch.distributed as dist  # optional dependency

        if dist.is_available() and dist.is_initialized():
            return int(dist.get_rank())
    except ImportError:
        pass
    return int(os.environ.get("RANK", "0") or 0)


def check_disclosure(key: str, value: Any, ruleset: str = DEFAULT_RULESET) -> str | None:
    """Why a v6.1 disclosure value is not allowed (rules §5 Basics), or None when it is.

    The approved numerical formats are the ruleset's (`Ruleset.precisions`); a ruleset before the
    disclosure keys (before 6.0.0) approves any format.
    """
    precisions = get_ruleset(ruleset).precisions
    if key in _PRECISION_KEYS and precisions and value not in precisions:
        return f"{key}={value!r} is not an approved numerical format ({', '.join(precisions)})"
    if key in _INT_KEYS and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        return f"{key}={value!r} must be a positive integer (unused parallelism dimensions are logged as 1)"
    if key == C.CONFIG_FILENAME and (not isinstance(value, str) or not value):
        return f"{key} must be a non-empty string"
    return None


class TrainingRun:
    """One run of one benchmark: a context manager around the logger (see module docstring)."""

    def __init__(
        self,
        benchmark: str,
        division: str = "closed",
        output: str | Path | None = None,
        *,
        seed: int,
        ruleset: str = DEFAULT_RULESET,
        org: str = "proctor",
        platform: str = "local",
        submission_status: str = "onprem",
        spec: TrainingBenchmark | None = None,
        cadence: Cadence | None = None,
        rank: int | None = None,
        clock: Callable[[], float] = time.time,
        logger: MLLogger | None = None,
        require_disclosure: bool = True,
    ) -> None:
        limits = get_ruleset(ruleset).init_limit_mins
        if division not in limits:
            raise ValueError(f"division must be one of {', '.join(map(repr, limits))}, not {division!r}")
        self._init_limit_ms = limits[division] * 60_000  # rules §11 Run Results
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ValueError(f"seed must be an integer (rules §5 Basics), not {seed!r}")
        self.benchmark, self.division, self.ruleset, self.seed = benchmark, division, ruleset, seed
        self.spec = spec
        self.rank = current_rank() if rank is None else rank
        self._clock = clock
        self.require_disclosure = require_disclosure
        known = official(benchmark)
        self.cadence = cadence or (spec.cadence if spec else None) or (known.cadence if known else None)
        if logger is None:
            logger = MLLogger(stream=_NullStream()) if output is not None else MLLogger()
            if output is not None and self.rank == 0:
                Path(output).parent.mkdir(parents=True, exist_ok=True)
                logger.streams = [open(output, "w", encoding="utf-8")]  # noqa: SIM115 - closed in close()
        self.log = logger
        self.log.enabled = self.rank == 0
        self._submission = {
            C.SUBMISSION_BENCHMARK: benchmark,
            C.SUBMISSION_DIVISION: division,
            C.SUBMISSION_ORG: org,
            C.SUBMISSION_PLATFORM: platform,
            C.SUBMISSION_STATUS: submission_status,
        }
        self.hyperparameters: dict[str, Any] = {}
        self._init_start_ms: float | None = None
        self.started = self.stopped = False
        self._next_eval: int | None = None
        self.reached = False
        self._in_block = False
        self._last_samples = 0

    # --- lifecycle ----------------------------------------------------------------------------
    def _now(self) -> int:
        """The run's clock in ms, as mllog writes time_ms; every line the harness logs carries it, so a
        run on an injected clock logs one timeline (never its clock and the wall clock mixed)."""
        return int(self._clock() * 1e3)

    def __enter__(self) -> TrainingRun:
        self.init()
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if self.started and not self.stopped:
            self.stop(C.ABORTED)
        self.close()

    def close(self) -> None:
        self.log.close()

    def init(self) -> None:
        """Cache cleared, initialization begins, the run identifies itself and logs its seed once."""
        if self._init_start_ms is not None:
            return
        self.log.event(C.CACHE_CLEAR, True, time_ms=self._now(), stack_offset=2)
        self._init_start_ms = self._now()
        self.log.start(C.INIT_START, time_ms=self._init_start_ms, stack_offset=2)
        for key, value in self._submission.items():
            self.log.event(key, value, time_ms=self._now(), stack_offset=2)
        self.log.event(C.SEED, self.seed, time_ms=self._now(), stack_offset=2)

    def log_hyperparameters(self, values: dict[str, Any]) -> None:
        """Log hyperparameters and disclosure keys, each once; bad disclosure values raise before the run."""
        if self.started:
            raise RunError("hyperparameters are logged before run_start")
        for key, value in values.items():
            why = check_disclosure(key, value, self.ruleset)
            if why is not None:
                raise ValueError(why)
            if key in self.hyperparameters:
                raise ValueError(f"{key} is already logged; each key is logged exactly once")
            if key == C.SEED:
                raise ValueError("the seed is logged once by the harness (TrainingRun(seed=...))")
            self.hyperparameters[key] = value
            self.log.event(key, value, time_ms=self._now(), stack_offset=2)

    def start(self) -> None:
        """Initialization ends and the clock starts; refused after the initialization limit."""
        if self.started:
            raise RunError("run_start is logged once")
        self.init()
        if self.require_disclosure:
            missing = [k for k in C.DISCLOSURE_KEYS if k not in self.hyperparameters]
            if missing:
                raise RunError(
                    f"rules §5 Basics (v6.1) require these keys before the run: {', '.join(missing)}"
                )
        now = self._now()
        limit = self._init_limit_ms
        assert self._init_start_ms is not None
        if now - self._init_start_ms >= limit:
            raise RunError(
                f"initialization took {(now - self._init_start_ms) / 60_000:.1f} min, over the "
                f"{limit // 60_000} min {self.division} limit (rules §11 Run Results): the clock "
                "should have started already"
            )
        self.log.end(C.INIT_STOP, time_ms=now, stack_offset=2)
        self.log.start(C.RUN_START, time_ms=self._now(), stack_offset=2)
        self.started = True
        self._block_start(0)
        gbs = self.hyperparameters.get(C.GLOBAL_BATCH_SIZE)
        if self.cadence is not None and isinstance(gbs, int) and gbs > 0:
            self._next_eval = self.cadence.first(gbs)
            self._interval = self.cadence.interval(gbs)

    # --- training loop ------------------------------------------------------------------------
    def should_eval(self, samples_count: int) -> bool:
        """Whether the benchmark's cadence calls for an evaluation at this many training samples."""
        if self._next_eval is None:
            return True
        if samples_count >= self._next_eval:
            while self._next_eval <= samples_count:
                self._next_eval += self._interval
            return True
        return False

    def _block_start(self, samples_count: int) -> None:
        md = {C.SAMPLES_COUNT: samples_count, C.FIRST_EPOCH_NUM: 0, C.EPOCH_COUNT: 1}
        self.log.start(C.BLOCK_START, metadata=md, time_ms=self._now(), stack_offset=3)
        self._in_block = True

    def _block_stop(self, samples_count: int) -> None:
        if self._in_block:
            md = {C.SAMPLES_COUNT: samples_count, C.FIRST_EPOCH_NUM: 0}
            self.log.end(C.BLOCK_STOP, metadata=md, time_ms=self._now(), stack_offset=3)
            self._in_block = False

    def eval(
        self, accuracy: float, *, samples_count: int | None = None, epoch_num: float | None = None
    ) -> bool:
        """Log one evaluation; True when it meets the benchmark's quality target."""
        if not self.started:
            raise RunError("evaluation before run_start")
        md: dict[str, Any] = {}
        if samples_count is not None:
            md[C.SAMPLES_COUNT] = samples_count
        if epoch_num is not None:
            md[C.EPOCH_NUM] = epoch_num
        if not md:
            raise ValueError("eval needs samples_count or epoch_num (the benchmark's reporting rule)")
        want = self.spec.reporting if self.spec else C.SAMPLES_COUNT
        if want not in md:
            raise ValueError(f"{self.benchmark} reports evaluations with {want}")
        self._last_samples = samples_count if samples_count is not None else self._last_samples
        self._block_stop(self._last_samples)
        self.log.start(C.EVAL_START, metadata=md, time_ms=self._now(), stack_offset=2)
        key = self.spec.eval_key if self.spec else C.EVAL_ACCURACY
        self.log.event(key, accuracy, metadata=md, time_ms=self._now(), stack_offset=2)
        self.log.end(C.EVAL_STOP, metadata=md, time_ms=self._now(), stack_offset=2)
        hit = self._target(accuracy, md)
        self.reached = self.reached or hit
        if not hit:
            self._block_start(self._last_samples)
        return hit

    def _target(self, accuracy: float, md: dict[str, Any]) -> bool:
        v = {"value": accuracy, "metadata": md}
        if self.spec is not None and self.spec.target is not None:
            return bool(self.spec.target.fn(State(lambda _n: None, frozenset()), v, Line(0, "", 0.0, v)))
        state = {"global_batch_size": self.hyperparameters.get(C.GLOBAL_BATCH_SIZE)}
        # the closed quality target also ends an Open run by default (rules §9: Open may stop on any
        # criterion but reports the closed quality measure)
        got = target_reached(self.ruleset, "closed", self.benchmark, accuracy, state=state, **md)
        return bool(got)

    def stop(self, status: str = C.SUCCESS) -> None:
        """Stop the clock (run_stop with its status)."""
        if not self.started:
            raise RunError("run_stop before run_start")
        if self.stopped:
            raise RunError("run_stop is logged once")
        self._block_stop(self._last_samples)
        self.log.end(C.RUN_STOP, metadata={C.STATUS: status}, time_ms=self._now(), stack_offset=2)
        self.stopped = True


class _NullStream(io.StringIO):
    """Where a logger writes until the file is opened (rank 0) or forever (other ranks): nowhere."""

    def write(self, s: str) -> int:
        return len(s)
