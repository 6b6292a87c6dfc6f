"""What fit and predict share: the model's outputs of model inputs, their errors against
measured times, the basis vocabulary and the domain a fit covers.

:func:`model_outputs` turns :class:`~.inputs.ModelInputs` into time to train, throughput,
cost and energy; :func:`predicted_times` is the modelled time of each row of a table (what a
fit's errors are of); :func:`fit_errors` the error per family. :func:`basis_kind`,
:func:`basis_note`, :func:`first_principles` and :func:`first_principles_note` say what a
prediction rests on; :func:`extrapolation` how far a row goes beyond the fitted domain.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...errors import DataError
from ...params import InstanceOf, check_param
from ..facts import catalog as _cat
from ..facts.benchmarks import workload_for_benchmark
from .inputs import model_inputs, safe_div
from .model_arrays import ConfigArrays, RowFacts
from .perfmodel import CalibratedModel, Workload, evaluate, resnet50
from .workload import EXPERT_HALF_WIDTH
from .workloads import workload

__all__ = [
    "PREDICTED",
    "BOTTLENECKS",
    "model_outputs",
    "predicted_times",
    "workload_of",
    "fit_errors",
    "basis_kind",
    "basis_note",
    "extrapolation",
    "Extrapolation",
    "first_principles",
    "first_principles_note",
]

PREDICTED = ("time_to_train_min", "throughput", "utilization", "cost_usd", "energy_kwh")
#: Bottleneck names by the codes of :func:`~gpurank.engine.sources.model.perfmodel.evaluate`.
BOTTLENECKS = ("compute", "communication", "input", "memory")

def workload_of(table, given: Workload | None, model: CalibratedModel | None) -> Workload:
    """The workload a table is of: ``given``, else the one the table's ``benchmark`` column
    names (one benchmark per table), else the model's, else ResNet-50.

    The table's own benchmark comes before the model's: a model fitted on another workload
    predicts this one from its efficiencies (``first-principles:<workload>``)."""
    if check_param("workload", given, None, InstanceOf(Workload)) is not None:
        return given
    if isinstance(table, pd.DataFrame) and "benchmark" in table.columns:
        names = sorted({str(b) for b in table["benchmark"].dropna() if str(b).strip()})
        if len(names) > 1:
            raise DataError(
                f"the table holds results of {len(names)} benchmarks ({', '.join(names)}); "
                "the model describes one workload: choose one with --benchmark NAME")
        if names and workload_for_benchmark(names[0]) is not None:
            return workload(names[0])
        if names and not (model is not None and model.workload):
            return workload(names[0])  # the error names the known workloads
    if model is not None and model.workload and workload_for_benchmark(model.workload):
        return workload(model.workload)
    return resnet50()


def model_outputs(cfg: ConfigArrays, facts: RowFacts, model: CalibratedModel,
                  workload: Workload) -> dict:
    """Time to train, throughput, utilization, cost, energy, power and bottleneck of the
    model inputs (:func:`.inputs.model_inputs`): a dict of arrays, one per row."""
    out = evaluate(cfg, model, workload)
    n = cfg.n_accelerators
    thr = out["throughput"]
    train_s = facts.samples / thr + model.overhead_s
    util = out["utilization"]
    power = facts.tdp * (model.idle_power_frac + (1 - model.idle_power_frac) * util)
    return {
        "time_to_train_min": train_s / 60.0,
        "throughput": thr * workload.throughput_scale,
        "utilization": util,
        "cost_usd": n * facts.price * train_s / 3600.0,
        "energy_kwh": n * power * train_s / 3.6e6,
        "epochs": facts.epochs,
        "power_w": power,
        "bottleneck": out["bottleneck"],
    }


def predicted_times(table: pd.DataFrame, model: CalibratedModel, workload: Workload,
                    **kw) -> pd.DataFrame:
    """``table`` with ``accelerator_id`` (resolved, where the table has none) and
    ``predicted_time_to_train_min`` (NaN where the row is refused or its time overflows):
    what :func:`fit_errors` compares, as :func:`~.predict.predict` gives it for a model of
    ``workload``'s own. ``kw`` go to :func:`~.inputs.model_inputs`."""
    res = table.copy()
    col = "predicted_time_to_train_min"
    if len(table) == 0:
        if "accelerator_id" not in res.columns:
            res["accelerator_id"] = np.array([], dtype=object)
        res[col] = np.array([], dtype=float)
        return res
    inputs = model_inputs(table, model, workload, **kw)
    out = model_outputs(inputs.cfg, inputs.facts, model, workload)
    valid = inputs.facts.valid & np.isfinite(out["time_to_train_min"])
    if "accelerator_id" not in res.columns:
        res["accelerator_id"] = inputs.facts.accelerator_id
    res[col] = np.where(valid, out["time_to_train_min"], np.nan)
    return res


def basis_kind(basis) -> str:
    """``fitted``, ``borrowed``, ``first-principles`` or ``assumed``: what kind of evidence
    a ``prediction_basis`` value names."""
    text = str(basis)
    return text.split(":", 1)[0] if text else ""


@dataclass(frozen=True)
class Extrapolation:
    """Where rows go beyond what a model was fitted on.

    Attributes
    ----------
    reach : ndarray
        Doublings of batch or scale beyond the fitted range, summed (0 inside it).
    batch_out, scale_out, curve_out : ndarray of bool
        Global batch outside the fitted range; more accelerators than the largest fitted
        system; samples to converge extrapolated beyond the reference convergence points.
    batch_range : tuple of float or None
    largest : float or None
    curve_top : float or None
    """

    reach: np.ndarray
    batch_out: np.ndarray
    scale_out: np.ndarray
    curve_out: np.ndarray
    batch_range: tuple | None
    largest: float | None
    curve_top: float | None


def extrapolation(model: CalibratedModel, workload: Workload, global_batch, n,
                  measured=None) -> Extrapolation:
    """How far each row (``global_batch``, ``n`` accelerators) goes beyond the model's fitted
    domain (``model.fit.domain``) and the workload's reference convergence points (rows
    whose ``measured`` convergence is known do not extrapolate it)."""
    gb = np.asarray(global_batch, dtype=float)
    n = np.asarray(n, dtype=float)
    dom = model.fit.domain or {}
    zeros = np.zeros(gb.shape, dtype=bool)
    reach = np.zeros(gb.shape)
    batch_out, scale_out, curve_out = zeros, zeros, zeros
    rng = dom.get("global_batch")
    with np.errstate(divide="ignore", invalid="ignore"):
        if rng:
            lo, hi = float(rng[0]), float(rng[1])
            batch_out = (gb > hi * (1 + 1e-9)) | (gb < lo * (1 - 1e-9))
            reach = reach + np.where(gb > hi, np.log2(gb / hi), 0.0) + np.where(
                gb < lo, np.log2(lo / gb), 0.0)
        nmax = (dom.get("n_accelerators") or [None, None])[1]
        if nmax:
            scale_out = n > float(nmax) * (1 + 1e-9)
            reach = reach + np.where(scale_out, np.log2(n / float(nmax)), 0.0)
        curve = workload.samples_curve or workload.epochs_curve
        top = max(b for b, _ in curve) if curve else None
        if top:
            curve_out = gb > top * (1 + 1e-9)
            if measured is not None:
                curve_out = curve_out & ~np.asarray(measured, dtype=bool)
            reach = reach + np.where(curve_out, np.log2(gb / top), 0.0)
    reach = np.where(np.isfinite(reach), reach, 0.0)
    return Extrapolation(reach, batch_out, scale_out, curve_out,
                         (float(rng[0]), float(rng[1])) if rng else None,
                         float(nmax) if nmax else None, float(top) if top else None)


def basis_note(basis: str, family, model: CalibratedModel, workload: Workload) -> str:
    """The note a prediction of ``basis`` carries: which evidence it lacks and what it takes
    instead ("" for a fitted family of the model's own workload)."""
    kind = basis_kind(basis)
    fit_on = model.workload or workload.name
    if kind == "borrowed":
        src = basis.split(":", 1)[1]
        lent = src.split("+")
        fitted = model.compute_efficiency_by_family
        what = ("the efficiency shared across vendors" if src == "shared"
                else f"the efficiency of {' and '.join(lent)}, its generation's "
                     f"({model.generation_by_family.get(lent[0], '')}) in its power class"
                if all(f in fitted for f in lent)
                else f"the efficiency of {src}'s software")
        return (f"family {family} has no calibration rows for {fit_on}: {what} on its own "
                "peak, memory and links")
    if kind == "assumed":
        return (f"hand-set model without a fit: compute efficiency assumed "
                f"({model.compute_efficiency_default:.2f})")
    return ""


def first_principles(model: CalibratedModel, workload: Workload) -> bool:
    """Whether ``model`` predicts ``workload`` from another workload's fit."""
    return bool(model.workload and model.workload != workload.name and model.fit)


def first_principles_note(model: CalibratedModel, workload: Workload) -> str:
    """The basis note of a workload that has no calibration rows: the fitted efficiencies of
    ``model``'s workload with ``workload``'s own FLOPs, bytes and convergence."""
    note = (f"workload {workload.name} has no calibration rows: the efficiencies of "
            f"{model.workload} with {workload.name}'s FLOPs, bytes and convergence")
    factor = workload.expert_compute_factor
    if factor > 1.0:
        width = workload.expert_width
        note += (f"; its routed experts' FLOPs ({workload.expert_flop_share:.0%} of them) at "
                 f"{width / (width + EXPERT_HALF_WIDTH):.0%} of the dense rate (experts "
                 f"{width:,.0f} wide): a step computes x{factor:.2f} as long")
    return note


def fit_errors(
    pred: pd.DataFrame, *, by: str = "family", column: str = "time_to_train_min"
) -> pd.DataFrame:
    """Absolute percentage error of ``predicted_<column>`` vs ``<column>``: n, median, p90
    per group (``family`` is looked up from the catalog when absent) and overall."""
    df = pred.copy()
    if by == "family" and "family" not in df.columns:
        fam = _cat.accelerator_catalog().set_index("accelerator_id")["family"]
        df["family"] = df["accelerator_id"].map(fam)
    meas = pd.to_numeric(df[column], errors="coerce").to_numpy(float)
    ape = np.abs(safe_div(df[f"predicted_{column}"].to_numpy(float) - meas, meas)) * 100
    df = df.assign(_ape=ape)[np.isfinite(ape)]
    rows = [
        {
            "group": str(k),
            "n": len(v),
            "median_ape": float(v["_ape"].median()),
            "p90_ape": float(v["_ape"].quantile(0.9)),
        }
        for k, v in df.groupby(by, observed=True)
    ]
    rows.append(
        {
            "group": "ALL",
            "n": len(df),
            "median_ape": float(df["_ape"].median()) if len(df) else math.nan,
            "p90_ape": float(df["_ape"].quantile(0.9)) if len(df) else math.nan,
        }
    )
    return pd.DataFrame(rows)
