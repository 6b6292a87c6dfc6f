"""One writer at a time per output path, across real processes, and locks left by kill -9.

Two ``gpurank analyze`` runs into one ``--out`` both used to exit 0, and one run's work was
lost without a word. Now the second is refused at once (exit 2) naming the first's process
id and start time; a lock whose process was killed is taken over with a note.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from gpurank.engine import Engine
from gpurank.engine.cli import main
from gpurank.engine.errors import UsageError
from gpurank.engine.writelock import _start_text, claim, lock_path, process_start
from output_sets import consistent_set, leftovers
from tables import config_table

#: A process that holds the claim on argv[1] until its stdin closes.
HOLD = r"""
import sys
from gpurank.engine.writelock import claim
with claim(sys.argv[1], name="--out"):
    print("held", flush=True)
    sys.stdin.read()
"""

#: ``gpurank ARGS`` whose analysis waits, after the command has claimed its outputs, until
#: stdin closes.
SLOW_CLI = r"""
import sys
from gpurank.engine import api
real = api.Engine.analyze
def analyze(self, *args, **kwargs):
    print("analyzing", flush=True)
    sys.stdin.read()
    return real(self, *args, **kwargs)
api.Engine.analyze = analyze
from gpurank.engine.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _start(script, *args, ready):
    proc = subprocess.Popen([sys.executable, "-c", script, *map(str, args)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    assert line.strip() == ready, (line, proc.stderr.read() if proc.poll() is not None else "")
    return proc


def _gpurank(*args, cwd):
    return subprocess.run([sys.executable, "-m", "gpurank.engine", *map(str, args)],
                          capture_output=True, text=True, timeout=300, cwd=cwd)


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "t.parquet"
    config_table(30, seed=1).to_parquet(path)
    return path


def test_a_second_analyze_into_a_live_runs_out_fails_at_once_naming_it(tmp_path, table):
    out = tmp_path / "out"
    first = _start(SLOW_CLI, "analyze", table, "--out", out, "--quiet", "--no-report",
                   ready="analyzing")
    try:
        second = _gpurank("analyze", table, "--out", out, "--no-report", cwd=tmp_path)
        assert second.returncode == 2
        assert second.stderr.count("\n") == 1, second.stderr
        started = _start_text(process_start(first.pid))
        assert (f"--out '{out}' is being written by gpurank run pid {first.pid} (started "
                f"{started})") in second.stderr
        assert not out.exists()
    finally:
        first.stdin.close()
    assert first.wait(timeout=300) == 0, first.stderr.read()
    consistent_set(out)
    assert leftovers(tmp_path, "out") == []


def test_a_lock_left_by_kill_9_is_stale_and_taken_over_with_a_note(tmp_path, table):
    out = tmp_path / "out"
    first = _start(SLOW_CLI, "analyze", table, "--out", out, "--quiet", "--no-report",
                   ready="analyzing")
    first.kill()  # SIGKILL: no cleanup runs
    first.wait(timeout=60)
    assert leftovers(tmp_path, "out") == [".out.gpurank-lock"]
    second = _gpurank("analyze", table, "--out", out, "--no-report", "--json", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert (f"note: took over the lock of '{out}' left by gpurank run pid {first.pid}"
            in second.stderr)
    assert "which is no longer running" in second.stderr
    consistent_set(out)
    assert leftovers(tmp_path, "out") == []


def test_a_lock_whose_process_id_was_reused_is_stale(tmp_path, table):
    # The recorded process id is alive (this test's parent) but started at another time:
    # another process has the id now. The flock is free: the record alone is what is left.
    lock = tmp_path / ".out.gpurank-lock"
    record = {"format": "gpurank.lock", "pid": os.getppid(),
              "start_ticks": (process_start(os.getppid()) or 0) + 12345,
              "started": "2001-01-01 00:00:00 UTC", "host": os.uname().nodename}
    lock.write_text(json.dumps(record))
    with claim(tmp_path / "out") as held:
        assert held.lock == lock
        note = (f"took over the lock of '{tmp_path / 'out'}' left by gpurank run pid "
                f"{os.getppid()} (started 2001-01-01 00:00:00 UTC), which is no longer running")
        assert held.notes == [note]
        assert json.loads(lock.read_text())["pid"] == os.getpid()
    assert not lock.exists()


@pytest.mark.parametrize("argv", [
    ["analyze", "{table}", "--out", "{target}"],
    ["demo", "--n", "50", "--out", "{target}"],
    ["simulate", "--n", "10", "-o", "{target}"],
    ["predict", "{table}", "-o", "{target}"],
    ["calibrate", "{table}", "-o", "{target}"],
    ["report", "{table}", "--out", "{target}"],
    ["mlperf", "{table}", "-o", "{target}"],
    ["study", "{table}", "-o", "{target}"],
], ids=lambda a: a[0])
def test_every_writing_command_refuses_a_target_another_process_writes(tmp_path, table, argv,
                                                                        capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "target"
    holder = _start(HOLD, target, ready="held")
    try:
        code = main([a.format(table=table, target=target) for a in argv])
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and f"gpurank run pid {holder.pid} (started " in err
    assert not target.exists()


def test_the_api_write_is_refused_while_another_process_writes(tmp_path):
    result = Engine(backend="cpu").analyze(config_table(20, seed=2), n_estimators=5,
                                           k_range=(2, 3))
    holder = _start(HOLD, tmp_path / "out", ready="held")
    try:
        with pytest.raises(UsageError, match=f"pid {holder.pid}"):
            Engine(backend="cpu").write(result, tmp_path / "out", report=False)
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    Engine(backend="cpu").write(result, tmp_path / "out", report=False)
    consistent_set(tmp_path / "out")


def test_claims_are_reentrant_in_a_process_and_removed_at_the_end(tmp_path):
    with claim(tmp_path / "out") as outer, claim(tmp_path / "out") as inner:
        assert outer.outer and not inner.outer and outer.lock == inner.lock
        assert outer.lock.exists()
    assert not (tmp_path / ".out.gpurank-lock").exists()


def test_a_file_of_an_output_set_claims_the_set(tmp_path):
    Engine(backend="cpu").write(
        Engine(backend="cpu").analyze(config_table(20, seed=2), n_estimators=5, k_range=(2, 3)),
        tmp_path / "set", report=False)
    assert lock_path(tmp_path / "set" / "report.html") == tmp_path / ".set.gpurank-lock"
    assert lock_path(tmp_path / "elsewhere.html") == tmp_path / ".elsewhere.html.gpurank-lock"
    staging = tmp_path / ".set.gpurank-staging-1-0123abcd"
    assert lock_path(staging / "ranking.parquet") is None  # its publisher holds the set
    assert lock_path(tmp_path / "missing" / "x.parquet") is None
    assert lock_path("") is None and lock_path(Path("a\x00b")) is None


def test_a_user_file_named_like_a_lock_is_never_replaced(tmp_path, table, capsys):
    mine = tmp_path / ".out.gpurank-lock"
    mine.write_text("my notes")
    code = main(["analyze", str(table), "--out", str(tmp_path / "out"), "--no-report"])
    assert code == 2
    assert "is not a gpurank lock" in capsys.readouterr().err
    assert mine.read_text() == "my notes" and not (tmp_path / "out").exists()


def test_protected_paths_get_no_lock_beside_them(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert lock_path(tmp_path) is None and lock_path(".") is None
    assert lock_path(Path.home()) is None
