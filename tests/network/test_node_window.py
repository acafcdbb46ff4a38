"""The QDL's per-node in-flight window: a slow node gets at most `window` samples at a time, the
rest wait their turn on the LoadGen side, and every sample still completes.

The node is a stub (aiohttp) that answers each request after a pause and records how many samples
it held at once."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import orjson
import pytest
from aiohttp import web

from proctor.clients.network import DEFAULT_WINDOW, from_params
from proctor.loadgen import LogOutputSettings, LogSettings, Scenario, TestMode, TestSettings, run_test
from proctor.wire import kserve_v2 as v2

META = v2.model_metadata("digits", [("index", "INT64", (-1,))], [("label", "INT32", (-1, 1))])


class SlowNode:
    """Answers each infer request after `pause_s`; `peak`: the most samples it held at once."""

    def __init__(self, pause_s: float) -> None:
        self.pause_s = pause_s
        self.held = self.peak = self.requests = 0
        self.url = ""

    async def infer(self, request: web.Request) -> web.Response:
        body = await request.read()
        req = v2.decode_request(body, request.headers.get(v2.HEADER_LENGTH))
        idx = req.inputs[0].array().reshape(-1)
        n = int(idx.shape[0])
        self.held += n
        self.peak = max(self.peak, self.held)
        self.requests += 1
        try:
            await asyncio.sleep(self.pause_s)
        finally:
            self.held -= n
        data, headers = v2.encode_response("digits", [v2.Tensor.of("label", idx.astype(np.int32).reshape(n, 1))],
                                           binary=True)
        return web.Response(body=data, headers=headers)


@contextmanager
def serving(node: SlowNode) -> Iterator[SlowNode]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    async def meta(_: web.Request) -> web.Response:
        return web.Response(body=orjson.dumps(META), content_type="application/json")

    async def server(_: web.Request) -> web.Response:
        return web.Response(body=orjson.dumps({"name": "slow", "version": "1", "extensions": []}),
                            content_type="application/json")

    async def start() -> web.AppRunner:
        app = web.Application(client_max_size=1 << 26)
        app.router.add_get("/v2", server)
        app.router.add_get("/v2/models/digits", meta)
        app.router.add_post("/v2/models/digits/infer", node.infer)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        node.url = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"  # type: ignore[union-attr]
        return runner

    runner = asyncio.run_coroutine_threadsafe(start(), loop).result(timeout=10)
    try:
        yield node
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()


def _offline(tmp_path, node: SlowNode, **params: str):
    """One Offline query of 1,024 samples (64 requests of 16) to the slow node."""
    sut, qsl = from_params(node=node.url, qsl="synthetic", model="digits", total="1024", perf="1024", chunk="16",
                           **params)
    try:
        ts = TestSettings(scenario=Scenario.OFFLINE, mode=TestMode.PERFORMANCE_ONLY, min_duration_ms=0,
                          min_query_count=1024, offline_expected_qps=1)
        out = run_test(sut, qsl, ts, LogSettings(log_output=LogOutputSettings(outdir=str(tmp_path)),
                                                 enable_trace=False), audit_config=None, timeout_s=60)
    finally:
        sut.close()
    return sut, out


def test_a_slow_node_holds_at_most_the_window(tmp_path):
    with serving(SlowNode(0.02)) as node:
        sut, out = _offline(tmp_path, node, window="64")
    assert out.sut_failures == 0 and not out.incomplete
    assert out.records.n_samples_issued == 1024 and node.requests == 64
    assert node.peak == 64  # four requests of 16 at a time, never more
    assert sut.nodes[0].peak_in_flight == 64 and sut.nodes[0].in_flight == 0
    assert any("up to 64 samples in flight (window=64 held the rest)" in line for line in sut.report())


def test_without_a_tight_window_the_node_gets_the_whole_query_at_once(tmp_path):
    """The counterpart: the default window (2,048) lets all 1,024 samples go at once."""
    assert DEFAULT_WINDOW >= 1024
    with serving(SlowNode(0.05)) as node:
        _, out = _offline(tmp_path / "wide", node)
    assert out.sut_failures == 0 and node.peak > 64


def test_a_request_larger_than_the_window_goes_alone(tmp_path):
    with serving(SlowNode(0.005)) as node:
        sut, out = _offline(tmp_path, node, window="10")
    assert out.sut_failures == 0 and node.peak == 16 and node.requests == 64


@pytest.mark.parametrize("window", ["0", "-1"])
def test_the_window_is_at_least_one_sample(window):
    from proctor.errors import ConfigError

    with pytest.raises(ConfigError, match="window"):
        from_params(node="http://127.0.0.1:9", qsl="synthetic", window=window)
