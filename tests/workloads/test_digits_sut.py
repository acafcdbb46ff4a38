"""The digits QSL and SUT: the registry factory, both backends, and runs on proctor's engine."""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

from proctor.errors import ConfigError, RunError
from proctor.loadgen.types import QuerySample
from proctor.suts import registry
from proctor.workloads import digits
from proctor.workloads.digits import accuracy, data, model
from proctor.workloads.digits.qsl import DigitsQSL
from proctor.workloads.digits.sut import NumpyBackend, build, from_params

WAIT_S = 30.0


@pytest.fixture(scope="module")
def val():
    v = data.validation()
    return data.preprocess(v.images), v.labels


def collect(n: int):
    got: dict[int, int] = {}
    done = threading.Event()
    lock = threading.Lock()

    def complete(ids: np.ndarray, outputs: np.ndarray | None) -> None:
        assert outputs is not None and outputs.dtype == np.int32 and outputs.shape == (ids.size, 1)
        with lock:
            got.update(zip(ids.tolist(), outputs[:, 0].tolist(), strict=True))
            if len(got) >= n:
                done.set()

    return got, done, complete


def test_qsl_loads_on_demand_and_refuses_unloaded_samples():
    qsl = DigitsQSL()
    assert (qsl.total_sample_count, qsl.performance_sample_count) == (600, 256)
    assert qsl.name == "digits-validation"
    with pytest.raises(RunError, match="not loaded"):
        qsl.batch(np.array([3]))
    qsl.load_samples([3, 5, 5])
    np.testing.assert_array_equal(
        qsl.batch(np.array([5, 3])), data.preprocess(data.validation().images[[5, 3]])
    )
    qsl.unload_samples([5])
    assert qsl.loaded[5] == 1  # loaded twice (MultiStream padding), unloaded once
    qsl.unload_samples([3, 5])
    assert not qsl.loaded.any() and not qsl.features.any()
    with pytest.raises(RunError, match="out of range"):
        qsl.load_samples([600])
    with pytest.raises(ConfigError, match="perf_count"):
        DigitsQSL(601)


@pytest.mark.parametrize("precision", ["fp32", "int8"])
def test_sut_answers_every_sample_with_the_models_prediction(precision, val):
    x, _ = val
    got, done, complete = collect(600)
    sut, qsl = build("numpy", precision, max_batch=32, workers=2, complete=complete)
    qsl.load_samples(list(range(600)))
    sut.issue_query([QuerySample(id=1000 + i, index=i) for i in range(300)])
    sut.issue_query_arrays(np.arange(1300, 1600), np.arange(300, 600))
    sut.flush_queries()
    assert done.wait(WAIT_S)
    sut.close()
    expected = model.build(precision).predict(x)
    assert [got[1000 + i] for i in range(600)] == expected.tolist()
    assert sut.name == f"digits-numpy-{precision}"
    assert sut.batcher.batch_sizes[33:].sum() == 0


def test_registry_builds_digits_with_parameters():
    sut, qsl = registry.build(
        "digits:backend=numpy,precision=int4,max_batch=8,max_wait_us=100,workers=1,perf_count=64"
    )
    try:
        assert sut.name == "digits-numpy-int4" and qsl.performance_sample_count == 64
        assert sut.batcher.max_batch == 8 and sut.batcher.max_wait_ns == 100_000
    finally:
        sut.close()


@pytest.mark.parametrize(
    ("spec", "key"),
    [
        ("max_batch=zero", "max_batch"),
        ("workers=0", "workers"),
        ("colour=red", "colour"),
        ("backend=tpu", "backend"),
        ("precision=fp8", "precision"),
        ("perf_count=9999", "perf_count"),
    ],
)
def test_bad_parameters_name_their_key(spec, key):
    params = dict(item.split("=") for item in spec.split(","))
    with pytest.raises(ConfigError, match=f"key '{key}'"):
        from_params(**params)


def test_onnx_backend_without_onnxruntime_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    with pytest.raises(ConfigError, match=r"proctor\[onnx\]"):
        from_params(backend="onnx")


@pytest.mark.parametrize("precision", ["fp32", "int8", "int4"])
def test_onnx_backend_matches_numpy(precision, val):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    from proctor.workloads.digits.sut import OnnxBackend

    x, y = val
    net = model.build(precision)
    onnx_pred = OnnxBackend(net).predict(x)
    numpy_pred = NumpyBackend(net).predict(x)
    assert onnx_pred.dtype == np.int32
    if precision == "fp32":
        assert np.array_equal(onnx_pred, numpy_pred)
    else:  # requantization can flip a value sitting on a rounding boundary; allow a couple
        assert np.count_nonzero(onnx_pred != numpy_pred) <= 3
        assert abs(int((onnx_pred == y).sum()) - int((numpy_pred == y).sum())) <= 2
    fused = OnnxBackend(net, qdq="fused").predict(x)
    assert (fused == y).mean() > 0.9
    with pytest.raises(ConfigError, match="key 'qdq'"):
        OnnxBackend(net, qdq="fast")


def _run(tmp_path, sut, qsl, scenario, mode, **kw):
    from proctor.loadgen import LogOutputSettings, LogSettings, TestSettings, run_test

    settings = TestSettings(scenario=scenario, mode=mode, min_duration_ms=100, min_query_count=50, **kw)
    log = LogSettings(log_output=LogOutputSettings(outdir=str(tmp_path)), enable_trace=False)
    try:
        return run_test(sut, qsl, settings, log, audit_config=None, timeout_s=60)
    finally:
        sut.close()


@pytest.mark.parametrize(
    ("backend", "precision", "scenario"),
    [
        ("numpy", "fp32", "Offline"),
        ("numpy", "int4", "SingleStream"),
        ("onnx", "int8", "Server"),
    ],
)
def test_accuracy_run_on_proctors_engine_gives_the_model_accuracy(
    tmp_path, val, backend, precision, scenario
):
    if backend == "onnx":
        pytest.importorskip("onnxruntime")
        pytest.importorskip("onnx")
    from proctor.loadgen import Scenario, TestMode

    sut, qsl = from_params(backend=backend, precision=precision, max_batch="16")
    outcome = _run(tmp_path, sut, qsl, Scenario(scenario), TestMode.ACCURACY_ONLY, server_target_qps=2000.0)
    assert not outcome.incomplete and outcome.errors == 0
    result = accuracy.evaluate(tmp_path / "mlperf_log_accuracy.json")
    x, y = val
    expected = int((model.build(precision).predict(x) == y).sum())
    assert result.total == digits.TOTAL_SAMPLE_COUNT
    if backend == "numpy":
        assert result.good == expected
    else:
        assert abs(result.good - expected) <= 2


def test_performance_run_on_proctors_engine_completes_every_sample(tmp_path):
    from proctor.loadgen import Scenario, TestMode

    sut, qsl = from_params(max_batch="32", workers="2")
    outcome = _run(
        tmp_path, sut, qsl, Scenario.OFFLINE, TestMode.PERFORMANCE_ONLY, offline_expected_qps=2000.0
    )
    assert not outcome.incomplete and outcome.errors == 0
    issued = outcome.records.n_samples_issued
    assert issued == outcome.schedule.n_samples >= 220  # 1.1 x 0.1 s x 2000/s
    assert (outcome.records.sample_done_ns[:issued] >= 0).all()
    assert sut.batcher.samples == issued and sut.batcher.batch_sizes[33:].sum() == 0
    assert not qsl.loaded.any()  # the engine unloaded what it loaded
