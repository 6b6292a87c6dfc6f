"""Time the CPU kernels of this checkout against those of another git revision, in one process.

    python benchmarks/compare_revisions.py --base 95cdd31
    python benchmarks/compare_revisions.py --base HEAD~3 --kernels topsis --ms 4 --n 10000000

The ``kernels/`` folder of ``--base`` is extracted (``git archive``) into a cache folder and
imported as a package of its own next to ``gpurank.kernels``, so both run on the same
inputs, in the same process, alternately: load from other processes affects both alike. Each
cell is warmed up once per side (compilation, first touch), then timed ``--repeats`` times
per side, alternating; the table gives the best time of each side, their ratio, and whether
the results are identical to the bit. Only the contract functions common to both revisions
are called (``pareto_front``, ``pareto_rank``, ``domination_count``, ``topsis``).
"""

from __future__ import annotations

import argparse
import importlib
import os
import pathlib
import subprocess
import sys
import tarfile
import time

import numpy as np
from gpurank.engine.formatting import markdown_table
from gpurank.kernels import cpu
from gpurank.kernels.datagen import make_costs, make_topsis

ROOT = pathlib.Path(__file__).resolve().parents[1]
CACHE = pathlib.Path(os.environ.get("XDG_CACHE_HOME", pathlib.Path.home() / ".cache"))


def load_base(rev):
    """The CPU kernels of revision ``rev`` as a module (extracted once per revision)."""
    sha = subprocess.run(["git", "rev-parse", "--short=12", rev], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout.strip()
    home = CACHE / "gpurank-compare" / sha
    pkg = home / f"base_{sha}"
    if not pkg.exists():
        home.mkdir(parents=True, exist_ok=True)
        tar = home / "kernels.tar"
        subprocess.run(["git", "archive", "-o", str(tar), sha, "kernels"], cwd=ROOT, check=True)
        with tarfile.open(tar) as t:
            t.extractall(home, filter="data")
        (home / "kernels").rename(pkg)
    sys.path.insert(0, str(home))
    return importlib.import_module(f"base_{sha}.cpu"), sha


def cells(kernels, n, ms, shapes):
    """(kernel, m, shape, cap, arguments) of every cell asked for."""
    for kernel in kernels:
        for m in ms:
            if kernel == "topsis":
                x, w, b = make_topsis(n, m)
                yield kernel, m, "uniform", None, (x, w, b)
                continue
            for shape in shapes:
                caps = (None, 10) if kernel == "domination_count" else (None,)
                for cap in caps:
                    if kernel == "domination_count" and cap is None and (
                            m >= 5 or (m == 4 and shape == "anticorrelated")):
                        continue  # exact counts there: several minutes per call at 1e6
                    yield kernel, m, shape, cap, (make_costs(n, m, shape),)


def run(base, kernels, n, ms, shapes, repeats, log=sys.stderr):
    rows = []
    for kernel, m, shape, cap, args in cells(kernels, n, ms, shapes):
        kw = {} if cap is None else {"cap": cap}
        fns = {"base": lambda a=args, k=kw: getattr(base, kernel)(*a, **k),
               "this": lambda a=args, k=kw: getattr(cpu, kernel)(*a, **k)}
        out = {side: fn() for side, fn in fns.items()}  # warm-up: compile, first touch
        best = {"base": np.inf, "this": np.inf}
        for _ in range(repeats):
            for side, fn in fns.items():
                t0 = time.perf_counter()
                fn()
                best[side] = min(best[side], time.perf_counter() - t0)
        same = bool(np.array_equal(out["base"], out["this"]))
        label = kernel + ("" if cap is None else f" cap={cap}")
        row = (label, m, shape, best["base"], best["this"], best["this"] / best["base"], same)
        print(f"{row[0]:<22} m={m} {shape:<15} base {row[3]:.4f} s  this {row[4]:.4f} s  "
              f"ratio {row[5]:.2f}  identical {same}", file=log, flush=True)
        rows.append(row)
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base", required=True, help="git revision to compare with")
    p.add_argument("--kernels", nargs="+",
                   default=["pareto_front", "pareto_rank", "domination_count", "topsis"])
    p.add_argument("--n", type=int, default=10**6)
    p.add_argument("--ms", nargs="+", type=int, default=[3, 4, 6])
    p.add_argument("--shapes", nargs="+", default=["realistic", "anticorrelated"])
    p.add_argument("--repeats", type=int, default=3)
    a = p.parse_args(argv)
    base, sha = load_base(a.base)
    rows = run(base, a.kernels, a.n, a.ms, a.shapes, a.repeats)
    print("\n".join(markdown_table(
        [f"kernel (n={a.n:.0e})", "m", "shape", f"{sha} (s)", "this (s)", "this / base",
         "identical"],
        [[r[0], r[1], r[2], f"{r[3]:.4f}", f"{r[4]:.4f}", f"{r[5]:.2f}", "yes" if r[6] else "NO"]
         for r in rows], align="lrlrrrc")))


if __name__ == "__main__":
    main()
