"""Robust rankings: stochastic multicriteria acceptability analysis (SMAA) over TOPSIS weights.

TOPSIS needs weights, and people rarely know them. SMAA ([Lahdelma1998]) draws many weight
vectors, ranks the configurations under each, and reports for every configuration how often
it ranks first (``p_top1``), how often it is in the top k (``p_topk``, rank acceptability),
its mean rank, and the mean weights under which it ranks first (central weights). See
docs/robust.md; the references are in docs/references.md.

Weights are drawn uniformly from the simplex (Dirichlet(1, ..., 1)) or, with bounds per
criterion, uniformly from the simplex restricted to the bounds: draws from the (smaller)
simplex above the lower bounds, ``low + (1 - sum(low)) * Dirichlet(1)``, rejecting those
above an upper bound. Seeded.

Exactness with pruning: the normalization, ideal and anti-ideal come from the full table, so
a row never ranks above a row that dominates it (kernels/_smaa.py), and a row dominated by k
or more rows is never in the top k. Only the rows dominated by fewer than k rows
(``domination_count(costs, cap=k) < k``) are scored; the others have ``p_top1 = p_topk = 0``
exactly. ``expected_rank`` is the rank among those candidates.

Model uncertainty: when the analyzed values are predictions with intervals
(:class:`ValueUncertainty`), each sample also draws one factor per predicted row inside its
interval, shared by the row's criteria (a time and a cost move with it, a throughput
against it), so ``p_top1`` and ``p_topk`` also say how sure the ranking is given the
model's error. The normalization stays that of the point estimates; a row is pruned when
the pessimistic corners of k or more rows dominate its optimistic corner (it is then
dominated in every draw). See docs/robust.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from gpurank.kernels import MAX_EXPONENT, RowFactors

from .errors import DataError, UsageError
from .ranking import score_input
from .results import RobustResult

__all__ = [
    "DRAW_DISTRIBUTION",
    "ROBUST_COLUMNS",
    "interval_columns",
    "uncertainty_of",
    "ValueUncertainty",
    "interval_candidates",
    "robust_from_candidates",
    "robust_from_costs",
    "robust_from_costs_spec",
    "robust_summary",
    "sample_weights",
    "smaa_k",
    "weight_bounds",
]

ROBUST_COLUMNS = ("p_top1", "p_topk", "expected_rank")

#: rejection sampling gives up after this many draws per requested sample
_MAX_DRAWS_PER_SAMPLE = 1000

#: How a predicted row's factor is drawn (kernels/_smaa.py's ``draw_moves``).
DRAW_DISTRIBUTION = ("one factor f per predicted row and sample, log-uniform on [factor_lo, 1] "
                     "and on [1, factor_hi] with half the mass each (the point estimate is "
                     "the median), independent of the weights and of the other rows")


@dataclass(frozen=True)
class ValueUncertainty:
    """How far each analyzed row's predicted values may be off: the model uncertainty the
    robust ranking draws inside, with the weights.

    Row ``i``'s true values are its point estimates moved by one unknown factor ``f_i`` in
    ``[factor_lo[i], factor_hi[i]]``, shared by all its criteria: criterion ``j`` becomes
    ``value_ij * f_i ** exponent[j]`` (so does its canonical cost, the negated value of a
    "max" criterion).

    Attributes
    ----------
    factor_lo, factor_hi : ndarray of float64, shape (n,)
        Per analyzed row (in table order), ``0 < factor_lo <= 1 <= factor_hi``: the
        interval of the row's predicted time over its point estimate; both 1 for a row
        that was measured, not predicted.
    exponent : ndarray of float64, shape (m,)
        Per criterion (in the order of the criteria), an integer in
        ``[-MAX_EXPONENT, MAX_EXPONENT]``: +1 for a criterion proportional to the predicted
        time (time, cost, energy, accelerator-hours), -1 for one inversely proportional
        (throughput), 0 for one the prediction does not move.
    source : str
        What the interval is, as the summary says it: e.g. "the 80% prediction interval of
        the predicted training time".

    Examples
    --------
    >>> u = ValueUncertainty.from_bounds([100.0, 80.0], [60.0, np.nan], [150.0, np.nan],
    ...                                  exponent=[1, -1], source="the 80% interval")
    >>> u.factor_lo.tolist(), u.factor_hi.tolist()
    ([0.6, 1.0], [1.5, 1.0])
    """

    factor_lo: np.ndarray
    factor_hi: np.ndarray
    exponent: np.ndarray
    source: str

    @classmethod
    def from_bounds(cls, value, lo, hi, *, exponent, source):
        """From a predicted value and its interval per row (NaN bounds: a measured row).

        Raises
        ------
        DataError
            A value that is not positive, or bounds that do not bracket it.
        """
        v = np.asarray(value, dtype=np.float64).reshape(-1)
        lo = np.asarray(lo, dtype=np.float64).reshape(-1)
        hi = np.asarray(hi, dtype=np.float64).reshape(-1)
        if not v.shape == lo.shape == hi.shape:
            raise DataError(f"model uncertainty: value, lo and hi must have one entry per row; "
                            f"got {v.shape[0]}, {lo.shape[0]} and {hi.shape[0]}")
        measured = np.isnan(lo) & np.isnan(hi)
        with np.errstate(invalid="ignore"):
            bad = ~measured & ~((v > 0) & np.isfinite(v) & (lo <= v) & (v <= hi)
                                & (lo > 0) & np.isfinite(hi))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise DataError(f"model uncertainty: row {i}'s interval [{lo[i]:g}, {hi[i]:g}] "
                            f"must be positive, finite and contain its value {v[i]:g}")
        with np.errstate(invalid="ignore", divide="ignore"):
            flo = np.where(measured, 1.0, lo / v)
            fhi = np.where(measured, 1.0, hi / v)
        return cls(flo, fhi, np.asarray(exponent, dtype=np.float64), str(source))

    def rows_with_interval(self) -> int:
        """How many rows have an interval wider than their point estimate."""
        return int(((self.factor_lo < 1) | (self.factor_hi > 1)).sum())

    def moves(self) -> bool:
        """Whether a draw can move any value: a row with an interval and a criterion with a
        non-zero exponent."""
        return self.rows_with_interval() > 0 and bool((self.exponent != 0).any())

    def checked(self, n, m) -> ValueUncertainty:
        """The same, with float64 arrays checked against an analysis of ``n`` rows and ``m``
        criteria.

        Raises
        ------
        DataError
            Wrong lengths, a factor interval that does not contain 1, or an exponent that
            is not a small integer; the message names the field and the first bad entry.
        """
        lo = np.ascontiguousarray(self.factor_lo, dtype=np.float64).reshape(-1)
        hi = np.ascontiguousarray(self.factor_hi, dtype=np.float64).reshape(-1)
        e = np.ascontiguousarray(self.exponent, dtype=np.float64).reshape(-1)
        for name, v, want in (("factor_lo", lo, n), ("factor_hi", hi, n), ("exponent", e, m)):
            if v.shape[0] != want:
                per = "row" if want == n and name != "exponent" else "criterion"
                raise DataError(f"model uncertainty: {name} must have one value per {per} "
                                f"({want}); got {v.shape[0]}")
        for name, v, ok in (("factor_lo", lo, (lo > 0) & (lo <= 1)),
                            ("factor_hi", hi, (hi >= 1) & np.isfinite(hi))):
            if not ok.all():
                i = int(np.flatnonzero(~ok)[0])
                allowed = "(0, 1]" if name == "factor_lo" else "[1, inf)"
                raise DataError(f"model uncertainty: {name} must be in {allowed}; row {i} has "
                                f"{float(v[i])!r}")
        ok = np.isfinite(e) & (e == np.round(e)) & (np.abs(e) <= MAX_EXPONENT)
        if not ok.all():
            j = int(np.flatnonzero(~ok)[0])
            raise DataError(f"model uncertainty: exponent must be an integer in "
                            f"[-{MAX_EXPONENT}, {MAX_EXPONENT}]; criterion {j} has {float(e[j])!r}")
        return ValueUncertainty(lo, hi, e, str(self.source))

    def row_factors(self, *, seed, row_ids=None, log_signs=None) -> RowFactors:
        """The kernels' :class:`~gpurank.kernels._smaa.RowFactors` of a checked uncertainty.

        ``log_signs`` (one +1/-1 per criterion) when the matrix the kernels rank is
        ``sign * log10(value)`` (``norm="log"``): a factor then moves a criterion by
        ``sign * exponent * log10(f)``."""
        e = self.exponent.astype(np.int64)
        if log_signs is not None:
            e = e * np.asarray(log_signs, dtype=np.int64)
        return RowFactors(self.factor_lo, self.factor_hi, e, int(seed), row_ids,
                          log10=log_signs is not None)


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
                      domination_count=None, criteria=None, weight_ranges=None,
                      uncertainty=None, log_signs=None) -> RobustResult:
    """SMAA of TOPSIS on a cost matrix (every criterion minimized).

    Parameters
    ----------
    costs : array of shape (n, m)
        Canonical costs ("max" criteria negated), NumPy or device array.
    samples, k, seed : int
        Weight samples, size of the top set, seed of the weight and factor draws.
    bounds : list of (low, high) per criterion, optional
    kernels : module
        ``gpurank.kernels.cpu`` or ``.cuda`` (or ``.reference``).
    domination_count : ndarray of int64, optional
        Exact (or capped at >= k) domination counts when already known; computed with
        ``kernels.domination_count(costs, cap=k)`` otherwise. Not used when values are
        drawn (the pruning is then :func:`interval_candidates`).
    uncertainty : ValueUncertainty, optional
        The rows' prediction intervals: each sample also draws the predicted values. When
        no row has an interval (or no criterion depends on the prediction) nothing is
        drawn and the result is the one without it, noted in ``model_uncertainty``.
    log_signs : ndarray of +1/-1 per criterion, optional
        Given when ``costs`` is ``sign * log10(value)`` (``norm="log"``'s matrix), so that
        a factor moves it by ``sign * exponent * log10(f)``.
    """
    n, m = costs.shape
    k_eff = max(1, min(int(k), n))
    u = None if uncertainty is None else uncertainty.checked(n, m)
    if u is not None and u.moves():
        factors = u.row_factors(seed=seed, log_signs=log_signs)
        benefit = np.zeros(m, dtype=bool)
        cand = interval_candidates(costs, factors, k_eff, kernels=kernels)
        w = sample_weights(m, samples, seed=seed, bounds=bounds)
        counts = kernels.smaa_topsis_drawn(costs, w, benefit, factors, k=k_eff,
                                                       norm=norm, candidates=cand)
        return _result(counts, cand, n_rows=n, samples=samples, k=k_eff, seed=seed, m=m,
                       criteria=criteria, weight_ranges=weight_ranges, uncertainty=u,
                       factor_rows=cand)
    if domination_count is None:
        domination_count = kernels.domination_count(costs, cap=k_eff)
    dom = np.asarray(_to_host(domination_count))
    cand = np.flatnonzero(dom < k_eff).astype(np.int64)
    w = sample_weights(m, samples, seed=seed, bounds=bounds)
    counts = kernels.smaa_topsis(costs, w, np.zeros(m, dtype=bool), k=k_eff, norm=norm,
                                 candidates=cand)
    return _result(counts, cand, n_rows=n, samples=samples, k=k_eff, seed=seed, m=m,
                   criteria=criteria, weight_ranges=weight_ranges, uncertainty=u)


def interval_candidates(costs, factors, k, *, kernels) -> np.ndarray:
    """The rows that can be in the top ``k`` of some draw of weights and predicted values:
    those whose optimistic corner (every criterion at its best over the row's interval) is
    dominated by the pessimistic corners of fewer than ``k`` rows (host int64, increasing).

    ``kernels.smaa_interval_candidates`` (see :mod:`gpurank.kernels.reference`) on the
    canonical ``costs`` and the kernels' ``factors``."""
    fn = kernels.smaa_interval_candidates
    return np.asarray(_to_host(fn(costs, np.zeros(costs.shape[1], dtype=bool), factors,
                                  k=int(k))), dtype=np.int64)


def robust_from_candidates(costs, row_ids, stats, *, n_rows, samples, k, seed=0, bounds=None,
                           norm="vector", kernels, criteria=None, weight_ranges=None,
                           uncertainty=None, log_signs=None,
                           rows_with_interval=None) -> RobustResult:
    """:func:`robust_from_costs` from the candidate rows alone, as the Dask driver holds
    them: the rows of a table of ``n_rows`` rows dominated by fewer than ``k`` others (with
    ``uncertainty``: the rows whose optimistic corner fewer than ``k`` pessimistic corners
    dominate, :func:`interval_candidates` over the whole table).

    Parameters
    ----------
    costs : ndarray of shape (c, m)
        Canonical costs of the candidate rows, in row order.
    row_ids : ndarray of int64, shape (c,)
        Their positions in the table (increasing); also the keys of their factor draws, so
        each row draws what it draws in memory.
    stats : TopsisStats
        Of the whole table's costs (merged over its partitions): the normalization, ideal
        and anti-ideal of every weight sample, as in memory.
    n_rows, samples, k, seed, bounds, norm, kernels, criteria, weight_ranges, log_signs
        As in :func:`robust_from_costs` (``n_rows`` the table's rows).
    uncertainty : ValueUncertainty, optional
        Of the candidate rows (c factors).
    rows_with_interval : int, optional
        How many rows of the whole table have an interval (for the summary); those among
        the candidates when None.
    """
    m = costs.shape[1]
    k_eff = max(1, min(int(k), int(n_rows)))
    cand = np.asarray(row_ids, dtype=np.int64)
    u = None if uncertainty is None else uncertainty.checked(costs.shape[0], m)
    w = sample_weights(m, samples, seed=seed, bounds=bounds)
    if u is not None and u.moves():
        factors = u.row_factors(seed=seed, row_ids=cand, log_signs=log_signs)
        counts = kernels.smaa_topsis_drawn(
            costs, w, np.zeros(m, dtype=bool), factors, k=k_eff, norm=norm, stats=stats)
    else:
        counts = kernels.smaa_topsis(costs, w, np.zeros(m, dtype=bool), k=k_eff, norm=norm,
                                     stats=stats)
    return _result(counts, cand, n_rows=n_rows, samples=samples, k=k_eff, seed=seed, m=m,
                   criteria=criteria, weight_ranges=weight_ranges, uncertainty=u,
                   rows_with_interval=rows_with_interval)


def _result(counts, cand, *, n_rows, samples, k, seed, m, criteria, weight_ranges,
            uncertainty=None, factor_rows=None, rows_with_interval=None):
    """The :class:`RobustResult` of the kernels' acceptability counts over ``samples``;
    ``factor_rows`` picks the candidates' factors from ``uncertainty``'s (None: they are
    the candidates' own)."""
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
    model, interval = None, None
    if uncertainty is not None:
        drawn = uncertainty.moves()
        if drawn:
            lo, hi = uncertainty.factor_lo, uncertainty.factor_hi
            if factor_rows is not None:
                lo, hi = lo[factor_rows], hi[factor_rows]
            interval = np.stack([lo, hi], axis=1)
        rows = (uncertainty.rows_with_interval() if rows_with_interval is None
                else int(rows_with_interval))
        model = _describe(uncertainty, names, drawn=drawn, rows=rows, n_rows=int(n_rows))
    return RobustResult(
        n_rows=int(n_rows), samples=int(samples), k=int(k), seed=int(seed), criteria=names,
        weight_ranges=dict(weight_ranges or {}), candidates=cand,
        p_top1=p1, p_top1_se=np.sqrt(p1 * (1 - p1) / s),
        p_topk=pk, p_topk_se=np.sqrt(pk * (1 - pk) / s),
        expected_rank=mean_rank, expected_rank_se=rank_se, central_weights=central,
        model_uncertainty=model, factor_interval=interval)


def _describe(u, names, *, drawn, rows, n_rows) -> dict:
    """The ``model_uncertainty`` record of a result: what was drawn, from which intervals."""
    moved = {c: int(e) for c, e in zip(names, u.exponent) if e != 0}
    if drawn:
        text = (f"model uncertainty: {', '.join(moved)} drawn in {u.source} "
                f"({rows:,} of {n_rows:,} rows predicted; one factor per row, "
                "log-uniform, median at the point estimate)")
    elif not moved:
        text = "model uncertainty: nothing drawn (no criterion depends on the predicted values)"
    else:
        text = ("model uncertainty: nothing drawn (no analyzed row has an interval wider than "
                "its point estimate)")
    return {"drawn": bool(drawn), "source": u.source, "criteria": moved,
            "rows_with_interval": int(rows), "distribution": DRAW_DISTRIBUTION, "text": text}


def weight_bounds(spec, criteria):
    """The spec's weight ranges as one ``(low, high)`` per criterion (None: unbounded)."""
    names = [c.column for c in criteria]
    ranges = {col: (lo, hi) for col, lo, hi in spec.weight_ranges}
    unknown = [c for c in ranges if c not in names]
    if unknown:
        raise UsageError(f"weight_ranges names {', '.join(repr(u) for u in unknown)}, which "
                         f"is not a criterion; criteria are: {', '.join(names)}")
    return ([ranges.get(c, (0.0, 1.0)) for c in names] if ranges else None), ranges


#: Criteria that move with a row's predicted time (exponent +1) or against it (-1).
_WITH_TIME = ("time_to_train_min", "predicted_time_to_train_min", "accelerator_hours",
              "cost_usd", "predicted_cost_usd", "energy_kwh", "predicted_energy_kwh")
_AGAINST_TIME = ("throughput", "predicted_throughput", "throughput_per_accelerator",
                 "speedup", "scaling_efficiency")
#: The time columns whose ``_lo`` / ``_hi`` columns carry a prediction interval.
_TIME_COLUMNS = ("time_to_train_min", "predicted_time_to_train_min")


def interval_columns(columns, criteria) -> tuple | None:
    """The prediction interval that moves the ``criteria``: ``(time, time_lo, time_hi,
    moved)``, the time column, its bounds and the criteria columns that follow it, when
    ``columns`` hold the three and at least one criterion follows the time; None otherwise
    (the weights alone are then drawn)."""
    cols = set(columns)
    time = next((t for t in _TIME_COLUMNS if {t, f"{t}_lo", f"{t}_hi"} <= cols), None)
    moved = tuple(c.column for c in criteria if _exponent(c.column))
    if time is None or not moved:
        return None
    return time, f"{time}_lo", f"{time}_hi", moved


def _exponent(column) -> int:
    return 1 if column in _WITH_TIME else -1 if column in _AGAINST_TIME else 0


def uncertainty_of(frame, criteria, *, backend) -> ValueUncertainty | None:
    """The model uncertainty of an analyzed table: the prediction interval of its time to
    train (``time_to_train_min_lo`` / ``_hi``, as simulated and predicted tables carry it),
    moving every criterion that follows the time; None when the table has no interval.

    A row without interval bounds (NaN) is measured and does not move; the reference row of
    ``speedup`` and ``scaling_efficiency`` keeps its point estimate."""
    found = interval_columns(frame.columns, criteria)
    if found is None:
        return None
    time = found[0]
    exponent = [_exponent(c.column) for c in criteria]

    def host(col):
        # one explicit copy per column (three n-vectors), as every host crossing is
        return np.asarray(backend.to_host(frame[col].astype("float64")), dtype=np.float64)

    value, lo, hi = host(time), host(f"{time}_lo"), host(f"{time}_hi")
    # a row without bounds is measured; a row with a broken interval is refused, never
    # taken as exact
    measured = np.isnan(lo) & np.isnan(hi)
    _check_intervals(time, value, lo, hi, measured)
    return ValueUncertainty.from_bounds(
        np.where(measured, 1.0, value), lo, hi, exponent=exponent,
        source=f"the 80% prediction interval of {time} ({time}_lo, {time}_hi)")


def _check_intervals(time, value, lo, hi, measured) -> None:
    """Every interval a row gives is positive, finite, contains its estimate and spans
    factors a float64 holds (``hi / value`` finite, ``lo / value`` above zero: an upper
    bound of 1e308 over an estimate of 1e10 is drawn, over an estimate of 0.5 refused).

    Raises
    ------
    DataError
        Naming the column, the first row and its values, and the number of such rows.
    """
    with np.errstate(all="ignore"):
        flo, fhi = lo / value, hi / value
    tests = (
        (time, ~(np.isfinite(value) & (value > 0)), "an estimate with an interval must be a "
         "finite number > 0"),
        (f"{time}_lo", ~(np.isfinite(lo) & (lo > 0)), "a lower bound must be a finite number > 0"),
        (f"{time}_hi", ~(np.isfinite(hi) & (hi > 0)), "an upper bound must be a finite number > 0"),
        (f"{time}_lo", lo > value, f"the lower bound is above the estimate {time}"),
        (f"{time}_hi", hi < value, f"the upper bound is below the estimate {time}"),
        (f"{time}_hi", ~(np.isfinite(fhi) & (flo > 0)), "the interval spans more than a float64 "
         "can hold around its estimate"),
    )
    for column, bad, why in tests:
        bad = bad & ~measured
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            count = int(bad.sum())
            raise DataError(
                f"column '{column}': {count} row{'s' if count > 1 else ''} with a broken "
                f"interval (first: row {i}, {time} {value[i]:g} in [{lo[i]:g}, {hi[i]:g}]): "
                f"{why}; --robust draws predicted values in their interval")


def robust_from_costs_spec(costs, criteria, ranking, *, spec, backend,
                           uncertainty=None) -> RobustResult:
    """The ``robust`` step of an analysis: SMAA with the spec's samples, top k, seed, norm
    and weight ranges on the criteria matrix ``costs``; reuses the ranking's domination
    counts for the pruning when they are exact (or capped at k or more). With
    ``uncertainty`` (a :class:`ValueUncertainty` of the analyzed rows) each sample also
    draws the predicted values."""
    criteria = tuple(criteria)
    bounds, ranges = weight_bounds(spec, criteria)
    backend.check_supported("robust", len(criteria))
    matrix, kernel_norm = score_input(costs, criteria, spec.norm, backend=backend)
    k = backend.kernels
    names = [c.column for c in criteria]
    if uncertainty is not None and uncertainty.checked(costs.shape[0], len(criteria)).moves():
        signs = (np.array([-1 if c.sense == "max" else 1 for c in criteria])
                 if spec.norm == "log" else None)
        return robust_from_costs(matrix, samples=spec.samples, k=spec.top, seed=spec.seed,
                                 bounds=bounds, norm=kernel_norm, kernels=k, criteria=names,
                                 weight_ranges=ranges, uncertainty=uncertainty,
                                 log_signs=signs)
    top_k, recount = smaa_k(spec, costs.shape[0])
    counts = (ranking.domination_count if ranking is not None and not recount else
              k.domination_count(costs, cap=top_k))
    return robust_from_costs(
        matrix, samples=spec.samples, k=spec.top, seed=spec.seed, bounds=bounds,
        norm=kernel_norm, kernels=k, criteria=names, domination_count=counts,
        weight_ranges=ranges, uncertainty=uncertainty)


def smaa_k(spec, n) -> tuple[int, bool]:
    """The k of the robust ranking's top k over ``n`` rows, ``max(1, min(top, n))``, and
    whether the analysis' domination counts must be counted again, capped at k, before they
    can prune the rows: counts capped below k cannot tell a row with k dominators from one
    with fewer. In memory and on Dask alike."""
    k = max(1, min(int(spec.top), int(n)))
    return k, spec.count_cap is not None and spec.count_cap < k


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
        if rb.factor_interval is not None:
            rec["value_factor"] = [float(v) for v in rb.factor_interval[pos]]
        out.append(rec)
    drawn = rb.model_uncertainty is not None and rb.model_uncertainty["drawn"]
    return {
        "method": "SMAA over TOPSIS weights" + (" and predicted values" if drawn else ""),
        "samples": rb.samples,
        "k": rb.k,
        "seed": rb.seed,
        "weights": "uniform on the simplex" + (" within weight_ranges" if rb.weight_ranges
                                                else ""),
        "weight_ranges": {c: list(v) for c, v in rb.weight_ranges.items()},
        "model_uncertainty": None if rb.model_uncertainty is None
        else dict(rb.model_uncertainty),
        "candidates": int(rb.candidates.shape[0]),
        "pruned": int(rb.n_rows - rb.candidates.shape[0]),
        "expected_rank_among": "candidates (rows that fewer than k rows dominate in every draw "
                               "of the predicted values)" if drawn else
                               "candidates (rows dominated by fewer than k rows)",
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
