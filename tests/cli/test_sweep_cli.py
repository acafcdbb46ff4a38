"""`proctor sweep` as a user runs it (issue 24, section 2): subprocesses in a tmp_path, sweep.json
checked against its schema, each point's validity against its own logs, goodput on a synthetic SUT
of known capacity, and usage errors."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from proctor.app import sweep as sw
from proctor.loadgen.logs.reader import read_detail

SRC = Path(__file__).resolve().parents[2] / "src"
# 4 workers of 5 ms each: at most 800 samples per second; no rate above it meets a 15 ms bound
SUT = "synthetic:service_us=5000,workers=4"
CAPACITY = 800.0


def proctor(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]), COLUMNS="200")
    return subprocess.run(
        [sys.executable, "-m", "proctor", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=300
    )


NUMBER = (int, float)
PCTS = {"p50", "p90", "p99"}
POINT: dict[str, Any] = {
    "kind": str, "value": NUMBER, "scenario": str, "mlperf": bool, "valid": (bool, type(None)),
    "meets_limits": (bool, type(None)), "verdict": str, "requests_per_s": NUMBER,
    "tokens_per_s": (*NUMBER, type(None)), "latency_ms": dict, "ttft_ms": (dict, type(None)),
    "tpot_ms": (dict, type(None)), "samples": int, "errors": int, "duration_s": NUMBER, "wall_s": NUMBER,
    "logs": str, "reasons": list, "limits_ms": (dict, type(None)), "slo_attainment": (*NUMBER, type(None)),
    "goodput_per_s": (*NUMBER, type(None)), "slo_ms": (dict, type(None)),
}
DOC: dict[str, Any] = {
    "schema": str, "proctor": str, "kind": str, "scenario": str, "mlperf": bool, "note": str, "sut": str,
    "model": str, "duration_ms": (int, type(None)), "points": list, "goodput": (dict, type(None)),
}
GOODPUT: dict[str, Any] = {
    "found": bool, "highest_passing_qps": (*NUMBER, type(None)), "goodput_qps": (*NUMBER, type(None)),
    "achieved_requests_per_s": (*NUMBER, type(None)), "bracket": list, "tolerance": NUMBER,
    "tolerance_reached": bool, "stopped": str, "probes": list, "wall_s": NUMBER,
}
PROBE: dict[str, Any] = {"index": int, "stage": str, "rate": NUMBER, "passed": bool, "why": str, "wall_s": NUMBER}


def check(obj: dict[str, Any], schema: dict[str, Any], where: str) -> None:
    assert set(obj) == set(schema), f"{where}: keys {sorted(set(obj) ^ set(schema))}"
    for key, types in schema.items():
        assert isinstance(obj[key], types), f"{where}.{key}: {obj[key]!r}"
        assert not isinstance(obj[key], bool) or bool in (types if isinstance(types, tuple) else (types,)), key


def check_document(doc: dict[str, Any]) -> None:
    """sweep.json against its schema (keys and types, explicitly: jsonschema is not a dependency)."""
    check(doc, DOC, "sweep")
    assert doc["schema"] == sw.SCHEMA and doc["kind"] in ("rate", "concurrency")
    for i, point in enumerate(doc["points"]):
        check(point, POINT, f"points[{i}]")
        assert point["kind"] == doc["kind"]
        assert set(point["latency_ms"]) == PCTS
        assert all(isinstance(v, NUMBER) and v >= 0 for v in point["latency_ms"].values())
    if doc["goodput"] is not None:
        check(doc["goodput"], GOODPUT, "goodput")
        for i, probe in enumerate(doc["goodput"]["probes"]):
            check(probe, PROBE, f"goodput.probes[{i}]")


def summary_says(folder: Path) -> str:
    text = (folder / "mlperf_log_summary.txt").read_text()
    return "VALID" if "Result is : VALID" in text else "INVALID"


def test_a_rate_sweep_writes_one_table_one_json_and_each_points_logs(tmp_path):
    res = proctor("sweep", "--rates", "100,300,3000", "--sut", SUT, "--duration-ms", "600", "--no-trace",
                  "-o", "sw", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    out = tmp_path / "sw"
    doc = json.loads((out / "sweep.json").read_text())
    check_document(doc)
    assert [p["value"] for p in doc["points"]] == [100, 300, 3000]
    assert doc["mlperf"] is True and doc["goodput"] is None
    for point in doc["points"]:
        folder = out / point["logs"]
        assert folder.name == f"rate-{point['value']:g}"
        # a point's validity is its own run's: the summary in its folder says the same
        assert ("VALID" if point["valid"] else "INVALID") == summary_says(folder)
        assert point["samples"] > 0 and point["errors"] == 0
        assert point["limits_ms"] == {"latency": 15.0}  # resnet50 Server, mlperf.conf
    # 3000 QPS is far past what 4 x 5 ms workers serve: the bound is missed
    last = doc["points"][-1]
    assert last["valid"] is False and last["meets_limits"] is False
    assert last["latency_ms"]["p99"] > 15.0 and last["requests_per_s"] < 0.5 * 3000
    assert any("99th percentile latency" in r for r in last["reasons"])
    html = (out / "sweep.html").read_text()
    assert "data:image/png;base64," in html and html.count("<tr>") == 4
    assert "target QPS" in res.stdout and "requests/s" in res.stdout and "sweep.json:" in res.stdout
    # one number per figure (issue 34 §5): a point's requests/s is its run's "completed samples per
    # second", the verdict's metric, from the same result; the table, the page and the summary say it alike
    from proctor.report.sweep import figure_text

    for point in doc["points"]:
        folder = out / point["logs"]
        summary = (folder / "mlperf_log_summary.txt").read_text()
        claimed = next(line for line in summary.splitlines() if line.startswith("Completed samples per second"))
        shown = figure_text("rate", point["requests_per_s"])
        assert claimed.split(":")[1].strip() == shown.replace(",", "")
        row = next(line for line in res.stdout.splitlines() if line.strip("│ ").startswith(f"{point['value']:g} "))
        assert f" {shown} " in row, row
        assert f"<td>{shown}</td>" in html
        # the 15 ms bound is the per-request target too: attainment and goodput beside the verdict
        assert point["slo_ms"] == {"latency": 15.0} and 0 <= point["slo_attainment"] <= 1
        assert point["goodput_per_s"] == pytest.approx(point["requests_per_s"] * point["slo_attainment"], rel=1e-9)
    # the points as one table, the same figures as sweep.json
    import csv

    with open(out / "sweep.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [float(r["requests_per_s"]) for r in rows] == [p["requests_per_s"] for p in doc["points"]]
    assert [r["valid"] for r in rows] == [str(p["valid"]).lower() for p in doc["points"]]
    assert [float(r["latency_p99_ms"]) for r in rows] == [p["latency_ms"]["p99"] for p in doc["points"]]
    pq = pytest.importorskip("pyarrow.parquet")
    table = pq.read_table(out / "sweep.parquet").to_pylist()
    assert [r["requests_per_s"] for r in table] == [p["requests_per_s"] for p in doc["points"]]
    assert [r["slo_attainment"] for r in table] == [p["slo_attainment"] for p in doc["points"]]
    assert [r["ttft_p99_ms"] for r in table] == [None] * 3  # not a token benchmark: null, not 0
    assert "sweep.csv:" in res.stdout and "sweep.parquet:" in res.stdout


def test_an_llm_sweep_reports_ttft_tpot_and_tokens_per_second(tmp_path):
    # 10 tokens per 20 ms sample: first token after 2 ms, then 2 ms per token
    res = proctor("sweep", "--rates", "20,40", "--model", "llama2-70b", "--sut",
                  "synthetic:service_us=20000,workers=8,tokens=10", "--duration-ms", "500", "--no-trace",
                  "--no-report", "-o", "llm", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    doc = json.loads((tmp_path / "llm" / "sweep.json").read_text())
    check_document(doc)
    for point in doc["points"]:
        assert set(point["ttft_ms"]) == PCTS and set(point["tpot_ms"]) == PCTS
        assert 1.5 <= point["tpot_ms"]["p50"] <= point["tpot_ms"]["p99"]
        assert point["ttft_ms"]["p50"] >= 1.5
        assert point["tokens_per_s"] == pytest.approx(10 * point["requests_per_s"], rel=0.01)
        assert point["limits_ms"] == {"ttft": 2000.0, "tpot": 200.0}  # llama2-70b Server, mlperf.conf
        assert point["meets_limits"] is True
    assert "TTFT p50 / p90 / p99 ms" in res.stdout and "tokens/s" in res.stdout


def test_a_concurrency_sweep_is_marked_not_mlperf_in_the_json_and_in_each_log(tmp_path):
    res = proctor("sweep", "--concurrency", "1,4", "--sut", "synthetic:service_us=10000,workers=8",
                  "--duration-ms", "400", "--no-trace", "--no-report", "-o", "cc", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    doc = json.loads((tmp_path / "cc" / "sweep.json").read_text())
    check_document(doc)
    assert doc["mlperf"] is False and doc["scenario"] == "closed loop"
    assert [p["value"] for p in doc["points"]] == [1, 4]
    for point in doc["points"]:
        assert point["valid"] is None and point["mlperf"] is False and point["meets_limits"] is None
        assert point["limits_ms"] is None
        assert point["verdict"].startswith(f"not an MLPerf scenario (closed loop, {point['value']:g} in flight)")
        folder = tmp_path / "cc" / point["logs"]
        assert summary_says(folder) == "INVALID"
        assert f"MLPerf scenario : NO (closed loop, {point['value']:g} queries in flight)" in (
            folder / "mlperf_log_summary.txt"
        ).read_text()
        # the engine's reason names the sweep's flags: the CLI hands them down (EngineOptions.labels)
        reasons = read_detail(folder / "mlperf_log_detail.txt").values["proctor_invalid_reasons"]
        assert reasons[0] == (f"closed loop with {point['value']:g} queries in flight (--concurrency): not an "
                              "MLPerf scenario, so no MLPerf verdict; for one run --scenario Server or "
                              "SingleStream without --concurrency")
    one, four = doc["points"]
    assert four["requests_per_s"] > 2 * one["requests_per_s"]
    assert "closed loop: not an MLPerf scenario" in res.stdout
    assert not (tmp_path / "cc" / "sweep.html").exists()


# goodput's SUT: 4 x 20 ms workers, at most 200 samples/s, held to a 200 ms bound (user.conf): 10 x its
# service time, so a busy host's wake-up delays (p99 ~100 ms for 5 ms sleeps beside CPU hogs at a load
# of 9 on 2 cores) cannot fail a rate below capacity, while 2 s above it queue far past the bound
GOODPUT_SUT, GOODPUT_CAPACITY = "synthetic:service_us=20000,workers=4", 200.0


def test_goodput_brackets_a_rate_at_or_below_the_known_capacity(tmp_path):
    (tmp_path / "user.conf").write_text("resnet50.Server.target_latency = 200\n")
    res = proctor("sweep", "--goodput", "--target-qps", "40", "--tolerance", "0.1", "--sut", GOODPUT_SUT,
                  "--user-conf", "user.conf", "--duration-ms", "2000", "--no-trace", "-q", "-o", "gp", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    doc = json.loads((tmp_path / "gp" / "sweep.json").read_text())
    check_document(doc)
    good = doc["goodput"]
    lo, hi = good["bracket"]
    probes = good["probes"]
    assert all(p["limits_ms"] == {"latency": 200.0} for p in doc["points"])
    # what load cannot change: no rate above capacity meets the bound (a 2 s run 10 % over it queues
    # 40 samples, 200 ms), so a goodput found lies at or below it, to the tolerance; a host so busy
    # that no rate passed says so and every probe failed (how low a rate passes is the host's load)
    if good["found"]:
        assert good["goodput_qps"] == lo and 0 < lo <= GOODPUT_CAPACITY * 1.1
        assert good["tolerance_reached"] and hi / lo - 1 <= 0.1
        from proctor.report.sweep import figure_text

        best = next(p for p in doc["points"] if p["value"] == lo and p["meets_limits"])
        assert good["highest_passing_qps"] == lo and good["achieved_requests_per_s"] == best["requests_per_s"]
        achieved = figure_text("rate", best["requests_per_s"])
        assert (f"highest passing offered rate: {lo:,.4g} QPS (achieved {achieved} requests/s) meets the limits, "
                f"bracket [{lo:,.4g}, {hi:,.4g})") in res.stdout
        assert "goodput:" not in res.stdout
    else:
        assert good["stopped"].startswith("no rate down to") and not any(q["passed"] for q in probes)
        assert good["highest_passing_qps"] is None and good["achieved_requests_per_s"] is None
    # every probe is a point with its own logs, and the search is the one the app layer defines:
    # replaying the recorded points through it gives the same probes and the same end
    assert len(doc["points"]) == len(probes) and all(
        p["value"] == q["rate"] and p["meets_limits"] == q["passed"]
        for p, q in zip(doc["points"], probes, strict=True)
    )
    points = {p["value"]: sw.Point(**p) for p in doc["points"]}
    replay = sw.goodput_search(
        lambda r, s: (bool(points[r].meets_limits), "", sw.strain(points[r], r)), 40.0, 0.1
    )
    assert [p.rate for p in replay.probes] == [q["rate"] for q in probes]
    assert (replay.found, replay.lower, replay.upper, replay.stopped) == (good["found"], lo, hi or 0.0, good["stopped"])
    assert res.stdout.count("\nprobe ") + res.stdout.startswith("probe ") == len(probes)
    assert math.isfinite(good["wall_s"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "give one of --rates LIST, --concurrency LIST or --goodput"),
        (("--rates", "1,2", "--concurrency", "1"), "give one of"),
        (("--rates", "4,2"), "--rates: '4,2': give the values increasing"),
        (("--concurrency", "1,2.5"), "whole number of requests"),
        (("--rates", "1", "-s", "Offline"), "--scenario Offline: a sweep runs Server points"),
        (("--goodput",), "--goodput needs --target-qps"),
        (("--goodput", "--target-qps", "10", "--tolerance", "2"), "--tolerance: must be at least 0.001 and below 1"),
        (("--rates", "1", "--engine", "official"), "proctor's engine only"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(tmp_path, args, message):
    res = proctor("sweep", *args, cwd=tmp_path)
    assert res.returncode == 2, res.stderr
    assert message in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "proctor-sweep").exists()


def llm_point(value: float, ttft: tuple[float, float, float], **more: Any) -> sw.Point:
    pcts = dict(zip(("p50", "p90", "p99"), ttft, strict=True))
    return sw.Point(
        kind="rate", value=value, scenario="Server", mlperf=True, valid=False, meets_limits=True,
        verdict="INVALID: early stopping", requests_per_s=27.6412, tokens_per_s=3588.2312,
        latency_ms={"p50": 1559.71, "p90": 1590.52, "p99": 12623.72}, ttft_ms=pcts,
        tpot_ms={"p50": 3.99, "p90": 4.11, "p99": 4.26}, samples=72, errors=0, duration_s=2.6, wall_s=3.0,
        logs=f"rate-{value:g}", limits_ms={"ttft": 2000.0, "tpot": 100.0}, slo_attainment=1.0,
        goodput_per_s=27.6412, slo_ms={"ttft": 2000.0, "tpot": 100.0}, **more,
    )


@pytest.mark.parametrize("width", [120, 80, 40])
def test_the_terminal_table_never_cuts_a_figure(width):
    # issue 34 §5: in a pipe (120 columns) the p50/p90/p99 cells lost their p99, the MLPerf figure
    # ("41.5/47.0…"); every figure of every point is on the page whole, whatever the width
    import io

    from rich.console import Console

    from proctor.cli.sweep import _table
    from proctor.report.sweep import figure_text

    points = [llm_point(v, (52.91, 97.43, 1143.66 * v)) for v in (10, 20, 40)]
    buf = io.StringIO()
    Console(file=buf, width=width, soft_wrap=True, color_system=None).print(_table("rate", points), crop=False)
    text = buf.getvalue()
    assert "…" not in text
    words = set(text.replace("│", " ").split())
    for p in points:
        for block in (p.ttft_ms, p.tpot_ms, p.latency_ms):
            assert block is not None
            assert {figure_text("ms", block[k]) for k in ("p50", "p90", "p99")} <= words, text
        assert {figure_text("rate", p.requests_per_s), figure_text("rate", p.tokens_per_s), "100.00%"} <= words
