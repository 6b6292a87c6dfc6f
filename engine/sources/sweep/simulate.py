"""Synthetic sweeps of training configurations from the performance model.

``simulate(n, seed=...)`` draws ``n`` configurations (accelerator, count, nodes, host CPU,
interconnect, network, framework, provider, batch) from the catalogs and evaluates the model
of :mod:`gpurank.engine.sources.model.perfmodel` on them; ``simulate_to_parquet`` streams the same
rows to Parquet row groups (or a folder of part files) with bounded memory.

Determinism: rows are generated in logical chunks of ``LOGICAL_CHUNK`` rows; chunk ``k`` draws
from ``Generator(Philox(SeedSequence(seed, spawn_key=(k,))))``. The output depends only on
``seed``, ``n`` and the options, never on ``row_group_rows``; the per-row arithmetic uses only
exactly rounded IEEE operations, so it is the same on any machine with the same NumPy
random streams.

Impossible grid points (accelerators per node above the chassis limit, node counts that do
not divide the accelerator count, a per-accelerator batch beyond memory) are dropped and
counted: ``df.attrs["excluded"]`` (int) and ``df.attrs["excluded_by_reason"]`` (dict), and the
same numbers in the Parquet file's key-value metadata (``gpurank.excluded``).
"""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd

from ...outputs import publish_file, publish_folder
from ...params import InstanceOf, Interval, Items, Options, validate_params
from ...schema import SIMULATED_COLUMNS
from ..facts.accelerators import resolve_accelerators
from ..model.perfmodel import CalibratedModel, Workload
from .plan import DEFAULT_NETWORKS, prepare, workload_meta
from .rows import DEFAULT_COUNTS, LOGICAL_CHUNK, iter_chunks, no_rows_error
from .writer import (
    CSV_BYTES_PER_ROW,
    MEMORY_BYTES_PER_ROW,
    PARQUET_BYTES_PER_ROW,
    RowGroupWriter,
    check_disk,
    check_memory,
    estimate_size,
    sweep_metadata,
)

__all__ = ["simulate", "simulate_to_parquet", "SIMULATE_CONSTRAINTS", "LOGICAL_CHUNK",
           "DEFAULT_COUNTS", "DEFAULT_NETWORKS", "COLUMNS", "resolve_accelerators", "estimate_size",
           "MEMORY_BYTES_PER_ROW", "PARQUET_BYTES_PER_ROW", "CSV_BYTES_PER_ROW", "BATCH_MODES"]

#: Output columns, in order (:data:`gpurank.engine.schema.SIMULATED_COLUMNS`: the header a
#: simulated CSV is recognized by).
COLUMNS = SIMULATED_COLUMNS
#: How a sweep's batch is set: drawn from the workload's local batches (capped by memory and
#: the reference points), or the one each row trains fastest at (:mod:`..model.batch_choice`).
BATCH_MODES = ("drawn", "fastest")
#: Largest accelerator or node count, and local batch, a sweep may be asked for.
MAX_COUNT = 1_048_576
MAX_LOCAL_BATCH = 1_000_000


def _counts(high):
    """An integer in [1, high], or a non-empty list of them."""
    return (None, Interval(int, 1, high), Items(Interval(int, 1, high), min_len=1))


#: The declared constraints of :func:`simulate` (and :func:`simulate_to_parquet`). The seed
#: is any non-negative integer, of any size: NumPy's ``SeedSequence`` takes it whole.
SIMULATE_CONSTRAINTS = {
    "n": (Interval(int, 1, None),),
    "seed": (Interval(int, 0, None),),
    "model": (None, InstanceOf(CalibratedModel)),
    "workload": (None, InstanceOf(Workload)),
    "counts": _counts(MAX_COUNT),
    "nodes": _counts(MAX_COUNT),
    "local_batch": _counts(MAX_LOCAL_BATCH),
    "check_size": (bool,),
    "batch": (Options(BATCH_MODES),),
}


@validate_params(SIMULATE_CONSTRAINTS)
def simulate(n, *, seed=0, model=None, accelerators=None, counts=None, nodes=None,
             providers=None, local_batch=None, workload=None, accelerator_table=None,
             price_table=None, host_cpu_table=None, interconnect_table=None,
             check_size=True, batch="drawn") -> pd.DataFrame:
    """Simulate ``n`` training configurations in memory.

    Parameters
    ----------
    n : int > 0
        Configurations to draw (rows returned = n minus the excluded impossible ones).
    seed : int >= 0
        Same seed and options give the same rows, bit for bit. Any non-negative integer
        (of any size) is allowed.
    model : CalibratedModel, optional
        Fitted parameters (``calibrate``/``CalibratedModel.from_json``); defaults built in.
    accelerators : list of str, optional
        Restrict to these accelerators (id, display name or model, e.g. ``"H100"``).
    counts, nodes : list of int, optional
        Accelerator counts and/or node counts to draw from. With both, accelerators per node
        = count / nodes and impossible pairs are excluded and counted.
    providers : list of str, optional
        Restrict to these providers (``prices.csv`` names or ``"Typical rate (catalog)"``).
    local_batch : list of int, optional
        Per-accelerator batch sizes; values beyond an accelerator's memory are excluded and
        counted. By default 32-256, capped by memory and by a 65,536 global batch.
    workload : Workload, optional
        ResNet-50 / ImageNet by default.
    accelerator_table, price_table, host_cpu_table, interconnect_table : path or DataFrame
        Replace the built-in catalogs.
    check_size : bool
        Refuse up front (``ParamError``) when ``n`` rows would need more memory than is
        available (``MEMORY_BYTES_PER_ROW`` each); ``False`` skips the check.
    batch : {"drawn", "fastest"}
        ``"fastest"``: each row runs the global batch it trains fastest at within the
        workload's reference convergence points and memory, as a submitter picks it (each
        row's note says so); ``"drawn"`` (the default) draws it. Not with ``local_batch``.

    Returns
    -------
    DataFrame with ``COLUMNS``; string columns are categorical. ``attrs["excluded"]`` is the
    number of dropped impossible configurations and ``attrs["excluded_by_reason"]`` a dict.
    """
    if check_size:
        check_memory(int(n))
    plan = prepare(model=model, workload=workload, accelerators=accelerators,
                   providers=providers, counts=counts, nodes=nodes, local_batch=local_batch,
                   accelerator_table=accelerator_table, price_table=price_table,
                   host_cpu_table=host_cpu_table, interconnect_table=interconnect_table,
                   batch=batch)
    parts, excluded = [], {}
    for df, excluded in iter_chunks(plan, int(n), seed):
        parts.append(df)
    out = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0].reset_index(drop=True)
    total = int(sum(excluded.values()))
    if len(out) == 0:
        raise no_rows_error(n, excluded)
    out.attrs["excluded"] = total
    out.attrs["excluded_by_reason"] = dict(excluded)
    out.attrs["seed"] = int(seed)
    out.attrs["n_requested"] = int(n)
    out.attrs.update(workload_meta(plan.workload))
    if plan.batch != "drawn":
        out.attrs["batch"] = plan.batch
    return out


@validate_params({**SIMULATE_CONSTRAINTS, "row_group_rows": (Interval(int, 1, None),)})
def simulate_to_parquet(path, n, *, seed=0, model=None, accelerators=None, counts=None,
                        nodes=None, providers=None, local_batch=None, workload=None,
                        accelerator_table=None, price_table=None, host_cpu_table=None,
                        interconnect_table=None, row_group_rows=1_000_000,
                        partitioned=False, compression="snappy", overwrite=False,
                        name="path", check_size=True, batch="drawn") -> dict:
    """Stream ``simulate`` rows to Parquet with bounded memory.

    ``partitioned=False`` writes one file with row groups of ``row_group_rows`` rows;
    ``partitioned=True`` writes a folder of ``part-00000.parquet`` ... files (one per
    ``row_group_rows`` rows), a dataset Dask/pyarrow read as one table. Writes are atomic
    (a temporary sibling renamed at the end). Rows equal ``simulate`` with the same arguments.

    An existing ``path`` is replaced only when gpurank wrote it (``overwrite=True`` replaces
    anything); the old output stays in place until the new one is complete (see
    :mod:`gpurank.engine.outputs`). ``name`` is the parameter named in messages.
    ``check_size`` refuses up front (``ParamError`` on ``n``) an ``n`` whose estimated output
    (``PARQUET_BYTES_PER_ROW`` each) is larger than the free space of the target's disk.

    Returns a dict: ``path, rows, excluded, excluded_by_reason, seconds, row_groups, notes``
    (``notes``: leftovers of interrupted runs that were cleaned).
    """
    if check_size:
        check_disk(int(n), Path(path), "parquet")
    plan = prepare(model=model, workload=workload, accelerators=accelerators,
                   providers=providers, counts=counts, nodes=nodes, local_batch=local_batch,
                   accelerator_table=accelerator_table, price_table=price_table,
                   host_cpu_table=host_cpu_table, interconnect_table=interconnect_table,
                   batch=batch)
    path = Path(path)
    t0 = time.perf_counter()
    excluded: dict = {}

    # The whole output is written into a staging path beside the target and renamed into
    # place when complete; an existing target is replaced only when gpurank wrote it.
    publish = (publish_folder(path, kind="dataset", name=name, overwrite=overwrite)
               if partitioned else publish_file(path, name=name, overwrite=overwrite))
    with publish as pub:
        out = RowGroupWriter(pub.path, rows=row_group_rows, partitioned=partitioned,
                             compression=compression)
        try:
            for df, excluded in iter_chunks(plan, int(n), seed):
                out.add(df)
            out.flush(final=True)
            if out.rows_written == 0:
                raise no_rows_error(n, excluded)
            meta = sweep_metadata(plan, seed, n, excluded)
            if partitioned:
                (pub.path / "_gpurank_simulate.json").write_text(
                    meta[b"gpurank.simulate"].decode())
                pub.manifest.update(rows=out.rows_written, seed=int(seed))
            else:
                out.finish_file(meta)
        finally:
            out.close()
    return {
        "path": str(path), "rows": out.rows_written, "excluded": int(sum(excluded.values())),
        "excluded_by_reason": dict(excluded), "seconds": time.perf_counter() - t0,
        "row_groups": out.groups, "notes": list(pub.notes),
    }
