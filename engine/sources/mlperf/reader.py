"""Read MLPerf Training results repositories into gpurank's canonical table.

``read_mlperf(paths, benchmark=...)`` accepts checkouts of ``mlcommons/training_results_vX.Y``,
a folder holding several, or any folder laid out the same way
(``<round>/<submitter>/systems/*.json`` and
``<round>/<submitter>/results/<system>/<benchmark>/result_*.txt``; v0.5's
``v0.5.0/<submitter>/<entry>/results/<system>/`` layout too). It returns one row per
(round, submitter, system, benchmark) with the official score computed as MLPerf does, the
system's hardware, normalized accelerator facts from the project catalog, the workload's own
convergence and throughput units, and every problem met on the way as a :class:`ReadWarning`
(never a silently dropped system). ``benchmark="all"`` reads every benchmark folder; the
``benchmark`` column holds the name the logs give (``submission_benchmark``).

Scoring (``mlperf_logging.result_summarizer``; rules in
:mod:`gpurank.engine.sources.facts.mlperf_rules`): per run ``run_stop - run_start``; only runs with
``status: success`` (v0.5 and v0.6 Alibaba: final accuracy >= target) are valid; sort the valid
times, drop the ``k`` fastest and the ``k`` slowest less one per failed run (``k`` = 4 for
``unet3d``, 1 otherwise); average the rest; multiply by ``scaling.json``'s factor; no score when
more than ``k`` runs failed, fewer than the benchmark's required runs are present, or the
benchmark has no known rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .discovery import (
    ReadWarning,
    ReadWarnings,
    SystemRef,
    add_published_benchmarks,
    as_paths,
    check_benchmark,
    discover,
)
from .rows import MLPERF_COLUMNS, add_catalog, build_table, system_row
from ..facts.mlperf_rules import (
    mlperf_logging_version,
)
from .scoring import (
    check_published_benchmarks,
    fill_published,
    published_key,
    published_timings,
    read_published_scores,
    score_runs,
)

__all__ = ["ReadWarning", "MlperfReadResult", "read_mlperf", "score_runs",
           "read_published_scores", "MLPERF_COLUMNS"]


@dataclass(frozen=True)
class MlperfReadResult:
    """The table and every warning; ``dropped`` names the duplicates removed by ``dedupe``;
    ``benchmark`` is the benchmark read (a name or ``"all"``)."""

    table: pd.DataFrame
    warnings: tuple[ReadWarning, ...]
    dropped: tuple[str, ...] = ()
    benchmark: str = "resnet"
    #: the published summary used to fill scores the logs cannot give ("" when none)
    published_scores: str = ""
    #: the per-run table beside it whose run times were used to find duplicates ("" when none)
    published_runs: str = ""

    def metadata(self) -> dict:
        """What ``run_mlperf_cli`` stores in the Parquet key-value metadata."""
        t = self.table
        src = t["score_source"] if len(t) else pd.Series([], dtype=str)
        return {
            "source": "mlperf",
            "benchmark": self.benchmark,
            # the benchmarks in the table and the unit of each one's throughput column
            "benchmarks": sorted(b for b in set(t["benchmark"]) if b) if len(t) else [],
            "throughput_units": {
                b: u for b, u in sorted(set(zip(t["benchmark"], t["throughput_unit"]))) if b and u
            } if len(t) else {},
            "mlperf_logging": mlperf_logging_version(),
            "n_systems": int(len(t)),
            "n_scored": int(t["time_to_train_min"].notna().sum()) if len(t) else 0,
            "n_scored_from_logs": int((src == "logs").sum()),
            "n_scored_published": int((src == "published").sum()),
            "published_scores": self.published_scores,
            "published_runs": self.published_runs,
            "warnings": [{"path": w.path, "reason": w.reason} for w in self.warnings],
            "dropped_duplicates": list(self.dropped),
        }


def _published_inputs(published_scores, published_runs, select: str):
    """The published scores and run timings, checked against the benchmark read;
    ``(published, runs_timing, published_runs)``, the last defaulting to the summary's
    runs.csv."""
    published = runs_timing = None
    if published_scores is not None:
        published = read_published_scores(published_scores)
        check_published_benchmarks(published, select, "--published-scores", published_scores)
        if published_runs is None and (Path(published_scores).parent / "runs.csv").is_file():
            published_runs = Path(published_scores).parent / "runs.csv"
    if published_runs is not None:
        runs_timing = published_timings(published_runs)
        check_published_benchmarks(runs_timing, select, "published runs", published_runs)
    return published, runs_timing, published_runs


def _mark_duplicate(row: dict, ref: SystemRef, timing: tuple, first_by_timing: dict) -> None:
    """Flag a row whose runs repeat an earlier row's runs, naming the first one."""
    row["is_duplicate"] = False
    row["duplicate_of"] = ""
    if timing:
        ident = f"{ref.round}/{ref.submitter}/{ref.system}"
        # runs repeat runs of the same benchmark only; the row's benchmark says which
        tkey = (row["benchmark"], timing)
        if tkey in first_by_timing:
            row["is_duplicate"] = True
            row["duplicate_of"] = first_by_timing[tkey]
        else:
            first_by_timing[tkey] = ident


def _system_rows(refs, published, runs_timing, warn: ReadWarnings) -> list[dict]:
    """A row per system: read from its logs, filled from the published scores where the logs
    give none, and flagged when its runs repeat an earlier system's."""
    rows: list[dict] = []
    first_by_timing: dict[tuple, str] = {}
    for ref in refs:
        row, timing = system_row(ref, warn)
        key = published_key(published, ref, row["benchmark"])
        if (published is not None and row["score_source"] != "logs" and key in published
                and published[key]["time_to_train_min"] is not None):
            fill_published(row, published[key])
        rkey = published_key(runs_timing, ref, row["benchmark"])
        if runs_timing is not None and rkey in runs_timing:
            timing = runs_timing[rkey]
        _mark_duplicate(row, ref, timing, first_by_timing)
        rows.append(row)
    return rows


def _drop_duplicates(df: pd.DataFrame) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """The table without its duplicated systems, and their ids."""
    dup = df["is_duplicate"].to_numpy()
    dropped = tuple(
        f"{r}/{s}/{y} (same runs as {d})"
        for r, s, y, d in zip(df["round"][dup], df["submitter"][dup], df["system"][dup], df["duplicate_of"][dup])
    )
    return df[~dup].reset_index(drop=True), dropped


def read_mlperf(paths, *, benchmark: str = "resnet", strict: bool = False, dedupe: bool = False,
                published_scores=None, published_runs=None) -> MlperfReadResult:
    """Read MLPerf Training results into one row per (round, submitter, system).

    Parameters
    ----------
    paths : path or list of paths
        Checkouts of ``training_results_vX.Y``, folders holding several, or folders laid out the
        same way (``raw/`` with ``v0.5`` ... ``v3.1``), or one submitter folder of a round.
    benchmark : str
        The benchmark folder to read (``resnet``, ``bert``, ...; any name, newer rounds
        included), or ``"all"`` for every benchmark folder. The ``benchmark`` column holds the
        name the logs give; a benchmark mlperf-logging does not know keeps its rows, without a
        score and with the reason in ``score_reason``.
    strict : bool
        Raise :class:`DataError` on the first problem instead of recording a warning.
    dedupe : bool
        Drop systems whose runs repeat an earlier system's runs (identical run_start/run_stop
        times); their ids are listed in ``dropped``. Without it they stay, flagged by
        ``is_duplicate`` and ``duplicate_of``.
    published_scores : path, optional
        A published per-system summary (the data set's ``summary.csv``: columns ``round``,
        ``submitter``, ``system``, ``time_to_train_minutes``, optional ``benchmark`` (a summary
        without it is one benchmark's, and is refused with ``benchmark="all"``),
        ``epochs_to_converge``, ``samples_to_converge``, ``convergence_point``,
        ``global_batch_size``, ``throughput_e2e_samples_per_s``,
        ``throughput_train_samples_per_s``, ...). For every system the logs read here cannot
        score, its score and run facts are taken from the summary row with the same (round,
        submitter, system). Systems scored from logs keep the logs' values. Column
        ``score_source`` says where each row's score came from: ``"logs"``, ``"published"`` or
        ``""`` (no score).
    published_runs : path, optional
        A published per-run table (``runs.csv``: ``round``, ``submitter``, ``system``,
        ``run_start_ms``, ``run_stop_ms``) whose run times are used to find duplicated systems
        whose logs are not present. With ``published_scores`` and no ``published_runs``, a
        ``runs.csv`` beside the summary is used when there is one.
    """
    select = check_benchmark(benchmark)
    paths = as_paths(paths)
    warn = ReadWarnings(strict)
    refs = discover(paths, select, warn)
    published, runs_timing, published_runs = _published_inputs(
        published_scores, published_runs, select)
    if published is not None and published.has_benchmark:
        refs = add_published_benchmarks(refs, published, select)
    rows = _system_rows(refs, published, runs_timing, warn)
    resolved = [r.pop("_resolved", None) for r in rows]
    df = build_table(rows)
    df = add_catalog(df, resolved)
    df = df[MLPERF_COLUMNS]
    dropped: tuple[str, ...] = ()
    if dedupe and len(df):
        df, dropped = _drop_duplicates(df)
    return MlperfReadResult(df, tuple(warn.items), dropped, select,
                            published_scores=str(published_scores) if published_scores is not None else "",
                            published_runs=str(published_runs) if published_runs is not None else "")
