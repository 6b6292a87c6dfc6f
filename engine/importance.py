"""Step 1, evaluate: which configuration variables drive a performance target.

A random forest is fitted on the configuration variables (categoricals ordinal-encoded, one
feature per variable so each variable gets one importance) and two importances are reported
side by side:

- impurity importance (mean decrease in impurity), cheap but biased toward variables with
  many distinct values;
- permutation importance on held-out rows: the drop in R^2 when one variable is shuffled,
  the one to trust when the two disagree.

Large tables are fitted on a seeded sample, and the result says so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .errors import DataError
from .magnitudes import column_scales
from .results import ImportanceResult
from .schema import CONFIG_FEATURES, require_columns

__all__ = ["feature_importance", "default_features", "encode_features", "permutation_importance"]

#: Hardware facts joined from the catalog, and the input pipeline (CPU or GPU decoding), that
#: also describe a configuration.
_OPTIONAL_FEATURES = ("generation", "release_year", "input_pipeline")

HOLDOUT_FRACTION = 0.25
PERMUTATION_REPEATS = 5
#: Rows per forest call of the permutation importance (shuffled copies stacked up to it).
PERMUTATION_BATCH_ROWS = 1 << 18
MAX_DEPTH = 16
MIN_ROWS = 10


def default_features(df, *, target) -> tuple[str, ...]:
    """Configuration variables present in ``df`` (never the target)."""
    cols = set(df.columns)
    return tuple(c for c in CONFIG_FEATURES + _OPTIONAL_FEATURES if c in cols and c != target)


def _is_text(dtype) -> bool:
    kind = getattr(dtype, "kind", "O")
    return kind in "OUS" or str(dtype) in ("category", "string", "str") or isinstance(
        dtype, pd.CategoricalDtype) or pd.api.types.is_string_dtype(dtype)


def encode_features(df, features, *, backend):
    """Encode ``features`` of ``df`` as a float32 matrix of the backend, one column each.

    Strings and categoricals become sorted ordinal codes (a tree splits them as well as it
    splits one-hot columns, and the variable keeps a single importance). Missing numeric
    values are filled with the column median. Constant features are dropped.

    Returns
    -------
    X : array of float32, shape (n, k)
    kept : list of str
        The features kept, in column order.
    """
    xp = backend.xp
    cols, kept = [], []
    for f in features:
        s = df[f]
        if _is_text(s.dtype):
            v = backend.codes(s).astype(xp.float32)
        else:
            v = backend.values(df, f, role="feature")
            missing = xp.isnan(v)
            if bool(missing.any()):
                med = float(xp.nanmedian(v)) if not bool(missing.all()) else 0.0
                v = xp.where(missing, med, v)
            v = _to_float32(v, xp)
        if v.size and bool((v == v[0]).all()):
            continue
        cols.append(v)
        kept.append(f)
    if not cols:
        return xp.empty((len(df), 0), dtype=xp.float32), kept
    return xp.ascontiguousarray(xp.stack(cols, axis=1)), kept


#: Columns whose largest magnitude is outside this range would overflow or underflow as
#: float32, which the forests are fitted in (cuML requires it).
_FLOAT32_SAFE = (1e-30, 1e30)


def _to_float32(v, xp):
    """``v`` as float32. A column whose magnitudes would overflow or underflow float32 is
    first scaled by a power of two (exact) to magnitudes below one: trees split on order and
    R^2 is scale-free, so the importances do not change."""
    if v.size:
        scales = column_scales([float(xp.max(xp.abs(v)))], low=_FLOAT32_SAFE[0],
                               high=_FLOAT32_SAFE[1])
        if scales:
            v = v * scales[0]
    return v.astype(xp.float32)


def _r2(xp, y, pred) -> float:
    y = y.astype(xp.float64)
    pred = xp.asarray(pred).astype(xp.float64)
    ss_res = float(xp.sum((y - pred) ** 2))
    ss_tot = float(xp.sum((y - y.mean()) ** 2))
    return 1.0 - ss_res / ss_tot if ss_tot > 0 else 0.0


def permutation_importance(model, X, y, *, xp=np, repeats=PERMUTATION_REPEATS, seed=0,
                           max_rows=PERMUTATION_BATCH_ROWS):
    """Mean and standard deviation of the R^2 drop when each column of ``X`` is shuffled.

    Written against the array module ``xp`` so the same code runs on NumPy or CuPy arrays.
    The shuffled copies are stacked and predicted in batches of at most ``max_rows`` rows
    (one call per copy costs the forest's thread start-up 1 + k x repeats times: 7.4 s of
    the 11.6 s importance step at 20,000 rows, measured); the draws are the same, column by
    column and repeat by repeat, whatever the batch size.
    """
    rng = np.random.default_rng(seed)
    n, k = X.shape
    perms = [(j, xp.asarray(rng.permutation(n))) for j in range(k) for _ in range(repeats)]
    preds = []
    per_call = max(1, max_rows // max(n, 1))
    for s in range(0, len(perms), per_call):
        chunk = perms[s:s + per_call]
        Xb = xp.concatenate([X] * len(chunk))
        for t, (j, perm) in enumerate(chunk):
            Xb[t * n:(t + 1) * n, j] = X[perm, j]
        preds.append(xp.asarray(model.predict(Xb)).reshape(len(chunk), n))
    base = _r2(xp, y, model.predict(X))
    drops = np.array([base - _r2(xp, y, batch[t]) for batch in preds
                      for t in range(batch.shape[0])]).reshape(k, repeats)
    return drops.mean(axis=1), drops.std(axis=1)


def _target_and_features(df, target, backend, features):
    """The target's values (in the backend's memory) and the features, both checked."""
    require_columns(df, [target], role="target")
    # The target stays in the backend's memory: only counts, one value for a message and
    # the host-drawn sample positions cross (the same draws as sampling the row ids).
    y_all = backend.values(df, target, role="target")
    features = tuple(features) if features is not None else default_features(df, target=target)
    require_columns(df, features, role="feature")
    if target in features:
        raise DataError(f"target column '{target}' is also listed as a feature; remove it")
    return y_all, features


def _finite_rows(y_all, target: str, n_rows: int, xp, notes: list):
    """Positions of the rows with a finite target; an error when too few, or constant."""
    ok = xp.flatnonzero(xp.isfinite(y_all))
    n_ok = int(ok.size)
    if n_ok < n_rows:
        notes.append(f"{n_rows - n_ok} rows without a finite '{target}' were left out")
    if n_ok < MIN_ROWS:
        raise DataError(
            f"target column '{target}' has {n_ok} finite values; importance needs at "
            f"least {MIN_ROWS}"
        )
    y_ok = y_all[ok]
    if bool((y_ok == y_ok[0]).all()):
        raise DataError(
            f"target column '{target}' is constant (every value is {float(y_ok[0]):g}); "
            "importance needs a target that varies"
        )
    return ok


def _sample(ok, sample_rows: int, rng, xp, notes: list):
    """The rows the forest sees: all of ``ok``, or a seeded sample of ``sample_rows``."""
    n_ok = int(ok.size)
    sampled = n_ok > sample_rows
    # ok is increasing, so sorted positions give the sorted row ids that
    # np.sort(rng.choice(ok, ...)) would (Generator.choice draws positions either way).
    rows = ok[xp.asarray(np.sort(rng.choice(n_ok, size=sample_rows, replace=False)))] \
        if sampled else ok
    if sampled:
        notes.append(f"forest fitted on a seeded sample of {sample_rows:,} of {n_ok:,} rows")
    return rows, sampled


def _encoded(df, rows, features, backend, notes: list):
    """The sampled rows' feature matrix and the features kept (the varying ones)."""
    sub = df.iloc[rows]
    X, kept = encode_features(sub, features, backend=backend)
    dropped = [f for f in features if f not in kept]
    if dropped:
        notes.append(f"constant features left out: {', '.join(dropped)}")
    if not kept:
        raise DataError(
            f"no feature varies in this table (tried: {', '.join(features)}); importance "
            "needs at least one varying configuration variable"
        )
    return X, kept


@dataclass(frozen=True)
class _Holdout:
    """The training and held-out rows of the feature matrix and the target."""

    X_train: object
    y_train: object
    X_test: object
    y_test: object


def _holdout(X, y, n: int, rng, xp) -> _Holdout:
    """A seeded split: ``HOLDOUT_FRACTION`` of the rows (at least one) held out."""
    order = rng.permutation(n)
    n_test = max(1, int(round(n * HOLDOUT_FRACTION)))
    test, train = xp.asarray(order[:n_test]), xp.asarray(order[n_test:])
    return _Holdout(X[train], y[train], xp.ascontiguousarray(X[test]), y[test])


def _fitted_forest(backend, split: _Holdout, *, n_estimators: int, seed: int):
    """The backend's random forest fitted on the training rows."""
    model = backend.random_forest(
        n_estimators=n_estimators,
        max_depth=MAX_DEPTH,
        max_features=1.0,
        min_samples_leaf=1,
        bootstrap=True,
        random_state=seed,
        n_jobs=-1,
    )
    model.fit(split.X_train, split.y_train)
    return model


def _impurity(model, backend, n_kept: int, notes: list) -> np.ndarray:
    """The forest's impurity importances on the host (NaN where the library has none)."""
    raw_impurity = getattr(model, "feature_importances_", None)
    if raw_impurity is None:
        # cuML's random forest has impurity importances from 25.12 on; with an older cuML
        # the permutation importance (computed here, on any backend) is the one reported.
        notes.append("impurity importance not available: this cuML's random forest has no "
                     "feature_importances_ (cuML >= 25.12 has); permutation importance only")
        return np.full(n_kept, np.nan)
    return np.asarray(backend.to_host(raw_impurity), dtype=np.float64)


def feature_importance(df, *, target, backend, features=None, sample_rows=20_000, seed=0,
                       n_estimators=100) -> ImportanceResult:
    """Random-forest importance of configuration variables for ``target``.

    Parameters
    ----------
    df : DataFrame
        The configuration table (derived metrics included).
    target : str
        Numeric column to explain.
    backend : Backend
    features : sequence of str, optional
        Variables to measure; the configuration variables present when omitted.
    sample_rows : int
        Rows to fit on at most; a seeded sample of larger tables.
    seed : int
    n_estimators : int

    Returns
    -------
    ImportanceResult
    """
    xp = backend.xp
    y_all, features = _target_and_features(df, target, backend, features)
    notes: list[str] = []
    ok = _finite_rows(y_all, target, len(df), xp, notes)
    # one generator for the sample and then the split, so both follow from ``seed``
    rng = np.random.default_rng(seed)
    rows, sampled = _sample(ok, sample_rows, rng, xp, notes)
    X, kept = _encoded(df, rows, features, backend, notes)
    y = _to_float32(y_all[rows], xp)
    split = _holdout(X, y, rows.size, rng, xp)
    model = _fitted_forest(backend, split, n_estimators=n_estimators, seed=seed)
    impurity = _impurity(model, backend, len(kept), notes)
    perm_mean, perm_std = permutation_importance(
        model, split.X_test, split.y_test, xp=xp, seed=seed
    )
    r2 = _r2(xp, split.y_test, model.predict(split.X_test))

    table = pd.DataFrame(
        {
            "feature": kept,
            "impurity": impurity,
            "permutation": perm_mean,
            "permutation_std": perm_std,
        }
    )
    table = table.sort_values(["permutation", "impurity"], ascending=False, kind="stable")
    return ImportanceResult(
        table=table.reset_index(drop=True),
        target=target,
        n_rows=int(rows.size),
        sampled=bool(sampled),
        holdout_r2=float(r2),
        note="; ".join(notes),
    )
