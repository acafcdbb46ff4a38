"""The rules-text sections the training tables cite, each written once (a rule's `source`).

The MLPerf Training rules text, by section; a rule cites the section that makes it a rule, and
the words after the colon say which part of the section, or why the official checker enforces it.
"""

from __future__ import annotations

BENCHMARKS = "§3 Benchmarks"
CLOSED_TARGET = (
    "§3 Benchmarks: closed quality targets; §9 Training Loop: quality measure and evaluation frequency"
)
DIVISIONS = "§4 Divisions"
DISCLOSURE = (
    "§5 Basics: v6.1 precision, parallelism and config disclosure "
    "(exactly once, allowed formats, positive integers)"
)
CACHE_FLUSH = "§6 Data Set: flush the cache or restart the system prior to benchmarking"
HYPERPARAMETERS = "§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)"
OPEN_HYPERPARAMETERS = "§9 Training Loop: OPEN hyperparameters (as the official open table enforces)"
EVALUATION = "§9 Training Loop: evaluation frequency and thoroughness"
EVALUATION_TABLE = "§9 Training Loop: evaluation frequency table"
V6_0_SPECIFIC = "§21 Appendix: v6.0 Specific Rules"
OPEN_TARGET = "§9 Training Loop: OPEN stopping criteria; §3 Benchmarks quality targets"
RUN_CLOCK = "§11 Run Results: the clock starts before the dataset is touched and stops at the target"
INIT_TIME = "§11 Run Results: maximum model initialization time (30 min Closed, 4 h Open)"
SUBMISSION = "§12 Benchmark Results (submission identification; enforced by the official checker)"
