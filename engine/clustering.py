"""Step 2, group: KMeans on standardized performance features, and a profile of each group.

Quantities that span orders of magnitude (accelerator count, time to train) are clustered on
a log scale, so "8 vs 16 GPUs" weighs as much as "1024 vs 2048". Clusters are numbered in a
stable order (by median accelerator count, then time to train) so labels do not depend on
KMeans' random initialization.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .errors import UsageError
from .profiles_text import COMPOSITION_COLUMNS, SHARES_KEY, cluster_shares, composition_shares
from .profiles_text import accelerator_text as _accelerator_text
from .profiles_text import count_range as _count_range
from .profiles_text import profile_frame as _profile_frame
from .profiles_text import range_text as _range_text
from .results import ClusterResult
from .schema import numeric_values

__all__ = ["cluster_configurations", "cluster_features", "profile_clusters", "DEFAULT_FEATURES"]

DEFAULT_FEATURES = (
    "n_accelerators",
    "time_to_train_min",
    "throughput_per_accelerator",
    "scaling_efficiency",
    "utilization",
)
#: Columns whose medians describe a cluster, when present.
PROFILE_COLUMNS = (
    "n_accelerators", "n_nodes", "cpu_cores_per_accelerator", "time_to_train_min",
    "throughput", "throughput_per_accelerator", "scaling_efficiency", "utilization",
    "cost_usd", "energy_kwh", "accelerator_hours",
)
#: KMeans is fitted on at most this many rows (seeded sample) and then assigns every row.
FIT_ROWS = 200_000
#: The silhouette curve over k is computed on fits to a seeded sample of this many rows,
#: each scored on a smaller sample (silhouette is quadratic in rows).
SCAN_ROWS = 5_000
SILHOUETTE_ROWS = 2_000
N_INIT = 4
#: Restarts per k in the silhouette scan: the curve is a guide to k, not the final model.
SCAN_N_INIT = 2
LOG_SPAN = 100.0


def cluster_features(df, features, *, backend=None):
    """Standardized feature matrix for clustering, with rows that have missing values masked.

    A feature is log10-transformed when all its values are positive and its largest value is
    more than ``LOG_SPAN`` times its smallest.

    Parameters
    ----------
    df : DataFrame
    features : sequence of str
    backend : Backend, optional
        Where the arrays live; NumPy on the host when omitted.

    Returns
    -------
    Z : array of float64, shape (n, k)
        Standardized features (garbage in masked rows).
    valid : array of bool, shape (n,)
    names : tuple of str
        Feature names, as ``log10(name)`` where a log was taken.
    """
    xp = backend.xp if backend is not None else np
    cols, names = [], []
    for f in features:
        if backend is not None:
            v = backend.values(df, f, role="cluster feature")
        else:
            v = numeric_values(df, f, role="cluster feature")
        fin = v[xp.isfinite(v)]
        if fin.size and float(fin.min()) > 0 and float(fin.max()) > LOG_SPAN * float(fin.min()):
            v = xp.log10(xp.where(v > 0, v, xp.nan))
            names.append(f"log10({f})")
        else:
            names.append(f)
        cols.append(v)
    X = xp.stack(cols, axis=1) if cols else xp.empty((len(df), 0))
    valid = xp.isfinite(X).all(axis=1)
    if bool(valid.any()):
        mu, sd = X[valid].mean(axis=0), X[valid].std(axis=0)
    else:
        mu, sd = xp.zeros(X.shape[1]), xp.ones(X.shape[1])
    sd = xp.where(sd > 0, sd, 1.0)  # a constant feature carries no distance, not a NaN
    return (X - mu) / sd, valid, tuple(names)


def _fit_kmeans(backend, Z, k, seed, n_init=N_INIT):
    model = backend.kmeans(n_clusters=k, init="k-means++", n_init=n_init, max_iter=300,
                           tol=1e-4, random_state=seed)
    model.fit(Z)
    return model


def _sample_sorted(rng, idx, size, xp):
    """``np.sort(rng.choice(idx, size, replace=False))`` for an increasing ``idx`` that may
    live on the device: the positions are drawn on the host (the same draws) and only they
    travel."""
    pos = np.sort(rng.choice(int(idx.size), size, replace=False))
    return idx[pos] if isinstance(idx, np.ndarray) else idx[xp.asarray(pos)]


def _silhouette_scan(backend, Z, idx, k_range, seed):
    """Silhouette score for each k in ``k_range`` (clipped to what the rows allow), computed
    by the backend where ``Z`` lives (``idx``: increasing row ids, host or device)."""
    rng = np.random.default_rng(seed + 1)
    xp = backend.xp
    scan = _sample_sorted(rng, idx, SCAN_ROWS, xp) if idx.size > SCAN_ROWS else idx
    Zs = xp.ascontiguousarray(Z[xp.asarray(scan)])
    lo, hi = k_range
    hi = min(hi, int(scan.size) - 1)
    out = {}
    for kk in range(lo, hi + 1):
        model = _fit_kmeans(backend, Zs, kk, seed, n_init=SCAN_N_INIT)
        out[kk] = backend.silhouette(Zs, model.labels_, sample_size=min(SILHOUETTE_ROWS,
                                                                        Zs.shape[0]), seed=seed)
    return out


def cluster_configurations(df, *, k=5, backend, features=None, k_range=(2, 10), seed=0
                           ) -> ClusterResult:
    """Group configurations with KMeans and profile each group.

    Parameters
    ----------
    df : DataFrame
        Configuration table with derived metrics.
    k : int or "auto"
        Number of clusters, or "auto" to choose k in ``k_range`` by silhouette score.
    backend : Backend
    features : sequence of str, optional
        Numeric columns to cluster on; :data:`DEFAULT_FEATURES` present in ``df`` by default.
    k_range : (int, int)
    seed : int

    Returns
    -------
    ClusterResult
    """
    features = tuple(features) if features else tuple(f for f in DEFAULT_FEATURES if f in df)
    if not features:
        raise UsageError(
            f"no cluster feature is in the table; expected some of: {', '.join(DEFAULT_FEATURES)}"
        )
    xp = backend.xp
    Z, valid, names = cluster_features(df, features, backend=backend)
    # Row ids stay where the features are; only counts and host-drawn positions cross.
    idx = xp.flatnonzero(valid)
    n_valid = int(idx.size)
    notes = []
    if n_valid < len(df):
        notes.append(f"{len(df) - n_valid} rows with missing cluster features got cluster -1")

    rng = np.random.default_rng(seed)
    fit_idx = _sample_sorted(rng, idx, FIT_ROWS, xp) if n_valid > FIT_ROWS else idx
    if fit_idx.size < idx.size:
        notes.append(f"KMeans fitted on a seeded sample of {fit_idx.size:,} rows, then applied "
                     "to all")
    Zfit = xp.ascontiguousarray(Z[xp.asarray(fit_idx)])

    if k != "auto" and k > fit_idx.size:
        raise UsageError(
            f"--clusters {k} is larger than the number of rows that can be clustered "
            f"({fit_idx.size}); use a smaller k or --clusters auto"
        )
    silhouette = _silhouette_scan(backend, Z, idx, k_range, seed)
    if k == "auto":
        if not silhouette:
            raise UsageError(
                f"--clusters auto needs at least {k_range[0] + 1} rows with cluster features; "
                f"the table has {idx.size}"
            )
        k = max(silhouette, key=lambda kk: (np.nan_to_num(silhouette[kk], nan=-2.0), -kk))
        notes.append(f"k = {k} chosen by silhouette over {min(silhouette)}..{max(silhouette)}")
    model = _fit_kmeans(backend, Zfit, k, seed)

    raw = xp.full(len(df), -1, dtype=np.int32)
    raw[idx] = model.predict(xp.ascontiguousarray(Z[idx]))
    if backend.name == "cpu":
        raw = np.asarray(raw, dtype=np.int32)
        labels = _stable_order(df, raw, k)
        profiles = profile_clusters(df, labels)
    else:
        # The profile columns stay on the device: grouped medians, quartiles and counts are
        # computed there and only those k-row summaries (and the labels) come back.
        labels, profiles = _profiles_on_backend(df, raw, k, backend)
    return ClusterResult(labels=labels, k=int(k), features=names, profiles=profiles,
                         silhouette=silhouette, note="; ".join(notes))


def _stable_order(df, raw, k):
    # Number clusters by median accelerator count, then median time to train.
    keys = []
    n_acc = df["n_accelerators"].to_numpy(dtype=float) if "n_accelerators" in df else None
    ttt = df["time_to_train_min"].to_numpy(dtype=float) if "time_to_train_min" in df else None
    for c in range(k):
        m = raw == c
        a = float(np.nanmedian(n_acc[m])) if n_acc is not None and m.any() else 0.0
        t = float(np.nanmedian(ttt[m])) if ttt is not None and m.any() else 0.0
        keys.append((a, t, c))
    new_of_old = {old: new for new, (_, _, old) in enumerate(sorted(keys))}
    out = np.full_like(raw, -1)
    for old, new in new_of_old.items():
        out[raw == old] = new
    return out


def _profiles_on_backend(df, raw, k, backend):
    """:func:`_stable_order` and :func:`profile_clusters` computed with grouped aggregations
    on the backend's frame (cuDF on the GPU), so that only per-cluster summaries cross to the
    host.

    The summaries are the ones the host functions compute: medians skipping missing values,
    linear 25th/75th percentiles of the accelerator count, and accelerator shares ordered as
    ``value_counts`` orders them (by count, ties by first appearance in the cluster).

    Parameters
    ----------
    df : DataFrame
        The backend's frame (cuDF or pandas).
    raw : array of int32, shape (n,)
        KMeans labels on the backend, -1 for rows without cluster features.
    k : int
    backend : Backend

    Returns
    -------
    labels : ndarray of int32, shape (n,)
        Stable cluster labels on the host.
    profiles : pandas.DataFrame
    """
    host = backend.to_host
    numeric = [c for c in PROFILE_COLUMNS if c in df.columns]
    frame = df[numeric].astype("float64")
    if hasattr(frame, "nans_to_nulls"):  # cuDF keeps NaN as a value; medians must skip it
        frame = frame.nans_to_nulls()
    frame["_cluster"] = raw
    frame = frame[frame["_cluster"] >= 0]
    grouped = frame.groupby("_cluster", sort=True)
    size = host(grouped.size())
    med = host(grouped[numeric].median()) if numeric else None
    quart = None
    if "n_accelerators" in numeric:
        col = grouped["n_accelerators"]
        quart = (host(col.quantile(0.25)), host(col.quantile(0.75)))
    shares = {col: cluster_shares(df, raw, col, backend) for col in COMPOSITION_COLUMNS
              if col in df.columns}

    present = {int(c) for c in size.index}

    def median(col, c):
        return float(med.loc[c, col])

    keys = []
    for c in range(k):
        a_ = median("n_accelerators", c) if "n_accelerators" in numeric and c in present else 0.0
        t_ = (median("time_to_train_min", c)
              if "time_to_train_min" in numeric and c in present else 0.0)
        keys.append((a_, t_, c))
    new_of_old = {old: new for new, (_, _, old) in enumerate(sorted(keys))}
    raw_host = np.asarray(host(raw), dtype=np.int32)  # the labels: a result
    labels = np.full_like(raw_host, -1)
    for old, new in new_of_old.items():
        labels[raw_host == old] = new
    total = int((labels >= 0).sum())
    rows = []
    for new in sorted(set(labels.tolist()) - {-1}):
        old = next(o for o, nw in new_of_old.items() if nw == new)
        n_c = int(size.loc[old])
        row = {"cluster": new, "size": n_c, "share": float(n_c / max(total, 1))}
        for col in numeric:
            row[f"median_{col}"] = median(col, old)
        row[SHARES_KEY] = {col: by[old] for col, by in shares.items() if old in by}
        if "accelerator" in df.columns:
            row["accelerators"] = _accelerator_text(shares["accelerator"][old])
        if quart is not None:
            row["n_accelerators_range"] = _range_text(quart[0].loc[old], quart[1].loc[old])
        rows.append(row)
    return labels, _profile_frame(rows)


def profile_clusters(df, labels) -> pd.DataFrame:
    """One row per cluster: size, share, medians, dominant accelerators and a short label.

    The label reads like "4-16 x H100-SXM5-80GB, high efficiency" (the interquartile range
    of the accelerator count, the model, family or generation that is a majority of the
    cluster or "mixed accelerators" (see :mod:`.profiles_text`), the median scaling
    efficiency), and marks the cluster with the shortest median time to train as "fastest".
    """
    rows = []
    numeric = [c for c in PROFILE_COLUMNS if c in df.columns]
    total = int((labels >= 0).sum())
    for c in sorted(set(labels.tolist()) - {-1}):
        m = labels == c
        part = df.loc[m]
        row = {"cluster": c, "size": int(m.sum()), "share": float(m.sum() / max(total, 1))}
        for col in numeric:
            row[f"median_{col}"] = float(np.nanmedian(part[col].to_numpy(dtype=float)))
        row[SHARES_KEY] = composition_shares(part)
        if "accelerator" in df.columns:
            row["accelerators"] = _accelerator_text(row[SHARES_KEY]["accelerator"])
        if "n_accelerators" in df.columns:
            row["n_accelerators_range"] = _count_range(part["n_accelerators"].to_numpy(float))
        rows.append(row)
    return _profile_frame(rows)
