"""Validity and headline metrics recomputed from a detail log's own numbers.

The official decides validity from its raw latencies; a detail log keeps the effective settings
and the result_* numbers it derived, which is enough to redo each decision the official way (the
Server min duration from the scheduled rate, the early-stopping counts from the query counts, the
token rate from the `result_token_throughput` quirk...). Where a log lacks the numbers a decision
needs, the logged verdict is taken and marked so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from proctor.errors import LogFormatError
from proctor.loadgen import early_stopping as es
from proctor.loadgen.logs.numbers import percentile_label
from proctor.loadgen.logs.reader import DetailLogData

RECOMPUTED, LOGGED = "recomputed", "logged"
_DISCARD = re.compile(r"Would discard (\d+) highest")
_PROCESSED = re.compile(r"Processed at least (\d+) queries \((\d+)\)")
_MORE = re.compile(r"Would need to run at least (\d+) more")


@dataclass(slots=True)
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
    mismatches: list[str] = field(default_factory=list)  # recomputed != logged


def _b(v: Any) -> bool:
    return bool(v) if not isinstance(v, str) else v.lower() == "true"


MAX_QUERIES = 10**12  # far beyond any run; keeps the early-stopping arithmetic bounded
MAX_PERCENTILE = 0.9999  # the rules' targets are 0.9, 0.99 (and 0.999 for some); beyond, ES needs ~forever


def _count(log: DetailLogData, key: str) -> None:
    v = log.get(key)
    if v is not None and not (isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_QUERIES):
        raise LogFormatError(f"{key} {str(v)[:40]!r} is not a count of queries", file=log.path)


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


def recompute(log: DetailLogData) -> Recomputed:
    """Redo the official validity decisions from a parsed detail log (LogFormatError on numbers
    out of any run's range)."""
    check_ranges(log)
    g = log.get
    sc = str(log.require("effective_scenario"))
    n = int(log.require("result_query_count"))
    spq = int(g("effective_samples_per_query", 1))
    pct = float(g("effective_target_latency_percentile", 0.99))
    tokens = _b(g("requested_use_token_latencies", False)) or "early_stopping_ttft_result" in log.values
    src: dict[str, str] = {}
    out = Recomputed(sc, False, False, True, True, False, source=src)

    # min duration
    min_s = int(log.require("effective_min_duration_ms")) / 1000.0
    dur: float | None = None
    if sc == "Server" and g("result_scheduled_samples_per_sec"):
        dur = (n - 1) / float(g("result_scheduled_samples_per_sec"))
    elif sc == "SingleStream" and g("result_qps_with_loadgen_overhead"):
        dur = (n - 1) / float(g("result_qps_with_loadgen_overhead"))
    elif sc == "Offline" and g("result_max_latency_ns") is not None:
        dur = int(g("result_max_latency_ns")) / 1e9
    # logged rates carry 6 significant digits: within that, trust the logged verdict
    if dur is not None and abs(dur - min_s) > 1e-5 * max(dur, min_s):
        out.min_duration_met, src["min_duration"] = dur >= min_s, RECOMPUTED
    else:
        out.min_duration_met, src["min_duration"] = _b(g("result_min_duration_met")), LOGGED
    out.duration_s = dur

    # min queries
    samples = n * spq
    out.min_queries_met = n >= int(g("effective_min_query_count", 0)) and samples >= int(
        g("effective_min_sample_count", 0)
    )
    src["min_queries"] = RECOMPUTED

    # performance constraints (Server)
    if sc == "Server":
        label = percentile_label(pct)
        if not tokens:
            key = f"result_{label}_percentile_latency_ns"
            if key in log.values:
                out.perf_constraints_met = int(g(key)) <= int(g("effective_target_latency_ns"))
                src["perf_constraints"] = RECOMPUTED
        else:
            k1, k2 = (
                f"result_first_token_{label}_percentile_latency_ns",
                f"result_time_per_output_token_{label}_percentile_ns",
            )
            ttft, tpot = g("requested_server_ttft_latency"), g("requested_server_tpot_latency")
            if k1 in log.values and k2 in log.values and ttft is not None and tpot is not None:
                out.perf_constraints_met = int(g(k1)) <= int(ttft) and int(g(k2)) <= int(tpot)
                src["perf_constraints"] = RECOMPUTED
        if "perf_constraints" not in src:
            out.perf_constraints_met, src["perf_constraints"] = (
                _b(g("result_perf_constraints_met", True)),
                LOGGED,
            )

    # early stopping
    if sc in ("SingleStream", "MultiStream"):
        out.min_queries_for_es = es.min_queries(pct)
        out.early_stopping_met = n >= out.min_queries_for_es
        t = es.stream_t(n, pct)
        out.discarded = None if t is None else t - 1
        src["early_stopping"] = RECOMPUTED
        text = g("early_stopping_result") or g("early_stopping_ttft_result") or ""
        if (m := _DISCARD.search(text)) and out.discarded is not None and int(m.group(1)) != out.discarded:
            out.mismatches.append(f"early stopping discards {out.discarded}, log says {m.group(1)}")
        if (m := _PROCESSED.search(text)) and int(m.group(1)) != out.min_queries_for_es:
            out.mismatches.append(
                f"early stopping needs {out.min_queries_for_es} queries, log says {m.group(1)}"
            )
    elif sc == "Server" and not tokens and g("result_overlatency_query_count") is not None:
        t_over = int(g("result_overlatency_query_count"))
        out.required_queries = es.server_required_queries(t_over, pct)
        out.early_stopping_met = n >= out.required_queries
        src["early_stopping"] = RECOMPUTED
        if (m := _MORE.search(g("early_stopping_result") or "")) and int(
            m.group(1)
        ) != out.required_queries - n:
            out.mismatches.append(f"needs {out.required_queries - n} more queries, log says {m.group(1)}")
    elif sc == "Offline":
        out.early_stopping_met, src["early_stopping"] = True, RECOMPUTED
    else:
        out.early_stopping_met, src["early_stopping"] = _b(g("early_stopping_met", True)), LOGGED

    # token rate from the result_token_throughput quirk: count / (mean_ns * n)
    if tokens and sc == "Server" and g("result_token_throughput") and g("result_completed_samples_per_sec"):
        count = float(g("result_token_throughput")) * float(g("result_mean_latency_ns")) * n
        final_done = (n - 1) / float(g("result_completed_samples_per_sec"))
        out.tokens_per_second = count / final_done

    out.valid = (
        out.min_duration_met and out.min_queries_met and out.perf_constraints_met and out.early_stopping_met
    ) and not g("proctor_closed_loop_in_flight")  # proctor sweep --concurrency: not an MLPerf scenario
    for name, mine, key in (
        ("min_duration", out.min_duration_met, "result_min_duration_met"),
        ("min_queries", out.min_queries_met, "result_min_queries_met"),
        ("early_stopping", out.early_stopping_met, "early_stopping_met"),
        ("perf_constraints", out.perf_constraints_met, "result_perf_constraints_met"),
    ):
        if key in log.values and _b(g(key)) != mine:
            out.mismatches.append(f"{name}: recomputed {mine}, log says {_b(g(key))}")
    if "result_validity" in log.values and (g("result_validity") == "VALID") != out.valid:
        out.mismatches.append(
            f"validity: recomputed {'VALID' if out.valid else 'INVALID'}, log says {g('result_validity')}"
        )
    return out
