"""A partitioned dataset whose parts differ is refused up front, naming the part and how.

On Dask such a dataset failed inside a worker (``KeyError: "['provider'] not in index"``)
under a page of the cluster's logging; in memory, pyarrow silently dropped a column only
later parts had. Every part's schema is now checked against the first before any work
(``engine/partitions.py``), on both paths, in one line with exit code 3.
"""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest
from gpurank.engine.cli import main
from gpurank.engine.errors import DataError
from gpurank.engine.partitions import check_parts, dataset_files
from tables import config_table


def _dataset(folder, first, *others):
    folder.mkdir()
    for i, part in enumerate((first, *others)):
        part.to_parquet(folder / f"part-{i:05d}.parquet")
    return folder


@pytest.fixture
def table():
    return config_table(30, seed=3).assign(provider="AWS")


def test_parts_with_the_same_columns_pass(tmp_path, table):
    ds = _dataset(tmp_path / "ds", table.iloc[:10], table.iloc[10:20], table.iloc[20:])
    assert [p.name for p in check_parts(ds)] == [f"part-0000{i}.parquet" for i in range(3)]


@pytest.mark.parametrize("change, message", [
    (lambda t: t.drop(columns=["provider"]), "it lacks column 'provider'"),
    (lambda t: t.assign(region="eu"), "it has extra column 'region'"),
    (lambda t: t.assign(n_nodes=t["n_nodes"].astype(str)),
     "column 'n_nodes' holds text, not numbers"),
    (lambda t: t.drop(columns=["provider", "network", "framework", "interconnect"]),
     "it lacks columns 'interconnect', 'network', 'framework' and 1 more"),
])
def test_a_differing_part_is_named_with_how_it_differs(tmp_path, table, change, message):
    ds = _dataset(tmp_path / "ds", table.iloc[:10], change(table.iloc[10:].reset_index(drop=True)))
    with pytest.raises(DataError) as info:
        check_parts(ds)
    text = str(info.value)
    assert "part 'part-00001.parquet' does not match the first part 'part-00000.parquet'" in text
    assert message in text and "\n" not in text


def test_numbers_of_either_kind_and_all_missing_columns_agree(tmp_path, table):
    first = table.iloc[:10]
    second = table.iloc[10:].reset_index(drop=True).assign(
        n_nodes=lambda t: t["n_nodes"].astype(float), provider=None)
    third = table.iloc[20:].set_index(pd.Index(range(100, 110)))  # an index column stored
    ds = _dataset(tmp_path / "ds", first, second, third)
    assert len(check_parts(ds)) == 3


def test_hidden_and_private_files_are_not_parts(tmp_path, table):
    ds = _dataset(tmp_path / "ds", table.iloc[:10], table.iloc[10:])
    (ds / "_common_metadata.parquet").write_text("not parquet")
    (ds / ".staging").mkdir()
    table.drop(columns=["provider"]).to_parquet(ds / ".staging" / "part.parquet")
    assert [p.name for p in dataset_files(ds)] == ["part-00000.parquet", "part-00001.parquet"]
    check_parts(ds)


def test_an_unreadable_part_is_named(tmp_path, table):
    ds = _dataset(tmp_path / "ds", table.iloc[:10], table.iloc[10:])
    (ds / "part-00002.parquet").write_text("not parquet")
    with pytest.raises(DataError, match=r"cannot read part 'part-00002.parquet'"):
        check_parts(ds)


def test_several_differing_parts_are_counted(tmp_path, table):
    bad = table.iloc[10:].drop(columns=["provider"])
    ds = _dataset(tmp_path / "ds", table.iloc[:10], bad, bad, bad)
    with pytest.raises(DataError, match=r"\(2 more parts differ\)"):
        check_parts(ds)


def test_in_memory_analysis_refuses_differing_parts_in_one_line(tmp_path, table, capsys):
    ds = _dataset(tmp_path / "ds", table.iloc[:15], table.iloc[15:].drop(columns=["provider"]))
    code = main(["analyze", str(ds), "--out", str(tmp_path / "out"), "--no-report"])
    err = capsys.readouterr().err
    assert code == 3 and err.count("\n") == 1
    assert "part 'part-00001.parquet'" in err and "lacks column 'provider'" in err
    assert not (tmp_path / "out").exists()


def test_dask_refuses_differing_parts_in_one_line_before_starting(tmp_path, table):
    pytest.importorskip("distributed")
    ds = _dataset(tmp_path / "ds", table.iloc[:15], table.iloc[15:].drop(columns=["provider"]))
    proc = subprocess.run([sys.executable, "-m", "gpurank.engine", "analyze", str(ds), "--dask",
                           "local:1", "--backend", "cpu", "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert "part 'part-00001.parquet'" in proc.stderr and "provider" in proc.stderr
    assert not (tmp_path / "out").exists()
