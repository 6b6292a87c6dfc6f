"""The self-contained HTML report: one file, figures inlined as PNG, no script, no network.

:func:`build_report` turns the ranked table (``ranking.parquet``) and ``summary.json`` into
HTML text; :func:`write_report` writes it atomically; :func:`rebuild_report` rebuilds it from
an output folder. The same inputs always give byte-identical HTML.
"""

from __future__ import annotations

import html
import json
import math
import string
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import DataError
from ..io import read_table, write_text
from . import plots

__all__ = ["build_report", "write_report", "rebuild_report", "SECTIONS"]

#: (id, heading) of every section, in order.
SECTIONS = (
    ("overview", "The data at a glance"),
    ("importance", "What drives the target"),
    ("clusters", "Groups of configurations"),
    ("scaling", "Scaling"),
    ("tradeoffs", "Trade-offs"),
    ("ranking", "The ranking"),
    ("settings", "Settings, backend and notes"),
)

_UNITS = {
    "time_to_train_min": "min",
    "throughput": "samples/s",
    "throughput_per_accelerator": "samples/s",
    "cost_usd": "USD",
    "energy_kwh": "kWh",
    "accelerator_hours": "h",
    "cpu_cores_per_accelerator": "cores",
    "price_per_accelerator_hour": "USD/h",
    "power_w": "W",
}
_SHORT = {
    "n_accelerators": "accels",
    "n_nodes": "nodes",
    "time_to_train_min": "time to train",
    "throughput_per_accelerator": "per-accel throughput",
    "scaling_efficiency": "scaling efficiency",
    "cpu_cores_per_accelerator": "cores/accel",
    "domination_count": "dominated by",
    "topsis_score": "TOPSIS",
    "pareto_rank": "front",
    "accelerator_hours": "accel-hours",
    "cost_usd": "cost",
    "energy_kwh": "energy",
}
#: Columns summarized in "the data at a glance", when present.
_GLANCE = ("n_accelerators", "n_nodes", "cpu_cores_per_accelerator", "time_to_train_min",
           "throughput_per_accelerator", "scaling_efficiency", "utilization", "cost_usd",
           "accelerator_hours", "energy_kwh")
_TEXT_COLUMNS = {"configuration", "accelerator", "label", "accelerators", "host_cpu",
                 "interconnect", "network",
                 "provider", "feature", "system", "submitter", "round", "framework",
                 "n_accelerators_range"}
_PROFILE_COLUMNS = ("cluster", "label", "size", "share", "accelerators",
                    "median_n_accelerators", "median_cpu_cores_per_accelerator",
                    "median_time_to_train_min", "median_throughput_per_accelerator",
                    "median_scaling_efficiency", "median_cost_usd")


# -- small HTML helpers ---------------------------------------------------------------------
def _e(v) -> str:
    return html.escape(str(v), quote=True)


def _fmt(v) -> str:
    """A number as people read it; '-' for missing values."""
    if v is None or v is pd.NA:
        return "-"
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (int, np.integer)):
        return f"{int(v):,}"
    if isinstance(v, (float, np.floating)):
        v = float(v)
        if not math.isfinite(v):
            return "-"
        if v == int(v) and abs(v) < 1e6:
            return f"{int(v):,}"
        a = abs(v)
        if a >= 1000:
            return f"{v:,.0f}"
        if a >= 10:
            return f"{v:.1f}"
        if a >= 0.01:
            return f"{v:.3g}"
        return f"{v:.2e}"
    return str(v)


def _header(col) -> str:
    name = col
    prefix = ""
    if col.startswith("median_"):
        prefix, name = "median ", col[len("median_"):]
    short = _SHORT.get(name, name.replace("_", " "))
    unit = _UNITS.get(name)
    return f"{prefix}{short} ({unit})" if unit else f"{prefix}{short}"


def _table(records, columns, *, headers=None, row_class=None, cell=None) -> str:
    """An escaped HTML table of ``records`` (dicts); ``cell(col, value, record)`` may return
    raw HTML for a cell (already escaped by the caller)."""
    heads = headers or [_header(c) for c in columns]
    out = ['<div class="table-wrap"><table>', "<thead><tr>"]
    out += [f"<th>{_e(h)}</th>" for h in heads]
    out.append("</tr></thead><tbody>")
    for r in records:
        cls = row_class(r) if row_class else ""
        out.append(f'<tr class="{cls}">' if cls else "<tr>")
        for c in columns:
            v = r.get(c)
            raw = cell(c, v, r) if cell else None
            kind = "txt" if c in _TEXT_COLUMNS or isinstance(v, str) else "num"
            kind = {"configuration": "txt config", "why": "txt why-cell"}.get(c, kind)
            out.append(f'<td class="{kind}">{raw if raw is not None else _e(_fmt(v))}</td>')
        out.append("</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def _kv_table(pairs) -> str:
    rows = "".join(f"<tr><th>{_e(k)}</th><td>{_e(_fmt(v))}</td></tr>" for k, v in pairs)
    return f'<div class="table-wrap"><table class="kv"><tbody>{rows}</tbody></table></div>'


def _missing(text) -> str:
    return f'<p class="missing">{_e(text)}</p>'


def _figure(name, fig, alt, caption) -> str:
    with plots.figure_rc():
        uri, w, h = plots.to_png_data_uri(fig)
    return (f'<figure data-figure="{_e(name)}"><img src="{uri}" width="{w}" height="{h}" '
            f'alt="{_e(alt)}">'
            f"<figcaption>{caption}</figcaption></figure>")


def _num(table, col):
    return pd.to_numeric(table[col], errors="coerce").to_numpy(dtype=float)


# -- sections -------------------------------------------------------------------------------
def _overview(table, summary) -> str:
    n = summary.get("rows", len(table))
    parts = [f"<p>{_e(_fmt(n))} configurations; Pareto front (rank 0 over all criteria): "
             f"{_e(_fmt(summary.get('pareto_front_size')))} configurations.</p>"]
    if "accelerator" in table.columns and len(table):
        counts = table["accelerator"].astype("string").fillna("(missing)").value_counts()
        recs = [{"accelerator": k, "rows": int(v), "share": f"{v / len(table):.1%}"}
                for k, v in counts.items()]
        parts.append(f"<h3>Accelerators ({len(counts)} models)</h3>")
        parts.append(_table(recs, ["accelerator", "rows", "share"]))
    recs = []
    for col in _GLANCE:
        if col not in table.columns:
            continue
        v = _num(table, col)
        fin = v[np.isfinite(v)]
        rec = {"column": _header(col), "missing": int(v.size - fin.size)}
        if fin.size:
            rec.update(min=float(fin.min()), median=float(np.median(fin)), max=float(fin.max()))
        recs.append(rec)
    if recs:
        parts.append("<h3>Ranges of the key columns</h3>")
        parts.append(_table(recs, ["column", "min", "median", "max", "missing"]))
    return "".join(parts)


def _importance(summary) -> str:
    imp = summary.get("importance")
    if not imp:
        why = _note_matching(summary, "importance") or (
            "no importance was computed for this analysis")
        return _missing(f"Feature importance is not available: {why}.")
    fig = plots.importance_figure(imp.get("features") or [])
    if fig is None:
        return _missing("Feature importance is not available: no feature was measured.")
    r2 = imp.get("holdout_r2")
    n_feats = len(imp.get("features") or [])
    shown = (f"; the {plots.MAX_FEATURES} largest shown of {n_feats}"
             if n_feats > plots.MAX_FEATURES else "")
    cap = (f"Random forest predicting <b>{_e(imp.get('target'))}</b> from the configuration "
           f"columns, fitted on {_e(_fmt(imp.get('rows_used')))} rows"
           f"{' (a seeded sample)' if imp.get('sampled') else ''}; held-out R² = "
           f"{_e(_fmt(r2))}. Left: impurity importance (fast, biased to many-valued columns). "
           "Right: permutation importance on held-out rows (drop in R² when the column is "
           "shuffled, with its standard deviation). Features sorted by permutation importance"
           f"{shown}.")
    out = [_figure("importance", fig, "bar charts of feature importance", cap)]
    if r2 is not None and r2 < 0.5:
        out.append(f'<p class="note">The forest explains little of the target (R² = '
                   f"{_e(_fmt(r2))}); read these importances with caution.</p>")
    out.append(_table(imp.get("features") or [],
                      ["feature", "permutation", "permutation_std", "impurity"]))
    return "".join(out)


def _note_matching(summary, word):
    for n in summary.get("notes") or []:
        if str(n).startswith(word):
            return str(n).split(":", 1)[-1].strip()
    return None


def _clusters(table, summary, sample, sample_caption) -> str:
    cl = summary.get("clusters")
    if not cl:
        why = _note_matching(summary, "clustering") or "clustering was not run"
        return _missing(f"Clusters are not available: {why}.")
    out = []
    sil = cl.get("silhouette") or {}
    k = cl.get("k")
    fig = plots.silhouette_figure(sil, k)
    out.append("<h3>Choice of k</h3>")
    chosen = (summary.get("settings") or {}).get("clusters", "auto") == "auto"
    how = (f"k = {_e(k)} was chosen as the best score" if chosen else
           f"k = {_e(k)} was set (--clusters {_e(k)}), not chosen; the curve shows how the "
           "other k compare")
    if fig is not None:
        out.append(_figure("silhouette", fig, "silhouette score over k",
                           "Silhouette score of KMeans for each k tried (higher: tighter, "
                           f"better separated groups; 1 is ideal, near 0 means overlapping "
                           f"groups); {how}."))
    else:
        scores = ", ".join(f"k = {_e(kk)}: {_e(_fmt(v))}" for kk, v in sil.items())
        out.append(f"<p>Only one k has a silhouette score, so there is no curve to draw "
                   f"({scores or 'none'}); {how}. Widen the range of k "
                   "to compare several.</p>")

    profiles = cl.get("profiles") or []
    labels = {int(p["cluster"]): str(p.get("label", "")) for p in profiles}
    feats = list(cl.get("features") or [])
    out.append("<h3>The groups</h3>")
    if "cluster" not in table.columns or not feats:
        out.append(_missing("The cluster projection is not available: the table has no "
                            "cluster column or the summary names no features."))
    else:
        try:
            xy, valid, explained = plots.projection(table.iloc[sample], feats)
        except KeyError as exc:
            xy = None
            out.append(_missing(f"The cluster projection is not available: column "
                                f"{exc.args[0]!r} is not in the table."))
        if xy is not None and valid.sum() >= 2:
            part = table.iloc[sample]
            clusters = part["cluster"].to_numpy().astype(int)
            front = (part["pareto_rank"].to_numpy() == 0) if "pareto_rank" in part else None
            fig = plots.projection_figure(xy, clusters, labels, explained, front)
            cap = (f"The configurations projected on the first two principal components of "
                   f"the standardized cluster features ({_e(', '.join(feats))}), coloured "
                   f"by KMeans cluster; Pareto-front rows circled. {sample_caption}")
            out.append(_figure("clusters", fig, "2-D projection coloured by cluster", cap))
        elif xy is not None:
            out.append(_missing("The cluster projection is not available: fewer than two "
                                "rows have every cluster feature."))
    if profiles:
        cols = [c for c in _PROFILE_COLUMNS if c in profiles[0]]

        def cell(c, v, r):
            if c == "cluster":
                return (f'<span class="swatch" style="background:'
                        f'{plots.cluster_color(int(v))}"></span>{_e(v)}')
            if c == "share" and v is not None:
                return _e(f"{v:.1%}")
            return None

        out.append(f"<p>{_e(k)} groups from KMeans on "
                   f"{_e(', '.join(feats))}; labels are generated from each group's "
                   "accelerator-count range, dominant model and median efficiency.</p>")
        out.append(_table(profiles, cols, cell=cell))
    return "".join(out)


def _scaling(table) -> str:
    need = ("accelerator", "n_accelerators", "time_to_train_min")
    missing = [c for c in need if c not in table.columns]
    if missing:
        return _missing(f"Scaling is not shown: the table has no {', '.join(missing)} column.")
    sc = plots.scaling_table(table)
    if sc.empty:
        return _missing("Scaling is not shown: no accelerator model was run at two or more "
                        "accelerator counts.")
    by_rows = table["accelerator"].astype("string").value_counts()
    models = [m for m in by_rows.index if m in set(sc["accelerator"])][: plots.MAX_MODELS]
    fig = plots.scaling_figure(sc, models)
    n_models = sc["accelerator"].nunique()
    more = (f" The {plots.MAX_MODELS} models with the most rows are shown, of {n_models}."
            if n_models > len(models) else "")
    cap = ("For each accelerator model and count N, the best (shortest) time to train over "
           "all rows, compared with the best run at the model's smallest count N_ref: "
           "speedup = T_ref / T (left) and scaling efficiency = speedup / (N / N_ref) "
           "(right); dashed: ideal linear scaling. Efficiency above 1 means larger systems "
           "did better than linear, e.g. because the smallest runs were starved (CPU, "
           f"memory).{more}")
    return _figure("scaling", fig, "speedup and scaling efficiency against accelerators", cap)


def _tradeoffs(table, summary, sample, sample_caption) -> str:
    if "time_to_train_min" not in table.columns:
        return _missing("Trade-offs are not shown: the table has no time_to_train_min column.")
    xcol = None
    for c in ("cost_usd", "accelerator_hours"):
        if c in table.columns and np.isfinite(_num(table, c)).any():
            xcol = c
            break
    if xcol is None:
        return _missing("Trade-offs are not shown: the table has neither cost_usd nor "
                        "accelerator_hours values.")
    part = table.iloc[sample]
    x, y = _num(part, xcol), _num(part, "time_to_train_min")
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    if not ok.any():
        return _missing("Trade-offs are not shown: no row has positive values of both "
                        f"{xcol} and time_to_train_min.")
    clusters = (part["cluster"].to_numpy().astype(int) if "cluster" in part
                else np.full(len(part), -1))
    front = (part["pareto_rank"].to_numpy() == 0) if "pareto_rank" in part else np.zeros(
        len(part), bool)
    ranks = part["rank"].to_numpy() if "rank" in part else None
    top = []
    if ranks is not None:
        for r in (1, 2, 3):
            hit = np.flatnonzero(ok & (ranks == r))
            if hit.size:
                top.append((r, x[hit[0]], y[hit[0]]))
    fig = plots.tradeoff_figure(x[ok], y[ok], clusters[ok], front[ok], xlabel=_header(xcol),
                                ylabel=_header("time_to_train_min"), top_ranks=top)
    dropped = int((~ok).sum())
    why_x = "" if xcol == "cost_usd" else " (no cost column, so accelerator-hours stand in)"
    cap = (f"Time to train against {_e(_header(xcol))}{why_x}, log axes; diamonds: the "
           f"Pareto front over all {len(summary.get('criteria') or [])} criteria (not only "
           "these two, so some front rows look dominated here); #1-#3 mark the top-ranked "
           f"rows. {sample_caption}"
           f"{f' {dropped:,} rows without positive values are left out.' if dropped else ''}")
    return _figure("tradeoff", fig, "time to train against cost, Pareto front highlighted",
                   cap)


_WHY_SHORT = {"time_to_train_min": "time", "throughput_per_accelerator": "tput/accel",
              "scaling_efficiency": "efficiency", "cost_usd": "cost", "energy_kwh": "energy",
              "accelerator_hours": "accel-h", "utilization": "util"}
_SETUP_COLUMNS = {"accelerator", "n_accelerators", "n_nodes", "host_cpu",
                  "cpu_cores_per_accelerator", "interconnect", "network", "provider", "round",
                  "submitter", "system"}


def _configuration(r) -> str:
    """One line describing a configuration's setup, e.g. '8 x H100 on 1 node; EPYC, 8 cores
    per accelerator; NVLink; InfiniBand'."""
    parts = []
    acc = r.get("accelerator")
    n = r.get("n_accelerators")
    first = f"{_fmt(n)} x {acc}" if n is not None and acc is not None else _fmt(acc or n)
    if r.get("n_nodes") is not None:
        nodes = r["n_nodes"]
        first += f" on {_fmt(nodes)} node{'s' if nodes != 1 else ''}"
    parts.append(first)
    cpu = r.get("host_cpu")
    cores = r.get("cpu_cores_per_accelerator")
    if cpu is not None or cores is not None:
        parts.append(", ".join(x for x in (
            str(cpu) if cpu is not None else None,
            f"{_fmt(cores)} cores/accel" if cores is not None else None) if x))
    for c in ("interconnect", "network", "provider"):
        v = r.get(c)
        if v is not None and str(v) not in ("", "none"):
            parts.append(str(v))
    who = " ".join(str(r[c]) for c in ("round", "submitter", "system") if r.get(c) is not None)
    if who:
        parts.insert(0, who + ":")
    return "; ".join(parts).replace(":;", ":")


def _why(record, criteria, ideal, anti) -> str:
    """Each criterion's position from the anti-ideal (0%) to the ideal (100%), as bars."""
    rows = []
    for c in criteria:
        col = c["column"]
        v, best, worst = record.get(col), ideal.get(col), anti.get(col)
        if v is None or best is None or worst is None:
            pct = None
        elif best == worst:
            pct = 1.0
        else:
            pct = min(1.0, max(0.0, (float(v) - worst) / (best - worst)))
        width = 0 if pct is None else round(100 * pct)
        label = "-" if pct is None else f"{width}%"
        rows.append(f'<span>{_e(_WHY_SHORT.get(col, col))}</span>'
                    f'<span class="bar"><span style="width:{width}%"></span></span>'
                    f'<span class="pct">{_e(label)}</span>')
    return f'<div class="why">{"".join(rows)}</div>'


def _ranking(summary) -> str:
    top = summary.get("top") or []
    if not top:
        return _missing("No ranked configurations were recorded in the summary.")
    criteria = summary.get("criteria") or []
    ideal, anti = summary.get("ideal") or {}, summary.get("anti_ideal") or {}
    keys = list(top[0].keys())
    tail = [c for c in ("topsis_score", "pareto_rank", "domination_count", "cluster")
            if c in keys]
    setup = [c for c in keys if c in _SETUP_COLUMNS]
    middle = [c for c in keys if c not in tail and c not in setup and c != "rank"]
    cols = ["rank"] + (["configuration"] if setup else []) + middle + tail + ["why"]
    top = [dict(r, configuration=_configuration(r)) for r in top]
    headers = [_header(c) if c != "why" else "why: worst 0% .. best 100%" for c in cols]
    crit_txt = ", ".join(f"{c['column']} ({c['sense']}, weight {_fmt(c['weight'])})"
                         for c in criteria)

    def cell(c, v, r):
        if c == "why":
            return _why(r, criteria, ideal, anti)
        if c == "topsis_score" and v is not None:
            return _e(f"{v:.4f}")
        return None

    return (f"<p>The {len(top)} best configurations by TOPSIS closeness (1 = at the ideal "
            f"point) over the criteria {_e(crit_txt)}; ties broken by Pareto front, then row "
            "order. Rows marked on the left edge are on the Pareto front. The last column "
            "shows, per criterion, how far each value lies from the worst (anti-ideal) to the "
            "best (ideal) value in the table.</p>"
            + _table(top, cols, headers=headers, cell=cell,
                     row_class=lambda r: "front" if r.get("pareto_rank") == 0 else "")
            + "<h3>Ideal and anti-ideal</h3>"
            + _table([{"criterion": c["column"], "sense": c["sense"], "weight": c["weight"],
                       "ideal": ideal.get(c["column"]), "anti-ideal": anti.get(c["column"])}
                      for c in criteria],
                     ["criterion", "sense", "weight", "ideal", "anti-ideal"]))


def _robust(summary) -> str:
    """Robust top configurations (SMAA over TOPSIS weights), when ``--robust`` ran."""
    rb = summary.get("robust")
    if not rb or not rb.get("top"):
        return ""
    k = rb["k"]
    recs = []
    for r in rb["top"]:
        cw = r.get("central_weights")
        se = r.get("expected_rank_se")
        recs.append({
            "rank": r.get("rank"), "configuration": _configuration(r),
            f"P(top {k})": f"{r['p_topk']:.3f} ± {r['p_topk_se']:.3f}",
            "P(first)": f"{r['p_top1']:.3f} ± {r['p_top1_se']:.3f}",
            "mean rank": f"{r['expected_rank']:.2f}" + ("" if se is None else f" ± {se:.2f}"),
            "central weights": "-" if cw is None else
            ", ".join(f"{c} {v:.2f}" for c, v in cw.items()),
        })
    cols = list(recs[0])
    return (f"<h3>Robust ranking (SMAA)</h3><p>Configurations in the top {k} under the largest "
            f"share of {rb['samples']:,} weight vectors drawn {_e(rb.get('weights', ''))}; "
            f"± one standard error. {rb['pruned']:,} rows dominated by {k} or more rows cannot "
            f"reach the top {k} under any weights and were not scored; the mean rank is among "
            f"the {rb['candidates']:,} others. Central weights: the mean weights under which "
            "the configuration ranks first.</p>"
            + _table(recs, cols, headers=cols))


def _settings(summary) -> str:
    out = [f"<p>Backend: <b>{_e(summary.get('backend', '?'))}</b>.</p>"]
    for fb in summary.get("fallbacks") or []:
        out.append(f'<p class="fallback">Fallback: {_e(fb)}</p>')
    settings = summary.get("settings") or {}
    if settings:
        out.append("<h3>Analysis settings</h3>")
        out.append(_kv_table((k.replace("_", " "), v) for k, v in settings.items()))
    timings = summary.get("timings_s") or {}
    if timings:
        out.append("<h3>Timings</h3>")
        total = sum(v for v in timings.values() if isinstance(v, (int, float)))
        out.append(_kv_table([(k, f"{v:.3f} s") for k, v in timings.items()]
                             + [("total", f"{total:.3f} s")]))
    notes = summary.get("notes") or []
    out.append("<h3>Notes</h3>")
    if notes:
        out.append('<ul class="notes">' + "".join(f"<li>{_e(n)}</li>" for n in notes)
                   + "</ul>")
    else:
        out.append("<p>No notes: nothing was sampled, dropped or skipped.</p>")
    return "".join(out)


def _sample_caption(n_total, sample, table) -> str:
    if len(sample) >= n_total:
        return f"All {n_total:,} rows are drawn."
    front = int((table["pareto_rank"].to_numpy() == 0).sum()) if "pareto_rank" in table else 0
    return (f"Sampled: {len(sample):,} of {n_total:,} rows are drawn, a seeded sample "
            f"stratified by cluster plus all {front:,} Pareto-front rows.")


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("gpurank")
    except Exception:  # noqa: BLE001 - the version is decoration only
        return "unknown"


# -- public API -----------------------------------------------------------------------------
def build_report(table: pd.DataFrame, summary: dict, *, max_points: int = 20_000,
                 seed: int = 0) -> str:
    """The HTML report of one analysis, as text.

    Parameters
    ----------
    table : DataFrame
        The ranked table (``AnalysisResult.table`` or ``ranking.parquet``).
    summary : dict
        The summary (``build_summary(result)`` or ``summary.json``).
    max_points : int, keyword-only
        Scatter plots draw a stratified sample (by cluster) of about this many rows plus
        every Pareto-front row.
    seed : int, keyword-only
        Seed of that sample.

    Returns
    -------
    str
        A complete HTML document with every figure inlined; byte-identical for equal inputs.
    """
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"build_report expects a pandas DataFrame; got {type(table).__name__}")
    table = table.reset_index(drop=True)
    summary = json.loads(json.dumps(summary, default=str))  # plain JSON types, like the file
    sample = plots.sample_for_plots(table, max_points, seed)
    caption = _sample_caption(len(table), sample, table)
    bodies = {
        "overview": lambda: _overview(table, summary),
        "importance": lambda: _importance(summary),
        "clusters": lambda: _clusters(table, summary, sample, caption),
        "scaling": lambda: _scaling(table),
        "tradeoffs": lambda: _tradeoffs(table, summary, sample, caption),
        "ranking": lambda: _ranking(summary) + _robust(summary),
        "settings": lambda: _settings(summary),
    }
    sections = [f'<section id="{sid}"><h2>{_e(title)}</h2>{bodies[sid]()}</section>'
                for sid, title in SECTIONS]
    nav = "".join(f'<a href="#{sid}">{_e(title)}</a>' for sid, title in SECTIONS)
    crit = ", ".join(f"{c['column']} {c['sense']}" for c in summary.get("criteria") or [])
    subtitle = (f"{_fmt(summary.get('rows', len(table)))} configurations ranked on the "
                f"{summary.get('backend', '?')} backend; criteria: {crit or '-'}")
    version = _version()
    template = string.Template(
        resources.files(__package__).joinpath("template.html").read_text(encoding="utf-8"))
    return template.substitute(
        title="gpurank report",
        generator=_e(f"gpurank {version}"),
        run_id=_e(str(summary.get("run_id", ""))),
        subtitle=_e(subtitle),
        nav=nav,
        body="\n".join(sections),
        footer=_e(f"Generated by gpurank {version}. Self-contained: figures are inlined PNG "
                  "images; the page loads nothing from the network."),
    )


def write_report(table: pd.DataFrame, summary: dict, path, *, overwrite=False,
                 **options) -> Path:
    """Build the report and write it to ``path`` atomically; returns the path.

    ``options`` (``max_points``, ``seed``) go to :func:`build_report`. An existing file is
    replaced only when it is a gpurank report or ``overwrite``.
    """
    return write_text(build_report(table, summary, **options), path, overwrite=overwrite,
                      name="--out")


def rebuild_report(ranking_parquet_path, output=None, *, overwrite=False, **options) -> Path:
    """Rebuild ``report.html`` from ``ranking.parquet`` and the ``summary.json`` beside it.

    The two must belong to one run: the run id in the Parquet metadata, in the summary and
    in the folder's manifest must agree. The report is drawn with the seed the analysis
    used (from the summary), so its figures equal the ones ``analyze`` drew.

    Parameters
    ----------
    ranking_parquet_path : str or Path
        ``ranking.parquet`` written by ``gpurank analyze`` / ``demo``.
    output : str or Path, optional
        Where to write; ``report.html`` in the parquet's folder by default.
    overwrite : bool, keyword-only
        Replace an existing ``output`` that is not a gpurank report.

    Raises
    ------
    DataError
        The parquet file or the ``summary.json`` beside it is missing, unreadable, has
        fields of the wrong type, or the two belong to different runs.
    """
    from ..io import read_metadata
    from ..outputs import MANIFEST_NAME, check_target, read_manifest

    src = Path(ranking_parquet_path)
    summary_path = src.parent / "summary.json"
    if not src.exists():
        raise DataError(f"ranking file '{src}' does not exist; run gpurank analyze or "
                        "gpurank demo first")
    if not src.is_file():
        raise DataError(f"ranking file '{src}' is not a file; give the ranking.parquet that "
                        "gpurank analyze wrote")
    if not summary_path.is_file():
        raise DataError(f"summary file '{summary_path}' does not exist; the report needs the "
                        f"summary.json written beside '{src.name}' by gpurank analyze")
    try:
        if summary_path.stat().st_size > 256 << 20:
            raise DataError(f"summary file '{summary_path}' is larger than 256 MB; it is not "
                            "a summary gpurank wrote")
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise DataError(f"cannot read summary file '{summary_path}': "
                        f"{type(exc).__name__}: {_one_line(exc)}") from None
    _check_summary(summary, summary_path)
    out = Path(output) if output is not None else src.parent / "report.html"
    if out.is_dir():
        out = out / "report.html"
    check_target(out, name="--out", overwrite=overwrite)
    try:
        meta = read_metadata(src)
    except Exception as exc:  # noqa: BLE001 - any parser failure is a data problem
        raise DataError(f"cannot read ranking file '{src}': {type(exc).__name__}: "
                        f"{_one_line(exc)}") from None
    manifest = read_manifest(src.parent)
    ids = {"ranking.parquet": meta.get("run_id"), "summary.json": summary.get("run_id")}
    if manifest is not None:
        ids[MANIFEST_NAME] = manifest.get("run_id")
    if len({v for v in ids.values()}) > 1:
        shown = ", ".join(f"{k} has run {v or 'none'}" for k, v in ids.items())
        raise DataError(f"'{src}' and '{summary_path}' do not belong to the same analysis "
                        f"({shown}); rebuild from one output folder of gpurank analyze")
    table = read_table(src)
    if "rows" in summary and int(summary["rows"]) != len(table):
        raise DataError(f"summary file '{summary_path}' describes {summary['rows']} rows but "
                        f"'{src}' holds {len(table)}; they do not belong to the same analysis")
    options.setdefault("seed", int((summary.get("settings") or {}).get("seed", 0)))
    return write_report(table, summary, out, overwrite=overwrite, **options)


#: Fields of summary.json the report reads, and the JSON types they must have.
_SUMMARY_TYPES = {
    "rows": int, "backend": str, "criteria": list, "settings": dict, "notes": list,
    "top": list, "timings_s": dict, "pareto_front_size": int, "ideal": dict, "anti_ideal": dict,
}


def _check_summary(summary, path) -> None:
    if not isinstance(summary, dict):
        raise DataError(f"summary file '{path}' does not hold a JSON object")
    for key, kind in _SUMMARY_TYPES.items():
        if key in summary and summary[key] is not None and (
                not isinstance(summary[key], kind) or isinstance(summary[key], bool)):
            raise DataError(f"summary file '{path}': field '{key}' must be a JSON "
                            f"{'number' if kind is int else kind.__name__}; it holds "
                            f"{type(summary[key]).__name__}")
    for i, c in enumerate(summary.get("criteria") or []):
        if not isinstance(c, dict) or not isinstance(c.get("column"), str):
            raise DataError(f"summary file '{path}': criteria[{i}] must be an object with a "
                            "'column' string")
    seed = (summary.get("settings") or {}).get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise DataError(f"summary file '{path}': settings.seed must be a non-negative "
                        f"integer; it holds {seed!r}")


def _one_line(exc) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 300 else text[:297] + "..."
