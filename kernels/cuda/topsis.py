"""TOPSIS on the GPU: a reduction kernel, then one fused scoring kernel.

Contracts: :func:`gpurank.kernels.reference.topsis`, ``topsis_stats`` and
``topsis_from_stats``. The first pass is a grid-stride reduction of the column min, max and
sum of squares (block partials combined on the host, m values each, in block order); the
rare columns whose plain sum of squares overflows or underflows are summed again, scaled
(:func:`gpurank.kernels._topsis_stats.from_sums`). The second pass computes, per row, the
mapped values, both distances and the closeness. O(n m), the matrix read twice, and only
m-vectors cross to the host. Inputs are NumPy arrays, Numba device arrays or any object
with ``__cuda_array_interface__`` (CuPy arrays, null-free cuDF columns), never copied.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

from .. import _topsis_stats
from .._validate import check_criteria_args, check_out, check_stats
from ._launch import (
    MAX_CRITERIA,
    TILE,
    blocks,
    device_array,
    device_out,
    kernel,
    mul_rn,
    shape_of,
    to_device,
    to_device_matrix,
)

__all__ = [
    "topsis",
    "topsis_stats",
    "topsis_from_stats",
    "topsis_device",
    "topsis_from_stats_device",
    "column_sums",
]

_MAX_STATS_BLOCKS = 1024  # blocks of the reductions (grid-stride beyond)


_SUM, _MIN, _MAX = 0, 1, 2


@cuda.jit(device=True, inline=True)
def _tree_reduce(acc, rows, tx, op):
    """Fold ``acc[k, :TILE]`` into ``acc[k, 0]`` for ``k < rows`` by halving (``op``: sum,
    min or max); every thread of the block takes part (barriers inside)."""
    cuda.syncthreads()
    s = TILE // 2
    while s > 0:
        if tx < s:
            for k in range(rows):
                a = acc[k, tx]
                b = acc[k, tx + s]
                acc[k, tx] = a + b if op == _SUM else (min(a, b) if op == _MIN else max(a, b))
        cuda.syncthreads()
        s //= 2


@kernel("void({f}[:, :], float64[:, :, :])")
def stats_kernel(x, part):
    """Per-block partial column min, max and sum of squares: part[b, 0|1|2, k]."""
    smin = cuda.shared.array((MAX_CRITERIA, TILE), dtype=np.float64)
    smax = cuda.shared.array((MAX_CRITERIA, TILE), dtype=np.float64)
    sss = cuda.shared.array((MAX_CRITERIA, TILE), dtype=np.float64)
    tx = cuda.threadIdx.x
    n = x.shape[0]
    m = x.shape[1]
    for k in range(m):
        smin[k, tx] = math.inf
        smax[k, tx] = -math.inf
        sss[k, tx] = 0.0
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < n:
        for k in range(m):
            v = np.float64(x[i, k])
            smin[k, tx] = min(smin[k, tx], v)
            smax[k, tx] = max(smax[k, tx], v)
            sss[k, tx] += mul_rn(v, v)
        i += stride
    _tree_reduce(smin, m, tx, _MIN)
    _tree_reduce(smax, m, tx, _MAX)
    _tree_reduce(sss, m, tx, _SUM)
    if tx == 0:
        b = cuda.blockIdx.x
        for k in range(m):
            part[b, 0, k] = smin[k, 0]
            part[b, 1, k] = smax[k, 0]
            part[b, 2, k] = sss[k, 0]


@kernel("void({f}[:, :], int64[:], float64[:], float64[:, :])")
def scaled_squares_kernel(x, cols, scale, part):
    """Per-block partial ``sum((x[:, cols[j]] / scale[j])^2)``: part[b, j]."""
    acc = cuda.shared.array((MAX_CRITERIA, TILE), dtype=np.float64)
    tx = cuda.threadIdx.x
    nc = cols.shape[0]
    for j in range(nc):
        acc[j, tx] = 0.0
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < x.shape[0]:
        for j in range(nc):
            v = np.float64(x[i, cols[j]]) / scale[j]
            acc[j, tx] += mul_rn(v, v)
        i += stride
    _tree_reduce(acc, nc, tx, _SUM)
    if tx == 0:
        for j in range(nc):
            part[cuda.blockIdx.x, j] = acc[j, 0]


@kernel("void({f}[:, :], float64[:], float64[:], float64[:], float64[:], float64[:], "
        "float64[:])")
def closeness_kernel(x, pre, offset, mul, ideal, anti, out):
    """Mapped values ``(x * pre - offset) * mul``, weighted distances to the ideal and
    anti-ideal points and the closeness of each row: one pass."""
    i = cuda.grid(1)
    if i < x.shape[0]:
        dp = 0.0
        dm = 0.0
        for k in range(x.shape[1]):
            v = mul_rn(mul_rn(np.float64(x[i, k]), pre[k]) - offset[k], mul[k])
            a = v - ideal[k]
            b = v - anti[k]
            dp += mul_rn(a, a)
            dm += mul_rn(b, b)
        dp = math.sqrt(dp)
        dm = math.sqrt(dm)
        tot = dp + dm
        out[i] = dm / tot if tot > 0 else 0.5


def column_sums(d):
    """Column min, max and plain sum of squares of the validated device matrix ``d`` (n >=
    1): host float64 m-vectors, the block partials combined in block order."""
    n, m = d.shape
    nblocks = min(blocks(n), _MAX_STATS_BLOCKS)
    part = device_array((nblocks, 3, m), np.float64)
    stats_kernel[nblocks, TILE](d, part)
    p = part.copy_to_host()
    return p[:, 0].min(axis=0), p[:, 1].max(axis=0), p[:, 2].sum(axis=0)


def _stats(d):
    n, m = d.shape
    if n == 0:
        return _topsis_stats.TopsisStats(0, np.full(m, np.inf), np.full(m, -np.inf),
                                         np.zeros(m), np.zeros(m))

    def rescan(cols, scale):
        nblocks = min(blocks(n), _MAX_STATS_BLOCKS)
        part = device_array((nblocks, cols.shape[0]), np.float64)
        scaled_squares_kernel[nblocks, TILE](d, to_device(cols.astype(np.int64)),
                                             to_device(scale), part)
        return part.copy_to_host().sum(axis=0)

    return _topsis_stats.from_sums(n, *column_sums(d), rescan)


def _scores(d, stats, w, b, norm, out):
    """Scores of the validated device matrix ``d`` into the device array ``out``."""
    n = d.shape[0]
    if n == 0:
        return out
    params = _topsis_stats.score_params(stats, w, b, norm)
    closeness_kernel[blocks(n), TILE](d, *(to_device(p) for p in params), out)
    return out


def _out_array(out, n):
    return device_array(n, np.float64) if out is None else device_out(out, n)


def topsis_stats(matrix):
    """Column statistics for TOPSIS (its first pass).

    Parameters
    ----------
    matrix
        As :func:`gpurank.kernels.reference.topsis_stats`, on the host or the device.

    Returns
    -------
    TopsisStats
        Host m-vectors; a device matrix never leaves the device.

    Examples
    --------
    A column of values whose squares underflow keeps its norm:

    >>> from numba import cuda
    >>> s = topsis_stats(cuda.to_device(np.array([[3e-200, -1.0], [4e-200, 0.0]])))
    >>> s.n, s.norm / [1e-200, 1.0]
    (2, array([5., 1.]))
    """
    return _stats(to_device_matrix(matrix, name="matrix"))


def topsis_from_stats_device(matrix, stats, weights, benefit, *, norm="vector", out=None):
    """:func:`topsis_from_stats` returning a float64 device array: ``out`` when given (a
    C-contiguous float64 device array of shape (n,), e.g. CuPy's, not overlapping
    ``matrix``)."""
    n, m = shape_of(matrix, "matrix")
    w, b = check_criteria_args(m, weights, benefit, norm)
    check_stats(stats, m, n)
    d = to_device_matrix(matrix, name="matrix")
    return _scores(d, stats, w, b, norm, _out_array(out, n))


def topsis_device(matrix, weights, benefit, *, norm="vector", out=None):
    """:func:`topsis` returning a float64 device array (``out`` as in
    :func:`topsis_from_stats_device`)."""
    n, m = shape_of(matrix, "matrix")
    w, b = check_criteria_args(m, weights, benefit, norm)
    d = to_device_matrix(matrix, name="matrix")
    o = _out_array(out, n)
    return _scores(d, _stats(d), w, b, norm, o)


def _to_host(dev, out):
    return dev.copy_to_host() if out is None else dev.copy_to_host(out)


def topsis_from_stats(matrix, stats, weights, benefit, *, norm="vector", out=None):
    """TOPSIS closeness of the rows of ``matrix`` normalized by ``stats`` (the second pass).

    Parameters
    ----------
    matrix, stats, weights, benefit, norm, out
        As :func:`gpurank.kernels.reference.topsis_from_stats`, ``matrix`` on the host or
        the device; the scores are copied into the host array ``out`` when given.

    Returns
    -------
    ndarray of float64, shape (n,), on the host

    Examples
    --------
    >>> s = topsis_stats(np.array([[1.0, 1.0], [3.0, 3.0], [2.0, 2.0]]))
    >>> topsis_from_stats(np.array([[2.0, 2.0]]), s, [1, 1], [False, False], norm="minmax")
    array([0.5])
    """
    if out is not None:
        check_out(out, shape_of(matrix, "matrix")[0], matrix)
    return _to_host(topsis_from_stats_device(matrix, stats, weights, benefit, norm=norm), out)


def topsis(matrix, weights, benefit, *, norm="vector", out=None):
    """TOPSIS closeness ([HwangYoon1981]): the reduction kernel, then the scoring kernel.

    Parameters
    ----------
    matrix, weights, benefit, norm, out
        As :func:`gpurank.kernels.reference.topsis`, ``matrix`` on the host or the device;
        the scores are copied into the host array ``out`` when given.

    Returns
    -------
    ndarray of float64, shape (n,), on the host (``out`` itself when given)

    Examples
    --------
    >>> out = np.empty(3)
    >>> x = np.array([[1.0, 10.0], [3.0, 30.0], [2.0, 20.0]], dtype=np.float32)
    >>> topsis(x, [1, 1], [True, True], norm="minmax", out=out) is out, out.round(6)
    (True, array([0. , 1. , 0.5]))
    """
    if out is not None:
        check_out(out, shape_of(matrix, "matrix")[0], matrix)
    return _to_host(topsis_device(matrix, weights, benefit, norm=norm), out)
