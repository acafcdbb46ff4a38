"""How the engine's advice names an option: the caller's word for it, else the setting's own name.

The engine knows no command line. Its verdict and advice texts ("lower server_target_qps (now 40)")
name each option through `OptionNames`: where the caller labels an option (`EngineOptions.labels`;
the CLI: the flag a user types, cli/run_options.SETTING_FLAGS) the text names the label, with the
setting beside it ("lower LABEL (server_target_qps, now 40)"); where it does not (a library or
official-API caller) the text names the setting that caller sets (the TestSettings field, the
mlperf.conf key). Light on purpose (no imports beyond the standard library): sut_faults uses it.
"""

from __future__ import annotations

from collections.abc import Mapping

from proctor.typed_records import field, record

# the TestSettings field an option sets, per scenario (the one statement; resolve applies overrides by it)
SCENARIO_FIELDS: dict[str, dict[str, str]] = {
    "target_qps": {"Server": "server_target_qps", "Offline": "offline_expected_qps"},
    "expected_latency_ms": {
        "SingleStream": "single_stream_expected_latency_ns",
        "MultiStream": "multi_stream_expected_latency_ns",
    },
}


def scenario_field(option: str, scenario: str) -> str | None:
    """The TestSettings field `option` sets in `scenario` (None: it sets none there)."""
    return SCENARIO_FIELDS.get(option, {}).get(str(scenario))


@record(frozen=True, slots=True)
class OptionNames:
    """The caller's labels (option -> its word for it); an option without one is named by `own`,
    the setting a caller without labels sets."""

    labels: Mapping[str, str] = field(default_factory=dict)

    def labelled(self, option: str) -> bool:
        return bool(self.labels.get(option))

    def name(self, option: str, own: str) -> str:
        """The caller's label for `option`, else `own`."""
        return self.labels.get(option) or own

    def named(self, option: str, own: str, value: str = "", note: str = "") -> str:
        """`option` with a value and a note: `LABEL 12000 (offline_expected_qps, note)` where the caller
        labels it (the setting named beside the label), `offline_expected_qps 12000 (note)` where not.
        `value` is in the unit of what is named (the caller's option, else `own`)."""
        label = self.labels.get(option)
        head = " ".join(part for part in (label or own, value) if part)
        inside = ", ".join(part for part in (own if label else "", note) if part)
        return f"{head} ({inside})" if inside else head


NO_LABELS = OptionNames()

__all__ = ["NO_LABELS", "SCENARIO_FIELDS", "OptionNames", "scenario_field"]
