"""`proctor report`: the numbers in the HTML are the logs' numbers, for generated runs and public logs."""

from __future__ import annotations

import base64
from html import escape
from pathlib import Path

import numpy as np
import orjson
import pytest
from report_html import parse
from report_runs import CORPUS, make_run

from proctor.loadgen.logs.reader import read_detail
from proctor.loadgen.types import Scenario
from proctor.report import build_report, write_report
from proctor.report.html import render
from proctor.training.runs import read_run_set
from proctor.training.scoring import score_run_set

INFERENCE = CORPUS / "inference" / "v4.1"
TRAINING = CORPUS / "training"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _html(paths: list[Path]) -> str:
    return render(build_report(paths))


def _trace_samples(path: Path) -> list[tuple[float, int]]:
    out = []
    for line in path.read_text().splitlines():
        if '"ph":"b"' in line:
            ev = orjson.loads(line.rstrip(","))
            out.append((ev["ts"], ev["args"]["complete_ns"]))
    return out


@pytest.fixture(scope="module")
def server_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("server") / "run", Scenario.SERVER, 2000.0)


def test_generated_server_run_numbers_equal_the_logs(server_run: Path) -> None:
    p = parse(_html([server_run]))
    log = read_detail(server_run / "mlperf_log_detail.txt")
    sec = "run-0"
    for key, logkey in (
        ("p50_ns", "result_50.00_percentile_latency_ns"),
        ("p99_ns", "result_99.00_percentile_latency_ns"),
        ("p99.9_ns", "result_99.90_percentile_latency_ns"),
        ("min_ns", "result_min_latency_ns"),
        ("max_ns", "result_max_latency_ns"),
        ("mean_ns", "result_mean_latency_ns"),
        ("target_latency_ns", "effective_target_latency_ns"),
        ("target_qps", "effective_target_qps"),
        ("completed_sps", "result_completed_samples_per_sec"),
        ("query_count", "result_query_count"),
        ("lateness_p99_ns", "proctor_issue_lateness_p99_ns"),
    ):
        assert p.value(sec, key) == pytest.approx(float(log.values[logkey])), key
    assert p.verdicts[sec] == log.values["result_validity"]
    assert set(p.rules[sec]) == {"min duration", "min queries", "latency bound", "early stopping"}
    assert p.rules[sec]["min queries"] == str(bool(log.values["result_min_queries_met"])).lower()
    # per-sample data comes from the trace: every Sample event, none invented
    samples = _trace_samples(server_run / "mlperf_log_trace.json")
    assert p.value(sec, "trace_samples") == len(samples) == log.values["result_query_count"]
    # the trace times a sample from its actual issue, the results from its scheduled issue (Server)
    assert max(ns for _, ns in samples) <= p.value(sec, "max_ns")
    # ... and from its scheduled time (the trace's scheduled_ns): the logged percentiles exactly
    for key in ("p50", "p99", "max"):
        assert p.value(sec, f"trace_sched_{key}_ns") == p.value(sec, f"{key}_ns")
    assert "holds no scheduled time" not in _html([server_run])
    for fig in ("latency_histogram", "latency_cdf", "latency_over_time", "rate_over_time", "scheduled_latency",
                "lateness_over_time"):
        assert f"{sec}-{fig}" in p.ids
    assert all(base64.b64decode(src.split(",", 1)[1])[:8] == PNG_MAGIC for src in p.imgs)
    assert f"{sec}-settings" in p.ids and "token_latency" not in "".join(p.ids)


def test_single_stream_trace_latencies_are_the_logged_ones(tmp_path: Path) -> None:
    run = make_run(tmp_path / "ss", Scenario.SINGLE_STREAM, queries=100)
    log = read_detail(run / "mlperf_log_detail.txt")
    p = parse(_html([run]))
    lat = [ns for _, ns in _trace_samples(run / "mlperf_log_trace.json")]
    assert p.value("run-0", "trace_samples") == len(lat) == log.values["result_query_count"]
    assert max(lat) == p.value("run-0", "max_ns") == log.values["result_max_latency_ns"]
    assert min(lat) == p.value("run-0", "min_ns")
    assert p.value("run-0", "metric") == log.values["result_90.00_percentile_latency_ns"]
    assert p.value("run-0", "early_stopping_ns") is not None
    assert "run-0-rate_over_time" in p.ids and "latency bound" not in p.rules["run-0"]


def test_server_sweep_marks_the_highest_valid_rate(tmp_path: Path) -> None:
    rates = (1000.0, 2000.0, 4000.0)
    for q in rates:
        make_run(tmp_path / f"qps{q:g}", Scenario.SERVER, q, queries=200)
    p = parse(_html([tmp_path]))
    assert {"comparison", "comparison-table", "fig-comparison", "fig-sweep", "sweep-best"} <= p.ids
    assert sorted(x for x in p.column("comparison", "target_qps") if x is not None) == list(rates)
    valid = [
        q for q in rates
        if read_detail(tmp_path / f"qps{q:g}" / "mlperf_log_detail.txt").values["result_validity"] == "VALID"
    ]
    html = render(build_report([tmp_path]))
    best = html.split('id="sweep-best" data-value="', 1)[1].split('"', 1)[0]
    assert (float(best) if best else None) == (max(valid) if valid else None)


@pytest.mark.parametrize(
    "rel",
    [
        "UntetherAI/h13_u2_preview/resnet50/singlestream",
        "UntetherAI/h13_u2_preview/resnet50/multistream",
        "UntetherAI/h13_u2_preview/resnet50/offline",
        "UntetherAI/h13_u2_preview_dc/resnet50/server",
        "NVIDIA/B200-SXM-180GBx1_TRT/llama2-70b-99.9/Server",
    ],
)
def test_official_logs_numbers_equal_the_logs(rel: str) -> None:
    d = INFERENCE / rel
    if not d.is_dir():
        pytest.skip("shared/corpus is not available")
    log = read_detail(d / "mlperf_log_detail.txt")
    p = parse(_html([d]))
    sec = "run-0"
    assert p.verdicts[sec] == log.values["result_validity"]
    scenario = log.values["effective_scenario"]
    suffix = "_percentile_per_query_latency_ns" if scenario == "MultiStream" else "_percentile_latency_ns"
    for pct in ("50", "90", "99"):
        assert p.value(sec, f"p{pct}_ns") == float(log.values[f"result_{pct}.00{suffix}"])
    metric = {
        "Server": "result_completed_samples_per_sec",
        "Offline": "result_samples_per_second",
        "SingleStream": "result_90.00_percentile_latency_ns",
        "MultiStream": "result_99.00_percentile_per_query_latency_ns",
    }[scenario]
    assert p.value(sec, "metric") == float(log.values[metric])
    assert all(v == "true" for v in p.rules[sec].values()) and p.rules[sec]
    # official logs have no trace: the report says the distributions come from the percentiles
    html = _html([d])
    assert "per-sample latencies are not in these logs" in html and f"{sec}-latency_cdf" in p.ids
    assert f"{sec}-latency_over_time" not in p.ids
    if scenario in ("SingleStream", "MultiStream"):
        text = log.values["early_stopping_result"]
        est = float(text.split("percentile estimate: ")[1].split()[0]) if scenario == "SingleStream" else None
        if est is not None:
            assert p.value(sec, "early_stopping_ns") == est
    if "llama2" in rel:
        assert p.value(sec, "ttft_p99_ns") == float(log.values["result_first_token_99.00_percentile_latency_ns"])
        assert p.value(sec, "tpot_p99_ns") == float(log.values["result_time_per_output_token_99.00_percentile_ns"])
        assert p.value(sec, "ttft_bound_ns") == float(log.values["requested_server_ttft_latency"])
        assert p.value(sec, "tokens_per_second") == pytest.approx(
            float(log.values["result_completed_tokens_per_second"])
        )
        assert f"{sec}-token_latency" in p.ids


def test_summary_only_official_run(tmp_path: Path) -> None:
    src = CORPUS / "inference" / "loadgen-6.0.17-local" / "Server" / "mlperf_log_summary.txt"
    if not src.is_file():
        pytest.skip("shared/corpus is not available")
    (tmp_path / "mlperf_log_summary.txt").write_bytes(src.read_bytes())
    p = parse(_html([tmp_path]))
    assert p.verdicts["run-0"] == "VALID"
    assert p.value("run-0", "p99_ns") == float(
        next(line.split(":")[1] for line in src.read_text().splitlines() if line.startswith("99.00 percentile"))
    )
    assert p.value("run-0", "target_latency_ns") == 10_000_000


@pytest.mark.parametrize(
    "rel", ["v5.1/ASUSTeK/ESC_NB8_E11/rgat", "v4.0/ASUSTeK/ESC_N8A-E12/llama2_70b_lora"]
)
def test_training_report_equals_the_scoring(rel: str) -> None:
    d = TRAINING / rel
    if not d.is_dir():
        pytest.skip("shared/corpus is not available")
    rep = build_report([d])
    t = rep.trainings[0]
    p = parse(render(rep))
    sec = "training-0"
    rs = read_run_set(d, ruleset=t.ruleset)
    minutes = [r.minutes for r in rs.runs]
    assert p.column(sec, "minutes") == pytest.approx(minutes)
    sc = score_run_set(rs)
    assert p.value(sec, "score_minutes") == pytest.approx(sc.score_minutes)
    assert sorted(k for k, v in p.olympic[sec].items() if v == "dropped") == sorted(sc.dropped)
    assert len(sc.dropped) == 2  # the fastest and the slowest of 10
    assert p.value(sec, "submission_mean") == pytest.approx(t.rcp.submission_mean)
    assert p.value(sec, "min_allowed") == pytest.approx(t.rcp.min_allowed)
    assert t.rcp.min_allowed is not None and t.rcp.rcp_mean is not None and t.rcp.min_allowed < t.rcp.rcp_mean
    assert f"{sec}-target" in p.ids and t.target is not None
    for fig in ("time_to_train", "eval_curves", "rcp"):
        assert f"{sec}-{fig}" in p.ids
    assert all(len(c.x) > 0 for c in t.curves)


def test_png_files_are_the_report_figures(server_run: Path, tmp_path: Path) -> None:
    files = write_report(build_report([server_run]), tmp_path / "r.html", tmp_path / "png")
    pngs = sorted(f.name for f in files if f.suffix == ".png")
    assert pngs == sorted(
        f"run00_run_{n}.png" for n in ("latency_histogram", "latency_cdf", "latency_over_time", "rate_over_time",
                                       "scheduled_latency", "lateness_over_time")
    )
    html = (tmp_path / "r.html").read_text()
    for f in files[1:]:
        assert f.read_bytes()[:8] == PNG_MAGIC
        assert base64.b64encode(f.read_bytes()).decode() in html  # the same figure, inlined
    assert "http://" not in html.replace("http://www.w3.org", "") and "https://" not in html


def test_a_report_without_figures_has_the_same_numbers_and_says_why(server_run: Path, tmp_path: Path) -> None:
    """Issue 33 §4: a stopped run's report is written without figures (drawing them takes seconds
    the stop must not wait for); its numbers are the full report's, and the page says how to draw them."""
    from proctor.report import report_for_run
    from proctor.report.html import FIGURES_LEFT_OUT

    full = tmp_path / "full.html"
    write_report(build_report([server_run]), full)
    bare = tmp_path / "bare.html"
    write_report(build_report([server_run]), bare, figures=False)
    pf, pb = parse(full.read_text(encoding="utf-8")), parse(bare.read_text(encoding="utf-8"))
    sec = "run-0"
    assert f"{sec}-latency_histogram" in pf.ids and not any(i.startswith(f"{sec}-latency") for i in pb.ids)
    assert "data:image/png" in full.read_text(encoding="utf-8")
    assert "data:image/png" not in bare.read_text(encoding="utf-8")
    for key in ("p50_ns", "p99_ns", "max_ns", "completed_sps", "query_count"):
        assert pb.value(sec, key) == pf.value(sec, key), key
    assert pb.verdicts[sec] == pf.verdicts[sec]
    assert "page-note" in pb.ids and "page-note" not in pf.ids
    assert "proctor report" in FIGURES_LEFT_OUT
    import shutil

    run = shutil.copytree(server_run, tmp_path / "run")
    out = report_for_run(run, figures=False)  # the run's own report.html, as a stopped run writes it
    assert "data:image/png" not in out.read_text(encoding="utf-8") and "page-note" in parse(out.read_text()).ids


@pytest.mark.parametrize("scenario", [Scenario.SERVER, Scenario.OFFLINE])
def test_the_latency_cdf_draws_its_percentiles_on_its_own_curve(tmp_path: Path, scenario: Scenario) -> None:
    # issue 34: the curve was timed from the actual issue, the dots (the logged percentiles) from the
    # scheduled time: the logged p50 sat off the curve's median. One basis, named on the axis.
    from proctor.report.data import read_run
    from proctor.report.plots import latency_cdf_figure

    run = read_run(make_run(tmp_path / "run", scenario, queries=200))
    fig = latency_cdf_figure(run)
    assert fig is not None
    ax = fig.get_axes()[0]
    lines = {line.get_label(): line for line in ax.get_lines()}
    curve = next(v for k, v in lines.items() if k.endswith("(per sample)"))
    dots = lines["percentiles (the summary's order statistic)"]
    xs = np.asarray(curve.get_xdata(), dtype=np.float64)  # sorted, ms
    assert "scheduled time (the summary's basis)" in ax.get_xlabel()
    assert run.latency.percentiles and len(dots.get_xdata()) == len(run.latency.percentiles)
    for x, p in zip(dots.get_xdata(), dots.get_ydata(), strict=True):
        k = min(int(xs.size * p), xs.size - 1)  # the summary's order statistic of the curve's values
        assert x == xs[k] == run.latency.percentiles[p] / 1e6, p


def test_the_report_shows_slo_attainment_goodput_warm_up_and_expected_length(tmp_path: Path) -> None:
    # issue 34: the terminal and the summary's PROCTOR: lines said them, report.html did not
    from report_runs import make_llm_run

    from proctor.loadgen.logs.detail import WARMUP_KEY, append_record

    run, _ = make_llm_run(tmp_path / "llm", queries=200)
    detail = run / "mlperf_log_detail.txt"
    append_record(detail, WARMUP_KEY, "warm-up: 3 requests in 0.06 s (3 in flight), not timed <b>")
    log = read_detail(detail).values
    p = parse(_html([run]))
    html = _html([run])
    met = log["proctor_slo_met"]
    assert p.value("run-0", "slo_attainment") == met["all"] / log["proctor_slo_judged_samples"]
    assert p.value("run-0", "slo_attainment") == pytest.approx(log["proctor_slo_attainment"], rel=1e-12)
    assert p.value("run-0", "goodput_per_s") == pytest.approx(log["proctor_goodput_requests_per_sec"], rel=1e-12)
    assert p.value("run-0", "requests_per_s") == pytest.approx(log["proctor_requests_per_sec"], rel=1e-12)
    assert p.value("run-0", "slo_met_ttft") == met["ttft"] and p.value("run-0", "slo_met_tpot") == met["tpot"]
    targets = log["proctor_slo_targets_ns"]
    assert f"TTFT ≤ {targets['ttft'] / 1e6:g} ms, TPOT ≤ {targets['tpot'] / 1e6:g} ms" in html
    assert "warm-up: 3 requests in 0.06 s (3 in flight), not timed &lt;b&gt;" in html  # text, escaped
    assert str(log["proctor_expected_length"]).startswith("expected length:")
    assert escape(str(log["proctor_expected_length"])) in html
