"""The official `mlperf_logging.mllog` API, cheap enough to call inside a training loop.

Lines are byte-for-byte what the official logger writes (`:::MLLOG ` + the JSON object with the
fields namespace, time_ms, event_type, key, value, metadata in that order, `json.dumps` spacing),
so either side's reader accepts the other's lines. The official logger spends most of its ~145 µs
per event in `inspect.getframeinfo` (which reads the source file) and in `logging`; here the call
site comes from `sys._getframe` and the line goes straight to the streams, which is why it costs
a few microseconds. A `logging.Logger` can still be plugged in through `config(logger=...)`.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
from math import isfinite as _isfinite
from typing import Any, TextIO

from proctor.training import constants

LOG_PREFIX = ":::MLLOG "
FLUSH_INTERVAL_S = 0.1

_encode_json = json.JSONEncoder(allow_nan=True).encode  # same spacing as json.dumps
_STR_CACHE: dict[str, str] = {}  # keys, file names, namespaces: encoded once


def _default(obj: Any) -> Any:
    """numpy scalars and arrays, as the official `_NumpyJSONEncoder` turns them into JSON."""
    if hasattr(obj, "dtype") and hasattr(obj, "tolist"):
        return obj.tolist()  # numpy scalar -> int/float, array -> list
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


_slow_encode = json.JSONEncoder(default=_default).encode


def _enc(value: Any) -> str:
    """JSON text of one value; the common scalar types skip the encoder machinery."""
    t = type(value)
    if t is str:
        r = _STR_CACHE.get(value)
        if r is None:
            r = _encode_json(value)
            if len(_STR_CACHE) < 10_000 and len(value) < 200:
                _STR_CACHE[value] = r
        return r
    if t is int:
        return int.__repr__(value)
    if t is float:
        return float.__repr__(value) if _isfinite(value) else _encode_json(value)
    if value is None:
        return "null"
    if t is bool:
        return "true" if value else "false"
    return _slow_encode(value)


_HEAD_CACHE: dict[tuple[str, str, str], tuple[str, str]] = {}  # the fixed text around time_ms
_META_KEY_CACHE: dict[str, str] = {}  # '"samples_count": '
_FILE_HEAD_CACHE: dict[str, str] = {}  # '"file": "train.py", "lineno": '


def _meta_parts(metadata: dict[str, Any]) -> list[str]:
    parts = []
    for k, v in metadata.items():
        head = _META_KEY_CACHE.get(k)
        if head is None:
            head = f"{_enc(k)}: "
            if len(_META_KEY_CACHE) < 10_000:
                _META_KEY_CACHE[k] = head
        parts.append(head + (int.__repr__(v) if type(v) is int else _enc(v)))
    return parts


def _assemble(namespace: str, time_ms: Any, event_type: str, key: str, value: Any, meta: str) -> str:
    heads = _HEAD_CACHE.get((namespace, event_type, key))
    if heads is None:
        heads = (
            f'{LOG_PREFIX}{{"namespace": {_enc(namespace)}, "time_ms": ',
            f', "event_type": "{event_type}", "key": {_enc(key)}, "value": ',
        )
        if len(_HEAD_CACHE) < 10_000:
            _HEAD_CACHE[namespace, event_type, key] = heads
    return f'{heads[0]}{_enc(time_ms)}{heads[1]}{_enc(value)}, "metadata": {{{meta}}}}}'


def encode_line(
    namespace: str, time_ms: Any, event_type: str, key: str, value: Any, metadata: dict[str, Any]
) -> str:
    """One `:::MLLOG` line, identical to the official `_encode_log` output.

    The text that depends only on (namespace, event type, key) and the metadata keys is built once:
    a training loop logs the same few keys thousands of times.
    """
    return _assemble(namespace, time_ms, event_type, key, value, ", ".join(_meta_parts(metadata)))


class MLLogger:
    """MLPerf logging helper with the official constructor and `start`/`end`/`event` methods."""

    def __init__(
        self,
        logger: logging.Logger | None = None,
        default_namespace: str = constants.DEFAULT_NAMESPACE,
        default_stack_offset: int = 1,
        default_clear_line: bool = False,
        root_dir: str | None = None,
        stream: TextIO | None = None,
    ) -> None:
        if logger is not None and not isinstance(logger, logging.Logger):
            raise ValueError("logger must be a `logging.Logger` instance.")
        self.logger = logger
        self.streams: list[TextIO] = [] if logger is not None else [stream or sys.stdout]
        self.default_namespace = default_namespace
        self.default_stack_offset = default_stack_offset
        self.default_clear_line = default_clear_line
        self.root_dir = root_dir
        self.enabled = True  # False on non-zero ranks: events are dropped
        self._files: dict[str, str] = {}
        self._lock = threading.Lock()
        self._flushed = 0.0  # time.monotonic() of the last flush

    # --- output -------------------------------------------------------------------------------
    def add_file(self, filename: str) -> None:
        """Append lines to `filename` too (the official `config(filename=...)` FileHandler)."""
        self.streams.append(open(filename, "a", encoding="utf-8"))  # noqa: SIM115 - lives with the logger

    def flush(self) -> None:
        with self._lock:
            for s in self.streams:
                s.flush()

    def close(self) -> None:
        self.flush()
        for s in self.streams:
            if s not in (sys.stdout, sys.stderr):
                s.close()
        self.streams = [s for s in self.streams if s in (sys.stdout, sys.stderr)]

    def _emit(self, level: int, message: str, clear_line: bool) -> None:
        if clear_line:
            message = "\n" + message
        if self.logger is not None:
            self.logger.log(level, message)
        else:
            text = message + "\n"
            with self._lock:
                for s in self.streams:
                    s.write(text)
                    s.flush()

    def _short(self, filename: str) -> str:
        short = filename
        if self.root_dir is not None and filename.startswith(self.root_dir + "/"):
            short = filename[len(self.root_dir) + 1 :]
        self._files[filename] = short
        return short

    def _log(
        self,
        event_type: str,
        key: str,
        value: Any,
        metadata: Any,
        namespace: str | None,
        time_ms: Any,
        stack_offset: int | None,
        clear_line: bool | None,
    ) -> None:
        if not self.enabled:
            return
        if namespace is None:
            namespace = self.default_namespace
        if time_ms is None:
            time_ms = int(time.time() * 1e3)
        if stack_offset is None:
            stack_offset = self.default_stack_offset
        if clear_line is None:
            clear_line = self.default_clear_line
        # the call site: _log <- start/end/event <- caller (the official get_caller(2 + stack_offset))
        frame = sys._getframe(1 + stack_offset)
        filename = frame.f_code.co_filename
        short = self._files.get(filename) or self._short(filename)
        site = _FILE_HEAD_CACHE.get(short)  # '"file": "train.py", "lineno": '
        if site is None:
            site = _FILE_HEAD_CACHE[short] = f'"file": {_enc(short)}, "lineno": '
        user: dict[str, Any] = {}
        if metadata:
            if not isinstance(metadata, dict):
                self._emit(logging.WARNING, "Metadata is not dictionary, ignored.", True)
            else:
                user = metadata
        overridden = "file" in user or "lineno" in user  # the caller overrides the call site: rare
        if overridden:
            overlap = [k for k in ("file", "lineno") if k in user]
            self._emit(logging.WARNING, "Metadata fields overridden: " + ", ".join(overlap), True)
        try:
            if overridden:
                meta = ", ".join(_meta_parts({"file": short, "lineno": frame.f_lineno, **user}))
            else:
                meta = site + int.__repr__(frame.f_lineno)
                if user:
                    meta += ", " + ", ".join(_meta_parts(user))
            line = _assemble(namespace, time_ms, event_type, key, value, meta)
        except (TypeError, ValueError):
            self._emit(
                logging.ERROR,
                f"Failed to encode: {[namespace, time_ms, event_type, key, value, {'file': short, 'lineno': frame.f_lineno, **user}]}",
                True,
            )
            return
        if clear_line or self.logger is not None:
            self._emit(logging.INFO, line, clear_line)
            return
        line += "\n"
        now = time.monotonic()
        with self._lock:
            for s in self.streams:
                s.write(line)
            # A flush (a system call) per event would cost more than the rest of the event: flush
            # interval boundaries (init, run, epoch, block) at once, other events at least every
            # FLUSH_INTERVAL_S, so a crash loses at most that much of the log.
            if event_type != constants.POINT_IN_TIME or now - self._flushed >= FLUSH_INTERVAL_S:
                for s in self.streams:
                    s.flush()
                self._flushed = now

    def start(
        self,
        key: str,
        value: Any = None,
        metadata: Any = None,
        namespace: str | None = None,
        time_ms: Any = None,
        stack_offset: int | None = None,
        clear_line: bool | None = None,
    ) -> None:
        """Start a time interval (`INTERVAL_START`)."""
        self._log(
            constants.INTERVAL_START, key, value, metadata, namespace, time_ms, stack_offset, clear_line
        )

    def end(
        self,
        key: str,
        value: Any = None,
        metadata: Any = None,
        namespace: str | None = None,
        time_ms: Any = None,
        stack_offset: int | None = None,
        clear_line: bool | None = None,
    ) -> None:
        """End a time interval (`INTERVAL_END`)."""
        self._log(constants.INTERVAL_END, key, value, metadata, namespace, time_ms, stack_offset, clear_line)

    def event(
        self,
        key: str,
        value: Any = None,
        metadata: Any = None,
        namespace: str | None = None,
        time_ms: Any = None,
        stack_offset: int | None = None,
        clear_line: bool | None = None,
    ) -> None:
        """Log a point-in-time event (`POINT_IN_TIME`)."""
        self._log(constants.POINT_IN_TIME, key, value, metadata, namespace, time_ms, stack_offset, clear_line)


_lock = threading.RLock()
mllogger = MLLogger()


def get_mllogger() -> MLLogger:
    """The shared logger (the official module's singleton)."""
    return mllogger


def config(**kwargs: Any) -> None:
    """Configure the shared logger; same keywords and the same ValueErrors as the official `config`."""
    with _lock:
        logger = kwargs.pop("logger", None)
        if logger is not None:
            if not isinstance(logger, logging.Logger):
                raise ValueError("'logger' must be an instance of 'logging.Logger'.")
            if logger.name == constants.DEFAULT_LOGGER_NAME:
                raise ValueError(
                    "'logger' should not be the same as the default logger to avoid unexpected "
                    "behavior. Consider using a different name for the logger."
                )
            mllogger.logger = logger
            mllogger.streams = []
        log_file = kwargs.pop("filename", None)
        if log_file is not None:
            if not isinstance(log_file, str):
                raise ValueError("'filename' must be a string.")
            if mllogger.logger is not None:
                handler = logging.FileHandler(log_file)
                handler.setLevel(logging.INFO)
                mllogger.logger.addHandler(handler)
            else:
                mllogger.add_file(log_file)
        checks = (
            ("default_namespace", str, "a string"),
            ("default_stack_offset", int, "an integer"),
            ("default_clear_line", bool, "a boolean value"),
            ("root_dir", str, "a string"),
        )
        for name, typ, what in checks:
            value = kwargs.pop(name, None)
            if value is not None:
                if not isinstance(value, typ):
                    raise ValueError(f"'{name}' must be {what}.")
                setattr(mllogger, name, value)
