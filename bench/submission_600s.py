"""A closed edge resnet50 submission from proctor's own runs at the rules' durations, checked twice.

The synthetic SUT stands in for resnet50 (src/proctor/submission/standin.py says what its accuracy
means). For each edge scenario (SingleStream, MultiStream, Offline): a performance run, an accuracy
run over the whole 50000-sample dataset, and the TEST01 and TEST04 audit runs with the official
audit.config lines, all with mlperf.conf's 600 s minimum (`--duration-ms` shortens them for a dry
run). The runs are separate `proctor run` processes started together: the SUT sleeps its service
time, so they need little CPU, and a loaded machine only makes a run longer, never shorter (Offline
asks for no more than the SUT can serve, so it cannot end before 600 s). Then `proctor audit
--audit-logs` verifies each audit, `proctor submission package` builds the tree and runs proctor's
checker, and the official checker runs on the tree if --inference-repo (or PROCTOR_INFERENCE_REPO)
names a mlcommons/inference checkout.

    PYTHONPATH=src python bench/submission_600s.py -o /tmp/sub600 [--duration-ms 2000]

Wall time: about 11-12 minutes at the rules' durations (Offline: 528k samples at 800/s; the
SingleStream accuracy run: 50000 queries of 10 ms).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from proctor.audits.specs import audit_config, required_audits
from proctor.loadgen.conf import shipped_mlperf_conf

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root, for tests.support
from tests.support.official_submission import run_official_checker  # noqa: E402
from tests.support.standin import MEASUREMENTS, accuracy_line, system_json, write_json  # noqa: E402

MODEL = "resnet50"
SCENARIOS = ("SingleStream", "MultiStream", "Offline")
SUBMITTER, SYSTEM, ROUND = "proctor", "synthetic_edge", "v6.1"
# One worker serving batches of up to 8 samples in 10 ms: SingleStream and MultiStream queries take
# 10 ms (60k queries in 600 s; scheduling jitter is small beside 10 ms, so an audit run and its
# reference measure alike), Offline at most 800 samples/s. The QSL is ImageNet's size.
SUT = "synthetic:service_us=10000,workers=1,batch=8,total=50000,perf=1024"
USER_CONF = (
    "# proctor bench/submission_600s.py: the synthetic SUT standing in for resnet50\n"
    f"{MODEL}.SingleStream.target_latency = 10\n"
    f"{MODEL}.MultiStream.target_latency = 10\n"
    f"{MODEL}.Offline.target_qps = 800\n"  # = the SUT's capacity: the query lasts >= 1.1 x 600 s
)


def proctor(*args: str) -> list[str]:
    return [sys.executable, "-m", "proctor", *args]


def run_cmd(
    scenario: str, mode: str, outdir: Path, user_conf: Path, audit_conf: Path, dur: int | None
) -> list[str]:
    cmd = proctor(
        "run", "--sut", SUT, "--model", MODEL, "-s", scenario, "-m", mode, "--user-conf", str(user_conf),
        "--audit-conf", str(audit_conf), "-o", str(outdir), "--no-trace", "-q",
    )  # fmt: skip
    return cmd + (["--duration-ms", str(dur)] if dur else [])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", type=Path, required=True, help="a new folder for runs and tree")
    ap.add_argument("--duration-ms", type=int, default=None, help="shorter runs (a dry run; not valid)")
    ap.add_argument("--inference-repo", type=Path, default=os.environ.get("PROCTOR_INFERENCE_REPO"))
    ns = ap.parse_args()
    out: Path = ns.output
    if out.exists():
        print(f"{out}: already exists; give a new folder", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    runs, audit_runs = out / "runs", out / "audit_runs"
    user_conf = runs / "user.conf"
    user_conf.parent.mkdir(parents=True)
    user_conf.write_text(USER_CONF)
    shutil.copy(shipped_mlperf_conf(), runs / "mlperf.conf")
    write_json(runs / "measurements.json", MEASUREMENTS)
    (runs / "README.md").write_text(
        "proctor bench/submission_600s.py: the synthetic SUT standing in for resnet50 (no model).\n"
    )
    system = out / f"{SYSTEM}.json"
    write_json(system, system_json(submitter=SUBMITTER, system_name="synthetic edge"))
    no_audit = out / "no-audit.config"  # never written: plain runs apply no audit.config
    audits = required_audits(MODEL)
    jobs: list[tuple[str, Path, subprocess.Popen[bytes]]] = []
    for scen in SCENARIOS:
        base = runs / MODEL / scen
        todo = [
            ("performance", base / "performance" / "run_1", "PerformanceOnly", no_audit),
            ("accuracy", base / "accuracy", "AccuracyOnly", no_audit),
        ]
        for audit in audits:
            d = audit_runs / scen / str(audit)
            d.mkdir(parents=True)
            (d / "audit.config").write_text(audit_config(audit, MODEL).render())
            todo.append((str(audit), d, "PerformanceOnly", d / "audit.config"))
        for name, d, mode, conf in todo:
            d.mkdir(parents=True, exist_ok=True)
            log = (d / "run.out").open("wb")
            cmd = run_cmd(scen, mode, d, user_conf, conf, ns.duration_ms)
            jobs.append((f"{scen} {name}", d, subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)))
    print(f"started {len(jobs)} runs ({time.monotonic() - t0:.0f} s)", flush=True)
    failed = 0
    for what, d, proc in jobs:
        rc = proc.wait()
        print(f"{time.monotonic() - t0:7.0f} s  {what}: exit {rc}", flush=True)
        failed += rc not in (0, 1)  # 1: the run is invalid (a dry run's short duration)
        (d / "run.out").rename(out / f"{what.replace(' ', '_')}.out")
    if failed:
        print(f"{failed} run(s) failed; see {out}/*.out", file=sys.stderr)
        return 1
    for scen in SCENARIOS:
        acc = runs / MODEL / scen / "accuracy"
        (acc / "accuracy.txt").write_text(accuracy_line(acc / "mlperf_log_accuracy.json"))
        for audit in audits:
            verify = out / "verify" / scen
            r = subprocess.run(
                proctor(
                    "audit",
                    str(audit),
                    "--model",
                    MODEL,
                    "-s",
                    scen,
                    "-o",
                    str(verify),
                    "--system",
                    SYSTEM,
                    "--results",
                    str(runs / MODEL / scen),
                    "--audit-logs",
                    str(audit_runs / scen / str(audit)),
                ),  # fmt: skip
                capture_output=True,
                text=True,
                check=False,
            )
            print(f"{scen} {audit} verification (exit {r.returncode}):\n{r.stdout}{r.stderr}", flush=True)
            dst = runs / MODEL / scen / str(audit)
            shutil.copytree(verify / "results" / SYSTEM / MODEL / scen / str(audit), dst)
            if (dst / "accuracy" / "mlperf_log_accuracy.json").is_file():  # TEST01: the accuracy script's
                # line too, so the log is truncated with its hash like the result's (the official
                # truncate_accuracy_log.py asks for it in a v6 tree)
                (dst / "accuracy" / "accuracy.txt").write_text(
                    accuracy_line(dst / "accuracy" / "mlperf_log_accuracy.json")
                )
    tree = out / "tree"
    r = subprocess.run(
        proctor(
            "submission",
            "package",
            str(runs),
            "-o",
            str(tree),
            "--submitter",
            SUBMITTER,
            "--system",
            str(system),
            "--round",
            ROUND,
        ),  # fmt: skip
        capture_output=True,
        text=True,
        check=False,
    )
    print(f"proctor submission package + checker (exit {r.returncode}):\n{r.stdout}{r.stderr}", flush=True)
    rc = r.returncode
    if ns.inference_repo:
        off = run_official_checker(
            Path(ns.inference_repo), tree, version=ROUND, submitter=SUBMITTER, csv=out / "summary.csv"
        )
        print(f"official checker (exit {off.returncode}):", *off.lines[-25:], sep="\n")
        rc = rc or off.returncode
    else:
        print("official checker: skipped (set PROCTOR_INFERENCE_REPO or --inference-repo)")
    print(f"wall time {time.monotonic() - t0:.0f} s")
    return rc


if __name__ == "__main__":
    sys.exit(main())
