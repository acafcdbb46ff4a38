"""What an OpenAI-compatible server offers for counting tokens, and what follows for a run.

Servers differ in what their streams carry: vLLM sends token ids when asked (`return_token_ids`)
and a usage record; llama.cpp's Python server sends neither, only per-token logprobs when asked
(`logprobs=1`); some refuse fields they do not know. The preflight (`preflight.probe_offer`) sends
one small streamed request asking for all three and reads the answer here (pure, bounded, fuzzed):
`read_offer` turns the raw HTTP answer into an `Offer`; `plan_counts` says, for the run's settings
and every endpoint's offer, which source will count each sample's tokens (all of them exact: token
ids, the usage record, one logprobs entry per token, a local tokenizer; never the chunks), whether
to ask for logprobs in every request (`logprobs` left unset and no `tokenizer` given: when the
servers give no usage record but logprobs), and whether TEST06, which checks the token ids a
response logs, can pass.
"""

from __future__ import annotations

from collections.abc import Sequence

import orjson

from proctor.clients.sse import SSEParser
from proctor.errors import SSEError
from proctor.typed_records import record
from proctor.untrusted_text import printable

MAX_HEAD = 16 << 10  # bytes of the answer's status line and headers
MAX_CHUNK_LINE = 4096  # a chunk-size line with its extensions


@record(frozen=True, slots=True)
class Offer:
    """What one endpoint's stream carried for a request asking for token ids, logprobs and usage."""

    url: str
    status: int = 0  # the HTTP status (0: no answer)
    token_ids: bool = False  # every content chunk carried its token ids
    logprobs: bool = False  # content chunks carried one logprobs entry per token
    usage: bool = False  # a usage record with completion_tokens
    refused: tuple[str, ...] = ()  # request fields the server refused (dropped to get an answer)
    problem: str = ""  # why nothing is known ("" when the stream answered)

    @property
    def known(self) -> bool:
        return not self.problem

    def describe(self) -> str:
        if not self.known:
            return f"{self.url}: not known ({self.problem})"
        yes = {True: "yes", False: "no"}
        refused = f"; refused {', '.join(self.refused)}" if self.refused else ""
        return (f"{self.url}: token ids {yes[self.token_ids]}, logprobs {yes[self.logprobs]}, "
                f"usage {yes[self.usage]}{refused}")


def split_answer(raw: bytes) -> tuple[int, dict[str, str], bytes]:
    """(status, headers in lower case, body) of a raw HTTP/1.x answer; ValueError when it is not one."""
    head, sep, body = raw.partition(b"\r\n\r\n")
    if not sep or len(head) > MAX_HEAD:
        raise ValueError("no complete HTTP head")
    lines = head.split(b"\r\n")
    fields = lines[0].split(b" ", 2)
    if len(fields) < 2 or not fields[0].startswith(b"HTTP/1.") or not (len(fields[1]) == 3 and fields[1].isdigit()):
        raise ValueError(f"the answer is not HTTP (it began {printable(lines[0][:60].decode('latin-1'), 60)!r})")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if colon:
            headers[name.strip().lower().decode("latin-1")] = value.strip().decode("latin-1")
    return int(fields[1]), headers, body


def answer_complete(raw: bytes) -> bool:
    """Whether a raw answer is whole: its Content-Length read, a chunked body's last chunk, or an
    event stream's `data: [DONE]` (so a server that keeps the connection open is not waited for)."""
    head, sep, body = raw.partition(b"\r\n\r\n")
    if not sep:
        return False
    tail = raw[-256:]
    if b"data: [DONE]" in tail or tail.endswith(b"\r\n0\r\n\r\n") or body.startswith(b"0\r\n\r\n"):
        return True
    for line in head.split(b"\r\n")[1:]:
        name, colon, value = line.partition(b":")
        if colon and name.strip().lower() == b"content-length":
            text = value.strip()
            return text.isdigit() and len(text) <= 12 and len(body) >= int(text)
    return False


def dechunk(body: bytes) -> bytes:
    """A chunked body's data, as far as it is well formed (a cut or broken framing ends it)."""
    out: list[bytes] = []
    pos = 0
    while pos < len(body):
        end = body.find(b"\r\n", pos, pos + MAX_CHUNK_LINE)
        if end < 0:
            break
        size_text = body[pos:end].split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            break
        if size <= 0:
            break
        out.append(body[end + 2 : end + 2 + size])
        pos = end + 2 + size + 2
    return b"".join(out)


def _per_token(choice: dict[str, object]) -> int | None:
    """Entries of a chunk's per-token logprobs (completions: `tokens`; chat: `content`), None if none."""
    lp = choice.get("logprobs")
    if not isinstance(lp, dict):
        return None
    per = lp.get("tokens", lp.get("content"))
    return len(per) if isinstance(per, list) else None


def read_offer(url: str, raw: bytes, refused: tuple[str, ...] = ()) -> Offer:
    """The offer a probe's raw answer shows (bounded input: the caller read at most its limit)."""
    try:
        status, headers, body = split_answer(raw)
    except ValueError as exc:
        return Offer(url, problem=str(exc), refused=refused)
    if status != 200:
        return Offer(url, status, refused=refused, problem=f"HTTP {status}")
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = dechunk(body)
    events: list[bytes] = []
    parser = SSEParser()
    try:
        events = parser.feed(body) + parser.close()
    except SSEError as exc:
        return Offer(url, status, refused=refused, problem=str(exc))
    content = with_ids = with_logprobs = 0
    usage = False
    for data in events:
        try:
            obj = orjson.loads(data)
        except (orjson.JSONDecodeError, RecursionError):
            continue
        if not isinstance(obj, dict):
            continue
        u = obj.get("usage")
        if isinstance(u, dict) and type(u.get("completion_tokens")) is int:
            usage = True
        choices = obj.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            continue
        c = choices[0]
        delta = c.get("delta")
        text = c.get("text") if "text" in c else (delta.get("content") if isinstance(delta, dict) else None)
        ids = c.get("token_ids")
        has_ids = isinstance(ids, list) and bool(ids) and all(type(t) is int for t in ids)
        per = _per_token(c)
        if not (text or has_ids or per):
            continue  # a role, finish or usage chunk: no token
        content += 1
        with_ids += has_ids
        with_logprobs += bool(per)
    if not content:
        return Offer(url, status, usage=usage, refused=refused, problem="the stream carried no token")
    return Offer(url, status, token_ids=with_ids == content, logprobs=with_logprobs > 0, usage=usage,
                 refused=refused)


@record(frozen=True, slots=True)
class CountPlan:
    """What a run does with the servers' offers: ask for logprobs or not, and what to tell."""

    logprobs: bool  # send logprobs=1 (chat: logprobs, top_logprobs=0) with every request
    source: str  # the count source the run will use ("" when none is exact)
    lines: list[str]  # for the SUT's report and the console: the offers, the counts, TEST06
    warn: bool  # no exact count source: every sample will fail (no_count)
    # warn: the one line a run is refused with before it starts (every sample would fail, no_count)
    refusal: str = ""


def plan_counts(
    offers: Sequence[Offer], *, ids_asked: bool, logprobs: bool | None, tokenizer: bool,
) -> CountPlan:
    """The count source for a run asking `ids_asked` (token_ids=1 or output=ids), with `logprobs`
    (None: decide from the offers) and a `tokenizer` or not; an offer not known changes nothing."""
    known = [o for o in offers if o.known]
    every = bool(known) and len(known) == len(offers)

    def all_(attr: str) -> bool:
        return every and all(getattr(o, attr) for o in known)

    ids, usage, lp = all_("token_ids"), all_("usage"), all_("logprobs")
    send_lp = bool(logprobs)
    why_lp = ""
    if logprobs is None and every and not usage and not (ids and ids_asked) and lp and not tokenizer:
        send_lp = True
        why_lp = " (logprobs=1 added to every request: the server sends no usage record)"
    if ids_asked and ids:
        source = "token ids"
    elif usage:
        source = "the usage record"
    elif send_lp and (lp or not every):
        source = "logprobs, one entry per token" + why_lp
    elif tokenizer:
        source = "the local tokenizer (exact when it is the served model's)"
    elif not every:
        source = "the stream (not known before the run)"
    else:
        source = ""
    lines = ["preflight: " + "; ".join(o.describe() for o in offers)]
    if source:
        lines.append(f"preflight: token counts from {source}")
    else:
        lines.append("preflight: no exact token count: the server sends no token ids, no usage record and no "
                     "logprobs; every sample will fail (no_count): give tokenizer=PATH (the served model's)")
    if every:
        test06 = ("TEST06 can pass: the server sends token ids (run the audit with output=ids)" if ids else
                  "TEST06 cannot pass: the server sends no token ids, and TEST06 checks the token ids each "
                  "response logs (output=ids)")
        lines.append(f"preflight: {test06}")
    warn = every and not source
    refusal = ""
    if warn and not ids and not lp:  # nothing to count by even when asked: every sample would fail
        urls = ", ".join(o.url for o in offers)
        who = "the server sends" if len(offers) == 1 else "the servers send"
        refusal = (f"{urls}: {who} no token ids, no usage record and no logprobs, so no output token can be "
                   "counted and every sample would fail (no_count): give tokenizer=PATH (the served model's "
                   "tokenizer.json)")
    return CountPlan(send_lp, source, lines, warn=warn, refusal=refusal)


__all__ = ["CountPlan", "Offer", "answer_complete", "dechunk", "plan_counts", "read_offer", "split_answer"]
