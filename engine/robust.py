"""Robust rankings: stochastic multicriteria acceptability analysis (SMAA) over TOPSIS weights.

TOPSIS needs weights, and people rarely know them. SMAA draws many weight vectors, ranks the
configurations under each, and reports for every configuration how often it ranks first
(``p_top1``), how often it is in the top k (``p_topk``, rank acceptability), its mean rank,
and the mean weights under which it ranks first (central weights). See docs/robust.md.

Weights are drawn uniformly from the simplex (Dirichlet(1, ..., 1)) or, with bounds per
criterion, uniformly from the simplex restricted to the bounds: draws from the (smaller)
simplex above the lower bounds, ``low + (1 - sum(low)) * Dirichlet(1)``, rejecting those
above an upper bound. Seeded.

Exactness with pruning: the normalization, ideal and anti-ideal come from the full table, so
a row never ranks above a row that dominates it (kernels/_smaa.py), and a row dominated by k
or more rows is never in the top k. Only the rows dominated by fewer than k rows
(``domination_count(costs, cap=k) < k``) are scored; the others have ``p_top1 = p_topk = 0``
exactly. ``expected_rank`` is the rank among those candidates.
"""

from __future__ import annotations

import math

import numpy as np

from .errors import UsageError
from .results import RobustResult

__all__ = [
    "ROBUST_COLUMNS",
    "robust_from_candidates",
    "robust_from_costs",
    "robust_from_costs_spec",
    "weight_bounds",
    "robust_ranking",
    "robust_summary",
    "sample_weights",
]

ROBUST_COLUMNS = ("p_top1", "p_topk", "expected_rank")

#: rejection sampling gives up after this many draws per requested sample
_MAX_DRAWS_PER_SAMPLE = 1000


def sample_weights(m, samples, *, seed=0, bounds=None) -> np.ndarray:
    """``samples`` weight vectors of length ``m``, each summing to 1, uniform on the simplex
    (restricted to ``bounds``, a list of ``(low, high)`` per criterion, when given).

    Raises
    ------
    UsageError
        Infeasible bounds (lower bounds summing to more than 1, upper bounds to less than 1,
        low > high), or bounds leaving too small a part of the simplex to sample.
    """
    rng = np.random.default_rng(seed)
    if bounds is None:
        return rng.dirichlet(np.ones(m), size=samples)
    lo = np.array([b[0] for b in bounds], dtype=np.float64)
    hi = np.array([b[1] for b in bounds], dtype=np.float64)
    if lo.shape != (m,) or hi.shape != (m,):
        raise UsageError(f"weight bounds must give one (low, high) per criterion ({m})")
    if (lo < 0).any() or (hi > 1).any() or (lo > hi).any():
        raise UsageError("weight bounds must satisfy 0 <= low <= high <= 1")
    if lo.sum() > 1 + 1e-12:
        raise UsageError(f"--weights-range lower bounds sum to {lo.sum():g} > 1; weights sum to "
                         "1, so no weight vector satisfies them: lower some bounds")
    if hi.sum() < 1 - 1e-12:
        raise UsageError(f"--weights-range upper bounds sum to {hi.sum():g} < 1 (criteria without "
                         "a range may take up to 1); no weight vector satisfies them: raise "
                         "some bounds")
    free = 1.0 - lo.sum()
    if free <= 1e-12:  # the lower bounds are the only feasible point
        return np.tile(lo / lo.sum(), (samples, 1))
    out = np.empty((samples, m))
    got = drawn = 0
    limit = _MAX_DRAWS_PER_SAMPLE * samples
    while got < samples:
        if drawn >= limit:
            rate = got / max(drawn, 1)
            raise UsageError(
                f"--weights-range leaves too small a part of the weight simplex to sample: "
                f"{rate:.2%} of {drawn:,} draws fell inside the bounds; widen the ranges")
        batch = int(min(limit - drawn, max(4096, 2 * (samples - got) * drawn / max(got, 1))))
        w = lo + free * rng.dirichlet(np.ones(m), size=batch)
        ok = w[(w <= hi + 1e-15).all(axis=1)]
        take = min(ok.shape[0], samples - got)
        out[got:got + take] = ok[:take]
        got += take
        drawn += batch
    return out


def robust_from_costs(costs, *, samples, k, seed=0, bounds=None, norm="vector", kernels,
                      domination_count=None, criteria=None, weight_ranges=None) -> RobustResult:
    """SMAA of TOPSIS on a cost matrix (every criterion minimized).

    Parameters
    ----------
    costs : array of shape (n, m)
        Canonical costs ("max" criteria negated), NumPy or device array.
    samples, k, seed : int
        Weight samples, size of the top set, seed of the weight draws.
    bounds : list of (low, high) per criterion, optional
    kernels : module
        ``gpurank.kernels.cpu`` or ``.cuda`` (or ``.reference``).
    domination_count : ndarray of int64, optional
        Exact (or capped at >= k) domination counts when already known; computed with
        ``kernels.domination_count(costs, cap=k)`` otherwise.
    """
    n, m = costs.shape
    k_eff = max(1, min(int(k), n))
    if domination_count is None:
        domination_count = kernels.domination_count(costs, cap=k_eff)
    dom = np.asarray(_to_host(domination_count))
    cand = np.flatnonzero(dom < k_eff).astype(np.int64)
    w = sample_weights(m, samples, seed=seed, bounds=bounds)
    counts = kernels.smaa_topsis(costs, w, np.zeros(m, dtype=bool), k=k_eff, norm=norm,
                                 candidates=cand)
    return _result(counts, cand, n_rows=n, samples=samples, k=k_eff, seed=seed, m=m,
                   criteria=criteria, weight_ranges=weight_ranges)


def robust_from_candidates(costs, row_ids, stats, *, n_rows, samples, k, seed=0, bounds=None,
                           norm="vector", kernels, criteria=None,
                           weight_ranges=None) -> RobustResult:
    """:func:`robust_from_costs` from the candidate rows alone, as the Dask driver holds
    them: the rows of a table of ``n_rows`` rows dominated by fewer than ``k`` others.

    Parameters
    ----------
    costs : ndarray of shape (c, m)
        Canonical costs of the candidate rows, in row order.
    row_ids : ndarray of int64, shape (c,)
        Their positions in the table (increasing).
    stats : TopsisStats
        Of the whole table's costs (merged over its partitions): the normalization, ideal
        and anti-ideal of every weight sample, as in memory.
    n_rows, samples, k, seed, bounds, norm, kernels, criteria, weight_ranges
        As in :func:`robust_from_costs` (``n_rows`` the table's rows).
    """
    m = costs.shape[1]
    k_eff = max(1, min(int(k), int(n_rows)))
    w = sample_weights(m, samples, seed=seed, bounds=bounds)
    counts = kernels.smaa_topsis(costs, w, np.zeros(m, dtype=bool), k=k_eff, norm=norm,
                                 stats=stats)
    return _result(counts, np.asarray(row_ids, dtype=np.int64), n_rows=n_rows,
                   samples=samples, k=k_eff, seed=seed, m=m, criteria=criteria,
                   weight_ranges=weight_ranges)


def _result(counts, cand, *, n_rows, samples, k, seed, m, criteria, weight_ranges):
    """The :class:`RobustResult` of the kernels' acceptability counts over ``samples``."""
    top1, topk, rsum, rsq, cws = counts
    s = float(samples)
    p1 = top1 / s
    pk = topk / s
    mean_rank = rsum / s
    if samples > 1:
        var = np.maximum(rsq / s - mean_rank**2, 0.0) * (s / (s - 1))
        rank_se = np.sqrt(var / s)
    else:
        rank_se = np.full(cand.shape[0], np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        central = np.where(top1[:, None] > 0, cws / np.maximum(top1, 1)[:, None], np.nan)
    names = tuple(criteria) if criteria is not None else tuple(f"c{j}" for j in range(m))
    return RobustResult(
        n_rows=int(n_rows), samples=int(samples), k=int(k), seed=int(seed), criteria=names,
        weight_ranges=dict(weight_ranges or {}), candidates=cand,
        p_top1=p1, p_top1_se=np.sqrt(p1 * (1 - p1) / s),
        p_topk=pk, p_topk_se=np.sqrt(pk * (1 - pk) / s),
        expected_rank=mean_rank, expected_rank_se=rank_se, central_weights=central)


def weight_bounds(spec, criteria):
    """The spec's weight ranges as one ``(low, high)`` per criterion (None: unbounded)."""
    names = [c.column for c in criteria]
    ranges = {col: (lo, hi) for col, lo, hi in spec.weight_ranges}
    unknown = [c for c in ranges if c not in names]
    if unknown:
        raise UsageError(f"weight_ranges names {', '.join(repr(u) for u in unknown)}, which "
                         f"is not a criterion; criteria are: {', '.join(names)}")
    return ([ranges.get(c, (0.0, 1.0)) for c in names] if ranges else None), ranges


def robust_from_costs_spec(costs, criteria, ranking, *, spec, backend) -> RobustResult:
    """The ``robust`` step of an analysis: SMAA with the spec's samples, top k, seed, norm
    and weight ranges on the criteria matrix ``costs``; reuses the ranking's domination
    counts for the pruning when they are exact (or capped at k or more)."""
    from .ranking import topsis_input

    criteria = tuple(criteria)
    bounds, ranges = weight_bounds(spec, criteria)
    backend.check_supported("robust", len(criteria))
    matrix, kernel_norm = topsis_input(costs, criteria, spec.norm, backend=backend)
    k = backend.kernels
    counts = None
    if ranking is not None and (spec.count_cap is None or spec.count_cap >= spec.top):
        # Counts capped below k cannot tell a row with k dominators from one with fewer.
        counts = ranking.domination_count
    return robust_from_costs(
        matrix, samples=spec.samples, k=spec.top, seed=spec.seed, bounds=bounds,
        norm=kernel_norm, kernels=k, criteria=[c.column for c in criteria],
        domination_count=counts if counts is not None else
        k.domination_count(costs, cap=max(1, min(int(spec.top), costs.shape[0]))),
        weight_ranges=ranges)


def robust_ranking(df, criteria, ranking, *, spec, backend) -> RobustResult:
    """:func:`robust_from_costs_spec` on the criteria matrix of ``df``."""
    from .ranking import criteria_matrix

    return robust_from_costs_spec(criteria_matrix(df, criteria, backend=backend), criteria,
                                  ranking, spec=spec, backend=backend)


def robust_summary(rb, table, columns, *, top) -> dict:
    """The ``robust`` entry of summary.json: settings and the configurations in the top k
    for the largest share of weights, with standard errors and central weights.

    Parameters
    ----------
    rb : RobustResult
    table : DataFrame
        Rows of the analyzed table by position: the whole table, or (on Dask) the candidate
        rows gathered, indexed by their row position.
    columns : list of str
        Columns shown for each configuration.
    top : int
        How many configurations to list.
    """
    out = []
    positions = table.index if table.index.is_unique else None
    for pos in rb.order()[:top]:
        row = int(rb.candidates[pos])
        src = table.loc[row] if positions is not None and row in positions else table.iloc[row]
        rec = {c: src[c] for c in columns if c in table.columns}
        rec["row"] = row
        rec.update(
            p_topk=float(rb.p_topk[pos]), p_topk_se=float(rb.p_topk_se[pos]),
            p_top1=float(rb.p_top1[pos]), p_top1_se=float(rb.p_top1_se[pos]),
            expected_rank=float(rb.expected_rank[pos]),
            expected_rank_se=_num(rb.expected_rank_se[pos]),
            central_weights=None if not bool(np.isfinite(rb.central_weights[pos]).all())
            else {c: float(w) for c, w in zip(rb.criteria, rb.central_weights[pos])},
        )
        out.append(rec)
    return {
        "method": "SMAA over TOPSIS weights",
        "samples": rb.samples,
        "k": rb.k,
        "seed": rb.seed,
        "weights": "uniform on the simplex" + (" within weight_ranges" if rb.weight_ranges
                                                else ""),
        "weight_ranges": {c: list(v) for c, v in rb.weight_ranges.items()},
        "candidates": int(rb.candidates.shape[0]),
        "pruned": int(rb.n_rows - rb.candidates.shape[0]),
        "expected_rank_among": "candidates (rows dominated by fewer than k rows)",
        "top": out,
    }


def _num(v):
    v = float(v)
    return v if math.isfinite(v) else None


def _to_host(x):
    if hasattr(x, "copy_to_host"):
        return x.copy_to_host()
    if hasattr(x, "get") and not isinstance(x, np.ndarray):
        return x.get()
    return x
