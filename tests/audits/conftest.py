"""Audit test helpers: SUTs on a manual clock (timing is exact, so verdicts never depend on load)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from proctor.audits.run import RunLogs, Runner
from proctor.loadgen import completion
from proctor.loadgen.clock import ManualClock
from proctor.loadgen.engine import run_test
from proctor.loadgen.resolve import Overrides, resolve_settings
from proctor.loadgen.settings import LogOutputSettings, LogSettings, TestSettings
from proctor.loadgen.types import QuerySample, QuerySampleResponse, Scenario
from proctor.suts.synthetic import InMemoryQSL

MS = 1_000_000


class ClockedSUT:
    """Answers each sample with its QSL index (8 bytes) after `service_ns` on a manual clock.

    `stale`: a sample seen before in the run gets the previous sample's answer (a response cache
    keyed wrongly: correct in an accuracy run, where each sample comes once). `cache`: the same
    sample twice in a row costs a tenth of the time (a SUT that keeps its last result).
    """

    name = "clocked-sut"

    def __init__(self, clock: ManualClock, service_ns: int = MS, *, stale: bool = False, cache: bool = False):
        self.clock, self.service_ns, self.stale, self.cache = clock, service_ns, stale, cache
        self.seen: set[int] = set()
        self.last = 0

    def issue_query(self, samples: list[QuerySample]) -> None:
        out = []
        for s in samples:
            repeat = s.index in self.seen
            again = self.cache and self.seen and s.index == self.last
            self.clock.advance(self.service_ns // 10 if again else self.service_ns)
            answer = self.last if self.stale and repeat else s.index
            self.seen.add(s.index)
            self.last = s.index
            out.append(QuerySampleResponse(s.id, np.int64(answer).tobytes()))
        completion.query_samples_complete(out)

    def flush_queries(self) -> None:
        pass


def clocked_runner(**sut_kw: object) -> Runner:
    """A runner whose every run gets a fresh manual clock and a fresh ClockedSUT."""

    def run(settings: TestSettings, outdir: Path, conf: Path | None) -> RunLogs:
        clock = ManualClock()
        sut = ClockedSUT(clock, **sut_kw)  # type: ignore[arg-type]
        log = LogSettings(log_output=LogOutputSettings(outdir=str(outdir)), enable_trace=False)
        out = run_test(sut, InMemoryQSL(64, 16), settings, log, audit_config=conf, clock=clock)
        p = out.log_paths
        return RunLogs(p["detail"], p["summary"], p["accuracy"], out.errors, out.incomplete_reason)

    return run


def ss_settings() -> TestSettings:
    return resolve_settings(
        "resnet50",
        Scenario.SINGLE_STREAM,
        None,
        overrides=Overrides(min_duration_ms=100, min_query_count=200, expected_latency_ms=0.1),
    ).settings


def write_accuracy(path: Path, entries: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(entries), encoding="utf-8")
    return path


def write_detail(path: Path, values: dict[str, object], errors: int = 0) -> Path:
    """A minimal detail log: one :::MLLOG line per key (and `errors` error lines)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for key, value in values.items():
        rec = {"key": key, "value": value, "time_ms": 1.0, "namespace": "mlperf::logging",
               "event_type": "POINT_IN_TIME", "metadata": {"is_error": False, "is_warning": False}}
        lines.append(":::MLLOG " + json.dumps(rec))
    for _ in range(errors):
        rec = {"key": "error_runtime", "value": "a LoadGen error", "time_ms": 2.0, "namespace": "mlperf::logging",
               "event_type": "POINT_IN_TIME", "metadata": {"is_error": True, "is_warning": False}}
        lines.append(":::MLLOG " + json.dumps(rec))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_summary(path: Path, scenario: str, score_line: str, valid: bool = True, errors: int = 0,
                  target_latency_ns: int | None = None) -> Path:
    """A summary with the lines TEST04 reads, in LoadGen's spelling."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["=" * 48, "MLPerf Results Summary", "=" * 48, "SUT name : x", f"Scenario : {scenario}",
             "Mode     : PerformanceOnly", score_line, f"Result is : {'VALID' if valid else 'INVALID'}", ""]
    if target_latency_ns is not None:
        lines += ["Test Parameters Used", f"target_latency (ns): {target_latency_ns}"]
    lines.append("No warnings encountered during test.")
    lines.append(f"{errors} ERROR{'S' if errors > 1 else ''} encountered. See detailed log." if errors
                 else "No errors encountered during test.")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def tokens_hex(tokens: list[int], dtype: str = "<i4") -> str:
    return np.asarray(tokens, dtype=dtype).tobytes().hex().upper()


@pytest.fixture
def runner_factory():
    return clocked_runner
