"""Read MLPerf Training results repositories into gpurank's canonical table.

``read_mlperf(paths)`` accepts checkouts of ``mlcommons/training_results_vX.Y``, a folder
holding several, or any folder laid out the same way (``<round>/<submitter>/systems/*.json``
and ``<round>/<submitter>/results/<system>/<benchmark>/result_*.txt``; v0.5's
``v0.5.0/<submitter>/<entry>/results/<system>/`` layout too). It returns one row per
(round, submitter, system) with the official score computed as MLPerf does, the system's
hardware, normalized accelerator facts from the project catalog, and every problem met on the
way as a :class:`ReadWarning` (never a silently dropped system).

Scoring (``mlperf_logging.result_summarizer``): per run ``run_stop - run_start``; only runs with
``status: success`` (v0.5 and v0.6 Alibaba: final accuracy >= target) are valid; sort the valid
times, drop the fastest, and the slowest only when no run failed; average the rest; multiply by
``scaling.json``'s factor; no score when more than one run failed or fewer than the benchmark's
required runs (5 for ResNet) are present.
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
from gpurank.engine.sources.accelerators import ResolvedAccelerator, resolve_accelerator
from gpurank.engine.sources.mlperf_logs import IMAGENET_TRAIN_SAMPLES, RunLog, parse_result_log
from gpurank.engine.sources.mlperf_systems import parse_system_description
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


@dataclass(frozen=True)
class _Benchmark:
    name: str
    dir_name: str
    required_runs: int
    samples_per_epoch: int


BENCHMARKS = {"resnet": _Benchmark("resnet", "resnet", 5, IMAGENET_TRAIN_SAMPLES)}

#: the output columns, in order
MLPERF_COLUMNS = [
    "round", "division", "availability", "submitter", "system", "system_name",
    "accelerator", "accelerator_raw", "accelerator_id", "accelerator_type",
    "n_accelerators", "n_nodes", "accelerators_per_node",
    "host_cpu", "host_processors_per_node", "host_cores_per_processor", "cpu_cores_per_accelerator",
    "interconnect", "network", "framework",
    "global_batch_size", "epochs", "time_to_train_min", "throughput", "throughput_train",
    "price_per_accelerator_hour", "power_w",
    "release_year", "generation", "generation_rank", "peak_tflops", "mem_bw_tbps", "tdp_w",
    "n_runs", "n_runs_valid", "scaling_factor", "run_minutes_min", "run_minutes_max",
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
    """The table and every warning; ``dropped`` names the duplicates removed by ``dedupe``."""

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

    def add(self, path, reason: str) -> None:
        # file names and values come from the tree: control characters are escaped
        w = ReadWarning(path_text(path), printable(reason))
        if self.strict:
            raise DataError(f"{w.path}: {w.reason} (strict mode)")
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


def _systems_in_round(root: Path, only: str | None, bench: _Benchmark, warn: _Warnings) -> list[_SystemRef]:
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
                    bench_dir = sysdir / bench.dir_name
                    if not is_regular_dir(bench_dir) and _subdirs(sysdir):
                        continue  # a system that ran other benchmarks only
                    sid = sysdir.name if entry == "." else f"{Path(entry).as_posix()}/{sysdir.name}"
                    desc = sysdir / "entry.json"
                    refs.append(
                        _SystemRef(rnd, sub.name, sid, desc if _exists(desc) else None,
                                   bench_dir if is_regular_dir(bench_dir) else None)
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
            bench_dir = sysdir / bench.dir_name if sysdir is not None else None
            if sysdir is not None and not is_regular_dir(bench_dir):
                continue  # results for other benchmarks only
            desc = descs.get(name)
            fallback = False
            if desc is None and sysdir is not None and _exists(sysdir / "entry.json"):
                desc, fallback = sysdir / "entry.json", True
            refs.append(_SystemRef(rnd, sub.name, name, desc, bench_dir, fallback))
    return refs


# ---------------------------------------------------------------- scoring


def score_runs(minutes_valid: list[float], n_runs: int, required: int) -> tuple[float | None, str]:
    """The MLPerf olympic average of valid run times (minutes) and, when None, why.

    ``n_runs`` counts every run (valid or not). Drop the fastest; drop the slowest only when no
    run failed (a failed run counts as the dropped slowest); average the rest.
    """
    n_failed = n_runs - len(minutes_valid)
    if n_runs == 0:
        return None, "no result logs"
    if n_runs < required:
        return None, f"only {n_runs} of {required} required runs present"
    if n_failed > 1:
        return None, f"{n_failed} of {n_runs} runs failed (at most 1 allowed)"
    times = sorted(minutes_valid)[1:]
    if n_failed == 0:
        times = times[:-1]
    if not times:
        return None, "too few valid runs to average"
    return sum(times) / len(times), ""


def _olympic(values: list[float], n_failed: int) -> float | None:
    """Average after dropping the lowest, and the highest when no run failed (epochs rule)."""
    if not values:
        return None
    v = sorted(values)
    if len(v) >= 3:
        v = v[1:] if n_failed else v[1:-1]
    return sum(v) / len(v)


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


def _system_row(ref: _SystemRef, bench: _Benchmark, warn: _Warnings) -> tuple[dict, tuple]:
    row: dict = {"round": ref.round, "submitter": ref.submitter, "system": ref.system}
    reasons: list[str] = []
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
    row["_resolved"] = res if n_acc != 0 else None
    row.update(
        division=fields.get("division", ""),
        availability=fields.get("availability", ""),
        system_name=fields.get("system_name", ""),
        accelerator=name if n_acc != 0 else "",
        accelerator_raw=acc_raw,
        accelerator_type=atype,
        n_accelerators=n_acc,
        n_nodes=nodes,
        accelerators_per_node=apn,
        host_cpu=fields.get("host_cpu", ""),
        host_processors_per_node=fields.get("host_processors_per_node"),
        host_cores_per_processor=fields.get("host_processor_core_count"),
        interconnect=fields.get("interconnect", ""),
        network=fields.get("network", ""),
        framework=fields.get("framework", ""),
        system_desc_format=fields.get("desc_format", ""),
    )
    cores_node = fields.get("host_cores_per_node")
    row["cpu_cores_per_accelerator"] = cores_node / apn if cores_node and apn else np.nan

    # runs
    runs: list[RunLog] = []
    scale = 1.0
    if ref.bench_dir is not None:
        files = sorted(ref.bench_dir.glob("result_*.txt"), key=_natural_key)
        runs = [parse_result_log(f) for f in files]
        for r in runs:
            for prob in r.problems:
                warn.add(r.path, prob)
        scale = _read_scaling(ref.bench_dir / "scaling.json", warn)
    valid = [r for r in runs if r.valid and r.minutes is not None]
    n_failed = len(runs) - len(valid)
    score, why = score_runs([r.minutes for r in valid], len(runs), bench.required_runs)
    if score is None:
        reasons.append(why)
    row["time_to_train_min"] = score * scale if score is not None else np.nan
    row["scaling_factor"] = scale
    row["n_runs"] = len(runs)
    row["n_runs_valid"] = len(valid)
    row["run_minutes_min"] = min((r.minutes for r in valid), default=np.nan)
    row["run_minutes_max"] = max((r.minutes for r in valid), default=np.nan)
    gbs_values = [r.global_batch_size for r in (valid or runs) if r.global_batch_size is not None]
    gbs = None
    if gbs_values:
        counts = Counter(gbs_values)
        gbs = counts.most_common(1)[0][0]
        if len(counts) > 1:
            warn.add(ref.bench_dir, f"runs disagree on global_batch_size ({';'.join(map(str, sorted(counts)))}); using {gbs}")
    row["global_batch_size"] = gbs
    epochs = _olympic([r.epochs for r in valid if r.epochs is not None], n_failed)
    row["epochs"] = epochs if epochs is not None else np.nan
    row["throughput"] = _median(r.e2e_throughput(bench.samples_per_epoch) for r in valid) or np.nan
    row["throughput_train"] = _median(r.train_rate for r in valid) or np.nan
    row["final_eval_accuracy"] = _median(r.final_accuracy for r in valid) or np.nan
    fmts = Counter(r.log_format for r in runs if r.log_format)
    row["log_format"] = fmts.most_common(1)[0][0] if fmts else ""
    row["score_reason"] = "; ".join(reasons)
    row["score_source"] = "logs" if score is not None else ""
    timing = tuple(sorted(r.timing_key for r in runs if r.timing_key is not None))
    return row, timing


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
              "host_processors_per_node", "host_cores_per_processor", "release_year", "generation_rank"):
        df[c] = pd.array([None if (v is None or (isinstance(v, float) and v != v)) else int(v) for v in df[c]], dtype="Int64")  # fmt: skip
    for c in ("n_runs", "n_runs_valid"):
        df[c] = df[c].astype("int64")
    for c in ("cpu_cores_per_accelerator", "epochs", "time_to_train_min", "throughput", "throughput_train",
              "price_per_accelerator_hour", "power_w", "peak_tflops", "mem_bw_tbps", "tdp_w",
              "scaling_factor", "run_minutes_min", "run_minutes_max", "final_eval_accuracy"):
        df[c] = df[c].astype("float64")  # fmt: skip
    df["is_duplicate"] = df["is_duplicate"].astype(bool)
    for c in ("round", "division", "availability", "submitter", "system", "system_name", "accelerator",
              "accelerator_raw", "accelerator_id", "accelerator_type", "host_cpu", "interconnect", "network",
              "framework", "generation", "score_reason", "score_source", "duplicate_of", "log_format", "system_desc_format"):
        df[c] = df[c].fillna("").astype(str)  # fmt: skip
    return df.reset_index(drop=True)


def read_mlperf(paths, *, benchmark: str = "resnet", strict: bool = False, dedupe: bool = False,
                published_scores=None, published_runs=None) -> MlperfReadResult:
    """Read MLPerf Training results into one row per (round, submitter, system).

    Parameters
    ----------
    paths : path or list of paths
        Checkouts of ``training_results_vX.Y``, folders holding several, or folders laid out the
        same way (``raw/`` with ``v0.5`` ... ``v3.1``), or one submitter folder of a round.
    benchmark : str
        The benchmark folder to read; only ``"resnet"`` is supported.
    strict : bool
        Raise :class:`DataError` on the first problem instead of recording a warning.
    dedupe : bool
        Drop systems whose runs repeat an earlier system's runs (identical run_start/run_stop
        times); their ids are listed in ``dropped``. Without it they stay, flagged by
        ``is_duplicate`` and ``duplicate_of``.
    published_scores : path, optional
        A published per-system summary (the data set's ``summary.csv``: columns ``round``,
        ``submitter``, ``system``, ``time_to_train_minutes``, ``epochs_to_converge``,
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
    if benchmark not in BENCHMARKS:
        raise UsageError(f"benchmark {benchmark!r} is not supported; supported: {', '.join(BENCHMARKS)}")
    bench = BENCHMARKS[benchmark]
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    paths = [Path(p) for p in paths]
    if not paths:
        raise UsageError("read_mlperf needs at least one PATH")
    warn = _Warnings(strict)
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
            for ref in _systems_in_round(root, only, bench, warn):
                key = (ref.round, ref.submitter, ref.system)
                if key in seen:
                    warn.add(ref.bench_dir or ref.desc_path or root, f"system {'/'.join(key)} found twice; first kept")
                    continue
                seen.add(key)
                refs.append(ref)
    refs.sort(key=lambda r: (_round_sort_key(r.round), r.submitter.lower(), r.system))
    published = runs_timing = None
    if published_scores is not None:
        published = read_published_scores(published_scores)
        if published_runs is None and (Path(published_scores).parent / "runs.csv").is_file():
            published_runs = Path(published_scores).parent / "runs.csv"
    if published_runs is not None:
        runs_timing = _published_timings(published_runs)
    rows: list[dict] = []
    first_by_timing: dict[tuple, str] = {}
    for ref in refs:
        row, timing = _system_row(ref, bench, warn)
        key = (ref.round, ref.submitter, ref.system)
        if published is not None and row["score_source"] != "logs" and key in published:
            _fill_published(row, published[key])
        if runs_timing is not None and key in runs_timing:
            timing = runs_timing[key]
        row["is_duplicate"] = False
        row["duplicate_of"] = ""
        if timing:
            ident = f"{ref.round}/{ref.submitter}/{ref.system}"
            if timing in first_by_timing:
                row["is_duplicate"] = True
                row["duplicate_of"] = first_by_timing[timing]
            else:
                first_by_timing[timing] = ident
        rows.append(row)
    resolved = [r.pop("_resolved", None) for r in rows]
    df = _build_table(rows)
    df = _add_catalog(df, resolved)
    df = df[MLPERF_COLUMNS]
    dropped: tuple[str, ...] = ()
    if dedupe and len(df):
        dup = df["is_duplicate"].to_numpy()
        dropped = tuple(
            f"{r}/{s}/{y} (same runs as {d})"
            for r, s, y, d in zip(df["round"][dup], df["submitter"][dup], df["system"][dup], df["duplicate_of"][dup])
        )
        df = df[~dup].reset_index(drop=True)
    return MlperfReadResult(df, tuple(warn.items), dropped, bench.name,
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
}
_PUBLISHED_KEY = ("round", "submitter", "system")


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
        cols = ", ".join(excerpt(c, 40) for c in list(df.columns)[:20])
        raise DataError(f"{path_text(p)}: {what} has no column(s) {', '.join(missing)}; columns "
                        f"are: {cols}{' ...' if len(df.columns) > 20 else ''}")
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


def read_published_scores(path) -> dict[tuple[str, str, str], dict]:
    """Published per-system scores keyed on (round, submitter, system).

    Only rows with a time to train are returned; each value maps reader columns
    (``time_to_train_min``, ``epochs``, ``global_batch_size``, ``throughput``, ...) to numbers
    (None where the summary is empty). A batch size written as several ``;``-joined values
    (runs that disagreed) is left empty.
    """
    df = _read_csv_strings(path, "published scores", [*_PUBLISHED_KEY, "time_to_train_minutes"])
    out: dict[tuple[str, str, str], dict] = {}
    for rec in df.to_dict("records"):
        vals = {dst: _num(rec.get(src, "")) for src, dst in PUBLISHED_FIELDS.items()}
        if vals["time_to_train_min"] is None:
            continue
        if vals["global_batch_size"] is not None:
            vals["global_batch_size"] = int(vals["global_batch_size"])
        key = tuple(rec[k].strip() for k in _PUBLISHED_KEY)
        out[key] = vals
    return out


def _published_timings(path) -> dict[tuple[str, str, str], tuple]:
    """Per system, the sorted (run_start_ms, run_stop_ms) pairs of a published runs table."""
    df = _read_csv_strings(path, "published runs", [*_PUBLISHED_KEY, "run_start_ms", "run_stop_ms"])
    acc: dict[tuple[str, str, str], list] = {}
    for rec in df.to_dict("records"):
        a, b = _num(rec["run_start_ms"]), _num(rec["run_stop_ms"])
        if a is None or b is None:
            continue
        acc.setdefault(tuple(rec[k].strip() for k in _PUBLISHED_KEY), []).append((round(a, 3), round(b, 3)))
    return {k: tuple(sorted(v)) for k, v in acc.items()}


def _fill_published(row: dict, vals: dict) -> None:
    """Take a system's score and run facts from the published summary (logs gave no score)."""
    for col, v in vals.items():
        if col == "global_batch_size":
            row[col] = v if v is not None else row.get(col)
        elif col == "scaling_factor":
            row[col] = v if v is not None else 1.0
        else:
            row[col] = v if v is not None else np.nan
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
