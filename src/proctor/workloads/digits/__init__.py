"""The `digits` inference reference workload: numbers for the benchmark table and the conf files.

The FP32 reference accuracy is what `train_reference.py` measured with the committed weights on the
validation split (565 of 600 images); the quality targets are 99 % and 99.9 % of it, phrased as the
Inference rules' benchmark tables phrase them ("99% of FP32 and 99.9% of FP32 (...)"), applied to
the reference as reported to five significant figures (rules §Benchmarks).
"""

from __future__ import annotations

MODEL_NAME = "digits"  # the mlperf.conf / benchmark-table name
DATASET = "scikit-learn digits (UCI optdigits test set, 1,797 8x8 images, 10 classes)"
TOTAL_SAMPLE_COUNT = 600  # the accuracy (validation) set: the QSL's total count
PERFORMANCE_SAMPLE_COUNT = 256  # the performance set: QSL indices [0, 256)
CALIBRATION_SAMPLE_COUNT = 100  # every 12th training image
REFERENCE_GOOD = 565
REFERENCE_ACCURACY = 94.167  # % top-1, FP32, 565 / 600 to five significant figures
QUALITY_FRACTIONS = (0.99, 0.999)
ACCURACY_TARGETS = {f: REFERENCE_ACCURACY * f for f in QUALITY_FRACTIONS}  # 93.225 %, 94.073 %
SERVER_TARGET_LATENCY_NS = 10_000_000  # 10 ms p99, the shipped mlperf.conf's default Server bound
RESPONSE_DTYPE = "<i4"  # each response's data: the predicted class, int32 little-endian

__all__ = [
    "ACCURACY_TARGETS",
    "CALIBRATION_SAMPLE_COUNT",
    "DATASET",
    "MODEL_NAME",
    "PERFORMANCE_SAMPLE_COUNT",
    "QUALITY_FRACTIONS",
    "REFERENCE_ACCURACY",
    "REFERENCE_GOOD",
    "RESPONSE_DTYPE",
    "SERVER_TARGET_LATENCY_NS",
    "TOTAL_SAMPLE_COUNT",
]
