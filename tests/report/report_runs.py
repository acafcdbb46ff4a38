"""Short generated runs for the report tests: an instant SUT through the real engine, trace on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from proctor.loadgen import completion
from proctor.loadgen.engine import run_test
from proctor.loadgen.settings import LogOutputSettings, LogSettings, TestSettings
from proctor.loadgen.types import QuerySampleResponse, Scenario, TestMode
from proctor.suts.synthetic import InMemoryQSL

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"


class InstantSUT:
    """Answers every sample at once."""

    name = "instant"

    def issue_query(self, samples):
        completion.query_samples_complete([QuerySampleResponse(s.id, np.int64(s.index).tobytes()) for s in samples])

    def flush_queries(self):
        pass


def make_run(outdir: Path, scenario: Scenario = Scenario.SERVER, qps: float = 2000.0, queries: int = 300) -> Path:
    outdir.mkdir(parents=True, exist_ok=True)
    settings = TestSettings(
        scenario=scenario, mode=TestMode.PERFORMANCE_ONLY, min_duration_ms=50, min_query_count=queries,
        server_target_qps=qps, offline_expected_qps=qps, single_stream_expected_latency_ns=100_000,
    )
    logs = LogSettings(log_output=LogOutputSettings(outdir=str(outdir)), enable_trace=True)
    run_test(InstantSUT(), InMemoryQSL(64, 64), settings, logs)
    return outdir


def make_llm_run(outdir: Path, qps: float = 1000.0, queries: int = 300, tokens: int = 8) -> tuple[Path, Any]:
    """A Server run with token latencies (a synthetic streaming SUT): the trace carries every proctor arg."""
    from proctor.suts.synthetic import SyntheticParams, SyntheticSUT

    outdir.mkdir(parents=True, exist_ok=True)
    settings = TestSettings(
        scenario=Scenario.SERVER, mode=TestMode.PERFORMANCE_ONLY, min_duration_ms=50, min_query_count=queries,
        server_target_qps=qps, use_token_latencies=True,
    )
    logs = LogSettings(log_output=LogOutputSettings(outdir=str(outdir)), enable_trace=True)
    sut = SyntheticSUT(SyntheticParams(service_us=300, workers=2, tokens=tokens, dist="lognormal"))
    try:
        out = run_test(sut, InMemoryQSL(64, 64), settings, logs, audit_config=None)
    finally:
        sut.close()
    return outdir, out
