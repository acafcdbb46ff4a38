"""What a training log's times and values must be for the log to be true: proctor's bounds.

The rules make a run result "a wall-clock timing measurement for a contiguous period" from
run_start to run_stop ("The clock may not be paused during the run", §11 Run Results), and a
quality value a number measured on the trained model (§3 Benchmarks, §9 Training Loop). The
official mllog writes `time_ms = int(time.time() * 1e3)`, milliseconds of the wall clock since 1970.
The rules give no numbers for what a log cannot hold; the bounds below are proctor's, each far
outside every published log (training v5.1, 1,669 logs: run times 0.4 to 242 minutes, backward
clock steps between clock events at most 15 ms, quality values 0.057 to 7.67, counts below 2e7).
"""

from __future__ import annotations

from proctor.typed_records import record

RUN_CLOCK = "§11 Run Results: a wall-clock timing measurement for a contiguous period (the clock may not be paused)"
QUALITY = "§3 Benchmarks: quality targets; §9 Training Loop: the quality measure of each evaluation"
PROGRESS = "§9 Training Loop: evaluation points by epochs or samples (epoch_num, samples_count)"


@record(frozen=True, slots=True)
class Bound:
    value: float
    why: str
    source: str


# Every line: a wall-clock reading in ms since 1970, so not negative and not past 2100-01-01 UTC.
MIN_TIME_MS = Bound(0.0, "time_ms counts milliseconds of the wall clock since 1970", RUN_CLOCK)
MAX_TIME_MS = Bound(
    4_102_444_800_000.0, "time_ms past 2100-01-01 UTC is no wall-clock reading of a run", RUN_CLOCK
)
# Clock events may step back this much behind an earlier clock event: ranks' clocks and NTP slew differ
# by milliseconds (published logs: 15 ms, between ranks' init_start lines). A step back within it
# between two different events is a warning; further back is an error.
CLOCK_JITTER_MS = Bound(1000.0, "the clocks of a run's ranks agree to well within a second", RUN_CLOCK)
# run_stop - run_start: positive, and shorter than 30 days (published runs: under 4.1 hours).
MAX_TIME_TO_TRAIN_MS = Bound(
    30 * 24 * 3600 * 1000.0, "no MLPerf training run takes 30 days (published runs: under 4.1 hours)", RUN_CLOCK
)
# A quality value (accuracy, perplexity, loss, FID, mAP) is a finite number of modest size.
MAX_QUALITY_ABS = Bound(1e6, "no quality measure of a benchmark comes near 1e6 in size", QUALITY)
# Counts of progress in metadata: finite, not negative, exact in a double (2**53).
MAX_COUNT = Bound(float(2**53), "a count past 2**53 is not exact in the log's JSON numbers", PROGRESS)

# The events that mark the run's clock in line order: the clock does not go back from one to the next.
# run_stop is left out (the rules let it be moved back to the timestamp of the first passing checkpoint
# evaluated after the clock stopped, §9); so are the quality lines and eval_start/eval_stop (offline
# evaluation of timestamped checkpoints may be logged after the run, as the Stable Diffusion tables say).
CLOCK_EVENTS = frozenset(
    {"init_start", "init_stop", "run_start", "block_start", "block_stop", "epoch_start", "epoch_stop"}
)
# Keys whose value is the run's quality (the last one is the final quality; the target is checked on them).
QUALITY_KEYS = ("eval_accuracy", "eval_error", "averaged_validation_loss")
# Metadata counts the checkers read from any line (RCP convergence points, block and epoch markers).
COUNT_METADATA = ("samples_count", "epoch_num", "first_epoch_num", "epoch_count", "step_num")

__all__ = [
    "CLOCK_EVENTS",
    "CLOCK_JITTER_MS",
    "COUNT_METADATA",
    "MAX_COUNT",
    "MAX_QUALITY_ABS",
    "MAX_TIME_MS",
    "MAX_TIME_TO_TRAIN_MS",
    "MIN_TIME_MS",
    "QUALITY_KEYS",
    "Bound",
]
