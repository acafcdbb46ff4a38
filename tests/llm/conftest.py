"""Fixtures for the LLM path: `proctor serve llm` in a background thread on an ephemeral loopback port."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from proctor.serving.llm_server import LLMServer, ServerOptions


@contextmanager
def running_server(options: ServerOptions) -> Iterator[LLMServer]:
    """Start the server on its own loop thread; yield it once it listens; stop it afterwards."""
    loop = asyncio.new_event_loop()
    server = LLMServer(options)
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        asyncio.run_coroutine_threadsafe(server.start("127.0.0.1", 0), loop).result(timeout=10)
        yield server
    finally:
        asyncio.run_coroutine_threadsafe(server.stop(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()


@pytest.fixture
def llm_server():
    """A factory: `with llm_server(ttft_ms=..., ...) as server:` (server.port is bound)."""

    def make(**kw):
        return running_server(ServerOptions(**kw))

    return make


@pytest.fixture(params=["raw", "aiohttp"])
def http(request):
    """Both transports of the openai SUT (`http=raw|aiohttp`)."""
    return request.param
