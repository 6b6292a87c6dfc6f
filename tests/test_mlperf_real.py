"""The reader against the real MLPerf ResNet data in ../shared/data/mlperf_resnet.

summary.csv and runs.csv were computed upstream from all logs; raw/ holds a subset. Every
system whose complete run set is in raw/ must reproduce summary.csv's score and facts.
"""

import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gpurank.engine.sources.mlperf.reader import read_mlperf
from gpurank.engine.sources.mlperf.logs import parse_result_log
from mlperf_data import shared_data

DATA = shared_data("mlperf_resnet")
pytestmark = pytest.mark.skipif(
    not (DATA / "raw").is_dir(), reason=f"real MLPerf data not present at {DATA} (only in the project workspace)"
)
KEY = ["round", "submitter", "system"]


@pytest.fixture(scope="module")
def result():
    t0 = time.perf_counter()
    res = read_mlperf(DATA / "raw")
    return res, time.perf_counter() - t0


@pytest.fixture(scope="module")
def merged(result):
    s = pd.read_csv(DATA / "summary.csv", keep_default_na=False, dtype=str)
    return s.merge(result[0].table, on=KEY, how="outer", indicator=True, suffixes=("_exp", ""))


def test_fast(result):
    assert result[1] < 5.0, f"reading raw/ took {result[1]:.2f} s"


def test_every_system_has_a_row(merged):
    assert len(merged) == 339
    assert (merged["_merge"] == "both").all()


def test_complete_run_sets_match_summary(merged):
    full = merged[merged["raw_result_files_included"].astype(int) == merged["n_runs_exp"].astype(int)]
    assert len(full) == 34
    for r in full.itertuples():
        ident = f"{r.round}/{r.submitter}/{r.system}"
        assert r.time_to_train_min == pytest.approx(float(r.time_to_train_minutes), rel=1e-6), ident
        assert r.n_runs == int(r.n_runs_exp) and r.n_runs_valid == int(r.n_runs_valid_exp), ident
        exp_gbs = r.global_batch_size_exp
        assert (str(r.global_batch_size) if not pd.isna(r.global_batch_size) else "") == exp_gbs, ident
        assert r.epochs == pytest.approx(float(r.epochs_to_converge), abs=1e-3), ident
        assert r.scaling_factor == pytest.approx(float(r.scaling_factor_exp), abs=1e-4), ident
        assert r.throughput == pytest.approx(float(r.throughput_e2e_samples_per_s), rel=1e-5, abs=0.06), ident
        if r.throughput_train_samples_per_s:
            assert r.throughput_train == pytest.approx(float(r.throughput_train_samples_per_s), rel=1e-5, abs=0.06), ident
        else:
            assert np.isnan(r.throughput_train), ident


def test_partial_run_sets_have_no_score_but_a_reason(merged):
    part = merged[merged["raw_result_files_included"].astype(int) < merged["n_runs_exp"].astype(int)]
    assert len(part) == 339 - 34
    assert part["time_to_train_min"].isna().all()
    assert (part["score_reason"] != "").all()


def test_hardware_fields_match_summary(merged):
    tot = merged["total_accelerators"].astype(int)
    assert (merged["n_accelerators"].astype(int) == tot).all()
    assert (merged["n_nodes"].astype(int) == merged["number_of_nodes"].astype(int)).all()
    for exp, got in [("division_exp", "division"), ("availability_exp", "availability"),
                     ("accelerator_model_name", "accelerator_raw"), ("framework_exp", "framework"),
                     ("host_processor_model_name", "host_cpu"), ("accelerator_interconnect", "interconnect"),
                     ("host_networking", "network")]:  # fmt: skip
        bad = merged[merged[exp].str.strip() != merged[got]]
        assert bad.empty, (exp, bad[KEY + [exp, got]].head())


def test_kinds_of_hardware_are_kept_and_flagged(result):
    t = result[0].table
    cpu = t[t["accelerator_type"] == "cpu"]
    assert len(cpu) == 11 and (cpu["n_accelerators"] == 0).all() and (cpu["accelerator"] == "").all()
    assert (t["accelerator_type"] == "tpu").sum() == 23
    assert set(t.loc[t["accelerator_type"] == "other", "accelerator"]) == {"Gaudi", "Gaudi2", "IPU GC200", "Bow IPU", "Ascend 910"}
    a100 = t[t["accelerator_raw"].isin(["NVIDIA A100-SXM4-80GB (400W)", "A100-SXM4-80GB"])]
    assert set(a100["accelerator"]) == {"A100-SXM4-80GB"}


def test_real_data_warnings(result):
    ws = result[0].warnings
    assert [(Path(w.path).name, w.reason) for w in ws] == [
        ("result_5.txt", "no run_stop (log incomplete or run killed)")
    ]
    assert "HPE-ProLiant-XL675d-Gen10-Plus_A100-SXM-80GB_16N_mxnet" in ws[0].path


def test_every_raw_log_matches_runs_csv():
    runs = pd.read_csv(DATA / "runs.csv", keep_default_na=False, dtype=str)
    runs = runs[runs["included_in_raw"] == "1"]
    assert len(runs) == 317
    for r in runs.itertuples():
        if r.round == "v0.5":
            entry, sysname = r.system.rsplit("/", 1)
            f = DATA / "raw" / "v0.5" / "v0.5.0" / r.submitter / entry / "results" / sysname / "resnet" / r.file
        else:
            f = DATA / "raw" / r.round / r.submitter / "results" / r.system / "resnet" / r.file
        run = parse_result_log(f)
        ident = str(f)
        assert run.log_format == r.log_format, ident
        assert int(run.valid) == int(r.valid), ident
        if r.minutes:
            assert run.minutes == pytest.approx(float(r.minutes), abs=1e-6), ident
        if r.valid == "1":
            assert run.epochs == pytest.approx(float(r.epochs_to_converge)), ident
        assert (str(run.global_batch_size) if run.global_batch_size is not None else "") == r.global_batch_size, ident
        if r.throughput_train_samples_per_s:
            assert run.train_rate == pytest.approx(float(r.throughput_train_samples_per_s), rel=1e-5, abs=0.06), ident
