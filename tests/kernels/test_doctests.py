"""The examples in the kernels' docstrings run and print what they say: every module under
``kernels/`` whose source holds ``>>>`` (the CUDA ones under the simulator; the engine's
examples run in ``tests/test_docstrings.py``)."""

from __future__ import annotations

import doctest
import importlib

import numpy as np
import pytest
from doc_examples import modules_with_examples

EXAMPLES = modules_with_examples("kernels")
#: The kernel modules of each implementation, each of whose kernels carries an example.
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


def test_every_module_with_examples_is_run():
    assert set(HOST) | set(CUDA) <= set(EXAMPLES)
    assert "gpurank.kernels._smaa" in EXAMPLES and "gpurank.kernels.cpu.ranges" in EXAMPLES


@pytest.mark.parametrize("name", [n for n in EXAMPLES if not n.startswith("gpurank.kernels.cuda")])
def test_host_examples(name):
    _run(name)


@pytest.mark.parametrize("name", [n for n in EXAMPLES if n.startswith("gpurank.kernels.cuda")])
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
