"""Held-out validation of the performance model: cross-validation and its summary.

``cross_validate`` refits with one round, family or submitter held out at a time;
``cv_summary`` gives the errors per family (the Markdown of ``gpurank calibrate --report`` is
written by :mod:`gpurank.engine.commands.calibrate_report`).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from ...errors import DataError
from ...params import InstanceOf, Options, check_param
from ...schema import shown_names
from ..facts import catalog as _cat
from .inputs import model_inputs, safe_div, to_float
from .fit import calibrate, modelled_times, usable_rows
from .perfmodel import CalibratedModel, Workload
from .evaluation import workload_of
from .predict import predict
from ..facts.benchmarks import workload_for_benchmark
from ..facts.mlperf_rules import round_ordinal

__all__ = [
    "cross_validate",
    "cv_summary",
    "held_out_frame",
    "benchmarks_of",
    "rows_of",
    "workload_benchmarks",
]


def cross_validate(
    mlperf_table,
    *,
    by: str = "round",
    workload: Workload | None = None,
    accelerator_table=None,
    interconnect_table=None,
    host_cpu_table=None,
    base: CalibratedModel | None = None,
    fixed=(),
    use_table_epochs: bool = True,
) -> pd.DataFrame:
    """Held-out predictions: one fit per value of ``by``, predicting the rows of that value.

    Parameters
    ----------
    mlperf_table : DataFrame
        As for :func:`calibrate`.
    by : {"round", "family", "submitter"}
        ``"round"``: leave one round out (each round predicted by a model fitted on the
        others). ``"family"``: leave one accelerator family out (each family predicted by a
        model that never saw it, so its compute efficiency is borrowed). ``"submitter"``:
        leave one submitter out (for a workload of a single round, the nearest stand-in for
        a new round: other teams' software on the same hardware).
    use_table_epochs : bool
        As for :func:`predict`: False predicts from the configuration columns alone.

    Returns
    -------
    DataFrame
        One row per usable row of the table: ``held_out`` (the round or family left out),
        ``round``, ``family``, ``accelerator``, ``n_accelerators``, ``system`` (when the
        table has ``submitter``/``system``), ``time_to_train_min``,
        ``predicted_time_to_train_min`` and its interval (``_lo``, ``_hi``), ``error_pct``
        (signed: positive = predicted slower), ``prediction_basis`` and
        ``prediction_extrapolation`` (:func:`held_out_frame`).
    """
    check_param("by", by, Options(("round", "family", "submitter")))
    if by == "submitter" and "submitter" not in mlperf_table.columns:
        raise DataError("calibration table has no column 'submitter'; "
                        "leave-one-submitter-out needs it")
    check_param("mlperf_table", mlperf_table, InstanceOf(pd.DataFrame, "a pandas DataFrame"))
    if by == "round" and "round" not in mlperf_table.columns:
        raise DataError("calibration table has no column 'round'; leave-one-round-out needs it")
    base = CalibratedModel() if base is None else base
    workload = workload_of(mlperf_table, workload, None)
    kw = dict(
        accelerator_table=accelerator_table,
        interconnect_table=interconnect_table,
        host_cpu_table=host_cpu_table,
    )
    t = mlperf_table.reset_index(drop=True)
    ttt = to_float(t["time_to_train_min"])
    start = replace(base, compute_efficiency_by_family={}, compute_efficiency_shared=None,
                    compute_efficiency_by_vendor={})
    inputs = model_inputs(t, start, workload, **kw)
    usable, _ = usable_rows(t, inputs, ttt, modelled_times(inputs, start, workload))
    u = t[usable].reset_index(drop=True)
    fam = inputs.facts.family[usable].astype(str)
    key = (u["round"].astype(str).to_numpy() if by == "round"
           else u["submitter"].astype(str).to_numpy() if by == "submitter" else fam)
    parts = []
    for value in sorted(set(key)):
        held = key == value
        if held.all():
            continue  # nothing left to fit on
        model = calibrate(u[~held], base=base, workload=workload, fixed=fixed, **kw)
        pred = predict(u[held], model, workload=workload, use_table_epochs=use_table_epochs,
                       **kw)
        parts.append(held_out_frame(pred, value))
    if not parts:
        raise DataError(f"cross-validation by {by} needs usable rows of at least two {by}s")
    return pd.concat(parts, ignore_index=True)


def held_out_frame(pred: pd.DataFrame, held_out) -> pd.DataFrame:
    """The rows of a held-out prediction (:func:`predict`'s output) as the validation tables
    read them: what was held out, round, family, accelerator, count, system, measured and
    predicted time with its interval, signed error (%), basis and extrapolation."""
    meas = to_float(pred["time_to_train_min"])
    fam = _cat.accelerator_catalog().set_index("accelerator_id")["family"]
    families = pred["accelerator_id"].map(fam).astype(object).to_numpy() \
        if "family" not in pred.columns else pred["family"].astype(object).to_numpy()
    out = pd.DataFrame(
        {
            "held_out": held_out,
            "round": pred["round"].astype(str).to_numpy() if "round" in pred else "",
            "benchmark": pred["benchmark"].astype(str).to_numpy() if "benchmark" in pred
            else "",
            "family": np.where(pd.isna(families), "", families).astype(str),
            "accelerator": pred["accelerator"].astype(str).to_numpy(),
            "n_accelerators": pred["n_accelerators"].to_numpy(),
            "system": (
                pred["submitter"].astype(str) + " " + pred["system"].astype(str)
            ).to_numpy()
            if {"submitter", "system"} <= set(pred.columns)
            else "",
            "time_to_train_min": meas,
            "predicted_time_to_train_min": pred["predicted_time_to_train_min"].to_numpy(float),
            "predicted_time_to_train_min_lo":
                pred["predicted_time_to_train_min_lo"].to_numpy(float),
            "predicted_time_to_train_min_hi":
                pred["predicted_time_to_train_min_hi"].to_numpy(float),
            "prediction_basis": pred["prediction_basis"].to_numpy(),
            "prediction_extrapolation": pred["prediction_extrapolation"].to_numpy(float),
        }
    )
    out["error_pct"] = safe_div(out["predicted_time_to_train_min"] - meas, meas) * 100
    return out


def cv_summary(cv: pd.DataFrame) -> pd.DataFrame:
    """Per family: n, median and p90 absolute error (%), the worst row, and the bases used."""
    rows = []
    for fam, g in cv.groupby("family", sort=True):
        ape = g["error_pct"].abs()
        w = g.loc[ape.idxmax()]
        rows.append(
            {
                "family": fam,
                "n": len(g),
                "median_ape": float(ape.median()),
                "p90_ape": float(ape.quantile(0.9)),
                "worst_row": f"{w['round']} {w['system'] or w['accelerator']} "
                f"(n={int(w['n_accelerators'])})".strip(),
                "worst_error_pct": float(w["error_pct"]),
                "basis": ", ".join(sorted(set(g["prediction_basis"].astype(str)))),
            }
        )
    return pd.DataFrame(rows)


def benchmarks_of(table: pd.DataFrame) -> list[str]:
    """The benchmark names of a table ``gpurank mlperf`` wrote, sorted."""
    if "benchmark" not in table.columns:
        raise DataError("the table has no column 'benchmark'; --benchmark needs a table "
                        "gpurank mlperf wrote")
    return sorted({str(b) for b in table["benchmark"].dropna() if str(b).strip()})


def workload_benchmarks(table: pd.DataFrame) -> list[str]:
    """One benchmark name per shipped workload the table has rows of: the name its latest
    round uses (v5.0 renames ``ssd`` to ``retinanet`` and ``gnn`` to ``rgat``: one
    workload, one fit on the rows of both names). Benchmarks without a workload are left
    out."""
    latest = {}
    rounds = table["round"].astype(str) if "round" in table.columns else None
    for bench in benchmarks_of(table):
        wl = workload_for_benchmark(bench)
        if wl is None:
            continue
        last = -1
        if rounds is not None:
            ords = [round_ordinal(r) for r in set(rounds[table["benchmark"].astype(str) == bench])]
            last = max([o for o in ords if o is not None], default=-1)
        if wl not in latest or last > latest[wl][0]:
            latest[wl] = (last, bench)
    return sorted(b for _o, b in latest.values())


def rows_of(table: pd.DataFrame, benchmark: str) -> pd.DataFrame:
    """The rows of ``benchmark`` and of every other name of its workload (a renamed
    benchmark's rows under its old name)."""
    names = benchmarks_of(table)
    if benchmark not in names:
        raise DataError(f"benchmark {benchmark!r} matches no row; the table has: "
                        f"{shown_names(benchmark, names)}")
    wl = workload_for_benchmark(benchmark)
    same = {benchmark} if wl is None else {b for b in names if workload_for_benchmark(b) == wl}
    return table[table["benchmark"].astype(str).isin(same)].reset_index(drop=True)
