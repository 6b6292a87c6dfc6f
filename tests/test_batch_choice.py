"""The batch a submitter would pick: the fastest to train of the batches a configuration can
run within the reference convergence points and memory (tests/test_batch_choice.py)."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from gpurank.engine.errors import UsageError
from gpurank.engine.sources.model.batch_choice import batch_candidates
from gpurank.engine.sources.model.calibrate import predict
from gpurank.engine.sources.model.workloads import workload
from gpurank.engine.sources.sweep.simulate import simulate

GB300 = "NVIDIA Blackwell Ultra GPU (GB300)"
#: 72 GB300 (18 nodes of 4, one NVL72 rack) on Llama 3.1 8B as the v5.1 submissions ran it
#: (NVIDIA Theia and Lambda, ../shared/data/mlperf_training summary.csv): global batch 36,
#: 12.98 and 14.25 minutes.
_RACK = dict(benchmark="llama31_8b", accelerator=GB300, n_accelerators=72, n_nodes=18,
             accelerators_per_node=4, host_cpu="Neoverse-V2", cpu_core_count=72,
             interconnect="NVLINK Gen5 1800 GB/s + NVSWITCH Gen5",
             network="4x ConnectX-8 IB XDR 800 Gb/s")
_SUBMITTED_BATCH, _SUBMITTED_MIN = 36, (12.98, 14.25)


def _chosen(note: str) -> int:
    return int(re.search(r"global_batch_size chosen: ([\d,]+)", note).group(1).replace(",", ""))


def test_gb300_rack_picks_what_submitters_ran():
    p = predict(pd.DataFrame([_RACK]))
    note = p["prediction_note"].iloc[0]
    chosen = _chosen(note)
    assert _SUBMITTED_BATCH / 2 <= chosen <= 2 * _SUBMITTED_BATCH, note
    t = p["predicted_time_to_train_min"].iloc[0]
    assert _SUBMITTED_MIN[0] * 0.8 <= t <= _SUBMITTED_MIN[1] * 1.2, (t, note)


@pytest.mark.parametrize("bench, n, submitted", [
    # NVIDIA's v5.1 GB300 submissions (theia_ngpu8/72/512, summary.csv): global batch 16, 36,
    # 64 on Llama 3.1 8B and 1,152 on Llama 3.1 405B
    ("llama31_8b", 8, 16), ("llama31_8b", 72, 36), ("llama31_8b", 512, 64),
    ("llama31_405b", 512, 1152),
])
def test_gb300_picks_within_2x_of_the_submitted_batch(bench, n, submitted):
    row = dict(_RACK, benchmark=bench, n_accelerators=n, n_nodes=n // 4)
    note = predict(pd.DataFrame([row]))["prediction_note"].iloc[0]
    assert submitted / 2 <= _chosen(note) <= 2 * submitted, note


@pytest.mark.parametrize("row", [
    _RACK,
    dict(_RACK, n_accelerators=8, n_nodes=2),
    dict(benchmark="bert", accelerator="NVIDIA H100-SXM5-80GB", n_accelerators=16, n_nodes=2,
         accelerators_per_node=8),
    dict(benchmark="llama2_70b_lora", accelerator="NVIDIA H100-SXM5-80GB", n_accelerators=8,
         n_nodes=1, accelerators_per_node=8),
])
def test_chosen_batch_is_the_fastest_of_its_candidates(row):
    """Brute force: predict every candidate batch given, the chosen one is the fastest (the
    same prediction as when it is given) and the note's range spans the candidates."""
    p = predict(pd.DataFrame([row]))
    note = p["prediction_note"].iloc[0]
    chosen = _chosen(note)
    lo, hi = (int(x.replace(",", "")) for x in
              re.search(r"fastest to train of ([\d,]+)-([\d,]+)", note).groups())
    wl = workload(row["benchmark"])
    mem = {"NVIDIA H100-SXM5-80GB": 80.0, GB300: 288.0}[row["accelerator"]]
    cand = batch_candidates(wl, [row["n_accelerators"]], [mem])
    gbs = sorted(set(cand.global_[cand.ok].astype(int)))
    assert chosen in gbs and lo == gbs[0] and hi == gbs[-1]
    given = predict(pd.DataFrame([dict(row, global_batch_size=g) for g in gbs]))
    t = given["predicted_time_to_train_min"].to_numpy()
    assert t.min() == pytest.approx(p["predicted_time_to_train_min"].iloc[0], rel=1e-12)
    assert t[gbs.index(chosen)] == t.min()


def test_candidates_are_whole_replicas_within_points_and_memory():
    wl = workload("llama31_8b")
    n = np.array([0, 1, 8, 72, 512, 1000])
    cand = batch_candidates(wl, n, np.array([80.0, 288.0, 192.0, 288.0, 288.0, np.nan]))
    top = max(b for b, _ in wl.samples_curve)
    assert not cand.ok[0].any()  # no accelerators: nothing
    for i in range(1, len(n)):
        ok = cand.ok[i]
        assert ok.any()
        gb, local, shards = cand.global_[i, ok], cand.local[i, ok], cand.shards[i, ok]
        replicas = n[i] / shards
        assert np.all(replicas == np.round(replicas))  # whole replicas
        assert np.all(local >= 1) and np.all(gb == local * replicas)  # >= 1 sample each
        assert np.all(gb <= top) and np.all(shards <= wl.sample_split)
        # a pass fits memory; a batch beyond it accumulates micro-batches
        micro = cand.micro[i, ok]
        assert np.all((micro >= 1) & (micro <= local))


def test_no_candidate_within_points_falls_back_and_says_so():
    # more H100 than BERT's largest reference batch: one sample per accelerator is already
    # beyond the points, so the least extrapolated batch is taken, and named
    wl = workload("bert")
    top = max(b for b, _ in (wl.samples_curve or wl.epochs_curve))
    n = int(2 ** np.ceil(np.log2(top)) * 2)
    row = dict(benchmark="bert", accelerator="NVIDIA H100-SXM5-80GB", n_accelerators=n,
               n_nodes=n // 8, accelerators_per_node=8)
    note = predict(pd.DataFrame([row]))["prediction_note"].iloc[0]
    assert "global_batch_size chosen:" in note
    assert "the smallest that fits memory" in note
    assert _chosen(note) == n  # one sample per accelerator: the smallest it can run


def test_sweep_fastest_batch_is_the_fastest_of_the_drawn_ones():
    """Brute force on the sweep: the same seed draws the same rows (accelerator, layout,
    host, network, noise) whatever the batch, so each row of a ``batch="fastest"`` sweep
    trains no slower than the same row at any one local batch, and equals one of them."""
    # 64 GPUs: every candidate per GPU fits memory (no accumulation, which a drawn sweep
    # would exclude instead)
    kw = dict(seed=5, accelerators=["H100-SXM5-80GB"], counts=[64])
    fast = simulate(300, batch="fastest", **kw)
    assert fast["prediction_note"].astype(str).str.startswith("global_batch_size chosen").all()
    cand = batch_candidates(workload("resnet"), [64], [80.0])
    assert (cand.micro == cand.local)[cand.ok].all()
    locals_ = sorted(set(cand.local[cand.ok].astype(int)))  # powers of two, reference points
    assert len(locals_) > 5
    times = np.column_stack([simulate(300, local_batch=[b], **kw)["time_to_train_min"]
                             for b in locals_])
    best = times.min(axis=1)
    np.testing.assert_allclose(fast["time_to_train_min"], best, rtol=1e-12)
    # the chosen batch is one of those of least time (ties: equal samples and rate)
    chosen = [locals_.index(b) for b in fast["local_batch_size"]]
    assert (times[np.arange(len(times)), chosen] == best).all()


def test_sweep_fastest_refuses_a_local_batch():
    with pytest.raises(UsageError, match="local_batch"):
        simulate(100, local_batch=[8], batch="fastest")


def test_a_split_sample_gives_each_accelerator_its_share_of_the_pass():
    """Splitting each sample over s accelerators beyond the workload's own model parallelism
    runs the compute at the rate of a pass of 1/s the work; the workload's own layout, given
    or not, is the same bit for bit."""
    from gpurank.engine.sources.model.perfmodel import DEFAULT_MODEL, evaluate

    wl = workload("llama31_8b")
    model = replace(DEFAULT_MODEL, step_latency_s=0.0)
    cfg = {"peak_tflops": 989.0, "compute_efficiency": 0.5, "mem_bw_tbps": 3.35,
           "n_accelerators": np.array([8.0]), "accelerators_per_node": 8.0, "n_nodes": 1.0,
           "local_batch": 1.0, "intra_GBps": 450.0, "inter_GBps": 50.0,
           "cpu_cores_per_accelerator": np.nan, "cpu_decode_factor": 1.0, "dali": False}
    own = evaluate(cfg, model, wl)
    given = evaluate(cfg | {"model_parallel": np.array([1.0])}, model, wl)
    for key in own:
        assert own[key].tobytes() == given[key].tobytes(), key
    split = evaluate(cfg | {"model_parallel": np.array([4.0])}, model, wl)
    bh = model.batch_half
    # per accelerator a quarter of the FLOPs, at the rate of a quarter-sample pass
    expect = own["t_compute"][0] / 4 * ((0.25 + bh) / 0.25) / ((1.0 + bh) / 1.0)
    assert split["t_compute"][0] == pytest.approx(expect, rel=1e-12)


def test_simulate_cli_batch_fastest(tmp_path, capsys):
    import json

    import pyarrow.parquet as pq

    from gpurank.engine.cli import main

    out = tmp_path / "s.parquet"
    assert main(["simulate", "--n", "800", "--seed", "2", "--workload", "llama31_8b",
                 "--batch", "fastest", "-o", str(out)]) == 0
    meta = json.loads(pq.read_metadata(out).metadata[b"gpurank.simulate"])
    assert meta["batch"] == "fastest"
    df = pd.read_parquet(out)
    assert df["prediction_note"].astype(str).str.startswith("global_batch_size chosen").all()
    same = simulate(800, seed=2, workload=workload("llama31_8b"), batch="fastest")
    assert np.array_equal(df["time_to_train_min"].to_numpy(), same["time_to_train_min"].to_numpy())
    capsys.readouterr()
    assert main(["simulate", "--n", "10", "--batch", "slowest",
                 "-o", str(tmp_path / "x.parquet")]) != 0
    assert "--batch: invalid choice: 'slowest'" in capsys.readouterr().err


def test_the_choice_is_the_same_on_a_strict_device():
    from gpurank.engine.backend.strict_device import xp
    from gpurank.engine.sources.model.batch_choice import fastest_batches
    from gpurank.engine.sources.model.perfmodel import DEFAULT_MODEL

    wl = workload("llama31_8b")
    cfg = {"peak_tflops": 2500.0, "compute_efficiency": 0.5, "mem_bw_tbps": 8.0,
           "n_accelerators": np.array([72.0, 8.0, 512.0]),
           "accelerators_per_node": np.array([4.0, 4.0, 4.0]),
           "n_nodes": np.array([18.0, 2.0, 128.0]), "intra_GBps": 900.0, "inter_GBps": 400.0,
           "cpu_cores_per_accelerator": np.nan, "cpu_decode_factor": 1.0, "dali": False}
    cand = batch_candidates(wl, cfg["n_accelerators"], [288.0, 288.0, 288.0])
    host = fastest_batches(cfg, DEFAULT_MODEL, wl, cand)
    dev = fastest_batches(cfg, DEFAULT_MODEL, wl, cand, xp=xp)
    for a, b in zip((host.global_, host.local, host.shards), (dev.global_, dev.local, dev.shards)):
        assert a.tobytes() == b.tobytes()
