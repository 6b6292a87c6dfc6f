"""The words that describe a group of configurations: its label and its composition text.

A label reads like ``"4-16 x NVIDIA H100 SXM5 80GB, high efficiency"``: the interquartile
range of the accelerator count, what the group runs on, and the median scaling efficiency.
"What the group runs on" names a model only when that model is a majority (more than half)
of the group's rows; otherwise the majority family (column ``family``, e.g. ``A100``), then
the majority generation (column ``generation``, e.g. ``Hopper``), when the table has those
columns; otherwise the group is ``mixed accelerators``. A label never names a model that is a
small minority of its group.

The shares come from the table: :func:`composition_shares` (host rows of one group) and
:func:`cluster_shares` (grouped on the backend's frame, for every group at once).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .formatting import percent

__all__ = ["COMPOSITION_COLUMNS", "MAJORITY", "accelerator_text", "composition",
           "composition_shares", "cluster_shares", "count_range", "efficiency_word",
           "profile_frame", "range_text", "SHARES_KEY"]

#: Columns describing what a group runs on, from the most to the least specific.
COMPOSITION_COLUMNS = ("accelerator", "family", "generation")
#: A value names a group only when it holds more than this share of the group's rows.
MAJORITY = 0.5
#: Key of the per-group shares in the rows given to :func:`profile_frame` (not a column).
SHARES_KEY = "_shares"


def range_text(lo, hi) -> str:
    """``"4-16"`` for counts rounded to integers, one number when they agree (no thousands
    separators: a label is short text, "1024-2048 x ...")."""
    lo, hi = int(round(lo)), int(round(hi))
    return f"{lo}" if lo == hi else f"{lo}-{hi}"


def count_range(values) -> str:
    """The interquartile range of accelerator counts, as :func:`range_text`."""
    lo, hi = np.nanpercentile(values, [25, 75])
    return range_text(lo, hi)


def accelerator_text(counts) -> str:
    """The dominant accelerators of a group from its shares (``value_counts`` order):
    the two largest holding at least 20% each, else the largest, with their shares."""
    shown = [f"{name} ({percent(share)})" for name, share in counts.head(2).items()
             if share >= 0.2] or [f"{counts.index[0]} ({percent(counts.iloc[0])})"]
    return ", ".join(shown)


def efficiency_word(e) -> str:
    """``high`` (>= 0.85), ``medium`` (>= 0.6) or ``low`` median scaling efficiency."""
    if e is None or not np.isfinite(e):
        return ""
    return "high" if e >= 0.85 else "medium" if e >= 0.6 else "low"


def composition(shares) -> str:
    """What a group runs on, by the majority rule.

    Parameters
    ----------
    shares : mapping of str to pandas.Series
        For columns of :data:`COMPOSITION_COLUMNS`, the share of each value in the group
        (as ``value_counts(normalize=True)``: largest first).

    Returns
    -------
    str
        The model when it holds more than :data:`MAJORITY` of the rows; else ``"<family>
        family"``, else ``"<generation> generation"`` under the same rule; else ``"mixed
        accelerators"``; ``""`` when no composition column is known.

    Examples
    --------
    >>> import pandas as pd
    >>> composition({"accelerator": pd.Series({"A100 PCIe 80GB": 0.06, "H100": 0.05})})
    'mixed accelerators'
    >>> composition({"accelerator": pd.Series({"A100 PCIe": 0.3, "A100 SXM": 0.3}),
    ...              "family": pd.Series({"A100": 0.6, "H100": 0.4})})
    'A100 family'
    """
    known = False
    for col, suffix in zip(COMPOSITION_COLUMNS, ("", " family", " generation")):
        s = shares.get(col)
        if s is None:
            continue
        known = True
        if len(s) and float(s.iloc[0]) > MAJORITY:
            return f"{s.index[0]}{suffix}"
    return "mixed accelerators" if known else ""


def composition_shares(part: pd.DataFrame) -> dict:
    """The shares of every :data:`COMPOSITION_COLUMNS` column present in ``part`` (the host
    rows of one group), in ``value_counts`` order; missing values are not counted."""
    return {col: part[col].astype("string").value_counts(normalize=True)
            for col in COMPOSITION_COLUMNS if col in part.columns}


def _counts_and_firsts(raw, values, *, backend=None, observed=False):
    """Per (group, value): the rows and the first row, on the host; rows in no group and
    missing values left out."""
    xdf, xp = (pd, np) if backend is None else (backend.xdf, backend.xp)
    a = xdf.DataFrame({"_cluster": raw, "_value": values, "_row": xp.arange(len(values))})
    a = a[a["_cluster"] >= 0]
    extra = {"observed": True} if observed else {}
    g = a.groupby(["_cluster", "_value"], sort=False, **extra)["_row"]
    host = (lambda x: x) if backend is None else backend.to_host
    return pd.DataFrame({"n": host(g.count()), "first": host(g.min())}).reset_index()


def _category_counts_and_firsts(raw, values: pd.Series) -> pd.DataFrame:
    """:func:`_counts_and_firsts` of a categorical host column from its codes: one count and
    one minimum per (group, category) key, O(n) (a grouped count and minimum over the two
    keys took 1.7 s per column at 10M rows)."""
    codes = values.cat.codes.to_numpy()
    ncat = len(values.cat.categories)
    rows = np.flatnonzero((raw >= 0) & (codes >= 0))
    key = raw[rows].astype(np.int64) * ncat + codes[rows]
    size = int(raw.max()) + 1 if raw.size else 0
    n = np.bincount(key, minlength=size * ncat)
    first = np.full(n.size, len(values), dtype=np.int64)
    np.minimum.at(first, key, rows)
    hit = np.flatnonzero(n)
    return pd.DataFrame({"_cluster": hit // ncat, "_value": values.cat.categories[hit % ncat],
                         "n": n[hit], "first": first[hit]})


def cluster_shares(df, raw, column, backend) -> dict:
    """The shares of each value of ``column`` in every group, grouped on the backend.

    Only the per-(group, value) counts cross to the host. Values are ordered as
    ``value_counts`` orders them (by count, ties by first appearance in the group).

    Parameters
    ----------
    df : DataFrame
        The backend's frame (cuDF or pandas).
    raw : array of int, shape (n,)
        Group of each row on the backend, -1 for rows in no group.
    column : str
    backend : Backend

    Returns
    -------
    dict of int to pandas.Series
        Group id -> shares of its values (summing to 1); groups without values are absent.
    """
    values = df[column]
    if isinstance(values, pd.Series):
        # Grouped on the values as they are, and only the distinct values made text: a
        # conversion of 10M rows to strings costs seconds per column. Values whose text is
        # the same (1 and "1") are one value, as they were when the rows were made text.
        if isinstance(values.dtype, pd.CategoricalDtype):
            t = _category_counts_and_firsts(np.asarray(raw), values)
        else:
            t = _counts_and_firsts(raw, values, observed=True)
        t["_value"] = t["_value"].astype("string")
        t = t.groupby(["_cluster", "_value"], sort=False).agg(
            n=("n", "sum"), first=("first", "min")).reset_index()
    else:
        # cuDF's "str" keeps missing values missing, and groupby drops them, as value_counts
        # does.
        t = _counts_and_firsts(raw, values.astype("str"), backend=backend)
    shares = {}
    for c, part in t.sort_values("first", kind="stable").groupby("_cluster", sort=False):
        counts = pd.Series(part["n"].to_numpy(), index=pd.Index(part["_value"]))
        counts = counts.sort_values(ascending=False, kind="stable")
        shares[int(c)] = counts / counts.sum()
    return shares


def profile_frame(rows) -> pd.DataFrame:
    """The profile table from its per-group rows, with the short label of each group.

    Parameters
    ----------
    rows : list of dict
        One dict per group: ``cluster``, ``size``, ``share``, ``median_<column>`` values,
        optionally ``accelerators`` and ``n_accelerators_range`` texts, and under
        ``"_shares"`` the :func:`composition_shares` of the group (taken out of the row; it
        is not a column of the profile).

    Returns
    -------
    DataFrame
        The rows, with a ``label`` column second: range x composition, efficiency word, and
        "fastest" on the group with the shortest median time to train (of two or more).
    """
    rows = [dict(r) for r in rows]
    shares = [r.pop(SHARES_KEY, None) or {} for r in rows]
    prof = pd.DataFrame(rows)
    if prof.empty:
        return prof
    # "fastest" compares groups: a lone group is not marked
    fastest = (int(prof.loc[prof["median_time_to_train_min"].idxmin(), "cluster"])
               if "median_time_to_train_min" in prof and len(prof) > 1 else None)
    labels_txt = []
    for (_, r), sh in zip(prof.iterrows(), shares):
        parts = []
        what = composition(sh)
        if "n_accelerators_range" in r and isinstance(r["n_accelerators_range"], str):
            parts.append(f"{r['n_accelerators_range']} x {what}".strip().removesuffix(" x"))
        elif what:
            parts.append(what)
        word = efficiency_word(r.get("median_scaling_efficiency", np.nan))
        if word:
            parts.append(f"{word} efficiency")
        if fastest is not None and r["cluster"] == fastest:
            parts.append("fastest")
        labels_txt.append(", ".join(parts))
    prof.insert(1, "label", labels_txt)
    return prof
