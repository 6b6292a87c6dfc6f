"""End to end on the CPU: ``gpurank simulate`` to Parquet, then ``gpurank analyze``.

    cd benchmarks && pytest bench_e2e.py                  # benchmark suite (1M rows)
    cd benchmarks && BENCH_QUICK=1 pytest bench_e2e.py    # small sizes, smoke run
    python benchmarks/bench_e2e.py 1000000 10000000       # script: per-step table
    python benchmarks/bench_e2e.py 1000000 --count-cap 8  # other options go to analyze

Each size is simulated once (``gpurank simulate --n N --seed 0``) into a temporary folder;
the analysis then runs as a user runs it: its own process, default options, ``--no-report``,
``--backend cpu``. The script prints the load average, the wall time of the analysis, its
per-step times (``timings_s`` of summary.json) and the analysis process's peak resident
memory (from ``wait4``, so the simulation's memory is not mixed in). The 10M-row target on
2 cores: <= 120 s and <= 8 GB.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUICK = os.environ.get("BENCH_QUICK") == "1"
N_BENCH = 20_000 if QUICK else 1_000_000


def _gpurank(*args: str) -> list[str]:
    return [sys.executable, "-m", "gpurank.engine", *args]


def simulate(n: int, folder: Path, *, seed: int = 0) -> Path:
    """Write ``n`` simulated configurations to ``folder/sweep.parquet``; return the path."""
    out = folder / "sweep.parquet"
    subprocess.run(_gpurank("simulate", "--n", str(n), "--seed", str(seed), "-o", str(out),
                            "--overwrite"), check=True, stdout=subprocess.DEVNULL)
    return out


def analyze(table: Path, out: Path, *extra: str) -> dict:
    """Run ``gpurank analyze TABLE --no-report --backend cpu`` in its own process.

    Returns
    -------
    dict
        ``wall_s`` (the whole process), ``peak_rss_mb`` (its peak resident memory),
        ``timings_s`` (the per-step times from summary.json) and ``rows``.
    """
    cmd = _gpurank("analyze", str(table), "--no-report", "--backend", "cpu", "--quiet",
                   "--out", str(out), "--overwrite", *extra)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"gpurank analyze exited with {proc.returncode}: {' '.join(cmd)}")
    summary = json.loads((out / "summary.json").read_text())
    return {
        "wall_s": wall,
        "peak_rss_mb": usage.ru_maxrss / 1024.0,  # KiB on Linux
        "timings_s": summary.get("timings_s") or {},
        "rows": summary.get("rows"),
    }


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def test_analyze_from_parquet(benchmark, tmp_path):
    """The analysis of a simulated sweep, default options (one round: it is long)."""
    table = simulate(N_BENCH, tmp_path)
    got = benchmark.pedantic(analyze, args=(table, tmp_path / "out"), rounds=1, iterations=1)
    assert got["timings_s"], "summary.json has no timings_s"
    assert got["peak_rss_mb"] > 0
    benchmark.extra_info.update(peak_rss_mb=got["peak_rss_mb"], timings_s=got["timings_s"])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sizes", nargs="*", type=int, default=[1_000_000, 10_000_000])
    ap.add_argument("--json", action="store_true", help="print one JSON object per size")
    ap.add_argument("--keep", default=None, help="folder for the Parquet files (reused)")
    a, extra = ap.parse_known_args(argv)  # the rest goes to gpurank analyze
    with tempfile.TemporaryDirectory(prefix="gpurank-e2e-") as tmp:
        base = Path(a.keep) if a.keep else Path(tmp)
        for n in a.sizes:
            folder = base / f"n{n}"
            folder.mkdir(parents=True, exist_ok=True)
            table = folder / "sweep.parquet"
            t0 = time.perf_counter()
            if not table.exists():
                simulate(n, folder)
            sim_s = time.perf_counter() - t0
            load_before = _load()
            got = analyze(table, folder / "out", *extra)
            got.update(n=n, simulate_s=sim_s, load_before=load_before, load_after=_load())
            if a.json:
                print(json.dumps(got), flush=True)
                continue
            print(f"n = {n:,}  (load average before {load_before}, after {got['load_after']};"
                  f" simulate {sim_s:.1f} s)")
            for step, sec in got["timings_s"].items():
                print(f"  {step:<24} {sec:9.2f} s")
            print(f"  {'analyze, whole process':<24} {got['wall_s']:9.2f} s")
            print(f"  {'peak RSS':<24} {got['peak_rss_mb'] / 1024:9.2f} GB", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
