"""One row of the MLPerf table: a system's description, its runs and score, its
convergence facts in the benchmark's units, and the catalog facts of its accelerator.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from ..facts.accelerators import ResolvedAccelerator, resolve_accelerator
from ..facts.catalog import accelerator_catalog
from .discovery import ReadWarnings, SystemRef, entry_exists, natural_key
from .logs import RunLog, parse_result_log
from ..facts.mlperf_rules import (
    BenchmarkInfo,
    benchmark_info,
    convert_count,
    known_benchmarks,
    mlperf_logging_version,
    scoring_rule,
)
from .scoring import median_or_none, olympic_mean, score_runs
from .systems import parse_system_description
from ..facts.regular_files import (
    UnreadableFile,
    excerpt,
    read_regular,
)
from ..facts.benchmarks import workload_for_benchmark
from ..facts.formats import format_in_text

__all__ = ["MLPERF_COLUMNS", "system_row", "add_catalog", "build_table"]


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
    "log_format", "system_desc_format", "precision",
]  # fmt: skip
#: A scaling.json larger than this is not read (real ones hold one number).
MAX_SCALING_BYTES = 1 << 20


def _read_scaling(path: Path, warn: ReadWarnings) -> float:
    if not entry_exists(path):
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


def _description_fields(ref: SystemRef, warn: ReadWarnings) -> dict:
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


def _hardware_columns(ref: SystemRef, fields: dict, warn: ReadWarnings) -> dict:
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


def _read_runs(ref: SystemRef, warn: ReadWarnings) -> tuple[list[RunLog], float]:
    """The system's result logs, parsed in natural order, and its scaling factor."""
    runs: list[RunLog] = []
    scale = 1.0
    if ref.bench_dir is not None:
        files = sorted(ref.bench_dir.glob("result_*.txt"), key=natural_key)
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


def _global_batch(ref: SystemRef, runs: list[RunLog], valid: list[RunLog], warn: ReadWarnings):
    """The global batch most (valid) runs logged; a warning when they disagree."""
    gbs_values = [r.global_batch_size for r in (valid or runs) if r.global_batch_size is not None]
    gbs = None
    if gbs_values:
        counts = Counter(gbs_values)
        gbs = counts.most_common(1)[0][0]
        if len(counts) > 1:
            warn.add(ref.bench_dir, f"runs disagree on global_batch_size ({';'.join(map(str, sorted(counts)))}); using {gbs}")
    return gbs


def system_row(ref: SystemRef, warn: ReadWarnings) -> tuple[dict, tuple]:
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
    # the format the logs state, else the one the description's notes name ("FP8 Training")
    stated = Counter(r.precision for r in (valid or runs) if r.precision)
    row["precision"] = (stated.most_common(1)[0][0] if stated
                        else format_in_text(fields.get("sw_notes")) or "")
    row["score_reason"] = "; ".join(reasons)
    row["score_source"] = "logs" if score is not None else ""
    timing = tuple(sorted(r.timing_key for r in runs if r.timing_key is not None))
    return row, timing


def _benchmark_name(ref: SystemRef, runs: list[RunLog], warn: ReadWarnings) -> str:
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
        out = olympic_mean(vals, n_failed, dropped)
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
    row["throughput"] = median_or_none(e2e) or np.nan
    row["throughput_train"] = median_or_none(train) or np.nan
    row["throughput_unit"] = unit_t if np.isfinite(row["throughput"]) or info is not None else ""
    row["final_eval_accuracy"] = median_or_none(x[3] for x in per_run) or np.nan


def add_catalog(df: pd.DataFrame, resolved: list) -> pd.DataFrame:
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


def build_table(rows: list[dict]) -> pd.DataFrame:
    """The reader's rows (dicts) as a table of :data:`MLPERF_COLUMNS` in that order, each
    column of its type (nullable integers, floats, booleans, text with ``""`` for missing)."""
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
