"""A tree that `proctor submission package` builds from proctor's own runs, through both checkers.

Closed edge resnet50 (SingleStream, MultiStream, Offline), the synthetic SUT standing in for the model
(tests.support.standin): performance, accuracy over the whole 50000-sample dataset, TEST01 and
TEST04 (proctor.audits.run), user.conf, measurements, system JSON. The runs use the engine's
ManualClock, so timing, and with it each audit's performance comparison, is the same on any machine.
Two trees: short runs (user.conf sets min_duration), which the checkers may reject only for what
short runs must break; and runs with the rules' 600 s in virtual time (every clock read advances
25 ms), which both checkers accept. bench/submission_600s.py does the same in real time.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from proctor.audits.run import Layout, RunLogs, Tree, run_audits
from proctor.audits.specs import required_audits
from proctor.checks.submission import check_submission
from tests.support.standin import MEASUREMENTS, accuracy_line, system_json, write_json

MODEL, SYSTEM, SUBMITTER, ROUND = "resnet50", "synthetic_edge", "proctor", "v6.1"
SCENARIOS = ("SingleStream", "MultiStream", "Offline")
SHORT_MS = 200
# (user.conf, virtual ns per clock read): short runs, and the rules' durations
SHORT = (
    f"*.*.min_duration = {SHORT_MS}\n"
    "resnet50.SingleStream.target_latency = 0.5\n"  # enough queries generated for the virtual clock
    "resnet50.MultiStream.target_latency = 0.5\n"
    "resnet50.Offline.target_qps = 41\n",
    1_000_000,
)
RULES = ("resnet50.Offline.target_qps = 41\n", 25_000_000)  # 1.1 x 600 s x 41/s >= 24576 samples
REPO = os.environ.get("PROCTOR_INFERENCE_REPO")


def _run(settings, outdir: Path, conf: Path | None, tick_ns: int) -> RunLogs:
    from proctor.loadgen.clock import ManualClock
    from proctor.loadgen.engine import run_test
    from proctor.loadgen.settings import LogOutputSettings, LogSettings
    from proctor.suts.synthetic import from_params

    outdir.mkdir(parents=True, exist_ok=True)
    sut, qsl = from_params(service_us="0", workers="0", total="50000", perf="1024")  # ImageNet's size
    log = LogSettings(log_output=LogOutputSettings(outdir=str(outdir)), enable_trace=False)
    out = run_test(sut, qsl, settings, log, audit_config=conf, clock=ManualClock(tick_ns=tick_ns), timeout_s=120)
    (outdir / "mlperf_log_trace.json").unlink(missing_ok=True)
    p = out.log_paths
    return RunLogs(p["detail"], p["summary"], p["accuracy"], out.errors, "incomplete" if out.incomplete else "")


def _settings(scenario: str, mode: str, user_conf: Path):
    from proctor.loadgen.resolve import Confs, resolve_settings
    from proctor.loadgen.types import TestMode

    return resolve_settings(MODEL, scenario, TestMode(mode), Confs(user_conf=user_conf)).settings


def _runs(root: Path, conf_text: str, tick_ns: int) -> tuple[Path, Path]:
    """A runs folder as `proctor run`/`proctor audit` leave it, and the system JSON."""
    runs = root / "runs"
    runs.mkdir(parents=True)
    user_conf = runs / "user.conf"
    user_conf.write_text(conf_text)

    def run(settings, outdir: Path, conf: Path | None) -> RunLogs:
        return _run(settings, outdir, conf, tick_ns)

    write_json(runs / "measurements.json", MEASUREMENTS)
    (runs / "README.md").write_text("The synthetic SUT standing in for resnet50 (tests/submission).\n")
    for scen in SCENARIOS:
        base = runs / MODEL / scen
        run(_settings(scen, "PerformanceOnly", user_conf), base / "performance" / "run_1", None)
        run(_settings(scen, "AccuracyOnly", user_conf), base / "accuracy", None)
        tree = Tree(root / "audits", SYSTEM, MODEL, scen, Layout.RESULTS, results=base, audits=base)
        outcomes = run_audits(run, _settings(scen, "PerformanceOnly", user_conf), MODEL, tree, required_audits(MODEL))
        assert [(str(o.audit), o.passed) for o in outcomes] == [("TEST01", True), ("TEST04", True)], scen
        for acc in (base / "accuracy", base / "TEST01" / "accuracy"):
            (acc / "accuracy.txt").write_text(accuracy_line(acc / "mlperf_log_accuracy.json"))
    system = root / f"{SYSTEM}.json"
    write_json(system, system_json(submitter=SUBMITTER, system_name="synthetic edge"))
    return runs, system


def _package(root: Path, conf: tuple[str, int], valid: bool) -> Path:
    from typer.testing import CliRunner

    from proctor.cli.apps import app
    from proctor.cli.main import _register

    runs, system = _runs(root, *conf)
    tree = root / "tree"
    _register()
    r = CliRunner().invoke(
        app,
        ["submission", "package", str(runs), "-o", str(tree), "--submitter", SUBMITTER, "--system", str(system),
         "--round", ROUND, "--allow-unofficial-loadgen"],
    )  # fmt: skip
    assert r.exit_code == (0 if valid else 1), r.output  # checked (short runs: invalid, see below)
    assert f"checker: {'VALID' if valid else 'INVALID'}" in r.output and "note:" not in r.output
    return tree


@pytest.fixture(scope="module")
def packaged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _package(tmp_path_factory.mktemp("short"), SHORT, valid=False)


@pytest.fixture(scope="module")
def packaged_600s(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _package(tmp_path_factory.mktemp("rules"), RULES, valid=True)


def test_proctor_checker_rejects_only_the_short_runs(packaged: Path) -> None:
    report = check_submission(packaged, ROUND, allow_unofficial_loadgen=True)  # proctor's engine's logs
    res = packaged / "closed" / SUBMITTER / "results" / SYSTEM / MODEL
    failed = sorted((f.rule, Path(f.path).relative_to(res).as_posix()) for f in report.findings if f.failed)
    # each short run, the results' and the audits' (the official checker says the same, below)
    assert failed == [
        ("min_duration", f"{scen}/{part}performance/run_1/mlperf_log_detail.txt")
        for scen in sorted(SCENARIOS)
        for part in ("TEST01/", "TEST04/", "")
    ]
    # no warnings either, but that the logs are proctor's engine's (development only, not submittable)
    assert {f.rule for f in report.findings if not f.failed} == {"unofficial_loadgen"}
    assert not report.submittable
    for scen in SCENARIOS:
        for test in ("TEST01", "TEST04"):
            assert "TEST PASS" in (res / scen / test / "verify_performance.txt").read_text()
        acc = (res / scen / "accuracy" / "accuracy.txt").read_text()
        assert acc.startswith("accuracy=100.000%, good=50000, total=50000") and "hash=" in acc


def test_proctor_checker_accepts_the_rules_durations(packaged_600s: Path) -> None:
    report = check_submission(packaged_600s, ROUND, allow_unofficial_loadgen=True)
    assert {f.rule for f in report.findings} == {"unofficial_loadgen"} and report.valid
    assert not report.submittable and not [f for f in report.findings if f.failed]
    assert {str(r.scenario) for r in report.results if r.valid} == set(SCENARIOS)


# What short runs must make the official checker say, and the lines that only summarise those.
SHORT_RUN_ERRORS = ("Test duration less than 600s in user config",)
SUMMARY_ERRORS = (
    "Some performance checks Checks failed for",
    "Some compliance check Checks failed for",
    "NoResults",
    "SUMMARY: submission has errors",
)


@pytest.mark.official
@pytest.mark.skipif(REPO is None, reason="official inference repo not at hand (set PROCTOR_INFERENCE_REPO)")
def test_official_checker_rejects_only_the_short_runs(packaged: Path, tmp_path: Path) -> None:
    from tests.support.official_submission import run_official_checker

    pytest.importorskip("yaml")
    off = run_official_checker(Path(str(REPO)), packaged, version=ROUND, submitter=SUBMITTER, csv=tmp_path / "s.csv")
    errors = [ln for ln in off.lines if "ERROR" in ln]
    assert "Traceback" not in "\n".join(off.lines), "\n".join(off.lines[-30:])
    short = [ln for ln in errors if any(w in ln for w in SHORT_RUN_ERRORS)]
    assert len(short) == 3 * len(SCENARIOS)  # each performance run and its two audit runs
    assert [ln for ln in errors if not any(w in ln for w in SHORT_RUN_ERRORS + SUMMARY_ERRORS)] == []
    assert off.returncode == 1


@pytest.mark.official
@pytest.mark.skipif(REPO is None, reason="official inference repo not at hand (set PROCTOR_INFERENCE_REPO)")
def test_official_checker_accepts_the_rules_durations(packaged_600s: Path, tmp_path: Path) -> None:
    from tests.support.official_submission import run_official_checker

    pytest.importorskip("yaml")
    off = run_official_checker(Path(str(REPO)), packaged_600s, version=ROUND, submitter=SUBMITTER, csv=tmp_path / "s.csv")
    assert [ln for ln in off.lines if "ERROR" in ln or "Traceback" in ln] == []
    assert off.returncode == 0 and any("SUMMARY: submission looks OK" in ln for ln in off.lines)
    assert any("Closed Results=3," in ln for ln in off.lines)
