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

import re

import numpy as np
import pandas as pd

from ...errors import DataError
from .fit import calibrate
from .intervals import BASIS_KINDS, INTERVAL_LEVEL, fit_interval_table, interval_factors
from ..facts.mlperf_rules import round_ordinal
from .predict import basis_kind, predict
from .validation import (
    EVIDENCE_BEGIN,
    EVIDENCE_END,
    benchmarks_of,
    cross_validate,
    held_out_frame,
    rows_of,
)
from ..facts.benchmarks import workload_for_benchmark
from .workloads import nearest_calibrated, workload

__all__ = [
    "forward_in_time",
    "forward_folds",
    "FORWARD_STEPS",
    "leave_one_workload_out",
    "interval_evidence",
    "interval_coverage",
    "summarize_errors",
    "evidence_report",
    "LOWO_WORKLOADS",
]

#: The workloads ``leave_one_workload_out`` holds out by default.
LOWO_WORKLOADS = ("gpt3_175b", "llama2_70b_lora", "bert_large", "stable_diffusion_v2")


def _fits(table: pd.DataFrame, kw) -> dict:
    """A model per shipped workload the table has usable rows of: ``{workload: model}``."""
    models = {}
    for bench in benchmarks_of(table):
        if workload_for_benchmark(bench) is None:
            continue
        wl = workload(bench)
        try:
            models[wl.name] = calibrate(rows_of(table, bench), workload=wl, **kw)
        except DataError:
            continue  # no usable rows of this benchmark
    return models


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
    for bench in benchmarks_of(test):
        if workload_for_benchmark(bench) is None:
            continue
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
        benches = [b for b in benchmarks_of(table) if workload_for_benchmark(b) == wl.name]
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
        for bench in benchmarks_of(t):
            if workload_for_benchmark(bench) is None:
                continue
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


def interval_coverage(evidence: pd.DataFrame, *, level: float = INTERVAL_LEVEL
                      ) -> pd.DataFrame:
    """Share of held-out rows inside their interval, per basis kind, with the interval table
    itself fitted without the rows' round: for each round, the table comes from the other
    rounds' evidence and is applied to this round's rows. The forward-in-time rows (those
    with ``rounds_after`` > 0, their low end widened per round) are a row of their own,
    ``forward in time``."""
    rounds = evidence["round"].astype(str).to_numpy()
    after = (evidence["rounds_after"].to_numpy(float) if "rounds_after" in evidence.columns
             else np.zeros(len(evidence)))
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
    out = []
    kinds = evidence["kind"].to_numpy(dtype=object)
    forward = after > 0
    groups = [(k, (kinds == k) & ~forward) for k in BASIS_KINDS]
    groups.append(("forward in time", forward))
    for k, rows in groups:
        rows = rows & np.isfinite(inside)
        if rows.any():
            out.append({"basis": k, "n": int(rows.sum()),
                        "inside_pct": float(100.0 * inside[rows].mean())})
    return pd.DataFrame(out)


def summarize_errors(held: pd.DataFrame, by) -> pd.DataFrame:
    """n, median and p90 absolute error (%) per group of held-out rows."""
    ape = held["error_pct"].abs()
    g = held.assign(ape=ape).groupby(by, sort=True)["ape"]
    return pd.DataFrame({"n": g.count(), "median_ape": g.median(),
                         "p90_ape": g.quantile(0.9)}).reset_index()


def _md_rows(df: pd.DataFrame, cols, fmt) -> list[str]:
    head = "| " + " | ".join(c for c, _ in cols) + " |"
    align = "|" + "|".join(a for _, a in cols) + "|"
    return [head, align] + ["| " + " | ".join(fmt(r)) + " |" for r in df.itertuples()]


def _pct(v) -> str:
    return "n/a" if not np.isfinite(v) else f"{v:.1f}"


def evidence_report(table: pd.DataFrame, evidence: pd.DataFrame | None = None,
                    intervals=None) -> str:
    """The Markdown section (between :data:`~.validation.EVIDENCE_BEGIN` and ``_END``) of the
    cross-workload evidence: forward in time (every round but the
    latest predicts the latest), leave one family out and leave one workload out from the
    configuration columns, and the prediction intervals with their held-out coverage."""
    rounds = sorted({str(r) for r in table["round"].astype(str) if round_ordinal(r) is not None},
                    key=round_ordinal)
    lines = [EVIDENCE_BEGIN, ""]
    ev = interval_evidence(table) if evidence is None else evidence
    if len(rounds) >= 2:
        fwd = ev[(ev["method"] == "forward in time") & (ev["round"] == rounds[-1])
                 & (ev.get("train_rounds", pd.Series("", index=ev.index)) == rounds[-2])]
        if fwd.empty:
            fwd = forward_in_time(table, train_rounds=rounds[:-1], test_round=rounds[-1])
        fwd = fwd[np.isfinite(fwd["error_pct"])]
        s = summarize_errors(fwd, "benchmark")
        bases = fwd.groupby("benchmark")["prediction_basis"].agg(
            lambda b: ", ".join(sorted(set(map(str, b)) - {""})))
        s["basis"] = s["benchmark"].map(bases)
        lines += [
            f"**Forward in time**: every benchmark calibrated on {', '.join(rounds[:-1])}, "
            f"then {rounds[-1]} predicted from its configuration columns alone (no logs, no "
            "measured epochs; samples to converge from the round's reference convergence "
            "points). A benchmark the older rounds lack is predicted from the nearest "
            "calibrated workload (`first-principles:`). Absolute % error of time to train:",
            "",
            *_md_rows(s, [("benchmark", ":--"), ("n", "--:"), ("median %", "--:"),
                          ("p90 %", "--:"), ("basis", ":--")],
                      lambda r: [r.benchmark, str(r.n), _pct(r.median_ape), _pct(r.p90_ape),
                                 r.basis]),
            "",
            f"All {len(fwd)} rows: median {fwd['error_pct'].abs().median():.1f}%, p90 "
            f"{fwd['error_pct'].abs().quantile(0.9):.1f}%.",
            "",
        ]
    lofo = ev[ev["method"] == "leave one family out"]
    s = summarize_errors(lofo, ["benchmark", "family"])
    s = s[s["n"] >= 5]
    lines += [
        "**Leave one family out**, from the configuration columns (each family predicted by "
        "a model that never saw it: its vendor's efficiency, or the shared one, on its own "
        "peak, memory and links), every family with 5 rows or more:",
        "",
        *_md_rows(s, [("benchmark", ":--"), ("family", ":--"), ("n", "--:"),
                      ("median %", "--:"), ("p90 %", "--:")],
                  lambda r: [r.benchmark, r.family, str(r.n), _pct(r.median_ape),
                             _pct(r.p90_ape)]),
        "",
    ]
    lowo = ev[ev["method"] == "leave one workload out"]
    s = summarize_errors(lowo, ["held_out", "prediction_basis"])
    lines += [
        "**Leave one workload out**: each workload predicted by the nearest other calibrated "
        "workload's model with its own FLOPs, bytes, parameters and reference convergence "
        "(what a workload defined from public facts rests on):",
        "",
        *_md_rows(s, [("workload", ":--"), ("basis", ":--"), ("n", "--:"),
                      ("median %", "--:"), ("p90 %", "--:")],
                  lambda r: [r.held_out, r.prediction_basis, str(r.n), _pct(r.median_ape),
                             _pct(r.p90_ape)]),
        "",
    ]
    table_i = fit_interval_table(ev) if intervals is None else intervals
    cov = interval_coverage(ev)
    cov_of = dict(zip(cov["basis"], cov["inside_pct"]))
    rows = []
    for k, (w_lo, w_hi, n) in table_i.by_basis.items():
        rows.append(f"| {k} | {n} | {100 * (np.exp(-w_lo) - 1):+.0f}% | "
                    f"{100 * (np.exp(w_hi) - 1):+.0f}% | {_pct(cov_of.get(k, np.nan))} |")
    n_fwd = int(cov.loc[cov["basis"] == "forward in time", "n"].sum()) if len(cov) else 0
    if n_fwd:
        rows.append(f"| forward in time (any basis, one or two rounds later) | {n_fwd} | "
                    f"low end {table_i.per_round:.2f} wider per round (log) | | "
                    f"{_pct(cov_of.get('forward in time', np.nan))} |")
    lines += [
        f"**Prediction intervals** ({table_i.level:.0%}): from the held-out log errors above "
        "by basis (leave one round out for `fitted`, leave one family out for `borrowed`, "
        "leave one workload out for `first-principles`); each end widens by "
        f"{table_i.per_doubling:.3f} in log time per doubling of batch or scale beyond the "
        f"fitted range, and the low end by {table_i.per_round:.3f} per MLPerf round after "
        "the latest fitted one (from the forward-in-time predictions of every round by the "
        "models of the rounds before it: newer software trains faster than the model knows). "
        "Coverage: the share of held-out rows inside their interval when the interval table "
        "is itself fitted without the rows' round.",
        "",
        "| basis | rows | low end | high end | inside, % |",
        "|:--|--:|--:|--:|--:|",
        *rows,
        "",
        EVIDENCE_END,
    ]
    return "\n".join(lines) + "\n"
