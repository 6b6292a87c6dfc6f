"""Limits a configuration must meet before it is ranked (``--require``, ``constraints=``).

A small grammar, parsed without ``eval``: comma-separated items, each a column, a comparison
and a number, or a column and a set of text values::

    time_to_train_min<=120, cost_usd<=500, n_accelerators<=64
    provider in {AWS, Azure}, accelerator not in {V100-SXM2-32GB}, framework==PyTorch

Comparisons: ``<=``, ``<``, ``>=``, ``>``, ``==``, ``!=``. A column name that holds
punctuation is quoted: ``"cost:usd"<=5``. A row whose constrained value is missing does not
meet the constraint. Constraints apply after the derived metrics are computed (so
``cost_usd`` and ``scaling_efficiency`` can be limited, and efficiency keeps its reference
configuration) and before importance, grouping and ranking, on every backend and on Dask.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from .errors import DataError
from .masks import definite
from .params import ParamError
from .schema import require_columns

__all__ = ["Constraint", "parse_constraints", "constraint_mask",
           "ConstraintCounts", "infeasible_message"]

_NUMERIC_OPS = ("<=", ">=", "==", "!=", "<", ">")
_SET_OPS = ("in", "not in")


@dataclass(frozen=True)
class Constraint:
    """One limit: ``column op value``.

    Parameters
    ----------
    column : str
    op : {"<=", "<", ">=", ">", "==", "!=", "in", "not in"}
    value : float or tuple of str
        A finite number for the comparisons (``==``/``!=`` also take one text value, as a
        one-element tuple), a tuple of text values for ``in`` / ``not in``.
    """

    column: str
    op: str
    value: float | tuple

    def __post_init__(self):
        if not isinstance(self.column, str) or not self.column:
            raise ParamError("constraints", ": a constraint needs a column name")
        if self.op not in _NUMERIC_OPS + _SET_OPS:
            raise ParamError("constraints", f": {self.op!r} is not a comparison; allowed: "
                             f"{', '.join(_NUMERIC_OPS + _SET_OPS)}")
        if isinstance(self.value, tuple):
            if not self.value or not all(isinstance(v, str) for v in self.value):
                raise ParamError("constraints", f": '{self.column} {self.op}' needs a set of text "
                                 "values, e.g. {AWS, Azure}")
            if self.op not in _SET_OPS + ("==", "!="):
                raise ParamError("constraints", f": '{self.column} {self.op}' compares a text "
                                 "value; use ==, !=, in or not in")
        else:
            if isinstance(self.value, bool) or not isinstance(self.value, (int, float)) or \
                    not math.isfinite(self.value):
                raise ParamError("constraints", f": '{self.column} {self.op}' needs a finite "
                                 f"number; got {self.value!r}")
            if self.op in _SET_OPS:
                raise ParamError("constraints", f": '{self.column} {self.op}' needs a set of "
                                 "values in braces, e.g. {AWS, Azure}")
            object.__setattr__(self, "value", float(self.value))

    @property
    def is_text(self) -> bool:
        return isinstance(self.value, tuple)

    def __str__(self) -> str:
        col = self.column if re.fullmatch(r"[A-Za-z_][\w.]*", self.column) else \
            '"' + self.column.replace('"', '""') + '"'
        if self.op in _SET_OPS:
            return f"{col} {self.op} {{{', '.join(self.value)}}}"
        if self.is_text:
            return f"{col}{self.op}{self.value[0]}"
        return f"{col}{self.op}{self.value:g}"


_TOKEN = re.compile(r"""
    \s*(?:
      (?P<quoted>"(?:[^"]|"")*"|'(?:[^']|'')*')
    | (?P<op><=|>=|==|!=|<|>)
    | (?P<set>\{[^{}]*\})
    | (?P<comma>,)
    | (?P<word>[^\s,<>=!{}"']+)
    )""", re.VERBOSE)


def _tokens(text):
    pos, out = 0, []
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise ParamError("constraints", f": cannot read {text[pos:pos + 20]!r} in {text!r}; write "
                             "e.g. 'time_to_train_min<=120,provider in {AWS, Azure}'")
        kind = m.lastgroup
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


def _unquote(tok):
    q = tok[0]
    return tok[1:-1].replace(q + q, q)


def _parse_item(tokens, text):
    if not tokens:
        raise ParamError("constraints", f": an empty item in {text!r}; separate limits with one "
                         "comma")
    kind, tok = tokens[0]
    if kind not in ("word", "quoted"):
        raise ParamError("constraints", f": {text!r}: a limit starts with a column name; got {tok!r}")
    column = _unquote(tok) if kind == "quoted" else tok
    rest = tokens[1:]
    if len(rest) >= 2 and rest[0] == ("word", "not") and rest[1] == ("word", "in"):
        op, rest = "not in", rest[2:]
    elif rest and rest[0] == ("word", "in"):
        op, rest = "in", rest[1:]
    elif rest and rest[0][0] == "op":
        op, rest = rest[0][1], rest[1:]
    else:
        raise ParamError("constraints", f": '{column}' needs a comparison (<=, <, >=, >, ==, !=, in, "
                         f"not in) in {text!r}")
    if len(rest) != 1:
        raise ParamError("constraints", f": '{column} {op}' needs exactly one value in {text!r}")
    kind, tok = rest[0]
    if kind == "set":
        values = tuple(v.strip() for v in tok[1:-1].split(",") if v.strip())
        values = tuple(_unquote(v) if v[0] in "\"'" and v[-1] == v[0] and len(v) > 1 else v
                       for v in values)
        if op not in _SET_OPS:
            op = {"==": "in", "!=": "not in"}.get(op, op)
        return Constraint(column, op, values)
    if kind == "quoted":
        return Constraint(column, op, (_unquote(tok),))
    if op in _SET_OPS:
        return Constraint(column, op, (tok,))
    try:
        number = float(tok)
    except ValueError:
        if op in ("==", "!="):
            return Constraint(column, op, (tok,))
        raise ParamError("constraints", f": '{column} {op} {tok}' needs a number; text values are "
                         "compared with ==, != or in {...}") from None
    if not math.isfinite(number):
        raise ParamError("constraints", f": '{column} {op} {tok}' needs a finite number")
    return Constraint(column, op, number)


def parse_constraints(spec) -> tuple[Constraint, ...]:
    """Parse ``--require`` text (or a sequence of texts / :class:`Constraint`) into constraints.

    Raises
    ------
    UsageError
        Empty text, a malformed item, an unknown comparison, a text value compared with
        ``<``/``>``, or a non-finite number.

    Examples
    --------
    >>> [str(c) for c in parse_constraints("cost_usd<=500, provider in {AWS, Azure}")]
    ['cost_usd<=500', 'provider in {AWS, Azure}']
    """
    if spec is None:
        return ()
    if isinstance(spec, Constraint):
        return (spec,)
    if isinstance(spec, str):
        if not spec.strip():
            raise ParamError("constraints", "is empty; write e.g. 'time_to_train_min<=120'")
        tokens, items, cur = _tokens(spec), [], []
        for kind, tok in tokens:
            if kind == "comma":
                items.append(cur)
                cur = []
            else:
                cur.append((kind, tok))
        items.append(cur)
        return tuple(_parse_item(item, spec) for item in items)
    out = []
    for item in spec:
        out.extend(parse_constraints(item))
    return tuple(out)


def constraint_mask(df, constraint: Constraint):
    """Boolean mask (a Series of the frame's library) of the rows that meet ``constraint``.

    Raises
    ------
    SchemaError
        The column is not in the table.
    DataError
        A numeric limit on a text column, or a text set on a numeric one.
    """
    require_columns(df, [constraint.column], role="constraint")
    s = df[constraint.column]
    numeric = getattr(s.dtype, "kind", "O") in "iufb"
    if constraint.is_text:
        if numeric:
            raise DataError(f"constraint '{constraint}': column '{constraint.column}' is "
                            "numeric; compare it with a number")
        values = list(constraint.value)
        hit = s.astype("str").isin(values) & s.notna()
        keep = hit if constraint.op in ("in", "==") else (~hit & s.notna())
        return keep
    if not numeric:
        raise DataError(f"constraint '{constraint}': column '{constraint.column}' holds text "
                        f"(dtype {s.dtype}); compare text with ==, != or in {{...}}")
    v = s.astype("float64")
    x = constraint.value
    keep = {"<=": v <= x, "<": v < x, ">=": v >= x, ">": v > x, "==": v == x,
            "!=": v != x}[constraint.op]
    return definite(keep) & v.notna()


@dataclass(frozen=True)
class ConstraintCounts:
    """Rows each constraint leaves out on its own, and how many rows meet all of them.

    Mergeable across partitions with ``+``.
    """

    constraints: tuple
    failing: tuple  # rows failing each constraint on its own
    rows_in: int
    feasible: int

    def __add__(self, other):
        return ConstraintCounts(self.constraints,
                                tuple(a + b for a, b in zip(self.failing, other.failing)),
                                self.rows_in + other.rows_in, self.feasible + other.feasible)

    def notes(self) -> list[str]:
        if not self.constraints:
            return []
        parts = [f"{c} left out {n:,}" for c, n in zip(self.constraints, self.failing)]
        return [f"constraints: {self.rows_in - self.feasible:,} of {self.rows_in:,} rows left "
                f"out ({'; '.join(parts)}), {self.feasible:,} remain"]

    def as_dict(self) -> list[dict]:
        return [{"constraint": str(c), "rows_left_out": int(n)}
                for c, n in zip(self.constraints, self.failing)]


def infeasible_message(counts: ConstraintCounts) -> str:
    """The message of an empty feasible set, naming the tightest constraint first."""
    order = np.argsort(-np.asarray(counts.failing), kind="stable")
    shown = [f"{counts.constraints[i]} alone leaves {counts.rows_in - counts.failing[i]:,}"
             for i in order]
    tightest = counts.constraints[int(order[0])]
    return (f"no row meets every constraint: the tightest is {tightest} "
            f"({'; '.join(shown)} of {counts.rows_in:,} rows); relax it")

