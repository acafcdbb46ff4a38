"""The KServe V2 (Open Inference Protocol) REST codec: requests and responses, both directions,
JSON tensors and the binary tensor data extension. Pure: bytes in, tensors out, no I/O.

The protocol Triton, KServe and MLServer speak (kserve/open-inference-protocol, "REST"):

- an inference request or response is a JSON object; each tensor has `name`, `datatype`
  (BOOL, UINT8..UINT64, INT8..INT64, FP16, FP32, FP64, BYTES), `shape` and, for JSON tensors,
  `data` (row-major, flat or nested);
- binary tensor data extension: the body is the JSON object followed by the raw tensors in the
  order they appear; the header `Inference-Header-Content-Length` gives the JSON part's length and
  each binary tensor's `parameters.binary_data_size` its byte count. BYTES elements are a 4-byte
  little-endian length followed by the bytes. A request asks for binary outputs with
  `outputs[i].parameters.binary_data = true` (or `parameters.binary_data_output = true`).

Every decoder checks sizes before it reads: a declared size is compared with the bytes actually
received and the element count implied by the shape, so a hostile body gives `CodecError`, never
an allocation of the declared size. Binary tensors are numpy views of the body (no copy).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import orjson

from proctor.errors import CodecError
from proctor.typed_records import field, record

HEADER_LENGTH = "Inference-Header-Content-Length"
BINARY_CONTENT_TYPE = "application/octet-stream"
JSON_CONTENT_TYPE = "application/json"
# proctor's request and output parameters (a QDL and a `proctor serve node` both read and write them)
COMPRESSION_PARAM = "proctor_compression"  # the request's inputs are compressed with this codec
RESPONSE_COMPRESSION_PARAM = "proctor_response_compression"  # asked: compress the outputs; on an output: done
ROW_BYTES_PARAM = "proctor_row_bytes"  # a compressed output's uncompressed size per element

# V2 datatype -> numpy dtype (little endian, as the extension defines); BYTES is handled apart
DTYPES: dict[str, np.dtype[Any]] = {
    "BOOL": np.dtype("?"),
    "UINT8": np.dtype("u1"),
    "UINT16": np.dtype("<u2"),
    "UINT32": np.dtype("<u4"),
    "UINT64": np.dtype("<u8"),
    "INT8": np.dtype("i1"),
    "INT16": np.dtype("<i2"),
    "INT32": np.dtype("<i4"),
    "INT64": np.dtype("<i8"),
    "FP16": np.dtype("<f2"),
    "FP32": np.dtype("<f4"),
    "FP64": np.dtype("<f8"),
}
BYTES = "BYTES"
DATATYPES = (*DTYPES, BYTES)
MAX_DIMS = 32
MAX_NESTING = 33  # nested JSON data: one list level per dimension at most


@record(slots=True)
class Tensor:
    """One named tensor: `data` is a numpy array of the datatype's dtype (shape `shape`), or for
    BYTES a list of bytes objects (one per element, row-major)."""

    name: str
    datatype: str
    shape: tuple[int, ...]
    data: np.ndarray | list[bytes]
    parameters: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, name: str, array: np.ndarray, **parameters: Any) -> Tensor:
        """A numeric tensor from a numpy array (its dtype must be one of the V2 datatypes)."""
        arr = np.asarray(array)
        for datatype, dt in DTYPES.items():
            if arr.dtype == dt or arr.dtype == dt.newbyteorder("="):
                return cls(name, datatype, tuple(arr.shape), arr.astype(dt, copy=False), dict(parameters))
        raise CodecError(f"tensor '{name}': numpy dtype {arr.dtype} has no V2 datatype")

    @classmethod
    def of_bytes(cls, name: str, items: Sequence[bytes], shape: Sequence[int] | None = None) -> Tensor:
        return cls(name, BYTES, tuple(shape) if shape is not None else (len(items),), list(items))

    def array(self) -> np.ndarray:
        if isinstance(self.data, list):
            raise CodecError(f"tensor '{self.name}' is BYTES, not numeric")
        return self.data

    def items(self) -> list[bytes]:
        if not isinstance(self.data, list):
            raise CodecError(f"tensor '{self.name}' is {self.datatype}, not BYTES")
        return self.data


@record(slots=True)
class InferRequest:
    inputs: list[Tensor]
    id: str | None = None
    parameters: dict[str, Any] = field(default_factory=dict)
    outputs: list[dict[str, Any]] = field(default_factory=list)  # requested outputs, as sent

    def wants_binary(self, output: str) -> bool:
        """Whether the client asked for `output` as binary data."""
        for o in self.outputs:
            if o.get("name") == output:
                return bool((o.get("parameters") or {}).get("binary_data", False))
        return bool(self.parameters.get("binary_data_output", False))


@record(slots=True)
class InferResponse:
    model_name: str
    outputs: list[Tensor]
    id: str | None = None
    model_version: str | None = None
    parameters: dict[str, Any] = field(default_factory=dict)

    def output(self, name: str | None = None) -> Tensor:
        """The output called `name` (or the only one)."""
        if name is None:
            if len(self.outputs) != 1:
                raise CodecError(f"expected one output, got {len(self.outputs)}")
            return self.outputs[0]
        for t in self.outputs:
            if t.name == name:
                return t
        raise CodecError(f"no output '{name}' in the response (has {[t.name for t in self.outputs]})")


# --- encoding ------------------------------------------------------------------------------------


def _bytes_payload(items: Iterable[bytes]) -> bytes:
    return b"".join(struct.pack("<I", len(b)) + b for b in items)


def _tensor_json(t: Tensor, binary: bool, chunks: list[bytes]) -> dict[str, Any]:
    if t.datatype not in DATATYPES:
        raise CodecError(f"tensor '{t.name}': unknown datatype '{t.datatype}'")
    obj: dict[str, Any] = {"name": t.name, "datatype": t.datatype, "shape": list(t.shape)}
    params = dict(t.parameters)
    n = math.prod(t.shape)
    if t.datatype == BYTES:
        items = t.items()
        if len(items) != n:
            raise CodecError(f"tensor '{t.name}': {len(items)} BYTES elements for shape {list(t.shape)}")
        if binary:
            raw = _bytes_payload(items)
        else:
            try:
                obj["data"] = [b.decode() for b in items]
            except UnicodeDecodeError:
                raise CodecError(f"tensor '{t.name}': BYTES that are not UTF-8 need binary data") from None
    else:
        arr = np.ascontiguousarray(t.array(), DTYPES[t.datatype])
        if arr.size != n:
            raise CodecError(f"tensor '{t.name}': {arr.size} elements for shape {list(t.shape)}")
        if binary:
            raw = arr.tobytes()
        else:
            obj["data"] = arr.reshape(-1).tolist()
    if binary:
        params["binary_data_size"] = len(raw)
        chunks.append(raw)
    if params:
        obj["parameters"] = params
    return obj


def _finish(obj: dict[str, Any], chunks: list[bytes]) -> tuple[bytes, dict[str, str]]:
    head = orjson.dumps(obj)
    if not chunks:
        return head, {"Content-Type": JSON_CONTENT_TYPE}
    headers = {"Content-Type": BINARY_CONTENT_TYPE, HEADER_LENGTH: str(len(head))}
    return b"".join([head, *chunks]), headers


def encode_request(
    inputs: Sequence[Tensor],
    *,
    id: str | None = None,
    binary: bool = True,
    outputs: Sequence[str] = (),
    binary_outputs: bool | None = None,
    parameters: Mapping[str, Any] | None = None,
) -> tuple[bytes, dict[str, str]]:
    """(body, HTTP headers) of an infer request; `binary` sends the inputs as binary data,
    `binary_outputs` (default: `binary`) asks for binary outputs."""
    chunks: list[bytes] = []
    obj: dict[str, Any] = {"inputs": [_tensor_json(t, binary, chunks) for t in inputs]}
    if id is not None:
        obj["id"] = id
    want = binary if binary_outputs is None else binary_outputs
    params = dict(parameters or {})
    if outputs:
        obj["outputs"] = [
            {"name": o, "parameters": {"binary_data": True}} if want else {"name": o} for o in outputs
        ]
    elif want:
        params["binary_data_output"] = True
    if params:
        obj["parameters"] = params
    return _finish(obj, chunks)


def encode_response(
    model_name: str,
    outputs: Sequence[Tensor],
    *,
    id: str | None = None,
    model_version: str | None = None,
    binary: bool | Iterable[str] = False,
    parameters: Mapping[str, Any] | None = None,
) -> tuple[bytes, dict[str, str]]:
    """(body, HTTP headers) of an infer response; `binary` is a flag or the set of outputs to
    send as binary data."""
    names = None if isinstance(binary, bool) else set(binary)
    chunks: list[bytes] = []
    obj: dict[str, Any] = {"model_name": model_name}
    if model_version is not None:
        obj["model_version"] = model_version
    if id is not None:
        obj["id"] = id
    if parameters:
        obj["parameters"] = dict(parameters)
    obj["outputs"] = [
        _tensor_json(t, bool(binary) if names is None else t.name in names, chunks) for t in outputs
    ]
    return _finish(obj, chunks)


def encode_error(message: str) -> bytes:
    return orjson.dumps({"error": message})


# --- decoding ------------------------------------------------------------------------------------


def _split(body: bytes | bytearray, header_length: str | int | None) -> tuple[Any, memoryview]:
    """(parsed JSON part, the binary part) of a body."""
    if not isinstance(body, bytes | bytearray | memoryview):
        raise CodecError(f"body must be bytes, not {type(body).__name__}")
    view = memoryview(body).cast("B")
    if header_length is None:
        n = len(view)
    else:
        try:
            n = int(str(header_length).strip())
        except ValueError:
            raise CodecError(f"{HEADER_LENGTH} '{str(header_length)[:40]}' is not an integer") from None
        if not 0 <= n <= len(view):
            raise CodecError(f"{HEADER_LENGTH} {n} is outside the body's {len(view)} bytes")
    try:
        obj = orjson.loads(view[:n])
    except orjson.JSONDecodeError as exc:
        raise CodecError(f"the JSON part is not valid JSON: {exc.msg} (line {exc.lineno})") from None
    if not isinstance(obj, dict):
        raise CodecError(f"the JSON part must be an object, not {type(obj).__name__}")
    return obj, view[n:]


def _str(obj: Mapping[str, Any], key: str, where: str, *, required: bool = True) -> str | None:
    value = obj.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise CodecError(f"{where}: '{key}' must be a string, not {type(value).__name__}")
    return value


def _dict(obj: Mapping[str, Any], key: str, where: str) -> dict[str, Any]:
    value = obj.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise CodecError(f"{where}: '{key}' must be an object, not {type(value).__name__}")
    return value


def _shape(raw: Any, where: str) -> tuple[tuple[int, ...], int]:
    if not isinstance(raw, list) or len(raw) > MAX_DIMS:
        raise CodecError(f"{where}: 'shape' must be a list of at most {MAX_DIMS} integers")
    dims: list[int] = []
    for d in raw:
        if isinstance(d, bool) or not isinstance(d, int) or d < 0:
            raise CodecError(f"{where}: shape {str(raw)[:80]} has a dimension that is not an integer >= 0")
        dims.append(d)
    return tuple(dims), math.prod(dims)  # Python ints: no overflow, nothing allocated


def _flatten(data: Any, where: str) -> list[Any]:
    """Row-major elements of flat or nested `data` (no recursion: hostile nesting is refused)."""
    if not isinstance(data, list):
        return [data]
    out: list[Any] = []
    stack: list[tuple[list[Any], int]] = [(data, 0)]  # (list, next position)
    while stack:
        items, pos = stack.pop()
        while pos < len(items):
            v = items[pos]
            pos += 1
            if isinstance(v, list):
                if len(stack) + 2 > MAX_NESTING:
                    raise CodecError(f"{where}: 'data' is nested deeper than {MAX_NESTING} levels")
                stack.append((items, pos))
                items, pos = v, 0
            else:
                out.append(v)
    return out


def _json_array(flat: list[Any], datatype: str, where: str) -> np.ndarray:
    dt = DTYPES[datatype]
    if datatype == "BOOL":
        if not all(isinstance(v, bool) for v in flat):
            raise CodecError(f"{where}: BOOL data must be true/false")
        return np.array(flat, dt)
    for v in flat:
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise CodecError(f"{where}: {datatype} data holds {type(v).__name__} '{str(v)[:40]}'")
    if dt.kind in "iu":
        if not all(isinstance(v, int) for v in flat):
            raise CodecError(f"{where}: {datatype} data must be integers")
        info = np.iinfo(dt)
        if flat and (min(flat) < info.min or max(flat) > info.max):
            raise CodecError(f"{where}: a value is outside {datatype}'s range [{info.min}, {info.max}]")
        return np.array(flat, dt)
    try:
        with np.errstate(over="ignore"):  # a finite double beyond FP16/FP32 range becomes inf
            return np.array([float(v) for v in flat], np.float64).astype(dt)
    except OverflowError:  # an integer beyond double range
        raise CodecError(f"{where}: a value is outside {datatype}'s range") from None


def _read_bytes_items(raw: memoryview, n: int, where: str) -> list[bytes]:
    items: list[bytes] = []
    pos = 0
    while pos < len(raw):
        if pos + 4 > len(raw):
            raise CodecError(f"{where}: BYTES element {len(items)} has a truncated length prefix")
        (size,) = struct.unpack_from("<I", raw, pos)
        pos += 4
        if size > len(raw) - pos:
            raise CodecError(
                f"{where}: BYTES element {len(items)} declares {size} bytes, {len(raw) - pos} remain"
            )
        items.append(bytes(raw[pos : pos + size]))
        pos += size
        if len(items) > n:
            break
    if len(items) != n:
        raise CodecError(f"{where}: {len(items)} BYTES elements for a shape of {n}")
    return items


def _tensor(raw: Any, k: int, kind: str, binary: memoryview, pos: int) -> tuple[Tensor, int]:
    """One tensor object; `pos` is where its binary data starts in `binary`; returns the next pos."""
    where = f"{kind} {k}"
    if not isinstance(raw, dict):
        raise CodecError(f"{where}: must be an object, not {type(raw).__name__}")
    name = _str(raw, "name", where)
    assert name is not None
    where = f"{kind} '{name[:60]}'"
    datatype = _str(raw, "datatype", where)
    if datatype not in DATATYPES:
        raise CodecError(f"{where}: unknown datatype '{str(datatype)[:40]}' (known: {', '.join(DATATYPES)})")
    shape, n = _shape(raw.get("shape"), where)
    params = _dict(raw, "parameters", where)
    size = params.get("binary_data_size")
    if size is not None:
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise CodecError(f"{where}: binary_data_size must be an integer >= 0")
        if "data" in raw:
            raise CodecError(f"{where}: has both 'data' and binary_data_size")
        if size > len(binary) - pos:
            raise CodecError(
                f"{where}: binary_data_size {size} exceeds the {len(binary) - pos} binary bytes left"
            )
        chunk = binary[pos : pos + size]
        if datatype == BYTES:
            return Tensor(name, datatype, shape, _read_bytes_items(chunk, n, where), params), pos + size
        dt = DTYPES[datatype]
        if size != n * dt.itemsize:
            raise CodecError(
                f"{where}: binary_data_size {size} != {n} elements x {dt.itemsize} bytes for shape "
                f"{list(shape)}"
            )
        arr = np.frombuffer(chunk, dt).reshape(shape)
        return Tensor(name, datatype, shape, arr, params), pos + size
    if "data" not in raw:
        raise CodecError(f"{where}: has neither 'data' nor parameters.binary_data_size")
    flat = _flatten(raw["data"], where)
    if len(flat) != n:
        raise CodecError(f"{where}: {len(flat)} data elements for shape {list(shape)} ({n} elements)")
    if datatype == BYTES:
        if not all(isinstance(v, str) for v in flat):
            raise CodecError(f"{where}: BYTES data must be strings")
        return Tensor(name, datatype, shape, [v.encode() for v in flat], params), pos
    return Tensor(name, datatype, shape, _json_array(flat, datatype, where).reshape(shape), params), pos


def _tensors(obj: Mapping[str, Any], key: str, kind: str, binary: memoryview) -> list[Tensor]:
    raw = obj.get(key)
    if not isinstance(raw, list):
        raise CodecError(f"'{key}' must be a list of tensors")
    out: list[Tensor] = []
    pos = 0
    for k, item in enumerate(raw):
        tensor, pos = _tensor(item, k, kind, binary, pos)
        out.append(tensor)
    if pos != len(binary):
        raise CodecError(f"{len(binary) - pos} bytes of binary data follow the last {kind} tensor")
    return out


def decode_request(body: bytes | bytearray, header_length: str | int | None = None) -> InferRequest:
    """An infer request from its body and `Inference-Header-Content-Length` (None: JSON only)."""
    obj, binary = _split(body, header_length)
    inputs = _tensors(obj, "inputs", "input", binary)
    outputs = obj.get("outputs", [])
    if not isinstance(outputs, list) or not all(
        isinstance(o, dict) and isinstance(o.get("name"), str) and isinstance(o.get("parameters", {}), dict)
        for o in outputs
    ):
        raise CodecError("'outputs' must be a list of objects with a string 'name'")
    return InferRequest(inputs, _str(obj, "id", "request", required=False), _dict(obj, "parameters", "request"),
                        outputs)


def decode_response(body: bytes, header_length: str | int | None = None) -> InferResponse:
    """An infer response from its body and `Inference-Header-Content-Length` (None: JSON only);
    an `{"error": ...}` body raises CodecError with the server's message."""
    obj, binary = _split(body, header_length)
    if "error" in obj and "outputs" not in obj:
        raise CodecError(f"the server answered an error: {str(obj['error'])[:500]}")
    name = _str(obj, "model_name", "response")
    assert name is not None
    version = obj.get("model_version")
    return InferResponse(
        name,
        _tensors(obj, "outputs", "output", binary),
        _str(obj, "id", "response", required=False),
        None if version is None else str(version),
        _dict(obj, "parameters", "response"),
    )


def error_message(body: bytes) -> str:
    """The server's message from an error body (`{"error": ...}`), else the body's start."""
    try:
        obj = orjson.loads(body)
        if isinstance(obj, dict) and "error" in obj:
            return str(obj["error"])[:500]
    except orjson.JSONDecodeError:
        pass
    return bytes(body[:200]).decode(errors="replace")


def model_metadata(
    name: str, inputs: Sequence[tuple[str, str, Sequence[int]]], outputs: Sequence[tuple[str, str, Sequence[int]]],
    *, platform: str = "proctor", versions: Sequence[str] = (),
) -> dict[str, Any]:
    """The `GET /v2/models/{name}` object (shape -1 = any size)."""
    def spec(items: Sequence[tuple[str, str, Sequence[int]]]) -> list[dict[str, Any]]:
        return [{"name": n, "datatype": d, "shape": list(s)} for n, d, s in items]

    return {"name": name, "versions": list(versions), "platform": platform,
            "inputs": spec(inputs), "outputs": spec(outputs)}


def tensor_specs(metadata: Any, key: str) -> list[tuple[str, str, tuple[int, ...]]]:
    """(name, datatype, shape) of each input or output in a model-metadata object."""
    items = metadata.get(key) if isinstance(metadata, dict) else None
    if not isinstance(items, list):
        raise CodecError(f"model metadata: '{key}' must be a list")
    out = []
    for k, item in enumerate(items):
        where = f"model metadata {key}[{k}]"
        if not isinstance(item, dict):
            raise CodecError(f"{where}: must be an object")
        name, datatype = _str(item, "name", where), _str(item, "datatype", where)
        shape = item.get("shape")
        if not isinstance(shape, list) or not all(isinstance(d, int) and not isinstance(d, bool) for d in shape):
            raise CodecError(f"{where}: 'shape' must be a list of integers")
        assert name is not None and datatype is not None
        out.append((name, datatype, tuple(shape)))
    return out


__all__ = [
    "BINARY_CONTENT_TYPE",
    "COMPRESSION_PARAM",
    "DATATYPES",
    "DTYPES",
    "HEADER_LENGTH",
    "JSON_CONTENT_TYPE",
    "RESPONSE_COMPRESSION_PARAM",
    "ROW_BYTES_PARAM",
    "CodecError",
    "InferRequest",
    "InferResponse",
    "Tensor",
    "decode_request",
    "decode_response",
    "encode_error",
    "encode_request",
    "encode_response",
    "error_message",
    "model_metadata",
    "tensor_specs",
]
