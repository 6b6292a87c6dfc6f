"""Predict time, throughput, cost and energy of any canonical table, and say what each
prediction rests on.

``predict(table, model)`` adds ``predicted_*`` columns beside the table's own ones. Every row
gets one of three outcomes:

* **refused**: no number, and ``prediction_note`` says why (the accelerator is not modelled,
  the topology is inconsistent, the batch is under one sample per replica, ...;
  :mod:`.configs`);
* **predicted**, with ``prediction_basis`` (``fitted``: the model's efficiency for the
  row's family was fitted on this workload's runs; ``borrowed:shared``: the family had no
  runs and takes the efficiency shared across families on its own hardware facts;
  ``first-principles:<workload>``: the workload had no runs and takes the efficiencies of
  the nearest calibrated workload with its own FLOPs, bytes and convergence) and an 80%
  interval ``predicted_time_to_train_min_lo`` / ``_hi`` (:mod:`.intervals`);
* and, on every predicted row that goes beyond what the model was fitted on or assumes an
  input, a ``prediction_note`` naming each: a batch beyond the fitted range, a scale beyond
  the largest fitted system, convergence beyond the reference points, a borrowed family,
  each assumed input with the value used.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...errors import DataError
from ...formatting import number
from ...params import InstanceOf, check_param, validate_params
from ..facts import catalog as _cat
from .inputs import model_inputs, safe_div
from .intervals import INTERVAL_LEVEL, interval_factors, interval_table
from ..facts.mlperf_rules import round_ordinal
from .perfmodel import CalibratedModel, Workload, evaluate, resnet50
from ..facts.benchmarks import workload_for_benchmark
from .workloads import default_model, model_for_workload, workload

__all__ = [
    "PREDICTED",
    "BOTTLENECKS",
    "INTERVAL_COLUMNS",
    "predict",
    "model_outputs",
    "workload_of",
    "fit_errors",
    "basis_kind",
    "extrapolation",
    "Extrapolation",
    "basis_note",
    "first_principles",
    "rounds_after",
    "first_principles_note",
]

PREDICTED = ("time_to_train_min", "throughput", "utilization", "cost_usd", "energy_kwh")
#: Bottleneck names by the codes of :func:`~gpurank.engine.sources.model.perfmodel.evaluate`.
BOTTLENECKS = ("compute", "communication", "input", "memory")
#: The interval columns ``predict`` adds (80%, :data:`.intervals.INTERVAL_LEVEL`).
INTERVAL_COLUMNS = ("predicted_time_to_train_min_lo", "predicted_time_to_train_min_hi")


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


def model_outputs(cfg, extra, model, workload):
    """Time to train, throughput, utilization, cost, energy, power and bottleneck of the
    model inputs (:func:`.configs.model_inputs`)."""
    out = evaluate(cfg, model, workload)
    n = cfg["n_accelerators"]
    thr = out["throughput"]
    train_s = extra["samples"] / thr + model.overhead_s
    util = out["utilization"]
    power = extra["tdp"] * (model.idle_power_frac + (1 - model.idle_power_frac) * util)
    return {
        "time_to_train_min": train_s / 60.0,
        "throughput": thr * workload.throughput_scale,
        "utilization": util,
        "cost_usd": n * extra["price"] * train_s / 3600.0,
        "energy_kwh": n * power * train_s / 3.6e6,
        "epochs": extra["epochs"],
        "power_w": power,
        "bottleneck": out["bottleneck"],
    }


def basis_kind(basis) -> str:
    """``fitted``, ``borrowed``, ``first-principles`` or ``assumed``: what kind of evidence
    a ``prediction_basis`` value names."""
    text = str(basis)
    return text.split(":", 1)[0] if text else ""


def _fmt(v) -> str:
    """A batch or a scale as people write it (no trailing zeros)."""
    return number(v, 4, trim=True)


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
    domain (``model.fit["domain"]``) and the workload's reference convergence points (rows
    whose ``measured`` convergence is known do not extrapolate it)."""
    gb = np.asarray(global_batch, dtype=float)
    n = np.asarray(n, dtype=float)
    dom = model.fit.get("domain", {}) if isinstance(model.fit, dict) else {}
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


def _domain_notes(inputs, model: CalibratedModel, workload: Workload, use_table_epochs: bool):
    """Notes on the rows the model extrapolates to, and how far (doublings beyond the fitted
    range, summed over batch, scale and convergence)."""
    cfg, extra, notes = inputs.cfg, inputs.extra, inputs.notes
    gb, n = extra["global_batch"], cfg["n_accelerators"]
    measured = extra["measured_length"] if use_table_epochs else None
    ex = extrapolation(model, workload, gb, n, measured)
    if ex.batch_range:
        lo, hi = ex.batch_range
        notes.add(ex.batch_out, np.array([
            f"global batch {_fmt(b)} beyond the fitted range {_fmt(lo)}-{_fmt(hi)} of "
            f"{model.workload or workload.name}" if o else ""
            for o, b in zip(ex.batch_out, gb)], dtype=object))
    if ex.largest:
        notes.add(ex.scale_out, np.array([
            f"scale {_fmt(x)} accelerators beyond the largest fitted system "
            f"({_fmt(ex.largest)})" if b else "" for b, x in zip(ex.scale_out, n)],
            dtype=object))
    if ex.curve_top:
        notes.add(ex.curve_out, f"samples to converge extrapolated beyond the largest "
                                f"reference convergence batch ({_fmt(ex.curve_top)})")
    return ex.reach


def basis_note(basis: str, family, model: CalibratedModel, workload: Workload) -> str:
    """The note a prediction of ``basis`` carries: which evidence it lacks and what it takes
    instead ("" for a fitted family of the model's own workload)."""
    kind = basis_kind(basis)
    fit_on = model.workload or workload.name
    if kind == "borrowed":
        src = basis.split(":", 1)[1]
        what = ("the efficiency shared across vendors" if src == "shared"
                else f"the efficiency of {src}'s software")
        return (f"family {family} has no calibration rows for {fit_on}: {what} on its own "
                "peak, memory and links")
    if kind == "assumed":
        return (f"hand-set model without a fit: compute efficiency assumed "
                f"({model.compute_efficiency_default:.2f})")
    return ""


def rounds_after(table: pd.DataFrame, model: CalibratedModel) -> np.ndarray:
    """MLPerf rounds each row's ``round`` comes after the latest round the model was fitted
    on (``fit["domain"]["rounds"]``); 0 for a row of a fitted round or earlier, without a
    round, or for a model that does not say its rounds."""
    dom = model.fit.get("domain", {}) if isinstance(model.fit, dict) else {}
    fitted = [o for o in (round_ordinal(r) for r in (dom or {}).get("rounds") or ())
              if o is not None]
    if not fitted or "round" not in table.columns:
        return np.zeros(len(table))
    last = max(fitted)
    ords = (round_ordinal(r) for r in table["round"].to_numpy(dtype=object))
    return np.array([max(o - last, 0) if o is not None else 0 for o in ords], dtype=float)


def _later_notes(notes, table: pd.DataFrame, model: CalibratedModel, later) -> None:
    """Say, on each row of a round after the fitted ones, that the model does not know the
    software of that round."""
    if not (later > 0).any():
        return
    last = max(model.fit["domain"]["rounds"], key=round_ordinal)
    shipped = interval_table()
    wider = (" (its interval is that of rows predicted as far ahead)"
             if shipped.by_distance or shipped.per_round > 0 else "")
    notes.add(later > 0, np.array([
        f"round {r} is {int(k)} round(s) after the latest fitted round ({last}): software "
        f"gains since are not in the model{wider}" if k > 0 else ""
        for r, k in zip(table["round"].to_numpy(dtype=object), later)], dtype=object))


def first_principles(model: CalibratedModel, workload: Workload) -> bool:
    """Whether ``model`` predicts ``workload`` from another workload's fit."""
    return bool(model.workload and model.workload != workload.name and model.fit)


def _basis_notes(inputs, model: CalibratedModel, workload: Workload) -> np.ndarray:
    """Each row's ``prediction_basis``, with a note on the rows whose family or workload the
    model has no rows of."""
    extra, notes = inputs.extra, inputs.notes
    basis = extra["basis"].astype(object)
    texts = {}
    for b, f in set(zip(basis, extra["family"])):
        texts[(b, f)] = basis_note(b, f, model, workload)
    notes.add(np.ones(len(basis), dtype=bool),
              np.array([texts[(b, f)] for b, f in zip(basis, extra["family"])], dtype=object))
    if first_principles(model, workload):
        notes.add(extra["valid"], first_principles_note(model, workload))
        basis = np.where(extra["valid"], f"first-principles:{model.workload}", basis)
    return basis


def first_principles_note(model: CalibratedModel, workload: Workload) -> str:
    """The basis note of a workload that has no calibration rows: the fitted efficiencies of
    ``model``'s workload with ``workload``'s own FLOPs, bytes and convergence."""
    return (f"workload {workload.name} has no calibration rows: the efficiencies of "
            f"{model.workload} with {workload.name}'s FLOPs, bytes and convergence")


@validate_params({"table": (InstanceOf(pd.DataFrame, "a pandas DataFrame"),),
                  "model": (None, InstanceOf(CalibratedModel)),
                  "workload": (None, InstanceOf(Workload))})
def predict(
    table,
    model: CalibratedModel | None = None,
    *,
    workload: Workload | None = None,
    use_table_epochs: bool = True,
    accelerator_table=None,
    interconnect_table=None,
    host_cpu_table=None,
) -> pd.DataFrame:
    """Predict ``PREDICTED`` for every row of a canonical table.

    Returns a copy of the table with ``predicted_time_to_train_min``, its 80% interval
    ``predicted_time_to_train_min_lo`` / ``_hi``, ``predicted_throughput``,
    ``predicted_utilization``, ``predicted_cost_usd`` (NaN without
    ``price_per_accelerator_hour``), ``predicted_energy_kwh`` (accelerators only),
    ``predicted_epochs``, ``predicted_bottleneck`` (``compute``, ``communication``,
    ``input`` or ``memory``), plus ``accelerator_id`` (resolved), ``prediction_basis``
    (``fitted``, ``borrowed:shared``, ``first-principles:<workload>``, or ``assumed`` for a
    hand-set model; empty without a prediction), ``prediction_extrapolation`` (doublings
    of batch or scale beyond the fitted range, 0 inside it) and ``prediction_note`` (why a
    row has no prediction, or every extrapolation and assumption of one that has; empty
    when there is none). The table's own columns are kept unchanged beside the predictions.

    ``use_table_epochs=True`` uses the table's ``epochs`` where present (the measured epochs
    to converge; ``samples_to_converge`` for a workload counted in samples) and the
    workload's convergence curve elsewhere; ``False`` always uses the curve (a prediction
    before training). ``predicted_throughput`` is in the workload's ``throughput_unit``.

    Without ``workload``, the table's ``benchmark`` (one per table) is used, else the
    model's workload, else ResNet-50; without ``model``, the workload's shipped model
    (:func:`~gpurank.engine.sources.model.workloads.default_model`; a workload without one takes
    the nearest calibrated workload's). Hardware facts come from ``accelerator_table`` (the
    built-in catalog when omitted) under the table's own per-row columns
    (:mod:`.hardware`).
    """
    kw = dict(use_table_epochs=use_table_epochs, accelerator_table=accelerator_table,
              interconnect_table=interconnect_table, host_cpu_table=host_cpu_table)
    if workload is None and "benchmark" in table.columns:
        names = sorted({str(b) for b in table["benchmark"].dropna() if str(b).strip()})
        if len(names) > 1 or (names and workload_for_benchmark(names[0]) is None) or (
                names and table["benchmark"].isna().any()):
            return _predict_per_benchmark(table, names, model, **kw)
    workload = workload_of(table, workload, model)
    model = default_model(workload.name) if model is None else model
    model = model_for_workload(model, workload)
    res = table.copy()
    if len(table) == 0:  # the columns a table with rows gets, without rows
        if "accelerator_id" not in res.columns:
            res["accelerator_id"] = np.array([], dtype=object)
        for c in PREDICTED + ("epochs",):
            res[f"predicted_{c}"] = np.array([], dtype=float)
        for c in INTERVAL_COLUMNS:
            res[c] = np.array([], dtype=float)
        res["predicted_bottleneck"] = pd.Categorical([], categories=list(BOTTLENECKS))
        # text columns take pandas' string dtype, as the filled ones do
        res["prediction_basis"] = pd.Series([], dtype="str", index=res.index)
        res["prediction_extrapolation"] = np.array([], dtype=float)
        res["prediction_note"] = pd.Series([], dtype="str", index=res.index)
        res.attrs["prediction_interval"] = INTERVAL_LEVEL
        return res
    inputs = model_inputs(table, model, workload, **kw)
    out = model_outputs(inputs.cfg, inputs.extra, model, workload)
    basis = _basis_notes(inputs, model, workload)
    reach = _domain_notes(inputs, model, workload, use_table_epochs)
    valid = inputs.extra["valid"] & np.isfinite(out["time_to_train_min"])
    inputs.notes.refuse(inputs.extra["valid"] & ~valid,
                        "no link bandwidth for the topology (a link the row needs has none)")
    if "accelerator_id" not in res.columns:
        res["accelerator_id"] = inputs.extra["accelerator_id"]
    for c in PREDICTED + ("epochs",):
        res[f"predicted_{c}"] = np.where(valid, out[c], np.nan)
    later = rounds_after(table, model)
    _later_notes(inputs.notes, table, model, later)
    lo, hi = interval_factors(basis, reach, rounds_after=later)
    t = res["predicted_time_to_train_min"].to_numpy(float)
    res[INTERVAL_COLUMNS[0]] = np.where(valid, t * lo, np.nan)
    res[INTERVAL_COLUMNS[1]] = np.where(valid, t * hi, np.nan)
    bn = np.array(BOTTLENECKS, dtype=object)[out["bottleneck"]]
    res["predicted_bottleneck"] = pd.Categorical(
        np.where(valid, bn, None), categories=list(BOTTLENECKS)
    )
    res["prediction_basis"] = np.where(valid, basis, "")
    res["prediction_extrapolation"] = np.where(valid, reach, np.nan)
    res["prediction_note"] = inputs.notes.text()
    res.attrs["prediction_interval"] = INTERVAL_LEVEL
    return res


def _predict_per_benchmark(table, names, model, **kw) -> pd.DataFrame:
    """Each benchmark's rows predicted with its workload (and ``model``, else its shipped
    model); rows of a benchmark without a workload (or none) are refused and say why."""
    bench = table["benchmark"].astype(str).str.strip().to_numpy()
    bench = np.where(table["benchmark"].isna().to_numpy(), "", bench)
    parts = []
    for name in names + [""]:
        pos = np.flatnonzero(bench == name)
        if not len(pos):
            continue
        rows = table.iloc[pos]
        if name and workload_for_benchmark(name) is not None:
            out = predict(rows, model, workload=workload(name), **kw)
        else:
            out = predict(rows.iloc[:0], None, workload=resnet50(), **kw)
            out = pd.concat([out, rows], ignore_index=False).loc[rows.index]
            out["prediction_basis"] = ""
            out["prediction_note"] = (
                f"no workload for benchmark '{name}': describe it (docs/simulator.md, "
                "Workloads) or choose a shipped one" if name else "row has no benchmark")
        parts.append(out.assign(_pos=pos))
    res = pd.concat(parts).sort_values("_pos", kind="stable").drop(columns="_pos")
    res.attrs["prediction_interval"] = INTERVAL_LEVEL
    return res


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
