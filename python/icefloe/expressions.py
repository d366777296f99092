"""Row filters: build them with PyIceberg's names, or parse them from text.

Every builder returns an :class:`Expression` (the native class), which combines with
``&``, ``|`` and ``~``::

    from icefloe.expressions import EqualTo, GreaterThanOrEqual, In, parse

    f = GreaterThanOrEqual("ts", "2024-01-01T00:00:00") & In("category", ["a", "b"])
    f == parse("ts >= '2024-01-01T00:00:00' and category in ('a', 'b')")
    f.bind(table_metadata.schema())      # checks columns and values, raises icefloe.errors

Python values map to Iceberg values: ``int`` is a long, ``float`` a double, ``str`` a
string, ``bool`` a boolean, ``decimal.Decimal`` a decimal of the same scale,
``datetime.date`` a date, ``datetime.datetime`` a timestamp (a naive one as written, an
aware one converted to UTC), ``datetime.time`` a time, ``uuid.UUID`` a uuid and ``bytes``
a binary value. Binding converts them to the column's type with Java Iceberg's rules
(a long fits an int column; a string is read as a date, timestamp, uuid or decimal).

The text syntax is described in ``docs/expressions.md``.
"""

from __future__ import annotations

import datetime as dt
import decimal
import numbers
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ._native import BoundExpression, Expression
from .errors import InvalidArgumentError

__all__ = [
    "AlwaysFalse",
    "AlwaysTrue",
    "And",
    "BoundExpression",
    "EqualTo",
    "Expression",
    "GreaterThan",
    "GreaterThanOrEqual",
    "In",
    "IsNaN",
    "IsNull",
    "LessThan",
    "LessThanOrEqual",
    "Not",
    "NotEqualTo",
    "NotIn",
    "NotNaN",
    "NotNull",
    "NotStartsWith",
    "Or",
    "Reference",
    "StartsWith",
    "parse",
    "to_filter",
]


@dataclass(frozen=True)
class Reference:
    """A column by its full dotted name (``Reference("location.lat")``)."""

    name: str


Term = str | Reference

_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_UTC = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_EPOCH_DATE = dt.date(1970, 1, 1)
_MICRO = dt.timedelta(microseconds=1)


def _name(term: Term) -> str:
    if isinstance(term, Reference):
        return term.name
    if isinstance(term, str):
        return term
    raise InvalidArgumentError(
        f"a column is given by its name or a Reference, not {type(term).__name__} {term!r}"
    )


def _value(value: Any) -> tuple[str, Any]:
    """The ``(kind, payload)`` pair the native constructor takes."""
    if isinstance(value, bool):
        return ("boolean", value)
    if isinstance(value, numbers.Integral):
        return ("long", int(value))
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            raise InvalidArgumentError(f"{value!r} is not a decimal value")
        return ("decimal", str(value))
    if isinstance(value, (float, numbers.Real)):
        return ("double", float(value))
    if isinstance(value, str):
        return ("string", value)
    if isinstance(value, dt.datetime):
        if value.utcoffset() is not None:
            micros = (value - _EPOCH_UTC) // _MICRO
        else:
            micros = (value - _EPOCH) // _MICRO
        nanos = getattr(value, "nanosecond", 0)  # pandas.Timestamp
        if nanos:
            return ("timestamp_ns", micros * 1000 + nanos)
        return ("timestamp", micros)
    if isinstance(value, dt.date):
        return ("date", (value - _EPOCH_DATE).days)
    if isinstance(value, dt.time):
        if value.utcoffset() is not None:
            raise InvalidArgumentError(f"Iceberg times have no time zone: {value!r}")
        return (
            "time",
            ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond,
        )
    if isinstance(value, uuid.UUID):
        return ("uuid", value.bytes)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return ("binary", bytes(value))
    raise InvalidArgumentError(
        f"cannot use {type(value).__name__} value {value!r} in an expression "
        "(use int, float, str, bool, bytes, decimal.Decimal, datetime.date/time/datetime or uuid.UUID)"
    )


def _predicate(op: str, term: Term, values: Iterable[Any] = ()) -> Expression:
    return Expression.predicate(op, _name(term), [_value(v) for v in values])


# --- constants and combinations ----------------------------------------------------------


def AlwaysTrue() -> Expression:  # noqa: N802 (PyIceberg's name)
    """The expression every row matches."""
    return Expression.always_true()


def AlwaysFalse() -> Expression:  # noqa: N802
    """The expression no row matches."""
    return Expression.always_false()


def _expressions(what: str, items: tuple[Any, ...]) -> list[Expression]:
    for e in items:
        if not isinstance(e, Expression):
            raise InvalidArgumentError(f"{what} takes expressions, not {type(e).__name__} {e!r}")
    return list(items)


def And(left: Expression, right: Expression, *rest: Expression) -> Expression:  # noqa: N802
    """All of the expressions (simplified when one is always true or always false)."""
    items = _expressions("And", (left, right, *rest))
    out = items[0]
    for e in items[1:]:
        out = out & e
    return out


def Or(left: Expression, right: Expression, *rest: Expression) -> Expression:  # noqa: N802
    """Any of the expressions (simplified when one is always true or always false)."""
    items = _expressions("Or", (left, right, *rest))
    out = items[0]
    for e in items[1:]:
        out = out | e
    return out


def Not(child: Expression) -> Expression:  # noqa: N802
    """The rows ``child`` does not match."""
    return ~_expressions("Not", (child,))[0]


# --- predicates ----------------------------------------------------------------------------


def IsNull(term: Term) -> Expression:  # noqa: N802
    return _predicate("is-null", term)


def NotNull(term: Term) -> Expression:  # noqa: N802
    return _predicate("not-null", term)


def IsNaN(term: Term) -> Expression:  # noqa: N802
    return _predicate("is-nan", term)


def NotNaN(term: Term) -> Expression:  # noqa: N802
    return _predicate("not-nan", term)


def EqualTo(term: Term, value: Any) -> Expression:  # noqa: N802
    return _predicate("eq", term, [value])


def NotEqualTo(term: Term, value: Any) -> Expression:  # noqa: N802
    return _predicate("not-eq", term, [value])


def LessThan(term: Term, value: Any) -> Expression:  # noqa: N802
    return _predicate("lt", term, [value])


def LessThanOrEqual(term: Term, value: Any) -> Expression:  # noqa: N802
    return _predicate("lt-eq", term, [value])


def GreaterThan(term: Term, value: Any) -> Expression:  # noqa: N802
    return _predicate("gt", term, [value])


def GreaterThanOrEqual(term: Term, value: Any) -> Expression:  # noqa: N802
    return _predicate("gt-eq", term, [value])


def StartsWith(term: Term, prefix: str) -> Expression:  # noqa: N802
    return _predicate("starts-with", term, [prefix])


def NotStartsWith(term: Term, prefix: str) -> Expression:  # noqa: N802
    return _predicate("not-starts-with", term, [prefix])


def _values(what: str, values: Iterable[Any]) -> list[Any]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise InvalidArgumentError(
            f"{what} takes a collection of values, not {type(values).__name__} {values!r}"
        )
    return list(values)


def In(term: Term, values: Iterable[Any]) -> Expression:  # noqa: N802
    """The rows whose ``term`` is one of ``values`` (a list, tuple, set...)."""
    return _predicate("in", term, _values("In", values))


def NotIn(term: Term, values: Iterable[Any]) -> Expression:  # noqa: N802
    """The rows whose ``term`` is none of ``values``."""
    return _predicate("not-in", term, _values("NotIn", values))


# --- text ----------------------------------------------------------------------------------


def parse(text: str) -> Expression:
    """Parses a row filter such as ``"id > 5 and name like 'ab%'"`` (see docs/expressions.md).

    Raises :class:`icefloe.errors.InvalidArgumentError` naming what was expected and where.
    """
    if not isinstance(text, str):
        raise InvalidArgumentError(f"a filter to parse is a str, not {type(text).__name__}")
    return Expression.parse(text)


def to_filter(row_filter: str | Expression | bool | None) -> Expression:
    """A row filter given as text, an :class:`Expression`, a bool or ``None`` (every row).

    For functions that take a ``row_filter`` argument.
    """
    if row_filter is None or row_filter is True:
        return Expression.always_true()
    if row_filter is False:
        return Expression.always_false()
    if isinstance(row_filter, Expression):
        return row_filter
    if isinstance(row_filter, str):
        return Expression.parse(row_filter)
    raise InvalidArgumentError(
        f"a row filter is a str, an icefloe Expression or None, not {type(row_filter).__name__} {row_filter!r}"
    )
