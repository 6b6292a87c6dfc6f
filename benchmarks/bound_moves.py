"""How much each shipped model's parameters on a bound move its rows when freed.

For every parameter of ``engine/data/models/*.json`` that ends on a bound of the fit's box
(``model.fit.at_bound``), the workload's fitted rows are predicted again with the parameter
moved inside the box (the rest of the fit unchanged), and the median and largest change of the
predicted time are printed as the rows of docs/simulator.md's "Parameters on a bound" table.

Usage::

    gpurank mlperf ../shared/data/mlperf_training/raw --benchmark all \\
        --published-scores ../shared/data/mlperf_training/summary.csv -o /tmp/mlperf_training.parquet
    python benchmarks/bound_moves.py /tmp/mlperf_training.parquet [docs/simulator.md]

With the docs file given, the reason column keeps what the file says of each case and new cases
take the parameter's general reason.
"""

from __future__ import annotations

import re
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from gpurank.engine.sources import predict
from gpurank.engine.sources.model.fit import bound_source
from gpurank.engine.sources.model.perfmodel import CalibratedModel
from gpurank.engine.sources.model.workloads import workload

MODELS = Path(__file__).resolve().parents[1] / "engine" / "data" / "models"

#: Where a parameter on each side of its box is moved to (a factor for the log ones).
MOVES = {
    ("batch_half", "low"): 2.0, ("comm_efficiency", "high"): 0.8,
    ("overhead_s", "low"): 30.0, ("mem_overlap", "low"): 0.1, ("mem_overlap", "high"): 0.9,
    ("overlap", "high"): 0.9, ("step_latency_s", "low"): 1e-4, ("step_latency_s", "high"): 0.02,
    ("narrow_fraction", "high"): 0.9, ("narrow_fraction", "low"): 0.1,
    ("software_trend", "low"): 0.05, ("software_trend_decay", "high"): 0.8,
    ("software_trend_decay", "low"): 0.4,
    ("power_exponent", "low"): 0.1, ("power_exponent", "high"): 0.7,
}

#: The general reason of a case the docs do not explain yet.
REASONS = {
    ("software_trend", "low"): "the rows show no gain of this software between their rounds "
                               "beyond what the families' own efficiencies hold: none measured",
    ("software_trend_decay", "high"): "the gain the rows show does not slow as the families "
                                      "age (with no trend, the decay changes nothing)",
    ("software_trend_decay", "low"): "the rows' gain is all in a family's first rounds",
    ("power_exponent", "low"): "the rows' parts of one family (B200 and GB200) differ in watts "
                               "per peak FLOP/s, their times no more than their peaks: power "
                               "does not limit this workload's step",
    ("power_exponent", "high"): "the rows' parts of one family differ in speed at least as much "
                                "as in watts per peak FLOP/s (8 MI325X 1.33 times as fast as 8 "
                                "MI300X at the same peak, 1.33 times the power)",
}


def _kind(name: str) -> str:
    """The row of the fit's box a fitted parameter's name stands for."""
    return bound_source(name).name


def moved(model: CalibratedModel, name: str, side: str, value: float) -> CalibratedModel:
    """``model`` with the parameter ``name`` moved from its bound into the box."""
    kind = _kind(name)
    if kind == "arithmetic_intensity":
        return replace(model, arithmetic_intensity=value / 10 if side == "high" else value * 10)
    to = MOVES[(kind, side)]
    if name == "software_trend_shared":
        return replace(model, software_trend_shared=to)
    if name.startswith("software_trend_by_vendor["):
        vendor = name[len("software_trend_by_vendor["):-1]
        return replace(model, software_trend_by_vendor={**model.software_trend_by_vendor,
                                                        vendor: to})
    return replace(model, **{name: to})


def _documented(doc: str) -> tuple[dict, dict]:
    """What the docs' table says of each ``(workload, parameter)`` case, and of each
    ``(parameter, side)`` where a case is not binding (the general reason)."""
    cases, general = {}, {}
    for line in doc.splitlines():
        m = re.match(r"\| (\S+) \| `([^`]+)` \| (low|high) [^|]+\|.*\| ([^|]+) \|$", line)
        if m:
            why = m.group(4).strip()
            cases[(m.group(1), m.group(2))] = why
            if not why.startswith("binding"):
                general.setdefault((_kind(m.group(2)), m.group(3)), why.split("; the rows")[0])
    return cases, general


def main(table_path: str, doc_path: str | None = None) -> None:
    table = pd.read_parquet(table_path)
    said, general = _documented(Path(doc_path).read_text()) if doc_path else ({}, {})
    print("| workload | parameter | bound | moved to | median change | largest change | "
          "why it is left there |")
    print("|:--|:--|--:|--:|--:|--:|:--|")
    for path in sorted(MODELS.glob("*.json")):
        model = CalibratedModel.from_json(path)
        if not model.fit.at_bound:
            continue
        wl = workload(model.workload)
        rows = table[table["workload"].astype(str).eq(wl.name).to_numpy()
                     & ~table["division"].astype(str).str.lower().eq("open").to_numpy()]
        base = predict(rows, model, workload=wl)["predicted_time_to_train_min"].to_numpy()
        for name in sorted(model.fit.at_bound):
            bound = model.fit.bounds[name]
            side, value = bound["side"], float(bound["value"])
            other = moved(model, name, side, value)
            new = predict(rows, other, workload=wl)["predicted_time_to_train_min"].to_numpy()
            change = np.abs(new / base - 1.0) * 100.0
            change = change[np.isfinite(change)]
            to = getattr(other, name, None) if "[" not in name else MOVES[(_kind(name), side)]
            why = (said.get((model.workload, name)) or REASONS.get((_kind(name), side))
                   or general.get((_kind(name), side))
                   or "not identified by the rows: the bound stands for its limit")
            if np.median(change) >= 5.0 and not why.startswith("binding"):
                why = f"binding (the rows move by {np.median(change):.0f}% at the median): {why}"
            print(f"| {model.workload} | `{name}` | {side} {value:.4g} | {to:.4g} | "
                  f"{np.median(change):.1f}% | {change.max():.1f}% | {why} |")


if __name__ == "__main__":
    main(*sys.argv[1:3])
