"""Held-out validation of the performance model: cross-validation and the Markdown reports of
``gpurank calibrate --report`` and ``--benchmark all --report`` (docs/simulator.md).

``cross_validate`` refits with one round, family or submitter held out at a time;
``validation_report`` and ``workloads_report`` turn the held-out errors into tables.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd

from ...errors import DataError
from ...params import InstanceOf, Options, check_param
from ...schema import shown_names
from ..facts import catalog as _cat
from .inputs import model_inputs, safe_div, to_float
from .fit import FIT_BOUNDS, START_CLIPS, bound_source, calibrate, modelled_times, usable_rows
from .perfmodel import CalibratedModel, Workload
from .evaluation import workload_of
from .predict import predict
from ..facts.benchmarks import workload_for_benchmark
from ..facts.mlperf_rules import round_ordinal
from .workloads import workload

__all__ = [
    "cross_validate",
    "cv_summary",
    "held_out_frame",
    "validation_report",
    "workloads_report",
    "benchmarks_of",
    "rows_of",
    "workload_benchmarks",
    "bounds_text",
    "bounds_table",
    "REPORT_BEGIN",
    "REPORT_END",
    "WORKLOADS_BEGIN",
    "WORKLOADS_END",
    "EVIDENCE_BEGIN",
    "EVIDENCE_END",
]

#: The section of a Markdown file that ``calibrate --report`` rewrites (the rest is kept).
REPORT_BEGIN = "<!-- gpurank calibrate --report: begin (generated; edits here are replaced) -->"
REPORT_END = "<!-- gpurank calibrate --report: end -->"
#: The section ``calibrate --benchmark all --report`` rewrites: the per-workload validation.
WORKLOADS_BEGIN = ("<!-- gpurank calibrate --benchmark all --report: begin (generated; edits "
                   "here are replaced) -->")
WORKLOADS_END = "<!-- gpurank calibrate --benchmark all --report: end -->"
#: The section ``calibrate --benchmark all --report`` rewrites where a file has it: the
#: evidence across workloads (forward in time, leave one family and one workload out, the
#: prediction intervals and their coverage; :mod:`.evidence`).
EVIDENCE_BEGIN = ("<!-- gpurank calibrate --benchmark all --report, evidence: begin (generated; "
                  "edits here are replaced) -->")
EVIDENCE_END = "<!-- gpurank calibrate --benchmark all --report, evidence: end -->"


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


def _md_cv(summary: pd.DataFrame) -> list[str]:
    lines = [
        "| family | n | median % | p90 % | worst row | its error % | basis |",
        "|:--|--:|--:|--:|:--|--:|:--|",
    ]
    for r in summary.itertuples():
        lines.append(
            f"| {r.family} | {r.n} | {r.median_ape:.1f} | {r.p90_ape:.1f} | "
            f"{r.worst_row} | {r.worst_error_pct:+.1f} | {r.basis} |"
        )
    return lines


def validation_report(mlperf_table, *, model: CalibratedModel | None = None, **kw) -> str:
    """The Markdown section ``calibrate --report`` writes: the fit, leave-one-round-out and
    leave-one-family-out tables per family, and the families that borrow an efficiency.

    ``model`` is the fit on every row (fitted here when omitted); ``kw`` go to
    :func:`cross_validate` (``workload``, the catalog tables).
    """
    model = calibrate(mlperf_table, **kw) if model is None else model
    loro = cross_validate(mlperf_table, by="round", **kw)
    lofo = cross_validate(mlperf_table, by="family", **kw)
    s_loro, s_lofo = cv_summary(loro), cv_summary(lofo)
    f = model.fit
    ins = [r for r in f.get("train_errors", []) if r["group"] == "ALL"]
    lines = [
        REPORT_BEGIN,
        "",
        f"Fit on {f.get('n_train', 0)} usable rows of {f.get('n_rows', 0)} "
        f"(skipped: {', '.join(f'{c} {r}' for r, c in f.get('skipped', {}).items()) or 'none'}). "
        f"In-sample absolute error of time to train: median {ins[0]['median_ape']:.1f}%, "
        f"p90 {ins[0]['p90_ape']:.1f}%."
        if ins
        else "",
        "",
        "Fitted parameters: "
        + ", ".join([f"{fam} {v:.3f}" for fam, v in model.compute_efficiency_by_family.items()])
        + f" (compute efficiency per family); arithmetic intensity "
        f"{model.arithmetic_intensity:.1f} FLOP/B at {model.mem_efficiency:.0%} of the peak "
        f"memory bandwidth; compute/memory overlap {model.mem_overlap:.3f}; communication "
        f"efficiency {model.comm_efficiency:.3f}, overlap {model.overlap:.3f}; overhead "
        f"{model.overhead_s:.1f} s; batch knee {model.batch_half:.1f}."
        + bounds_text(f),
        "",
        "**Leave-one-round-out** (each round predicted by a model fitted on the other "
        "rounds; absolute % error of time to train; worst row signed, + = predicted slower):",
        "",
        *_md_cv(s_loro),
        "",
        "**Leave-one-family-out** (each family predicted by a model that never saw it: its "
        "compute efficiency is borrowed, `basis` says from which family):",
        "",
        *_md_cv(s_lofo),
        "",
    ]
    catalog = _cat.accelerator_catalog(kw.get("accelerator_table"))
    modelled = catalog[pd.to_numeric(catalog["mem_bw_tbps"], errors="coerce") > 0]
    borrowed = []
    for fam_name, gen, vendor in sorted(
        set(zip(modelled["family"].astype(str), modelled["generation"].astype(str),
                modelled["vendor"].astype(str)))
    ):
        _v, basis = model.compute_efficiency_for(fam_name, gen, vendor=vendor)
        if basis != "fitted":
            borrowed.append(f"{fam_name} ({gen}) {basis}")
    lines += [
        "Families of the catalog without MLPerf rows, which borrow a compute efficiency in "
        "the sweep (`prediction_basis`): " + ("; ".join(borrowed) or "none") + ".",
        "",
        REPORT_END,
    ]
    return "\n".join(lines) + "\n"


def bounds_table() -> str:
    """The fit's box (:data:`~.fit.FIT_BOUNDS`) as the Markdown table docs/simulator.md
    states: each parameter, its coordinate, its bounds in its own units and their reason."""
    def num(v):
        return f"{v:.4g}"

    lines = ["| parameter | coordinate | low | high | reason |", "|:--|:--|--:|--:|:--|"]
    for b in FIT_BOUNDS.values():
        lo, hi = b.values()
        lines.append(f"| `{b.name}` | {b.coordinate} | {num(lo)} | {num(hi)} | {b.reason} |")
    e, o = START_CLIPS["efficiency"], START_CLIPS["offset"]
    lines += ["", f"Starts: a family's start efficiency is clipped to [{e[0]}, {e[1]}] and its "
              f"start offset to [{o[0]:+g}, {o[1]:+g}] (logit), so no start lies on the box."]
    return "\n".join(lines) + "\n"


def bounds_text(fit: dict) -> str:
    """`` On a bound: name (low bound 0.5: its reason); ...`` for every parameter of a fit
    report that ended on a bound ("" for none): each with the side, the bound's value and the
    reason the box puts it there (:data:`~.fit.FIT_BOUNDS`)."""
    names = list(fit.get("at_bound") or [])
    if not names:
        return ""
    sides = fit.get("bounds") or {}
    parts = []
    for name in names:
        b = sides.get(name)
        if b:
            parts.append(f"{name} ({b['side']} bound {b['value']:g}: {b['reason']})")
        else:  # a model file written before the fit recorded the sides
            parts.append(f"{name} ({bound_source(name).reason})")
    return " On a bound: " + "; ".join(parts) + "."


def workloads_report(mlperf_table, *, models: dict | None = None, **kw) -> str:
    """The Markdown section ``calibrate --benchmark all --report`` writes: per workload, the
    rows fitted, the in-sample error, the leave-one-round-out error (leave-one-submitter-out
    for a workload of one round) and leave-one-family-out error, with a per-family table.

    ``models`` maps workload names to fits on all of its rows (fitted here when missing);
    ``kw`` go to :func:`cross_validate` (the catalog tables).
    """
    models = dict(models or {})
    summary, details = [], []
    for bench in workload_benchmarks(mlperf_table):
        wl = workload(bench)
        rows = rows_of(mlperf_table, bench)
        model = models.get(wl.name) or calibrate(rows, workload=wl, **kw)
        f = model.fit
        ins = [r for r in f.get("train_errors", []) if r["group"] == "ALL"]
        rounds = sorted(set(rows["round"].astype(str)))
        cv_by = "round"
        try:
            cv = cross_validate(rows, by="round", workload=wl, **kw)
        except DataError:
            cv_by = "submitter"
            cv = cross_validate(rows, by="submitter", workload=wl, **kw)
        try:
            lofo = cross_validate(rows, by="family", workload=wl, **kw)
            lofo_med = float(lofo["error_pct"].abs().median())
        except DataError:
            lofo_med = math.nan
        ape = cv["error_pct"].abs()
        worst = cv.loc[ape.idxmax()]
        label = "round" if cv_by == "round" else "submitter (one round)"
        summary.append(
            f"| {wl.name} | {bench} | {wl.throughput_unit} | {', '.join(rounds)} | "
            f"{f.get('n_train', 0)} | {ins[0]['median_ape']:.1f} | {label} | {len(cv)} | "
            f"{ape.median():.1f} | {ape.quantile(0.9):.1f} | "
            f"{worst['round']} {worst['system'] or worst['accelerator']} "
            f"(n={int(worst['n_accelerators'])}) {worst['error_pct']:+.1f} | "
            f"{'n/a' if math.isnan(lofo_med) else f'{lofo_med:.1f}'} |"
        )
        effs = ", ".join(f"{k} {v:.2f}" for k, v in model.compute_efficiency_by_family.items())
        details += [
            f"**{wl.name}** (`{bench}`; {wl.throughput_unit}). Compute efficiency per family: "
            f"{effs}; arithmetic intensity {model.arithmetic_intensity:.0f} FLOP/B; overhead "
            f"{model.overhead_s:.0f} s; batch knee {model.batch_half:.1f}."
            + bounds_text(f)
            + f" Leave-one-{cv_by}-out per family:",
            "",
            *_md_cv(cv_summary(cv)),
            "",
        ]
    lines = [
        WORKLOADS_BEGIN,
        "",
        "| workload | benchmark | throughput | rounds | rows fitted | in-sample median % | "
        "held out by | n | median % | p90 % | worst row, its error % | leave-one-family-out "
        "median % |",
        "|:--|:--|:--|:--|--:|--:|:--|--:|--:|--:|:--|--:|",
        *summary,
        "",
        *details,
        WORKLOADS_END,
    ]
    return "\n".join(lines) + "\n"


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
