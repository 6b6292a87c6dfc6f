"""Which TOPSIS normalization to use: how stable is the top k under resampling, and how
well does it separate the top rows?

For each normalization (``vector``, ``minmax``, ``log``) and each table:

- **top-k stability**: B bootstrap resamples of the table; in each, the top k configurations
  by TOPSIS (duplicates of a row counted once); the mean Jaccard overlap with the top k of
  the whole table, and the share of resamples whose best configuration is the whole
  table's best. A normalization driven by the extreme rows (the anti-ideal of a column
  spanning orders of magnitude) moves with them from resample to resample.
- **separation**: the spread of the top k's scores relative to the spread of all scores
  (``(s_1 - s_k) / (s_1 - s_median)``), and **crowding**: the share of rows scoring within
  0.02 of the best, which is large when the anti-ideal is so far away that most rows look
  ideal (every "why" bar of a report full).

Usage::

    python benchmarks/norm_stability.py                 # demo sweep (200k rows) + MLPerf
    python benchmarks/norm_stability.py --rows 50000 --resamples 20 --json out.json

The MLPerf table is read from ../shared/data/mlperf_resnet when it is there.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from gpurank.engine.backend import resolve_backend
from gpurank.engine.metrics import derive_metrics
from gpurank.engine.ranking import criteria_matrix, score_input
from gpurank.engine.spec import NORMS, default_criteria, normalize_weights
from gpurank.kernels import cpu

CPU = resolve_backend("cpu")


def _scores(costs, criteria, norm):
    matrix, kernel_norm = score_input(costs, criteria, norm, backend=CPU)
    w = np.asarray(normalize_weights(criteria))
    return cpu.topsis(np.ascontiguousarray(matrix), w, np.zeros(len(criteria), bool),
                      norm=kernel_norm)


def _positions(costs, criteria, norm, rows):
    """Where ``rows`` sit between anti-ideal (0) and ideal (1) on each criterion, on the
    scale TOPSIS used (the normalization's own distances)."""
    matrix, kernel_norm = score_input(costs, criteria, norm, backend=CPU)
    m = np.asarray(matrix, dtype=np.float64)
    if kernel_norm == "vector":
        m = m / np.sqrt((m * m).sum(axis=0))
    lo, hi = m.min(axis=0), m.max(axis=0)
    return (hi - m[rows]) / np.where(hi > lo, hi - lo, 1.0)


def _top(scores, rows, k):
    """The k best distinct rows (``rows`` maps positions to row ids)."""
    order = np.argsort(-scores, kind="stable")
    out, seen = [], set()
    for i in order:
        r = int(rows[i])
        if r not in seen:
            seen.add(r)
            out.append(r)
            if len(out) == k:
                break
    return out


def study(costs, criteria, *, k=10, resamples=30, seed=0):
    """One row per normalization: stability and separation figures."""
    rng = np.random.default_rng(seed)
    n = len(costs)
    draws = [rng.integers(0, n, n) for _ in range(resamples)]
    out = []
    for norm in NORMS:
        t0 = time.perf_counter()
        full = _scores(costs, criteria, norm)
        top_full = _top(full, np.arange(n), k)
        srt = np.sort(full)[::-1]
        sep = (srt[0] - srt[k - 1]) / max(srt[0] - np.median(full), 1e-300)
        crowd = float(np.mean(full >= srt[0] - 0.02))
        pos = _positions(costs, criteria, norm, top_full)
        jac, same_best = [], 0
        for idx in draws:
            s = _scores(np.ascontiguousarray(costs[idx]), criteria, norm)
            top = _top(s, idx, k)
            jac.append(len(set(top) & set(top_full)) / len(set(top) | set(top_full)))
            same_best += top[0] == top_full[0]
        out.append({"norm": norm, "rows": n, "k": k, "resamples": resamples,
                    "topk_jaccard_mean": float(np.mean(jac)),
                    "topk_jaccard_min": float(np.min(jac)),
                    "best_kept": same_best / resamples,
                    "top_scores": [float(srt[0]), float(srt[k - 1])],
                    "separation": float(sep), "crowding": crowd,
                    "top_positions": [float(v) for v in pos.mean(axis=0)],
                    "seconds": time.perf_counter() - t0})
    return out


def _demo_table(rows, seed):
    from gpurank.engine.sources.sweep.simulate import simulate

    return derive_metrics(simulate(rows, seed=seed))


def _mlperf_table():
    root = Path(__file__).resolve().parents[2] / "shared" / "data" / "mlperf_resnet"
    if not root.is_dir():
        return None
    from gpurank.engine.sources.mlperf.reader import read_mlperf

    res = read_mlperf([root / "raw"], published_scores=root / "summary.csv", dedupe=True)
    t = res.table
    if "accelerator_type" in t:
        t = t[t["accelerator_type"] == "gpu"]
    t = t[t["time_to_train_min"].notna() & (t["n_accelerators"] > 0)].reset_index(drop=True)
    return derive_metrics(t)


def _costs(df):
    criteria = default_criteria(df.columns)
    costs = np.asarray(criteria_matrix(df, criteria, backend=CPU))
    ok = np.isfinite(costs).all(axis=1)
    signs = np.array([-1.0 if c.sense == "max" else 1.0 for c in criteria])
    ok &= ((costs * signs) > 0).all(axis=1)  # log needs positive values
    return np.ascontiguousarray(costs[ok]), criteria


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, default=200_000)
    p.add_argument("--resamples", type=int, default=30)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", default=None)
    a = p.parse_args(argv)
    tables = {"demo sweep (seed 0)": _demo_table(a.rows, 0),
              "demo sweep (seed 1)": _demo_table(a.rows, 1)}
    mlperf = _mlperf_table()
    if mlperf is not None:
        tables["MLPerf ResNet-50 v0.5-v3.1 (GPU systems)"] = mlperf
    results = []
    print(f"{'table':44} {'norm':7} {'rows':>8} {'Jaccard':>8} {'min':>6} {'best kept':>9} "
          f"{'top-1':>7} {'top-k':>7} {'separation':>10} {'crowding':>8}  positions")
    for name, df in tables.items():
        costs, criteria = _costs(df)
        for r in study(costs, criteria, k=a.k, resamples=a.resamples, seed=a.seed):
            r["table"] = name
            r["criteria"] = [str(c) for c in criteria]
            results.append(r)
            print(f"{name:44} {r['norm']:7} {r['rows']:>8,} {r['topk_jaccard_mean']:>8.3f} "
                  f"{r['topk_jaccard_min']:>6.2f} {r['best_kept']:>9.2f} "
                  f"{r['top_scores'][0]:>7.4f} {r['top_scores'][1]:>7.4f} "
                  f"{r['separation']:>10.3f} {r['crowding']:>8.4f}  "
                  + " ".join(f"{v:.2f}" for v in r["top_positions"]))
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
