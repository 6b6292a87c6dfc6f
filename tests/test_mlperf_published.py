"""read_mlperf(published_scores=...): scores the logs cannot give, taken from a published summary."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from gpurank.engine.errors import DataError, UsageError
from gpurank.engine.commands import run_mlperf_cli
from gpurank.engine.sources.mlperf.reader import read_mlperf, read_published_scores
from mlperf_data import shared_data

STUDY = Path(__file__).parent / "fixtures" / "mlperf" / "study"
RAW, SUMMARY, RUNS = STUDY / "raw", STUDY / "summary.csv", STUDY / "runs.csv"
DATA = shared_data("mlperf_resnet")
real = pytest.mark.skipif(not (DATA / "raw").is_dir(),
                          reason=f"real MLPerf data not present at {DATA} (only in the project workspace)")


def row(t, system):
    r = t[t["system"] == system]
    assert len(r) == 1, system
    return r.iloc[0]


@pytest.fixture(scope="module")
def plain():
    return read_mlperf(RAW)


@pytest.fixture(scope="module")
def filled():
    return read_mlperf(RAW, published_scores=SUMMARY)


def test_without_published_only_logs_score(plain):
    t = plain.table
    assert set(t.loc[t["time_to_train_min"].notna(), "system"]) == {"h100x8", "a100x8"}
    assert set(t.loc[t["time_to_train_min"].notna(), "score_source"]) == {"logs"}
    assert (t.loc[t["time_to_train_min"].isna(), "score_source"] == "").all()
    assert plain.metadata()["n_scored_published"] == 0 and plain.published_scores == ""


def test_published_fills_unscored_systems(filled):
    t = filled.table
    s = pd.read_csv(SUMMARY, dtype=str, keep_default_na=False).set_index("system")
    r = row(t, "h100x512")
    assert r["score_source"] == "published"
    assert r["time_to_train_min"] == pytest.approx(float(s.at["h100x512", "time_to_train_minutes"]))
    assert r["epochs"] == float(s.at["h100x512", "epochs_to_converge"])
    assert r["global_batch_size"] == int(s.at["h100x512", "global_batch_size"])
    assert r["throughput"] == pytest.approx(float(s.at["h100x512", "throughput_e2e_samples_per_s"]))
    assert r["throughput_train"] == pytest.approx(float(s.at["h100x512", "throughput_train_samples_per_s"]))
    assert r["score_reason"] == "no result logs"  # why the logs gave no score stays
    assert str(t["global_batch_size"].dtype) == "Int64" and t["score_source"].dtype == t["score_reason"].dtype


def test_logs_win_over_published(filled, plain):
    # the summary's score of h100x8 is 1% off on purpose; the logs' value is kept
    s = pd.read_csv(SUMMARY, dtype=str, keep_default_na=False).set_index("system")
    a, b = row(filled.table, "h100x8"), row(plain.table, "h100x8")
    assert a["score_source"] == "logs"
    assert a["time_to_train_min"] == b["time_to_train_min"] != pytest.approx(float(s.at["h100x8", "time_to_train_minutes"]))
    assert a["throughput"] == b["throughput"]


def test_no_published_score_leaves_row_unscored(filled):
    r = row(filled.table, "h100x32_noscore")
    assert np.isnan(r["time_to_train_min"]) and r["score_source"] == "" and r["score_reason"]


def test_metadata_counts(filled):
    m = filled.metadata()
    assert m["n_scored_from_logs"] == 2
    assert m["n_scored_published"] == len(filled.table) - 3
    assert m["n_scored"] == m["n_scored_from_logs"] + m["n_scored_published"]
    assert m["published_scores"] == str(SUMMARY) and m["published_runs"] == str(RUNS)


def test_runs_beside_summary_find_duplicates(filled):
    r = row(filled.table, "h100x4_again")
    assert r["is_duplicate"] and r["duplicate_of"] == "v3.0/Dell/h100x4"
    res = read_mlperf(RAW, published_scores=SUMMARY, dedupe=True)
    assert res.dropped == ("v3.1/Dell/h100x4_again (same runs as v3.0/Dell/h100x4)",)


def test_explicit_published_runs(tmp_path):
    summary = tmp_path / "published.csv"
    summary.write_bytes(SUMMARY.read_bytes())  # no runs.csv beside it
    res = read_mlperf(RAW, published_scores=summary)
    assert res.published_runs == "" and not res.table["is_duplicate"].any()
    res = read_mlperf(RAW, published_scores=summary, published_runs=RUNS)
    assert res.table["is_duplicate"].sum() == 1


def test_bad_published_files(tmp_path):
    with pytest.raises(UsageError, match="does not exist"):
        read_mlperf(RAW, published_scores=tmp_path / "nope.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("round,submitter,system\nv3.0,a,b\n")
    with pytest.raises(DataError, match="time_to_train_minutes"):
        read_published_scores(bad)


def test_cli_writes_provenance(tmp_path):
    out = tmp_path / "t.parquet"
    res = run_mlperf_cli([RAW], out, published_scores=SUMMARY)
    meta = json.loads(pq.read_schema(out).metadata[b"gpurank"])
    assert meta["n_scored_published"] == res.metadata()["n_scored_published"] > 0
    assert list(pd.read_parquet(out)["score_source"]) == list(res.table["score_source"])


# --- the real data


@real
def test_real_published_fills_all_scored_systems():
    res = read_mlperf(DATA / "raw", published_scores=DATA / "summary.csv")
    t = res.table
    src = t["score_source"].value_counts().to_dict()
    assert src == {"published": 298, "logs": 34, "": 7}
    s = pd.read_csv(DATA / "summary.csv", dtype=str, keep_default_na=False)
    m = s.merge(t, on=["round", "submitter", "system"], validate="one_to_one")
    assert len(m) == 339
    pub = m[m["score_source"] == "published"]
    np.testing.assert_allclose(pub["time_to_train_min"], pub["time_to_train_minutes"].astype(float), rtol=1e-12)
    np.testing.assert_allclose(pub["throughput"], pub["throughput_e2e_samples_per_s"].astype(float), rtol=1e-12)
    logs = m[m["score_source"] == "logs"]  # the logs' own values, which match the summary
    np.testing.assert_allclose(logs["time_to_train_min"], logs["time_to_train_minutes"].astype(float), rtol=1e-6)
    assert (m.loc[m["score_source"] == "", "time_to_train_minutes"] == "").all()


@real
def test_real_dedupe_matches_documented_duplicates():
    res = read_mlperf(DATA / "raw", published_scores=DATA / "summary.csv", dedupe=True)
    s = pd.read_csv(DATA / "summary.csv", dtype=str, keep_default_na=False)
    documented = s[s["quirks"].str.contains("byte-identical|same runs", regex=True)]
    dropped = {d.split(" (")[0] for d in res.dropped}
    assert dropped == {f"{r.round}/{r.submitter}/{r.system}" for r in documented.itertuples()}
    assert len(res.table) == 339 - 41
