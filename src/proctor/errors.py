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
     ├── RequestError         a request a KServe V2 node cannot serve (400, or 503 when busy)
     ├── DecompressionError   compressed data that is corrupt or of the wrong size
     ├── CodecError           a KServe V2 message that cannot be read or written as the protocol says
     ├── TruncateError        a submission tree the accuracy-log truncation cannot process (also ValueError)
     └── PackageError         a runs folder that cannot make a submission tree (also ValueError)

Every error that comes from a file names the file, the line and the key, so the user can go
straight to it. The modules that raise an error import it from here; the tree is drawn once.
"""

from __future__ import annotations


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
        self.file, self.line = file, line
        where = f"{file}:{line}: " if file is not None and line is not None else (f"{file}: " if file else "")
        super().__init__(where + message)


class RunError(ProctorError, RuntimeError):
    """A run ended before its end; what was measured so far is kept in the logs.

    A RuntimeError too: a harness written for the official binding wraps StartTest in
    `except RuntimeError`, and that must catch proctor's failures as well."""


class DatasetError(ProctorError):
    """The bundled digits data is not the data the reference was built on."""


class HTTP1Error(ProctorError):
    """The response is not HTTP/1.1 the client can follow (fault kind `protocol`)."""


class SSEError(ProctorError):
    """The stream is not SSE a client can follow (a line past the size limit)."""


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
    "RunError",
    "SSEError",
    "SettingRangeError",
    "TruncateError",
]
