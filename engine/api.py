"""The Python API: an :class:`Engine` bound to one backend runs the three steps.

>>> from gpurank.engine import Engine
>>> from gpurank.engine.sources.sweep.simulate import simulate
>>> table = simulate(200, seed=0)  # or a Parquet or CSV path
>>> eng = Engine(backend="cpu")
>>> result = eng.analyze(table, criteria="time_to_train_min:min,cost_usd:min",
...                      n_estimators=10, k_range=(2, 3))
>>> best = result.top(5)  # the five best rows, best first
>>> best["rank"].tolist(), len(result.table)
([1, 2, 3, 4, 5], 200)
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import fields, replace
from pathlib import Path

import numpy as np
import pandas as pd

from .backend import resolve_backend
from .clustering import cluster_configurations
from .distributed import analyze_dataset, check_dask_available, start_dask
from .errors import DataError, DeviceMemoryError, UnsupportedOnGPU, UsageError
from .importance import feature_importance
from .io import read_table, write_json, write_table
from .methods import DEFAULT_METHOD, DEFAULT_VIKOR_V
from .metrics import derive_metrics
from .outputs import publish_folder
from .partitions import check_parts
from .pipeline import (
    StepTimer,
    check_target_column,
    cluster_step,
    importance_step,
    rank_step,
    resolve_criteria,
    resolve_target,
    robust_step,
    start_ranks,
    with_criteria,
)
from .prepare import describe_preparation, prepare_rows, raise_or_note
from .progress import SILENT
from .ranking import rank_configurations
from .report import write_report
from .results import AnalysisResult, PreparationResult
from .robust import ROBUST_COLUMNS, weight_bounds
from .schema import text_from_bytes
from .spec import AnalysisSpec, default_criteria, limit_notes, parse_criteria
from .summary import build_summary

__all__ = ["Engine", "analyze"]


class Engine:
    """Runs gpurank's analysis on one backend.

    Parameters
    ----------
    backend : {"auto", "cpu", "gpu"} or Backend, keyword-only
        Resolved once here and used by every step.
    dask : str or distributed.Client, optional, keyword-only
        Where :meth:`analyze_dataset` runs: ``"local"``, ``"local:N"``, ``"tcp://host:port"``
        or a connected client.
    progress : StepProgress, optional, keyword-only
        Reporter of each step (silent by default).
    """

    def __init__(self, *, backend="auto", dask=None, progress=None):
        self.backend = resolve_backend(backend)
        self.progress = progress or SILENT
        self.dask = dask

    def __repr__(self) -> str:
        return f"Engine(backend={self.backend.name!r})"

    # -- single steps -------------------------------------------------------------------
    def load(self, path, /):
        """Read a configuration table (Parquet file or folder, or CSV) into the backend's frame."""
        return read_table(path, backend=self.backend)

    def derive(self, df, /):
        """Add the derived metrics its columns allow (see :mod:`gpurank.engine.metrics`);
        the table comes back as the backend's frame."""
        frame = self.backend.as_frame(df)
        with self._device_memory("derive", len(frame)):
            return derive_metrics(frame)

    def importance(self, df, /, *, target="throughput_per_accelerator", features=None,
                   sample_rows=20_000, seed=0, n_estimators=100):
        """Random-forest importance of configuration variables for ``target``."""
        frame = self.backend.as_frame(df)
        with self._device_memory("importance", min(len(frame), sample_rows)):
            return feature_importance(frame, target=target, backend=self.backend,
                                      features=features, sample_rows=sample_rows, seed=seed,
                                      n_estimators=n_estimators)

    def cluster(self, df, /, *, k=5, features=None, k_range=(2, 10), seed=0):
        """KMeans groups and their profiles."""
        frame = self.backend.as_frame(df)
        with self._device_memory("cluster", len(frame)):
            return cluster_configurations(frame, k=k, backend=self.backend, features=features,
                                          k_range=k_range, seed=seed)

    def rank(self, df, /, criteria=None, *, norm="vector", method=DEFAULT_METHOD,
             vikor_v=DEFAULT_VIKOR_V):
        """Pareto ranks, domination counts and the scores of ``method`` (TOPSIS or VIKOR,
        see :class:`AnalysisSpec`)."""
        frame = self.backend.as_frame(df)
        criteria = _as_criteria(criteria, frame.columns)
        spec = AnalysisSpec(norm=norm, method=method, vikor_v=vikor_v)  # checks all three
        with self._device_memory("rank", len(frame)):
            return rank_configurations(frame, criteria, backend=self.backend, norm=norm,
                                       spec=spec)

    # -- the whole analysis ---------------------------------------------------------------
    def analyze(self, data, /, spec: AnalysisSpec | None = None, **options) -> AnalysisResult:
        """Evaluate, group and rank the configurations in ``data``.

        The steps of :mod:`gpurank.engine.pipeline` on one table: prepare the rows (filter,
        checks, derived metrics, constraints), importance, clusters, ranking, and the robust
        ranking when asked for.

        Parameters
        ----------
        data : DataFrame or path
            The configuration table (pandas, or the backend's own frame), or a Parquet/CSV
            path.
        spec : AnalysisSpec, optional
            All settings; alternatively pass them as keyword options (``criteria`` may be a
            string such as ``"time_to_train_min:min,cost_usd:min:2"``).

        Returns
        -------
        AnalysisResult
        """
        spec = _as_spec(spec, options)
        timer, notes = StepTimer(), list(spec.notes)
        step = self._step_timer(timer)
        with step("load"):
            df = self._frame(data)
            if len(df) == 0:
                raise DataError("the table is empty; at least one configuration row is needed")
        with step("derive", len(df)):
            check_target_column(spec, df.columns)
            criteria = resolve_criteria(spec, df.columns)
            if spec.robust:
                weight_bounds(spec, criteria)  # before any work: names every criterion
            prepared = prepare_rows(df, spec, criteria, backend=self.backend)
            raise_or_note(prepared.report, spec, notes)
            notes.extend(describe_preparation(prepared))
            frame, costs = prepared.frame, prepared.costs
            # On the CPU the Pareto ranks run from here on, beside importance and
            # clustering (which do not need them); the step times then overlap.
            ranks = start_ranks(costs, criteria, spec, backend=self.backend)
        target = resolve_target(spec, frame.columns)
        spec = replace(with_criteria(spec, criteria), target=target)

        n = len(frame)
        with step("importance", min(n, spec.sample_rows)):
            importance = importance_step(frame, spec, target, backend=self.backend, notes=notes)
        with step("cluster", n):
            model, clusters = cluster_step(frame, spec, criteria, backend=self.backend,
                                           notes=notes)
            if model is not None and spec.clusters is None:
                spec = replace(spec, clusters=model.k)

        fallbacks = [self.backend.reason] if self.backend.reason else []
        with step("rank", n):
            ranking = self._on_backend(
                lambda b, fr, c: rank_step(fr, c, criteria, spec, backend=b,
                                           ranks=ranks if b is self.backend else None),
                frame, costs, "rank", fallbacks)
        notes.extend(limit_notes(spec))
        # The one crossing of the table to the host, with the results beside it. A shallow
        # copy: the new columns are the table's own (copy-on-write keeps ``frame`` as it
        # was), and a 10M-row table is not held twice.
        table = self.backend.to_host(frame).copy(deep=False)
        table["cluster"] = clusters.labels if clusters is not None else np.full(n, -1, np.int32)
        table["pareto_rank"] = ranking.pareto_rank
        table["domination_count"] = ranking.domination_count
        table[ranking.column] = ranking.score
        table["rank"] = ranking.rank
        robust = None
        if spec.robust:
            with step("robust", n):
                robust = self._on_backend(
                    lambda b, fr, c: robust_step(c, criteria, ranking, spec, backend=b,
                                                 frame=fr),
                    frame, costs, "robust", fallbacks)
            for col in ROBUST_COLUMNS:
                table[col] = robust.column(col)
        return AnalysisResult(
            table=table,
            importance=importance,
            clusters=clusters,
            ranking=ranking,
            spec=spec,
            backend=self.backend.name,
            timings=timer.timings,
            notes=tuple(notes),
            fallbacks=tuple(fallbacks),
            robust=robust,
            preparation=PreparationResult.from_report(prepared.report, prepared.derived,
                                                      prepared.skipped, prepared.replaced),
        )

    def _frame(self, data):
        """``data`` as the backend's frame: a path is read, a host table is moved once."""
        if isinstance(data, (str, os.PathLike)):
            return self.load(data)
        if isinstance(data, pd.DataFrame):  # bytes decoded before a device sees them
            data = text_from_bytes(data, where="the table")
        return self.backend.as_frame(data)

    def analyze_dataset(self, path, /, *, out_dir=None, overwrite=False,
                        spec: AnalysisSpec | None = None, announce=None, **options):
        """The whole analysis on Dask, for datasets larger than one machine's memory.

        Results equal :meth:`analyze` row for row (see ``docs/distributed.md``); the ranking
        is written as a partitioned dataset ``out_dir/ranking/`` and ``out_dir/summary.json``.
        ``announce`` (a callable taking one line) hears what the exact ranks and counts will
        cost before they start.

        Returns
        -------
        gpurank.engine.distributed.DistributedResult
        """
        if self.dask is None:
            raise UsageError("analyze_dataset needs Engine(dask='local[:N]' | 'tcp://...' | client)")
        spec = _as_spec(spec, options)
        check_dask_available()
        if isinstance(path, (str, os.PathLike)) and Path(path).is_dir():
            check_parts(path)  # a dataset whose parts differ is refused before Dask starts
        owned = isinstance(self.dask, str)
        client = start_dask(self.dask) if owned else self.dask
        try:
            return analyze_dataset(path, client=client, spec=spec, backend=self.backend,
                                   out_dir=out_dir, overwrite=overwrite, announce=announce)
        finally:
            if owned:
                cluster = getattr(client, "cluster", None)
                client.close()
                if cluster is not None:
                    cluster.close()

    def _on_backend(self, fn, frame, costs, step, fallbacks):
        """Run ``fn(backend, frame, costs)``; with ``backend="auto"``, fall back to the CPU
        for this step only on :class:`UnsupportedOnGPU`, recording why."""
        try:
            return fn(self.backend, frame, costs)
        except UnsupportedOnGPU as exc:
            if self.backend.requested != "auto":
                raise
            fallbacks.append(f"{step} ran on the CPU: {exc}")
            return fn(resolve_backend("cpu"), self.backend.to_host(frame),
                      np.ascontiguousarray(self.backend.to_host(costs)))

    def _step_timer(self, timer):
        """A context manager factory: a step timed by ``timer`` (a :class:`StepTimer`) up to
        the device's sync, with its out-of-memory error and its progress report."""

        @contextmanager
        def step(name, rows=None):
            with (timer.step(name), self._device_memory(name, rows),
                  self.progress.step(name, rows)):
                yield
                self.backend.sync()

        return step

    @contextmanager
    def _device_memory(self, step, rows):
        """Turn the device running out of memory (CuPy, RMM or Numba, see
        :meth:`Backend.out_of_memory`) into one :class:`DeviceMemoryError` naming the step."""
        try:
            yield
        except Exception as exc:
            if not self.backend.out_of_memory(exc):
                raise
            raise DeviceMemoryError(
                f"the GPU ran out of memory in step '{step}' on {rows or 0:,} rows ({exc}); "
                "analyze fewer rows at once or spread the table over workers with --dask"
            ) from exc

    def write(self, result: AnalysisResult, out_dir, /, *, report=True, overwrite=False) -> dict:
        """Write the output set ``ranking.parquet``, ``summary.json`` and ``report.html``.

        The whole set is written into a staging folder beside ``out_dir`` and swapped in
        with one rename (see :mod:`gpurank.engine.outputs`): ``out_dir`` holds the old set or
        the new one, never a mix, and a set from an earlier run leaves no file behind.
        ``out_dir`` must be new, empty or an earlier gpurank output unless ``overwrite``.
        ``report=False`` skips the HTML report.

        Returns
        -------
        dict
            The summary that was written; its ``run_id`` is the one in the manifest, the
            Parquet metadata and the report.
        """
        summary = build_summary(result)
        with publish_folder(out_dir, kind="analysis", overwrite=overwrite) as pub:
            summary["run_id"] = pub.run_id
            pub.manifest.update(rows=summary["rows"], seed=result.spec.seed,
                                criteria=summary["criteria"])
            write_table(result.table, pub.path / "ranking.parquet",
                        metadata={"criteria": summary["criteria"], "backend": result.backend,
                                  "run_id": pub.run_id})
            write_json(summary, pub.path / "summary.json")
            if report:
                # Imported here: matplotlib loads only when a report is built.

                write_report(result.table, summary, pub.path / "report.html",
                             seed=result.spec.seed)
        summary["notes"] = list(summary["notes"]) + [f"output: {n}" for n in pub.notes]
        return summary


def analyze(data, /, *, backend="auto", **options) -> AnalysisResult:
    """Run the whole analysis with a fresh :class:`Engine`; see :meth:`Engine.analyze`."""
    return Engine(backend=backend).analyze(data, **options)


def _as_criteria(criteria, columns):
    if criteria is None or criteria == ():
        return default_criteria(columns)
    if isinstance(criteria, str):
        return parse_criteria(criteria)
    return tuple(criteria)


def _as_spec(spec, options) -> AnalysisSpec:
    if spec is not None and options:
        raise UsageError("pass either spec= or keyword options to analyze(), not both")
    if spec is not None:
        return spec
    opts = dict(options)
    if opts.get("criteria") is None:
        opts.pop("criteria", None)
    known = {f.name for f in fields(AnalysisSpec)}
    unknown = sorted(set(opts) - known)
    if unknown:
        raise UsageError(f"unknown analysis option {unknown[0]!r}; options are: "
                         f"{', '.join(sorted(known - {'notes'}))}")
    return AnalysisSpec(**opts)




