"""Property tests: the fast CPU kernels against the NumPy oracle (reference.py).

Small n (<= 600) compares with the reference itself; up to n = 2000 compares with a chunked
O(n^2) NumPy check written here. Inputs include integer ties, duplicated rows, constant
columns, both float dtypes, n = 0 and n = 1, and permuted rows.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpurank.kernels import cpu
from gpurank.kernels import reference as ref

from kernel_helpers import KINDS, chunked_counts, make_input, ranks_from_counts_check

SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

small_cases = st.tuples(
    st.integers(0, 600) | st.sampled_from([0, 1, 2, 17]),
    st.integers(1, 8),
    st.sampled_from(KINDS),
    st.integers(0, 2**31 - 1),
    st.sampled_from([np.float64, np.float32]),
)

large_cases = st.tuples(
    st.integers(600, 2000),
    st.integers(1, 8),
    st.sampled_from(KINDS),
    st.integers(0, 2**31 - 1),
    st.sampled_from([np.float64, np.float32]),
)

PAIRWISE = ("pareto_front", "pareto_rank", "domination_count", "dominated_count")


@SETTINGS
@given(small_cases)
def test_cpu_matches_reference(case):
    n, m, kind, seed, dtype = case
    c = make_input(n, m, kind, seed, dtype)
    before = c.copy()
    for name in PAIRWISE:
        got = getattr(cpu, name)(c)
        want = getattr(ref, name)(c)
        assert got.dtype == want.dtype, name
        assert got.shape == (n,), name
        np.testing.assert_array_equal(got, want, err_msg=f"{name} n={n} m={m} {kind}")
    for cap in (0, 1, 3):
        np.testing.assert_array_equal(
            cpu.domination_count(c, cap=cap), ref.domination_count(c, cap=cap)
        )
        np.testing.assert_array_equal(
            cpu.dominated_count(c, cap=cap), ref.dominated_count(c, cap=cap)
        )
    np.testing.assert_array_equal(c, before)  # never mutated


@SETTINGS
@given(large_cases)
def test_cpu_large_against_chunked_check(case):
    n, m, kind, seed, dtype = case
    c = make_input(n, m, kind, seed, dtype)
    before = c.copy()
    by, of = chunked_counts(c)
    np.testing.assert_array_equal(cpu.domination_count(c), by)
    np.testing.assert_array_equal(cpu.dominated_count(c), of)
    np.testing.assert_array_equal(cpu.domination_count(c, cap=2), np.minimum(by, 2))
    np.testing.assert_array_equal(cpu.pareto_front(c), by == 0)
    rank = cpu.pareto_rank(c)
    assert rank.dtype == np.int32
    assert ranks_from_counts_check(c, rank)
    np.testing.assert_array_equal(c, before)


@settings(max_examples=25, deadline=None)
@given(small_cases, st.integers(0, 2**31 - 1))
def test_permuting_rows_permutes_results(case, pseed):
    n, m, kind, seed, dtype = case
    c = make_input(n, m, kind, seed, dtype)
    p = np.random.default_rng(pseed).permutation(n)
    for name in PAIRWISE:
        f = getattr(cpu, name)
        np.testing.assert_array_equal(f(c)[p], f(c[p]), err_msg=name)
    w = np.ones(m)
    b = np.zeros(m, dtype=bool)
    np.testing.assert_allclose(cpu.topsis(c, w, b)[p], cpu.topsis(c[p], w, b), rtol=1e-12)


@SETTINGS
@given(
    small_cases,
    st.sampled_from(["vector", "minmax"]),
    st.integers(0, 2**31 - 1),
)
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
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    assert ((got >= 0) & (got <= 1)).all()
    np.testing.assert_array_equal(x, before)
    out = np.full(n, -1.0)
    for impl in (cpu, ref):  # into a caller's array: the same scores, no new array
        assert impl.topsis(x, w, b, norm=norm, out=out) is out
        np.testing.assert_array_equal(out, impl.topsis(x, w, b, norm=norm))


@pytest.mark.parametrize("m, dtype", [(1, np.float64), (3, np.float32), (7, np.float64)])
def test_topsis_parallel_chunks_match_reference(m, dtype):
    # above cpu._PAR_MIN rows: 64 chunks whose row counts are not multiples of the 8-row
    # lanes of pass 1, so every chunk also runs its tail loop
    n = cpu._PAR_MIN + 4097
    x = make_input(n, m, "int", 7, dtype)
    w = np.linspace(0.5, 1.5, m)
    b = np.arange(m) % 2 == 0
    for norm in ("vector", "minmax"):
        np.testing.assert_allclose(
            cpu.topsis(x, w, b, norm=norm), ref.topsis(x, w, b, norm=norm), rtol=1e-9, atol=1e-12
        )


@SETTINGS
@given(
    st.integers(0, 3000),
    st.integers(0, 3100),
    st.integers(0, 2**31 - 1),
    st.sampled_from([1, 5, 1000]),
)
def test_top_k_matches_reference(n, k, seed, levels):
    s = np.random.default_rng(seed).integers(0, levels, n) / max(levels, 1)
    got = cpu.top_k(s, k)
    want = ref.top_k(s, k)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("m", range(1, 9))
@pytest.mark.parametrize("n", [0, 1, 2])
def test_tiny_inputs(host_impl, n, m):
    c = make_input(n, m, "int", 3)
    assert host_impl.pareto_front(c).tolist() == ref.pareto_front(c).tolist()
    assert host_impl.pareto_rank(c).tolist() == ref.pareto_rank(c).tolist()
    if n == 1:
        assert host_impl.pareto_front(c).tolist() == [True]
        assert host_impl.pareto_rank(c).tolist() == [0]
        assert host_impl.domination_count(c).tolist() == [0]


def test_duplicates_of_front_rows_are_all_on_the_front(host_impl):
    c = np.array([[1.0, 2.0], [1.0, 2.0], [2.0, 1.0], [2.0, 2.0], [2.0, 2.0]])
    assert host_impl.pareto_front(c).tolist() == [True, True, True, False, False]
    assert host_impl.pareto_rank(c).tolist() == [0, 0, 0, 1, 1]
    assert host_impl.domination_count(c).tolist() == [0, 0, 0, 3, 3]
    assert host_impl.dominated_count(c).tolist() == [2, 2, 2, 0, 0]


@pytest.mark.parametrize("m", [2, 3, 4, 6])
@pytest.mark.parametrize("shape", ["anticorrelated", "realistic", "independent"])
def test_prefilter_is_exact_on_large_inputs(m, shape):
    """The pivot prefilter (scalarization and sample-front pivots, several rounds, parallel
    from 400,000 rows) against the front computed without it, with ties and duplicates."""
    from gpurank.kernels._datagen import make_costs

    c = make_costs(450_000, m, shape, seed=7)
    c = np.round(c * 64) / 64  # ties
    c = np.ascontiguousarray(np.concatenate([c, c[:1000]]))  # duplicated rows
    if m >= 4:
        c = c[:25_000]  # the no-prefilter oracle is O(n |F|) for m >= 4
    np.testing.assert_array_equal(cpu.pareto_front(c), cpu._front_of(c))


@pytest.mark.parametrize("m", [4, 6])
def test_parallel_sfs_matches_kd_tree(m):
    """The column-major SFS on its parallel path (>= 20,000 rows) and its hand-over to the
    k-d tree (small ``max_front``), with ties and duplicated front rows."""
    from gpurank.kernels._datagen import make_costs

    c = make_costs(20_500, m, "anticorrelated", seed=m)
    c = np.ascontiguousarray(np.concatenate([np.round(c * 16) / 16, c[:300]]))
    by = cpu._kd_domination_count(c, 1)  # k-d tree path, checked against the oracle above
    order, cs = cpu._topo(c)
    for max_front in (10**9, 50):
        on, finished = cpu._sfs_sorted(cs, max_front)
        if finished:
            got = np.empty(c.shape[0], dtype=bool)
            got[order] = on
            np.testing.assert_array_equal(got, by == 0)
        else:
            assert max_front == 50
    np.testing.assert_array_equal(cpu.pareto_front(c), by == 0)


@pytest.mark.parametrize("ens", ["_ens_lex", "_ens_kd"])
@pytest.mark.parametrize("m", [3, 4, 5, 6])
@pytest.mark.parametrize("shape", ["anticorrelated", "realistic", "independent"])
def test_lexicographic_ens_matches_other_algorithms(ens, m, shape):
    """Both lexicographic ENS variants (ranks, and the front-only variant) on inputs large
    enough to grow and move the per-front blocks of ``_ens_lex`` and to carry the fresh
    blocks of ``_ens_kd`` through several k-d levels, with ties and duplicated rows, in both
    dtypes, against ``partition.seeded_rank`` (CDQ for m <= 4, k-d tree beyond) and the k-d
    tree counts (independent algorithms, checked against the reference elsewhere)."""
    from gpurank.kernels import partition
    from gpurank.kernels._datagen import make_costs

    c = make_costs(6000, m, shape, seed=m)
    c = np.ascontiguousarray(np.concatenate([np.round(c * 16) / 16, c[:500], c[:200]]))
    for cc in (c, c.astype(np.float32)):
        order = cpu._order_by_key(cc, np.ascontiguousarray(cc[:, 0]))
        rank = getattr(cpu, ens)(cc, order)
        np.testing.assert_array_equal(rank, partition.seeded_rank(cc))
        np.testing.assert_array_equal(cpu.pareto_rank(cc), rank)
        front = getattr(cpu, ens)(cc, order, True) == 0
        np.testing.assert_array_equal(front, cpu._kd_domination_count(cc, 1) == 0)
        np.testing.assert_array_equal(front, rank == 0)


@pytest.mark.parametrize("m", [4, 6, 8])
def test_kd_ens_many_levels(m):
    """Fronts of thousands of members (anticorrelated rows): the k-d ENS builds levels 0 to
    4 and more, queries them, and agrees with the k-d tree ranks and counts."""
    from gpurank.kernels import partition
    from gpurank.kernels._datagen import make_costs

    c = make_costs(40_000, m, "anticorrelated", seed=11)
    c[7::7] = c[:-7:7]  # duplicated rows spread over the fronts
    order = cpu._order_by_key(c, np.ascontiguousarray(c[:, 0]))
    rank = cpu._ens_kd(c, order)
    assert np.bincount(rank).max() > 8 * cpu._KD_B  # some front reached level 3
    np.testing.assert_array_equal(rank, partition.seeded_rank(c))
    np.testing.assert_array_equal(cpu._ens_kd(c, order, True) == 0,
                                  cpu._kd_domination_count(c, 1) == 0)


@pytest.mark.parametrize("ens", ["_ens_lex", "_ens_kd"])
def test_ens_chain_of_one_row_fronts(ens):
    """A total order (every row dominates the next): as many fronts as rows, each a new
    block; the rank is the row's place in the chain."""
    t = np.random.default_rng(5).permutation(3000)
    c = np.ascontiguousarray(np.stack([t + 0.5 * k for k in range(5)], axis=1), dtype=float)
    order = cpu._order_by_key(c, np.ascontiguousarray(c[:, 0]))
    np.testing.assert_array_equal(getattr(cpu, ens)(c, order), t)
    np.testing.assert_array_equal(cpu.pareto_rank(c), t)
