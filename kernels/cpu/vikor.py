"""VIKOR on the CPU (Numba): ``S`` and ``R`` in one pass over the rows, then ``Q``.

Contracts: :func:`gpurank.kernels.reference.vikor`, ``vikor_sr`` and ``vikor_from_sr``.
The column statistics are TOPSIS's (:func:`.topsis.topsis_stats`); each column is mapped
with TOPSIS's overflow-safe min-max map (:func:`gpurank.kernels._topsis_stats.score_params`),
so ``w_j (x - f*_j) / (f-_j - f*_j)`` is formed in units of the column's scale and nothing
overflows whatever the magnitude of the column.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .. import _topsis_stats
from .._validate import check_costs, check_criteria_args, check_stats
from .._vikor_stats import VikorStats, check_q_args, check_v, q_coefficients
from .topsis import topsis_stats

__all__ = ["vikor", "vikor_sr", "vikor_from_sr"]

#: Below this many rows the passes run serially (as TOPSIS's ``PAR_MIN``: waking the thread
#: pool costs more than it saves on small inputs).
PAR_MIN = 400_000


def vikor_sr(matrix, stats, weights, benefit):
    """VIKOR's ``S`` and ``R`` of the rows of ``matrix`` against the whole table's ``stats``.

    Parameters
    ----------
    matrix, stats, weights, benefit
        As :func:`gpurank.kernels.reference.vikor_sr`.

    Returns
    -------
    s, r : ndarray of float64, shape (n,)

    Notes
    -----
    One row loop: per column the mapped value ``(x * pre - offset) * mul`` and its distance
    to the ideal end, summed (``S``) and maximized (``R``). O(n m) time, O(n) memory.

    Examples
    --------
    >>> x = np.array([[1.0, 3.0], [3.0, 1.0], [2.0, 2.0]])
    >>> vikor_sr(x, topsis_stats(x), [1, 1], [False, False])
    (array([0.5, 0.5, 0.5]), array([0.5 , 0.5 , 0.25]))
    """
    x = check_costs(matrix, name="matrix")
    n, m = x.shape
    w, b = check_criteria_args(m, weights, benefit, "minmax")
    check_stats(stats, m, n)
    s = np.zeros(n)
    r = np.zeros(n)
    if n == 0:
        return s, r
    pre, offset, mul, ideal, _ = _topsis_stats.score_params(stats, w, b, "minmax")
    fn = _sr_par if n >= PAR_MIN else _sr_ser
    fn(x, pre, offset, mul, ideal, s, r)
    return s, r


def vikor_from_sr(s, r, stats, *, v=0.5):
    """VIKOR's ``Q`` from ``S``, ``R`` and their extremes over the whole table.

    Parameters
    ----------
    s, r, stats, v
        As :func:`gpurank.kernels.reference.vikor_from_sr`.

    Returns
    -------
    ndarray of float64, shape (n,)

    Examples
    --------
    >>> s, r = np.array([0.5, 0.5, 0.5]), np.array([0.5, 0.5, 0.25])
    >>> vikor_from_sr(s, r, VikorStats.of(s, r))
    array([0.5, 0.5, 0. ])
    """
    s = np.ascontiguousarray(s, dtype=np.float64).reshape(-1)
    r = np.ascontiguousarray(r, dtype=np.float64).reshape(-1)
    v = check_q_args(s.shape[0], r.shape[0], stats, v)
    a_s, a_r = q_coefficients(stats, v)
    return _q(s, r, stats.s_lo, stats.r_lo, a_s, a_r)


def vikor(matrix, weights, benefit, *, v=0.5):
    """VIKOR's compromise ``Q`` ([Opricovic2004]); lower is better.

    Parameters
    ----------
    matrix, weights, benefit, v
        As :func:`gpurank.kernels.reference.vikor`.

    Returns
    -------
    ndarray of float64, shape (n,)

    Notes
    -----
    Three passes: the column statistics, ``S`` and ``R``, then ``Q``. O(n m) time.

    Examples
    --------
    >>> vikor(np.array([[1.0, 3.0], [3.0, 1.0], [2.0, 2.0]]), [1, 1], [False, False])
    array([0.5, 0.5, 0. ])
    """
    v = check_v(v)
    x = check_costs(matrix, name="matrix")
    s, r = vikor_sr(x, topsis_stats(x), weights, benefit)
    return vikor_from_sr(s, r, VikorStats.of(s, r), v=v)


def _sr(x, pre, offset, mul, ideal, s, r):
    """``S`` and ``R`` of every row of ``x`` into ``s`` and ``r``."""
    n, m = x.shape
    for i in prange(n):
        acc = 0.0
        worst = 0.0
        for k in range(m):
            d = abs((np.float64(x[i, k]) * pre[k] - offset[k]) * mul[k] - ideal[k])
            acc += d
            worst = max(worst, d)
        s[i] = acc
        r[i] = worst


_sr_ser = njit(cache=True, nogil=True)(_sr)
_sr_par = njit(cache=True, nogil=True, parallel=True)(_sr)


@njit(cache=True, nogil=True)
def _q(s, r, s_lo, r_lo, a_s, a_r):
    q = np.empty(s.shape[0])
    for i in range(s.shape[0]):
        q[i] = (s[i] - s_lo) * a_s + (r[i] - r_lo) * a_r
    return q
