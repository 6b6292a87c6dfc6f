"""Device check for a machine with a CUDA GPU (CuPy + numba-cuda installed).

    python benchmarks/gpu_check.py [--n 200000] [--skip-tests]

Sections (each returns table rows; add a section by writing a function and listing it in
SECTIONS):

1. ``kernel_tests``: ``pytest tests/kernels -k "cuda or ptx"`` with GPURANK_REAL_GPU=1 (the
   CUDA tests then run on the device at larger n).
2. ``direct_checks``: every CUDA kernel against its CPU twin at larger n, inputs as NumPy,
   Numba device arrays and CuPy arrays (C and Fortran order, no copy).
3. ``timings``: each CUDA kernel (device-resident input, synchronized, warmed up) vs its CPU
   twin and vs the memory-bandwidth floor: bytes the kernel must move / device-to-device
   copy bandwidth measured with CuPy.

4. ``engine_path``: the engine's steps, GPU against CPU, on a simulated sweep read from
   Parquet: the whole analysis when cuDF and cuML exist, the ranking step on a CuPy matrix
   otherwise. Rows: step, rows, GPU time, CPU time, speedup.

Prints a short table last. Without a GPU it exits 0 saying why nothing ran.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def gpu_reason():
    """None when a CUDA device, numba-cuda and CuPy are usable, else why not."""
    try:
        from numba import cuda
    except Exception as e:  # noqa: BLE001
        return f"numba.cuda cannot be imported ({e}); pip install 'numba-cuda[cu12]'"
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return "NUMBA_ENABLE_CUDASIM=1 is set: that is the simulator, not a GPU"
    try:
        if not cuda.is_available():
            return "numba.cuda sees no CUDA device/driver"
    except Exception as e:  # noqa: BLE001
        return f"numba.cuda failed to query devices: {e}"
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() < 1:
            return "CuPy sees no CUDA device"
    except Exception as e:  # noqa: BLE001
        return f"CuPy is not usable ({type(e).__name__}: {e}); pip install cupy-cuda12x"
    return None


def kernel_tests(args):
    if args.skip_tests:
        return [("pytest tests/kernels -k cuda (device)", "skipped", "", "", "")]
    env = dict(os.environ, GPURANK_REAL_GPU="1")
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    t0 = time.perf_counter()
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "tests/kernels", "-k", "cuda or ptx"],
        cwd=ROOT, env=env, capture_output=True, text=True,
    )
    tail = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else r.stderr[-200:]
    print(r.stdout[-3000:])
    return [("pytest tests/kernels -k 'cuda or ptx'", "PASS" if r.returncode == 0 else "FAIL",
             f"{time.perf_counter() - t0:.1f} s", tail, "")]


def direct_checks(args):
    import cupy as cp
    from numba import cuda

    from gpurank.kernels import cpu
    from gpurank.kernels import cuda as kc
    from gpurank.kernels._datagen import make_costs, make_topsis

    rows = []
    n = args.n
    for shape in ("independent", "anticorrelated", "realistic"):
        for m in (2, 3, 4, 6):
            c = make_costs(n, m, shape, dtype=np.float64)
            ok = True
            for src in (c, cuda.to_device(c), cp.asarray(c), cp.asfortranarray(cp.asarray(c))):
                ok &= np.array_equal(kc.pareto_front(src), cpu.pareto_front(c))
                ok &= np.array_equal(kc.domination_count(src, cap=5),
                                     cpu.domination_count(c, cap=5))
            if n <= 200_000 and m <= 4:
                ok &= np.array_equal(kc.domination_count(c), cpu.domination_count(c))
            if n <= 50_000:
                ok &= np.array_equal(kc.pareto_rank(c), cpu.pareto_rank(c))
            rows.append((f"parity pareto/counts {shape} m={m}", "PASS" if ok else "FAIL",
                         f"n={n}", "", ""))
    x, w, b = make_topsis(10 * n, 4)
    for norm in ("vector", "minmax"):
        ok = np.allclose(kc.topsis(cp.asarray(x), w, b, norm=norm),
                         cpu.topsis(x, w, b, norm=norm), rtol=1e-9, atol=1e-12)
        rows.append((f"parity topsis {norm}", "PASS" if ok else "FAIL", f"n={10 * n}", "", ""))
    return rows


def _gpu_time(fn, reps=5):
    import cupy as cp

    fn()
    cp.cuda.Device().synchronize()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        cp.cuda.Device().synchronize()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def _cpu_time(fn, reps=3):
    fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def copy_bandwidth():
    """Device-to-device copy bandwidth (bytes/s, read + write counted) via CuPy."""
    import cupy as cp

    a = cp.empty(256 * 2**20, dtype=cp.uint8)
    b = cp.empty_like(a)
    t = _gpu_time(lambda: b.__setitem__(Ellipsis, a), reps=10)
    return 2 * a.nbytes / t


def timings(args):
    import cupy as cp

    from gpurank.kernels import cpu
    from gpurank.kernels import cuda as kc
    from gpurank.kernels._datagen import make_costs, make_topsis

    bw = copy_bandwidth()
    rows = [("d2d copy bandwidth", f"{bw / 1e9:.0f} GB/s", "", "", "")]
    n = args.n
    for m in (3, 4, 6):
        c = make_costs(n, m, "realistic")
        d = cp.asarray(c)
        for name, g, h in (
            ("pareto_front", lambda: kc.pareto_front_device(d), lambda: cpu.pareto_front(c)),
            ("domination_count cap=10", lambda: kc.domination_count_device(d, cap=10),
             lambda: cpu.domination_count(c, cap=10)),
            ("domination_count", lambda: kc.domination_count_device(d),
             lambda: cpu.domination_count(c)),
            ("pareto_rank", lambda: kc.pareto_rank_device(d), lambda: cpu.pareto_rank(c)),
        ):
            tg, tc = _gpu_time(g, reps=3), _cpu_time(h, reps=1)
            floor = (c.nbytes * 2 + n * 8) / bw  # transpose read+write, one output
            rows.append((f"{name} n={n} m={m}", f"{tg * 1e3:.1f} ms", f"{tc * 1e3:.1f} ms",
                         f"{tc / tg:.1f}x", f"{tg / floor:.0f}x floor"))
    for nn in (10**6, 10**7):
        x, w, b = make_topsis(nn, 4)
        dx = cp.asarray(x)
        tg = _gpu_time(lambda: kc.topsis_device(dx, w, b))
        tc = _cpu_time(lambda: cpu.topsis(x, w, b))
        floor = (2 * x.nbytes + nn * 8) / bw  # matrix read twice, scores written
        rows.append((f"topsis n={nn} m=4", f"{tg * 1e3:.2f} ms", f"{tc * 1e3:.1f} ms",
                     f"{tc / tg:.1f}x", f"{tg / floor:.1f}x floor"))
    return rows


def engine_path(args):
    """The engine's steps on the GPU against the CPU, from a Parquet file of a simulated sweep.

    With cuDF and cuML: the whole analysis (load, derive, importance, cluster, rank) on each
    backend, step by step. Without them: the ranking step alone, with the criteria matrix
    handed to the CUDA kernels as a CuPy array.
    """
    import tempfile

    import cupy as cp

    from gpurank.engine import Engine
    from gpurank.engine.backend import gpu_unavailable_reason, resolve_backend
    from gpurank.engine.ranking import criteria_matrix, rank_configurations
    from gpurank.engine.sources.simulate import simulate
    from gpurank.engine.spec import default_criteria

    n = args.n
    table = simulate(n, seed=0)
    rows = []
    if gpu_unavailable_reason() is None:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "sweep.parquet")
            table.to_parquet(path)
            Engine(backend="gpu").analyze(path, n_estimators=10)  # warm up: JIT, RMM pool
            Engine(backend="cpu").analyze(simulate(2_000, seed=1), n_estimators=10)
            t0 = time.perf_counter()
            g = Engine(backend="gpu").analyze(path)
            tg_total = time.perf_counter() - t0
            t0 = time.perf_counter()
            c = Engine(backend="cpu").analyze(path)
            tc_total = time.perf_counter() - t0
        same = bool((g.table["pareto_rank"].to_numpy() == c.table["pareto_rank"].to_numpy()).all())
        for step in g.timings:
            tg, tc = g.timings[step], c.timings[step]
            rows.append((f"engine {step} n={n}", f"{tg:.3f} s", f"{tc:.3f} s",
                         f"{tc / tg:.1f}x" if tg > 0 else "", ""))
        rows.append((f"engine end to end n={n}", f"{tg_total:.2f} s", f"{tc_total:.2f} s",
                     f"{tc_total / tg_total:.1f}x", "PASS" if same else "FAIL"))
        return rows
    # CuPy + numba-cuda only: the ranking step with a device-resident criteria matrix.
    cpu_b = resolve_backend("cpu")
    crit = default_criteria(table.columns)
    costs = criteria_matrix(table, crit, backend=cpu_b)
    d = cp.asarray(costs)
    from gpurank.kernels import cuda as kc

    kc.pareto_rank_device(d[:1000])
    cp.cuda.get_current_stream().synchronize()
    t0 = time.perf_counter()
    pr = kc.pareto_rank_device(d)
    dc = kc.domination_count_device(d)
    sc = kc.topsis_device(d, np.full(len(crit), 1 / len(crit)), np.zeros(len(crit), bool))
    cp.cuda.get_current_stream().synchronize()
    tg = time.perf_counter() - t0
    rank_configurations(table.iloc[:1000], crit, backend=cpu_b)  # warm up the CPU JIT
    t0 = time.perf_counter()
    r = rank_configurations(table, crit, backend=cpu_b)
    tc = time.perf_counter() - t0
    same = (np.array_equal(cp.asnumpy(pr), r.pareto_rank)
            and np.array_equal(cp.asnumpy(dc), r.domination_count)
            and np.allclose(cp.asnumpy(sc), r.topsis_score, atol=1e-12))
    rows.append((f"engine rank step (CuPy only) n={n}", f"{tg:.3f} s", f"{tc:.3f} s",
                 f"{tc / tg:.1f}x", "PASS" if same else "FAIL"))
    rows.append(("engine whole path", "skipped", f"needs cuDF and cuML: {gpu_unavailable_reason()}",
                 "", ""))
    return rows


SECTIONS = [kernel_tests, direct_checks, timings, engine_path]


def main(argv=None):
    p = argparse.ArgumentParser(description="gpurank device check")
    p.add_argument("--n", type=int, default=200_000)
    p.add_argument("--skip-tests", action="store_true")
    args = p.parse_args(argv)
    why = gpu_reason()
    if why:
        print(f"gpu_check: nothing ran: {why}.")
        return 0
    rows = []
    failed = False
    for section in SECTIONS:
        try:
            rows += section(args)
        except Exception as e:  # noqa: BLE001 - report and continue with the next section
            rows.append((section.__name__, "ERROR", f"{type(e).__name__}: {e}"[:80], "", ""))
    failed = any(r[1] in ("FAIL", "ERROR") for r in rows)
    print("\n| check | GPU / result | CPU | CPU/GPU | vs floor |\n|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(str(v) for v in r) + " |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
