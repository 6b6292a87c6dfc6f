"""Synthetic criteria matrices for the kernel tests and benchmarks (all criteria minimized).

Three shapes:

* ``independent``: i.i.d. uniform [0, 1) criteria (small fronts, ~log^(m-1) n).
* ``anticorrelated``: points scattered around the hyperplane ``sum = m/2`` (the classic
  skyline benchmark shape): large fronts, many fronts with many members.
* ``realistic``: a training-configuration sweep. Each row is a job (work size ``w``) on a
  hardware choice (speed ``h``): time ~ w/h, cost ~ time * price(h) with price growing
  faster than speed, energy ~ time * power(h), -throughput ~ -h, memory and -accuracy
  with noise. Criteria are correlated in mixed directions, as in real sweeps.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SHAPES", "make_costs", "make_topsis"]

SHAPES = ("independent", "anticorrelated", "realistic")


def make_costs(n, m, shape="independent", *, seed=0, dtype=np.float64):
    """Return an (n, m) C-contiguous array of criteria to minimize."""
    rng = np.random.default_rng(seed)
    if shape == "independent":
        x = rng.random((n, m))
    elif shape == "anticorrelated":
        d = rng.dirichlet(np.ones(m), size=n) if m > 1 else np.ones((n, 1))
        s = np.clip(rng.normal(0.5 * m, 0.05 * m, size=(n, 1)), 0.0, None)
        x = d * s + rng.normal(0.0, 0.01, size=(n, m))
    elif shape == "realistic":
        w = rng.lognormal(0.0, 1.0, n)  # work
        h = rng.lognormal(0.0, 0.6, n)  # hardware speed
        noise = lambda s: rng.lognormal(0.0, s, n)  # noqa: E731
        cols = [
            w / h * noise(0.15),  # time
            w / h * h**1.4 * noise(0.2),  # cost = time * price(h)
            w / h * h**0.8 * noise(0.25),  # energy = time * power(h)
            -h * noise(0.1),  # -throughput
            w * noise(0.3) / np.sqrt(h),  # memory per device
            -(np.log(w) + rng.normal(0.0, 0.5, n)),  # -accuracy: bigger jobs score better
        ]
        while len(cols) < m:
            cols.append(cols[len(cols) % 6] * noise(0.3))
        x = np.stack(cols[:m], axis=1) if m else np.empty((n, 0))
    else:
        raise ValueError(f"shape must be one of {SHAPES}; got {shape!r}")
    return np.ascontiguousarray(x, dtype=dtype)


def make_topsis(n, m, *, seed=0, dtype=np.float64):
    """Positive decision matrix, weights and benefit flags for TOPSIS."""
    rng = np.random.default_rng(seed)
    x = np.ascontiguousarray(rng.uniform(1.0, 100.0, size=(n, m)), dtype=dtype)
    w = rng.uniform(0.5, 2.0, m)
    b = np.arange(m) % 2 == 0
    return x, w, b
