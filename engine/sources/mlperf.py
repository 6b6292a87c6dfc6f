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
:mod:`gpurank.engine.sources.mlperf_rules`): per run ``run_stop - run_start``; only runs with
``status: success`` (v0.5 and v0.6 Alibaba: final accuracy >= target) are valid; sort the valid
times, drop the ``k`` fastest and the ``k`` slowest less one per failed run (``k`` = 4 for
``unet3d``, 1 otherwise); average the rest; multiply by ``scaling.json``'s factor; no score when
more than ``k`` runs failed, fewer than the benchmark's required runs are present, or the
benchmark has no known rule.
"""

from __future__ import annotations

import json
import os
import re
import statistics
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from gpurank.engine.catalog import accelerator_catalog
from gpurank.engine.errors import DataError, UsageError
from gpurank.engine.io import write_table
from gpurank.engine.outputs import check_target
from gpurank.engine.schema import closest_names
from gpurank.engine.sources.accelerators import ResolvedAccelerator, resolve_accelerator
from gpurank.engine.sources.mlperf_logs import RunLog, parse_result_log
from gpurank.engine.sources.mlperf_rules import (
    BenchmarkInfo,
    benchmark_info,
    convert_count,
    known_benchmarks,
    mlperf_logging_version,
    scoring_rule,
)
from gpurank.engine.sources.mlperf_systems import parse_system_description
from gpurank.engine.sources.workloads import workload_for_benchmark
from gpurank.engine.sources.regular_files import (
    UnreadableFile,
    excerpt,
    is_regular_dir,
    path_text,
    printable,
    read_regular,
)

__all__ = [
    "ReadWarning",
    "MlperfReadResult",
    "read_mlperf",
    "run_mlperf_cli",
    "score_runs",
    "read_published_scores",
    "MLPERF_COLUMNS",
]


#: ``benchmark=`` value that reads every benchmark folder
ALL_BENCHMARKS = "all"
_BENCH_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")

#: the output columns, in order
MLPERF_COLUMNS = [
    "round", "benchmark", "workload", "division", "availability", "submitter", "system", "system_name",
    "accelerator", "accelerator_raw", "accelerator_id", "accelerator_type",
    "n_accelerators", "n_nodes", "accelerators_per_node",
    "host_cpu", "host_processors_per_node", "host_cores_per_processor", "cpu_cores_per_accelerator",
    "interconnect", "network", "framework",
    "global_batch_size", "epochs", "time_to_train_min", "throughput", "throughput_train",
    "throughput_unit", "convergence_unit", "convergence_point", "samples_to_converge",
    "samples_per_epoch", "price_per_accelerator_hour", "power_w",
    "release_year", "generation", "generation_rank", "peak_tflops", "mem_bw_tbps", "tdp_w",
    "n_runs", "n_runs_required", "n_runs_valid", "scaling_factor", "run_minutes_min", "run_minutes_max",
    "final_eval_accuracy", "score_reason", "score_source", "is_duplicate", "duplicate_of",
    "log_format", "system_desc_format",
]  # fmt: skip


@dataclass(frozen=True)
class ReadWarning:
    """One problem met while reading: the file it concerns and what was wrong."""

    path: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


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


class _Warnings:
    def __init__(self, strict: bool):
        self.strict = strict
        self.items: list[ReadWarning] = []
        self._seen: set[ReadWarning] = set()

    def add(self, path, reason: str) -> None:
        # file names and values come from the tree: control characters are escaped
        w = ReadWarning(path_text(path), printable(reason))
        if self.strict:
            raise DataError(f"{w.path}: {w.reason} (strict mode)")
        # a description shared by several benchmark rows is reported once
        if w not in self._seen:
            self._seen.add(w)
            self.items.append(w)


# ---------------------------------------------------------------- discovery

_ROUND_RE = re.compile(r"v(\d+)\.(\d+)")


@dataclass
class _SystemRef:
    round: str
    submitter: str
    system: str
    desc_path: Path | None
    bench_dir: Path | None
    desc_is_fallback: bool = False
    #: the benchmark folder's name ("" when the system has no result folder)
    bench_folder: str = ""


def _subdirs(p: Path, warn: "_Warnings | None" = None) -> list[Path]:
    """Real sub-folders of ``p``, sorted; links to folders are not followed (a link could
    lead out of the tree, or back into it forever)."""
    if not is_regular_dir(p):
        return []
    try:
        children = sorted(p.iterdir())
    except OSError:
        return []
    out = []
    for c in children:
        if c.name.startswith("."):
            continue
        if is_regular_dir(c):
            out.append(c)
        elif warn is not None and c.is_symlink() and c.is_dir():
            warn.add(c, "is a link to a folder; not followed")
    return out


def _exists(p: Path) -> bool:
    """The entry exists (also a broken link or a FIFO, which the reader reports)."""
    return os.path.lexists(p)


def _round_of(p: Path) -> str | None:
    for part in (p.name, *(q.name for q in p.parents)):
        m = _ROUND_RE.search(part)
        if m:
            return f"v{m.group(1)}.{m.group(2)}"
    return None


def _is_submitter(p: Path) -> bool:
    return is_regular_dir(p / "results") or is_regular_dir(p / "systems")


def _is_round_root(p: Path) -> bool:
    if p.name == "v0.5.0" or is_regular_dir(p / "v0.5.0"):
        return True
    return any(_is_submitter(c) for c in _subdirs(p))


def _find_round_roots(p: Path, depth: int = 0) -> list[tuple[Path, str | None]]:
    """(round root, only this submitter or None) pairs under ``p``."""
    if _is_round_root(p):
        return [(p, None)]
    if _is_submitter(p) and p.parent != p:
        return [(p.parent, p.name)]
    if depth >= 4:
        return []
    out: list[tuple[Path, str | None]] = []
    for c in _subdirs(p):
        out.extend(_find_round_roots(c, depth + 1))
    return out


def _natural_key(p: Path):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", p.name)]


def _bench_dirs(sysdir: Path, select: str, warn: "_Warnings") -> list[Path]:
    """The benchmark folders of a system's result folder that ``select`` asks for."""
    if select == ALL_BENCHMARKS:
        return _subdirs(sysdir, warn)
    d = sysdir / select
    return [d] if is_regular_dir(d) else []


def _folder(bench_dir: Path | None, select: str) -> str:
    """The benchmark a row is of before its logs are read: its folder, else the one asked for
    (a described system without results; "" when reading every benchmark)."""
    if bench_dir is not None:
        return bench_dir.name
    return "" if select == ALL_BENCHMARKS else select


def _systems_in_round(root: Path, only: str | None, select: str,
                      warn: _Warnings) -> list[_SystemRef]:
    rnd = _round_of(root)
    if rnd is None:
        rnd = root.name
        warn.add(root, f"cannot tell the round from the folder name {excerpt(root.name)}; "
                       "using it as the round")
    refs: list[_SystemRef] = []
    v05_base = root if root.name == "v0.5.0" else root / "v0.5.0"
    if is_regular_dir(v05_base):
        for sub in _subdirs(v05_base, warn):
            if only and sub.name != only:
                continue
            for dirpath, dirnames, _files in os.walk(sub):
                dirnames.sort()
                if "results" not in dirnames:
                    continue
                res = Path(dirpath) / "results"
                dirnames.remove("results")
                entry = os.path.relpath(dirpath, sub)
                for sysdir in _subdirs(res, warn):
                    benches = _bench_dirs(sysdir, select, warn)
                    if not benches and _subdirs(sysdir):
                        continue  # a system that ran other benchmarks only
                    sid = sysdir.name if entry == "." else f"{Path(entry).as_posix()}/{sysdir.name}"
                    desc = sysdir / "entry.json"
                    for bench_dir in benches or [None]:
                        refs.append(
                            _SystemRef(rnd, sub.name, sid, desc if _exists(desc) else None,
                                       bench_dir, bench_folder=_folder(bench_dir, select))
                        )  # fmt: skip
        return refs
    for sub in _subdirs(root, warn):
        if only and sub.name != only:
            continue
        if not _is_submitter(sub):
            continue
        res, sysd = sub / "results", sub / "systems"
        descs = {}
        if is_regular_dir(sysd):
            try:
                entries = sorted(sysd.iterdir())
            except OSError:
                entries = []
            for f in entries:
                # every .json entry that is not a folder: the parser refuses FIFOs, devices
                # and links to them with a warning, instead of skipping them unseen
                if f.suffix == ".json" and not is_regular_dir(f):
                    descs[f.stem] = f
        result_dirs = {d.name: d for d in _subdirs(res, warn)}
        for name in sorted(set(descs) | set(result_dirs)):
            sysdir = result_dirs.get(name)
            benches = _bench_dirs(sysdir, select, warn) if sysdir is not None else []
            # a result folder with other benchmarks only (or, reading one, without this one)
            other_only = sysdir is not None and (select != ALL_BENCHMARKS or _subdirs(sysdir))
            if other_only and not benches:
                continue  # results for other benchmarks only
            desc = descs.get(name)
            fallback = False
            if desc is None and sysdir is not None and _exists(sysdir / "entry.json"):
                desc, fallback = sysdir / "entry.json", True
            for bench_dir in benches or [None]:
                refs.append(_SystemRef(rnd, sub.name, name, desc, bench_dir, fallback,
                                       _folder(bench_dir, select)))
    return refs


# ---------------------------------------------------------------- scoring


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


def _olympic(values: list[float], n_failed: int, dropped: int = 1) -> float | None:
    """Olympic mean of a run fact (the RCP rule): with at least ``2 dropped + 1`` values, drop
    ``dropped`` lowest and ``dropped - n_failed`` highest; else the plain mean."""
    if not values:
        return None
    v = sorted(values)
    if len(v) >= 2 * dropped + 1:
        v = _olympic_core(v, n_failed, dropped)
    return sum(v) / len(v) if v else None


def _median(values) -> float | None:
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


# ---------------------------------------------------------------- one system


#: A scaling.json larger than this is not read (real ones hold one number).
MAX_SCALING_BYTES = 1 << 20


def _read_scaling(path: Path, warn: _Warnings) -> float:
    if not _exists(path):
        return 1.0
    try:
        text = read_regular(path, limit=MAX_SCALING_BYTES).decode("utf-8", errors="replace")
        d = json.loads(text)
        f = float(d["scaling_factor"])
        if not (0 < f < float("inf")):
            raise ValueError
        return f
    except UnreadableFile as exc:
        warn.add(path, f"scaling.json {exc}; scaling factor 1 used")
        return 1.0
    except (ValueError, KeyError, TypeError, RecursionError, OverflowError) as exc:
        warn.add(path, f"malformed scaling.json ({type(exc).__name__}); scaling factor 1 used")
        return 1.0


def _description_fields(ref: _SystemRef, warn: _Warnings) -> dict:
    """The system description's fields ({} when it is missing or unreadable)."""
    fields = None
    if ref.desc_path is None:
        where = (ref.bench_dir.parent if ref.bench_dir else Path(ref.submitter))
        warn.add(where, f"missing system description systems/{ref.system}.json; hardware fields left empty")
    else:
        fields, why = parse_system_description(ref.desc_path)
        if fields is None:
            warn.add(ref.desc_path, f"unreadable system description: {why}; hardware fields left empty")
    fields = fields or {}
    for problem in fields.get("desc_problems", ()):
        warn.add(ref.desc_path, problem)
    return fields


def _hardware_columns(ref: _SystemRef, fields: dict, warn: _Warnings) -> dict:
    """The row's hardware columns: the accelerator resolved, counts, host and network."""
    apn = fields.get("accelerators_per_node")
    nodes = fields.get("number_of_nodes")
    acc_raw = fields.get("accelerator_raw", "")
    res = resolve_accelerator(
        acc_raw, memory=fields.get("accelerator_memory", ""), hint=f"{fields.get('system_name', '')} {ref.system}"
    )
    if apn == 0 and res.match != "cpu":
        warn.add(ref.desc_path, f"accelerators_per_node = 0 but accelerator_model_name is "
                                f"{excerpt(acc_raw)}; counts left empty")
        apn = None
    if fields and (apn is None or nodes is None) and not fields.get("desc_problems"):
        warn.add(ref.desc_path,
                 "accelerators_per_node or number_of_nodes missing or not an integer")
    n_acc = apn * nodes if apn is not None and nodes is not None else None
    name = res.name
    if fields and not res.known:
        warn.add(ref.desc_path, f"unknown accelerator name {excerpt(acc_raw)}; kept as "
                                f"{excerpt(name)}, catalog facts left empty")
    if n_acc == 0:
        atype = "cpu"
    elif res.known and res.match != "cpu":
        atype = res.accelerator_type
    elif not fields:
        atype = ""
    else:
        atype = "tpu" if "tpu" in name.lower() else "other"
    cores_node = fields.get("host_cores_per_node")
    return {
        "_resolved": res if n_acc != 0 else None,
        "division": fields.get("division", ""),
        "availability": fields.get("availability", ""),
        "system_name": fields.get("system_name", ""),
        "accelerator": name if n_acc != 0 else "",
        "accelerator_raw": acc_raw,
        "accelerator_type": atype,
        "n_accelerators": n_acc,
        "n_nodes": nodes,
        "accelerators_per_node": apn,
        "host_cpu": fields.get("host_cpu", ""),
        "host_processors_per_node": fields.get("host_processors_per_node"),
        "host_cores_per_processor": fields.get("host_processor_core_count"),
        "interconnect": fields.get("interconnect", ""),
        "network": fields.get("network", ""),
        "framework": fields.get("framework", ""),
        "system_desc_format": fields.get("desc_format", ""),
        "cpu_cores_per_accelerator": cores_node / apn if cores_node and apn else np.nan,
    }


def _read_runs(ref: _SystemRef, warn: _Warnings) -> tuple[list[RunLog], float]:
    """The system's result logs, parsed in natural order, and its scaling factor."""
    runs: list[RunLog] = []
    scale = 1.0
    if ref.bench_dir is not None:
        files = sorted(ref.bench_dir.glob("result_*.txt"), key=_natural_key)
        runs = [parse_result_log(f) for f in files]
        for r in runs:
            for prob in r.problems:
                warn.add(r.path, prob)
        scale = _read_scaling(ref.bench_dir / "scaling.json", warn)
    return runs, scale


def _score(bench: str, runs: list[RunLog], valid: list[RunLog], rule, dropped: int):
    """The benchmark's score of the runs by its scoring rule, or None and why not."""
    if not runs:
        return None, "no result logs"
    if rule is None:
        version = mlperf_logging_version()
        return None, (
            f"no scoring rule known for benchmark {excerpt(bench)} (mlperf-logging "
            f"{version} lists {len(known_benchmarks())} training benchmarks)" if version else
            f"no scoring rule known for benchmark {excerpt(bench)} (mlperf-logging is not "
            "installed)")
    return score_runs([r.minutes for r in valid], len(runs), rule.required_runs, dropped)


def _global_batch(ref: _SystemRef, runs: list[RunLog], valid: list[RunLog], warn: _Warnings):
    """The global batch most (valid) runs logged; a warning when they disagree."""
    gbs_values = [r.global_batch_size for r in (valid or runs) if r.global_batch_size is not None]
    gbs = None
    if gbs_values:
        counts = Counter(gbs_values)
        gbs = counts.most_common(1)[0][0]
        if len(counts) > 1:
            warn.add(ref.bench_dir, f"runs disagree on global_batch_size ({';'.join(map(str, sorted(counts)))}); using {gbs}")
    return gbs


def _system_row(ref: _SystemRef, warn: _Warnings) -> tuple[dict, tuple]:
    """One system's row (description, runs and score) and its runs' timing key."""
    row: dict = {"round": ref.round, "submitter": ref.submitter, "system": ref.system}
    reasons: list[str] = []
    fields = _description_fields(ref, warn)
    row.update(_hardware_columns(ref, fields, warn))

    runs, scale = _read_runs(ref, warn)
    bench = _benchmark_name(ref, runs, warn)
    row["benchmark"] = bench
    row["workload"] = (workload_for_benchmark(bench) or "") if bench else ""
    info = benchmark_info(bench) if bench else None
    rule = scoring_rule(bench) if bench else None
    valid = [r for r in runs if r.valid and r.minutes is not None]
    n_failed = len(runs) - len(valid)
    dropped = rule.dropped_each_end if rule is not None else 1
    score, why = _score(bench, runs, valid, rule, dropped)
    if score is None:
        reasons.append(why)
    row["n_runs_required"] = rule.required_runs if rule is not None else None
    row["time_to_train_min"] = score * scale if score is not None else np.nan
    row["scaling_factor"] = scale
    row["n_runs"] = len(runs)
    row["n_runs_valid"] = len(valid)
    row["run_minutes_min"] = min((r.minutes for r in valid), default=np.nan)
    row["run_minutes_max"] = max((r.minutes for r in valid), default=np.nan)
    gbs = _global_batch(ref, runs, valid, warn)
    row["global_batch_size"] = gbs
    _convergence_facts(row, runs, valid, info, gbs, n_failed, dropped)
    fmts = Counter(r.log_format for r in runs if r.log_format)
    row["log_format"] = fmts.most_common(1)[0][0] if fmts else ""
    row["score_reason"] = "; ".join(reasons)
    row["score_source"] = "logs" if score is not None else ""
    timing = tuple(sorted(r.timing_key for r in runs if r.timing_key is not None))
    return row, timing


def _benchmark_name(ref: _SystemRef, runs: list[RunLog], warn: _Warnings) -> str:
    """The benchmark the logs name (``submission_benchmark``), else the folder's name."""
    logged = Counter(r.benchmark for r in runs if r.benchmark)
    if not logged:
        return ref.bench_folder
    name = logged.most_common(1)[0][0]
    if len(logged) > 1:
        warn.add(ref.bench_dir, "logs disagree on submission_benchmark "
                                f"({', '.join(excerpt(k) for k in sorted(logged))}); using "
                                f"{excerpt(name)}")
    if ref.bench_folder and name != ref.bench_folder:
        warn.add(ref.bench_dir, f"the logs name the benchmark {excerpt(name)}, the folder "
                                f"{excerpt(ref.bench_folder)}; the logs' name is used")
    return name


# ---------------------------------------------------------------- convergence


def _step_unit(value: float, unit: str, info: BenchmarkInfo) -> str:
    above = info.counts_samples_above
    return "samples" if above is not None and value > above else unit


def _primary(value, info: BenchmarkInfo | None):
    """The number a quality check reads from an evaluation value (the first target's metric of
    a dict such as Mask R-CNN's ``{"BBOX": .., "SEGM": ..}``)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, dict) and info is not None and info.quality_targets:
        v = value.get(info.quality_targets[0][0])
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None
    return None


def _run_convergence(run: RunLog, info: BenchmarkInfo | None
                     ) -> tuple[float | None, str, float | None]:
    """(convergence point, its unit, quality there) of one converged run.

    Single-metric benchmarks: the last ``eval_accuracy`` before ``run_stop``, at its
    ``samples_count`` (samples) or ``epoch_num`` (the benchmark's unit). Benchmarks that log
    each metric on its own line (``metadata.metric``: Stable Diffusion's FID and CLIP): the first
    evaluation step meeting every quality target, at ``samples_count`` or ``step_num``, as
    mlperf-logging's RCP checker reads it. Unit "" when the benchmark's logs are not described.
    """
    epochs_unit = info is not None and info.epoch_num_counts == "epochs"
    if epochs_unit and run.epochs is not None and not run.evals:
        # formats without decoded evaluation records (v0.5, v0.6): epochs as parsed
        return run.epochs, "epochs", run.final_accuracy
    if any(e.metric for e in run.evals):
        steps: dict = {}
        for e in run.evals:
            key = ("samples", e.samples_count) if e.samples_count is not None else (
                "steps", e.step_num) if e.step_num is not None else ("epoch", e.epoch_num)
            if key[1] is None or not e.metric:
                continue
            v = _primary(e.value, None)
            if v is not None:
                steps.setdefault(key, {})[e.metric] = v
        if info is None:
            return None, "", None
        passing = [k for k, vals in steps.items() if info.passes(vals)]
        if not passing:
            return None, "", None
        kind, at = min(passing, key=lambda k: k[1])
        first = info.quality_targets[0][0] if info.quality_targets else ""
        quality = steps[(kind, at)].get(first)
        if kind == "samples":
            return at, "samples", quality
        unit = info.step_num_counts if kind == "steps" else info.epoch_num_counts
        return at, _step_unit(at, unit, info), quality
    last = None
    for e in run.evals:
        if _primary(e.value, info) is not None or isinstance(e.value, dict):
            last = e
    if last is None:
        return (run.epochs, "epochs", run.final_accuracy) if run.epochs is not None and (
            info is not None and info.epoch_num_counts == "epochs") else (None, "", None)
    quality = _primary(last.value, info)
    if last.samples_count is not None:
        return last.samples_count, "samples", quality
    if last.epoch_num is None:
        return None, "", quality
    # epoch_num to 3 decimals, as mlperf-logging's RCP checker reads it (DLRM and R-GAT log
    # fractions of an epoch)
    point = round(last.epoch_num, 3)
    if info is None:
        return point, "", quality
    unit = info.epoch_num_counts
    if unit == "epochs" and run.epochs is not None and run.epochs == last.epoch_num:
        return run.epochs if run.epochs == point else point, _step_unit(point, unit, info), quality
    return point, _step_unit(point, unit, info), quality


def _samples_per_epoch(run: RunLog, info: BenchmarkInfo | None) -> int | None:
    if info is None:
        return None
    # a logged size below one global batch is not a data-set size (v3.1 Gaudi2 Stable
    # Diffusion logs train_samples = 1)
    if info.train_samples_is_dataset and run.samples_per_epoch and (
            run.global_batch_size is None or run.samples_per_epoch >= run.global_batch_size):
        return run.samples_per_epoch
    return info.samples_per_epoch


def _convergence_facts(row, runs, valid, info, gbs, n_failed, dropped) -> None:
    """Epochs/samples to converge, throughputs and quality of a result set (olympic means of
    the per-run conversions, medians of the per-run rates), in the benchmark's units."""
    per_run = []
    for r in valid:
        point, unit, quality = _run_convergence(r, info)
        spe = _samples_per_epoch(r, info)
        tps = (info.tokens_per_sample if info is not None and info.tokens_per_sample else None) \
            or r.max_sequence_length
        conv = convert_count(point, unit, samples_per_epoch=spe, tokens_per_sample=tps,
                             global_batch=r.global_batch_size or gbs) if point is not None else None
        per_run.append((r, point, unit, quality, spe, conv))
    units = Counter(u for _r, p, u, *_ in per_run if p is not None)
    unit = units.most_common(1)[0][0] if units else ""
    ok = [x for x in per_run if x[1] is not None and x[2] == unit]
    spes = Counter(x[4] for x in per_run if x[4])
    spe = spes.most_common(1)[0][0] if spes else None

    def olympic(vals):
        vals = [v for v in vals if v is not None and np.isfinite(v)]
        out = _olympic(vals, n_failed, dropped)
        return out if out is not None else np.nan

    row["convergence_unit"] = unit
    row["convergence_point"] = olympic([x[1] for x in ok])
    row["epochs"] = olympic([x[5]["epochs"] for x in ok])
    row["samples_to_converge"] = olympic([x[5]["samples"] for x in ok])
    row["samples_per_epoch"] = spe
    unit_t = info.throughput_unit if info is not None else ""
    tokens = unit_t == "tokens/s"
    e2e, train = [], []
    for r, _p, _u, _q, _s, conv in ok:
        m = r.minutes
        amount = conv["tokens"] if tokens else conv["samples"]
        if m is None or m <= 0 or not np.isfinite(amount):
            continue
        e2e.append(amount / (m * 60.0))
        # logs whose evaluations take no time inside the run (zero-length intervals) have
        # no training-only rate
        if info is not None and info.train_rate_rule == "run_minus_eval" and r.eval_ms > 0:
            busy = m * 60.0 - r.eval_ms / 1000.0
            if busy > 0:
                train.append(amount / busy)
    if info is not None and info.train_rate_rule == "epoch_median":
        train = [r.train_rate for r in valid if r.train_rate is not None]
    row["throughput"] = _median(e2e) or np.nan
    row["throughput_train"] = _median(train) or np.nan
    row["throughput_unit"] = unit_t if np.isfinite(row["throughput"]) or info is not None else ""
    row["final_eval_accuracy"] = _median(x[3] for x in per_run) or np.nan


# ---------------------------------------------------------------- table


def _round_sort_key(rnd: str):
    m = _ROUND_RE.search(rnd)
    return (int(m.group(1)), int(m.group(2))) if m else (10**6, 0)


def _add_catalog(df: pd.DataFrame, resolved: list) -> pd.DataFrame:
    """Catalog facts per row from its resolved accelerator (one resolver, one fact table)."""
    cat = accelerator_catalog().set_index("accelerator_id")
    ids, years, gens, ranks = [], [], [], []
    for res in resolved:
        if not isinstance(res, ResolvedAccelerator) or not res.known or res.match == "cpu":
            ids.append("")
            years.append(None)
            gens.append("")
            ranks.append(None)
            continue
        ids.append(res.accelerator_id)
        years.append(res.release_year)
        gens.append(res.generation)
        ranks.append(res.generation_rank)
    df["accelerator_id"] = ids
    df["release_year"] = pd.array(years, dtype="Int64")
    df["generation"] = gens
    df["generation_rank"] = pd.array(ranks, dtype="Int64")

    def fact(col):
        return [float(cat.at[i, col]) if i and col in cat.columns else np.nan for i in ids]

    bf16, fp16 = fact("bf16_dense_tflops"), fact("fp16_dense_tflops")
    df["peak_tflops"] = [b if b == b else f for b, f in zip(bf16, fp16)]
    df["mem_bw_tbps"] = fact("mem_bw_tbps")
    df["tdp_w"] = fact("tdp_w")
    df["power_w"] = df["tdp_w"]
    df["price_per_accelerator_hour"] = fact("price_typ_usd_gpu_hr")
    return df


def _build_table(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    if df.empty:
        df = pd.DataFrame({c: [] for c in MLPERF_COLUMNS})
    for c in MLPERF_COLUMNS:
        if c not in df.columns:
            df[c] = np.nan
    df = df[MLPERF_COLUMNS].copy()
    for c in ("n_accelerators", "n_nodes", "accelerators_per_node", "global_batch_size",
              "host_processors_per_node", "host_cores_per_processor", "release_year", "generation_rank",
              "samples_per_epoch", "n_runs_required"):
        df[c] = pd.array([None if (v is None or (isinstance(v, float) and v != v)) else int(v) for v in df[c]], dtype="Int64")  # fmt: skip
    for c in ("n_runs", "n_runs_valid"):
        df[c] = df[c].astype("int64")
    for c in ("cpu_cores_per_accelerator", "epochs", "time_to_train_min", "throughput", "throughput_train",
              "price_per_accelerator_hour", "power_w", "peak_tflops", "mem_bw_tbps", "tdp_w",
              "scaling_factor", "run_minutes_min", "run_minutes_max", "final_eval_accuracy",
              "convergence_point", "samples_to_converge"):
        df[c] = df[c].astype("float64")  # fmt: skip
    df["is_duplicate"] = df["is_duplicate"].astype(bool)
    for c in ("round", "benchmark", "workload", "division", "availability", "submitter", "system", "system_name", "accelerator",
              "accelerator_raw", "accelerator_id", "accelerator_type", "host_cpu", "interconnect", "network",
              "framework", "generation", "score_reason", "score_source", "duplicate_of", "log_format", "system_desc_format",
              "throughput_unit", "convergence_unit"):
        df[c] = df[c].fillna("").astype(str)  # fmt: skip
    return df.reset_index(drop=True)


def _ref_order(r: _SystemRef):
    return (_round_sort_key(r.round), r.bench_folder, r.submitter.lower(), r.system)


def _add_published_benchmarks(refs: list[_SystemRef], published, select: str) -> list[_SystemRef]:
    """Rows for the benchmarks a published summary scores for a system of the tree whose logs
    for that benchmark are absent (a subset of the logs): the system's description is read,
    its score comes from the summary. A described system without any result folder is then
    represented by those rows alone."""
    have = {(r.round, r.submitter, r.system, r.bench_folder) for r in refs}
    systems = {}
    for r in refs:
        systems.setdefault((r.round, r.submitter, r.system), r)
    added = []
    for rnd, bench, sub, system in published:
        if select != ALL_BENCHMARKS and bench != select:
            continue
        ref = systems.get((rnd, sub, system))
        if ref is None or (rnd, sub, system, bench) in have:
            continue
        added.append(_SystemRef(rnd, sub, system, ref.desc_path, None, ref.desc_is_fallback, bench))
        have.add((rnd, sub, system, bench))
    if not added:
        return refs
    with_bench = {(r.round, r.submitter, r.system) for r in added}
    kept = [r for r in refs if r.bench_folder or (r.round, r.submitter, r.system) not in with_bench]
    out = kept + added
    out.sort(key=_ref_order)
    return out


def _check_benchmark(benchmark) -> str:
    if not isinstance(benchmark, str) or not _BENCH_NAME.match(benchmark):
        raise UsageError(
            f"--benchmark {benchmark!r} is not allowed; give a benchmark folder name such as "
            f"resnet or bert (letters, digits, '_', '.', '-'), or {ALL_BENCHMARKS!r}")
    return benchmark


def _as_paths(paths) -> list[Path]:
    """One path or several, as a non-empty list of Paths."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    paths = [Path(p) for p in paths]
    if not paths:
        raise UsageError("read_mlperf needs at least one PATH")
    return paths


def _discover(paths: list[Path], select: str, warn: _Warnings) -> list[_SystemRef]:
    """Every system (and benchmark folder) under the paths, once each, in reading order."""
    refs: list[_SystemRef] = []
    seen: set[tuple[str, str, str]] = set()
    for p in paths:
        if not p.exists():
            raise UsageError(f"MLPerf results path {str(p)!r} does not exist")
        if not p.is_dir():
            raise UsageError(f"MLPerf results path {str(p)!r} is not a folder")
        roots = _find_round_roots(p)
        if not roots:
            warn.add(p, "no MLPerf results layout found (<round>/<submitter>/results or systems)")
        for root, only in roots:
            for ref in _systems_in_round(root, only, select, warn):
                key = (ref.round, ref.submitter, ref.system, ref.bench_folder)
                if key in seen:
                    warn.add(ref.bench_dir or ref.desc_path or root, f"system {'/'.join(key)} found twice; first kept")
                    continue
                seen.add(key)
                refs.append(ref)
    refs.sort(key=_ref_order)
    return refs


def _published_inputs(published_scores, published_runs, select: str):
    """The published scores and run timings, checked against the benchmark read;
    ``(published, runs_timing, published_runs)``, the last defaulting to the summary's
    runs.csv."""
    published = runs_timing = None
    if published_scores is not None:
        published = read_published_scores(published_scores)
        _check_published_benchmarks(published, select, "--published-scores", published_scores)
        if published_runs is None and (Path(published_scores).parent / "runs.csv").is_file():
            published_runs = Path(published_scores).parent / "runs.csv"
    if published_runs is not None:
        runs_timing = _published_timings(published_runs)
        _check_published_benchmarks(runs_timing, select, "published runs", published_runs)
    return published, runs_timing, published_runs


def _mark_duplicate(row: dict, ref: _SystemRef, timing: tuple, first_by_timing: dict) -> None:
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


def _system_rows(refs, published, runs_timing, warn: _Warnings) -> list[dict]:
    """A row per system: read from its logs, filled from the published scores where the logs
    give none, and flagged when its runs repeat an earlier system's."""
    rows: list[dict] = []
    first_by_timing: dict[tuple, str] = {}
    for ref in refs:
        row, timing = _system_row(ref, warn)
        key = _published_key(published, ref, row["benchmark"])
        if (published is not None and row["score_source"] != "logs" and key in published
                and published[key]["time_to_train_min"] is not None):
            _fill_published(row, published[key])
        rkey = _published_key(runs_timing, ref, row["benchmark"])
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
    select = _check_benchmark(benchmark)
    paths = _as_paths(paths)
    warn = _Warnings(strict)
    refs = _discover(paths, select, warn)
    published, runs_timing, published_runs = _published_inputs(
        published_scores, published_runs, select)
    if published is not None and published.has_benchmark:
        refs = _add_published_benchmarks(refs, published, select)
    rows = _system_rows(refs, published, runs_timing, warn)
    resolved = [r.pop("_resolved", None) for r in rows]
    df = _build_table(rows)
    df = _add_catalog(df, resolved)
    df = df[MLPERF_COLUMNS]
    dropped: tuple[str, ...] = ()
    if dedupe and len(df):
        df, dropped = _drop_duplicates(df)
    return MlperfReadResult(df, tuple(warn.items), dropped, select,
                            published_scores=str(published_scores) if published_scores is not None else "",
                            published_runs=str(published_runs) if published_runs is not None else "")


# ---------------------------------------------------------------- published scores

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


def _published_key(table, ref: "_SystemRef", benchmark: str):
    """The key of a row in a published table: with its benchmark when the table has one."""
    if table is None:
        return None
    with_bench = getattr(table, "has_benchmark", True)
    return (ref.round, benchmark if with_bench else "", ref.submitter, ref.system)


def _check_published_benchmarks(table, select: str, what: str, path) -> None:
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
    import io

    p = Path(path)
    if not _exists(p):
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


def _published_timings(path) -> dict[tuple[str, str, str, str], tuple]:
    """Per system, the sorted (run_start_ms, run_stop_ms) pairs of a published runs table,
    keyed as :func:`read_published_scores`."""
    df = _read_csv_strings(path, "published runs", [*_PUBLISHED_KEY, "run_start_ms", "run_stop_ms"])
    has_bench = "benchmark" in df.columns
    acc: dict[tuple[str, str, str, str], list] = {}
    for rec in df.to_dict("records"):
        a, b = _num(rec["run_start_ms"]), _num(rec["run_stop_ms"])
        if a is None or b is None:
            continue
        key = (rec["round"].strip(), rec["benchmark"].strip() if has_bench else "",
               rec["submitter"].strip(), rec["system"].strip())
        acc.setdefault(key, []).append((round(a, 3), round(b, 3)))
    out = _Keyed({k: tuple(sorted(v)) for k, v in acc.items()})
    out.has_benchmark = has_bench
    return out


def _fill_published(row: dict, vals: dict) -> None:
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


# ---------------------------------------------------------------- CLI entry


def run_mlperf_cli(paths, output, *, benchmark: str = "resnet", strict: bool = False, dedupe: bool = False,
                   published_scores=None, published_runs=None, overwrite=False) -> MlperfReadResult:
    """``gpurank mlperf PATH [PATH ...] -o table.parquet``: read, write Parquet atomically, return.

    The warnings (and dropped duplicates) are stored as JSON under the ``gpurank`` key of the
    Parquet key-value metadata (read them back with ``gpurank.engine.io.read_metadata``).
    ``published_scores`` (CLI ``--published-scores summary.csv``) fills the scores the logs
    cannot give; see :func:`read_mlperf`.
    """
    out = Path(output)
    if out.suffix.lower() != ".parquet":
        raise UsageError(f"output {str(out)!r} must end in .parquet")
    if not out.parent.exists():
        raise UsageError(f"output folder {str(out.parent)!r} does not exist")
    check_target(out, name="--output", overwrite=overwrite)
    result = read_mlperf(paths, benchmark=benchmark, strict=strict, dedupe=dedupe,
                         published_scores=published_scores, published_runs=published_runs)
    meta = result.metadata()
    meta["paths"] = [str(p) for p in ([paths] if isinstance(paths, (str, os.PathLike)) else paths)]
    meta["dedupe"] = bool(dedupe)
    write_table(result.table, out, metadata=meta, overwrite=overwrite, name="--output")
    return result
