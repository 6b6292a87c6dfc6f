"""The configuration table: canonical column names, their units, and validation.

A configuration table has one row per training configuration. The canonical columns below
carry units in their names; a table may hold any other columns too, and they travel through
the analysis untouched. Every check raises with one message template that names the column,
the offending value and what is allowed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .errors import DataError, SchemaError

__all__ = [
    "Column",
    "CANONICAL_COLUMNS",
    "CONFIG_FEATURES",
    "require_columns",
    "numeric_values",
    "invalid_rows",
]


@dataclass(frozen=True)
class Column:
    """One canonical column: its name, kind and meaning."""

    name: str
    kind: str  # "str" | "int" | "float"
    unit: str
    description: str


CANONICAL_COLUMNS: dict[str, Column] = {
    c.name: c
    for c in [
        Column("accelerator", "str", "", "accelerator model, e.g. H100-SXM5-80GB"),
        Column("n_accelerators", "int", "count", "accelerators in the whole system"),
        Column("n_nodes", "int", "count", "host nodes"),
        Column("accelerators_per_node", "int", "count", "accelerators in one node"),
        Column("host_cpu", "str", "", "host processor model"),
        Column("cpu_cores_per_accelerator", "float", "cores", "host CPU cores per accelerator"),
        Column("interconnect", "str", "", "intra-node accelerator link (NVLink, PCIe, ...)"),
        Column("network", "str", "", "inter-node network (InfiniBand, RoCE, Ethernet, ...)"),
        Column("framework", "str", "", "training framework"),
        Column("global_batch_size", "int", "samples", "samples per optimizer step, all accelerators"),
        Column("epochs", "float", "epochs", "epochs to reach the target quality"),
        Column("time_to_train_min", "float", "min", "wall-clock time to train"),
        Column("throughput", "float", "samples/s", "end-to-end training throughput"),
        Column("price_per_accelerator_hour", "float", "USD/h", "price of one accelerator-hour"),
        Column("power_w", "float", "W", "power drawn per accelerator"),
    ]
}

#: Configuration variables (the inputs a buyer chooses) used as random-forest features when
#: present. Outcomes such as time or throughput are never features.
CONFIG_FEATURES = (
    "accelerator",
    "n_accelerators",
    "n_nodes",
    "accelerators_per_node",
    "host_cpu",
    "cpu_cores_per_accelerator",
    "interconnect",
    "network",
    "framework",
    "global_batch_size",
)


def require_columns(df, columns, *, role) -> None:
    """Raise :class:`SchemaError` naming the first of ``columns`` missing from ``df``.

    ``role`` says what the column is for ("criterion", "target", ...), so the message reads
    "criterion column 'thruput' is not in the table; columns are: ...".
    """
    have = list(df.columns)
    for col in columns:
        if col not in have:
            shown = ", ".join(map(str, have[:30])) + (", ..." if len(have) > 30 else "")
            raise SchemaError(f"{role} column '{col}' is not in the table; columns are: {shown}")


def numeric_values(df, column, *, role) -> np.ndarray:
    """Return ``df[column]`` as float64 NumPy values, or raise naming the first bad value.

    Missing values become NaN; a value that is present but not a number is an error.
    """
    s = df[column]
    if isinstance(s, pd.Series) and not (
        pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)
    ):
        converted = pd.to_numeric(s, errors="coerce")
        bad = converted.isna() & s.notna()
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise DataError(
                f"{role} column '{column}' must be numeric; row {i} holds {s.iloc[i]!r}"
            )
        s = converted
    return np.asarray(s.to_numpy(dtype="float64", na_value=np.nan), dtype=np.float64)


def invalid_rows(values):
    """Boolean mask of rows holding NaN or an infinity in any column of ``values``.

    Works on NumPy and CuPy arrays alike (the array's own ``isfinite`` ufunc is used).
    """
    finite = values == values  # NaN is the only value unequal to itself
    finite &= abs(values) != float("inf")
    if values.ndim == 1:
        return ~finite
    return ~finite.all(axis=1)
