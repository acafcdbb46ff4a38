"""One run of the load generator, in the official StartTest order (official-loadgen.md §1).

open the four logs -> version, SUT and QSL info -> audit.config -> (test05) -> requested_* ->
normalize -> effective_* -> per mode: loadable sets, load, generate the schedule (before the clock
starts), issue, wait for completion, unload -> summarize -> detail results, summary, accuracy and
trace files.

Faults keep what was measured: a SUT that raises (any exception, SystemExit included), never
completes, or a stop signal (Ctrl-C, SIGTERM, SIGHUP: loadgen/stop_signals.py) ends the run early, the logs written so far stay and the summary says the run
is incomplete. A raising SUT surfaces as `RunError` chained to its exception, unless it stopped the run
first (`CompletionTracker.abort`): then the run ends as that stop ends it. Ctrl-C stops issuing at
once, gives the SUT `drain_s` to complete what is in flight, writes the logs marked incomplete and is
re-raised; a second Ctrl-C skips the drain. Failures a SUT's threads report (`report_failure`) are
counted by kind: the first of each kind and one count line per kind reach the detail log as errors.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import hashlib
import importlib.metadata
import io
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, cast

import numpy as np

from proctor.errors import ConfigError, ProctorError, RunError, TreeError
from proctor.loadgen import completion as completion_mod
from proctor.loadgen import output_lock, stop_signals
from proctor.loadgen.clock import Clock, MonotonicClock
from proctor.loadgen.completion import AccuracyBudget, CompletionTracker, FaultCounter, RunSink, failure_text
from proctor.loadgen.early_stopping_extension import ExtensionWatch, extension_queries
from proctor.loadgen.expected import expected_length
from proctor.loadgen.issuer import ABORTED, IssueOutcome, Issuer
from proctor.loadgen.logs.accuracy import AccuracyLog
from proctor.loadgen.logs.detail import (
    AUDIT_CONFIG_NOTICE,
    AUDIT_CONFIG_NOTICE_SOURCE,
    CONFIG_ERROR_KEY,
    EXPECTED_KEY,
    SHORT_RUN_KEY,
    SUT_REPORT_KEY,
    WARMUP_KEY,
    DetailLogWriter,
    log_effective_settings,
    log_requested_settings,
    log_results,
)
from proctor.loadgen.logs.samples import SampleColumns, write_sample_chunks
from proctor.loadgen.logs.summary import (
    INCOMPLETE_MARK,
    annotation_text,
    attainment_lines,
    footer_lines,
    render_summary,
)
from proctor.loadgen.logs.trace import TraceLog
from proctor.loadgen.normalize import normalize
from proctor.loadgen.option_names import NO_LABELS, OptionNames
from proctor.loadgen.options import EngineOptions
from proctor.loadgen.progress import ProgressHooks
from proctor.loadgen.records import NOT_SET, Records, Schedule, done_end
from proctor.loadgen.resolve import max_schedulable_qps, start_settings
from proctor.loadgen.results import CheckFailure, PerformanceResult, summarize
from proctor.loadgen.schedule import generate_schedule, loadable_sets
from proctor.loadgen.settings import EffectiveSettings, LogSettings, TestSettings
from proctor.loadgen.sink import ReportingSUT, StartableSUT, WarmUpSUT
from proctor.loadgen.sut_faults import STUCK_LIMIT_S, Fault, FaultKind, FaultTally, notice_bound_s
from proctor.loadgen.types import (
    QuerySampleLibrary,
    Scenario,
    SystemUnderTest,
    TestMode,
    check_sut_qsl,
    qsl_name,
    sut_name,
)
from proctor.loadgen.watch import STALL_KEY, PhaseWatch
from proctor.trees import clear_output, open_output
from proctor.typed_records import field, record

OFFICIAL_LOADGEN_VERSION = "6.0.17"  # the official release whose behaviour and logs proctor follows
MIN_TIMEOUT_NS = STUCK_LIMIT_S * 1_000_000_000  # a stuck SUT: no completion for max(60 s, 2 x min duration)
# While the host lets the issuer wake on time (clock.MonotonicClock's adaptive spin), it sleeps until
# this long before a Server arrival, then spins with a 1 us timer slack (issuer.fine_timer_slack): p50
# lateness of a few us. Under contention (late wake-ups, or more runnable tasks than CPUs) it sleeps
# to the arrival, as the official issuer does.
ISSUE_SPIN_MARGIN_NS = 30_000
LATE_WARN_FRACTION = 0.1  # Server: p99 issue lateness above this share of the latency bound is warned
MAX_DURATION_GRACE_NS = 1_000_000_000  # time for in-flight queries after max_duration stopped issuing


@record(frozen=True, slots=True)
class Metric:
    """A run's headline metric, named as the rules name it: a latency (ns) or a rate (per second)."""

    name: str
    value: float
    unit: str  # "ns" or "samples/s"

    @property
    def text(self) -> str:
        return f"{self.value / 1e6:.3f} ms" if self.unit == "ns" else f"{self.value:,.2f}"


def metric_name(scenario: str, target_percentile: float) -> tuple[str, str]:
    """(name, unit) of the scenario's headline metric."""
    if scenario == Scenario.SINGLE_STREAM:
        return f"{target_percentile * 100:g}th percentile latency (early stopping estimate)", "ns"
    if scenario == Scenario.MULTI_STREAM:
        return f"{target_percentile * 100:g}th percentile per-query latency (early stopping estimate)", "ns"
    if scenario == Scenario.SERVER:
        return "completed samples per second", "samples/s"
    return "samples per second", "samples/s"


def metric_of(result: PerformanceResult) -> Metric:
    """The headline metric of a performance result."""
    name, unit = metric_name(str(result.scenario), result.target_percentile)
    value = {
        Scenario.SINGLE_STREAM: result.early_stopping_latency_ss,
        Scenario.MULTI_STREAM: result.early_stopping_latency_ms,
        Scenario.SERVER: result.completed_samples_per_sec,
    }.get(Scenario(str(result.scenario)), result.samples_per_second)
    return Metric(name, float(value), unit)


@record(frozen=True, slots=True)
class RunOutcome:
    """What a run hands back, from either engine (`run_test`, `compat.official_engine.run_official`):
    its validity and status, the log paths, the headline metric; `result` and the arrays are
    proctor's (None from the official engine, whose numbers are read back from its detail log into
    `detail`). Immutable: what a caller adds after the run is a new one (`dataclasses.replace`)."""

    result: PerformanceResult | None
    valid: bool
    incomplete: bool
    incomplete_reason: str
    log_paths: dict[str, Path]
    errors: int
    warnings: int
    engine: str = "proctor"  # "proctor" or "official"
    scenario: str = ""
    mode: str = ""
    metric: Metric | None = None
    invalid_reasons: list[str] = field(default_factory=list)  # why INVALID, with what to change
    error_messages: list[str] = field(default_factory=list)  # the first detail-log errors
    sut_report: list[str] = field(default_factory=list)  # the SUT's report lines ("sut: ..."), as logged
    wall_s: float = 0.0
    detail: dict[str, Any] = field(default_factory=dict)  # official: each key of its detail log
    effective: EffectiveSettings | None = None
    schedule: Schedule | None = None
    records: Records | None = None
    accuracy_samples: int = 0  # samples whose output went to the accuracy log
    issue_stop_reason: str = ""
    find_peak: Any = None  # FindPeakPerformance: the search (probes, peak QPS), else None
    interrupted: bool = False  # Ctrl-C ended the run (run_test re-raises KeyboardInterrupt)
    sut_failures: int = 0  # failures the SUT's threads reported (report_failure)
    warning_messages: list[str] = field(default_factory=list)  # the first warnings logged, to name them
    faults: list[Fault] = field(default_factory=list)  # what the SUT did wrong, the true cause first
    warmup: str = ""  # what the SUT did before the timed part (sink.WarmUpSUT), "" for nothing


def closed_loop_reason(n: int, names: OptionNames = NO_LABELS) -> str:
    """Why a closed loop with `n` queries in flight is never VALID (rules section 3, scenarios: none
    keeps N queries in flight), its options named as `names` says."""
    concurrency, scenario = names.name("concurrency", "concurrency"), names.name("scenario", "scenario")
    return (
        f"closed loop with {n} queries in flight ({concurrency}): not an MLPerf scenario, so no MLPerf "
        f"verdict; for one run {scenario} Server or SingleStream without {concurrency}"
    )


MAX_ERROR_MESSAGES = 10  # RunOutcome.error_messages keeps this many


def sut_report_lines(sut: object) -> list[str]:
    """What a `ReportingSUT` says about its run (token-count sources, faults per kind, lost samples),
    each line prefixed `sut: ` as it is printed and logged; [] for a SUT without a report."""
    if not isinstance(sut, ReportingSUT):
        return []
    text: Any = sut.report()
    items = text.splitlines() if isinstance(text, str) else list(text)
    return [f"sut: {line}" for line in items if str(line).strip()]


def log_paths(log_settings: LogSettings, when: dt.datetime | None = None) -> dict[str, Path]:
    """`<outdir>/<prefix>[<datetime>_]{summary,detail}<suffix>.txt`, `{accuracy,trace}<suffix>.json`, and
    proctor's compact per-sample file `samples<suffix>.bin` (logs.samples)."""
    out = log_settings.log_output
    prefix = out.prefix
    if out.prefix_with_datetime:
        prefix += (when or dt.datetime.now()).strftime("%Y-%m-%dT%H:%M:%S") + "_"
    base = Path(out.outdir)
    return {
        "summary": base / f"{prefix}summary{out.suffix}.txt",
        "detail": base / f"{prefix}detail{out.suffix}.txt",
        "accuracy": base / f"{prefix}accuracy{out.suffix}.json",
        "trace": base / f"{prefix}trace{out.suffix}.json",
        "samples": base / f"{prefix}samples{out.suffix}.bin",
    }


@record(slots=True)
class _Phase:
    """One issue pass: a schedule over one loaded set, its records and completion tracker."""

    mode: TestMode
    schedule: Schedule
    records: Records
    tracker: CompletionTracker
    seq_offset: int
    outcome: IssueOutcome | None = None
    loaded: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))


class Run:
    """Owns one run: its logs, its settings and the phases it issues."""

    def __init__(
        self,
        sut: SystemUnderTest,
        qsl: QuerySampleLibrary,
        settings: TestSettings,
        log_settings: LogSettings,
        options: EngineOptions,
        *,
        progress: ProgressHooks | None,
        clock: Clock | None,
    ) -> None:
        self.sut, self.qsl = sut, qsl
        self.options = options
        self.names = OptionNames(options.labels)  # how the advice names an option (the caller's labels)
        self.slo = options.slo  # per-request SLO targets (None: the benchmark's bounds)
        self.concurrency = options.concurrency  # > 0: the N-in-flight closed loop (not an MLPerf scenario)
        self.early_stopping_extension = options.early_stopping_extension
        self.short_run = options.short_run
        self.config_errors = list(options.config_errors)
        self.sink = RunSink()  # the sink a StartableSUT gets: the phase in progress's tracker
        self.error_messages: list[str] = []
        self.sut_report: list[str] = []
        self.warmup = ""  # the SUT's warm-up line (sink.WarmUpSUT), logged before the first phase
        self.requested = settings
        self.settings = settings
        self.log_settings = log_settings
        self.audit_config = options.audit_config
        self.progress = progress or ProgressHooks()
        self.clock = clock or MonotonicClock(ISSUE_SPIN_MARGIN_NS)
        self.timeout_ns = None if options.timeout_s is None else int(options.timeout_s * 1e9)
        self.paths = log_paths(log_settings)
        self.logs: _Logs | None = None
        self.eff: EffectiveSettings | None = None
        self.incomplete_reason = ""
        self.errors = 0  # final counts, taken from the detail log when it closes
        self.warnings = 0
        self.accuracy_samples = 0
        self.seq_next = 0
        self.perf_phase: _Phase | None = None
        self.find_peak: Any = None  # the PeakSearch of a FindPeakPerformance run
        self.result: PerformanceResult | None = None
        self.stop_reason = ""
        self._sut_failed = False  # the SUT or QSL raised during a phase: reported as RunError
        self.drain_s = options.drain_s
        self.interrupted = False
        self.t0_ns = time.perf_counter_ns()
        self.faults = FaultCounter(self._fault_error)
        self.sut_faults = FaultTally(self._notice, self.names)  # classified SUT faults: said at once, ranked for the verdict
        self.budget = AccuracyBudget(options.max_response_bytes, options.max_accuracy_log_bytes)

    # --- logging helpers ------------------------------------------------------------------------

    def log(self, key: str, value: Any) -> None:
        assert self.logs is not None
        self.logs.detail.log(key, value)

    def error(self, message: str) -> None:
        assert self.logs is not None
        self._keep(message)
        self.logs.detail.error(message)

    def _keep(self, message: str) -> None:
        if len(self.error_messages) < MAX_ERROR_MESSAGES:
            self.error_messages.append(message)

    def warning(self, message: str) -> None:
        assert self.logs is not None
        self.logs.detail.warning(message)

    def info(self, message: str) -> None:
        self.log("generic_message", message)

    def _notice(self, line: str) -> None:
        """A SUT fault or stall, said on the progress hooks at once (they only queue it: this runs
        on SUT threads, under the completion lock)."""
        hook = getattr(self.progress, "on_notice", None)  # hooks written before it may lack it
        if hook is not None:
            hook(line)

    def _fault_error(self, message: str) -> None:
        self._keep(message)
        if self.logs is not None:
            with contextlib.suppress(ValueError):  # reported by a SUT thread after the logs closed
                self.logs.detail.error(message)

    # --- the run --------------------------------------------------------------------------------

    def _annotate_detail(self) -> None:
        """proctor's own notes on the run, in the detail log before it closes (the summary's follow
        at its end): the short-run mark, the caller's own records and the SUT's report."""
        if self.short_run:
            self.log(SHORT_RUN_KEY, self.short_run)
        for key, value in self.options.detail_records:
            self.log(key, value)
        try:
            self.sut_report = sut_report_lines(self.sut)
        except Exception as exc:  # the SUT's account failed; the run's results stand
            self.error(f"the SUT's report() raised {type(exc).__name__}: {exc}")
        if self.sut_report:
            self.log(SUT_REPORT_KEY, self.sut_report)

    def execute(self) -> RunOutcome:
        self.t0_ns = time.perf_counter_ns()
        self.logs = _open_logs(self.paths, self.log_settings, self.clock)
        failure: BaseException | None = None
        outcome: RunOutcome | None = None
        try:
            self._prologue()
            self._dispatch()
        except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM/SIGHUP (stop_signals.Stopped)
            self.incomplete_reason = self.incomplete_reason or stop_signals.reason(exc)
            if not self.interrupted and self.logs is not None:  # stopped outside a phase's issuing (its
                # handler logs the error): the summary must not say "No errors encountered" either
                self.error(f"run {stop_signals.reason(exc)} outside the timed issuing (setting up or ending a phase)")
            self.interrupted = True
            failure = exc
        except BaseException as exc:  # SystemExit from a SUT too: never "No errors encountered"
            self.incomplete_reason = self.incomplete_reason or f"{type(exc).__name__}: {exc}"
            if isinstance(exc, ConfigError):
                self.logs.detail.error(str(exc), key="error_invalid_test_settings")
            failure = exc
        finally:
            epilogue_failure: BaseException | None = None
            with stop_signals.held() as held:  # the logs are written whole, then a stop that came meanwhile counts
                try:
                    outcome = self._epilogue()
                except BaseException as exc:  # never mask the first failure with one from closing
                    if failure is None:
                        raise
                    epilogue_failure = exc
        if held and failure is None:  # the run had ended: its logs stand as written, the caller stops
            self.interrupted = True
            failure = stop_signals.interruption(held[0])
        if failure is not None:
            if self._sut_failed and not isinstance(failure, ProctorError | KeyboardInterrupt):
                error = RunError(f"run incomplete: {self.incomplete_reason} (logs in {self.paths['detail'].parent})")
                error.outcome = outcome  # the logs are written: the caller can still judge and report the run
                raise error from failure
            if epilogue_failure is not None:
                failure.add_note(f"while writing the logs: {epilogue_failure!r}")
            elif isinstance(failure, KeyboardInterrupt):  # stopped: what was written goes up with it
                stop_signals.keep_partial(failure, outcome)
            raise failure
        assert outcome is not None
        return outcome

    def _prologue(self) -> None:
        assert self.logs is not None
        for message, (file, line_no) in self.config_errors:  # FromConfig's, logged before the test
            self._keep(message)
            self.logs.detail.log(
                CONFIG_ERROR_KEY, message, is_error=True, file=file, line_no=line_no, time_ns=self.logs.detail.start_ns
            )
        for key, value in _version_items():
            self.logs.detail.log(key, value, file="version.cc")
        self.log("test_datetime", dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
        t0 = time.perf_counter_ns()
        name = sut_name(self.sut)
        name_ns = time.perf_counter_ns() - t0
        self.log("sut_name", name)
        self.log("get_sut_name_duration_ns", name_ns)
        self.log("qsl_name", qsl_name(self.qsl))
        self.log("qsl_reported_total_count", int(self.qsl.total_sample_count))
        self.log("qsl_reported_performance_count", int(self.qsl.performance_sample_count))
        if self.audit_config is not None and Path(self.audit_config).is_file():  # as the official words it
            file, line_no = AUDIT_CONFIG_NOTICE_SOURCE
            self.logs.detail.log(
                "warning_generic_message", AUDIT_CONFIG_NOTICE, is_warning=True, file=file, line_no=line_no
            )
        settings = start_settings(self.requested, self.audit_config)  # audit.config, then test05
        self.settings = settings
        log_requested_settings(self.logs.detail, settings)
        self.eff = normalize(
            settings, int(self.qsl.total_sample_count), int(self.qsl.performance_sample_count)
        )
        log_effective_settings(self.logs.detail, self.eff)
        if isinstance(self.sut, StartableSUT):  # its sink, before the first issue
            try:
                self.sut.start(self.sink)
            except BaseException as exc:
                self._sut_failed = True
                if not isinstance(exc, KeyboardInterrupt):
                    self.sut_faults.add(FaultKind.RAISED, f"{failure_text(exc)} in start()")
                raise
        if isinstance(self.sut, WarmUpSUT):  # readiness before the clock starts: nothing here is timed
            try:
                self.warmup = self.sut.warm_up(self._in_flight())
            except BaseException as exc:
                self._sut_failed = True
                if not isinstance(exc, KeyboardInterrupt):
                    self.sut_faults.add(FaultKind.RAISED, f"{failure_text(exc)} in warm_up()")
                raise
            if self.warmup:
                self.log(WARMUP_KEY, self.warmup)

    def _in_flight(self) -> int:
        """The most queries this run keeps in flight, where the scenario fixes it (0: it does not)."""
        assert self.eff is not None
        if self.concurrency:
            return self.concurrency
        if self.eff.scenario == Scenario.SINGLE_STREAM:
            return 1
        if self.eff.scenario == Scenario.MULTI_STREAM:
            return int(self.eff.samples_per_query)
        return 0

    def _dispatch(self) -> None:
        assert self.eff is not None
        mode = self.eff.test_mode
        if mode in (TestMode.ACCURACY_ONLY, TestMode.SUBMISSION_RUN):
            self._run_accuracy()
        if mode in (TestMode.PERFORMANCE_ONLY, TestMode.SUBMISSION_RUN) and not self.incomplete_reason:
            self._run_performance()
        if mode == TestMode.FIND_PEAK_PERFORMANCE:
            self._find_peak()

    def _find_peak(self) -> None:
        """Server FindPeakPerformance (loadgen/find_peak.py): every probe a full performance run; the
        reported run is the last passing one, summarised with its own target QPS."""
        from proctor.loadgen.find_peak import NOT_SUPPORTED, Probe, search

        assert self.eff is not None and self.logs is not None
        self.log("generic_message", "Starting FindPeakPerformance mode")
        if self.eff.scenario != Scenario.SERVER:
            self.logs.detail.error(NOT_SUPPORTED, key="error_invalid_config")
            return
        base = self.eff

        def run(qps: float, stage: str) -> tuple[bool, str, tuple[_Phase, EffectiveSettings]]:
            self.eff = dataclasses.replace(base, target_qps=qps)
            phase = self._performance_phase()
            try:
                result = summarize(self.eff, phase.schedule, phase.records, names=self.names)
            except Exception as exc:  # a probe too broken to summarise fails, and says why
                return False, f"could not summarize: {type(exc).__name__}: {exc}", (phase, self.eff)
            passed = result.perf_constraints_met and not self.incomplete_reason
            if self.incomplete_reason:
                detail = self.incomplete_reason
            elif not passed:
                detail = result.perf_constraints_recommendation or "latency bound not met"
            else:
                detail = ""
            pct = result.target_percentile
            detail = (detail + "; " if detail else "") + (
                f"{pct * 100:g}th percentile latency {result.samples.target} ns, "
                f"bound {self.eff.target_latency_ns} ns, issue lateness p99 {result.issue_lateness_p99_ns} ns"
            )
            return passed, detail, (phase, self.eff)

        def probe_seen(p: Probe) -> None:
            self.progress.on_probe(p)

        found = search(
            run,
            base.target_qps,
            base.server_find_peak_qps_boundary_step_size,
            base.server_find_peak_qps_decimals_of_precision,
            log=self.info,
            error=self.error,
            on_probe=probe_seen,
            should_stop=lambda: bool(self.incomplete_reason),
            max_qps=max_schedulable_qps(base.min_duration_ms),
        )
        self.perf_phase, self.eff = found.result
        self.find_peak = found

    # --- phases ---------------------------------------------------------------------------------

    def _limits(self, accuracy: bool) -> tuple[int | None, int]:
        """(overall limit from start, longest wait for one completion) in ns."""
        assert self.eff is not None
        if self.timeout_ns is not None:
            return (None if accuracy else self.timeout_ns), self.timeout_ns
        if accuracy:
            return None, MIN_TIMEOUT_NS
        if self.eff.max_duration_ms:
            limit = self.eff.max_duration_ms * 1_000_000 + MAX_DURATION_GRACE_NS
            return limit, limit
        # No max_duration: a SUT that keeps completing is slow, not stuck (an Offline query sized for
        # a quiet machine may take minutes beside a CPU hog), so only a wait this long without any
        # completion ends the run; the verdict never depends on how loaded the host was.
        return None, max(MIN_TIMEOUT_NS, 2 * self.eff.min_duration_ms * 1_000_000)

    def _run_accuracy(self) -> None:
        assert self.eff is not None
        self.log("generic_message", "Starting accuracy mode")
        total = int(self.qsl.total_sample_count)
        sets = loadable_sets(self.eff, total, TestMode.ACCURACY_ONLY)
        on_sets = getattr(self.progress, "on_sets", None)  # hooks written before it may lack it
        if on_sets is not None:  # the live line counts the whole run's samples, not one set's
            on_sets(TestMode.ACCURACY_ONLY, [len(s) for s in sets])
        for loaded in sets:
            schedule = generate_schedule(
                self.eff, loaded, TestMode.ACCURACY_ONLY, first_sample_seq=self.seq_next
            )
            phase = self._phase(TestMode.ACCURACY_ONLY, schedule, loaded)
            self._issue_phase(phase)
            if self.incomplete_reason:
                return

    def _run_performance(self) -> None:
        assert self.eff is not None
        self.log("generic_message", "Starting performance mode")
        self.perf_phase = self._performance_phase(extend=self.early_stopping_extension)

    def _performance_phase(self, extend: bool = False) -> _Phase:
        """Load the performance set, issue one performance run, unload: what every probe repeats.
        `extend`: Server runs the rules' early-stopping procedure past the official queries
        (early_stopping_extension); a FindPeakPerformance probe does not."""
        assert self.eff is not None
        eff = self.eff
        sets = loadable_sets(eff, int(self.qsl.total_sample_count), TestMode.PERFORMANCE_ONLY)
        loaded = sets[0]
        extra = None
        if extend and extension_queries(eff, 1, TestMode.PERFORMANCE_ONLY):
            extra = lambda n: extension_queries(eff, n, TestMode.PERFORMANCE_ONLY)  # noqa: E731
        schedule = generate_schedule(
            eff, loaded, TestMode.PERFORMANCE_ONLY, first_sample_seq=self.seq_next, extra_queries=extra
        )
        phase = self._phase(TestMode.PERFORMANCE_ONLY, schedule, loaded)
        self.perf_phase = phase  # set before issuing: a run that fails midway is still summarised
        self._issue_phase(phase)
        return phase

    def _phase(self, mode: TestMode, schedule: Schedule, loaded: np.ndarray) -> _Phase:
        assert self.eff is not None and self.logs is not None
        accuracy = mode == TestMode.ACCURACY_ONLY
        records = Records.allocate(schedule, tokens=bool(self.eff.use_token_latencies))
        offset = self.seq_next
        self.seq_next += schedule.n_samples
        acc_log = self.logs.accuracy
        tokens, offline = self.eff.use_token_latencies, self.eff.scenario == Scenario.OFFLINE

        def sink(seq: int, qsl_idx: int, data: bytes, n_tokens: int, token_data: bytes | None) -> None:
            try:
                if not tokens:
                    acc_log.add(seq + offset, qsl_idx, data)
                else:  # official: token runs add token_count; non-Offline ones also the first-token data
                    acc_log.add(
                        seq + offset,
                        qsl_idx,
                        data,
                        token_count=n_tokens,
                        token_data=None if offline else (token_data or b""),
                    )
            except ValueError:  # the log is closed: a straggler after the run ended (past a timeout)
                pass

        tracker = CompletionTracker(
            schedule,
            records,
            self.clock.now_ns,
            log_all_data=accuracy,
            use_tokens=self.eff.use_token_latencies,
            needs_first_token=self.eff.scenario != Scenario.OFFLINE,
            accuracy_sink=sink,
            error_sink=self._fault_error,
            id_base=completion_mod.next_id_base(),
            faults=self.faults,
            budget=self.budget,
            sut_faults=self.sut_faults,
        )
        return _Phase(mode, schedule, records, tracker, offset, loaded=loaded)

    def _issue_phase(self, phase: _Phase) -> None:
        """Load, issue, wait, unload: the timed part of one phase."""
        assert self.eff is not None
        loaded_list = phase.loaded.tolist()
        self.qsl.load_samples(loaded_list)
        self.log("loaded_qsl_set", loaded_list)
        sched = phase.schedule
        self.log("generated_query_count", sched.nominal_queries)  # the official's; extra ones follow
        self.log(
            "generated_samples_per_query",
            int(sched.query_offsets[1] - sched.query_offsets[0]) if sched.n_queries else 0,
        )
        self.log("generated_query_duration", sched.duration_ns)  # the timestamp after the last query
        accuracy = phase.mode == TestMode.ACCURACY_ONLY
        if not accuracy:  # how long it will last and why, before it starts (loadgen.expected)
            self._expect(phase)
        limit, stall = self._limits(accuracy)
        issuer = Issuer(
            self.sut,
            sched,
            phase.tracker.id_base,
            phase.records,
            phase.tracker,
            self.eff,
            self.clock,
            accuracy=accuracy,
            limit_ns=limit,
            stall_ns=stall,
            error=self.error,
            info=self.info,
        )
        issuer.concurrency = self.concurrency
        if sched.n_nominal >= 0 and not accuracy:
            issuer.extension = ExtensionWatch(self.eff, phase.records, sched.n_nominal)
        completion_mod.attach(phase.tracker)
        self.sink.target = phase.tracker
        on_settings = getattr(self.progress, "on_settings", None)  # hooks written before it may lack it
        if on_settings is not None:
            on_settings(self.eff)
        self.progress.on_phase(phase.mode, sched, phase.records, phase.tracker)
        watch = PhaseWatch(phase.tracker, self.sut_faults, notice_bound_s(_expected_latency_s(self.eff)),
                           self._give_up_text(limit, stall))
        watch.start()
        # the wall clock beside the engine clock: power_begin/power_end are placed on the run's own
        # span (start of issue to the last completion), as the official logs them
        wall_ref, clock_ref = dt.datetime.now(dt.UTC), self.clock.now_ns()
        try:
            # The prologue's log lines are rendered on the detail log's thread: let it finish now, or
            # it holds the GIL in the first milliseconds of issuing (on a loaded host it can be
            # preempted holding it: measured here, 3-9 ms of lateness at the start of most runs).
            assert self.logs is not None
            self.logs.detail.sync()
            phase.outcome = issuer.run()
            self.stop_reason = phase.outcome.stop_reason
            self.sut.flush_queries()
            self._wait(phase, limit, stall)
        except KeyboardInterrupt as exc:
            self.incomplete_reason = self.incomplete_reason or stop_signals.reason(exc)
            self.interrupted = True
            drained = self._drain(phase)
            self.error(f"run interrupted: {self._progress_text(phase)}{drained}")
            raise
        except BaseException as exc:  # SystemExit and other BaseExceptions from the SUT too
            tracker = phase.tracker
            if tracker.abort_reason and tracker.abort_kind is FaultKind.ABORTED and isinstance(exc, Exception):
                # the SUT stopped the run, then raised on the next issue (openai: EndpointDown,
                # network: NodesDown): the stop is the cause, the exception its consequence. The run
                # ends as it does when the issuer sees the stop before issuing again (which of the
                # two comes first is the threads' timing): incomplete with the SUT's reason, no raise
                self.stop_reason = ABORTED
                self._aborted(phase)
                if str(exc) not in tracker.abort_reason:  # not the stop's own words: something else too
                    self.error(f"the SUT raised {failure_text(exc)} after it stopped the run")
            else:
                self._sut_failed = True
                self.incomplete_reason = self.incomplete_reason or (
                    f"the SUT raised {type(exc).__name__} while queries were issued: {exc}"
                )
                self.error(f"{self.incomplete_reason} ({self._progress_text(phase)})")
                self.sut_faults.add(
                    FaultKind.RAISED, f"{failure_text(exc)} while queries were issued ({self._progress_text(phase)})"
                )
                raise
        finally:
            watch.stop()
            phase.records.end_ns = self.clock.now_ns()
            completion_mod.detach(phase.tracker)
            self.sink.target = None
            self.progress.on_phase_end(phase.mode, phase.records)
            if self.incomplete_reason:
                phase.records.incomplete = True
                phase.records.incomplete_reason = self.incomplete_reason
        assert self.logs is not None
        self.logs.detail.log_logger_counters()  # the official logs them after every issue pass
        self.qsl.unload_samples(loaded_list)
        power_begin, power_end = _power_window(phase.records, wall_ref, clock_ref)
        self.log("power_begin", _power_time(power_begin))
        self.log("power_end", _power_time(power_end))

    def _expect(self, phase: _Phase) -> None:
        """Log and tell the progress hooks the phase's expected length and why."""
        assert self.eff is not None
        pad = self.eff.samples_per_query - 1 if self.eff.scenario == Scenario.MULTI_STREAM else 0
        try:
            expected = expected_length(self.eff, phase.schedule, phase.mode, int(phase.loaded.shape[0]) - pad,
                                       concurrency=self.concurrency, names=self.names)
        except (ValueError, IndexError) as exc:  # a schedule too odd to foresee: the run goes on
            self.info(f"expected length not known: {exc}")
            return
        if self.warmup:  # the SUT's warm-up, done before the clock: part of the wait, so said here too
            expected = dataclasses.replace(expected, warmup=self.warmup)
        self.log(EXPECTED_KEY, expected.text)
        on_expected = getattr(self.progress, "on_expected", None)  # hooks written before it may lack it
        if on_expected is not None:
            on_expected(expected)

    def _drain(self, phase: _Phase) -> str:
        """After Ctrl-C: nothing more is issued; wait up to drain_s for what the SUT holds. A second
        Ctrl-C ends the wait at once; so does a SUT holding more than twice what it completed per
        drain_s so far, or one that completed nothing in a run at least drain_s old (an Offline query
        of millions, LLM requests of seconds: the wait cannot end them, only delay the stop).
        Returns a note for the error line."""
        tracker, rec = phase.tracker, phase.records
        tracker.finish_issuing(rec.n_samples_issued)
        left = rec.n_samples_issued - tracker.completed_samples
        elapsed_s = (self.clock.now_ns() - rec.start_ns) * 1e-9 if rec.start_ns > 0 else 0.0
        rate = tracker.completed_samples / elapsed_s if elapsed_s > 0 else 0.0  # samples/s so far
        hopeless = left > 2 * rate * self.drain_s if rate > 0 else elapsed_s >= self.drain_s  # none done yet
        if left > 0 and self.drain_s > 0 and hopeless:
            work = f"{left / rate:.1f} s of work at the SUT's rate so far" if rate > 0 else (
                f"none completed in {elapsed_s:.1f} s")
            return f"; not drained: {left} samples open, {work}"
        try:
            if tracker.all_done.wait(timeout=max(self.drain_s, 0.0)):
                return "; everything issued completed within the drain"
            return f"; not drained after {self.drain_s:g} s"
        except KeyboardInterrupt as exc:
            return f"; drain skipped (a second {stop_signals.signal_name(stop_signals.signal_of(exc))})"

    @staticmethod
    def _progress_text(phase: _Phase) -> str:
        rec = phase.records
        return (
            f"{rec.n_queries_issued} queries / {rec.n_samples_issued} samples issued, "
            f"{phase.tracker.completed_samples} samples completed"
        )

    def _wait(self, phase: _Phase, limit: int | None, stall: int) -> None:
        """Block until every issued sample completed, or give up after the limits (wall time)."""
        rec, tracker = phase.records, phase.tracker
        tracker.finish_issuing(rec.n_samples_issued)
        ok = tracker.all_done.is_set()
        if not ok and phase.outcome is not None and phase.outcome.stop_reason != "timeout":
            wall_start = phase.outcome.wall_start_ns
            last_done, last_change = -1, time.monotonic_ns()
            while not ok:
                now = time.monotonic_ns()
                if tracker.completed_samples != last_done:
                    last_done, last_change = tracker.completed_samples, now
                left = stall - (now - last_change)
                if limit is not None:
                    left = min(left, wall_start + limit - now)
                if left <= 0 or tracker.abort_reason:
                    break
                ok = tracker.all_done.wait(timeout=min(left * 1e-9, 0.25))
        # the SUT gave up (its endpoint stopped answering): the run is incomplete whether or not a
        # sample was still open when issuing stopped (a SUT that fails each request at once leaves
        # none, and that abort was lost: a run cut short by it read as whole)
        stopped_by_abort = phase.outcome is not None and phase.outcome.stop_reason == ABORTED
        if tracker.abort_reason and (not ok or stopped_by_abort):
            self._aborted(phase)
        elif not ok:
            self._stalled(phase, limit, stall)

    def _aborted(self, phase: _Phase) -> None:
        """The run was aborted (the SUT stopped it, or its answers were ids never issued): the
        incomplete reason says why and how much was left open."""
        tracker, rec = phase.tracker, phase.records
        if tracker.abort_kind is FaultKind.ABORTED:
            n, _ = tracker.outstanding_ids()
            self.incomplete_reason = f"{tracker.abort_reason} ({n} of {rec.n_samples_issued} issued samples open)"
            at = (self.clock.now_ns() - rec.start_ns) / 1e9 if rec.start_ns > 0 else 0.0  # the abort came just now
            self.sut_faults.add(FaultKind.ABORTED, tracker.abort_reason + (f" ({at:.1f} s into the run)" if at else ""))
        else:  # the watch's reason says how many were open
            self.incomplete_reason = tracker.abort_reason
        self.error(self.incomplete_reason)

    def _stalled(self, phase: _Phase, limit: int | None, stall: int) -> None:
        """Nothing completed within the stuck limit: the run gave up. The reason says how long, how
        much was open, and (STALLED fault) what to check: never completing at all is not slowness."""
        tracker, rec = phase.tracker, phase.records
        n, first = tracker.outstanding_ids()
        sq = phase.schedule.query_offsets
        queries = sorted({int(np.searchsorted(sq, s, side="right")) - 1 for s in first})
        issued = rec.n_samples_issued
        last = int(rec.sample_done_ns[:issued].max()) if issued else NOT_SET  # NOT_SET is below any stamp
        last = int(rec.start_ns) if last == NOT_SET else last
        idle_s = max(self.clock.now_ns() - last, 0) / 1e9
        if tracker.completed_samples == 0 and tracker.first_tokens == 0:
            what = f"none completed in {idle_s:.0f} s"
            advice = ""  # the class's own: how a SUT completes
        else:
            what = f"nothing completed in the last {idle_s:.0f} s"
            advice = (
                f"the SUT stopped completing after {tracker.completed_samples} sample(s): look for a hang, or "
                f"samples it dropped; a SUT this slow needs a longer {self._timeout_name}"
            )
        self.incomplete_reason = (
            f"the SUT did not complete {n} of {issued} issued samples: {what}, so the run gave up "
            f"({self._give_up_text(limit, stall)}; first outstanding: queries {queries}, response ids "
            f"{[s + tracker.id_base for s in first]})"
        )
        self.error(self.incomplete_reason)
        self.sut_faults.add(FaultKind.STALLED, self.incomplete_reason, advice=advice)

    @property
    def _timeout_name(self) -> str:
        return self.names.name("timeout_s", "timeout_s")

    def _give_up_text(self, limit: int | None, stall: int) -> str:
        """When the run gives up on a SUT that completes nothing, and the option that sets it."""
        timeout = self._timeout_name
        if self.timeout_ns is not None:
            return f"proctor gives up after {timeout} {self.timeout_ns / 1e9:g} s"
        if limit is not None:
            return f"proctor gives up at max_duration + 1 s ({limit / 1e9:g} s; {timeout} to change it)"
        return f"proctor gives up after {stall / 1e9:g} s without a completion ({timeout} to change it)"

    # --- the end --------------------------------------------------------------------------------

    def _epilogue(self) -> RunOutcome:
        logs = self.logs
        assert logs is not None
        for line in self.faults.summary_lines():
            self.error(line)
        for line in self.sut_faults.count_lines():
            self._notice(line)
        stalls = self.sut_faults.times(STALL_KEY)
        if stalls > 1:
            self._notice(f"in all, nothing completed for a while with samples outstanding {stalls} times")
        self._annotate_detail()
        if self.budget.refused:
            self.error(
                f"{self.budget.refused} response payload(s) were not written to the accuracy log "
                f"(caps: {self.budget.per_response} bytes per response, {self.budget.total} in total)"
            )
        phase = self.perf_phase
        if phase is not None and phase.records.n_queries_issued and self.eff is not None:
            try:
                self.result = summarize(self.eff, phase.schedule, phase.records, self.slo, self.names)
            except Exception as exc:  # a partial run may not be summarisable; say so, keep the logs
                self.error(f"could not summarize the run: {type(exc).__name__}: {exc}")
                self.result = None
        incomplete = bool(self.incomplete_reason)
        if self.result is not None and self.concurrency:
            self.result.closed_loop_in_flight = self.concurrency
            self.result.valid = False
            closed = closed_loop_reason(self.concurrency, self.names)
            self.result.reasons.insert(0, closed)
            self.result.failures.insert(0, CheckFailure("closed_loop", closed))
        if self.result is not None and phase is not None:
            self._warn_if_late(phase)
        if self.result is not None:
            log_results(logs.detail, self.result)
        else:
            if incomplete:
                logs.detail.log("proctor_run_incomplete", self.incomplete_reason)
            if phase is not None:  # like the official, accuracy-only runs log no results block
                logs.detail.log("num_errors", logs.detail.n_errors, file="results.cc", line_no=852)
        if phase is not None:
            try:
                _write_samples(logs, phase.schedule, phase.records)
            except (OSError, ValueError) as exc:  # the run's results stand; the report draws no per-sample figure
                self.error(f"could not write {logs.samples.name}: {exc}")
            _write_trace(logs.trace, phase.schedule, phase.records)
        valid = bool(self.result is not None and self.result.valid and not incomplete)
        self.accuracy_samples = logs.accuracy.count
        self.errors, self.warnings = logs.detail.n_errors, logs.detail.n_warnings
        if self.eff is not None:
            text = render_summary(
                self.result, self.eff, self._sut_name(), n_warnings=self.warnings, n_errors=self.errors
            )
        else:  # the settings were refused: the footer alone, as the official writes for no result
            text = "\n".join(footer_lines(self.warnings, self.errors)) + "\n"
        if incomplete and (self.result is None or self.result.complete):
            text += f"\nResult is : INVALID\n{INCOMPLETE_MARK} {self.incomplete_reason}\n"
        text += annotation_text(self.short_run, self.sut_report, attainment_lines(self.result))
        _close_logs(logs, text, self.log_settings)
        outcome = RunOutcome(
            result=self.result,
            valid=valid,
            incomplete=incomplete,
            incomplete_reason=self.incomplete_reason,
            log_paths=dict(self.paths),
            errors=self.errors,
            warnings=self.warnings,
            engine="proctor",
            scenario=str(self.settings.scenario),
            mode=str(self.settings.mode),
            metric=None if self.result is None else metric_of(self.result),
            invalid_reasons=[] if self.result is None else list(self.result.reasons or self.result.recommendations),
            error_messages=list(self.error_messages),
            sut_report=list(self.sut_report),
            wall_s=(time.perf_counter_ns() - self.t0_ns) / 1e9,
            effective=self.eff,
            schedule=None if phase is None else phase.schedule,
            records=None if phase is None else phase.records,
            accuracy_samples=self.accuracy_samples,
            issue_stop_reason=self.stop_reason,
            find_peak=self.find_peak,
            interrupted=self.interrupted,
            sut_failures=self.faults.total,
            warning_messages=list(logs.detail.warning_messages),
            faults=self.sut_faults.ranked(),
            warmup=self.warmup,
        )
        self.progress.on_end(outcome)
        return outcome

    def _warn_if_late(self, phase: _Phase) -> None:
        """A Server run whose issuer fell behind its schedule offered less than target_qps: say so
        (issue lateness p99 over LATE_WARN_FRACTION of the latency or TTFT bound), with the rate it did offer."""
        r, eff = self.result, self.eff
        if r is None or eff is None or eff.scenario != Scenario.SERVER:
            return
        # a token run's bound is its TTFT (its target_latency is 0: every late issue warned)
        bound = eff.server_ttft_latency if eff.use_token_latencies else eff.target_latency_ns
        if bound <= 0 or r.issue_lateness_p99_ns <= LATE_WARN_FRACTION * bound:
            return
        issued = phase.records.query_issued_ns[: phase.records.n_queries_issued]
        span = int(issued.max() - issued.min()) if issued.size > 1 else 0
        offered = (issued.size - 1) / (span * 1e-9) if span > 0 else 0.0
        self.warning(
            f"the issuer fell behind its schedule: issue lateness p50/p99/max "
            f"{r.issue_lateness_p50_ns}/{r.issue_lateness_p99_ns}/{r.issue_lateness_max_ns} ns; it offered "
            f"{offered:.1f} queries/s against target_qps {eff.target_qps:g}"
        )

    def _sut_name(self) -> str:
        try:
            return sut_name(self.sut)
        except Exception:
            return "?"


# --- the stages' plumbing: logs, version info, audit.config, trace --------------------------------


@record(slots=True)
class _Logs:
    detail: DetailLogWriter
    accuracy: AccuracyLog
    trace: TraceLog
    summary: Path
    samples: Path
    origin_ns: int  # the run clock when the logs opened: the trace's and the samples file's time origin


def _open_logs(paths: dict[str, Path], log_settings: LogSettings, clock: Clock) -> _Logs:
    """All four files open before anything runs; a file that cannot be opened stops the run."""
    opened: list[DetailLogWriter | AccuracyLog | TraceLog] = []
    try:
        Path(log_settings.log_output.outdir).mkdir(parents=True, exist_ok=True)
        copy: IO[str] | None = sys.stdout if log_settings.log_output.copy_detail_to_stdout else None
        opened.append(DetailLogWriter(paths["detail"], clock_ns=clock.now_ns, copy_to=copy))
        opened.append(AccuracyLog(paths["accuracy"]))
        origin = clock.now_ns()
        if log_settings.enable_trace:
            opened.append(TraceLog(paths["trace"], start_ns=origin))
        else:  # no file at all (the official leaves an empty one); a stale one is not this run's
            clear_output(paths["trace"])
            opened.append(TraceLog(io.StringIO(), enabled=False, start_ns=origin))
        with open_output(paths["summary"]):
            pass
    except OSError as exc:
        for log in opened:
            log.close()
        raise RunError(f"cannot open log file {exc.filename}: {exc.strerror}") from exc
    except TreeError:  # a link, FIFO or device where a log goes: refused, nothing written through it
        for log in opened:
            log.close()
        raise
    detail, accuracy, trace = opened
    assert isinstance(detail, DetailLogWriter) and isinstance(accuracy, AccuracyLog) and isinstance(trace, TraceLog)
    try:
        clear_output(paths["samples"])  # a stale one from an earlier run in this folder is not this run's
    except TreeError:
        for log in opened:
            log.close()
        raise
    return _Logs(detail, accuracy, trace, paths["summary"], paths["samples"], origin)


def _close_logs(logs: _Logs, summary_text: str, log_settings: LogSettings) -> None:
    logs.accuracy.close()
    logs.trace.close()
    logs.detail.close()
    with open_output(logs.summary) as fh:
        fh.write(summary_text)
    if log_settings.log_output.copy_summary_to_stdout:
        sys.stdout.write(summary_text)


def _version_items() -> list[tuple[str, Any]]:
    """The official loadgen_* version keys, filled with proctor's own identity."""
    try:
        version = importlib.metadata.version("proctor")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    here = Path(__file__).parent
    sha1 = {
        f"/{p.relative_to(here).as_posix()}": hashlib.sha1(p.read_bytes()).hexdigest()
        for p in sorted(here.rglob("*.py"))
    }
    built = dt.datetime.fromtimestamp(Path(__file__).stat().st_mtime, dt.UTC)
    return [
        ("loadgen_version", f"proctor {version} (official LoadGen {OFFICIAL_LOADGEN_VERSION} compatible)"),
        ("loadgen_build_date_local", built.astimezone().replace(tzinfo=None).isoformat()),
        ("loadgen_build_date_utc", built.replace(tzinfo=None).isoformat()),
        ("loadgen_git_commit_date", ""),
        ("loadgen_git_log_message", ""),
        ("loadgen_git_status_message", ""),
        ("loadgen_file_sha1", sha1),
    ]


TRACE_CHUNK = 1 << 16  # samples formatted and written per step: the trace never sits in memory whole
ROW_CHUNK = 1 << 18  # samples per step of the samples file: its temporaries follow this, never the run's size


def _rows_end(schedule: Schedule, records: Records) -> int:
    """The sample positions that can hold a row: up to the last completion (an interrupted query's
    unfinished tail has none)."""
    nq = records.n_queries_issued
    return done_end(records.sample_done_ns, int(schedule.query_offsets[nq])) if nq else 0


def _row_chunks(schedule: Schedule, records: Records, chunk: int, ns: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The samples with a result among the first `ns` (`_rows_end`), in sequence order, `chunk`
    sample positions at a time: (sequence numbers, their queries). Failed and unfinished samples are
    no result and get no row (nor a trace event)."""
    offsets = schedule.query_offsets[: records.n_queries_issued + 1]
    done, failed = records.sample_done_ns, records.sample_failed
    for a in range(0, ns, chunk):
        b = min(a + chunk, ns)
        keep = done[a:b] != NOT_SET
        if failed is not None:
            keep &= failed[a:b] == 0
        seq = np.flatnonzero(keep)
        seq += a
        yield seq, np.searchsorted(offsets, seq, side="right") - 1


def _recorded_tokens(schedule: Schedule, records: Records) -> bool:
    """Whether the run recorded any first token or token count (the files' token columns and args)."""
    first, ntok = records.sample_first_token_ns, records.sample_n_tokens
    if not (first.flags.writeable or ntok.flags.writeable):
        return False
    nq = records.n_queries_issued
    ns = int(schedule.query_offsets[nq]) if nq else 0
    return any(
        bool(np.any(first[a : a + ROW_CHUNK] != NOT_SET) or np.any(ntok[a : a + ROW_CHUNK] != 0))
        for a in range(0, ns, ROW_CHUNK)
    )


def _write_samples(logs: _Logs, schedule: Schedule, records: Records) -> None:
    """The compact per-sample file (logs.samples), from the arrays after the run, ROW_CHUNK samples
    at a time: nothing the size of the run is allocated beside the records themselves."""
    tokens = _recorded_tokens(schedule, records)
    origin = logs.origin_ns
    end = _rows_end(schedule, records)

    def chunks() -> Iterator[SampleColumns]:
        for seq, query in _row_chunks(schedule, records, ROW_CHUNK, end):
            issue = records.query_issued_ns[query]
            first = records.sample_first_token_ns[seq] if tokens else None
            yield SampleColumns(
                origin_ns=origin,
                seq=seq,
                query=query,
                sample_idx=schedule.sample_index[seq],
                issue_ns=issue - origin,
                latency_ns=records.sample_done_ns[seq] - issue,
                scheduled_ns=records.query_scheduled_ns[query] - issue,
                has_first=None if first is None else first != NOT_SET,
                first_token_ns=None if first is None else first - issue,
                n_tokens=records.sample_n_tokens[seq] if tokens else None,
            )

    write_sample_chunks(logs.samples, origin, chunks, tokens=tokens)


def _write_trace(trace: TraceLog, schedule: Schedule, records: Records) -> None:
    """Per-sample events from the arrays, after the run (never from the timed path), streamed to the
    file TRACE_CHUNK samples at a time. Each event also carries its query's scheduled time and, in
    runs that recorded tokens, the sample's first token time and token count (docs/architecture.md,
    the trace)."""
    if not trace.enabled:
        return
    tokens = _recorded_tokens(schedule, records)
    first, ntok = records.sample_first_token_ns, records.sample_n_tokens
    for seq, query_of in _row_chunks(schedule, records, TRACE_CHUNK, _rows_end(schedule, records)):
        trace.samples(
            seq,
            query_of,
            schedule.sample_index[seq],
            records.query_issued_ns[query_of],
            records.sample_done_ns[seq],
            scheduled_ns=records.query_scheduled_ns[query_of],
            first_token_ns=first[seq] if tokens else None,
            n_tokens=ntok[seq] if tokens else None,
        )


def _expected_latency_s(eff: EffectiveSettings) -> float:
    """How long one query is expected to take, by the settings: the SingleStream/MultiStream expected
    latency, the Server latency bound (its TTFT bound in token runs), 0 for Offline (its one query
    is the whole run; its samples complete as it goes)."""
    if eff.scenario == Scenario.OFFLINE:
        return 0.0
    if eff.scenario == Scenario.SERVER:
        return (eff.server_ttft_latency if eff.use_token_latencies else eff.target_latency_ns) / 1e9
    return 1.0 / eff.target_qps if eff.target_qps > 0 else 0.0


def _power_window(records: Records, wall_ref: dt.datetime, clock_ref: int) -> tuple[dt.datetime, dt.datetime]:
    """The official power window (loadgen.cc, "Fix power end timestamp"): from the start of issue to
    the last completion, on the wall clock; its length is the run's own span, which the checker
    compares with the durations the results imply (loadgen.logs.recompute)."""
    start = int(records.start_ns) if records.start_ns > 0 else clock_ref  # > 0: issuing began
    done = records.sample_done_ns[: records.n_samples_issued]
    last = int(done.max()) if done.shape[0] else start
    begin = wall_ref + dt.timedelta(microseconds=(start - clock_ref) / 1000)
    return begin, begin + dt.timedelta(microseconds=max(last - start, 0) / 1000)


def _power_time(t: dt.datetime) -> str:
    return t.strftime("%m-%d-%Y %H:%M:%S.") + f"{t.microsecond // 1000:03d}"


_run_lock = threading.Lock()


def run_test(
    sut: SystemUnderTest,
    qsl: QuerySampleLibrary,
    settings: TestSettings,
    log_settings: LogSettings | None = None,
    options: EngineOptions | None = None,
    *,
    progress: ProgressHooks | None = None,
    clock: Clock | None = None,
    **option: object,
) -> RunOutcome:
    """Run one test (official StartTest) and return its outcome; logs go where `log_settings` says,
    run as `options` says (options.EngineOptions: the engine's options, stated there once). A keyword
    named after one of its fields replaces that field (`run_test(..., audit_config=None)`); any other
    is a TypeError. The logs are marked incomplete and KeyboardInterrupt is raised after Ctrl-C
    (options.drain_s); a raising SUT surfaces as RunError with the written run's outcome on it.

    A `sink.StartableSUT` is given the run's sink before the first issue; a `sink.ReportingSUT`'s
    report is written into the logs before they close. The SUT is not closed here (the caller owns
    it; `proctor.app.session` closes it).
    """
    options = options or EngineOptions()
    if option:
        options = dataclasses.replace(options, **cast("dict[str, Any]", option))  # an unknown name: TypeError
    check_sut_qsl(sut, qsl)  # a missing member is one line before the run, not an error inside it
    options.check(settings)
    if not _run_lock.acquire(blocking=False):
        raise RunError("another run is already in progress in this process")
    try:
        with contextlib.ExitStack() as owning:
            try:  # one process writes a log folder at a time (output_lock): a second is refused
                owning.enter_context(output_lock.owned(log_settings.log_output.outdir if log_settings else "."))
            except OSError as exc:
                raise RunError(f"cannot open log file {exc.filename}: {exc.strerror}") from exc
            return Run(
                sut, qsl, settings, log_settings or LogSettings(), options, progress=progress, clock=clock
            ).execute()
    finally:
        _run_lock.release()


__all__ = ["Metric", "RunOutcome", "log_paths", "metric_name", "metric_of", "run_test", "sut_report_lines"]
