"""What proctor's servers do with requests their handlers did not expect: a 4xx or 500 answer, never
a traceback; one log line per kind of failure, counted, then again only at each doubling of its
count (100 malformed requests write 7 lines per kind, not 100 tracebacks). A declared body larger
than the server's limit is refused before a byte of it is read."""

from __future__ import annotations

import asyncio
import logging
import zlib
from collections import Counter
from collections.abc import Awaitable, Callable

import orjson
from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.typedefs import Middleware
from aiohttp.web_protocol import RequestPayloadError

from proctor.untrusted_text import printable

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class FailureLog:
    """Failures by kind: each kind logged on its 1st, 2nd, 4th, 8th, ... occurrence, with the count."""

    def __init__(self, logger: logging.Logger) -> None:
        self.logger = logger
        self.counts: Counter[str] = Counter()

    def note(self, kind: str, message: str) -> None:
        self.counts[kind] += 1
        n = self.counts[kind]
        if n & (n - 1) == 0:
            self.logger.warning("%s (%d so far): %s", kind, n, printable(message, 300))


def _answer(status: int, message: str) -> web.Response:
    body = {"error": {"message": message, "type": "invalid_request_error", "code": status}}
    return web.Response(body=orjson.dumps(body), status=status, content_type="application/json")


def guard(failures: FailureLog, max_body: int) -> Middleware:
    """The middleware: body limit first, then the handler with every unexpected failure answered."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        declared = request.content_length
        if declared is not None and declared > max_body:
            failures.note("body_too_large", f"{request.method} {request.path}: {declared} bytes declared")
            resp = _answer(413, f"the body is over this server's limit of {max_body} bytes")
            resp.force_close()  # the unread body must not be taken for the next request
            return resp
        encoding = request.headers.get("Content-Encoding", "identity").strip().lower()
        if encoding != "identity":  # bodies are not decompressed here (runners: auto_decompress=False)
            failures.note("encoded_body", f"{request.method} {request.path}: Content-Encoding {encoding[:40]}")
            resp = _answer(415, "this server takes uncompressed bodies only (no Content-Encoding)")
            resp.force_close()
            return resp
        try:
            return await handler(request)
        except (web.HTTPException, asyncio.CancelledError):
            raise
        except (HttpProcessingError, RequestPayloadError, zlib.error, UnicodeDecodeError) as exc:  # an undecodable body
            failures.note("bad_body", f"{request.method} {request.path}: {type(exc).__name__}: {exc}")
            return _answer(400, f"the request body cannot be decoded: {printable(exc, 200)}")
        except ConnectionError as exc:  # the client went away: nobody to answer
            failures.note("client_gone", f"{request.method} {request.path}: {type(exc).__name__}")
            return web.Response(status=499)
        except Exception as exc:  # noqa: BLE001 - a bug or a case not handled: answered, counted
            failures.note(f"internal:{type(exc).__name__}", f"{request.method} {request.path}: {exc}")
            return _answer(500, f"internal error ({type(exc).__name__}); see the server's log")

    return middleware


class _ProtocolErrors(logging.Filter):
    """aiohttp answers a request it cannot parse (bad head, bad framing) with 400 itself and logs
    the parser's traceback on `aiohttp.server`: counted here, one line per kind, no traceback."""

    def __init__(self) -> None:
        super().__init__()
        self.failures = FailureLog(logging.getLogger("proctor.serving"))

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.exc_info or record.exc_info[1] is None:
            return True
        exc = record.exc_info[1]
        self.failures.note(f"unparsable_request:{type(exc).__name__}", " ".join(str(exc).split())[:200])
        return False


_PROTOCOL_ERRORS = _ProtocolErrors()


def quiet_protocol_errors() -> FailureLog:
    """Install (once) the filter that turns aiohttp's parser tracebacks into counted lines."""
    logger = logging.getLogger("aiohttp.server")
    if _PROTOCOL_ERRORS not in logger.filters:
        logger.addFilter(_PROTOCOL_ERRORS)
    return _PROTOCOL_ERRORS.failures


__all__ = ["FailureLog", "guard", "quiet_protocol_errors"]
