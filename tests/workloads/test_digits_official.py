"""The digits SUT driven by the official LoadGen (`mlperf_loadgen`): the same accuracy as the
model, and the same accuracy line as a run on proctor's engine."""

from __future__ import annotations

import re

import pytest

from proctor.suts.batching import official_complete
from proctor.workloads import digits
from proctor.workloads.digits import accuracy
from proctor.workloads.digits.sut import build

pytestmark = pytest.mark.official
lg = pytest.importorskip("mlperf_loadgen")


def run_official(sut, qsl, outdir, scenario: str, mode: str, **fields) -> None:
    """A thin adapter: the official ConstructSUT/ConstructQSL around the digits SUT and QSL."""
    handle_sut = lg.ConstructSUT(sut.issue_query, sut.flush_queries)
    handle_qsl = lg.ConstructQSL(
        qsl.total_sample_count, qsl.performance_sample_count, qsl.load_samples, qsl.unload_samples
    )
    settings = lg.TestSettings()
    settings.scenario = getattr(lg.TestScenario, scenario)
    settings.mode = getattr(lg.TestMode, mode)
    settings.min_duration_ms = 100
    settings.min_query_count = 50
    for key, value in fields.items():
        setattr(settings, key, value)
    log = lg.LogSettings()
    log.log_output.outdir = str(outdir)
    log.enable_trace = False
    try:
        lg.StartTestWithLogSettings(handle_sut, handle_qsl, settings, log, str(outdir / "no-audit.config"))
    finally:
        lg.DestroyQSL(handle_qsl)
        lg.DestroySUT(handle_sut)
        sut.close()


@pytest.mark.parametrize(
    ("precision", "scenario", "line"),
    [
        ("fp32", "Offline", "accuracy=94.167%, good=565, total=600"),
        ("int4", "SingleStream", "accuracy=93.500%, good=561, total=600"),
    ],
)
def test_official_accuracy_run_gives_the_reference_line(tmp_path, precision, scenario, line):
    sut, qsl = build("numpy", precision, max_batch=16, complete=official_complete)
    run_official(sut, qsl, tmp_path, scenario, "AccuracyOnly")
    result = accuracy.evaluate(tmp_path / "mlperf_log_accuracy.json")
    assert result.line() == line
    assert result.total == digits.TOTAL_SAMPLE_COUNT
    assert result.meets(0.99) and result.meets(0.999) == (precision == "fp32")


def test_official_and_proctor_accuracy_logs_agree(tmp_path):
    from proctor.loadgen import LogOutputSettings, LogSettings, Scenario, TestMode, TestSettings, run_test

    (tmp_path / "official").mkdir()
    (tmp_path / "proctor").mkdir()
    sut, qsl = build("numpy", "int8", max_batch=8, complete=official_complete)
    run_official(sut, qsl, tmp_path / "official", "Offline", "AccuracyOnly")
    sut, qsl = build("numpy", "int8", max_batch=8)
    try:
        run_test(
            sut,
            qsl,
            TestSettings(scenario=Scenario.OFFLINE, mode=TestMode.ACCURACY_ONLY),
            LogSettings(log_output=LogOutputSettings(outdir=str(tmp_path / "proctor")), enable_trace=False),
            audit_config=None,
            timeout_s=60,
        )
    finally:
        sut.close()
    a = accuracy.read_predictions(tmp_path / "official" / "mlperf_log_accuracy.json")
    b = accuracy.read_predictions(tmp_path / "proctor" / "mlperf_log_accuracy.json")
    by_index_a = dict(zip(a[0].tolist(), a[1].tolist(), strict=True))
    by_index_b = dict(zip(b[0].tolist(), b[1].tolist(), strict=True))
    assert by_index_a == by_index_b and len(by_index_a) == 600


def test_official_server_run_completes_every_query(tmp_path):
    sut, qsl = build("numpy", "int8", max_batch=16, workers=2, complete=official_complete)
    run_official(sut, qsl, tmp_path, "Server", "PerformanceOnly", server_target_qps=500.0)
    summary = (tmp_path / "mlperf_log_summary.txt").read_text()
    detail = (tmp_path / "mlperf_log_detail.txt").read_text()
    assert "Scenario : Server" in summary
    assert re.search(r"Completed samples per second\s*:\s*[1-9]", summary)
    assert re.search(r'"key": "num_errors", "value": 0\b', detail)
    assert '"key": "error' not in detail
    assert sut.batcher.samples >= 50
