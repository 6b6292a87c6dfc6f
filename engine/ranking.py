"""Step 3, rank: Pareto dominance and the ranking method (TOPSIS, VIKOR) on the criteria
matrix.

Criteria are canonicalized to "minimize" here, once: a "max" column is negated, so every
kernel has a single case. TOPSIS and VIKOR are invariant under that negation (the column
norms, ranges and the distances to the ideal and anti-ideal points are unchanged), so they
run on the same matrix. The method is a row of :data:`~gpurank.engine.methods.METHODS`.
"""

from __future__ import annotations

import numpy as np
from gpurank.kernels.cpu.select import rank_order

from .errors import DataError
from .methods import DEFAULT_METHOD, method_of
from .results import RankResult
from .schema import invalid_rows, require_columns
from .spec import normalize_weights

__all__ = ["criteria_matrix", "check_criteria_values", "check_rank_input", "score_input",
           "pareto_ranks", "pareto_and_counts", "rank_configurations", "final_rank",
           "check_not_constant", "ideal_points"]


def criteria_matrix(df, criteria, *, backend):
    """The (n, m) float64 cost matrix on the backend: criteria columns, "max" ones negated.

    Raises
    ------
    SchemaError, DataError
        A criterion column is missing or not numeric.
    """
    require_columns(df, [c.column for c in criteria], role="criterion")
    if not criteria:
        raise DataError("no criteria given; at least one criterion column is needed")
    xp = backend.xp
    cols = []
    for c in criteria:
        v = backend.values(df, c.column, role="criterion")
        cols.append(-v if c.sense == "max" else v)
    return xp.ascontiguousarray(xp.stack(cols, axis=1), dtype=xp.float64)


def check_criteria_values(costs, criteria) -> None:
    """Raise when a criterion holds NaN or an infinity, naming the columns and row count."""
    bad = invalid_rows(costs)
    if bool(bad.any()):
        cols = [c.column for j, c in enumerate(criteria) if bool(invalid_rows(costs[:, j]).any())]
        raise DataError(
            f"{int(bad.sum())} rows have missing or infinite values in criteria "
            f"{', '.join(cols)}; fix them or pass --drop-invalid to leave those rows out"
        )


def final_rank(score, pareto_rank, *, method=DEFAULT_METHOD) -> np.ndarray:
    """Rank 1 = best: by the ``method``'s score (best first), ties by Pareto rank, then row
    order."""
    n = score.shape[0]
    order = rank_order(method_of(method).merit(score), pareto_rank)
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(1, n + 1)
    return rank


def _pareto_ranks(k, costs, depth, backend):
    """Every front, or ``min(rank, depth)`` (the kernels peel ``depth`` fronts on the CPU
    and clip on a device, where the sorted sweep costs the same either way)."""
    return k.pareto_rank(costs, depth=depth)


def score_input(costs, criteria, norm, *, backend):
    """The matrix and kernel normalization the ranking method runs on.

    ``norm="log"`` ranks ratio-scale criteria on a log scale: each column becomes
    ``sign * log10(value)`` (``value`` the criterion as given, positive; ``sign`` -1 for a
    "max" criterion) and is then min-max normalized, so a criterion spanning four orders of
    magnitude spreads its rows over [0, 1] instead of crowding them next to the ideal. The
    transform is monotone, so Pareto dominance is unchanged. (VIKOR normalizes each column
    linearly between its best and worst value whatever the norm: "log" gives it the log
    scale, "vector" and "minmax" the linear one.) ``prepare_rows`` has already
    refused (or dropped) rows whose value is not positive.
    """
    if norm != "log":
        return costs, norm
    xp = backend.xp
    sign = xp.asarray(np.array([-1.0 if c.sense == "max" else 1.0 for c in criteria]))
    return xp.ascontiguousarray(sign * xp.log10(costs * sign)), "minmax"


def check_rank_input(costs, criteria, norm, *, backend) -> None:
    """Refuse a criteria matrix the rank step cannot rank: NaN or infinite values, a
    constant criterion, or values <= 0 under ``norm="log"``; each error names the column."""
    check_criteria_values(costs, criteria)
    host = backend.to_host
    n = costs.shape[0]
    if n >= 2:
        # Two m-vectors cross to the host, not one synchronizing scalar per column.
        check_not_constant(criteria, np.asarray(host(costs.min(axis=0))),
                           np.asarray(host(costs.max(axis=0))), n)
    if norm == "log" and n:
        positive = np.asarray(host(((costs * backend.xp.asarray(np.array(
            [-1.0 if c.sense == "max" else 1.0 for c in criteria]))) > 0).all(axis=0)))
        for j, c in enumerate(criteria):
            if not bool(positive[j]):
                raise DataError(f"norm 'log' needs positive values; criterion column "
                                f"'{c.column}' has values <= 0: use norm 'vector' or 'minmax'")


def check_not_constant(criteria, lo, hi, n) -> None:
    """Refuse a constant criterion, given the column minima ``lo`` and maxima ``hi`` of the
    cost matrix (host m-vectors, "max" criteria negated) of ``n`` rows; the message names the
    column and its value. The in-memory rank step and the Dask driver (merged statistics of
    the partitions) both call this."""
    if n < 2:
        return
    for j, c in enumerate(criteria):
        if lo[j] == hi[j]:
            value = float(-lo[j] if c.sense == "max" else lo[j])
            raise DataError(f"criterion column '{c.column}' is constant (every value is "
                            f"{value:g}); it cannot separate configurations: leave it out of "
                            "the criteria")


def ideal_points(criteria, lo, hi) -> tuple[dict, dict]:
    """The ideal and anti-ideal value of each criterion, in the criterion's own sense, from
    the column minima ``lo`` and maxima ``hi`` of the cost matrix (host m-vectors, "max"
    criteria negated); NaN for every criterion when ``lo`` is None (no rows)."""
    ideal, anti = {}, {}
    for j, c in enumerate(criteria):
        best, worst = (float(lo[j]), float(hi[j])) if lo is not None else (np.nan, np.nan)
        sign = -1.0 if c.sense == "max" else 1.0
        ideal[c.column], anti[c.column] = sign * best, sign * worst
    return ideal, anti


def pareto_ranks(costs, *, backend, rank_depth=None):
    """Pareto ranks (host int32) of the rows of ``costs``: on the CPU a serial sweep, the
    longest single piece of the rank step's pairwise work."""
    backend.check_supported("rank", costs.shape[1])
    ranks = _pareto_ranks(backend.kernels, costs, rank_depth, backend)
    return np.asarray(backend.to_host(ranks), dtype=np.int32)


def pareto_and_counts(costs, *, backend, rank_depth=None, count_cap=None, ranks=None):
    """Pareto ranks (int32) and domination counts (int64) of the rows of ``costs``, on the
    host; the pairwise work of the rank step.

    ``ranks`` is a future of :func:`pareto_ranks` with the same ``rank_depth``, started
    earlier by the caller (:meth:`Backend.start`); the counts then run here while it
    finishes.

    Raises
    ------
    UnsupportedOnGPU
        The backend's kernels cannot rank this many criteria.
    """
    backend.check_supported("rank", costs.shape[1])
    k = backend.kernels
    if ranks is None:
        # Independent: on the CPU the serial sort of the fronts overlaps the parallel counts.
        pareto, dom = backend.together(
            lambda: pareto_ranks(costs, backend=backend, rank_depth=rank_depth),
            lambda: k.domination_count(costs, cap=count_cap))
    else:
        dom = k.domination_count(costs, cap=count_cap)
        pareto = ranks.result()
    host = backend.to_host
    return np.asarray(host(pareto), dtype=np.int32), np.asarray(host(dom), dtype=np.int64)


def rank_configurations(df, criteria, *, backend, norm="vector", costs=None, rank_depth=None,
                        count_cap=None, ranks=None, spec=None) -> RankResult:
    """Pareto ranks, domination counts, the method's scores and the final rank of every row.

    Parameters
    ----------
    df : DataFrame
        Rows to rank; every criterion must be finite (see ``check_criteria_values``).
    criteria : sequence of Criterion
    backend : Backend
        Supplies the kernels.
    norm : {"vector", "minmax", "log"}
        TOPSIS normalization, or the scale VIKOR normalizes on (see :func:`score_input`).
    costs : array, optional
        The :func:`criteria_matrix` of ``df`` on ``backend`` when the caller already built it.
    rank_depth, count_cap : int, optional
        Report ``min(pareto_rank, rank_depth)`` and ``min(domination_count, count_cap)``
        (exact below the limits; see :class:`~gpurank.engine.spec.AnalysisSpec`).
    ranks : Future, optional
        :func:`pareto_ranks` of ``costs`` with the same ``rank_depth``, started earlier by
        the caller (:meth:`Backend.start`) so that it runs beside other work; computed here
        when omitted.
    spec : AnalysisSpec, optional
        The ranking method and its options (``method``, ``vikor_v``); TOPSIS when omitted.
    """
    criteria = tuple(criteria)
    weights = normalize_weights(criteria)
    if costs is None:
        costs = criteria_matrix(df, criteria, backend=backend)
    check_rank_input(costs, criteria, norm, backend=backend)
    backend.check_supported("rank", len(criteria))
    host = backend.to_host
    n = costs.shape[0]
    benefit = np.zeros(len(criteria), dtype=bool)
    method = method_of(spec.method if spec is not None else DEFAULT_METHOD)
    matrix, kernel_norm = score_input(costs, criteria, norm, backend=backend)
    score = np.asarray(host(method.score(backend.kernels, matrix, np.asarray(weights), benefit,
                                         norm=kernel_norm, spec=spec)), dtype=np.float64)
    pareto, dom = pareto_and_counts(costs, backend=backend, rank_depth=rank_depth,
                                    count_cap=count_cap, ranks=ranks)
    lo = np.asarray(host(costs.min(axis=0))) if n else None  # m values each
    hi = np.asarray(host(costs.max(axis=0))) if n else None
    ideal, anti = ideal_points(criteria, lo, hi)
    return RankResult(
        pareto_rank=pareto,
        domination_count=dom,
        score=score,
        rank=final_rank(score, pareto, method=method.name),
        criteria=criteria,
        weights=weights,
        ideal=ideal,
        anti_ideal=anti,
        method=method.name,
    )
