"""Reading file scan tasks into Arrow (the executor side of a scan).

``read_tasks(tasks)`` takes what the driver planned (a ``CombinedScanTask``, a slice of a
plan table, or the task's Arrow IPC bytes) and yields pyarrow record batches of the scan's
projected schema, with everything an Iceberg reader must do applied. The reading is done
by the Rust core (``icefloe::read``, the one reader, which the JVM connector calls too):
files are read in parallel, the GIL released, and batches come out in the plan's order.

- Parquet columns are matched to the schema by Iceberg field id (``PARQUET:field_id``), so
  renamed, reordered, added and dropped columns read correctly, nested ones too; files
  without ids get them from the table's name mapping (in the plan's schema metadata), or
  by position as Java's fallback when there is none;
- columns a file lacks read as their ``initial-default`` (v3) or null; identity partition
  values (and the metadata columns) are constants taken from the task, preferred over the
  file's column as in Java's ``PartitionUtil.constantsMap`` readers;
- type promotions (int to long, float to double, decimal widening, date to timestamp);
- deletes: deletion vectors, position delete files (rows of this file only) and equality
  delete files (null equals null), those listed on the task only;
- the task's residual filter, with SQL's null rules (a null never matches a comparison)
  and NaN ordered above every number, as Spark evaluates filters;
- metadata columns on request (``_file``, ``_pos``, ``_spec_id``, ``_partition``,
  ``_deleted``, ``_row_id``, ``_last_updated_sequence_number``).

Output conventions: the Arrow schema is the projected Iceberg schema in the types of
``icefloe._native.data_file_arrow_schema`` (timestamps in microseconds, ``timestamptz``
with zone UTC, uuid as ``fixed_size_binary(16)``), every field carrying its Iceberg id in
the ``PARQUET:field_id`` metadata key; requested metadata columns follow in the order
asked, with their reserved ids. Positions (``_pos``) are file-global.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa

from .. import _native
from ..errors import InvalidArgumentError, InvalidArgumentTypeError
from .files import file_io_for, local_path
from .tasks import CombinedScanTask

__all__ = ["read_tasks", "METADATA_COLUMNS", "DEFAULT_BATCH_SIZE"]

DEFAULT_BATCH_SIZE = 65536

# the metadata columns a scan reads, with their reserved ids and Arrow types (None: the
# plan's partition struct)
_RESERVED = _native.RESERVED_FIELD_IDS
METADATA_COLUMNS = {
    name: (
        _RESERVED[name],
        None if name == "_partition" else _native.arrow_type(_native.RESERVED_FIELD_TYPES[name]),
    )
    for name in (
        "_file",
        "_pos",
        "_deleted",
        "_spec_id",
        "_partition",
        "_row_id",
        "_last_updated_sequence_number",
    )
}


def read_tasks(
    tasks: Any,
    *,
    metadata_columns: Sequence[str] = (),
    batch_size: int = DEFAULT_BATCH_SIZE,
    io_properties: Mapping[str, str] | None = None,
) -> Iterator[pa.RecordBatch]:
    """Reads file scan tasks and yields record batches of the projected schema (plus the
    requested metadata columns).

    ``tasks`` is a :class:`icefloe.table.CombinedScanTask`, a plan ``pa.Table`` or
    ``pa.RecordBatch`` (rows of ``plan_arrow()``/``plan_tasks()``, with the plan's schema
    metadata), or the Arrow IPC bytes of ``CombinedScanTask.to_bytes()``. Batches hold at
    most ``batch_size`` rows (fewer after deletes and filtering; tasks are never mixed in
    one batch). ``io_properties``: the table's FileIO properties
    (``table.io.properties_for(table.location)``: endpoint, region, credentials) for data
    and delete files on an object store."""
    if isinstance(tasks, (bytes, bytearray, memoryview)):
        table = CombinedScanTask.from_bytes(bytes(tasks)).table
    else:
        table = _plan_table(tasks)
    return _read(table, metadata_columns, batch_size, io_properties)


def output_schema(plan_schema: pa.Schema, metadata_columns: Sequence[str] = ()) -> pa.Schema:
    """The schema of the batches ``read_tasks`` yields for a plan of this schema."""
    return _native.read_output_schema(plan_schema, list(metadata_columns))


def _plan_table(tasks: Any) -> pa.Table:
    if isinstance(tasks, CombinedScanTask):
        return tasks.table
    if isinstance(tasks, pa.RecordBatch):
        return pa.Table.from_batches([tasks])
    if isinstance(tasks, pa.Table):
        return tasks
    raise InvalidArgumentTypeError(
        f"read_tasks takes a CombinedScanTask, a plan table or batch, or IPC bytes, not {type(tasks)!r}"
    )


def _read(
    plan: pa.Table,
    metadata_columns: Sequence[str],
    batch_size: int,
    io_properties: Mapping[str, str] | None,
    residuals: list | None = None,
) -> Iterator[pa.RecordBatch]:
    """The Rust reader's batches of ``plan`` (rows with the plan's schema metadata). The
    FileIO is the one for the plan's first file (a plan's files are all in the table's
    store); errors in the arguments are raised here, before the first batch."""
    if batch_size < 1:
        raise InvalidArgumentError(f"batch_size must be at least 1, not {batch_size}")
    first = plan.column("file_path")[0].as_py() if plan.num_rows else "file:///"
    reader = _native.read_plan(
        plan,
        io=file_io_for(first, io_properties),
        metadata_columns=list(metadata_columns),
        batch_size=batch_size,
        residuals_json=None if residuals is None else json.dumps(residuals),
    )
    return _batches(reader)


def _batches(reader: Any) -> Iterator[pa.RecordBatch]:
    try:
        yield from reader
    finally:
        # a consumer that stops early (a LIMIT) stops the reading threads
        reader.close()


def read_plan_stream(
    stream: Any,
    metadata_columns: Sequence[str] = (),
    batch_size: int = DEFAULT_BATCH_SIZE,
    io_properties: Mapping[str, str] | None = None,
) -> Iterator[pa.RecordBatch]:
    """Reads the tasks of a ``PlanBatches`` stream as they are planned (bounded memory)."""
    for plan_batch in stream:
        plan = pa.Table.from_batches([plan_batch.replace_schema_metadata(stream.schema.metadata)])
        yield from _read(plan, metadata_columns, batch_size, io_properties, stream.residuals)


def counts_from_metadata(plan: pa.Table) -> bool:
    """Whether the record counts of the plan's files are its row count: no task has
    deletes, and every task's residual is ``true`` and exact (a task whose partition tuple
    holds a null is read with the whole scan filter, see ``icefloe::read``)."""
    md = plan.schema.metadata or {}
    if any(len(d) for d in plan.column("deletes").to_pylist()):
        return False
    if json.loads(md.get(_native.FILTER_KEY, b"true")) is True:
        return True
    residuals = json.loads(md.get(_native.RESIDUALS_KEY, b"[]"))
    specs = {s["spec-id"]: s for s in json.loads(md[_native.SPECS_KEY])}
    partition_type = plan.schema.field("partition").type
    slots = {}
    for i in range(partition_type.num_fields):
        f = partition_type.field(i)
        if f.metadata and _native.PARQUET_FIELD_ID in f.metadata:
            slots[int(f.metadata[_native.PARQUET_FIELD_ID])] = f.name
    for row in plan.select(["spec_id", "partition", "residual"]).to_pylist():
        if residuals[row["residual"]] is not True:
            return False
        partition = row["partition"] or {}
        for pf in specs.get(row["spec_id"], {"fields": []})["fields"]:
            name = slots.get(pf["field-id"])
            if name is None or partition.get(name) is None:
                return False
    return True


__all__ += ["output_schema", "local_path", "read_plan_stream", "counts_from_metadata"]
