"""Predictions for current hardware and workloads: every catalog family predicted, user
hardware (--catalog, per-row facts), refusals and notes, intervals, first-principles
workloads, and ranking under the model's uncertainty."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from gpurank.engine.sources.facts.catalog import accelerator_catalog
from gpurank.engine.cli import main
from gpurank.engine.sources.model.calibrate import predict
from gpurank.engine.sources.model.intervals import interval_table
from gpurank.engine.sources.model.outcomes import predicted_outcomes
from gpurank.engine.sources.sweep.simulate import simulate
from gpurank.engine.sources.model.workloads import default_model, workload

ROW = dict(n_accelerators=8, n_nodes=1, accelerators_per_node=8, global_batch_size=64)


def _table(**cols) -> pd.DataFrame:
    base = {**ROW, **cols}
    n = max(len(v) for v in base.values() if isinstance(v, list)) if any(
        isinstance(v, list) for v in base.values()) else 1
    return pd.DataFrame({k: v if isinstance(v, list) else [v] * n for k, v in base.items()})


# --- every family of the catalog ---------------------------------------------------------
def test_every_modelled_family_gets_a_prediction():
    cat = accelerator_catalog()
    modelled = cat[(pd.to_numeric(cat["mem_bw_tbps"], errors="coerce") > 0)]
    t = _table(accelerator=list(modelled["accelerator_id"]), global_batch_size=2048,
               benchmark="ssd")
    t["accelerators_per_node"] = np.minimum(
        8, pd.to_numeric(modelled["max_accels_per_node"], errors="coerce").fillna(8).to_numpy())
    t["n_nodes"] = 8 / t["accelerators_per_node"]
    p = predict(t)
    missing = p.loc[p["predicted_time_to_train_min"].isna(), ["accelerator", "prediction_note"]]
    assert missing.empty, missing.to_string()
    assert set(modelled["family"]) <= set(
        modelled.set_index("accelerator_id").loc[p["accelerator"], "family"])


@pytest.mark.parametrize("name", [
    "NVIDIA Blackwell GPU (B200-SXM-180GB)", "NVIDIA Blackwell Ultra GPU (GB300)",
    "NVIDIA Blackwell Ultra GPU (B300-SXM-270GB)", "AMD Instinct MI355X", "AMD Instinct MI350X",
    "TPU-trillium", "NVIDIA H200-NVL-141GB", "H100 NVL Tensor Core GPU (PCIe)",
    "NVIDIA H100 80GB HBM3", "NVIDIA RTX Pro 6000 SE PCIe 96GB"])
def test_current_names_are_predicted(name):
    p = predict(_table(accelerator=name, benchmark="llama2_70b_lora", global_batch_size=8))
    assert p["predicted_time_to_train_min"].iloc[0] > 0, p["prediction_note"].iloc[0]
    assert "not in catalog" not in p["prediction_note"].iloc[0]


# --- the cases a model must not answer silently -----------------------------------------
def test_a_narrow_format_taken_from_the_workload_is_named():
    t = _table(accelerator="AMD Instinct MI355X", benchmark="llama31_8b", global_batch_size=32,
               submitter="AMD")
    # no column, and no statement of the round covers AMD: the workload's FP8, said so
    note = predict(t)["prediction_note"].iloc[0]
    assert "precision assumed: fp8; the format llama31_8b trains in (workloads.csv)" in note
    # a row that names its format, and a workload of the benchmark's own bf16, assume nothing
    assert "precision assumed" not in predict(t.assign(precision="bf16"))["prediction_note"][0]
    bf16 = predict(_table(accelerator="AMD Instinct MI355X", benchmark="ssd"))
    assert "precision assumed" not in bf16["prediction_note"].iloc[0]


def test_a_stated_nvlink_bridge_is_the_link_of_the_node_it_spans():
    t = _table(accelerator="NVIDIA H200 NVL 141GB", benchmark="dlrm_dcnv2",
               global_batch_size=32768, n_accelerators=4, accelerators_per_node=4,
               interconnect=["4-way NVIDIA NVLINK bridge", "PCIe Gen5"])
    p = predict(t)
    # four H200 NVL on a 4-way bridge exchange over NVLink, not PCIe
    assert p["predicted_time_to_train_min"][0] < p["predicted_time_to_train_min"][1]
    assert "crosses PCIe" not in p["prediction_note"][0]
    # eight of them are two bridged groups: the all-reduce crosses PCIe, and the note says so
    eight = predict(t.assign(n_accelerators=8, accelerators_per_node=8))
    assert eight["predicted_time_to_train_min"][0] == pytest.approx(
        eight["predicted_time_to_train_min"][1])
    assert ("the NVLink bridge joins 4 of the node's 8 accelerators, so the all-reduce "
            "crosses PCIe") in eight["prediction_note"][0]


def test_a_default_is_never_used_silently():
    t = _table(accelerator="NVIDIA H100-SXM5-80GB", benchmark="llama2_70b_lora")
    t = t.drop(columns=["global_batch_size"])
    note = predict(t)["prediction_note"].iloc[0]
    assert "global_batch_size chosen:" in note and "the fastest to train of" in note


def test_huge_batch_is_flagged_as_extrapolation():
    p = predict(_table(accelerator="NVIDIA H100-SXM5-80GB", benchmark="bert",
                       global_batch_size=10**12))
    note = p["prediction_note"].iloc[0]
    assert p["predicted_time_to_train_min"].iloc[0] > 0
    assert "global batch 1,000,000,000,000 beyond the fitted range" in note
    assert "samples to converge extrapolated beyond the largest reference" in note
    assert p["prediction_extrapolation"].iloc[0] > 20
    # an interval of decades says how little such a number means
    assert p["predicted_time_to_train_min_hi"].iloc[0] / p[
        "predicted_time_to_train_min_lo"].iloc[0] > 100


def test_under_one_sample_per_accelerator_is_refused():
    p = predict(_table(accelerator="NVIDIA B200", benchmark="ssd", n_accelerators=100_000,
                       n_nodes=12_500, accelerators_per_node=8, global_batch_size=448))
    assert np.isnan(p["predicted_time_to_train_min"].iloc[0])
    assert p["prediction_basis"].iloc[0] == ""
    assert p["prediction_note"].iloc[0] == (
        "global batch 448 is under one sample per data-parallel replica (100,000 replicas of "
        "1 accelerator(s))")


def test_a_sample_of_a_splittable_workload_spans_accelerators_with_a_note():
    # MLPerf v5.1 ran Llama 3.1 8B on 64 GPUs at a global batch of 32: each sequence on 2
    p = predict(_table(accelerator="NVIDIA H200-SXM5-141GB", benchmark="llama31_8b",
                       n_accelerators=[64, 8192, 64], n_nodes=[8, 1024, 8],
                       global_batch_size=[32, 32, 64]))
    t, note = p["predicted_time_to_train_min"], p["prediction_note"]
    assert t.iloc[0] > 0 and t.iloc[2] > 0
    assert "model parallel assumed: each sample split over 2 accelerators" in note.iloc[0]
    assert "model parallel assumed" not in note.iloc[2]
    # 256 per sample is beyond what a sequence splits into (tensor 8 x context 8)
    assert np.isnan(t.iloc[1])
    assert "a sample of llama31_8b splits over at most 64" in note.iloc[1]
    # splitting a sample costs: the 32 samples take longer per sample than 64 do
    thr = p["predicted_throughput"]
    assert thr.iloc[0] < thr.iloc[2]


def test_inconsistent_topology_is_refused():
    p = predict(_table(accelerator="NVIDIA B200", benchmark="ssd", n_accelerators=16,
                       n_nodes=3, accelerators_per_node=8))
    assert np.isnan(p["predicted_time_to_train_min"].iloc[0])
    assert p["prediction_note"].iloc[0] == (
        "inconsistent topology: n_nodes 3 x accelerators_per_node 8 = 24, not n_accelerators 16")


def test_scale_beyond_the_fitted_systems_and_borrowed_family_are_noted():
    p = predict(_table(accelerator="NVIDIA GB300", benchmark="bert", n_accelerators=100_000,
                       n_nodes=25_000, accelerators_per_node=4, global_batch_size=100_000))
    note = p["prediction_note"].iloc[0]
    assert "scale 100,000 accelerators beyond the largest fitted system" in note
    assert "family B300 has no calibration rows for bert_large" in note
    # B300 is Blackwell as B200 is, in its power class, whose BERT rows lend their efficiency
    assert p["prediction_basis"].iloc[0] == "borrowed:B200"
    assert "the efficiency of B200, its generation's (Blackwell) in its power class" in note


def test_a_prediction_without_a_note_assumed_nothing():
    t = _table(accelerator="NVIDIA H100-SXM5-80GB", benchmark="ssd", global_batch_size=512,
               interconnect="nvlink4", cpu_cores_per_accelerator=14.0)
    p = predict(t)
    assert p["prediction_note"].iloc[0] == "" and p["prediction_basis"].iloc[0] == "fitted"


# --- user hardware -------------------------------------------------------------------------
USER_CSV = ("accelerator_id,vendor,model,bf16_dense_tflops,fp8_dense_tflops,mem_gb,mem_bw_tbps,"
            "tdp_w,scaleup_domain,scaleup_bw_GBps,intra_link_id,price_typ_usd_gpu_hr\n"
            "acme_x1,Acme,X1,1200,2400,192,6.0,900,8,600,nvlink4,4.0\n")


def test_catalog_file_adds_hardware_to_predict_simulate_and_analyze(tmp_path, capsys):
    cat = tmp_path / "my-hw.csv"
    cat.write_text(USER_CSV, encoding="utf-8")
    configs = tmp_path / "configs.csv"
    _table(accelerator=["acme_x1", "NVIDIA H100-SXM5-80GB"], benchmark="ssd",
           price_per_accelerator_hour=[4.0, 2.5]).to_csv(configs, index=False)
    # without the catalog the new accelerator is unknown
    assert main(["predict", str(configs), "-o", str(tmp_path / "a.csv")]) == 0
    a = pd.read_csv(tmp_path / "a.csv")
    assert a["prediction_note"].iloc[0] == "accelerator not in catalog"
    assert main(["predict", str(configs), "--catalog", str(cat), "-o",
                 str(tmp_path / "b.csv")]) == 0
    b = pd.read_csv(tmp_path / "b.csv")
    assert (b["predicted_time_to_train_min"] > 0).all()
    assert b["prediction_basis"].iloc[0] == "borrowed:shared"
    # simulate samples it (it has a typical price)
    assert main(["simulate", "--n", "3000", "--catalog", str(cat), "--accelerators", "acme_x1",
                 "-o", str(tmp_path / "s.parquet")]) == 0
    s = pd.read_parquet(tmp_path / "s.parquet")
    assert set(s["accelerator_id"].astype(str)) == {"acme_x1"}
    assert (s["time_to_train_min_lo"] <= s["time_to_train_min"]).all()
    # analyze predicts the configurations' outcomes with it
    capsys.readouterr()
    assert main(["analyze", str(configs), "--catalog", str(cat), "--out", str(tmp_path / "o"),
                 "--criteria", "time_to_train_min:min,cost_usd:min", "--clusters", "2",
                 "--no-report", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert any("outcomes predicted from the configuration columns for 2 of 2 rows" in n
               for n in summary["notes"])
    r = pd.read_parquet(tmp_path / "o" / "ranking.parquet")
    assert (r["time_to_train_min_lo"] < r["time_to_train_min"]).all()


def test_catalog_on_a_measured_table_needs_predict(tmp_path, capsys):
    cat = tmp_path / "my-hw.csv"
    cat.write_text(USER_CSV, encoding="utf-8")
    t = tmp_path / "t.csv"
    _table(accelerator="acme_x1", time_to_train_min=10.0).to_csv(t, index=False)
    assert main(["analyze", str(t), "--catalog", str(cat), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["gpurank: error: --catalog applies to predicted outcomes, and the table has "
                   "measured time_to_train_min; add --predict to analyze predictions instead"]


def test_per_row_facts_override_the_catalog():
    base = _table(accelerator="NVIDIA H100-SXM5-80GB", benchmark="ssd", global_batch_size=512)
    faster = base.assign(bf16_dense_tflops=2 * 989.0, mem_bw_tbps=2 * 3.35)
    t0 = predict(base)["predicted_time_to_train_min"].iloc[0]
    t1 = predict(faster)["predicted_time_to_train_min"].iloc[0]
    assert t1 < 0.75 * t0
    # the reader's peak_tflops column is the bf16 peak under another name
    assert predict(base.assign(peak_tflops=2 * 989.0, mem_bw_tbps=2 * 3.35))[
        "predicted_time_to_train_min"].iloc[0] == t1


def test_precision_picks_the_narrow_peak():
    t = _table(accelerator="NVIDIA H100-SXM5-80GB", benchmark="llama2_70b_lora",
               global_batch_size=8)
    model = default_model("llama2_70b_lora")
    fp8 = predict(t, model)["predicted_time_to_train_min"].iloc[0]
    bf16 = predict(t.assign(precision="bf16"), model)["predicted_time_to_train_min"].iloc[0]
    assert model.narrow_fraction == 0 or bf16 > fp8
    note = predict(t.assign(precision="fp7"), model)["prediction_note"].iloc[0]
    # an unreadable format is the one the row would take without it: NVIDIA's stated fp4,
    # at the fp8 peak an H100 has
    assert "precision not understood: fp8 used" in note
    assert "precision assumed: fp8 (no fp4 peak on this accelerator)" in note


def test_nvl72_domain_speeds_up_the_allreduce():
    """GB200 trays of 4 GPUs in one 72-GPU NVLink domain all-reduce over NVLink; the same
    GPUs as HGX boards of 8 cross the network. The bytes move 9 times as fast (900 GB/s per
    GPU against 100 GB/s per node of 4); the per-step latencies of a 72-way ring are what
    is left."""
    from dataclasses import replace

    from gpurank.engine.sources.model.perfmodel import DEFAULT_MODEL, evaluate, resnet50

    cfg = dict(peak_tflops=2500.0, compute_efficiency=0.3, mem_bw_tbps=8.0,
               n_accelerators=64.0, accelerators_per_node=4.0, n_nodes=16.0, local_batch=64.0,
               intra_GBps=900.0, inter_GBps=100.0, cpu_cores_per_accelerator=np.nan,
               cpu_decode_factor=1.0, dali=True)

    def t_comm(model, **extra):
        out = evaluate({k: np.asarray([v]) for k, v in {**cfg, **extra}.items()}, model,
                       resnet50())
        return out["t_comm"][0]

    domain = dict(scaleup_domain=72.0, scaleup_GBps=900.0)
    bytes_only = replace(DEFAULT_MODEL, latency_intra_s=0.0, latency_inter_s=0.0)
    assert t_comm(bytes_only, **domain) < 0.2 * t_comm(bytes_only)
    assert t_comm(DEFAULT_MODEL, **domain) < 0.8 * t_comm(DEFAULT_MODEL)


def test_model_inputs_are_declared_fields_and_evaluate_checks_a_mapping():
    """model_inputs returns typed arrays; evaluate gives the same numbers for the typed inputs
    and for a mapping of their names, and refuses a name the model does not read."""
    from dataclasses import fields

    from gpurank.engine.errors import UsageError
    from gpurank.engine.sources.model.inputs import model_inputs
    from gpurank.engine.sources.model.model_arrays import ConfigArrays, RowFacts
    from gpurank.engine.sources.model.perfmodel import DEFAULT_MODEL, evaluate, resnet50

    t = pd.DataFrame({"accelerator": ["H100-SXM5-80GB", "A100-SXM4-80GB", "nonesuch"],
                      "n_accelerators": [8, 64, 8], "n_nodes": [1, 8, 1],
                      "accelerators_per_node": [8, 8, 8], "global_batch_size": [2048, 4096, 8]})
    inputs = model_inputs(t, DEFAULT_MODEL, resnet50())
    assert isinstance(inputs.cfg, ConfigArrays) and isinstance(inputs.facts, RowFacts)
    assert inputs.facts.valid.tolist() == [True, True, False]
    as_map = {f.name: getattr(inputs.cfg, f.name) for f in fields(ConfigArrays)
              if getattr(inputs.cfg, f.name) is not None}
    typed, mapped = (evaluate(c, DEFAULT_MODEL, resnet50()) for c in (inputs.cfg, as_map))
    for k in typed:
        np.testing.assert_array_equal(typed[k], mapped[k])
    one = inputs.cfg.take([1])
    np.testing.assert_array_equal(evaluate(one, DEFAULT_MODEL, resnet50())["throughput"],
                                  typed["throughput"][[1]])
    with pytest.raises(UsageError, match="model input 'peak_tflop' is not one the model reads"):
        evaluate({**as_map, "peak_tflop": 1.0}, DEFAULT_MODEL, resnet50())
    as_map.pop("dali")
    with pytest.raises(UsageError, match="model input 'dali' is missing"):
        evaluate(as_map, DEFAULT_MODEL, resnet50())


# --- intervals on every predicted and simulated row ---------------------------------------
def test_intervals_on_every_predicted_and_simulated_row():
    sim = simulate(5000, seed=11)
    for lo, t, hi in ((sim["time_to_train_min_lo"], sim["time_to_train_min"],
                       sim["time_to_train_min_hi"]),):
        assert (lo < t).all() and (t < hi).all()
    p = predict(sim)
    got = p["predicted_time_to_train_min"].notna()
    assert got.all()
    assert (p["predicted_time_to_train_min_lo"] < p["predicted_time_to_train_min"]).all()
    assert (p["predicted_time_to_train_min"] < p["predicted_time_to_train_min_hi"]).all()
    refused = predict(_table(accelerator="NVIDIA B200", n_accelerators=0, benchmark="ssd"))
    assert refused[["predicted_time_to_train_min_lo", "predicted_time_to_train_min_hi"]
                   ].isna().all(axis=None)


def test_interval_widths_follow_the_basis():
    table = interval_table()
    widths = {k: v[0] + v[1] for k, v in table.by_basis.items()}
    assert widths["fitted"] < widths["borrowed"] < widths["first-principles"]
    # H100 is fitted on Llama 2 70B LoRA, Gaudi3 borrows Intel's efficiency
    p = predict(_table(accelerator=["NVIDIA H100-SXM5-80GB", "Intel Gaudi3"],
                       benchmark="llama2_70b_lora", global_batch_size=8))
    assert list(p["prediction_basis"]) == ["fitted", "borrowed:Intel"]
    ratio = p["predicted_time_to_train_min_hi"] / p["predicted_time_to_train_min_lo"]
    assert ratio.iloc[0] < ratio.iloc[1]


# --- workloads from public facts ----------------------------------------------------------
@pytest.mark.parametrize("bench,n,gb", [("llama31_8b", 64, 64), ("llama31_405b", 1024, 1152),
                                        ("flux1", 64, 1024)])
def test_public_fact_workloads_are_predicted_from_first_principles(bench, n, gb):
    from gpurank.engine.sources.model.workloads import nearest_calibrated

    wl = workload(bench)
    t = _table(accelerator="NVIDIA B200", benchmark=bench, n_accelerators=n, n_nodes=n // 8,
               global_batch_size=gb)
    # the shipped model is the workload's own fit (its rows are in the shared rounds) ...
    assert default_model(bench).workload == wl.name
    assert predict(t)["prediction_basis"].iloc[0] in ("fitted", "borrowed:NVIDIA")
    # ... and without it the nearest calibrated workload's model predicts it, and says so
    nearest = nearest_calibrated(wl, exclude=(wl.name,))
    p = predict(t, default_model(nearest), workload=wl)
    assert p["predicted_time_to_train_min"].iloc[0] > 0, p["prediction_note"].iloc[0]
    assert p["prediction_basis"].iloc[0] == f"first-principles:{nearest}"
    assert f"workload {wl.name} has no calibration rows" in p["prediction_note"].iloc[0]


def test_a_borrowed_workload_saturates_at_the_same_work_per_pass():
    from gpurank.engine.sources.model.workloads import model_for_workload

    src = default_model("gpt3")
    for name in ("llama31_8b", "flux1", "llama31_405b"):
        wl, own = workload(name), workload(src.workload)
        m = model_for_workload(src, wl)
        work = m.batch_half * wl.flops_per_sample / wl.model_parallel
        assert work == pytest.approx(src.batch_half * own.flops_per_sample / own.model_parallel)
        assert m.compute_efficiency_shared == src.compute_efficiency_shared
    assert model_for_workload(src, workload("gpt3")) is src


def test_a_row_of_a_later_round_says_the_model_does_not_know_its_software():
    model = default_model("ssd")
    last = model.fit["domain"]["rounds"][-1]
    names = ["v3.0", "v3.1", "v4.0", "v4.1", "v5.0", "v5.1", "v6.0", "v6.1", "v7.0"]
    later = names[names.index(last) + 2]  # a round name only: no data of it is read
    t = _table(accelerator="NVIDIA H100-SXM5-80GB", benchmark="ssd", global_batch_size=512,
               interconnect="nvlink4", cpu_cores_per_accelerator=14.0,
               round=[later, last, "not a round"])
    p = predict(t)
    assert p["prediction_note"].iloc[0].startswith(
        f"round {later} is 2 round(s) after the latest fitted round ({last}): software "
        "extrapolated by its vendor's trend (compute efficiency x")
    assert p["prediction_note"].iloc[1] == "" and p["prediction_note"].iloc[2] == ""
    lo = p["predicted_time_to_train_min_lo"] / p["predicted_time_to_train_min"]
    assert lo.iloc[0] <= lo.iloc[1]


def test_round_ordinals_count_the_rounds_between():
    from gpurank.engine.sources.facts.mlperf_rules import round_ordinal

    seq = ["v0.5", "v0.6", "v0.7", "v1.0", "v1.1", "v2.0", "v2.1", "v3.0", "v3.1", "v4.0",
           "v4.1", "v5.0", "v5.1", "v6.0"]
    assert [round_ordinal(r) for r in seq] == list(range(len(seq)))
    assert round_ordinal("training v4.1") == 10 and round_ordinal("none") is None


def test_intervals_widen_with_the_rounds_ahead_from_forward_rows_at_each_distance():
    from gpurank.engine.sources.model.intervals import (
        IntervalTable,
        fit_interval_table,
        interval_factors,
    )

    rng = np.random.default_rng(7)
    base = pd.DataFrame({"kind": "fitted", "log_error": rng.normal(0, 0.1, 400), "reach": 0.0,
                         "round": rng.choice(["a", "b", "c"], 400), "rounds_after": 0.0})
    # rows of later rounds predicted too slow by 0.2 per round: newer software
    after = rng.choice([1.0, 2.0], 200)
    fwd = pd.DataFrame({"kind": "fitted", "log_error": rng.normal(0, 0.1, 200) + 0.2 * after,
                        "reach": 0.0, "round": rng.choice(["d", "e"], 200),
                        "rounds_after": after})
    table = fit_interval_table(pd.concat([base, fwd], ignore_index=True))
    one, two = table.by_distance["fitted"][1], table.by_distance["fitted"][2]
    # each distance holds its own rows: the low end follows the bias, 0.2 a round
    assert 0.25 < one[0] < two[0] and two[0] - one[0] == pytest.approx(0.2, abs=0.08)
    assert one[2] + two[2] == 200
    assert table.per_round == pytest.approx(two[0] - one[0])
    assert fit_interval_table(base).by_distance == {} and fit_interval_table(base).per_round == 0
    lo0, hi0 = interval_factors(["fitted"], [0.0], table)
    lo2, hi2 = interval_factors(["fitted"], [0.0], table, rounds_after=[2.0])
    lo3, hi3 = interval_factors(["fitted"], [0.0], table, rounds_after=[3.0])
    assert lo2[0] == pytest.approx(np.exp(-two[0])) and hi2[0] == pytest.approx(np.exp(two[1]))
    # beyond the farthest measured distance the low end keeps widening by per_round
    assert lo3[0] == pytest.approx(lo2[0] * np.exp(-table.per_round)) and hi3[0] == hi2[0]
    assert lo0[0] > lo2[0]
    # the half-widths at distance 0 come from the rows of the fitted rounds only
    assert table.by_basis["fitted"][2] == 400
    # the table's file round-trips, and an older file without distances still loads
    assert IntervalTable.from_dict(table.to_dict()) == table
    old = {k: v for k, v in table.to_dict().items() if k != "by_distance"}
    assert IntervalTable.from_dict(old).by_distance == {}


def test_an_interval_no_level_can_hold_is_as_narrow_as_the_most_it_holds():
    from gpurank.engine.sources.model.intervals import _NOMINAL, _held_out_coverage, _widths

    rng = np.random.default_rng(3)
    # three rounds of small errors, and one whose rows all lie beyond every other round's
    # quantiles: no level holds 80% of each round's rows when taken from the other rounds
    err = np.concatenate([rng.normal(0, 0.1, 90), np.full(30, 1.5)])
    rounds = np.array(["a"] * 30 + ["b"] * 30 + ["c"] * 30 + ["d"] * 30)
    cov = [_held_out_coverage(err, rounds, q) for q in _NOMINAL]
    assert max(cov) < 0.8
    w_lo, w_hi, n = _widths(err, rounds, 0.8)
    first = _NOMINAL[cov.index(max(cov))]
    q = (1 - first) / 2
    # the first level that holds the most, not the widest level tried
    assert (w_lo, w_hi) == pytest.approx((np.quantile(err, 1 - q), -np.quantile(err, q)),
                                         abs=1e-6)
    assert w_hi < -np.quantile(err, (1 - _NOMINAL[-1]) / 2) and n == 120


# --- analyzing predictions, and ranking under their uncertainty --------------------------
def test_predicted_outcomes_and_robust_ranking_draws_them(tmp_path, capsys):
    t = _table(accelerator=["NVIDIA B200", "NVIDIA H100-SXM5-80GB", "AMD Instinct MI300X",
                            "NVIDIA A100-SXM4-80GB", "NVIDIA H200-SXM5-141GB"],
               benchmark="ssd", global_batch_size=512,
               price_per_accelerator_hour=[5.0, 2.5, 2.0, 1.2, 3.0])
    out, notes = predicted_outcomes(t)
    assert notes[0].startswith("outcomes predicted from the configuration columns for 5 of 5")
    path = tmp_path / "c.csv"
    t.to_csv(path, index=False)
    capsys.readouterr()
    assert main(["analyze", str(path), "--robust", "--samples", "500", "--top", "2",
                 "--criteria", "time_to_train_min:min,cost_usd:min", "--clusters", "2",
                 "--out", str(tmp_path / "o"), "--no-report", "--json"]) == 0
    rb = json.loads(capsys.readouterr().out)["robust"]
    assert rb["model_uncertainty"]["drawn"] is True
    assert rb["model_uncertainty"]["criteria"] == {"time_to_train_min": 1, "cost_usd": 1}


def test_rank_agreement_and_forward_summaries_per_group():
    from gpurank.engine.sources.model.evidence import forward_summary, rank_agreement

    held = pd.DataFrame({
        "benchmark": ["a"] * 4 + ["b"] * 3,
        "time_to_train_min": [10.0, 20.0, 30.0, 40.0, 5.0, 6.0, 7.0],
        "predicted_time_to_train_min": [11.0, 19.0, 33.0, 50.0, 7.0, 6.0, 5.0],
    })
    held["error_pct"] = 100 * (held["predicted_time_to_train_min"] / held["time_to_train_min"] - 1)
    # a's order is right though its times are off; b's is reversed
    assert rank_agreement(held[held["benchmark"] == "a"]) == pytest.approx(1.0)
    assert rank_agreement(held[held["benchmark"] == "b"]) == pytest.approx(-1.0)
    assert np.isnan(rank_agreement(held.iloc[:2]))  # fewer than 3 rows
    s = forward_summary(held, "benchmark", np.array([1, 1, 0, 1, np.nan, 0, 1.0])).set_index(
        "benchmark")
    assert s.loc["a", "n"] == 4 and s.loc["a", "inside_pct"] == pytest.approx(75.0)
    assert s.loc["b", "inside_pct"] == pytest.approx(50.0)  # the row without a verdict left out
    assert s.loc["a", "signed"] == pytest.approx(np.median(held["error_pct"].iloc[:4]))
    assert s.loc["b", "spearman"] == pytest.approx(-1.0)


def test_a_renamed_benchmark_is_one_workload():
    from gpurank.engine.sources.model.validation import rows_of, workload_benchmarks

    t = pd.DataFrame({"round": ["v4.1", "v4.1", "v5.0", "v5.1", "v3.0"],
                      "benchmark": ["ssd", "gnn", "retinanet", "rgat", "no_workload"]})
    # one name per workload, the one its latest round uses; a benchmark without one left out
    assert workload_benchmarks(t) == ["retinanet", "rgat"]
    assert list(rows_of(t, "ssd")["round"]) == ["v4.1", "v5.0"]
    assert list(rows_of(t, "rgat")["benchmark"]) == ["gnn", "rgat"]
    assert list(rows_of(t, "no_workload")["benchmark"]) == ["no_workload"]
