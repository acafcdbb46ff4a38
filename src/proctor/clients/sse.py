"""Server-sent events (SSE) as OpenAI-compatible servers stream them, parsed incrementally.

Bytes arrive cut anywhere (mid-line, mid-UTF-8 character, between CR and LF), so the parser keeps
the unfinished line and yields each event's `data` once the blank line that ends it arrives
(WHATWG SSE: `data:` lines joined by newlines, `:` comments and other fields ignored, CR, LF or
CRLF line ends). A server that never ends its last event (no trailing blank line) still has it
delivered by `close()`. One line, or one event's data (many `data:` lines before its blank line),
longer than `max_line` bytes is a protocol fault, not a memory sink: `SSEError`.
"""

from __future__ import annotations

from proctor.errors import SSEError

MAX_LINE = 8 << 20  # one SSE line (one JSON chunk) above 8 MiB is treated as a broken stream


class SSEParser:
    """Feed raw bytes, get the complete events' data payloads (bytes, without the `data:` prefix)."""

    __slots__ = ("_buf", "_data", "_has_data", "_max", "_size", "_skip_lf")

    def __init__(self, max_line: int = MAX_LINE) -> None:
        self._buf = b""
        self._data: list[bytes] = []
        self._size = 0  # the pending event's data bytes (its lines and their joins)
        self._has_data = False
        self._max = max_line
        self._skip_lf = False  # the previous feed ended on CR: a leading LF belongs to that line end

    def feed(self, chunk: bytes) -> list[bytes]:
        if self._skip_lf and chunk[:1] == b"\n":
            chunk = chunk[1:]
        self._skip_lf = False
        if not chunk:
            return []
        buf = self._buf + chunk if self._buf else chunk
        if b"\r" in buf:
            if buf.endswith(b"\r"):
                self._skip_lf = True
            buf = buf.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        lines = buf.split(b"\n")
        self._buf = lines.pop()
        if len(self._buf) > self._max:
            self._buf = b""
            raise SSEError(f"an SSE line is longer than {self._max} bytes")
        out: list[bytes] = []
        for line in lines:
            self._line(line, out)
        return out

    def close(self) -> list[bytes]:
        """The end of the stream: an unterminated last line and event still count."""
        out: list[bytes] = []
        if self._buf:
            self._line(self._buf, out)
            self._buf = b""
        self._line(b"", out)
        return out

    def _line(self, line: bytes, out: list[bytes]) -> None:
        if not line:  # blank line: dispatch the event
            if self._has_data:
                out.append(b"\n".join(self._data))
                self._data = []
                self._size = 0
                self._has_data = False
            return
        if line[:1] == b":":
            return
        name, sep, value = line.partition(b":")
        if name != b"data":
            return  # event:, id:, retry: and unknown fields carry nothing a completion needs
        if sep and value[:1] == b" ":
            value = value[1:]
        self._size += len(value) + 1
        if self._size > self._max:
            self._data, self._size, self._has_data = [], 0, False
            raise SSEError(f"an SSE event is longer than {self._max} bytes")
        self._data.append(value)
        self._has_data = True


__all__ = ["MAX_LINE", "SSEError", "SSEParser"]
