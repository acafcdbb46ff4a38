"""The digits reference network (an MLP 64-128-64-10 with ReLU) as a numpy forward pass, and its
int8 variant built by calibration.

FP32: `MLP.logits` is the reference: the committed weights (`weights_fp32.npz`, written by
`train_reference.py`) evaluated in float32.

INT8 (the closed division's quantization path, Inference rules §Weight Definition and
Quantization: "Model weights and input activations are scaled per tensor"): each layer's weights
are symmetric int8 with one scale per tensor (max |w| / 127); each layer's input is uint8 with zero
point 0 and one scale per tensor, max over the calibration set / 255 (every layer input is >= 0:
pixels, then ReLU outputs). A layer computes `acc = q(x) @ q(W)` exactly, then
`acc * (s_x * s_w) + b` in float32. The method uses only the calibration set and the weights.
The same method at 4 bits ("int4": weights in [-7, 7], inputs in [0, 15]) is the variant that
loses enough accuracy to pass the 99 % target and fail the 99.9 % one.

The integer products are held in float32 so BLAS does the work: every partial sum is an integer
of magnitude < 255 * 127 * fan_in <= 2**24 (fan_in <= 128 here), so float32 holds it exactly and
the result equals an int32 accumulation in any summation order.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from proctor.errors import ConfigError
from proctor.typed_records import field, record

WEIGHTS_FILE = "weights_fp32.npz"
_EXACT_LIMIT = 2**24
PRECISIONS = {"fp32": 0, "int8": 8, "int4": 4}  # name -> bits (0: float32)


def _check_layers(weights: tuple[np.ndarray, ...], biases: tuple[np.ndarray, ...], where: str) -> None:
    if len(weights) != len(biases) or not weights:
        raise ConfigError(f"{len(weights)} weight and {len(biases)} bias tensors", file=where)
    for i, (w, b) in enumerate(zip(weights, biases, strict=True)):
        if w.ndim != 2 or b.shape != (w.shape[1],):
            raise ConfigError(
                f"layer {i}: weight {w.shape} and bias {b.shape} do not fit", file=where, key=f"W{i}"
            )
        if i and weights[i - 1].shape[1] != w.shape[0]:
            raise ConfigError(
                f"layer {i} takes {w.shape[0]} inputs, layer {i - 1} gives {weights[i - 1].shape[1]}",
                file=where,
                key=f"W{i}",
            )


@record(frozen=True, slots=True)
class MLP:
    """Dense layers with ReLU between them; float32 throughout."""

    weights: tuple[np.ndarray, ...]  # float32[in, out] per layer
    biases: tuple[np.ndarray, ...]  # float32[out] per layer
    meta: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return "fp32"

    def logits(self, x: np.ndarray) -> np.ndarray:
        h = np.asarray(x, np.float32)
        last = len(self.weights) - 1
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            h = h @ w
            h += b
            if i < last:
                np.maximum(h, 0.0, out=h)
        return h

    def activations(self, x: np.ndarray) -> list[np.ndarray]:
        """The input of every layer (x, then each ReLU output), for calibration."""
        out = [np.asarray(x, np.float32)]
        h = out[0]
        for w, b in zip(self.weights[:-1], self.biases[:-1], strict=True):
            h = np.maximum(h @ w + b, 0.0)
            out.append(h)
        return out

    def predict(self, x: np.ndarray) -> np.ndarray:
        return self.logits(x).argmax(axis=1).astype(np.int32)


@record(frozen=True, slots=True)
class QuantizedMLP:
    """Per-tensor signed weights and unsigned inputs of `bits` bits; see the module docstring."""

    qweights: tuple[np.ndarray, ...]  # float32[in, out] holding integers in [-w_max, w_max]
    biases: tuple[np.ndarray, ...]  # float32[out]
    weight_scales: np.ndarray  # float32[layers]
    input_scales: np.ndarray  # float32[layers]
    bits: int = 8
    meta: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"int{self.bits}"

    @property
    def w_max(self) -> int:
        return 2 ** (self.bits - 1) - 1

    @property
    def x_max(self) -> int:
        return 2**self.bits - 1

    def quantize_input(self, x: np.ndarray, layer: int) -> np.ndarray:
        q = np.asarray(x, np.float32) / self.input_scales[layer]
        np.rint(q, out=q)
        return np.clip(q, 0, self.x_max, out=q)

    def logits(self, x: np.ndarray) -> np.ndarray:
        h = np.asarray(x, np.float32)
        last = len(self.qweights) - 1
        for i, (w, b) in enumerate(zip(self.qweights, self.biases, strict=True)):
            h = self.quantize_input(h, i) @ w
            h *= self.input_scales[i] * self.weight_scales[i]
            h += b
            if i < last:
                np.maximum(h, 0.0, out=h)
        return h

    def predict(self, x: np.ndarray) -> np.ndarray:
        return self.logits(x).argmax(axis=1).astype(np.int32)


def calibrate(model: MLP, calibration_x: np.ndarray, bits: int = 8) -> QuantizedMLP:
    """Quantize `model` using only `calibration_x` (the calibration set) and its weights."""
    if calibration_x.shape[0] == 0:
        raise ValueError("the calibration set is empty")
    if not 2 <= bits <= 8:
        raise ValueError(f"bits must be 2..8, not {bits}")
    w_max, x_max = 2 ** (bits - 1) - 1, 2**bits - 1
    for w in model.weights:
        if x_max * w_max * w.shape[0] > _EXACT_LIMIT:
            raise ValueError(f"fan-in {w.shape[0]} too large for exact float32 accumulation")
    w_scales = np.array([max(float(np.abs(w).max()), 1e-12) / w_max for w in model.weights], np.float32)
    x_scales = np.array(
        [max(float(a.max()), 1e-12) / x_max for a in model.activations(calibration_x)], np.float32
    )
    qweights = tuple(
        np.clip(np.rint(w / s), -w_max, w_max).astype(np.float32)
        for w, s in zip(model.weights, w_scales, strict=True)
    )
    meta = {
        "method": f"per-tensor symmetric int{bits} weights (max|w|/{w_max}), per-tensor unsigned "
        f"{bits}-bit inputs (calibration max/{x_max}, zero point 0)",
        "calibration_samples": int(calibration_x.shape[0]),
    }
    return QuantizedMLP(qweights, model.biases, w_scales, x_scales, bits, meta)


def save(path: str | Path, model: MLP) -> None:
    arrays: dict[str, np.ndarray] = {}
    for i, (w, b) in enumerate(zip(model.weights, model.biases, strict=True)):
        arrays[f"W{i}"] = np.ascontiguousarray(w, np.float32)
        arrays[f"b{i}"] = np.ascontiguousarray(b, np.float32)
    arrays["meta"] = np.array(json.dumps(model.meta, sort_keys=True))
    savez: Any = np.savez_compressed  # its stub types **kwds as if one could be allow_pickle
    savez(path, **arrays)


def load(path: str | Path) -> MLP:
    where = str(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            n = sum(1 for k in z.files if k.startswith("W"))
            weights = tuple(z[f"W{i}"].astype(np.float32) for i in range(n))
            biases = tuple(z[f"b{i}"].astype(np.float32) for i in range(n))
            meta = json.loads(str(z["meta"])) if "meta" in z.files else {}
    except KeyError as exc:
        raise ConfigError(f"missing array {exc}", file=where) from exc
    except (OSError, ValueError) as exc:
        raise ConfigError(f"not a weights file: {exc}", file=where) from exc
    _check_layers(weights, biases, where)
    for a in weights + biases:
        a.flags.writeable = False
    return MLP(weights, biases, meta)


def reference_weights_path() -> Path:
    return Path(str(resources.files(__package__).joinpath(WEIGHTS_FILE)))


def load_reference() -> MLP:
    """The committed FP32 reference weights."""
    return load(reference_weights_path())


def build(precision: str = "fp32", model: MLP | None = None) -> MLP | QuantizedMLP:
    """The reference model at `precision` (fp32, or int8/int4 calibrated on the calibration set)."""
    from proctor.workloads.digits import data

    if precision not in PRECISIONS:
        raise ConfigError(
            f"precision must be one of {', '.join(PRECISIONS)}, not '{precision}'", key="precision"
        )
    fp32 = model if model is not None else load_reference()
    if precision == "fp32":
        return fp32
    return calibrate(fp32, data.preprocess(data.calibration().images), PRECISIONS[precision])
