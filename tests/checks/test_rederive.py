"""The submission checker re-derives every result from its logs (issue 30 §2): a claim of the detail
log or of the summary that the logged numbers contradict is an ERROR naming the key (or label), both
values and the file and line; a verdict claimed without its numbers makes the result INVALID; the
results table reports what the numbers give, never the forged figure. Real logs stay clean.

The trees are the real v4.1 corpus logs (checks_corpus), forged in tmp_path.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from pathlib import Path

import pytest
from checks_corpus import (
    UT_DC,
    UT_EDGE,
    build_corpus_tree,
    build_valid_tree,
    edit_detail,
    edit_run,
    edit_summary,
)

from proctor.checks.rederive import RULE, SUMMARY_RULE, check_rederived
from proctor.checks.submission import check_submission
from proctor.checks.summarize import summarize, to_csv
from proctor.findings import Finding
from proctor.loadgen.logs import read_detail, read_summary
from proctor.loadgen.logs.numbers import percentile_label
from proctor.loadgen.logs.recompute import PERCENTILES, recompute
from proctor.loadgen.logs.summary_claims import compare_summary

EDGE = Path("closed/UntetherAI/results") / UT_EDGE / "resnet50"
PERF = Path("performance/run_1")
OFFLINE, SS = EDGE / "offline", EDGE / "singlestream"
SERVER = Path("closed/UntetherAI/results") / UT_DC / "resnet50" / "server"
NEW_RULES = (RULE, SUMMARY_RULE)


def _new(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.rule in NEW_RULES]


def _row(root: Path, where: Path):  # type: ignore[no-untyped-def]
    return next(r for r in summarize(root, "v4.1") if r.path == str(root / where))


def _power_shift(detail: Path, seconds: float) -> None:
    """power_end = power_begin + seconds (the official's window: start of issue to the last completion)."""
    begin = re.search(r'"key": "power_begin", "value": "([^"]+)"', detail.read_text())
    assert begin is not None
    t0 = dt.datetime.strptime(begin.group(1), "%m-%d-%Y %H:%M:%S.%f")
    end = t0 + dt.timedelta(seconds=seconds)
    edit_detail(detail, "power_end", '"' + end.strftime("%m-%d-%Y %H:%M:%S.") + f'{end.microsecond // 1000:03d}"')


def _short_offline(root: Path, seconds: float = 0.02) -> Path:
    """The corpus Offline run as a `seconds` run of the same query would have logged it (honestly:
    min duration not met, INVALID): every latency statistic scaled, the rate and the power window to
    match, both files."""
    detail = root / OFFLINE / PERF / "mlperf_log_detail.txt"
    log = read_detail(detail, keep_entries=False)
    scale = seconds * 1e9 / log.get("result_max_latency_ns")
    keys = ["result_min_latency_ns", "result_mean_latency_ns", "result_max_latency_ns"]
    keys += [f"result_{percentile_label(p)}_percentile_latency_ns" for p in PERCENTILES]
    for key in keys:
        edit_run(detail, key, str(round(log.get(key) * scale)))
    samples = log.get("result_query_count") * log.get("generated_samples_per_query")
    edit_run(detail, "result_samples_per_second", f"{samples * 1e9 / round(log.get('result_max_latency_ns') * scale):g}")
    _power_shift(detail, seconds)
    edit_run(detail, "result_min_duration_met", "false")
    edit_run(detail, "result_validity", '"INVALID"')
    summary = detail.with_name("mlperf_log_summary.txt")
    edit_summary(summary, "Result is", "INVALID")
    edit_summary(summary, "Min duration satisfied", "NO")
    return detail


@pytest.fixture
def valid_tree(tmp_path: Path) -> Path:
    return build_valid_tree(tmp_path)


# ---- real logs: no new finding ------------------------------------------------------------------


def test_the_real_logs_give_no_new_finding(tmp_path: Path) -> None:
    valid = build_valid_tree(tmp_path / "valid")
    report = check_submission(valid, "v4.1")
    assert report.valid and _new(report.findings) == []
    corpus = build_corpus_tree(tmp_path / "corpus")
    assert _new(check_submission(corpus, "v4.1").findings) == []
    for detail in sorted(corpus.glob("*/*/results/**/performance/run_1/mlperf_log_detail.txt")):
        out = check_rederived(read_detail(detail, keep_entries=False), detail.with_name("mlperf_log_summary.txt"))
        assert out.findings == [] and out.corrected == {}, detail


def test_an_honest_short_run_is_invalid_by_its_own_verdict_only(valid_tree: Path) -> None:
    detail = _short_offline(valid_tree)
    report = check_submission(valid_tree, "v4.1")
    assert _new(report.findings) == []
    assert [f.rule for f in report.findings if f.failed and f.path == str(detail)] == ["min_duration"]


# ---- the three cases --------------------------------------------------------------------


def test_a_002_s_offline_run_claiming_min_duration_met_is_invalid(valid_tree: Path) -> None:
    detail = _short_offline(valid_tree)
    edit_detail(detail, "result_min_duration_met", "true")
    edit_detail(detail, "result_validity", '"VALID"')
    report = check_submission(valid_tree, "v4.1")
    found = {f.key: f for f in _new(report.findings)}
    assert set(found) == {"result_min_duration_met", "result_validity"}
    duration = found["result_min_duration_met"]
    assert (duration.path, duration.value, duration.expected) == (str(detail), "true", "false")
    assert duration.line == read_detail(detail).line_of("result_min_duration_met")
    assert "the result is INVALID" in duration.message and "600 seconds" in (duration.source or "")
    assert found["result_validity"].expected == "INVALID" and "min duration" in found["result_validity"].message
    row = _row(valid_tree, OFFLINE)
    assert row.valid is False
    # the summary edited the same way: its verdict lines are findings too
    summary = detail.with_name("mlperf_log_summary.txt")
    edit_summary(summary, "Result is", "VALID")
    edit_summary(summary, "Min duration satisfied", "Yes")
    labels = {f.key for f in _new(check_submission(valid_tree, "v4.1").findings) if f.rule == SUMMARY_RULE}
    assert labels == {"Result is", "Min duration satisfied"}


def test_samples_per_second_raised_100x_is_not_the_reported_result(valid_tree: Path) -> None:
    detail = valid_tree / OFFLINE / PERF / "mlperf_log_detail.txt"
    honest = read_detail(detail).get("result_samples_per_second")
    edit_run(detail, "result_samples_per_second", f"{honest * 100:g}")  # both files, duration unchanged
    report = check_submission(valid_tree, "v4.1")
    f, said = _new(report.findings)  # the detail log's claim, and the summary's line that prints it
    assert (f.rule, f.key, f.path, f.value) == (RULE, "result_samples_per_second", str(detail), "1.40625e+07")
    assert f.expected == "140625.289" and f.line == read_detail(detail).line_of("result_samples_per_second")
    assert (said.rule, said.key, said.value, said.expected) == (SUMMARY_RULE, "Samples per second", "14062500", "140625.289")
    row = _row(valid_tree, OFFLINE)
    assert row.valid is False and row.value == pytest.approx(140625.289, rel=1e-8)
    assert "14062500" not in to_csv(summarize(valid_tree, "v4.1"))


def test_a_valid_summary_with_a_huge_metric_beside_an_honest_detail_log(valid_tree: Path) -> None:
    detail = _short_offline(valid_tree)  # INVALID, honestly logged
    summary = detail.with_name("mlperf_log_summary.txt")
    edit_summary(summary, "Result is", "VALID")
    edit_summary(summary, "Samples per second", "99999999")
    report = check_submission(valid_tree, "v4.1")
    found = {f.key: f for f in _new(report.findings)}
    assert set(found) == {"Result is", "Samples per second"}
    lines = read_summary(summary)["lines"]
    for label, f in found.items():
        assert (f.rule, f.path, f.line) == (SUMMARY_RULE, str(summary), lines[f"head/{label}"])
    assert found["Samples per second"].value == "99999999" and found["Result is"].value == "VALID"
    row = _row(valid_tree, OFFLINE)
    assert row.valid is False and row.value == pytest.approx(read_detail(detail).get("result_samples_per_second"))


# ---- every scenario's metric ----------------------------------------------------------------------


def test_a_server_rate_raised_100x_is_reported_as_unknown(tmp_path: Path) -> None:
    """v4.1 reports Server's completed samples per second: raised 100x in both files, the final
    completion time it implies falls before the final query was even scheduled."""
    root = build_corpus_tree(tmp_path)
    detail = root / SERVER / PERF / "mlperf_log_detail.txt"
    honest = read_detail(detail).get("result_completed_samples_per_sec")
    edit_run(detail, "result_completed_samples_per_sec", f"{honest * 100:g}")
    found = _new(check_submission(root, "v4.1").findings)
    assert [(f.rule, f.key) for f in found] == [
        (RULE, "result_completed_samples_per_sec"), (SUMMARY_RULE, "Completed samples per second")
    ]
    # between the last scheduled query (600 s of 84,185,748 queries) and the power window's end
    assert found[0].expected == "140239 to 140310"
    row = next(r for r in summarize(root, "v4.1") if r.path == str(root / SERVER))
    assert row.valid is False and row.value is None  # bounded, not known: never the forged number


def test_a_single_stream_estimate_lowered_is_reported_as_unknown(valid_tree: Path) -> None:
    detail = valid_tree / SS / PERF / "mlperf_log_detail.txt"
    lowest = read_detail(detail).get("result_min_latency_ns")
    edit_detail(detail, "early_stopping_latency_ss", str(lowest - 1))
    found = _new(check_submission(valid_tree, "v4.1").findings)
    assert {f.key for f in found} == {"early_stopping_latency_ss"}
    assert any("rank" in f.message for f in found) and any("text" in f.message for f in found)
    row = _row(valid_tree, SS)
    assert row.valid is False and row.value is None


def test_logs_of_mlcommons_endpoints_are_not_read_as_the_loadgens(valid_tree: Path) -> None:
    """LoadGen++ (mlcommons/endpoints) logs have their own keys and timing: no LoadGen derivation."""
    log = read_detail(valid_tree / OFFLINE / PERF / "mlperf_log_detail.txt", keep_entries=False)
    log.values["result_samples_per_second"] = 1e9
    assert check_rederived(log).findings
    log.values["endpoints_version"] = "0.1"
    assert check_rederived(log).findings == []


def test_a_summary_that_is_not_a_summary_is_a_finding(valid_tree: Path) -> None:
    summary = valid_tree / SS / PERF / "mlperf_log_summary.txt"
    summary.write_bytes(b"\xff\xfe not text")
    found = _new(check_submission(valid_tree, "v4.1").findings)
    assert [(f.rule, f.path) for f in found] == [(SUMMARY_RULE, str(summary))]


def test_the_cli_names_the_file_line_and_both_values(valid_tree: Path, cli) -> None:  # type: ignore[no-untyped-def]
    detail = valid_tree / OFFLINE / PERF / "mlperf_log_detail.txt"
    edit_run(detail, "result_samples_per_second", "14062500")
    res = cli("check", "submission", str(valid_tree), "--round", "v4.1")
    assert res.rc == 1
    line = read_detail(detail).line_of("result_samples_per_second")
    text = " ".join((res.out + res.err).split())
    assert f"{line}" in text and "1.40625e+07" in text and "140625.289" in text


# ---- published results ----------------------------------------------------------------------------


def test_published_v51_results_agree_with_themselves() -> None:
    """Every performance run_1 of a checkout of mlcommons/inference_results_v5.1 (PROCTOR_RESULTS_V51):
    no detail log and no summary claims what its numbers do not give."""
    root = os.environ.get("PROCTOR_RESULTS_V51")
    if not root:
        pytest.skip("PROCTOR_RESULTS_V51 is not set (a checkout of inference_results_v5.1)")
    checked = 0
    for detail in sorted(Path(root).glob("*/*/results/*/*/*/performance/run_1/mlperf_log_detail.txt")):
        log = read_detail(detail, keep_entries=False)
        rc = recompute(log)
        summary = detail.with_name("mlperf_log_summary.txt")
        found = list(rc.mismatches)
        if summary.is_file():
            found += compare_summary(read_summary(summary), log, rc, str(summary))
        assert [str(m) for m in found] == [], detail
        checked += 1
    assert checked > 100
