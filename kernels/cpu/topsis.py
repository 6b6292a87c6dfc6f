"""TOPSIS on the CPU (Numba), in two passes over the flat row-major matrix.

Contracts: :func:`gpurank.kernels.reference.topsis`, ``topsis_stats`` and
``topsis_from_stats``. Both passes are compiled per number of columns (the column loops
unroll, the row loops vectorize over interleaved columns) and run at memory bandwidth, in
parallel from ``PAR_MIN`` rows on.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .. import _topsis_stats
from .._topsis_stats import TopsisStats  # noqa: F401 (the examples merge stats)
from .._validate import check_costs, check_criteria_args, check_out, check_stats
from ._jit import compile_variant, kernel_factory

__all__ = ["topsis", "topsis_stats", "topsis_from_stats"]

#: Below this many rows both passes run serially: waking the thread pool costs more than it
#: saves on small inputs. Measured on 2 cores (median of calls after idle): 400,000 x 4
#: serial 8.3 ms, parallel 24 ms (docs/architecture-kernels.md has the table).
PAR_MIN = 400_000


def topsis_stats(matrix):
    """Column statistics of ``matrix`` for TOPSIS (its first pass).

    Parameters
    ----------
    matrix
        As :func:`gpurank.kernels.reference.topsis_stats`.

    Returns
    -------
    TopsisStats
        Merge the stats of partitions with :meth:`~gpurank.kernels.TopsisStats.merge`.

    Notes
    -----
    One pass keeps min, max and plain sum of squares per lane of ``8 m`` consecutive values
    (lane j always holds column j mod m), so it streams the matrix with plain vector loads
    and no reduction inside the loop; the finiteness check is read off the results. The
    rare columns whose plain sum of squares overflows or underflows (values beyond about
    1e+-150) are summed again, scaled (:func:`gpurank.kernels._topsis_stats.from_sums`).
    O(n m) time, O(m) extra memory.

    Examples
    --------
    A column of values whose squares underflow keeps its norm:

    >>> s = topsis_stats(np.array([[3e-170, 1.0], [4e-170, 0.0]]))
    >>> s.norm / [1e-170, 1.0]
    array([5., 1.])
    """
    return _stats(check_costs(matrix, name="matrix", finite=False))


def _stats(x):
    """Stats of a C-contiguous float matrix; raises when a value is not finite."""
    n, m = x.shape
    if n == 0:
        return _topsis_stats.TopsisStats(0, np.full(m, np.inf), np.full(m, -np.inf),
                                         np.zeros(m), np.zeros(m))
    sums = _passes(m, n >= PAR_MIN)[0]
    lo, hi, ss, ok = sums(x.reshape(-1), n)
    if not ok:
        check_costs(x, name="matrix")  # raises the canonical message when a value is bad

    def rescan(cols, scale):
        return _scaled_squares(x.reshape(-1), m, cols, scale)

    return _topsis_stats.from_sums(n, lo, hi, ss, rescan)


def topsis_from_stats(matrix, stats, weights, benefit, *, norm="vector", out=None):
    """TOPSIS closeness of the rows of ``matrix`` normalized by ``stats`` (its second pass).

    Parameters
    ----------
    matrix, stats, weights, benefit, norm, out
        As :func:`gpurank.kernels.reference.topsis_from_stats`: ``stats`` are the
        :func:`topsis_stats` of the whole table the rows belong to (merged over its
        partitions when it is split).

    Returns
    -------
    ndarray of float64, shape (n,)
        The scores (in ``out`` when given).

    Notes
    -----
    One vectorized row loop fuses the per-column map ``(x * pre - offset) * mul``, the
    weighted distances to the ideal and anti-ideal points and the closeness ``dm2 /
    (sqrt(dp2 dm2) + dm2)`` (one square root per row), written straight to the output.
    O(n m) time, no temporaries (the finiteness check is one more compiled read).

    Examples
    --------
    Two partitions scored with the stats of the whole table:

    >>> a, b = np.array([[1.0, 4.0]]), np.array([[3.0, 0.0], [2.0, 2.0]])
    >>> s = TopsisStats.merge([topsis_stats(a), topsis_stats(b)])
    >>> [topsis_from_stats(p, s, [1, 1], [True, False]).round(4) for p in (a, b)]
    [array([0.]), array([1. , 0.5])]
    """
    x = check_costs(matrix, name="matrix", finite=False)
    n, m = x.shape
    w, b = check_criteria_args(m, weights, benefit, norm)
    check_stats(stats, m, n)
    if out is not None:
        check_out(out, n, matrix)
    if not _all_finite(x.reshape(-1)):
        check_costs(x, name="matrix")  # raises the canonical message
    return _scores(x, stats, w, b, norm, out)


def topsis(matrix, weights, benefit, *, norm="vector", out=None):
    """TOPSIS closeness to the ideal solution ([HwangYoon1981]).

    Parameters
    ----------
    matrix, weights, benefit, norm, out
        As :func:`gpurank.kernels.reference.topsis`.

    Returns
    -------
    ndarray of float64, shape (n,)
        ``out`` itself when given.

    Notes
    -----
    ``topsis_from_stats(matrix, topsis_stats(matrix), ...)``: two passes over the matrix
    (see both), in parallel from ``PAR_MIN`` rows on, serially below. O(n m) time, O(m)
    extra memory besides the output. With ``out`` no memory is allocated at all: a fresh
    output costs page faults on first touch (for 1e7 rows, 80 MB: about as long as the two
    passes when the kernel must compact memory for huge pages).

    References
    ----------
    [HwangYoon1981] (``docs/references.md``).

    Examples
    --------
    Cost (minimized) and benefit (maximized) criteria, weighted 1 : 3:

    >>> x = np.array([[10.0, 0.9], [20.0, 0.99], [15.0, 0.8]])
    >>> topsis(x, [1, 3], [False, True]).round(4)
    array([0.7072, 0.4961, 0.3117])
    """
    x = check_costs(matrix, name="matrix", finite=False)  # the stats pass checks finiteness
    n, m = x.shape
    w, b = check_criteria_args(m, weights, benefit, norm)
    if out is not None:
        check_out(out, n, x)
    return _scores(x, _stats(x), w, b, norm, out)


def _scores(x, stats, w, b, norm, out):
    n, m = x.shape
    if n == 0:
        return np.zeros(0, dtype=np.float64) if out is None else out
    pre, offset, mul, ideal, anti = _topsis_stats.score_params(stats, w, b, norm)
    if out is None:
        out = np.empty(n, dtype=np.float64)  # NumPy's allocator: transparent huge pages
    return _passes(m, n >= PAR_MIN)[1](x.reshape(-1), pre, offset, mul, ideal, anti, out)


@njit(cache=True, nogil=True, error_model="numpy")
def _all_finite(xf):
    """True when no value of the flat ``xf`` is NaN or infinite (branch-free, vectorized)."""
    bad = False
    for i in range(xf.shape[0]):
        v = np.float64(xf[i])
        bad |= v - v != 0.0  # NaN for inf / NaN
    return not bad


@njit(cache=True, nogil=True)
def _scaled_squares(xf, m, cols, scale):
    """``sum((x[:, cols[j]] / scale[j])^2)`` over the rows of the flat ``xf`` (m columns):
    the second look at the columns whose plain sum of squares is not exact enough."""
    out = np.zeros(cols.shape[0])
    for i in range(xf.shape[0] // m):
        for j in range(cols.shape[0]):
            v = np.float64(xf[i * m + cols[j]]) / scale[j]
            out[j] += v * v
    return out


@kernel_factory
def _passes(d, parallel):
    """(column sums, scores) compiled for ``d`` columns, parallel or serial: closures over
    ``d`` (see :mod:`._jit`), built once per process."""
    def column_sums(xf, n):
        """Column min, max and sum of squares (float64) of the flat row-major ``xf`` (n
        rows of ``d`` columns) in one pass over row chunks. Each chunk keeps the three
        statistics per lane of ``8 d`` consecutive values: lane j always holds column j mod
        ``d``, so the inner loop is element-wise (plain vector loads, no horizontal
        reduction) and the lanes are folded into columns once per chunk."""
        nl = 8 * d
        nchunks = min(64, max(1, n // 4096))
        los = np.empty((nchunks, nl))
        his = np.empty((nchunks, nl))
        sss = np.empty((nchunks, nl))
        for q in prange(nchunks):
            s = np.uint64((q * n // nchunks) * d)
            e = np.uint64(((q + 1) * n // nchunks) * d)
            lo = np.full(nl, np.inf)
            hi = np.full(nl, -np.inf)
            ss = np.zeros(nl)
            b = s
            while b + np.uint64(nl) <= e:
                for j in range(nl):
                    v = np.float64(xf[b + np.uint64(j)])
                    lo[j] = min(lo[j], v)
                    hi[j] = max(hi[j], v)
                    ss[j] += v * v
                b += np.uint64(nl)
            for j in range(e - b):  # a whole number of rows: lane j holds column j mod d
                v = np.float64(xf[b + np.uint64(j)])
                lo[j] = min(lo[j], v)
                hi[j] = max(hi[j], v)
                ss[j] += v * v
            for j in range(nl):
                los[q, j] = lo[j]
                his[q, j] = hi[j]
                sss[q, j] = ss[j]
        lo = np.full(d, np.inf)
        hi = np.full(d, -np.inf)
        ss = np.zeros(d)
        for q in range(nchunks):
            for j in range(nl):
                k = j % d
                lo[k] = min(lo[k], los[q, j])
                hi[k] = max(hi[k], his[q, j])
                ss[k] += sss[q, j]
        # finiteness for free: a NaN makes ss NaN, an infinity makes ss infinite (ok is also
        # False when a huge finite column overflows ss; the caller re-checks then)
        ok = True
        for k in range(d):
            if not (np.isfinite(lo[k]) and np.isfinite(hi[k]) and np.isfinite(ss[k])):
                ok = False
        return lo, hi, ss, ok

    def scores(xf, pre, offset, mul, ideal, anti, out):
        """Closeness of every row of the flat row-major ``xf`` (``d`` columns) into
        ``out``. One loop over the rows of a chunk; the column loop unrolls, so the row loop
        vectorizes with interleaved loads. The closeness ``dm / (dp + dm)`` is computed as
        ``dm2 / (sqrt(dp2 dm2) + dm2)`` (one square root and one division per row instead
        of two and one), selected branch-free against the degenerate rows (both distances
        0)."""
        n = out.shape[0]
        nchunks = min(64, max(1, n // 4096))
        for q in prange(nchunks):
            s = q * n // nchunks
            e = (q + 1) * n // nchunks
            for i in range(s, e):
                r = np.uint64(i) * np.uint64(d)
                p2 = 0.0
                m2 = 0.0
                for k in range(d):
                    vv = (np.float64(xf[r + np.uint64(k)]) * pre[k] - offset[k]) * mul[k]
                    a = vv - ideal[k]
                    bb = vv - anti[k]
                    p2 += a * a
                    m2 += bb * bb
                den = np.sqrt(p2 * m2) + m2
                out[i] = m2 / den if m2 > 0 else (0.0 if p2 > 0 else 0.5)
        return out

    # NumPy's error model: no zero-division branch in the row loop, which would keep it
    # from vectorizing (the degenerate rows are selected away explicitly)
    tag = f"m{d}_{'par' if parallel else 'ser'}"
    return (compile_variant(column_sums, tag, parallel=parallel, error_model="numpy"),
            compile_variant(scores, tag, parallel=parallel, error_model="numpy"))

