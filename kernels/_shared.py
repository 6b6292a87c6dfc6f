"""Scalar helpers written once in plain Python and compiled by two targets.

The CPU kernels (``cpu/_sort.py``) and the CUDA schedule's host mirror (``cuda/schedule.py``)
compile them with ``numba.njit(inline="always")``, the CUDA kernels (``cuda/_launch.py``)
with ``numba.cuda.jit(device=True, inline=True)``. This module imports nothing but the
standard library, so importing it never pulls in numba.cuda.
"""

from __future__ import annotations

import math

__all__ = ["dominates", "lex_compare", "rows_equal", "distance_ratio", "nonnegative"]


def dominates(a, i, b, j, m):
    """True when row ``i`` of ``a`` dominates row ``j`` of ``b`` (minimization).

    ``a[i] <= b[j]`` in every one of the first ``m`` columns and ``<`` in at least one.
    Equal rows do not dominate each other. Exits on the first column that rules it out.
    """
    strict = False
    for k in range(m):
        x = a[i, k]
        y = b[j, k]
        if x > y:
            return False
        if x < y:
            strict = True
    return strict


def lex_compare(a, i, j, m):
    """-1, 0 or 1 as row ``i`` of ``a`` sorts before, with or after row ``j`` in
    lexicographic order of the first ``m`` columns."""
    for k in range(m):
        x = a[i, k]
        y = a[j, k]
        if x < y:
            return -1
        if x > y:
            return 1
    return 0


def rows_equal(a, i, j, m):
    """True when rows ``i`` and ``j`` of ``a`` are equal in every column."""
    for k in range(m):
        if a[i, k] != a[j, k]:
            return False
    return True


def distance_ratio(dp, dm):
    """``dp / dm``, the squared distances to the ideal and the anti-ideal: it orders rows as
    TOPSIS closeness does, lowest first (1 when both are 0, +inf when only ``dm`` is)."""
    if dm > 0:
        return dp / dm
    if dp == 0:
        return 1.0
    return math.inf


def nonnegative(x):
    """``x``, or 0.0 where it is below 0: a gap clipped at the ideal."""
    if x < 0:
        return 0.0
    return x
