"""Speculative decoding: a result may use it only where the rules' appendix allows it, as it prescribes.

A result declares it in its measurements JSON (`speculative_decoding`: an object with `algorithm`,
`mtp_head`, `configuration`, optionally `mtp_head_quantized` and `lossless`; absent or false = not
used). Closed and network results: a declaration outside the appendix's rows, a head other than the
reference, a configuration other than the fixed one, an unreported one where the row leaves it to
the submitter, or a quantized head where only the edge row allows it (lossless) is an error citing
the appendix. A README that describes speculative decoding without a declaration is a warning.
TPOT counts each emitted token once (accepted draft tokens included, rejected ones not): LoadGen
divides by the token count the SUT reports, so in the performance-mode audit logs that record every
sample (TEST07, TEST09) each entry's `token_count` must equal the tokens in its response (TEST06's
own sample-length check is re-verified with the audits, checks.compliance). Open results are not
constrained ("Relaxed constraints").
"""

from __future__ import annotations

import math
from pathlib import Path

from proctor.audits.specs import SPECS
from proctor.checks.compliance import audit_dir, measurement_files
from proctor.checks.system_description import load_strict_json
from proctor.errors import LogFormatError
from proctor.findings import Finding, Severity
from proctor.rules.inference import SPEC_DECODING, Category
from proctor.rules.speculative import (
    ALLOWED_TECHNIQUES,
    DECLARATION_KEY,
    MENTIONS,
    REQUIRED_FIELDS,
    SPECULATIVE_RULES,
    TPOT_DEFINITION,
    SpeculativeRule,
    speculative_rule,
)
from proctor.text_files import read_text
from proctor.trees import is_file, read_at_most

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from proctor.checks.compliance import ResultContext

MAX_JSON = 1 << 20
RULE = "speculative_decoding"
# Audits whose performance-mode run logs every sample with its reported token_count (TEST06 is
# re-verified by checks.compliance); token ids are int32 (TEST06's default --dtype, TEST09's decoder).
TOKEN_AUDITS = tuple(a for a, spec in SPECS.items() if spec.token_counts)
TOKEN_BYTES = 4
ACCURACY_LOG = "mlperf_log_accuracy.json"
MAX_TOKEN_LOG = 256 << 20
MAX_HEX = 1 << 24


def _err(path: Path | str, message: str, source: str = SPEC_DECODING, **kw: Any) -> Finding:
    return Finding(rule=RULE, path=str(path), message=message, source=source, **kw)


def declaration(path: Path) -> tuple[Any, list[Finding]]:
    """The measurements JSON's `speculative_decoding` value (None when absent or unreadable)."""
    try:
        with path.open("rb") as fh:
            data = read_at_most(fh, MAX_JSON)
        obj = load_strict_json(data) if len(data) <= MAX_JSON else None
    except (OSError, ValueError):
        return None, []  # the measurements check names an unreadable or invalid JSON
    return (obj.get(DECLARATION_KEY) if isinstance(obj, dict) else None), []


def _mentions(folder: Path) -> str | None:
    readme = folder / "README.md"
    if not is_file(readme):  # a FIFO or device is not read (it could block), nor a link
        return None
    try:
        text = read_text(readme, lenient=True).lower()  # the official never reads it as text
    except (OSError, LogFormatError):
        return None
    return next((m for m in MENTIONS if m in text), None)


def _norm_url(value: object) -> str:
    return str(value).strip().rstrip("/").lower() if isinstance(value, str) else ""


def _number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and len(value) <= 40:
        try:
            return float(value)
        except ValueError:
            return None
    return None


def check_speculative(ctx: ResultContext, closed: bool) -> list[Finding]:
    """Findings about one result's use of speculative decoding (none in the open division)."""
    if not closed:
        return []
    folder, js, _ = measurement_files(ctx)
    declared, out = declaration(js) if js is not None else (None, [])
    category = Category(ctx.category)
    if declared in (None, False):
        word = _mentions(folder)
        if word is not None:
            out.append(
                _err(
                    folder / "README.md",
                    f"the README mentions '{word}' but the measurements JSON declares no {DECLARATION_KEY}; "
                    "declare it (algorithm, mtp_head, configuration) or say it was not used "
                    f"({DECLARATION_KEY}: false)",
                    severity=Severity.WARNING,
                )
            )
        return out
    where = js if js is not None else folder
    rule = speculative_rule(ctx.variant.benchmark.name, category)
    if rule is None:
        rows = ", ".join(
            f"{r.benchmark} {'/'.join(c.value for c in r.categories)}" for r in SPECULATIVE_RULES
        )
        return out + [
            _err(
                where,
                f"{ctx.variant.benchmark.display} {category.value} declares speculative decoding, which the rules "
                f"allow only for {rows}; rerun without it or submit in the open division",
                source=f"{SPEC_DECODING}; {ALLOWED_TECHNIQUES}",
                key=DECLARATION_KEY,
            )
        ]
    if not isinstance(declared, dict):
        return out + [
            _err(
                where,
                f"{DECLARATION_KEY} must be an object with {', '.join(REQUIRED_FIELDS)} (or false when not used)",
                key=DECLARATION_KEY,
            )
        ]
    return out + _check_declared(where, declared, rule) + _token_counts(ctx)


def token_count_mismatches(path: Path, limit: int = MAX_TOKEN_LOG) -> tuple[int, int, str]:
    """(entries checked, entries whose token_count is not the number of tokens in `data`, the first one).

    A log that is too large, truncated or not a JSON array of entries checks nothing: (0, 0, "").
    """
    import orjson  # here: only trees that hold this file pay for its import

    try:
        with path.open("rb") as fh:
            data = read_at_most(fh, limit)
        entries = orjson.loads(data) if len(data) <= limit else None
    except (OSError, orjson.JSONDecodeError):
        return 0, 0, ""
    checked, bad, first = 0, 0, ""
    for entry in entries if isinstance(entries, list) else ():
        if not isinstance(entry, dict):
            continue
        count, hexdata = entry.get("token_count"), entry.get("data")
        if not isinstance(count, int) or isinstance(count, bool) or not isinstance(hexdata, str):
            continue
        if len(hexdata) > MAX_HEX or len(hexdata) % (2 * TOKEN_BYTES):
            continue  # not int32 token ids: nothing to compare
        checked += 1
        tokens = len(hexdata) // (2 * TOKEN_BYTES)
        if tokens != count:
            bad += 1
            first = first or f"qsl_idx {str(entry.get('qsl_idx'))[:20]}: token_count {count}, {tokens} tokens"
    return checked, bad, first


def _token_counts(ctx: ResultContext) -> list[Finding]:
    out: list[Finding] = []
    for test in TOKEN_AUDITS:
        folder, _ = audit_dir(ctx, test)
        if folder is None:
            continue
        for log in (
            folder / ACCURACY_LOG,
            folder / "accuracy" / ACCURACY_LOG,
            folder / "performance" / "run_1" / ACCURACY_LOG,
        ):
            if not is_file(log):
                continue
            checked, bad, first = token_count_mismatches(log)
            if bad:
                out.append(
                    _err(
                        log,
                        f"{bad} of {checked} samples report a token_count other than the tokens in their response "
                        f"(first: {first}); TPOT counts each emitted token once, so with speculative decoding the "
                        "SUT must report the accepted tokens it returns, not drafted or verified ones",
                        source=f"{TPOT_DEFINITION}; {SPEC_DECODING}",
                        key="token_count",
                        value=bad,
                    )
                )
    return out


def _check_declared(where: Path, declared: dict[str, Any], rule: SpeculativeRule) -> list[Finding]:
    out: list[Finding] = []
    missing = [k for k in REQUIRED_FIELDS if declared.get(k) in (None, "", {}, [])]
    if missing:
        out.append(
            _err(
                where,
                f"{DECLARATION_KEY} lacks {', '.join(missing)}: the rules require the reference MTP head, "
                "algorithm and configuration, so the result must say which it used",
                source=rule.source,
                key=missing[0],
            )
        )
    head = declared.get("mtp_head")
    if head not in (None, "") and _norm_url(head) != _norm_url(rule.head):
        out.append(
            _err(
                where,
                f"mtp_head {str(head)[:200]!r} is not the reference MTP head {rule.head}; the rules disallow "
                "a different head (or one fine-tuned or further trained)",
                source=rule.source,
                key="mtp_head",
                expected=rule.head,
            )
        )
    config = declared.get("configuration")
    if isinstance(config, dict):
        for key, want in rule.fixed.items():
            got = _number(config.get(key))
            if got is None or not math.isclose(got, want, rel_tol=0, abs_tol=1e-9):
                out.append(
                    _err(
                        where,
                        f"configuration {key} = {str(config.get(key))[:40]!r}; the rules fix {key}={want:g}",
                        source=rule.source,
                        key=key,
                        expected=want,
                    )
                )
        if rule.reported and not any(config.get(k) not in (None, "") for k in rule.reported):
            out.append(
                _err(
                    where,
                    f"configuration must report {' or '.join(rule.reported)} (the rules leave it to the "
                    "submitter and require it reported)",
                    source=rule.source,
                    key=rule.reported[0],
                )
            )
    elif config not in (None, "", {}, []):
        out.append(_err(where, "configuration must be an object of setting -> value", source=rule.source))
    if declared.get("mtp_head_quantized") is True:
        if not rule.head_quantization:
            out.append(
                _err(
                    where,
                    "the MTP head is quantized; the rules require it at the precision provided "
                    "(quantizing the reference head's weights is disallowed here)",
                    source=rule.source,
                    key="mtp_head_quantized",
                )
            )
        elif declared.get("lossless") is not True:
            out.append(
                _err(
                    where,
                    "a quantized MTP head is allowed only if decoding stays lossless (greedy-equivalent); "
                    "declare lossless: true",
                    source=rule.source,
                    key="lossless",
                )
            )
    return out


__all__ = ["check_speculative", "declaration"]
