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

from ._validate import check_costs, check_k

__all__ = ["check_candidates", "check_smaa_inputs", "gaps", "lex_order"]


def check_smaa_inputs(matrix, weights_samples, benefit, *, k, norm, candidates):
    """Validate; return (canonical costs float64 (n, m), weights (S, m) rows summing to 1,
    candidates int64 (c,), k)."""
    x = check_costs(matrix, name="matrix").astype(np.float64, copy=False)
    n, m = x.shape
    b = np.asarray(benefit, dtype=bool).reshape(-1)
    if b.shape[0] != m:
        raise ValueError(f"benefit must have one flag per column ({m}); got {b.shape[0]}")
    if norm not in ("vector", "minmax"):
        raise ValueError(f"norm must be 'vector' or 'minmax'; got {norm!r}")
    w = np.asarray(weights_samples, dtype=np.float64)
    if w.ndim != 2 or w.shape[1] != m:
        raise ValueError(
            f"weights_samples must be a 2-D array of shape (samples, {m}); got shape {w.shape}"
        )
    if w.size and (not np.isfinite(w).all() or (w < 0).any()):
        raise ValueError("weights_samples must be finite and >= 0")
    sums = w.sum(axis=1)
    if m and (sums <= 0).any():
        bad = int(np.flatnonzero(sums <= 0)[0])
        raise ValueError(f"weights_samples row {bad} is all zero; every sample needs a weight > 0")
    w = np.ascontiguousarray(w / sums[:, None]) if m else np.ascontiguousarray(w)
    k = check_k(k)
    cand = check_candidates(candidates, n)
    c = np.where(b, -x, x)
    return np.ascontiguousarray(c), w, cand, k


def check_candidates(candidates, n):
    """Candidates as distinct int64 row ids in [0, n) (every row when None)."""
    if candidates is None:
        return np.arange(n, dtype=np.int64)
    cand = np.asarray(candidates)
    if cand.ndim != 1 or (cand.size and not np.issubdtype(cand.dtype, np.integer)):
        raise ValueError("candidates must be a 1-D array of row indices")
    cand = cand.astype(np.int64)
    if cand.size and (cand.min() < 0 or cand.max() >= n):
        raise ValueError(f"candidates must be row indices in [0, {n}); got {cand.min()}..{cand.max()}")
    if np.unique(cand).size != cand.size:
        raise ValueError("candidates must not repeat a row")
    return cand


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
