"""`proctor run` through typer's CliRunner: exit codes, verdicts, files, settings plumbing."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import proctor.app.session as run_cli
from proctor.cli.apps import app
from proctor.loadgen.logs.reader import read_detail
from proctor.loadgen.types import Scenario, TestMode
from proctor.suts import registry

runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, ["run", *args], catch_exceptions=False)


def test_valid_offline_run_exits_0_and_writes_the_four_logs(tmp_path):
    out = tmp_path / "logs"
    result = invoke(
        "--scenario",
        "Offline",
        "--sut",
        "synthetic:service_us=0,workers=0,batch=4096",
        "--duration-ms",
        "0",
        "--min-queries",
        "2000",
        "--output",
        str(out),
        "--quiet",
    )
    assert result.exit_code == 0, result.output
    assert "VALID for these settings; not a submission run: min_duration 0 s < 600 s" in result.output
    assert "samples per second =" in result.output
    assert sorted(p.name for p in out.iterdir()) == [
        "mlperf_log_accuracy.json",
        "mlperf_log_detail.txt",
        "mlperf_log_samples.bin",  # issue 23: the compact per-sample file; the trace only with --trace
        "mlperf_log_summary.txt",
        "proctor_verdict.json",  # issue 32: the printed verdict, beside the closed logs
        "report.html",  # issue 15: the report next to the logs
    ]
    detail = read_detail(out / "mlperf_log_detail.txt")
    assert detail.require("effective_samples_per_query") == 2000
    assert detail.require("qsl_reported_total_count") == 1024


def test_invalid_server_run_exits_1_with_each_failed_check(tmp_path):
    result = invoke(
        "--scenario",
        "Server",
        "--sut",
        "synthetic:service_us=0,workers=1",
        "--duration-ms",
        "100",
        "--target-qps",
        "500",
        "--output",
        str(tmp_path),
        "--no-trace",
    )
    assert result.exit_code == 1, result.output
    assert "INVALID:" in result.output
    assert "early stopping" in result.output  # ~50 queries cannot satisfy p99 early stopping
    # issue 23: the verdict names the cause (too few queries, or too many over latency on a loaded
    # machine) and the command-line option that fixes it, not a conf key
    assert "early stopping: too few queries" in result.output or "early stopping: too many" in result.output
    assert "--target-qps" in result.output and "server_target_qps or" not in result.output
    assert "completed samples per second" in result.output  # the table
    assert "issue lateness" in result.output
    assert not (tmp_path / "mlperf_log_trace.json").exists()  # --no-trace: the hidden alias of the default


def test_default_run_requests_mlperf_conf_durations():
    settings, notes = run_cli.build_settings(Scenario.SINGLE_STREAM, None, "resnet50", None)
    assert settings.min_duration_ms == 600_000 and notes == ()  # mlperf.conf, no silent cut
    assert settings.mode == TestMode.PERFORMANCE_ONLY
    resolved = run_cli.build_settings(Scenario.SINGLE_STREAM, None, "resnet50", None, duration_ms=10_000)
    assert resolved.settings.min_duration_ms == 10_000 and resolved.rules.min_duration_ms == 600_000
    assert resolved.short_run == "min_duration 10 s < 600 s"
    assert resolved.settings.single_stream_expected_latency_ns == settings.single_stream_expected_latency_ns


def test_overrides_map_to_the_scenario_fields(tmp_path):
    s, _ = run_cli.build_settings(
        Scenario.SERVER,
        TestMode.ACCURACY_ONLY,
        "resnet50",
        None,
        target_qps=321.0,
        duration_ms=5,
        min_queries=7,
        max_duration_ms=9,
    )
    assert (s.server_target_qps, s.min_duration_ms, s.min_query_count, s.max_duration_ms) == (321.0, 5, 7, 9)
    assert s.mode == TestMode.ACCURACY_ONLY and s.server_target_latency_ns == 15_000_000  # resnet50
    s, _ = run_cli.build_settings(Scenario.MULTI_STREAM, None, "resnet50", None, expected_latency_ms=2.5)
    assert s.multi_stream_expected_latency_ns == 2_500_000
    conf = tmp_path / "user.conf"
    conf.write_text("*.Offline.target_qps = 4321\n*.Offline.min_duration = 1234\n")
    r = run_cli.build_settings(Scenario.OFFLINE, None, "resnet50", conf)
    assert r.settings.offline_expected_qps == 4321.0 and r.settings.min_duration_ms == 1234
    assert r.short_run.startswith("min_duration 1.234 s < 600 s")  # a user.conf can shorten it too


@pytest.mark.parametrize(
    "args",
    [
        ["--scenario", "SingleStream", "--target-qps", "10"],
        ["--scenario", "Offline", "--expected-latency-ms", "3"],
        ["--scenario", "Offline", "--sut", "nosuch"],
        ["--scenario", "Offline", "--sut", "synthetic:dist=weird"],
        ["--scenario", "Sideways"],
    ],
)
def test_usage_and_config_errors_exit_2(tmp_path, args):
    result = invoke(*args, "--output", str(tmp_path), "--quiet")
    assert result.exit_code == 2, result.output


def test_bad_user_conf_names_file_line_and_key(tmp_path):
    conf = tmp_path / "user.conf"
    conf.write_text("*.Offline.target_qps = fast\n")
    result = runner.invoke(
        app,
        [
            "run",
            "--scenario",
            "Offline",
            "--user-conf",
            str(conf),
            "--output",
            str(tmp_path / "o"),
            "--quiet",
        ],
    )
    assert result.exit_code == 2
    assert "user.conf:1" in result.output and "target_qps" in result.output


class Interrupting:
    name = "interrupting"

    def issue_query(self, samples):
        raise KeyboardInterrupt

    def flush_queries(self):
        pass


class Raising(Interrupting):
    def issue_query(self, samples):
        raise RuntimeError("device lost")


@pytest.mark.parametrize(
    ("sut", "code", "text"), [(Interrupting, 130, "interrupted"), (Raising, 1, "device lost")]
)
def test_interrupt_exits_130_and_sut_failure_exits_1(tmp_path, monkeypatch, sut, code, text):
    from proctor.suts.synthetic import InMemoryQSL

    monkeypatch.setattr(registry, "build", lambda spec, context=None: (sut(), InMemoryQSL(16, 16)))
    result = invoke("--scenario", "Offline", "--output", str(tmp_path), "--quiet", "--duration-ms", "0")
    assert result.exit_code == code
    assert text in result.output
    summary = (tmp_path / "mlperf_log_summary.txt").read_text()
    assert "Run incomplete" in summary


def test_accuracy_only_run_reports_its_outputs(tmp_path):
    result = invoke(
        "--scenario",
        "SingleStream",
        "--mode",
        "AccuracyOnly",
        "--sut",
        "synthetic:service_us=0,workers=0,total=40,perf=16",
        "--output",
        str(tmp_path),
        "--quiet",
    )
    assert result.exit_code == 0, result.output
    assert "DONE: accuracy run finished; 40 outputs" in result.output


def test_audit_config_is_applied_and_reported(tmp_path):
    audit = tmp_path / "audit.config"
    audit.write_text("*.Offline.min_query_count = 321\n")
    result = invoke(
        "--scenario",
        "Offline",
        "--sut",
        "synthetic:service_us=0,workers=0,batch=512",
        "--duration-ms",
        "0",
        "--audit-conf",
        str(audit),
        "--output",
        str(tmp_path / "o"),
        "--quiet",
    )
    assert f"note: {audit} was applied" in result.output
    assert read_detail(tmp_path / "o" / "mlperf_log_detail.txt").require("effective_samples_per_query") == 321
