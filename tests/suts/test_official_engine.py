"""proctor SUTs driven by the official mlperf_loadgen: same SUT code, official logs."""

from __future__ import annotations

import numpy as np
import orjson
import pytest

from proctor.loadgen.engine import run_test
from proctor.loadgen.settings import LogOutputSettings, LogSettings, TestSettings
from proctor.loadgen.types import Scenario, TestMode
from proctor.suts.synthetic import from_params

pytestmark = pytest.mark.official


def log_settings(path) -> LogSettings:
    return LogSettings(LogOutputSettings(outdir=str(path)), enable_trace=False)


@pytest.mark.parametrize("api", ["arrays", "objects"])
def test_accuracy_log_matches_proctor_engine(tmp_path, api):
    pytest.importorskip("mlperf_loadgen")
    from proctor.compat.official_engine import run_official

    ts = TestSettings(scenario=Scenario.OFFLINE, mode=TestMode.ACCURACY_ONLY, min_duration_ms=0)
    sut, qsl = from_params(workers="1", service_us="0", batch="16", api=api, total="100", perf="40")
    try:
        off = run_official(sut, qsl, ts, log_settings(tmp_path / "official"), audit_config=None)
    finally:
        sut.close()
    sut2, qsl2 = from_params(workers="1", service_us="0", batch="16", api=api, total="100", perf="40")
    try:
        run_test(sut2, qsl2, ts, log_settings(tmp_path / "proctor"), audit_config=None)
    finally:
        sut2.close()
    assert off.errors == 0, off.error_messages
    assert off.detail["sut_name"] == ("PyFastSUT" if api == "arrays" else sut.name)
    acc_off = orjson.loads((tmp_path / "official" / "mlperf_log_accuracy.json").read_bytes())
    acc_mine = orjson.loads((tmp_path / "proctor" / "mlperf_log_accuracy.json").read_bytes())
    assert len(acc_off) == 100
    for e in acc_off:  # the synthetic payload: the QSL index as 8 little-endian bytes
        assert int.from_bytes(bytes.fromhex(e["data"]), "little") == e["qsl_idx"]
    assert sorted((e["qsl_idx"], e["data"]) for e in acc_off) == sorted(
        (e["qsl_idx"], e["data"]) for e in acc_mine
    )
    assert qsl.ever_loaded.all() and not qsl.loaded.any()  # every sample loaded, all unloaded at the end


def test_server_performance_run_with_worker_threads(tmp_path):
    pytest.importorskip("mlperf_loadgen")
    from proctor.compat.official_engine import run_official

    ts = TestSettings(
        scenario=Scenario.SERVER,
        server_target_qps=500.0,
        server_target_latency_ns=100_000_000,
        min_duration_ms=200,
        min_query_count=50,
    )
    sut, qsl = from_params(workers="2", service_us="100", total="64", perf="64")
    try:
        off = run_official(sut, qsl, ts, log_settings(tmp_path), audit_config=None)
    finally:
        sut.close()
    assert off.errors == 0, off.error_messages
    n = off.detail["result_query_count"]
    assert n == sut.issued_samples and n >= 50
    assert off.metric is not None and off.metric.name == "completed samples per second" and off.metric.value > 0
    assert off.detail["effective_target_qps"] == 500
    assert off.detail["result_min_latency_ns"] >= 100_000  # the service time, measured by the official clock
    assert (tmp_path / "mlperf_log_summary.txt").read_text().count("Scenario : Server") == 1


def test_settings_translate_every_field():
    lg = pytest.importorskip("mlperf_loadgen")
    from proctor.compat.official_engine import official_settings

    ts = TestSettings(
        scenario=Scenario.MULTI_STREAM,
        mode=TestMode.ACCURACY_ONLY,
        min_query_count=77,
        server_ttft_latency=123,
        multi_stream_samples_per_query=4,
        accuracy_log_probability=0.25,
    )
    off = official_settings(lg, ts)
    assert (off.scenario, off.mode) == (lg.TestScenario.MultiStream, lg.TestMode.AccuracyOnly)
    assert (off.min_query_count, off.ttft_latency, off.multi_stream_samples_per_query) == (77, 123, 4)
    assert np.isclose(off.accuracy_log_probability, 0.25)


def test_cli_engine_official_writes_official_logs(tmp_path):
    pytest.importorskip("mlperf_loadgen")
    from typer.testing import CliRunner

    import proctor.cli.run  # noqa: F401  (registers the command)
    from proctor.cli.apps import app

    out = tmp_path / "logs"
    res = CliRunner().invoke(
        app,
        [
            "run",
            "-s",
            "Offline",
            "-m",
            "AccuracyOnly",
            "--engine",
            "official",
            "-o",
            str(out),
            "--sut",
            "synthetic:workers=1,service_us=0,batch=8,total=50,perf=50",
            "--no-trace",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "engine: official mlperf_loadgen" in res.output and "DONE: accuracy run finished" in res.output
    detail = (out / "mlperf_log_detail.txt").read_text()
    assert '"key": "loadgen_version", "value": "6.0' in detail  # written by the official module, not proctor
    entries = orjson.loads((out / "mlperf_log_accuracy.json").read_bytes())
    assert sorted(e["qsl_idx"] for e in entries) == list(range(50))
