"""What the user asks for: criteria with senses and weights, and the analysis settings.

Criteria are written ``column:min|max[:weight]`` and comma-separated, e.g.
``time_to_train_min:min:0.4,cost_usd:min:0.3,scaling_efficiency:max:0.3``. Weights default
to equal and are normalized to sum to one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .errors import UsageError

__all__ = [
    "Criterion",
    "AnalysisSpec",
    "parse_criteria",
    "default_criteria",
    "normalize_weights",
    "parse_weight_ranges",
    "DEFAULT_TARGET",
]

SENSES = ("min", "max")
DEFAULT_TARGET = "throughput_per_accelerator"


@dataclass(frozen=True)
class Criterion:
    """One ranking criterion.

    Parameters
    ----------
    column : str
        A numeric column of the table (derived metrics included).
    sense : {"min", "max"}
        Whether smaller or larger values are better.
    weight : float or None
        Relative importance; ``None`` means "equal share".
    """

    column: str
    sense: str
    weight: float | None = None

    def __post_init__(self):
        if not self.column:
            raise UsageError("criterion column name is empty; write 'column:min' or 'column:max'")
        if self.sense not in SENSES:
            raise UsageError(
                f"criterion '{self.column}' has unknown sense {self.sense!r}; allowed: min, max"
            )
        if self.weight is not None and (not math.isfinite(self.weight) or self.weight < 0):
            raise UsageError(
                f"criterion '{self.column}' has weight {self.weight!r}; weights must be "
                "finite and >= 0"
            )

    def __str__(self) -> str:
        w = "" if self.weight is None else f":{self.weight:g}"
        return f"{self.column}:{self.sense}{w}"


def parse_criteria(text: str) -> tuple[Criterion, ...]:
    """Parse ``"col:min[:w],col:max[:w],..."`` into criteria.

    Raises
    ------
    UsageError
        Empty text, a malformed item, an unknown sense, a bad or negative weight, or a column
        named twice.
    """
    if text is None or not str(text).strip():
        raise UsageError("--criteria is empty; write e.g. 'time_to_train_min:min,cost_usd:min'")
    out = []
    for item in str(text).split(","):
        item = item.strip()
        parts = [p.strip() for p in item.split(":")]
        if len(parts) not in (2, 3) or not parts[0]:
            raise UsageError(
                f"criterion {item!r} is malformed; write 'column:min|max[:weight]', "
                "e.g. 'cost_usd:min:0.3'"
            )
        weight = None
        if len(parts) == 3:
            try:
                weight = float(parts[2])
            except ValueError:
                raise UsageError(
                    f"criterion '{parts[0]}' has weight {parts[2]!r}, which is not a number"
                ) from None
        out.append(Criterion(parts[0], parts[1], weight))
    seen = set()
    for c in out:
        if c.column in seen:
            raise UsageError(f"criterion column '{c.column}' is named twice in --criteria")
        seen.add(c.column)
    return tuple(out)


def normalize_weights(criteria) -> tuple[float, ...]:
    """Weights of ``criteria`` normalized to sum to one (equal where none is given).

    Mixed given and missing weights are not allowed: the meaning would be ambiguous.
    """
    given = [c.weight for c in criteria]
    if all(w is None for w in given):
        return tuple(1.0 / len(criteria) for _ in criteria)
    if any(w is None for w in given):
        missing = [c.column for c in criteria if c.weight is None]
        raise UsageError(
            f"criteria {missing} have no weight while others do; give every criterion a "
            "weight or none"
        )
    total = sum(given)
    if total <= 0:
        raise UsageError(f"criteria weights are all zero ({given}); at least one must be > 0")
    return tuple(w / total for w in given)


def default_criteria(columns) -> tuple[Criterion, ...]:
    """The default criteria: time, per-accelerator throughput, efficiency, and cost if known."""
    crit = [
        Criterion("time_to_train_min", "min"),
        Criterion("throughput_per_accelerator", "max"),
        Criterion("scaling_efficiency", "max"),
    ]
    if "cost_usd" in set(columns):
        crit.append(Criterion("cost_usd", "min"))
    return tuple(crit)


@dataclass(frozen=True)
class AnalysisSpec:
    """Every setting of one analysis run; validated on construction.

    Parameters
    ----------
    criteria : tuple of Criterion, optional
        Ranking criteria; the defaults of :func:`default_criteria` when empty.
    target : str
        Column whose drivers the random forest measures.
    clusters : int or "auto"
        Number of KMeans clusters, or ``"auto"`` to pick k by silhouette over ``k_range``.
    top : int
        How many top configurations to report.
    sample_rows : int
        Rows the random forest is fitted on at most (a seeded sample beyond that).
    seed : int
        Seed of every random choice (samples, forests, KMeans).
    drop_invalid : bool
        Drop rows with missing or infinite criteria (and report how many) instead of stopping.
    norm : {"vector", "minmax"}
        TOPSIS normalization.
    features : tuple of str, optional
        Random-forest features; the configuration variables present when omitted.
    n_estimators : int
        Trees in the random forest.
    accelerator_type : str, optional
        Keep only rows whose ``accelerator_type`` column has this value (e.g. "gpu" to leave
        out TPUs and CPU-only systems of real MLPerf data).
    robust : bool
        Also run SMAA over TOPSIS weights (see :mod:`gpurank.engine.robust`).
    samples : int
        Weight samples for ``robust``; standard errors shrink as ``1 / sqrt(samples)``.
    weight_ranges : tuple of (column, low, high)
        Bounds on the normalized weights sampled by ``robust``; strings
        ``"column=low:high"`` and ``{column: (low, high)}`` are accepted too.
    rank_depth : int, optional
        Report Pareto ranks exactly up to this depth: ``pareto_rank`` is ``min(rank,
        rank_depth)`` (fronts 0 .. depth-1 exact, every later row gets ``rank_depth``). The
        first fronts are what a ranking needs; on Dask this turns the exact ranks' block-pair
        work (quadratic in the number of key blocks) into one local pass per partition and a
        merge of the candidates. ``None``: every front exactly.
    count_cap : int, optional
        Report ``min(domination_count, count_cap)`` (exact below the cap). ``None``: exact.
    """

    criteria: tuple[Criterion, ...] = ()
    target: str = DEFAULT_TARGET
    clusters: int | str = 5
    k_range: tuple[int, int] = (2, 10)
    top: int = 10
    sample_rows: int = 20_000
    seed: int = 0
    drop_invalid: bool = False
    norm: str = "vector"
    features: tuple[str, ...] | None = None
    n_estimators: int = 100
    accelerator_type: str | None = None
    robust: bool = False
    samples: int = 10_000
    weight_ranges: tuple[tuple[str, float, float], ...] = ()
    rank_depth: int | None = None
    count_cap: int | None = None
    notes: tuple[str, ...] = field(default=(), compare=False)

    def __post_init__(self):
        if isinstance(self.clusters, str):
            if self.clusters != "auto":
                raise UsageError(
                    f"--clusters must be a positive integer or 'auto'; got {self.clusters!r}"
                )
        elif isinstance(self.clusters, bool) or not isinstance(self.clusters, int) or (
            self.clusters < 1
        ):
            raise UsageError(
                f"--clusters must be a positive integer or 'auto'; got {self.clusters!r}"
            )
        lo, hi = self.k_range
        if not (2 <= lo <= hi):
            raise UsageError(f"k_range must satisfy 2 <= low <= high; got {self.k_range}")
        _positive_int("top", self.top)
        _positive_int("sample_rows", self.sample_rows, minimum=10)
        _positive_int("n_estimators", self.n_estimators)
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise UsageError(f"--seed must be a non-negative integer; got {self.seed!r}")
        if self.norm not in ("vector", "minmax"):
            raise UsageError(f"--norm must be 'vector' or 'minmax'; got {self.norm!r}")
        if self.criteria:
            normalize_weights(self.criteria)
        if not isinstance(self.robust, bool):
            raise UsageError(f"robust must be True or False; got {self.robust!r}")
        _positive_int("samples", self.samples)
        if self.rank_depth is not None:
            _positive_int("rank_depth", self.rank_depth)
        if self.count_cap is not None:
            _positive_int("count_cap", self.count_cap)
        object.__setattr__(self, "weight_ranges", parse_weight_ranges(self.weight_ranges))
        if self.weight_ranges and not self.robust:
            raise UsageError("--weights-range bounds the weights of --robust; add --robust")


def parse_weight_ranges(items) -> tuple[tuple[str, float, float], ...]:
    """Bounds on normalized weights for ``--robust``: ``"cost_usd=0.1:0.5"`` strings (or
    ``(column, low, high)`` tuples, or a ``{column: (low, high)}`` dict) -> sorted tuples.

    Raises
    ------
    UsageError
        Malformed item, bounds outside [0, 1] or low > high, a column named twice, or lower
        bounds summing to more than 1 (no weight vector can satisfy them).
    """
    if not items:
        return ()
    if isinstance(items, str):
        items = [items]
    if isinstance(items, dict):
        items = [(col, *bounds) for col, bounds in items.items()]
    out = {}
    for item in items:
        if isinstance(item, str):
            for part in (p.strip() for p in item.split(",") if p.strip()):
                col, sep, rng = part.partition("=")
                lo, sep2, hi = rng.partition(":")
                if not (sep and sep2 and col.strip()):
                    raise UsageError(f"--weights-range {part!r} is malformed; write "
                                     "'column=low:high', e.g. 'cost_usd=0.1:0.5'")
                _add_range(out, col.strip(), lo, hi)
        else:
            col, lo, hi = item
            _add_range(out, col, lo, hi)
    if sum(lo for lo, _ in out.values()) > 1 + 1e-12:
        total = sum(lo for lo, _ in out.values())
        raise UsageError(f"--weights-range lower bounds sum to {total:g} > 1; weights sum to "
                         "1, so no weight vector satisfies them: lower some bounds")
    return tuple((c, lo, hi) for c, (lo, hi) in sorted(out.items()))


def _add_range(out, col, lo, hi):
    try:
        lo, hi = float(lo), float(hi)
    except (TypeError, ValueError):
        raise UsageError(f"--weights-range for '{col}' has bounds {lo!r}:{hi!r}, which are "
                         "not numbers") from None
    if not (0.0 <= lo <= hi <= 1.0):
        raise UsageError(f"--weights-range for '{col}' must satisfy 0 <= low <= high <= 1; "
                         f"got {lo:g}:{hi:g}")
    if col in out:
        raise UsageError(f"--weights-range names criterion '{col}' twice")
    out[col] = (lo, hi)


def limit_notes(spec) -> list[str]:
    """The summary notes that say which result columns are clipped (``rank_depth``,
    ``count_cap``)."""
    out = []
    if spec.rank_depth is not None:
        out.append(f"pareto_rank is exact up to depth {spec.rank_depth} (--rank-depth): rows "
                   f"on front {spec.rank_depth} or later have pareto_rank {spec.rank_depth}")
    if spec.count_cap is not None:
        out.append(f"domination_count is capped at {spec.count_cap} (--count-cap): exact "
                   "below the cap")
    return out


def _positive_int(name, value, *, minimum=1):
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise UsageError(f"--{name.replace('_', '-')} must be an integer >= {minimum}; got {value!r}")
