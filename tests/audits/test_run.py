"""run_audits end to end on a manual clock: honest SUTs pass, stale or caching SUTs fail the audit."""

from __future__ import annotations

from pathlib import Path

from proctor.audits.run import Layout, Tree, run_audits
from proctor.audits.specs import Audit
from proctor.loadgen.logs.reader import read_detail

from .conftest import clocked_runner, ss_settings


def _tree(tmp_path: Path, layout: Layout = Layout.RESULTS) -> Tree:
    return Tree(tmp_path, "sys", "resnet", "SingleStream", layout)


def test_honest_sut_passes_test01_and_test04_with_official_files(tmp_path):
    tree = _tree(tmp_path)
    outcomes = run_audits(clocked_runner(), ss_settings(), "resnet50", tree, [Audit.TEST01, Audit.TEST04])
    assert [o.passed for o in outcomes] == [True, True]
    t01 = tmp_path / "results/sys/resnet/SingleStream/TEST01"
    assert sorted(p.relative_to(t01).as_posix() for p in t01.rglob("*") if p.is_file()) == [
        "accuracy/mlperf_log_accuracy.json",
        "performance/run_1/mlperf_log_detail.txt",
        "performance/run_1/mlperf_log_summary.txt",
        "verify_accuracy.txt",
        "verify_performance.txt",
    ]
    acc = (t01 / "verify_accuracy.txt").read_text()
    assert "num_perf_log_data_mismatch = 0\nnum_missing_qsl_idxs = 0\nTEST PASS\n" in acc
    assert (t01 / "verify_performance.txt").read_text().splitlines() == [
        "Verifying performance.",
        "Reference score = 1000000.0",
        "Test score = 1000000.0",
        "TEST PASS",
    ]
    t04 = (tmp_path / "results/sys/resnet/SingleStream/TEST04/verify_performance.txt").read_text()
    assert t04.splitlines() == ["Verifying performance.", "reference score = 1000.0", "test score = 1000.0", "TEST PASS"]
    # the audit runs really ran their audit.config: TEST04 issued one sample index only
    d04 = read_detail(tmp_path / "audit_runs/resnet/SingleStream/TEST04/mlperf_log_detail.txt")
    assert d04.require("effective_performance_issue_same") is True
    assert d04.require("effective_performance_issue_same_index") == 3
    d01 = read_detail(tmp_path / "audit_runs/resnet/SingleStream/TEST01/mlperf_log_detail.txt")
    assert d01.require("effective_accuracy_log_rng_seed") == 720381539243781796
    assert d01.require("effective_accuracy_log_sampling_target") == 4096


def test_stale_answers_in_performance_mode_fail_test01_naming_the_samples(tmp_path):
    outcomes = run_audits(clocked_runner(stale=True), ss_settings(), "resnet50", _tree(tmp_path), [Audit.TEST01])
    (o,) = outcomes
    assert not o.passed
    acc, perf = o.verdicts
    assert not acc.passed and perf.passed
    assert acc.numbers["num_perf_log_data_mismatch"] > 0
    assert acc.numbers["differing_qsl_idx"]
    text = (o.folder / "verify_accuracy.txt").read_text()
    assert "TEST FAIL" in text and "TEST PASS" not in text
    first = acc.numbers["differing_qsl_idx"][0]
    assert f"qsl_idx {first}" in text


def test_caching_sut_fails_test04(tmp_path):
    (o,) = run_audits(clocked_runner(cache=True), ss_settings(), "resnet50", _tree(tmp_path), [Audit.TEST04])
    assert not o.passed
    (v,) = o.verdicts
    assert v.numbers["test_score"] > v.numbers["reference_score"] * 5
    assert v.lines[-1] == "TEST FAIL: Test score invalid"
    assert "caching" in (o.folder / "verify_performance.txt").read_text()


def test_compliance_layout_for_older_rounds(tmp_path):
    tree = _tree(tmp_path, Layout.COMPLIANCE)
    (o,) = run_audits(clocked_runner(), ss_settings(), "resnet50", tree, [Audit.TEST04])
    assert o.passed
    assert o.folder == tmp_path / "compliance/sys/resnet/SingleStream/TEST04"
    assert (tmp_path / "results/sys/resnet/SingleStream/performance/run_1/mlperf_log_detail.txt").is_file()


def _noisy_runner(service_ns: list[int], **sut_kw):
    """Each run's service time from a list (the reference first, then each audit run): run-to-run
    noise on a manual clock, so the verdicts are exact."""
    from proctor.audits.run import RunLogs
    from proctor.loadgen.clock import ManualClock
    from proctor.loadgen.engine import run_test
    from proctor.loadgen.settings import LogOutputSettings, LogSettings
    from proctor.suts.synthetic import InMemoryQSL

    from .conftest import ClockedSUT

    times = iter(service_ns)

    def run(settings, outdir, conf):
        clock = ManualClock()
        sut = ClockedSUT(clock, next(times), **sut_kw)
        log = LogSettings(log_output=LogOutputSettings(outdir=str(outdir)), enable_trace=False)
        out = run_test(sut, InMemoryQSL(64, 16), settings, log, audit_config=conf, clock=clock)
        p = out.log_paths
        return RunLogs(p["detail"], p["summary"], p["accuracy"], out.errors, out.incomplete_reason)

    return run


def test_one_fast_audit_run_inside_the_reference_spread_is_inconclusive_and_repeated(tmp_path):
    """Issue 23 journey 6: the audit run came out 25 % faster once; the reference runs themselves
    spread by 18 % (1 ms, then 0.85 ms and 1 ms), so that is noise: repeated, and the repeat passes."""
    ms = 1_000_000
    times = [ms, int(0.8 * ms), int(0.85 * ms), ms, ms]  # reference, audit, 2 spread runs, audit again
    (o,) = run_audits(_noisy_runner(times), ss_settings(), "resnet50", _tree(tmp_path), [Audit.TEST04])
    assert o.passed and not o.inconclusive
    (first,) = [n for n in o.notes if n.startswith("TEST04 attempt 1")]
    assert "inside the spread of 3 reference runs (1000 to 1176.47, 17.6%" in first
    assert first.endswith("inconclusive, repeated")
    # the files in the tree are the passing attempt's: the checker re-verifies them
    assert (o.folder / "verify_performance.txt").read_text().splitlines()[-1] == "TEST PASS"
    assert (tmp_path / "audit_runs/resnet/SingleStream/reference/run_3/mlperf_log_summary.txt").is_file()


def test_a_faster_run_outside_a_tight_reference_spread_fails_at_once(tmp_path):
    """Steady reference runs (1 ms each): 25 % faster is outside their spread: a failure, not noise."""
    ms = 1_000_000
    (o,) = run_audits(_noisy_runner([ms, int(0.8 * ms), ms, ms]), ss_settings(), "resnet50", _tree(tmp_path),
                      [Audit.TEST04])
    assert not o.passed and not o.inconclusive
    notes = [n for n in o.notes if n.startswith("TEST04 attempt")]
    assert len(notes) == 1 and "outside the spread of 3 reference runs (1000 to 1000, 0.0%" in notes[0]
    assert o.verdicts[0].lines[-1] == "TEST FAIL: Test score invalid"


def test_a_noisy_sut_stays_inconclusive_and_says_so(tmp_path):
    """Every audit run lands 25 % faster while the references spread by 18 %: after PERF_ATTEMPTS runs
    the outcome is inconclusive (not passed, not a cheat), and the file says why."""
    from proctor.audits.run import PERF_ATTEMPTS

    ms = 1_000_000
    times = [ms, int(0.8 * ms), int(0.85 * ms), ms] + [int(0.8 * ms)] * (PERF_ATTEMPTS - 1)
    (o,) = run_audits(_noisy_runner(times), ss_settings(), "resnet50", _tree(tmp_path), [Audit.TEST04])
    assert not o.passed
    assert o.inconclusive.startswith("TEST04 test score 1250 against the reference 1000: inside the spread")
    assert o.inconclusive.endswith(f"inconclusive after {PERF_ATTEMPTS} audit run(s)")
    assert len([n for n in o.notes if n.startswith("TEST04 attempt")]) == PERF_ATTEMPTS
    text = (o.folder / "verify_performance.txt").read_text()
    assert "TEST FAIL: Test score invalid" in text and "proctor: INCONCLUSIVE, not a finding against the SUT" in text
    assert "may be caching" in text  # the official reason stays, the spread's verdict beside it
    # what `proctor audit` prints of it: INCONCLUSIVE, never the script's TEST FAIL (issue 31 §2)
    from rich.console import Console

    from proctor.cli.audit import print_outcomes

    for quiet in (False, True):
        console = Console(record=True, width=400)
        print_outcomes(console, [o], quiet=quiet)
        shown = console.export_text()
        assert "TEST FAIL" not in shown and "TEST04: INCONCLUSIVE" in shown
        assert f"INCONCLUSIVE: {o.inconclusive}" in shown
    console = Console(record=True, width=400)
    print_outcomes(console, [o])
    assert f"TEST04 performance: TEST INCONCLUSIVE: {o.inconclusive} (" in console.export_text()
    from proctor.app.documents import audit_document

    doc = audit_document([o], "", 1)
    assert not any("TEST FAIL" in f["message"] for f in doc["findings"])
    assert doc["audits"][0]["checks"][0]["lines"][-1] == "TEST FAIL: Test score invalid"  # the file's, as official


def test_noise_pattern_judge_spread():
    """The band: the official threshold widened by the spread, on the reference and the audit run."""
    from proctor.audits.run import judge_spread

    nums = {"threshold": 0.1, "reference_score": 100.0}
    assert judge_spread(Audit.TEST04, {**nums, "test_score": 120.0}, [100.0, 105.0])[0]  # < 105*1.1*1.05
    assert not judge_spread(Audit.TEST04, {**nums, "test_score": 122.0}, [100.0, 105.0])[0]
    assert not judge_spread(Audit.TEST04, {**nums, "test_score": 111.0}, [100.0, 100.0])[0]
    # TEST01 is two-sided: slower by more than the band is outside too
    assert judge_spread(Audit.TEST01, {**nums, "test_score": 86.0}, [100.0, 105.0])[0]
    assert not judge_spread(Audit.TEST01, {**nums, "test_score": 85.0}, [100.0, 105.0])[0]


def test_a_caching_sut_fails_outside_the_spread(tmp_path):
    ms = 1_000_000
    (o,) = run_audits(_noisy_runner([ms] * 4, cache=True), ss_settings(), "resnet50", _tree(tmp_path),
                      [Audit.TEST04])
    assert not o.passed and not o.inconclusive
    (note,) = [n for n in o.notes if n.startswith("TEST04 attempt")]
    assert "outside the spread" in note and note.endswith(": failed")
    assert o.verdicts[0].lines[-1] == "TEST FAIL: Test score invalid"


def test_with_a_given_reference_a_caching_sut_fails_every_attempt(tmp_path):
    """No spread to measure (the reference came from --results): each faster run is repeated, and
    a SUT faster every time fails after the last attempt."""
    from proctor.audits.run import PERF_ATTEMPTS

    ms = 1_000_000
    run_audits(_noisy_runner([ms, ms]), ss_settings(), "resnet50", _tree(tmp_path / "a"), [Audit.TEST04])
    given = Tree(tmp_path / "b", "sys", "resnet", "SingleStream", results=tmp_path / "a/results/sys/resnet/SingleStream")
    (o,) = run_audits(_noisy_runner([ms] * PERF_ATTEMPTS, cache=True), ss_settings(), "resnet50", given, [Audit.TEST04])
    assert not o.passed and not o.inconclusive
    notes = [n for n in o.notes if n.startswith("TEST04 attempt")]
    assert len(notes) == PERF_ATTEMPTS and notes[-1].endswith(f"failed {PERF_ATTEMPTS} of {PERF_ATTEMPTS} attempts")


def test_a_caching_offline_sut_fails_on_its_score_not_its_length(tmp_path):
    """Offline TEST04 on a caching SUT: its run at ten times the reference rate ended before
    min_duration ("Test results are invalid"); the audit run is sized by its own rate, so the
    verdict is the score's."""
    from proctor.loadgen.resolve import Overrides, resolve_settings
    from proctor.loadgen.types import Scenario

    settings = resolve_settings(
        "resnet50", Scenario.OFFLINE, None, overrides=Overrides(min_duration_ms=100, min_query_count=1, target_qps=1.0)
    ).settings
    tree = Tree(tmp_path, "sys", "resnet", "Offline")
    (o,) = run_audits(clocked_runner(cache=True), settings, "resnet50", tree, [Audit.TEST04])
    assert not o.passed and not o.inconclusive
    assert o.verdicts[0].lines[-1] == "TEST FAIL: Test score invalid"
    assert any(n.startswith("audit run ended before min_duration") for n in o.notes), o.notes
    assert o.verdicts[0].numbers["test_score"] > 5 * o.verdicts[0].numbers["reference_score"]


def test_a_short_offline_reference_is_sized_by_itself_and_the_audits_pass(tmp_path):
    """Issue 23 journey 6: `audit --quick` on Offline failed "Reference results are invalid" (the SUT
    outran offline_expected_qps, so the run ended before min_duration)."""
    from proctor.loadgen.resolve import Overrides, resolve_settings
    from proctor.loadgen.types import Scenario

    settings = resolve_settings(
        "resnet50", Scenario.OFFLINE, None, overrides=Overrides(min_duration_ms=100, min_query_count=1, target_qps=1.0)
    ).settings
    tree = Tree(tmp_path, "sys", "resnet", "Offline")
    outcomes = run_audits(clocked_runner(), settings, "resnet50", tree, [Audit.TEST01, Audit.TEST04])
    assert [o.passed for o in outcomes] == [True, True]
    assert any("made again with offline_expected_qps 1500" in n for n in outcomes[1].notes)
    d = read_detail(tmp_path / "audit_runs/resnet/Offline/TEST04/mlperf_log_detail.txt")
    assert d.require("requested_offline_expected_qps") == 1500  # the audit ran with the sized settings


def test_which_audits_apply_comes_from_the_rules_table():
    """TEST06 reads LLM token outputs: it applies to a benchmark exactly when the rules' table gives it
    token latencies; `proctor audit all` never picks an audit that does not apply (issue 31 §2)."""
    from proctor.audits.specs import is_llm, not_applicable, required_audits
    from proctor.rules.inference import BENCHMARKS

    assert BENCHMARKS
    for b in BENCHMARKS:
        llm = any(limit.uses_tokens for limit in b.latency.values())
        assert is_llm(b.name) is llm
        assert (not_applicable(Audit.TEST06, b.name) == "") is llm
        assert not_applicable(Audit.TEST01, b.name) == "" and not_applicable(Audit.TEST04, b.name) == ""
        assert all(not_applicable(a, b.name) == "" for a in required_audits(b.name)), b.name
    why = not_applicable(Audit.TEST06, "resnet50")
    assert why.startswith("TEST06 does not apply to resnet50: ") and why.endswith(
        "its audits: TEST01, TEST04 (`proctor audit all` runs them)")
    assert not_applicable(Audit.TEST06, "digits").startswith("TEST06 does not apply to digits")
