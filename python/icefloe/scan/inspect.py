"""Metadata tables (driver side): ``table.inspect.files()`` etc., PyIceberg's names, each a
``pyarrow.Table`` with the schema and values of Java Iceberg's metadata table of that name
(``SELECT * FROM cat.db.t.files`` in Spark). Built in Rust (``icefloe::inspect``) from the
table metadata and the manifests, which are read in parallel as planning reads them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import pyarrow as pa

from .. import _native
from .._time import epoch_millis
from ..errors import InvalidArgumentError, InvalidArgumentTypeError
from ..expressions import to_filter

__all__ = ["InspectTable", "METADATA_TABLES"]

#: The metadata table names, as Java's ``MetadataTableType`` (lower case).
METADATA_TABLES: tuple[str, ...] = tuple(_native.metadata_table_names())


class Inspectable(Protocol):
    """What the metadata tables need of their table (``icefloe.table.Table`` is one)."""

    metadata: _native.TableMetadata
    metadata_location: str | None

    @property
    def io(self) -> _native.FileIO:
        """The FileIO the manifests are read through."""
        ...


class InspectTable:
    """The metadata tables of one table. The tables of files, entries, manifests,
    partitions and position deletes take a snapshot (``snapshot_id``, ``ref`` or ``as_of``, at most one) where
    Java allows time travel; the ``all_`` tables cover every snapshot and take none.

    Every table takes ``row_filter`` (a filter string or expression on the metadata table's
    columns, nested ones by full name: ``"partition.cat = 'a' and record_count > 10"``,
    ``"readable_metrics.id.lower_bound >= 5"``), kept rows as Spark SQL's ``WHERE`` keeps
    them on Java's table (a null matches no comparison), and ``selected_fields`` (column
    names, as ``table.scan``'s: a struct whole or some of its fields)."""

    def __init__(self, table: Inspectable):
        self._table = table

    def table(
        self,
        name: str,
        snapshot_id: int | None = None,
        ref: str | None = None,
        as_of: Any = None,
        *,
        row_filter: Any = None,
        selected_fields: Sequence[str] | None = None,
        case_sensitive: bool = True,
    ) -> pa.Table:
        """The metadata table ``name`` (one of ``METADATA_TABLES``, case-insensitive)."""
        if sum(x is not None for x in (snapshot_id, ref, as_of)) > 1:
            raise InvalidArgumentError("give at most one of snapshot_id, ref and as_of")
        if isinstance(selected_fields, str):
            raise InvalidArgumentTypeError(
                f"selected_fields is a sequence of column names, not the string {selected_fields!r}"
            )
        t = self._table
        schema, batches = _native.inspect_table(
            t.metadata,
            name,
            io=t.io,
            metadata_location=t.metadata_location,
            snapshot_id=snapshot_id,
            ref_name=ref,
            as_of_ms=None if as_of is None else epoch_millis(as_of, "as_of"),
            filter=None if row_filter is None or row_filter is True else to_filter(row_filter),
            selected=None if selected_fields is None else list(selected_fields),
            case_sensitive=case_sensitive,
        )
        return pa.Table.from_batches(batches, schema=schema)

    def snapshots(self, **options: Any) -> pa.Table:
        return self.table("snapshots", **options)

    def history(self, **options: Any) -> pa.Table:
        return self.table("history", **options)

    def metadata_log_entries(self, **options: Any) -> pa.Table:
        return self.table("metadata_log_entries", **options)

    def refs(self, **options: Any) -> pa.Table:
        return self.table("refs", **options)

    def manifests(self, snapshot_id: int | None = None, ref: str | None = None, **options: Any) -> pa.Table:
        return self.table("manifests", snapshot_id, ref, **options)

    def all_manifests(self, **options: Any) -> pa.Table:
        return self.table("all_manifests", **options)

    def files(self, snapshot_id: int | None = None, ref: str | None = None, **options: Any) -> pa.Table:
        return self.table("files", snapshot_id, ref, **options)

    def data_files(self, snapshot_id: int | None = None, ref: str | None = None, **options: Any) -> pa.Table:
        return self.table("data_files", snapshot_id, ref, **options)

    def delete_files(
        self, snapshot_id: int | None = None, ref: str | None = None, **options: Any
    ) -> pa.Table:
        return self.table("delete_files", snapshot_id, ref, **options)

    def entries(self, snapshot_id: int | None = None, ref: str | None = None, **options: Any) -> pa.Table:
        return self.table("entries", snapshot_id, ref, **options)

    def partitions(self, snapshot_id: int | None = None, ref: str | None = None, **options: Any) -> pa.Table:
        return self.table("partitions", snapshot_id, ref, **options)

    def all_files(self, **options: Any) -> pa.Table:
        return self.table("all_files", **options)

    def all_data_files(self, **options: Any) -> pa.Table:
        return self.table("all_data_files", **options)

    def all_delete_files(self, **options: Any) -> pa.Table:
        return self.table("all_delete_files", **options)

    def all_entries(self, **options: Any) -> pa.Table:
        return self.table("all_entries", **options)

    def position_deletes(
        self, snapshot_id: int | None = None, ref: str | None = None, **options: Any
    ) -> pa.Table:
        """One row per deleted position of the snapshot's position delete files and deletion
        vectors (``file_path``, ``pos``, the deleted ``row`` when the file stores it,
        ``partition``, ``spec_id``, ``delete_file_path``; v3: the DV's blob offset and size)."""
        return self.table("position_deletes", snapshot_id, ref, **options)
