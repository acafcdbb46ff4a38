"""Metrics and validity of one performance run, with the official LoadGen's definitions.

Rules: MLPerf Inference rules §3 (scenarios and their metrics), §3.x "min duration / min query
count", appendix "Early stopping". Definitions follow the official results.cc: exact order
statistics `sorted[int(n * P)]`, integer means, the `(n - 1) / final_time` rates. Everything works on
whole numpy arrays; a run that ended early is summarised from what completed and marked incomplete.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from proctor.loadgen import early_stopping as es
from proctor.loadgen.option_names import NO_LABELS, OptionNames, scenario_field
from proctor.loadgen.records import NOT_SET, Records, Schedule, done_end
from proctor.loadgen.settings import EffectiveSettings
from proctor.typed_records import field, record

# The official `latency_percentiles` (results.h); the target percentile is reported besides.
PERCENTILES: tuple[float, ...] = (0.50, 0.90, 0.95, 0.97, 0.99, 0.999)
# An Offline query at least this large is summarised by streaming over its completion times in
# chunks (exact order statistics by histogram selection) instead of a sorted latency copy: a
# 600 s run at 1M samples/s would otherwise need 8 more bytes per sample at its end.
STREAM_MIN_SAMPLES = 1 << 22
STREAM_CHUNK = 1 << 18
HIST_BINS = 1 << 16
GATHER_LIMIT = 1 << 20  # a selection range with at most this many values is gathered and sorted

REC_PERF = "Reduce target QPS to improve latency."
REC_TTFT = "TTFT constrain not met: Reduce target QPS to improve latency."
REC_TPOT = "TPOT constrain not met: Reduce target QPS to improve latency."
REC_MIN_DURATION = {
    "SingleStream": "Decrease the expected latency so the loadgen pre-generates more queries.",
    "MultiStream": "Decrease the expected latency so the loadgen pre-generates more queries.",
    "Server": "Increase the target QPS so the loadgen pre-generates more queries.",
    "Offline": "Increase expected QPS so the loadgen pre-generates a larger (coalesced) query.",
}
REC_MIN_QUERIES = (
    "The test exited early, before enough queries were issued.\n"
    "   See the detailed log for why this may have occurred."
)
REASON_MIN_QUERIES = "The test exited early, before enough queries were issued."


@record(slots=True)
class LatencyStats:
    """Order statistics of one latency array (ns), the official way."""

    count: int = 0
    min: int = 0
    max: int = 0
    mean: int = 0
    percentiles: dict[float, int] = field(default_factory=lambda: dict.fromkeys(PERCENTILES, 0))
    target: int = 0  # at the target percentile

    @classmethod
    def of(cls, values: np.ndarray, target_percentile: float, count: int | None = None) -> LatencyStats:
        """`values` is sorted in place; `count` is the official divisor/indexer (defaults to len)."""
        values.sort()
        n = int(values.shape[0])
        if n == 0:
            return cls(percentiles=dict.fromkeys(PERCENTILES, 0))
        k = n if count is None else int(count)

        def at(p: float) -> int:
            return int(values[min(int(k * p), n - 1)])

        return cls(
            count=n,
            min=int(values[0]),
            max=int(values[-1]),
            mean=int(values.sum(dtype=np.int64) // k),
            percentiles={p: at(p) for p in PERCENTILES},
            target=at(target_percentile),
        )


def exact_sum(values: np.ndarray) -> int:
    """The exact sum of int64 values (a Python int; an int64 sum wraps past 2**63). Each value is split
    at bit 32 into a high part in [-2**31, 2**31) and a low part in [0, 2**32), and each part is summed
    in int64, which holds up to 2**31 values: two numpy passes, no Python loop."""
    v = values.astype(np.int64, copy=False)
    if v.shape[0] >= 1 << 31:  # past what the parts' sums hold: Python ints, chunk by chunk
        return sum(exact_sum(v[a : a + (1 << 30)]) for a in range(0, v.shape[0], 1 << 30))
    high = int((v >> 32).sum(dtype=np.int64))
    low = int((v & 0xFFFFFFFF).sum(dtype=np.int64))
    return (high << 32) + low


def _valid_chunks(done: np.ndarray, shift: int, failed: np.ndarray | None, chunk: int) -> Any:
    """Latencies (done - shift) of the completed, not failed samples, chunk by chunk."""
    for a in range(0, done.shape[0], chunk):
        x = done[a : a + chunk]
        ok = x != NOT_SET
        if failed is not None:
            ok &= failed[a : a + chunk] == 0
        v = x[ok]
        v -= shift
        yield v


def streamed_stats(
    done: np.ndarray,
    shift: int,
    failed: np.ndarray | None,
    target_percentile: float,
    *,
    chunk: int = STREAM_CHUNK,
    bins: int = HIST_BINS,
    gather: int = GATHER_LIMIT,
) -> LatencyStats:
    """`LatencyStats.of(done[valid] - shift)` without building that array: one pass for count, min,
    max and the (int64, wrapping like the official accumulator) sum, then histogram passes that
    narrow each wanted rank to a range small enough to gather and sort."""
    n, lo, hi, total = 0, 0, 0, 0
    for v in _valid_chunks(done, shift, failed, chunk):
        if v.shape[0]:
            lo = int(v.min()) if n == 0 else min(lo, int(v.min()))
            hi = int(v.max()) if n == 0 else max(hi, int(v.max()))
            n += int(v.shape[0])
            total += int(v.sum(dtype=np.int64))
    if n == 0:
        return LatencyStats(percentiles=dict.fromkeys(PERCENTILES, 0))
    wrapped = (total + (1 << 63)) % (1 << 64) - (1 << 63)
    wanted = {p: min(int(n * p), n - 1) for p in (*PERCENTILES, target_percentile)}
    # rank -> [range low, range high (inclusive), values below the range, values in the range]
    pending = {r: [lo, hi, 0, n] for r in set(wanted.values())}
    found: dict[int, int] = {}
    while pending:
        for r, (a, b, _, _) in list(pending.items()):
            if a == b:  # a range of one value: that is the answer
                found[r] = a
                del pending[r]
        if not pending:
            break
        ranges = sorted({(a, b, below, cnt) for a, b, below, cnt in pending.values()})
        hists: dict[tuple[int, int], np.ndarray] = {}
        gathered: dict[tuple[int, int], list[np.ndarray]] = {}
        shifts: dict[tuple[int, int], int] = {}
        for a, b, _, cnt in ranges:
            if cnt <= gather:
                gathered[(a, b)] = []
            else:
                shifts[(a, b)] = max(0, (b - a).bit_length() - (bins - 1).bit_length())
                hists[(a, b)] = np.zeros(((b - a) >> shifts[(a, b)]) + 1, np.int64)
        for v in _valid_chunks(done, shift, failed, chunk):
            for (a, b), parts in gathered.items():
                parts.append(v[(v >= a) & (v <= b)])
            for (a, b), h in hists.items():
                sel = v[(v >= a) & (v <= b)]
                sel -= a
                sel >>= shifts[(a, b)]
                h += np.bincount(sel, minlength=h.shape[0])
        ordered: dict[tuple[int, int], np.ndarray] = {}  # each gathered range partitioned once, at all its ranks
        for (a, b), parts in gathered.items():
            ranks = sorted({r - below for r, (ra, rb, below, _) in pending.items() if (ra, rb) == (a, b)})
            ordered[(a, b)] = np.partition(np.concatenate(parts), ranks)  # those ranks hold their order statistics
        for r, (a, b, below, _cnt) in list(pending.items()):
            if (a, b) in gathered:
                found[r] = int(ordered[(a, b)][r - below])
                del pending[r]
                continue
            h, sh = hists[(a, b)], shifts[(a, b)]
            cum = np.cumsum(h)
            k = int(np.searchsorted(cum, r - below, side="right"))
            before = int(cum[k - 1]) if k else 0
            pending[r] = [a + (k << sh), min(b, a + ((k + 1) << sh) - 1), below + before, int(h[k])]
    return LatencyStats(
        count=n,
        min=lo,
        max=hi,
        mean=wrapped // n,
        percentiles={p: found[wanted[p]] for p in PERCENTILES},
        target=found[wanted[target_percentile]],
    )


@record(frozen=True, slots=True)
class CheckFailure:
    """One failed check in plain words: which (`check`), what was measured against what (`fact`),
    and what to change (`fix`, "" when nothing follows). `line` is the reason as logged."""

    check: str  # "failed_samples", "incomplete", "min_duration", "min_queries", "latency", "early_stopping"
    fact: str
    fix: str = ""

    @property
    def line(self) -> str:
        return f"{self.fact}: {self.fix}" if self.fix else self.fact


# The checks a SUT fault decides (sut_faults): listed by their facts, without advice, when one is the cause.
FAULT_CHECKS = ("failed_samples", "incomplete")


# --- per-request SLO attainment ----------------------------------------------------------------------
# The MLPerf verdict judges a percentile of each latency against its bound; attainment judges each
# request: did it meet every target (TTFT and TPOT in a token run, the latency otherwise)? Targets
# default to the benchmark's bounds where the scenario has them (Server); any can be set instead
# (`SLOTargets`, `--slo-ttft-ms` ...). Offline records no first token: only a latency target applies.
SLO_NAMES = ("ttft", "tpot", "latency")
SLO_LABELS = {"ttft": "TTFT", "tpot": "TPOT", "latency": "latency"}
BENCHMARK_BOUNDS = "the benchmark's bounds"


@record(frozen=True, slots=True)
class SLOTargets:
    """Per-request targets in ns for SLO attainment; None: the benchmark's bound, where it has one."""

    ttft_ns: int | None = None
    tpot_ns: int | None = None
    latency_ns: int | None = None
    source: str = "set"  # what the targets given here are, in the logs ("set": by the user)

    def given(self) -> dict[str, int]:
        """The targets set here, by name."""
        values = {"ttft": self.ttft_ns, "tpot": self.tpot_ns, "latency": self.latency_ns}
        return {k: int(v) for k, v in values.items() if v is not None}


@record(slots=True)
class Attainment:
    """How many requests met every target, and the rate they make (goodput).

    `judged` counts every request that ended (completed or failed; a failed one meets nothing);
    `share` = met_all / judged; `goodput_per_s` = the run's requests/s x met_all / completed: the
    completed requests that met every target, at the rate the summary gives for all of them (so
    with every request meeting, goodput is the requests/s figure itself)."""

    targets_ns: dict[str, int]  # name (SLO_NAMES) -> target, in the order judged
    source: str  # BENCHMARK_BOUNDS, "set", or both ("set; ... the benchmark's bounds")
    met: dict[str, int]  # name -> completed requests within that target
    met_all: int  # completed requests within every target
    judged: int  # requests that ended: completed + failed
    completed: int
    requests_per_s: float  # the run's requests/s (PerformanceResult.requests_per_second)
    ignored: tuple[str, ...] = ()  # targets given that this run cannot judge (no token latencies)
    # name -> per issued sample (by sequence number), met or not (a sample that did not complete: not
    # met); what the per-request export writes. Empty for the streamed Offline summary.
    masks: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def share(self) -> float:
        return self.met_all / self.judged if self.judged else 0.0

    @property
    def goodput_per_s(self) -> float:
        return self.requests_per_s * self.met_all / self.completed if self.completed else 0.0

    def describe_targets(self) -> str:
        """`TTFT <= 2000 ms, TPOT <= 100 ms`."""
        return ", ".join(f"{SLO_LABELS[k]} <= {v / 1e6:g} ms" for k, v in self.targets_ns.items())

    def lines(self) -> list[str]:
        """The summary's lines (after `PROCTOR: `)."""
        per = ", ".join(f"{SLO_LABELS[k]} {self.met[k]}" for k in self.targets_ns)
        out = [
            f"SLO attainment: {self.met_all} of {self.judged} requests ({self.share:.2%}) met every SLO target "
            f"({self.describe_targets()}; {self.source}); within each: {per}",
            f"goodput: {self.goodput_per_s:.2f} requests/s met every SLO target, of {self.requests_per_s:.2f} "
            "requests/s completed (the MLPerf verdict judges the percentile against the bounds instead)",
        ]
        if self.ignored:
            out.append(f"SLO targets not judged ({', '.join(self.ignored)}): this run records no token latencies")
        return out


def slo_targets(eff: EffectiveSettings, slo: SLOTargets | None) -> tuple[dict[str, int], str, tuple[str, ...]]:
    """(targets by name, where they come from, targets given that the run cannot judge). The
    benchmark's bounds stand where the scenario has them (Server) and none is given in their place."""
    scenario = str(eff.scenario)
    tokens = bool(eff.use_token_latencies) and scenario != "Offline"
    names = ("ttft", "tpot") if tokens else ("latency",)
    given = slo.given() if slo is not None else {}
    bounds: dict[str, int] = {}
    if scenario == "Server":
        if tokens:
            bounds = {"ttft": int(eff.server_ttft_latency), "tpot": int(eff.server_tpot_latency)}
        elif eff.target_latency_ns > 0:
            bounds = {"latency": int(eff.target_latency_ns)}
    targets: dict[str, int] = {}
    for name in SLO_NAMES:
        if name in given and (name in names or name == "latency"):
            targets[name] = given[name]
        elif name in bounds:
            targets[name] = bounds[name]
    ignored = tuple(SLO_LABELS[k] for k in given if k not in targets)
    from_bounds = [k for k in targets if k not in given]
    mine = slo.source if slo is not None else ""
    if not given or not targets:
        source = BENCHMARK_BOUNDS
    elif from_bounds:
        source = f"{mine}; {', '.join(SLO_LABELS[k] for k in from_bounds)} the benchmark's bound"
    else:
        source = mine
    return targets, source, ignored


class _Judge:
    """Per-request met/not met for each target, from the summary's own per-sample arrays."""

    def __init__(self, targets: dict[str, int], n: int) -> None:
        self.targets = targets
        self.met: dict[str, np.ndarray] = {}
        self.n = n

    def mark(self, name: str, where: np.ndarray, values: np.ndarray) -> None:
        """`values` are the measure of the samples where `where` holds (before any sort)."""
        if name not in self.targets:
            return
        ok = np.zeros(self.n, bool)
        ok[where] = values <= self.targets[name]
        self.met[name] = ok

    def attainment(self, res: PerformanceResult, source: str, ignored: tuple[str, ...]) -> Attainment | None:
        if not self.targets:
            return None
        names = [k for k in self.targets if k in self.met]
        if not names:
            return None
        every = np.logical_and.reduce([self.met[k] for k in names])
        return Attainment(
            targets_ns={k: self.targets[k] for k in names},
            source=source,
            met={k: int(np.count_nonzero(self.met[k])) for k in names},
            met_all=int(np.count_nonzero(every)),
            judged=res.sample_count + res.failed_samples,
            completed=res.sample_count,
            requests_per_s=res.requests_per_second,
            ignored=ignored,
            masks={**{k: self.met[k] for k in names}, "all": every},
        )


@record(slots=True)
class PerformanceResult:
    scenario: str
    mode: str
    target_percentile: float
    use_token_latencies: bool = False
    infer_token_latencies: bool = False  # the run's setting: the inferred token rates are logged
    complete: bool = True
    incomplete_reason: str = ""
    query_count: int = 0  # queries issued (official result_query_count)
    sample_count: int = 0  # samples completed
    samples: LatencyStats = field(default_factory=LatencyStats)
    queries: LatencyStats = field(default_factory=LatencyStats)  # MultiStream per-query
    final_query_scheduled_s: float = 0.0
    final_query_issued_s: float = 0.0
    final_query_done_s: float = 0.0
    max_latency_s: float = 0.0
    # scenario metrics
    qps_with_loadgen_overhead: float = 0.0  # SingleStream
    qps_without_loadgen_overhead: float = 0.0  # SingleStream
    scheduled_samples_per_sec: float = 0.0  # Server
    completed_samples_per_sec: float = 0.0  # Server
    samples_per_second: float = 0.0  # Offline
    # the run's one requests/s figure (sweep tables, goodput): Server's completed samples per second,
    # Offline's samples per second, (n - 1) / the last completion's time otherwise
    requests_per_second: float = 0.0
    overlatency_count: int = 0  # Server: latency > target
    ttft_overlatency_count: int = 0  # Server, token latencies: TTFT > its target
    tpot_overlatency_count: int = 0  # Server, token latencies: TPOT > its target
    # tokens
    token_count: int = 0
    ttft: LatencyStats = field(default_factory=LatencyStats)
    tpot: LatencyStats = field(default_factory=LatencyStats)
    tokens_per_second: float = 0.0  # Offline
    completed_tokens_per_second: float = 0.0  # non-Offline: count / final done
    token_throughput_with_loadgen_overhead: float = 0.0  # count / final issued
    token_throughput: float = 0.0  # official quirk: count / (mean_ns * n)
    tps_without_loadgen_overhead: float = 0.0  # summary SS: count / (mean_s * n)
    # infer_token_latencies only: factor x samples / max latency (Offline), factor x (samples - 1) /
    # final done (Server), as results.cc computes them; proctor's extension: factor x QPS w/ overhead (SS)
    inferred_tokens_per_second: float = 0.0
    # early stopping
    early_stopping_text: str = ""
    early_stopping_ttft_text: str = ""
    early_stopping_tpot_text: str = ""
    early_stopping_latency_ss: int = 0
    early_stopping_latency_ms: int = 0
    early_stopping_t: int = 0
    # Server: the rules' procedure past the official queries (loadgen.early_stopping_extension)
    early_stopping_nominal_queries: int = 0  # the official query count (0: no extension armed)
    early_stopping_extra_queries: int = 0  # queries issued after them
    early_stopping_extension_stop: str = ""  # why issuing ended once extending (Records.extension_stop)
    early_stopping_needed: int = 0  # Server: the query count n the final over-latency counts require
    # validity
    min_duration_met: bool = False
    min_queries_met: bool = False
    perf_constraints_met: bool = True
    early_stopping_met: bool = True
    valid: bool = False
    perf_constraints_recommendation: str = ""
    min_duration_recommendation: str = ""
    recommendations: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)  # each failure's line, as logged (proctor_invalid_reasons)
    failures: list[CheckFailure] = field(default_factory=list)  # the same, as fact and fix
    failed_samples: int = 0  # samples the SUT failed (completion.fail_samples): not results
    # > 0: a closed loop with this many queries in flight (`proctor sweep --concurrency`): not an
    # MLPerf scenario, so never VALID whatever its numbers (engine.CLOSED_LOOP_REASON)
    closed_loop_in_flight: int = 0
    # issue lateness (actual issue - scheduled), ns
    issue_lateness_p50_ns: int = 0
    issue_lateness_p99_ns: int = 0
    issue_lateness_max_ns: int = 0
    attainment: Attainment | None = None  # per-request SLO attainment and goodput (None: no target)

    @property
    def has_perf_constraints(self) -> bool:
        return self.scenario == "Server"

    @property
    def invalid_reason(self) -> str:
        """The official `result_invalid_reason` text."""
        text = ""
        if not self.perf_constraints_met:
            text += self.perf_constraints_recommendation + " "
        if not self.min_duration_met:
            text += self.min_duration_recommendation + " "
        if not self.min_queries_met:
            text += REASON_MIN_QUERIES
        return text


def _seconds(ns: int) -> float:
    return ns / 1e9


def _rate(count: float, seconds: float) -> float:
    if seconds > 0:
        return count / seconds
    return float("nan") if count == 0 else float("inf")


def _fmt_s(seconds: float) -> str:
    return f"{seconds:.3g} s" if seconds < 100 else f"{seconds:.0f} s"


def _infer_tokens(res: PerformanceResult, factor: int) -> None:
    """The inferred token rate (infer_token_latencies): the integer product first, then one division,
    as results.cc LogDetail/LogSummary compute it, so the detail log's value is the official's."""
    if res.scenario == "Offline":
        res.inferred_tokens_per_second = _rate(res.sample_count * factor, res.max_latency_s)
    elif res.scenario == "Server":
        res.inferred_tokens_per_second = _rate(max(res.sample_count - 1, 0) * factor, res.final_query_done_s)
    elif res.scenario == "SingleStream":
        res.inferred_tokens_per_second = factor * res.qps_with_loadgen_overhead


def summarize(
    eff: EffectiveSettings,
    schedule: Schedule,
    records: Records,
    slo: SLOTargets | None = None,
    names: OptionNames = NO_LABELS,
) -> PerformanceResult:
    """Every metric and validity decision of the official PerformanceSummary, from raw records; and
    proctor's per-request SLO attainment against `slo` (None: the benchmark's bounds). The reasons
    name each option to change as `names` says (the caller's labels, else the setting's own name)."""
    scenario = str(eff.scenario)
    pct = float(eff.target_latency_percentile)
    res = PerformanceResult(
        scenario=scenario,
        mode=str(eff.test_mode),
        target_percentile=pct,
        use_token_latencies=bool(eff.use_token_latencies),
        infer_token_latencies=bool(eff.infer_token_latencies),
        complete=not records.incomplete,
        incomplete_reason=records.incomplete_reason,
    )
    start = int(records.start_ns)
    nq = int(records.n_queries_issued)
    res.query_count = nq
    ns_issued = int(schedule.query_offsets[nq]) if nq > 0 else 0

    res.failed_samples = int(records.failed_samples)
    done = records.sample_done_ns[:ns_issued]
    failed = None if records.sample_failed is None else records.sample_failed[:ns_issued]
    targets, source, ignored = slo_targets(eff, slo)
    if scenario == "Offline" and nq == 1 and ns_issued >= STREAM_MIN_SAMPLES and not eff.use_token_latencies:
        # one query, no early stopping: streamed statistics, nothing per sample allocated, read up
        # to the last completion (an interrupted query's unfinished tail is no result)
        end = done_end(done, ns_issued)
        done, failed = done[:end], None if failed is None else failed[:end]
        _summarize_streamed(res, records, done, failed, pct, start)
        res.requests_per_second = res.samples_per_second
        if "latency" in targets:
            shift = int(records.query_scheduled_ns[0])
            met = sum(int(np.count_nonzero(v <= targets["latency"])) for v in _valid_chunks(done, shift, failed, STREAM_CHUNK))
            res.attainment = Attainment({"latency": targets["latency"]}, source, {"latency": met}, met,
                                        res.sample_count + res.failed_samples, res.sample_count,
                                        res.requests_per_second, ignored)
        if eff.infer_token_latencies:
            _infer_tokens(res, int(eff.token_latency_scaling_factor))
        empty = np.empty(0, np.int64)
        _validity(res, eff, empty, empty, empty, empty, names)
        return res
    # sample latencies from the scheduled time of each sample's query
    counts = np.diff(schedule.query_offsets[: nq + 1])
    query_of = np.repeat(np.arange(nq, dtype=np.int64), counts)
    completed = done != NOT_SET
    if failed is not None:  # a failed sample is no result: never a fast one
        completed &= failed == 0
    sched_of_sample = records.query_scheduled_ns[query_of]
    lat = (done - sched_of_sample)[completed]
    judge = _Judge(targets, ns_issued)
    judge.mark("latency", completed, lat)  # before the sort below
    res.sample_count = int(lat.shape[0])
    res.samples = LatencyStats.of(lat, pct)  # sorts `lat` in place: early stopping needs it sorted

    if nq > 0:
        last = nq - 1
        res.final_query_scheduled_s = _seconds(int(records.query_scheduled_ns[last]) - start)
        res.final_query_issued_s = _seconds(int(records.query_issued_ns[last]) - start)
        last_done = int(records.query_done_ns[last])
        if last_done == NOT_SET:  # incomplete: the last completion seen stands in
            last_done = int(done[completed].max()) if res.sample_count else start
        res.final_query_done_s = _seconds(last_done - start)
    res.max_latency_s = _seconds(res.samples.max)

    if schedule.n_nominal >= 0:
        res.early_stopping_nominal_queries = schedule.n_nominal
        res.early_stopping_extra_queries = max(nq - schedule.n_nominal, 0)
        res.early_stopping_extension_stop = records.extension_stop

    n = res.sample_count
    if scenario == "Server":
        res.overlatency_count = int(np.count_nonzero(lat > eff.target_latency_ns))
        res.scheduled_samples_per_sec = _rate(max(n - 1, 0), res.final_query_scheduled_s)
        res.completed_samples_per_sec = _rate(max(n - 1, 0), res.final_query_done_s)
    elif scenario == "SingleStream":
        res.qps_with_loadgen_overhead = _rate(max(n - 1, 0), res.final_query_issued_s)
        res.qps_without_loadgen_overhead = _rate(1, _seconds(res.samples.mean))
    elif scenario == "Offline":
        res.samples_per_second = _rate(n, res.max_latency_s)
    res.requests_per_second = {"Server": res.completed_samples_per_sec, "Offline": res.samples_per_second}.get(
        scenario, _rate(max(n - 1, 0), res.final_query_done_s)
    )

    qlat = np.empty(0, np.int64)
    if scenario == "MultiStream":
        qdone = records.query_done_ns[:nq]
        qok = qdone != NOT_SET
        if records.sample_failed is not None:  # a query with a failed sample has no latency
            qok &= np.bincount(query_of, weights=records.sample_failed[:ns_issued], minlength=nq)[:nq] == 0
        qlat = (qdone - records.query_scheduled_ns[:nq])[qok]
        res.queries = LatencyStats.of(qlat, pct)  # sorted in place: reused by early stopping

    ttft = tpot = np.empty(0, np.int64)
    if res.use_token_latencies:
        ntok = records.sample_n_tokens[:ns_issued]
        res.token_count = int(ntok[completed].sum(dtype=np.int64))
        if scenario != "Offline":
            first = records.sample_first_token_ns[:ns_issued]
            has_first = completed & (first != NOT_SET)
            ttft = (first - sched_of_sample)[has_first]
            full = (done - sched_of_sample)[has_first]
            per = np.maximum(ntok[has_first] - 1, 1)
            tpot = (full - ttft) // per
            judge.mark("ttft", has_first, ttft)  # before the sorts below; no first token: not met
            judge.mark("tpot", has_first, tpot)
            res.ttft = LatencyStats.of(ttft, pct, count=n)
            res.tpot = LatencyStats.of(tpot, pct, count=n)
            res.token_throughput_with_loadgen_overhead = _rate(res.token_count, res.final_query_issued_s)
            res.completed_tokens_per_second = _rate(res.token_count, res.final_query_done_s)
            res.token_throughput = _rate(res.token_count, float(res.samples.mean) * n)
            res.tps_without_loadgen_overhead = _rate(res.token_count, _seconds(res.samples.mean) * n)
        else:
            res.tokens_per_second = _rate(res.token_count, res.max_latency_s)
    if eff.infer_token_latencies:
        _infer_tokens(res, int(eff.token_latency_scaling_factor))

    # issue lateness (how late the issuer was against the schedule)
    if nq > 0:
        issued = records.query_issued_ns[:nq]
        ok = issued != NOT_SET
        late = issued[ok] - records.query_scheduled_ns[:nq][ok]
        if late.shape[0]:
            late.sort()
            res.issue_lateness_p50_ns = int(late[int(late.shape[0] * 0.5)])
            res.issue_lateness_p99_ns = int(late[int(late.shape[0] * 0.99)])
            res.issue_lateness_max_ns = int(late[-1])

    if scenario == "Server":
        if res.use_token_latencies:
            res.ttft_overlatency_count = int(np.count_nonzero(ttft > eff.server_ttft_latency))
            res.tpot_overlatency_count = int(np.count_nonzero(tpot > eff.server_tpot_latency))
            res.early_stopping_needed = max(
                es.server_required_queries(res.ttft_overlatency_count, pct),
                es.server_required_queries(res.tpot_overlatency_count, pct),
            )
        else:
            res.early_stopping_needed = es.server_required_queries(res.overlatency_count, pct)
    _validity(res, eff, lat, qlat, ttft, tpot, names)
    _procedure_note(res)
    res.attainment = judge.attainment(res, source, ignored)
    return res


STOP_TEXT = {
    "bound": "proctor's bound on extra queries",
    "max_duration": "max_duration",
    "max_query_count": "max_query_count",
    "too_many_outstanding": "too many outstanding queries",
    "timeout": "the SUT's timeout",
}


def _procedure_note(res: PerformanceResult) -> None:
    """Server: what the rules' early-stopping procedure did past the official queries, added to the
    early-stopping text (summary and detail log): met after k extra queries, or stopped at a bound
    with how many more the procedure needed."""
    if res.scenario != "Server" or not res.early_stopping_nominal_queries:
        return
    extra, stop = res.early_stopping_extra_queries, res.early_stopping_extension_stop
    short = max(res.early_stopping_needed - res.query_count, 0)
    if res.early_stopping_met:
        if not extra:
            return
        note = f"\n * Early stopping met after {extra} extra queries (rules' procedure, step 4)."
    elif stop in ("", "met_at_schedule_end"):
        note = (
            "\n * The queries known to be over latency when the official queries ended needed no more;"
            f"\n those still in flight did: {short} more queries were needed."
        )
    else:
        note = (
            f"\n * Ran {extra} extra queries (rules' procedure, step 4) and stopped at "
            f"{STOP_TEXT.get(stop, stop)}:\n {short} more queries were needed."
        )
    if res.use_token_latencies:
        res.early_stopping_tpot_text += note
    else:
        res.early_stopping_text += note


def _summarize_streamed(
    res: PerformanceResult,
    records: Records,
    done: np.ndarray,
    failed: np.ndarray | None,
    pct: float,
    start: int,
) -> None:
    """The Offline figures of `summarize` for one large query, from streamed statistics."""
    sched = int(records.query_scheduled_ns[0])
    res.samples = streamed_stats(done, sched, failed, pct)
    res.sample_count = n = res.samples.count
    res.final_query_scheduled_s = _seconds(sched - start)
    res.final_query_issued_s = _seconds(int(records.query_issued_ns[0]) - start)
    last_done = int(records.query_done_ns[0])
    if last_done == NOT_SET:
        last_done = sched + res.samples.max if n else start
    res.final_query_done_s = _seconds(last_done - start)
    res.max_latency_s = _seconds(res.samples.max)
    res.samples_per_second = _rate(n, res.max_latency_s)
    if records.query_issued_ns[0] != NOT_SET:
        late = int(records.query_issued_ns[0]) - sched
        res.issue_lateness_p50_ns = res.issue_lateness_p99_ns = res.issue_lateness_max_ns = late


def _validity(
    res: PerformanceResult,
    eff: EffectiveSettings,
    lat: np.ndarray,
    qlat: np.ndarray,
    ttft: np.ndarray,
    tpot: np.ndarray,
    names: OptionNames,
) -> None:
    scenario, pct = res.scenario, res.target_percentile
    min_s = eff.min_duration_ms / 1000.0
    measured = {"Offline": res.max_latency_s, "Server": res.final_query_scheduled_s}.get(
        scenario, res.final_query_issued_s
    )
    res.min_duration_met = measured >= min_s
    if not res.min_duration_met:
        res.min_duration_recommendation = REC_MIN_DURATION[scenario]
    res.min_queries_met = res.query_count >= eff.min_query_count and res.sample_count >= eff.min_sample_count

    if scenario == "Server":
        recs = []
        if not res.use_token_latencies:
            if res.samples.target > eff.target_latency_ns:
                recs.append(REC_PERF)
        else:
            if res.ttft.target > eff.server_ttft_latency:
                recs.append(REC_TTFT)
            if res.tpot.target > eff.server_tpot_latency:
                recs.append(REC_TPOT)
        res.perf_constraints_met = not recs
        res.perf_constraints_recommendation = "\n * ".join(recs)

    if not res.use_token_latencies:
        arr = qlat if scenario == "MultiStream" else lat  # both already sorted
        ev = es.evaluate(scenario, arr, res.query_count, pct, eff.target_latency_ns)
        res.early_stopping_met, res.early_stopping_text = ev.ok, ev.text
        res.early_stopping_latency_ss, res.early_stopping_latency_ms = ev.latency_ss, ev.latency_ms
        res.early_stopping_t = ev.t
    elif scenario == "MultiStream":
        # official: the token runs pass query latencies through untouched for MultiStream
        ev = es.evaluate(scenario, qlat, res.query_count, pct)
        res.early_stopping_met = ev.ok
        res.early_stopping_ttft_text = res.early_stopping_tpot_text = ev.text
        res.early_stopping_latency_ms = ev.latency_ms
    else:
        ok, ev_ttft, ev_tpot = es.evaluate_tokens(
            scenario, res.query_count, ttft, tpot, pct, eff.server_ttft_latency, eff.server_tpot_latency
        )
        res.early_stopping_met = ok
        res.early_stopping_ttft_text, res.early_stopping_tpot_text = ev_ttft.text, ev_tpot.text
        last = ev_ttft if ev_ttft.text else ev_tpot
        res.early_stopping_latency_ss, res.early_stopping_latency_ms = last.latency_ss, last.latency_ms
        res.early_stopping_t = last.t

    res.valid = (
        res.min_duration_met
        and res.min_queries_met
        and res.perf_constraints_met
        and res.early_stopping_met
        and res.complete
        and res.failed_samples == 0
    )
    if not res.perf_constraints_met:
        res.recommendations.append(res.perf_constraints_recommendation)
    if not res.min_duration_met:
        res.recommendations.append(res.min_duration_recommendation)
    if not res.min_queries_met:
        res.recommendations.append(REC_MIN_QUERIES)
    res.failures = _reasons(res, eff, measured, min_s, names)
    res.reasons = [f.line for f in res.failures]


def _reasons(
    res: PerformanceResult, eff: EffectiveSettings, measured_s: float, min_s: float, names: OptionNames
) -> list[CheckFailure]:
    """proctor's plain-language account of each failed check: what, the numbers, what to change (each
    option named as `names` says)."""
    out: list[CheckFailure] = []
    if res.failed_samples:
        out.append(CheckFailure(
            "failed_samples",
            f"the SUT failed {res.failed_samples} samples (see the errors in the detail log)",
            "a failed sample is not a result, so the latencies leave them out and the run is invalid",
        ))
    if not res.complete:
        out.append(CheckFailure(
            "incomplete",
            f"the run did not finish ({res.incomplete_reason or 'interrupted'})",
            f"only what completed was measured ({res.sample_count} samples)",
        ))
    if not res.min_duration_met:
        what = {"Offline": "the Offline query took", "Server": "the last query was scheduled at"}.get(
            res.scenario, "the last query was issued at"
        )
        out.append(CheckFailure(
            "min_duration",
            f"ran {_fmt_s(measured_s)} but min_duration is {_fmt_s(min_s)} ({what} {_fmt_s(measured_s)})",
            _min_duration_fix(res, eff, names),
        ))
    if not res.min_queries_met:
        out.append(CheckFailure(
            "min_queries",
            f"issued {res.query_count} queries / {res.sample_count} samples but the minimum is "
            f"{eff.min_query_count} queries / {eff.min_sample_count} samples",
            "the run stopped early (see the errors in the detail log) or max_query_count/max_duration is too low",
        ))
    if not res.perf_constraints_met:
        pc = f"{res.target_percentile * 100:g}th percentile"
        lower = f"lower {names.named('target_qps', 'server_target_qps', note=f'now {eff.target_qps:g}')}"
        if not res.use_token_latencies:
            out.append(CheckFailure(
                "latency", f"{pc} latency is {res.samples.target} ns, above the {eff.target_latency_ns} ns bound", lower
            ))
        else:
            if res.ttft.target > eff.server_ttft_latency:
                out.append(CheckFailure(
                    "latency",
                    f"{pc} time to first token is {res.ttft.target} ns, above the {eff.server_ttft_latency} ns bound",
                    lower,
                ))
            if res.tpot.target > eff.server_tpot_latency:
                out.append(CheckFailure(
                    "latency",
                    f"{pc} time per output token is {res.tpot.target} ns, above the "
                    f"{eff.server_tpot_latency} ns bound",
                    lower,
                ))
    if not res.early_stopping_met:
        early = _server_early_stopping if res.scenario == "Server" else _stream_early_stopping
        fact, fix = early(res, eff, names)
        out.append(CheckFailure("early_stopping", fact, fix))
    return out


# --- what to change, named as the caller sets it (option_names: the CLI's flags), with a value ---------

DURATION_MARGIN = 1.1  # a Poisson schedule of D seconds at r qps holds about r * D queries: ask 10% more
PROJECTION_LIMIT = 1 << 26  # past this many queries the over-latency share is taken as never passing


def _round_up(x: float, digits: int = 2) -> float:
    """`x` rounded up to `digits` significant digits (a value a user types: 11748 -> 12000)."""
    if x <= 0:
        return 0.0
    scale = 10.0 ** (int(np.floor(np.log10(x))) - digits + 1)
    return float(np.ceil(x / scale - 1e-9) * scale)


def _min_duration_fix(res: PerformanceResult, eff: EffectiveSettings, names: OptionNames) -> str:
    """What makes the run reach min_duration: the option and, where the run measured it, the value."""
    if res.scenario == "Offline":
        if res.samples_per_second > 0:
            # the Offline query holds expected_qps x min_duration x 1.1 samples (normalize); asking
            # for 1.1 x the measured rate makes it last about 1.2 x min_duration on this machine
            want = _round_up(res.samples_per_second * DURATION_MARGIN)
            rate = names.named("target_qps", "offline_expected_qps", f"{want:g} or more")
            return (
                f"the SUT did {res.samples_per_second:,.0f} samples/s, more than the {eff.target_qps:g} asked: "
                f"{rate} makes the single query last min_duration"
            )
        return f"raise {names.named('target_qps', 'offline_expected_qps')} so the single query holds more samples"
    if res.scenario == "Server":
        return (
            "the schedule was cut short (max_duration or max_query_count, or the run stopped): raise "
            f"{names.named('max_duration_ms', 'max_duration')} or max_query_count"
        )
    mean_ms = res.samples.mean / 1e6
    value = ""
    if mean_ms > 0:  # the option (expected_latency_ms) is in ms, the setting it sets in ns
        shown = f"{mean_ms:.3g}" if names.labelled("expected_latency_ms") else f"{float(f'{mean_ms:.3g}') * 1e6:.0f}"
        value = f"{shown} or less (the measured mean latency)"
    latency = names.named("expected_latency_ms", _latency_field(res.scenario), value)
    return f"lower {latency}: more queries are generated"


def _latency_field(scenario: str) -> str:
    """The expected-latency setting of a stream scenario (SingleStream's for any other)."""
    return scenario_field("expected_latency_ms", scenario) or "single_stream_expected_latency_ns"


def projected_queries(over: int, queries: int, percentile: float) -> int | None:
    """The Server queries early stopping needs if queries keep going over latency in the share seen so
    far (`over` of `queries`): the least n with n >= f(t) + t at t = share x n. None when that share
    is too high for any run length (then only a lower rate helps)."""
    share = over / queries if queries > 0 else 0.0
    if share >= 1.0 - percentile:
        return None
    n = es.server_required_queries(over, percentile)
    for _ in range(200):
        nxt = es.server_required_queries(int(np.ceil(share * n)), percentile)
        if nxt <= n:
            return n
        if nxt > PROJECTION_LIMIT:
            return None
        n = nxt
    return None


def _server_early_stopping(res: PerformanceResult, eff: EffectiveSettings, names: OptionNames) -> tuple[str, str]:
    """Server early stopping, its true cause: too few queries (how many it has, how many it needs, and
    the min_duration / min_query_count that gives them at this rate), or too many over latency."""
    pct = res.target_percentile
    if res.use_token_latencies:
        counts = {"TTFT": res.ttft_overlatency_count, "TPOT": res.tpot_overlatency_count}
        over = ", ".join(f"{v} over the {k} bound" for k, v in counts.items())
        if not any(counts.values()):
            over = "none over the TTFT/TPOT bounds"
    else:
        counts = {"latency": res.overlatency_count}
        over = f"{res.overlatency_count} over the latency bound" if res.overlatency_count else "none over latency"
    need = max(es.server_required_queries(t, pct) for t in counts.values())
    q = res.query_count
    ran = f"{q} queries"
    stop = res.early_stopping_extension_stop
    if res.early_stopping_nominal_queries and stop not in ("", "met_at_schedule_end"):
        ran += (
            f" ({res.early_stopping_nominal_queries} official + {res.early_stopping_extra_queries} more by the "
            f"rules' procedure (Early Stopping Criterion, step 4), stopped at {STOP_TEXT.get(stop, stop)})"
        )
    facts = (
        f"{ran}, {over}: {max(need - q, 0)} short of the {need} queries a {pct * 100:g}th percentile "
        "estimate then needs"
    )
    projected = [projected_queries(t, q, pct) for t in counts.values()]
    if any(n is None for n in projected):
        worst = max(counts.values())
        return (
            f"early stopping: too many queries over latency ({worst} of {q}, {worst / max(q, 1):.2%}; no run "
            f"length passes unless well under {(1 - pct) * 100:g}% are): {facts}",
            f"lower {names.named('target_qps', 'server_target_qps', note=f'now {eff.target_qps:g}')}",
        )
    n = max(int(x) for x in projected if x is not None)
    rate = float(eff.target_qps)
    seconds = int(np.ceil(n * DURATION_MARGIN / rate)) if rate > 0 else 0
    duration, qps = names.name("min_duration_ms", "min_duration"), names.name("target_qps", "server_target_qps")
    longer = f"{duration} {seconds * 1000} at {qps} {rate:g} (~{rate * seconds:,.0f} queries), or " if seconds else ""
    return (
        f"early stopping: too few queries, not too slow: {facts}",
        f"run longer: {longer}{names.named('min_query_count', 'min_query_count', str(n))}",
    )


def _stream_early_stopping(res: PerformanceResult, eff: EffectiveSettings, names: OptionNames) -> tuple[str, str]:
    need = es.min_queries(res.target_percentile)
    return (
        f"early stopping: processed {res.query_count} queries but a {res.target_percentile * 100:g}th "
        f"percentile estimate needs at least {need}",
        f"{names.named('min_query_count', 'min_query_count', str(need))}, or run longer "
        f"({names.name('min_duration_ms', 'min_duration')}) or lower "
        f"{names.name('expected_latency_ms', _latency_field(res.scenario))}",
    )
