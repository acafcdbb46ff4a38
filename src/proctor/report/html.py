"""One self-contained HTML file: tables, the figures inlined as PNG data URIs, no network to view it.

Every number the report shows is also in a `data-value` attribute (as the log holds it) next to
a `data-key` naming it, so a test or a script can read the report back exactly. The one inline
script only marks the page as loaded (`<body data-loaded="1">`); the page reads fine without it.
"""

from __future__ import annotations

import base64
import datetime as dt
import math
import re
from collections.abc import Callable, Iterable
from html import escape
from pathlib import Path

from proctor.loadgen.logs.detail import SHORT_RUN_VERDICT
from proctor.loadgen.results import SLO_LABELS
from proctor.report import plots
from proctor.report.collect import Report
from proctor.report.data import InferenceRun, Latency
from proctor.report.training import TrainingResult
from proctor.trees import real_root, replace

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0 auto;max-width:1200px;
padding:1em 2em;color:#222;background:#fff}
h1{font-size:1.6em;margin-bottom:.2em} h2{border-bottom:2px solid #ddd;padding-bottom:.2em;margin-top:2em}
h3{margin-bottom:.3em} .meta{color:#666;font-size:.9em}
table{border-collapse:collapse;margin:.5em 0;font-size:.92em} th,td{border:1px solid #ddd;padding:.25em .6em;
text-align:left;vertical-align:top} th{background:#f4f4f4} td.num{text-align:right;font-variant-numeric:tabular-nums}
.badge{display:inline-block;padding:.1em .6em;border-radius:.3em;color:#fff;font-weight:600;font-size:.85em}
.valid{background:#2ca02c} .invalid{background:#d62728} .unknown{background:#888} .short{background:#c77c02}
.pass{color:#2ca02c;font-weight:600} .fail{color:#d62728;font-weight:600}
figure{display:inline-block;margin:.5em 1em .5em 0;vertical-align:top} figure img{max-width:100%;border:1px solid #eee}
figcaption{font-size:.85em;color:#555} .grid{display:flex;flex-wrap:wrap} .note{color:#8a6d3b;font-size:.9em}
details{margin:.5em 0} pre{background:#f8f8f8;padding:.5em;overflow-x:auto}
.headline{border-left:4px solid #888;padding:.2em 1em;margin:.8em 0;background:#fafafa}
.headline.valid-run{border-color:#2ca02c} .headline.invalid-run{border-color:#d62728}
.headline.short-run{border-color:#c77c02}
.cause{font-size:1.1em;margin:.3em 0} summary{cursor:pointer;font-weight:600}
"""
SCRIPT = "document.body.setAttribute('data-loaded','1');"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_")[:80] or "run"


def _ms(ns: float | None) -> str:
    return "-" if ns is None else f"{ns / 1e6:,.4g} ms" if ns < 1e12 else f"{ns / 1e9:,.4g} s"


def _g(x: float | None, digits: int = 6) -> str:
    return "-" if x is None or not math.isfinite(x) else f"{x:,.{digits}g}"


def _val(key: str, value: float | int | None, shown: str) -> str:
    """A table cell with its raw number in data-value (empty when absent)."""
    raw = "" if value is None else repr(value)
    return f'<td class="num" data-key="{escape(key)}" data-value="{escape(raw)}">{escape(shown)}</td>'


def _badge(valid: bool | None, text: str | None = None) -> str:
    cls = "unknown" if valid is None else ("valid" if valid else "invalid")
    word = text or ("unknown" if valid is None else ("VALID" if valid else "INVALID"))
    return f'<span class="badge {cls}" data-verdict="{escape(word)}">{escape(word)}</span>'


def _figure(fid: str, png: bytes, caption: str) -> str:
    b64 = base64.b64encode(png).decode("ascii")
    return (f'<figure id="{escape(fid)}"><img alt="{escape(caption)}" src="data:image/png;base64,{b64}">'
            f"<figcaption>{escape(caption)}</figcaption></figure>")


CAPTIONS = {
    "latency_histogram": "Latency (from the scheduled time, the summary's basis, where the logs hold it): histogram "
    "with the target percentile, early-stopping estimate and bound",
    "latency_cdf": "Latency CDF (fraction of samples at or below a latency), its percentiles on the same basis",
    "scheduled_latency": "Latency from the scheduled time (the logged percentiles' basis): histogram and CDF",
    "latency_over_time": "Latency of each sample against its issue time",
    "lateness_over_time": "Issue lateness (issue - scheduled) of each sample's query over the run",
    "rate_over_time": "Issued and completed samples per second against the requested rate",
    "token_latency": "Time to first token and time per output token (logged percentiles)",
    "ttft": "Time to first token per sample, from the scheduled time: histogram and CDF, target percentile and bound",
    "tpot": "Time per output token per sample: histogram and CDF, target percentile and bound",
    "tokens_over_time": "Output tokens per second of the samples completed in each time bin",
    "time_to_train": "Time to train per run; grey runs are dropped by the olympic selection",
    "eval_curves": "Evaluation metric of each run against the quality target",
    "rcp": "RCP check: submission mean against the reference curve and the minimum allowed",
}


TRACE_RESOLUTION_NS = 1000  # the trace's timestamps are microseconds: closer than this is the same figure


def _at(lat: Latency | None, p: float | None) -> float | None:
    return None if lat is None or p is None else lat.percentiles.get(p)


def _causes(run: InferenceRun) -> list[str]:
    """Why the run is what it is, in the logs' own words: the reasons proctor logged, else each rule
    not met with its numbers; an incomplete run and logged errors first."""
    out: list[str] = []
    if run.incomplete:
        out.append(f"the run did not finish: {run.incomplete}")
    if run.valid is False:
        out += run.invalid_reasons or [f"{r.name} not met: {r.detail}" for r in run.rules if not r.passed]
    if run.errors:
        out.append(f"{run.errors} error(s) logged in the detail log")
    return out


def _headline_rows(run: InferenceRun) -> list[tuple[str, str, float | int | None, str, str, bool | None]]:
    """(label, key, value, shown, bound shown, met) of what decides the run: its metric, and the
    latency, TTFT and TPOT at the target percentile against their bounds."""
    rows: list[tuple[str, str, float | int | None, str, str, bool | None]] = []
    pct = run.target_percentile
    pname = f"p{pct * 100:g}" if pct is not None else "target percentile"
    if run.metric:
        name, value, unit = run.metric
        shown = _ms(value) if unit == "ns" else f"{value:,.6g} {unit}"
        bound, met = "", None
        if run.scenario in ("Server", "Offline") and run.target_qps is not None:
            bound = f"requested {_g(run.target_qps)}/s"
        rows.append((name, "headline_metric", value, shown, bound, met))
    if run.scenario == "Server" and run.target_latency_ns and run.ttft is None:  # token runs: TTFT/TPOT bind
        v = _at(run.latency, pct)
        rows.append((f"latency {pname}", "headline_latency_ns", v, _ms(v), f"≤ {_ms(run.target_latency_ns)}",
                     None if v is None else v <= run.target_latency_ns))
    for label, lat, bound_ns, key in (("TTFT", run.ttft, run.ttft_bound_ns, "ttft"),
                                      ("TPOT", run.tpot, run.tpot_bound_ns, "tpot")):
        v = _at(lat, pct)
        if v is None:
            continue
        rows.append((f"{label} {pname}", f"headline_{key}_ns", v, _ms(v),
                     f"≤ {_ms(bound_ns)}" if bound_ns else "", None if not bound_ns else v <= bound_ns))
    if run.tokens_per_second is not None:
        rows.append(("tokens/s", "headline_tokens_per_second", run.tokens_per_second,
                     _g(run.tokens_per_second), "", None))
    return rows


PASSING_WORDS = ("VALID", "DONE")  # the first words of a verdict that passed (app.session.verdict)


def _verdict_head(run: InferenceRun) -> tuple[str, str, list[str]] | None:
    """(word, first line's rest, further lines) of the verdict `proctor run` printed, when logged."""
    if not run.verdict:
        return None
    first, *more = run.verdict
    word = first.split(":", 1)[0].split(" ", 1)[0]
    if not word.isupper():  # not a verdict line: show the lines as they are
        return "", first, more
    return word, first[len(word):].removeprefix(":").strip(), more


def _short_badge() -> str:
    return f'<span class="badge short" data-verdict="{escape(SHORT_RUN_VERDICT)}">{escape(SHORT_RUN_VERDICT)}</span>'


def _run_badge(run: InferenceRun) -> str:
    """A run's verdict as `proctor run` printed it (its first word, when logged), everywhere the run
    is shown: a run valid only for settings shorter than the rules' (the short-run mark) is never a
    green VALID, since the submission checker rejects it."""
    head = _verdict_head(run)
    if head is not None and head[0]:
        if head[0] == "VALID" and run.short_run:
            return _short_badge()
        return _badge(head[0] in PASSING_WORDS, head[0])
    if run.valid and run.short_run:
        return _short_badge()
    return _badge(run.valid, run.validity)


def _headline(sid: str, run: InferenceRun) -> str:
    """What a reader looks for first: the verdict and its true cause (the words `proctor run`
    printed, when it logged them), the metric against its bound, TTFT/TPOT against theirs."""
    causes = _causes(run)
    state = "unknown" if run.valid is None else ("valid-run" if run.valid and not run.errors else "invalid-run")
    if run.valid and run.short_run:
        state = "short-run"
        causes.insert(0, f"not a submission run: {run.short_run} (the submission checker rejects it)")
    badge = _run_badge(run)
    out = [f'<div class="headline {state}" id="{sid}-headline">']
    head = _verdict_head(run)
    if head is not None:
        said, text, more = head
        passed = said in PASSING_WORDS
        short = said == "VALID" and bool(run.short_run)
        if short:  # "VALID for these settings; not a submission run: why; metric": the badge says the first part
            text = text.removeprefix(SHORT_RUN_VERDICT.removeprefix("VALID").strip()).removeprefix(":").strip()
        state = "short-run" if short else ("valid-run" if passed else "invalid-run")
        out[0] = f'<div class="headline {state}" id="{sid}-headline">'
        out.append(f'<p class="cause" id="{sid}-cause">{badge if said else ""} {escape(text)}</p>')
        if more:
            out.append("<ul>" + "".join(f"<li>{escape(line.strip().removeprefix('- '))}</li>" for line in more)
                       + "</ul>")
    elif run.valid and not causes:
        metric = f": {run.metric[0]} = " + (_ms(run.metric[1]) if run.metric[2] == "ns" else
                                            f"{run.metric[1]:,.6g} {run.metric[2]}") if run.metric else ""
        out.append(f'<p class="cause" id="{sid}-cause">{badge} {escape(metric.lstrip(": "))}</p>')
    elif len(causes) == 1:
        out.append(f'<p class="cause" id="{sid}-cause">{badge} {escape(causes[0])}</p>')
    else:
        out.append(f'<p class="cause" id="{sid}-cause">{badge} {len(causes)} causes:</p><ul>'
                   + "".join(f"<li>{escape(c)}</li>" for c in causes) + "</ul>")
    rows = _headline_rows(run)
    if rows:
        out.append(f'<table id="{sid}-headline-table"><tr><th>what</th><th>value</th><th>bound</th>'
                   "<th>verdict</th></tr>")
        for label, key, v, shown, bound, met in rows:
            verdict = "" if met is None else (
                f'<td class="{"pass" if met else "fail"}">{"met" if met else "NOT met"}</td>')
            out.append(f"<tr><td>{escape(label)}</td>{_val(key, v, shown)}<td>{escape(bound)}</td>"
                       f"{verdict or '<td></td>'}</tr>")
        out.append("</table>")
    if run.short_run and not run.valid:
        out.append(f'<p class="note">Not a submission run: {escape(run.short_run)}</p>')
    out.append("</div>")
    return "\n".join(out)


def _trace_rows(run: InferenceRun) -> tuple[list[tuple[str, str, float | int | None, str, bool]], int]:
    """The trace's recomputed figures as (label, key, value, shown, differs), and how many equal the
    logged one (within the trace's resolution): only those that differ are shown to a reader."""
    rows: list[tuple[str, str, float | int | None, str, bool]] = []
    same = 0
    for label, lat, logged, key in (
        ("latency from scheduled", run.trace_scheduled if run.scenario == "Server" else None, run.latency, "sched"),
        ("TTFT", run.trace_ttft, run.ttft, "ttft"),
        ("TPOT", run.trace_tpot, run.tpot, "tpot"),
    ):
        if lat is None:
            continue
        pairs: list[tuple[str, float | None, float | None]] = [
            (f"p{p * 100:g}", v, _at(logged, p)) for p, v in sorted(lat.percentiles.items())
        ]
        pairs.append(("max", lat.max, None if logged is None else logged.max))
        for name, v, ref in pairs:
            differs = v is not None and (ref is None or abs(v - ref) > TRACE_RESOLUTION_NS)
            same += not differs
            shown = _ms(v) + ("" if ref is None or not differs else f" (logged {_ms(ref)})")
            rows.append((f"{label} {name} (trace)", f"trace_{key}_{name}_ns", v, shown, differs))
    return rows, same


def _run_lines(sid: str, run: InferenceRun) -> list[str]:
    """What the terminal and the summary's `PROCTOR:` lines say beside the MLPerf verdict: per-request
    SLO attainment and goodput (from the detail log's counts), the warm-up and the expected length."""
    out: list[str] = []
    slo = run.slo
    if slo is not None:
        targets = ", ".join(f"{SLO_LABELS.get(k, k)} ≤ {v / 1e6:g} ms" for k, v in slo.targets_ns.items())
        out.append(f'<h3>Per-request SLO attainment</h3><table id="{sid}-slo"><tr><th>what</th><th>value</th></tr>')
        rows: list[tuple[str, str, float | int | None, str]] = [
            ("targets", "slo_targets", None, targets + (f" ({slo.source})" if slo.source else "")),
            ("SLO attainment (met every target)", "slo_attainment", slo.share,
             f"{slo.share:.2%}: {slo.met_all:,} of {slo.judged:,} requests"),
        ]
        rows += [(f"within the {SLO_LABELS.get(k, k)} target", f"slo_met_{k}", n, f"{n:,} of {slo.judged:,}")
                 for k, n in slo.met.items()]
        if slo.goodput_per_s is not None:
            rows.append(("goodput (requests/s that met every target)", "goodput_per_s", slo.goodput_per_s,
                         f"{slo.goodput_per_s:,.2f} requests/s"))
        if slo.requests_per_s is not None:
            rows.append(("requests/s completed", "requests_per_s", slo.requests_per_s,
                         f"{slo.requests_per_s:,.2f} requests/s"))
        out += [f"<tr><td>{escape(label)}</td>{_val(key, v, shown)}</tr>" for label, key, v, shown in rows]
        out.append("</table><p class=\"meta\">The MLPerf verdict judges the target percentile against the "
                   "bounds; these count each request against the targets.</p>")
    if run.warmup:
        out.append(f'<p class="meta" id="{sid}-warmup">{escape(run.warmup)}</p>')
    if run.expected_length:
        out.append(f'<p class="meta" id="{sid}-expected-length">{escape(run.expected_length)}</p>')
    return out


def _run_section(i: int, run: InferenceRun, figs: dict[str, bytes]) -> str:
    sid = f"run-{i}"
    out = [f'<section class="run" id="{sid}" data-name="{escape(run.name)}">',
           f"<h2>{escape(run.name)} {_run_badge(run)}</h2>",
           f'<p class="meta">{escape(run.scenario or "?")} · {escape(run.mode or "?")} · SUT '
           f'{escape(run.sut_name or "?")} · {escape(str(run.directory))}</p>',
           _headline(sid, run), *_run_lines(sid, run)]
    trace, same = _trace_rows(run)
    differing = [r for r in trace if r[4]]
    if differing:
        out.append(f'<p class="note" id="{sid}-trace-differs">The trace differs from the logged figures: '
                   + "; ".join(f"{escape(label)} {escape(shown)}" for label, _, _, shown, _ in differing) + "</p>")
    out.append('<div class="grid">')
    for name, png in figs.items():
        out.append(_figure(f"{sid}-{name}", png, CAPTIONS.get(name, name)))
    out.append("</div>")
    out.append(f'<h3>Validity</h3><table id="{sid}-rules"><tr><th>rule</th><th>verdict</th><th>numbers</th>'
               "<th>decided</th></tr>")
    for r in run.rules:
        out.append(f'<tr data-rule="{escape(r.name)}" data-passed="{str(r.passed).lower()}"><td>{escape(r.name)}</td>'
                   f'<td class="{"pass" if r.passed else "fail"}">{"met" if r.passed else "NOT met"}</td>'
                   f"<td>{escape(r.detail)}</td><td>{escape(r.source)}</td></tr>")
    out.append("</table>")
    rows: list[tuple[str, str, float | int | None, str]] = []
    if run.metric:
        name, value, unit = run.metric
        rows.append((name, "metric", value, _ms(value) if unit == "ns" else f"{value:,.6g} {unit}"))
    for label, key, v in (("min latency", "min_ns", run.latency.min), ("mean latency", "mean_ns", run.latency.mean),
                          ("max latency", "max_ns", run.latency.max)):
        rows.append((label, key, v, _ms(v)))
    for p, v in sorted(run.latency.percentiles.items()):
        rows.append((f"p{p * 100:g} latency", f"p{p * 100:g}_ns", v, _ms(v)))
    if run.early_stopping_estimate_ns is not None:
        rows.append(("early-stopping estimate", "early_stopping_ns", run.early_stopping_estimate_ns,
                     _ms(run.early_stopping_estimate_ns)))
    if run.target_latency_ns:
        rows.append(("latency bound", "target_latency_ns", run.target_latency_ns, _ms(run.target_latency_ns)))
    if run.target_qps is not None:
        rows.append(("requested rate (target QPS)", "target_qps", run.target_qps, _g(run.target_qps)))
    if run.scheduled_sps is not None:
        rows.append(("scheduled samples/s", "scheduled_sps", run.scheduled_sps, _g(run.scheduled_sps)))
    if run.completed_sps is not None:
        rows.append(("completed samples/s", "completed_sps", run.completed_sps, _g(run.completed_sps)))
    if run.query_count is not None:
        rows.append(("queries", "query_count", run.query_count, f"{run.query_count:,}"))
    for k, v in run.lateness_ns.items():
        rows.append((f"issue lateness {k}", f"lateness_{k}_ns", v, f"{v / 1e3:,.1f} us"))
    for label, lat, key in (("TTFT", run.ttft, "ttft"), ("TPOT", run.tpot, "tpot")):
        if lat is not None:
            for p, v in sorted(lat.percentiles.items()):
                rows.append((f"{label} p{p * 100:g}", f"{key}_p{p * 100:g}_ns", v, _ms(v)))
    if run.ttft_bound_ns:
        rows.append(("TTFT bound", "ttft_bound_ns", run.ttft_bound_ns, _ms(run.ttft_bound_ns)))
    if run.tpot_bound_ns:
        rows.append(("TPOT bound", "tpot_bound_ns", run.tpot_bound_ns, _ms(run.tpot_bound_ns)))
    if run.tokens_per_second is not None:
        rows.append(("tokens/s", "tokens_per_second", run.tokens_per_second, _g(run.tokens_per_second)))
    if run.samples is not None:
        rows.append(("samples in the trace", "trace_samples", int(run.samples.latency_ns.size),
                     f"{run.samples.latency_ns.size:,}"))
    if run.accuracy_entries is not None:
        rows.append(("accuracy log entries", "accuracy_entries", run.accuracy_entries, f"{run.accuracy_entries:,}"))
    rows.append(("errors / warnings", "errors", run.errors, f"{run.errors} / {run.warnings}"))
    out.append(f'<details id="{sid}-numbers-all"><summary>All numbers ({len(rows) + len(differing)} rows)</summary>')
    if same:
        out.append(f'<p class="meta" id="{sid}-trace-same" data-key="trace_same_as_logged" data-value="{same}">'
                   f"{same} figure(s) recomputed from the trace equal the logged ones (within the trace's 1 us "
                   "resolution) and are not repeated here.</p>")
    out.append(f'<table id="{sid}-numbers"><tr><th>what</th><th>value</th></tr>')
    for label, key, v, shown in rows:
        out.append(f"<tr><td>{escape(label)}</td>{_val(key, v, shown)}</tr>")
    for label, key, v, shown, differs in trace:  # a trace figure equal to the logged one: kept for
        hidden = "" if differs else " hidden"  # scripts (data-value), not shown to a reader
        out.append(f"<tr{hidden}><td>{escape(label)}</td>{_val(key, v, shown)}</tr>")
    out.append("</table></details>")
    for note in run.notes:
        out.append(f'<p class="note">{escape(note)}</p>')
    if run.early_stopping_text:
        out.append(f"<details><summary>Early stopping (as logged)</summary><pre>{escape(run.early_stopping_text)}"
                   "</pre></details>")
    if run.accuracy_text:
        out.append(f"<details><summary>accuracy.txt</summary><pre>{escape(run.accuracy_text)}</pre></details>")
    out.append(f'<details id="{sid}-settings"><summary>Effective settings</summary><table>'
               "<tr><th>setting</th><th>value</th></tr>")
    for k, v in run.settings.items():
        out.append(f"<tr><td>{escape(k)}</td><td>{escape(str(v)[:300])}</td></tr>")
    out.append("</table></details></section>")
    return "\n".join(out)


def _comparison(runs: list[InferenceRun], figs: dict[str, bytes]) -> str:
    out = ['<section id="comparison"><h2>Comparison</h2><table id="comparison-table"><tr><th>run</th>'
           "<th>scenario</th><th>verdict</th><th>metric</th><th>p50</th><th>p90</th><th>p99</th>"
           "<th>target QPS</th><th>errors</th></tr>"]
    for i, r in enumerate(runs):
        metric = r.metric
        shown = "-" if metric is None else (_ms(metric[1]) if metric[2] == "ns" else f"{metric[1]:,.6g} {metric[2]}")
        out.append(
            f'<tr data-run="{i}"><td><a href="#run-{i}">{escape(r.name)}</a></td><td>{escape(r.scenario or "?")}</td>'
            f"<td>{_run_badge(r)}</td>{_val('metric', None if metric is None else metric[1], shown)}"
            + "".join(_val(f"p{p * 100:g}_ns", r.latency.percentiles.get(p), _ms(r.latency.percentiles.get(p)))
                      for p in (0.5, 0.9, 0.99))
            + _val("target_qps", r.target_qps, _g(r.target_qps))
            + _val("errors", r.errors, str(r.errors)) + "</tr>"
        )
    out.append("</table>")
    best = plots.best_valid_rate(runs)
    if "sweep" in figs:
        out.append(f'<p id="sweep-best" data-value="{"" if best is None else repr(best)}">Highest valid offered '
                   f"rate: <b>{'none valid' if best is None else f'{best:g} samples/s'}</b></p>")
    out.append('<div class="grid">')
    for name, cap in (("comparison", "Latency percentiles by run"),
                      ("sweep", "Server sweep: latency percentiles against offered rate, with the bound")):
        if name in figs:
            out.append(_figure(f"fig-{name}", figs[name], cap))
    out.append("</div></section>")
    return "\n".join(out)


def _training_section(i: int, t: TrainingResult, figs: dict[str, bytes]) -> str:
    sid = f"training-{i}"
    sc, r = t.score, t.rcp
    out = [f'<section class="training" id="{sid}" data-name="{escape(t.name)}">',
           f"<h2>{escape(t.name)} {_badge(sc.valid and r.passed, 'VALID' if sc.valid and r.passed else 'INVALID')}</h2>",
           f'<p class="meta">training · {escape(t.benchmark or "?")} · batch size {_g(t.batch_size)} · ruleset '
           f"{escape(t.ruleset)} · {escape(str(t.directory))}</p>",
           f'<h3>Time to train</h3><table id="{sid}-runs"><tr><th>run</th><th>minutes</th><th>converged</th>'
           "<th>olympic</th><th>to converge</th></tr>"]
    dropped = set(sc.dropped)
    for name, m, c, s in zip(t.runs, t.minutes, t.converged, t.samples_to_converge, strict=True):
        sel = "dropped" if name in dropped else ("kept" if c else "not converged")
        out.append(f'<tr data-run="{escape(name)}" data-olympic="{sel}"><td>{escape(name)}</td>'
                   f"{_val('minutes', m, _g(m))}<td>{'yes' if c else 'no'}</td><td>{sel}</td>{_val('to_converge', s, _g(s))}</tr>")
    out.append("</table>")
    out.append(f'<table id="{sid}-score"><tr><td>score (olympic mean, minutes)</td>'
               f"{_val('score_minutes', sc.score_minutes, _g(sc.score_minutes))}</tr>"
               f"<tr><td>scaling factor</td>{_val('scaling_factor', sc.scaling_factor, _g(sc.scaling_factor))}</tr>"
               f"<tr><td>valid</td><td>{'yes' if sc.valid else 'no'}</td></tr></table>")
    out.append(f'<h3>RCP check</h3><table id="{sid}-rcp"><tr><th>submission mean</th><th>RCP mean</th>'
               f"<th>minimum allowed</th><th>RCP</th><th>verdict</th></tr><tr>"
               f"{_val('submission_mean', r.submission_mean, _g(r.submission_mean))}"
               f"{_val('rcp_mean', r.rcp_mean, _g(r.rcp_mean))}{_val('min_allowed', r.min_allowed, _g(r.min_allowed))}"
               f"<td>{escape(r.rcp_name or r.rcp)}</td><td class=\"{'pass' if r.passed else 'fail'}\" "
               f'data-passed="{str(r.passed).lower()}">{escape(r.message)}</td></tr></table>')
    if t.target is not None:
        out.append(f'<p id="{sid}-target" data-value="{t.target[1]!r}">Quality target: {escape(t.target[0])} '
                   f"{t.target[1]:g}</p>")
    out.append('<div class="grid">')
    for name, png in figs.items():
        out.append(_figure(f"{sid}-{name}", png, CAPTIONS.get(name, name)))
    out.append("</div>")
    for f in [*sc.findings, *r.findings]:
        if f.severity.value != "info":
            out.append(f'<p class="note">{escape(f.severity.value)}: {escape(f.rule)}: {escape(f.message)}</p>')
    for note in t.notes:
        out.append(f'<p class="note">{escape(note)}</p>')
    out.append("</section>")
    return "\n".join(out)


def figures(rep: Report) -> dict[str, dict[str, bytes]]:
    """Every figure of the report: section id -> figure name -> PNG."""
    out: dict[str, dict[str, bytes]] = {}
    if len(rep.runs) > 1:
        group: dict[str, bytes] = {}
        for name, fn in (("comparison", plots.comparison), ("sweep", plots.server_sweep)):
            png = fn(rep.runs)
            if png is not None:
                group[name] = png
        out["comparison"] = group
    for i, run in enumerate(rep.runs):
        out[f"run-{i}"] = plots.inference_figures(run)
    for i, t in enumerate(rep.trainings):
        out[f"training-{i}"] = plots.training_figures(t)
    return out


FIGURES_LEFT_OUT = ("Figures left out: the run was stopped, and drawing them would delay the stop by seconds; "
                    "`proctor report` on this folder draws them from the same logs.")


def render(rep: Report, figs: dict[str, dict[str, bytes]] | None = None, *, version: str = "", note: str = "") -> str:
    """The page; `note`: a line under the title (what the page leaves out and why)."""
    figs = figures(rep) if figs is None else figs
    n = len(rep.runs) + len(rep.trainings)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width,initial-scale=1">',
        f"<title>proctor report: {n} run{'s' if n != 1 else ''}</title><style>{CSS}</style></head>",
        '<body data-loaded="0">',
        f'<h1 id="title">proctor report</h1><p class="meta">{n} run{"s" if n != 1 else ""} · generated '
        f"{dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}{' · proctor ' + escape(version) if version else ''}</p>",
    ]
    if note:
        parts.append(f'<p class="note" id="page-note">{escape(note)}</p>')
    parts.append(_overview(rep))
    if len(rep.runs) > 1:
        parts.append(_comparison(rep.runs, figs.get("comparison", {})))
    for i, run in enumerate(rep.runs):
        parts.append(_run_section(i, run, figs.get(f"run-{i}", {})))
    for i, t in enumerate(rep.trainings):
        parts.append(_training_section(i, t, figs.get(f"training-{i}", {})))
    if rep.skipped:
        parts.append('<section id="skipped"><h2>Not read</h2><ul>'
                     + "".join(f"<li>{escape(d)}: {escape(why)}</li>" for d, why in rep.skipped) + "</ul></section>")
    parts.append(f"<script>{SCRIPT}</script></body></html>")
    return "\n".join(parts)


def _gist(run: InferenceRun) -> str:
    """The overview's line for a run: its metric, then its first cause when it has one."""
    metric = ""
    if run.metric:
        name, value, unit = run.metric
        metric = f"{name} = " + (_ms(value) if unit == "ns" else f"{value:,.6g} {unit}")
    head = _verdict_head(run)
    if head is not None:
        return " · ".join(x for x in (metric, head[1]) if x)
    causes = _causes(run)
    more = f" (+{len(causes) - 1} more)" if len(causes) > 1 else ""
    return " · ".join(x for x in (metric, causes[0] + more if causes else "") if x)


def _overview(rep: Report) -> str:
    items = [f'<li><a href="#run-{i}">{escape(r.name)}</a> {_run_badge(r)} {escape(_gist(r))}</li>'
             for i, r in enumerate(rep.runs)]
    items += [f'<li><a href="#training-{i}">{escape(t.name)}</a> '
              f"{_badge(t.score.valid and t.rcp.passed, 'VALID' if t.score.valid and t.rcp.passed else 'INVALID')}</li>"
              for i, t in enumerate(rep.trainings)]
    return '<nav id="overview"><ul>' + "".join(items) + "</ul></nav>"


def png_names(rep: Report, figs: dict[str, dict[str, bytes]]) -> Iterable[tuple[str, bytes]]:
    """(file name, PNG) for `--png DIR`: `<section>_<run>_<figure>.png`, unique and file-system safe."""
    label: dict[str, Callable[[], str]] = {}
    for i, r in enumerate(rep.runs):
        label[f"run-{i}"] = lambda i=i, r=r: f"run{i:02d}_{_slug(r.name)}"  # type: ignore[misc]
    for i, t in enumerate(rep.trainings):
        label[f"training-{i}"] = lambda i=i, t=t: f"training{i:02d}_{_slug(t.name)}"  # type: ignore[misc]
    for sid, group in figs.items():
        prefix = label[sid]() if sid in label else sid
        for name, png in group.items():
            yield f"{prefix}_{name}.png", png


def write(rep: Report, out: Path, png_dir: Path | None = None, *, version: str = "",
          draw: bool = True) -> list[Path]:
    """Write the HTML (and the PNGs); returns the files written. `draw=False`: no figure drawn (the
    page says so), so matplotlib is neither imported nor run."""
    figs = figures(rep) if draw else {}
    written: list[Path] = []
    out.parent.mkdir(parents=True, exist_ok=True)
    out = real_root(out.parent) / out.name
    page = render(rep, figs, version=version, note="" if draw else FIGURES_LEFT_OUT)
    replace(out, page.encode("utf-8"))  # never through a link (TreeError)
    written.append(out)
    if png_dir is not None:
        png_dir.mkdir(parents=True, exist_ok=True)
        png_dir = real_root(png_dir)
        for name, png in png_names(rep, figs):
            replace(png_dir / name, png)
            written.append(png_dir / name)
    return written

