"""What a fit keeps from the workload's physics where its rows cannot tell.

* The arithmetic intensity stays within a decade of the workload's own bytes estimate: a
  fit that drives it further is the intensity standing in for something else, and a
  memory-bound model takes its software's gains off the compute.
* Rows of one number format cannot measure the share of the FLOPs at the narrow peak: it
  is the measured prior, so a narrower format speeds a step up by less than its peak ratio.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from gpurank.engine.sources import calibrate, predict
from gpurank.engine.sources.model.fit import _intensity_range
from gpurank.engine.sources.model.fit_bounds import FIT_BOUNDS
from gpurank.engine.sources.model.perfmodel import (
    NARROW_FRACTION_PRIOR,
    CalibratedModel,
    mixed_peak,
)
from gpurank.engine.sources.model.workloads import default_model, workload, workload_names


def test_the_intensity_box_is_a_decade_either_side_of_the_estimate():
    wl = workload("llama2_70b_lora")
    est = wl.flops_per_sample / wl.bytes_per_sample
    _start, lo, hi = _intensity_range(wl, CalibratedModel())
    assert (lo, hi) == pytest.approx((est / 10.0, est * 10.0))
    # a workload without a bytes estimate keeps the generic box
    bare = replace(wl, bytes_per_sample=None)
    assert _intensity_range(bare, CalibratedModel())[1:] == pytest.approx(
        FIT_BOUNDS["arithmetic_intensity"].values())


def _shipped_with_estimate():
    for name in workload_names():
        wl = workload(name)
        if wl.bytes_per_sample and wl.arithmetic_intensity is None:
            try:
                yield name, default_model(name), wl
            except Exception:  # a workload without a shipped fit of its own
                continue


def test_every_shipped_fit_keeps_its_intensity_in_the_box():
    seen = 0
    for name, model, wl in _shipped_with_estimate():
        if model.workload != name:
            continue
        est = wl.flops_per_sample / wl.bytes_per_sample
        assert est / 10.0 * (1 - 1e-6) <= model.arithmetic_intensity <= est * 10.0 * (1 + 1e-6), name
        seen += 1
    assert seen >= 5


def test_a_fit_of_one_format_keeps_the_narrow_share_prior():
    assert 0.0 < NARROW_FRACTION_PRIOR < 1.0
    assert CalibratedModel().narrow_fraction == NARROW_FRACTION_PRIOR
    rows = []
    for nodes in (1, 2, 4):
        for gb in (8, 16, 32):
            rows.append(dict(accelerator="NVIDIA H100-SXM5-80GB", n_accelerators=8 * nodes,
                             n_nodes=nodes, accelerators_per_node=8,
                             global_batch_size=gb * nodes, benchmark="llama2_70b_lora",
                             precision="fp8"))
    t = pd.DataFrame(rows)
    wl = workload("llama2_70b_lora")
    truth = replace(default_model("llama2_70b_lora"), software_round=None)
    p = predict(t, truth, workload=wl, use_table_epochs=False)
    m = calibrate(t.assign(time_to_train_min=p["predicted_time_to_train_min"].to_numpy()),
                  workload=wl)
    assert m.narrow_fraction == NARROW_FRACTION_PRIOR
    assert "narrow_fraction" not in m.fit.at_bound


def test_a_narrower_format_speeds_a_step_by_less_than_its_peak_ratio():
    wide, narrow = 1000.0, 2000.0
    peak = float(mixed_peak(wide, narrow, NARROW_FRACTION_PRIOR))
    assert wide < peak < narrow
    assert peak == pytest.approx(wide / ((1 - NARROW_FRACTION_PRIOR)
                                         + NARROW_FRACTION_PRIOR * wide / narrow))
    # a first-principles workload at FP8 on a model fitted on BF16 rows
    model = default_model("bert_large")
    wl = workload("flux1")
    t = pd.DataFrame({"accelerator": ["NVIDIA B200-SXM-180GB"] * 2, "n_accelerators": 8,
                      "n_nodes": 1, "accelerators_per_node": 8, "global_batch_size": 256,
                      "precision": ["bf16", "fp8"]})
    out = predict(t, model, workload=wl, use_table_epochs=False)
    bf16, fp8 = out["predicted_time_to_train_min"].to_numpy()
    assert model.narrow_fraction == NARROW_FRACTION_PRIOR
    assert 1.0 < bf16 / fp8 < 2.0
    assert math.isfinite(bf16) and np.isfinite(fp8)
