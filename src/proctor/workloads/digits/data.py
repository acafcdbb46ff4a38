"""The digits data set and its fixed split into accuracy, performance and calibration sets.

Source: scikit-learn's bundled copy of the UCI optical digits test set (1,797 8x8 images, pixel
values 0-16, 10 classes), so nothing is downloaded. The split is by position, never random, so it
is the same on every machine and every library version:

- training:    images 0 .. 1196 (1,197) - what the reference weights were trained on
- validation:  images 1197 .. 1796 (600) - the accuracy set; QSL index i is image 1197 + i
- performance: QSL indices 0 .. 255 - the first 256 validation images (the QSL's performance
  sample count; LoadGen draws the performance set from `[0, performance_sample_count)`)
- calibration: every 12th training image (0, 12, ..., 1188; 100 images) - the only data an int8
  variant may look at (Inference rules §Weight Definition and Quantization: "Calibration is allowed
  and must only use the calibration data set provided by the benchmark owner")

Preprocessing (untimed, sample-independent, as the rules' §Pre- and post-processing allow): pixel /
16 as float32, flattened to 64 features.
"""

from __future__ import annotations

import hashlib
from functools import cache

import numpy as np

from proctor.errors import DatasetError
from proctor.typed_records import record

N_IMAGES = 1797
N_FEATURES = 64
N_CLASSES = 10
TRAIN_END = 1197  # training = [0, TRAIN_END), validation = [TRAIN_END, N_IMAGES)
VALIDATION_COUNT = N_IMAGES - TRAIN_END
PERFORMANCE_COUNT = 256
CALIBRATION_STRIDE = 12
PIXEL_MAX = 16.0
# sha256 of the images as uint8 (1797x8x8, C order) followed by the labels as uint8: the rules'
# "script to verify the datasets using a checksum".
SHA256 = "87ff0c9e40dc7e2c0e34e7257799c2e3f3aec1a016363bb11cad869ec428a826"


@record(frozen=True, slots=True)
class Split:
    """Raw images (uint8, 0-16) and labels of one part of the split, with their image numbers."""

    name: str
    images: np.ndarray  # uint8[n, 8, 8]
    labels: np.ndarray  # int64[n]
    image_ids: np.ndarray  # int64[n]: position in the bundled data set

    def __len__(self) -> int:
        return int(self.labels.shape[0])


@cache
def _raw() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits

    d = load_digits()
    images = d.images.astype(np.uint8)
    labels = d.target.astype(np.int64)
    images.flags.writeable = False
    labels.flags.writeable = False
    return images, labels


def checksum() -> str:
    images, labels = _raw()
    return hashlib.sha256(images.tobytes() + labels.astype(np.uint8).tobytes()).hexdigest()


def verify() -> None:
    """Raise DatasetError unless the bundled data is bit-identical to the reference's."""
    got = checksum()
    if got != SHA256:
        raise DatasetError(
            f"scikit-learn's digits data has sha256 {got}, expected {SHA256}: "
            "the split and the reference accuracy do not apply to it"
        )


def _part(name: str, ids: np.ndarray) -> Split:
    images, labels = _raw()
    return Split(name, images[ids], labels[ids], ids)


def training() -> Split:
    return _part("training", np.arange(0, TRAIN_END, dtype=np.int64))


def validation() -> Split:
    return _part("validation", np.arange(TRAIN_END, N_IMAGES, dtype=np.int64))


def performance() -> Split:
    return _part("performance", np.arange(TRAIN_END, TRAIN_END + PERFORMANCE_COUNT, dtype=np.int64))


def calibration() -> Split:
    return _part("calibration", np.arange(0, TRAIN_END, CALIBRATION_STRIDE, dtype=np.int64))


def split(name: str) -> Split:
    parts = {
        "training": training,
        "validation": validation,
        "performance": performance,
        "calibration": calibration,
    }
    if name not in parts:
        raise KeyError(f"unknown digits split '{name}'; known: {', '.join(parts)}")
    return parts[name]()


def preprocess(images: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """uint8[n, 8, 8] (0-16) -> float32[n, 64] in [0, 1]; writes into `out` when given."""
    flat = images.reshape(images.shape[0], N_FEATURES)
    if out is None:
        out = np.empty(flat.shape, np.float32)
    np.multiply(flat, np.float32(1.0 / PIXEL_MAX), out=out, casting="unsafe")
    return out
