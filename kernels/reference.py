"""Slow, obvious NumPy oracles for every kernel. The contract of each kernel lives here.

Every fast implementation (``cpu.py``, ``cuda.py``) has the same name, signature and
contract as the function here and is tested against it. These functions favour clarity over
speed: the pairwise ones are O(n^2 m) and allocate O(n^2), so keep n small.

Conventions shared by all kernels
---------------------------------
``costs`` is a ``float32`` or ``float64`` array of shape ``(n, m)`` whose criteria have all
been canonicalized to "minimize" (a "max" criterion is negated once, at the boundary).
Row ``a`` *dominates* row ``b`` when ``a <= b`` in every criterion and ``a < b`` in at least
one. Equal rows do not dominate each other.
"""

from __future__ import annotations

import numpy as np

from ._validate import (
    check_cap,
    check_costs,
    check_k,
    check_out,
    check_scores,
    check_topsis_inputs,
)

__all__ = [
    "dominance_matrix",
    "pareto_front",
    "pareto_rank",
    "domination_count",
    "dominated_count",
    "topsis",
    "top_k",
    "smaa_topsis",
]


def dominance_matrix(costs):
    """Return ``D`` with ``D[a, b]`` true when row ``a`` dominates row ``b``.

    O(n^2 m) time and O(n^2) memory: for the oracles only.
    """
    c = check_costs(costs)
    le = np.all(c[:, None, :] <= c[None, :, :], axis=2)
    lt = np.any(c[:, None, :] < c[None, :, :], axis=2)
    return le & lt


def pareto_front(costs):
    """Mark the non-dominated rows.

    Parameters
    ----------
    costs : ndarray of shape (n, m)
        Criteria to minimize, finite, float32 or float64.

    Returns
    -------
    ndarray of bool, shape (n,)
        True where no other row dominates the row. Duplicates of a front row are all on
        the front.
    """
    return ~dominance_matrix(costs).any(axis=0)


def pareto_rank(costs):
    """Non-dominated sorting: the index of the front each row belongs to.

    Front 0 is the Pareto front; front ``r`` is the front of what remains after removing
    fronts ``0 .. r-1``.

    Returns
    -------
    ndarray of int32, shape (n,)
    """
    d = dominance_matrix(costs)
    n = d.shape[0]
    rank = np.full(n, -1, dtype=np.int32)
    remaining = np.ones(n, dtype=bool)
    r = 0
    while remaining.any():
        # A remaining row is on the current front when no remaining row dominates it.
        on_front = remaining & ~(d & remaining[:, None]).any(axis=0)
        rank[on_front] = r
        remaining &= ~on_front
        r += 1
    return rank


def domination_count(costs, *, cap=None):
    """How many rows dominate each row.

    Parameters
    ----------
    cap : int >= 0 or None, keyword-only
        When given, return ``min(count, cap)``: fast implementations stop counting a row
        once it reached ``cap`` (used to prune rows that cannot reach the top k).

    Returns
    -------
    ndarray of int64, shape (n,)
        Zero exactly on the Pareto front.
    """
    cap = check_cap(cap)
    out = dominance_matrix(costs).sum(axis=0).astype(np.int64)
    return out if cap is None else np.minimum(out, cap)


def dominated_count(costs, *, cap=None):
    """How many rows each row dominates (``cap`` as in :func:`domination_count`).

    Returns
    -------
    ndarray of int64, shape (n,)
    """
    cap = check_cap(cap)
    out = dominance_matrix(costs).sum(axis=1).astype(np.int64)
    return out if cap is None else np.minimum(out, cap)


def topsis(matrix, weights, benefit, *, norm="vector", out=None):
    """TOPSIS closeness to the ideal solution.

    Parameters
    ----------
    matrix : ndarray of shape (n, m)
        Criteria values, finite.
    weights : ndarray of shape (m,)
        Non-negative weights; they are normalized to sum to 1.
    benefit : ndarray of bool, shape (m,)
        True where larger is better, False where smaller is better.
    norm : {"vector", "minmax"}, keyword-only
        ``"vector"`` divides each column by its Euclidean norm (classic TOPSIS);
        ``"minmax"`` rescales each column to [0, 1]. A column whose norm (or range) is zero
        is left at zero: it cannot separate the rows.
    out : ndarray of float64, shape (n,), optional, keyword-only
        C-contiguous, writeable array that receives the scores (and is returned), so that
        repeated calls need not allocate; it must not share memory with ``matrix``.

    Returns
    -------
    ndarray of float64, shape (n,)
        ``d_minus / (d_plus + d_minus)`` in [0, 1], where ``d_plus`` and ``d_minus`` are the
        weighted Euclidean distances to the ideal and anti-ideal points. Rows with
        ``d_plus + d_minus == 0`` (every row equal in every weighted criterion) score 0.5.
        ``out`` itself when given.
    """
    x, w, b = check_topsis_inputs(matrix, weights, benefit, norm=norm)
    x = x.astype(np.float64)
    n, m = x.shape
    if out is not None:
        check_out(out, n, matrix)
    if n == 0:
        return np.zeros(0, dtype=np.float64) if out is None else out
    if norm == "vector":
        scale = np.sqrt((x**2).sum(axis=0))
        v = np.divide(x, scale, out=np.zeros_like(x), where=scale > 0)
    else:
        lo, hi = x.min(axis=0), x.max(axis=0)
        rng = hi - lo
        v = np.divide(x - lo, rng, out=np.zeros_like(x), where=rng > 0)
    v = v * w
    ideal = np.where(b, v.max(axis=0), v.min(axis=0))
    anti = np.where(b, v.min(axis=0), v.max(axis=0))
    d_plus = np.sqrt(((v - ideal) ** 2).sum(axis=1))
    d_minus = np.sqrt(((v - anti) ** 2).sum(axis=1))
    total = d_plus + d_minus
    score = np.divide(d_minus, total, out=np.full(n, 0.5), where=total > 0)
    if out is None:
        return score
    out[...] = score
    return out


def top_k(scores, k):
    """Indices of the ``k`` largest scores, best first.

    Ties are broken by the lower row index. ``k`` larger than ``n`` returns all rows.
    ``scores`` must be 1-D and free of NaN.

    Returns
    -------
    ndarray of int64, shape (min(k, n),)
    """
    s = check_scores(scores)
    k = check_k(k)
    order = np.lexsort((np.arange(s.shape[0]), -s))
    return order[:k].astype(np.int64)


# ---------------------------------------------------------------------------------------
# SMAA over TOPSIS weights (robust rankings)
# ---------------------------------------------------------------------------------------


def smaa_topsis(matrix, weights_samples, benefit, *, k, norm="vector", candidates=None):
    """Stochastic multicriteria acceptability analysis of TOPSIS over weight samples.

    For every weight vector (row of ``weights_samples``) the candidate rows are ranked by
    TOPSIS closeness, with the normalization, ideal and anti-ideal points computed on the
    FULL ``matrix`` (so they do not depend on the weights nor on the candidate set). The
    exact score and tie-break are documented in :mod:`gpurank.kernels._smaa`: closeness
    (in an equivalent, floating-point monotone form), ties broken by the lexicographic
    order of the canonical cost rows, then by the lower row index. With that rule a row
    never ranks below a row it dominates, so a row dominated by ``k`` or more rows is never
    in the top ``k`` and may be left out of ``candidates`` without changing any count.

    Parameters
    ----------
    matrix : ndarray of shape (n, m)
        Criteria values, finite.
    weights_samples : ndarray of shape (S, m)
        Non-negative weight vectors, each normalized to sum to 1.
    benefit : ndarray of bool, shape (m,)
        True where larger is better.
    k : int >= 0, keyword-only
        Size of the top set counted by ``topk_counts``.
    norm : {"vector", "minmax"}, keyword-only
    candidates : 1-D int array or None, keyword-only
        Distinct row indices to rank (all rows when None). Ranks are ranks among them.

    Returns
    -------
    top1_counts : int64[c]
        Samples under which the candidate ranks first.
    topk_counts : int64[c]
        Samples under which it ranks among the first ``k``.
    rank_sums, rank_sq_sums : int64[c]
        Sum over samples of its rank among the candidates (1 = best), and of its square.
    central_weight_sums : float64[c, m]
        Sum of the (normalized) weight vectors under which it ranks first.

    Outputs follow the order of ``candidates``.
    """
    from ._smaa import check_smaa_inputs, gaps

    costs, w, cand, k = check_smaa_inputs(matrix, weights_samples, benefit, k=k, norm=norm,
                                          candidates=candidates)
    m = costs.shape[1]
    c = cand.shape[0]
    p_all, n_all = gaps(costs, norm)
    p, nn, cc = p_all[cand], n_all[cand], costs[cand]
    top1 = np.zeros(c, dtype=np.int64)
    topk = np.zeros(c, dtype=np.int64)
    rsum = np.zeros(c, dtype=np.int64)
    rsq = np.zeros(c, dtype=np.int64)
    cw = np.zeros((c, m), dtype=np.float64)
    if c == 0:
        return top1, topk, rsum, rsq, cw
    for ws in w:
        dp = np.zeros(c)
        dm = np.zeros(c)
        for j in range(m):
            a = ws[j] * p[:, j]
            dp = dp + a * a
            bb = ws[j] * nn[:, j]
            dm = dm + bb * bb
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.where(dm > 0, dp / dm, np.where(dp == 0, 1.0, np.inf))
        keys = [cand] + [cc[:, j] for j in range(m - 1, -1, -1)] + [q]
        order = np.lexsort(keys)
        rank = np.empty(c, dtype=np.int64)
        rank[order] = np.arange(1, c + 1)
        top1 += rank == 1
        topk += rank <= k
        rsum += rank
        rsq += rank * rank
        cw[order[0]] += ws
    return top1, topk, rsum, rsq, cw
