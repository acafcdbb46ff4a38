"""`proctor serve llm`: an OpenAI-compatible streaming server around a tiny deterministic model.

The model (`TinyLM`) is a word-level language model built in code: a vocabulary of made-up words,
a whitespace tokenizer, and a next-token function hashed from the last three tokens, decoded
greedily, so the same prompt always gives the same output and `TinyLM.generate` is the accuracy
reference. Timing is injected and known, so a client's measurements can be checked against truth:

- `timing="exact"` (the benchmark's truth): token k of a request is ready at
  arrival + ttft + prefill_per_token x prompt_len + k x tpot (+ jitter); the first token goes out
  alone, then tokens are grouped into SSE chunks of `chunk` (lo-hi) tokens, each sent when its
  last token is ready. A client's TTFT is ttft (+ prefill), its TPOT exactly tpot.
  Arrival is when the request's first byte was read (before aiohttp parses it); every chunk has
  its own deadline from arrival (no accumulated sleeps), met by `precise.PreciseTimer` (a timerfd
  plus a short spin); the server's own lateness at each write is kept (`GET /stats/lateness`,
  `POST /stats/reset`, and a line at shutdown) so a benchmark separates it from a client's error.
- `timing="batch"`: a serving engine's shape: one decode step at a time for every running
  request together, costing `tpot + batch_cost x batch size`; a new request joins the batch once
  its prefill (ttft + prefill_per_token x prompt_len) is done.

Streams follow vLLM: a role chunk first (chat), content chunks, a finish chunk, a usage chunk when
`stream_options.include_usage` is set, then `data: [DONE]`. `usage="final"` attaches usage to the
last chunk and `done=False` omits [DONE] (as `transformers serve` does). `faults` injects 429s,
500s, stalls and dropped connections at given rates, deterministically per request number, and
counts what it injected in `stats` so tests compare counts exactly.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import random
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

import orjson
from aiohttp import web

from proctor.errors import ConfigError
from proctor.serving.binding import CONTROL_TOKEN_ENV, control_allowed
from proctor.serving.connections import Gate, listen, phases, runner_options
from proctor.serving.guard import FailureLog, guard, quiet_protocol_errors
from proctor.serving.limits import ConnectionLimits
from proctor.serving.precise import LatenessHist, PreciseTimer, StampedProtocol
from proctor.typed_records import field, record

# --- the model --------------------------------------------------------------------------------------

MEMO_CONTEXTS = 4096  # prompt contexts whose outputs are remembered
MEMO_TOKENS = 4096  # tokens remembered per context

_ONSETS = ("b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z")
_VOWELS = ("a", "e", "i", "o", "u")


class TinyLM:
    """A deterministic word-level LM: whitespace tokens, greedy next token hashed from a 3-gram."""

    def __init__(self, vocab_size: int = 1024, seed: int = 0) -> None:
        if not 16 <= vocab_size <= 65536:
            raise ConfigError(f"vocab_size={vocab_size}: expected 16..65536", key="vocab")
        words: list[str] = []
        rng = random.Random(seed)
        seen: set[str] = set()
        while len(words) < vocab_size:
            w = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(rng.randint(1, 3)))
            if w not in seen:
                seen.add(w)
                words.append(w)
        self.words = words
        self.pieces = [" " + w for w in words]
        self.index = {w: i for i, w in enumerate(words)}
        self._memo: dict[tuple[int, int, int], list[int]] = {}
        self.vocab_size = vocab_size
        self.seed = seed

    def encode(self, text: str) -> list[int]:
        """Whitespace tokens; a word outside the vocabulary maps to a stable hashed id."""
        out = []
        for w in text.split():
            i = self.index.get(w)
            if i is None:
                h = hashlib.blake2b(w.encode("utf-8", "surrogatepass"), digest_size=4).digest()
                i = int.from_bytes(h, "little") % self.vocab_size
            out.append(i)
        return out

    def next_token(self, a: int, b: int, c: int) -> int:
        """Greedy 'argmax' of a fixed scoring: a mixing hash of the last three tokens."""
        x = (a * 1_000_003 + b * 8_191 + c * 131 + self.seed * 7_919 + 12_345) & 0xFFFFFFFF
        x ^= x >> 16
        x = (x * 0x45D9F3B) & 0xFFFFFFFF
        x ^= x >> 16
        return x % self.vocab_size

    def generate(self, prompt_ids: list[int], n: int) -> list[int]:
        return self.tokens(prompt_ids).upto(n)[:n]

    def tokens(self, prompt_ids: list[int]) -> TokenList:
        """A request's output, made as its chunks come due (not all at arrival: a burst of
        requests would make the server late)."""
        return TokenList(self, prompt_ids)

    def piece(self, token: int) -> str:
        """One token's text in a stream: a leading space then the word."""
        return self.pieces[token]

    def decode(self, ids: list[int]) -> str:
        pieces = self.pieces
        return "".join([pieces[t] for t in ids])

    def prompt_text(self, body: dict[str, Any]) -> str | list[int]:
        """The prompt of a completions or chat request (chat: the messages' contents, one per line)."""
        if "messages" in body:
            msgs = body["messages"]
            if not isinstance(msgs, list):
                raise ValueError("'messages' must be a list")
            parts = []
            for m in msgs:
                content = m.get("content") if isinstance(m, dict) else None
                if isinstance(content, list):  # content parts: text parts' strings, other parts skipped
                    texts = [p.get("text", "") for p in content if isinstance(p, dict) and p.get("type", "text") == "text"]
                    if not all(isinstance(t, str) for t in texts):
                        raise ValueError("a text content part's 'text' must be a string")
                    content = " ".join(texts)
                if not isinstance(content, str):
                    raise ValueError("each message needs a text 'content'")
                parts.append(content)
            return "\n".join(parts)
        prompt = body.get("prompt")
        if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], str | list):
            prompt = prompt[0]
        if isinstance(prompt, str):
            return prompt
        if isinstance(prompt, list) and prompt and all(type(t) is int and t >= 0 for t in prompt):
            return prompt
        raise ValueError("'prompt' must be a string or a list of token ids")

    def reference(self, prompt: str | list[int], max_tokens: int) -> str:
        """The output the server streams for this prompt: the accuracy reference."""
        ids = prompt if isinstance(prompt, list) else self.encode(prompt)
        return self.decode(self.generate(ids, max_tokens))


class TokenList:
    """One request's greedy tokens, extended on demand. The output depends only on the prompt's
    last three tokens, so the list is shared by every request with that context (bounded): a
    benchmark that repeats its prompts costs the server no model time."""

    __slots__ = ("ctx", "ids", "model", "shared")

    def __init__(self, model: TinyLM, prompt_ids: list[int]) -> None:
        a, b, c = [0, 0, 0, *prompt_ids][-3:]
        self.ctx = (a, b, c)
        self.model = model
        ids = model._memo.get(self.ctx)
        if ids is None:
            ids = []
            if len(model._memo) < MEMO_CONTEXTS:
                model._memo[self.ctx] = ids
        self.ids = ids
        self.shared = True

    def upto(self, k: int) -> list[int]:
        """A list holding at least the first k tokens (a shared list may hold more)."""
        ids = self.ids
        if len(ids) < k:
            if self.shared and k > MEMO_TOKENS:
                ids = self.ids = list(ids)  # too long to remember: this request's own copy
                self.shared = False
            x, y, z = (*self.ctx, *ids[-3:])[-3:]
            next_token = self.model.next_token
            for _ in range(k - len(ids)):
                x, y, z = y, z, next_token(x, y, z)
                ids.append(z)
        return ids


# --- options ----------------------------------------------------------------------------------------


@record(frozen=True, slots=True)
class Faults:
    """Rates (0..1) of injected faults, drawn per request from a seeded stream."""

    rate_429: float = 0.0
    rate_500: float = 0.0
    stall: float = 0.0  # send the first token, then nothing for stall_s
    drop: float = 0.0  # send a few tokens, then close the connection mid-stream
    hang: float = 0.0  # accept the request, answer nothing for stall_s (no headers)
    stall_s: float = 30.0

    @classmethod
    def parse(cls, spec: str) -> Faults:
        """`429=0.1,500=0.05,stall=0.05,drop=0.05,hang=0.01,stall_s=30` (every key optional)."""
        names = {"429": "rate_429", "500": "rate_500", "stall": "stall", "drop": "drop", "hang": "hang",
                 "stall_s": "stall_s"}
        kw: dict[str, float] = {}
        for item in filter(None, (s.strip() for s in spec.split(","))):
            k, sep, v = item.partition("=")
            if not sep or k not in names:
                raise ConfigError(f"--faults {item!r}: expected KEY=VALUE, KEY one of {', '.join(names)}",
                                  key="--faults")
            try:
                kw[names[k]] = float(v)
            except ValueError:
                raise ConfigError(f"--faults {item!r}: {v!r} is not a number", key="--faults") from None
        f = cls(**kw)
        if sum((f.rate_429, f.rate_500, f.stall, f.drop, f.hang)) > 1 or min(
            f.rate_429, f.rate_500, f.stall, f.drop, f.hang
        ) < 0:
            raise ConfigError("--faults: each rate is 0..1 and they sum to at most 1", key="--faults")
        return f

    def draw(self, rng: random.Random) -> str:
        u = rng.random()
        for kind, rate in (("429", self.rate_429), ("500", self.rate_500), ("stall", self.stall),
                           ("drop", self.drop), ("hang", self.hang)):
            if u < rate:
                return kind
            u -= rate
        return "ok"


@record(frozen=True, slots=True)
class ServerOptions:
    model_name: str = "proctor-tiny"
    vocab_size: int = 1024
    seed: int = 0
    timing: str = "exact"  # exact | batch
    ttft_ms: float = 40.0
    tpot_ms: float = 4.0
    prefill_us_per_token: float = 0.0
    batch_cost_us: float = 0.0  # batch timing: extra step time per running request
    chunk: tuple[int, int] = (1, 1)  # tokens per SSE chunk after the first, drawn uniformly lo..hi
    jitter_ms: float = 0.0  # uniform extra delay on each request's schedule (exact timing)
    usage: str = "separate"  # separate | final | none
    done: bool = True  # send `data: [DONE]`
    token_ids: bool = True  # honour `return_token_ids`
    logprobs: bool = True  # honour `logprobs`: one entry per token in each chunk (llama.cpp's exact count)
    max_tokens_default: int = 16
    faults: Faults = field(default_factory=Faults)

    def __post_init__(self) -> None:
        if self.timing not in ("exact", "batch"):
            raise ConfigError(f"timing={self.timing!r}: expected exact or batch", key="--timing")
        if self.usage not in ("separate", "final", "none"):
            raise ConfigError(f"usage={self.usage!r}: expected separate, final or none", key="--usage")
        lo, hi = self.chunk
        if not 1 <= lo <= hi <= 1000:
            raise ConfigError(f"chunk={lo}-{hi}: expected 1 <= lo <= hi <= 1000", key="--chunk")
        for k in ("ttft_ms", "tpot_ms", "prefill_us_per_token", "batch_cost_us", "jitter_ms"):
            v = getattr(self, k)
            if not 0 <= v <= 3_600_000:
                raise ConfigError(f"{k}={v}: expected 0..3600000", key=f"--{k.replace('_', '-')}")


def parse_chunk(spec: str) -> tuple[int, int]:
    lo, _, hi = spec.partition("-")
    try:
        return int(lo), int(hi or lo)
    except ValueError:
        raise ConfigError(f"--chunk {spec!r}: expected N or LO-HI", key="--chunk") from None


log = logging.getLogger("proctor.serving.llm")
MAX_REQUEST_BYTES = 64 << 20  # one request body (a long-context prompt is well under a MiB)
ARRIVAL = web.RequestKey("arrival", float)  # when the request's first byte was read (monotonic s)

# --- the server -------------------------------------------------------------------------------------


class _Request:
    """One generation in flight: its schedule (exact timing) or its place in the batch."""

    __slots__ = ("ctx", "left", "ready", "tokens")

    def __init__(self, ctx: list[int], n: int) -> None:
        self.ctx = ctx
        self.left = n
        self.tokens: asyncio.Queue[tuple[int, float]] = asyncio.Queue()
        self.ready = 0.0


class LLMServer:
    """The aiohttp application and its decode engine; `start()`/`stop()` or `run()`."""

    def __init__(self, options: ServerOptions | None = None, limits: ConnectionLimits | None = None) -> None:
        self.opt = options or ServerOptions()
        self.limits = limits or ConnectionLimits()
        self.model = TinyLM(self.opt.vocab_size, self.opt.seed)
        self.stats: Counter[str] = Counter()
        self._fault_rng = random.Random(self.opt.seed + 1)
        self._rng = random.Random(self.opt.seed + 2)
        self._batch: list[_Request] = []
        self._wake: asyncio.Event | None = None
        self._stepper: asyncio.Task[None] | None = None
        self._runner: web.AppRunner | None = None
        self._listener: asyncio.Server | None = None
        self._timer: PreciseTimer | None = None
        self._conns: dict[Any, StampedProtocol] = {}
        self.lateness: dict[str, LatenessHist] = {}
        self.reset_lateness()
        self.port = 0
        self.failures = FailureLog(log)
        self.gate = Gate(self.limits, self.failures)  # the connections' bounds (serving.connections)
        quiet_protocol_errors()
        self.app = web.Application(
            middlewares=[phases(self.gate), guard(self.failures, MAX_REQUEST_BYTES), self._arrival],
            client_max_size=MAX_REQUEST_BYTES,
        )
        self.app.router.add_post("/v1/completions", self._completions)
        self.app.router.add_post("/v1/chat/completions", self._chat)
        self.app.router.add_get("/v1/models", self._models)
        self.app.router.add_get("/health", self._health)
        self.app.router.add_get("/stats", self._stats)
        self.app.router.add_get("/stats/lateness", self._lateness)
        self.app.router.add_post("/stats/reset", self._reset)

    # --- lifecycle -------------------------------------------------------------------------------

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> int:
        loop = asyncio.get_running_loop()
        self._timer = PreciseTimer(loop)
        self._runner = web.AppRunner(self.app, access_log=None, handle_signals=False, auto_decompress=False,
                                     **runner_options(self.limits))
        await self._runner.setup()
        conns = self._conns
        # aiohttp's protocol behind the connection bounds and a wrapper that stamps each request's first byte
        self._listener = await listen(self._runner, self.gate, host, port,
                                      lambda inner: StampedProtocol(inner, conns))
        sockets: list[Any] = list(self._listener.sockets or [])
        self.port = sockets[0].getsockname()[1] if sockets else port
        if self.opt.timing == "batch":
            self._wake = asyncio.Event()
            self._stepper = loop.create_task(self._step_loop())
        return self.port

    async def stop(self) -> None:
        if self._stepper is not None:
            self._stepper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._stepper
        if self._listener is not None:
            self._listener.close()
        if self._runner is not None:
            await self._runner.cleanup()
        if self._timer is not None:
            self._timer.close()

    # --- arrival and lateness ---------------------------------------------------------------------

    @web.middleware
    async def _arrival(self, request: web.Request, handler: Any) -> web.StreamResponse:
        """request["arrival"]: when its first byte was read; the connection re-arms once answered."""
        conn = self._conns.get(request.transport)
        rx = conn.rx if conn is not None else None
        now = time.monotonic()
        if rx is None or rx > now:
            rx = now
        self.lateness["handler"].add(now - rx)
        request[ARRIVAL] = rx
        try:
            return await handler(request)
        finally:
            if conn is not None:
                conn.rearm()

    def reset_lateness(self) -> None:
        """first: the first content chunk's write after its deadline; later: every later chunk's;
        handler: from a request's first byte to its handler (aiohttp's parsing and task start)."""
        self.lateness = {"first": LatenessHist(), "later": LatenessHist(), "handler": LatenessHist()}

    def lateness_report(self) -> dict[str, Any]:
        t = self._timer
        return {"timer": t.kind if t else "none", "lead_us": (t.lead * 1e6) if t else 0.0,
                "spins": t.spins if t else 0, **{k: h.summary() for k, h in self.lateness.items()}}

    def lateness_line(self) -> str:
        r = self.lateness_report()
        nan = float("nan")
        f, la, h = ({k: nan if v is None else v for k, v in r[x].items()} for x in ("first", "later", "handler"))
        return (f"emission lateness ({r['timer']}): first chunk p50 {f['p50_us']:.0f} us p99 {f['p99_us']:.0f} us "
                f"max {f['max_us']:.0f} us (n {f['n']}); later chunks p50 {la['p50_us']:.0f} us "
                f"p99 {la['p99_us']:.0f} us (n {la['n']}); request to handler p50 {h['p50_us']:.0f} us")

    # --- endpoints ---------------------------------------------------------------------------------

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": self.opt.model_name, "object": "model"}]})

    async def _health(self, request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def _stats(self, request: web.Request) -> web.Response:
        """Requests and faults so far: lets a benchmark see when any client's load is flowing."""
        return web.json_response(dict(self.stats))

    async def _lateness(self, request: web.Request) -> web.Response:
        """The server's own emission lateness since the last reset (a benchmark's server column)."""
        return web.json_response(self.lateness_report())

    async def _reset(self, request: web.Request) -> web.Response:
        if not control_allowed(request.remote, request.headers.get("Authorization")):
            return web.json_response(
                {"error": {"message": f"control endpoints answer loopback only (or {CONTROL_TOKEN_ENV})"}},
                status=403,
            )
        self.reset_lateness()
        if self._timer is not None:
            self._timer.spins = 0
        return web.json_response({"reset": True})

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        return await self._serve(request, chat=False)

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        return await self._serve(request, chat=True)

    @staticmethod
    def _error(status: int, message: str) -> web.Response:
        return web.json_response({"error": {"message": message, "type": "invalid_request_error",
                                            "code": status}}, status=status)

    async def _serve(self, request: web.Request, chat: bool) -> web.StreamResponse:
        arrival = request.get(ARRIVAL, time.monotonic())
        try:
            raw = await request.read()
        except ConnectionError:  # the client left before its body arrived
            self.stats["client_gone"] += 1
            return web.Response(status=499)
        try:
            body = orjson.loads(raw)
            if not isinstance(body, dict):
                raise ValueError("the request body must be a JSON object")
            prompt = self.model.prompt_text(body)
            n = body.get("max_completion_tokens", body.get("max_tokens", self.opt.max_tokens_default))
            if type(n) is not int or not 1 <= n <= 100_000:
                raise ValueError("'max_tokens' must be an integer 1..100000")
        except (orjson.JSONDecodeError, ValueError) as exc:
            self.stats["bad_request"] += 1
            return self._error(400, str(exc))
        self.stats["requests"] += 1
        fault = self.opt.faults.draw(self._fault_rng)
        if fault == "429":
            self.stats["429"] += 1
            return self._error(429, "too many requests (injected)")
        if fault == "500":
            self.stats["500"] += 1
            return self._error(500, "internal error (injected)")
        if fault == "hang":
            self.stats["hang"] += 1
            await asyncio.sleep(self.opt.faults.stall_s)
            return self._error(503, "hung (injected)")
        prompt_ids = prompt if isinstance(prompt, list) else self.model.encode(prompt)
        stream = bool(body.get("stream"))
        so = body.get("stream_options")
        want_usage = isinstance(so, dict) and bool(so.get("include_usage"))
        want_ids = self.opt.token_ids and bool(body.get("return_token_ids"))
        lp = body.get("logprobs")
        want_logprobs = self.opt.logprobs and lp is not None and lp is not False and lp != 0
        rid = f"{'chatcmpl' if chat else 'cmpl'}-{self.stats['requests']}"
        if not stream:
            ids = await self._generate_all(prompt_ids, n, arrival)
            return web.json_response(self._full(rid, chat, ids, len(prompt_ids), want_ids))
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        head = {"id": rid, "object": "chat.completion.chunk" if chat else "text_completion",
                "created": int(time.time()), "model": self.opt.model_name}
        sent = 0
        usage = {"prompt_tokens": len(prompt_ids), "completion_tokens": n, "total_tokens": len(prompt_ids) + n}
        try:
            await resp.prepare(request)
            if chat:
                await resp.write(_sse({**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                                             "finish_reason": None}]}))
            first = True
            async for deadline, group in self._token_groups(prompt_ids, n, arrival):
                sent += len(group)
                last = sent == n
                text = self.model.decode(group)
                choice: dict[str, Any] = (
                    {"index": 0, "delta": {"content": text}} if chat else {"index": 0, "text": text}
                )
                if want_ids:
                    choice["token_ids"] = group
                if want_logprobs:  # the OpenAI shapes: completions' parallel lists, chat's content entries
                    tokens = [self.model.decode([t]) for t in group]
                    choice["logprobs"] = (
                        {"content": [{"token": t, "logprob": 0.0, "top_logprobs": []} for t in tokens]} if chat
                        else {"tokens": tokens, "token_logprobs": [0.0] * len(tokens)}
                    )
                choice["finish_reason"] = "length" if last and self.opt.usage == "final" else None
                chunk: dict[str, Any] = {**head, "choices": [choice]}
                if last and self.opt.usage == "final":
                    chunk["usage"] = usage
                data = _sse(chunk)
                await self._at(deadline)
                await resp.write(data)
                self.lateness["first" if first else "later"].add(time.monotonic() - deadline)
                first = False
                if fault == "stall" and sent >= 1:
                    self.stats["stall"] += 1
                    await asyncio.sleep(self.opt.faults.stall_s)
                    return resp
                if fault == "drop" and sent >= min(3, n):
                    self.stats["drop"] += 1
                    if request.transport is not None:
                        request.transport.abort()
                    return resp
            if self.opt.usage != "final":
                fin = {"index": 0, "delta": {}} if chat else {"index": 0, "text": ""}
                await resp.write(_sse({**head, "choices": [{**fin, "finish_reason": "length"}]}))
            if self.opt.usage == "separate" and want_usage:
                await resp.write(_sse({**head, "choices": [], "usage": usage}))
            if self.opt.done:
                await resp.write(b"data: [DONE]\n\n")
            await resp.write_eof()
            self.stats["completed"] += 1
        except ConnectionError:  # the client hung up mid-stream (a benchmark's end): nothing to send
            self.stats["client_gone"] += 1
        except asyncio.CancelledError:
            self.stats["client_gone"] += 1
            raise
        return resp

    def _full(self, rid: str, chat: bool, ids: list[int], n_prompt: int, want_ids: bool) -> dict[str, Any]:
        text = self.model.decode(ids)
        choice: dict[str, Any] = (
            {"index": 0, "message": {"role": "assistant", "content": text}} if chat else {"index": 0, "text": text}
        )
        choice["finish_reason"] = "length"
        if want_ids:
            choice["token_ids"] = ids
        return {"id": rid, "object": "chat.completion" if chat else "text_completion",
                "model": self.opt.model_name, "choices": [choice],
                "usage": {"prompt_tokens": n_prompt, "completion_tokens": len(ids),
                          "total_tokens": n_prompt + len(ids)}}

    async def _generate_all(self, prompt_ids: list[int], n: int, arrival: float) -> list[int]:
        out: list[int] = []
        async for deadline, group in self._token_groups(prompt_ids, n, arrival):
            await self._at(deadline)
            out.extend(group)
        return out

    async def _at(self, deadline: float) -> None:
        """Return at `deadline` (monotonic s) precisely, or now if it has passed."""
        if self._timer is None:
            await _sleep_until(deadline)
        else:
            await self._timer.wait(deadline)

    # --- timing -------------------------------------------------------------------------------------

    def _prefill_s(self, n_prompt: int) -> float:
        return (self.opt.ttft_ms * 1e3 + self.opt.prefill_us_per_token * n_prompt) * 1e-6

    def _chunk_sizes(self, n: int) -> Iterator[int]:
        """The request's chunk sizes, drawn as the stream goes (a request for 100,000 tokens must not
        plan them all on the event loop at once) from its own generator, seeded once from the
        server's: the same arrivals give the same chunks."""
        lo, hi = self.opt.chunk
        rng = random.Random(self._rng.getrandbits(64))
        yield 1
        total = 1
        while total < n:
            size = min(rng.randint(lo, hi), n - total)
            total += size
            yield size

    def iter_plan(self, prompt_ids: list[int], n: int, arrival: float) -> Iterator[tuple[float, int]]:
        """Exact timing: each chunk's (deadline, tokens in it), deadlines counted from arrival, made
        one chunk at a time."""
        sizes = self._chunk_sizes(n)
        t0 = arrival + self._prefill_s(len(prompt_ids)) + self._rng.uniform(0, self.opt.jitter_ms * 1e-3)
        return iter_emission_plan(t0, self.opt.tpot_ms * 1e-3, sizes)

    def plan(self, prompt_ids: list[int], n: int, arrival: float) -> list[tuple[float, int]]:
        """The whole `iter_plan` as a list (for inspection; the server streams from the iterator)."""
        return list(self.iter_plan(prompt_ids, n, arrival))

    async def _token_groups(self, prompt_ids: list[int], n: int, arrival: float) -> Any:
        """(deadline, token ids) per SSE chunk: exact timing yields the plan ahead of time (the
        caller waits for each deadline); batch timing yields each group once its last token is
        decoded, with that step's end as its deadline."""
        if self.opt.timing == "exact":
            tokens = self.model.tokens(prompt_ids)
            k = 0
            for deadline, size in self.iter_plan(prompt_ids, n, arrival):
                k += size
                yield deadline, tokens.upto(k)[k - size:k]
            return
        sizes = self._chunk_sizes(n)
        req = _Request([0, 0, 0, *prompt_ids][-3:], n)
        req.ready = arrival + self._prefill_s(len(prompt_ids))
        self._batch.append(req)
        assert self._wake is not None
        self._wake.set()
        got: list[int] = []
        t_tok = arrival
        try:
            for size in sizes:
                while len(got) < size:
                    tok, t_tok = await req.tokens.get()
                    got.append(tok)
                yield t_tok, got[:size]
                got = got[size:]
        finally:
            req.left = 0  # a client that went away frees its batch slot

    async def _step_loop(self) -> None:
        """Batch timing: one decode step for every admitted request together."""
        assert self._wake is not None
        while True:
            if not self._batch:
                self._wake.clear()
                await self._wake.wait()
            now = time.monotonic()
            running = [r for r in self._batch if r.left > 0]
            self._batch = running
            if not running:
                continue
            pending = [r for r in running if r.ready > now]
            admitted = [r for r in running if r.ready <= now]
            if not admitted:
                await self._at(min(r.ready for r in pending))
                continue
            step = (self.opt.tpot_ms * 1e3 + self.opt.batch_cost_us * len(admitted)) * 1e-6
            t = now + step
            await self._at(t)
            for r in admitted:
                tok = self.model.next_token(*r.ctx)
                r.ctx = [r.ctx[1], r.ctx[2], tok]
                r.left -= 1
                r.tokens.put_nowait((tok, t))


def iter_emission_plan(t0: float, tpot: float, sizes: Iterable[int]) -> Iterator[tuple[float, int]]:
    """Chunk j holds tokens k-size..k-1 and is due when its last token is: t0 + (k-1) x tpot.

    Each deadline is computed from t0, never from the previous chunk's send, so a late write does
    not push the ones after it."""
    k = 0
    for size in sizes:
        k += size
        yield t0 + (k - 1) * tpot, size


def emission_plan(t0: float, tpot: float, sizes: Iterable[int]) -> list[tuple[float, int]]:
    return list(iter_emission_plan(t0, tpot, sizes))


def _sse(obj: dict[str, Any]) -> bytes:
    return b"data: " + orjson.dumps(obj) + b"\n\n"


async def _sleep_until(t: float) -> None:
    delay = t - time.monotonic()
    if delay > 0:
        await asyncio.sleep(delay)


async def serve_forever(
    options: ServerOptions, host: str, port: int, ready: Any = None, limits: ConnectionLimits | None = None
) -> None:
    """Run the server until cancelled; `ready(port)` is called once it listens."""
    server = LLMServer(options, limits)
    bound = await server.start(host, port)
    if ready is not None:
        ready(bound)
    try:
        await asyncio.Event().wait()
    finally:
        if server.lateness["first"].n:
            print(f"proctor serve llm: {server.lateness_line()}", file=sys.stderr, flush=True)
        await server.stop()


__all__ = ["Faults", "LLMServer", "ServerOptions", "TinyLM", "emission_plan", "parse_chunk", "serve_forever"]
