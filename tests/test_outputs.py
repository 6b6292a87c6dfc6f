"""No command deletes or overwrites what it did not write; output sets are swapped in whole."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from gpurank.engine import Engine, UsageError
from gpurank.engine.cli import main
from gpurank.engine.outputs import (
    MANIFEST_NAME,
    check_target,
    clean_leftovers,
    is_gpurank_output,
    publish_file,
    publish_folder,
    read_manifest,
)

from tables import config_table


def _user_folder(path: Path) -> dict:
    path.mkdir()
    files = {"notes.txt": b"my notes", "data.csv": b"a,b\n1,2\n"}
    for name, data in files.items():
        (path / name).write_bytes(data)
    return files


def _assert_untouched(path: Path, files: dict) -> None:
    assert path.is_dir()
    assert {p.name: p.read_bytes() for p in path.iterdir()} == files


@pytest.mark.parametrize("extra", [[], ["--partitioned"]])
def test_simulate_refuses_a_folder_of_user_files(tmp_path, capsys, extra):
    target = tmp_path / "mine"
    files = _user_folder(target)
    code = main(["simulate", "--n", "300", "-o", str(target), *extra])
    err = capsys.readouterr().err
    assert code == 2
    assert "exists and was not written by gpurank" in err or "is a folder" in err
    assert err.count("\n") == 1
    _assert_untouched(target, files)


def test_simulate_refuses_the_current_folder(tmp_path, capsys, monkeypatch):
    files = _user_folder(tmp_path / "cwd")
    monkeypatch.chdir(tmp_path / "cwd")
    for target in (".", str(tmp_path / "cwd"), "..", "/"):
        for extra in ([], ["--partitioned"], ["--overwrite", "--partitioned"]):
            code = main(["simulate", "--n", "300", "-o", target, *extra])
            assert code == 2, (target, extra)
            assert "current folder" in capsys.readouterr().err or target == "/"
    _assert_untouched(tmp_path / "cwd", files)


def test_simulate_refuses_a_user_file_and_replaces_it_with_overwrite(tmp_path, capsys):
    target = tmp_path / "sweep.parquet"
    pd.DataFrame({"x": [1, 2]}).to_parquet(target)  # a Parquet file gpurank did not write
    before = target.read_bytes()
    assert main(["simulate", "--n", "300", "-o", str(target)]) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert target.read_bytes() == before
    assert main(["simulate", "--n", "300", "-o", str(target), "--overwrite"]) == 0
    assert len(pd.read_parquet(target)) > 0
    # Now it is gpurank's output: a second run replaces it without --overwrite.
    assert main(["simulate", "--n", "200", "-o", str(target)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sweep.parquet"]


def test_simulate_replaces_its_own_dataset_whole(tmp_path):
    target = tmp_path / "sweep"
    assert main(["simulate", "--n", "3000", "--row-group-rows", "500", "--partitioned",
                 "-o", str(target)]) == 0
    first = sorted(p.name for p in target.iterdir())
    assert MANIFEST_NAME in first and len([n for n in first if n.endswith(".parquet")]) >= 5
    assert main(["simulate", "--n", "900", "--row-group-rows", "500", "--partitioned",
                 "-o", str(target)]) == 0
    parts = sorted(p.name for p in target.iterdir() if p.name.endswith(".parquet"))
    assert parts == ["part-00000.parquet", "part-00001.parquet"]  # no stale part survives
    assert read_manifest(target)["rows"] == len(pd.read_parquet(target))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sweep"]


def test_analyze_refuses_a_user_folder_before_running(tmp_path, capsys):
    src = tmp_path / "t.parquet"
    config_table(40, seed=1).to_parquet(src)
    target = tmp_path / "mine"
    files = _user_folder(target)
    assert main(["analyze", str(src), "--out", str(target), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "--out" in err and "--overwrite" in err
    _assert_untouched(target, files)
    (tmp_path / "afile").write_text("x")
    assert main(["analyze", str(src), "--out", str(tmp_path / "afile"), "--quiet"]) == 2
    assert "is a file" in capsys.readouterr().err
    assert (tmp_path / "afile").read_text() == "x"


def test_no_report_run_leaves_no_older_report(tmp_path):
    src = tmp_path / "t.parquet"
    config_table(40, seed=1).to_parquet(src)
    out = tmp_path / "out"
    assert main(["analyze", str(src), "--out", str(out), "--quiet"]) == 0
    assert (out / "report.html").is_file()
    assert main(["analyze", str(src), "--out", str(out), "--quiet", "--no-report"]) == 0
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST_NAME, "ranking.parquet",
                                                     "summary.json"]
    manifest = read_manifest(out)
    summary = json.loads((out / "summary.json").read_text())
    assert manifest["run_id"] == summary["run_id"]
    assert set(manifest["files"]) == {"ranking.parquet", "summary.json"}


def test_empty_folder_is_used(tmp_path):
    out = tmp_path / "empty"
    out.mkdir()
    res = Engine(backend="cpu").analyze(config_table(30, seed=2), n_estimators=5,
                                        k_range=(2, 3))
    Engine(backend="cpu").write(res, out, report=False)
    assert (out / "ranking.parquet").is_file()


def test_publish_failure_keeps_the_old_set(tmp_path):
    target = tmp_path / "set"
    with publish_folder(target, kind="test") as pub:
        (pub.path / "a.txt").write_text("old")
    with pytest.raises(RuntimeError):
        with publish_folder(target, kind="test") as pub:
            (pub.path / "a.txt").write_text("new")
            (pub.path / "b.txt").write_text("new")
            raise RuntimeError("boom")
    assert sorted(p.name for p in target.iterdir()) == [MANIFEST_NAME, "a.txt"]
    assert (target / "a.txt").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["set"]


def test_leftovers_of_dead_runs_are_removed_and_reported(tmp_path):
    target = tmp_path / "set"
    with publish_folder(target, kind="test") as pub:
        (pub.path / "a.txt").write_text("old")
    dead = _dead_pid()
    staged = tmp_path / f".set.gpurank-staging-{dead}-0123abcd"
    staged.mkdir()
    (staged / ".gpurank-staging").write_bytes(b"")
    (staged / "big.bin").write_bytes(b"x" * 5000)
    stray_file = tmp_path / f".set.gpurank-staging-{dead}-89abcdef"
    stray_file.write_bytes(b"y" * 10)
    # Not ours: no marker inside, or a live process, or another name.
    foreign = tmp_path / f".set.gpurank-staging-{dead}-fedcba98"
    foreign.mkdir()
    (foreign / "theirs.txt").write_text("not gpurank's")
    empty = tmp_path / f".set.gpurank-staging-{dead}-0000aaaa"
    empty.mkdir()  # killed between making its staging folder and marking it
    alive = tmp_path / f".set.gpurank-staging-{os.getpid()}-00000000"
    alive.write_bytes(b"z")
    other = tmp_path / f".other.gpurank-staging-{dead}-11111111"
    other.write_bytes(b"w")
    notes = clean_leftovers(target)
    assert len(notes) == 3 and all("interrupted run" in n for n in notes)
    assert not staged.exists() and not stray_file.exists() and not empty.exists()
    assert foreign.exists() and alive.exists() and other.exists()


def test_a_set_moved_aside_by_an_interrupted_swap_is_restored(tmp_path):
    target = tmp_path / "set"
    with publish_folder(target, kind="test") as pub:
        (pub.path / "a.txt").write_text("old")
    aside = tmp_path / f".set.gpurank-old-{_dead_pid()}-0123abcd"
    os.rename(target, aside)
    notes = clean_leftovers(target)
    assert notes and "restored" in notes[0]
    assert (target / "a.txt").read_text() == "old" and not aside.exists()


def test_ownership_markers(tmp_path):
    assert is_gpurank_output(tmp_path / "missing") is False
    (tmp_path / "e").mkdir()
    assert is_gpurank_output(tmp_path / "e")
    with publish_file(tmp_path / "r.html") as pub:
        pub.path.write_text('<html><head><meta name="generator" content="gpurank 1">')
    assert is_gpurank_output(tmp_path / "r.html")
    (tmp_path / "u.html").write_text("<html>")
    assert not is_gpurank_output(tmp_path / "u.html")
    (tmp_path / "m.json").write_text(json.dumps({"format": "gpurank.CalibratedModel"}))
    (tmp_path / "o.json").write_text(json.dumps({"format": "other"}))
    assert is_gpurank_output(tmp_path / "m.json") and not is_gpurank_output(tmp_path / "o.json")
    with pytest.raises(UsageError, match="was not written by gpurank"):
        check_target(tmp_path / "o.json", name="--output")
    check_target(tmp_path / "o.json", name="--output", overwrite=True)
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "e")
    with pytest.raises(UsageError, match="symbolic link"):
        check_target(link, name="--out", folder=True)


def test_calibrate_and_report_refuse_user_files(tmp_path, capsys):
    model = tmp_path / "model.json"
    model.write_text('{"mine": 1}')
    assert main(["calibrate", str(tmp_path / "none.parquet"), "-o", str(model)]) == 2
    assert "not written by gpurank" in capsys.readouterr().err
    assert model.read_text() == '{"mine": 1}'


def _dead_pid() -> int:
    """A process id that is not running (a child that has exited and been reaped)."""
    import subprocess
    import sys

    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_sigterm_during_a_write_leaves_nothing_behind(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    target = tmp_path / "big.parquet"
    proc = subprocess.Popen([sys.executable, "-m", "gpurank.engine", "simulate", "--n",
                             "50000000", "--row-group-rows", "100000", "-o", str(target)],
                            cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not any(p.name.startswith(".big.parquet.gpurank-staging") for p in
                  tmp_path.iterdir()):
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 128 + signal.SIGTERM
    assert list(tmp_path.iterdir()) == []
