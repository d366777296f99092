"""A distributed row-level UPDATE for PySpark users: ``icefloe.spark.update(spark, table,
where, {"col": "spark sql expression"})`` (needs pandas, as PySpark's ``mapInArrow`` does).

Merge-on-read, as Java's Spark UPDATE on a merge-on-read table: the rows matching ``where``
(a Spark SQL condition) are read through the ``icefloe`` data source with ``_file`` and
``_pos`` at the table's current snapshot; Spark computes the new values; executors write
the updated rows as new data files and the old rows' positions as deletion vectors (v3,
merged with the live ones) or position delete files (v2), and the driver commits both in one
row delta, validated from the snapshot read (the data files must still exist, none was
removed, no conflicting delete files, and under ``serializable`` no conflicting data files).
If the commit fails (or computing the new rows does), the files written for it are
removed again, unless the commit's outcome is unknown.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from .. import _native
from ..errors import InvalidArgumentError
from ..executor.position_deletes import write_position_deletes
from ..executor.write import data_files_from_ipc, data_files_to_ipc, write_data_files
from ..update.row_deletes import check_isolation_level, commit_row_changes, discard_files
from . import types as T
from .options import source_options
from .source import register

__all__ = ["UpdateResult", "update"]


@dataclass(frozen=True)
class UpdateResult:
    """What an :func:`update` did."""

    snapshot_id: int | None  # the new snapshot (None when no row matched)
    updated_rows: int
    data_files_added: int
    delete_files_added: int
    delete_files_removed: int


def _rows(spark: Any, table: Any, snapshot_id: int, where: str) -> Any:
    options = source_options(table.catalog.name, table.catalog.properties)
    return (
        spark.read.format("icefloe")
        .options(**options)
        .option("snapshot-id", str(snapshot_id))
        .option("metadata-columns", "_file,_pos")
        .option("pushdown", "true")  # a new DataFrame for each query made from it
        .load(".".join(table.identifier))
        .where(where)
    )


def _write_deletes(metadata_json: str, io_properties: dict[str, str] | None):
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        md = _native.TableMetadata.from_json(metadata_json)
        positions: dict[str, list[pa.Array]] = {}
        for b in batches:
            if b.num_rows == 0:
                continue
            t = pa.Table.from_batches([b])
            for path in t.column("_file").unique().to_pylist():
                mask = pc.equal(t.column("_file"), path)
                positions.setdefault(path, []).append(t.filter(mask).column("_pos").combine_chunks())
        if not positions:
            return
        merged = {p: pa.concat_arrays(c) for p, c in positions.items()}
        # the table's location provider places the files
        written = write_position_deletes(md, merged, io_properties=io_properties)
        yield pa.RecordBatch.from_pydict(
            {
                "added": [data_files_to_ipc(written.added)],
                "removed": [data_files_to_ipc(written.removed)],
                "rows": [sum(len(p) for p in merged.values())],
            }
        )

    return run


def _write_data(metadata_json: str, schema_json: str, io_properties: dict[str, str] | None):
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        md = _native.TableMetadata.from_json(metadata_json)
        converted = [T.to_table_batch(b, schema_json) for b in batches if b.num_rows]
        if not converted:
            return
        ctx = TaskContext.get()
        task_id = ctx.partitionId() if ctx is not None else 0
        files = write_data_files(
            md, pa.Table.from_batches(converted), task_id=task_id, io_properties=io_properties
        )
        yield pa.RecordBatch.from_pydict({"files": [data_files_to_ipc(files)]})

    return run


def update(
    spark: Any,
    table: Any,
    where: str,
    assignments: Mapping[str, str],
    *,
    isolation_level: str = "serializable",
) -> UpdateResult:
    """Sets the columns of ``assignments`` (column name -> Spark SQL expression over the row, e.g.
    ``{"amount": "amount * 2"}``) in the rows of ``table`` (an :class:`icefloe.Table` loaded
    from a catalog) that match ``where`` (a Spark SQL condition), in one commit. The table
    must be format version 2 or later. The table object is refreshed."""
    from pyspark.sql import functions as F

    if table.catalog is None or table.identifier is None:
        raise InvalidArgumentError("update needs a table loaded from a catalog (it commits)")
    if not assignments:
        raise InvalidArgumentError("update needs at least one column to set")
    isolation_level = check_isolation_level(isolation_level)
    table.refresh()
    md = table.metadata
    if md.format_version < 2:
        raise InvalidArgumentError("row-level updates need format version 2 or later (this table is v1)")
    current = md.current_snapshot()
    if current is None:
        return UpdateResult(None, 0, 0, 0, 0)
    columns = [f.name for f in table.schema().fields]
    unknown = sorted(c for c in assignments if c not in columns)
    if unknown:
        raise InvalidArgumentError(f"update sets columns the table does not have: {', '.join(unknown)}")

    register(spark)  # the rows are read through the icefloe data source
    metadata_json = md.to_json()
    _native.LocationProvider(md)  # refuses a deprecated location property before any task runs
    # the table's FileIO properties for the executors (credentials: never logged)
    io_properties = table.io.properties_for(md.location)
    deletes = (
        _rows(spark, table, current.snapshot_id, where)
        .select("_file", "_pos")
        .repartition("_file")
        .mapInArrow(_write_deletes(metadata_json, io_properties), "added binary, removed binary, rows long")
        .collect()
    )
    if not deletes:
        return UpdateResult(None, 0, 0, 0, 0)
    added = pa.concat_tables([data_files_from_ipc(r["added"]) for r in deletes], promote_options="default")
    new_rows = (
        _rows(spark, table, current.snapshot_id, where)
        .withColumns({c: F.expr(e) for c, e in assignments.items()})
        .select(*columns)
    )
    try:
        written = new_rows.mapInArrow(
            _write_data(metadata_json, table.schema().to_json(), io_properties), "files binary"
        ).collect()
    except BaseException:
        # the delete files of the first stage will never be committed
        discard_files(table, sorted(set(added.column("file_path").to_pylist())))
        raise

    removed = [data_files_from_ipc(r["removed"]) for r in deletes]
    removed_t = pa.concat_tables(removed, promote_options="default") if removed else None
    files = [data_files_from_ipc(r["files"]) for r in written]
    files_t = pa.concat_tables(files, promote_options="default") if files else None
    commit_row_changes(
        table,
        current.snapshot_id,
        isolation_level,
        added_deletes=added,
        removed_deletes=removed_t,
        added_data=files_t,
    )
    head = table.current_snapshot()
    return UpdateResult(
        snapshot_id=None if head is None else head.snapshot_id,
        updated_rows=sum(r["rows"] for r in deletes),
        data_files_added=0 if files_t is None else files_t.num_rows,
        delete_files_added=added.num_rows,
        delete_files_removed=0 if removed_t is None else removed_t.num_rows,
    )
