"""Predict time, throughput, cost and energy of any canonical table, and say what each
prediction rests on.

``predict(table, model)`` adds ``predicted_*`` columns beside the table's own ones. Every row
gets one of three outcomes:

* **refused**: no number, and ``prediction_note`` says why (the accelerator is not modelled,
  the topology is inconsistent, the batch is under one sample per replica, ...;
  :mod:`.configs`);
* **predicted**, with ``prediction_basis`` (``fitted``: the model's efficiency for the
  row's family was fitted on this workload's runs; ``borrowed:<family>``,
  ``borrowed:<vendor>``, ``borrowed:shared``: the family had no runs and takes the
  efficiency of its generation's fitted families in its power class, else its vendor's,
  else the one shared across vendors, on its own hardware facts;
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

import numpy as np
import pandas as pd

from ...formatting import number
from ...params import InstanceOf, validate_params
from ..facts.benchmarks import workload_for_benchmark
from ..facts.mlperf_rules import round_ordinal
from .evaluation import (
    BOTTLENECKS,
    PREDICTED,
    basis_note,
    extrapolation,
    first_principles,
    first_principles_note,
    model_outputs,
    workload_of,
)
from .inputs import model_inputs
from .intervals import INTERVAL_LEVEL, interval_factors, interval_table
from .perfmodel import CalibratedModel, Workload, resnet50
from .workloads import default_model, model_for_workload, workload

__all__ = ["INTERVAL_COLUMNS", "predict", "rounds_after"]

#: The interval columns ``predict`` adds (80%, :data:`.intervals.INTERVAL_LEVEL`).
INTERVAL_COLUMNS = ("predicted_time_to_train_min_lo", "predicted_time_to_train_min_hi")


def _fmt(v) -> str:
    """A batch or a scale as people write it (no trailing zeros)."""
    return number(v, 4, trim=True)


def _domain_notes(inputs, model: CalibratedModel, workload: Workload, use_table_epochs: bool):
    """Notes on the rows the model extrapolates to, and how far (doublings beyond the fitted
    range, summed over batch, scale and convergence)."""
    facts, notes = inputs.facts, inputs.notes
    gb, n = facts.global_batch, inputs.cfg.n_accelerators
    measured = facts.measured_length if use_table_epochs else None
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


def rounds_after(table: pd.DataFrame, model: CalibratedModel) -> np.ndarray:
    """MLPerf rounds each row's ``round`` comes after the latest round the model was fitted
    on (``fit["domain"]["rounds"]``); 0 for a row of a fitted round or earlier, without a
    round, or for a model that does not say its rounds."""
    dom = model.fit.domain or {}
    fitted = [o for o in (round_ordinal(r) for r in dom.get("rounds") or ())
              if o is not None]
    if not fitted or "round" not in table.columns:
        return np.zeros(len(table))
    last = max(fitted)
    ords = (round_ordinal(r) for r in table["round"].to_numpy(dtype=object))
    return np.array([max(o - last, 0) if o is not None else 0 for o in ords], dtype=float)


def _later_notes(notes, table: pd.DataFrame, model: CalibratedModel, later, facts) -> None:
    """Say, on each row of a round after the fitted ones, how the model reaches that round's
    software: by its vendor's software trend, or not at all (a model without one)."""
    if not (later > 0).any():
        return
    last = max(model.fit.domain["rounds"], key=round_ordinal)
    shipped = interval_table()
    wider = (" (its interval is that of rows predicted as far ahead)"
             if shipped.by_distance or shipped.per_round > 0 else "")
    rounds = table["round"].to_numpy(dtype=object)
    gain, cap = facts.software_gain, model.software_trend_rounds

    def how(k, g):
        if model.software_round is None:
            return "software gains since are not in the model"
        most = f", {cap:g} rounds of it at most" if k > cap else ""
        return (f"software extrapolated by its vendor's trend (compute efficiency "
                f"x{math.exp(g):.2f}{most})")

    notes.add(later > 0, np.array([
        f"round {r} is {int(k)} round(s) after the latest fitted round ({last}): "
        f"{how(k, g)}{wider}" if k > 0 else ""
        for r, k, g in zip(rounds, later, gain)], dtype=object))


def _basis_notes(inputs, model: CalibratedModel, workload: Workload) -> np.ndarray:
    """Each row's ``prediction_basis``, with a note on the rows whose family or workload the
    model has no rows of."""
    facts, notes = inputs.facts, inputs.notes
    basis = facts.basis.astype(object)
    texts = {}
    for b, f in set(zip(basis, facts.family)):
        texts[(b, f)] = basis_note(b, f, model, workload)
    notes.add(np.ones(len(basis), dtype=bool),
              np.array([texts[(b, f)] for b, f in zip(basis, facts.family)], dtype=object))
    if first_principles(model, workload):
        notes.add(facts.valid, first_principles_note(model, workload))
        basis = np.where(facts.valid, f"first-principles:{model.workload}", basis)
    return basis


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
    out = model_outputs(inputs.cfg, inputs.facts, model, workload)
    basis = _basis_notes(inputs, model, workload)
    reach = _domain_notes(inputs, model, workload, use_table_epochs)
    valid = inputs.facts.valid & np.isfinite(out["time_to_train_min"])
    inputs.notes.refuse(inputs.facts.valid & ~valid,
                        "no link bandwidth for the topology (a link the row needs has none)")
    if "accelerator_id" not in res.columns:
        res["accelerator_id"] = inputs.facts.accelerator_id
    for c in PREDICTED + ("epochs",):
        res[f"predicted_{c}"] = np.where(valid, out[c], np.nan)
    later = rounds_after(table, model)
    _later_notes(inputs.notes, table, model, later, inputs.facts)
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

