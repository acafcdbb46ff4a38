"""Real LoadGen logs made in a test's temporary folder: short runs of the official LoadGen
(mlcommons-loadgen, when installed) and of proctor's engine, every scenario, for tests that read or
forge them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from proctor.loadgen import completion
from proctor.loadgen.engine import run_test
from proctor.loadgen.settings import LogOutputSettings, LogSettings, TestSettings
from proctor.loadgen.types import QuerySampleResponse, Scenario, TestMode
from proctor.suts.synthetic import InMemoryQSL, SyntheticParams, SyntheticSUT


def run_official(lg: Any, outdir: Path, scenario: Any, tokens: bool = False, mode: Any = None, qsl: int = 64,
                 **kw: Any) -> Path:
    """One run of the official LoadGen (`lg`: the mlperf_loadgen module) with an inline SUT."""
    outdir.mkdir(parents=True, exist_ok=True)
    s = lg.TestSettings()
    s.scenario, s.mode = scenario, mode if mode is not None else lg.TestMode.PerformanceOnly
    s.use_token_latencies = tokens
    for k, v in kw.items():
        setattr(s, k, v)
    keep = []

    def issue(qs: Any) -> None:
        out = []
        for q in qs:
            b = np.array([q.index, 255, 7], np.int32)
            keep.append(b)
            if tokens and scenario != lg.TestScenario.Offline:
                lg.FirstTokenComplete([lg.QuerySampleResponse(q.id, b.ctypes.data, 4, 1)])
            out.append(
                lg.QuerySampleResponse(q.id, b.ctypes.data, b.nbytes, 3)
                if tokens
                else lg.QuerySampleResponse(q.id, b.ctypes.data, b.nbytes)
            )
        lg.QuerySamplesComplete(out)

    sut = lg.ConstructSUT(issue, lambda: None)
    q = lg.ConstructQSL(qsl, qsl, lambda x: None, lambda x: None)
    ls = lg.LogSettings()
    ls.log_output.outdir = str(outdir)
    ls.enable_trace = False
    lg.StartTestWithLogSettings(sut, q, s, ls)
    lg.DestroyQSL(q)
    lg.DestroySUT(sut)
    return outdir


def official_runs(lg: Any, base: Path) -> dict[str, Path]:
    """Valid runs of every scenario (and token runs), plus runs LoadGen judged INVALID for a part."""
    S = lg.TestScenario
    return {
        "official_ss": run_official(lg, base / "ss", S.SingleStream, min_duration_ms=100,
                                    single_stream_expected_latency_ns=100_000),
        "official_ms": run_official(lg, base / "ms", S.MultiStream, min_duration_ms=50, min_query_count=700,
                                    multi_stream_expected_latency_ns=50_000),
        "official_server": run_official(lg, base / "server", S.Server, min_duration_ms=400, server_target_qps=2000,
                                        server_target_latency_ns=10_000_000),
        "official_offline": run_official(lg, base / "offline", S.Offline, min_duration_ms=50,
                                         offline_expected_qps=1000),
        "official_server_tok": run_official(lg, base / "server_tok", S.Server, True, min_duration_ms=200,
                                            server_target_qps=2000, server_target_latency_ns=10_000_000),
        "official_ss_tok": run_official(lg, base / "ss_tok", S.SingleStream, True, min_duration_ms=50,
                                        min_query_count=700, single_stream_expected_latency_ns=1_000_000),
        # INVALID: the latency bound (1 ns), and too few queries for early stopping
        "official_server_bad": run_official(lg, base / "server_bad", S.Server, min_duration_ms=100,
                                            server_target_qps=2000, server_target_latency_ns=1),
        "official_ss_short": run_official(lg, base / "ss_short", S.SingleStream, min_duration_ms=50,
                                          min_query_count=10, max_query_count=30,
                                          single_stream_expected_latency_ns=10_000_000),
    }


class InstantSUT:
    """Answers every sample at once."""

    name = "instant"

    def issue_query(self, samples: Any) -> None:
        completion.query_samples_complete([QuerySampleResponse(s.id, np.int64(s.index).tobytes()) for s in samples])

    def flush_queries(self) -> None:
        pass


class HalfFailingSUT:
    """Fails the samples of odd index (an HTTP 500, say): errors in the log, and no result for them."""

    name = "half-failing"

    def issue_query(self, samples: Any) -> None:
        bad = [s.id for s in samples if s.index % 2 == 1]
        if bad:
            completion.fail_samples(bad, "HTTP 500 from the test's endpoint")
        completion.query_samples_complete(
            [QuerySampleResponse(s.id, np.int64(s.index).tobytes()) for s in samples if s.index % 2 == 0]
        )

    def flush_queries(self) -> None:
        pass


def proctor_run(outdir: Path, sut: Any, **settings: Any) -> Path:
    """One run of proctor's engine into `outdir` (the four official files)."""
    outdir.mkdir(parents=True, exist_ok=True)
    logs = LogSettings(log_output=LogOutputSettings(outdir=str(outdir)), enable_trace=False)
    try:
        run_test(sut, InMemoryQSL(64, 64), TestSettings(mode=TestMode.PERFORMANCE_ONLY, **settings), logs,
                 audit_config=None)
    finally:
        close = getattr(sut, "close", None)
        if close is not None:
            close()
    return outdir


def proctor_runs(base: Path) -> dict[str, Path]:
    """proctor's engine, every scenario: valid short runs, a token run, the 0.02 s Offline run (the
    rules' 600 s minimum, a query of 660 samples answered at once: INVALID for min duration), and runs
    whose SUT failed half the samples."""

    def synthetic(**kw: Any) -> SyntheticSUT:
        return SyntheticSUT(SyntheticParams(**kw))

    return {
        "proctor_offline": proctor_run(base / "p_offline", synthetic(service_us=2000, workers=1),
                                       scenario=Scenario.OFFLINE, min_duration_ms=100, offline_expected_qps=1000),
        "proctor_server": proctor_run(base / "p_server", synthetic(service_us=200, workers=2),
                                      scenario=Scenario.SERVER, min_duration_ms=300, server_target_qps=1500,
                                      server_target_latency_ns=50_000_000),
        "proctor_ss": proctor_run(base / "p_ss", synthetic(service_us=200, workers=1),
                                  scenario=Scenario.SINGLE_STREAM, min_duration_ms=150,
                                  single_stream_expected_latency_ns=300_000),
        "proctor_ms": proctor_run(base / "p_ms", synthetic(service_us=100, workers=4),
                                  scenario=Scenario.MULTI_STREAM, min_duration_ms=100, min_query_count=700,
                                  multi_stream_expected_latency_ns=300_000),
        "proctor_server_tok": proctor_run(base / "p_server_tok",
                                          synthetic(service_us=300, workers=2, tokens=8, dist="lognormal"),
                                          scenario=Scenario.SERVER, min_duration_ms=300, server_target_qps=1000,
                                          use_token_latencies=True),
        "proctor_offline_short": proctor_run(base / "p_offline_short", InstantSUT(), scenario=Scenario.OFFLINE,
                                             min_duration_ms=600_000, offline_expected_qps=1),
        # failed samples: fewer results than issued samples, the rates taken over the results
        "proctor_server_failing": proctor_run(base / "p_server_failing", HalfFailingSUT(), scenario=Scenario.SERVER,
                                              min_duration_ms=300, server_target_qps=1000),
        "proctor_offline_failing": proctor_run(base / "p_offline_failing", HalfFailingSUT(),
                                               scenario=Scenario.OFFLINE, min_duration_ms=50, offline_expected_qps=1000),
    }
