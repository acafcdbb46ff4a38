"""The demo's inference part: `digits` in Offline, Server and SingleStream, as a user runs it.

    probes -> size_inference -> per scenario: a performance and an accuracy run (session.run), the
    accuracy script, the TEST01/TEST04 audits (audits.run_audits over session.session_runner)
    -> `proctor submission package` (submission.package) -> the submission checker -> rows

Each run builds the digits SUT from its `--sut` spec (`session.build_sut`, the registry) and hands it
to the run session, which closes it after the run (`ClosableSUT`: on Ctrl-C it drops what is still queued); nothing here
touches the SUT itself.

The verdict must not depend on machine load (docs/deviations.md, "proctor demo"): each scenario is
sized so that a noisy probe cannot break a rule other than `min_duration` (see `size_inference`),
and the timed verdicts (a Server latency bound, an audit's performance comparison) are expected as
the run itself measured them (`measured_rules`, `_run_audits`).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from proctor.app.demo.interrupt import StopFlag
from proctor.app.demo.options import SUBMITTER, SYSTEM, DemoOptions, Durations, Echo
from proctor.app.demo.systems import system_description
from proctor.app.demo.table import (
    AUDIT_RULE,
    SHORT_RULE,
    DemoReport,
    Row,
    findings_row,
    rule_ids,
    verdict_row,
)
from proctor.errors import RunError
from proctor.typed_records import field, record

if TYPE_CHECKING:
    from proctor.audits.run import Runner
    from proctor.loadgen.engine import RunOutcome
    from proctor.loadgen.resolve import Resolved
    from proctor.loadgen.results import PerformanceResult

INFERENCE_BENCHMARK = "digits"
SCENARIOS = ("Offline", "Server", "SingleStream")
SUT_SPEC = "digits:backend=numpy,precision=fp32"  # the SUT, as `proctor run --sut` names it

# --- sizing: bounds, not estimates -------------------------------------------------------------
PROBES = 3  # Offline probes; the fastest counts (noise only ever slows a probe down)
PROBE_QPS = 100_000  # asked of each probe: enough samples that per-run overheads do not dominate
OFFLINE_OVERASK = 1.5  # Offline asks this x the fastest probe (a short Offline run only adds min_duration)
MIN_OFFLINE_QPS = 1_000.0  # keeps the Offline query above digits' 600-sample minimum in any mode
SERVER_SHARE = 0.05  # Server asks 5% of the fastest probe's capacity ...
MIN_SERVER_QPS = 250.0  # ... but at least this (early stopping at p99 needs ~500+ queries)
# Python's default 5 ms GIL switch interval alone can push a Server query past digits' 10 ms bound
# when threads contend; the SUT is tuned for latency as a submitter would tune theirs.
SWITCH_INTERVAL_S = 0.0002
# After Ctrl-C a run's SUT gets this long to finish what it holds (the run session's `drain_s`, as
# `proctor run --drain-s`): enough for a Server or SingleStream query in flight; an Offline query's
# hundreds of thousands of queued samples never finish, and the SUT drops them when the session
# closes it, so the demo stops within a second.
DRAIN_S = 0.1
PROCTOR_ONLY_FILES = ("mlperf_log_samples.bin",)  # proctor's own per-sample file: not a submission file


@record(slots=True)
class Sizing:
    """The load each scenario is asked for, and a sentence per scenario saying how it was chosen."""

    offline_qps: float
    server_qps: float
    single_stream_ms: float
    probes_qps: tuple[float, ...] = ()
    notes: dict[str, str] = field(default_factory=dict)


def inference_settings(
    scenario: str, mode: str, min_duration_ms: int | None, sizing: Sizing, *, user_conf: Path
) -> Resolved:
    """The run's settings and short-run mark: mlperf.conf plus the demo's user.conf (written where a
    submission keeps it). The one place the demo builds settings."""
    from proctor.loadgen.resolve import Confs, resolve_settings
    from proctor.loadgen.scenarios import TestMode

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
    # the one settings pipeline (loadgen/resolve.py); digits is proctor's workload, not in mlperf.conf.
    # A run shorter than the rules' carries `short_run`, the mark `proctor run` gives it, so its logs,
    # report.html and the checker give the one verdict: valid for these settings, not a submission run.
    return resolve_settings(INFERENCE_BENCHMARK, scenario, run_mode, Confs(user_conf=user_conf), check_model=False)


def _drop_proctor_files(folder: Path) -> None:
    for name in PROCTOR_ONLY_FILES:
        (folder / name).unlink(missing_ok=True)


def _run(scenario: str, mode: str, outdir: Path, resolved: Resolved) -> RunOutcome:
    """One run through the run session (`session.run`, which closes the SUT after it); a RunError
    names the run and where its logs are."""
    from proctor.app.session import build_sut, run, run_logs
    from proctor.loadgen.options import EngineOptions
    from proctor.loadgen.settings import LogOutputSettings, LogSettings
    from proctor.suts.context import RunContext

    outdir.mkdir(parents=True, exist_ok=True)
    log = LogSettings(log_output=LogOutputSettings(outdir=str(outdir)), enable_trace=False)
    sut, qsl = build_sut(SUT_SPEC, RunContext(INFERENCE_BENCHMARK, str(resolved.settings.mode)))
    where = f"{INFERENCE_BENCHMARK} {scenario} {mode} run (logs in {outdir})"
    try:
        options = EngineOptions(audit_config=None, drain_s=DRAIN_S, short_run=resolved.short_run)
        outcome = run(sut, qsl, resolved.settings, log, options)
    except RunError as exc:
        raise RunError(f"{where}: {exc}") from exc
    # a batch the SUT failed was reported to the run (its detail log counts it); an incomplete run's
    # own reason is what the checker reports, never the batches it left behind
    if outcome.sut_failures and not outcome.incomplete:
        raise RunError(f"{where}: {run_logs(outcome).problem}")
    return outcome


def _probe_offline(work: Path, probe_ms: int, stop: StopFlag, echo: Echo) -> tuple[float, ...]:
    """Samples/s of PROBES short Offline runs (a submitter's first measurement)."""
    sizing = Sizing(PROBE_QPS, MIN_SERVER_QPS, 1.0)
    got = []
    for i in range(PROBES):
        stop.check()
        echo(f"probing Offline throughput ({i + 1}/{PROBES}) ...")
        resolved = inference_settings(
            "Offline", "performance", probe_ms, sizing, user_conf=work / "probe" / "user.conf"
        )
        out = _run("Offline", "performance", work / "probe", resolved)
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


def measured_rules(result: PerformanceResult | None) -> tuple[tuple[str, ...], str]:
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


def _write_accuracy_txt(folder: Path) -> None:
    """What the benchmark's accuracy script prints for the accuracy log in `folder`, as accuracy.txt."""
    from proctor.workloads.digits.accuracy import evaluate

    (folder / "accuracy.txt").write_text(evaluate(folder / "mlperf_log_accuracy.json").line() + "\n")


def _write_side_files(runs: Path, system_json: Path) -> None:
    """What `proctor submission package` takes besides the logs: system, README, measurements."""
    from proctor.submission.describe import MEASUREMENTS_FILE, write_json

    write_json(
        system_json,
        system_description(division="closed", status="available", framework="numpy (proctor digits SUT)"),
    )
    runs.mkdir(parents=True, exist_ok=True)
    (runs / "README.md").write_text(
        "The SUT is proctor's `digits` reference workload (src/proctor/workloads/digits), numpy backend;\n"
        "`proctor demo` ran each scenario with the user.conf beside its results.\n"
    )
    write_json(
        runs / MEASUREMENTS_FILE,
        {
            "input_data_types": "fp32",
            "retraining": "no",
            "starting_weights_filename": "weights_fp32.npz",
            "weight_data_types": "fp32",
            "weight_transformations": "none",
        },
    )


def _audit_runner(scenario: str, resolved: Resolved, stop: StopFlag) -> Runner:
    """The run session's audits `Runner` (`proctor audit`'s: a fresh SUT per run, closed after it),
    marked as the demo's short runs are; Ctrl-C stops it like the other runs."""
    from proctor.app.choices import Engine
    from proctor.app.session import session_runner
    from proctor.audits.run import RunLogs
    from proctor.loadgen.options import EngineOptions
    from proctor.loadgen.settings import TestSettings

    options = EngineOptions(drain_s=DRAIN_S, short_run=resolved.short_run)
    runner = session_runner(SUT_SPEC, Engine.PROCTOR, options, trace=False, benchmark=INFERENCE_BENCHMARK)

    def run(settings: TestSettings, outdir: Path, conf: Path | None) -> RunLogs:
        stop.check()
        try:
            logs = runner(settings, outdir, conf)
        except RunError as exc:
            raise RunError(f"{INFERENCE_BENCHMARK} {scenario} audit run (logs in {outdir}): {exc}") from exc
        _drop_proctor_files(outdir)
        return logs

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
    from proctor.audits.run import Layout, Tree, run_audits
    from proctor.audits.specs import SPECS, Truncation, required_audits

    d = opts.audit_durations
    conf = work / "audit_conf" / scenario / "user.conf"  # the result's user.conf stays untouched
    resolved = inference_settings(scenario, "performance", d.for_scenario(scenario), sizing, user_conf=conf)
    tree = Tree(work / "audits", SYSTEM, INFERENCE_BENCHMARK, scenario, Layout.RESULTS, results=scen, audits=scen)
    audits = required_audits(INFERENCE_BENCHMARK)
    outcomes = run_audits(_audit_runner(scenario, resolved, stop), resolved.settings, INFERENCE_BENCHMARK, tree, audits)
    notes = []
    for o in outcomes:
        nums = ", ".join(
            f"{k} {x:.4g}"
            for verdict in o.verdicts
            for k, x in verdict.numbers.items()
            if k.endswith("score") and isinstance(x, float)
        )
        notes.append(f"{o.audit} {'PASS' if o.passed else 'FAIL'}" + (f" ({nums})" if nums else ""))
        if SPECS[o.audit].truncation is Truncation.APPEND:  # the accuracy script on its log: truncated with its hash
            _write_accuracy_txt(o.folder / "accuracy")
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
            stop.check()
            resolved = inference_settings(scenario, mode, d.for_scenario(scenario), sizing, user_conf=user_conf)
            echo(f"inference {INFERENCE_BENCHMARK} {scenario} {mode} ...")
            out = _run(scenario, mode, out_dir, resolved)
            _drop_proctor_files(out_dir)  # not part of a submission's result folders
            if mode == "performance":
                rules, why = measured_rules(out.result)
                report.measured_rules[scenario] = rules
                if why:
                    report.sizing[scenario] += f"; this run: {why} (the checker must say so too)"
                (out_dir / "mlperf_log_accuracy.json").unlink(missing_ok=True)
            else:
                _write_accuracy_txt(out_dir)
            report.timings_s[f"inference_{scenario}_{mode}"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        stop.check()
        echo(f"inference {INFERENCE_BENCHMARK} {scenario} audits (TEST01, TEST04) ...")
        _run_audits(scenario, scen, work, sizing, opts, report, stop)
        report.timings_s[f"inference_{scenario}_audits"] = time.perf_counter() - t0


def _under(path: str | None, folder: str) -> bool:
    return path is not None and Path(path).is_relative_to(folder)


def _checker_rows(opts: DemoOptions, root: Path, work: Path, report: DemoReport) -> None:
    """One row per result the submission checker read, one for everything else it found."""
    from proctor.checks.loadgen_origin import UNOFFICIAL, unofficial_verdict
    from proctor.checks.submission import check_submission
    from proctor.submission.describe import write_json

    t0 = time.perf_counter()
    # proctor's engine wrote the demo's logs: checked as for development (each log's unofficial_loadgen
    # finding a warning), and the verdict says the tree is not submittable
    sr = check_submission(root, allow_unofficial_loadgen=True)
    report.timings_s["inference_checker"] = time.perf_counter() - t0
    report.findings.extend(sr.findings)
    if sr.unofficial_logs:
        report.not_submittable = unofficial_verdict(sr.unofficial_logs, True)
    write_json(work / "submission_check.json", sr.to_dict())
    short = (SHORT_RULE,) if opts.durations.min_duration_ms is not None else ()
    for res in sr.results:
        mine = [f for f in sr.findings if f.failed and _under(f.path, res.path)]
        unit = f" {res.units}" if res.units else ""
        report.rows.append(
            Row(
                part="inference",
                item=f"{res.benchmark} {res.scenario} ({res.metric})",
                result="-" if res.value is None else f"{res.value:,.5g}{unit}",
                valid=res.valid,
                why="; ".join(sorted({f"{f.rule}: {f.message}" for f in mine})) or "every check passed",
                value=res.value,
                rules=rule_ids(mine),
                expected_rules=tuple(sorted({*short, *report.measured_rules.get(str(res.scenario), ())})),
            )
        )
    rest = [
        f
        for f in sr.findings
        if (not f.failed and f.rule != UNOFFICIAL) or (f.failed and not any(_under(f.path, r.path) for r in sr.results))
    ]
    errors = sum(f.failed for f in rest)
    report.rows.append(
        findings_row(
            "inference", "submission checker: layout, systems", f"{errors} errors, {len(rest) - errors} warnings",
            rest, passed="layout and system description pass; no warnings",
        )
    )


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
            verdict_row(
                "inference",
                f"digits accuracy vs {frac * 100:g}% of FP32 ({REFERENCE_ACCURACY}%)",
                "-" if value is None else f"{value:.3f}%",
                passed=ok,
                why=f"{value}% {'>=' if ok else '<'} target {target:.3f}%",
                value=value,
                rule="accuracy",
            )
        )
    return rows


def run_inference(
    opts: DemoOptions, root: Path, work: Path, echo: Echo, report: DemoReport, stop: StopFlag
) -> None:
    """The runs into `work/runs`, the tree into `root` (`proctor submission package`), the checker's
    rows and the accuracy rows. Python's GIL switch interval is lowered for the runs (restored)."""
    from proctor.rules.rounds import CURRENT_ROUND
    from proctor.submission.package import package

    runs, system_json = work / "runs", work / f"{SYSTEM}.json"
    previous = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    try:
        _write_side_files(runs, system_json)
        _run_scenarios(opts, runs, work, echo, report, stop)
        stop.check()
        echo("inference submission package ...")
        # the official layout; the accuracy logs truncated with their hashes
        package(runs, root, submitter=SUBMITTER, system_json=system_json, division="closed", version=CURRENT_ROUND)
        echo("inference submission checker ...")
        _checker_rows(opts, root, work, report)
        report.rows.extend(_accuracy_rows(root / "closed" / SUBMITTER))
    finally:
        sys.setswitchinterval(previous)


__all__ = [
    "INFERENCE_BENCHMARK",
    "SCENARIOS",
    "SUT_SPEC",
    "Sizing",
    "inference_settings",
    "measured_rules",
    "run_inference",
    "size_inference",
]
