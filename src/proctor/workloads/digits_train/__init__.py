"""`digits_train`: proctor's training reference benchmark on scikit-learn's bundled digits set.

Not an MLCommons benchmark: a reference that runs anywhere in seconds, so every training check
(compliance, seeds, RCP, olympic score) can be shown on real runs with real run-to-run variance.
The numbers below are the benchmark's rules; `reference_rcps.py` measured the shipped RCPs with them.
"""

from __future__ import annotations

BENCHMARK = "digits_train"
QUALITY_TARGET = 0.95  # eval_accuracy on the evaluation split; higher is better
EVAL_EVERY_SAMPLES = 512  # evaluation cadence, in training samples (a multiple of every RCP batch size)
MAX_TRAIN_SAMPLES = 200_000  # a run that has not reached the target by then stops with status aborted
RUNS_PER_SUBMISSION = 5  # N: the olympic score drops the fastest and the slowest of the N runs
RCP_BATCH_SIZES = (32, 64, 128)
DEFAULT_BATCH_SIZE = 128  # an RCP batch size that survives pruning (64 is pruned: slower than interpolated)
HIDDEN_UNITS = 32
LEARNING_RATE = 0.005  # Adam, constant: the reference hyperparameter every RCP was measured with

__all__ = [
    "BENCHMARK",
    "DEFAULT_BATCH_SIZE",
    "EVAL_EVERY_SAMPLES",
    "HIDDEN_UNITS",
    "LEARNING_RATE",
    "MAX_TRAIN_SAMPLES",
    "QUALITY_TARGET",
    "RCP_BATCH_SIZES",
    "RUNS_PER_SUBMISSION",
]
