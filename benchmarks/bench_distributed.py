"""The Dask path on simulated configurations: time per stage and peak memory, 200k -> 10M rows.

Run from the benchmarks folder (its own pytest root)::

    cd benchmarks && python -m pytest bench_distributed.py --benchmark-only -s

or as a script (no pytest-benchmark needed)::

    python benchmarks/bench_distributed.py 200000 1000000

``BENCH_QUICK=1`` shrinks the sizes to 50k rows (smoke run). ``BENCH_DASK_DEPTH=D`` and
``BENCH_DASK_CAP=C`` run with ``rank_depth=D`` / ``count_cap=C`` (clipped ranks and capped
counts by local filters and one merge, linear in rows; the exact key-block scheme otherwise). ``BENCH_DASK_SIZES=1000000,10000000``
picks sizes, ``BENCH_DASK_WORKERS`` the worker processes (2). The criteria are the four
defaults (``time_to_train_min`` min, ``throughput_per_accelerator`` max,
``scaling_efficiency`` max, ``cost_usd`` min); input partitions of at most 250,000 rows
(``simulate_to_parquet(..., partitioned=True)``). Stage timings, the peak RSS of the worker
processes (polled every 0.5 s) and of the client are printed and stored in ``extra_info``.
"""

import os
import resource
import sys
import threading
import time

import pytest
from gpurank.engine.distributed import analyze_dataset
from gpurank.engine.sources.simulate import simulate_to_parquet
from gpurank.engine.spec import AnalysisSpec

QUICK = os.environ.get("BENCH_QUICK") == "1"
SIZES = [int(s) for s in os.environ.get(
    "BENCH_DASK_SIZES", "50000" if QUICK else "200000,1000000").split(",")]
WORKERS = int(os.environ.get("BENCH_DASK_WORKERS", "2"))
PART_ROWS = 250_000

def _opt(name):
    v = os.environ.get(name)
    return int(v) if v else None


SPEC = AnalysisSpec(n_estimators=20, k_range=(2, 4), sample_rows=20_000,
                    rank_depth=_opt("BENCH_DASK_DEPTH"), count_cap=_opt("BENCH_DASK_CAP"))


def _cluster():
    """``BENCH_DASK_MEMORY`` (e.g. ``3GiB``) sets each worker's memory limit: Dask then
    spills held results to disk beyond 60-70% of it and pauses the worker at 80% (workers
    are never killed for memory here), which keeps a 100M-row run within a fixed budget."""
    import dask
    from distributed import Client, LocalCluster

    limit = os.environ.get("BENCH_DASK_MEMORY")
    if limit:
        dask.config.set({"distributed.worker.memory.terminate": False})
    cluster = LocalCluster(n_workers=WORKERS, processes=True, threads_per_worker=1,
                           dashboard_address=None, memory_limit=limit or "auto")
    return cluster, Client(cluster)


def _simulate(root, n):
    path = root / f"sim-{n}"
    if not path.exists():
        simulate_to_parquet(path, n, seed=0, partitioned=True,
                            row_group_rows=min(PART_ROWS, max(n // 4, 1)))
    return path


def measure(client, path, out_dir):
    """One run with memory polled every 0.5 s: (result, peak RSS of one worker, peak RSS of
    the whole run: this process (client and local scheduler) plus every process under it
    (nannies and workers), summed at each poll)."""
    peak, total, stop = [0], [0], threading.Event()

    def poll():
        import psutil

        me = psutil.Process()
        while not stop.is_set():
            procs = [me, *me.children(recursive=True)]
            rss = []
            for p in procs:
                try:
                    rss.append((p, p.memory_info().rss))
                except psutil.Error:  # a worker restarting; keep polling
                    pass
            total[0] = max(total[0], sum(r for _, r in rss))
            workers = [r for p, r in rss if p is not me]
            if workers:
                peak[0] = max(peak[0], *workers)
            stop.wait(0.5)

    th = threading.Thread(target=poll, daemon=True)
    th.start()
    try:
        res = analyze_dataset(path, client=client, spec=SPEC, backend="cpu", out_dir=out_dir)
    finally:
        stop.set()
        th.join()
    return res, peak[0], total[0]


def _line(n, res, peak, total, wall):
    client_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return (f"{n:,} rows: wall {wall:.1f} s, peak RSS of the run (all processes) "
            f"{total / 2**30:.2f} GiB, largest worker {peak / 2**30:.2f} GiB, client max RSS "
            f"{client_rss / 2**30:.2f} GiB\n  {res.timings}\n  {res.notes[-1]}")


@pytest.fixture(scope="module")
def client():
    cluster, c = _cluster()
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("dask-bench")
    out = {"warm": root / "warm"}
    simulate_to_parquet(out["warm"], 20_000, seed=1, partitioned=True, row_group_rows=5_000)
    for n in SIZES:
        out[n] = _simulate(root, n)
    return out


@pytest.mark.parametrize("n", SIZES)
def test_dask_analysis(benchmark, client, data, n, tmp_path):
    analyze_dataset(data["warm"], client=client, spec=SPEC, backend="cpu")  # warm the JIT
    box = {}

    def run():
        t = time.perf_counter()
        box["res"], box["peak"], box["total"] = measure(client, data[n], tmp_path / "out")
        box["wall"] = time.perf_counter() - t
        return box["res"]

    res = benchmark.pedantic(run, rounds=1, iterations=1)
    benchmark.extra_info.update({"rows": n, "peak_worker_rss": box["peak"],
                                 "peak_total_rss": box["total"],
                                 **{f"t_{k}": v for k, v in res.timings.items()}})
    print("\n" + _line(n, res, box["peak"], box["total"], box["wall"]))
    assert res.summary["rows"] > 0.9 * n


def main(argv):
    """Script mode: ``python bench_distributed.py N [N ...]`` (data cached under
    ``$BENCH_DASK_DATA``, default /tmp/gpurank-dask-bench)."""
    from pathlib import Path

    root = Path(os.environ.get("BENCH_DASK_DATA", "/tmp/gpurank-dask-bench"))
    root.mkdir(parents=True, exist_ok=True)
    sizes = [int(a) for a in argv] or SIZES
    cluster, client = _cluster()
    try:
        analyze_dataset(_simulate(root, 20_000), client=client, spec=SPEC, backend="cpu")
        for n in sizes:
            path = _simulate(root, n)
            t = time.perf_counter()
            res, peak, total = measure(client, path, root / f"out-{n}")
            print(_line(n, res, peak, total, time.perf_counter() - t), flush=True)
    finally:
        client.close()
        cluster.close()


if __name__ == "__main__":
    main(sys.argv[1:])
