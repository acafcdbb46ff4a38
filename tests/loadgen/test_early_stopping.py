"""Early stopping against the official integers (spec §4 and the official logs in the corpus)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from proctor.loadgen import early_stopping as es


def official_odds(h: int, t: int, p: float) -> float:
    """The official series (early_stopping.cc), for a differential check of betainc."""
    a, b, x = h, t + 1, p
    lbeta = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    term = result = 1.0
    bb, c, y = 1 - b, 1 + a, x / (x - 1)
    i = 0
    while abs(term) > 1.0 / (1 << 33):
        term *= (bb + i) * y / (c + i)
        result += term
        i += 1
    return math.exp(a * math.log(x) + (b - 1) * math.log(1 - x) - lbeta) / a * result


def test_min_queries_reference_values():
    assert es.min_queries(0.90) == 64
    assert es.min_queries(0.99) == 662
    assert es.min_queries(0.999) == 6636


def test_server_min_passing_and_required():
    assert [es.min_passing(t, 0.99) for t in range(6)] == [459, 661, 836, 998, 1153, 1302]
    assert [es.server_required_queries(t, 0.99) for t in range(6)] == [459, 662, 838, 1001, 1157, 1307]


@pytest.mark.parametrize(
    ("n", "p", "t"),
    [
        (10000, 0.90, 930),
        (7914, 0.90, 729),
        (100, 0.90, 3),
        (112, 0.90, 3),
        (4001, 0.90, 356),
        (3393, 0.99, 20),  # official 6.0.17 runs on this machine
        (1517484, 0.90, 150888),
        (1517484, 0.99, 14889),  # corpus loadgen-6.0.17-local SingleStream
        (4792206, 0.90, 477692),
        (2877878, 0.99, 28386),  # corpus v4.1 UntetherAI SS / MS
    ],
)
def test_stream_t_matches_official(n, p, t):
    assert es.stream_t(n, p) == t


def test_stream_too_short():
    assert es.stream_t(63, 0.90) is None
    assert es.stream_t(64, 0.90) == 1


@pytest.mark.parametrize("p", sorted(es.EXACT_PERCENTILES))
def test_table_bounds_never_clamp(p):
    size = 4096
    table = es._sequential_table(p, es.CONFIDENCE, size)
    exact = es._first_passing(np.arange(1, size + 1), p, es.CONFIDENCE)
    np.testing.assert_array_equal(table[1:], exact)


@pytest.mark.slow
@pytest.mark.parametrize("p", sorted(es.EXACT_PERCENTILES))
def test_table_bounds_never_clamp_up_to_the_table_limit(p):
    """What lets stream_t bisect on the exact f for these percentiles instead of walking the table."""
    table = es._sequential_table(p, es.CONFIDENCE, es.TABLE_LIMIT)
    exact = es._first_passing(np.arange(1, es.TABLE_LIMIT + 1), p, es.CONFIDENCE)
    np.testing.assert_array_equal(table[1:], exact)


def _table_stream_t(n: int, p: float) -> int | None:
    """stream_t read off the official sequential table (the vectorised path), for comparison."""
    if n < es.min_queries(p):
        return None
    upto = int(n * (1.0 - p)) + 2
    table = es._table_for(p, es.CONFIDENCE, upto)
    fits = table[1 : upto + 1] + np.arange(1, upto + 1) <= n
    return max(1, int(np.argmin(fits)) if not fits.all() else upto)


@pytest.mark.parametrize("p", [0.5, 0.9, 0.97, 0.99, 0.999])
def test_exact_f_one_at_a_time_equals_the_vectorised_f(p):
    """The numpy-free f(t) (binomial tail summed term by term) gives betainc's integers, small t and
    large, and the thresholds the official bounds leave alone for Server (min_passing)."""
    rng = np.random.default_rng(7)
    ts = [*range(0, 120), *(int(t) for t in rng.integers(120, 3_000_000, 25)), 14889, 28386, 150888, 477692]
    exact = es._first_passing(np.array(ts), p, es.CONFIDENCE)
    assert [es._exact_f(t, p, es.CONFIDENCE) for t in ts] == [int(h) for h in exact]


@pytest.mark.parametrize("p", [0.9, 0.99, 0.999])
def test_stream_t_equals_the_official_table(p):
    rng = np.random.default_rng(11)
    lo = es.min_queries(p)
    ns = [lo - 1, lo, lo + 1, *(int(n) for n in rng.integers(lo, int(es.TABLE_LIMIT / (1 - p)), 40))]
    assert [es.stream_t(n, p) for n in ns] == [_table_stream_t(n, p) for n in ns]


def test_a_percentile_outside_the_checked_set_walks_the_table():
    p = 0.93
    assert p not in es.EXACT_PERCENTILES
    for n in (200, 4321, 98765):
        assert es.stream_t(n, p) == _table_stream_t(n, p) == es._stream_t_search(n, p, es.CONFIDENCE, int(n * (1 - p)) + 2)


def test_the_counts_load_no_numpy_or_scipy():
    """A checker that needs only the counts (min_queries, stream_t, server_required_queries) starts
    without numpy and scipy (nor statistics and fractions, which load random and decimal)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from proctor.loadgen import early_stopping as es\n"
        "assert (es.min_queries(0.9), es.stream_t(10000, 0.9), es.stream_t(2877878, 0.99),"
        " es.server_required_queries(5, 0.99)) == (64, 930, 28386, 1307)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'scipy', 'statistics', 'fractions')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize(("h", "t", "p"), [(459, 0, 0.99), (661, 1, 0.99), (63, 1, 0.9), (900, 99, 0.9)])
def test_betainc_agrees_with_official_series(h, t, p):
    assert es.odds(h, t, p) == pytest.approx(official_odds(h, t, p), rel=1e-7, abs=1e-10)


def test_thresholds_sit_between_neighbours():
    for t in (0, 1, 5, 40):
        h = es.min_passing(t, 0.99)
        assert official_odds(h, t, 0.99) < 0.01 <= official_odds(h - 1, t, 0.99)


def test_single_stream_estimate_reports_order_statistic():
    lat = np.arange(1, 10001, dtype=np.int64) * 10  # sorted
    est = es.single_stream_result(lat, 0.90)
    assert est.ok and est.t == 930 and est.h_min == 63
    assert est.estimate == lat[10000 - 930] == 90710


def test_texts_match_official():
    short = es.single_stream_result(np.arange(21), 0.9)
    assert es.stream_text(21, 0.9, short) == (
        " * Only processed 21 queries.\n * Need to process at least 64 queries for early stopping."
    )
    lat = np.arange(595, dtype=np.int64) + 100
    srv = es.server_result(lat, 595, 1, 0.99)
    assert not srv.ok and srv.overlatency == 595
    assert srv.text == (
        " * Run unsuccessful.\n * Processed 595 queries.\n * Would need to run at least 64802"
        " more queries,\n with the run being successful if every additional\n query were under"
        " latency."
    )
    assert es.server_result(lat, 595, 10**9, 0.99).text == " * Run successful."


def test_single_stream_evaluate_adds_p99_line():
    lat = np.arange(1, 3394, dtype=np.int64)
    ev = es.evaluate("SingleStream", lat, 3393, 0.9)
    assert ev.ok and ev.latency_ss == lat[3393 - es.stream_t(3393, 0.9)]
    assert ev.latency_ms == lat[3393 - 20]
    assert ev.text.endswith(f" * Early stopping 99.0th percentile estimate: {lat[3393 - 20]}")
    short = es.evaluate("SingleStream", lat[:100], 100, 0.9)
    assert short.ok and short.latency_ms == 0
    assert (
        "Not enough queries processed for 99.0th percentile\n early stopping estimate (would need to "
        "process at\n least 662 total queries)." in short.text
    )


def test_token_short_circuit():
    lat = np.arange(10, dtype=np.int64)
    ok, ttft, tpot = es.evaluate_tokens("Server", 10, lat, lat, 0.99, 100, 0)
    assert not ok and not tpot.ok and ttft.text == ""
    ok, ttft, tpot = es.evaluate_tokens("Server", 500, lat, lat, 0.99, 100, 100)
    assert ok and ttft.text == tpot.text == " * Run successful."


def test_the_99th_percentile_constant():
    from statistics import NormalDist

    assert NormalDist().inv_cdf(es.CONFIDENCE) == es.Z_99
    assert es._z(0.95) == NormalDist().inv_cdf(0.95)
