"""Accuracy against the rules' quality targets, after the rules' rounding.

The rules: "Accuracy results must be reported to five significant figures with round to even. For
example, 98.9995% should be recorded as 99.000%." So a reported value is rounded first (in decimal,
from its shortest repr, so 98.9995 is not 98.99949999...), then compared with the target. LLMs also
have output-length bounds (tokens per sample, or total generated length) relative to the reference.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

from proctor.findings import Finding, Severity
from proctor.rules.inference import (
    ACCURACY_SIGNIFICANT_FIGURES,
    DC_TABLE,
    Benchmark,
    QualityLevel,
    QualityTarget,
)
from proctor.text_files import split_lines
from proctor.typed_records import record, replace

# Names an accuracy script prints for each of the table's metrics (lower-cased).
METRIC_KEYS: dict[str, tuple[str, ...]] = {
    "accuracy": ("accuracy", "acc", "dlrm_acc"),
    "f1": ("f1",),
    "dice": ("dice", "mean", "accuracy"),
    "map": ("map",),
    "rouge1": ("rouge1",),
    "rouge2": ("rouge2",),
    "rougel": ("rougel",),
    "exact_match": ("exact_match", "exact match"),
    "gsm8k": ("gsm8k", "gsm8k_accuracy"),
    "mbxp": ("mbxp", "mbxp_accuracy"),
    "wer": ("wer", "word error rate"),
    "ne": ("ne", "dlrm_ne"),
    "auc": ("auc", "dlrm_auc"),
    "f1_hierarchical": ("f1_hierarchical", "hierarchical_f1", "f1 hierarchical"),
    "vbench_score": ("vbench_score", "vbench"),
    "tokens_per_sample": ("tokens_per_sample",),
    "gen_len": ("gen_len",),
}

# `key: number` / `key=number`. Matched from the separator so that a long line without one costs
# linear time (a lazy key pattern tried at every start was quadratic: 64 KB took minutes).
_VALUE = re.compile(r"[:=]\s*(?:mean\s*=\s*)?['\"]?(?P<num>[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(?P<pct>%)?")
_ASCII_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
MAX_LINE_CHARS = 64 << 10  # longer lines are cut: an accuracy script prints short ones


def _rounded_digits(value: float, figures: int) -> tuple[bool, int, int]:
    """`value`'s shortest repr rounded half to even at `figures` significant figures, as (negative,
    digits, exponent): the value is digits x 10**exponent. Whole-number arithmetic on the repr's
    digits, what `Decimal(repr(value)).quantize(..., ROUND_HALF_EVEN)` computes without loading
    decimal (2 ms of a small tree's check). `value` is finite and not zero."""
    text = repr(float(value))
    negative = text.startswith("-")
    mantissa, _, exp_text = text.lstrip("-").partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = int(whole + fraction)
    exponent = int(exp_text or 0) - len(fraction)
    quantum = exponent + len(str(digits)) - figures  # the exponent of the last kept figure
    if quantum > exponent:
        scale = 10 ** (quantum - exponent)
        digits, rest = divmod(digits, scale)
        if 2 * rest > scale or (2 * rest == scale and digits % 2):
            digits += 1
    else:  # fewer figures than asked: padded with zeros, as quantize pads
        digits *= 10 ** (exponent - quantum)
    return negative, digits, quantum


def round_significant(value: float, figures: int = ACCURACY_SIGNIFICANT_FIGURES) -> float:
    """Round half to even at `figures` significant figures: 98.9995 -> 99.0 (printed 99.000)."""
    if value == 0 or not math.isfinite(value):
        return value
    negative, digits, exponent = _rounded_digits(value, figures)
    return float(f"{'-' if negative else ''}{digits}e{exponent}")


def format_significant(value: float, figures: int = ACCURACY_SIGNIFICANT_FIGURES) -> str:
    """The reported string: five significant figures, trailing zeros kept ("99.000")."""
    if value == 0:
        return "0." + "0" * (figures - 1)
    if not math.isfinite(value):
        return str(value)
    negative, digits, exponent = _rounded_digits(value, figures)
    if len(str(digits)) > figures:  # rounding carried into a new digit (99.9996 -> 100.00): one fewer decimal
        digits, exponent = digits // 10, exponent + 1
    text = str(digits)
    if exponent >= 0:
        text += "0" * exponent
    else:
        text = text.rjust(1 - exponent, "0")
        text = f"{text[:exponent]}.{text[exponent:]}"
    return f"-{text}" if negative else text


def parse_accuracy_text(text: str) -> dict[str, float]:
    """Every `key: number` / `key=number` pair of an accuracy script's output, keys lower-cased.

    Covers the official scripts' shapes: `accuracy=75.912%, good=..`, `{'rouge1': 44.8, ...}` (also
    with quoted numbers, `{'rouge1': '38.7898'}`, as v5.1's LLM scripts print them),
    `{"exact_match": 88.1, "f1": 90.9}`, `mAP=37.6%`, `Accuracy: mean = 0.8633`.
    """
    out: dict[str, float] = {}
    for line in split_lines(text):  # the official's `for line in f`: universal newlines only
        if line.strip().lower().startswith("hash="):
            continue
        for key, num in _pairs(line[:MAX_LINE_CHARS]):
            out[key] = num
    return out


def _key_char(ch: str) -> bool:
    return ch.isalnum() or ch in "_ .-"  # the old pattern's [\w .-]


def _pairs(line: str) -> list[tuple[str, float]]:
    """The pairs of one line: the key is the run of name characters before each separator (behind
    an optional quote and spaces), starting at its first letter, after the previous pair."""
    found: list[tuple[str, float]] = []
    floor = 0  # the previous pair's end: a key never reaches back past it
    for m in _VALUE.finditer(line):
        end = m.start()
        while end > floor and line[end - 1].isspace():
            end -= 1
        if end > floor and line[end - 1] in "'\"":
            end -= 1
        start = end
        while start > floor and _key_char(line[start - 1]):
            start -= 1
        while start < end and line[start] not in _ASCII_LETTERS:
            start += 1
        key = line[start:end].strip().lower()
        if key:
            if len(m["num"]) > 400:  # more digits than a double holds: report it as out of range
                found.append((key, math.inf))
            else:
                found.append((key, float(m["num"])))
            floor = m.end()
    return found


@record(frozen=True, slots=True)
class AccuracyResult:
    metric: str
    reported: float | None  # as found (scaled into the table's unit)
    rounded: float | None  # after five-significant-figure rounding
    threshold: float | None
    passed: bool
    bound: str  # ">=", "<=", "> low", "< high"


def reported_metric(metric: str, reported: Mapping[str, float]) -> float | None:
    """A target metric's value among an accuracy script's reported pairs (by its known spellings)."""
    return _lookup(metric, reported)


def _lookup(metric: str, reported: Mapping[str, float]) -> float | None:
    lowered = {k.lower(): v for k, v in reported.items()}
    for key in METRIC_KEYS.get(metric.lower(), (metric.lower(),)):
        if key in lowered:
            return lowered[key]
    return None


def _to_table_unit(target: QualityTarget, value: float, threshold: float) -> float:
    """Scripts print some metrics as fractions and others as percents (the DLRMv3 script prints NE
    0.86687 where the rules say 86.687 %); align with the table."""
    if threshold > 1.5 and value <= 1.0:
        return value * 100.0
    if threshold <= 1.0 and value > 1.5:
        return value / 100.0
    return value


def check_level(
    benchmark: Benchmark, level: QualityLevel, reported: Mapping[str, float], path: str | None = None
) -> tuple[list[Finding], list[AccuracyResult]]:
    """Each target metric of `level` against the reported values (rounded as the rules say)."""
    findings: list[Finding] = []
    results: list[AccuracyResult] = []
    src = f"{benchmark.source} ({benchmark.display}: {level.suffix}% of {level.precision})"
    for target in level.targets:
        threshold = level.threshold(target)
        if threshold is None:
            findings.append(
                Finding(
                    rule="accuracy_target",
                    severity=Severity.WARNING,
                    path=path,
                    key=target.metric,
                    source=src,
                    message=f"{benchmark.display}: the rules give no numeric {target.metric} target; "
                    "the accuracy cannot be checked automatically, report it for review",
                )
            )
            continue
        value = _lookup(target.metric, reported)
        if value is None:
            findings.append(
                Finding(
                    rule="accuracy_metric_missing",
                    path=path,
                    key=target.metric,
                    expected=threshold,
                    source=src,
                    message=f"{benchmark.display}: no '{target.metric}' value in the accuracy output; "
                    f"run the reference accuracy script and keep its output",
                )
            )
            results.append(AccuracyResult(target.metric, None, None, threshold, False, ">="))
            continue
        if not math.isfinite(value):
            findings.append(_not_finite(benchmark, target.metric, value, path, src))
            results.append(AccuracyResult(target.metric, value, None, threshold, False, ">="))
            continue
        value = _to_table_unit(target, value, threshold) if not target.complement else value
        rounded = round_significant(value)
        if target.higher_is_better:
            ok, bound = rounded >= threshold, ">="
        else:  # lower is better: WER through its complement, NE against its own bound
            ok, bound = rounded <= threshold, "<="
            if target.complement:
                ok = (100.0 - rounded) >= level.fraction * (100.0 - target.reference)  # type: ignore[operator]
        tsrc = f"{src}; {target.source}" if target.source else src
        results.append(AccuracyResult(target.metric, value, rounded, threshold, ok, bound))
        if ok and target.upper is not None and rounded > target.upper:  # a range (SDXL in v4.1-v5.1)
            ok, bound, threshold = False, "<=", target.upper
            results.append(AccuracyResult(target.metric, value, rounded, threshold, ok, bound))
        if not ok:
            findings.append(
                Finding(
                    rule="accuracy_target",
                    path=path,
                    key=target.metric,
                    value=format_significant(rounded),
                    expected=f"{bound} {threshold:.6g}",
                    source=tsrc,
                    message=f"{benchmark.display}: {target.metric} {format_significant(rounded)} (five significant "
                    f"figures) misses the {level.suffix}% target {bound} {threshold:.6g}; fix the "
                    "implementation or submit at a lower accuracy level",
                )
            )
        elif target.advisory_reference is not None:
            other = replace(target, reference=target.advisory_reference, advisory_reference=None)
            other_bound = level.threshold(other)
            if other_bound is not None and not (
                rounded >= other_bound if target.higher_is_better else rounded <= other_bound
            ):
                findings.append(
                    Finding(
                        rule="accuracy_target_advisory",
                        severity=Severity.WARNING,
                        path=path,
                        key=target.metric,
                        value=format_significant(rounded),
                        expected=f"{bound} {other_bound:.6g}",
                        source=tsrc,
                        message=f"{benchmark.display}: {target.metric} {format_significant(rounded)} meets the "
                        f"{level.suffix}% target of the reference {target.reference:g} but not of "
                        f"{target.advisory_reference:g}, the value another source gives ({bound} "
                        f"{other_bound:.6g}); a reviewer may ask about it",
                    )
                )
    return findings, results


def _not_finite(benchmark: Benchmark, metric: str, value: float, path: str | None, src: str) -> Finding:
    return Finding(
        rule="accuracy_value",
        path=path,
        key=metric,
        value=str(value),
        source=src,
        message=f"{benchmark.display}: {metric} = {value} is not a finite number (out of range, e.g. 1e999); "
        "keep the accuracy script's own output",
    )


def check_generation_length(
    benchmark: Benchmark, reported: Mapping[str, float], path: str | None = None
) -> tuple[list[Finding], list[AccuracyResult]]:
    """The LLM output-length bounds: more than low x reference (and below high x reference)."""
    findings: list[Finding] = []
    results: list[AccuracyResult] = []
    for gb in benchmark.generation:
        value = _lookup(gb.metric, reported)
        low = gb.low * gb.reference
        if value is None:
            findings.append(
                Finding(
                    rule="generation_length_missing",
                    path=path,
                    key=gb.metric,
                    source=DC_TABLE,
                    message=f"{benchmark.display}: no '{gb.metric}' in the accuracy output; the rules bound the "
                    f"generation length ({gb.low:.0%} of {gb.reference:g})",
                )
            )
            results.append(AccuracyResult(gb.metric, None, None, low, False, "> low"))
            continue
        if not math.isfinite(value):
            findings.append(_not_finite(benchmark, gb.metric, value, path, DC_TABLE))
            results.append(AccuracyResult(gb.metric, value, None, low, False, "> low"))
            continue
        ok = value > low
        results.append(AccuracyResult(gb.metric, value, value, low, ok, "> low"))
        if not ok:
            findings.append(
                Finding(
                    rule="generation_length",
                    path=path,
                    key=gb.metric,
                    value=value,
                    expected=f"> {low:.6g}",
                    source=DC_TABLE,
                    message=f"{benchmark.display}: {gb.metric} {value:g} is not more than {gb.low:.0%} of the "
                    f"reference {gb.reference:g} (> {low:.6g}); outputs must not be truncated",
                )
            )
        if gb.high is not None:
            high = gb.high * gb.reference
            ok_hi = value < high
            results.append(AccuracyResult(gb.metric, value, value, high, ok_hi, "< high"))
            if not ok_hi:
                findings.append(
                    Finding(
                        rule="generation_length",
                        path=path,
                        key=gb.metric,
                        value=value,
                        expected=f"< {high:.6g}",
                        source=DC_TABLE,
                        message=f"{benchmark.display}: {gb.metric} {value:g} is not below {gb.high:.0%} of the "
                        f"reference {gb.reference:g} (< {high:.6g})",
                    )
                )
    return findings, results


def check_accuracy(
    benchmark: Benchmark, level: QualityLevel | None, reported: Mapping[str, float], path: str | None = None
) -> tuple[list[Finding], list[AccuracyResult]]:
    """Quality targets of one level plus the generation-length bounds."""
    findings: list[Finding] = []
    results: list[AccuracyResult] = []
    if level is not None:
        f, r = check_level(benchmark, level, reported, path)
        findings += f
        results += r
    f, r = check_generation_length(benchmark, reported, path)
    return findings + f, results + r
