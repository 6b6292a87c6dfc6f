"""The Dask driver: the pipeline's steps mapped over partitions, and what crosses them.

Stages (see ``docs/distributed.md`` for costs and why each is exact):

1. scan: rows, columns and reference configurations of each partition;
2. prepare: :func:`~gpurank.engine.prepare.prepare_rows` on each partition; the reports add
   up to the in-memory path's messages; each partition keeps its criteria matrix;
3. sample: a seeded sample of the analyzed rows on the client, for
   :func:`~gpurank.engine.pipeline.importance_step` and
   :func:`~gpurank.engine.pipeline.cluster_step` (the fitted model labels every row later);
4. rank: Pareto front, ranks and counts across partitions (:mod:`.cross`), the ranking
   method's scores from the merged column statistics, the robust ranking on the candidates,
   the final rank;
5. write: each partition re-prepared and written with its results, the whole output set
   swapped in at once (:func:`gpurank.engine.outputs.publish_folder`).
"""

from __future__ import annotations

import contextlib
import operator
import os
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd
from gpurank.kernels import TopsisStats

from ..clustering import FIT_ROWS, with_sizes
from ..errors import BackendUnavailableError, DataError, GpurankError, UsageError
from ..io import write_json
from ..metrics import merge_reference_tables, plan_metrics
from ..outputs import check_target, publish_folder
from ..params import Interval, ParamError, check_param
from ..partitions import check_parts
from ..pipeline import (
    StepTimer,
    check_target_column,
    cluster_step,
    importance_step,
    resolve_criteria,
    resolve_target,
    with_criteria,
)
from ..prepare import RESULT_COLUMNS as ANALYSIS_COLUMNS
from ..prepare import check_columns, raise_or_note
from ..methods import method_of
from ..ranking import check_not_constant, ideal_points, score_input
from ..results import PreparationResult, RankResult
from ..robust import (
    ROBUST_COLUMNS,
    interval_columns,
    robust_from_candidates,
    robust_summary,
    smaa_k,
    weight_bounds,
)
from ..spec import AnalysisSpec, limit_notes, normalize_weights
from ..summary import columns_for_top, summary_dict
from . import cross, dominance, tasks
from .cluster import DistributedError

__all__ = ["RESULT_COLUMNS", "DistributedResult", "analyze_dataset", "read_dataset"]

#: Columns the ranking adds to each row (``row_id`` = position in the analyzed table, i.e.
#: after the filter, the constraints and dropped rows, in input order: the same row as
#: ``result.table.iloc[row_id]`` of the in-memory path).
RESULT_COLUMNS = ("row_id", "cluster", "pareto_rank", "domination_count", "topsis_score", "rank")
_SUCCESS = "_SUCCESS"


@dataclass(frozen=True)
class DistributedResult:
    """What :func:`analyze_dataset` produced (host data only).

    Attributes
    ----------
    summary : dict
        Same keys as the in-memory ``summary.json`` (``build_summary``).
    top_rows : DataFrame
        The ``spec.top`` best rows, best first, with the result columns and ``row_id``
        (:meth:`top` returns them, as ``AnalysisResult.top`` does).
    ranking_path : Path or None
        The ``ranking/`` folder of part files, when ``out_dir`` was given.
    score_top_k : ndarray of int64
        Row ids of the ``spec.top`` best scores of the ranking method (ties by row id).
    pareto_front_rows : ndarray of int64
        Row ids of the Pareto front.
    timings, notes : as in ``AnalysisResult``
    columns : DataFrame or None
        ``row_id`` and the result columns of every row, when asked for with
        ``return_columns=True`` (tests, small tables).
    ranking : RankResult or None
        As ``AnalysisResult.ranking``, with ``return_columns=True`` (its per-row arrays are
        ``columns``'); None otherwise, the rows' results being in ``ranking/``.
    importance, clusters, spec, backend, fallbacks, robust, preparation : as in
        ``AnalysisResult``; importance and the cluster profiles are fitted on the seeded
        sample (``notes`` says when), cluster sizes are counted on every row, and
        ``clusters.labels`` is empty (every row's label is in the written ranking, and in
        ``columns``); ``robust`` holds the candidate rows (``robust.candidates``: row ids).
    """

    summary: dict
    top_rows: pd.DataFrame
    ranking_path: Path | None
    score_top_k: np.ndarray
    pareto_front_rows: np.ndarray
    timings: dict = field(default_factory=dict)
    notes: tuple = ()
    columns: pd.DataFrame | None = field(default=None, repr=False)
    importance: object = None
    clusters: object = None
    spec: AnalysisSpec | None = None
    backend: str = "cpu"
    fallbacks: tuple = ()
    robust: object = None
    preparation: PreparationResult | None = None
    ranking: RankResult | None = field(default=None, repr=False)

    def top(self, k: int | None = None) -> pd.DataFrame:
        """The ``k`` best rows (``spec.top`` by default), best first.

        The run kept its ``spec.top`` best rows (the rest are in the written ranking): a
        larger ``k`` is refused while the table has more rows than were kept."""
        kept = self.top_rows
        if k is None:
            return kept
        k = check_param("k", k, Interval(int, 0, None))
        if k > len(kept) and len(kept) < int(self.summary.get("rows", len(kept))):
            raise ParamError("k", f"must be at most {len(kept)}, the best rows this run kept; "
                             f"got {k} (analyze with {{top}}={k} to keep more)",
                             mentions=("top",))
        return kept.iloc[:k]


def read_dataset(path):
    """A Dask DataFrame of the Parquet dataset at ``path`` (or ``path`` itself when it is
    one already)."""
    import dask.dataframe as dd

    if not isinstance(path, (str, os.PathLike)):
        if hasattr(path, "to_delayed"):
            return path
        raise UsageError(f"analyze_dataset expects a Parquet path or a Dask DataFrame; got "
                         f"{type(path).__name__}")
    p = Path(path)
    if not p.exists():
        raise DataError(f"table '{p}' does not exist")
    if p.is_dir():
        files = check_parts(p)  # every part's columns and types, before any task runs
        if not files:
            raise DataError(f"table folder '{p}' holds no .parquet files")
    try:
        return dd.read_parquet(str(p))
    except Exception as exc:  # noqa: BLE001 - any parser failure is a data problem
        raise DataError(f"cannot read table '{p}': {type(exc).__name__}: "
                        f"{' '.join(str(exc).split())[:300]}") from None


def _workers_backend(backend):
    """The Dask path runs its workers on the CPU kernels; a GPU backend asked for explicitly
    is refused, "auto" is recorded as a fallback."""
    name = backend if isinstance(backend, str) else backend.name
    requested = backend if isinstance(backend, str) else backend.requested
    if name in ("cpu", "auto") or requested == "auto":
        return "" if name in ("cpu", "auto") else (
            "Dask workers ran on the CPU: the Dask path has no GPU workers")
    raise BackendUnavailableError(
        "--dask runs its workers on the CPU; --backend gpu cannot be combined with --dask: "
        "run the GPU analysis in memory, or use --backend cpu or auto with --dask")


def analyze_dataset(path, /, *, client, spec: AnalysisSpec | None = None, backend="cpu",
                    out_dir=None, overwrite=False, return_columns=False,
                    announce=None) -> DistributedResult:
    """Run the whole analysis on Dask; results equal ``Engine(backend="cpu").analyze``.

    Parameters
    ----------
    path : str or Path or dask DataFrame
        A Parquet dataset (a folder of files, or one file); a Dask DataFrame is used as is
        (its partitions are the partitions).
    client : distributed.Client
    spec : AnalysisSpec
    backend : Backend or str
        The engine's backend; the workers run the CPU kernels (a GPU backend asked for
        explicitly is refused, ``"auto"`` falls back with a recorded reason).
    out_dir : path, optional
        Writes the output set ``out_dir/ranking/`` (part files) and ``out_dir/summary.json``,
        swapped in at once when complete.
    overwrite : bool
        Replace an ``out_dir`` that is not a gpurank output.
    return_columns : bool
        Gather ``row_id`` and the result columns of every row into the result.
    announce : callable, optional
        Called with one line saying what the exact ranks and counts will cost (rows,
        partitions, key blocks, tasks) before they start.

    Returns
    -------
    DistributedResult

    Raises
    ------
    ParamError
        ``spec.robust`` on a table whose prediction interval (``time_to_train_min_lo`` /
        ``_hi``) moves a criterion: the drawn robust ranking runs in memory only
        (``docs/robust.md``); refused before any task.
    """
    from distributed.scheduler import KilledWorker

    spec = spec or AnalysisSpec()
    fallback = _workers_backend(backend)
    out = None
    if out_dir is not None:
        out = check_target(out_dir, name="--out", overwrite=overwrite, folder=True)
    try:
        return _run(path, client, spec, fallback, out, overwrite, return_columns, announce)
    except GpurankError:
        raise
    except KilledWorker as exc:
        raise DistributedError(f"a Dask worker died repeatedly while running the analysis "
                               f"({exc}); no output was written") from None


@dataclass
class _Run:
    """What the stages of one run share: the client, the settings (the spec gains its
    resolved criteria, target and k on the way) and what the user will read."""

    client: object
    spec: AnalysisSpec
    timer: StepTimer = field(default_factory=StepTimer)
    notes: list = field(default_factory=list)
    fallbacks: list = field(default_factory=list)
    announce: object = None


@dataclass(frozen=True)
class _Dataset:
    """The partitions as read, their columns, row offsets and the reference configurations
    of the whole dataset."""

    parts: list
    columns: tuple
    offsets: np.ndarray
    reference: object

    def each(self):
        return zip(self.parts, (int(o) for o in self.offsets))


@dataclass(frozen=True)
class _Rows:
    """The analyzed rows: their criteria matrix per partition (futures), counts and ids."""

    costs: list
    report: object
    n_each: np.ndarray
    firsts: np.ndarray
    stats: tuple  # TopsisStats of the matrix TOPSIS scores; criteria minimum and maximum
    columns: tuple  # of the analyzed table (derived metrics included)

    @property
    def n(self) -> int:
        return int(self.n_each.sum())


def _run(path, client, spec, fallback, out, overwrite, return_columns, announce=None):
    run = _Run(client, spec, notes=list(spec.notes), fallbacks=[fallback] if fallback else [],
               announce=announce)
    with run.timer.step("load"):
        ds = _scan(run, path)
    with run.timer.step("derive"):
        rows, preparation = _prepare(run, ds)
    criteria = run.spec.criteria
    importance, model, clusters = _fit(run, ds, rows)
    dominance = _dominance(run, rows)
    method = method_of(run.spec.method)
    with run.timer.step(method.name):
        weights = normalize_weights(criteria)
        scores, merits = cross.method_scores(client, rows.costs, run.spec, rows.stats[0],
                                             weights)
        score_top_k = cross.top_rows_by_score(client, merits, rows.firsts, run.spec.top)
    robust = None
    if run.spec.robust:
        with run.timer.step("robust"):
            robust = _robust(run, rows, dominance["counts"])
    with run.timer.step("rank"):
        ranks, buckets = cross.final_ranks(client, merits, dominance["ranks"], rows.firsts,
                                           rows.n_each, rows.n)
        _wait(ranks)
    results = [{"pareto_rank": dominance["ranks"][i], "domination_count": dominance["counts"][i],
                method.column: scores[i], "rank": ranks[i]} for i in range(len(ds.parts))]
    if robust is not None:
        for i, extra in enumerate(robust["columns"]):
            results[i].update(extra)
    run.notes.extend(limit_notes(run.spec))
    blocks = (f", {dominance['blocks']} key blocks" if dominance["blocks"] and
              not dominance.get("ranges") else "")
    run.notes.append(f"Dask: {len(ds.parts)} partitions{blocks}; {dominance['how_counts']}; "
                     f"{dominance['how_ranks']}; final rank: sample sort in {buckets} bucket"
                     f"{'s' if buckets > 1 else ''}")
    summary, top, pub_notes, clusters = _write(run, ds, rows, results, model, clusters,
                                               importance, weights, dominance["front"], robust,
                                               preparation, out, overwrite)
    if out is not None:  # the set is in place now
        summary["notes"] = list(summary["notes"]) + [f"output: {n}" for n in pub_notes]
    frame = ranking = None
    if return_columns:
        got = client.gather([client.submit(_columns_frame, results[i], int(rows.firsts[i]))
                             for i in range(len(ds.parts))])
        frame = pd.concat(got, ignore_index=True)
        ranking = RankResult(
            pareto_rank=frame["pareto_rank"].to_numpy(np.int32),
            domination_count=frame["domination_count"].to_numpy(np.int64),
            score=frame[method.column].to_numpy(np.float64),
            rank=frame["rank"].to_numpy(np.int64), criteria=criteria,
            weights=weights, ideal=summary["ideal"],
            anti_ideal=summary["anti_ideal"], method=method.name)
    return DistributedResult(summary=summary, top_rows=top,
                             ranking_path=out / "ranking" if out is not None else None,
                             score_top_k=score_top_k, pareto_front_rows=dominance["front"],
                             timings=run.timer.timings, notes=tuple(run.notes), columns=frame,
                             ranking=ranking,
                             importance=importance, clusters=clusters, spec=run.spec,
                             fallbacks=tuple(run.fallbacks), preparation=preparation,
                             robust=robust["result"] if robust is not None else None)


def _scan(run, path) -> _Dataset:
    """Pass 1: rows, columns and reference configurations of every partition."""
    from dask import delayed

    ddf = read_dataset(path)
    columns = tuple(ddf.columns)
    check_columns(ddf._meta if hasattr(ddf, "_meta") else ddf.head(0))
    check_target_column(run.spec, columns)
    if run.spec.robust:
        _refuse_drawn(run.spec, columns)
    parts = ddf.to_delayed()
    scans = run.client.gather(run.client.compute([delayed(tasks.scan_partition)(
        delayed(tasks.conform)(p, columns), run.spec) for p in parts]))
    rows_in = np.array([s["rows"] for s in scans], dtype=np.int64)
    if int(rows_in.sum()) == 0:
        raise DataError("the table is empty; at least one configuration row is needed")
    refs = [s["reference"] for s in scans if s["reference"] is not None]
    return _Dataset(parts=parts, columns=columns, offsets=_starts(rows_in),
                    reference=merge_reference_tables(refs) if refs else None)


def _refuse_drawn(spec, columns):
    """The drawn robust ranking (predicted values drawn in their interval) is not run on
    Dask: refused before any task, naming the interval columns and what runs instead."""
    criteria = resolve_criteria(spec, columns)
    found = interval_columns(columns, criteria)
    if found is None:
        return
    _, lo, hi, moved = found
    raise ParamError(
        "robust",
        f"cannot draw predicted values on {{dask}}: the table carries the prediction interval "
        f"{lo} / {hi}, which moves the criteria {', '.join(moved)}; run {{robust}} in memory "
        f"(without {{dask}}), or on {{dask}} without {{robust}}, or drop {lo} and {hi} to draw "
        "the weights only", mentions=("dask", "robust"))


def _starts(sizes):
    return np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)


def _prepare(run, ds):
    """Pass 2: ``prepare_rows`` on every partition; the reports add up to the in-memory
    path's messages, each partition keeps its criteria matrix."""
    from dask import delayed

    spec, client = run.spec, run.client
    criteria = resolve_criteria(spec, ds.columns)
    if spec.robust:
        weight_bounds(spec, criteria)  # before any work: names every criterion
    prep = [client.compute(delayed(tasks.prepare_partition)(
        p, ds.columns, spec, criteria, ds.reference, o)) for p, o in ds.each()]
    costs = [client.submit(operator.getitem, f, 0) for f in prep]
    infos = client.gather([client.submit(operator.getitem, f, 1) for f in prep])
    report = infos[0]["report"]
    for info in infos[1:]:
        report = report + info["report"]
    raise_or_note(report, spec, run.notes)
    n_each = np.array([info["report"].kept for info in infos], dtype=np.int64)
    stats = (TopsisStats.merge([i["stats"][0] for i in infos]),
             np.min([i["stats"][1] for i in infos], axis=0),
             np.max([i["stats"][2] for i in infos], axis=0))
    analyzed = next(i["columns"] for i in infos if i["report"].kept)
    check_not_constant(criteria, stats[1], stats[2], int(n_each.sum()))
    run.spec = replace(with_criteria(spec, criteria), target=resolve_target(spec, analyzed))
    rows = _Rows(costs=costs, report=report, n_each=n_each, firsts=_starts(n_each),
                 stats=stats, columns=analyzed)
    return rows, PreparationResult.from_report(report, *_plan(analyzed, ds.columns))


def _sample_positions(spec, n_each, firsts, n):
    """The seeded sample's positions among each partition's analyzed rows."""
    size = min(n, max(FIT_ROWS, spec.sample_rows))
    pick = (np.sort(np.random.default_rng(spec.seed).choice(n, size=size, replace=False))
            if size < n else np.arange(n))
    return [pick[(pick >= f) & (pick < f + k)] - f for f, k in zip(firsts, n_each)], size < n


def _fit(run, ds, rows):
    """Importance and the grouping, fitted on a seeded sample gathered on the client."""
    from dask import delayed

    spec, be = run.spec, tasks.cpu_backend()
    with run.timer.step("sample"):
        local, sampled = _sample_positions(spec, rows.n_each, rows.firsts, rows.n)
        chunks = run.client.gather(run.client.compute([
            delayed(tasks.sample_rows)(p, ds.columns, spec, spec.criteria, ds.reference, o, li)
            for (p, o), li in zip(ds.each(), local) if len(li)]))
        sample = pd.concat([c for c in chunks if c is not None], ignore_index=True)
        if sampled:
            run.notes.append(f"importance and KMeans fit use a seeded sample of {len(sample):,} "
                             f"of {rows.n:,} rows gathered on the client; cluster labels are "
                             "predicted on every row")
    with run.timer.step("importance"):
        importance = importance_step(sample, spec, spec.target, backend=be, notes=run.notes)
        if importance is not None and sampled:
            importance = replace(importance, sampled=True)
    with run.timer.step("cluster_fit"):
        model, clusters = cluster_step(sample, spec, spec.criteria, backend=be,
                                       notes=run.notes)
        if model is None:
            return importance, None, None
        if spec.clusters is None:
            run.spec = replace(spec, clusters=model.k)
        if sampled:
            run.notes.append("clusters: KMeans fitted on the seeded sample (standardization "
                             "and log scales taken from it), then applied to all rows; "
                             "profiles' medians are medians of the sample, sizes are exact")
        clusters = replace(clusters, labels=np.zeros(0, np.int32))  # every row's: written
    return importance, model, clusters


def _dominance(run, rows):
    """Pareto front, domination counts and Pareto ranks across partitions: exact by the
    key-range divide and conquer (2 to 4 criteria) or by key-block pairs (other counts of
    criteria), or clipped / capped by local filters and one merge."""
    spec, client, m = run.spec, run.client, len(run.spec.criteria)
    out = {"blocks": 0}
    with run.timer.step("pareto_front"):
        out["front"] = cross.pareto_front_rows(client, rows.costs, rows.firsts, m)
    exact_counts, exact_ranks = spec.count_cap is None, spec.rank_depth is None
    if (exact_counts or exact_ranks) and dominance.supported(m):
        return _by_key_ranges(run, rows, out, exact_counts, exact_ranks)
    kb = None
    if spec.count_cap is None or spec.rank_depth is None:
        with run.timer.step("key_blocks"):
            kb = cross.key_blocks(client, rows.costs, rows.n, m)
            out["blocks"] = kb.count
    with run.timer.step("domination_count"):
        if spec.count_cap is None:
            counts, pairs, settled = cross.exact_counts(client, kb)
            out["how_counts"] = (f"counts: {pairs} block pairs compared, {settled} settled by "
                                 "bounding boxes")
        else:
            counts, n_cand = cross.clipped(client, rows.costs, rows.n_each, spec.count_cap,
                                           "count", m)
            out["how_counts"] = (f"counts capped at {spec.count_cap}: {n_cand:,} candidate "
                                 "rows merged")
        _wait(counts)
    with run.timer.step("pareto_rank"):
        if spec.rank_depth is None:
            ranks, pairs = cross.exact_ranks(client, kb)
        else:
            ranks, n_cand = cross.clipped(client, rows.costs, rows.n_each, spec.rank_depth,
                                          "rank", m)
        _wait(ranks)
        fronts = 1 + max(client.gather([client.submit(_max, r) for r in ranks]))
        out["how_ranks"] = (f"ranks: {fronts} Pareto fronts over {pairs} block pairs"
                            if spec.rank_depth is None else
                            f"ranks to depth {spec.rank_depth}: {n_cand:,} candidate rows "
                            "merged")
    out["counts"], out["ranks"] = counts, ranks
    return out


def _by_key_ranges(run, rows, out, exact_counts, exact_ranks):
    """Exact counts and/or ranks by the key-range divide and conquer
    (:mod:`.dominance`); the clipped ones, if asked for, by local filters and one merge."""
    spec, client, m = run.spec, run.client, len(run.spec.criteria)
    with run.timer.step("key_ranges"):
        counts, ranks, info = dominance.exact_dominance(
            client, rows.costs, rows.n_each, m, counts=exact_counts, ranks=exact_ranks,
            announce=run.announce)
    out["blocks"], out["ranges"] = info["blocks"], True
    how = (f"{info['blocks']} key block{'s' if info['blocks'] != 1 else ''}, "
           f"{info['plan'].levels} merge level{'s' if info['plan'].levels != 1 else ''}, "
           f"{info['tasks']:,} tasks")
    with run.timer.step("pareto_rank"):  # first: the chain of blocks is the critical path
        if not exact_ranks:
            ranks, n_cand = cross.clipped(client, rows.costs, rows.n_each, spec.rank_depth,
                                          "rank", m)
        _wait(ranks)
        fronts = 1 + max(client.gather([client.submit(_max, r) for r in ranks]))
        out["how_ranks"] = (f"ranks: {fronts} Pareto fronts by key-range divide and conquer "
                            f"({how})" if exact_ranks else
                            f"ranks to depth {spec.rank_depth}: {n_cand:,} candidate rows "
                            "merged")
    with run.timer.step("domination_count"):
        if not exact_counts:
            counts, n_cand = cross.clipped(client, rows.costs, rows.n_each, spec.count_cap,
                                           "count", m)
        _wait(counts)
        out["how_counts"] = ("counts: exact, key-range divide and conquer" +
                             ("" if exact_ranks else f" ({how})") if exact_counts else
                             f"counts capped at {spec.count_cap}: {n_cand:,} candidate rows "
                             "merged")
    out["counts"], out["ranks"] = counts, ranks
    return out


def _write(run, ds, rows, results, model, clusters, importance, weights, front, robust,
           preparation, out, overwrite):
    """Last pass: each partition re-prepared and written with its results; the whole output
    set (``ranking/`` and ``summary.json``) staged and swapped in at once."""
    from dask import delayed

    spec, client = run.spec, run.client
    criteria = spec.criteria
    metadata = {"criteria": [{"column": c.column, "sense": c.sense, "weight": w}
                             for c, w in zip(criteria, weights)], "backend": "cpu"}
    ideal, anti = ideal_points(criteria, rows.stats[1], rows.stats[2])
    pub_notes = []
    with contextlib.ExitStack() as stack:
        # The folder is the stack's (it outlives the step, until the set is swapped in).
        with run.timer.step("write"):
            if out is not None:
                pub = stack.enter_context(publish_folder(out, kind="analysis-dataset",
                                                         overwrite=overwrite))
                pub_notes = pub.notes
                folder = pub.path / "ranking"
                folder.mkdir()
                metadata["run_id"] = pub.run_id
            else:
                folder = Path(stack.enter_context(
                    tempfile.TemporaryDirectory(prefix="gpurank-")))
            rb = robust["result"] if robust is not None else None
            keep = rb.candidates[rb.order()[:spec.top]] if rb is not None else ()
            written = client.gather(client.compute([
                delayed(tasks.write_partition)(p, ds.columns, spec, criteria, ds.reference, o,
                                               int(f), r, model, str(folder), i, metadata, keep)
                for i, ((p, o), f, r) in enumerate(zip(ds.each(), rows.firsts, results))]))
            if out is not None:
                (folder / _SUCCESS).write_text("")
        top = pd.concat([w["top"] for w in written if len(w["top"])], ignore_index=True)
        top = top.sort_values("rank", kind="stable").reset_index(drop=True)
        if clusters is not None:
            clusters = _exact_sizes(clusters, written)
        robust_top = None
        if rb is not None:
            kept = pd.concat([w["kept"] for w in written], ignore_index=True)
            robust_top = robust_summary(rb, kept.set_index("row_id"),
                                        columns_for_top(top.columns, criteria,
                                                        method=spec.method), top=spec.top)
        run.timer.total()
        summary = summary_dict(
            spec=spec, rows=rows.n, backend="cpu", fallbacks=run.fallbacks, criteria=criteria,
            weights=weights, front_size=len(front), ideal=ideal, anti_ideal=anti,
            top=top[columns_for_top(top.columns, criteria, method=spec.method)],
            importance=importance,
            clusters=clusters, timings=run.timer.timings, notes=run.notes,
            robust=robust_top, preparation=preparation)
        if out is not None:
            summary["run_id"] = pub.run_id
            pub.manifest.update(rows=rows.n, seed=spec.seed, criteria=summary["criteria"])
            write_json(summary, pub.path / "summary.json")
    return summary, top, pub_notes, clusters


def _max(values):
    return int(values.max()) if len(values) else -1


def _wait(futures):
    from distributed import wait

    wait(futures)


def _plan(analyzed_cols, columns):
    derived, skipped = plan_metrics(columns)
    return derived, skipped, tuple(c for c in columns if c in ANALYSIS_COLUMNS)


def _exact_sizes(cl, written):
    sizes = np.zeros(cl.k, dtype=np.int64)
    for w in written:
        s = w["sizes"]
        sizes[: len(s)] += s
    return replace(cl, profiles=with_sizes(cl.profiles, sizes))


def _columns_frame(results, first):
    n = len(results["rank"])
    frame = pd.DataFrame({"row_id": np.arange(n, dtype=np.int64) + first})
    for name, values in results.items():
        frame[name] = values
    return frame


def _robust(run, rows, counts):
    """SMAA over TOPSIS weights (``--robust``), as in memory: the rows dominated by fewer
    than k others (every other row is outside the top k under any weights) gathered on the
    client and ranked there, normalized by the whole table's merged statistics; their
    acceptabilities scattered back to the partitions as columns (futures)."""
    spec, client, m = run.spec, run.client, len(run.spec.criteria)
    k, recount = smaa_k(spec, rows.n)
    if recount:
        counts, _ = cross.clipped(client, rows.costs, rows.n_each, k, "count", m)
    picked = client.gather([client.submit(tasks.below_count, c, n, k)
                            for c, n in zip(rows.costs, counts)])
    row_ids = np.concatenate([np.zeros(0, np.int64)] + [first + pos for (pos, _), first
                                                         in zip(picked, rows.firsts)])
    costs = np.concatenate([np.zeros((0, m))] + [c for _, c in picked])
    bounds, ranges = weight_bounds(spec, spec.criteria)
    matrix, kernel_norm = score_input(costs, spec.criteria, spec.norm,
                                       backend=tasks.cpu_backend())
    rb = robust_from_candidates(
        matrix, row_ids, rows.stats[0], n_rows=rows.n, samples=spec.samples, k=spec.top,
        seed=spec.seed, bounds=bounds, norm=kernel_norm, kernels=tasks.cpu_backend().kernels,
        criteria=[c.column for c in spec.criteria], weight_ranges=ranges)
    run.notes.append(f"robust: {len(row_ids):,} candidate rows (dominated by fewer than {k}) "
                     "gathered and ranked on the client")
    columns = []
    for (pos, _), first, n in zip(picked, rows.firsts, rows.n_each):
        lo, hi = np.searchsorted(row_ids, [first, first + n])
        part = client.submit(tasks.robust_columns, int(n), pos,
                             {c: getattr(rb, c)[lo:hi] for c in ROBUST_COLUMNS})
        columns.append({c: client.submit(operator.getitem, part, c) for c in ROBUST_COLUMNS})
    return {"columns": columns, "result": rb}
