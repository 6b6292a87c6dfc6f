"""Compare gpurank's CPU kernels with peer libraries on the same inputs.

Prints a markdown table: kernel x n x m x shape -> our time, best peer time (and which),
ratio (peer / ours, > 1 means we are faster), and whether the answers agree; then a table of
every peer mode's time on each cell. Each peer runs in its fastest documented mode, and a
peer whose default mode is slower (pymcdm validates its input unless ``validation=False``;
scikit-criteria builds and validates a DecisionMatrix) runs in both, so the comparison shows
the default a user gets and the best the peer can do (:data:`MODES` says which mode is
which). Times are the median of a few repeats (one repeat for calls over ~5 s). A peer cell
predicted to take more than ``--peer-limit`` seconds (scaled from its time at the previous n)
is skipped and marked so.

    python benchmarks/compare_peers.py --sizes 100000 1000000 > out.md
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import statistics
import sys
import time

import numpy as np

from gpurank.engine.formatting import markdown_table
from gpurank.kernels import cpu
from gpurank.kernels.datagen import SHAPES, make_costs, make_topsis


def have(mod):
    return importlib.util.find_spec(mod) is not None


# ---- peers: name -> (callable(c) -> result in our format, scaling exponent for skipping)


def _moocore_front(c):
    import moocore

    return moocore.is_nondominated(c, keep_weakly=True)


def _paretoset_front(c):
    import paretoset

    return np.asarray(paretoset.paretoset(c, sense=["min"] * c.shape[1], distinct=False,
                                          use_numba=True))


def _pymoo_front(c):
    # pymoo's fastest front: NonDominatedSorting().do(only_non_dominated_front=True) ranks
    # every front first (pymoo >= 0.6.2 computes moocore.pareto_rank, whatever `method`)
    from pymoo.util.nds.non_dominated_sorting import find_non_dominated

    out = np.zeros(c.shape[0], dtype=bool)
    out[find_non_dominated(c)] = True
    return out


def _botorch_front(c):
    import torch
    from botorch.utils.multi_objective.pareto import is_non_dominated

    return is_non_dominated(-torch.from_numpy(c), deduplicate=False).numpy()


def _moocore_rank(c):
    import moocore

    return moocore.pareto_rank(c)


def _pymoo_rank(c):
    from pymoo.util.nds.non_dominated_sorting import NonDominatedSorting

    fronts = NonDominatedSorting(method="efficient_non_dominated_sort").do(c)
    out = np.empty(c.shape[0], dtype=np.int32)
    for r, idx in enumerate(fronts):
        out[idx] = r
    return out


def _pymcdm_topsis(x, w, b, *, validation=True):
    from pymcdm.methods import TOPSIS
    from pymcdm.normalizations import vector_normalization

    return TOPSIS(normalization_function=vector_normalization)(
        x, w / w.sum(), np.where(b, 1, -1), validation=validation)


def _pymcdm_topsis_unvalidated(x, w, b):
    return _pymcdm_topsis(x, w, b, validation=False)


def _skcriteria_topsis(x, w, b):
    import warnings

    from skcriteria import mkdm
    from skcriteria.agg.topsis import TOPSIS
    from skcriteria.preprocessing.scalers import VectorScaler

    dm = mkdm(x, objectives=[max if f else min for f in b], weights=w / w.sum())
    dm = VectorScaler(target="matrix").transform(dm)
    with warnings.catch_warnings():  # "TOPSIS ... minimization objectives ... not recommended"
        warnings.simplefilter("ignore", UserWarning)
        return TOPSIS().evaluate(dm).e_.similarity


def _skcriteria_topsis_function(x, w, b):
    from skcriteria.agg.topsis import topsis
    from skcriteria.preprocessing.scalers import scale_by_vector

    objectives = np.where(b, 1, -1)  # skcriteria's Objective.MAX / Objective.MIN values
    return topsis(scale_by_vector(x, axis=0), objectives, w / w.sum())[3]


PEERS = {
    "pareto_front": [
        ("moocore", "moocore", _moocore_front, 1.3),
        ("paretoset", "paretoset", _paretoset_front, 2.0),
        ("pymoo", "pymoo", _pymoo_front, 2.0),
        ("botorch", "botorch", _botorch_front, 2.0),
    ],
    "pareto_rank": [
        ("moocore", "moocore", _moocore_rank, 1.5),
        ("pymoo", "pymoo", _pymoo_rank, 2.0),
    ],
    "topsis": [
        ("pymcdm", "pymcdm", _pymcdm_topsis, 1.0),
        ("pymcdm validation=False", "pymcdm", _pymcdm_topsis_unvalidated, 1.0),
        ("scikit-criteria", "skcriteria", _skcriteria_topsis, 1.0),
        ("scikit-criteria topsis()", "skcriteria", _skcriteria_topsis_function, 1.0),
    ],
}

#: The mode each peer runs in, and whether it is the peer's fastest documented one.
MODES = {
    "moocore": "moocore.is_nondominated(keep_weakly=True) / moocore.pareto_rank (C; its only "
               "mode)",
    "paretoset": "paretoset(..., distinct=False, use_numba=True) (its fastest)",
    "pymoo": "pymoo.util.nds.non_dominated_sorting.find_non_dominated (front) and "
             "NonDominatedSorting().do (ranks); pymoo >= 0.6.2 computes both with moocore",
    "botorch": "botorch.utils.multi_objective.pareto.is_non_dominated(deduplicate=False) on "
               "CPU tensors",
    "pymcdm": "TOPSIS(vector_normalization)(matrix, weights, types): the default, validation "
              "on",
    "pymcdm validation=False": "the same call with validation=False: pymcdm's fastest "
                               "documented mode",
    "scikit-criteria": "mkdm + VectorScaler + TOPSIS().evaluate: the documented pipeline "
                       "(builds and validates a DecisionMatrix)",
    "scikit-criteria topsis()": "skcriteria.agg.topsis.topsis on scale_by_vector(matrix, "
                                "axis=0): the module function, documented as TOPSIS without "
                                "any validation (its fastest)",
}


ONLY = None  # set from --peers: restrict to these peer names


def available_peers(kernel):
    out = []
    for name, mod, fn, expo in PEERS[kernel]:
        if ONLY is not None and name not in ONLY:
            continue
        if have(mod) and (mod != "botorch" or have("torch")):
            out.append((name, fn, expo))
    return out


def timed(fn, *args, repeats=3):
    """Median seconds of ``repeats`` calls (a single call if the first takes > 5 s)."""
    ts = []
    result = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn(*args)
        ts.append(time.perf_counter() - t0)
        if ts[-1] > 5.0:
            break
    return statistics.median(ts), result


def agree(kernel, ours, theirs):
    if kernel == "topsis":
        return bool(np.allclose(ours, theirs, rtol=1e-8))
    return bool(np.array_equal(np.asarray(ours), np.asarray(theirs)))


def warm_up():
    for m in (1, 2, 3, 4, 6):
        c = make_costs(300, m, "realistic")
        cpu.pareto_front(c), cpu.pareto_rank(c), cpu.domination_count(c)
        cpu.domination_count(c, cap=3)
    x, w, b = make_topsis(300, 4)
    cpu.topsis(x, w, b)
    # the parallel variants only run from PAR_MIN rows on: compile (or load) them too
    from gpurank.kernels.cpu.topsis import PAR_MIN

    big = PAR_MIN + 1
    for m in (2, 3, 4, 6):
        cpu.pareto_front(make_costs(big, m, "realistic"))
    x, w, b = make_topsis(big, 4)
    cpu.topsis(x, w, b)


def run(kernels, sizes, ms, shapes, peer_limit, repeats, budget, log=sys.stderr,
        ours_limit=120.0):
    """Yield result rows (dicts)."""
    start = time.perf_counter()
    last = {}  # (kernel, peer, m, shape) -> (n, seconds)
    for n in sizes:
        for kernel in kernels:
            for shape in shapes if kernel != "topsis" else ("uniform",):
                for m in ms:
                    if time.perf_counter() - start > budget:
                        print(f"# budget of {budget:.0f} s spent; stopping", file=log)
                        return
                    if kernel == "topsis":
                        x, w, b = make_topsis(n, m)
                        ours_fn, args = (lambda x=x, w=w, b=b: cpu.topsis(x, w, b)), ()
                        peer_args = (x, w, b)
                    else:
                        c = make_costs(n, m, shape)
                        ours_fn, args = (lambda c=c, k=kernel: getattr(cpu, k)(c)), ()
                        peer_args = (c,)
                    okey = (kernel, "gpurank", m, shape)
                    if okey in last:
                        n0, t0 = last[okey]
                        pred = t0 * (n / n0) ** 1.5
                        if pred > ours_limit:
                            print(f"# {kernel} n={n} m={m} {shape}: ours skipped "
                                  f"(~{pred:.0f} s predicted)", file=log, flush=True)
                            yield dict(kernel=kernel, n=n, m=m, shape=shape,
                                       ours=float("nan"), peer="-", peer_t=float("nan"),
                                       agree=True, notes=f"ours skipped (~{pred:.0f} s "
                                       "predicted)")
                            continue
                    if kernel == "topsis":
                        ours_fn()  # the first fresh outputs of a process fault in slowly
                    t_ours, r_ours = timed(ours_fn, repeats=repeats)
                    last[okey] = (n, t_ours)
                    best = None
                    notes = []
                    timings = {}
                    if kernel == "topsis":
                        # the memory-copy floor (one read and one write of the matrix into
                        # an existing array), against ours writing into an existing array
                        dst = np.empty_like(x)
                        t_copy, _ = timed(np.copyto, dst, x, repeats=max(repeats, 5))
                        del dst
                        out = np.empty(n)
                        t_out, _ = timed(lambda x=x, w=w, b=b, out=out: cpu.topsis(
                            x, w, b, out=out), repeats=max(repeats, 5))
                        notes.append(f"into a preallocated out {t_out:.4f} s = "
                                     f"{t_out / t_copy:.2f}x the copy floor {t_copy:.4f} s "
                                     "(np.copyto of the matrix)")
                    ok = True
                    for pname, pfn, expo in available_peers(kernel):
                        key = (kernel, pname, m, shape)
                        if pname == "scikit-criteria" and n >= 10**7:
                            notes.append("scikit-criteria (DecisionMatrix) skipped (> 10 GB "
                                         "at 1e7 rows)")
                            continue
                        if key in last:
                            n0, t0 = last[key]
                            pred = t0 * (n / n0) ** expo
                            if pred > peer_limit:
                                notes.append(f"{pname} skipped (~{pred:.0f} s predicted)")
                                continue
                        try:
                            t_p, r_p = timed(pfn, *peer_args, repeats=repeats)
                        except Exception as e:  # noqa: BLE001 - a peer failing is reported
                            notes.append(f"{pname} failed: {type(e).__name__}")
                            continue
                        last[key] = (n, t_p)
                        timings[pname] = t_p
                        if not agree(kernel, r_ours, r_p):
                            ok = False
                            notes.append(f"{pname} DISAGREES")
                        if best is None or t_p < best[1]:
                            best = (pname, t_p)
                    row = dict(
                        kernel=kernel, n=n, m=m, shape=shape, ours=t_ours,
                        peer=best[0] if best else "-", peer_t=best[1] if best else float("nan"),
                        agree=ok, notes="; ".join(notes), peers=timings,
                    )
                    print(
                        f"# {kernel} n={n} m={m} {shape}: ours {t_ours:.4f} s, "
                        f"best peer {row['peer']} {row['peer_t']:.4f} s {row['notes']}",
                        file=log, flush=True,
                    )
                    yield row


def markdown(rows):
    cells = []
    for r in rows:
        ratio = (r["peer_t"] / r["ours"]
                 if r["ours"] > 0 and r["peer_t"] == r["peer_t"] else None)
        cells.append([r["kernel"], f"{r['n']:.0e}", r["m"], r["shape"], f"{r['ours']:.4f}",
                      r["peer"], f"{r['peer_t']:.4f}", f"{ratio:.2f}x" if ratio else "-",
                      "yes" if r["agree"] else "NO", r["notes"]])
    return "\n".join(markdown_table(
        ["kernel", "n", "m", "shape", "ours (s)", "best peer", "peer (s)", "speed-up", "agree",
         "notes"], cells, align="lrrlrlrrcl"))


def peers_markdown(rows):
    """Every peer mode's time on each cell, and our speed-up over it."""
    names = [n for n in MODES if any(n in r.get("peers", {}) for r in rows)]
    if not names:
        return ""
    cells = []
    for r in rows:
        row = [r["kernel"], f"{r['n']:.0e}", r["m"], r["shape"], f"{r['ours']:.4f}"]
        for n in names:
            t = r.get("peers", {}).get(n)
            row += (["-", "-"] if t is None else
                    [f"{t:.4f}", f"{t / r['ours']:.1f}x" if r["ours"] > 0 else "-"])
        cells.append(row)
    lines = markdown_table(["kernel", "n", "m", "shape", "ours (s)"]
                           + [h for n in names for h in (f"{n} (s)", "speed-up")],
                           cells, align="lrrlr" + "rr" * len(names))
    modes = "\n".join(f"- {n}: {MODES[n]}" for n in names)
    return "\n".join(lines) + "\n\nModes:\n" + modes


def summary(rows):
    out = []
    for kernel in ("pareto_front", "pareto_rank", "topsis"):
        rs = [r["peer_t"] / r["ours"] for r in rows
              if r["kernel"] == kernel and r["peer_t"] == r["peer_t"] and r["n"] >= 10**5]
        if rs:
            g = float(np.exp(np.mean(np.log(rs))))
            out.append(f"- {kernel}: geometric-mean speed-up {g:.2f}x over {len(rs)} cells "
                       f"(n >= 1e5), worst {min(rs):.2f}x, best {max(rs):.2f}x")
    return "\n".join(out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[10**4, 10**5, 10**6])
    p.add_argument("--ms", type=int, nargs="+", default=[2, 3, 4, 6])
    p.add_argument("--shapes", nargs="+", default=list(SHAPES))
    p.add_argument("--kernels", nargs="+", default=["pareto_front", "pareto_rank", "topsis"])
    p.add_argument("--peer-limit", type=float, default=60.0)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--budget", type=float, default=3600.0, help="stop after this many seconds")
    p.add_argument("--ours-limit", type=float, default=120.0,
                   help="skip our cell when predicted (n^1.5 from the previous size) above")
    p.add_argument("--peers", nargs="+", default=None, help="only these peers (default: all)")
    a = p.parse_args(argv)
    global ONLY
    ONLY = a.peers
    warm_up()
    rows = list(run(a.kernels, a.sizes, a.ms, a.shapes, a.peer_limit, a.repeats, a.budget,
                    ours_limit=a.ours_limit))
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    print(f"Date: {time.strftime('%Y-%m-%d %H:%M %Z')}. "
          f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, {platform.platform()}, "
          f"Python {platform.python_version()}, NumPy {np.__version__}. "
          f"Load average at the end: {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}\n")
    print(markdown(rows))
    print()
    print(peers_markdown(rows))
    print()
    print(summary(rows))


if __name__ == "__main__":
    main()
