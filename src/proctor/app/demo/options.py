"""What the demo is asked to do: its options, each mode's durations, and the names it submits under."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from proctor.typed_records import record

SUBMITTER = "proctor"
SYSTEM = "local-cpu"
DEMO_BASE_SEED = 7  # seeds of the demo's training runs (the RCPs used another stream)
# SingleStream generates queries until 2 x min_duration at `expected latency` apart, and ends once
# min_duration and min_query_count are met: running out is an error, generating more only costs
# memory. A digits query crosses two thread hand-offs and a numpy call, so it cannot complete in
# under 10 us; generating for 20 us per query (x2 by the official rule) cannot run out.
SS_BOUND_MS = 0.02

Echo = Callable[[str], None]  # where the demo says what it is doing


def quiet(_msg: str) -> None:
    """An Echo that says nothing (`--json`)."""


@record(frozen=True, slots=True)
class Durations:
    """How long each performance run lasts (ms) and how hard it is driven."""

    min_duration_ms: int | None  # None: the rules' value from mlperf.conf
    server_min_duration_ms: int | None  # Server needs thousands of queries for early stopping at p99
    server_qps_cap: float
    probe_ms: int
    ss_bound_ms: float = SS_BOUND_MS  # 600 s at 20 us would generate 60M queries: full uses more

    def for_scenario(self, scenario: str) -> int | None:
        return self.server_min_duration_ms if scenario == "Server" else self.min_duration_ms


DEFAULT = Durations(
    min_duration_ms=15_000, server_min_duration_ms=15_000, server_qps_cap=1000.0, probe_ms=200
)
QUICK = Durations(min_duration_ms=1_000, server_min_duration_ms=4_000, server_qps_cap=1000.0, probe_ms=200)
FULL = Durations(
    min_duration_ms=None, server_min_duration_ms=None, server_qps_cap=1500.0, probe_ms=1_000, ss_bound_ms=0.04
)


@record(frozen=True, slots=True)
class DemoOptions:
    output: Path = Path("proctor-demo")
    full: bool = False
    quick: bool = False
    training_runs: int | None = None
    backend: str = "sklearn"
    base_seed: int = DEMO_BASE_SEED
    batch_size: int | None = None
    inference: bool = True
    training: bool = True

    @property
    def durations(self) -> Durations:
        return FULL if self.full else (QUICK if self.quick else DEFAULT)

    @property
    def audit_durations(self) -> Durations:
        """The audit runs: the rules' durations in --full, else the quick demo's (a few seconds)."""
        return FULL if self.full else QUICK

    @property
    def mode(self) -> str:
        return "full" if self.full else ("quick" if self.quick else "demo")


__all__ = ["DEFAULT", "FULL", "QUICK", "SUBMITTER", "SYSTEM", "DemoOptions", "Durations", "Echo", "quiet"]
