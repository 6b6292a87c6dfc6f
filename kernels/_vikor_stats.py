"""VIKOR's statistics, mergeable across partitions, and its weighting ``v``.

VIKOR ([Opricovic2004]) reads a table three times: (1) every column's best and worst value
``f*``, ``f-`` (TOPSIS's column statistics hold them: :class:`TopsisStats` ``lo`` and
``hi``, merged by min and max); (2) each row's group utility ``S`` and individual regret
``R`` from them; (3) each row's compromise ``Q`` from ``S``, ``R`` and their extremes
``S*``, ``S-``, ``R*``, ``R-``, which also merge by min and max (:class:`VikorStats`). A
table split into partitions is scored by merging (1), mapping (2) over the partitions,
merging the :class:`VikorStats` of (2) and mapping (3).

This module imports NumPy only; the kernels and the oracle share it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["VikorStats", "DEFAULT_V", "check_v", "check_vikor_stats", "check_q_args",
           "q_coefficients"]

#: VIKOR's weight of the strategy of the majority (``S``) against the individual regret
#: (``R``): 0.5, "by consensus" ([Opricovic2004]).
DEFAULT_V = 0.5


@dataclass(frozen=True, eq=False)
class VikorStats:
    """Extremes of the group utility ``S`` and the individual regret ``R`` over a table.

    Attributes
    ----------
    n : int
        Rows reduced.
    s_lo, s_hi, r_lo, r_hi : float
        ``S* = min S``, ``S- = max S``, ``R* = min R``, ``R- = max R`` (+inf, -inf for an
        empty table).
    """

    n: int
    s_lo: float
    s_hi: float
    r_lo: float
    r_hi: float

    @classmethod
    def of(cls, s, r):
        """The stats of the ``S`` and ``R`` of some rows (host arrays of equal length)."""
        s = np.asarray(s, dtype=np.float64)
        r = np.asarray(r, dtype=np.float64)
        if s.shape[0] == 0:
            return cls(0, math.inf, -math.inf, math.inf, -math.inf)
        return cls(int(s.shape[0]), float(s.min()), float(s.max()), float(r.min()),
                   float(r.max()))

    @classmethod
    def merge(cls, stats):
        """Stats of the concatenation of the row sets ``stats`` describe (at least one).

        Examples
        --------
        >>> a, b = VikorStats(2, 0.1, 0.4, 0.1, 0.2), VikorStats(1, 0.0, 0.3, 0.05, 0.5)
        >>> m = VikorStats.merge([a, b])
        >>> m.n, m.s_lo, m.s_hi, m.r_lo, m.r_hi
        (3, 0.0, 0.4, 0.05, 0.5)
        """
        stats = list(stats)
        if not stats:
            raise ValueError("stats must hold at least one VikorStats; got none")
        return cls(sum(s.n for s in stats), min(s.s_lo for s in stats),
                   max(s.s_hi for s in stats), min(s.r_lo for s in stats),
                   max(s.r_hi for s in stats))


def check_v(v):
    """``v`` as a float in [0, 1], or ValueError naming it."""
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) \
            or not (0.0 <= float(v) <= 1.0):
        raise ValueError(f"v must be a number in [0, 1]; got {v!r}")
    return float(v)


def check_vikor_stats(stats, n):
    """Raise unless ``stats`` are :class:`VikorStats` that can score ``n`` rows."""
    if not isinstance(stats, VikorStats):
        raise ValueError(f"stats must be a VikorStats; got {type(stats).__name__}")
    if n and stats.n == 0:
        raise ValueError("stats must describe at least one row; got the stats of an empty table")
    return stats


def check_q_args(n_s, n_r, stats, v):
    """The checks every ``vikor_from_sr`` makes, once: ``S`` and ``R`` of one length
    (``n_s``, ``n_r``), ``stats`` able to score them, and ``v`` in [0, 1] (returned as a
    float); ValueError naming the argument otherwise."""
    if n_s != n_r:
        raise ValueError(f"s and r must have the same length; got {n_s} and {n_r}")
    v = check_v(v)
    check_vikor_stats(stats, n_s)
    return v


def q_coefficients(stats, v):
    """``Q = (S - S*) a_s + (R - R*) a_r``: the pair ``(a_s, a_r)``.

    ``a_s = v / (S- - S*)`` and ``a_r = (1 - v) / (R- - R*)``; a term whose extremes are
    equal (every row has the same ``S``, or the same ``R``: one row, or rows equal in every
    weighted criterion) cannot separate the rows and is 0, where pymcdm divides by zero.
    """
    ds = stats.s_hi - stats.s_lo
    dr = stats.r_hi - stats.r_lo
    a_s = v / ds if ds > 0 else 0.0
    a_r = (1.0 - v) / dr if dr > 0 else 0.0
    return a_s, a_r
