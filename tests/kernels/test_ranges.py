"""Kernels of the key-range divide and conquer (gpurank.kernels.cpu.ranges) against their
oracles, and their composition over key ranges against the whole-table oracles."""

from __future__ import annotations

import numpy as np
import pytest
from gpurank.kernels import cpu
from gpurank.kernels import reference as ref
from gpurank.kernels.cpu import ranges as R
from gpurank.kernels.datagen import make_costs
from hypothesis import given, settings
from hypothesis import strategies as st
from kernel_helpers import KINDS, make_input

SMALL = settings(max_examples=60, deadline=None)


def _same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and np.array_equal(g, w)


def _points(rng, n, hi):
    a, b, c = (rng.integers(0, hi, n) for _ in range(3))
    return a, b, c, rng.random(n) < 0.5, rng.integers(0, 40, n)


@SMALL
@given(st.integers(0, 150), st.integers(1, 8), st.integers(0, 2**31 - 1))
def test_below_matches_reference(n, hi, seed):
    a, b, c, cont, val = _points(np.random.default_rng(seed), n, hi)
    _same(R.below(a, b, c, cont, val), ref.below(a, b, c, cont, val))


@pytest.mark.parametrize("n", [0, 1, 2, 3])
@pytest.mark.parametrize("share", [0.0, 0.5, 1.0])
def test_below_tiny_and_one_sided(n, share):
    rng = np.random.default_rng(n)
    a, b, c, _, val = _points(rng, n, 2)
    cont = rng.random(n) < share
    _same(R.below(a, b, c, cont, val), ref.below(a, b, c, cont, val))


def test_below_on_long_inputs_crosses_every_merge_level():
    # Beyond one brute-force leaf (32 positions): the merges and their Fenwick trees.
    rng = np.random.default_rng(4)
    for n, hi in ((700, 3), (2000, 50), (1500, 10**6)):
        a, b, c, cont, val = _points(rng, n, hi)
        _same(R.below(a, b, c, cont, val), ref.below(a, b, c, cont, val))


def test_below_strict_cells_by_doubling():
    # "earlier cell" as a weak comparison of doubled cells, the contributor's side odd
    rng = np.random.default_rng(5)
    cell, z, w = rng.integers(0, 4, 300), rng.integers(0, 5, 300), rng.integers(0, 5, 300)
    cont = rng.random(300) < 0.5
    val = rng.integers(0, 9, 300)
    got = R.below(z, 2 * cell + cont, w, cont, val)
    le = (z[:, None] <= z) & (cell[:, None] < cell) & (w[:, None] <= w) & cont[:, None] & ~cont
    assert np.array_equal(got[0], le.sum(axis=0))
    assert np.array_equal(got[1], np.where(le, val[:, None], -1).max(axis=0, initial=-1))


@SMALL
@given(st.integers(0, 150), st.integers(1, 5), st.integers(1, 5), st.booleans(),
       st.integers(0, 2**31 - 1))
def test_below_cells_matches_reference(n, gy, gz, with_init, seed):
    rng = np.random.default_rng(seed)
    e = rng.integers(0, 6, n)
    cy, cz = rng.integers(0, gy, n), rng.integers(0, gz, n)
    cont, val = rng.random(n) < 0.5, rng.integers(0, 30, n)
    init = (None, None)
    if with_init:
        ic = rng.integers(0, 3, (gy, gz))
        init = (ic, np.where(ic > 0, rng.integers(0, 50, (gy, gz)), -1))
    _same(R.below_cells(e, cy, cz, cont, val, *init),
          ref.below_cells(e, cy, cz, cont, val, *init))


def test_cell_totals():
    rng = np.random.default_rng(6)
    cy, cz, v = rng.integers(0, 3, 200), rng.integers(0, 4, 200), rng.integers(0, 99, 200)
    cnt, best = R.cell_totals(cy, cz, v, (3, 5))
    want_c = np.zeros((3, 5), np.int64)
    want_b = np.full((3, 5), -1, np.int64)
    np.add.at(want_c, (cy, cz), 1)
    np.maximum.at(want_b, (cy, cz), v)
    assert np.array_equal(cnt, want_c) and np.array_equal(best, want_b)
    assert R.cell_totals([], [], [], (2, 2))[0].sum() == 0


@SMALL
@given(st.integers(0, 80), st.integers(1, 5), st.sampled_from(KINDS), st.integers(0, 6),
       st.integers(0, 2**31 - 1))
def test_range_index_matches_reference(n, m, kind, s, seed):
    rng = np.random.default_rng(seed)
    c = make_input(n, m, kind, seed)
    cols = rng.permutation(m)[: int(rng.integers(1, m + 1))]
    pool = make_input(max(s, 1), m, kind, seed + 1)[:s, cols]
    sp = pool[np.lexsort(pool.T[::-1])] if s else np.empty((0, len(cols)))
    got = R.range_index(c, sp, cols)
    assert got.dtype == np.int32 and np.array_equal(got, ref.range_index(c, sp, cols))


def test_range_index_never_decreases_along_dominance():
    c = make_input(300, 4, "int", 7)
    sp = c[np.lexsort(c[:, [2, 3, 0, 1]].T[::-1])][::37][:, [2, 3, 0, 1]]
    r = R.range_index(c, sp, [2, 3, 0, 1])
    d = ref.dominance_matrix(c)
    assert (r[:, None] <= r[None, :])[d].all()
    eq = (c[:, None, :] == c[None, :, :]).all(axis=2)
    assert (r[:, None] == r[None, :])[eq].all()


def _split_lex(c, cut):
    """Row positions before and after the lexicographic position ``cut`` (moved to the end
    of its run of equal rows, which stays on one side)."""
    order = np.lexsort(c.T[::-1]) if len(c) else np.zeros(0, np.int64)
    cs = c[order]
    while 0 < cut < len(c) and (cs[cut] == cs[cut - 1]).all():
        cut += 1
    return order[:cut], order[cut:]


@SMALL
@given(st.integers(0, 90), st.integers(1, 6), st.sampled_from(KINDS),
       st.integers(0, 2**31 - 1))
def test_chain_rank_of_a_later_range_is_the_rank_in_the_whole_table(n, m, kind, seed):
    rng = np.random.default_rng(seed)
    c = make_input(n, m, kind, seed)
    full = ref.pareto_rank(c)
    before, after = _split_lex(c, int(rng.integers(0, n + 1)))
    d = ref.dominance_matrix(c)
    low = np.array([1 + full[before][d[before, q]].max(initial=-1) for q in after],
                   dtype=np.int64)
    got = R.chain_rank(c[after], low)
    assert got.dtype == np.int32 and np.array_equal(got, full[after])
    assert np.array_equal(ref.chain_rank(c[after], low), full[after])
    assert np.array_equal(R.chain_rank(c), full)


@pytest.mark.parametrize("m", range(0, 7))
@pytest.mark.parametrize("n", [0, 1, 2])
def test_chain_rank_tiny(n, m):
    c = make_input(n, m, "int", 3)
    low = 3 * ref.domination_count(c)  # never decreases along dominance
    assert R.chain_rank(c, low).tolist() == ref.chain_rank(c, low).tolist()


def test_chain_rank_bounds_far_above_the_block():
    # A block whose rows all start hundreds of fronts up: the empty fronts below are made.
    c = make_costs(400, 4, "realistic", seed=2)
    low = np.full(400, 700, dtype=np.int64)
    assert np.array_equal(R.chain_rank(c, low), cpu.pareto_rank(c) + 700)
    c3 = np.ascontiguousarray(c[:, :3])
    assert np.array_equal(R.chain_rank(c3, low), cpu.pareto_rank(c3) + 700)


def test_chain_rank_on_realistic_ranges_of_the_grid_kernel():
    # 4 columns and more than GRID_MIN_ROWS rows: the ENS search narrowed by the rank grid,
    # and started at each row's bound.
    c = make_costs(70_000, 4, "realistic", seed=3)
    full = cpu.pareto_rank(c)
    order = np.lexsort(c.T[::-1])
    a, b = order[:30_000], order[30_000:]
    low = np.zeros(len(b), dtype=np.int64)
    # 1 + the largest rank of the dominators in the first range, from the kernel below
    ranks = R.slab_ranks(c[:, 1:])
    cont = np.zeros(len(c), dtype=bool)
    cont[a] = True
    rest = np.concatenate([a, b])
    _, best = R.below(ranks[rest, 0], ranks[rest, 1], ranks[rest, 2], cont[rest],
                      full[rest].astype(np.int64))
    low = best[len(a):] + 1
    assert np.array_equal(R.chain_rank(c[b], low), full[b])


def test_reference_chain_rank_refuses_inconsistent_bounds():
    with pytest.raises(ValueError, match="never decrease along dominance"):
        ref.chain_rank([[1.0, 1.0], [2.0, 2.0]], [3, 0])


def test_order_of_and_slab_ranks():
    rng = np.random.default_rng(9)
    k = rng.integers(0, 50, 1000)
    assert np.array_equal(R.order_of(k), np.argsort(k, kind="stable"))
    v = np.round(rng.normal(size=(500, 3)), 1)
    r = R.slab_ranks(v)
    assert r.dtype == np.int32
    for j in range(3):
        assert np.array_equal(r[:, j], np.unique(v[:, j], return_inverse=True)[1] + 1)
    assert R.slab_ranks(np.empty((0, 2))).shape == (0, 2)


@pytest.mark.parametrize("call,match", [
    (lambda: R.below([0, 1], [0], [0, 0], np.array([True, False]), [1, 1]),
     "second must have one entry per point"),
    (lambda: R.below([0, -1], [0, 0], [0, 0], np.array([True, False]), [1, 1]),
     r"first must hold integers in \[0, 536870912\); got -1"),
    (lambda: R.below([0.5], [0], [0], np.array([True]), [1]), "first must be a 1-D array of "
     "integers"),
    (lambda: R.below([0], [0], [0], np.array([1]), [1]), "contributes must be a bool array"),
    (lambda: R.range_index(np.zeros((2, 2)), [[1.0, 0.0], [0.0, 1.0]], [0, 1]),
     "splitters must be sorted"),
    (lambda: R.range_index(np.zeros((2, 2)), [[1.0]], [2]), "columns must be distinct"),
    (lambda: R.chain_rank(np.zeros((2, 2)), [0, -1]), "lower must be >= 0"),
    (lambda: R.below_cells([0, 0], [0, 3], [0, 0], np.array([True, False]), [1, 0],
                           np.zeros((2, 2), np.int64), np.full((2, 2), -1)),
     r"cell_y must hold integers in \[0, 2\)"),
])
def test_bad_input_is_named(call, match):
    with pytest.raises(ValueError, match=match):
        call()
