"""Where tables come from, and the performance model that predicts what nobody has run.

Three paths lead here: MLPerf Training results read into a table (``gpurank mlperf``), the
model fitted to that table and checked on held-out rows (``gpurank calibrate``), and the
model used on configurations, to predict a table's outcomes (``gpurank predict``,
``analyze --predict``) or to draw a synthetic sweep (``gpurank simulate``). The commands
themselves are in :mod:`gpurank.engine.commands`.

From an MLPerf folder to a model::

    table = read_mlperf("training_results_v4.0/", benchmark="bert").table
    model = calibrate(table)                              # fit.py
    cv = cross_validate(table, by="round")                # validation.py
    model.to_json("bert.json")

From a model to a sweep::

    sweep = simulate(100_000, seed=0, model=CalibratedModel.from_json("bert.json"),
                     workload=workload("bert"))           # simulate_plan -> simulate_rows

=====================  =====================================================================
**MLPerf results**
``mlperf``             :func:`read_mlperf`: one row per (round, submitter, system,
                       benchmark), every problem a :class:`ReadWarning`
``mlperf_discovery``   rounds, submitters, systems and benchmark folders of a results tree
``mlperf_rows``        one system's row: description, runs, score, convergence, catalog facts
``mlperf_scoring``     the olympic score of the runs; published scores and run times
``mlperf_logs``        one result log (``result_*.txt``) parsed into a ``RunLog``
``mlperf_systems``     one system description parsed into flat fields
``mlperf_rules``       each benchmark's scoring rule, reference convergence and log units
``regular_files``      reading files of a tree someone else made (size limits, no links)
**Facts**
``catalog``            the shipped fact tables: accelerators, interconnects, host CPUs,
                       prices, ResNet-50's epochs against batch; a user's merged over them
``accelerators``       one resolver from an accelerator's name to its catalog row
``hardware``           the hardware facts the model reads, per row
``workloads``          the shipped workloads, one per MLPerf benchmark, and their models
**The model**
``workload``           :class:`Workload`: what a training job costs the model
``perfmodel``          :class:`CalibratedModel` and :func:`evaluate`, the roofline equations
``configs``            a table of configurations as the model's inputs
``fit``                :func:`calibrate`: the model fitted to measured runs
``validation``         :func:`cross_validate` and the calibration reports
``evidence``           forward-in-time and leave-one-workload-out evidence, interval coverage
``intervals``          80% prediction intervals from held-out errors
``predict``            :func:`predict`: predicted outcomes, their bases and notes
``outcomes``           :func:`predicted_outcomes`: a configuration table made analyzable
``calibrate``          the model's API in one import (fit, cross-validation, prediction)
**Sweeps**
``simulate``           :func:`simulate` (in memory), :func:`simulate_to_parquet` (streamed)
``simulate_plan``      the catalogs and options read once into the arrays every chunk draws
``simulate_rows``      one logical chunk of rows: draws, outcomes, exclusions, the frame
``simulate_writer``    the Parquet row-group writer and the size checks
=====================  =====================================================================
"""

from .accelerators import ResolvedAccelerator, resolve_accelerator, resolve_accelerators
from .catalog import (
    accelerator_catalog,
    host_cpu_catalog,
    interconnect_catalog,
    merge_accelerator_catalog,
    price_catalog,
)
from .fit import calibrate
from .intervals import fit_interval_table, interval_table
from .mlperf import MlperfReadResult, ReadWarning, read_mlperf
from .outcomes import predicted_outcomes
from .perfmodel import DEFAULT_MODEL, CalibratedModel, evaluate
from .predict import predict
from .simulate import estimate_size, simulate, simulate_to_parquet
from .validation import cross_validate
from .workload import Workload, resnet50
from .workloads import workload, workload_for_benchmark, workload_names

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
