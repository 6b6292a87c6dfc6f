"""What an output path must hold after any run: one complete, consistent set.

Shared by the crash tests (a kill or a full disk at every step of a write) and the CLI
fuzzer (random tables and arguments): after either, an output folder holds every file its
manifest lists, with its size, and nothing else, and the run ids of the manifest, the
summary, the ranking's Parquet metadata and the report agree.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow.parquet as pq
from gpurank.engine.outputs import MANIFEST_NAME, read_manifest


def consistent_set(folder: Path) -> str:
    """The run id of the complete set in ``folder``; fails on anything else."""
    assert folder.is_dir(), f"{folder} is missing"
    manifest = read_manifest(folder)
    assert manifest is not None, f"{folder} has no manifest: {sorted(folder.iterdir())}"
    files = {p.relative_to(folder).as_posix(): p.stat().st_size
             for p in folder.rglob("*") if p.is_file() and p.name != MANIFEST_NAME}
    assert files == manifest["files"], (files, manifest["files"])
    run = manifest["run_id"]
    if "summary.json" in files:
        assert json.loads((folder / "summary.json").read_text())["run_id"] == run
    if "ranking.parquet" in files:
        meta = json.loads(pq.read_schema(folder / "ranking.parquet").metadata[b"gpurank"])
        assert meta["run_id"] == run
    if "report.html" in files:
        html = (folder / "report.html").read_text()
        assert re.search(r'name="gpurank-run-id" content="([0-9a-f]+)"', html)[1] == run
    return run


def leftovers(parent: Path, name: str) -> list:
    """What gpurank left beside ``parent / name``: staging paths, moved-aside sets, locks."""
    return sorted(p.name for p in parent.iterdir() if p.name.startswith(f".{name}.gpurank-"))
