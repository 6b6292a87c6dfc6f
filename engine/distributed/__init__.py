"""The analysis on Dask: out of core, across workers, with the in-memory path's results.

Entry points (see ``docs/distributed.md``)::

    client = start_dask("local:2")
    result = analyze_dataset("configs/", client=client, spec=spec, out_dir="out/")
    result.summary          # the dict written to out/summary.json (same keys as in memory)

- :mod:`.cluster`: starting or reaching a cluster (every wait bounded);
- :mod:`.tasks`: what a worker does with one partition (the pipeline's own steps);
- :mod:`.cross`: the work that crosses partitions (front, ranks, counts, final rank);
- :mod:`.dominance`: exact ranks and counts by a divide and conquer over key ranges, its
  cuts and cost planned in :mod:`.dominance_plan`;
- :mod:`.driver`: the stages, in order.

Nothing here imports dask at import time: ``check_dask_available`` says what to install.
"""

from .cluster import DistributedError, check_dask_available, start_dask
from .driver import RESULT_COLUMNS, DistributedResult, analyze_dataset, read_dataset

__all__ = ["RESULT_COLUMNS", "DistributedError", "DistributedResult", "analyze_dataset",
           "check_dask_available", "read_dataset", "start_dask"]
