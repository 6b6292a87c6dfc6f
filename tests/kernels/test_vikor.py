"""VIKOR in three phases (column statistics, S and R, then Q): every implementation against
the reference, the reference against pymcdm's VIKOR, the statistics of partitions merged,
and the defined answers where pymcdm divides by zero (one row, S or R constant)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from gpurank.kernels import TopsisStats, cpu
from gpurank.kernels import reference as ref
from gpurank.kernels._vikor_stats import VikorStats
from gpurank.kernels.cpu.vikor import PAR_MIN
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kernel_helpers import SETTINGS, check_permutation, make_input, small_cases

TOL = {"rtol": 1e-12, "atol": 1e-12}


def _args(m, wseed):
    rng = np.random.default_rng(wseed)
    w = rng.uniform(0.0, 2.0, m)
    w[0] += 0.1
    return w, rng.random(m) < 0.5


@SETTINGS
@given(small_cases, st.integers(0, 2**31 - 1), st.sampled_from([0.0, 0.25, 0.5, 1.0]))
def test_vikor_matches_reference(case, wseed, v):
    n, m, kind, seed, dtype = case
    x = make_input(n, m, kind, seed, dtype)
    w, b = _args(m, wseed)
    before = x.copy()
    got = cpu.vikor(x, w, b, v=v)
    want = ref.vikor(x, w, b, v=v)
    assert got.dtype == np.float64 and got.shape == (n,)
    np.testing.assert_allclose(got, want, **TOL)
    assert ((got >= -1e-12) & (got <= 1 + 1e-12)).all()
    np.testing.assert_array_equal(x, before)
    for impl in (cpu, ref):  # the phases composed are vikor itself, to the bit
        s, r = impl.vikor_sr(x, impl.topsis_stats(x), w, b)
        np.testing.assert_array_equal(impl.vikor_from_sr(s, r, VikorStats.of(s, r), v=v),
                                      impl.vikor(x, w, b, v=v))


@SETTINGS
@given(small_cases, st.integers(0, 2**31))
def test_vikor_permutes_with_its_rows(case, pseed):
    m = case[1]
    w, b = _args(m, 3)
    check_permutation(lambda c: cpu.vikor(c, w, b), case, pseed)


def _pymcdm_q(x, w, b, v):
    from pymcdm.methods import VIKOR

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pymcdm warns of dominant rows, and divides by 0
        return VIKOR(v=v)(x.astype(np.float64), w / w.sum(), np.where(b, 1, -1))


@pytest.mark.parametrize("v", [0.0, 0.3, 0.5, 1.0])
@pytest.mark.parametrize("kind", ["float", "int", "dup", "anti"])
def test_vikor_equals_pymcdm(kind, v):
    """pymcdm's VIKOR (types 1 = profit, -1 = cost; weights summing to 1; Q lower = better)
    on random inputs with ties and duplicated rows; rows where pymcdm is undefined (a
    constant column, S or R constant) are the next tests' business."""
    pytest.importorskip("pymcdm")
    worst = 0.0
    for seed in range(25):
        rng = np.random.default_rng(seed)
        n, m = int(rng.integers(3, 60)), int(rng.integers(2, 6))
        x = make_input(n, m, kind, seed)
        if (x.min(axis=0) == x.max(axis=0)).any():
            continue  # pymcdm refuses a constant column
        w, b = _args(m, seed)
        want = _pymcdm_q(x, w, b, v)
        if not np.isfinite(want).all():
            continue  # S or R constant: pymcdm divides by zero
        for impl in (ref, cpu):
            got = impl.vikor(x, w, b, v=v)
            np.testing.assert_allclose(got, want, **TOL)
            worst = max(worst, float(np.abs(got - want).max()))
    assert worst < 1e-12


def test_vikor_defined_where_pymcdm_is_not():
    # one row: S and R are constant, every term is 0
    np.testing.assert_array_equal(cpu.vikor([[3.0, 4.0]], [1, 1], [False, True]), [0.0])
    assert cpu.vikor(np.zeros((0, 3)), [1, 1, 1], [False] * 3).shape == (0,)
    # S constant (pymcdm: NaN): Q is the regret term alone
    x = np.array([[1.0, 3.0], [3.0, 1.0], [2.0, 2.0]])
    for impl in (ref, cpu):
        np.testing.assert_array_equal(impl.vikor(x, [1, 1], [False, False]), [0.5, 0.5, 0.0])
    # a constant column separates nothing: as if it were left out
    xc = np.column_stack([x, np.full(3, 7.0)])
    np.testing.assert_array_equal(cpu.vikor(xc, [1, 1, 5], [False, False, True]),
                                  cpu.vikor(x, [1, 1], [False, False]))
    # every row equal: every Q is 0
    np.testing.assert_array_equal(cpu.vikor(np.ones((4, 2)), [1, 1], [True, False]), np.zeros(4))


def test_vikor_of_partitions_equals_vikor_of_the_table():
    """The Dask driver's three passes: column stats merged, S and R per partition, their
    extremes merged, Q per partition."""
    x = make_input(300, 4, "dup", 5)
    w, b = _args(4, 5)
    parts = [x[:70], x[70:71], x[71:71], x[71:]]
    stats = TopsisStats.merge([cpu.topsis_stats(p) for p in parts])
    srs = [cpu.vikor_sr(p, stats, w, b) for p in parts]
    vs = VikorStats.merge([VikorStats.of(s, r) for s, r in srs])
    q = np.concatenate([cpu.vikor_from_sr(s, r, vs, v=0.4) for s, r in srs])
    np.testing.assert_array_equal(q, cpu.vikor(x, w, b, v=0.4))


def test_vikor_does_not_depend_on_the_magnitude_of_a_column():
    x = make_input(50, 3, "float", 2)
    w, b = _args(3, 2)
    big = x * np.array([2.0**600, 1.0, 2.0**-600])
    np.testing.assert_allclose(cpu.vikor(big, w, b), cpu.vikor(x, w, b), **TOL)


def test_vikor_parallel_rows_match_reference():
    x = make_input(PAR_MIN + 17, 3, "int", 7)
    w, b = _args(3, 7)
    np.testing.assert_allclose(cpu.vikor(x, w, b), ref.vikor(x, w, b), **TOL)


@pytest.mark.parametrize("impl_name", ["reference", "cpu", "cuda"])
@pytest.mark.parametrize("bad, match", [
    ({"v": 1.5}, "v must be a number in \\[0, 1\\]; got 1.5"),
    ({"v": True}, "v must be a number"),
    ({"weights": [1.0]}, "weights must have one value per column"),
    ({"matrix": [[np.nan, 1.0]]}, "matrix must be finite; row 0, column 0"),
])
def test_vikor_refuses_bad_input(request, impl_name, bad, match):
    impl = request.getfixturevalue("cuda_impl") if impl_name == "cuda" else \
        {"reference": ref, "cpu": cpu}[impl_name]
    args = {"matrix": [[1.0, 2.0], [2.0, 1.0]], "weights": [1, 1], "benefit": [False, False],
            "v": 0.5} | bad
    with pytest.raises(ValueError, match=match):
        impl.vikor(args["matrix"], args["weights"], args["benefit"], v=args["v"])


def test_stats_refused_when_wrong():
    s = np.array([0.1, 0.2])
    with pytest.raises(ValueError, match="stats must be a VikorStats"):
        cpu.vikor_from_sr(s, s, object())
    with pytest.raises(ValueError, match="s and r must have the same length"):
        cpu.vikor_from_sr(s, s[:1], VikorStats.of(s, s))
    with pytest.raises(ValueError, match="at least one VikorStats"):
        VikorStats.merge([])


@settings(SETTINGS, max_examples=12,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # cuda_impl: a module
@given(small_cases, st.integers(0, 2**31 - 1))
def test_cuda_vikor_matches_cpu(cuda_impl, case, wseed):
    """Under the simulator (tiny inputs): the same Q as the CPU kernel, host or device input,
    and the phases composed."""
    n, m, kind, seed, dtype = case
    if n > 40:
        return
    x = make_input(n, m, kind, seed, dtype)
    w, b = _args(m, wseed)
    want = cpu.vikor(x, w, b)
    np.testing.assert_allclose(cuda_impl.vikor(x, w, b), want, **TOL)
    from numba import cuda

    np.testing.assert_allclose(cuda_impl.vikor(cuda.to_device(x), w, b), want, **TOL)
    s, r = cuda_impl.vikor_sr(x, cuda_impl.topsis_stats(x), w, b)
    s0, r0 = cpu.vikor_sr(x, cpu.topsis_stats(x), w, b)
    np.testing.assert_allclose(s, s0, **TOL)
    np.testing.assert_allclose(r, r0, **TOL)
    np.testing.assert_allclose(cuda_impl.vikor_from_sr(s, r, VikorStats.of(s, r)), want, **TOL)
