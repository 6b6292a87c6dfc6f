"""Ranking methods: VIKOR behind ``method="vikor"`` in memory, on the strict device stand-in
and on Dask, equal to pymcdm's VIKOR; TOPSIS unchanged as the default; SMAA refuses a method
it does not rank by; the table of methods is what the engine reads."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from gpurank.engine import Engine, cli
from gpurank.engine.backend import strict_device_backend
from gpurank.engine.errors import BackendUnavailableError
from gpurank.engine.methods import METHODS, SCORE_COLUMNS, summary_method
from gpurank.engine.params import ParamError
from gpurank.engine.ranking import criteria_matrix, final_rank
from gpurank.engine.spec import AnalysisSpec, normalize_weights, parse_criteria
from gpurank.engine.summary_schema import check_summary
from gpurank.kernels import CONTRACTS
from gpurank.kernels import reference as ref
from tables import config_table

FAST = {"n_estimators": 5, "top": 5, "clusters": 2}
CRITERIA = "time_to_train_min:min:1,throughput_per_accelerator:max:2,cost_usd:min:1"


def _tied(n=120, seed=3):
    """Ties (times in quarter minutes) and duplicated rows."""
    df = config_table(n, seed=seed)
    df["time_to_train_min"] = np.ceil(df["time_to_train_min"] * 4) / 4
    return pd.concat([df, df.iloc[:10]], ignore_index=True)


def _pymcdm(df, criteria, v=0.5):
    from pymcdm.methods import VIKOR

    x = df[[c.column for c in criteria]].to_numpy(np.float64)
    types = np.array([1 if c.sense == "max" else -1 for c in criteria])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return VIKOR(v=v)(x, np.array(normalize_weights(criteria)), types)


def test_every_method_row_names_its_kernels_and_a_score_column():
    assert list(METHODS) == ["topsis", "vikor"]
    for m in METHODS.values():
        assert set(m.kernels) <= set(CONTRACTS)
        assert m.column in SCORE_COLUMNS
    assert METHODS["topsis"].smaa and not METHODS["vikor"].smaa
    # the final rank orders by the merit: VIKOR's smallest Q first
    np.testing.assert_array_equal(final_rank(np.array([0.3, 0.0, 0.3]), np.zeros(3, np.int32),
                                             method="vikor"), [2, 1, 3])
    np.testing.assert_array_equal(final_rank(np.array([0.3, 0.0, 0.3]), np.zeros(3, np.int32)),
                                  [1, 3, 2])
    assert summary_method({}).name == "topsis"  # a summary from before the choice


@pytest.mark.parametrize("v", [0.5, 0.2])
def test_vikor_in_memory_equals_pymcdm_and_ranks_by_q(v):
    pytest.importorskip("pymcdm")
    df = _tied()
    spec = AnalysisSpec(criteria=CRITERIA, method="vikor", vikor_v=v, **FAST)
    res = Engine(backend="cpu").analyze(df, spec)
    t = res.table
    assert "vikor_q" in t and "topsis_score" not in t
    assert res.ranking.method == "vikor" and res.ranking.column == "vikor_q"
    want = _pymcdm(t, spec.criteria, v)
    np.testing.assert_allclose(t["vikor_q"].to_numpy(), want, rtol=0, atol=1e-12)
    # rank 1 = the smallest Q, ties by Pareto rank, then row order
    order = np.lexsort((np.arange(len(t)), t["pareto_rank"].to_numpy(), t["vikor_q"].to_numpy()))
    np.testing.assert_array_equal(t["rank"].to_numpy()[order], np.arange(1, len(t) + 1))
    with pytest.raises(AttributeError, match="ranked by 'vikor'; its score is .score"):
        res.ranking.topsis_score


def test_vikor_single_step_and_the_log_scale():
    df = _tied(40)
    crit = parse_criteria("time_to_train_min:min:1,throughput:max:2,power_w:min:1")
    got = Engine(backend="cpu").rank(df, crit, method="vikor", norm="log")
    costs = criteria_matrix(df, crit, backend=Engine(backend="cpu").backend)
    sign = np.array([-1.0 if c.sense == "max" else 1.0 for c in crit])
    want = ref.vikor(sign * np.log10(costs * sign), normalize_weights(crit), [False] * 3)
    np.testing.assert_allclose(got.score, want, rtol=0, atol=1e-12)
    with pytest.raises(ParamError, match="^method must be one of 'topsis', 'vikor'; got 'ahp'"):
        Engine(backend="cpu").rank(df, crit, method="ahp")


def test_one_row_and_default_topsis_unchanged():
    df = config_table(1, seed=1)
    res = Engine(backend="cpu").analyze(df, AnalysisSpec(method="vikor", **FAST))
    assert res.table["vikor_q"].tolist() == [0.0] and res.table["rank"].tolist() == [1]
    df = _tied(60)
    a = Engine(backend="cpu").analyze(df, AnalysisSpec(**FAST))
    b = Engine(backend="cpu").analyze(df, AnalysisSpec(method="topsis", **FAST))
    pd.testing.assert_frame_equal(a.table, b.table)
    assert a.ranking.topsis_score is a.ranking.score


def test_robust_refuses_vikor_in_one_line_in_both_spellings(tmp_path, capsys, monkeypatch):
    with pytest.raises(ParamError) as info:
        AnalysisSpec(method="vikor", robust=True)
    assert str(info.value) == ("method must be one of 'topsis' with robust=True (SMAA ranks by "
                               "those methods only); got 'vikor'")
    with pytest.raises(ParamError, match="^vikor_v weighs the terms of VIKOR; pass "
                                         "method='vikor'"):
        AnalysisSpec(vikor_v=0.3)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["analyze", "t.parquet", "--method", "vikor", "--robust"]) == 2
    assert capsys.readouterr().err == (
        "gpurank: error: --method must be one of 'topsis' with --robust (SMAA ranks by those "
        "methods only); got 'vikor'\n")
    assert cli.main(["analyze", "t.parquet", "--vikor-v", "2", "--method", "vikor"]) == 2
    assert capsys.readouterr().err == ("gpurank: error: --vikor-v must be a finite number in "
                                       "[0, 1]; got 2.0\n")
    assert cli.main(["analyze", "t.parquet", "--vikor-v", "0.3"]) == 2
    assert "pass --method vikor or leave it at 0.5" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_cli_writes_the_method_in_the_summary_and_the_report(tmp_path, capsys):
    df = _tied(50)
    df.to_parquet(tmp_path / "t.parquet")
    out = tmp_path / "out"
    assert cli.main(["analyze", str(tmp_path / "t.parquet"), "--method", "vikor",
                     "--vikor-v", "0.25", "--out", str(out), "--clusters", "2"]) == 0
    printed = capsys.readouterr().out
    assert "by VIKOR Q" in printed
    summary = json.loads((out / "summary.json").read_text())
    check_summary(summary, path="summary.json")
    assert summary["settings"]["method"] == "vikor" and summary["settings"]["vikor_v"] == 0.25
    assert all("vikor_q" in r and "topsis_score" not in r for r in summary["top"])
    page = (out / "report.html").read_text()
    assert "VIKOR compromise index Q (0 = best)" in page
    written = pd.read_parquet(out / "ranking.parquet")
    assert "vikor_q" in written and "topsis_score" not in written


def test_vikor_on_the_strict_device_stand_in_matches_the_cpu():
    try:
        strict = strict_device_backend()
    except BackendUnavailableError as exc:
        pytest.skip(str(exc))
    df = _tied(48)
    spec = AnalysisSpec(criteria=CRITERIA, method="vikor", **FAST)
    g = Engine(backend=strict).analyze(df, spec)
    c = Engine(backend="cpu").analyze(df, spec)
    assert g.backend == "gpu-strict" and g.fallbacks == ()
    np.testing.assert_allclose(g.table["vikor_q"].to_numpy(), c.table["vikor_q"].to_numpy(),
                               rtol=0, atol=1e-12)
    np.testing.assert_array_equal(g.table["rank"].to_numpy(), c.table["rank"].to_numpy())


def test_vikor_on_dask_equals_in_memory(tmp_path):
    pytest.importorskip("distributed")
    dd = pytest.importorskip("dask.dataframe")
    from distributed import Client, LocalCluster
    from gpurank.engine.distributed import analyze_dataset

    df = _tied(300, seed=5)
    spec = AnalysisSpec(criteria=CRITERIA, method="vikor", vikor_v=0.4, n_estimators=5, top=7,
                        k_range=(2, 3))
    want = Engine(backend="cpu").analyze(df, spec)
    with LocalCluster(n_workers=2, processes=False, threads_per_worker=1,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        res = analyze_dataset(dd.from_pandas(df, npartitions=4, sort=False), client=client,
                              spec=spec, backend="cpu", return_columns=True,
                              out_dir=tmp_path / "out")
    got = res.columns
    np.testing.assert_array_equal(got["vikor_q"].to_numpy(), want.table["vikor_q"].to_numpy())
    np.testing.assert_array_equal(got["rank"].to_numpy(), want.table["rank"].to_numpy())
    assert res.ranking.method == "vikor"
    assert res.summary["settings"]["method"] == "vikor"
    assert "vikor" in res.timings
    assert res.top()["row_id"].tolist() == list(want.ranking.top(7))
    written = pd.read_parquet(tmp_path / "out" / "ranking")
    assert "vikor_q" in written and "topsis_score" not in written


def test_the_worked_example_of_docs_ranking_md_is_what_the_engine_computes():
    import pathlib
    import re

    doc = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "ranking.md").read_text()
    rows = re.findall(r"^\| ([ABCD]) \| ([0-9.]+) \| ([0-9.]+) \| ([0-9.]+) \|(.*)\|$", doc,
                      flags=re.M)
    assert [r[0] for r in rows] == ["A", "B", "C", "D"]
    table = pd.DataFrame({"time_to_train_min": [float(r[1]) for r in rows],
                          "scaling_efficiency": [float(r[2]) for r in rows],
                          "cost_usd": [float(r[3]) for r in rows]})
    crit = "time_to_train_min:min,scaling_efficiency:max,cost_usd:min"
    runs = [{}, {"norm": "minmax"}, {"method": "vikor"}, {"method": "vikor", "vikor_v": 0.2},
            {"method": "vikor", "vikor_v": 0.8}]
    got = [Engine(backend="cpu").rank(table, crit, **kw) for kw in runs]
    for i, r in enumerate(rows):
        cells = [c.strip() for c in r[4].split("|")]
        assert cells == [f"{g.score[i]:.3f} ({g.rank[i]})" for g in got], r[0]
