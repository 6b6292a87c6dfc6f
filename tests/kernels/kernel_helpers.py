"""Shared helpers for the kernel tests: input generators and a chunked O(n^2) checker."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st


def make_input(n, m, kind, seed, dtype=np.float64):
    """Inputs with the hard cases: integer ties, duplicated rows, constant columns."""
    rng = np.random.default_rng(seed)
    if kind == "float":
        x = rng.random((n, m))
    elif kind == "int":
        x = rng.integers(0, 4, size=(n, m)).astype(np.float64)
    elif kind == "dup":
        base = rng.integers(0, 6, size=(max(1, n // 3), m)).astype(np.float64)
        x = base[rng.integers(0, base.shape[0], size=n)] if n else np.empty((0, m))
    elif kind == "const":
        x = rng.integers(0, 5, size=(n, m)).astype(np.float64)
        if m:
            x[:, rng.integers(0, m)] = 2.5
    elif kind == "anti":
        x = np.round(rng.dirichlet(np.ones(m), size=n) * 10) if m > 1 else rng.random((n, m))
    else:
        raise ValueError(kind)
    return np.ascontiguousarray(x, dtype=dtype)


KINDS = ("float", "int", "dup", "const", "anti")


def chunked_counts(c, chunk=256):
    """(domination_count, dominated_count) by a chunked O(n^2 m) NumPy check, O(chunk n m)
    memory."""
    n = c.shape[0]
    dom_by = np.zeros(n, dtype=np.int64)
    dom_of = np.zeros(n, dtype=np.int64)
    for s in range(0, n, chunk):
        a = c[s : s + chunk]  # candidate dominators
        le = np.all(a[:, None, :] <= c[None, :, :], axis=2)
        lt = np.any(a[:, None, :] < c[None, :, :], axis=2)
        d = le & lt  # d[i, j]: a[i] dominates c[j]
        dom_by += d.sum(axis=0)
        dom_of[s : s + chunk] = d.sum(axis=1)
    return dom_by, dom_of


def ranks_from_counts_check(c, rank):
    """Check a rank vector by its defining property, in O(n^2 m / chunk) chunks:
    rank[i] == 1 + max(rank of rows dominating i) (0 when none)."""
    n = c.shape[0]
    expect = np.zeros(n, dtype=np.int64)
    best = np.full(n, -1, dtype=np.int64)
    for s in range(0, n, 256):
        a = c[s : s + 256]
        d = np.all(a[:, None, :] <= c[None, :, :], axis=2) & np.any(
            a[:, None, :] < c[None, :, :], axis=2
        )
        r = np.where(d, rank[s : s + 256, None].astype(np.int64), -1)
        best = np.maximum(best, r.max(axis=0))
    expect = best + 1
    return np.array_equal(expect, rank)


#: Hypothesis settings of the property tests against the oracles.
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: (n, m, kind, seed, dtype) small enough for the O(n^2) reference (n = 0, 1, 2, 17 often).
small_cases = st.tuples(
    st.integers(0, 600) | st.sampled_from([0, 1, 2, 17]),
    st.integers(1, 8),
    st.sampled_from(KINDS),
    st.integers(0, 2**31 - 1),
    st.sampled_from([np.float64, np.float32]),
)

#: The same for the chunked O(n^2) checks.
large_cases = st.tuples(
    st.integers(600, 2000),
    st.integers(1, 8),
    st.sampled_from(KINDS),
    st.integers(0, 2**31 - 1),
    st.sampled_from([np.float64, np.float32]),
)


def check_against_reference(name, case, dtype_out, **kwargs):
    """``cpu.<name>`` equals ``reference.<name>`` on the input of a ``small_cases`` case,
    has the dtype and shape of the contract, and leaves its input alone."""
    from gpurank.kernels import cpu
    from gpurank.kernels import reference as ref

    n, m, kind, seed, dtype = case
    c = make_input(n, m, kind, seed, dtype)
    before = c.copy()
    got = getattr(cpu, name)(c, **kwargs)
    assert got.dtype == dtype_out and got.shape == (n,), name
    np.testing.assert_array_equal(got, getattr(ref, name)(c, **kwargs),
                                  err_msg=f"{name} n={n} m={m} {kind}")
    np.testing.assert_array_equal(c, before)  # never mutated


def check_permutation(fn, case, pseed, compare=np.testing.assert_array_equal):
    """Permuting the rows of the input permutes ``fn``'s per-row result."""
    n, m, kind, seed, dtype = case
    c = make_input(n, m, kind, seed, dtype)
    p = np.random.default_rng(pseed).permutation(n)
    compare(fn(c)[p], fn(c[p]))
