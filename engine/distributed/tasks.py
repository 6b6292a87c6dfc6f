"""What a Dask worker does with one partition: the pipeline's own steps, nothing else.

Every function here is module level (pickled by reference; workers need gpurank installed)
and takes a partition as the dataset reader gives it. The partition is conformed to the
dataset's columns first (as pyarrow reads a folder in memory: a column a file lacks is
missing, a column only some files have is dropped), then prepared by
:func:`gpurank.engine.prepare.prepare_rows`, exactly as the in-memory path prepares its
table. Results are host NumPy arrays and small summaries.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from gpurank.kernels import cpu

from ..backend import resolve_backend
from ..prepare import check_columns, input_reference, prepare_rows
from ..ranking import score_input

__all__ = [
    "cpu_backend",
    "conform",
    "scan_partition",
    "prepare_partition",
    "sample_rows",
    "write_partition",
    "below_count",
    "robust_columns",
]


@functools.cache
def cpu_backend():
    """The workers' backend (resolved once per worker process)."""
    return resolve_backend("cpu")


def conform(part, columns):
    """``part`` with exactly the dataset's ``columns``, in order (missing ones all NA)."""
    cols = list(part.columns)
    if cols == list(columns):
        return part
    return part.reindex(columns=list(columns))


def scan_partition(part, spec):
    """Pass 1: rows, column names and the reference configurations of one partition."""
    frame, _ = check_columns(part)
    return {"rows": len(part), "columns": tuple(part.columns),
            "reference": input_reference(frame, spec, backend=cpu_backend())}


def _prepared(part, columns, spec, criteria, reference, offset):
    return prepare_rows(conform(part, columns), spec, criteria, backend=cpu_backend(),
                        reference=reference, offset=offset)


def prepare_partition(part, columns, spec, criteria, reference, offset):
    """Pass 2: the partition's analyzed rows as their criteria matrix (host, C order), its
    :class:`~gpurank.engine.prepare.RowReport`, the TOPSIS column statistics of the matrix
    TOPSIS scores (mergeable across partitions) and the criteria's minimum and maximum."""
    p = _prepared(part, columns, spec, criteria, reference, offset)
    costs = np.ascontiguousarray(p.costs, dtype=np.float64)
    matrix, _ = score_input(costs, criteria, spec.norm, backend=cpu_backend())
    stats = cpu.topsis_stats(matrix)
    cost = stats if matrix is costs else cpu.topsis_stats(costs)
    return costs, {"report": p.report, "stats": (stats, cost.lo, cost.hi),
                   "columns": tuple(p.frame.columns)}


def sample_rows(part, columns, spec, criteria, reference, offset, positions):
    """The analyzed rows at ``positions`` (among this partition's analyzed rows), on the host."""
    if len(positions) == 0:
        return None
    p = _prepared(part, columns, spec, criteria, reference, offset)
    return p.frame.iloc[np.asarray(positions)]


def write_partition(part, columns, spec, criteria, reference, offset, first, results,
                    model, folder, index, metadata, keep=()):
    """Last pass: the partition's analyzed rows with their result columns, written as
    ``folder/part-NNNNN.parquet``. Returns the cluster sizes, the rows ranked within
    ``spec.top`` and the rows whose row id is in ``keep`` (the robust ranking's top)."""
    out = _prepared(part, columns, spec, criteria, reference, offset).frame.copy()
    n = len(out)
    labels = (model.predict(out, backend=cpu_backend()) if model is not None and n
              else np.full(n, -1, dtype=np.int32))
    out["cluster"] = labels
    for name, values in results.items():
        out[name] = values
    out["row_id"] = np.arange(n, dtype=np.int64) + first
    table = pa.Table.from_pandas(out, preserve_index=False)
    meta = dict(table.schema.metadata or {})
    meta[b"gpurank"] = json.dumps(metadata, default=str).encode()
    pq.write_table(table.replace_schema_metadata(meta), Path(folder) / f"part-{index:05d}.parquet")
    sizes = np.bincount(labels[labels >= 0]) if n else np.zeros(0, np.int64)
    return {"sizes": sizes, "top": out.loc[out["rank"] <= spec.top],
            "kept": out.loc[out["row_id"].isin(np.asarray(keep, dtype=np.int64))]}


def below_count(costs, counts, k):
    """The rows of one partition dominated by fewer than ``k`` rows of the table: their
    positions and their criteria rows (the robust ranking's candidates)."""
    pos = np.flatnonzero(np.asarray(counts) < k).astype(np.int64)
    return pos, np.ascontiguousarray(costs[pos])


def robust_columns(n, positions, values):
    """The robust columns of one partition's ``n`` rows from its candidates' values: 0 for
    the probabilities and NaN for the expected rank of the rows that are not candidates."""
    out = {}
    for name, v in values.items():
        col = np.full(n, np.nan if name.startswith("expected_rank") else 0.0)
        col[positions] = v
        out[name] = col
    return out
