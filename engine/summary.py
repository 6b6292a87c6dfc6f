"""The machine-readable summary of an analysis (``summary.json``)."""

from __future__ import annotations

from .io import to_jsonable
from .results import AnalysisResult

__all__ = ["build_summary", "top_columns"]

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
    cols = list(result.table.columns)
    crit = [c.column for c in result.spec.criteria]
    shown = [c for c in _TOP_COLUMNS if c in cols]
    shown += [c for c in crit if c not in shown]
    for extra in ("round", "submitter", "system"):
        if extra in cols and extra not in shown:
            shown.insert(0, extra)
    return ["rank"] + shown + ["cluster", "pareto_rank", "domination_count", "topsis_score"]


def build_summary(result: AnalysisResult) -> dict:
    """A JSON-ready dict: row count, backend, importance, clusters, front size, top K, timings."""
    spec = result.spec
    r = result.ranking
    top = result.top()
    summary = {
        "rows": int(len(result.table)),
        "backend": result.backend,
        "fallbacks": list(result.fallbacks),
        "criteria": [
            {"column": c.column, "sense": c.sense, "weight": w}
            for c, w in zip(r.criteria, r.weights)
        ],
        "settings": {
            "target": spec.target,
            "clusters": spec.clusters,
            "top": spec.top,
            "sample_rows": spec.sample_rows,
            "seed": spec.seed,
            "norm": spec.norm,
            "drop_invalid": spec.drop_invalid,
            "robust": spec.robust,
            "samples": spec.samples if spec.robust else None,
        },
        "importance": None,
        "clusters": None,
        "pareto_front_size": r.front_size,
        "ideal": r.ideal,
        "anti_ideal": r.anti_ideal,
        "top": top[top_columns(result)].to_dict(orient="records"),
        "timings_s": dict(result.timings),
        "notes": list(result.notes),
    }
    summary["robust"] = None
    if getattr(result, "robust", None) is not None:
        from .robust import robust_summary

        summary["robust"] = robust_summary(result, top_columns(result))
    if result.importance is not None:
        imp = result.importance
        summary["importance"] = {
            "target": imp.target,
            "rows_used": imp.n_rows,
            "sampled": imp.sampled,
            "holdout_r2": imp.holdout_r2,
            "features": imp.table.to_dict(orient="records"),
        }
    if result.clusters is not None:
        cl = result.clusters
        summary["clusters"] = {
            "k": cl.k,
            "features": list(cl.features),
            "silhouette": {str(k): v for k, v in cl.silhouette.items()},
            "profiles": cl.profiles.to_dict(orient="records"),
        }
    return to_jsonable(summary)
