"""TOPSIS in two phases (column statistics, then scores): every implementation against the
reference, the statistics of partitions merged, and scores that do not depend on the
magnitude of a column."""

from __future__ import annotations

import numpy as np
import pytest
from gpurank.kernels import TopsisStats, cpu
from gpurank.kernels import reference as ref
from gpurank.kernels.cpu.topsis import PAR_MIN
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kernel_helpers import SETTINGS, check_permutation, make_input, small_cases

TOL = {"rtol": 1e-9, "atol": 1e-12}


def _impl(request, name):
    return request.getfixturevalue("cuda_impl") if name == "cuda" else \
        {"reference": ref, "cpu": cpu}[name]


@SETTINGS
@given(small_cases, st.sampled_from(["vector", "minmax"]), st.integers(0, 2**31 - 1))
def test_topsis_matches_reference(case, norm, wseed):
    n, m, kind, seed, dtype = case
    x = make_input(n, m, kind, seed, dtype)
    rng = np.random.default_rng(wseed)
    w = rng.uniform(0.0, 2.0, m)
    w[0] += 0.1
    b = rng.random(m) < 0.5
    before = x.copy()
    got = cpu.topsis(x, w, b, norm=norm)
    want = ref.topsis(x, w, b, norm=norm)
    assert got.dtype == np.float64 and got.shape == (n,)
    np.testing.assert_allclose(got, want, **TOL)
    assert ((got >= 0) & (got <= 1)).all()
    np.testing.assert_array_equal(x, before)
    out = np.full(n, -1.0)
    for impl in (cpu, ref):  # into a caller's array: the same scores, no new array
        assert impl.topsis(x, w, b, norm=norm, out=out) is out
        np.testing.assert_array_equal(out, impl.topsis(x, w, b, norm=norm))
    # the two phases composed are topsis itself, to the bit
    for impl in (cpu, ref):
        s = impl.topsis_stats(x)
        np.testing.assert_array_equal(impl.topsis_from_stats(x, s, w, b, norm=norm),
                                      impl.topsis(x, w, b, norm=norm))


@pytest.mark.parametrize("m, dtype", [(1, np.float64), (3, np.float32), (7, np.float64)])
def test_topsis_parallel_chunks_match_reference(m, dtype):
    # above PAR_MIN rows: 64 chunks whose row counts are not multiples of the 8-row lanes of
    # pass 1, so every chunk also runs its tail loop
    n = PAR_MIN + 4097
    x = make_input(n, m, "int", 7, dtype)
    w = np.linspace(0.5, 1.5, m)
    b = np.arange(m) % 2 == 0
    for norm in ("vector", "minmax"):
        np.testing.assert_allclose(cpu.topsis(x, w, b, norm=norm), ref.topsis(x, w, b, norm=norm),
                                   **TOL)


@settings(max_examples=25, deadline=None)
@given(small_cases, st.integers(0, 2**31 - 1))
def test_permuting_rows_permutes_the_scores(case, pseed):
    m = case[1]
    check_permutation(lambda x: cpu.topsis(x, np.ones(m), np.zeros(m, dtype=bool)), case, pseed,
                      compare=lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-12))


# -- column statistics -------------------------------------------------------------------------


def _same_stats(a, b):
    assert a.n == b.n
    for name in ("lo", "hi", "scale"):  # exact whatever the order of reduction
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    np.testing.assert_allclose(a.ssq, b.ssq, rtol=1e-13)


@pytest.mark.parametrize("impl_name", ["cpu", "cuda"])
@pytest.mark.parametrize("n, m", [(0, 3), (1, 2), (60, 4)])
def test_stats_match_reference(request, impl_name, n, m):
    impl = _impl(request, impl_name)
    x = make_input(n, m, "float", n + m) * 100 - 30
    if n:
        x[:, 0] = 0.0  # an all-zero column: scale 0, norm 0
    s = impl.topsis_stats(x)
    assert isinstance(s, TopsisStats)
    _same_stats(s, ref.topsis_stats(x))
    if n:
        np.testing.assert_allclose(s.norm, np.sqrt((x * x).sum(axis=0)), rtol=1e-13)


def test_stats_hold_powers_of_two_and_are_read_only():
    s = ref.topsis_stats(np.array([[3.0, -0.7], [-5.0, 0.2]]))
    np.testing.assert_array_equal(s.scale, [4.0, 0.5])  # largest power of two <= max |x|
    with pytest.raises(ValueError):
        s.lo[0] = 1.0


@pytest.mark.parametrize("impl_name", ["reference", "cpu", "cuda"])
@pytest.mark.parametrize("norm", ["vector", "minmax"])
def test_partitions_merge_to_the_whole_table(request, impl_name, norm):
    impl = _impl(request, impl_name)
    n = 90 if impl_name == "cuda" else 3000
    x = make_input(n, 4, "float", 5) * [1.0, 1e6, 1e-3, 50.0]  # columns of very different scales
    x[::7, 2] *= 1e-200  # and a column spanning 200 orders of magnitude
    w, b = np.array([1.0, 2.0, 0.5, 1.0]), np.array([True, False, False, True])
    cuts = [0, n // 3, n // 3, n - 5, n]  # with an empty partition
    parts = [x[cuts[i]:cuts[i + 1]] for i in range(4)]
    merged = TopsisStats.merge([impl.topsis_stats(p) for p in parts])
    _same_stats(merged, impl.topsis_stats(x))
    got = np.concatenate([impl.topsis_from_stats(p, merged, w, b, norm=norm) for p in parts])
    np.testing.assert_allclose(got, impl.topsis(x, w, b, norm=norm), rtol=1e-12, atol=1e-15)


def test_merge_needs_stats():
    with pytest.raises(ValueError, match="stats must hold at least one TopsisStats; got none"):
        TopsisStats.merge([])


@pytest.mark.parametrize("impl_name", ["reference", "cpu", "cuda"])
def test_from_stats_checks_the_stats(request, impl_name):
    impl = _impl(request, impl_name)
    x = np.ones((3, 2))
    with pytest.raises(ValueError, match="stats must be a TopsisStats; got tuple"):
        impl.topsis_from_stats(x, (1, 2), [1, 1], [True, False])
    with pytest.raises(ValueError, match="stats must describe 2 columns; got 3"):
        impl.topsis_from_stats(x, ref.topsis_stats(np.ones((3, 3))), [1, 1], [True, False])
    with pytest.raises(ValueError, match="stats must describe at least one row"):
        impl.topsis_from_stats(x, ref.topsis_stats(np.ones((0, 2))), [1, 1], [True, False])
    bad = x.copy()
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match=r"matrix must be finite; row 2, column 1 is nan"):
        impl.topsis_from_stats(bad, ref.topsis_stats(x), [1, 1], [True, False])


# -- scale invariance: no criterion drops out, however large or small its values --------------

_columns = st.tuples(
    st.integers(2, 40),  # rows
    st.integers(1, 5),  # columns
    st.integers(0, 2**31 - 1),  # seed
    st.integers(-300, 300),  # the column's new magnitude, 10**k
    st.sampled_from(["vector", "minmax"]),
)


def _scaled(n, m, seed, k):
    rng = np.random.default_rng(seed)
    x = rng.integers(-50, 51, size=(n, m)).astype(np.float64)  # ties, zeros, both signs
    x[rng.random((n, m)) < 0.5] += rng.random()  # and fractions
    w = rng.uniform(0.2, 2.0, m)
    b = rng.random(m) < 0.5
    j = int(rng.integers(0, m))
    y = x.copy()
    y[:, j] *= 10.0**k  # every nonzero value stays within [1e-300, 1e303]: finite, normal
    return x, y, w, b


def _check_scale_invariance(impl, n, m, seed, k, norm):
    x, y, w, b = _scaled(n, m, seed, k)
    np.testing.assert_allclose(impl.topsis(y, w, b, norm=norm), impl.topsis(x, w, b, norm=norm),
                               rtol=1e-10, atol=1e-13, err_msg=f"10**{k}")


@pytest.mark.parametrize("impl", [ref, cpu], ids=["reference", "cpu"])
@settings(max_examples=60, deadline=None)
@given(case=_columns)
def test_scores_do_not_depend_on_the_magnitude_of_a_column(impl, case):
    _check_scale_invariance(impl, *case)


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # the simulator
@settings(max_examples=6, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # cuda_impl: a module
@given(st.tuples(st.integers(2, 10), st.integers(1, 4), st.integers(0, 2**31 - 1),
                 st.integers(-300, 300), st.sampled_from(["vector", "minmax"])))
def test_cuda_scores_do_not_depend_on_the_magnitude_of_a_column(cuda_impl, case):
    _check_scale_invariance(cuda_impl, *case)


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # the simulator
@pytest.mark.parametrize("impl_name", ["reference", "cpu", "cuda"])
@pytest.mark.parametrize("k", [-300, -160, -155, 154, 160, 300])
@pytest.mark.parametrize("norm", ["vector", "minmax"])
def test_columns_whose_squares_underflow_or_overflow_still_count(request, impl_name, k, norm):
    """Values near 1e-160 square to 0 and values near 1e154 to inf in float64: the plain sum
    of squares would give such a column a zero weight (vector) or, with its range, a
    non-finite one (minmax)."""
    _check_scale_invariance(_impl(request, impl_name), 12, 3, 1, k, norm)


def test_huge_column_values_of_both_signs(host_impl):
    """A range that overflows (max - min > 1.8e308) is still a range."""
    x = np.array([[-1.5e308, 1.0], [1.5e308, 2.0], [0.0, 3.0]])
    y = np.array([[-1.5, 1.0], [1.5, 2.0], [0.0, 3.0]])
    w, b = [1.0, 1.0], [False, True]
    for norm in ("vector", "minmax"):
        np.testing.assert_allclose(host_impl.topsis(x, w, b, norm=norm),
                                   host_impl.topsis(y, w, b, norm=norm), rtol=1e-12)
