"""The executor side of deleting rows (``icefloe.update.row_deletes``): for one group of data
files, find the positions of the rows that match and write the delete files."""

from __future__ import annotations

import pyarrow as pa

from .. import _native
from .position_deletes import write_position_deletes
from .read import read_tasks
from .write import data_files_from_ipc as _from_ipc
from .write import data_files_to_ipc as _ipc

__all__ = ["Group", "GroupResult", "delete_in_group", "delete_positions"]

# (metadata JSON, plan rows as Arrow IPC, Puffin file for this group, the table's FileIO
# properties or None for local files: they may hold credentials)
Group = tuple[str, bytes, str, "dict[str, str] | None"]
# (rows deleted, data files with new deletes, data files removed whole, added rows IPC, removed rows IPC)
GroupResult = tuple[int, int, list[str], bytes, bytes]


def delete_in_group(group: Group) -> GroupResult:
    """The work on one group of data files (a Spark task, or a loop step): find the matching
    positions and write the delete files. Importable by Spark's Python workers."""
    metadata_json, task_bytes, puffin_location, io_properties = group
    md = _native.TableMetadata.from_json(metadata_json)
    plan = _from_ipc(task_bytes)
    positions: dict[str, list[pa.Array]] = {}
    for batch in read_tasks(plan, metadata_columns=("_file", "_pos"), io_properties=io_properties):
        if batch.num_rows == 0:
            continue
        files = batch.column(batch.schema.get_field_index("_file"))
        # tasks are never mixed in one batch, and each task is one data file
        positions.setdefault(files[0].as_py(), []).append(batch.column(batch.schema.get_field_index("_pos")))
    return delete_positions(md, plan, positions, puffin_location, io_properties)


def delete_positions(
    md: _native.TableMetadata,
    plan: pa.Table,
    positions: dict[str, list[pa.Array]],
    puffin_location: str,
    io_properties: dict[str, str] | None,
    snapshot_id: int | None = None,
) -> GroupResult:
    """Deletes the rows at ``positions`` (data file path -> chunks of row positions) of data
    files of ``plan`` (its rows: ``file_path``, ``record_count``, ``deletes``): a file all of
    whose rows go, and which has no deletes yet, is removed whole; the others get a deletion
    vector (v3, in ``puffin_location``, merged with the file's live deletes) or a position
    delete file (v2). ``snapshot_id``: the snapshot the files were read from when it is not
    the current one (a branch's head). Shared by the row-level delete and the upsert."""
    if not positions:
        return 0, 0, [], b"", b""
    rows = {r["file_path"]: r for r in plan.select(["file_path", "record_count", "deletes"]).to_pylist()}
    whole, partial = [], {}
    for path, chunks in positions.items():
        found = pa.concat_arrays(chunks)
        row = rows.get(path)
        if row is not None and not row["deletes"] and len(found) == row["record_count"]:
            whole.append(path)
        else:
            partial[path] = found
    deleted = sum(len(pa.concat_arrays(c)) for c in positions.values())
    if not partial:
        return deleted, 0, whole, b"", b""
    written = write_position_deletes(
        md,
        partial,
        location=puffin_location if md.format_version >= 3 else None,
        io_properties=io_properties,
        snapshot_id=snapshot_id,
        # the deletes the plan applies to each file: no manifest is read to find them
        plan=plan,
    )
    return deleted, len(partial), whole, _ipc(written.added), _ipc(written.removed)
