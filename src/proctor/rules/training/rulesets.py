"""The training rulesets proctor knows, and the current one: a module of its own so the command
line's `--ruleset` options and defaults load without the tables (each ruleset's tables are
`proctor.training.compliance.get_ruleset(version)`, imported on first use)."""

from __future__ import annotations

# Each ruleset's official compliance tables, one module per ruleset (from the official YAML).
RULESET_MODULES: dict[str, str] = {
    "6.1.0": "proctor.rules.training.ruleset_6_1_0",
    "6.0.0": "proctor.rules.training.ruleset_6_0_0",
    "5.1.0": "proctor.rules.training.ruleset_5_1_0",
    "5.0.0": "proctor.rules.training.ruleset_5_0_0",
    "4.1.0": "proctor.rules.training.ruleset_4_1_0",
    "4.0.0": "proctor.rules.training.ruleset_4_0_0",
}
RULESETS: tuple[str, ...] = tuple(RULESET_MODULES)
CURRENT_RULESET = "6.1.0"  # the default of every command and function that takes a ruleset

# The key that groups the metrics of one evaluation that logs several (a record's `metric_targets`):
# samples_count, except in 3.1.0, whose logs step their evaluations by step_num.
METRIC_STEP_KEYS: dict[str, str] = {"3.1.0": "step_num"}
METRIC_STEP_KEY = "samples_count"


def metric_step_key(ruleset: str | None) -> str:
    """The key a ruleset's multi-metric evaluations are grouped by."""
    return METRIC_STEP_KEYS.get(ruleset or CURRENT_RULESET, METRIC_STEP_KEY)


def unknown_ruleset(version: str) -> str:
    """The message for a ruleset proctor has no tables for."""
    return f"unknown training ruleset {version!r}; known: {', '.join(RULESETS)}"


__all__ = ["CURRENT_RULESET", "METRIC_STEP_KEYS", "RULESETS", "RULESET_MODULES", "metric_step_key", "unknown_ruleset"]
