"""The checker's early-stopping finding follows the rules' procedure (Inference rules, appendix Early
stopping, "Early Stopping Criterion"): for Server it names q, t, the required n and the n - q more
queries step 4 would have run."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proctor.checks.performance import early_stopping_message
from proctor.loadgen.logs.detail import format_line
from proctor.loadgen.logs.reader import read_detail


def _log(tmp_path, **values: Any):
    path = tmp_path / "mlperf_log_detail.txt"
    path.write_text("".join(format_line(k, v, 0) + "\n" for k, v in values.items()))
    return read_detail(path)


def test_server_message_names_q_t_n_and_the_missing_queries(tmp_path):
    log = _log(
        tmp_path,
        effective_scenario="Server",
        effective_target_latency_percentile=0.99,
        result_query_count=600,
        result_overlatency_query_count=1,
        early_stopping_met=False,
    )
    msg = early_stopping_message(log)
    assert "1 of 600 queries were over the latency bound" in msg
    assert "requires n = 662 queries" in msg
    assert "step 4 (run n - q = 62 more queries, then recompute) was not carried out" in msg


def test_server_token_message_reads_the_shortfall_from_the_loadgen_text(tmp_path):
    log = _log(
        tmp_path,
        effective_scenario="Server",
        effective_target_latency_percentile=0.99,
        requested_use_token_latencies=True,
        result_query_count=1000,
        early_stopping_met=False,
        early_stopping_ttft_result="",
        early_stopping_tpot_result=" * Run unsuccessful. * Processed 1000 queries. * Would need to run at "
        "least 80 more queries, with the run being successful if every additional query were under latency.",
    )
    msg = early_stopping_message(log)
    assert "require 1080" in msg and "stopped 80 short" in msg and "at least 80 more queries" in msg


def test_stream_message_names_the_queries_the_estimate_needs(tmp_path):
    log = _log(
        tmp_path,
        effective_scenario="MultiStream",
        effective_target_latency_percentile=0.99,
        result_query_count=500,
        early_stopping_met=False,
    )
    assert early_stopping_message(log) == (
        "early stopping is not met: 500 queries were processed and a 99th percentile estimate needs at "
        "least 662: run longer"
    )


def test_hostile_values_fall_back_to_the_plain_message(tmp_path):
    log = _log(
        tmp_path,
        effective_scenario="Server",
        effective_target_latency_percentile="x",
        result_query_count=-3,
        early_stopping_met=False,
    )
    assert early_stopping_message(log) == "early stopping is not met; run longer (more queries) or at a lower load"


_ANY = st.one_of(
    st.none(), st.booleans(), st.integers(-(10**20), 10**20), st.floats(allow_nan=True), st.text(max_size=200)
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    scenario=st.sampled_from(["Server", "SingleStream", "MultiStream", "Offline", 7]),
    pct=_ANY,
    q=_ANY,
    t=_ANY,
    tokens=_ANY,
    text=_ANY,
)
def test_any_values_give_a_message(tmp_path, scenario, pct, q, t, tokens, text):
    log = _log(
        tmp_path,
        effective_scenario=scenario,
        effective_target_latency_percentile=pct,
        result_query_count=q,
        result_overlatency_query_count=t,
        requested_use_token_latencies=tokens,
        early_stopping_tpot_result=text,
        early_stopping_met=False,
    )
    msg = early_stopping_message(log)
    assert msg.startswith("early stopping is not met")


def test_a_percentile_too_small_for_one_minus_it_gives_a_message(tmp_path):
    """2e-91: 1 - p rounds to 1, where the first binomial term took log(0) (a hostile log crashed it)."""
    log = _log(tmp_path, effective_scenario="Server", effective_target_latency_percentile=2.0635097536671985e-91,
               result_query_count=0, result_overlatency_query_count=0, early_stopping_met=False)  # fmt: skip
    assert "requires n = 1 queries" in early_stopping_message(log)
