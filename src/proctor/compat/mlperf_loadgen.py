"""The official `mlperf_loadgen` Python API over proctor's engine, so harnesses switch in one line:

    import proctor.compat.mlperf_loadgen as lg

Names, argument orders, defaults and enum values follow the official binding
(bindings/python_api.cc; docs/deviations.md lists where proctor differs). Handles are integers, as there.
`QuerySampleResponse(id, data, size, n_tokens)` keeps the official meaning of `data`: the ADDRESS of
`size` bytes (e.g. `arr.ctypes.data`, `array.buffer_info()[0]`), read only if the sample's output is
logged, during the QuerySamplesComplete call, right after `response_cb` ran; the caller may reuse
the buffer once the call returns.

Differences, listed in docs/deviations.md: `StartTest` runs on the calling thread; conf-file errors
that the official silently ignores make `FromConfig` return -EINVAL (with the reason on stderr and,
like the official's own FromConfig errors, as `error_invalid_config` in the next test's detail log);
`last_outcome()` is an addition that hands back proctor's RunOutcome of the latest test;
`set_accuracy_log_caps()` sets the accuracy-log payload caps (the official has none);
`set_early_stopping_extension()` turns off the rules' Server early-stopping procedure past the
official queries (on by default; the official stops there). A response
that is not one, an id that is not an integer, a second completion, an unknown id or one left over
from an earlier test is an error in the detail log; the call returns and the test goes on.
"""

from __future__ import annotations

import ctypes
import errno
import itertools
import sys
from collections.abc import Sequence
from enum import IntEnum
from pathlib import Path
from typing import Any, cast

from proctor.errors import ConfigError, SettingRangeError
from proctor.loadgen import completion as _completion
from proctor.loadgen import settings as _settings
from proctor.loadgen import types as _types
from proctor.loadgen.options import MAX_ACCURACY_LOG_BYTES, MAX_RESPONSE_BYTES
from proctor.typed_records import record

__all__ = [
    "ConstructFastSUT",
    "ConstructQDL",
    "ConstructQSL",
    "ConstructSUT",
    "DestroyFastSUT",
    "DestroyQDL",
    "DestroyQSL",
    "DestroySUT",
    "FirstTokenComplete",
    "LogOutputSettings",
    "LogSettings",
    "LoggingMode",
    "QuerySample",
    "QuerySampleResponse",
    "QuerySamplesComplete",
    "StartTest",
    "StartTestWithLogSettings",
    "TestMode",
    "TestScenario",
    "TestSettings",
    "VectorQuerySample",
    "VectorQuerySampleResponse",
    "last_outcome",
    "reset_config_state",
    "set_accuracy_log_caps",
    "set_early_stopping_extension",
]


# --- enums (test_settings.h: same names, same values) -------------------------------------------


class _Enum(IntEnum):
    def __str__(self) -> str:  # the official (pybind11) prints "TestScenario.Server"
        return f"{type(self).__name__}.{self.name}"


class TestScenario(_Enum):
    SingleStream = 0
    MultiStream = 1
    Server = 2
    Offline = 3


class TestMode(_Enum):
    SubmissionRun = 0
    AccuracyOnly = 1
    PerformanceOnly = 2
    FindPeakPerformance = 3


class LoggingMode(_Enum):
    AsyncPoll = 0
    EndOfTestOnly = 1
    Synchronous = 2


# --- samples and responses -----------------------------------------------------------------------

QuerySample = _types.QuerySample  # .id, .index: what issue callbacks receive
VectorQuerySample = list
VectorQuerySampleResponse = list


class QuerySampleResponse:
    """`(id, data, size[, n_tokens])`; `data` is an address, `size` a byte count (official semantics)."""

    __slots__ = ("data", "id", "n_tokens", "size")

    def __init__(self, id: int = 0, data: int = 0, size: int = 0, n_tokens: int = 0) -> None:  # noqa: A002
        self.id = id
        self.data = data
        self.size = size
        self.n_tokens = n_tokens

    def __repr__(self) -> str:
        return f"QuerySampleResponse(id={self.id}, data={self.data:#x}, size={self.size}, n_tokens={self.n_tokens})"


class _Payload:
    """What the engine sees of a logged response: the harness's object, with `data` read from its
    address when the engine copies it (after `response_cb` ran, as the official orders it)."""

    __slots__ = ("original",)

    def __init__(self, r: QuerySampleResponse) -> None:
        self.original = r

    @property
    def id(self) -> int:
        return self.original.id

    @property
    def n_tokens(self) -> int:
        return self.original.n_tokens

    @property
    def nbytes(self) -> int:
        """The payload size, checked against the accuracy-log caps before anything is read."""
        r = self.original
        return int(r.size) if r.size > 0 and r.data else 0

    @property
    def data(self) -> bytes:
        r = self.original
        return ctypes.string_at(r.data, r.size) if r.size > 0 and r.data else b""


class _Responses:
    """A read-only view of the harness's list in which each item the engine touches for its data is
    copied from its address; ids and token counts are read straight from the harness's objects."""

    __slots__ = ("_items",)

    def __init__(self, items: list[QuerySampleResponse]) -> None:
        self._items = items

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Any:
        return iter(self._items)

    def __getitem__(self, k: int) -> _Payload:
        return _Payload(self._items[k])  # only items with an `id` get here (the tracker checked)


def _as_list(responses: Any, who: str) -> list[Any] | None:
    """The harness's responses as a list, or None after logging why they are not one."""
    if isinstance(responses, list):
        return responses
    try:
        if isinstance(responses, str | bytes):
            raise TypeError
        return list(responses)
    except TypeError:
        message = f"{who}: expected a list of QuerySampleResponse, got a {type(responses).__name__}"
        if not _completion.log_error(message):
            raise ValueError(message) from None
        return None


def QuerySamplesComplete(responses: list[QuerySampleResponse], response_cb: Any = None) -> None:  # noqa: N802
    """Report finished samples, from any thread; `response_cb(response)` runs before a logged copy."""
    items = _as_list(responses, "QuerySamplesComplete")
    if items is None:
        return
    sink = _completion.active()
    if sink is None:
        _completion.query_samples_complete(items)
        return
    sink.complete(cast(Sequence[Any], _Responses(items)), _cb_on_original(response_cb))


def FirstTokenComplete(responses: list[QuerySampleResponse], response_cb: Any = None) -> None:  # noqa: N802
    """Report the first token of samples (token-latency runs), from any thread."""
    items = _as_list(responses, "FirstTokenComplete")
    if items is None:
        return
    _completion.first_token_complete(
        [_Payload(r) if isinstance(r, QuerySampleResponse) else r for r in items], _cb_on_original(response_cb)
    )


def _cb_on_original(response_cb: Any) -> Any:
    """The harness's callback receives its own response object, as the official passes it."""
    if response_cb is None:
        return None
    return lambda payload: response_cb(payload.original)


# --- settings -------------------------------------------------------------------------------------

# The binding spells two TestSettings fields differently from the C++ struct (settings.SHORT_NAMES).
_FIELDS = tuple(_settings.binding_name(f) for f in _settings.TestSettings.field_names())
_DEFAULTS = _settings.TestSettings()


class TestSettings:
    """Every field of the official binding's TestSettings, same names and defaults; unknown names raise."""

    __slots__ = (*_FIELDS, "_mlperf_conf_applied")

    def __init__(self) -> None:
        for name in _FIELDS:
            value = getattr(_DEFAULTS, _settings.field_name(name))
            if name == "scenario":
                value = TestScenario[value.value]
            elif name == "mode":
                value = TestMode[value.value]
            setattr(self, name, value)
        self._mlperf_conf_applied = False

    def to_proctor(self) -> _settings.TestSettings:
        """proctor's TestSettings holding the same values; a scenario or mode that is none is a
        SettingRangeError (a ValueError) naming the field. Numbers are checked when the test starts
        (resolve.check_settings), each error naming its field."""
        values = {_settings.field_name(n): getattr(self, n) for n in _FIELDS}
        for name, enum, ours in (("scenario", TestScenario, _types.Scenario), ("mode", TestMode, _types.TestMode)):
            try:
                values[name] = ours(_enum_name(values[name], enum))
            except (ValueError, KeyError, TypeError, OverflowError):
                raise SettingRangeError(
                    f"must be a {enum.__name__} ({', '.join(m.name for m in enum)}), got {values[name]!r:.40}",
                    key=name,
                ) from None
        return _settings.TestSettings(**values)

    def _take(self, s: _settings.TestSettings) -> None:
        for name in _FIELDS:
            value = getattr(s, _settings.field_name(name))
            if name == "scenario":
                value = TestScenario[str(value)]
            elif name == "mode":
                value = TestMode[str(value)]
            setattr(self, name, value)

    def FromConfig(self, path: str, model: str, scenario: str, conf_type: int = 1) -> int:  # noqa: N802
        """Apply a conf file as the official does (0 mlperf.conf, 1 user.conf, 2 audit.config): 0 on
        success, a negative errno on failure. As the official: a user.conf call applies the built-in
        mlperf.conf first, and it stays applied when the user.conf cannot be opened or has a bad
        line (nothing of that file is applied); a user.conf call after the first in the process, a
        file it cannot open and a bad line are `error_invalid_config` errors in the next test's
        detail log (and its summary count). proctor also prints each to stderr."""
        from proctor.loadgen import conf
        from proctor.loadgen.logs import detail

        global _user_conf_calls
        current = self.to_proctor()
        if conf_type == 1:
            if _user_conf_calls:
                _config_error(
                    "Multiple conf files are used. This is not valid for official submission.",
                    detail.CONFIG_MULTIPLE_SOURCE,
                    path,
                )
            _user_conf_calls += 1
        try:
            if conf_type in (0, 1) and not self._mlperf_conf_applied:
                entries = conf.parse_conf(conf.shipped_mlperf_conf(), conf.ConfType.MLPERF)
                current = conf.apply_conf(current, entries, model, scenario, conf.ConfType.MLPERF)
                self._take(current)
                self._mlperf_conf_applied = True
            if conf_type in (1, 2):
                if not Path(path).is_file():
                    _config_error(f"can't open file {path}", detail.CONFIG_OPEN_SOURCE, path)
                    return -errno.ENOENT
                ctype = conf.ConfType.USER if conf_type == 1 else conf.ConfType.AUDIT
                current = conf.apply_conf(current, conf.parse_conf(Path(path), ctype), model, scenario, ctype)
            elif conf_type != 0:
                _config_error(f"unknown conf_type {conf_type}", ("proctor", 0), path)
                return -errno.EINVAL
        except (ConfigError, ValueError) as exc:  # nothing of this file applied; mlperf.conf stays
            _config_error(str(exc), ("proctor", 0), path)
            return -errno.EINVAL
        self._take(current)
        return 0


_user_conf_calls = 0  # user.conf FromConfig calls in this process (the official counts them per process)
_config_errors: list[tuple[str, tuple[str, int]]] = []  # logged at the start of the next test
MAX_PENDING_CONFIG_ERRORS = 100


def reset_config_state() -> None:
    """Forget earlier FromConfig calls and their unlogged errors (not in the official API, where
    they last as long as the process): for test isolation and long-lived harness processes."""
    global _user_conf_calls
    _user_conf_calls = 0
    _config_errors.clear()


def _config_error(message: str, source: tuple[str, int], path: str) -> None:
    """A FromConfig error: printed now (loud), logged in the next test's detail log (official)."""
    print(f"FromConfig: {path}: {message}", file=sys.stderr)
    if len(_config_errors) < MAX_PENDING_CONFIG_ERRORS:
        _config_errors.append((message, source))


def _enum_name(value: Any, enum: type[_Enum]) -> str:
    if isinstance(value, enum):
        return value.name
    if isinstance(value, int):
        return enum(value).name
    return str(value)


class LogOutputSettings:
    __slots__ = (
        "copy_detail_to_stdout",
        "copy_summary_to_stdout",
        "outdir",
        "prefix",
        "prefix_with_datetime",
        "suffix",
    )

    def __init__(self) -> None:
        d = _settings.LogOutputSettings()
        for name in self.__slots__:
            setattr(self, name, getattr(d, name))


class LogSettings:
    __slots__ = ("enable_trace", "log_mode", "log_mode_async_poll_interval_ms", "log_output")

    def __init__(self) -> None:
        d = _settings.LogSettings()
        self.log_output = LogOutputSettings()
        self.log_mode = LoggingMode.AsyncPoll
        self.log_mode_async_poll_interval_ms = d.log_mode_async_poll_interval_ms
        self.enable_trace = d.enable_trace

    def to_proctor(self) -> _settings.LogSettings:
        out = _settings.LogOutputSettings(
            **{n: getattr(self.log_output, n) for n in LogOutputSettings.__slots__}
        )
        return _settings.LogSettings(
            log_output=out,
            log_mode=_enum_name(self.log_mode, LoggingMode),
            log_mode_async_poll_interval_ms=self.log_mode_async_poll_interval_ms,
            enable_trace=self.enable_trace,
        )


# --- SUT, QSL, QDL handles ------------------------------------------------------------------------


class _PySUT:
    name = "PySUT"

    def __init__(self, issue_cb: Any, flush_cb: Any) -> None:
        self.issue_query, self.flush_queries = issue_cb, flush_cb


class _PyFastSUT:
    """Receives (ids, indices) as lists, as the official's fast SUT does."""

    name = "PyFastSUT"

    def __init__(self, issue_cb: Any, flush_cb: Any) -> None:
        self._cb, self.flush_queries = issue_cb, flush_cb

    def issue_query_arrays(self, ids: Any, indices: Any) -> None:
        self._cb(ids.tolist(), indices.tolist())

    def issue_query(self, samples: list[QuerySample]) -> None:
        self._cb([s.id for s in samples], [s.index for s in samples])


class _PyQDL(_PySUT):
    def __init__(self, issue_cb: Any, flush_cb: Any, name_cb: Any) -> None:
        super().__init__(issue_cb, flush_cb)
        self._name_cb = name_cb

    @property
    def name(self) -> str:  # type: ignore[override]
        return str(self._name_cb())


@record(slots=True)
class _PyQSL:
    total_sample_count: int
    performance_sample_count: int
    load_cb: Any
    unload_cb: Any
    name: str = "PyQSL"

    def load_samples(self, indices: list[int]) -> None:
        self.load_cb(indices)

    def unload_samples(self, indices: list[int]) -> None:
        self.unload_cb(indices)


_handles: dict[int, Any] = {}
_next_handle = itertools.count(0x1000, 0x10)
_last_outcome: Any = None
_extension = True  # Server: the rules' early-stopping procedure past the official queries
_caps: tuple[int, int] = (MAX_RESPONSE_BYTES, MAX_ACCURACY_LOG_BYTES)  # the engine's defaults


def _new(obj: Any) -> int:
    h = next(_next_handle)
    _handles[h] = obj
    return h


def _get(handle: int, kind: tuple[type, ...], what: str) -> Any:
    obj = _handles.get(handle)
    if not isinstance(obj, kind):
        raise ValueError(f"{handle!r} is not a live {what} handle (Construct* it first, do not Destroy* it)")
    return obj


def ConstructSUT(issue_cb: Any, flush_cb: Any) -> int:  # noqa: N802
    return _new(_PySUT(issue_cb, flush_cb))


def ConstructFastSUT(issue_cb: Any, flush_cb: Any) -> int:  # noqa: N802
    return _new(_PyFastSUT(issue_cb, flush_cb))


def ConstructQDL(issue_cb: Any, flush_cb: Any, name_cb: Any) -> int:  # noqa: N802
    return _new(_PyQDL(issue_cb, flush_cb, name_cb))


def ConstructQSL(total_sample_count: int, performance_sample_count: int, load_cb: Any, unload_cb: Any) -> int:  # noqa: N802
    return _new(_PyQSL(int(total_sample_count), int(performance_sample_count), load_cb, unload_cb))


def _destroy(handle: int) -> None:
    _handles.pop(handle, None)


DestroySUT = DestroyFastSUT = DestroyQDL = DestroyQSL = _destroy


def StartTest(
    sut: int, qsl: int, test_settings: TestSettings, audit_config_filename: str = "audit.config"
) -> None:  # noqa: N802
    """Run one test with the default log settings (logs in the current directory)."""
    StartTestWithLogSettings(sut, qsl, test_settings, LogSettings(), audit_config_filename)


def StartTestWithLogSettings(
    sut: int,
    qsl: int,
    test_settings: TestSettings,
    log_settings: LogSettings,  # noqa: N802
    audit_config_filename: str = "audit.config",
) -> None:
    global _last_outcome
    from proctor.loadgen.engine import run_test
    from proctor.loadgen.options import EngineOptions

    the_sut = _get(sut, (_PySUT, _PyFastSUT), "SUT")
    the_qsl = _get(qsl, (_PyQSL,), "QSL")
    pending = tuple(_config_errors)
    _config_errors.clear()
    options = EngineOptions(
        audit_config=audit_config_filename or None,
        max_response_bytes=_caps[0],
        max_accuracy_log_bytes=_caps[1],
        config_errors=pending,
        early_stopping_extension=_extension,
    )
    _last_outcome = run_test(the_sut, the_qsl, test_settings.to_proctor(), log_settings.to_proctor(), options)


def set_early_stopping_extension(on: bool) -> None:
    """Whether later Server StartTests follow the rules' early-stopping procedure past the official
    queries (default; loadgen.early_stopping_extension) or stop where the official LoadGen stops (not
    in the official API; docs/deviations.md)."""
    global _extension
    _extension = bool(on)


def set_accuracy_log_caps(max_response_bytes: int, max_accuracy_log_bytes: int) -> None:
    """Caps on the payload bytes later StartTests write to the accuracy log (not in the official
    API; docs/deviations.md): a larger response is left out with an error in the detail log."""
    global _caps
    if not (isinstance(max_response_bytes, int) and isinstance(max_accuracy_log_bytes, int)):
        raise ConfigError("caps must be integers", key="accuracy_log_caps")
    if max_response_bytes < 0 or max_accuracy_log_bytes < 0:
        raise ConfigError("caps must be >= 0", key="accuracy_log_caps")
    _caps = (max_response_bytes, max_accuracy_log_bytes)


def last_outcome() -> Any:
    """proctor's RunOutcome of the latest StartTest (not in the official API)."""
    return _last_outcome
