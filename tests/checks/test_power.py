"""Power results: the metric read from spl.txt, the files a power result needs, the rules' inferred-power
rule and the audit exemption's 10 % guidance, and the summary's power row; spl.txt is hostile input."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest
from checks_corpus import UT_EDGE, build_valid_tree
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.checks.power import AuditFigures, audit_exemption, power_metric, read_spl
from proctor.checks.submission import check_submission
from proctor.checks.summarize import COLUMNS, records
from proctor.errors import LogFormatError
from proctor.rules.inference import Category
from proctor.rules.power import AUDIT_EXEMPTION, INFERRED_POWER, POWER_FILES

FMT = "%m-%d-%Y %H:%M:%S.%f"
RESNET = Path("closed/UntetherAI/results") / UT_EDGE / "resnet50"
# power_begin / power_end / result_query_count of the corpus' UntetherAI SingleStream run
SS_BEGIN, SS_END, SS_QUERIES = (
    dt.datetime(2024, 7, 8, 12, 54, 5, 268000),
    dt.datetime(2024, 7, 8, 13, 4, 5, 268000),
    4792206,
)


def _spl(begin: dt.datetime, seconds: int, watts: float) -> str:
    lines = [
        f"Time,{(begin + dt.timedelta(seconds=s)).strftime(FMT)[:-3]},Watts,{watts:.6f},Volts,230.0,Amps,1.0,PF,0.99,Mark,run"
        for s in range(-5, seconds + 5)
    ]
    return "\n".join(["Notice,ranging...", *lines]) + "\n"


def _add_power(scendir: Path, watts: float = 100.0) -> None:
    perf = scendir / "performance"
    (perf / "power").mkdir()
    for name in POWER_FILES:
        (perf / "power" / name).write_text("{}\n")
    shutil.copytree(perf / "run_1", perf / "ranging")
    for run in ("run_1", "ranging"):
        (perf / run / "spl.txt").write_text(_spl(SS_BEGIN, 600, watts))


@pytest.fixture
def power_tree(tmp_path: Path) -> Path:
    root = build_valid_tree(tmp_path)
    _add_power(root / RESNET / "singlestream")
    return root


def _power_findings(report) -> list:
    return [f for f in report.findings if f.rule.startswith(("power", "inferred_power"))]


def test_a_measured_result_has_its_metric_and_summary_row(power_tree: Path) -> None:
    report = check_submission(power_tree, "v4.1")
    assert report.valid, [f for f in report.findings if f.failed]
    row = next(r for r in report.results if r.scenario == "SingleStream")
    assert row.power is not None and row.power.average_watts == pytest.approx(100.0)
    # 100 W over the 600 s window: millijoules per query, and samples per joule
    assert row.power.metric == pytest.approx(100.0 * 600 * 1000 / SS_QUERIES)
    assert row.power.units == "millijoules"
    assert row.power.efficiency == pytest.approx(1000 / row.power.metric)
    recs = [r for r in records(report.results) if r["scenario"] == "SingleStream"]
    assert [(r["metric"], r["units"], r["has_power"]) for r in recs] == [
        (row.metric, "ms", True),
        ("power", "millijoules", True),
    ]
    assert recs[1]["value"] == pytest.approx(row.power.metric) and "has_power" in COLUMNS
    others = [r for r in records(report.results) if r["scenario"] != "SingleStream"]
    assert len(others) == 2 and not any(r["has_power"] for r in others)


def test_missing_power_file_is_an_error(power_tree: Path) -> None:
    (power_tree / RESNET / "singlestream/performance/power/ptd_logs.txt").unlink()
    found = _power_findings(check_submission(power_tree, "v4.1"))
    assert [(f.rule, Path(f.path).name, f.failed) for f in found] == [("power_files", "ptd_logs.txt", True)]


def test_samples_outside_the_run_are_an_error(power_tree: Path) -> None:
    spl = power_tree / RESNET / "singlestream/performance/run_1/spl.txt"
    spl.write_text(_spl(SS_BEGIN - dt.timedelta(hours=2), 600, 100.0))
    found = _power_findings(check_submission(power_tree, "v4.1"))
    assert [(f.rule, f.failed) for f in found] == [("power_samples", True)]
    assert "does not cover the run" in found[0].message


def _infer_multistream(root: Path, watts: float) -> Path:
    """The MultiStream result replaced by a copy of the SingleStream run (an inferred result)."""
    ms = root / RESNET / "multistream" / "performance"
    shutil.rmtree(ms)
    shutil.copytree(root / RESNET / "singlestream" / "performance", ms)
    (ms / "run_1" / "spl.txt").write_text(_spl(SS_BEGIN, 600, watts))
    return ms


def test_inferred_result_uses_the_base_power(power_tree: Path) -> None:
    _infer_multistream(power_tree, 100.0)
    report = check_submission(power_tree, "v4.1")
    assert _power_findings(report) == []
    row = next(r for r in report.results if r.scenario == "MultiStream")
    assert row.inferred_from == "SingleStream" and row.power is not None
    assert row.power.metric == pytest.approx(8 * 100.0 * 600 * 1000 / SS_QUERIES)


def test_inferred_result_with_other_power_is_an_error(power_tree: Path) -> None:
    _infer_multistream(power_tree, 80.0)
    found = _power_findings(check_submission(power_tree, "v4.1"))
    assert [(f.rule, f.failed, f.source) for f in found] == [("inferred_power", True, INFERRED_POWER)]
    assert (found[0].value, found[0].expected) == (pytest.approx(80.0), pytest.approx(100.0))


def test_power_metric_formulas() -> None:
    assert power_metric(Category.OFFLINE, Category.OFFLINE, 200.0, 600.0, 1, 1000.0) == (200.0, 5.0)
    assert power_metric(Category.SERVER, Category.SERVER, 400.0, 600.0, 1, None) == (400.0, None)
    metric, eff = power_metric(Category.MULTI_STREAM, Category.MULTI_STREAM, 10.0, 100.0, 1000, None)
    assert (metric, eff) == (pytest.approx(1000.0), pytest.approx(8.0))
    with pytest.raises(ValueError, match="result_query_count"):
        power_metric(Category.SINGLE_STREAM, Category.SINGLE_STREAM, 10.0, 100.0, 0, None)


def test_audit_exemption_ten_percent() -> None:
    audited = AuditFigures(1000.0, 125.0, power_efficiency=2.0)
    assert audit_exemption(AuditFigures(1090.0, 136.0, 2.19), audited) == []
    assert audit_exemption(AuditFigures(1100.0, 137.5, 1.8), audited) == []  # exactly 10 %: not more
    why = audit_exemption(AuditFigures(1000.0, 125.0, 2.3), audited)
    assert len(why) == 1 and why[0].startswith("power efficiency 2.3 is not within 10%")
    assert audit_exemption(AuditFigures(1000.0, 125.0, 2.0), AuditFigures(1000.0, 125.0)) == [
        "a new power measurement since the last audit"
    ]
    assert len(audit_exemption(AuditFigures(1200.0, 150.0), audited)) == 2  # no power: performance only
    assert "10%" in AUDIT_EXEMPTION


@settings(max_examples=150, deadline=None)
@given(
    st.binary(max_size=600)
    | st.lists(
        st.sampled_from(
            [
                b"Time,07-08-2024 12:54:06.000,Watts,100.0",
                b"Time,07-08-2024 12:54:06.000,Watts,nan",
                b"Time,,,",
                b"Time,99-99-9999 99:99:99.9,Watts,1",
                b"Time,07-08-2024 12:54:06.000,Watts,1e999",
                b"Time",
                b"Time,07-08-2024 12:54:06.000,Watts,-5",
                b"\xff\xfe",
                b"Time,07-08-2024 12:54:06.000,Watts," + b"9" * 500,
            ]
        ),
        max_size=20,
    ).map(b"\n".join)
)
def test_read_spl_never_raises_and_counts_only_samples(
    tmp_path_factory: pytest.TempPathFactory, data: bytes
) -> None:
    path = tmp_path_factory.mktemp("spl") / "spl.txt"
    path.write_bytes(data)
    try:
        window = read_spl(path, SS_BEGIN, SS_END, limit=4096)
    except LogFormatError as exc:  # as the official's `for line in open(spl)`: not UTF-8 stops it
        assert exc.line is not None and exc.file == str(path)
        with pytest.raises(UnicodeDecodeError):
            data[:4096].decode("utf-8")
        return
    assert window.count >= 0 and window.bad_lines >= 0
    avg = window.average
    assert avg is None or (avg > 0 and avg < float("inf"))


def test_read_spl_is_bounded(tmp_path: Path) -> None:
    path = tmp_path / "spl.txt"
    path.write_text(_spl(SS_BEGIN, 600, 50.0))
    assert read_spl(path, SS_BEGIN, SS_END, limit=200).truncated
    full = read_spl(path, SS_BEGIN, SS_END)  # strictly inside: the samples at begin and end are not counted
    assert not full.truncated and full.count == 599 and full.average == pytest.approx(50.0)


def test_summarize_command_prints_the_power_row(power_tree: Path) -> None:
    from typer.testing import CliRunner

    from proctor.cli import inference_checks  # noqa: F401
    from proctor.cli.apps import app

    res = CliRunner().invoke(app, ["summarize", str(power_tree), "--csv", "--round", "v4.1"])
    assert res.exit_code == 0, res.output
    rows = [line.split(",") for line in res.stdout.splitlines()]
    power = [r for r in rows if "power" in r]
    assert len(rows) == 5 and len(power) == 1 and "millijoules" in power[0]
    res = CliRunner().invoke(app, ["summarize", str(power_tree), "--round", "v4.1"], env={"COLUMNS": "200"})
    assert res.exit_code == 0 and "millijoules" in res.stdout
