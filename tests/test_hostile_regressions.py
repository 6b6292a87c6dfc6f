"""Defects the CLI fuzzer (tests/test_fuzz_cli.py) found, each fixed at its root and kept here
as a named test; and the short messages for unknown names.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from gpurank.engine import Engine
from gpurank.engine.cli import main
from gpurank.engine.errors import DataError
from gpurank.engine.outputs import is_gpurank_output
from gpurank.engine.sources.model.calibrate import calibrate, predict
from gpurank.engine.sources.model.perfmodel import CalibratedModel
from gpurank.engine.sources.sweep.simulate import simulate
from output_sets import consistent_set, leftovers
from tables import config_table


def _one_line(capsys) -> str:
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("gpurank: error: "), err
    return lines[0]


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    """A simulated sweep as a table file: every canonical and catalog column, with times."""
    path = tmp_path_factory.mktemp("sweep") / "sweep.parquet"
    simulate(40, seed=3).to_parquet(path)
    return path


# -- outputs gpurank wrote are recognized as its own ----------------------------------------------
def test_a_sweep_written_without_a_suffix_is_replaced_by_the_next_run(tmp_path, capsys):
    out = tmp_path / "sweep"
    assert main(["simulate", "--n", "20", "-o", str(out)]) == 0
    assert is_gpurank_output(out)
    assert main(["simulate", "--n", "30", "--seed", "1", "-o", str(out)]) == 0
    assert len(pd.read_parquet(out)) == 30


def test_a_predicted_csv_is_replaced_by_the_next_run(tmp_path, sweep):
    out = tmp_path / "p.csv"
    assert main(["predict", str(sweep), "-o", str(out)]) == 0
    assert is_gpurank_output(out)
    assert main(["predict", str(sweep), "-o", str(out)]) == 0
    (tmp_path / "mine.csv").write_text("a,b\n1,2\n")
    assert not is_gpurank_output(tmp_path / "mine.csv")


def test_a_prediction_of_no_rows_has_the_columns_of_one_with_rows(sweep):
    table = pd.read_parquet(sweep)
    some, none = predict(table.iloc[:3]), predict(table.iloc[:0])
    assert list(none.columns) == list(some.columns)
    assert list(none.dtypes) == list(some.dtypes)


# -- report keeps the output set consistent ------------------------------------------------------
@pytest.fixture(scope="module")
def analysis_sets(tmp_path_factory):
    root = tmp_path_factory.mktemp("sets")
    eng = Engine(backend="cpu")
    for name, seed in (("a", 1), ("b", 2)):
        eng.write(eng.analyze(config_table(25, seed=seed), n_estimators=5, k_range=(2, 3)),
                  root / name, report=False)
    return root


def test_a_report_rebuilt_into_its_analysis_folder_joins_the_set(tmp_path, analysis_sets):
    folder = tmp_path / "a"
    shutil.copytree(analysis_sets / "a", folder)
    run_id = consistent_set(folder)
    assert main(["report", str(folder / "ranking.parquet")]) == 0
    assert consistent_set(folder) == run_id  # the manifest lists the report, same run
    assert "report.html" in json.loads((folder / "_gpurank_manifest.json").read_text())["files"]
    assert leftovers(tmp_path, "a") == []


def test_a_report_into_another_analysis_folder_is_refused(tmp_path, analysis_sets, capsys):
    for name in ("a", "b"):
        shutil.copytree(analysis_sets / name, tmp_path / name)
    code = main(["report", str(tmp_path / "a" / "ranking.parquet"), "--out",
                 str(tmp_path / "b")])
    assert code == 2
    assert "is inside the output of another analysis" in _one_line(capsys)
    assert not (tmp_path / "b" / "report.html").exists()
    consistent_set(tmp_path / "b")


# -- tables gpurank cannot read as they are ------------------------------------------------------
def test_a_parquet_column_of_non_utf8_bytes_is_one_line(tmp_path, capsys):
    t = config_table(12, seed=1)
    t["host_cpu"] = pd.Series([b"\xff\xfe"] * len(t), dtype=object)
    t.to_parquet(tmp_path / "t.parquet")
    for argv in (["analyze", str(tmp_path / "t.parquet"), "--out", str(tmp_path / "out")],
                 ["predict", str(tmp_path / "t.parquet"), "-o", str(tmp_path / "p.parquet")]):
        assert main(argv) == 3
        assert "is not UTF-8 text: column 'host_cpu' row 0 holds the bytes" in _one_line(capsys)


def test_bytes_that_are_utf8_text_are_read_as_text():
    t = config_table(12, seed=1)
    t["host_cpu"] = pd.Series([b"EPYC 7742"] * len(t), dtype=object)
    r = Engine(backend="cpu").analyze(t, n_estimators=5, k_range=(2, 3))
    assert set(r.table["host_cpu"]) == {"EPYC 7742"}


def test_a_csv_with_a_column_twice_is_refused_by_every_reader(tmp_path, sweep, capsys):
    t = pd.read_parquet(sweep).iloc[:5]
    path = tmp_path / "t.csv"
    pd.concat([t, t[["accelerator"]]], axis=1).to_csv(path, index=False)
    for argv in (["predict", str(path), "-o", str(tmp_path / "p.parquet")],
                 ["calibrate", str(path), "-o", str(tmp_path / "m.json")],
                 ["analyze", str(path), "--out", str(tmp_path / "out")]):
        assert main(argv) == 3
        assert "column 'accelerator' appears 2 times" in _one_line(capsys)


# -- model files ---------------------------------------------------------------------------------
@pytest.mark.parametrize("field, value", [("compute_efficiency_by_vendor", [1]),
                                          ("compute_efficiency_by_vendor", {"NVIDIA": [1]}),
                                          ("compute_efficiency_shared", "0.3"),
                                          ("workload", 3)])
def test_a_model_file_with_a_list_or_number_where_a_name_belongs_is_refused(tmp_path, field,
                                                                           value):
    raw = CalibratedModel(compute_efficiency_by_family={"A100": 0.3}).to_dict()
    raw[field] = value
    (tmp_path / "m.json").write_text(json.dumps(raw))
    with pytest.raises(DataError, match=f"model file .*: {field}\\b"):
        CalibratedModel.from_json(tmp_path / "m.json")


# -- calibrate -----------------------------------------------------------------------------------
@pytest.mark.parametrize("drop", [[], ["input_pipeline"], ["input_pipeline", "host_cpu"]])
def test_calibrate_of_an_empty_table_is_one_line(tmp_path, sweep, capsys, drop):
    pd.read_parquet(sweep).iloc[:0].drop(columns=drop).to_parquet(tmp_path / "empty.parquet")
    assert main(["calibrate", str(tmp_path / "empty.parquet"), "-o", str(tmp_path / "m.json")]) == 3
    assert "calibration table has no usable rows (of 0)" in _one_line(capsys)


@pytest.mark.parametrize("column, value", [("epochs", 1.7e308), ("n_nodes", 1.7e308),
                                           ("cpu_cores_per_accelerator", 5e-324)])
def test_calibration_rows_the_model_cannot_evaluate_are_skipped(sweep, column, value):
    t = pd.read_parquet(sweep)
    t[column] = t[column].astype(float)
    t.loc[:2, column] = value
    model = calibrate(t)  # those rows are left out, the others fitted
    # an overflowing node count is an inconsistent topology, refused before the model runs
    assert model.fit["n_usable"] == len(t) - 3


def test_calibration_whose_start_would_overflow_is_outside_the_domain(tmp_path, sweep, capsys):
    # epochs of 1e300 overflowed the fit's start; the domain of a row (domain.py) now bounds
    # every value the model reads, so such rows never reach it: one line, no warning
    t = pd.read_parquet(sweep).assign(epochs=1e300)
    t.to_parquet(tmp_path / "t.parquet")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["calibrate", str(tmp_path / "t.parquet"), "-o",
                     str(tmp_path / "m.json")]) == 3
    assert "no usable rows" in _one_line(capsys)
    top = pd.read_parquet(sweep).assign(epochs=1e9)  # the domain's bound still fits
    top.to_parquet(tmp_path / "t.parquet")
    assert main(["calibrate", str(tmp_path / "t.parquet"), "-o", str(tmp_path / "m.json")]) == 0
    assert CalibratedModel.from_json(tmp_path / "m.json").fit["n_train"] == len(top)


def test_calibration_of_only_rows_the_model_cannot_evaluate_is_one_line(tmp_path, sweep,
                                                                        capsys):
    pd.read_parquet(sweep).assign(epochs=1.7e308).to_parquet(tmp_path / "t.parquet")
    assert main(["calibrate", str(tmp_path / "t.parquet"), "-o", str(tmp_path / "m.json")]) == 3
    assert "no usable rows" in _one_line(capsys)


# -- stderr holds one line when a command fails ----------------------------------------------------
def _to_stderr(message, category, filename, lineno, file=None, line=None):
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def test_warnings_before_a_failure_do_not_add_lines(tmp_path, capsys, monkeypatch):
    from gpurank.engine import cli

    monkeypatch.setattr(warnings, "showwarning", _to_stderr)  # as a terminal shows them

    def warn_then_fail(args):
        warnings.warn("overflow encountered in multiply", RuntimeWarning, stacklevel=1)
        raise DataError("the table is empty; at least one configuration row is needed")

    monkeypatch.setitem(cli._COMMANDS, "info", warn_then_fail)
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        assert main(["info"]) == 3
    assert _one_line(capsys) == ("gpurank: error: the table is empty; at least one "
                                 "configuration row is needed")

    def warn_then_succeed(args):
        warnings.warn("kept for a run that succeeds", RuntimeWarning, stacklevel=1)
        return 0

    monkeypatch.setitem(cli._COMMANDS, "info", warn_then_succeed)
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        assert main(["info"]) == 0
    assert "kept for a run that succeeds" in capsys.readouterr().err


def test_a_dask_run_that_fails_after_its_cluster_started_prints_one_line(tmp_path):
    pytest.importorskip("distributed")
    ds = tmp_path / "ds"
    ds.mkdir()
    for i in range(2):
        config_table(4, seed=i).iloc[:0].to_parquet(ds / f"part-{i}.parquet")
    proc = subprocess.run([sys.executable, "-m", "gpurank.engine", "analyze", str(ds), "--dask",
                           "local:1", "--backend", "cpu", "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 3
    assert proc.stderr == ("gpurank: error: the table is empty; at least one configuration row "
                           "is needed\n")


# -- an unknown name is answered with the closest, not the whole table ----------------------------
@pytest.fixture(scope="module")
def wide(tmp_path_factory):
    t = config_table(20, seed=4)
    t = pd.concat([t, pd.DataFrame({f"counter_{i:04d}": np.arange(20.0) for i in range(800)})],
                  axis=1)
    path = tmp_path_factory.mktemp("wide") / "wide.parquet"
    t.to_parquet(path)
    return path


@pytest.mark.parametrize("option, value, role, closest", [
    ("--require", "thruput>=10", "constraint", "throughput"),
    ("--criteria", "cost_usdd:min", "criterion", "cost_usd"),
    ("--target", "time_to_train", "target", "time_to_train_min"),
])
def test_an_unknown_column_names_the_three_closest(wide, tmp_path, capsys, option, value, role,
                                                   closest):
    code = main(["analyze", str(wide), "--out", str(tmp_path / "out"), option, value])
    assert code in (2, 3)
    line = _one_line(capsys)
    assert f"{role} column '{value.split('>')[0].split(':')[0]}' is not in the table" in line
    names = line.split("columns: ", 1)[1].split(", ")
    assert len(names) == 3 and names[0] == closest, line
    assert "counter_0000" not in line and len(line) < 250


def test_an_unmatched_filter_value_names_the_closest_values(capsys, tmp_path):
    t = config_table(30, seed=1).assign(accelerator_type=[f"gpu-{i}" for i in range(30)])
    with pytest.raises(DataError) as info:
        Engine(backend="cpu").analyze(t, accelerator_type="gpu-7x")
    text = str(info.value)
    assert "accelerator_type 'gpu-7x' matches no row; the table has: gpu-7, " in text
    assert text.endswith("(the closest of 30)") and text.count(",") == 2


def test_a_published_scores_file_without_its_columns_names_the_closest(tmp_path):
    from gpurank.engine.sources.mlperf.reader import read_published_scores

    csv = tmp_path / "summary.csv"
    columns = {f"col_{i}": ["x"] for i in range(40)} | {
        "round": ["v4.0"], "submiter": ["x"], "system": ["y"], "time_to_train_minutes": ["1"]}
    pd.DataFrame(columns).to_csv(csv, index=False)
    with pytest.raises(DataError) as info:
        read_published_scores(csv)
    text = str(info.value)
    assert "has no column(s) submitter; the closest of its 44 columns: submiter, " in text
    assert "col_39" not in text or text.count(",") <= 3


def test_a_report_rebuilt_from_inside_its_analysis_folder_keeps_that_folder(
        tmp_path, analysis_sets, monkeypatch):
    folder = tmp_path / "a"
    shutil.copytree(analysis_sets / "a", folder)
    monkeypatch.chdir(folder)  # the set is the current folder: it is never swapped away
    inode = folder.stat().st_ino
    assert main(["report", "ranking.parquet"]) == 0
    assert folder.stat().st_ino == inode
    consistent_set(folder)
    assert sorted(p.name for p in folder.iterdir()) == [
        "_gpurank_manifest.json", "ranking.parquet", "report.html", "summary.json"]


# -- round four: what gpurank may write over ------------------------------------------------------
def _private_nodes(tmp_path):
    """Nodes of every kind gpurank must never replace, made here (never the machine's own):
    a FIFO, a socket, and as root a character device (the numbers of /dev/null)."""
    import os
    import socket
    import stat

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    nodes = [fifo]
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "sock"))
    sock.close()
    nodes.append(tmp_path / "sock")
    if os.geteuid() == 0:
        dev = tmp_path / "null"
        os.mknod(dev, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        nodes.append(dev)
    return nodes


def _identity(path):
    import os

    st = os.lstat(path)
    return st.st_mode, st.st_ino, st.st_rdev


@pytest.mark.parametrize("overwrite", [[], ["--overwrite"]])
def test_a_device_fifo_or_socket_given_as_an_output_is_left_as_it_was(tmp_path, capsys,
                                                                      overwrite):
    for node in _private_nodes(tmp_path):
        before = _identity(node)
        assert main(["simulate", "--n", "10", "-o", str(node), *overwrite]) == 2, node
        line = _one_line(capsys)
        assert "gpurank replaces only regular files and folders" in line, line
        assert _identity(node) == before
        assert leftovers(tmp_path, node.name) == []


def test_a_folder_holding_a_fifo_is_never_replaced(tmp_path, capsys):
    import os

    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / "pipe")
    assert main(["simulate", "--n", "10", "-o", str(out), "--partitioned",
                 "--overwrite"]) == 2
    assert "holds a FIFO ('pipe')" in _one_line(capsys)
    assert (out / "pipe").exists()


def test_an_output_path_that_is_a_link_to_a_device_is_refused(tmp_path, capsys):
    node = _private_nodes(tmp_path)[-1]
    link = tmp_path / "link.parquet"
    link.symlink_to(node)
    assert main(["simulate", "--n", "10", "-o", str(link), "--overwrite"]) == 2
    assert "is a symbolic link; gpurank replaces only" in _one_line(capsys)
    assert link.is_symlink()


# -- round four: a lock that holds or refuses -----------------------------------------------------
def _lock_of(target):
    return target.parent / f".{target.name}.gpurank-lock"


@pytest.mark.parametrize("kind", ["folder", "symlink", "fifo", "read-only"])
def test_a_lock_path_that_cannot_be_locked_is_a_refusal(tmp_path, capsys, kind):
    import os

    out = tmp_path / "sweep.parquet"
    lock = _lock_of(out)
    victim = tmp_path / "victim"
    if kind == "folder":
        lock.mkdir()
    elif kind == "symlink":
        lock.symlink_to(victim)
    elif kind == "fifo":
        os.mkfifo(lock)
    else:
        lock.write_bytes(b"")
        lock.chmod(0o444)
    assert main(["simulate", "--n", "10", "-o", str(out)]) == 2
    line = _one_line(capsys)
    assert "cannot be claimed: its lock file" in line and "never writes without its lock" in line
    assert not out.exists() and not victim.exists()  # no output, the link's target not made


# -- round four: the model file read like every other input ---------------------------------------
def _model_raw():
    return json.loads(json.dumps(CalibratedModel.to_dict(_default_model())))


def _default_model():
    from gpurank.engine.sources.model.perfmodel import DEFAULT_MODEL

    return DEFAULT_MODEL


def _predict_with(tmp_path, sweep, model_path, capsys):
    code = main(["predict", str(sweep), "--model", str(model_path), "-o",
                 str(tmp_path / "p.parquet")])
    return code, _one_line(capsys)


def test_a_fifo_model_path_is_refused_without_blocking(tmp_path, sweep, capsys):
    import os

    os.mkfifo(tmp_path / "m.json")
    code, line = _predict_with(tmp_path, sweep, tmp_path / "m.json", capsys)
    assert code == 3 and "model file" in line and "is a FIFO, not a regular file" in line
    assert not (tmp_path / "p.parquet").exists()


def test_a_model_path_linked_to_a_device_is_not_read(tmp_path, sweep, capsys):
    node = _private_nodes(tmp_path)[-1]  # a device as root, else a socket
    (tmp_path / "m.json").symlink_to(node)
    code, line = _predict_with(tmp_path, sweep, tmp_path / "m.json", capsys)
    assert code == 3 and "is a link to a" in line and "not to a regular file" in line


@pytest.mark.parametrize("change, words", [
    (lambda raw: raw.__setitem__("overhead_s", 10**400), "integer of 401 digits"),
    (lambda raw: raw["fit"]["domain"].__setitem__("global_batch", "408"),
     "field 'fit.domain.global_batch' must be a range [low, high]"),
    (lambda raw: raw["fit"]["domain"].__setitem__("global_batch", [1e308, -5]),
     "field 'fit.domain.global_batch' must be a range [low, high]"),
    (lambda raw: raw.pop("fit"), "field 'fit' is missing"),
    (lambda raw: raw["fit"].pop("domain"), "field 'fit.domain' is missing"),
    (lambda raw: raw["fit"].__setitem__("n_train", "many"), "field 'fit.n_train' must be"),
])
def test_a_damaged_model_file_is_one_line_before_any_use(tmp_path, sweep, capsys, change,
                                                         words):
    raw = _model_raw()
    change(raw)
    (tmp_path / "m.json").write_text(json.dumps(raw))
    code, line = _predict_with(tmp_path, sweep, tmp_path / "m.json", capsys)
    assert code == 3 and words in line, line
    assert not (tmp_path / "p.parquet").exists()


def test_json_inputs_refuse_infinities_and_deep_nesting(tmp_path):
    from gpurank.engine.input_files import read_json

    for text, words in (('{"a": 1e999}', "beyond the range of a float64"),
                        ('{"a": NaN}', "holds NaN"), ('{"a": -Infinity}', "holds -Infinity"),
                        ("[" * 70 + "]" * 70, "nested more than 64 levels")):
        (tmp_path / "x.json").write_text(text)
        with pytest.raises(DataError, match=words):
            read_json(tmp_path / "x.json", what="file")


def test_a_table_or_catalog_that_is_a_fifo_is_refused(tmp_path, capsys):
    import os

    os.mkfifo(tmp_path / "t.csv")
    assert main(["predict", str(tmp_path / "t.csv"), "-o", str(tmp_path / "p.csv")]) == 3
    assert "is a FIFO, not a regular file" in _one_line(capsys)
    assert main(["analyze", str(tmp_path / "t.csv"), "--out", str(tmp_path / "o")]) == 3
    assert "is a FIFO, not a regular file" in _one_line(capsys)
    os.mkfifo(tmp_path / "cat.csv")
    config_table(5, seed=1).to_parquet(tmp_path / "t.parquet")
    assert main(["analyze", str(tmp_path / "t.parquet"), "--out", str(tmp_path / "o"),
                 "--predict", "--catalog", str(tmp_path / "cat.csv")]) == 3
    assert "is a FIFO, not a regular file" in _one_line(capsys)


def test_a_dataset_part_that_is_a_fifo_is_refused_in_memory(tmp_path, capsys):
    import os

    ds = tmp_path / "ds"
    ds.mkdir()
    config_table(6, seed=2).to_parquet(ds / "part-0.parquet")
    os.mkfifo(ds / "part-1.parquet")
    assert main(["analyze", str(ds), "--out", str(tmp_path / "o")]) == 3
    line = _one_line(capsys)
    assert "part" in line and "part-1.parquet' is a FIFO, not a regular file" in line
