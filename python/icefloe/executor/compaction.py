"""The executor side of ``rewrite_data_files``: one read unit of a file group (planned in
Rust, ``icefloe::maintenance::rewrite_data_files``) read with its deletes applied, its
rows sorted when asked, and written as new data files of the table.

A unit is a plain tuple (:data:`Unit`) so that Spark can ship it; the result is the Arrow
IPC bytes of the new files' data-file rows (:func:`icefloe.executor.write.data_files_to_ipc`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from .. import _native, transforms
from .read import output_schema, read_tasks
from .tasks import CombinedScanTask
from .write import data_files_to_ipc, write_data_files

__all__ = ["SortKey", "Unit", "rewrite_unit", "sort_rows"]

#: the metadata columns of v3 row lineage, which a rewrite carries over
_LINEAGE = ("_row_id", "_last_updated_sequence_number")

#: A sort key: column name (dotted for a struct field), transform (``identity``,
#: ``bucket[16]``, ``day``...), ``asc``/``desc``, ``nulls-first``/``nulls-last``.
SortKey = tuple[str, str, str, str]

#: (table metadata JSON, the unit's plan IPC bytes, sort keys or None, file size the
#: writers roll at, number of output files for a sorted unit, FileIO properties, group
#: index, unit index, operation id, sort order id or None)
Unit = tuple[
    str, bytes, "Sequence[SortKey] | None", int, int, "Mapping[str, str]", int, int, str, "int | None"
]


def rewrite_unit(unit: Unit) -> bytes:
    """Reads a unit (deletes applied), sorts its rows when it has sort keys, writes them as
    data files rolling at the unit's size, and returns their data-file rows as IPC bytes."""
    (
        metadata_json,
        plan_bytes,
        sort_keys,
        max_file_size,
        output_files,
        io_properties,
        group_index,
        unit_index,
        operation_id,
        sort_order_id,
    ) = unit
    md = _native.TableMetadata.from_json(metadata_json)
    io = dict(io_properties) if io_properties else None
    props = {"write.target-file-size-bytes": str(max_file_size)}
    # v3 row lineage: rewritten rows keep their row ids and last-updated sequence numbers,
    # written into the new files as Java's rewrite does
    lineage = list(_LINEAGE) if md.format_version >= 3 else []
    batches = read_tasks(plan_bytes, metadata_columns=lineage, io_properties=io)
    if not sort_keys:
        files = write_data_files(
            md,
            batches,
            task_id=unit_index,
            partition_id=group_index,
            operation_id=operation_id,
            properties=props,
            io_properties=io,
            row_lineage=bool(lineage),
        )
        return data_files_to_ipc(files)
    plan = CombinedScanTask.from_bytes(plan_bytes).table
    rows = pa.Table.from_batches(list(batches), schema=output_schema(plan.schema, lineage))
    rows = sort_rows(rows, sort_keys)
    # one contiguous run of sorted rows per output file, as Java's range shuffle makes one
    # sorted partition per file
    n = max(1, min(int(output_files), rows.num_rows))
    step = -(-rows.num_rows // n) if rows.num_rows else 0
    parts: list[pa.Table] = []
    for i in range(n):
        piece = rows.slice(i * step, step) if step else rows
        if piece.num_rows == 0 and parts:
            continue
        parts.append(
            write_data_files(
                md,
                piece,
                task_id=unit_index * 100_000 + i,
                partition_id=group_index,
                operation_id=operation_id,
                sort_order_id=sort_order_id,
                properties=props,
                io_properties=io,
                row_lineage=bool(lineage),
            )
        )
    return data_files_to_ipc(pa.concat_tables(parts) if len(parts) > 1 else parts[0])


def sort_rows(rows: pa.Table, sort_keys: Sequence[SortKey]) -> pa.Table:
    """``rows`` ordered by the sort keys, each key's nulls first or last as it says (a
    null-flag column sorts before the value, since pyarrow places nulls for all keys at
    once); transforms are icefloe's (Rust)."""
    if rows.num_rows <= 1 or not sort_keys:
        return rows
    columns: dict[str, pa.Array] = {}
    keys: list[tuple[str, str]] = []
    for i, (name, transform, direction, null_order) in enumerate(sort_keys):
        parts = name.split(".")
        values: Any = rows.column(parts[0])
        for part in parts[1:]:
            values = pc.struct_field(values, part)
        if isinstance(values, pa.ChunkedArray):
            values = values.combine_chunks()
        if transform != "identity":
            values = transforms.apply(transform, values)
        nulls_first = null_order == "nulls-first"
        columns[f"n{i}"] = pc.is_null(values)
        columns[f"k{i}"] = values
        keys.append((f"n{i}", "descending" if nulls_first else "ascending"))
        keys.append((f"k{i}", "descending" if direction == "desc" else "ascending"))
    order = pc.sort_indices(pa.table(columns), sort_keys=keys)
    return rows.take(order)
