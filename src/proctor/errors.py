"""One exception tree for proctor, so callers can catch what they can act on.

    ProctorError
     ├── ConfigError        a settings file (mlperf.conf, user.conf, audit.config) is wrong
     ├── LogFormatError     a log file cannot be read as the format it claims
     └── RunError           a test could not run to its end (SUT raised, timed out, interrupted)

Every error that comes from a file names the file, the line and the key, so the user can go
straight to it.
"""

from __future__ import annotations


class ProctorError(Exception):
    """Base of every error proctor raises on purpose."""


class ConfigError(ProctorError):
    def __init__(self, message: str, *, file: str | None = None, line: int | None = None,
                 key: str | None = None) -> None:
        self.file, self.line, self.key = file, line, key
        where = ""
        if file is not None:
            where = f"{file}:{line}: " if line is not None else f"{file}: "
        if key is not None:
            where += f"key '{key}': "
        super().__init__(where + message)


class LogFormatError(ProctorError):
    def __init__(self, message: str, *, file: str | None = None, line: int | None = None) -> None:
        self.file, self.line = file, line
        where = f"{file}:{line}: " if file is not None and line is not None else (f"{file}: " if file else "")
        super().__init__(where + message)


class RunError(ProctorError):
    """A run ended before its end; what was measured so far is kept in the logs."""
