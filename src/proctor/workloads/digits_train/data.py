"""The fixed split of the digits set for training: 1,437 training and 360 evaluation samples.

Split: stratified by class with scikit-learn's `train_test_split(test_size=360, random_state=0)`;
pixels scaled from 0..16 to 0..1 as float32. The split never depends on a run's seed, so every run
evaluates on the same 360 images and only its initialisation and data order vary.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from proctor.typed_records import record

EVAL_SIZE = 360
SPLIT_SEED = 0
NUM_CLASSES = 10


@record(frozen=True, slots=True)
class Split:
    x_train: np.ndarray  # (1437, 64) float32
    y_train: np.ndarray  # (1437,) int64
    x_eval: np.ndarray  # (360, 64) float32
    y_eval: np.ndarray  # (360,) int64


@cache
def load_split() -> Split:
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype(np.float32)
    y = y.astype(np.int64)
    x_tr, x_ev, y_tr, y_ev = train_test_split(x, y, test_size=EVAL_SIZE, stratify=y, random_state=SPLIT_SEED)
    for a in (x_tr, x_ev, y_tr, y_ev):
        a.setflags(write=False)
    return Split(x_tr, y_tr, x_ev, y_ev)


class BatchOrder:
    """Global batches of training indices: a fresh seeded permutation per epoch, no partial batches.

    Every rank of a distributed run builds the same order from the same seed, so a global batch is
    the same set of samples everywhere and each rank takes its own slice of it.
    """

    def __init__(self, n: int, batch_size: int, seed: int) -> None:
        if not 0 < batch_size <= n:
            raise ValueError(f"batch size {batch_size} must be in 1..{n}")
        self._n, self._bs = n, batch_size
        self._rng = np.random.default_rng(seed)
        self._order = self._rng.permutation(n)
        self._pos = 0
        self.epoch = 0

    def next(self) -> np.ndarray:
        if self._pos + self._bs > self._n:
            self._order = self._rng.permutation(self._n)
            self._pos = 0
            self.epoch += 1
        batch = self._order[self._pos : self._pos + self._bs]
        self._pos += self._bs
        return batch
