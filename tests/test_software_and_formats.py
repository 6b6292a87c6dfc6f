"""The training number format of each row and the software trend between rounds.

A row's format comes from its own ``precision`` column, else from what its round's
submissions stated (``engine/data/training_formats.csv``), else from its workload; the
prediction note names a stated format. The software trend moves a family's compute
efficiency by its vendor's gain per round, slowing as the family's software ages.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gpurank.engine.sources import calibrate, predict
from gpurank.engine.sources.facts.benchmarks import benchmarks_of, workload_names
from gpurank.engine.sources.facts.formats import (
    format_in_text,
    format_name,
    format_rules,
    stated_formats,
)
from gpurank.engine.sources.facts.hardware import ELEMENT_BYTES, PRECISIONS
from gpurank.engine.sources.facts.mlperf_rules import round_ordinal
from gpurank.engine.sources.mlperf.logs import parse_result_text, stated_format
from gpurank.engine.sources.model.perfmodel import CalibratedModel
from gpurank.engine.sources.model.software import trend_rounds, with_software_gain
from gpurank.engine.sources.model.workloads import default_model, workload

from mlperf_data import shared_data

ROOT = Path(__file__).resolve().parents[1]


def _rules(rows):
    t = pd.DataFrame(rows, columns=["round", "submitter", "vendor", "benchmark", "format",
                                    "source"])
    t["ordinal"] = [round_ordinal(r) for r in t["round"]]
    return t


RULES = _rules([
    ("v5.0", "*", "NVIDIA", "bench", "fp8", "s"),
    ("v5.1", "NVIDIA", "NVIDIA", "bench", "fp4", "s"),
    ("v5.1", "*", "NVIDIA", "bench", "fp8", "s"),
    ("v5.1", "*", "AMD", "other", "fp4", "s"),
])


# --- the format names --------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("BF16", "bf16"), ("bf16-mixed", "bf16"), ("fp16", "bf16"), ("FP8", "fp8"),
    ("e4m3", "fp8"), ("MXFP8", "fp8"), ("hybrid", "fp8"), ("NVFP4", "fp4"), ("mxfp4", "fp4"),
    ("fp7", None), ("", None), (None, None), (float("nan"), None),
])
def test_format_names(text, expected):
    assert format_name(text) == expected


def test_every_alias_names_a_modelled_format_with_an_element_size():
    from gpurank.engine.sources.facts.formats import FORMAT_ALIASES

    assert set(FORMAT_ALIASES.values()) == set(PRECISIONS) == set(ELEMENT_BYTES)
    assert ELEMENT_BYTES["bf16"] == 1.0 > ELEMENT_BYTES["fp8"] > ELEMENT_BYTES["fp4"] > 0


# --- the rules -----------------------------------------------------------------------------

def test_a_submitter_rule_comes_before_the_rule_for_every_other_submitter():
    fmt, why = stated_formats(["v5.1", "v5.1"], ["NVIDIA", "Dell"], ["NVIDIA", "NVIDIA"],
                              ["bench"], rules=RULES)
    assert list(fmt) == ["fp4", "fp8"]
    assert "NVIDIA's MLPerf Training v5.1 bench submissions trained in fp4" in why[0]
    assert "NVIDIA's partners'" in why[1]


def test_a_rule_holds_from_its_round_until_a_later_one():
    fmt, _ = stated_formats(["v4.1", "v5.0", "v5.1", "v6.0"], ["Dell"] * 4, ["NVIDIA"] * 4,
                            ["bench"], rules=RULES)
    assert list(fmt) == [None, "fp8", "fp8", "fp8"]
    fmt, _ = stated_formats(["v6.0"], ["NVIDIA"], ["NVIDIA"], ["bench"], rules=RULES)
    assert list(fmt) == ["fp4"]


def test_a_row_without_round_or_submitter_takes_the_vendors_own_latest_rule():
    fmt, _ = stated_formats([None, float("nan"), ""], [None, None, ""], ["NVIDIA"] * 3,
                            ["bench"], rules=RULES)
    assert list(fmt) == ["fp4"] * 3


def test_no_rule_for_another_vendor_benchmark_or_an_unreadable_round():
    fmt, why = stated_formats(["v5.1", "v5.1", "round nine"], [None, None, None],
                              ["AMD", "Intel", "NVIDIA"], ["bench"], rules=RULES)
    assert list(fmt) == [None, None, None] and list(why) == ["", "", ""]
    fmt, _ = stated_formats(["v5.1"], ["AMD"], ["AMD"], ["other"], rules=RULES)
    assert list(fmt) == ["fp4"]
    assert stated_formats([], [], [], ["bench"], rules=RULES)[0].shape == (0,)


def test_the_shipped_rules_are_sourced_and_name_what_exists():
    rules = format_rules()
    refs = (ROOT / "docs" / "references.md").read_text()
    known = {b for w in workload_names() for b in benchmarks_of(w)}
    assert len(rules) > 0
    for _, r in rules.iterrows():
        assert r["ordinal"] is not None and r["format"] in PRECISIONS
        assert r["benchmark"] in known and r["vendor"] and r["submitter"]
        keys = re.findall(r"\[([A-Za-z0-9]+)\]", r["source"])
        assert keys and all(f"**[{k}]**" in refs for k in keys), r["source"]
    # one rule per round, submitter, vendor and benchmark: no rule shadows another
    assert not rules.duplicated(["round", "submitter", "vendor", "benchmark"]).any()


# --- predictions ---------------------------------------------------------------------------

def _rows(**cols):
    base = dict(accelerator="NVIDIA B200", n_accelerators=8, n_nodes=1, accelerators_per_node=8,
                global_batch_size=32)
    base.update(cols)
    return pd.DataFrame({k: v if isinstance(v, list) else [v] for k, v in base.items()})


def test_a_stated_format_is_used_and_noted_and_a_given_one_wins():
    model = default_model("llama31_8b")
    wl = workload("llama31_8b")
    t = pd.concat([_rows(round="v5.1", submitter="NVIDIA"), _rows(round="v5.1", submitter="Dell"),
                   _rows(round="v5.1", submitter="NVIDIA", precision="fp8")], ignore_index=True)
    p = predict(t, model, workload=wl, use_table_epochs=False)
    note = p["prediction_note"].tolist()
    assert "precision assumed: fp4; NVIDIA's MLPerf Training v5.1" in note[0]
    assert "precision assumed: fp8; NVIDIA's partners'" in note[1]
    assert "precision assumed" not in note[2]
    time = p["predicted_time_to_train_min"].to_numpy()
    # the same B200s in fp4 train faster than in fp8; a stated fp8 is the given fp8
    assert time[0] < time[1] and time[1] == pytest.approx(time[2])


def test_an_accelerator_without_the_stated_format_computes_in_the_next_wider_one():
    p = predict(_rows(accelerator="NVIDIA H100-SXM5-80GB", round="v5.1", submitter="NVIDIA"),
                default_model("llama31_8b"), workload=workload("llama31_8b"),
                use_table_epochs=False)
    assert "precision assumed: fp8 (no fp4 peak on this accelerator)" in \
        p["prediction_note"].iloc[0]


def test_a_workload_no_rule_covers_keeps_its_own_format_without_a_note():
    p = predict(_rows(round="v5.1", submitter="NVIDIA"), default_model("retinanet"),
                workload=workload("retinanet"), use_table_epochs=False)
    assert "precision" not in p["prediction_note"].iloc[0]


def test_a_sweep_notes_the_format_it_assumes():
    from gpurank.engine.sources import simulate

    t = simulate(200, seed=3, workload=workload("llama31_8b"),
                 accelerators=["NVIDIA B200", "NVIDIA H100-SXM5-80GB"])
    b200 = t[t["family"] == "B200"]["prediction_note"]
    h100 = t[t["family"] == "H100"]["prediction_note"]
    assert len(b200) and b200.str.contains("precision assumed: fp4;").all()
    assert len(h100) and h100.str.contains("precision assumed: fp8 \\(no fp4").all()


# --- logs ----------------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    (" 0:       fp8: true\n 0:       fp4: false\n", "fp8"),
    ("                 fp8='hybrid',\n                 fp4=None,\n", "fp8"),
    ("  fp8: e4m3\n   fp8_recipe='mxfp8',\n", "fp8"),
    ("model:\n  fp4: nvfp4\n  fp8: true\n", "fp4"),
    ("  fp8: false\n  bf16: true\n", "bf16"),
    ("  fp4_recipe: nvfp4\n  use_fp8: true\n  moe_router_padding_for_fp8=False\n", ""),
    (':::MLLOG {"key": "x", "value": {"fp8": "e4m3"}}\n', "fp8"),
    ("no configuration printed\n", ""),
])
def test_a_log_states_its_format(text, expected):
    assert stated_format(text) == expected


def test_a_parsed_log_carries_its_stated_format():
    text = (':::MLLOG {"time_ms": 1, "key": "run_start", "value": null}\n'
            " 0:   fp8: true\n"
            ':::MLLOG {"time_ms": 60001, "key": "run_stop", "value": null, '
            '"metadata": {"status": "success"}}\n')
    assert parse_result_text(text).precision == "fp8"


def test_the_reader_writes_what_the_logs_state():
    root = shared_data("mlperf_training", "raw")
    system = root / "v5.1" / "Dell" / "results" / "2xXE9680Lx8B200-SXM-180GB" / "llama31_8b"
    if not system.is_dir():
        pytest.skip("shared MLPerf Training data not present")
    from gpurank.engine.sources import read_mlperf

    t = read_mlperf(root / "v5.1" / "Dell", benchmark="llama31_8b").table
    row = t[t["system"] == "2xXE9680Lx8B200-SXM-180GB"]
    assert row["precision"].tolist() == ["fp8"]
    assert set(t["precision"]) <= {"", "fp8", "fp4", "bf16"}


# --- the software trend --------------------------------------------------------------------

def test_trend_rounds_counts_rounds_without_decay_and_caps_ahead():
    ahead = np.array([-3.0, -1.0, 0.0, 1.0, 2.0, 5.0])
    out = trend_rounds(ahead, np.full(6, 4.0), 1.0, 2.0)
    assert out.tolist() == [-3.0, -1.0, 0.0, 1.0, 2.0, 2.0]
    assert trend_rounds(np.zeros(0), np.zeros(0), 0.5, 2.0).shape == (0,)


def test_trend_rounds_decays_with_the_familys_age():
    d = 0.5
    # ahead one round of a family 2 rounds old: the gain of its 3rd round
    assert trend_rounds(np.array([1.0]), np.array([2.0]), d, 2.0)[0] == pytest.approx(d ** 3)
    # one round back: the gain of the model's round itself, as the family's 2nd
    assert trend_rounds(np.array([-1.0]), np.array([2.0]), d, 2.0)[0] == pytest.approx(-d ** 2)
    young = trend_rounds(np.array([1.0]), np.array([0.0]), d, 2.0)[0]
    old = trend_rounds(np.array([1.0]), np.array([5.0]), d, 2.0)[0]
    assert young > old > 0


def test_a_gain_multiplies_the_efficiency_never_above_one():
    out = with_software_gain(np.array([0.3, 0.3, 0.9, 0.5]), np.array([0.0, math.log(2), 1.0, -1]))
    assert out == pytest.approx([0.3, 0.6, 1.0, 0.5 * math.exp(-1)])


def test_the_models_gain_per_row():
    m = CalibratedModel(software_round="v5.0", software_trend_shared=0.1,
                        software_trend_by_vendor={"NVIDIA": 0.2}, software_trend_decay=1.0,
                        software_first_round_by_family={"B200": "v4.1"})
    g = m.software_gain(["NVIDIA", "AMD", "NVIDIA", "NVIDIA"], ["B200", "MI300", "B200", "H100"],
                        ["v5.1", "v5.1", None, "v4.0"])
    assert g == pytest.approx([0.2, 0.1, 0.0, -0.4])
    assert not CalibratedModel().software_gain(["NVIDIA"], ["B200"], ["v5.1"]).any()


def test_a_later_rounds_row_is_faster_and_says_so():
    model = default_model("llama2_70b_lora")
    assert model.software_round is not None
    ahead = "v9.0" if round_ordinal("v9.0") else None
    t = pd.concat([_rows(), _rows(round=model.software_round), _rows(round=ahead)],
                  ignore_index=True)
    p = predict(t, model, workload=workload("llama2_70b_lora"), use_table_epochs=False)
    time = p["predicted_time_to_train_min"].to_numpy()
    assert time[0] == pytest.approx(time[1])
    gain = model.software_trend_by_vendor.get("NVIDIA", model.software_trend_shared)
    assert (time[2] < time[1]) == (gain > 0)
    note = p["prediction_note"].iloc[2]
    k = round_ordinal("v9.0") - round_ordinal(model.software_round)
    assert f"round v9.0 is {k} round(s) after the latest fitted round" in note
    assert "software extrapolated by its vendor's trend" in note
    assert "2 rounds of it at most" in note  # beyond software_trend_rounds


def _synthetic(trend: float, decay: float):
    """Configurations of three rounds timed by a model with a known software trend."""
    rng = np.random.default_rng(7)
    rows = []
    for rnd, fams in (("v4.0", ["NVIDIA H100-SXM5-80GB", "NVIDIA A100-SXM4-80GB"]),
                      ("v4.1", ["NVIDIA H100-SXM5-80GB", "NVIDIA B200"]),
                      ("v5.0", ["NVIDIA H100-SXM5-80GB", "NVIDIA B200"])):
        for acc in fams:
            for nodes in (1, 2, 4, 8, 16):
                gb = int(rng.choice([8, 16, 32])) * nodes
                rows.append(dict(accelerator=acc, n_accelerators=8 * nodes, n_nodes=nodes,
                                 accelerators_per_node=8, global_batch_size=gb, round=rnd,
                                 benchmark="llama2_70b_lora"))
    t = pd.DataFrame(rows)
    wl = workload("llama2_70b_lora")
    truth = replace(default_model("llama2_70b_lora"), software_round="v5.0",
                    software_trend_by_vendor={"NVIDIA": trend}, software_trend_shared=trend,
                    software_trend_decay=decay,
                    software_first_round_by_family={"H100": "v4.0", "A100": "v4.0",
                                                    "B200": "v4.1"})
    p = predict(t, truth, workload=wl, use_table_epochs=False)
    return t.assign(time_to_train_min=p["predicted_time_to_train_min"].to_numpy()), wl


@pytest.mark.parametrize("trend", [0.0, 0.15])
def test_a_fit_recovers_the_software_trend_of_its_rows(trend):
    t, wl = _synthetic(trend, 1.0)
    m = calibrate(t, workload=wl)
    assert m.software_round == "v5.0"
    assert m.software_first_round_by_family == {"A100": "v4.0", "B200": "v4.1", "H100": "v4.0"}
    got = m.software_trend_by_vendor["NVIDIA"] * m.software_trend_decay
    assert got == pytest.approx(trend, abs=0.05)


def test_a_model_file_without_a_trend_predicts_as_one_with_none(tmp_path):
    import json

    model = default_model("llama2_70b_lora")
    raw = model.to_dict()
    for key in ("software_trend_by_vendor", "software_trend_shared", "software_round",
                "software_trend_rounds", "software_trend_decay",
                "software_first_round_by_family"):
        raw.pop(key)
    f = tmp_path / "old.json"
    f.write_text(json.dumps(raw))
    old = CalibratedModel.from_json(f)
    flat = replace(model, software_trend_by_vendor={}, software_trend_shared=0.0)
    t = _rows(round="v5.1")
    wl = workload("llama2_70b_lora")
    a = predict(t, old, workload=wl, use_table_epochs=False)["predicted_time_to_train_min"]
    b = predict(t, flat, workload=wl, use_table_epochs=False)["predicted_time_to_train_min"]
    assert a.iloc[0] == pytest.approx(b.iloc[0])


def test_the_report_says_what_software_a_model_is_of():
    from gpurank.engine.commands.calibrate_report import software_text

    assert software_text(CalibratedModel()) == ""
    one = software_text(CalibratedModel(software_round="v5.1"))
    assert "software of v5.1" in one and "no software trend measured" in one
    m = CalibratedModel(software_round="v5.1", software_trend_by_vendor={"NVIDIA": math.log(1.2)},
                        software_trend_decay=1.0)
    assert "NVIDIA x1.20" in software_text(m)


def test_the_mixed_peak_lies_between_the_wide_and_the_narrow_one():
    from gpurank.engine.sources.model.perfmodel import mixed_peak

    wide, narrow = np.array([1000.0, 1000.0, 1000.0, 1000.0]), np.array([2000.0, 6000.0, 0.0, np.nan])
    got = mixed_peak(wide, narrow, 0.5)
    assert got[0] == pytest.approx(1000 / (0.5 + 0.25)) and got[1] == pytest.approx(1000 / (0.5 + 0.5 / 6))
    assert got[2] == 1000.0 and got[3] == 1000.0  # no narrower peak: the wide one
    assert (mixed_peak(wide, narrow, 0.0) == wide).all()


@pytest.mark.parametrize("text, expected", [
    ("FP8 Training", "fp8"), ("NVFP4 GEMMs, BF16 elsewhere", "fp4"), ("MXFP8 recipe", "fp8"),
    ("uses FP16", "bf16"), ("Based on AMD's v5.1 submission code", None), ("fp8_recipe", None),
    ("", None), (None, None), (float("nan"), None), ("x" * 20_000 + " FP8", None),
])
def test_a_description_names_its_format(text, expected):
    assert format_in_text(text) == expected


def test_the_reader_takes_the_format_a_description_states():
    root = shared_data("mlperf_training", "raw")
    if not (root / "v5.1" / "AMD").is_dir():
        pytest.skip("shared MLPerf Training data not present")
    from gpurank.engine.sources import read_mlperf

    t = read_mlperf(root / "v5.1" / "AMD", benchmark="all").table
    # the MI350X/MI355X descriptions say "FP8 Training" in sw_notes, the MI300X/MI325X ones
    # nothing; none of their logs prints its configuration
    by = dict(zip(t["system"], t["precision"]))
    assert by["MI355X_EPYC_9575F_pytorch"] == "fp8" and by["MI350X_EPYC_9575F_pytorch"] == "fp8"
    assert by["MI325X_EPYC_9575F_pytorch_llama2_70b"] == ""


def test_a_fit_of_one_round_borrows_the_nearest_measured_trend():
    from gpurank.engine.sources.model.workloads import borrow_software_trends

    measured = CalibratedModel(software_round="v5.1", software_trend_by_vendor={"NVIDIA": 0.1},
                               software_trend_decay=0.8, workload="llama2_70b_lora")
    far = CalibratedModel(software_round="v5.1", software_trend_by_vendor={"NVIDIA": 0.3},
                          workload="resnet50")
    one = CalibratedModel(software_round="v5.1", workload="llama31_8b")
    none = CalibratedModel(workload="retinanet")  # a fit without rounds: nothing to move
    out = borrow_software_trends({"llama2_70b_lora": measured, "resnet50": far,
                                  "llama31_8b": one, "retinanet": none})
    got = out["llama31_8b"]
    assert got.software_trend_from == "llama2_70b_lora"  # the nearer workload
    assert got.software_trend_by_vendor == {"NVIDIA": 0.1} and got.software_trend_decay == 0.8
    assert out["retinanet"] is none and out["llama2_70b_lora"] is measured
    # idempotent: a borrowed trend is not lent on
    assert borrow_software_trends(out) == out
    assert borrow_software_trends({"llama31_8b": one})["llama31_8b"] is one


def test_the_shipped_models_of_one_round_carry_a_borrowed_trend():
    for name in ("llama31_8b", "flux1"):
        m = default_model(name)
        assert m.software_round == "v5.1" and m.software_trend_from
        assert default_model(m.software_trend_from).software_trend_from is None
