"""The network client against a node that lies (issue 22, classes 2 and 4 and "also seen"): sizes a
node declares are not limits, compressed streams are bounded and must end where they say, bodies
are read as a stream under proctor's own bound, outputs must match the model's metadata, and a
redirect is never followed. Each lie fails its samples; none raises or hangs the run."""

from __future__ import annotations

import resource
import zlib

import numpy as np
import orjson
import pytest

from proctor.clients.network import from_params
from proctor.loadgen import LogOutputSettings, LogSettings, Scenario, TestMode, TestSettings, run_test
from proctor.wire import kserve_v2 as v2
from proctor.wire.kserve_v2 import RESPONSE_COMPRESSION_PARAM, ROW_BYTES_PARAM
from tests.support.hostile_http import hostile_server

META = v2.model_metadata("digits", [("index", "INT64", (-1,))], [("label", "INT32", (-1, 1))])


def _http(body: bytes, headers: dict[str, str] | None = None, status: str = "200 OK") -> bytes:
    head = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    return f"HTTP/1.1 {status}\r\n{head}Content-Length: {len(body)}\r\n\r\n".encode() + body


def _n(req: bytes) -> int:
    """Samples in an infer request (binary extension: its JSON header)."""
    head, _, body = req.partition(b"\r\n\r\n")
    length = None
    for line in head.split(b"\r\n"):
        k, _, v = line.partition(b":")
        if k.strip().lower() == v2.HEADER_LENGTH.lower().encode():
            length = int(v)
    return int(v2.decode_request(body, length).inputs[0].shape[0])


def _node(infer):
    def respond(req: bytes) -> bytes:
        line = req.split(b"\r\n", 1)[0]
        if line.startswith(b"GET /v2/models/"):
            return _http(orjson.dumps(META), {"Content-Type": "application/json"})
        if line.startswith(b"GET /v2"):
            return _http(orjson.dumps({"name": "liar", "version": "1", "extensions": []}),
                         {"Content-Type": "application/json"})
        return infer(req, _n(req))

    return respond


def _tensor_response(tensor: v2.Tensor) -> bytes:
    data, headers = v2.encode_response("digits", [tensor], binary=True)
    return _http(data, headers)


def _run(tmp_path, respond, **params):
    with hostile_server(respond) as srv:
        sut, qsl = from_params(node=f"http://127.0.0.1:{srv.port}", **{k: str(v) for k, v in params.items()})
        try:
            ts = TestSettings(scenario=Scenario.OFFLINE, mode=TestMode.PERFORMANCE_ONLY, min_duration_ms=10,
                              min_query_count=1, offline_expected_qps=64)
            out = run_test(sut, qsl, ts, LogSettings(log_output=LogOutputSettings(outdir=str(tmp_path)),
                                                     enable_trace=False), audit_config=None, timeout_s=60)
        finally:
            sut.close()
    return sut, out


def _bomb(req: bytes, n: int) -> bytes:
    rows = [zlib.compress(bytes(64 << 20), 9)] * n  # 64 MiB of zeros each, ~64 KB compressed
    t = v2.Tensor.of_bytes("label", rows)
    t.parameters[RESPONSE_COMPRESSION_PARAM] = "zlib"
    t.parameters[ROW_BYTES_PARAM] = 64 << 20
    return _tensor_response(t)


def _trailing(req: bytes, n: int) -> bytes:
    t = v2.Tensor.of_bytes("label", [zlib.compress(np.int32(1).tobytes()) + b"extra"] * n)
    t.parameters[RESPONSE_COMPRESSION_PARAM] = "zlib"
    t.parameters[ROW_BYTES_PARAM] = 4
    return _tensor_response(t)


LIARS = {
    "zlib bomb declaring 64 MiB rows": _bomb,
    "bytes after the compressed stream": _trailing,
    "a body declared far over the bound": lambda req, n: (
        b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n" + b"{" * 1000),
    "FP64 rows of width 3": lambda req, n: _tensor_response(v2.Tensor.of("label", np.zeros((n, 3), np.float64))),
    "INT32 rows of width 0": lambda req, n: _tensor_response(v2.Tensor.of("label", np.zeros((n, 0), np.int32))),
    "INT32 rows of width 2": lambda req, n: _tensor_response(v2.Tensor.of("label", np.zeros((n, 2), np.int32))),
    "a gzip-encoded body": lambda req, n: _http(b"\x1f\x8b" + b"\0" * 20, {"Content-Encoding": "gzip"}),
    "a redirect": lambda req, n: _http(b"", {"Location": "http://127.0.0.1:1/v2/models/digits/infer"},
                                       "307 Temporary Redirect"),
}


@pytest.mark.parametrize("lie", list(LIARS))
def test_each_lie_fails_its_samples_and_the_run_ends(tmp_path, lie):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    sut, out = _run(tmp_path, _node(LIARS[lie]), qsl="synthetic", total=64, chunk=16)
    grew_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    n = out.records.n_samples_issued
    assert not out.incomplete and not out.valid, lie
    assert sum(sut.lost.values()) == n and out.result.failed_samples == n, lie
    assert grew_mb < 48, f"{lie}: peak RSS grew {grew_mb:.0f} MB"


def test_an_honest_node_of_the_same_shape_passes(tmp_path):
    honest = lambda req, n: _tensor_response(v2.Tensor.of("label", np.ones((n, 1), np.int32)))  # noqa: E731
    sut, out = _run(tmp_path, _node(honest), qsl="synthetic", total=64, chunk=16)
    assert not sut.lost and out.result.failed_samples == 0
