"""Cross-partition kernels against brute force (gpurank.kernels.partition)."""

import numpy as np
import pytest
from gpurank.kernels import partition as P


def _costs(rng, n, m, ints=True):
    x = rng.integers(0, 4, size=(n, m)).astype(np.float64) if ints else rng.normal(size=(n, m))
    return np.ascontiguousarray(x)


@pytest.mark.parametrize("m", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("na,nb", [(0, 5), (5, 0), (1, 1), (17, 30), (60, 45)])
@pytest.mark.parametrize("small", [True, False])
def test_cross_count_matches_brute_force(monkeypatch, m, na, nb, small):
    if not small:
        monkeypatch.setattr(P, "_SMALL_PAIRS", 0)  # force the stacked-kernel path for m <= 3
    rng = np.random.default_rng(na * 100 + nb * 10 + m)
    for ints in (True, False):
        a, b = _costs(rng, na, m, ints), _costs(rng, nb, m, ints)
        a0, b0 = a.copy(), b.copy()
        got = P.cross_domination_count(a, b)
        want = P.cross_domination_count_reference(a, b)
        assert got.dtype == np.int64 and np.array_equal(got, want)
        assert np.array_equal(a, a0) and np.array_equal(b, b0)


def test_cross_count_equal_rows_never_dominate():
    a = np.array([[1.0, 2.0], [0.0, 0.0]])
    assert P.cross_domination_count(a, a.copy()).tolist() == [1, 0]
    assert P.cross_domination_count(a[:1], a[:1]).tolist() == [0]


def test_cross_count_sum_split_is_total():
    # Counting by partition pairs equals the single-table count.
    from gpurank.kernels import reference

    rng = np.random.default_rng(3)
    c = _costs(rng, 90, 4)
    cuts = [0, 10, 10, 55, 90]  # one empty block
    total = np.concatenate([
        sum(P.cross_domination_count(c[cuts[i]:cuts[i + 1]], c[cuts[j]:cuts[j + 1]])
            for j in range(4) if j != i) + reference.domination_count(c[cuts[i]:cuts[i + 1]])
        for i in range(4)])
    assert np.array_equal(total, reference.domination_count(c))


def test_box_relation_is_sound():
    rng = np.random.default_rng(5)
    seen = set()
    for _ in range(400):
        m = int(rng.integers(1, 4))
        a = _costs(rng, int(rng.integers(1, 5)), m) + rng.integers(0, 3)
        b = _costs(rng, int(rng.integers(1, 5)), m)
        rel = P.box_relation(P.box(a), P.box(b))
        seen.add(rel)
        cnt = P.cross_domination_count_reference(a, b)
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
    want = P.count_preceding_reference(s[q], p[q], ids[q], (s[blk], p[blk], ids[blk]))
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
