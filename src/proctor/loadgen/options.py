"""How one run is run, beyond its TestSettings: one frozen record, built by the caller, read by the engine.

`EngineOptions` is the one statement of the engine's own options (the stuck limit, the Ctrl-C drain,
the accuracy-log caps, the short-run mark, proctor's detail records, the closed loop, the SLO
targets ...): `proctor.app.session` builds it for every run (`proctor run`, a sweep's points,
audits, the demo), `compat/` builds it for the official API, and `run_test` reads it. Light on
purpose (no numpy): the session imports it before any run.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from proctor.errors import ConfigError, SettingRangeError
from proctor.loadgen.scenarios import Scenario
from proctor.loadgen.settings import value_problem
from proctor.typed_records import field, record

if TYPE_CHECKING:
    from proctor.loadgen.results import SLOTargets
    from proctor.loadgen.settings import TestSettings

DRAIN_S = 0.5  # after Ctrl-C: how long the SUT may still complete what it was given (the whole stop: <= 1 s)
# Accuracy-log caps on payload bytes (the official has none; docs/deviations.md): a runaway payload
# must not fill the disk. Settable per run (EngineOptions.max_response_bytes / max_accuracy_log_bytes).
MAX_RESPONSE_BYTES = 1 << 30
MAX_ACCURACY_LOG_BYTES = 16 << 30

ConfigNote = tuple[str, tuple[str, int]]  # (message, (file, line)): an error found before the test
DetailRecord = tuple[str, Any]  # (key, value): one of proctor's records for the detail log


@record(frozen=True, slots=True)
class EngineOptions:
    """The engine's options for one run (its settings are the TestSettings beside it).

    `audit_config`: the audit.config applied at StartTest (None: none). `timeout_s` bounds how long
    a stuck SUT is waited for (None: max_duration + 1 s when set, else max(60 s, 2 x min duration)
    without any completion; in accuracy mode 60 s). After Ctrl-C the SUT gets `drain_s` to finish
    what it holds. Payloads over `max_response_bytes`, or past `max_accuracy_log_bytes` in all, are
    left out of the accuracy log with an error. `short_run`: why the run is not a submission run
    (resolve.short_run_reason), marked in both logs. `config_errors`: settings-file errors found
    before the test (the official FromConfig's `error_invalid_config`), logged first and counted.
    `early_stopping_extension`: a Server performance run follows the rules' early-stopping procedure
    past the official queries (False: stop where the official LoadGen stops). `concurrency` N > 0
    (SingleStream settings only): a closed loop keeping N queries in flight, never VALID. `slo`:
    per-request targets for proctor's SLO attainment (None: the benchmark's bounds). `detail_records`:
    the caller's own (key, value) records (e.g. the SUT's generation override), written into the
    detail log before it closes. `labels`: how the caller names each option in the engine's advice
    (option -> its word for it; the CLI: its flags); an option without one is named by the setting
    it sets (loadgen/option_names.py).
    """

    audit_config: str | os.PathLike[str] | None = "audit.config"
    timeout_s: float | None = None
    drain_s: float = DRAIN_S
    max_response_bytes: int = MAX_RESPONSE_BYTES
    max_accuracy_log_bytes: int = MAX_ACCURACY_LOG_BYTES
    short_run: str = ""
    config_errors: Sequence[ConfigNote] = ()
    early_stopping_extension: bool = True
    concurrency: int = 0
    slo: SLOTargets | None = None
    detail_records: Sequence[DetailRecord] = ()
    labels: Mapping[str, str] = field(default_factory=dict)

    def check(self, settings: TestSettings) -> None:
        """Refuse options no run can honour, naming the option (before anything is written)."""
        for key, value in (("drain_s", self.drain_s), ("timeout_s", self.timeout_s)):
            if value is not None and value_problem(key, value):  # settings.RUN_ARGUMENT_RANGES
                raise SettingRangeError(value_problem(key, value), key=key)
        for key, cap in (("max_response_bytes", self.max_response_bytes),
                         ("max_accuracy_log_bytes", self.max_accuracy_log_bytes)):
            if cap < 0:
                raise ConfigError(f"must be >= 0, not {cap}", key=key)
        n = self.concurrency
        if n < 0 or (n > 0 and settings.scenario != Scenario.SINGLE_STREAM):
            raise ConfigError(
                f"a closed loop with {n} queries in flight runs on SingleStream settings only "
                f"(got {settings.scenario})",
                key="concurrency",
            )


__all__ = ["DRAIN_S", "MAX_ACCURACY_LOG_BYTES", "MAX_RESPONSE_BYTES", "ConfigNote", "DetailRecord", "EngineOptions"]
