"""What each MLPerf Training benchmark's rules and logs mean: scoring, reference convergence,
log units.

Three sources, in this order of authority:

* **MLCommons' ``mlperf-logging`` package** (a dependency) for what it knows about every round,
  newer ones included: the runs a result set must have (``benchmark_meta``) and the reference
  convergence points (``rcp_checker/training_<ruleset>/rcps_<benchmark>.json``). The number of
  runs dropped at each end of the olympic mean is a rule of its ``result_summarizer``
  (``_compute_strong_score_standalone``: 4 for ``unet3d``, 1 for every other benchmark), written
  here as :data:`DROPPED_EACH_END` and checked against the installed package by the tests.
* **``engine/data/mlperf_benchmarks.csv``** for what the logs of a benchmark mean (what
  ``epoch_num`` counts, which logged value is the data-set size, the throughput unit), one row
  per benchmark whose logs were read, each with its source.
* Nothing else: a benchmark the package does not list has no scoring rule
  (:func:`scoring_rule` returns None) and the reader keeps its rows with a reason; one without
  a row in the table keeps its logged convergence point without conversions.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pandas as pd

__all__ = ["ScoringRule", "BenchmarkInfo", "scoring_rule", "benchmark_info", "benchmark_table",
           "known_benchmarks", "reference_convergence", "mlperf_logging_version",
           "DROPPED_EACH_END", "convert_count", "round_ordinal"]

#: Runs dropped at each end of the olympic mean, by benchmark (every other benchmark: 1). The
#: rule of mlperf-logging's result summarizer and RCP checker; tests/test_mlperf_rules.py
#: checks that the installed package still says so.
DROPPED_EACH_END = {"unet3d": 4}


@dataclass(frozen=True)
class ScoringRule:
    """How a benchmark's result set is scored.

    Attributes
    ----------
    benchmark : str
    required_runs : int
        Result files a complete set has (``mlperf_logging.benchmark_meta``).
    dropped_each_end : int
        Runs dropped at each end of the olympic mean; a failed run counts as one of the
        slowest, and more than ``dropped_each_end`` failed runs leave no score.
    source : str
        Where the rule comes from (package and version).
    """

    benchmark: str
    required_runs: int
    dropped_each_end: int
    source: str


@dataclass(frozen=True)
class BenchmarkInfo:
    """How one benchmark's logs are read (a row of ``mlperf_benchmarks.csv``).

    ``epoch_num_counts`` / ``step_num_counts``: what ``eval_accuracy``'s ``epoch_num`` /
    ``step_num`` metadata counts (``epochs``, ``samples``, ``tokens``, ``steps``; "" when not
    used); ``samples_count`` always counts samples. Values above ``counts_samples_above``
    count samples whatever the column says (a unit change between rounds). ``samples_per_epoch``
    is the data-set size when the logs do not give it (or give something else under
    ``train_samples``: ``train_samples_is_dataset`` is False). ``quality_targets`` are the
    closed-division thresholds, ``;``-joined, each ``[METRIC]<=X`` or ``[METRIC]>=X``.
    ``train_rate_rule``: ``epoch_median`` (median rate of the logged epochs) or
    ``run_minus_eval`` (samples to converge / (run time - evaluation time inside the run)).
    """

    benchmark: str
    model: str
    dataset: str
    throughput_unit: str
    tokens_per_sample: int | None
    epoch_num_counts: str
    step_num_counts: str
    counts_samples_above: float | None
    samples_per_epoch: int | None
    train_samples_is_dataset: bool
    quality_metric: str
    quality_targets: tuple[tuple[str, str, float], ...]
    train_rate_rule: str
    source: str

    def passes(self, values: dict) -> bool | None:
        """Whether metric values (``{metric: value}``; ``""`` for an unnamed metric) meet every
        quality target; None when a target's metric is missing."""
        for metric, op, x in self.quality_targets:
            v = values.get(metric)
            if v is None:
                return None
            if not ((v <= x) if op == "<=" else (v >= x)):
                return False
        return True


_TARGET = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)?\s*(<=|>=)\s*([-+0-9.eE]+)\s*$")


def _opt_int(v) -> int | None:
    f = pd.to_numeric(v, errors="coerce")
    return int(f) if pd.notna(f) else None


@lru_cache(maxsize=1)
def benchmark_table() -> pd.DataFrame:
    """``mlperf_benchmarks.csv`` as shipped (one row per benchmark, with sources)."""
    with resources.files("gpurank.engine.data").joinpath("mlperf_benchmarks.csv").open("rb") as fh:
        return pd.read_csv(fh, dtype=str, keep_default_na=False)


@lru_cache(maxsize=64)
def benchmark_info(name: str) -> BenchmarkInfo | None:
    """The log semantics of a benchmark, or None when the table has no row for it."""
    t = benchmark_table()
    row = t[t["benchmark"] == name]
    if row.empty:
        return None
    r = row.iloc[0]
    targets = []
    for part in filter(None, (p.strip() for p in r["quality_targets"].split(";"))):
        m = _TARGET.match(part)
        if m is None:  # pragma: no cover - the shipped table is tested
            raise ValueError(f"mlperf_benchmarks.csv: bad quality target {part!r} for {name}")
        targets.append((m.group(1) or "", m.group(2), float(m.group(3))))
    above = pd.to_numeric(r["counts_samples_above"], errors="coerce")
    return BenchmarkInfo(
        benchmark=name,
        model=r["model"],
        dataset=r["dataset"],
        throughput_unit=r["throughput_unit"],
        tokens_per_sample=_opt_int(r["tokens_per_sample"]),
        epoch_num_counts=r["epoch_num_counts"],
        step_num_counts=r["step_num_counts"],
        counts_samples_above=float(above) if pd.notna(above) else None,
        samples_per_epoch=_opt_int(r["samples_per_epoch"]),
        train_samples_is_dataset=r["train_samples_is_dataset"].strip().lower() == "yes",
        quality_metric=r["quality_metric"],
        quality_targets=tuple(targets),
        train_rate_rule=r["train_rate_rule"] or "run_minus_eval",
        source=r["source"],
    )


# ---------------------------------------------------------------- mlperf-logging


def mlperf_logging_version() -> str:
    """The installed mlperf-logging version ("" when it is not installed)."""
    try:
        return version("mlperf-logging")
    except PackageNotFoundError:
        return ""


@lru_cache(maxsize=1)
def _result_file_counts() -> dict:
    try:
        from mlperf_logging.benchmark_meta import get_result_file_counts
    except ImportError:
        return {}
    return dict(get_result_file_counts("training"))


def known_benchmarks() -> tuple[str, ...]:
    """Every training benchmark mlperf-logging gives a run count for, sorted."""
    return tuple(sorted(_result_file_counts()))


def scoring_rule(benchmark: str) -> ScoringRule | None:
    """The scoring rule of ``benchmark``, or None when mlperf-logging does not know it (or is
    not installed)."""
    counts = _result_file_counts()
    if benchmark not in counts:
        return None
    return ScoringRule(
        benchmark=benchmark,
        required_runs=int(counts[benchmark]),
        dropped_each_end=DROPPED_EACH_END.get(benchmark, 1),
        source=f"mlperf-logging {mlperf_logging_version()}".strip(),
    )


def round_ordinal(round_) -> int | None:
    """The place of an MLPerf Training round in the sequence of rounds (``v0.5`` 0, ``v0.6``
    1, ``v0.7`` 2, then two a year: ``v1.0`` 3, ``v1.1`` 4, ..., ``v4.0`` 9, ``v5.1`` 12), so
    the difference of two is the number of rounds between them; None for a text that names
    no round."""
    rs = _ruleset_of(str(round_)) if round_ is not None else None
    if rs is None:
        return None
    major, minor = rs
    if major == 0:
        return min(max(minor - 5, 0), 2)  # v0.5, v0.6, v0.7
    return 2 * major + (1 if minor >= 1 else 0) + 1


def _ruleset_of(round_: str) -> tuple[int, int] | None:
    m = re.search(r"(?<!\d)(\d{1,4})\.(\d{1,4})(?!\d)", round_ or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


@lru_cache(maxsize=1)
def _rcp_files() -> dict:
    """{benchmark: {(major, minor): path}} of the RCP tables the installed package ships."""
    try:
        import mlperf_logging.rcp_checker as rc
    except ImportError:
        return {}
    base = Path(rc.__file__).parent
    out: dict = {}
    for f in base.glob("training_*/rcps_*.json"):
        rs = _ruleset_of(f.parent.name.removeprefix("training_"))
        if rs is None:
            continue
        out.setdefault(f.stem.removeprefix("rcps_"), {})[rs] = f
    return out


def reference_convergence(benchmark: str, round_: str | None = None) -> pd.DataFrame:
    """MLPerf reference convergence points of a benchmark, one row per global batch size.

    Read from mlperf-logging's RCP table of the round's ruleset (``v4.0`` -> ``4.0.0``), or of
    the nearest earlier ruleset that has one (the latest when ``round_`` is None; the earliest
    when every table is newer). The convergence of each batch size is the olympic mean of its
    reference runs (``dropped_each_end`` at each end), as the RCP checker computes it.

    Returns
    -------
    DataFrame
        ``global_batch``, ``mean`` (olympic mean, in ``unit``), ``min``, ``max``, ``n_runs``,
        ``unit`` (``epochs``, ``samples``, ``tokens`` or ``steps``: how the logs of that
        ruleset count), ``ruleset``. Empty when the package has no table for the benchmark.
    """
    cols = ["global_batch", "mean", "min", "max", "n_runs", "unit", "ruleset"]
    files = _rcp_files().get(benchmark)
    if not files:
        return pd.DataFrame(columns=cols)
    want = _ruleset_of(round_) if round_ else None
    keys = sorted(files)
    if want is None:
        key = keys[-1]
    else:
        earlier = [k for k in keys if k <= want]
        key = earlier[-1] if earlier else keys[0]
    with open(files[key], encoding="utf-8") as fh:
        raw = json.load(fh)
    info = benchmark_info(benchmark)
    k = DROPPED_EACH_END.get(benchmark, 1)
    rows = []
    for rec in raw.values():
        vals = rec.get("Epochs to converge", rec.get("samples to converge"))
        if not isinstance(vals, list) or not vals:
            continue
        v = sorted(float(x) for x in vals)
        core = v[k : len(v) - k] if len(v) > 2 * k else v
        rows.append({"global_batch": int(rec["BS"]), "mean": sum(core) / len(core),
                     "min": v[0], "max": v[-1], "n_runs": len(v)})
    df = pd.DataFrame(rows, columns=cols[:5]).sort_values("global_batch").reset_index(drop=True)
    df["unit"] = _rcp_unit(benchmark, raw, info, df["mean"])
    df["ruleset"] = f"{key[0]}.{key[1]}.0"
    return df


def _rcp_unit(benchmark, raw, info: BenchmarkInfo | None, means) -> str:
    if any("samples to converge" in r for r in raw.values()):
        return "samples"
    if info is None:
        return ""
    unit = info.epoch_num_counts or info.step_num_counts
    above = info.counts_samples_above
    if above is not None and len(means) and float(means.min()) > above:
        return "samples"
    return unit


def convert_count(value: float, unit: str, *, samples_per_epoch=None, tokens_per_sample=None,
                  global_batch=None) -> dict:
    """A convergence count in ``unit`` as epochs, samples and tokens (NaN where the conversion
    needs a factor that is not known)."""
    nan = math.nan
    spe = float(samples_per_epoch) if samples_per_epoch else nan
    tps = float(tokens_per_sample) if tokens_per_sample else nan
    gb = float(global_batch) if global_batch else nan
    if unit == "epochs":
        samples = value * spe
    elif unit == "samples":
        samples = value
    elif unit == "tokens":
        samples = value / tps
    elif unit == "steps":
        samples = value * gb
    else:
        samples = nan
    return {"epochs": value if unit == "epochs" else samples / spe,
            "samples": samples,
            "tokens": value if unit == "tokens" else samples * tps}
