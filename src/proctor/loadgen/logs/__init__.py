"""Writers and readers of the four official LoadGen output files, of proctor's compact
per-sample file (`samples`: mlperf_log_samples.bin) and of the printed verdict beside them
(`verdict`: proctor_verdict.json, written by the run session once the logs are closed).

One reader of detail logs (`read_detail` -> `DetailLogData`) serves the engine's tests, the
submission checker and the official-engine adapter; the writer is `DetailLogWriter`.

The names load on first use (PEP 562): the checker imports only the reader, not the writers and
the results they format (numpy, scipy), which made `proctor check submission` start in seconds.
"""

from __future__ import annotations

import sys
import types

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from proctor.loadgen.logs.accuracy import AccuracyLog
    from proctor.loadgen.logs.detail import (
        DetailLogWriter,
        log_effective_settings,
        log_requested_settings,
        log_results,
    )
    from proctor.loadgen.logs.reader import DetailLogData, Entry, read_detail, read_summary
    from proctor.loadgen.logs.recompute import Recomputed, recompute
    from proctor.loadgen.logs.samples import SampleColumns, read_samples, write_samples
    from proctor.loadgen.logs.summary import render_summary, write_summary
    from proctor.loadgen.logs.trace import TraceLog

_WHERE = {
    "AccuracyLog": "accuracy",
    "DetailLogData": "reader",
    "DetailLogWriter": "detail",
    "Entry": "reader",
    "Recomputed": "recompute",
    "SampleColumns": "samples",
    "TraceLog": "trace",
    "log_effective_settings": "detail",
    "log_requested_settings": "detail",
    "log_results": "detail",
    "read_detail": "reader",
    "read_summary": "reader",
    "read_samples": "samples",
    "recompute": "recompute",
    "render_summary": "summary",
    "write_samples": "samples",
    "write_summary": "summary",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    where = f"{__name__}.{module}"
    __import__(where)  # importlib's own module is not loaded on a check's path
    value = getattr(sys.modules[where], name)
    globals()[name] = value
    return value


class _Package(types.ModuleType):
    """Keeps an exported name (`recompute`, the function) from being replaced by the submodule of
    the same name when that submodule is first imported, as the eager imports did."""

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and _WHERE.get(name) == name:
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


__all__ = [
    "AccuracyLog",
    "DetailLogData",
    "DetailLogWriter",
    "Entry",
    "Recomputed",
    "SampleColumns",
    "TraceLog",
    "log_effective_settings",
    "log_requested_settings",
    "log_results",
    "read_detail",
    "read_samples",
    "read_summary",
    "recompute",
    "render_summary",
    "write_samples",
    "write_summary",
]
