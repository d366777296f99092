"""Table changes: creating tables, and transactions that commit several changes at once.

``catalog.create_table(...)`` and ``table.transaction()`` are the entry points; the work is
done in Rust (``icefloe::commit``): each commit writes new manifests, a manifest list and a
metadata file, then swaps the catalog pointer, retrying on conflicts per the table's
``commit.retry.*`` properties.

Data files are given as pyarrow tables (or record batches) of data-file rows: the columns of
``icefloe._native.manifest_entries_schema(schema, spec)`` — ``content``, ``file_path``,
``file_format``, ``partition`` (a struct of the spec's partition fields), ``record_count``,
``file_size_in_bytes`` and the optional metrics; the entry columns (``status``,
``snapshot_id``, sequence numbers) may be left out.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Union

from . import _native

if TYPE_CHECKING:
    import pyarrow as pa

    from .table import Table

__all__ = ["Transaction", "to_schema", "spec_json", "sort_order_json"]

# (column, transform) or (column, transform, name)
PartitionFieldSpec = Union[tuple[str, str], tuple[str, str, str]]
# (column,) ... or (column, transform, direction, null_order)
SortFieldSpec = Union[str, tuple[str, ...]]


def to_schema(schema: Any) -> _native.Schema:
    """An icefloe ``Schema`` as it is, or the schema of a pyarrow schema (fields without
    ``PARQUET:field_id`` metadata get ids after the highest one present)."""
    if isinstance(schema, _native.Schema):
        return schema
    import pyarrow as pa

    if isinstance(schema, pa.Schema):
        return _native.schema_from_arrow(schema)
    raise TypeError(f"expected an icefloe Schema or a pyarrow Schema, got {type(schema).__name__}")


def _source_id(schema: _native.Schema, column: str) -> int:
    field = schema.find_field(column)
    if field is None:
        raise ValueError(f"column {column!r} is not in the schema")
    return field.id


def _default_name(column: str, transform: str) -> str:
    base = column.replace(".", "_")
    if transform == "identity":
        return base
    head = transform.split("[")[0]
    if "[" in transform:
        return f"{base}_{head}"
    return f"{base}_{head}"


def spec_json(schema: _native.Schema, partition_spec: Any) -> str:
    """The JSON of a partition spec given as an icefloe ``PartitionSpec`` (its source ids
    refer to ``schema``), ``None`` (unpartitioned), or a list of ``(column, transform)`` /
    ``(column, transform, name)`` tuples."""
    if partition_spec is None:
        return json.dumps({"spec-id": 0, "fields": []})
    if isinstance(partition_spec, _native.PartitionSpec):
        return partition_spec.to_json()
    fields = []
    for i, f in enumerate(partition_spec):
        column, transform = f[0], f[1]
        name = f[2] if len(f) > 2 else _default_name(column, transform)
        fields.append({"name": name, "transform": transform, "source-id": _source_id(schema, column),
                       "field-id": 1000 + i})
    return json.dumps({"spec-id": 0, "fields": fields})


def sort_order_json(schema: _native.Schema, sort_order: Any) -> str:
    """The JSON of a sort order given as an icefloe ``SortOrder``, ``None`` (unsorted), or a
    list of column names or ``(column, transform, direction, null_order)`` tuples
    (direction ``"asc"``/``"desc"``, null order ``"nulls-first"``/``"nulls-last"``; by
    default identity, ascending, nulls first for ascending and last for descending)."""
    if sort_order is None:
        return json.dumps({"order-id": 0, "fields": []})
    if isinstance(sort_order, _native.SortOrder):
        return sort_order.to_json()
    fields = []
    for f in sort_order:
        parts = (f,) if isinstance(f, str) else tuple(f)
        column = parts[0]
        transform = parts[1] if len(parts) > 1 else "identity"
        direction = parts[2] if len(parts) > 2 else "asc"
        null_order = parts[3] if len(parts) > 3 else ("nulls-first" if direction == "asc" else "nulls-last")
        fields.append({"transform": transform, "source-id": _source_id(schema, column),
                       "direction": direction, "null-order": null_order})
    return json.dumps({"order-id": 1 if fields else 0, "fields": fields})


def _batches(data_files: Any) -> list:
    import pyarrow as pa

    if isinstance(data_files, pa.Table):
        return data_files.to_batches()
    if isinstance(data_files, pa.RecordBatch):
        return [data_files]
    if isinstance(data_files, Iterable):
        out = []
        for d in data_files:
            out.extend(_batches(d))
        return out
    raise TypeError(f"expected a pyarrow Table or RecordBatch of data files, got {type(data_files).__name__}")


class Transaction:
    """Changes to one table committed as one new metadata file.

    Use it as a context manager — the changes are committed when the block ends without an
    exception (and dropped otherwise)::

        with table.transaction() as tx:
            tx.set_properties(owner="etl")
            tx.append_files(data_files)

    Each change is applied again on top of the table's newest state if another writer
    committed first (appends always apply; removing files checks they are still live).
    """

    def __init__(self, table: Table):
        if table.catalog is None or table.identifier is None:
            raise ValueError("this table was opened from a file, not loaded from a catalog")
        self._table = table
        ident = table.identifier
        self._native = _native.Transaction(table.catalog._native, (list(ident[:-1]), ident[-1]),
                                           (table.metadata_location, table.metadata))
        self._committed = False

    def set_properties(self, properties: Mapping[str, str] | None = None, **kwargs: str) -> Transaction:
        updates = {**(properties or {}), **kwargs}
        self._native.set_properties([(k, str(v)) for k, v in updates.items()])
        return self

    def remove_properties(self, *keys: str) -> Transaction:
        self._native.remove_properties(list(keys))
        return self

    def append_files(self, data_files: Any, *, spec_id: int | None = None, merge: bool = False,
                     branch: str | None = None, snapshot_properties: Mapping[str, str] | None = None
                     ) -> Transaction:
        """Adds data files (written for ``spec_id``, by default the table's default spec) in a
        new snapshot of ``branch`` (default ``main``): a fast append, or with ``merge=True`` a
        merge append (manifests merged per ``commit.manifest.*``)."""
        self._native.append_files(_batches(data_files), spec_id, merge, branch,
                                  list((snapshot_properties or {}).items()))
        return self

    def delete_files(self, paths: Sequence[str], *, branch: str | None = None) -> Transaction:
        """Removes the data files at ``paths``; each must be live in the table."""
        self._native.replace_files(list(paths), [], None, branch)
        return self

    def overwrite_files(self, delete_paths: Sequence[str], data_files: Any, *, spec_id: int | None = None,
                        branch: str | None = None) -> Transaction:
        """Removes the data files at ``delete_paths`` (each must be live) and adds
        ``data_files``, in one snapshot."""
        self._native.replace_files(list(delete_paths), _batches(data_files), spec_id, branch)
        return self

    def commit_transaction(self) -> Table:
        """Commits the changes; updates the table object and returns it."""
        location, metadata = self._native.commit()
        self._committed = True
        self._table.metadata, self._table.metadata_location = metadata, location
        return self._table

    def __enter__(self) -> Transaction:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None and not self._committed:
            self.commit_transaction()


def create_table(catalog: Any, identifier: tuple[str, ...], schema: Any, partition_spec: Any = None,
                 sort_order: Any = None, properties: Mapping[str, str] | None = None,
                 location: str | None = None, format_version: int | None = None,
                 replace: bool = False) -> tuple[str, _native.TableMetadata]:
    """Creates (or with ``replace``, creates or replaces) a table; returns its metadata
    location and metadata. Used by ``Catalog.create_table``."""
    native_schema = to_schema(schema)
    props = [(k, str(v)) for k, v in (properties or {}).items()]
    return _native.create_table(catalog._native, (list(identifier[:-1]), identifier[-1]), native_schema,
                                spec_json(native_schema, partition_spec),
                                sort_order_json(native_schema, sort_order), location, props,
                                format_version, replace)
