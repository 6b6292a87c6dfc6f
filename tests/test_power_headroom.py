"""A part's power headroom: the watts per peak FLOP/s it has over its family's parts.

An MI325X runs the MI300X's silicon and peak at 1,000 W instead of 750 W and sustains more
of that peak; the model moves a family's compute efficiency by ``headroom **
power_exponent``, fitted where a workload's rows hold one family's parts at different
headroom, in predictions and sweeps alike, and says so in the note.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from gpurank.engine.sources import calibrate, predict, simulate
from gpurank.engine.sources.facts import catalog as _cat
from gpurank.engine.sources.facts.power import (
    NOTE_THRESHOLD,
    power_gain,
    power_headroom,
    power_note,
    wide_peak,
)
from gpurank.engine.sources.model.perfmodel import CalibratedModel
from gpurank.engine.sources.model.workloads import default_model, workload


def _catalog():
    return _cat.accelerator_catalog(None)


def _part(acc_id):
    cat = _catalog()
    row = cat[cat["accelerator_id"] == acc_id]
    assert len(row) == 1, acc_id
    return row


def _headroom(acc_id):
    row = _part(acc_id)
    return float(power_headroom(row["tdp_w"], wide_peak(row), row["family"], _catalog())[0])


def test_parts_of_one_family_differ_by_their_watts_per_peak_flop():
    mi300x, mi325x = _headroom("amd_mi300x"), _headroom("amd_mi325x")
    # the same peak at 750 and 1,000 W: the ratio of the headrooms is the ratio of the powers
    assert mi325x / mi300x == pytest.approx(1000.0 / 750.0)
    assert mi300x < 1.0 < mi325x
    # MI355X: 1,400 W for 2,517 TFLOP/s; MI350X: 1,000 W for 2,307
    assert _headroom("amd_mi355x") / _headroom("amd_mi350x") == pytest.approx(
        (1400 / 2516.6) / (1000 / 2306.9))


def test_a_part_alone_in_its_family_or_without_facts_has_no_headroom():
    cat = _catalog()
    fam = pd.Series(["Gaudi3", "no such family", "MI300", "MI300"])
    tdp = np.array([900.0, 500.0, np.nan, 750.0])
    wide = np.array([1835.0, 400.0, 1307.4, 0.0])
    np.testing.assert_array_equal(power_headroom(tdp, wide, fam, cat), [1.0, 1.0, 1.0, 1.0])


def test_the_family_reference_is_the_catalog_in_use():
    cat = _catalog()
    mine = cat[cat["family"] == "MI300"].copy()
    mine["tdp_w"] = 900.0  # a catalog where both parts have the same power
    h = power_headroom(mine["tdp_w"], wide_peak(mine), mine["family"], mine)
    np.testing.assert_allclose(h, 1.0)


def test_the_gain_is_the_exponent_times_the_log_headroom():
    h = np.array([0.5, 1.0, 2.0, np.nan, -1.0])
    np.testing.assert_allclose(power_gain(h, 0.0), 0.0)
    np.testing.assert_allclose(power_gain(h, 0.5), [0.5 * np.log(0.5), 0, 0.5 * np.log(2), 0, 0])


def test_the_note_names_power_and_peak_only_where_the_rate_moves():
    assert power_note(1.0 + NOTE_THRESHOLD / 2, 1.0, 1000.0, 1307.4) == ""
    assert power_note(1.2, 0.0, 1000.0, 1307.4) == ""
    text = power_note(0.8, 1.0, 750.0, 1307.4)
    assert text.startswith("sustained compute x0.80 of its family's: 750 W for 1,307 dense")
    assert "power_exponent 1.00" in text


def test_a_model_without_the_exponent_predicts_as_before():
    model = default_model("llama2_70b_lora")
    assert CalibratedModel().power_exponent == 0.0
    t = pd.DataFrame({"accelerator": ["AMD Instinct MI300X", "AMD Instinct MI325X"],
                      "n_accelerators": [8, 8], "n_nodes": [1, 1],
                      "accelerators_per_node": [8, 8], "global_batch_size": [8, 8]})
    wl = workload("llama2_70b_lora")
    flat = predict(t, replace(model, power_exponent=0.0), workload=wl, use_table_epochs=False)
    moved = predict(t, replace(model, power_exponent=0.8), workload=wl, use_table_epochs=False)
    f, m = (p["predicted_time_to_train_min"].to_numpy() for p in (flat, moved))
    # without the exponent the two parts differ only by memory bandwidth; with it the
    # part with more watts per FLOP/s is faster and the one with fewer slower
    assert f[0] / f[1] < m[0] / m[1]
    assert m[0] > f[0] and m[1] < f[1]
    assert "sustained compute" not in " ".join(flat["prediction_note"])
    assert "sustained compute x0." in moved["prediction_note"].iloc[0]
    assert "sustained compute x1." in moved["prediction_note"].iloc[1]


def _synthetic(exponent: float):
    """MI300X and MI325X rows (and H100s for the shared parameters) timed by a model with
    a known exponent."""
    rows = []
    for acc in ("AMD Instinct MI300X", "AMD Instinct MI325X", "NVIDIA H100-SXM5-80GB"):
        for nodes in (1, 2, 4, 8):
            for gb in (8, 16):
                rows.append(dict(accelerator=acc, n_accelerators=8 * nodes, n_nodes=nodes,
                                 accelerators_per_node=8, global_batch_size=gb * nodes,
                                 benchmark="llama2_70b_lora"))
    t = pd.DataFrame(rows)
    wl = workload("llama2_70b_lora")
    truth = replace(default_model("llama2_70b_lora"), power_exponent=exponent,
                    software_round=None)
    p = predict(t, truth, workload=wl, use_table_epochs=False)
    return t.assign(time_to_train_min=p["predicted_time_to_train_min"].to_numpy()), wl


@pytest.mark.parametrize("exponent", [0.1, 0.6])
def test_a_fit_recovers_the_exponent_of_its_rows(exponent):
    t, wl = _synthetic(exponent)
    m = calibrate(t, workload=wl)
    assert m.power_exponent == pytest.approx(exponent, abs=0.08)


def test_rows_of_one_headroom_leave_the_exponent_unfitted():
    t, wl = _synthetic(0.6)
    one = t[t["accelerator"] != "AMD Instinct MI325X"]
    m = calibrate(one, workload=wl)
    assert m.power_exponent == CalibratedModel().power_exponent
    assert "power_exponent" not in m.fit.at_bound


def test_a_sweep_moves_and_notes_the_parts_as_a_prediction_does():
    model = replace(default_model("llama2_70b_lora"), power_exponent=0.8)
    t = simulate(400, seed=5, model=model, workload=workload("llama2_70b_lora"),
                 accelerators=["AMD Instinct MI300X", "AMD Instinct MI325X"],
                 counts=[8], nodes=[1], local_batch=[1])
    by = t.groupby("accelerator")
    assert set(by.groups) == {"AMD Instinct MI300X", "AMD Instinct MI325X"}
    thr = by["throughput"].median()
    assert thr["AMD Instinct MI325X"] > 1.15 * thr["AMD Instinct MI300X"]
    notes = by["prediction_note"].first()
    assert "sustained compute x0." in notes["AMD Instinct MI300X"]
    assert "sustained compute x1." in notes["AMD Instinct MI325X"]
