"""What the packager (`submission/`) and the checker (`checks/`) agree on about a submission's files.

A submitted `mlperf_log_accuracy.json` may be at most MAX_ACCURACY_LOG_SIZE bytes (the official
checker refuses a larger one); a longer log is cut, as the official `truncate_accuracy_log.py`
cuts it, to its first and last VIEWABLE_SIZE bytes with TRUNCATION_MARK between them, and the
sha256 of the full log goes to a `hash=` line of the `accuracy.txt` beside it. A submitter's tree
may hold links inside itself only under CODE_FOLDERS. Stated once here, below both layers: the
checker reads trees and never imports the code that builds them (docs/architecture.md, "Layers").
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from functools import cache

from proctor.text_files import split_lines

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_ACCURACY_LOG_SIZE = 10 * 1024  # bytes; the official checker's limit
VIEWABLE_SIZE = 4096  # kept from the head and from the tail
TRUNCATION_MARK = b"\n\n...\n\n"
SHA256_HEX = re.compile(r"^[0-9a-f]{64}$")
CODE_FOLDERS = ("code", "src")  # where a submitter's tree may hold links inside itself (model variants)
_HASH_LINE = re.compile(r"^hash=(\w+)$")  # the official pattern, [\w\d]+


def hash_lines(text: str) -> list[str]:
    """The values of every `hash=` line of an accuracy.txt, in order (the official reads the first).

    Lines are split as Python's `for line in f` splits them (universal newlines: "\\r\\n", "\\r" and
    "\\n"), so a CRLF file's hash line counts as it does for the official; a value the official
    regex would not take is left out.
    """
    out = []
    for line in split_lines(text):
        m = _HASH_LINE.match(line)
        if m:
            out.append(m.group(1))
    return out


def lf_form(data: bytes) -> bytes:
    """`data` with its line ends made LF (b"\\r\\n" and a lone b"\\r", as universal newlines read
    them): the log LoadGen wrote before a copy converted its line ends (git's autocrlf on Windows).
    LoadGen's JSON never holds a raw CR (a string escapes it), so nothing else changes; the same
    object when there is no CR."""
    if b"\r" not in data:
        return data
    return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")


def sha256_hex(data: bytes) -> str:
    """The sha256 of a submitted accuracy log (at most MAX_ACCURACY_LOG_SIZE bytes), in hex.

    By CPython's own sha256 module where there is one: hashlib's first use loads OpenSSL, 3-4 ms,
    a tenth of checking a small tree, to hash 10 KiB (the packager hashes whole logs with hashlib).
    """
    if len(data) > _BUILTIN_SHA256_MAX:  # OpenSSL's is about 5 times faster per byte
        import hashlib

        return hashlib.sha256(data).hexdigest()
    return _builtin_sha256()(data).hexdigest()


_BUILTIN_SHA256_MAX = 1 << 20


@cache
def _builtin_sha256() -> Callable[[bytes], Any]:
    for name in ("_sha2", "_sha256"):  # Python 3.12 and later; 3.11
        try:
            __import__(name)  # importlib's own module is not loaded on a check's path
            return sys.modules[name].sha256  # type: ignore[no-any-return, unused-ignore]
        except (ImportError, AttributeError):
            continue
    import hashlib

    return hashlib.sha256


def truncate_bytes(data: bytes) -> bytes:
    """The truncated log: unchanged below VIEWABLE_SIZE bytes, else head + mark + tail.

    As the official tool, a log of VIEWABLE_SIZE to 2*VIEWABLE_SIZE+7 bytes is rewritten too (and
    grows, its head and tail overlapping).
    """
    if len(data) < VIEWABLE_SIZE:
        return data
    return data[:VIEWABLE_SIZE] + TRUNCATION_MARK + data[len(data) - VIEWABLE_SIZE :]


def is_truncated(data: bytes) -> bool:
    """Whether `data` has the shape truncate_bytes gives a long log."""
    n = VIEWABLE_SIZE
    return len(data) == 2 * n + len(TRUNCATION_MARK) and data[n : n + len(TRUNCATION_MARK)] == TRUNCATION_MARK
