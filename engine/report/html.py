"""The self-contained HTML report: one file, figures inlined as PNG, scripts inlined, no network.

:func:`build_report` turns the ranked table (``ranking.parquet``) and ``summary.json`` into
HTML text; :func:`write_report` writes it atomically; :func:`rebuild_report` rebuilds it from
an output folder. The same inputs always give byte-identical HTML.

Every string from the data is HTML-escaped (or, inside the JSON that feeds the interactive
view, JSON-escaped with ``<``, ``>`` and ``&`` written as ``\\u`` escapes); the page's
Content-Security-Policy lets it load nothing from the network. The interactive trade-off view
is drawn by Chart.js (``assets/chart.umd.min.js``, version :data:`CHARTJS_VERSION`, MIT),
inlined in the page; without JavaScript, and in print, the static figures stand in for it.
"""

from __future__ import annotations

import hashlib
import html
import json
import math
import string
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import DataError, UsageError
from ..formatting import column_label, fixed, integer, number, percent, unit_of, value
from ..io import read_table, write_text
from . import plots

__all__ = ["build_report", "write_report", "rebuild_report", "report_path", "SECTIONS",
           "CHARTJS_VERSION"]

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

#: The vendored Chart.js (engine/report/assets/README.md says where it comes from).
CHARTJS_VERSION = "4.6.1"
CHARTJS_SHA256 = "87364cc2b2a76a6684929e7d6b80b18a897794db38400caff1fcf1791c6925d2"
#: The interactive view draws at most about this many rows (plus the top rows and up to
#: as many Pareto-front rows), so the page stays light.
EXPLORER_POINTS = 4_000

#: Columns summarized in "the data at a glance", when present.
_GLANCE = ("n_accelerators", "n_nodes", "cpu_cores_per_accelerator", "time_to_train_min",
           "throughput_per_accelerator", "scaling_efficiency", "utilization", "cost_usd",
           "accelerator_hours", "energy_kwh")
_TEXT_COLUMNS = {"configuration", "accelerator", "label", "accelerators", "host_cpu",
                 "interconnect", "network",
                 "provider", "feature", "system", "submitter", "round", "framework",
                 "n_accelerators_range", "prediction_basis"}
_PROFILE_COLUMNS = ("cluster", "label", "size", "share", "accelerators",
                    "median_n_accelerators", "median_cpu_cores_per_accelerator",
                    "median_time_to_train_min", "median_throughput_per_accelerator",
                    "median_scaling_efficiency", "median_cost_usd")
#: Columns that describe a configuration's setup; the ranking shows them as one sentence.
_SETUP_COLUMNS = {"accelerator", "n_accelerators", "n_nodes", "host_cpu",
                  "cpu_cores_per_accelerator", "interconnect", "network", "provider", "round",
                  "submitter", "system"}
#: Scores and ranks, shown last in the ranking.
_SCORE_COLUMNS = ("topsis_score", "pareto_rank", "domination_count", "cluster")


# -- small HTML helpers ---------------------------------------------------------------------
def _e(v) -> str:
    return html.escape(str(v), quote=True)


_fmt = value
_header = column_label


def _sort_key(v) -> str:
    """A ``data-sort`` value: the number itself, so the table sorts numerically."""
    if isinstance(v, (bool, np.bool_)):
        return str(int(v))
    try:
        f = float(v)
    except (TypeError, ValueError):
        return ""
    return repr(f) if math.isfinite(f) else ""


def _table(records, columns, *, headers=None, row_class=None, cell=None, table_class=None,
           table_id=None) -> str:
    """An escaped HTML table of ``records`` (dicts); ``cell(col, value, record)`` may return
    raw HTML for a cell (already escaped by the caller). Numeric cells carry their value in
    ``data-sort``."""
    heads = headers or [_e(_header(c)) for c in columns]
    attrs = (f' class="{table_class}"' if table_class else "") + (
        f' id="{table_id}"' if table_id else "")
    out = [f'<div class="table-wrap"><table{attrs}>', "<thead><tr>"]
    out += [f"<th>{h}</th>" for h in heads]
    out.append("</tr></thead><tbody>")
    for r in records:
        cls = row_class(r) if row_class else ""
        out.append(f'<tr class="{cls}">' if cls else "<tr>")
        for c in columns:
            v = r.get(c)
            raw = cell(c, v, r) if cell else None
            text = c in _TEXT_COLUMNS or isinstance(v, str)
            kind = "txt" if text else "num"
            kind = {"configuration": "txt config"}.get(c, kind)
            key = "" if text else f' data-sort="{_sort_key(v)}"'
            out.append(f'<td class="{kind}"{key}>'
                       f'{raw if raw is not None else _e(_fmt(v))}</td>')
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


def _json_for_script(obj) -> str:
    """JSON safe inside a ``<script type="application/json">`` element: no ``</script>``,
    no ``<!--``, no raw non-ASCII (U+2028 and U+2029 included)."""
    text = json.dumps(obj, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _asset(name) -> str:
    return resources.files(__package__).joinpath("assets", name).read_text(encoding="utf-8")


def _chartjs() -> str:
    """The vendored Chart.js, checked against its recorded checksum, without its source-map
    comment (the map is not shipped; a browser's developer tools would try to fetch it)."""
    raw = resources.files(__package__).joinpath("assets", "chart.umd.min.js").read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    if digest != CHARTJS_SHA256:
        raise RuntimeError(f"engine/report/assets/chart.umd.min.js has sha256 {digest}, not "
                           f"the recorded {CHARTJS_SHA256} of Chart.js {CHARTJS_VERSION}")
    lines = raw.decode("utf-8").splitlines()
    return "\n".join(x for x in lines if not x.startswith("//# sourceMappingURL="))


# -- sections -------------------------------------------------------------------------------
def _overview(table, summary) -> str:
    n = summary.get("rows", len(table))
    parts = [f"<p>{_e(_fmt(n))} configurations; Pareto front (rank 0 over all criteria): "
             f"{_e(_fmt(summary.get('pareto_front_size')))} configurations.</p>"]
    if "accelerator" in table.columns and len(table):
        counts = table["accelerator"].astype("string").fillna("(missing)").value_counts()
        recs = [{"accelerator": k, "rows": int(v), "share": percent(v / len(table), 1)}
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
           f"{_e(number(r2))}. Left: impurity importance (fast, biased to many-valued columns). "
           "Right: permutation importance on held-out rows (drop in R² when the column is "
           "shuffled, with its standard deviation). Features sorted by permutation importance"
           f"{shown}.")
    out = [_figure("importance", fig, "bar charts of feature importance", cap)]
    if r2 is not None and r2 < 0.5:
        out.append(f'<p class="note">The forest explains little of the target (R² = '
                   f"{_e(number(r2))}); read these importances with caution.</p>")
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
        scores = ", ".join(f"k = {_e(kk)}: {_e(number(v))}" for kk, v in sil.items())
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
                return _e(percent(v, 1))
            return None

        out.append(f"<p>{_e(k)} groups from KMeans on "
                   f"{_e(', '.join(feats))}. A label gives the group's accelerator-count "
                   "range (middle half of its rows), what it runs on and its median scaling "
                   "efficiency; it names an accelerator model only when that model is more "
                   "than half of the group's rows, else the family or generation that is, "
                   "else says \u201cmixed accelerators\u201d. The accelerators column lists "
                   "the largest models with their shares.</p>")
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


def _tradeoffs(table, summary, sample, sample_caption, seed) -> str:
    return (_tradeoff_figure(table, summary, sample, sample_caption)
            + _explorer(table, summary, seed))


def _tradeoff_figure(table, summary, sample, sample_caption) -> str:
    if "time_to_train_min" not in table.columns:
        return _missing("The trade-off figure is not shown: the table has no "
                        "time_to_train_min column.")
    xcol = None
    for c in ("cost_usd", "accelerator_hours"):
        if c in table.columns and np.isfinite(_num(table, c)).any():
            xcol = c
            break
    if xcol is None:
        return _missing("The trade-off figure is not shown: the table has neither cost_usd "
                        "nor accelerator_hours values.")
    part = table.iloc[sample]
    x, y = _num(part, xcol), _num(part, "time_to_train_min")
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    if not ok.any():
        return _missing("The trade-off figure is not shown: no row has positive values of "
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
        intervals = (_num(part, "time_to_train_min_lo")[ok],
                     _num(part, "time_to_train_min_hi")[ok], shown[ok])
    fig = plots.tradeoff_figure(x[ok], y[ok], clusters[ok], front[ok], xlabel=_header(xcol),
                                ylabel=_header("time_to_train_min"), top_ranks=top,
                                intervals=intervals)
    dropped = int((~ok).sum())
    why_x = "" if xcol == "cost_usd" else " (no cost column, so accelerator-hours stand in)"
    cap = (f"Time to train against {_e(_header(xcol))}{why_x}, log axes; diamonds: the "
           f"Pareto front over all {len(summary.get('criteria') or [])} criteria (not only "
           "these two, so some front rows look dominated here); #1-#3 mark the top-ranked "
           "rows. "
           + ("Grey segments: the 80% prediction interval of a predicted time (and of the "
              f"{_e(_header(xcol))} it drives, so along the diagonal), for "
              + ("every row" if len(part) <= 300 else "the front and the top-ranked rows")
              + ". " if intervals is not None else "")
           + f"{sample_caption}"
           f"{f' {dropped:,} rows without positive values are left out.' if dropped else ''}")
    return _figure("tradeoff", fig, "time to train against cost, Pareto front highlighted",
                   cap)


def _configuration(r) -> str:
    """One line describing a configuration's setup, e.g. '8 x H100 on 1 node; EPYC, 8 cores
    per accelerator; NVLink; InfiniBand'; a table's own ``configuration`` text when it has
    one."""
    own = r.get("configuration")
    if own is not None and str(own) != "" and not _is_missing(own):
        return str(own)
    parts = []
    acc = r.get("accelerator")
    n = r.get("n_accelerators")
    acc = None if _is_missing(acc) else acc
    n = None if _is_missing(n) else n
    first = f"{_fmt(n)} x {acc}" if n is not None and acc is not None else _fmt(acc or n)
    nodes = r.get("n_nodes")
    if nodes is not None and not _is_missing(nodes):
        first += f" on {_fmt(nodes)} node{'s' if nodes != 1 else ''}"
    parts.append(first)
    cpu = r.get("host_cpu")
    cores = r.get("cpu_cores_per_accelerator")
    cpu = None if _is_missing(cpu) else cpu
    cores = None if _is_missing(cores) else cores
    if cpu is not None or cores is not None:
        parts.append(", ".join(x for x in (
            str(cpu) if cpu is not None else None,
            f"{_fmt(cores)} cores/accel" if cores is not None else None) if x))
    for c in ("interconnect", "network", "provider"):
        v = r.get(c)
        if v is not None and not _is_missing(v) and str(v) not in ("", "none"):
            parts.append(str(v))
    who = " ".join(str(r[c]) for c in ("round", "submitter", "system")
                   if r.get(c) is not None and not _is_missing(r[c]))
    if who:
        parts.insert(0, who + ":")
    return "; ".join(parts).replace(":;", ":")


def _is_missing(v) -> bool:
    if v is None or v is pd.NA or v is pd.NaT:
        return True
    return isinstance(v, float) and math.isnan(v)


# -- where a row sits between the anti-ideal and the ideal -----------------------------------
_KNOWN_NORMS = {
    "vector": "each criterion divided by its Euclidean norm",
    "minmax": "each criterion rescaled to [0, 1] between its extremes",
}


def ranking_scale(norm) -> tuple[str, str]:
    """The scale on which TOPSIS compared the criteria under normalization ``norm``.

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
        return "log", (f"logarithmic ('{name}' normalization: TOPSIS compared the logarithms "
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
           f'<span class="pos" title="{_e(percent(share, 1))} of the way from the anti-ideal '
           f'to the ideal"><span class="bar"><span style="width:{100 * share:.1f}%">'
           f'</span></span><span class="pct">{_e(percent(share, 1))}</span></span>')
    return f'<span class="v">{_e(_fmt(v))}</span>{pos}'


def _ranking(summary) -> str:
    top = summary.get("top") or []
    if not top:
        return _missing("No ranked configurations were recorded in the summary.")
    criteria = summary.get("criteria") or []
    crit_cols = [c["column"] for c in criteria]
    sense = {c["column"]: c.get("sense") for c in criteria}
    ideal, anti = summary.get("ideal") or {}, summary.get("anti_ideal") or {}
    norm = (summary.get("settings") or {}).get("norm")
    kind, scale_text = ranking_scale(norm)
    keys = list(top[0].keys())
    setup = [c for c in keys if c in _SETUP_COLUMNS or c == "configuration"]
    basis = ["prediction_basis"] if "prediction_basis" in keys else []
    crits = [c for c in crit_cols if c in keys]
    tail = [c for c in _SCORE_COLUMNS if c in keys]
    others = [c for c in keys if c not in setup and c not in crits and c not in tail
              and c not in basis and c != "rank"]
    cols = ["rank"] + (["configuration"] if setup else []) + basis + crits + others + tail
    top = [dict(r, configuration=_configuration(r)) if setup else r for r in top]

    def head(c):
        text = _e(_header(c))
        if c in crits:
            best = "lower" if sense.get(c) == "min" else "higher"
            return f'{text}<span class="sense">{best} is better</span>'
        return text

    def cell(c, v, r):
        if c in crits:
            return _criterion_cell(v, ideal.get(c), anti.get(c), kind)
        if c == "topsis_score" and v is not None:
            return _e(fixed(v, 4))
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
    crit_txt = ", ".join(f"{c['column']} ({c['sense']}, weight {_fmt(c['weight'])})"
                         for c in criteria)
    intro = (f"<p>The {len(top)} best configurations by TOPSIS closeness (1 = at the ideal "
             f"point) over the criteria {_e(crit_txt)}; ties broken by Pareto front, then row "
             "order. Rows marked on the left edge are on the Pareto front. Under each "
             "criterion's value, the bar shows where the row sits between the worst value in "
             "the table (the anti-ideal, 0%) and the best (the ideal, 100%), on the scale "
             f"TOPSIS used: <b>{_e(scale_text)}</b>.")
    if spans:
        intro += (" On this linear scale a criterion that spans orders of magnitude puts most "
                  f"rows close to its ideal ({_e('; '.join(spans))}), so the bars of good "
                  "rows are nearly full; a logarithmic normalization would spread them.")
    if fallback:
        intro += (f" {_e(', '.join(fallback))} has values of zero or below, which have no "
                  "logarithm: its positions are linear.")
    intro += (" Click a column heading to sort the rows, or type in the box to filter "
              "them.</p>")
    return (intro
            + _table(top, cols, headers=[head(c) for c in cols], cell=cell,
                     table_class="sortable ranking", table_id="ranking-table",
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
    pruned = (f"{_fmt(rb['pruned'])} rows that {k} or more rows dominate in every draw "
              f"cannot reach the top {k}" if drawn else
              f"{_fmt(rb['pruned'])} rows dominated by {k} or more rows cannot reach the top "
              f"{k} under any weights")
    return (f"<h3>Robust ranking (SMAA)</h3><p>Configurations in the top {k} under the largest "
            f"share of {_fmt(rb['samples'])} weight vectors drawn "
            f"{_e(rb.get('weights', ''))}; ± one standard error. {pruned} and were not "
            f"scored; the mean rank is among the {_fmt(rb['candidates'])} others. "
            "Central weights: the mean weights under which the configuration ranks first.</p>"
            + (f"<p>{_e(mu['text'][:1].upper() + mu['text'][1:])}: the share of draws a "
               "configuration wins says how sure the winner is given the model's error; "
               "value factor: the interval of its predicted time over its point "
               "estimate.</p>" if drawn and mu.get("text") else "")
            + _table(recs, cols, headers=[_e(c) for c in cols]))


def _preparation(prep) -> str:
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
    return "<h3>Rows and derived metrics</h3>" + _kv_table(rows)


def _settings(summary) -> str:
    out = [f"<p>Backend: <b>{_e(summary.get('backend', '?'))}</b>.</p>"]
    for fb in summary.get("fallbacks") or []:
        out.append(f'<p class="fallback">Fallback: {_e(fb)}</p>')
    settings = summary.get("settings") or {}
    if settings:
        out.append("<h3>Analysis settings</h3>")
        out.append(_kv_table((k.replace("_", " "), v) for k, v in settings.items()))
    out.append(_preparation(summary.get("preparation")))
    timings = summary.get("timings_s") or {}
    if timings:
        out.append("<h3>Timings</h3>")
        total = sum(v for v in timings.values() if isinstance(v, (int, float)))
        out.append(_kv_table([(k, fixed(v, 3, unit="s")) for k, v in timings.items()]
                             + [("total", fixed(total, 3, unit="s"))]))
    notes = summary.get("notes") or []
    out.append("<h3>Notes</h3>")
    if notes:
        out.append('<ul class="notes">' + "".join(f"<li>{_e(n)}</li>" for n in notes)
                   + "</ul>")
    else:
        out.append("<p>No notes: nothing was sampled, dropped or skipped.</p>")
    return "".join(out)


# -- the interactive trade-off view ----------------------------------------------------------
def _explorer_rows(table, k, max_points, seed) -> np.ndarray:
    """Rows the interactive view draws: every top-``k`` row, the Pareto-front rows (a seeded
    sample of ``max_points`` when there are more) and a seeded sample, stratified by cluster,
    of about ``max_points`` others. Sorted positions."""
    n = len(table)
    rank = table["rank"].to_numpy() if "rank" in table else np.full(n, n + 1)
    front = (table["pareto_rank"].to_numpy() == 0 if "pareto_rank" in table
             else np.zeros(n, bool))
    rng = np.random.default_rng(seed)
    top = np.flatnonzero(rank <= k)
    fr = np.flatnonzero(front & (rank > k))
    if fr.size > max_points:
        fr = rng.choice(fr, max_points, replace=False)
    rest = np.flatnonzero(~front & (rank > k))
    if rest.size > max_points:
        sub = plots.sample_for_plots(table.iloc[rest].drop(columns=["pareto_rank"],
                                                          errors="ignore"),
                                     max_points, seed)
        rest = rest[sub]
    return np.unique(np.concatenate([top, fr, rest]).astype(np.int64))


def _rounded(v) -> list:
    """Values with 4 significant digits (what a tooltip shows), None where not finite."""
    return [float(f"{x:.4g}") if math.isfinite(x) else None for x in v.tolist()]


def _explorer(table, summary, seed) -> str:
    criteria = [c for c in summary.get("criteria") or [] if c.get("column") in table.columns]
    if len(criteria) < 2:
        return _missing("The interactive trade-off view needs two criteria that are columns "
                        f"of the table; this analysis has {len(criteria)}.")
    k = len(summary.get("top") or []) or 10
    rows = _explorer_rows(table, k, EXPLORER_POINTS, seed)
    part = table.iloc[rows]
    n = len(part)
    crit, values = [], {}
    for c in criteria:
        col = c["column"]
        v = _num(part, col)
        fin = v[np.isfinite(v)]
        log = bool(fin.size and fin.min() > 0 and fin.max() / fin.min() >= 100)
        crit.append({"column": col, "label": column_label(col).split(" (")[0],
                     "unit": unit_of(col), "sense": c.get("sense", "min"), "log": log})
        values[col] = _rounded(v)
    rank = (part["rank"].to_numpy().astype(np.int64) if "rank" in part
            else np.arange(1, n + 1)).tolist()
    pareto = (part["pareto_rank"].to_numpy().astype(np.int64).tolist() if "pareto_rank" in part
              else [0] * n)
    score = (_rounded_score(part["topsis_score"].to_numpy(dtype=float))
             if "topsis_score" in part else [None] * n)
    records = part.to_dict(orient="records")
    data = {"criteria": crit, "values": values, "rank": rank, "pareto": pareto,
            "front": [int(p == 0) for p in pareto], "score": score,
            "config": [_configuration(r) for r in records], "top": k,
            "rows": int(len(table)), "shown": n}
    cols = [c["column"] for c in crit]
    x = "cost_usd" if "cost_usd" in cols else cols[0]
    y = "time_to_train_min" if "time_to_train_min" in cols and x != "time_to_train_min" else (
        cols[1] if cols[1] != x else cols[0])

    def select(axis, chosen):
        opts = "".join(f'<option value="{_e(c["column"])}"'
                       f'{" selected" if c["column"] == chosen else ""}>'
                       f'{_e(column_label(c["column"]))}</option>' for c in crit)
        return (f'<label>{axis} <select data-axis="{axis}" aria-label="{axis} axis">{opts}'
                f'</select></label><label class="log"><input type="checkbox" data-log="{axis}">'
                " log</label>")

    drawn = (f"all {n:,} rows" if n >= len(table) else
             f"{n:,} of {len(table):,} rows: the top {k}, the Pareto front"
             f"{' (a seeded sample)' if _front_sampled(table, k) else ''} and a seeded sample "
             "stratified by cluster")
    return (
        f'<div class="explorer" data-explorer data-source="explorer-data" hidden>'
        "<h3>Explore the trade-offs</h3>"
        f'<div class="explorer-controls">{select("x", x)}{select("y", y)}</div>'
        '<div class="explorer-canvas"><canvas role="img" aria-label="scatter plot of two '
        'criteria; hover a point to see its configuration"></canvas></div>'
        '<div class="explorer-detail" data-detail aria-live="polite">Hover a point to see '
        "its configuration.</div>"
        f'<p class="caption">Choose any two criteria as axes. Black diamonds: the top {k} '
        "by TOPSIS (#1-#10 labelled); orange: the Pareto front over all criteria; dashed: "
        f"the Pareto front of the two axes shown. Drawn: {_e(drawn)}.</p></div>"
        '<noscript><p class="missing">The interactive view needs JavaScript; the figure '
        "above shows the same trade-off.</p></noscript>"
        f'<script type="application/json" id="explorer-data">{_json_for_script(data)}'
        "</script>")


def _rounded_score(v) -> list:
    return [round(x, 6) if math.isfinite(x) else None for x in v.tolist()]


def _front_sampled(table, k) -> bool:
    if "pareto_rank" not in table:
        return False
    rank = table["rank"].to_numpy() if "rank" in table else np.full(len(table), len(table) + 1)
    return int(((table["pareto_rank"].to_numpy() == 0) & (rank > k)).sum()) > EXPLORER_POINTS


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


#: What the page may load: nothing from the network; its own inline styles and scripts, and
#: images from data: URIs.
_CSP = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
        "script-src 'unsafe-inline'; base-uri 'none'; form-action 'none'")


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
        A complete HTML document with every figure and script inlined; byte-identical for
        equal inputs.
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
        "tradeoffs": lambda: _tradeoffs(table, summary, sample, caption, seed),
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
    licence = _asset("chart.js-LICENSE.md").strip().replace("*/", "* /")
    scripts = (f"<script>/* Chart.js {CHARTJS_VERSION}, MIT licence */\n/*\n{licence}\n*/\n"
               f"{_chartjs()}\n</script>\n<script>{_asset('report.js')}</script>")
    return template.substitute(
        title="gpurank report",
        generator=_e(f"gpurank {version}"),
        run_id=_e(str(summary.get("run_id", ""))),
        csp=_CSP,
        subtitle=_e(subtitle),
        nav=nav,
        body="\n".join(sections),
        footer=_e(f"Generated by gpurank {version}. Self-contained: figures are inlined PNG "
                  "images and the interactive view's scripts (Chart.js "
                  f"{CHARTJS_VERSION}, MIT licence) are inlined; the page loads nothing from "
                  "the network."),
        scripts=scripts,
    )


def write_report(table: pd.DataFrame, summary: dict, path, *, overwrite=False,
                 **options) -> Path:
    """Build the report and write it to ``path`` atomically; returns the path.

    ``options`` (``max_points``, ``seed``) go to :func:`build_report`. An existing file is
    replaced only when it is a gpurank report or ``overwrite``.
    """
    return write_text(build_report(table, summary, **options), path, overwrite=overwrite,
                      name="--out")


def report_path(ranking_parquet_path, output=None) -> Path:
    """Where :func:`rebuild_report` writes: ``output``, ``report.html`` inside it when it is
    a folder, or ``report.html`` beside the ranking by default."""
    if output is None:
        return Path(ranking_parquet_path).parent / "report.html"
    out = Path(output)
    return out / "report.html" if out.is_dir() else out


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
    from ..summary_schema import check_summary

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
    check_summary(summary, path=summary_path)
    out = report_path(src, output)
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
    home = read_manifest(out.parent)
    if home is not None and home.get("run_id") != summary.get("run_id"):
        raise UsageError(f"--out '{out}' is inside the output of another analysis (run "
                         f"{home.get('run_id')}); write the report beside its own ranking, or "
                         "outside an output folder")
    table = read_table(src)
    if "rows" in summary and int(summary["rows"]) != len(table):
        raise DataError(f"summary file '{summary_path}' describes {summary['rows']} rows but "
                        f"'{src}' holds {len(table)}; they do not belong to the same analysis")
    options.setdefault("seed", int((summary.get("settings") or {}).get("seed", 0)))
    return write_report(table, summary, out, overwrite=overwrite, **options)


def _one_line(exc) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 300 else text[:297] + "..."
