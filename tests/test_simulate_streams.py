"""The sweep's named random streams draw what the positional streams drew
(tests/test_simulate_streams.py)."""

from __future__ import annotations

import hashlib

import numpy as np

from gpurank.engine.sources.sweep.rows import (
    LOGICAL_CHUNK,
    NORMAL_STREAMS,
    UNIFORM_STREAMS,
    draw_streams,
)
from gpurank.engine.sources.sweep.simulate import simulate

#: The drawn configuration columns of ``simulate(20000, seed=3)`` (ResNet-50, the built-in
#: catalogs) as the positional streams ``u[0]``..``u[9]`` drew them (commit 3c348d1). They
#: depend on the draws and the catalogs only, not on the fitted model; a catalog change
#: changes them on purpose (and this hash with it).
_CONFIG_COLUMNS = ["accelerator_id", "n_accelerators", "n_nodes", "accelerators_per_node",
                   "host_cpu", "cpu_cores_per_accelerator", "interconnect", "network",
                   "framework", "input_pipeline", "provider", "price_per_accelerator_hour",
                   "local_batch_size", "global_batch_size"]
_SEED3_SHA256 = "d3d10f86c49d1d3e576a11293ea88816b42241a6947af500138036e63ca06a9b"


def _config_hash(df) -> str:
    text = df[_CONFIG_COLUMNS].astype(str).to_csv(index=False)
    return hashlib.sha256(text.encode()).hexdigest()


def test_named_streams_are_the_positional_draws():
    """Each named stream is its position's row of the one draw, for a full and a short
    chunk, and the normals follow all ten uniforms."""
    for k, rows in ((0, LOGICAL_CHUNK), (3, 17), (1, 0)):
        s = draw_streams(5, k, rows)
        rng = np.random.Generator(np.random.Philox(np.random.SeedSequence(5, spawn_key=(k,))))
        u = rng.random((10, LOGICAL_CHUNK))[:, :rows]
        z = np.clip(rng.standard_normal((2, LOGICAL_CHUNK))[:, :rows], -3.0, 3.0)
        for i, name in enumerate(UNIFORM_STREAMS):
            assert getattr(s, name).tobytes() == u[i].tobytes(), name
        for i, name in enumerate(NORMAL_STREAMS):
            assert getattr(s, name).tobytes() == z[i].tobytes(), name
    assert len(set(UNIFORM_STREAMS + NORMAL_STREAMS)) == 12


def test_seed_3_sweep_draws_as_before():
    df = simulate(20000, seed=3)
    assert len(df) == 20000
    assert _config_hash(df) == _SEED3_SHA256
