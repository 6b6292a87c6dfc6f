"""Derived metrics, written once as column arithmetic that pandas and cuDF both run.

Definitions (N accelerators, T time to train):

- accelerator-hours  = N x T / 60
- per-accelerator throughput = throughput / N
- speedup S = T_ref / T, against a reference configuration of the same accelerator model
- scaling efficiency E = S / (N / N_ref); 1.0 is linear scaling
- cost = accelerator-hours x price per accelerator-hour
- energy = N x power x T, in kWh

Rows with zero accelerators (CPU-only systems in real data) get NaN for per-accelerator
figures rather than an infinity.
"""

from __future__ import annotations

import pandas as pd

from .errors import DataError
from .masks import definite
from .schema import require_columns

__all__ = [
    "accelerator_hours",
    "throughput_per_accelerator",
    "reference_time",
    "reference_table",
    "merge_reference_tables",
    "speedup",
    "scaling_efficiency",
    "cost_usd",
    "energy_kwh",
    "derive_metrics",
    "plan_metrics",
    "DERIVED_COLUMNS",
    "METRIC_INPUTS",
]

DERIVED_COLUMNS = (
    "accelerator_hours",
    "throughput_per_accelerator",
    "speedup",
    "scaling_efficiency",
    "cost_usd",
    "energy_kwh",
)


def _accelerators(df):
    # Zero accelerators would divide by zero; NaN keeps such rows visible but unranked.
    n = df["n_accelerators"].astype("float64")
    return n.where(definite(n > 0))


def accelerator_hours(df):
    """Accelerator-hours of one training run: ``n_accelerators * time_to_train_min / 60``."""
    require_columns(df, ["n_accelerators", "time_to_train_min"], role="metric input")
    return _accelerators(df) * df["time_to_train_min"].astype("float64") / 60.0


def throughput_per_accelerator(df):
    """Samples per second per accelerator: ``throughput / n_accelerators``."""
    require_columns(df, ["n_accelerators", "throughput"], role="metric input")
    return df["throughput"].astype("float64") / _accelerators(df)


def _reference_rows(df):
    """Rows that can be a reference configuration: a positive accelerator count and a
    positive, finite time to train. A row with a missing or bad time is never a reference,
    so one bad row cannot take every row of its model down with it."""
    n = _accelerators(df)
    t = df["time_to_train_min"].astype("float64")
    return n.notna() & t.notna() & definite((t > 0) & (t < float("inf")))


def reference_time(df, *, by="accelerator"):
    """Reference time to train and accelerator count of each row's group.

    The reference of a group (by default, one accelerator model) is its configuration with the
    fewest accelerators among the rows with a valid time; when several share that count, the
    fastest of them, so efficiency is measured against the best small system rather than an
    unlucky one.

    Returns
    -------
    (t_ref, n_ref) : two Series aligned with ``df``.
    """
    require_columns(df, [by, "n_accelerators", "time_to_train_min"], role="metric input")
    ok = _reference_rows(df)
    n = _accelerators(df).where(ok)
    t = df["time_to_train_min"].astype("float64").where(ok)
    key = df[by]
    n_min = n.groupby(key, sort=False).transform("min")
    at_min = t.where(definite(n == n_min))
    t_ref = at_min.groupby(key, sort=False).transform("min")
    return t_ref, n_min


def reference_table(df, *, by="accelerator"):
    """The reference of each group as a table: index ``by``, columns ``t_ref`` and ``n_ref``.

    The same references as :func:`reference_time`, in a form that can be computed once over
    a whole dataset (e.g. reduced across Dask partitions with :func:`merge_reference_tables`)
    and passed to :func:`derive_metrics` for each part.
    """
    require_columns(df, [by, "n_accelerators", "time_to_train_min"], role="metric input")
    ok = _reference_rows(df)
    n = _accelerators(df).where(ok)
    key = df[by]
    n_min = n.groupby(key, sort=True).min()
    at_min = df["time_to_train_min"].astype("float64").where(ok & definite(n == key.map(n_min)))
    t_min = at_min.groupby(key, sort=True).min()
    return t_min.to_frame("t_ref").assign(n_ref=n_min)


def merge_reference_tables(tables):
    """Combine per-part reference tables into the reference of the whole dataset."""
    both = pd.concat(list(tables))
    n_ref = both.groupby(level=0)["n_ref"].min()
    at_min = both[both["n_ref"] == both.index.map(n_ref)]
    t_ref = at_min.groupby(level=0)["t_ref"].min()
    return t_ref.to_frame("t_ref").assign(n_ref=n_ref).sort_index()


def speedup(df, *, by="accelerator"):
    """Speedup ``T_ref / T`` against the reference configuration of the row's group."""
    t_ref, _ = reference_time(df, by=by)
    return t_ref / df["time_to_train_min"].astype("float64")


def scaling_efficiency(df, *, by="accelerator"):
    """Scaling efficiency ``speedup / (N / N_ref)``; 1.0 is linear scaling."""
    t_ref, n_ref = reference_time(df, by=by)
    s = t_ref / df["time_to_train_min"].astype("float64")
    return s / (_accelerators(df) / n_ref)


def cost_usd(df):
    """Cost of one converged run: accelerator-hours x ``price_per_accelerator_hour``."""
    require_columns(df, ["price_per_accelerator_hour"], role="metric input")
    return accelerator_hours(df) * df["price_per_accelerator_hour"].astype("float64")


def energy_kwh(df):
    """Energy of one run in kWh: ``n_accelerators * power_w * time`` (accelerators only)."""
    require_columns(df, ["power_w"], role="metric input")
    hours = df["time_to_train_min"].astype("float64") / 60.0
    return _accelerators(df) * df["power_w"].astype("float64") * hours / 1000.0


#: The inputs of each derived metric (besides ``by`` for speedup and efficiency).
METRIC_INPUTS = {
    "accelerator_hours": ("n_accelerators", "time_to_train_min"),
    "throughput_per_accelerator": ("throughput", "n_accelerators"),
    "speedup": ("accelerator", "n_accelerators", "time_to_train_min"),
    "scaling_efficiency": ("accelerator", "n_accelerators", "time_to_train_min"),
    "cost_usd": ("price_per_accelerator_hour", "n_accelerators", "time_to_train_min"),
    "energy_kwh": ("power_w", "n_accelerators", "time_to_train_min"),
}
#: Metrics a table may bring itself (a simulator's cost and energy are kept as they are).
KEPT_WHEN_PRESENT = ("cost_usd", "energy_kwh")


def plan_metrics(columns, *, by="accelerator") -> tuple[tuple[str, ...], dict]:
    """Which derived metrics a table with ``columns`` gets, and why the others are skipped.

    Returns
    -------
    derived : tuple of str
        Metrics that will be computed, in :data:`DERIVED_COLUMNS` order.
    skipped : dict
        ``{metric: reason}`` for the others, e.g. ``"needs throughput"`` or ``"the table has
        its own cost_usd"``.
    """
    cols = set(columns)
    derived, skipped = [], {}
    for metric in DERIVED_COLUMNS:
        need = tuple(by if c == "accelerator" else c for c in METRIC_INPUTS[metric])
        if metric in KEPT_WHEN_PRESENT and metric in cols:
            skipped[metric] = f"the table has its own {metric}"
            continue
        missing = [c for c in need if c not in cols]
        if missing:
            skipped[metric] = f"needs {', '.join(missing)}"
        else:
            derived.append(metric)
    return tuple(derived), skipped


def derive_metrics(df, *, by="accelerator", reference=None):
    """Return a copy of ``df`` with every derived metric its columns allow.

    Each metric is computed when its inputs are in the table (see :func:`plan_metrics`) and
    skipped otherwise; ``reference`` (a :func:`reference_table`) fixes the reference
    configurations of speedup and efficiency, found in ``df`` itself by default. A table
    that already holds ``cost_usd`` or ``energy_kwh`` (a simulator output) keeps its own.

    Raises
    ------
    DataError
        A metric input is not numeric.
    """
    derived, _ = plan_metrics(df.columns, by=by)
    inputs = sorted({c for m in derived for c in METRIC_INPUTS[m] if c != "accelerator"})
    for col in inputs:
        if not _is_numeric(df[col]):
            raise DataError(f"column '{col}' must be numeric; it has dtype {df[col].dtype}"
                            + _first_non_number(df[col]))
    # A shallow copy: every metric is a whole new column, which replaces the column of
    # ``out`` only (pandas and cuDF insert a new array on ``out[name] = ...``), so ``df``
    # stays as it was without its 10M rows being copied (2 s of the derive step).
    out = df.copy(deep=False)
    if "accelerator_hours" in derived:
        out["accelerator_hours"] = accelerator_hours(df)
    if "throughput_per_accelerator" in derived:
        out["throughput_per_accelerator"] = throughput_per_accelerator(df)
    if "speedup" in derived:
        if reference is None:
            t_ref, n_ref = reference_time(df, by=by)
        else:
            # A dict, not a pandas Series: cuDF's Series.map takes a dict or a cuDF Series.
            t_ref = df[by].map(reference["t_ref"].to_dict()).astype("float64")
            n_ref = df[by].map(reference["n_ref"].to_dict()).astype("float64")
        s = t_ref / df["time_to_train_min"].astype("float64")
        out["speedup"] = s
        out["scaling_efficiency"] = s / (_accelerators(df) / n_ref)
    if "cost_usd" in derived:
        out["cost_usd"] = cost_usd(df)
    if "energy_kwh" in derived:
        out["energy_kwh"] = energy_kwh(df)
    return out


def _first_non_number(s) -> str:
    """`` (row 3 holds 'fast')`` for the first value that is not a number, or ``""``."""
    host = s.to_pandas() if hasattr(s, "to_pandas") else s
    bad = pd.to_numeric(host, errors="coerce").isna() & host.notna()
    if not bool(bad.any()):
        return ""
    i = int(bad.to_numpy().argmax())
    return f" (row {i} holds {host.iloc[i]!r})"


def _is_numeric(s) -> bool:
    kind = getattr(s.dtype, "kind", "O")
    return kind in "iuf" or str(s.dtype) in ("Int64", "Int32", "Float64", "Float32")
