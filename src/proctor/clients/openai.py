"""A SUT that drives OpenAI-compatible LLM endpoints over HTTP, streaming (vLLM, SGLang, TGI, ...).

`--sut openai:url=URL[,url=URL2...],model=NAME,api=completions|chat,dataset=FILE`: every sample
becomes one streamed `/v1/completions` or `/v1/chat/completions` request (`stream: true`,
`stream_options.include_usage`) over keep-alive connections, read by one asyncio loop in a
background thread (thousands of concurrent streams). Transport `http=raw` (the default,
`proctor.clients.http1`): the engine's issuing thread writes each pre-built request itself on an idle
connection and the first-token time is read where the bytes arrive; `http=aiohttp`: one aiohttp
session on the loop (also what carries https:// endpoints). The first chunk that carries
a token reports the first token to the run's sink and the end of the stream completes the sample
with its token count, both the moment the chunk is parsed, so the engine stamps TTFT and TPOT itself.

Token counts are exact or nothing: from the token ids the server returns (`token_ids`, vLLM's
`return_token_ids`, or per-token `logprobs`), else from the stream's usage record, else by
re-tokenizing the text with a local tokenizer (`tokenizer=PATH`, the `tokenizers` package); a
chunk is never taken for one token. `count_sources` says which source each sample used.

Faults (HTTP errors, 429s, connect errors, per-request timeouts, stalls past the no-progress
timeout, dropped streams, broken SSE, a stream without a token count) are counted per kind in
`faults`, logged with the sample, sent to the run's error log, and the sample fails (`sink.fail`):
the engine counts it as an error, it adds no TTFT and no per-token time of its own.

Structure: a `transport.Transport` (`http1.RawClient` or `aiohttp_transport.AiohttpClient`, both on
`stream.StreamClient`) carries the requests of one asyncio loop and reports every outcome through a
small `stream.StreamSink`. With `procs=0` (the default) one transport runs on a loop thread in the
engine's process and its `LocalSink` calls the SUT's completion sink at once. With `procs=N` the
transports run in N worker processes (`openai_procs`) whose sink sends event tuples stamped with
`time.perf_counter_ns` (the engine's clock, shared by every process of the machine) back in
batches; the engine's process keeps the one schedule and applies them with their `t_ns`. Both
paths measure the send lateness (request sent - engine issue) for `report()`.

The completion sink: the engine hands the SUT its own with `start(sink)`; until then (a caller that
never calls `start`) a `ForwardingSink` routes to the run in progress. `record_times()` has every
request's hops stamped into `times` (`stream.RequestTimes`), for the client bench.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from proctor.clients.llm_dataset import DatasetSpec, LLMDataset, load_dataset
from proctor.clients.openai_config import APIS, OpenAIConfig, endpoint_url
from proctor.clients.stream import FAULT_KINDS, Endpoint, StreamState, Times, new_loop, times_of
from proctor.clients.tally import Tally
from proctor.clients.transport import Transport, make_transport
from proctor.errors import ConfigError
from proctor.loadgen.sink import CompletionSink
from proctor.loadgen.types import QuerySample, QuerySampleResponse

log = logging.getLogger("proctor.clients.openai")


class LocalSink:
    """The in-process path: every outcome goes to the SUT's completion sink at once."""

    def __init__(self, tally: Tally) -> None:
        self.tally = tally

    def sent(self, i: int, t_issue: int, t_sent: int) -> None:
        self.tally.note_sent(i, t_issue, t_sent)

    def first_token(self, i: int, text: bytes, t_ns: int | None = None) -> None:
        tally = self.tally
        if tally.times is not None:
            times_of(tally.times, i).first_token = time.perf_counter_ns()
        tally.sink.first_token([QuerySampleResponse(i, text)], t_ns=t_ns)

    def complete(
        self, i: int, output: bytes, n: int, source: str, mismatch: bool, t_ns: int | None = None
    ) -> None:
        tally = self.tally
        tally.note_done(i, source, mismatch)
        if tally.times is not None:
            times_of(tally.times, i).done = time.perf_counter_ns()
        tally.sink.complete([QuerySampleResponse(i, output, n)], t_ns=t_ns)

    def fail(self, i: int, idx: int, kind: str, message: str) -> None:
        if self.tally.times is not None:
            times_of(self.tally.times, i).done = time.perf_counter_ns()
        self.tally.fail(i, idx, kind, message)

    def junk(self, n: int) -> None:
        self.tally.junk_events += n


class OpenAISUT(Tally):
    """Streams each sample to the endpoint with the fewest requests in flight; see the module doc."""

    def __init__(self, config: OpenAIConfig, qsl: LLMDataset, dataset: DatasetSpec | None = None) -> None:
        super().__init__()
        self.config = config
        self.qsl = qsl
        self._closed = False
        self.pool: Any = None
        self.client: Transport | None = None
        if config.procs > 0:
            from proctor.clients.openai_procs import WorkerPool

            self.endpoints = [Endpoint(endpoint_url(u, config.api)) for u in config.urls]
            self.pool = WorkerPool(config, dataset or ("samples", qsl.samples), self, self.endpoints)
            return
        client = self.client = make_transport(config, self._body, LocalSink(self))
        self.tokenizer = client.tokenizer
        self.endpoints = client.endpoints
        self._loop = new_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="openai-sut", daemon=True)
        self._thread.start()
        asyncio.run_coroutine_threadsafe(client.open(), self._loop).result()

    def _body(self, idx: int) -> bytes:
        body = self.qsl.bodies.get(idx)
        if body is None:  # not loaded (a caller outside the engine): build it now
            body = self.config.body(self.qsl.samples[idx])
        return body

    @property
    def name(self) -> str:
        return f"openai:{self.config.model}@{','.join(e.url for e in self.endpoints)}"

    def start(self, sink: CompletionSink) -> None:
        """The engine's sink for this run's completions (the transports are already open)."""
        self.sink = sink

    def record_times(self) -> Times:
        """From now on, stamp each request's hops (`stream.RequestTimes`) into the returned dict,
        keyed by response id: one record per request while recording, nothing when not."""
        times: Times = {}
        self.times = times
        if self.client is not None:
            self.client.times = times
        return times

    # --- the engine's calls (any thread) ------------------------------------------------------------

    def issue_query(self, samples: list[QuerySample]) -> None:
        self._issue([(s.id, s.index) for s in samples])

    def issue_query_arrays(self, ids: np.ndarray, indices: np.ndarray) -> None:
        self._issue(list(zip(ids.tolist(), indices.tolist(), strict=True)))

    def _issue(self, pairs: list[tuple[int, int]]) -> None:
        t = time.perf_counter_ns()
        if self.pool is not None:
            self.pool.issue(pairs, t)
            return
        assert self.client is not None
        self.client.submit([(i, idx, -1, t) for i, idx in pairs])

    def flush_queries(self) -> None:
        pass

    # --- reporting and shutdown ----------------------------------------------------------------------

    def report(self) -> list[str]:
        """Lines for the run's summary: token count sources, faults per kind, requests per endpoint,
        send lateness (and the worker processes with procs=N)."""
        lines = [
            "token counts from: "
            + (", ".join(f"{k} {v}" for k, v in sorted(self.count_sources.items())) or "no completed stream")
        ]
        if self.count_mismatches:
            lines.append(f"token ids and usage disagreed on {self.count_mismatches} streams (ids used)")
        faults = {k: self.faults[k] for k in FAULT_KINDS if self.faults[k]}
        lines.append(
            "faults: " + (", ".join(f"{k} {v}" for k, v in faults.items()) if faults else "none")
        )
        if self.junk_events:
            lines.append(f"{self.junk_events} stream events were not JSON chunks (ignored)")
        if len(self.endpoints) > 1:
            lines.append("requests per endpoint: " + ", ".join(f"{e.url} {e.sent}" for e in self.endpoints))
        late = self.lateness_line()
        if late:
            lines.append(late)
        if self.pool is not None:
            lines += self.pool.report()
        return lines

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self.pool is not None:
            self.pool.close()
            return
        assert self.client is not None
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(self.client.shut(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        if not self._thread.is_alive():
            self._loop.close()

    def __enter__(self) -> OpenAISUT:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --- the registry factory ---------------------------------------------------------------------------

_BOOL = {"1": True, "true": True, "yes": True, "0": False, "false": False, "no": False}


def _num(params: dict[str, str], key: str, default: float, kind: type = float) -> Any:
    raw = params.pop(key, None)
    if raw is None:
        return default
    try:
        return kind(raw)
    except ValueError:
        raise ConfigError(f"{key}={raw!r} is not a {kind.__name__}", key=key) from None


def _flag(params: dict[str, str], key: str) -> bool:
    raw = params.pop(key, "0").lower()
    if raw not in _BOOL:
        raise ConfigError(f"{key}={raw!r}: expected 1/0, true/false or yes/no", key=key)
    return _BOOL[raw]


# what `proctor run --list-suts` shows: name -> (default, meaning)
_D = OpenAIConfig(urls=("http://127.0.0.1:8000",), model="default")
PARAMS: dict[str, tuple[object, str]] = {
    "url": ("", "endpoint base URL (http://HOST:PORT[/v1]); several: url=A|B, fewest in flight first"),
    "model": (_D.model, "model name sent in each request"),
    "api": (_D.api, "endpoint: " + " or ".join(APIS)),
    "dataset": ("", "(or synthetic=N) JSONL file: prompt or input_ids, optional output and max_tokens per line"),
    "synthetic": ("none", "N synthetic prompts instead of dataset= (lengths from in= and out=)"),
    "in": ("const:128", "synthetic input length, DIST:MEAN[:SPREAD] (const, uniform, normal, lognormal, exp)"),
    "out": ("const:MAX_TOKENS", "synthetic output length, as in="),
    "seed": (0, "seed of the synthetic dataset"),
    "perf_count": (0, "QSL performance sample count (0: all samples)"),
    "max_tokens": (_D.max_tokens, "output tokens per request unless the sample sets max_tokens"),
    "concurrency": (_D.concurrency, "streams in flight at most (0: no limit)"),
    "timeout_s": (_D.timeout_s, "per-request limit, send to end of stream"),
    "stall_s": (_D.stall_s, "no-progress limit: no byte for this long fails the stream"),
    "connect_s": (_D.connect_s, "connect timeout"),
    "token_ids": (0, "1: ask for token ids (vLLM return_token_ids) and count them"),
    "ignore_eos": (0, "1: ask for exactly max_tokens (vLLM/SGLang ignore_eos, min_tokens)"),
    "logprobs": (0, "1: ask for per-token logprobs and count their entries (servers without usage)"),
    "tokenizer": ("none", "local tokenizer.json (or its folder) to count tokens when the server gives none"),
    "procs": (0, "worker processes carrying the streams (0: one loop thread in the engine's process); "
              "the engine keeps the schedule, workers stamp events on the shared clock"),
    "http": (_D.http, "transport: raw (lean HTTP/1.1, requests written from the issuing thread; https: aiohttp) "
             "or aiohttp"),
    "warm": (_D.warm, "connections opened per endpoint at start (http=raw)"),
}


def from_params(**params: str) -> tuple[OpenAISUT, LLMDataset]:
    """`openai:url=URL[,url=URL2],model=NAME,api=completions|chat,dataset=FILE | synthetic=N,in=..,out=..`.

    Other keys: max_tokens, timeout_s, stall_s, connect_s, concurrency, token_ids=1, ignore_eos=1, logprobs=1,
    tokenizer=PATH, procs=N (worker processes), http=raw|aiohttp, warm=N, perf_count (the QSL's performance sample count), seed.
    Several endpoints:
    `url` as a list (a registry that keeps repeated keys) or `url=A|B` (one comma-free value).
    """
    p: dict[str, Any] = dict(params)
    urls_raw = p.pop("url", None)
    urls = tuple(urls_raw) if isinstance(urls_raw, list | tuple) else ((urls_raw,) if urls_raw else ())
    urls = tuple(u for raw in urls for u in str(raw).split("|") if u)
    cfg = OpenAIConfig(
        urls=urls,
        model=str(p.pop("model", "default")),
        api=str(p.pop("api", "completions")),
        max_tokens=_num(p, "max_tokens", 128, int),
        timeout_s=_num(p, "timeout_s", 600.0),
        stall_s=_num(p, "stall_s", 60.0),
        connect_s=_num(p, "connect_s", 10.0),
        concurrency=_num(p, "concurrency", 0, int),
        token_ids=_flag(p, "token_ids"),
        ignore_eos=_flag(p, "ignore_eos"),
        logprobs=_flag(p, "logprobs"),
        tokenizer=p.pop("tokenizer", None),
        procs=_num(p, "procs", 0, int),
        http=str(p.pop("http", "raw")),
        warm=_num(p, "warm", 4, int),
    )
    dataset, n_synth = p.pop("dataset", None), p.pop("synthetic", None)
    seed = _num(p, "seed", 0, int)
    if dataset and n_synth:
        raise ConfigError("give dataset=FILE or synthetic=N, not both", key="dataset")
    spec: DatasetSpec
    if dataset:
        spec = ("jsonl", str(dataset))
        samples = load_dataset(spec)
        name = Path(dataset).name
    elif n_synth:
        spec = ("synthetic", _num({"synthetic": n_synth}, "synthetic", 0, int), p.pop("in", "const:128"),
                p.pop("out", f"const:{cfg.max_tokens}"), seed)
        samples = load_dataset(spec)
        name = f"synthetic-{len(samples)}"
    else:
        raise ConfigError("the openai SUT needs dataset=FILE (JSONL) or synthetic=N", key="dataset")
    perf = _num(p, "perf_count", 0, int)
    p.pop("in", None), p.pop("out", None)
    if p:
        raise ConfigError(
            f"unknown openai SUT parameter(s): {', '.join(sorted(p))} (known: {', '.join(PARAMS)})", key="--sut"
        )
    qsl = LLMDataset(samples, cfg.body, performance_count=perf, name=name)
    return OpenAISUT(cfg, qsl, spec), qsl


__all__ = [
    "APIS",
    "FAULT_KINDS",
    "PARAMS",
    "LocalSink",
    "OpenAIConfig",
    "OpenAISUT",
    "StreamState",
    "endpoint_url",
    "from_params",
    "load_dataset",
]
