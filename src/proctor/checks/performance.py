"""One performance run's detail log against the rules: what LoadGen measured must be a valid result.

Checked (closed/network unless noted): LoadGen errors, test mode, the round's seeds (all divisions),
the 600 s minimum duration (all), minimum queries (all), the performance sample count >= QSL size,
early stopping for the percentile scenarios (all), the target percentile, the Server/Interactive
latency or TTFT/TPOT bounds (p99 strictly below; the run's own bound never looser), the Offline
query size (per suite) and MultiStream's 8 samples per query.
"""

from __future__ import annotations

import math

from proctor.checks.detail_log import DetailLogData, short
from proctor.findings import Finding, Severity
from proctor.lazy_patterns import LazyPattern
from proctor.rules.inference import (
    MIN_DURATION_MS,
    MULTISTREAM_SAMPLES_PER_QUERY,
    RULES,
    Benchmark,
    Category,
    Suite,
)
from proctor.rules.rounds import SEED_KEYS
from proctor.typed_records import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SCENARIOS_SRC = f"{RULES} §Scenarios table"
EARLY_STOPPING_SRC = f"{RULES} [[appendix-early_stopping]]"
# Target tail-latency percentile per scenario (§Scenarios table); PointPainting SS uses 99.9 %.
PERCENTILE = {
    Category.SINGLE_STREAM: 0.90,
    Category.MULTI_STREAM: 0.99,
    Category.SERVER: 0.99,
    Category.INTERACTIVE: 0.99,
}
PERFORMANCE_MODES = ("PerformanceOnly", "SubmissionRun")
NS_PER_MS = 1_000_000
MAX_ERRORS_LISTED = 5


@record(frozen=True, slots=True)
class RunRules:
    """What one run is held to: the benchmark, its result category, the round's seeds, the division."""

    benchmark: Benchmark
    category: Category  # the folder's scenario (Interactive is a Server run)
    run_category: Category  # the scenario the log was measured in (differs for inferred copies)
    seeds: tuple[int, int, int]
    version: str
    closed: bool
    min_performance_samples: int
    # The suites the result is held to (the system's, or edge for a `*-edge` folder); empty: unknown,
    # and the strictest suite's numbers apply.
    suites: tuple[Suite, ...] = ()

    def offline_min_samples(self) -> int:
        """§Scenarios note **, per suite (Llama3.1-8B: 13,368 in the datacenter, 5,000 on the edge)."""
        suites = self.suites or tuple(self.benchmark.qsl_size) or (None,)
        return max(self.benchmark.offline_min_samples(s) for s in suites)


class _Log:
    """Collects findings about one log, each pointing at the key's line."""

    def __init__(self, log: DetailLogData) -> None:
        self.log = log
        self.out: list[Finding] = []
        # The run was judged against a bound tighter than the rules' (e.g. mlperf.conf's 15 ms
        # GPT-OSS-120B Interactive TPOT; the rules say 20 ms) and met the rules' bound.
        self.stricter_bound = ""

    def need(self, key: str) -> Any:
        if key not in self.log:
            self.out.append(
                Finding(
                    rule="detail_log_key",
                    path=self.log.path,
                    key=key,
                    message=f"key '{key}' is missing from the detail log; the run did not finish or the log was cut",
                )
            )
        return self.log.get(key)

    def num(self, key: str, *, required: bool = True) -> float | None:
        """A numeric value, or None (with a finding when present but not a number)."""
        value = self.need(key) if required else self.log.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            self.bad("detail_log_value", key, f"'{key}' should be a finite number, found {short(value)}")
            return None
        return value

    def bad(self, rule: str, key: str, message: str, **kw: Any) -> None:
        self.out.append(
            Finding(
                rule=rule,
                path=self.log.path,
                message=message,
                key=key,
                line=self.log.line_of(key),
                value=self.log.get(key),
                **kw,
            )
        )


def check_performance_log(log: DetailLogData, rules: RunRules) -> list[Finding]:
    c = _Log(log)
    bench, run_cat = rules.benchmark, rules.run_category
    for line, key, value in log.errors[:MAX_ERRORS_LISTED]:
        c.out.append(
            Finding(
                rule="loadgen_error",
                path=log.path,
                line=line,
                key=key,
                message=f"LoadGen logged an error at line {line}: {key} = {short(value)}; fix its cause and rerun",
            )
        )
    if log.n_errors > MAX_ERRORS_LISTED:
        c.out.append(
            Finding(
                rule="loadgen_error",
                path=log.path,
                message=f"{log.n_errors - MAX_ERRORS_LISTED} more LoadGen errors in this log",
            )
        )
    mode = log.get("effective_test_mode")
    if mode is not None and mode not in PERFORMANCE_MODES:
        c.bad("test_mode", "effective_test_mode", f"test mode {short(mode)} is not a performance run")
    # Seeds: the round's official values from its mlperf.conf (§Non-determinism is restricted).
    for key, want in zip(SEED_KEYS, rules.seeds, strict=True):
        got = c.num(f"effective_{key}")
        if got is not None and int(got) != want:
            c.bad(
                "seeds",
                f"effective_{key}",
                f"{key} is {got}, the {rules.version} official value is {want}; "
                "do not override seeds in user.conf or code",
                expected=want,
                source=f"{RULES} §Non-determinism is restricted",
            )
    dur = c.num("effective_min_duration_ms")
    if dur is not None and int(dur) < MIN_DURATION_MS:
        c.bad(
            "min_duration",
            "effective_min_duration_ms",
            f"min duration {dur} ms is below the rules' 600 s; remove the min_duration override",
            expected=MIN_DURATION_MS,
            source=SCENARIOS_SRC,
        )
    if log.get("result_min_duration_met") is False:
        c.bad(
            "min_duration",
            "result_min_duration_met",
            "LoadGen reports the minimum duration was not met",
            source=SCENARIOS_SRC,
        )
    if log.get("result_min_queries_met") is False:
        c.bad(
            "min_queries",
            "result_min_queries_met",
            "LoadGen reports the minimum query count was not met; "
            "raise the expected QPS / lower the expected latency so it generates enough queries",
        )
    if rules.closed:
        psc = c.num("effective_performance_sample_count")
        if psc is not None and int(psc) < rules.min_performance_samples:
            c.bad(
                "performance_sample_count",
                "effective_performance_sample_count",
                f"performance sample count {psc} is below {bench.display}'s QSL size "
                f"{rules.min_performance_samples}",
                expected=rules.min_performance_samples,
                source=f"{bench.source} 'QSL Size'",
            )
    if run_cat in PERCENTILE:  # the scenarios with a tail-latency percentile use early stopping
        _percentile_rules(c, rules)
    if run_cat in (Category.SERVER, Category.INTERACTIVE) and rules.closed:
        _server_limits(c, rules)
    if run_cat is Category.OFFLINE and rules.closed:
        spq = c.num("effective_samples_per_query")
        want = rules.offline_min_samples()
        if spq is not None and int(spq) < want:
            where = "/".join(s.value for s in rules.suites) or "any"
            c.bad(
                "offline_samples_per_query",
                "effective_samples_per_query",
                f"the Offline query has {spq} samples; the rules require at least {want} for "
                f"{bench.display} ({where} suite: 24,576, or the accuracy dataset's size when smaller)",
                expected=want,
                source=f"{SCENARIOS_SRC} (note **)",
            )
    if run_cat is Category.MULTI_STREAM and rules.closed:
        spq = c.num("effective_samples_per_query")
        if spq is not None and int(spq) != MULTISTREAM_SAMPLES_PER_QUERY:
            c.bad(
                "multistream_samples_per_query",
                "effective_samples_per_query",
                f"the MultiStream queries have {spq} samples; the rules fix {MULTISTREAM_SAMPLES_PER_QUERY} "
                "per query: remove the samples_per_query override",
                expected=MULTISTREAM_SAMPLES_PER_QUERY,
                source=f"{SCENARIOS_SRC} (Multistream: Samples/query 8)",
            )
    _validity(c)
    return c.out


def _validity(c: _Log) -> None:
    """LoadGen's own verdict: an INVALID run fails even when no check above names why (a finding
    that already names the cause is enough)."""
    validity = c.need("result_validity")
    if validity is None or validity == "VALID" or any(f.failed for f in c.out):
        return
    reason = c.log.get("result_invalid_reason")
    if c.stricter_bound and not any(
        c.log.get(k) is False for k in ("result_min_duration_met", "result_min_queries_met", "early_stopping_met")
    ):
        c.out.append(
            Finding(
                rule="result_validity",
                path=c.log.path,
                severity=Severity.WARNING,
                key="result_validity",
                line=c.log.line_of("result_validity"),
                source=f"{RULES} §Benchmarks (latency constraint tables)",
                message=f"LoadGen judged this run {short(validity)} against {c.stricter_bound}; the rules' "
                "bound governs and the run meets it (the official checker may still reject it)",
            )
        )
        return
    c.bad(
        "result_validity",
        "result_validity",
        f"LoadGen judged this run {short(validity)}"
        + (f" ({short(reason, 200)})" if reason else "")
        + "; only a VALID performance run can be submitted",
        source=f"{RULES} §LoadGen Operation",
    )


_MORE_QUERIES = LazyPattern(r"at least (\d{1,15}) more queries")
MAX_QUERY_COUNT = 1 << 40  # beyond any run: a larger count in a log is not believed


def early_stopping_message(log: DetailLogData) -> str:
    """Why early stopping failed, in the terms of the rules' procedure (appendix Early stopping,
    "Early Stopping Criterion"): Server: q queries, t over latency, n required; step 4 (run n - q more,
    then recompute) was not carried out. SingleStream/MultiStream: the estimate needs more queries."""
    from proctor.loadgen import early_stopping as es  # the rules' maths, stated once

    def count(key: str) -> int | None:
        value = log.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None

    pct = log.get("effective_target_latency_percentile")
    pct = float(pct) if isinstance(pct, int | float) and not isinstance(pct, bool) and 0 < pct < 1 else None
    q = count("result_query_count")
    if log.get("effective_scenario") == "Server" and q is not None:
        t = count("result_overlatency_query_count")
        if t is not None and not t <= q <= MAX_QUERY_COUNT:
            t = None  # not a count a run can have: say no number
        if log.get("requested_use_token_latencies") is True or t is None or pct is None:
            more = [
                int(m.group(1))
                for key in ("early_stopping_ttft_result", "early_stopping_tpot_result", "early_stopping_result")
                if isinstance(log.get(key), str) and (m := _MORE_QUERIES.search(str(log.get(key)))) is not None
            ]
            if not more:
                return (
                    f"early stopping is not met after {q} queries; the rules' procedure (step 4) runs more "
                    "queries until the criterion holds: rerun longer or at a lower load"
                )
            k = max(more)
            return (
                f"early stopping is not met: the over-latency tokens of {q} queries require {q + k}; the "
                f"rules' procedure (step 4: run n - q more queries, then recompute) stopped {k} short: rerun "
                f"with at least {k} more queries (a longer min_duration) or at a lower load"
            )
        n = es.server_required_queries(t, pct)
        return (
            f"early stopping is not met: {t} of {q} queries were over the latency bound, so the rules' "
            f"procedure requires n = {n} queries; step 4 (run n - q = {max(n - q, 0)} more queries, then "
            "recompute) was not carried out: rerun with at least that many more queries (a longer "
            "min_duration; proctor's engine runs them itself) or at a lower load"
        )
    if q is not None and pct is not None:
        return (
            f"early stopping is not met: {q} queries were processed and a {pct * 100:g}th percentile "
            f"estimate needs at least {es.min_queries(pct)}: run longer"
        )
    return "early stopping is not met; run longer (more queries) or at a lower load"


def _percentile_rules(c: _Log, rules: RunRules) -> None:
    if c.log.get("early_stopping_met") is not True:
        c.bad("early_stopping", "early_stopping_met", early_stopping_message(c.log), source=EARLY_STOPPING_SRC)
    pointpainting_ss = (
        rules.benchmark.name == "pointpainting" and rules.run_category is Category.SINGLE_STREAM
    )
    want = 0.999 if pointpainting_ss else PERCENTILE[rules.run_category]
    pct = c.num("effective_target_latency_percentile", required=False)
    if rules.closed and pct is not None and abs(float(pct) - want) > 1e-9:
        c.bad(
            "latency_percentile",
            "effective_target_latency_percentile",
            f"target latency percentile {pct} must be {want} for {rules.run_category.value}",
            source=SCENARIOS_SRC,
        )


def _server_limits(c: _Log, rules: RunRules) -> None:
    bench, cat, log = rules.benchmark, rules.category, c.log
    limit = bench.latency.get(cat)
    if limit is None:
        c.out.append(
            Finding(
                rule="latency_limit",
                path=log.path,
                severity=Severity.WARNING,
                message=f"the rules give {bench.display} no {cat.value} latency bound; nothing to check",
            )
        )
        return
    if limit.uses_tokens:
        if log.get("requested_use_token_latencies") is not True:
            c.bad(
                "token_latencies",
                "requested_use_token_latencies",
                "token latencies were not measured; set use_token_latencies=1 and report first tokens",
                source=limit.source,
            )
        for key, bound, what in (
            ("requested_server_ttft_latency", limit.ttft_ns, "TTFT"),
            ("requested_server_tpot_latency", limit.tpot_ns, "TPOT"),
        ):  # the bound LoadGen judged the run by: never looser than the rules'
            got, rules_ns = c.num(key, required=False), int(bound or 0)
            if got is not None and 0 < int(got) < rules_ns:
                c.stricter_bound += (" and " if c.stricter_bound else "") + (
                    f"a {what} bound of {int(got) / NS_PER_MS:g} ms (the rules': {rules_ns / NS_PER_MS:g} ms)"
                )
            if got is not None and (int(got) <= 0 or int(got) > rules_ns):
                c.bad(
                    "latency_limit",
                    key,
                    f"the run's {what} bound {int(got) / NS_PER_MS:g} ms is looser than the rules' "
                    f"{cat.value} limit {rules_ns / NS_PER_MS:g} ms; LoadGen judged it against the wrong "
                    "bound: rerun without the override",
                    expected=bound,
                    source=limit.source,
                )
        for key, bound, what in (
            ("result_first_token_99.00_percentile_latency_ns", limit.ttft_ns, "TTFT"),
            ("result_time_per_output_token_99.00_percentile_ns", limit.tpot_ns, "TPOT"),
        ):
            got = c.num(key, required=False)
            if got is None and key not in log:
                c.bad("detail_log_key", key, f"{key} is missing: the {what} p99 cannot be checked")
            elif got is not None and not int(got) < int(bound):  # type: ignore[arg-type]
                c.bad(
                    "latency_limit",
                    key,
                    f"{what} p99 {int(got) / NS_PER_MS:.3f} ms is not below the "
                    f"{cat.value} limit {int(bound) / NS_PER_MS:g} ms",  # type: ignore[arg-type]
                    expected=bound,
                    source=limit.source,
                )
        return
    bound = int(limit.latency_ns)  # type: ignore[arg-type]
    target = c.num("effective_target_latency_ns", required=False)
    if target is not None and 0 < int(target) < bound:
        c.stricter_bound = f"a latency bound of {int(target) / NS_PER_MS:g} ms (the rules': {bound / NS_PER_MS:g} ms)"
    if target is not None and (int(target) == 0 or int(target) > bound):
        c.bad(
            "latency_limit",
            "effective_target_latency_ns",
            f"the run's latency bound {int(target) / NS_PER_MS:g} ms is looser than the rules' "
            f"{bound / NS_PER_MS:g} ms: LoadGen judged it against the wrong bound; rerun without the override",
            expected=bound,
            source=limit.source,
        )
    p99 = c.num("result_99.00_percentile_latency_ns", required=False)
    if p99 is None and "result_99.00_percentile_latency_ns" not in log:
        c.bad("detail_log_key", "result_99.00_percentile_latency_ns", "the p99 latency is missing")
    elif p99 is not None and not int(p99) < bound:
        c.bad(
            "latency_limit",
            "result_99.00_percentile_latency_ns",
            f"p99 latency {int(p99) / NS_PER_MS:.3f} ms is not below {bound / NS_PER_MS:g} ms; lower the target QPS",
            expected=bound,
            source=limit.source,
        )
    if log.get("result_perf_constraints_met") is False:
        if c.stricter_bound and p99 is not None and int(p99) < bound:
            return  # judged against the tighter bound only: `_validity` says so as a warning
        c.bad(
            "latency_limit",
            "result_perf_constraints_met",
            "LoadGen reports the latency constraint was not met",
            source=limit.source,
        )
