"""Declared parameter constraints and the one message every rejected parameter gets.

After scikit-learn's ``utils._param_validation``: each parameter's allowed values are data
(:class:`Interval`, :class:`Options`, :class:`InstanceOf`, :class:`Items`, :class:`Pairs`,
:class:`Mapping`, ``bool``, ``str``, ``None``), declared next to the parameter, and one
function checks a value against them and raises :class:`ParamError` with one template::

    top must be an integer in [1, 2147483647]; got 0

The message speaks the API's own terms (``top``, ``rank_depth``); the command line shows the
same message with its flag names (``--top``, ``--rank-depth``) through
:meth:`ParamError.for_flag`, so each check is written once for both.

Where the constraints are declared:

- a frozen dataclass holds them in its class attribute ``parameter_constraints`` and checks
  them in ``__post_init__`` with :func:`check_fields`;
- a function is decorated with :func:`validate_params`, which keeps them on the function as
  ``parameter_constraints`` and checks the arguments on every call.

``tests/test_params.py`` walks every declared constraint of the engine, builds a value it
refuses, and checks the message in both spellings.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
from dataclasses import dataclass

from .errors import UsageError

__all__ = ["Interval", "Options", "InstanceOf", "Items", "Pairs", "Mapping", "ParamError",
           "check_param", "check_fields", "validate_params", "allowed", "describe", "shown",
           "refused_value", "INT32_MAX", "INT64_MAX", "SEED_MAX", "POSITIVE", "NON_NEGATIVE",
           "FRACTION", "FRACTION_OPEN", "TEXT"]

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
        The message after the parameter's name (``"must be ...; got ..."``). Other
        parameters it names are written ``{name}`` or ``{name=value}`` and listed in
        ``mentions``; the API spells them as written, the command line as its flags.
    mentions : tuple of str
        The API spellings of the other parameters the detail names (``"check_size=False"``).
    """

    def __init__(self, param: str, detail: str, *, mentions: tuple = ()):
        self.param = param
        self.detail = detail
        self.mentions = tuple(mentions)
        super().__init__(self.for_flag(lambda name: name))

    def for_flag(self, flag) -> str:
        """The same message in the command line's words: ``flag`` is the parameter's flag, or
        a function from an API spelling (``"top"``, ``"check_size=False"``) to its flag, which
        also translates the other parameters the message names."""
        spell = flag if callable(flag) else (lambda name: flag if name == self.param else name)
        detail = self.detail
        for m in self.mentions:
            detail = detail.replace("{" + m + "}", spell(m))
        sep = "" if detail.startswith((":", "=")) else " "
        return f"{spell(self.param)}{sep}{detail}"


_CLOSED = ("both", "left", "right", "neither")


@dataclass(frozen=True)
class Interval:
    """Numbers of one kind in a range; ``None`` leaves a side unbounded.

    ``kind`` is ``int`` (integers only, ``bool`` refused) or ``float`` (any real number;
    NaN and infinities refused unless ``finite=False``). ``closed`` says which ends belong
    to the range: ``"both"`` (the default), ``"left"``, ``"right"`` or ``"neither"``.
    """

    kind: type
    low: float | None = None
    high: float | None = None
    closed: str = "both"
    finite: bool = True

    def __post_init__(self):
        if self.closed not in _CLOSED:
            raise ValueError(f"closed must be one of {_CLOSED}; got {self.closed!r}")

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
        elif math.isnan(value):
            return False
        low_in = self.closed in ("both", "left")
        high_in = self.closed in ("both", "right")
        if self.low is not None and not (value >= self.low if low_in else value > self.low):
            return False
        return self.high is None or (value <= self.high if high_in else value < self.high)

    def describe(self) -> str:
        what = "an integer" if self.kind is int else "a finite number" if self.finite else \
            "a number"
        low_in = self.closed in ("both", "left")
        high_in = self.closed in ("both", "right")
        if self.low is None and self.high is None:
            return what
        if self.high is None:
            return f"{what} {'>=' if low_in else '>'} {_num(self.low)}"
        if self.low is None:
            return f"{what} {'<=' if high_in else '<'} {_num(self.high)}"
        return (f"{what} in {'[' if low_in else '('}{_num(self.low)}, {_num(self.high)}"
                f"{']' if high_in else ')'}")

    def refused(self) -> list:
        """Values this interval refuses (for tests that walk the declared constraints)."""
        out = ["text"]
        if self.low is not None:
            out.append(self.low if self.closed in ("right", "neither") else self.low - 1)
        if self.high is not None:
            out.append(self.high if self.closed in ("left", "neither") else self.high + 1)
        if self.kind is int:
            out.append(1.5)
        elif self.finite:
            out.append(math.nan)
        return out


@dataclass(frozen=True)
class Options:
    """One of a fixed set of values (compared with ``==``, of the same type)."""

    values: tuple

    def accepts(self, value) -> bool:
        return any(value == v and type(value) is type(v) for v in self.values)

    def describe(self) -> str:
        return "one of " + ", ".join(repr(v) for v in self.values)

    def refused(self) -> list:
        return ["no such option", -1]


@dataclass(frozen=True)
class InstanceOf:
    """An instance of ``cls``; ``name`` is how the message calls it (the class's name by
    default)."""

    cls: type
    name: str = ""

    def accepts(self, value) -> bool:
        return isinstance(value, self.cls)

    def describe(self) -> str:
        name = self.name or self.cls.__name__
        return name if name.startswith(("a ", "an ")) else f"a {name}"

    def refused(self) -> list:
        return ["text", 1.5]


@dataclass(frozen=True)
class Items:
    """A list, tuple, range or 1-D array whose items each satisfy ``of`` (one constraint),
    with between ``min_len`` and ``max_len`` items (``None``: no upper bound)."""

    of: object
    min_len: int = 0
    max_len: int | None = None

    def accepts(self, value) -> bool:
        if not (isinstance(value, (list, tuple, range)) or getattr(value, "ndim", 0) == 1):
            return False
        if len(value) < self.min_len or (self.max_len is not None and len(value) > self.max_len):
            return False
        return all(_accepts(self.of, v) for v in value)

    def describe(self) -> str:
        if self.max_len is not None and self.max_len == self.min_len:
            size = f"{self.min_len} "
        elif self.min_len == 1 and self.max_len is None:
            size = "a non-empty "
        elif self.min_len or self.max_len is not None:
            top = "" if self.max_len is None else f" to {self.max_len}"
            size = f"{self.min_len}{top} "
        else:
            size = "a "
        noun = "values" if size[0].isdigit() else "sequence of values"
        return f"{size}{noun}, each {_describe(self.of)}"

    def refused(self) -> list:
        bad = [v for v in _refused(self.of) if not _accepts(self.of, v)][:1]
        out = ["text", (), list(bad) * max(self.min_len, 1)]
        if self.max_len is not None:
            ok = [v for v in _examples(self.of)][:1]
            out.append(ok * (self.max_len + 1))
        return out


@dataclass(frozen=True)
class Pairs:
    """A sequence of pairs of finite numbers > 0, named ``first`` and ``second`` in the
    message (a curve such as ``(global_batch, epochs)``); ``min_len`` pairs at least."""

    first: str
    second: str
    min_len: int = 0

    def accepts(self, value) -> bool:
        try:
            pts = [(float(a), float(b)) for a, b in value]
        except (TypeError, ValueError):
            return False
        if isinstance(value, (str, bytes)) or len(pts) < self.min_len:
            return False
        return all(a > 0 and b > 0 and math.isfinite(a + b) for a, b in pts)

    def describe(self) -> str:
        size = "a non-empty " if self.min_len else "a "
        return (f"{size}sequence of ({self.first} > 0, {self.second} > 0) pairs of finite "
                "numbers")

    def refused(self) -> list:
        return ["text", [(0, 1)], [(1, math.inf)]]


@dataclass(frozen=True)
class Mapping:
    """A dict from keys satisfying ``keys`` to values satisfying ``values`` (constraints)."""

    keys: object = str
    values: object = None

    def accepts(self, value) -> bool:
        return isinstance(value, dict) and all(
            _accepts(self.keys, k) and (self.values is None or _accepts(self.values, v))
            for k, v in value.items())

    def describe(self) -> str:
        if self.values is None:
            return "a dict"
        return f"a dict from {_plain(self.keys)} to {_describe(self.values)}"

    def refused(self) -> list:
        bad = [v for v in _refused(self.values) if not _accepts(self.values, v)][:1] \
            if self.values is not None else []
        return ["text"] + [{"key": b} for b in bad]


#: Constraints many parameters share.
POSITIVE = Interval(float, 0, None, closed="neither")
NON_NEGATIVE = Interval(float, 0, None)
FRACTION = Interval(float, 0, 1)
FRACTION_OPEN = Interval(float, 0, 1, closed="right")
TEXT = InstanceOf(str, "a string")


def _plain(constraint) -> str:
    return "text" if constraint is str else _describe(constraint)


def _num(x) -> str:
    return f"{int(x)}" if float(x).is_integer() else f"{x:g}"


def describe(constraint) -> str:
    """How a message names what ``constraint`` allows."""
    return _describe(constraint)


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


def _refused(constraint) -> list:
    if constraint is None:
        return [0]
    if constraint is bool:
        return [1, "yes"]
    if constraint is str:
        return ["", 1]
    return constraint.refused()


def _examples(constraint) -> list:
    """A value ``constraint`` accepts, where one is easy to build (for :meth:`Items.refused`)."""
    if isinstance(constraint, Interval):
        lo = constraint.low if constraint.low is not None else 0
        v = lo if constraint.closed in ("both", "left") else lo + 1
        return [constraint.kind(v)]
    if constraint is str:
        return ["x"]
    return []


def refused_value(*constraints):
    """A value that none of ``constraints`` accepts (for tests that walk the declarations);
    raises ``ValueError`` when none of the candidates is refused by all."""
    for c in constraints:
        for v in _refused(c):
            if not any(_accepts(d, v) for d in constraints):
                return v
    for v in (object(), "text", -1, math.nan):
        if not any(_accepts(d, v) for d in constraints):
            return v
    raise ValueError(f"no value is refused by all of {constraints!r}")


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
    raise ParamError(name, f"must be {allowed(*constraints)}; got {shown(value)}")


def allowed(*constraints) -> str:
    """What ``constraints`` allow together, as the message says it."""
    return " or ".join(_describe(c) for c in constraints)


def check_fields(obj, constraints: dict) -> None:
    """:func:`check_param` on every attribute of ``obj`` named in ``constraints`` (a dict
    from name to a tuple of constraints), in the dict's order."""
    for name, allowed_values in constraints.items():
        check_param(name, getattr(obj, name), *allowed_values)


def validate_params(constraints: dict):
    """Decorate a function whose arguments named in ``constraints`` are checked on every call
    (:func:`check_param`, in the dict's order) before its body runs; the constraints stay on
    the function as ``parameter_constraints``."""

    def decorate(func):
        sig = inspect.signature(func)
        unknown = set(constraints) - set(sig.parameters)
        if unknown:
            raise TypeError(f"{func.__name__} has no parameter {sorted(unknown)[0]!r}")

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            for name, allowed_values in constraints.items():
                check_param(name, bound.arguments[name], *allowed_values)
            return func(*args, **kwargs)

        wrapper.parameter_constraints = constraints
        return wrapper

    return decorate


def shown(value) -> str:
    """``repr`` of a rejected value, cut to one short line."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
