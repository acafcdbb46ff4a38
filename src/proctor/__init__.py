"""proctor: run ML benchmarks by the MLPerf Inference and Training rules, measure, and check.

The public API, for use from Python (the CLI is a thin layer over the same calls)::

    import proctor
    settings = proctor.TestSettings(scenario=proctor.Scenario.OFFLINE, mode=proctor.TestMode.PERFORMANCE_ONLY)
    outcome = proctor.run_test(my_sut, my_qsl, settings, proctor.LogSettings())
    print(outcome.valid, outcome.result.samples_per_second)
    print(proctor.check_submission("my-submission").valid, proctor.check_log("result_0.txt").valid)

Names are imported on first use, so `import proctor` stays cheap for the command line; internal
modules stay where they are and may change. The `TYPE_CHECKING` block states the same names for
type checkers, so `proctor.run_test(...)` is checked like a direct import (a test keeps the two
lists equal). Nothing inside the package imports this module: it imports the defining module.
"""

from __future__ import annotations

from proctor.version import __version__

# `typing` is not imported at run time: the command line tunes the cyclic collector for its start-up
# (cli/entry.py) after this module, and typing's import is the largest part of that start-up.
# Type checkers read this constant as True (the `TYPE_CHECKING = False` idiom).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from proctor.checks.submission import check_submission
    from proctor.errors import ConfigError, LogFormatError, ProctorError, RunError
    from proctor.findings import Finding, Severity
    from proctor.loadgen.completion import complete_arrays, first_token_complete, query_samples_complete
    from proctor.loadgen.engine import RunOutcome, run_test
    from proctor.loadgen.options import EngineOptions
    from proctor.loadgen.qsl import SimpleQSL
    from proctor.loadgen.settings import LogOutputSettings, LogSettings, TestSettings
    from proctor.loadgen.types import (
        QuerySample,
        QuerySampleLibrary,
        QuerySampleResponse,
        Scenario,
        SystemUnderTest,
        TestMode,
    )
    from proctor.training.compliance import check_file as check_log

# public name -> "module:attribute"
_EXPORTS: dict[str, str] = {
    "run_test": "proctor.loadgen.engine:run_test",
    "RunOutcome": "proctor.loadgen.engine:RunOutcome",
    "EngineOptions": "proctor.loadgen.options:EngineOptions",
    "TestSettings": "proctor.loadgen.settings:TestSettings",
    "LogSettings": "proctor.loadgen.settings:LogSettings",
    "LogOutputSettings": "proctor.loadgen.settings:LogOutputSettings",
    "Scenario": "proctor.loadgen.types:Scenario",
    "TestMode": "proctor.loadgen.types:TestMode",
    "QuerySample": "proctor.loadgen.types:QuerySample",
    "QuerySampleResponse": "proctor.loadgen.types:QuerySampleResponse",
    "QuerySampleLibrary": "proctor.loadgen.types:QuerySampleLibrary",
    "SystemUnderTest": "proctor.loadgen.types:SystemUnderTest",
    "SimpleQSL": "proctor.loadgen.qsl:SimpleQSL",
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

# stated, not computed, so type checkers and linters see the re-exports (a test keeps it equal to _EXPORTS)
__all__ = [
    "__version__",
    "run_test",
    "RunOutcome",
    "EngineOptions",
    "TestSettings",
    "LogSettings",
    "LogOutputSettings",
    "Scenario",
    "TestMode",
    "QuerySample",
    "QuerySampleResponse",
    "QuerySampleLibrary",
    "SystemUnderTest",
    "SimpleQSL",
    "query_samples_complete",
    "first_token_complete",
    "complete_arrays",
    "Finding",
    "Severity",
    "check_submission",
    "check_log",
    "ProctorError",
    "ConfigError",
    "LogFormatError",
    "RunError",
]


if not TYPE_CHECKING:  # hidden from type checkers: a module __getattr__ would make every name Any

    def __getattr__(name: str) -> Any:
        target = _EXPORTS.get(name)
        if target is None:
            raise AttributeError(f"module 'proctor' has no attribute {name!r}")
        module, _, attr = target.partition(":")
        import importlib

        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    return sorted(__all__)
