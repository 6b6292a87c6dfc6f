"""CUDA kernels against the reference: under the Numba CUDA simulator (set by
tests/conftest.py) at small n, or on a real device with GPURANK_REAL_GPU=1 (larger n)."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpurank.kernels import cpu
from gpurank.kernels import reference as ref

from kernel_helpers import KINDS, make_input

REAL = os.environ.get("GPURANK_REAL_GPU") == "1"
MAX_N = 3000 if REAL else 120  # the simulator costs ~100 us per thread per barrier
NAMES = ("pareto_front", "pareto_rank", "domination_count", "dominated_count")


@settings(max_examples=40 if REAL else 6, deadline=None)
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
    np.testing.assert_array_equal(c, before)


@pytest.mark.parametrize("norm", ["vector", "minmax"])
@pytest.mark.parametrize("n, m", [(0, 3), (1, 2), (97, 4), (200, 6)])
def test_cuda_topsis_matches_reference(cuda_impl, norm, n, m):
    x = make_input(n, m, "int", n + m)
    w = np.linspace(0.5, 2.0, m)
    b = np.arange(m) % 2 == 0
    np.testing.assert_allclose(
        cuda_impl.topsis(x, w, b, norm=norm), ref.topsis(x, w, b, norm=norm), rtol=1e-9, atol=1e-12
    )


def test_cuda_accepts_device_arrays_without_copy(cuda_impl):
    from numba import cuda

    c = make_input(60, 3, "dup", 5)
    d = cuda.to_device(c)
    np.testing.assert_array_equal(cuda_impl.pareto_front(d), ref.pareto_front(c))
    np.testing.assert_array_equal(cuda_impl.domination_count_device(d).copy_to_host(),
                                  ref.domination_count(c))
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
