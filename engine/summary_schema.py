"""The schema of ``summary.json``, declared as data, and the check that a file meets it.

``gpurank report`` rebuilds a report from a summary it did not just compute: the file may
have been edited, truncated by hand or written by another program. Every field the report
reads is declared here with its JSON type and range (after the manner of
:mod:`gpurank.engine.params`), and :func:`check_summary` checks the whole file before any
of it is used, so a wrong field is one message naming it::

    summary file 'out/summary.json': field 'clusters.profiles[0].size' must be an integer
    >= 0; it holds 'abc'

Fields a summary may lack (older versions wrote fewer) may be absent; a field that is there
must have its declared type. Fields the report does not read are free.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from .errors import DataError
from .methods import METHOD_NAMES
from .params import SEED_MAX, Interval

__all__ = ["SUMMARY_SCHEMA", "check_summary", "check_against", "SchemaMismatch", "Range", "Int",
           "Num", "Str", "Bool", "Maybe", "Either", "List", "Map", "Obj", "OneOf", "Scalar"]


class _Bad(Exception):
    """A value outside its declared type: where it is, what was expected."""

    def __init__(self, where: str, expected: str, value):
        super().__init__(where)
        self.where, self.expected, self.value = where, expected, value


#: What a declared type's ``check`` raises (for types declared in other modules: the model
#: file's schema).
SchemaMismatch = _Bad


@dataclass(frozen=True)
class Range:
    """A number the declared :class:`~gpurank.engine.params.Interval` accepts (the type the
    parameter checks use, with the same descriptions)."""

    interval: Interval

    def check(self, v, where):
        try:
            ok = self.interval.accepts(v)
        except OverflowError:  # an integer beyond float64
            ok = False
        if not ok:
            raise _Bad(where, self.describe(), v)

    def describe(self):
        return self.interval.describe()


def Int(low=None, high=None) -> Range:
    """An integer in ``[low, high]`` (a side ``None`` is open)."""
    return Range(Interval(int, low, high))


def Num(low=None, high=None) -> Range:
    """A finite number in ``[low, high]``."""
    return Range(Interval(float, low, high))


@dataclass(frozen=True)
class Str:
    """A string; ``pattern`` (a regular expression) must match the whole of it if given."""

    pattern: str | None = None
    what: str = "a string"

    def check(self, v, where):
        if not isinstance(v, str) or (self.pattern is not None
                                      and not re.fullmatch(self.pattern, v)):
            raise _Bad(where, self.describe(), v)

    def describe(self):
        return self.what


@dataclass(frozen=True)
class Bool:
    """A JSON true or false (not a number)."""

    def check(self, v, where):
        if not isinstance(v, bool):
            raise _Bad(where, self.describe(), v)

    def describe(self):
        return "true or false"


@dataclass(frozen=True)
class Scalar:
    """One value of a table's row: a string, a number (null for a missing one), a boolean."""

    def check(self, v, where):
        if (v is not None and not isinstance(v, (str, int, float, bool))) or (
                isinstance(v, float) and not math.isfinite(v)):
            raise _Bad(where, self.describe(), v)

    def describe(self):
        return "a string, a finite number, a boolean or null"


@dataclass(frozen=True)
class OneOf:
    """Exactly one of ``values`` (compared with their JSON types)."""

    values: tuple

    def check(self, v, where):
        if not any(v == x and type(v) is type(x) for x in self.values):
            raise _Bad(where, self.describe(), v)

    def describe(self):
        return "one of " + ", ".join(repr(x) for x in self.values)


@dataclass(frozen=True)
class Maybe:
    """``null`` or ``inner``."""

    inner: object

    def check(self, v, where):
        if v is None:
            return
        try:
            self.inner.check(v, where)
        except _Bad as bad:
            if bad.where != where:  # a field inside the value is wrong: name that one
                raise
            raise _Bad(where, self.describe(), v) from None

    def describe(self):
        return f"{self.inner.describe()} or null"


@dataclass(frozen=True)
class Either:
    """Any of ``options``; the message names all of them."""

    options: tuple

    def check(self, v, where):
        for option in self.options:
            try:
                option.check(v, where)
                return
            except _Bad:
                continue
        raise _Bad(where, self.describe(), v)

    def describe(self):
        return " or ".join(o.describe() for o in self.options)


@dataclass(frozen=True)
class List:
    """A JSON array whose items all meet ``item``."""

    item: object

    def check(self, v, where):
        if not isinstance(v, list):
            raise _Bad(where, self.describe(), v)
        for i, x in enumerate(v):
            self.item.check(x, f"{where}[{i}]")

    def describe(self):
        return "a list"


@dataclass(frozen=True)
class Map:
    """A JSON object of any keys (each matching ``keys``, a regular expression) whose
    values all meet ``value``."""

    value: object
    keys: str | None = None
    key_what: str = ""

    def describe(self):
        return "an object"

    def check(self, v, where):
        if not isinstance(v, dict):
            raise _Bad(where, self.describe(), v)
        for k, x in v.items():
            if self.keys is not None and not re.fullmatch(self.keys, k):
                raise _Bad(f"{where} key", self.key_what, k)
            self.value.check(x, f"{where}.{k}")


@dataclass(frozen=True)
class Obj:
    """A JSON object with declared ``fields``; ``required`` ones must be present; other
    keys are free (with ``extra``, their values must meet it)."""

    fields: dict
    required: tuple = ()
    extra: object = None

    def describe(self):
        return "an object"

    def check(self, v, where):
        if not isinstance(v, dict):
            raise _Bad(where, self.describe(), v)
        for name in self.required:
            if name not in v:
                raise _Bad(_join(where, name), "present", _ABSENT)
        for k, x in v.items():
            spec = self.fields.get(k, self.extra)
            if spec is not None:
                spec.check(x, _join(where, k))


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


_ABSENT = object()

_SHARE = Num(0.0, 1.0)
_ROW = Map(Scalar())
_WEIGHTS = Map(Maybe(Num(0.0, 1.0)))
_INTEGER_KEYS = {"keys": r"-?[0-9]{1,9}", "key_what": "an integer (k)"}

#: What ``summary.json`` holds (:func:`gpurank.engine.summary.summary_dict`), as the report
#: reads it.
SUMMARY_SCHEMA = Obj({
    "rows": Int(0),
    "run_id": Maybe(Str(r"[0-9a-f]{1,64}", "a hexadecimal run id")),
    "backend": Str(),
    "fallbacks": List(Str()),
    "criteria": List(Obj({"column": Str(), "sense": OneOf(("min", "max")),
                          "weight": Num(0.0)}, required=("column", "sense", "weight"))),
    "settings": Obj({
        "target": Maybe(Str()),
        "clusters": Maybe(Either((Int(1), OneOf(("auto",))))),
        "top": Int(1),
        "sample_rows": Int(1),
        "seed": Int(0, SEED_MAX),
        "norm": Maybe(Str()),
        "method": OneOf(METHOD_NAMES),
        "vikor_v": Maybe(Num(0.0, 1.0)),
        "drop_invalid": Bool(),
        "robust": Bool(),
        "samples": Maybe(Int(1)),
        "constraints": List(Str()),
    }, extra=Maybe(Either((Scalar(), List(Scalar()))))),
    "preparation": Maybe(Obj({
        "rows_in": Int(0),
        "rows_analyzed": Int(0),
        "derived": List(Str()),
        "skipped": Map(Str()),
        "replaced_columns": List(Str()),
        "constraints": List(Obj({"constraint": Str(), "rows_left_out": Int(0)})),
        "invalid_rows_dropped": Map(Int(0)),
    })),
    "importance": Maybe(Obj({
        "target": Str(),
        "rows_used": Int(0),
        "sampled": Bool(),
        "holdout_r2": Maybe(Num()),
        "features": List(Obj({"feature": Str(), "impurity": Maybe(Num(0.0, 1.0)),
                              "permutation": Maybe(Num()),
                              "permutation_std": Maybe(Num(0.0))}, required=("feature",))),
    })),
    "clusters": Maybe(Obj({
        "k": Int(1),
        "features": List(Str()),
        "silhouette": Map(Maybe(Num(-1.0, 1.0)), **_INTEGER_KEYS),
        "profiles": List(Obj({"cluster": Int(0), "size": Int(0), "share": Maybe(_SHARE),
                              "label": Str(), "accelerators": Str(),
                              "n_accelerators_range": Str()},
                             required=("cluster",), extra=Scalar())),
    })),
    "pareto_front_size": Int(0),
    "ideal": Map(Maybe(Num())),
    "anti_ideal": Map(Maybe(Num())),
    "top": List(_ROW),
    "timings_s": Map(Maybe(Num(0.0))),
    "notes": List(Str()),
    "robust": Maybe(Obj({
        "method": Str(),
        "samples": Int(1),
        "k": Int(1),
        "seed": Int(0, SEED_MAX),
        "weights": Str(),
        "weight_ranges": Map(List(Num(0.0, 1.0))),
        "candidates": Int(0),
        "pruned": Int(0),
        "top": List(Obj({
            "p_topk": Maybe(_SHARE), "p_topk_se": Maybe(_SHARE),
            "p_top1": Maybe(_SHARE), "p_top1_se": Maybe(_SHARE),
            "expected_rank": Maybe(Num(1.0)), "expected_rank_se": Maybe(Num(0.0)),
            "central_weights": Maybe(_WEIGHTS),
        }, required=("p_topk", "p_topk_se", "p_top1", "p_top1_se", "expected_rank"),
            extra=Scalar())),
    }, required=("samples", "k", "candidates", "pruned"))),
})


def check_summary(summary, *, path) -> None:
    """Check a parsed ``summary.json`` against :data:`SUMMARY_SCHEMA`, field by field.

    Parameters
    ----------
    summary : object
        What ``json.loads`` returned for the file.
    path : path
        The file, for the message.

    Raises
    ------
    DataError
        Naming the first field that is missing or has the wrong type or range, what it must
        be, and what it holds.
    """
    check_against(SUMMARY_SCHEMA, summary, what=f"summary file '{path}'")


def check_against(schema, value, *, what: str) -> None:
    """Check a parsed JSON file against a declared ``schema`` (an :class:`Obj`).

    Raises
    ------
    DataError
        ``{what}: field 'a.b[0].c' must be ...; it holds ...`` for the first field that is
        missing or has the wrong type or range.
    """
    if not isinstance(value, dict):
        raise DataError(f"{what} does not hold a JSON object; it holds {_kind(value)}")
    try:
        schema.check(value, "")
    except _Bad as bad:
        if bad.value is _ABSENT:
            raise DataError(f"{what}: field '{bad.where}' is missing") from None
        raise DataError(f"{what}: field '{bad.where}' must be {bad.expected}; "
                        f"it holds {_shown(bad.value)}") from None


def _kind(v) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
            type(None): "null"}.get(type(v), "a number")


def _shown(v) -> str:
    if isinstance(v, (dict, list)):
        return f"{_kind(v)} of {len(v)} item{'s' if len(v) != 1 else ''}"
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."
