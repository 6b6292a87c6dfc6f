"""A family without calibration rows runs at the efficiency of its generation's fitted
families in its power class: B300 is Blackwell as B200 is, runs the same kernels and draws
about the watts per TFLOP/s B200 does.

Its power headroom is then measured against the parts it borrows from (the efficiency is
theirs, at their watts per FLOP/s), and the note names both. A family of a generation
without fitted families in its power class keeps its vendor's efficiency, and a model file
that does not record its families' generations predicts as before.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from gpurank.engine.errors import DataError
from gpurank.engine.sources import predict, simulate
from gpurank.engine.sources.facts import catalog as _cat
from gpurank.engine.sources.facts.power import (
    family_watts_per_tflops,
    power_headroom,
    wide_peak,
)
from gpurank.engine.sources.model.lenders import (
    POWER_CLASS_RATIO,
    generation_lenders,
    power_reference,
)
from gpurank.engine.sources.model.perfmodel import CalibratedModel
from gpurank.engine.sources.model.workloads import default_model, workload

#: watts per dense TFLOP/s per family, as the catalog gives them
POWER = {"B200": 0.46, "B300": 0.52, "A100": 1.12, "A30": 1.0, "A40": 2.0, "H100": 0.71,
         "MI300": 0.67}


def _model(**kw):
    base = CalibratedModel(
        compute_efficiency_by_family={"B200": 0.7, "H100": 0.5, "MI300": 0.4, "A100": 0.35,
                                      "A30": 0.37},
        compute_efficiency_by_vendor={"NVIDIA": 0.55, "AMD": 0.4},
        compute_efficiency_shared=0.5,
        generation_by_family={"B200": "Blackwell", "H100": "Hopper", "MI300": "CDNA3",
                              "A100": "Ampere", "A30": "Ampere"},
        workload="llama2_70b_lora")
    return replace(base, **kw)


def test_a_family_without_rows_takes_its_generations_efficiency_in_its_power_class():
    m = _model()
    assert m.compute_efficiency_for("B300", "Blackwell", vendor="NVIDIA", power=POWER) == (
        0.7, "borrowed:B200")
    # A40 draws 2 W per TFLOP/s, A100 and A30 1.0-1.1: other products, its vendor's then
    assert m.compute_efficiency_for("A40", "Ampere", vendor="NVIDIA", power=POWER) == (
        0.55, "borrowed:NVIDIA")
    # a generation without fitted families: the vendor's software, then the shared one
    assert m.compute_efficiency_for("R100", "Rubin", vendor="NVIDIA", power=POWER) == (
        0.55, "borrowed:NVIDIA")
    assert m.compute_efficiency_for("X1", None, vendor="Nobody", power=POWER) == (
        0.5, "borrowed:shared")
    # a fitted family keeps its own
    assert m.compute_efficiency_for("B200", "Blackwell", vendor="NVIDIA", power=POWER) == (
        0.7, "fitted")


def test_several_lenders_lend_their_median_and_are_named():
    m = _model()
    power = dict(POWER, A10=1.2)
    assert generation_lenders(m, "A10", "Ampere", power) == ("A100", "A30")
    assert m.compute_efficiency_for("A10", "Ampere", vendor="NVIDIA", power=power) == (
        pytest.approx(0.36), "borrowed:A100+A30")
    assert power_reference(m, "A10", "Ampere", power) == ("A100", "A30")
    assert power_reference(m, "A100", "Ampere", power) == "A100"


@pytest.mark.parametrize("ratio", [1.0, POWER_CLASS_RATIO * 0.99, POWER_CLASS_RATIO * 1.01, 3.0])
def test_the_power_class_is_a_ratio_either_way(ratio):
    m = _model()
    for own in (0.46 * ratio, 0.46 / ratio):
        lent = generation_lenders(m, "B300", "Blackwell", dict(POWER, B300=own))
        assert (lent == ("B200",)) == (ratio <= POWER_CLASS_RATIO)


@pytest.mark.parametrize("generation", [None, "", "nan", float("nan")])
def test_a_missing_generation_borrows_nothing(generation):
    m = _model()
    assert generation_lenders(m, "B300", generation, POWER) == ()
    assert m.compute_efficiency_for("B300", generation, vendor="NVIDIA",
                                    power=POWER)[1] == "borrowed:NVIDIA"


@pytest.mark.parametrize("watts", [None, float("nan"), 0.0, -1.0, "x"])
def test_missing_power_facts_borrow_nothing(watts):
    m = _model()
    assert generation_lenders(m, "B300", "Blackwell", dict(POWER, B300=watts)) == ()
    assert generation_lenders(m, "B300", "Blackwell", None) == ()


def test_a_model_without_generations_borrows_from_its_vendor():
    m = _model(generation_by_family={})
    assert m.compute_efficiency_for("B300", "Blackwell", vendor="NVIDIA", power=POWER) == (
        0.55, "borrowed:NVIDIA")
    assert power_reference(m, "B300", "Blackwell", POWER) == "B300"


def test_the_generations_round_trip_and_are_checked(tmp_path):
    m = default_model("llama2_70b_lora")
    assert m.generation_by_family["B200"] == "Blackwell"
    path = tmp_path / "m.json"
    m.to_json(path)
    back = CalibratedModel.from_json(path)
    assert back.generation_by_family == m.generation_by_family
    text = path.read_text().replace('"Blackwell"', "7")
    path.write_text(text)
    with pytest.raises(DataError, match="generation_by_family"):
        CalibratedModel.from_json(path)


def test_the_power_headroom_of_a_borrowing_family_is_against_its_lenders_parts():
    cat = _cat.accelerator_catalog(None)
    b300 = cat[cat["accelerator_id"] == "nvidia_b300_hgx"]
    tdp, wide = b300["tdp_w"], wide_peak(b300)
    own = float(power_headroom(tdp, wide, b300["family"], cat)[0])
    ref = np.empty(1, dtype=object)
    ref[0] = ("B200",)
    lent = float(power_headroom(tdp, wide, ref, cat)[0])
    b200 = cat[cat["family"] == "B200"]
    per_tflop = pd.to_numeric(b200["tdp_w"]).to_numpy(float) / wide_peak(b200)
    expected = (float(tdp.iloc[0]) / float(wide[0])) / float(np.median(per_tflop))
    assert lent == pytest.approx(expected)
    assert lent != pytest.approx(own)
    # the catalog's figures put B300 in B200's power class
    power = family_watts_per_tflops(cat)
    assert max(power["B300"], power["B200"]) <= POWER_CLASS_RATIO * min(power["B300"],
                                                                        power["B200"])


def _rows(accelerators):
    return pd.DataFrame({"accelerator": accelerators, "n_accelerators": 8, "n_nodes": 1,
                         "accelerators_per_node": 8, "global_batch_size": 8,
                         "round": "v5.1"})


def _without(model, family):
    """``model`` as fitted without rows of ``family``."""
    return replace(model, compute_efficiency_by_family={
        f: e for f, e in model.compute_efficiency_by_family.items() if f != family},
        generation_by_family={f: g for f, g in model.generation_by_family.items()
                              if f != family})


def test_a_prediction_borrows_names_and_moves_it():
    model = default_model("llama2_70b_lora")
    assert model.generation_by_family.get("B200") == "Blackwell"
    model = _without(model, "B300")
    wl = workload("llama2_70b_lora")
    p = predict(_rows(["NVIDIA B300-SXM-270GB", "NVIDIA B200-SXM-180GB"]), model,
                workload=wl, use_table_epochs=False)
    assert p["prediction_basis"].tolist() == ["borrowed:B200", "fitted"]
    note = p["prediction_note"].iloc[0]
    assert "the efficiency of B200, its generation's (Blackwell) in its power class" in note
    assert "of B200's: 1,100 W for 2,250 dense TFLOP/s" in note
    # a generation's rows lend their efficiency, as the vendor's did before
    old = predict(_rows(["NVIDIA B300-SXM-270GB"]), replace(model, generation_by_family={}),
                  workload=wl, use_table_epochs=False)
    assert old["prediction_basis"].iloc[0] == "borrowed:NVIDIA"
    assert old["predicted_time_to_train_min"].iloc[0] != pytest.approx(
        p["predicted_time_to_train_min"].iloc[0])


def test_a_sweep_borrows_as_a_prediction_does():
    # RetinaNet's fit has A100, A30 and A40 rows, none of the A10 (1.2 W per TFLOP/s: in
    # the A100's and A30's power class, not the A40's)
    model = default_model("retinanet")
    wl = workload("retinanet")
    t = simulate(200, seed=2, model=model, workload=wl, accelerators=["NVIDIA A10"],
                 counts=[8], nodes=[1], local_batch=[8])
    assert set(t["prediction_basis"].astype(str)) == {"borrowed:A100+A30"}
    assert t["prediction_note"].astype(str).str.contains(
        r"the efficiency of A100 and A30, its generation's \(Ampere\)").all()
    p = predict(_rows(["NVIDIA A10"]).assign(global_batch_size=64), model, workload=wl,
                use_table_epochs=False)
    assert p["prediction_basis"].iloc[0] == "borrowed:A100+A30"
