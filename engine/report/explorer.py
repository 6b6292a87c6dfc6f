"""The report's interactive trade-off view: which rows it draws and the data its script
reads (Chart.js draws it in the page; without JavaScript the static figure stands in)."""

from __future__ import annotations

import math

import numpy as np

from ..formatting import column_label, unit_of
from ..methods import summary_method
from . import plots
from .cells import configuration_text, esc, json_for_script, missing_note, numbers

__all__ = ["explorer_view", "explorer_rows", "EXPLORER_POINTS"]

#: The interactive view draws at most about this many rows (plus the top rows and up to
#: as many Pareto-front rows), so the page stays light.
EXPLORER_POINTS = 4_000


def explorer_rows(table, k, max_points, seed) -> np.ndarray:
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


def explorer_view(table, summary, seed) -> str:
    """The interactive trade-off view: the drawn rows (the top rows, the Pareto front and a
    sample seeded by ``seed``) with their criteria as JSON, two axis selectors, or a note when
    the analysis has fewer than two criteria that are columns of ``table``."""
    criteria = [c for c in summary.get("criteria") or [] if c.get("column") in table.columns]
    if len(criteria) < 2:
        return missing_note("The interactive trade-off view needs two criteria that are columns "
                        f"of the table; this analysis has {len(criteria)}.")
    k = len(summary.get("top") or []) or 10
    rows = explorer_rows(table, k, EXPLORER_POINTS, seed)
    part = table.iloc[rows]
    n = len(part)
    crit, values = [], {}
    for c in criteria:
        col = c["column"]
        v = numbers(part, col)
        fin = v[np.isfinite(v)]
        log = bool(fin.size and fin.min() > 0 and fin.max() / fin.min() >= 100)
        crit.append({"column": col, "label": column_label(col).split(" (")[0],
                     "unit": unit_of(col), "sense": c.get("sense", "min"), "log": log})
        values[col] = _rounded(v)
    rank = (part["rank"].to_numpy().astype(np.int64) if "rank" in part
            else np.arange(1, n + 1)).tolist()
    pareto = (part["pareto_rank"].to_numpy().astype(np.int64).tolist() if "pareto_rank" in part
              else [0] * n)
    method = summary_method(summary)
    score = (_rounded_score(part[method.column].to_numpy(dtype=float))
             if method.column in part else [None] * n)
    records = part.to_dict(orient="records")
    data = {"criteria": crit, "values": values, "rank": rank, "pareto": pareto,
            "front": [int(p == 0) for p in pareto], "score": score,
            "score_label": method.label, "by": method.name.upper(),
            "config": [configuration_text(r) for r in records], "top": k,
            "rows": int(len(table)), "shown": n}
    cols = [c["column"] for c in crit]
    x = "cost_usd" if "cost_usd" in cols else cols[0]
    y = "time_to_train_min" if "time_to_train_min" in cols and x != "time_to_train_min" else (
        cols[1] if cols[1] != x else cols[0])

    def select(axis, chosen):
        opts = "".join(f'<option value="{esc(c["column"])}"'
                       f'{" selected" if c["column"] == chosen else ""}>'
                       f'{esc(column_label(c["column"]))}</option>' for c in crit)
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
        f"by {method.name.upper()} (#1-#10 labelled); orange: the Pareto front over all "
        f"criteria; dashed: the Pareto front of the two axes shown. Drawn: {esc(drawn)}.</p></div>"
        '<noscript><p class="missing">The interactive view needs JavaScript; the figure '
        "above shows the same trade-off.</p></noscript>"
        f'<script type="application/json" id="explorer-data">{json_for_script(data)}'
        "</script>")


def _rounded_score(v) -> list:
    return [round(x, 6) if math.isfinite(x) else None for x in v.tolist()]


def _front_sampled(table, k) -> bool:
    if "pareto_rank" not in table:
        return False
    rank = table["rank"].to_numpy() if "rank" in table else np.full(len(table), len(table) + 1)
    return int(((table["pareto_rank"].to_numpy() == 0) & (rank > k)).sum()) > EXPLORER_POINTS
