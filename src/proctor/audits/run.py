"""Running an audit: reference runs, the audit run with its audit.config, the verification, the files.

The official procedure (compliance/README.md, each TEST's README): copy the audit.config next to
the benchmark, run it as for a submission, then run the TEST's `run_verification.py` against the
submission's results folder (`performance/run_1`, `accuracy`). `run_audits` does the same with
one `Runner` (proctor's engine, or the official LoadGen): it makes the reference runs unless given
a results folder, runs each audit with its audit.config, verifies, and writes the files where the
submission checker looks for them:

- layout "results" (rounds v6.0 and later): `results/<system>/<benchmark>/<scenario>/TESTxx/`
- layout "compliance" (rounds up to v5.1):  `compliance/<system>/<benchmark>/<scenario>/TESTxx/`

Each TESTxx folder gets what the official `run_verification.py` copies there: TEST01
`verify_accuracy.txt`, `verify_performance.txt`, `accuracy/mlperf_log_accuracy.json`,
`performance/run_1/mlperf_log_{detail,summary}.txt`; TEST04 `verify_performance.txt` and
`performance/run_1/...`; TEST06 `verify_accuracy.txt` and `accuracy/mlperf_log_accuracy.json`. The
audit runs' own logs stay in `audit_runs/<benchmark>/<scenario>/TESTxx/`.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from proctor.audits.specs import ACCURACY, DETAIL, PLACES, SPECS, SUMMARY, Audit, TokenOptions, audit_config
from proctor.audits.verify import TEST_PASS, Verdict, detail_score, summary_score
from proctor.errors import ConfigError, ProctorError, TreeError
from proctor.loadgen.scenarios import TestMode
from proctor.loadgen.settings import TestSettings
from proctor.rules.rounds import Layout
from proctor.trees import DIR, MISSING, copy_file, kind, make_dirs, not_a_file, remove_file, replace, show
from proctor.typed_records import field, record

AUDIT_RUNS = "audit_runs"


@record(frozen=True, slots=True)
class RunLogs:
    """Where one run left its logs, and what it said about itself."""

    detail: Path
    summary: Path
    accuracy: Path
    errors: int = 0
    problem: str = ""  # why the run itself failed (incomplete, SUT failures), else ""


# runner(settings, log folder, audit.config path or None) -> the run's logs
Runner = Callable[[TestSettings, Path, Path | None], RunLogs]


@record(frozen=True, slots=True)
class Tree:
    """The submission-tree folders one (system, benchmark, scenario) uses."""

    out: Path
    system: str
    benchmark: str
    scenario: str
    layout: Layout = Layout.RESULTS
    results: Path | None = None  # an existing results folder (performance/run_1, accuracy), else ours
    audits: Path | None = None  # write the TESTxx folders here instead (a runs folder for packaging)

    @property
    def reference(self) -> Path:
        return self.results or self.out / "results" / self.system / self.benchmark / self.scenario

    def audit_dir(self, audit: Audit) -> Path:
        if self.audits is not None:
            return self.audits / str(audit)
        return self.layout.audit_dir(self.out, self.system, self.benchmark, self.scenario, str(audit))

    def run_dir(self, audit: Audit) -> Path:
        return self.out / AUDIT_RUNS / self.benchmark / self.scenario / str(audit)


@record
class AuditOutcome:
    audit: Audit
    folder: Path
    verdicts: list[Verdict]
    notes: list[str] = field(default_factory=list)
    failures: list[str] = field(
        default_factory=list
    )  # why the audit fails beyond its verdicts (a failed run)
    inconclusive: str = ""  # why a performance comparison stayed inside run-to-run noise (not passed)

    @property
    def passed(self) -> bool:
        return bool(self.verdicts) and all(v.passed for v in self.verdicts) and not self.failures


def _mode(settings: TestSettings, mode: TestMode) -> TestSettings:
    return dataclasses.replace(settings, mode=mode)


def _need(path: Path, what: str) -> Path:
    if not path.is_file():
        raise ConfigError(f"{path}: no such file ({what})", key="--results")
    return path


def reference_runs(
    runner: Runner, settings: TestSettings, tree: Tree, audits: Sequence[Audit]
) -> tuple[list[str], dict[str, RunLogs], TestSettings]:
    """The submission runs the audits compare against: made here unless `tree.results` holds them;
    with the settings they ran with (an Offline run that ended short is sized by itself and made
    again, and the audits use the same settings)."""
    wanted = {r for a in audits for r in SPECS[a].references}
    runs: dict[str, RunLogs] = {}
    notes: list[str] = []
    perf_dir, acc_dir = tree.reference / PLACES[DETAIL], tree.reference / PLACES[ACCURACY]
    if tree.results is not None:
        if "performance" in wanted:
            _need(perf_dir / DETAIL, "the reference performance run's detail log")
            _need(perf_dir / SUMMARY, "the reference performance run's summary")
        if "accuracy" in wanted:
            _need(acc_dir / ACCURACY, "the accuracy run's accuracy log")
        return notes, runs, settings
    if "performance" in wanted:
        runs["performance"] = runner(_mode(settings, TestMode.PERFORMANCE_ONLY), perf_dir, None)
        for _ in range(RESIZES):  # a short Offline run can end before min_duration: size it by itself
            sized = sized_offline(settings, runs["performance"])
            if sized is None:
                break
            settings, why = sized
            notes.append(f"reference performance run {why}")
            runs["performance"] = runner(_mode(settings, TestMode.PERFORMANCE_ONLY), perf_dir, None)
    if "accuracy" in wanted:
        runs["accuracy"] = runner(_mode(settings, TestMode.ACCURACY_ONLY), acc_dir, None)
    for name, logs in runs.items():
        if logs.problem:
            notes.append(f"reference {name} run: {logs.problem}")
    return notes, runs, settings


RESIZES = 2  # reference Offline runs re-made at most, each sized from the last one's measured rate
RESIZE_MARGIN = 1.5  # the expected rate asked: this times the rate the last run measured


def sized_offline(settings: TestSettings, logs: RunLogs) -> tuple[TestSettings, str] | None:
    """An Offline run that ended before min_duration because the SUT was faster than
    offline_expected_qps said: settings asking RESIZE_MARGIN x the rate it measured (a whole run's
    rate, read from its summary, not a probe's), and the note saying so ("ended before ..."); None
    for any other outcome. The audits' reference and audit runs and `proctor run --fit` use it."""
    from proctor.loadgen.logs.reader import read_summary
    from proctor.loadgen.scenarios import Scenario

    if logs.problem or settings.scenario is not Scenario.OFFLINE or not logs.summary.is_file():
        return None
    try:
        summary = read_summary(logs.summary)
    except (OSError, ValueError):
        return None
    rate = summary.get("Samples per second")
    if str(summary.get("Min duration satisfied", "")).strip().upper() != "NO" or not isinstance(rate, int | float):
        return None
    if not rate > settings.offline_expected_qps:
        return None
    qps = float(rate) * RESIZE_MARGIN
    why = (
        f"ended before min_duration at {rate:.6g} samples/s (asked {settings.offline_expected_qps:g}): "
        f"made again with offline_expected_qps {qps:.6g} ({RESIZE_MARGIN:g} x that rate)"
    )
    return dataclasses.replace(settings, offline_expected_qps=qps), why


def _copy(src: Path, dst_dir: Path) -> None:
    """Copy a log into the output tree: no link followed on either side (proctor.trees)."""
    make_dirs(dst_dir)
    remove_file(dst_dir / src.name)
    copy_file(src, dst_dir / src.name)


def _write(folder: Path, name: str, verdict: Verdict) -> None:
    make_dirs(folder)
    replace(folder / name, verdict.text().encode("utf-8"))


def _fail_for(verdicts: list[Verdict], problems: Sequence[str]) -> None:
    """A run that failed (incomplete, SUT failures) fails its verification, whatever its logs hold:
    the verify file then says TEST FAIL with the reason, so the checker rejects it too."""
    for v in verdicts:
        v.passed = False
        v.lines = [*[line for line in v.lines if line.strip() != TEST_PASS], f"TEST FAIL: {problems[0]}"]
        v.notes = [*v.notes, *problems]


def verify_audit(
    audit: Audit,
    tree: Tree,
    logs_dir: Path,
    *,
    test06: TokenOptions | None = None,
    problems: Sequence[str] = (),
) -> AuditOutcome:
    """Verify one audit's logs (in `logs_dir`) against the reference runs; write the TESTxx folder.
    `problems` are why the runs it compares failed (then it fails, with them as the reason)."""
    folder = tree.audit_dir(audit)
    got = kind(folder)
    if got == DIR:
        shutil.rmtree(folder)  # removes links inside, never what they point to
    elif got != MISSING:
        raise TreeError(f"{show(folder)}: {not_a_file(folder, got)}; proctor writes the audit folder there")
    spec, opts = SPECS[audit], test06 or TokenOptions()
    verdicts = [
        c.verify(tree.reference / PLACES[c.log] / c.log, logs_dir / c.log, tree.scenario, opts)
        for c in spec.comparisons
    ]
    if problems:
        _fail_for(verdicts, problems)
    for c, verdict in zip(spec.comparisons, verdicts, strict=True):
        _write(folder, f"verify_{c.kind}.txt", verdict)
    for name in spec.keeps:
        _copy(logs_dir / name, folder / PLACES[name])
    return AuditOutcome(audit, folder, verdicts, failures=list(problems))


PERF_ATTEMPTS = 3  # audit runs at most while their performance comparison stays inconclusive
SPREAD_RUNS = 3  # reference performance runs the spread is measured over (run_1 and two more)
SCORE_INVALID = "TEST FAIL: Test score invalid"


@record(frozen=True, slots=True)
class Spread:
    """Repeated reference performance runs (run_1 first): how far one run of this SUT lands from
    the next on this machine. Measured only when an audit run's score fails the official threshold."""

    runs: tuple[RunLogs, ...]

    def scores(self, audit: Audit) -> list[float]:
        """Each valid run's score as `audit` compares it (TEST04: summary; TEST01: detail log)."""
        out: list[float] = []
        for r in self.runs:
            if r.problem:
                continue
            try:
                v = summary_score(r.summary) if SPECS[audit].score_log == SUMMARY else detail_score(r.detail)
            except (OSError, ProctorError):
                v = None
            if v is not None:
                out.append(v)
        return out


def judge_spread(audit: Audit, numbers: dict[str, Any], scores: Sequence[float]) -> tuple[bool, str]:
    """(inside, why): is a score that failed the official threshold still inside what run-to-run
    noise explains? The spread s = highest / lowest reference score - 1; the audit run is taken to
    be as noisy as a reference run, so the band is the official one widened by s on both runs:
    TEST04 (faster is the cheat) test < highest x (1 + threshold) x (1 + s); TEST01 (either way)
    also lowest x (1 - threshold) / (1 + s) <= test. Inside: inconclusive; outside: a failure."""
    lo, hi = min(scores), max(scores)
    s = hi / lo - 1
    thr = float(numbers.get("threshold", 0.0))
    test, ref = float(numbers.get("test_score", 0.0)), float(numbers.get("reference_score", 0.0))
    upper = hi * (1 + thr) * (1 + s)
    if SPECS[audit].faster_only:
        inside, band = test < upper, f"below {upper:.6g}"
    else:
        lower = lo * (1 - thr) / (1 + s)
        inside, band = lower <= test <= upper, f"{lower:.6g} to {upper:.6g}"
    why = (
        f"test score {test:.6g} against the reference {ref:.6g}: "
        f"{'inside' if inside else 'outside'} the spread of {len(scores)} reference runs "
        f"({lo:.6g} to {hi:.6g}, {s:.1%}; with the {thr:.0%} threshold: {band})"
    )
    return inside, why


def _score_failure(outcome: AuditOutcome) -> Verdict | None:
    """The performance verdict when it alone failed, on its score (both runs valid): the one
    failure run-to-run noise can cause; None for any other outcome."""
    if SPECS[outcome.audit].score_log is None or outcome.passed or outcome.failures:
        return None
    perf = outcome.verdicts[-1]
    others_pass = all(v.passed for v in outcome.verdicts[:-1])
    return perf if others_pass and not perf.passed and perf.lines[-1] == SCORE_INVALID else None


def _measure_spread(runner: Runner, settings: TestSettings, tree: Tree, first: RunLogs) -> Spread:
    """SPREAD_RUNS - 1 more reference performance runs, beside the audit runs' logs."""
    runs = [first]
    for k in range(2, SPREAD_RUNS + 1):
        folder = tree.out / AUDIT_RUNS / tree.benchmark / tree.scenario / "reference" / f"run_{k}"
        runs.append(_audit_run(runner, _mode(settings, TestMode.PERFORMANCE_ONLY), folder, None)[0])
    return Spread(tuple(runs))


def _audit_run(
    runner: Runner, settings: TestSettings, run_dir: Path, conf: Path | None
) -> tuple[RunLogs, list[str]]:
    """One audit (or spread reference) run; an Offline one that ended before min_duration because the SUT ran faster
    than asked (a caching SUT does, on TEST04's one sample) is sized by its own rate and made
    again, so its score is compared instead of its length failing it ("Test results are invalid")."""
    notes: list[str] = []
    logs = runner(settings, run_dir, conf)
    for _ in range(RESIZES):
        sized = sized_offline(settings, logs)
        if sized is None:
            break
        settings, why = sized
        notes.append(f"audit run {why}")
        logs = runner(settings, run_dir, conf)
    return logs, notes


def run_audits(
    runner: Runner,
    settings: TestSettings,
    model: str,
    tree: Tree,
    audits: Sequence[Audit],
    *,
    test06: TokenOptions | None = None,
) -> list[AuditOutcome]:
    """Reference runs (if needed), then each audit: write audit.config, run, verify, write files.

    A performance comparison that fails the official threshold on its score alone is judged
    against the spread of repeated reference runs (`SPREAD_RUNS`, made then, once, when proctor
    made the reference): outside it, the audit fails; inside it, the result is inconclusive and
    the audit run is made again, up to `PERF_ATTEMPTS` runs; still inconclusive after them, the
    outcome says so (not passed, `inconclusive` holds the reason). With a given results folder
    (no spread to measure) each such run is inconclusive and repeated, and fails after the last."""
    notes, runs, settings = reference_runs(runner, settings, tree, audits)
    spread: Spread | None = None
    outcomes: list[AuditOutcome] = []
    for audit in audits:
        run_dir = tree.run_dir(audit)
        make_dirs(run_dir)
        conf = run_dir / "audit.config"
        replace(conf, audit_config(audit, model).render().encode("utf-8"))
        # a failed run (incomplete, SUT failures, LoadGen errors) fails the audit: its logs prove nothing
        reference_problems = [
            f"reference {name} run: {runs[name].problem}"
            for name in SPECS[audit].references
            if name in runs and runs[name].problem
        ]
        repeats: list[str] = []
        inconclusive = ""
        attempts = PERF_ATTEMPTS if SPECS[audit].score_log is not None else 1
        for attempt in range(1, attempts + 1):
            logs, sized = _audit_run(runner, settings, run_dir, conf)
            repeats += sized
            problems = [*reference_problems, *([f"audit run: {logs.problem}"] if logs.problem else [])]
            outcome = verify_audit(audit, tree, run_dir, test06=test06, problems=problems)
            perf = _score_failure(outcome)
            if perf is None:
                inconclusive = ""
                break
            if spread is None and "performance" in runs:
                spread = _measure_spread(runner, settings, tree, runs["performance"])
            scores = spread.scores(audit) if spread is not None else []
            last = attempt == attempts
            if len(scores) >= 2:
                inside, why = judge_spread(audit, perf.numbers, scores)
                if not inside:  # far outside run-to-run noise: a real difference (a cache, stale answers)
                    repeats.append(f"{audit} attempt {attempt}: {why}: failed")
                    inconclusive = ""
                    break
                inconclusive = f"{audit} {why}: inconclusive after {attempt} audit run(s)"
                repeats.append(
                    f"{audit} attempt {attempt}: {why}: inconclusive, " + ("repeated" if not last else "no more runs")
                )
                continue
            # no spread to judge by: one faster run is inconclusive (noise looks like a cache once);
            # a SUT that caches is faster every time, an honest one only sometimes
            v = perf.numbers
            repeats.append(
                f"{audit} attempt {attempt}: test score {v.get('test_score', 0):.6g} beyond the reference "
                f"{v.get('reference_score', 0):.6g} by more than {v.get('threshold', 0):.0%}: inconclusive, "
                + ("repeated" if not last else f"failed {attempt} of {attempt} attempts")
            )
        if inconclusive:
            outcome.inconclusive = inconclusive
            outcome.verdicts[-1].inconclusive = inconclusive
            outcome.verdicts[-1].notes.append(
                f"INCONCLUSIVE, not a finding against the SUT: {inconclusive}; run the audit again on a "
                "quieter machine (or a longer run: --duration-ms)"
            )
            _write(outcome.folder, "verify_performance.txt", outcome.verdicts[-1])
        outcome.notes = [n for n in notes if n not in problems] + repeats
        if audit_config(audit, model).note:
            outcome.notes.append(audit_config(audit, model).note)
        outcomes.append(outcome)
    return outcomes


__all__ = [
    "RESIZES",
    "RESIZE_MARGIN",
    "AuditOutcome",
    "Layout",
    "RunLogs",
    "Runner",
    "Spread",
    "TokenOptions",
    "Tree",
    "judge_spread",
    "reference_runs",
    "run_audits",
    "sized_offline",
    "verify_audit",
]
