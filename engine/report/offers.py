"""The plan's view in the report (``gpurank plan``): each ranked offer's cost against its time
to train, with the 80% intervals of both, one colour per provider; spot prices hollow."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .cells import esc, missing_note, numbers, png_figure

__all__ = ["PLAN_VIEW_COLUMNS", "is_plan", "offers_section"]

#: The columns that make a ranked table a plan's.
PLAN_VIEW_COLUMNS = ("provider", "instance", "instances", "spot", "usd_per_hour",
                     "time_to_train_min", "time_to_train_min_lo", "time_to_train_min_hi",
                     "cost_usd", "cost_usd_lo", "cost_usd_hi")
#: Providers drawn in their own colour; the others share grey.
MAX_PROVIDERS = 10
_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#17becf", "#bcbd22", "#7f7f7f")


def is_plan(table: pd.DataFrame) -> bool:
    """Whether ``table`` is a plan's ranking (it has every column of the view)."""
    return all(c in table.columns for c in PLAN_VIEW_COLUMNS)


def _figure(table: pd.DataFrame, providers: list):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.6, 4.2), layout="constrained")
    ax = fig.subplots()
    t_h = numbers(table, "time_to_train_min") / 60
    lo_h, hi_h = numbers(table, "time_to_train_min_lo") / 60, numbers(table, "time_to_train_min_hi") / 60
    cost = numbers(table, "cost_usd")
    c_lo, c_hi = numbers(table, "cost_usd_lo"), numbers(table, "cost_usd_hi")
    spot = table["spot"].to_numpy(bool)
    prov = table["provider"].astype(str).to_numpy(object)
    for i, p in enumerate(providers + ["other"]):
        rows = ~np.isin(prov, providers) if p == "other" else prov == p
        if not rows.any():
            continue
        color = _COLORS[i % len(_COLORS)] if p != "other" else "#aaaaaa"
        ax.errorbar(t_h[rows], cost[rows],
                    xerr=[t_h[rows] - lo_h[rows], hi_h[rows] - t_h[rows]],
                    yerr=[cost[rows] - c_lo[rows], c_hi[rows] - cost[rows]],
                    fmt="none", ecolor=color, alpha=0.25, lw=0.8)
        for kind, face in ((False, color), (True, "none")):
            sel = rows & (spot == kind)
            if sel.any():
                ax.scatter(t_h[sel], cost[sel], s=18, facecolors=face, edgecolors=color,
                           label=f"{p}{' (spot)' if kind else ''}"[:40])
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("predicted time to train (hours, log)")
    ax.set_ylabel("cost (USD, log)")
    ax.legend(loc="upper right", fontsize=7, ncols=2)
    return fig


def offers_section(table: pd.DataFrame) -> str:
    """Cost against time of every ranked offer, with the intervals, by provider."""
    if not is_plan(table):
        return missing_note("Not a plan: the table has no offers (gpurank plan writes them).")
    ranked = table[pd.to_numeric(table.get("rank"), errors="coerce").notna()] \
        if "rank" in table.columns else table
    if ranked.empty:
        return missing_note("No offer was ranked (every one was refused or left out by a "
                            "constraint).")
    order = ranked["provider"].astype(str).value_counts()
    providers = list(order.index[:MAX_PROVIDERS])
    fig = _figure(ranked, providers)
    more = (f" {len(order) - MAX_PROVIDERS} more providers are grey." if len(order) >
            MAX_PROVIDERS else "")
    cap = (f"{len(ranked):,} ranked offers (an instance type at one price, at 1, 2, 4, ... "
           "instances): predicted time to train against its cost, usd_per_hour x instances x "
           "hours, with the 80% intervals of both (bars). Filled: on-demand price; hollow: "
           f"spot. The cheapest fast offers sit at the lower left.{esc(more)}")
    return png_figure("offers", fig, "cost against time to train of each offer, by provider",
                      cap)
