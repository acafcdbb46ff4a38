"""The submission checker on real public logs (v4.1) in the official layout, and on broken copies."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import orjson
import pytest
from checks_corpus import NV_SYSTEM, UT_DC, UT_EDGE, edit_detail, edit_summary, summary_metric
from typer.testing import CliRunner

from proctor.checks.submission import check_submission
from proctor.rules.rounds import SEEDS

NV = Path("closed/NVIDIA/results") / NV_SYSTEM / "llama2-70b-99.9" / "Server"
UT = Path("closed/UntetherAI/results")
PERF = Path("performance/run_1")


def _errors(report) -> list:
    return [f for f in report.findings if f.failed]


def _rules(report) -> set[str]:
    return {f.rule for f in _errors(report)}


def _rel(root: Path, f) -> str:
    return str(Path(f.path).relative_to(root))


def test_real_logs_pass_every_performance_rule(corpus_tree: Path) -> None:
    report = check_submission(corpus_tree, "v4.1")
    # the corpus holds performance logs and accuracy.txt only (complete_results adds the accuracy log,
    # measurements and audits), and no datacenter Offline runs:
    assert _rules(report) == {"accuracy_log", "required_scenario"}
    assert not any("performance" in f.path for f in _errors(report))
    missing = sorted(_rel(corpus_tree, f) for f in _errors(report) if f.rule == "required_scenario")
    assert missing == [
        f"closed/NVIDIA/results/{NV_SYSTEM}/llama2-70b-99.9",
        f"closed/UntetherAI/results/{UT_DC}/resnet50",
    ]
    acc = {Path(f.path).name for f in _errors(report) if f.rule == "accuracy_log"}
    assert acc == {"mlperf_log_detail.txt", "accuracy.txt"}
    assert not report.valid


def test_metrics_equal_what_loadgen_reported(corpus_tree: Path) -> None:
    rows = {(r.system, r.scenario): r for r in check_submission(corpus_tree, "v4.1").results}
    assert len(rows) == 5
    llm = rows[(NV_SYSTEM, "Server")]
    assert (llm.metric, llm.units) == ("completed tokens per second", "tokens/s")
    assert llm.value == pytest.approx(
        summary_metric(corpus_tree / NV / PERF / "mlperf_log_summary.txt", "Completed tokens per second"),
        rel=1e-5,
    )
    edge = corpus_tree / UT / UT_EDGE / "resnet50"
    ss, ms, off = rows[(UT_EDGE, "SingleStream")], rows[(UT_EDGE, "MultiStream")], rows[(UT_EDGE, "Offline")]
    assert (ss.metric, ss.units) == ("90th percentile early-stopping latency", "ms")
    assert ss.value * 1e6 == pytest.approx(
        summary_metric(
            edge / "singlestream" / PERF / "mlperf_log_summary.txt", "Early stopping 90th percentile estimate"
        )
    )
    assert ms.metric == "99th percentile early-stopping latency"
    assert ms.value * 1e6 == pytest.approx(
        summary_metric(
            edge / "multistream" / PERF / "mlperf_log_summary.txt", "Early stopping 99th percentile estimate"
        )
    )
    assert (off.units, off.value) == (
        "samples/s",
        summary_metric(edge / "offline" / PERF / "mlperf_log_summary.txt", "Samples per second"),
    )
    # v4.1's checker reads the Server metric from result_completed_samples_per_sec (RESULT_FIELD_NEW)
    srv = rows[(UT_DC, "Server")]
    assert (srv.metric, srv.units) == ("completed samples per second", "samples/s")
    assert srv.value == pytest.approx(
        summary_metric(
            corpus_tree / UT / UT_DC / "resnet50/server" / PERF / "mlperf_log_summary.txt",
            "Completed samples per second",
        ),
        rel=1e-5,
    )
    # the current round follows the rules' FAQ: scheduled samples per second
    srv = next(r for r in check_submission(corpus_tree).results if r.system == UT_DC)
    assert (srv.metric, srv.value) == ("scheduled samples per second", 140310)


def test_seeds_of_another_round_are_rejected(corpus_tree: Path) -> None:
    report = check_submission(corpus_tree)  # the current round's seeds
    seeds = [f for f in _errors(report) if f.rule == "seeds"]
    assert len(seeds) == 3 * 5
    assert {f.expected for f in seeds} == set(SEEDS["v6.1"])
    assert all(f.line is not None and f.path.endswith("mlperf_log_detail.txt") for f in seeds)


@pytest.mark.parametrize(
    ("where", "key", "value", "rule"),
    [
        (UT / UT_EDGE / "resnet50/singlestream", "effective_min_duration_ms", "599999", "min_duration"),
        (
            UT / UT_EDGE / "resnet50/singlestream",
            "effective_performance_sample_count",
            "1023",
            "performance_sample_count",
        ),
        (UT / UT_EDGE / "resnet50/multistream", "early_stopping_met", "false", "early_stopping"),
        (
            UT / UT_EDGE / "resnet50/offline",
            "effective_samples_per_query",
            "24575",
            "offline_samples_per_query",
        ),
        (UT / UT_DC / "resnet50/server", "result_99.00_percentile_latency_ns", "15000000", "latency_limit"),
        (UT / UT_DC / "resnet50/server", "effective_target_latency_ns", "16000000", "latency_limit"),
        (NV, "result_first_token_99.00_percentile_latency_ns", "2000000000", "latency_limit"),
        (NV, "result_time_per_output_token_99.00_percentile_ns", "200000000", "latency_limit"),
        (NV, "requested_use_token_latencies", "false", "token_latencies"),
        (UT / UT_EDGE / "resnet50/singlestream", "effective_schedule_rng_seed", "0", "seeds"),
    ],
)
def test_each_broken_rule_is_named_with_file_and_line(
    corpus_tree: Path, where: Path, key: str, value: str, rule: str
) -> None:
    log = corpus_tree / where / PERF / "mlperf_log_detail.txt"
    edit_detail(log, key, value)
    report = check_submission(corpus_tree, "v4.1")
    # (a target latency edited after the audits also breaks TEST01's comparison: compliance_reverify;
    # an edit of the detail log alone also contradicts its summary or its own numbers: test_rederive.py)
    other = ("accuracy_log", "required_scenario", "compliance_reverify", "summary_claim", "rederived_result")
    new = [f for f in _errors(report) if f.rule not in other]
    assert [(f.rule, f.key, f.path) for f in new] == [(rule, key, str(log))]
    assert new[0].line is not None and new[0].line > 1
    row = next(r for r in report.results if r.path == str(corpus_tree / where))
    assert row.valid is False


def test_ttft_limit_is_strict(corpus_tree: Path) -> None:
    log = corpus_tree / NV / PERF / "mlperf_log_detail.txt"
    edit_detail(log, "result_first_token_99.00_percentile_latency_ns", "1999999999")
    assert "latency_limit" not in _rules(check_submission(corpus_tree, "v4.1"))


def test_unreadable_line_and_loadgen_errors(corpus_tree: Path) -> None:
    log = corpus_tree / UT / UT_EDGE / "resnet50/offline" / PERF / "mlperf_log_detail.txt"
    lines = log.read_text().splitlines(keepends=True)
    lines[9] = ':::MLLOG {"key": "broken", "value": \n'
    log.write_text("".join(lines))
    bad = [f for f in _errors(check_submission(corpus_tree, "v4.1")) if f.rule == "detail_log_parse"]
    assert [(f.line, f.path) for f in bad] == [(10, str(log))]
    log2 = corpus_tree / UT / UT_EDGE / "resnet50/singlestream" / PERF / "mlperf_log_detail.txt"
    log2.write_text(
        log2.read_text()
        .replace(
            '"key": "generic_message", "value": "Starting performance mode"',
            '"key": "error_runtime", "value": "boom"',
        )
        .replace(
            '"is_error": false, "is_warning": false, "file": "/server',
            '"is_error": true, "is_warning": false, "file": "/server',
            1,
        )
    )
    errs = [f for f in _errors(check_submission(corpus_tree, "v4.1")) if f.rule == "loadgen_error"]
    assert len(errs) >= 1 and all(f.path == str(log2) for f in errs)


def test_system_description_fields(corpus_tree: Path) -> None:
    path = corpus_tree / "closed/UntetherAI/systems" / f"{UT_EDGE}.json"
    desc = orjson.loads(path.read_bytes())
    del desc["host_memory_capacity"]
    desc["division"] = "open"
    path.write_bytes(orjson.dumps(desc))
    found = [f for f in _errors(check_submission(corpus_tree, "v4.1")) if f.rule == "system_description"]
    assert sorted(f.key for f in found) == ["division", "host_memory_capacity"]
    (corpus_tree / "closed/NVIDIA/systems" / f"{NV_SYSTEM}.json").unlink()
    found = [f for f in _errors(check_submission(corpus_tree, "v4.1")) if f.rule == "system_description"]
    assert any(
        f.path.endswith(f"{NV_SYSTEM}.json") and "missing system description" in f.message for f in found
    )


def test_missing_edge_scenario_and_inferred_copies(corpus_tree: Path) -> None:
    edge = corpus_tree / UT / UT_EDGE / "resnet50"
    shutil.rmtree(edge / "multistream")
    report = check_submission(corpus_tree, "v4.1")
    req = [f for f in _errors(report) if f.rule == "required_scenario" and "h13_u2_preview/" in f.path + "/"]
    assert len(req) == 1 and "MultiStream" in req[0].message
    # the rules' inferred result: a copy of the SingleStream result named multistream
    shutil.copytree(edge / "singlestream", edge / "multistream")
    report = check_submission(corpus_tree, "v4.1")
    assert not [f for f in _errors(report) if f.rule == "required_scenario" and UT_EDGE + "/" in f.path + "/"]
    row = next(r for r in report.results if r.system == UT_EDGE and r.scenario == "MultiStream")
    assert row.inferred_from == "SingleStream" and row.units == "ms"
    # 8 x the SingleStream run's 99th percentile early-stopping estimate (125569 ns; its raw p99 is 125469)
    assert row.value == pytest.approx(8 * 125569 / 1e6)
    # a datacenter system may not infer: a SingleStream log under Offline is a mismatch
    dc = corpus_tree / UT / UT_DC / "resnet50"
    shutil.copytree(edge / "singlestream", dc / "Offline")
    report = check_submission(corpus_tree, "v4.1")
    assert [f.rule for f in _errors(report) if UT_DC + "/resnet50/Offline" in f.path] == [
        "scenario_mismatch",
        "accuracy_log",  # the copy's accuracy folder has no accuracy.txt, no mlperf_log_detail.txt
        "accuracy_log",
        "compliance_missing",  # nor audits (v4.1: TEST01, TEST04, TEST05) or measurements under the Offline name
        "compliance_missing",
        "compliance_missing",
        "measurements",
        "measurements",
        "measurements",
    ]


def test_accuracy_below_target(corpus_tree: Path) -> None:
    acc = corpus_tree / UT / UT_EDGE / "resnet50/offline/accuracy/accuracy.txt"
    acc.write_text("accuracy=75.6953%, good=37847, total=50000\n")
    found = [f for f in _errors(check_submission(corpus_tree, "v4.1")) if f.rule == "accuracy_target"]
    assert [(f.path, f.value) for f in found] == [(str(acc), "75.695")]


def test_open_division_relaxations(corpus_tree: Path) -> None:
    (corpus_tree / "closed").rename(corpus_tree / "open")
    for j in (corpus_tree / "open").glob("*/systems/*.json"):
        desc = orjson.loads(j.read_bytes())
        desc["division"] = "open"
        j.write_bytes(orjson.dumps(desc))
    acc = corpus_tree / "open/UntetherAI/results" / UT_EDGE / "resnet50/offline/accuracy/accuracy.txt"
    acc.write_text(re.sub(r"accuracy=[\d.]+%", "accuracy=50.000%", acc.read_text()))
    log = (
        corpus_tree
        / "open/NVIDIA/results"
        / NV_SYSTEM
        / "llama2-70b-99.9/Server"
        / PERF
        / "mlperf_log_detail.txt"
    )
    # a run judged by its own looser TTFT bound (10 s), its p99 past the rules' 2 s: both files say so
    summary = log.with_name("mlperf_log_summary.txt")
    for key, label, value in (
        ("requested_server_ttft_latency", "ttft_latency (ns)", "10000000000"),
        ("result_first_token_99.00_percentile_latency_ns", "99.00 percentile first token latency (ns)", "9000000000"),
        ("result_first_token_99.90_percentile_latency_ns", "99.90 percentile first token latency (ns)", "9100000000"),
        ("result_first_token_max_latency_ns", "Max First Token latency (ns)", "9200000000"),
    ):
        edit_detail(log, key, value)
        edit_summary(summary, label, value)
    # accuracy, latency and scenario constraints do not apply; logs are still required
    assert _rules(check_submission(corpus_tree, "v4.1")) == {"accuracy_log"}


def _app():
    from proctor.cli import inference_checks  # noqa: F401
    from proctor.cli.apps import app

    return app


def test_cli_json_and_exit_status(corpus_tree: Path) -> None:
    res = CliRunner().invoke(_app(), ["check", "submission", str(corpus_tree), "--round", "v4.1", "--json"])
    assert res.exit_code == 1
    data = orjson.loads(res.stdout)
    assert data["valid"] is False
    assert {"path", "rule", "message"} <= set(data["findings"][0])
    assert {"system", "benchmark", "scenario", "metric", "value", "valid"} <= set(data["results"][0])
    assert len(data["results"]) == 5
    res = CliRunner().invoke(_app(), ["check", "submission", str(corpus_tree / "nope")])
    assert res.exit_code == 2


def test_non_numeric_values_are_findings_not_crashes(corpus_tree: Path) -> None:
    log = corpus_tree / UT / UT_EDGE / "resnet50/singlestream" / PERF / "mlperf_log_detail.txt"
    edit_detail(log, "effective_min_duration_ms", '"ten minutes"')
    found = [f for f in check_submission(corpus_tree, "v4.1").findings if f.rule == "detail_log_value"]
    assert [(f.key, f.path) for f in found] == [("effective_min_duration_ms", str(log))]
    assert found[0].line is not None
