"""The scoring rules every training benchmark shares: the olympic drop and the RCP t-test.

"002 §11" is the Training rules' "Run Results"/"Benchmark Results" section (the MLPerf Training
rules text; docs/deviations.md cites it the same way), "002 §13" the RCP section. What differs by
benchmark (its N, a larger drop, how its convergence is counted) is in its record,
`rules/training/benchmarks.py`.
"""

from __future__ import annotations

# Runs dropped on each side by olympic scoring: "dropping the fastest and slowest runs" (002 §11).
# Non-converging runs tolerated: "a single non-converging run may be treated as the slowest run and
# dropped. A benchmark result is invalid if there is more than one non-converging run." (002 §11)
DEFAULT_OLYMPIC_DROP = 1

# RCP t-test (002 §13): one-sided, similar variances, p = 0.05.
RCP_ALPHA = 0.05
RCP_TOLERANCE = 1e-4  # bisection width, as the official checker
