"""The digits split: fixed, documented, disjoint, and the data verified by checksum."""

from __future__ import annotations

import numpy as np
import pytest

from proctor.workloads import digits
from proctor.workloads.digits import data


def test_bundled_data_matches_checksum():
    data.verify()
    assert data.checksum() == data.SHA256


def test_verify_rejects_other_data(monkeypatch):
    monkeypatch.setattr(data, "SHA256", "0" * 64)
    with pytest.raises(data.DatasetError, match="sha256"):
        data.verify()


def test_split_sizes_match_the_constants():
    assert len(data.training()) == 1197
    assert len(data.validation()) == digits.TOTAL_SAMPLE_COUNT == 600
    assert len(data.performance()) == digits.PERFORMANCE_SAMPLE_COUNT == 256
    assert len(data.calibration()) == digits.CALIBRATION_SAMPLE_COUNT == 100


def test_split_is_by_position_and_disjoint():
    train, val = data.training(), data.validation()
    assert train.image_ids[0] == 0 and train.image_ids[-1] == 1196
    assert val.image_ids[0] == 1197 and val.image_ids[-1] == 1796
    assert not np.intersect1d(train.image_ids, val.image_ids).size
    # performance set = the first QSL indices of the accuracy set; calibration only from training
    np.testing.assert_array_equal(data.performance().image_ids, val.image_ids[:256])
    cal = data.calibration()
    assert np.isin(cal.image_ids, train.image_ids).all()
    np.testing.assert_array_equal(cal.image_ids, np.arange(0, 1197, 12))
    assert set(np.unique(cal.labels).tolist()) == set(range(10))


def test_parts_carry_the_right_labels():
    from sklearn.datasets import load_digits

    d = load_digits()
    val = data.validation()
    np.testing.assert_array_equal(val.labels, d.target[1197:])
    np.testing.assert_array_equal(val.images, d.images[1197:].astype(np.uint8))
    assert data.split("calibration").name == "calibration"
    with pytest.raises(KeyError, match="unknown digits split"):
        data.split("test")


def test_preprocess_scales_to_unit_range_in_float32():
    imgs = np.array([[[0, 16], [8, 4]]], np.uint8).repeat(16, axis=1).repeat(4, axis=2)[:, :8, :8]
    x = data.preprocess(imgs)
    assert x.dtype == np.float32 and x.shape == (1, 64)
    assert set(np.unique(x).tolist()) <= {0.0, 1.0, 0.5, 0.25}
    out = np.full((1, 64), -1, np.float32)
    assert data.preprocess(imgs, out=out) is out and out.max() == 1.0
