"""The simulator: determinism, shape, model sanity and every bad input (tests/test_simulate.py)."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from gpurank.engine.sources.facts.catalog import accelerator_catalog, price_catalog
from gpurank.engine.errors import DataError, UsageError
from gpurank.engine.sources.model.perfmodel import DEFAULT_MODEL, evaluate, resnet50
from gpurank.engine.sources.sweep.simulate import (
    COLUMNS,
    LOGICAL_CHUNK,
    simulate,
    simulate_to_parquet,
)

STRING_COLUMNS = ["accelerator", "host_cpu", "interconnect", "network", "framework", "provider"]
INT_COLUMNS = ["n_accelerators", "n_nodes", "accelerators_per_node", "global_batch_size"]
FLOAT_COLUMNS = ["cpu_cores_per_accelerator", "epochs", "time_to_train_min", "throughput",
                 "price_per_accelerator_hour", "power_w", "utilization", "cost_usd", "energy_kwh"]


@pytest.fixture(scope="module")
def small():
    return simulate(3000, seed=7)


def assert_same(a: pd.DataFrame, b: pd.DataFrame):
    """Exact equality, bit for bit (fast on categoricals, unlike assert_frame_equal)."""
    assert list(a.columns) == list(b.columns) and len(a) == len(b)
    for c in a.columns:
        x, y = a[c], b[c]
        assert x.dtype == y.dtype, c
        if isinstance(x.dtype, pd.CategoricalDtype):
            assert list(x.cat.categories) == list(y.cat.categories), c
            assert np.array_equal(x.cat.codes.to_numpy(), y.cat.codes.to_numpy()), c
        else:
            xa, ya = x.to_numpy(), y.to_numpy()
            assert xa.tobytes() == ya.tobytes(), c


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---------------------------------------------------------------------------- shape
def test_columns_and_dtypes(small):
    assert list(small.columns) == list(COLUMNS)
    for c in STRING_COLUMNS:
        assert isinstance(small[c].dtype, pd.CategoricalDtype), c
    for c in INT_COLUMNS:
        assert pd.api.types.is_integer_dtype(small[c]), c
    for c in FLOAT_COLUMNS:
        assert small[c].dtype == np.float64, c
    assert len(small) == 3000 and small.attrs["excluded"] == 0
    assert (small["n_accelerators"] == small["n_nodes"] * small["accelerators_per_node"]).all()
    assert small[FLOAT_COLUMNS].notna().all().all()
    assert (small["utilization"] > 0).all() and (small["utilization"] <= 1).all()


def test_grid_respects_chassis_limits_and_memory(small):
    acc = accelerator_catalog().set_index("accelerator_id")
    lim = small["accelerator_id"].astype(str).map(acc["max_accels_per_node"])
    assert (small["accelerators_per_node"] <= lim).all()
    assert small["n_accelerators"].between(1, 4096).all()
    mem = small["accelerator_id"].astype(str).map(acc["mem_gb"]).to_numpy(float)
    assert (small["local_batch_size"] <= resnet50().max_local_batch(mem)).all()
    single = small["n_nodes"] == 1
    assert (small.loc[single, "network"] == "none").all()
    assert (small.loc[~single, "network"] != "none").all()


# ---------------------------------------------------------------------------- determinism
def test_same_seed_same_rows_and_different_seed_differs():
    a, b = simulate(2000, seed=11), simulate(2000, seed=11)
    assert_same(a, b)
    c = simulate(2000, seed=12)
    assert not a["throughput"].equals(c["throughput"])


def test_prefix_property_across_chunk_boundary():
    n = LOGICAL_CHUNK + 300
    big = simulate(n, seed=5)
    head = simulate(1000, seed=5)
    assert_same(big.iloc[:1000].reset_index(drop=True), head)


def test_parquet_chunk_size_independent_and_same_bytes(tmp_path):
    n = LOGICAL_CHUNK + 500
    ref = simulate(n, seed=3)
    p1, p2, p3 = tmp_path / "a.parquet", tmp_path / "b.parquet", tmp_path / "c.parquet"
    simulate_to_parquet(p1, n, seed=3, row_group_rows=7_000)
    simulate_to_parquet(p2, n, seed=3, row_group_rows=7_000)
    info = simulate_to_parquet(p3, n, seed=3, row_group_rows=1_000_000)
    assert _sha(p1) == _sha(p2)
    assert pq.ParquetFile(p1).num_row_groups == -(-n // 7_000)
    assert info["rows"] == n and info["row_groups"] == 1
    for p in (p1, p3):
        back = pd.read_parquet(p)
        assert_same(back, ref)
    meta = pq.ParquetFile(p1).metadata.metadata
    assert b"gpurank.simulate" in meta
    assert not [x for x in tmp_path.iterdir() if x.name.startswith(".")]  # no temp left


def test_partitioned_dataset(tmp_path):
    out = tmp_path / "sweep"
    info = simulate_to_parquet(out, 2500, seed=1, row_group_rows=1000, partitioned=True)
    parts = sorted(out.glob("part-*.parquet"))
    assert len(parts) == 3 and info["rows"] == 2500
    back = pd.read_parquet(out)
    assert_same(back.reset_index(drop=True), simulate(2500, seed=1))


# ---------------------------------------------------------------------------- model sanity
def _cfg(**kw):
    base = dict(peak_tflops=989.0, compute_efficiency=0.3, mem_bw_tbps=3.35, n_accelerators=8,
                accelerators_per_node=8, n_nodes=1,
                local_batch=256, intra_GBps=450.0, inter_GBps=400.0,
                cpu_cores_per_accelerator=14.0, cpu_decode_factor=1.0, dali=True)
    base.update(kw)
    return {k: np.asarray(v) for k, v in base.items()}


@pytest.mark.parametrize("dali", [False, True])
def test_more_cpu_cores_never_lower_throughput(dali):
    cores = np.array([0.5, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64, 128], dtype=float)
    out = evaluate(_cfg(cpu_cores_per_accelerator=cores, dali=dali), DEFAULT_MODEL, resnet50())
    assert (np.diff(out["throughput"]) >= 0).all()


def test_starvation_visible():
    # an H100 trains ResNet-50 at ~7,000 images/s: 2 cores per GPU starve it, 64 feed it
    out = evaluate(_cfg(cpu_cores_per_accelerator=np.array([2.0, 64.0]), dali=False),
                   DEFAULT_MODEL, resnet50())
    assert out["bottleneck"][0] == 2 and out["utilization"][0] < 0.3
    assert out["utilization"][1] > 0.9
    df = simulate(20_000, seed=0)
    low = df[(df["cpu_cores_per_accelerator"] <= 4) & (df["input_pipeline"] == "cpu")]
    high = df[(df["cpu_cores_per_accelerator"] >= 32) & (df["input_pipeline"] == "cpu")]
    assert low["utilization"].median() < 0.5 < high["utilization"].median()


@pytest.mark.parametrize("net", [50.0, 200.0, 400.0, 800.0])
@pytest.mark.parametrize("batch", [32, 256])
def test_more_accelerators_never_lower_total_throughput(net, batch):
    acc = accelerator_catalog()
    acc = acc[acc["mem_bw_tbps"] > 0]
    peak = acc["bf16_dense_tflops"].fillna(acc["fp16_dense_tflops"]).to_numpy(float)
    counts = np.array([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096], dtype=float)
    for p, bw in zip(peak, acc["mem_bw_tbps"].to_numpy(float)):
        g = np.minimum(counts, 8)
        out = evaluate(_cfg(peak_tflops=p, mem_bw_tbps=bw, n_accelerators=counts, accelerators_per_node=g,
                            n_nodes=counts / g, local_batch=batch, inter_GBps=net,
                            cpu_cores_per_accelerator=np.nan),
                       DEFAULT_MODEL, resnet50())
        assert (np.diff(out["throughput"]) >= 0).all(), p


def test_scaling_is_sublinear_and_big_systems_less_efficient():
    df = simulate(30_000, seed=0)
    per = df["throughput"] / df["n_accelerators"]
    small = per[df["n_accelerators"].between(4, 16)].median()
    huge = per[df["n_accelerators"] >= 1024].median()
    assert huge < small
    assert df.loc[df["n_accelerators"] >= 1024, "time_to_train_min"].median() < \
        df.loc[df["n_accelerators"].between(4, 16), "time_to_train_min"].median()


def test_epochs_curve_interpolates_reference_table():
    wl = resnet50()
    pts = np.array([b for b, _ in wl.epochs_curve])
    assert np.allclose(wl.epochs(pts), [e for _, e in wl.epochs_curve])
    assert wl.epochs(np.array([256.0]))[0] == wl.epochs_curve[0][1]
    grid = np.geomspace(256, 131072, 60)
    assert (np.diff(wl.epochs(grid)) >= 0).all()


# ---------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("n", [0, -5, 2.5, True])
def test_bad_n(n):
    with pytest.raises(UsageError, match=r"^n must be an integer >= 1; got .*$"):
        simulate(n)


@pytest.mark.parametrize("seed", [-1, 2.0, "3", True])
def test_bad_seed(seed):
    with pytest.raises(UsageError, match=r"^seed must be an integer >= 0; got .*$"):
        simulate(10, seed=seed)


def test_any_nonnegative_seed_numpy_accepts():
    big = simulate(100, seed=2**200)
    assert len(big) == 100 and not big["throughput"].equals(simulate(100, seed=0)["throughput"])
    assert_same(simulate(100, seed=np.uint64(2**63)), simulate(100, seed=2**63))


def test_cli_seed_message_names_the_flag(tmp_path, capsys):
    from gpurank.engine.cli import main

    assert main(["simulate", "--n", "10", "--seed", "-1", "-o", str(tmp_path / "s.parquet")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "gpurank: error: --seed must be an integer >= 0; got -1"
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------- size up front
def test_in_memory_size_is_checked_before_allocating(monkeypatch):
    import gpurank.engine.sources.sweep.writer as writer

    monkeypatch.setattr(writer, "_available_memory", lambda: 1_000_000)
    with pytest.raises(UsageError, match=r"^n=10,000 would need about 3.2 MB of memory \(320 bytes "
                                        r"per row\) but 1.0 MB is available; write Parquet instead "
                                        r"\(it streams with bounded memory\), simulate fewer rows, "
                                        r"or pass check_size=False to try anyway$"):
        simulate(10_000)
    assert len(simulate(10_000, check_size=False)) == 10_000
    with pytest.raises(UsageError, match=r"^n=1,000,000,000,000 would need about 320.0 TB"):
        writer.check_memory(10**12)


def test_parquet_size_is_checked_against_free_disk(tmp_path, monkeypatch):
    import gpurank.engine.sources.sweep.writer as writer

    monkeypatch.setattr(writer, "_free_disk", lambda target: (50_000, tmp_path))
    with pytest.raises(UsageError, match=rf"^n=1,000 would need about 100.0 KB on disk for the parquet "
                                        rf"output \(100 bytes per row\) but '{tmp_path}' has 50.0 KB free"):
        simulate_to_parquet(tmp_path / "s.parquet", 1_000)
    assert list(tmp_path.iterdir()) == []
    simulate_to_parquet(tmp_path / "s.parquet", 1_000, check_size=False)
    assert len(pd.read_parquet(tmp_path / "s.parquet")) == 1_000


def test_cli_huge_n_is_one_line_and_writes_nothing(tmp_path):
    import subprocess
    import sys

    for out in ("s.parquet", "s.csv"):
        proc = subprocess.run([sys.executable, "-m", "gpurank.engine", "simulate", "--n", "1e12",
                               "-o", str(tmp_path / out)], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("gpurank: error: --n=1,000,000,000,000 would need")
        assert "--no-size-check" in lines[0]
    assert list(tmp_path.iterdir()) == []


def test_sigterm_during_simulate_leaves_no_staging(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    target = tmp_path / "sweep.parquet"
    proc = subprocess.Popen([sys.executable, "-m", "gpurank.engine", "simulate", "--n", "50000000",
                             "--row-group-rows", "65536", "-o", str(target)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not any(
                p.name.startswith(".sweep.parquet.gpurank-staging") and p.stat().st_size > 0
                for p in tmp_path.iterdir()):
            time.sleep(0.05)
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, proc.stderr.read()
    assert list(tmp_path.iterdir()) == []


def test_unknown_accelerator():
    with pytest.raises(UsageError, match=r"^accelerators: unknown accelerator 'H900'; use an accelerator_id"):
        simulate(10, accelerators=["H900"])


def test_unknown_provider():
    with pytest.raises(UsageError, match=r"^providers: unknown provider 'Nope'; known providers are: AWS, "):
        simulate(10, providers=["Nope"])


def test_accelerator_provider_without_overlap():
    with pytest.raises(UsageError, match=r"no accelerator has a price from these providers"):
        simulate(10, accelerators=["nvidia_l4"], providers=["AWS"])


def test_price_table_missing_column(tmp_path):
    bad = price_catalog(include_typical=False).drop(columns=["usd_per_accel_hr"])
    with pytest.raises(DataError, match=r"^prices table \(DataFrame\) is missing column 'usd_per_accel_hr'; "
                                        r"required columns are: provider, accelerator_id, usd_per_accel_hr$"):
        simulate(10, price_table=bad)
    path = tmp_path / "p.csv"
    bad.to_csv(path, index=False)
    with pytest.raises(DataError, match=r"is missing column 'usd_per_accel_hr'"):
        simulate(10, price_table=path)


def test_price_not_positive():
    bad = price_catalog(include_typical=False)
    bad.loc[0, "usd_per_accel_hr"] = -1
    with pytest.raises(DataError, match=r"^prices table has usd_per_accel_hr=.*; prices must be numbers > 0$"):
        simulate(10, price_table=bad)


@pytest.mark.parametrize("name,value", [("counts", [0]), ("nodes", [-1]), ("local_batch", ["x"])])
def test_bad_lists(name, value):
    with pytest.raises(UsageError, match=rf"^{name} must be None or an integer in \[1, \d+\] or a "
                                         rf"non-empty sequence of values, each an integer in "
                                         rf"\[1, \d+\]; got .*$"):
        simulate(10, **{name: value})


def test_impossible_configs_excluded_and_counted():
    df = simulate(4000, seed=2, accelerators=["nvidia_h100_sxm5"], counts=[8, 16], nodes=[1])
    ex = df.attrs["excluded_by_reason"]
    assert ex["accelerators_per_node_above_chassis_limit"] > 0
    assert df.attrs["excluded"] == 4000 - len(df)
    assert (df["accelerators_per_node"] <= 8).all()
    df = simulate(4000, seed=2, accelerators=["nvidia_l4"], local_batch=[64, 5000])
    assert df.attrs["excluded_by_reason"]["batch_per_accelerator_beyond_memory"] > 0
    assert (df["local_batch_size"] == 64).all()
    df = simulate(1000, seed=2, counts=[12, 16], nodes=[8])
    assert df.attrs["excluded_by_reason"]["nodes_do_not_divide_accelerators"] == 1000 - len(df) > 0
    assert (df["n_accelerators"] == 16).all()


def test_all_impossible_is_an_error():
    with pytest.raises(UsageError, match=r"^all 50 sampled configurations are impossible \(most often: "
                                        r"accelerators per node above chassis limit\)"):
        simulate(50, accelerators=["nvidia_h100_sxm5"], counts=[64], nodes=[1])


def test_bad_row_group_rows(tmp_path):
    with pytest.raises(UsageError, match=r"^row_group_rows must be an integer >= 1; got 0$"):
        simulate_to_parquet(tmp_path / "x.parquet", 10, row_group_rows=0)


def test_catalog_keeps_shared_columns():
    acc = accelerator_catalog()
    for c in ["accelerator_id", "model", "variant", "release_year", "bf16_dense_tflops",
              "fp16_dense_tflops", "mem_gb", "mem_bw_tbps", "tdp_w", "price_typ_usd_gpu_hr"]:
        assert c in acc.columns
    assert acc["accelerator_id"].is_unique


def test_run_simulate_cli_parquet_and_csv(tmp_path):
    from gpurank.engine.sources.model.perfmodel import CalibratedModel
    from gpurank.engine.commands import run_simulate_cli

    model = tmp_path / "m.json"
    CalibratedModel(compute_efficiency_default=0.3).to_json(model)
    info = run_simulate_cli(tmp_path / "s.parquet", n=500, seed=1, model_path=model)
    assert info["rows"] == 500 and len(pd.read_parquet(tmp_path / "s.parquet")) == 500
    info = run_simulate_cli(tmp_path / "s.csv", n=200, seed=1, accelerators=["H100"])
    back = pd.read_csv(tmp_path / "s.csv")
    assert len(back) == 200 and set(back["accelerator"]).issubset(
        {"NVIDIA H100 SXM5 80GB", "NVIDIA H100 PCIe 80GB", "NVIDIA H100 NVL 94GB"})


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="no FIFOs here")
def test_catalog_files_that_are_not_regular_or_not_csv(tmp_path):
    import os

    fifo = tmp_path / "prices.csv"
    os.mkfifo(fifo)
    with pytest.raises(DataError, match=r"^prices table '.*prices.csv' is a FIFO, not a regular file$"):
        simulate(10, price_table=fifo)
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b'a,b\n\x1b[2J\x00,"\n1,2,3\n')
    with pytest.raises(DataError) as err:
        simulate(10, price_table=bad)
    assert "\n" not in str(err.value) and "\x1b" not in str(err.value)


def test_an_accelerator_with_its_own_host_cpu_is_swept_with_it():
    prices = pd.DataFrame({"provider": ["Lab", "Lab", "Lab"],
                           "accelerator_id": ["nvidia_vr200", "nvidia_gb200", "nvidia_h100_sxm5"],
                           "usd_per_accel_hr": [9.0, 6.0, 3.0]})
    t = simulate(2000, seed=5, price_table=prices,
                 accelerators=["nvidia_vr200", "nvidia_gb200", "nvidia_h100_sxm5"])
    host = t["host_cpu"].astype(str)
    acc = t["accelerator_id"].astype(str)
    # VR200 always with its Vera (88 cores a socket, one per two GPUs), GB200 with its Grace,
    # and neither Arm host is ever drawn for an x86 server
    assert set(host[acc == "nvidia_vr200"]) == {"NVIDIA Vera"}
    assert set(t.loc[acc == "nvidia_vr200", "cpu_cores_per_accelerator"]) == {44.0}
    assert set(host[acc == "nvidia_gb200"]) == {"NVIDIA Grace"}
    assert set(t.loc[acc == "nvidia_gb200", "cpu_cores_per_accelerator"]) == {36.0}
    others = set(host[acc == "nvidia_h100_sxm5"])
    assert len(others) > 3 and not others & {"NVIDIA Vera", "NVIDIA Grace"}
