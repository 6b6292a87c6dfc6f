"""The Dask path on simulated configurations: time per stage and peak memory, 200k -> 100M rows.

Run from the benchmarks folder (its own pytest root)::

    cd benchmarks && python -m pytest bench_distributed.py --benchmark-only -s

or as a script (no pytest-benchmark needed)::

    python benchmarks/bench_distributed.py 200000 1000000
    python benchmarks/bench_distributed.py 10000000 --compare --check --json out.jsonl

``--compare`` then runs the in-memory analysis (``gpurank analyze`` in its own process, as
``bench_e2e.py`` does) on the same Parquet folder, prints the ratio of the two wall times and
checks that ``pareto_rank``, ``domination_count`` and ``rank`` are identical row for row.
``--check`` checks the Dask output on its own (for sizes the in-memory path cannot hold):
``rank`` is a permutation of 1..N, and the rows of Pareto rank 0 are exactly the rows with
no dominator and the rows of the separate Pareto-front stage (``pareto_front`` kernels, local
fronts then one merge). Besides the stage times, each run reports the CPU seconds of every
process of the run, the bytes Dask spilled to disk (the workers' ``disk-write`` digests) and
the load average before and after.

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

import numpy as np
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


def _cpu_seconds():
    """User + system CPU seconds of this process and every process under it."""
    import psutil

    me = psutil.Process()
    total = 0.0
    for p in [me, *me.children(recursive=True)]:
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.Error:
            pass
    return total


def _disk_write_bytes(dask_worker):
    return sum(v for k, v in dask_worker.digests_total.items()
               if "disk-write" in str(k) and "bytes" in str(k))


def _spilled(client):
    """Bytes the workers have spilled to disk so far (pickled sizes)."""
    return int(sum(client.run(_disk_write_bytes).values()))


def measure(client, path, out_dir, spec=SPEC):
    """One run with memory polled every 0.5 s: (result, peak RSS of one worker, peak RSS of
    the whole run: this process (client and local scheduler) plus every process under it
    (nannies and workers), summed at each poll, and a dict of the run's CPU seconds, spilled
    bytes and load averages)."""
    peak, total, stop = [0], [0], threading.Event()
    extra = {"load_before": os.getloadavg(), "spilled_before": _spilled(client),
             "cpu_before": _cpu_seconds()}

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
        res = analyze_dataset(path, client=client, spec=spec, backend="cpu", out_dir=out_dir,
                              announce=lambda line: print(line, flush=True))
    finally:
        stop.set()
        th.join()
    extra.update(cpu_s=_cpu_seconds() - extra.pop("cpu_before"), load_after=os.getloadavg(),
                 spilled_bytes=_spilled(client) - extra.pop("spilled_before"))
    return res, peak[0], total[0], extra


def _line(n, res, peak, total, wall, extra):
    client_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    load = "/".join(f"{x:.2f}" for x in extra["load_before"][:1] + extra["load_after"][:1])
    return (f"{n:,} rows: wall {wall:.1f} s, CPU {extra['cpu_s']:.0f} s (all processes), "
            f"peak RSS of the run (all processes) {total / 2**30:.2f} GiB, largest worker "
            f"{peak / 2**30:.2f} GiB, client max RSS {client_rss / 2**30:.2f} GiB, spilled "
            f"{extra['spilled_bytes'] / 2**30:.2f} GiB, load average before/after {load}\n"
            f"  {res.timings}\n  {res.notes[-1]}")


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
        box["res"], box["peak"], box["total"], box["extra"] = measure(client, data[n],
                                                                      tmp_path / "out")
        box["wall"] = time.perf_counter() - t
        return box["res"]

    res = benchmark.pedantic(run, rounds=1, iterations=1)
    benchmark.extra_info.update({"rows": n, "peak_worker_rss": box["peak"],
                                 "peak_total_rss": box["total"],
                                 "cpu_s": box["extra"]["cpu_s"],
                                 "spilled_bytes": box["extra"]["spilled_bytes"],
                                 **{f"t_{k}": v for k, v in res.timings.items()}})
    print("\n" + _line(n, res, box["peak"], box["total"], box["wall"], box["extra"]))
    assert res.summary["rows"] > 0.9 * n


def _columns(folder, names):
    """``names`` of a ranking (one Parquet file, or a folder of part files with ``row_id``)
    in row order."""
    import pyarrow.parquet as pq

    table = pq.read_table(folder, columns=list(names))
    cols = {c: table.column(c).to_numpy() for c in names}
    if "row_id" in cols:
        order = np.argsort(cols.pop("row_id"), kind="stable")
        cols = {c: v[order] for c, v in cols.items()}
    return cols


def compare_in_memory(path, dask_out, work):
    """The in-memory analysis of the same folder in its own process (``bench_e2e.analyze``),
    and whether its Pareto ranks, domination counts and final ranks equal the Dask run's."""
    from bench_e2e import analyze

    got = analyze(path, work / "in-memory")
    names = ("pareto_rank", "domination_count", "rank")
    mem = _columns(work / "in-memory" / "ranking.parquet", names)
    dsk = _columns(dask_out / "ranking", ("row_id", *names))
    got["identical"] = {c: bool(np.array_equal(mem[c], dsk[c])) for c in names}
    return got


def check_output(dask_out, front_rows, n):
    """Checks of a Dask output by other methods, streamed file by file: ``rank`` is a
    permutation of 1..n; rows of Pareto rank 0 = rows with no dominator = the rows of the
    separate Pareto-front stage."""
    import pyarrow.parquet as pq

    seen = np.zeros(n + 1, dtype=bool)
    front, bad_rank, mismatch = [], 0, 0
    for f in sorted((dask_out / "ranking").glob("part-*.parquet")):
        t = pq.read_table(f, columns=["row_id", "rank", "pareto_rank", "domination_count"])
        rank = t.column("rank").to_numpy()
        bad_rank += int(((rank < 1) | (rank > n)).sum())
        ok = rank[(rank >= 1) & (rank <= n)]
        bad_rank += int(seen[ok].sum())
        seen[ok] = True
        zero_rank = t.column("pareto_rank").to_numpy() == 0
        mismatch += int((zero_rank != (t.column("domination_count").to_numpy() == 0)).sum())
        front.append(t.column("row_id").to_numpy()[zero_rank])
    front = np.sort(np.concatenate(front)) if front else np.zeros(0, np.int64)
    return {"rank_is_permutation": bad_rank == 0 and bool(seen[1:].all()),
            "front_rows": int(len(front)),
            "front_equals_no_dominator": mismatch == 0,
            "front_equals_front_stage": bool(np.array_equal(front, np.sort(front_rows)))}


def main(argv):
    """Script mode: ``python bench_distributed.py N [N ...] [--compare] [--check] [--json F]``
    (data cached under ``$BENCH_DASK_DATA``, default /tmp/gpurank-dask-bench)."""
    import argparse
    import json
    from pathlib import Path

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sizes", nargs="*", type=int, default=SIZES)
    ap.add_argument("--compare", action="store_true",
                    help="also run in memory; compare times and answers")
    ap.add_argument("--check", action="store_true", help="check the output by other methods")
    ap.add_argument("--defaults", action="store_true",
                    help="gpurank analyze's default options (implied by --compare) instead of "
                         "the lighter forest and clustering of SPEC")
    ap.add_argument("--json", default=None, help="append one JSON object per size to this file")
    a = ap.parse_args(argv)
    root = Path(os.environ.get("BENCH_DASK_DATA", "/tmp/gpurank-dask-bench"))
    root.mkdir(parents=True, exist_ok=True)
    spec = SPEC
    if a.defaults or a.compare:
        spec = AnalysisSpec(rank_depth=SPEC.rank_depth, count_cap=SPEC.count_cap)
    cluster, client = _cluster()
    try:
        analyze_dataset(_simulate(root, 20_000), client=client, spec=spec, backend="cpu")
        for n in a.sizes:
            path = _simulate(root, n)
            t = time.perf_counter()
            res, peak, total, extra = measure(client, path, root / f"out-{n}", spec)
            wall = time.perf_counter() - t
            print(_line(n, res, peak, total, wall, extra), flush=True)
            record = {"rows": n, "wall_s": wall, "timings_s": res.timings, "peak_total_rss":
                      total, "peak_worker_rss": peak, **extra, "notes": res.notes[-1]}
            if a.check:
                record["check"] = check_output(root / f"out-{n}", res.pareto_front_rows,
                                               res.summary["rows"])
                print(f"  check: {record['check']}", flush=True)
            if a.compare:
                load = os.getloadavg()[0]
                mem = compare_in_memory(path, root / f"out-{n}", root)
                record["in_memory"] = {**mem, "load_before": load}
                print(f"  in memory: wall {mem['wall_s']:.1f} s (load {load:.2f}), peak RSS "
                      f"{mem['peak_rss_mb'] / 1024:.2f} GB, Dask / in memory "
                      f"{wall / mem['wall_s']:.2f}x, identical {mem['identical']}", flush=True)
            if a.json:
                with open(a.json, "a") as fh:
                    fh.write(json.dumps(record, default=str) + "\n")
    finally:
        client.close()
        cluster.close()


if __name__ == "__main__":
    main(sys.argv[1:])
