"""A performance result's claims against what its own logs' numbers give.

The derivation is `proctor.loadgen.logs.recompute` (the one that `proctor report` shows) and the
summary's comparison `proctor.loadgen.logs.summary_claims`; this module turns each contradiction
into an ERROR naming the key, both values and the file (and line), and hands the submission checker
the metric the numbers give in place of a contradicted one (None where they only bound it), so the
results table never reports a forged number.
"""

from __future__ import annotations

from pathlib import Path

from proctor.checks.detail_log import DetailLogData
from proctor.checks.loadgen_origin import ENDPOINTS_KEY
from proctor.checks.performance import EARLY_STOPPING_SRC, SCENARIOS_SRC
from proctor.errors import LogFormatError
from proctor.findings import Finding
from proctor.loadgen.logs.reader import read_summary
from proctor.loadgen.logs.recompute import Mismatch, recompute
from proctor.loadgen.logs.summary_claims import compare_summary
from proctor.rules.inference import RULES
from proctor.typed_records import field, record

RULE = "rederived_result"
SUMMARY_RULE = "summary_claim"
_METRICS_SRC = f"{RULES} §LoadGen Operation (the LoadGen is responsible for 'Computing final metrics')"
SOURCES = {
    "min_duration": SCENARIOS_SRC + " (Duration: 600 seconds)",
    "min_queries": f"{RULES} §LoadGen Operation (run procedure, step 4: the minimum number of queries)",
    "early_stopping": EARLY_STOPPING_SRC,
    "perf_constraints": f"{RULES} §Benchmarks (latency constraint tables)",
    "validity": _METRICS_SRC,
    "metric": _METRICS_SRC,
    "statistics": _METRICS_SRC,
    "summary": _METRICS_SRC,
}
FIX = "submit the logs of an unedited LoadGen run (rerun it if these are not)"


@record(slots=True)
class Rederived:
    findings: list[Finding] = field(default_factory=list)
    corrected: dict[str, float | None] = field(default_factory=dict)  # result key -> what the numbers give


def _finding(m: Mismatch, rule: str) -> Finding:
    passed = m.claimed in ("true", "VALID", "Yes") and m.derived.startswith(("false", "INVALID", "NO"))
    verdict = "; the result is INVALID" if passed else ""
    return Finding(
        rule=rule,
        path=m.file,
        line=m.line,
        key=m.key,
        value=m.claimed,
        expected=m.derived,
        source=SOURCES.get(m.about, _METRICS_SRC),
        message=f"{m.key} says {m.claimed}, but the logged numbers give {m.derived} ({m.basis}){verdict}: {FIX}",
    )


def check_rederived(log: DetailLogData, summary: Path | None = None) -> Rederived:
    """Every claim of a performance run's detail log (and of its summary, when given) re-derived from
    the raw values the detail log holds; nothing for a log that lacks the keys a result needs (the
    performance check names those)."""
    out = Rederived()
    if "result_query_count" not in log or "effective_scenario" not in log or "effective_min_duration_ms" not in log:
        return out
    if ENDPOINTS_KEY in log:  # mlcommons/endpoints: its own keys and timing, not the LoadGen's derivations
        return out
    try:
        rc = recompute(log)
    except LogFormatError as exc:  # a value no run logs where a number belongs
        key = next((k for k, line in log.lines.items() if exc.line is not None and line == exc.line), None)
        out.findings.append(
            Finding(rule="detail_log_value", path=log.path, line=exc.line, key=key, message=f"{exc}; {FIX}")
        )
        return out
    out.corrected = dict(rc.corrected)
    # a verdict claimed worse than the numbers give is not a pass (LoadGen's INVALID is its own finding)
    out.findings += [_finding(m, RULE) for m in rc.mismatches if m.claimed not in ("false", "INVALID")]
    if summary is None:
        return out
    try:
        claims = read_summary(summary)
    except LogFormatError as exc:
        out.findings.append(
            Finding(rule=SUMMARY_RULE, path=str(summary), line=exc.line, source=_METRICS_SRC,
                    message=f"{exc}: not a LoadGen summary; {FIX}")
        )
        return out
    out.findings += [_finding(m, SUMMARY_RULE) for m in compare_summary(claims, log, rc, str(summary))]
    return out
