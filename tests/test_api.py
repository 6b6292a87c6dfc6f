import json

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from gpurank.engine import AnalysisSpec, DataError, Engine, UsageError, analyze
from gpurank.engine.io import read_metadata
from tables import config_table


@pytest.fixture(scope="module")
def result():
    return Engine(backend="cpu").analyze(config_table(300, seed=4), top=5, n_estimators=20)


def test_every_row_gets_every_output_column(result):
    t = result.table
    assert len(t) == 300
    for col in ("accelerator_hours", "throughput_per_accelerator", "speedup",
                "scaling_efficiency", "cost_usd", "energy_kwh", "cluster", "pareto_rank",
                "domination_count", "topsis_score", "rank"):
        assert col in t, col
    assert sorted(t["rank"]) == list(range(1, 301))
    assert set(t["cluster"]) == {0, 1, 2, 3, 4}
    assert ((t["pareto_rank"] == 0) == (t["domination_count"] == 0)).all()


def test_default_criteria_include_cost_when_priced(result):
    assert [str(c) for c in result.spec.criteria] == [
        "time_to_train_min:min", "throughput_per_accelerator:max", "scaling_efficiency:max",
        "cost_usd:min"]


def test_top_rows_are_best_scores(result):
    top = result.top()
    assert len(top) == 5
    assert top["rank"].tolist() == [1, 2, 3, 4, 5]
    assert top["topsis_score"].is_monotonic_decreasing
    assert top["topsis_score"].iloc[0] == result.table["topsis_score"].max()


def test_same_seed_same_result():
    a = analyze(config_table(120, seed=9), backend="cpu", n_estimators=10, seed=3)
    b = analyze(config_table(120, seed=9), backend="cpu", n_estimators=10, seed=3)
    pd.testing.assert_frame_equal(a.table, b.table)
    pd.testing.assert_frame_equal(a.importance.table, b.importance.table)


def test_write_outputs(tmp_path, result):
    summary = Engine(backend="cpu").write(result, tmp_path / "out")
    table = pd.read_parquet(tmp_path / "out" / "ranking.parquet")
    assert len(table) == 300 and "topsis_score" in table
    on_disk = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert on_disk == summary
    assert on_disk["rows"] == 300 and on_disk["backend"] == "cpu"
    assert len(on_disk["top"]) == 5 and on_disk["top"][0]["rank"] == 1
    assert len(on_disk["clusters"]["profiles"]) == 5
    assert on_disk["importance"]["features"][0]["feature"]
    assert set(on_disk["timings_s"]) == {"load", "derive", "importance", "cluster", "rank"}
    assert read_metadata(tmp_path / "out" / "ranking.parquet")["backend"] == "cpu"
    assert not list((tmp_path / "out").glob(".*tmp"))


def test_step_timer_records_steps_that_end():
    from gpurank.engine.pipeline import StepTimer

    timer = StepTimer()
    with timer.step("load"):
        pass
    with pytest.raises(KeyError), timer.step("rank"):
        raise KeyError("a failed step reports no time")
    timer.total()
    assert list(timer.timings) == ["load", "total"]
    assert timer.timings["total"] >= timer.timings["load"] >= 0


def test_failed_write_leaves_no_partial_file(tmp_path, result, monkeypatch):
    out = tmp_path / "out"
    Engine(backend="cpu").write(result, out)
    before = (out / "ranking.parquet").read_bytes()

    real = pq.ParquetWriter.write_table

    def broken(self, table, *args, **kw):  # a row group reaches the file, then the disk fills
        real(self, table, *args, **kw)
        raise OSError("disk full")

    monkeypatch.setattr(pq.ParquetWriter, "write_table", broken)
    with pytest.raises(OSError, match="disk full"):
        Engine(backend="cpu").write(result, out)
    assert (out / "ranking.parquet").read_bytes() == before
    assert sorted(p.name for p in out.iterdir()) == ["_gpurank_manifest.json", "ranking.parquet",
                                                     "report.html", "summary.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no staging left behind


def test_rows_with_missing_criteria_stop_by_default_and_drop_on_request():
    df = config_table(60, seed=5)
    df.loc[[3, 7], "time_to_train_min"] = np.nan
    with pytest.raises(DataError, match=r"^2 rows are invalid: 2 where time_to_train_min is "
                                        r"missing \(first: row 3\); fix them or pass "
                                        "--drop-invalid"):
        analyze(df, backend="cpu", n_estimators=5)
    r = analyze(df, backend="cpu", n_estimators=5, drop_invalid=True)
    assert len(r.table) == 58
    assert ("2 invalid rows dropped (--drop-invalid): 2 where time_to_train_min is missing "
            "(first: row 3)") in r.notes


def test_one_row_is_ranked_not_clustered():
    r = analyze(config_table(1), backend="cpu")
    assert r.table["rank"].tolist() == [1]
    assert r.clusters is None and r.importance is None
    assert "clustering skipped: a table of one row has nothing to group" in r.notes


def test_empty_table_is_a_data_error():
    with pytest.raises(DataError, match="the table is empty"):
        analyze(config_table(5).iloc[:0], backend="cpu")


def test_spec_and_options_are_exclusive():
    with pytest.raises(UsageError, match="pass either spec= or keyword options"):
        Engine(backend="cpu").analyze(config_table(5), AnalysisSpec(), top=3)


def test_unknown_option_is_a_usage_error():
    with pytest.raises(UsageError, match="unknown analysis option"):
        analyze(config_table(5), backend="cpu", colour="red")


def test_load_csv_and_parquet_folder(tmp_path):
    df = config_table(40, seed=6)
    df.to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "ds").mkdir()
    df.iloc[:20].to_parquet(tmp_path / "ds" / "part-0.parquet")
    df.iloc[20:].to_parquet(tmp_path / "ds" / "part-1.parquet")
    eng = Engine(backend="cpu")
    assert len(eng.load(tmp_path / "t.csv")) == 40
    assert len(eng.load(tmp_path / "ds")) == 40


def test_unreadable_and_truncated_files_are_data_errors(tmp_path):
    df = config_table(40, seed=6)
    df.to_parquet(tmp_path / "t.parquet")
    data = (tmp_path / "t.parquet").read_bytes()
    (tmp_path / "cut.parquet").write_bytes(data[: len(data) // 2])
    eng = Engine(backend="cpu")
    with pytest.raises(DataError, match="cannot read table '.*cut.parquet'"):
        eng.load(tmp_path / "cut.parquet")
    with pytest.raises(DataError, match="table file '.*nope.csv' does not exist"):
        eng.load(tmp_path / "nope.csv")
    (tmp_path / "t.xlsx").write_bytes(b"x")
    with pytest.raises(DataError, match="unknown format '.xlsx'"):
        eng.load(tmp_path / "t.xlsx")


def test_accelerator_type_filter_keeps_matching_rows_with_a_note():
    df = config_table(40, seed=8)
    df["accelerator_type"] = ["gpu"] * 30 + ["tpu"] * 10
    r = analyze(df, backend="cpu", n_estimators=5, accelerator_type="gpu")
    assert len(r.table) == 30
    assert "10 rows with accelerator_type other than 'gpu' left out (--accelerator-type)" in r.notes
    with pytest.raises(DataError, match="accelerator_type 'ipu' matches no row; the table has: "
                                        "gpu, tpu"):
        analyze(df, backend="cpu", accelerator_type="ipu")


def test_write_table_in_row_groups_reads_back_equal(tmp_path, monkeypatch):
    """The table is written one row group at a time (its Arrow copy is one slice): the
    file reads back equal, with its metadata, whatever the slices hold (a category or a
    missing text seen in one slice only)."""
    import pyarrow.parquet as pq
    from gpurank.engine import io

    monkeypatch.setattr(io, "ROW_GROUP", 7)
    df = pd.DataFrame({
        "a": np.arange(20),
        "b": pd.Categorical(list("xyz") * 6 + ["x", "q"]),
        "c": ["s"] * 19 + [None],
        "d": np.linspace(0.0, 1.0, 20),
    })
    path = io.write_table(df, tmp_path / "t.parquet", metadata={"run": 3})
    pd.testing.assert_frame_equal(pd.read_parquet(path), df)
    assert io.read_metadata(path) == {"run": 3}
    assert pq.ParquetFile(path).num_row_groups == 3
    empty = io.write_table(df.iloc[:0], tmp_path / "e.parquet")
    assert pd.read_parquet(empty).shape == (0, 4)
    # dictionary pages for the integers, categories and text, plain ones for the floats
    meta = pq.ParquetFile(path).metadata.row_group(0)
    dictionary = {meta.column(j).path_in_schema: meta.column(j).dictionary_page_offset
                  is not None for j in range(meta.num_columns)}
    assert dictionary == {"a": True, "b": True, "c": True, "d": False}
    floats = io.write_table(df[["d"]], tmp_path / "f.parquet")
    pd.testing.assert_frame_equal(pd.read_parquet(floats), df[["d"]])
