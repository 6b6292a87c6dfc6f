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
    EVIDENCE_BEGIN,
    EVIDENCE_END,
    cross_validate,
    held_out_frame,
    rows_of,
    workload_benchmarks,
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
    "held_out_inside",
    "rank_agreement",
    "forward_summary",
    "summarize_errors",
    "evidence_report",
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


def forward_summary(held: pd.DataFrame, by, inside: np.ndarray | None = None) -> pd.DataFrame:
    """Per group of forward-in-time rows: n, median and p90 absolute error (%), the signed
    median (+ = predicted slower), the share inside the 80% interval and Spearman's rank
    correlation of predicted and measured time."""
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
                    "spearman": rank_agreement(g)})
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


def _forward_lines(fwd: pd.DataFrame, inside: np.ndarray, train, test) -> list[str]:
    """The forward-in-time tables of one (training rounds, test round) pair: by benchmark,
    by basis kind and by family."""
    cols = [("n", "--:"), ("median %", "--:"), ("p90 %", "--:"), ("signed median %", "--:"),
            ("inside 80%, %", "--:"), ("Spearman", "--:")]

    def nums(r):
        rho = "n/a" if not np.isfinite(r.spearman) else f"{r.spearman:.2f}"
        return [str(r.n), _pct(r.median_ape), _pct(r.p90_ape), f"{r.signed:+.1f}",
                _pct(r.inside_pct), rho]

    by_b = forward_summary(fwd, "benchmark", inside)
    bases = fwd.groupby("benchmark")["prediction_basis"].agg(
        lambda b: ", ".join(sorted(set(map(str, b)) - {""})))
    by_b["basis"] = by_b["benchmark"].map(bases)
    by_k = forward_summary(fwd.assign(kind=[basis_kind(b) for b in fwd["prediction_basis"]]),
                           "kind", inside)
    by_f = forward_summary(fwd, ["family", "kind"] if "kind" in fwd.columns else "family",
                           inside)
    every = forward_summary(fwd.assign(all="all rows"), "all", inside).iloc[0]
    return [
        f"**Forward in time, {test}**: every benchmark calibrated on {', '.join(train)}, then "
        f"{test} predicted from its configuration columns alone (no logs, no measured epochs; "
        "samples to converge from the round's reference convergence points). A benchmark "
        "the older rounds lack is predicted from the nearest calibrated workload "
        "(`first-principles:`). Absolute and signed (+ = predicted slower) % error of time "
        "to train, the share inside the 80% interval and Spearman's rank correlation of "
        "predicted and published time:",
        "",
        *_md_rows(by_b, [("benchmark", ":--"), *cols, ("basis", ":--")],
                  lambda r: [r.benchmark, *nums(r), r.basis]),
        "",
        f"All {every.n} rows: median {every.median_ape:.1f}%, p90 {every.p90_ape:.1f}%, "
        f"signed median {every.signed:+.1f}%, {_pct(every.inside_pct)}% inside the 80% "
        f"interval, Spearman {every.spearman:.2f}. By basis:",
        "",
        *_md_rows(by_k, [("basis", ":--"), *cols], lambda r: [r.kind, *nums(r)]),
        "",
        "By family and basis:",
        "",
        *_md_rows(by_f, [("family", ":--"), ("basis", ":--"), *cols],
                  lambda r: [r.family, r.kind, *nums(r)]),
        "",
    ]


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
    inside = held_out_inside(ev)
    is_fwd = (ev["method"] == "forward in time").to_numpy()
    trained = ev.get("train_rounds", pd.Series("", index=ev.index)).astype(str).to_numpy()
    for i in range(len(rounds) - 1, max(len(rounds) - 3, 0), -1):
        sel = is_fwd & (ev["round"].astype(str).to_numpy() == rounds[i]) \
            & (trained == rounds[i - 1])
        fwd = ev[sel]
        if fwd.empty:
            continue
        ok = np.isfinite(fwd["error_pct"].to_numpy(float))
        fwd, ins = fwd[ok], inside[sel][ok]
        lines += _forward_lines(fwd, ins, rounds[:i], rounds[i])
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
    cov = interval_coverage(ev, inside=inside)
    cov_of = {(r.basis, r.rounds_ahead): (r.n, r.inside_pct) for r in cov.itertuples()}
    rows = []
    for k, (w_lo, w_hi, n) in table_i.by_basis.items():
        widths = {0: (w_lo, w_hi, n), **table_i.by_distance.get(k, {})}
        for d in sorted(set(widths) | {d for kk, d in cov_of if kk == k}):
            n_cov, pct = cov_of.get((k, d), (0, np.nan))
            if d in widths:
                a, b, m = widths[d]
                ends = (f"{m} | {100 * (np.exp(-a) - 1):+.0f}% | "
                        f"{100 * (np.exp(b) - 1):+.0f}%")
            else:  # too few rows at this distance: the nearer distance's, widened per round
                ends = "0 | nearer distance's, low end wider per round |"
            rows.append(f"| {k} | {d} | {ends} | {n_cov} | {_pct(pct)} |")
    lines += [
        f"**Prediction intervals** ({table_i.level:.0%}): from the held-out log errors above "
        "by basis and by distance: 0 rounds ahead from leave one round out (`fitted`), leave "
        "one family out (`borrowed`) and leave one workload out (`first-principles`); 1 and 2 "
        "rounds ahead from the forward-in-time predictions of every round by the models of "
        "the rounds before it, each basis at each distance its own half-widths. Each end "
        f"widens by {table_i.per_doubling:.3f} in log time per doubling of batch or scale "
        "beyond the fitted range, and the low end by "
        f"{table_i.per_round:.3f} per round beyond the farthest measured distance. Coverage: "
        "the share of held-out rows inside their interval when the interval table is itself "
        "fitted without the rows' round.",
        "",
        "| basis | rounds ahead | rows fitted | low end | high end | rows held out | "
        "inside, % |",
        "|:--|--:|--:|--:|--:|--:|--:|",
        *rows,
        "",
        EVIDENCE_END,
    ]
    return "\n".join(lines) + "\n"
