"""Changelogs between two snapshots: ``table.changelog(from_snapshot, to_snapshot)``.

The tasks are planned in Rust (``icefloe::scan::TableScan::plan_changelog``, Java 1.11's
``IncrementalChangelogScan``): every data file that a non-``replace`` snapshot after
``from_snapshot`` (exclusive) up to ``to_snapshot`` added (its rows are ``INSERT``) or
removed (``DELETE``), with the snapshot's position (``_change_ordinal``, oldest first from 0)
and id (``_commit_snapshot_id``). The files are read by the Rust reader. Like Java, a range
whose snapshots have delete files (position deletes, DVs, equality deletes) is refused with
``UnsupportedError`` ("Delete files are currently not supported in changelog scans").

``changelog`` then does what Java's ``create_changelog_view`` procedure does with those rows
(``changes`` gives them raw, as Spark's ``<table>.changes``):

- carry-overs are removed: a ``DELETE`` and an ``INSERT`` of the same row (every column,
  the ordinal and snapshot id equal) in one commit, as a copy-on-write rewrite leaves them;
- with ``identifier_columns`` (``compute_updates`` defaults to True then), a ``DELETE`` and an
  ``INSERT`` of the same identifier values in one commit become ``UPDATE_BEFORE`` and
  ``UPDATE_AFTER``; two deletes of one identifier in one commit fail, as in Java.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from .. import _native
from ..errors import InvalidArgumentError
from ..executor import read as reader

__all__ = ["changes", "changelog", "CHANGE_TYPE", "CHANGE_ORDINAL", "COMMIT_SNAPSHOT_ID"]

CHANGE_TYPE = "_change_type"
CHANGE_ORDINAL = "_change_ordinal"
COMMIT_SNAPSHOT_ID = "_commit_snapshot_id"
_META = (CHANGE_TYPE, CHANGE_ORDINAL, COMMIT_SNAPSHOT_ID)


def _options(from_snapshot: int | None, to_snapshot: int | None, row_filter: Any, selected: Any, cs: bool):
    return _native.ScanOptions(
        filter=row_filter,
        selected=selected,
        snapshot_id=to_snapshot,
        case_sensitive=cs,
        appends_after=from_snapshot,
        incremental=True,
    )


def changes(
    table: Any,
    from_snapshot: int | None = None,
    to_snapshot: int | None = None,
    *,
    row_filter: Any = None,
    selected_fields: Sequence[str] | None = None,
    case_sensitive: bool = True,
) -> pa.Table:
    """The raw changelog rows (Spark's ``<table>.changes``): the table's current schema
    (or ``selected_fields``) plus ``_change_type``, ``_change_ordinal``,
    ``_commit_snapshot_id``. ``from_snapshot`` is exclusive (``None``: from the first
    snapshot), ``to_snapshot`` inclusive (``None``: the current snapshot). ``row_filter``
    is an expression (``Table.changes`` also takes filter text)."""
    selected = None if selected_fields is None else list(selected_fields)
    options = _options(from_snapshot, to_snapshot, row_filter, selected, case_sensitive)
    schema, batches, _, (types, ordinals, snapshot_ids) = _native.plan_changelog(
        table.metadata, options, io=table.io
    )
    plan = pa.Table.from_batches(batches, schema=schema)
    out_schema = reader.output_schema(plan.schema).append(pa.field(CHANGE_TYPE, pa.string(), nullable=False))
    out_schema = out_schema.append(pa.field(CHANGE_ORDINAL, pa.int32(), nullable=False))
    out_schema = out_schema.append(pa.field(COMMIT_SNAPSHOT_ID, pa.int64(), nullable=False))
    io_properties = table.io.properties_for(table.metadata.location)
    parts = []
    for i in range(plan.num_rows):
        for b in reader.read_tasks(plan.slice(i, 1), io_properties=io_properties):
            n = b.num_rows
            cols = list(b.columns) + [
                pa.array([types[i]] * n, pa.string()),
                pa.array([ordinals[i]] * n, pa.int32()),
                pa.array([snapshot_ids[i]] * n, pa.int64()),
            ]
            parts.append(pa.RecordBatch.from_arrays(cols, schema=out_schema))
    return pa.Table.from_batches(parts, schema=out_schema)


def _hashable(v: Any) -> Any:
    if isinstance(v, dict):
        return tuple(sorted((k, _hashable(x)) for k, x in v.items()))
    if isinstance(v, list):
        return tuple(_hashable(x) for x in v)
    return v


def changelog(
    table: Any,
    from_snapshot: int | None = None,
    to_snapshot: int | None = None,
    *,
    identifier_columns: Sequence[str] | None = None,
    compute_updates: bool | None = None,
    row_filter: Any = None,
    case_sensitive: bool = True,
) -> pa.Table:
    """The changelog as Java's ``create_changelog_view`` gives it (see the module
    documentation): carry-overs removed and, with ``identifier_columns``, updates as
    ``UPDATE_BEFORE`` / ``UPDATE_AFTER`` pairs."""
    raw = changes(table, from_snapshot, to_snapshot, row_filter=row_filter, case_sensitive=case_sensitive)
    ids = list(identifier_columns or [])
    if compute_updates is None:
        compute_updates = identifier_columns is not None
    if compute_updates and not ids:
        raise InvalidArgumentError("Cannot compute the update images because identifier columns are not set")
    missing = [c for c in ids if c not in raw.column_names]
    if missing:
        raise InvalidArgumentError(f"identifier columns not in the table: {', '.join(missing)}")
    rows = raw.to_pylist()
    data_cols = [c for c in raw.column_names if c != CHANGE_TYPE]
    # carry-overs: equal rows (metadata columns but the type included) deleted and
    # inserted in one commit cancel in pairs
    groups: dict[Any, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        groups[tuple(_hashable(r[c]) for c in data_cols)].append(i)
    dropped: set[int] = set()
    for members in groups.values():
        deletes = [i for i in members if rows[i][CHANGE_TYPE] == "DELETE"]
        inserts = [i for i in members if rows[i][CHANGE_TYPE] == "INSERT"]
        for d, n in zip(deletes, inserts, strict=False):  # the unpaired ones stay
            dropped.update((d, n))
    kept = [i for i in range(len(rows)) if i not in dropped]
    if compute_updates:
        by_key: dict[Any, list[int]] = defaultdict(list)
        for i in kept:
            r = rows[i]
            by_key[tuple(_hashable(r[c]) for c in ids) + (r[CHANGE_ORDINAL],)].append(i)
        for members in by_key.values():
            deletes = [i for i in members if rows[i][CHANGE_TYPE] == "DELETE"]
            inserts = [i for i in members if rows[i][CHANGE_TYPE] == "INSERT"]
            if len(deletes) > 1:
                raise InvalidArgumentError(
                    "Cannot compute updates because there are multiple rows with the same identifier "
                    f"fields([{','.join(ids)}]). Please make sure the rows are unique."
                )
            if deletes and inserts:
                rows[deletes[0]][CHANGE_TYPE] = "UPDATE_BEFORE"
                rows[inserts[0]][CHANGE_TYPE] = "UPDATE_AFTER"
    return pa.Table.from_pylist([rows[i] for i in kept], schema=raw.schema)
