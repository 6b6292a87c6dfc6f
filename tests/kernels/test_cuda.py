"""CUDA kernels against the reference: under the Numba CUDA simulator (set by
tests/conftest.py) at small n, or on a real device with GPURANK_REAL_GPU=1 (larger n)."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest
from gpurank.kernels import cpu
from gpurank.kernels import reference as ref
from hypothesis import given, settings
from hypothesis import strategies as st
from kernel_helpers import KINDS, make_input


@pytest.fixture
def cuda_device(cuda_impl):
    from gpurank.kernels.cuda import device

    return device

REAL = os.environ.get("GPURANK_REAL_GPU") == "1"
MAX_N = 3000 if REAL else 64  # the simulator costs ~100 us per thread per barrier
NAMES = ("pareto_front", "pareto_rank", "domination_count", "dominated_count")


@settings(max_examples=40 if REAL else 4, deadline=None)
@given(
    st.integers(0, MAX_N),
    st.integers(1, 8),
    st.sampled_from(KINDS),
    st.integers(0, 2**31 - 1),
    st.sampled_from([np.float64, np.float32]),
)
def test_cuda_matches_reference(cuda_impl, n, m, kind, seed, dtype):
    c = make_input(n, m, kind, seed, dtype)
    before = c.copy()
    oracle = ref if n <= 600 else cpu
    for name in NAMES:
        got = getattr(cuda_impl, name)(c)
        want = getattr(oracle, name)(c)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want, err_msg=name)
    np.testing.assert_array_equal(
        cuda_impl.domination_count(c, cap=2), oracle.domination_count(c, cap=2)
    )
    np.testing.assert_array_equal(
        cuda_impl.dominated_count(c, cap=2), oracle.dominated_count(c, cap=2)
    )
    np.testing.assert_array_equal(cuda_impl.pareto_rank(c, depth=2), oracle.pareto_rank(c, depth=2))
    np.testing.assert_array_equal(c, before)


@pytest.mark.parametrize("norm", ["vector", "minmax"])
@pytest.mark.parametrize("n, m", [(0, 3), (1, 2), (97, 4), (200, 6)])
def test_cuda_topsis_matches_reference(cuda_impl, norm, n, m):
    x = make_input(n, m, "int", n + m)
    w = np.linspace(0.5, 2.0, m)
    b = np.arange(m) % 2 == 0
    want = ref.topsis(x, w, b, norm=norm)
    np.testing.assert_allclose(cuda_impl.topsis(x, w, b, norm=norm), want, rtol=1e-9, atol=1e-12)
    out = np.full(n, -1.0)
    assert cuda_impl.topsis(x, w, b, norm=norm, out=out) is out
    np.testing.assert_allclose(out, want, rtol=1e-9, atol=1e-12)


def test_cuda_topsis_into_device_out(cuda_device):
    from numba import cuda

    x = make_input(50, 3, "int", 3)
    w, b = np.ones(3), np.array([True, False, True])
    dout = cuda.to_device(np.full(50, -1.0))
    got = cuda_device.topsis_device(x, w, b, out=dout)
    np.testing.assert_allclose(got.copy_to_host(), ref.topsis(x, w, b), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(dout.copy_to_host(), ref.topsis(x, w, b), rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match=re.escape("out must be a C-contiguous float64 device "
                                                   "array of shape (50,); got float32")):
        cuda_device.topsis_device(x, w, b, out=cuda.to_device(np.zeros(50, np.float32)))
    with pytest.raises(ValueError, match="out must be a device array; got ndarray"):
        cuda_device.topsis_device(x, w, b, out=np.zeros(50))
    s = ref.topsis_stats(x)
    dout2 = cuda.to_device(np.full(50, -1.0))
    assert cuda_device.topsis_from_stats_device(x, s, w, b, out=dout2) is dout2
    np.testing.assert_allclose(dout2.copy_to_host(), ref.topsis_from_stats(x, s, w, b),
                               rtol=1e-9, atol=1e-12)


def test_cuda_accepts_device_arrays_without_copy(cuda_impl, cuda_device):
    from numba import cuda

    c = make_input(60, 3, "dup", 5)
    d = cuda.to_device(c)
    np.testing.assert_array_equal(cuda_impl.pareto_front(d), ref.pareto_front(c))
    np.testing.assert_array_equal(cuda_device.domination_count_device(d).copy_to_host(),
                                  ref.domination_count(c))
    np.testing.assert_array_equal(cuda_device.dominated_count_device(d).copy_to_host(),
                                  ref.dominated_count(c))
    np.testing.assert_array_equal(cuda_device.pareto_front_device(d).copy_to_host() == 0,
                                  ref.pareto_front(c))
    f = cuda.to_device(np.asfortranarray(c))  # cuDF's to_cupy() layout
    np.testing.assert_array_equal(cuda_impl.pareto_rank(f), ref.pareto_rank(c))
    w, b = np.ones(3), np.array([True, False, True])
    np.testing.assert_allclose(cuda_impl.topsis(f, w, b), ref.topsis(c, w, b), rtol=1e-12)
    np.testing.assert_array_equal(d.copy_to_host(), c)  # not mutated


def test_cuda_rejects_non_finite_device_input(cuda_impl):
    from numba import cuda

    c = np.zeros((10, 3))
    c[7, 2] = np.inf
    with pytest.raises(ValueError, match=re.escape("costs must be finite; row 7, column 2 is inf")):
        cuda_impl.pareto_front(cuda.to_device(c))
    with pytest.raises(ValueError, match=re.escape("costs must be finite; row 7, column 2 is inf")):
        cuda_impl.pareto_rank(c)


def test_cuda_top_k(cuda_impl):
    s = np.array([0.5, 0.9, 0.5, 0.1, 0.9])
    assert cuda_impl.top_k(s, 3).tolist() == [1, 4, 0]


# -- the tile schedule: shrunk tiles, the device's work equal to the host mirror's --------------
#
# The tile sizes are settings of gpurank.kernels.cuda.schedule; shrinking them makes
# simulator-sized inputs span many tiles and tree levels, so that every decision of the walk
# (skipped by the corners, a whole node counted at once, a leaf tested row by row, nodes cut
# by the range) runs, which the defaults only reach at GPU sizes.


def _chain(n, seed):
    """Rows on a few dozen fronts by construction: front f holds points of a staircase
    shifted by f, in random row order, with duplicates."""
    rng = np.random.default_rng(seed)
    f = rng.integers(0, 40, size=n)
    t = rng.integers(0, 4, size=n)
    x = np.stack([f + t, f + 3 - t, f + (t % 2)], axis=1).astype(np.float64)
    return x


def _steps(c, tile, reverse=False):
    """How often each walk result occurs over all target tiles (host mirror)."""
    from gpurank.kernels.cuda import _tiles, schedule

    xs, _, lo, hi, npow = schedule._prepare(c, tile)
    n, m = xs.shape
    ntiles = -(-n // tile)
    seen = {_tiles.FULL: 0, _tiles.LEAF: 0, _tiles.SKIPPED: 0}
    for t in range(ntiles):
        stack = np.zeros(64, np.int64)
        stack[0], sp = 1, 1
        first, last = (t + 1, ntiles) if reverse else (0, t)
        while True:
            code, _, _, _, sp = schedule._walk(stack, sp, lo, hi, npow + t, first, last,
                                               npow, m, reverse, schedule._NO_RANKS, -1)
            if code == _tiles.DONE:
                break
            seen[code] += 1
    return seen


CASES = [
    (0, 3, "int", 8),
    (1, 4, "float", 8),
    (2, 2, "dup", 8),
    (64, 3, "int", 8),  # many tiles: full nodes, skips and leaves
    (56, 2, "dup", 8),
    (48, 5, "anti", 8),  # large fronts
    (40, 1, "int", 8),  # one column: ranks are dense value ranks
]


@pytest.mark.parametrize("n, m, kind, tile", CASES)
def test_cuda_counts_follow_the_host_schedule(cuda_impl, monkeypatch, n, m, kind, tile):
    from gpurank.kernels.cuda import count, schedule

    monkeypatch.setattr(schedule, "COUNT_TILE", tile)
    dtype = np.float32 if n % 2 else np.float64
    c = make_input(n, m, kind, n * 7 + m, dtype)
    before = c.copy()
    for name, reverse in (("domination_count", False), ("dominated_count", True)):
        for cap in (None, 2):
            work = {}
            got = count.count_device(c, cap, reverse, work=work, scheme="tiles").copy_to_host()
            want = getattr(ref, name)(c, cap=cap)
            assert got.dtype == np.int64 and got.shape == (n,)
            np.testing.assert_array_equal(got, want, err_msg=f"{name} cap={cap}")
            if n == 0:
                continue
            cnt, tests, corners, order = schedule.row_work(c, name, tile=tile, cap=cap)
            np.testing.assert_array_equal(work["order"], order)
            np.testing.assert_array_equal(work["counts"], cnt)
            np.testing.assert_array_equal(work["tests"], tests)
            np.testing.assert_array_equal(work["corners"], corners)
            w = schedule.count_work(c, name, tile=tile, cap=cap, scheme="tiles")
            assert (w.pair_tests, w.pairs_decided_by_corners) == (tests.sum(), corners.sum())
            if cap is None:  # every ordered pair exactly once
                assert w.pair_tests + w.pairs_decided_by_corners == n * (n - 1) // 2
    np.testing.assert_array_equal(cuda_impl.pareto_front(c), ref.pareto_front(c))
    np.testing.assert_array_equal(c, before)


@pytest.mark.parametrize("n, m, kind, tile", CASES)
def test_cuda_pareto_rank_follows_the_host_schedule(cuda_impl, monkeypatch, n, m, kind, tile):
    from gpurank.kernels.cuda import rank, schedule

    monkeypatch.setattr(schedule, "RANK_TILE", tile)
    c = make_input(n, m, kind, n * 7 + m)
    before = c.copy()
    work = {}
    got = rank.rank_device(c, work=work).copy_to_host()
    assert got.dtype == np.int32 and got.shape == (n,)
    np.testing.assert_array_equal(got, ref.pareto_rank(c))
    if n:
        _, tests, corners, order = schedule.row_work(c, "pareto_rank", tile=tile)
        np.testing.assert_array_equal(work["order"], order)
        np.testing.assert_array_equal(work["tests"], tests)
        np.testing.assert_array_equal(work["corners"], corners)
        w = schedule.count_work(c, "pareto_rank", tile=tile)
        assert (w.pair_tests, w.pairs_decided_by_corners) == (tests.sum(), corners.sum())
        # one step per front, each as wide as the table: O(fronts + log n) launches
        fronts = int(ref.pareto_rank(c).max()) + 1
        assert work["fronts"] == fronts
        log_n = int(np.ceil(np.log2(n))) if n > 1 else 0
        assert work["launches"] == rank.launch_count(n, fronts, tile=tile) + 2
        assert work["launches"] <= 3 * fronts + 2 * log_n + 12
    for depth in (1, 3):
        np.testing.assert_array_equal(cuda_impl.pareto_rank(c, depth=depth),
                                      ref.pareto_rank(c, depth=depth))
    np.testing.assert_array_equal(c, before)


def test_shrunk_tiles_reach_every_decision():
    """The inputs above take every branch of the walk at their tile sizes, in both
    directions (anticorrelated rows have no node that dominates a whole tile)."""
    for reverse in (False, True):
        total = {}
        for n, m, kind, tile in CASES:
            for code, k in _steps(make_input(n, m, kind, n * 7 + m), tile, reverse).items():
                total[code] = total.get(code, 0) + k
        assert min(total.values()) > 0, (reverse, total)


def test_schedule_order_is_a_linear_extension_and_matches_the_device(cuda_impl):
    """Every dominator sorts before the rows it dominates; the device sorts as the host."""
    from gpurank.kernels.cuda import _tree, schedule
    from numba import cuda

    for kind in ("int", "dup", "anti", "float"):
        c = make_input(80, 4, kind, 11)
        order, _ = schedule.sorted_order(c)
        pos = np.empty(80, np.int64)
        pos[order] = np.arange(80)
        d = ref.dominance_matrix(c)  # d[a, b]: a dominates b
        a, b = np.nonzero(d)
        assert (pos[a] < pos[b]).all(), kind
        np.testing.assert_array_equal(_tree.sort_rows(cuda.to_device(c)).copy_to_host(), order)


def test_cuda_pareto_rank_many_fronts_ties_and_permutations(cuda_impl, monkeypatch):
    from gpurank.kernels.cuda import schedule

    monkeypatch.setattr(schedule, "RANK_TILE", 8)
    c = _chain(120, 3)
    want = ref.pareto_rank(c)
    assert want.max() >= 30  # many fronts
    np.testing.assert_array_equal(cuda_impl.pareto_rank(c), want)
    perm = np.random.default_rng(4).permutation(c.shape[0])
    np.testing.assert_array_equal(cuda_impl.pareto_rank(c[perm]), want[perm])
    # a total order: every row on its own front, given in the worst order (last front first)
    line = np.repeat(np.arange(40, dtype=np.float64)[::-1, None], 2, axis=1)
    np.testing.assert_array_equal(cuda_impl.pareto_rank(line), np.arange(40)[::-1])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cuda_pareto_rank_device_inputs(cuda_device, monkeypatch, dtype):
    from gpurank.kernels.cuda import schedule
    from numba import cuda

    monkeypatch.setattr(schedule, "RANK_TILE", 24)
    c = make_input(90, 3, "dup", 9, dtype)
    want = ref.pareto_rank(c)
    for d in (cuda.to_device(c), cuda.to_device(np.asfortranarray(c))):
        r = cuda_device.pareto_rank_device(d)
        assert r.dtype == np.int32
        np.testing.assert_array_equal(r.copy_to_host(), want)
        np.testing.assert_array_equal(d.copy_to_host(), c)  # not mutated
    np.testing.assert_array_equal(cuda_device.pareto_rank_device(c, depth=2).copy_to_host(),
                                  np.minimum(want, 2))


def test_cuda_pareto_rank_rejects_bad_input(cuda_impl):
    from numba import cuda

    c = np.zeros((6, 2))
    c[4, 1] = np.nan
    with pytest.raises(ValueError, match=re.escape("costs must be finite; row 4, column 1 is nan")):
        cuda_impl.pareto_rank(cuda.to_device(c))
    with pytest.raises(ValueError, match="at most 16 columns on the GPU; got 17"):
        cuda_impl.pareto_rank(np.zeros((3, 17)))


@pytest.mark.parametrize("n, m, kind", [(1, 2, "int"), (77, 3, "dup"), (64, 2, "int")])
def test_cuda_lexicographic_merge_sort(cuda_impl, n, m, kind):
    from gpurank.kernels.cuda import _launch
    from numba import cuda

    c = make_input(n, m, kind, n)
    order = _launch.lex_order(cuda.to_device(c)).copy_to_host()
    want = np.lexsort((np.arange(n),) + tuple(c[:, j] for j in range(m - 1, -1, -1)))
    np.testing.assert_array_equal(order, want)


class CudaAPIError(Exception):
    """Stands for numba-cuda's driver error (matched by name and code, as the driver's)."""

    def __init__(self, code, msg):
        super().__init__(code, msg)
        self.code = code


@pytest.mark.parametrize("where", ["device_array", "to_device"])
def test_cuda_out_of_device_memory_is_a_memory_error(cuda_impl, monkeypatch, where):
    """A failed device allocation surfaces as MemoryError (which the engine reports as its
    device-memory error), from every kernel's allocations; other driver errors pass."""
    from gpurank.kernels.cuda import _launch

    real = getattr(_launch.cuda, where)
    code = {"n": 2}

    def failing(*args, **kwargs):
        raise CudaAPIError(code["n"], "Call to cuMemAlloc results in CUDA_ERROR")

    monkeypatch.setattr(_launch.cuda, where, failing)
    c = make_input(5, 2, "int", 1)
    for call in (lambda: cuda_impl.domination_count(c), lambda: cuda_impl.pareto_rank(c),
                 lambda: cuda_impl.topsis(c, [1, 1], [True, False])):
        with pytest.raises(MemoryError, match=r"GPU out of memory: could not allocate \d+ "
                                              r"bytes on the device \(CudaAPIError"):
            call()
    code["n"] = 1  # CUDA_ERROR_INVALID_VALUE: not memory
    with pytest.raises(CudaAPIError):
        cuda_impl.pareto_front(c)
    monkeypatch.setattr(_launch.cuda, where, real)
    np.testing.assert_array_equal(cuda_impl.pareto_front(c), ref.pareto_front(c))


def test_no_low_occupancy_warning_reaches_the_user():
    """numba-cuda's warning for grids under 128 blocks (intended: grids sized by the data)
    is switched off once the kernels are imported (numba-cuda's own switch, and a filter of
    that message only); other performance warnings still show. In a fresh process, as a
    user's program imports gpurank."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import warnings
        import gpurank.kernels.cuda
        from numba.cuda.core import config
        from numba.cuda.core.errors import NumbaPerformanceWarning
        assert config.CUDA_LOW_OCCUPANCY_WARNINGS == 0
        with warnings.catch_warnings(record=True) as log:  # the filters as imported
            warnings.warn(NumbaPerformanceWarning(
                "Grid size 1 will likely result in GPU under-utilization due to low "
                "occupancy."))
            warnings.warn(NumbaPerformanceWarning("another performance note"))
        print([str(w.message) for w in log])
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "['another performance note']"
