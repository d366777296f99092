"""A distributed row-level DELETE for PySpark users: ``icefloe.spark.delete(spark, table,
where)``.

The driver plans the scan of the rows matching ``where`` (one task per data file, so that
each data file gets exactly one new deletion vector), ships the tasks to the executors as
Arrow IPC bytes, and each executor reads its files with ``icefloe.reader.read_tasks`` (the
table's existing deletes and the filter applied, ``_file``/``_pos`` requested), then writes
the positions it found as delete files with ``icefloe.deletes.write_position_deletes``:
v3 tables get one deletion vector per data file, merged with that file's live DV and
position deletes (one Puffin file per executor task); v2 tables get position delete files.
The driver then commits everything as one row delta, validated as Spark's merge-on-read
DELETE with Java Iceberg validates it (from the scanned snapshot, limited to ``where``: the
data files must still exist, no file was deleted meanwhile, and no conflicting delete files
were added — plus no conflicting data files under ``serializable`` isolation).

If the commit fails, the delete files written for it are removed again, so none is left
referenced or behind.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

__all__ = ["DeleteResult", "delete"]


@dataclass(frozen=True)
class DeleteResult:
    """What a :func:`delete` did."""

    snapshot_id: int | None  # the new snapshot (None when nothing matched)
    deleted_rows: int
    data_files: int  # data files that got new deletes
    delete_files_added: int
    delete_files_removed: int


def _ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _from_ipc(data: bytes) -> pa.Table:
    return pa.ipc.open_stream(data).read_all()


def _delete_in_group(args: tuple[str, bytes, str]) -> tuple[int, int, bytes, bytes]:
    """Executor side: the positions of matching rows in one group of data files, written as
    delete files. Returns (rows deleted, data files touched, added delete-file rows,
    removed delete-file rows)."""
    from .. import _native
    from ..deletes import write_position_deletes
    from ..reader import read_tasks

    metadata_json, task_bytes, puffin_location = args
    md = _native.TableMetadata.from_json(metadata_json)
    positions: dict[str, list[pa.Array]] = {}
    for batch in read_tasks(task_bytes, metadata_columns=("_file", "_pos")):
        if batch.num_rows == 0:
            continue
        files = batch.column(batch.schema.get_field_index("_file"))
        pos = batch.column(batch.schema.get_field_index("_pos"))
        # one task (one data file) per batch: tasks are never mixed in a batch
        positions.setdefault(files[0].as_py(), []).append(pos)
    if not positions:
        return 0, 0, b"", b""
    merged = {path: pa.concat_arrays(chunks) for path, chunks in positions.items()}
    written = write_position_deletes(md, merged, location=puffin_location if md.format_version >= 3 else None)
    deleted = sum(len(p) for p in merged.values())
    return deleted, len(merged), _ipc(written.added), _ipc(written.removed)


def _remove_files(paths: set[str]) -> None:
    from ..reader import local_path

    for p in paths:
        try:
            os.remove(local_path(p))
        except FileNotFoundError:
            pass


def delete(spark: Any, table: Any, where: Any, *, branch: str | None = None,
           isolation_level: str = "serializable", parallelism: int | None = None) -> DeleteResult:
    """Deletes the rows of ``table`` (an :class:`icefloe.Table` loaded from a catalog) that
    match ``where`` (filter text or an icefloe expression), by writing deletion vectors (v3)
    or position delete files (v2) on Spark's executors and committing one row delta.

    ``isolation_level``: ``"serializable"`` (default, as Java's Spark DELETE) also fails
    when data matching ``where`` was added concurrently; ``"snapshot"`` only when
    conflicting deletes were. ``parallelism``: the number of Spark tasks (default: Spark's
    default parallelism). Returns a :class:`DeleteResult`; the table object is refreshed."""
    if where is None or where is True:
        raise ValueError("delete needs a filter; to delete everything use a metadata delete or overwrite")
    if table.catalog is None:
        raise ValueError("delete needs a table loaded from a catalog (it commits)")
    md = table.metadata
    if md.format_version < 2:
        raise ValueError("row-level deletes need format version 2 or later (this table is v1)")
    scan = table.scan(row_filter=where, ref=branch)
    plan = scan.plan()
    snapshot_id = plan.snapshot_id
    if plan.table.num_rows == 0:
        return DeleteResult(None, 0, 0, 0, 0)

    n = max(1, min(plan.table.num_rows, parallelism or spark.sparkContext.defaultParallelism))
    rows_per_group = -(-plan.table.num_rows // n)
    data_dir = md.properties.get("write.data.path") or f"{md.location.rstrip('/')}/data"
    metadata_json = md.to_json()
    groups = []
    for i in range(0, plan.table.num_rows, rows_per_group):
        puffin = f"{data_dir}/{uuid.uuid4()}-deletes.puffin"
        groups.append((metadata_json, _ipc(plan.table.slice(i, rows_per_group)), puffin))

    results = spark.sparkContext.parallelize(groups, len(groups)).map(_delete_in_group).collect()
    added = [_from_ipc(a) for _, _, a, _ in results if a]
    removed = [_from_ipc(r) for _, _, _, r in results if r]
    deleted_rows = sum(r[0] for r in results)
    data_files = sum(r[1] for r in results)
    if not added:
        return DeleteResult(None, 0, 0, 0, 0)
    added_t = pa.concat_tables(added, promote_options="default")
    removed_t = pa.concat_tables(removed, promote_options="default") if removed else None
    new_files = set(added_t.column("file_path").to_pylist())
    referenced = sorted(set(added_t.column("referenced_data_file").to_pylist()) - {None}) \
        if "referenced_data_file" in added_t.column_names else []
    try:
        table.row_delta(
            add_delete_files=added_t,
            remove_delete_files=removed_t if removed_t is not None and removed_t.num_rows else (),
            branch=branch,
            validate_from_snapshot=snapshot_id,
            conflict_detection_filter=where,
            validate_data_files_exist=referenced,
            validate_deleted_files=True,
            validate_no_conflicting_delete_files=True,
            validate_no_conflicting_data_files=isolation_level == "serializable",
            isolation_level=isolation_level,
        )
    except BaseException:
        _remove_files(new_files)
        raise
    head = dict(table.metadata.refs).get(branch or "main")
    return DeleteResult(
        snapshot_id=None if head is None else head.snapshot_id,
        deleted_rows=deleted_rows,
        data_files=data_files,
        delete_files_added=added_t.num_rows,
        delete_files_removed=0 if removed_t is None else removed_t.num_rows,
    )
