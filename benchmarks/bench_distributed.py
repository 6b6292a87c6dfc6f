"""The Dask path on simulated configurations: time per stage, 1M -> 10M rows.

Run from the benchmarks folder (its own pytest root)::

    cd benchmarks && python -m pytest bench_distributed.py --benchmark-only -s

``BENCH_QUICK=1`` shrinks the sizes to 50k rows (smoke run). ``BENCH_DASK_SIZES=1000000,10000000``
picks sizes. The criteria are ``time_to_train_min:min,cost_usd:min`` (m=2): with the four
default criteria exact domination counts on simulated data cost O(n^2) (the in-memory k-d tree
takes ~80 s at 200k rows on 2 cores), see docs/distributed.md. Stage timings are printed and
stored in ``extra_info``.
"""

import os

import pytest
from gpurank.engine.distributed import analyze_dataset
from gpurank.engine.sources.simulate import simulate_to_parquet
from gpurank.engine.spec import AnalysisSpec, parse_criteria

QUICK = os.environ.get("BENCH_QUICK") == "1"
SIZES = [int(s) for s in os.environ.get(
    "BENCH_DASK_SIZES", "50000" if QUICK else "1000000,10000000").split(",")]
PART_ROWS = 250_000
SPEC = AnalysisSpec(criteria=parse_criteria("time_to_train_min:min,cost_usd:min"),
                    n_estimators=20, k_range=(2, 4), sample_rows=20_000)


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=int(os.environ.get("BENCH_DASK_WORKERS", "2")),
                           processes=True, threads_per_worker=1, dashboard_address=None)
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("dask-bench")
    out = {"warm": root / "warm"}
    simulate_to_parquet(out["warm"], 20_000, seed=1, partitioned=True, row_group_rows=5_000)
    for n in SIZES:
        out[n] = root / f"sim-{n}"
        simulate_to_parquet(out[n], n, seed=0, partitioned=True,
                            row_group_rows=min(PART_ROWS, max(n // 4, 1)))
    return out


@pytest.mark.parametrize("n", SIZES)
def test_dask_analysis(benchmark, client, data, n, tmp_path):
    analyze_dataset(data["warm"], client=client, spec=SPEC, backend="cpu")  # warm the JIT

    def run():
        return analyze_dataset(data[n], client=client, spec=SPEC, backend="cpu",
                               out_dir=tmp_path / "out")

    res = benchmark.pedantic(run, rounds=1, iterations=1)
    benchmark.extra_info.update({"rows": n, **{f"t_{k}": v for k, v in res.timings.items()}})
    print(f"\n{n:,} rows: {res.timings}\n  {res.notes[-1]}")
    assert res.summary["rows"] > 0.9 * n
