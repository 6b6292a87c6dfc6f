"""TOPSIS column statistics: the one reduction TOPSIS needs, mergeable across partitions.

TOPSIS reads a table twice: once to reduce every column (minimum, maximum, Euclidean norm),
once to score every row from those m-vectors. :class:`TopsisStats` is the result of the first
pass, so a table split into partitions is scored by reducing each partition, merging the
reductions (:meth:`TopsisStats.merge`) and scoring each partition from the merged stats.

The norm is held the way LAPACK's ``dnrm2`` holds it, as ``scale * sqrt(ssq)`` with
``ssq = sum((x / scale)^2)``: the plain sum of squares overflows for columns of values above
about 1e154 and underflows below about 1e-154, and a column whose norm comes out as 0 or inf
would silently drop out of the ranking. Here ``scale`` is the largest power of two that is
<= max |x| (so ``x / scale`` lies in [0, 2) and ``ssq`` in [1, 4n] for a non-zero column): a
power of two makes every rescaling exact, so on ordinary columns ``scale * sqrt(ssq)``
equals ``sqrt(sum(x^2))`` to the last bit and the scores keep their bits.

This module also turns stats into the per-column affine map of the scoring pass, written
once for the CPU and CUDA kernels. It imports NumPy and Numba's CPU compiler, never
numba.cuda, and no other kernels module (the input checks of ``_validate`` import it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

__all__ = ["TopsisStats", "power_of_two_floor", "stats_of", "canonical_stats", "from_sums",
           "score_params", "check_merge_inputs"]

#: Columns whose plain float64 sum of squares is exact enough to keep: finite, and a scale of
#: at least 2**-480, so that a square that underflows (|x| < 2**-511) errs by at most 2**-1075,
#: under 2**-115 of the column's sum (>= scale^2 >= 2**-960). Other columns are summed again,
#: scaled.
SAFE_SCALE = 2.0**-480


@dataclass(frozen=True, eq=False)
class TopsisStats:
    """Column statistics of a table for TOPSIS (host NumPy m-vectors, read-only).

    Attributes
    ----------
    n : int
        Rows reduced.
    lo, hi : ndarray of float64, shape (m,)
        Column minimum and maximum (+inf and -inf for an empty table).
    scale : ndarray of float64, shape (m,)
        Largest power of two <= max |x| of each column (0 for an all-zero or empty column).
    ssq : ndarray of float64, shape (m,)
        ``sum((x / scale)^2)`` per column (0 where ``scale`` is 0).

    Notes
    -----
    The column 2-norm is ``scale * sqrt(ssq)`` (:attr:`norm`); it may overflow to inf for a
    column of huge values although ``scale`` and ``ssq`` are finite, which is why the kernels
    never form it.
    """

    n: int
    lo: np.ndarray
    hi: np.ndarray
    scale: np.ndarray
    ssq: np.ndarray

    @classmethod
    def of(cls, n, lo, hi, scale, ssq):
        """Stats from fresh float64 m-vectors of the caller's own (made read-only in place,
        not copied: the constructor copies)."""
        obj = object.__new__(cls)
        for name, a in (("lo", lo), ("hi", hi), ("scale", scale), ("ssq", ssq)):
            a.flags.writeable = False
            object.__setattr__(obj, name, a)
        object.__setattr__(obj, "n", int(n))
        return obj

    def __post_init__(self):
        for name in ("lo", "hi", "scale", "ssq"):
            a = np.array(getattr(self, name), dtype=np.float64, ndmin=1)
            a.flags.writeable = False  # a copy: the caller's arrays stay writeable
            object.__setattr__(self, name, a)
        object.__setattr__(self, "n", int(self.n))

    @property
    def norm(self):
        """Column Euclidean norms ``scale * sqrt(ssq)``."""
        return self.scale * np.sqrt(self.ssq)

    @classmethod
    def merge(cls, stats):
        """Stats of the concatenation of the tables ``stats`` describe (at least one).

        The sums of squares are rescaled to the largest scale, exactly (the scales are
        powers of two), then added in the order given.

        Examples
        --------
        >>> a = TopsisStats(2, [1.0], [3.0], [2.0], [2.5])     # rows 1 and 3
        >>> b = TopsisStats(1, [4.0], [4.0], [4.0], [1.0])     # row 4
        >>> m = TopsisStats.merge([a, b])
        >>> m.n, m.lo, m.hi, m.scale, m.ssq, m.norm ** 2
        (3, array([1.]), array([4.]), array([4.]), array([1.625]), array([26.]))
        """
        stats = check_merge_inputs(stats)
        scale = np.max([s.scale for s in stats], axis=0)
        ssq = np.zeros_like(scale)
        for s in stats:
            r = np.divide(s.scale, scale, out=np.zeros_like(scale), where=scale > 0)
            ssq = ssq + s.ssq * (r * r)
        return cls.of(sum(s.n for s in stats), np.min([s.lo for s in stats], axis=0),
                      np.max([s.hi for s in stats], axis=0), scale, ssq)


def power_of_two_floor(a):
    """Largest power of two <= ``a`` elementwise (0 where ``a`` is 0); ``a`` finite >= 0."""
    _, e = np.frexp(a)  # a = f * 2**e with f in [0.5, 1)
    return np.ldexp(np.sign(a), e - 1)


def stats_of(x):
    """The stats of a validated float64 matrix ``x`` (n, m), computed with NumPy: the oracle's
    first pass (:func:`gpurank.kernels.reference.topsis_stats` checks the input first)."""
    n, m = x.shape
    if n == 0:
        return TopsisStats(0, np.full(m, np.inf), np.full(m, -np.inf), np.zeros(m), np.zeros(m))
    lo, hi = x.min(axis=0), x.max(axis=0)
    scale = power_of_two_floor(np.maximum(np.abs(lo), np.abs(hi)))
    xs = np.divide(x, scale, out=np.zeros_like(x), where=scale > 0)
    return TopsisStats(n, lo, hi, scale, (xs * xs).sum(axis=0))


def canonical_stats(stats, benefit):
    """The stats of the canonical costs (benefit columns negated) from those of the matrix."""
    b = np.asarray(benefit, dtype=bool)
    return TopsisStats.of(stats.n, np.where(b, -stats.hi, stats.lo),
                          np.where(b, -stats.lo, stats.hi), stats.scale.copy(),
                          stats.ssq.copy())


def check_merge_inputs(stats):
    """The stats to merge, as a non-empty list (the input check of :meth:`TopsisStats.merge`,
    kept beside the class: ``_validate`` imports this module, not the other way round)."""
    stats = list(stats)
    if not stats:
        raise ValueError("stats must hold at least one TopsisStats; got none")
    return stats


def from_sums(n, lo, hi, ss, rescan):
    """Stats from a first pass that summed plain squares.

    Parameters
    ----------
    n : int
    lo, hi, ss : ndarray of float64, shape (m,)
        Column minimum, maximum and plain sum of squares.
    rescan : callable
        ``rescan(cols, scale)`` returns ``sum((x[:, cols] / scale)^2)`` per column; called
        only for the columns whose plain sum is not exact enough (see ``SAFE_SCALE``), that
        is for columns of values beyond about 1e+-150, so ordinary tables are read once.
    """
    if n == 0:
        z = np.zeros_like(ss)
        return TopsisStats.of(0, lo, hi, z, z)
    scale, ssq, redo = _scaled_sums(lo, hi, ss)
    if redo.any():
        cols = np.flatnonzero(redo)
        ssq[cols] = rescan(cols, scale[cols])
    return TopsisStats.of(n, lo, hi, scale, ssq)


@njit(cache=True, nogil=True)
def _scaled_sums(lo, hi, ss):
    """Per column: the scale (largest power of two <= max |x|), ``ss / scale^2`` (exact: a
    power of two) and whether the plain sum is not exact enough and must be summed again."""
    m = lo.shape[0]
    scale = np.zeros(m)
    ssq = np.zeros(m)
    redo = np.zeros(m, dtype=np.bool_)
    for k in range(m):
        amax = max(-lo[k], hi[k])  # max |x|, as lo <= hi
        if amax > 0:
            e = math.frexp(amax)[1]  # amax = f * 2**e, f in [0.5, 1)
            scale[k] = math.ldexp(1.0, e - 1)
            if math.isfinite(ss[k]) and scale[k] >= SAFE_SCALE:
                ssq[k] = math.ldexp(ss[k], 2 - 2 * e)  # in [1, 4n]
            else:
                redo[k] = True
    return scale, ssq, redo


def score_params(stats, w, b, norm):
    """The scoring pass's per-column map ``v = (x * pre - offset) * mul`` and the ideal and
    anti-ideal points of ``v``.

    ``pre = 1 / scale`` (a power of two, capped at 2**1023 for subnormal scales) brings every
    column to the unit range before anything else, so no intermediate overflows or
    underflows whatever the magnitude of the column; being a power of two it changes no bit
    of the result on ordinary columns. Columns whose norm (``"vector"``) or range
    (``"minmax"``) is 0 get ``mul = 0``: they cannot separate the rows. (Compiled: these are
    m-vectors, and a dozen NumPy calls on them cost more than a small table's whole pass.)

    Returns
    -------
    pre, offset, mul, ideal, anti : ndarray of float64, shape (m,)
    """
    return _score_params(stats.lo, stats.hi, stats.scale, stats.ssq,
                         np.ascontiguousarray(w, dtype=np.float64), np.asarray(b, np.bool_),
                         norm == "vector")


@njit(cache=True, nogil=True)
def _score_params(lo, hi, scale, ssq, w, b, vector):
    m = lo.shape[0]
    pre = np.ones(m)
    offset = np.zeros(m)
    mul = np.zeros(m)
    ideal = np.zeros(m)
    anti = np.zeros(m)
    for k in range(m):
        if scale[k] > 0:
            pre[k] = math.ldexp(1.0, min(1 - math.frexp(scale[k])[1], 1023))
        vlo = lo[k] * pre[k]
        vhi = hi[k] * pre[k]
        if vector:
            den = (scale[k] * pre[k]) * math.sqrt(ssq[k])  # the norm in units of the scale
        else:
            den = vhi - vlo
            offset[k] = vlo
        if den > 0:
            mul[k] = w[k] / den
        vmax = (vhi - offset[k]) * mul[k]
        vmin = (vlo - offset[k]) * mul[k]
        ideal[k] = vmax if b[k] else vmin
        anti[k] = vmin if b[k] else vmax
    return pre, offset, mul, ideal, anti
