"""mlperf_log_summary.txt, line for line as the official LoadGen 6.0.17 writes it.

Layout from results.cc `LogSummary`, test_settings_internal.cc `LogSummary` and logging.cc (the
warnings/errors footer), checked against summaries the official 6.0.17 wrote on this machine. The
only addition is a marked `Run incomplete:` block at the very end when the run did not finish.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO

from proctor.loadgen.logs.numbers import fixed, ostream, percentile_label
from proctor.loadgen.results import PERCENTILES, LatencyStats, PerformanceResult
from proctor.loadgen.settings import EffectiveSettings

BANNER = "=" * 48
EQUAL_ISSUE_WARNING = (
    "WARNING: sample_concatenate_permutation was set to true. \n"
    "Generated samples per query might be different as the one in the setting.\n"
    "Check the generated_samples_per_query line in the detailed log for the real\n"
    "samples_per_query value"
)
INCOMPLETE_MARK = "PROCTOR: Run incomplete:"
PROCTOR_PREFIX = "PROCTOR:"  # proctor's own lines after the footer (the SUT's report: "PROCTOR: sut: ...")
SHORT_RUN_MARK = "PROCTOR: Not a submission run:"  # shorter than mlperf.conf asks; valid for its settings


def _pct_head(p: float) -> str:
    return fixed(p * 100, 1)


def _stats_lines(stats: LatencyStats, label: str = "latency") -> Iterator[str]:
    yield f"Min latency (ns)                : {stats.min}"
    yield f"Max latency (ns)                : {stats.max}"
    yield f"Mean latency (ns)               : {stats.mean}"
    for p in PERCENTILES:
        yield f"{percentile_label(p)} percentile {label} (ns)   : {stats.percentiles.get(p, 0)}"


def settings_lines(eff: EffectiveSettings) -> Iterator[str]:
    """The `Test Parameters Used` block (official TestSettingsInternal::LogSummary)."""
    yield f"samples_per_query : {eff.samples_per_query}"
    yield f"target_qps : {ostream(float(eff.target_qps))}"
    if eff.use_token_latencies:
        yield f"ttft_latency (ns): {eff.server_ttft_latency}"
        yield f"tpot_latency (ns): {eff.server_tpot_latency}"
    else:
        yield f"target_latency (ns): {eff.target_latency_ns}"
    yield f"max_async_queries : {eff.max_async_queries}"
    yield f"min_duration (ms): {eff.min_duration_ms}"
    yield f"max_duration (ms): {eff.max_duration_ms}"
    yield f"min_query_count : {eff.min_query_count}"
    yield f"max_query_count : {eff.max_query_count}"
    yield f"qsl_rng_seed : {eff.qsl_rng_seed}"
    yield f"sample_index_rng_seed : {eff.sample_index_rng_seed}"
    yield f"schedule_rng_seed : {eff.schedule_rng_seed}"
    yield f"accuracy_log_rng_seed : {eff.accuracy_log_rng_seed}"
    yield f"accuracy_log_probability : {ostream(float(eff.accuracy_log_probability))}"
    yield f"accuracy_log_sampling_target : {eff.accuracy_log_sampling_target}"
    yield f"print_timestamps : {ostream(bool(eff.print_timestamps))}"
    yield f"performance_issue_unique : {ostream(bool(eff.performance_issue_unique))}"
    yield f"performance_issue_same : {ostream(bool(eff.performance_issue_same))}"
    yield f"performance_issue_same_index : {eff.performance_issue_same_index}"
    yield f"performance_sample_count : {eff.performance_sample_count}"
    yield f"accuracy_sample_count : {eff.accuracy_sample_count}"
    if eff.sample_concatenate_permutation:
        yield EQUAL_ISSUE_WARNING


def footer_lines(n_warnings: int, n_errors: int) -> Iterator[str]:
    """logging.cc: the warnings and errors counts, each preceded by an empty line."""
    yield ""
    if n_warnings == 0:
        yield "No warnings encountered during test."
    elif n_warnings == 1:
        yield "1 warning encountered. See detailed log."
    else:
        yield f"{n_warnings} warnings encountered. See detailed log."
    yield ""
    if n_errors == 0:
        yield "No errors encountered during test."
    elif n_errors == 1:
        yield "1 ERROR encountered. See detailed log."
    else:
        yield f"{n_errors} ERRORS encountered. See detailed log."


def summary_lines(result: PerformanceResult, eff: EffectiveSettings, sut_name: str) -> Iterator[str]:
    """Every line of the performance summary up to and including the test parameters."""
    r, sc, tok = result, result.scenario, result.use_token_latencies
    yield BANNER
    yield "MLPerf Results Summary"
    yield BANNER
    yield f"SUT name : {sut_name}"
    yield f"Scenario : {sc}"
    yield f"Mode     : {r.mode}"
    if sc == "SingleStream":
        yield f"{_pct_head(r.target_percentile)}th percentile latency (ns) : {r.samples.target}"
    elif sc == "MultiStream":
        yield f"{_pct_head(r.target_percentile)}th percentile latency (ns) : {r.queries.target}"
    elif sc == "Server":
        yield f"Completed samples per second    : {fixed(r.completed_samples_per_sec)}"
    else:
        yield f"Samples per second: {ostream(r.samples_per_second)}"
    if tok:
        if sc in ("SingleStream", "MultiStream"):
            yield f"{_pct_head(r.target_percentile)}th first token percentile latency (ns) : {r.ttft.target}"
        elif sc == "Offline":
            yield f"Tokens per second: {ostream(r.tokens_per_second)}"
        else:
            yield f"Completed tokens per second: {fixed(r.completed_tokens_per_second)}"
    if eff.infer_token_latencies:  # results.cc: Server and Offline only
        if sc == "Server":
            yield f"Completed tokens per second (inferred): {fixed(r.inferred_tokens_per_second)}"
        elif sc == "Offline":
            yield f"Tokens per second (inferred): {ostream(r.inferred_tokens_per_second)}"
    valid = r.min_duration_met and r.min_queries_met and r.perf_constraints_met and r.early_stopping_met
    valid = valid and r.failed_samples == 0  # proctor: a failed sample is no result (not in the official)
    valid = valid and not r.closed_loop_in_flight  # proctor sweep --concurrency: not an MLPerf scenario
    yield f"Result is : {'VALID' if valid else 'INVALID'}"
    if r.closed_loop_in_flight:
        yield f"  MLPerf scenario : NO (closed loop, {r.closed_loop_in_flight} queries in flight)"
    if r.has_perf_constraints:
        yield f"  Performance constraints satisfied : {'Yes' if r.perf_constraints_met else 'NO'}"
    yield f"  Min duration satisfied : {'Yes' if r.min_duration_met else 'NO'}"
    yield f"  Min queries satisfied : {'Yes' if r.min_queries_met else 'NO'}"
    yield f"  Early stopping satisfied: {'Yes' if r.early_stopping_met else 'NO'}"
    if r.failed_samples:
        yield f"  No samples failed by the SUT : NO ({r.failed_samples} failed)"
    if not valid:
        yield "Recommendations:"
        for rec in r.recommendations:
            yield from (" * " + rec).split("\n")
    if sc in ("SingleStream", "Server", "MultiStream"):
        if not tok:
            yield "Early Stopping Result:"
            yield from r.early_stopping_text.split("\n")
        else:
            yield "TTFT Early Stopping Result:"
            yield from r.early_stopping_ttft_text.split("\n")
            yield "TPOT Early Stopping Result:"
            yield from r.early_stopping_tpot_text.split("\n")
    yield ""
    yield BANNER
    yield "Additional Stats"
    yield BANNER
    if sc == "SingleStream":
        yield f"QPS w/ loadgen overhead         : {fixed(r.qps_with_loadgen_overhead)}"
        yield f"QPS w/o loadgen overhead        : {fixed(r.qps_without_loadgen_overhead)}"
        yield ""
    elif sc == "Server":
        yield f"Scheduled samples per second : {fixed(r.scheduled_samples_per_sec)}"
    elif sc == "MultiStream":
        yield "Per-query latency:  "
        yield from _stats_lines(r.queries)
    if sc != "MultiStream":
        yield from _stats_lines(r.samples)
    if tok:
        yield ""
        if sc == "SingleStream":
            yield f"TPS w/ loadgen overhead         : {fixed(r.token_throughput_with_loadgen_overhead)}"
            yield f"TPS w/o loadgen overhead        : {fixed(r.tps_without_loadgen_overhead)}"
        elif sc == "Server":
            yield f"Completed tokens per second                 : {fixed(r.completed_tokens_per_second)}"
        if sc != "Offline":
            yield f"Min First Token latency (ns)                : {r.ttft.min}"
            yield f"Max First Token latency (ns)                : {r.ttft.max}"
            yield f"Mean First Token latency (ns)               : {r.ttft.mean}"
            for p in PERCENTILES:
                yield f"{percentile_label(p)} percentile first token latency (ns)   : {r.ttft.percentiles[p]}"
            yield ""
            yield f"Min Time per Output Token (ns)                : {r.tpot.min}"
            yield f"Max Time per Output Token (ns)                : {r.tpot.max}"
            yield f"Mean Time per Output Token (ns)               : {r.tpot.mean}"
            for p in PERCENTILES:
                yield f"{percentile_label(p)} percentile time to output token (ns)   : {r.tpot.percentiles[p]}"
    yield ""
    yield BANNER
    yield "Test Parameters Used"
    yield BANNER
    yield from settings_lines(eff)


def render_summary(
    result: PerformanceResult | None,
    eff: EffectiveSettings,
    sut_name: str,
    *,
    n_warnings: int = 0,
    n_errors: int = 0,
) -> str:
    """The whole file. `result=None` (accuracy-only runs) writes the footer alone, as the official."""
    lines: list[str] = []
    if result is not None:
        lines.extend(summary_lines(result, eff, sut_name))
    lines.extend(footer_lines(n_warnings, n_errors))
    if result is not None and not result.complete:
        lines.append("")
        lines.append("Result is : INVALID")
        lines.append(f"{INCOMPLETE_MARK} {result.incomplete_reason or 'the run was interrupted'}")
        lines.append(
            f"  only {result.query_count} queries / {result.sample_count} completed samples "
            "were measured; the figures above cover them alone."
        )
    return "\n".join(lines) + "\n"


def attainment_lines(result: PerformanceResult | None) -> list[str]:
    """The per-request SLO attainment and goodput lines of a result (none without targets)."""
    if result is None or result.attainment is None:
        return []
    return result.attainment.lines()


def annotation_text(short_run: str, sut_report: Sequence[str] = (), result_lines: Sequence[str] = ()) -> str:
    """proctor's lines after a summary's footer: the short-run mark, proctor's own result lines (SLO
    attainment and goodput), then the SUT's report lines."""
    text = f"\n{SHORT_RUN_MARK} {short_run}\n" if short_run else ""
    if result_lines:
        text += "\n" + "".join(f"{PROCTOR_PREFIX} {line}\n" for line in result_lines)
    if sut_report:
        text += "\n" + "".join(f"{PROCTOR_PREFIX} {line}\n" for line in sut_report)
    return text


def append_annotations(path: str | Path, short_run: str, sut_report: Sequence[str] = ()) -> None:
    """Add `annotation_text` to a finished summary file (the official engine's, which it closed)."""
    text = annotation_text(short_run, sut_report)
    if text:
        with open(path, "a", encoding="utf-8", newline="\n") as f:
            f.write(text)


def append_short_run(path: str | Path, reason: str) -> None:
    """Mark a finished summary file (proctor's or the official's) as a short run, after its footer."""
    append_annotations(path, reason)


def write_summary(
    path_or_file: str | Path | IO[str],
    result: PerformanceResult | None,
    eff: EffectiveSettings,
    sut_name: str,
    *,
    n_warnings: int = 0,
    n_errors: int = 0,
) -> None:
    """Write mlperf_log_summary.txt to a path or an open text file."""
    text = render_summary(result, eff, sut_name, n_warnings=n_warnings, n_errors=n_errors)
    if not isinstance(path_or_file, str | Path):  # an open text file
        path_or_file.write(text)
        return
    Path(path_or_file).write_text(text, encoding="utf-8", newline="\n")
