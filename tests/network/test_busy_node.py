"""Journey 11 of issue 23: a node that answers "HTTP 503: node busy" is asked again (with backoff,
inside the request's deadline), so no sample is lost to a node that serves it in time.

The node is a real `proctor serve node` process behind a loopback proxy that answers 503 for the
first K inference requests and forwards everything else unchanged.
"""

from __future__ import annotations

import asyncio
import threading

import aiohttp
import pytest
from aiohttp import web

from proctor.clients.network import from_params
from proctor.loadgen import Scenario, TestMode
from tests.network.test_network_sut import _run, start_node

pytestmark = pytest.mark.slow

HOP_HEADERS = {"content-length", "transfer-encoding", "connection", "keep-alive", "content-encoding"}


class BusyProxy:
    """Answers 503 to the first `busy` POSTs, forwards the rest (and every GET) to `upstream`."""

    def __init__(self, upstream: str, busy: int) -> None:
        self.upstream, self.busy = upstream, busy
        self.refused = 0
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.url = ""

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        if request.method == "POST" and self.refused < self.busy:
            self.refused += 1
            return web.json_response({"error": "node busy: 64 samples asked, 0 of 64 input slots free"},
                                     status=503)
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_HEADERS | {"host"}}
        async with self.session.request(request.method, self.upstream + request.path_qs, data=body,
                                        headers=headers) as resp:
            data = await resp.read()
            out = {k: v for k, v in resp.headers.items() if k.lower() not in HOP_HEADERS}
            return web.Response(body=data, status=resp.status, headers=out)

    async def _start(self) -> None:
        self.session = aiohttp.ClientSession(auto_decompress=False)
        app = web.Application(client_max_size=1 << 30)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"

    async def _stop(self) -> None:
        await self.session.close()
        await self.runner.cleanup()

    def __enter__(self) -> BusyProxy:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(timeout=10)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self.loop).result(timeout=10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


@pytest.mark.parametrize("scenario", [Scenario.OFFLINE, Scenario.SERVER])
def test_a_node_busy_for_its_first_requests_loses_no_sample(tmp_path, scenario):
    node = start_node("synthetic:service_us=0,workers=1")
    try:
        with BusyProxy(node.url, busy=12) as proxy:
            sut, qsl = from_params(node=proxy.url, qsl="synthetic")
            try:
                out = _run(tmp_path, sut, qsl, scenario, TestMode.PERFORMANCE_ONLY, server_target_qps=100.0)
                report = sut.report()
            finally:
                sut.close()
    finally:
        node.stop()
    assert proxy.refused == 12
    assert sut.lost == {} and out.result.failed_samples == 0 and out.errors == 0
    assert sut.nodes[0].samples == out.records.n_samples_issued
    assert sut.nodes[0].busy_retries == 12 and "12 retries after HTTP 503 (busy)" in report[0]


def test_a_node_busy_past_the_deadline_loses_its_samples(tmp_path):
    node = start_node("synthetic:service_us=0,workers=1")
    try:
        with BusyProxy(node.url, busy=10**9) as proxy:
            sut, qsl = from_params(node=proxy.url, qsl="synthetic", timeout_s="0.3")
            try:
                out = _run(tmp_path, sut, qsl, Scenario.OFFLINE, TestMode.PERFORMANCE_ONLY)
            finally:
                sut.close()
    finally:
        node.stop()
    issued = out.records.n_samples_issued
    assert sut.lost == {proxy.url: issued} and out.result.failed_samples == issued and not out.valid
    assert sut.nodes[0].busy_retries >= 1
    detail = (tmp_path / "mlperf_log_detail.txt").read_text()
    assert "HTTP 503" in detail and "retries over" in detail
