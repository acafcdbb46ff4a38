"""One exception tree for proctor, so callers can catch what they can act on.

    ProctorError
     ├── ConfigError          a settings file (mlperf.conf, user.conf, audit.config) or a parameter is wrong
 │    └── SettingRangeError  a setting out of its legal range (also ValueError, for the Python API)
     ├── LogFormatError       a log file cannot be read as the format it claims
     ├── RunError             a test could not run to its end (SUT raised, timed out, interrupted);
     │                        also a RuntimeError, as the official LoadGen binding's errors are
     ├── DatasetError         the bundled digits data is not the data the reference was built on
     ├── HTTP1Error           an HTTP/1.1 response the client cannot follow (fault kind `protocol`)
     ├── SSEError             a stream that is not SSE a client can follow
     │    └── StreamOverrun   a stream past what its request allows (tokens or bytes): cut
     ├── RequestError         a request a KServe V2 node cannot serve (400, or 503 when busy)
     ├── DecompressionError   compressed data that is corrupt or of the wrong size
     ├── CodecError           a KServe V2 message that cannot be read or written as the protocol says
     ├── TruncateError        a submission tree the accuracy-log truncation cannot process (also ValueError)
     ├── PackageError         a runs folder that cannot make a submission tree (also ValueError)
     ├── TreeError            a tree proctor refuses to walk, read, copy or write (a link out of it, a
     │                        FIFO, a name that is not one folder; trees.py) (also ValueError)
     └── ResultsError         a results database proctor cannot open, or a tree, run or query it cannot
                              ingest or compare (`proctor results`; a missing duckdb says what to install)

Every error that comes from a file names the file, the line and the key, so the user can go
straight to it. The modules that raise an error import it from here; the tree is drawn once.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class ProctorError(Exception):
    """Base of every error proctor raises on purpose."""


class ConfigError(ProctorError):
    def __init__(self, message: str, *, file: str | None = None, line: int | None = None,
                 key: str | None = None) -> None:
        self.file, self.line, self.key = file, line, key
        self.message = message  # without the place: for re-raising it at another (resolve._refuse)
        where = ""
        if file is not None:
            where = f"{file}:{line}: " if line is not None else f"{file}: "
        if key is not None:
            where += f"key '{key}': "
        super().__init__(where + message)


class SettingRangeError(ConfigError, ValueError):
    """A numeric setting outside its legal range (loadgen/settings.py RANGES), or one that would
    overflow what the run computes from it. A ValueError too: the Python API's callers catch that."""


class LogFormatError(ProctorError):
    def __init__(self, message: str, *, file: str | None = None, line: int | None = None) -> None:
        self.file, self.line, self.detail = file, line, message  # detail: the message without the place
        where = f"{file}:{line}: " if file is not None and line is not None else (f"{file}: " if file else "")
        super().__init__(where + message)


class RunError(ProctorError, RuntimeError):
    """A run ended before its end; what was measured so far is kept in the logs.

    A RuntimeError too: a harness written for the official binding wraps StartTest in
    `except RuntimeError`, and that must catch proctor's failures as well. `outcome`: the run's
    outcome (`loadgen.engine.RunOutcome`) when its logs were written, so a caller can still judge
    and report it; None otherwise."""

    outcome: Any = None


class DatasetError(ProctorError):
    """The bundled digits data is not the data the reference was built on."""


class HTTP1Error(ProctorError):
    """The response is not HTTP/1.1 the client can follow (fault kind `protocol`)."""


class SSEError(ProctorError):
    """The stream is not SSE a client can follow (a line past the size limit)."""


class StreamOverrun(SSEError):
    """A stream passed what its request allows (more tokens than it asked, or more bytes than those
    tokens can take): cut as a protocol fault, whatever the server goes on sending."""


class RequestError(ProctorError):
    """A request the node cannot serve (answered 400, or 503 when `busy`)."""

    def __init__(self, message: str, *, busy: bool = False) -> None:
        super().__init__(message)
        self.busy = busy


class DecompressionError(ProctorError):
    """Compressed data that is corrupt or does not decompress to the expected size."""


class CodecError(ProctorError):
    """A V2 message that cannot be read (or a tensor that cannot be written) as the protocol says."""


class TruncateError(ProctorError, ValueError):
    """The tree cannot be processed (the official tool would stop or skip); the message says why."""


class PackageError(ProctorError, ValueError):
    """The runs folder cannot make a tree; the message names the file or folder to add."""


class TreeError(ProctorError, ValueError):
    """A tree proctor will not walk, read, copy or write as asked; the message names the path."""


class ResultsError(ProctorError):
    """The results database cannot do what was asked; the message names the file, folder or option."""


__all__ = [
    "CodecError",
    "ConfigError",
    "DatasetError",
    "DecompressionError",
    "HTTP1Error",
    "LogFormatError",
    "PackageError",
    "ProctorError",
    "RequestError",
    "ResultsError",
    "RunError",
    "SSEError",
    "SettingRangeError",
    "StreamOverrun",
    "TreeError",
    "TruncateError",
]
