"""Calibration, prediction and the model file (tests/test_calibrate.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gpurank.engine.errors import DataError, UsageError
from gpurank.engine.sources.calibrate import (
    CalibratedModel,
    calibrate,
    fit_errors,
    normalize_accelerator,
    predict,
    run_calibrate_cli,
    run_predict_cli,
)
from gpurank.engine.sources.simulate import simulate

SUMMARY = Path(__file__).resolve().parents[2] / "shared" / "data" / "mlperf_resnet" / "summary.csv"
TRAIN = ["v0.5", "v0.6", "v0.7", "v1.0", "v1.1", "v2.0", "v2.1"]
TEST = ["v3.0", "v3.1"]


def canonical_from_summary(path=SUMMARY) -> pd.DataFrame:
    """Canonical-column table from the MLPerf summary.csv (development stand-in for the
    MLPerf reader): closed division, scored rows, repeated results dropped."""
    s = pd.read_csv(path)
    s = s[(s["division"] == "closed") & s["time_to_train_minutes"].notna()
          & (pd.to_numeric(s["total_accelerators"], errors="coerce") > 0)]
    q = s["quirks"].fillna("")
    s = s[~q.str.contains("byte-identical|same runs", regex=True)]
    cores = (pd.to_numeric(s["host_processor_core_count"], errors="coerce")
             * pd.to_numeric(s["host_processors_per_node"], errors="coerce")
             / pd.to_numeric(s["accelerators_per_node"], errors="coerce"))
    gb = s["global_batch_size"].astype(str).str.split(";").str[0]
    return pd.DataFrame({
        "accelerator": s["accelerator_model_name"].astype(str).str.strip(),
        "n_accelerators": pd.to_numeric(s["total_accelerators"], errors="coerce").astype(int),
        "n_nodes": pd.to_numeric(s["number_of_nodes"], errors="coerce"),
        "accelerators_per_node": pd.to_numeric(s["accelerators_per_node"], errors="coerce"),
        "host_cpu": s["host_processor_model_name"],
        "cpu_cores_per_accelerator": cores.where(cores > 0),
        "interconnect": s["accelerator_interconnect"],
        "network": s["host_networking"],
        "framework": s["framework"],
        "global_batch_size": pd.to_numeric(gb, errors="coerce"),
        "epochs": pd.to_numeric(s["epochs_to_converge"], errors="coerce"),
        "time_to_train_min": s["time_to_train_minutes"].astype(float),
        "throughput": pd.to_numeric(s["throughput_e2e_samples_per_s"], errors="coerce"),
        "round": s["round"],
    }).reset_index(drop=True)


needs_mlperf = pytest.mark.skipif(not SUMMARY.is_file(),
                                  reason=f"MLPerf summary not found at {SUMMARY} (../shared absent)")


@pytest.fixture(scope="module")
def mlperf():
    return canonical_from_summary()


@pytest.fixture(scope="module")
def heldout_model(mlperf):
    return calibrate(mlperf, train_rounds=TRAIN, test_rounds=TEST)


@pytest.mark.parametrize("name,expected", [
    ("NVIDIA A100-SXM4-80GB (400W)", "nvidia_a100_sxm4_80gb"),
    ("NVIDIA A100-SXM-40GB", "nvidia_a100_sxm4_40gb"),
    ("NVIDIA A100-PCIe-80GB", "nvidia_a100_pcie_80gb"),
    ("NVIDIA H100-SXM5-80GB", "nvidia_h100_sxm5"),
    ("NVIDIA H100-PCIe-80GB", "nvidia_h100_pcie"),
    ("Tesla V100-SXM3-32GB-H", "nvidia_v100_sxm2_32gb"),
    ("Tesla V100-SXM2-16GB", "nvidia_v100_sxm2_16gb"),
    ("NVIDIA L40", "nvidia_l40"), ("NVIDIA L40S", "nvidia_l40s"), ("NVIDIA L4", "nvidia_l4"),
    ("Habana Gaudi2", "intel_gaudi2"), ("tpu-v3", "google_tpu_v3"), ("TPU-v4", "google_tpu_v4"),
    ("NVIDIA H100 SXM5 80GB", "nvidia_h100_sxm5"), ("nvidia_b200_hgx", "nvidia_b200_hgx"),
    ("Graphcore IPU GC200", None), ("", None), (float("nan"), None),
])
def test_normalize_accelerator(name, expected):
    assert normalize_accelerator(name) == expected


def test_json_round_trip(tmp_path):
    m = CalibratedModel(mfu_by_family={"A100": 0.25}, overlap=0.3, fit={"note": "x"})
    path = m.to_json(tmp_path / "sub" / "model.json")
    assert CalibratedModel.from_json(path) == m
    assert [p.name for p in path.parent.iterdir()] == ["model.json"]
    assert json.loads(path.read_text())["format"] == "gpurank.CalibratedModel"


def test_from_json_errors(tmp_path):
    with pytest.raises(DataError, match=r"^model file '.*nope.json' does not exist"):
        CalibratedModel.from_json(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(DataError, match=r"^model file '.*bad.json' is not valid JSON"):
        CalibratedModel.from_json(bad)
    bad.write_text(json.dumps({"format": "other"}))
    with pytest.raises(DataError, match=r"has format='other'; expected 'gpurank.CalibratedModel'$"):
        CalibratedModel.from_json(bad)
    bad.write_text(json.dumps({"format": "gpurank.CalibratedModel", "overlap": 3}))
    with pytest.raises(DataError, match=r"CalibratedModel.overlap=3 is not allowed; it must be a number in \[0, 1\]$"):
        CalibratedModel.from_json(bad)


def test_model_parameter_errors():
    with pytest.raises(UsageError, match=r"^CalibratedModel.comm_efficiency=-0.1 is not allowed"):
        CalibratedModel(comm_efficiency=-0.1)
    with pytest.raises(UsageError, match=r"^CalibratedModel.allreduce='tree' is not allowed; use 'hierarchical' or 'ring'$"):
        CalibratedModel(allreduce="tree")


def test_predict_keeps_measured_and_matches_simulator():
    sim = simulate(2000, seed=4)
    pred = predict(sim)
    for c in ("time_to_train_min", "throughput", "utilization", "cost_usd", "energy_kwh"):
        assert f"predicted_{c}" in pred.columns
        assert pred[c].equals(sim[c])                      # measured values untouched
    ape = (pred["predicted_throughput"] / sim["throughput"] - 1).abs()
    assert ape.median() < 0.05                             # only the seeded noise differs
    assert (pred["prediction_note"] == "").all()


def test_predict_unknown_accelerator_row_is_nan_with_note():
    t = simulate(5, seed=0).astype({"accelerator": str}).drop(columns=["accelerator_id"])
    t.loc[0, "accelerator"] = "Graphcore IPU GC200"
    pred = predict(t)
    assert np.isnan(pred.loc[0, "predicted_time_to_train_min"])
    assert pred.loc[0, "prediction_note"] == "accelerator not in catalog"
    assert pred.loc[1:, "predicted_time_to_train_min"].notna().all()


def test_predict_and_calibrate_missing_columns():
    with pytest.raises(DataError, match=r"^table is missing column 'n_nodes'; required columns are: "
                                        r"accelerator, n_accelerators, n_nodes, accelerators_per_node$"):
        predict(pd.DataFrame({"accelerator": ["H100"], "n_accelerators": [8]}))
    with pytest.raises(DataError, match=r"^calibration table is missing column 'time_to_train_min'"):
        calibrate(simulate(50, seed=0).drop(columns=["time_to_train_min"]))
    with pytest.raises(UsageError, match=r"^table: list is not allowed; pass a pandas DataFrame$"):
        predict([1, 2])


def test_calibrate_recovers_simulator_parameters():
    sim = simulate(3000, seed=9, accelerators=["A100", "H100"])
    m = calibrate(sim)
    assert m.fit["success"]
    assert abs(m.mfu_by_family["A100"] / 0.258736 - 1) < 0.15
    assert abs(m.mfu_by_family["H100"] / 0.173389 - 1) < 0.15
    assert [r for r in m.fit["train_errors"] if r["group"] == "ALL"][0]["median_ape"] < 10


@needs_mlperf
def test_heldout_error_target_nvidia(heldout_model):
    nv = heldout_model.fit["test_errors_nvidia"]
    assert nv["n"] >= 50
    assert nv["median_ape"] < 20, nv


@needs_mlperf
def test_heldout_errors_per_family_reported(heldout_model, mlperf):
    test = mlperf[mlperf["round"].isin(TEST)]
    errs = fit_errors(predict(test, heldout_model))
    assert {"A100", "H100", "ALL"} <= set(errs["group"])
    assert errs.set_index("group").loc["H100", "median_ape"] < 20


@needs_mlperf
def test_cli_helpers_round_trip(tmp_path, mlperf):
    table = tmp_path / "mlperf.parquet"
    mlperf.to_parquet(table)
    model = run_calibrate_cli(table, tmp_path / "model.json")
    assert CalibratedModel.from_json(tmp_path / "model.json") == model
    out = run_predict_cli(table, tmp_path / "model.json", tmp_path / "pred.parquet")
    back = pd.read_parquet(tmp_path / "pred.parquet")
    assert len(back) == len(out) == len(mlperf) and "predicted_time_to_train_min" in back
