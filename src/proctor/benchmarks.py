"""`proctor.benchmarks`: the inference benchmark table under the name users look for.

The table itself lives with the other rules-as-data in `proctor.rules.inference`.
"""

from proctor.rules.inference import (
    BENCHMARKS,
    BY_NAME,
    latency_limit,
    required_scenarios,
    resolve,
)
from proctor.rules.rounds import CURRENT_ROUND, SEEDS

__all__ = ["BENCHMARKS", "BY_NAME", "CURRENT_ROUND", "SEEDS", "latency_limit", "required_scenarios", "resolve"]
