"""`proctor demo`: one benchmark round on the reference workloads, from model to checked result.

The application layer (it uses the engine, a workload and the checkers; no workload depends on it).
Inference: `digits` in Offline, Server and SingleStream (performance and accuracy runs each, and the
TEST01 and TEST04 compliance audits) through proctor's load generator, the accuracy script, then
`proctor submission package` builds the tree and the submission checker checks it. Training:
N runs of `digits_train`, then compliance, seeds, RCP (the shipped reference RCPs) and the olympic
score. Everything lands in one folder, in the official layouts:

    <output>/inference/closed/<submitter>/{systems,src,results}/...  (the current round's layout;
                                         the audits and measurements sit in each result's folder)
    <output>/work/runs/digits/<scenario>/  the runs the tree is packaged from
    <output>/training/<submitter>/{systems,benchmarks,results/<system>/digits_train/result_*.txt}
    <output>/demo_report.json        the final table as data

The default demo is short on purpose (each performance run lasts seconds, not the rules' 600 s), so
the submission checker must report exactly one broken rule per performance result, `min_duration`
(on the result's run and on its audit runs), and nothing else; `--full` uses the rules' durations and
every check passes. Timed verdicts (a Server latency bound, an audit's performance comparison) are
expected as the run itself measured them (`measured_rules`, `_run_audits`). The report says for
each row whether that is what happened (`as_expected`).

The verdict must not depend on machine load (docs/deviations.md, "proctor demo"): each scenario is
sized so that a noisy probe cannot break a rule other than `min_duration` (see `size_inference`).
Ctrl-C stops within a second: the SUT drops its queue, the engine writes the logs marked
incomplete, and `DemoInterrupted` carries where the partial output is.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from proctor.errors import RunError
from proctor.findings import Finding
from proctor.loadgen import output_lock, stop_signals

SUBMITTER = "proctor"
SYSTEM = "local-cpu"
INFERENCE_BENCHMARK = "digits"
SCENARIOS = ("Offline", "Server", "SingleStream")
TRAINING_RULESET = "6.1.0"
DEMO_BASE_SEED = 7  # seeds of the demo's training runs (the RCPs used another stream)
SHORT_RULE = "min_duration"  # the one rule a short demo run breaks
# A failed audit verification: expected only where the audit's own numbers said so (see run_audits).
AUDIT_RULE = "compliance_failed"

# --- sizing: bounds, not estimates -------------------------------------------------------------
PROBES = 3  # Offline probes; the fastest counts (noise only ever slows a probe down)
PROBE_QPS = 100_000  # asked of each probe: enough samples that per-run overheads do not dominate
OFFLINE_OVERASK = 1.5  # Offline asks this x the fastest probe (a short Offline run only adds min_duration)
MIN_OFFLINE_QPS = 1_000.0  # keeps the Offline query above digits' 600-sample minimum in any mode
# SingleStream generates queries until 2 x min_duration at `expected latency` apart, and ends once
# min_duration and min_query_count are met: running out is an error, generating more only costs
# memory. A digits query crosses two thread hand-offs and a numpy call, so it cannot complete in
# under 10 us; generating for 20 us per query (x2 by the official rule) cannot run out.
SS_BOUND_MS = 0.02
SERVER_SHARE = 0.05  # Server asks 5% of the fastest probe's capacity ...
MIN_SERVER_QPS = 250.0  # ... but at least this (early stopping at p99 needs ~500+ queries)
CLOSE_TIMEOUT_S = 0.5  # per batcher worker, once the run has ended or was interrupted


@dataclass(frozen=True, slots=True)
class Durations:
    """How long each performance run lasts (ms) and how hard it is driven."""

    min_duration_ms: int | None  # None: the rules' value from mlperf.conf
    server_min_duration_ms: int | None  # Server needs thousands of queries for early stopping at p99
    server_qps_cap: float
    probe_ms: int
    ss_bound_ms: float = SS_BOUND_MS  # 600 s at 20 us would generate 60M queries: full uses more

    def for_scenario(self, scenario: str) -> int | None:
        return self.server_min_duration_ms if scenario == "Server" else self.min_duration_ms


DEFAULT = Durations(
    min_duration_ms=15_000, server_min_duration_ms=15_000, server_qps_cap=1000.0, probe_ms=200
)
QUICK = Durations(min_duration_ms=1_000, server_min_duration_ms=4_000, server_qps_cap=1000.0, probe_ms=200)
FULL = Durations(
    min_duration_ms=None, server_min_duration_ms=None, server_qps_cap=1500.0, probe_ms=1_000, ss_bound_ms=0.04
)
# Python's default 5 ms GIL switch interval alone can push a Server query past digits' 10 ms bound
# when threads contend; the SUT is tuned for latency as a submitter would tune theirs.
SWITCH_INTERVAL_S = 0.0002


@dataclass(frozen=True, slots=True)
class DemoOptions:
    output: Path = Path("proctor-demo")
    full: bool = False
    quick: bool = False
    training_runs: int | None = None
    backend: str = "sklearn"
    base_seed: int = DEMO_BASE_SEED
    batch_size: int | None = None
    inference: bool = True
    training: bool = True

    @property
    def durations(self) -> Durations:
        return FULL if self.full else (QUICK if self.quick else DEFAULT)

    @property
    def audit_durations(self) -> Durations:
        """The audit runs: the rules' durations in --full, else the quick demo's (a few seconds)."""
        return FULL if self.full else QUICK

    @property
    def mode(self) -> str:
        return "full" if self.full else ("quick" if self.quick else "demo")


@dataclass(slots=True)
class Sizing:
    """The load each scenario is asked for, and a sentence per scenario saying how it was chosen."""

    offline_qps: float
    server_qps: float
    single_stream_ms: float
    probes_qps: tuple[float, ...] = ()
    notes: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class Row:
    """One line of the final table: a result, its validity, why, and the rules it broke."""

    part: str  # inference | training
    item: str  # what was measured or checked
    result: str  # the value, with its unit
    valid: bool
    why: str  # the findings that decide `valid`, or what passed
    value: float | None = None
    rules: tuple[str, ...] = ()  # ids of the failed rules
    expected_rules: tuple[str, ...] = ()  # what a correct run of this length must break

    @property
    def as_expected(self) -> bool:
        return self.valid == (not self.expected_rules) and self.rules == self.expected_rules


@dataclass(slots=True)
class DemoReport:
    output: Path
    mode: str
    rows: list[Row] = field(default_factory=list)
    timings_s: dict[str, float] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    sizing: dict[str, str] = field(default_factory=dict)  # scenario -> how its load was chosen
    # scenario -> rules its own measurements break besides the short duration (a loaded machine)
    measured_rules: dict[str, tuple[str, ...]] = field(default_factory=dict)
    audits: dict[str, str] = field(default_factory=dict)  # scenario -> each audit's verdict and numbers
    interrupted: bool = False
    check_commands: list[str] = field(default_factory=list)  # CLI lines that re-check the output
    not_submittable: str = ""  # why the inference tree is for development only (proctor's engine wrote it)

    @property
    def as_expected(self) -> bool:
        return not self.interrupted and bool(self.rows) and all(r.as_expected for r in self.rows)

    def to_dict(self) -> dict[str, Any]:
        return {
            "output": str(self.output),
            "mode": self.mode,
            "as_expected": self.as_expected,
            "interrupted": self.interrupted,
            "timings_s": self.timings_s,
            "sizing": self.sizing,
            "measured_rules": {k: list(v) for k, v in self.measured_rules.items()},
            "audits": self.audits,
            "check_commands": self.check_commands,
            "not_submittable": self.not_submittable,
            "rows": [{**asdict(r), "rules": list(r.rules), "as_expected": r.as_expected} for r in self.rows],
        }


class DemoInterrupted(KeyboardInterrupt):
    """Ctrl-C during the demo: what was measured is on disk under `output` (logs marked incomplete)."""

    def __init__(self, output: Path, report: DemoReport) -> None:
        super().__init__(f"demo interrupted; partial output in {output}")
        self.output, self.report = output, report


Echo = Callable[[str], None]


def _quiet(_msg: str) -> None:
    pass


# --- Ctrl-C --------------------------------------------------------------------------------------
class StopFlag:
    """Set on the first Ctrl-C: SUT backends stop computing, so nothing drains for long."""

    def __init__(self) -> None:
        self.event = threading.Event()

    @property
    def is_set(self) -> bool:
        return self.event.is_set()


@contextmanager
def interruptible(stop: StopFlag) -> Iterator[None]:
    """For the demo's duration: the first stop signal (Ctrl-C; SIGTERM or SIGHUP where the process
    handles them, stop_signals.install) sets `stop` and raises its KeyboardInterrupt in the main
    thread (once); a second one exits at once with 128 + the signal. Outside the main thread: no-op."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        if stop.is_set:
            os.write(2, b"\ninterrupted again: exiting now\n")
            os._exit(128 + signum)
        stop.event.set()
        raise stop_signals.interruption(signum)

    previous = {
        sig: signal.signal(sig, handler) for sig in stop_signals.STOP_SIGNALS if callable(signal.getsignal(sig))
    }
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


class _StoppableBackend:
    """Wraps the SUT's backend: once `stop` is set, batches complete at once (the run is over and
    its completions are dropped), so closing the batcher does not wait for a queued Offline query."""

    def __init__(self, inner: Any, stop: StopFlag) -> None:
        self.inner, self.stop = inner, stop

    @property
    def name(self) -> str:
        return str(self.inner.name)

    def predict(self, x: np.ndarray) -> np.ndarray:
        if self.stop.is_set:
            return np.zeros(len(x), np.int32)
        return np.asarray(self.inner.predict(x))


def _check_stop(stop: StopFlag) -> None:
    """Between phases: a Ctrl-C that landed inside a thread or C call still stops the demo."""
    if stop.is_set:
        raise KeyboardInterrupt


# --- system description ------------------------------------------------------------------------
def system_description(*, division: str, status: str, framework: str) -> dict[str, Any]:
    """This machine's description (submission.describe) under the demo's submitter and system name:
    the digits workloads run on the CPU in one process, and what the demo cannot read says so."""
    from proctor.submission.describe import this_machine, unfilled

    desc = this_machine(submitter=SUBMITTER, system_name=SYSTEM, division=division, status=status,
                        framework=framework, notes="proctor demo", accelerators=0)
    desc |= {"system_type_detail": "this machine, as the demo found it",
             "host_networking": "none used (the demo's SUT runs in its process)",
             "host_networking_topology": "none used (the demo's SUT runs in its process)"}
    return desc | dict.fromkeys(unfilled(desc), "not read by the demo")


def training_system_description(*, framework: str) -> dict[str, str]:
    """The training package's systems/<system>.json: the fields the training checkers require, each
    as text (the official package checker fails on a count written as a number), as `proctor
    training init` writes them; what the demo cannot read says so."""
    from proctor.submission.training_package import system_template

    desc = system_template(submitter=SUBMITTER, system_name=SYSTEM, division="closed",
                           status="Available on-premise", framework=framework)
    demo = system_description(division="closed", status="Available on-premise", framework=framework)
    return {k: v if v.strip() else str(demo.get(k) or "not read by the demo") for k, v in desc.items()}


def _write_json(path: Path, obj: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps(obj, option=orjson.OPT_INDENT_2) + b"\n")


# --- inference ---------------------------------------------------------------------------------
def _inference_settings(
    scenario: str, mode: str, min_duration_ms: int | None, sizing: Sizing, *, user_conf: Path
) -> Any:
    """The run's TestSettings: mlperf.conf plus the demo's user.conf (written where a submission
    keeps it). The one place the demo builds settings."""
    from proctor.loadgen.resolve import Confs, resolve_settings
    from proctor.loadgen.types import TestMode

    lines = [
        f"*.Offline.target_qps = {sizing.offline_qps:.0f}",
        f"*.Server.target_qps = {sizing.server_qps:.0f}",
        f"*.SingleStream.target_latency = {sizing.single_stream_ms:.4g}",
    ]
    if min_duration_ms is not None:  # the demo's one departure from the rules: shorter runs
        lines.append(f"*.*.min_duration = {min_duration_ms}")
    user_conf.parent.mkdir(parents=True, exist_ok=True)
    user_conf.write_text(
        "# proctor demo: "
        + (
            "the rules' durations\n"
            if min_duration_ms is None
            else f"short runs ({min_duration_ms} ms) suited to a demo, NOT the rules' 600 s\n"
        )
        + "".join(f"# {s}: {note}\n" for s, note in sizing.notes.items())
        + "\n".join(lines)
        + "\n"
    )
    run_mode = TestMode.ACCURACY_ONLY if mode == "accuracy" else TestMode.PERFORMANCE_ONLY
    # the one settings pipeline (loadgen/resolve.py); digits is proctor's workload, not in mlperf.conf
    return resolve_settings(
        INFERENCE_BENCHMARK, scenario, run_mode, Confs(user_conf=user_conf), check_model=False
    ).settings


def _run_one(
    scenario: str, mode: str, outdir: Path, settings: Any, stop: StopFlag, audit_config: Path | None = None
) -> Any:
    from proctor.app.session import run
    from proctor.loadgen.resolve import Confs, resolve_settings, short_run_reason
    from proctor.loadgen.settings import LogOutputSettings, LogSettings
    from proctor.workloads.digits.sut import from_params

    # a run shorter than the rules' is marked as `proctor run` marks it, so its logs, report.html and
    # the checker give the one verdict: valid for these settings, not a submission run
    rules = resolve_settings(INFERENCE_BENCHMARK, scenario, settings.mode, Confs(), check_model=False).rules
    short_run = short_run_reason(settings, rules)
    outdir.mkdir(parents=True, exist_ok=True)
    sut, qsl = from_params(backend="numpy", precision="fp32")
    sut.backend = _StoppableBackend(sut.backend, stop)
    log = LogSettings(log_output=LogOutputSettings(outdir=str(outdir)), enable_trace=False)
    outcome = None
    try:
        try:
            outcome = run(sut, qsl, settings, log, audit_config=audit_config, close=False, short_run=short_run)
            return outcome
        except BaseException:
            stop.event.set()  # the run is over: drop what the batcher still holds
            raise
        finally:
            try:
                # raises the batcher's first processing error, if any; bounded when the run failed
                sut.batcher.close(timeout=CLOSE_TIMEOUT_S if stop.is_set else 10.0)
            except RunError:
                # after an incomplete run the QSL is unloaded under the batches still queued: their
                # failures follow from the run's own reason, which the outcome carries; never mask it
                if outcome is None or not outcome.incomplete:
                    raise
    except RunError as exc:
        raise RunError(f"{INFERENCE_BENCHMARK} {scenario} {mode} run (logs in {outdir}): {exc}") from exc


def _probe_offline(work: Path, probe_ms: int, stop: StopFlag, echo: Echo) -> tuple[float, ...]:
    """Samples/s of PROBES short Offline runs (a submitter's first measurement)."""
    sizing = Sizing(PROBE_QPS, MIN_SERVER_QPS, 1.0)
    got = []
    for i in range(PROBES):
        _check_stop(stop)
        echo(f"probing Offline throughput ({i + 1}/{PROBES}) ...")
        settings = _inference_settings(
            "Offline", "performance", probe_ms, sizing, user_conf=work / "probe" / "user.conf"
        )
        out = _run_one("Offline", "performance", work / "probe", settings, stop)
        got.append(float(getattr(out.result, "samples_per_second", 0.0) or 0.0))
    return tuple(got)


def size_inference(probes_qps: tuple[float, ...], d: Durations) -> Sizing:
    """Each scenario's load from the fastest probe, chosen so that probe noise cannot change a verdict.

    Offline: 1.5 x the fastest probe; a machine faster than that only shortens the run, which breaks
    `min_duration` and nothing else (the demo's runs are short anyway). SingleStream: queries are
    generated for a fixed bound per query (SS_BOUND_MS), below any digits query, so the schedule
    cannot run out whatever the probe said. Server: 5% of the fastest probe, within [250, cap] qps:
    far below capacity, so a loaded machine still meets the 10 ms p99 (and a miss reruns lower).
    """
    fastest = max(probes_qps, default=0.0)
    offline = max(OFFLINE_OVERASK * fastest, MIN_OFFLINE_QPS)
    server = min(max(SERVER_SHARE * fastest, MIN_SERVER_QPS), d.server_qps_cap)
    probes = ", ".join(f"{q:,.0f}" for q in probes_qps) or "none"
    return Sizing(
        offline_qps=offline,
        server_qps=server,
        single_stream_ms=d.ss_bound_ms,
        probes_qps=probes_qps,
        notes={
            "Offline": f"asks {offline:,.0f} samples/s = {OFFLINE_OVERASK:g} x the fastest of "
            f"{len(probes_qps)} probes ({probes} samples/s)",
            "Server": f"{server:,.0f} qps = {SERVER_SHARE:.0%} of the fastest probe, within "
            f"[{MIN_SERVER_QPS:g}, {d.server_qps_cap:g}]",
            "SingleStream": f"queries generated for {d.ss_bound_ms * 1000:g} us each, a bound below any "
            "digits query (not an estimate)",
        },
    )


def measured_rules(result: Any) -> tuple[tuple[str, ...], str]:
    """The rules a performance run's own measurements break, as the engine measured them, and why.

    Latency and early stopping are timing results: on a busy machine a p99 can miss 10 ms however
    low the load (the OS does not schedule the SUT's threads in time). The demo expects the checker
    to report exactly what was measured, so "as expected" does not depend on machine load; the row
    itself still says INVALID.
    """
    if result is None:
        return (), ""
    rules, why = set(), []
    if not result.min_duration_met:
        rules.add(SHORT_RULE)
        why.append("the run ended before its min_duration")
    if not result.min_queries_met:
        rules.add("min_queries")
        why.append("too few queries")
    if result.has_perf_constraints and not result.perf_constraints_met:
        rules.add("latency_limit")
        why.append(f"measured p{result.target_percentile * 100:g} {result.samples.target / 1e6:.2f} ms over the bound")
    if not result.early_stopping_met:
        rules.add("early_stopping")
        why.append("early stopping not met")
    return tuple(sorted(rules)), "; ".join(why)


def _accuracy_text(accuracy_json: Path) -> str:
    from proctor.workloads.digits.accuracy import evaluate

    return evaluate(accuracy_json).line() + "\n"  # what the accuracy script prints


def _write_side_files(runs: Path, system_json: Path) -> None:
    """What `proctor submission package` takes besides the logs: system, README, measurements."""
    _write_json(
        system_json,
        system_description(division="closed", status="available", framework="numpy (proctor digits SUT)"),
    )
    runs.mkdir(parents=True, exist_ok=True)
    (runs / "README.md").write_text(
        "The SUT is proctor's `digits` reference workload (src/proctor/workloads/digits), numpy backend;\n"
        "`proctor demo` ran each scenario with the user.conf beside its results.\n"
    )
    _write_json(
        runs / "measurements.json",
        {
            "input_data_types": "fp32",
            "retraining": "no",
            "starting_weights_filename": "weights_fp32.npz",
            "weight_data_types": "fp32",
            "weight_transformations": "none",
        },
    )


def _audit_runner(scenario: str, stop: StopFlag) -> Any:
    """proctor.audits.run's Runner on the demo's digits SUT (Ctrl-C stops it like the other runs)."""
    from proctor.app.session import run_logs
    from proctor.audits.run import RunLogs

    def run(settings: Any, outdir: Path, conf: Path | None) -> RunLogs:
        _check_stop(stop)
        out = _run_one(scenario, "audit", outdir, settings, stop, audit_config=conf)
        (outdir / "mlperf_log_trace.json").unlink(missing_ok=True)
        (outdir / "mlperf_log_samples.bin").unlink(missing_ok=True)  # proctor's own, not a submission file
        return run_logs(out)

    return run


def _run_audits(
    scenario: str, scen: Path, work: Path, sizing: Sizing, opts: DemoOptions, report: DemoReport, stop: StopFlag
) -> None:
    """TEST01 and TEST04 against this scenario's runs, written into its runs folder.

    The audits' performance comparisons (TEST01: within 10 % of the reference; TEST04: the repeated
    sample not more than 10 % faster) are two timed runs: a loaded machine can tip one. The demo
    expects from the checker exactly what each verification measured, as for the latency rows, so
    "as expected" does not depend on load; a failed verification still shows as INVALID with its
    numbers. The audit runs are short (the quick demo's durations unless --full): the checker
    compares their scores, not their length.
    """
    from proctor.audits.configs import required_audits
    from proctor.audits.run import Layout, Tree, run_audits

    d = opts.audit_durations
    conf = work / "audit_conf" / scenario / "user.conf"  # the result's user.conf stays untouched
    settings = _inference_settings(scenario, "performance", d.for_scenario(scenario), sizing, user_conf=conf)
    tree = Tree(work / "audits", SYSTEM, INFERENCE_BENCHMARK, scenario, Layout.RESULTS, results=scen, audits=scen)
    audits = required_audits(INFERENCE_BENCHMARK)
    outcomes = run_audits(_audit_runner(scenario, stop), settings, INFERENCE_BENCHMARK, tree, audits)
    notes = []
    for o in outcomes:
        nums = ", ".join(
            f"{k} {x:.4g}"
            for verdict in o.verdicts
            for k, x in verdict.numbers.items()
            if k.endswith("score") and isinstance(x, float)
        )
        notes.append(f"{o.audit} {'PASS' if o.passed else 'FAIL'}" + (f" ({nums})" if nums else ""))
        if o.audit == "TEST01":  # the accuracy script on the audit's log, so it is truncated with its hash
            acc = o.folder / "accuracy"
            (acc / "accuracy.txt").write_text(_accuracy_text(acc / "mlperf_log_accuracy.json"))
    failed = [o for o in outcomes if not o.passed]
    if failed:
        report.measured_rules[scenario] = tuple(sorted({*report.measured_rules.get(scenario, ()), AUDIT_RULE}))
    report.audits[scenario] = "; ".join(notes) + (
        f" (the checker must report {AUDIT_RULE} for {', '.join(str(o.audit) for o in failed)})" if failed else ""
    )


def _run_scenarios(
    opts: DemoOptions, runs: Path, work: Path, echo: Echo, report: DemoReport, stop: StopFlag
) -> None:
    """A performance and an accuracy run per scenario, sized by `size_inference`, then its audits."""
    d = opts.durations
    t0 = time.perf_counter()
    sizing = size_inference(_probe_offline(work, d.probe_ms, stop, echo), d)
    report.sizing.update(sizing.notes)
    report.timings_s["inference_probe"] = time.perf_counter() - t0
    for scenario in SCENARIOS:
        scen = runs / INFERENCE_BENCHMARK / scenario
        user_conf = scen / "user.conf"
        for mode in ("performance", "accuracy"):
            t0 = time.perf_counter()
            out_dir = scen / "performance" / "run_1" if mode == "performance" else scen / "accuracy"
            _check_stop(stop)
            settings = _inference_settings(scenario, mode, d.for_scenario(scenario), sizing, user_conf=user_conf)
            echo(f"inference {INFERENCE_BENCHMARK} {scenario} {mode} ...")
            out = _run_one(scenario, mode, out_dir, settings, stop)
            if mode == "performance":
                rules, why = measured_rules(out.result)
                report.measured_rules[scenario] = rules
                if why:
                    report.sizing[scenario] += f"; this run: {why} (the checker must say so too)"
            # not part of a submission's result folders
            (out_dir / "mlperf_log_trace.json").unlink(missing_ok=True)
            (out_dir / "mlperf_log_samples.bin").unlink(missing_ok=True)
            if mode == "performance":
                (out_dir / "mlperf_log_accuracy.json").unlink(missing_ok=True)
            else:
                (out_dir / "accuracy.txt").write_text(_accuracy_text(out_dir / "mlperf_log_accuracy.json"))
            report.timings_s[f"inference_{scenario}_{mode}"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        _check_stop(stop)
        echo(f"inference {INFERENCE_BENCHMARK} {scenario} audits (TEST01, TEST04) ...")
        _run_audits(scenario, scen, work, sizing, opts, report, stop)
        report.timings_s[f"inference_{scenario}_audits"] = time.perf_counter() - t0


def _under(path: str | None, folder: str) -> bool:
    return path is not None and Path(path).is_relative_to(folder)


def _checker_rows(opts: DemoOptions, root: Path, work: Path, report: DemoReport) -> None:
    """One row per result the submission checker read, one for everything else it found."""
    from proctor.checks.loadgen_origin import UNOFFICIAL, unofficial_verdict
    from proctor.checks.submission import check_submission

    t0 = time.perf_counter()
    # proctor's engine wrote the demo's logs: checked as for development (each log's unofficial_loadgen
    # finding a warning), and the verdict says the tree is not submittable
    sr = check_submission(root, allow_unofficial_loadgen=True)
    report.timings_s["inference_checker"] = time.perf_counter() - t0
    report.findings.extend(sr.findings)
    if sr.unofficial_logs:
        report.not_submittable = unofficial_verdict(sr.unofficial_logs, True)
    _write_json(work / "submission_check.json", sr.to_dict())
    short = (SHORT_RULE,) if opts.durations.min_duration_ms is not None else ()
    for res in sr.results:
        expected = tuple(sorted(set(short) | set(report.measured_rules.get(str(res.scenario), ()))))
        mine = [f for f in sr.findings if f.failed and _under(f.path, res.path)]
        unit = f" {res.units}" if res.units else ""
        report.rows.append(
            Row(
                "inference",
                f"{res.benchmark} {res.scenario} ({res.metric})",
                "-" if res.value is None else f"{res.value:,.5g}{unit}",
                res.valid,
                "; ".join(sorted({f"{f.rule}: {f.message}" for f in mine})) or "every check passed",
                res.value,
                tuple(sorted({f.rule for f in mine})),
                expected,
            )
        )
    rest = [
        f
        for f in sr.findings
        if (not f.failed and f.rule != UNOFFICIAL) or (f.failed and not any(_under(f.path, r.path) for r in sr.results))
    ]
    errors = sum(f.failed for f in rest)
    report.rows.append(
        Row(
            "inference",
            "submission checker: layout, systems",
            f"{errors} errors, {len(rest) - errors} warnings",
            not rest,
            "; ".join(f"{f.severity.value} {f.rule}: {f.message}" for f in rest)
            or "layout and system description pass; no warnings",
            float(len(rest)),
            tuple(sorted({f.rule for f in rest})),
        )
    )


def _inference(
    opts: DemoOptions, root: Path, work: Path, echo: Echo, report: DemoReport, stop: StopFlag
) -> None:
    from proctor.rules.rounds import CURRENT_ROUND
    from proctor.submission.package import package

    runs, system_json = work / "runs", work / f"{SYSTEM}.json"
    _write_side_files(runs, system_json)
    _run_scenarios(opts, runs, work, echo, report, stop)
    _check_stop(stop)
    echo("inference submission package ...")
    # the official layout; the accuracy logs truncated with their hashes
    package(runs, root, submitter=SUBMITTER, system_json=system_json, division="closed", version=CURRENT_ROUND)
    sub = root / "closed" / SUBMITTER
    echo("inference submission checker ...")
    _checker_rows(opts, root, work, report)
    report.rows.extend(_accuracy_rows(sub))


def _accuracy_rows(sub: Path) -> list[Row]:
    from proctor.checks.accuracy import parse_accuracy_text
    from proctor.workloads.digits import ACCURACY_TARGETS, QUALITY_FRACTIONS, REFERENCE_ACCURACY

    rows = []
    path = sub / "results" / SYSTEM / INFERENCE_BENCHMARK / "Offline" / "accuracy" / "accuracy.txt"
    got = parse_accuracy_text(path.read_text()) if path.is_file() else {}
    value = got.get("accuracy")
    for frac in QUALITY_FRACTIONS:
        target = ACCURACY_TARGETS[frac]
        ok = value is not None and value >= target
        rows.append(
            Row(
                "inference",
                f"digits accuracy vs {frac * 100:g}% of FP32 ({REFERENCE_ACCURACY}%)",
                "-" if value is None else f"{value:.3f}%",
                ok,
                f"{value}% {'>=' if ok else '<'} target {target:.3f}%",
                value,
                () if ok else ("accuracy",),
            )
        )
    return rows


# --- training ----------------------------------------------------------------------------------
def _training(
    opts: DemoOptions, root: Path, work: Path, echo: Echo, report: DemoReport, stop: StopFlag
) -> None:
    from proctor.training.compliance import check_file
    from proctor.training.package import check_package
    from proctor.training.rcp import check_rcp
    from proctor.training.runs import read_run_set
    from proctor.training.scoring import score_run_set
    from proctor.training.seeds import check_seeds
    from proctor.workloads.digits_train import BENCHMARK, DEFAULT_BATCH_SIZE, RUNS_PER_SUBMISSION
    from proctor.workloads.digits_train.spec import training_benchmark
    from proctor.workloads.digits_train.train import run_seeds, train_run

    n = opts.training_runs or RUNS_PER_SUBMISSION
    declared = training_benchmark(TRAINING_RULESET)
    if declared is None:
        raise RunError(f"{BENCHMARK} declares no tables for ruleset {TRAINING_RULESET}")
    # the checks below take digits_train as its entry point declares it, with N = the runs made here
    bench = [replace(declared, runs_required=n)]
    bs = opts.batch_size or DEFAULT_BATCH_SIZE
    sub = root / SUBMITTER
    _write_json(
        sub / "systems" / f"{SYSTEM}.json",
        training_system_description(framework=f"{opts.backend} (proctor digits_train)"),
    )
    (sub / "benchmarks" / BENCHMARK).mkdir(parents=True, exist_ok=True)
    (sub / "benchmarks" / BENCHMARK / "README.md").write_text(
        "The reference implementation: src/proctor/workloads/digits_train (proctor training train).\n"
    )
    bdir = sub / "results" / SYSTEM / BENCHMARK
    bdir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    for i, seed in enumerate(run_seeds(n, opts.base_seed)):
        _check_stop(stop)
        echo(f"training {BENCHMARK} run {i + 1}/{n} (seed {seed}) ...")
        path = bdir / f"result_{i}.txt"
        r = train_run(path, seed=seed, batch_size=bs, backend=opts.backend)
        rep = check_file(r.path or path)
        fails = [f for f in rep.findings if f.failed]
        why = (
            "complies with ruleset 6.1.0; "
            if rep.valid
            else "; ".join(f"{f.key}: {f.message}" for f in fails) + "; "
        ) + f"{r.status}, {r.samples_to_converge or '-'} samples to converge, seed {seed}"
        report.rows.append(
            Row(
                "training",
                f"{BENCHMARK} result_{i}.txt",
                f"{r.seconds:.2f} s, acc {r.accuracy:.4f}",
                rep.valid and r.status == "success",
                why,
                r.seconds,
                tuple(sorted({f.rule for f in fails} | ({"converged"} if r.status != "success" else set()))),
            )
        )
    report.timings_s["training_runs"] = time.perf_counter() - t0
    _check_stop(stop)

    t0 = time.perf_counter()
    seeds = check_seeds(bdir)
    bad = [f for f in seeds if f.failed]
    report.rows.append(
        Row(
            "training",
            "seed check",
            f"{n} runs, {len(bad)} problems",
            not bad,
            "; ".join(f.message for f in bad) or "every run logs one seed; none repeats",
            float(len(bad)),
            tuple(sorted({f.rule for f in bad})),
        )
    )
    rcp = check_rcp(bdir, TRAINING_RULESET, set_scaling=True, extra_benchmarks=bench)
    rs_text = (
        f"mean {rcp.submission_mean:,.0f} vs min {rcp.min_allowed:,.0f} samples"
        if rcp.min_allowed is not None and rcp.submission_mean is not None
        else rcp.message
    )
    report.rows.append(
        Row(
            "training",
            f"RCP check (BS {bs}, shipped RCPs)",
            rs_text,
            rcp.passed,
            f"{rcp.message}; scaling factor {rcp.scaling_factor or 1.0:.4f}",
            rcp.submission_mean,
            () if rcp.passed else ("rcp",),
        )
    )
    score = score_run_set(
        read_run_set(bdir, ruleset=TRAINING_RULESET),
        runs_required=n,
        compliance=lambda p: check_file(p).valid,
    )
    why = "; ".join(f.message for f in score.findings if f.failed) or (
        f"olympic mean of {n - 2} runs (dropped {', '.join(score.dropped)})"
    )
    report.rows.append(
        Row(
            "training",
            f"{BENCHMARK} olympic score",
            "-" if score.score_minutes is None else f"{score.score_minutes * 60:.3f} s",
            score.valid,
            why,
            score.score_minutes,
            () if score.valid else ("score",),
        )
    )
    pkg = check_package(sub, TRAINING_RULESET, extra_benchmarks=bench)
    _write_json(work / "training_package_check.json", pkg.to_dict())
    noted = [f for f in pkg.findings if f.severity.value != "info"]
    report.rows.append(
        Row(
            "training",
            "package checker (systems, run count, compliance, seeds, RCP)",
            f"{len(pkg.checked)} benchmark folder(s), {len(noted)} findings",
            pkg.valid and not noted,
            "; ".join(f"{f.severity.value} {f.rule}: {f.message}" for f in noted)
            or "the package passes every check",
            float(len(noted)),
            tuple(sorted({f.rule for f in noted})),
        )
    )
    report.timings_s["training_checks"] = time.perf_counter() - t0
    report.check_commands.extend(training_check_commands(sub, bdir, n if n != RUNS_PER_SUBMISSION else None))


def training_check_commands(package: Path, bdir: Path, runs: int | None = None) -> list[str]:
    """The CLI commands that re-check the demo's training output as the demo checked it.

    digits_train's tables, N and RCPs come from its entry point, so no option is needed; `runs` (a
    run count other than the benchmark's N, `--training-runs`) adds the one override that says so.
    """
    from proctor.workloads.digits_train import BENCHMARK

    override = f" --extra-benchmark {BENCHMARK}={runs}" if runs is not None else ""
    return [
        f"proctor training check-log {shlex.quote(str(bdir))}/result_*.txt",
        f"proctor training check-rcp {shlex.quote(str(bdir))}{override}",
        f"proctor training check-package {shlex.quote(str(package))}{override}",
    ]


# --- the job -----------------------------------------------------------------------------------
def run_demo(opts: DemoOptions, echo: Echo | None = None) -> DemoReport:
    """Run the whole round into `opts.output` (emptied first, owned while the demo runs: a second
    demo or run into it is refused, loadgen/output_lock.py) and return its table.

    Ctrl-C or SIGTERM (in the main thread) raises DemoInterrupted within a second, after the report
    of what was measured so far is written (`interrupted: true`)."""
    with output_lock.owned(opts.output, "proctor demo") as out:
        for old in sorted(out.iterdir()):  # emptied, but for the lock this process now holds
            if old.name == output_lock.LOCK_NAME:
                continue
            if old.is_dir() and not old.is_symlink():
                shutil.rmtree(old)
            else:
                old.unlink()
        return _run_demo(opts, echo)


def _run_demo(opts: DemoOptions, echo: Echo | None) -> DemoReport:
    say = echo or _quiet
    out = opts.output
    work = out / "work"
    report = DemoReport(out, opts.mode)
    stop = StopFlag()
    t0 = time.perf_counter()
    try:
        with interruptible(stop):
            if opts.inference:
                previous = sys.getswitchinterval()
                sys.setswitchinterval(SWITCH_INTERVAL_S)
                try:
                    _inference(opts, out / "inference", work, say, report, stop)
                finally:
                    sys.setswitchinterval(previous)
            if opts.training:
                _check_stop(stop)
                _training(opts, out / "training", work, say, report, stop)
            _check_stop(stop)
    except KeyboardInterrupt as exc:
        stop.event.set()
        report.interrupted = True
        report.timings_s["total"] = time.perf_counter() - t0
        _write_json(out / "demo_report.json", report.to_dict())
        raise DemoInterrupted(out, report) from exc
    report.timings_s["total"] = time.perf_counter() - t0
    _write_json(out / "demo_report.json", report.to_dict())
    _html_report(out, say)
    return report


# --- the HTML report of every run (issue 15) -------------------------------------------------
def _html_report(out: Path, say: Echo) -> None:
    """`<output>/report.html`: plots and verdicts of the demo's inference and training runs."""
    from proctor.errors import ProctorError
    from proctor.report import build_report, write_report

    roots = [p for p in (out / "inference", out / "training") if p.is_dir()]
    try:
        if roots:
            write_report(build_report(roots), out / "report.html")
    except (ProctorError, OSError) as exc:
        say(f"report.html not written: {exc}")


WIDE = 150  # columns from which the table holds each row's "why"; narrower, it goes under the table


def render_table(report: DemoReport, width: int | None = None) -> Any:
    """The closing table: one row per result with its validity (and, when `width` allows, why);
    values are never cut."""
    from proctor.app.render import table

    wide = width is None or width >= WIDE
    headers = ("part", "what", "result", "valid", *(("why",) if wide else ()))
    t = table(*headers, title=f"proctor demo ({report.mode})", labels=(1, 4) if wide else (1,))
    for k, r in enumerate(report.rows, 1):
        mark = "[green]valid[/green]" if r.valid else "[red]INVALID[/red]"
        if not r.as_expected:
            mark += " [yellow](unexpected)[/yellow]"
        if wide:
            t.add_row(r.part, r.item, r.result, mark, r.why)
        else:
            t.add_row(r.part, r.item, r.result, mark + (f" [{k}]" if r.why else ""))
    return t


def why_notes(report: DemoReport, width: int | None = None) -> list[tuple[int, str]]:
    """(row number, why) printed under a table too narrow to hold them."""
    if width is None or width >= WIDE:
        return []
    return [(k, r.why) for k, r in enumerate(report.rows, 1) if r.why]


def closing_lines(report: DemoReport) -> list[str]:
    """What follows the table: how each scenario was sized, then the verdict and the time."""
    lines = [f"sized: {scenario}: {note}" for scenario, note in report.sizing.items()]
    lines += [
        f"audits: {scenario}: {note} (expected: what the verification measured)"
        for scenario, note in report.audits.items()
    ]
    if report.not_submittable:
        lines.append(f"inference tree: {report.not_submittable}")
    lines.append(verdict_line(report))
    return lines


# Why a demo row may break a rule other than the short duration: each is a timing result measured by
# the row's own run (measured_rules, _run_audits), named in the verdict line so it never says "only
# min_duration" over a table that shows more.
RULE_CAUSES = {
    "latency_limit": "latency over the bound as this run measured it (machine load)",
    "early_stopping": "early stopping not met as this run measured it (machine load)",
    "min_queries": "too few queries as this run measured them",
    AUDIT_RULE: "an audit's timed comparison failed as its verification measured it, noise between two "
    "timed runs; see audits above",
}


def verdict_line(report: DemoReport) -> str:
    """The demo's last line, computed from its rows: as expected or not, and every failed rule beyond
    the short runs' min_duration named with its row and cause; never "only min_duration" over a table
    with other failures."""
    total = f"total {report.timings_s.get('total', 0.0):.1f} s"
    if report.interrupted:
        return f"NOT as expected: interrupted; {total}"
    if not report.as_expected:
        off = [r for r in report.rows if not r.as_expected]
        what = ", ".join(
            f"{r.item} (broke {', '.join(r.rules) or 'nothing'}; expected {', '.join(r.expected_rules) or 'nothing'})"
            for r in off
        )
        return f"NOT as expected: {what or 'no rows'}; {total}"
    parts = ["as expected", total]
    short = [r for r in report.rows if SHORT_RULE in r.rules]
    if report.mode != "full":
        parts.append(
            f"short runs: min_duration fails by design ({len(short)} row(s))" if short else "short runs"
        )
    others = [(r, [rule for rule in r.rules if rule != SHORT_RULE]) for r in report.rows if not r.valid]
    others = [(r, rules) for r, rules in others if rules]
    if not others:
        if report.mode != "full":
            parts[-1] += "; nothing else failed"
        return "; ".join(parts)
    parts.append(
        f"{len(others)} row(s) also failed other rules, each as its own run measured: "
        + "; ".join(
            f"{r.item}: " + ", ".join(f"{rule} ({RULE_CAUSES.get(rule, 'see the table')})" for rule in rules)
            for r, rules in others
        )
    )
    return "; ".join(parts)


def output_paths(report: DemoReport) -> list[tuple[str, str]]:
    """(name, path) printed in full under the table."""
    out = report.output
    return [
        ("output", str(out)),
        ("report", str(out / "demo_report.json")),
        *([("html report", str(out / "report.html"))] if (out / "report.html").is_file() else []),
        ("inference submission", str(out / "inference" / "closed" / SUBMITTER)),
        ("training submission", str(out / "training" / SUBMITTER)),
        *(("check", cmd) for cmd in report.check_commands),
    ]
