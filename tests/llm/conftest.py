"""Fixtures for the LLM path: `proctor serve llm` in a background thread on an ephemeral loopback port,
and third-party servers (transformers serve, llama.cpp) as bounded child processes."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path

import orjson
import pytest

from proctor.clients.openai import from_params
from proctor.loadgen.engine import run_test
from proctor.loadgen.settings import LogOutputSettings, LogSettings, TestSettings
from proctor.loadgen.types import Scenario, TestMode
from proctor.serving.limits import ConnectionLimits
from proctor.serving.llm_server import LLMServer, ServerOptions
from tests.support.child_server import ServerStartError, child_server, free_port


@contextmanager
def running_server(options: ServerOptions, limits: ConnectionLimits | None = None) -> Iterator[LLMServer]:
    """Start the server on its own loop thread; yield it once it listens; stop it afterwards."""
    loop = asyncio.new_event_loop()
    server = LLMServer(options, limits)
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


def serving_python(env_var: str, modules: tuple[str, ...], what: str) -> str:
    """The interpreter that runs a third-party server: $env_var, else this one when it has
    `modules`; otherwise the test skips, saying what to set."""
    py = os.environ.get(env_var)
    if py:
        return py
    if all(importlib.util.find_spec(m) for m in modules):
        return sys.executable
    pytest.skip(f"{what}: set {env_var}=PYTHON (an interpreter with {', '.join(modules)})")


@contextmanager
def server_process(
    name: str, cmd: list[str], ready_path: str, port: int, log: Path, start_s: float,
    env: Mapping[str, str] | None = None,
) -> Iterator[str]:
    """Run a third-party server (bound by `cmd` to 127.0.0.1:port); yield its base URL once
    `ready_path` answers 200 within `start_s` (else the test fails with its log); stop it afterwards."""
    url = f"http://127.0.0.1:{port}"
    with ExitStack() as stack:
        try:
            stack.enter_context(child_server(name, cmd, url + ready_path, log, start_s, env))
        except ServerStartError as e:
            pytest.fail(str(e))
        yield url


@pytest.fixture(scope="session")
def third_party():
    """`(serving_python, free_port, server_process)` for the third-party server tests' fixtures."""
    return serving_python, free_port, server_process


def drive_openai_server(
    tmp_path: Path, url: str, model: str, api: str, scenario: Scenario, words: list[str], max_tokens: int,
    concurrency: int, n: int = 12, **extra: str,
):
    """Run the engine through the openai SUT against a third-party server: n prompts cycled from
    `words`, each asking `max_tokens`; returns (run output, sut)."""
    data = tmp_path / "prompts.jsonl"
    data.write_bytes(b"".join(
        orjson.dumps({"prompt": " ".join(words[(i + k) % len(words)] for k in range(4 + i % 5)),
                      "max_tokens": max_tokens}) + b"\n"
        for i in range(n)
    ))
    sut, qsl = from_params(url=url, model=model, api=api, dataset=str(data), concurrency=str(concurrency),
                           stall_s="60", timeout_s="120", **extra)
    settings = TestSettings(scenario=scenario, mode=TestMode.PERFORMANCE_ONLY, use_token_latencies=True,
                            min_duration_ms=200, min_query_count=n, server_target_qps=4.0,
                            offline_expected_qps=float(n), performance_sample_count_override=n)
    try:
        out = run_test(sut, qsl, settings, LogSettings(LogOutputSettings(outdir=str(tmp_path))),
                       audit_config=None, timeout_s=300)
    finally:
        sut.close()
    return out, sut


@pytest.fixture(scope="session")
def drive_openai():
    """`drive_openai_server` for the third-party server tests."""
    return drive_openai_server
