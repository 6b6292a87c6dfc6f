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

with min and max taken over the full table (never over the candidates only). The weighted
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

__all__ = ["gaps", "lex_order", "prepare", "unpermute"]


def gaps(costs, norm):
    """(P, N): gaps of every row to the ideal and anti-ideal of the normalized FULL table."""
    c = np.asarray(costs, dtype=np.float64)
    if c.shape[0] == 0:
        return c.copy(), c.copy()
    if norm == "vector":
        scale = np.sqrt((c**2).sum(axis=0))
        r = np.divide(c, scale, out=np.zeros_like(c), where=scale > 0)
    else:
        lo, hi = c.min(axis=0), c.max(axis=0)
        rng = hi - lo
        r = np.divide(c - lo, rng, out=np.zeros_like(c), where=rng > 0)
    return np.ascontiguousarray(r - r.min(axis=0)), np.ascontiguousarray(r.max(axis=0) - r)


def lex_order(costs, rows):
    """``rows`` ordered by the lexicographic order of their cost rows, then by row index."""
    c = costs[rows]
    keys = [rows] + [c[:, j] for j in range(c.shape[1] - 1, -1, -1)]
    return rows[np.lexsort(keys)]


def prepare(matrix, weights_samples, benefit, *, k, norm, candidates):
    """Everything the fast kernels need: (P, N for the candidates in tie-break order,
    weights, perm, k) with ``perm[t]`` the position in ``candidates`` of the t-th row."""
    costs, w, cand, k = check_smaa_inputs(matrix, weights_samples, benefit, k=k, norm=norm,
                                          candidates=candidates)
    p, nn = gaps(costs, norm)
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
