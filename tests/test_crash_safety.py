"""Kills and full disks at every step of a write: an output path holds one consistent set.

For each step k of a write (see tests/faults.py), a child is killed (or its disk fills up)
at step k, and then:

- the target holds the old set or the new set, complete and consistent (every file the
  manifest lists, with its size, nothing else; the run id of the manifest, the summary,
  the Parquet metadata and the report agree), never a mix and never nothing;
- the next run succeeds, removes what the killed run left beside the target, and leaves
  nothing behind itself.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from faults import in_forked_child
from gpurank.engine import Engine
from output_sets import consistent_set, leftovers
from tables import config_table


@pytest.fixture(scope="module")
def results():
    df = config_table(60, seed=4)
    eng = Engine(backend="cpu")
    old = eng.analyze(df, n_estimators=5, top=3, k_range=(2, 3))
    new = eng.analyze(df, n_estimators=5, top=6, k_range=(2, 3), criteria="time_to_train_min:min,"
                      "cost_usd:min")
    return old, new


@pytest.fixture
def quick_report(monkeypatch):
    """The report's figures cost seconds and carry no file-system step: draw them once."""
    from gpurank.engine.report import html

    page = html.build_report(config_table(5).assign(cluster=0, pareto_rank=0,
                                                    domination_count=0, topsis_score=0.5,
                                                    rank=range(1, 6)),
                             {"run_id": "RUNID", "rows": 5})
    monkeypatch.setattr(html, "build_report",
                        lambda table, summary, **kw: page.replace("RUNID", summary["run_id"]))


@pytest.mark.parametrize("mode, report", [("kill", True), ("kill", False), ("full", True)])
def test_analysis_set_survives_a_fault_at_every_step(tmp_path, results, quick_report, mode,
                                                     report):
    old, new = results
    out = tmp_path / "out"
    Engine(backend="cpu").write(old, out)  # the old set has a report; the new may not
    old_id = consistent_set(out)
    backup = tmp_path / "backup"
    shutil.copytree(out, backup)

    def write():
        Engine(backend="cpu").write(new, out, report=report)

    killed, steps, code = in_forked_child(write, 0)
    assert not killed and code == 0
    consistent_set(out)
    assert steps >= 5
    for k in range(1, steps + 1):
        shutil.rmtree(out)
        for name in leftovers(tmp_path, "out"):
            shutil.rmtree(tmp_path / name, ignore_errors=True)
            (tmp_path / name).unlink(missing_ok=True)
        shutil.copytree(backup, out)
        killed, _, code = in_forked_child(write, k, mode)
        assert killed == (mode == "kill"), (k, code)
        if mode == "full":
            # Either the full disk surfaces as an OSError and the old set stays, with no
            # staging left behind, or the step tolerated it (an existing parent folder, or
            # the removal of the replaced set, reported and left to the next run).
            assert code in (0, 3), (k, code)
            assert (consistent_set(out) == old_id) == (code == 3), k
            if code == 3:
                assert leftovers(tmp_path, "out") == [], f"step {k}: staging left behind"
        run = consistent_set(out)
        assert run == old_id or _is_new(out, report), k
        # The next run cleans up after the killed one and leaves nothing of its own.
        Engine(backend="cpu").write(new, out, report=report)
        assert leftovers(tmp_path, "out") == [], k
        assert consistent_set(out) != old_id and _is_new(out, report)


def _is_new(out: Path, report: bool) -> bool:
    names = {p.name for p in out.iterdir()}
    summary = json.loads((out / "summary.json").read_text())
    return summary["settings"]["top"] == 6 and ("report.html" in names) == report


@pytest.mark.parametrize("partitioned", [True, False])
def test_simulate_output_survives_a_kill_at_every_step(tmp_path, monkeypatch, partitioned):
    from gpurank.engine.cli import main

    monkeypatch.chdir(tmp_path)
    name = "sweep" if partitioned else "sweep.parquet"
    target = tmp_path / name
    base = ["simulate", "--row-group-rows", "500", "-o", name] + (
        ["--partitioned"] if partitioned else [])
    assert main(base + ["--n", "1200", "--seed", "1"]) == 0
    old = pd.read_parquet(target)
    backup = tmp_path / "backup"
    (shutil.copytree if partitioned else shutil.copy2)(target, backup)
    argv = base + ["--n", "2100", "--seed", "2"]

    def run():
        if main(argv) != 0:
            raise RuntimeError("simulate failed")

    killed, steps, code = in_forked_child(run, 0)
    assert code == 0
    new = pd.read_parquet(target)
    assert len(new) != len(old)
    for k in range(1, steps + 1):
        _restore(target, backup, partitioned)
        for n in leftovers(tmp_path, name):
            p = tmp_path / n
            shutil.rmtree(p) if p.is_dir() else p.unlink()
        killed, _, _ = in_forked_child(run, k, "kill")
        assert killed, k
        got = pd.read_parquet(target)  # always readable: the old or the new output
        assert len(got) in (len(old), len(new)), k
        if partitioned:
            consistent_set(target)
        assert main(argv) == 0
        assert leftovers(tmp_path, name) == [], k
        assert len(pd.read_parquet(target)) == len(new)


def _restore(target, backup, partitioned):
    if target.is_dir():
        shutil.rmtree(target)
    elif target.exists():
        target.unlink()
    (shutil.copytree if partitioned else shutil.copy2)(backup, target)
