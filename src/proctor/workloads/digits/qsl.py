"""The digits query sample library: the validation images, preprocessed into memory on demand.

The raw images (uint8, 4.7 KB per 100) stand for the data on disk; `load_samples` preprocesses the
requested ones into one preallocated float32 array indexed by QSL index, so a SUT gathers a batch
with one fancy-indexing read (`features[indices]`) and no per-sample objects.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from proctor.errors import ConfigError, RunError
from proctor.workloads.digits import PERFORMANCE_SAMPLE_COUNT, data


class DigitsQSL:
    """QSL index i is validation image i (data set image 1197 + i)."""

    def __init__(
        self, performance_sample_count: int = PERFORMANCE_SAMPLE_COUNT, *, verify: bool = True
    ) -> None:
        if verify:
            data.verify()
        split = data.validation()
        if not 1 <= performance_sample_count <= len(split):
            raise ConfigError(f"must be 1..{len(split)}, not {performance_sample_count}", key="perf_count")
        self._images = split.images
        self.labels = split.labels
        self._perf = performance_sample_count
        self.features = np.zeros((len(split), data.N_FEATURES), np.float32)
        self.loaded = np.zeros(len(split), np.int32)  # load count (MultiStream sets repeat indices)

    @property
    def name(self) -> str:
        return "digits-validation"

    @property
    def total_sample_count(self) -> int:
        return int(self.labels.shape[0])

    @property
    def performance_sample_count(self) -> int:
        return self._perf

    def load_samples(self, indices: Sequence[int] | np.ndarray) -> None:
        idx = self._indices(indices)
        fresh = np.unique(idx[self.loaded[idx] == 0])
        self.features[fresh] = data.preprocess(self._images[fresh])
        np.add.at(self.loaded, idx, 1)

    def unload_samples(self, indices: Sequence[int] | np.ndarray) -> None:
        idx = self._indices(indices)
        np.subtract.at(self.loaded, idx, 1)
        np.maximum(self.loaded, 0, out=self.loaded)
        gone = idx[self.loaded[idx] == 0]
        self.features[gone] = 0.0

    def batch(self, indices: np.ndarray) -> np.ndarray:
        """The preprocessed inputs of `indices` (float32[n, 64]); raises if one is not loaded."""
        if not np.all(self.loaded[indices]):
            missing = indices[self.loaded[indices] == 0][:5].tolist()
            raise RunError(f"digits QSL: samples {missing} were issued but not loaded")
        return self.features[indices]

    def _indices(self, indices: Sequence[int] | np.ndarray) -> np.ndarray:
        idx = np.asarray(indices, np.int64).reshape(-1)
        if idx.size and (idx.min() < 0 or idx.max() >= self.total_sample_count):
            raise RunError(
                f"digits QSL: index out of range [0, {self.total_sample_count}): "
                f"{idx[(idx < 0) | (idx >= self.total_sample_count)][:5].tolist()}"
            )
        return idx
