"""The report's figures, drawn with matplotlib (imported here only, on first use) as PNG bytes.

Figures are built on `matplotlib.figure.Figure` directly (no pyplot, no GUI backend, no global
state), so drawing works headless and from any thread. Each function returns None when the data
for its figure is absent, and the caller says so in words instead.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from proctor.report.data import InferenceRun, Latency
from proctor.report.training import TrainingResult

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

MAX_POINTS = 20_000  # points drawn in a scatter (evenly thinned beyond this)
DPI = 100
BOUND, TARGET, ESTIMATE = "#d62728", "#1f77b4", "#ff7f0e"


def _figure(w: float = 7.0, h: float = 3.6) -> tuple[Figure, Axes]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(w, h), dpi=DPI, layout="constrained")
    return fig, fig.add_subplot()


def _title(ax: Axes, text: str) -> None:
    """A title that fits the figure: long run names keep their end (the part that differs)."""
    ax.set_title(text if len(text) <= 75 else "…" + text[-74:], fontsize=10)


def _run(name: str) -> str:
    return name.removeprefix("result_").removesuffix(".txt")


def _dollars_as_text(formatter: Any) -> Any:
    """A tick formatter whose labels are text (names: fixed labels, categories, functions) wrapped so
    a '$' in them is a dollar sign; matplotlib's own number formatters are left to write mathtext."""
    from matplotlib.ticker import FuncFormatter, LogFormatter, NullFormatter, ScalarFormatter

    if isinstance(formatter, ScalarFormatter | LogFormatter | NullFormatter) or getattr(formatter, "as_text", False):
        return formatter

    def label(x: float, pos: int | None = None) -> str:
        return str(formatter(x, pos)).replace("$", "\\$")

    wrapped = FuncFormatter(label)
    wrapped.as_text = True  # type: ignore[attr-defined]
    return wrapped


def png(fig: Figure, dpi: int = DPI) -> bytes:
    """The one place a figure becomes a PNG. Every text on it is drawn as written: names from logs,
    trees and the wire reach titles, ticks and legends, and matplotlib would read a '$' in them as
    mathtext (a run named 'a$^{' stopped the drawing); proctor's own labels use no mathtext."""
    from matplotlib.text import Text

    ticks: set[int] = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_formatter(_dollars_as_text(axis.get_major_formatter()))
            axis.set_minor_formatter(_dollars_as_text(axis.get_minor_formatter()))
            for tick in (*axis.get_major_ticks(), *axis.get_minor_ticks()):
                ticks.update((id(tick.label1), id(tick.label2)))
    for text in fig.findobj(Text):
        if id(text) not in ticks:  # tick labels keep mathtext: a log axis writes 10^6 with it
            text.set_parse_math(False)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    return buf.getvalue()


_png = png


def _ms(ns: Any) -> float:
    return float(ns) / 1e6


def _marks(ax: Axes, run: InferenceRun, lat: Latency, xmax: float | None = None, kind: str = "latency") -> None:
    """Target percentile's value, the early-stopping estimate (latency) and the bound of `kind`
    (latency: Server's target latency; ttft, tpot: the token bounds), as lines."""
    pct = run.target_percentile or (0.9 if run.scenario == "SingleStream" else 0.99)
    marks: list[tuple[float, str, str, str]] = []
    if pct in lat.percentiles:
        marks.append((lat.percentiles[pct], TARGET, "--", f"p{pct * 100:g} {_ms(lat.percentiles[pct]):.4g} ms"))
    # the estimate is the summary's, from the scheduled time: off a curve timed from the actual issue
    summary_basis = lat is run.latency or lat is run.trace_scheduled
    if run.early_stopping_estimate_ns is not None and kind == "latency" and summary_basis:
        est = run.early_stopping_estimate_ns
        marks.append((est, ESTIMATE, ":", f"early-stopping estimate {_ms(est):.4g} ms"))
    bound = {"latency": run.target_latency_ns if run.scenario == "Server" else None,
             "ttft": run.ttft_bound_ns, "tpot": run.tpot_bound_ns}.get(kind)
    if bound:
        marks.append((bound, BOUND, "-", f"bound {_ms(bound):.4g} ms"))
    for x, colour, style, label in marks:
        if xmax is not None and _ms(x) > 5 * xmax:  # far off the data: named, not drawn
            ax.plot([], [], color=colour, linestyle=style, label=label + " (beyond the axis)")
        else:
            ax.axvline(_ms(x), color=colour, linestyle=style, linewidth=1.4, label=label)


def _thin(*arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    n = arrays[0].shape[0]
    if n <= MAX_POINTS:
        return arrays
    idx = np.linspace(0, n - 1, MAX_POINTS).astype(np.int64)
    return tuple(a[idx] for a in arrays)


def _hist_axes(ax: Axes, run: InferenceRun, lat: Latency, values_ns: np.ndarray, label: str, kind: str) -> str:
    """A histogram of `values_ns` (top 0.1 % cut beyond 1000 values) with the marks; returns a title tail."""
    ms = values_ns / 1e6
    hi = float(np.quantile(ms, 0.999)) if ms.size > 1000 else float(ms.max())
    ax.hist(ms[ms <= hi] if hi > float(ms.min()) else ms, bins=80, color="#8c8c8c")
    _marks(ax, run, lat, hi, kind)
    ax.set_xlabel(f"{label} (ms)")
    ax.set_ylabel("samples")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, loc="upper right")
    return f"{ms.size} samples" + (", top 0.1 % cut" if hi < ms.max() else "")


def latency_basis(run: InferenceRun) -> tuple[np.ndarray, Latency, str] | None:
    """Per-sample latencies, their percentiles and the label that names their basis, all on one basis:
    from each query's scheduled time (the summary's, every scenario) with the logged percentiles when the
    samples carry it; else from the actual issue with the percentiles of those same values, computed the
    summary's way (a Server summary times from the schedule: its logged percentiles would sit off such a
    curve). None without per-sample data."""
    s = run.samples
    if s is None or s.latency_ns.size == 0:
        return None
    scheduled = s.from_scheduled_ns()
    if scheduled is not None:
        lat = run.latency if run.latency.percentiles else (run.trace_scheduled or run.latency)
        return scheduled, lat, "latency from the scheduled time (the summary's basis)"
    if run.scenario != "Server" and run.latency.percentiles:
        return s.latency_ns, run.latency, "latency from issue (trace, the summary's basis)"
    from proctor.report.data import latency_stats

    pct = run.target_percentile or (0.9 if run.scenario == "SingleStream" else 0.99)
    own = latency_stats(s.latency_ns, pct) or Latency()
    return s.latency_ns, own, "latency from issue (trace; not the summary's basis, the scheduled time)"


def latency_histogram(run: InferenceRun) -> bytes | None:
    basis = latency_basis(run)
    if basis is None:
        return None
    values, lat, label = basis
    fig, ax = _figure()
    tail = _hist_axes(ax, run, lat, values, label, "latency")
    _title(ax, f"{run.name}: latency histogram ({tail})")
    return _png(fig)


def _cdf_axes(
    ax: Axes,
    run: InferenceRun,
    lat: Latency,
    values_ns: np.ndarray | None,
    label: str,
    kind: str = "latency",
    basis: str = "from issue (trace, per sample)",
) -> bool:
    if values_ns is not None and values_ns.size:
        x = np.sort(values_ns) / 1e6
        y = np.arange(1, x.size + 1) / x.size
        x, y = _thin(x, y)
        ax.plot(x, y, color="#333333", linewidth=1.2, label=f"{label} {basis}")
        xmax = float(x[-1])
        if lat.percentiles:
            ps = sorted(lat.percentiles)
            ax.plot([_ms(lat.percentiles[p]) for p in ps], ps, "o", color="#9467bd", markersize=4,
                    label="percentiles (the summary's order statistic)")
    elif lat.percentiles:
        ps = sorted(lat.percentiles)
        xmax = _ms(lat.max if lat.max is not None else lat.percentiles[ps[-1]])
        xs = [_ms(lat.percentiles[p]) for p in ps]
        if lat.min is not None:
            ps, xs = [0.0, *ps], [_ms(lat.min), *xs]
        if lat.max is not None:
            ps, xs = [*ps, 1.0], [*xs, _ms(lat.max)]
        ax.plot(xs, ps, marker="o", color="#333333", linewidth=1.2, label=f"{label} (logged percentiles)")
    else:
        return False
    pct = run.target_percentile or (0.9 if run.scenario == "SingleStream" else 0.99)
    ax.axhline(pct, color=TARGET, linewidth=0.8, alpha=0.6)
    _marks(ax, run, lat, xmax, kind)
    ax.set_ylabel("fraction of samples at or below")
    ax.set_xlabel(f"{label} (ms)")
    ax.legend(fontsize=8, loc="lower right")
    return True


def _pair(run: InferenceRun, lat: Latency, values_ns: np.ndarray, label: str, kind: str, title: str) -> bytes:
    """Histogram and CDF of one per-sample quantity side by side."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10.0, 3.6), dpi=DPI, layout="constrained")
    a1, a2 = fig.subplots(1, 2)
    tail = _hist_axes(a1, run, lat, values_ns, label, kind)
    _cdf_axes(a2, run, lat, values_ns, label, kind, basis="(trace, per sample)")
    text = f"{run.name}: {title} ({tail})"
    fig.suptitle(text if len(text) <= 110 else "…" + text[-109:], fontsize=10)
    return _png(fig)


def scheduled_latency(run: InferenceRun) -> bytes | None:
    """Server: latency counted from each query's scheduled time, the basis of the logged percentiles."""
    v = None if run.samples is None else run.samples.from_scheduled_ns()
    if run.scenario != "Server" or v is None or v.size == 0:
        return None
    lat = run.latency if run.latency.percentiles else (run.trace_scheduled or run.latency)
    return _pair(run, lat, v, "latency from scheduled", "latency", "latency from the scheduled time")


def lateness_over_time(run: InferenceRun) -> bytes | None:
    """Server: how late each query was issued against its schedule, over the run."""
    s = run.samples
    v = None if s is None else s.lateness_ns()
    if run.scenario != "Server" or s is None or v is None or v.size == 0:
        return None
    fig, ax = _figure()
    t, late = _thin(s.issue_s, v / 1e3)
    ax.scatter(t, late, s=3, alpha=0.5, color="#333333", linewidths=0)
    if "p99" in run.lateness_ns:
        p99 = run.lateness_ns["p99"] / 1e3
        ax.axhline(p99, color=TARGET, linestyle="--", label=f"logged p99 {p99:,.1f} us")
        ax.legend(fontsize=8, loc="upper right")
    ax.set_xlabel("issued at (s from the start)")
    ax.set_ylabel("issue lateness (us): issue - scheduled")
    _title(ax, f"{run.name}: issue lateness over time")
    return _png(fig)


def _token_distribution(
    run: InferenceRun, per_sample: np.ndarray | None, logged: Latency | None, traced: Latency | None,
    what: str, key: str, label: str,
) -> bytes | None:
    """The histogram/CDF pair of one token latency, with the logged percentiles (else the trace's)."""
    if per_sample is None or per_sample.size == 0:
        return None
    lat = logged if logged is not None and logged.percentiles else (traced or Latency())
    return _pair(run, lat, per_sample, what, key, label)


def ttft_distribution(run: InferenceRun) -> bytes | None:
    v = None if run.samples is None else run.samples.ttft_ns()
    return _token_distribution(
        run, v, run.ttft, run.trace_ttft, "time to first token", "ttft", "TTFT from the scheduled time"
    )


def tpot_distribution(run: InferenceRun) -> bytes | None:
    v = None if run.samples is None else run.samples.tpot_ns()
    return _token_distribution(run, v, run.tpot, run.trace_tpot, "time per output token", "tpot", "TPOT")


def tokens_over_time(run: InferenceRun) -> bytes | None:
    """Output tokens per second of the samples completed in each time bin, against the logged rate."""
    s = run.samples
    if s is None or s.n_tokens is None or s.issue_s.size < 2:
        return None
    done = s.done_s
    end = float(done.max())
    width = max(end / 60.0, 1e-3)
    edges = np.arange(0.0, end + width, width)
    counts, _ = np.histogram(done, bins=edges, weights=s.n_tokens.astype(np.float64))
    fig, ax = _figure()
    ax.step(edges[:-1], counts / width, where="post", color="#2ca02c", label="completed tokens/s")
    if run.tokens_per_second:
        ax.axhline(run.tokens_per_second, color=TARGET, linestyle="--",
                   label=f"logged {run.tokens_per_second:,.1f} tokens/s")
    ax.set_xlabel("time (s from the start)")
    ax.set_ylabel("output tokens per second")
    _title(ax, f"{run.name}: tokens per second over time ({width:.3g} s bins)")
    ax.legend(fontsize=8, loc="lower right")
    return _png(fig)


def latency_cdf_figure(run: InferenceRun) -> Figure | None:
    """The latency CDF and its percentiles on one basis (`latency_basis`), named in the axis label."""
    fig, ax = _figure()
    basis = latency_basis(run)
    if basis is None:
        ok = _cdf_axes(ax, run, run.latency, None, "latency")
    else:
        values, lat, label = basis
        ok = _cdf_axes(ax, run, lat, values, label, basis="(per sample)")
    if not ok:
        return None
    _title(ax, f"{run.name}: latency CDF")
    return fig


def latency_cdf(run: InferenceRun) -> bytes | None:
    fig = latency_cdf_figure(run)
    return None if fig is None else _png(fig)


def token_cdfs(run: InferenceRun) -> bytes | None:
    """TTFT and TPOT from their logged percentiles, for a trace without proctor's token args."""
    if run.ttft is None or run.tpot is None or (run.samples is not None and run.samples.ttft_ns() is not None):
        return None
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9.0, 3.4), dpi=DPI, layout="constrained")
    a1, a2 = fig.subplots(1, 2)
    ok1 = _cdf_axes(a1, run, run.ttft, None, "time to first token", "ttft")
    ok2 = _cdf_axes(a2, run, run.tpot, None, "time per output token", "tpot")
    if not (ok1 or ok2):
        return None
    title = f"{run.name}: TTFT and TPOT"
    if run.tokens_per_second is not None:
        title += f" ({run.tokens_per_second:,.2f} tokens/s)"
    fig.suptitle(title if len(title) <= 100 else "…" + title[-99:], fontsize=10)
    return _png(fig)


def latency_over_time(run: InferenceRun) -> bytes | None:
    if run.samples is None:
        return None
    fig, ax = _figure()
    t, lat = _thin(run.samples.issue_s, run.samples.latency_ns / 1e6)
    ax.scatter(t, lat, s=3, alpha=0.5, color="#333333", linewidths=0)
    if run.scenario == "Server" and run.target_latency_ns:
        ax.axhline(_ms(run.target_latency_ns), color=BOUND, label=f"bound {_ms(run.target_latency_ns):.4g} ms")
        ax.legend(fontsize=8, loc="upper right")
    ax.set_xlabel("issued at (s from the start)")
    ax.set_ylabel("latency from issue (ms, trace)")
    _title(ax, f"{run.name}: latency over time")
    return _png(fig)


def rate_over_time(run: InferenceRun) -> bytes | None:
    """Issued and completed samples per second in time bins, against the requested rate."""
    if run.samples is None or run.samples.issue_s.size < 2:
        return None
    issue, done = run.samples.issue_s, run.samples.done_s
    end = float(max(issue.max(), done.max()))
    width = max(end / 60.0, 1e-3)
    edges = np.arange(0.0, end + width, width)
    fig, ax = _figure()
    for values, label, colour in ((issue, "issued", "#1f77b4"), (done, "completed", "#2ca02c")):
        counts, _ = np.histogram(values, bins=edges)
        ax.step(edges[:-1], counts / width, where="post", label=label, color=colour)
    if run.scenario == "Server" and run.target_qps:
        ax.axhline(run.target_qps, color=BOUND, linestyle="--", label=f"requested {run.target_qps:g}/s")
    ax.set_xlabel("time (s from the start)")
    ax.set_ylabel("samples per second")
    _title(ax, f"{run.name}: achieved vs requested rate ({width:.3g} s bins)")
    ax.legend(fontsize=8, loc="lower right")
    return _png(fig)


def inference_figures(run: InferenceRun) -> dict[str, bytes]:
    """Every figure one run has data for, by name (the names become the PNG file names)."""
    out: dict[str, bytes] = {}
    for name, fn in (
        ("latency_histogram", latency_histogram),
        ("latency_cdf", latency_cdf),
        ("scheduled_latency", scheduled_latency),
        ("latency_over_time", latency_over_time),
        ("lateness_over_time", lateness_over_time),
        ("rate_over_time", rate_over_time),
        ("token_latency", token_cdfs),
        ("ttft", ttft_distribution),
        ("tpot", tpot_distribution),
        ("tokens_over_time", tokens_over_time),
    ):
        png = fn(run)
        if png is not None:
            out[name] = png
    return out


def comparison(runs: Sequence[InferenceRun]) -> bytes | None:
    """p50/p90/p99 latency of each run side by side (grouped bars)."""
    rows = [(r.name, r.latency.percentiles) for r in runs if r.latency.percentiles]
    if len(rows) < 2:
        return None
    fig, ax = _figure(max(7.0, 1.1 * len(rows) + 3), 3.8)
    ps = [p for p in (0.5, 0.9, 0.99) if any(p in pc for _, pc in rows)]
    x = np.arange(len(rows))
    w = 0.8 / max(len(ps), 1)
    for i, p in enumerate(ps):
        ax.bar(x + i * w, [_ms(pc.get(p, np.nan)) for _, pc in rows], w, label=f"p{p * 100:g}")
    ax.set_xticks(x + w * (len(ps) - 1) / 2, [n for n, _ in rows], rotation=20, ha="right", fontsize=8)
    ax.set_ylabel("latency (ms)")
    ax.set_yscale("log")
    _title(ax, "latency percentiles by run")
    ax.legend(fontsize=8)
    return _png(fig)


def server_sweep(runs: Sequence[InferenceRun]) -> bytes | None:
    """Latency percentiles against offered rate, with the bound and the highest valid rate."""
    pts = sorted((r for r in runs if r.scenario == "Server" and r.target_qps), key=lambda r: r.target_qps or 0)
    if len({r.target_qps for r in pts}) < 2:
        return None
    fig, ax = _figure()
    qps = [float(r.target_qps or 0) for r in pts]
    for p, style in ((0.5, "o-"), (0.9, "s-"), (0.99, "^-")):
        ax.plot(qps, [_ms(r.latency.percentiles.get(p, np.nan)) for r in pts], style, label=f"p{p * 100:g}")
    bounds = {r.target_latency_ns for r in pts if r.target_latency_ns}
    for b in bounds:
        ax.axhline(_ms(b), color=BOUND, label=f"bound {_ms(b):.4g} ms")
    best = best_valid_rate(pts)
    if best is not None:
        ax.axvline(best, color="#2ca02c", linestyle="--", label=f"highest valid {best:g}/s")
    for r in pts:
        if r.valid is False:
            ax.plot([float(r.target_qps or 0)], [_ms(r.latency.percentiles.get(0.99, np.nan))], "x", color=BOUND, markersize=10)
    top = max((_ms(r.latency.percentiles.get(0.99, 0)) for r in pts), default=0.0)
    if bounds and top > 0 and _ms(max(b for b in bounds if b)) > 20 * top:
        ax.set_yscale("log")  # the bound far above the data would flatten it
    ax.set_xlabel("offered rate (target QPS)")
    ax.set_ylabel("latency (ms)")
    _title(ax, "Server sweep: latency against offered rate (x: invalid run)")
    ax.legend(fontsize=8)
    return _png(fig)


def best_valid_rate(runs: Sequence[InferenceRun]) -> float | None:
    rates = [r.target_qps for r in runs if r.scenario == "Server" and r.valid and r.target_qps]
    return max(rates) if rates else None


def training_figures(t: TrainingResult) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for name, fn in (("time_to_train", time_to_train), ("eval_curves", eval_curves), ("rcp", rcp_curve)):
        png = fn(t)
        if png is not None:
            out[name] = png
    return out


def time_to_train(t: TrainingResult) -> bytes | None:
    if not any(m is not None for m in t.minutes):
        return None
    fig, ax = _figure()
    dropped = set(t.score.dropped)
    colours = [
        "#bbbbbb" if n in dropped else ("#1f77b4" if c else BOUND)
        for n, c in zip(t.runs, t.converged, strict=True)
    ]
    ax.bar(range(len(t.runs)), [m if m is not None else 0 for m in t.minutes], color=colours)
    ax.set_xticks(range(len(t.runs)), [_run(r) for r in t.runs], fontsize=8)
    if t.score.score_minutes is not None:
        ax.axhline(t.score.unscaled_minutes or t.score.score_minutes, color="#2ca02c", linestyle="--",
                   label=f"olympic mean {t.score.unscaled_minutes or t.score.score_minutes:.4g} min")
        ax.legend(fontsize=8, loc="lower right")
    ax.set_xlabel("run (grey: dropped by the olympic selection; red: did not converge)")
    ax.set_ylabel("time to train (min)")
    _title(ax, f"{t.name}: time to train")
    return _png(fig)


def eval_curves(t: TrainingResult) -> bytes | None:
    curves = [c for c in t.curves if c.x]
    if not curves:
        return None
    fig, ax = _figure()
    for c in curves:
        ax.plot(c.x, c.y, marker=".", linewidth=1, label=_run(c.run))
    if t.target is not None:
        op, value = t.target
        ax.axhline(value, color=BOUND, linestyle="--", label=f"target {op} {value:g}")
    ax.set_xlabel(curves[0].unit)
    ax.set_ylabel(curves[0].key)
    _title(ax, f"{t.name}: eval curves")
    ax.legend(fontsize=7, ncol=2)
    return _png(fig)


def rcp_curve(t: TrainingResult) -> bytes | None:
    if not t.rcp_points:
        return None
    fig, ax = _figure()
    bs = [p.batch_size for p in t.rcp_points]
    ax.plot(bs, [p.mean for p in t.rcp_points], "o", color="#8c8c8c", label="RCP mean (all)")
    pr = t.rcp_pruned
    ax.plot([p.batch_size for p in pr], [p.mean for p in pr], "-", color="#333333", label="RCP mean (pruned curve)")
    ax.plot([p.batch_size for p in pr], [p.min_mean for p in pr], "--", color=BOUND, label="minimum allowed")
    r = t.rcp
    if t.batch_size is not None and r.submission_mean is not None:
        ax.plot([t.batch_size], [r.submission_mean], "*", markersize=14, color="#2ca02c" if r.passed else BOUND,
                label=f"submission mean {r.submission_mean:.5g}")
        if r.min_allowed is not None:
            ax.plot([t.batch_size], [r.min_allowed], "_", markersize=18, color=BOUND)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("global batch size")
    ax.set_ylabel("epochs or samples to converge")
    _title(ax, f"{t.name}: RCP check ({'pass' if r.passed else 'FAIL'}, ruleset {t.ruleset})")
    ax.legend(fontsize=8)
    return _png(fig)
