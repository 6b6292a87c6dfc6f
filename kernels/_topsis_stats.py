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
once for the CPU and CUDA kernels. It imports nothing but NumPy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["TopsisStats", "power_of_two_floor", "from_sums", "score_params"]

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

    def __post_init__(self):
        for name in ("lo", "hi", "scale", "ssq"):
            a = np.array(getattr(self, name), dtype=np.float64).reshape(-1)
            a.flags.writeable = False
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
        >>> import numpy as np
        >>> a = TopsisStats(2, [1.0], [3.0], [2.0], [2.5])     # rows 1 and 3
        >>> b = TopsisStats(1, [4.0], [4.0], [4.0], [1.0])     # row 4
        >>> m = TopsisStats.merge([a, b])
        >>> m.n, m.lo, m.hi, m.scale, m.ssq, m.norm ** 2
        (3, array([1.]), array([4.]), array([4.]), array([1.625]), array([26.]))
        """
        stats = list(stats)
        if not stats:
            raise ValueError("stats must hold at least one TopsisStats; got none")
        scale = np.max([s.scale for s in stats], axis=0)
        ssq = np.zeros_like(scale)
        for s in stats:
            r = np.divide(s.scale, scale, out=np.zeros_like(scale), where=scale > 0)
            ssq = ssq + s.ssq * (r * r)
        return cls(
            n=sum(s.n for s in stats),
            lo=np.min([s.lo for s in stats], axis=0),
            hi=np.max([s.hi for s in stats], axis=0),
            scale=scale,
            ssq=ssq,
        )


def power_of_two_floor(a):
    """Largest power of two <= ``a`` elementwise (0 where ``a`` is 0); ``a`` finite >= 0."""
    a = np.asarray(a, dtype=np.float64)
    _, e = np.frexp(a)  # a = f * 2**e with f in [0.5, 1)
    return np.where(a > 0, np.ldexp(1.0, e - 1), 0.0)


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
        is for columns of values beyond about 1e+-150, so ordinary tables read once.
    """
    lo = np.asarray(lo, dtype=np.float64)
    hi = np.asarray(hi, dtype=np.float64)
    ss = np.asarray(ss, dtype=np.float64)
    scale = power_of_two_floor(np.maximum(np.abs(lo), np.abs(hi))) if n else np.zeros_like(ss)
    _, e = np.frexp(scale)
    safe = np.isfinite(ss) & (scale >= SAFE_SCALE)
    # ss * 2**(-2(e - 1)) is exact: scale = 2**(e - 1) and the result lies in [1, 4n]
    ssq = np.where(safe, np.ldexp(np.where(safe, ss, 0.0), -2 * (e - 1)), 0.0)
    redo = np.flatnonzero(~safe & (scale > 0))
    if redo.size:
        ssq[redo] = rescan(redo, scale[redo])
    return TopsisStats(n=n, lo=lo, hi=hi, scale=scale, ssq=ssq)


def score_params(stats, w, b, norm):
    """The scoring pass's per-column map ``v = (x * pre - offset) * mul`` and the ideal and
    anti-ideal points of ``v``.

    ``pre = 1 / scale`` (a power of two, capped at 2**1023 for subnormal scales) brings every
    column to the unit range before anything else, so no intermediate overflows or
    underflows whatever the magnitude of the column; being a power of two it changes no bit
    of the result on ordinary columns. Columns whose norm (``"vector"``) or range
    (``"minmax"``) is 0 get ``mul = 0``: they cannot separate the rows.

    Returns
    -------
    pre, offset, mul, ideal, anti : ndarray of float64, shape (m,)
    """
    scale = stats.scale
    pos = scale > 0
    _, e = np.frexp(scale)
    pre = np.where(pos, np.ldexp(1.0, np.minimum(1 - e, 1023)), 1.0)
    lo = stats.lo * pre
    hi = stats.hi * pre
    if norm == "vector":
        den = (scale * pre) * np.sqrt(stats.ssq)  # the norm in units of the scale
        offset = np.zeros_like(w)
    else:
        den = hi - lo
        offset = lo
    mul = np.divide(w, den, out=np.zeros_like(w), where=den > 0)
    vmax = (hi - offset) * mul
    vmin = (lo - offset) * mul
    ideal = np.where(b, vmax, vmin)
    anti = np.where(b, vmin, vmax)
    return pre, offset, mul, ideal, anti
