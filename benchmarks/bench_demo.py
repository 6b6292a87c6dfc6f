"""End-to-end time of ``gpurank demo`` at its default size (200,000 configurations).

Run from the benchmarks folder (its own pytest root)::

    cd benchmarks && python -m pytest bench_demo.py --benchmark-only

``BENCH_QUICK=1`` shrinks the sweep for a smoke run. The target is under 60 s on a 2-core
machine for the default size, including the simulation; the figures go to RESULTS.md.
"""

import os

import pytest

from gpurank.engine import Engine
from gpurank.engine.sources.sweep.simulate import simulate

N = 20_000 if os.environ.get("BENCH_QUICK") == "1" else 200_000


@pytest.fixture(scope="module")
def warm():
    # Compile the Numba kernels once so the timing measures the analysis, not the JIT.
    Engine(backend="cpu").analyze(simulate(2_000, seed=1), n_estimators=5)


def test_demo_end_to_end(benchmark, warm, tmp_path):
    def run():
        eng = Engine(backend="cpu")
        result = eng.analyze(simulate(N, seed=0))
        eng.write(result, tmp_path / "demo")
        return result

    result = benchmark.pedantic(run, rounds=1, iterations=1)
    assert len(result.table) == N
    benchmark.extra_info.update({"rows": N, **{f"step_{k}_s": v for k, v in result.timings.items()}})
