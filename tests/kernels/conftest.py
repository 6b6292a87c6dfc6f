"""Fixtures for the kernel tests: the implementations under test."""

from __future__ import annotations

import importlib

import pytest


def _load(name):
    return importlib.import_module(f"gpurank.kernels.{name}")


@pytest.fixture(params=["reference", "cpu"])
def host_impl(request):
    """The implementations that run on the host at any size we test."""
    return _load(request.param)


@pytest.fixture(scope="session")
def cuda_impl():
    """gpurank.kernels.cuda, on the simulator unless GPURANK_REAL_GPU=1."""
    mod = _load("cuda")
    if not mod.is_available():
        pytest.skip("no CUDA device and the Numba CUDA simulator is not enabled")
    return mod
