"""Predict a later MLPerf Training round with the shipped models, from configuration columns
alone, and measure the error per workload, family and basis, and the interval coverage.

The shipped models are fitted on the shared rounds (v3.0-v4.0); a later round (v4.1, v5.0,
v5.1, ... from ``github.com/mlcommons/training_results_vX.Y``, in its original layout) is
the forward-in-time test a buyer cares about: its hardware (B200, GB200, GB300, MI355X, ...)
and workloads (Llama 3.1, FLUX.1) are those the models never saw.

Usage::

    python benchmarks/later_round.py PATH/training_results_v5.1 [--out errors.csv]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd

from gpurank.engine.sources.model.calibrate import predict
from gpurank.engine.sources.mlperf.reader import read_mlperf


def errors(pred: pd.DataFrame) -> pd.DataFrame:
    """Signed % error and whether the measured time is inside the 80% interval, per row with
    a measured time and a prediction."""
    p = pred[pd.to_numeric(pred["time_to_train_min"], errors="coerce") > 0].copy()
    t = p["time_to_train_min"].astype(float)
    p["error_pct"] = 100.0 * (p["predicted_time_to_train_min"] / t - 1.0)
    p["inside"] = (t >= p["predicted_time_to_train_min_lo"]) & (
        t <= p["predicted_time_to_train_min_hi"])
    return p


def summary(p: pd.DataFrame, by) -> pd.DataFrame:
    """Rows, rows predicted, median absolute and signed error (%), and interval coverage."""
    g = p.assign(ape=p["error_pct"].abs()).groupby(by, observed=True)
    return pd.DataFrame({
        "rows": g.size(),
        "predicted": g["error_pct"].count(),
        "median_abs_pct": g["ape"].median().round(1),
        "median_signed_pct": g["error_pct"].median().round(1),
        "inside_80_pct": (100.0 * g["inside"].mean()).round(0),
    })


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path", nargs="+", help="a training_results_vX.Y folder (original layout)")
    ap.add_argument("--out", help="write every row's prediction and error here (CSV)")
    args = ap.parse_args(argv)
    table = read_mlperf(args.path, benchmark="all").table
    table = table[table["benchmark"].astype(str).str.strip() != ""]
    p = errors(predict(table, use_table_epochs=False))
    pd.set_option("display.width", 200)
    print(summary(p, "benchmark").to_string())
    print()
    print(summary(p, ["benchmark", "prediction_basis"]).to_string())
    ape = p["error_pct"].abs()
    print(f"\nall: {len(p)} rows, {int(ape.notna().sum())} predicted, median {ape.median():.1f}%, "
          f"inside the 80% interval {100.0 * p['inside'].mean():.0f}%")
    if args.out:
        p.to_csv(args.out, index=False)
    return 0 if np.isfinite(ape.median()) else 1


if __name__ == "__main__":
    sys.exit(main())
