"""Deleting the rows that match a filter: ``table.delete(where)`` in one process, and
``icefloe.spark.delete`` with Spark's executors doing the reading and writing (the
executor side is ``icefloe.executor.row_deletes``).

The plan of the rows matching ``where`` (one task per data file, so that each data file gets
exactly one new delete file) is cut into groups. For each group, the rows that match are
read with ``icefloe.executor.read.read_tasks`` (the table's existing deletes and the filter
applied, ``_file``/``_pos`` requested); a data file all of whose rows match, and which has
no deletes yet, is removed whole; for the others the positions found are written with
``icefloe.executor.position_deletes.write_position_deletes``: a deletion vector per data file in v3 (merged
with that file's live DV and position deletes, one Puffin file per group), position delete
files in v2. One row delta commits it all, validated as Java's Spark merge-on-read DELETE:
from the scanned snapshot and limited to ``where``, the data files must still exist, none
was removed meanwhile, no conflicting delete files were added, and under ``serializable``
isolation no conflicting data files either. If the commit fails, the delete files written
for it are removed again (kept when the commit's outcome is unknown).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from .. import _native
from ..errors import InvalidArgumentError

# Arrow IPC stream bytes both ways: what crosses between the driver and the group workers
from ..executor.row_deletes import Group, GroupResult, delete_in_group
from ..executor.write import data_files_from_ipc as _from_ipc
from ..executor.write import data_files_to_ipc as _ipc

__all__ = ["DeleteResult", "delete_rows", "check_isolation_level"]


@dataclass(frozen=True)
class DeleteResult:
    """What a delete did."""

    snapshot_id: int | None  # the new snapshot (None when nothing matched)
    deleted_rows: int
    data_files: int  # data files that got new deletes
    data_files_removed: int  # data files removed whole
    delete_files_added: int
    delete_files_removed: int


def check_isolation_level(name: str) -> str:
    """``name`` as the commit reads it (``serializable`` or ``snapshot``, the rule of the Rust
    commit layer, any case as Java's ``IsolationLevel.fromName``); otherwise
    ``InvalidArgumentError`` naming the argument."""
    try:
        return _native.isolation_level(name)
    except InvalidArgumentError as e:
        raise InvalidArgumentError(f"isolation_level: {e}", field="isolation_level") from None


def _local_map(fn: Callable[[Group], GroupResult], groups: Sequence[Group]) -> list[GroupResult]:
    return [fn(g) for g in groups]


def discard_files(table: Any, paths: Sequence[str]) -> None:
    """Deletes files written for a change that will not be committed (the same rule, in
    Rust, as a failed commit's: ``Transaction.own_files`` then ``abort``)."""
    if paths:
        tx = table.transaction()
        tx.own_files(paths)
        tx.abort()


def commit_row_changes(
    table: Any,
    snapshot_id: int | None,
    isolation_level: str,
    *,
    added_deletes: pa.Table | None,
    removed_deletes: pa.Table | None = None,
    added_data: pa.Table | None = None,
    removed_data: Sequence[str] = (),
    branch: str | None = None,
    conflict_filter: Any = None,
    snapshot_properties: Mapping[str, str] | None = None,
    plan: pa.Table | None = None,
) -> None:
    """Commits row-level changes read from ``snapshot_id`` as one row delta, validated as
    Java's Spark merge-on-read operations (the referenced data files still exist, nothing
    read was removed, no conflicting delete files; under ``serializable`` no conflicting data
    files either, limited to ``conflict_filter`` when given). When the commit fails, the new
    delete and data files are removed — unless its outcome is unknown, when they are kept
    (the table may reference them) and ``CommitStateUnknownError`` names them.

    ``plan``: the plan table the change was made from; on a v4 table its ``v4_leaf`` and
    ``v4_ordinal`` columns tell the commit where the data files it changes sit, so that it
    does not search the table's leaves for them."""
    new_files: set[str] = set()
    referenced: list[str] = []
    for t in (added_deletes, added_data):
        if t is not None:
            new_files |= set(t.column("file_path").to_pylist())
    if added_deletes is not None and "referenced_data_file" in added_deletes.column_names:
        referenced = sorted(set(added_deletes.column("referenced_data_file").to_pylist()) - {None})
    # the transaction owns the new files: a failed commit deletes them, one whose outcome
    # is unknown keeps them (CommitStateUnknownError names them)
    with table.transaction() as tx:
        tx.own_files(sorted(new_files))
        tx.row_delta(
            add_data_files=added_data if added_data is not None else (),
            add_delete_files=added_deletes if added_deletes is not None else (),
            remove_delete_files=removed_deletes
            if removed_deletes is not None and removed_deletes.num_rows
            else (),
            remove_data_files=list(removed_data),
            branch=branch,
            snapshot_properties=snapshot_properties,
            validate_from_snapshot=snapshot_id,
            conflict_detection_filter=conflict_filter,
            validate_data_files_exist=referenced,
            validate_deleted_files=True,
            # the level's validations (conflicting delete files; data files too when
            # serializable) are the Rust commit layer's rule
            isolation_level=isolation_level,
            plan=plan,
        )


def delete_rows(
    table: Any,
    where: Any,
    *,
    branch: str | None = None,
    isolation_level: str = "serializable",
    groups: int = 1,
    map_groups: Callable[[Callable[[Group], GroupResult], Sequence[Group]], list[GroupResult]] | None = None,
) -> DeleteResult:
    """Deletes the rows of ``table`` (loaded from a catalog) matching ``where`` (filter text or
    an expression) in one commit; see the module documentation. ``groups``: how many groups
    the data files are cut into; ``map_groups(fn, groups)`` runs ``fn`` on each group and
    returns the results in order (default: a loop in this process)."""
    if where is None or where is True:
        raise InvalidArgumentError("delete needs a filter (to delete every row, overwrite the table)")
    if table.catalog is None:
        raise InvalidArgumentError("delete needs a table loaded from a catalog (it commits)")
    isolation_level = check_isolation_level(isolation_level)
    md = table.metadata
    if md.format_version < 2:
        # v1 has no delete files: only whole data files can go (a partial match fails)
        before = dict(md.refs).get(branch or "main")
        table.delete_where(where, branch=branch)
        head = dict(table.metadata.refs).get(branch or "main")
        if head is None or (before is not None and head.snapshot_id == before.snapshot_id):
            return DeleteResult(None, 0, 0, 0, 0, 0)
        summary = dict(table.metadata.snapshot_by_id(head.snapshot_id).summary)
        return DeleteResult(
            head.snapshot_id,
            int(summary.get("deleted-records", 0)),
            0,
            int(summary.get("deleted-data-files", 0)),
            0,
            0,
        )
    plan = table.scan(row_filter=where, ref=branch).plan()
    snapshot_id = plan.snapshot_id
    n_files = plan.table.num_rows
    if n_files == 0:
        return DeleteResult(None, 0, 0, 0, 0, 0)

    n = max(1, min(n_files, groups))
    per_group = -(-n_files // n)
    # one Puffin file per group, placed as Java's DV writer places it (newDataLocation)
    locations = _native.LocationProvider(md)
    metadata_json = md.to_json()
    io_properties = table.io.properties_for(md.location)
    work = [
        (
            metadata_json,
            _ipc(plan.table.slice(i, per_group)),
            locations.new_data_location(f"{uuid.uuid4()}-deletes.puffin"),
            io_properties,
        )
        for i in range(0, n_files, per_group)
    ]
    results = (map_groups or _local_map)(delete_in_group, work)

    deleted_rows = sum(r[0] for r in results)
    touched = sum(r[1] for r in results)
    whole = [p for r in results for p in r[2]]
    added = [_from_ipc(r[3]) for r in results if r[3]]
    removed = [_from_ipc(r[4]) for r in results if r[4]]
    if not added and not whole:
        return DeleteResult(None, 0, 0, 0, 0, 0)
    added_t = pa.concat_tables(added, promote_options="default") if added else None
    removed_t = pa.concat_tables(removed, promote_options="default") if removed else None
    commit_row_changes(
        table,
        snapshot_id,
        isolation_level,
        added_deletes=added_t,
        removed_deletes=removed_t,
        removed_data=whole,
        branch=branch,
        conflict_filter=where,
        plan=plan.table,
    )
    head = dict(table.metadata.refs).get(branch or "main")
    return DeleteResult(
        snapshot_id=None if head is None else head.snapshot_id,
        deleted_rows=deleted_rows,
        data_files=touched,
        data_files_removed=len(whole),
        delete_files_added=0 if added_t is None else added_t.num_rows,
        delete_files_removed=0 if removed_t is None else removed_t.num_rows,
    )
