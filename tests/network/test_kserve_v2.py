"""The KServe V2 codec: round trips both ways, JSON and binary, and hostile bodies."""

from __future__ import annotations

import contextlib
import struct

import numpy as np
import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from proctor.wire import compression
from proctor.wire import kserve_v2 as v2
from proctor.wire.kserve_v2 import CodecError, Tensor


def _arrays():
    dtypes = st.sampled_from(sorted(v2.DTYPES))
    shapes = st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple)

    @st.composite
    def build(draw):
        datatype, shape = draw(dtypes), draw(shapes)
        dt = v2.DTYPES[datatype]
        n = int(np.prod(shape, dtype=np.int64))
        raw = draw(st.binary(min_size=n * dt.itemsize, max_size=n * dt.itemsize))
        arr = np.frombuffer(raw, dt).reshape(shape)
        if dt.kind == "f":
            arr = np.nan_to_num(arr, nan=0.0, posinf=1.0, neginf=-1.0)  # JSON has no NaN/inf
        if dt.kind == "b":
            arr = np.frombuffer(raw, np.uint8).reshape(shape) % 2 == 1
        return Tensor.of("t", arr)

    return build()


@pytest.mark.fuzz
@given(_arrays(), st.booleans(), st.lists(st.binary(max_size=20), max_size=5))
def test_request_round_trips_in_json_and_binary(t, binary, items):
    extra = Tensor.of_bytes("b", items) if binary else Tensor.of_bytes("b", [i.hex().encode() for i in items])
    body, headers = v2.encode_request([t, extra], id="q1", binary=binary, outputs=["y"])
    req = v2.decode_request(body, headers.get(v2.HEADER_LENGTH))
    got, got_b = req.inputs
    assert (got.name, got.datatype, got.shape, req.id) == ("t", t.datatype, t.shape, "q1")
    assert got.array().tobytes() == t.array().tobytes()
    assert got_b.items() == extra.items()
    assert req.wants_binary("y") is binary


def test_response_round_trips_and_picks_binary_outputs():
    a = Tensor.of("label", np.array([[3], [7]], np.int32))
    b = Tensor.of_bytes("raw", [b"\x00\x01", b""])
    body, headers = v2.encode_response("digits", [a, b], id="7", binary={"raw"})
    resp = v2.decode_response(body, headers[v2.HEADER_LENGTH])
    assert resp.model_name == "digits" and resp.id == "7"
    assert resp.output("label").array().tolist() == [[3], [7]]
    assert resp.output("raw").items() == [b"\x00\x01", b""]
    assert "data" in orjson.loads(body[: int(headers[v2.HEADER_LENGTH])])["outputs"][0]  # label as JSON


def test_nested_json_data_and_triton_style_requests_decode():
    body = orjson.dumps({"inputs": [{"name": "x", "datatype": "FP32", "shape": [2, 2], "data": [[1, 2], [3, 4.5]]}],
                         "outputs": [{"name": "y", "parameters": {"binary_data": True}}]})
    req = v2.decode_request(body)
    assert req.inputs[0].array().tolist() == [[1.0, 2.0], [3.0, 4.5]] and req.wants_binary("y")


@pytest.mark.parametrize(
    ("obj", "binary", "words"),
    [
        ({"inputs": [{"name": "x", "datatype": "FP32", "shape": [2], "data": [1]}]}, b"", "1 data elements"),
        ({"inputs": [{"name": "x", "datatype": "FP33", "shape": [1], "data": [1]}]}, b"", "unknown datatype"),
        ({"inputs": [{"name": "x", "datatype": "INT8", "shape": [1], "data": [300]}]}, b"", "range"),
        ({"inputs": [{"name": "x", "datatype": "INT32", "shape": [1], "data": [1.5]}]}, b"", "integers"),
        ({"inputs": [{"name": "x", "datatype": "INT64", "shape": [1], "data": "U64"}]}, b"", "integers|range"),
        ({"inputs": [{"name": "x", "datatype": "INT64", "shape": [1], "data": "BIG"}]}, b"", "not valid JSON|range"),
        ({"inputs": [{"name": "x", "datatype": "FP32", "shape": [-1], "data": []}]}, b"", "shape"),
        ({"inputs": [{"name": "x", "datatype": "FP32", "shape": [2**62, 2**62],
                      "parameters": {"binary_data_size": 2**63}}]}, b"\0" * 8, "exceeds"),
        ({"inputs": [{"name": "x", "datatype": "FP32", "shape": [2**40],
                      "parameters": {"binary_data_size": 8}}]}, b"\0" * 8, "elements x 4 bytes"),
        ({"inputs": [{"name": "x", "datatype": "FP32", "shape": [1],
                      "parameters": {"binary_data_size": 4}}]}, b"\0" * 9, "bytes of binary data follow"),
        ({"inputs": [{"name": "b", "datatype": "BYTES", "shape": [1],
                      "parameters": {"binary_data_size": 8}}]}, struct.pack("<I", 2**31) + b"abcd", "declares"),
        ({"inputs": "x"}, b"", "list of tensors"),
        ({"inputs": [{"name": 5, "datatype": "FP32", "shape": [1], "data": [1]}]}, b"", "'name' must be a string"),
    ],
)
def test_bad_requests_give_a_clear_codec_error(obj, binary, words):
    head = orjson.dumps(obj).replace(b'"BIG"', b"[" + b"9" * 5000 + b"]").replace(b'"U64"', b"[18446744073709551616]")
    with pytest.raises(CodecError, match=words):
        v2.decode_request(head + binary, len(head) if binary else None)


def test_bad_header_length_and_error_bodies():
    with pytest.raises(CodecError, match="not an integer"):
        v2.decode_request(b"{}", "abc")
    with pytest.raises(CodecError, match="outside the body"):
        v2.decode_request(b"{}", 99)
    with pytest.raises(CodecError, match="server answered an error: boom"):
        v2.decode_response(v2.encode_error("boom"))
    with pytest.raises(CodecError, match="nested deeper"):
        v2.decode_request(orjson.dumps({"inputs": [{"name": "x", "datatype": "FP32", "shape": [1],
                                                    "data": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}]}))


_JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=5),
    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.sampled_from(["name", "datatype", "shape", "data",
                                                                         "parameters", "binary_data_size",
                                                                         "inputs", "outputs", "model_name"]), c,
                                                        max_size=5),
    max_leaves=30,
)


@pytest.mark.fuzz
@given(st.binary(max_size=300), st.one_of(st.none(), st.integers(-5, 400), st.text(max_size=6)))
def test_random_bytes_never_crash_the_decoders(body, header):
    for decode in (v2.decode_request, v2.decode_response):
        with contextlib.suppress(CodecError):
            decode(body, header)


@pytest.mark.fuzz
@given(_JSONISH, st.binary(max_size=64))
def test_random_json_structures_never_crash_the_decoders(obj, tail):
    head = orjson.dumps({"inputs": obj, "outputs": obj, "model_name": "m"} if not isinstance(obj, dict) else obj)
    for decode in (v2.decode_request, v2.decode_response):
        with contextlib.suppress(CodecError):
            decode(head + tail, len(head))


@pytest.mark.fuzz
@given(st.binary(max_size=200), st.integers(0, 64))
def test_decompression_is_bounded_and_never_crashes(data, size):
    for name in compression.available():
        codec = compression.get(name)
        assert codec is not None
        try:
            out = codec.decompress(data, size)
            assert len(out) == size
        except compression.DecompressionError:
            pass


def test_a_compression_bomb_is_refused_without_inflating():
    for name in compression.available():
        codec = compression.get(name)
        assert codec is not None
        bomb = codec.compress(b"\0" * 10_000_000)
        with pytest.raises(compression.DecompressionError):
            codec.decompress(bomb, 256)
        assert codec.decompress(codec.compress(b"abc" * 10), 30) == b"abc" * 10
