"""pareto_rank: the CPU kernel against the reference oracle, its depth= variant, and the
ENS-BS variants against independent algorithms on inputs that reach every code path."""

from __future__ import annotations

import numpy as np
import pytest
from gpurank.kernels import cpu
from gpurank.kernels import reference as ref
from gpurank.kernels.cpu import _ens, blocks
from gpurank.kernels.cpu._sort import lex_order
from gpurank.kernels.datagen import make_costs
from hypothesis import given, settings
from hypothesis import strategies as st
from kernel_helpers import (
    SETTINGS,
    check_against_reference,
    check_permutation,
    large_cases,
    make_input,
    ranks_from_counts_check,
    small_cases,
)


@SETTINGS
@given(small_cases)
def test_rank_matches_reference(case):
    check_against_reference("pareto_rank", case, np.int32)


@SETTINGS
@given(large_cases)
def test_rank_large_against_its_definition(case):
    n, m, kind, seed, dtype = case
    c = make_input(n, m, kind, seed, dtype)
    rank = cpu.pareto_rank(c)
    assert rank.dtype == np.int32
    assert ranks_from_counts_check(c, rank)


@settings(max_examples=25, deadline=None)
@given(small_cases, st.integers(0, 2**31 - 1))
def test_permuting_rows_permutes_the_ranks(case, pseed):
    check_permutation(cpu.pareto_rank, case, pseed)


@pytest.mark.parametrize("m", range(1, 9))
@pytest.mark.parametrize("n", [0, 1, 2])
def test_tiny_inputs(host_impl, n, m):
    c = make_input(n, m, "int", 3)
    assert host_impl.pareto_rank(c).tolist() == ref.pareto_rank(c).tolist()
    if n == 1:
        assert host_impl.pareto_rank(c).tolist() == [0]


def test_duplicates_share_their_rank(host_impl):
    c = np.array([[1.0, 2.0], [1.0, 2.0], [2.0, 1.0], [2.0, 2.0], [2.0, 2.0]])
    assert host_impl.pareto_rank(c).tolist() == [0, 0, 0, 1, 1]


# -- depth: min(rank, depth) ------------------------------------------------------------------


@pytest.mark.parametrize("m", [1, 2, 3, 4, 6])
@pytest.mark.parametrize("n", [0, 1, 2, 57, 600])
@pytest.mark.parametrize("depth", [1, 2, 7, 1000])
def test_depth_clips_the_ranks(m, n, depth):
    rng = np.random.default_rng(n * 31 + m + depth)
    c = rng.integers(0, 4, size=(n, m)).astype(np.float64)
    if n > 10:
        c[: n // 5] = c[n // 5: 2 * (n // 5)]  # duplicated rows
    before = c.copy()
    got = cpu.pareto_rank(c, depth=depth)
    assert got.dtype == np.int32
    want = np.minimum(ref.pareto_rank(c), depth)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(ref.pareto_rank(c, depth=depth), want)
    np.testing.assert_array_equal(c, before)


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "3"])
def test_depth_is_checked(host_impl, bad):
    with pytest.raises(ValueError, match="depth must be None or an integer >= 1; got"):
        host_impl.pareto_rank(np.zeros((2, 2)), depth=bad)


# -- the ENS-BS variants --------------------------------------------------------------------


@pytest.mark.parametrize("ens", ["ens_lex", "ens_kd"])
@pytest.mark.parametrize("m", [3, 4, 5, 6])
@pytest.mark.parametrize("shape", ["anticorrelated", "realistic", "independent"])
def test_lexicographic_ens_matches_other_algorithms(ens, m, shape):
    """Both ENS variants (ranks, and the front-only variant) on inputs large enough to grow
    and move the per-front blocks of ``ens_lex`` and to carry the fresh blocks of ``ens_kd``
    through several k-d levels, with ties and duplicated rows, in both dtypes, against
    ``blocks.seeded_rank`` (divide and conquer for m <= 4, k-d tree beyond) and the k-d tree
    counts (independent algorithms, checked against the reference elsewhere)."""
    c = make_costs(6000, m, shape, seed=m)
    c = np.ascontiguousarray(np.concatenate([np.round(c * 16) / 16, c[:500], c[:200]]))
    for cc in (c, c.astype(np.float32)):
        order = lex_order(cc)
        rank = getattr(_ens, ens)(cc, order)
        np.testing.assert_array_equal(rank, blocks.seeded_rank(cc))
        np.testing.assert_array_equal(cpu.pareto_rank(cc), rank)
        front = getattr(_ens, ens)(cc, order, True) == 0
        np.testing.assert_array_equal(front, cpu.domination_count(cc, cap=1) == 0)
        np.testing.assert_array_equal(front, rank == 0)


@pytest.mark.parametrize("m", [4, 6, 8])
def test_kd_ens_many_levels(m):
    """Fronts of thousands of members (anticorrelated rows): the k-d ENS builds levels 0 to
    4 and more, queries them, and agrees with the k-d tree ranks and counts."""
    c = make_costs(40_000, m, "anticorrelated", seed=11)
    c[7::7] = c[:-7:7]  # duplicated rows spread over the fronts
    order = lex_order(c)
    rank = _ens.ens_kd(c, order)
    assert np.bincount(rank).max() > 8 * _ens.KD_FRESH  # some front reached level 3
    np.testing.assert_array_equal(rank, blocks.seeded_rank(c))
    np.testing.assert_array_equal(_ens.ens_kd(c, order, True) == 0,
                                  cpu.domination_count(c, cap=1) == 0)


@pytest.mark.parametrize("ens", ["ens_lex", "ens_kd"])
def test_ens_chain_of_one_row_fronts(ens):
    """A total order (every row dominates the next): as many fronts as rows, each a new
    block; the rank is the row's place in the chain."""
    t = np.random.default_rng(5).permutation(3000)
    c = np.ascontiguousarray(np.stack([t + 0.5 * k for k in range(5)], axis=1), dtype=float)
    np.testing.assert_array_equal(getattr(_ens, ens)(c, lex_order(c)), t)
    np.testing.assert_array_equal(cpu.pareto_rank(c), t)


@pytest.mark.parametrize("cells", [2, 3, 5, 64])
@pytest.mark.parametrize("shape", ["anticorrelated", "realistic", "independent"])
def test_grid_bounds_keep_the_ranks_exact(monkeypatch, cells, shape):
    """The grid's lower and upper bounds (:mod:`._rank_grid`) narrow the search of the
    four-column ENS; with the grid forced on small inputs and a few cells (so that most
    rows share their cells with their dominators), ties, duplicated rows and float32 keep
    the ranks of the plain search and of an independent algorithm."""
    from gpurank.kernels.cpu import _rank_grid

    c = make_costs(3000, 4, shape, seed=cells)
    c = np.ascontiguousarray(np.concatenate([np.round(c * 8) / 8, c[:300], c[:100]]))
    for cc in (c, c.astype(np.float32)):
        order = lex_order(cc)
        monkeypatch.setattr(_rank_grid, "GRID_MIN_ROWS", cc.shape[0] + 1)
        plain = _ens.ens_kd(cc, order)
        monkeypatch.setattr(_rank_grid, "GRID_MIN_ROWS", 0)
        monkeypatch.setattr(_rank_grid, "GRID", cells)
        assert _rank_grid.grid_cuts(cc, order).shape == (3, cells - 1)
        np.testing.assert_array_equal(_ens.ens_kd(cc, order), plain)
        np.testing.assert_array_equal(plain, blocks.seeded_rank(cc))


@pytest.mark.parametrize("n", [0, 1, 2, 3, 40])
def test_grid_bounds_on_tiny_inputs(monkeypatch, n):
    from gpurank.kernels.cpu import _rank_grid

    monkeypatch.setattr(_rank_grid, "GRID_MIN_ROWS", 0)
    monkeypatch.setattr(_rank_grid, "GRID", 4)
    rng = np.random.default_rng(n)
    c = np.ascontiguousarray(rng.integers(0, 3, (n, 4)).astype(float))  # ties everywhere
    np.testing.assert_array_equal(cpu.pareto_rank(c), ref.pareto_rank(c))
