"""The digits system under test: a backend (numpy or ONNX Runtime) behind the dynamic batcher.

    proctor ... --sut digits:backend=numpy,precision=int8,max_batch=64,max_wait_us=0,workers=2

Every scenario takes the same path: issue -> batcher queue -> worker gathers the batch's inputs
from the QSL (`features[indices]`) -> backend -> one int32 class per sample -> completion. Each
response's data is the predicted class as 4 little-endian bytes (`RESPONSE_DTYPE`), which
`accuracy.py` reads back from mlperf_log_accuracy.json.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from proctor.errors import ConfigError
from proctor.loadgen.sink import CompletionSink
from proctor.suts.batching import Complete, DynamicBatcher
from proctor.suts.params import param, takes
from proctor.typed_records import record
from proctor.workloads.digits import PERFORMANCE_SAMPLE_COUNT, model
from proctor.workloads.digits.qsl import DigitsQSL

BACKENDS = ("numpy", "onnx")
QDQ_MODES = ("exact", "fused")


class Backend(Protocol):
    @property
    def name(self) -> str: ...

    def predict(self, x: np.ndarray) -> np.ndarray:
        """float32[n, 64] -> int32[n] predicted classes; callable from several threads at once."""
        ...


class NumpyBackend:
    def __init__(self, net: model.MLP | model.QuantizedMLP) -> None:
        self.net = net

    @property
    def name(self) -> str:
        return f"numpy-{self.net.name}"

    def predict(self, x: np.ndarray) -> np.ndarray:
        return self.net.predict(x)


class OnnxBackend:
    """ONNX Runtime on the CPU, one intra-op thread per session call (the batcher's workers give
    the parallelism).

    `qdq="exact"` turns off ORT's QDQ fusions for the quantized graphs: with them on, ORT 1.32's
    CPU kernels moved first-layer outputs by up to 3e-3 from the arithmetic the calibration defines
    (and changed 2 of 600 int4 predictions); without them the results equal the numpy backend's to
    float rounding. `qdq="fused"` keeps ORT's fast integer path.
    """

    def __init__(self, net: model.MLP | model.QuantizedMLP, *, qdq: str = "exact", threads: int = 1) -> None:
        try:
            import onnxruntime as ort

            from proctor.workloads.digits.onnx_graph import to_onnx

            graph = to_onnx(net)
        except ImportError as exc:
            raise ConfigError(
                f"backend=onnx needs onnxruntime and onnx ({exc.name} is missing): "
                "pip install 'proctor[onnx]'",
                key="backend",
            ) from exc
        if qdq not in QDQ_MODES:
            raise ConfigError(f"must be one of {', '.join(QDQ_MODES)}, not '{qdq}'", key="qdq")
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        if qdq == "exact":
            options.add_session_config_entry("session.disable_quant_qdq", "1")
        self.net, self.qdq = net, qdq
        self._session = ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])

    @property
    def name(self) -> str:
        return f"onnx-{self.net.name}"

    def predict(self, x: np.ndarray) -> np.ndarray:
        (label,) = self._session.run(["label"], {"x": np.ascontiguousarray(x, np.float32)})
        return label.astype(np.int32)


class DigitsSUT:
    """Issue -> DynamicBatcher -> backend; pass `complete` to route completions elsewhere
    (default: the sink the engine starts it with, by its array path)."""

    def __init__(
        self,
        backend: Backend,
        qsl: DigitsQSL,
        *,
        max_batch: int = 64,
        max_wait_us: float = 0.0,
        workers: int = 2,
        complete: Complete | None = None,
    ) -> None:
        self.backend, self.qsl = backend, qsl
        self.batcher = DynamicBatcher(
            self._process,
            complete,
            max_batch=max_batch,
            max_wait_us=max_wait_us,
            workers=workers,
            name=f"digits-{backend.name}",
        )

    @property
    def name(self) -> str:
        return f"digits-{self.backend.name}"

    def _process(self, indices: np.ndarray) -> np.ndarray:
        return self.backend.predict(self.qsl.batch(indices)).reshape(-1, 1)

    def start(self, sink: CompletionSink) -> None:
        """Complete through the run's sink (`sink.StartableSUT`); until then, the module functions."""
        self.batcher.start(sink)

    def issue_query(self, samples: Sequence[Any]) -> None:
        n = len(samples)
        ids = np.fromiter((s.id for s in samples), np.int64, n)
        indices = np.fromiter((s.index for s in samples), np.int64, n)
        self.batcher.submit(ids, indices)

    def issue_query_arrays(self, ids: np.ndarray, indices: np.ndarray) -> None:
        self.batcher.submit(ids, indices)

    def flush_queries(self) -> None:
        self.batcher.flush()

    def close(self) -> None:
        """Stop the batcher within about a second; batch failures were already reported to the run
        (detail log) and counted on stderr, so they are not raised again here."""
        self.batcher.close(raise_error=False)

    def __enter__(self) -> DigitsSUT:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def build(
    backend: str = "numpy",
    precision: str = "fp32",
    *,
    max_batch: int = 64,
    max_wait_us: float = 0.0,
    workers: int = 2,
    performance_sample_count: int = PERFORMANCE_SAMPLE_COUNT,
    qdq: str = "exact",
    threads: int = 1,
    complete: Complete | None = None,
) -> tuple[DigitsSUT, DigitsQSL]:
    """The digits SUT and its QSL; the int8/int4 models are calibrated here, on the calibration set."""
    if backend not in BACKENDS:
        raise ConfigError(f"must be one of {', '.join(BACKENDS)}, not '{backend}'", key="backend")
    net = model.build(precision)
    be: Backend = NumpyBackend(net) if backend == "numpy" else OnnxBackend(net, qdq=qdq, threads=threads)
    qsl = DigitsQSL(performance_sample_count)
    sut = DigitsSUT(be, qsl, max_batch=max_batch, max_wait_us=max_wait_us, workers=workers, complete=complete)
    return sut, qsl


@record(frozen=True, slots=True)
class DigitsParams:
    """`--sut digits:k=v,...` (the defaults are build()'s)."""

    backend: str = param("numpy", "inference backend", choices=BACKENDS)
    precision: str = param("fp32", "model precision", choices=tuple(model.PRECISIONS))
    max_batch: int = param(64, "largest batch", low=1)
    max_wait_us: float = param(0.0, "longest wait to fill a batch, microseconds", low=0)
    workers: int = param(2, "worker threads", low=1)
    perf_count: int = param(PERFORMANCE_SAMPLE_COUNT, "QSL performance sample count", low=1)
    qdq: str = param("exact", "onnx only: quantize-dequantize", choices=QDQ_MODES)
    threads: int = param(1, "onnx only: intra-op threads", low=1)


@takes(DigitsParams, "digits")
def from_params(p: DigitsParams) -> tuple[DigitsSUT, DigitsQSL]:
    """The registry factory: `--sut digits:backend=onnx,precision=int8,max_batch=64`."""
    return build(
        p.backend,
        p.precision,
        max_batch=p.max_batch,
        max_wait_us=p.max_wait_us,
        workers=p.workers,
        performance_sample_count=p.perf_count,
        qdq=p.qdq,
        threads=p.threads,
    )
