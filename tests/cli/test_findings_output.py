"""One findings printer for every command (cli/output.py)."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from proctor.cli import output
from proctor.findings import Finding, Severity


def _printed(findings: list[Finding], indent: str = "  ") -> list[str]:
    buf = io.StringIO()
    output.print_findings(Console(file=buf, width=300, color_system=None), findings, indent)
    return buf.getvalue().splitlines()


def test_each_part_shows_only_when_the_finding_has_it():
    lines = _printed([
        Finding("min_duration", "ran 5 s; run at least 600 s", path="a/mlperf_log_summary.txt", line=7,
                key="result_validity", source="Inference rules §Scenarios"),
        Finding("seed", "seed repeated [in 2 runs]", Severity.WARNING),
        Finding("note", "checked 3 folders", Severity.INFO, path="results"),
    ])
    assert lines == [
        "  ERROR [min_duration] a/mlperf_log_summary.txt:7 [result_validity]: ran 5 s; run at least 600 s",
        "      rule: Inference rules §Scenarios",
        "  WARNING [seed]: seed repeated [in 2 runs]",
        "  INFO [note] results: checked 3 folders",
    ]
    assert _printed([Finding("x", "y")], indent="") == ["ERROR [x]: y"]


def test_no_other_cli_module_formats_findings():
    cli = Path(output.__file__).parent
    formatting = [p.name for p in sorted(cli.glob("*.py")) if p.name != "output.py"
                  and "severity.value.upper()" in p.read_text(encoding="utf-8")]
    assert formatting == []


def test_check_log_prints_findings_through_the_one_printer(cli, tmp_path):
    log = tmp_path / "result_0.txt"
    log.write_text(':::MLLOG {"key": "submission_benchmark", "value": "nope", "time_ms": 1, "namespace": "", '
                   '"event_type": "POINT_IN_TIME", "metadata": {"file": "x", "lineno": 1}}\n', encoding="utf-8")
    r = cli("training", "check-log", str(log))
    assert r.rc == 1, r.out + r.err
    assert "INVALID" in r.out
    assert any(line.startswith("  ERROR [") and "]: " in line for line in r.out.splitlines()), r.out
