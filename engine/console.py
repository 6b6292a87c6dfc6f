"""Readable terminal output of an analysis: the top configurations, the groups, the drivers."""

from __future__ import annotations

import math

from rich.console import Console
from rich.markup import escape
from rich.table import Table

__all__ = ["print_summary", "make_console"]

_UNITS = {
    "time_to_train_min": "min",
    "throughput_per_accelerator": "samples/s",
    "cost_usd": "USD",
    "energy_kwh": "kWh",
}
_SHORT = {
    "n_accelerators": "accels",
    "time_to_train_min": "time",
    "throughput_per_accelerator": "per-accel tput",
    "scaling_efficiency": "efficiency",
    "cpu_cores_per_accelerator": "cores/accel",
    "domination_count": "dominated by",
    "topsis_score": "TOPSIS",
    "pareto_rank": "front",
    "accelerator": "accelerator",
    "cost_usd": "cost",
    "energy_kwh": "energy",
    "utilization": "util",
}


_MIN_WIDTH = {"label": 30, "accelerator": 18, "accelerators": 18, "feature": 18,
              "provider": 12}


def make_console(*, quiet=False, stderr=False) -> Console:
    """A rich console; silent when ``quiet``."""
    console = Console(quiet=quiet, stderr=stderr, highlight=False, soft_wrap=False)
    if not console.is_terminal:
        # Piped output has no width to fit; keep tables on one line per row.
        console = Console(quiet=quiet, stderr=stderr, highlight=False, soft_wrap=False,
                          width=160)
    return console


def _fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        if not math.isfinite(v):
            return "-"
        if v == int(v) and abs(v) < 1e6:
            return f"{int(v)}"
        if abs(v) >= 1000:
            return f"{v:,.0f}"
        return f"{v:.3g}" if abs(v) < 10 else f"{v:.1f}"
    return str(v)


def _header(col) -> str:
    col = col.removeprefix("median_")
    name = _SHORT.get(col, col.replace("_", " "))
    unit = _UNITS.get(col)
    return f"{name} ({unit})" if unit else name


def _records_table(title, records, columns) -> Table:
    # data and notes are text, not markup: "[gpu]" or a system named "[x]" prints as is
    t = Table(title=escape(title), title_justify="left", show_lines=False, pad_edge=False)
    for c in columns:
        justify = "left" if c in ("accelerator", "label", "accelerators", "host_cpu",
                                  "interconnect", "network", "provider", "feature",
                                  "system", "submitter", "round") else "right"
        t.add_column(escape(_header(c)), justify=justify, overflow="fold",
                     min_width=_MIN_WIDTH.get(c))
    for r in records:
        t.add_row(*[escape(_fmt(r.get(c))) for c in columns])
    return t


def print_summary(summary: dict, console: Console) -> None:
    """Print the top-K table, the cluster profiles and the importance table."""
    crit = ", ".join(f"{c['column']} ({c['sense']}, w={c['weight']:.2f})"
                     for c in summary["criteria"])
    console.print(f"[bold]gpurank[/bold]: {summary['rows']:,} configurations on "
                  f"{escape(str(summary['backend']))}; criteria: {escape(crit)}")
    console.print(f"Pareto front: {summary['pareto_front_size']:,} configurations")
    top = summary.get("top") or []
    if top:
        hidden = {"n_nodes", "network", "interconnect", "host_cpu", "energy_kwh",
                  "throughput", "system"}
        cols = [c for c in top[0] if c not in hidden]
        console.print(_records_table(f"Top {len(top)} configurations", top, cols))
    rb = summary.get("robust")
    if rb and rb.get("top"):
        _print_robust(rb, console)
    cl = summary.get("clusters")
    if cl:
        prof = cl["profiles"]
        cols = [c for c in ("cluster", "label", "size", "median_n_accelerators",
                            "median_cpu_cores_per_accelerator", "median_time_to_train_min",
                            "median_throughput_per_accelerator", "median_scaling_efficiency",
                            "median_cost_usd") if prof and c in prof[0]]
        console.print(_records_table(
            f"{cl['k']} groups, medians per group (KMeans on {', '.join(cl['features'])})",
            prof, cols))
    imp = summary.get("importance")
    if imp:
        title = (f"What drives {imp['target']} (random forest, held-out R^2 = "
                 f"{imp['holdout_r2']:.2f}, {imp['rows_used']:,} rows"
                 f"{', sampled' if imp['sampled'] else ''})")
        console.print(_records_table(title, imp["features"],
                                     ["feature", "permutation", "permutation_std", "impurity"]))
    for note in summary.get("notes", []):
        console.print(f"note: {note}", markup=False)
    for fb in summary.get("fallbacks", []):
        console.print(f"backend: {fb}", markup=False)
    t = summary.get("timings_s", {})
    if t:
        console.print("time: " + ", ".join(f"{k} {v:.2f} s" for k, v in t.items()))


def _print_robust(rb: dict, console: Console) -> None:
    """The configurations in the top k under the largest share of weight samples."""
    k = rb["k"]
    rows = []
    for r in rb["top"]:
        cw = r.get("central_weights")
        rows.append({
            "rank": r.get("rank"),
            "accelerator": r.get("accelerator"),
            "n_accelerators": r.get("n_accelerators"),
            "provider": r.get("provider"),
            f"P(top {k})": f"{r['p_topk']:.3f} ± {r['p_topk_se']:.3f}",
            "P(first)": f"{r['p_top1']:.3f} ± {r['p_top1_se']:.3f}",
            "mean rank": f"{r['expected_rank']:.1f} ± {r['expected_rank_se'] or 0:.1f}",
            "central weights": "-" if cw is None else " ".join(f"{v:.2f}" for v in cw.values()),
        })
    cols = [c for c in rows[0] if any(r.get(c) is not None for r in rows)]
    console.print(_records_table(
        f"Robust top {len(rows)} (SMAA, {rb['samples']:,} weight samples; "
        f"{rb['candidates']:,} candidates, {rb['pruned']:,} rows pruned as unable to reach "
        f"the top {k})", rows, cols))
