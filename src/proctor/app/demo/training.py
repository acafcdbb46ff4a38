"""The demo's training part: N runs of `digits_train`, packaged and checked as a user does it.

    training init (the runs folder's system.json) -> training train (RUNS/digits_train/result_*.txt)
    -> training package (the official layout) -> check-log, seeds, check-rcp, olympic score,
    check-package

The runs go to `<output>/work/training_runs/`, the package to `<output>/training/<submitter>/`
(`submission.training_package.package_runs`); each run is checked as it ends, the package once.
"""

from __future__ import annotations

import shlex
import time
from dataclasses import replace
from pathlib import Path

from proctor.app.demo.interrupt import StopFlag
from proctor.app.demo.options import SUBMITTER, SYSTEM, DemoOptions, Echo
from proctor.app.demo.systems import training_system_description
from proctor.app.demo.table import DemoReport, Row, findings_row, rule_ids, severity_text, verdict_row
from proctor.errors import RunError

TRAINING_RULESET = "6.1.0"
CODE_README = "The reference implementation: src/proctor/workloads/digits_train (proctor training train).\n"


def run_training(
    opts: DemoOptions, root: Path, work: Path, echo: Echo, report: DemoReport, stop: StopFlag
) -> None:
    """The runs into `work/training_runs`, their package into `root/<submitter>`, and a row per run
    and per check."""
    from proctor.submission.describe import SYSTEM_FILE, write_json
    from proctor.submission.training_package import package_runs
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
    runs = work / "training_runs"
    # what `proctor training init` writes, with what the demo knows filled in
    write_json(runs / SYSTEM_FILE, training_system_description(framework=f"{opts.backend} (proctor digits_train)"))
    run_dir = runs / BENCHMARK
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "README.md").write_text(CODE_README)  # the package's benchmarks/<benchmark>/README.md
    t0 = time.perf_counter()
    for i, seed in enumerate(run_seeds(n, opts.base_seed)):
        stop.check()
        echo(f"training {BENCHMARK} run {i + 1}/{n} (seed {seed}) ...")
        path = run_dir / f"result_{i}.txt"
        r = train_run(path, seed=seed, batch_size=bs, backend=opts.backend)
        rep = check_file(r.path or path)
        fails = [f for f in rep.findings if f.failed]
        why = (
            f"complies with ruleset {TRAINING_RULESET}; "
            if rep.valid
            else "; ".join(f"{f.key}: {f.message}" for f in fails) + "; "
        ) + f"{r.status}, {r.samples_to_converge or '-'} samples to converge, seed {seed}"
        report.rows.append(
            Row(
                part="training",
                item=f"{BENCHMARK} result_{i}.txt",
                result=f"{r.seconds:.2f} s, acc {r.accuracy:.4f}",
                valid=rep.valid and r.status == "success",
                why=why,
                value=r.seconds,
                rules=tuple(sorted({*rule_ids(fails), *(("converged",) if r.status != "success" else ())})),
            )
        )
    report.timings_s["training_runs"] = time.perf_counter() - t0
    stop.check()

    t0 = time.perf_counter()
    sub = root / SUBMITTER
    package_runs(runs, sub)  # `proctor training package`: systems/, benchmarks/, results/<system>/
    bdir = sub / "results" / SYSTEM / BENCHMARK
    bad = [f for f in check_seeds(bdir) if f.failed]
    report.rows.append(
        findings_row(
            "training", "seed check", f"{n} runs, {len(bad)} problems", bad,
            passed="every run logs one seed; none repeats", text=lambda f: f.message,
        )
    )
    rcp = check_rcp(bdir, TRAINING_RULESET, set_scaling=True, extra_benchmarks=bench)
    report.rows.append(
        verdict_row(
            "training",
            f"RCP check (BS {bs}, shipped RCPs)",
            f"mean {rcp.submission_mean:,.0f} vs min {rcp.min_allowed:,.0f} samples"
            if rcp.min_allowed is not None and rcp.submission_mean is not None
            else rcp.message,
            passed=rcp.passed,
            why=f"{rcp.message}; scaling factor {rcp.scaling_factor or 1.0:.4f}",
            value=rcp.submission_mean,
            rule="rcp",
        )
    )
    score = score_run_set(
        read_run_set(bdir, ruleset=TRAINING_RULESET),
        runs_required=n,
        compliance=lambda p: check_file(p).valid,
    )
    report.rows.append(
        verdict_row(
            "training",
            f"{BENCHMARK} olympic score",
            "-" if score.score_minutes is None else f"{score.score_minutes * 60:.3f} s",
            passed=score.valid,
            why="; ".join(f.message for f in score.findings if f.failed)
            or f"olympic mean of {n - 2} runs (dropped {', '.join(score.dropped)})",
            value=score.score_minutes,
            rule="score",
        )
    )
    pkg = check_package(sub, TRAINING_RULESET, extra_benchmarks=bench)
    write_json(work / "training_package_check.json", pkg.to_dict())
    noted = [f for f in pkg.findings if f.severity.value != "info"]
    report.rows.append(
        findings_row(
            "training", "package checker (systems, run count, compliance, seeds, RCP)",
            f"{len(pkg.checked)} benchmark folder(s), {len(noted)} findings", noted,
            passed="the package passes every check", text=severity_text,
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


__all__ = ["TRAINING_RULESET", "run_training", "training_check_commands"]
