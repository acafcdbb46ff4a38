"""Early stopping: how many queries a run needs before its percentile estimate can be trusted.

Rules: MLPerf Inference rules, appendix "Early stopping" (confidence 99 %, tolerance 0). The maths
is the official LoadGen's (early_stopping.cc, results.cc): with `p` the target percentile,
`odds(h, t) = I_p(h, t + 1)` is the chance of at most `t` over-latency queries among `h + t`, and
`f(t)` is the smallest `h` whose odds are at most `1 - confidence`.

The official evaluates `I_p` by a hypergeometric series (tolerance 2^-33) inside a bisection whose
bounds come from the two previous answers (a per-call memo). The counts a run or a checker needs
(`min_passing`, `min_queries`, `stream_t`, `server_required_queries`) are computed here without
numpy: `odds` as the binomial tail summed from its last term (Loader's saddle-point form of that
term, relative error ~1e-14, the same as `scipy.special.betainc`), `f(t)` by bisection around a
Cornish-Fisher guess. For the percentiles in `EXACT_PERCENTILES` the official bounds never clamp
(the tests compare the whole table up to TABLE_LIMIT), so `stream_t` bisects on the exact `f`; any
other percentile takes the vectorised path (numpy, scipy), which applies the official bounds one
answer after another. numpy and scipy load only there, so a checker that needs a count starts
without them. Everything here is pure and cached.
"""

from __future__ import annotations

import math
from functools import lru_cache

from proctor.typed_records import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    import numpy as np

CONFIDENCE = 0.99  # rules: "99% confidence"
TOLERANCE = 0.0  # official `d`
SS_ALSO_PERCENTILE = 0.99  # SingleStream also reports a p99 estimate (used to infer MultiStream)
TABLE_LIMIT = 1 << 16  # beyond this many candidate ranks, bisect instead of tabulating
# Percentiles whose official sequential table equals the exact f(t) up to TABLE_LIMIT (checked by
# tests/loadgen/test_early_stopping.py): stream_t bisects on the exact values for these. 99.9 / 100
# is how a conf's "99.9" arrives, one ulp above 0.999.
EXACT_PERCENTILES = frozenset({0.5, 0.9, 0.95, 0.97, 0.99, 0.999, 99.9 / 100})


def odds(h: np.ndarray | int, t: np.ndarray | int, percentile: float) -> np.ndarray:
    """Probability of at most `t` over-latency queries among `h + t` (binomial CDF), vectorised."""
    import numpy as np
    from scipy.special import betainc

    out: np.ndarray = betainc(np.asarray(h, np.float64), np.asarray(t, np.float64) + 1.0, percentile - TOLERANCE)
    return out


def _passes(h: np.ndarray, t: np.ndarray, p: float, c: float) -> np.ndarray:
    import numpy as np

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
    import numpy as np

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
    import numpy as np
    from scipy.special import ndtri

    q, r, z = 1.0 - p, t + 1.0, float(ndtri(c))
    mean, sd = r * p / q, np.sqrt(r * p) / q
    skew, exkurt = (1.0 + p) / np.sqrt(r * p), 6.0 / r + q * q / (r * p)
    y = mean + sd * (
        z + (z * z - 1) * skew / 6 + (z**3 - 3 * z) * exkurt / 24 - (2 * z**3 - 5 * z) * skew**2 / 36
    )
    return np.floor(y).astype(np.int64) + 1


def _wide_bracket(t: np.ndarray, p: float, c: float) -> tuple[np.ndarray, np.ndarray]:
    import numpy as np

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
    return _official_bounded(t, _exact_f(t, p, c), -1, 0, 0, _h0(p, c), p)


# --- f(t) one at a time, without numpy ---------------------------------------------------------------
_LN_2PI = math.log(2.0 * math.pi)
_STIRLING = (1 / 12, 1 / 360, 1 / 1260, 1 / 1680, 1 / 1188)


def _stirlerr(n: int) -> float:
    """log(n!) - log(sqrt(2 pi n) (n / e)^n), n a whole number (Loader's series past 15)."""
    if n <= 15:
        return 0.0 if n <= 0 else math.lgamma(n + 1.0) - (n + 0.5) * math.log(n) + n - 0.5 * _LN_2PI
    s0, s1, s2, s3, s4 = _STIRLING
    nn = float(n) * n
    if n > 500:
        return (s0 - s1 / nn) / n
    if n > 80:
        return (s0 - (s1 - s2 / nn) / nn) / n
    if n > 35:
        return (s0 - (s1 - (s2 - s3 / nn) / nn) / nn) / n
    return (s0 - (s1 - (s2 - (s3 - s4 / nn) / nn) / nn) / nn) / n


def _bd0(x: int, n: int, num: int, den: int) -> float:
    """x log(x / m) + m - x for m = n * num / den (a float's exact ratio), with x - m taken exactly
    (it is what the value hangs on)."""
    m = n * num / den
    if m == 0.0:  # n * p below the smallest float: the term it enters is 0
        return math.inf
    d = (x * den - n * num) / den
    if abs(d) < 0.1 * (x + m):  # the series in v = d / (x + m): no cancellation
        v = d / (x + m)
        s, ej, v2, j = d * v, 2.0 * x * v, v * v, 1
        while True:
            ej *= v2
            nxt = s + ej / (2 * j + 1)
            if nxt == s:
                return nxt
            s, j = nxt, j + 1
    return x * math.log(x / m) + m - x


def _binomial_term(k: int, n: int, p: float) -> float:
    """P(X = k) for X ~ Binomial(n, 1 - p) (Loader's saddle-point form: ~1e-15 relative)."""
    q = 1.0 - p
    if k == 0:  # p^n; log1p(-q) where it is the more exact, log(p) where 1 - p rounds to 1 (a tiny p)
        if p <= 0.0:
            return 0.0
        return math.exp(n * (math.log1p(-q) if q < 0.5 else math.log(p)))
    if k == n:
        return math.exp(n * math.log(q))
    num, den = p.as_integer_ratio()  # exact: q = (den - num) / den
    lc = _stirlerr(n) - _stirlerr(k) - _stirlerr(n - k) - _bd0(k, n, den - num, den) - _bd0(n - k, n, num, den)
    return math.exp(lc - 0.5 * (_LN_2PI + math.log(k) + math.log1p(-k / n)))


def _passes_one(h: int, t: int, p: float, c: float) -> bool:
    """odds(h, t) <= 1 - c: the chance of at most t over-latency queries among h + t, summed from the
    t-th term down (each term a ratio of the one before: all positive, so a partial sum past the bound
    already decides)."""
    if h <= 0:
        return False
    limit, n = 1.0 - c, h + t
    term = total = _binomial_term(t, n, p)
    ratio = p / (1.0 - p)
    k = t
    while total <= limit and k > 0 and term > total * 1e-17:
        term *= k / (n - k + 1) * ratio
        total += term
        k -= 1
    return total <= limit


Z_99 = 2.3263478740408408  # the standard normal's 99th percentile (statistics.NormalDist().inv_cdf(0.99))


def _z(c: float) -> float:
    if c == CONFIDENCE:
        return Z_99
    from statistics import NormalDist  # another confidence: rare, and statistics loads fractions, random

    return NormalDist().inv_cdf(c)


def _guess_one(t: int, p: float, c: float) -> int:
    """The Cornish-Fisher guess of f(t) (as _quantile_guess)."""
    q, r, z = 1.0 - p, t + 1.0, _z(c)
    mean, sd = r * p / q, math.sqrt(r * p) / q
    skew, exkurt = (1.0 + p) / math.sqrt(r * p), 6.0 / r + q * q / (r * p)
    y = mean + sd * (
        z + (z * z - 1) * skew / 6 + (z**3 - 3 * z) * exkurt / 24 - (2 * z**3 - 5 * z) * skew**2 / 36
    )
    return math.floor(y) + 1


@lru_cache(maxsize=4096)
def _exact_f(t: int, p: float, c: float) -> int:
    """The exact smallest h with odds(h, t) <= 1 - c (no official bounds): a +-2 bracket around the
    guess, widened as _wide_bracket widens it when the guess missed, then bisection."""
    if not (0.0 < p < 1.0 and 0.0 < c < 1.0):  # no count exists: the vectorised path says what it says
        import numpy as np

        return int(_first_passing(np.array([t]), p, c)[0])
    guess = _guess_one(t, p, c)
    lo, hi = max(guess - 2, 0), guess + 2
    if _passes_one(lo, t, p, c) or not _passes_one(hi, t, p, c):
        lo = 0
        step = (
            math.ceil(math.log(1.0 - c) / math.log(p))
            + 1
            + int(4.0 * math.sqrt(t + 1.0) / (1.0 - p))
            + int(t * (p / (1.0 - p)))
        )
        hi = step
        while not _passes_one(hi, t, p, c):
            step *= 2
            hi = lo + step
    while hi - lo > 1:  # h = lo fails (or is 0), h = hi passes
        mid = lo + (hi - lo) // 2
        if _passes_one(mid, t, p, c):
            hi = mid
        else:
            lo = mid
    return hi


@lru_cache(maxsize=64)
def _sequential_table(p: float, c: float, size: int) -> np.ndarray:
    """f(1..size) as the official computes them in one SingleStream/MultiStream loop.

    Index i holds f(i) (index 0 unused). One finder is reused across the loop, so each bound
    comes from the previous two answers; we check the exact answers against those bounds in one
    vector pass and only walk the recurrence when one would clamp.
    """
    import numpy as np

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
    if upto > TABLE_LIMIT or (p in EXACT_PERCENTILES and c == CONFIDENCE):
        return _stream_t_search(n, p, c, upto)
    import numpy as np

    table = _table_for(p, c, upto)
    i = np.arange(1, upto + 1)
    fits = table[1 : upto + 1] + i <= n
    # f(i) + i grows with i: t is the last i that still fits (the official breaks at the first miss)
    return max(1, int(np.argmin(fits)) if not fits.all() else upto)


def _stream_t_search(n: int, p: float, c: float, upto: int) -> int:
    """The last i in [1, upto] with f(i) + i <= n (1 when none fits), on the exact f(i): the official
    bounds never clamp there (large runs, and the EXACT_PERCENTILES tables up to TABLE_LIMIT, which
    the tests compare with the exact values). The guess of f puts i within a step or two; the exact
    f settles it."""

    def fits(i: int) -> bool:
        return _exact_f(i, p, c) + i <= n

    a, b = 0, upto + 1  # where the guess of f(i) + i passes n
    while b - a > 1:
        mid = (a + b) // 2
        if _guess_one(mid, p, c) + mid <= n:
            a = mid
        else:
            b = mid
    start, step = max(a, 1), 1
    if fits(start):  # lo fits, hi does not (or is past upto)
        lo, hi = start, start + 1
        while hi <= upto and fits(hi):
            lo, step = hi, step * 2
            hi = lo + step
        hi = min(hi, upto + 1)
    else:
        lo, hi = start - 1, start
        while lo >= 1 and not fits(lo):
            hi, step = lo, step * 2
            lo = hi - step
        lo = max(lo, 0)
    while hi - lo > 1:  # f(i) + i grows with i
        mid = (lo + hi) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid
    return max(lo, 1)


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
    import numpy as np

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
