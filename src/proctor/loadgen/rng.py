"""Bit-exact copies of the random numbers the official LoadGen draws.

The rules fix the generator (MLPerf Inference rules, "Non-determinism is restricted": std::mt19937
with announced seeds), but the traces also depend on libstdc++'s distribution algorithms, which the
C++ standard leaves implementation-defined. The official wheel is built with GCC 14, so these are
the GCC >= 11 algorithms: Lemire's multiply-shift `uniform_int_distribution`, the two-swaps-per-draw
`std::shuffle`, `generate_canonical<double, 53>` from two 32-bit words, and `exponential_distribution`
as -log(1 - canonical) / lambda.

numpy's `MT19937` is the same generator (`_legacy_seeding` is `init_genrand`), so raw words are drawn
in bulk and buffered: a distribution can look ahead, then consume exactly the words libstdc++ would.
The words come as uint32 from `Generator.integers` over the full 32-bit range (numpy returns the
generator's next 32-bit output unchanged there): three times faster than `random_raw`, whose uint64
results also double the memory traffic.
"""

from __future__ import annotations

import math
import sys

import numpy as np

_U32 = 1 << 32
_MASK32 = np.uint64(0xFFFFFFFF)
_TWO64 = 18446744073709551616.0
_ONE_BELOW = math.nextafter(1.0, 0.0)
_BLOCK = 8192
# Draw counts above this use the vectorized Lemire path; below it a scalar loop is cheaper.
_SCALAR_LIMIT = 64
_SKIP_CHUNK = 1 << 20


class MT19937:
    """std::mt19937 seeded like `std::mt19937 rng(seed)`: the seed is taken modulo 2**32."""

    __slots__ = ("_bitgen", "_buf", "_gen", "_pos", "consumed")

    def __init__(self, seed: int = 5489) -> None:
        self._bitgen = np.random.MT19937(0)
        self._bitgen._legacy_seeding(int(seed) % _U32)
        self._gen = np.random.Generator(self._bitgen)
        self._buf = np.empty(0, np.uint32)
        self._pos = 0
        self.consumed = 0  # raw 32-bit words handed out so far

    def _raw(self, k: int) -> np.ndarray:
        """The generator's next k words, uint32."""
        return self._gen.integers(0, _U32 - 1, size=k, endpoint=True, dtype=np.uint32)

    def _ensure(self, k: int) -> None:
        avail = self._buf.shape[0] - self._pos
        if avail >= k:
            return
        fresh = self._raw(max(k - avail, _BLOCK))
        self._buf = np.concatenate((self._buf[self._pos :], fresh))
        self._pos = 0

    def peek(self, k: int) -> np.ndarray:
        """The next k raw words (uint32) without consuming them."""
        self._ensure(k)
        return self._buf[self._pos : self._pos + k]

    def advance(self, k: int) -> None:
        avail = self._buf.shape[0] - self._pos
        if k > avail + _SKIP_CHUNK:
            # Long skips (e.g. past earlier samples' accuracy-log draws) in bounded memory.
            rest = k - avail
            self._buf = np.empty(0, np.uint32)
            self._pos = 0
            while rest > _SKIP_CHUNK:
                self._raw(_SKIP_CHUNK)
                rest -= _SKIP_CHUNK
            self.consumed += k - rest
            k = rest
        self._ensure(k)
        self._pos += k
        self.consumed += k

    def take(self, k: int) -> np.ndarray:
        if self._pos == self._buf.shape[0]:  # nothing buffered: straight from the generator
            self.consumed += k
            return self._raw(k)
        out = self.peek(k).copy()
        self.advance(k)
        return out

    def __call__(self) -> int:
        self._ensure(1)
        v = int(self._buf[self._pos])
        self._pos += 1
        self.consumed += 1
        return v


# ---------------------------------------------------------------- uniform_int_distribution


def _lemire_scalar(rng: MT19937, erange: int) -> int:
    """One draw of libstdc++'s `_S_nd<uint64>`: uniform in [0, erange), erange <= 2**32 - 1."""
    product = rng() * erange
    low = product & 0xFFFFFFFF
    if low < erange:
        threshold = (_U32 - erange) % erange
        while low < threshold:
            product = rng() * erange
            low = product & 0xFFFFFFFF
    return product >> 32


def _check_range(erange: int) -> None:
    if not 1 <= erange < _U32:
        raise ValueError(f"uniform_int range of {erange} values is outside what a 32-bit draw covers")


def uniform_int(rng: MT19937, low: int, high: int) -> int:
    """`std::uniform_int_distribution<>(low, high)(rng)`."""
    erange = high - low + 1
    _check_range(erange)
    return low + _lemire_scalar(rng, erange)


def uniform_int_array(rng: MT19937, low: int, high: int, n: int) -> np.ndarray:
    """n successive draws of `uniform_int_distribution<>(low, high)`, as int64.

    A draw rejects its word iff the low half of word*range is below (2**32 - range) % range, and
    then simply takes the next word, so the outputs are the accepted words in order.
    """
    erange = high - low + 1
    _check_range(erange)
    out = np.empty(n, np.int64)
    if n == 0:
        return out
    threshold = np.uint64((_U32 - erange) % erange)
    er = np.uint64(erange)
    filled = 0
    while filled < n:
        need = n - filled
        words = rng.peek(need + need // 64 + 16)
        product = words * er
        ok = (product & _MASK32) >= threshold
        idx = np.flatnonzero(ok)
        if idx.shape[0] >= need:
            used = int(idx[need - 1]) + 1
            idx = idx[:need]
        else:
            used = words.shape[0]
        got = idx.shape[0]
        out[filled : filled + got] = (product[idx] >> np.uint64(32)).astype(np.int64)
        filled += got
        rng.advance(used)
    return out + low


def _lemire_varying(rng: MT19937, eranges: np.ndarray) -> np.ndarray:
    """One draw per entry of `eranges` (each in [1, 2**32)), in order; returns int64 values."""
    m = eranges.shape[0]
    out = np.empty(m, np.int64)
    if m <= _SCALAR_LIMIT:
        for i, e in enumerate(eranges.tolist()):
            out[i] = _lemire_scalar(rng, e)
        return out
    er_all = eranges.astype(np.uint64)
    thr_all = (np.uint64(_U32) - er_all) % er_all
    d = 0
    chunk = 4096
    while d < m:
        k = min(chunk, m - d)
        words = rng.peek(k)
        er = er_all[d : d + k]
        product = words * er
        bad = (product & _MASK32) < thr_all[d : d + k]
        if not bad.any():
            out[d : d + k] = (product >> np.uint64(32)).astype(np.int64)
            rng.advance(k)
            d += k
            chunk = min(chunk * 2, 1 << 16)
            continue
        j = int(np.argmax(bad))
        out[d : d + j] = (product[:j] >> np.uint64(32)).astype(np.int64)
        rng.advance(j)
        d += j
        out[d] = _lemire_scalar(rng, int(er_all[d]))
        d += 1
        # Rejections cluster where ranges are large: shrink the look-ahead after one.
        chunk = max(64, j * 2)
    return out


# ---------------------------------------------------------------- shuffle


def _paired(n: int) -> bool:
    """libstdc++ draws one number per two positions when n*n fits the generator's range."""
    return (_U32 - 1) // n >= n


def _shuffle_ranges(n: int) -> np.ndarray:
    """The range of every draw `std::shuffle` makes for n > 1 items, in order."""
    if not _paired(n):
        return np.arange(2, n + 1, dtype=np.int64)
    i = np.arange(2 if n % 2 == 0 else 1, n, 2, dtype=np.int64)
    ranges = (i + 1) * (i + 2)
    return np.concatenate(([2], ranges)) if n % 2 == 0 else ranges


def _positions_from_draws(n: int, draws: np.ndarray) -> np.ndarray:
    """Swap partners pos[1..n-1] (pos[0] = 0) from the draws of `_shuffle_ranges(n)`."""
    pos = np.zeros(n, np.int64)
    if not _paired(n):
        pos[1:] = draws
        return pos
    if n % 2 == 0:
        pos[1] = draws[0]
        draws = draws[1:]
    i = np.arange(2 if n % 2 == 0 else 1, n, 2, dtype=np.int64)
    b1 = i + 2
    pos[i] = draws // b1
    pos[i + 1] = draws % b1
    return pos


def _shuffle_positions(rng: MT19937, n: int) -> np.ndarray:
    """The swap partner of each position 1..n-1 that libstdc++'s `std::shuffle` picks for n items.

    Element i (i >= 1) is swapped with element pos[i] (pos[0] is unused and 0). For
    n*n <= 2**32 - 1 libstdc++ draws one number in [0, (i+1)*(i+2)) per pair of positions.
    """
    if n <= 1:
        return np.zeros(max(n, 1), np.int64)
    return _positions_from_draws(n, _lemire_varying(rng, _shuffle_ranges(n)))


def _final_positions(pos: np.ndarray) -> np.ndarray:
    """Where each original element ends up after the swaps (i, pos[i]) for i = 1..n-1, in order.

    Step i moves the untouched element i to pos[i] and whatever sat there to i. So element i lands
    at pos[i] at time i and moves on at the next step k > i with pos[k] == its position, landing
    at k; it then moves at the first step after k that targets k; and so on. Those "next step"
    links are found with one stable sort and the chains are followed by pointer doubling, which
    replaces n sequential swaps with O(n log n) array operations.
    """
    n = pos.shape[0]
    j = pos.copy()
    j[0] = 0
    # Sorting unique keys value*n + index groups equal values by increasing index (a stable
    # argsort, but several times faster).
    keys = np.sort(j * n + np.arange(n, dtype=np.int64))
    order = keys % n
    js = keys // n
    next_same = np.full(n, -1, np.int64)
    same = js[1:] == js[:-1]
    next_same[order[:-1][same]] = order[1:][same]
    first_occ = np.full(n, -1, np.int64)
    starts = np.ones(n, dtype=bool)
    starts[1:] = ~same
    first_occ[js[starts]] = order[starts]
    idx = np.arange(n, dtype=np.int64)
    succ = np.where(first_occ == idx, next_same, first_occ)
    term = np.where(succ >= 0, succ, idx)
    while True:
        nxt = term[term]
        if np.array_equal(nxt, term):
            break
        term = nxt
    first_move = next_same
    return np.where(first_move >= 0, term[np.maximum(first_move, 0)], j)


def _apply_swaps(values: np.ndarray, pos: np.ndarray) -> np.ndarray:
    n = values.shape[0]
    if n > 2048:
        out = np.empty_like(values)
        out[_final_positions(pos)] = values
        return out
    a = values.tolist()
    for i, j in enumerate(pos.tolist()):
        if i:
            a[i], a[j] = a[j], a[i]
    return np.asarray(a, dtype=values.dtype)


def shuffle(rng: MT19937, values: np.ndarray) -> np.ndarray:
    """`std::shuffle(values.begin(), values.end(), rng)`; returns the shuffled copy."""
    values = np.asarray(values)
    n = values.shape[0]
    if n <= 1:
        return values.copy()
    return _apply_swaps(values, _shuffle_positions(rng, n))


def shuffle_repeats(rng: MT19937, values: np.ndarray, repeats: int) -> np.ndarray:
    """`repeats` back-to-back `std::shuffle`s of fresh copies of `values`, concatenated.

    One draw pass for all copies; the copies' swaps never cross, so together they are one swap
    sequence over the concatenation (each copy's first position a no-op swap with itself).
    """
    values = np.asarray(values)
    n = values.shape[0]
    if repeats <= 0:
        return values[:0].copy()
    if n <= 1:
        return np.tile(values, repeats)
    per = _shuffle_ranges(n)
    draws = _lemire_varying(rng, np.tile(per, repeats)).reshape(repeats, per.shape[0])
    base = np.arange(repeats, dtype=np.int64)[:, None] * n
    pos = np.stack([_positions_from_draws(n, d) for d in draws]) + base
    pos[:, 0] = base[:, 0]
    return _apply_swaps(np.tile(values, repeats), pos.reshape(-1))


def permutation(rng: MT19937, n: int) -> np.ndarray:
    """`std::shuffle` of `[0, n)` as int64."""
    return shuffle(rng, np.arange(n, dtype=np.int64))


def skip_shuffle(rng: MT19937, n: int) -> None:
    """Consume exactly the words a shuffle of n items would, without building the permutation."""
    if n > 1:
        _shuffle_positions(rng, n)


# ---------------------------------------------------------------- real distributions


def _pair_words(rng: MT19937, n: int) -> np.ndarray:
    """n successive word pairs as the uint64 values w0 + w1 * 2**32 (libstdc++'s generate_canonical
    sums its two words in that order)."""
    w = np.ascontiguousarray(rng.take(2 * n), dtype=np.uint32)  # no copy for the generator's own
    if sys.byteorder == "little":
        return w.view(np.uint64)  # each pair's bytes read as one little-endian uint64
    return w[0::2].astype(np.uint64) | (w[1::2].astype(np.uint64) << np.uint64(32))


def _canonical_from_pairs(u: np.ndarray) -> np.ndarray:
    # One correctly rounded conversion of the exact integer w0 + w1 * 2**32: the same double as
    # libstdc++'s `w0 + w1 * 2**32` in doubles (w1 * 2**32 is exact, the sum rounds once); dividing by
    # 2**64 is exact.
    r = u.astype(np.float64)
    r /= _TWO64
    np.minimum(r, _ONE_BELOW, out=r)
    return r


def canonical_array(rng: MT19937, n: int) -> np.ndarray:
    """n draws of `generate_canonical<double, 53>`: (w0 + w1 * 2**32) / 2**64, clamped below 1."""
    return _canonical_from_pairs(_pair_words(rng, n))


def canonical_window_mask(rng: MT19937, n: int, offset: float, prob: float) -> np.ndarray:
    """For n canonical draws v: frac(v + offset) <= prob, computed as the official perf-mode
    accuracy-log sampling does (v + offset, minus 1 when >= 1, compared with prob)."""
    mask = np.zeros(n, dtype=bool)
    mask[canonical_window_hits(rng, n, offset, prob)] = True
    return mask


def canonical_window_hits(rng: MT19937, n: int, offset: float, prob: float) -> np.ndarray:
    """The positions where `canonical_window_mask` is True, without a mask of n.

    For a small prob only the draws whose word pair lies near the accepted interval of v are
    converted to doubles: the pair's integer value decides the rest with a margin far above the
    doubles' rounding, so the result is the same as converting every draw.
    """
    u = _pair_words(rng, n)
    if not (0.0 <= offset < 1.0 and 0.0 <= prob < 2.0**-8):
        return np.flatnonzero(_window_exact(_canonical_from_pairs(u), offset, prob))
    # accepted v (up to rounding): [1 - offset, 1 - offset + prob] modulo 1, so the pair values
    # [start - margin, start + width + margin] modulo 2**64: one wrapping subtract and compare
    margin = 1 << 20  # 2**-44 in v: far above the doubles' rounding (2**-53)
    start = (math.floor((1.0 - offset) * _TWO64) - margin) % (1 << 64)
    width = math.ceil(prob * _TWO64) + 2 * margin
    near = np.flatnonzero((u - np.uint64(start)) <= np.uint64(width))
    if not near.shape[0]:
        return near
    hits: np.ndarray = near[_window_exact(_canonical_from_pairs(u[near]), offset, prob)]
    return hits


def _window_exact(v: np.ndarray, offset: float, prob: float) -> np.ndarray:
    v += offset
    np.subtract(v, 1.0, out=v, where=v >= 1.0)
    out: np.ndarray = v <= prob
    return out


def canonical(rng: MT19937) -> float:
    return float(canonical_array(rng, 1)[0])


def uniform_real_array(rng: MT19937, n: int, low: float = 0.0, high: float = 1.0) -> np.ndarray:
    """n draws of `uniform_real_distribution<double>(low, high)`: canonical * (high - low) + low."""
    return canonical_array(rng, n) * (high - low) + low


def uniform_real(rng: MT19937, low: float = 0.0, high: float = 1.0) -> float:
    return float(uniform_real_array(rng, 1, low, high)[0])


def exponential_array(rng: MT19937, lam: float, n: int) -> np.ndarray:
    """n draws of `exponential_distribution<double>(lam)`, in seconds when lam is a rate per second."""
    return -np.log(1.0 - canonical_array(rng, n)) / lam


def exponential_ns_array(rng: MT19937, lam: float, n: int) -> np.ndarray:
    """Exponential draws converted like `duration_cast<nanoseconds>(duration<double>(x))`.

    The cast truncates x * 1e9. numpy's vector log may differ from glibc's by an ulp, which only
    matters when x * 1e9 sits next to an integer; those few draws are recomputed with math.log
    (the C library's log, the one the official LoadGen calls).
    """
    c = canonical_array(rng, n)
    x = -np.log(1.0 - c) / lam
    scaled = x * 1e9
    frac = scaled - np.floor(scaled)
    close = np.flatnonzero((frac < 1e-6) | (frac > 1.0 - 1e-6))
    for k in close.tolist():
        scaled[k] = (-math.log(1.0 - float(c[k])) / lam) * 1e9
    return np.trunc(scaled).astype(np.int64)
