"""Comparisons for committed files that a command generates from fitted numbers (the calibrated
models, the validation sections of docs/simulator.md, docs/mlperf-study.md).

The fits behind them are deterministic on one machine but not across machines: NumPy and BLAS
pick vector kernels by CPU, so sums round differently and an optimizer stops a few ulps of its
tolerance away. A held-out error of -52.85% printed -52.9 on one CPU and -52.8 on another, and a
fitted arithmetic intensity of 95.1047 came out 2e-7 apart. These comparisons accept exactly
that much and nothing else: same text, same structure, same integers and strings.
"""

from __future__ import annotations

import math
import re

_NUMBER = re.compile(r"[-+]?\d+\.\d+")

# Two fits of the same data on different CPUs agree to about 1e-6 relative (measured: 2.2e-7 on
# the fitted parameters, 1.5e-5 on a 90th-percentile error); a stale model (other data, other
# code) moves its parameters by far more than this. An error of 0.1214% moved by 1.3e-5
# percentage points, 1.1e-4 relative: errors take an absolute tolerance (ERROR_ATOL).
FIT_RTOL = 1e-4
ERROR_ATOL = 1e-3  # percentage points; reports print errors to 0.1


def same_report(doc: str, fresh: str) -> bool:
    """The same text, each decimal figure within one unit of its last printed digit."""
    if _NUMBER.sub("#", doc) != _NUMBER.sub("#", fresh):
        return False
    for x, y in zip(_NUMBER.findall(doc), _NUMBER.findall(fresh)):
        places = len(x.split(".")[1])
        if places != len(y.split(".")[1]) or abs(float(x) - float(y)) > 1.0001 * 10.0**-places:
            return False
    return True


def fit_differences(a, b, *, rtol: float = FIT_RTOL, atol: dict[str, float] | None = None,
                    path: str = "", key: str = "") -> list[str]:
    """Where two JSON-like values differ beyond fit noise: floats within ``rtol`` relative (or
    within ``atol[name]`` absolute for the values under a key of that name, for figures such as
    percentage errors that sit near zero, where a relative tolerance means nothing),
    everything else exactly (keys, lengths, integers, strings, booleans, None). Empty when
    they agree."""
    atol = atol or {}
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return [f"{path or '.'}: keys {sorted(set(a) ^ set(b))} in one only"]
        return [d for k in sorted(a) for d in fit_differences(a[k], b[k], rtol=rtol, atol=atol,
                                                              path=f"{path}.{k}", key=k)]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items against {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b))
                for d in fit_differences(x, y, rtol=rtol, atol=atol, path=f"{path}[{i}]",
                                         key=key)]
    if type(a) is float or type(b) is float:
        if (isinstance(a, (int, float)) and isinstance(b, (int, float))
                and not isinstance(a, bool) and not isinstance(b, bool)
                and math.isclose(a, b, rel_tol=rtol, abs_tol=atol.get(key, 0.0))):
            return []
        return [f"{path}: {a!r} against {b!r}"]
    return [] if (type(a) is type(b) and a == b) else [f"{path}: {a!r} against {b!r}"]
