"""A distributed MERGE for PySpark users: ``icefloe.spark.merge(spark, table, source_df,
on=..., when_matched_update=..., when_matched_delete=..., when_not_matched_insert=...)``
(needs pandas, as PySpark's ``mapInArrow`` does).

Merge-on-read, as Java's Spark ``MERGE INTO`` on a ``write.merge.mode=merge-on-read`` table:
the source is joined (left outer) with the table's rows read through the ``icefloe`` data
source at the current snapshot with ``_file`` and ``_pos``; Spark evaluates the clauses. The
target rows matched by a delete or update clause get deletion vectors (v3, merged with the
live ones) or position delete files (v2), written on the executors; updated rows and inserted
source rows are written as new data files; the driver commits both in one row delta validated
from the snapshot read (as ``icefloe.spark.update``).

Spark's rules are kept: a target row matched by more than one source row fails the merge
(Spark's ``MERGE_CARDINALITY_VIOLATION``) when there is a matched clause, whatever the
clauses' conditions; a NULL key matches nothing (``=`` is not ``<=>``); the first matched
clause whose condition holds applies (here: the delete clause, then the update clauses in
order); a matched row no clause applies to, and a target row no source row matches, are kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from .. import _native
from ..errors import InvalidArgumentError
from ..executor.write import data_files_from_ipc
from ..update.row_deletes import check_isolation_level, commit_row_changes, discard_files
from .options import source_options
from .row_update import _write_data, _write_deletes
from .source import register

__all__ = ["MergeResult", "merge"]

_ACTION = "__icefloe_merge_action"
_FILE = "__icefloe_merge_file"
_POS = "__icefloe_merge_pos"
_DELETE, _INSERT = -1, -2  # update clauses are numbered 0, 1, ...


@dataclass(frozen=True)
class MergeResult:
    """What a :func:`merge` did."""

    snapshot_id: int | None  # the new snapshot (None when nothing changed)
    rows_updated: int
    rows_deleted: int
    rows_inserted: int
    data_files_added: int
    delete_files_added: int
    delete_files_removed: int


def _clauses(value: Any, what: str) -> list[tuple[str | None, Any]]:
    """``value`` as ``[(condition or None, payload)]``: a payload, a ``(condition, payload)``
    pair, or a list of them."""
    if value is None:
        return []
    if isinstance(value, tuple):
        if len(value) != 2:
            raise InvalidArgumentError(f"{what} takes (condition, assignments), got {len(value)} items")
        return [(value[0], value[1])]
    if isinstance(value, list):
        out: list[tuple[str | None, Any]] = []
        for v in value:
            out.extend(_clauses(v, what))
        return out
    return [(None, value)]


def _on(on: str | Sequence[str]) -> str:
    if isinstance(on, str):
        return on
    cols = list(on)
    if not cols:
        raise InvalidArgumentError("merge needs a join condition or join columns (on=)")
    return " AND ".join(f"t.`{c}` = s.`{c}`" for c in cols)


def _assignments(value: Any, columns: list[str], what: str) -> dict[str, str]:
    if value == "*":
        return {c: f"s.`{c}`" for c in columns}
    if not isinstance(value, Mapping):
        raise InvalidArgumentError(f"{what} takes a dict of column -> expression or '*'")
    unknown = sorted(c for c in value if c not in columns)
    if unknown:
        raise InvalidArgumentError(f"{what} sets columns the table does not have: {', '.join(unknown)}")
    return dict(value)


def merge(
    spark: Any,
    table: Any,
    source_df: Any,
    on: str | Sequence[str],
    *,
    when_matched_update: Any = None,
    when_matched_delete: bool | str | None = None,
    when_not_matched_insert: Any = None,
    isolation_level: str = "serializable",
) -> MergeResult:
    """Merges ``source_df`` (a Spark DataFrame, aliased ``s``) into ``table`` (an
    :class:`icefloe.Table` loaded from a catalog, aliased ``t``) in one commit.

    - ``on``: a Spark SQL condition over ``t`` and ``s`` (``"t.id = s.id"``), or join
      column names present in both (``["id"]``).
    - ``when_matched_update``: ``"*"`` or ``{"col": "expression"}`` (other columns keep the
      target's values), optionally ``(condition, assignments)``, or a list of those, tried in
      order.
    - ``when_matched_delete``: ``True`` or a condition; tried before the update clauses.
    - ``when_not_matched_insert``: ``"*"`` or ``{"col": "expression over s"}`` (other
      columns NULL), optionally ``(condition, assignments)``.

    The table must be format version 2 or later. The table object is refreshed."""
    from pyspark.sql import functions as F

    if table.catalog is None or table.identifier is None:
        raise InvalidArgumentError("merge needs a table loaded from a catalog (it commits)")
    isolation_level = check_isolation_level(isolation_level)
    updates = _clauses(when_matched_update, "when_matched_update")
    inserts = _clauses(when_not_matched_insert, "when_not_matched_insert")
    if len(inserts) > 1:
        raise InvalidArgumentError("merge takes one when_not_matched_insert clause")
    if when_matched_delete is None or when_matched_delete is False:
        delete_cond: str | None = None
        has_delete = False
    else:
        has_delete = True
        delete_cond = None if when_matched_delete is True else str(when_matched_delete)
    if not updates and not inserts and not has_delete:
        raise InvalidArgumentError("merge needs at least one clause")

    table.refresh()
    md = table.metadata
    if md.format_version < 2:
        raise InvalidArgumentError("merge needs format version 2 or later (this table is v1)")
    columns = [f.name for f in table.schema().fields]
    update_sets = [(c, _assignments(a, columns, "when_matched_update")) for c, a in updates]
    insert_sets = [(c, _assignments(a, columns, "when_not_matched_insert")) for c, a in inserts]

    register(spark)  # the target rows are read through the icefloe data source
    current = md.current_snapshot()
    options = source_options(table.catalog.name, table.catalog.properties)
    reader = spark.read.format("icefloe").options(**options).option("metadata-columns", "_file,_pos")
    if current is not None:
        reader = reader.option("snapshot-id", str(current.snapshot_id))
    target = reader.load(".".join(table.identifier))
    types = {f.name: f.dataType for f in target.schema.fields}

    def cond(c: str | None) -> Any:
        return F.lit(True) if c is None else F.expr(c)

    matched = F.col("t._file").isNotNull()
    action = F.when(~matched & cond(insert_sets[0][0]) if insert_sets else F.lit(False), F.lit(_INSERT))
    if has_delete:
        action = action.when(matched & cond(delete_cond), F.lit(_DELETE))
    for i, (c, _) in enumerate(update_sets):
        action = action.when(matched & cond(c), F.lit(i))
    values = []
    for col in columns:
        value = None
        for i, (_, sets) in enumerate(update_sets):
            e = F.expr(sets[col]) if col in sets else F.col(f"t.`{col}`")
            value = F.when(action == i, e) if value is None else value.when(action == i, e)
        if insert_sets:
            e = F.expr(insert_sets[0][1][col]) if col in insert_sets[0][1] else F.lit(None)
            value = F.when(action == _INSERT, e) if value is None else value.when(action == _INSERT, e)
        values.append((F.lit(None) if value is None else value).cast(types[col]).alias(col))

    how = "left" if insert_sets else "inner"  # without an insert, unmatched source rows do nothing
    joined = source_df.alias("s").join(target.alias("t"), F.expr(_on(on)), how)
    if update_sets or has_delete:
        # Spark's cardinality rule: one target row, at most one source row
        dup = (
            joined.where(matched)
            .groupBy(F.col("t._file"), F.col("t._pos"))
            .count()
            .where("count > 1")
            .limit(1)
            .collect()
        )
        if dup:
            raise InvalidArgumentError(
                "MERGE_CARDINALITY_VIOLATION: the ON search condition of the MERGE matched a single row "
                "of the target table with multiple rows of the source table"
            )
    staged = (
        joined.select(
            action.alias(_ACTION), F.col("t._file").alias(_FILE), F.col("t._pos").alias(_POS), *values
        )
        .where(F.col(_ACTION).isNotNull())
        .persist()
    )
    try:
        return _write_and_commit(table, current, staged, columns, isolation_level)
    finally:
        staged.unpersist()


def _write_and_commit(table: Any, current: Any, staged: Any, columns: list[str], isolation_level: str):
    from pyspark.sql import functions as F

    md = table.metadata
    metadata_json = md.to_json()
    _native.LocationProvider(md)  # refuses a deprecated location property before any task runs
    io_properties = table.io.properties_for(md.location)
    counts = {r[_ACTION]: r["count"] for r in staged.groupBy(_ACTION).count().collect()}
    inserted = counts.pop(_INSERT, 0)
    deleted = counts.pop(_DELETE, 0)
    updated = sum(counts.values())
    if not (inserted or deleted or updated):
        return MergeResult(None, 0, 0, 0, 0, 0, 0)

    added = removed_t = None
    if deleted or updated:
        deletes = (
            staged.where(F.col(_ACTION) != _INSERT)
            .select(F.col(_FILE).alias("_file"), F.col(_POS).alias("_pos"))
            .repartition("_file")
            .mapInArrow(
                _write_deletes(metadata_json, io_properties), "added binary, removed binary, rows long"
            )
            .collect()
        )
        added = pa.concat_tables(
            [data_files_from_ipc(r["added"]) for r in deletes], promote_options="default"
        )
        removed = [data_files_from_ipc(r["removed"]) for r in deletes]
        removed_t = pa.concat_tables(removed, promote_options="default") if removed else None
    files_t = None
    if inserted or updated:
        try:
            written = (
                staged.where(F.col(_ACTION) != _DELETE)
                .select(*columns)
                .mapInArrow(
                    _write_data(metadata_json, table.schema().to_json(), io_properties), "files binary"
                )
                .collect()
            )
        except BaseException:
            # the delete files of the first stage will never be committed
            if added is not None:
                discard_files(table, sorted(set(added.column("file_path").to_pylist())))
            raise
        files = [data_files_from_ipc(r["files"]) for r in written]
        files_t = pa.concat_tables(files, promote_options="default") if files else None
    commit_row_changes(
        table,
        None if current is None else current.snapshot_id,
        isolation_level,
        added_deletes=added,
        removed_deletes=removed_t,
        added_data=files_t,
    )
    head = table.current_snapshot()
    return MergeResult(
        snapshot_id=None if head is None else head.snapshot_id,
        rows_updated=updated,
        rows_deleted=deleted,
        rows_inserted=inserted,
        data_files_added=0 if files_t is None else files_t.num_rows,
        delete_files_added=0 if added is None else added.num_rows,
        delete_files_removed=0 if removed_t is None else removed_t.num_rows,
    )
