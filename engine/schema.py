"""The configuration table: canonical column names, their units, and validation.

A configuration table has one row per training configuration. The canonical columns below
carry units in their names; a table may hold any other columns too, and they travel through
the analysis untouched. Every check raises with one message template that names the column,
the offending value and what is allowed.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .errors import DataError, SchemaError

__all__ = [
    "Column",
    "CANONICAL_COLUMNS",
    "CONFIG_FEATURES",
    "require_columns",
    "closest_names",
    "nearest_names",
    "shown_names",
    "text_from_bytes",
    "check_column_names",
    "numeric_values",
    "invalid_rows",
    "SIMULATED_COLUMNS",
]

#: The columns of a simulated sweep, in order: ``gpurank simulate``'s output, and the header
#: by which a CSV is recognized as one (``outputs.py``).
SIMULATED_COLUMNS = (
    "accelerator", "accelerator_id", "family", "generation", "release_year", "n_accelerators",
    "n_nodes", "accelerators_per_node", "host_cpu", "cpu_cores_per_accelerator", "interconnect",
    "network", "framework", "input_pipeline", "provider", "provider_type",
    "price_per_accelerator_hour", "global_batch_size", "local_batch_size", "epochs",
    "time_to_train_min", "time_to_train_min_lo", "time_to_train_min_hi", "throughput",
    "utilization", "mfu", "bottleneck", "prediction_basis", "prediction_note", "power_w",
    "cost_usd", "energy_kwh",
)


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
    "criterion column 'thruput' is not in the table; the closest of its 40 columns:
    throughput, ...".
    """
    have = list(df.columns)
    for col in columns:
        if col not in have:
            raise SchemaError(f"{role} column '{col}' is not in the table; "
                              f"{closest_names(col, have)}")


#: Characters of a name compared and shown (a hostile table can hold names of any length).
_NAME_CHARS = 60


def nearest_names(name, names, *, n: int = 3) -> list[str]:
    """The ``n`` of ``names`` most like ``name``, most alike first (all of them, in their
    order, when there are no more than ``n``), shortened for a message.

    Similarity is :func:`difflib.get_close_matches`'s, case-insensitive; names that differ
    only in case count once.
    """
    shown = {}
    for v in names:
        text = str(v)
        text = text if len(text) <= _NAME_CHARS else text[:_NAME_CHARS - 3] + "..."
        shown.setdefault(text.lower(), text)
    if len(shown) <= n:
        return list(shown.values())
    near = difflib.get_close_matches(str(name)[:_NAME_CHARS].lower(), list(shown), n=n,
                                     cutoff=0.0)
    return [shown[m] for m in near]


def shown_names(name, names, *, none: str = "none") -> str:
    """The values to list after "the table has: " for an unmatched ``name``: all of them
    when there are three or fewer, else the three closest and how many there are
    ("gpu-7, gpu-17, gpu-27 (the closest of 30)"); ``none`` when there are none."""
    names = list(names)
    near = nearest_names(name, names)
    more = f" (the closest of {len(names)})" if len(names) > len(near) else ""
    return f"{', '.join(near) or none}{more}"


def closest_names(name, names, *, n: int = 3, what: str = "columns") -> str:
    """The end of a message about an unknown ``name``: "the closest of its 40 columns: a,
    b, c" (:func:`nearest_names`), or "its columns: a, b" when there are no more than ``n``;
    a message never lists a whole wide table.

    Examples
    --------
    >>> closest_names("thruput", ["cost_usd", "throughput", "time", "throughput_total"])
    'the closest of its 4 columns: throughput, throughput_total, cost_usd'
    >>> closest_names("x", ["a", "b"])
    'its columns: a, b'
    >>> closest_names("x", [])
    'it has no columns'
    """
    names = list(names)
    near = nearest_names(name, names, n=n)
    if not near:
        return f"it has no {what}"
    total = len({str(v).lower() for v in names})
    if total <= n:
        return f"its {what}: {', '.join(near)}"
    return f"the closest of its {total} {what}: {', '.join(near)}"


def check_column_names(df) -> None:
    """Refuse a table whose column names are not text or not unique: its columns cannot be
    told apart (``df[name]`` would be several columns)."""
    names = list(df.columns)
    for i, c in enumerate(names):
        if not isinstance(c, str):
            raise DataError(f"column {i} of the table is named {c!r}; column names must be "
                            "text")
    if len(set(names)) < len(names):
        seen = set()
        dup = next(c for c in names if c in seen or seen.add(c))
        raise DataError(f"column '{dup}' appears {names.count(dup)} times in the table; "
                        "column names must be unique")


def text_from_bytes(df: pd.DataFrame, *, where: str) -> pd.DataFrame:
    """``df`` with its columns of raw bytes as text: a Parquet column of binary type (or a
    CSV cell that is not UTF-8, which the CSV reader keeps as bytes) holds ``bytes``, which
    nothing downstream can compare or print. UTF-8 bytes are decoded; other bytes are
    refused, naming the column, the row and the bytes. Only pandas columns of Python
    objects can hold bytes; the others are not looked at.

    Raises
    ------
    DataError
        "{where} is not UTF-8 text: column 'provider' row 3 holds the bytes b'\\xff\\xfe'".
    """
    for col in df.columns:
        s = df[col]
        if not isinstance(s, pd.Series) or s.dtype != object:
            continue
        if pd.api.types.infer_dtype(s, skipna=True) not in ("bytes", "mixed"):
            continue
        is_bytes = s.map(lambda v: isinstance(v, (bytes, bytearray))).to_numpy(dtype=bool)
        if not is_bytes.any():
            continue
        text = s.to_numpy(dtype=object).copy()
        for i in np.flatnonzero(is_bytes):
            try:
                text[i] = bytes(text[i]).decode("utf-8")
            except UnicodeDecodeError:
                raise DataError(f"{where} is not UTF-8 text: column '{col}' row {i} holds the "
                                f"bytes {bytes(text[i])[:20]!r}; store text as UTF-8") from None
        df = df.assign(**{col: pd.Series(text, index=s.index, dtype=object)})
    return df


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
