"""The one result type of every checker (validity, compliance, RCP, seeds, package, submission).

A finding says what was checked, whether it passed, which file/line/key it is about, and what the
rules text says, so the CLI can print it and `--json` can serialize it without per-checker code.
"""

from __future__ import annotations

from enum import StrEnum

from proctor.typed_records import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Severity(StrEnum):
    ERROR = "error"      # the result is not valid / does not comply
    WARNING = "warning"  # worth fixing, does not change the verdict
    INFO = "info"


@record(frozen=True, slots=True)
class Finding:
    rule: str                      # short id of what was checked, e.g. "min_duration"
    message: str                   # plain language: what is wrong and what to do about it
    severity: Severity = Severity.ERROR
    path: str | None = None
    line: int | None = None
    key: str | None = None
    value: Any = None              # the value found
    expected: Any = None           # the constraint, in words or numbers
    source: str | None = None      # where in the rules text the rule comes from
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return self.severity is Severity.ERROR

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict  # not at import: a check's start-up never needs dataclasses

        return {k: v for k, v in asdict(self).items() if v is not None and v != {}}


def is_valid(findings: list[Finding]) -> bool:
    return not any(f.failed for f in findings)
