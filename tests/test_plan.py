"""gpurank plan: model cards, price catalogs (a real SkyPilot excerpt and hostile ones), and
the ranked offers."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gpurank.engine.cli import main
from gpurank.engine.commands.plan import plan_offers
from gpurank.engine.errors import DataError
from gpurank.engine.sources.facts.offers import read_offers
from gpurank.engine.sources.model.card import (
    card_workload,
    predict_workload,
    read_card,
    workload_arg,
)

ROOT = Path(__file__).resolve().parents[1]
SKY = ROOT / "tests" / "data" / "skypilot"
LAMBDA = SKY / "lambda" / "vms.csv"
RUNPOD = SKY / "runpod" / "vms.csv"
EXAMPLES = ROOT / "docs" / "examples"
CARDS = ["dense_13b_pretrain.toml", "lora_70b_finetune.toml", "moe_47b_pretrain.toml"]
HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice\n"


def _plan(tmp_path, *args, out="plan"):
    return main(["plan", "--backend", "cpu", "--no-report", "--out", str(tmp_path / out),
                 *map(str, args)])


def _ranking(tmp_path, out="plan"):
    return pd.read_parquet(tmp_path / out / "ranking.parquet")


def _one_error_line(capsys):
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("gpurank: error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# -- the command as the README writes it ------------------------------------------------------

def test_plan_shipped_workload_on_the_lambda_catalog(tmp_path, capsys):
    assert main(["plan", "--workload", "llama31_8b", "--offers", str(LAMBDA), "--backend",
                 "cpu", "--out", str(tmp_path / "plan")]) == 0
    cap = capsys.readouterr()
    assert "gpu_" in cap.out and "on demand" in cap.out
    # the unresolved names are counted and listed, never dropped silently
    # RTX6000 names two products (the Turing Quadro RTX 6000 and the RTX 6000 Ada)
    assert "1 accelerator name(s) in 17 rows not resolved" in cap.err
    assert "'RTX6000 (RTX 6000)' (17)" in cap.err
    t = _ranking(tmp_path)
    # Lambda's A6000 is the RTX A6000, its one product
    assert "nvidia_rtx_a6000" in set(t["accelerator_id"])
    for c in ("provider", "instance", "regions", "instances", "accelerator", "n_accelerators",
              "spot", "usd_per_hour", "time_to_train_min", "time_to_train_min_lo",
              "time_to_train_min_hi", "cost_usd", "energy_kwh", "prediction_basis",
              "prediction_note", "pareto_rank", "topsis_score", "rank"):
        assert c in t.columns, c
    assert (t["provider"] == "lambda").all()
    assert set(t["prediction_basis"].str.split(":").str[0]) <= {"fitted", "first-principles",
                                                                 "borrowed"}
    assert (t["time_to_train_min_lo"] <= t["time_to_train_min"]).all()
    assert (t["time_to_train_min"] <= t["time_to_train_min_hi"]).all()
    assert (tmp_path / "plan" / "report.html").exists()
    # every region at one price is one row: Lambda lists each instance in 17 regions
    assert (t["regions"].str.count(";") == 16).all()
    assert not t.duplicated(["instance", "instances", "spot", "usd_per_hour"]).any()


def test_cost_is_price_times_instances_times_hours_on_every_row(tmp_path):
    assert _plan(tmp_path, "--workload", "bert", "--offers", SKY) == 0
    t = _ranking(tmp_path)
    assert len(t) > 10
    expected = t["usd_per_hour"] * t["instances"] * t["time_to_train_min"] / 60.0
    np.testing.assert_allclose(t["cost_usd"], expected, rtol=1e-12)
    np.testing.assert_array_equal(t["n_accelerators"],
                                  t["instances"] * t["accelerators_per_instance"])


def test_spot_and_on_demand_both_appear_where_the_catalog_has_both(tmp_path):
    assert _plan(tmp_path, "--workload", "resnet", "--offers", RUNPOD) == 0
    t = _ranking(tmp_path)
    pcie = t[t["instance"] == "1x_A100-80GB_SECURE"]
    assert set(pcie["spot"]) == {True, False}
    assert set(pcie.loc[pcie["spot"], "usd_per_hour"]) == {1.19}
    assert set(pcie.loc[~pcie["spot"], "usd_per_hour"]) == {1.64}
    # the SXM boards have no spot price in the catalog: on demand only
    sxm = t[t["instance"].str.contains("SXM")]
    assert len(sxm) and not sxm["spot"].any()
    # one instance at one price and size is one row, whatever its regions and zones
    assert not t.duplicated(["instance", "instances", "spot"]).any()
    row = pcie[(pcie["instances"] == 1) & ~pcie["spot"]].iloc[0]
    assert row["regions"].split(";") == sorted({"CA", "CZ", "IS", "NL", "NO", "RO", "SE", "US"})


@pytest.mark.parametrize("card", CARDS)
def test_each_worked_card_plans(tmp_path, capsys, card):
    assert _plan(tmp_path, "--workload", EXAMPLES / card, "--offers", SKY) == 0
    t = _ranking(tmp_path)
    assert len(t) and t["rank"].min() == 1
    near = t["prediction_basis"].iloc[0]
    assert near.startswith("first-principles:")
    assert "nearest calibrated workload" in t["prediction_note"].iloc[0]
    expected = t["usd_per_hour"] * t["instances"] * t["time_to_train_min"] / 60.0
    np.testing.assert_allclose(t["cost_usd"], expected, rtol=1e-12)


def test_robust_plan_prints_p_top1(tmp_path, capsys):
    assert _plan(tmp_path, "--workload", "llama31_8b", "--offers", LAMBDA, "--robust",
                 "--samples", "500", "--top", "3") == 0
    out = capsys.readouterr().out
    assert "p_top1" in out
    assert len([ln for ln in out.splitlines() if ln.strip()[:1].isdigit()]) == 3


def test_budget_and_deadline_are_constraints(tmp_path):
    assert _plan(tmp_path, "--workload", "llama31_8b", "--offers", LAMBDA,
                 "--budget-usd", "150", "--deadline-h", "3") == 0
    t = _ranking(tmp_path)
    ranked = t[t["rank"].notna()]
    assert len(ranked) and (ranked["cost_usd"] <= 150).all()
    assert (ranked["time_to_train_min"] <= 180).all()


# -- the model card ----------------------------------------------------------------------------

def test_card_formulas_follow_the_shipped_workloads():
    dense = read_card(EXAMPLES / "dense_13b_pretrain.toml")
    wl = card_workload(dense)
    s, h, L = 4096.0, 5120.0, 40.0
    assert wl.flops_per_sample == pytest.approx(6 * 13e9 * s + 12 * L * h * s * s)
    assert wl.samples(np.array([64.0]))[0] == pytest.approx(300e9 / s)
    assert wl.samples(np.array([4096.0]))[0] == pytest.approx(300e9 / s)
    assert wl.activation_gb_per_sample == pytest.approx(34 * s * h * L / 1e9)
    lora = card_workload(read_card(EXAMPLES / "lora_70b_finetune.toml"))
    s, h, L = 8192.0, 8192.0, 80.0
    assert lora.flops_per_sample == pytest.approx(4 * 69e9 * s + 12 * L * h * s * s)
    assert lora.synced_params == pytest.approx(2 * 16 * h * 4 * L)
    assert lora.state_bytes_per_param == 2.0
    moe = card_workload(read_card(EXAMPLES / "moe_47b_pretrain.toml"))
    s, h, L = 4096.0, 4096.0, 32.0
    # FLOPs of the active parameters, memory of all of them
    assert moe.flops_per_sample == pytest.approx(6 * 12.9e9 * s + 12 * L * h * s * s)
    assert moe.params == pytest.approx(46.7e9)
    # the experts' own fields, for the all-to-all and the sharded experts
    assert (moe.experts, moe.experts_per_token, moe.moe_layers) == (8, 2, 32)
    assert moe.active_params == pytest.approx(12.9e9) and moe.expert_parallel == 8


def test_a_card_chooses_its_batch_within_its_limit(tmp_path):
    """Without a global batch, a transformer card trains at most at the compute-optimal
    batch of [DeepSeekLLM2024]; with one, at most at the card's; the batch chosen for each
    configuration stays within it (a flat token budget alone would choose any batch)."""
    dense = read_card(EXAMPLES / "dense_13b_pretrain.toml")
    wl = card_workload(dense)
    c = wl.flops_per_sample * dense.training_samples
    assert wl.max_global_batch == int(0.2920 * c ** 0.3271 // 4096)
    assert 500 < wl.max_global_batch < 4000  # a few million tokens, as 13B runs train
    text = (EXAMPLES / "dense_13b_pretrain.toml").read_text()
    own = tmp_path / "own.toml"
    own.write_text(text.replace("[training]", "[training]\nglobal_batch = 256"))
    assert card_workload(read_card(own)).max_global_batch == 256
    t = pd.DataFrame({"accelerator": ["H100-SXM5-80GB"] * 3, "n_accelerators": [8, 64, 512],
                      "n_nodes": [1, 8, 64], "accelerators_per_node": [8, 8, 8]})
    for w, top in ((wl, wl.max_global_batch), (workload_arg(str(own)), 256)):
        p = predict_workload(t, w)
        chosen = p["prediction_note"].str.extract(r"global_batch_size chosen: ([\d,]+)")[0]
        assert chosen.notna().all()
        assert (chosen.str.replace(",", "").astype(int) <= top).all()
        assert p["prediction_note"].str.contains("global batch at most").all()


def test_a_card_predicts_from_the_nearest_calibrated_workload():
    wl = workload_arg(str(EXAMPLES / "lora_70b_finetune.toml"))
    t = pd.DataFrame({"accelerator": ["H100-SXM5-80GB"] * 2, "n_accelerators": [8, 64],
                      "n_nodes": [1, 8], "accelerators_per_node": [8, 8]})
    p = predict_workload(t, wl)
    assert (p["prediction_basis"] == "first-principles:llama2_70b_lora").all()
    assert p["predicted_time_to_train_min"].iloc[1] < p["predicted_time_to_train_min"].iloc[0]


def test_simulate_takes_a_card(tmp_path, capsys):
    out = tmp_path / "s.parquet"
    assert main(["simulate", "--n", "50", "--workload",
                 str(EXAMPLES / "dense_13b_pretrain.toml"), "-o", str(out)]) == 0
    assert len(pd.read_parquet(out)) > 0


CARD_OK = """name = "x"
[model]
architecture = "dense-transformer"
parameters = 1e9
layers = 16
hidden_size = 2048
sequence_length = 2048
vocabulary = 32000
[training]
tokens = 1e9
"""


@pytest.mark.parametrize("text, word", [
    (CARD_OK.replace("layers = 16\n", ""), "layers is required"),
    (CARD_OK.replace("parameters = 1e9", "parameters = -5"), "parameters must be"),
    (CARD_OK.replace("parameters = 1e9", "parameters = 1e3"), "parameters must be"),
    (CARD_OK.replace("tokens = 1e9", "tokens = 1e9\nsamples = 5"), "tokens"),
    (CARD_OK.replace("tokens = 1e9", ""), "tokens"),
    (CARD_OK.replace("dense-transformer", "rnn"), "architecture must be"),
    (CARD_OK.replace("dense-transformer", "moe-transformer"), "active_parameters is required"),
    (CARD_OK.replace("dense-transformer", "moe-transformer").replace(
        "vocabulary", "active_parameters = 2e9\nexperts = 8\nexperts_per_token = 2\nvocabulary"),
     "active_parameters must be"),
    (CARD_OK.replace("layers = 16", "layers = 'sixteen'"), "layers"),
    (CARD_OK.replace("layers = 16", "layerz = 16"), "layerz is not a field"),
    (CARD_OK + "[training.extra]\nx = 1\n", "extra"),
    (CARD_OK.replace('name = "x"', 'name = "llama31_8b"'), "shipped workload"),
    (CARD_OK + "precision = 'fp2'\n", "precision must be"),
    ("this is [not toml", "is not TOML"),
    ("\udcff", "is not"),
])
def test_a_bad_card_is_one_line_and_exit_3(tmp_path, capsys, text, word):
    card = tmp_path / "card.toml"
    card.write_bytes(text.encode("utf-8", errors="surrogateescape"))
    assert _plan(tmp_path, "--workload", card, "--offers", LAMBDA) == 3
    line = _one_error_line(capsys)
    assert word in line and "card.toml" in line
    assert not (tmp_path / "plan").exists()


def test_a_missing_or_special_card_file_is_one_line(tmp_path, capsys):
    assert _plan(tmp_path, "--workload", tmp_path / "nope.toml", "--offers", LAMBDA) == 3
    assert "does not exist" in _one_error_line(capsys)
    (tmp_path / "dir.toml").mkdir()
    assert _plan(tmp_path, "--workload", tmp_path / "dir.toml", "--offers", LAMBDA) == 3
    _one_error_line(capsys)


# -- hostile catalogs -------------------------------------------------------------------------

def _catalog(tmp_path, rows, header=HEADER, name="vms.csv"):
    d = tmp_path / "cat" / "acme"
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_text(header + "".join(r + "\n" for r in rows))
    return d / name


H100 = "gpu_8x_h100_sxm5,H100,8.0,208.0,1800.0,{p},us-east-1,,{s}"


def test_missing_column_is_one_line_naming_it(tmp_path, capsys):
    path = _catalog(tmp_path, ["gpu_1,H100,1.0,1,1,us-east-1"],
                    header="InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Region\n")
    assert _plan(tmp_path, "--workload", "bert", "--offers", path) == 3
    line = _one_error_line(capsys)
    assert "no column 'Price'" in line and "vms.csv" in line


def test_bad_prices_are_skipped_and_counted(tmp_path, capsys):
    rows = [H100.format(p="-1", s=""), H100.format(p="0", s=""), H100.format(p="nan", s=""),
            H100.format(p="abc", s="-3"), H100.format(p="23.92", s="7.5"),
            H100.format(p="inf", s="")]
    path = _catalog(tmp_path, rows)
    assert _plan(tmp_path, "--workload", "bert", "--offers", path) == 0
    err = capsys.readouterr().err
    assert "5 catalog rows skipped: on-demand price not a positive number" in err
    assert "1 catalog rows skipped: spot price" in err
    t = _ranking(tmp_path)
    assert set(t["usd_per_hour"]) == {23.92, 7.5}


def test_only_bad_prices_is_one_line_and_exit_3(tmp_path, capsys):
    path = _catalog(tmp_path, [H100.format(p="-1", s=""), H100.format(p="0", s="0")])
    assert _plan(tmp_path, "--workload", "bert", "--offers", path) == 3
    assert "no GPU offer with a usable price" in _one_error_line(capsys)


def test_unknown_accelerators_only_is_one_line(tmp_path, capsys):
    path = _catalog(tmp_path, ["x1,Quantum9000,8.0,1,1,2.0,us-east-1,,",
                               "cpu1,,,4.0,16.0,0.2,us-east-1,,"])
    with pytest.raises(DataError):
        plan_offers(workload_arg("bert"), read_offers(path))
    assert _plan(tmp_path, "--workload", "bert", "--offers", path) == 3
    line = _one_error_line(capsys)
    assert "Quantum9000" in line or "no offer" in line


def test_aws_trainium_offers_are_planned_and_inferentia_is_named(tmp_path, capsys):
    # SkyPilot's AWS catalog names trn1 "Trainium"; Inferentia2 is an inference chip the
    # catalog has no training facts for: counted as not resolved, never guessed
    rows = ["trn1.32xlarge,Trainium,16.0,128.0,512.0,21.5,us-east-1,,",
            "trn2.48xlarge,Trainium2,16.0,192.0,2048.0,46.0,us-east-2,,",
            "inf2.48xlarge,Inferentia2,12.0,192.0,768.0,12.98,us-east-1,,"]
    offers = read_offers(_catalog(tmp_path, rows))
    assert set(offers.table["accelerator_id"]) == {"aws_trainium", "aws_trainium2"}
    assert [name for name, _ in offers.unresolved] == ["Inferentia2"]
    assert _plan(tmp_path, "--workload", "llama31_8b", "--offers", tmp_path / "cat") == 0
    t = _ranking(tmp_path)
    assert {"trn1.32xlarge", "trn2.48xlarge"} <= set(t["instance"])
    assert (t["accelerators_per_instance"] == 16).all() and (t["n_accelerators"] % 16 == 0).all()
    # the chips have no MLPerf rows: each prediction says what it borrowed
    assert t["prediction_basis"].str.startswith("borrowed").all()


def test_a_clouds_instance_takes_its_stated_network_and_says_where_from(tmp_path):
    # SkyPilot's catalogs give no network: p5's EFA comes from the instance table, with
    # its source in the offer's note; an instance the table lacks keeps the assumed one
    rows = ["p5.48xlarge,H100,8.0,192.0,2048.0,55.04,us-east-1,,",
            "trn1.32xlarge,Trainium,16.0,128.0,512.0,21.5,us-east-1,,",
            "gpu_8x_h100_sxm5,H100,8.0,208.0,1800.0,23.92,us-east-1,,"]
    aws = tmp_path / "sky" / "aws"
    aws.mkdir(parents=True)
    (aws / "vms.csv").write_text(HEADER + "".join(r + "\n" for r in rows))
    t = read_offers(aws / "vms.csv").table.set_index("instance")
    assert t.loc["p5.48xlarge", "network"] == "aws_efa_p5"
    assert "instance_networks.csv" in t.loc["p5.48xlarge", "offer_note"]
    assert t.loc["trn1.32xlarge", "network"] == "8 x 100 Gbps EFA"
    assert t.loc["gpu_8x_h100_sxm5", "network"] == ""
    assert "network" not in t.loc["gpu_8x_h100_sxm5", "offer_note"]
    # the same instance in another cloud's folder is not AWS's
    assert read_offers(_catalog(tmp_path, rows[:1])).table["network"].iloc[0] == ""
    # planned on it: p5 clusters are predicted on their 400 GB/s, not on the assumed 50
    plan = plan_offers(workload_arg("deepseekv3_671b"), read_offers(aws / "vms.csv"))
    p5 = plan.table[plan.table["instance"] == "p5.48xlarge"]
    assert not p5["prediction_note"].str.contains("network assumed").any()
    other_h100 = plan.table[plan.table["instance"] == "gpu_8x_h100_sxm5"]
    assert other_h100["prediction_note"].str.contains("network assumed").all()


def test_a_plan_with_fewer_offers_than_groups_still_ranks(tmp_path, capsys):
    # DeepSeek-V3 fits few offers: the side view groups what there is instead of refusing
    rows = ["p5.48xlarge,H100,8.0,192.0,2048.0,55.04,us-east-1,,",
            "trn2.48xlarge,Trainium2,16.0,192.0,2048.0,46.0,us-east-2,,"]
    path = _catalog(tmp_path, rows)
    assert _plan(tmp_path, "--workload", "deepseekv3_671b", "--offers", path) == 0
    t = _ranking(tmp_path)
    assert 1 < len(t) < 5 and t["rank"].notna().all()
    assert t["cluster"].nunique() == len(t)
    assert f"{len(t)} clusters, not 5" in capsys.readouterr().err


def test_formula_like_text_is_skipped_and_counted(tmp_path, capsys):
    rows = ["=cmd|' /C calc'!A0,H100,8.0,1,1,2.0,us-east-1,,",
            "gpu_8x,H100,8.0,1,1,23.0,@SUM(A1),,",
            H100.format(p="23.92", s="")]
    path = _catalog(tmp_path, rows)
    o = read_offers(path)
    assert len(o.table) == 1
    assert any("formula-like text in instance" in s for s in o.skipped)
    assert any("formula-like text in region" in s for s in o.skipped)
    assert _plan(tmp_path, "--workload", "bert", "--offers", path) == 0
    assert not _ranking(tmp_path)["instance"].str.startswith("=").any()


def test_not_a_csv_and_a_fifo_are_one_line(tmp_path, capsys):
    path = _catalog(tmp_path, ['"unterminated,H100'], header='a,"b\n')
    assert _plan(tmp_path, "--workload", "bert", "--offers", path) == 3
    _one_error_line(capsys)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _plan(tmp_path, "--workload", "bert", "--offers", empty) == 3
    assert "no vms.csv" in _one_error_line(capsys)


def test_a_million_row_catalog(tmp_path, capsys):
    n = 1_000_000
    rng = np.random.default_rng(0)
    inst = np.array(["gpu_8x_h100_sxm5", "gpu_1x_a10", "cpu_4x", "gpu_4x_weird"])
    acc = np.array(["H100", "A10", "", "Weird9"])
    cnt = np.array(["8.0", "1.0", "", "4.0"])
    k = rng.integers(0, 4, n)
    region = np.char.add("r", rng.integers(0, 50, n).astype(str))
    price = np.where(rng.random(n) < 0.001, "-1", np.array(["23.92", "0.75", "0.2", "3.0"])[k])
    df = pd.DataFrame({"InstanceType": inst[k], "AcceleratorName": acc[k],
                       "AcceleratorCount": cnt[k], "vCPUs": "8.0", "MemoryGiB": "32.0",
                       "Price": price, "Region": region, "GpuInfo": "", "SpotPrice": ""})
    path = tmp_path / "cat" / "big" / "vms.csv"
    path.parent.mkdir(parents=True)
    df.to_csv(path, index=False)
    assert _plan(tmp_path, "--workload", "bert", "--offers", path) == 0
    err = capsys.readouterr().err
    assert f"read {n:,} catalog rows" in err
    assert "'Weird9'" in err and "on-demand price not a positive number" in err
    t = _ranking(tmp_path)
    assert set(t["instance"]) == {"gpu_8x_h100_sxm5", "gpu_1x_a10"}
    assert (t["regions"].str.count(";") == 49).all()


def test_own_offers_csv(tmp_path):
    path = tmp_path / "offers.csv"
    pd.DataFrame({
        "provider": ["Acme", "Acme", "Beta"], "instance": ["h8", "h8", "m8"],
        "accelerator": ["H100-SXM5-80GB", "H100-SXM5-80GB", "MI300X"],
        "accelerators_per_instance": [8, 8, 8], "usd_per_hour": [24.0, 24.0, 20.0],
        "spot_usd_per_hour": [8.0, None, None], "region": ["eu", "us", "us"],
        "interconnect": ["nvlink4", "nvlink4", ""], "network": ["ib_ndr_400g", "", ""],
        "date": ["2026-11-30", "2026-11-30", ""]}).to_csv(path, index=False)
    o = read_offers(path)
    assert len(o.table) == 4  # h8 on demand in eu and us (one network each), h8 spot, m8
    assert set(o.table["catalog_date"]) == {"2026-11-30", ""}
    assert _plan(tmp_path, "--workload", "bert", "--offers", path) == 0
    t = _ranking(tmp_path)
    assert set(t["provider"]) == {"Acme", "Beta"} and t["spot"].any()


def test_the_report_has_the_offers_view(tmp_path):
    assert main(["plan", "--workload", "resnet", "--offers", str(RUNPOD), "--backend", "cpu",
                 "--out", str(tmp_path / "plan")]) == 0
    page = (tmp_path / "plan" / "report.html").read_text()
    assert 'id="offers"' in page and 'data-figure="offers"' in page


def test_require_on_demand_only(tmp_path):
    assert _plan(tmp_path, "--workload", "resnet", "--offers", RUNPOD,
                 "--require", "spot == 0") == 0
    t = _ranking(tmp_path)
    assert len(t) and not t["spot"].any()


def _configs(path):
    pd.DataFrame({"accelerator": ["H100-SXM5-80GB", "A100-SXM4-80GB", "MI300X", "H100-SXM5-80GB"],
                  "n_accelerators": [8, 16, 8, 64], "n_nodes": [1, 2, 1, 8],
                  "accelerators_per_node": [8, 8, 8, 8],
                  "price_per_accelerator_hour": [3.0, 2.0, 2.5, 3.0]}).to_csv(path, index=False)
    return path


def test_predict_and_analyze_take_a_card(tmp_path, capsys):
    table = _configs(tmp_path / "configs.csv")
    card = EXAMPLES / "lora_70b_finetune.toml"
    assert main(["predict", str(table), "--workload", str(card), "-o",
                 str(tmp_path / "p.parquet")]) == 0
    p = pd.read_parquet(tmp_path / "p.parquet")
    assert (p["prediction_basis"] == "first-principles:llama2_70b_lora").all()
    assert p["prediction_note"].str.contains("card lora-70b-50mt").all()
    assert main(["analyze", str(table), "--predict", "--workload", str(card), "--backend",
                 "cpu", "--no-report", "--out", str(tmp_path / "a")]) == 0
    a = pd.read_parquet(tmp_path / "a" / "ranking.parquet")
    assert a["prediction_basis"].str.startswith("first-principles:").all()
    # the shipped name works the same way
    assert main(["predict", str(table), "--workload", "bert", "-o",
                 str(tmp_path / "b.parquet")]) == 0


def _plan_options():
    from gpurank.engine.cli import build_parser
    sub = next(a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    for action in sub.choices["plan"]._actions:
        if action.option_strings and action.nargs != 0 and action.dest not in ("help", "out"):
            yield action.option_strings[-1]


@pytest.mark.parametrize("option", list(_plan_options()))
@pytest.mark.parametrize("value", ["", "-1", "0", "nan", "1e400", "\x1b]0;x\x07", "{"])
def test_every_plan_option_refuses_hostile_values_in_one_line(tmp_path, capsys, monkeypatch,
                                                              option, value):
    monkeypatch.chdir(tmp_path)
    argv = {"--workload": "resnet", "--offers": str(RUNPOD), option: value}
    args = [x for kv in argv.items() for x in kv]
    code = main(["plan", "--backend", "cpu", "--no-report", "--quiet", "--samples", "200",
                 "--out", str(tmp_path / "out"), *args])
    err = capsys.readouterr().err
    assert code in (0, 2, 3, 4), (code, err)
    assert "Traceback" not in err and "\x1b" not in err
    if code != 0:
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith("gpurank: error: "), err
        assert not (tmp_path / "out").exists()


def test_sizes_double_up_to_the_limit(tmp_path):
    assert _plan(tmp_path, "--workload", "resnet", "--offers", LAMBDA,
                 "--max-accelerators", "8") == 0
    t = _ranking(tmp_path)
    assert t["n_accelerators"].max() <= 8
    assert set(t["instances"]) <= {1, 2, 4, 8}
    one = t[t["instance"] == "gpu_1x_a10"]
    assert sorted(one["instances"]) == [1, 2, 4, 8]
    assert set(t.loc[t["instance"] == "gpu_8x_h100_sxm5", "instances"]) == {1}


def test_a_plan_ranks_by_any_method_of_the_table(tmp_path, capsys):
    """``--method`` names a row of the methods table: the plan is ranked by that method's
    score column (rank 1 = best by it), and a method SMAA cannot rank by is refused with
    ``--robust`` in one line."""
    from gpurank.engine.methods import METHODS

    for name, m in METHODS.items():
        assert _plan(tmp_path, "--workload", "llama31_8b", "--offers", LAMBDA, "--method",
                     name, out=name) == 0
        t = _ranking(tmp_path, name).dropna(subset=["rank"]).sort_values("rank")
        score = t[m.column].to_numpy(float)
        best_first = -score if m.higher_is_better else score
        assert (np.diff(best_first) >= -1e-12).all(), name
    capsys.readouterr()
    unsupported = [n for n, m in METHODS.items() if not m.smaa]
    for name in unsupported:
        assert _plan(tmp_path, "--workload", "llama31_8b", "--offers", LAMBDA, "--method",
                     name, "--robust", out=name + "-r") == 2
        assert "--method" in _one_error_line(capsys)
    assert _plan(tmp_path, "--workload", "llama31_8b", "--offers", LAMBDA, "--method",
                 "nope", out="nope") == 2
    assert "--method must be one of" in _one_error_line(capsys)
