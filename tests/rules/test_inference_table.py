"""The inference benchmark table against the rules text it was copied from, and against mlperf.conf."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from proctor.rules.inference import (
    BENCHMARKS,
    BY_NAME,
    CONF_DISAGREEMENTS,
    MIN_DURATION_MS,
    Category,
    Suite,
    resolve,
)
from proctor.rules.rounds import CURRENT_ROUND, SEEDS

RULES_DIR = Path(__file__).resolve().parents[3] / "shared" / "rules"
RULES_FILES = sorted(RULES_DIR.glob("000_*.txt")) if RULES_DIR.is_dir() else []


@pytest.fixture(scope="module")
def rules_text() -> str:
    if not RULES_FILES:
        pytest.skip("the inference rules text is not available")
    return RULES_FILES[0].read_text()


def _table_rows(text: str, anchor: str) -> list[list[str]]:
    """Rows of the first |=== table after `anchor`, split on unescaped '|'."""
    start = text.index(anchor)
    begin = text.index("|===", start)
    end = text.index("|===", begin + 4)
    rows = []
    for line in text[begin + 4 : end].splitlines():
        if line.startswith("|") and not line.startswith("|Area"):
            rows.append([c.strip() for c in re.split(r"(?<!\\)\|", line)[1:]])
    return rows


def _model_rows(text: str, anchor: str) -> dict[str, list[str]]:
    return {row[2]: row for row in _table_rows(text, anchor) if len(row) > 4}


def test_qsl_sizes_match_the_rules_tables(rules_text: str) -> None:
    dc = _model_rows(rules_text, "The Datacenter suite includes the following benchmarks")
    edge = _model_rows(rules_text, "[[edge-benchmarks]]")
    checked = 0
    for bench in BENCHMARKS:
        for suite, rows in ((Suite.DATACENTER, dc), (Suite.EDGE, edge)):
            row = rows.get(bench.display)
            if row is None:
                continue
            assert suite in bench.qsl_size, f"{bench.display} is in the {suite} table but not in proctor's"
            assert bench.qsl_size[suite] == int(row[4]), bench.display
            checked += 1
    # every row of both tables is represented
    names = {b.display for b in BENCHMARKS}
    assert set(dc) - names == set() and set(edge) - names == set()
    assert checked == len(dc) + len(edge) == 21


def test_ttft_tpot_limits_match_the_rules_text(rules_text: str) -> None:
    rows = _model_rows(rules_text, "The Datacenter suite includes the following benchmarks")
    pairs = 0
    for bench in BENCHMARKS:
        if not bench.is_llm:
            continue
        latency_cell = rows[bench.display][6]
        found = [(int(a), int(b)) for a, b in re.findall(r"TTFT/TPOT: (\d+) ms/(\d+) ms", latency_cell)]
        mine = [
            (lim.ttft_ns // 1_000_000, lim.tpot_ns // 1_000_000)  # type: ignore[operator]
            for cat, lim in sorted(bench.latency.items())
            if lim.uses_tokens
        ]
        assert sorted(found) == sorted(mine), bench.display
        pairs += len(found)
    assert pairs == 11


def test_bandwidth_numbers_match_the_appendix(rules_text: str) -> None:
    appendix = rules_text[
        rules_text.index("[[appendix-bw]]") : rules_text.index("[[appendix-speculative-decoding]]")
    ]
    ingress, egress = appendix.split("=== Egress Bandwidth")

    def numbers(section: str) -> dict[str, str]:
        out = {}
        for line in section.splitlines():
            if line.startswith("|") and not line.startswith("|Area") and not line.startswith("|==="):
                cells = [c.strip() for c in line.split("|")[1:]]
                out[cells[1]] = cells[-1]
        return out

    by_display = {b.display.lower(): b for b in BENCHMARKS}
    for section, side in ((ingress, "ingress"), (egress, "egress")):
        for model, cell in numbers(section).items():
            bench = by_display[model.lower()]
            bw = getattr(bench, side)
            if "> 0" in cell:
                assert bw.negligible, (model, side)
                continue
            m = re.search(r"throughput\*([\d,]+)(\*dtype_size)?", cell)
            if m is None:  # GPT-OSS egress: throughput*max_new_tokens*dtype_size (performance: 10000)
                assert bench.parameters["max_new_tokens_performance"] == bw.per_dtype
                continue
            value = int(m.group(1).replace(",", ""))
            assert (bw.per_dtype if m.group(2) else bw.fixed) == value, (model, side)


def test_bandwidth_formula_and_bytes_agree() -> None:
    """Each row's formula text multiplies out to the bytes it carries (the one stated exception: WAN,
    whose note says the rules' column is used instead of the product)."""
    rows = [(b.name, side, getattr(b, side)) for b in BENCHMARKS for side in ("ingress", "egress")]
    checked = 0
    for name, side, bw in rows:
        m = None if bw is None else re.fullmatch(r"[^=]+\*dtype_size = ([\d*]+)\*dtype_size", bw.formula)
        if m is None:
            continue
        product = 1
        for factor in m.group(1).split("*"):
            product *= int(factor)
        assert product == bw.per_dtype or "is used" in bw.note, (name, side, bw)
        checked += 1
    assert checked >= 15
    wan = BY_NAME["wan-2.2-t2v-a14b"].egress
    assert wan is not None and wan.per_dtype == 224_870_400 != 81 * 720 * 1280 * 3


def test_two_level_rows_bound_the_same_metrics() -> None:
    for name in ("3d-unet", "bert", "llama3_1-8b", "whisper", "digits"):
        low, high = BY_NAME[name].quality
        assert (low.fraction, high.fraction) == (0.99, 0.999) and low.targets == high.targets, name
        assert (low.precision, high.precision) == ("FP32", "FP32")
    assert [t.metric for t in BY_NAME["llama3_1-8b"].level(0.999).targets] == ["rouge1", "rouge2", "rougeL"]


def test_names_resolve_from_every_spelling() -> None:
    assert resolve("Llama3.1-8B").benchmark is BY_NAME["llama3_1-8b"]
    assert resolve("llama3.1-405b-interactive").conf_model == "llama3_1-405b-interactive"
    v = resolve("llama2-70b-interactive-99.9")
    assert (v.benchmark.name, v.interactive, v.level.fraction) == ("llama2-70b", True, 0.999)  # type: ignore[union-attr]
    assert resolve("resnet").benchmark.name == "resnet50"
    assert resolve("3d-unet-99.9").level.suffix == "99.9"  # type: ignore[union-attr]
    assert resolve("yolo-95").level.threshold(resolve("yolo-95").level.targets[0]) == 0.5073  # type: ignore[union-attr]
    with pytest.raises(KeyError, match="no 99% quality level"):
        resolve("llama2-70b-99")
    with pytest.raises(KeyError, match="unknown benchmark"):
        resolve("gptj-99")


def test_rows_carry_the_rules_numbers() -> None:
    l8 = BY_NAME["llama3_1-8b"]
    assert l8.qsl_size == {Suite.DATACENTER: 13368, Suite.EDGE: 5000}
    assert l8.parameters == {"min_new_tokens": 1, "max_new_tokens": 128}
    assert l8.generation[0].reference == 8167644 and l8.generation[0].high is None
    assert BY_NAME["llama3_1-405b"].generation[0].high == 1.1
    l70 = BY_NAME["llama2-70b"]
    assert l70.latency[Category.INTERACTIVE].ttft_ns == 450_000_000
    assert l70.level().threshold(l70.level().targets[0]) == pytest.approx(44.4312 * 0.999)
    assert BY_NAME["deepseek-r1"].required[Suite.DATACENTER] == ((Category.SERVER,), (Category.OFFLINE,))
    assert BY_NAME["pointpainting"].required[Suite.EDGE] == ((Category.SINGLE_STREAM,),)
    assert {s.scenario for b in BENCHMARKS for s in b.speculative} == {"Interactive", "SingleStream"}
    assert sorted(b.name for b in BENCHMARKS if b.speculative) == [
        "deepseek-r1",
        "gpt-oss-120b",
        "qwen3.6-27b",
    ]
    assert BY_NAME["bert"].offline_min_samples() == 10833
    assert BY_NAME["resnet50"].offline_min_samples() == 24576
    for b in BENCHMARKS:
        assert b.sample, b.name
        for suite in b.qsl_size:
            assert b.required.get(suite), (b.name, suite)


def test_digits_row_matches_the_workload() -> None:
    digits = pytest.importorskip("proctor.workloads.digits")
    row = BY_NAME[digits.MODEL_NAME]
    assert row.qsl_size == {Suite.EDGE: digits.PERFORMANCE_SAMPLE_COUNT}
    assert row.accuracy_dataset_size == digits.TOTAL_SAMPLE_COUNT
    assert tuple(lvl.fraction for lvl in row.quality) == digits.QUALITY_FRACTIONS
    for lvl in row.quality:
        assert lvl.threshold(lvl.targets[0]) == pytest.approx(digits.ACCURACY_TARGETS[lvl.fraction])
    assert row.latency[Category.SERVER].latency_ns == digits.SERVER_TARGET_LATENCY_NS


# ---- the shipped mlperf.conf agrees with the tables ----------------------------------------------

_ORACLE = r"""
import json, sys, mlperf_loadgen as lg
out = {}
for model in sys.argv[1:]:
    for scen in ("Server", "Offline", "SingleStream"):
        s = lg.TestSettings()
        assert s.FromConfig("", model, scen, 0) == 0
        out[f"{model}/{scen}"] = dict(
            latency=s.server_target_latency_ns, ttft=s.ttft_latency, tpot=s.tpot_latency,
            tokens=s.use_token_latencies, psc=s.performance_sample_count_override,
            offline_mqc=s.min_query_count, ss_pct=s.single_stream_target_latency_percentile,
            seeds=[s.qsl_rng_seed, s.sample_index_rng_seed, s.schedule_rng_seed],
            min_duration=s.min_duration_ms)
print(json.dumps(out))
"""

# Where the shipped mlperf.conf and the rules text disagree: the rules table's data (each with the
# side that governs), listed in docs/deviations.md. A new disagreement fails the walk below.
KNOWN_CONF_DEVIATIONS = {(d.model, d.setting) for d in CONF_DISAGREEMENTS}


def _conf_models() -> list[str]:
    models = []
    for b in BENCHMARKS:
        models.append(b.name)
        if Category.INTERACTIVE in b.latency:
            models.append(b.name + "-interactive")
    return models


def _official_conf() -> dict[str, dict]:
    pytest.importorskip("mlperf_loadgen")
    import json

    proc = subprocess.run(
        [sys.executable, "-c", _ORACLE, *_conf_models()],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(proc.stdout)


def _proctor_conf() -> dict[str, dict]:
    conf = pytest.importorskip("proctor.loadgen.conf")
    from proctor.loadgen.settings import TestSettings
    from proctor.loadgen.types import Scenario

    out = {}
    for model in _conf_models():
        for scen in ("Server", "Offline", "SingleStream"):
            s = conf.load_conf_files(TestSettings(), model, Scenario(scen))
            out[f"{model}/{scen}"] = dict(
                latency=s.server_target_latency_ns,
                ttft=s.server_ttft_latency,
                tpot=s.server_tpot_latency,
                tokens=s.use_token_latencies,
                psc=s.performance_sample_count_override,
                offline_mqc=s.min_query_count,
                ss_pct=s.single_stream_target_latency_percentile,
                seeds=[s.qsl_rng_seed, s.sample_index_rng_seed, s.schedule_rng_seed],
                min_duration=s.min_duration_ms,
            )
    return out


def _disagreements(conf: dict[str, dict]) -> set[tuple[str, str]]:
    bad: set[tuple[str, str]] = set()
    for b in BENCHMARKS:
        for cat, lim in b.latency.items():
            model = b.name + ("-interactive" if cat is Category.INTERACTIVE else "")
            c = conf[f"{model}/Server"]
            if lim.uses_tokens:
                if not c["tokens"]:
                    bad.add((model, "tokens"))
                if c["ttft"] != lim.ttft_ns:
                    bad.add((model, "ttft"))
                if c["tpot"] != lim.tpot_ns:
                    bad.add((model, "tpot"))
            elif c["latency"] != lim.latency_ns:
                bad.add((model, "latency"))
        off = conf[f"{b.name}/Offline"]
        for suite, size in b.qsl_size.items():
            if off["psc"] and suite is Suite.DATACENTER and off["psc"] < size:
                bad.add((b.name, "psc"))
        if off["offline_mqc"] > 100 and off["offline_mqc"] < b.offline_min_samples():
            bad.add((b.name, "offline_min_samples"))
        ss = conf[f"{b.name}/SingleStream"]
        want_pct = 0.999 if b.name == "pointpainting" else 0.9
        if abs(ss["ss_pct"] - want_pct) > 1e-9:
            bad.add((b.name, "ss_percentile"))
        if ss["seeds"] != list(SEEDS[CURRENT_ROUND]) or ss["min_duration"] != MIN_DURATION_MS:
            bad.add((b.name, "seeds_or_duration"))
    return bad


@pytest.mark.official
def test_official_mlperf_conf_agrees_with_the_tables() -> None:
    conf = _official_conf()
    assert conf["llama2-70b/Server"]["ttft"] == 2_000_000_000  # the oracle did read the shipped conf
    assert _disagreements(conf) == KNOWN_CONF_DEVIATIONS


def test_proctor_mlperf_conf_agrees_with_the_tables() -> None:
    conf = _proctor_conf()
    assert _disagreements(conf) == KNOWN_CONF_DEVIATIONS


def test_conf_disagreements_record_both_values_and_are_documented() -> None:
    """Every recorded disagreement holds the shipped conf's value and the rules' (so a changed conf
    or table is caught), says which governs, and has its line in docs/deviations.md."""
    conf = _proctor_conf()
    doc = (Path(__file__).resolve().parents[2] / "docs" / "deviations.md").read_text()
    key = {"ttft": "ttft", "tpot": "tpot", "latency": "latency"}
    for d in CONF_DISAGREEMENTS:
        assert conf[f"{d.model}/Server"][key[d.setting]] == round(d.conf_ms * 1_000_000), d
        bench = resolve(d.model).benchmark
        cat = Category.INTERACTIVE if d.model.endswith("-interactive") else Category.SERVER
        lim = bench.latency[cat]
        rules_ns = {"ttft": lim.ttft_ns, "tpot": lim.tpot_ns, "latency": lim.latency_ns}[d.setting]
        assert rules_ns == round(d.rules_ms * 1_000_000), d
        assert d.governs in ("rules", "mlperf.conf")
        assert d.model in doc, f"{d.model} ({d.setting}) is not listed in docs/deviations.md"
