"""Count the pair tests of the GPU Pareto kernels without a GPU.

    python benchmarks/gpu_work.py                         # 1e5, 1e6, 1e7 rows, m = 4
    python benchmarks/gpu_work.py --sizes 100000 1000000 --m 2 3 4 6 --json work.json

The CUDA kernels (``pareto_front``, ``pareto_rank``, ``domination_count``) decide which tile
pairs they test row by row and which the corners of the tiles' bounding boxes decide, by
functions that :mod:`gpurank.kernels.cuda.schedule` compiles for the host too (the
simulator tests check that the device's per-row work equals the host's). This script runs
that host mirror on the benchmark shapes of :mod:`gpurank.kernels.datagen` and prints, per
kernel, shape, m and n, the scheme, the pair tests, the pairs decided by corners, the tests
as a share of all n (n - 1) / 2 pairs, the growth exponent of the pair tests between
consecutive sizes (log ratio of tests over log ratio of n), the binary-search halvings and
the seconds the mirror took.

``domination_count`` for m = 2..5 (uncapped) is the divide and conquer ("dnc"): its pair
tests are those of its brute-force leaves, every other pair is decided by the sorted runs
("decided by corners" here), and its device work is the search steps, which depend on n
and m only (:func:`gpurank.kernels.cuda.schedule.dnc_work`). For other m it is the tile
walk, whose schedule depends on the boxes only, so only the tree is walked.
``pareto_front`` (the count with cap 1) runs
its row tests on the host to know where each tile stops, and ``pareto_rank``, which peels
the fronts one step each (each step the ``cap=1`` walk of the rows still unranked, nodes
without an unranked row pruned), runs every step's row tests with the ranks of the CPU
kernel: its cost on the host is that of its pair tests summed over the fronts, so it is
counted up to ``--rank-max`` rows (1e6 by default).

``--json PATH`` writes a list of objects with the keys ``kernel``, ``shape``, ``n``, ``m``,
``pair_tests``, ``pairs_decided_by_corners`` (and ``scheme``, ``search_steps``, ``tile``,
``seconds``; ``tile`` is the leaf of the divide and conquer).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time

from gpurank.engine.formatting import markdown_row, markdown_table


def _measure(kernels, shapes, sizes, ms, seed, rank_max):
    from gpurank.kernels import datagen
    from gpurank.kernels.cuda import schedule

    rows = []
    for m in ms:
        for shape in shapes:
            for n in sizes:
                x = datagen.make_costs(n, m, shape, seed=seed)
                for kernel in kernels:
                    if kernel == "pareto_rank" and n > rank_max:
                        print(markdown_row([kernel, shape, m, f"{n:.0e}", "tiles",
                                            "not counted (n > --rank-max)", "", "", "", "", ""]),
                              flush=True)
                        continue
                    t0 = time.perf_counter()
                    w = schedule.count_work(x, kernel)
                    rows.append({
                        "kernel": kernel, "shape": shape, "n": n, "m": m,
                        "pair_tests": w.pair_tests,
                        "pairs_decided_by_corners": w.pairs_decided_by_corners,
                        "scheme": w.scheme, "search_steps": w.search_steps,
                        "tile": w.tile, "seconds": round(time.perf_counter() - t0, 2),
                    })
                    _print_row(rows[-1], rows)
                del x
    return rows


def _exponent(row, rows):
    """Growth exponent of the pair tests from the next smaller n of the same cell."""
    prev = [r for r in rows if (r["kernel"], r["shape"], r["m"]) == (row["kernel"],
            row["shape"], row["m"]) and r["n"] < row["n"]]
    if not prev or row["pair_tests"] == 0:
        return None
    p = max(prev, key=lambda r: r["n"])
    if p["pair_tests"] == 0:
        return None
    return math.log(row["pair_tests"] / p["pair_tests"]) / math.log(row["n"] / p["n"])


def _print_row(row, rows):
    n = row["n"]
    share = row["pair_tests"] / max(1, n * (n - 1) // 2)
    e = _exponent(row, rows)
    steps = row["search_steps"]
    print(markdown_row([row["kernel"], row["shape"], row["m"], f"{n:.0e}", row["scheme"],
                        f"{row['pair_tests']:.3g}", f"{row['pairs_decided_by_corners']:.3g}",
                        f"{share:.2%}", "" if e is None else f"{e:.2f}",
                        f"{steps:.3g}" if steps else "", f"{row['seconds']:.1f}"]), flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000, 10_000_000])
    ap.add_argument("--m", type=int, nargs="+", default=[4])
    ap.add_argument("--shapes", nargs="+", default=["realistic", "independent",
                                                    "anticorrelated"])
    ap.add_argument("--kernels", nargs="+",
                    default=["domination_count", "pareto_rank", "pareto_front"])
    ap.add_argument("--rank-max", type=int, default=1_000_000,
                    help="largest n at which pareto_rank is counted (default 1e6)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", metavar="PATH", help="write the rows as JSON")
    args = ap.parse_args(argv)
    from gpurank.kernels.datagen import SHAPES

    for s in args.shapes:
        if s not in SHAPES:
            ap.error(f"--shapes: {s!r} is not one of {SHAPES}")
    print("\n".join(markdown_table(
        ["kernel", "shape", "m", "n", "scheme", "pair tests", "decided by corners",
         "tests / all pairs", "exponent", "search steps", "seconds"], [],
        align="llrrlrrrrrr")))
    rows = _measure(args.kernels, args.shapes, sorted(args.sizes), args.m, args.seed,
                    args.rank_max)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
