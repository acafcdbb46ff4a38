"""An inference run's logs read into plain numbers for the report (no plotting, no HTML here).

The detail log and the summary give the verdict, each validity rule with its numbers (recomputed
the official way by `proctor.loadgen.logs.recompute`), the latency percentiles and the effective
settings. Per-sample latencies are not in either: they come from proctor's compact samples file
(mlperf_log_samples.bin, `proctor.loadgen.logs.samples`, written by every proctor run) or, without
it, from the trace (mlperf_log_trace.json, written with `--trace`: one `Sample` begin event per
sample with its issue time and its latency from that issue). Both give the same numbers; proctor's
trace also gives each sample its query's scheduled time and, in LLM runs, its first-token time and
token count (docs/architecture.md); from them the report recomputes latency from the schedule (the
Server results' basis), issue lateness, TTFT and TPOT exactly as the summary does. The official
LoadGen leaves the trace empty unless tracing is on and writes none of proctor's args, so a report
of an official run shows the percentiles only, and says so in one line.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from proctor.errors import LogFormatError
from proctor.loadgen.logs.detail import EXPECTED_KEY, SHORT_RUN_KEY, VERDICT_KEY, WARMUP_KEY
from proctor.loadgen.logs.numbers import percentile_label
from proctor.loadgen.logs.reader import DetailLogData, iter_lines, open_regular, read_detail, read_summary
from proctor.loadgen.logs.recompute import recompute
from proctor.loadgen.logs.samples import MAX_TIME_NS, read_samples
from proctor.loadgen.logs.verdict import LINE_CHARS, VERDICT_LINES, read_verdict
from proctor.loadgen.results import SLO_NAMES, LatencyStats, exact_sum
from proctor.trees import is_file, read_bytes
from proctor.typed_records import field, record

DETAIL, SUMMARY, TRACE, ACCURACY, SAMPLES = (
    "mlperf_log_detail.txt",
    "mlperf_log_summary.txt",
    "mlperf_log_trace.json",
    "mlperf_log_accuracy.json",
    "mlperf_log_samples.bin",
)
PERCENTILES = (0.5, 0.9, 0.95, 0.97, 0.99, 0.999)
MAX_TRACE_SAMPLES = 50_000_000  # beyond this the trace is not read further (memory stays bounded)
MAX_ARG_NS = MAX_TIME_NS  # a trace time or count beyond this (104 days in ns) is unreadable, not a run's
_ESTIMATE = re.compile(r"Early stopping (\d+(?:\.\d+)?)th percentile estimate: (\d+)")
_SUMMARY_PCT = re.compile(r"^(\d+\.\d+) percentile latency \(ns\)$")


@record(slots=True)
class Latency:
    """Latency statistics in ns: min, mean, max and percentiles (fraction -> ns)."""

    min: float | None = None
    mean: float | None = None
    max: float | None = None
    percentiles: dict[float, float] = field(default_factory=dict)


@record(slots=True)
class Rule:
    """One validity rule: its verdict, the numbers it compares, and whether proctor recomputed it."""

    name: str
    passed: bool
    detail: str
    source: str = "logged"  # recomputed | logged


@record(slots=True)
class Samples:
    """Per-sample data from the trace: issue time (s from the run's start) and latency from issue (ns);
    from proctor's args, each relative to the issue (int64 ns): the query's scheduled time, the first
    token (`has_first` marks the samples that have one) and the token count. None: not in the trace."""

    issue_s: np.ndarray
    latency_ns: np.ndarray
    truncated: bool = False
    scheduled_ns: np.ndarray | None = None
    first_token_ns: np.ndarray | None = None
    has_first: np.ndarray | None = None
    n_tokens: np.ndarray | None = None

    @property
    def done_s(self) -> np.ndarray:
        return self.issue_s + self.latency_ns / 1e9

    def from_scheduled_ns(self) -> np.ndarray | None:
        """Latency counted from the scheduled time (the basis of the logged Server percentiles)."""
        if self.scheduled_ns is None:
            return None
        return self.latency_ns.astype(np.int64) - self.scheduled_ns

    def lateness_ns(self) -> np.ndarray | None:
        """Issue lateness of each sample's query: issue - scheduled."""
        return None if self.scheduled_ns is None else -self.scheduled_ns

    def ttft_ns(self) -> np.ndarray | None:
        """Time to first token from the scheduled time, of the samples with a first token (results.py's)."""
        if self.first_token_ns is None or self.has_first is None or self.scheduled_ns is None:
            return None
        return (self.first_token_ns - self.scheduled_ns)[self.has_first]

    def tpot_ns(self) -> np.ndarray | None:
        """Time per output token, results.py's definition: (complete - first token) // max(n_tokens - 1, 1)."""
        if self.first_token_ns is None or self.has_first is None or self.n_tokens is None:
            return None
        h = self.has_first
        return (self.latency_ns.astype(np.int64)[h] - self.first_token_ns[h]) // np.maximum(self.n_tokens[h] - 1, 1)


@record(slots=True)
class SLOAttainment:
    """Per-request SLO attainment as the detail log holds it (`proctor_slo_*`, loadgen.results.Attainment):
    the targets (ns, by name), where they come from, the requests within each and within every target,
    the requests judged, the run's requests/s and the goodput (those that met every target, per second).
    The share is recomputed from the counts."""

    targets_ns: dict[str, float]
    source: str
    met: dict[str, int]
    met_all: int
    judged: int
    requests_per_s: float | None = None
    goodput_per_s: float | None = None

    @property
    def share(self) -> float:
        return self.met_all / self.judged if self.judged else 0.0


@record(slots=True)
class InferenceRun:
    """One inference run's report data, whatever of the four logs it has."""

    name: str
    directory: Path
    files: dict[str, Path] = field(default_factory=dict)
    scenario: str | None = None
    mode: str | None = None
    sut_name: str | None = None
    validity: str | None = None  # VALID / INVALID as logged
    metric: tuple[str, float, str] | None = None  # (name, value, unit)
    rules: list[Rule] = field(default_factory=list)
    invalid_reasons: list[str] = field(default_factory=list)
    latency: Latency = field(default_factory=Latency)
    ttft: Latency | None = None
    tpot: Latency | None = None
    tokens_per_second: float | None = None
    target_percentile: float | None = None
    target_latency_ns: float | None = None
    ttft_bound_ns: float | None = None
    tpot_bound_ns: float | None = None
    early_stopping_estimate_ns: float | None = None
    early_stopping_text: str = ""
    target_qps: float | None = None
    scheduled_sps: float | None = None
    completed_sps: float | None = None
    query_count: int | None = None
    lateness_ns: dict[str, float] = field(default_factory=dict)  # p50 / p99 / max
    # from the trace's per-sample args, computed the summary's way (None: not in the trace)
    trace_scheduled: Latency | None = None
    trace_ttft: Latency | None = None
    trace_tpot: Latency | None = None
    settings: dict[str, Any] = field(default_factory=dict)  # effective_* without the prefix
    samples: Samples | None = None
    errors: int = 0
    warnings: int = 0
    short_run: str | None = None
    incomplete: str | None = None
    verdict: list[str] = field(default_factory=list)  # the lines `proctor run` printed (loadgen.logs.verdict)
    slo: SLOAttainment | None = None  # proctor_slo_*: per-request SLO attainment and goodput
    warmup: str | None = None  # proctor_warmup: what the SUT sent before the timed part
    expected_length: str | None = None  # proctor_expected_length: the run's expected length and why
    accuracy_entries: int | None = None
    accuracy_text: str | None = None  # accuracy.txt next to the logs (submission layout)
    notes: list[str] = field(default_factory=list)

    @property
    def valid(self) -> bool | None:
        return None if self.validity is None else self.validity == "VALID"


def _num(v: Any) -> float | None:
    """A finite number from a log value, else None (strings like "1e400" included)."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int | float):
        f = float(v)
        return f if math.isfinite(f) else None
    if isinstance(v, str):
        try:
            f = float(v)
        except ValueError:
            return None
        return f if math.isfinite(f) else None
    return None


def _text(v: Any, limit: int = 2000) -> str:
    if isinstance(v, str):
        return v[:limit]
    try:
        return orjson.dumps(v, option=orjson.OPT_SERIALIZE_NUMPY).decode()[:limit]
    except TypeError:  # a whole number past 64 bits, which a log may hold (json.loads reads it)
        return json.dumps(v, default=repr)[:limit]


def is_run_dir(d: Path) -> bool:
    return is_file(d / DETAIL) or is_file(d / SUMMARY)  # a link is never followed (proctor.trees)


def read_run(directory: str | Path, *, name: str | None = None, read_trace: bool = True) -> InferenceRun:
    """Read one run folder; raise LogFormatError when it holds neither a detail log nor a summary."""
    d = Path(directory)
    run = InferenceRun(name=name or d.name or str(d), directory=d)
    for key, fname in (("detail", DETAIL), ("summary", SUMMARY), ("trace", TRACE), ("accuracy", ACCURACY),
                       ("samples", SAMPLES)):
        if is_file(d / fname):
            run.files[key] = d / fname
    if "detail" not in run.files and "summary" not in run.files:
        raise LogFormatError(f"no {DETAIL} or {SUMMARY}: not a LoadGen run folder", file=str(d))
    summary = read_summary(run.files["summary"]) if "summary" in run.files else None
    if "detail" in run.files:
        _from_detail(run, read_detail(run.files["detail"], keep_entries=False))
    if summary is not None:
        _from_summary(run, summary)
    verdict = read_verdict(d)  # the verdict as printed, beside the logs (older logs: their detail record)
    if verdict is not None:
        run.verdict = verdict
    if run.incomplete is None and run.validity is None and _summary_missing(run):
        # a process killed before it closed its logs (SIGKILL, out of memory, power) or still running:
        # whatever the detail log holds so far is not a finished run's
        run.incomplete = "the logs stop before the run's end (no summary was written): killed, or still running"
    if read_trace and "samples" in run.files:
        run.samples = read_samples_file(run.files["samples"], run.notes)
    if read_trace and run.samples is None and "trace" in run.files:
        run.samples = read_trace_samples(run.files["trace"], run.notes)
    _trace_stats(run)
    if "accuracy" in run.files:
        run.accuracy_entries = _count_accuracy(run.files["accuracy"])
    acc_txt = d / "accuracy.txt"
    if is_file(acc_txt) and acc_txt.stat().st_size < 64 << 10:
        run.accuracy_text = read_bytes(acc_txt, 64 << 10).decode("utf-8", "replace")
    return run


def _summary_missing(run: InferenceRun) -> bool:
    path = run.files.get("summary")
    try:
        return path is None or path.stat().st_size == 0
    except OSError:
        return True


def latency_stats(values: np.ndarray | None, pct: float, count: int | None = None) -> Latency | None:
    """The summary's order statistics (results.LatencyStats) of per-sample values, as a Latency; the
    mean from the exact sum (the values came from a file: an int64 sum of them may wrap)."""
    if values is None or values.size == 0:
        return None
    v = values.astype(np.int64)
    st = LatencyStats.of(v, pct, count=count)
    mean = exact_sum(v) // (values.size if count is None else count)
    lat = Latency(float(st.min), float(mean), float(st.max), {p: float(v) for p, v in st.percentiles.items()})
    lat.percentiles[pct] = float(st.target)
    return lat


def _trace_stats(run: InferenceRun) -> None:
    """Statistics from the trace's args, and one line for each thing the trace cannot show."""
    s = run.samples
    if s is None:
        run.notes.append(
            "per-sample latencies are not in these logs (the trace is absent or empty: the official "
            "LoadGen writes it only with tracing on); distributions are drawn from the logged percentiles"
        )
        return
    pct = run.target_percentile or (0.9 if run.scenario == "SingleStream" else 0.99)
    run.trace_scheduled = latency_stats(s.from_scheduled_ns(), pct)
    count = int(s.latency_ns.size)  # the summary divides and indexes TTFT/TPOT by the completed samples
    run.trace_ttft = latency_stats(s.ttft_ns(), pct, count)
    run.trace_tpot = latency_stats(s.tpot_ns(), pct, count)
    if run.scenario == "Server" and s.scheduled_ns is None:
        run.notes.append(
            "this trace holds no scheduled time per sample (an official or older proctor trace): the figures "
            "time each sample from its actual issue, while the logged percentiles and the validity rules time it "
            "from its scheduled issue, and issue lateness over time is not drawn"
        )
    if run.ttft is not None and run.scenario != "Offline" and run.trace_ttft is None:
        run.notes.append(
            "this trace holds no first-token time or token count per sample (an official or older proctor "
            "trace): TTFT and TPOT are drawn from the logged percentiles, tokens/s over time is not drawn"
        )


def _latency(g: Any, prefix: str, suffix: str, mins: str, means: str, maxs: str) -> Latency:
    lat = Latency(_num(g(mins)), _num(g(means)), _num(g(maxs)))
    for p in PERCENTILES:
        v = _num(g(f"{prefix}{percentile_label(p)}{suffix}"))
        if v is not None:
            lat.percentiles[p] = v
    return lat


def _from_detail(run: InferenceRun, log: DetailLogData) -> None:
    g = log.get
    run.scenario = str(g("effective_scenario") or g("requested_scenario") or "") or None
    run.mode = str(g("effective_test_mode") or "") or None
    run.sut_name = None if g("sut_name") is None else _text(g("sut_name"), 200)
    run.validity = None if g("result_validity") is None else _text(g("result_validity"), 20)
    run.settings = {k[len("effective_") :]: v for k, v in sorted(log.values.items()) if k.startswith("effective_")}
    run.target_percentile = _num(g("effective_target_latency_percentile"))
    run.target_latency_ns = _num(g("effective_target_latency_ns")) or None
    run.ttft_bound_ns = _num(g("requested_server_ttft_latency"))
    run.tpot_bound_ns = _num(g("requested_server_tpot_latency"))
    run.target_qps = _num(g("effective_target_qps"))
    run.scheduled_sps = _num(g("result_scheduled_samples_per_sec"))
    run.completed_sps = _num(g("result_completed_samples_per_sec"))
    qc = _num(g("result_query_count"))
    run.query_count = None if qc is None else int(qc)
    if run.scenario == "MultiStream" and "result_mean_query_latency_ns" in log:  # the metric is per query
        run.latency = _latency(g, "result_", "_percentile_per_query_latency_ns", "result_min_query_latency_ns",
                               "result_mean_query_latency_ns", "result_max_query_latency_ns")
    else:
        run.latency = _latency(g, "result_", "_percentile_latency_ns", "result_min_latency_ns",
                               "result_mean_latency_ns", "result_max_latency_ns")
    if "result_first_token_mean_latency_ns" in log:
        run.ttft = _latency(g, "result_first_token_", "_percentile_latency_ns", "result_first_token_min_latency_ns",
                            "result_first_token_mean_latency_ns", "result_first_token_max_latency_ns")
        run.tpot = _latency(g, "result_time_per_output_token_", "_percentile_ns", "result_time_to_output_token_min",
                            "result_time_to_output_token_mean", "result_time_to_output_token_max")
        run.tokens_per_second = _num(g("result_completed_tokens_per_second")) or _num(g("result_tokens_per_second"))
    for k in ("p50", "p99", "max"):
        v = _num(g(f"proctor_issue_lateness_{k}_ns"))
        if v is not None:
            run.lateness_ns[k] = v
    es_text = g("early_stopping_result") or g("early_stopping_ttft_result")
    if es_text is not None:
        run.early_stopping_text = _text(es_text)
    run.errors, run.warnings = log.n_errors, log.n_warnings
    reasons = g("proctor_invalid_reasons")
    if isinstance(reasons, list):
        run.invalid_reasons = [_text(r, 500) for r in reasons[:50]]
    elif g("result_invalid_reason") is not None:
        run.invalid_reasons = [_text(g("result_invalid_reason"), 500)]
    run.short_run = None if g(SHORT_RUN_KEY) is None else _text(g(SHORT_RUN_KEY), 500)
    run.incomplete = None if g("proctor_run_incomplete") is None else _text(g("proctor_run_incomplete"), 500)
    verdict = g(VERDICT_KEY)  # logs written before loadgen.logs.verdict
    if isinstance(verdict, list):
        run.verdict = [_text(line, LINE_CHARS) for line in verdict[:VERDICT_LINES]]
    run.warmup = None if g(WARMUP_KEY) is None else _text(g(WARMUP_KEY), 500)
    run.expected_length = None if g(EXPECTED_KEY) is None else _text(g(EXPECTED_KEY), 2000)
    run.slo = _slo(g, run.notes)
    run.metric = _metric(run.scenario, g)
    try:
        _rules(run, log)
    except (LogFormatError, ValueError, TypeError, ArithmeticError) as exc:
        run.notes.append(f"validity rules not recomputed: {exc}")


def _count(v: Any) -> int | None:
    """A count from a log value (a whole number >= 0 below MAX_ARG_NS), else None."""
    n = _num(v)
    return int(n) if n is not None and n.is_integer() and 0 <= n < MAX_ARG_NS else None


def _slo(g: Any, notes: list[str]) -> SLOAttainment | None:
    """The `proctor_slo_*` records as one SLOAttainment; None when the run has none, and None with a
    note when they do not hold together (a target not a positive number, a count above those judged, fewer
    within one target than within every target)."""
    targets, met = g("proctor_slo_targets_ns"), g("proctor_slo_met")
    if targets is None and met is None:
        return None
    judged = _count(g("proctor_slo_judged_samples"))
    ok = isinstance(targets, dict) and isinstance(met, dict) and judged is not None and bool(targets)
    names = [k for k in SLO_NAMES if isinstance(targets, dict) and k in targets]
    tns = {k: _num(targets[k]) for k in names} if ok else {}
    counts = {k: _count(met.get(k)) for k in [*names, "all"]} if ok else {}
    if not ok or len(names) != len(targets) or any(v is None or v <= 0 for v in tns.values()) \
            or any(c is None or judged is None or c > judged for c in counts.values()) \
            or any(c is not None and counts["all"] is not None and c < counts["all"] for c in counts.values()):
        notes.append("proctor_slo_* records unreadable (targets, counts and judged requests do not hold together): "
                     "SLO attainment left out")
        return None
    assert judged is not None
    source = g("proctor_slo_target_source")
    out = SLOAttainment(
        {k: float(v) for k, v in tns.items() if v is not None}, "" if source is None else _text(source, 300),
        {k: int(c) for k, c in counts.items() if c is not None and k != "all"}, int(counts["all"] or 0), judged,
        _num(g("proctor_requests_per_sec")), _num(g("proctor_goodput_requests_per_sec")),
    )
    logged = _num(g("proctor_slo_attainment"))
    if logged is not None and abs(logged - out.share) > 1e-9:
        notes.append(f"proctor_slo_attainment {logged:.6g} differs from its counts ({out.met_all} of {out.judged}): "
                     "the report shows the counts' share")
    return out


def _metric(scenario: str | None, g: Any) -> tuple[str, float, str] | None:
    pct = _num(g("effective_target_latency_percentile")) or 0.9
    if scenario == "Server":
        v = _num(g("result_completed_samples_per_sec"))
        return None if v is None else ("completed samples per second", v, "samples/s")
    if scenario == "Offline":
        v = _num(g("result_samples_per_second"))
        return None if v is None else ("samples per second", v, "samples/s")
    if scenario in ("SingleStream", "MultiStream"):
        key = "result_" + percentile_label(pct) + "_percentile_latency_ns"
        if scenario == "MultiStream":
            key = "result_" + percentile_label(pct) + "_percentile_per_query_latency_ns"
        v = _num(g(key))
        return None if v is None else (f"{pct * 100:g}th percentile latency", v, "ns")
    return None


def _rules(run: InferenceRun, log: DetailLogData) -> None:
    try:
        rc = recompute(log)
    except LogFormatError as exc:  # numbers out of any run's range: the summary's verdicts stand
        run.notes.append(f"validity rules not recomputed: {exc}")
        return
    g = log.get
    n = rc_n = run.query_count
    run.rules.append(Rule(
        "min duration", rc.min_duration_met,
        f"ran {rc.duration_s:.6g} s, minimum {_num(g('effective_min_duration_ms')) or 0:.6g} ms"
        if rc.duration_s is not None else f"minimum {_num(g('effective_min_duration_ms')) or 0:.6g} ms (duration not logged)",
        rc.source.get("min_duration", "logged"),
    ))
    run.rules.append(Rule(
        "min queries", rc.min_queries_met,
        f"{rc_n} queries, minimum {g('effective_min_query_count')} queries / {g('effective_min_sample_count')} samples",
        rc.source.get("min_queries", "logged"),
    ))
    if rc.scenario == "Server":
        label = percentile_label(run.target_percentile or 0.99)
        if run.ttft is not None:
            detail = (
                f"TTFT p{label} {_ms(run.ttft.percentiles.get(run.target_percentile or 0.99))} <= "
                f"{_ms(run.ttft_bound_ns)}; TPOT p{label} {_ms(run.tpot.percentiles.get(run.target_percentile or 0.99)) if run.tpot else '-'}"
                f" <= {_ms(run.tpot_bound_ns)}"
            )
        else:
            detail = (
                f"p{label} latency {_ms(run.latency.percentiles.get(run.target_percentile or 0.99))} <= "
                f"bound {_ms(run.target_latency_ns)}"
            )
        run.rules.append(Rule("latency bound", rc.perf_constraints_met, detail, rc.source.get("perf_constraints", "logged")))
    if rc.scenario in ("SingleStream", "MultiStream"):
        detail = f"{n} queries, at least {rc.min_queries_for_es} needed"
        if rc.discarded is not None:
            detail += f"; discards the {rc.discarded} highest latencies"
    elif rc.scenario == "Server" and rc.required_queries is not None:
        detail = (f"{g('result_overlatency_query_count')} of {n} queries over the bound; "
                  f"needs at least {rc.required_queries} queries")
    else:
        detail = "not applicable" if rc.scenario == "Offline" else "as logged"
    run.rules.append(Rule("early stopping", rc.early_stopping_met, detail, rc.source.get("early_stopping", "logged")))
    if rc.tokens_per_second is not None and run.tokens_per_second is None:
        run.tokens_per_second = rc.tokens_per_second
    for m in rc.mismatches:
        run.notes.append(f"recomputed differs from the log: {m}")


def _ms(ns: float | None) -> str:
    return "-" if ns is None else f"{ns / 1e6:.4g} ms"


def _from_summary(run: InferenceRun, s: dict[str, Any]) -> None:
    """Fill what the detail log did not give (an official summary alone, a truncated detail log)."""
    run.scenario = run.scenario or (_text(s["Scenario"], 40) if "Scenario" in s else None)
    run.mode = run.mode or (_text(s["Mode"], 40) if "Mode" in s else None)
    run.sut_name = run.sut_name or (_text(s["SUT name"], 200) if "SUT name" in s else None)
    run.validity = run.validity or (_text(s["Result is"], 20) if "Result is" in s else None)
    stats = s.get("additional_stats", {})
    if not run.latency.percentiles:
        for label, v in stats.items():
            m = _SUMMARY_PCT.match(label)
            if m and _num(v) is not None:
                run.latency.percentiles[round(float(m.group(1)) / 100, 6)] = float(v)
        run.latency.min = run.latency.min or _num(stats.get("Min latency (ns)"))
        run.latency.max = run.latency.max or _num(stats.get("Max latency (ns)"))
        run.latency.mean = run.latency.mean or _num(stats.get("Mean latency (ns)"))
    tp = s.get("test_parameters", {})
    if not run.settings:
        run.settings = {k: v for k, v in tp.items()}
        run.target_latency_ns = _num(tp.get("target_latency (ns)")) or None
        run.target_qps = _num(tp.get("target_qps"))
    text = "\n".join(str(v) for v in s.get("early_stopping", {}).values())
    if not run.early_stopping_text:
        run.early_stopping_text = text
    if run.metric is None:
        for label in s:
            if label.endswith(("percentile latency (ns)", "per-query latency (ns)")) and _num(s[label]) is not None:
                run.metric = (label.replace(" (ns)", ""), float(s[label]), "ns")
            elif label in ("Samples per second", "Completed samples per second") and _num(s[label]) is not None:
                run.metric = (label.lower(), float(s[label]), "samples/s")
    if not run.rules:
        for label, name in (("Min duration satisfied", "min duration"), ("Min queries satisfied", "min queries"),
                            ("Performance constraints satisfied", "latency bound"),
                            ("Early stopping satisfied", "early stopping")):
            if label in s:
                run.rules.append(Rule(name, str(s[label]).lower() == "yes", f"summary says {s[label]}"))
    if run.incomplete is None and s.get("run_incomplete"):
        run.incomplete = _text(s["run_incomplete"], 500)
    if "detail" not in run.files:
        run.errors = int(s.get("errors") or 0)
        run.warnings = int(s.get("warnings") or 0)
    _estimate(run)


def _estimate(run: InferenceRun) -> None:
    pct = run.target_percentile or (0.9 if run.scenario == "SingleStream" else 0.99)
    for m in _ESTIMATE.finditer(run.early_stopping_text):
        if abs(float(m.group(1)) / 100 - pct) < 1e-9:
            run.early_stopping_estimate_ns = float(m.group(2))


def _arg_int(v: Any) -> int | None:
    """An integer trace arg (ns or a count), else None: bools, strings, NaN and huge values are unreadable."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    if isinstance(v, float) and not (math.isfinite(v) and v.is_integer()):
        return None
    return int(v) if -MAX_ARG_NS < v < MAX_ARG_NS else None


def read_trace_samples(path: Path, notes: list[str]) -> Samples | None:
    """Per-sample data from the trace's `Sample` begin events, streamed line by line.

    Lines that are not such events are skipped; a malformed event is counted and reported in
    `notes`, never raised. proctor's args (scheduled_ns, n_tokens: every event or none;
    first_token_ns: per event) are kept only when readable in every event that should have them,
    else left out with a note. None when the trace holds no sample (tracing was off).
    """
    issue: list[float] = []
    lat: list[float] = []
    sched: list[int | None] = []
    first: list[int | None] = []
    ntok: list[int | None] = []
    bad = 0
    truncated = False
    with open_regular(path) as fh:
        try:
            for _, raw in iter_lines(fh):
                if raw is None or b'"Sample"' not in raw or b'"ph":"b"' not in raw:
                    continue
                try:
                    ev = orjson.loads(raw.rstrip().rstrip(b","))
                    ts = float(ev["ts"])
                    args = ev["args"]
                    ns = float(args["complete_ns"])
                except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, OverflowError):
                    bad += 1
                    continue
                if not (math.isfinite(ts) and math.isfinite(ns)) or not 0 <= ns < MAX_ARG_NS \
                        or not abs(ts) * 1000 < MAX_ARG_NS:  # ts: us after the trace's origin
                    bad += 1
                    continue
                issue.append(ts / 1e6)
                lat.append(ns)
                sched.append(_arg_int(args.get("scheduled_ns")))
                first.append(_arg_int(args.get("first_token_ns")))
                ntok.append(_arg_int(args.get("n_tokens")))
                if len(lat) >= MAX_TRACE_SAMPLES:
                    truncated = True
                    break
        except OSError as exc:
            raise LogFormatError(f"cannot read it: {exc.strerror or exc}", file=str(path)) from None
    if bad:
        notes.append(f"{path.name}: {bad} unreadable Sample events skipped")
    if truncated:
        notes.append(f"{path.name}: only the first {MAX_TRACE_SAMPLES} samples were read")
    if not lat:
        return None
    out = Samples(np.asarray(issue, dtype=np.float64), np.asarray(lat, dtype=np.float64), truncated)
    out.scheduled_ns = _column(sched, "scheduled_ns", path, notes)
    counts = _column(ntok, "n_tokens", path, notes)
    if counts is not None and (counts < 0).any():
        notes.append(f"{path.name}: negative n_tokens: token statistics left out")
        counts = None
    if counts is not None and any(v is not None for v in first):
        out.n_tokens = counts
        out.has_first = np.fromiter((v is not None for v in first), bool, len(first))
        out.first_token_ns = np.fromiter((0 if v is None else v for v in first), np.int64, len(first))
    return out


def read_samples_file(path: Path, notes: list[str]) -> Samples | None:
    """Per-sample data from proctor's samples file, as `read_trace_samples` gives it from the trace
    (the same float arithmetic, so both draw the same figures); None, with a note, when unreadable."""
    try:
        cols = read_samples(path)
    except LogFormatError as exc:
        notes.append(f"{path.name} not read ({exc}): per-sample figures come from the trace if there is one")
        return None
    if cols.n == 0:
        return None
    if cols.truncated:
        notes.append(f"{path.name}: only the first {cols.n} samples were read")
    # the trace's ts is issue/1000 printed with 3 decimals, read back and divided by 1e6: the same double
    out = Samples((cols.issue_ns / 1000.0) / 1e6, cols.latency_ns.astype(np.float64), cols.truncated)
    out.scheduled_ns = cols.scheduled_ns
    if cols.has_first is not None and cols.first_token_ns is not None and cols.n_tokens is not None \
            and cols.has_first.any():
        out.n_tokens = cols.n_tokens
        out.has_first = cols.has_first
        out.first_token_ns = np.where(cols.has_first, cols.first_token_ns, 0)
    return out


def _column(values: list[int | None], name: str, path: Path, notes: list[str]) -> np.ndarray | None:
    """An arg every event must have: the int64 column, or None (with a note when only some have it)."""
    missing = values.count(None)
    if missing == len(values):
        return None
    if missing:
        notes.append(f"{path.name}: {name} missing or unreadable in {missing} of {len(values)} Sample events: "
                     "left out")
        return None
    return np.asarray(values, dtype=np.int64)


def _count_accuracy(path: Path) -> int | None:
    """Entries in the accuracy log (its `"seq_id"` fields), streamed; None when unreadable."""
    try:
        with open_regular(path) as fh:
            return sum(raw.count(b'"seq_id"') for _, raw in iter_lines(fh) if raw is not None)
    except (LogFormatError, OSError):
        return None
