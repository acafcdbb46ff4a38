"""A sweep's curves: p99 latency (or TTFT and TPOT), requests/s and tokens/s against rate or concurrency.

One self-contained sweep.html beside sweep.json: the goodput search's highest passing offered rate first
when there is one, the
figure (matplotlib, imported on first use, PNG inline), then one row per point. It reads the sweep
document only (app/sweep.py `sweep_document`), so it can be redrawn from a saved sweep.json.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

from proctor.report.plots import png

BOUND, PASS, FAIL = "#d62728", "#2ca02c", "#d62728"


def _x_label(doc: dict[str, Any]) -> str:
    return "requests in flight (closed loop)" if doc.get("kind") == "concurrency" else "offered rate (target QPS)"


def _series(points: Sequence[dict[str, Any]], key: str, pct: str = "p99") -> list[float]:
    out = []
    for p in points:
        block = p.get(key) or {}
        out.append(float(block.get(pct, float("nan"))) if isinstance(block, dict) else float("nan"))
    return out


# How each figure of a point is written, wherever it is shown (the CLI's table, sweep.html): one
# number per figure. Rates as the summary prints them (2 decimals: "Completed samples per second"),
# milliseconds to 0.1, shares as percentages.
FIGURE_FORMATS = {"rate": "{:,.2f}", "ms": "{:,.1f}", "share": "{:.2%}", "value": "{:g}"}


def figure_text(kind: str, value: Any) -> str:
    """A point's figure as every view shows it; "-" where it has none."""
    if value is None or isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        return "-"
    return FIGURE_FORMATS[kind].format(float(value))


def _rates(points: Sequence[dict[str, Any]], key: str) -> list[float]:
    out = []
    for p in points:
        v = p.get(key)
        out.append(float(v) if isinstance(v, int | float) and not isinstance(v, bool) else float("nan"))
    return out


def sweep_axes(doc: dict[str, Any]) -> Any:
    """The figure (a matplotlib Figure), or None for < 2 points: one panel per kind of figure, so no
    series hides another: p99 latencies (TTFT, TPOT, latency, with the bounds as dotted lines; x marks
    an INVALID Server point), requests/s (with goodput, the requests/s that met every SLO target), and
    tokens/s when the benchmark counts tokens."""
    points = sorted(doc.get("points") or [], key=lambda p: float(p.get("value", 0)))
    if len(points) < 2:
        return None
    from matplotlib.figure import Figure

    token_lat = any(p.get("ttft_ms") for p in points)
    tokens = token_lat or any(p.get("tokens_per_s") is not None for p in points)
    panels = 3 if tokens else 2
    fig = Figure(figsize=(4.2 * panels, 5.0), dpi=100, layout="constrained")  # room for the legends below
    axes = list(fig.subplots(1, panels))
    left, middle = axes[0], axes[1]
    xs = [float(p["value"]) for p in points]
    colors: dict[str, str] = {}  # each bound drawn in its series' colour
    plotted: list[float] = []
    series = [("ttft", "TTFT", "o-"), ("tpot", "TPOT", "s-")] if token_lat else []
    for key, name, style in [*series, ("latency", "latency", "^-")]:
        ys = _series(points, f"{key}_ms")
        (line,) = left.plot(xs, ys, style, label=f"{name} p99")
        colors[key] = line.get_color()
        plotted += [y for y in ys if y == y and y > 0]
    bad = [(x, y) for x, y, p in zip(xs, _series(points, "latency_ms"), points, strict=True) if p.get("valid") is False]
    if bad:
        left.plot([b[0] for b in bad], [b[1] for b in bad], "x", color=FAIL, markersize=10, label="INVALID")
    limits: dict[str, float] = {}
    for p in points:
        limits.update(p.get("limits_ms") or {})
    for name, bound in sorted(limits.items()):
        left.axhline(float(bound), color=colors.get(name, BOUND), linestyle=":",
                     label=f"{name} bound {float(bound):g} ms")
    everything = plotted + [float(b) for b in limits.values() if float(b) > 0]
    if everything and max(everything) > 20 * min(everything):
        left.set_yscale("log")  # TPOT in ms beside a TTFT bound in seconds: one linear axis flattens both
    left.set_ylabel("ms")
    left.set_title("p99 latencies", fontsize=10)
    requests = _rates(points, "requests_per_s")
    # requests/s wide with hollow markers under goodput's narrow dashed line and small diamonds: where
    # every request met every target the two coincide and both stay visible (and the legend says so)
    middle.plot(xs, requests, "o-", linewidth=3.0, markersize=10, markerfacecolor="none", markeredgewidth=1.5,
                zorder=2, label="requests/s")
    goodput = _rates(points, "goodput_per_s")
    if any(g == g for g in goodput):
        same = all(figure_text("rate", g) == figure_text("rate", r) for g, r in zip(goodput, requests, strict=True))
        label = "goodput (met every SLO target)" + (", equal to requests/s at every point" if same else "")
        middle.plot(xs, goodput, "D--", color=PASS, linewidth=1.2, markersize=4, zorder=3, label=label)
    middle.set_ylabel("requests/s")
    middle.set_ylim(bottom=0)
    middle.set_title("requests per second", fontsize=10)
    if tokens:
        right = axes[2]
        right.plot(xs, _rates(points, "tokens_per_s"), "s-", color="#ff7f0e", label="tokens/s")
        right.set_ylabel("tokens/s")
        right.set_ylim(bottom=0)
        right.set_title("output tokens per second", fontsize=10)
    good = doc.get("goodput") or {}
    for ax in axes:
        ax.set_xlabel(_x_label(doc))
        if good.get("found"):
            key = "highest_passing_qps" if "highest_passing_qps" in good else "goodput_qps"  # an older file: the second
            ax.axvline(float(good[key]), color=PASS, linestyle="--", label="highest passing offered rate")
        # below the axes, where it hides no point or line (inside, "best" still covered the TPOT line)
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), borderaxespad=0.0)
    return fig


def sweep_figure(doc: dict[str, Any]) -> bytes | None:
    """`sweep_axes` as a PNG; None for < 2 points."""
    fig = sweep_axes(doc)
    if fig is None:
        return None
    return png(fig, dpi=100)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.4g}"
    return escape(str(value))


def sweep_html(doc: dict[str, Any], png: bytes | None) -> str:
    rows = []
    for p in doc.get("points") or []:
        valid = p.get("valid")
        word = "not MLPerf" if valid is None else ("VALID" if valid else "INVALID")
        limits = {True: "met", False: "not met"}.get(p.get("meets_limits"), "-")
        cells = (
            figure_text("value", p.get("value")),
            word,
            limits,
            figure_text("ms", (p.get("ttft_ms") or {}).get("p99")),
            figure_text("ms", (p.get("tpot_ms") or {}).get("p99")),
            figure_text("ms", (p.get("latency_ms") or {}).get("p99")),
            figure_text("rate", p.get("requests_per_s")),
            figure_text("rate", p.get("tokens_per_s")),
            figure_text("share", p.get("slo_attainment")),
            figure_text("rate", p.get("goodput_per_s")),
            p.get("logs"),
        )
        rows.append(
            "<tr>" + "".join(f"<td>{_cell(v)}</td>" for v in cells)
            + f"<td class='why'>{escape(str(p.get('verdict') or ''))}</td></tr>"
        )
    good = doc.get("goodput")
    head = ""
    if good:
        if good.get("found"):
            lo, hi = good["bracket"]
            achieved = good.get("achieved_requests_per_s")
            # an offered rate, named apart from the table's SLO goodput (requests/s that met every target)
            head = (
                f"<p class='goodput'>Highest passing offered rate: <b>{lo:,.4g} QPS</b>"
                + ("" if achieved is None else f" (achieved {figure_text('rate', achieved)} requests/s)")
                + f" meets the limits; bracket [{lo:,.4g}, "
                f"{'-' if hi is None else f'{hi:,.4g}'}) after {len(good['probes'])} probes "
                f"({good['wall_s']:.1f} s), tolerance {good['tolerance'] * 100:g} %"
                + (f"; {escape(good['stopped'])}" if good.get("stopped") else "")
                + "</p>"
            )
        else:
            head = ("<p class='goodput'>Highest passing offered rate: none; no probed rate met the limits: "
                    f"{escape(good.get('stopped') or '')}</p>")
    fig = ""
    if png is not None:
        fig = (
            f'<figure><img alt="sweep curves" src="data:image/png;base64,{base64.b64encode(png).decode("ascii")}">'
            "<figcaption>p99 latencies, requests/s (and goodput) and tokens/s across the sweep's points, each "
            "on its own axes</figcaption></figure>"
        )
    title = f"proctor sweep: {escape(str(doc.get('sut')))} ({escape(str(doc.get('scenario')))})"
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{title}</title>"
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}td.why{text-align:left;font-size:smaller}"
        "img{max-width:100%}</style>"
        f"</head><body><h1>{title}</h1>{head}<p>{escape(str(doc.get('note') or ''))}</p>{fig}"
        "<table><tr><th>value</th><th>verdict</th><th>limits</th><th>TTFT p99 ms</th><th>TPOT p99 ms</th>"
        "<th>latency p99 ms</th><th>requests/s</th><th>tokens/s</th><th>SLO met</th><th>goodput req/s</th>"
        "<th>logs</th><th>the run's verdict</th></tr>"
        + "".join(rows)
        + "</table></body></html>\n"
    )


def write_sweep_html(doc: dict[str, Any], outdir: Path) -> Path:
    path = outdir / "sweep.html"
    path.write_text(sweep_html(doc, sweep_figure(doc)), encoding="utf-8")
    return path


__all__ = ["FIGURE_FORMATS", "figure_text", "sweep_axes", "sweep_figure", "sweep_html", "write_sweep_html"]
