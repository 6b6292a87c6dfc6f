"""The files of a partitioned Parquet dataset, and the check that they agree.

A folder of Parquet files is read as one table (in memory by pyarrow, on Dask one
partition per file). Readers take the columns of one file for all of them: a column only
some files have is silently dropped, one a file lacks fails on a worker with a ``KeyError``
deep in a task, and a column of text in one file and numbers in another is cast or fails
half-way. :func:`check_parts` reads every file's schema (its footer only, no data) before
any work and refuses a dataset whose parts differ from the first, in one line that says
which part and how.
"""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow.parquet as pq
import pyarrow.types as pt

from .errors import DataError
from .input_files import regular_file

__all__ = ["check_parts", "dataset_files"]

#: Columns pandas stores for a frame's index, which readers turn back into the index.
_INDEX_COLUMN = re.compile(r"__index_level_\d+__")
#: At most this many column names are listed per difference.
_SHOWN = 3


def dataset_files(folder) -> list[Path]:
    """The Parquet files of a dataset folder, in the readers' order (sorted paths), without
    the hidden and private ones (names starting with ``.`` or ``_`` at any level, such as
    ``_SUCCESS`` and staging folders) that the readers skip."""
    folder = Path(folder)
    try:
        found = sorted(p for p in folder.rglob("*.parquet")
                       if not any(part.startswith((".", "_"))
                                  for part in p.relative_to(folder).parts))
    except OSError as exc:
        raise DataError(f"cannot read table folder '{folder}': {exc.strerror or exc}") from None
    parts = []
    for p in found:
        if p.is_dir():
            continue  # a folder named like a part (hive-style): its files are found too
        # A FIFO or a device as a part would block or never end the read: refused here, in
        # memory as on Dask, never skipped without a word.
        regular_file(p, what=f"table folder '{folder}': part")
        parts.append(p)
    return parts


def _kind(arrow_type) -> str:
    """A column's type as a reader treats it: integers and floats are all numbers (a part
    with a missing value stores integers as floats); an all-missing column fits any kind."""
    t = arrow_type.value_type if pt.is_dictionary(arrow_type) else arrow_type
    for test, name in ((pt.is_null, "missing"), (pt.is_boolean, "booleans"),
                       (pt.is_integer, "numbers"), (pt.is_floating, "numbers"),
                       (pt.is_decimal, "numbers"), (pt.is_string, "text"),
                       (pt.is_large_string, "text"), (pt.is_temporal, "times"),
                       (pt.is_binary, "bytes"), (pt.is_large_binary, "bytes")):
        if test(t):
            return name
    return str(t)


def _columns(path: Path, folder: Path) -> dict:
    """{column: kind} of one part, from its footer; the pandas index columns left out."""
    try:
        schema = pq.read_schema(path)
    except Exception as exc:  # noqa: BLE001 - any parser failure is a data problem
        text = " ".join(str(exc).split())
        raise DataError(f"table folder '{folder}': cannot read part "
                        f"'{path.relative_to(folder)}': {type(exc).__name__}: "
                        f"{text[:200]}") from None
    index = set()
    meta = schema.pandas_metadata or {}
    for c in meta.get("index_columns", ()) if isinstance(meta, dict) else ():
        if isinstance(c, str):
            index.add(c)
    return {f.name: _kind(f.type) for f in schema
            if f.name not in index and not _INDEX_COLUMN.fullmatch(f.name)}


def _names(names) -> str:
    names = [str(n) for n in names]
    shown = ", ".join(f"'{n[:40]}'" for n in names[:_SHOWN])
    return shown + (f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else "")


def _difference(first: dict, cols: dict) -> str:
    """How a part's columns differ from the first part's ("" when they agree)."""
    parts = []
    missing = [c for c in first if c not in cols]
    extra = [c for c in cols if c not in first]
    if missing:
        parts.append(f"it lacks column{'s' if len(missing) > 1 else ''} {_names(missing)}")
    if extra:
        parts.append(f"it has extra column{'s' if len(extra) > 1 else ''} {_names(extra)}")
    clash = [c for c in first if c in cols and "missing" not in (first[c], cols[c])
             and first[c] != cols[c]]
    for c in clash[:_SHOWN]:
        parts.append(f"column '{str(c)[:40]}' holds {cols[c]}, not {first[c]}")
    if len(clash) > _SHOWN:
        parts.append(f"{len(clash) - _SHOWN} more columns have other types")
    return "; ".join(parts)


def check_parts(folder) -> list[Path]:
    """Check that every Parquet file of the dataset ``folder`` has the columns and column
    types of the first; return the files.

    Column types are compared as readers use them: numbers (integer or floating), text,
    booleans, times, bytes; a column with no value at all in a part fits any type.

    Raises
    ------
    DataError
        A part cannot be read, or differs from the first: the message names both parts and
        the columns it lacks, the extra ones and those of another type.
    """
    folder = Path(folder)
    files = dataset_files(folder)
    if len(files) < 2:
        return files
    first = _columns(files[0], folder)
    differ = []
    for path in files[1:]:
        how = _difference(first, _columns(path, folder))
        if how:
            differ.append((path, how))
    if differ:
        path, how = differ[0]
        more = (f" ({len(differ) - 1} more part{'s' if len(differ) > 2 else ''} differ)"
                if len(differ) > 1 else "")
        raise DataError(f"table folder '{folder}': part '{path.relative_to(folder)}' does not "
                        f"match the first part '{files[0].relative_to(folder)}': {how}{more}; "
                        "every part needs the same columns and types")
    return files
