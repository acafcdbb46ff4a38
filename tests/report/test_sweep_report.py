"""sweep.html and its figure (issue 24, section 2): drawn from sweep.json alone."""

from __future__ import annotations

from typing import Any

from proctor.report.sweep import sweep_axes, sweep_figure, sweep_html


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
    assert ("Highest passing offered rate: <b>565.7 QPS</b> meets the limits; bracket [565.7, 571.8) after 10 "
            "probes (11.0 s)") in html
    assert html.count("<tr>") == 3 and ">VALID<" in html and ">INVALID<" in html
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html  # the SUT spec is text, escaped
    assert "<img" not in html


def test_a_search_without_a_passing_rate_says_so():
    good = {"found": False, "bracket": [0.0, 8.0], "probes": [], "wall_s": 1.0, "tolerance": 0.02,
            "stopped": "no rate down to 1 passed"}
    html = sweep_html(doc(goodput=good), None)
    assert "Highest passing offered rate: none; no probed rate met the limits: no rate down to 1 passed" in html


def test_each_row_says_whether_the_limits_were_met_and_quotes_the_runs_verdict():
    a, b = point(10, True, 5.0), point(20, False, 40.0)
    a.update(meets_limits=True, verdict="VALID for these settings; not a submission run: <short>")
    b.update(meets_limits=False, verdict="INVALID: latency p99 40 ms > 15 ms")
    html = sweep_html(doc(a, b), None)
    assert "<td>met</td>" in html and "<td>not met</td>" in html
    assert "not a submission run: &lt;short&gt;" in html  # a verdict is text, escaped
    assert "INVALID: latency p99 40 ms &gt; 15 ms" in html


def test_every_series_has_its_own_visible_line():
    # issue 34 §5: requests/s was drawn on a twin axis under tokens/s, which hid it (tokens/s = 10 x
    # requests/s lands on the same pixels); each kind of figure now has its own panel
    pts = []
    for rate in (10, 20, 40):
        p = point(rate, True, 5.0)
        p.update(ttft_ms={"p50": 1.0, "p90": 2.0, "p99": 3.0}, tpot_ms={"p50": 0.1, "p90": 0.2, "p99": 0.3},
                 requests_per_s=rate * 0.99, tokens_per_s=rate * 9.9, goodput_per_s=rate * 0.5,
                 limits_ms={"ttft": 2000.0, "tpot": 200.0})
        pts.append(p)
    from proctor.report.sweep import sweep_axes

    fig = sweep_axes(doc(*pts))
    axes = fig.get_axes()
    assert [ax.get_title() for ax in axes] == ["p99 latencies", "requests per second", "output tokens per second"]
    labels = [[line.get_label() for line in ax.get_lines() if not line.get_label().startswith("_")] for ax in axes]
    assert labels[0][:3] == ["TTFT p99", "TPOT p99", "latency p99"]
    assert labels[1] == ["requests/s", "goodput (met every SLO target)"]
    assert labels[2] == ["tokens/s"]
    rates = {line.get_label(): list(line.get_ydata()) for line in axes[1].get_lines()}
    assert rates["requests/s"] == [9.9, 19.8, 39.6] and rates["goodput (met every SLO target)"] == [5.0, 10.0, 20.0]
    assert list(axes[2].get_lines()[0].get_ydata()) == [99.0, 198.0, 396.0]
    # a benchmark without tokens: two panels, no empty tokens/s axis
    plain = sweep_axes(doc(point(10, True, 5.0), point(20, True, 6.0)))
    assert [ax.get_title() for ax in plain.get_axes()] == ["p99 latencies", "requests per second"]


def test_the_page_writes_each_figure_as_the_table_does():
    from proctor.report.sweep import figure_text

    p = point(10, True, 5.0)
    p.update(requests_per_s=1234.5678, tokens_per_s=None, slo_attainment=0.98765, goodput_per_s=1219.3)
    html = sweep_html(doc(p, point(20, True, 6.0)), None)
    assert "<td>1,234.57</td>" in html and figure_text("rate", 1234.5678) == "1,234.57"
    assert "<td>98.77%</td>" in html and "<td>1,219.30</td>" in html
    assert figure_text("rate", None) == figure_text("share", float("nan")) == "-"


def test_the_searched_rate_and_the_slo_goodput_are_named_apart():
    # issue 34 §5: the search's result (an offered rate, 40 QPS) was headed "Goodput" beside a row whose
    # "goodput req/s" column (the requests/s that met every SLO target) said 27.64: one word, two figures
    from proctor.app import sweep as sw

    def run(value: float, rps: float, met: bool) -> sw.Point:
        return sw.Point(kind="rate", value=value, scenario="Server", mlperf=True, valid=False, meets_limits=met,
                        verdict="INVALID: early stopping", requests_per_s=rps, tokens_per_s=None,
                        latency_ms={"p50": 1.0, "p90": 2.0, "p99": 3.0}, ttft_ms=None, tpot_ms=None, samples=72,
                        errors=0, duration_s=2.6, wall_s=3.0, logs=f"rate-{value:g}",
                        limits_ms={"latency": 15.0}, slo_attainment=1.0, goodput_per_s=rps)

    points = [run(10, 9.874, True), run(40, 27.6412, True), run(80, 30.1, False)]
    probes = [sw.GoodputProbe(i, "double", p.value, bool(p.meets_limits), p.verdict, 1.0) for i, p in enumerate(points)]
    found = sw.Goodput(True, 40.0, 80.0, 0.5, probes, 3.0)
    assert sw.passing_point(found, points) is points[1]
    block = sw.search_json(found, points)
    assert block["highest_passing_qps"] == 40.0 and block["achieved_requests_per_s"] == 27.6412
    assert block["goodput_qps"] == 40.0  # the same offered rate under its schema-1 name, for older readers
    html = sweep_html(doc(*(p.to_json() for p in points), goodput=block), None)
    assert "Highest passing offered rate: <b>40 QPS</b> (achieved 27.64 requests/s) meets the limits" in html
    assert "Goodput:" not in html and "<td>27.64</td>" in html  # the table's goodput column: requests/s
    fig = sweep_axes(doc(*(p.to_json() for p in points), goodput=block))
    marks = [line for line in fig.get_axes()[0].get_lines() if line.get_label() == "highest passing offered rate"]
    assert len(marks) == 1 and list(marks[0].get_xdata()) == [40.0, 40.0]
    none = sw.search_json(sw.Goodput(False, 0.0, 10.0, 0.5, probes[:1], 1.0, "no rate down to 10 passed"), points)
    assert none["highest_passing_qps"] is None and none["achieved_requests_per_s"] is None


def _llm_points(goodput_share: float) -> list[dict[str, Any]]:
    pts = []
    for rate, ttft in ((5, 50.9), (10, 110.2), (20, 67.3)):
        p = point(rate, False, 560.0)
        p.update(ttft_ms={"p50": 41.5, "p90": 47.0, "p99": ttft}, tpot_ms={"p50": 4.0, "p90": 4.0, "p99": 4.07},
                 requests_per_s=rate * 0.9, tokens_per_s=rate * 117.0, goodput_per_s=rate * 0.9 * goodput_share,
                 limits_ms={"ttft": 2000.0, "tpot": 100.0})
        pts.append(p)
    return pts


def test_no_legend_hides_a_point_or_a_line():
    # issue 34 §5: the p99 panel's legend (lower right) covered the TPOT p99 line and its 20-QPS marker
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    good = {"found": True, "highest_passing_qps": 20.0, "goodput_qps": 20.0, "bracket": [20.0, None],
            "probes": [{}] * 3, "wall_s": 9.0, "tolerance": 0.5, "stopped": "", "achieved_requests_per_s": 18.0}
    fig = sweep_axes(doc(*_llm_points(1.0), goodput=good))
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    for ax in fig.get_axes():
        legend = ax.get_legend()
        assert legend is not None
        box = legend.get_window_extent(renderer)
        # nothing drawn in the axes lies under it: the legend is outside the plotting area
        assert not box.overlaps(ax.get_window_extent(renderer)), ax.get_title()
        for line in ax.get_lines():
            for x, y in ax.transData.transform(line.get_xydata()):
                assert not box.contains(x, y), (ax.get_title(), line.get_label())
        assert not box.overlaps(ax.xaxis.label.get_window_extent(renderer))
    fig_box = fig.bbox
    assert all(fig_box.contains(*corner) for ax in fig.get_axes()
               for corner in ax.get_legend().get_window_extent(renderer).corners())  # not cut off


def test_goodput_equal_to_requests_per_second_leaves_both_visible():
    # issue 34 §5: with every request meeting every target, goodput was drawn on the very pixels of the
    # requests/s line, which vanished; now requests/s is wide and hollow under goodput's narrow line
    axes = sweep_axes(doc(*_llm_points(1.0))).get_axes()[1]
    lines = {line.get_label(): line for line in axes.get_lines()}
    rps = lines["requests/s"]
    good = lines["goodput (met every SLO target), equal to requests/s at every point"]
    assert list(rps.get_ydata()) == list(good.get_ydata())
    assert rps.get_zorder() < good.get_zorder() and rps.get_markerfacecolor() == "none"
    assert rps.get_markersize() > 2 * good.get_markersize() and rps.get_linewidth() > 2 * good.get_linewidth()
    assert rps.get_color() != good.get_color() and good.get_linestyle() == "--"
    # where they differ the legend does not claim they are equal
    part = {line.get_label() for line in sweep_axes(doc(*_llm_points(0.8))).get_axes()[1].get_lines()}
    assert "goodput (met every SLO target)" in part and not any("equal" in label for label in part)
