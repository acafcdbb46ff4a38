"""Where a results tree puts the audits, by round: a module of its own so the command line's option
types load without the benchmark tables."""

from __future__ import annotations

from enum import StrEnum


class Layout(StrEnum):
    RESULTS = "results"  # v6.0+: the audits sit next to performance/ and accuracy/
    COMPLIANCE = "compliance"  # up to v5.1: a separate compliance/ tree


__all__ = ["Layout"]
