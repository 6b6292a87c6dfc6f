"""read_mlperf / run_mlperf_cli on the fixture trees: scores, columns, warnings, strict, dedupe."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from gpurank.engine.errors import DataError, UsageError
from gpurank.engine.commands import run_mlperf_cli
from gpurank.engine.sources.mlperf.reader import MLPERF_COLUMNS, MlperfReadResult, ReadWarning, read_mlperf, score_runs

FIX = Path(__file__).parent / "fixtures" / "mlperf"
REPOS, BAD, DUPS = FIX / "repos", FIX / "bad", FIX / "dups"


@pytest.fixture(scope="module")
def repos():
    return read_mlperf(REPOS)


def row(table, system):
    r = table[table["system"] == system]
    assert len(r) == 1, system
    return r.iloc[0]


def test_result_type_and_columns(repos):
    assert isinstance(repos, MlperfReadResult)
    assert repos.warnings == ()
    t = repos.table
    assert list(t.columns) == MLPERF_COLUMNS
    required = ["accelerator", "n_accelerators", "n_nodes", "accelerators_per_node", "host_cpu",
                "cpu_cores_per_accelerator", "interconnect", "network", "framework", "global_batch_size",
                "epochs", "time_to_train_min", "throughput", "price_per_accelerator_hour", "power_w",
                "round", "submitter", "system", "division", "availability", "n_runs", "n_runs_valid",
                "accelerator_raw", "accelerator_id", "accelerator_type", "release_year", "peak_tflops",
                "mem_bw_tbps", "tdp_w", "throughput_train", "score_reason", "is_duplicate", "duplicate_of"]  # fmt: skip
    assert set(required) <= set(t.columns)
    assert str(t["global_batch_size"].dtype) == "Int64"
    assert str(t["n_accelerators"].dtype) == "Int64"
    for c in ("time_to_train_min", "throughput", "epochs", "cpu_cores_per_accelerator", "power_w"):
        assert t[c].dtype == np.float64, c
    assert t["is_duplicate"].dtype == bool
    # rounds are sorted numerically, and the BERT-only system is not a ResNet row
    assert list(t["round"]) == ["v0.5", "v0.6", "v0.6", "v4.0", "v4.0"]
    assert "bert_only" not in set(t["system"])


def test_v40_reads_unchanged(repos):
    r = row(repos.table, "dgxh100_ngc24.04_mxnet")
    assert r["framework"] == "MXNet NVIDIA Release 24.04"  # from framework_name
    assert r["time_to_train_min"] == pytest.approx(12.0 * 1.5)  # mean(11,12,13) x scaling.json
    assert r["scaling_factor"] == 1.5
    assert r["accelerator"] == "H100-SXM5-80GB" and r["accelerator_id"] == "nvidia_h100_sxm5"
    assert r["accelerator_type"] == "gpu"
    assert r["cpu_cores_per_accelerator"] == pytest.approx(2 * 56 / 8)
    assert r["global_batch_size"] == 3200 and r["epochs"] == 8
    assert r["n_runs"] == 5 and r["n_runs_valid"] == 5 and r["score_reason"] == ""
    assert r["price_per_accelerator_hour"] > 0 and r["power_w"] == r["tdp_w"] == 700
    assert r["peak_tflops"] == pytest.approx(989) and r["release_year"] == 2022


def test_one_failed_run_drops_only_fastest(repos):
    r = row(repos.table, "rtx4090x2")
    assert r["n_runs_valid"] == 4
    assert r["time_to_train_min"] == pytest.approx((101 + 102 + 104) / 3)
    # a known product without performance facts: its id, no peak, no price
    assert r["accelerator"] == "RTX 4090" and r["accelerator_id"] == "nvidia_rtx_4090"
    assert np.isnan(r["price_per_accelerator_hour"]) and np.isnan(r["peak_tflops"])
    assert r["epochs"] == pytest.approx(40)


def test_old_rounds(repos):
    t = repos.table
    tpu = row(t, "cloud_v3.8/resnet-tpuv3-8/tpu")
    assert tpu["submitter"] == "google" and tpu["accelerator_type"] == "tpu"
    assert tpu["n_accelerators"] == 4 and tpu["accelerator"] == "TPU v3"
    assert tpu["time_to_train_min"] == pytest.approx((183 + 184 + 185) / 3)  # run 4 missed the target
    assert tpu["epochs"] == 62 and pd.isna(tpu["global_batch_size"])
    nv = row(t, "dgx1_ngc19.05_mxnet")
    assert nv["system_desc_format"] == "mll_text" and nv["log_format"] == "mll"
    assert nv["time_to_train_min"] == pytest.approx(115.0)
    assert nv["cpu_cores_per_accelerator"] == pytest.approx(40 / 8)
    ali = row(t, "sinian")
    assert ali["log_format"] == "dated" and ali["system_desc_format"] == "entry"
    assert ali["time_to_train_min"] == pytest.approx((1460 + 1457 + 1463) / 3 / 60)
    assert ali["n_accelerators"] == 64 and ali["n_nodes"] == 16


def test_throughput_is_end_to_end(repos):
    r = row(repos.table, "dgxh100_ngc24.04_mxnet")
    rates = sorted(8 * 1281167 / (m * 60) for m in (10, 11, 12, 13, 14))
    assert r["throughput"] == pytest.approx(rates[2])
    assert r["throughput_train"] > r["throughput"]


def test_read_several_paths_and_single_round(repos):
    one = read_mlperf([REPOS / "v0.6", REPOS / "training_results_v4.0"])
    assert len(one.table) == 4
    sub = read_mlperf(REPOS / "v0.6" / "NVIDIA")  # a single submitter folder
    assert list(sub.table["system"]) == ["dgx1_ngc19.05_mxnet"]


@pytest.mark.parametrize(
    "minutes, n_runs, expected",
    [
        ([1, 2, 3, 4, 5], 5, 3.0),
        ([5, 1, 2, 3], 5, 10 / 3),  # one failed: drop fastest only
        ([1, 2, 3], 5, None),  # two failed
        ([1], 1, None),
        ([], 0, None),
    ],
)
def test_score_runs(minutes, n_runs, expected):
    score, why = score_runs(minutes, n_runs, 5)
    if expected is None:
        assert score is None and why
    else:
        assert score == pytest.approx(expected) and why == ""


# --- bad data: each defect pinned (file and reason), rows never dropped


@pytest.fixture(scope="module")
def bad():
    return read_mlperf(BAD)


def warning_for(result, path_part):
    hits = [w for w in result.warnings if path_part in w.path]
    assert hits, f"no warning for {path_part}: {result.warnings}"
    return hits


def test_bad_rows_all_kept(bad):
    assert sorted(bad.table["system"]) == ["badjson", "nodesc", "truncated", "two_failed", "weird_accel"]
    assert all(isinstance(w, ReadWarning) for w in bad.warnings)


def test_malformed_system_json(bad):
    (w,) = warning_for(bad, "systems/badjson.json")
    assert w.reason.startswith("unreadable system description: malformed JSON")
    r = row(bad.table, "badjson")
    assert r["accelerator"] == "" and pd.isna(r["n_accelerators"])
    assert r["time_to_train_min"] == pytest.approx(22.0)  # the logs still score


def test_missing_system_file(bad):
    (w,) = warning_for(bad, "results/nodesc")
    assert "missing system description systems/nodesc.json" in w.reason


def test_log_without_run_stop_and_truncated_line(bad):
    (w0,) = warning_for(bad, "truncated/resnet/result_0.txt")
    assert w0.reason == "no run_stop (log incomplete or run killed)"
    (w1,) = warning_for(bad, "truncated/resnet/result_1.txt")
    assert w1.reason.startswith("line 14: truncated or malformed log line")
    r = row(bad.table, "truncated")
    assert r["n_runs"] == 5 and r["n_runs_valid"] == 4
    assert r["time_to_train_min"] == pytest.approx((32 + 33 + 34) / 3)


def test_unknown_accelerator(bad):
    (w,) = warning_for(bad, "systems/weird_accel.json")
    assert "unknown accelerator name 'FooChip X9000'" in w.reason
    r = row(bad.table, "weird_accel")
    assert r["accelerator"] == "FooChip X9000" and r["accelerator_type"] == "other" and r["accelerator_id"] == ""


def test_no_score_keeps_row_with_reason(bad):
    r = row(bad.table, "two_failed")
    assert np.isnan(r["time_to_train_min"])
    assert r["score_reason"] == "2 of 5 runs failed (at most 1 allowed)"
    assert r["n_runs_valid"] == 3 and r["throughput"] > 0


def test_strict_raises_on_first_warning():
    with pytest.raises(DataError, match=r"badjson\.json: unreadable system description: malformed JSON"):
        read_mlperf(BAD, strict=True)
    read_mlperf(REPOS, strict=True)  # clean data passes


def test_usage_errors(tmp_path):
    with pytest.raises(UsageError, match="does not exist"):
        read_mlperf(tmp_path / "nope")
    for bad in ("", "../resnet", "res net", 3):
        with pytest.raises(UsageError, match=r"^benchmark must be a benchmark folder name such as "
                                             r"resnet or bert .*; got .*$"):
            read_mlperf(REPOS, benchmark=bad)
    with pytest.raises(UsageError, match="at least one PATH"):
        read_mlperf([])
    with pytest.raises(UsageError, match=r"must end in \.parquet"):
        run_mlperf_cli([REPOS], tmp_path / "t.csv", benchmark="resnet", strict=False)


def test_other_benchmarks_read_by_name_or_all(repos):
    bert = read_mlperf(REPOS, benchmark="bert")
    r = row(bert.table, "bert_only")
    assert r["benchmark"] == "bert" and r["throughput_unit"] == "sequences/s"
    # one run of the 10 BERT needs: kept, no score, the reason says why
    assert r["n_runs"] == 1 and r["n_runs_required"] == 10 and np.isnan(r["time_to_train_min"])
    assert r["score_reason"] == "only 1 of 10 required runs present"
    every = read_mlperf(REPOS, benchmark="all")
    assert set(every.table["benchmark"]) == {"resnet", "bert"} and every.benchmark == "all"
    res = every.table[every.table["benchmark"] == "resnet"].reset_index(drop=True)
    pd.testing.assert_frame_equal(res, repos.table)  # ResNet rows are the same either way


def test_empty_folder_warns(tmp_path):
    res = read_mlperf(tmp_path)
    assert len(res.table) == 0 and list(res.table.columns) == MLPERF_COLUMNS
    assert "no MLPerf results layout found" in res.warnings[0].reason


# --- duplicates


def test_duplicates_flagged_not_dropped():
    t = read_mlperf(DUPS).table
    assert list(t["is_duplicate"]) == [False, True, True, False]
    assert list(t["duplicate_of"]) == ["", "v3.0/Dell/XE8545", "v3.0/Dell/XE8545", ""]


def test_dedupe_drops_and_reports():
    res = read_mlperf(DUPS, dedupe=True)
    assert list(res.table["system"]) == ["XE8545", "fresh"]
    assert not res.table["is_duplicate"].any()
    assert res.dropped == (
        "v3.1/Dell/XE8545 (same runs as v3.0/Dell/XE8545)",
        "v3.1/NVIDIA/cw_n1 (same runs as v3.0/Dell/XE8545)",
    )


# --- CLI entry


def test_run_mlperf_cli_writes_parquet_with_warnings(tmp_path):
    out = tmp_path / "table.parquet"
    res = run_mlperf_cli([BAD], out, benchmark="resnet", strict=False)
    back = pd.read_parquet(out)
    assert len(back) == len(res.table) == 5
    assert list(back.columns) == MLPERF_COLUMNS
    meta = json.loads(pq.read_schema(out).metadata[b"gpurank"])
    assert meta["source"] == "mlperf" and meta["benchmark"] == "resnet"
    assert len(meta["warnings"]) == len(res.warnings) == 5
    assert {"path", "reason"} == set(meta["warnings"][0])
    assert [p.name for p in tmp_path.iterdir()] == ["table.parquet"]  # no temp file left


def test_run_mlperf_cli_strict_writes_nothing(tmp_path):
    out = tmp_path / "table.parquet"
    with pytest.raises(DataError):
        run_mlperf_cli([BAD], out, benchmark="resnet", strict=True)
    assert not out.exists()
