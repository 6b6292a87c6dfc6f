"""Mixture-of-experts workloads from their model cards: the expert-parallel all-to-all, the
memory of all experts, and the shipped DeepSeek-V3, gpt-oss and Llama 3.1 70B
(tests/test_moe.py)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from gpurank.engine.params import ParamError
from gpurank.engine.sources.model.calibrate import predict
from gpurank.engine.sources.model.perfmodel import DEFAULT_MODEL, evaluate
from gpurank.engine.sources.model.workloads import workload
from gpurank.engine.sources.sweep.simulate import simulate

NEW = ["deepseek_v3_671b", "gpt_oss_20b", "gpt_oss_120b", "llama31_70b"]


def _cfg(n, per_node, *, inter=400.0, intra=450.0, domain=np.nan):
    return {"peak_tflops": 989.0, "compute_efficiency": 0.5, "mem_bw_tbps": 3.35,
            "n_accelerators": np.array([float(n)]), "accelerators_per_node": float(per_node),
            "n_nodes": float(n // per_node), "local_batch": 8.0, "intra_GBps": intra,
            "inter_GBps": inter, "cpu_cores_per_accelerator": np.nan,
            "cpu_decode_factor": 1.0, "dali": False, "scaleup_domain": domain,
            "scaleup_GBps": np.nan}


def test_names_and_benchmark_names():
    assert workload("deepseekv3_671b") == workload("deepseek_v3_671b")
    assert workload("gpt_oss_20b").benchmark == "gpt_oss_20b"
    for name in NEW:
        w = workload(name)
        assert w.samples_curve and w.throughput_unit == "tokens/s"
        src = dict(w.sources)
        assert src["flops"] and src["params"] and src["tokens"]
        if w.experts:
            assert src["experts"] and src["active"] and src["expert_parallel"]
            assert 0 < w.active_params < w.params
            # the routed experts hold most of the parameters, the rest is shared
            assert 0.9 * w.params < w.expert_params < w.params
    assert workload("llama31_70b").experts == 0


def test_alltoall_is_zero_without_experts_and_grows_off_the_domain():
    wl = workload("gpt_oss_20b")
    dense = replace(wl, experts=0, experts_per_token=0, moe_layers=0, hidden_size=0,
                    active_params=None)
    one = replace(wl, expert_parallel=1)
    node = replace(wl, expert_parallel=8)
    wide = replace(wl, expert_parallel=32)
    cfg = _cfg(64, 8)
    t = {k: evaluate(cfg, DEFAULT_MODEL, w)["t_comm"][0]
         for k, w in (("dense", dense), ("one", one), ("node", node), ("wide", wide))}
    # one expert group per accelerator: no all-to-all, only the gradient exchange, which
    # is then of every parameter (each accelerator holds every expert)
    grads = 2.0 * 63 / 64 * wl.params * wl.grad_bytes_per_param / (400e9 * 0.8)
    assert t["one"] > 0 and t["dense"] > 0
    assert t["node"] > t["one"] - grads  # the all-to-all inside the node adds time
    assert t["wide"] > t["node"]  # beyond the node it crosses the slower network
    # the exchange scales with the routed copies
    more = replace(node, experts_per_token=8)
    assert evaluate(cfg, DEFAULT_MODEL, more)["t_comm"][0] > t["node"]
    # a scale-up domain that holds the group keeps it on the fast link
    rack = evaluate(_cfg(64, 4, intra=900.0, domain=72.0) | {"scaleup_GBps": 900.0},
                    DEFAULT_MODEL, wide)["t_comm"][0]
    assert rack < t["wide"]


def test_memory_holds_all_experts_and_a_step_touches_its_share():
    wl = workload("deepseek_v3_671b")
    # every expert's state is held: a model of the active parameters would fit far more
    active_only = replace(wl, params=wl.active_params, experts=0, experts_per_token=0,
                          moe_layers=0, hidden_size=0, active_params=None)
    mem = np.array([80.0])
    assert wl.max_local_batch(mem, shards=16.0, n=256.0)[0] < \
        active_only.max_local_batch(mem, shards=16.0, n=256.0)[0]
    # the per-step state pass reads the accelerator's share: shared / shards + experts /
    # (shards x expert group)
    cfg = _cfg(2048, 8) | {"model_parallel": 16.0, "local_batch": 1.0}
    t16 = evaluate(cfg, DEFAULT_MODEL, wl)["t_memory"][0]
    t64 = evaluate(cfg, DEFAULT_MODEL, replace(wl, expert_parallel=128))["t_memory"][0]
    assert t64 < t16


def test_moe_fields_are_checked():
    wl = workload("gpt_oss_20b")
    with pytest.raises(ParamError, match="experts_per_token"):
        replace(wl, experts_per_token=64)
    with pytest.raises(ParamError, match="active_params"):
        replace(wl, active_params=None)
    with pytest.raises(ParamError, match="expert_parallel"):
        replace(wl, expert_parallel=0)


@pytest.mark.parametrize("name", NEW)
def test_each_new_workload_is_predicted_and_simulated(name):
    row = dict(benchmark=name, accelerator="NVIDIA H100-SXM5-80GB", n_accelerators=256,
               n_nodes=32, accelerators_per_node=8, network="8x ConnectX-7 IB NDR 400 Gb/s")
    p = predict(pd.DataFrame([row]), workload=workload(name))
    t = p["predicted_time_to_train_min"].iloc[0]
    assert t > 0, p["prediction_note"].iloc[0]
    assert "global_batch_size chosen:" in p["prediction_note"].iloc[0]
    df = simulate(2000, seed=1, workload=workload(name))
    assert len(df) > 0 and (df["throughput"] > 0).all()


def test_moe_terms_are_the_same_on_a_strict_device():
    from gpurank.engine.backend.strict_device import xp

    wl = workload("deepseek_v3_671b")
    cfg = {"peak_tflops": 989.0, "compute_efficiency": 0.5, "mem_bw_tbps": 3.35,
           "n_accelerators": np.array([256.0, 2048.0, 64.0, 72.0]),
           "accelerators_per_node": np.array([8.0, 8.0, 8.0, 4.0]),
           "n_nodes": np.array([32.0, 256.0, 8.0, 18.0]), "local_batch": 8.0,
           "intra_GBps": 450.0, "inter_GBps": 400.0, "cpu_cores_per_accelerator": np.nan,
           "cpu_decode_factor": 1.0, "dali": False,
           "scaleup_domain": np.array([8.0, 8.0, 8.0, 72.0]),
           "scaleup_GBps": np.array([450.0, 450.0, 450.0, 900.0]),
           "model_parallel": np.array([16.0, 16.0, 4.0, 2.0])}
    cpu, dev = evaluate(cfg, DEFAULT_MODEL, wl), evaluate(cfg, DEFAULT_MODEL, wl, xp=xp)
    for key, value in cpu.items():
        np.testing.assert_array_equal(value, xp.asnumpy(dev[key]), key)


def test_routed_experts_compute_at_their_width_rate():
    from gpurank.engine.sources.model.workload import EXPERT_HALF_WIDTH

    ds, oss = workload("deepseek_v3_671b"), workload("gpt_oss_20b")
    # one expert's width from the cards' totals: DeepSeek-V3's routed experts are 2,048 wide
    # (moe_intermediate_size), gpt-oss-20b's 2,880 (plus their biases)
    assert ds.expert_width == pytest.approx(2048, rel=0.01)
    assert oss.expert_width == pytest.approx(2880, rel=0.04)
    assert 0.35 < ds.expert_flop_share < 0.5 and 0.5 < oss.expert_flop_share < 0.6
    s, f = ds.expert_flop_share, ds.expert_width
    assert ds.expert_compute_factor == pytest.approx((1 - s) + s * (f + EXPERT_HALF_WIDTH) / f)
    # a dense model computes at the dense rate
    assert workload("llama31_70b").expert_compute_factor == 1.0
    # wider experts come closer to the dense rate
    wider = replace(ds, hidden_size=ds.hidden_size // 2)  # the same parameters: twice as wide
    assert 1.0 < wider.expert_compute_factor < ds.expert_compute_factor
    # the compute term carries the factor: the same FLOPs as a dense model's take longer
    cfg = _cfg(256, 8) | {"model_parallel": 16.0, "local_batch": 1.0}
    flat = replace(ds, experts=0, experts_per_token=0, moe_layers=0, hidden_size=0,
                   active_params=None)
    a, b = evaluate(cfg, DEFAULT_MODEL, ds), evaluate(cfg, DEFAULT_MODEL, flat)
    step = DEFAULT_MODEL.step_latency_s * (cfg["local_batch"] / cfg["local_batch"])
    assert (a["t_compute"][0] - step) == pytest.approx(
        (b["t_compute"][0] - step) * ds.expert_compute_factor, rel=1e-9)


def test_a_first_principles_note_states_the_expert_rate():
    from gpurank.engine.sources.model.evaluation import first_principles_note

    model = DEFAULT_MODEL
    note = first_principles_note(model, workload("deepseek_v3_671b"))
    assert "routed experts' FLOPs (43% of them) at 34% of the dense rate (experts 2,050 wide)" \
        in note and "x1.84 as long" in note
    assert "routed experts" not in first_principles_note(model, workload("llama31_70b"))
