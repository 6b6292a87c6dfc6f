"""Step 2, group: KMeans on standardized performance features, and a profile of each group.

Quantities that span orders of magnitude (accelerator count, time to train) are clustered on
a log scale, so "8 vs 16 GPUs" weighs as much as "1024 vs 2048". Clusters are numbered in a
stable order (by median accelerator count, then time to train) so labels do not depend on
KMeans' random initialization.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .backend import resolve_backend
from .errors import UsageError
from .magnitudes import MOMENTS_SAFE, column_scales
from .params import ParamError
from .profiles_text import COMPOSITION_COLUMNS, SHARES_KEY, cluster_shares
from .profiles_text import accelerator_text as _accelerator_text
from .profiles_text import profile_frame as _profile_frame
from .profiles_text import range_text as _range_text
from .results import ClusterResult
from .spec import DEFAULT_CLUSTERS

__all__ = ["ClusterModel", "fit_cluster_model", "cluster_configurations",
           "default_cluster_features", "stable_order", "relabel", "profile_clusters",
           "DEFAULT_FEATURES", "FIT_ROWS", "cluster_shares_of", "with_sizes"]

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


@dataclass(frozen=True)
class ClusterModel:
    """A fitted grouping: how to turn rows into features, the KMeans model, and the order
    that numbers its clusters stably. ``predict`` labels any table with the same columns
    (the Dask driver fits on a sample and predicts each partition).

    Attributes
    ----------
    features : tuple of str
        Input columns.
    logs : tuple of bool
        Whether each feature is clustered on a log10 scale.
    mean, std : ndarray of float64
        Standardization of the (logged) features, from the rows the model was fitted on.
    scales : tuple of float
        Powers of two each (logged) feature is multiplied by before standardization: 1,
        except for a feature whose magnitudes would overflow or underflow its variance.
    kmeans : estimator
        The backend's fitted KMeans (scikit-learn or cuML).
    order : ndarray of int32, shape (k,)
        Stable label of each KMeans label: by median accelerator count, then median time to
        train, over the rows the model was fitted on.
    k : int
    silhouette : dict
        Silhouette score for each k of ``k_range`` (see :class:`ClusterResult`).
    note : str
    """

    features: tuple
    logs: tuple
    mean: np.ndarray
    std: np.ndarray
    kmeans: object
    order: np.ndarray
    k: int
    silhouette: dict
    note: str = ""
    scales: tuple = ()

    @property
    def names(self) -> tuple:
        """Feature names as reported, ``log10(name)`` where a log is taken."""
        return tuple(f"log10({f})" if lg else f for f, lg in zip(self.features, self.logs))

    def transform(self, df, *, backend):
        """Standardized features of ``df`` on the backend, and the mask of rows that have
        every feature (the others get label -1)."""
        X = _feature_matrix(df, self.features, self.logs, backend, self.scales)
        xp = backend.xp
        valid = xp.isfinite(X).all(axis=1)
        return (X - xp.asarray(self.mean)) / xp.asarray(self.std), valid

    def predict_raw(self, df, *, backend):
        """KMeans labels of ``df`` (unordered), -1 where a feature is missing; on the backend."""
        xp = backend.xp
        Z, valid = self.transform(df, backend=backend)
        idx = xp.flatnonzero(valid)
        raw = xp.full(len(df), -1, dtype=np.int32)
        if int(idx.size):
            raw[idx] = self.kmeans.predict(xp.ascontiguousarray(Z[idx]))
        return raw

    def predict(self, df, *, backend) -> np.ndarray:
        """Stable cluster labels of ``df`` (int32, -1 where a feature is missing), on the host."""
        raw = np.asarray(backend.to_host(self.predict_raw(df, backend=backend)), dtype=np.int32)
        return relabel(raw, self.order)


def relabel(raw, order) -> np.ndarray:
    """Map KMeans labels to stable labels; -1 stays -1."""
    out = np.full(raw.shape, -1, dtype=np.int32)
    ok = raw >= 0
    out[ok] = order[raw[ok]]
    return out


def _log_flags(df, features, backend):
    """Which features span more than ``LOG_SPAN`` with positive values (clustered on log10)."""
    xp = backend.xp
    flags = []
    for f in features:
        v = backend.values(df, f, role="cluster feature")
        fin = v[xp.isfinite(v)]
        flags.append(bool(fin.size and float(fin.min()) > 0
                          and float(fin.max()) > LOG_SPAN * float(fin.min())))
    return tuple(flags)


def _feature_matrix(df, features, logs, backend, scales=()):
    xp = backend.xp
    cols = []
    for j, (f, lg) in enumerate(zip(features, logs)):
        v = backend.values(df, f, role="cluster feature")
        if lg:
            v = xp.log10(xp.where(v > 0, v, xp.nan))
        if scales and scales[j] != 1.0:
            v = v * scales[j]
        cols.append(v)
    return xp.stack(cols, axis=1) if cols else xp.empty((len(df), 0))


def _safe_scales(Xv, backend):
    """Power-of-two scale of each column of the valid rows ``Xv`` that would overflow or
    underflow (1.0 for the others), or ``()`` when none would."""
    xp = backend.xp
    if not Xv.shape[0]:
        return ()
    top = np.asarray(backend.to_host(xp.maximum(Xv.max(axis=0), -Xv.min(axis=0))),
                     dtype=np.float64)
    return column_scales(top, low=MOMENTS_SAFE[0], high=MOMENTS_SAFE[1])


def default_cluster_features(columns, criteria=()) -> tuple[str, ...]:
    """:data:`DEFAULT_FEATURES` present in ``columns``; a table with none of them (measured
    runs with only time, cost and energy, say) is grouped on its criteria columns."""
    cols = set(columns)
    feats = tuple(f for f in DEFAULT_FEATURES if f in cols)
    if not feats:
        feats = tuple(c.column for c in criteria if c.column in cols)
    return feats


def fit_cluster_model(df, *, k=None, backend, features=None, k_range=(2, 10), seed=0,
                      criteria=(), return_labels=False):
    """Fit the grouping on ``df``: log scales and standardization from its rows, KMeans on a
    seeded sample of at most ``FIT_ROWS`` of them, stable cluster numbers from its medians.

    Parameters
    ----------
    df : DataFrame
        Configuration table with derived metrics (the whole table in memory, a seeded sample
        of the dataset on Dask), on the backend.
    k : int, "auto" or None
        None: ``DEFAULT_CLUSTERS``, or fewer when the table has fewer rows (with a note).
    backend : Backend
    features : sequence of str, optional
        Numeric columns to cluster on; :func:`default_cluster_features` by default.
    k_range : (int, int)
    seed : int
    criteria : tuple of Criterion
        Used only to choose features for a table without the default ones.
    return_labels : bool
        Also return the stable labels of ``df``'s rows, as ``model.predict(df)`` gives them
        (they are computed here anyway, and a second pass over a large table is not free).

    Returns
    -------
    ClusterModel, or (ClusterModel, ndarray of int32) with ``return_labels``
    """
    features = tuple(features) if features else default_cluster_features(df.columns, criteria)
    if not features:
        raise UsageError(
            f"no cluster feature is in the table; expected some of: {', '.join(DEFAULT_FEATURES)}"
        )
    xp = backend.xp
    logs = _log_flags(df, features, backend)
    X = _feature_matrix(df, features, logs, backend)
    valid = xp.isfinite(X).all(axis=1)
    # The valid rows, not copied when they are all of them (640 MB at 10M rows).
    every = bool(valid.all())
    scales = _safe_scales(X if every else X[valid], backend)
    if scales:
        X = _feature_matrix(df, features, logs, backend, scales)
    Xv = X if every else X[valid]
    if Xv.shape[0]:
        mu, sd = Xv.mean(axis=0), Xv.std(axis=0)
    else:
        mu, sd = xp.zeros(X.shape[1]), xp.ones(X.shape[1])
    sd = xp.where(sd > 0, sd, 1.0)  # a constant feature carries no distance, not a NaN
    mean = np.asarray(backend.to_host(mu), dtype=np.float64)
    std = np.asarray(backend.to_host(sd), dtype=np.float64)
    Z = (X - mu) / sd
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

    if k is None:
        k = min(DEFAULT_CLUSTERS, int(fit_idx.size))
        if k < DEFAULT_CLUSTERS:
            notes.append(f"{k} clusters, not {DEFAULT_CLUSTERS}: the table has {fit_idx.size} "
                         "rows to group")
    if k != "auto" and k > fit_idx.size:
        raise ParamError("clusters", f"is {k}, more than the rows that can be clustered "
                         f"({fit_idx.size}); use a smaller k or 'auto'")
    silhouette = _silhouette_scan(backend, Z, idx, k_range, seed)
    if k == "auto":
        if not silhouette:
            raise ParamError("clusters", f"'auto' needs at least {k_range[0] + 1} rows with "
                             f"cluster features; the table has {idx.size}")
        k = max(silhouette, key=lambda kk: (np.nan_to_num(silhouette[kk], nan=-2.0), -kk))
        notes.append(f"k = {k} chosen by silhouette over {min(silhouette)}..{max(silhouette)}")
    kmeans = _fit_kmeans(backend, Zfit, k, seed)
    raw = xp.full(len(df), -1, dtype=np.int32)
    if n_valid:
        raw[idx] = kmeans.predict(xp.ascontiguousarray(Z if every else Z[idx]))
    order = stable_order(df, raw, k, backend=backend)
    model = ClusterModel(features=features, logs=logs, mean=mean, std=std, scales=scales,
                         kmeans=kmeans, order=order, k=int(k), silhouette=silhouette,
                         note="; ".join(notes))
    if not return_labels:
        return model
    return model, relabel(np.asarray(backend.to_host(raw), dtype=np.int32), order)


def cluster_configurations(df, *, k=5, backend, features=None, k_range=(2, 10), seed=0,
                           criteria=()) -> ClusterResult:
    """Group configurations with KMeans and profile each group.

    :func:`fit_cluster_model` on ``df``, its labels for every row and the profiles.

    Returns
    -------
    ClusterResult
    """
    model, labels = fit_cluster_model(df, k=k, backend=backend, features=features,
                                      k_range=k_range, seed=seed, criteria=criteria,
                                      return_labels=True)
    profiles = profile_clusters(df, labels, backend=backend)
    return ClusterResult(labels=labels, k=model.k, features=model.names, profiles=profiles,
                         silhouette=model.silhouette, note=model.note)


def stable_order(df, raw, k, *, backend) -> np.ndarray:
    """Stable label of each KMeans label (int32, length k): clusters numbered by median
    accelerator count, then median time to train (missing values skipped), ties by KMeans
    label; the medians are computed where the frame lives (:func:`_cluster_medians`)."""
    cols = [c for c in ("n_accelerators", "time_to_train_min") if c in df.columns]
    med = _cluster_medians(df, raw, cols, backend)[1] if cols else None
    keys = []
    for c in range(k):
        present = med is not None and c in med.index
        a = float(med.loc[c, "n_accelerators"]) if present and "n_accelerators" in cols else 0.0
        t = (float(med.loc[c, "time_to_train_min"])
             if present and "time_to_train_min" in cols else 0.0)
        keys.append((a, t, c))
    order = np.empty(k, dtype=np.int32)
    for new, (_, _, old) in enumerate(sorted(keys)):
        order[old] = new
    return order


def _cluster_medians(df, raw, cols, backend, *, quartile=None):
    """Per cluster (label >= 0): its size, the medians of ``cols`` skipping missing values,
    and the linear 25th and 75th percentiles of column ``quartile`` (one of ``cols``).

    Returns ``(size, medians, (q25, q75))`` on the host: a Series and a DataFrame indexed by
    cluster, and two Series (None without ``quartile``). On a device these are grouped
    aggregations of the frame (cuDF); on the host the rows are put in cluster order once and
    each cluster's values are a slice, whose median NumPy selects in O(n) (pandas' grouped
    median sorts: 11 columns of 10M rows took 11 s).
    """
    if not backend.on_device:
        return _host_cluster_medians(df, np.asarray(raw), cols, quartile)
    return _frame_cluster_medians(df, raw, cols, backend, quartile)


def _frame_cluster_medians(df, raw, cols, backend, quartile):
    """:func:`_cluster_medians` as grouped aggregations of the backend's frame."""
    host = backend.to_host
    frame = df[list(cols)].astype("float64")
    if hasattr(frame, "nans_to_nulls"):  # cuDF keeps NaN as a value; medians must skip it
        frame = frame.nans_to_nulls()
    frame["_cluster"] = raw
    frame = frame[frame["_cluster"] >= 0]
    grouped = frame.groupby("_cluster", sort=True)
    size = host(grouped.size())
    med = host(grouped[list(cols)].median())
    quart = None
    if quartile is not None:
        col = grouped[quartile]
        quart = (host(col.quantile(0.25)), host(col.quantile(0.75)))
    return size, med, quart


def _host_cluster_medians(df, raw, cols, quartile):
    """:func:`_cluster_medians` on host columns."""
    # Labels are small: as 16-bit integers NumPy's stable sort is a radix sort, O(n)
    # (5x faster than the merge sort of int32 at 10M rows).
    small = raw.astype(np.int16) if raw.size and -1 <= raw.min() and raw.max() < 1 << 15 \
        else raw
    order = np.argsort(small, kind="stable")
    ranked = raw[order]
    ids = np.unique(ranked[ranked >= 0])
    lo = np.searchsorted(ranked, ids, side="left")
    hi = np.searchsorted(ranked, ids, side="right")
    size = pd.Series(hi - lo, index=ids)
    med = pd.DataFrame(index=ids, columns=list(cols), dtype=np.float64)
    quart = None
    for col in cols:
        v = df[col].to_numpy(dtype=np.float64, na_value=np.nan)[order]
        slices = [v[a:b] for a, b in zip(lo, hi)]
        # Copies without the missing values only where there are any.
        parts = [x[~np.isnan(x)] for x in slices] if np.isnan(v).any() else slices
        med[col] = [np.median(x) if x.size else np.nan for x in parts]
        if col == quartile:
            q = np.array([np.quantile(x, [0.25, 0.75]) if x.size else [np.nan, np.nan]
                          for x in parts]).reshape(-1, 2)
            quart = (pd.Series(q[:, 0], index=ids), pd.Series(q[:, 1], index=ids))
    return size, med, quart


def cluster_shares_of(sizes) -> np.ndarray:
    """The share of the clustered rows in each cluster: ``sizes`` (rows of each cluster,
    indexed by cluster) over their total (over 1 when there is none)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    return sizes / max(int(sizes.sum()), 1)


def with_sizes(profiles, sizes) -> pd.DataFrame:
    """``profiles`` (:func:`profile_clusters`) with the ``size`` and ``share`` of each
    cluster taken from ``sizes`` (rows of each cluster, indexed by cluster): on Dask the
    profiles come from a sample and the sizes are counted on every row."""
    prof = profiles.copy()
    if not prof.empty:
        sizes = np.asarray(sizes, dtype=np.int64)
        share = cluster_shares_of(sizes)
        prof["size"] = [int(sizes[c]) for c in prof["cluster"]]
        prof["share"] = [float(share[c]) for c in prof["cluster"]]
    return prof


def profile_clusters(df, labels, *, backend=None) -> pd.DataFrame:
    """One row per cluster: size, share, medians, dominant accelerators and a short label.

    The label reads like "4-16 x H100-SXM5-80GB, high efficiency": the interquartile range
    of the accelerator count, the model, family or generation that is a majority of the
    cluster (or "mixed accelerators", see :mod:`.profiles_text`), the median scaling
    efficiency, and "fastest" for the cluster with the shortest median time to train.

    Computed where the frame lives (grouped aggregations of cuDF on the GPU), so that only
    per-cluster summaries cross to the host: medians skipping missing values, linear
    25th/75th percentiles of the accelerator count, and accelerator shares ordered as
    ``value_counts`` orders them (by count, ties by first appearance in the cluster).

    Parameters
    ----------
    df : DataFrame
        The backend's frame (cuDF or pandas).
    labels : ndarray of int32, shape (n,)
        Stable cluster labels (host), -1 for rows without cluster features.
    backend : Backend, optional
        The CPU backend when omitted.

    Returns
    -------
    DataFrame
    """
    if backend is None:
        backend = resolve_backend("cpu")
    xp = backend.xp
    lab = xp.asarray(np.asarray(labels, dtype=np.int32))
    numeric = [c for c in PROFILE_COLUMNS if c in df.columns]
    quartile = "n_accelerators" if "n_accelerators" in numeric else None
    size, med, quart = _cluster_medians(df, lab, numeric, backend, quartile=quartile)
    shares = {col: cluster_shares(df, lab, col, backend) for col in COMPOSITION_COLUMNS
              if col in df.columns}
    clusters = sorted(int(v) for v in size.index)
    sizes = np.zeros(clusters[-1] + 1 if clusters else 0, dtype=np.int64)
    for c in clusters:
        sizes[c] = int(size.loc[c])
    share = cluster_shares_of(sizes)
    rows = []
    for c in clusters:
        row = {"cluster": c, "size": int(sizes[c]), "share": float(share[c])}
        for col in numeric:
            row[f"median_{col}"] = float(med.loc[c, col])
        row[SHARES_KEY] = {col: by[c] for col, by in shares.items() if c in by}
        if "accelerator" in df.columns:
            acc = shares.get("accelerator", {})
            row["accelerators"] = _accelerator_text(acc[c]) if c in acc else ""
        if quart is not None:
            row["n_accelerators_range"] = _range_text(quart[0].loc[c], quart[1].loc[c])
        rows.append(row)
    return _profile_frame(rows)


