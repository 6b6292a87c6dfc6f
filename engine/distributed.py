"""The analysis on Dask: out of core, across workers, with the in-memory path's results.

Entry points for the lead (see ``docs/distributed.md``)::

    client = start_dask("local:2", backend_name=engine.backend.name)
    result = analyze_dataset("configs/", client=client, spec=spec, backend=engine.backend,
                             out_dir="out/")
    result.summary          # the dict written to out/summary.json (same keys as in memory)

What runs where
---------------
Workers read the Parquet partitions (``dask.dataframe.read_parquet``, pandas or cuDF backend),
derive metrics, build the criteria matrix and keep, per partition, only the compact state the
ranking needs (costs, counts, ranks, scores: O(m) floats a row) as futures. The client sees
only per-partition summaries (row counts, reference tables, column statistics, boxes, top
rows), a strided cost sample (key grids) and a seeded sample for the random forest and the
KMeans fit. Counts and Pareto ranks run on key blocks (rows range-partitioned by a key that a
dominator never exceeds), submitted as one task graph: no round trip per Pareto front. The
result table is never gathered: each worker re-reads its partition and writes its part file.

Algorithms (P partitions of ~n rows, N rows, m criteria): see ``docs/distributed.md``.
"""

from __future__ import annotations

import contextlib
import functools
import operator
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import DataError, GpurankError, UsageError
from .outputs import check_target, publish_folder
from .spec import AnalysisSpec, default_criteria, limit_notes, normalize_weights

__all__ = [
    "RESULT_COLUMNS",
    "DistributedError",
    "DistributedResult",
    "analyze_dataset",
    "start_dask",
]

#: Columns the ranking adds to each row (``row_id`` = position in the analyzed table, i.e.
#: after ``--accelerator-type`` and ``--drop-invalid`` filtering, in input order: the same
#: row as ``result.table.iloc[row_id]`` of the in-memory path).
RESULT_COLUMNS = ("row_id", "cluster", "pareto_rank", "domination_count", "topsis_score", "rank")
#: The seeded sample gathered on the client for the forest and the KMeans fit has at most
#: max(FIT_ROWS of clustering, spec.sample_rows) rows.
_SUCCESS = "_SUCCESS"


class DistributedError(GpurankError, RuntimeError):
    """The Dask run failed (a worker died too often, the scheduler went away); exit code 1."""

    exit_code = 1


# =======================================================================================
# Starting Dask
# =======================================================================================


def start_dask(spec: str, *, backend_name: str = "cpu"):
    """Start or connect to a Dask cluster and return a ``distributed.Client``.

    Parameters
    ----------
    spec : str
        ``"local"`` (a LocalCluster with one single-threaded worker process per core),
        ``"local:N"`` (N worker processes) or ``"tcp://host:port"`` (an existing scheduler,
        whose workers must have gpurank installed).
    backend_name : {"cpu", "gpu"}
        ``"gpu"`` starts a ``dask_cuda.LocalCUDACluster`` (one worker per GPU) instead.

    Raises
    ------
    UsageError
        A malformed spec.
    BackendUnavailableError
        ``backend_name="gpu"`` without dask-cuda.
    """
    text = (spec or "").strip()
    if text.startswith(("tcp://", "tls://", "ucx://")):
        rest = text.split("://", 1)[1]
        host, _, port = rest.rpartition(":")
        if not host or not port.isdigit():
            raise UsageError(f"--dask {spec!r} is malformed; write tcp://HOST:PORT, e.g. "
                             "tcp://10.0.0.5:8786")
        from distributed import Client

        try:
            return Client(text, timeout="10s")
        except OSError as exc:
            raise DistributedError(f"cannot reach the Dask scheduler at {text}: {exc}") from None
    name, _, count = text.partition(":")
    if name != "local" or (count and not count.isdigit()) or count == "0":
        raise UsageError(
            f"--dask {spec!r} is not understood; use 'local', 'local:N' (N worker processes, "
            "N >= 1) or 'tcp://HOST:PORT'"
        )
    n = int(count) if count else (os.cpu_count() or 1)
    from distributed import Client

    if backend_name == "gpu":
        from .errors import BackendUnavailableError

        try:
            from dask_cuda import LocalCUDACluster
        except ImportError:
            raise BackendUnavailableError(
                "--dask with backend 'gpu' needs dask-cuda (pip install 'gpurank[gpu]' or use "
                "the RAPIDS container)") from None
        import dask

        dask.config.set({"dataframe.backend": "cudf"})
        kwargs = {"rmm_pool_size": "0.8", "enable_cudf_spill": True, "dashboard_address": None}
        if count:
            kwargs["n_workers"] = n
        return Client(LocalCUDACluster(**kwargs))
    from distributed import LocalCluster

    cluster = LocalCluster(n_workers=n, processes=True, threads_per_worker=1,
                           dashboard_address=None)
    return Client(cluster)


# =======================================================================================
# Worker-side functions (module level: pickled by reference; gpurank must be installed)
# =======================================================================================


@functools.cache
def _backend(name):
    from .backend import resolve_backend

    return resolve_backend(name)


def _host(df):
    return df.to_pandas() if hasattr(df, "to_pandas") else df


def _filter_type(df, wanted):
    if wanted is None:
        return df
    if "accelerator_type" not in df.columns:
        from .schema import require_columns

        require_columns(df, ["accelerator_type"], role="--accelerator-type")
    keep = (df["accelerator_type"].astype("str") == wanted).fillna(False)
    return df.loc[keep].reset_index(drop=True)


def _scan(part, wanted):
    """Pass 1: rows and the reference table of one partition (after --accelerator-type)."""
    from .metrics import reference_table

    types = ()
    if wanted is not None and "accelerator_type" in part.columns:
        types = tuple(sorted(map(str, _host(part["accelerator_type"].dropna()).astype(str).unique())))
    df = _filter_type(part, wanted)
    ref = None
    if len(df) and "accelerator" in df.columns:
        ref = _host(reference_table(df))
    return {"rows_in": len(part), "rows": len(df), "ref": ref, "types": types}


def _derived(part, wanted, ref):
    from .metrics import derive_metrics

    df = _filter_type(part, wanted)
    if len(df) == 0:
        return df
    return derive_metrics(df, reference=ref)


def _costs_of(df, criteria, backend_name):
    from .ranking import criteria_matrix

    be = _backend(backend_name)
    if len(df) == 0:
        return np.empty((0, len(criteria)), dtype=np.float64)
    return np.ascontiguousarray(be.to_host(criteria_matrix(df, criteria, backend=be)),
                                dtype=np.float64)


def _prepare(part, wanted, ref, criteria, backend_name):
    """Pass 2: derived metrics and criteria matrix of one partition; returns the compact
    state (valid costs) and the statistics the client needs."""
    from gpurank.kernels import cpu

    df = _derived(part, wanted, ref)
    columns = tuple(df.columns)
    costs = _costs_of(df, criteria, backend_name)
    ok = np.isfinite(costs).all(axis=1)
    valid = np.ascontiguousarray(costs[ok])
    m = costs.shape[1]
    stats = {
        "columns": columns,
        "rows": len(df),
        "valid": int(ok.sum()),
        "bad_cols": (~np.isfinite(costs)).any(axis=0) if len(costs) else np.zeros(m, bool),
        "lo": valid.min(axis=0) if len(valid) else np.full(m, np.inf),
        "hi": valid.max(axis=0) if len(valid) else np.full(m, -np.inf),
        "topsis": cpu.topsis_stats(valid),
    }
    return valid, stats


def _local_front(costs):
    from gpurank.kernels import cpu

    f = cpu.pareto_front(costs) if len(costs) else np.zeros(0, bool)
    return np.flatnonzero(f), costs[f]


def _internal_count(costs):
    from gpurank.kernels import cpu

    return cpu.domination_count(costs) if len(costs) else np.zeros(0, np.int64)


def _cross(costs_a, costs_b):
    from gpurank.kernels.cpu.blocks import cross_domination_count

    return cross_domination_count(costs_a, costs_b)


def _sum_counts(internal, extra, *crosses):
    out = internal.copy()
    out += extra
    for c in crosses:
        out += c
    return out


# -- Pareto ranks: rows range-partitioned by a dominance-compatible key ----------------------
#: Rows of the strided cost sample the client uses to pick key grids and block boundaries.
_KEY_SAMPLE = 200_000
#: Quantile grid points per criterion for the rank-sum key.
_KEY_GRID = 4096
#: Target rows per key block (the number of blocks is also at least 2 per worker). Block
#: pairs cost ~K N log^3 in all, so blocks are large: a pair task of 2 x 2.5M rows holds
#: ~160 MB of costs plus ~0.5 GB of CDQ work arrays.
_BLOCK_ROWS = 2_500_000


def _strided(costs, stride):
    return costs[::stride]


def _bucketize(costs, grids, thr):
    """Key block of each row: rows sorted by block (stable) and the block boundaries."""
    from gpurank.kernels.cpu.blocks import grid_key

    k = len(thr) + 1
    if len(costs) == 0:
        return np.zeros(0, np.int64), np.zeros(k + 1, np.int64)
    b = np.searchsorted(thr, grid_key(costs, grids), side="right")
    order = np.argsort(b, kind="stable")
    return order, np.searchsorted(b[order], np.arange(k + 1)).astype(np.int64)


def _bounds(bk):
    return bk[1]


def _piece(costs, bk, p):
    order, bounds = bk
    return costs[order[bounds[p]:bounds[p + 1]]]


def _concat_rows(m, *pieces):
    if not pieces:
        return np.empty((0, m), dtype=np.float64)
    return np.ascontiguousarray(np.concatenate(pieces), dtype=np.float64)


def _cross_rank(block, earlier, earlier_rank):
    """Largest rank among the rows of an earlier block that dominate each row (-1: none)."""
    from gpurank.kernels.cpu.blocks import box, box_relation, cross_max_rank

    if box_relation(box(block), box(earlier)) == "none":
        return np.full(len(block), -1, dtype=np.int64)
    return cross_max_rank(block, earlier, earlier_rank)


def _block_rank(block, *crosses):
    """Ranks of one key block: longest chains inside it seeded with 1 + the largest rank of
    its dominators in earlier blocks."""
    from gpurank.kernels.cpu.blocks import seeded_rank

    lower = np.zeros(len(block), dtype=np.int64)
    for c in crosses:
        np.maximum(lower, c + 1, out=lower)
    return seeded_rank(block, lower)


def _slice(x, start, stop):
    return x[start:stop]


def _unbucket(bk, wrap, *slices):
    """Per-row results of one input partition back in its row order: ``wrap="state"`` ranks
    as the ranking state ``(None, rank)``, ``"count"`` the domination counts."""
    order = bk[0]
    out = np.empty(len(order), dtype=np.int32 if wrap == "state" else np.int64)
    if len(order):
        out[order] = np.concatenate(slices)
    return (None, out) if wrap == "state" else out


# -- clipped ranks and capped counts: local filters, one merge -------------------------------
# A row's rank (count) inside a subset of the table is at most its rank (count) in the whole
# table, and the rows of rank < D (count < C) are closed under "dominates such a row" (for
# counts: the first C dominators of a row in any topological order have fewer than C
# dominators each). So the rows that pass the local filter of their partition contain every
# row below the limit together with the dominators that decide it, and min(rank, D) /
# min(count, C) computed on their union is exact for the whole table.
def _clipped(costs, limit, what):
    """``min(pareto_rank, limit)`` (``what="state"``) or ``min(domination_count, limit)``."""
    if len(costs) == 0:
        return np.zeros(0, np.int64)
    from gpurank.kernels import cpu

    if what == "state":
        return cpu.pareto_rank(costs, depth=limit)
    return cpu.domination_count(costs, cap=limit)


def _local_limited(costs, limit, what):
    """Candidates of one partition: positions and costs of the rows below the limit."""
    cand = np.flatnonzero(_clipped(costs, limit, what) < limit)
    return cand, np.ascontiguousarray(costs[cand])


def _n_candidates(local):
    return len(local[0])


def _merge_limited(limit, what, m, *cand_costs):
    """Clipped ranks / capped counts of the union of every partition's candidates."""
    return _clipped(_concat_rows(m, *cand_costs), limit, what)


def _scatter_limited(n, limit, local, merged, start, wrap):
    """One partition's column: the merged value for its candidates, the limit elsewhere."""
    cand = local[0]
    out = np.full(n, limit, dtype=np.int32 if wrap == "state" else np.int64)
    out[cand] = merged[start:start + len(cand)]
    return (None, out) if wrap == "state" else out


def _limited(client, costs, n_valid, limit, what, m):
    """Per-partition futures of ``min(rank, limit)`` (``what="state"``) or ``min(count,
    limit)`` (``"count"``), and the number of candidate rows merged."""
    local = [client.submit(_local_limited, c, limit, what) for c in costs]
    sizes = client.gather([client.submit(_n_candidates, f) for f in local])
    cand = [client.submit(operator.getitem, f, 1) for f in local]
    merged = client.submit(_merge_limited, limit, what, m, *cand, priority=1)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
    out = [client.submit(_scatter_limited, int(n), limit, f, merged, int(s), what)
           for n, f, s in zip(n_valid, local, starts)]
    return out, int(np.sum(sizes))


def _box(costs):
    from gpurank.kernels.cpu.blocks import box

    return box(costs)


def _max_rank(state):
    return int(state[1].max()) if len(state[1]) else -1


def _topsis_part(costs, stats, weights, norm):
    from gpurank.kernels import cpu

    return cpu.topsis_from_stats(costs, stats, weights, np.zeros(len(weights), bool), norm=norm)


def _local_top(score, offset, k):
    from gpurank.kernels import cpu

    if len(score) == 0:
        return np.zeros(0, np.int64), np.zeros(0)
    idx = cpu.top_k(score, k)
    return idx + offset, score[idx]


def _keys(score, state, offset):
    from gpurank.kernels.cpu.blocks import sort_keys

    return sort_keys(score, state[1], np.arange(len(score), dtype=np.int64) + offset)


#: Rows of the final-rank key sample the splitters are picked from, and rows per bucket.
_RANK_SAMPLE = 200_000
_RANK_BUCKET_ROWS = 4_000_000


def _key_sample(keys, stride):
    return tuple(x[::stride] for x in keys)


def _cuts(keys, splitters):
    """Positions of the splitters in one partition's sorted keys: bucket b of the partition
    is ``keys[cut[b]:cut[b+1]]``."""
    from gpurank.kernels.cpu.blocks import count_preceding

    inner = count_preceding(*splitters, keys) if len(splitters[0]) else np.zeros(0, np.int64)
    return np.concatenate(([0], inner, [len(keys[0])])).astype(np.int64)


def _key_piece(keys, cuts, b):
    return tuple(x[cuts[b]:cuts[b + 1]] for x in keys)


def _bucket_rank(first, *pieces):
    """Final ranks of one bucket (every key in it comes after the ``first - 1`` keys of the
    earlier buckets): ``(row_id, rank)`` ordered by ``row_id``."""
    from gpurank.kernels.cpu.blocks import sort_keys

    s, p, ids = (np.concatenate([pc[j] for pc in pieces]) for j in range(3))
    ids = sort_keys(s, p, ids)[2]
    rank = np.arange(first, first + len(ids), dtype=np.int64)
    order = np.argsort(ids, kind="stable")
    return ids[order], rank[order]


def _rank_piece(bucket, lo, hi):
    ids, rank = bucket
    a, b = np.searchsorted(ids, [lo, hi])
    return ids[a:b], rank[a:b]


def _assemble_ranks(n, offset, *pieces):
    out = np.empty(n, dtype=np.int64)
    for ids, rank in pieces:
        out[ids - offset] = rank
    return out


def _final_ranks(client, scores, states, offsets, n_valid, N):
    """``rank`` (1 = best by -score, pareto_rank, row_id) of every row, per partition.

    A sample sort: each partition sorts its keys; splitters from a strided sample of the
    sorted keys cut the key range into B buckets of ~4M rows; bucket b gathers its pieces
    from every partition, sorts them and numbers them after the rows of the earlier buckets
    (counted from the partitions' cut positions); the ranks go back to the partitions by
    row_id. O(N log N) work in all, 2·P·B small slicing tasks.
    """
    P = len(scores)
    keys = [client.submit(_keys, sc, st, int(o)) for sc, st, o in zip(scores, states, offsets)]
    stride = max(1, N // _RANK_SAMPLE)
    smp = client.gather([client.submit(_key_sample, k, stride) for k in keys])
    from gpurank.kernels.cpu.blocks import sort_keys

    ss, sp, si = sort_keys(*(np.concatenate([x[j] for x in smp]) for j in range(3)))
    B = int(min(max(1, -(-N // _RANK_BUCKET_ROWS)), max(1, len(ss))))
    pick = (len(ss) * np.arange(1, B)) // B
    splitters = (ss[pick], sp[pick], si[pick])
    cuts = [client.submit(_cuts, k, splitters) for k in keys]
    sizes = np.diff(np.array(client.gather(cuts)).reshape(P, B + 1), axis=1)
    first = 1 + np.concatenate(([0], np.cumsum(sizes.sum(axis=0))[:-1]))
    buckets = []
    for b in range(B):
        pieces = [client.submit(_key_piece, keys[i], cuts[i], b)
                  for i in range(P) if sizes[i, b]]
        buckets.append(client.submit(_bucket_rank, int(first[b]), *pieces))
    out = []
    for i in range(P):
        lo, hi = int(offsets[i]), int(offsets[i] + n_valid[i])
        pieces = [client.submit(_rank_piece, buckets[b], lo, hi)
                  for b in range(B) if sizes[i, b]]
        out.append(client.submit(_assemble_ranks, int(n_valid[i]), lo, *pieces))
    return out, B


def _sample_part(part, wanted, ref, criteria, backend_name, local_idx):
    """The sampled rows (positions among this partition's valid rows) as a host frame."""
    df = _derived(part, wanted, ref)
    if len(df) == 0 or len(local_idx) == 0:
        return None
    ok = np.isfinite(_costs_of(df, criteria, backend_name)).all(axis=1)
    rows = np.flatnonzero(ok)[local_idx]
    return _host(df).iloc[rows]


def _cluster_transform(df, features):
    """Log decisions and standardization of :func:`clustering.cluster_features`, as data."""
    from .clustering import LOG_SPAN
    from .schema import numeric_values

    logs, cols = [], []
    for f in features:
        v = numeric_values(df, f, role="cluster feature")
        fin = v[np.isfinite(v)]
        lg = bool(fin.size and fin.min() > 0 and fin.max() > LOG_SPAN * fin.min())
        if lg:
            with np.errstate(divide="ignore", invalid="ignore"):
                v = np.log10(np.where(v > 0, v, np.nan))
        logs.append(lg)
        cols.append(v)
    X = np.column_stack(cols)
    valid = np.isfinite(X).all(axis=1)
    mu = X[valid].mean(axis=0) if valid.any() else np.zeros(X.shape[1])
    sd = X[valid].std(axis=0) if valid.any() else np.ones(X.shape[1])
    sd = np.where(sd > 0, sd, 1.0)
    return tuple(features), tuple(logs), mu, sd


def _apply_transform(df, transform):
    from .schema import numeric_values

    features, logs, mu, sd = transform
    cols = []
    for f, lg in zip(features, logs):
        v = numeric_values(df, f, role="cluster feature")
        if lg:
            with np.errstate(divide="ignore", invalid="ignore"):
                v = np.log10(np.where(v > 0, v, np.nan))
        cols.append(v)
    X = np.column_stack(cols)
    valid = np.isfinite(X).all(axis=1)
    return (X - mu) / sd, valid


def _predict(df, cluster):
    """Cluster labels of a host frame: transform from the sample, KMeans predict, stable order."""
    n = len(df)
    if cluster is None or n == 0:
        return np.full(n, -1, dtype=np.int32)
    transform, model, mapping = cluster
    Z, valid = _apply_transform(df, transform)
    out = np.full(n, -1, dtype=np.int32)
    if valid.any():
        raw = np.asarray(model.predict(np.ascontiguousarray(Z[valid]))).astype(np.int64)
        out[valid] = mapping[raw]
    return out


def _write_part(part, wanted, ref, criteria, backend_name, offset, counts, state, score, rank,
                cluster, tmp_dir, index, metadata, top, fault):
    """Last pass: re-read and re-derive one partition, attach the results, write its part
    file into the temporary folder. Returns label counts and the rows with rank <= top."""
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    _maybe_fail(fault, index)
    df = _derived(part, wanted, ref)
    df = _host(df)
    if len(df):
        ok = np.isfinite(_costs_of(df, criteria, backend_name)).all(axis=1)
        df = df.loc[ok].reset_index(drop=True)
    n = len(df)
    labels = _predict(df, cluster)
    out = df.copy()
    out["cluster"] = labels
    out["pareto_rank"] = state[1] if n else np.zeros(0, np.int32)
    out["domination_count"] = counts if n else np.zeros(0, np.int64)
    out["topsis_score"] = score if n else np.zeros(0)
    out["rank"] = rank if n else np.zeros(0, np.int64)
    out["row_id"] = np.arange(n, dtype=np.int64) + offset
    table = pa.Table.from_pandas(out, preserve_index=False)
    meta = dict(table.schema.metadata or {})
    meta[b"gpurank"] = json.dumps(metadata, default=str).encode()
    table = table.replace_schema_metadata(meta)
    pq.write_table(table, Path(tmp_dir) / f"part-{index:05d}.parquet")
    sizes = np.bincount(labels[labels >= 0], minlength=0) if n else np.zeros(0, np.int64)
    return {"sizes": sizes, "top": out.loc[out["rank"] <= top] if n else out}


def _maybe_fail(fault, index):
    """Test hook: ``("kill-once", marker, index)`` kills this worker process the first time
    partition ``index`` is written; ``("raise", index)`` raises."""
    if not fault:
        return
    if fault[0] == "kill-once" and fault[2] == index:
        marker = Path(fault[1])
        if not marker.exists():
            marker.write_text("killed")
            os._exit(1)
    if fault[0] == "raise" and fault[1] == index:
        raise RuntimeError(f"injected failure while writing partition {index}")


# =======================================================================================
# Result
# =======================================================================================


@dataclass
class DistributedResult:
    """What :func:`analyze_dataset` produced.

    Attributes
    ----------
    summary : dict
        Same keys as the in-memory ``summary.json`` (``build_summary``).
    top : DataFrame
        The ``spec.top`` best rows, best first, with the result columns and ``row_id``.
    ranking_path : Path or None
        The ``ranking/`` folder of part files, when ``out_dir`` was given.
    topsis_top_k : ndarray of int64
        Row ids of the ``spec.top`` largest TOPSIS scores (ties by row id), merged from the
        per-partition top k.
    pareto_front_rows : ndarray of int64
        Row ids of the Pareto front, from local fronts and a merge.
    timings, notes : as in ``AnalysisResult``
    """

    summary: dict
    top: pd.DataFrame
    ranking_path: Path | None
    topsis_top_k: np.ndarray
    pareto_front_rows: np.ndarray
    timings: dict = field(default_factory=dict)
    notes: tuple = ()
    columns: dict = field(default_factory=dict, repr=False)

    def result_columns(self) -> pd.DataFrame:
        """``row_id`` and the result columns of every row, gathered (tests, small tables)."""
        return self.columns["frame"]()


# =======================================================================================
# Driver
# =======================================================================================


def _read(path, backend_name):
    import dask
    import dask.dataframe as dd

    if not isinstance(path, (str, os.PathLike)):
        if hasattr(path, "to_delayed"):
            return path
        raise UsageError(f"analyze_dataset expects a Parquet path or a Dask DataFrame; got "
                         f"{type(path).__name__}")
    p = Path(path)
    if not p.exists():
        raise DataError(f"table file '{p}' does not exist")
    if p.is_dir() and not any(p.rglob("*.parquet")):
        raise DataError(f"table folder '{p}' holds no .parquet files")
    with dask.config.set({"dataframe.backend": "cudf" if backend_name == "gpu" else "pandas"}):
        try:
            return dd.read_parquet(str(p))
        except Exception as exc:
            raise DataError(f"cannot read table '{p}': {type(exc).__name__}: {exc}") from exc


def analyze_dataset(path, *, client, spec: AnalysisSpec | None = None, backend="cpu",
                    out_dir=None, overwrite=False, _fault=None) -> DistributedResult:
    """Run the whole analysis on Dask; results equal ``Engine(backend=...).analyze``.

    Parameters
    ----------
    path : str or Path or dask DataFrame
        A Parquet dataset (a folder of files, or one file); a Dask DataFrame is used as is
        (its partitions are the partitions).
    client : distributed.Client
    spec : AnalysisSpec
    backend : Backend or str
        The engine's backend; its name selects the Dask DataFrame backend (pandas/cuDF) and
        the workers' kernels.
    out_dir : path, optional
        Writes ``out_dir/ranking/`` (part files, renamed into place from a temporary sibling
        once every part is written) and then ``out_dir/summary.json`` (atomic; written last).

    Returns
    -------
    DistributedResult
    """
    from dask import delayed
    from distributed import wait

    from .clustering import DEFAULT_FEATURES, FIT_ROWS
    from .io import write_json
    from .metrics import merge_reference_tables

    spec = spec or AnalysisSpec()
    backend_name = backend if isinstance(backend, str) else backend.name
    backend_name = "cpu" if backend_name == "auto" else backend_name
    be = _backend(backend_name)
    timings, notes = {}, list(spec.notes)
    wanted = spec.accelerator_type
    out = Path(out_dir) if out_dir is not None else None
    if out is not None:
        check_target(out, name="--out", overwrite=overwrite, folder=True)
    t_all = time.perf_counter()

    def tick(name, t0):
        timings[name] = round(time.perf_counter() - t0, 4)

    futures_to_release = []
    try:
        # -- pass 1: sizes and reference configurations ------------------------------------
        t0 = time.perf_counter()
        ddf = _read(path, backend_name)
        parts = ddf.to_delayed()
        P = len(parts)
        scans = client.gather(client.compute([delayed(_scan)(p, wanted) for p in parts]))
        rows_in = sum(s["rows_in"] for s in scans)
        if rows_in == 0:
            raise DataError("the table is empty; at least one configuration row is needed")
        if wanted is not None:
            kept = sum(s["rows"] for s in scans)
            if kept == 0:
                present = sorted(set().union(*(s["types"] for s in scans)))
                raise DataError(f"--accelerator-type {wanted!r} matches no row; the table has: "
                                f"{', '.join(present)}")
            if kept < rows_in:
                notes.append(f"{rows_in - kept} rows with accelerator_type other than "
                             f"{wanted!r} left out (--accelerator-type)")
        refs = [s["ref"] for s in scans if s["ref"] is not None]
        ref = merge_reference_tables(refs) if refs else None
        tick("load", t0)

        # -- pass 2: derive, criteria matrix, column statistics -------------------------------
        t0 = time.perf_counter()
        crit_in = spec.criteria
        if not crit_in:
            cols = client.compute(delayed(lambda p: tuple(p.columns))(
                delayed(_derived)(parts[0], wanted, ref))).result() if P else ()
            crit_in = default_criteria(cols)
        criteria = tuple(crit_in)
        prep = [client.compute(delayed(_prepare)(p, wanted, ref, criteria, backend_name))
                for p in parts]
        costs = [client.submit(operator.getitem, f, 0) for f in prep]
        stats = client.gather([client.submit(operator.getitem, f, 1) for f in prep])
        del prep
        n_valid = np.array([s["valid"] for s in stats], dtype=np.int64)
        n_rows = sum(s["rows"] for s in stats)
        bad = n_rows - int(n_valid.sum())
        if bad:
            if not spec.drop_invalid:
                bc = np.any([s["bad_cols"] for s in stats if s["rows"]], axis=0)
                cols = [c.column for j, c in enumerate(criteria) if bc[j]]
                raise DataError(
                    f"{bad} rows have missing or infinite values in criteria "
                    f"{', '.join(cols)}; fix them or pass --drop-invalid to leave those rows out")
            notes.append(f"{bad} rows with missing or infinite criteria dropped (--drop-invalid)")
        N = int(n_valid.sum())
        if N == 0:
            raise DataError("every row has missing or infinite criteria; nothing to rank")
        offsets = np.concatenate(([0], np.cumsum(n_valid)[:-1])).astype(np.int64)
        lo = np.min([s["lo"] for s in stats], axis=0)
        hi = np.max([s["hi"] for s in stats], axis=0)
        from gpurank.kernels import TopsisStats

        topsis_stats = TopsisStats.merge([s["topsis"] for s in stats])
        if N >= 2:
            for j, c in enumerate(criteria):
                if lo[j] == hi[j]:
                    value = -lo[j] if c.sense == "max" else lo[j]
                    raise DataError(
                        f"criterion column '{c.column}' is constant (every value is {value:g}); "
                        "it cannot separate configurations: leave it out of --criteria")
        tick("derive", t0)

        # -- seeded sample: importance and the KMeans fit ---------------------------------
        t0 = time.perf_counter()
        S = min(N, max(FIT_ROWS, spec.sample_rows))
        if S < N:
            rng = np.random.default_rng(spec.seed)
            pick = np.sort(rng.choice(N, size=S, replace=False))
        else:
            pick = np.arange(N)
        locs = [pick[(pick >= o) & (pick < o + k)] - o for o, k in zip(offsets, n_valid)]
        chunks = client.gather(client.compute(
            [delayed(_sample_part)(p, wanted, ref, criteria, backend_name, li)
             for p, li in zip(parts, locs) if len(li)]))
        sample = pd.concat([c for c in chunks if c is not None], ignore_index=True)
        sampled = S < N
        if sampled:
            notes.append(f"importance and KMeans fit use a seeded sample of {S:,} of {N:,} rows "
                         "gathered on the client; cluster labels are predicted on every row")
        tick("sample", t0)

        t0 = time.perf_counter()
        importance = None
        if N < 10:
            notes.append(f"importance skipped: {N} rows are too few to fit a forest (need 10)")
        else:
            from .importance import feature_importance

            importance = feature_importance(
                sample, target=spec.target, backend=be, features=spec.features,
                sample_rows=spec.sample_rows, seed=spec.seed, n_estimators=spec.n_estimators)
            if sampled:
                from dataclasses import replace

                importance = replace(importance, sampled=True)
            if importance.note:
                notes.append(f"importance: {importance.note}")
        tick("importance", t0)

        t0 = time.perf_counter()
        cluster_fit, cl_result = None, None
        if N < 2:
            notes.append("clustering skipped: a table of one row has nothing to group")
        else:
            cluster_fit, cl_result = _fit_clusters(sample, spec, be, DEFAULT_FEATURES, sampled)
            if cl_result.note:
                notes.append(f"clusters: {cl_result.note}")
        tick("cluster_fit", t0)

        # -- Pareto front: local fronts, then a merge of the survivors -----------------------
        t0 = time.perf_counter()
        lf = [client.submit(_local_front, c) for c in costs]
        surv = client.gather([client.submit(operator.getitem, f, 1) for f in lf])
        flags = client.gather([client.submit(operator.getitem, f, 0) for f in lf])
        del lf
        from gpurank.kernels import cpu

        allsurv = np.concatenate(surv) if surv else np.empty((0, len(criteria)))
        merged = cpu.pareto_front(allsurv)
        front_rows, pos = [], 0
        for i, (f, sv) in enumerate(zip(flags, surv)):
            keep = merged[pos:pos + len(sv)]
            front_rows.append(offsets[i] + f[keep])
            pos += len(sv)
        front_rows = np.concatenate(front_rows).astype(np.int64)
        tick("pareto_front", t0)

        # -- domination counts and Pareto ranks ------------------------------------------
        #    exact: key blocks (K(K-1)/2 block pairs); with --count-cap / --rank-depth: local
        #    filters per partition and one merge of the candidates (linear in N)
        n_blocks, cross_pairs, pairs, pruned = 0, 0, 0, 0
        exact = spec.count_cap is None or spec.rank_depth is None
        if exact:
            t0 = time.perf_counter()
            kb = _key_blocks(client, costs, N, len(criteria))
            n_blocks = kb["K"]
            tick("key_blocks", t0)
        t0 = time.perf_counter()
        if spec.count_cap is None:
            # (run before the ranks, not overlapped with them: measured, overlapping delays
            # the ranks' chain of blocks behind running count tasks and costs more than it
            # saves)
            counts, pairs, pruned = _block_counts(client, kb)
        else:
            counts, n_count_cand = _limited(client, costs, n_valid, spec.count_cap, "count",
                                             len(criteria))
        futures_to_release += counts
        wait(counts)
        tick("domination_count", t0)

        t0 = time.perf_counter()
        if spec.rank_depth is None:
            states = _block_ranks(client, kb)
            cross_pairs = kb["pairs"]
        else:
            states, n_rank_cand = _limited(client, costs, n_valid, spec.rank_depth, "state",
                                             len(criteria))
        futures_to_release += states
        wait(states)
        n_fronts = 1 + max(client.gather([client.submit(_max_rank, s) for s in states]))
        if exact:
            del kb
        tick("pareto_rank", t0)

        # -- TOPSIS: global norms and ideal points, then closeness per partition -------------
        t0 = time.perf_counter()
        weights = normalize_weights(criteria)
        w = np.asarray(weights, dtype=np.float64)
        # The in-memory kernel's second pass with the merged column statistics (every
        # criterion is a cost after canonicalization): the same column map and ideal points.
        scores = [client.submit(_topsis_part, c, topsis_stats, w, spec.norm) for c in costs]
        futures_to_release += scores
        k = spec.top
        tops = client.gather([client.submit(_local_top, s, int(o), k)
                              for s, o in zip(scores, offsets)])
        cand_id = np.concatenate([t[0] for t in tops])
        cand_s = np.concatenate([t[1] for t in tops])
        order = np.lexsort((cand_id, -cand_s))[:k]
        topsis_top_k = cand_id[order].astype(np.int64)
        del costs  # every later stage works on scores, ranks and counts (N·m floats freed)
        tick("topsis", t0)

        # -- final rank: a sample sort of the keys (-score, pareto_rank, row_id) ------------
        t0 = time.perf_counter()
        ranks, n_buckets = _final_ranks(client, scores, states, offsets, n_valid, N)
        futures_to_release += ranks
        wait(ranks)
        tick("rank", t0)

        # -- write: each worker re-reads its partition and writes its part file ---------------
        t0 = time.perf_counter()
        ideal, anti = {}, {}
        for j, c in enumerate(criteria):
            sign = -1.0 if c.sense == "max" else 1.0
            ideal[c.column], anti[c.column] = float(sign * lo[j]), float(sign * hi[j])
        metadata = {"criteria": [{"column": c.column, "sense": c.sense, "weight": wt}
                                 for c, wt in zip(criteria, weights)], "backend": backend_name}
        ranking_path = None
        # The whole set (ranking/ and summary.json) is staged beside out_dir and swapped in
        # with one rename once it is complete (gpurank.engine.outputs).
        stack = contextlib.ExitStack()
        if out is not None:
            pub = stack.enter_context(publish_folder(out, kind="analysis-dataset",
                                                     overwrite=overwrite))
            part_dir = pub.path / "ranking"
            part_dir.mkdir()
            metadata["run_id"] = pub.run_id
        else:
            import tempfile

            part_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(
                prefix="gpurank-dask-")))
        with stack:
            results = client.gather(client.compute([
                delayed(_write_part)(p, wanted, ref, criteria, backend_name, int(offsets[i]),
                                     counts[i], states[i], scores[i], ranks[i], cluster_fit,
                                     str(part_dir), i, metadata, k, _fault)
                for i, p in enumerate(parts)]))
            if out is not None:
                (part_dir / _SUCCESS).write_text("")
            tick("write", t0)

            top = pd.concat([r_["top"] for r_ in results if len(r_["top"])], ignore_index=True)
            top = top.sort_values("rank", kind="stable").reset_index(drop=True)
            if cl_result is not None:
                cl_result = _global_sizes(cl_result, results)
            timings["total"] = round(time.perf_counter() - t_all, 4)
            if spec.count_cap is None:
                how_counts = (f"counts: {pairs} block pairs compared, {pruned} settled by bounding "
                              "boxes")
            else:
                how_counts = (f"counts capped at {spec.count_cap}: {n_count_cand:,} candidate rows "
                              "merged")
            if spec.rank_depth is None:
                how_ranks = f"ranks: {n_fronts} Pareto fronts over {cross_pairs} block pairs"
            else:
                how_ranks = (f"ranks to depth {spec.rank_depth}: {n_rank_cand:,} candidate rows "
                             "merged")
            notes.extend(limit_notes(spec))
            blocks_note = f", {n_blocks} key blocks" if exact else ""
            notes.append(f"Dask: {P} partitions{blocks_note}; {how_counts}; {how_ranks}; final "
                         f"rank: sample sort in {n_buckets} bucket{'s' if n_buckets > 1 else ''}")
            summary = _summary(spec, criteria, weights, backend_name, be, N, importance, cl_result,
                               len(front_rows), ideal, anti, top, timings, notes)
            if out is not None:
                summary["run_id"] = pub.run_id
                pub.manifest.update(rows=N, seed=spec.seed, criteria=summary["criteria"])
                write_json(summary, pub.path / "summary.json")
        if out is not None:  # the set is in place now
            ranking_path = out / "ranking"
            summary["notes"] = list(summary["notes"]) + [f"output: {n}" for n in pub.notes]

        def frame():
            import pyarrow.parquet as pq  # noqa: F401

            got = client.gather([client.submit(_columns_frame, counts[i], states[i], scores[i],
                                               ranks[i], int(offsets[i])) for i in range(P)])
            return pd.concat(got, ignore_index=True)

        return DistributedResult(summary=summary, top=top, ranking_path=ranking_path,
                                 topsis_top_k=topsis_top_k, pareto_front_rows=front_rows,
                                 timings=timings, notes=tuple(notes),
                                 columns={"frame": frame})
    except GpurankError:
        raise
    except Exception as exc:
        from distributed.scheduler import KilledWorker

        if isinstance(exc, KilledWorker):
            raise DistributedError(
                f"a Dask worker died repeatedly while running the analysis ({exc}); no output "
                "was written") from exc
        raise


def _key_blocks(client, costs, N, m):
    """Shuffle the costs into K blocks of consecutive ranges of a dominance-compatible key.

    A strided sample of the costs gives, per criterion, a grid of quantiles; the key of a row
    is the sum over criteria of its position in the grids (``grid_key``, an approximate sum
    of per-column ranks in exact integers). A dominator never has a larger key, so block p
    can only be dominated by rows of blocks 0..p. Block boundaries are quantiles of the
    sample's keys. Each input partition sorts its rows by block; block p is the concatenation
    of the partitions' pieces (only costs move).
    """
    from distributed import wait
    from gpurank.kernels.cpu.blocks import grid_key

    P = len(costs)
    stride = max(1, N // _KEY_SAMPLE)
    smp = [x for x in client.gather([client.submit(_strided, c, stride) for c in costs])
           if len(x)]
    smp = np.concatenate(smp) if smp else np.empty((0, m))
    qs = np.linspace(0.0, 1.0, _KEY_GRID + 1)[1:-1]
    grids = tuple(np.unique(np.quantile(smp[:, k], qs, method="lower")) if len(smp)
                  else np.empty(0) for k in range(m))
    n_workers = max(1, len(client.scheduler_info().get("workers", {})))
    want = max(2 * n_workers, -(-N // _BLOCK_ROWS))
    sk = np.sort(grid_key(smp, grids)) if len(smp) else np.empty(0, np.int64)
    thr = (np.unique(sk[(len(sk) * np.arange(1, want)) // want]) if len(sk)
           else np.empty(0, np.int64))
    thr = thr[thr > sk[0]] if len(sk) else thr
    K = len(thr) + 1
    bk = [client.submit(_bucketize, c, grids, thr) for c in costs]
    sizes = np.array(client.gather([client.submit(_bounds, b) for b in bk])).reshape(P, K + 1)
    sizes = np.diff(sizes, axis=1)  # P x K: rows of partition i in block p
    blocks = []
    for p in range(K):
        pieces = [client.submit(_piece, costs[i], bk[i], p) for i in range(P) if sizes[i, p]]
        blocks.append(client.submit(_concat_rows, m, *pieces))
    wait(blocks + bk)
    return {"bk": bk, "sizes": sizes, "blocks": blocks, "K": K, "pairs": 0}


def _to_partitions(client, kb, per_block, wrap, priority=0):
    """Per-block arrays back to the input partitions, in their row order."""
    sizes, out = kb["sizes"], []
    for i in range(sizes.shape[0]):
        sl = []
        for p in range(kb["K"]):
            if sizes[i, p]:
                start = int(sizes[:i, p].sum())
                sl.append(client.submit(_slice, per_block[p], start, start + int(sizes[i, p]),
                                        priority=priority))
        out.append(client.submit(_unbucket, kb["bk"][i], wrap, *sl, priority=priority))
    return out


def _block_counts(client, kb):
    """Domination counts (futures, not waited for): block p's internal count plus
    ``cross_domination_count`` against each earlier block (later blocks cannot dominate),
    the pair settled by the blocks' boxes when they are disjoint or one lies wholly below
    the other."""

    blocks, K = kb["blocks"], kb["K"]
    total = kb["sizes"].sum(axis=0)
    per_block, pairs, pruned = [], 0, 0
    from gpurank.kernels.cpu.blocks import box_relation

    boxes = client.gather([client.submit(_box, b) for b in blocks])
    for p in range(K):
        internal = client.submit(_internal_count, blocks[p])
        extra, crosses = 0, []
        for j in range(p):
            if not total[p] or not total[j]:
                continue
            rel = box_relation(boxes[p], boxes[j])
            if rel == "none":
                pruned += 1
            elif rel == "all":
                extra += int(total[j])
                pruned += 1
            else:
                pairs += 1
                crosses.append(client.submit(_cross, blocks[p], blocks[j]))
        per_block.append(client.submit(_sum_counts, internal, extra, *crosses))
    return _to_partitions(client, kb, per_block, "count"), pairs, pruned


def _block_ranks(client, kb):
    """Exact Pareto ranks (longest dominance chains) without one round trip per front:
    block p is ranked once every earlier block is, ``cross_max_rank`` against each earlier
    block (in parallel, box-pruned) giving lower bounds and ``seeded_rank`` the ranks. The
    whole graph is submitted at once (priority 1: the chain of blocks is the critical path);
    Dask runs it with no client round trip. Returns the states' futures (not waited for)."""
    blocks, K = kb["blocks"], kb["K"]
    total = kb["sizes"].sum(axis=0)
    branks = []
    for p in range(K):
        crosses = []
        if total[p]:
            for j in range(p):
                if total[j]:
                    kb["pairs"] += 1
                    crosses.append(client.submit(_cross_rank, blocks[p], blocks[j], branks[j],
                                                 priority=1))
        branks.append(client.submit(_block_rank, blocks[p], *crosses, priority=1))
    return _to_partitions(client, kb, branks, "state", priority=1)


def _columns_frame(counts, state, score, rank, offset):
    n = len(counts)
    return pd.DataFrame({"row_id": np.arange(n, dtype=np.int64) + offset,
                         "pareto_rank": state[1], "domination_count": counts,
                         "topsis_score": score, "rank": rank})


def _fit_clusters(sample, spec, be, default_features, sampled):
    """KMeans on the sample with the in-memory helpers; returns (what workers need, result)."""
    from .clustering import FIT_ROWS, _fit_kmeans, _silhouette_scan, _stable_order, profile_clusters
    from .results import ClusterResult

    features = tuple(f for f in default_features if f in sample.columns)
    if not features:
        raise UsageError("no cluster feature is in the table; expected some of: "
                         f"{', '.join(default_features)}")
    transform = _cluster_transform(sample, features)
    names = tuple(f"log10({f})" if lg else f for f, lg in zip(features, transform[1]))
    Z, valid = _apply_transform(sample, transform)
    idx = np.flatnonzero(valid)
    notes = []
    if idx.size < len(sample):
        notes.append(f"{len(sample) - idx.size} rows with missing cluster features got cluster -1"
                     + (" (counted in the sample)" if sampled else ""))
    rng = np.random.default_rng(spec.seed)
    fit_idx = np.sort(rng.choice(idx, FIT_ROWS, replace=False)) if idx.size > FIT_ROWS else idx
    k = spec.clusters
    if k != "auto" and k > fit_idx.size:
        raise UsageError(
            f"--clusters {k} is larger than the number of rows that can be clustered "
            f"({fit_idx.size}); use a smaller k or --clusters auto")
    silhouette = _silhouette_scan(be, Z, idx, spec.k_range, spec.seed)
    if k == "auto":
        if not silhouette:
            raise UsageError(f"--clusters auto needs at least {spec.k_range[0] + 1} rows with "
                             f"cluster features; the table has {idx.size}")
        k = max(silhouette, key=lambda kk: (np.nan_to_num(silhouette[kk], nan=-2.0), -kk))
        notes.append(f"k = {k} chosen by silhouette over {min(silhouette)}..{max(silhouette)}")
    if sampled:
        notes.append("KMeans fitted on the seeded sample (standardization and log scales "
                     "taken from it), then applied to all rows; profiles' medians are "
                     "medians of the sample, sizes are exact")
    model = _fit_kmeans(be, np.ascontiguousarray(Z[fit_idx]), k, spec.seed)
    raw = np.full(len(sample), -1, dtype=np.int32)
    raw[idx] = np.asarray(be.to_host(model.predict(np.ascontiguousarray(Z[idx]))))
    labels = _stable_order(sample, raw, k)
    mapping = _complete_mapping(sample, raw, labels, k)
    profiles = profile_clusters(sample, labels)
    result = ClusterResult(labels=np.zeros(0, np.int32), k=int(k), features=names,
                           profiles=profiles, silhouette=silhouette, note="; ".join(notes))
    return (transform, model, mapping), result


def _complete_mapping(sample, raw, labels, k):
    """old KMeans label -> stable label, as ``clustering._stable_order`` numbers them."""
    n_acc = sample["n_accelerators"].to_numpy(dtype=float) if "n_accelerators" in sample else None
    ttt = sample["time_to_train_min"].to_numpy(dtype=float) if "time_to_train_min" in sample else None
    keys = []
    for c in range(k):
        m = raw == c
        a = float(np.nanmedian(n_acc[m])) if n_acc is not None and m.any() else 0.0
        t = float(np.nanmedian(ttt[m])) if ttt is not None and m.any() else 0.0
        keys.append((a, t, c))
    mapping = np.empty(k, dtype=np.int32)
    for new, (_, _, old) in enumerate(sorted(keys)):
        mapping[old] = new
    # Cross-check with the in-memory helper on the sample.
    ok = raw >= 0
    if ok.any() and not np.array_equal(mapping[raw[ok]], labels[ok]):
        raise DistributedError("cluster label mapping disagrees with clustering._stable_order")
    return mapping


def _global_sizes(cl, results):
    from dataclasses import replace

    sizes = np.zeros(cl.k, dtype=np.int64)
    for r in results:
        s = r["sizes"]
        sizes[: len(s)] += s
    prof = cl.profiles.copy()
    if not prof.empty:
        total = max(int(sizes.sum()), 1)
        prof["size"] = [int(sizes[c]) for c in prof["cluster"]]
        prof["share"] = [float(sizes[c] / total) for c in prof["cluster"]]
    return replace(cl, profiles=prof)


def _summary(spec, criteria, weights, backend_name, be, N, importance, clusters, front_size,
             ideal, anti, top, timings, notes):
    """The summary dict with the keys of :func:`summary.build_summary`, built from the top rows
    (the whole table is never gathered)."""
    from dataclasses import replace as _replace

    from .io import to_jsonable
    from .results import AnalysisResult, RankResult
    from .summary import top_columns

    probe = AnalysisResult(
        table=top.drop(columns=["row_id"]), importance=importance, clusters=clusters,
        ranking=RankResult(pareto_rank=np.zeros(0, np.int32), domination_count=np.zeros(0),
                           topsis_score=np.zeros(0), rank=np.zeros(0), criteria=criteria,
                           weights=weights, ideal=ideal, anti_ideal=anti),
        spec=spec if spec.criteria else _replace(spec, criteria=tuple(criteria)),
        backend=backend_name, timings=timings, notes=tuple(notes),
        fallbacks=(be.reason,) if be.reason else ())
    from .summary import build_summary

    summary = build_summary(probe)
    summary["rows"] = int(N)
    summary["pareto_front_size"] = int(front_size)
    summary["top"] = to_jsonable(top[top_columns(probe)].to_dict(orient="records"))
    summary["timings_s"] = dict(timings)
    summary["notes"] = list(notes)
    return summary
