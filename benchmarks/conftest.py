"""pytest root for the benchmarks (never part of the default test run).

BENCH_QUICK=1 shrinks every size to a smoke run that still checks the answers agree.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

QUICK = os.environ.get("BENCH_QUICK") == "1"
