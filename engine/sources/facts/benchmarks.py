"""The benchmark-to-workload table: which shipped workload each MLPerf benchmark name stands for.

``engine/data/workloads.csv`` holds one row per workload with the benchmark names it stands for
(``ssd;retinanet``: the same RetinaNet under its old and new names). Both the MLPerf reader (to
name a row's workload) and the performance model (to find a workload's numbers) read it, so it
lives on the facts floor.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

import pandas as pd

__all__ = ["workload_table", "workload_names", "workload_for_benchmark", "benchmarks_of"]


@lru_cache(maxsize=1)
def workload_table() -> pd.DataFrame:
    """``workloads.csv`` as shipped: one row per workload, every number with its source."""
    with resources.files("gpurank.engine.data").joinpath("workloads.csv").open("rb") as fh:
        return pd.read_csv(fh, dtype=str, keep_default_na=False)


def workload_names() -> tuple[str, ...]:
    """Names of the shipped workloads, in table order."""
    return tuple(workload_table()["workload"])


def workload_for_benchmark(benchmark: str) -> str | None:
    """The workload name a benchmark (``bert``, ``ssd``, ``retinanet``, ...) stands for, or
    None when no shipped workload does."""
    for name, benches in zip(workload_table()["workload"], workload_table()["benchmarks"]):
        # a workload without a benchmark has an empty list, not the benchmark ""
        if benchmark == name or benchmark in [b for b in benches.split(";") if b]:
            return name
    return None


def benchmarks_of(workload: str) -> tuple[str, ...]:
    """The MLPerf benchmark names a shipped workload stands for, its own name first (none but
    its name for a workload the table lacks)."""
    t = workload_table()
    rows = t[t["workload"] == workload]
    names = [b for b in (rows["benchmarks"].iloc[0].split(";") if len(rows) else []) if b]
    return tuple(dict.fromkeys([workload, *names]))
