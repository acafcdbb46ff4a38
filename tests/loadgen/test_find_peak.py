"""FindPeakPerformance: the pure search against a fake capacity, and the engine with a virtual clock."""

from __future__ import annotations

import math
import re

import orjson
import pytest

from proctor.errors import ConfigError
from proctor.loadgen import completion
from proctor.loadgen.clock import ManualClock
from proctor.loadgen.engine import run_test
from proctor.loadgen.find_peak import is_finished, search
from proctor.loadgen.settings import LogOutputSettings, LogSettings, TestSettings
from proctor.loadgen.types import QuerySampleResponse, Scenario, TestMode


def fake(capacity: float):
    calls: list[tuple[float, str]] = []

    def run(qps: float, stage: str):
        calls.append((qps, stage))
        return qps <= capacity, "", ("payload", qps)

    return run, calls


@pytest.mark.parametrize(
    ("start", "step", "decimals", "capacity"),
    [(100.0, 1.0, 1, 1234.5), (10.0, 0.5, 0, 77.0), (1.0, 1.0, 2, 3.3), (50.0, 1.0, -1, 49_999.0)],
)
def test_search_widens_then_bisects_to_the_precision(start, step, decimals, capacity):
    run, calls = fake(capacity)
    logs: list[str] = []
    found = search(run, start, step, decimals, log=logs.append)
    assert found.found
    stages = [s for _, s in calls]
    assert stages[0] == "base" and calls[0][0] == start
    n_boundary = stages.count("boundary")
    assert stages[1 : 1 + n_boundary] == ["boundary"] * n_boundary
    assert set(stages[1 + n_boundary :]) <= {"bisect"}
    # widening multiplies by (1 + step) until the first failure
    for k, (qps, _) in enumerate(calls[1 : 1 + n_boundary], start=1):
        assert qps == pytest.approx(start * (1 + step) ** k)
    assert calls[n_boundary][0] > capacity >= calls[n_boundary - 1][0]
    # the answer: the highest passing probe, below capacity, within the precision of the lowest failing one
    passing = [q for q, _ in calls if q <= capacity]
    failing = [q for q, _ in calls if q > capacity]
    assert found.peak_qps == max(passing) <= capacity < min(failing) == found.upper_qps
    assert is_finished(found.peak_qps, found.upper_qps, decimals)
    scale = 10.0**decimals
    assert math.floor(found.upper_qps * scale) - math.floor(found.peak_qps * scale) <= 1
    assert found.result == ("payload", found.peak_qps)
    assert [p.target_qps for p in found.probes] == [q for q, _ in calls]
    assert [p.passed for p in found.probes] == [q <= capacity for q, _ in calls]
    assert logs[0] == f"FindPeakPerformance: Check validity of the base settings field: {start:f}"
    assert logs[-1] == f"FindPeakPerformance: Found peak performance field: {found.peak_qps:f}"
    assert sum(line.startswith("FindPeakPerformance: probe ") for line in logs) == len(calls)


def test_failing_base_reports_the_base_run():
    run, calls = fake(5.0)
    errors: list[str] = []
    found = search(run, 10.0, 1.0, 1, error=errors.append)
    assert not found.found and found.peak_qps == 10.0 and found.result == ("payload", 10.0)
    assert calls == [(10.0, "base")]
    assert errors and errors[0].startswith("FindPeakPerformance: Initial lower bound does not satisfy")


def test_bad_step_is_refused():
    run, _ = fake(5.0)
    with pytest.raises(ConfigError, match="boundary_step_size"):
        search(run, 1.0, 0.0, 1)


class QueueSUT:
    """One server with a fixed service time on a virtual clock: latency explodes above 1/service QPS."""

    name = "virtual-queue"

    def __init__(self, clock: ManualClock, service_ns: int) -> None:
        self.clock, self.service_ns, self.free_at = clock, service_ns, 0

    def issue_query(self, samples):
        now = self.clock.now_ns()
        self.free_at = max(self.free_at, now) + self.service_ns * len(samples)
        self.clock.sleep_until(self.free_at)  # the issuer sees time pass while we serve
        completion.query_samples_complete([QuerySampleResponse(s.id) for s in samples])

    def flush_queries(self):
        pass


class QSL:
    name, total_sample_count, performance_sample_count = "qsl", 64, 64

    def load_samples(self, indices):
        pass

    def unload_samples(self, indices):
        pass


def test_engine_find_peak_on_a_virtual_queue(tmp_path):
    clock = ManualClock()
    sut = QueueSUT(clock, service_ns=1_000_000)  # capacity 1000 QPS
    ts = TestSettings(
        scenario=Scenario.SERVER,
        mode=TestMode.FIND_PEAK_PERFORMANCE,
        server_target_qps=100.0,
        server_target_latency_ns=10_000_000,
        min_duration_ms=300,
        min_query_count=1,
        server_find_peak_qps_decimals_of_precision=-1,
    )
    seen = []

    class Hooks:
        def on_phase(self, *a):
            pass

        def on_phase_end(self, *a):
            pass

        def on_end(self, *a):
            pass

        def on_probe(self, probe):
            seen.append(probe)

    out = run_test(
        sut,
        QSL(),
        ts,
        LogSettings(LogOutputSettings(outdir=str(tmp_path)), enable_trace=False),
        audit_config=None,
        clock=clock,
        progress=Hooks(),
    )
    found = out.find_peak
    assert found is not None and found.found
    assert seen == found.probes and len(seen) >= 5
    assert [p.target_qps for p in seen[:4]] == [100.0, 200.0, 400.0, 800.0]
    passing = [p.target_qps for p in seen if p.passed]
    failing = [p.target_qps for p in seen if not p.passed]
    assert 400 <= found.peak_qps == max(passing) < min(failing) <= 1600
    assert found.peak_qps < 1100  # 10% over capacity the backlog reaches 30 ms within the run
    assert out.result is not None and out.result.perf_constraints_met
    assert out.effective.target_qps == found.peak_qps
    assert out.result.samples.target <= 10_000_000
    lines = [orjson.loads(x[9:]) for x in (tmp_path / "mlperf_log_detail.txt").read_bytes().splitlines()]
    messages = [r["value"] for r in lines if r["key"] == "generic_message"]
    assert "Starting FindPeakPerformance mode" in messages
    assert sum(m.startswith("FindPeakPerformance: probe ") for m in messages) == len(seen)
    assert f"FindPeakPerformance: Found peak performance field: {found.peak_qps:f}" in messages
    summary = (tmp_path / "mlperf_log_summary.txt").read_text()
    assert re.search(r"target_qps : (\S+)", summary).group(1) == f"{found.peak_qps:g}"


def test_engine_find_peak_refuses_other_scenarios(tmp_path):
    clock = ManualClock()
    ts = TestSettings(scenario=Scenario.OFFLINE, mode=TestMode.FIND_PEAK_PERFORMANCE, min_duration_ms=10)
    out = run_test(
        QueueSUT(clock, 1000),
        QSL(),
        ts,
        LogSettings(LogOutputSettings(outdir=str(tmp_path)), enable_trace=False),
        audit_config=None,
        clock=clock,
    )
    assert out.find_peak is None and out.result is None and out.errors == 1
    assert b"error_invalid_config" in (tmp_path / "mlperf_log_detail.txt").read_bytes()


@pytest.mark.parametrize(("qps", "late", "tokens"), [(200.0, False, False), (2000.0, True, False),
                                                     (200.0, False, True), (2000.0, True, True)])
def test_server_run_that_falls_behind_says_what_it_offered(tmp_path, qps, late, tokens):
    """Each probe's verdict rests on the rate really offered: an issuer held up by a slow SUT warns.
    A token run's bound is its TTFT (its target_latency is 0, and a punctual issuer once warned)."""
    clock = ManualClock()
    bound = {"server_ttft_latency": 10_000_000, "use_token_latencies": True, "server_target_latency_ns": 0} if tokens \
        else {"server_target_latency_ns": 10_000_000}  # mlperf.conf sets an LLM's target_latency to 0
    ts = TestSettings(
        scenario=Scenario.SERVER,
        server_target_qps=qps,
        min_duration_ms=300,
        min_query_count=1,
        **bound,
    )
    out = run_test(
        QueueSUT(clock, 1_000_000),
        QSL(),
        ts,
        LogSettings(LogOutputSettings(outdir=str(tmp_path)), enable_trace=False),
        audit_config=None,
        clock=clock,
    )
    lines = [orjson.loads(x[9:]) for x in (tmp_path / "mlperf_log_detail.txt").read_bytes().splitlines()]
    warnings = [
        r["value"] for r in lines if r["key"] == "warning_generic_message" and "fell behind" in r["value"]
    ]
    assert bool(warnings) == late
    assert (out.result.issue_lateness_p99_ns > 1_000_000) == late
    assert late or 0 < out.result.issue_lateness_p99_ns < 1_000_000  # a little late, within 10 %: no warning
    if late:  # the inline SUT serves 1000 queries/s, so that is what the issuer could offer
        offered = float(re.search(r"it offered ([\d.]+) queries/s", warnings[0]).group(1))
        assert 950 <= offered <= 1050
        assert "1 warning encountered" in (tmp_path / "mlperf_log_summary.txt").read_text()


def test_cli_progress_prints_each_probe_and_the_peak(tmp_path):
    import io

    from rich.console import Console

    from proctor.app.session import peak_lines
    from proctor.cli.peak_progress import PeakProgress
    from proctor.loadgen.find_peak import PeakSearch, Probe

    buf = io.StringIO()
    progress = PeakProgress(Console(file=buf, width=200, color_system=None))
    probes = [Probe(0, "base", 100.0, True, "p99 1 ms"), Probe(1, "boundary", 200.0, False, "p99 20 ms")]
    for p in probes:
        progress.on_probe(p)
    text = buf.getvalue()
    assert "probe 0 (base): target_qps 100.0000 -> PASS  p99 1 ms" in text
    assert "probe 1 (boundary): target_qps 200.0000 -> FAIL  p99 20 ms" in text

    class Outcome:
        find_peak = PeakSearch(100.0, True, None, 100.0, 200.0, probes)

    lines = peak_lines(Outcome())
    assert lines[0].startswith("peak: target_qps 100.0000 after 2 probes")
    assert "FAIL" in lines[2] and "pass" in lines[1]
