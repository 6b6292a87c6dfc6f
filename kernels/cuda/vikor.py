"""VIKOR on the GPU: TOPSIS's reduction, a fused S-and-R kernel, the reduction of S and R,
a Q kernel.

Contracts: :func:`gpurank.kernels.reference.vikor`, ``vikor_sr`` and ``vikor_from_sr``.
The column statistics are TOPSIS's (:func:`.topsis.topsis_stats`), mapped per column with
TOPSIS's overflow-safe min-max map (:func:`gpurank.kernels._topsis_stats.score_params`), as
the CPU kernel does. :func:`vikor` keeps the matrix, ``S`` and ``R`` on the device: only
m-vectors and four extremes cross to the host before the result. Inputs are NumPy arrays,
Numba device arrays or any object with ``__cuda_array_interface__`` (CuPy arrays), never
copied.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .. import _topsis_stats
from .._validate import check_criteria_args, check_stats
from .._vikor_stats import VikorStats, check_q_args, check_v, q_coefficients
from ._launch import (
    TILE,
    blocks,
    device_array,
    is_device,
    kernel,
    mul_rn,
    shape_of,
    to_device,
    to_device_matrix,
)
from .topsis import column_sums, topsis_stats

__all__ = ["vikor", "vikor_sr", "vikor_from_sr"]


@kernel("void({f}[:, :], float64[:], float64[:], float64[:], float64[:], float64[:, :])")
def sr_kernel(x, pre, offset, mul, ideal, sr):
    """Per row: the distances ``|(x * pre - offset) * mul - ideal|`` of its columns summed
    (``S``, into ``sr[i, 0]``) and maximized (``R``, into ``sr[i, 1]``)."""
    i = cuda.grid(1)
    if i < x.shape[0]:
        acc = 0.0
        worst = 0.0
        for k in range(x.shape[1]):
            d = abs(mul_rn(mul_rn(np.float64(x[i, k]), pre[k]) - offset[k], mul[k]) - ideal[k])
            acc += d
            worst = max(worst, d)
        sr[i, 0] = acc
        sr[i, 1] = worst


@kernel("void(float64[:], float64[:], float64, float64, float64, float64, float64[:])")
def q_kernel(s, r, s_lo, r_lo, a_s, a_r, out):
    """``Q = (S - S*) a_s + (R - R*) a_r`` per row."""
    i = cuda.grid(1)
    if i < s.shape[0]:
        out[i] = mul_rn(s[i] - s_lo, a_s) + mul_rn(r[i] - r_lo, a_r)


def _sr_device(d, stats, w, b):
    """(n, 2) device array of ``S`` and ``R`` of the validated device matrix ``d``."""
    n = d.shape[0]
    sr = device_array((n, 2), np.float64)
    if n:
        params = _topsis_stats.score_params(stats, w, b, "minmax")[:4]
        sr_kernel[blocks(n), TILE](d, *(to_device(p) for p in params), sr)
    return sr


def _q_device(s, r, stats, v):
    n = s.shape[0]
    out = device_array(n, np.float64)
    if n:
        a_s, a_r = q_coefficients(stats, v)
        q_kernel[blocks(n), TILE](s, r, stats.s_lo, stats.r_lo, a_s, a_r, out)
    return out


def vikor_sr(matrix, stats, weights, benefit):
    """VIKOR's ``S`` and ``R`` of the rows of ``matrix`` against the whole table's ``stats``.

    Parameters
    ----------
    matrix, stats, weights, benefit
        As :func:`gpurank.kernels.reference.vikor_sr`, ``matrix`` on the host or the device.

    Returns
    -------
    s, r : ndarray of float64, shape (n,), on the host

    Examples
    --------
    >>> x = np.array([[1.0, 3.0], [3.0, 1.0], [2.0, 2.0]])
    >>> vikor_sr(x, topsis_stats(x), [1, 1], [False, False])
    (array([0.5, 0.5, 0.5]), array([0.5 , 0.5 , 0.25]))
    """
    n, m = shape_of(matrix, "matrix")
    w, b = check_criteria_args(m, weights, benefit, "minmax")
    check_stats(stats, m, n)
    sr = _sr_device(to_device_matrix(matrix, name="matrix"), stats, w, b).copy_to_host()
    return np.ascontiguousarray(sr[:, 0]), np.ascontiguousarray(sr[:, 1])


def _vector(a, name):
    if is_device(a):
        d = a if hasattr(a, "copy_to_host") else cuda.as_cuda_array(a)
        if d.ndim != 1 or d.dtype != np.float64:
            raise ValueError(f"{name} must be a 1-D float64 array; got {d.dtype} with "
                             f"{d.ndim} dimensions")
        return d
    return to_device(np.ascontiguousarray(a, dtype=np.float64).reshape(-1))


def vikor_from_sr(s, r, stats, *, v=0.5):
    """VIKOR's ``Q`` from ``S``, ``R`` and their extremes over the whole table.

    Parameters
    ----------
    s, r, stats, v
        As :func:`gpurank.kernels.reference.vikor_from_sr`; ``s`` and ``r`` on the host or
        the device (float64).

    Returns
    -------
    ndarray of float64, shape (n,), on the host

    Examples
    --------
    >>> s, r = np.array([0.5, 0.5, 0.5]), np.array([0.5, 0.5, 0.25])
    >>> vikor_from_sr(s, r, VikorStats.of(s, r))
    array([0.5, 0.5, 0. ])
    """
    ds, dr = _vector(s, "s"), _vector(r, "r")
    v = check_q_args(ds.shape[0], dr.shape[0], stats, v)
    return _q_device(ds, dr, stats, v).copy_to_host()


def vikor(matrix, weights, benefit, *, v=0.5):
    """VIKOR's compromise ``Q`` ([Opricovic2004]); lower is better.

    Parameters
    ----------
    matrix, weights, benefit, v
        As :func:`gpurank.kernels.reference.vikor`, ``matrix`` on the host or the device.

    Returns
    -------
    ndarray of float64, shape (n,), on the host

    Examples
    --------
    >>> vikor(np.array([[1.0, 3.0], [3.0, 1.0], [2.0, 2.0]]), [1, 1], [False, False])
    array([0.5, 0.5, 0. ])
    """
    v = check_v(v)
    n, m = shape_of(matrix, "matrix")
    w, b = check_criteria_args(m, weights, benefit, "minmax")
    d = to_device_matrix(matrix, name="matrix")
    if n == 0:
        return np.zeros(0)
    sr = _sr_device(d, topsis_stats(d), w, b)
    lo, hi, _ = column_sums(sr)  # S*, R* and S-, R-: four numbers cross to the host
    stats = VikorStats(n, float(lo[0]), float(hi[0]), float(lo[1]), float(hi[1]))
    return _q_device(sr[:, 0], sr[:, 1], stats, v).copy_to_host()
