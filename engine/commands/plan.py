"""``gpurank plan``: which offer should I rent? A workload, price catalogs, a ranked answer.

``plan_offers(workload, offers)`` enumerates each offer (one instance type at one price;
:func:`~gpurank.engine.sources.facts.offers.read_offers`) at 1, 2, 4, ... instances up to
``max_accelerators``, predicts the time to train with its interval and the energy once per
distinct piece of hardware (accelerator, accelerators per instance, instances, links: the
price does not change the time), and prices every offer from it:
``cost_usd = usd_per_hour x instances x predicted hours``. ``run_plan_cli`` ranks the rows
with the analysis pipeline (Pareto and TOPSIS; ``--require``, ``--robust``) and writes the
usual output set.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..api import Engine
from ..errors import DataError
from ..methods import DEFAULT_METHOD
from ..params import Interval, ParamError, check_param, validate_params
from ..sources.facts.offers import Offers, read_offers
from ..sources.model.card import predict_workload, workload_arg
from ..sources.model.workload import Workload
from ..spec import AnalysisSpec, parse_criteria

__all__ = ["PLAN_COLUMNS", "PLAN_CONSTRAINTS", "Plan", "plan_offers", "plan_spec",
           "run_plan_cli", "DEFAULT_PLAN_CRITERIA", "top_offers"]

#: The columns of a plan's rows, in order (the analysis adds its ranks and scores).
PLAN_COLUMNS = ("provider", "instance", "regions", "n_regions", "instances", "accelerator",
                "accelerator_id", "accelerators_per_instance", "n_accelerators", "spot",
                "usd_per_hour", "time_to_train_min", "time_to_train_min_lo",
                "time_to_train_min_hi", "cost_usd", "cost_usd_lo", "cost_usd_hi",
                "energy_kwh", "throughput", "prediction_basis", "prediction_note",
                "source", "catalog_date")
#: Time and cost, both minimized, equal weights.
DEFAULT_PLAN_CRITERIA = "time_to_train_min:min,cost_usd:min"
#: The options of a plan, declared as data (``tests/test_params.py``).
PLAN_CONSTRAINTS = {
    "max_accelerators": (Interval(int, 1, 65536),),
    # far past any training run, and small enough that hours in minutes stay finite
    "budget_usd": (None, Interval(float, 0, 1e15, closed="right")),
    "deadline_h": (None, Interval(float, 0, 1e9, closed="right")),
}


@dataclass(frozen=True)
class Plan:
    """The offers of a plan, predicted and priced.

    Attributes
    ----------
    table : DataFrame
        One row per offer and size with a prediction (:data:`PLAN_COLUMNS`).
    notes : tuple of str
        What was read, left out and refused, one line each.
    workload : str
    """

    table: pd.DataFrame
    notes: tuple
    workload: str


def _sizes(per_instance: np.ndarray, max_accelerators: int) -> tuple[np.ndarray, np.ndarray]:
    """(offer index, instances) of 1, 2, 4, ... instances while the accelerators fit."""
    idx, inst = [], []
    k = 1
    while True:
        fits = per_instance * k <= max_accelerators
        if not fits.any():
            break
        where = np.flatnonzero(fits)
        idx.append(where)
        inst.append(np.full(len(where), k, dtype=np.int64))
        k *= 2
    if not idx:
        return np.array([], dtype=np.int64), np.array([], dtype=np.int64)
    return np.concatenate(idx), np.concatenate(inst)


_HW = ["accelerator_id", "accelerators_per_instance", "instances", "interconnect", "network"]


def _predicted(hw: pd.DataFrame, wl: Workload) -> pd.DataFrame:
    """Predictions of each distinct piece of hardware."""
    cfg = pd.DataFrame({
        "accelerator": hw["accelerator_id"].to_numpy(object),
        "n_accelerators": (hw["accelerators_per_instance"] * hw["instances"]).to_numpy(float),
        "n_nodes": hw["instances"].to_numpy(float),
        "accelerators_per_node": hw["accelerators_per_instance"].to_numpy(float),
    })
    for c in ("interconnect", "network"):
        text = hw[c].astype(str)
        if (text != "").any():
            cfg[c] = text.where(text != "", None).to_numpy(object)
    pred = predict_workload(cfg, wl, use_table_epochs=False)
    return pd.DataFrame({
        "time_to_train_min": pred["predicted_time_to_train_min"].to_numpy(float),
        "time_to_train_min_lo": pred["predicted_time_to_train_min_lo"].to_numpy(float),
        "time_to_train_min_hi": pred["predicted_time_to_train_min_hi"].to_numpy(float),
        "energy_kwh": pred["predicted_energy_kwh"].to_numpy(float),
        "throughput": pred["predicted_throughput"].to_numpy(float),
        "prediction_basis": pred["prediction_basis"].astype(str).to_numpy(object),
        "prediction_note": pred["prediction_note"].astype(str).to_numpy(object),
    })


@validate_params(PLAN_CONSTRAINTS)
def plan_offers(workload: Workload, offers: Offers, *, max_accelerators: int = 256,
                budget_usd=None, deadline_h=None) -> Plan:
    """Every offer at 1, 2, 4, ... instances up to ``max_accelerators``, predicted and priced.

    ``budget_usd`` and ``deadline_h`` are not applied here (the ranking's constraints apply
    them, and count what they leave out); they are checked with the other options."""
    base = offers.table
    if base.empty:
        raise DataError("no offer has an accelerator the catalog models: "
                        + "; ".join(offers.notes()[1:2] or offers.notes()))
    oi, inst = _sizes(base["accelerators_per_instance"].to_numpy(np.int64), max_accelerators)
    notes = list(offers.notes())
    rows = base.iloc[oi].reset_index(drop=True)
    rows["instances"] = inst
    if rows.empty:
        raise DataError(f"no offer fits --max-accelerators {max_accelerators}: the smallest "
                        f"instance has {int(base['accelerators_per_instance'].min())} "
                        "accelerators")
    # the time does not depend on the price: predict each distinct piece of hardware once
    codes, uniq = pd.factorize(pd.MultiIndex.from_frame(rows[_HW]))
    hw = pd.DataFrame(list(uniq), columns=_HW)
    pred = _predicted(hw, workload).iloc[codes].reset_index(drop=True)
    out = pd.concat([rows, pred], axis=1)
    out["n_accelerators"] = out["accelerators_per_instance"] * out["instances"]
    hourly = out["usd_per_hour"].to_numpy(float) * out["instances"].to_numpy(float)
    for suffix in ("", "_lo", "_hi"):
        out[f"cost_usd{suffix}"] = hourly * out[f"time_to_train_min{suffix}"].to_numpy(float) / 60
    extra = out["offer_note"].astype(str).to_numpy(object)
    old = out["prediction_note"].to_numpy(object)
    out["prediction_note"] = np.where(extra == "", old,
                                      np.where(old == "", extra, old + "; " + extra))
    ok = np.isfinite(out["time_to_train_min"].to_numpy(float))
    if not ok.all():
        why = out.loc[~ok, "prediction_note"].astype(str).str.split(";").str[0].value_counts()
        top = "; ".join(f"{r} ({n:,})" for r, n in why.head(3).items())
        notes.append(f"{int((~ok).sum()):,} of {len(out):,} offer sizes have no prediction and "
                     f"are not ranked: {top}")
    out = out[ok].reset_index(drop=True)
    if out.empty:
        raise DataError(f"no offer size can train workload {workload.name}: "
                        + (notes[-1] if notes else "every prediction was refused"))
    kinds = out["prediction_basis"].astype(str).str.split(":").str[0].value_counts()
    notes.append(f"{len(out):,} offer sizes of workload {workload.name} predicted ("
                 + ", ".join(f"{k} {n:,}" for k, n in kinds.items())
                 + f"; {len(hw):,} distinct hardware configurations); cost_usd = usd_per_hour "
                   "x instances x predicted hours; 80% intervals in _lo/_hi")
    return Plan(table=out[list(PLAN_COLUMNS)], notes=tuple(notes), workload=workload.name)


def plan_spec(*, criteria=None, require=None, budget_usd=None, deadline_h=None, robust=False,
              top=10, seed=0, samples=10_000, method=DEFAULT_METHOD, notes=()) -> AnalysisSpec:
    """The analysis of a plan: time and cost by default, ranked by ``method`` (a row of
    :data:`~gpurank.engine.methods.METHODS`, checked by the spec); ``budget_usd`` and
    ``deadline_h`` become constraints beside ``require``."""
    for name, text, example in (("criteria", criteria, "time_to_train_min:min,cost_usd:min"),
                                ("require", require, "spot == 0")):
        # an empty flag (an unset shell variable) is a mistake, not a request for the default
        if text is not None and not str(text).strip():
            raise ParamError(name, f"is empty; write e.g. '{example}', or leave it out")
    cons = [c for c in ([require] if require else [])]
    if budget_usd is not None:
        cons.append(f"cost_usd<={float(budget_usd)!r}")
    if deadline_h is not None:
        cons.append(f"time_to_train_min<={float(deadline_h) * 60.0!r}")
    return AnalysisSpec(
        criteria=parse_criteria(criteria or DEFAULT_PLAN_CRITERIA),
        constraints=",".join(cons) if cons else (), robust=robust, top=top, seed=seed,
        samples=samples, target="time_to_train_min", notes=tuple(notes), method=method,
        # the groups and drivers of a plan are a side view: a small forest and a short
        # silhouette scan keep them to a fraction of a second of the planning
        n_estimators=20, sample_rows=5_000, clusters=None, k_range=(2, 4))


def run_plan_cli(workload, offers_path, out_dir, *, max_accelerators=256, budget_usd=None,
                 deadline_h=None, criteria=None, require=None, robust=False, top=10, seed=0,
                 samples=10_000, method=DEFAULT_METHOD, backend="auto", report=True,
                 overwrite=False, progress=None):
    """``gpurank plan``: read the workload and the offers, plan, rank and write the output
    set. Returns the summary written (its ``plan`` part holds the offers' notes)."""
    check_param("max_accelerators", max_accelerators, *PLAN_CONSTRAINTS["max_accelerators"])
    wl = workload_arg(workload)
    offers = read_offers(offers_path)
    plan = plan_offers(wl, offers, max_accelerators=max_accelerators, budget_usd=budget_usd,
                       deadline_h=deadline_h)
    spec = plan_spec(criteria=criteria, require=require, budget_usd=budget_usd,
                     deadline_h=deadline_h, robust=robust, top=top, seed=seed,
                     samples=samples, method=method, notes=plan.notes)
    engine = Engine(backend=backend, **({"progress": progress} if progress else {}))
    result = engine.analyze(plan.table, spec)
    summary = engine.write(result, out_dir, report=report, overwrite=overwrite)
    return summary, result


def top_offers(table: pd.DataFrame, top: int = 10) -> pd.DataFrame:
    """The ``top`` ranked rows as a renter reads them: provider, instance, instances, time
    with its interval (hours), the cost of that size on demand and on spot (the cheapest
    ranked row of each kind for the same instance and size; NaN where the catalog has no such
    price) and ``p_top1`` when the ranking was robust."""
    ranked = table[table["rank"].notna()].sort_values("rank", kind="stable")
    best = ranked.head(int(top))
    key = ["provider", "instance", "instances"]
    cheapest = ranked.groupby(key + ["spot"], sort=False)["cost_usd"].min()
    out = pd.DataFrame({
        "rank": best["rank"].to_numpy(),
        "provider": best["provider"].to_numpy(object),
        "instance": best["instance"].to_numpy(object),
        "instances": best["instances"].to_numpy(),
        "n_accelerators": best["n_accelerators"].to_numpy(),
        "spot": best["spot"].to_numpy(bool),
        "time_h": best["time_to_train_min"].to_numpy(float) / 60,
        "time_h_lo": best["time_to_train_min_lo"].to_numpy(float) / 60,
        "time_h_hi": best["time_to_train_min_hi"].to_numpy(float) / 60,
    })
    for kind, col in ((False, "cost_on_demand_usd"), (True, "cost_spot_usd")):
        out[col] = [float(cheapest.get((p, i, n, kind), np.nan))
                    for p, i, n in zip(out["provider"], out["instance"], out["instances"])]
    if "p_top1" in best.columns:
        out["p_top1"] = best["p_top1"].to_numpy(float)
    return out
