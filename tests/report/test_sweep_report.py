"""sweep.html and its figure (issue 24, section 2): drawn from sweep.json alone."""

from __future__ import annotations

from typing import Any

from proctor.report.sweep import sweep_figure, sweep_html


def point(value: float, valid: bool | None, p99: float) -> dict[str, Any]:
    return {
        "value": value, "valid": valid, "latency_ms": {"p50": p99 / 2, "p90": p99 / 1.5, "p99": p99},
        "ttft_ms": None, "tpot_ms": None, "requests_per_s": value, "tokens_per_s": None,
        "logs": f"rate-{value:g}", "limits_ms": {"latency": 15.0},
    }


def doc(*points: dict[str, Any], goodput: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"kind": "rate", "scenario": "Server", "sut": "<b>x</b>", "note": "n", "points": list(points),
            "goodput": goodput}


def test_the_figure_needs_two_points_and_is_a_png():
    assert sweep_figure(doc(point(10, True, 5.0))) is None
    png = sweep_figure(doc(point(10, True, 5.0), point(20, False, 40.0)))
    assert png is not None and png.startswith(b"\x89PNG")


def test_the_page_leads_with_the_goodput_and_has_one_row_per_point():
    good = {"found": True, "bracket": [565.7, 571.8], "probes": [{}] * 10, "wall_s": 11.0, "tolerance": 0.02,
            "stopped": ""}
    html = sweep_html(doc(point(10, True, 5.0), point(20, False, 40.0), goodput=good), None)
    assert "Goodput: <b>565.7 QPS</b> meets the limits; bracket [565.7, 571.8) after 10 probes (11.0 s)" in html
    assert html.count("<tr>") == 3 and ">VALID<" in html and ">INVALID<" in html
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html  # the SUT spec is text, escaped
    assert "<img" not in html


def test_a_search_without_a_passing_rate_says_so():
    good = {"found": False, "bracket": [0.0, 8.0], "probes": [], "wall_s": 1.0, "tolerance": 0.02,
            "stopped": "no rate down to 1 passed"}
    assert "No probed rate met the limits: no rate down to 1 passed" in sweep_html(doc(goodput=good), None)


def test_each_row_says_whether_the_limits_were_met_and_quotes_the_runs_verdict():
    a, b = point(10, True, 5.0), point(20, False, 40.0)
    a.update(meets_limits=True, verdict="VALID for these settings; not a submission run: <short>")
    b.update(meets_limits=False, verdict="INVALID: latency p99 40 ms > 15 ms")
    html = sweep_html(doc(a, b), None)
    assert "<td>met</td>" in html and "<td>not met</td>" in html
    assert "not a submission run: &lt;short&gt;" in html  # a verdict is text, escaped
    assert "INVALID: latency p99 40 ms &gt; 15 ms" in html
