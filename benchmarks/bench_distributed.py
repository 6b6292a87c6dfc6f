"""The Dask path on simulated configurations: time per stage and memory, 200k -> 100M rows.

Run from the benchmarks folder (its own pytest root)::

    cd benchmarks && python -m pytest bench_distributed.py --benchmark-only -s

or as a script (no pytest-benchmark needed)::

    python benchmarks/bench_distributed.py 200000 1000000
    python benchmarks/bench_distributed.py 10000000 --compare --check --json out.jsonl

``--compare`` then runs the in-memory analysis (``gpurank analyze`` in its own process, as
``bench_e2e.py`` does) on the same Parquet folder, prints the ratio of the two wall times and
checks that ``pareto_rank``, ``domination_count`` and ``rank`` are identical row for row.
``--check`` checks the Dask output on its own (for sizes the in-memory path cannot hold),
streamed file by file: ``rank`` is a permutation of 1..N; the rows of Pareto rank 0 are the
rows of domination count 0 and those of the separate Pareto-front stage; by brute force
(every pair compared: no sort, no divide and conquer) no row dominates a front row and every
other row has a dominator on the front, so the front is exactly the non-dominated rows; and
for 256 rows drawn at random the domination count and the Pareto rank (1 + the largest rank
among the row's dominators) recomputed against every row are the reported ones. Besides the
stage times, each run reports the CPU seconds of every process of the run, the bytes Dask
spilled to disk (the workers' ``disk-write`` digests), the workers' time by activity (CPU
and off-CPU time in tasks per task name, spill writes and reads, fetches) and the load
average before and after.

``BENCH_QUICK=1`` shrinks the sizes to 50k rows (smoke run). ``BENCH_DASK_DEPTH=D`` and
``BENCH_DASK_CAP=C`` run with ``rank_depth=D`` / ``count_cap=C`` (clipped ranks and capped
counts by local filters and one merge, linear in rows; exact otherwise, by the divide and
conquer over key ranges). ``BENCH_DASK_SIZES=1000000,10000000`` picks sizes,
``BENCH_DASK_WORKERS`` the worker processes (2), ``BENCH_DASK_MEMORY`` each worker's memory
limit (``_cluster``), ``BENCH_DASK_TASK_STREAM=1`` records Dask's task stream and adds
its summary per task name to the JSON record. The criteria are the four defaults
(``time_to_train_min`` min, ``throughput_per_accelerator`` max, ``scaling_efficiency`` max,
``cost_usd`` min); input partitions of at most 250,000 rows
(``simulate_to_parquet(..., partitioned=True)``). Stage timings, the peak RSS of the worker
processes and of the whole run (polled every 0.5 s) and of the client are printed and stored
in ``extra_info``.
"""

import contextlib
import os
import resource
import sys
import threading
import time

import numpy as np
import pytest
from gpurank.engine.distributed import analyze_dataset
from gpurank.engine.sources.sweep.simulate import simulate_to_parquet
from gpurank.engine.spec import AnalysisSpec
from numba import njit, prange

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


def _activity(dask_worker):
    """A worker's time so far by activity, from its metrics: CPU of the tasks and their time
    off the CPU (waiting for a core, the GIL, the disk or memory; other threads a kernel
    starts), each per task name too; spilled data written and read back (seconds and
    bytes); data fetched from other workers."""
    out = {}
    for key, v in dask_worker.digests_total.items():
        if not isinstance(key, tuple) or key[-1] not in ("seconds", "bytes"):
            continue
        label, unit = key[-2], key[-1]
        if label in ("disk-write", "disk-read"):
            name = f"{label} {unit}"
        elif key[0] == "execute" and label in ("thread-cpu", "thread-noncpu") and \
                unit == "seconds":
            name = f"task {label}"
            task = f"{'cpu' if label == 'thread-cpu' else 'off'} {key[2]}"
            out[task] = out.get(task, 0.0) + v
        elif key[0] == "gather-dep" and unit == "seconds":
            name = "fetch seconds"
        else:
            continue
        out[name] = out.get(name, 0.0) + v
    return out


def _activities(client):
    total = {}
    for got in client.run(_activity).values():
        for k, v in got.items():
            total[k] = total.get(k, 0.0) + v
    return total


def measure(client, path, out_dir, spec=SPEC):
    """One run with memory polled every 0.5 s: (result, peak RSS of one worker, peak RSS of
    the whole run: this process (client and local scheduler) plus every process under it
    (nannies and workers), summed at each poll, and a dict of the run's CPU seconds, spilled
    bytes and load averages)."""
    peak, total, stop = [0], [0], threading.Event()
    extra = {"load_before": os.getloadavg(), "spilled_before": _spilled(client),
             "cpu_before": _cpu_seconds(), "activity_before": _activities(client)}

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
    stream = contextlib.nullcontext(None)
    if os.environ.get("BENCH_DASK_TASK_STREAM") == "1":
        from distributed import get_task_stream

        stream = get_task_stream(client)
    try:
        with stream as ts:
            res = analyze_dataset(path, client=client, spec=spec, backend="cpu",
                                  out_dir=out_dir, announce=lambda line: print(line, flush=True))
    finally:
        stop.set()
        th.join()
    if ts is not None:
        extra["task_stream"] = _stream_summary(ts.data)
    extra.update(cpu_s=_cpu_seconds() - extra.pop("cpu_before"), load_after=os.getloadavg(),
                 spilled_bytes=_spilled(client) - extra.pop("spilled_before"))
    before, after = extra.pop("activity_before"), _activities(client)
    act = {k: v - before.get(k, 0.0) for k, v in after.items()}
    extra["workers"] = {k: round(v, 1) for k, v in sorted(act.items()) if not
                        k.startswith(("cpu ", "off "))}
    for kind, label in (("cpu ", "workers_cpu_by_task"), ("off ", "workers_off_cpu_by_task")):
        extra[label] = dict(sorted(((k[4:], round(v, 1)) for k, v in act.items()
                                    if k.startswith(kind) and v >= 0.5),
                                   key=lambda kv: -kv[1]))
    return res, peak[0], total[0], extra


def _stream_summary(records):
    """Per task name: tasks, seconds computing, seconds fetching inputs, seconds reading or
    writing spilled data (Dask's task stream, ``BENCH_DASK_TASK_STREAM=1``); and per worker
    the seconds it ran a task."""
    from dask.utils import key_split

    per, busy = {}, {}
    for r in records:
        name = key_split(r["key"]).lstrip("_")
        row = per.setdefault(name, {"tasks": 0})
        row["tasks"] += 1
        for ss in r["startstops"]:
            d = ss["stop"] - ss["start"]
            row[ss["action"]] = row.get(ss["action"], 0.0) + d
            if ss["action"] == "compute":
                busy[r["worker"]] = busy.get(r["worker"], 0.0) + d
    rows = {k: {a: (round(v, 1) if isinstance(v, float) else v) for a, v in row.items()}
            for k, row in sorted(per.items(), key=lambda kv: -kv[1].get("compute", 0.0))}
    return {"per_task": rows, "busy_s": {w: round(v, 1) for w, v in busy.items()}}


def _line(n, res, peak, total, wall, extra):
    client_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    load = "/".join(f"{x:.2f}" for x in extra["load_before"][:1] + extra["load_after"][:1])
    return (f"{n:,} rows: wall {wall:.1f} s, CPU {extra['cpu_s']:.0f} s (all processes), "
            f"peak RSS of the run (all processes) {total / 2**30:.2f} GiB, largest worker "
            f"{peak / 2**30:.2f} GiB, client max RSS {client_rss / 2**30:.2f} GiB, spilled "
            f"{extra['spilled_bytes'] / 2**30:.2f} GiB, load average before/after {load}\n"
            f"  {res.timings}\n  {res.notes[-1]}\n  workers: {extra['workers']}\n"
            f"  workers' CPU by task: {extra['workers_cpu_by_task']}\n"
            f"  in tasks off the CPU: {extra['workers_off_cpu_by_task']}")


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


@njit(parallel=True, cache=True)
def _dominators(probe, rows, first_only):
    """For each row of ``probe``, how many rows of ``rows`` dominate it (all columns <=, one
    <; every column minimized) and the largest ``rows`` rank among them (-1: none), by
    comparing every pair; with ``first_only`` each probe stops at its first dominator."""
    n, m = probe.shape
    count = np.zeros(n, np.int64)
    top = np.full(n, -1, np.int64)
    for i in prange(n):
        c, t = 0, -1
        for j in range(rows.shape[0]):
            below, strict = True, False
            for k in range(m):
                a, b = rows[j, k], probe[i, k]
                if a > b:
                    below = False
                    break
                if a < b:
                    strict = True
            if below and strict:
                c += 1
                r = np.int64(rows[j, m])
                if r > t:
                    t = r
                if first_only:
                    break
        count[i], top[i] = c, t
    return count, top


def _minimized(table, criteria):
    """The criteria columns of a ranking part, every one minimized (a maximized column
    negated: exact), then its Pareto rank as the last column."""
    cols = [table.column(c["column"]).to_numpy().astype(np.float64) *
            (-1.0 if c["sense"] == "max" else 1.0) for c in criteria]
    cols.append(table.column("pareto_rank").to_numpy().astype(np.float64))
    return np.ascontiguousarray(np.column_stack(cols))


def check_output(dask_out, front_rows, n, *, sample=256, seed=0):
    """Checks of a Dask output by other methods, streamed file by file.

    * ``rank`` is a permutation of 1..n;
    * the rows of Pareto rank 0 are the rows of domination count 0 and those of the separate
      Pareto-front stage (local fronts merged);
    * brute force, every pair compared (no sort, no divide and conquer): no row of the whole
      table dominates a front row, and every other row has a dominator on the front: so the
      front is exactly the set of non-dominated rows;
    * brute force on ``sample`` rows drawn at random (seeded): their domination count is the
      number of rows that dominate them, and their Pareto rank is 1 + the largest Pareto rank
      among those rows (0 with none), the recurrence that defines the ranks."""
    import json

    import pyarrow.parquet as pq

    criteria = json.loads((dask_out / "summary.json").read_text())["criteria"]
    names = [c["column"] for c in criteria]
    files = sorted((dask_out / "ranking").glob("part-*.parquet"))
    picked = np.sort(np.random.default_rng(seed).choice(n, size=min(sample, n), replace=False))
    seen = np.zeros(n + 1, dtype=bool)
    front, probes, bad_rank, mismatch = [], [], 0, 0
    t0 = time.perf_counter()
    for f in files:  # pass 1: ranks, the front and the sampled rows
        t = pq.read_table(f, columns=["row_id", "rank", "pareto_rank", "domination_count",
                                      *names])
        rank = t.column("rank").to_numpy()
        bad_rank += int(((rank < 1) | (rank > n)).sum())
        ok = rank[(rank >= 1) & (rank <= n)]
        bad_rank += int(seen[ok].sum())
        seen[ok] = True
        pr = t.column("pareto_rank").to_numpy()
        dc = t.column("domination_count").to_numpy()
        mismatch += int(((pr == 0) != (dc == 0)).sum())
        ids = t.column("row_id").to_numpy()
        costs = _minimized(t, criteria)
        front.append((ids[pr == 0], costs[pr == 0]))
        hit = np.isin(ids, picked)
        probes.append((ids[hit], costs[hit], dc[hit]))
    front_ids = np.concatenate([i for i, _ in front])
    order = np.argsort(front_ids)
    front_ids, front_costs = front_ids[order], np.concatenate([c for _, c in front])[order]
    p_ids = np.concatenate([i for i, _, _ in probes])
    p_costs = np.concatenate([c for _, c, _ in probes])
    p_counts = np.concatenate([d for _, _, d in probes])
    m = len(criteria)
    front_dominated = 0
    no_front_dominator = 0
    got_counts = np.zeros(len(p_ids), np.int64)
    got_top = np.full(len(p_ids), -1, np.int64)
    for f in files:  # pass 2: every pair, brute force
        t = pq.read_table(f, columns=["pareto_rank", *names])
        rows = _minimized(t, criteria)
        c, _ = _dominators(front_costs[:, :m], rows, True)
        front_dominated += int((c > 0).sum())
        rest = rows[rows[:, m] > 0]
        c, _ = _dominators(rest[:, :m], front_costs, True)
        no_front_dominator += int((c == 0).sum())
        c, top = _dominators(p_costs[:, :m], rows, False)
        got_counts += c
        got_top = np.maximum(got_top, top)
    return {"rank_is_permutation": bad_rank == 0 and bool(seen[1:].all()),
            "front_rows": int(len(front_ids)),
            "front_equals_no_dominator": mismatch == 0,
            "front_equals_front_stage": bool(np.array_equal(front_ids, np.sort(front_rows))),
            "brute_force_front_rows_dominated": front_dominated,
            "brute_force_rows_without_front_dominator": no_front_dominator,
            "sampled_rows": int(len(p_ids)),
            "sampled_counts_equal": bool(np.array_equal(got_counts, p_counts)),
            "sampled_ranks_equal": bool(np.array_equal(got_top + 1, p_costs[:, m])),
            "check_s": round(time.perf_counter() - t0, 1)}


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
