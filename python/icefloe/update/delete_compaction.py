"""Delete file maintenance: ``table.rewrite_position_delete_files(...)`` in one process and
``icefloe.spark.rewrite_position_delete_files(spark, table, ...)`` with Spark's executors,
as Java's ``rewrite_position_delete_files`` procedure (``RewritePositionDeleteFilesSparkAction``).

The groups are planned in Rust (``icefloe::maintenance::rewrite_position_deletes``: which
position delete files and DVs, grouped by partition, Java's options). Each group is cut into
units that ``icefloe.executor.delete_compaction.rewrite_delete_unit`` reads, dropping the
deletes of data files that are no longer live (dangling deletes), and writes anew: one DV
per data file in v3 (so an upgraded v2 table's position delete files become DVs), one
position delete file per data file in v2. Groups are committed as Java's
``RewritePositionDeletesCommitManager`` does: a ``replace`` snapshot removing the group's
delete files and adding the new ones with the group's largest data sequence number,
validated from the starting snapshot; all groups in one commit, or with
``partial-progress.enabled`` in up to ``partial-progress.max-commits`` commits (a failed
commit is logged and its groups' files deleted). The files of a failed commit are deleted.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from .. import _native
from ..executor.delete_compaction import DeleteUnit, rewrite_delete_unit
from .file_groups import commit_groups, local_map, rewrite_units
from .transaction import _expression

__all__ = [
    "RewritePositionDeleteFilesResult",
    "PositionDeleteGroupResult",
    "rewrite_position_delete_files",
]

MapDeleteUnits = Callable[[Callable[[DeleteUnit], bytes], Sequence[DeleteUnit]], list[bytes]]


@dataclass(frozen=True)
class PositionDeleteGroupResult:
    """One rewritten group (Java's ``RewritePositionDeleteFiles.FileGroupRewriteResult``)."""

    global_index: int
    partition_index: int
    rewritten_delete_files_count: int
    added_delete_files_count: int
    rewritten_bytes_count: int
    added_bytes_count: int


@dataclass(frozen=True)
class RewritePositionDeleteFilesResult:
    """The procedure's output columns, and the groups committed."""

    rewritten_delete_files_count: int = 0
    added_delete_files_count: int = 0
    rewritten_bytes_count: int = 0
    added_bytes_count: int = 0
    snapshot_ids: tuple[int, ...] = ()
    groups: tuple[PositionDeleteGroupResult, ...] = field(default=())


def _content_size(rows: pa.Table) -> int:
    """Java's ``ScanTaskUtil.contentSizeInBytes`` summed: a DV's blob size, else the file's."""
    total = 0
    for fmt, size, blob in zip(
        rows.column("file_format").to_pylist(),
        rows.column("file_size_in_bytes").to_pylist(),
        rows.column("content_size_in_bytes").to_pylist()
        if "content_size_in_bytes" in rows.column_names
        else [None] * rows.num_rows,
        strict=True,
    ):
        total += blob if str(fmt).lower() == "puffin" and blob is not None else size
    return total


def rewrite_position_delete_files(
    table: Any,
    *,
    where: Any = None,
    options: Mapping[str, Any] | None = None,
    case_sensitive: bool = True,
    snapshot_properties: Mapping[str, str] | None = None,
    map_units: MapDeleteUnits | None = None,
) -> RewritePositionDeleteFilesResult:
    """Rewrites the table's position delete files as Java's ``rewrite_position_delete_files``
    procedure does (see the module documentation). ``where``: a filter (text or expression)
    on the table's columns choosing the partitions whose delete files are rewritten.
    ``options``: Java's option names (``target-file-size-bytes``, ``min-file-size-bytes``,
    ``max-file-size-bytes``, ``min-input-files``, ``rewrite-all``,
    ``max-file-group-size-bytes``, ``rewrite-job-order``, ``partial-progress.enabled``,
    ``partial-progress.max-commits``, ``max-concurrent-file-group-rewrites``).
    ``map_units(fn, units)`` runs ``fn`` on every unit (Spark passes its executors; by
    default threads in this process)."""
    if table.catalog is not None and table.identifier is not None:
        table.refresh()
    md = table.metadata
    if md.current_snapshot_id is None:
        return RewritePositionDeleteFilesResult()
    opts = {str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in (options or {}).items()}
    plan = _native.plan_rewrite_position_delete_files(
        table.io, md, options=opts, filter=_expression(where), case_sensitive=case_sensitive
    )
    groups = plan["groups"]
    if not groups:
        return RewritePositionDeleteFilesResult()
    starting = plan["starting_snapshot_id"]
    metadata_json = md.to_json()
    io_properties = dict(table.io.properties_for(md.location) or {})
    operation_id = str(uuid.uuid4())
    units: list[DeleteUnit] = []
    owner: list[int] = []
    for gi, g in enumerate(groups):
        for ui, payload in enumerate(g["units"]):
            prefix = f"{g['global_index']:05d}-{ui}-{operation_id}"
            units.append((metadata_json, payload, io_properties, prefix))
            owner.append(gi)
    run = map_units or local_map(plan["max_concurrent_file_group_rewrites"])
    new_files = rewrite_units(len(groups), units, owner, rewrite_delete_unit, run)
    outcome = commit_groups(
        plan,
        len(groups),
        lambda batch: _commit(
            table, [groups[i] for i in batch], [new_files[i] for i in batch], starting, snapshot_properties
        ),
        "rewrite_position_delete_files",
    )
    done = []
    for i in outcome.committed:
        added = [t for t in new_files[i] if t.num_rows]
        done.append(
            PositionDeleteGroupResult(
                global_index=groups[i]["global_index"],
                partition_index=groups[i]["partition_index"],
                rewritten_delete_files_count=len(groups[i]["rewritten_delete_files"]),
                added_delete_files_count=sum(t.num_rows for t in added),
                rewritten_bytes_count=groups[i]["input_size"],
                added_bytes_count=sum(_content_size(t) for t in added),
            )
        )
    return RewritePositionDeleteFilesResult(
        rewritten_delete_files_count=sum(g.rewritten_delete_files_count for g in done),
        added_delete_files_count=sum(g.added_delete_files_count for g in done),
        rewritten_bytes_count=sum(g.rewritten_bytes_count for g in done),
        added_bytes_count=sum(g.added_bytes_count for g in done),
        snapshot_ids=tuple(outcome.snapshot_ids),
        groups=tuple(done),
    )


def _commit(
    table: Any,
    groups: Sequence[dict],
    files: Sequence[Sequence[pa.Table]],
    starting: int,
    snapshot_properties: Mapping[str, str] | None,
) -> int:
    """One ``replace`` snapshot for these groups (Java's ``RewritePositionDeletesCommitManager``);
    a failed commit deletes the new files (the transaction owns them). Groups of several
    partition specs get one rewrite per spec in the same transaction."""
    by_spec: dict[int, list[int]] = {}
    for i, g in enumerate(groups):
        by_spec.setdefault(g["spec_id"], []).append(i)
    with table.transaction() as tx:
        for spec_id, members in by_spec.items():
            added = [t for i in members for t in files[i] if t.num_rows]
            seqs: list[int | None] = [
                groups[i]["max_rewritten_data_sequence_number"]
                for i in members
                for t in files[i]
                for _ in range(t.num_rows)
            ]
            new_paths = sorted({p for t in added for p in t.column("file_path").to_pylist()})
            removed = [d for i in members for d in groups[i]["rewritten_delete_files"]]
            rows = pa.table(
                {
                    "file_path": pa.array([d[0] for d in removed], pa.string()),
                    "content_offset": pa.array([d[1] for d in removed], pa.int64()),
                }
            )
            tx.own_files(new_paths)
            tx.rewrite_files(
                [],
                (),
                remove_delete_files=rows,
                add_delete_files=pa.concat_tables(added) if added else (),
                delete_sequence_numbers=seqs,
                validate_from_snapshot=starting,
                spec_id=spec_id,
                snapshot_properties=snapshot_properties,
            )
    snap = table.metadata.snapshot_by_ref("main")
    return snap.snapshot_id if snap is not None else table.metadata.current_snapshot_id
