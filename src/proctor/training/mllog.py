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
from typing import Any, TextIO

from proctor.training import constants

LOG_PREFIX = ":::MLLOG "

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
        if value != value or value in (float("inf"), float("-inf")):
            return _encode_json(value)
        return float.__repr__(value)
    if value is None:
        return "null"
    if t is bool:
        return "true" if value else "false"
    return _slow_encode(value)


def encode_line(
    namespace: str, time_ms: Any, event_type: str, key: str, value: Any, metadata: dict[str, Any]
) -> str:
    """One `:::MLLOG` line, identical to the official `_encode_log` output."""
    meta = ", ".join([f"{_enc(k)}: {_enc(v)}" for k, v in metadata.items()])
    return (
        f'{LOG_PREFIX}{{"namespace": {_enc(namespace)}, "time_ms": {_enc(time_ms)}, '
        f'"event_type": "{event_type}", "key": {_enc(key)}, "value": {_enc(value)}, '
        f'"metadata": {{{meta}}}}}'
    )


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

    # --- output -------------------------------------------------------------------------------
    def add_file(self, filename: str) -> None:
        """Append lines to `filename` too (the official `config(filename=...)` FileHandler)."""
        self.streams.append(open(filename, "a", encoding="utf-8"))  # noqa: SIM115 - lives with the logger

    def close(self) -> None:
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
        log_metadata = {"file": short, "lineno": frame.f_lineno}
        if metadata:
            if not isinstance(metadata, dict):
                self._emit(logging.WARNING, "Metadata is not dictionary, ignored.", True)
            else:
                if "file" in metadata or "lineno" in metadata:
                    overlap = [k for k in log_metadata if k in metadata]
                    self._emit(logging.WARNING, "Metadata fields overridden: " + ", ".join(overlap), True)
                log_metadata.update(metadata)
        try:
            line = encode_line(namespace, time_ms, event_type, key, value, log_metadata)
        except (TypeError, ValueError):
            self._emit(
                logging.ERROR,
                f"Failed to encode: {[namespace, time_ms, event_type, key, value, log_metadata]}",
                True,
            )
            return
        if clear_line or self.logger is not None:
            self._emit(logging.INFO, line, clear_line)
            return
        line += "\n"
        with self._lock:
            for s in self.streams:
                s.write(line)
                s.flush()

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
