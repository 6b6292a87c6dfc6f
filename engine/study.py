"""Reproduce the study gpurank's methodology comes from, on real MLPerf Training results.

The study ("A Methodology for Selecting and Ranking High-Performance GPU Configurations in Deep
Learning Training") evaluates which configuration variables drive performance (random forest),
groups configurations into five clusters, ranks them on time, throughput and efficiency, and
reports three findings:

(a) the most efficient cluster uses a moderate number (4-16) of latest-generation GPUs with
    strong host CPUs;
(b) the largest systems reach the shortest time to train but are the least efficient;
(c) speedup grows sub-linearly with the GPU count.

:func:`run_study` reads MLPerf results (:func:`gpurank.engine.sources.mlperf.read_mlperf`),
runs the three steps with :class:`gpurank.engine.Engine`, checks each finding against the data
(every figure is computed, nothing is hard-coded) and writes a Markdown report atomically.
The report holds no timings or absolute paths, so the same command on the same data writes the
same bytes.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .api import Engine
from .errors import DataError, UsageError
from .formatting import count as _c
from .formatting import integer as _i
from .formatting import number as _f
from .formatting import percent as _pct
from .formatting import span as _span
from .io import write_text
from .outputs import check_target
from .results import AnalysisResult
from .sources.mlperf import read_mlperf

__all__ = [
    "StudyResult",
    "FindingCheck",
    "run_study",
    "run_study_cli",
    "STUDY_CRITERIA",
    "STUDY_FEATURES",
    "availability_category",
    "framework_family",
    "interconnect_class",
]

STUDY_CRITERIA = "time_to_train_min:min,throughput_per_accelerator:max,scaling_efficiency:max"
#: random-forest features: generation, count, nodes, host CPU, interconnect, framework, batch
STUDY_FEATURES = (
    "generation_rank",
    "n_accelerators",
    "n_nodes",
    "cpu_cores_per_accelerator",
    "interconnect_class",
    "framework_family",
    "global_batch_size",
)
STUDY_CLUSTERS = 5
STUDY_TOP = 10
SUPPORTED, PARTLY, NOT_SUPPORTED = "SUPPORTED", "PARTLY", "NOT SUPPORTED"


@dataclass(frozen=True)
class FindingCheck:
    """One finding of the study checked against the data.

    Attributes
    ----------
    key : str
        "a", "b" or "c".
    finding : str
        The study's claim.
    verdict : str
        "SUPPORTED", "PARTLY" or "NOT SUPPORTED".
    figures : dict
        The computed figures the verdict rests on (plain floats, ints, strings, bools).
    lines : tuple of str
        The explanation written in the report (Markdown).
    """

    key: str
    finding: str
    verdict: str
    figures: dict
    lines: tuple[str, ...]


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


# ---------------------------------------------------------------- normalizing free text


def availability_category(status: str) -> str:
    """``preview`` if the status mentions preview, ``research`` if research (or ``rdi``), else
    ``available`` (the rule of the data set's ``availability_category`` column)."""
    s = (status or "").strip().lower()
    if "preview" in s:
        return "preview"
    if "research" in s or s == "rdi":
        return "research"
    return "available"


_FRAMEWORKS = (
    ("mxnet", "MXNet"), ("pytorch", "PyTorch"), ("tensorflow", "TensorFlow"), ("tf2", "TensorFlow"),
    ("tf1", "TensorFlow"), ("jax", "JAX"), ("paddle", "PaddlePaddle"), ("mindspore", "MindSpore"),
    ("popart", "PopART"),
)  # fmt: skip


def framework_family(text: str) -> str:
    """The first framework named in a free-text ``framework`` field, else ``other``.

    System descriptions often list every framework of the submission ("NGC MXNet 22.04, NGC
    PyTorch 22.04, ..."); the first one named is the one ResNet ran on in this data.
    """
    low = (text or "").lower()
    best = None
    for word, name in _FRAMEWORKS:
        i = low.find(word)
        if i >= 0 and (best is None or i < best[0]):
            best = (i, name)
    return best[1] if best else "other"


def interconnect_class(text: str) -> str:
    """``NVSwitch``, ``NVLink``, ``PCIe`` or ``unstated`` from a free-text interconnect."""
    low = (text or "").lower()
    if "nvswitch" in low:
        return "NVSwitch"
    if "nvlink" in low:
        return "NVLink"
    if "pcie" in low:
        return "PCIe"
    return "unstated"


# ---------------------------------------------------------------- formatting


def _md_table(headers, rows) -> list[str]:
    def cell(v):
        return str(v).replace("|", "\\|").replace("\n", " ")

    out = ["| " + " | ".join(headers) + " |", "|" + "|".join(" --- " for _ in headers) + "|"]
    out += ["| " + " | ".join(cell(v) for v in r) + " |" for r in rows]
    return out


def _sha256(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _round_key(r: str):
    m = re.search(r"v(\d+)\.(\d+)", r)
    return (int(m.group(1)), int(m.group(2))) if m else (10**6, 0)


# ---------------------------------------------------------------- statistics


def _spearman(x, y) -> float:
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 3:
        return float("nan")
    rx = pd.Series(x[ok]).rank().to_numpy()
    ry = pd.Series(y[ok]).rank().to_numpy()
    if rx.std() == 0 or ry.std() == 0:
        return float("nan")
    return float(np.corrcoef(rx, ry)[0, 1])


def _median(v) -> float:
    v = np.asarray(v, float)
    v = v[np.isfinite(v)]
    return float(np.median(v)) if v.size else float("nan")


def _within_slope(df, by) -> tuple[float, int, int]:
    """Pooled within-group slope of log speedup on log N, with groups, rows used.

    Within each group, log T and log N are centred; the slope of -log T on log N is the
    exponent b of speedup ~ N^b (b = 1 is linear scaling). Groups need at least two distinct
    accelerator counts.
    """
    xs, ys, groups = [], [], 0
    for _, g in df.groupby(by, sort=True):
        n = g["n_accelerators"].to_numpy(float)
        t = g["time_to_train_min"].to_numpy(float)
        if np.unique(n).size < 2:
            continue
        groups += 1
        ln, lt = np.log(n), np.log(t)
        xs.append(ln - ln.mean())
        ys.append(-(lt - lt.mean()))
    if not xs:
        return float("nan"), 0, 0
    x, y = np.concatenate(xs), np.concatenate(ys)
    return float((x * y).sum() / (x * x).sum()), groups, int(x.size)


def _group_slopes(df, by, *, min_rows=3, min_span=4.0) -> pd.DataFrame:
    rows = []
    for key, g in df.groupby(by, sort=True):
        n = g["n_accelerators"].to_numpy(float)
        t = g["time_to_train_min"].to_numpy(float)
        if len(g) < min_rows or n.max() < min_span * n.min():
            continue
        b = -np.polyfit(np.log(n), np.log(t), 1)[0]
        rows.append({"group": key, "rows": len(g), "n_min": int(n.min()), "n_max": int(n.max()),
                     "slope": float(b)})  # fmt: skip
    return pd.DataFrame(rows, columns=["group", "rows", "n_min", "n_max", "slope"])


def _same_round_efficiency(df) -> pd.Series:
    """Scaling efficiency against the fewest-accelerator configuration of the same accelerator
    model in the same round (fastest among ties): a reference with comparable software."""
    n = df["n_accelerators"].astype(float)
    t = df["time_to_train_min"].astype(float)
    key = df["accelerator"].astype(str) + "@" + df["round"].astype(str)
    n_min = n.groupby(key).transform("min")
    t_ref = t.where(n == n_min).groupby(key).transform("min")
    return (t_ref / t) / (n / n_min)


def _verdict(flags) -> str:
    k = sum(bool(f) for f in flags)
    return SUPPORTED if k == len(flags) else NOT_SUPPORTED if k == 0 else PARTLY


def _yes(b) -> str:
    return "yes" if b else "no"


# ---------------------------------------------------------------- the checks


def _check_a(t: pd.DataFrame, prof: pd.DataFrame, unit: str = "img/s") -> FindingCheck:
    claim = ("The most efficient cluster uses a moderate number (generally 4 to 16) of "
             "latest-generation GPUs with powerful host CPUs.")
    newest_rank = int(t["generation_rank"].max())
    newest = sorted(set(t.loc[t["generation_rank"] == newest_rank, "generation"]))[0]
    eff2 = _same_round_efficiency(t)

    def describe(c):
        m = (t["cluster"] == c).to_numpy()
        part = t[m]
        n = part["n_accelerators"].to_numpy(float)
        q1, med, q3 = np.percentile(n, [25, 50, 75])
        gens = part["generation"].value_counts()
        d = dict(cluster=int(c), size=int(m.sum()), n_median=float(med), n_q1=float(q1), n_q3=float(q3),
                 share_4_16=float(((n >= 4) & (n <= 16)).mean()),
                 dominant_generation=str(gens.index[0]), dominant_share=float(gens.iloc[0] / len(part)),
                 newest_share=float((part["generation_rank"] == newest_rank).mean()),
                 cores_per_gpu=_median(part["cpu_cores_per_accelerator"]),
                 cores_per_gpu_others=_median(t.loc[~m & (t["cluster"] >= 0).to_numpy(), "cpu_cores_per_accelerator"]),
                 efficiency=_median(part["scaling_efficiency"]), efficiency_same_round=_median(eff2[m]),
                 per_gpu=_median(part["throughput_per_accelerator"]))  # fmt: skip
        d["count_in_4_16"] = bool(4 <= d["n_median"] <= 16)
        d["newest_dominant"] = d["dominant_generation"] == newest
        d["more_cpu"] = bool(d["cores_per_gpu"] > d["cores_per_gpu_others"])
        return d

    clusters = sorted(int(c) for c in prof["cluster"])
    desc = {c: describe(c) for c in clusters}
    by = {
        "scaling efficiency (engine reference)": max(clusters, key=lambda c: (desc[c]["efficiency"], -c)),
        "per-GPU throughput (no reference)": max(clusters, key=lambda c: (desc[c]["per_gpu"], -c)),
    }
    info_c = max(clusters, key=lambda c: (np.nan_to_num(desc[c]["efficiency_same_round"], nan=-1), -c))
    flags, lines = [], []
    for measure, c in by.items():
        d = desc[c]
        conds = [d["count_in_4_16"], d["newest_dominant"], d["more_cpu"]]
        flags += conds
        lines += [
            f"- By **{measure}** the most efficient cluster is **cluster {c}** ({d['size']} rows; median "
            f"scaling efficiency {_f(d['efficiency'])}, median per-GPU throughput {_f(d['per_gpu'])} {unit}):",
            f"  - GPU count: median {_c(d['n_median'])}, IQR {_c(d['n_q1'])}-{_c(d['n_q3'])}; "
            f"{_pct(d['share_4_16'])} of its rows have 4-16 GPUs. Median within 4-16: **{_yes(conds[0])}**.",
            f"  - Generation: dominant {d['dominant_generation']} ({_pct(d['dominant_share'])} of rows); the newest "
            f"generation in the data is {newest} ({_pct(d['newest_share'])} of this cluster). Dominant is the "
            f"newest: **{_yes(conds[1])}**.",
            f"  - Host CPU: median {_f(d['cores_per_gpu'])} CPU cores per GPU vs {_f(d['cores_per_gpu_others'])} in "
            f"the other clusters. More than the others: **{_yes(conds[2])}**.",
        ]
        if d["efficiency"] > 1:
            why = ("so the super-linearity comes from the cross-round reference"
                   if d["efficiency_same_round"] <= 1 else "so it is not only the reference")
            lines.append(
                f"  - Its median scaling efficiency is above 1 (super-linear). Against a same-round reference "
                f"the median is {_f(d['efficiency_same_round'])}, {why}.")
    lines.append(
        f"- For information, by scaling efficiency against a same-round reference the top cluster is cluster "
        f"{info_c} (median {_f(desc[info_c]['efficiency_same_round'])}); the smallest systems of each group are "
        "their own reference (efficiency 1), so efficiency alone favours small clusters.")
    lines.append("- Verdict over the six conditions above (three per measure).")
    figures = {"clusters": desc, "most_efficient": by, "same_round_top": info_c, "newest_generation": newest}
    return FindingCheck("a", claim, _verdict(flags), figures, tuple(lines))


def _check_b(t: pd.DataFrame, unit: str = "img/s") -> FindingCheck:
    claim = ("The largest systems (thousands of GPUs) reach the shortest time to train but are "
             "much less efficient.")
    n = t["n_accelerators"].to_numpy(float)
    cut = float(np.percentile(n, 90))
    big = n >= cut
    rest = ~big
    huge = n >= 1000
    eff2 = _same_round_efficiency(t).to_numpy(float)
    time_big, time_rest = _median(t.loc[big, "time_to_train_min"]), _median(t.loc[rest, "time_to_train_min"])
    eff_big, eff_rest = _median(t.loc[big, "scaling_efficiency"]), _median(t.loc[rest, "scaling_efficiency"])
    pg_big = _median(t.loc[big, "throughput_per_accelerator"])
    pg_rest = _median(t.loc[rest, "throughput_per_accelerator"])
    e2_big, e2_rest = _median(eff2[big]), _median(eff2[rest])
    rho_t = _spearman(n, t["time_to_train_min"])
    rho_e = _spearman(n, t["scaling_efficiency"])
    rho_p = _spearman(n, t["throughput_per_accelerator"])
    fastest = t.loc[t["time_to_train_min"].idxmin()]
    n_rank = float((n > float(fastest["n_accelerators"])).sum() + 1)
    fast_ok = time_big < time_rest
    eff_ok = eff_big < eff_rest
    verdict = _verdict([fast_ok, eff_ok])
    lines = [
        f"- Largest systems = top decile by GPU count: {int(big.sum())} rows with at least {_i(cut)} GPUs "
        f"(largest {_i(n.max())}; {int((n >= 1000).sum())} rows with 1,000 or more).",
        f"- Median time to train: {_f(time_big)} min (largest) vs {_f(time_rest)} min (rest). "
        f"Shorter: **{_yes(fast_ok)}**. The fastest system overall "
        f"({fastest['round']} {fastest['submitter']}/{fastest['system']}, {_f(fastest['time_to_train_min'])} min) "
        f"has {_i(fastest['n_accelerators'])} GPUs (rank {_i(n_rank)} by count).",
        f"- Median scaling efficiency: {_f(eff_big)} (largest) vs {_f(eff_rest)} (rest). Lower: **{_yes(eff_ok)}**. "
        f"Against a same-round reference: {_f(e2_big)} vs {_f(e2_rest)}.",
        f"- Median per-GPU throughput (no reference needed): {_f(pg_big)} vs {_f(pg_rest)} {unit}.",
        *([f"- The {int(huge.sum())} systems with 1,000 or more GPUs: median time {_f(_median(t.loc[huge, 'time_to_train_min']))} "
           f"min, median scaling efficiency {_f(_median(t.loc[huge, 'scaling_efficiency']))}, median per-GPU "
           f"throughput {_f(_median(t.loc[huge, 'throughput_per_accelerator']))} {unit}."] if huge.any() else []),
        f"- Spearman correlation of GPU count with time to train {_f(rho_t, 2)}, with scaling "
        f"efficiency {_f(rho_e, 2)}, with per-GPU throughput {_f(rho_p, 2)}.",
    ]
    figures = {"decile_cut": cut, "n_largest_rows": int(big.sum()), "time_largest": time_big,
               "time_rest": time_rest, "efficiency_largest": eff_big, "efficiency_rest": eff_rest,
               "efficiency_same_round_largest": e2_big, "efficiency_same_round_rest": e2_rest,
               "per_gpu_largest": pg_big, "per_gpu_rest": pg_rest, "spearman_n_time": rho_t,
               "spearman_n_efficiency": rho_e, "spearman_n_per_gpu": rho_p,
               "fastest_n": int(fastest["n_accelerators"]), "shorter_time": fast_ok,
               "lower_efficiency": eff_ok}  # fmt: skip
    return FindingCheck("b", claim, verdict, figures, tuple(lines))


def _check_c(t: pd.DataFrame) -> FindingCheck:
    claim = "Speedup grows sub-linearly with the GPU count: each added GPU brings less."
    pooled, groups, used = _within_slope(t, "accelerator")
    t2 = t.assign(_g=t["accelerator"].astype(str) + " @ " + t["round"].astype(str))
    pooled2, groups2, used2 = _within_slope(t2, "_g")
    per = _group_slopes(t, "accelerator")
    n_sub = int((per["slope"] < 1).sum())
    nonref = t["scaling_efficiency"].to_numpy(float)
    ref_mask = np.isclose(nonref, 1.0) & (t["speedup"].to_numpy(float) >= 1 - 1e-12)
    e = nonref[~ref_mask & np.isfinite(nonref)]
    share_below = float((e < 1).mean()) if e.size else float("nan")
    slope_ok = bool(pooled < 1)
    models_ok = bool(len(per) and n_sub * 2 > len(per))
    verdict = _verdict([slope_ok, models_ok])
    lines = [
        f"- Speedup ~ N^b, b fitted on log scales within each accelerator model (models with at least "
        f"two GPU counts: {groups}, rows: {used}): pooled **b = {_f(pooled)}** (1 = linear). "
        f"Below 1: **{_yes(slope_ok)}**.",
        f"- Within (model, round) groups, so that software is comparable: b = {_f(pooled2)} "
        f"({groups2} groups, {used2} rows).",
        f"- Per model (at least 3 rows spanning at least 4x in count): {n_sub} of {len(per)} models "
        f"have b < 1. Majority below 1: **{_yes(models_ok)}**.",
        f"- {_pct(share_below)} of the {e.size} non-reference rows have scaling efficiency below 1.",
    ]
    if len(per):
        lines.append("")
        lines += _md_table(["model", "rows", "GPU counts", "b"],
                           [[r.group, r.rows, f"{r.n_min:,}-{r.n_max:,}", _f(r.slope)] for r in per.itertuples()])  # fmt: skip
    figures = {"pooled_slope": pooled, "groups": groups, "rows": used, "pooled_slope_same_round": pooled2,
               "per_model": per.to_dict("records"), "models_sublinear": n_sub, "models": int(len(per)),
               "share_efficiency_below_1": share_below}  # fmt: skip
    return FindingCheck("c", claim, verdict, figures, tuple(lines))


# ---------------------------------------------------------------- the study


def _prepare(res, *, division, availability) -> tuple[pd.DataFrame, list[tuple[str, int]]]:
    """Add study columns and ``study_status``; return the table and the filtering steps."""
    df = res.table.copy()
    df["availability_category"] = [availability_category(s) for s in df["availability"]]
    df["framework_family"] = [framework_family(s) for s in df["framework"]]
    df["interconnect_class"] = [interconnect_class(s) for s in df["interconnect"]]
    status = np.array(["analysed"] * len(df), dtype=object)

    def mark(mask, why):
        m = np.asarray(mask, bool) & (status == "analysed")
        status[m] = why
        return int(m.sum())

    steps = [("duplicated runs of an earlier system (dedupe)", len(res.dropped))]
    if division:
        steps.append((f"division is not {division}", mark(df["division"] != division, f"division {division} only")))
    if availability:
        steps.append((f"availability is not {availability} (preview, research)",
                      mark(df["availability_category"] != availability, f"availability {availability} only")))
    steps.append(("no score (logs incomplete, no published score)",
                  mark(df["time_to_train_min"].isna(), "no score")))
    for kind, words in (("cpu", "CPU-only (0 accelerators)"), ("tpu", "TPU"), ("other", "other accelerator (Gaudi, IPU, Ascend)")):
        steps.append((f"not a GPU: {words}", mark(df["accelerator_type"] == kind, f"not a GPU ({kind})")))
    steps.append(("accelerator type unknown (no system description)",
                  mark(~df["accelerator_type"].isin(["gpu", "cpu", "tpu", "other"]), "not a GPU (unknown)")))
    df["study_status"] = status
    return df, steps


def run_study(paths, output_md, *, published_scores=None, seed: int = 0, backend: str = "cpu",
              division: str | None = "closed", availability: str | None = "available",
              command: str | None = None, overwrite: bool = False) -> StudyResult:
    """Run the study on MLPerf ResNet results and write its Markdown report atomically.

    Parameters
    ----------
    paths : path or list of paths
        MLPerf Training results (see :func:`~gpurank.engine.sources.mlperf.read_mlperf`).
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
    data, steps = _prepare(res, division=division, availability=availability)
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
    prof = analysis.clusters.profiles.copy()
    dom = []
    for c in prof["cluster"]:
        g = t.loc[t["cluster"] == c, "generation"].value_counts()
        dom.append(f"{g.index[0]} ({g.iloc[0] / g.sum():.0%})" if len(g) else "")
    prof["dominant_generation"] = dom
    checks = (_check_a(t, prof), _check_b(t), _check_c(t))
    filtering, remaining = [], len(res.table) + len(res.dropped)
    for step, n in steps:
        remaining -= n
        filtering.append({"step": step, "left_out": n, "remaining": remaining})
    filtering = pd.DataFrame(filtering)
    top = analysis.top()
    if command is None:
        parts = ["gpurank", "study", *map(str, paths)]
        if published_scores is not None:
            parts += ["--published-scores", str(published_scores)]
        parts += ["--seed", str(seed)]
        command = " ".join(shlex.quote(p) for p in parts)
    md = _report(res, data, t, analysis, imp_time, prof, top, checks, filtering,
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
    default) or :func:`gpurank.engine.study_workloads.run_workloads_study` (another
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
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise UsageError(f"--seed must be a non-negative integer; got {seed!r}")
    check_target(out, name="--output", overwrite=overwrite)
    if benchmark != "resnet":
        from .sources.mlperf import _check_benchmark
        from .study_workloads import run_workloads_study

        return run_workloads_study(paths, out, benchmark=_check_benchmark(benchmark),
                                   published_scores=published_scores, seed=seed,
                                   backend="cpu", overwrite=overwrite)
    return run_study(paths, out, published_scores=published_scores, seed=seed, backend="cpu",
                     overwrite=overwrite)


# ---------------------------------------------------------------- the report


FEATURE_NOTES = {
    "generation_rank": "accelerator architecture order within NVIDIA (Volta 1, Ampere 2, Ada 3, Hopper 4)",
    "n_accelerators": "GPUs in the system",
    "n_nodes": "host nodes",
    "cpu_cores_per_accelerator": "host CPU cores per GPU (empty where the description gives no core count)",
    "interconnect_class": "GPU interconnect as written, classed NVSwitch / NVLink / PCIe / unstated",
    "framework_family": "first framework named in the description (MXNet, PyTorch, TensorFlow, ...)",
    "global_batch_size": "logged global batch size (the submitter's choice)",
}


def _md_title(command) -> list[str]:
    """The title, what the report is, and the command that wrote it."""
    L: list[str] = []
    L += ["# The study on real MLPerf data",
          "",
          "<!-- generated by gpurank study: do not edit. Regenerate with the command below. -->",
          "",
          "This report reproduces the study gpurank's methodology comes from (\"A Methodology for "
          "Selecting and Ranking High-Performance GPU Configurations in Deep Learning Training\") on "
          "MLPerf Training ResNet-50 results: evaluate (random-forest importance), group (five "
          "clusters), rank (Pareto + TOPSIS), then check each of the study's findings against the data. "
          "Every figure below is computed from the data by `gpurank.engine.study.run_study`.",
          "",
          "Generated by:",
          "",
          "```",
          command,
          "```",
          ""]  # fmt: skip
    return L


def _md_data(res, *, published_scores, division, availability) -> list[str]:
    """The data section: the inputs, the score sources and what was kept."""
    L: list[str] = []
    L += ["## Data", ""]
    if published_scores is not None:
        L.append(f"- Published scores: `{Path(published_scores).name}` (sha256 "
                 f"`{_sha256(published_scores)[:16]}`), used only for systems whose logs cannot be scored.")
        if res.published_runs:
            L.append(f"- Published run times: `{Path(res.published_runs).name}` (sha256 "
                     f"`{_sha256(res.published_runs)[:16]}`), used to find duplicated runs whose logs are absent.")
    src = res.table["score_source"]
    n_all = len(res.table) + len(res.dropped)
    L.append(f"- Systems read: {n_all} (one per round, submitter and system); reader warnings: "
             f"{len(res.warnings)}.")
    L.append(f"- Score source (after de-duplication): {int((src == 'logs').sum())} from the logs, "
             f"{int((src == 'published').sum())} published, {int((src == '').sum())} without a score.")
    L.append(f"- Kept: division `{division or 'any'}`, availability `{availability or 'any'}` "
             "(preview and research systems were not generally available at publication), "
             "GPUs only (`accelerator_type = gpu`); CPU-only systems, TPUs and other accelerators are "
             "read, flagged by `accelerator_type` and left out below.")
    return L


def _md_filtering(filtering, analysis) -> list[str]:
    """The filtering steps, and the engine's notes."""
    L: list[str] = []
    L += ["", "### Filtering", ""]
    L += _md_table(["step", "rows left out", "rows remaining"],
                   [[r.step, r.left_out, r.remaining] for r in filtering.itertuples()])
    notes = [n for n in analysis.notes if "accelerator_type" not in n]
    if notes:
        L += ["", "Engine notes: " + "; ".join(notes) + "."]
    return L


def _md_rows_per_round(data, t) -> list[str]:
    """Systems, scored systems and analysed rows per round."""
    L: list[str] = []
    rounds = sorted(set(data["round"]), key=_round_key)
    per_round = []
    for r in rounds:
        d = data[data["round"] == r]
        per_round.append([r, len(d), int(d["time_to_train_min"].notna().sum()),
                          int((d["study_status"] == "analysed").sum())])
    L += ["", "### Rows per round", ""]
    L += _md_table(["round", "systems (deduplicated)", "with a score", "analysed"],
                   per_round + [["all", len(data), int(data["time_to_train_min"].notna().sum()), len(t)]])
    return L


def _md_accelerators(data, t) -> list[str]:
    """The accelerators analysed, and the scored ones left out as not GPUs."""
    L: list[str] = []
    L += ["", "### Accelerators analysed", ""]
    acc = (t.groupby(["generation_rank", "generation", "accelerator"], dropna=False)
           .agg(rows=("accelerator", "size"), n_min=("n_accelerators", "min"), n_max=("n_accelerators", "max"),
                ttt=("time_to_train_min", "median"), pg=("throughput_per_accelerator", "median"))
           .reset_index().sort_values(["generation_rank", "rows", "accelerator"], ascending=[True, False, True]))
    L += _md_table(["generation", "accelerator", "rows", "GPU counts", "median time (min)", "median img/s per GPU"],
                   [[r.generation, r.accelerator, r.rows, _span(r.n_min, r.n_max), _f(r.ttt), _f(r.pg)]
                    for r in acc.itertuples()])  # fmt: skip
    non_gpu = data[data["study_status"].str.startswith("not a GPU") & data["time_to_train_min"].notna()]
    if len(non_gpu):
        parts = [f"{name or 'CPU only'} ({k})" for name, k in
                 non_gpu.assign(a=non_gpu["accelerator"].where(non_gpu["accelerator_type"] != "cpu", ""))
                 .groupby("a").size().sort_index().items()]
        L += ["", f"Left out as not GPUs (scored, closed, available): {len(non_gpu)} rows: " + ", ".join(parts) + "."]
    return L


def _md_reference(t) -> list[str]:
    """How speedup and efficiency are referenced, and each model's reference."""
    L: list[str] = []
    L += ["", "### Speedup and efficiency reference", "",
          "Speedup and scaling efficiency are computed by the engine (`gpurank.engine.metrics`) per "
          "accelerator model, against the model's configuration with the fewest GPUs (the fastest of "
          "them on a tie), across all rounds and submitters. Systems of one model differ in software "
          "between rounds, so a reference from an old round can make later, larger systems look more "
          "than linearly efficient, and one from a new round the opposite. The checks therefore also "
          "report a same-round reference (per model and round) and per-GPU throughput, which needs no "
          "reference.", ""]
    refs = []
    for name, g in t.groupby("accelerator", sort=True):
        nmin = g["n_accelerators"].min()
        r = g[g["n_accelerators"] == nmin].sort_values("time_to_train_min").iloc[0]
        refs.append([name, _i(nmin), _f(r["time_to_train_min"]), f"{r['round']} {r['submitter']}/{r['system']}",
                     len(g)])
    L += _md_table(["accelerator", "reference GPUs", "reference time (min)", "reference system", "rows"], refs)
    return L


def _md_importance(analysis, imp_time) -> list[str]:
    """Step 1: the random-forest importance tables."""
    L: list[str] = []
    imp = analysis.importance
    L += ["", "## Step 1: what drives performance (random-forest importance)", "",
          f"Target `throughput_per_accelerator` (images/s per GPU); {imp.n_rows} rows, {_n_trees(analysis)} "
          f"trees, held-out R^2 {_f(imp.holdout_r2, 2)}. Permutation importance is the drop in held-out R^2 "
          "when the feature is shuffled (trust it over impurity when they disagree).", ""]
    L += _imp_table(imp.table)
    if imp.note:
        L += ["", f"Note: {imp.note}."]
    if imp_time is not None:
        L += ["", f"Target `time_to_train_min`: held-out R^2 {_f(imp_time.holdout_r2, 2)}.", ""]
        L += _imp_table(imp_time.table)
    L += ["", "Features:", ""]
    L += [f"- `{f}`: {FEATURE_NOTES[f]}" for f in STUDY_FEATURES]
    return L


def _md_clusters(analysis, prof) -> list[str]:
    """Step 2: the clusters and their profiles."""
    L: list[str] = []
    cl = analysis.clusters
    sil = cl.silhouette
    best_k = max(sil, key=lambda k: (np.nan_to_num(sil[k], nan=-2), -k)) if sil else None
    L += ["", "## Step 2: five clusters", "",
          f"KMeans with k = {cl.k} on {', '.join(f'`{f}`' for f in cl.features)} (standardized). "
          f"Silhouette at k = {cl.k}: {_f(sil.get(cl.k, float('nan')), 2)}; best over "
          f"{min(sil)}..{max(sil)}: k = {best_k} ({_f(sil[best_k], 2)}). Labels are generated from the "
          "GPU-count IQR, the model (else family, else generation) that is more than half of the cluster, "
          "else \"mixed accelerators\", and the median efficiency (high >= 0.85, medium >= 0.6).", ""]
    L += _md_table(
        ["cluster", "label", "rows", "GPUs (median, IQR)", "median nodes", "CPU cores/GPU", "median time (min)",
         "img/s per GPU", "scaling eff.", "generation", "accelerators"],
        [[int(r.cluster), r.label, int(r.size), f"{_c(r.median_n_accelerators)} ({r.n_accelerators_range})",
          _c(r.median_n_nodes), _f(r.median_cpu_cores_per_accelerator), _f(r.median_time_to_train_min),
          _f(r.median_throughput_per_accelerator), _f(r.median_scaling_efficiency), r.dominant_generation,
          r.accelerators] for r in prof.itertuples()])  # fmt: skip
    return L


def _md_ranking(analysis, top) -> list[str]:
    """Step 3: the top configurations."""
    L: list[str] = []
    rk = analysis.ranking
    L += ["", "## Step 3: top configurations", "",
          f"Criteria `{STUDY_CRITERIA}` with equal weights; Pareto front of {rk.front_size} rows; ranked by "
          "TOPSIS closeness (vector normalization).", ""]
    L += _md_table(
        ["rank", "round", "submitter", "system", "accelerator", "GPUs", "nodes", "time (min)", "img/s per GPU",
         "scaling eff.", "cluster", "Pareto rank", "TOPSIS"],
        [[int(r["rank"]), r["round"], r["submitter"], r["system"], r["accelerator"], _i(r["n_accelerators"]),
          _i(r["n_nodes"]), _f(r["time_to_train_min"]), _f(r["throughput_per_accelerator"]),
          _f(r["scaling_efficiency"]), int(r["cluster"]), int(r["pareto_rank"]), _f(r["topsis_score"])]
         for _, r in top.iterrows()])  # fmt: skip
    return L


def _md_findings(checks) -> list[str]:
    """The study's findings with their verdicts and evidence."""
    L: list[str] = []
    L += ["", "## The study's findings, checked", ""]
    L += _md_table(["finding", "verdict"], [[f"({c.key}) {c.finding}", f"**{c.verdict}**"] for c in checks])
    for c in checks:
        L += ["", f"### ({c.key}) {c.verdict}", "", f"*{c.finding}*", ""]
        L += list(c.lines)
    L += ["", "Verdicts: SUPPORTED when every listed condition holds, NOT SUPPORTED when none does, "
          "PARTLY otherwise.", ""]
    return L


def _report(res, data, t, analysis, imp_time, prof, top, checks, filtering, *, command,
            published_scores, seed, division, availability) -> str:
    """The study report: its sections in order, as Markdown."""
    L: list[str] = []
    L += _md_title(command)
    L += _md_data(res, published_scores=published_scores, division=division,
                   availability=availability)
    L += _md_filtering(filtering, analysis)
    L += _md_rows_per_round(data, t)
    L += _md_accelerators(data, t)
    L += _md_reference(t)
    L += _md_importance(analysis, imp_time)
    L += _md_clusters(analysis, prof)
    L += _md_ranking(analysis, top)
    L += _md_findings(checks)
    return "\n".join(L)


def _n_trees(analysis) -> int:
    return int(analysis.spec.n_estimators)


def _imp_table(table) -> list[str]:
    return _md_table(["feature", "permutation (mean)", "permutation (std)", "impurity"],
                     [[f"`{r.feature}`", _f(r.permutation, 2), _f(r.permutation_std, 2), _f(r.impurity, 2)]
                      for r in table.itertuples()])  # fmt: skip
