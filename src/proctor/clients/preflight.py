"""The openai SUT's check before a run: does every endpoint answer HTTP at all?

One `GET .../v1/models` per endpoint, bounded by the connect timeout: nothing listening, a refused
or timed-out connection, or an answer that is not HTTP is a `ConfigError` naming the `url=` key and
what was tried, raised while the SUT is built, so `proctor run` exits 2 with one line before any log
is written (instead of timing a run in which every sample fails). Any HTTP status counts as up (a
server without `/v1/models` still answers 404): the requests of the run say the rest.

Then `probe_offer`: one small streamed request per endpoint asking for token ids, per-token
logprobs and a usage record, whose answer (`clients.offer`) says which token counts will be exact,
whether every request needs `logprobs=1` (llama.cpp's server), and whether TEST06 can pass.
"""

from __future__ import annotations

import re
import socket
import ssl
import time
from collections.abc import Callable
from urllib.parse import urlsplit

import orjson

from proctor.clients.offer import Offer, answer_complete, read_offer
from proctor.clients.openai_config import APIS, endpoint_url
from proctor.clients.stream import request_headers
from proctor.errors import ConfigError
from proctor.untrusted_text import printable

MAX_STATUS_LINE = 1024  # bytes read for the answer's status line, at most
MAX_MODELS_ANSWER = 64 << 10  # bytes read of a model list, at most (`server_owner`)
# The servers known to take `min_tokens` in a completion request (their model lists' `owned_by`).
MIN_TOKENS_SERVERS = ("vllm", "sglang")
_OWNED_BY = re.compile(rb'"owned_by"\s*:\s*"([A-Za-z0-9_.-]{1,40})"')


def models_url(url: str, api: str) -> str:
    """The model list's URL beside the endpoint a base URL (or full endpoint URL) names."""
    ep = endpoint_url(url, api)
    for suffix in sorted(APIS.values(), key=len, reverse=True):
        if ep.endswith(suffix):
            return ep[: -len(suffix)] + "/v1/models"
    for suffix in ("/chat/completions", "/completions"):
        if ep.endswith(suffix):
            return ep[: -len(suffix)] + "/models"
    return ep


def status_line(url: str, timeout_s: float) -> str:
    """The status line of `GET url` (HTTP/1.1, no body read; the run's headers: identity encoding,
    the API key when OPENAI_API_KEY is set), or OSError / ValueError saying why not."""
    return parse_status_line(_get(url, timeout_s, MAX_STATUS_LINE, lambda got: b"\n" in got))


def server_owner(url: str, api: str, timeout_s: float) -> str:
    """Who the endpoint's model list says owns its first model (`owned_by`: "vllm", "sglang", ...),
    lower case; "" when it does not say, does not answer or answers something else. Bounded: at most
    MAX_MODELS_ANSWER bytes, within timeout_s."""
    try:
        got = _get(models_url(url, api), timeout_s, MAX_MODELS_ANSWER, lambda got: _OWNED_BY.search(got) is not None)
        parse_status_line(got)
    except (OSError, ValueError):
        return ""
    m = _OWNED_BY.search(got)
    return m.group(1).decode("ascii").lower() if m else ""


def _get(url: str, timeout_s: float, limit: int, enough: Callable[[bytes], bool]) -> bytes:
    """The first bytes of the answer to `GET url`: up to `limit`, until `enough(got)` or the server
    closes."""
    return _exchange("GET", url, None, timeout_s, limit, enough)


def _exchange(method: str, url: str, body: bytes | None, timeout_s: float, limit: int,
              enough: Callable[[bytes], bool]) -> bytes:
    """The first bytes of the answer to one request (`Connection: close`): up to `limit`, until
    `enough(got)` or the server closes; the whole exchange within `timeout_s`."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    deadline = time.monotonic() + timeout_s
    sock = socket.create_connection((host, port), timeout=timeout_s)
    try:
        if parts.scheme == "https":
            sock = ssl.create_default_context().wrap_socket(sock, server_hostname=host)
        sock.settimeout(max(deadline - time.monotonic(), 0.001))
        headers = request_headers()
        if body is None:
            headers.pop("Content-Type", None)
        else:
            headers["Content-Length"] = str(len(body))
        extra = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        sock.sendall(
            f"{method} {path} HTTP/1.1\r\nHost: {parts.netloc}\r\nAccept: application/json, text/event-stream\r\n"
            f"{extra}Connection: close\r\n\r\n".encode("latin-1", "replace") + (body or b"")
        )
        got = b""
        while not enough(got) and len(got) < limit:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("timed out")
            sock.settimeout(left)
            chunk = sock.recv(limit - len(got))
            if not chunk:
                break
            got += chunk
    finally:
        sock.close()
    return got


def parse_status_line(got: bytes) -> str:
    """The first line of an answer when it is an HTTP/1.x status line, else ValueError saying what
    it began with (bounded, printable)."""
    line = got[:MAX_STATUS_LINE].split(b"\n", 1)[0].strip()
    fields = line.split(b" ", 2)
    if len(fields) < 2 or not fields[0].startswith(b"HTTP/1.") or not (len(fields[1]) == 3 and fields[1].isdigit()):
        shown = line[:60].decode("ascii", "backslashreplace") if line else "nothing"
        raise ValueError(f"the answer is not HTTP (it began {shown!r})")
    return line.decode("ascii", "replace")


def check_endpoints(urls: tuple[str, ...], api: str, connect_s: float) -> None:
    """ConfigError(key url) for the first endpoint that does not answer HTTP within connect_s."""
    for url in urls:
        probe = models_url(url, api)
        try:
            status_line(probe, connect_s)
        except TimeoutError:
            why = f"no answer within connect_s={connect_s:g} s"
        except ConnectionRefusedError:
            why = "connection refused (is the server running, on this port?)"
        except ssl.SSLError as exc:
            why = f"TLS failed: {exc.reason or exc}"
        except OSError as exc:
            why = exc.strerror or type(exc).__name__
        except ValueError as exc:
            why = str(exc)
        else:
            continue
        raise ConfigError(
            f"url={url[:200]}: the endpoint does not answer (tried GET {probe[:200]}): {why}; start the "
            "server or fix url= (preflight=0 skips this check)",
            key="url",
        )


# --- what the server offers for counting tokens (clients.offer reads the answer) --------------------

PROBE_TOKENS = 4  # tokens the probe asks for: enough for several content chunks, cheap on any server
PROBE_PROMPT = "Say hello."
MAX_PROBE_ANSWER = 256 << 10  # bytes of the probe's answer read, at most
PROBE_LIMIT_S = 30.0  # the probe's whole exchange, at most (a large model's first token included)
# the fields asked for, dropped one by one (in this order) when a server refuses the request (4xx)
PROBE_ASKS = ("return_token_ids", "logprobs", "stream_options")


def probe_body(api: str, model: str, asks: tuple[str, ...]) -> bytes:
    """A small streamed request asking for `asks` (token ids, per-token logprobs, a usage record)."""
    req: dict[str, object] = {"model": model, "max_tokens": PROBE_TOKENS, "temperature": 0.0, "stream": True}
    if api == "chat":
        req["messages"] = [{"role": "user", "content": PROBE_PROMPT}]
    else:
        req["prompt"] = PROBE_PROMPT
    if "stream_options" in asks:
        req["stream_options"] = {"include_usage": True}
    if "return_token_ids" in asks:
        req["return_token_ids"] = True
    if "logprobs" in asks:
        if api == "chat":
            req["logprobs"], req["top_logprobs"] = True, 0
        else:
            req["logprobs"] = 1
    return orjson.dumps(req)


def probe_offer(url: str, api: str, model: str, timeout_s: float) -> Offer:
    """What one endpoint offers (`clients.offer`): one small request asking for token ids, logprobs
    and usage; a 4xx answer (a field the server does not take) drops the asks one by one. Bounded:
    MAX_PROBE_ANSWER bytes, within min(timeout_s, PROBE_LIMIT_S) per exchange; never raises."""
    ep = endpoint_url(url, api)
    asks: tuple[str, ...] = PROBE_ASKS
    refused: list[str] = []
    limit_s = min(timeout_s, PROBE_LIMIT_S)
    while True:
        try:
            raw = _exchange("POST", ep, probe_body(api, model, asks), limit_s, MAX_PROBE_ANSWER, answer_complete)
        except TimeoutError:
            return Offer(ep, problem=f"no complete answer within {limit_s:g} s", refused=tuple(refused))
        except (OSError, ValueError) as exc:
            return Offer(ep, problem=printable(str(exc) or type(exc).__name__, 200), refused=tuple(refused))
        offer = read_offer(ep, raw, tuple(refused))
        if 400 <= offer.status < 500 and offer.status != 429 and asks:
            refused.append(asks[0])
            asks = asks[1:]
            continue
        return offer


def probe_offers(urls: tuple[str, ...], api: str, model: str, timeout_s: float) -> list[Offer]:
    return [probe_offer(u, api, model, timeout_s) for u in urls]


__all__ = [
    "MAX_PROBE_ANSWER",
    "PROBE_ASKS",
    "PROBE_PROMPT",
    "probe_body",
    "probe_offer",
    "probe_offers",
    "MAX_MODELS_ANSWER",
    "MAX_STATUS_LINE",
    "MIN_TOKENS_SERVERS",
    "check_endpoints",
    "models_url",
    "parse_status_line",
    "server_owner",
    "status_line",
]
