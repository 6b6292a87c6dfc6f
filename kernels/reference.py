"""Slow, obvious NumPy oracles for every kernel. The contract of each kernel lives here.

Every fast implementation (:mod:`gpurank.kernels.cpu`, :mod:`gpurank.kernels.cuda`) has the
same name, signature and contract as the function here and is tested against it. These
functions favour clarity over speed: the pairwise ones are O(n^2 m) and allocate O(n^2), so
keep n small.

Conventions shared by all kernels
---------------------------------
``costs`` is a ``float32`` or ``float64`` array of shape ``(n, m)`` whose criteria have all
been canonicalized to "minimize" (a "max" criterion is negated once, at the boundary).
Row ``a`` *dominates* row ``b`` when ``a <= b`` in every criterion and ``a < b`` in at least
one. Equal rows do not dominate each other. Inputs are never mutated; NaN and infinities are
rejected naming the first bad cell.

The SMAA section also holds the drawn SMAA (values drawn in their intervals), whose rows'
intervals are a :class:`gpurank.kernels.RowFactors` (shared by every implementation).

The last sections hold the oracles of the cross-partition kernels of
:mod:`gpurank.kernels.cpu.blocks` (how the rows of one block are dominated by another) and
of the key-range divide and conquer, :mod:`gpurank.kernels.cpu.ranges`.
"""

from __future__ import annotations

import numpy as np

from . import _topsis_stats
from ._vikor_stats import VikorStats, check_q_args
from ._smaa import (
    check_factors,
    corners,
    draw_moves,
    effective_exponent,
    gaps,
    moved,
    unit_vectors,
)
from ._validate import (
    check_benefit,
    check_cap,
    check_coordinates,
    check_costs,
    check_depth,
    check_flags,
    check_k,
    check_out,
    check_pair,
    check_ranks,
    check_scores,
    check_smaa_inputs,
    check_splitters,
    check_stats,
    check_topsis_inputs,
)

__all__ = [
    "MAX_CRITERIA",
    "dominance_matrix",
    "pareto_front",
    "pareto_rank",
    "domination_count",
    "dominated_count",
    "topsis_stats",
    "topsis_from_stats",
    "topsis",
    "vikor_sr",
    "vikor_from_sr",
    "vikor",
    "top_k",
    "smaa_topsis",
    "smaa_topsis_drawn",
    "smaa_interval_candidates",
    "cross_domination_count",
    "cross_max_rank",
    "seeded_rank",
    "count_preceding",
    "range_index",
    "below",
    "below_cells",
    "chain_rank",
]

#: No limit on the number of criteria (the CUDA kernels take at most 16).
MAX_CRITERIA = None


def _dominates(a, b):
    """``D[i, j]``: row ``i`` of ``a`` dominates row ``j`` of ``b`` (O(n_a n_b m) memory)."""
    le = np.all(a[:, None, :] <= b[None, :, :], axis=2)
    lt = np.any(a[:, None, :] < b[None, :, :], axis=2)
    return le & lt


def dominance_matrix(costs):
    """Return ``D`` with ``D[a, b]`` true when row ``a`` dominates row ``b``.

    O(n^2 m) time and O(n^2) memory: for the oracles only.

    Examples
    --------
    >>> dominance_matrix([[1.0, 1.0], [2.0, 2.0], [2.0, 2.0]]).astype(int)
    array([[0, 1, 1],
           [0, 0, 0],
           [0, 0, 0]])
    """
    c = check_costs(costs)
    return _dominates(c, c)


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

    Examples
    --------
    >>> pareto_front([[1.0, 2.0], [2.0, 1.0], [2.0, 2.0], [1.0, 2.0]])
    array([ True,  True, False,  True])
    """
    return ~dominance_matrix(costs).any(axis=0)


def pareto_rank(costs, *, depth=None):
    """Non-dominated sorting: the index of the front each row belongs to.

    Front 0 is the Pareto front; front ``r`` is the front of what remains after removing
    fronts ``0 .. r-1``. Equivalently, the rank of a row is the length of the longest chain
    of rows dominating one another that ends at it (0 when nothing dominates it).

    Parameters
    ----------
    costs : ndarray of shape (n, m)
    depth : int >= 1 or None, keyword-only
        When given, return ``min(rank, depth)``: fronts ``0 .. depth-1`` exactly, every
        later row ``depth`` (fast implementations stop after ``depth`` fronts).

    Returns
    -------
    ndarray of int32, shape (n,)

    Examples
    --------
    >>> c = [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0], [0.0, 4.0]]
    >>> pareto_rank(c)
    array([0, 1, 2, 0], dtype=int32)
    >>> pareto_rank(c, depth=1)
    array([0, 1, 1, 0], dtype=int32)
    """
    depth = check_depth(depth)
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
    return rank if depth is None else np.minimum(rank, depth).astype(np.int32)


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

    Examples
    --------
    >>> domination_count([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    array([0, 1, 2])
    >>> domination_count([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]], cap=1)
    array([0, 1, 1])
    """
    cap = check_cap(cap)
    out = dominance_matrix(costs).sum(axis=0).astype(np.int64)
    return out if cap is None else np.minimum(out, cap)


def dominated_count(costs, *, cap=None):
    """How many rows each row dominates (``cap`` as in :func:`domination_count`).

    Returns
    -------
    ndarray of int64, shape (n,)

    Examples
    --------
    >>> dominated_count([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    array([2, 1, 0])
    """
    cap = check_cap(cap)
    out = dominance_matrix(costs).sum(axis=1).astype(np.int64)
    return out if cap is None else np.minimum(out, cap)


# ---------------------------------------------------------------------------------------
# TOPSIS ([HwangYoon1981]), in two phases: column statistics, then scores
# ---------------------------------------------------------------------------------------


def topsis_stats(matrix):
    """Column statistics TOPSIS normalizes with (the first of its two passes).

    Parameters
    ----------
    matrix : ndarray of shape (n, m)
        Criteria values, finite.

    Returns
    -------
    TopsisStats
        ``n``, column ``lo`` and ``hi``, and the column norms as ``scale * sqrt(ssq)``:
        ``scale`` the largest power of two <= max |x| (0 for a zero column) and ``ssq =
        sum((x / scale)^2)``, which cannot overflow or underflow for any finite column.
        Stats of partitions combine with :meth:`TopsisStats.merge`.

    Examples
    --------
    >>> s = topsis_stats([[3.0, -1.0], [4.0, 0.0]])
    >>> s.n, s.lo, s.hi, s.scale, s.norm
    (2, array([ 3., -1.]), array([4., 0.]), array([4., 1.]), array([5., 1.]))
    """
    return _topsis_stats.stats_of(check_costs(matrix, name="matrix").astype(np.float64,
                                                                          copy=False))


def topsis_from_stats(matrix, stats, weights, benefit, *, norm="vector", out=None):
    """TOPSIS closeness of the rows of ``matrix``, normalized by ``stats`` (the second pass).

    ``stats`` are the :func:`topsis_stats` of the whole table the rows belong to (of
    ``matrix`` itself, or merged over every partition of a table): the normalization and
    the ideal and anti-ideal points come from them, so every partition is scored as part of
    the whole table. Parameters and result as in :func:`topsis`.

    Examples
    --------
    >>> x = [[1.0, 1.0], [3.0, 3.0], [2.0, 2.0]]
    >>> s = topsis_stats(x)
    >>> topsis_from_stats([[2.0, 2.0]], s, [1, 1], [False, False], norm="minmax")
    array([0.5])
    """
    x, w, b = check_topsis_inputs(matrix, weights, benefit, norm=norm)
    x = x.astype(np.float64)
    n, m = x.shape
    check_stats(stats, m, n)
    if out is not None:
        check_out(out, n, matrix)
    if n == 0:
        return np.zeros(0, dtype=np.float64) if out is None else out
    # Every column in units of its scale first (see TopsisStats): nothing overflows.
    scale = stats.scale
    xs, lo, hi = (np.divide(a, scale, out=np.zeros_like(a), where=scale > 0)
                  for a in (x, stats.lo, stats.hi))
    if norm == "vector":
        den, off = np.sqrt(stats.ssq), np.zeros(m)
    else:
        den, off = hi - lo, lo
    v, vlo, vhi = (np.divide(a - off, den, out=np.zeros_like(a), where=den > 0) * w
                   for a in (xs, lo, hi))
    ideal = np.where(b, vhi, vlo)
    anti = np.where(b, vlo, vhi)
    d_plus = np.sqrt(((v - ideal) ** 2).sum(axis=1))
    d_minus = np.sqrt(((v - anti) ** 2).sum(axis=1))
    total = d_plus + d_minus
    score = np.divide(d_minus, total, out=np.full(n, 0.5), where=total > 0)
    if out is None:
        return score
    out[...] = score
    return out


def topsis(matrix, weights, benefit, *, norm="vector", out=None):
    """TOPSIS closeness to the ideal solution ([HwangYoon1981]).

    ``topsis_from_stats(matrix, topsis_stats(matrix), ...)``.

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
        is left at zero: it cannot separate the rows. Scores do not change when a column
        is multiplied by a positive constant, whatever its magnitude (as long as it stays
        finite).
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

    Examples
    --------
    >>> topsis([[1.0, 1.0], [3.0, 3.0], [2.0, 2.0]], [1, 1], [False, False]).round(6)
    array([1. , 0. , 0.5])
    """
    x = check_costs(matrix, name="matrix")
    if out is not None:
        check_out(out, x.shape[0], matrix)  # against the caller's array, not a copy of it
    return topsis_from_stats(x, topsis_stats(x), weights, benefit, norm=norm, out=out)


# ---------------------------------------------------------------------------------------
# VIKOR ([Opricovic2004]): column statistics (TOPSIS's), S and R per row, then Q
# ---------------------------------------------------------------------------------------


def vikor_sr(matrix, stats, weights, benefit):
    """VIKOR's group utility ``S`` and individual regret ``R`` of the rows of ``matrix``.

    With ``f*_j`` the best and ``f-_j`` the worst value of column j over the whole table
    (``stats``: the :func:`topsis_stats` of the table, of ``matrix`` itself or merged over
    its partitions) and ``d_ij = w_j (f*_j - x_ij) / (f*_j - f-_j)`` (0 in a column whose
    values are all equal): ``S_i = sum_j d_ij`` and ``R_i = max_j d_ij``.

    Parameters
    ----------
    matrix : ndarray of shape (n, m)
        Criteria values, finite.
    stats : TopsisStats
        Column minima and maxima of the whole table (only ``lo`` and ``hi`` are read).
    weights : ndarray of shape (m,)
        Non-negative weights; they are normalized to sum to 1, so ``S`` and ``R`` lie in
        [0, 1].
    benefit : ndarray of bool, shape (m,)
        True where larger is better.

    Returns
    -------
    s, r : ndarray of float64, shape (n,)

    Examples
    --------
    >>> x = [[1.0, 3.0], [3.0, 1.0], [2.0, 2.0]]
    >>> vikor_sr(x, topsis_stats(x), [1, 1], [False, False])
    (array([0.5, 0.5, 0.5]), array([0.5 , 0.5 , 0.25]))
    """
    x, w, b = check_topsis_inputs(matrix, weights, benefit, norm="minmax")
    x = x.astype(np.float64)
    n, m = x.shape
    check_stats(stats, m, n)
    best = np.where(b, stats.hi, stats.lo)
    worst = np.where(b, stats.lo, stats.hi)
    span = best - worst
    d = np.zeros((n, m))
    for j in range(m):
        if span[j] != 0:
            d[:, j] = w[j] * (best[j] - x[:, j]) / span[j]
    if n == 0:
        return np.zeros(0), np.zeros(0)
    return d.sum(axis=1), d.max(axis=1)


def vikor_from_sr(s, r, stats, *, v=0.5):
    """VIKOR's compromise ``Q`` from ``S`` and ``R`` (:func:`vikor_sr`) and their extremes
    over the whole table (``stats``: ``VikorStats.of(s, r)``, or merged over partitions).

    ``Q_i = v (S_i - S*) / (S- - S*) + (1 - v) (R_i - R*) / (R- - R*)``; a term whose
    extremes are equal is 0. Lower is better; ``Q`` lies in [0, 1].

    Examples
    --------
    >>> s, r = np.array([0.5, 0.5, 0.5]), np.array([0.5, 0.5, 0.25])
    >>> vikor_from_sr(s, r, VikorStats.of(s, r))
    array([0.5, 0.5, 0. ])
    """
    s = np.asarray(s, dtype=np.float64).reshape(-1)
    r = np.asarray(r, dtype=np.float64).reshape(-1)
    v = check_q_args(s.shape[0], r.shape[0], stats, v)
    q = np.zeros(s.shape[0])
    if stats.s_hi > stats.s_lo:
        q += v * (s - stats.s_lo) / (stats.s_hi - stats.s_lo)
    if stats.r_hi > stats.r_lo:
        q += (1 - v) * (r - stats.r_lo) / (stats.r_hi - stats.r_lo)
    return q


def vikor(matrix, weights, benefit, *, v=0.5):
    """VIKOR's compromise ranking index ``Q`` ([Opricovic2004]); lower is better.

    ``vikor_from_sr(*vikor_sr(matrix, topsis_stats(matrix), ...), VikorStats.of(s, r))``:
    the columns are normalized linearly between their best and worst values (VIKOR's own
    normalization), ``S`` weighs the rows by the majority's utility, ``R`` by the largest
    single regret, and ``v`` (default 0.5) trades one for the other.

    Parameters
    ----------
    matrix, weights, benefit
        As :func:`vikor_sr`.
    v : float in [0, 1], keyword-only
        Weight of ``S`` against ``R``.

    Returns
    -------
    ndarray of float64, shape (n,)
        ``Q`` in [0, 1]; 0 for every row when ``S`` and ``R`` are each the same for every
        row (one row, say). Equal to ``pymcdm.methods.VIKOR(v=v)`` wherever that is defined
        (it raises on a constant column and divides by zero when ``S`` or ``R`` is
        constant).

    Examples
    --------
    >>> vikor([[1.0, 3.0], [3.0, 1.0], [2.0, 2.0]], [1, 1], [False, False])
    array([0.5, 0.5, 0. ])
    """
    x = check_costs(matrix, name="matrix")
    s, r = vikor_sr(x, topsis_stats(x), weights, benefit)
    return vikor_from_sr(s, r, VikorStats.of(s, r), v=v)


def top_k(scores, k):
    """Indices of the ``k`` largest scores, best first.

    Ties are broken by the lower row index. ``k`` larger than ``n`` returns all rows.
    ``scores`` must be 1-D and free of NaN.

    Returns
    -------
    ndarray of int64, shape (min(k, n),)

    Examples
    --------
    >>> top_k([0.5, 0.9, 0.5, 0.1, 0.9], 3)
    array([1, 4, 0])
    """
    s = check_scores(scores)
    k = check_k(k)
    order = np.lexsort((np.arange(s.shape[0]), -s))
    return order[:k].astype(np.int64)


# ---------------------------------------------------------------------------------------
# SMAA over TOPSIS weights (robust rankings)
# ---------------------------------------------------------------------------------------


def smaa_topsis(matrix, weights_samples, benefit, *, k, norm="vector", candidates=None,
                stats=None):
    """Stochastic multicriteria acceptability analysis of TOPSIS over weight samples
    ([Lahdelma1998]).

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
    stats : TopsisStats or None, keyword-only
        The :func:`topsis_stats` of the FULL table when ``matrix`` holds only some of its
        rows (merged over partitions with :meth:`TopsisStats.merge`): the normalization, ideal
        and anti-ideal come from them, so ``smaa_topsis(x[cand], ..., stats=topsis_stats(x))``
        equals ``smaa_topsis(x, ..., candidates=cand)``. None: the stats of ``matrix``.

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

    References
    ----------
    [Lahdelma1998] (``docs/references.md``).

    Examples
    --------
    >>> x = [[1.0, 3.0], [3.0, 1.0], [3.0, 3.0]]
    >>> top1, topk, rsum, rsq, cw = smaa_topsis(x, [[1, 0], [0, 1]], [False, False], k=2)
    >>> top1, topk, rsum
    (array([1, 1, 0]), array([2, 2, 0]), array([3, 3, 6]))
    """
    costs, w, cand, k, stats = check_smaa_inputs(matrix, weights_samples, benefit, k=k,
                                                 norm=norm, candidates=candidates, stats=stats)
    m = costs.shape[1]
    c = cand.shape[0]
    p_all, n_all = gaps(costs, norm, stats)
    p, nn, cc = p_all[cand], n_all[cand], costs[cand]
    sums = _smaa_sums(c, m)
    if c == 0:
        return sums
    for ws in w:
        q = _distance_ratio(ws, p, nn)
        order = np.lexsort([cand] + [cc[:, j] for j in range(m - 1, -1, -1)] + [q])
        _tally(order, k, ws, *sums)
    return sums


def _smaa_sums(c, m):
    """``top1, topk, rsum, rsq`` (int64, c) and ``cw`` (float64, (c, m)), all zero."""
    return (np.zeros(c, dtype=np.int64), np.zeros(c, dtype=np.int64),
            np.zeros(c, dtype=np.int64), np.zeros(c, dtype=np.int64),
            np.zeros((c, m), dtype=np.float64))


def _distance_ratio(ws, p, nn):
    """Per candidate, ``D+^2 / D-^2`` under the weights ``ws`` from its gaps ``p`` to the
    ideal and ``nn`` to the anti-ideal (columns summed in order): lowest is closest, as
    TOPSIS closeness orders them (1 when both are 0, +inf when only D- is)."""
    dp = np.zeros(p.shape[0])
    dm = np.zeros(p.shape[0])
    for j in range(p.shape[1]):
        a = ws[j] * p[:, j]
        dp = dp + a * a
        bb = ws[j] * nn[:, j]
        dm = dm + bb * bb
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(dm > 0, dp / dm, np.where(dp == 0, 1.0, np.inf))


def _tally(order, k, ws, top1, topk, rsum, rsq, cw):
    """Add one sample's ranks (``order``: candidates best first) to the sums, in place."""
    rank = np.empty(order.shape[0], dtype=np.int64)
    rank[order] = np.arange(1, order.shape[0] + 1)
    top1 += rank == 1
    topk += rank <= k
    rsum += rank
    rsq += rank * rank
    cw[order[0]] += ws


def smaa_topsis_drawn(matrix, weights_samples, benefit, factors, *, k, norm="vector",
                      candidates=None, stats=None):
    """:func:`smaa_topsis` with each row's values also drawn inside its interval: sample
    ``s`` ranks the candidates under weight vector ``s`` and, independently, one factor per
    row (``factors``, a :class:`~gpurank.kernels._smaa.RowFactors`; see
    :mod:`gpurank.kernels._smaa` for the draw).

    The normalization, ideal and anti-ideal are those of the undrawn FULL table (``stats``,
    or the column statistics of ``matrix``); a drawn value beyond the ideal or anti-ideal
    of its column counts as reaching it (gaps are clipped at 0). Ties in the score (rows
    drawn beyond the ideal in every weighted column all score ``q = 0``) are broken by the
    weighted sum ``sum_j w_j r_j`` of the normalized drawn values (lower first: farther
    beyond the ideal), then by the lexicographic order of the drawn canonical rows, then by
    the lower row index; so a row whose drawn values dominate another's ranks above it in
    that sample, and rows outside :func:`smaa_interval_candidates` are never in the top
    ``k``.

    Parameters
    ----------
    matrix, weights_samples, benefit, k, norm, candidates, stats
        As :func:`smaa_topsis`.
    factors : RowFactors
        Of the rows of ``matrix``.

    Returns
    -------
    top1_counts, topk_counts, rank_sums, rank_sq_sums, central_weight_sums
        As :func:`smaa_topsis`.

    Examples
    --------
    Row 0 is better than row 1 at its point estimate, and off by up to 2x either way:

    >>> from gpurank.kernels._smaa import RowFactors
    >>> x = [[1.0, 1.0], [1.2, 1.2], [3.0, 3.0]]
    >>> f = RowFactors(lo=[0.5, 1.0, 1.0], hi=[2.0, 1.0, 1.0], exponent=[1, 1], seed=0)
    >>> top1 = smaa_topsis_drawn(x, [[0.5, 0.5]] * 100, [False, False], f, k=1)[0]
    >>> top1.tolist()
    [64, 36, 0]
    """
    costs, w, cand, k, stats = check_smaa_inputs(matrix, weights_samples, benefit, k=k,
                                                 norm=norm, candidates=candidates, stats=stats)
    n, m = costs.shape
    f = check_factors(factors, n, m)
    e = effective_exponent(f, check_benefit(benefit, m))
    corners(costs, f, benefit)  # refuses factors that move a value out of the float range
    c = cand.shape[0]
    sums = _smaa_sums(c, m)
    if c == 0:
        return sums
    pre, offset, div, rmin, rmax = unit_vectors(costs, norm, stats)
    for s, ws in enumerate(w):
        x = moved(costs[cand], draw_moves(f, s, s + 1, cand)[0], e, f.log10)
        r = np.divide(x * pre - offset, div, out=np.zeros_like(x), where=div > 0)
        q = _distance_ratio(ws, np.maximum(r - rmin, 0.0), np.maximum(rmax - r, 0.0))
        z = np.zeros(c)
        for j in range(m):
            z = z + ws[j] * r[:, j]
        order = np.lexsort([cand] + [x[:, j] for j in range(m - 1, -1, -1)] + [z, q])
        _tally(order, k, ws, *sums)
    return sums


def smaa_interval_candidates(matrix, benefit, factors, *, k):
    """The rows that can be in the top ``k`` of some sample of :func:`smaa_topsis_drawn`:
    those whose optimistic corner (the best value of every column over the row's factor
    interval) is dominated by the pessimistic corners of fewer than ``k`` rows. Any row
    whose pessimistic corner dominates this row's optimistic corner dominates it in every
    sample, hence ranks above it.

    Parameters
    ----------
    matrix, benefit
        As :func:`smaa_topsis`.
    factors : RowFactors
        Of the rows of ``matrix``.
    k : int >= 0, keyword-only

    Returns
    -------
    ndarray of int64
        Row indices, increasing.

    Examples
    --------
    Row 2 is behind rows 0 and 1 however far they are off; row 1 may fall behind row 2:

    >>> from gpurank.kernels._smaa import RowFactors
    >>> f = RowFactors(lo=[0.9, 1.0, 1.0], hi=[1.1, 2.0, 1.0], exponent=[1, 1])
    >>> smaa_interval_candidates([[1.0, 1.0], [1.5, 1.5], [2.0, 2.0]], [False, False], f, k=2)
    array([0, 1, 2])
    >>> smaa_interval_candidates([[1.0, 1.0], [1.5, 1.5], [4.0, 4.0]], [False, False], f, k=2)
    array([0, 1])
    """
    x = check_costs(matrix, name="matrix").astype(np.float64, copy=False)
    b = check_benefit(benefit, x.shape[1])
    k = check_k(k)
    f = check_factors(factors, *x.shape)
    opt, pess = corners(np.where(b, -x, x), f, b)
    count = _dominates(pess, opt).sum(axis=0)
    return np.flatnonzero(count < k).astype(np.int64)


# ---------------------------------------------------------------------------------------
# Cross-partition kernels (gpurank.kernels.cpu.blocks)
# ---------------------------------------------------------------------------------------


def cross_domination_count(costs_a, costs_b):
    """How many rows of ``costs_b`` dominate each row of ``costs_a``.

    Parameters
    ----------
    costs_a : ndarray of shape (n_a, m)
    costs_b : ndarray of shape (n_b, m)
        Criteria to minimize, finite, with the same columns.

    Returns
    -------
    ndarray of int64, shape (n_a,)

    Examples
    --------
    >>> cross_domination_count([[2.0, 2.0], [0.0, 0.0]], [[1.0, 1.0], [2.0, 2.0]])
    array([1, 0])
    """
    a, b = check_pair(costs_a, costs_b)
    return _dominates(b, a).sum(axis=0).astype(np.int64)


def cross_max_rank(costs_a, costs_b, rank_b):
    """For each row of ``costs_a``, the largest ``rank_b`` among the rows of ``costs_b`` that
    dominate it, or -1 when no row of ``costs_b`` does.

    Parameters
    ----------
    costs_a : ndarray of shape (n_a, m)
    costs_b : ndarray of shape (n_b, m)
    rank_b : ndarray of int, shape (n_b,), >= 0

    Returns
    -------
    ndarray of int64, shape (n_a,)

    Examples
    --------
    >>> cross_max_rank([[2.0, 2.0], [0.0, 0.0]], [[1.0, 1.0], [1.5, 1.5]], [3, 5])
    array([ 5, -1])
    """
    a, b = check_pair(costs_a, costs_b)
    rb = check_ranks(rank_b, b.shape[0], "rank_b")
    return np.where(_dominates(b, a).T, rb[None, :], -1).max(
        axis=1, initial=-1).astype(np.int64)


def seeded_rank(costs, lower=None):
    """Longest dominance chains inside one block with lower bounds from outside.

    ``rank[i] = max(lower[i], 1 + max(rank[j] for rows j of the block dominating i))``; with
    ``lower`` None (all 0) this is :func:`pareto_rank`.

    Parameters
    ----------
    costs : ndarray of shape (n, m)
    lower : ndarray of int, shape (n,), or None

    Returns
    -------
    ndarray of int32, shape (n,)

    Examples
    --------
    >>> seeded_rank([[1.0, 1.0], [2.0, 2.0], [0.0, 3.0]], [4, 0, 0])
    array([4, 5, 0], dtype=int32)
    """
    c = check_costs(costs)
    n = c.shape[0]
    low = np.zeros(n, dtype=np.int64) if lower is None else check_ranks(lower, n, "lower")
    dom = _dominates(c, c).T  # dom[i, j]: row j dominates row i
    # least fixed point of rank = max(lower, 1 + max rank of dominators): longest chains
    rank = np.maximum(low, 0)
    while True:
        new = np.maximum(rank, np.where(dom, rank[None, :] + 1, 0).max(axis=1, initial=0))
        if np.array_equal(new, rank):
            return rank.astype(np.int32)
        rank = new


def count_preceding(score, prank, row_id, sorted_keys):
    """For each query row, how many rows of a block come before it in the final-rank order:
    TOPSIS score descending, then Pareto rank ascending, then row id ascending.

    Parameters
    ----------
    score, prank, row_id : 1-D arrays of the query rows
    sorted_keys : tuple (score, prank, row_id) of the block's rows
        From :func:`gpurank.kernels.cpu.blocks.sort_keys`; the oracle accepts them in any
        order.

    Returns
    -------
    ndarray of int64

    Examples
    --------
    >>> count_preceding([0.5], [0], [7], ([0.9, 0.5, 0.5], [3, 0, 0], [1, 2, 9]))
    array([2])
    """
    bs, bp, bi = (np.asarray(x) for x in sorted_keys)
    s, p, i = (np.asarray(x)[:, None] for x in (score, prank, row_id))
    less = (bs > s) | ((bs == s) & ((bp < p) | ((bp == p) & (bi < i))))
    return less.sum(axis=1).astype(np.int64)


# ---------------------------------------------------------------------------------------
# Key-range divide and conquer (gpurank.kernels.cpu.ranges)
# ---------------------------------------------------------------------------------------


def range_index(costs, splitters, columns):
    """How many splitter rows are lexicographically <= each row read in the column order
    ``columns`` (the row's key range).

    Examples
    --------
    >>> range_index([[1.0, 5.0], [2.0, 0.0], [2.0, 9.0]], [[2.0, 1.0]], [0, 1])
    array([0, 0, 1], dtype=int32)
    """
    c = check_costs(costs).astype(np.float64)
    s, cols = check_splitters(splitters, columns, c.shape[1])
    out = np.zeros(c.shape[0], dtype=np.int32)
    for i, row in enumerate(c[:, cols]):
        out[i] = sum(tuple(sp) <= tuple(row) for sp in s)
    return out


def below(first, second, third, contributes, value):
    """For every asker (``contributes`` False): the number of contributors <= it in all
    three integer coordinates, and their largest ``value`` (-1 when none; 0 and -1 for
    contributors).

    Examples
    --------
    >>> below([0, 1, 1], [0, 0, 2], [3, 3, 3], np.array([True, False, True]), [7, 0, 2])
    (array([0, 1, 0]), array([-1,  7, -1]))
    """
    a, b, c = check_coordinates((first, second, third), ("first", "second", "third"), 1 << 62)
    cont = check_flags(contributes, a.shape[0], "contributes")
    (val,) = check_coordinates((value,), ("value",), 1 << 62)
    le = (a[:, None] <= a[None, :]) & (b[:, None] <= b[None, :]) & (c[:, None] <= c[None, :])
    le &= cont[:, None] & ~cont[None, :]  # le[i, j]: contributor i below asker j
    best = np.where(le, val[:, None], -1).max(axis=0, initial=-1)
    return le.sum(axis=0).astype(np.int64), best.astype(np.int64)


def below_cells(exact, cell_y, cell_z, contributes, value, init_count=None, init_best=None):
    """For every asker: the contributors with ``exact`` <= and both cells strictly below,
    counted, with their largest ``value``; ``init_count`` / ``init_best`` (per cell: count
    and largest value of earlier contributors, below every asker in ``exact``) added for
    the cells strictly below.

    Examples
    --------
    >>> below_cells([5, 6, 6], [0, 1, 1], [0, 1, 0], np.array([True, False, False]),
    ...             [4, 0, 0])
    (array([0, 1, 0]), array([-1,  4, -1]))
    """
    e = np.asarray(exact, dtype=np.int64)
    y, z = np.asarray(cell_y, dtype=np.int64), np.asarray(cell_z, dtype=np.int64)
    cont = check_flags(contributes, e.shape[0], "contributes")
    val = np.asarray(value, dtype=np.int64)
    le = (e[:, None] <= e[None, :]) & (y[:, None] < y[None, :]) & (z[:, None] < z[None, :])
    le &= cont[:, None] & ~cont[None, :]
    cnt = le.sum(axis=0).astype(np.int64)
    best = np.where(le, val[:, None], -1).max(axis=0, initial=-1).astype(np.int64)
    if init_count is not None:
        ic, ib = np.asarray(init_count), np.asarray(init_best)
        for j in np.flatnonzero(~cont):
            cnt[j] += ic[:y[j], :z[j]].sum()
            best[j] = max(best[j], ib[:y[j], :z[j]].max(initial=-1))
    cnt[cont] = 0
    best[cont] = -1
    return cnt, best


def chain_rank(costs, lower=None):
    """Pareto ranks of a key range seeded by the earlier ranges: ``rank[i] = max(lower[i],
    1 + max(rank[j] for rows j here dominating i))`` (:func:`seeded_rank`), for bounds that
    never decrease along dominance; the oracle checks that they do not.

    Examples
    --------
    >>> chain_rank([[1.0, 1.0], [2.0, 2.0], [0.0, 3.0]], [4, 4, 0])
    array([4, 5, 0], dtype=int32)
    """
    c = check_costs(costs)
    if lower is not None:
        low = check_ranks(lower, c.shape[0], "lower")
        d = _dominates(c, c)
        if (d & (low[:, None] > low[None, :])).any():
            raise ValueError("lower must never decrease along dominance")
    return seeded_rank(c, lower)
