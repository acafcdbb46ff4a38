"""The parts of a result beyond its logs: compliance audits, the accuracy log's size and hash, measurements.

Facts from the official submission checker (round v6.1, `submission_checker/checks/
{compliance_check,accuracy_check,measurements_checks}.py`, `constants.py`):
- Which audit a benchmark needs: the round's `models_TEST0x` lists (`InferenceRound.audits`, the
  one copy `proctor audit all` reads too). Open division needs none.
- Where: the round's `Layout` (v6.x `results/<system>/<benchmark>/<scenario>/TEST0x/`; up to v5.1
  `compliance/<system>/<benchmark>/<scenario>/TEST0x/`). proctor reads either and says when the
  round's checker would look elsewhere.
- TEST01: `verify_accuracy.txt` has a line "TEST PASS" (else the `accuracy/` folder's baseline and
  compliance accuracies within a delta), `verify_performance.txt` has "TEST PASS", and
  `performance/run_1/` holds the detail and summary logs. TEST04: the performance parts. TEST06: the
  lines "First token check pass: True|Skipped", "EOS check pass: True", "Sample length check pass: True".
- The submitted accuracy log is at most 10 KB and `accuracy.txt` carries `hash=...` (the official only
  checks that a hash line exists; proctor also checks it against the log where it can).
- Measurements: a JSON with the SYSTEM_IMP fields (non-empty), README.md and user.conf beside it.

Where the official reads a file more loosely than the rules intend (e.g. a "TEST FAIL" line next to
a "TEST PASS" line), proctor gives the intended verdict (docs/deviations.md, "submission checker").
"""

from __future__ import annotations

import math
import os
from pathlib import Path

from proctor.audits.specs import PROCTOR_AUDITS, spec_of
from proctor.checks.accuracy import parse_accuracy_text, reported_metric
from proctor.checks.audit_reverify import Claim, reverify_audit
from proctor.checks.detail_log import DetailLogData, load_detail_log, short
from proctor.checks.loadgen_origin import check_loadgen_origin
from proctor.checks.system_description import load_strict_json
from proctor.errors import LogFormatError, ProctorError
from proctor.findings import Finding, Severity
from proctor.loadgen.logs.numbers import ostream
from proctor.rules.inference import MEASUREMENT_FIELDS, MIN_DURATION_MS, Variant, empty_response
from proctor.rules.inference_rounds import (
    TEST01_DELTA_SOURCE,
    InferenceRound,
    delta_perc_of_test01,
    round_table,
)
from proctor.rules.rounds import Layout
from proctor.submission_files import (
    MAX_ACCURACY_LOG_SIZE,
    SHA256_HEX,
    hash_lines,
    is_truncated,
    lf_form,
    sha256_hex,
)
from proctor.text_files import MAX_TEXT, TEXT_SOURCE, read_text, split_lines
from proctor.trees import is_dir, is_file, parsed, read_at_most
from proctor.typed_records import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CHECKER = "official submission checker (round v6.1)"
PASS_LINE = "TEST PASS"
PERF_FILES = ("mlperf_log_detail.txt", "mlperf_log_summary.txt")
TEST01_ACC_FILES = (
    "mlperf_log_accuracy.json",
    "accuracy.txt",
    "baseline_accuracy.txt",
    "compliance_accuracy.txt",
)
MEASUREMENT_FILES = ("README.md", "user.conf")


def _err(rule: str, path: Path | str, message: str, **kw: Any) -> Finding:
    return Finding(rule=rule, path=str(path), message=message, **kw)


def _is_file(path: Path) -> bool:
    """A regular file reached through no link (proctor.trees): never a FIFO, never outside the tree."""
    return is_file(path)


def unreadable_text(path: Path, exc: OSError | LogFormatError) -> Finding:
    """The finding for a text file that cannot be read, or not as the official reads it (not UTF-8)."""
    if isinstance(exc, LogFormatError):
        return _err("text_encoding", path, exc.detail, line=exc.line, source=TEXT_SOURCE)
    return _err("unreadable", path, f"cannot read it ({exc.strerror or exc})")


def official_name(folder: str, variant: Variant) -> str:
    """The official benchmark name of a result folder (resnet50 -> resnet)."""
    name = folder.lower()
    return "resnet" if name.startswith("resnet") else name


def required_audits(folder: str, variant: Variant, rnd: InferenceRound) -> tuple[str, ...]:
    """The audits a result needs: the round's checker's per-model lists, by official name."""
    if variant.benchmark.name in PROCTOR_AUDITS:
        return PROCTOR_AUDITS[variant.benchmark.name]
    return rnd.audits_of({official_name(folder, variant), variant.name.lower()})


# --- verification outputs -----------------------------------------------------------------------
@record(frozen=True, slots=True)
class Verdict:
    """What a verify_*.txt says: passed by the official reading, passed by proctor's, and why not."""

    official_pass: bool
    passed: bool
    why: str = ""
    numbers: dict[str, float] = field(default_factory=dict)


def _lines(text: str) -> list[str]:
    return [line.strip() for line in split_lines(text)]


def _number(text: str) -> float | None:
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def parse_verify(text: str, test: str, kind: str) -> Verdict:
    """Read a verify_accuracy.txt / verify_performance.txt / verify_output_len.txt as the official does,
    and as the rules intend: any "TEST FAIL" line fails it, whatever else the file says."""
    lines = _lines(text)
    numbers: dict[str, float] = {}
    for line in lines:
        key, sep, value = line.partition("=")
        num = _number(value) if sep else None
        if num is not None and key.strip():
            numbers[key.strip().lower()] = num
    failed = next((line for line in lines if line.startswith("TEST FAIL")), None)
    spec = spec_of(test)
    if spec is not None and spec.accuracy_lines and kind == "accuracy":
        missing = [what for what, ok in spec.accuracy_lines.items() if not any(o in lines for o in ok)]
        official = not missing
        why = f"the {', '.join(missing)} check did not pass" if missing else ""
        return Verdict(official, official and failed is None, why or (failed or ""), numbers)
    # TEST01's accuracy wants a whole line; the others take it anywhere in a line
    alone = spec is not None and spec.pass_line_alone and kind == "accuracy"
    official = PASS_LINE in lines if alone else PASS_LINE in text
    if failed is not None:
        return Verdict(official, False, f"it says '{failed[:120]}'", numbers)
    return Verdict(official, official, "" if official else f"no '{PASS_LINE}' line", numbers)


# --- audits -------------------------------------------------------------------------------------
@record(frozen=True, slots=True)
class ResultContext:
    """What the audit checks need to know about the result they belong to."""

    root: Path  # <division>/<submitter>
    system: str
    benchmark: str  # the folder name
    scenario: str  # the folder name
    category: str  # the scenario it is (Category value)
    scendir: Path
    version: str
    variant: Variant
    result_log: DetailLogData | None
    allow_unofficial_loadgen: bool = False  # development: proctor-engine logs are a warning


def audit_dir(ctx: ResultContext, test: str) -> tuple[Path | None, Path]:
    """(the folder found or None, where this round's official checker looks)."""
    layout = round_table(ctx.version).layout
    expected = layout.audit_dir(ctx.root, ctx.system, ctx.benchmark, ctx.scenario, test)
    others = (o.audit_dir(ctx.root, ctx.system, ctx.benchmark, ctx.scenario, test) for o in Layout if o is not layout)
    for cand in (expected, *others):
        if is_dir(cand):  # a link is not followed (the tree scan names it)
            return cand, expected
    return None, expected


def check_audits(ctx: ResultContext) -> list[Finding]:
    out: list[Finding] = []
    for test in required_audits(ctx.benchmark, ctx.variant, round_table(ctx.version)):
        found, expected = audit_dir(ctx, test)
        if found is None:
            out.append(
                _err(
                    "compliance_missing",
                    expected,
                    f"missing the {test} audit this benchmark requires in the closed and network divisions; "
                    f"run `proctor audit {test}` and put its output here",
                    source=f"{CHECKER}, models_{test}",
                )
            )
            continue
        if found != expected:
            out.append(
                _err(
                    "compliance_layout",
                    found,
                    f"the {ctx.version} checker looks for {test} in {expected}; move it there",
                    severity=Severity.WARNING,
                )
            )
        out += _check_audit(ctx, test, found)
    return out


def _verify_file(
    folder: Path, test: str, kind: str, name: str | None = None
) -> tuple[Verdict | None, list[Finding]]:
    path = folder / (name or f"verify_{kind}.txt")
    if not _is_file(path):
        return None, [_err("compliance_file", path, f"missing; {test}'s verification writes it")]
    try:
        text = read_text(path)
    except (OSError, LogFormatError) as exc:
        return None, [unreadable_text(path, exc)]
    verdict = parse_verify(text, test, kind)
    if verdict.passed:
        return verdict, []
    return verdict, [_err("compliance_failed", path, f"{test} {kind} verification failed: {verdict.why}")]


def _check_audit(ctx: ResultContext, test: str, folder: Path) -> list[Finding]:
    out: list[Finding] = []
    claims: dict[str, Claim] = {}
    spec = spec_of(test)
    if spec is None:
        return out  # a name no round's checker uses: the round's lists never ask for it
    if "accuracy" in spec.verify_files:
        verdict, found = _verify_file(folder, test, "accuracy")
        if spec.accuracy_delta and verdict is not None and not verdict.passed:
            found = _test01_fallback(folder, ctx, found)
        elif spec.accuracy_delta and verdict is not None:
            found += _test01_files(folder)
        out += found
        if verdict is not None:
            claims["accuracy"] = Claim(folder / "verify_accuracy.txt", verdict.passed, verdict.numbers)
    for kind in spec.verify_files:
        if kind not in ("accuracy", "performance"):  # TEST09's verify_output_len.txt
            out += _verify_file(folder, test, kind)[1]
    if spec.round_seeds:  # v4.1 TEST05: the performance run repeated with the round's TEST05 seeds
        out += _verify_file(folder, test, "performance")[1]
        run = folder / "performance" / "run_1" / "mlperf_log_detail.txt"
        if not _is_file(run):
            out.append(_err("compliance_file", run, f"missing; copy the {test} run's LoadGen output here"))
        else:
            out += _test05_seeds(ctx, run)
    if spec.performance_logs:
        verdict, found = _verify_file(folder, test, "performance")
        out += found
        if verdict is not None:
            claims["performance"] = Claim(folder / "verify_performance.txt", verdict.passed, verdict.numbers)
        run = folder / "performance" / "run_1"
        for name in PERF_FILES:
            if not _is_file(run / name):
                out.append(
                    _err("compliance_file", run / name, f"missing; copy the {test} run's LoadGen output here")
                )
        if _is_file(run / "mlperf_log_detail.txt"):
            out += _consistent(ctx, test, run / "mlperf_log_detail.txt")
    # the verify files are what a script printed: run the verification again on the logs here
    out += reverify_audit(test, folder, ctx.scendir, ctx.category, claims)
    return out


# Numbers an accuracy script prints that count samples rather than measure quality (the AUC line of
# DLRM: "AUC=80.330%, accuracy=96.648%, good=764096, total=790600, queries=3988").
TEST01_COUNT_KEYS = frozenset({"good", "total", "queries", "count", "samples", "gen_num", "total_items", "good_items"})


TEST01_FILES_SOURCE = (
    "mlcommons/inference tools/submission/submission_checker.py (tags v4.1-v5.1.1; HEAD constants.py) "
    "REQUIRED_TEST01_ACC_FILES_1"
)


def _test01_files(folder: Path) -> list[Finding]:
    """A TEST01 that passed keeps its accuracy log and accuracy.txt in accuracy/ (every round's
    official checker rejects the result without them)."""
    acc = folder / "accuracy"
    return [
        _err(
            "compliance_file",
            acc / name,
            "missing; TEST01 keeps its accuracy log (truncated as the result's is) and accuracy.txt here",
            source=TEST01_FILES_SOURCE,
        )
        for name in TEST01_ACC_FILES[:2]
        if not _is_file(acc / name)
    ]


def _test01_fallback(folder: Path, ctx: ResultContext, failed: list[Finding]) -> list[Finding]:
    """TEST01 in non-deterministic mode: baseline and compliance accuracy within the delta, on the
    benchmark's target metrics (its quality targets and output-length bounds), as the official
    compares them; a target metric one of them lacks fails, as the official reads it as 0."""
    acc = folder / "accuracy"
    missing = [n for n in TEST01_ACC_FILES if not _is_file(acc / n)]
    if missing:
        return failed
    texts: list[str] = []
    for name in ("baseline_accuracy.txt", "compliance_accuracy.txt"):
        try:
            texts.append(read_text(acc / name))
        except (OSError, LogFormatError) as exc:
            return [unreadable_text(acc / name, exc)]
    base, comp = (parse_accuracy_text(t) for t in texts)
    level = ctx.variant.level
    high = level.fraction >= 0.999 if level is not None else "99.9" in ctx.benchmark
    targets = [t.metric for t in level.targets] if level is not None else []
    targets += [g.metric for g in ctx.variant.benchmark.generation]
    pairs = {m: (reported_metric(m, base), reported_metric(m, comp)) for m in targets}
    pairs = {m: v for m, v in pairs.items() if v != (None, None)}
    if not pairs:  # no target metric printed: the metrics the two files share, not their counts
        # (a performance-mode log holds fewer samples than the accuracy run's)
        pairs = {k: (base[k], comp[k]) for k in base if k in comp and k.lower() not in TEST01_COUNT_KEYS}
    if not pairs:
        return failed + [
            _err("compliance_failed", acc, "baseline and compliance accuracy name no common metric")
        ]
    model = official_name(ctx.benchmark, ctx.variant)
    bad: list[str] = []
    for metric, (b, c) in pairs.items():
        delta = delta_perc_of_test01(model, metric, high)
        if not b or not c or abs(1 - b / c) * 100 > delta:
            bad.append(f"{metric} {b} vs {c}, more than {delta:g}%")
    if bad:
        return [
            _err(
                "compliance_failed",
                acc,
                f"TEST01 accuracy in performance mode differs from the baseline ({'; '.join(bad)})",
                source=TEST01_DELTA_SOURCE,
            )
        ]
    return []  # the official passes TEST01 on the delta alone


def _test05_seeds(ctx: ResultContext, path: Path) -> list[Finding]:
    """TEST05 (rounds up to v4.1) reruns the performance test with the seeds its round announced."""
    from proctor.rules.inference_rounds import round_table

    rnd = round_table(ctx.version)
    log, problems = load_detail_log(path)
    if problems or not log.values:
        return problems
    out: list[Finding] = check_loadgen_origin(log, ctx.version, allow_unofficial=ctx.allow_unofficial_loadgen)
    if rnd.test05_seeds is None:
        return out
    for name, want in zip(("qsl", "sample_index", "schedule"), rnd.test05_seeds, strict=True):
        key = f"effective_{name}_rng_seed"
        if log.get(key) != want:
            out.append(
                _err(
                    "seeds",
                    path,
                    f"{key} is {short(log.get(key))}; {ctx.version}'s TEST05 runs with {want}",
                    key=key,
                    line=log.line_of(key),
                    expected=want,
                    source=rnd.source + ' "test05_seeds"',
                )
            )
    return out


def _consistent(ctx: ResultContext, test: str, path: Path) -> list[Finding]:
    """The audit ran the same system in the same scenario as the result, and was the audit."""
    log, problems = load_detail_log(path)
    if problems or not log.values:
        return problems
    out: list[Finding] = check_loadgen_origin(log, ctx.version, allow_unofficial=ctx.allow_unofficial_loadgen)
    spec = spec_of(test)
    keys = spec.audit_keys if spec is not None else ()
    if keys and not any(_audit_on(log.get(k)) for k in keys if k in log):
        out.append(
            _err(
                "compliance_run",
                path,
                f"this log is not a {test} run ({' / '.join(keys)} off or absent): "
                f"the audit must run with {test}'s audit.config",
                key=keys[0],
                source=f"official compliance/{test}/README.md and audit.config (the audit is the run with its settings)",
            )
        )
    dur = log.get("effective_min_duration_ms")
    if isinstance(dur, int | float) and not isinstance(dur, bool) and dur < MIN_DURATION_MS:
        # an audit runs as for the submission: the official checker gives its run the result's checks
        out.append(
            _err(
                "min_duration",
                path,
                f"the {test} run's min duration {short(dur)} ms is below the rules' 600 s; "
                "run the audit with the submission's settings",
                key="effective_min_duration_ms",
                line=log.line_of("effective_min_duration_ms"),
                expected=MIN_DURATION_MS,
            )
        )
    res = ctx.result_log
    if res is None or not res.values:
        return out
    for key in ("effective_scenario", "sut_name"):
        mine, theirs = log.get(key), res.get(key)
        if key in log and key in res and mine != theirs:
            out.append(
                _err(
                    "compliance_mismatch",
                    path,
                    f"{key} {short(mine)} differs from the result's {short(theirs)}: "
                    "the audit must run the submitted system in the same scenario",
                    key=key,
                    line=log.line_of(key),
                )
            )
    return out


def _audit_on(value: object) -> bool:
    if isinstance(value, bool):
        return value
    return isinstance(value, int | float) and value > 0


# --- accuracy log size and hash ----------------------------------------------------------------
def check_accuracy_hash(acc_dir: Path, text: str | None = None) -> list[Finding]:
    """The submitted log is within the size limit and accuracy.txt carries the full log's hash.

    `text`: accuracy.txt as already read (read here when None). A log whose line ends were converted
    to CRLF after it was written (git's autocrlf on Windows) is judged on its LF form, with a warning:
    the official only checks that a hash line exists, and the content is LoadGen's."""
    log, txt = acc_dir / "mlperf_log_accuracy.json", acc_dir / "accuracy.txt"
    if not (_is_file(log) and _is_file(txt)):
        return []  # missing files are reported by the caller
    out: list[Finding] = []
    fix = "run `proctor submission truncate-accuracy` on the tree"
    try:
        size = os.stat(log).st_size
    except OSError as exc:
        return [_err("unreadable", log, f"cannot read it ({exc.strerror or exc})")]
    if text is None:
        try:
            text = read_text(txt)
        except (OSError, LogFormatError) as exc:
            return [unreadable_text(txt, exc)]
    hashes = hash_lines(text)
    if size > MAX_ACCURACY_LOG_SIZE:
        out.append(
            _err(
                "accuracy_log_size",
                log,
                f"{size} bytes: over the {MAX_ACCURACY_LOG_SIZE}-byte limit for a submitted accuracy log; {fix}",
                value=size,
                expected=MAX_ACCURACY_LOG_SIZE,
            )
        )
    if not hashes:
        out.append(_err("accuracy_hash", txt, f"no 'hash=' line (the full accuracy log's sha256); {fix}"))
        return out
    value = hashes[0]
    if len(set(hashes)) > 1:
        out.append(
            _err(
                "accuracy_hash",
                txt,
                f"{len(set(hashes))} different hash lines; the first one counts",
                severity=Severity.WARNING,
            )
        )
    if not SHA256_HEX.match(value):
        out.append(
            _err("accuracy_hash", txt, f"hash {short(value, 80)} is not a sha256 (64 lowercase hex digits)")
        )
        return out
    if size > MAX_ACCURACY_LOG_SIZE:
        return out
    try:
        data = log.read_bytes()
    except OSError as exc:
        return out + [_err("unreadable", log, f"cannot read it ({exc.strerror or exc})")]
    lf = lf_form(data)
    digest, lf_digest = sha256_hex(data), sha256_hex(lf)
    truncated = is_truncated(data) or is_truncated(lf)
    if truncated:
        if value in (digest, lf_digest):
            # the full log's hash is lost (the official truncation script run on a log already cut): the
            # score cannot be tied to the full log, but the official checker only asks for a hash line
            # and the rules name none, so it is not a reason to reject (published v5.1 had three)
            out.append(
                _err(
                    "accuracy_hash",
                    txt,
                    "the hash is of the truncated log, not of the full log the score was computed from: "
                    "keep the full log and hash it before truncating (proctor submission truncate-accuracy)",
                    severity=Severity.WARNING,
                )
            )
    elif value not in (digest, lf_digest):
        out.append(
            _err(
                "accuracy_hash",
                log,
                f"the log's sha256 {digest[:16]}... differs from accuracy.txt's hash {value[:16]}...: "
                "the log or the hash was changed after the accuracy run",
            )
        )
    if lf is not data and (is_truncated(lf) or lf_digest == value) and not is_truncated(data) and digest != value:
        out.append(
            _err(
                "accuracy_hash",
                log,
                "its line ends are CRLF (LoadGen writes LF: a copy converted them, e.g. git's autocrlf); "
                "its hash and truncation were read on the LF form. Submit the log as LoadGen wrote it",
                severity=Severity.WARNING,
            )
        )
    return out


# --- measurements -------------------------------------------------------------------------------
def measurement_files(ctx: ResultContext) -> tuple[Path, Path | None, list[Finding]]:
    """(the folder, its measurements JSON or None, findings about where they are)."""
    where = (ctx.root, ctx.system, ctx.benchmark, ctx.scenario)
    beside = Layout.RESULTS.measurements_dir(*where)  # either layout is read, the round's is asked for
    if _is_file(beside / Layout.RESULTS.measurements_name(ctx.system)):
        return beside, beside / Layout.RESULTS.measurements_name(ctx.system), []
    apart = Layout.COMPLIANCE.measurements_dir(*where)
    try:
        names = sorted(p.name for p in apart.iterdir() if p.suffix == ".json" and _is_file(p))
    except OSError:
        names = []
    pick = next((n for n in names if n.startswith(ctx.system) and n.endswith(f"_{ctx.scenario}.json")), None)
    pick = pick or next((n for n in names if n.startswith(ctx.system)), None)
    if pick is not None:
        return apart, apart / pick, []
    layout = round_table(ctx.version).layout
    expected = layout.measurements_dir(*where) / layout.measurements_name(ctx.system)
    return (
        expected.parent,
        None,
        [
            _err(
                "measurements",
                expected,
                "missing the measurements JSON (input_data_types, retraining, starting_weights_filename, "
                "weight_data_types, weight_transformations)",
            )
        ],
    )


def check_measurements(ctx: ResultContext) -> list[Finding]:
    folder, js, out = measurement_files(ctx)
    if js is not None:
        out += check_measurements_json(js)
    for name in MEASUREMENT_FILES:
        p = folder / name
        if not _is_file(p):
            out.append(
                _err("measurements", p, f"missing {name}; the official checker requires it beside the JSON")
            )
        elif os.stat(p).st_size == 0:
            out.append(_err("measurements", p, f"{name} is empty"))
    if _is_file(folder / "user.conf"):
        out += check_conf_matches(ctx, folder)
    return out


def check_measurements_json(path: Path) -> list[Finding]:
    try:
        with path.open("rb") as fh:
            data = read_at_most(fh, MAX_TEXT)
    except OSError as exc:
        return [_err("unreadable", path, f"cannot read it ({exc.strerror or exc})")]
    if len(data) > MAX_TEXT:
        return [_err("measurements", path, f"larger than {MAX_TEXT} bytes: not a measurements JSON")]
    repeated: list[str] = []
    try:
        obj = load_strict_json(data, duplicates=repeated)
    except ValueError as exc:
        return [_err("measurements", path, f"not valid JSON: {exc}")]
    if not isinstance(obj, dict):
        return [_err("measurements", path, "must be a JSON object")]
    missing = [k for k in MEASUREMENT_FIELDS if k not in obj]
    empty = [k for k in MEASUREMENT_FIELDS if k in obj and empty_response(obj[k])]  # the official's `not j[k]`
    out = []
    if repeated:  # the official reader keeps the last value: ambiguous, not invalid
        out.append(_err("measurements", path, f"duplicate key(s) {', '.join(sorted(set(repeated))[:5])}: the "
                        "last value is the one read; keep one", key=repeated[0], severity=Severity.WARNING))
    if missing:
        out.append(_err("measurements", path, f"missing fields: {', '.join(missing)}", key=missing[0]))
    if empty:
        out.append(
            _err("measurements", path, f"fields need a meaningful value: {', '.join(empty)}", key=empty[0])
        )
    return out


MAX_IGNORED_CONF_LINES = 20  # warnings for one user.conf's ignored lines, at most


def check_conf_matches(ctx: ResultContext, folder: Path) -> list[Finding]:
    """Every setting user.conf (on mlperf.conf: the copy here, else the shipped one) gives the result's
    model and scenario is the one the performance run requested."""
    from proctor.loadgen.conf import ConfType, applied, apply_conf, parse_conf_as_loadgen, shipped_mlperf_conf
    from proctor.loadgen.settings import TestSettings

    log = ctx.result_log
    user = folder / "user.conf"
    mlperf = folder / "mlperf.conf" if _is_file(folder / "mlperf.conf") else shipped_mlperf_conf()
    model = ctx.variant.benchmark.name
    scenario = "Interactive" if ctx.variant.interactive else ctx.category
    try:  # the same mlperf.conf for every result: parsed once per reading of the tree
        # named alike, so every result's copy of the same text is parsed once (conf._as_loadgen)
        base_entries, _ = parsed(
            mlperf, "mlperf.conf", lambda: parse_conf_as_loadgen(mlperf, ConfType.MLPERF, name="mlperf.conf")
        )
        base = apply_conf(TestSettings(), base_entries, model, scenario, ConfType.MLPERF, ranges=False)
    except (ProctorError, ValueError, OSError) as exc:  # the finding names the file that failed: this one
        return [_err("measurements", mlperf, f"cannot be read as LoadGen reads it: {exc}")]
    try:
        entries, ignored = parse_conf_as_loadgen(user, ConfType.USER)
        pairs = list(applied(base, entries, model, scenario, ConfType.USER, ranges=False))
    except (ProctorError, ValueError, OSError) as exc:
        return [_err("measurements", user, f"cannot be read as LoadGen reads it: {exc}")]
    # a line the official LoadGen skips had no effect on the run: worth fixing, not a rejection
    out = [
        _err("measurements_conf", user, f"ignored by LoadGen: {exc}", line=exc.line, severity=Severity.WARNING)
        for exc in ignored[:MAX_IGNORED_CONF_LINES]
    ]
    if log is None or not log.values:
        return out
    for name, value, entry in pairs:
        key = f"requested_{name}"
        if key not in log:
            continue
        got = log.get(key)
        if not _same(got, value):
            out.append(
                _err(
                    "measurements_conf",
                    user,
                    f"line {entry.line} sets {entry.key} = {entry.value}, but the performance run requested "
                    f"{name} = {short(got)}: submit the user.conf the run used (a warning: no rule "
                    "requires them to match)",
                    line=entry.line,
                    key=entry.key,
                    severity=Severity.WARNING,
                )
            )
    return out


def _same(got: object, want: object) -> bool:
    if hasattr(want, "value") and not isinstance(want, int | float):
        want = str(want)
    if isinstance(want, bool) or isinstance(got, bool):
        return bool(got) == bool(want)
    if isinstance(want, int | float) and isinstance(got, int | float):
        # a double reaches the detail log as `std::ostream` prints it (6 significant digits): compare
        # the conf's value as the log can hold it (1234567 is logged 1.23457e+06)
        held = float(ostream(float(want))) if isinstance(want, float) or isinstance(got, float) else want
        return any(math.isclose(float(got), float(w), rel_tol=1e-9, abs_tol=1e-9) for w in (want, held))
    return str(got) == str(want)
