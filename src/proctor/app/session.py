"""A run session: one owner for a whole run, from its settings to its verdict.

    settings -> SUT -> engine (proctor's or the official) -> RunOutcome (one type for both)
             -> annotations (written by the engine before its logs close) -> verdict -> report

`proctor run`, `proctor audit`, the demo and FindPeakPerformance runs go through here; the CLI only
parses options, calls `RunSession.execute` (or `run` / `session_runner`) and prints what it returns.
Nothing here prints, and nothing here writes a run's logs: the engines do.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from proctor.app.accuracy_scoring import check_script, score_accuracy_run
from proctor.app.choices import QUICK_DURATION_MS, Engine
from proctor.errors import ConfigError, ProctorError, RunError
from proctor.loadgen import output_lock, stop_signals
from proctor.loadgen.logs.detail import BENCHMARK_KEY
from proctor.loadgen.options import DRAIN_S, EngineOptions
from proctor.loadgen.resolve import Confs, Overrides, Resolved, check_for_qsl, resolve_settings
from proctor.loadgen.settings import LogOutputSettings, LogSettings, TestSettings
from proctor.loadgen.types import (
    ClosableSUT,
    ExportingSUT,
    OverridingSUT,
    QuerySampleLibrary,
    Scenario,
    SystemUnderTest,
    TestMode,
    check_sut_qsl,
)
from proctor.suts.context import RunContext
from proctor.suts.spec import SutSpec, as_spec
from proctor.typed_records import field, record

if TYPE_CHECKING:
    from proctor.audits.run import RunLogs
    from proctor.loadgen.engine import RunOutcome
    from proctor.loadgen.progress import ProgressHooks
    from proctor.loadgen.results import SLOTargets

def build_settings(
    scenario: Scenario | str,
    mode: TestMode | None,
    model: str,
    user_conf: Path | str | None,
    *,
    duration_ms: int | None = None,
    target_qps: float | None = None,
    expected_latency_ms: float | None = None,
    min_queries: int | None = None,
    max_duration_ms: int | None = None,
    labels: Mapping[str, str] | None = None,
) -> Resolved:
    """A run's settings: `resolve_settings` with the options as overrides, each named in messages
    by `labels` (the CLI's flags: `RunRequest.option_names`), and proctor's own workloads (rules'
    benchmark table) known beside mlperf.conf's models."""
    return resolve_settings(
        model,
        scenario,
        mode,
        Confs(user_conf=user_conf),
        Overrides(
            min_duration_ms=duration_ms,
            max_duration_ms=max_duration_ms,
            target_qps=target_qps,
            expected_latency_ms=expected_latency_ms,
            min_query_count=min_queries,
            labels=labels or {},
        ),
        extra_models=proctor_workloads(),
    )


def proctor_workloads() -> tuple[str, ...]:
    """proctor's own reference workloads (not in mlperf.conf): the rules table's rows it adds."""
    from proctor.rules.inference import BENCHMARKS, PROCTOR_WORKLOAD

    return tuple(b.name for b in BENCHMARKS if b.source == PROCTOR_WORKLOAD)


def sut_spec(spec: SutSpec | str, dataset: Path | None) -> SutSpec:
    """The `--sut` spec with `--dataset FILE` as its dataset parameter; ConfigError if FILE is missing."""
    parsed = as_spec(spec)
    if dataset is None:
        return parsed
    if not dataset.is_file():
        raise ConfigError(f"{dataset}: no such file (an LLM dataset file)", key="--dataset")
    return parsed.with_param("dataset", str(dataset), "--dataset")


def build_sut(spec: SutSpec | str, context: RunContext | None = None) -> tuple[SystemUnderTest, QuerySampleLibrary]:
    """The SUT and QSL a `--sut` spec names (registered, module:factory or file.py:factory); a factory
    that takes `context=` is told the run's benchmark and mode (suts/context.py)."""
    from proctor.suts import registry

    sut, qsl = registry.build(spec, context)
    try:
        check_sut_qsl(sut, qsl, f"--sut {spec}")
    except ConfigError:
        close_sut(sut)
        raise
    return sut, qsl


def generation_override(sut: object) -> str:
    """What the SUT sends instead of the benchmark's generation parameters (an `OverridingSUT`, e.g.
    the openai SUT's `max_tokens=64`), "" when it sends the benchmark's or says nothing."""
    text = sut.generation_override if isinstance(sut, OverridingSUT) else ""
    return text if isinstance(text, str) else ""  # a user's SUT may say anything


def with_generation_override(short_run: str, sut: object) -> str:
    """The run's short-run mark with the SUT's generation override added: such a run is valid for
    what it measured, not as the benchmark (rules §Additional inference parameters)."""
    override = generation_override(sut)
    if not override:
        return short_run
    note = f"generation parameters: {override}: not the benchmark's parameters"
    return f"{short_run}; {note}" if short_run else note


def close_sut(sut: object) -> None:
    """Close a `ClosableSUT` (its threads, devices, connections); others have nothing to close."""
    if isinstance(sut, ClosableSUT):
        sut.close()


def run(
    sut: SystemUnderTest,
    qsl: QuerySampleLibrary,
    settings: TestSettings,
    log_settings: LogSettings,
    options: EngineOptions | None = None,
    *,
    engine: Engine = Engine.PROCTOR,
    progress: ProgressHooks | None = None,
    close: bool = True,
) -> RunOutcome:
    """One run on either engine with the engine's `options` (loadgen.options.EngineOptions); the
    same `RunOutcome` either way, its logs annotated (short-run mark, the SUT's generation override,
    its report) by the engine before they close. The SUT is closed after the run unless `close` is
    False (the caller then owns its end). Options only proctor's engine has (the SLO targets, the
    closed loop, ...) are not the official's: it keeps no per-request records."""
    options = options or EngineOptions()
    try:
        check_sut_qsl(sut, qsl)
        options = with_override_record(options, generation_override(sut))
        if engine == Engine.OFFICIAL:
            from proctor.compat.official_engine import run_official

            return export_requests(sut, run_official(sut, qsl, settings, log_settings, options))
        from proctor.loadgen.engine import run_test

        try:
            outcome = run_test(sut, qsl, settings, log_settings, options, progress=progress)
        except RunError as exc:  # the SUT raised: its logs are written, and get what every run gets
            if exc.outcome is not None:
                exc.outcome = export_requests(sut, exc.outcome)
            raise
        return export_requests(sut, outcome)
    finally:
        if close:
            close_sut(sut)


def with_override_record(options: EngineOptions, override: str) -> EngineOptions:
    """`options` with the detail log's `proctor_generation_override` record, which the engine writes
    before its logs close: what the SUT sends instead of the benchmark's generation parameters."""
    if not override:
        return options
    from proctor.loadgen.logs.detail import GENERATION_OVERRIDE_KEY

    records = (*options.detail_records, (GENERATION_OVERRIDE_KEY, override))
    return dataclasses.replace(options, detail_records=records)


def export_requests(sut: object, outcome: RunOutcome) -> RunOutcome:
    """An `ExportingSUT` (openai `export=FILE`) writes the export now, from the run's records; the
    line saying where (or why not) joins the SUT's report lines."""
    if isinstance(sut, ExportingSUT):
        line = sut.write_export(outcome)
        if line:
            return dataclasses.replace(outcome, sut_report=[*outcome.sut_report, f"sut: {line}"])
    return outcome


# --- the verdict ------------------------------------------------------------------------------------


def _valid_line(text: str, short_run: str) -> str:
    """`VALID: ...`, or for a short run `VALID for these settings; not a submission run: why: ...`."""
    if not short_run:
        return f"VALID: {text}" if text else "VALID"
    from proctor.loadgen.logs.detail import SHORT_RUN_VERDICT

    return f"{SHORT_RUN_VERDICT}: {short_run}" + (f"; {text}" if text else "")


def _fault_lines(outcome: RunOutcome, accuracy_only: bool) -> list[str]:
    """The verdict of a run the SUT did wrong: the fault that is the true cause first, with the
    advice that follows from it; the other faults; then the checks that also failed, by their facts
    alone (their advice, e.g. a longer run or another rate, is for a run without the fault)."""
    from proctor.loadgen.results import FAULT_CHECKS
    from proctor.loadgen.sut_faults import FaultKind

    top, *others = outcome.faults
    word = "INCOMPLETE" if outcome.incomplete else "FAILED" if accuracy_only else "INVALID"
    lines = [f"{word}: {top.line}"]
    lines += [f"  - also: {f.cause}" for f in others]
    if outcome.incomplete and top.kind not in (FaultKind.RAISED, FaultKind.ABORTED, FaultKind.STALLED):
        lines.append(f"  - the run ended early: {outcome.incomplete_reason}")
    r = outcome.result
    if r is not None and not accuracy_only:
        facts = [f.fact for f in r.failures if f.check not in FAULT_CHECKS]
        if facts:
            lines.append(f"  - checks also not met (judge them again once this is fixed): {'; '.join(facts)}")
        elif outcome.valid and outcome.metric is not None:
            lines.append(f"  - the run's own checks passed: {outcome.metric.name} = {outcome.metric.text}")
    return lines


def _check_lines(outcome: RunOutcome, short_run: str, official: bool, accuracy_only: bool) -> tuple[bool, list[str]]:
    """The verdict of a run without SUT faults: VALID with the metric, or each failed check with its
    numbers and what to change; an accuracy-only run passes when it finished without errors."""
    lines = [f"INCOMPLETE: {outcome.incomplete_reason}"] if outcome.incomplete else []
    if accuracy_only:
        ok = not outcome.incomplete and outcome.errors == 0
        if ok:
            lines.append(
                f"DONE: accuracy run finished; {outcome.accuracy_samples} outputs in "
                f"{outcome.log_paths['accuracy']}"
            )
        elif not outcome.incomplete and official:
            lines.append("FAILED: accuracy run logged errors")
    elif outcome.valid:
        ok = True
        m = outcome.metric
        lines.append(_valid_line(f"{m.name} = {m.text}" if m is not None else "", short_run))
    elif not official and outcome.result is None:
        ok = False
        lines.append("INVALID: no performance result (nothing completed)")
    else:
        ok = False
        reasons = outcome.invalid_reasons or ["see the summary"]
        if len(reasons) == 1:  # the verdict line itself names the cause
            lines.append(f"INVALID: {reasons[0]}")
        else:
            lines.append(f"INVALID: {len(reasons)} checks failed:")
            lines.extend(f"  - {reason}" for reason in reasons)
    return ok, lines


def verdict(outcome: RunOutcome, short_run: str = "") -> tuple[bool, list[str]]:
    """(passed, lines) for a run on either engine. A run the SUT did wrong (`RunOutcome.faults`)
    names that first: its first line is the true cause; any other run is judged on its checks."""
    official = outcome.engine == Engine.OFFICIAL
    lines = [f"engine: official mlperf_loadgen ({outcome.wall_s:.1f} s)"] if official else []
    accuracy_only = outcome.mode == TestMode.ACCURACY_ONLY
    if outcome.faults:
        ok = False
        lines += _fault_lines(outcome, accuracy_only)
    else:
        ok, judged = _check_lines(outcome, short_run, official, accuracy_only)
        lines += judged
    if outcome.errors:
        ok = False
        if official:
            lines.extend(f"  - {m}" for m in outcome.error_messages)
        where = f"{outcome.errors} error(s) in {outcome.log_paths['detail']}"
        lines.append(where if official else f"{where} (grep error_runtime)")
    if short_run and not (ok and not accuracy_only):
        lines.append(f"note: not a submission run: {short_run}")
    return ok, lines


def slo_lines(outcome: RunOutcome) -> list[str]:
    """Per-request SLO attainment and goodput, beside the verdict (loadgen.results.Attainment)."""
    r = outcome.result
    if r is None or r.attainment is None or outcome.mode == TestMode.ACCURACY_ONLY:
        return []
    return r.attainment.lines()


def peak_lines(outcome: RunOutcome) -> list[str]:
    """FindPeakPerformance: the peak and each probe, for the verdict."""
    found = outcome.find_peak
    if found is None:
        return []
    lines = [
        f"{'peak' if found.found else 'base rate failed; no peak'}: target_qps {found.peak_qps:,.4f} "
        f"after {len(found.probes)} probes (the reported run is the last passing one)"
    ]
    lines += [
        f"  probe {p.index} {p.stage:8s} {p.target_qps:14,.4f} QPS  {'pass' if p.passed else 'FAIL'}"
        for p in found.probes
    ]
    return lines


DETAIL_LOG = "mlperf_log_detail.txt"  # = loadgen.engine.log_paths' default (kept light: the engine loads scipy)


def log_verdict(outcome: RunOutcome, lines: list[str]) -> None:
    """The verdict as printed, beside the run's logs (loadgen.logs.verdict: the engine has closed
    them, nothing is appended to them), so report.html shows the same words as the command line."""
    import contextlib

    from proctor.loadgen.logs.verdict import write_verdict

    with contextlib.suppress(OSError, ProctorError):  # the report then derives its own account from the logs
        write_verdict(outcome.log_paths["detail"].parent, lines)


def html_report(log_dir: Path, *, figures: bool = True) -> tuple[list[tuple[str, str]], str]:
    """Write report.html next to the logs: ([("report", path)], "") or ([], why it was not written).
    `figures=False` for a stopped run: the page without its figures, written in a fraction of the time."""
    from proctor.report import report_for_run

    try:
        return [("report", str(report_for_run(log_dir, figures=figures)))], ""
    except (ProctorError, OSError) as exc:
        return [], f"warning: report.html not written: {exc}"


# --- the whole run, as `proctor run` makes it ---------------------------------------------------------


@record(slots=True)
class RunRequest:
    """What `proctor run`, a sweep's point (and the library) asks of one run."""

    scenario: Scenario
    sut: SutSpec | str = "synthetic"  # `--sut`: parsed once (suts/spec.py); text is parsed when the run builds it
    mode: TestMode | None = None
    model: str = "resnet50"
    user_conf: Path | None = None
    audit_conf: Path | None = Path("audit.config")  # None: no audit.config (a sweep's points)
    output_dir: Path = Path("proctor-logs")
    dataset: Path | None = None
    duration_ms: int | None = None
    max_duration_ms: int | None = None
    target_qps: float | None = None
    expected_latency_ms: float | None = None
    min_queries: int | None = None
    timeout_s: float | None = None
    drain_s: float = DRAIN_S
    trace: bool = False  # the Chrome trace; the compact samples file is always written
    report: bool = True
    engine: Engine = Engine.PROCTOR
    accuracy_script: str | None = None  # an accuracy run's scorer (app/accuracy_scoring.py)
    fit: bool = False  # Offline: a run the SUT finished before min_duration is made again, sized by it
    slo: SLOTargets | None = None  # per-request SLO targets (None: the benchmark's bounds)
    # > 0: a closed loop keeping this many queries in flight (`proctor sweep --concurrency`): not an
    # MLPerf scenario, run on SingleStream settings (`resolve`)
    concurrency: int = 0
    early_stopping_extension: bool = True  # False: a Server run stops where the official LoadGen stops
    # how the caller names each setting and option in messages and the engine's advice (the CLI: its
    # flags); absent: the setting's own name
    option_names: Mapping[str, str] = field(default_factory=dict)

    def resolve(self) -> Resolved:
        """The run's settings. A closed loop (`concurrency` N) ends at --duration-ms: its expected
        latency is divided by N so enough queries are generated, its min_query_count is N unless
        --min-queries says otherwise, and equal issue (LLM benchmarks), which pads the query count to
        whole passes over the loaded set, is off (it would outlast --duration-ms by minutes)."""
        n = self.concurrency
        resolved = build_settings(
            self.scenario,
            self.mode,
            self.model,
            self.user_conf,
            duration_ms=self.duration_ms,
            target_qps=self.target_qps,
            expected_latency_ms=self.expected_latency_ms,
            # SingleStream's 1024 queries at one in flight would keep a 0.5 s LLM request busy for 9 minutes
            min_queries=n if n > 0 and self.min_queries is None else self.min_queries,
            max_duration_ms=self.max_duration_ms,
            labels=self.option_names,
        )
        if n <= 0:
            return resolved
        s = resolved.settings
        closed = dataclasses.replace(
            s,
            single_stream_expected_latency_ns=s.single_stream_expected_latency_ns / n,
            sample_concatenate_permutation=False,
        )
        return dataclasses.replace(resolved, settings=closed)

    def options(self, short_run: str) -> EngineOptions:
        """The engine's options for this run, with its short-run mark."""
        return EngineOptions(
            audit_config=self.audit_conf,
            timeout_s=self.timeout_s,
            drain_s=self.drain_s,
            short_run=short_run,
            early_stopping_extension=self.early_stopping_extension,
            concurrency=self.concurrency,
            slo=self.slo,
            detail_records=((BENCHMARK_KEY, self.model),),  # which benchmark the run stands for
            labels=self.option_names,  # the engine's advice names the options as the caller does
        )

    def log_settings(self, outdir: Path | None = None) -> LogSettings:
        return LogSettings(log_output=LogOutputSettings(outdir=str(outdir or self.output_dir)), enable_trace=self.trace)


@record(slots=True)
class SessionResult:
    """What a session hands the CLI to print: the outcome, the verdict and where things are."""

    outcome: RunOutcome
    ok: bool
    lines: list[str]  # the verdict, FindPeakPerformance's probes, the SUT's report, notes
    paths: list[tuple[str, str]]  # (name, path): the logs, report.html
    warnings: list[str] = field(default_factory=list)
    failure: BaseException | None = None  # the SUT's exception that ended the run (its traceback: --debug)
    verdict: list[str] = field(default_factory=list)  # the verdict's own lines (`verdict`), the first of `lines`


class RunSession:
    """One `proctor run`: settings (ConfigError when refused) -> SUT -> `run` -> verdict -> report.

    `prepare` resolves the settings and builds the SUT (so a bad option fails before anything runs);
    `execute` runs it and judges."""

    def __init__(self, request: RunRequest) -> None:
        self.request = request
        self.resolved: Resolved | None = None
        self._built: tuple[SystemUnderTest, QuerySampleLibrary] | None = None
        self._spec: SutSpec | None = None  # the request's --sut with --dataset, parsed once in prepare

    def prepare(self) -> Resolved:
        req = self.request
        self.resolved = req.resolve()
        output_lock.check_free(req.output_dir)  # another run writing there: refused before the SUT is built
        check_script(req.accuracy_script, self.resolved.settings.mode, req.dataset)
        if req.fit and self.resolved.settings.scenario != Scenario.OFFLINE:
            raise ConfigError(
                f"--fit sizes Offline runs (the one query's samples); a {self.resolved.settings.scenario} run "
                "lasts its schedule: drop --fit", key="--fit"
            )
        self._spec = sut_spec(req.sut, req.dataset)
        self._built = self._build()
        return self.resolved

    def _build(self) -> tuple[SystemUnderTest, QuerySampleLibrary]:
        req = self.request
        assert self.resolved is not None and self._spec is not None
        context = RunContext(req.model, str(self.resolved.settings.mode))
        sut, qsl = build_sut(self._spec, context)
        try:  # settings that only the QSL's size refuses (an index past it), before anything runs
            check_for_qsl(self.resolved, req.audit_conf, qsl.total_sample_count, qsl.performance_sample_count)
        except ConfigError:
            close_sut(sut)
            raise
        return sut, qsl

    def _run(self, built: tuple[SystemUnderTest, QuerySampleLibrary], settings: TestSettings, short_run: str,
             progress: ProgressHooks | None) -> RunOutcome:
        req = self.request
        sut, qsl = built
        return run(
            sut,
            qsl,
            settings,
            req.log_settings(),
            req.options(short_run),
            engine=req.engine,
            progress=progress if req.engine == Engine.PROCTOR else None,
        )

    def _fit(self, outcome: RunOutcome, short_run: str, progress: ProgressHooks | None,
             say: Callable[[str], None]) -> tuple[RunOutcome, list[str]]:
        """--fit: an Offline run the SUT finished before min_duration (it outran --target-qps) is made
        again asking RESIZE_MARGIN x the rate the whole run measured, at most RESIZES times, as the
        audits size their reference runs (`audits.run.sized_offline`); never from a probe. Returns
        the last run and a note per run made again."""
        from proctor.audits.run import RESIZES, sized_offline

        assert self.resolved is not None
        settings, notes = self.resolved.settings, []
        for k in range(RESIZES):
            sized = sized_offline(settings, run_logs(outcome))
            if sized is None:
                break
            settings, why = sized
            try:
                built = self._build()
            except ConfigError as exc:  # e.g. a node that died in the run: the run stands as it is
                notes.append(f"note: --fit: run {k + 1} {why.partition(': made again')[0]}; not made again: {exc}")
                break
            notes.append(f"note: --fit: run {k + 1} {why}")
            say(notes[-1])
            self._built = built
            outcome = self._run(built, settings, short_run, progress)
        return outcome, notes

    def execute(
        self, progress: ProgressHooks | None = None, say: Callable[[str], None] | None = None
    ) -> SessionResult:
        """Run and judge, holding the output folder (output_lock) throughout; `say` hears each line
        worth telling while it runs (--fit: why a run is made again), which the verdict's lines repeat."""
        try:
            with output_lock.owned(self.request.output_dir, "proctor run"):
                return self._execute(progress, say)
        except output_lock.FolderInUse:
            if self._built is not None:
                close_sut(self._built[0])
            raise

    def _execute(self, progress: ProgressHooks | None, say: Callable[[str], None] | None) -> SessionResult:
        if self.resolved is None or self._built is None:
            self.prepare()
        assert self.resolved is not None and self._built is not None
        req, resolved = self.request, self.resolved
        short_run = with_generation_override(resolved.short_run, self._built[0])
        failure: RunError | None = None
        notes: list[str] = []
        try:
            outcome = self._run(self._built, resolved.settings, short_run, progress)
            if req.fit:
                outcome, notes = self._fit(outcome, short_run, progress, say or (lambda line: None))
        except RunError as exc:  # the SUT raised: a run with logs is judged and reported all the same
            if exc.outcome is None:
                raise
            outcome, failure = exc.outcome, exc
        except KeyboardInterrupt as exc:  # stopped: the logs are whole, marked incomplete; their report
            from proctor.loadgen.engine import RunOutcome  # and the verdict of what was written go up

            if req.report and req.engine == Engine.PROCTOR and (req.output_dir / DETAIL_LOG).is_file():
                html_report(req.output_dir, figures=False)  # the stop waits for no figure
            partial = stop_signals.partial_of(exc)
            if isinstance(partial, RunOutcome):
                _, lines = verdict(partial, short_run)
                stop_signals.keep_partial(exc, SessionResult(partial, False, lines, [("logs", str(req.output_dir))]))
            raise
        ok, lines = verdict(outcome, short_run)
        judged = list(lines)
        lines += notes
        qsl = self._built[1]
        log_dir = outcome.log_paths["detail"].parent
        # issue 23: an accuracy run writes accuracy.txt and says its score against the target
        if failure is None:
            ok, scored = score_accuracy_run(ok, lines, outcome, qsl, req.model, req.accuracy_script, req.dataset)
        else:
            scored = []
        if req.engine == Engine.OFFICIAL:  # the official logs alone: no table, no report
            return SessionResult(outcome, ok, lines, [("logs", str(log_dir)), *scored], failure=failure, verdict=judged)
        log_verdict(outcome, lines)
        lines += slo_lines(outcome)
        lines += peak_lines(outcome)
        lines += outcome.sut_report
        if req.audit_conf is not None and req.audit_conf.is_file():
            lines.append(f"note: {req.audit_conf} was applied (as the official LoadGen applies audit.config)")
        paths = [("logs", str(log_dir)), *scored]
        warnings: list[str] = []
        if req.report:  # issue 15: the HTML report next to the logs, for every run that wrote them
            more, warning = html_report(log_dir)
            paths += more
            warnings += [warning] if warning else []
        return SessionResult(outcome, ok, lines, paths, warnings, failure, judged)


# --- audits: one run per call, each with a freshly built SUT -------------------------------------------


def session_runner(
    spec: SutSpec | str,
    engine: Engine,
    options: EngineOptions,
    *,
    trace: bool,
    build: Callable[[], tuple[Any, Any]] | None = None,
    benchmark: str = "",
    token_ids: bool = False,
) -> Callable[[TestSettings, Path, Path | None], RunLogs]:
    """An audits `Runner`: each call builds the SUT of `spec` (or calls `build`), runs it through
    `run` with `options` (each call's audit.config in place of theirs, the SUT's generation override
    added to their short-run mark) into the given folder and says where its logs are and what went
    wrong. `benchmark` (the `--model`), each run's mode and `token_ids` (TEST06 reads the responses as
    token ids) are the SUT's `RunContext`."""

    def runner(settings: TestSettings, outdir: Path, conf: Path | None) -> RunLogs:
        outdir.mkdir(parents=True, exist_ok=True)
        log_settings = LogSettings(log_output=LogOutputSettings(outdir=str(outdir)), enable_trace=trace)
        context = RunContext(benchmark, str(settings.mode), token_ids) if benchmark else None
        sut, qsl = build() if build is not None else build_sut(spec, context)
        short_run = with_generation_override(options.short_run, sut)
        mine = dataclasses.replace(options, audit_config=conf, short_run=short_run)
        outcome = run(sut, qsl, settings, log_settings, mine, engine=engine)
        return run_logs(outcome)

    return runner


def run_logs(outcome: RunOutcome) -> RunLogs:
    """An audit's view of a run: its three logs and why it failed ("" when it did not)."""
    from proctor.audits.run import RunLogs

    paths = outcome.log_paths
    problem = ""
    if outcome.incomplete:
        problem = f"incomplete: {outcome.incomplete_reason}"
    elif outcome.sut_failures:
        problem = f"{outcome.sut_failures} SUT failure(s) reported"
    elif outcome.errors:
        problem = f"{outcome.errors} error(s) in {paths['detail']}"
    return RunLogs(paths["detail"], paths["summary"], paths["accuracy"], outcome.errors, problem)


__all__ = [
    "QUICK_DURATION_MS",
    "Engine",
    "RunRequest",
    "RunSession",
    "SessionResult",
    "build_settings",
    "build_sut",
    "close_sut",
    "generation_override",
    "html_report",
    "peak_lines",
    "run",
    "run_logs",
    "session_runner",
    "slo_lines",
    "sut_spec",
    "verdict",
    "with_generation_override",
]
