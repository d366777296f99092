"""Scans: ``TableScan`` configures one (filter, projection, snapshot) and plans it in Rust;
``ScanPlan`` and ``PlanBatches`` hold the plan, whole or streamed. Driver code: the reading
itself is ``icefloe.executor.read``.

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

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import pyarrow as pa

from .. import _native
from ..executor import read as reader
from ..executor.tasks import CombinedScanTask, FileScanTask, tasks_of


class Scannable(Protocol):
    """What a scan needs of its table (``icefloe.table.Table`` is one)."""

    metadata: _native.TableMetadata

    @property
    def io(self) -> _native.FileIO:
        """The FileIO planning reads the table's manifests through."""
        ...


__all__ = ["TableScan", "ScanPlan", "PlanBatches"]


@dataclass(frozen=True)
class ScanPlan:
    """A planned scan: the plan table and what planning counted."""

    table: pa.Table
    metrics: dict

    @property
    def residuals(self) -> list:
        return json.loads(self.table.schema.metadata[_native.RESIDUALS_KEY])

    @property
    def snapshot_id(self) -> int | None:
        raw = self.table.schema.metadata[_native.SNAPSHOT_ID_KEY]
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
        metadata[_native.RESIDUALS_KEY] = self._stream.residuals_json().encode()
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
    projected = json.loads(metadata[_native.PROJECTED_SCHEMA_KEY])
    projected["fields"] = []
    metadata[_native.PROJECTED_SCHEMA_KEY] = json.dumps(projected).encode()
    return plan.replace_schema_metadata(metadata)


class TableScan:
    """A configured scan; nothing is read until a ``plan_*`` method is called."""

    def __init__(
        self,
        table: Scannable,
        row_filter: _native.Expression | None,
        selected: list[str] | None,
        snapshot_id: int | None,
        ref: str | None,
        as_of_ms: int | None,
        case_sensitive: bool,
        *,
        incremental: bool = False,
        appends_after: int | None = None,
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
        # Java's IncrementalAppendScan: the appends after `appends_after`
        self._incremental = incremental
        self._appends_after = appends_after

    def _plan(
        self, packed: bool, target_split_size: int | None = None, threads: int | None = None
    ) -> ScanPlan:
        options = self._options(threads=threads)
        if packed:
            schema, batches, counts = _native.plan_scan_packed(
                self.table.metadata, options, io=self.table.io, target_split_size=target_split_size
            )
        else:
            schema, batches, counts = _native.plan_scan(self.table.metadata, options, io=self.table.io)
        return ScanPlan(pa.Table.from_batches(batches, schema=schema), dict(counts))

    def _options(self, **planning: Any) -> _native.ScanOptions:
        """The scan's settings (with ``planning``: threads, batch_rows) as the native
        planning functions take them."""
        return _native.ScanOptions(
            filter_json=self._filter_json,
            filter=self._filter if self._filter_json is None else None,
            selected=self._selected,
            snapshot_id=self._snapshot_id,
            ref_name=self._ref,
            as_of_ms=self._as_of_ms,
            case_sensitive=self._case_sensitive,
            appends_after=self._appends_after,
            incremental=self._incremental,
            **planning,
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
            self.table.metadata,
            self._options(batch_rows=batch_rows, threads=threads),
            io=self.table.io,
            queue=queue,
        )
        return PlanBatches(stream)

    def plan(self, packed: bool = False, threads: int | None = None) -> ScanPlan:
        """The plan table with the planning counts."""
        return self._plan(packed, threads=threads)

    def plan_files(self) -> Iterator[FileScanTask]:
        """One light task per data file that may hold matching rows."""
        return tasks_of(self._plan(False).table)

    # --- reading (icefloe.executor.read) ---

    def _io_properties(self) -> dict[str, str] | None:
        """The FileIO properties data and delete files are read with (object stores)."""
        return self.table.io.properties_for(self.table.metadata.location)

    def to_batches(
        self, metadata_columns: Sequence[str] = (), batch_size: int | None = None
    ) -> Iterator[pa.RecordBatch]:
        """The scan's rows as record batches, read while the plan streams in
        (``plan_batches``), so memory stays bounded whatever the size of the table. Deletes
        and the residual filter are applied; ``metadata_columns`` as ``read_tasks``."""
        with self.plan_batches() as stream:
            yield from reader.read_plan_stream(
                stream, metadata_columns, batch_size or reader.DEFAULT_BATCH_SIZE, self._io_properties()
            )

    def to_arrow(self, metadata_columns: Sequence[str] = (), batch_size: int | None = None) -> pa.Table:
        """The scan's rows as one pyarrow Table (see ``to_batches``)."""
        plan = self.plan_arrow()
        schema = reader.output_schema(plan.schema, metadata_columns)
        batches = list(
            reader.read_tasks(
                plan,
                metadata_columns=metadata_columns,
                batch_size=batch_size or reader.DEFAULT_BATCH_SIZE,
                io_properties=self._io_properties(),
            )
        )
        return pa.Table.from_batches(batches, schema=schema)

    def count(self) -> int:
        """The number of rows the scan reads: the sum of the files' record counts when no
        task has deletes or a residual other than ``true``, else by reading."""
        plan = self.plan_arrow()
        if reader.counts_from_metadata(plan):
            return int(sum(plan.column("record_count").to_pylist()))
        # nothing but the rows themselves is needed: read with an empty projection
        plan = _without_projection(plan)
        return sum(b.num_rows for b in reader.read_tasks(plan, io_properties=self._io_properties()))

    def plan_task_payloads(self, target_split_size: int | None = None) -> list[tuple[bytes, int]]:
        """The groups of ``plan_tasks()`` ready to ship to readers: for each, a
        self-contained payload (the group's Arrow IPC stream, LZ4-compressed, built in
        Rust) and its number of tasks. ``read_tasks`` and ``CombinedScanTask.from_bytes``
        take the payload. This is what the Spark data source's partitions carry: for a
        plan of a million files it avoids a million-row Python loop and keeps the bytes
        sent to Spark small."""
        payloads, _ = _native.plan_scan_payloads(
            self.table.metadata, self._options(), io=self.table.io, target_split_size=target_split_size
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
