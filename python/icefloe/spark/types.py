"""Iceberg types as Spark sees them, and Arrow data moved between the two.

Spark has no uuid, fixed or time-without-date types, so Java Iceberg's Spark integration
(``TypeToSparkType``) reads a uuid as a string and fixed as binary; icefloe does the same,
so that ``spark.read.format("icefloe")`` and ``spark.table(...)`` on a Java Iceberg catalog
give the same schema. A timestamp with zone is Spark's ``TimestampType``, one without
zone ``TimestampNTZType``.

Readers yield batches in the Arrow types of the Iceberg schema (uuid as
``fixed_size_binary(16)``); :func:`to_spark_batch` turns them into the Arrow types Spark
expects for the Spark schema. Spark hands writers batches in its own Arrow types;
:func:`to_table_batch` turns uuid strings and fixed-length binary back into the table's
types (everything else is matched by ``icefloe.executor.write``).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .. import _native
from ..errors import InvalidArgumentError, UnsupportedError

__all__ = ["spark_schema", "spark_type", "check_write_schema", "to_spark_batch", "to_table_batch"]


def _parameters(t: Any, kind: str) -> list[int] | None:
    """The parameters of the type string ``t`` when it is a ``kind`` type (``decimal``:
    precision and scale, ``fixed``: length), parsed by the Rust core; else None."""
    parsed = _native.primitive_type_parameters(t) if isinstance(t, str) else None
    return parsed[1] if parsed is not None and parsed[0] == kind else None


def _types():
    # imported lazily: icefloe itself does not need pyspark
    from pyspark.sql import types as T

    return T


def spark_type(iceberg_type: Any, path: str = "") -> Any:
    """The Spark type of an Iceberg type given in its JSON form (a type string such as
    ``"long"`` or a ``struct``/``list``/``map`` object)."""
    T = _types()
    if isinstance(iceberg_type, dict):
        kind = iceberg_type.get("type")
        if kind == "struct":
            return T.StructType([_spark_field(f, path) for f in iceberg_type["fields"]])
        if kind == "list":
            element = spark_type(iceberg_type["element"], f"{path}.element")
            return T.ArrayType(element, containsNull=not iceberg_type.get("element-required", False))
        if kind == "map":
            key = spark_type(iceberg_type["key"], f"{path}.key")
            value = spark_type(iceberg_type["value"], f"{path}.value")
            return T.MapType(key, value, valueContainsNull=not iceberg_type.get("value-required", False))
        raise UnsupportedError(f"column '{path}': unknown nested type {kind!r}", field=path)
    t = str(iceberg_type)
    simple = {
        "boolean": T.BooleanType(),
        "int": T.IntegerType(),
        "long": T.LongType(),
        "float": T.FloatType(),
        "double": T.DoubleType(),
        "date": T.DateType(),
        "timestamptz": T.TimestampType(),
        "timestamp": T.TimestampNTZType(),
        "string": T.StringType(),
        "uuid": T.StringType(),
        "binary": T.BinaryType(),
        "unknown": T.NullType(),
    }
    if t in simple:
        return simple[t]
    decimal = _parameters(t, "decimal")
    if decimal is not None:
        return T.DecimalType(decimal[0], decimal[1])
    if _parameters(t, "fixed") is not None:
        return T.BinaryType()
    if t == "variant":
        return T.VariantType()
    # time, nanosecond timestamps, geometry and geography: Java's Spark integration refuses
    # them too (Spark has no type to read them into without loss)
    raise UnsupportedError(f"column '{path}': Spark cannot read Iceberg type {t}", field=path)


def _spark_field(field: dict, parent: str) -> Any:
    T = _types()
    name = field["name"]
    path = f"{parent}.{name}" if parent else name
    metadata = {"comment": field["doc"]} if field.get("doc") else {}
    return T.StructField(
        name, spark_type(field["type"], path), nullable=not field.get("required", False), metadata=metadata
    )


def spark_schema(schema_json: str | dict) -> Any:
    """The Spark ``StructType`` of an Iceberg schema (its JSON text or object)."""
    schema = json.loads(schema_json) if isinstance(schema_json, str) else schema_json
    return spark_type({"type": "struct", "fields": schema["fields"]})


# ---------------------------------------------------------------------------------------------
# writes: which Spark types a table column accepts
# ---------------------------------------------------------------------------------------------


def check_write_schema(df_schema: Any, table_schema_json: str) -> None:
    """Raises ``InvalidArgumentError`` naming every column of the DataFrame schema that
    does not fit the table: columns are matched by name (in any order); every table column
    must be present, none may be extra, and each type must convert to the table's without
    loss (widening integers and floats, a decimal of the same scale and no more digits,
    strings for uuid, binary for fixed). Nulls in required columns are checked while
    writing."""
    table = json.loads(table_schema_json)
    problems: list[str] = []
    _check_struct(df_schema, {"type": "struct", "fields": table["fields"]}, "", problems)
    if problems:
        raise InvalidArgumentError(
            "the DataFrame does not match the table schema: " + "; ".join(problems),
            field=problems[0].split("'")[1] if "'" in problems[0] else None,
        )


def _check_struct(spark_struct: Any, iceberg_struct: dict, parent: str, problems: list[str]) -> None:
    given = {f.name: f for f in spark_struct.fields}
    wanted = {f["name"]: f for f in iceberg_struct["fields"]}
    for name in given:
        if name not in wanted:
            problems.append(f"column '{parent}{name}' is not in the table")
    for name, field in wanted.items():
        path = f"{parent}{name}"
        if name not in given:
            problems.append(f"column '{path}' of the table is missing")
            continue
        _check_type(given[name].dataType, field["type"], path, problems)


def _check_type(spark: Any, iceberg: Any, path: str, problems: list[str]) -> None:
    T = _types()
    if isinstance(iceberg, dict):
        kind = iceberg["type"]
        if kind == "struct" and isinstance(spark, T.StructType):
            _check_struct(spark, iceberg, f"{path}.", problems)
        elif kind == "list" and isinstance(spark, T.ArrayType):
            _check_type(spark.elementType, iceberg["element"], f"{path}.element", problems)
        elif kind == "map" and isinstance(spark, T.MapType):
            _check_type(spark.keyType, iceberg["key"], f"{path}.key", problems)
            _check_type(spark.valueType, iceberg["value"], f"{path}.value", problems)
        else:
            problems.append(f"column '{path}' is {spark.simpleString()}, the table's is {kind}")
        return
    t = str(iceberg)
    ints = (T.ByteType, T.ShortType, T.IntegerType)
    accepted: tuple = {
        "boolean": (T.BooleanType,),
        "int": ints,
        "long": ints + (T.LongType,),
        "float": (T.FloatType,),
        "double": (T.FloatType, T.DoubleType),
        "date": (T.DateType,),
        "timestamptz": (T.TimestampType,),
        "timestamp": (T.TimestampNTZType,),
        "timestamptz_ns": (T.TimestampType,),
        "timestamp_ns": (T.TimestampNTZType,),
        "string": (T.StringType,),
        "uuid": (T.StringType,),
        "binary": (T.BinaryType,),
    }.get(t, ())
    if accepted and isinstance(spark, accepted):
        return
    decimal = _parameters(t, "decimal")
    if decimal is not None and isinstance(spark, T.DecimalType):
        precision, scale = decimal
        if spark.scale == scale and spark.precision <= precision:
            return
    if _parameters(t, "fixed") is not None and isinstance(spark, T.BinaryType):
        return
    problems.append(f"column '{path}' is {spark.simpleString()}, which cannot be written to the table's {t}")


# ---------------------------------------------------------------------------------------------
# Arrow conversions
# ---------------------------------------------------------------------------------------------

_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
# where the 32 hex digits go in the 36 characters of 8-4-4-4-12
_UUID_DIGITS = np.array([i for i in range(36) if i not in (8, 13, 18, 23)])


def _storage(arr: pa.Array) -> pa.Array:
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    return arr.storage if isinstance(arr.type, pa.ExtensionType) else arr


def uuid_strings(arr: pa.Array) -> pa.Array:
    """16-byte values as lowercase ``8-4-4-4-12`` strings, as Java's ``UUID.toString``."""
    arr = _storage(arr)
    n = len(arr)
    raw = np.frombuffer(arr.buffers()[1], dtype=np.uint8, count=(arr.offset + n) * 16)[arr.offset * 16 :]
    raw = raw.reshape(n, 16)
    digits = np.empty((n, 32), dtype=np.uint8)
    digits[:, 0::2] = _HEX[raw >> 4]
    digits[:, 1::2] = _HEX[raw & 0x0F]
    chars = np.full((n, 36), ord("-"), dtype=np.uint8)
    chars[:, _UUID_DIGITS] = digits
    offsets = pa.array(np.arange(0, 36 * (n + 1), 36, dtype=np.int32))
    strings = pa.StringArray.from_buffers(n, offsets.buffers()[1], pa.py_buffer(chars.tobytes()))
    if arr.null_count:
        strings = pc.if_else(arr.is_valid(), strings, pa.scalar(None, pa.string()))
    return strings


_NIBBLE = np.full(256, 255, dtype=np.uint8)
for _i, _c in enumerate(b"0123456789abcdef"):
    _NIBBLE[_c] = _i
for _i, _c in enumerate(b"ABCDEF"):
    _NIBBLE[_c] = 10 + _i


def uuid_bytes(arr: pa.Array, path: str) -> pa.Array:
    """``8-4-4-4-12`` hex strings (either case) as 16-byte values; anything else is an
    ``InvalidArgumentError`` naming the column."""
    arr = _storage(arr)
    if not pa.types.is_string(arr.type):
        arr = arr.cast(pa.string())
    valid = arr.is_valid()
    filled = arr.fill_null("00000000-0000-0000-0000-000000000000") if arr.null_count else arr
    ok = pc.match_substring_regex(
        filled, r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
    )
    if not pc.all(ok).as_py():
        bad = filled.filter(pc.invert(ok))[0].as_py()
        raise InvalidArgumentError(f"column '{path}': {bad!r} is not a UUID", field=path)
    n = len(filled)
    # every value is 36 one-byte characters now: the data buffer is a (n, 36) matrix
    offsets = np.frombuffer(filled.buffers()[1], dtype=np.int32, count=filled.offset + n + 1)
    start = int(offsets[filled.offset])
    chars = np.frombuffer(filled.buffers()[2], dtype=np.uint8, count=start + 36 * n)[start:].reshape(n, 36)
    nibbles = _NIBBLE[chars[:, _UUID_DIGITS]]
    raw = (nibbles[:, 0::2] << 4) | nibbles[:, 1::2]
    out = pa.FixedSizeBinaryArray.from_buffers(pa.binary(16), n, [None, pa.py_buffer(raw.tobytes())])
    if arr.null_count:
        out = pc.if_else(valid, out, pa.scalar(None, pa.binary(16)))
    return out


def _fixed(arr: pa.Array, width: int, path: str) -> pa.Array:
    arr = _storage(arr)
    lengths = pc.binary_length(arr)
    wrong = pc.not_equal(lengths, width)
    if pc.any(wrong).as_py():
        n = pc.filter(lengths, wrong)[0].as_py()
        raise InvalidArgumentError(
            f"column '{path}': a value of {n} bytes does not fit fixed[{width}]", field=path
        )
    return arr.cast(pa.binary(width))


def _rebuild(arr: pa.Array, target: pa.DataType, convert) -> pa.Array:
    """``arr`` (struct, list or map) with its children converted by ``convert(child,
    target_child, index)``; nulls kept."""
    mask = arr.is_null() if arr.null_count else None
    if pa.types.is_struct(target):
        children = [convert(arr.field(i), target.field(i).type, i) for i in range(target.num_fields)]
        fields = [
            pa.field(target.field(i).name, children[i].type, target.field(i).nullable)
            for i in range(target.num_fields)
        ]
        return pa.StructArray.from_arrays(children, fields=fields, mask=mask)
    offsets = arr.offsets
    first, last = offsets[0].as_py(), offsets[len(offsets) - 1].as_py()
    offsets = pc.subtract(offsets, first).cast(pa.int32())
    if pa.types.is_map(target):
        keys = convert(arr.keys.slice(first, last - first), target.key_type, 0)
        items = convert(arr.items.slice(first, last - first), target.item_type, 1)
        if mask is not None:
            # MapArray.from_arrays takes no mask: nulls are given by null offsets
            offsets = pc.if_else(pa.concat_arrays([mask, pa.array([False])]), None, offsets)
        return pa.MapArray.from_arrays(offsets, keys, items)
    values = convert(arr.values.slice(first, last - first), target.value_type, 0)
    return pa.ListArray.from_arrays(offsets, values, mask=mask)


def to_spark_batch(batch: pa.RecordBatch, iceberg_fields: list, target: pa.Schema) -> pa.RecordBatch:
    """A batch of a reader (Iceberg's Arrow types) in the Arrow types of the Spark schema
    (``target``, as ``pyspark.sql.pandas.types.to_arrow_schema`` gives it)."""
    arrays = [
        _to_spark(
            batch.column(i),
            iceberg_fields[i]["type"] if i < len(iceberg_fields) else None,
            target.field(i).type,
        )
        for i in range(batch.num_columns)
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=target)


def _to_spark(arr: pa.Array, iceberg: Any, target: pa.DataType) -> pa.Array:
    arr = _storage(arr)
    if iceberg == "uuid":
        return uuid_strings(arr)
    if isinstance(iceberg, dict):
        kind = iceberg["type"]
        if kind == "struct":
            fields = iceberg["fields"]
            return _rebuild(arr, target, lambda a, t, i: _to_spark(a, fields[i]["type"], t))
        if kind == "list":
            return _rebuild(arr, target, lambda a, t, i: _to_spark(a, iceberg["element"], t))
        if kind == "map":
            return _rebuild(
                arr, target, lambda a, t, i: _to_spark(a, iceberg["key" if i == 0 else "value"], t)
            )
    if arr.type == target:
        return arr
    return arr.cast(target)


def to_table_batch(batch: pa.RecordBatch, table_schema_json: str) -> pa.RecordBatch:
    """A batch Spark gave a writer, with uuid columns (Spark strings) and fixed columns
    (Spark binary) in the table's Arrow types; other columns are left as they are for
    ``icefloe.executor.write`` to match."""
    fields = {f["name"]: f for f in json.loads(table_schema_json)["fields"]}
    names = batch.schema.names
    arrays = []
    changed = False
    for i, name in enumerate(names):
        column = batch.column(i)
        field = fields.get(name)
        new = column if field is None else _to_table(column, field["type"], name)
        changed = changed or new is not column
        arrays.append(new)
    if not changed:
        return batch
    return pa.RecordBatch.from_arrays(arrays, names=names)


def _needs_table_conversion(iceberg: Any) -> bool:
    if isinstance(iceberg, dict):
        kind = iceberg["type"]
        if kind == "struct":
            return any(_needs_table_conversion(f["type"]) for f in iceberg["fields"])
        if kind == "list":
            return _needs_table_conversion(iceberg["element"])
        if kind == "map":
            return _needs_table_conversion(iceberg["key"]) or _needs_table_conversion(iceberg["value"])
        return False
    return iceberg == "uuid" or _parameters(iceberg, "fixed") is not None


def _to_table(arr: pa.Array, iceberg: Any, path: str) -> pa.Array:
    if not _needs_table_conversion(iceberg):
        return arr
    arr = _storage(arr)
    if iceberg == "uuid":
        return uuid_bytes(arr, path)
    if isinstance(iceberg, str):
        parameters = _parameters(iceberg, "fixed")
        if parameters is None:
            raise UnsupportedError(f"{path}: cannot convert a Spark column to the Iceberg type {iceberg}")
        return _fixed(arr, parameters[0], path)
    kind = iceberg["type"]
    if kind == "struct":
        by_name = {f["name"]: f for f in iceberg["fields"]}
        names = [arr.type.field(i).name for i in range(arr.type.num_fields)]
        children = [
            _to_table(arr.field(i), by_name[n]["type"], f"{path}.{n}") if n in by_name else arr.field(i)
            for i, n in enumerate(names)
        ]
        mask = arr.is_null() if arr.null_count else None
        return pa.StructArray.from_arrays(children, names=names, mask=mask)
    offsets = arr.offsets
    first, last = offsets[0].as_py(), offsets[len(offsets) - 1].as_py()
    offsets = pc.subtract(offsets, first).cast(pa.int32())
    mask = arr.is_null() if arr.null_count else None
    if kind == "list":
        values = _to_table(arr.values.slice(first, last - first), iceberg["element"], f"{path}.element")
        return pa.ListArray.from_arrays(offsets, values, mask=mask)
    keys = _to_table(arr.keys.slice(first, last - first), iceberg["key"], f"{path}.key")
    items = _to_table(arr.items.slice(first, last - first), iceberg["value"], f"{path}.value")
    if mask is not None:
        offsets = pc.if_else(pa.concat_arrays([mask, pa.array([False])]), None, offsets)
    return pa.MapArray.from_arrays(offsets, keys, items)
