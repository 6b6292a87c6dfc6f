"""Device check for a machine with a CUDA GPU, run from the checkout as it is.

    python3 benchmarks/gpu_check.py                 # a GPU: default sizes, a few minutes
    python3 benchmarks/gpu_check.py --simulate      # no GPU: Numba's CUDA simulator, tiny sizes

It needs only NumPy, pandas, pyarrow, scikit-learn, Numba, numba-cuda and CuPy: gpurank is
imported from this checkout's ``engine/`` and ``kernels/`` folders (not installed, no
network), and what needs cuDF, cuML, pytest or hypothesis is skipped, with the reason, where
they are missing.

First a compile probe: one tiny kernel compiled to PTX and launched. Where numba-cuda cannot
compile (no CUDA toolkit: NVVM missing) or no device answers, one line says so and how to
fix it, and the script exits 0 without running anything else. Then the steps, in order
(each one row or more of the table):

1. ``timing``: each CUDA kernel on a device-resident input (synchronized, warmed up: no JIT
   in the times) against its CPU twin: ``pareto_rank`` and ``domination_count`` at 1e6 and
   1e7 rows, TOPSIS at 1e7 and 1e8; the notes give the rank's fronts and launches and
   compare TOPSIS with the memory-bandwidth floor. First, so a cold run cannot spend the
   budget before them.
2. ``kernel parity``: every CUDA kernel against its CPU twin on three data shapes, the input
   as a NumPy array, a Numba device array and CuPy arrays in C and Fortran order (no copy).
3. ``engine rank``: the engine's ranking of a simulated sweep (metrics derived first), with
   the criteria matrix on the device, against ``rank_configurations`` on the CPU.
4. ``engine analyze (stand-in frames)``: the whole analysis on
   ``strict_device_backend()`` (the engine's device branches, CuPy/cuDF stand-ins, the
   CUDA kernels on this device) against the CPU backend.
5. ``engine analyze (cuDF, cuML)``: the whole analysis on the GPU backend, step by step
   (warmed up first), when cuDF and cuML are installed.
6. ``pytest tests/kernels -k "cuda or ptx"`` on the device, when pytest and hypothesis are
   installed.

Parity rows carry no times (their first calls compile the kernels); only the timing rows and
the warmed-up cuDF/cuML rows have speed-ups. Prints one table (step, rows, CPU time, GPU
time, speed-up, parity, note), writes it as JSON (``--json``), and ends with a one-line JSON
summary. Steps that would start after ``--budget`` seconds are skipped with that reason.
Exit status: 1 when a parity check fails or a step errors, 0 otherwise (and when the probe
fails: nothing runs, and it says why). ``--simulate`` runs the same steps under the
simulator at tiny sizes, without CuPy: a check of this script's own code under the GPU
machine's conditions (its timings mean nothing).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import tempfile
import time
import types
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

#: Default sizes (rows) on a device, and under the simulator: ``n_timing`` for the rank
#: and count timings, ``n_topsis`` for TOPSIS's, ``n`` for the parity checks.
SIZES = {
    "device": {"n": 100_000, "n_timing": [1_000_000, 10_000_000],
               "n_topsis": [10_000_000, 100_000_000], "n_engine": 100_000,
               "n_analyze": 20_000},
    "simulate": {"n": 60, "n_timing": [40], "n_topsis": [60], "n_engine": 40,
                 "n_analyze": 30},
}
#: How to get what numba-cuda needs to compile, when the probe finds it missing.
TOOLKIT_HINT = ("install the CUDA toolkit's compiler libraries for numba-cuda: "
                "pip install 'numba-cuda[cu12]' (or conda install -c conda-forge "
                "cuda-nvcc cuda-nvrtc cuda-version=12)")
#: TOPSIS scores of the CUDA kernels and the CPU agree to this absolute tolerance.
TOPSIS_ATOL = 1e-12


def use_checkout():
    """Make ``gpurank.engine`` and ``gpurank.kernels`` this checkout's ``engine/`` and
    ``kernels/`` folders: a ``gpurank`` package whose path is the checkout root (the folders'
    own names), whatever gpurank is installed.

    Returns
    -------
    str
        Where ``gpurank.engine`` was imported from.
    """
    pkg = sys.modules.get("gpurank")
    if pkg is None or list(getattr(pkg, "__path__", [])) != [str(ROOT)]:
        stale = sorted(m for m in sys.modules if m == "gpurank" or m.startswith("gpurank."))
        if stale:
            raise RuntimeError(f"gpurank was imported before gpu_check pointed it at the "
                               f"checkout: {', '.join(stale)}")
        pkg = types.ModuleType("gpurank")
        pkg.__path__ = [str(ROOT)]
        pkg.__doc__ = f"gpurank from the checkout {ROOT}"
        sys.modules["gpurank"] = pkg
    import gpurank.engine
    import gpurank.kernels  # noqa: F401

    where = Path(gpurank.engine.__file__).resolve().parent
    if where != ROOT / "engine":
        raise RuntimeError(f"gpurank.engine came from {where}, not from the checkout {ROOT}")
    return str(where)


def _module(name):
    """``name`` imported, or None when it is not installed."""
    try:
        return __import__(name)
    except ImportError:
        return None


def gpu_reason(*, simulate):
    """None when the CUDA kernels can run (a device, or the simulator), else why not."""
    try:
        from numba import cuda
    except Exception as e:  # noqa: BLE001 - any import failure means no CUDA kernels
        return f"numba.cuda cannot be imported ({type(e).__name__}: {e}); install numba-cuda"
    if simulate:
        return None
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return "NUMBA_ENABLE_CUDASIM=1 is set: that is the simulator, not a GPU (use --simulate)"
    try:
        if not cuda.is_available():
            return "numba.cuda sees no CUDA device or driver"
    except Exception as e:  # noqa: BLE001
        return f"numba.cuda failed to query devices: {e}"
    return None


def _probe_kernel(a):
    """a[i] = i + 1: the compile probe's kernel (at module level, where the simulator swaps
    the global ``cuda`` for its per-thread fake)."""
    i = cuda.grid(1)  # noqa: F821 - the global is set by compile_probe
    if i < a.shape[0]:
        a[i] = i + 1


def compile_probe(*, simulate):
    """None when a tiny kernel compiles to PTX and runs on the device (or the simulator),
    else one line saying what is missing and how to get it."""
    from numba import cuda

    globals()["cuda"] = cuda  # numba is imported only now (after --simulate set it up)
    try:
        if not simulate:
            cuda.compile_ptx(_probe_kernel, "void(int32[:])", cc=(7, 0))
        kernel = cuda.jit(_probe_kernel)
        a = cuda.to_device(np.zeros(4, dtype=np.int32))
        kernel[1, 4](a)
        got = a.copy_to_host()
    except Exception as e:  # noqa: BLE001 - whatever fails, one line says why
        text = f"{type(e).__name__}: {e}".strip().splitlines()[0][:160]
        if "nvvm" in text.lower() or "libdevice" in text.lower():
            return f"numba-cuda cannot compile: the CUDA toolkit's NVVM is missing ({text}); " \
                   + TOOLKIT_HINT
        return f"a test kernel did not compile and run ({text})"
    if got.tolist() != [1, 2, 3, 4]:
        return f"a test kernel ran but wrote {got.tolist()} instead of [1, 2, 3, 4]"
    return None


class Table:
    """The rows of the report, and the time budget that decides which steps still run."""

    COLUMNS = ("step", "rows", "cpu_s", "gpu_s", "speedup", "parity", "note")

    def __init__(self, budget_s):
        self.rows = []
        self.t0 = time.perf_counter()
        self.budget_s = budget_s

    def add(self, step, rows=None, *, cpu_s=None, gpu_s=None, parity="n/a", note=""):
        speedup = float(f"{cpu_s / gpu_s:.3g}") if cpu_s and gpu_s else None
        self.rows.append({"step": step, "rows": rows, "cpu_s": _round(cpu_s),
                          "gpu_s": _round(gpu_s), "speedup": speedup, "parity": parity,
                          "note": note})

    def spent(self):
        return time.perf_counter() - self.t0

    def over_budget(self):
        return self.spent() > self.budget_s

    @property
    def failed(self):
        return any(r["parity"] in ("FAIL", "ERROR") for r in self.rows)

    def markdown(self):
        from gpurank.engine.formatting import markdown_table  # after use_checkout()

        return "\n".join(markdown_table(
            ["step", "rows", "CPU time", "GPU time", "speed-up", "parity", "note"],
            [[r["step"], "" if r["rows"] is None else f"{r['rows']:,}", _seconds(r["cpu_s"]),
              _seconds(r["gpu_s"]), "" if r["speedup"] is None else f"{r['speedup']:g}x",
              r["parity"], r["note"]] for r in self.rows], align="lrrrrll"))


def _round(t):
    return None if t is None else round(float(t), 6)


def _seconds(t):
    if t is None:
        return ""
    return f"{t * 1e3:.2f} ms" if t < 1 else f"{t:.2f} s"


def _ok(flag):
    return "PASS" if flag else "FAIL"


def _same(a, b):
    """Equal arrays, NaN equal to NaN (a row without a value on both backends)."""
    return np.array_equal(a, b, equal_nan=a.dtype.kind == "f" and b.dtype.kind == "f")


# -- timing helpers ----------------------------------------------------------------------------


def _sync():
    from numba import cuda

    cuda.synchronize()  # the whole device: CuPy's and Numba's work alike


def _gpu_time(fn, reps):
    fn()
    _sync()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        _sync()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def _cpu_time(fn, reps):
    fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def _cupy():
    """CuPy, or None where it is not installed (the simulator run)."""
    return _module("cupy")


def _sources(c):
    """The input kinds a launcher must take for the host matrix ``c``: NumPy, a Numba device
    array, and CuPy arrays in C and Fortran order where CuPy is installed."""
    from numba import cuda

    out = [("numpy", c), ("numba", cuda.to_device(c))]
    cp = _cupy()
    if cp is not None:
        out += [("cupy C", cp.asarray(c)), ("cupy F", cp.asfortranarray(cp.asarray(c)))]
    return out


def _device(c):
    """``c`` copied to the device once: a CuPy array, or a Numba one without CuPy."""
    cp = _cupy()
    if cp is not None:
        return cp.asarray(c)
    from numba import cuda

    return cuda.to_device(c)


def _host(x):
    if hasattr(x, "copy_to_host"):
        return x.copy_to_host()
    if hasattr(x, "get"):
        return x.get()
    return np.asarray(x)


# -- the steps ---------------------------------------------------------------------------------


def kernel_parity(args, table):
    from gpurank.kernels import cpu
    from gpurank.kernels import cuda as kc
    from gpurank.kernels.datagen import SHAPES, make_costs, make_topsis

    n = args.n
    ms = (3,) if args.simulate else (2, 3, 4, 6)
    for shape in SHAPES:
        for m in ms:
            if table.over_budget():
                return _skip_rest(table, "kernel parity")
            c = make_costs(n, m, shape)
            want = (cpu.pareto_front(c), cpu.domination_count(c, cap=5), cpu.pareto_rank(c))
            bad = []
            for kind, src in _sources(c):
                got = (kc.pareto_front(src), kc.domination_count(src, cap=5),
                       kc.pareto_rank(src))
                bad += [f"{name} on {kind}" for name, g, w in
                        zip(("front", "counts cap=5", "ranks"), got, want)
                        if not np.array_equal(g, w)]
            if m <= 4:
                if not np.array_equal(kc.domination_count(c), cpu.domination_count(c)):
                    bad.append("counts")
            table.add(f"kernel parity {shape} m={m}", n, parity=_ok(not bad),
                      note="front, counts, ranks" + (" (+ uncapped counts)" if m <= 4 else "")
                      + ("; FAIL: " + ", ".join(bad) if bad else ""))
    x, w, b = make_topsis(n, 4)
    for norm in ("vector", "minmax"):
        want = cpu.topsis(x, w, b, norm=norm)
        bad = [kind for kind, src in _sources(x)
               if not np.allclose(kc.topsis(src, w, b, norm=norm), want, rtol=0,
                                  atol=TOPSIS_ATOL)]
        table.add(f"kernel parity topsis {norm}", n, parity=_ok(not bad),
                  note=f"atol {TOPSIS_ATOL:g}" + ("; FAIL: " + ", ".join(bad) if bad else ""))
    for v in (0.5, 0.2):  # VIKOR's Q in [0, 1], held to the same tolerance
        want = cpu.vikor(x, w, b, v=v)
        bad = [kind for kind, src in _sources(x)
               if not np.allclose(kc.vikor(src, w, b, v=v), want, rtol=0, atol=TOPSIS_ATOL)]
        table.add(f"kernel parity vikor v={v}", n, parity=_ok(not bad),
                  note=f"atol {TOPSIS_ATOL:g}" + ("; FAIL: " + ", ".join(bad) if bad else ""))


def engine_rank(args, table):
    """The ranking step of the engine on a simulated sweep: metrics derived, the criteria
    matrix built on the host and moved to the device once, the three kernels there."""
    from gpurank.engine.backend import resolve_backend
    from gpurank.engine.metrics import derive_metrics
    from gpurank.engine.ranking import criteria_matrix, rank_configurations
    from gpurank.engine.sources.sweep.simulate import simulate
    from gpurank.engine.spec import default_criteria, normalize_weights
    from gpurank.kernels.cuda import device as kd

    n = args.n_engine
    cpu_b = resolve_backend("cpu")
    frame = derive_metrics(simulate(n, seed=0))
    crit = default_criteria(frame.columns)
    costs = criteria_matrix(frame, crit, backend=cpu_b)
    weights = np.asarray(normalize_weights(crit))
    benefit = np.zeros(len(crit), bool)
    d = _device(costs)

    def on_gpu():
        return (kd.pareto_rank_device(d), kd.domination_count_device(d),
                kd.topsis_device(d, weights, benefit))

    r = rank_configurations(frame, crit, backend=cpu_b)
    pr, dc, sc = (_host(v) for v in on_gpu())
    same = (np.array_equal(pr, r.pareto_rank) and np.array_equal(dc, r.domination_count)
            and np.allclose(sc, r.topsis_score, rtol=0, atol=TOPSIS_ATOL))
    table.add("engine rank (derived metrics, device criteria matrix)", len(frame),
              parity=_ok(same),
              note=f"{len(crit)} criteria: " + ", ".join(c.column for c in crit))


def engine_analyze_standin(args, table):
    """The whole analysis on the strict stand-in backend (device branches, the CUDA kernels
    here) against the CPU backend: exact except TOPSIS within TOPSIS_ATOL."""
    from gpurank.engine import Engine
    from gpurank.engine.backend import strict_device_backend
    from gpurank.engine.sources.sweep.simulate import simulate

    n = args.n_analyze
    df = simulate(n, seed=1)
    opts = {"n_estimators": 20, "top": 5, "robust": True, "samples": 20, "drop_invalid": True}
    g = Engine(backend=strict_device_backend()).analyze(df, **opts)
    c = Engine(backend="cpu").analyze(df, **opts)
    bad = [col for col in ("pareto_rank", "domination_count", "rank", "cluster", "p_top1",
                           "p_topk", "expected_rank")
           if not _same(g.table[col].to_numpy(), c.table[col].to_numpy())]
    if not np.allclose(g.table["topsis_score"], c.table["topsis_score"], rtol=0,
                       atol=TOPSIS_ATOL):
        bad.append("topsis_score")
    if c.importance is not None and not g.importance.table.equals(c.importance.table):
        bad.append("importance")
    table.add("engine analyze (stand-in frames, CUDA kernels)", len(g.table),
              parity=_ok(not bad),
              note="pandas-bound: a check of the device branches, not a timing"
              + ("; FAIL: " + ", ".join(bad) if bad else ""))


def engine_analyze_rapids(args, table):
    """The whole analysis on the GPU backend (cuDF, cuML), step by step."""
    from gpurank.engine import Engine
    from gpurank.engine.backend import gpu_unavailable_reason
    from gpurank.engine.sources.sweep.simulate import simulate

    why = "the simulator has no cuDF" if args.simulate else gpu_unavailable_reason()
    if why is not None:
        table.add("engine analyze (cuDF, cuML)", parity="skipped", note=why)
        return
    n = args.n_analyze * 10
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "sweep.parquet")
        simulate(n, seed=0).to_parquet(path)
        small = os.path.join(tmp, "small.parquet")
        simulate(2_000, seed=1).to_parquet(small)
        Engine(backend="gpu").analyze(small, n_estimators=10)  # JIT, RMM pool
        Engine(backend="cpu").analyze(small, n_estimators=10)
        t0 = time.perf_counter()
        g = Engine(backend="gpu").analyze(path, drop_invalid=True)
        tg = time.perf_counter() - t0
        t0 = time.perf_counter()
        c = Engine(backend="cpu").analyze(path, drop_invalid=True)
        tc = time.perf_counter() - t0
    for step in g.timings:
        table.add(f"engine {step} (cuDF, cuML)", len(g.table), cpu_s=c.timings.get(step),
                  gpu_s=g.timings[step])
    same = (np.array_equal(g.table["pareto_rank"], c.table["pareto_rank"])
            and np.array_equal(g.table["domination_count"], c.table["domination_count"])
            and np.allclose(g.table["topsis_score"], c.table["topsis_score"], rtol=0,
                            atol=TOPSIS_ATOL))
    table.add("engine analyze end to end (cuDF, cuML)", len(g.table), cpu_s=tc, gpu_s=tg,
              parity=_ok(same), note="Pareto ranks and counts exact, TOPSIS within atol")


def _copy_bandwidth():
    """Device-to-device copy bandwidth (bytes/s, read + write counted)."""
    from numba import cuda

    a = cuda.device_array(256 * 2**20, dtype=np.uint8)
    b = cuda.device_array_like(a)
    return 2 * a.nbytes / _gpu_time(lambda: b.copy_to_device(a), reps=10)


def kernel_timings(args, table):
    """The kernels on device-resident inputs (warmed up) against their CPU twins: rank and
    count at each ``n_timing``, TOPSIS at each ``n_topsis``."""
    from gpurank.kernels import cpu
    from gpurank.kernels import cuda as kc
    from gpurank.kernels.cuda import device as kd
    from gpurank.kernels.cuda.rank import launch_count
    from gpurank.kernels.datagen import make_costs, make_topsis

    reps = 1 if args.simulate else 3
    bw = None if args.simulate else _copy_bandwidth()
    m = 3
    warm = make_costs(500, m, "realistic")
    cpu.pareto_rank(warm), cpu.domination_count(warm)  # the CPU JIT, out of the times
    for n in args.n_timing:
        if table.over_budget():
            return _skip_rest(table, "timing")
        c = make_costs(n, m, "realistic")
        d = _device(c)
        t0 = time.perf_counter()
        ranks = cpu.pareto_rank(c)  # one run: the CPU time and the number of fronts
        tc = time.perf_counter() - t0
        fronts = int(ranks.max()) + 1
        tg = _gpu_time(lambda: kd.pareto_rank_device(d), reps)
        table.add(f"timing pareto_rank realistic m={m}", n, cpu_s=tc, gpu_s=tg,
                  note=f"{fronts} fronts, {launch_count(n, fronts)} launches")
        t0 = time.perf_counter()
        cpu.domination_count(c)
        tc = time.perf_counter() - t0
        tg = _gpu_time(lambda: kd.domination_count_device(d), reps)
        table.add(f"timing domination_count realistic m={m}", n, cpu_s=tc, gpu_s=tg,
                  note="pair tests: benchmarks/gpu_work.py")
        del d
    for nt in args.n_topsis:
        if table.over_budget():
            return _skip_rest(table, "timing")
        x, w, b = make_topsis(nt, 4)
        dx = _device(x)
        tg = _gpu_time(lambda: kd.topsis_device(dx, w, b), reps if args.simulate else 5)
        tc = _cpu_time(lambda: cpu.topsis(x, w, b), reps)
        note = f"{tg * bw / (2 * x.nbytes + nt * 8):.1f}x the bandwidth floor" if bw else ""
        table.add("timing topsis m=4", nt, cpu_s=tc, gpu_s=tg, note=note)
        tg = _gpu_time(lambda: kc.vikor(dx, w, b), reps if args.simulate else 5)
        tc = _cpu_time(lambda: cpu.vikor(x, w, b), reps)
        table.add("timing vikor m=4", nt, cpu_s=tc, gpu_s=tg, note="Q copied to the host")
        del dx, x


def kernel_tests(args, table):
    """The kernel test suite with the CUDA tests on the device."""
    import subprocess

    if args.simulate:
        table.add("pytest tests/kernels (device)", parity="skipped",
                  note="CI runs the suite under the simulator")
        return
    missing = [m for m in ("pytest", "hypothesis") if _module(m) is None]
    if missing:
        table.add("pytest tests/kernels (device)", parity="skipped",
                  note=f"{' and '.join(missing)} not installed; the kernel parity rows above "
                       "check every kernel")
        return
    env = dict(os.environ, GPURANK_REAL_GPU="1")
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "tests/kernels", "-k", "cuda or ptx"], cwd=ROOT, env=env,
                       capture_output=True, text=True, check=False)
    lines = r.stdout.strip().splitlines()
    table.add("pytest tests/kernels -k 'cuda or ptx' (device)", gpu_s=time.perf_counter() - t0,
              parity=_ok(r.returncode == 0), note=lines[-1] if lines else r.stderr[-200:])


def _skip_rest(table, what):
    table.add(f"{what}: the rest", parity="skipped",
              note=f"time budget of {table.budget_s:g} s spent")


STEPS = [kernel_timings, kernel_parity, engine_rank, engine_analyze_standin,
         engine_analyze_rapids, kernel_tests]


def main(argv=None):
    p = argparse.ArgumentParser(description="gpurank device check (run from the checkout)")
    p.add_argument("--simulate", action="store_true",
                   help="run under Numba's CUDA simulator at tiny sizes (no GPU needed)")
    p.add_argument("--n", type=int, help="rows for the kernel parity checks")
    p.add_argument("--n-timing", type=int, nargs="+",
                   help="rows for the rank and count timings (default 1e6 1e7)")
    p.add_argument("--n-topsis", type=int, nargs="+",
                   help="rows for the TOPSIS timings (default 1e7 1e8)")
    p.add_argument("--n-engine", type=int, help="rows for the engine's rank step")
    p.add_argument("--n-analyze", type=int, help="rows for the whole analysis")
    p.add_argument("--budget", type=float, default=270.0,
                   help="seconds after which the remaining steps are skipped (default 270)")
    p.add_argument("--json", default="gpu_check.json", help="where to write the table")
    args = p.parse_args(argv)
    sizes = SIZES["simulate" if args.simulate else "device"]
    for key, value in sizes.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.simulate:
        if "numba" in sys.modules and os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
            print("gpu_check: --simulate needs NUMBA_ENABLE_CUDASIM=1 before numba is imported")
            return 2
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    where = use_checkout()
    print(f"gpu_check: gpurank from {where}")
    why = gpu_reason(simulate=args.simulate) or compile_probe(simulate=args.simulate)
    if why:
        print(f"gpu_check: nothing ran: {why}.")
        return 0
    from gpurank.engine.backend import describe_environment

    env = describe_environment()
    table = Table(args.budget)
    for step in STEPS:
        if table.over_budget():
            table.add(step.__name__, parity="skipped",
                      note=f"time budget of {args.budget:g} s spent")
            continue
        try:
            step(args, table)
        except Exception as e:  # noqa: BLE001 - report and go on with the next step
            table.add(step.__name__, parity="ERROR", note=f"{type(e).__name__}: {e}"[:200])
    text = table.markdown()
    print()
    print(text)
    status = 1 if table.failed else 0
    report = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "simulate": bool(args.simulate),
        "sizes": {k: getattr(args, k) for k in sizes},
        "environment": env,
        "total_s": round(table.spent(), 1),
        "status": status,
        "columns": list(Table.COLUMNS),
        "rows": table.rows,
    }
    Path(args.json).write_text(json.dumps(report, indent=2, default=str) + "\n")
    print(f"\ngpu_check: {len(table.rows)} rows in {table.spent():.0f} s; table written to "
          f"{args.json}; {'FAILED' if status else 'passed'}")
    print(json.dumps(summary(report, args.json), default=str))
    return status


def summary(report, path):
    """The one-line JSON summary printed last: status, the rows that failed or were
    skipped, and every timed row's times and speed-up."""
    rows = report["rows"]
    return {"gpu_check": "FAILED" if report["status"] else "passed",
            "simulate": report["simulate"], "total_s": report["total_s"],
            "rows": len(rows), "json": str(path),
            "failed": [r["step"] for r in rows if r["parity"] in ("FAIL", "ERROR")],
            "skipped": [r["step"] for r in rows if r["parity"] == "skipped"],
            "timings": {f"{r['step']} n={r['rows']}": {"cpu_s": r["cpu_s"],
                                                      "gpu_s": r["gpu_s"],
                                                      "speedup": r["speedup"]}
                        for r in rows if r["gpu_s"] is not None}}


if __name__ == "__main__":
    sys.exit(main())
