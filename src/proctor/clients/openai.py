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
`faults` (the first of each kind is logged, the rest counted), sent to the run's error log, and the
sample fails (`sink.fail`): the engine counts it as an error, it adds no TTFT and no per-token time
of its own. Before the run (`preflight=1`, the default) each endpoint must answer one
`GET /v1/models` within `connect_s` (`preflight.check_endpoints`), else the SUT is not built (a
ConfigError on `url=`); then one small streamed request to each (`preflight.probe_offer`) finds what
it offers for counting (token ids, logprobs, usage: `clients.offer`), which says which counts are
exact, whether TEST06 can pass, and, `logprobs` left unset, asks for logprobs in every request where
only they count (llama.cpp's server). During it, `tally.MAX_CONSECUTIVE_CONNECT_FAILURES` requests in a row to
one endpoint that could not connect take that endpoint for down (counted per endpoint): while
others answer it is dropped with one line (no more requests go to it); once every endpoint is down
the run is aborted (`sink.abort`) and the next issue raises `EndpointDown`, so the run ends
incomplete at once, saying when the endpoint stopped answering.

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

Datasets: JSONL, JSON records (ShareGPT or named columns), CSV, Parquet, the official pickled
DataFrames (`llm_formats`, by extension or `format=`, the columns by the file's layout), or
synthetic prompts (`llm_dataset`). `export=FILE`: one JSON line per
request at the end of the run (`request_export`; .csv and .parquet the same columns), fed by the SUT's
`RequestLog`.

Warm-up (`warmup=N` requests, `warmup_s=S` seconds; `clients.warmup`): `warm_up`, which the engine
calls after `start` and before its clock starts (`sink.WarmUpSUT`), opens the connections the run
will keep busy (a closed loop's N) and sends the warm-up's requests; their ids are negative, so none
of their outcomes reaches the run. The report and the detail log (proctor_warmup) say what it did.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from proctor.clients.generation import DEFAULT_MAX_TOKENS, MIN_TOKENS_CHOICES, Generation, plan
from proctor.clients.llm_dataset import LENGTH_DISTS, DatasetSpec, LLMDataset
from proctor.clients.llm_formats import FORMATS, Columns, load_dataset, load_file
from proctor.clients.offer import CountPlan, plan_counts
from proctor.clients.openai_config import (
    APIS,
    HTTP_TRANSPORTS,
    MAX_PROCS,
    RX_STAMPS,
    OpenAIConfig,
    endpoint_url,
)
from proctor.clients.preflight import MIN_TOKENS_SERVERS, check_endpoints, probe_offers, server_owner
from proctor.clients.request_export import RequestLog, check_export_path, meta_path, write_export
from proctor.clients.stream import FAULT_KINDS, Endpoint, StreamState, Times, new_loop, times_of
from proctor.clients.tally import EndpointDown, Tally
from proctor.clients.transport import Transport, make_transport
from proctor.clients.warmup import (
    MAX_WARMUP_REQUESTS,
    MAX_WARMUP_S,
    WAIT_MARGIN_S,
    WarmUp,
    is_warm,
    warm_body,
)
from proctor.column_files import file_format
from proctor.errors import ConfigError
from proctor.loadgen.sink import CompletionSink
from proctor.loadgen.types import QuerySample, QuerySampleResponse
from proctor.suts.context import RunContext
from proctor.suts.params import param, takes
from proctor.typed_records import record

log = logging.getLogger("proctor.clients.openai")
_WARM_IDS = np.zeros(1, np.int64)  # what warm_issue converts, as issue_query_arrays converts a query


class LocalSink:
    """The in-process path: every outcome goes to the SUT's completion sink at once."""

    def __init__(self, tally: Tally) -> None:
        self.tally = tally

    def sent(self, i: int, t_issue: int, t_sent: int) -> None:
        if i >= 0:  # a warm-up request's (clients.warmup) is not timed
            self.tally.note_sent(i, t_issue, t_sent)

    def first_token(self, i: int, text: bytes, t_ns: int | None = None) -> None:
        tally = self.tally
        if is_warm(i):
            return
        if tally.times is not None:
            times_of(tally.times, i).first_token = time.perf_counter_ns()
        tally.sink.first_token([QuerySampleResponse(i, text)], t_ns=t_ns)

    def complete(
        self, i: int, output: bytes, n: int, source: str, mismatch: bool, t_ns: int | None = None
    ) -> None:
        tally = self.tally
        if is_warm(i):
            tally.warm_settled(i, None)
            return
        tally.note_done(i, source, mismatch)
        if tally.times is not None:
            times_of(tally.times, i).done = time.perf_counter_ns()
        tally.sink.complete([QuerySampleResponse(i, output, n)], t_ns=t_ns)

    def fail(self, i: int, idx: int, kind: str, message: str) -> None:
        if is_warm(i):
            self.tally.warm_settled(i, kind)
            return
        if self.tally.times is not None:
            times_of(self.tally.times, i).done = time.perf_counter_ns()
        self.tally.fail(i, idx, kind, message)

    def junk(self, n: int) -> None:
        self.tally.junk_events += n


class OpenAISUT(Tally):
    """Streams each sample to the endpoint with the fewest requests in flight; see the module doc."""

    def __init__(
        self,
        config: OpenAIConfig,
        qsl: LLMDataset,
        dataset: DatasetSpec | None = None,
        *,
        generation: Generation | None = None,
        warmup: tuple[int | None, float] = (None, 0.0),
        preflight_lines: Sequence[str] = (),
        export: str | None = None,
    ) -> None:
        """`generation`: what the requests carry against the benchmark's parameters (clients.generation;
        None: the benchmark's); `warmup`: (warmup=N, None for one per stream where the run fixes
        several; warmup_s=S); `preflight_lines`: what the servers offer for counting tokens
        (clients.offer); `export`: the per-request export's file (export=FILE)."""
        super().__init__()
        self.config = config
        self._generation = generation
        self.preflight_lines = list(preflight_lines)
        self.qsl = qsl
        self.warmup_requests, self.warmup_s = warmup
        self.export_path = export
        self.warmup_line = ""  # what warm_up did, for the report
        self._warm_bodies: dict[int, bytes] = {}
        self._closed = False
        self.pool: Any = None
        self.client: Transport | None = None
        if config.procs > 0:
            from proctor.clients.openai_procs import WorkerPool

            self.endpoints = [Endpoint(endpoint_url(u, config.api)) for u in config.urls]
            self.pool = WorkerPool(config, dataset or ("samples", qsl.samples), self, self.endpoints)
        else:
            client = self.client = make_transport(config, self._body, LocalSink(self))
            self.tokenizer = client.tokenizer
            self.endpoints = client.endpoints
            self._loop = new_loop()
            self._thread = threading.Thread(target=self._loop.run_forever, name="openai-sut", daemon=True)
            self._thread.start()
            asyncio.run_coroutine_threadsafe(client.open(), self._loop).result()
        if export:
            self.export_to(export)

    @property
    def generation_override(self) -> str:
        """What the requests send instead of the benchmark's generation parameters, "" when they send
        the benchmark's (an `OverridingSUT`: the run session logs it and marks the run)."""
        return self._generation.override if self._generation is not None else ""

    @property
    def generation_line(self) -> str:
        """The report's line: what every request asked and from where (clients.generation)."""
        return self._generation.line if self._generation is not None else ""

    def _body(self, idx: int) -> bytes:
        if is_warm(idx):  # a warm-up request's: the sample's prompt reversed (clients.warmup)
            body = self._warm_bodies.get(idx)
            if body is None:
                body = self._warm_bodies[idx] = warm_body(self.config, self.qsl.samples, idx)
            return body
        body = self.qsl.bodies.get(idx)
        if body is None:  # not loaded (a caller outside the engine): build it now
            body = self.config.body(self.qsl.samples[idx])
        return body

    @property
    def name(self) -> str:
        return f"openai:{self.config.model}@{','.join(e.url for e in self.endpoints)}"

    def export_to(self, path: str) -> None:
        """Note each request's send stamp, count source, fault and chunks for `write_export(path)`."""
        self.export_path = path
        self.export = RequestLog()
        if self.client is not None:
            self.client.export = self.export

    def write_export(self, outcome: Any) -> str:
        """After the run: the per-request export (export=FILE), and the line that says where it went."""
        path = self.export_path
        if not path:
            return ""
        try:
            n = write_export(path, outcome, self.export)
        except (ConfigError, OSError) as exc:
            return f"per-request export not written: {exc}"
        beside = f" (run header in {meta_path(path)})" if file_format(path, "export") == "csv" else ""
        return f"per-request export: {n - 1} requests in {path}{beside}"

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
        if self.down:  # the endpoints stopped answering: the engine ends the run (incomplete)
            raise EndpointDown(self.down)
        t = time.perf_counter_ns()
        if self.pool is not None:
            self.pool.issue(pairs, t)
            return
        assert self.client is not None
        self.client.submit([(i, idx, -1, t) for i, idx in pairs])

    def warm_issue(self) -> None:
        """loadgen.types.WarmableSUT: the issue path's pure parts, run dry before a due request."""
        if self.pool is None and self.client is not None and not self.down:
            list(zip(_WARM_IDS.tolist(), _WARM_IDS.tolist(), strict=True))
            self.client.dry_submit()

    def flush_queries(self) -> None:
        pass

    # --- before the clock starts (sink.WarmUpSUT) ------------------------------------------------------

    def warm_up(self, in_flight: int) -> str:
        """Connect ahead for `in_flight` streams (http=raw in this process) and send the warm-up's
        requests, `in_flight` (else the connections kept ready) at a time; by default one per stream
        where the run keeps more than one in flight (a closed loop), none otherwise. The line says
        what was done ("" for nothing beyond the connections opened at start)."""
        n_eps = len(self.endpoints)
        streams = in_flight if in_flight > 0 else (self.config.concurrency or self.config.warm * n_eps)
        if self.config.concurrency:
            streams = min(streams, self.config.concurrency)
        opened = 0
        if in_flight > 0 and self.client is not None:
            per_endpoint = min(-(-streams // n_eps), self.config.max_connections)
            opened = asyncio.run_coroutine_threadsafe(self.client.preconnect(per_endpoint), self._loop).result()
        requests = self.warmup_requests
        if requests is None:
            requests = in_flight if in_flight > 1 else 0
        if requests or self.warmup_s:
            sent_before = [e.sent for e in self.endpoints]
            warm = WarmUp(self._warm_issue, len(self.qsl.samples), requests, self.warmup_s, max(streams, 1))
            self.warming = warm
            try:
                warm.run(self.config.timeout_s + WAIT_MARGIN_S)
            finally:
                for e, before in zip(self.endpoints, sent_before, strict=True):
                    e.sent = before  # "requests per endpoint" counts the run's
            self.warmup_line = warm.line(opened)
        elif opened:
            self.warmup_line = f"warm-up: {opened} connections opened ahead, no requests, not timed"
        return self.warmup_line

    def _warm_issue(self, pairs: list[tuple[int, int]]) -> None:
        t = time.perf_counter_ns()
        if self.pool is not None:
            self.pool.issue(pairs, t)
        elif self.client is not None:
            self.client.submit([(i, idx, -1, t) for i, idx in pairs])

    # --- reporting and shutdown ----------------------------------------------------------------------

    def report(self) -> list[str]:
        """Lines for the run's summary: token count sources, faults per kind, requests per endpoint,
        send lateness (and the worker processes with procs=N)."""
        lines = [
            "token counts from: "
            + (", ".join(f"{k} {v}" for k, v in sorted(self.count_sources.items())) or "no completed stream")
        ]
        if self.generation_line:  # what every request asked (clients.generation)
            lines.append(self.generation_line)
        if self.warmup_line:
            lines.append(self.warmup_line)
        counts = self.client.connect_counts() if self.client is not None else None
        if counts is not None:
            lines.append(f"connections: {counts[0]} opened ahead of requests, {counts[1]} while a request waited")
        lines += self.preflight_lines
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
        lines += self.dropped
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

_D = OpenAIConfig(urls=("http://127.0.0.1:8000",), model="default")  # the defaults, stated once


@record(frozen=True, slots=True)
class OpenAIParams:
    """`--sut openai:k=v,...`; the client's defaults are OpenAIConfig's."""

    url: tuple[str, ...] = param((), "endpoint base URL (http://HOST:PORT[/v1]); several: fewest in flight first",
                                 shown="")
    model: str = param(_D.model, "model name sent in each request")
    api: str = param(_D.api, "endpoint", choices=tuple(APIS))
    dataset: str | None = param(None, "(or synthetic=N) dataset file: JSONL (prompt or input_ids, optional "
                                "output and max_tokens per line), .json records or ShareGPT, .csv, .parquet, or "
                                ".pkl (the official MLPerf files; needs allow_pickle); the columns by its layout "
                                "(proctor's, ShareGPT, MLPerf's processed llama2-70b/llama3.1/gpt-oss, OpenOrca)")
    format: str | None = param(None, "dataset format when its extension does not say", choices=FORMATS,
                               shown="by extension")
    prompt_column: str | None = param(None, "column of the prompt text (CSV, Parquet, pickle, JSON records)",
                                      shown="the layout's: prompt, input, question")
    output_column: str | None = param(None, "column of the reference output", shown="the layout's: output, "
                                      "gt_output, ground_truth, response")
    max_tokens_column: str | None = param(None, "column of each sample's output budget", shown="max_tokens")
    input_ids_column: str | None = param(None, "column of the prompt's token ids (Parquet/pickle/JSON)",
                                         shown="the layout's: input_ids, tok_input, input_tokens")
    allow_pickle: bool = param(False, "read a .pkl dataset: unpickling runs code from the file, so only "
                               "for a file you trust")
    export: str | None = param(None, "write one row per request here at the end of the run (times, tokens, "
                               "count source, fault, SLO met): FILE.jsonl, FILE.csv or FILE.parquet (pyarrow)")
    synthetic: int | None = param(None, "N synthetic prompts instead of dataset= (lengths from in= and out=)", low=1)
    input_len: str = param("const:128", "synthetic input length, DIST:MEAN[:SPREAD] (DIST one of "
                           f"{', '.join(LENGTH_DISTS[:-1])}) or file:PATH (lengths, one per line)", key="in")
    output_len: str | None = param(None, "synthetic output length, as in=", key="out", shown="const:MAX_TOKENS")
    seed: int = param(0, "seed of the synthetic dataset", low=0)
    perf_count: int = param(0, "QSL performance sample count (0: all samples)", low=0)
    max_tokens: int | None = param(None, "output tokens per request unless the sample sets max_tokens (default: "
                                   "the benchmark's max_new_tokens for --model and the mode, rules §Additional "
                                   f"inference parameters; {DEFAULT_MAX_TOKENS} where none; another value is "
                                   "marked 'not the benchmark's parameters')", low=1, high=1_000_000,
                                   shown="benchmark's")
    min_tokens: str = param("auto", "send the benchmark's min_new_tokens as min_tokens (a vLLM/SGLang field): "
                            "auto = when each endpoint's /v1/models names vllm or sglang", choices=MIN_TOKENS_CHOICES)
    concurrency: int = param(_D.concurrency, "streams in flight at most (0: no limit)", low=0)
    timeout_s: float = param(_D.timeout_s, "per-request limit, send to end of stream", low=0, high=86_400,
                             low_open=True)
    stall_s: float = param(_D.stall_s, "no-progress limit: no byte for this long fails the stream", low=0,
                           high=86_400, low_open=True)
    connect_s: float = param(_D.connect_s, "connect timeout", low=0, high=86_400, low_open=True)
    token_ids: bool = param(_D.token_ids, "ask for token ids (vLLM return_token_ids) and count them")
    ignore_eos: bool = param(_D.ignore_eos, "ask for exactly max_tokens (vLLM/SGLang ignore_eos, min_tokens)")
    logprobs: bool | None = param(None, "ask for per-token logprobs and count their entries (servers without "
                                  "usage: llama.cpp); unset: when the preflight finds no usage record but logprobs",
                                  shown="by the preflight")
    tokenizer: str | None = param(_D.tokenizer, "local tokenizer.json (or its folder) to count tokens when the "
                                  "server gives none")
    procs: int = param(_D.procs, "worker processes carrying the streams (0: one loop thread in the engine's "
                       "process); the engine keeps the schedule, workers stamp events on the shared clock",
                       low=0, high=MAX_PROCS)
    http: str = param(_D.http, "transport: raw (lean HTTP/1.1, requests written from the issuing thread; "
                      "https: aiohttp) or aiohttp", choices=HTTP_TRANSPORTS)
    warm: int = param(_D.warm, "idle connections kept ready per endpoint: opened at start, topped up as requests "
                      "take them (http=raw)", low=0, high=1024)
    warmup: int | None = param(None, "warm-up requests sent before the timed part, not recorded (prompts reversed, "
                               "so no timed prompt is cached); default: one per stream where the run keeps 2 or more "
                               "in flight (proctor sweep --concurrency N >= 2, MultiStream), none with one in flight "
                               "(--concurrency 1, SingleStream) or in Server", low=0, high=MAX_WARMUP_REQUESTS,
                               shown="auto")
    warmup_s: float = param(0.0, "keep sending warm-up requests for this many seconds (with warmup=N: both)",
                            low=0, high=MAX_WARMUP_S)
    rx_stamp: str = param(_D.rx_stamp, "http=raw: when a token arrived, from the kernel's receive timestamp of "
                          "its bytes (kernel; Linux) or from the read that returned them (user: adds the client's "
                          "wake-up)", choices=RX_STAMPS)
    preflight: bool = param(True, "before the run, one GET /v1/models to each endpoint (bounded by connect_s): "
                            "one that does not answer HTTP is refused at once")
    probe: bool = param(True, "with preflight, one small streamed request to each endpoint: what it offers for "
                        "counting tokens (token ids, logprobs, usage), which counts are exact, whether TEST06 can "
                        "pass; logprobs unset: asked for where only they count")
    output: str | None = param(None, "what a response logs: text, or ids (int32 token ids as the MLPerf LLM "
                               "references log them, which TEST06 checks; asks for token ids)",
                               shown=f"{_D.output}; ids in a run whose checks read token ids (TEST06)")


@takes(OpenAIParams, "openai")
def from_params(p: OpenAIParams, context: RunContext | None = None) -> tuple[OpenAISUT, LLMDataset]:
    """`openai:url=URL[,url=URL2],model=NAME,api=completions|chat,dataset=FILE | synthetic=N,in=..,out=..`
    (every key: OpenAIParams, or `proctor run --list-suts`); `context`: the run's benchmark and mode,
    whose generation parameters the requests carry (clients.generation)."""
    base = OpenAIConfig(  # every parameter checked before anything loads; the generation's come later
        urls=p.url, model=p.model, api=p.api, max_tokens=p.max_tokens or DEFAULT_MAX_TOKENS, timeout_s=p.timeout_s,
        stall_s=p.stall_s, connect_s=p.connect_s, concurrency=p.concurrency, token_ids=p.token_ids,
        ignore_eos=p.ignore_eos, logprobs=bool(p.logprobs), tokenizer=p.tokenizer, procs=p.procs, http=p.http,
        warm=p.warm,
        rx_stamp=p.rx_stamp, output=p.output or ("ids" if context is not None and context.token_ids else _D.output),
    )
    if p.export:  # its format, pyarrow for Parquet, a folder: said before the run, not after it
        check_export_path(p.export)
    if p.dataset and p.synthetic:
        raise ConfigError("give dataset=FILE or synthetic=N, not both", key="dataset")
    spec: DatasetSpec
    if p.dataset:
        cols = (p.prompt_column, p.output_column, p.max_tokens_column, p.input_ids_column)
        spec = ("file", p.dataset, p.format, cols, p.allow_pickle)
        loaded = load_file(p.dataset, p.format, Columns(*cols), allow_pickle=p.allow_pickle)
        samples = loaded.samples
        if loaded.skipped:
            log.warning("%s: %d conversation(s) skipped (first: %s)", p.dataset, loaded.skipped, loaded.first_skip)
        name = Path(p.dataset).name
    elif p.synthetic:
        gen_max = _generation(p, context, [], lambda: False).max_tokens  # out= defaults to the requests' max
        spec = ("synthetic", p.synthetic, p.input_len, p.output_len or f"const:{gen_max}", p.seed)
        samples = load_dataset(spec)
        name = f"synthetic-{len(samples)}"
    else:
        raise ConfigError("the openai SUT needs dataset=FILE or synthetic=N", key="dataset")
    counts: CountPlan | None = None
    if p.preflight:  # after every parameter was checked: a dead endpoint ends it before the run's logs
        check_endpoints(base.urls, base.api, base.connect_s)
    if p.preflight and p.probe:  # what the servers offer for counting: the exact source, logprobs=1 where needed
        counts = plan_counts(probe_offers(base.urls, base.api, base.model, base.timeout_s),
                             ids_asked=base.token_ids or base.output == "ids", logprobs=p.logprobs,
                             tokenizer=base.tokenizer is not None)
        for line in counts.lines:
            log.warning("%s", line)
        if counts.refusal:  # every sample would fail (no_count): refused before the run's logs
            raise ConfigError(counts.refusal, key="tokenizer")
        base = dataclasses.replace(base, logprobs=counts.logprobs)

    def accepts_min_tokens() -> bool:  # asked only for min_tokens=auto where the benchmark names one
        return p.preflight and all(
            server_owner(u, base.api, base.connect_s) in MIN_TOKENS_SERVERS for u in base.urls
        )

    gen = _generation(p, context, [s.max_tokens for s in samples], accepts_min_tokens)
    cfg = dataclasses.replace(
        base, max_tokens=gen.max_tokens, min_tokens=gen.min_tokens, temperature=gen.temperature, top_p=gen.top_p
    )
    qsl = LLMDataset(samples, cfg.body, performance_count=p.perf_count, name=name)
    sut = OpenAISUT(cfg, qsl, spec, generation=gen, warmup=(p.warmup, p.warmup_s),
                    preflight_lines=() if counts is None else counts.lines, export=p.export)
    return sut, qsl


def _generation(
    p: OpenAIParams, context: RunContext | None, sample_max: list[int | None], accepts_min: Callable[[], bool]
) -> Generation:
    return plan(
        context, max_tokens=p.max_tokens, min_tokens=p.min_tokens, ignore_eos=p.ignore_eos,
        sample_max_tokens=sample_max, accepts_min_tokens=accepts_min,
    )


__all__ = [
    "APIS",
    "FAULT_KINDS",
    "LocalSink",
    "OpenAIConfig",
    "OpenAIParams",
    "OpenAISUT",
    "StreamState",
    "endpoint_url",
    "from_params",
    "load_dataset",
]
