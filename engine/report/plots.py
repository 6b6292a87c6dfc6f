"""Figures of the HTML report, drawn with matplotlib's object API (no pyplot, no GUI).

Every function takes host data (a pandas table and/or parts of ``summary.json``) and returns a
:class:`matplotlib.figure.Figure`, or ``None`` with nothing to draw. :func:`to_png_data_uri`
turns a figure into a deterministic base64 PNG data URI: the same inputs give the same bytes.
"""

from __future__ import annotations

import base64
import io
import re
import struct
import warnings
from contextlib import contextmanager

import numpy as np
import pandas as pd

from ..magnitudes import MOMENTS_SAFE, column_scales
from ..sources.facts.regular_files import printable

__all__ = [
    "figure_rc",
    "to_png_data_uri",
    "sample_for_plots",
    "importance_figure",
    "silhouette_figure",
    "projection",
    "projection_figure",
    "scaling_table",
    "scaling_figure",
    "tradeoff_figure",
    "cluster_color",
    "MAX_MODELS",
]

#: Scaling curves drawn at most for this many accelerator models (the most common ones).
MAX_MODELS = 10
#: Importance bars drawn at most for this many features (the most important ones).
MAX_FEATURES = 15
DPI = 144

# Colour-blind-safe palette (Okabe-Ito), then matplotlib's tab10 for more groups.
_PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442",
            "#000000")
_FRONT = "#D55E00"

_RC = {
    "font.family": "DejaVu Sans",  # ships with matplotlib: same glyphs on every machine
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#dddddd",
    "grid.linewidth": 0.6,
    "legend.fontsize": 8,
    "legend.frameon": False,
    "savefig.dpi": DPI,
    "svg.hashsalt": "gpurank",
    "path.simplify": True,
}


def cluster_color(c: int) -> str:
    """Colour of cluster ``c`` in every figure and in the profile table (grey for -1)."""
    if c < 0:
        return "#999999"
    if c < len(_PALETTE):
        return _PALETTE[c]
    import matplotlib

    return matplotlib.colors.to_hex(matplotlib.colormaps["tab20"](c % 20))


def _t(text) -> str:
    """Data text for a figure, with "$" escaped so matplotlib never parses it as math, and
    control characters (ESC, CR, C1) shown as escapes: no font has their glyphs, and the
    warning that says so would carry them raw to the terminal."""
    return printable(str(text)).replace("$", r"\$")


@contextmanager
def figure_rc():
    """matplotlib defaults plus the report's style, whatever the user's matplotlibrc says."""
    import matplotlib

    base = {k: v for k, v in matplotlib.rcParamsDefault.items() if k != "backend"}
    with matplotlib.rc_context(base), matplotlib.rc_context(_RC):
        yield


def _figure(w, h):
    from matplotlib.figure import Figure

    return Figure(figsize=(w, h), layout="constrained")


def to_png_data_uri(fig):
    """Render ``fig`` to PNG (Agg); deterministic.

    Returns
    -------
    (uri, width, height)
        ``data:image/png;base64,...`` and the size in CSS pixels (96 per inch; the PNG has
        ``DPI / 96`` times as many, so it stays sharp on high-density screens and in print).
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    for w in caught:  # text that reached a figure another way: its warning, escaped
        warnings.warn(printable(str(w.message)), w.category, stacklevel=2)
    png = buf.getvalue()
    w, h = struct.unpack(">II", png[16:24])  # the IHDR chunk
    uri = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
    return uri, round(w * 96 / DPI), round(h * 96 / DPI)


def _renderer(fig):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    return fig.canvas.get_renderer()


def _short(text, limit):
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _fitted_legend(fig, *, loc, ncols=1, **kw):
    """A figure legend with at most ``ncols`` columns and as many as fit the figure's width
    (a legend wider than its figure is cut off on both sides); when one column is still too
    wide, the labels are shortened with an ellipsis. Returns the legend, or None without
    labelled artists."""
    handles, labels = [], []
    for ax in fig.axes:
        h, lab = ax.get_legend_handles_labels()
        handles += h
        labels += lab
    if not handles:
        return None
    renderer = _renderer(fig)
    room = fig.bbox.width * 0.98
    limit = max(len(t) for t in labels)
    while True:
        shown = [_short(t, limit) for t in labels]
        for n in range(max(1, min(ncols, len(handles))), 0, -1):
            leg = fig.legend(handles, shown, loc=loc, ncols=n, **kw)
            if leg.get_window_extent(renderer).width <= room or (n == 1 and limit <= 8):
                _make_room(fig, leg, renderer, loc)
                return leg
            leg.remove()
        limit = max(8, int(limit * 0.8))


def _make_room(fig, leg, renderer, loc):
    """Grow the figure by the part of a legend above or below the axes that would squeeze
    them (constrained layout takes the legend's room from the axes otherwise)."""
    if "lower" not in loc and "upper center" not in loc:
        return
    w, h = fig.get_size_inches()
    legend_h = leg.get_window_extent(renderer).height / fig.dpi
    extra = legend_h - 0.25 * h  # the design height leaves a quarter for a short legend
    if extra > 0:
        fig.set_size_inches(w, h + extra)


def _plain_log_axis(axis):
    """Tick labels of a log axis as plain numbers (1, 4, 16, 0.5) instead of powers."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.10g}"))
    axis.set_minor_formatter(NullFormatter())


# -- sampling ---------------------------------------------------------------------------------
def sample_for_plots(table: pd.DataFrame, max_points: int, seed: int = 0) -> np.ndarray:
    """Row positions to draw: a stratified sample by cluster plus every Pareto-front row.

    Each cluster (and the unclustered rows, cluster -1) keeps its share of ``max_points``
    (at least one row); rows with ``pareto_rank == 0`` are always kept. Returns sorted
    positions; all rows when the table has at most ``max_points`` rows.
    """
    n = len(table)
    if n <= max_points:
        return np.arange(n)
    rng = np.random.default_rng(seed)
    clusters = (table["cluster"].to_numpy() if "cluster" in table
                else np.zeros(n, dtype=np.int64))
    keep = []
    for c in np.unique(clusters):
        idx = np.flatnonzero(clusters == c)
        take = max(1, int(round(max_points * idx.size / n)))
        keep.append(idx if take >= idx.size else rng.choice(idx, take, replace=False))
    if "pareto_rank" in table:
        keep.append(np.flatnonzero(table["pareto_rank"].to_numpy() == 0))
    return np.unique(np.concatenate(keep))


# -- importance -------------------------------------------------------------------------------
def importance_figure(features: list[dict]):
    """Impurity and permutation importance side by side, features sorted by permutation."""
    feats = sorted(features, key=lambda r: -(r.get("permutation") or 0.0))[:MAX_FEATURES]
    if not feats:
        return None
    names = [_t(_short(r["feature"], 40)) for r in feats][::-1]
    perm = np.array([r.get("permutation") or 0.0 for r in feats], float)[::-1]
    std = np.array([r.get("permutation_std") or 0.0 for r in feats], float)[::-1]
    imp = np.array([r.get("impurity") or 0.0 for r in feats], float)[::-1]
    y = np.arange(len(names))
    fig = _figure(7.2, 0.9 + 0.26 * len(names))
    ax1, ax2 = fig.subplots(1, 2, sharey=True)
    ax1.barh(y, imp, color=_PALETTE[0])
    ax1.set_yticks(y, names)
    ax1.set_title("Impurity (training rows)")
    ax1.set_xlabel("share of impurity decrease")
    ax2.barh(y, perm, xerr=std, color=_PALETTE[1], error_kw={"lw": 0.8, "capsize": 2})
    ax2.set_title("Permutation (held-out rows)")
    ax2.set_xlabel("drop in R² when shuffled")
    ax2.axvline(0, color="#555555", lw=0.8)
    for ax in (ax1, ax2):
        ax.grid(axis="y", visible=False)
    return fig


# -- clusters ---------------------------------------------------------------------------------
def silhouette_figure(silhouette: dict, chosen_k):
    """Silhouette score over k, the chosen k marked."""
    pts = sorted((int(k), float(v)) for k, v in silhouette.items()
                 if v is not None and np.isfinite(v))
    if len(pts) < 2:
        return None
    ks, vs = zip(*pts)
    fig = _figure(4.8, 2.6)
    ax = fig.subplots()
    ax.plot(ks, vs, marker="o", color=_PALETTE[0], lw=1.5)
    if chosen_k is not None and int(chosen_k) in ks:
        v = vs[ks.index(int(chosen_k))]
        ax.plot([chosen_k], [v], marker="o", ms=11, mfc="none", mec=_FRONT, mew=2,
                label=f"chosen k = {chosen_k}")
        ax.legend(loc="best")
    ax.set_xticks(ks)
    ax.set_xlabel("k (number of clusters)")
    ax.set_ylabel("silhouette score")
    return fig


_LOG = re.compile(r"^log10\((.+)\)$")


def projection(table: pd.DataFrame, features: list[str]):
    """2-D PCA of the standardized cluster features (via NumPy SVD).

    ``features`` are names as in ``summary["clusters"]["features"]``; ``"log10(x)"`` means
    the log10 of column ``x``. Returns ``(xy, valid, explained)``: coordinates of every row
    (NaN where a feature is missing), the mask of usable rows, and the variance share of
    each of the two components. Raises KeyError naming a missing column.
    """
    cols = []
    for name in features:
        m = _LOG.match(name)
        col = m.group(1) if m else name
        if col not in table.columns:
            raise KeyError(col)
        v = pd.to_numeric(table[col], errors="coerce").to_numpy(dtype=float)
        if m:
            with np.errstate(divide="ignore", invalid="ignore"):
                v = np.where(v > 0, np.log10(v), np.nan)
        cols.append(v)
    X = np.column_stack(cols)
    valid = np.isfinite(X).all(axis=1)
    xy = np.full((len(table), 2), np.nan)
    if valid.sum() < 2:
        return xy, valid, (0.0, 0.0)
    Xv = X[valid]
    # Columns of huge or tiny magnitudes are brought near one first (exactly, by powers of
    # two): their squares would overflow or underflow the standard deviation.
    scales = column_scales(np.abs(Xv).max(axis=0), low=MOMENTS_SAFE[0],
                           high=MOMENTS_SAFE[1])
    if scales:
        Xv = Xv * np.asarray(scales)
    sd = Xv.std(axis=0)
    Z = (Xv - Xv.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    _, s, vt = np.linalg.svd(Z, full_matrices=False)
    # Fix each component's sign (largest loading positive) so the picture is reproducible.
    signs = np.sign(vt[np.arange(vt.shape[0]), np.abs(vt).argmax(axis=1)])
    vt = vt * np.where(signs == 0, 1.0, signs)[:, None]
    comps = vt[:2]
    proj = Z @ comps.T
    if proj.shape[1] == 1:  # one feature: a 1-D picture on a flat second axis
        proj = np.column_stack([proj[:, 0], np.zeros(len(proj))])
    xy[valid] = proj
    var = s**2
    share = var / var.sum() if var.sum() > 0 else np.zeros_like(var)
    explained = (float(share[0]), float(share[1]) if share.size > 1 else 0.0)
    return xy, valid, explained


def projection_figure(xy, clusters, labels: dict, explained, front=None):
    """Scatter of the projection coloured by cluster; ``labels`` maps cluster -> text."""
    fig = _figure(7.2, 5.0)
    ax = fig.subplots()
    ok = np.isfinite(xy).all(axis=1)
    for c in sorted(set(clusters[ok].tolist())):
        m = ok & (clusters == c)
        name = f"{c}: {labels.get(c, '')}".rstrip(": ") if c >= 0 else "not clustered"
        ax.scatter(xy[m, 0], xy[m, 1], s=7, alpha=0.55, color=cluster_color(c), lw=0,
                   label=_t(f"{name} ({int(m.sum()):,})"), rasterized=True)
    if front is not None and (ok & front).any():
        m = ok & front
        ax.scatter(xy[m, 0], xy[m, 1], s=26, facecolor="none", edgecolor="black", lw=0.8,
                   label=f"Pareto front ({int(m.sum()):,})")
    ax.set_xlabel(f"PC1 ({explained[0]:.0%} of variance)")
    ax.set_ylabel(f"PC2 ({explained[1]:.0%} of variance)")
    _fitted_legend(fig, loc="outside lower center", markerscale=2, ncols=1)
    return fig


# -- scaling ----------------------------------------------------------------------------------
def scaling_table(table: pd.DataFrame) -> pd.DataFrame:
    """Best (shortest) time to train per (accelerator, n_accelerators), with speedup and
    scaling efficiency against the model's smallest count: speedup = T_ref / T,
    ideal = N / N_ref, efficiency = speedup / ideal. Models with one count are dropped."""
    df = table[["accelerator", "n_accelerators", "time_to_train_min"]].copy()
    df["n_accelerators"] = pd.to_numeric(df["n_accelerators"], errors="coerce")
    df["time_to_train_min"] = pd.to_numeric(df["time_to_train_min"], errors="coerce")
    df = df[(df["n_accelerators"] > 0) & (df["time_to_train_min"] > 0)
            & np.isfinite(df["time_to_train_min"])]
    df["accelerator"] = df["accelerator"].astype("string")
    best = (df.groupby(["accelerator", "n_accelerators"], sort=True)["time_to_train_min"]
            .min().reset_index())
    first = best.groupby("accelerator")["n_accelerators"].transform("min")
    t_ref = best["time_to_train_min"].where(best["n_accelerators"] == first)
    best["n_ref"] = first
    best["t_ref"] = t_ref.groupby(best["accelerator"]).transform("max")
    best["ideal"] = best["n_accelerators"] / best["n_ref"]
    best["speedup"] = best["t_ref"] / best["time_to_train_min"]
    best["efficiency"] = best["speedup"] / best["ideal"]
    counts = best.groupby("accelerator")["n_accelerators"].transform("size")
    return best[counts >= 2].reset_index(drop=True)


def scaling_figure(sc: pd.DataFrame, models: list[str]):
    """Speedup and scaling efficiency against accelerator count (log2), one line per model."""
    fig = _figure(7.6, 3.4)
    ax1, ax2 = fig.subplots(1, 2, sharex=True)
    n_lo, n_hi = sc["n_accelerators"].min(), sc["n_accelerators"].max()
    for i, model in enumerate(models):
        part = sc[sc["accelerator"] == model].sort_values("n_accelerators")
        color = _PALETTE[i % len(_PALETTE)] if i < len(_PALETTE) else cluster_color(i)
        ax1.plot(part["n_accelerators"], part["speedup"], marker="o", ms=3.5, lw=1.3,
                 color=color, label=_t(model))
        ax2.plot(part["n_accelerators"], part["efficiency"], marker="o", ms=3.5, lw=1.3,
                 color=color)
    for n_ref in sorted(sc.loc[sc["accelerator"].isin(models), "n_ref"].unique()):
        xs = np.array([n_ref, n_hi], float)
        ax1.plot(xs, xs / n_ref, ls="--", lw=1, color="#666666")
    ax1.plot([], [], ls="--", lw=1, color="#666666", label="ideal: N / N_ref")
    ax2.axhline(1.0, ls="--", lw=1, color="#666666")
    ax1.set_xscale("log", base=2)
    ax1.set_yscale("log", base=2)
    _plain_log_axis(ax1.xaxis)
    _plain_log_axis(ax1.yaxis)
    ax1.set_title("Speedup over the smallest count")
    ax1.set_ylabel("speedup T_ref / T")
    ax2.set_title("Scaling efficiency")
    ax2.set_ylabel("speedup / (N / N_ref)")
    for ax in (ax1, ax2):
        ax.set_xlabel("accelerators N (log2)")
        ax.set_xlim(n_lo / 1.3, n_hi * 1.3)
    _fitted_legend(fig, loc="outside lower center", ncols=4)
    return fig


# -- trade-offs -------------------------------------------------------------------------------
def tradeoff_figure(x, y, clusters, front, *, xlabel, ylabel, top_ranks=None, intervals=None):
    """Log-log scatter of ``y`` against ``x``; Pareto-front rows highlighted, ranks marked.

    ``top_ranks`` is an optional sequence of (rank, x, y) to annotate. ``intervals`` is an
    optional ``(lo, hi, shown)``: the prediction interval of ``y`` per point and the points
    to draw it for; ``x`` moves with ``y`` (cost and accelerator-hours are proportional to
    the time), so each interval is a segment along the diagonal through its point.
    """
    fig = _figure(7.2, 4.2)
    ax = fig.subplots()
    if intervals is not None:
        lo, hi, shown = intervals
        ok = shown & np.isfinite(lo) & np.isfinite(hi) & (lo > 0) & (hi >= lo)
        for xi, yi, a, b in zip(x[ok], y[ok], lo[ok], hi[ok]):
            ax.plot([xi * a / yi, xi * b / yi], [a, b], color="#555555", lw=0.8, alpha=0.7,
                    solid_capstyle="butt", zorder=2)
        if ok.any():
            ax.plot([], [], color="#555555", lw=0.8, label="80% prediction interval")
    rest = ~front
    for c in sorted(set(clusters[rest].tolist())):
        m = rest & (clusters == c)
        ax.scatter(x[m], y[m], s=6, alpha=0.45, lw=0, color=cluster_color(c),
                   label=(f"cluster {c}" if c >= 0 else "not clustered"), rasterized=True)
    if front.any():
        ax.scatter(x[front], y[front], s=30, marker="D", color=_FRONT, edgecolor="black",
                   lw=0.5, label=f"Pareto front ({int(front.sum()):,})", zorder=3)
    offsets = {1: (7, 6), 2: (7, -12), 3: (-22, 6)}
    for rank, xv, yv in top_ranks or ():
        ax.annotate(f"#{rank}", (xv, yv), xytext=offsets.get(rank, (7, 6)),
                    textcoords="offset points", fontsize=8, fontweight="bold", zorder=4,
                    arrowprops={"arrowstyle": "-", "lw": 0.5, "color": "#333333"})
    ax.set_xscale("log")
    ax.set_yscale("log")
    if intervals is not None and x.size:
        # the points set the view; an interval reaches at most 4x beyond them (a row far
        # outside the fitted range has an interval of decades)
        for lim, v in ((ax.set_xlim, x), (ax.set_ylim, y)):
            lim(v.min() / 4.0, v.max() * 4.0)
    for axis, v in ((ax.xaxis, x), (ax.yaxis, y)):
        _plain_log_axis(axis)
        if v.size and np.log10(v.max() / v.min()) < 2.5:  # few decades: label 1, 2, 5 too
            from matplotlib.ticker import LogLocator

            axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.set_xlabel(_t(xlabel))
    ax.set_ylabel(_t(ylabel))
    _fitted_legend(fig, loc="outside right upper", markerscale=1.5)
    return fig
