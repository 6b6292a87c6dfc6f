"""Planning every SkyPilot catalog together: ``gpurank plan`` on a synthetic catalog folder
shaped like SkyPilot's (``<cloud>/vms.csv``, hundreds of thousands of rows).

Run from the benchmarks folder (its own pytest root)::

    cd benchmarks && python -m pytest bench_plan.py --benchmark-only

The catalog is built from the real excerpt in ``tests/data/skypilot/`` (Lambda's and
RunPod's GPU instance types, their names, counts and prices) the way SkyPilot's clouds lay
theirs out: each cloud lists CPU instance types beside the GPU ones, every type in each of
its regions and availability zones, the on-demand price set per region tier and, for half of
the clouds, a spot price per zone (as AWS's catalog does). ``BENCH_CLOUDS`` sets the number of
clouds (default 20: about 250,000 rows). The target is under 10 s and 2 GB on 2 cores for
reading, planning, ranking and writing (the report, which draws at most 20,000 points, is
timed apart); the figures go to RESULTS.md.
"""

import os
import resource
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gpurank.engine.commands.plan import run_plan_cli

ROOT = Path(__file__).resolve().parents[1]
EXCERPT = ROOT / "tests" / "data" / "skypilot"
CLOUDS = int(os.environ.get("BENCH_CLOUDS", "20"))
REGIONS, ZONES, CPU_TYPES = 30, 3, 100
COLUMNS = ["InstanceType", "AcceleratorName", "AcceleratorCount", "vCPUs", "MemoryGiB",
           "Price", "Region", "GpuInfo", "SpotPrice", "AvailabilityZone"]


def skypilot_like(folder: Path, clouds: int = CLOUDS, seed: int = 0) -> int:
    """Write ``clouds`` SkyPilot-shaped ``vms.csv`` files under ``folder``; return the rows."""
    rng = np.random.default_rng(seed)
    gpu = pd.concat([pd.read_csv(p, dtype=str, keep_default_na=False)
                     for p in sorted(EXCERPT.glob("*/vms.csv"))])
    gpu = gpu.drop_duplicates("InstanceType")[["InstanceType", "AcceleratorName",
                                               "AcceleratorCount", "vCPUs", "MemoryGiB",
                                               "Price", "GpuInfo"]]
    cpu = pd.DataFrame({"InstanceType": [f"c{i}.xlarge" for i in range(CPU_TYPES)],
                        "AcceleratorName": "", "AcceleratorCount": "",
                        "vCPUs": "8.0", "MemoryGiB": "32.0",
                        "Price": [f"{0.05 * (1 + i % 40):.3f}" for i in range(CPU_TYPES)],
                        "GpuInfo": ""})
    types = pd.concat([cpu, gpu], ignore_index=True)
    rows = 0
    for c in range(clouds):
        n = len(types) * REGIONS * ZONES
        t = types.iloc[np.repeat(np.arange(len(types)), REGIONS * ZONES)].reset_index(drop=True)
        region = np.tile(np.repeat(np.arange(REGIONS), ZONES), len(types))
        zone = np.tile(np.arange(REGIONS * ZONES), len(types))
        tier = 1.0 + 0.05 * (region % 5)  # five price tiers across the regions
        base = pd.to_numeric(t["Price"], errors="coerce").fillna(0.0).to_numpy()
        price = base * tier
        spot = np.where(rng.random(n) < 0.9, price * rng.uniform(0.3, 0.6, n), np.nan) \
            if c % 2 == 0 else np.full(n, np.nan)
        df = t.assign(InstanceType=t["InstanceType"] + f"-c{c}",
                      Price=np.round(price, 4).astype(str),
                      Region=[f"region-{r}" for r in region],
                      SpotPrice=np.where(np.isfinite(spot), np.round(spot, 4).astype(str), ""),
                      AvailabilityZone=[f"zone-{z}" for z in zone])[COLUMNS]
        out = folder / f"cloud{c:02d}" / "vms.csv"
        out.parent.mkdir(parents=True, exist_ok=True)
        df.to_csv(out, index=False)
        rows += n
    return rows


@pytest.fixture(scope="module")
def catalogs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("catalogs")
    return folder, skypilot_like(folder)


def test_plan_every_catalog(benchmark, catalogs, tmp_path):
    folder, rows = catalogs
    run_plan_cli("llama31_8b", folder / "cloud00", tmp_path / "warm", backend="cpu",
                 report=False)  # compile the kernels once: the timing measures the plan

    def run():
        t0, c0 = time.perf_counter(), time.process_time()
        summary, result = run_plan_cli("llama31_8b", folder, tmp_path / "plan", backend="cpu",
                                       report=False, overwrite=True)
        return time.perf_counter() - t0, time.process_time() - c0, result

    seconds, cpu_s, result = benchmark.pedantic(run, rounds=1, iterations=1)
    peak_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
    t0 = time.perf_counter()
    from gpurank.engine.report import write_report
    write_report(result.table, {"rows": len(result.table)}, tmp_path / "report.html")
    report_s = time.perf_counter() - t0
    benchmark.extra_info.update({"catalog_rows": rows, "plan_rows": len(result.table),
                                 "seconds": seconds, "cpu_seconds": cpu_s,
                                 "peak_rss_gb": peak_gb,
                                 "report_s": report_s,
                                 **{f"step_{k}_s": v for k, v in result.timings.items()}})
    print(f"\n{rows:,} catalog rows -> {len(result.table):,} offer sizes in {seconds:.2f} s "
          f"({cpu_s:.2f} CPU s); "
          f"peak RSS {peak_gb:.2f} GB; report {report_s:.2f} s; steps {result.timings}")
    assert len(result.table) > 0
