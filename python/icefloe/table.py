"""Tables: the façade over scans (``icefloe.scan``) and changes (``icefloe.update``).

``Table.from_metadata(path)`` opens a table from a metadata file (or a table directory), and
``catalog.load_table(...)`` from a catalog; ``table.scan(...)`` returns an
``icefloe.scan.TableScan``, whose documentation lists the forms a plan comes in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from . import _native
from ._time import epoch_millis
from .errors import InvalidArgumentError, InvalidArgumentTypeError
from .executor.tasks import CombinedScanTask, FileScanTask
from .expressions import to_filter
from .scan import InspectTable, PlanBatches, ScanPlan, TableScan
from .scan import changelog as _changelog
from .update.cdc import ChangesResult, write_changes
from .update.maintenance import MaintenanceTable, remove_orphan_files
from .update.row_deletes import DeleteResult, delete_rows
from .update.snapshots import ExpireSnapshots, ManageSnapshots
from .update.transaction import ReplaceSortOrder, Transaction, UpdateSchema, UpdateSpec
from .update.upsert import UpsertResult, upsert

# the scan and task types are re-exported: ``icefloe.table`` was their home before 0.2
__all__ = [
    "Table",
    "TableScan",
    "FileScanTask",
    "CombinedScanTask",
    "ScanPlan",
    "PlanBatches",
    "DeleteResult",
    "UpsertResult",
]


def _filter(row_filter: Any) -> _native.Expression | None:
    """A row filter (text, an expression, a bool or ``None``) as an expression; ``None`` when
    it keeps every row. (Not its JSON form, which would lose the kind of some literals: a
    decimal ``96.0`` compared with a double column is written as the string ``"96.0"``.)"""
    if row_filter is None or row_filter is True:
        return None
    return to_filter(row_filter)


def _changelog_options(options: dict[str, Any]) -> dict[str, Any]:
    """The changelog options with a row filter given as text parsed, as ``scan`` takes it."""
    if options.get("row_filter") is not None:
        options = dict(options, row_filter=_filter(options["row_filter"]))
    if "selected_fields" in options:
        options = dict(options, selected_fields=_fields(options["selected_fields"]))
    return options


def _fields(selected_fields: Sequence[str] | None) -> list[str] | None:
    if isinstance(selected_fields, str):
        raise InvalidArgumentTypeError(
            f"selected_fields is a sequence of column names, not the string {selected_fields!r}"
        )
    if selected_fields is None or tuple(selected_fields) == ("*",):
        return None
    return list(selected_fields)


class Table:
    """An Iceberg table read from its metadata: opened from a file with
    :meth:`from_metadata`, or loaded from a catalog (``catalog.load_table("db.t")``), in
    which case it remembers its catalog and identifier.

    Its files are read and written through ``io``: the given FileIO, else its catalog's,
    else the one for the table location's scheme (local files for a plain path)."""

    def __init__(
        self,
        metadata: _native.TableMetadata,
        metadata_location: str | None = None,
        catalog: Any = None,
        identifier: tuple[str, ...] | None = None,
        io: _native.FileIO | None = None,
    ):
        self.metadata = metadata
        self.metadata_location = metadata_location
        self.catalog = catalog
        self.identifier = identifier
        self._io = io

    @property
    def io(self) -> _native.FileIO:
        """The FileIO the table's files are read and written through (resolved on first
        use, so a table opened only to inspect its metadata needs no object-store
        settings)."""
        if self._io is None:
            self._io = self.catalog.io if self.catalog is not None else _native.FileIO(self.metadata.location)
        return self._io

    def name(self) -> tuple[str, ...] | None:
        """The identifier in the catalog, e.g. ``("db", "events")`` (``None`` when the table
        was opened from a file)."""
        return self.identifier

    def refresh(self) -> Table:
        """Reloads the current metadata from the catalog (in place; returns ``self``)."""
        if self.catalog is None or self.identifier is None:
            raise InvalidArgumentError("this table was opened from a file, not loaded from a catalog")
        fresh = self.catalog.load_table(self.identifier)
        self.metadata, self.metadata_location = fresh.metadata, fresh.metadata_location
        return self

    # --- changes (tables loaded from a catalog) ---

    def transaction(self):
        """A :class:`icefloe.update.transaction.Transaction`: changes committed together, as one new
        metadata file, when the ``with`` block ends (or by ``commit_transaction()``)."""
        return Transaction(self)

    def update_schema(self, allow_incompatible_changes: bool = False, case_sensitive: bool = True):
        """A :class:`icefloe.update.transaction.UpdateSchema`: schema changes committed when its ``with``
        block ends (or by its ``commit()``)."""
        return UpdateSchema(
            self, allow_incompatible_changes=allow_incompatible_changes, case_sensitive=case_sensitive
        )

    def update_spec(self, case_sensitive: bool = True):
        """A :class:`icefloe.update.transaction.UpdateSpec`: partition evolution committed when its
        ``with`` block ends (or by its ``commit()``)."""
        return UpdateSpec(self, case_sensitive=case_sensitive)

    def replace_sort_order(self, case_sensitive: bool = True):
        """A :class:`icefloe.update.transaction.ReplaceSortOrder` for the table's default sort order."""
        return ReplaceSortOrder(self, case_sensitive=case_sensitive)

    def append(self, data: Any, **options: Any) -> Table:
        """Writes ``data`` (a pyarrow Table, RecordBatch or reader of the table's columns,
        matched by name) as Parquet data files and commits them in one snapshot. Options as
        :meth:`icefloe.update.transaction.Transaction.append` (``branch=``, ``merge=``)."""
        with self.transaction() as tx:
            tx.append(data, **options)
        return self

    def set_properties(self, properties: Mapping[str, str] | None = None, **kwargs: str) -> Table:
        with self.transaction() as tx:
            tx.set_properties(properties, **kwargs)
        return self

    def remove_properties(self, *keys: str) -> Table:
        with self.transaction() as tx:
            tx.remove_properties(*keys)
        return self

    def append_files(self, data_files: Any, **options: Any) -> Table:
        """Commits a snapshot adding ``data_files`` (a pyarrow table of data-file rows; see
        :mod:`icefloe.update.transaction`). Options as :meth:`icefloe.update.transaction.Transaction.append_files`."""
        with self.transaction() as tx:
            tx.append_files(data_files, **options)
        return self

    def delete_files(self, paths: Sequence[str], **options: Any) -> Table:
        with self.transaction() as tx:
            tx.delete_files(paths, **options)
        return self

    def overwrite_files(self, delete_paths: Sequence[str], data_files: Any, **options: Any) -> Table:
        with self.transaction() as tx:
            tx.overwrite_files(delete_paths, data_files, **options)
        return self

    def delete(self, delete_filter: Any, *, branch: str | None = None, isolation_level: str = "serializable"):
        """Deletes the rows matching ``delete_filter`` (filter text or an expression) in one
        commit: data files all of whose rows match are removed whole, the others get
        deletion vectors (v3) or position delete files (v2); v1 tables can only lose whole
        files. Returns an :class:`icefloe.update.row_deletes.DeleteResult`. (With Spark, the same
        runs on the executors: ``icefloe.spark.delete``.)"""
        return delete_rows(self, delete_filter, branch=branch, isolation_level=isolation_level)

    def upsert(
        self,
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
        """PyIceberg's upsert: source rows (pyarrow) matched on ``join_cols`` (default: the
        identifier fields) update the table's rows whose other columns differ (identical rows
        are left alone unless ``skip_identical_rows=False``), the rest are inserted; returns
        the counts (``rows_updated``, ``rows_inserted``). Merge-on-read (deletion vectors in
        v3, position deletes in v2) in one commit, validated from the snapshot read; see
        :mod:`icefloe.update.upsert`."""
        return upsert(
            self,
            df,
            join_cols,
            when_matched_update_all,
            when_not_matched_insert_all,
            case_sensitive,
            branch,
            snapshot_properties,
            skip_identical_rows=skip_identical_rows,
            isolation_level=isolation_level,
        )

    def delete_where(self, row_filter: Any, **options: Any) -> Table:
        """Removes the files all of whose rows match ``row_filter``; see
        :meth:`icefloe.update.transaction.Transaction.delete_where`."""
        with self.transaction() as tx:
            tx.delete_where(row_filter, **options)
        return self

    def overwrite_where(self, row_filter: Any, data_files: Any, **options: Any) -> Table:
        with self.transaction() as tx:
            tx.overwrite_where(row_filter, data_files, **options)
        return self

    def overwrite(self, data: Any, overwrite_filter: Any, **options: Any) -> Table:
        """Writes ``data`` (pyarrow) and replaces the rows matching ``overwrite_filter``
        with it; see :meth:`icefloe.update.transaction.Transaction.overwrite`."""
        with self.transaction() as tx:
            tx.overwrite(data, overwrite_filter, **options)
        return self

    def rewrite_files(self, delete_paths: Sequence[str], data_files: Any = (), **options: Any) -> Table:
        """Replaces files by others with the same rows; see
        :meth:`icefloe.update.transaction.Transaction.rewrite_files`."""
        with self.transaction() as tx:
            tx.rewrite_files(delete_paths, data_files, **options)
        return self

    def rewrite_manifests(self, **options: Any) -> Table:
        """See :meth:`icefloe.update.transaction.Transaction.rewrite_manifests`. Like Java's action,
        commits nothing when no manifest of the current snapshot would be rewritten (a
        rewrite on another ``branch`` is always committed)."""
        compacts_main = not options.get("cluster_by_partition") and options.get("branch") in (None, "main")
        if (
            compacts_main
            and _native.manifests_to_rewrite(
                self.io,
                self.metadata,
                spec_id=options.get("spec_id"),
                sort_by=None if options.get("sort_by") is None else list(options["sort_by"]),
            )
            == 0
        ):
            return self
        with self.transaction() as tx:
            tx.rewrite_manifests(**options)
        return self

    def write_changes(self, **changes: Any) -> ChangesResult:
        """A CDC-style write in one row delta: equality deletes for the keys of ``upsert``
        and ``delete`` rows, data files for ``upsert`` and ``insert`` rows; options as
        :func:`icefloe.update.cdc.write_changes` (``equality_fields`` default: the identifier
        fields)."""
        return write_changes(self, **changes)

    def row_delta(self, **options: Any) -> Table:
        """Commits a row delta; options as :meth:`icefloe.update.transaction.Transaction.row_delta`."""
        with self.transaction() as tx:
            tx.row_delta(**options)
        return self

    def manage_snapshots(self):
        """A :class:`icefloe.update.snapshots.ManageSnapshots`: branches, tags, rollback and
        cherry-pick, committed by ``.commit()`` or when the ``with`` block ends."""
        return ManageSnapshots(self)

    def expire_snapshots(self):
        """A :class:`icefloe.update.snapshots.ExpireSnapshots` builder (``older_than``,
        ``retain_last``, ``by_id``; ``.commit()`` returns what was deleted)."""
        return ExpireSnapshots(self)

    @property
    def maintenance(self) -> MaintenanceTable:
        """PyIceberg's maintenance namespace: ``table.maintenance.remove_orphan_files(...)``,
        ``table.maintenance.expire_snapshots()``."""
        return MaintenanceTable(self)

    def remove_orphan_files(
        self, older_than: Any = None, location: str | None = None, dry_run: bool = False, **options: Any
    ) -> list[str]:
        """Deletes (or with ``dry_run=True`` only finds) the files under the table's location
        that no metadata reaches and that are older than ``older_than`` (default three days
        ago); returns their locations. Java's ``remove_orphan_files`` rules; see
        :func:`icefloe.update.maintenance.remove_orphan_files` for the options."""
        return remove_orphan_files(self, older_than, location, dry_run, **options)

    def rewrite_data_files(self, **options: Any) -> Any:
        """Compacts data files as Java's ``rewrite_data_files`` procedure (bin-pack or sort,
        Java's options, deletes applied, ``replace`` commits); see
        :func:`icefloe.update.compaction.rewrite_data_files`."""
        return self.maintenance.rewrite_data_files(**options)

    def rewrite_position_delete_files(self, **options: Any) -> Any:
        """Merges position delete files and drops dangling deletes as Java's
        ``rewrite_position_delete_files`` procedure (on v3 tables position delete files
        become DVs); see :func:`icefloe.update.delete_compaction.rewrite_position_delete_files`."""
        return self.maintenance.rewrite_position_delete_files(**options)

    @property
    def properties(self) -> dict[str, str]:
        return dict(self.metadata.properties)

    def current_snapshot(self) -> _native.Snapshot | None:
        return self.metadata.current_snapshot()

    def snapshots(self) -> list[_native.Snapshot]:
        """Every snapshot of the table, oldest first."""
        return list(self.metadata.snapshots)

    def history(self) -> list[tuple[int, int]]:
        """The snapshot log: ``(timestamp_ms, snapshot_id)`` each time the current snapshot
        changed."""
        return list(self.metadata.snapshot_log)

    @classmethod
    def from_metadata(cls, path: str, io: _native.FileIO | None = None) -> Table:
        """Opens the table whose metadata file is ``path`` (a ``*.metadata.json`` file, plain
        or gzip), or the current metadata of the table directory ``path``, through ``io``
        (default: the FileIO for the path's scheme, without properties)."""
        io = io if io is not None else _native.FileIO(str(path))
        return cls(_native.TableMetadata.from_path(str(path), io=io), str(path), io=io)

    def schema(self) -> _native.Schema:
        return self.metadata.schema()

    @property
    def inspect(self) -> InspectTable:
        """The metadata tables (``table.inspect.files()``, ``.snapshots()``, ...) as pyarrow
        tables with Java's schemas and values: see :class:`icefloe.scan.inspect.InspectTable`."""
        return InspectTable(self)

    def scan(
        self,
        row_filter: Any = None,
        selected_fields: Sequence[str] | None = None,
        snapshot_id: int | None = None,
        ref: str | None = None,
        as_of: Any = None,
        case_sensitive: bool = True,
    ) -> TableScan:
        """A scan of this table. ``row_filter``: a filter string (``"id > 5 and ts >=
        '2024-01-01T00:00:00'"``) or an expression; ``selected_fields``: column names
        (``("*",)`` or ``None`` for all); at most one of ``snapshot_id``, ``ref`` (branch or
        tag) and ``as_of`` (a timezone-aware datetime or epoch milliseconds)."""
        if sum(x is not None for x in (snapshot_id, ref, as_of)) > 1:
            raise InvalidArgumentError("give at most one of snapshot_id, ref and as_of")
        return TableScan(
            self,
            _filter(row_filter),
            _fields(selected_fields),
            snapshot_id,
            ref,
            None if as_of is None else epoch_millis(as_of, "as_of"),
            case_sensitive,
        )

    def changes(self, from_snapshot: int | None = None, to_snapshot: int | None = None, **options: Any):
        """The raw changelog rows between two snapshots, as Spark's ``<table>.changes``
        (see :func:`icefloe.scan.changelog.changes`)."""
        return _changelog.changes(self, from_snapshot, to_snapshot, **_changelog_options(options))

    def changelog(self, from_snapshot: int | None = None, to_snapshot: int | None = None, **options: Any):
        """The changelog between two snapshots as Java's ``create_changelog_view`` gives it:
        ``_change_type`` (``INSERT``, ``DELETE``; ``UPDATE_BEFORE`` / ``UPDATE_AFTER`` with
        ``identifier_columns=``), ``_change_ordinal``, ``_commit_snapshot_id`` (see
        :func:`icefloe.scan.changelog.changelog`)."""
        return _changelog.changelog(self, from_snapshot, to_snapshot, **_changelog_options(options))

    def incremental_append_scan(
        self,
        from_snapshot_exclusive: int | None,
        to_snapshot: int | None = None,
        row_filter: Any = None,
        selected_fields: Sequence[str] | None = None,
        case_sensitive: bool = True,
    ) -> TableScan:
        """The data files added by the ``append`` snapshots after ``from_snapshot_exclusive``
        (``None``: from the oldest ancestor) up to ``to_snapshot`` (default: the current
        snapshot), as Java's ``IncrementalAppendScan``: files a later snapshot deleted are
        still planned, no delete files are attached, and the current schema is used.
        ``from_snapshot_exclusive`` must be the parent of ``to_snapshot`` or of one of its
        ancestors (a ``ValueError`` otherwise, also when it equals ``to_snapshot``)."""
        return TableScan(
            self,
            _filter(row_filter),
            _fields(selected_fields),
            to_snapshot,
            None,
            None,
            case_sensitive,
            incremental=True,
            appends_after=from_snapshot_exclusive,
        )
