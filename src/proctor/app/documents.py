"""The `--json` documents of `proctor run` and `proctor audit` (schemas: proctor.schemas).

Built from what the session hands the CLI (the outcome, the verdict lines, the paths), so the
document says what the table and the verdict say: the outcome, its cause, the headline numbers
and each finding with its rule and severity.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from proctor.app.session import SessionResult
    from proctor.audits.run import AuditOutcome
    from proctor.loadgen.engine import RunOutcome

VERSION = 1  # of the documents' shape: raised when a key changes meaning or goes away
VERDICT_WORDS = ("INVALID", "INCOMPLETE", "VALID", "DONE", "FAILED")  # INVALID before VALID: a prefix test


def verdict_of(lines: list[str], ok: bool) -> tuple[str, str]:
    """(word, cause): the verdict line's first word and the rest of it (the cause it names); a run
    both incomplete and invalid is INCOMPLETE, its first verdict line."""
    for line in lines:
        for word in VERDICT_WORDS:
            if line.startswith(word):
                return word, line[len(word):].lstrip(" :")
    return ("VALID" if ok else "INVALID"), ""


def _number(x: float | int | None) -> float | int | None:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return None
    return x


def run_numbers(outcome: RunOutcome) -> dict[str, float | int | None]:
    """The headline numbers: counts, latencies (ns) against their bounds, rates, token figures."""
    nums: dict[str, float | int | None] = {"wall_s": round(outcome.wall_s, 3), "errors": outcome.errors}
    eff, r = outcome.effective, outcome.result
    if eff is not None:
        nums["target_qps"] = eff.target_qps
        nums["target_latency_ns"] = eff.target_latency_ns
    if r is None:
        return nums
    s = r.samples
    nums.update(
        query_count=r.query_count,
        sample_count=r.sample_count,
        failed_samples=r.failed_samples,
        latency_min_ns=s.min,
        latency_mean_ns=s.mean,
        latency_max_ns=s.max,
        latency_p50_ns=s.percentiles.get(0.5),
        latency_p90_ns=s.percentiles.get(0.9),
        latency_p99_ns=s.percentiles.get(0.99),
        latency_p99_9_ns=s.percentiles.get(0.999),
        latency_at_target_percentile_ns=s.target,
        target_percentile=r.target_percentile,
        issue_lateness_p50_ns=r.issue_lateness_p50_ns,
        issue_lateness_p99_ns=r.issue_lateness_p99_ns,
        issue_lateness_max_ns=r.issue_lateness_max_ns,
    )
    if r.scenario == "Offline":
        nums["samples_per_second"] = _number(r.samples_per_second)
    elif r.scenario == "Server":
        nums["completed_samples_per_second"] = _number(r.completed_samples_per_sec)
        nums["scheduled_samples_per_second"] = _number(r.scheduled_samples_per_sec)
        nums["overlatency_count"] = r.overlatency_count
        nums["early_stopping_needed"] = r.early_stopping_needed
    if r.use_token_latencies:
        nums["token_count"] = r.token_count
        nums["tokens_per_second"] = _number(
            r.tokens_per_second if r.scenario == "Offline" else r.completed_tokens_per_second
        )
        if r.scenario != "Offline":
            nums.update(
                ttft_p50_ns=r.ttft.percentiles.get(0.5),
                ttft_p99_ns=r.ttft.percentiles.get(0.99),
                ttft_at_target_percentile_ns=r.ttft.target,
                tpot_p50_ns=r.tpot.percentiles.get(0.5),
                tpot_p99_ns=r.tpot.percentiles.get(0.99),
                tpot_at_target_percentile_ns=r.tpot.target,
            )
            if eff is not None:
                nums["ttft_target_ns"] = eff.server_ttft_latency
                nums["tpot_target_ns"] = eff.server_tpot_latency
    nums["requests_per_second"] = _number(r.requests_per_second)
    att = r.attainment
    if att is not None:  # per-request SLO attainment (loadgen.results.Attainment)
        nums["slo_attainment"] = _number(att.share)
        nums["slo_met_all"] = att.met_all
        nums["slo_judged"] = att.judged
        nums["goodput_requests_per_second"] = _number(att.goodput_per_s)
        for name, target in att.targets_ns.items():
            nums[f"slo_{name}_target_ns"] = target
            nums[f"slo_{name}_met"] = att.met[name]
    return nums


def _finding(rule: str, message: str, severity: str) -> dict[str, Any]:
    return {"rule": rule, "message": message, "severity": severity}


def run_findings(outcome: RunOutcome) -> list[dict[str, Any]]:
    """Why the run is what it is: each failed check (rule `result`), an incomplete run, each logged
    error and warning (rules `error`, `warning`: the detail log's)."""
    out: list[dict[str, Any]] = []
    if outcome.incomplete:
        out.append(_finding("incomplete", outcome.incomplete_reason, "error"))
    if not outcome.valid and outcome.mode != "AccuracyOnly":
        out += [_finding("result", reason, "error") for reason in outcome.invalid_reasons]
    out += [_finding("error", message, "error") for message in outcome.error_messages]
    hidden = outcome.errors - len(outcome.error_messages)
    if hidden > 0:
        out.append(_finding("error", f"{hidden} more error(s) in {outcome.log_paths['detail']}", "error"))
    out += [_finding("warning", message, "warning") for message in warning_messages(outcome)]
    return out


def warning_messages(outcome: RunOutcome) -> list[str]:
    """Each warning the run logged (as many as the engine kept), then how many more there were."""
    kept = list(getattr(outcome, "warning_messages", []))
    if outcome.warnings > len(kept):
        kept.append(f"{outcome.warnings - len(kept)} more warning(s) in {outcome.log_paths['detail']}")
    return kept


def run_document(result: SessionResult, exit_code: int, short_run: str = "") -> dict[str, Any]:
    """`proctor run --json`: one object (schema `proctor.run`)."""
    o = result.outcome
    word, cause = verdict_of(result.lines, result.ok)
    paths = {name: str(p) for name, p in o.log_paths.items() if p.is_file()}
    paths.update(dict(result.paths))
    m = o.metric
    return {
        "kind": "proctor.run",
        "version": VERSION,
        "valid": bool(o.valid),
        "exit_code": exit_code,
        "verdict": word,
        "cause": cause,
        "verdict_lines": list(result.lines),
        "incomplete": bool(o.incomplete),
        "engine": o.engine,
        "scenario": o.scenario,
        "mode": o.mode,
        "short_run": short_run,
        "metric": None if m is None else {"name": m.name, "value": m.value, "unit": m.unit, "text": m.text},
        "numbers": run_numbers(o),
        "errors": o.errors,
        "warnings": warning_messages(o),
        "findings": run_findings(o),
        "paths": paths,
    }


def failed_run_document(scenario: str, mode: str, message: str, output_dir: str) -> dict[str, Any]:
    """`proctor run --json` for a run that failed before it had an outcome (exit 1): verdict FAILED,
    its cause, no numbers (schema `proctor.run`)."""
    return {
        "kind": "proctor.run",
        "version": VERSION,
        "valid": False,
        "exit_code": 1,
        "verdict": "FAILED",
        "cause": message,
        "verdict_lines": [f"run failed: {message}"],
        "incomplete": True,
        "engine": "proctor",
        "scenario": scenario,
        "mode": mode,
        "short_run": "",
        "metric": None,
        "numbers": {},
        "errors": 1,
        "warnings": [],
        "findings": [_finding("run", message, "error")],
        "paths": {"logs": output_dir},
    }


def audit_document(outcomes: list[AuditOutcome], short_run: str, exit_code: int) -> dict[str, Any]:
    """`proctor audit --json`: one object (schema `proctor.audit`); a failed audit's reasons are
    findings (rule: the audit's name)."""
    audits: list[dict[str, Any]] = []
    findings: list[dict[str, Any]] = []
    for o in outcomes:
        checks = [
            {
                "check": v.check,
                "passed": bool(v.passed),
                "lines": list(v.lines),
                "notes": list(v.notes),
                "numbers": {k: _jsonable(val) for k, val in v.numbers.items()},
            }
            for v in o.verdicts
        ]
        audits.append(
            {
                "audit": str(o.audit),
                "passed": bool(o.passed),
                "inconclusive": o.inconclusive,  # non-empty: inside run-to-run noise, not a cheat
                "folder": str(o.folder),
                "failures": list(o.failures),
                "checks": checks,
                "notes": list(o.notes),
            }
        )
        findings += [_finding(str(o.audit), why, "error") for why in o.failures]
        if o.inconclusive:
            findings.append(_finding(str(o.audit), f"INCONCLUSIVE: {o.inconclusive}", "error"))
        for v in o.verdicts:
            if not v.passed and not v.inconclusive:  # an inconclusive one is the finding above
                findings.append(_finding(str(o.audit), f"{v.check}: {v.last_line or 'failed'}", "error"))
    return {
        "kind": "proctor.audit",
        "version": VERSION,
        "passed": all(o.passed for o in outcomes),
        "exit_code": exit_code,
        "short_run": short_run,
        "audits": audits,
        "findings": findings,
    }


def _jsonable(x: Any) -> Any:
    """An audit's number as JSON holds it: lists kept, NaN/inf as null, a whole number past 64 bits
    (a log may hold one; orjson writes none) and anything else as text."""
    if isinstance(x, int) and not isinstance(x, bool) and not -(2**63) <= x < 2**64:
        return str(x)
    if isinstance(x, bool) or x is None or isinstance(x, str | int):
        return x
    if isinstance(x, float):
        return _number(x)
    if isinstance(x, list | tuple):
        return [_jsonable(v) for v in x]
    try:
        return _number(float(x))
    except (TypeError, ValueError):
        return str(x)


def dumps(doc: Any) -> str:
    """The document as printed: indented JSON, one trailing newline."""
    import orjson

    return orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n"


__all__ = [
    "VERSION", "audit_document", "dumps", "failed_run_document", "run_document", "run_numbers", "verdict_of",
]
