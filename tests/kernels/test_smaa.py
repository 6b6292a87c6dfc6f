"""SMAA over TOPSIS weights: every implementation against the reference, the pruning by
domination counts against brute force, and the CUDA kernels under the simulator and as PTX;
the same for the drawn SMAA (values drawn in their intervals), its pruning by interval
corners and its draws."""

from __future__ import annotations

import numpy as np
import pytest
from gpurank.kernels import TopsisStats, cpu
from gpurank.kernels import reference as ref
from gpurank.kernels._smaa import RowFactors, corners, draw_moves, exp2, uniforms
from gpurank.kernels.cpu import smaa as cpu_smaa
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


# -- values drawn in their intervals (model uncertainty) ----------------------------------------
def _factors(n, m, seed, *, log10=False, width=1.0):
    """Row factors with the hard cases: exact rows (1, 1), one-sided intervals, exponents
    -1, 0 and +1 (and 2 when m > 3)."""
    rng = np.random.default_rng(seed)
    kind = rng.integers(0, 4, size=n)  # exact, below only, above only, both sides
    lo = np.where((kind == 1) | (kind == 3), rng.uniform(1 / (1 + width), 1.0, n), 1.0)
    hi = np.where((kind == 2) | (kind == 3), rng.uniform(1.0, 1 + width, n), 1.0)
    e = rng.integers(-1, 2, size=m)
    if m > 3:
        e[3] = 2
    return RowFactors(lo, hi, e, seed=int(seed), log10=log10)


def _box_dominators(x, b, f):
    """How many rows dominate each row in every draw, by the definition: pessimistic corners
    (every column at its worst over the row's interval) against each row's optimistic
    corner, O(n^2 m)."""
    opt, pess = corners(np.where(b, -x, x), f, b)
    count = np.zeros(x.shape[0], dtype=np.int64)
    for q in range(x.shape[0]):
        count[q] = ((pess <= opt[q]).all(axis=1) & (pess < opt[q]).any(axis=1)).sum()
    return count


@pytest.mark.parametrize("log10", [False, True])
@pytest.mark.parametrize("kind", ["int", "dup", "const", "float"])
@pytest.mark.parametrize("n, m", [(0, 2), (1, 1), (2, 3), (17, 2), (60, 4)])
def test_drawn_cpu_matches_reference(kind, n, m, log10):
    x = make_input(n, m, kind, seed=n * 5 + m)
    if log10:
        x = np.log10(x + 1.0)
    w = _weights(25, m, seed=n + m)
    b = np.arange(m) % 2 == 1
    f = _factors(n, m, seed=n + 3, log10=log10)
    before = (x.copy(), w.copy(), f.lo.copy(), f.hi.copy())
    for norm in ("vector", "minmax"):
        for k in (1, 3):
            want = ref.smaa_topsis_drawn(x, w, b, f, k=k, norm=norm)
            got = cpu_smaa.smaa_topsis_drawn(x, w, b, f, k=k, norm=norm)
            _same(got, want)
            # the central weights are summed in sample order: bit-identical as well
            np.testing.assert_array_equal(got[4], want[4])
    for a, c in zip(before, (x, w, f.lo, f.hi)):
        np.testing.assert_array_equal(a, c)


def test_drawn_on_candidate_subsets_and_whole_table_stats():
    # candidates in any order; the Dask driver's form (candidate rows, the whole table's
    # stats and the candidates' own row ids as draw keys) draws and ranks the same
    rng = np.random.default_rng(4)
    for seed in range(8):
        n, m = int(rng.integers(1, 80)), int(rng.integers(1, 5))
        x = make_input(n, m, "dup", seed)
        w = _weights(30, m, seed)
        b = rng.random(m) < 0.5
        f = _factors(n, m, seed)
        cand = rng.permutation(n)[: rng.integers(0, n + 1)]
        want = ref.smaa_topsis_drawn(x, w, b, f, k=3, candidates=cand)
        _same(cpu_smaa.smaa_topsis_drawn(x, w, b, f, k=3, candidates=cand), want)
        rows = np.sort(cand)
        part = RowFactors(f.lo[rows], f.hi[rows], f.exponent, f.seed, rows)
        want_sorted = ref.smaa_topsis_drawn(x, w, b, f, k=3, candidates=rows)
        for impl in (ref, cpu_smaa):
            _same(impl.smaa_topsis_drawn(x[rows], w, b, part, k=3, stats=ref.topsis_stats(x)),
                  want_sorted)


@pytest.mark.parametrize("impl", [ref, cpu_smaa], ids=["reference", "cpu"])
def test_unit_factors_draw_nothing(impl):
    """Rows known exactly (factors 1) move nowhere: the counts of the undrawn SMAA, exactly
    (on values without coincidental score ties between distinct rows, which the drawn SMAA
    breaks by the weighted sum first; duplicated rows and zero weights tie in every key)."""
    rng = np.random.default_rng(0)
    for seed in range(6):
        m = 1 + seed % 4
        x = rng.random((25, m))[rng.integers(0, 25, size=70)]
        w = _weights(40, m, seed)
        b = np.arange(m) % 2 == 0
        f = RowFactors(np.ones(70), np.ones(70), np.arange(m) % 3 - 1, seed=seed,
                       log10=seed % 2 == 1)
        for norm in ("vector", "minmax"):
            want = ref.smaa_topsis(x, w, b, k=3, norm=norm)
            _same(impl.smaa_topsis_drawn(x, w, b, f, k=3, norm=norm), want)
            np.testing.assert_array_equal(impl.smaa_interval_candidates(x, b, f, k=3),
                                          np.flatnonzero(ref.domination_count(
                                              np.where(b, -x, x)) < 3))


@pytest.mark.parametrize("kind", ["int", "dup", "anti", "float"])
@pytest.mark.parametrize("n", [0, 1, 2, 9, 40, 300])
def test_interval_candidates_match_brute_force(kind, n):
    for seed in range(3):
        m = 1 + (n + seed) % 4
        x = make_input(n, m, kind, seed)
        b = np.arange(m) % 2 == seed % 2
        f = _factors(n, m, seed, log10=seed == 2, width=[0.05, 0.5, 2.0][seed])
        count = _box_dominators(x, b, f)
        for k in (0, 1, 2, 5):
            want = np.flatnonzero(count < k)
            np.testing.assert_array_equal(ref.smaa_interval_candidates(x, b, f, k=k), want)
            np.testing.assert_array_equal(cpu_smaa.smaa_interval_candidates(x, b, f, k=k), want)


def test_interval_candidates_from_partitions():
    """The recipe for a table held in partitions: each partition's corners (row by row),
    the pessimistic corners fewer than k of them dominate over the whole table, then each
    partition's optimistic corners counted against those, stopping at k."""
    rng = np.random.default_rng(21)
    for seed in range(5):
        n, m, k = 150, 2 + seed % 3, 1 + seed
        x = make_input(n, m, ["int", "dup", "float"][seed % 3], seed)
        b = np.arange(m) % 2 == 1
        f = _factors(n, m, seed, width=0.5)
        cuts = np.sort(rng.choice(np.arange(1, n), size=3, replace=False))
        parts = np.split(np.arange(n), cuts)
        corners_of = [cpu_smaa.interval_corners(
            x[p], b, RowFactors(f.lo[p], f.hi[p], f.exponent, f.seed, p)) for p in parts]
        pess = np.concatenate([c[1] for c in corners_of])
        near = pess[cpu.domination_count(pess, cap=k) < k]
        cand = np.concatenate([p[cpu_smaa.count_dominators(opt, near, cap=k) < k]
                               for p, (opt, _) in zip(parts, corners_of)])
        np.testing.assert_array_equal(cand, cpu_smaa.smaa_interval_candidates(x, b, f, k=k))


def test_count_dominators_matches_pairs():
    rng = np.random.default_rng(8)
    for seed in range(10):
        m = 1 + seed % 5
        a = make_input(int(rng.integers(0, 60)), m, "dup", seed)
        bb = make_input(int(rng.integers(0, 60)), m, "dup", seed + 100)
        full = ref.cross_domination_count(a, bb) if a.size and bb.size else np.zeros(
            a.shape[0], np.int64)
        for cap in (0, 1, 3, 100):
            np.testing.assert_array_equal(cpu_smaa.count_dominators(a, bb, cap=cap),
                                          np.minimum(full, cap))


@pytest.mark.parametrize("impl", [ref, cpu_smaa], ids=["reference", "cpu"])
@pytest.mark.parametrize("kind", ["int", "dup", "float"])
def test_pruning_by_interval_candidates_is_exact(impl, kind):
    """Rows outside the interval candidates never reach the top k in any draw: scoring only
    the candidates gives the top-1 and top-k counts and central weights of scoring all."""
    for seed in range(5):
        m = 2 + seed % 3
        n = 90
        x = make_input(n, m, kind, seed)
        b = np.zeros(m, dtype=bool)
        b[0] = seed % 2 == 1
        f = _factors(n, m, seed, log10=seed == 3, width=0.4)
        w = _weights(50, m, seed)
        for k in (1, 3):
            cand = impl.smaa_interval_candidates(x, b, f, k=k)
            full = impl.smaa_topsis_drawn(x, w, b, f, k=k)
            pruned = impl.smaa_topsis_drawn(x, w, b, f, k=k, candidates=cand)
            out = np.setdiff1d(np.arange(n), cand)
            assert (full[1][out] == 0).all()
            np.testing.assert_array_equal(pruned[0], full[0][cand])
            np.testing.assert_array_equal(pruned[1], full[1][cand])
            np.testing.assert_array_equal(pruned[4], full[4][cand])
            assert (pruned[2] <= full[2][cand]).all()


def test_drawn_rows_that_dominate_rank_first_even_with_zero_weights():
    # With all weight on column 0, rows 0 and 1 tie on the score whenever row 0 is drawn at
    # or beyond the ideal; row 1 is exact and dominates row 0's pessimistic corner in
    # column 1 only, so the drawn-row tie-break must still put it first.
    x = np.array([[1.0, 5.0], [1.0, 4.0], [3.0, 0.0]])
    f = RowFactors([0.5, 1.0, 1.0], [1.0, 1.0, 1.0], [1, 0])
    w = np.array([[1.0, 0.0]] * 20)
    top1 = ref.smaa_topsis_drawn(x, w, [False, False], f, k=1)[0]
    assert top1.sum() == 20 and top1[2] == 0
    _same(cpu_smaa.smaa_topsis_drawn(x, w, [False, False], f, k=1),
          ref.smaa_topsis_drawn(x, w, [False, False], f, k=1))


def test_draws_are_log_linear_inside_the_interval_with_the_point_at_the_median():
    n, s = 400, 500
    f = RowFactors(np.full(n, 0.5), np.full(n, 3.0), [1], seed=11)
    mv = draw_moves(f, 0, s, np.arange(n))
    assert mv.shape == (s, n) and (mv >= 0.5).all() and (mv <= 3.0).all()
    below = mv < 1
    assert abs(below.mean() - 0.5) < 0.01
    # log f is uniform on [log 0.5, 0] below the median and on [0, log 3] above it
    a = np.log(mv[below]) / np.log(0.5)
    c = np.log(mv[~below]) / np.log(3.0)
    for v in (a, c):
        grid = np.linspace(0.1, 0.9, 9)
        np.testing.assert_allclose([(v <= g).mean() for g in grid], grid, atol=0.01)
    # the same factors in log form: log10 of the multiplicative draw
    lf = RowFactors(f.lo, f.hi, [1], seed=11, log10=True)
    np.testing.assert_allclose(draw_moves(lf, 0, s, np.arange(n)), np.log10(mv), atol=1e-12)


def test_draws_depend_on_seed_sample_and_row_only():
    f = RowFactors(np.full(50, 0.8), np.full(50, 1.3), [1, -1], seed=5, row_ids=np.arange(50) * 7)
    whole = draw_moves(f, 0, 40, np.arange(50))
    # any block of samples and any subset of rows, in any order, draws the same values
    rows = np.array([31, 2, 17])
    np.testing.assert_array_equal(draw_moves(f, 13, 29, rows), whole[13:29][:, rows])
    # the key is the row id: a table holding only some rows draws what the whole one does
    part = RowFactors(f.lo[rows], f.hi[rows], f.exponent, 5, f.row_ids[rows])
    np.testing.assert_array_equal(draw_moves(part, 0, 40, np.arange(3)), whole[:, rows])
    other = RowFactors(f.lo, f.hi, f.exponent, seed=6, row_ids=f.row_ids)
    assert not np.array_equal(draw_moves(other, 0, 40, np.arange(50)), whole)
    u = uniforms(5, 0, 2000, np.arange(200))
    assert abs(np.corrcoef(u[:, :-1].ravel(), u[:, 1:].ravel())[0, 1]) < 0.01  # rows
    assert abs(np.corrcoef(u[:-1].ravel(), u[1:].ravel())[0, 1]) < 0.01  # samples


def test_drawn_counts_do_not_depend_on_threads():
    import numba

    x = make_input(120, 3, "dup", 3)
    w = _weights(70, 3, 3)
    f = _factors(120, 3, 3)
    b = np.array([False, True, False])
    want = cpu_smaa.smaa_topsis_drawn(x, w, b, f, k=4)
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = cpu_smaa.smaa_topsis_drawn(x, w, b, f, k=4)
    finally:
        numba.set_num_threads(threads)
    for a, c in zip(one, want):
        np.testing.assert_array_equal(a, c)


def test_the_kernels_power_of_two_is_pow_to_the_last_bits():
    y = np.linspace(-40.0, 40.0, 100_001)
    np.testing.assert_allclose(exp2(y), 2.0**y, rtol=4.5e-16, atol=0)
    assert exp2(np.array([0.0]))[0] == 1.0  # a factor interval [1, 1] draws exactly 1


@pytest.mark.parametrize("impl", [ref, cpu_smaa], ids=["reference", "cpu"])
def test_bad_factors_are_rejected(impl):
    x = np.ones((3, 2))
    w = np.full((4, 2), 0.5)
    ok = {"lo": np.ones(3), "hi": np.ones(3), "exponent": [1, 0]}
    cases = [
        (dict(ok, lo=np.ones(2)), r"factors.lo must have one value per row \(3\); got 2"),
        (dict(ok, lo=[1.0, 1.2, 1.0]), r"0 < lo <= 1 <= hi \(finite\); row 1 has lo=1.2"),
        (dict(ok, hi=[1.0, 1.0, 0.9]), "row 2 has lo=1.0, hi=0.9"),
        (dict(ok, lo=[0.0, 1.0, 1.0]), "row 0 has lo=0.0"),
        (dict(ok, hi=[1.0, np.inf, 1.0]), "row 1 has"),
        (dict(ok, exponent=[1]), r"factors.exponent must have one value per column \(2\)"),
        (dict(ok, exponent=[0.5, 1]), r"integers in \[-4, 4\]; got \[0.5, 1.0\]"),
        (dict(ok, exponent=[5, 1]), r"integers in \[-4, 4\]"),
    ]
    for kw, msg in cases:
        with pytest.raises(ValueError, match=msg):
            impl.smaa_topsis_drawn(x, w, [False, False], RowFactors(**kw), k=1)
        with pytest.raises(ValueError, match=msg):
            impl.smaa_interval_candidates(x, [False, False], RowFactors(**kw), k=1)
    with pytest.raises(ValueError, match="factors must be a RowFactors"):
        impl.smaa_topsis_drawn(x, w, [False, False], (1.0, 1.0), k=1)
    with pytest.raises(ValueError, match=r"factors.seed must be an integer"):
        impl.smaa_topsis_drawn(x, w, [False, False], RowFactors(**ok, seed=-1), k=1)
    with pytest.raises(ValueError, match="factors move row 0, column 0 out of the float range"):
        impl.smaa_topsis_drawn(np.full((3, 2), 1e300), w, [False, False],
                               RowFactors([1e-20] * 3, [1.0] * 3, [-4, 0]), k=1)


def test_drawn_cuda_matches_reference_under_simulator(cuda_impl):
    from gpurank.kernels.cuda import smaa as cuda_smaa
    from numba import cuda

    rng = np.random.default_rng(12)
    # (n, m, log10, on the device): the simulator runs a Python thread per CUDA thread, so
    # each case costs a second
    for i, (n, m, log10, device) in enumerate([(0, 2, False, True), (1, 1, True, False),
                                               (13, 3, True, True), (13, 2, False, False)]):
        x = make_input(n, m, "int", i)
        w = _weights(4, m, i)
        b = rng.random(m) < 0.5
        f = _factors(n, m, i, log10=log10, width=0.6)
        cand = None if i % 2 == 0 else np.arange(n)[::-2]
        want = ref.smaa_topsis_drawn(x, w, b, f, k=2, candidates=cand)
        src = cuda.to_device(x) if device else x
        # a tiny batch forces several batches of samples and factor draws
        got = cuda_smaa.smaa_topsis_drawn(src, w, b, f, k=2, candidates=cand,
                                          batch_bytes=28 * max(n, 1) * 2)
        _same(got, want)
        np.testing.assert_array_equal(got[4], want[4])
        np.testing.assert_array_equal(cuda_smaa.smaa_interval_candidates(src, b, f, k=2),
                                      ref.smaa_interval_candidates(x, b, f, k=2))
    whole = ref.topsis_stats(x)
    rows = np.arange(0, 13, 3)
    part = RowFactors(f.lo[rows], f.hi[rows], f.exponent, f.seed, rows)
    _same(cuda_smaa.smaa_topsis_drawn(x[rows], w, b, part, k=2, stats=whole),
          ref.smaa_topsis_drawn(x, w, b, f, k=2, candidates=rows))


def test_drawn_kernels_round_every_product():
    """The drawn values and scores are the host's bit for bit: no fused multiply-add in the
    drawn kernels' PTX, every product rounded on its own (``tests/kernels/test_ptx.py``'s
    check, on these kernels)."""
    import os
    import subprocess
    import sys

    from test_ptx import FMA_CODE

    names = ["smaa_drawn_score", "smaa_drawn_rank", "smaa_corners"]
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    out = subprocess.run([sys.executable, "-c", FMA_CODE, ",".join(names)], check=False,
                         capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    if out.stdout.startswith("SKIP"):
        pytest.skip(f"numba-cuda toolkit (NVVM) not installed: {out.stdout.strip()}")
    counts = {line.split()[0]: line.split()[1:] for line in out.stdout.strip().splitlines()}
    assert set(counts) == set(names), out.stdout
    for name, (fma, mul) in counts.items():
        assert int(fma) == 0 and int(mul) > 0, (name, fma, mul)


def test_draw_helpers_examples():
    import doctest

    from gpurank.kernels import _smaa

    result = doctest.testmod(_smaa, extraglobs={"np": np},
                             optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
