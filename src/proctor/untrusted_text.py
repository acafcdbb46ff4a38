"""Text that came from outside (a node's self-reported name, a server's error body, a SUT's name)
on its way into a log or a terminal: one line, printable, bounded. A log line is a record; a name
holding a newline and "Result is : VALID" must not become one."""

from __future__ import annotations

DEFAULT_LIMIT = 200


def printable(value: object, limit: int = DEFAULT_LIMIT) -> str:
    """`value` as one printable line of at most `limit` characters (plus an ellipsis): control and
    other non-printable characters become backslash escapes, a backslash itself is doubled."""
    text = value if isinstance(value, str) else str(value)
    text = text[: limit * 4 + 1]  # work on a bounded prefix: an escape is at most 10 characters
    out: list[str] = []
    size = 0
    for ch in text:
        if ch == "\\":
            piece = "\\\\"
        elif ch.isprintable():
            piece = ch
        else:
            code = ord(ch)
            piece = f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
        size += len(piece)
        if size > limit:
            out.append("…")
            break
        out.append(piece)
    return "".join(out)


__all__ = ["DEFAULT_LIMIT", "printable"]
