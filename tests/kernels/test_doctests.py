"""The examples in the kernels' docstrings run and print what they say (the CUDA ones under
the simulator)."""

from __future__ import annotations

import doctest
import importlib

import numpy as np
import pytest

HOST = [
    "gpurank.kernels.reference",
    "gpurank.kernels._topsis_stats",
    "gpurank.kernels._vikor_stats",
    "gpurank.kernels.cpu.front",
    "gpurank.kernels.cpu.rank",
    "gpurank.kernels.cpu.count",
    "gpurank.kernels.cpu.topsis",
    "gpurank.kernels.cpu.vikor",
    "gpurank.kernels.cpu.select",
    "gpurank.kernels.cpu.smaa",
    "gpurank.kernels.cpu.blocks",
]
CUDA = [
    "gpurank.kernels.cuda.front",
    "gpurank.kernels.cuda.rank",
    "gpurank.kernels.cuda.count",
    "gpurank.kernels.cuda.topsis",
    "gpurank.kernels.cuda.vikor",
    "gpurank.kernels.cuda.select",
    "gpurank.kernels.cuda.smaa",
]


def _run(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, extraglobs={"np": np},
                             optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0, f"{result.failed} example(s) of {name} failed"


@pytest.mark.parametrize("name", HOST)
def test_host_examples(name):
    _run(name)


@pytest.mark.parametrize("name", CUDA)
def test_cuda_examples(cuda_impl, name):
    _run(name)


def test_every_public_kernel_has_an_example():
    """Each name a public module exports carries a doctest."""
    import gpurank.kernels as K

    missing = []
    for name in HOST + CUDA:
        if name.rsplit(".", 1)[-1].startswith("_"):
            continue  # a helper module, not a kernel module
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", []):
            obj = getattr(module, attr)
            if callable(obj) and not attr.endswith("_device") and attr != "column_sums" \
                    and ">>>" not in (obj.__doc__ or ""):
                missing.append(f"{name}.{attr}")
    assert missing == []
    assert ">>>" in K.TopsisStats.merge.__doc__
