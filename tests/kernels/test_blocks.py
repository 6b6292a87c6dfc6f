"""Cross-partition kernels (gpurank.kernels.cpu.blocks) against their oracles."""

import numpy as np
import pytest
from gpurank.kernels import cpu
from gpurank.kernels import reference as ref
from gpurank.kernels.cpu import blocks as P


def _costs(rng, n, m, ints=True):
    x = rng.integers(0, 4, size=(n, m)).astype(np.float64) if ints else rng.normal(size=(n, m))
    return np.ascontiguousarray(x)


@pytest.mark.parametrize("m", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("na,nb", [(0, 5), (5, 0), (1, 1), (17, 30), (60, 45)])
@pytest.mark.parametrize("small", [True, False])
def test_cross_count_matches_brute_force(monkeypatch, m, na, nb, small):
    if not small:
        monkeypatch.setattr(P, "SMALL_PAIRS", 0)  # force the stacked-kernel path for m <= 3
    rng = np.random.default_rng(na * 100 + nb * 10 + m)
    for ints in (True, False):
        a, b = _costs(rng, na, m, ints), _costs(rng, nb, m, ints)
        a0, b0 = a.copy(), b.copy()
        got = P.cross_domination_count(a, b)
        want = ref.cross_domination_count(a, b)
        assert got.dtype == np.int64 and np.array_equal(got, want)
        assert np.array_equal(a, a0) and np.array_equal(b, b0)


def test_cross_count_equal_rows_never_dominate():
    a = np.array([[1.0, 2.0], [0.0, 0.0]])
    assert P.cross_domination_count(a, a.copy()).tolist() == [1, 0]
    assert P.cross_domination_count(a[:1], a[:1]).tolist() == [0]


def test_cross_count_sum_split_is_total():
    # Counting by partition pairs equals the single-table count.
    rng = np.random.default_rng(3)
    c = _costs(rng, 90, 4)
    cuts = [0, 10, 10, 55, 90]  # one empty block
    total = np.concatenate([
        sum(P.cross_domination_count(c[cuts[i]:cuts[i + 1]], c[cuts[j]:cuts[j + 1]])
            for j in range(4) if j != i) + ref.domination_count(c[cuts[i]:cuts[i + 1]])
        for i in range(4)])
    assert np.array_equal(total, ref.domination_count(c))


def test_box_relation_is_sound():
    rng = np.random.default_rng(5)
    seen = set()
    for _ in range(400):
        m = int(rng.integers(1, 4))
        a = _costs(rng, int(rng.integers(1, 5)), m) + rng.integers(0, 3)
        b = _costs(rng, int(rng.integers(1, 5)), m)
        rel = P.box_relation(P.box(a), P.box(b))
        seen.add(rel)
        cnt = ref.cross_domination_count(a, b)
        if rel == "none":
            assert (cnt == 0).all()
        if rel == "all":
            assert (cnt == len(b)).all()
    assert seen == {"none", "all", "some"}
    assert P.box_relation(None, P.box(np.ones((2, 2)))) == "none"
    assert P.box(np.empty((0, 3))) is None


def test_count_preceding_matches_reference():
    rng = np.random.default_rng(7)
    s = rng.integers(0, 5, 200).astype(float) / 4
    p = rng.integers(0, 3, 200)
    ids = rng.permutation(200)
    q, blk = slice(0, 80), slice(80, 200)
    keys = P.sort_keys(s[blk], p[blk], ids[blk])
    got = P.count_preceding(s[q], p[q], ids[q], keys)
    want = ref.count_preceding(s[q], p[q], ids[q], (s[blk], p[blk], ids[blk]))
    assert np.array_equal(got, want)
    # Ranks from counts over all blocks equal a global lexsort.
    allk = P.sort_keys(s, p, ids)
    rank = P.count_preceding(s, p, ids, allk) + 1
    order = np.lexsort((ids, p, -s))
    want_rank = np.empty(200, np.int64)
    want_rank[order] = np.arange(1, 201)
    assert np.array_equal(rank, want_rank)


def test_shape_mismatch_is_an_error():
    with pytest.raises(ValueError, match="columns"):
        P.cross_domination_count(np.zeros((2, 2)), np.zeros((2, 3)))


# ---------------------------------------------------------------------------------------
# Longest chains across blocks: seeded_rank, cross_max_rank, keys
# ---------------------------------------------------------------------------------------

SIZES = [0, 1, 2, 17, 150]


def _dups(rng, c):
    if len(c) > 4:
        c[: len(c) // 4] = c[rng.integers(0, len(c), len(c) // 4)]  # duplicate rows
    return c


@pytest.mark.parametrize("m", [1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize("n", SIZES)
def test_seeded_rank_matches_reference(m, n):
    rng = np.random.default_rng(1000 * m + n)
    for ints in (True, False):
        c = _dups(rng, _costs(rng, n, m, ints))
        c0 = c.copy()
        got = P.seeded_rank(c)
        assert got.dtype == np.int32
        assert np.array_equal(got, ref.pareto_rank(c))
        assert np.array_equal(got, ref.seeded_rank(c))
        low = rng.integers(0, 5, n)
        low0 = low.copy()
        assert np.array_equal(P.seeded_rank(c, low), ref.seeded_rank(c, low))
        assert np.array_equal(c, c0) and np.array_equal(low, low0)
        if n:
            perm = rng.permutation(n)
            assert np.array_equal(P.seeded_rank(c[perm], low[perm]),
                                  P.seeded_rank(c, low)[perm])


@pytest.mark.parametrize("m", [1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize("na,nb", [(0, 5), (5, 0), (1, 1), (17, 30), (150, 120)])
def test_cross_max_rank_matches_reference(m, na, nb):
    rng = np.random.default_rng(na * 100 + nb * 10 + m)
    for ints in (True, False):
        a = _dups(rng, _costs(rng, na, m, ints))
        b = _costs(rng, nb, m, ints)
        if na and nb:
            b[: min(na, nb) // 2] = a[: min(na, nb) // 2]  # rows equal across the blocks
        rb = rng.integers(0, 7, nb)
        a0, b0 = a.copy(), b.copy()
        got = P.cross_max_rank(a, b, rb)
        assert got.dtype == np.int64
        assert np.array_equal(got, ref.cross_max_rank(a, b, rb))
        assert np.array_equal(a, a0) and np.array_equal(b, b0)


def test_cross_max_rank_equal_rows_do_not_dominate():
    a = np.array([[1.0, 1.0], [2.0, 2.0]])
    assert P.cross_max_rank(a, a[:1].copy(), np.array([5])).tolist() == [-1, 5]


@pytest.mark.parametrize("m", [2, 4])
def test_keys_never_increase_along_dominance(m):
    rng = np.random.default_rng(m)
    c = np.ascontiguousarray(np.exp(rng.normal(size=(300, m)) * 3))  # heavy tails
    c[::7] = np.round(c[::7])
    grids = tuple(np.unique(np.quantile(c[::3, k], np.linspace(0, 1, 20))) for k in range(m))
    key = P.grid_key(c, grids)
    i, j = np.nonzero(ref.dominance_matrix(c).T)  # row j dominates row i
    assert (key[j] <= key[i]).all()


@pytest.mark.parametrize("m", [2, 3, 4, 5])
def test_blocks_compose_to_pareto_rank(m):
    # The Dask scheme on one machine: blocks by key, each ranked from the earlier ones. Many
    # fronts (a noisy anti-chain ladder), ties and duplicates.
    rng = np.random.default_rng(40 + m)
    n = 2000
    base = rng.integers(0, 30, size=(n, 1)).astype(float)
    c = np.ascontiguousarray(base + rng.integers(0, 3, size=(n, m)))
    c[:100] = c[100:200]
    want = cpu.pareto_rank(c)
    assert want.max() > 20
    grids = tuple(np.unique(c[::5, k]) for k in range(m))
    key = P.grid_key(c, grids)
    thr = np.unique(np.quantile(key, [0.2, 0.4, 0.6, 0.8], method="lower"))
    blk = np.searchsorted(thr, key, side="right")
    ranks, got = {}, np.empty(n, np.int32)
    for p in range(len(thr) + 1):
        rows = np.flatnonzero(blk == p)
        low = np.zeros(len(rows), np.int64)
        for j in range(p):
            low = np.maximum(low, P.cross_max_rank(c[rows], c[blk == j], ranks[j]) + 1)
        ranks[p] = P.seeded_rank(c[rows], low)
        got[rows] = ranks[p]
    assert np.array_equal(got, want)


def test_new_kernels_check_shapes():
    with pytest.raises(ValueError, match="rank_b"):
        P.cross_max_rank(np.zeros((2, 2)), np.zeros((3, 2)), np.zeros(2))
    with pytest.raises(ValueError, match="lower"):
        P.seeded_rank(np.zeros((2, 2)), np.zeros(3))
    with pytest.raises(ValueError, match=r"grids must have one grid per column of costs \(2\)"):
        P.grid_key(np.zeros((2, 2)), (np.zeros(1),))
    with pytest.raises(ValueError, match="costs_a must be finite; row 1, column 0 is nan"):
        P.cross_max_rank(np.array([[0.0, 0.0], [np.nan, 0.0]]), np.zeros((3, 2)), np.zeros(3))


@pytest.mark.parametrize("limit", [1, 3, 12])
def test_candidate_filters_compose(limit):
    # The Dask scheme for --rank-depth / --count-cap on one machine: each part keeps its rows
    # below the limit, the union of the candidates is ranked (counted) once; every other row
    # gets the limit. It must equal the clipped values of the whole table.
    rng = np.random.default_rng(limit)
    n = 1500
    base = rng.integers(0, 25, size=(n, 1)).astype(float)
    c = np.ascontiguousarray(base + rng.integers(0, 3, size=(n, 3)))
    c[:100] = c[700:800]
    parts = np.array_split(rng.permutation(n), 5)
    rank = np.full(n, limit, np.int32)
    count = np.full(n, limit, np.int64)
    for out, local, merge in (
            (rank, lambda x: cpu.pareto_rank(x, depth=limit),
             lambda x: cpu.pareto_rank(x, depth=limit)),
            (count, lambda x: cpu.domination_count(x, cap=limit),
             lambda x: cpu.domination_count(x, cap=limit))):
        cand = np.concatenate([p[local(c[p]) < limit] for p in parts])
        out[cand] = merge(c[cand])
    assert np.array_equal(rank, np.minimum(cpu.pareto_rank(c), limit))
    assert np.array_equal(count, np.minimum(cpu.domination_count(c), limit))
