"""Issue 23, journey 5: from one's own `proctor run` / `proctor audit` outputs to a checked submission.

As a user walks it, each step a subprocess: an Offline performance run and an accuracy run of the
digits reference workload into `runs/digits/Offline/...`, its audits (TEST01, TEST04) into `audits/`, then
`proctor submission package runs --audits audits`, then `proctor check submission` on the package.
The runs are short (min_duration 300 ms), so the checker must reject the tree for exactly what short
runs break (and the edge suite's missing SingleStream), never for the accuracy: accuracy.txt was
written and scored by the accuracy run, hashed by the package, and read back by the checker.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
DIGITS = "digits:backend=numpy"
# 13,200 samples for 300 ms; whether the query lasts 300 ms depends on the machine (this numpy SUT does
# 5,000-130,000 samples/s by load), so the run's own verdict is not asserted: the checker's is
USER_CONF = "digits.Offline.target_qps = 40000\n*.*.min_duration = 300\n"
MEASUREMENTS = {
    "input_data_types": "fp32",
    "retraining": "no",
    "starting_weights_filename": "weights_fp32.npz",
    "weight_data_types": "fp32",
    "weight_transformations": "none",
}


def _proctor(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "PYTHONPATH": str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run(
        [sys.executable, "-m", "proctor", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=300
    )


def test_own_runs_package_and_check(tmp_path: Path) -> None:
    from proctor.app.demo import system_description

    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "user.conf").write_text(USER_CONF)
    (runs / "measurements.json").write_text(json.dumps(MEASUREMENTS))
    (runs / "README.md").write_text("proctor's digits workload, numpy backend.\n")
    desc = system_description(division="closed", status="available", framework="numpy")
    (tmp_path / "mysys.json").write_text(json.dumps({**desc, "submitter": "ACME"}))
    common = ["-s", "Offline", "--sut", DIGITS, "--model", "digits", "--user-conf", "runs/user.conf", "--no-trace"]

    perf = _proctor(tmp_path, "run", *common, "--no-report", "-o", "runs/digits/Offline/performance/run_1")
    assert perf.returncode in (0, 1) and "Traceback" not in perf.stderr, perf.stdout + perf.stderr
    assert "not a submission run: min_duration 0.3 s < 600 s" in perf.stdout

    acc = _proctor(tmp_path, "run", *common, "--mode", "AccuracyOnly", "-q", "-o", "runs/digits/Offline/accuracy")
    assert acc.returncode == 0, acc.stdout + acc.stderr
    assert acc.stdout.splitlines()[1:] == [
        "accuracy (proctor's scorer): accuracy=94.167%, good=565, total=600",
        "digits 99% of FP32: accuracy 94.167 meets >= 93.2253",
        "digits 99.9% of FP32: accuracy 94.167 meets >= 94.0728",
    ]
    assert (runs / "digits/Offline/accuracy/accuracy.txt").read_text() == "accuracy=94.167%, good=565, total=600\n"

    # the audit's own verdict is the audits' business (journey 6); here its folder is packaged
    audit = _proctor(tmp_path, "audit", "all", *common, "-q", "--results", "runs/digits/Offline", "-o", "audits")
    assert audit.returncode in (0, 1) and "Traceback" not in audit.stderr, audit.stdout + audit.stderr
    folder = tmp_path / "audits/results/proctor/digits/Offline"
    assert "TEST PASS" in (folder / "TEST01/verify_accuracy.txt").read_text()  # deterministic: same outputs
    assert (folder / "TEST04/verify_performance.txt").is_file()

    pkg = _proctor(
        tmp_path, "submission", "package", "runs", "--audits", "audits", "-o", "sub", "--submitter", "ACME",
        "--system", "mysys.json", "--allow-unofficial-loadgen", "--no-check",
    )
    assert pkg.returncode == 0, pkg.stdout + pkg.stderr
    assert "performance, accuracy, TEST01, TEST04, measurements.json, README.md, user.conf" in pkg.stdout
    res = tmp_path / "sub/closed/ACME/results/mysys/digits/Offline"
    lines = (res / "accuracy/accuracy.txt").read_text().splitlines()
    assert lines[0] == "accuracy=94.167%, good=565, total=600" and lines[-1].startswith("hash=")
    # the audit left TEST01's accuracy log unscored: the package scores its copy, then hashes it
    assert "TEST01/accuracy: accuracy.txt written by proctor's digits accuracy script" in pkg.stdout
    lines = (res / "TEST01/accuracy/accuracy.txt").read_text().splitlines()
    assert lines[0].startswith("accuracy=") and lines[-1].startswith("hash=")

    check = _proctor(tmp_path, "check", "submission", "sub", "--allow-unofficial-loadgen", "--json")
    assert check.returncode == 1, check.stdout + check.stderr
    report = json.loads(check.stdout)
    failed = {(f["rule"], Path(f["path"]).relative_to("sub/closed/ACME/results/mysys/digits").as_posix())
              for f in report["findings"] if f["severity"] == "error"}
    short = {(r, p) for r, p in failed if r == "min_duration"}
    assert ("min_duration", "Offline/performance/run_1/mlperf_log_detail.txt") in short
    assert ("min_duration", "Offline/TEST04/performance/run_1/mlperf_log_detail.txt") in short
    assert ("required_scenario", ".") in failed  # the edge suite asks for SingleStream too
    assert ("min_duration", "Offline/TEST01/performance/run_1/mlperf_log_detail.txt") in short
    # an audit's performance comparison may fail from noise (journey 6); nothing else may fail, the
    # accuracy least (TEST01's accuracy verification, both accuracy.txt files and their hashes)
    noise = {("compliance_failed", f"Offline/{t}/verify_performance.txt") for t in ("TEST01", "TEST04")}
    rest = failed - short - noise - {("required_scenario", ".")}
    assert rest == set(), rest
    assert [(r["benchmark"], r["scenario"], r["valid"]) for r in report["results"]] == [("digits", "Offline", False)]

    # packaged and checked in one command: each of the four logs proctor's engine wrote is one finding,
    # and how to make them submittable (the official extra, --engine official) is said once
    checked = _proctor(
        tmp_path, "submission", "package", "runs", "--audits", "audits", "-o", "sub-checked", "--submitter",
        "ACME", "--system", "mysys.json", "--allow-unofficial-loadgen",
    )
    assert checked.returncode == 1, checked.stdout + checked.stderr  # the short runs' min_duration
    unofficial = [line for line in checked.stdout.splitlines() if "[unofficial_loadgen]" in line]
    assert len(unofficial) == 4 and all("run it again with `--engine official`" in x for x in unofficial)
    for said_once in ("pip install 'proctor[official]'", 'pip install -e ".[official]"', "`proctor run ... --engine "
                      "official` for the results", "`proctor audit all ... --engine official` for the audits"):
        assert checked.stdout.count(said_once) == 1, said_once
    assert checked.stdout.splitlines()[-1].startswith("NOT SUBMITTABLE: 4 log(s) were not written by an official")


def test_package_names_what_is_missing(tmp_path: Path) -> None:
    # an accuracy run of a SUT proctor cannot score has no accuracy.txt: package says how to get one
    acc = tmp_path / "runs/resnet50/Offline/accuracy"
    acc.mkdir(parents=True)
    for name in ("mlperf_log_detail.txt", "mlperf_log_accuracy.json"):
        (acc / name).write_text("[]\n")
    (tmp_path / "s.json").write_text("{}")
    r = _proctor(tmp_path, "submission", "package", "runs", "-o", "sub", "--submitter", "A", "--system", "s.json")
    assert r.returncode == 2 and "accuracy.txt: missing" in r.stderr and "--accuracy-script" in r.stderr
    r = _proctor(tmp_path, "submission", "package", "runs", "--audits", "runs", "-o", "sub2", "--submitter", "A",
                 "--system", "s.json")
    assert r.returncode == 2 and "--audits runs: no TEST0x folders" in r.stderr, r.stderr


def test_audit_outputs_are_found_in_either_layout(tmp_path: Path) -> None:
    from proctor.submission.package import _scenario_dirs, audit_folders

    out = tmp_path / "audit-out"  # what `proctor audit -o audit-out` writes when it runs the references too
    for part in ("performance/run_1", "accuracy", "TEST01/accuracy", "TEST04/performance/run_1"):
        (out / "results/sys/digits/Offline" / part).mkdir(parents=True)
    assert _scenario_dirs(out) == [out / "results/sys/digits/Offline"]
    found = audit_folders(out)
    assert found == {("digits", "Offline"): [out / "results/sys/digits/Offline" / t for t in ("TEST01", "TEST04")]}
    old = tmp_path / "old"  # `proctor audit --layout compliance` (rounds to v5.1)
    (old / "compliance/sys/resnet50/Server/TEST04").mkdir(parents=True)
    assert audit_folders(old) == {("resnet50", "Server"): [old / "compliance/sys/resnet50/Server/TEST04"]}
    assert audit_folders(tmp_path / "none") == {} and _scenario_dirs(old) == []


def test_init_writes_this_machines_side_files_and_package_reads_them(tmp_path: Path) -> None:
    """`proctor submission init` starts the side files a new user does not have; what only the user
    knows stays empty and the checker names it; filled in, `package` needs no --system."""
    runs = tmp_path / "runs"
    init = _proctor(tmp_path, "submission", "init", "runs", "--submitter", "ACME", "--system-name", "box")
    assert init.returncode == 0, init.stdout + init.stderr
    desc = json.loads((runs / "system.json").read_text())
    assert (desc["submitter"], desc["system_name"], desc["division"], desc["framework"]) == ("ACME", "box", "closed", "")
    assert desc["host_processor_core_count"] == (os.cpu_count() or 1)
    assert json.loads((runs / "measurements.json").read_text()) == dict.fromkeys(MEASUREMENTS, "")
    named = {k: line.split("fill in: ", 1)[1].split(", ") for line in init.stdout.splitlines() if "fill in: " in line
             for k in ("system.json", "measurements.json") if k in line}  # fmt: skip
    assert "framework" in named["system.json"] and named["measurements.json"][0] == "input_data_types"
    # what init cannot know is left empty, never a guess; a count is a string the official accepts
    assert {"cooling", "host_networking", "accelerators_per_node"} <= set(named["system.json"])
    assert all(desc[k] == "" for k in named["system.json"])
    assert isinstance(desc["host_network_card_count"], str)
    again = _proctor(tmp_path, "submission", "init", "runs", "--submitter", "ACME")  # never overwrites
    assert again.returncode == 0 and "nothing to write" in again.stdout
    assert json.loads((runs / "system.json").read_text())["system_name"] == "box"

    # one accuracy run is enough to package; the unfilled fields are the checker's errors, by name
    (runs / "user.conf").write_text(USER_CONF)
    (runs / "README.md").write_text("proctor's digits workload, numpy backend.\n")
    common = ["-s", "Offline", "--sut", DIGITS, "--model", "digits", "--user-conf", "runs/user.conf", "-q"]
    acc = _proctor(tmp_path, "run", *common, "--mode", "AccuracyOnly", "-o", "runs/digits/Offline/accuracy")
    assert acc.returncode == 0, acc.stdout + acc.stderr
    pkg = ("submission", "package", "runs", "--submitter", "ACME", "--allow-unofficial-loadgen", "--no-check")
    packaged = _proctor(tmp_path, *pkg, "-o", "sub")
    assert packaged.returncode == 0, packaged.stdout + packaged.stderr
    # the system is named by its description's system_name, under systems/ and results/
    assert (tmp_path / "sub/closed/ACME/systems/box.json").is_file()
    assert (tmp_path / "sub/closed/ACME/results/box/digits/Offline/accuracy/accuracy.txt").is_file()
    check = _proctor(tmp_path, "check", "submission", "sub", "--allow-unofficial-loadgen", "--json")
    messages = [f["message"] for f in json.loads(check.stdout)["findings"] if f["severity"] == "error"]
    assert check.returncode == 1
    # the checker names exactly the fields init named (the official's emptiness, `not value`)
    [empty] = [m for m in messages if "meaningful response, not empty" in m]
    assert empty.rsplit("): ", 1)[1].split(", ") == named["system.json"], messages
    assert any("meaningful value: input_data_types, retraining" in m for m in messages), messages

    (runs / "system.json").unlink()
    missing = _proctor(tmp_path, *pkg, "-o", "sub2")
    assert missing.returncode == 2 and "proctor submission init runs --submitter NAME" in missing.stderr
    (runs / "system.json").write_text(json.dumps({**desc, "system_name": "../up"}))
    bad = _proctor(tmp_path, *pkg, "-o", "sub3")
    assert bad.returncode == 2 and "system_name '../up' must be a folder name" in bad.stderr
    assert not (tmp_path / "sub3").exists()
    bad_name = _proctor(tmp_path, "submission", "init", "r2", "--submitter", "A", "--system-name", "a/b")
    assert bad_name.returncode == 2 and "--system-name 'a/b'" in bad_name.stderr
