"""SMAA over TOPSIS weights: every implementation against the reference, the pruning by
domination counts against brute force, and the CUDA kernels under the simulator and as PTX."""

from __future__ import annotations

import numpy as np
import pytest
from gpurank.kernels import TopsisStats, cpu
from gpurank.kernels import reference as ref
from kernel_helpers import make_input


def _weights(s, m, seed, zeros=True):
    rng = np.random.default_rng(seed)
    w = rng.dirichlet(np.ones(m), size=s)
    if zeros and m > 1 and s > 2:
        w[: s // 3, rng.integers(0, m)] = 0.0  # zero weights: many exact score ties
    return w


def _same(a, b):
    for name, x, y in zip(("top1", "topk", "rank_sum", "rank_sq_sum"), a[:4], b[:4]):
        assert x.dtype == np.int64, name
        np.testing.assert_array_equal(x, y, err_msg=name)
    np.testing.assert_allclose(a[4], b[4], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind", ["int", "dup", "const", "float"])
@pytest.mark.parametrize("norm", ["vector", "minmax"])
@pytest.mark.parametrize("n, m", [(0, 2), (1, 1), (2, 3), (17, 2), (60, 4), (150, 6)])
def test_cpu_matches_reference(kind, norm, n, m):
    x = make_input(n, m, kind, seed=n * 7 + m)
    w = _weights(25, m, seed=n + m)
    b = np.arange(m) % 2 == 1
    before = (x.copy(), w.copy())
    for k in (1, 3):
        _same(cpu.smaa_topsis(x, w, b, k=k, norm=norm), ref.smaa_topsis(x, w, b, k=k, norm=norm))
    np.testing.assert_array_equal(x, before[0])
    np.testing.assert_array_equal(w, before[1])


def test_cpu_matches_reference_on_candidate_subsets():
    rng = np.random.default_rng(3)
    for seed in range(10):
        x = make_input(80, 3, "dup", seed)
        w = _weights(40, 3, seed)
        cand = rng.permutation(80)[: rng.integers(0, 80)]
        _same(cpu.smaa_topsis(x, w, [False, True, False], k=4, candidates=cand),
              ref.smaa_topsis(x, w, [False, True, False], k=4, candidates=cand))


def test_counts_are_consistent():
    x = make_input(50, 3, "int", 1)
    s = 30
    top1, topk, rsum, rsq, cw = ref.smaa_topsis(x, _weights(s, 3, 1), np.zeros(3, bool), k=4)
    assert top1.sum() == s and topk.sum() == 4 * s
    assert rsum.sum() == s * 50 * 51 // 2
    np.testing.assert_allclose(cw.sum(axis=1), top1)  # each weight vector sums to 1
    assert (top1 <= topk).all() and (rsq >= rsum).all()


@pytest.mark.parametrize("norm", ["vector", "minmax"])
def test_one_sample_orders_like_topsis(norm):
    """Under one weight vector the SMAA ranks are the order of TOPSIS closeness."""
    rng = np.random.default_rng(5)
    x = rng.random((200, 4))
    b = np.array([True, False, True, False])
    w = rng.dirichlet(np.ones(4))
    scores = ref.topsis(x, w, b, norm=norm)
    rank_sums = ref.smaa_topsis(x, w[None, :], b, k=1, norm=norm)[2]
    np.testing.assert_array_equal(np.argsort(rank_sums), np.argsort(-scores, kind="stable"))


@pytest.mark.parametrize("impl", [ref, cpu], ids=["reference", "cpu"])
@pytest.mark.parametrize("kind", ["int", "dup", "anti", "float"])
@pytest.mark.parametrize("k", [1, 2, 5])
def test_pruning_by_domination_count_is_exact(impl, kind, k):
    """Rows dominated by >= k rows never reach the top k: scoring only the others gives the
    same top-1/top-k counts and central weights as scoring every row (brute force)."""
    for seed in range(6):
        m = 2 + seed % 3
        x = make_input(120, m, kind, seed)
        b = np.zeros(m, dtype=bool)
        b[0] = seed % 2 == 1
        costs = np.where(b, -x, x)
        w = _weights(60, m, seed)
        cand = np.flatnonzero(cpu.domination_count(costs, cap=k) < k)
        full = impl.smaa_topsis(x, w, b, k=k)
        pruned = impl.smaa_topsis(x, w, b, k=k, candidates=cand)
        out = np.setdiff1d(np.arange(120), cand)
        assert (full[0][out] == 0).all() and (full[1][out] == 0).all()
        np.testing.assert_array_equal(pruned[0], full[0][cand])
        np.testing.assert_array_equal(pruned[1], full[1][cand])
        np.testing.assert_allclose(pruned[4], full[4][cand], rtol=1e-12, atol=1e-12)
        # ranks among candidates never exceed ranks among all rows
        assert (pruned[2] <= full[2][cand]).all()


def test_dominated_row_never_ranks_above_its_dominator_even_with_zero_weights():
    # row 0 is dominated by row 1 only through column 1, whose weight is 0: equal scores;
    # the tie-break (lexicographic cost order) must still put row 1 first.
    x = np.array([[1.0, 5.0], [1.0, 4.0], [3.0, 0.0]])
    w = np.array([[1.0, 0.0]])
    top1, _, rsum, _, _ = ref.smaa_topsis(x, w, [False, False], k=1)
    assert top1.tolist() == [0, 1, 0] and rsum.tolist() == [2, 1, 3]
    _same(cpu.smaa_topsis(x, w, [False, False], k=1), ref.smaa_topsis(x, w, [False, False], k=1))


@pytest.mark.parametrize("impl", [ref, cpu], ids=["reference", "cpu"])
def test_bad_inputs_are_rejected(impl):
    x = np.ones((3, 2))
    w = np.full((4, 2), 0.5)
    with pytest.raises(ValueError, match="weights_samples must be a 2-D array"):
        impl.smaa_topsis(x, np.ones(2), [False, False], k=1)
    with pytest.raises(ValueError, match="finite and >= 0"):
        impl.smaa_topsis(x, -w, [False, False], k=1)
    with pytest.raises(ValueError, match="got row 0, all zero"):
        impl.smaa_topsis(x, np.zeros((1, 2)), [False, False], k=1)
    with pytest.raises(ValueError, match="benefit must have one flag"):
        impl.smaa_topsis(x, w, [False], k=1)
    with pytest.raises(ValueError, match="candidates must be row indices"):
        impl.smaa_topsis(x, w, [False, False], k=1, candidates=[0, 3])
    with pytest.raises(ValueError, match="must not repeat"):
        impl.smaa_topsis(x, w, [False, False], k=1, candidates=[1, 1])
    with pytest.raises(ValueError, match="k must be"):
        impl.smaa_topsis(x, w, [False, False], k=-1)
    with pytest.raises(ValueError, match="norm must be"):
        impl.smaa_topsis(x, w, [False, False], k=1, norm="l1")
    with pytest.raises(ValueError, match="finite"):
        impl.smaa_topsis(np.array([[np.nan, 1.0]]), w, [False, False], k=1)


def test_cuda_matches_reference_under_simulator(cuda_impl):
    rng = np.random.default_rng(11)
    cases = [(0, 2), (1, 1), (9, 3), (20, 2)]
    for i, (n, m) in enumerate(cases):
        x = make_input(n, m, "int", i)
        w = _weights(6, m, i)
        b = rng.random(m) < 0.5
        cand = None if i % 2 == 0 else np.arange(n)[::2]
        want = ref.smaa_topsis(x, w, b, k=2, candidates=cand)
        # a tiny batch forces several batches of samples
        got = cuda_impl.smaa_topsis(x, w, b, k=2, candidates=cand, batch_bytes=12 * max(n, 1) * 4)
        _same(got, want)


@pytest.mark.parametrize("norm", ["vector", "minmax"])
@pytest.mark.parametrize("kind", ["int", "dup", "float"])
def test_whole_table_stats_rank_candidate_rows_as_the_whole_table(norm, kind):
    # what the Dask driver does: SMAA on the gathered candidate rows, normalized by the
    # stats of the whole table
    rng = np.random.default_rng(5)
    for seed in range(6):
        n, m = int(rng.integers(1, 90)), int(rng.integers(1, 5))
        x = make_input(n, m, kind, seed)
        w = _weights(30, m, seed)
        b = rng.random(m) < 0.5
        cand = np.sort(rng.permutation(n)[: rng.integers(1, n + 1)])
        whole = ref.topsis_stats(x)
        want = ref.smaa_topsis(x, w, b, k=3, norm=norm, candidates=cand)
        for impl in (ref, cpu):
            _same(impl.smaa_topsis(x[cand], w, b, k=3, norm=norm, stats=whole), want)


def test_stats_merged_over_partitions_are_accepted():
    x = make_input(60, 3, "float", 2)
    w = _weights(20, 3, 2)
    merged = TopsisStats.merge([cpu.topsis_stats(x[:25]), cpu.topsis_stats(x[25:])])
    cand = np.arange(0, 60, 3)
    got = cpu.smaa_topsis(x[cand], w, [False] * 3, k=2, stats=merged)
    want = ref.smaa_topsis(x, w, [False] * 3, k=2, candidates=cand)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("impl", [ref, cpu])
def test_stats_of_another_table_are_refused(impl):
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    w = _weights(3, 2, 0)
    with pytest.raises(ValueError, match="matrix column 1 has values outside"):
        impl.smaa_topsis(x, w, [False, False], k=1, stats=ref.topsis_stats(x[:, ::-1] - 1))
    with pytest.raises(ValueError, match="stats must describe 2 columns"):
        impl.smaa_topsis(x, w, [False, False], k=1, stats=ref.topsis_stats(x[:, :1]))
    with pytest.raises(ValueError, match="stats must be a TopsisStats"):
        impl.smaa_topsis(x, w, [False, False], k=1, stats=(1.0, 2.0))


@pytest.mark.parametrize("impl", [ref, cpu])
@pytest.mark.parametrize("scale", [1e-170, 1e160, 1e300])
def test_a_column_of_huge_or_tiny_values_keeps_its_weight(impl, scale):
    # the plain sum of squares under- or overflows here; the scaled norm does not, so the
    # column still decides the order when it holds all the weight
    # (a dropped column would leave every row tied, and the tie-break picks row 0)
    x = np.array([[1.0, 3.0], [2.0, 2.0], [3.0, 1.0]])
    x[:, 1] *= scale
    for norm in ("vector", "minmax"):
        top1 = impl.smaa_topsis(x, [[0.0, 1.0]], [False, False], k=1, norm=norm)[0]
        assert top1.tolist() == [0, 0, 1]


def test_cuda_uses_whole_table_stats_under_simulator(cuda_impl):
    from numba import cuda

    x = make_input(24, 3, "int", 4)
    w = _weights(5, 3, 4)
    b = np.array([False, True, False])
    cand = np.arange(0, 24, 4)
    want = ref.smaa_topsis(x, w, b, k=2, candidates=cand)
    whole = ref.topsis_stats(x)
    for src in (x[cand], cuda.to_device(np.ascontiguousarray(x[cand]))):
        _same(cuda_impl.smaa_topsis(src, w, b, k=2, stats=whole), want)
