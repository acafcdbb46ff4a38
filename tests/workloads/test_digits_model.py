"""The reference weights, the FP32 accuracy they give, and the quantized variants."""

from __future__ import annotations

import numpy as np
import pytest

from proctor.errors import ConfigError
from proctor.workloads import digits
from proctor.workloads.digits import data, model
from proctor.workloads.digits.accuracy import format_accuracy


@pytest.fixture(scope="module")
def val():
    v = data.validation()
    return data.preprocess(v.images), v.labels


@pytest.fixture(scope="module")
def fp32():
    return model.load_reference()


def test_reference_weights_are_small_and_well_formed(fp32):
    assert model.reference_weights_path().stat().st_size < 300_000
    assert [w.shape for w in fp32.weights] == [(64, 128), (128, 64), (64, 10)]
    assert all(w.dtype == np.float32 for w in fp32.weights + fp32.biases)
    assert fp32.meta["seed"] and fp32.meta["data_sha256"] == data.SHA256


def test_fp32_accuracy_is_the_recorded_reference(fp32, val):
    x, y = val
    good = int((fp32.predict(x) == y).sum())
    assert good == digits.REFERENCE_GOOD == fp32.meta["validation_good"]
    assert float(format_accuracy(good, len(y))) == digits.REFERENCE_ACCURACY
    assert digits.ACCURACY_TARGETS[0.99] == pytest.approx(93.22533)
    assert digits.ACCURACY_TARGETS[0.999] == pytest.approx(94.072833)


def _int_reference(q: model.QuantizedMLP, x: np.ndarray) -> np.ndarray:
    """The same arithmetic with explicit int64 accumulation."""
    h = x.astype(np.float32)
    for i, (w, b) in enumerate(zip(q.qweights, q.biases, strict=True)):
        xq = np.clip(np.rint(h / q.input_scales[i]), 0, q.x_max).astype(np.int64)
        acc = xq @ w.astype(np.int64)
        h = acc.astype(np.float32) * (q.input_scales[i] * q.weight_scales[i]) + b
        if i < len(q.qweights) - 1:
            h = np.maximum(h, 0)
    return h


@pytest.mark.parametrize("precision", ["int8", "int4"])
def test_quantized_arithmetic_equals_integer_accumulation(precision, val):
    q = model.build(precision)
    x, _ = val
    np.testing.assert_allclose(q.logits(x), _int_reference(q, x), rtol=0, atol=1e-5)
    bound = 2 ** (q.bits - 1) - 1
    for w in q.qweights:
        assert np.abs(w).max() == bound and np.array_equal(w, np.rint(w))


def test_int8_passes_both_targets_and_int4_only_the_99_percent_one(val):
    x, y = val
    acc = {
        p: float(format_accuracy(int((model.build(p).predict(x) == y).sum()), len(y)))
        for p in ("int8", "int4")
    }
    t99, t999 = digits.ACCURACY_TARGETS[0.99], digits.ACCURACY_TARGETS[0.999]
    assert acc["int8"] >= t999 and acc["int8"] >= t99
    assert t99 <= acc["int4"] < t999


def test_calibration_uses_only_the_calibration_set(fp32):
    cal = data.preprocess(data.calibration().images)
    built = model.build("int8", fp32)
    direct = model.calibrate(fp32, cal, 8)
    np.testing.assert_array_equal(built.input_scales, direct.input_scales)
    # input scale of layer 0 is the calibration max / 255; other data gives other scales
    assert built.input_scales[0] == pytest.approx(cal.max() / 255)
    other = model.calibrate(fp32, data.preprocess(data.validation().images), 8)
    assert not np.array_equal(other.input_scales, built.input_scales)


def test_calibrate_rejects_bad_input(fp32):
    with pytest.raises(ValueError, match="empty"):
        model.calibrate(fp32, np.zeros((0, 64), np.float32))
    with pytest.raises(ValueError, match="bits"):
        model.calibrate(fp32, np.ones((2, 64), np.float32), bits=9)
    with pytest.raises(ConfigError, match="precision"):
        model.build("fp16")


def test_save_load_round_trip_and_bad_files(tmp_path, fp32):
    path = tmp_path / "w.npz"
    model.save(path, fp32)
    again = model.load(path)
    for a, b in zip(again.weights + again.biases, fp32.weights + fp32.biases, strict=True):
        np.testing.assert_array_equal(a, b)
    assert again.meta == fp32.meta
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ConfigError, match="bad.npz"):
        model.load(bad)
    np.savez(tmp_path / "short.npz", W0=np.zeros((64, 10), np.float32))
    with pytest.raises(ConfigError, match="short.npz"):
        model.load(tmp_path / "short.npz")
    np.savez(tmp_path / "shape.npz", W0=np.zeros((64, 10), np.float32), b0=np.zeros(9, np.float32))
    with pytest.raises(ConfigError, match="key 'W0'"):
        model.load(tmp_path / "shape.npz")


def test_training_is_reproducible_with_a_fixed_seed():
    from proctor.workloads.digits.train_reference import train

    a, b = train(max_iter=2), train(max_iter=2)
    for wa, wb in zip(a.weights + a.biases, b.weights + b.biases, strict=True):
        np.testing.assert_array_equal(wa, wb)
    c = train(seed=1, max_iter=2)
    assert not np.array_equal(a.weights[0], c.weights[0])
    assert a.meta["epochs"] == 2 and a.meta["train_samples"] == 1197
