"""Declared parameter constraints and the one message every rejected parameter gets.

After scikit-learn's ``utils._param_validation``: each parameter's allowed values are data
(:class:`Interval`, :class:`Options`, ``bool``, ``str``, ``None``), and one function checks a
value against them and raises :class:`ParamError` with one template::

    top must be an integer in [1, 2147483647]; got 0

The message speaks the API's own terms (``top``, ``rank_depth``); the command line shows the
same message with its flag names (``--top``, ``--rank-depth``) through
:meth:`ParamError.for_flag`, so each check is written once for both.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

from .errors import UsageError

__all__ = ["Interval", "Options", "ParamError", "check_param", "INT32_MAX", "INT64_MAX",
           "SEED_MAX"]

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
#: Seeds are handed to scikit-learn and NumPy's legacy RandomState, which take 32-bit seeds.
SEED_MAX = 2**32 - 1


class ParamError(UsageError):
    """A parameter has a value outside its declared constraints (exit code 2).

    Attributes
    ----------
    param : str
        The parameter's API name (``"rank_depth"``).
    detail : str
        The message after the parameter's name (``"must be ...; got ..."``).
    """

    def __init__(self, param: str, detail: str):
        self.param = param
        self.detail = detail
        super().__init__(self.for_flag(param))

    def for_flag(self, flag: str) -> str:
        """The same message with the command line's name for the parameter."""
        sep = "" if self.detail.startswith(":") else " "
        return f"{flag}{sep}{self.detail}"


@dataclass(frozen=True)
class Interval:
    """Numbers of one kind in a closed range; ``None`` leaves a side open.

    ``kind`` is ``int`` (integers only, ``bool`` refused) or ``float`` (any real number;
    NaN and infinities refused unless a side is open and ``finite=False``).
    """

    kind: type
    low: float | None = None
    high: float | None = None
    finite: bool = True

    def accepts(self, value) -> bool:
        if isinstance(value, bool):
            return False
        if self.kind is int:
            if not isinstance(value, numbers.Integral):
                return False
        elif not isinstance(value, numbers.Real):
            return False
        elif self.finite and not math.isfinite(value):
            return False
        return (self.low is None or value >= self.low) and (self.high is None or
                                                            value <= self.high)

    def describe(self) -> str:
        what = "an integer" if self.kind is int else "a finite number" if self.finite else \
            "a number"
        if self.low is None and self.high is None:
            return what
        if self.high is None:
            return f"{what} >= {_num(self.low)}"
        if self.low is None:
            return f"{what} <= {_num(self.high)}"
        return f"{what} in [{_num(self.low)}, {_num(self.high)}]"


@dataclass(frozen=True)
class Options:
    """One of a fixed set of values (compared with ``==``)."""

    values: tuple

    def accepts(self, value) -> bool:
        return any(value == v and type(value) is type(v) for v in self.values)

    def describe(self) -> str:
        return "one of " + ", ".join(repr(v) for v in self.values)


def _num(x) -> str:
    return f"{int(x)}" if float(x).is_integer() else f"{x:g}"


def _describe(constraint) -> str:
    if constraint is None:
        return "None"
    if constraint is bool:
        return "True or False"
    if constraint is str:
        return "a non-empty string"
    return constraint.describe()


def _accepts(constraint, value) -> bool:
    if constraint is None:
        return value is None
    if constraint is bool:
        return isinstance(value, bool)
    if constraint is str:
        return isinstance(value, str) and bool(value.strip())
    return constraint.accepts(value)


def check_param(name: str, value, *constraints):
    """Return ``value`` when one of ``constraints`` accepts it; raise :class:`ParamError`.

    Examples
    --------
    >>> check_param("top", 5, Interval(int, 1, INT32_MAX))
    5
    >>> check_param("norm", "l2", Options(("vector", "minmax")))
    Traceback (most recent call last):
    ...
    gpurank.engine.params.ParamError: norm must be one of 'vector', 'minmax'; got 'l2'
    """
    if any(_accepts(c, value) for c in constraints):
        return value
    allowed = " or ".join(_describe(c) for c in constraints)
    raise ParamError(name, f"must be {allowed}; got {_show(value)}")


def _show(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
