"""`proctor demo` reduced (--quick, 3 training runs) beside a CPU hog: the exit status, the table's
values, the layout, the verdicts; then Ctrl-C."""

from __future__ import annotations

import glob
import os
import shlex
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import orjson
import pytest

from proctor.app.demo import (
    SCENARIOS,
    DemoOptions,
    DemoReport,
    Durations,
    Row,
    Sizing,
    closing_lines,
    render_table,
    size_inference,
    verdict_line,
)
from proctor.mllog_lines import iter_log

pytest.importorskip("proctor.workloads.digits.sut", reason="the digits inference workload is not installed")


def _digits_in_rules() -> bool:
    from proctor.rules.inference import resolve

    try:
        resolve("digits")
    except KeyError:
        return False
    return True


pytestmark = pytest.mark.skipif(
    not _digits_in_rules(),
    reason="rules/inference.py has no 'digits' row yet: the submission checker cannot check the demo's tree",
)

RUNS = 3
SRC = Path(__file__).resolve().parents[2] / "src"  # this checkout's sources, for the subprocess
# Latency and early stopping are timing results: on a loaded machine a p99 can miss 10 ms, which the
# checker rightly reports. The demo expects exactly what its runs measured, so it stays as expected.
TIMING_RULES = {"latency_limit", "early_stopping"}
# The audits' performance comparisons (TEST01/TEST04) are timed too: a failed verification is
# expected exactly where the verification itself measured a failure (report.audits says so).
AUDIT_RULE = "compliance_failed"
AUDITS = ("TEST01", "TEST04")


def failed_audits(demo, scenario):
    note = demo.audits[scenario]
    assert all(f"{a} PASS" in note or f"{a} FAIL" in note for a in AUDITS), note
    return {a for a in AUDITS if f"{a} FAIL" in note}


def rows(report, part):
    return [r for r in report.rows if r.part == part]


def check_short_runs_break_exactly_min_duration(demo):
    perf = [r for r in rows(demo, "inference") if r.item.startswith("digits ") and "accuracy" not in r.item]
    assert sorted(r.item.split()[1] for r in perf) == sorted(SCENARIOS)
    for r in perf:
        scenario = r.item.split()[1]
        measured = set(demo.measured_rules.get(scenario, ()))
        assert measured <= {"min_duration", AUDIT_RULE} | TIMING_RULES, (scenario, measured)
        # a failed audit is expected exactly where its verification measured the failure
        assert (AUDIT_RULE in measured) == bool(failed_audits(demo, scenario)), (scenario, demo.audits)
        assert not r.valid and r.expected_rules == tuple(sorted({"min_duration"} | measured))
        assert r.value is not None and r.value > 0
        assert r.rules == r.expected_rules, (r.item, r.why)
        assert r.as_expected and "compliance_missing" not in r.rules
        if scenario != "Server":  # only Server has a latency bound; SingleStream can't run out
            assert set(r.rules) - {AUDIT_RULE} == {"min_duration"}, (r.item, r.why)
    layout = [r for r in rows(demo, "inference") if r.item.startswith("submission checker")]
    assert len(layout) == 1 and layout[0].valid and layout[0].rules == ()
    assert demo.as_expected and all(r.as_expected for r in demo.rows)


def check_the_checker_agrees_when_run_again_on_the_tree(demo):
    from proctor.checks.submission import check_submission

    # proctor's engine wrote the demo's logs: without the development switch each is rejected ...
    strict = check_submission(demo.output / "inference")
    details = {str(p) for p in (demo.output / "inference").rglob("mlperf_log_detail.txt")}
    assert {f.path for f in strict.findings if f.rule == "unofficial_loadgen" and f.failed} == details
    # ... with it, those are warnings and the tree is valid only for development
    rep = check_submission(demo.output / "inference", allow_unofficial_loadgen=True)
    assert not rep.submittable and rep.unofficial_logs == len(details)
    assert demo.not_submittable.startswith("NOT SUBMITTABLE") and "--engine official" in demo.not_submittable
    failed = [f for f in rep.findings if f.failed]
    assert {f.rule for f in failed} - TIMING_RULES - {AUDIT_RULE} == {"min_duration"}
    # each failed verification the checker reports is one the demo's audit measured, and vice versa
    assert {(Path(f.path).parts[-3], Path(f.path).parts[-2]) for f in failed if f.rule == AUDIT_RULE} == {
        (s, a) for s in SCENARIOS for a in failed_audits(demo, s)
    }
    res = demo.output / "inference" / "closed" / "proctor" / "results" / "local-cpu" / "digits"
    # each short run: the results' and the audits' (an audit runs as for the submission)
    assert {f.path for f in failed if f.rule == "min_duration"} == {
        str(res / s / part / "performance" / "run_1" / "mlperf_log_detail.txt")
        for s in SCENARIOS
        for part in ("", *AUDITS)
    }
    assert all("Server" in f.path for f in failed if f.rule in TIMING_RULES)
    assert not [f for f in rep.findings if not f.failed and f.rule != "unofficial_loadgen"]  # no other warnings


def check_accuracy_is_the_fp32_reference(demo):
    from proctor.workloads.digits import REFERENCE_ACCURACY

    acc = [r for r in rows(demo, "inference") if "accuracy vs" in r.item]
    assert len(acc) == 2 and all(r.valid for r in acc)
    assert all(r.value == pytest.approx(REFERENCE_ACCURACY, abs=5e-4) for r in acc)


def _ttt_minutes(path: Path) -> float:
    t = {r.key: r.time_ms for r in iter_log(path) if getattr(r, "key", None) in ("run_start", "run_stop")}
    return (t["run_stop"] - t["run_start"]) / 60_000


def check_training_rows_and_the_olympic_score(demo):
    bdir = demo.output / "training" / "proctor" / "results" / "local-cpu" / "digits_train"
    files = sorted(bdir.glob("result_*.txt"))
    assert len(files) == RUNS
    train = rows(demo, "training")
    runs = [r for r in train if r.item.startswith("digits_train result_")]
    assert len(runs) == RUNS and all(r.valid and "success" in r.why for r in runs)
    by_item = {r.item.split(" (")[0]: r for r in train}
    assert by_item["seed check"].valid
    rcp = next(r for r in train if r.item.startswith("RCP check"))
    assert rcp.valid and "RCP found" in rcp.why
    pkg = next(r for r in train if r.item.startswith("package checker"))
    assert pkg.valid and pkg.rules == () and pkg.result.startswith("1 benchmark folder")
    score = by_item["digits_train olympic score"]
    minutes = np.sort([_ttt_minutes(f) for f in files])
    assert score.valid and score.value == pytest.approx(minutes[1:-1].mean(), rel=1e-9)


def check_report_file_layout_and_table(demo):
    saved = orjson.loads((demo.output / "demo_report.json").read_bytes())
    assert saved["as_expected"] is demo.as_expected and len(saved["rows"]) == len(demo.rows)
    assert [r["rules"] for r in saved["rows"]] == [list(r.rules) for r in demo.rows]
    sub = demo.output / "inference" / "closed" / "proctor"
    for scen in SCENARIOS:  # the current round's layout, as `proctor submission package` writes it
        base = sub / "results" / "local-cpu" / "digits" / scen
        assert (base / "performance" / "run_1" / "mlperf_log_summary.txt").is_file()
        assert (base / "accuracy" / "accuracy.txt").is_file()
        assert "min_duration" in (base / "user.conf").read_text()
        assert (base / "measurements.json").is_file()
        assert (base / "TEST01" / "verify_accuracy.txt").read_text().count("TEST PASS") == 1  # deterministic
        assert (base / "TEST04" / "verify_performance.txt").is_file()
        assert (base / "TEST01" / "accuracy" / "accuracy.txt").read_text().count("hash=") == 1
    assert (sub / "systems" / "local-cpu.json").is_file() and (sub / "src" / "README.md").is_file()
    assert (demo.output / "training" / "proctor" / "systems" / "local-cpu.json").is_file()
    from rich.console import Console

    console = Console(width=80, record=True)
    console.print(render_table(demo), crop=False)
    text = console.export_text()
    assert text.count("INVALID") == len(SCENARIOS)
    for r in demo.rows:  # values are never cut, even at 80 columns
        assert r.result in text, r.result
    lines = closing_lines(demo)
    assert lines[-1].startswith("as expected") and "NOT" not in lines[-1]
    assert lines[-2].startswith("inference tree: NOT SUBMITTABLE")  # built with proctor's engine
    assert {line.split(":")[1].strip() for line in lines[:-2]} == set(SCENARIOS)
    assert "bound" in demo.sizing["SingleStream"] and "fastest of 3 probes" in demo.sizing["Offline"]


def check_report_html_gives_the_tables_verdict(demo):
    """report.html never shows a green VALID for a short run the table calls INVALID: each of them
    reads as `proctor run` says it, valid for these settings and not a submission run, unless its own
    measurements broke a timed rule (a loaded machine's Server p99), which the report calls INVALID."""
    import re

    from proctor.loadgen.logs.detail import SHORT_RUN_VERDICT

    html = (demo.output / "report.html").read_text()
    badges = dict(re.findall(r'<section class="run" id="run-\d+" data-name="([^"]*)">\s*<h2>.*?'
                             r'<span class="badge (?:\w+)" data-verdict="([^"]*)"', html, re.S))
    perf = {name: v for name, v in badges.items() if name.endswith("/performance/run_1")}
    assert sorted(name.split("/")[-3] for name in perf) == sorted(SCENARIOS), badges
    for name, verdict in perf.items():
        timed = set(demo.measured_rules.get(name.split("/")[-3], ())) & TIMING_RULES
        assert verdict == ("INVALID" if timed else SHORT_RUN_VERDICT), (name, verdict, demo.sizing)
    assert 'class="badge valid"' not in "".join(
        re.findall(r'<section class="run" id="run-\d+" data-name="[^"]*/performance/run_1">.*?</section>', html, re.S)
    )
    assert not any(r.valid for r in demo.rows if r.item.split()[1:2] and r.item.split()[1] in SCENARIOS)


def check_the_training_check_commands_it_printed_pass(demo, printed: str, cli):
    """The check-log/check-rcp/check-package lines the demo prints pass as printed (their one option
    says N: the demo ran fewer runs than digits_train's N)."""
    commands = demo.check_commands
    assert [c.split()[2] for c in commands] == ["check-log", "check-rcp", "check-package"]
    for command in commands:
        assert f"check: {command}" in printed
        override = command.endswith(f"--extra-benchmark digits_train={RUNS}")
        assert override == (command.split()[2] != "check-log")
        args = []
        for word in shlex.split(command)[1:]:
            args += sorted(glob.glob(word)) if "*" in word else [word]
        r = cli(*args)
        assert r.rc == 0, (command, r.out, r.err)
        assert "INVALID" not in r.out and "FAIL" not in r.out, r.out
    package = demo.output / "training" / "proctor"
    r = cli("training", "check-package", package, "--extra-benchmark", "digits_train")
    assert r.rc == 2 and "BENCH=N" in r.err
    desc = orjson.loads((package / "systems" / "local-cpu.json").read_bytes())
    assert desc and all(isinstance(v, str) for v in desc.values())  # the official joins them as text
    try:
        import mlperf_logging.package_checker  # noqa: F401
    except ImportError:
        return
    official = subprocess.run(
        [sys.executable, "-m", "mlperf_logging.package_checker", "proctor", "training", "6.1.0",
         "--log_output", str(demo.output / "package_checker.log")],
        capture_output=True, text=True, cwd=package.parent, timeout=600,
    )
    assert "PACKAGE CHECKER FOUND NO ERRORS, SUCCESS !" in official.stdout + official.stderr, official.stderr[-2000:]


def test_full_keeps_the_rules_durations_and_demo_states_its_own(tmp_path):
    from proctor.app.demo import inference_settings

    sizing = Sizing(offline_qps=1000, server_qps=100, single_stream_ms=0.02, notes={"Offline": "why"})
    full_run = inference_settings(
        "Server",
        "performance",
        DemoOptions(full=True).durations.for_scenario("Server"),
        sizing,
        user_conf=tmp_path / "full.conf",
    )
    short_run = inference_settings(
        "Offline",
        "performance",
        DemoOptions().durations.for_scenario("Offline"),
        sizing,
        user_conf=tmp_path / "short.conf",
    )
    full, short = full_run.settings, short_run.settings
    assert full.min_duration_ms == 600_000 and full.server_target_qps == 100
    assert short.min_duration_ms == 15_000 and short.offline_expected_qps == 1000
    assert "NOT the rules' 600 s" in (tmp_path / "short.conf").read_text()
    assert "# Offline: why" in (tmp_path / "short.conf").read_text()
    assert "min_duration" not in (tmp_path / "full.conf").read_text()
    # the short run carries `proctor run`'s short-run mark; the rules' durations carry none
    assert full_run.short_run == "" and short_run.short_run == "min_duration 15 s < 600 s", short_run.short_run


def test_a_row_is_made_with_keywords_only():
    """One way to make a row: every field named, so no value lands in another field's place."""
    with pytest.raises(TypeError):
        Row("inference", "x", "1", True, "why")  # type: ignore[misc]
    row = Row(part="inference", item="x", result="1", valid=False, why="w", rules=("a",), expected_rules=("a",))
    assert row.as_expected and not Row(part="p", item="i", result="r", valid=False, why="w").as_expected


@pytest.mark.parametrize(
    "probes",
    [(125_000.0, 120_000.0, 118_000.0), (1_865.0,), (0.0, 0.0, 0.0), (), (5e9, 1.0)],
)
def test_sizing_cannot_run_out_whatever_the_probes_said(probes):
    """SingleStream's generated queries never depend on a probe; Offline stays above 600 samples;
    Server stays within [250, cap] qps."""
    from proctor.loadgen.normalize import normalize
    from proctor.loadgen.schedule import query_timeline
    from proctor.loadgen.settings import TestSettings
    from proctor.loadgen.types import Scenario, TestMode

    d = DemoOptions(quick=True).durations
    sz = size_inference(probes, d)
    assert sz.single_stream_ms == d.ss_bound_ms
    assert 250 <= sz.server_qps <= d.server_qps_cap
    assert 1.1 * sz.offline_qps * d.min_duration_ms / 1000 >= 600
    ts = TestSettings(scenario=Scenario.SINGLE_STREAM, mode=TestMode.PERFORMANCE_ONLY)
    ts.single_stream_expected_latency_ns = int(sz.single_stream_ms * 1e6)
    ts.min_duration_ms = d.min_duration_ms
    eff = normalize(ts, 1797, 256)
    n = len(query_timeline(eff, 256, TestMode.PERFORMANCE_ONLY)) - 1
    assert n * 10e-6 >= d.min_duration_ms / 1000  # enough queries even at 10 us per query
    assert all(isinstance(v, str) and v for v in sz.notes.values()) and set(sz.notes) == set(SCENARIOS)


def test_durations_bound_the_single_stream_schedule():
    for d in (DemoOptions(quick=True).durations, DemoOptions().durations, DemoOptions(full=True).durations):
        assert isinstance(d, Durations)
        duration = d.min_duration_ms or 600_000
        assert 2 * duration / d.ss_bound_ms <= 30_000_000  # generated queries (memory)


def _row(item: str, rules: tuple[str, ...], expected: tuple[str, ...] | None = None) -> Row:
    return Row(
        part="inference", item=item, result="1", valid=not rules, why="why", value=1.0, rules=rules,
        expected_rules=rules if expected is None else expected,
    )


def test_verdict_line_names_every_failure_beyond_min_duration():
    """Issue 23 (journey 4): the last line is computed from the rows; a row that broke latency,
    early stopping or an audit's comparison is named with its cause, never "only min_duration"."""
    report = DemoReport(Path("out"), "demo", timings_s={"total": 12.0})
    report.rows = [
        _row("digits Offline (samples/s)", ("compliance_failed", "min_duration")),
        _row("digits Server (queries/s)", ("early_stopping", "latency_limit", "min_duration")),
        _row("digits SingleStream (latency)", ("min_duration",)),
        _row("submission checker: layout, systems", ()),
    ]
    line = verdict_line(report)
    assert line == closing_lines(report)[-1] and line.startswith("as expected; total 12.0 s")
    assert "only min_duration" not in line and "nothing else failed" not in line
    assert "min_duration fails by design (3 row(s))" in line
    assert "2 row(s) also failed other rules" in line
    assert "digits Offline (samples/s): compliance_failed (an audit's timed comparison failed" in line
    assert "digits Server (queries/s): early_stopping (early stopping not met" in line
    assert "latency_limit (latency over the bound" in line
    assert "SingleStream" not in line  # it broke min_duration alone


def test_verdict_line_when_only_min_duration_failed_and_when_a_row_is_unexpected():
    report = DemoReport(Path("out"), "quick", timings_s={"total": 3.0})
    report.rows = [_row("digits Offline (samples/s)", ("min_duration",)), _row("checker", ())]
    assert verdict_line(report) == (
        "as expected; total 3.0 s; short runs: min_duration fails by design (1 row(s)); nothing else failed"
    )
    full = DemoReport(Path("out"), "full", timings_s={"total": 3.0}, rows=[_row("checker", ())])
    assert verdict_line(full) == "as expected; total 3.0 s"
    report.rows.append(_row("digits Server (queries/s)", ("latency_limit",), expected=()))
    assert verdict_line(report) == (
        "NOT as expected: digits Server (queries/s) (broke latency_limit; expected nothing); total 3.0 s"
    )
    report.interrupted = True
    assert verdict_line(report).startswith("NOT as expected: interrupted")


def _load_report(path: Path) -> DemoReport:
    data = orjson.loads(path.read_bytes())
    fields = set(Row.__dataclass_fields__)
    report = DemoReport(Path(data["output"]), data["mode"], timings_s=data["timings_s"], sizing=data["sizing"])
    report.measured_rules = {k: tuple(v) for k, v in data["measured_rules"].items()}
    report.audits = data["audits"]
    report.check_commands = data["check_commands"]
    report.not_submittable = data["not_submittable"]
    for r in data["rows"]:
        kw = {k: v for k, v in r.items() if k in fields}
        report.rows.append(Row(**{**kw, "rules": tuple(kw["rules"]), "expected_rules": tuple(kw["expected_rules"])}))
    return report


@contextmanager
def cpu_hog(seconds: float = 1200.0):
    """A process spinning on one core beside the test, killed in the end. It outlives any demo this test
    runs (a busy CI host once took over 120 s for the quick demo), and stops by itself at its bound or when
    the test process is gone, so a killed run leaves no spinner behind."""
    code = (
        "import os, time\n"
        f"end, parent = time.time() + {seconds}, {os.getpid()}\n"
        "while time.time() < end and os.getppid() == parent:\n"
        "    for _ in range(100000): pass\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait(timeout=10)


def test_quick_demo_beside_a_cpu_hog(tmp_path, cli):
    """One demo run through the CLI with a CPU hog beside it (a test per check would run it once per
    xdist worker): exit 0, "as expected", then every check on what it wrote."""
    out = tmp_path / "out"
    with cpu_hog() as hog:
        r = cli("demo", "--quick", "-o", out, "--training-runs", RUNS)
        assert hog.poll() is None  # the hog really ran beside the whole demo
    assert r.rc == 0, r.out[-3000:] + r.err
    assert "as expected" in r.out and "NOT as expected" not in r.out and "Traceback" not in r.err
    assert f"report: {out / 'demo_report.json'}" in r.out  # paths in full under the table
    assert "inference tree: NOT SUBMITTABLE" in r.out and "--engine official" in r.out  # proctor's engine
    demo = _load_report(out / "demo_report.json")
    check_short_runs_break_exactly_min_duration(demo)
    check_the_checker_agrees_when_run_again_on_the_tree(demo)
    check_accuracy_is_the_fp32_reference(demo)
    check_training_rows_and_the_olympic_score(demo)
    check_report_file_layout_and_table(demo)
    check_report_html_gives_the_tables_verdict(demo)
    check_the_training_check_commands_it_printed_pass(demo, r.out, cli)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--full", "--quick"), ["--full", "--quick"]),
        (("--backend", "jax"), ["--backend", "sklearn or torch"]),
        (("--training-runs", "1"), ["--training-runs", "3 or more"]),
    ],
)
def test_bad_options_are_one_line_and_exit_2(tmp_path, cli, args, words):
    r = cli("demo", "-o", tmp_path / "out", *args)
    assert r.rc == 2 and all(w in r.err for w in words), r.err
    assert "Traceback" not in r.err and not (tmp_path / "out").exists()


def test_output_that_is_a_file_is_refused(tmp_path, cli):
    f = tmp_path / "file"
    f.write_text("keep me")
    r = cli("demo", "--quick", "-o", f)
    assert r.rc == 2 and str(f) in r.err and "not a folder" in r.err and "Traceback" not in r.err
    assert f.read_text() == "keep me"


FAILING_SUT = """
import numpy as np
from proctor.workloads.digits.qsl import DigitsQSL
from proctor.workloads.digits.sut import DigitsSUT


class Exploding:
    name = "exploding"

    def predict(self, x):
        raise ValueError("model exploded")


def factory(**params):
    qsl = DigitsQSL(256)
    return DigitsSUT(Exploding(), qsl), qsl
"""


def test_a_sut_failure_stops_the_demo_naming_the_run(tmp_path, monkeypatch):
    """A batch the SUT fails is reported to the run; the demo stops there with a RunError naming the
    run and its logs (the CLI's exit 1), instead of checking a run with failed samples."""
    from proctor.app.demo import inference, run_demo
    from proctor.errors import RunError

    (tmp_path / "bad_sut.py").write_text(FAILING_SUT)
    monkeypatch.setattr(inference, "SUT_SPEC", f"{tmp_path / 'bad_sut.py'}:factory")
    out = tmp_path / "out"
    with pytest.raises(RunError) as got:
        run_demo(DemoOptions(output=out, quick=True, training=False))
    text = str(got.value)
    assert text.startswith(f"digits Offline performance run (logs in {out / 'work' / 'probe'})"), text
    assert "SUT failure(s) reported" in text
    assert "model exploded" in (out / "work" / "probe" / "mlperf_log_detail.txt").read_text()


def _start_demo(out: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen(
        [sys.executable, "-m", "proctor", "demo", "--quick", "-o", str(out), "--training-runs", str(RUNS)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _wait_for_detail_log(proc: subprocess.Popen[str], out: Path, limit_s: float = 60.0) -> None:
    """Until a run has started writing (then a Ctrl-C lands inside a measurement)."""
    end = time.monotonic() + limit_s
    while not list(out.rglob("mlperf_log_detail.txt")):
        assert proc.poll() is None and time.monotonic() < end, "the demo never started a run"
        time.sleep(0.05)
    time.sleep(1.0)


@pytest.mark.parametrize(("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_ctrl_c_stops_the_demo_writes_what_was_measured_and_exits_130(tmp_path, sig, status):
    """Ctrl-C, and SIGTERM the same way (exit 143: 128 + the signal, loadgen/stop_signals.py)."""
    out = tmp_path / "out"
    proc = _start_demo(out)
    try:
        _wait_for_detail_log(proc, out)
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=15)  # a hang guard, not a timing assertion
    finally:
        proc.kill()
    assert proc.returncode == status, stdout[-2000:] + stderr
    assert "demo interrupted" in stderr and str(out) in stderr and "Traceback" not in stderr
    assert stderr.count("\n") == 1  # one line
    report = orjson.loads((out / "demo_report.json").read_bytes())
    assert report["interrupted"] is True and report["as_expected"] is False
    details = list(out.rglob("mlperf_log_detail.txt"))
    assert details
    summaries = [p.read_text() for p in out.rglob("mlperf_log_summary.txt")]
    # none half-written: the run the Ctrl-C cut says it is incomplete (tests/loadgen/test_interrupt.py);
    # on a slow host it may land just as a short run ended, whose logs are then whole (stop_signals.held)
    assert summaries and all("Result is" in s for s in summaries), summaries


def test_a_second_ctrl_c_exits_at_once(tmp_path):
    out = tmp_path / "out"
    proc = _start_demo(out)
    try:
        _wait_for_detail_log(proc, out)
        proc.send_signal(signal.SIGINT)
        proc.send_signal(signal.SIGINT)
        _stdout, stderr = proc.communicate(timeout=15)
    finally:
        proc.kill()
    assert proc.returncode == 130 and "Traceback" not in stderr, stderr
