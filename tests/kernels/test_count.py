"""domination_count / dominated_count: the CPU kernels against the reference oracle (every
algorithm: sweeps, divide and conquer, k-d tree with and without a cap)."""

from __future__ import annotations

import numpy as np
import pytest
from gpurank.kernels import cpu
from gpurank.kernels.cpu import _cdq, count
from gpurank.kernels.datagen import make_costs
from hypothesis import given, settings
from hypothesis import strategies as st
from kernel_helpers import (
    SETTINGS,
    check_against_reference,
    check_permutation,
    chunked_counts,
    large_cases,
    make_input,
    small_cases,
)

NAMES = ("domination_count", "dominated_count")


@SETTINGS
@given(small_cases)
def test_counts_match_reference(case):
    for name in NAMES:
        for cap in (None, 0, 1, 3):
            check_against_reference(name, case, np.int64, cap=cap)


@SETTINGS
@given(large_cases)
def test_counts_large_against_chunked_check(case):
    n, m, kind, seed, dtype = case
    c = make_input(n, m, kind, seed, dtype)
    by, of = chunked_counts(c)
    np.testing.assert_array_equal(cpu.domination_count(c), by)
    np.testing.assert_array_equal(cpu.dominated_count(c), of)
    np.testing.assert_array_equal(cpu.domination_count(c, cap=2), np.minimum(by, 2))


@pytest.mark.parametrize("m", [3, 4])
@pytest.mark.parametrize("cap", [count.CDQ_CAP, count.CDQ_CAP + 1])
def test_both_sides_of_the_cap_threshold(m, cap):
    """A cap at the threshold takes the k-d tree, one above it the divide and conquer."""
    c = np.round(make_costs(3000, m, "realistic", seed=m) * 8) / 8
    want = np.minimum(chunked_counts(c)[0], cap)
    np.testing.assert_array_equal(cpu.domination_count(c, cap=cap), want)


@settings(max_examples=25, deadline=None)
@given(small_cases, st.integers(0, 2**31 - 1))
def test_permuting_rows_permutes_the_counts(case, pseed):
    for name in NAMES:
        check_permutation(getattr(cpu, name), case, pseed)


@pytest.mark.parametrize("m", range(1, 9))
def test_one_row(host_impl, m):
    c = make_input(1, m, "int", 3)
    assert host_impl.domination_count(c).tolist() == [0]
    assert host_impl.dominated_count(c).tolist() == [0]
    assert host_impl.domination_count(c[:0]).tolist() == []


def test_duplicates_do_not_count_each_other(host_impl):
    c = np.array([[1.0, 2.0], [1.0, 2.0], [2.0, 1.0], [2.0, 2.0], [2.0, 2.0]])
    assert host_impl.domination_count(c).tolist() == [0, 0, 0, 3, 3]
    assert host_impl.dominated_count(c).tolist() == [2, 2, 2, 0, 0]


def _sum_3d_brute(a, b, val, ask):
    le = (a[:, None] <= a[None, :]) & (b[:, None] <= b[None, :])
    le &= np.triu(np.ones((a.size, a.size), dtype=bool), 1)  # earlier positions only
    return np.where(ask, val @ le, 0)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 300), st.integers(1, 6), st.integers(0, 2**31 - 1), st.integers(1, 3),
       st.sampled_from([1, 2]))
def test_divide_and_conquer_sums_match_brute_force(k, spread, seed, nth, top):
    """The 3-D sums, serial and split among threads, on keys with many ties; runs of every
    length around the brute-force leaves; weights 0/1 (the bitmap sweep) and larger (the
    Fenwick sweep)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, spread + 1, k)
    b = rng.integers(0, spread + 1, k)
    val = rng.integers(0, top + 1, k) * rng.integers(0, 2, k)
    ask = rng.random(k) < 0.6
    want = _sum_3d_brute(a, b, val, ask)
    np.testing.assert_array_equal(_cdq.sum_3d(a, b, val, ask), want)
    np.testing.assert_array_equal(_cdq.sum_3d_parallel(a, b, val, ask, nth), want)


@pytest.mark.parametrize("k", [63, 64, 65, 127, 129, 1000, 4097])
def test_bitmap_sweep_across_word_boundaries(k):
    """Unit weights and distinct keys: local ranks fill whole 64-bit words of the bitmap and
    spill into the next one."""
    rng = np.random.default_rng(k)
    a = rng.permutation(k)
    b = rng.permutation(k)
    val = (rng.random(k) < 0.7).astype(np.int64)
    ask = rng.random(k) < 0.7
    want = _sum_3d_brute(a, b, val, ask)
    np.testing.assert_array_equal(_cdq.sum_3d(a, b, val, ask), want)
    np.testing.assert_array_equal(_cdq.sum_3d_parallel(a, b, val, ask, 2), want)


@pytest.mark.parametrize("kind", ["int", "dup", "float"])
def test_three_columns_on_the_threaded_path(monkeypatch, kind):
    """m = 3 takes the threaded sums from ``PARALLEL_3D`` distinct rows on."""
    monkeypatch.setattr(count, "PARALLEL_3D", 0)
    c = make_input(1500, 3, kind, 5)
    by, of = chunked_counts(c)
    np.testing.assert_array_equal(cpu.domination_count(c), by)
    np.testing.assert_array_equal(cpu.dominated_count(c), of)


@pytest.mark.parametrize("n", [0, 1, 2, 17, 64, 65, 129, 1000])
@pytest.mark.parametrize("m", [3, 4])
def test_realistic_ties_float32_around_the_leaves(n, m):
    """Sizes at and around the leaf lengths, realistic rows rounded to force ties, float32."""
    c = (np.round(make_costs(n, m, "realistic", seed=n) * 4) / 4).astype(np.float32)
    np.testing.assert_array_equal(cpu.domination_count(c), chunked_counts(c)[0])
