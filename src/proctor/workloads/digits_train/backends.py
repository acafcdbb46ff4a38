"""One workload, two trainers: the same network (64 -> 32 ReLU -> 10, Adam, constant learning rate)
trained by scikit-learn (default, no extra install) or by PyTorch (extra; also the distributed path).

A backend sees global batches of training indices and answers the evaluation accuracy; the training
loop (`train.py`) owns the clock, the cadence and the log, so both backends obey the same rules.
"""

from __future__ import annotations

import warnings
from typing import Protocol

import numpy as np

from proctor.workloads.digits_train import HIDDEN_UNITS, LEARNING_RATE
from proctor.workloads.digits_train.data import NUM_CLASSES, Split

BACKENDS = ("sklearn", "torch")


class Backend(Protocol):
    name: str
    rank: int
    world_size: int
    precision: str  # lowest numerical precision used in linear layers and communication

    def train_step(self, batch: np.ndarray) -> None:
        """One optimizer step on one global batch (indices into the training split)."""

    def evaluate(self) -> float:
        """Top-1 accuracy on the whole evaluation split (the same value on every rank)."""

    def close(self) -> None: ...


class SklearnBackend:
    """`MLPClassifier.partial_fit`, one call per global batch: one Adam step each."""

    name = "sklearn"
    rank = 0
    world_size = 1
    precision = "fp32"  # float32 inputs keep scikit-learn's MLP in float32

    def __init__(
        self,
        split: Split,
        *,
        seed: int,
        batch_size: int,
        learning_rate: float = LEARNING_RATE,
        hidden: int = HIDDEN_UNITS,
    ) -> None:
        from sklearn.neural_network import MLPClassifier

        self._split = split
        self._classes = np.arange(NUM_CLASSES)
        self._model = MLPClassifier(
            hidden_layer_sizes=(hidden,),
            solver="adam",
            learning_rate_init=learning_rate,
            batch_size=batch_size,
            shuffle=False,
            random_state=seed,
        )

    def train_step(self, batch: np.ndarray) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ConvergenceWarning has no meaning for one step
            self._model.partial_fit(
                self._split.x_train[batch], self._split.y_train[batch], classes=self._classes
            )

    def evaluate(self) -> float:
        return float(np.mean(self._model.predict(self._split.x_eval) == self._split.y_eval))

    def close(self) -> None:
        pass


def make_backend(
    name: str, split: Split, *, seed: int, batch_size: int, learning_rate: float = LEARNING_RATE
) -> Backend:
    if name == "sklearn":
        return SklearnBackend(split, seed=seed, batch_size=batch_size, learning_rate=learning_rate)
    if name == "torch":
        from proctor.workloads.digits_train.torch_backend import TorchBackend

        return TorchBackend(split, seed=seed, batch_size=batch_size, learning_rate=learning_rate)
    raise ValueError(f"unknown backend {name!r}; known: {', '.join(BACKENDS)}")
