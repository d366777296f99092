"""Partition transforms (identity, bucket[N], truncate[W], year, month, day, hour, void).

``apply`` runs the transform over a whole pyarrow array in Rust; ``apply_scalar`` is the
same code on one Python value. Results match the Java reference implementation.
"""

from __future__ import annotations

import uuid
from typing import Any

import pyarrow as pa

from . import _native

__all__ = ["apply", "apply_scalar", "arrow_type", "source_type_of"]


def apply(
    transform: str, values: pa.Array | pa.ChunkedArray, source_type: str | None = None
) -> pa.Array | pa.ChunkedArray:
    """Applies ``transform`` (e.g. ``"bucket[16]"``) to every value of ``values``.

    ``source_type`` is the Iceberg type of the values (``"uuid"``, ``"fixed[16]"``,
    ``"decimal(9, 2)"``...); when omitted it is derived from the Arrow type. Nulls stay null.
    Bucket and date/time transforms return ``int32``; identity and truncate keep the type.
    """
    if isinstance(values, pa.ChunkedArray):
        return pa.chunked_array(
            [_native.transform_array(transform, chunk, source_type) for chunk in values.chunks],
            type=_native.transform_result_arrow_type(transform, values.type, source_type),
        )
    return _native.transform_array(transform, values, source_type)


def arrow_type(source_type: str) -> pa.DataType:
    """The Arrow type icefloe uses for values of an Iceberg primitive type."""
    return _native.arrow_type(source_type)


def source_type_of(arrow: pa.DataType) -> str:
    """The Iceberg type icefloe assumes for an Arrow type (``fixed_size_binary(16)`` is ``fixed[16]``)."""
    return _native.iceberg_type_of(arrow)


def apply_scalar(transform: str, source_type: str, value: Any) -> Any:
    """Applies ``transform`` to one value of Iceberg type ``source_type``.

    Values are Python natives: ``int``, ``str``, ``bytes``, ``decimal.Decimal``,
    ``datetime.date``/``time``/``datetime`` (timezone-aware for ``timestamptz``), ``uuid.UUID``.
    Nanosecond timestamps may also be given as ``int`` nanoseconds from the epoch.
    """
    is_uuid = source_type.strip() == "uuid"
    if is_uuid and isinstance(value, uuid.UUID):
        value = value.bytes
    array = pa.array([value], type=arrow_type(source_type))
    result = apply(transform, array, source_type)[0].as_py()
    if is_uuid and isinstance(result, bytes):
        return uuid.UUID(bytes=result)
    return result
