"""A submission tree assembled from proctor's own runs (synthetic SUT) goes through the checker.

Runs use the engine's ManualClock: every clock read advances 25 ms of virtual time, so a run with
the rules' 600 s minimum duration costs well under a second of wall time and no timing is asserted.
Settings come from the shipped mlperf.conf plus a user.conf, as a submitter's would.
"""

from __future__ import annotations

import base64
import shutil
from pathlib import Path

import orjson
import pytest

from proctor.checks.submission import check_submission

TICK_NS = 25_000_000
SYSTEM = "synthetic_edge"
BENCH = "resnet50"
SCENARIOS = ("SingleStream", "MultiStream", "Offline")
USER_CONF_SHORT = "*.*.min_duration = 100\n"
USER_CONF = "resnet50.Offline.target_qps = 41\n"  # 1.1 x 600 s x 41/s > 24576 samples per query


def _system_json(division: str) -> dict:
    from proctor.checks.submission import SYSTEM_FIELDS

    desc = {k: "n/a" for k in SYSTEM_FIELDS}
    desc |= {
        "division": division,
        "submitter": "proctor",
        "status": "rdi",
        "system_name": "synthetic edge",
        "number_of_nodes": 1,
        "host_processors_per_node": 1,
        "host_processor_core_count": 2,
        "accelerators_per_node": "0",  # the official checker calls an integer 0 empty
        "system_type": "edge",
    }
    return desc


def _accuracy_script(accuracy_json: Path) -> str:
    """The synthetic workload's accuracy script: a response is correct when it carries its QSL index."""
    entries = orjson.loads(accuracy_json.read_bytes())
    good = sum(int.from_bytes(base64.b16decode(e["data"]), "little") == e["qsl_idx"] for e in entries)
    return f"accuracy={100.0 * good / len(entries):.3f}%, good={good}, total={len(entries)}\n"


def _run(outdir: Path, scenario: str, mode: str, user_conf: str, *, seed_override: bool = False) -> None:
    from proctor.loadgen.clock import ManualClock
    from proctor.loadgen.conf import load_conf_files
    from proctor.loadgen.engine import run_test
    from proctor.loadgen.settings import LogOutputSettings, LogSettings, TestSettings
    from proctor.loadgen.types import Scenario, TestMode
    from proctor.suts.synthetic import from_params

    outdir.mkdir(parents=True, exist_ok=True)
    conf = outdir / "user.conf"
    conf.write_text(user_conf)
    settings = load_conf_files(TestSettings(), BENCH, Scenario(scenario), user_conf=conf)
    settings.mode = TestMode(mode)
    if seed_override:
        settings.schedule_rng_seed = 1234
    sut, qsl = from_params(service_us="0", workers="0", total="50000", perf="1024")  # ImageNet val
    log = LogSettings(log_output=LogOutputSettings(outdir=str(outdir)))
    log.enable_trace = False
    run_test(sut, qsl, settings, log, audit_config=None, clock=ManualClock(tick_ns=TICK_NS), timeout_s=60)
    conf.unlink()
    if mode == "AccuracyOnly":
        (outdir / "accuracy.txt").write_text(_accuracy_script(outdir / "mlperf_log_accuracy.json"))


def _tree(
    root: Path,
    *,
    short: bool,
    seeds_scenario: str | None,
    scenarios: tuple[str, ...],
    accuracy_from: Path | None = None,
) -> Path:
    sub = root / "closed" / "proctor"
    for name in ("systems", "code", "measurements", "compliance"):
        (sub / name).mkdir(parents=True, exist_ok=True)
    (sub / "systems" / f"{SYSTEM}.json").write_bytes(orjson.dumps(_system_json("closed")))
    for scen in scenarios:
        base = sub / "results" / SYSTEM / BENCH / scen
        user_conf = USER_CONF + (USER_CONF_SHORT if short else "")
        _run(
            base / "performance" / "run_1",
            scen,
            "PerformanceOnly",
            user_conf,
            seed_override=scen == seeds_scenario,
        )
        if accuracy_from is None:
            _run(base / "accuracy", scen, "AccuracyOnly", user_conf)
        else:  # accuracy runs do not depend on the duration: reuse the other tree's
            shutil.copytree(
                accuracy_from / "closed/proctor/results" / SYSTEM / BENCH / scen / "accuracy",
                base / "accuracy",
            )
    from checks_corpus import complete_results

    return complete_results(root)


def _build(tmp: Path) -> tuple[Path, Path]:
    fixed = _tree(tmp / "fixed", short=False, seeds_scenario=None, scenarios=SCENARIOS)
    broken = _tree(
        tmp / "broken",
        short=True,
        seeds_scenario="SingleStream",
        scenarios=("SingleStream", "Offline"),
        accuracy_from=fixed,
    )
    return broken, fixed


def _short_runs_are_rejected_for_exactly_what_they_break(runs: tuple[Path, Path]) -> None:
    broken, _ = runs
    report = check_submission(broken, allow_unofficial_loadgen=True)  # proctor's engine wrote the logs
    errors = sorted(
        (f.rule, Path(f.path).relative_to(broken / "closed/proctor/results").as_posix(), f.key)
        for f in report.findings
        if f.failed and "/compliance/" not in f.path
    )
    perf = "performance/run_1/mlperf_log_detail.txt"
    # the audits (copies of the short runs) are short too, as the official checker also says
    audits = sorted(
        (f.rule, Path(f.path).relative_to(broken / "closed/proctor/compliance").as_posix())
        for f in report.findings
        if f.failed and "/compliance/" in f.path
    )
    assert audits == [
        ("min_duration", f"{SYSTEM}/{BENCH}/{s}/{t}/{perf}") for s in ("Offline", "SingleStream") for t in ("TEST01", "TEST04")
    ]
    assert errors == [
        ("min_duration", f"{SYSTEM}/{BENCH}/Offline/{perf}", "effective_min_duration_ms"),
        ("min_duration", f"{SYSTEM}/{BENCH}/SingleStream/{perf}", "effective_min_duration_ms"),
        ("required_scenario", f"{SYSTEM}/{BENCH}", None),
        ("seeds", f"{SYSTEM}/{BENCH}/SingleStream/{perf}", "effective_schedule_rng_seed"),
    ]
    assert "MultiStream" in next(f.message for f in report.findings if f.rule == "required_scenario")


def _runs_with_the_rules_settings_are_accepted(runs: tuple[Path, Path]) -> None:
    _, fixed = runs
    report = check_submission(fixed, allow_unofficial_loadgen=True)
    assert [f for f in report.findings if f.failed] == []
    assert report.valid and not report.submittable  # valid for development only
    # every log the round reads (the builder also adds v4.1's TEST05 audits, which v6.1 does not read)
    logs = sorted(str(p) for p in fixed.rglob("mlperf_log_detail.txt") if "TEST05" not in p.parts)
    warned = sorted(f.path for f in report.findings if f.rule == "unofficial_loadgen")
    assert warned == logs and {f.severity.value for f in report.findings} == {"warning"}
    assert {f.rule for f in report.findings} == {"unofficial_loadgen", "compliance_layout"}
    # without the switch each log proctor's engine wrote is an error naming the rule and the way out
    strict = check_submission(fixed)
    assert not strict.valid
    assert sorted(f.path for f in strict.findings if f.failed) == logs
    for f in (f for f in strict.findings if f.failed):
        assert f.rule == "unofficial_loadgen" and "run it again with `--engine official`" in f.message, f
        assert "§LoadGen Operation" in (f.source or ""), f
    rows = {r.scenario: r for r in report.results}
    assert set(rows) == set(SCENARIOS) and all(r.valid for r in rows.values())
    # each metric is the one the engine logged
    from proctor.loadgen.logs import read_detail

    perf = fixed / "closed/proctor/results" / SYSTEM / BENCH
    ss = read_detail(perf / "SingleStream/performance/run_1/mlperf_log_detail.txt")
    assert rows["SingleStream"].value == ss.get("early_stopping_latency_ss") / 1e6
    off = read_detail(perf / "Offline/performance/run_1/mlperf_log_detail.txt")
    assert rows["Offline"].value == off.get("result_samples_per_second")
    assert off.get("effective_samples_per_query") >= 24576


def _cli_exit_status_is_the_verdict(runs: tuple[Path, Path], tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from proctor.cli import inference_checks  # noqa: F401
    from proctor.cli.apps import app

    broken, fixed = runs
    dev = "--allow-unofficial-loadgen"
    strict = CliRunner().invoke(app, ["check", "submission", str(fixed)])
    assert strict.exit_code == 1 and "INVALID" in strict.output
    assert "`proctor run ... --engine official`" in strict.output and dev in strict.output
    ok = CliRunner().invoke(app, ["check", "submission", str(fixed), dev])
    assert ok.exit_code == 0 and "VALID (development only)" in ok.output
    assert "NOT SUBMITTABLE" in ok.output and "--engine official" in ok.output
    as_json = orjson.loads(CliRunner().invoke(app, ["check", "submission", str(fixed), dev, "--json"]).stdout)
    assert as_json["valid"] is True and as_json["submittable"] is False
    res = CliRunner().invoke(app, ["check", "submission", str(broken), "--json", dev])
    assert res.exit_code == 1 and orjson.loads(res.stdout)["valid"] is False
    # the same fixed tree in the open division: still valid (relaxations only remove checks)
    shutil.copytree(fixed / "closed", tmp_path / "open")
    sysjson = tmp_path / "open/proctor/systems" / f"{SYSTEM}.json"
    sysjson.write_bytes(orjson.dumps(_system_json("open")))
    assert CliRunner().invoke(app, ["check", "submission", str(tmp_path), dev]).exit_code == 0
    # proctor's engine is no official LoadGen in the open division either
    assert CliRunner().invoke(app, ["check", "submission", str(tmp_path)]).exit_code == 1


def _accuracy_run_must_cover_the_dataset(runs: tuple[Path, Path], tmp_path: Path) -> None:
    from checks_corpus import edit_detail

    _, fixed = runs
    shutil.copytree(fixed, tmp_path / "t")
    log = tmp_path / "t/closed/proctor/results" / SYSTEM / BENCH / "Offline/accuracy/mlperf_log_detail.txt"
    edit_detail(log, "effective_accuracy_sample_count", "1024")
    report = check_submission(tmp_path / "t", allow_unofficial_loadgen=True)
    errors = [(f.rule, f.path, f.expected) for f in report.findings if f.failed]
    assert errors == [("accuracy_dataset", str(log), 50000)]


def test_tree_of_proctor_runs(tmp_path: Path) -> None:
    """One build of both trees (runs are the expensive part), then each verdict in turn."""
    pytest.importorskip("proctor.loadgen.engine")
    pytest.importorskip("proctor.suts.synthetic")
    runs = _build(tmp_path / "runs")
    _short_runs_are_rejected_for_exactly_what_they_break(runs)
    _runs_with_the_rules_settings_are_accepted(runs)
    _cli_exit_status_is_the_verdict(runs, tmp_path / "cli")
    _accuracy_run_must_cover_the_dataset(runs, tmp_path / "acc")
