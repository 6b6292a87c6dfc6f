"""Test-wide setup.

The CUDA kernels run under Numba's CUDA simulator unless GPURANK_REAL_GPU=1 says a real device
should be used. The variable must be set before numba is first imported, hence here.
"""

import os

if os.environ.get("GPURANK_REAL_GPU") != "1":
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
