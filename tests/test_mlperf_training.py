"""The reader on every benchmark of the MLPerf Training rounds in ../shared/data/mlperf_training.

summary.csv and runs.csv were computed upstream from all logs; raw/ holds a subset with at
least one complete run set per round and benchmark. Every complete set must reproduce
summary.csv's score exactly (1e-6 relative) and its convergence and throughput facts. Counts are
read from the data (summary.csv, runs.csv, raw/MANIFEST.csv), never pinned: rounds are added.
"""

import re

import numpy as np
import pandas as pd
import pytest
from gpurank.engine.sources.mlperf.reader import read_mlperf
from gpurank.engine.sources.mlperf.logs import parse_result_log
from mlperf_data import shared_data

DATA = shared_data("mlperf_training")
pytestmark = pytest.mark.skipif(
    not (DATA / "raw").is_dir(),
    reason=f"real MLPerf data not present at {DATA} (only in the project workspace)")
KEY = ["round", "benchmark", "submitter", "system"]


@pytest.fixture(scope="module")
def logs_only():
    return read_mlperf(DATA / "raw", benchmark="all")


@pytest.fixture(scope="module")
def with_summary():
    return read_mlperf(DATA / "raw", benchmark="all", published_scores=DATA / "summary.csv")


@pytest.fixture(scope="module")
def summary():
    return pd.read_csv(DATA / "summary.csv", dtype=str, keep_default_na=False)


def _readme_rows(name):
    """The row count README.md states for one of its tables (``| `summary.csv` | 1,178 rows``)."""
    m = re.search(rf"\| `{re.escape(name)}` \| ([\d,]+) rows", (DATA / "README.md").read_text())
    assert m is not None, name
    return int(m.group(1).replace(",", ""))


def _complete_sets(summary):
    """Summary rows whose every run log is in raw/ and that have a score."""
    inc = pd.to_numeric(summary["raw_result_files_included"])
    return summary[(inc == pd.to_numeric(summary["n_runs"])) & (summary["time_to_train_minutes"] != "")]


def _num(v):
    return float(v) if v not in ("", None) else np.nan


def _same(exp, got, rel, abs_=0.0):
    exp, got = _num(exp), float(got) if got is not None and not pd.isna(got) else np.nan
    if np.isnan(exp) or np.isnan(got):
        return np.isnan(exp) and np.isnan(got)
    return abs(exp - got) <= max(rel * abs(exp), abs_)


def test_every_summary_row_has_a_row(with_summary, summary):
    t = with_summary.table
    m = summary.merge(t, on=KEY, how="outer", indicator=True)
    assert len(t) == len(summary) == _readme_rows("summary.csv")
    assert (m["_merge"] == "both").all()
    # every warning names a log that runs.csv records without run_stop, or a core count that the
    # system description does not write as one integer
    runs = pd.read_csv(DATA / "runs.csv", dtype=str, keep_default_na=False)
    no_stop = {f"{r.round}/{r.submitter}/results/{r.system}/{r.benchmark}/{r.file}"
               for r in runs[runs["run_stop_ms"] == ""].itertuples()}
    cores = summary[~summary["host_processor_core_count"].str.fullmatch(r"\d*")]
    odd_cores = {f"{r.round}/{r.submitter}/systems/{r.system}.json" for r in cores.itertuples()}
    for w in with_summary.warnings:
        path = w.path.split("/raw/")[-1]
        if "no run_stop" in w.reason:
            assert path in no_stop, w
        else:
            assert "host_processor_core_count" in w.reason and path in odd_cores, w


def test_benchmark_column_comes_from_the_logs(logs_only, summary):
    t = logs_only.table
    assert set(t["benchmark"]) - {""} == set(summary["benchmark"])
    per = t[t["n_runs"] > 0].groupby("benchmark")["throughput_unit"].first().to_dict()
    # a renamed benchmark keeps its unit (ssd -> retinanet, gnn -> rgat in v5.0); the benchmarks
    # that count tokens are those the summary gives tokens per second for
    assert per == {"bert": "sequences/s", "dlrm_dcnv2": "samples/s", "gnn": "samples/s",
                   "gpt3": "tokens/s", "llama2_70b_lora": "sequences/s", "maskrcnn": "images/s",
                   "resnet": "images/s", "rnnt": "samples/s", "ssd": "images/s",
                   "stable_diffusion": "images/s", "unet3d": "samples/s",
                   "retinanet": "images/s", "rgat": "samples/s", "flux1": "images/s",
                   "llama31_405b": "tokens/s", "llama31_8b": "tokens/s"}
    tokens = set(summary.loc[summary["throughput_e2e_tokens_per_s"] != "", "benchmark"])
    assert tokens == {b for b, u in per.items() if u == "tokens/s"}


def test_complete_run_sets_reproduce_summary(logs_only, summary):
    m = summary.merge(logs_only.table, on=KEY, how="inner", suffixes=("_exp", ""))
    inc = pd.to_numeric(m["raw_result_files_included"])
    full = m[(inc == pd.to_numeric(m["n_runs_exp"])) & (m["time_to_train_minutes"] != "")]
    # as many as runs.csv has sets of which every log is copied and one converged
    runs = pd.read_csv(DATA / "runs.csv", dtype=str, keep_default_na=False)
    runs = runs.merge(summary[KEY + ["time_to_train_minutes"]], on=KEY)
    per_set = runs.groupby(KEY).agg(all_in=("included_in_raw", lambda c: (c == "1").all()),
                                    scored=("time_to_train_minutes", lambda c: (c != "").all()))
    assert len(full) == int((per_set["all_in"] & per_set["scored"]).sum()) > 0
    # at least one complete set per round and benchmark of the shared rounds
    assert len(full.groupby(["round", "benchmark"])) == len(summary.groupby(["round", "benchmark"]))
    for r in full.itertuples():
        ident = f"{r.round}/{r.benchmark}/{r.submitter}/{r.system}"
        assert _same(r.time_to_train_minutes, r.time_to_train_min, 1e-6), ident
        assert r.n_runs == int(r.n_runs_exp) and r.n_runs_valid == int(r.n_runs_valid_exp), ident
        assert r.n_runs_required == int(r.n_runs_required_exp), ident
        assert str(r.global_batch_size) == r.global_batch_size_exp, ident
        assert _same(r.scaling_factor_exp, r.scaling_factor, 1e-4), ident  # 4 decimals
        assert r.convergence_unit == r.convergence_unit_exp, ident
        # the summary writes 6 significant digits
        assert _same(r.convergence_point_exp, r.convergence_point, 1e-5), ident
        assert _same(r.epochs_to_converge, r.epochs, 1e-5), ident
        assert _same(r.final_quality, r.final_eval_accuracy, 1e-5), ident
        if r.benchmark == "maskrcnn":
            # the logs give no data-set size; the reader uses COCO's 117,266 training images
            assert r.samples_to_converge == pytest.approx(r.epochs * 117_266), ident
            continue
        assert _same(r.samples_to_converge_exp, r.samples_to_converge, 1e-5, 1e-3), ident
        # the token benchmarks (gpt3, llama31_*) count max_sequence_length tokens per sample
        tokens = r.throughput_e2e_tokens_per_s != ""
        e2e = r.throughput_e2e_tokens_per_s if tokens else r.throughput_e2e_samples_per_s
        assert _same(e2e, r.throughput, 1e-5, 0.06), ident
        if tokens:
            exp_train = _num(r.throughput_train_samples_per_s) * int(r.max_sequence_length)
        else:
            exp_train = r.throughput_train_samples_per_s
        if r.benchmark != "resnet":  # ResNet keeps its per-epoch rate (docs/mlperf-reader.md)
            assert _same(exp_train, r.throughput_train, 1e-5, 0.06), ident


def test_published_rows_carry_the_summary(with_summary, summary):
    t = with_summary.table
    pub = t[t["score_source"] == "published"]
    full = _complete_sets(summary)
    scored = summary[summary["time_to_train_minutes"] != ""]
    assert len(pub) == len(scored) - len(full) and (t["score_source"] == "logs").sum() == len(full)
    m = summary.merge(pub, on=KEY, suffixes=("_exp", ""))
    for r in m.itertuples():
        assert _same(r.time_to_train_minutes, r.time_to_train_min, 1e-9), r.system
    gpt3 = m[m["benchmark"] == "gpt3"]
    assert np.allclose(gpt3["throughput"], pd.to_numeric(gpt3["throughput_e2e_tokens_per_s"]))
    mask = m[m["benchmark"] == "maskrcnn"]
    assert mask["throughput"].gt(0).all() and mask["samples_to_converge"].gt(0).all()
    none = t[t["score_source"] == ""]
    unscored = summary[summary["time_to_train_minutes"] == ""]
    assert len(none) == len(unscored) > 0
    assert set(map(tuple, none[KEY].values)) == set(map(tuple, unscored[KEY].values))


def test_every_raw_log_matches_runs_csv():
    runs = pd.read_csv(DATA / "runs.csv", dtype=str, keep_default_na=False)
    runs = runs[runs["included_in_raw"] == "1"]
    manifest = pd.read_csv(DATA / "raw" / "MANIFEST.csv", dtype=str, keep_default_na=False)
    logs = manifest["path"].str.fullmatch(r"[^/]+/[^/]+/results/[^/]+/[^/]+/result_[^/]*\.txt")
    assert len(runs) == int(logs.sum()) > 0
    for r in runs.itertuples():
        f = DATA / "raw" / r.round / r.submitter / "results" / r.system / r.benchmark / r.file
        run = parse_result_log(f)
        ident = str(f)
        assert run.benchmark == r.benchmark, ident
        assert int(run.valid) == int(r.valid), ident
        if r.time_to_train_min:
            assert run.minutes == pytest.approx(float(r.time_to_train_min), abs=1e-5), ident
        assert run.eval_ms / 1000 == pytest.approx(_num(r.eval_time_s or "0"), abs=0.06), ident


def test_dedupe_drops_the_documented_repeats_whose_runs_are_known(summary):
    res = read_mlperf(DATA / "raw", benchmark="all", published_scores=DATA / "summary.csv",
                      dedupe=True)
    dropped = {d.split(" (")[0] for d in res.dropped}
    documented = summary[summary["duplicate_of"] != ""]
    # every row the reader drops is a documented repeat; repeats of rounds before v3.0 have no
    # original in this data set to match
    assert dropped <= {f"{r.round}/{r.submitter}/{r.system}" for r in documented.itertuples()}
    inner = documented[~documented["duplicate_of"].str.match(r"v[12]\.")]
    assert len(res.dropped) >= len(inner) - 5


def test_cli_all_benchmarks_then_analyze_needs_one(tmp_path, capsys):
    from gpurank.engine.cli import main
    from gpurank.engine.io import read_metadata

    table = tmp_path / "all.parquet"
    assert main(["mlperf", str(DATA / "raw"), "--benchmark", "all", "--published-scores",
                 str(DATA / "summary.csv"), "-o", str(table)]) == 0
    meta = read_metadata(table)
    summary = pd.read_csv(DATA / "summary.csv", dtype=str, keep_default_na=False)
    names = sorted(set(summary["benchmark"]))
    assert meta["benchmark"] == "all" and sorted(meta["benchmarks"]) == names
    assert meta["throughput_units"]["gpt3"] == "tokens/s"
    capsys.readouterr()
    assert main(["analyze", str(table), "--out", str(tmp_path / "mixed"), "--no-report"]) == 3
    err = capsys.readouterr().err
    assert f"holds results of {len(names)} benchmarks ({', '.join(names[:4])}" in err
    assert "--benchmark NAME" in err
    out = tmp_path / "bert"
    assert main(["analyze", str(table), "--out", str(out), "--no-report", "--benchmark", "bert",
                 "--drop-invalid", "--json"]) == 0
    ranking = pd.read_parquet(out / "ranking.parquet")
    assert set(ranking["benchmark"]) == {"bert"} and len(ranking) > 50
