"""rng: std::mt19937 and libstdc++'s distributions, checked against known outputs and scalar references.

Bit-exactness against the official LoadGen's own draws is checked in test_schedule.py (loaded
sets, issued indices, Server timelines, accuracy-log sampling).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from proctor.loadgen import rng

MASK32 = 0xFFFFFFFF


def test_mt19937_reference_outputs():
    r = rng.MT19937()  # default seed 5489, like a default-constructed std::mt19937
    first = r.take(3).tolist()
    assert first == [3499211612, 581869302, 3890346734]
    r.advance(10000 - 4)
    # C++11 [rand.predef]: the 10000th consecutive invocation of a default-constructed mt19937.
    assert r() == 4123659995
    assert r.consumed == 10000


def test_seed_is_taken_modulo_2_32():
    big = 16159082839903944936  # the official schedule seed, larger than 2**32
    a = rng.MT19937(big).take(50)
    b = rng.MT19937(big % (1 << 32)).take(50)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, rng.MT19937(big % (1 << 32) + 1).take(50))


def test_buffered_take_matches_call_sequence():
    a = rng.MT19937(7)
    b = rng.MT19937(7)
    seq = [a() for _ in range(10)] + a.take(20000).tolist() + [a() for _ in range(5)]
    assert seq == b.take(20015).tolist()
    assert a.consumed == b.consumed == 20015


def lemire_reference(words: list[int], erange: int) -> tuple[int, int]:
    """libstdc++ _S_nd written out: returns (value, words used)."""
    used = 0
    product = words[used] * erange
    used += 1
    low = product & MASK32
    if low < erange:
        threshold = ((1 << 32) - erange) % erange
        while low < threshold:
            product = words[used] * erange
            used += 1
            low = product & MASK32
    return product >> 32, used


@pytest.mark.parametrize("erange", [1, 2, 3, 7, 1000, 65537, 3_000_000_000, (1 << 32) - 1])
def test_uniform_int_array_equals_scalar_reference(erange):
    n = 3000
    words = rng.MT19937(99).take(3 * n).tolist()
    expect, pos = [], 0
    for _ in range(n):
        v, used = lemire_reference(words[pos:], erange)
        expect.append(v + 5)
        pos += used
    r = rng.MT19937(99)
    got = rng.uniform_int_array(r, 5, 5 + erange - 1, n)
    assert got.tolist() == expect
    assert r.consumed == pos  # exactly the words libstdc++ consumes, rejections included
    if erange == 3_000_000_000:
        assert pos > n  # this range rejects ~30% of words: the test exercises rejection
    r2 = rng.MT19937(99)
    assert [rng.uniform_int(r2, 5, 5 + erange - 1) for _ in range(50)] == expect[:50]


def test_varying_ranges_match_scalar_loop():
    g = np.random.default_rng(3)
    eranges = np.concatenate((g.integers(1, 1 << 32, 5000), g.integers(1, 100, 5000))).astype(np.int64)
    r1, r2 = rng.MT19937(11), rng.MT19937(11)
    got = rng._lemire_varying(r1, eranges)
    expect = [rng._lemire_scalar(r2, int(e)) for e in eranges]
    assert got.tolist() == expect
    assert r1.consumed == r2.consumed


def naive_shuffle(r: rng.MT19937, values: list[int]) -> list[int]:
    """libstdc++ std::shuffle transcribed with one scalar draw at a time."""
    a = list(values)
    n = len(a)
    if n <= 1:
        return a
    if ((1 << 32) - 1) // n >= n:
        i = 1
        if n % 2 == 0:
            j = rng._lemire_scalar(r, 2)
            a[1], a[j] = a[j], a[1]
            i = 2
        while i != n:
            b0, b1 = i + 1, i + 2
            x = rng._lemire_scalar(r, b0 * b1)
            p, q = x // b1, x % b1
            a[i], a[p] = a[p], a[i]
            a[i + 1], a[q] = a[q], a[i + 1]
            i += 2
        return a
    for i in range(1, n):
        j = rng._lemire_scalar(r, i + 1)
        a[i], a[j] = a[j], a[i]
    return a


@pytest.mark.parametrize("n", [0, 1, 2, 3, 10, 11, 2049, 5000, 65535, 65536, 70001])
def test_shuffle_equals_transcribed_libstdcxx(n):
    values = np.arange(n, dtype=np.int64) * 3 + 1
    r1, r2 = rng.MT19937(2085463073848966840), rng.MT19937(2085463073848966840)
    got = rng.shuffle(r1, values)
    assert got.tolist() == naive_shuffle(r2, values.tolist())
    assert r1.consumed == r2.consumed
    assert sorted(got.tolist()) == values.tolist()
    r3 = rng.MT19937(2085463073848966840)
    rng.skip_shuffle(r3, n)
    assert r3.consumed == r1.consumed


def test_shuffle_known_official_permutation():
    # The set the official LoadGen 6.0.17 loads for a QSL of 10 with the v6 qsl seed.
    r = rng.MT19937(2085463073848966840)
    assert rng.permutation(r, 10).tolist() == [1, 5, 7, 6, 0, 8, 3, 2, 9, 4]


def test_vectorized_swaps_equal_sequential_swaps():
    g = np.random.default_rng(5)
    for n in (2049, 4000, 30000):
        pos = np.concatenate(([0], (g.random(n - 1) * np.arange(2, n + 1)).astype(np.int64)))
        pos[g.integers(1, n, 50)] = 0  # repeated targets make long chains
        values = np.arange(n, dtype=np.int64) + 100
        a = values.tolist()
        for i in range(1, n):
            j = int(pos[i])
            a[i], a[j] = a[j], a[i]
        assert rng._apply_swaps(values, pos).tolist() == a


def test_canonical_and_uniform_real_use_two_words():
    r = rng.MT19937(42)
    w = rng.MT19937(42).take(8).tolist()
    got = rng.canonical_array(r, 4)
    expect = [
        (float(w[2 * k]) + float(w[2 * k + 1]) * 4294967296.0) / 18446744073709551616.0 for k in range(4)
    ]
    assert got.tolist() == expect
    assert r.consumed == 8
    r2 = rng.MT19937(42)
    assert rng.uniform_real_array(r2, 4, 2.0, 5.0).tolist() == [e * 3.0 + 2.0 for e in expect]
    assert rng.uniform_real(rng.MT19937(42)) == expect[0]


def test_canonical_clamps_below_one():
    class Ones(rng.MT19937):
        def take(self, k):
            return np.full(k, 0xFFFFFFFF, np.uint64)

    v = rng.canonical_array(Ones(1), 3)
    assert (v < 1.0).all() and v[0] == math.nextafter(1.0, 0.0)


def test_exponential_ns_matches_scalar_formula():
    lam = 1234.5
    n = 5000
    r = rng.MT19937(16159082839903944936)
    got = rng.exponential_ns_array(r, lam, n)
    w = rng.MT19937(16159082839903944936).take(2 * n).tolist()
    expect = []
    for k in range(n):
        c = (float(w[2 * k]) + float(w[2 * k + 1]) * 4294967296.0) / 18446744073709551616.0
        expect.append(int((-math.log(1.0 - c) / lam) * 1e9))
    assert got.tolist() == expect
    assert abs(np.mean(got) / 1e9 - 1 / lam) < 0.05 / lam
    seconds = rng.exponential_array(rng.MT19937(16159082839903944936), lam, n)
    assert np.array_equal(np.trunc(seconds * 1e9).astype(np.int64)[:100], got[:100])


def test_uniform_int_rejects_ranges_beyond_32_bits():
    with pytest.raises(ValueError):
        rng.uniform_int(rng.MT19937(1), 0, 1 << 32)
    with pytest.raises(ValueError):
        rng.uniform_int_array(rng.MT19937(1), 5, 4, 3)


def test_long_advance_equals_taking():
    a, b = rng.MT19937(3), rng.MT19937(3)
    a.take(5)
    a.advance(3_000_001)
    b.take(3_000_006)
    assert a.take(10).tolist() == b.take(10).tolist()
    assert a.consumed == b.consumed == 3_000_016


@pytest.mark.parametrize("n, repeats", [(1, 3), (2, 5), (7, 4), (300, 40), (3000, 3), (70000, 2)])
def test_shuffle_repeats_equals_successive_shuffles(n, repeats):
    values = np.arange(n, dtype=np.int64) * 5
    r1, r2 = rng.MT19937(9), rng.MT19937(9)
    got = rng.shuffle_repeats(r1, values, repeats)
    expect = np.concatenate([rng.shuffle(r2, values) for _ in range(repeats)])
    assert got.tolist() == expect.tolist()
    assert r1.consumed == r2.consumed


def _window_reference(seed: int, n: int, offset: float, prob: float) -> np.ndarray:
    """The accuracy-log test written out: every draw converted, then frac(v + offset) <= prob."""
    w = rng.MT19937(seed).take(2 * n).astype(np.uint64)
    v = w[1::2].astype(np.float64) * 4294967296.0 + w[0::2]
    v = np.minimum(v / 18446744073709551616.0, math.nextafter(1.0, 0.0)) + offset
    v = np.where(v >= 1.0, v - 1.0, v)
    return v <= prob


@pytest.mark.parametrize("prob", [0.0, 1e-7, 1e-3, 0.05, 1.0, math.inf, math.nan])
@pytest.mark.parametrize("offset", [0.0, 0.25, 0.9999999])
def test_canonical_window_mask_matches_every_draw_converted(offset: float, prob: float) -> None:
    n = 200_000
    r = rng.MT19937(5489)
    got = np.concatenate([rng.canonical_window_mask(r, k, offset, prob) for k in (1, 7, n - 8)])
    expect = _window_reference(5489, n, offset, prob)
    assert np.array_equal(got, expect)
    if 1e-3 <= prob < 1:  # a few hundred logged draws: the window path was exercised
        assert 0 < got.sum() < n


def test_canonical_window_mask_exact_hits_at_probability_zero() -> None:
    """offset = 1 - v for a drawn v puts that draw exactly on the boundary: logged at prob 0."""
    v = rng.canonical_array(rng.MT19937(11), 500)
    hits = 0
    for x in v[:40].tolist():
        offset = 1.0 - x
        if not 0.0 <= offset < 1.0:
            continue
        got = rng.canonical_window_mask(rng.MT19937(11), 500, offset, 0.0)
        assert np.array_equal(got, _window_reference(11, 500, offset, 0.0))
        hits += int(got.sum())
    assert hits > 0
