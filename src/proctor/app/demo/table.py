"""The demo's closing table: one row per result or check, whether it is what a correct run of this
length gives, the verdict line computed from the rows, and the report files.

`Row` is the one way a row is made (keywords only); a row judged by a checker's findings comes from
`findings_row`, one judged by a single verdict from `verdict_row`, so validity, the reasons and the
rule ids are derived the same way everywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from proctor.app.demo.options import SUBMITTER
from proctor.findings import Finding
from proctor.typed_records import field, record

SHORT_RULE = "min_duration"  # the one rule a short demo run breaks
# A failed audit verification: expected only where the audit's own numbers said so (inference.py).
AUDIT_RULE = "compliance_failed"


@record(slots=True, kw_only=True)
class Row:
    """One line of the final table: a result, its validity, why, and the rules it broke."""

    part: str  # inference | training
    item: str  # what was measured or checked
    result: str  # the value, with its unit
    valid: bool
    why: str  # the findings that decide `valid`, or what passed
    value: float | None = None
    rules: tuple[str, ...] = ()  # ids of the failed rules
    expected_rules: tuple[str, ...] = ()  # what a correct run of this length must break

    @property
    def as_expected(self) -> bool:
        return self.valid == (not self.expected_rules) and self.rules == self.expected_rules


def rule_ids(findings: Sequence[Finding]) -> tuple[str, ...]:
    """The rules `findings` name, sorted, each once: a row's `rules`."""
    return tuple(sorted({f.rule for f in findings}))


def severity_text(f: Finding) -> str:
    return f"{f.severity.value} {f.rule}: {f.message}"


def findings_row(
    part: str,
    item: str,
    result: str,
    findings: Sequence[Finding],
    *,
    passed: str,
    text: Callable[[Finding], str] = severity_text,
) -> Row:
    """A check's row: valid when it found nothing, why names each finding (`passed` when none), the
    rules are theirs and the value their count."""
    return Row(
        part=part,
        item=item,
        result=result,
        valid=not findings,
        why="; ".join(text(f) for f in findings) or passed,
        value=float(len(findings)),
        rules=rule_ids(findings),
    )


def verdict_row(
    part: str, item: str, result: str, *, passed: bool, why: str, value: float | None, rule: str
) -> Row:
    """A row a single verdict decides: valid when `passed`, else it broke `rule`."""
    return Row(
        part=part, item=item, result=result, valid=passed, why=why, value=value, rules=() if passed else (rule,)
    )


@record(slots=True)
class DemoReport:
    output: Path
    mode: str
    rows: list[Row] = field(default_factory=list)
    timings_s: dict[str, float] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    sizing: dict[str, str] = field(default_factory=dict)  # scenario -> how its load was chosen
    # scenario -> rules its own measurements break besides the short duration (a loaded machine)
    measured_rules: dict[str, tuple[str, ...]] = field(default_factory=dict)
    audits: dict[str, str] = field(default_factory=dict)  # scenario -> each audit's verdict and numbers
    interrupted: bool = False
    check_commands: list[str] = field(default_factory=list)  # CLI lines that re-check the output
    not_submittable: str = ""  # why the inference tree is for development only (proctor's engine wrote it)

    @property
    def as_expected(self) -> bool:
        return not self.interrupted and bool(self.rows) and all(r.as_expected for r in self.rows)

    def to_dict(self) -> dict[str, Any]:
        return {
            "output": str(self.output),
            "mode": self.mode,
            "as_expected": self.as_expected,
            "interrupted": self.interrupted,
            "timings_s": self.timings_s,
            "sizing": self.sizing,
            "measured_rules": {k: list(v) for k, v in self.measured_rules.items()},
            "audits": self.audits,
            "check_commands": self.check_commands,
            "not_submittable": self.not_submittable,
            "rows": [{**asdict(r), "rules": list(r.rules), "as_expected": r.as_expected} for r in self.rows],
        }


class DemoInterrupted(KeyboardInterrupt):
    """Ctrl-C during the demo: what was measured is on disk under `output` (logs marked incomplete)."""

    def __init__(self, output: Path, report: DemoReport) -> None:
        super().__init__(f"demo interrupted; partial output in {output}")
        self.output, self.report = output, report


WIDE = 150  # columns from which the table holds each row's "why"; narrower, it goes under the table


def render_table(report: DemoReport, width: int | None = None) -> Any:
    """The closing table: one row per result with its validity (and, when `width` allows, why);
    values are never cut."""
    from proctor.app.render import table

    wide = width is None or width >= WIDE
    headers = ("part", "what", "result", "valid", *(("why",) if wide else ()))
    t = table(*headers, title=f"proctor demo ({report.mode})", labels=(1, 4) if wide else (1,))
    for k, r in enumerate(report.rows, 1):
        mark = "[green]valid[/green]" if r.valid else "[red]INVALID[/red]"
        if not r.as_expected:
            mark += " [yellow](unexpected)[/yellow]"
        if wide:
            t.add_row(r.part, r.item, r.result, mark, r.why)
        else:
            t.add_row(r.part, r.item, r.result, mark + (f" [{k}]" if r.why else ""))
    return t


def why_notes(report: DemoReport, width: int | None = None) -> list[tuple[int, str]]:
    """(row number, why) printed under a table too narrow to hold them."""
    if width is None or width >= WIDE:
        return []
    return [(k, r.why) for k, r in enumerate(report.rows, 1) if r.why]


def closing_lines(report: DemoReport) -> list[str]:
    """What follows the table: how each scenario was sized, then the verdict and the time."""
    lines = [f"sized: {scenario}: {note}" for scenario, note in report.sizing.items()]
    lines += [
        f"audits: {scenario}: {note} (expected: what the verification measured)"
        for scenario, note in report.audits.items()
    ]
    if report.not_submittable:
        lines.append(f"inference tree: {report.not_submittable}")
    lines.append(verdict_line(report))
    return lines


# Why a demo row may break a rule other than the short duration: each is a timing result measured by
# the row's own run (inference.measured_rules, the audits), named in the verdict line so it never
# says "only min_duration" over a table that shows more.
RULE_CAUSES = {
    "latency_limit": "latency over the bound as this run measured it (machine load)",
    "early_stopping": "early stopping not met as this run measured it (machine load)",
    "min_queries": "too few queries as this run measured them",
    AUDIT_RULE: "an audit's timed comparison failed as its verification measured it, noise between two "
    "timed runs; see audits above",
}


def verdict_line(report: DemoReport) -> str:
    """The demo's last line, computed from its rows: as expected or not, and every failed rule beyond
    the short runs' min_duration named with its row and cause; never "only min_duration" over a table
    with other failures."""
    total = f"total {report.timings_s.get('total', 0.0):.1f} s"
    if report.interrupted:
        return f"NOT as expected: interrupted; {total}"
    if not report.as_expected:
        off = [r for r in report.rows if not r.as_expected]
        what = ", ".join(
            f"{r.item} (broke {', '.join(r.rules) or 'nothing'}; expected {', '.join(r.expected_rules) or 'nothing'})"
            for r in off
        )
        return f"NOT as expected: {what or 'no rows'}; {total}"
    parts = ["as expected", total]
    short = [r for r in report.rows if SHORT_RULE in r.rules]
    if report.mode != "full":
        parts.append(
            f"short runs: min_duration fails by design ({len(short)} row(s))" if short else "short runs"
        )
    others = [(r, [rule for rule in r.rules if rule != SHORT_RULE]) for r in report.rows if not r.valid]
    others = [(r, rules) for r, rules in others if rules]
    if not others:
        if report.mode != "full":
            parts[-1] += "; nothing else failed"
        return "; ".join(parts)
    parts.append(
        f"{len(others)} row(s) also failed other rules, each as its own run measured: "
        + "; ".join(
            f"{r.item}: " + ", ".join(f"{rule} ({RULE_CAUSES.get(rule, 'see the table')})" for rule in rules)
            for r, rules in others
        )
    )
    return "; ".join(parts)


def output_paths(report: DemoReport) -> list[tuple[str, str]]:
    """(name, path) printed in full under the table."""
    out = report.output
    return [
        ("output", str(out)),
        ("report", str(out / "demo_report.json")),
        *([("html report", str(out / "report.html"))] if (out / "report.html").is_file() else []),
        ("inference submission", str(out / "inference" / "closed" / SUBMITTER)),
        ("training submission", str(out / "training" / SUBMITTER)),
        *(("check", cmd) for cmd in report.check_commands),
    ]


__all__ = [
    "AUDIT_RULE",
    "RULE_CAUSES",
    "SHORT_RULE",
    "DemoInterrupted",
    "DemoReport",
    "Row",
    "closing_lines",
    "findings_row",
    "output_paths",
    "render_table",
    "rule_ids",
    "verdict_line",
    "verdict_row",
    "why_notes",
]
