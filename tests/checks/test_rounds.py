"""Each round is checked against its own benchmark table: results published in v4.1, v5.0 and v5.1
pass with `--round` of their round, and the current round still rejects what it no longer has.

The trees are built from the real v4.1 logs in shared/corpus/inference (NVIDIA's llama2-70b Server
run, UntetherAI's resnet50 Server and Offline runs), their keys switched to the facts of each round's
benchmark (its QSL size, latency bound, seeds) as that round's official checker states them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.checks.submission import SubmissionReport, check_submission
from proctor.findings import Severity
from proctor.rules.inference_rounds import COMPLETED, SCHEDULED, round_table
from proctor.rules.rounds import CURRENT_ROUND, ROUNDS, SEEDS
from tests.checks.checks_corpus import (
    AUDIT_SETTING,
    CORPUS,
    NV_SYSTEM,
    UT_DC,
    UT_EDGE,
    VERIFY,
    complete_results,
    edit_detail,
    edit_run,
)

SUB = "UntetherAI"  # the system description's submitter
SYSTEM = "dc_system"
SEED_KEYS = ("effective_qsl_rng_seed", "effective_sample_index_rng_seed", "effective_schedule_rng_seed")
SOURCES = {
    "server": CORPUS / "UntetherAI" / UT_DC / "resnet50" / "server",
    "offline": CORPUS / "UntetherAI" / UT_EDGE / "resnet50" / "offline",
    "llm_server": CORPUS / "NVIDIA" / NV_SYSTEM / "llama2-70b-99.9" / "Server",
}


def _append(path: Path, key: str, value: str) -> None:
    """Add a key the source log lacks (a metric another benchmark's LoadGen run logs)."""
    line = (
        f':::MLLOG {{"key": "{key}", "value": {value}, "time_ms": 1.0, "namespace": "mlperf::logging", '
        '"event_type": "POINT_IN_TIME", "metadata": {"is_error": false, "is_warning": false, '
        '"file": "results.cc", "line_no": 1, "pid": 1, "tid": 1}}\n'
    )
    with path.open("a") as fh:
        fh.write(line)


def _result(
    root: Path,
    bench: str,
    scenario: str,
    source: str,
    version: str,
    edits: dict[str, str],
    dataset: int,
    accuracy_txt: str,
    audits: tuple[str, ...] = (),
) -> Path:
    """One result folder: the source run's logs with `edits` and the round's seeds, its accuracy run
    (AccuracyOnly over `dataset` samples) and the audits the round requires."""
    if not CORPUS.is_dir():
        pytest.skip("shared/corpus/inference is not available")
    sub = root / "closed" / SUB
    (sub / "systems").mkdir(parents=True, exist_ok=True)
    shutil.copy(CORPUS / "UntetherAI" / "systems" / f"{UT_DC}.json", sub / "systems" / f"{SYSTEM}.json")
    d = sub / "results" / SYSTEM / bench / scenario
    perf = d / "performance" / "run_1"
    perf.mkdir(parents=True)
    for name in ("mlperf_log_detail.txt", "mlperf_log_summary.txt"):
        shutil.copy(SOURCES[source] / name, perf / name)
    detail = perf / "mlperf_log_detail.txt"
    for key, want in zip(SEED_KEYS, SEEDS[version], strict=True):
        edit_run(detail, key, str(want))
    for key, value in edits.items():
        if f'"key": "{key}"' in detail.read_text():
            edit_run(detail, key, value)
        else:
            _append(detail, key, value)
    acc = d / "accuracy"
    acc.mkdir()
    shutil.copy(detail, acc / "mlperf_log_detail.txt")
    edit_detail(acc / "mlperf_log_detail.txt", "effective_test_mode", '"AccuracyOnly"')
    if '"key": "qsl_reported_total_count"' in (acc / "mlperf_log_detail.txt").read_text():
        edit_detail(acc / "mlperf_log_detail.txt", "qsl_reported_total_count", str(dataset))
    else:
        _append(acc / "mlperf_log_detail.txt", "qsl_reported_total_count", str(dataset))
    (acc / "accuracy.txt").write_text(accuracy_txt)
    (acc / "mlperf_log_accuracy.json").write_text(ACC_LOG)
    for test in audits:
        t = sub / "compliance" / SYSTEM / bench / scenario / test
        (t / "performance" / "run_1").mkdir(parents=True)
        for name in ("mlperf_log_detail.txt", "mlperf_log_summary.txt"):
            shutil.copy(perf / name, t / "performance" / "run_1" / name)
        for key, value in AUDIT_SETTING[test].items():
            edit_detail(t / "performance" / "run_1" / "mlperf_log_detail.txt", key, value)
        if test == "TEST01":  # the audit's accuracy log, as the official checker wants it
            (t / "accuracy").mkdir()
            # the audit's sampled responses, equal to the accuracy run's (what TEST01 verifies)
            (t / "accuracy" / "mlperf_log_accuracy.json").write_text(AUDIT_LOG)
            (t / "accuracy" / "accuracy.txt").write_text(accuracy_txt)
        for name, text in VERIFY[test].items():
            (t / name).write_text(text)
    return d


ACC_LOG = "[\n" + ",\n".join(
    f'{{"seq_id": {i}, "qsl_idx": {i}, "data": "{i:02X}"}}' for i in range(4)
) + "\n]\n"
AUDIT_LOG = '[\n{"seq_id": 0, "qsl_idx": 2, "data": "02"}\n]\n'
GPTJ_ACC = "{'rouge1': 43.0011, 'rouge2': 20.1962, 'rougeL': 30.0112, 'rougeLsum': 40.1, 'gen_len': 4100000, 'gen_num': 13368}\n"
BERT_ACC = '{"exact_match": 83.52, "f1": 90.6}\n'
LLAMA2_ACC = (
    "{'rouge1': 44.8023, 'rouge2': 22.355, 'rougeL': 29.1623, 'rougeLsum': 42.33, 'gen_len': 26536928, "
    "'gen_num': 24576, 'gen_tok_len': 6732537, 'tokens_per_sample': 273.9}\n"
)


def _gptj_v41(root: Path, bench: str = "gptj-99") -> None:
    """A v4.1 GPT-J datacenter result: Offline (13,368 samples) and Server (20 s latency bound)."""
    psc = {"effective_performance_sample_count": "13368"}
    _result(
        root, bench, "Offline", "offline", "v4.1",
        {**psc, "result_inferred_tokens_per_second": "2650.4"}, 13368, GPTJ_ACC,
    )  # fmt: skip
    _result(
        root, bench, "Server", "server", "v4.1",
        {**psc, "effective_target_latency_ns": "20000000000", "result_inferred_completed_tokens_per_second": "2480.7"},
        13368, GPTJ_ACC,
    )  # fmt: skip


def _bert_v41(root: Path, server_edits: dict[str, str] | None = None) -> None:
    """A v4.1 BERT-99 datacenter result: Server (130 ms bound) and Offline; audits TEST01 and TEST05."""
    psc = {"effective_performance_sample_count": "10833"}
    audits = ("TEST01", "TEST05")
    _result(root, "bert-99", "Offline", "offline", "v4.1", psc, 10833, BERT_ACC, audits)
    edits = {**psc, "effective_target_latency_ns": "130000000", **(server_edits or {})}
    _result(root, "bert-99", "Server", "server", "v4.1", edits, 10833, BERT_ACC, audits)


# Equal issue pads an Offline query to a multiple of the loaded set, and the LoadGen of these rounds
# logs the padded size: the source run's 92,400,000 samples become 3,760 x 24,576 = 92,405,760, its
# 657.065314409 s then give 140,634 samples/s.
EQUAL_ISSUE_OFFLINE = {"generated_samples_per_query": "92405760", "result_samples_per_second": "140634"}


def _llama2_v51(root: Path, *, latency_scenario: str = "Interactive") -> None:
    """A v5.1 Llama2-70B 99.9 datacenter result: Offline and Interactive (Server is optional)."""
    # a v5.x LLM log: token latencies measured and equal issue mode on in every scenario (mlperf.conf)
    llm = {"requested_use_token_latencies": "true", "effective_sample_concatenate_permutation": "true"}
    _result(
        root, "llama2-70b-99.9", "Offline", "offline", "v5.1",
        {**llm, **EQUAL_ISSUE_OFFLINE, "effective_performance_sample_count": "24576", "result_tokens_per_second": "98000.5"},
        24576, LLAMA2_ACC,
    )  # fmt: skip
    if latency_scenario:
        _result(
            root, "llama2-70b-99.9", latency_scenario, "llm_server", "v5.1",
            {
                **llm,
                "result_first_token_99.00_percentile_latency_ns": "400000000",
                "result_time_per_output_token_99.00_percentile_ns": "35000000",
                # the Interactive bounds LoadGen judged the run by (mlperf.conf's interactive lines)
                "requested_server_ttft_latency": "450000000",
                "requested_server_tpot_latency": "40000000",
            },
            24576, LLAMA2_ACC,
        )  # fmt: skip


def _llama2_interactive_v50(root: Path) -> None:
    """A v5.0 llama2-70b-interactive-99 datacenter result: a Server run held to TTFT 450 / TPOT 40 ms."""
    llm = {"requested_use_token_latencies": "true", "effective_sample_concatenate_permutation": "true"}
    _result(
        root, "llama2-70b-interactive-99", "Offline", "offline", "v5.0",
        {**llm, **EQUAL_ISSUE_OFFLINE, "effective_performance_sample_count": "24576", "result_tokens_per_second": "61000.25"},
        24576, LLAMA2_ACC,
    )  # fmt: skip
    _result(
        root, "llama2-70b-interactive-99", "Server", "llm_server", "v5.0",
        {
            **llm,
            "result_first_token_99.00_percentile_latency_ns": "449000000",
            "result_time_per_output_token_99.00_percentile_ns": "39900000",
            # mlperf.conf's llama2-70b-interactive lines: the bounds LoadGen judged the run by
            "requested_server_ttft_latency": "450000000",
            "requested_server_tpot_latency": "40000000",
        },
        24576, LLAMA2_ACC,
    )  # fmt: skip


def _errors(report: SubmissionReport) -> list[str]:
    return [f"{f.rule}: {f.path}: {f.message}" for f in report.findings if f.failed]


def _build(tmp_path: Path, *builders) -> Path:  # type: ignore[no-untyped-def]
    root = tmp_path / "submission"
    for build in builders:
        build(root)
    return complete_results(root)


# --- the tables as data --------------------------------------------------------------------------
def test_every_round_has_a_table_and_its_own_seeds() -> None:
    assert ROUNDS == ("v4.1", "v5.0", "v5.1", "v6.0", "v6.1") and CURRENT_ROUND == "v6.1"
    for name in ROUNDS:
        rnd = round_table(name)
        assert rnd.name == name and rnd.seeds == SEEDS[name]
        assert rnd.benchmarks and all(b.source for b in rnd.benchmarks)
    with pytest.raises(ValueError, match="v3.1.*not a known round.*v4.1, v5.0, v5.1, v6.0, v6.1"):
        round_table("v3.1")


def test_each_round_names_the_benchmarks_its_checker_lists() -> None:
    def names(version: str) -> set[str]:
        return set(round_table(version).table.by_name)

    assert names("v4.1") == {
        "resnet50", "retinanet", "bert", "dlrm-v2", "3d-unet", "gptj", "llama2-70b", "stable-diffusion-xl",
        "mixtral-8x7b",
    }  # fmt: skip
    assert names("v5.0") == names("v4.1") | {"llama3_1-405b", "rgat"}
    assert names("v5.1") == names("v5.0") - {"gptj"} | {
        "llama3_1-8b", "llama3_1-8b-edge", "deepseek-r1", "whisper", "pointpainting",
    }  # fmt: skip
    assert "gptj" not in names("v6.1")
    assert names("v6.0") == names("v5.1") - {"dlrm-v2"} | {
        "gpt-oss-120b", "qwen3-vl-235b-a22b", "dlrm-v3", "wan-2.2-t2v-a14b", "yolo",
    }  # fmt: skip
    v60 = round_table("v6.0").table
    # v6.0's checker and mlperf.conf: GPT-OSS-120B Interactive TPOT 15 ms; Qwen3-VL Server required
    assert v60.resolve("gpt-oss-120b").benchmark.latency["Interactive"].tpot_ns == 15_000_000  # type: ignore[index]
    assert v60.resolve("qwen3-vl-235b-a22b").benchmark.required["datacenter"] == (("Server",), ("Offline",))  # type: ignore[index]
    assert "datacenter" not in v60.resolve("stable-diffusion-xl").benchmark.qsl_size


def test_older_rounds_differ_where_their_checker_says() -> None:
    v41, v50, v51 = (round_table(v).table for v in ("v4.1", "v5.0", "v5.1"))
    bert = v41.resolve("bert-99").benchmark
    assert bert.latency[bert.required[next(iter(bert.required))][0][0]].latency_ns == 130_000_000
    assert "datacenter" in bert.qsl_size and "datacenter" not in v50.resolve("bert-99").benchmark.qsl_size
    unet = v41.resolve("3d-unet-99.9")
    assert unet.level is not None and unet.level.threshold(unet.level.targets[0]) == pytest.approx(0.86170 * 0.999)
    assert unet.benchmark.qsl_size["datacenter"] == 43 and unet.benchmark.offline_min_samples() == 43
    assert v41.resolve("gptj-99").benchmark.offline_min_samples() == 13368
    assert v41.resolve("mixtral-8x7b").level.targets[0].reference == 45.4911  # type: ignore[union-attr]
    assert v50.resolve("mixtral-8x7b").level.targets[0].reference == 45.5989  # type: ignore[union-attr]
    inter = v50.resolve("llama2-70b-interactive-99")
    assert inter.interactive and inter.benchmark.latency["Interactive"].tpot_ns == 40_000_000  # type: ignore[index]
    assert "Interactive" not in v41.resolve("llama2-70b-99").benchmark.latency
    assert v51.resolve("llama3.1-8b-edge").benchmark.name == "llama3_1-8b-edge"
    assert "datacenter" not in v51.resolve("resnet").benchmark.qsl_size  # edge only in v5.1
    assert round_table("v4.1").server_field == COMPLETED and round_table("v6.0").server_field == COMPLETED
    assert round_table("v6.1").server_field == SCHEDULED  # the rules' FAQ


# --- published results pass with their round -------------------------------------------------------
def test_v41_gptj_datacenter_result_passes_and_the_current_round_rejects_it(tmp_path: Path) -> None:
    root = _build(tmp_path, _gptj_v41)
    report = check_submission(root, "v4.1")
    assert _errors(report) == [] and report.valid
    rows = {r.scenario: r for r in report.results}
    assert (rows["Offline"].metric, rows["Offline"].value) == ("inferred tokens per second", 2650.4)
    assert (rows["Server"].metric, rows["Server"].value) == ("inferred completed tokens per second", 2480.7)
    current = check_submission(root)
    names = [f for f in current.findings if f.rule == "benchmark_name"]
    assert len(names) == 1 and "unknown benchmark 'gptj-99'" in names[0].message
    assert f"in the {CURRENT_ROUND} benchmark table" in names[0].message and not current.valid


def test_v41_gptj_offline_query_below_the_dataset_size_fails(tmp_path: Path) -> None:
    root = _build(tmp_path, _gptj_v41)
    edit_run(
        root / "closed" / SUB / "results" / SYSTEM / "gptj-99" / "Offline" / "performance" / "run_1"
        / "mlperf_log_detail.txt", "effective_samples_per_query", "13367",
    )  # fmt: skip
    found = [f for f in check_submission(root, "v4.1").findings if f.failed]
    assert [(f.rule, f.expected) for f in found] == [("offline_samples_per_query", 13368)]


def test_v41_bert_server_datacenter_result_passes_with_the_v41_seeds(tmp_path: Path) -> None:
    root = _build(tmp_path, _bert_v41)
    report = check_submission(root, "v4.1")
    assert _errors(report) == [] and report.valid
    server = next(r for r in report.results if r.scenario == "Server")
    assert (server.metric, server.value) == ("completed samples per second", 140239)
    # the v5.0 table has no datacenter BERT; the v5.0 seeds differ too
    later = check_submission(root, "v5.0")
    assert {f.rule for f in later.findings if f.failed} >= {"suite", "seeds"}


def test_v41_bert_server_bound_is_130_ms(tmp_path: Path) -> None:
    root = _build(tmp_path, lambda r: _bert_v41(r, {"result_99.00_percentile_latency_ns": "130000000"}))
    found = [f for f in check_submission(root, "v4.1").findings if f.failed]
    assert [(f.rule, f.key, f.expected) for f in found] == [
        ("latency_limit", "result_99.00_percentile_latency_ns", 130_000_000)
    ]


def test_v41_test05_must_run_with_the_rounds_test05_seeds(tmp_path: Path) -> None:
    root = _build(tmp_path, _bert_v41)
    run = root / "closed" / SUB / "compliance" / SYSTEM / "bert-99" / "Server" / "TEST05" / "performance"
    edit_detail(run / "run_1" / "mlperf_log_detail.txt", "effective_schedule_rng_seed", str(SEEDS["v4.1"][2]))
    found = [f for f in check_submission(root, "v4.1").findings if f.failed]
    assert [(f.rule, f.key, f.expected) for f in found] == [
        ("seeds", "effective_schedule_rng_seed", 5435552105434836064)
    ]


def test_v41_bert_without_its_test05_audit_fails(tmp_path: Path) -> None:
    root = _build(tmp_path, _bert_v41)
    shutil.rmtree(root / "closed" / SUB / "compliance" / SYSTEM / "bert-99" / "Server" / "TEST05")
    found = [f for f in check_submission(root, "v4.1").findings if f.failed]
    assert [f.rule for f in found] == ["compliance_missing"] and "TEST05" in found[0].message


def test_v50_llama2_interactive_result_passes_and_its_bound_is_checked(tmp_path: Path) -> None:
    root = _build(tmp_path, _llama2_interactive_v50)
    report = check_submission(root, "v5.0")
    assert _errors(report) == [] and report.valid
    assert {r.scenario for r in report.results} == {"Interactive", "Offline"}
    detail = (
        root / "closed" / SUB / "results" / SYSTEM / "llama2-70b-interactive-99" / "Server" / "performance"
        / "run_1" / "mlperf_log_detail.txt"
    )  # fmt: skip
    edit_run(detail, "result_first_token_99.00_percentile_latency_ns", "450000000")
    found = [f for f in check_submission(root, "v5.0").findings if f.failed]
    assert [(f.rule, f.expected) for f in found] == [("latency_limit", 450_000_000)]


def test_v51_llama2_interactive_result_passes(tmp_path: Path) -> None:
    root = _build(tmp_path, _llama2_v51)
    report = check_submission(root, "v5.1")
    assert _errors(report) == [] and report.valid
    rows = {r.scenario: r for r in report.results}
    assert rows["Interactive"].metric == "completed tokens per second"
    assert (rows["Offline"].metric, rows["Offline"].value) == ("tokens per second", 98000.5)
    # v4.1 had no Interactive scenario for Llama2-70B (Server required, no bound to check an
    # Interactive result against: a warning), and its seeds differ
    older = check_submission(root, "v4.1")
    assert {f.rule for f in older.findings if f.failed} == {"seeds", "required_scenario"}
    assert any(f.rule == "latency_limit" and not f.failed for f in older.findings)


def test_v51_interactive_bound_is_tpot_40_ms(tmp_path: Path) -> None:
    root = _build(tmp_path, _llama2_v51)
    edit_run(
        root / "closed" / SUB / "results" / SYSTEM / "llama2-70b-99.9" / "Interactive" / "performance"
        / "run_1" / "mlperf_log_detail.txt", "result_time_per_output_token_99.00_percentile_ns", "40000000",
    )  # fmt: skip
    found = [f for f in check_submission(root, "v5.1").findings if f.failed]
    assert [(f.rule, f.expected) for f in found] == [("latency_limit", 40_000_000)]


def test_v51_needs_server_or_interactive_beside_offline(tmp_path: Path) -> None:
    root = _build(tmp_path, lambda r: _llama2_v51(r, latency_scenario=""))
    found = [f for f in check_submission(root, "v5.1").findings if f.failed]
    assert [f.rule for f in found] == ["required_scenario"]
    assert "Server or Interactive" in found[0].message


# --- user.conf ----------------------------------------------------------------------------------
def test_user_conf_that_differs_from_the_run_is_a_warning(tmp_path: Path) -> None:
    root = _build(tmp_path, _bert_v41)
    conf = root / "closed" / SUB / "measurements" / SYSTEM / "bert-99" / "Server" / "user.conf"
    conf.write_text("bert.Server.target_qps = 73920\n")
    report = check_submission(root, "v4.1")
    found = [f for f in report.findings if f.rule == "measurements_conf"]
    assert len(found) == 1 and found[0].severity is Severity.WARNING and found[0].line == 1
    assert "target_qps" in found[0].message and report.valid


@pytest.mark.parametrize(
    ("conf_value", "logged", "differs"),
    [
        ("1234567", "1.23457e+06", False),  # 7 significant digits: the log holds 6
        ("1234567.8", "1.23457e+06", False),
        ("0.000123456789", "0.000123457", False),
        ("1234567", "1234567", False),  # a log written with every digit still matches
        ("1235000", "1.23457e+06", True),  # a different value, even rounded, still differs
        ("1234500", "1.23457e+06", True),
    ],
)
def test_user_conf_compares_a_double_as_the_log_holds_it(
    tmp_path: Path, conf_value: str, logged: str, differs: bool
) -> None:
    root = _build(tmp_path, _bert_v41)
    server = root / "closed" / SUB / "measurements" / SYSTEM / "bert-99" / "Server"
    (server / "user.conf").write_text(f"bert.Server.target_qps = {conf_value}\n")
    detail = root / "closed" / SUB / "results" / SYSTEM / "bert-99" / "Server" / "performance" / "run_1"
    edit_detail(detail / "mlperf_log_detail.txt", "requested_server_target_qps", logged)
    found = [f for f in check_submission(root, "v4.1").findings if f.rule == "measurements_conf"]
    assert len(found) == int(differs), [f.message for f in found]


def test_v41_sdxl_scores_must_lie_in_the_checkers_range() -> None:
    from proctor.checks.accuracy import check_accuracy

    sdxl = round_table("v4.1").table.resolve("stable-diffusion-xl")
    inside = {"clip_score": 31.75, "fid_score": 23.5}
    assert check_accuracy(sdxl.benchmark, sdxl.level, inside)[0] == []
    for metric, value, bound in (("clip_score", 31.9, "<= 31.8133"), ("fid_score", 22.9, ">= 23.0109")):
        found = check_accuracy(sdxl.benchmark, sdxl.level, {**inside, metric: value})[0]
        assert [(f.rule, f.expected) for f in found] == [("accuracy_target", bound)]


def test_checking_a_submission_loads_no_numerics_and_only_its_rounds_table(tmp_path: Path) -> None:
    """`proctor check submission` is mostly start-up: it must not import another round's table, nor
    the LoadGen's numerics (numpy, scipy) where no result's early stopping is recomputed (Offline
    has none; a Server, SingleStream or MultiStream result loads them to recompute it)."""
    import subprocess
    import sys

    root = _build(tmp_path, _gptj_v41)
    shutil.rmtree(root / "closed" / SUB / "results" / SYSTEM / "gptj-99" / "Server")
    code = (
        "import sys; from proctor.checks.submission import check_submission; "
        f"rows = check_submission({str(root)!r}, 'v4.1').results; assert [r.scenario for r in rows] == ['Offline']; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'scipy') "
        "or m.startswith('proctor.rules.inference_v')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['proctor.rules.inference_v4_1']"


# --- the nesting guard's fast path (a detail log's lines skip the walk) ---------------------------
_json_values = st.recursive(
    st.none() | st.integers(-(2**63), 2**63 - 1) | st.text(alphabet="ab[]{}", max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text("xy", max_size=2), inner, max_size=3),
    max_leaves=80,
) | st.integers(55, 75).map(lambda n: _nest(n))  # around the depth limit


def _nest(depth: int) -> object:
    value: object = 0
    for i in range(depth):
        value = [value] if i % 2 else {"d": value}
    return value


@given(_json_values)
@settings(max_examples=300, deadline=None)
def test_line_depth_verdict_is_the_walks(value: object) -> None:
    """A line is rejected for nesting exactly when the full walk says so (the bracket count only
    lets a shallow line skip it)."""
    import orjson

    from proctor.mllog_lines import MAX_DEPTH, BadLine, nested_deeper, parse_line

    line = b":::MLLOG " + orjson.dumps({"key": "k", "value": value})
    rec = parse_line(line, 1)
    deep = nested_deeper({"key": "k", "value": value}, MAX_DEPTH)
    assert (isinstance(rec, BadLine) and "nested" in rec.reason) == deep


def test_deeply_nested_line_is_still_rejected() -> None:
    from proctor.mllog_lines import MAX_DEPTH, BadLine, parse_line

    value = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
    rec = parse_line(b':::MLLOG {"key": "k", "value": ' + value.encode() + b"}", 1)
    assert isinstance(rec, BadLine) and "nested deeper" in rec.reason


# --- the command line ---------------------------------------------------------------------------
def _cli(*args: str):  # type: ignore[no-untyped-def]
    from typer.testing import CliRunner

    from proctor.cli import inference_checks  # noqa: F401
    from proctor.cli.apps import app

    return CliRunner().invoke(app, list(args))


def test_cli_round_checks_with_that_rounds_table(tmp_path: Path) -> None:
    root = _build(tmp_path, _gptj_v41)
    assert _cli("check", "submission", str(root), "--round", "v4.1").exit_code == 0
    assert _cli("check", "submission", str(root)).exit_code == 1  # the current round has no GPT-J
    res = _cli("check", "submission", str(root), "--round", "v3.1")
    assert res.exit_code == 2 and "--round 'v3.1' is not a known round" in res.output
    assert "v4.1, v5.0, v5.1, v6.0, v6.1" in res.output
    assert "v5.0, v5.1" in " ".join(_cli("check", "submission", "--help").output.split())  # any wrapping
