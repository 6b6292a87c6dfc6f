"""Reproduce the study gpurank's methodology comes from, on real MLPerf Training results.

The study ("A Methodology for Selecting and Ranking High-Performance GPU Configurations in Deep
Learning Training") evaluates which configuration variables drive performance (random forest),
groups configurations into five clusters, ranks them on time, throughput and efficiency, and
reports three findings:

(a) the most efficient cluster uses a moderate number (4-16) of latest-generation GPUs with
    strong host CPUs;
(b) the largest systems reach the shortest time to train but are the least efficient;
(c) speedup grows sub-linearly with the GPU count.

:func:`run_study` reads MLPerf results (:func:`gpurank.engine.sources.mlperf.reader.read_mlperf`),
runs the three steps with :class:`gpurank.engine.Engine`, checks each finding against the data
(every figure is computed, nothing is hard-coded) and writes a Markdown report atomically.
The report holds no timings or absolute paths, so the same command on the same data writes the
same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..api import Engine
from ..errors import DataError, UsageError
from ..io import write_text
from ..outputs import check_target
from ..params import SEED_MAX, Interval, check_param
from ..results import AnalysisResult
from ..sources.mlperf.reader import read_mlperf
from ..sources.mlperf.discovery import check_benchmark
from .study_checks import (
    STUDY_CLUSTERS,
    STUDY_CRITERIA,
    STUDY_FEATURES,
    STUDY_TOP,
    FindingCheck,
    check_a,
    check_b,
    check_c,
)
from .study_report import study_markdown
from .study_text import (
    availability_category,
    command_line,
    filtering_table,
    framework_family,
    interconnect_class,
    profiles_with_generation,
    study_rows,
)
from .study_workloads import run_workloads_study

__all__ = ["StudyResult", "FindingCheck", "run_study", "run_study_cli", "STUDY_CRITERIA",
           "STUDY_FEATURES", "availability_category", "framework_family", "interconnect_class"]


@dataclass(frozen=True)
class StudyResult:
    """Everything :func:`run_study` computed.

    Attributes
    ----------
    data : DataFrame
        Every system read (after de-duplication), with ``study_status`` ("analysed" or why the
        row was left out) and the derived study columns.
    table : DataFrame
        The analysed rows with metrics, cluster, Pareto rank, TOPSIS score and rank.
    filtering : DataFrame
        One row per filtering step: ``step``, ``left_out``, ``remaining``.
    importance : DataFrame
        Importance for ``throughput_per_accelerator``; ``importance_time`` for
        ``time_to_train_min`` (None when it could not be fitted).
    profiles : DataFrame
        The cluster profiles (with generated labels and dominant generation).
    top : DataFrame
        The best configurations, best first.
    checks : tuple of FindingCheck
    markdown : str
        The report that was written to ``output``.
    """

    data: pd.DataFrame
    table: pd.DataFrame
    filtering: pd.DataFrame
    importance: pd.DataFrame
    importance_time: pd.DataFrame | None
    profiles: pd.DataFrame
    top: pd.DataFrame
    checks: tuple[FindingCheck, ...]
    markdown: str
    output: Path
    analysis: AnalysisResult = field(repr=False, default=None)
    notes: tuple[str, ...] = ()

    def verdicts(self) -> dict[str, str]:
        """``{"a": "SUPPORTED", ...}``."""
        return {c.key: c.verdict for c in self.checks}

    def summary_lines(self) -> list[str]:
        """Short console summary: rows analysed and one line per finding."""
        out = [f"{len(self.table)} GPU configurations analysed; report written to {self.output}"]
        out += [f"finding ({c.key}): {c.verdict}" for c in self.checks]
        return out


def run_study(paths, output_md, *, published_scores=None, seed: int = 0, backend: str = "cpu",
              division: str | None = "closed", availability: str | None = "available",
              command: str | None = None, overwrite: bool = False) -> StudyResult:
    """Run the study on MLPerf ResNet results and write its Markdown report atomically.

    Parameters
    ----------
    paths : path or list of paths
        MLPerf Training results (see :func:`~gpurank.engine.sources.mlperf.reader.read_mlperf`).
    output_md : path
        Where the report goes (written atomically).
    published_scores : path, optional
        A published per-system summary (``summary.csv``) for systems whose logs are incomplete.
    seed : int
        Seed of the forest and of KMeans.
    backend : str
        Engine backend.
    division, availability : str or None
        Keep only this division (``closed``) and availability category (``available``);
        None keeps all.
    command : str, optional
        The command line written in the report; built from the arguments when omitted. Paths
        are written as given (pass relative paths for a report that does not depend on the
        machine).

    Returns
    -------
    StudyResult
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    paths = list(paths)
    res = read_mlperf(paths, dedupe=True, published_scores=published_scores)
    data, steps = study_rows(res, division=division, availability=availability)
    kept = data[data["study_status"].isin(["analysed"]) | data["study_status"].str.startswith("not a GPU")]
    kept = kept[kept["time_to_train_min"].notna()].reset_index(drop=True)
    if not (kept["accelerator_type"] == "gpu").any():
        raise DataError("no scored GPU system is left after filtering; nothing to study")
    eng = Engine(backend=backend)
    analysis = eng.analyze(kept, criteria=STUDY_CRITERIA, features=STUDY_FEATURES, clusters=STUDY_CLUSTERS,
                           top=STUDY_TOP, seed=seed, accelerator_type="gpu", drop_invalid=True)  # fmt: skip
    t = analysis.table
    if analysis.importance is None or analysis.clusters is None:
        raise DataError(f"only {len(t)} GPU configurations remain; the study needs at least 10 "
                        "to fit the forest and 5 to form five clusters")
    imp_time = None
    try:
        imp_time = eng.importance(t, target="time_to_train_min", features=STUDY_FEATURES, seed=seed)
    except DataError:
        pass
    prof = profiles_with_generation(analysis, t)
    checks = (check_a(t, prof), check_b(t), check_c(t))
    filtering = filtering_table(steps, len(res.table) + len(res.dropped))
    top = analysis.top()
    if command is None:
        command = command_line(paths, published_scores=published_scores, seed=seed)
    md = study_markdown(res, data, t, analysis, imp_time, prof, top, checks, filtering,
                 command=command, published_scores=published_scores, seed=seed,
                 division=division, availability=availability)  # fmt: skip
    out = write_text(md, output_md, overwrite=overwrite, name="--output")
    return StudyResult(data=data, table=t, filtering=filtering, importance=analysis.importance.table,
                       importance_time=imp_time.table if imp_time is not None else None, profiles=prof,
                       top=top, checks=checks, markdown=md, output=out, analysis=analysis,
                       notes=tuple(analysis.notes))  # fmt: skip


def run_study_cli(paths, output, *, published_scores=None, seed: int = 0,
                  overwrite: bool = False, benchmark: str = "resnet"):
    """``gpurank study PATH... [--benchmark NAME|all] [--published-scores summary.csv]
    [--seed N] -o report.md``.

    Checks the arguments (usage errors exit 2), runs :func:`run_study` (ResNet-50, the
    default) or :func:`.study_workloads.run_workloads_study` (another
    benchmark, or ``all``: one section per benchmark) on the CPU backend and returns its
    result; print ``result.summary_lines()``.
    """
    out = Path(output)
    if out.suffix.lower() != ".md":
        raise UsageError(f"output {str(out)!r} must end in .md")
    if not out.parent.exists():
        raise UsageError(f"output folder {str(out.parent)!r} does not exist")
    if published_scores is not None and not Path(published_scores).is_file():
        raise UsageError(f"--published-scores file {str(published_scores)!r} does not exist")
    check_param("seed", seed, Interval(int, 0, SEED_MAX))
    check_target(out, name="--output", overwrite=overwrite)
    if benchmark != "resnet":
        return run_workloads_study(paths, out, benchmark=check_benchmark(benchmark),
                                   published_scores=published_scores, seed=seed,
                                   backend="cpu", overwrite=overwrite)
    return run_study(paths, out, published_scores=published_scores, seed=seed, backend="cpu",
                     overwrite=overwrite)
