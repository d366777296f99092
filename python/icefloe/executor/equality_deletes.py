"""Writing equality delete files: the executor side of a CDC-style write.

``write_equality_deletes(table_metadata, rows, equality_fields)`` writes Parquet equality
delete files (``content`` 2) for a format v2 or later table and returns their ``data_file``
rows (the form of ``write_data_files``' rows, with ``equality_ids`` set) for a row delta. A
row of such a file deletes every row of a data file of an older sequence number (and the
same partition, unless the spec is unpartitioned) whose equality columns all equal its
values (the spec's "Equality Delete Files"; NULL equals NULL there).

The files hold the equality columns and, for a partitioned spec, the partition source
columns (the rows are partitioned by them as data rows are), in the table schema's order
with its field ids, as Java's ``EqualityDeleteWriter`` writes a projection of the table
schema; metrics are computed for those columns as for data files.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pyarrow as pa

from .. import _native
from ..errors import InvalidArgumentError
from .write import _batches, _metadata, _write_files

__all__ = ["write_equality_deletes", "equality_field_ids"]

_CONTENT_EQUALITY_DELETES = 2


def equality_field_ids(schema: Any, equality_fields: Sequence[str], case_sensitive: bool = True) -> list[int]:
    """The field ids of the top-level primitive columns ``equality_fields`` of ``schema``."""
    if isinstance(equality_fields, str):
        equality_fields = [equality_fields]
    if not equality_fields:
        raise InvalidArgumentError("equality deletes need at least one equality field")
    top = {f.id for f in schema.fields}
    ids = []
    for name in equality_fields:
        field = schema.find_field(name, case_sensitive=case_sensitive)
        if field is None:
            raise InvalidArgumentError(f"equality field {name!r} is not in the table schema", field=name)
        if field.id not in top:
            raise InvalidArgumentError(
                f"equality field {name!r} is nested; only top-level columns are supported", field=name
            )
        if not isinstance(json.loads(field.type_json()), str):  # structs, lists and maps are objects
            raise InvalidArgumentError(f"equality field {name!r} is not a primitive type", field=name)
        if field.id not in ids:
            ids.append(field.id)
    return ids


def _projection(schema: Any, keep: set[int]) -> Any:
    """The table schema with only the top-level fields of ``keep`` (same ids and order)."""
    doc = json.loads(schema.to_json())
    doc["fields"] = [f for f in doc["fields"] if f["id"] in keep]
    doc.pop("identifier-field-ids", None)
    return _native.Schema.from_json(json.dumps(doc))


def write_equality_deletes(
    table_metadata: Any,
    rows: pa.Table | pa.RecordBatch | pa.RecordBatchReader | Iterable[pa.RecordBatch],
    equality_fields: Sequence[str],
    *,
    task_id: int = 0,
    partition_id: int = 0,
    operation_id: str | None = None,
    properties: Mapping[str, str] | None = None,
    io_properties: Mapping[str, str] | None = None,
) -> pa.Table:
    """Writes equality delete files of ``rows`` (columns matched by name; at least the
    ``equality_fields`` and, for a partitioned table, the partition source columns; others
    are ignored) for the table's current schema and default spec, placed and named as data
    files are (``write_data_files``), and returns their delete-file rows. ``rows`` with no
    rows write nothing (an empty table)."""
    md = _metadata(table_metadata)
    if md.format_version < 2:
        raise InvalidArgumentError("format version 1 tables have no delete files")
    schema = md.schema()
    ids = equality_field_ids(schema, equality_fields)
    keep = set(ids)
    for pf in md.spec().fields:
        source = schema.field_by_id(pf.source_id)
        if source is None or source.id not in {f.id for f in schema.fields}:
            raise InvalidArgumentError(
                f"partition field {pf.name!r} has a nested or missing source column; "
                "equality deletes are written for top-level partition sources only",
                field=pf.name,
            )
        keep.add(pf.source_id)
    projected = _projection(schema, keep)
    names = [f.name for f in projected.fields]

    def selected() -> Iterable[pa.RecordBatch]:
        for batch in _batches(rows):
            missing = [n for n in names if n not in batch.schema.names]
            if missing:
                raise InvalidArgumentError(
                    f"equality delete rows lack the column(s) {', '.join(missing)}", field=missing[0]
                )
            yield pa.RecordBatch.from_arrays([batch.column(n) for n in names], names=names)

    files = _write_files(
        md,
        projected,
        None,  # delete files are not sorted by the table's order
        selected(),
        location_prefix=None,
        task_id=task_id,
        partition_id=partition_id,
        operation_id=operation_id,
        sort_order_id=None,
        properties=properties,
        io_properties=io_properties,
    )
    content = pa.array([_CONTENT_EQUALITY_DELETES] * files.num_rows, pa.int32())
    equality_ids = pa.array([ids] * files.num_rows, files.schema.field("equality_ids").type)
    files = files.set_column(files.schema.get_field_index("content"), files.schema.field("content"), content)
    return files.set_column(
        files.schema.get_field_index("equality_ids"), files.schema.field("equality_ids"), equality_ids
    )
