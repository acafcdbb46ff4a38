"""Each audit's verification run again from the logs in the tree, against what its verify file says.

A verify_*.txt is the output of a script the submitter ran; the logs it was computed from sit beside
it. proctor re-runs the verification (proctor.audits.verify, the official scripts' rules) on those
logs and rejects a tree where the verify file claims a pass the logs do not give, or numbers the logs
do not give (a log changed after verification, or an edited verify file):

- TEST01 accuracy: every response in the audit's accuracy log equals the accuracy run's response for
  the same sample, whole responses (`TEST01/accuracy/mlperf_log_accuracy.json` against
  `accuracy/mlperf_log_accuracy.json`); only when both logs are whole (a truncated log's content is
  tied to accuracy.txt's hash instead);
- TEST01 performance: the audit run's score within the delta of the result's (detail logs);
- a verify file that passes but prints numbers the logs do not give (written before the final run)
  is a warning naming both numbers when the logs re-verify within the procedure's tolerance, and an
  error when they do not;
- TEST04: the repeated-sample run not faster than allowed (the summaries);
- TEST06: first-token and token-count checks from the audit's own accuracy log, which must hold
  entries (the EOS check needs the tokenizer's EOS id, which the tree does not record).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path

from proctor.audits.configs import TEST06_DTYPES
from proctor.audits.specs import ACCURACY, PLACES, SPECS, Audit, TokenOptions, spec_of
from proctor.audits.verify import Verdict, read_token_log, verify_test06_tokens
from proctor.errors import LogFormatError
from proctor.findings import Finding, Severity
from proctor.submission_files import TRUNCATION_MARK, VIEWABLE_SIZE, is_truncated, lf_form
from proctor.trees import is_file, read_at_most
from proctor.typed_records import field, record

RULE = "compliance_reverify"
MAX_REVERIFY_BYTES = 512 << 20  # an accuracy log this large is not re-read by the checker (a warning says so)
@record(frozen=True, slots=True)
class Claim:
    """What a verify file says: where it is, whether it passes (proctor's reading), its numbers."""

    path: Path
    passed: bool
    numbers: dict[str, float] = field(default_factory=dict)


def _is_file(path: Path) -> bool:
    """A regular file reached through no link (proctor.trees)."""
    return is_file(path)


def _err(test: str, path: Path, message: str, severity: Severity = Severity.ERROR) -> Finding:
    return Finding(rule=RULE, path=str(path), message=message, severity=severity, source=SPECS[Audit(test)].source)


# the truncated shape with every line end turned into CRLF is at most twice its size
TRUNCATED_READ = 2 * (2 * VIEWABLE_SIZE + len(TRUNCATION_MARK))


def _whole_log(path: Path) -> tuple[bool, str]:
    """(re-verifiable, why not): the file exists, is not the truncated shape (also with its line ends
    converted to CRLF by a copy), and is not too large."""
    try:
        size = os.stat(path).st_size
        if size > MAX_REVERIFY_BYTES:
            return False, f"larger than {MAX_REVERIFY_BYTES} bytes"
        with path.open("rb") as fh:
            head = read_at_most(fh, TRUNCATED_READ)
    except OSError as exc:
        return False, f"cannot read it ({exc.strerror or exc})"
    if size == len(head) and is_truncated(lf_form(head)):
        return False, "truncated"
    return True, ""


def reverify_audit(
    test: str, folder: Path, result_dir: Path, scenario: str, claims: dict[str, Claim]
) -> list[Finding]:
    """Findings where re-running `test`'s verification on the logs in the tree contradicts a verify
    file that passes; `claims` maps "accuracy"/"performance" to what the verify files say."""
    spec = spec_of(test)
    out: list[Finding] = []
    for kind, claim in claims.items():
        if not claim.passed:
            continue  # the verify file fails already: that is its own finding
        comparison = spec.comparison(kind) if spec is not None else None
        if comparison is None:
            continue  # proctor does not run this verification
        log = comparison.log
        if not comparison.against_reference:
            out += _reverify_token_outputs(test, folder / PLACES[log] / log, scenario, claim)
            continue
        inputs = (result_dir / PLACES[log] / log, folder / PLACES[log] / log)
        if not all(_is_file(p) for p in inputs):
            continue  # a missing log is the layout check's finding
        if log == ACCURACY:  # a submitted accuracy log is truncated: nothing to re-verify from
            whole = [(p, _whole_log(p)) for p in inputs]
            too_big = [(p, why) for p, (ok, why) in whole if not ok and why != "truncated"]
            if too_big:
                out.append(
                    _err(test, too_big[0][0], f"{test} not re-verified: {too_big[0][1]}", Severity.WARNING)
                )
            if not all(ok for _, (ok, _) in whole):
                continue
        try:
            verdict = comparison.verify(inputs[0], inputs[1], scenario, TokenOptions())
        except LogFormatError as exc:
            out.append(
                _err(
                    test,
                    claim.path,
                    f"{test} {kind}: {claim.path.name} says it passed, but its verification "
                    f"cannot be run again on the logs in the tree: {exc}",
                )
            )
            continue
        out += _compare(test, kind, claim, verdict, inputs, comparison.compared)
    return out


def _compare(
    test: str,
    kind: str,
    claim: Claim,
    verdict: Verdict,
    inputs: tuple[Path, ...],
    compared: Mapping[str, tuple[str, float]],
) -> list[Finding]:
    logs = " and ".join(str(p) for p in inputs)
    fix = f"run `proctor audit {test}` again (or the official verification) and submit what it writes"
    last = next((line for line in reversed(verdict.lines) if line.strip()), "")
    if not verdict.passed and _reference_failed(last, inputs[0]):
        return []  # the result's own run fails its checks: those findings name it, not the audit
    if not verdict.passed:
        why = "; ".join(verdict.notes) or last
        return [
            _err(
                test,
                claim.path,
                f"{test} {kind} verification, run again on {logs}, fails ({why}) while {claim.path.name} "
                f"says it passed: the logs changed after verification or the file was edited; {fix}",
            )
        ]
    out: list[Finding] = []
    for file_key, (mine, tolerance) in compared.items():
        said, got = claim.numbers.get(file_key), verdict.numbers.get(mine)
        if said is None or not isinstance(got, int | float) or isinstance(got, bool):
            continue
        close = math.isclose(float(said), float(got), rel_tol=tolerance)
        if not close and tolerance and abs(float(said) - float(got)) <= _half_unit(float(said)):
            close = True  # the file printed fewer digits (an SDXL score of 1.55 for 1.54554)
        if not close:  # the verdict is the logs': they re-verify, so the file is only out of date
            out.append(
                _err(
                    test,
                    claim.path,
                    f"{test} {kind}: {claim.path.name} says {file_key} = {said:g}, the logs in the tree give "
                    f"{float(got):g} ({logs}); the verification run again on those logs passes, so the file "
                    f"was written from other logs (before the final run) or edited; {fix}",
                    Severity.WARNING,
                )
            )
    return out


def _half_unit(printed: float) -> float:
    """Half a unit in the last decimal place a number was printed with (1.55 -> 0.005): the most a
    correctly rounded print can differ from the number it shows."""
    text = repr(printed)
    if "e" in text or "." not in text:
        return 0.0
    return 0.5 * 10.0 ** -len(text.split(".", 1)[1])


def _reference_failed(line: str, reference: Path) -> bool:
    """Whether a failed re-run stopped on the result's own log (invalid, unreadable, no score)."""
    return str(reference) in line or "Reference results" in line or "the reference score" in line


def _reverify_token_outputs(test: str, log: Path, scenario: str, claim: Claim) -> list[Finding]:
    """An audit that checks the audit run's own token outputs (TEST06): its checks again on the log."""
    if not _is_file(log):
        return [
            _err(
                test,
                log,
                f"missing: {test}'s accuracy log (its verification copies it here), so the verification cannot be "
                "re-run from the tree; copy the audit run's mlperf_log_accuracy.json here",
                Severity.WARNING,
            )
        ]
    ok, why = _whole_log(log)
    if not ok:
        return [_err(test, log, f"{test} not re-verified: {why}", Severity.WARNING)]
    fix = f"run `proctor audit {test}` again and submit what it writes"
    try:
        entries = read_token_log(log)  # once for every token type below
    except LogFormatError as exc:
        return [_err(test, log, f"{test}'s accuracy log cannot be read ({exc}); {fix}")]
    if not entries:
        return [
            _err(
                test,
                log,
                f"{test}'s accuracy log holds no entries: the audit run produced no output to check, "
                f"while {claim.path.name} says it passed; {fix}",
            )
        ]
    # the tree does not record the --dtype used: any the script accepts passes it (int32, LoadGen's
    # usual token type, tried first); a failure names every type, in the script's order
    notes: dict[str, str] = {}
    for dtype in sorted(TEST06_DTYPES, key=lambda d: d != "int32"):
        verdict = verify_test06_tokens(entries, scenario, dtype=dtype)
        if verdict.numbers.get("first_token") and verdict.numbers.get("length"):
            return []
        notes[dtype] = "; ".join(verdict.notes[:2])
    failed = [f"{dtype}: {notes[dtype]}" for dtype in TEST06_DTYPES]
    return [
        _err(
            test,
            claim.path,
            f"{test} verification, run again on {log}, fails the first-token or sample-length check for every "
            f"token type ({' | '.join(failed)[:400]}) while {claim.path.name} says it passed: the log changed "
            f"after verification or the file was edited; {fix}",
        )
    ]


__all__ = ["MAX_REVERIFY_BYTES", "RULE", "Claim", "reverify_audit"]
