"""pareto_front: the CPU kernel against the reference oracle and the other dominance kernels.

Small n (<= 600) compares with the reference itself; up to n = 2000 with the chunked O(n^2)
check of kernel_helpers. Inputs include integer ties, duplicated rows, constant columns, both
float dtypes, n = 0 and n = 1, and permuted rows. Large inputs reach the prefilter's rounds,
its parallel passes and the k-d ENS.
"""

from __future__ import annotations

import numpy as np
import pytest
from gpurank.kernels import cpu
from gpurank.kernels import reference as ref
from gpurank.kernels.cpu import front
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


@SETTINGS
@given(small_cases)
def test_front_matches_reference(case):
    check_against_reference("pareto_front", case, np.bool_)


@SETTINGS
@given(large_cases)
def test_front_large_against_chunked_check(case):
    n, m, kind, seed, dtype = case
    c = make_input(n, m, kind, seed, dtype)
    by, _ = chunked_counts(c)
    np.testing.assert_array_equal(cpu.pareto_front(c), by == 0)


@settings(max_examples=25, deadline=None)
@given(small_cases, st.integers(0, 2**31 - 1))
def test_permuting_rows_permutes_the_front(case, pseed):
    check_permutation(cpu.pareto_front, case, pseed)


@pytest.mark.parametrize("m", range(1, 9))
@pytest.mark.parametrize("n", [0, 1, 2])
def test_tiny_inputs(host_impl, n, m):
    c = make_input(n, m, "int", 3)
    assert host_impl.pareto_front(c).tolist() == ref.pareto_front(c).tolist()
    if n == 1:
        assert host_impl.pareto_front(c).tolist() == [True]


def test_duplicates_of_front_rows_are_all_on_the_front(host_impl):
    c = np.array([[1.0, 2.0], [1.0, 2.0], [2.0, 1.0], [2.0, 2.0], [2.0, 2.0]])
    assert host_impl.pareto_front(c).tolist() == [True, True, True, False, False]


@pytest.mark.parametrize("m", [2, 3, 4, 6])
@pytest.mark.parametrize("shape", ["anticorrelated", "realistic", "independent"])
def test_prefilter_is_exact_on_large_inputs(m, shape):
    """The pivot prefilter (scalarization and sample-front pivots, several rounds, parallel
    from 2,000,000 rows for the first round) against the front computed without it, with
    ties and duplicates."""
    c = make_costs(450_000, m, shape, seed=7)
    c = np.round(c * 64) / 64  # ties
    c = np.ascontiguousarray(np.concatenate([c, c[:1000]]))  # duplicated rows
    if m >= 4:
        c = c[:25_000]  # the no-prefilter oracle is O(n |F|) for m >= 4
    np.testing.assert_array_equal(cpu.pareto_front(c), front._front_of(c))


@pytest.mark.parametrize("m", [4, 6])
def test_large_fronts_match_kd_tree_counts(m):
    """Anticorrelated rows with ties and duplicated front rows: fronts of thousands of rows
    through the k-d ENS against the k-d tree counts (an independent algorithm, checked
    against the reference in test_count)."""
    c = make_costs(20_500, m, "anticorrelated", seed=m)
    c = np.ascontiguousarray(np.concatenate([np.round(c * 16) / 16, c[:300]]))
    np.testing.assert_array_equal(cpu.pareto_front(c), cpu.domination_count(c, cap=1) == 0)
