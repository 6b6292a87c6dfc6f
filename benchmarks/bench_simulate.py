"""Simulator throughput: pytest-benchmark suite and a plain script.

    pytest benchmarks/bench_simulate.py                  # benchmark suite (own pytest root)
    BENCH_QUICK=1 pytest benchmarks/bench_simulate.py    # small sizes, smoke run
    python benchmarks/bench_simulate.py --n 10000000     # script: rows/s and peak RSS
    python benchmarks/bench_simulate.py --n 10000000 --batch fastest   # the chosen batch

The script streams to Parquet (the 10M-row target: < 60 s, < 4 GB peak RSS on 2 cores) and
prints rows/s and the process's peak resident memory.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

QUICK = os.environ.get("BENCH_QUICK") == "1"
N_MEM = 20_000 if QUICK else 1_000_000
N_PARQUET = 50_000 if QUICK else 2_000_000


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def test_simulate_in_memory(benchmark):
    from gpurank.engine.sources.sweep.simulate import simulate

    df = benchmark.pedantic(simulate, args=(N_MEM,), kwargs={"seed": 0}, rounds=3, iterations=1)
    assert len(df) == N_MEM
    assert df["throughput"].gt(0).all()


def test_simulate_to_parquet(benchmark, tmp_path):
    from gpurank.engine.sources.sweep.simulate import simulate_to_parquet

    out = tmp_path / "sweep.parquet"
    info = benchmark.pedantic(simulate_to_parquet, args=(out, N_PARQUET), kwargs={"seed": 0},
                              rounds=2, iterations=1)
    assert info["rows"] == N_PARQUET


def test_simulate_fastest_batch(benchmark):
    from gpurank.engine.sources.sweep.simulate import simulate

    df = benchmark.pedantic(simulate, args=(N_MEM // 4,), kwargs={"seed": 0, "batch": "fastest"},
                            rounds=2, iterations=1)
    assert len(df) > 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--row-group-rows", type=int, default=1_000_000)
    ap.add_argument("--partitioned", action="store_true")
    ap.add_argument("--in-memory", action="store_true", help="simulate() instead of streaming")
    ap.add_argument("--batch", default="drawn", choices=("drawn", "fastest"),
                    help="each row's batch drawn, or the fastest to train (--batch fastest)")
    ap.add_argument("--workload", default=None, help="a shipped workload (default ResNet-50)")
    ap.add_argument("-o", "--output", default=None, help="Parquet path (default: a temp dir)")
    a = ap.parse_args(argv)
    from gpurank.engine.sources.model.workloads import workload
    from gpurank.engine.sources.sweep.simulate import simulate, simulate_to_parquet

    kw = {"batch": a.batch, "workload": workload(a.workload) if a.workload else None}
    t0 = time.perf_counter()
    if a.in_memory:
        df = simulate(a.n, seed=a.seed, **kw)
        rows, extra = len(df), f"{df.memory_usage(deep=True).sum() / 2**20:.0f} MiB DataFrame"
    else:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(a.output) if a.output else Path(tmp) / "sweep.parquet"
            info = simulate_to_parquet(out, a.n, seed=a.seed, row_group_rows=a.row_group_rows,
                                       partitioned=a.partitioned, **kw)
            rows = info["rows"]
            size = sum(p.stat().st_size for p in ([out] if out.is_file() else out.rglob("*")))
            extra = f"{info['row_groups']} row groups, {size / 2**20:.0f} MiB on disk"
    dt = time.perf_counter() - t0
    print(f"rows={rows:,} seconds={dt:.2f} rows_per_s={rows / dt:,.0f} "
          f"peak_rss_mb={_peak_rss_mb():,.0f} ({extra})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
