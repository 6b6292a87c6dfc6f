"""The packed integer sorts of the CPU kernels against NumPy's stable sorts: ties, signed
zeros, infinities, values equal in their high bits, n = 0 and 1."""

from __future__ import annotations

import numpy as np
import pytest
from gpurank.kernels.cpu._sort import argsort_then, argsort_values, dense_rank, dense_ranks
from gpurank.kernels.cpu.select import rank_order
from hypothesis import given
from hypothesis import strategies as st
from kernel_helpers import SETTINGS


def _values(n, kind, rng):
    if kind == "levels":  # many ties
        return rng.integers(-3, 4, n).astype(np.float64)
    if kind == "close":  # equal in every bit but the lowest few: one run of the packed sort
        return 1.0 + rng.integers(0, 50, n) * np.finfo(np.float64).eps
    if kind == "signed":
        return rng.choice(np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, 5e-324, -5e-324]), n)
    if kind == "float32":
        return rng.standard_normal(n).astype(np.float32)
    return rng.standard_normal(n) * 10.0 ** rng.integers(-300, 300, n)


KINDS = ["levels", "close", "signed", "float32", "wide"]


@SETTINGS
@given(st.integers(0, 3000), st.sampled_from(KINDS), st.integers(0, 2**31 - 1))
def test_argsort_values_is_a_stable_argsort(n, kind, seed):
    x = _values(n, kind, np.random.default_rng(seed))
    np.testing.assert_array_equal(argsort_values(x), np.argsort(x, kind="stable"))


@SETTINGS
@given(st.integers(0, 3000), st.sampled_from(KINDS), st.integers(0, 2**31 - 1))
def test_dense_ranks_match_the_compiled_ranks(n, kind, seed):
    x = _values(n, kind, np.random.default_rng(seed)).astype(np.float64)
    r, u = dense_ranks(x)
    want, wu = dense_rank(x.copy()) if n else (np.zeros(0, np.int64), 0)
    np.testing.assert_array_equal(r, want)
    assert u == wu


@SETTINGS
@given(st.integers(0, 3000), st.sampled_from(KINDS), st.integers(0, 2**31 - 1),
       st.integers(1, 6))
def test_argsort_then_and_rank_order_are_lexsorts(n, kind, seed, levels):
    rng = np.random.default_rng(seed)
    x = _values(n, kind, rng)
    second = rng.integers(0, levels, n)
    third = rng.integers(0, levels, n)
    np.testing.assert_array_equal(argsort_then(x, second), np.lexsort((second, x)))
    np.testing.assert_array_equal(argsort_then(x, second, third),
                                  np.lexsort((third, second, x)))
    x = x.astype(np.float64)
    np.testing.assert_array_equal(rank_order(x, second),
                                  np.lexsort((np.arange(n), second, -x)))
    ids = rng.permutation(n) * 3 - n  # not in position order; negative ones too
    np.testing.assert_array_equal(rank_order(x, second, ids), np.lexsort((ids, second, -x)))


def test_rank_order_refuses_mismatched_ties_and_ids():
    with pytest.raises(ValueError, match="ties must have the shape"):
        rank_order(np.zeros(3), np.zeros(2))
    with pytest.raises(ValueError, match="ids must have the shape"):
        rank_order(np.zeros(3), np.zeros(3), np.zeros(4))


@SETTINGS
@given(st.integers(1, 2000), st.integers(1, 5), st.sampled_from(KINDS), st.integers(0, 2**31 - 1))
def test_lex_order_and_groups_match_numpy(n, m, kind, seed):
    """The lexicographic order is a stable sort on the whole row (equal rows by index), and
    the parallel grouping of equal neighbours equals the serial one."""
    from gpurank.kernels.cpu._sort import lex_order, unique_groups, unique_groups_parallel

    rng = np.random.default_rng(seed)
    c = np.stack([_values(n, kind, rng) for _ in range(m)], axis=1)
    c = np.ascontiguousarray(np.where(rng.random((n, m)) < 0.3, c[0], c))  # duplicates
    order = lex_order(c)
    np.testing.assert_array_equal(order, np.lexsort(c.T[::-1]))
    for a, b in zip(unique_groups(c, order, m), unique_groups_parallel(c, order, m)):
        np.testing.assert_array_equal(a, b)
