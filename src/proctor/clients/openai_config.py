"""The openai SUT's configuration: what to ask which endpoints, how long to wait, which transport.

A frozen value, shared by the SUT, both transports and the worker processes (it is pickled to
them), so it lives apart from all of them. `body` builds a sample's request body at load time.
"""

from __future__ import annotations

from typing import Any

import orjson

from proctor.clients.generation import DEFAULT_MAX_TOKENS
from proctor.clients.llm_dataset import LLMSample
from proctor.errors import ConfigError
from proctor.typed_records import field, record
from proctor.wire.urls import check_http_url

APIS = {"completions": "/v1/completions", "chat": "/v1/chat/completions"}
HTTP_TRANSPORTS = ("raw", "aiohttp")
# when a response's bytes arrived: the kernel's receive timestamp, or the read that returned them
RX_STAMPS = ("kernel", "user")
# What a sample's response logs: its text (UTF-8), or its token ids as int32 (little-endian), as the
# MLPerf LLM reference implementations log them and compliance/TEST06 reads them.
OUTPUTS = ("text", "ids")
MAX_PROCS = 256


def endpoint_url(url: str, api: str) -> str:
    """A base URL (`http://host:port`, `.../v1`) or a full endpoint URL to the endpoint to POST to."""
    parts = check_http_url(url, "url", "http://HOST:PORT[/v1]")
    path = parts.path.rstrip("/")
    if path.endswith(("/completions", "/chat/completions")):
        return url
    if path.endswith("/v1"):
        path = path[: -len("/v1")]
    return f"{parts.scheme}://{parts.netloc}{path}{APIS[api]}"


@record(frozen=True, slots=True)
class OpenAIConfig:
    urls: tuple[str, ...]
    model: str
    api: str = "completions"
    max_tokens: int = DEFAULT_MAX_TOKENS  # the benchmark's, from clients.generation, in a run
    min_tokens: int = 0  # sent as `min_tokens` (vLLM/SGLang) when > 0: the benchmark's min_new_tokens
    temperature: float = 0.0  # 0: greedy search (the rules' decoding for most LLM benchmarks)
    top_p: float | None = None  # sent when set (gpt-oss-120b: 1.0)
    timeout_s: float = 600.0  # per request, from send to the end of its stream
    stall_s: float = 60.0  # no byte for this long: the stream is given up
    connect_s: float = 10.0
    concurrency: int = 0  # streams in flight at most (0: no limit beyond max_connections)
    max_connections: int = 8192
    token_ids: bool = False  # ask for token ids (vLLM `return_token_ids`)
    ignore_eos: bool = False  # generate exactly max_tokens (vLLM/SGLang `ignore_eos` + `min_tokens`)
    logprobs: bool = False  # ask for per-token logprobs and count their entries (llama.cpp, OpenAI)
    tokenizer: str | None = None
    procs: int = 0  # worker processes carrying the streams (0: one loop thread in this process)
    http: str = "raw"  # transport: "raw" (proctor.clients.http1) or "aiohttp"
    warm: int = 4  # connections opened per endpoint at start (http=raw)
    rx_stamp: str = "kernel"  # http=raw: "kernel" (SO_TIMESTAMPNS where the OS gives it) or "user"
    extra: dict[str, Any] = field(default_factory=dict)
    output: str = "text"  # OUTPUTS: "ids" logs int32 token ids (and asks for them: return_token_ids)

    def __post_init__(self) -> None:
        if not self.urls:
            raise ConfigError("the openai SUT needs url=http://HOST:PORT", key="url")
        if self.api not in APIS:
            raise ConfigError(f"api={self.api!r}: expected one of {', '.join(APIS)}", key="api")
        if not 1 <= self.max_tokens <= 1_000_000:
            raise ConfigError(f"max_tokens={self.max_tokens}: expected 1..1000000", key="max_tokens")
        if not 0 <= self.min_tokens <= 1_000_000:
            raise ConfigError(f"min_tokens={self.min_tokens}: expected 0..1000000", key="min_tokens")
        for key in ("timeout_s", "stall_s", "connect_s"):
            v = getattr(self, key)
            if not 0 < v <= 86_400:
                raise ConfigError(f"{key}={v}: expected seconds in (0, 86400]", key=key)
        if self.http not in HTTP_TRANSPORTS:
            raise ConfigError(f"http={self.http!r}: expected one of {', '.join(HTTP_TRANSPORTS)}", key="http")
        if self.rx_stamp not in RX_STAMPS:
            raise ConfigError(f"rx_stamp={self.rx_stamp!r}: expected one of {', '.join(RX_STAMPS)}", key="rx_stamp")
        if self.output not in OUTPUTS:
            raise ConfigError(f"output={self.output!r}: expected one of {', '.join(OUTPUTS)}", key="output")
        if not 0 <= self.warm <= 1024:
            raise ConfigError(f"warm={self.warm}: expected 0..1024 connections per endpoint", key="warm")
        if not 0 <= self.procs <= MAX_PROCS:
            raise ConfigError(f"procs={self.procs}: expected 0..{MAX_PROCS}", key="procs")
        if 0 < self.concurrency < self.procs:
            raise ConfigError(
                f"concurrency={self.concurrency} is split over procs={self.procs} workers: give at least "
                "one stream per worker",
                key="concurrency",
            )

    def body(self, s: LLMSample) -> bytes:
        """The JSON request body of one sample (built at load time, outside the timed part)."""
        n = s.max_tokens or self.max_tokens
        req: dict[str, Any] = {"model": self.model, "max_tokens": n, "temperature": self.temperature}
        if self.top_p is not None:
            req["top_p"] = self.top_p
        if self.min_tokens:
            req["min_tokens"] = min(self.min_tokens, n)
        if self.api == "chat":
            if s.prompt is None:
                raise ConfigError("api=chat needs text prompts; this sample has only input_ids", key="api")
            system = [{"role": "system", "content": s.system}] if s.system else []
            req["messages"] = [*system, {"role": "user", "content": s.prompt}]
        elif s.input_ids is not None:
            req["prompt"] = list(s.input_ids)
        else:  # a completion has no system role: the system prompt leads the text
            req["prompt"] = f"{s.system}\n\n{s.prompt}" if s.system else s.prompt
        req["stream"] = True
        req["stream_options"] = {"include_usage": True}
        if self.token_ids or self.output == "ids":
            req["return_token_ids"] = True
        if self.logprobs:  # one entry per token: an exact count where no usage record comes
            if self.api == "chat":  # some servers (llama.cpp's Python one) send none without top_logprobs
                req["logprobs"], req["top_logprobs"] = True, 0
            else:
                req["logprobs"] = 1
        if self.ignore_eos:
            req["ignore_eos"] = True
            req["min_tokens"] = n
        req.update(self.extra)
        return orjson.dumps(req)


__all__ = ["APIS", "HTTP_TRANSPORTS", "MAX_PROCS", "OUTPUTS", "OpenAIConfig", "endpoint_url"]
