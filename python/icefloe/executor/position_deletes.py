"""Deleting rows of data files by position: the delete files to commit with
:meth:`icefloe.update.transaction.Transaction.row_delta`.

v3 tables get one deletion vector per data file, merged (in Rust) with the file's live DV
and with the positions its position delete files hold, as the spec requires; the old DV
and the position delete files scoped to that data file alone are to be removed. v2 tables
get one position delete file per data file (Java's default ``file`` granularity), written
here with pyarrow::

    added, removed = write_position_deletes(table.metadata, {path: [0, 5, 9]})
    table.row_delta(add_delete_files=added, remove_delete_files=removed,
                    validate_from_snapshot=table.current_snapshot().snapshot_id,
                    validate_data_files_exist=[path], validate_deleted_files=True,
                    isolation_level="serializable")
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from .. import _native
from ..errors import InvalidArgumentError
from .files import file_io_for, filesystem_for, io_error, scrub

__all__ = ["PositionDeletes", "write_position_deletes"]

# the reserved columns of a position delete file ("Position Delete Files")
_FILE_PATH_ID = _native.RESERVED_FIELD_IDS["file_path"]
_POS_ID = _native.RESERVED_FIELD_IDS["pos"]


class PositionDeletes(NamedTuple):
    """Delete-file rows (the form of ``manifest_entries_schema`` without entry columns)."""

    added: pa.Table
    removed: pa.Table


def _positions(values: Any) -> pa.Array:
    arr = values if isinstance(values, (pa.Array, pa.ChunkedArray)) else pa.array(values, pa.int64())
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    return arr.cast(pa.int64())


def _positions_in(
    delete_files: Iterable[str], data_path: str, io_properties: Mapping[str, str] | None
) -> pa.Array:
    """The positions of ``data_path`` in the given position delete files."""
    chunks = []
    for f in delete_files:
        fs, p = filesystem_for(f, io_properties)
        t = pq.read_table(p, filesystem=fs, columns=["file_path", "pos"])
        chunks.append(t.filter(pc.equal(t["file_path"], data_path))["pos"].combine_chunks())
    return pa.concat_arrays(chunks) if chunks else pa.array([], pa.int64())


def _scanned(plan: pa.Table | None) -> bytes | None:
    """Plan rows as the Arrow IPC stream the native writers read (its schema metadata, which
    names the planned snapshot, kept); ``None`` without a plan."""
    if plan is None:
        return None
    sink = pa.BufferOutputStream()
    # the columns the native writers read (the plan's others stay behind)
    rows = plan.select(list(_native.SCANNED_DELETES_COLUMNS))
    with pa.ipc.new_stream(sink, rows.schema) as w:
        w.write_table(rows)
    return sink.getvalue().to_pybytes()


def write_position_deletes(
    table_metadata: Any,
    deletes: Mapping[str, Any],
    *,
    location: str | None = None,
    io: _native.FileIO | None = None,
    io_properties: Mapping[str, str] | None = None,
    snapshot_id: int | None = None,
    plan: pa.Table | None = None,
) -> PositionDeletes:
    """Writes delete files for ``deletes`` (data file path -> row positions: a list, numpy
    or pyarrow array) of live data files of the table's current snapshot, all of one
    partition spec. ``location``: the Puffin file (v3) or the data location (v2) to write
    in; by default the table's location provider places the files (as Java's
    ``OutputFileFactory.newOutputFile()``: under the data location, hash directories first
    with ``write.object-storage.enabled``). The table's manifests are read (and a Puffin
    file written) through ``io``, by default the FileIO for the table location's scheme
    with ``io_properties`` (the table's FileIO properties, as ``read_tasks`` takes them;
    with ``io`` and without them, ``io.properties_for`` the table location). The data files
    are those of the current snapshot, or of ``snapshot_id`` (a branch's head): in v3 their
    live deletes there are merged into the new DVs. ``plan``: plan rows (``Scan.plan()``'s
    table, or a slice of it) of a scan of that snapshot holding the data files: their deletes
    are taken from it, so no manifest is read (without it the snapshot's manifests are). Parquet
    position delete files are written with pyarrow. Returns the rows to add and to remove."""
    md = table_metadata
    scanned = _scanned(plan)
    if io is None:
        io = file_io_for(md.location, io_properties)
    elif io_properties is None:
        io_properties = io.properties_for(md.location)
    if md.format_version < 2:
        raise InvalidArgumentError("format version 1 tables have no delete files")
    if md.format_version >= 3:
        # placed first: a location property Java refuses fails before any work
        target = location or _native.LocationProvider(md).new_data_location(f"{uuid.uuid4()}-deletes.puffin")
        extra = _native.position_delete_files_for(io, md, list(deletes), snapshot_id, scanned)
        vectors = {}
        for path, positions in deletes.items():
            dv = _native.DeletionVector.from_positions(_positions(positions))
            if extra.get(path):
                dv = dv.merge(
                    _native.DeletionVector.from_positions(_positions_in(extra[path], path, io_properties))
                )
            vectors[path] = dv
        added, removed = _native.write_dv_deletes(io, md, target, vectors, snapshot_id, scanned)
        return PositionDeletes(pa.table(added), pa.table(removed))

    locations = _native.LocationProvider(md, data_location=location)
    schema = pa.schema(
        [
            pa.field(
                "file_path",
                pa.string(),
                nullable=False,
                metadata={_native.PARQUET_FIELD_ID: str(_FILE_PATH_ID)},
            ),
            pa.field("pos", pa.int64(), nullable=False, metadata={_native.PARQUET_FIELD_ID: str(_POS_ID)}),
        ]
    )
    written = []
    for path, positions in deletes.items():
        pos = pc.unique(_positions(positions)).sort()
        target = locations.new_data_location(f"{uuid.uuid4()}-deletes.parquet")
        fs, p = filesystem_for(target, io_properties)
        parent = p.rsplit("/", 1)[0]
        if parent and isinstance(fs, pafs.LocalFileSystem):
            fs.create_dir(parent, recursive=True)
        table = pa.table([pa.array([path] * len(pos), pa.string()), pos], schema=schema)
        try:
            with fs.open_output_stream(p) as sink:
                pq.write_table(table, sink)
            size = fs.get_file_info(p).size
        except OSError as e:
            # typed and scrubbed as the data file writer's errors
            text = scrub(str(e), target, io_properties)
            raise io_error(f"cannot write position delete file {target}: {text}", target) from None
        # the smallest and largest position: the file's bounds (set in Rust)
        span = (pos[0].as_py(), pos[-1].as_py()) if len(pos) else (None, None)
        written.append((path, target, len(pos), size, *span))
    added = _native.position_delete_file_rows(io, md, written, scanned if snapshot_id is None else None)
    return PositionDeletes(pa.table(added), pa.table(added).slice(0, 0))
