"""What a run can be asked for, in a module light enough for the command line's option types:
`proctor --help` builds the options without loading the session and the engine behind it."""

from __future__ import annotations

from enum import StrEnum

QUICK_DURATION_MS = 10_000  # --quick: a 10 s run, marked as not a submission run


class Engine(StrEnum):
    """Which load generator drives the run: proctor's, or the official mlperf_loadgen."""

    PROCTOR = "proctor"
    OFFICIAL = "official"


__all__ = ["QUICK_DURATION_MS", "Engine"]
