"""Early stopping: how many queries a run needs before its percentile estimate can be trusted.

Rules: MLPerf Inference rules, appendix "Early stopping" (confidence 99 %, tolerance 0). The maths
is the official LoadGen's (early_stopping.cc, results.cc): with `p` the target percentile,
`odds(h, t) = I_p(h, t + 1)` is the chance of at most `t` over-latency queries among `h + t`, and
`f(t)` is the smallest `h` whose odds are at most `1 - confidence`.

The official evaluates `I_p` by a hypergeometric series (tolerance 2^-33) inside a bisection whose
bounds come from the two previous answers (a per-call memo). We evaluate `I_p` with
`scipy.special.betainc`, vectorised over `t`, and then apply the same bounds, so the integers agree
with the official ones (checked against its logs in the tests). Everything here is pure and cached.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import NamedTuple

import numpy as np
from scipy.special import betainc, ndtri

CONFIDENCE = 0.99  # rules: "99% confidence"
TOLERANCE = 0.0  # official `d`
SS_ALSO_PERCENTILE = 0.99  # SingleStream also reports a p99 estimate (used to infer MultiStream)
TABLE_LIMIT = 1 << 16  # beyond this many candidate ranks, bisect instead of tabulating


def odds(h: np.ndarray | int, t: np.ndarray | int, percentile: float) -> np.ndarray:
    """Probability of at most `t` over-latency queries among `h + t` (binomial CDF)."""
    out: np.ndarray = betainc(np.asarray(h, np.float64), np.asarray(t, np.float64) + 1.0, percentile - TOLERANCE)
    return out


def _passes(h: np.ndarray, t: np.ndarray, p: float, c: float) -> np.ndarray:
    ok = np.zeros(h.shape, bool)
    pos = h > 0
    ok[pos] = odds(h[pos], t[pos], p) <= 1.0 - c  # rules: "<= 1-c" (official: "<"; see deviations)
    return ok


def _first_passing(t: np.ndarray, p: float, c: float) -> np.ndarray:
    """Exact smallest h with odds(h, t) <= 1 - c, for each t (vectorised).

    `odds(h, t)` is the chance that a negative binomial (in-latency queries before the (t+1)-th
    over-latency one) reaches h, so its quantile is the answer; a Cornish-Fisher guess lands within
    one of it except for tiny t, a +-2 bracket checked with betainc settles it, and a galloping
    bisection handles any entry the guess missed.
    """
    t = t.astype(np.int64)
    guess = _quantile_guess(t, p, c)
    lo = np.maximum(guess - 2, 0)
    hi = guess + 2
    miss = _passes(lo, t, p, c) | ~_passes(hi, t, p, c)
    if miss.any():
        lo[miss], hi[miss] = _wide_bracket(t[miss], p, c)
    # invariant: h = lo fails (or is 0), h = hi passes
    while True:
        open_ = hi - lo > 1
        if not open_.any():
            return hi
        mid = lo + (hi - lo) // 2
        ok = _passes(mid, t, p, c)
        hi = np.where(open_ & ok, mid, hi)
        lo = np.where(open_ & ~ok, mid, lo)


def _quantile_guess(t: np.ndarray, p: float, c: float) -> np.ndarray:
    q, r, z = 1.0 - p, t + 1.0, float(ndtri(c))
    mean, sd = r * p / q, np.sqrt(r * p) / q
    skew, exkurt = (1.0 + p) / np.sqrt(r * p), 6.0 / r + q * q / (r * p)
    y = mean + sd * (
        z + (z * z - 1) * skew / 6 + (z**3 - 3 * z) * exkurt / 24 - (2 * z**3 - 5 * z) * skew**2 / 36
    )
    return np.floor(y).astype(np.int64) + 1


def _wide_bracket(t: np.ndarray, p: float, c: float) -> tuple[np.ndarray, np.ndarray]:
    lo = np.zeros(t.shape, np.int64)
    step = (
        np.int64(math.ceil(math.log(1.0 - c) / math.log(p)))
        + 1
        + (4.0 * np.sqrt(t + 1.0) / (1.0 - p)).astype(np.int64)
        + (t * (p / (1.0 - p))).astype(np.int64)
    )
    hi = lo + step
    bad = ~_passes(hi, t, p, c)
    while bad.any():
        step[bad] *= 2
        hi[bad] = lo[bad] + step[bad]
        bad = ~_passes(hi, t, p, c)
    return lo, hi


def _h0(p: float, c: float) -> int:
    return int(math.ceil(math.log(1.0 - c) / math.log(p - TOLERANCE)))


def _official_bounded(t: int, true_h: int, x0: int, y0: int, x1: int, y1: int, p: float) -> int:
    """The official finder's answer: its lower-bound bisection on [min_h, max_h] clamps."""
    min_slope = (p - TOLERANCE) / (1.0 - p + TOLERANCE)
    max_slope = float((y1 - y0) * (x1 - x0))
    min_h = int((t - x1) * min_slope + y1)
    max_h = int((t - x1) * max_slope + y1 + 1)
    if max_h <= min_h:
        return min_h
    return min(max(true_h, min_h), max_h)


def min_passing(overlatency: int, percentile: float, confidence: float = CONFIDENCE) -> int:
    """f(t) as one fresh official finder call (the Server case): 459, 661, 836... for p99."""
    return _min_passing_single(int(overlatency), float(percentile), float(confidence))


@lru_cache(maxsize=4096)
def _min_passing_single(t: int, p: float, c: float) -> int:
    true_h = int(_first_passing(np.array([t]), p, c)[0])
    return _official_bounded(t, true_h, -1, 0, 0, _h0(p, c), p)


@lru_cache(maxsize=64)
def _sequential_table(p: float, c: float, size: int) -> np.ndarray:
    """f(1..size) as the official computes them in one SingleStream/MultiStream loop.

    Index i holds f(i) (index 0 unused). One finder is reused across the loop, so each bound
    comes from the previous two answers; we check the exact answers against those bounds in one
    vector pass and only walk the recurrence when one would clamp.
    """
    ts = np.arange(size + 1, dtype=np.int64)
    true_h = np.zeros(size + 1, np.int64)
    true_h[1:] = _first_passing(ts[1:], p, c)
    h0 = _h0(p, c)
    out = true_h.copy()
    if size >= 1:
        out[1] = _official_bounded(1, int(true_h[1]), -1, 0, 0, h0, p)
    if size >= 2:
        out[2] = _official_bounded(2, int(true_h[2]), -1, 0, 1, int(out[1]), p)
    if size >= 3:
        min_slope = (p - TOLERANCE) / (1.0 - p + TOLERANCE)
        prev, prev2 = out[2:-1], out[1:-2]
        min_h = (min_slope + prev.astype(np.float64)).astype(np.int64)
        max_h = (prev - prev2) + prev + 1
        inside = (max_h > min_h) & (true_h[3:] >= min_h) & (true_h[3:] <= max_h)
        if not (inside.all() and out[1] == true_h[1] and out[2] == true_h[2]):
            for i in range(3, size + 1):
                out[i] = _official_bounded(
                    i, int(true_h[i]), i - 2, int(out[i - 2]), i - 1, int(out[i - 1]), p
                )
    out.setflags(write=False)
    return out


def _table_for(p: float, c: float, upto: int) -> np.ndarray:
    size = 1 << max(6, int(upto).bit_length())  # powers of two so the cache is reused
    return _sequential_table(p, c, size)


def min_queries(percentile: float, confidence: float = CONFIDENCE) -> int:
    """Fewest queries for a SingleStream/MultiStream estimate: 64 (p90), 662 (p99), 6636 (p99.9)."""
    return min_passing(1, percentile, confidence) + 1


def stream_t(n_queries: int, percentile: float, confidence: float = CONFIDENCE) -> int | None:
    """The official `t` (report the t-th highest latency) for n queries; None when n is too small."""
    p, c = float(percentile), float(confidence)
    n = int(n_queries)
    if n < min_queries(p, c):
        return None
    upto = int(n * (1.0 - p)) + 2  # f(i) + i >= i / (1 - p), so t never exceeds this
    if upto > TABLE_LIMIT:
        return _stream_t_bisect(n, p, c, upto)
    table = _table_for(p, c, upto)
    i = np.arange(1, upto + 1)
    fits = table[1 : upto + 1] + i <= n
    # f(i) + i grows with i: t is the last i that still fits (the official breaks at the first miss)
    return max(1, int(np.argmin(fits)) if not fits.all() else upto)


def _stream_t_bisect(n: int, p: float, c: float, upto: int) -> int:
    """Large runs: bisection over i on the exact f(i) (the official bounds never clamp there; the
    tests check that the full tables up to TABLE_LIMIT equal the exact values)."""
    lo, hi = 1, upto  # f(lo) + lo <= n < f(hi) + hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if int(_first_passing(np.array([mid]), p, c)[0]) + mid <= n:
            lo = mid
        else:
            hi = mid
    return lo


class StreamEstimate(NamedTuple):
    ok: bool  # enough queries for early stopping
    t: int  # report the t-th highest latency (discard t - 1); 0 when not ok
    estimate: int  # the latency reported; 0 when not ok
    h_min: int  # f(1): min_queries = h_min + 1


def single_stream_result(
    latencies_sorted: np.ndarray,
    percentile: float,
    n_queries: int | None = None,
    confidence: float = CONFIDENCE,
) -> StreamEstimate:
    """SingleStream/MultiStream early-stopping estimate from sorted latencies (official rule).

    `n_queries` defaults to the array length; the official indexes `sorted[n_queries - t]`.
    """
    n = int(latencies_sorted.shape[0] if n_queries is None else n_queries)
    h_min = min_passing(1, percentile, confidence)
    t = stream_t(n, percentile, confidence)
    if t is None:
        return StreamEstimate(False, 0, 0, h_min)
    return StreamEstimate(True, t, int(latencies_sorted[n - t]), h_min)


single_stream_estimate = single_stream_result


def server_required_queries(overlatency_count: int, percentile: float, confidence: float = CONFIDENCE) -> int:
    """Total queries a Server run with `t` over-latency queries needs: f(t) + t."""
    t = int(overlatency_count)
    return min_passing(t, percentile, confidence) + t


# ---- the official texts -------------------------------------------------------------------------


def _pct(p: float) -> str:
    return f"{p * 100:.1f}"


def stream_text(
    n: int,
    percentile: float,
    est: StreamEstimate,
    *,
    also_p99: StreamEstimate | None = None,
    confidence: float = CONFIDENCE,
) -> str:
    """The official SingleStream/MultiStream `Early Stopping Result` text (newlines kept)."""
    if not est.ok:
        return (
            f" * Only processed {n} queries.\n * Need to process at least {est.h_min + 1} "
            "queries for early stopping."
        )
    text = (
        f" * Processed at least {est.h_min + 1} queries ({n}).\n * Would discard {est.t - 1} "
        f"highest latency queries.\n * Early stopping {_pct(percentile)}th percentile estimate: "
        f"{est.estimate}"
    )
    if also_p99 is not None:
        if also_p99.ok:
            text += (
                f"\n * Early stopping {_pct(SS_ALSO_PERCENTILE)}th percentile estimate: {also_p99.estimate}"
            )
        else:
            text += (
                f"\n * Not enough queries processed for {_pct(SS_ALSO_PERCENTILE)}th percentile\n"
                f" early stopping estimate (would need to process at\n least {also_p99.h_min + 1} "
                "total queries)."
            )
    return text


class ServerEstimate(NamedTuple):
    ok: bool
    overlatency: int  # t: latencies strictly above the target
    required: int  # f(t) + t
    text: str


def server_result(
    latencies: np.ndarray, n_queries: int, target_ns: int, percentile: float, confidence: float = CONFIDENCE
) -> ServerEstimate:
    """Server early stopping: pass iff n >= f(t) + t, t = #latency > target (official rule)."""
    t = int(np.count_nonzero(np.asarray(latencies) > target_ns))
    required = server_required_queries(t, percentile, confidence)
    n = int(n_queries)
    if n >= required:
        return ServerEstimate(True, t, required, " * Run successful.")
    text = (
        f" * Run unsuccessful.\n * Processed {n} queries.\n * Would need to run at least "
        f"{required - n} more queries,\n with the run being successful if every additional\n"
        " query were under latency."
    )
    return ServerEstimate(False, t, required, text)


class EarlyStopping(NamedTuple):
    """One early-stopping evaluation as the official logs it."""

    ok: bool
    text: str
    latency_ss: int = 0  # early_stopping_latency_ss
    latency_ms: int = 0  # early_stopping_latency_ms
    t: int = 0  # SS/MS: the reported rank from the top; Server: over-latency count


def evaluate(
    scenario: str,
    latencies_sorted: np.ndarray,
    n_queries: int,
    percentile: float,
    target_ns: int = 0,
    confidence: float = CONFIDENCE,
) -> EarlyStopping:
    """The official `EarlyStopping()` for one latency array (sample, query, TTFT or TPOT)."""
    if scenario == "SingleStream":
        est = single_stream_result(latencies_sorted, percentile, n_queries, confidence)
        if not est.ok:
            return EarlyStopping(False, stream_text(n_queries, percentile, est))
        p99 = single_stream_result(latencies_sorted, SS_ALSO_PERCENTILE, n_queries, confidence)
        text = stream_text(n_queries, percentile, est, also_p99=p99)
        return EarlyStopping(True, text, est.estimate, p99.estimate if p99.ok else 0, est.t)
    if scenario == "MultiStream":
        est = single_stream_result(latencies_sorted, percentile, n_queries, confidence)
        text = stream_text(n_queries, percentile, est)
        return EarlyStopping(est.ok, text, 0, est.estimate, est.t)
    if scenario == "Server":
        srv = server_result(latencies_sorted, n_queries, target_ns, percentile, confidence)
        return EarlyStopping(srv.ok, srv.text, 0, 0, srv.overlatency)
    return EarlyStopping(True, "")


def evaluate_tokens(
    scenario: str,
    n_queries: int,
    ttft_sorted: np.ndarray,
    tpot_sorted: np.ndarray,
    percentile: float,
    ttft_target_ns: int,
    tpot_target_ns: int,
    confidence: float = CONFIDENCE,
) -> tuple[bool, EarlyStopping, EarlyStopping]:
    """Token runs: ES(TPOT) and then, only if it passed, ES(TTFT) (official short-circuit).

    Returns (ok, ttft, tpot); a skipped TTFT evaluation has an empty text, as in the official log.
    """
    tpot = evaluate(scenario, tpot_sorted, n_queries, percentile, tpot_target_ns, confidence)
    if not tpot.ok:
        return False, EarlyStopping(True, ""), tpot
    ttft = evaluate(scenario, ttft_sorted, n_queries, percentile, ttft_target_ns, confidence)
    return ttft.ok, ttft, tpot
