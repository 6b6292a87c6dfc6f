"""Step 0, prepare: the rows an analysis ranks, and every message about the rows it does not.

One function, :func:`prepare_rows`, turns a table (or one partition of a dataset) into the
analyzed rows and their cost matrix, in this order:

1. the table's own checks: unique column names; input columns named like gpurank's result
   columns are replaced (with a note);
2. ``accelerator_type`` filter;
3. input checks: canonical columns outside their domain (a negative time, a fractional or
   negative accelerator count, ...) make a row invalid, with the reason;
4. derived metrics (:mod:`gpurank.engine.metrics`), with reference configurations taken
   from the valid rows only, so one bad row never takes the rest of its model with it;
5. constraints (``--require``), counted one by one;
6. the criteria matrix; a missing or infinite criterion makes a row invalid, with the
   reason (and, for a derived criterion, the input that made it missing);
7. invalid rows stop the run (one line: how many, each reason with its first row) or, with
   ``drop_invalid``, are dropped and reported the same way.

Every count is a :class:`RowReport`, which adds across partitions, so the Dask driver runs
the same function on each partition and reports the same messages as the in-memory path.
Row numbers in messages are 0-based positions in the table as read.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from .constraints import ConstraintCounts, constraint_mask, infeasible_message
from .errors import DataError
from .masks import definite
from .methods import SCORE_COLUMNS
from .metrics import METRIC_INPUTS, derive_metrics, plan_metrics, reference_table
from .ranking import criteria_matrix
from .schema import check_column_names, require_columns, shown_names, text_from_bytes

__all__ = [
    "RESULT_COLUMNS",
    "INPUT_DOMAINS",
    "RowReport",
    "Prepared",
    "check_columns",
    "input_reference",
    "prepare_rows",
    "raise_or_note",
    "describe_preparation",
]

#: Columns an analysis writes; an input column of the same name is replaced.
RESULT_COLUMNS = ("row_id", "cluster", "pareto_rank", "domination_count", *SCORE_COLUMNS,
                  "rank", "p_top1", "p_topk", "expected_rank")


@dataclass(frozen=True)
class Domain:
    """Allowed values of a canonical numeric column."""

    low: float
    inclusive: bool
    whole: bool = False  # counts: whole numbers only

    def describe(self) -> str:
        cmp = ">=" if self.inclusive else ">"
        return f"must be a whole number {cmp} {self.low:g}" if self.whole else \
            f"must be {cmp} {self.low:g}"


#: Domains of the canonical numeric columns. Zero accelerators is allowed: CPU-only systems
#: of real MLPerf data, whose per-accelerator figures are undefined (and say so).
INPUT_DOMAINS = {
    "n_accelerators": Domain(0, True, whole=True),
    "n_nodes": Domain(1, True, whole=True),
    "accelerators_per_node": Domain(0, True, whole=True),
    "global_batch_size": Domain(1, True, whole=True),
    "cpu_cores_per_accelerator": Domain(0, True),
    "epochs": Domain(0, False),
    "time_to_train_min": Domain(0, False),
    "throughput": Domain(0, True),
    "price_per_accelerator_hour": Domain(0, True),
    "power_w": Domain(0, True),
    "cost_usd": Domain(0, True),
    "energy_kwh": Domain(0, True),
}


@dataclass(frozen=True)
class RowReport:
    """What happened to the rows of one table or partition; partitions add with ``+``.

    Attributes
    ----------
    rows_in : int
        Rows read.
    selections : tuple of (column, wanted, kept, values)
        Each selection filter (``accelerator_type``, ``benchmark``) in the order applied:
        rows left after it, and the column's values present (for the message when none
        matches).
    benchmarks : tuple of str
        The ``benchmark`` values of the rows kept (a table of several workloads cannot be
        ranked as one).
    constraints : ConstraintCounts
    invalid : dict
        ``{reason: (rows, first_row, first_value)}`` over the rows that passed the filter
        and the constraints; a row may have several reasons.
    invalid_rows : int
        Rows with at least one reason.
    kept : int
        Rows analyzed.
    """

    rows_in: int
    selections: tuple
    constraints: ConstraintCounts
    invalid: dict = field(default_factory=dict)
    invalid_rows: int = 0
    kept: int = 0
    benchmarks: tuple = ()

    @property
    def selected(self) -> int:
        """Rows left after the selection filters."""
        return self.selections[-1][2] if self.selections else self.rows_in

    def __add__(self, other: "RowReport") -> "RowReport":
        invalid = dict(self.invalid)
        for reason, (n, first, value) in other.invalid.items():
            if reason in invalid:
                n0, f0, v0 = invalid[reason]
                invalid[reason] = (n0 + n, f0, v0) if f0 <= first else (n0 + n, first, value)
            else:
                invalid[reason] = (n, first, value)
        selections = tuple((col, want, k1 + k2, tuple(sorted(set(v1) | set(v2))))
                           for (col, want, k1, v1), (_, _, k2, v2)
                           in zip(self.selections, other.selections))
        return RowReport(self.rows_in + other.rows_in, selections,
                         self.constraints + other.constraints, invalid,
                         self.invalid_rows + other.invalid_rows, self.kept + other.kept,
                         tuple(sorted(set(self.benchmarks) | set(other.benchmarks))))

    def invalid_text(self) -> str:
        """``"2 with time_to_train_min must be > 0 (first: row 17 holds -2.5); ..."``."""
        parts = []
        for reason, (n, first, value) in sorted(self.invalid.items(), key=lambda kv: kv[1][1]):
            where = f"row {first}" + (f" holds {value}" if value is not None else "")
            parts.append(f"{n:,} where {reason} (first: {where})")
        return "; ".join(parts)


@dataclass(frozen=True)
class Prepared:
    """The analyzed rows of one table or partition.

    Attributes
    ----------
    frame : DataFrame
        The rows kept, with their derived metrics, on the backend (index 0..n-1).
    costs : array, shape (n, m)
        The criteria matrix of ``frame`` on the backend (every criterion minimized).
    criteria : tuple of Criterion
    report : RowReport
    derived, skipped : as :func:`gpurank.engine.metrics.plan_metrics` returns them
    replaced : tuple of str
        Input columns that an analysis writes itself (replaced).
    """

    frame: object
    costs: object
    criteria: tuple
    report: RowReport
    derived: tuple = ()
    skipped: dict = field(default_factory=dict)
    replaced: tuple = ()


def check_columns(df):
    """Refuse duplicate or non-text column names; drop input columns named like results.

    Returns
    -------
    (frame, replaced) : the frame without those columns, and their names.
    """
    check_column_names(df)
    names = list(df.columns)
    replaced = tuple(c for c in names if c in RESULT_COLUMNS)
    if replaced:
        df = df.drop(columns=list(replaced))
    if isinstance(df, pd.DataFrame):  # a host table as given (API, a Dask partition)
        df = text_from_bytes(df, where="the table")
    return df, replaced


def _values(col, backend) -> tuple:
    return tuple(sorted(map(str, list(backend.to_host(col.dropna().astype("str").unique())))))


def _selection(df, spec, backend):
    """The mask of the rows the selection filters keep (None: all), and what each kept."""
    keep, selections = None, []
    for column in ("accelerator_type", "benchmark"):
        wanted = getattr(spec, column)
        if wanted is None:
            continue
        require_columns(df, [column], role=f"{column} filter")
        col = df[column]
        m = definite(col.astype("str") == wanted) & col.notna()
        keep = m if keep is None else keep & m
        selections.append((column, wanted, int(keep.sum()), _values(col, backend)))
    return keep, tuple(selections)


def _coerce_numbers(df, backend):
    """Canonical numeric columns that arrived as text (a CSV with one bad cell reads as a
    text column) become numbers; a value that is not a number becomes missing, and is
    reported as such: ``{reason: (mask, column, original values)}``."""
    bad = {}
    for col in INPUT_DOMAINS:
        if col not in df.columns or getattr(df[col].dtype, "kind", "O") in "iufb":
            continue
        raw = df[col]
        text = raw.astype("str").str.strip()
        # A missing cell compares as missing on cuDF: the masks are filled where built.
        given = definite(raw.notna() & (text != ""))
        number = backend.xdf.to_numeric(text.where(given), errors="coerce")
        mask = definite(number.isna() & given)
        if bool(mask.any()):
            bad[f"{col} is not a number"] = (mask, col, raw)
        df = df.assign(**{col: number.astype("float64")})
    return df, bad


def _domain_masks(df, backend):
    """``{reason: mask}`` of present values outside each canonical column's domain."""
    out = {}
    for col, dom in INPUT_DOMAINS.items():
        if col not in df.columns:
            continue
        s = df[col]
        if getattr(s.dtype, "kind", "O") not in "iufb":
            continue  # a text column named like a number: the steps that read it refuse it
        v = s.astype("float64")
        present = v.notna()
        # Comparisons with a missing value are missing on cuDF: filled where built.
        below = definite((v < dom.low) if dom.inclusive else (v <= dom.low))
        infinite = definite((v == float("inf")) | (v == -float("inf")))
        bad = present & (below | infinite)
        if bool(bad.any()):
            out[f"{col} {dom.describe()}"] = (bad, col)
        if dom.whole:
            frac = present & ~bad & definite((v % 1) != 0)
            if bool(frac.any()):
                out[f"{col} must be a whole number"] = (frac, col)
    return out


def input_reference(df, spec, *, backend):
    """The reference configurations of ``df`` (its valid rows that the selection filters
    keep), as a host table for :func:`gpurank.engine.metrics.merge_reference_tables`; None
    when the table has no ``accelerator``, ``n_accelerators`` and ``time_to_train_min``."""
    need = ("accelerator", "n_accelerators", "time_to_train_min")
    if len(df) == 0 or any(c not in df.columns for c in need):
        return None
    df, _ = _coerce_numbers(df, backend)
    keep, _ = _selection(df, spec, backend)
    bad = _any_bad(df, backend, len(df))
    ok = ~bad if keep is None else keep & ~bad
    return backend.to_host(reference_table(df.loc[ok]))


def _any_bad(df, backend, n, masks=None):
    """The rows with any input outside its domain (``masks``: their
    :func:`_domain_masks`, when already computed)."""
    masks = _domain_masks(df, backend) if masks is None else masks
    bad = None
    for m, _ in masks.values():
        bad = m if bad is None else bad | m
    if bad is None:
        return backend.xdf.Series(backend.xp.zeros(n, dtype=bool), index=df.index)
    return bad


def _first(mask, values, offset, backend):
    idx = int(backend.xp.flatnonzero(_array(mask, backend))[0])
    value = None
    if values is not None:
        v = values.iloc[idx]
        value = f"{float(v):g}" if v == v else None
    return offset + idx, value


def _array(mask, backend):
    if hasattr(mask, "to_cupy") and backend.on_device:
        return mask.to_cupy()
    if hasattr(mask, "to_numpy"):
        return mask.to_numpy(dtype=bool)
    return mask


def _metrics_frame(df, keep, derived, reference, backend, bad_inputs):
    """The table with its derived metrics; speedup and efficiency are referenced to the
    given configurations, else to the valid rows of the wanted type (``bad_inputs``: the
    table's :func:`_domain_masks`)."""
    n = len(df)
    if n and reference is None and "speedup" in derived:
        anybad = _any_bad(df, backend, n, bad_inputs)
        ok = ~anybad if keep is None else keep & ~anybad
        reference = reference_table(df.loc[ok])
    return derive_metrics(df, reference=reference)


def _apply_constraints(frame, spec, keep, type_kept: int):
    """Rows failing each constraint, counted among the rows of the wanted type, and the mask
    of the rows meeting them all (None when nothing is selected or constrained)."""
    alive = keep if keep is not None else None
    failing, feasible = [], alive
    for c in spec.constraints:
        m = constraint_mask(frame, c)
        fail = ~m if alive is None else alive & ~m
        failing.append(int(fail.sum()))
        feasible = m if feasible is None else feasible & m
    counts = ConstraintCounts(tuple(spec.constraints), tuple(failing), type_kept,
                              type_kept if feasible is None else int(feasible.sum()))
    return counts, feasible


@dataclass(frozen=True)
class _Scope:
    """Where invalid rows are looked for: the rows of ``frame`` in ``mask`` (the feasible
    ones), numbered from ``offset`` in messages."""

    frame: object
    mask: object
    offset: int
    backend: object


def _invalid_inputs(not_numbers: dict, bad_inputs: dict, sc: _Scope, bad_any):
    """Rows whose inputs are not numbers or outside their domain: ``{reason: (count, first
    row, its value)}`` and the mask of those rows."""
    frame, scope, offset, backend = sc.frame, sc.mask, sc.offset, sc.backend
    invalid = {}
    for reason, (mask, col, raw) in not_numbers.items():
        m = _array(mask, backend) & scope
        if bool(m.any()):
            i, _ = _first(m, None, 0, backend)
            invalid[reason] = (int(m.sum()), offset + i, repr(backend.to_host(raw.iloc[i:i + 1])
                                                             .iloc[0]))
            bad_any |= m
    for reason, (mask, col) in bad_inputs.items():
        m = _array(mask, backend) & scope
        if bool(m.any()):
            invalid[reason] = (int(m.sum()), *_first(m, frame[col], offset, backend))
            bad_any |= m
    return invalid, bad_any


def _invalid_criteria(costs, criteria, norm: str, sc: _Scope, bad_any):
    """Rows with a criterion missing or infinite (or, for norm 'log', not > 0) that are not
    already invalid for their inputs: ``{reason: (count, first row, its value)}`` and the
    mask of every invalid row."""
    frame, scope, offset, backend = sc.frame, sc.mask, sc.offset, sc.backend
    xp = backend.xp
    invalid = {}
    for j, c in enumerate(criteria):
        col = costs[:, j]
        for word, m in (("is missing", col != col),
                        ("is infinite", xp.abs(col) == float("inf"))):
            m = m & scope & ~bad_any  # a row already invalid for its inputs is not re-told
            if not bool(m.any()):
                continue
            because = _because(frame, c.column, m, backend) if word == "is missing" else ""
            invalid[f"{c.column} {word}{because}"] = (int(m.sum()),
                                                      *_first(m, None, offset, backend))
        bad_any |= scope & ((col != col) | (xp.abs(col) == float("inf")))
        if norm == "log":
            # log10 of the criterion as given: "max" columns are negated in the matrix.
            value = -col if c.sense == "max" else col
            m = scope & ~bad_any & (value <= 0)
            if bool(m.any()):
                invalid[f"{c.column} must be > 0 for norm 'log'"] = (
                    int(m.sum()), *_first(m, frame[c.column], offset, backend))
                bad_any |= m
    return invalid, bad_any


def _kept_benchmarks(frame, kept_mask, backend) -> tuple:
    """The benchmarks of the kept rows (empty without a benchmark column)."""
    if "benchmark" in frame.columns:
        return _values(frame["benchmark"].loc[_series_mask(kept_mask, frame, backend)],
                       backend)
    return ()



def prepare_rows(df, spec, criteria, *, backend, reference=None, offset=0):
    """The analyzed rows of ``df`` and their criteria matrix, with every count and reason.

    Parameters
    ----------
    df : DataFrame
        A table or one partition, on the backend.
    spec : AnalysisSpec
        ``accelerator_type``, ``constraints`` and ``drop_invalid`` are read here.
    criteria : tuple of Criterion
        Resolved criteria (see :func:`gpurank.engine.spec.default_criteria`).
    backend : Backend
    reference : DataFrame, optional
        Reference configurations for speedup and efficiency (a Dask dataset's, merged over
        its partitions); taken from ``df``'s valid rows when omitted.
    offset : int
        Position of ``df``'s first row in the whole table, for row numbers in messages.

    Returns
    -------
    Prepared
        Invalid rows are left out of ``frame`` and ``costs`` here whatever ``drop_invalid``
        says; :func:`raise_or_note` decides, once the whole table's report is known.
    """
    df, replaced = check_columns(df)
    n = len(df)
    df, not_numbers = _coerce_numbers(df, backend)
    keep, selections = _selection(df, spec, backend)
    type_kept = n if keep is None else int(keep.sum())
    derived, skipped = plan_metrics(df.columns)
    # a metric the table brings and the analysis derives again is replaced, with the note
    # rank and cluster get
    replaced = replaced + tuple(m for m in derived if m in df.columns)
    bad_inputs = _domain_masks(df, backend) if n else {}
    frame = _metrics_frame(df, keep, derived, reference, backend, bad_inputs)
    counts, feasible = _apply_constraints(frame, spec, keep, type_kept)
    # Invalid rows among the feasible ones: inputs outside their domain, criteria missing.
    costs = criteria_matrix(frame, criteria, backend=backend)
    xp = backend.xp
    scope = _array(feasible, backend) if feasible is not None else xp.ones(n, dtype=bool)
    sc = _Scope(frame, scope, offset, backend)
    invalid, bad_any = _invalid_inputs(not_numbers, bad_inputs, sc, xp.zeros(n, dtype=bool))
    by_criteria, bad_any = _invalid_criteria(costs, criteria, spec.norm, sc, bad_any)
    invalid.update(by_criteria)
    kept_mask = scope & ~bad_any
    n_invalid = int(bad_any.sum())
    benchmarks = _kept_benchmarks(frame, kept_mask, backend) if n else ()
    report = RowReport(n, selections, counts, invalid, n_invalid, int(kept_mask.sum()),
                       benchmarks)
    if n and not bool(kept_mask.all()):
        frame = frame.loc[_series_mask(kept_mask, frame, backend)].reset_index(drop=True)
        costs = xp.ascontiguousarray(costs[kept_mask])
    return Prepared(frame=frame, costs=costs, criteria=tuple(criteria), report=report,
                    derived=derived, skipped=skipped, replaced=replaced)


def _series_mask(mask, frame, backend):
    """A boolean mask usable with ``frame.loc`` (a Series of the frame's library)."""
    return backend.xdf.Series(mask, index=frame.index)


def _because(frame, column, mask, backend) -> str:
    """`` (n_accelerators is 0)``-style reason for a missing derived criterion, read off the
    first such row's inputs."""
    inputs = [c for c in METRIC_INPUTS.get(column, ()) if c in frame.columns]
    if not inputs:
        return ""
    i = int(backend.xp.flatnonzero(mask)[0])
    for col in inputs:
        v = frame[col].iloc[i]
        if v is None or (isinstance(v, float) and v != v) or _is_na(v):
            return f" (its input {col} is missing)"
        if col == "n_accelerators" and float(v) == 0:
            return " (undefined for 0 accelerators)"
    if column in ("speedup", "scaling_efficiency"):
        return " (no reference configuration of its accelerator has a valid time)"
    return ""


def _is_na(v) -> bool:
    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def raise_or_note(report: RowReport, spec, notes: list) -> None:
    """Stop with one message, or add the notes, once the whole table's report is known.

    Raises
    ------
    DataError
        The table is empty; the accelerator_type filter or the constraints leave no row;
        rows are invalid and ``drop_invalid`` is False; every row is invalid.
    """
    if report.rows_in == 0:
        raise DataError("the table is empty; at least one configuration row is needed")
    before = report.rows_in
    for column, wanted, kept, values in report.selections:
        if kept == 0:
            raise DataError(f"{column} {wanted!r} matches no row; the table has: "
                            f"{shown_names(wanted, values, none=f'no {column} values')}")
        if kept < before:
            flag = "--" + column.replace("_", "-")
            notes.append(f"{before - kept:,} rows with {column} other than {wanted!r} left "
                         f"out ({flag})")
        before = kept
    if spec.benchmark is None and len(report.benchmarks) > 1:
        raise DataError(f"the table holds results of {len(report.benchmarks)} benchmarks "
                        f"({', '.join(report.benchmarks)}); times of different workloads "
                        "cannot be ranked against each other: choose one with --benchmark "
                        "NAME")
    if report.constraints.constraints:
        if report.constraints.feasible == 0:
            raise DataError(infeasible_message(report.constraints))
        notes.extend(report.constraints.notes())
    if report.invalid_rows:
        if not spec.drop_invalid:
            raise DataError(f"{report.invalid_rows:,} rows are invalid: "
                            f"{report.invalid_text()}; fix them or pass --drop-invalid to "
                            "leave those rows out")
        notes.append(f"{report.invalid_rows:,} invalid rows dropped (--drop-invalid): "
                     f"{report.invalid_text()}")
    if report.kept == 0:
        raise DataError("every row is invalid; nothing to rank")


def describe_preparation(prepared: Prepared) -> list[str]:
    """Notes about the table itself: replaced result columns and skipped derived metrics."""
    notes = []
    if prepared.replaced:
        notes.append(f"input columns {', '.join(prepared.replaced)} are gpurank's result "
                     "columns; this analysis replaced them")
    skipped = {m: why for m, why in prepared.skipped.items() if not why.startswith("the table")}
    if skipped:
        notes.append("derived metrics skipped: " + "; ".join(f"{m} ({why})"
                                                             for m, why in skipped.items()))
    return notes

