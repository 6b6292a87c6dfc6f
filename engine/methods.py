"""The ranking methods: one row each, and the one call that scores rows by a method.

A method is a kernel contract (its oracle in ``kernels/reference.py``, the same names in
``kernels/cpu`` and ``kernels/cuda``, mergeable statistics for the Dask driver) and a row of
:data:`METHODS`: its name, the output column of its score, the score's direction, its
kernels and statistics, and whether SMAA (``robust``) ranks by it. The rank step, the final
rank, the summary and the report read the row; nothing else names a method.
``docs/architecture.md`` ("Adding a ranking method") lists the files a new method touches.

>>> METHODS["vikor"].column, METHODS["vikor"].higher_is_better
('vikor_q', False)
>>> METHODS["vikor"].merit(np.array([0.0, 1.0]))
array([-0., -1.])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np  # noqa: F401 (the examples)

__all__ = ["RankingMethod", "METHODS", "METHOD_NAMES", "DEFAULT_METHOD", "SCORE_COLUMNS",
           "DEFAULT_VIKOR_V", "method_of", "smaa_methods", "summary_method"]

#: VIKOR's weight of the majority's utility S against the largest regret R, "by consensus"
#: ([Opricovic2004]); the kernels' default ``v``.
DEFAULT_VIKOR_V = 0.5


@dataclass(frozen=True)
class RankingMethod:
    """One ranking method (a row of :data:`METHODS`).

    Attributes
    ----------
    name : str
        The name ``AnalysisSpec(method=...)`` and ``--method`` take.
    label : str
        How tables and the report name its score.
    column : str
        The output column of its score (``ranking.parquet``, ``summary.json``).
    higher_is_better : bool
        The score's direction; the final rank (1 = best) orders by :meth:`merit`.
    meaning : str
        What the score is, in a phrase the report and the docs use.
    kernels : tuple of str
        Its kernel contracts (``gpurank.kernels.CONTRACTS``).
    dask_stats : tuple of str
        The mergeable statistics of its passes on Dask, in order.
    smaa : bool
        Whether SMAA (``robust=True``) ranks by it.
    reference : str
        The key of its published work in ``docs/references.md``.
    scale : str or None
        How it normalizes the criteria when that is its own, whatever ``norm`` says (the
        report's words for a linear scale); None: ``norm``'s normalization.
    score : callable
        ``score(kernels, matrix, weights, benefit, *, norm, spec)``: the scores of the rows
        of ``matrix`` (every criterion a cost, see ``ranking.score_input``) by the backend's
        ``kernels``, on the host.
    """

    name: str
    label: str
    column: str
    higher_is_better: bool
    meaning: str
    kernels: tuple[str, ...]
    dask_stats: tuple[str, ...]
    smaa: bool
    reference: str
    score: Callable
    scale: str | None = None

    def merit(self, score):
        """The score turned so that larger is better (the final rank's first key)."""
        return score if self.higher_is_better else -score


def _topsis(k, matrix, weights, benefit, *, norm, spec):
    return k.topsis(matrix, weights, benefit, norm=norm)


def _vikor(k, matrix, weights, benefit, *, norm, spec):
    # VIKOR normalizes each criterion linearly between its best and worst value; ``norm``
    # chose the scale of the matrix (log10 for "log") and has no other say.
    return k.vikor(matrix, weights, benefit, v=spec.vikor_v)


#: Every ranking method, by name; the first is the default.
METHODS = {
    "topsis": RankingMethod(
        name="topsis", label="TOPSIS", column="topsis_score", higher_is_better=True,
        meaning="TOPSIS closeness (1 = at the ideal point)",
        kernels=("topsis", "topsis_stats", "topsis_from_stats"),
        dask_stats=("TopsisStats",), smaa=True, reference="HwangYoon1981", score=_topsis),
    "vikor": RankingMethod(
        name="vikor", label="VIKOR Q", column="vikor_q", higher_is_better=False,
        meaning="VIKOR compromise index Q (0 = best)",
        kernels=("vikor", "vikor_sr", "vikor_from_sr"),
        dask_stats=("TopsisStats", "VikorStats"), smaa=False, reference="Opricovic2004",
        score=_vikor, scale="VIKOR normalizes each criterion between its worst and best value"),
}
METHOD_NAMES = tuple(METHODS)
DEFAULT_METHOD = METHOD_NAMES[0]
#: The output columns of every method's score.
SCORE_COLUMNS = tuple(m.column for m in METHODS.values())


def method_of(name) -> RankingMethod:
    """The row of method ``name`` (a name :data:`METHOD_NAMES` holds; the spec checks it)."""
    return METHODS[name]


def summary_method(summary) -> RankingMethod:
    """The method a ``summary.json`` ranked by (``settings.method``; TOPSIS for a summary
    written before there was a choice)."""
    name = (summary.get("settings") or {}).get("method")
    return METHODS.get(name, METHODS[DEFAULT_METHOD])


def smaa_methods() -> tuple[str, ...]:
    """The methods SMAA ranks by."""
    return tuple(m.name for m in METHODS.values() if m.smaa)
