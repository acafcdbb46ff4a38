"""Real result logs (v4.1 submissions, official 6.0.17 runs): they parse, and their metrics and
validity are recomputed from the logged values exactly as the official decided them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from proctor.loadgen import early_stopping as es
from proctor.loadgen.logs import read_detail, read_summary, recompute
from proctor.loadgen.logs.numbers import fixed, ostream

_IN = Path("shared") / "corpus" / "inference"  # the nearest shared/ up (a checkout or a worktree of it)
ROOT = next((p / _IN for p in Path(__file__).resolve().parents if (p / _IN).is_dir()), Path(_IN))
DETAILS = sorted(ROOT.glob("v4.1/**/mlperf_log_detail.txt"))
SUMMARIES = sorted(ROOT.glob("**/mlperf_log_summary.txt"))
pytestmark = pytest.mark.skipif(not DETAILS, reason="corpus not present")


def _id(p: Path) -> str:
    return "/".join(p.parts[-4:-1])


@pytest.mark.parametrize("path", DETAILS, ids=_id)
def test_detail_parses_cleanly(path):
    d = read_detail(path)
    assert d.bad_lines == []
    assert d.get("result_validity") in ("VALID", "INVALID")
    assert d.get("effective_scenario") in ("SingleStream", "MultiStream", "Server", "Offline")
    assert len(d.entries) == sum(1 for line in path.read_text().splitlines() if line.startswith(":::MLLOG"))


@pytest.mark.parametrize("path", DETAILS, ids=_id)
def test_validity_recomputed(path):
    d = read_detail(path)
    rc = recompute(d)
    assert rc.mismatches == []
    assert rc.valid == (d.get("result_validity") == "VALID")
    assert rc.source["min_queries"] == "recomputed"


def test_single_stream_early_stopping_discards():
    d = read_detail(ROOT / "v4.1/UntetherAI/h13_u2_preview/resnet50/singlestream/mlperf_log_detail.txt")
    n = d.get("result_query_count")
    assert n == 4792206
    rc = recompute(d)
    assert rc.discarded == 477691 and rc.min_queries_for_es == 64
    assert f"Would discard {rc.discarded} highest" in d.get("early_stopping_result")
    assert d.get("early_stopping_result").endswith(f"estimate: {d.get('early_stopping_latency_ms')}")


def test_multistream_early_stopping_discards():
    d = read_detail(ROOT / "v4.1/UntetherAI/h13_u2_preview/resnet50/multistream/mlperf_log_detail.txt")
    rc = recompute(d)
    assert rc.discarded == 28385 and rc.min_queries_for_es == 662
    assert d.get("early_stopping_result").endswith(f"estimate: {d.get('early_stopping_latency_ms')}")


def test_server_early_stopping_required_queries():
    d = read_detail(ROOT / "v4.1/UntetherAI/h13_u2_preview_dc/resnet50/server/mlperf_log_detail.txt")
    assert d.get("result_overlatency_query_count") == 28
    rc = recompute(d)
    assert rc.required_queries == es.server_required_queries(28, 0.99) == 4291
    assert rc.early_stopping_met and rc.perf_constraints_met and rc.min_duration_met


def test_llm_server_tokens_per_second_from_the_quirk():
    d = read_detail(ROOT / "v4.1/NVIDIA/B200-SXM-180GBx1_TRT/llama2-70b-99.9/Server/mlperf_log_detail.txt")
    rc = recompute(d)
    logged = d.get("result_completed_tokens_per_second")
    assert rc.tokens_per_second == pytest.approx(logged, rel=2e-5)
    assert ostream(rc.tokens_per_second) == ostream(logged)
    # TTFT / TPOT p99 under 2 s / 200 ms: the perf constraint is recomputed, not read
    assert rc.source["perf_constraints"] == "recomputed" and rc.perf_constraints_met
    summ = read_summary(d.path.replace("mlperf_log_detail.txt", "mlperf_log_summary.txt"))
    assert summ["Completed tokens per second"] == pytest.approx(rc.tokens_per_second, abs=0.01)


@pytest.mark.parametrize("path", [p for p in DETAILS], ids=_id)
def test_summary_metric_is_the_detail_value(path):
    """The summary's headline and its stats are the detail's numbers, formatted the official way."""
    d = read_detail(path)
    summ = read_summary(path.with_name("mlperf_log_summary.txt"))
    sc = d.get("effective_scenario")
    pct = d.get("effective_target_latency_percentile")
    assert summ["Scenario"] == sc and summ["Result is"] == d.get("result_validity")
    if sc == "Server":
        # v4.1 LoadGen headlined the scheduled rate for non-token runs; 6.0.17 the completed one
        both = {**summ["additional_stats"], **summ}
        for label, key in (
            ("Completed samples per second", "result_completed_samples_per_sec"),
            ("Scheduled samples per second", "result_scheduled_samples_per_sec"),
        ):
            if label in both:
                assert both[label] == pytest.approx(d.get(key), abs=0.005 + 5e-6 * d.get(key))
                assert fixed(d.get(key), 0) == fixed(both[label], 0)
    elif sc == "Offline":
        assert ostream(float(summ["Samples per second"])) == ostream(d.get("result_samples_per_second"))
    else:
        label = next(k for k in summ if re.fullmatch(r"\d+(\.\d)?th percentile latency \(ns\)", k))
        key = (
            "result_{:.2f}_percentile_per_query_latency_ns"
            if sc == "MultiStream"
            else "result_{:.2f}_percentile_latency_ns"
        )
        assert summ[label] == d.get(key.format(pct * 100))
    stats = summ["per_query"] if sc == "MultiStream" else summ["additional_stats"]
    mid = "_query" if sc == "MultiStream" else ""
    assert stats["Min latency (ns)"] == d.get(f"result_min{mid}_latency_ns")
    assert stats["Mean latency (ns)"] == d.get(f"result_mean{mid}_latency_ns")
    assert summ["test_parameters"]["min_duration (ms)"] == d.get("effective_min_duration_ms")
    assert summ["test_parameters"]["qsl_rng_seed"] == d.get("effective_qsl_rng_seed")


@pytest.mark.parametrize("path", SUMMARIES, ids=_id)
def test_every_corpus_summary_parses(path):
    s = read_summary(path)
    assert s["Result is"] in ("VALID", "INVALID")
    assert s["warnings"] is not None and s["errors"] is not None
    assert s["test_parameters"]["samples_per_query"] >= 1
