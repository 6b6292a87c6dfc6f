"""``gpurank mlperf``: MLPerf Training results read into one Parquet table."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import UsageError
from ..io import write_table
from ..outputs import check_target
from ..sources.mlperf.reader import MlperfReadResult, read_mlperf

__all__ = ["run_mlperf_cli"]


def run_mlperf_cli(paths, output, *, benchmark: str = "resnet", strict: bool = False, dedupe: bool = False,
                   published_scores=None, published_runs=None, overwrite=False) -> MlperfReadResult:
    """``gpurank mlperf PATH [PATH ...] -o table.parquet``: read, write Parquet atomically, return.

    The warnings (and dropped duplicates) are stored as JSON under the ``gpurank`` key of the
    Parquet key-value metadata (read them back with ``gpurank.engine.io.read_metadata``).
    ``published_scores`` (CLI ``--published-scores summary.csv``) fills the scores the logs
    cannot give; see :func:`read_mlperf`.
    """
    out = Path(output)
    if out.suffix.lower() != ".parquet":
        raise UsageError(f"output {str(out)!r} must end in .parquet")
    if not out.parent.exists():
        raise UsageError(f"output folder {str(out.parent)!r} does not exist")
    check_target(out, name="--output", overwrite=overwrite)
    result = read_mlperf(paths, benchmark=benchmark, strict=strict, dedupe=dedupe,
                         published_scores=published_scores, published_runs=published_runs)
    meta = result.metadata()
    meta["paths"] = [str(p) for p in ([paths] if isinstance(paths, (str, os.PathLike)) else paths)]
    meta["dedupe"] = bool(dedupe)
    write_table(result.table, out, metadata=meta, overwrite=overwrite, name="--output")
    return result
