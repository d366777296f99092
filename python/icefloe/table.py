"""Tables and scans.

``Table.from_metadata(path)`` opens a table from a metadata file (or a table directory);
``table.scan(...)`` configures a scan, planned in Rust:

- ``plan_arrow()``: the plan as a pyarrow Table, one row per data file (or per split with
  ``packed=True``), with the delete files to apply and an index into the residual filters
  stored once in the schema metadata;
- ``plan_batches()``: the same rows as record batches delivered while planning is still
  running (a bounded queue between the planning threads and the reader), for plans too
  large to hold at once or to start reading before planning ends;
- ``plan_files()``: light task objects over the same rows, one per data file;
- ``plan_tasks()``: files split and bin-packed (``read.split.*`` table properties) into
  groups, each serializable to compact bytes for a Spark executor.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from . import _native
from .expressions import to_filter

__all__ = ["Table", "TableScan", "FileScanTask", "CombinedScanTask", "ScanPlan", "PlanBatches"]


def _filter(row_filter: Any) -> _native.Expression | None:
    """A row filter (text, an expression, a bool or ``None``) as an expression; ``None`` when
    it keeps every row. (Not its JSON form, which would lose the kind of some literals: a
    decimal ``96.0`` compared with a double column is written as the string ``"96.0"``.)"""
    if row_filter is None or row_filter is True:
        return None
    return to_filter(row_filter)


def _fields(selected_fields: Sequence[str] | None) -> list[str] | None:
    if isinstance(selected_fields, str):
        raise TypeError(f"selected_fields is a sequence of column names, not the string {selected_fields!r}")
    if selected_fields is None or tuple(selected_fields) == ("*",):
        return None
    return list(selected_fields)


_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def _millis(as_of: Any) -> int:
    if isinstance(as_of, _dt.datetime):
        if as_of.tzinfo is None:
            raise ValueError("as_of must be timezone-aware (or milliseconds since the epoch)")
        # exact integer arithmetic: `timestamp() * 1000` is a float product that can land a
        # millisecond short, and truncates before 1970 instead of flooring
        return (as_of - _EPOCH) // _dt.timedelta(milliseconds=1)
    if isinstance(as_of, int) and not isinstance(as_of, bool):
        return as_of
    raise TypeError("as_of must be a datetime or milliseconds since the epoch")


class Table:
    """An Iceberg table read from its metadata: opened from a file with
    :meth:`from_metadata`, or loaded from a catalog (``catalog.load_table("db.t")``), in
    which case it remembers its catalog and identifier."""

    def __init__(
        self,
        metadata: _native.TableMetadata,
        metadata_location: str | None = None,
        catalog: Any = None,
        identifier: tuple[str, ...] | None = None,
    ):
        self.metadata = metadata
        self.metadata_location = metadata_location
        self.catalog = catalog
        self.identifier = identifier

    def name(self) -> tuple[str, ...] | None:
        """The identifier in the catalog, e.g. ``("db", "events")`` (``None`` when the table
        was opened from a file)."""
        return self.identifier

    def refresh(self) -> Table:
        """Reloads the current metadata from the catalog (in place; returns ``self``)."""
        if self.catalog is None or self.identifier is None:
            raise ValueError("this table was opened from a file, not loaded from a catalog")
        fresh = self.catalog.load_table(self.identifier)
        self.metadata, self.metadata_location = fresh.metadata, fresh.metadata_location
        return self

    # --- changes (tables loaded from a catalog) ---

    def transaction(self):
        """A :class:`icefloe.commit.Transaction`: changes committed together, as one new
        metadata file, when the ``with`` block ends (or by ``commit_transaction()``)."""
        from .commit import Transaction

        return Transaction(self)

    def update_schema(self, allow_incompatible_changes: bool = False, case_sensitive: bool = True):
        """A :class:`icefloe.commit.UpdateSchema`: schema changes committed when its ``with``
        block ends (or by its ``commit()``)."""
        from .commit import UpdateSchema

        return UpdateSchema(
            self, allow_incompatible_changes=allow_incompatible_changes, case_sensitive=case_sensitive
        )

    def update_spec(self, case_sensitive: bool = True):
        """A :class:`icefloe.commit.UpdateSpec`: partition evolution committed when its
        ``with`` block ends (or by its ``commit()``)."""
        from .commit import UpdateSpec

        return UpdateSpec(self, case_sensitive=case_sensitive)

    def replace_sort_order(self, case_sensitive: bool = True):
        """A :class:`icefloe.commit.ReplaceSortOrder` for the table's default sort order."""
        from .commit import ReplaceSortOrder

        return ReplaceSortOrder(self, case_sensitive=case_sensitive)

    def append(self, data: Any, **options: Any) -> Table:
        """Writes ``data`` (a pyarrow Table, RecordBatch or reader of the table's columns,
        matched by name) as Parquet data files and commits them in one snapshot. Options as
        :meth:`icefloe.commit.Transaction.append` (``branch=``, ``merge=``)."""
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
        :mod:`icefloe.commit`). Options as :meth:`icefloe.commit.Transaction.append_files`."""
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
        files. Returns an :class:`icefloe.row_deletes.DeleteResult`. (With Spark, the same
        runs on the executors: ``icefloe.spark.delete``.)"""
        from .row_deletes import delete_rows

        return delete_rows(self, delete_filter, branch=branch, isolation_level=isolation_level)

    def delete_where(self, row_filter: Any, **options: Any) -> Table:
        """Removes the files all of whose rows match ``row_filter``; see
        :meth:`icefloe.commit.Transaction.delete_where`."""
        with self.transaction() as tx:
            tx.delete_where(row_filter, **options)
        return self

    def overwrite_where(self, row_filter: Any, data_files: Any, **options: Any) -> Table:
        with self.transaction() as tx:
            tx.overwrite_where(row_filter, data_files, **options)
        return self

    def overwrite(self, data: Any, overwrite_filter: Any, **options: Any) -> Table:
        """Writes ``data`` (pyarrow) and replaces the rows matching ``overwrite_filter``
        with it; see :meth:`icefloe.commit.Transaction.overwrite`."""
        with self.transaction() as tx:
            tx.overwrite(data, overwrite_filter, **options)
        return self

    def rewrite_files(self, delete_paths: Sequence[str], data_files: Any = (), **options: Any) -> Table:
        """Replaces files by others with the same rows; see
        :meth:`icefloe.commit.Transaction.rewrite_files`."""
        with self.transaction() as tx:
            tx.rewrite_files(delete_paths, data_files, **options)
        return self

    def rewrite_manifests(self, **options: Any) -> Table:
        """See :meth:`icefloe.commit.Transaction.rewrite_manifests`. Like Java's action,
        commits nothing when no manifest of the current snapshot would be rewritten (a
        rewrite on another ``branch`` is always committed)."""
        compacts_main = not options.get("cluster_by_partition") and options.get("branch") in (None, "main")
        if (
            compacts_main
            and _native.manifests_to_rewrite(
                self.metadata,
                options.get("spec_id"),
                None if options.get("sort_by") is None else list(options["sort_by"]),
            )
            == 0
        ):
            return self
        with self.transaction() as tx:
            tx.rewrite_manifests(**options)
        return self

    def row_delta(self, **options: Any) -> Table:
        """Commits a row delta; options as :meth:`icefloe.commit.Transaction.row_delta`."""
        with self.transaction() as tx:
            tx.row_delta(**options)
        return self

    def manage_snapshots(self):
        """A :class:`icefloe.snapshots.ManageSnapshots`: branches, tags, rollback and
        cherry-pick, committed by ``.commit()`` or when the ``with`` block ends."""
        from .snapshots import ManageSnapshots

        return ManageSnapshots(self)

    def expire_snapshots(self):
        """A :class:`icefloe.snapshots.ExpireSnapshots` builder (``older_than``,
        ``retain_last``, ``by_id``; ``.commit()`` returns what was deleted)."""
        from .snapshots import ExpireSnapshots

        return ExpireSnapshots(self)

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
    def from_metadata(cls, path: str) -> Table:
        """Opens the table whose metadata file is ``path`` (a ``*.metadata.json`` file, plain
        or gzip), or the current metadata of the table directory ``path``."""
        return cls(_native.TableMetadata.from_path(str(path)), str(path))

    def schema(self) -> _native.Schema:
        return self.metadata.schema()

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
            raise ValueError("give at most one of snapshot_id, ref and as_of")
        return TableScan(
            self,
            _filter(row_filter),
            _fields(selected_fields),
            snapshot_id,
            ref,
            None if as_of is None else _millis(as_of),
            case_sensitive,
        )

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
        scan = TableScan(
            self, _filter(row_filter), _fields(selected_fields), to_snapshot, None, None, case_sensitive
        )
        scan._incremental = True
        scan._appends_after = from_snapshot_exclusive
        return scan


@dataclass(frozen=True)
class FileScanTask:
    """One data file (or byte range of it) to read, with the deletes to apply."""

    file_path: str
    file_format: str
    start: int
    length: int
    record_count: int
    file_size_in_bytes: int
    spec_id: int
    partition: dict
    data_sequence_number: int
    first_row_id: int | None
    residual: dict | bool
    deletes: list


@dataclass(frozen=True)
class CombinedScanTask:
    """Tasks packed together for one reader: a slice of the plan table."""

    table: pa.Table

    @property
    def tasks(self) -> list[FileScanTask]:
        return list(_tasks_of(self.table))

    def to_bytes(self) -> bytes:
        """The tasks as Arrow IPC stream bytes (schema metadata included)."""
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, self.table.schema) as writer:
            writer.write_table(self.table)
        return sink.getvalue().to_pybytes()

    @staticmethod
    def from_bytes(data: bytes) -> CombinedScanTask:
        """Reads ``to_bytes()`` or a payload of ``TableScan.plan_task_payloads()`` (the same
        IPC stream compressed as an LZ4 frame)."""
        return CombinedScanTask(pa.ipc.open_stream(_native.task_group_ipc(data)).read_all())


@dataclass(frozen=True)
class ScanPlan:
    """A planned scan: the plan table and what planning counted."""

    table: pa.Table
    metrics: dict

    @property
    def residuals(self) -> list:
        return json.loads(self.table.schema.metadata[b"icefloe.residuals"])

    @property
    def snapshot_id(self) -> int | None:
        raw = self.table.schema.metadata[b"icefloe.snapshot_id"]
        return int(raw) if raw else None


class PlanBatches:
    """A plan read batch by batch while it is being planned (``TableScan.plan_batches``).

    Iterating yields pyarrow RecordBatches with the columns of ``plan_arrow()``; their
    ``residual`` column indexes ``residuals``, which holds the residuals of every batch
    yielded so far. Planning runs on threads of its own and stays at most ``queue``
    manifests ahead of the reader; waiting for a batch releases the GIL. Batches come in
    the order manifests are finished (with ``threads=1``, the order of ``plan_arrow()``).
    Planning errors are raised by the iteration, as the same exceptions as
    ``plan_arrow()``. ``close()`` (or leaving a ``with`` block, or dropping the object)
    stops planning at the next manifest.
    """

    def __init__(self, stream: _native.PlanStream):
        self._stream = stream
        self.schema: pa.Schema = stream.schema

    def __iter__(self) -> PlanBatches:
        return self

    def __next__(self) -> pa.RecordBatch:
        batch = self._stream.next_batch()
        if batch is None:
            raise StopIteration
        return batch

    @property
    def residuals(self) -> list:
        return json.loads(self._stream.residuals_json())

    @property
    def metrics(self) -> dict | None:
        """The planning counts, once every batch has been read (else ``None``)."""
        counts = self._stream.metrics()
        return None if counts is None else dict(counts)

    def to_reader(self) -> pa.RecordBatchReader:
        """The remaining batches as a pyarrow RecordBatchReader (its residual indexes refer
        to ``residuals`` of this object)."""
        return pa.RecordBatchReader.from_batches(self.schema, self)

    def read_all(self) -> pa.Table:
        """The remaining batches as one Table, with the residuals in its schema metadata as
        in ``plan_arrow()``."""
        table = pa.Table.from_batches(list(self), schema=self.schema)
        metadata = dict(table.schema.metadata or {})
        metadata[b"icefloe.residuals"] = self._stream.residuals_json().encode()
        return table.replace_schema_metadata(metadata)

    def close(self) -> None:
        self._stream.close()

    def __enter__(self) -> PlanBatches:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _without_projection(plan: pa.Table) -> pa.Table:
    """The plan reading no columns (for counting rows)."""
    metadata = dict(plan.schema.metadata)
    projected = json.loads(metadata[b"icefloe.projected_schema"])
    projected["fields"] = []
    metadata[b"icefloe.projected_schema"] = json.dumps(projected).encode()
    return plan.replace_schema_metadata(metadata)


def _tasks_of(table: pa.Table) -> Iterator[FileScanTask]:
    residuals = json.loads(table.schema.metadata[b"icefloe.residuals"])
    # one batch at a time: only the tasks being iterated exist as Python objects
    rows = (row for batch in table.to_batches() for row in batch.to_pylist())
    for row in rows:
        yield FileScanTask(
            file_path=row["file_path"],
            file_format=row["file_format"],
            start=row["start"],
            length=row["length"],
            record_count=row["record_count"],
            file_size_in_bytes=row["file_size_in_bytes"],
            spec_id=row["spec_id"],
            partition=row["partition"],
            data_sequence_number=row["data_sequence_number"],
            first_row_id=row["first_row_id"],
            residual=residuals[row["residual"]],
            deletes=row["deletes"],
        )


class TableScan:
    """A configured scan; nothing is read until a ``plan_*`` method is called."""

    def __init__(
        self,
        table: Table,
        row_filter: _native.Expression | None,
        selected: list[str] | None,
        snapshot_id: int | None,
        ref: str | None,
        as_of_ms: int | None,
        case_sensitive: bool,
    ):
        self.table = table
        self._filter = row_filter
        # the filter in the JSON form of expressions instead (tests set it)
        self._filter_json: str | None = None
        self._selected = selected
        self._snapshot_id = snapshot_id
        self._ref = ref
        self._as_of_ms = as_of_ms
        self._case_sensitive = case_sensitive
        self._incremental = False
        self._appends_after: int | None = None

    def _plan(
        self, packed: bool, target_split_size: int | None = None, threads: int | None = None
    ) -> ScanPlan:
        schema, batches, counts = _native.plan_scan(
            self.table.metadata,
            **self._plan_kwargs(),
            packed=packed,
            target_split_size=target_split_size,
            threads=threads,
        )
        return ScanPlan(pa.Table.from_batches(batches, schema=schema), dict(counts))

    def _plan_kwargs(self) -> dict:
        """The scan's settings as ``_native.plan_scan`` takes them."""
        return dict(
            filter_json=self._filter_json,
            filter=self._filter if self._filter_json is None else None,
            selected=self._selected,
            snapshot_id=self._snapshot_id,
            ref_name=self._ref,
            as_of_ms=self._as_of_ms,
            case_sensitive=self._case_sensitive,
            appends_after=self._appends_after,
            incremental=self._incremental,
        )

    def plan_arrow(self, packed: bool = False, threads: int | None = None) -> pa.Table:
        """The plan as a pyarrow Table (see the module documentation for the columns)."""
        return self._plan(packed, threads=threads).table

    def plan_batches(
        self, batch_rows: int = 65536, threads: int | None = None, queue: int = 4
    ) -> PlanBatches:
        """The plan as record batches delivered while planning runs (see ``PlanBatches``):
        at most ``queue`` manifests' batches wait for the reader. Errors in the scan's
        settings (snapshot, filter binding) are raised here, planning errors while
        iterating."""
        stream = _native.plan_scan_stream(
            self.table.metadata, **self._plan_kwargs(), batch_rows=batch_rows, threads=threads, queue=queue
        )
        return PlanBatches(stream)

    def plan(self, packed: bool = False, threads: int | None = None) -> ScanPlan:
        """The plan table with the planning counts."""
        return self._plan(packed, threads=threads)

    def plan_files(self) -> Iterator[FileScanTask]:
        """One light task per data file that may hold matching rows."""
        return _tasks_of(self._plan(False).table)

    # --- reading (icefloe.reader) ---

    def to_batches(
        self, metadata_columns: Sequence[str] = (), batch_size: int | None = None
    ) -> Iterator[pa.RecordBatch]:
        """The scan's rows as record batches, read while the plan streams in
        (``plan_batches``), so memory stays bounded whatever the size of the table. Deletes
        and the residual filter are applied; ``metadata_columns`` as ``read_tasks``."""
        from . import reader

        with self.plan_batches() as stream:
            yield from reader.read_plan_stream(
                stream, metadata_columns, batch_size or reader.DEFAULT_BATCH_SIZE
            )

    def to_arrow(self, metadata_columns: Sequence[str] = (), batch_size: int | None = None) -> pa.Table:
        """The scan's rows as one pyarrow Table (see ``to_batches``)."""
        from . import reader

        plan = self.plan_arrow()
        schema = reader.output_schema(plan.schema, metadata_columns)
        batches = list(
            reader.read_tasks(
                plan, metadata_columns=metadata_columns, batch_size=batch_size or reader.DEFAULT_BATCH_SIZE
            )
        )
        return pa.Table.from_batches(batches, schema=schema)

    def count(self) -> int:
        """The number of rows the scan reads: the sum of the files' record counts when no
        task has deletes or a residual other than ``true``, else by reading."""
        from . import reader

        plan = self.plan_arrow()
        if reader.counts_from_metadata(plan):
            return int(sum(plan.column("record_count").to_pylist()))
        # nothing but the rows themselves is needed: read with an empty projection
        plan = _without_projection(plan)
        return sum(b.num_rows for b in reader.read_tasks(plan))

    def plan_task_payloads(self, target_split_size: int | None = None) -> list[tuple[bytes, int]]:
        """The groups of ``plan_tasks()`` ready to ship to readers: for each, a
        self-contained payload (the group's Arrow IPC stream, LZ4-compressed, built in
        Rust) and its number of tasks. ``read_tasks`` and ``CombinedScanTask.from_bytes``
        take the payload. This is what the Spark data source's partitions carry: for a
        plan of a million files it avoids a million-row Python loop and keeps the bytes
        sent to Spark small."""
        _, payloads, _ = _native.plan_scan(
            self.table.metadata,
            **self._plan_kwargs(),
            packed=True,
            target_split_size=target_split_size,
            payloads=True,
        )
        return payloads

    def plan_tasks(self, target_split_size: int | None = None) -> list[CombinedScanTask]:
        """Files split at row-group offsets and bin-packed into groups for readers."""
        table = self._plan(True, target_split_size=target_split_size).table
        if table.num_rows == 0:
            return []
        groups = table.column("group").to_numpy()
        out = []
        start = 0
        for i in range(1, len(groups) + 1):
            if i == len(groups) or groups[i] != groups[start]:
                out.append(CombinedScanTask(table.slice(start, i - start)))
                start = i
        return out
