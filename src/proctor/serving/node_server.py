"""A Network-division SUT node: any proctor SUT served over KServe V2 REST (aiohttp).

    proctor serve node --sut digits:backend=numpy --host 127.0.0.1 --port 8001 [--name NODE]

Endpoints: `GET /v2/health/live`, `/v2/health/ready`, `GET /v2` (server metadata; `name` is this
node's unique name, which the QDL's Name() aggregates), `GET /v2/models/{model}` (model metadata),
`GET /v2/models/{model}/ready`, `POST /v2/models/{model}/infer` (JSON tensors or the binary tensor
data extension, answered in kind).

What crosses the wire (Inference rules §SUT over the Network: "All queries must be transferred
over the network, carrying the inference data"): the QSL lives on the LoadGen side, so a request
carries the samples' input tensors, never only their indices, whenever the SUT has input data.
- Tensor mode (digits, and any SUT that reads its inputs through `sut.qsl.batch(indices)` from a
  `features` array): the node holds no data set. Received rows are written into slots of a small
  input table that stands in for the SUT's QSL; the SUT is issued the slot numbers, so its own
  batcher, workers and backend run unchanged on the received tensors. Input `x` FP32 [n, 64],
  output `label` INT32 [n, 1] (the SUT's response bytes). Compressed inputs (request parameter
  `proctor_compression`) arrive as BYTES, one compressed row per element, and are decompressed
  here (timed, on the SUT side, as the rules allow).
- Index mode (the synthetic SUT and any SUT without input data): the input is `index` INT64 [n],
  the QSL index, because the SUT's "model" reads nothing but the index; the node loads the same
  QSL locally. Output `output` BYTES [n]: each sample's response bytes.

Completions: a proctor SUT reports through `proctor.loadgen.completion`'s module functions, which
route to the one object attached there. A node process runs no test, so the node attaches its
`CompletionRouter`, which resolves each request's future. Nothing is cached: a slot is reused
only after its sample completed, and no response is kept after it was sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import threading
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, Protocol, cast, runtime_checkable

import numpy as np
from aiohttp import web

from proctor.errors import ConfigError, RequestError
from proctor.loadgen import completion
from proctor.loadgen.sink import ResponseCallback, StartableSUT
from proctor.loadgen.types import ArraySUT, QuerySample
from proctor.serving.connections import Gate, listen, phases, runner_options
from proctor.serving.guard import FailureLog, guard, quiet_protocol_errors
from proctor.serving.limits import ConnectionLimits
from proctor.suts.spec import SutSpec, as_spec
from proctor.typed_records import record
from proctor.wire import compression
from proctor.wire import kserve_v2 as v2
from proctor.wire.kserve_v2 import COMPRESSION_PARAM, RESPONSE_COMPRESSION_PARAM, ROW_BYTES_PARAM

DEFAULT_CAPACITY = 8192  # samples in flight per node (tensor mode's input table rows)
MAX_BODY = 256 * 1024 * 1024
MAX_REQUEST_SAMPLES = 65_536  # samples in one infer request, at most (the network client's chunk= bound)
log = logging.getLogger("proctor.serving.node")


@record(slots=True)
class _Pending:
    """One request's samples: completed rows fill in, the future resolves when none remain."""

    rows: list[bytes | None]
    remaining: int
    future: asyncio.Future[list[bytes]]
    loop: asyncio.AbstractEventLoop
    slots: np.ndarray | None
    base: int  # id of the request's first sample


class CompletionRouter:
    """Stands where a run's CompletionTracker would: the SUT's completions resolve requests."""

    def __init__(self, release: Callable[[np.ndarray], None]) -> None:
        self._lock = threading.Lock()
        self._pending: dict[int, _Pending] = {}
        self._release = release
        self._next = itertools.count()
        self.protocol_errors: list[str] = []

    def register(self, n: int, loop: asyncio.AbstractEventLoop, slots: np.ndarray | None) -> tuple[np.ndarray, _Pending]:
        with self._lock:
            base = next(self._next)
            for _ in range(n - 1):
                next(self._next)
            p = _Pending([None] * n, n, loop.create_future(), loop, slots, base)
            ids = np.arange(base, base + n, dtype=np.int64)
            for i in ids.tolist():
                self._pending[i] = p
        return ids, p

    def _done(self, i: int, data: Any) -> None:
        """Caller holds the lock."""
        p = self._pending.pop(i, None)
        if p is None:
            self.protocol_errors.append(f"unknown or repeated response id {i}")
            return
        p.rows[i - p.base] = completion.as_bytes(data)
        p.remaining -= 1
        if p.remaining == 0:
            if p.slots is not None:
                self._release(p.slots)
            rows = cast(list[bytes], p.rows)
            p.loop.call_soon_threadsafe(_resolve, p.future, rows)

    # --- the CompletionSink the node's SUT completes through (started with it, or via the module
    # functions while it is attached); the node runs no test, so `t_ns` is not used
    def complete(
        self,
        responses: Sequence[Any],
        response_cb: ResponseCallback | None = None,
        *,
        t_ns: int | None = None,
    ) -> None:
        with self._lock:
            for r in responses:
                if response_cb is not None:
                    response_cb(r)
                self._done(r.id, r.data)

    def complete_arrays(
        self,
        ids: np.ndarray,
        n_tokens: np.ndarray | None = None,
        data: np.ndarray | None = None,
        *,
        t_ns: int | None = None,
    ) -> None:
        with self._lock:
            for k, i in enumerate(np.asarray(ids).tolist()):
                self._done(int(i), None if data is None else data[k])

    def first_token(
        self,
        responses: Sequence[Any],
        response_cb: ResponseCallback | None = None,
        *,
        t_ns: int | None = None,
    ) -> None:
        """V2 answers whole responses: first tokens are not sent over the wire."""

    def fail(self, ids: Sequence[int], reason: str) -> None:
        """Samples the SUT could not answer: their request fails (the client counts them lost)."""
        with self._lock:
            pending = {id(p): p for i in ids if (p := self._pending.get(int(i))) is not None}
            for i in ids:
                self._pending.pop(int(i), None)
        for p in pending.values():
            if p.slots is not None:
                self._release(p.slots)
            p.loop.call_soon_threadsafe(_fail, p.future, RequestError(f"the SUT failed samples: {reason}"))

    def report_failure(self, exc: BaseException | str, where: str = "") -> bool:
        """A failure in the SUT's threads: kept for the node's log (its requests fail on their own)."""
        self.protocol_errors.append(completion.failure_text(exc) + (f" ({where})" if where else ""))
        return True

    def output_logged(self, response_id: int) -> bool:
        """Every output goes back over the wire."""
        return True

    def fail_all(self, message: str) -> None:
        with self._lock:
            pending = {id(p): p for p in self._pending.values()}
            self._pending.clear()
        for p in pending.values():
            p.loop.call_soon_threadsafe(_fail, p.future, RequestError(message))


def _resolve(future: asyncio.Future[list[bytes]], rows: list[bytes]) -> None:
    if not future.done():
        future.set_result(rows)


def _fail(future: asyncio.Future[list[bytes]], exc: Exception) -> None:
    if not future.done():
        future.set_exception(exc)


class InputTable:
    """Tensor mode's stand-in for the SUT's QSL: `batch(slots)` gives the received rows."""

    def __init__(self, width: int, dtype: np.dtype[Any], capacity: int) -> None:
        self.features = np.zeros((capacity, width), dtype)
        self._free: deque[int] = deque(range(capacity))
        self._lock = threading.Lock()
        self.capacity = capacity

    def take(self, n: int) -> np.ndarray:
        with self._lock:
            if n > len(self._free):
                raise RequestError(
                    f"node busy: {n} samples asked, {len(self._free)} of {self.capacity} input slots free",
                    busy=True,
                )
            return np.fromiter((self._free.popleft() for _ in range(n)), np.int64, n)

    def release(self, slots: np.ndarray) -> None:
        with self._lock:
            self._free.extend(slots.tolist())

    def batch(self, indices: np.ndarray) -> np.ndarray:
        return self.features[indices]


@runtime_checkable
class RowsQSL(Protocol):
    """A QSL whose samples are the rows of one array, `features`, that its SUT reads in batches."""

    features: Any  # a 2-D np.ndarray for tensor mode (checked where it is used)

    def batch(self, indices: np.ndarray) -> np.ndarray: ...


@runtime_checkable
class RowsSUT(Protocol):
    """A SUT that reads its inputs through its own `qsl` (a `RowsQSL`): tensor mode puts the input
    table in its place (the module docstring)."""

    qsl: Any


def _rows(sut: object) -> np.ndarray | None:
    """The features of a tensor-mode SUT (a `RowsSUT` whose qsl is a `RowsQSL` of 2-D rows), else None."""
    if not isinstance(sut, RowsSUT) or not isinstance(sut.qsl, RowsQSL):
        return None
    features = sut.qsl.features
    return features if isinstance(features, np.ndarray) and features.ndim == 2 and callable(sut.qsl.batch) else None


class NodeModel:
    """One proctor SUT behind the V2 protocol (see the module docstring for the two modes)."""

    def __init__(self, sut: Any, qsl: Any, model_name: str, *, capacity: int = DEFAULT_CAPACITY) -> None:
        self.sut, self.qsl, self.model_name = sut, qsl, model_name
        features = _rows(sut)
        self.table: InputTable | None = None
        self.inputs: list[tuple[str, str, tuple[int, ...]]]
        self.outputs: list[tuple[str, str, tuple[int, ...]]]
        if features is not None:
            self.table = InputTable(features.shape[1], features.dtype, capacity)
            sut.qsl = self.table  # the SUT now reads the received tensors (module docstring)
            in_type = v2.Tensor.of("x", features[:0]).datatype
            self.inputs = [("x", in_type, (-1, features.shape[1]))]
            self.outputs = [("label", "INT32", (-1, 1))]
            self.row_dtype: np.dtype[Any] = features.dtype
        else:
            qsl.load_samples(list(range(int(qsl.total_sample_count))))
            self.inputs = [("index", "INT64", (-1,))]
            self.outputs = [("output", v2.BYTES, (-1,))]
            self.row_dtype = np.dtype("<i8")
        self.router = CompletionRouter(self.table.release if self.table is not None else lambda s: None)
        self._arrays = isinstance(sut, ArraySUT) and callable(sut.issue_query_arrays)

    @property
    def mode(self) -> str:
        return "tensor" if self.table is not None else "index"

    def max_request_bytes(self, binary: bool = False) -> int:
        """The largest infer request body this node reads: MAX_REQUEST_SAMPLES rows of its input
        (as JSON text: up to 8 bytes of text per byte of data), plus a header's room; never above
        MAX_BODY. A body over it gets 413, a declared one before a byte of it is read."""
        width = self.inputs[0][2][1] if len(self.inputs[0][2]) > 1 else 1
        row = max(1, width) * self.row_dtype.itemsize
        return min(MAX_BODY, MAX_REQUEST_SAMPLES * row * (1 if binary else 8) + (1 << 20))

    def metadata(self) -> dict[str, Any]:
        return v2.model_metadata(self.model_name, self.inputs, self.outputs, platform=f"proctor:{self.mode}")

    def _input(self, req: v2.InferRequest) -> v2.Tensor:
        name = self.inputs[0][0]
        if len(req.inputs) == 1:
            return req.inputs[0]
        for t in req.inputs:
            if t.name == name:
                return t
        raise RequestError(f"expected one input '{name}', got {[t.name for t in req.inputs]}")

    def _rows(self, req: v2.InferRequest) -> np.ndarray:
        """The request's input rows as the SUT's dtype: [n, width] (tensor) or [n] (index)."""
        t = self._input(req)
        name, datatype, shape = self.inputs[0]
        method = req.parameters.get(COMPRESSION_PARAM)
        if method not in (None, compression.NONE):
            if t.datatype != v2.BYTES or len(t.shape) != 1:
                raise RequestError(f"compressed input '{t.name}' must be BYTES [n], one row per element")
            try:
                codec = compression.get(str(method))
            except ConfigError as exc:
                raise RequestError(str(exc)) from None
            assert codec is not None
            size = int(np.prod(shape[1:], dtype=np.int64)) * self.row_dtype.itemsize
            try:
                raw = b"".join(codec.decompress(b, size) for b in t.items())
            except compression.DecompressionError as exc:
                raise RequestError(f"input '{t.name}': {exc}") from None
            return np.frombuffer(raw, self.row_dtype).reshape((len(t.items()), *shape[1:]))
        if t.datatype != datatype:
            raise RequestError(f"input '{t.name}' must be {datatype}, not {t.datatype}")
        if len(t.shape) != len(shape) or any(w != -1 and w != d for w, d in zip(shape, t.shape, strict=True)):
            raise RequestError(f"input '{t.name}' must have shape {list(shape)} (-1: any), not {list(t.shape)}")
        return t.array()

    async def infer(self, req: v2.InferRequest) -> list[bytes]:
        """Each sample's response bytes, in request order."""
        rows = self._rows(req)
        n = int(rows.shape[0])
        if n == 0:
            return []
        loop = asyncio.get_running_loop()
        if self.table is not None:
            slots = self.table.take(n)
            self.table.features[slots] = rows
            indices = slots
        else:
            slots = None
            indices = rows.astype(np.int64).reshape(-1)
            total = int(self.qsl.total_sample_count)
            if indices.min() < 0 or indices.max() >= total:
                raise RequestError(f"index out of range [0, {total})")
        ids, pending = self.router.register(n, loop, slots)
        try:
            if self._arrays:
                self.sut.issue_query_arrays(ids, indices)
            else:
                self.sut.issue_query([QuerySample(i, j) for i, j in zip(ids.tolist(), indices.tolist(), strict=True)])
        except Exception as exc:
            self.router.fail_all(f"the SUT raised {type(exc).__name__}: {exc}")
            raise
        return await pending.future

    def response_tensor(self, rows: list[bytes]) -> v2.Tensor:
        name, datatype, _ = self.outputs[0]
        if datatype == v2.BYTES:
            return v2.Tensor.of_bytes(name, rows)
        dt = v2.DTYPES[datatype]
        if any(len(r) != dt.itemsize for r in rows):
            raise RequestError(f"the SUT answered rows that are not one {datatype} each")
        return v2.Tensor.of(name, np.frombuffer(b"".join(rows), dt).reshape(len(rows), 1))


def _json(obj: Any, status: int = 200) -> web.Response:
    import orjson

    return web.Response(body=orjson.dumps(obj), status=status, content_type="application/json")


def _error(message: str, status: int) -> web.Response:
    return web.Response(body=v2.encode_error(message), status=status, content_type="application/json")


def server_metadata(node_name: str) -> dict[str, Any]:
    """The `GET /v2` object: the node's unique name is what the QDL's Name() aggregates."""
    from proctor.version import __version__

    return {
        "name": node_name,
        "version": __version__,
        "extensions": ["binary_tensor_data", "proctor_compression"],
        "proctor_compression": compression.available(),
    }


def build_app(model: NodeModel, meta: dict[str, Any], gate: Gate | None = None) -> web.Application:
    """The aiohttp application of one node; `meta` is served as is (and may be updated later); `gate`
    bounds its connections (`serving.connections`) when it is served by `listen`."""
    quiet_protocol_errors()
    limit = model.max_request_bytes()  # the JSON form's; a binary request is held to its own below
    failures = gate.failures if gate is not None else FailureLog(log)
    middlewares = ([phases(gate)] if gate is not None else []) + [guard(failures, limit)]
    app = web.Application(client_max_size=limit, middlewares=middlewares)

    async def live(_: web.Request) -> web.Response:
        return _json({"live": True})

    async def ready(_: web.Request) -> web.Response:
        return _json({"ready": True})

    async def server_meta(_: web.Request) -> web.Response:
        return _json(meta)

    def _model(request: web.Request) -> web.Response | None:
        if request.match_info["model"] != model.model_name:
            return _error(f"unknown model '{request.match_info['model']}'; this node serves "
                          f"'{model.model_name}'", 404)
        return None

    async def model_meta(request: web.Request) -> web.Response:
        return _model(request) or _json(model.metadata())

    async def model_ready(request: web.Request) -> web.Response:
        return _model(request) or _json({"name": model.model_name, "ready": True})

    async def infer(request: web.Request) -> web.Response:
        if (bad := _model(request)) is not None:
            return bad
        cap = model.max_request_bytes(binary=v2.HEADER_LENGTH in request.headers)
        if (request.content_length or 0) > cap:
            return _error(f"the request declares {request.content_length} bytes, over this node's {cap}", 413)
        body = bytearray()
        async for piece in request.content.iter_chunked(1 << 16):  # streamed: refused past the cap
            body += piece
            if len(body) > cap:
                return _error(f"the request is over this node's {cap} bytes", 413)
        try:
            req = v2.decode_request(body, request.headers.get(v2.HEADER_LENGTH))
            rows = await model.infer(req)
            out = model.response_tensor(rows)
            method = req.parameters.get(RESPONSE_COMPRESSION_PARAM)
            if method not in (None, compression.NONE) and rows and len({len(r) for r in rows}) == 1:
                codec = compression.get(str(method))  # rows of one size: the receiver bounds by it
                assert codec is not None
                out = v2.Tensor.of_bytes(out.name, [codec.compress(r) for r in rows])
                out.parameters[RESPONSE_COMPRESSION_PARAM] = method
                out.parameters[ROW_BYTES_PARAM] = len(rows[0])
            data, headers = v2.encode_response(model.model_name, [out], id=req.id,
                                               binary=req.wants_binary(out.name))
        except (v2.CodecError, RequestError, ConfigError) as exc:
            busy = isinstance(exc, RequestError) and exc.busy
            return _error(str(exc), 503 if busy else 400)
        except Exception as exc:  # the SUT failed: the client sees why, the node keeps serving
            return _error(f"{type(exc).__name__}: {exc}", 500)
        return web.Response(body=data, headers=headers)

    app.router.add_get("/v2/health/live", live)
    app.router.add_get("/v2/health/ready", ready)
    app.router.add_get("/v2", server_meta)
    app.router.add_get("/v2/models/{model}", model_meta)
    app.router.add_get("/v2/models/{model}/ready", model_ready)
    app.router.add_post("/v2/models/{model}/infer", infer)
    return app


@record(slots=True)
class Node:
    """A started node: its address and name; `stop()` ends it."""

    host: str
    port: int
    name: str
    model: NodeModel
    runner: web.AppRunner
    listener: asyncio.Server
    gate: Gate

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host  # IPv6 in a URL is bracketed
        return f"http://{host}:{self.port}"

    async def stop(self) -> None:
        self.listener.close()
        await self.runner.cleanup()


async def start_node(spec: SutSpec | str, host: str = "127.0.0.1", port: int = 0, name: str | None = None,
                     *, model_name: str | None = None, capacity: int = DEFAULT_CAPACITY,
                     limits: ConnectionLimits | None = None) -> Node:
    """Build the SUT of `spec` (`--sut` syntax), attach its completions, bind, and start serving.

    `port=0` binds an ephemeral port (the Node says which). The default node name,
    `<sut name>@<host>:<port>`, is unique per node even when nodes serve the same SUT. `limits`
    bound its connections (serving.connections; the defaults there when None).
    """
    from proctor.suts import registry

    parsed = as_spec(spec)
    sut, qsl = registry.build(parsed)
    model = NodeModel(sut, qsl, model_name or parsed.target, capacity=capacity)
    completion.attach(model.router)  # a node process runs no test: its SUT reports here
    if isinstance(model.sut, StartableSUT):
        model.sut.start(model.router)
    meta = server_metadata("")
    limits = limits or ConnectionLimits()
    gate = Gate(limits, FailureLog(log))
    try:
        runner = web.AppRunner(build_app(model, meta, gate), access_log=None, auto_decompress=False,
                               **runner_options(limits))
        await runner.setup()
        listener = await listen(runner, gate, host, port)
    except BaseException:
        completion.detach(model.router)
        raise
    bound = port
    for sock in listener.sockets or ():
        bound = sock.getsockname()[1]
    meta["name"] = name or f"{sut.name}@{host}:{bound}"
    return Node(host, bound, meta["name"], model, runner, listener, gate)


def serve(spec: SutSpec | str, host: str, port: int, name: str | None = None, *,
          model_name: str | None = None, on_ready: Callable[[Node], None] | None = None,
          limits: ConnectionLimits | None = None) -> None:
    """Serve until interrupted (Ctrl-C / SIGTERM); `on_ready` is called once the port is bound."""

    async def main() -> None:
        node = await start_node(spec, host, port, name, model_name=model_name, limits=limits)
        try:
            if on_ready is not None:
                on_ready(node)
            await asyncio.Event().wait()
        finally:
            node.model.router.fail_all("node shutting down")
            await node.stop()
            with contextlib.suppress(Exception):
                node.model.sut.close()
            completion.detach(node.model.router)

    with contextlib.suppress(asyncio.CancelledError):
        asyncio.run(main())


def main(argv: Sequence[str] | None = None) -> None:
    """`python -c 'from proctor.serving.node_server import main; main()' --sut digits --port N`:
    the node without the CLI (tests start nodes this way); prints `READY <url> <name>` once bound."""
    import argparse
    import signal
    import sys

    ap = argparse.ArgumentParser(prog="proctor-node")
    ap.add_argument("--sut", default="digits")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--name", default=None)
    ap.add_argument("--model", default=None)
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))

    def ready(node: Node) -> None:
        print(f"READY {node.url} {node.name}", flush=True)

    with contextlib.suppress(KeyboardInterrupt):
        serve(args.sut, args.host, args.port, args.name, model_name=args.model, on_ready=ready)
