"""The audits' verifications: the official scripts' pass/fail rules and output lines, without crashes.

Each function reads what the official script reads and returns a `Verdict` whose `lines` are the
text the official script prints into its result file (`verify_accuracy.txt`,
`verify_performance.txt`), so the submission checker finds the lines it looks for (`TEST PASS`,
`First token check pass: True`, ...). `notes` say more than the official text (which samples
differ, which rule a failure broke). Where the official script crashes or reads a line wrongly,
the verdict follows the rule the script states; docs/deviations.md ("Compliance audits") lists
each case. Malformed input raises `LogFormatError` naming the file (and entry or line).
"""

from __future__ import annotations

import binascii
import json
import math
import sys
from codecs import BOM_UTF8
from collections.abc import Sequence
from pathlib import Path

from proctor import json_text
from proctor.audits.configs import TEST06_DTYPES
from proctor.errors import LogFormatError
from proctor.lazy_patterns import LazyPattern
from proctor.loadgen.logs.reader import iter_lines, open_regular, read_detail
from proctor.trees import read_at_most
from proctor.typed_records import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any

MAX_ACCURACY_JSON_BYTES = 8 << 30  # larger than any accuracy log LoadGen's own cap lets through
MAX_SUMMARY_LINE = 64 << 10
NAMED_SAMPLES = 10  # notes name at most this many differing samples

# compliance/TEST01/verify_performance.py RESULT_FIELD: the score per scenario (detail-log keys).
RESULT_FIELD = {
    "Offline": "result_samples_per_second",
    "SingleStream": "early_stopping_latency_ss",
    "MultiStream": "early_stopping_latency_ms",
    "Server": "result_completed_samples_per_sec",
}
# Both verify_performance scripts: allowed relative difference, 20 % for short latencies (ns).
PERF_THRESHOLD = 0.10
SHORT_LATENCY_THRESHOLD = 0.20
SHORT_LATENCY_NS = {"SingleStream": 200_000, "MultiStream": 1_600_000}
# compliance/TEST06/run_verification.py: output token dtypes and the default EOS token id.
TEST06_EOS_TOKEN_ID = 2
TEST_PASS = "TEST PASS"


@record
class Verdict:
    """One verification: pass or fail, the official script's output lines, proctor's notes."""

    check: str  # e.g. "TEST01 accuracy"
    passed: bool
    lines: list[str]
    notes: list[str] = field(default_factory=list)
    numbers: dict[str, Any] = field(default_factory=dict)
    # non-empty: the official script's FAIL is inside run-to-run noise (audits.run): not a finding
    inconclusive: str = ""

    @property
    def last_line(self) -> str:
        """What a reader is told of this check: the official script's last line, or for a score
        failure inside run-to-run noise `TEST INCONCLUSIVE: why` (its file keeps the official lines)."""
        if self.inconclusive:
            return f"TEST INCONCLUSIVE: {self.inconclusive}"
        return next((line for line in reversed(self.lines) if line.strip()), "")

    def text(self) -> str:
        """The result file's content: the official lines, then (on failure) proctor's notes."""
        out = list(self.lines)
        if not self.passed:
            out += [f"proctor: {n}" for n in self.notes]
        return "\n".join(out) + "\n"


# --- readers -------------------------------------------------------------------------------------


@record(frozen=True, slots=True)
class AccuracyEntry:
    qsl_idx: int
    data: str
    token_data: Any = None  # str when present
    token_count: Any = None  # int when present


def read_accuracy_log(path: str | Path) -> list[AccuracyEntry]:
    """mlperf_log_accuracy.json as entries; LogFormatError for anything LoadGen would not write."""
    p = str(path)
    return _accuracy_entries(_read_accuracy_bytes(p), p)


def _read_accuracy_bytes(p: str) -> bytes:
    with open_regular(p) as fh:
        raw = read_at_most(fh, MAX_ACCURACY_JSON_BYTES)
    if len(raw) > MAX_ACCURACY_JSON_BYTES:
        raise LogFormatError(f"larger than {MAX_ACCURACY_JSON_BYTES} bytes: not an accuracy log", file=p)
    return raw


def _accuracy_entries(raw: bytes, p: str) -> list[AccuracyEntry]:
    """read_accuracy_log's entries of the file `p` holding `raw`."""
    fast = _plain_entries(raw[len(BOM_UTF8):] if raw.startswith(BOM_UTF8) else raw)  # what utf-8-sig drops
    if fast is not None:
        return fast
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise LogFormatError("not UTF-8 text: not an accuracy log", file=p) from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LogFormatError(f"not JSON ({exc.msg})", file=p, line=exc.lineno) from None
    except (RecursionError, ValueError) as exc:
        raise LogFormatError(f"not an accuracy log ({type(exc).__name__})", file=p) from None
    if not isinstance(doc, list):
        raise LogFormatError("not a JSON list of entries: not an accuracy log", file=p)
    out: list[AccuracyEntry] = []
    for i, item in enumerate(doc):
        if not isinstance(item, dict):
            raise LogFormatError(f"entry {i} is not an object", file=p)
        idx, data = item.get("qsl_idx"), item.get("data")
        if not isinstance(idx, int) or isinstance(idx, bool) or idx < 0:
            raise LogFormatError(f"entry {i}: qsl_idx must be an integer >= 0, not {_short(idx)}", file=p)
        if not isinstance(data, str):
            raise LogFormatError(f"entry {i} (qsl_idx {idx}): data must be a hex string", file=p)
        out.append(AccuracyEntry(idx, data, item.get("token_data"), item.get("token_count")))
    return out


def _plain_entries(text: bytes) -> list[AccuracyEntry] | None:
    """The entries of a log LoadGen wrote (a list of objects whose qsl_idx is a whole number >= 0,
    data and token_data text, token_count a whole number), read from its UTF-8 bytes; None for
    anything else, which `_accuracy_entries` reads and explains as the official script does."""
    try:
        doc = json_text.loads(text)
    except (ValueError, RecursionError):
        return None
    if type(doc) is not list:
        return None
    out: list[AccuracyEntry] = []
    for item in doc:
        if type(item) is not dict:
            return None
        idx, data, tokens, count = item.get("qsl_idx"), item.get("data"), item.get("token_data"), item.get("token_count")
        if type(idx) is not int or idx < 0 or type(data) is not str:
            return None
        if (tokens is not None and type(tokens) is not str) or (count is not None and type(count) is not int):
            return None
        out.append(AccuracyEntry(idx, data, tokens, count))
    return out


@record(frozen=True, slots=True)
class TokenEntry:
    """An accuracy-log entry for TEST06: `data` and `token_data` decoded from hex (None where the
    entry's value is not a hex string)."""

    qsl_idx: int
    data: bytes | None
    token_data: bytes | None
    token_count: Any = None


def _token_entry(e: AccuracyEntry) -> TokenEntry:
    return TokenEntry(e.qsl_idx, _hex_of(e.data), _hex_of(e.token_data), e.token_count)


def _hex_of(value: Any) -> bytes | None:
    return _hex(value) if isinstance(value, str) else None


def read_token_log(path: str | Path) -> list[TokenEntry]:
    """read_accuracy_log's entries with their hex decoded, as TEST06 reads them. A log in the layout
    LoadGen writes is read from its bytes as it streams in (no JSON text objects, and no copy of the
    whole file: a TEST06 log is megabytes of hex, and this halves its re-verification); anything else
    goes through read_accuracy_log."""
    p = str(path)
    with open_regular(p) as fh:
        fast = _loadgen_token_entries(fh, p)
    if fast is not None:
        return fast
    return [_token_entry(e) for e in _accuracy_entries(_read_accuracy_bytes(p), p)]


# One entry as LoadGen's accuracy log writes it; the keys, their order and every separator are fixed,
# numbers are whole (no sign, no leading zero, at most 19 digits: below 2**64, an int to any JSON reader).
_LOADGEN_HEAD = LazyPattern(rb'\{ "seq_id" : (?:0|[1-9][0-9]{0,18}), "qsl_idx" : (0|[1-9][0-9]{0,18}), "data" : "')
_LOADGEN_TAIL = LazyPattern(
    rb'(?:, "token_data" : "([0-9A-Fa-f]*)")?(?:, "token_count" : (0|[1-9][0-9]{0,18}))? \}(,\n|\n\]\n?\Z)'
)
_TOKEN_CHUNK = 1 << 18  # read a token log this much at a time: a reused buffer, not a fresh copy of the file


def _loadgen_token_entries(fh: IO[bytes], p: str) -> list[TokenEntry] | None:
    """The entries of a log in exactly LoadGen's layout (`[`, one `{ "seq_id" : .., "qsl_idx" : ..,
    "data" : "HEX"[, "token_data" : "HEX"][, "token_count" : ..] }` a line, `]`), or None for any other
    text. Where it answers, every value is digits or an even run of hex digits, so a JSON reader's entry
    and `bytes.fromhex` of it give these same values (tests/audits/test_token_log.py compares them).
    An entry holds no "}" before its end, so the text up to the next "}" and the three bytes after it
    are read before an entry is matched; the end of the log (`\n]`) is matched only at the file's end."""
    head, tail = _LOADGEN_HEAD.compiled(), _LOADGEN_TAIL.compiled()
    buf = fh.read(max(_TOKEN_CHUNK, 2))
    if not buf.startswith(b"[\n"):
        return None
    total, eof = len(buf), False

    def read_more(n: int) -> bytes:
        nonlocal total
        more = fh.read(n)
        total += len(more)
        if total > MAX_ACCURACY_JSON_BYTES:
            raise LogFormatError(f"larger than {MAX_ACCURACY_JSON_BYTES} bytes: not an accuracy log", file=p)
        return more

    out: list[TokenEntry] = []
    pos = 2
    while True:
        close = buf.find(b"}", pos)
        while (close < 0 or len(buf) - close < 4) and not eof:  # the entry's end and what follows it
            more = read_more(max(_TOKEN_CHUNK, len(buf) - pos))  # doubling: a long entry reads in linear time
            eof = not more
            scan_from = len(buf) - pos if close < 0 else close - pos  # no "}" before it
            buf = buf[pos:] + more
            pos = 0
            close = buf.find(b"}", scan_from)
        if close < 0:
            return None
        if not eof and buf.startswith(b"\n]", close + 1):  # the last entry: `\Z` must mean the file's end
            rest = [buf]
            while more := read_more(_TOKEN_CHUNK):
                rest.append(more)
            buf, eof = b"".join(rest), True
        m = head.match(buf, pos)
        if m is None:
            return None
        start = m.end()
        end = buf.find(b'"', start, close)
        if end < 0:
            return None
        t = tail.match(buf, end + 1)
        if t is None:
            return None
        first, count = t.group(1), t.group(2)
        try:  # only hex digits, an even number of them: anything else is the JSON reader's to read
            data = binascii.unhexlify(memoryview(buf)[start:end])
            first_raw = binascii.unhexlify(first) if first is not None else None
        except binascii.Error:
            return None
        out.append(TokenEntry(int(m.group(1)), data, first_raw, int(count) if count is not None else None))
        if t.group(3) != b",\n":
            return out
        pos = t.end()


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "..."


def _hex(text: str) -> bytes | None:
    try:
        return bytes.fromhex(text)
    except ValueError:
        return None


# --- TEST01 accuracy: performance-mode responses equal the accuracy-mode ones ----------------------


def verify_test01_accuracy(reference: str | Path, test: str | Path) -> Verdict:
    """compliance/TEST01/verify_accuracy.py (default mode): every response logged in the audit run
    equals the accuracy run's response for the same sample, and at least one sample is compared.

    proctor compares whole responses (as the script's --unixmode does); its default mode compares
    only the first element.
    """
    acc = read_accuracy_log(reference)
    perf = read_accuracy_log(test)
    results: dict[int, str] = {}
    duplicates = acc_mismatch = 0
    for e in acc:
        if e.qsl_idx in results:
            duplicates += 1
            acc_mismatch += _hex(results[e.qsl_idx]) != _hex(e.data)
        else:
            results[e.qsl_idx] = e.data
    matched = mismatch = missing = 0
    differing: list[int] = []
    for e in perf:
        if e.qsl_idx not in results:
            missing += 1
            continue
        matched += 1
        a, b = _hex(results[e.qsl_idx]), _hex(e.data)
        if a is None or b is None or a != b:
            mismatch += 1
            differing.append(e.qsl_idx)
    passed = mismatch == 0 and matched > 0
    lines = [
        "Verifying accuracy. This might take a while...",
        "Reading accuracy mode results...",
        "Reading performance mode results...",
        f"num_acc_log_entries = {len(acc)}",
        f"num_acc_log_duplicate_keys = {duplicates}",
        f"num_acc_log_data_mismatch = {acc_mismatch}",
        f"num_perf_log_entries = {len(perf)}",
        f"num_perf_log_qsl_idx_match = {matched}",
        f"num_perf_log_data_mismatch = {mismatch}",
        f"num_missing_qsl_idxs = {missing}",
        "TEST PASS" if passed else "TEST FAIL",
        "",
    ]
    notes: list[str] = []
    if differing:
        shown = ", ".join(str(i) for i in sorted(set(differing))[:NAMED_SAMPLES])
        more = len(set(differing)) - NAMED_SAMPLES
        notes.append(
            f"{mismatch} response(s) in performance mode differ from the accuracy run: qsl_idx {shown}"
            + (f" and {more} more" if more > 0 else "")
        )
    if matched == 0:
        notes.append("no sample of the audit run's accuracy log is in the accuracy run's log")
    numbers = {
        "num_perf_log_entries": len(perf),
        "num_perf_log_qsl_idx_match": matched,
        "num_perf_log_data_mismatch": mismatch,
        "differing_qsl_idx": sorted(set(differing)),
    }
    return Verdict("TEST01 accuracy", passed, lines, notes, numbers)


# --- TEST01 performance: the audit run's score within the allowed delta -----------------------------


class _Fail(Exception):
    """A verification that stops early, as the official `sys.exit("TEST FAIL: ...")`."""


def _threshold(scenario: str, latency_ns: float | None) -> float:
    """10 %, or 20 % when the reference latency is short (SingleStream <= 0.2 ms, MultiStream <= 1.6 ms)."""
    limit = SHORT_LATENCY_NS.get(scenario)
    if limit is not None and latency_ns is not None and latency_ns <= limit:
        return SHORT_LATENCY_THRESHOLD
    return PERF_THRESHOLD


def _detail_score(path: str | Path, lines: list[str]) -> tuple[str, float, Any]:
    data = read_detail(path, keep_entries=False)
    if data.n_bad_lines:
        bad = data.bad_lines[0]
        raise _Fail(f"TEST FAIL: {path} line {bad.line} is not a log line ({bad.reason})")
    scenario = data.get("effective_scenario")
    if not isinstance(scenario, str) or scenario not in RESULT_FIELD:  # a log's value may be any JSON
        raise _Fail(f"TEST FAIL: no known effective_scenario in {path} ({_short(scenario)})")
    value = data.get(RESULT_FIELD[scenario])
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _Fail(f"TEST FAIL: no {RESULT_FIELD[scenario]} in {path}")
    if data.get("result_validity") != "VALID":
        raise _Fail(f"TEST FAIL: Invalid results in {path}")
    errors = data.get("num_errors") if isinstance(data.get("num_errors"), int) else data.n_errors
    if errors:
        lines.append(f"WARNING: {errors} ERROR reported in {path}")
    target = data.get("effective_target_latency_ns") if scenario == "Server" else None
    return scenario, float(value), target


def verify_test01_performance(reference_detail: str | Path, test_detail: str | Path) -> Verdict:
    """compliance/TEST01/verify_performance.py: both runs VALID, same scenario (and Server target
    latency), and the audit run's score within 10 % of the reference run's either way (20 % for
    SingleStream/MultiStream references of at most 0.2/1.6 ms).
    """
    lines = ["Verifying performance."]
    numbers: dict[str, Any] = {}
    try:
        ref_scen, ref_score, ref_target = _detail_score(reference_detail, lines)
        test_scen, test_score, test_target = _detail_score(test_detail, lines)
        if test_scen != ref_scen:
            raise _Fail("TEST FAIL: Test and reference scenarios do not match!")
        if ref_scen == "Server" and test_target != ref_target:
            raise _Fail("TEST FAIL: Server target latency mismatch")
    except _Fail as exc:
        return Verdict("TEST01 performance", False, [*lines, str(exc)], [], numbers)
    lines += [f"Reference score = {ref_score}", f"Test score = {test_score}"]
    latency = ref_score if ref_scen in SHORT_LATENCY_NS else None
    threshold = _threshold(ref_scen, latency)
    passed = ref_score * (1 - threshold) <= test_score <= ref_score * (1 + threshold)
    lines.append(TEST_PASS if passed else "TEST FAIL: Test score invalid")
    numbers = {"reference_score": ref_score, "test_score": test_score, "threshold": threshold}
    notes = [] if passed else [
        f"{RESULT_FIELD[ref_scen]} {test_score} is not within {threshold:.0%} of the reference {ref_score}"
    ]
    return Verdict("TEST01 performance", passed, lines, notes, numbers)


# --- TEST04: the same sample over and over is not faster than the reference run ---------------------

_ES_SS = LazyPattern(r".*Early stopping (90th|90.0th|99.9th) percentile estimate")
_ES_MS = LazyPattern(r".*Early stopping (99th|99.0th) percentile estimate")
_ERRORS = LazyPattern(r"\d+ ERROR")


@record
class SummaryScore:
    """What compliance/TEST04/verify_performance.py reads from a summary."""

    scenario: str = ""
    score_text: str = ""  # the number as printed (Offline/Server) or the latency (SS/MS)
    target_latency: str | None = None
    invalid: bool = False
    errors: list[str] = field(default_factory=list)


def read_summary_score(path: str | Path) -> SummaryScore:
    """The summary lines TEST04 reads: `Scenario`, the score line, `target_latency (ns)`, `Result is`,
    `N ERROR...`; LogFormatError for a file that is not text."""
    p = str(path)
    out = SummaryScore()
    with open_regular(p) as fh:
        for lineno, raw in iter_lines(fh, MAX_SUMMARY_LINE):
            if raw is None:
                raise LogFormatError(f"line longer than {MAX_SUMMARY_LINE} bytes: not a summary", file=p, line=lineno)
            try:
                line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
            except UnicodeDecodeError:
                raise LogFormatError("not UTF-8 text: not a LoadGen summary", file=p, line=lineno) from None
            value = line.split(": ", 1)[1].strip() if ": " in line else ""
            if line.startswith("Scenario"):
                out.scenario = value
                continue
            sc = out.scenario
            if (sc == "SingleStream" and _ES_SS.match(line)) or (sc == "MultiStream" and _ES_MS.match(line)):
                out.score_text = value
                continue
            if sc == "Server" and line.startswith("Completed samples per second"):
                out.score_text = value
                continue
            if sc == "Server" and line.startswith("target_latency (ns)"):
                out.target_latency = value
                continue
            if sc == "Offline" and line.startswith("Samples per second"):
                out.score_text = value
                continue
            if line.startswith("Result is") and value == "INVALID":
                out.invalid = True
            if _ERRORS.match(line):
                out.errors.append(line.split(" ", 1)[0].strip())
    return out


def _number(text: str) -> float | None:
    try:
        v = float(text)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def verify_test04_performance(reference_summary: str | Path, test_summary: str | Path) -> Verdict:
    """compliance/TEST04/verify_performance.py: both runs VALID, same scenario and Server target
    latency, and the audit run (one sample repeated) not more than 10 % faster than the reference
    (20 % for SingleStream/MultiStream references of at most 0.2/1.6 ms). Scores: samples per second;
    for SingleStream/MultiStream 1e9 / the early-stopping latency estimate.
    """
    lines = ["Verifying performance."]
    ref, test = read_summary_score(reference_summary), read_summary_score(test_summary)

    def fail(message: str) -> Verdict:
        return Verdict("TEST04 performance", False, [*lines, message])

    if ref.invalid:
        return fail("TEST FAIL: Reference results are invalid")
    lines += [f"WARNING: {e} ERROR reported in reference results" for e in ref.errors]
    if test.invalid:
        return fail("TEST FAIL: Test results are invalid")
    if ref.scenario == "Server" and test.target_latency is not None and test.target_latency != ref.target_latency:
        return fail("TEST FAIL: Server target latency mismatch")
    lines += [f"WARNING: {e} ERROR reported in test results" for e in test.errors]
    if test.scenario != ref.scenario:
        return fail("Test and reference scenarios do not match!")
    scores: list[float] = []
    shown: list[str] = []
    latency_ns: float | None = None
    for which, s in (("reference", ref), ("test", test)):
        v = _number(s.score_text) if s.score_text else 0.0
        if v is None or (s.scenario in SHORT_LATENCY_NS and not v > 0):
            return fail(f"TEST FAIL: cannot read the {which} score ({_short(s.score_text)})")
        if s.scenario in SHORT_LATENCY_NS:
            if which == "reference":
                latency_ns = v
            v = 1e9 / v
            shown.append(str(v))
        else:
            shown.append(s.score_text or "0")
        scores.append(v)
    lines += [f"reference score = {shown[0]}", f"test score = {shown[1]}"]
    threshold = _threshold(ref.scenario, latency_ns)
    passed = scores[1] < scores[0] * (1 + threshold)
    lines.append(TEST_PASS if passed else "TEST FAIL: Test score invalid")
    notes = [] if passed else [
        f"the audit run (one sample repeated) scored {scores[1]:.6g}, more than {threshold:.0%} above the "
        f"reference {scores[0]:.6g}: the SUT may be caching repeated samples"
    ]
    numbers = {"reference_score": scores[0], "test_score": scores[1], "threshold": threshold}
    return Verdict("TEST04 performance", passed, lines, notes, numbers)


def summary_score(path: str | Path) -> float | None:
    """A valid run's score as TEST04 compares it (samples per second; for SingleStream/MultiStream
    1e9 / the early-stopping latency estimate), None for an invalid run or no readable score: one
    reference run's point in the spread of repeated reference runs."""
    s = read_summary_score(path)
    v = _number(s.score_text) if s.score_text and not s.invalid else None
    if v is None or not v > 0:
        return None
    return 1e9 / v if s.scenario in SHORT_LATENCY_NS else v


def detail_score(path: str | Path) -> float | None:
    """A valid run's score as TEST01's performance check compares it (the detail log's
    RESULT_FIELD), None for an invalid run or no readable score."""
    try:
        _, value, _ = _detail_score(path, [])
    except _Fail:
        return None
    return value if value > 0 else None


# --- TEST06: LLM output consistency --------------------------------------------------------------


def _array_code(kind: str, size: int) -> str:
    """The `array` (and memoryview) type code holding `size`-byte items of `kind` ("i": signed
    integer, "f": float)."""
    codes = ("q", "l", "i", "h") if kind == "i" else ("d", "f")
    return next(c for c in codes if memoryview(bytes(8)).cast(c).itemsize == size)  # type: ignore[call-overload]


# TEST06's little-endian token types ("<i4", ...) as `array` type codes and item sizes
_TOKEN_ARRAYS = {dt: (_array_code(dt[1], int(dt[2:])), int(dt[2:])) for dt in TEST06_DTYPES.values()}


def _tokens(raw: bytes | None, dtype: str) -> Sequence[Any] | None:
    """The tokens decoded hex (TokenEntry) holds as `dtype` ("<i4", ...), or None when it holds none
    (the value was not a hex string, or its length is not a whole number of tokens). On a
    little-endian machine a view of the bytes (no copy: an output is tens of KB), else a swapped copy."""
    code, size = _TOKEN_ARRAYS[dtype]
    if raw is None or len(raw) % size:
        return None
    if sys.byteorder == "little":
        return memoryview(raw).cast(code)  # type: ignore[call-overload]  # code: one of _TOKEN_ARRAYS
    import array  # a big-endian machine only

    out = array.array(code, raw)
    out.byteswap()
    return out


def verify_test06(
    accuracy_log: str | Path,
    scenario: str,
    *,
    dtype: str = "int32",
    eos_token_id: int = TEST06_EOS_TOKEN_ID,
) -> Verdict:
    """compliance/TEST06/run_verification.py: (1) outside Offline, each reported first token equals
    the output's first token; (2) each output ends with at most one EOS token; (3) each output's
    token count equals its reported `token_count`. A log with no entries fails (the official script
    passes it: every check holds for no samples).
    """
    if dtype not in TEST06_DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(TEST06_DTYPES)}")
    return verify_test06_tokens(read_token_log(accuracy_log), scenario, dtype=dtype, eos_token_id=eos_token_id)


def verify_test06_entries(
    entries: list[AccuracyEntry],
    scenario: str,
    *,
    dtype: str = "int32",
    eos_token_id: int = TEST06_EOS_TOKEN_ID,
) -> Verdict:
    """verify_test06 on a log already read (read_accuracy_log)."""
    return verify_test06_tokens([_token_entry(e) for e in entries], scenario, dtype=dtype, eos_token_id=eos_token_id)


def verify_test06_tokens(
    entries: list[TokenEntry],
    scenario: str,
    *,
    dtype: str = "int32",
    eos_token_id: int = TEST06_EOS_TOKEN_ID,
) -> Verdict:
    """verify_test06 on a log already read (read_token_log): a checker that tries each token type
    reads and decodes the log once."""
    if dtype not in TEST06_DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(TEST06_DTYPES)}")
    dt = TEST06_DTYPES[dtype]
    notes: list[str] = []
    first_ok = eos_ok = len_ok = True
    need_first = scenario != "Offline"
    for e in entries:
        data = _tokens(e.data, dt)
        if data is None:
            eos_ok = first_ok = len_ok = False
            notes.append(f"qsl_idx {e.qsl_idx}: data is not {dtype} tokens in hex")
            continue
        last = len(data) - 1
        while last >= 0 and data[last] == eos_token_id:
            last -= 1
        trailing = len(data) - 1 - last
        if trailing >= 2 and eos_ok:
            eos_ok = False
            notes.append(f"qsl_idx {e.qsl_idx}: output ends with {trailing} EOS tokens ({eos_token_id})")
        if need_first and first_ok:
            first = _tokens(e.token_data, dt)
            if first is None:
                first_ok = False
                notes.append(f"qsl_idx {e.qsl_idx}: no first-token data ({dtype} hex) in the entry")
            elif any(a != b for a, b in zip(data, first, strict=False)):
                first_ok = False
                notes.append(f"qsl_idx {e.qsl_idx}: reported first token differs from the output's")
        count = e.token_count
        if len_ok:
            integral = isinstance(count, int) and not isinstance(count, bool)
            if not integral or count != len(data):
                len_ok = False
                notes.append(f"qsl_idx {e.qsl_idx}: {len(data)} output tokens, token_count {_short(count)}")
    passed = first_ok and eos_ok and len_ok and bool(entries)
    lines = [
        f"First token check pass: {first_ok if need_first else 'Skipped'}",
        f"EOS check pass: {eos_ok}",
        f"Sample length check pass: {len_ok}",
        "TEST06 verification complete" if passed else "TEST06 verification failed",
    ]
    if not entries:  # the official script passes an empty log: nothing was checked, so nothing passed
        lines.insert(-1, "TEST FAIL: the accuracy log holds no entries")
        notes.append("the audit run logged no responses (did the SUT answer?): there is nothing to verify")
    numbers = {"entries": len(entries), "first_token": first_ok, "eos": eos_ok, "length": len_ok}
    return Verdict("TEST06 accuracy", passed, lines, notes, numbers)


__all__ = [
    "AccuracyEntry",
    "SummaryScore",
    "Verdict",
    "detail_score",
    "read_accuracy_log",
    "read_summary_score",
    "summary_score",
    "verify_test06_entries",
    "verify_test06_tokens",
    "read_token_log",
    "TokenEntry",
    "verify_test01_accuracy",
    "verify_test01_performance",
    "verify_test04_performance",
    "verify_test06",
]
