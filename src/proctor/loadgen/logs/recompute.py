"""Every claim of a detail log re-derived from the raw values it holds.

The official decides validity and computes each metric from its raw latencies (results.cc). A
detail log keeps the effective settings, the counts, the latency order statistics, the schedule's
length, the power window (start of issue to the last completion) and the result_* numbers derived
from them, which is enough to redo each decision and to bound or recompute each rate the official
way: Offline samples/s = samples / max latency; Server (n - 1) / the final query's scheduled and
completion times, which the schedule and the power window bound; SingleStream (n - 1) / the final
issue time, which the latencies (queries run one after another) and the power window bound; tokens
from the `result_token_throughput` quirk (count / (mean_ns x n)); the early-stopping estimate
between the logged order statistics around its rank. A claim the numbers contradict is a `Mismatch`
naming the key, its line, the claimed value and what the numbers give.

Printed numbers are compared as the log can hold them (a double has 6 significant digits, the power
timestamps whole milliseconds: `numbers.printed`), never exactly and never with a loose tolerance.
Where a log lacks what a derivation needs (older rounds, a missing key), nothing is said and the
logged verdict is taken and marked so.
"""

from __future__ import annotations

import math
import re

from proctor.errors import LogFormatError
from proctor.lazy_patterns import LazyPattern
from proctor.loadgen.logs.numbers import Span, percentile_label, printed
from proctor.loadgen.logs.reader import DetailLogData
from proctor.typed_records import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    import datetime as dt
    from typing import Any

RECOMPUTED, LOGGED = "recomputed", "logged"
_DISCARD = LazyPattern(r"Would discard (\d+) highest")
_PROCESSED = LazyPattern(r"Processed at least (\d+) queries \((\d+)\)")
_MORE = LazyPattern(r"Would need to run at least (\d+) more")
_ESTIMATE = LazyPattern(r"Early stopping (\d{1,3}(?:\.\d{1,3})?)th percentile estimate: (\d{1,20})")
PERCENTILES = (0.50, 0.90, 0.95, 0.97, 0.99, 0.999)  # the official latency_percentiles
MAX_NS = (1 << 63) - 1  # QuerySampleLatency is int64
POWER_FORMAT = "%m-%d-%Y %H:%M:%S.%f"
POWER_RESOLUTION_S = 1e-3  # power_begin / power_end print whole milliseconds
PROCTOR_KEY = "proctor_issue_lateness_p50_ns"  # every run of proctor's engine logs it


@record(frozen=True, slots=True)
class Mismatch:
    """A claim of a log that its own numbers contradict."""

    key: str  # the detail key (or summary label) whose value is wrong
    claimed: str  # as the log states it
    derived: str  # what the numbers give
    basis: str  # the numbers it was derived from
    file: str
    line: int | None = None
    about: str = "metric"  # min_duration | min_queries | perf_constraints | early_stopping | validity | metric | statistics

    def __str__(self) -> str:
        return f"{self.key} is {self.claimed}, the logged numbers give {self.derived} ({self.basis})"


@record(slots=True)
class Recomputed:
    scenario: str
    min_duration_met: bool
    min_queries_met: bool
    perf_constraints_met: bool
    early_stopping_met: bool
    valid: bool
    source: dict[str, str] = field(default_factory=dict)  # check -> recomputed | logged
    discarded: int | None = None  # SS/MS early stopping: highest latencies dropped
    min_queries_for_es: int | None = None  # SS/MS: h_min + 1
    required_queries: int | None = None  # Server: f(t) + t
    duration_s: float | None = None  # the duration the min-duration check used
    tokens_per_second: float | None = None  # Server token runs, from the throughput quirk
    mismatches: list[Mismatch] = field(default_factory=list)  # a claim the numbers contradict
    # result keys whose claim the numbers contradict -> the value they give (None: they bound it only)
    corrected: dict[str, float | None] = field(default_factory=dict)
    durations: dict[str, Span] = field(default_factory=dict)  # scheduled/issued/done/power, seconds
    implied: dict[str, Span] = field(default_factory=dict)  # result key -> the values its numbers allow


def _b(v: Any) -> bool:
    return bool(v) if not isinstance(v, str) else v.lower() == "true"


MAX_QUERIES = 10**12  # far beyond any run; keeps the early-stopping arithmetic bounded
MAX_PERCENTILE = 0.9999  # the rules' targets are 0.9, 0.99 (and 0.999 for some); beyond, ES needs ~forever


def _count(log: DetailLogData, key: str) -> None:
    v = log.get(key)
    if key in log.values and not (isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_QUERIES):
        raise LogFormatError(f"{key} {str(v)[:40]!r} is not a count of queries", file=log.path)


def whole(log: DetailLogData, key: str, default: int | None = None) -> int:
    """A key's whole-number value (a count, nanoseconds, milliseconds), `default` when absent, or a
    LogFormatError naming the key and its line."""
    if key not in log.values and default is not None:
        return default
    v = log.require(key)
    if isinstance(v, float) and v.is_integer() and abs(v) <= MAX_NS:
        v = int(v)  # a double printed without a fraction (1e+06)
    if isinstance(v, bool) or not isinstance(v, int) or not -MAX_NS <= v <= MAX_NS:
        raise LogFormatError(f"{key} {str(v)[:40]!r} is not a whole number", file=log.path, line=log.line_of(key))
    return v


def check_ranges(log: DetailLogData) -> None:
    """Refuse numbers no run can log (the recomputation would not end on them)."""
    p = log.get("effective_target_latency_percentile", 0.99)
    if isinstance(p, bool) or not isinstance(p, int | float) or not 0.5 <= p <= MAX_PERCENTILE:
        raise LogFormatError(
            f"effective_target_latency_percentile {str(p)[:40]!r} is outside 0.5 to {MAX_PERCENTILE}", file=log.path
        )
    for key in ("result_query_count", "result_overlatency_query_count", "effective_samples_per_query"):
        _count(log, key)
    if int(log.get("result_overlatency_query_count", 0)) > int(log.get("result_query_count", 0)):
        raise LogFormatError("more over-latency queries than queries", file=log.path)


class _Claims:
    """The log's values read as numbers, and the mismatches found against them."""

    def __init__(self, log: DetailLogData, out: Recomputed) -> None:
        self.log, self.out = log, out

    def int(self, key: str) -> int | None:
        """A non-negative integer (count, nanoseconds, milliseconds), or None."""
        v = self.log.get(key)
        return v if isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_NS else None

    def num(self, key: str) -> float | None:
        """A finite non-negative number (a printed double), or None."""
        v = self.log.get(key)
        if isinstance(v, bool) or not isinstance(v, int | float):
            return None
        f = float(v)
        return f if math.isfinite(f) and f >= 0 else None

    def mismatch(self, key: str, claimed: Any, derived: str, basis: str, about: str = "metric") -> None:
        text = claimed if isinstance(claimed, str) else f"{claimed:.6g}" if isinstance(claimed, float) else str(claimed)
        self.out.mismatches.append(
            Mismatch(key, text, derived, basis, self.log.path, self.log.line_of(key), about)
        )

    def rate(self, key: str, implied: Span, basis: str, *, exact: float | None = None) -> None:
        """The logged rate `key` against the span the numbers imply; `exact`: the value they give."""
        self.out.implied[key] = implied
        v = self.num(key)
        if v is None or printed(v).overlaps(implied):
            return
        self.mismatch(key, v, implied.text(), basis)
        self.out.corrected[key] = exact


_POWER_TIME = re.compile(r"([0-9]{2})-([0-9]{2})-([0-9]{4}) ([0-9]{2}):([0-9]{2}):([0-9]{2})\.([0-9]{1,6})")


def _power_time(text: str) -> dt.datetime:
    """datetime.strptime(text, POWER_FORMAT), for the form LoadGen writes without loading _strptime (its
    locale and calendar: a few ms of every check's start); any other text goes to strptime."""
    import datetime as dt  # a tree whose logs have no power window needs none of it

    m = _POWER_TIME.fullmatch(text)
    if m is None:
        return dt.datetime.strptime(text, POWER_FORMAT)
    month, day, year, hour, minute, second, fraction = m.groups()
    return dt.datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), int(fraction.ljust(6, "0")))


_DAYS_BEFORE_MONTH = (0, 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334)


def _power_micros(text: str) -> int:
    """Microseconds from 0001-01-01 to the time `text` (POWER_FORMAT) names, as the datetime strptime
    gives would count them, or its ValueError; the form LoadGen writes is read without importing
    datetime (1.4 ms of every check's start: every LoadGen log has a power window)."""
    m = _POWER_TIME.fullmatch(text)
    if m is None:
        t = _power_time(text)
        return (t.toordinal() * 86400 + t.hour * 3600 + t.minute * 60 + t.second) * 10**6 + t.microsecond
    month, day, year, hour, minute, second = (int(g) for g in m.groups()[:6])
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    if not (year >= 1 and 1 <= month <= 12 and hour < 24 and minute < 60 and second < 60):
        raise ValueError(f"time out of range: {text!r}")
    if not 1 <= day <= (31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)[month - 1]:
        raise ValueError(f"day is out of range for month: {text!r}")
    y = year - 1
    ordinal = y * 365 + y // 4 - y // 100 + y // 400 + _DAYS_BEFORE_MONTH[month] + (month > 2 and leap) + day
    return (ordinal * 86400 + hour * 3600 + minute * 60 + second) * 10**6 + int(m.group(7).ljust(6, "0"))


def _power_span(c: _Claims) -> Span | None:
    """The power window's length (the official's start of issue to its last completion), seconds."""
    begin, end = c.log.get("power_begin"), c.log.get("power_end")
    if not isinstance(begin, str) or not isinstance(end, str) or len(begin) > 40 or len(end) > 40:
        return None
    try:
        d = (_power_micros(end) - _power_micros(begin)) / 10**6  # timedelta.total_seconds()
    except ValueError:
        return None
    return Span(d - POWER_RESOLUTION_S, d + POWER_RESOLUTION_S) if d >= 0 else None


def recompute(log: DetailLogData) -> Recomputed:
    """Redo the official validity decisions and re-derive every result claim from a parsed detail log
    (LogFormatError on numbers out of any run's range)."""
    check_ranges(log)
    g = log.get
    sc = str(log.require("effective_scenario"))
    n = whole(log, "result_query_count")
    spq = whole(log, "effective_samples_per_query", 1)
    pct = float(g("effective_target_latency_percentile", 0.99))
    tokens = _b(g("requested_use_token_latencies", False)) or "early_stopping_ttft_result" in log.values
    src: dict[str, str] = {}
    out = Recomputed(sc, False, False, True, True, False, source=src)
    c = _Claims(log, out)

    # samples: the generated query size (equal issue pads the Offline query past samples_per_query).
    # The official LoadGen waits for every issued sample, so each is a result; proctor's engine logs a
    # sample the SUT failed as an error and keeps no result for it, and an interrupted run as such
    gen_spq = c.int("generated_samples_per_query") or spq
    fewest, most = _equal_issue_query(log, sc, gen_spq)
    samples = n * fewest
    by_proctor = PROCTOR_KEY in log.values
    exact_count = "proctor_run_incomplete" not in log.values and not (by_proctor and log.n_errors)

    # min duration
    min_ms = whole(log, "effective_min_duration_ms")
    met = _durations(c, sc, n, samples, exact_count, tokens, min_ms, most=n * most)
    if met is not None:
        out.min_duration_met, src["min_duration"] = met, RECOMPUTED
    else:
        out.min_duration_met, src["min_duration"] = _b(g("result_min_duration_met")), LOGGED
    main = out.durations.get({"Offline": "max_latency", "Server": "scheduled"}.get(sc, "issued"))
    if main is not None and math.isfinite(main.hi):
        out.duration_s = (main.lo + main.hi) / 2

    # min queries (with samples failed, the count of results is only bounded by the issued samples)
    queries_met = n >= whole(log, "effective_min_query_count", 0)
    samples_met = samples >= whole(log, "effective_min_sample_count", 0)
    if exact_count or not queries_met or not samples_met:
        out.min_queries_met, src["min_queries"] = queries_met and samples_met, RECOMPUTED
    else:
        out.min_queries_met, src["min_queries"] = _b(g("result_min_queries_met")), LOGGED

    # performance constraints (Server)
    if sc == "Server":
        _perf_constraints(c, pct, tokens)

    # early stopping
    _early_stopping(c, sc, n, pct, tokens)

    _statistics(c, samples)

    out.valid = (
        out.min_duration_met and out.min_queries_met and out.perf_constraints_met and out.early_stopping_met
    ) and not g("proctor_closed_loop_in_flight")  # proctor sweep --concurrency: not an MLPerf scenario
    for name, mine, key in (
        ("min_duration", out.min_duration_met, "result_min_duration_met"),
        ("min_queries", out.min_queries_met, "result_min_queries_met"),
        ("early_stopping", out.early_stopping_met, "early_stopping_met"),
        ("perf_constraints", out.perf_constraints_met, "result_perf_constraints_met"),
    ):
        if key in log.values and _b(g(key)) != mine and src.get(name) == RECOMPUTED:
            c.mismatch(key, str(_b(g(key))).lower(), str(mine).lower(), _BASIS[name], name)
    if "result_validity" in log.values and (g("result_validity") == "VALID") != out.valid:
        parts = [k for k, v in (
            ("min duration", out.min_duration_met), ("min queries", out.min_queries_met),
            ("performance constraints", out.perf_constraints_met), ("early stopping", out.early_stopping_met),
        ) if not v]
        c.mismatch(
            "result_validity",
            str(g("result_validity"))[:40],
            "VALID" if out.valid else "INVALID",
            "not met: " + ", ".join(parts) if parts else "every part met",
            "validity",
        )
    return out


_BASIS = {
    "min_duration": "the duration the logged times give against effective_min_duration_ms",
    "min_queries": "result_query_count and the samples per query against effective_min_query_count "
    "and effective_min_sample_count",
    "early_stopping": "result_query_count (and result_overlatency_query_count) by the early-stopping criterion",
    "perf_constraints": "the target-percentile latency against the run's bound",
}


def _decide(span: Span | None, minimum_s: float) -> bool | None:
    """Whether a duration span meets the minimum; None when it straddles it (the log cannot tell)."""
    if span is None:
        return None
    if span.lo >= minimum_s:
        return True
    if span.hi < minimum_s:
        return False
    return None


def _narrow(
    c: _Claims, key: str, claim: Span | None, raw: Span, basis: str, n: int, exact: bool = True
) -> Span | None:
    """The final time a rate claims ((n - 1) / rate), narrowed by what the raw values allow; a
    mismatch on `key` when the rate lies outside what they allow (then the raw span stands)."""
    if raw.lo > raw.hi:  # the raw values contradict each other: nothing to narrow by
        c.mismatch("power_end", f"a window of {c.out.durations['power'].text()} s" if "power" in c.out.durations
                   else "absent", f"a final time from {raw.lo:.6g} s to {raw.hi:.6g} s",
                   f"{basis}: they do not meet", "statistics")
        raw = Span(0.0, math.inf)
    bounded = raw.lo > 0 or math.isfinite(raw.hi)
    if not bounded:
        return claim
    implied = max(n - 1, 0) / raw
    c.rate(key, implied if exact else Span(0.0, implied.hi), basis if exact else basis + ", at most: the log has errors")
    if claim is None or key in c.out.corrected:
        return raw
    return claim.clip(raw.lo, raw.hi) or raw


def _equal_issue_query(log: DetailLogData, sc: str, logged: int) -> tuple[int, int]:
    """The fewest and most samples an Offline performance query held. Equal issue
    (sample_concatenate_permutation) pads it to a multiple of the loaded set (the first
    effective_performance_sample_count samples of the QSL's qsl_reported_total_count); LoadGen
    before 5.0.11 logged generated_samples_per_query unpadded (mlcommons/inference #2039), and before
    #1802 (the v4.1 round's LoadGen) it did not log the setting, so such a log's query held either
    size. Padding an already padded size changes nothing."""
    if sc != "Offline" or log.get("effective_test_mode") not in (None, "PerformanceOnly"):
        return logged, logged
    on = log.get("effective_sample_concatenate_permutation", None)
    sizes = [log.get(k) for k in ("effective_performance_sample_count", "qsl_reported_total_count")]
    counts = [v for v in sizes if isinstance(v, int) and not isinstance(v, bool) and v > 0]
    if on is False or not isinstance(sizes[0], int) or not counts:
        return logged, logged
    loaded = min(counts)
    padded = -(-logged // loaded) * loaded
    return (padded, padded) if on is True else (logged, padded)


def _durations(
    c: _Claims, sc: str, n: int, samples: int, exact: bool, tokens: bool, min_ms: int, *, most: int | None = None
) -> bool | None:
    """Each duration the results imply, checked against the raw values; whether min_duration is met
    (None: the log cannot tell, and its own verdict is taken). `most`: the most samples the Offline
    query may have held where the log leaves its padding open."""
    out = c.out
    power = _power_span(c)
    if power is not None:
        out.durations["power"] = power
    max_ns = c.int("result_max_latency_ns")
    max_s = max_ns / 1e9 if max_ns is not None else None
    upper = power.hi if power is not None else math.inf
    if sc == "Offline":
        if max_ns is None or max_ns == 0:
            return None
        out.durations["max_latency"] = Span.of(max_ns / 1e9)
        if power is not None and max_ns / 1e9 not in power:
            c.mismatch(
                "result_max_latency_ns", max_ns, f"{power.text()} s",
                "the power window power_begin..power_end: the Offline query's span", "statistics",
            )
        rate = samples * 1e9 / max_ns
        basis = f"{samples} samples (result_query_count x generated_samples_per_query) / result_max_latency_ns {max_ns}"
        if most is not None and most > samples:  # padded by equal issue or not: either size
            hi = most * 1e9 / max_ns
            basis = (f"{samples} to {most} samples (result_query_count x generated_samples_per_query, padded to a "
                     f"multiple of effective_performance_sample_count by equal issue or not) / result_max_latency_ns {max_ns}")
            c.rate("result_samples_per_second", Span(rate if exact else 0.0, hi).widened(),
                   basis if exact else basis + ", at most: the log has errors")
        else:
            c.rate("result_samples_per_second", Span.of(rate).widened() if exact else Span(0.0, rate).widened(),
                   basis if exact else basis + ", at most: the log has errors", exact=rate if exact else None)
        return max_ns >= min_ms * 1_000_000
    mean = c.int("result_mean_latency_ns")
    mean_ok = mean is not None and max_ns is not None and samples * max_ns <= MAX_NS  # the int64 sum did not wrap
    lat = max_s if max_s is not None else math.inf
    if sc == "Server":
        return _server(c, n, samples, power, lat, upper, mean if mean_ok and exact else None, tokens, min_ms, exact)
    if sc == "SingleStream":
        lo = 0.0
        if mean_ok and mean is not None and max_ns is not None and not c.log.get("proctor_closed_loop_in_flight"):
            lo = max(samples * mean - max_ns, 0) / 1e9  # the n - 1 earlier queries ran one after another
            if lo > upper:
                c.mismatch("result_mean_latency_ns", mean, f"at most {(upper * 1e9 + max_ns) / samples:.6g}",
                           f"{samples} queries run one after another within the power window of "
                           f"{power.text() if power else '?'} s", "statistics")
                lo = 0.0
        if power is not None and max_s is not None:
            lo = max(lo, power.lo - max_s)
        raw = Span(lo, upper)
        r = c.num("result_qps_with_loadgen_overhead")
        claim = _final_time(samples, r, exact)
        issued = _narrow(c, "result_qps_with_loadgen_overhead", claim, raw,
                         "the issue times the latencies and the power window allow", samples, exact)
        if issued is not None:
            out.durations["issued"] = issued
        if mean:
            exact_rate = 1e9 / mean
            c.rate("result_qps_without_loadgen_overhead", Span.of(exact_rate).widened(),
                   f"1 / result_mean_latency_ns {mean}", exact=exact_rate)
        if tokens and issued is not None and mean_ok and mean and exact:
            _tokens(c, samples, mean, issued, Span(issued.lo, issued.hi + lat))
        return _decide(issued, min_ms / 1000.0)
    if sc == "MultiStream":
        qmean, qmax = c.int("result_mean_query_latency_ns"), c.int("result_max_query_latency_ns")
        lo = 0.0
        if qmean is not None and qmax is not None and n * qmax <= MAX_NS:
            lo = max(n * qmean - qmax, 0) / 1e9  # the queries ran one after another
            if lo > upper:
                c.mismatch("result_mean_query_latency_ns", qmean, f"at most {(upper * 1e9 + qmax) / n:.6g}",
                           f"{n} queries run one after another within the power window of "
                           f"{power.text() if power else '?'} s", "statistics")
                lo = 0.0
        if power is not None and qmax is not None:
            lo = max(lo, power.lo - qmax / 1e9)
        if power is not None and lo > upper:
            lo = 0.0  # said above, or the max query latency exceeds the window (power_end is checked below)
        if lo > 0 or math.isfinite(upper):
            out.durations["issued"] = Span(lo, upper)
            return _decide(out.durations["issued"], min_ms / 1000.0)
    return None


def _final_time(samples: int, rate: float | None, exact: bool) -> Span | None:
    """The final time (s) a rate of (samples - 1) / time claims; with errors in the log fewer samples
    may have completed than were issued, and the time is only bounded above."""
    if not rate or samples <= 1:
        return None
    span = (samples - 1) / printed(rate)
    return span if exact else Span(0.0, span.hi)


def _server(
    c: _Claims, n: int, samples: int, power: Span | None, lat: float, upper: float,
    mean: int | None, tokens: bool, min_ms: int, exact: bool,
) -> bool | None:
    """Server: the final query's scheduled time S and completion F. The schedule holds S below
    generated_query_duration (and at or past the generated duration when every generated query was
    issued); the power window ends at the last completion, so S <= F <= power and power <= S + max
    latency."""
    out = c.out
    lo, hi = 0.0, upper
    generated, gen_end = c.int("generated_query_count"), c.int("generated_query_duration")
    if generated is not None and gen_end and n <= generated:
        hi = min(hi, gen_end / 1e9)
        target = c.int("effective_target_duration_ms")
        if n == generated and target and not _b(c.log.get("effective_performance_issue_unique", False)):
            lo = target / 1000.0  # the generator stops at its first query at or past it
    if power is not None and math.isfinite(lat):
        lo = max(lo, power.lo - lat)
    basis_s = "the schedule (generated_query_duration, effective_target_duration_ms) and the power window"
    r = c.num("result_scheduled_samples_per_sec")
    claim = _final_time(n, r, exact)
    sched = _narrow(c, "result_scheduled_samples_per_sec", claim, Span(lo, hi), basis_s, n, exact)
    if sched is None:
        return None
    out.durations["scheduled"] = sched
    r = c.num("result_completed_samples_per_sec")
    claim = _final_time(n, r, exact)
    done_raw = Span(sched.lo, min(upper, sched.hi + lat))
    done = _narrow(c, "result_completed_samples_per_sec", claim, done_raw,
                   "the final query's scheduled time, the max latency and the power window", n, exact)
    if done is not None:
        out.durations["done"] = done
        if tokens and mean:
            count = _tokens(c, samples, mean, Span(sched.lo, done.hi), done)
            tt, rc = c.num("result_token_throughput"), c.num("result_completed_samples_per_sec")
            if count is not None and tt and rc and n > 1:  # count / final done, as the official prints it
                out.tokens_per_second = tt * mean * n / ((n - 1) / rc)
    return _decide(sched, min_ms / 1000.0)


def _tokens(c: _Claims, samples: int, mean: int, issued: Span, done: Span) -> Span | None:
    """The token count from the `result_token_throughput` quirk (count / (mean_ns x n)) and the rates
    it gives: count / final issue time, count / final completion time. TPOT bounds the count: a
    sample's output tokens are at most 1 + its latency / its TPOT."""
    tt = c.num("result_token_throughput")
    if not tt or samples <= 0:
        return None
    count = printed(tt) * float(mean * samples)
    tpot_min = c.int("result_time_to_output_token_min")
    if tpot_min:
        cap = samples * (1 + (mean + 1) / tpot_min)
        if count.lo > cap * (1 + 1e-9):
            c.mismatch(
                "result_token_throughput", tt, f"at most {cap / (mean * samples):.6g}",
                f"{samples} samples of mean latency {mean} ns with a TPOT of at least {tpot_min} ns "
                f"hold at most {cap:.6g} tokens",
            )
            return None
    basis = "the token count from result_token_throughput x result_mean_latency_ns x samples"
    if math.isfinite(issued.hi):
        c.rate("result_token_throughput_with_loadgen_overhead", count / issued, basis + " / the final issue time")
    if math.isfinite(done.hi):
        c.rate("result_completed_tokens_per_second", count / done, basis + " / the final completion time")
    return count


def _perf_constraints(c: _Claims, pct: float, tokens: bool) -> None:
    out, g, src = c.out, c.log.get, c.out.source
    label = percentile_label(pct)
    if not tokens:
        key = f"result_{label}_percentile_latency_ns"
        if key in c.log.values:
            out.perf_constraints_met = whole(c.log, key) <= whole(c.log, "effective_target_latency_ns")
            src["perf_constraints"] = RECOMPUTED
    else:
        k1, k2 = (
            f"result_first_token_{label}_percentile_latency_ns",
            f"result_time_per_output_token_{label}_percentile_ns",
        )
        ttft, tpot = "requested_server_ttft_latency", "requested_server_tpot_latency"
        if all(k in c.log.values for k in (k1, k2, ttft, tpot)):
            out.perf_constraints_met = whole(c.log, k1) <= whole(c.log, ttft) and whole(c.log, k2) <= whole(c.log, tpot)
            src["perf_constraints"] = RECOMPUTED
    if "perf_constraints" not in src:
        out.perf_constraints_met, src["perf_constraints"] = _b(g("result_perf_constraints_met", True)), LOGGED


def _early_stopping(c: _Claims, sc: str, n: int, pct: float, tokens: bool) -> None:
    out, g, src = c.out, c.log.get, c.out.source
    if sc in ("SingleStream", "MultiStream", "Server"):
        # the criterion's numerics (numpy, scipy) load only for a result that needs them: an
        # Offline-only check starts without them
        from proctor.loadgen import early_stopping as es
    if sc in ("SingleStream", "MultiStream"):
        out.min_queries_for_es = es.min_queries(pct)
        out.early_stopping_met = n >= out.min_queries_for_es
        t = es.stream_t(n, pct)
        out.discarded = None if t is None else t - 1
        src["early_stopping"] = RECOMPUTED
        key = "early_stopping_ttft_result" if tokens else "early_stopping_result"
        text = g(key) if isinstance(g(key), str) else ""
        if (m := _DISCARD.search(text)) and out.discarded is not None and int(m.group(1)) != out.discarded:
            c.mismatch(key, f"'Would discard {m.group(1)}'", f"{out.discarded} discarded",
                       f"result_query_count {n} at the {pct * 100:g}th percentile", "early_stopping")
        if (m := _PROCESSED.search(text)) and int(m.group(1)) != out.min_queries_for_es:
            c.mismatch(key, f"'Processed at least {m.group(1)}'", f"{out.min_queries_for_es} queries needed",
                       f"the {pct * 100:g}th percentile", "early_stopping")
        _estimates(c, sc, n, pct, tokens, text)
    elif sc == "Server" and not tokens and g("result_overlatency_query_count") is not None:
        t_over = whole(c.log, "result_overlatency_query_count")
        out.required_queries = es.server_required_queries(t_over, pct)
        out.early_stopping_met = n >= out.required_queries
        src["early_stopping"] = RECOMPUTED
        text = g("early_stopping_result") if isinstance(g("early_stopping_result"), str) else ""
        if (m := _MORE.search(text)) and int(
            m.group(1)
        ) != out.required_queries - n:
            c.mismatch("early_stopping_result", f"'at least {m.group(1)} more'",
                       f"{out.required_queries - n} more", f"{t_over} of {n} queries over latency", "early_stopping")
    elif sc == "Offline":
        out.early_stopping_met, src["early_stopping"] = True, RECOMPUTED
    else:
        out.early_stopping_met, src["early_stopping"] = _b(g("early_stopping_met", True)), LOGGED


def _family(sc: str, tokens: bool) -> tuple[str, str, str]:
    """(min key, percentile key pattern, max key) of the latencies the early-stopping estimate ranks."""
    if sc == "MultiStream":
        return "result_min_query_latency_ns", "result_{}_percentile_per_query_latency_ns", "result_max_query_latency_ns"
    if tokens:  # the TTFT evaluation runs last and its estimates are the ones logged
        return (
            "result_first_token_min_latency_ns",
            "result_first_token_{}_percentile_latency_ns",
            "result_first_token_max_latency_ns",
        )
    return "result_min_latency_ns", "result_{}_percentile_latency_ns", "result_max_latency_ns"


def _estimates(c: _Claims, sc: str, n: int, pct: float, tokens: bool, text: str) -> None:
    """The early-stopping estimates: each is sorted[n - t], so it lies between the logged order
    statistics at the ranks around n - t; and the text states the logged values."""
    if tokens and not text:
        return  # the TPOT evaluation failed first: the TTFT one (whose estimates are logged) never ran
    from proctor.loadgen import early_stopping as es
    keys = {pct: "early_stopping_latency_ss" if sc == "SingleStream" else "early_stopping_latency_ms"}
    if sc == "SingleStream":
        keys.setdefault(es.SS_ALSO_PERCENTILE, "early_stopping_latency_ms")
    lo_key, pattern, hi_key = _family(sc, tokens)
    ranks: dict[int, tuple[str, int]] = {}
    for rank, key in [(0, lo_key), (n - 1, hi_key)] + [
        (int(n * p), pattern.format(percentile_label(p))) for p in PERCENTILES
    ]:
        v = c.int(key)
        if v is not None and 0 <= rank < n:
            ranks[rank] = (key, v)
    stated = {round(float(m.group(1)), 1): int(m.group(2)) for m in _ESTIMATE.finditer(text)}
    for p, key in keys.items():
        t = es.stream_t(n, p)
        v = c.int(key)
        if t is None or v is None:
            continue
        said = stated.get(round(p * 100, 1))
        if said is not None and said != v:
            c.mismatch(key, v, f"{said} (the early-stopping text)", "early_stopping_result's estimate", "early_stopping")
        k = n - t
        below = [r for r in ranks if r <= k]
        above = [r for r in ranks if r >= k]
        lo = ranks[max(below)] if below else None
        hi = ranks[min(above)] if above else None
        if (lo is not None and v < lo[1]) or (hi is not None and v > hi[1]):
            c.mismatch(
                key, v,
                f"{lo[1] if lo else 0} to {hi[1] if hi else 'any'}",
                f"the estimate is the latency of rank {k} of {n} (t = {t} at the {p * 100:g}th percentile): "
                f"between {lo[0] if lo else 'zero'} and {hi[0] if hi else 'any value'}",
                "early_stopping",
            )
            c.out.corrected[key] = None


_STAT_FAMILIES = (
    ("result_min_latency_ns", "result_{}_percentile_latency_ns", "result_max_latency_ns", "result_mean_latency_ns"),
    ("result_min_query_latency_ns", "result_{}_percentile_per_query_latency_ns", "result_max_query_latency_ns",
     "result_mean_query_latency_ns"),
    ("result_first_token_min_latency_ns", "result_first_token_{}_percentile_latency_ns",
     "result_first_token_max_latency_ns", ""),
    ("result_time_to_output_token_min", "result_time_per_output_token_{}_percentile_ns",
     "result_time_to_output_token_max", ""),
)


def _statistics(c: _Claims, samples: int) -> None:
    """Order statistics of one latency array are ordered (min <= p50 <= ... <= p99.9 <= max) and its
    mean lies between min and max (where the int64 sum cannot have wrapped)."""
    for lo_key, pattern, hi_key, mean_key in _STAT_FAMILIES:
        seq = [(k, c.int(k)) for k in (lo_key, *(pattern.format(percentile_label(p)) for p in PERCENTILES), hi_key)]
        present = [(k, v) for k, v in seq if v is not None]
        for (k0, v0), (k1, v1) in zip(present, present[1:], strict=False):
            if v1 < v0:
                c.mismatch(k1, v1, f"at least {v0}", f"{k0} is {v0}: order statistics of one array", "statistics")
                break
        mean = c.int(mean_key) if mean_key else None
        lo, hi = c.int(lo_key), c.int(hi_key)
        if mean is not None and lo is not None and hi is not None and samples * hi <= MAX_NS and not lo <= mean <= hi:
            c.mismatch(mean_key, mean, f"{lo} to {hi}", f"{lo_key} and {hi_key}", "statistics")
