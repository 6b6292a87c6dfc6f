"""The report's sections, one function each, in the order of :data:`.html.SECTIONS`: each
takes the ranked table and the summary and returns its HTML."""

from __future__ import annotations

import math

import numpy as np

from ..formatting import column_label, fixed, integer, number, percent, value
from ..methods import SCORE_COLUMNS, summary_method
from . import plots
from .cells import (
    configuration_text,
    esc,
    html_table,
    kv_table,
    missing_note,
    numbers,
    png_figure,
)
from .explorer import explorer_view

__all__ = ["overview_section", "importance_section", "clusters_section", "scaling_section",
           "tradeoffs_section", "ranking_section", "robust_section", "settings_section",
           "preparation_section", "drawn_rows_caption", "ranking_scale"]

#: Columns summarized in "the data at a glance", when present.
_GLANCE = ("n_accelerators", "n_nodes", "cpu_cores_per_accelerator", "time_to_train_min",
           "throughput_per_accelerator", "scaling_efficiency", "utilization", "cost_usd",
           "accelerator_hours", "energy_kwh")
_PROFILE_COLUMNS = ("cluster", "label", "size", "share", "accelerators",
                    "median_n_accelerators", "median_cpu_cores_per_accelerator",
                    "median_time_to_train_min", "median_throughput_per_accelerator",
                    "median_scaling_efficiency", "median_cost_usd")
#: Columns that describe a configuration's setup; the ranking shows them as one sentence.
_SETUP_COLUMNS = {"accelerator", "n_accelerators", "n_nodes", "host_cpu",
                  "cpu_cores_per_accelerator", "interconnect", "network", "provider", "round",
                  "submitter", "system"}
#: Scores and ranks, shown last in the ranking.
_SCORE_COLUMNS = (*SCORE_COLUMNS, "pareto_rank", "domination_count", "cluster")


def overview_section(table, summary) -> str:
    """The overview: the number of configurations, the Pareto front's size, the rows per
    accelerator model and the ranges of the key columns."""
    n = summary.get("rows", len(table))
    parts = [f"<p>{esc(value(n))} configurations; Pareto front (rank 0 over all criteria): "
             f"{esc(value(summary.get('pareto_front_size')))} configurations.</p>"]
    if "accelerator" in table.columns and len(table):
        counts = table["accelerator"].astype("string").fillna("(missing)").value_counts()
        recs = [{"accelerator": k, "rows": int(v), "share": percent(v / len(table), 1)}
                for k, v in counts.items()]
        parts.append(f"<h3>Accelerators ({len(counts)} models)</h3>")
        parts.append(html_table(recs, ["accelerator", "rows", "share"]))
    recs = []
    for col in _GLANCE:
        if col not in table.columns:
            continue
        v = numbers(table, col)
        fin = v[np.isfinite(v)]
        rec = {"column": column_label(col), "missing": int(v.size - fin.size)}
        if fin.size:
            rec.update(min=float(fin.min()), median=float(np.median(fin)), max=float(fin.max()))
        recs.append(rec)
    if recs:
        parts.append("<h3>Ranges of the key columns</h3>")
        parts.append(html_table(recs, ["column", "min", "median", "max", "missing"]))
    return "".join(parts)


def importance_section(summary) -> str:
    """Feature importance: its figure and table, or a note saying why it is missing."""
    imp = summary.get("importance")
    if not imp:
        why = _note_matching(summary, "importance") or (
            "no importance was computed for this analysis")
        return missing_note(f"Feature importance is not available: {why}.")
    fig = plots.importance_figure(imp.get("features") or [])
    if fig is None:
        return missing_note("Feature importance is not available: no feature was measured.")
    r2 = imp.get("holdout_r2")
    n_feats = len(imp.get("features") or [])
    shown = (f"; the {plots.MAX_FEATURES} largest shown of {n_feats}"
             if n_feats > plots.MAX_FEATURES else "")
    cap = (f"Random forest predicting <b>{esc(imp.get('target'))}</b> from the configuration "
           f"columns, fitted on {esc(value(imp.get('rows_used')))} rows"
           f"{' (a seeded sample)' if imp.get('sampled') else ''}; held-out R² = "
           f"{esc(number(r2))}. Left: impurity importance (fast, biased to many-valued columns). "
           "Right: permutation importance on held-out rows (drop in R² when the column is "
           "shuffled, with its standard deviation). Features sorted by permutation importance"
           f"{shown}.")
    out = [png_figure("importance", fig, "bar charts of feature importance", cap)]
    if r2 is not None and r2 < 0.5:
        out.append(f'<p class="note">The forest explains little of the target (R² = '
                   f"{esc(number(r2))}); read these importances with caution.</p>")
    out.append(html_table(imp.get("features") or [],
                      ["feature", "permutation", "permutation_std", "impurity"]))
    return "".join(out)


def _note_matching(summary, word):
    for n in summary.get("notes") or []:
        if str(n).startswith(word):
            return str(n).split(":", 1)[-1].strip()
    return None


def clusters_section(table, summary, sample, sample_caption) -> str:
    """The clusters: the silhouette over k, a 2-D projection of the drawn rows (``sample``,
    described by ``sample_caption``) and the clusters' profiles; a note for what is missing."""
    cl = summary.get("clusters")
    if not cl:
        why = _note_matching(summary, "clustering") or "clustering was not run"
        return missing_note(f"Clusters are not available: {why}.")
    out = []
    sil = cl.get("silhouette") or {}
    k = cl.get("k")
    fig = plots.silhouette_figure(sil, k)
    out.append("<h3>Choice of k</h3>")
    chosen = (summary.get("settings") or {}).get("clusters", "auto") == "auto"
    how = (f"k = {esc(k)} was chosen as the best score" if chosen else
           f"k = {esc(k)} was set (--clusters {esc(k)}), not chosen; the curve shows how the "
           "other k compare")
    if fig is not None:
        out.append(png_figure("silhouette", fig, "silhouette score over k",
                           "Silhouette score of KMeans for each k tried (higher: tighter, "
                           f"better separated groups; 1 is ideal, near 0 means overlapping "
                           f"groups); {how}."))
    else:
        scores = ", ".join(f"k = {esc(kk)}: {esc(number(v))}" for kk, v in sil.items())
        out.append(f"<p>Only one k has a silhouette score, so there is no curve to draw "
                   f"({scores or 'none'}); {how}. Widen the range of k "
                   "to compare several.</p>")

    profiles = cl.get("profiles") or []
    labels = {int(p["cluster"]): str(p.get("label", "")) for p in profiles}
    feats = list(cl.get("features") or [])
    out.append("<h3>The groups</h3>")
    if "cluster" not in table.columns or not feats:
        out.append(missing_note("The cluster projection is not available: the table has no "
                            "cluster column or the summary names no features."))
    else:
        try:
            xy, valid, explained = plots.projection(table.iloc[sample], feats)
        except KeyError as exc:
            xy = None
            out.append(missing_note(f"The cluster projection is not available: column "
                                f"{exc.args[0]!r} is not in the table."))
        if xy is not None and valid.sum() >= 2:
            part = table.iloc[sample]
            clusters = part["cluster"].to_numpy().astype(int)
            front = (part["pareto_rank"].to_numpy() == 0) if "pareto_rank" in part else None
            fig = plots.projection_figure(xy, clusters, labels, explained, front)
            cap = (f"The configurations projected on the first two principal components of "
                   f"the standardized cluster features ({esc(', '.join(feats))}), coloured "
                   f"by KMeans cluster; Pareto-front rows circled. {sample_caption}")
            out.append(png_figure("clusters", fig, "2-D projection coloured by cluster", cap))
        elif xy is not None:
            out.append(missing_note("The cluster projection is not available: fewer than two "
                                "rows have every cluster feature."))
    if profiles:
        cols = [c for c in _PROFILE_COLUMNS if c in profiles[0]]

        def cell(c, v, r):
            if c == "cluster":
                return (f'<span class="swatch" style="background:'
                        f'{plots.cluster_color(int(v))}"></span>{esc(v)}')
            if c == "share" and v is not None:
                return esc(percent(v, 1))
            return None

        out.append(f"<p>{esc(k)} groups from KMeans on "
                   f"{esc(', '.join(feats))}. A label gives the group's accelerator-count "
                   "range (middle half of its rows), what it runs on and its median scaling "
                   "efficiency; it names an accelerator model only when that model is more "
                   "than half of the group's rows, else the family or generation that is, "
                   "else says \u201cmixed accelerators\u201d. The accelerators column lists "
                   "the largest models with their shares.</p>")
        out.append(html_table(profiles, cols, cell=cell))
    return "".join(out)


def scaling_section(table) -> str:
    """Speedup and scaling efficiency against the accelerator count per accelerator model,
    or a note saying why they are not shown."""
    need = ("accelerator", "n_accelerators", "time_to_train_min")
    missing = [c for c in need if c not in table.columns]
    if missing:
        return missing_note(f"Scaling is not shown: the table has no {', '.join(missing)} column.")
    sc = plots.scaling_table(table)
    if sc.empty:
        return missing_note("Scaling is not shown: no accelerator model was run at two or more "
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
    return png_figure("scaling", fig, "speedup and scaling efficiency against accelerators", cap)


def tradeoffs_section(table, summary, sample, sample_caption, seed) -> str:
    """The trade-off figure of the drawn rows and the interactive view (its sample seeded by
    ``seed``)."""
    return (_tradeoff_figure(table, summary, sample, sample_caption)
            + explorer_view(table, summary, seed))


def _tradeoff_figure(table, summary, sample, sample_caption) -> str:
    if "time_to_train_min" not in table.columns:
        return missing_note("The trade-off figure is not shown: the table has no "
                        "time_to_train_min column.")
    xcol = None
    for c in ("cost_usd", "accelerator_hours"):
        if c in table.columns and np.isfinite(numbers(table, c)).any():
            xcol = c
            break
    if xcol is None:
        return missing_note("The trade-off figure is not shown: the table has neither cost_usd "
                        "nor accelerator_hours values.")
    part = table.iloc[sample]
    x, y = numbers(part, xcol), numbers(part, "time_to_train_min")
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    if not ok.any():
        return missing_note("The trade-off figure is not shown: no row has positive values of "
                        f"both {xcol} and time_to_train_min.")
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
    intervals = None
    if {"time_to_train_min_lo", "time_to_train_min_hi"} <= set(part.columns):
        # the predicted rows' intervals: on the front and the top ranks, or every point of
        # a small table
        shown = front.copy() if len(part) > 300 else np.ones(len(part), dtype=bool)
        if ranks is not None:
            shown |= np.isin(ranks, (1, 2, 3))
        intervals = (numbers(part, "time_to_train_min_lo")[ok],
                     numbers(part, "time_to_train_min_hi")[ok], shown[ok])
    fig = plots.tradeoff_figure(x[ok], y[ok], clusters[ok], front[ok], xlabel=column_label(xcol),
                                ylabel=column_label("time_to_train_min"), top_ranks=top,
                                intervals=intervals)
    dropped = int((~ok).sum())
    why_x = "" if xcol == "cost_usd" else " (no cost column, so accelerator-hours stand in)"
    cap = (f"Time to train against {esc(column_label(xcol))}{why_x}, log axes; diamonds: the "
           f"Pareto front over all {len(summary.get('criteria') or [])} criteria (not only "
           "these two, so some front rows look dominated here); #1-#3 mark the top-ranked "
           "rows. "
           + ("Grey segments: the 80% prediction interval of a predicted time (and of the "
              f"{esc(column_label(xcol))} it drives, so along the diagonal), for "
              + ("every row" if len(part) <= 300 else "the front and the top-ranked rows")
              + ". " if intervals is not None else "")
           + f"{sample_caption}"
           f"{f' {dropped:,} rows without positive values are left out.' if dropped else ''}")
    return png_figure("tradeoff", fig, "time to train against cost, Pareto front highlighted",
                   cap)


# -- where a row sits between the anti-ideal and the ideal -----------------------------------
_KNOWN_NORMS = {
    "vector": "each criterion divided by its Euclidean norm",
    "minmax": "each criterion rescaled to [0, 1] between its extremes",
}


def ranking_scale(norm, *, by="TOPSIS") -> tuple[str, str]:
    """The scale on which the method ``by`` compared the criteria under normalization
    ``norm``.

    Returns
    -------
    (kind, text) : (str, str)
        ``kind`` is ``"log"`` when the normalization takes logarithms (its name contains
        "log"), else ``"linear"`` (vector and min-max normalizations are linear, so a
        position between the anti-ideal and the ideal is the same on the values and on the
        normalized values); ``text`` says so for the reader, naming an unknown
        normalization rather than guessing what it did.
    """
    if norm is None or norm == "":
        return "linear", ("linear in the values (the summary does not record the "
                          "normalization)")
    name = str(norm)
    if "log" in name.lower():
        return "log", (f"logarithmic ('{name}' normalization: {by} compared the logarithms "
                       "of the values, so a position is measured on log10 of each value)")
    if name in _KNOWN_NORMS:
        return "linear", (f"linear ('{name}' normalization: {_KNOWN_NORMS[name]}; a position "
                          "is the same on the values and on the normalized values)")
    return "linear", (f"linear in the values ('{name}' is a normalization this report does "
                      "not know; positions are drawn on the values themselves)")


def _position(v, best, worst, kind):
    """(share, on_log) of the way from ``worst`` (0) to ``best`` (1) for value ``v``; the
    share is None when a value is missing. A log scale needs positive values; without them
    the position is linear (``on_log`` False)."""
    try:
        v, best, worst = float(v), float(best), float(worst)
    except (TypeError, ValueError):
        return None, False
    if not all(math.isfinite(t) for t in (v, best, worst)):
        return None, False
    on_log = kind == "log" and min(v, best, worst) > 0
    if on_log:
        v, best, worst = math.log10(v), math.log10(best), math.log10(worst)
    if best == worst:
        return 1.0, on_log
    return min(1.0, max(0.0, (v - worst) / (best - worst))), on_log


def _criterion_cell(v, best, worst, kind):
    share, _ = _position(v, best, worst, kind)
    pos = ("" if share is None else
           f'<span class="pos" title="{esc(percent(share, 1))} of the way from the anti-ideal '
           f'to the ideal"><span class="bar"><span style="width:{100 * share:.1f}%">'
           f'</span></span><span class="pct">{esc(percent(share, 1))}</span></span>')
    return f'<span class="v">{esc(value(v))}</span>{pos}'


def ranking_section(summary) -> str:
    """The top configurations, each criterion placed between the worst and the best value on
    the scale TOPSIS used, and the criteria with their weights; a note when none was recorded."""
    top = summary.get("top") or []
    if not top:
        return missing_note("No ranked configurations were recorded in the summary.")
    criteria = summary.get("criteria") or []
    crit_cols = [c["column"] for c in criteria]
    sense = {c["column"]: c.get("sense") for c in criteria}
    ideal, anti = summary.get("ideal") or {}, summary.get("anti_ideal") or {}
    norm = (summary.get("settings") or {}).get("norm")
    method = summary_method(summary)
    by = method.name.upper()
    kind, scale_text = ranking_scale(norm, by=by)
    if method.scale is not None and kind == "linear":
        scale_text = (f"linear ({method.scale}; a position is the same on the values and on "
                      "the normalized values)")
    keys = list(top[0].keys())
    setup = [c for c in keys if c in _SETUP_COLUMNS or c == "configuration"]
    basis = ["prediction_basis"] if "prediction_basis" in keys else []
    crits = [c for c in crit_cols if c in keys]
    tail = [c for c in _SCORE_COLUMNS if c in keys]
    others = [c for c in keys if c not in setup and c not in crits and c not in tail
              and c not in basis and c != "rank"]
    cols = ["rank"] + (["configuration"] if setup else []) + basis + crits + others + tail
    top = [dict(r, configuration=configuration_text(r)) if setup else r for r in top]

    def head(c):
        text = esc(column_label(c))
        if c in crits:
            best = "lower" if sense.get(c) == "min" else "higher"
            return f'{text}<span class="sense">{best} is better</span>'
        return text

    def cell(c, v, r):
        if c in crits:
            return _criterion_cell(v, ideal.get(c), anti.get(c), kind)
        if c in SCORE_COLUMNS and v is not None:
            return esc(fixed(v, 4))
        return None

    fallback = []
    if kind == "log":
        for c in crits:
            if any(not _position(r.get(c), ideal.get(c), anti.get(c), kind)[1]
                   for r in top if r.get(c) is not None):
                fallback.append(c)
    spans = []
    if kind == "linear":
        for c in crits:
            lo, hi = sorted((ideal.get(c), anti.get(c)), key=lambda t: (t is None, t or 0))
            if lo is not None and hi is not None and lo > 0 and hi / lo >= 100:
                spans.append(f"{c} spans {math.log10(hi / lo):.1f} orders of magnitude")
    crit_txt = ", ".join(f"{c['column']} ({c['sense']}, weight {value(c['weight'])})"
                         for c in criteria)
    intro = (f"<p>The {len(top)} best configurations by {esc(method.meaning)} over the "
             f"criteria {esc(crit_txt)}; ties broken by Pareto front, then row "
             "order. Rows marked on the left edge are on the Pareto front. Under each "
             "criterion's value, the bar shows where the row sits between the worst value in "
             "the table (the anti-ideal, 0%) and the best (the ideal, 100%), on the scale "
             f"{by} used: <b>{esc(scale_text)}</b>.")
    if spans:
        intro += (" On this linear scale a criterion that spans orders of magnitude puts most "
                  f"rows close to its ideal ({esc('; '.join(spans))}), so the bars of good "
                  "rows are nearly full; a logarithmic normalization would spread them.")
    if fallback:
        intro += (f" {esc(', '.join(fallback))} has values of zero or below, which have no "
                  "logarithm: its positions are linear.")
    intro += (" Click a column heading to sort the rows, or type in the box to filter "
              "them.</p>")
    return (intro
            + html_table(top, cols, headers=[head(c) for c in cols], cell=cell,
                     table_class="sortable ranking", table_id="ranking-table",
                     row_class=lambda r: "front" if r.get("pareto_rank") == 0 else "")
            + "<h3>Ideal and anti-ideal</h3>"
            + html_table([{"criterion": c["column"], "sense": c["sense"], "weight": c["weight"],
                       "ideal": ideal.get(c["column"]), "anti-ideal": anti.get(c["column"])}
                      for c in criteria],
                     ["criterion", "sense", "weight", "ideal", "anti-ideal"]))


def robust_section(summary) -> str:
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
            "rank": r.get("rank"), "configuration": configuration_text(r),
            f"P(top {k})": f"{fixed(r['p_topk'], 3)} ± {fixed(r['p_topk_se'], 3)}",
            "P(first)": f"{fixed(r['p_top1'], 3)} ± {fixed(r['p_top1_se'], 3)}",
            "mean rank": fixed(r["expected_rank"], 2) + ("" if se is None else
                                                         f" ± {fixed(se, 2)}"),
            "central weights": "-" if cw is None else
            ", ".join(f"{c} {fixed(v, 2)}" for c, v in cw.items()),
        })
    mu = rb.get("model_uncertainty")
    drawn = isinstance(mu, dict) and bool(mu.get("drawn"))
    if drawn:
        for rec, r in zip(recs, rb["top"]):
            vf = r.get("value_factor")
            rec["value factor"] = ("-" if not isinstance(vf, (list, tuple)) or len(vf) != 2
                                   else f"{fixed(vf[0], 2)}-{fixed(vf[1], 2)}")
    cols = list(recs[0])
    pruned = (f"{value(rb['pruned'])} rows that {k} or more rows dominate in every draw "
              f"cannot reach the top {k}" if drawn else
              f"{value(rb['pruned'])} rows dominated by {k} or more rows cannot reach the top "
              f"{k} under any weights")
    return (f"<h3>Robust ranking (SMAA)</h3><p>Configurations in the top {k} under the largest "
            f"share of {value(rb['samples'])} weight vectors drawn "
            f"{esc(rb.get('weights', ''))}; ± one standard error. {pruned} and were not "
            f"scored; the mean rank is among the {value(rb['candidates'])} others. "
            "Central weights: the mean weights under which the configuration ranks first.</p>"
            + (f"<p>{esc(mu['text'][:1].upper() + mu['text'][1:])}: the share of draws a "
               "configuration wins says how sure the winner is given the model's error; "
               "value factor: the interval of its predicted time over its point "
               "estimate.</p>" if drawn and mu.get("text") else "")
            + html_table(recs, cols, headers=[esc(c) for c in cols]))


def preparation_section(prep) -> str:
    """Rows read and analyzed, the derived metrics computed and skipped (with why), and the
    rows each constraint left out."""
    if not isinstance(prep, dict):
        return ""
    rows = [("rows read", integer(prep.get("rows_in"))),
            ("rows analyzed", integer(prep.get("rows_analyzed"))),
            ("derived metrics", ", ".join(map(str, prep.get("derived") or [])) or "none")]
    for metric, why in (prep.get("skipped") or {}).items():
        rows.append((f"{metric} not derived", why))
    for c in prep.get("constraints") or []:
        if isinstance(c, dict):
            rows.append((f"constraint {c.get('constraint')}",
                         f"left out {integer(c.get('rows_left_out'))} rows"))
    for reason, n in (prep.get("invalid_rows_dropped") or {}).items():
        rows.append(("dropped", f"{integer(n)} rows where {reason}"))
    if prep.get("replaced_columns"):
        rows.append(("replaced input columns", ", ".join(map(str, prep["replaced_columns"]))))
    return "<h3>Rows and derived metrics</h3>" + kv_table(rows)


def settings_section(summary) -> str:
    """The backend and its fallbacks, the analysis settings, the preparation of the rows, the
    timings and the notes."""
    out = [f"<p>Backend: <b>{esc(summary.get('backend', '?'))}</b>.</p>"]
    for fb in summary.get("fallbacks") or []:
        out.append(f'<p class="fallback">Fallback: {esc(fb)}</p>')
    settings = summary.get("settings") or {}
    if settings:
        out.append("<h3>Analysis settings</h3>")
        out.append(kv_table((k.replace("_", " "), v) for k, v in settings.items()))
    out.append(preparation_section(summary.get("preparation")))
    timings = summary.get("timings_s") or {}
    if timings:
        out.append("<h3>Timings</h3>")
        steps = {k: v for k, v in timings.items() if k != "total"}
        # a run that timed itself (the Dask driver) says its total; the sum of the steps
        # would leave out what ran between them
        total = timings.get("total")
        if not isinstance(total, (int, float)):
            total = sum(v for v in steps.values() if isinstance(v, (int, float)))
        out.append(kv_table([(k, fixed(v, 3, unit="s")) for k, v in steps.items()]
                             + [("total", fixed(total, 3, unit="s"))]))
    notes = summary.get("notes") or []
    out.append("<h3>Notes</h3>")
    if notes:
        out.append('<ul class="notes">' + "".join(f"<li>{esc(n)}</li>" for n in notes)
                   + "</ul>")
    else:
        out.append("<p>No notes: nothing was sampled, dropped or skipped.</p>")
    return "".join(out)


def drawn_rows_caption(n_total, sample, table) -> str:
    """The caption saying which of the ``n_total`` rows a figure draws: all of them, or the
    seeded ``sample`` and every Pareto-front row of ``table``."""
    if len(sample) >= n_total:
        return f"All {n_total:,} rows are drawn."
    front = int((table["pareto_rank"].to_numpy() == 0).sum()) if "pareto_rank" in table else 0
    return (f"Sampled: {len(sample):,} of {n_total:,} rows are drawn, a seeded sample "
            f"stratified by cluster plus all {front:,} Pareto-front rows.")
