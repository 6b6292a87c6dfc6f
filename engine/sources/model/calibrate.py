"""The one import point of the performance model's API: fit, cross-validation, prediction.

:func:`calibrate` fits the model (:mod:`.fit`), :func:`cross_validate` and the reports hold
rows out (:mod:`.validation`), :func:`predict` adds ``predicted_*`` columns, intervals, bases
and notes to a table (:mod:`.predict`); ``gpurank calibrate`` and ``gpurank predict`` run
them (:mod:`gpurank.engine.commands.calibrate`). The names below re-export that API, so
``from gpurank.engine.sources.model.calibrate import calibrate, predict`` works.

Input tables use the canonical columns: ``accelerator, n_accelerators, n_nodes,
accelerators_per_node, host_cpu, cpu_cores_per_accelerator, interconnect, network, framework,
global_batch_size, epochs, time_to_train_min, throughput`` (+ ``round`` to split train/test,
+ optional ``price_per_accelerator_hour``, ``accelerator_id``, ``input_pipeline``,
``precision``, per-row hardware facts (:mod:`.hardware`), and the reader's ``division`` and
``is_duplicate``).
"""

from __future__ import annotations

from .inputs import REQUIRED_PREDICT_COLUMNS
from .fit import REQUIRED_CALIBRATE_COLUMNS, calibrate
from .perfmodel import CalibratedModel
from .evaluation import BOTTLENECKS, PREDICTED, fit_errors, workload_of
from .predict import predict
from .validation import cross_validate, cv_summary

__all__ = [
    "CalibratedModel",
    "calibrate",
    "predict",
    "fit_errors",
    "cross_validate",
    "cv_summary",
    "REQUIRED_PREDICT_COLUMNS",
    "REQUIRED_CALIBRATE_COLUMNS",
    "PREDICTED",
    "BOTTLENECKS",
    "workload_of",
]
