"""Held-out evidence across workloads: forward in time, leave one workload out, and the
prediction intervals calibrated on both.

* :func:`forward_in_time`: calibrate every benchmark on older rounds and predict a newer
  round from its configuration columns alone (no logs, no measured epochs); a benchmark the
  older rounds lack is predicted from the nearest calibrated one
  (``first-principles:<workload>``).
* :func:`leave_one_workload_out`: each named workload predicted by the models of the others
  (its nearest), with its own FLOPs, bytes and convergence: the evidence for a workload
  defined from public facts.
* :func:`interval_evidence` pools the held-out log errors by basis (leave one round out for
  ``fitted``, leave one family out for ``borrowed``, leave one workload out for
  ``first-principles``); :func:`~.intervals.fit_interval_table` turns them into the shipped
  interval table and :func:`interval_coverage` measures, holding each round out of the
  interval fit itself, how many held-out rows their interval holds.
"""

from __future__ import annotations


import numpy as np
import pandas as pd

from ...errors import DataError
from .fit import calibrate
from .intervals import BASIS_KINDS, INTERVAL_LEVEL, fit_interval_table, interval_factors
from ..facts.mlperf_rules import round_ordinal
from .evaluation import basis_kind
from .predict import predict
from .validation import (
    cross_validate,
    held_out_frame,
    rows_of,
    workload_benchmarks,
)
from ..facts.benchmarks import workload_for_benchmark
from .workloads import borrow_software_trends, nearest_calibrated, workload

__all__ = [
    "forward_in_time",
    "forward_folds",
    "FORWARD_STEPS",
    "leave_one_workload_out",
    "interval_evidence",
    "interval_coverage",
    "held_out_inside",
    "rank_agreement",
    "rank_ceiling",
    "SAME_CONFIGURATION",
    "forward_summary",
    "summarize_errors",
    "LOWO_WORKLOADS",
]

#: The workloads ``leave_one_workload_out`` holds out by default.
LOWO_WORKLOADS = ("gpt3_175b", "llama2_70b_lora", "bert_large", "stable_diffusion_v2")


def _fits(table: pd.DataFrame, kw) -> dict:
    """A model per shipped workload the table has usable rows of: ``{workload: model}``."""
    models = {}
    for bench in workload_benchmarks(table):
        wl = workload(bench)
        try:
            models[wl.name] = calibrate(rows_of(table, bench), workload=wl, **kw)
        except DataError:
            continue  # no usable rows of this benchmark
    return borrow_software_trends(models)


def _clean(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows a held-out comparison counts: closed division, not repeating another."""
    keep = np.ones(len(rows), dtype=bool)
    if "division" in rows.columns:
        keep &= ~rows["division"].astype(str).str.strip().str.lower().eq("open").to_numpy()
    if "is_duplicate" in rows.columns:
        keep &= ~rows["is_duplicate"].fillna(False).astype(bool).to_numpy()
    t = pd.to_numeric(rows["time_to_train_min"], errors="coerce").to_numpy(float)
    keep &= np.isfinite(t) & (t > 0)
    return rows[keep]


def _predict_with(rows, wl, models, kw, *, exclude=()):
    """``rows`` of workload ``wl`` predicted by its own model when ``models`` has one, else
    by the nearest one's; configuration columns only."""
    name = wl.name if wl.name in models and wl.name not in exclude else \
        nearest_calibrated(wl, exclude=exclude, among=tuple(models))
    return predict(rows, models[name], workload=wl, use_table_epochs=False, **kw)


def forward_in_time(table: pd.DataFrame, *, train_rounds, test_round, accelerator_table=None,
                    interconnect_table=None, host_cpu_table=None) -> pd.DataFrame:
    """Every benchmark of ``test_round`` predicted by models fitted on ``train_rounds`` only,
    from configuration columns alone; :func:`~.validation.held_out_frame` rows."""
    kw = dict(accelerator_table=accelerator_table, interconnect_table=interconnect_table,
              host_cpu_table=host_cpu_table)
    rounds = table["round"].astype(str)
    train = table[rounds.isin([str(r) for r in train_rounds]).to_numpy()]
    models = _fits(train, kw)
    if not models:
        raise DataError(f"no benchmark has usable rows in the rounds {list(train_rounds)}")
    out = _forward(table, models, test_round, kw)
    if out is None:
        raise DataError(f"round {test_round!r} has no rows of a known workload")
    return out


def _forward(table: pd.DataFrame, models: dict, test_round, kw) -> pd.DataFrame | None:
    """The rows of ``test_round`` predicted by ``models`` (None when it has none of a known
    workload)."""
    rounds = table["round"].astype(str)
    test = _clean(table[(rounds == str(test_round)).to_numpy()])
    parts = []
    for bench in workload_benchmarks(test):
        pred = _predict_with(rows_of(test, bench), workload(bench), models, kw)
        parts.append(held_out_frame(pred, str(test_round)))
    return pd.concat(parts, ignore_index=True) if parts else None


#: The rounds after the training rounds that :func:`forward_folds` predicts.
FORWARD_STEPS = (1, 2)


def forward_folds(table: pd.DataFrame, *, accelerator_table=None) -> pd.DataFrame:
    """Forward in time at every point of the table's history: for each round, the models
    fitted on it and every earlier round predict the next :data:`FORWARD_STEPS` rounds.
    Rows carry ``train_rounds`` (the latest fitted round) and ``rounds_after``."""
    kw = dict(accelerator_table=accelerator_table)
    names = sorted({str(r) for r in table["round"].astype(str)
                    if round_ordinal(r) is not None}, key=round_ordinal)
    rounds = table["round"].astype(str)
    parts = []
    for i in range(len(names) - 1):
        models = _fits(table[rounds.isin(names[:i + 1]).to_numpy()], kw)
        if not models:
            continue
        for test in names[i + 1:]:
            after = round_ordinal(test) - round_ordinal(names[i])
            if after not in FORWARD_STEPS:
                continue
            fold = _forward(table, models, test, kw)
            if fold is not None:
                parts.append(fold.assign(train_rounds=names[i], rounds_after=float(after)))
    if not parts:
        return pd.DataFrame()
    return pd.concat(parts, ignore_index=True)


def leave_one_workload_out(table: pd.DataFrame, *, workloads=LOWO_WORKLOADS,
                           accelerator_table=None, interconnect_table=None,
                           host_cpu_table=None) -> pd.DataFrame:
    """Each workload of ``workloads`` predicted, from configuration columns alone, by the
    nearest of the models fitted on every other workload's rows."""
    kw = dict(accelerator_table=accelerator_table, interconnect_table=interconnect_table,
              host_cpu_table=host_cpu_table)
    models = _fits(table, kw)
    parts = []
    for name in workloads:
        wl = workload(name)
        benches = [b for b in workload_benchmarks(table) if workload_for_benchmark(b) == wl.name]
        for bench in benches:
            rows = _clean(rows_of(table, bench))
            pred = _predict_with(rows, wl, models, kw, exclude=(wl.name,))
            parts.append(held_out_frame(pred, wl.name))
    if not parts:
        raise DataError("no rows of the workloads to hold out")
    return pd.concat(parts, ignore_index=True)


def interval_evidence(table: pd.DataFrame, *, extra_tables=(), accelerator_table=None
                      ) -> pd.DataFrame:
    """Held-out predictions of every shipped workload of ``table`` (and of the
    ``extra_tables``, e.g. ResNet-50's longer history), from configuration columns alone:
    leave one round out (leave one submitter out for a workload of one round), leave one
    family out, leave one workload out, and forward in time (:func:`forward_folds`, with
    ``rounds_after``); with ``kind`` (the basis kind of each prediction) and
    ``log_error``."""
    parts = []
    kw = dict(accelerator_table=accelerator_table)
    for t in (table, *extra_tables):
        for bench in workload_benchmarks(t):
            rows = _clean(rows_of(t, bench))
            wl = workload(bench)
            for by in ("round", "family"):
                try:
                    cv = cross_validate(rows, by=by, workload=wl, use_table_epochs=False, **kw)
                except DataError:
                    if by != "round" or "submitter" not in rows.columns:
                        continue
                    try:
                        cv = cross_validate(rows, by="submitter", workload=wl,
                                            use_table_epochs=False, **kw)
                    except DataError:
                        continue
                parts.append(cv.assign(method=f"leave one {by} out", benchmark=bench))
    lowo = leave_one_workload_out(table, **kw)
    parts.append(lowo.assign(method="leave one workload out"))
    for t in (table, *extra_tables):
        fwd = forward_folds(t, **kw)
        if len(fwd):
            parts.append(fwd.assign(method="forward in time"))
    ev = pd.concat(parts, ignore_index=True)
    ev = ev[np.isfinite(ev["predicted_time_to_train_min"].to_numpy(float))]
    ev["kind"] = [basis_kind(b) for b in ev["prediction_basis"]]
    ev["log_error"] = np.log(ev["predicted_time_to_train_min"].to_numpy(float)
                             / ev["time_to_train_min"].to_numpy(float))
    ev["reach"] = ev["prediction_extrapolation"].to_numpy(float)
    ev["rounds_after"] = (ev["rounds_after"].fillna(0.0).to_numpy(float)
                          if "rounds_after" in ev.columns else 0.0)
    return ev.reset_index(drop=True)


def held_out_inside(evidence: pd.DataFrame, *, level: float = INTERVAL_LEVEL) -> np.ndarray:
    """Whether each held-out row lies inside its interval, with the interval table itself
    fitted without the row's round (for each round, the table comes from the other rounds'
    evidence and is applied to this round's rows at their basis and distance); NaN for a
    row of the only round."""
    rounds = evidence["round"].astype(str).to_numpy()
    after = _rounds_after(evidence)
    inside = np.full(len(evidence), np.nan)
    for r in sorted(set(rounds)):
        held = rounds == r
        if held.all():
            continue
        table = fit_interval_table(evidence[~held], level=level)
        lo, hi = interval_factors(evidence["prediction_basis"].to_numpy()[held],
                                  evidence["reach"].to_numpy(float)[held], table,
                                  rounds_after=after[held])
        e = evidence["log_error"].to_numpy(float)[held]
        # the true value t / exp(e) lies in [t lo, t hi]
        inside[held] = (-e >= np.log(lo) - 1e-12) & (-e <= np.log(hi) + 1e-12)
    return inside


def _rounds_after(evidence: pd.DataFrame) -> np.ndarray:
    return (np.nan_to_num(evidence["rounds_after"].to_numpy(float))
            if "rounds_after" in evidence.columns else np.zeros(len(evidence)))


def interval_coverage(evidence: pd.DataFrame, *, level: float = INTERVAL_LEVEL,
                      inside: np.ndarray | None = None) -> pd.DataFrame:
    """Share of held-out rows inside their interval (:func:`held_out_inside`) per basis kind
    and distance: ``rounds_ahead`` 0 (leave one round, family or workload out) and the
    forward-in-time rows 1 and 2 rounds after the predicting model's latest round."""
    inside = held_out_inside(evidence, level=level) if inside is None else inside
    steps = np.floor(_rounds_after(evidence) + 1e-9)
    kinds = evidence["kind"].to_numpy(dtype=object)
    out = []
    for k in BASIS_KINDS:
        for d in sorted(set(steps)):
            rows = (kinds == k) & (steps == d) & np.isfinite(inside)
            if rows.any():
                out.append({"basis": k, "rounds_ahead": int(d), "n": int(rows.sum()),
                            "inside_pct": float(100.0 * inside[rows].mean())})
    return pd.DataFrame(out, columns=["basis", "rounds_ahead", "n", "inside_pct"])


def rank_agreement(held: pd.DataFrame) -> float:
    """Spearman's rank correlation between predicted and measured time to train (NaN for
    fewer than 3 rows or no spread): whether a table is ordered right even where the
    absolute time is off."""
    from scipy.stats import spearmanr

    p = held["predicted_time_to_train_min"].to_numpy(float)
    t = held["time_to_train_min"].to_numpy(float)
    ok = np.isfinite(p) & np.isfinite(t)
    if ok.sum() < 3 or np.ptp(p[ok]) == 0 or np.ptp(t[ok]) == 0:
        return float("nan")
    return float(spearmanr(p[ok], t[ok]).statistic)


#: The configuration columns whose rows :func:`rank_ceiling` treats as one configuration.
SAME_CONFIGURATION = ("accelerator", "n_accelerators")


def rank_ceiling(held: pd.DataFrame) -> float:
    """The rank correlation a prediction from accelerator and count alone reaches when it
    knows each configuration's median measured time: :func:`rank_agreement` with each row
    predicted by the median of the rows of its configuration (:data:`SAME_CONFIGURATION`).
    Systems of one configuration that ran far apart (another site's storage, its software
    build) hold it under 1, and no model of those columns orders them."""
    cols = [c for c in SAME_CONFIGURATION if c in held.columns]
    if len(cols) < len(SAME_CONFIGURATION) or not len(held):
        return float("nan")
    keys = held[cols].astype(str)
    best = held["time_to_train_min"].groupby([keys[c] for c in cols]).transform("median")
    return rank_agreement(held.assign(predicted_time_to_train_min=best.to_numpy(float)))


def forward_summary(held: pd.DataFrame, by, inside: np.ndarray | None = None) -> pd.DataFrame:
    """Per group of forward-in-time rows: n, median and p90 absolute error (%), the signed
    median (+ = predicted slower), the share inside the 80% interval, Spearman's rank
    correlation of predicted and measured time, and its ceiling (:func:`rank_ceiling`)."""
    h = held.assign(_inside=np.nan if inside is None else inside)
    out = []
    for key, g in h.groupby(by, sort=True):
        e = g["error_pct"].to_numpy(float)
        ins = g["_inside"].to_numpy(float)
        ins = ins[np.isfinite(ins)]
        out.append({**dict(zip([by] if isinstance(by, str) else by,
                                key if isinstance(key, tuple) else (key,))),
                    "n": len(g), "median_ape": float(np.median(np.abs(e))),
                    "p90_ape": float(np.quantile(np.abs(e), 0.9)),
                    "signed": float(np.median(e)),
                    "inside_pct": float(100 * ins.mean()) if ins.size else float("nan"),
                    "spearman": rank_agreement(g), "spearman_ceiling": rank_ceiling(g)})
    return pd.DataFrame(out)


def summarize_errors(held: pd.DataFrame, by) -> pd.DataFrame:
    """n, median and p90 absolute error (%) per group of held-out rows."""
    ape = held["error_pct"].abs()
    g = held.assign(ape=ape).groupby(by, sort=True)["ape"]
    return pd.DataFrame({"n": g.count(), "median_ape": g.median(),
                         "p90_ape": g.quantile(0.9)}).reset_index()
