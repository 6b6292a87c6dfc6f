"""Reading configuration tables and writing results, atomically.

Readers go through pyarrow (Parquet: one file or a folder of files; CSV). Writers go through
:func:`gpurank.engine.outputs.publish_file`: a temporary file beside the target renamed into
place, so a failure never leaves a half-written output where a complete one is expected, and
an existing file is replaced only when gpurank wrote it (or ``overwrite=True``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .errors import DataError, UsageError
from .input_files import memory_bytes, regular_file
from .jsonable import to_jsonable
from .outputs import publish_file
from .partitions import check_parts
from .schema import check_column_names, text_from_bytes

__all__ = [
    "read_table",
    "short_message",
    "read_metadata",
    "write_table",
    "write_json",
    "write_text",
    "to_jsonable",
]

_PARQUET_SUFFIXES = {".parquet", ".pq", ".parq"}
_CSV_SUFFIXES = {".csv", ".tsv", ".txt"}


def read_table(path, *, backend=None) -> pd.DataFrame:
    """Read a configuration table from Parquet (a file or a folder of files) or CSV.

    Parameters
    ----------
    path : str or Path
        A ``.parquet`` file, a folder holding ``.parquet`` files (a partitioned dataset), or a
        ``.csv`` file (UTF-8).
    backend : Backend, optional
        Where the table should live; the CPU backend (pandas) when omitted.

    Raises
    ------
    DataError
        The path does not exist, is not a regular file or folder, has an unknown format,
        cannot be parsed, or a CSV is not UTF-8 text.
    """
    p = Path(path)
    if not p.exists():
        raise DataError(f"table file '{p}' does not exist")
    if not p.is_dir():
        regular_file(p, what="table file", limit=memory_bytes())
    xdf = backend.xdf if backend is not None else pd
    suffix = p.suffix.lower()
    try:
        if p.is_dir() or suffix in _PARQUET_SUFFIXES:
            if p.is_dir():
                _check_folder(p)
                _check_size(p, check_parts(p))
            table = xdf.read_parquet(p)
        elif suffix in _CSV_SUFFIXES:
            sep = "\t" if suffix == ".tsv" else ","
            table = (pd.read_csv(p, sep=sep, engine="pyarrow") if xdf is pd
                     else xdf.read_csv(p, sep=sep))
        else:
            table = None
    except DataError:
        raise
    except Exception as exc:  # noqa: BLE001 - any parser failure is a data problem for the user
        raise DataError(f"cannot read table '{p}': {type(exc).__name__}: "
                        f"{short_message(exc)}") from exc
    if table is None:
        raise DataError(f"table file '{p}' has unknown format '{p.suffix}'; allowed: .parquet, "
                        ".csv, or a folder of .parquet files")
    check_column_names(table)
    return text_from_bytes(table, where=f"table '{p}'") if xdf is pd else table


def short_message(exc, limit: int = 240) -> str:
    """An exception's text as one line of at most ``limit`` characters (a parser's message
    can be a multi-line schema dump)."""
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _check_folder(p: Path) -> None:
    try:
        found = any(f.is_file() for f in p.rglob("*.parquet"))
    except OSError as exc:
        raise DataError(f"cannot read table folder '{p}': {exc.strerror or exc}") from None
    if not found:
        if not os.access(p, os.R_OK | os.X_OK):
            raise DataError(f"cannot read table folder '{p}': permission denied")
        raise DataError(f"table folder '{p}' holds no .parquet files")


def _check_size(p: Path, parts) -> None:
    """A dataset read in memory must fit in it: its files' sizes against the machine's."""
    limit = memory_bytes()
    total = sum(f.stat().st_size for f in parts)
    if limit is not None and total > limit:
        raise DataError(f"table folder '{p}' has {total:,} bytes of parts, more than this "
                        f"machine's {limit:,} bytes of memory; read it with --dask")


#: Rows per Parquet row group (pyarrow's default), written one at a time.
ROW_GROUP = 1 << 20


def write_table(df, path, *, metadata=None, overwrite=False, name="path") -> Path:
    """Write ``df`` to Parquet atomically.

    Parameters
    ----------
    df : pandas.DataFrame
    path : str or Path
    metadata : dict, optional
        Stored as JSON under the ``gpurank`` key of the Parquet key-value metadata (which
        also marks the file as gpurank's, so a later run may replace it).
    overwrite : bool
        Replace an existing file that gpurank did not write.
    name : str
        The parameter that named ``path``, for messages.
    """
    if not isinstance(df, pd.DataFrame):
        raise UsageError(f"write_table expects a pandas DataFrame; got {type(df).__name__}")
    schema = pa.Schema.from_pandas(df, preserve_index=False)
    meta = dict(schema.metadata or {})
    meta[b"gpurank"] = json.dumps(metadata or {}, default=str).encode()
    schema = schema.with_metadata(meta)
    # Dictionary pages only where they pay: building one for a column of distinct floats
    # (measurements, scores) is wasted before the writer falls back to plain pages, 29% of
    # the write time of a simulated sweep for no smaller file (measured at 2M rows).
    dictionary = [f.name for f in schema if not pa.types.is_floating(f.type)]
    # One row group at a time: the Arrow copy of a slice, never of the whole table (10M
    # rows would be held twice at the peak of the analysis).
    with publish_file(path, name=name, overwrite=overwrite) as pub, \
            pq.ParquetWriter(pub.path, schema, use_dictionary=dictionary) as writer:
        for start in range(0, max(len(df), 1), ROW_GROUP):
            part = df.iloc[start : start + ROW_GROUP]
            writer.write_table(pa.Table.from_pandas(part, schema=schema, preserve_index=False),
                               row_group_size=ROW_GROUP)
    return Path(path)


def read_metadata(path) -> dict:
    """Return the ``gpurank`` metadata stored by :func:`write_table`, or an empty dict."""
    meta = pq.read_schema(path).metadata or {}
    raw = meta.get(b"gpurank")
    return json.loads(raw) if raw else {}


def write_json(obj, path, *, overwrite=False, name="path") -> Path:
    """Write ``obj`` as indented JSON atomically (see :func:`write_text`)."""
    text = json.dumps(to_jsonable(obj), indent=2, allow_nan=False)
    return write_text(text + "\n", path, overwrite=overwrite, name=name)


def write_text(text, path, *, overwrite=False, name="path") -> Path:
    """Write ``text`` (UTF-8) atomically; an existing file is replaced only when it carries
    gpurank's marker (see :func:`gpurank.engine.outputs.is_gpurank_output`) or
    ``overwrite=True``."""
    with publish_file(path, name=name, overwrite=overwrite) as pub:
        pub.path.write_text(text, encoding="utf-8")
    return Path(path)
