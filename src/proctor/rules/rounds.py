"""The submission rounds proctor knows and what each one fixes apart from the benchmark table: a
module of its own so the command line's `--round` options load without the tables (each round's
table is `proctor.rules.inference_rounds.round_table(name)`)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

# Seeds come from the round's mlperf.conf ("announced four weeks before the submission deadline",
# §Non-determinism is restricted); the checker compares effective_*_rng_seed against them.
# v4.1: tag v4.1 mlperf.conf; v5.0: tag v5.0.1 loadgen/mlperf.conf; v5.1: tag v5.1.1 loadgen/mlperf.conf
# (each equal to that tag's submission_checker.py MODEL_CONFIG[round]["seeds"]).
SEEDS: dict[str, tuple[int, int, int]] = {
    "v4.1": (3066443479025735752, 10688027786191513374, 14962580496156340209),
    "v5.0": (6023615788873153749, 15036839855038426416, 9933818062894767841),
    "v5.1": (1780908523862526354, 14771362308971278857, 18209322760996052031),
    "v6.0": (2465351861681999779, 14276810075590677512, 3936089224930324775),
    "v6.1": (2085463073848966840, 2747215439041700203, 16159082839903944936),
}
ROUNDS: tuple[str, ...] = tuple(SEEDS)
CURRENT_ROUND = "v6.1"
SEED_KEYS = ("qsl_rng_seed", "sample_index_rng_seed", "schedule_rng_seed")


class Layout(StrEnum):
    """Where a round's submission tree keeps the implementation, the audits and the measurements
    (the official checker's paths for that round; a round names its layout in its InferenceRound)."""

    RESULTS = "results"  # v6.0+: audits and measurements next to performance/ and accuracy/; src/
    COMPLIANCE = "compliance"  # up to v5.1: compliance/ and measurements/ trees of their own; code/

    @property
    def code_folder(self) -> str:
        """The submitter folder holding the implementation's source."""
        return "src" if self is Layout.RESULTS else "code"

    def audit_dir(self, submitter: Path, system: str, benchmark: str, scenario: str, audit: str) -> Path:
        """Where an audit's folder (TEST01, ...) of one result sits under `<division>/<submitter>`."""
        return submitter / self.value / system / benchmark / scenario / audit

    def measurements_dir(self, submitter: Path, system: str, benchmark: str, scenario: str) -> Path:
        """The folder holding a result's measurements JSON, README.md and user.conf."""
        top = "results" if self is Layout.RESULTS else "measurements"
        return submitter / top / system / benchmark / scenario

    def measurements_name(self, system: str) -> str:
        """The measurements JSON's file name in that folder."""
        return "measurements.json" if self is Layout.RESULTS else f"{system}.json"


def unknown_round(version: str) -> str:
    """The one-line message for a round proctor has no table for."""
    return f"{version!r} is not a known round; use one of {', '.join(ROUNDS)}"


__all__ = ["CURRENT_ROUND", "Layout", "ROUNDS", "SEEDS", "SEED_KEYS", "unknown_round"]
