"""Device check for a machine with a CUDA GPU (CuPy + numba-cuda installed).

    python benchmarks/gpu_check.py [--n 200000] [--skip-tests]
    python benchmarks/gpu_check.py --simulate [--n 100]   # no GPU: the Numba CUDA simulator

Sections (each returns table rows; add a section by writing a function and listing it in
SECTIONS):

1. ``kernel_tests``: ``pytest tests/kernels -k "cuda or ptx"`` with GPURANK_REAL_GPU=1 (the
   CUDA tests then run on the device at larger n).
2. ``direct_checks``: every CUDA kernel against its CPU twin at larger n, inputs as NumPy,
   Numba device arrays and CuPy arrays (C and Fortran order, no copy); ``pareto_rank`` (the
   sorted sweep) up to n = 200,000 on every input kind.
3. ``timings``: each CUDA kernel (device-resident input, synchronized, warmed up) vs its CPU
   twin, and vs a floor. TOPSIS: the memory-bandwidth floor, bytes the kernel must move /
   device-to-device copy bandwidth. Pairwise kernels: the arithmetic floor, pair tests x 3
   instructions (a shared-memory load, a compare, a branch) / (SMs x 128 lanes x clock).
   ``pareto_rank`` (sorted sweep, n^2 / 2 pair tests, n / RANK_TILE sequential tiles) is timed
   against ``cpu.pareto_rank`` on the three data shapes, with the number of fronts and the
   pair-test rate.
4. ``engine_path``: the engine's steps, GPU against CPU, on a simulated sweep read from
   Parquet: the whole analysis when cuDF and cuML exist, the ranking step on a CuPy matrix
   otherwise. Rows: step, rows, GPU time, CPU time, speedup.

Prints a short table last. Without a GPU it exits 0 saying why nothing ran. ``--simulate``
runs sections 2 and 3 under the Numba CUDA simulator at small n (default 100), without CuPy:
a smoke run of this script's own code in CI (the timings are the simulator's, meaningless).
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


def _cupy():
    """CuPy, or None when it is not installed (the simulator run)."""
    try:
        import cupy

        return cupy
    except ImportError:
        return None


def _sources(c):
    """The input kinds a launcher must accept for the host matrix ``c``: NumPy, a Numba
    device array, and CuPy arrays in C and Fortran order when CuPy is installed."""
    from numba import cuda

    out = [c, cuda.to_device(c)]
    cp = _cupy()
    if cp is not None:
        out += [cp.asarray(c), cp.asfortranarray(cp.asarray(c))]
    return out


def _device(c):
    """``c`` copied to the device once, C order: a CuPy array, or a Numba one without CuPy."""
    cp = _cupy()
    if cp is not None:
        return cp.asarray(c)
    from numba import cuda

    return cuda.to_device(c)


def direct_checks(args):
    from gpurank.kernels import cpu
    from gpurank.kernels import cuda as kc
    from gpurank.kernels.datagen import make_costs, make_topsis

    rows = []
    n = args.n
    ms = (2, 3) if args.simulate else (2, 3, 4, 6)
    for shape in ("independent", "anticorrelated", "realistic"):
        for m in ms:
            c = make_costs(n, m, shape, dtype=np.float64)
            ok = True
            rank_ok = n <= 200_000  # the sweep's n^2 / 2 pair tests stay well under a second
            want_rank = cpu.pareto_rank(c) if rank_ok else None
            for src in _sources(c):
                ok &= np.array_equal(kc.pareto_front(src), cpu.pareto_front(c))
                ok &= np.array_equal(kc.domination_count(src, cap=5),
                                     cpu.domination_count(c, cap=5))
                if rank_ok:
                    ok &= np.array_equal(kc.pareto_rank(src), want_rank)
            if n <= 200_000 and m <= 4:
                ok &= np.array_equal(kc.domination_count(c), cpu.domination_count(c))
            what = "pareto/counts/ranks" if rank_ok else "pareto/counts"
            rows.append((f"parity {what} {shape} m={m}", "PASS" if ok else "FAIL",
                         f"n={n}", "", ""))
    nt = n if args.simulate else 10 * n  # the simulator runs each thread in Python
    x, w, b = make_topsis(nt, 4)
    dx = _device(x)
    for norm in ("vector", "minmax"):
        ok = np.allclose(kc.topsis(dx, w, b, norm=norm),
                         cpu.topsis(x, w, b, norm=norm), rtol=1e-9, atol=1e-12)
        rows.append((f"parity topsis {norm}", "PASS" if ok else "FAIL", f"n={nt}", "", ""))
    return rows


def _sync():
    from numba import cuda

    cuda.synchronize()  # waits for the whole device, CuPy's and Numba's work alike


def _gpu_time(fn, reps=5):
    fn()
    _sync()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        _sync()
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
    """Device-to-device copy bandwidth (bytes/s, read + write counted)."""
    from numba import cuda

    a = cuda.device_array(256 * 2**20, dtype=np.uint8)
    b = cuda.device_array_like(a)
    t = _gpu_time(lambda: b.copy_to_device(a), reps=10)
    return 2 * a.nbytes / t


def pair_rate():
    """Pair tests per second the device could do at best: SMs x 128 FP32 lanes x clock / 3
    instructions per test (a shared-memory load, a compare, a branch). None when the device
    does not say (the simulator)."""
    from numba import cuda

    try:
        dev = cuda.get_current_device()
        return dev.MULTIPROCESSOR_COUNT * 128 * dev.CLOCK_RATE * 1e3 / 3
    except Exception:  # noqa: BLE001 - no attributes: the simulator
        return None


def _vs_floor(t, floor):
    return f"{t / floor:.1f}x floor" if floor else "n/a (no device attributes)"


def timings(args):
    from gpurank.kernels import cpu
    from gpurank.kernels import cuda as kc
    from gpurank.kernels.cuda import device as kd
    from gpurank.kernels.cuda import rank as kr
    from gpurank.kernels.datagen import make_costs, make_topsis

    bw = copy_bandwidth()
    rate = pair_rate()
    rows = [("d2d copy bandwidth", f"{bw / 1e9:.0f} GB/s", "", "", ""),
            ("pair-test peak (3 instr.)",
             f"{rate / 1e12:.2f} T/s" if rate else "n/a", "", "", "")]
    n = args.n
    reps_g, reps_c = (1, 1) if args.simulate else (3, 1)
    ms = (3,) if args.simulate else (3, 4, 6)
    for m in ms:
        c = make_costs(n, m, "realistic")
        d = _device(c)
        for name, g, h, pairs in (
            ("pareto_front", lambda: kd.pareto_front_device(d), lambda: cpu.pareto_front(c),
             None),  # early exit: no fixed amount of work
            ("domination_count cap=10", lambda: kd.domination_count_device(d, cap=10),
             lambda: cpu.domination_count(c, cap=10), None),
            ("domination_count", lambda: kd.domination_count_device(d),
             lambda: cpu.domination_count(c), float(n) * n),
        ):
            tg, tc = _gpu_time(g, reps=reps_g), _cpu_time(h, reps=reps_c)
            floor = pairs / rate if pairs and rate else None
            rows.append((f"{name} n={n} m={m}", f"{tg * 1e3:.1f} ms", f"{tc * 1e3:.1f} ms",
                         f"{tc / tg:.1f}x", _vs_floor(tg, floor) if pairs else "early exit"))
    # pareto_rank: the sorted sweep against its CPU twin on every data shape; the work is
    # n^2 / 2 pair tests whatever the number of fronts.
    shapes = ("realistic",) if args.simulate else ("realistic", "independent", "anticorrelated")
    for shape in shapes:
        for m in ms:
            c = make_costs(n, m, shape)
            d = _device(c)
            tg = _gpu_time(lambda: kd.pareto_rank_device(d), reps=reps_g)
            want = cpu.pareto_rank(c)  # also warms the CPU twin's JIT
            tc = _cpu_time(lambda: cpu.pareto_rank(c), reps=reps_c)
            same = np.array_equal(np.asarray(kc.pareto_rank(d)), want)
            pairs = n * (n - 1) / 2
            floor = pairs / rate if rate else None
            fronts = int(want.max()) + 1 if n else 0
            rows.append((f"pareto_rank {shape} n={n} m={m} ({fronts} fronts)",
                         f"{tg * 1e3:.1f} ms", f"{tc * 1e3:.1f} ms", f"{tc / tg:.1f}x",
                         f"{_vs_floor(tg, floor)}; {pairs / tg / 1e9:.1f} G pairs/s; "
                         f"{-(-n // kr.RANK_TILE)} tiles" + ("" if same else "; FAIL")))
    sizes = (n,) if args.simulate else (10**6, 10**7)
    for nn in sizes:
        x, w, b = make_topsis(nn, 4)
        dx = _device(x)
        tg = _gpu_time(lambda: kd.topsis_device(dx, w, b), reps=reps_g if args.simulate else 5)
        tc = _cpu_time(lambda: cpu.topsis(x, w, b), reps=reps_c if args.simulate else 3)
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
    from gpurank.kernels.cuda import device as kd

    kd.pareto_rank_device(d[:1000])
    cp.cuda.get_current_stream().synchronize()
    t0 = time.perf_counter()
    pr = kd.pareto_rank_device(d)
    dc = kd.domination_count_device(d)
    sc = kd.topsis_device(d, np.full(len(crit), 1 / len(crit)), np.zeros(len(crit), bool))
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
#: What --simulate runs: no pytest on a device, no CuPy/cuDF engine path.
SIM_SECTIONS = [direct_checks, timings]


def main(argv=None):
    p = argparse.ArgumentParser(description="gpurank device check")
    p.add_argument("--n", type=int, default=None,
                   help="rows (default 200,000; 100 with --simulate)")
    p.add_argument("--skip-tests", action="store_true")
    p.add_argument("--simulate", action="store_true",
                   help="run the direct checks and timings under the Numba CUDA simulator "
                        "at small n (a smoke run of this script without a GPU)")
    args = p.parse_args(argv)
    if args.simulate:
        # Before numba is first imported (it is imported lazily by every section).
        if "numba" in sys.modules and os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
            print("gpu_check: --simulate needs NUMBA_ENABLE_CUDASIM=1 before numba is imported")
            return 2
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
        args.n = 100 if args.n is None else args.n
        sections = SIM_SECTIONS
    else:
        args.n = 200_000 if args.n is None else args.n
        why = gpu_reason()
        if why:
            print(f"gpu_check: nothing ran: {why}.")
            return 0
        sections = SECTIONS
    rows = []
    failed = False
    for section in sections:
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
