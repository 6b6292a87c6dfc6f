"""Host-side preparation shared by every ``smaa_topsis`` implementation.

SMAA over TOPSIS weights ranks the same rows under many weight vectors. Everything that does
not depend on the weights is computed here once, on the host, with the same NumPy
expressions for every implementation, so the reference, the Numba and the CUDA kernels see
bit-identical inputs and can be compared exactly (ties included).

The score used to rank rows under a weight vector ``w`` (normalized to sum to one)
------------------------------------------------------------------------------------
``C`` are the canonical costs (benefit columns negated), ``r`` the normalized costs of the
FULL table (``"vector"``: ``C / ||C||`` per column, ``"minmax"``: ``(C - min) / (max - min)``;
a column with zero norm or range is all zero), and for each row

    P[i, j] = r[i, j] - min_rows r[:, j]      (gap to the ideal,      >= 0)
    N[i, j] = max_rows r[:, j] - r[i, j]      (gap to the anti-ideal, >= 0)

with min and max taken over the full table (never over the candidates only). The full table's
column statistics are a :class:`~gpurank.kernels.TopsisStats` (``stats=``, e.g. merged over
the partitions of a table too large to hold, while only the candidate rows are passed), or
are computed from ``matrix``; every column is first brought to the unit range by the power
of two ``pre = 1 / scale`` (exact), so no column of huge or tiny values overflows or
underflows out of the ranking. The weighted
squared distances are ``D+ = sum_j (w_j P_ij)^2`` and ``D- = sum_j (w_j N_ij)^2`` (summed in
column order), and rows are ranked by

    q = D+ / D-        (lower is better; q = 1 when D+ = D- = 0, q = inf when only D- = 0)

which orders rows exactly as TOPSIS closeness ``d- / (d+ + d-) = 1 / (1 + sqrt(q))`` does.
Ties in ``q`` are broken by the lexicographic order of the canonical cost rows, then by the
lower row index. Every step above is monotone in floating point (subtraction, product with
``w_j >= 0``, square of a non-negative number, sum, division), so when row ``a`` dominates
row ``b`` the computed ``q_a <= q_b`` and the lexicographic tie-break puts ``a`` strictly
first: a row dominated by ``k`` or more rows can never be in the top ``k``, for any weights.
"""

from __future__ import annotations

import numpy as np

from ._validate import check_smaa_inputs

__all__ = ["canonical_stats", "gaps", "lex_order", "prepare", "unit_map", "unpermute"]


def canonical_stats(stats, benefit):
    """The stats of the canonical costs (benefit columns negated) from those of the matrix."""
    from ._topsis_stats import TopsisStats

    b = np.asarray(benefit, dtype=bool)
    return TopsisStats.of(stats.n, np.where(b, -stats.hi, stats.lo),
                          np.where(b, -stats.lo, stats.hi), stats.scale.copy(),
                          stats.ssq.copy())


def unit_map(stats, norm):
    """The per-column map ``r = (x * pre - offset) / div`` of the normalization, and the
    normalized column minimum and maximum ``(pre, offset, div, rmin, rmax)``, from the stats
    of the canonical costs; ``div`` is 0 for a column that cannot separate rows (all its
    ``r`` are 0)."""
    # The unit-range step of the TOPSIS scoring pass (``score_params``), with the norm or
    # range as a divisor: SMAA's quotient is rounded once, by NumPy and the CUDA kernels alike.
    scale = stats.scale
    e = np.frexp(scale)[1]
    pre = np.where(scale > 0, np.ldexp(1.0, np.minimum(1 - e, 1023)), 1.0)
    vlo, vhi = stats.lo * pre, stats.hi * pre
    if norm == "vector":
        offset, div = np.zeros_like(vlo), (scale * pre) * np.sqrt(stats.ssq)
    else:
        with np.errstate(invalid="ignore"):  # an empty table: inf - inf, no row to map
            offset, div = vlo, vhi - vlo
    with np.errstate(invalid="ignore"):
        rmin = np.divide(vlo - offset, div, out=np.zeros_like(div), where=div > 0)
        rmax = np.divide(vhi - offset, div, out=np.zeros_like(div), where=div > 0)
    return pre, offset, div, rmin, rmax


def gaps(costs, norm, stats=None):
    """(P, N): gaps of every row of the canonical ``costs`` to the ideal and anti-ideal of
    the normalized FULL table, whose canonical column statistics are ``stats`` (those of
    ``costs`` when None)."""
    c = np.asarray(costs, dtype=np.float64)
    if stats is None:
        if c.shape[0] == 0:
            return c.copy(), c.copy()
        from .reference import topsis_stats

        stats = topsis_stats(c)
    pre, offset, div, rmin, rmax = unit_map(stats, norm)
    r = np.divide(c * pre - offset, div, out=np.zeros_like(c), where=div > 0)
    return np.ascontiguousarray(r - rmin), np.ascontiguousarray(rmax - r)


def lex_order(costs, rows):
    """``rows`` ordered by the lexicographic order of their cost rows, then by row index."""
    c = costs[rows]
    keys = [rows] + [c[:, j] for j in range(c.shape[1] - 1, -1, -1)]
    return rows[np.lexsort(keys)]


def prepare(matrix, weights_samples, benefit, *, k, norm, candidates, stats=None):
    """Everything the fast kernels need: (P, N for the candidates in tie-break order,
    weights, perm, k) with ``perm[t]`` the position in ``candidates`` of the t-th row."""
    costs, w, cand, k, stats = check_smaa_inputs(matrix, weights_samples, benefit, k=k,
                                                 norm=norm, candidates=candidates, stats=stats)
    p, nn = gaps(costs, norm, stats)
    pos = np.argsort(cand, kind="stable")  # positions; lex_order works on row ids
    ordered_rows = lex_order(costs, cand)
    perm = pos[np.searchsorted(cand[pos], ordered_rows)]
    return (np.ascontiguousarray(p[ordered_rows]), np.ascontiguousarray(nn[ordered_rows]), w,
            perm.astype(np.int64), k)


def unpermute(perm, *arrays):
    """Map outputs computed in tie-break order back to the order of ``candidates``."""
    out = []
    for a in arrays:
        r = np.empty_like(a)
        r[perm] = a
        out.append(r)
    return tuple(out)
