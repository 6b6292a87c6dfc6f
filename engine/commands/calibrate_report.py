"""The Markdown of ``gpurank calibrate --report`` and ``--benchmark all --report``: the
calibration report, the per-workload validation, the evidence across workloads and the fit's
box, written between markers into a Markdown file (docs/simulator.md holds them).

The numbers come from the model's library (:mod:`~gpurank.engine.sources.model.validation`,
:mod:`~gpurank.engine.sources.model.evidence`, :mod:`~gpurank.engine.sources.model.fit`); this
module only writes them as text, with the one table writer
(:func:`~gpurank.engine.formatting.markdown_table`).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..errors import DataError
from ..formatting import markdown_table
from ..sources.facts import catalog as _cat
from ..sources.facts.mlperf_rules import round_ordinal
from ..sources.facts.power import family_watts_per_tflops
from ..sources.model.evaluation import basis_kind
from ..sources.model.evidence import (
    forward_summary,
    held_out_inside,
    interval_coverage,
    interval_evidence,
    summarize_errors,
)
from ..sources.model.fit import FIT_BOUNDS, START_CLIPS, bound_source, calibrate
from ..sources.model.fit_report import FitReport
from ..sources.model.intervals import fit_interval_table
from ..sources.model.perfmodel import CalibratedModel
from ..sources.model.validation import cross_validate, cv_summary, rows_of, workload_benchmarks
from ..sources.model.workloads import borrow_software_trends, workload

__all__ = [
    "validation_report",
    "workloads_report",
    "evidence_report",
    "bounds_text",
    "software_text",
    "power_text",
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
#: prediction intervals and their coverage; :mod:`~gpurank.engine.sources.model.evidence`).
EVIDENCE_BEGIN = ("<!-- gpurank calibrate --benchmark all --report, evidence: begin (generated; "
                  "edits here are replaced) -->")
EVIDENCE_END = "<!-- gpurank calibrate --benchmark all --report, evidence: end -->"
def _md_cv(summary: pd.DataFrame) -> list[str]:
    """A :func:`~gpurank.engine.sources.model.validation.cv_summary` as a Markdown table."""
    return markdown_table(
        ["family", "n", "median %", "p90 %", "worst row", "its error %", "basis"],
        ([r.family, r.n, f"{r.median_ape:.1f}", f"{r.p90_ape:.1f}", r.worst_row,
          f"{r.worst_error_pct:+.1f}", r.basis] for r in summary.itertuples()),
        align="lrrrlrl")


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
    ins = [r for r in f.train_errors or [] if r["group"] == "ALL"]
    lines = [
        REPORT_BEGIN,
        "",
        f"Fit on {f.n_train or 0} usable rows of {f.n_rows or 0} "
        f"(skipped: {', '.join(f'{c} {r}' for r, c in (f.skipped or {}).items()) or 'none'}). "
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
        + power_text(model) + software_text(model) + bounds_text(f),
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
    power = family_watts_per_tflops(catalog)
    for fam_name, gen, vendor in sorted(
        set(zip(modelled["family"].astype(str), modelled["generation"].astype(str),
                modelled["vendor"].astype(str)))
    ):
        _v, basis = model.compute_efficiency_for(fam_name, gen, vendor=vendor, power=power)
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
    """The fit's box (:data:`~gpurank.engine.sources.model.fit.FIT_BOUNDS`) as the Markdown
    table docs/simulator.md states: each parameter, its coordinate, its bounds in its own
    units and their reason."""
    def num(v):
        return f"{v:.4g}"

    lines = markdown_table(
        ["parameter", "coordinate", "low", "high", "reason"],
        ([f"`{b.name}`", b.coordinate, num(b.values()[0]), num(b.values()[1]), b.reason]
         for b in FIT_BOUNDS.values()),
        align="llrrl")
    e, o = START_CLIPS["efficiency"], START_CLIPS["offset"]
    lines += ["", f"Starts: a family's start efficiency is clipped to [{e[0]}, {e[1]}] and its "
              f"start offset to [{o[0]:+g}, {o[1]:+g}] (logit), so no start lies on the box."]
    return "\n".join(lines) + "\n"


def power_text(model: CalibratedModel) -> str:
    """How a part's power headroom moves its family's efficiency ("" where it does not)."""
    if model.power_exponent <= 0:
        return ""
    return (f" Power exponent {model.power_exponent:.2f}: a part with 1.33 times its "
            f"family's watts per peak FLOP/s (an MI325X beside an MI300X) computes "
            f"x{(4.0 / 3.0) ** model.power_exponent:.2f} as fast (docs/simulator.md, "
            f"\"Power headroom\").")


def software_text(model: CalibratedModel) -> str:
    """What software a model's efficiencies are of, and its trend per round (the gain of a
    family in its second round; ``software_trend_decay`` of it left each round after)."""
    if model.software_round is None:
        return ""
    if not model.software_trend_by_vendor:
        return (f" Efficiencies at the software of {model.software_round} (its rows span one "
                "round: no software trend measured).")
    per = ", ".join(f"{v} x{math.exp(t * model.software_trend_decay):.2f}"
                    for v, t in sorted(model.software_trend_by_vendor.items()))
    whose = (f" (borrowed from {model.software_trend_from}'s fit: its own rows span one round)"
             if model.software_trend_from else "")
    return (f" Efficiencies at the software of {model.software_round}; software trend per round "
            f"of a family in its second round: {per}, {model.software_trend_decay:.2f} of it "
            f"left each round after{whose}.")


def bounds_text(fit) -> str:
    """`` On a bound: name (low bound 0.5: its reason); ...`` for every parameter of a fit
    report (a :class:`~gpurank.engine.sources.model.fit_report.FitReport` or a dict of its
    parts) that ended on a bound ("" for none): each with the side, the bound's value and the
    reason the box puts it there (:data:`~gpurank.engine.sources.model.fit.FIT_BOUNDS`)."""
    fit = FitReport.from_dict(fit)
    names = list(fit.at_bound or [])
    if not names:
        return ""
    sides = fit.bounds or {}
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
    for bench in workload_benchmarks(mlperf_table):
        if workload(bench).name not in models:
            models[workload(bench).name] = calibrate(rows_of(mlperf_table, bench),
                                                     workload=workload(bench), **kw)
    models = borrow_software_trends(models)  # as calibrate --benchmark all writes them
    summary, details = [], []
    for bench in workload_benchmarks(mlperf_table):
        wl = workload(bench)
        rows = rows_of(mlperf_table, bench)
        model = models[wl.name]
        f = model.fit
        ins = [r for r in f.train_errors or [] if r["group"] == "ALL"]
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
        summary.append([
            wl.name, bench, wl.throughput_unit, ", ".join(rounds), f.n_train or 0,
            f"{ins[0]['median_ape']:.1f}", label, len(cv), f"{ape.median():.1f}",
            f"{ape.quantile(0.9):.1f}",
            f"{worst['round']} {worst['system'] or worst['accelerator']} "
            f"(n={int(worst['n_accelerators'])}) {worst['error_pct']:+.1f}",
            "n/a" if math.isnan(lofo_med) else f"{lofo_med:.1f}"])
        effs = ", ".join(f"{k} {v:.2f}" for k, v in model.compute_efficiency_by_family.items())
        details += [
            f"**{wl.name}** (`{bench}`; {wl.throughput_unit}). Compute efficiency per family: "
            f"{effs}; arithmetic intensity {model.arithmetic_intensity:.0f} FLOP/B; overhead "
            f"{model.overhead_s:.0f} s; batch knee {model.batch_half:.1f}."
            + power_text(model) + software_text(model) + bounds_text(f)
            + f" Leave-one-{cv_by}-out per family:",
            "",
            *_md_cv(cv_summary(cv)),
            "",
        ]
    lines = [
        WORKLOADS_BEGIN,
        "",
        *markdown_table(
            ["workload", "benchmark", "throughput", "rounds", "rows fitted",
             "in-sample median %", "held out by", "n", "median %", "p90 %",
             "worst row, its error %", "leave-one-family-out median %"],
            summary, align="llllrrlrrrlr"),
        "",
        *details,
        WORKLOADS_END,
    ]
    return "\n".join(lines) + "\n"


def _md_rows(df: pd.DataFrame, cols, fmt) -> list[str]:
    """``df`` as a Markdown table: ``cols`` its (header, ``l`` or ``r``) pairs, ``fmt`` a
    row's cells."""
    return markdown_table([c for c, _ in cols], (fmt(r) for r in df.itertuples()),
                          align="".join(a for _, a in cols))


def _pct(v) -> str:
    return "n/a" if not np.isfinite(v) else f"{v:.1f}"


def _rho(v) -> str:
    return "n/a" if not np.isfinite(v) else f"{v:.2f}"


def _forward_lines(fwd: pd.DataFrame, inside: np.ndarray, train, test) -> list[str]:
    """The forward-in-time tables of one (training rounds, test round) pair: by benchmark,
    by basis kind and by family."""
    cols = [("n", "r"), ("median %", "r"), ("p90 %", "r"), ("signed median %", "r"),
            ("inside 80%, %", "r"), ("Spearman", "r")]

    def nums(r):
        return [str(r.n), _pct(r.median_ape), _pct(r.p90_ape), f"{r.signed:+.1f}",
                _pct(r.inside_pct), _rho(r.spearman)]

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
        *_md_rows(by_b, [("benchmark", "l"), *cols, ("Spearman ceiling", "r"), ("basis", "l")],
                  lambda r: [r.benchmark, *nums(r), _rho(r.spearman_ceiling), r.basis]),
        "",
        "The Spearman ceiling is what a prediction from accelerator and count alone reaches "
        "when it knows each configuration's median published time: under 1, systems of one "
        "configuration ran far apart, and no model of those columns orders them.",
        "",
        f"All {every.n} rows: median {every.median_ape:.1f}%, p90 {every.p90_ape:.1f}%, "
        f"signed median {every.signed:+.1f}%, {_pct(every.inside_pct)}% inside the 80% "
        f"interval, Spearman {every.spearman:.2f}. By basis:",
        "",
        *_md_rows(by_k, [("basis", "l"), *cols], lambda r: [r.kind, *nums(r)]),
        "",
        "By family and basis:",
        "",
        *_md_rows(by_f, [("family", "l"), ("basis", "l"), *cols],
                  lambda r: [r.family, r.kind, *nums(r)]),
        "",
    ]


def evidence_report(table: pd.DataFrame, evidence: pd.DataFrame | None = None,
                    intervals=None) -> str:
    """The Markdown section (between :data:`EVIDENCE_BEGIN` and ``_END``) of the
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
        "a model that never saw it: its generation's efficiency in its power class, else its "
        "vendor's, or the shared one, on its own peak, memory and links), every family with 5 "
        "rows or more:",
        "",
        *_md_rows(s, [("benchmark", "l"), ("family", "l"), ("n", "r"),
                      ("median %", "r"), ("p90 %", "r")],
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
        *_md_rows(s, [("workload", "l"), ("basis", "l"), ("n", "r"),
                      ("median %", "r"), ("p90 %", "r")],
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
                ends = [m, f"{100 * (np.exp(-a) - 1):+.0f}%", f"{100 * (np.exp(b) - 1):+.0f}%"]
            else:  # too few rows at this distance: the nearer distance's, widened per round
                ends = [0, "nearer distance's, low end wider per round", ""]
            rows.append([k, d, *ends, n_cov, _pct(pct)])
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
        *markdown_table(["basis", "rounds ahead", "rows fitted", "low end", "high end",
                         "rows held out", "inside, %"], rows, align="lrrrrrr"),
        "",
        EVIDENCE_END,
    ]
    return "\n".join(lines) + "\n"
