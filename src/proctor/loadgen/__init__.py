"""The load generator: settings -> schedule -> issue -> records -> results -> logs.

The public API, resolved lazily (PEP 562) so importing one submodule, such as `settings` from a
checker, does not pull in the engine and every stage behind it.
"""

from __future__ import annotations

import sys

_EXPORTS = {
    "run_test": "proctor.loadgen.engine",
    "RunOutcome": "proctor.loadgen.engine",
    "EngineOptions": "proctor.loadgen.options",
    "TestSettings": "proctor.loadgen.settings",
    "LogSettings": "proctor.loadgen.settings",
    "LogOutputSettings": "proctor.loadgen.settings",
    "Scenario": "proctor.loadgen.types",
    "TestMode": "proctor.loadgen.types",
    "QuerySample": "proctor.loadgen.types",
    "QuerySampleResponse": "proctor.loadgen.types",
    "query_samples_complete": "proctor.loadgen.completion",
    "first_token_complete": "proctor.loadgen.completion",
    "complete_arrays": "proctor.loadgen.completion",
}

__all__ = [
    "EngineOptions",
    "LogOutputSettings",
    "LogSettings",
    "QuerySample",
    "QuerySampleResponse",
    "RunOutcome",
    "Scenario",
    "TestMode",
    "TestSettings",
    "complete_arrays",
    "first_token_complete",
    "query_samples_complete",
    "run_test",
]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from proctor.loadgen.completion import complete_arrays, first_token_complete, query_samples_complete
    from proctor.loadgen.engine import RunOutcome, run_test
    from proctor.loadgen.options import EngineOptions
    from proctor.loadgen.settings import LogOutputSettings, LogSettings, TestSettings
    from proctor.loadgen.types import QuerySample, QuerySampleResponse, Scenario, TestMode


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'proctor.loadgen' has no attribute '{name}'")
    __import__(module)  # importlib's own module is not loaded on a check's path
    value = getattr(sys.modules[module], name)
    globals()[name] = value
    return value
