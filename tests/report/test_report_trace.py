"""The trace's proctor args in the report: latency from the schedule, issue lateness, TTFT, TPOT, tokens/s.

The report's numbers are recomputed from the trace's per-sample args and must equal what the
engine logged (the summary and the detail log), to the nanosecond.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import orjson
import pytest
from report_html import parse
from report_runs import make_llm_run, make_run

from proctor.loadgen.logs.reader import read_detail, read_summary
from proctor.loadgen.types import Scenario
from proctor.report import build_report, write_report
from proctor.report.data import read_run
from proctor.report.html import render

PROCTOR_ARGS = ("scheduled_ns", "first_token_ns", "n_tokens")


@pytest.fixture(scope="module")
def llm_run(tmp_path_factory: pytest.TempPathFactory):
    return make_llm_run(tmp_path_factory.mktemp("llm") / "llm")


def _events(path: Path) -> list[dict]:
    return [orjson.loads(line.rstrip(",")) for line in path.read_text().splitlines() if '"ph":"b"' in line]


def test_ttft_tpot_and_scheduled_latency_equal_the_summary(llm_run) -> None:
    d, out = llm_run
    summary = read_summary(d / "mlperf_log_summary.txt")["additional_stats"]
    log = read_detail(d / "mlperf_log_detail.txt").values
    p = parse(render(build_report([d])))
    sec = "run-0"
    assert p.value(sec, "trace_samples") == out.result.sample_count == log["result_query_count"]
    for pct in ("50", "90", "99", "99.9"):
        label = f"{float(pct):.2f}"
        assert p.value(sec, f"trace_ttft_p{pct}_ns") == summary[f"{label} percentile first token latency (ns)"]
        assert p.value(sec, f"trace_tpot_p{pct}_ns") == summary[f"{label} percentile time to output token (ns)"]
        # Server results count latency from the scheduled time: so does the trace's scheduled_ns
        assert p.value(sec, f"trace_sched_p{pct}_ns") == log[f"result_{label}_percentile_latency_ns"]
    assert p.value(sec, "trace_ttft_max_ns") == log["result_first_token_max_latency_ns"]
    assert p.value(sec, "trace_tpot_max_ns") == log["result_time_to_output_token_max"]
    assert p.value(sec, "trace_sched_max_ns") == log["result_max_latency_ns"]
    assert out.result.ttft.target == p.value(sec, "trace_ttft_p99_ns")
    for fig in ("scheduled_latency", "lateness_over_time", "ttft", "tpot", "tokens_over_time"):
        assert f"{sec}-{fig}" in p.ids, fig
    assert f"{sec}-token_latency" not in p.ids  # the percentile-only fallback is not needed
    html = render(build_report([d]))
    assert "holds no" not in html and "cannot be drawn" not in html


def test_lateness_and_token_args_equal_the_records(llm_run) -> None:
    d, out = llm_run
    rec = out.records
    s = read_run(d).samples
    assert s is not None and s.scheduled_ns is not None and s.n_tokens is not None and s.has_first is not None
    q = np.array([e["args"]["query_seq"] for e in _events(d / "mlperf_log_trace.json")])
    assert np.array_equal(s.lateness_ns(), rec.query_issued_ns[q] - rec.query_scheduled_ns[q])
    seq = np.array([e["args"]["sample_seq"] for e in _events(d / "mlperf_log_trace.json")])
    assert np.array_equal(s.n_tokens, rec.sample_n_tokens[seq]) and s.has_first.all()
    assert np.array_equal(s.first_token_ns, rec.sample_first_token_ns[seq] - rec.query_issued_ns[q])
    ttft = s.ttft_ns()
    assert ttft is not None
    assert np.array_equal(ttft, rec.sample_first_token_ns[seq] - rec.query_scheduled_ns[q])


def _strip_args(src: Path, dst: Path) -> None:
    """A trace as an official or older proctor LoadGen writes it: the official args only (and no samples file)."""
    dst.mkdir()
    for f in src.iterdir():
        if f.name.startswith("mlperf_log_") and f.suffix != ".bin":
            text = f.read_text()
            if f.name == "mlperf_log_trace.json":
                text = re.sub(r',"(?:' + "|".join(PROCTOR_ARGS) + r')":-?\d+', "", text)
            (dst / f.name).write_text(text)


def test_a_trace_without_proctor_args_says_what_is_missing(llm_run, tmp_path: Path) -> None:
    d, _ = llm_run
    old = tmp_path / "old"
    _strip_args(d, old)
    assert orjson.loads((old / "mlperf_log_trace.json").read_bytes())["traceEvents"][0]["args"]["complete_ns"] >= 0
    html = render(build_report([old]))
    p = parse(html)
    assert html.count("holds no scheduled time per sample") == 1
    assert html.count("holds no first-token time or token count per sample") == 1
    for fig in ("scheduled_latency", "lateness_over_time", "ttft", "tpot", "tokens_over_time"):
        assert f"run-0-{fig}" not in p.ids
    assert {"run-0-token_latency", "run-0-latency_cdf", "run-0-rate_over_time"} <= p.ids
    assert p.value("run-0", "trace_ttft_p99_ns") is None


def test_non_token_runs_have_scheduled_time_only(tmp_path: Path) -> None:
    server = make_run(tmp_path / "server", Scenario.SERVER, queries=100)
    ev = _events(server / "mlperf_log_trace.json")
    assert all(e["args"]["scheduled_ns"] <= 0 and "n_tokens" not in e["args"] for e in ev)
    ss = make_run(tmp_path / "ss", Scenario.SINGLE_STREAM, queries=50)
    assert all(e["args"]["scheduled_ns"] == 0 for e in _events(ss / "mlperf_log_trace.json"))
    p = parse(render(build_report([ss])))
    assert "run-0-scheduled_latency" not in p.ids and "run-0-lateness_over_time" not in p.ids
    assert "holds no" not in render(build_report([ss]))


def test_png_files_hold_the_new_figures(llm_run, tmp_path: Path) -> None:
    d, _ = llm_run
    files = write_report(build_report([d]), tmp_path / "r.html", tmp_path / "png")
    names = {f.name for f in files if f.suffix == ".png"}
    for fig in ("scheduled_latency", "lateness_over_time", "ttft", "tpot", "tokens_over_time"):
        assert f"run00_llm_{fig}.png" in names
