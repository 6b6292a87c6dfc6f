"""Where tables come from, and the performance model that predicts what nobody has run.

Three paths lead here: MLPerf Training results read into a table (``gpurank mlperf``), the
model fitted to that table and checked on held-out rows (``gpurank calibrate``), and the
model used on configurations, to predict a table's outcomes (``gpurank predict``,
``analyze --predict``) or to draw a synthetic sweep (``gpurank simulate``). The commands
themselves are in :mod:`gpurank.engine.commands`.

From an MLPerf folder to a model::

    table = read_mlperf("training_results_v4.0/", benchmark="bert").table
    model = calibrate(table)                              # model/fit.py
    cv = cross_validate(table, by="round")                # model/validation.py
    model.to_json("bert.json")

From a model to a sweep::

    sweep = simulate(100_000, seed=0, model=CalibratedModel.from_json("bert.json"),
                     workload=workload("bert"))           # sweep/plan -> sweep/rows

Four wings over one facts floor (``tests/test_import_graph.py`` holds the layers):

===========  ================================================================================
``facts``    catalogs, the accelerator resolver, hardware and number formats, the MLPerf
             rules and the benchmark-to-workload table: what every other wing reads
``mlperf``   MLPerf result folders read into one table (discovery, logs, systems, rows,
             scoring); imports ``facts`` only
``model``    workloads, the performance model, its inputs, fit, validation, evidence,
             intervals, predictions; imports ``facts`` only
``sweep``    simulated sweeps drawn from the catalogs and evaluated by the model
===========  ================================================================================
"""

from .facts.accelerators import ResolvedAccelerator, resolve_accelerator, resolve_accelerators
from .facts.catalog import (
    accelerator_catalog,
    host_cpu_catalog,
    interconnect_catalog,
    merge_accelerator_catalog,
    price_catalog,
)
from .model.fit import calibrate
from .model.intervals import fit_interval_table, interval_table
from .mlperf.reader import MlperfReadResult, ReadWarning, read_mlperf
from .model.outcomes import predicted_outcomes
from .model.perfmodel import DEFAULT_MODEL, CalibratedModel, evaluate
from .model.predict import predict
from .sweep.simulate import estimate_size, simulate, simulate_to_parquet
from .model.validation import cross_validate
from .model.workload import Workload, resnet50
from .facts.benchmarks import workload_for_benchmark, workload_names
from .model.workloads import workload

__all__ = [
    "read_mlperf", "MlperfReadResult", "ReadWarning",
    "accelerator_catalog", "host_cpu_catalog", "interconnect_catalog", "price_catalog",
    "merge_accelerator_catalog", "resolve_accelerator", "resolve_accelerators",
    "ResolvedAccelerator",
    "Workload", "resnet50", "workload", "workload_names", "workload_for_benchmark",
    "CalibratedModel", "DEFAULT_MODEL", "evaluate",
    "calibrate", "cross_validate", "predict", "predicted_outcomes",
    "interval_table", "fit_interval_table",
    "simulate", "simulate_to_parquet", "estimate_size",
]
