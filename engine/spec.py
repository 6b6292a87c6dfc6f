"""What the user asks for: criteria with senses and weights, and the analysis settings.

Criteria are written ``column:min|max[:weight]`` and comma-separated, e.g.
``time_to_train_min:min:0.4,cost_usd:min:0.3,scaling_efficiency:max:0.3``. Weights default
to equal and are normalized to sum to one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

from .constraints import parse_constraints
from .errors import SchemaError, UsageError
from .methods import DEFAULT_METHOD, DEFAULT_VIKOR_V, METHOD_NAMES, method_of, smaa_methods
from .params import (
    INT32_MAX,
    INT64_MAX,
    SEED_MAX,
    Interval,
    Items,
    Options,
    ParamError,
    check_fields,
)

__all__ = ["Criterion", "AnalysisSpec", "parse_criteria", "default_criteria", "default_target",
           "normalize_weights", "parse_weight_ranges", "DEFAULT_TARGET", "NORMS", "limit_notes",
           "DEFAULT_CLUSTERS", "SENSES", "MAX_CLUSTERS"]

SENSES = ("min", "max")
#: TOPSIS normalizations (see AnalysisSpec.norm).
NORMS = ("vector", "minmax", "log")
#: The forest's target when the table has it, and the fallback for tables without throughput.
DEFAULT_TARGET = "throughput_per_accelerator"
FALLBACK_TARGET = "time_to_train_min"
MAX_CLUSTERS = 1000
#: The study behind the method found five groups.
DEFAULT_CLUSTERS = 5
#: Default criteria, each used when the table has the column.
DEFAULT_CRITERIA = (("time_to_train_min", "min"), ("throughput_per_accelerator", "max"),
                    ("scaling_efficiency", "max"), ("cost_usd", "min"))


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
        col = self.column
        if any(ch in col for ch in ":,\"'") or col != col.strip():
            col = '"' + col.replace('"', '""') + '"'
        return f"{col}:{self.sense}{w}"


def _split_outside_quotes(text, sep):
    """Split ``text`` at ``sep`` except inside double or single quotes (doubled to escape)."""
    parts, cur, quote, i = [], [], None, 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == quote and text[i + 1:i + 2] == quote:
                cur.append(ch)
                i += 2
                continue
            if ch == quote:
                quote = None
            else:
                cur.append(ch)
        elif ch in "\"'" and not "".join(cur).strip():
            quote = ch
            cur = []
        elif ch == sep:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    if quote:
        raise ParamError("criteria", f": {text!r} has an unclosed quote ({quote})")
    parts.append("".join(cur))
    return parts


def parse_criteria(text: str) -> tuple[Criterion, ...]:
    """Parse ``"col:min[:w],col:max[:w],..."`` into criteria.

    A column whose name holds ``:`` or ``,`` is quoted: ``"cost:usd":min:0.3``.

    Raises
    ------
    UsageError
        Empty text, a malformed item, an unknown sense, a bad or negative weight, or a column
        named twice.

    Examples
    --------
    >>> [str(c) for c in parse_criteria('time_to_train_min:min, "cost:usd":min:2')]
    ['time_to_train_min:min', '"cost:usd":min:2']
    """
    if text is None or not str(text).strip():
        raise ParamError("criteria", "is empty; write e.g. 'time_to_train_min:min,cost_usd:min'")
    out = []
    for item in _split_items(str(text)):
        parts = [p.strip() for p in _split_outside_quotes(item, ":")]
        if len(parts) not in (2, 3) or not parts[0]:
            raise ParamError("criteria", f": {item.strip()!r} is malformed; write "
                             "'column:min|max[:weight]', e.g. 'cost_usd:min:0.3' (quote a "
                             "column name that holds ':' or ',')")
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
            raise ParamError("criteria", f"names column '{c.column}' twice")
        seen.add(c.column)
    return tuple(out)


def _split_items(text):
    """The comma-separated items of a criteria text, commas inside quotes kept."""
    items, cur, quote = [], [], None
    for ch in text:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None  # a doubled quote closes and reopens: same result
        elif ch in "\"'":
            quote = ch
            cur.append(ch)
        elif ch == ",":
            items.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    items.append("".join(cur))
    return items


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
    if not math.isfinite(total):
        raise ParamError("criteria", f"weights {given} sum to {total}; give weights whose sum "
                         "is a finite number (they are normalized to sum to one)")
    if total <= 0:
        raise UsageError(f"criteria weights are all zero ({given}); at least one must be > 0")
    return tuple(w / total for w in given)


def default_criteria(columns) -> tuple[Criterion, ...]:
    """The default criteria among ``columns`` (the table after its derived metrics).

    Time to train (min), per-accelerator throughput (max), scaling efficiency (max) and
    cost (min), each when the table has it; a table without throughput (measured runs with
    time, cost and energy) ranks on energy (min) too, when it has it.

    Raises
    ------
    SchemaError
        None of the default criteria is in the table.
    """
    cols = set(columns)
    crit = [Criterion(c, sense) for c, sense in DEFAULT_CRITERIA if c in cols]
    if "throughput_per_accelerator" not in cols and "energy_kwh" in cols:
        crit.append(Criterion("energy_kwh", "min"))
    if not crit:
        wanted = ", ".join(c for c, _ in DEFAULT_CRITERIA)
        raise SchemaError(f"the table has none of the default criteria ({wanted}); name the "
                          "columns to rank on with criteria (--criteria 'column:min,...')")
    return tuple(crit)


def default_target(columns) -> str | None:
    """The forest's default target: per-accelerator throughput when the table has it, else
    time to train; ``None`` when it has neither."""
    cols = set(columns)
    for t in (DEFAULT_TARGET, FALLBACK_TARGET):
        if t in cols:
            return t
    return None


@dataclass(frozen=True)
class AnalysisSpec:
    """Every setting of one analysis run; validated on construction.

    Parameters
    ----------
    criteria : tuple of Criterion, optional
        Ranking criteria; when empty, the defaults of :func:`default_criteria` among the
        columns the table has.
    target : str, optional
        Column whose drivers the random forest measures; by default
        ``throughput_per_accelerator`` when the table has it, else ``time_to_train_min``.
    clusters : int, "auto" or None
        Number of KMeans clusters, or ``"auto"`` to pick k by silhouette over ``k_range``.
        ``None`` (the default) means :data:`DEFAULT_CLUSTERS`, or as many as a smaller table
        has rows to group (with a note); an explicit k larger than that is an error.
    top : int
        How many top configurations to report.
    sample_rows : int
        Rows the random forest is fitted on at most (a seeded sample beyond that).
    seed : int
        Seed of every random choice (samples, forests, KMeans); below 2**32.
    drop_invalid : bool
        Drop rows with missing, infinite or out-of-range values (and report each reason)
        instead of stopping.
    norm : {"vector", "minmax", "log"}
        TOPSIS normalization: ``"vector"`` divides each column by its 2-norm, ``"minmax"``
        maps it to [0, 1], ``"log"`` takes log10 of each (positive, ratio-scale) criterion
        and then maps it to [0, 1], for criteria that span orders of magnitude
        (docs/ranking.md says which to use when).
    features : tuple of str, optional
        Random-forest features; the configuration variables present when omitted.
    n_estimators : int
        Trees in the random forest.
    accelerator_type : str, optional
        Keep only rows whose ``accelerator_type`` column has this value (e.g. "gpu" to leave
        out TPUs and CPU-only systems of real MLPerf data).
    benchmark : str, optional
        Keep only rows whose ``benchmark`` column has this value (a table of several MLPerf
        workloads is refused otherwise: their times cannot be ranked against each other).
    constraints : tuple of Constraint
        Limits a configuration must meet before it is ranked (``"cost_usd<=500"``); a string
        or a sequence is parsed by :func:`gpurank.engine.constraints.parse_constraints`.
    robust : bool
        Also run SMAA over TOPSIS weights (see :mod:`gpurank.engine.robust`).
    samples : int
        Weight samples for ``robust``, 1 to 10,000,000; standard errors shrink as
        ``1 / sqrt(samples)``.
    weight_ranges : tuple of (column, low, high)
        Bounds on the normalized weights sampled by ``robust``; strings
        ``"column=low:high"`` and ``{column: (low, high)}`` are accepted too.
    rank_depth : int, optional
        Report ``min(pareto_rank, rank_depth)``: fronts 0 .. depth-1 exact, every later row
        gets ``rank_depth``. ``None``: every front exactly.
    count_cap : int, optional
        Report ``min(domination_count, count_cap)`` (exact below the cap). ``None``: exact.
    method : {"topsis", "vikor"}
        The ranking method (:data:`gpurank.engine.methods.METHODS`): TOPSIS closeness
        (``topsis_score``, larger is better) or VIKOR's compromise index Q (``vikor_q``, 0 =
        best); ``rank`` is 1 = best either way. ``robust`` needs a method SMAA ranks by
        (TOPSIS). See ``docs/ranking.md``.
    vikor_v : float in [0, 1]
        VIKOR's weight of the majority's utility S against the largest single regret R
        (0.5 by default, [Opricovic2004]); only with ``method="vikor"``.
    """

    criteria: tuple[Criterion, ...] = ()
    target: str | None = None
    clusters: int | str | None = None
    k_range: tuple[int, int] = (2, 10)
    top: int = 10
    sample_rows: int = 20_000
    seed: int = 0
    drop_invalid: bool = False
    norm: str = "vector"
    features: tuple[str, ...] | None = None
    n_estimators: int = 100
    accelerator_type: str | None = None
    benchmark: str | None = None
    constraints: tuple = ()
    robust: bool = False
    samples: int = 10_000
    weight_ranges: tuple[tuple[str, float, float], ...] = ()
    rank_depth: int | None = None
    count_cap: int | None = None
    method: str = DEFAULT_METHOD
    vikor_v: float = DEFAULT_VIKOR_V
    notes: tuple[str, ...] = field(default=(), compare=False)

    #: What each setting allows, checked on construction (:func:`~.params.check_fields`).
    parameter_constraints: ClassVar[dict] = {
        "target": (None, str),
        "clusters": (None, Interval(int, 1, MAX_CLUSTERS), Options(("auto",))),
        "k_range": (Items(Interval(int, 2, MAX_CLUSTERS), min_len=2, max_len=2),),
        "top": (Interval(int, 1, INT32_MAX),),
        "sample_rows": (Interval(int, 10, INT32_MAX),),
        "seed": (Interval(int, 0, SEED_MAX),),
        "drop_invalid": (bool,),
        "norm": (Options(NORMS),),
        "features": (None, Items(str)),
        "n_estimators": (Interval(int, 1, 100_000),),
        "accelerator_type": (None, str),
        "benchmark": (None, str),
        "robust": (bool,),
        # the weight samples are held at once (8 bytes per criterion each): ten million keep
        # a sample matrix under a gigabyte and a share's standard error under 0.0002
        "samples": (Interval(int, 1, 10_000_000),),
        "rank_depth": (None, Interval(int, 1, INT32_MAX)),
        "count_cap": (None, Interval(int, 1, INT64_MAX)),
        "method": (Options(METHOD_NAMES),),
        "vikor_v": (Interval(float, 0.0, 1.0),),
    }

    def __post_init__(self):
        crit = self.criteria
        if isinstance(crit, str):
            crit = parse_criteria(crit)
        elif isinstance(crit, Criterion):
            crit = (crit,)
        crit = tuple(crit or ())
        for c in crit:
            if not isinstance(c, Criterion):
                raise ParamError("criteria", f"must hold Criterion objects or be a text such "
                                 f"as 'cost_usd:min'; got {type(c).__name__}")
        object.__setattr__(self, "criteria", crit)
        if isinstance(self.features, str):
            object.__setattr__(self, "features", (self.features,))
        check_fields(self, self.parameter_constraints)
        if self.k_range[0] > self.k_range[1]:
            raise ParamError("k_range", f"must have low <= high; got {self.k_range!r}")
        object.__setattr__(self, "k_range", tuple(self.k_range))
        if self.features is not None:
            object.__setattr__(self, "features", tuple(self.features))
        object.__setattr__(self, "constraints", parse_constraints(self.constraints or ()))
        if self.criteria:
            normalize_weights(self.criteria)
        object.__setattr__(self, "weight_ranges", parse_weight_ranges(self.weight_ranges))
        if self.weight_ranges and not self.robust:
            raise ParamError("weight_ranges", "bounds the weights of the robust ranking; pass "
                             "{robust=True}", mentions=("robust=True",))
        self._check_method()
        if self.weight_ranges and self.criteria:
            names = [c.column for c in self.criteria]
            unknown = [c for c, _, _ in self.weight_ranges if c not in names]
            if unknown:
                raise ParamError("weight_ranges", f"names {', '.join(map(repr, unknown))}, "
                                 f"which is not a criterion; criteria are: {', '.join(names)}")


    def _check_method(self):
        """The settings that depend on the ranking method: SMAA ranks by the methods whose
        row says so; ``vikor_v`` weighs VIKOR's terms and means nothing to another method."""
        if self.robust and not method_of(self.method).smaa:
            allowed = ", ".join(repr(m) for m in smaa_methods())
            raise ParamError("method", f"must be one of {allowed} with {{robust=True}} (SMAA "
                             f"ranks by those methods only); got {self.method!r}",
                             mentions=("robust=True",))
        if self.vikor_v != DEFAULT_VIKOR_V and self.method != "vikor":
            raise ParamError("vikor_v", f"weighs the terms of VIKOR; pass {{method='vikor'}} "
                             f"or leave it at {DEFAULT_VIKOR_V}; got {self.vikor_v!r} with method "
                             f"{self.method!r}", mentions=("method='vikor'",))


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
                    raise ParamError("weight_ranges", f"items are 'column=low:high', e.g. "
                                     f"'cost_usd=0.1:0.5'; got {part!r}")
                _add_range(out, col.strip(), lo, hi)
        else:
            try:
                col, lo, hi = item
            except (TypeError, ValueError):
                raise ParamError("weight_ranges", f"items must be (column, low, high); got "
                                 f"{item!r}") from None
            _add_range(out, col, lo, hi)
    if sum(lo for lo, _ in out.values()) > 1 + 1e-12:
        total = sum(lo for lo, _ in out.values())
        raise ParamError("weight_ranges", f"lower bounds sum to {total:g} > 1; weights sum to "
                         "1, so no weight vector satisfies them: lower some bounds")
    return tuple((c, lo, hi) for c, (lo, hi) in sorted(out.items()))


def _add_range(out, col, lo, hi):
    try:
        lo, hi = float(lo), float(hi)
    except (TypeError, ValueError):
        raise ParamError("weight_ranges", f"bounds of '{col}' must be numbers; got "
                         f"{lo!r}:{hi!r}") from None
    if not (0.0 <= lo <= hi <= 1.0):
        raise ParamError("weight_ranges", f"bounds of '{col}' must satisfy 0 <= low <= high "
                         f"<= 1; got {lo:g}:{hi:g}")
    if not isinstance(col, str) or not col:
        raise ParamError("weight_ranges", f"columns must be non-empty strings; got {col!r}")
    if col in out:
        raise ParamError("weight_ranges", f"names criterion '{col}' twice")
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
