"""proctor: run ML benchmarks by the MLPerf Inference and Training rules, measure, and check.

The public API, for use from Python (the CLI is a thin layer over the same calls)::

    import proctor
    settings = proctor.TestSettings(scenario=proctor.Scenario.OFFLINE, mode=proctor.TestMode.PERFORMANCE_ONLY)
    outcome = proctor.run_test(my_sut, my_qsl, settings, proctor.LogSettings())
    print(outcome.valid, outcome.result.samples_per_second)
    print(proctor.check_submission("my-submission").valid, proctor.check_log("result_0.txt").valid)

Names are imported on first use, so `import proctor` stays cheap for the command line; internal
modules stay where they are and may change.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# public name -> "module:attribute"
_EXPORTS: dict[str, str] = {
    "run_test": "proctor.loadgen.engine:run_test",
    "RunOutcome": "proctor.loadgen.engine:RunOutcome",
    "TestSettings": "proctor.loadgen.settings:TestSettings",
    "LogSettings": "proctor.loadgen.settings:LogSettings",
    "LogOutputSettings": "proctor.loadgen.settings:LogOutputSettings",
    "Scenario": "proctor.loadgen.types:Scenario",
    "TestMode": "proctor.loadgen.types:TestMode",
    "QuerySample": "proctor.loadgen.types:QuerySample",
    "QuerySampleResponse": "proctor.loadgen.types:QuerySampleResponse",
    "QuerySampleLibrary": "proctor.loadgen.types:QuerySampleLibrary",
    "query_samples_complete": "proctor.loadgen.completion:query_samples_complete",
    "first_token_complete": "proctor.loadgen.completion:first_token_complete",
    "complete_arrays": "proctor.loadgen.completion:complete_arrays",
    "Finding": "proctor.findings:Finding",
    "Severity": "proctor.findings:Severity",
    "check_submission": "proctor.checks.submission:check_submission",
    "check_log": "proctor.training.compliance:check_file",
    "ProctorError": "proctor.errors:ProctorError",
    "ConfigError": "proctor.errors:ConfigError",
    "LogFormatError": "proctor.errors:LogFormatError",
    "RunError": "proctor.errors:RunError",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    target = _EXPORTS.get(name)
    if target is None:
        raise AttributeError(f"module 'proctor' has no attribute {name!r}")
    module, _, attr = target.partition(":")
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
