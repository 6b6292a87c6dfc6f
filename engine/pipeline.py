"""The analysis as one sequence of steps, written once for every driver.

``Engine.analyze`` runs these functions on one table; the Dask driver
(:mod:`gpurank.engine.distributed`) runs the same functions on each partition, or on a seeded
sample of the dataset, and adds only what crosses partitions. Each step takes a table (the
backend's frame), the :class:`~gpurank.engine.spec.AnalysisSpec` and the backend, appends
what the user should know to ``notes``, and returns host results::

    columns ──► resolve_criteria / resolve_target
    table ────► prepare_rows (prepare.py) ──► importance_step ──► cluster_step ──► rank_step
                     │                                                          ▲     └─► robust_step
                     └─► start_ranks (on the CPU they run beside the two) ──────┘

A step that cannot run on the table (too few rows, no feature, no target) is skipped with a
note; a step the user asked for explicitly that cannot run is an error.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import replace

from .clustering import fit_cluster_model, profile_clusters
from .errors import SchemaError
from .importance import default_features, feature_importance
from .metrics import plan_metrics
from .ranking import check_rank_input, pareto_ranks, rank_configurations
from .results import ClusterResult
from .robust import robust_from_costs_spec, uncertainty_of
from .schema import closest_names, require_columns
from .spec import default_criteria, default_target

__all__ = ["resolve_criteria", "resolve_target", "importance_step", "cluster_step", "start_ranks",
           "rank_step", "robust_step", "MIN_IMPORTANCE_ROWS", "analyzed_columns", "with_criteria",
           "check_target_column", "StepTimer"]

#: Fewer rows than this cannot support a forest with a held-out quarter.
MIN_IMPORTANCE_ROWS = 10


def analyzed_columns(columns) -> tuple[str, ...]:
    """The columns a table will have once its derived metrics are added."""
    derived, _ = plan_metrics(columns)
    cols = list(columns)
    return tuple(cols + [m for m in derived if m not in cols])


def resolve_criteria(spec, columns) -> tuple:
    """The criteria of this analysis: the spec's, or the defaults the table supports."""
    if spec.criteria:
        return tuple(spec.criteria)
    return default_criteria(analyzed_columns(columns))


def resolve_target(spec, columns) -> str | None:
    """The forest's target: the spec's, or the default the table supports (None: none)."""
    if spec.target is not None:
        return spec.target
    return default_target(analyzed_columns(columns))


def importance_step(frame, spec, target, *, backend, notes):
    """Random-forest importance on ``frame`` (all analyzed rows, or a sample of them), or
    None with a note when the table cannot support it.

    Raises
    ------
    SchemaError
        ``spec.target`` names a column that is not in the table.
    """
    n = len(frame)
    if target is None:
        notes.append("importance skipped: the table has neither throughput_per_accelerator nor "
                     "time_to_train_min; name a target column (--target)")
        return None
    if target not in frame.columns:
        if spec.target is not None:
            require_columns(frame, [target], role="target")
        notes.append(f"importance skipped: the table has no '{target}' column")
        return None
    if n < MIN_IMPORTANCE_ROWS:
        notes.append(f"importance skipped: {n} rows are too few to fit a forest (need "
                     f"{MIN_IMPORTANCE_ROWS})")
        return None
    if spec.features is None and not default_features(frame, target=target):
        notes.append("importance skipped: the table has no configuration variable to explain "
                     f"'{target}' with (accelerator, n_accelerators, host_cpu, ...)")
        return None
    result = feature_importance(frame, target=target, backend=backend, features=spec.features,
                                sample_rows=spec.sample_rows, seed=spec.seed,
                                n_estimators=spec.n_estimators)
    if result.note:
        notes.append(f"importance: {result.note}")
    return result


def cluster_step(frame, spec, criteria, *, backend, notes):
    """Fit the grouping on ``frame`` (:func:`~gpurank.engine.clustering.fit_cluster_model`):
    the model (which labels other rows too) and the
    :class:`~gpurank.engine.results.ClusterResult` of ``frame``'s rows (stable labels, host
    int32, and the profile of each cluster), or (None, None) with a note for a table of one
    row."""
    if len(frame) < 2:
        notes.append("clustering skipped: a table of one row has nothing to group")
        return None, None
    model, labels = fit_cluster_model(frame, k=spec.clusters, backend=backend,
                                      k_range=spec.k_range, seed=spec.seed, criteria=criteria,
                                      return_labels=True)
    if model.note:
        notes.append(f"clusters: {model.note}")
    return model, ClusterResult(labels=labels, k=model.k, features=model.names,
                                profiles=profile_clusters(frame, labels, backend=backend),
                                silhouette=model.silhouette, note=model.note)


def start_ranks(costs, criteria, spec, *, backend):
    """Check the criteria matrix for the rank step, and start its Pareto ranks
    (:func:`~gpurank.engine.ranking.pareto_ranks`) now where the backend runs calls beside
    the caller (:attr:`Backend.overlaps`, the CPU). Returns the future for
    :func:`rank_step`, or None where the ranks wait for the rank step (on a device).

    On the CPU the ranks are one thread's serial sweep, the longest single piece of the
    rank step. Importance and clustering do not need them, so started here they get a core
    of their own while those steps run, and the counts, which use every core, start in the
    rank step (the whole analysis of 10M rows on 2 cores: 134 s with the ranks and counts
    both started here, 114 s this way).

    Raises
    ------
    DataError
        A criterion is constant, or not positive under ``norm="log"``: before any work.
    """
    check_rank_input(costs, criteria, spec.norm, backend=backend)
    if not backend.overlaps:
        return None
    return backend.start(lambda: pareto_ranks(costs, backend=backend,
                                              rank_depth=spec.rank_depth))


def rank_step(frame, costs, criteria, spec, *, backend, ranks=None):
    """Pareto ranks, domination counts, the method's scores and the final rank of the rows;
    ``ranks`` is :func:`start_ranks`'s future when the ranks were started earlier."""
    return rank_configurations(frame, criteria, backend=backend, norm=spec.norm, costs=costs,
                               rank_depth=spec.rank_depth, count_cap=spec.count_cap,
                               ranks=ranks, spec=spec)


def robust_step(costs, criteria, ranking, spec, *, backend, frame=None):
    """SMAA over TOPSIS weights on the analyzed rows (see :mod:`gpurank.engine.robust`);
    with the analyzed ``frame``, the predicted values are drawn inside their prediction
    intervals too, where the table has them (:func:`~gpurank.engine.robust.uncertainty_of`)."""
    u = uncertainty_of(frame, criteria, backend=backend) if frame is not None else None
    return robust_from_costs_spec(costs, criteria, ranking, spec=spec, backend=backend,
                                  uncertainty=u)


def with_criteria(spec, criteria):
    """``spec`` with its resolved criteria (the summary reports what was used)."""
    return spec if spec.criteria else replace(spec, criteria=tuple(criteria))


def check_target_column(spec, columns) -> None:
    """Refuse an explicit target the table does not have, before any work is done."""
    if spec.target is not None and spec.target not in analyzed_columns(columns):
        raise SchemaError(f"target column '{spec.target}' is not in the table; "
                          f"{closest_names(spec.target, analyzed_columns(columns))}")


class StepTimer:
    """A run's times: the seconds each named step took, as ``timings`` (name -> seconds,
    rounded to 0.1 ms, in the order the steps ended).

    Both drivers keep their books with it: ``Engine.analyze`` times each step around its
    device sync and progress report, the Dask driver each of its stages.
    """

    def __init__(self):
        self.timings = {}
        self._start = time.perf_counter()

    @contextmanager
    def step(self, name):
        """Time the ``with`` block as step ``name``. A step that raises records nothing:
        the run fails, and no result reports the time."""
        t0 = time.perf_counter()
        yield
        self._record(name, t0)

    def total(self):
        """Record the time since the timer was made as the step ``"total"``."""
        self._record("total", self._start)

    def _record(self, name, t0):
        self.timings[name] = round(time.perf_counter() - t0, 4)
