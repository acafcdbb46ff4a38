"""The openai SUT's HTTP transports behind one Protocol, and the choice between them.

Two siblings implement `Transport`: `http1.RawClient` (`http=raw`, the default: lean HTTP/1.1,
each request written by the issuing thread itself) and `aiohttp_transport.AiohttpClient`
(`http=aiohttp`, and every https:// endpoint: TLS). Both build on `stream.StreamClient` and report
to a `stream.StreamSink`; the SUT and the worker processes see only this Protocol.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Protocol
from urllib.parse import urlsplit

from proctor.clients.openai_config import OpenAIConfig
from proctor.clients.stream import Endpoint, Request, StreamSink, Times

log = logging.getLogger("proctor.clients.openai")


class Transport(Protocol):
    """What carries the requests of one asyncio loop: `open`/`shut` run on that loop."""

    endpoints: list[Endpoint]  # their `outstanding` and `sent` counts, for the report
    tokenizer: Any  # the local tokenizer counting tokens, None without one
    times: Times | None  # the per-request hops are stamped into this while it is set
    export: Any  # request_export.RequestLog while the SUT exports (each stream's chunk count), else None

    async def open(self) -> None:
        """Open the session (or warm connections) on the running loop."""

    async def shut(self) -> None:
        """Drop the streams in flight (no outcome reported) and close every connection."""

    async def preconnect(self, n: int) -> int:
        """Open connections until each endpoint has n idle ones, on the running loop; how many were
        opened (0 where the transport opens them only with requests)."""

    def connect_counts(self) -> tuple[int, int] | None:
        """(connections opened ahead of requests, requests that waited for a connect), None where
        the transport does not count them."""

    def start(self, requests: list[Request]) -> None:
        """Send requests, called on the loop thread."""

    def submit(self, requests: list[Request]) -> None:
        """Send requests, called from any thread (the engine's issuing thread)."""

    def dry_submit(self) -> None:
        """Run `submit`'s pure parts dry on the issuing thread (loadgen.types.WarmableSUT): nothing
        is sent, counted or recorded."""


def make_transport(config: OpenAIConfig, body: Callable[[int], bytes], sink: StreamSink) -> Transport:
    """The config's transport: the raw HTTP/1.1 client for http=raw and http:// endpoints, else aiohttp."""
    if config.http == "raw":
        if all(urlsplit(u).scheme == "http" for u in config.urls):
            from proctor.clients.http1 import RawClient

            return RawClient(config, body, sink, config.warm)
        log.info("https:// endpoints: the aiohttp transport carries them")
    from proctor.clients.aiohttp_transport import AiohttpClient

    return AiohttpClient(config, body, sink)


__all__ = ["Transport", "make_transport"]
