"""The machine-readable summary of an analysis (``summary.json``)."""

from __future__ import annotations

from .io import to_jsonable
from .methods import DEFAULT_METHOD, method_of
from .results import AnalysisResult
from .robust import robust_summary

__all__ = ["build_summary", "summary_dict", "top_columns", "columns_for_top"]

#: Columns shown for the top configurations when present, in this order.
_TOP_COLUMNS = (
    "accelerator",
    "n_accelerators",
    "n_nodes",
    "host_cpu",
    "cpu_cores_per_accelerator",
    "interconnect",
    "network",
    "provider",
    "time_to_train_min",
    "throughput_per_accelerator",
    "scaling_efficiency",
    "utilization",
    "cost_usd",
    "energy_kwh",
    "prediction_basis",
)


def top_columns(result: AnalysisResult) -> list[str]:
    """Columns that describe a top configuration: its setup, the criteria and its scores."""
    return columns_for_top(result.table.columns, result.spec.criteria,
                           method=result.ranking.method)


def columns_for_top(columns, criteria, *, method=DEFAULT_METHOD) -> list[str]:
    """:func:`top_columns` for a table with ``columns`` ranked on ``criteria`` by
    ``method`` (its score's column last)."""
    cols = list(columns)
    crit = [c.column for c in criteria]
    shown = [c for c in _TOP_COLUMNS if c in cols]
    shown += [c for c in crit if c not in shown]
    for extra in ("round", "submitter", "system"):
        if extra in cols and extra not in shown:
            shown.insert(0, extra)
    return ["rank"] + shown + ["cluster", "pareto_rank", "domination_count",
                               method_of(method).column]


def build_summary(result: AnalysisResult) -> dict:
    """A JSON-ready dict: row count, backend, importance, clusters, front size, top K, timings."""
    r = result.ranking
    robust = None
    if result.robust is not None:
        robust = robust_summary(result.robust, result.table, top_columns(result),
                                top=result.spec.top)
    return summary_dict(
        spec=result.spec, rows=len(result.table), backend=result.backend,
        fallbacks=result.fallbacks, criteria=r.criteria, weights=r.weights,
        front_size=r.front_size, ideal=r.ideal, anti_ideal=r.anti_ideal,
        top=result.top()[top_columns(result)], importance=result.importance,
        clusters=result.clusters, timings=result.timings, notes=result.notes, robust=robust,
        preparation=result.preparation)


def summary_dict(*, spec, rows, backend, fallbacks, criteria, weights, front_size, ideal,
                 anti_ideal, top, importance, clusters, timings, notes, robust=None,
                 preparation=None) -> dict:
    """The summary of an analysis from its parts (the in-memory result's, or the Dask
    driver's, which never gathers the whole table).

    Parameters
    ----------
    spec : AnalysisSpec
        With its resolved criteria and target.
    top : DataFrame
        The top rows, best first, with the :func:`columns_for_top` columns.
    clusters : ClusterResult or None
    robust : dict or None
        :func:`gpurank.engine.robust.robust_summary`.
    preparation : PreparationResult or None
    """
    summary = {
        "rows": int(rows),
        "backend": backend,
        "fallbacks": list(fallbacks),
        "criteria": [
            {"column": c.column, "sense": c.sense, "weight": w}
            for c, w in zip(criteria, weights)
        ],
        "settings": {
            "target": spec.target,
            "clusters": spec.clusters,
            "top": spec.top,
            "sample_rows": spec.sample_rows,
            "seed": spec.seed,
            "norm": spec.norm,
            "method": spec.method,
            "vikor_v": spec.vikor_v if spec.method == "vikor" else None,
            "drop_invalid": spec.drop_invalid,
            "robust": spec.robust,
            "samples": spec.samples if spec.robust else None,
            "constraints": [str(c) for c in spec.constraints],
        },
        "preparation": preparation.as_dict() if preparation is not None else None,
        "importance": None,
        "clusters": None,
        "pareto_front_size": int(front_size),
        "ideal": ideal,
        "anti_ideal": anti_ideal,
        "top": top.to_dict(orient="records"),
        "timings_s": dict(timings),
        "notes": list(notes),
        "robust": robust,
    }
    if importance is not None:
        summary["importance"] = {
            "target": importance.target,
            "rows_used": importance.n_rows,
            "sampled": importance.sampled,
            "holdout_r2": importance.holdout_r2,
            "features": importance.table.to_dict(orient="records"),
        }
    if clusters is not None:
        summary["clusters"] = {
            "k": clusters.k,
            "features": list(clusters.features),
            "silhouette": {str(k): v for k, v in clusters.silhouette.items()},
            "profiles": clusters.profiles.to_dict(orient="records"),
        }
    return to_jsonable(summary)
