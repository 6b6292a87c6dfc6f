"""The study on every MLPerf Training workload: one section per benchmark.

:func:`run_workloads_study` reads MLPerf results with ``benchmark="all"`` (or one benchmark),
and for each benchmark runs the study's three steps on its closed, available GPU systems —
random-forest importance of the configuration variables for per-GPU throughput, five
clusters, Pareto + TOPSIS ranking — checks the three findings of the ResNet-50 study again
((a) the most efficient cluster uses 4-16 latest-generation GPUs with strong host CPUs, (b) the
largest systems are the fastest but the least efficient, (c) speedup grows sub-linearly), and
finds the **break-even point** per accelerator model: the largest configuration whose scaling
efficiency stays at or above :data:`BREAK_EVEN_EFFICIENCY`. Every figure is computed; the
report holds no timings or absolute paths, so the same command on the same data writes the
same bytes. The ResNet-50 study itself is :func:`gpurank.engine.commands.study.run_study`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..api import Engine
from ..errors import DataError
from ..formatting import count as _c
from ..formatting import integer as _i
from ..formatting import markdown_table
from ..formatting import number as _f
from ..formatting import span as _span
from ..io import write_text
from ..sources.mlperf.reader import MlperfReadResult, read_mlperf
from ..sources.facts.mlperf_rules import benchmark_info
from ..sources.facts.benchmarks import workload_for_benchmark
from .study_checks import (
    STUDY_CLUSTERS,
    STUDY_CRITERIA,
    STUDY_FEATURES,
    FindingCheck,
    check_a,
    check_b,
    check_c,
)
from .study_text import (
    command_line,
    filtering_table,
    profiles_with_generation,
    round_key,
    sha256_of,
    study_rows,
)

__all__ = ["WorkloadSection", "WorkloadsStudyResult", "run_workloads_study", "break_even",
           "BREAK_EVEN_EFFICIENCY", "MIN_ROWS"]

#: The scaling efficiency a configuration must keep to count for the break-even point.
BREAK_EVEN_EFFICIENCY = 0.70
#: GPU rows a benchmark needs for its analysis (forest, five clusters).
MIN_ROWS = 10
_TOP = 5


@dataclass(frozen=True)
class WorkloadSection:
    """One benchmark's part of the study.

    Attributes
    ----------
    benchmark : str
    unit : str
        Its throughput unit (``images/s``, ``sequences/s``, ``tokens/s``, ``samples/s``).
    filtering : DataFrame
        ``step``, ``left_out``, ``remaining``.
    table : DataFrame or None
        The analysed rows with metrics, cluster and ranks (None when too few rows).
    checks : tuple of FindingCheck
    break_even : DataFrame
        One row per accelerator model (see :func:`break_even`).
    lines : tuple of str
        The section's Markdown.
    """

    benchmark: str
    unit: str
    filtering: pd.DataFrame
    table: pd.DataFrame | None
    checks: tuple[FindingCheck, ...]
    break_even: pd.DataFrame
    lines: tuple[str, ...]
    importance: pd.DataFrame | None = None
    profiles: pd.DataFrame | None = None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class WorkloadsStudyResult:
    """Every section, the Markdown written and where."""

    sections: tuple[WorkloadSection, ...]
    markdown: str
    output: Path
    data: pd.DataFrame = field(repr=False, default=None)

    def verdicts(self) -> dict[str, dict[str, str]]:
        """``{benchmark: {"a": verdict, "b": ..., "c": ...}}`` (empty for a skipped one)."""
        return {s.benchmark: {c.key: c.verdict for c in s.checks} for s in self.sections}

    def summary_lines(self) -> list[str]:
        out = [f"{len(self.sections)} benchmarks studied; report written to {self.output}"]
        for s in self.sections:
            v = ", ".join(f"({c.key}) {c.verdict}" for c in s.checks) or "too few GPU rows"
            out.append(f"{s.benchmark}: {0 if s.table is None else len(s.table)} rows; {v}")
        return out


def _unit(benchmark: str) -> str:
    info = benchmark_info(benchmark)
    return info.throughput_unit if info is not None else "samples/s"


def _imp(x) -> str:
    """An importance to 2 significant digits; round-off of a zero drop (a feature that never
    changes a prediction, summed in another order) prints as 0."""
    return _f(0.0 if x is not None and np.isfinite(x) and abs(x) < 1e-9 else x, 2)


def break_even(t: pd.DataFrame, threshold: float = BREAK_EVEN_EFFICIENCY) -> pd.DataFrame:
    """Per accelerator model: the largest configuration whose scaling efficiency is at least
    ``threshold`` (the break-even point), next to the model's reference and fastest rows.

    Scaling efficiency is the engine's (speedup over the model's fewest-GPU configuration,
    divided by the GPU ratio). Columns: ``accelerator``, ``rows``, ``n_min``, ``n_max``,
    ``ref_time`` (the fewest-GPU configuration's time), ``break_even_n``,
    ``break_even_time``, ``break_even_efficiency``, ``break_even_system``, ``fastest_n``,
    ``fastest_time``, ``fastest_efficiency``, ``beyond`` (rows with more GPUs than the
    break-even point and efficiency below the threshold). Models with one GPU count have no
    break-even point (NaN).
    """
    rows = []
    for name, g in t.groupby("accelerator", sort=True):
        n = g["n_accelerators"].astype(float)
        eff = g["scaling_efficiency"].astype(float)
        ref = g[n == n.min()].sort_values("time_to_train_min").iloc[0]
        fast = g.loc[g["time_to_train_min"].astype(float).idxmin()]
        rec = {"accelerator": name, "rows": len(g), "n_min": int(n.min()), "n_max": int(n.max()),
               "ref_time": float(ref["time_to_train_min"]), "break_even_n": np.nan,
               "break_even_time": np.nan, "break_even_efficiency": np.nan,
               "break_even_system": "", "fastest_n": int(fast["n_accelerators"]),
               "fastest_time": float(fast["time_to_train_min"]),
               "fastest_efficiency": float(fast["scaling_efficiency"]), "beyond": 0}
        if n.nunique() > 1:
            ok = g[(eff >= threshold).to_numpy()]
            if len(ok):
                ok_n = ok["n_accelerators"].astype(float)
                top = ok[ok_n == ok_n.max()]
                best = top.sort_values("time_to_train_min").iloc[0]
                rec.update(break_even_n=int(best["n_accelerators"]),
                           break_even_time=float(best["time_to_train_min"]),
                           break_even_efficiency=float(best["scaling_efficiency"]),
                           break_even_system=(f"{best['round']} {best['submitter']}/"
                                              f"{best['system']}"),
                           beyond=int(((n > best["n_accelerators"]) & (eff < threshold)).sum()))
        rows.append(rec)
    return pd.DataFrame(rows)


def _md_intro(bench: str, unit: str) -> list[str]:
    """The section's title: the benchmark's model and data set, unit and target."""
    info = benchmark_info(bench)
    wl = workload_for_benchmark(bench)
    title = f"## {bench}"
    what = ", ".join(x for x in (info.model if info else "", info.dataset if info else "") if x)
    return [title, "", f"{what or 'No description in mlperf_benchmarks.csv'}; throughput in "
            f"{unit}; time to train to the closed-division target"
            + (f" ({info.quality_metric})" if info else "") + "."
            + (f" Simulator workload: `{wl}`." if wl else ""), ""]


def _md_rows(data: pd.DataFrame, kept: pd.DataFrame, filtering, n_read: int) -> list[str]:
    """The rows read, per filtering step left out, and analysed."""
    rounds = sorted(set(data["round"]), key=round_key)
    return [f"Rows: {n_read} read ({', '.join(rounds)}); "
            + "; ".join(f"{r.step}: {r.left_out}" for r in filtering.itertuples() if r.left_out)
            + f"; **{len(kept)} GPU configurations analysed**."]


def _md_accelerators(t: pd.DataFrame, per: str) -> list[str]:
    """The accelerators analysed: rows, GPU counts, median time and throughput per GPU."""
    L: list[str] = []
    acc = (t.groupby(["generation_rank", "generation", "accelerator"], dropna=False)
           .agg(rows=("accelerator", "size"), n_min=("n_accelerators", "min"),
                n_max=("n_accelerators", "max"), ttt=("time_to_train_min", "median"),
                pg=("throughput_per_accelerator", "median"))
           .reset_index().sort_values(["generation_rank", "rows", "accelerator"],
                                      ascending=[True, False, True]))
    L += ["", "Accelerators analysed:", ""]
    L += markdown_table(["generation", "accelerator", "rows", "GPU counts", "median time (min)",
                          f"median {per}"],
                         [[r.generation, r.accelerator, r.rows, _span(r.n_min, r.n_max), _f(r.ttt),
                           _f(r.pg)] for r in acc.itertuples()])
    return L


def _md_importance(imp, per: str) -> list[str]:
    """Step 1: the importance table."""
    L: list[str] = []
    L += ["", f"**Step 1, importance** for `throughput_per_accelerator` ({per}; {imp.n_rows} "
              f"rows, held-out R^2 {_f(imp.holdout_r2, 2)}; permutation importance, then "
              "impurity):", ""]
    L += markdown_table(["feature", "permutation (mean)", "permutation (std)", "impurity"],
                         [[f"`{r.feature}`", _imp(r.permutation), _imp(r.permutation_std),
                           _imp(r.impurity)] for r in imp.table.itertuples()])
    return L


def _md_clusters(cl, prof: pd.DataFrame, per: str) -> list[str]:
    """Step 2: the clusters' profiles."""
    L: list[str] = []
    L += ["", f"**Step 2, {cl.k} clusters** (KMeans on {', '.join(f'`{f}`' for f in cl.features)}; "
              f"silhouette {_f(cl.silhouette.get(cl.k, float('nan')), 2)}):", ""]
    L += markdown_table(["cluster", "label", "rows", "GPUs (median, IQR)", "median time (min)", per,
                          "scaling eff.", "generation"],
                         [[int(r.cluster), r.label, int(r.size),
                           f"{_c(r.median_n_accelerators)} ({r.n_accelerators_range})",
                           _f(r.median_time_to_train_min), _f(r.median_throughput_per_accelerator),
                           _f(r.median_scaling_efficiency), r.dominant_generation]
                          for r in prof.itertuples()])
    return L


def _md_top(analysis, per: str) -> list[str]:
    """Step 3: the top configurations."""
    L: list[str] = []
    top = analysis.top()
    L += ["", f"**Step 3, top {len(top)}** (criteria `{STUDY_CRITERIA}`, equal weights; Pareto "
              f"front of {analysis.ranking.front_size} rows; TOPSIS):", ""]
    L += markdown_table(
        ["rank", "round", "submitter", "system", "accelerator", "GPUs", "time (min)", per,
         "scaling eff.", "TOPSIS"],
        [[int(r["rank"]), r["round"], r["submitter"], r["system"], r["accelerator"],
          _i(r["n_accelerators"]), _f(r["time_to_train_min"]),
          _f(r["throughput_per_accelerator"]), _f(r["scaling_efficiency"]),
          _f(r["topsis_score"])] for _, r in top.iterrows()])
    return L


def _md_findings(checks) -> list[str]:
    """The ResNet-50 study's findings checked on this workload, with their evidence."""
    L: list[str] = []
    L += ["", "**The ResNet-50 study's findings, checked on this workload:**", ""]
    L += markdown_table(["finding", "verdict"], [[f"({c.key}) {c.finding}", f"**{c.verdict}**"]
                                                  for c in checks])
    for c in checks:
        L += ["", f"({c.key}) **{c.verdict}**:", ""]
        L += list(c.lines)
    return L


def _md_break_even(be: pd.DataFrame) -> list[str]:
    """The break-even point of each accelerator model."""
    L: list[str] = []
    L += ["", f"**Break-even point** per accelerator model: the largest configuration whose "
              f"scaling efficiency stays at or above {BREAK_EVEN_EFFICIENCY:.2f} (against the "
              "model's fewest-GPU configuration), beside that reference and the fastest "
              "configuration:", ""]
    L += markdown_table(["accelerator", "rows", "GPU counts", "reference time (min)",
                          "break-even GPUs", "its time (min)", "its efficiency", "its system",
                          "fastest: GPUs", "time (min)", "efficiency", "larger and below"],
                         [[r.accelerator, r.rows, _span(r.n_min, r.n_max), _f(r.ref_time),
                           _i(r.break_even_n) if np.isfinite(r.break_even_n) else "one count"
                           if r.n_min == r.n_max else "none", _f(r.break_even_time),
                           _f(r.break_even_efficiency), r.break_even_system or "n/a",
                           _i(r.fastest_n), _f(r.fastest_time), _f(r.fastest_efficiency), r.beyond]
                          for r in be.itertuples()])
    return L


def _md_notes(analysis) -> list[str]:
    """The engine's notes (those on the accelerator type filter left out)."""
    L: list[str] = []
    notes = [n for n in analysis.notes if "accelerator_type" not in n]
    if notes:
        L += ["", "Engine notes: " + "; ".join(notes) + "."]
    return L


def _section(bench: str, data: pd.DataFrame, steps, n_read: int, *, seed: int, backend: str
             ) -> WorkloadSection:
    """One benchmark's section: its rows, the three steps, the findings checked and the
    break-even points."""
    unit = _unit(bench)
    per = unit.replace("/s", "/s per GPU")
    L = _md_intro(bench, unit)
    filtering = filtering_table(steps, n_read)
    kept = data[data["study_status"] == "analysed"].reset_index(drop=True)
    L += _md_rows(data, kept, filtering, n_read)
    if len(kept) < MIN_ROWS or kept["n_accelerators"].nunique() < 2:
        L += ["", f"Too few GPU configurations for the analysis (it needs {MIN_ROWS} with at "
                  "least two GPU counts); no findings are checked.", ""]
        return WorkloadSection(bench, unit, filtering, None, (), pd.DataFrame(), tuple(L))
    eng = Engine(backend=backend)
    analysis = eng.analyze(kept, criteria=STUDY_CRITERIA, features=STUDY_FEATURES,
                           clusters=STUDY_CLUSTERS, top=_TOP, seed=seed, accelerator_type="gpu",
                           drop_invalid=True)
    t = analysis.table
    if analysis.importance is None or analysis.clusters is None:  # pragma: no cover
        raise DataError(f"{bench}: the analysis of {len(t)} rows gave no importance or clusters")
    prof = profiles_with_generation(analysis, t)
    short = unit.replace("images/s", "img/s")
    checks = (check_a(t, prof, short), check_b(t, short), check_c(t))
    imp = analysis.importance
    L += _md_accelerators(t, per)
    L += _md_importance(imp, per)
    L += _md_clusters(analysis.clusters, prof, per)
    L += _md_top(analysis, per)
    L += _md_findings(checks)
    be = break_even(t)
    L += _md_break_even(be)
    L += _md_notes(analysis)
    L.append("")
    return WorkloadSection(bench, unit, filtering, t, checks, be, tuple(L),
                           importance=imp.table, profiles=prof, notes=tuple(analysis.notes))


def run_workloads_study(paths, output_md, *, benchmark: str = "all", published_scores=None,
                        seed: int = 0, backend: str = "cpu", division: str | None = "closed",
                        availability: str | None = "available", command: str | None = None,
                        overwrite: bool = False, write: bool = True) -> WorkloadsStudyResult:
    """The study per benchmark (``benchmark="all"``: every benchmark in the results).

    Parameters are those of :func:`gpurank.engine.commands.study.run_study`; ``write=False`` returns
    the result without writing ``output_md``.
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    paths = list(paths)
    res = read_mlperf(paths, benchmark=benchmark, published_scores=published_scores)
    table = res.table
    names = sorted(b for b in set(table["benchmark"]) if b)
    if not names:
        raise DataError("no benchmark rows were read; nothing to study")
    sections, parts_data = [], []
    for bench in names:
        part = table[table["benchmark"] == bench]
        dup = part["is_duplicate"].to_numpy()
        # duplicates are dropped within the benchmark (a repeat is of the same benchmark)
        dropped = tuple(f"{r}/{u}/{y} (same runs as {d})" for r, u, y, d in
                        zip(part["round"][dup], part["submitter"][dup], part["system"][dup],
                            part["duplicate_of"][dup]))
        bres = MlperfReadResult(part[~dup].reset_index(drop=True), res.warnings, dropped, bench)
        bdata, bsteps = study_rows(bres, division=division, availability=availability)
        parts_data.append(bdata)
        sections.append(_section(bench, bdata, bsteps, len(part), seed=seed, backend=backend))
    data = pd.concat(parts_data, ignore_index=True)
    if command is None:
        command = command_line(paths, benchmark=benchmark, published_scores=published_scores,
                               seed=seed)
    md = _report(res, sections, command=command, published_scores=published_scores,
                 division=division, availability=availability)
    out = Path(output_md)
    if write:
        out = write_text(md, output_md, overwrite=overwrite, name="--output")
    return WorkloadsStudyResult(tuple(sections), md, out, data)


def _report(res, sections, *, command, published_scores, division, availability) -> str:
    L = ["# The study on every MLPerf Training workload", "",
         "<!-- generated by gpurank study --benchmark all: do not edit. Regenerate with the "
         "command below. -->", "",
         "The study of gpurank's methodology (the ResNet-50 report), carried to every "
         "benchmark of the MLPerf Training results read: for each, the three steps "
         "(random-forest importance, five clusters, Pareto + "
         "TOPSIS ranking) on its closed, available GPU systems (duplicated runs removed), the "
         "ResNet-50 study's three findings checked again, and the break-even point per "
         "accelerator model. Every figure is computed from the data by "
         "`gpurank.engine.study_workloads.run_workloads_study`. Throughputs are in each "
         "workload's own unit; times of different workloads are never ranked together.", "",
         "Generated by:", "", "```", command, "```", ""]
    if published_scores is not None:
        L.append(f"Published scores: `{Path(published_scores).name}` (sha256 "
                 f"`{sha256_of(published_scores)[:16]}`), used only for systems whose logs "
                 "cannot be scored.")
        if res.published_runs:
            L.append(f"Published run times: `{Path(res.published_runs).name}` (sha256 "
                     f"`{sha256_of(res.published_runs)[:16]}`), used to find duplicated runs.")
        L.append("")
    L.append(f"Kept: division `{division or 'any'}`, availability `{availability or 'any'}`, "
             "GPUs only; reader warnings: " + str(len(res.warnings)) + ".")
    L += ["", "## Summary", ""]
    rows = []
    for s in sections:
        v = {c.key: c.verdict for c in s.checks}
        be = s.break_even
        if len(be) and be["break_even_n"].notna().any():
            b = be.loc[be["break_even_n"].idxmax()]
            point = (f"{b['accelerator']}: {_i(b['break_even_n'])} GPUs, "
                     f"{_f(b['break_even_time'])} min")
        else:
            point = "n/a"
        rows.append([s.benchmark, s.unit, 0 if s.table is None else len(s.table),
                     v.get("a", "n/a"), v.get("b", "n/a"), v.get("c", "n/a"), point])
    L += markdown_table(
        ["benchmark", "throughput", "GPU rows", "(a) efficient cluster 4-16 newest GPUs",
         "(b) largest fastest, least efficient", "(c) sub-linear speedup",
         f"largest break-even point (efficiency >= {BREAK_EVEN_EFFICIENCY:.2f})"], rows)
    L += ["", "Verdicts: SUPPORTED when every listed condition holds, NOT SUPPORTED when none "
              "does, PARTLY otherwise; n/a where a benchmark has too few GPU rows.", ""]
    for s in sections:
        L += list(s.lines)
    return "\n".join(L)
