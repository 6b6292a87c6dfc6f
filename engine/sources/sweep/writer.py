"""Where a sweep goes: the Parquet row-group writer (one file, or a folder of part files)
with its key-value metadata, and the sizes checked before any work (memory for a sweep in
memory, free disk for a file).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ...formatting import byte_size
from ...params import Options, ParamError, validate_params
from .plan import Plan, workload_meta
from .rows import LOGICAL_CHUNK

__all__ = ["MEMORY_BYTES_PER_ROW", "PARQUET_BYTES_PER_ROW", "CSV_BYTES_PER_ROW", "estimate_size",
           "check_memory", "check_disk", "sweep_metadata", "RowGroupWriter"]


#: Bytes per row, measured on the default sweep and rounded up (docs/simulator.md, "Scale"):
#: the DataFrame ``simulate`` returns is 158 B/row and its chunks are held while they are
#: joined; Parquet (snappy) is 93 B/row on disk; CSV text is 405 B/row (the notes are text).
MEMORY_BYTES_PER_ROW = 320
PARQUET_BYTES_PER_ROW = 100
CSV_BYTES_PER_ROW = 440


def _available_memory() -> int | None:
    """Bytes of memory the system can give without swapping (Linux MemAvailable), or None."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _free_disk(target: Path) -> tuple[int | None, Path]:
    """Free bytes on the file system that will hold ``target`` (its nearest existing folder)."""
    folder = target.parent if str(target.parent) else Path(".")
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        return shutil.disk_usage(folder).free, folder
    except OSError:
        return None, folder


@validate_params({"output": (Options(("memory", "parquet", "csv")),)})
def estimate_size(n: int, *, output: str = "memory") -> int:
    """Bytes a sweep of ``n`` rows needs: ``output`` ``"memory"`` (``simulate``), ``"parquet"``
    (on disk) or ``"csv"`` (on disk)."""
    per = {"memory": MEMORY_BYTES_PER_ROW, "parquet": PARQUET_BYTES_PER_ROW,
           "csv": CSV_BYTES_PER_ROW}
    return int(n) * per[output]


def check_memory(n: int) -> None:
    """Refuse (:class:`ParamError` on ``n``) a sweep in memory larger than the memory
    available; ``check_size=False`` skips the check."""
    need, free = estimate_size(n, output="memory"), _available_memory()
    if free is not None and need > free:
        raise ParamError(
            "n", f"={n:,} would need about {byte_size(need)} of memory ({MEMORY_BYTES_PER_ROW} "
            f"bytes per row) but {byte_size(free)} is available; write Parquet instead (it "
            "streams with bounded memory), simulate fewer rows, or pass {check_size=False} "
            "to try anyway", mentions=("check_size=False",))


def check_disk(n: int, target: Path, output: str) -> None:
    """Refuse (:class:`ParamError` on ``n``) an ``output`` (``"parquet"`` or ``"csv"``)
    larger than the free space of the disk that will hold ``target``."""
    need = estimate_size(n, output=output)
    free, folder = _free_disk(target)
    if free is not None and need > free:
        per = PARQUET_BYTES_PER_ROW if output == "parquet" else CSV_BYTES_PER_ROW
        raise ParamError(
            "n", f"={n:,} would need about {byte_size(need)} on disk for the {output} output "
            f"({per} bytes per row) but '{folder}' has {byte_size(free)} free; simulate fewer "
            "rows, write to a disk with more room, or pass {check_size=False} to write "
            "anyway", mentions=("check_size=False",))


def sweep_metadata(plan: Plan, seed, n, exc: dict) -> dict:
    """The Parquet key-value metadata of a sweep: seed, size, exclusions and workload."""
    return {b"gpurank.simulate": json.dumps({
        "seed": int(seed), "n_requested": int(n), "excluded": int(sum(exc.values())),
        "excluded_by_reason": exc, "logical_chunk": LOGICAL_CHUNK,
        **workload_meta(plan.workload),
        # a chosen batch is said; a drawn one (the default) leaves the metadata as it was
        **({"batch": plan.batch} if plan.batch != "drawn" else {}),
    }).encode()}


class RowGroupWriter:
    """Buffers chunks and writes them as row groups of ``rows`` rows, to one Parquet file or
    (``partitioned``) one part file each, so memory holds at most a row group and a chunk."""

    def __init__(self, target: Path, *, rows: int, partitioned: bool, compression):
        self.target = target
        self.rows = rows
        self.partitioned = partitioned
        self.compression = compression
        self.writer = None
        self.schema = None
        self.rows_written = 0
        self.groups = 0
        self._buf: list[pd.DataFrame] = []
        self._buffered = 0

    def add(self, df: pd.DataFrame) -> None:
        """Buffer a chunk and write every full row group."""
        if len(df):
            self._buf.append(df)
            self._buffered += len(df)
        self.flush()

    def flush(self, final: bool = False) -> None:
        """Write the buffered full row groups (and, when ``final``, the rest)."""
        while self._buffered >= self.rows or (final and self._buffered > 0):
            buf = self._buf
            df = pd.concat(buf, ignore_index=True) if len(buf) > 1 else buf[0]
            take = min(self.rows, len(df))
            head, rest = df.iloc[:take], df.iloc[take:]
            table = pa.Table.from_pandas(head, preserve_index=False)
            # every group is cast to the first one's schema: one file, or one dataset of
            # parts, has one type per column
            if self.schema is None:
                self.schema = table.schema.remove_metadata()
            table = table.cast(self.schema)
            if self.partitioned:
                pq.write_table(table, self.target / f"part-{self.groups:05d}.parquet",
                               compression=self.compression, row_group_size=take)
            else:
                if self.writer is None:
                    self.writer = pq.ParquetWriter(self.target, self.schema,
                                                   compression=self.compression)
                self.writer.write_table(table, row_group_size=take)
            self.rows_written += take
            self.groups += 1
            self._buf = [rest.reset_index(drop=True)] if len(rest) else []
            self._buffered = len(rest)

    def finish_file(self, metadata: dict) -> None:
        """Add the key-value metadata to the single file and close it."""
        self.writer.add_key_value_metadata(metadata)
        self.writer.close()
        self.writer = None

    def close(self) -> None:
        """Close an open file (after an error: the staging path is discarded)."""
        if self.writer is not None:
            self.writer.close()
