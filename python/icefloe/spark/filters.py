"""Spark's pushed filters as icefloe row filters, and their exact evaluation on Arrow.

Spark 4.1 hands a Python data source the conjuncts of a query's ``WHERE`` that compare one
column with literals (``pyspark.sql.datasource.EqualTo``, ``In``, ``IsNull``, ... and
``Not`` of one of them); whatever ``pushFilters`` does not return, Spark will not check
again. So a filter is taken over only when both hold:

1. its icefloe translation keeps every row Spark's filter keeps (so planning, which prunes
   files by partition values and column metrics, never drops a row Spark wants). Iceberg
   and Spark agree on the order of integers, decimals, dates, timestamps, strings and
   binary, so comparisons of those translate directly. They do not agree on floats
   (Java's ``Float.compare`` puts -0.0 below 0.0; Spark has them equal) or on uuids
   (Spark compares the strings; Iceberg the values, and Java's metrics evaluation, which
   icefloe's planning reproduces, compares uuid bounds as signed longs so that it prunes
   files holding the value: apache/iceberg#14216), so only null checks are translated
   for those. Negations are
   translated so that a null column value may pass (``Not(EqualNullSafe)``), never the
   other way round;
2. :func:`spark_mask` evaluates it on the rows read exactly as Spark would (SQL's
   three-valued logic: a comparison with null is unknown, ``NOT unknown`` is unknown, only
   ``true`` keeps a row). The reader's residual has Iceberg's semantics, which differ for
   nulls in partition values, so the source applies the pushed filters itself.

Null checks on a struct, list or map column are taken over too (Java's ``Binder`` binds
them, and a struct's nullness is its own, not its children's). Everything else
(``StringEndsWith``, ``StringContains``, other filters on float columns or nested types,
values that do not convert) is returned to Spark untouched.
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from .. import _native
from .. import expressions as E
from ..errors import IcefloeError

__all__ = ["translate", "spark_mask"]

# types whose order Iceberg and Spark share (Spark's type of the column: see types.py)
_ORDERED = {"boolean", "int", "long", "date", "timestamp", "timestamptz", "string", "binary"}


def _spark_filters():
    from pyspark.sql import datasource as D

    return D


def _column(schema: Any, attribute: tuple[str, ...]) -> tuple[str, str] | None:
    """The dotted name and Iceberg type string of a column (``"nested"`` for a struct, list
    or map), or ``None`` for a column that is not there."""
    if not attribute or any("." in part for part in attribute):
        return None  # a dotted name would be ambiguous for the expression's reference
    name = ".".join(attribute)
    field = schema.find_field(name)
    if field is None:
        return None
    type_json = field.type_json()
    if type_json.startswith("{"):
        # a struct, list or map takes null checks only (as Java's binding)
        return name, "nested"
    return name, type_json.strip('"')


def _kind(iceberg_type: str) -> str:
    parsed = _native.primitive_type_parameters(iceberg_type)
    if iceberg_type in _ORDERED or (parsed is not None and parsed[0] in ("decimal", "fixed")):
        return "ordered"
    return "nulls"


def _plain(value: Any) -> bool:
    """A literal the expression builders take as the column's value."""
    return isinstance(value, (bool, int, str, bytes, decimal.Decimal, dt.date)) and value is not None


def translate(spark_filter: Any, schema: Any) -> E.Expression | None:
    """The icefloe expression for a Spark filter over ``schema`` (an icefloe Schema), or
    ``None`` when the filter is not taken over (see the module documentation)."""
    try:
        expression = _translate(spark_filter, schema, False)
        if expression is None:
            return None
        expression.bind(schema)  # a value that does not convert: leave the filter to Spark
        return expression
    except (IcefloeError, TypeError, ValueError, OverflowError):
        return None


def _translate(f: Any, schema: Any, negated: bool) -> E.Expression | None:
    D = _spark_filters()
    if isinstance(f, D.Not):
        return _translate(f.child, schema, not negated)
    column = _column(schema, getattr(f, "attribute", ()))
    if column is None:
        return None
    name, iceberg_type = column
    kind = _kind(iceberg_type)

    if isinstance(f, D.IsNull):
        return E.NotNull(name) if negated else E.IsNull(name)
    if isinstance(f, D.IsNotNull):
        return E.IsNull(name) if negated else E.NotNull(name)
    if kind == "nulls" or iceberg_type == "nested":
        return None

    if isinstance(f, D.EqualNullSafe):
        if f.value is None:
            return E.NotNull(name) if negated else E.IsNull(name)
        if not _value_ok(f.value, kind):
            return None
        # NOT (a <=> v) keeps the rows where a is null
        return E.Or(E.IsNull(name), E.NotEqualTo(name, f.value)) if negated else E.EqualTo(name, f.value)
    if isinstance(f, D.EqualTo):
        if not _value_ok(f.value, kind):
            return None
        return E.NotEqualTo(name, f.value) if negated else E.EqualTo(name, f.value)
    if isinstance(f, D.In):
        if not f.value:
            return None
        values = [v for v in f.value if v is not None]
        if not all(_value_ok(v, kind) for v in values):
            return None
        if negated:
            # NOT (a IN (.., NULL)) is never true
            return (
                E.AlwaysFalse()
                if len(values) != len(f.value)
                else (E.NotIn(name, values) if values else E.NotNull(name))
            )
        return E.In(name, values) if values else E.AlwaysFalse()
    if isinstance(f, D.StringStartsWith):
        if iceberg_type != "string" or not isinstance(f.value, str):
            return None
        return E.NotStartsWith(name, f.value) if negated else E.StartsWith(name, f.value)
    comparisons = {
        D.GreaterThan: (E.GreaterThan, E.LessThanOrEqual),
        D.GreaterThanOrEqual: (E.GreaterThanOrEqual, E.LessThan),
        D.LessThan: (E.LessThan, E.GreaterThanOrEqual),
        D.LessThanOrEqual: (E.LessThanOrEqual, E.GreaterThan),
    }
    for cls, (positive, negative) in comparisons.items():
        if type(f) is cls:
            if not _plain(f.value):
                return None
            return (negative if negated else positive)(name, f.value)
    return None


def _value_ok(value: Any, kind: str) -> bool:
    return kind == "ordered" and _plain(value)


# ---------------------------------------------------------------------------------------------
# Spark's semantics on Arrow
# ---------------------------------------------------------------------------------------------


def _column_array(batch: pa.RecordBatch, attribute: tuple[str, ...]) -> pa.Array:
    """The column at ``attribute``; a nested field is null where a parent struct is."""
    arr = batch.column(batch.schema.get_field_index(attribute[0]))
    for part in attribute[1:]:
        valid = arr.is_valid()
        arr = pc.struct_field(arr, [arr.type.get_field_index(part)])
        if not pc.all(valid).as_py():
            arr = pc.if_else(valid, arr, pa.scalar(None, arr.type))
    return arr


def _scalar(value: Any, arrow_type: pa.DataType) -> pa.Scalar:
    return pa.scalar(value, type=arrow_type)


_NULL = pa.scalar(None, pa.bool_())


def _leaf(f: Any, batch: pa.RecordBatch) -> pa.Array:
    D = _spark_filters()
    col = _column_array(batch, f.attribute)
    if isinstance(f, D.IsNull):
        return pc.is_null(col)
    if isinstance(f, D.IsNotNull):
        return pc.is_valid(col)
    if isinstance(f, D.EqualNullSafe):
        if f.value is None:
            return pc.is_null(col)
        return pc.fill_null(pc.equal(col, _scalar(f.value, col.type)), False)
    if isinstance(f, D.EqualTo):
        return pc.equal(col, _scalar(f.value, col.type))
    if isinstance(f, D.In):
        values = [v for v in f.value if v is not None]
        hit = pc.is_in(col, value_set=pa.array(values, type=col.type))
        if len(values) != len(f.value):
            hit = pc.if_else(hit, True, _NULL)  # no match against a list holding NULL is unknown
        return pc.if_else(pc.is_null(col), _NULL, hit)
    if isinstance(f, D.StringStartsWith):
        return pc.starts_with(col, pattern=f.value)
    ops = {
        D.GreaterThan: pc.greater,
        D.GreaterThanOrEqual: pc.greater_equal,
        D.LessThan: pc.less,
        D.LessThanOrEqual: pc.less_equal,
    }
    return ops[type(f)](col, _scalar(f.value, col.type))


def _truth(f: Any, batch: pa.RecordBatch) -> pa.Array:
    D = _spark_filters()
    if isinstance(f, D.Not):
        return pc.invert(_truth(f.child, batch))
    return _leaf(f, batch)


def spark_mask(filters: list, batch: pa.RecordBatch) -> pa.Array | None:
    """The rows of ``batch`` (in Spark's Arrow types) for which every filter is true, as
    Spark evaluates them; ``None`` when there are no filters."""
    mask = None
    for f in filters:
        truth = _truth(f, batch)
        mask = truth if mask is None else pc.and_kleene(mask, truth)
    return None if mask is None else pc.fill_null(mask, False)
