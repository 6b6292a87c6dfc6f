"""Input validation: every implementation rejects bad input with the same pinned message,
before any kernel runs."""

from __future__ import annotations

import re

import numpy as np
import pytest

NAMES = ("pareto_front", "pareto_rank", "domination_count", "dominated_count")


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_costs_are_rejected_naming_row_and_column(host_impl, name, bad):
    c = np.zeros((4, 3))
    c[2, 1] = bad
    msg = f"costs must be finite; row 2, column 1 is {bad!r}"
    with pytest.raises(ValueError, match=re.escape(msg)):
        getattr(host_impl, name)(c)


def test_topsis_rejects_nan_naming_row_and_column(host_impl):
    x = np.ones((3, 2))
    x[1, 0] = np.nan
    with pytest.raises(ValueError, match=re.escape("matrix must be finite; row 1, column 0 is nan")):
        host_impl.topsis(x, [1, 1], [True, False])


@pytest.mark.parametrize(
    "weights, benefit, norm, msg",
    [
        ([1.0], [True, True], "vector", "weights must have one value per column (2); got 1"),
        ([1.0, 1.0], [True], "vector", "benefit must have one flag per column (2); got 1"),
        ([1.0, -1.0], [True, True], "vector", "weights must be finite and >= 0"),
        ([0.0, 0.0], [True, True], "vector", "weights must not all be zero"),
        ([1.0, 1.0], [True, True], "l2", "norm must be 'vector' or 'minmax'; got 'l2'"),
    ],
)
def test_topsis_argument_errors(host_impl, weights, benefit, norm, msg):
    with pytest.raises(ValueError, match=re.escape(msg)):
        host_impl.topsis(np.ones((3, 2)), weights, benefit, norm=norm)


@pytest.mark.parametrize(
    "out, msg",
    [
        (np.zeros(3, dtype=np.float32), "out must be a float64 array of shape (3,); got float32"),
        (np.zeros(4), "out must be a float64 array of shape (3,); got float64 with shape (4,)"),
        (np.zeros((3, 1)), "out must be a float64 array of shape (3,)"),
        (np.zeros(6)[::2], "out must be C-contiguous and writeable"),
        ([0.0, 0.0, 0.0], "out must be a NumPy array; got list"),
    ],
)
def test_topsis_rejects_bad_out(host_impl, out, msg):
    with pytest.raises(ValueError, match=re.escape(msg)):
        host_impl.topsis(np.ones((3, 2)), [1, 1], [True, False], out=out)


def test_topsis_rejects_read_only_or_overlapping_out(host_impl):
    ro = np.zeros(3)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="out must be C-contiguous and writeable"):
        host_impl.topsis(np.ones((3, 2)), [1, 1], [True, False], out=ro)
    x = np.arange(8.0).reshape(4, 2)
    with pytest.raises(ValueError, match="out must not share memory with matrix"):
        host_impl.topsis(x, [1, 1], [True, False], out=x.reshape(-1)[:4])  # a view of x


def test_costs_must_be_2d_and_real(host_impl):
    with pytest.raises(ValueError, match=re.escape("costs must be a 2-D array of shape (n, m)")):
        host_impl.pareto_front(np.zeros(3))
    with pytest.raises(ValueError, match="costs must be float32 or float64; got dtype complex128"):
        host_impl.pareto_front(np.zeros((3, 2), dtype=complex))


def test_integer_and_fortran_inputs_are_accepted(host_impl):
    c = np.asfortranarray(np.array([[1, 2], [2, 1], [2, 2]]))
    assert host_impl.pareto_front(c).tolist() == [True, True, False]


@pytest.mark.parametrize("k", [-1, 1.5, True, "3"])
def test_top_k_rejects_bad_k(host_impl, k):
    with pytest.raises(ValueError, match="k must be a non-negative integer"):
        host_impl.top_k(np.arange(3.0), k)


def test_top_k_rejects_nan_scores(host_impl):
    with pytest.raises(ValueError, match=re.escape("scores must not contain NaN; element 1 is nan")):
        host_impl.top_k(np.array([0.1, np.nan]), 1)


@pytest.mark.parametrize("cap", [-1, 2.0, True])
def test_bad_cap_is_rejected(host_impl, cap):
    with pytest.raises(ValueError, match="cap must be None or a non-negative integer"):
        host_impl.domination_count(np.zeros((2, 2)), cap=cap)
