"""Results of each step, as frozen dataclasses holding host data (NumPy and pandas).

Results cross from the device to the host once, at the public boundary; everything here is
plain host data that can be printed, written or compared.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .methods import DEFAULT_METHOD, method_of
from .spec import AnalysisSpec, Criterion

__all__ = ["PreparationResult", "ImportanceResult", "ClusterResult", "RankResult",
           "RobustResult", "AnalysisResult"]


@dataclass(frozen=True)
class PreparationResult:
    """What became of the table's rows and columns before the analysis proper.

    Attributes
    ----------
    rows_in : int
        Rows read.
    rows_analyzed : int
        Rows that were analyzed (after the filter, the constraints and dropped rows).
    derived : tuple of str
        Derived metrics computed.
    skipped : dict
        ``{metric: reason}`` of derived metrics not computed.
    replaced : tuple of str
        Input columns named like result columns, replaced by the analysis.
    constraints : tuple of (str, int)
        Each constraint and the rows it leaves out on its own.
    invalid : dict
        ``{reason: rows}`` of the invalid rows dropped (``drop_invalid``).
    """

    rows_in: int
    rows_analyzed: int
    derived: tuple = ()
    skipped: dict = field(default_factory=dict)
    replaced: tuple = ()
    constraints: tuple = ()
    invalid: dict = field(default_factory=dict)

    @classmethod
    def from_report(cls, report, derived, skipped, replaced) -> "PreparationResult":
        """From a :class:`gpurank.engine.prepare.RowReport` and the metric plan."""
        return cls(rows_in=int(report.rows_in), rows_analyzed=int(report.kept),
                   derived=tuple(derived), skipped=dict(skipped), replaced=tuple(replaced),
                   constraints=tuple((str(c), int(n)) for c, n in
                                     zip(report.constraints.constraints,
                                         report.constraints.failing)),
                   invalid={r: int(v[0]) for r, v in report.invalid.items()})

    def as_dict(self) -> dict:
        return {"rows_in": self.rows_in, "rows_analyzed": self.rows_analyzed,
                "derived": list(self.derived), "skipped": dict(self.skipped),
                "replaced_columns": list(self.replaced),
                "constraints": [{"constraint": c, "rows_left_out": n}
                                for c, n in self.constraints],
                "invalid_rows_dropped": dict(self.invalid)}


@dataclass(frozen=True)
class ImportanceResult:
    """Which configuration variables drive the target.

    Attributes
    ----------
    table : DataFrame
        One row per feature, sorted by permutation importance: ``feature``, ``impurity``,
        ``permutation``, ``permutation_std``.
    target : str
    n_rows : int
        Rows the forest saw (training plus held-out).
    sampled : bool
        True when the forest was fitted on a seeded sample of a larger table.
    holdout_r2 : float
        R^2 of the forest on the held-out rows: how much of the target the features explain.
    note : str
    """

    table: pd.DataFrame
    target: str
    n_rows: int
    sampled: bool
    holdout_r2: float
    note: str = ""


@dataclass(frozen=True)
class ClusterResult:
    """KMeans groups of configurations and a profile of each.

    Attributes
    ----------
    labels : ndarray of int32, shape (n,)
        Cluster of each row; -1 where the row could not be clustered (missing features).
    k : int
    features : tuple of str
        Features the clustering used, with "log10(...)" where a log was taken.
    profiles : DataFrame
        One row per cluster: size, medians, dominant accelerators and a generated label.
    silhouette : dict
        Silhouette score for each k in the analysis' ``k_range``, from fits to a seeded
        sample: the curve behind ``--clusters auto``, reported whether or not k was fixed.
    note : str
    """

    labels: np.ndarray
    k: int
    features: tuple[str, ...]
    profiles: pd.DataFrame
    silhouette: dict = field(default_factory=dict)
    note: str = ""


@dataclass(frozen=True)
class RankResult:
    """Pareto dominance and the ranking method's score of every row.

    Attributes
    ----------
    pareto_rank : ndarray of int32
        Non-dominated sorting front, 0 = the Pareto front.
    domination_count : ndarray of int64
        How many rows dominate each row.
    score : ndarray of float64
        The method's score; its meaning and direction are the method's row of
        :data:`~gpurank.engine.methods.METHODS`.
    rank : ndarray of int64
        Final rank, 1 = best: by the score (best first), ties by pareto_rank, then row order.
    criteria : tuple of Criterion
    weights : tuple of float
        Normalized weights used.
    ideal, anti_ideal : dict
        Best and worst value of each criterion over the ranked rows.
    method : str
        The ranking method's name; its score's output column is :attr:`column`.
    """

    pareto_rank: np.ndarray
    domination_count: np.ndarray
    score: np.ndarray
    rank: np.ndarray
    criteria: tuple[Criterion, ...]
    weights: tuple[float, ...]
    ideal: dict
    anti_ideal: dict
    method: str = DEFAULT_METHOD

    @property
    def column(self) -> str:
        """The output column of the score (the method row's ``column``)."""
        return method_of(self.method).column

    @property
    def topsis_score(self) -> np.ndarray:
        """The TOPSIS closeness, when TOPSIS ranked (the ``topsis_score`` column)."""
        if self.method != "topsis":
            raise AttributeError(f"topsis_score: the rows were ranked by {self.method!r}; "
                                 f"its score is .score (column {self.column!r})")
        return self.score

    @property
    def front_size(self) -> int:
        """Rows on the Pareto front."""
        return int((self.pareto_rank == 0).sum())

    def top(self, k: int) -> np.ndarray:
        """Row positions of the ``k`` best rows, best first."""
        order = np.argsort(self.rank, kind="stable")
        return order[: min(k, order.size)]


@dataclass(frozen=True)
class RobustResult:
    """SMAA over TOPSIS weights: how robust each configuration's place is to the weights (and,
    with model uncertainty, to the error of the predicted values).

    Only *candidates* are scored: rows dominated by fewer than ``k`` rows. A row dominated
    by ``k`` or more rows ranks below all of its dominators under every weight vector, so
    its probability of reaching the top ``k`` (and of ranking first) is exactly 0.

    Attributes
    ----------
    n_rows, samples, k, seed : int
    criteria : tuple of str
        Criterion columns, in the order of ``central_weights``' columns.
    weight_ranges : dict
        ``{column: (low, high)}`` bounds the weights were sampled within (all [0, 1] when
        empty: uniform on the simplex).
    candidates : ndarray of int64
        Row positions scored, ascending.
    p_top1, p_topk : ndarray of float64
        Share of weight samples under which the candidate ranks first / in the top ``k``.
    p_top1_se, p_topk_se : ndarray of float64
        Binomial standard errors ``sqrt(p (1 - p) / samples)``.
    expected_rank, expected_rank_se : ndarray of float64
        Mean rank among the candidates (1 = best) and the standard error of that mean. A
        rank among candidates equals the rank among all rows when it is <= k, and is a
        lower bound of it otherwise.
    central_weights : ndarray of float64, shape (candidates, criteria)
        Mean weight vector of the samples under which the candidate ranks first (NaN when
        it never does).
    model_uncertainty : dict or None
        None when no model uncertainty was given; otherwise whether predicted values were
        drawn (``drawn``), inside which intervals (``source``), the criteria they move with
        their exponents, how many rows have an interval, the distribution and a one-line
        ``text`` (:func:`gpurank.engine.robust.robust_summary` reports it). When values are
        drawn, the candidates are the rows that fewer than ``k`` rows dominate in every
        draw, and each probability is over weights and values together.
    factor_interval : ndarray of float64, shape (candidates, 2), or None
        When values were drawn: each candidate's factor interval ``[factor_lo, factor_hi]``
        (``[1, 1]`` for a measured row).
    """

    n_rows: int
    samples: int
    k: int
    seed: int
    criteria: tuple[str, ...]
    weight_ranges: dict
    candidates: np.ndarray
    p_top1: np.ndarray
    p_top1_se: np.ndarray
    p_topk: np.ndarray
    p_topk_se: np.ndarray
    expected_rank: np.ndarray
    expected_rank_se: np.ndarray
    central_weights: np.ndarray
    model_uncertainty: dict | None = None
    factor_interval: np.ndarray | None = None

    def column(self, name: str) -> np.ndarray:
        """A per-row column of the full table: ``p_top1``/``p_topk`` (0 for pruned rows) or
        ``expected_rank`` (NaN for pruned rows)."""
        values = getattr(self, name)
        fill = np.nan if name.startswith("expected_rank") else 0.0
        out = np.full(self.n_rows, fill, dtype=np.float64)
        out[self.candidates] = values
        return out

    def order(self) -> np.ndarray:
        """Candidate positions (into ``candidates``) from the most robust: p_topk, then
        p_top1 descending, then expected rank ascending, then row order."""
        return np.lexsort((self.candidates, self.expected_rank, -self.p_top1, -self.p_topk))


@dataclass(frozen=True)
class AnalysisResult:
    """Everything one analysis produced.

    Attributes
    ----------
    table : DataFrame
        Every input row with the derived metrics, ``cluster``, ``pareto_rank``,
        ``domination_count``, the method's score column (``topsis_score`` by default) and
        ``rank``.
    importance, clusters, ranking : step results (``clusters`` is None when not clustered)
    spec : AnalysisSpec
    backend : str
        The backend that ran.
    timings : dict
        Seconds per step.
    notes : tuple of str
        What the user should know: samples, dropped rows, fallbacks.
    fallbacks : tuple of str
        Steps that ran on the CPU instead of the GPU, and why.
    robust : RobustResult, optional
    preparation : PreparationResult, optional
        Rows read and analyzed, derived metrics computed and skipped, constraints.
    """

    table: pd.DataFrame
    importance: ImportanceResult | None
    clusters: ClusterResult | None
    ranking: RankResult
    spec: AnalysisSpec
    backend: str
    timings: dict
    notes: tuple[str, ...] = ()
    fallbacks: tuple[str, ...] = ()
    robust: RobustResult | None = None
    preparation: PreparationResult | None = None

    def top(self, k: int | None = None) -> pd.DataFrame:
        """The ``k`` best rows (``spec.top`` by default), best first."""
        k = self.spec.top if k is None else k
        return self.table.iloc[self.ranking.top(k)]
