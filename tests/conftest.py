"""Test-wide setup.

The CUDA kernels run under Numba's CUDA simulator unless GPURANK_REAL_GPU=1 says a real device
should be used. The variable must be set before numba is first imported, hence here.
"""

import os

import pytest

if os.environ.get("GPURANK_REAL_GPU") != "1":
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")


def pytest_addoption(parser):
    parser.addoption(
        "--long", action="store_true", default=False,
        help="run the CLI fuzzer (tests/test_fuzz_cli.py) long: 25 times the examples of CI, "
             "from fresh random seeds, shrinking what fails")


@pytest.fixture(scope="module")
def strict():
    """The strict stand-in backend: the simulator's kernels, or a real device's with
    GPURANK_REAL_GPU=1; skipped where Numba can run neither."""
    # imported here: the environment above must be set before gpurank imports numba
    from gpurank.engine.backend import strict_device_backend
    from gpurank.engine.errors import BackendUnavailableError

    try:
        return strict_device_backend()
    except BackendUnavailableError as exc:
        pytest.skip(str(exc))
