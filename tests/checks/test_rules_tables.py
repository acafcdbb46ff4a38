"""Issue 21 (tables): what the rules' tables reject, the checker rejects. One failing tree or log
per wrong pass, asserting the finding and the rule it names; the passing counterpart beside it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from checks_corpus import NV_SYSTEM, UT_DC, UT_EDGE, copy_result_as, edit_detail
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proctor.checks.accuracy import check_accuracy
from proctor.checks.network import check_network_run, name_tags
from proctor.checks.submission import check_submission
from proctor.checks.system_description import check_system_description
from proctor.findings import Severity
from proctor.loadgen.logs.reader import DetailLogData
from proctor.rules.inference import BY_NAME, OFFLINE_MIN_SAMPLES, Suite, resolve
from proctor.rules.rounds import CURRENT_ROUND, SEED_KEYS, SEEDS

UT = Path("closed/UntetherAI/results")
NV = Path("closed/NVIDIA/results") / NV_SYSTEM / "llama2-70b-99.9" / "Server"
PERF = Path("performance/run_1/mlperf_log_detail.txt")


def _found(report, rule: str, path_part: str = "") -> list:
    return [f for f in report.findings if f.rule == rule and path_part in (f.path or "")]


# ---- 1. Offline minimum per suite ---------------------------------------------------------------


def test_offline_minimum_is_per_suite() -> None:
    l8 = BY_NAME["llama3_1-8b"]
    assert l8.offline_min_samples(Suite.DATACENTER) == 13368
    assert l8.offline_min_samples(Suite.EDGE) == 5000
    assert l8.offline_min_samples() == 13368  # suite unknown: the strictest
    assert BY_NAME["resnet50"].offline_min_samples(Suite.EDGE) == OFFLINE_MIN_SAMPLES
    assert BY_NAME["3d-unet"].offline_min_samples(Suite.DATACENTER) == 43
    assert BY_NAME["gpt-oss-120b"].offline_min_samples(Suite.DATACENTER) == 6396  # never below the QSL
    assert BY_NAME["dlrm-v3"].offline_min_samples(Suite.DATACENTER) == OFFLINE_MIN_SAMPLES


@pytest.mark.parametrize(
    ("system", "spq", "failed"), [(UT_DC, 5000, True), (UT_DC, 13368, False), (UT_EDGE, 5000, False)]
)
def test_llama31_8b_datacenter_offline_needs_13368_samples(
    corpus_tree: Path, system: str, spq: int, failed: bool
) -> None:
    res = copy_result_as(
        corpus_tree, corpus_tree / UT / UT_EDGE / "resnet50/offline", system, "llama3.1-8b", "Offline"
    )
    edit_detail(res / PERF, "effective_samples_per_query", str(spq))
    found = _found(check_submission(corpus_tree), "offline_samples_per_query", str(res))
    if failed:
        assert [(f.expected, f.key, f.failed) for f in found] == [
            (13368, "effective_samples_per_query", True)
        ]
        assert "§Scenarios" in found[0].source and "13368" in found[0].message
    else:
        assert found == []


# ---- 2. MultiStream: 8 samples per query --------------------------------------------------------


@pytest.mark.parametrize(("spq", "failed"), [(4, True), (16, True), (8, False)])
def test_multistream_has_eight_samples_per_query(corpus_tree: Path, spq: int, failed: bool) -> None:
    res = corpus_tree / UT / UT_EDGE / "resnet50/multistream"
    edit_detail(res / PERF, "effective_samples_per_query", str(spq))
    found = _found(check_submission(corpus_tree, "v4.1"), "multistream_samples_per_query")
    if failed:
        assert [(f.expected, f.key, f.failed) for f in found] == [(8, "effective_samples_per_query", True)]
        assert "Multistream" in found[0].source and "§Scenarios" in found[0].source
    else:
        assert found == []


# ---- 3. DLRMv3 NE is lower-is-better ------------------------------------------------------------


def test_dlrm_v3_ne_is_lower_is_better() -> None:
    v = resolve("dlrm-v3")
    ok = {"NE": 0.8670, "accuracy": 0.6965, "AUC": 0.7866}  # the script's fractions
    findings, results = check_accuracy(v.benchmark, v.level, ok)
    assert [f for f in findings if f.failed] == []
    ne = next(r for r in results if r.metric == "NE")
    assert ne.bound == "<=" and ne.threshold == pytest.approx(86.687 * 1.001)
    worse = check_accuracy(v.benchmark, v.level, {**ok, "NE": 0.8700})[0]
    assert [(f.rule, f.key) for f in worse if f.failed] == [("accuracy_target", "NE")]
    assert "dlrm_v3" in (worse[0].source or "") and "torchrec" in (worse[0].source or "")
    # a better (lower) NE passes: the official checker's lower bound would reject it
    assert [f for f in check_accuracy(v.benchmark, v.level, {**ok, "NE": 0.80})[0] if f.failed] == []


# ---- 3D-UNet: the reference's 0.86170 governs, the rules text's 0.86330 is a warning ------------


@pytest.mark.parametrize(
    ("dice", "error", "warning"),
    [(0.86112, False, True), (0.86300, False, False), (0.86000, True, False)],
)
def test_3d_unet_99_9_dice(dice: float, error: bool, warning: bool) -> None:
    v = resolve("3d-unet-99.9")
    findings, _ = check_accuracy(v.benchmark, v.level, {"mean": dice})
    assert any(f.rule == "accuracy_target" and f.failed for f in findings) is error
    adv = [f for f in findings if f.rule == "accuracy_target_advisory"]
    assert bool(adv) is warning
    assert all(f.severity is Severity.WARNING and "0.8633" in f.message for f in adv)


# ---- 4. Interactive/Server bounds: the run's own bound, and the rules' governing one -------------


def test_a_run_against_a_looser_tpot_bound_is_invalid(corpus_tree: Path) -> None:
    log = corpus_tree / NV / PERF
    edit_detail(log, "requested_server_tpot_latency", "250000000")
    found = _found(check_submission(corpus_tree, "v4.1"), "latency_limit")
    assert [(f.key, f.expected, f.failed) for f in found] == [
        ("requested_server_tpot_latency", 200_000_000, True)
    ]
    assert "looser" in found[0].message


def _gpt_oss_interactive(corpus_tree: Path, tpot_ns: int, tpot_p99_ns: int) -> Path:
    res = copy_result_as(corpus_tree, corpus_tree / NV, NV_SYSTEM, "gpt-oss-120b", "Interactive", "NVIDIA")
    log = res / PERF
    edit_detail(log, "requested_server_ttft_latency", "2000000000")
    edit_detail(log, "requested_server_tpot_latency", str(tpot_ns))
    edit_detail(log, "result_time_per_output_token_99.00_percentile_ns", str(tpot_p99_ns))
    for key, seed in zip(SEED_KEYS, SEEDS[CURRENT_ROUND], strict=True):  # a run of the current round
        edit_detail(log, f"effective_{key}", str(seed))
    if tpot_p99_ns >= tpot_ns:  # as LoadGen judges against its requested bound
        edit_detail(log, "result_validity", '"INVALID"')
        edit_detail(log, "result_perf_constraints_met", "false")
    return res


def test_gpt_oss_interactive_rules_tpot_governs(corpus_tree: Path) -> None:
    # mlperf.conf's 15 ms made LoadGen call a 17 ms TPOT invalid; the rules' 20 ms governs
    res = _gpt_oss_interactive(corpus_tree, 15_000_000, 17_000_000)
    report = check_submission(corpus_tree)
    mine = [
        f
        for f in report.findings
        if str(res) in (f.path or "") and f.rule in ("latency_limit", "result_validity")
    ]
    assert [(f.rule, f.severity) for f in mine] == [("result_validity", Severity.WARNING)]
    assert "20 ms" in mine[0].message and "15 ms" in mine[0].message


def test_gpt_oss_interactive_over_the_rules_tpot_fails(corpus_tree: Path) -> None:
    res = _gpt_oss_interactive(corpus_tree, 15_000_000, 21_000_000)
    found = _found(check_submission(corpus_tree), "latency_limit", str(res))
    assert [(f.key, f.expected) for f in found] == [
        ("result_time_per_output_token_99.00_percentile_ns", 20_000_000)
    ]
    # and a Server run told a looser 90 ms bound (rules: 80 ms) is invalid even with a fast TPOT
    res2 = copy_result_as(corpus_tree, corpus_tree / NV, NV_SYSTEM, "gpt-oss-120b", "Server", "NVIDIA")
    edit_detail(res2 / PERF, "requested_server_ttft_latency", "3000000000")
    edit_detail(res2 / PERF, "requested_server_tpot_latency", "90000000")
    edit_detail(res2 / PERF, "result_time_per_output_token_99.00_percentile_ns", "50000000")
    found2 = _found(check_submission(corpus_tree), "latency_limit", str(res2))
    assert [(f.key, f.expected) for f in found2] == [("requested_server_tpot_latency", 80_000_000)]


# ---- 10. Accuracy-dataset coverage for every benchmark --------------------------------------------


def test_every_suite_benchmark_has_its_dataset_size_and_source() -> None:
    for b in BY_NAME.values():
        if not b.qsl_size:
            continue
        for suite in b.qsl_size:
            assert b.dataset_size(suite), (b.name, suite)
        assert b.accuracy_dataset_source, b.name
    assert BY_NAME["llama3_1-8b"].dataset_size(Suite.EDGE) == 5000
    assert {
        n: BY_NAME[n].dataset_size() for n in ("rgat", "3d-unet", "dlrm-v3", "llama2-70b", "gpt-oss-120b")
    } == {
        "rgat": 788379,
        "3d-unet": 43,
        "dlrm-v3": 349823,
        "llama2-70b": 24576,
        "gpt-oss-120b": 4395,
    }


def _accuracy_run(res: Path, count: int) -> Path:
    acc = res / "accuracy" / "mlperf_log_detail.txt"
    acc.parent.mkdir(exist_ok=True)
    acc.write_bytes((res / PERF).read_bytes())
    edit_detail(acc, "effective_test_mode", '"AccuracyOnly"')
    edit_detail(acc, "qsl_reported_total_count", str(count))
    return acc


@pytest.mark.parametrize(
    ("bench", "system", "count", "want"),
    [
        ("llama2-70b-99.9", NV_SYSTEM, 24000, 24576),
        ("llama2-70b-99.9", NV_SYSTEM, 24576, None),
        ("rgat", NV_SYSTEM, 1000, 788379),
        ("3d-unet-99.9", NV_SYSTEM, 42, 43),
        ("dlrm-v3", NV_SYSTEM, 34996, 349823),
        ("llama3.1-8b", UT_DC, 5000, 13368),
        ("llama3.1-8b", UT_EDGE, 5000, None),
    ],
)
def test_accuracy_run_covers_one_copy_of_the_dataset(
    corpus_tree: Path, bench: str, system: str, count: int, want: int | None
) -> None:
    sub = "NVIDIA" if system == NV_SYSTEM else "UntetherAI"
    if bench == "llama2-70b-99.9":
        res = corpus_tree / NV
    else:
        res = copy_result_as(corpus_tree, corpus_tree / NV, system, bench, "Offline", sub)
    acc = _accuracy_run(res, count)
    found = [f for f in _found(check_submission(corpus_tree), "accuracy_dataset") if f.path == str(acc)]
    if want is None:
        assert found == []
    else:
        assert [(f.expected, f.failed, f.key) for f in found] == [(want, True, "qsl_reported_total_count")]
        assert "one copy" in found[0].message and "§Benchmarks" in found[0].source


def test_qwen3_vl_interactive_subset_is_a_warning(corpus_tree: Path) -> None:
    res = copy_result_as(
        corpus_tree, corpus_tree / NV, NV_SYSTEM, "qwen3-vl-235b-a22b", "Interactive", "NVIDIA"
    )
    acc = _accuracy_run(res, 8000)
    found = [f for f in _found(check_submission(corpus_tree), "accuracy_dataset") if f.path == str(acc)]
    assert [(f.severity, f.expected) for f in found] == [(Severity.WARNING, 48289)]


# ---- 5. Network division: interconnects, index mode, compression, diagram, QDL source ------------

_NET = {
    "is_network": "true",
    "network_type": "Ethernet",
    "network_media": "fiber",
    "network_rate": "400 Gb/s",
    "nic_loadgen": "ConnectX-7",
    "number_nic_loadgen": "1",
    "net_software_stack_loadgen": "Linux TCP",
    "network_protocol": "HTTP/1.1 over TCP",
    "number_connections": "8",
    "nic_sut": "ConnectX-7",
    "number_nic_sut": "1",
    "net_software_stack_sut": "Linux TCP",
    "network_topology": "one switch",
}


def _system(tmp_path: Path, division: str = "network", **fields: str) -> Path:
    base = (
        json.loads(
            (
                Path(__file__).resolve().parents[3]
                / "shared/corpus/inference/v4.1/NVIDIA/systems"
                / f"{NV_SYSTEM}.json"
            ).read_text()
        )
        if (Path(__file__).resolve().parents[3] / "shared/corpus").is_dir()
        else {}
    )
    if not base:
        pytest.skip("shared/corpus is not available")
    base.update(division=division, submitter="NVIDIA", **(_NET if division == "network" else {}))
    base.update(fields)
    p = tmp_path / f"{NV_SYSTEM}.json"
    p.write_text(json.dumps(base))
    return p


@pytest.mark.parametrize(
    ("network_type", "error"),
    [
        ("PCIe Gen5", True),
        ("NVLink4", True),
        ("CXL 2.0", True),
        ("Ethernet", False),
        ("Infiniband NDR", False),
    ],
)
def test_bus_interconnects_are_forbidden(tmp_path: Path, network_type: str, error: bool) -> None:
    _, found = check_system_description(_system(tmp_path, network_type=network_type), "network", "NVIDIA")
    bus = [f for f in found if f.key == "network_type" and "bus interconnect" in f.message]
    assert bool(bus) is error
    assert all(f.failed and "§Network Division, General Constraints" in f.message for f in bus)
    assert not any(f.failed and f.key == "network_type" for f in found if f not in bus)


def test_efficient_is_not_ici(tmp_path: Path) -> None:
    _, found = check_system_description(
        _system(tmp_path, network_media="efficient copper"), "network", "NVIDIA"
    )
    assert not [f for f in found if f.key == "network_media"]


def test_proctor_qdl_name_tags_are_read() -> None:
    assert name_tags("Network SUT[a@h:1, b@h:2] model=digits input=index compress=zlib") == {
        "input": "index",
        "compress": "zlib",
    }
    assert name_tags("Network SUT[a] model=digits") == {}


def _log(sut_name: str) -> DetailLogData:
    log = DetailLogData("mlperf_log_detail.txt")
    log.values["sut_name"] = sut_name
    return log


@pytest.mark.parametrize(
    ("bench", "name", "rules"),
    [
        ("llama2-70b", "Network SUT[a] model=l input=index", ["network_index_mode"]),
        ("llama2-70b", "Network SUT[a] model=l compress=zlib", ["network_compression"]),
        ("gpt-oss-120b", "Network SUT[a] model=g compress=zstd", ["network_compression"]),
        ("resnet50", "Network SUT[a] model=r compress=zlib", []),
        ("dlrm-v3", "Network SUT[a] model=d compress=zstd", []),
        ("llama2-70b", "Network SUT[a] model=l compress=none", []),
        ("llama2-70b", "Network SUT[a] model=l", []),
    ],
)
def test_network_run_index_mode_and_compression(bench: str, name: str, rules: list[str]) -> None:
    found = check_network_run(_log(name), BY_NAME[bench])
    assert [f.rule for f in found] == rules
    assert all(f.failed and "§Network Division" in (f.source or "") for f in found)


def test_network_tree_needs_diagram_and_qdl_source(corpus_tree: Path) -> None:
    net = corpus_tree / "network" / "NVIDIA"
    net.parent.mkdir()
    (corpus_tree / "closed" / "NVIDIA").rename(net)
    sysjson = net / "systems" / f"{NV_SYSTEM}.json"
    sysjson.write_text(_system(corpus_tree, "network").read_text())
    edit_detail(
        net / "results" / NV_SYSTEM / "llama2-70b-99.9/Server" / PERF, "sut_name", '"Network SUT[n1] model=l"'
    )
    report = check_submission(corpus_tree, "v4.1")
    assert {f.rule for f in report.findings if f.rule.startswith("network_")} == {
        "network_diagram",
        "network_qdl_source",
    }
    (net / "code" / "qdl").mkdir(parents=True, exist_ok=True)
    (net / "code" / "qdl" / "qdl.py").write_text("# the QDL\n")
    (net / "systems" / "network_diagram.png").write_bytes(b"\x89PNG")
    report = check_submission(corpus_tree, "v4.1")
    assert {f.rule for f in report.findings if f.rule.startswith("network_")} == set()


# ---- datacenter minimum: host_networking, ECC -------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "key"),
    [
        ({"host_memory_configuration": "12x 64GB DDR5 non-ECC"}, "host_memory_configuration"),
        ({"accelerator_memory_configuration": "HBM3e, ECC disabled"}, "accelerator_memory_configuration"),
        ({"accelerator_memory_configuration": "HBM3e (ECC: off)"}, "accelerator_memory_configuration"),
        ({"host_memory_configuration": "12x 64GB DDR5 ECC"}, None),
        ({}, None),
    ],
)
def test_datacenter_minimum(tmp_path: Path, fields: dict[str, str], key: str | None) -> None:
    _, found = check_system_description(_system(tmp_path, "closed", **fields), "closed", "NVIDIA")
    errors = [(f.key, f.failed) for f in found if f.failed]
    assert errors == ([(key, True)] if key else [])
    assert all("Minimum requirements of a datacenter system" in f.message for f in found if f.failed)


def test_a_placeholder_host_networking_is_a_warning(tmp_path: Path) -> None:
    _, found = check_system_description(
        _system(tmp_path, "closed", host_networking="N/A"), "closed", "NVIDIA"
    )
    assert [(f.key, f.severity) for f in found] == [("host_networking", Severity.WARNING)]


@pytest.mark.parametrize("system_type", ["edge", "datacenter"])
def test_an_empty_host_networking_is_an_error_for_every_system(tmp_path: Path, system_type: str) -> None:
    """As the official checker: host_networking is a meaningful-response field for every system."""
    _, found = check_system_description(
        _system(tmp_path, "closed", system_type=system_type, host_networking=""), "closed", "NVIDIA"
    )
    assert [(f.key, f.failed) for f in found if f.failed] == [("host_networking", True)]


# ---- hostile input: the new readers of sut_name and system-description text ----------------------


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300), st.sampled_from(["llama2-70b", "resnet50", "dlrm-v3"]))
def test_any_sut_name_gives_findings_not_exceptions(name: str, bench: str) -> None:
    tags = name_tags(name)
    assert set(tags) <= {"input", "compress"} and all(len(v) <= 40 for v in tags.values())
    for f in check_network_run(_log(name), BY_NAME[bench]):
        assert f.failed and f.rule in ("network_index_mode", "network_compression")
    assert check_network_run(_log("x" * 100_000 + " input=index"), BY_NAME[bench]) == []  # bounded read


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=200), st.text(max_size=200))
def test_any_interconnect_or_memory_text_is_read(tmp_path: Path, network_type: str, memory: str) -> None:
    p = tmp_path / "s.json"
    p.write_text(
        json.dumps(
            {
                "division": "network",
                "system_type": "datacenter",
                **_NET,
                "network_type": network_type,
                "host_memory_configuration": memory,
                "host_networking": "Ethernet",
            }
        )
    )
    _, found = check_system_description(p, "network", "NVIDIA")
    assert all(f.rule == "system_description" for f in found)


def _qwen_interactive(corpus_tree: Path, target_ns: int, p99_ns: int) -> Path:
    src = corpus_tree / UT / UT_DC / "resnet50/server"
    res = copy_result_as(corpus_tree, src, UT_DC, "qwen3-vl-235b-a22b", "Interactive")
    log = res / PERF
    for key, seed in zip(SEED_KEYS, SEEDS[CURRENT_ROUND], strict=True):
        edit_detail(log, f"effective_{key}", str(seed))
    edit_detail(log, "effective_performance_sample_count", "48289")
    edit_detail(log, "effective_target_latency_ns", str(target_ns))
    edit_detail(log, "result_99.00_percentile_latency_ns", str(p99_ns))
    if p99_ns >= target_ns:
        edit_detail(log, "result_validity", '"INVALID"')
        edit_detail(log, "result_perf_constraints_met", "false")
    return res


def test_qwen3_vl_interactive_rules_bound_governs(corpus_tree: Path) -> None:
    # mlperf.conf resolves qwen3-vl-235b-a22b-interactive to *.Server.target_latency = 10 ms
    res = _qwen_interactive(corpus_tree, 10_000_000, 1_200_000_000)
    mine = [
        f
        for f in check_submission(corpus_tree).findings
        if str(res) in (f.path or "") and f.rule in ("latency_limit", "result_validity")
    ]
    assert [(f.rule, f.severity) for f in mine] == [("result_validity", Severity.WARNING)]


@pytest.mark.parametrize(
    ("target_ns", "p99_ns", "key"),
    [
        (2_000_000_000, 1_200_000_000, "effective_target_latency_ns"),  # judged against a looser bound
        (10_000_000, 1_600_000_000, "result_99.00_percentile_latency_ns"),  # over the rules' 1.5 s
    ],
)
def test_qwen3_vl_interactive_fails_the_rules_bound(
    corpus_tree: Path, target_ns: int, p99_ns: int, key: str
) -> None:
    res = _qwen_interactive(corpus_tree, target_ns, p99_ns)
    found = [f for f in _found(check_submission(corpus_tree), "latency_limit", str(res)) if f.failed]
    assert [(f.key, f.expected) for f in found][:1] == [(key, 1_500_000_000)]
