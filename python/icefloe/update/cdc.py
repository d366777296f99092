"""``table.write_changes(upsert=..., delete=..., insert=..., equality_fields=...)``: the
row-delta path of CDC-style writers (Flink's upsert sink, Debezium consumers), with
equality deletes instead of reading the table.

One commit (a row delta) adds:

- equality delete files for the keys of ``delete`` and of ``upsert`` rows
  (``icefloe.executor.equality_deletes.write_equality_deletes``), and
- data files for the rows of ``upsert`` and ``insert``.

The spec gives equality deletes a reach by sequence number: they delete matching rows of
data files committed *before* (a lower data sequence number), never the rows this commit
adds. So an ``upsert`` row replaces the table's rows of its key, and a key that is both in
``delete`` and ``insert`` ends with the inserted row. Keys of ``upsert`` must be unique
(which row would win is otherwise undefined), and on a partitioned table the equality fields
of an upsert must include the partition source columns, since an equality delete reaches
only the data files of its own partition (Flink's upsert mode has the same rule). Nothing is read, so nothing is validated
against concurrent commits, as Flink's committer: a change committed concurrently is
ordered before or after this one by its sequence number.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from ..errors import InvalidArgumentError
from ..executor.equality_deletes import write_equality_deletes
from ..executor.write import write_data_files

__all__ = ["ChangesResult", "write_changes"]


@dataclass(frozen=True)
class ChangesResult:
    """What :func:`write_changes` committed."""

    snapshot_id: int | None
    data_files_added: int
    delete_files_added: int


def _table(rows: Any, what: str) -> pa.Table | None:
    if rows is None:
        return None
    if isinstance(rows, pa.RecordBatch):
        rows = pa.Table.from_batches([rows])
    elif isinstance(rows, pa.RecordBatchReader):
        rows = rows.read_all()
    if not isinstance(rows, pa.Table):
        raise InvalidArgumentError(f"{what} takes a pyarrow Table, RecordBatch or reader")
    return rows if rows.num_rows else None


def write_changes(
    table: Any,
    *,
    upsert: Any = None,
    delete: Any = None,
    insert: Any = None,
    equality_fields: Sequence[str] | None = None,
    branch: str | None = None,
    snapshot_properties: Mapping[str, str] | None = None,
) -> ChangesResult:
    """Commits ``upsert``, ``delete`` and ``insert`` rows (pyarrow) to ``table`` as one row
    delta with equality deletes on ``equality_fields`` (default: the schema's identifier
    fields). ``delete`` rows need the equality columns (and the partition source columns
    of a partitioned table). The table must be format version 2 or later."""
    md = table.metadata
    if md.format_version < 2:
        raise InvalidArgumentError("equality deletes need format version 2 or later (this table is v1)")
    schema = md.schema()
    if equality_fields is None:
        equality_fields = [n for n in (schema.name_by_id(i) for i in schema.identifier_field_ids) if n]
        if not equality_fields:
            raise InvalidArgumentError(
                "write_changes needs equality_fields (the table has no identifier fields)"
            )
    if isinstance(equality_fields, str):
        equality_fields = [equality_fields]
    up, gone, new = _table(upsert, "upsert"), _table(delete, "delete"), _table(insert, "insert")
    if up is not None:
        missing = [c for c in equality_fields if c not in up.column_names]
        if missing:
            raise InvalidArgumentError(f"upsert rows lack the equality column(s) {', '.join(missing)}")
        # an equality delete reaches only its own partition: a row whose partition changed
        # would keep its old version (Flink's upsert mode has the same rule)
        sources = {schema.name_by_id(f.source_id) for f in md.spec().fields}
        outside = sorted(n for n in sources if n is not None and n not in equality_fields)
        if outside:
            raise InvalidArgumentError(
                "an upsert into a partitioned table needs the partition source column(s) "
                f"{', '.join(outside)} among the equality fields"
            )
        keys = up.select(list(equality_fields))
        if keys.group_by(list(equality_fields)).aggregate([]).num_rows != keys.num_rows:
            raise InvalidArgumentError("upsert rows have duplicate keys (equality fields)")
    io_properties = table.io.properties_for(md.location)
    deleted = [t for t in (gone, up) if t is not None]
    added = [t for t in (up, new) if t is not None]
    if not deleted and not added:
        return ChangesResult(None, 0, 0)
    with table.transaction() as tx:
        # each input projected by the writer: delete rows may hold only the key columns
        written = [
            write_equality_deletes(md, t, equality_fields, io_properties=io_properties) for t in deleted
        ]
        delete_files = pa.concat_tables(written) if written else None
        if delete_files is not None:
            tx.own_files(delete_files.column("file_path").to_pylist())
        data_files = (
            write_data_files(
                md, pa.concat_tables(added, promote_options="permissive"), io_properties=io_properties
            )
            if added
            else None
        )
        if data_files is not None:
            tx.own_files(data_files.column("file_path").to_pylist())
        tx.row_delta(
            add_data_files=data_files if data_files is not None else (),
            add_delete_files=delete_files if delete_files is not None else (),
            branch=branch,
            snapshot_properties=snapshot_properties,
        )
    ref = table.metadata.refs.get(branch or "main")
    return ChangesResult(
        snapshot_id=None if ref is None else ref.snapshot_id,
        data_files_added=0 if data_files is None else data_files.num_rows,
        delete_files_added=0 if delete_files is None else delete_files.num_rows,
    )
