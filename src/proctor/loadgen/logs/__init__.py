"""Writers and readers of the four official LoadGen output files.

One reader of detail logs (`read_detail` -> `DetailLogData`) serves the engine's tests, the
submission checker and the official-engine adapter; the writer is `DetailLogWriter`.
"""

from proctor.loadgen.logs.accuracy import AccuracyLog
from proctor.loadgen.logs.detail import (
    DetailLogWriter,
    log_effective_settings,
    log_requested_settings,
    log_results,
)
from proctor.loadgen.logs.reader import DetailLogData, Entry, read_detail, read_summary
from proctor.loadgen.logs.recompute import Recomputed, recompute
from proctor.loadgen.logs.summary import render_summary, write_summary
from proctor.loadgen.logs.trace import TraceLog

__all__ = [
    "AccuracyLog",
    "DetailLogData",
    "DetailLogWriter",
    "Entry",
    "Recomputed",
    "TraceLog",
    "log_effective_settings",
    "log_requested_settings",
    "log_results",
    "read_detail",
    "read_summary",
    "recompute",
    "render_summary",
    "write_summary",
]
