"""``table.upsert(df, join_cols)``: PyIceberg 0.11's API and result, written merge-on-read in
one commit.

The source rows are matched to the table's rows on ``join_cols`` (default: the schema's
identifier fields). A matched row whose other source columns differ from the table's is
updated: the old row gets a deletion vector (v3) or a position delete (v2), written by the
row-level delete's code (``icefloe.executor.row_deletes.delete_positions``), and the source
row is written as a new data file (v1 tables, which have no delete files, rewrite the data files
holding updated rows without them instead); an identical row is left alone (PyIceberg's rule; with
``skip_identical_rows=False`` every matched row is rewritten). Rows that match nothing are
inserted. It all commits as one row delta validated from the snapshot read, limited to the
matched keys, as the row-level delete (``commit_row_changes``): a concurrent commit that
adds or deletes rows of those keys makes it fail (and its files are removed again).

Errors, as PyIceberg: neither action asked for, no join columns, a join column missing,
duplicate keys in the source, or duplicate rows in the table for a matched key
(``InvalidArgumentError``, a ``ValueError``); a source column whose type cannot be written
to the table's raises ``InvalidArgumentError`` naming it.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from .. import _native
from ..errors import InvalidArgumentError
from ..executor.read import read_tasks
from ..executor.row_deletes import delete_positions
from ..executor.write import _conform_batch, write_data_files
from ..executor.write import data_files_from_ipc as _from_ipc
from ..expressions import AlwaysFalse, And, EqualTo, Expression, In, Or
from .row_deletes import check_isolation_level, commit_row_changes, discard_files

__all__ = ["UpsertResult", "upsert"]

_SOURCE_INDEX = "__icefloe_source_index"
_TARGET_INDEX = "__icefloe_target_index"


@dataclass(frozen=True)
class UpsertResult:
    """PyIceberg's result: how many rows were updated and inserted."""

    rows_updated: int = 0
    rows_inserted: int = 0


def _source(df: Any) -> pa.Table:
    if isinstance(df, pa.Table):
        return df
    if isinstance(df, pa.RecordBatch):
        return pa.Table.from_batches([df])
    if isinstance(df, pa.RecordBatchReader):
        return df.read_all()
    raise InvalidArgumentError(
        f"upsert takes a pyarrow Table, RecordBatch or reader, not {type(df).__name__}"
    )


def _join_columns(
    md: _native.TableMetadata, join_cols: Sequence[str] | None, case_sensitive: bool
) -> list[str]:
    """The join columns by their names in the table schema."""
    schema = md.schema()
    if join_cols is None:
        names = []
        for field_id in schema.identifier_field_ids:
            name = schema.name_by_id(field_id)
            if name is None:
                raise InvalidArgumentError(f"Field-ID could not be found: {field_id}")
            names.append(name)
        join_cols = names
    if isinstance(join_cols, str):
        join_cols = [join_cols]
    if not join_cols:
        raise InvalidArgumentError(
            "Join columns could not be found, please set identifier-field-ids or pass in explicitly."
        )
    out = []
    for col in join_cols:
        field = schema.find_field(col, case_sensitive=case_sensitive)
        if field is None:
            raise InvalidArgumentError(f"join column '{col}' is not in the table schema", field=col)
        name = next(n for i, n in schema.column_names() if i == field.id)
        if "." in name:
            raise InvalidArgumentError(f"join column '{col}' is nested; join on top-level columns", field=col)
        out.append(name)
    return out


def _source_names(source: pa.Table, md: _native.TableMetadata, case_sensitive: bool) -> pa.Table:
    """The source with its columns named as the table names them (only the case may differ,
    when not ``case_sensitive``)."""
    if case_sensitive:
        return source
    schema = md.schema()
    names = []
    for n in source.column_names:
        field = schema.find_field(n, case_sensitive=False)
        names.append(field.name if field is not None else n)
    return source.rename_columns(names)


def _match_filter(keys: pa.Table, join_cols: list[str]) -> Expression:
    """The rows whose key is one of ``keys`` (distinct, without nulls: a null key matches
    nothing, as in SQL and in pyarrow's join)."""
    rows = keys.to_pylist()
    if len(join_cols) == 1:
        values = [r[join_cols[0]] for r in rows]
        return In(join_cols[0], values) if values else AlwaysFalse()
    terms = [And(*(EqualTo(c, r[c]) for c in join_cols)) for r in rows]
    if not terms:
        return AlwaysFalse()
    return terms[0] if len(terms) == 1 else Or(*terms)


def _duplicates(t: pa.Table, cols: list[str]) -> bool:
    counts = t.select(cols).group_by(cols).aggregate([([], "count_all")])
    return counts.filter(pc.field("count_all") > 1).num_rows > 0


def _differs(a: pa.Table, b: pa.Table, columns: list[str]) -> list[bool]:
    """Row by row, whether any of ``columns`` differs between ``a`` and ``b`` (compared as
    Python values, as PyIceberg: nested values compare whole, NaN differs from NaN)."""
    out = [False] * a.num_rows
    for c in columns:
        for i, (x, y) in enumerate(zip(a.column(c).to_pylist(), b.column(c).to_pylist(), strict=True)):
            if not out[i] and x != y:
                out[i] = True
    return out


def _rows_kept(
    table: Any, snapshot_id: int | None, drop: dict[str, list[int]], io_properties: Any
) -> pa.Table:
    """The rows of the data files ``drop`` names (at ``snapshot_id``) other than the
    positions it lists: what a copy-on-write rewrite of those files keeps."""
    plan = table.scan(snapshot_id=snapshot_id).plan().table
    plan = plan.filter(pc.is_in(plan.column("file_path"), value_set=pa.array(sorted(drop))))
    kept = []
    for batch in read_tasks(plan, metadata_columns=("_file", "_pos"), io_properties=io_properties):
        if batch.num_rows == 0:
            continue
        path = batch.column(batch.schema.get_field_index("_file"))[0].as_py()
        gone = pc.is_in(
            batch.column(batch.schema.get_field_index("_pos")), value_set=pa.array(drop[path], pa.int64())
        )
        kept.append(pa.Table.from_batches([batch.filter(pc.invert(gone))]).drop_columns(["_file", "_pos"]))
    return pa.concat_tables(kept) if kept else pa.table({})


def upsert(
    table: Any,
    df: Any,
    join_cols: Sequence[str] | None = None,
    when_matched_update_all: bool = True,
    when_not_matched_insert_all: bool = True,
    case_sensitive: bool = True,
    branch: str | None = None,
    snapshot_properties: Mapping[str, str] | None = None,
    *,
    skip_identical_rows: bool = True,
    isolation_level: str = "serializable",
) -> UpsertResult:
    """See the module documentation."""
    if table.catalog is None:
        raise InvalidArgumentError("upsert needs a table loaded from a catalog (it commits)")
    if not when_matched_update_all and not when_not_matched_insert_all:
        raise InvalidArgumentError("no upsert options selected...exiting")
    isolation_level = check_isolation_level(isolation_level)
    md = table.metadata
    keys = _join_columns(md, join_cols, case_sensitive)
    source = _source_names(_source(df), md, case_sensitive)
    for k in keys:
        if k not in source.column_names:
            raise InvalidArgumentError(f"join column '{k}' is not in the source", field=k)
    if _duplicates(source, keys):
        raise InvalidArgumentError(
            "Duplicate rows found in source dataset based on the key columns. No upsert executed"
        )
    # the source as the table's Arrow types: a column that cannot be written fails here,
    # before anything is read (and the join compares like with like)
    arrow_schema = _native.data_file_arrow_schema(md.schema())
    given = list(source.column_names)
    rows = pa.Table.from_batches(
        [_conform_batch(b, arrow_schema) for b in source.to_batches() if b.num_rows],
        schema=arrow_schema,
    )
    if source.num_rows == 0:
        return UpsertResult()
    compared = [c for c in given if c not in keys]

    distinct = rows.select(keys).group_by(keys).aggregate([]).drop_null()
    match = _match_filter(distinct, keys)
    plan = table.scan(row_filter=match, ref=branch, case_sensitive=case_sensitive).plan()
    snapshot_id = plan.snapshot_id
    io_properties = table.io.properties_for(md.location)
    target = (
        pa.Table.from_batches(
            list(read_tasks(plan.table, metadata_columns=("_file", "_pos"), io_properties=io_properties))
        )
        if plan.table.num_rows
        else None
    )

    source_index = rows.select(keys).append_column(_SOURCE_INDEX, pa.array(range(rows.num_rows), pa.int64()))
    if target is not None and target.num_rows:
        if _duplicates(target, keys):
            raise InvalidArgumentError("Target table has duplicate rows, aborting upsert")
        target_index = target.select(keys).append_column(
            _TARGET_INDEX, pa.array(range(target.num_rows), pa.int64())
        )
        pairs = source_index.join(target_index, keys=keys, join_type="inner").select(
            [_SOURCE_INDEX, _TARGET_INDEX]
        )
    else:
        pairs = pa.table({_SOURCE_INDEX: pa.array([], pa.int64()), _TARGET_INDEX: pa.array([], pa.int64())})
    matched_src = pairs.column(_SOURCE_INDEX)
    matched_tgt = pairs.column(_TARGET_INDEX)

    update_src: pa.Array = pa.array([], pa.int64())
    update_tgt: pa.Array = pa.array([], pa.int64())
    if when_matched_update_all and pairs.num_rows:
        if skip_identical_rows:
            changed = pa.array(
                _differs(rows.take(matched_src), target.take(matched_tgt), compared)  # type: ignore[union-attr]
            )
            update_src = matched_src.filter(changed).combine_chunks()
            update_tgt = matched_tgt.filter(changed).combine_chunks()
        else:
            update_src, update_tgt = matched_src.combine_chunks(), matched_tgt.combine_chunks()
    insert_src: pa.Array = pa.array([], pa.int64())
    if when_not_matched_insert_all:
        is_matched = pc.is_in(
            pa.array(range(rows.num_rows), pa.int64()), value_set=matched_src.combine_chunks()
        )
        insert_src = pc.indices_nonzero(pc.invert(is_matched)).cast(pa.int64())
    if len(update_src) == 0 and len(insert_src) == 0:
        return UpsertResult()
    # the source's rows as given: a column it left out is null in the new rows (PyIceberg's)
    new_rows = rows.take(pa.concat_arrays([update_src, insert_src]))
    written: list[str] = []
    try:
        added_data = write_data_files(md, new_rows, io_properties=io_properties)
        written += added_data.column("file_path").to_pylist()
        whole: list[str] = []
        added_deletes = removed_deletes = None
        if len(update_tgt):
            old = target.take(update_tgt)  # type: ignore[union-attr]
            positions: dict[str, list[int]] = {}
            for path, pos in zip(
                old.column("_file").to_pylist(), old.column("_pos").to_pylist(), strict=True
            ):
                positions.setdefault(path, []).append(pos)
            if md.format_version < 2:
                # v1 has no delete files: the files holding updated rows are rewritten
                # without them (copy-on-write, as PyIceberg does on every version)
                whole = sorted(positions)
                kept = _rows_kept(table, snapshot_id, positions, io_properties)
                if kept.num_rows:
                    rewritten = write_data_files(md, kept, io_properties=io_properties)
                    written += rewritten.column("file_path").to_pylist()
                    added_data = pa.concat_tables([added_data, rewritten])
            else:
                chunks = {p: [pa.array(sorted(v), pa.int64())] for p, v in positions.items()}
                puffin = _native.LocationProvider(md).new_data_location(f"{uuid.uuid4()}-deletes.puffin")
                # on a branch the data files and their live deletes are the branch head's
                _, _, whole, added_ipc, removed_ipc = delete_positions(
                    md, plan.table, chunks, puffin, io_properties, snapshot_id
                )
                added_deletes = _from_ipc(added_ipc) if added_ipc else None
                removed_deletes = _from_ipc(removed_ipc) if removed_ipc else None
                if added_deletes is not None:
                    written += added_deletes.column("file_path").to_pylist()
    except BaseException:
        discard_files(table, written)
        raise
    commit_row_changes(
        table,
        snapshot_id,
        isolation_level,
        added_deletes=added_deletes,
        removed_deletes=removed_deletes,
        added_data=added_data,
        removed_data=whole,
        branch=branch,
        conflict_filter=match,
        snapshot_properties=snapshot_properties,
        plan=plan.table,
    )
    return UpsertResult(rows_updated=len(update_src), rows_inserted=len(insert_src))
