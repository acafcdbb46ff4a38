"""What a summary (mlperf_log_summary.txt) claims, against its detail log and what `recompute` derived.

The official writes both files from the same PerformanceSummary (results.cc LogSummary / LogDetail),
so every figure of the summary is a detail key printed another way: the metric lines and the rates
with two decimals (DoubleToString), the rest with `std::ostream`'s 6 significant digits, latencies
and settings as integers, verdicts as Yes/NO. Each line is compared as it can be printed
(`numbers.printed`, `numbers.printed_fixed`); the verdicts also against the recomputed parts. A line
with no detail counterpart in this log (another round's label) is not compared.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from proctor.loadgen.logs.numbers import Span, percentile_label, printed, printed_fixed
from proctor.loadgen.logs.reader import DetailLogData
from proctor.loadgen.logs.recompute import PERCENTILES, Mismatch, Recomputed

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# how a summary line prints its number
INT, SIG6, FIXED2, TEXT, YESNO, BOOL01 = "int", "sig6", "fixed2", "text", "yesno", "bool01"

# (section, label) -> (detail key, print kind); sections as read_summary names them
_HEAD: dict[str, tuple[str, str]] = {
    "Scenario": ("effective_scenario", TEXT),
    "Mode": ("effective_test_mode", TEXT),
    "SUT name": ("sut_name", TEXT),
    "Completed samples per second": ("result_completed_samples_per_sec", FIXED2),
    "Scheduled samples per second": ("result_scheduled_samples_per_sec", FIXED2),
    "Samples per second": ("result_samples_per_second", SIG6),
    "Tokens per second": ("result_tokens_per_second", SIG6),
    "Completed tokens per second": ("result_completed_tokens_per_second", FIXED2),
    "Tokens per second (inferred)": ("result_inferred_tokens_per_second", SIG6),
    "Completed tokens per second (inferred)": ("result_inferred_completed_tokens_per_second", FIXED2),
}
# verdict lines: label -> (detail key, the recomputed part)
_VERDICTS: dict[str, tuple[str, str]] = {
    "Result is": ("result_validity", "valid"),
    "Performance constraints satisfied": ("result_perf_constraints_met", "perf_constraints_met"),
    "Min duration satisfied": ("result_min_duration_met", "min_duration_met"),
    "Min queries satisfied": ("result_min_queries_met", "min_queries_met"),
    "Early stopping satisfied": ("early_stopping_met", "early_stopping_met"),
}
_SOURCE_OF_PART = {
    "perf_constraints_met": "perf_constraints",
    "min_duration_met": "min_duration",
    "min_queries_met": "min_queries",
    "early_stopping_met": "early_stopping",
}
_STATS: dict[str, tuple[str, str]] = {
    "QPS w/ loadgen overhead": ("result_qps_with_loadgen_overhead", FIXED2),
    "QPS w/o loadgen overhead": ("result_qps_without_loadgen_overhead", FIXED2),
    "Completed samples per second": ("result_completed_samples_per_sec", FIXED2),
    "Scheduled samples per second": ("result_scheduled_samples_per_sec", FIXED2),
    "Completed tokens per second": ("result_completed_tokens_per_second", FIXED2),
    "TPS w/ loadgen overhead": ("result_token_throughput_with_loadgen_overhead", FIXED2),
    "Min latency (ns)": ("result_min_latency_ns", INT),
    "Max latency (ns)": ("result_max_latency_ns", INT),
    "Mean latency (ns)": ("result_mean_latency_ns", INT),
    "Min First Token latency (ns)": ("result_first_token_min_latency_ns", INT),
    "Max First Token latency (ns)": ("result_first_token_max_latency_ns", INT),
    "Mean First Token latency (ns)": ("result_first_token_mean_latency_ns", INT),
    "Min Time per Output Token (ns)": ("result_time_to_output_token_min", INT),
    "Max Time per Output Token (ns)": ("result_time_to_output_token_max", INT),
    "Mean Time per Output Token (ns)": ("result_time_to_output_token_mean", INT),
    "Min Time to Output Token (ns)": ("result_time_to_output_token_min", INT),  # v5.1's wording
    "Max Time to Output Token (ns)": ("result_time_to_output_token_max", INT),
    "Mean Time to Output Token (ns)": ("result_time_to_output_token_mean", INT),
}
_PER_QUERY: dict[str, tuple[str, str]] = {
    "Min latency (ns)": ("result_min_query_latency_ns", INT),
    "Max latency (ns)": ("result_max_query_latency_ns", INT),
    "Mean latency (ns)": ("result_mean_query_latency_ns", INT),
}
_PARAMETERS: dict[str, tuple[str, str]] = {
    "samples_per_query": ("effective_samples_per_query", INT),
    "target_qps": ("effective_target_qps", SIG6),
    "target_latency (ns)": ("effective_target_latency_ns", INT),
    "ttft_latency (ns)": ("requested_server_ttft_latency", INT),
    "tpot_latency (ns)": ("requested_server_tpot_latency", INT),
    "max_async_queries": ("effective_max_async_queries", INT),
    "min_duration (ms)": ("effective_min_duration_ms", INT),
    "max_duration (ms)": ("effective_max_duration_ms", INT),
    "min_query_count": ("effective_min_query_count", INT),
    "max_query_count": ("effective_max_query_count", INT),
    "qsl_rng_seed": ("effective_qsl_rng_seed", INT),
    "sample_index_rng_seed": ("effective_sample_index_rng_seed", INT),
    "schedule_rng_seed": ("effective_schedule_rng_seed", INT),
    "accuracy_log_rng_seed": ("effective_accuracy_log_rng_seed", INT),
    "accuracy_log_probability": ("effective_accuracy_log_probability", SIG6),
    "accuracy_log_sampling_target": ("effective_accuracy_log_sampling_target", INT),
    "print_timestamps": ("effective_print_timestamps", BOOL01),
    "performance_issue_unique": ("effective_performance_issue_unique", BOOL01),
    "performance_issue_same": ("effective_performance_issue_same", BOOL01),
    "performance_issue_same_index": ("effective_performance_issue_same_index", INT),
    "performance_sample_count": ("effective_performance_sample_count", INT),
    "accuracy_sample_count": ("effective_accuracy_sample_count", INT),
}
_ES_BLOCKS = {
    "Early Stopping": "early_stopping_result",
    "TTFT Early Stopping": "early_stopping_ttft_result",
    "TPOT Early Stopping": "early_stopping_tpot_result",
}
_HEAD_PCT = re.compile(r"(\d{1,3}(?:\.\d)?)th (first token )?percentile latency \(ns\)")
_STAT_PCT = re.compile(r"(\d{1,3}\.\d\d) percentile (latency|first token latency|time (?:to|per) output token) \(ns\)")
_STAT_PCT_KEYS = {
    "latency": "result_{}_percentile_latency_ns",
    "first token latency": "result_first_token_{}_percentile_latency_ns",
    "time to output token": "result_time_per_output_token_{}_percentile_ns",
    "time per output token": "result_time_per_output_token_{}_percentile_ns",
}
_LABELS = {percentile_label(p) for p in PERCENTILES}


def printed_as(key: str) -> list[tuple[str, str]]:
    """The summary lines ((section, label), as read_summary names them) that print a detail key."""
    out = [("head", label) for label, (k, _) in _HEAD.items() if k == key]
    out += [("head", label) for label, (k, _) in _VERDICTS.items() if k == key]
    for where, table in (("additional_stats", _STATS), ("per_query", _PER_QUERY), ("test_parameters", _PARAMETERS)):
        out += [(where, label) for label, (k, _) in table.items() if k == key]
    for pp in sorted(_LABELS):
        for words, pattern in _STAT_PCT_KEYS.items():
            if pattern.format(pp) == key:
                out.append(("additional_stats", f"{pp} percentile {words} (ns)"))
        if key == f"result_{pp}_percentile_per_query_latency_ns":
            out.append(("per_query", f"{pp} percentile latency (ns)"))
    return out


def _words(value: Any) -> str:
    """A value as a summary line shows it (a number read back as a double: 10 significant digits)."""
    return f"{value:.10g}" if isinstance(value, float) else " ".join(str(value).split())


class _Compare:
    def __init__(self, summary: dict[str, Any], log: DetailLogData, rc: Recomputed, path: str) -> None:
        self.summary, self.log, self.rc, self.path = summary, log, rc, path
        self.lines: dict[str, int] = summary.get("lines") or {}
        self.out: list[Mismatch] = []

    def bad(self, where: str, label: str, claimed: Any, derived: str, basis: str, about: str = "summary") -> None:
        self.out.append(
            Mismatch(label, _words(claimed)[:80], derived, basis, self.path, self.lines.get(f"{where}/{label}"), about)
        )

    def value(self, where: str, label: str, said: Any, key: str, kind: str) -> None:
        """One summary line against the detail key it prints."""
        if key not in self.log.values:
            return
        logged = self.log.get(key)
        basis = f"{key} in the detail log" + (f", line {self.log.line_of(key)}" if self.log.line_of(key) else "")
        if kind == TEXT:
            if _words(said) != _words(logged):
                self.bad(where, label, said, _words(logged)[:80], basis)
            return
        if kind == BOOL01:
            if said not in (0, 1) or not isinstance(logged, bool) or bool(said) != logged:
                self.bad(where, label, said, str(int(logged)) if isinstance(logged, bool) else _words(logged)[:40], basis)
            return
        if not _number(said) or not _number(logged):
            if _number(said) != _number(logged) or said != logged:
                self.bad(where, label, said, _words(logged)[:40], basis)
            return
        if kind == INT:
            if said != logged:
                self.bad(where, label, said, str(logged), basis)
            return
        mine = printed_fixed(said) if kind == FIXED2 else printed(said)
        implied = self.rc.implied.get(key)
        if implied is not None and not mine.overlaps(implied):
            self.bad(where, label, said, implied.text(), f"re-derived from the detail log's numbers as {key} is")
        elif key not in self.rc.corrected and not mine.overlaps(printed(logged)):
            self.bad(where, label, said, f"{float(logged):.6g}", basis)


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(float(v))


def compare_summary(summary: dict[str, Any], log: DetailLogData, rc: Recomputed, path: str) -> list[Mismatch]:
    """Each claim of a parsed summary (read_summary) that its detail log, or what recompute derived
    from it, contradicts."""
    c = _Compare(summary, log, rc, path)
    scenario = str(log.get("effective_scenario", ""))
    for label, (key, kind) in _HEAD.items():
        if label in summary and not isinstance(summary[label], dict | list):
            c.value("head", label, summary[label], key, kind)
    for label, (key, part) in _VERDICTS.items():
        # a pass the numbers do not give (proctor's own summary may be stricter than its detail log:
        # a failed sample or an interrupted run is INVALID there, not in the official's verdict)
        said = _words(summary.get(label, ""))
        if said not in ("VALID", "Yes"):
            continue
        if key in log.values and (log.get(key) != "VALID" if label == "Result is" else log.get(key) is not True):
            c.bad("head", label, said, f"{_words(log.get(key))[:40]} ({key})", "the detail log's verdict", "validity")
            continue
        derived = part == "valid" or rc.source.get(_SOURCE_OF_PART[part]) == "recomputed"
        if derived and not getattr(rc, part):
            want = "INVALID" if label == "Result is" else "NO"
            c.bad("head", label, said, f"{want} (recomputed)", "the parts the detail log's numbers give", "validity")
    for label, said in summary.items():
        if not isinstance(label, str) or not (m := _HEAD_PCT.fullmatch(label)):
            continue
        pct = float(m.group(1)) / 100
        want = log.get("effective_target_latency_percentile")
        if _number(want) and abs(float(want) - pct) > 0.0005:
            c.bad("head", label, label, f"the {float(want) * 100:g}th percentile",
                  "effective_target_latency_percentile in the detail log")
            continue
        if m.group(2):
            key = "result_first_token_{}_percentile_latency_ns"
        elif scenario == "MultiStream":
            key = "result_{}_percentile_per_query_latency_ns"
        else:
            key = "result_{}_percentile_latency_ns"
        c.value("head", label, said, key.format(percentile_label(pct)), INT)
    _sections(c, summary)
    for block, key in _ES_BLOCKS.items():
        said = summary.get("early_stopping", {}).get(block)
        if said is not None and key in log.values and _words(said) != _words(log.get(key)):
            c.bad("early_stopping", block, said, _words(log.get(key))[:80], f"{key} in the detail log", "early_stopping")
    errors, logged = summary.get("errors"), log.get("num_errors")
    if _number(errors) and _number(logged) and errors != logged:
        c.out.append(Mismatch("errors", str(errors), str(logged), "num_errors in the detail log", path,
                              c.lines.get("footer/errors"), "summary"))
    return c.out


def _sections(c: _Compare, summary: dict[str, Any]) -> None:
    sections: tuple[tuple[str, dict[str, tuple[str, str]], Callable[[str], tuple[str, str] | None]], ...] = (
        ("additional_stats", _STATS, _stat_percentile),
        ("per_query", _PER_QUERY, _query_percentile),
        ("test_parameters", _PARAMETERS, lambda _label: None),
    )
    for where, table, pattern in sections:
        section = summary.get(where)
        if not isinstance(section, dict):
            continue
        for label, said in section.items():
            spec = table.get(label) or pattern(label)
            if spec is not None:
                c.value(where, label, said, *spec)
        if where == "additional_stats" and "TPS w/o loadgen overhead" in section:
            _tps_without(c, section["TPS w/o loadgen overhead"])


def _stat_percentile(label: str) -> tuple[str, str] | None:
    m = _STAT_PCT.fullmatch(label)
    if m is None or m.group(1) not in _LABELS:
        return None
    return _STAT_PCT_KEYS[m.group(2)].format(m.group(1)), INT


def _query_percentile(label: str) -> tuple[str, str] | None:
    m = _STAT_PCT.fullmatch(label)
    if m is None or m.group(2) != "latency" or m.group(1) not in _LABELS:
        return None
    return f"result_{m.group(1)}_percentile_per_query_latency_ns", INT


def _tps_without(c: _Compare, said: Any) -> None:
    """SingleStream's TPS w/o loadgen overhead: the detail's result_token_throughput (per ns) x 1e9."""
    logged = c.log.get("result_token_throughput")
    if not _number(said) or not _number(logged):
        return
    if not printed_fixed(said).overlaps(printed(logged) * 1e9 if float(logged) > 0 else Span.of(0.0)):
        c.bad("additional_stats", "TPS w/o loadgen overhead", said, f"{float(logged) * 1e9:.6g}",
              "result_token_throughput x 1e9 in the detail log")
