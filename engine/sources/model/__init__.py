"""The performance model: workloads, the roofline equations, their fit and their predictions.

It imports the facts floor and never the MLPerf reader: it fits any table with the
calibration columns, whoever wrote it (``tests/test_import_graph.py``).

===============  ============================================================================
``workload``     :class:`Workload`: what a training job costs the model; ResNet-50's
``workloads``    the shipped workloads, one per MLPerf benchmark, and their models
``card``         a training job from its model card (TOML): fields checked, the shipped
                 formulas, the nearest calibrated workload and the interval's widening
``fit_report``   :class:`FitReport`: what a fit reports, as the model file stores it
``perfmodel``    :class:`CalibratedModel` and :func:`evaluate`, the roofline equations
``model_arrays`` the arrays the model reads: :class:`ConfigArrays`, :class:`RowFacts`
``batch_choice`` the global batch a submitter would pick (the fastest to train)
``software``     the software trend between rounds, slowing as a family ages
``inputs``       a table of configurations as the model's inputs
``evaluation``   what fit and predict share: outputs, errors, basis vocabulary, domain
``fit``          :func:`calibrate`: the model fitted to measured runs
``validation``   :func:`cross_validate` and the calibration reports
``evidence``     forward-in-time and leave-one-workload-out evidence, interval coverage
``intervals``    80% prediction intervals from held-out errors
``predict``      :func:`predict`: predicted outcomes, their bases and notes
``outcomes``     :func:`predicted_outcomes`: a configuration table made analyzable
``calibrate``    the model's API in one import (fit, cross-validation, prediction)
===============  ============================================================================
"""

__all__ = []
