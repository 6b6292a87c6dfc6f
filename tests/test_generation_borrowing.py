"""A family without calibration rows runs at the efficiency of its generation's fitted
families: B300 is Blackwell as B200 is, and runs the same kernels.

Its power headroom is then measured against the parts it borrows from (the efficiency is
theirs, at their watts per FLOP/s), and the note names both. A family of a generation
without rows keeps its vendor's efficiency, and a model file that does not record its
families' generations predicts as before.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from gpurank.engine.errors import DataError
from gpurank.engine.sources import predict, simulate
from gpurank.engine.sources.facts import catalog as _cat
from gpurank.engine.sources.facts.power import power_headroom, wide_peak
from gpurank.engine.sources.model.perfmodel import CalibratedModel
from gpurank.engine.sources.model.workloads import default_model, workload


def _model(**kw):
    base = CalibratedModel(
        compute_efficiency_by_family={"B200": 0.7, "H100": 0.5, "MI300": 0.4},
        compute_efficiency_by_vendor={"NVIDIA": 0.55, "AMD": 0.4},
        compute_efficiency_shared=0.5,
        generation_by_family={"B200": "Blackwell", "H100": "Hopper", "MI300": "CDNA3"},
        workload="llama2_70b_lora")
    return replace(base, **kw)


def test_a_family_without_rows_takes_its_generations_efficiency():
    m = _model()
    assert m.compute_efficiency_for("B300", "Blackwell", vendor="NVIDIA") == (
        0.7, "borrowed:Blackwell")
    # a generation without fitted families: the vendor's software, then the shared one
    assert m.compute_efficiency_for("R100", "Rubin", vendor="NVIDIA") == (0.55, "borrowed:NVIDIA")
    assert m.compute_efficiency_for("X1", None, vendor="Nobody") == (0.5, "borrowed:shared")
    # a fitted family keeps its own
    assert m.compute_efficiency_for("B200", "Blackwell", vendor="NVIDIA") == (0.7, "fitted")


def test_several_fitted_families_of_a_generation_lend_their_median():
    m = _model(compute_efficiency_by_family={"A": 0.3, "B": 0.5, "C": 0.9},
               generation_by_family={"A": "G", "B": "G", "C": "G"})
    assert m.compute_efficiency_for("D", "G", vendor="NVIDIA") == (0.5, "borrowed:G")
    assert m.generation_siblings("G") == ["A", "B", "C"]
    assert m.power_reference("D", "G") == ("A", "B", "C")
    assert m.power_reference("A", "G") == "A"


@pytest.mark.parametrize("generation", [None, "", "nan", float("nan")])
def test_a_missing_generation_borrows_nothing(generation):
    m = _model()
    assert m.generation_siblings(generation) == []
    assert m.compute_efficiency_for("B300", generation, vendor="NVIDIA")[1] == "borrowed:NVIDIA"


def test_a_model_without_generations_borrows_from_its_vendor():
    m = _model(generation_by_family={})
    assert m.compute_efficiency_for("B300", "Blackwell", vendor="NVIDIA") == (
        0.55, "borrowed:NVIDIA")
    assert m.power_reference("B300", "Blackwell") == "B300"


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
    assert p["prediction_basis"].tolist() == ["borrowed:Blackwell", "fitted"]
    note = p["prediction_note"].iloc[0]
    assert "its generation's software (Blackwell: B200)" in note
    # a generation's rows lend their efficiency, as the vendor's did before
    old = predict(_rows(["NVIDIA B300-SXM-270GB"]), replace(model, generation_by_family={}),
                  workload=wl, use_table_epochs=False)
    assert old["prediction_basis"].iloc[0] == "borrowed:NVIDIA"
    assert old["predicted_time_to_train_min"].iloc[0] != pytest.approx(
        p["predicted_time_to_train_min"].iloc[0])


def test_a_sweep_borrows_as_a_prediction_does():
    # RetinaNet's fit has A100, A30 and A40 rows, none of the A10 (Ampere as they are)
    model = default_model("retinanet")
    assert model.generation_siblings("Ampere") == ["A100", "A30", "A40"]
    wl = workload("retinanet")
    t = simulate(200, seed=2, model=model, workload=wl, accelerators=["NVIDIA A10"],
                 counts=[8], nodes=[1], local_batch=[8])
    assert set(t["prediction_basis"].astype(str)) == {"borrowed:Ampere"}
    assert t["prediction_note"].astype(str).str.contains(
        r"its generation's software \(Ampere: A100, A30, A40\)").all()
    p = predict(_rows(["NVIDIA A10"]).assign(global_batch_size=64), model, workload=wl,
                use_table_epochs=False)
    assert p["prediction_basis"].iloc[0] == "borrowed:Ampere"
