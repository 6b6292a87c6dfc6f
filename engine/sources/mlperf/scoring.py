"""Scores of MLPerf Training results: the olympic average of the runs' times as
``mlperf_logging.result_summarizer`` computes it, and the published per-system scores and
run times that fill what incomplete logs cannot give.
"""

from __future__ import annotations

import io
import statistics
from pathlib import Path

import numpy as np
import pandas as pd

from ...errors import DataError, UsageError
from ...schema import closest_names
from .discovery import ALL_BENCHMARKS, SystemRef, entry_exists
from ..facts.mlperf_rules import (
    benchmark_info,
)
from ..facts.regular_files import (
    UnreadableFile,
    excerpt,
    path_text,
    read_regular,
)

__all__ = ["score_runs", "olympic_mean", "median_or_none", "published_key", "check_published_benchmarks",
           "read_published_scores", "published_timings", "fill_published"]


def score_runs(minutes_valid: list[float], n_runs: int, required: int,
               dropped: int = 1) -> tuple[float | None, str]:
    """The MLPerf olympic average of valid run times (minutes) and, when None, why.

    ``n_runs`` counts every run (valid or not). Drop the ``dropped`` fastest and the
    ``dropped`` slowest less one per failed run (a failed run counts as one of the slowest);
    average the rest. More than ``dropped`` failed runs, or fewer than ``required`` runs, give
    no score (``mlperf_logging.result_summarizer``).
    """
    n_failed = n_runs - len(minutes_valid)
    if n_runs == 0:
        return None, "no result logs"
    if n_runs < required:
        return None, f"only {n_runs} of {required} required runs present"
    if n_failed > dropped:
        return None, f"{n_failed} of {n_runs} runs failed (at most {dropped} allowed)"
    times = _olympic_core(minutes_valid, n_failed, dropped)
    if not times:
        return None, "too few valid runs to average"
    return sum(times) / len(times), ""


def _olympic_core(values: list[float], n_failed: int, dropped: int) -> list[float]:
    """The values an olympic mean averages: drop ``dropped`` lowest and ``dropped - n_failed``
    highest (the failed runs are the slowest)."""
    v = sorted(values)[dropped:]
    top = max(dropped - n_failed, 0)
    return v[: len(v) - top] if top else v


def olympic_mean(values: list[float], n_failed: int, dropped: int = 1) -> float | None:
    """Olympic mean of a run fact (the RCP rule): with at least ``2 dropped + 1`` values, drop
    ``dropped`` lowest and ``dropped - n_failed`` highest; else the plain mean."""
    if not values:
        return None
    v = sorted(values)
    if len(v) >= 2 * dropped + 1:
        v = _olympic_core(v, n_failed, dropped)
    return sum(v) / len(v) if v else None


def median_or_none(values) -> float | None:
    """The median of the values that are not None; None when there is none."""
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


#: summary.csv column -> reader column, for the facts a published score brings
PUBLISHED_FIELDS = {
    "time_to_train_minutes": "time_to_train_min",
    "epochs_to_converge": "epochs",
    "global_batch_size": "global_batch_size",
    "throughput_e2e_samples_per_s": "throughput",
    "throughput_train_samples_per_s": "throughput_train",
    "scaling_factor": "scaling_factor",
    "run_minutes_min": "run_minutes_min",
    "run_minutes_max": "run_minutes_max",
    "final_eval_accuracy": "final_eval_accuracy",
    "samples_to_converge": "samples_to_converge",
    "convergence_point": "convergence_point",
    "samples_per_epoch": "samples_per_epoch",
    "throughput_e2e_tokens_per_s": "_throughput_tokens",
    "max_sequence_length": "_tokens_per_sample",
}
#: summary.csv text columns a published score brings
PUBLISHED_TEXT = {"convergence_unit": "convergence_unit"}
_PUBLISHED_KEY = ("round", "submitter", "system")


def published_key(table, ref: "SystemRef", benchmark: str):
    """The key of a row in a published table: with its benchmark when the table has one."""
    if table is None:
        return None
    with_bench = getattr(table, "has_benchmark", True)
    return (ref.round, benchmark if with_bench else "", ref.submitter, ref.system)


def check_published_benchmarks(table, select: str, what: str, path) -> None:
    """Refuse, naming the file, a published table without a ``benchmark`` column when
    ``select`` is every benchmark (its rows could not be told apart)."""
    if select == ALL_BENCHMARKS and not getattr(table, "has_benchmark", True):
        raise UsageError(f"{what} file {path_text(Path(path))!r} has no column 'benchmark', so "
                         "it is one benchmark's; with --benchmark all the summary must name "
                         "each row's benchmark")


class _Keyed(dict):
    """A published table keyed on (round, benchmark, submitter, system); ``has_benchmark`` is
    False when the file has no benchmark column (the benchmark part of each key is then "")."""

    has_benchmark = True


#: A published summary or runs table larger than this is not read (the real ones are < 3 MB).
MAX_PUBLISHED_BYTES = 1 << 30


def _read_csv_strings(path, what: str, required) -> pd.DataFrame:
    p = Path(path)
    if not entry_exists(p):
        raise UsageError(f"{what} file {path_text(p)!r} does not exist")
    try:
        data = read_regular(p, limit=MAX_PUBLISHED_BYTES)
    except UnreadableFile as exc:
        raise DataError(f"{path_text(p)}: {what} file {str(exc).removesuffix('; skipped')}") from None
    try:
        df = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)
    except (ValueError, OSError, pd.errors.ParserError, RecursionError) as exc:
        raise DataError(f"{path_text(p)}: cannot read {what} as CSV "
                        f"({excerpt(' '.join(str(exc).split()), 120)})") from None
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise DataError(f"{path_text(p)}: {what} has no column(s) {', '.join(missing)}; "
                        f"{closest_names(missing[0], df.columns)}")
    return df


def _num(text: str):
    text = (text or "").strip()
    if not text:
        return None
    try:
        v = float(text)
    except ValueError:
        return None
    return v if np.isfinite(v) else None


def read_published_scores(path) -> dict[tuple[str, str, str, str], dict]:
    """Published per-system scores keyed on (round, benchmark, submitter, system).

    Every row is returned (those without a time to train fill nothing, but name the
    benchmarks a system has); each value maps reader columns
    (``time_to_train_min``, ``epochs``, ``global_batch_size``, ``throughput``, ...) to numbers
    (None where the summary is empty). A batch size written as several ``;``-joined values
    (runs that disagreed) is left empty. Without a ``benchmark`` column the benchmark part of
    every key is "" (the returned dict's ``has_benchmark`` is False).
    """
    df = _read_csv_strings(path, "published scores", [*_PUBLISHED_KEY, "time_to_train_minutes"])
    out = _Keyed()
    out.has_benchmark = "benchmark" in df.columns
    for rec in df.to_dict("records"):
        vals = {dst: _num(rec.get(src, "")) for src, dst in PUBLISHED_FIELDS.items()}
        if vals["global_batch_size"] is not None:
            vals["global_batch_size"] = int(vals["global_batch_size"])
        if vals["samples_per_epoch"] is not None:
            vals["samples_per_epoch"] = int(vals["samples_per_epoch"])
        for src, dst in PUBLISHED_TEXT.items():
            vals[dst] = (rec.get(src) or "").strip()
        if vals["final_eval_accuracy"] is None:  # the all-benchmark summary's name for it
            vals["final_eval_accuracy"] = _num(rec.get("final_quality", ""))
        bench = rec.get("benchmark", "").strip() if out.has_benchmark else ""
        out[(rec["round"].strip(), bench, rec["submitter"].strip(), rec["system"].strip())] = vals
    return out


def published_timings(path) -> dict[tuple[str, str, str, str], tuple]:
    """Per system, the sorted (run_start_ms, run_stop_ms) pairs of a published runs table,
    keyed as :func:`read_published_scores`."""
    df = _read_csv_strings(path, "published runs", [*_PUBLISHED_KEY, "run_start_ms", "run_stop_ms"])
    has_bench = "benchmark" in df.columns
    acc: dict[tuple[str, str, str, str], list] = {}
    for rec in df.to_dict("records"):
        a, b = _num(rec["run_start_ms"]), _num(rec["run_stop_ms"])
        if a is None or b is None or b < a:
            continue  # no run ends before it starts: such a pair matches no valid log
        key = (rec["round"].strip(), rec["benchmark"].strip() if has_bench else "",
               rec["submitter"].strip(), rec["system"].strip())
        acc.setdefault(key, []).append((round(a, 3), round(b, 3)))
    out = _Keyed({k: tuple(sorted(v)) for k, v in acc.items()})
    out.has_benchmark = has_bench
    return out


def fill_published(row: dict, vals: dict) -> None:
    """Take a system's score and run facts from the published summary (logs gave no score).

    Throughputs are in the benchmark's unit: tokens/s where it counts tokens (the summary's
    ``throughput_e2e_tokens_per_s``; the training rate from its samples rate x the sequence
    length). Where the summary has no samples (Mask R-CNN, whose logs give no data-set size),
    samples to converge are epochs x the benchmark's data-set size and the end-to-end
    throughput is samples to converge / the score's time before scaling: the olympic means'
    ratio, not the median of the runs' rates the logs give.
    """
    bench = row.get("benchmark") or ""
    info = benchmark_info(bench) if bench else None
    for col, v in vals.items():
        if col.startswith("_"):
            continue
        if col == "global_batch_size":
            row[col] = v if v is not None else row.get(col)
        elif col == "scaling_factor":
            row[col] = v if v is not None else 1.0
        elif col in PUBLISHED_TEXT.values():
            row[col] = v or row.get(col, "")
        elif col == "samples_per_epoch":
            row[col] = v if v is not None else row.get(col)
        else:
            row[col] = v if v is not None else np.nan
    tps = vals.get("_tokens_per_sample") or (info.tokens_per_sample if info else None)
    if info is not None and info.throughput_unit == "tokens/s":
        row["throughput"] = vals.get("_throughput_tokens") or np.nan
        t = vals.get("throughput_train")
        row["throughput_train"] = t * tps if t is not None and tps else np.nan
    if info is not None and not np.isfinite(row.get("samples_to_converge", np.nan)):
        ep, spe = vals.get("epochs"), info.samples_per_epoch
        if ep is not None and spe:
            row["samples_to_converge"] = ep * spe
            row["samples_per_epoch"] = spe
            ttt, sf = vals.get("time_to_train_min"), vals.get("scaling_factor") or 1.0
            if not np.isfinite(row.get("throughput", np.nan)) and ttt:
                row["throughput"] = ep * spe / (ttt / sf * 60.0)
    if info is not None:
        row["throughput_unit"] = info.throughput_unit
    row["score_source"] = "published"
