"""Text files read as the official Python tools read them: UTF-8, universal newlines.

The official submission checker, its compliance scripts and mlperf_logging open every text file
(accuracy.txt, verify_*.txt, the LoadGen logs, the system and measurements JSON) with Python's
`open(path, "r", encoding="utf-8")` or the locale's UTF-8 and walk it with `for line in f`. Two
things follow that a byte-level reader misses:

- universal newlines: "\\r\\n", a lone "\\r" and "\\n" each end a line, and the line the loop sees
  ends in "\\n" (so `^hash=(\\w+)$` matches a CRLF line; a Windows-saved accuracy.txt passes);
  nothing else splits a line (str.splitlines() also splits on "\\x0b", "\\x0c", "\\x1c"-"\\x1e",
  "\\x85", "\\u2028", "\\u2029", which the official loop keeps inside the line);
- strict UTF-8: a byte sequence that is not UTF-8 stops the official checker with a traceback, so it
  is an error naming the file and the byte here, never a silent replacement. A byte-order mark is kept
  as the character U+FEFF, as `encoding="utf-8"` keeps it.

Every checker that reads a text file goes through this module (`read_text`, `split_lines`,
`universal_lines` for streaming readers), so a CRLF or CR file gets one reading everywhere.
"""

from __future__ import annotations

import codecs
import os
from pathlib import Path

from proctor.errors import LogFormatError, TreeError
from proctor.trees import open_file, read_at_most

MAX_TEXT = 1 << 20  # verification outputs, accuracy.txt, READMEs: a few lines; read no more
# Where a text file's reading comes from (the source a finding about it cites).
TEXT_SOURCE = (
    "official submission checker (tools/submission/submission_checker.py, v4.1-v5.1.1; "
    "submission_checker/ at HEAD): open(path, encoding=\"utf-8\") and `for line in f`"
)


def decode_utf8(data: bytes, file: str | None = None, *, final: bool = True) -> str:
    """`data` as the official `open(..., encoding="utf-8")` decodes it, newlines translated.

    `final=False` when `data` is a prefix cut at a size bound: an incomplete character at its end is
    dropped instead of being an error. Raises LogFormatError naming the first bad byte.
    """
    try:
        text = codecs.getincrementaldecoder("utf-8")("strict").decode(data, final=final)
    except UnicodeDecodeError as exc:
        raise LogFormatError(
            f"not UTF-8 text (byte {exc.start} is 0x{data[exc.start]:02x}): the official checker stops on it "
            "with an error; save the file as UTF-8",
            file=file,
        ) from None
    return translate_newlines(text)


def translate_newlines(text: str) -> str:
    """Python's universal newlines on read: "\\r\\n" and a lone "\\r" become "\\n"."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def split_lines(text: str) -> list[str]:
    """The lines `for line in open(path)` gives, without their "\\n" (universal newlines; a final
    line end adds no empty line)."""
    lines = translate_newlines(text).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def universal_lines(chunk: bytes) -> list[bytes]:
    """The lines of one `readline()` chunk of a binary file (or of a whole file's bytes), each
    without its line end, split as universal newlines split them: b"\\r\\n", a lone b"\\r" and
    b"\\n" (bytes.splitlines knows exactly these three)."""
    return chunk.splitlines()


def read_text(path: Path, limit: int = MAX_TEXT, *, lenient: bool = False) -> str:
    """The first `limit` bytes of a regular file as the official reads them (see the module).

    `lenient=True` for a file the official never reads as text (a README proctor scans for words):
    bytes that are not UTF-8 are replaced instead of raising. Raises OSError when the file cannot be
    read, LogFormatError when it is not a regular file or (not lenient) not UTF-8.
    """
    try:  # no link followed on the way, a FIFO never blocks, a device is never opened (trees.py)
        fd = open_file(path)
    except TreeError as exc:
        raise LogFormatError(f"not a regular file: {exc}", file=str(path)) from exc
    with os.fdopen(fd, "rb") as fh:
        data = read_at_most(fh, limit)
    final = len(data) <= limit
    data = data[:limit]
    if lenient:
        return translate_newlines(data.decode("utf-8", "replace"))
    return decode_utf8(data, str(path), final=final)


__all__ = [
    "MAX_TEXT",
    "TEXT_SOURCE",
    "decode_utf8",
    "read_text",
    "split_lines",
    "translate_newlines",
    "universal_lines",
]
