"""The study's three findings checked against the data, every figure computed: (a) the most
efficient cluster, (b) the largest systems, (c) sub-linear speedup; and the statistics the
checks read (rank correlations, pooled within-group slopes, same-round efficiency).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..formatting import count as _c
from ..formatting import integer as _i
from ..formatting import markdown_table
from ..formatting import number as _f
from ..formatting import percent as _pct

__all__ = ["STUDY_CRITERIA", "STUDY_FEATURES", "STUDY_CLUSTERS", "STUDY_TOP", "FindingCheck",
           "check_a", "check_b", "check_c"]


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


def check_a(t: pd.DataFrame, prof: pd.DataFrame, unit: str = "img/s") -> FindingCheck:
    """Finding (a), that the most efficient cluster uses 4 to 16 newest-generation GPUs
    with more host CPU cores: checked on the most efficient cluster by scaling efficiency and
    by per-GPU throughput (``unit``), three conditions each."""
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


def check_b(t: pd.DataFrame, unit: str = "img/s") -> FindingCheck:
    """Finding (b), that the largest systems train fastest but least efficiently: the top
    decile by GPU count against the rest (time to train, scaling efficiency, per-GPU
    throughput in ``unit``)."""
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


def check_c(t: pd.DataFrame) -> FindingCheck:
    """Finding (c), that speedup grows sub-linearly with the GPU count: the exponent ``b``
    of speedup ~ N^b fitted within each accelerator model, pooled and per model."""
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
        lines += markdown_table(["model", "rows", "GPU counts", "b"],
                                 [[r.group, r.rows, f"{r.n_min:,}-{r.n_max:,}", _f(r.slope)] for r in per.itertuples()])  # fmt: skip
    figures = {"pooled_slope": pooled, "groups": groups, "rows": used, "pooled_slope_same_round": pooled2,
               "per_model": per.to_dict("records"), "models_sublinear": n_sub, "models": int(len(per)),
               "share_efficiency_below_1": share_below}  # fmt: skip
    return FindingCheck("c", claim, verdict, figures, tuple(lines))
