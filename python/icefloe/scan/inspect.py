"""Metadata tables (driver side): ``table.inspect.files()`` etc., PyIceberg's names, each a
``pyarrow.Table`` with the schema and values of Java Iceberg's metadata table of that name
(``SELECT * FROM cat.db.t.files`` in Spark). Built in Rust (``icefloe::inspect``) from the
table metadata and the manifests, which are read in parallel as planning reads them."""

from __future__ import annotations

from typing import Any, Protocol

import pyarrow as pa

from .. import _native
from .._time import epoch_millis
from ..errors import InvalidArgumentError

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
    """The metadata tables of one table. The tables of files, entries, manifests and
    partitions take a snapshot (``snapshot_id``, ``ref`` or ``as_of``, at most one) where
    Java allows time travel; the ``all_`` tables cover every snapshot and take none."""

    def __init__(self, table: Inspectable):
        self._table = table

    def table(
        self,
        name: str,
        snapshot_id: int | None = None,
        ref: str | None = None,
        as_of: Any = None,
    ) -> pa.Table:
        """The metadata table ``name`` (one of ``METADATA_TABLES``, case-insensitive)."""
        if sum(x is not None for x in (snapshot_id, ref, as_of)) > 1:
            raise InvalidArgumentError("give at most one of snapshot_id, ref and as_of")
        t = self._table
        batch = _native.inspect_table(
            t.metadata,
            name,
            io=t.io,
            metadata_location=t.metadata_location,
            snapshot_id=snapshot_id,
            ref_name=ref,
            as_of_ms=None if as_of is None else epoch_millis(as_of, "as_of"),
        )
        return pa.Table.from_batches([batch])

    def snapshots(self) -> pa.Table:
        return self.table("snapshots")

    def history(self) -> pa.Table:
        return self.table("history")

    def metadata_log_entries(self) -> pa.Table:
        return self.table("metadata_log_entries")

    def refs(self) -> pa.Table:
        return self.table("refs")

    def manifests(self, snapshot_id: int | None = None, ref: str | None = None) -> pa.Table:
        return self.table("manifests", snapshot_id, ref)

    def all_manifests(self) -> pa.Table:
        return self.table("all_manifests")

    def files(self, snapshot_id: int | None = None, ref: str | None = None) -> pa.Table:
        return self.table("files", snapshot_id, ref)

    def data_files(self, snapshot_id: int | None = None, ref: str | None = None) -> pa.Table:
        return self.table("data_files", snapshot_id, ref)

    def delete_files(self, snapshot_id: int | None = None, ref: str | None = None) -> pa.Table:
        return self.table("delete_files", snapshot_id, ref)

    def entries(self, snapshot_id: int | None = None, ref: str | None = None) -> pa.Table:
        return self.table("entries", snapshot_id, ref)

    def partitions(self, snapshot_id: int | None = None, ref: str | None = None) -> pa.Table:
        return self.table("partitions", snapshot_id, ref)

    def all_files(self) -> pa.Table:
        return self.table("all_files")

    def all_data_files(self) -> pa.Table:
        return self.table("all_data_files")

    def all_delete_files(self) -> pa.Table:
        return self.table("all_delete_files")

    def all_entries(self) -> pa.Table:
        return self.table("all_entries")
