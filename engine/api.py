"""The Python API: an :class:`Engine` bound to one backend runs the three steps.

>>> from gpurank.engine import Engine
>>> eng = Engine(backend="cpu")
>>> result = eng.analyze("configs.parquet", criteria="time_to_train_min:min,cost_usd:min")
>>> result.top(5)
"""

from __future__ import annotations

import time
from contextlib import contextmanager

import numpy as np
import pandas as pd

from .backend import resolve_backend
from .clustering import cluster_configurations
from .errors import DataError, DeviceMemoryError, UnsupportedOnGPU, UsageError
from .importance import feature_importance
from .io import read_table, write_json, write_table
from .outputs import publish_folder
from .metrics import derive_metrics
from .ranking import check_criteria_values, criteria_matrix, rank_configurations
from .results import AnalysisResult
from .schema import invalid_rows, require_columns
from .spec import AnalysisSpec, default_criteria, limit_notes, parse_criteria
from .progress import SILENT
from .summary import build_summary

__all__ = ["Engine", "analyze"]

RESULT_COLUMNS = ("cluster", "pareto_rank", "domination_count", "topsis_score", "rank")


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
    def load(self, path, /) -> pd.DataFrame:
        """Read a configuration table (Parquet file or folder, or CSV) into the backend's frame."""
        return read_table(path, backend=self.backend)

    def derive(self, df, /) -> pd.DataFrame:
        """Add the derived metrics (see :mod:`gpurank.engine.metrics`)."""
        return derive_metrics(df)

    def importance(self, df, /, *, target="throughput_per_accelerator", features=None,
                   sample_rows=20_000, seed=0, n_estimators=100):
        """Random-forest importance of configuration variables for ``target``."""
        return feature_importance(df, target=target, backend=self.backend, features=features,
                                  sample_rows=sample_rows, seed=seed, n_estimators=n_estimators)

    def cluster(self, df, /, *, k=5, features=None, k_range=(2, 10), seed=0):
        """KMeans groups and their profiles."""
        return cluster_configurations(df, k=k, backend=self.backend, features=features,
                                      k_range=k_range, seed=seed)

    def rank(self, df, /, criteria=None, *, norm="vector"):
        """Pareto ranks, domination counts and TOPSIS scores."""
        criteria = _as_criteria(criteria, df.columns)
        return rank_configurations(df, criteria, backend=self.backend, norm=norm)

    # -- the whole analysis ---------------------------------------------------------------
    def analyze(self, data, /, spec: AnalysisSpec | None = None, **options) -> AnalysisResult:
        """Evaluate, group and rank the configurations in ``data``.

        Parameters
        ----------
        data : DataFrame or path
            The configuration table, or a Parquet/CSV path.
        spec : AnalysisSpec, optional
            All settings; alternatively pass them as keyword options (``criteria`` may be a
            string such as ``"time_to_train_min:min,cost_usd:min:2"``).

        Returns
        -------
        AnalysisResult
        """
        spec = _as_spec(spec, options)
        timings, notes = {}, list(spec.notes)
        step = self._step_timer(timings)
        with step("load"):
            df = data if isinstance(data, pd.DataFrame) else self.load(data)
            if self.backend.on_device and isinstance(df, pd.DataFrame):
                df = self.backend.xdf.from_pandas(df)
            if len(df) == 0:
                raise DataError("the table is empty; at least one configuration row is needed")
            if spec.accelerator_type is not None:
                df = _filter_accelerator_type(df, spec.accelerator_type, notes)
        with step("derive", len(df)):
            df = derive_metrics(df)
            criteria = spec.criteria or default_criteria(df.columns)
            costs = criteria_matrix(df, criteria, backend=self.backend)
            bad = invalid_rows(costs)
            if bool(bad.any()):
                if not spec.drop_invalid:
                    check_criteria_values(costs, criteria)
                notes.append(f"{int(bad.sum())} rows with missing or infinite criteria dropped "
                             "(--drop-invalid)")
                df = df.loc[~bad].reset_index(drop=True)
                costs = costs[~bad]
                if len(df) == 0:
                    raise DataError("every row has missing or infinite criteria; nothing to rank")

        n = len(df)
        importance = None
        with step("importance", min(n, spec.sample_rows)):
            if n < 10:
                notes.append(f"importance skipped: {n} rows are too few to fit a forest (need 10)")
            else:
                importance = feature_importance(
                    df, target=spec.target, backend=self.backend, features=spec.features,
                    sample_rows=spec.sample_rows, seed=spec.seed, n_estimators=spec.n_estimators)
                if importance.note:
                    notes.append(f"importance: {importance.note}")

        clusters = None
        with step("cluster", n):
            if n < 2:
                notes.append("clustering skipped: a table of one row has nothing to group")
            else:
                clusters = cluster_configurations(df, k=spec.clusters, backend=self.backend,
                                                  k_range=spec.k_range, seed=spec.seed)
                if clusters.note:
                    notes.append(f"clusters: {clusters.note}")

        fallbacks = [self.backend.reason] if self.backend.reason else []
        with step("rank", n):
            ranking = self._on_backend(
                lambda b, frame: rank_configurations(
                    frame, criteria, backend=b, norm=spec.norm,
                    costs=costs if b is self.backend else None, rank_depth=spec.rank_depth,
                    count_cap=spec.count_cap),
                df, "rank", fallbacks)

        notes.extend(limit_notes(spec))
        # The one crossing of the table to the host, with the results beside it.
        table = self.backend.to_host(df).copy()
        table["cluster"] = clusters.labels if clusters is not None else np.full(n, -1, np.int32)
        table["pareto_rank"] = ranking.pareto_rank
        table["domination_count"] = ranking.domination_count
        table["topsis_score"] = ranking.topsis_score
        table["rank"] = ranking.rank
        robust = None
        if spec.robust:
            from .robust import ROBUST_COLUMNS, robust_ranking

            with step("robust", n):
                robust = self._on_backend(
                    lambda b, frame: robust_ranking(frame, criteria, ranking, spec=spec,
                                                    backend=b),
                    df, "robust", fallbacks)
            for col in ROBUST_COLUMNS:
                table[col] = robust.column(col)
        return AnalysisResult(
            table=table,
            importance=importance,
            clusters=clusters,
            ranking=ranking,
            spec=spec if spec.criteria else _replace_criteria(spec, criteria),
            backend=self.backend.name,
            timings=timings,
            notes=tuple(notes),
            fallbacks=tuple(fallbacks),
            robust=robust,
        )

    def analyze_dataset(self, path, /, *, out_dir=None, overwrite=False,
                        spec: AnalysisSpec | None = None, **options):
        """The whole analysis on Dask, for datasets larger than one machine's memory.

        Results equal :meth:`analyze` row for row (see ``docs/distributed.md``); the ranking
        is written as a partitioned dataset ``out_dir/ranking/`` and ``out_dir/summary.json``.

        Returns
        -------
        gpurank.engine.distributed.DistributedResult
        """
        from .distributed import analyze_dataset, start_dask

        if self.dask is None:
            raise UsageError("analyze_dataset needs Engine(dask='local[:N]' | 'tcp://...' | client)")
        spec = _as_spec(spec, options)
        owned = isinstance(self.dask, str)
        client = start_dask(self.dask, backend_name=self.backend.name) if owned else self.dask
        try:
            return analyze_dataset(path, client=client, spec=spec, backend=self.backend,
                                   out_dir=out_dir, overwrite=overwrite)
        finally:
            if owned:
                cluster = getattr(client, "cluster", None)
                client.close()
                if cluster is not None:
                    cluster.close()

    def _on_backend(self, fn, df, step, fallbacks):
        """Run ``fn(backend, df)``; with ``backend="auto"``, fall back to the CPU for this step
        only on :class:`UnsupportedOnGPU`, recording why."""
        try:
            return fn(self.backend, df)
        except UnsupportedOnGPU as exc:
            if self.backend.requested != "auto":
                raise
            fallbacks.append(f"{step} ran on the CPU: {exc}")
            return fn(resolve_backend("cpu"), self.backend.to_host(df))

    def _step_timer(self, timings):
        """A context manager factory that times a step (after a device sync) and reports it."""

        @contextmanager
        def step(name, rows=None):
            t0 = time.perf_counter()
            try:
                with self.progress.step(name, rows):
                    yield
                    self.backend.sync()
            except MemoryError as exc:
                if self.backend.name == "cpu":
                    raise
                raise DeviceMemoryError(
                    f"the GPU ran out of memory in step '{name}' on {rows or 0:,} rows ({exc}); "
                    "analyze fewer rows at once or spread the table over workers with --dask"
                ) from exc
            timings[name] = round(time.perf_counter() - t0, 4)

        return step

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
                from .report import write_report

                write_report(result.table, summary, pub.path / "report.html",
                             seed=result.spec.seed)
        summary["notes"] = list(summary["notes"]) + [f"output: {n}" for n in pub.notes]
        return summary


def analyze(data, /, *, backend="auto", **options) -> AnalysisResult:
    """Run the whole analysis with a fresh :class:`Engine`; see :meth:`Engine.analyze`."""
    return Engine(backend=backend).analyze(data, **options)


def _filter_accelerator_type(df, wanted, notes):
    require_columns(df, ["accelerator_type"], role="--accelerator-type")
    keep = (df["accelerator_type"].astype("str") == wanted).fillna(False)
    if not bool(keep.any()):
        types = df["accelerator_type"].dropna().astype("str").unique()
        present = sorted(map(str, pd.Series(types.to_pandas() if hasattr(types, "to_pandas")
                                            else types)))
        raise DataError(
            f"--accelerator-type {wanted!r} matches no row; the table has: {', '.join(present)}"
        )
    if not bool(keep.all()):
        notes.append(f"{int((~keep).sum())} rows with accelerator_type other than {wanted!r} "
                     "left out (--accelerator-type)")
    return df.loc[keep].reset_index(drop=True)


def _as_criteria(criteria, columns):
    if criteria is None or criteria == "" or criteria == ():
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
    if isinstance(opts.get("criteria"), str):
        opts["criteria"] = parse_criteria(opts["criteria"])
    elif opts.get("criteria") is None:
        opts.pop("criteria", None)
    try:
        return AnalysisSpec(**opts)
    except TypeError as exc:
        raise UsageError(f"unknown analysis option: {exc}") from None


def _replace_criteria(spec, criteria):
    from dataclasses import replace

    return replace(spec, criteria=tuple(criteria))


