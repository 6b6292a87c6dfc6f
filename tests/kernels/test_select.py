"""top_k against the reference: ties by lower index, k beyond n, many tied levels."""

from __future__ import annotations

import numpy as np
from gpurank.kernels import cpu
from gpurank.kernels import reference as ref
from hypothesis import given
from hypothesis import strategies as st
from kernel_helpers import SETTINGS


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
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, ref.top_k(s, k))


def test_ties_go_to_the_lower_index(host_impl):
    assert host_impl.top_k(np.array([0.5, 0.9, 0.5, 0.1, 0.9]), 3).tolist() == [1, 4, 0]
