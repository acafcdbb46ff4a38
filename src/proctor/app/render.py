"""The app layer's renderables: rich tables the CLI prints (the app never prints, nor imports the CLI)."""

from __future__ import annotations

from rich.table import Table

from proctor.app.documents import warning_messages
from proctor.loadgen.engine import RunOutcome
from proctor.loadgen.results import LatencyStats
from proctor.tables import table


def _ms(ns: float) -> str:
    return f"{ns / 1e6:.3f} ms"


def _stat_ms(stats: LatencyStats, ns: float) -> str:
    """A figure of `stats`, or "-" where nothing was measured (a percentile of no sample is no data, not 0)."""
    return _ms(ns) if stats.count else "-"


def outcome_table(outcome: RunOutcome) -> Table:
    """A run in rows; values never wrap or cut (the logs path goes under the table)."""
    t = table("", "", title="proctor run", show_header=False)
    t.add_row("scenario", outcome.scenario)
    t.add_row("mode", outcome.mode)
    if outcome.metric is not None:
        t.add_row(outcome.metric.name, outcome.metric.text)
    r = outcome.result
    if r is not None:
        t.add_row("queries / samples", f"{r.query_count} / {r.sample_count}")
        s = r.samples
        if r.failed_samples:  # samples, beside the log entries counted under "log errors"
            t.add_row("samples failed", f"{r.failed_samples}")
        t.add_row("latency min / mean / max", " / ".join(_stat_ms(s, v) for v in (s.min, s.mean, s.max)))
        t.add_row(
            "latency p50 / p90 / p99 / p99.9",
            " / ".join(_stat_ms(s, s.percentiles[p]) for p in (0.5, 0.9, 0.99, 0.999)),
        )
        if r.scenario == "Server" and r.early_stopping_needed:  # the count the verdict's cause rests on
            met = "met" if r.early_stopping_met else "NOT met"
            t.add_row("early stopping: queries / needed", f"{r.query_count} / {r.early_stopping_needed} ({met})")
        if r.use_token_latencies and r.scenario != "Offline":
            t.add_row("TTFT p99 / TPOT p99", f"{_stat_ms(r.ttft, r.ttft.percentiles[0.99])} / "
                      f"{_stat_ms(r.tpot, r.tpot.percentiles[0.99])}")
        att = r.attainment
        if att is not None and outcome.mode != "AccuracyOnly":
            t.add_row("SLO attainment (every SLO target)", f"{att.share:.2%} of {att.judged} ({att.describe_targets()})")
            t.add_row("goodput / requests per second", f"{att.goodput_per_s:,.2f} / {att.requests_per_s:,.2f}")
        t.add_row(
            "issue lateness p50 / p99 / max",
            f"{r.issue_lateness_p50_ns / 1e3:.1f} / {r.issue_lateness_p99_ns / 1e3:.1f} / "
            f"{r.issue_lateness_max_ns / 1e3:.1f} us",
        )
    if outcome.accuracy_samples:
        t.add_row("accuracy log entries", str(outcome.accuracy_samples))
    named = " (each named below)" if outcome.warnings else ""
    # the detail log's error and warning entries (one may stand for many failed samples: "repeated N
    # more time(s)"); failed samples are counted on their own row
    t.add_row("log errors / warnings", f"{outcome.errors} / {outcome.warnings}{named}")
    return t


def warning_rows(outcome: RunOutcome) -> list[tuple[str, str]]:
    """Each warning the table counts, as ("warning", message) lines printed right under it (a
    message is too long for a value cell, which never wraps)."""
    return [("warning", message) for message in warning_messages(outcome)]


__all__ = ["outcome_table", "table", "warning_rows"]
