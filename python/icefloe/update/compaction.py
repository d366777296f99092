"""Compaction: ``table.maintenance.rewrite_data_files(...)`` in one process and
``icefloe.spark.rewrite_data_files(spark, table, ...)`` with Spark's executors doing the
reading and writing, as Java's ``rewrite_data_files`` procedure
(``RewriteDataFilesSparkAction``).

The groups are planned in Rust (``icefloe::maintenance::rewrite_data_files``: which files,
which groups, how many output files; Java's ``BinPackRewriteFilePlanner`` and its
options). Each group is cut into read units (one per output file for bin-pack, the whole
group for sort) that ``icefloe.executor.compaction.rewrite_unit`` reads with the deletes
applied and writes as new data files. Groups are committed as Java's
``RewriteDataFilesCommitManager`` does: a ``replace`` snapshot (``rewrite_files``) that
removes the group's data files and their DVs and adds the new files, validated from the
starting snapshot (no delete added since may apply to a removed file), with the starting
snapshot's sequence number so that deletes added meanwhile still apply, retried on
conflicts by the commit layer; everything in one commit, or with
``partial-progress.enabled`` in up to ``partial-progress.max-commits`` commits. The files
of a group whose commit fails are deleted.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from .. import _native
from ..errors import InvalidArgumentError, UnsupportedError
from ..executor.compaction import SortKey, Unit, rewrite_unit
from .file_groups import commit_groups, local_map, rewrite_units
from .transaction import _expression

__all__ = [
    "RewriteDataFilesResult",
    "FileGroupResult",
    "rewrite_data_files",
    "parse_sort_order",
    "remove_dangling_deletes",
]

MapUnits = Callable[[Callable[[Unit], bytes], Sequence[Unit]], list[bytes]]


@dataclass(frozen=True)
class FileGroupResult:
    """One rewritten group (Java's ``FileGroupRewriteResult``)."""

    global_index: int
    partition_index: int
    rewritten_data_files_count: int
    added_data_files_count: int
    rewritten_bytes_count: int
    removed_delete_files_count: int


@dataclass(frozen=True)
class RewriteDataFilesResult:
    """The procedure's output columns, and the groups committed."""

    rewritten_data_files_count: int = 0
    added_data_files_count: int = 0
    rewritten_bytes_count: int = 0
    failed_data_files_count: int = 0
    removed_delete_files_count: int = 0
    snapshot_ids: tuple[int, ...] = ()
    groups: tuple[FileGroupResult, ...] = field(default=())


def parse_sort_order(md: Any, sort_order: Any) -> tuple[list[SortKey], int | None]:
    """The sort keys of a sort rewrite and the table sort order id they match (or None):
    the table's sort order when ``sort_order`` is None; else Java's procedure syntax
    (``"id DESC NULLS LAST, name"``) or a list of column names or such strings. Directions
    default to ``ASC``, nulls to first for ``ASC`` and last for ``DESC`` (Java's)."""
    schema = md.schema()
    if sort_order is None:
        order = md.sort_order()
        if order.is_unsorted():
            raise InvalidArgumentError(
                "Cannot sort data without a valid sort order, table has no sort order and none provided",
                field="sort_order",
            )
        keys = []
        for f in order.fields:
            name = schema.name_by_id(f.source_id)
            if name is None:
                raise InvalidArgumentError(
                    f"sort order {order.order_id}: no column with id {f.source_id}", field="sort_order"
                )
            keys.append((name, f.transform, f.direction, f.null_order))
        return keys, order.order_id
    items = [sort_order] if isinstance(sort_order, str) else list(sort_order)
    terms = [t.strip() for item in items for t in str(item).split(",") if t.strip()]
    if not terms:
        raise InvalidArgumentError("sort_order names no column", field="sort_order")
    keys = []
    for term in terms:
        if term.lower().startswith("zorder("):
            raise UnsupportedError("z-order rewrites are not supported; give sort columns")
        words = term.split()
        name, rest = words[0], [w.upper() for w in words[1:]]
        if schema.find_field(name) is None:
            raise InvalidArgumentError(f"sort_order: no column named {name!r}", field="sort_order")
        direction = "asc"
        if rest and rest[0] in ("ASC", "DESC"):
            direction = rest.pop(0).lower()
        null_order = "nulls-first" if direction == "asc" else "nulls-last"
        if rest == ["NULLS", "FIRST"]:
            null_order = "nulls-first"
        elif rest == ["NULLS", "LAST"]:
            null_order = "nulls-last"
        elif rest:
            raise InvalidArgumentError(f"sort_order: cannot parse {term!r}", field="sort_order")
        keys.append((name, "identity", direction, null_order))
    # the table's order id when the keys are exactly the table's order (Java's
    # OUTPUT_SORT_ORDER_ID of a matching order)
    table_order = md.sort_order()
    matching = None
    if not table_order.is_unsorted():
        table_keys = [
            (schema.name_by_id(f.source_id), f.transform, f.direction, f.null_order)
            for f in table_order.fields
        ]
        if table_keys == keys:
            matching = table_order.order_id
    return keys, matching


def rewrite_data_files(
    table: Any,
    *,
    strategy: str = "binpack",
    sort_order: Any = None,
    where: Any = None,
    options: Mapping[str, Any] | None = None,
    branch: str | None = None,
    case_sensitive: bool = True,
    snapshot_properties: Mapping[str, str] | None = None,
    map_units: MapUnits | None = None,
) -> RewriteDataFilesResult:
    """Rewrites the table's data files as Java's ``rewrite_data_files`` procedure does
    (see the module documentation). ``strategy``: ``"binpack"`` or ``"sort"`` (by
    ``sort_order``, else the table's sort order). ``where``: a filter (text or expression)
    choosing the files (every row of a chosen file is rewritten). ``options``: Java's
    option names (``target-file-size-bytes``, ``min-file-size-bytes``,
    ``max-file-size-bytes``, ``min-input-files``, ``rewrite-all``,
    ``max-file-group-size-bytes``, ``delete-file-threshold``, ``delete-ratio-threshold``,
    ``partial-progress.enabled``, ``partial-progress.max-commits``,
    ``max-concurrent-file-group-rewrites``, ``use-starting-sequence-number``,
    ``rewrite-job-order``, ...). ``map_units(fn, units)`` runs ``fn`` on every unit (Spark
    passes its executors; by default threads in this process)."""
    if table.catalog is not None and table.identifier is not None:
        table.refresh()
    md = table.metadata
    if md.current_snapshot_id is None:
        return RewriteDataFilesResult()
    if branch is not None and md.snapshot_by_ref(branch) is None:
        raise InvalidArgumentError(
            f"Cannot rewrite data files for branch {branch}: branch does not exist", field="branch"
        )
    opts = {str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in (options or {}).items()}
    strategy = strategy.lower()
    keys: list[SortKey] | None = None
    sort_order_id = None
    if strategy == "sort":
        keys, sort_order_id = parse_sort_order(md, sort_order)
    elif sort_order is not None:
        raise InvalidArgumentError("sort_order is for strategy='sort'", field="sort_order")
    plan = _native.plan_rewrite_data_files(
        table.io,
        md,
        strategy=strategy,
        options=opts,
        filter=_expression(where),
        case_sensitive=case_sensitive,
        ref_name=branch,
    )
    groups = plan["groups"]
    if not groups:
        return RewriteDataFilesResult()
    if plan["output_spec_id"] != md.default_spec_id:
        raise UnsupportedError("output-spec-id other than the table's default spec is not supported yet")
    starting = plan["starting_snapshot_id"]
    seq = None
    if plan["use_starting_sequence_number"]:
        snap = md.snapshot_by_id(starting)
        seq = snap.sequence_number if snap is not None else None

    metadata_json = md.to_json()
    io_properties = dict(table.io.properties_for(md.location) or {})
    operation_id = str(uuid.uuid4())
    units: list[Unit] = []
    owner: list[int] = []
    for gi, g in enumerate(groups):
        for ui, payload in enumerate(g["units"]):
            units.append(
                (
                    metadata_json,
                    payload,
                    keys,
                    g["max_output_file_size"],
                    g["expected_output_files"],
                    io_properties,
                    g["global_index"],
                    ui,
                    operation_id,
                    sort_order_id,
                )
            )
            owner.append(gi)
    run = map_units or local_map(plan["max_concurrent_file_group_rewrites"])
    new_files = rewrite_units(len(groups), units, owner, rewrite_unit, run)
    outcome = commit_groups(
        plan,
        len(groups),
        lambda batch: _commit(
            table,
            [groups[i] for i in batch],
            [new_files[i] for i in batch],
            starting,
            seq,
            branch,
            snapshot_properties,
        ),
        "rewrite_data_files",
    )
    max_failed = plan["max_failed_commits"] if plan["partial_progress_enabled"] else 0
    failed_files = sum(len(groups[i]["rewritten_files"]) for i in outcome.failed)
    done = [
        FileGroupResult(
            global_index=groups[i]["global_index"],
            partition_index=groups[i]["partition_index"],
            rewritten_data_files_count=len(groups[i]["rewritten_files"]),
            added_data_files_count=sum(t.num_rows for t in new_files[i]),
            rewritten_bytes_count=groups[i]["input_size"],
            removed_delete_files_count=len(groups[i]["dangling_dvs"]),
        )
        for i in outcome.committed
    ]
    removed_dangling = 0
    if plan["remove_dangling_deletes"]:
        removed_dangling = len(
            remove_dangling_deletes(table, branch=branch, snapshot_properties=snapshot_properties)
        )
    if outcome.failed_commits > max_failed:
        raise RuntimeError(
            f"{outcome.failed_commits} commits failed, more than partial-progress.max-failed-commits "
            f"({max_failed})"
        )
    return RewriteDataFilesResult(
        rewritten_data_files_count=sum(g.rewritten_data_files_count for g in done),
        added_data_files_count=sum(g.added_data_files_count for g in done),
        rewritten_bytes_count=sum(g.rewritten_bytes_count for g in done),
        failed_data_files_count=failed_files,
        removed_delete_files_count=sum(g.removed_delete_files_count for g in done) + removed_dangling,
        snapshot_ids=tuple(outcome.snapshot_ids),
        groups=tuple(done),
    )


def remove_dangling_deletes(
    table: Any,
    *,
    branch: str | None = None,
    snapshot_properties: Mapping[str, str] | None = None,
) -> list[str]:
    """Removes the delete files that apply to no live data file (Java's
    ``RemoveDanglingDeletesSparkAction``: older than every data file of their partition, in a
    partition without data files, or DVs of a removed data file) in one ``replace`` commit,
    and returns their locations (nothing is committed when there are none)."""
    if table.catalog is not None and table.identifier is not None:
        table.refresh()
    md = table.metadata
    snap = md.snapshot_by_ref(branch or "main")
    if snap is None:
        return []
    found = _native.find_dangling_deletes(table.io, md, snap.snapshot_id)
    if not found:
        return []
    rows = pa.table(
        {
            "file_path": pa.array([f[0] for f in found], pa.string()),
            "content_offset": pa.array([f[1] for f in found], pa.int64()),
        }
    )
    with table.transaction() as tx:
        tx.rewrite_files(
            [],
            (),
            remove_delete_files=rows,
            validate_from_snapshot=snap.snapshot_id,
            spec_id=md.default_spec_id,
            branch=branch,
            snapshot_properties=snapshot_properties,
        )
    return [f[0] for f in found]


def _commit(
    table: Any,
    groups: Sequence[dict],
    files: Sequence[Sequence[pa.Table]],
    starting: int,
    seq: int | None,
    branch: str | None,
    snapshot_properties: Mapping[str, str] | None,
) -> int:
    """One ``replace`` snapshot for these groups (Java's ``commitFileGroups``); a failed
    commit deletes the new files (the transaction owns them)."""
    added = [t for ts in files for t in ts if t.num_rows]
    new_paths = sorted(p for t in added for p in t.column("file_path").to_pylist())
    rewritten = [f[0] for g in groups for f in g["rewritten_files"]]
    dvs = [d for g in groups for d in g["dangling_dvs"]]
    removed_dvs = (
        pa.table(
            {
                "file_path": pa.array([d[0] for d in dvs], pa.string()),
                "content_offset": pa.array([d[1] for d in dvs], pa.int64()),
            }
        )
        if dvs
        else ()
    )
    data = pa.concat_tables(added) if added else ()
    with table.transaction() as tx:
        tx.own_files(new_paths)
        tx.rewrite_files(
            rewritten,
            data,
            remove_delete_files=removed_dvs,
            data_sequence_number=seq,
            validate_from_snapshot=starting,
            spec_id=groups[0]["output_spec_id"],
            branch=branch,
            snapshot_properties=snapshot_properties,
        )
    snap = table.metadata.snapshot_by_ref(branch or "main")
    return snap.snapshot_id if snap is not None else table.metadata.current_snapshot_id
