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
from typing import Any

import pyarrow as pa

from .. import _native
from ..errors import InvalidArgumentError, InvalidArgumentTypeError
from ..executor.write import SPEC_ID_KEY, write_data_files
from .target import CatalogTable, catalog_state

__all__ = [
    "Transaction",
    "commit_transactions",
    "create_table_transaction",
    "UpdateSchema",
    "UpdateSpec",
    "ReplaceSortOrder",
    "to_schema",
    "spec_json",
    "sort_order_json",
]

# (column, transform) or (column, transform, name)
PartitionFieldSpec = tuple[str, str] | tuple[str, str, str]
# (column,) ... or (column, transform, direction, null_order)
SortFieldSpec = str | tuple[str, ...]


def to_schema(schema: Any) -> _native.Schema:
    """An icefloe ``Schema`` as it is, or the schema of a pyarrow schema (fields without
    ``PARQUET:field_id`` metadata get ids after the highest one present)."""
    if isinstance(schema, _native.Schema):
        return schema
    if isinstance(schema, pa.Schema):
        return _native.schema_from_arrow(schema)
    raise InvalidArgumentTypeError(
        f"expected an icefloe Schema or a pyarrow Schema, got {type(schema).__name__}"
    )


def _source_id(schema: _native.Schema, column: str) -> int:
    field = schema.find_field(column)
    if field is None:
        raise InvalidArgumentError(f"column {column!r} is not in the schema")
    return field.id


def spec_json(schema: _native.Schema, partition_spec: Any) -> str:
    """The JSON of a partition spec given as an icefloe ``PartitionSpec`` (its source ids
    refer to ``schema``), ``None`` (unpartitioned), or a list of ``(column, transform)`` /
    ``(column, transform, name)`` tuples. Unnamed fields get the names Java's
    ``PartitionSpec.Builder`` gives them and ids from 1000, as the Rust core defines both."""
    if partition_spec is None:
        return json.dumps({"spec-id": 0, "fields": []})
    if isinstance(partition_spec, _native.PartitionSpec):
        return partition_spec.to_json()
    fields = []
    for i, f in enumerate(partition_spec):
        column, transform = f[0], f[1]
        name = f[2] if len(f) > 2 else _native.default_partition_field_name(column, transform)
        fields.append(
            {
                "name": name,
                "transform": transform,
                "source-id": _source_id(schema, column),
                "field-id": _native.PARTITION_DATA_ID_START + i,
            }
        )
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
        fields.append(
            {
                "transform": transform,
                "source-id": _source_id(schema, column),
                "direction": direction,
                "null-order": null_order,
            }
        )
    return json.dumps({"order-id": 1 if fields else 0, "fields": fields})


def _batches(data_files: Any) -> list:
    if isinstance(data_files, pa.Table):
        return data_files.to_batches()
    if isinstance(data_files, pa.RecordBatch):
        return [data_files]
    if isinstance(data_files, Iterable):
        out = []
        for d in data_files:
            out.extend(_batches(d))
        return out
    raise InvalidArgumentTypeError(
        f"expected a pyarrow Table or RecordBatch of data files, got {type(data_files).__name__}"
    )


def _type_string(field_type: Any) -> str:
    """An Iceberg type given as a type string (``"long"``, ``"decimal(9, 2)"``), type JSON
    (a dict, for nested types) or a pyarrow ``DataType``."""
    if isinstance(field_type, str):
        return field_type
    if isinstance(field_type, dict):
        return json.dumps(field_type)
    if isinstance(field_type, pa.DataType):
        return _native.iceberg_type_of(field_type)
    raise InvalidArgumentTypeError(
        f"expected a type string, type JSON or a pyarrow type, got {type(field_type).__name__}"
    )


def _path(path: str | Sequence[str]) -> str:
    return path if isinstance(path, str) else ".".join(path)


def _split_parent(path: str | Sequence[str]) -> tuple[str | None, str]:
    """``"a.b.c"`` or ``("a", "b", "c")`` as (parent ``"a.b"``, name ``"c"``)."""
    parts = path.split(".") if isinstance(path, str) else list(path)
    if not parts or not all(parts):
        raise InvalidArgumentError(f"not a column path: {path!r}")
    return (".".join(parts[:-1]) or None), parts[-1]


def _spec_id_of(data_files: Any) -> int | None:
    """The spec id ``icefloe.executor.write`` records in its result's schema metadata, if any."""
    metadata = getattr(getattr(data_files, "schema", None), "metadata", None) or {}
    value = metadata.get(SPEC_ID_KEY)
    return int(value) if value is not None else None


def _delete_rows(rows: Any) -> Any:
    """Delete files to remove: rows (with ``file_path`` and, for DVs, ``content_offset``)
    or a list of paths."""
    if rows is None:
        return ()
    if isinstance(rows, (list, tuple)) and all(isinstance(p, str) for p in rows):
        return pa.table({"file_path": pa.array(list(rows), pa.string())}) if rows else ()
    return rows


def _expression(value: Any) -> _native.Expression | None:
    """A row filter given as an ``Expression`` or its text (``"cat = 2"``)."""
    if value is None or isinstance(value, _native.Expression):
        return value
    if isinstance(value, str):
        return _native.Expression.parse(value)
    raise InvalidArgumentTypeError(f"expected an Expression or its text, got {type(value).__name__}")


def _row_filter(value: Any) -> _native.Expression:
    """A required row filter (``_expression`` that is not ``None``)."""
    expression = _expression(value)
    if expression is None:
        raise InvalidArgumentError("a row filter is required (an Expression or its text), not None")
    return expression


class UpdateSchema:
    """Schema evolution, with PyIceberg's method names and Java's rules (ids, order,
    validation: see :mod:`icefloe` docs). Changes are checked as they are made; the new
    schema is committed when the ``with`` block ends (or by :meth:`commit`)::

        with table.update_schema() as u:
            u.add_column("ts", "timestamptz", doc="event time")
            u.add_column(("location", "alt"), "double")
            u.rename_column("name", "full_name")
            u.update_column("id", field_type="long")
            u.move_first("ts")

    Types are type strings (``"long"``, ``"decimal(9, 2)"``), type JSON for nested types, or
    pyarrow types. ``default`` (v3 tables) is a Python value in the type's JSON form
    (``"2024-01-01"`` for a date).
    """

    def __init__(
        self,
        table: CatalogTable,
        transaction: Transaction | None = None,
        *,
        allow_incompatible_changes: bool = False,
        case_sensitive: bool = True,
    ):
        self._table = table
        self._transaction = transaction
        md = table.metadata
        self._native = _native.UpdateSchema(
            md.schema(),
            md.last_column_id,
            case_sensitive=case_sensitive,
            allow_incompatible_changes=allow_incompatible_changes,
        )
        self._done = False

    def add_column(
        self,
        path: str | Sequence[str],
        field_type: Any,
        doc: str | None = None,
        required: bool = False,
        default: Any = None,
    ) -> UpdateSchema:
        """Adds a column; ``path`` names it, inside its parent struct when nested (for a
        list or map, the element or value struct): ``"a.b"`` or ``("a", "b")``."""
        parent, name = _split_parent(path)
        self._native.add_column(
            parent,
            name,
            _type_string(field_type),
            doc=doc,
            required=required,
            default_json=None if default is None else json.dumps(default),
        )
        return self

    def delete_column(self, path: str | Sequence[str]) -> UpdateSchema:
        self._native.delete_column(_path(path))
        return self

    def rename_column(self, path_from: str | Sequence[str], new_name: str) -> UpdateSchema:
        self._native.rename_column(_path(path_from), new_name)
        return self

    def update_column(
        self,
        path: str | Sequence[str],
        field_type: Any = None,
        required: bool | None = None,
        doc: str | None = None,
    ) -> UpdateSchema:
        """Widens the type (int→long, float→double, decimal precision), changes nullability
        (optional→required needs ``allow_incompatible_changes``) and/or the doc."""
        name = _path(path)
        if field_type is not None:
            self._native.update_column(name, _type_string(field_type))
        if required is True:
            self._native.require_column(name)
        elif required is False:
            self._native.make_column_optional(name)
        if doc is not None:
            self._native.update_column_doc(name, doc)
        return self

    def make_column_optional(self, path: str | Sequence[str]) -> UpdateSchema:
        self._native.make_column_optional(_path(path))
        return self

    def set_default(self, path: str | Sequence[str], default: Any) -> UpdateSchema:
        """Sets the column's write default (v3)."""
        self._native.update_column_default(_path(path), None if default is None else json.dumps(default))
        return self

    def move_first(self, path: str | Sequence[str]) -> UpdateSchema:
        self._native.move_first(_path(path))
        return self

    def move_before(self, path: str | Sequence[str], before_path: str | Sequence[str]) -> UpdateSchema:
        self._native.move_before(_path(path), _path(before_path))
        return self

    def move_after(self, path: str | Sequence[str], after_path: str | Sequence[str]) -> UpdateSchema:
        self._native.move_after(_path(path), _path(after_path))
        return self

    def set_identifier_fields(self, *fields: str) -> UpdateSchema:
        self._native.set_identifier_fields(list(fields))
        return self

    def union_by_name(self, new_schema: Any) -> UpdateSchema:
        """Adds the columns of ``new_schema`` (icefloe or pyarrow) the table lacks, matched by
        name at every level, and widens or makes optional the ones that differ."""
        self._native.union_by_name(to_schema(new_schema))
        return self

    def apply(self) -> _native.Schema:
        """The schema the changes give (nothing is committed)."""
        return self._native.apply()

    def commit(self) -> None:
        """Adds the change to the transaction, or commits it on its own."""
        if self._done:
            raise InvalidArgumentError("this schema update was already committed")
        self._done = True
        if self._transaction is not None:
            self._transaction._native.update_schema(self._native)
        else:
            with Transaction(self._table) as tx:
                tx._native.update_schema(self._native)

    def __enter__(self) -> UpdateSchema:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None and not self._done:
            self.commit()


class _Change:
    """A builder of one metadata change: joins its transaction (or commits on its own) when
    its ``with`` block ends or by :meth:`commit`."""

    def __init__(self, table: CatalogTable, transaction: Transaction | None):
        self._table = table
        self._transaction = transaction
        self._done = False

    def _add_to(self, tx: Transaction) -> None:
        raise NotImplementedError

    def commit(self) -> None:
        if self._done:
            raise InvalidArgumentError("this change was already committed")
        self._done = True
        if self._transaction is not None:
            self._add_to(self._transaction)
        else:
            with Transaction(self._table) as tx:
                self._add_to(tx)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None and not self._done:
            self.commit()


class UpdateSpec(_Change):
    """Partition evolution with PyIceberg's method names and Java's rules (field ids carried
    over from earlier specs, default names such as ``id_bucket_16``, v1 tables keep removed
    fields as ``void``)::

        with table.update_spec() as u:
            u.add_field("ts", "day")
            u.remove_field("id_bucket")
    """

    def __init__(
        self, table: CatalogTable, transaction: Transaction | None = None, case_sensitive: bool = True
    ):
        super().__init__(table, transaction)
        md = table.metadata
        self._base = (md.default_spec_id, md.last_partition_id)
        self._native = _native.UpdatePartitionSpec(
            md.format_version, md.schema(), md.spec(), md.specs, md.last_partition_id, case_sensitive
        )

    def add_field(
        self, source_column_name: str, transform: str = "identity", partition_field_name: str | None = None
    ) -> UpdateSpec:
        self._native.add_field(source_column_name, transform, partition_field_name)
        return self

    def add_identity(self, source_column_name: str) -> UpdateSpec:
        self._native.add_identity(source_column_name)
        return self

    def remove_field(self, name: str) -> UpdateSpec:
        self._native.remove_field(name)
        return self

    def rename_field(self, name: str, new_name: str) -> UpdateSpec:
        self._native.rename_field(name, new_name)
        return self

    def apply(self) -> _native.PartitionSpec:
        return self._native.apply()

    def _add_to(self, tx: Transaction) -> None:
        tx._native.update_spec(self._native.apply(), *self._base)


class ReplaceSortOrder(_Change):
    """A new default sort order (Java's rules)::

    with table.replace_sort_order() as s:
        s.asc("id").desc("ts", "day", "nulls-first")
    """

    def __init__(
        self, table: CatalogTable, transaction: Transaction | None = None, case_sensitive: bool = True
    ):
        super().__init__(table, transaction)
        self._base = table.metadata.default_sort_order_id
        self._native = _native.ReplaceSortOrder(table.metadata.schema(), case_sensitive)

    def asc(
        self, source_column_name: str, transform: str = "identity", null_order: str = "nulls-first"
    ) -> ReplaceSortOrder:
        self._native.asc(source_column_name, transform, null_order)
        return self

    def desc(
        self, source_column_name: str, transform: str = "identity", null_order: str = "nulls-last"
    ) -> ReplaceSortOrder:
        self._native.desc(source_column_name, transform, null_order)
        return self

    def apply(self) -> _native.SortOrder:
        return self._native.apply()

    def _add_to(self, tx: Transaction) -> None:
        tx._native.replace_sort_order(self._native.apply(), self._base)


class Transaction:
    """Changes to one table committed as one new metadata file.

    Use it as a context manager — the changes are committed when the block ends without an
    exception (and dropped otherwise)::

        with table.transaction() as tx:
            tx.set_properties(owner="etl")
            tx.append_files(data_files)

    Each change is applied again on top of the table's newest state if another writer
    committed first (appends always apply; removing files checks they are still live).

    Files the transaction wrote (:meth:`append`, :meth:`overwrite`) or was handed with
    :meth:`own_files` are deleted when the commit fails or the ``with`` block ends with an
    exception — unless the commit's outcome is unknown
    (``icefloe.errors.CommitStateUnknownError``, whose message names them): the table may
    then reference them, so they are kept.
    """

    def __init__(self, table: CatalogTable, native: _native.Transaction | None = None):
        self._table = table
        self._native = native if native is not None else _native.Transaction(*catalog_state(table))
        self._committed = False

    def update_schema(
        self, allow_incompatible_changes: bool = False, case_sensitive: bool = True
    ) -> UpdateSchema:
        """A schema change made against the table's schema as this transaction started; it
        joins the transaction when its ``with`` block ends (or by its ``commit()``)."""
        return UpdateSchema(
            self._table,
            self,
            allow_incompatible_changes=allow_incompatible_changes,
            case_sensitive=case_sensitive,
        )

    def update_spec(self, case_sensitive: bool = True) -> UpdateSpec:
        return UpdateSpec(self._table, self, case_sensitive)

    def replace_sort_order(self, case_sensitive: bool = True) -> ReplaceSortOrder:
        return ReplaceSortOrder(self._table, self, case_sensitive)

    def _io_properties(self) -> dict[str, str] | None:
        """The FileIO properties data files are written with (object stores)."""
        return self._table.io.properties_for(self._table.metadata.location)

    def append(self, data: Any, *, branch: str | None = None, merge: bool = False) -> Transaction:
        """Writes ``data`` (pyarrow) as Parquet data files of the table (partitioned, rolled
        and measured as :func:`icefloe.executor.write.write_data_files`) and appends them."""
        files = write_data_files(self._table.metadata, data, io_properties=self._io_properties())
        if files.num_rows:
            self.own_files(files.column("file_path").to_pylist())
            self.append_files(files, branch=branch, merge=merge)
        return self

    def own_files(self, paths: Sequence[str]) -> Transaction:
        """Hands over files written for this transaction (new data or delete files that
        nothing else references): they are deleted if the commit fails or the transaction
        is given up, and kept if the commit's outcome is unknown. Never pass files that
        existed before (e.g. imported with :meth:`append_files`)."""
        self._native.own_files(sorted({str(p) for p in paths}))
        return self

    def set_properties(self, properties: Mapping[str, str] | None = None, **kwargs: str) -> Transaction:
        updates = {**(properties or {}), **kwargs}
        self._native.set_properties([(k, str(v)) for k, v in updates.items()])
        return self

    def upgrade_table_version(self, format_version: int) -> Transaction:
        """Upgrades the table to ``format_version`` (PyIceberg's name for it); the same as
        setting the ``format-version`` property, which upgrades the table and is not
        stored, as in Java. A lower version than the table's is an error."""
        return self.set_properties({"format-version": str(format_version)})

    def remove_properties(self, *keys: str) -> Transaction:
        self._native.remove_properties(list(keys))
        return self

    def append_files(
        self,
        data_files: Any,
        *,
        spec_id: int | None = None,
        merge: bool = False,
        branch: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
    ) -> Transaction:
        """Adds data files (written for ``spec_id``, by default the table's default spec) in a
        new snapshot of ``branch`` (default ``main``): a fast append, or with ``merge=True`` a
        merge append (manifests merged per ``commit.manifest.*``)."""
        spec_id = _spec_id_of(data_files) if spec_id is None else spec_id
        self._native.append_files(
            _batches(data_files), _options(branch, snapshot_properties), spec_id=spec_id, merge=merge
        )
        return self

    def delete_files(
        self,
        paths: Sequence[str],
        *,
        branch: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
    ) -> Transaction:
        """Removes the data files at ``paths``; each must be live in the table."""
        self._native.replace_files(list(paths), [], _options(branch, snapshot_properties))
        return self

    def overwrite_files(
        self,
        delete_paths: Sequence[str],
        data_files: Any,
        *,
        spec_id: int | None = None,
        branch: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
    ) -> Transaction:
        """Removes the data files at ``delete_paths`` (each must be live) and adds
        ``data_files``, in one snapshot (extra summary entries: ``snapshot_properties``)."""
        spec_id = _spec_id_of(data_files) if spec_id is None else spec_id
        self._native.replace_files(
            list(delete_paths), _batches(data_files), _options(branch, snapshot_properties), spec_id=spec_id
        )
        return self

    def delete_where(
        self,
        row_filter: Any,
        *,
        branch: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
    ) -> Transaction:
        """Removes the data files (and delete files) all of whose rows match ``row_filter``
        (an expression or its text), as Java's ``DeleteFiles.deleteFromRowFilter``: by the
        strict projection of the filter on the partition, or by the file's metrics. A data
        file only some of whose rows may match fails the commit
        (``icefloe.errors.ValidationError``); delete its rows by position instead."""
        self._native.replace_where(_row_filter(row_filter), [], _options(branch, snapshot_properties))
        return self

    def overwrite_where(
        self,
        row_filter: Any,
        data_files: Any,
        *,
        spec_id: int | None = None,
        branch: str | None = None,
        validate_added_files_match: bool = True,
        validate_from_snapshot: int | None = None,
        conflict_detection_filter: Any = None,
        validate_no_conflicting_data: bool = False,
        validate_no_conflicting_deletes: bool = False,
        snapshot_properties: Mapping[str, str] | None = None,
    ) -> Transaction:
        """Java's ``OverwriteFiles.overwriteByRowFilter``: removes the files all of whose
        rows match ``row_filter`` (as :meth:`delete_where`) and adds ``data_files``, whose
        rows must all match the filter (``validateAddedFilesMatchOverwriteFilter``, on by
        default). The conflict validations are Java's ``validateNoConflictingData`` /
        ``validateNoConflictingDeletes`` from ``validate_from_snapshot``."""
        spec_id = _spec_id_of(data_files) if spec_id is None else spec_id
        options = _options(
            branch,
            snapshot_properties,
            from_snapshot=validate_from_snapshot,
            conflict_filter=_expression(conflict_detection_filter),
            no_conflicting_data_files=validate_no_conflicting_data,
            no_conflicting_delete_files=validate_no_conflicting_deletes,
        )
        self._native.replace_where(
            _row_filter(row_filter),
            _batches(data_files),
            options,
            spec_id=spec_id,
            validate_added_files_match=validate_added_files_match,
        )
        return self

    def overwrite(self, data: Any, overwrite_filter: Any, **options: Any) -> Transaction:
        """Writes ``data`` (pyarrow) as Parquet data files of the table and overwrites the
        rows matching ``overwrite_filter`` with them (:meth:`overwrite_where`)."""
        files = write_data_files(self._table.metadata, data, io_properties=self._io_properties())
        self.own_files(files.column("file_path").to_pylist())
        return self.overwrite_where(overwrite_filter, files, **options)

    def rewrite_manifests(
        self,
        *,
        spec_id: int | None = None,
        sort_by: Sequence[str] | None = None,
        cluster_by_partition: bool = False,
        branch: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
    ) -> Transaction:
        """Rewrites manifests in a ``replace`` snapshot that changes no file (entries kept as
        EXISTING with their snapshot ids and sequence numbers).

        By default as Java's Spark action and procedure ``rewrite_manifests``: the data
        manifests of partition spec ``spec_id`` (the table's default spec), then its delete
        manifests, become ``ceil(total bytes / commit.manifest.target-size-bytes)``
        manifests, entries sorted by partition (or by the partition fields named in
        ``sort_by``) so that each manifest covers a narrow range of partitions. A content
        with a single manifest that fits the target is left alone.
        :meth:`icefloe.Table.rewrite_manifests` commits nothing when nothing would change.

        With ``cluster_by_partition``: every data manifest is rewritten into one manifest per
        spec and partition (Java's ``RewriteManifests.clusterBy``); delete manifests are
        kept."""
        self._native.rewrite_manifests(
            _options(branch, snapshot_properties),
            spec_id=spec_id,
            sort_by=None if sort_by is None else list(sort_by),
            cluster_by_partition=cluster_by_partition,
        )
        return self

    def rewrite_files(
        self,
        delete_paths: Sequence[str],
        data_files: Any = (),
        *,
        remove_delete_files: Any = (),
        add_delete_files: Any = (),
        data_sequence_number: int | None = None,
        delete_sequence_numbers: Sequence[int | None] | None = None,
        validate_from_snapshot: int | None = None,
        spec_id: int | None = None,
        branch: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
    ) -> Transaction:
        """Java's ``RewriteFiles`` (compaction): the data files at ``delete_paths`` and the
        delete files ``remove_delete_files`` (rows or paths) are replaced by ``data_files``
        and ``add_delete_files`` in a ``replace`` snapshot. New data files keep
        ``data_sequence_number`` when given (the starting snapshot's, so that deletes added
        since still apply to their rows); new delete files keep ``delete_sequence_numbers``
        (one per row of ``add_delete_files``; a rewrite of delete files keeps the largest
        of those it replaces). Every replaced file must be live, and no delete
        added since ``validate_from_snapshot`` may apply to a replaced data file
        (``icefloe.errors.ValidationError``)."""
        spec_id = _spec_id_of(data_files) if spec_id is None else spec_id
        self._native.rewrite_files(
            list(delete_paths),
            _batches(data_files) if data_files is not None else [],
            _batches(_delete_rows(remove_delete_files)),
            _batches(add_delete_files) if add_delete_files is not None else [],
            _options(branch, snapshot_properties, from_snapshot=validate_from_snapshot),
            spec_id=spec_id,
            data_sequence_number=data_sequence_number,
            delete_sequence_numbers=list(delete_sequence_numbers) if delete_sequence_numbers else None,
        )
        return self

    def row_delta(
        self,
        *,
        add_data_files: Any = (),
        add_delete_files: Any = (),
        remove_delete_files: Any = (),
        remove_data_files: Sequence[str] = (),
        spec_id: int | None = None,
        branch: str | None = None,
        validate_from_snapshot: int | None = None,
        conflict_detection_filter: Any = None,
        validate_data_files_exist: Sequence[str] = (),
        validate_deleted_files: bool = False,
        validate_no_conflicting_data_files: bool = False,
        validate_no_conflicting_delete_files: bool = False,
        isolation_level: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
        data_file_positions: Mapping[str, tuple[Any, ...]] | None = None,
        plan: Any = None,
    ) -> Transaction:
        """A row-level change in one snapshot, as Java's ``RowDelta``.

        ``add_data_files`` and ``add_delete_files`` are data-file rows (delete files with
        ``content`` 1 = position deletes / DVs, 2 = equality deletes with ``equality_ids``);
        v3 tables take position deletes only as DVs (``file_format`` ``"puffin"`` with
        ``referenced_data_file``, ``content_offset``, ``content_size_in_bytes``), v2 tables
        only as position delete files. ``remove_delete_files`` are rows (or paths) of live
        delete files to drop — a DV is matched by path and ``content_offset``; replacing a
        data file's DV means removing the old one and adding the new one.
        ``remove_data_files`` are paths of data files to drop.

        Validations (each attempt, against the snapshots committed since
        ``validate_from_snapshot``, or the whole history when it is ``None``, as Java):
        ``conflict_detection_filter`` (an expression or its text) limits conflicts to files
        that may hold matching rows; ``validate_data_files_exist`` names data files the new
        deletes refer to, which must not have been removed; ``validate_deleted_files``;
        ``validate_no_conflicting_data_files`` / ``..._delete_files``; ``isolation_level``
        ``"serializable"`` (both) or ``"snapshot"`` (delete files only) as Spark's row-level
        writes. A DV added concurrently for a data file this change adds a DV for always
        fails. Failures raise ``icefloe.errors.ValidationFailed``.

        ``data_file_positions`` (v4 tables): data file path -> ``(leaf, ordinal)``, where the
        plan this change was made from found the files it removes or adds DVs for (the
        plan's ``v4_leaf`` and ``v4_ordinal`` columns), or ``(leaf, ordinal, block_offset,
        block_length)`` with the plan's ``v4_block_offset`` and ``v4_block_length`` too.
        The commit then reads those entries instead of searching the table's leaves (with
        the block, it reads the leaf only up to that block's end); a stale position (the
        leaf compacted, the file removed meanwhile) is detected and the commit searches as
        without it, and a block that does not check out makes it read the leaf whole.
        ``plan`` (a pyarrow table or batches of a plan this change was made from, e.g.
        ``scan.plan_arrow()``): the positions of the files it changes are taken from its
        v4 columns, as ``data_file_positions`` would give them."""
        for path, pos in (data_file_positions or {}).items():
            if len(pos) not in (2, 4):
                raise InvalidArgumentError(
                    f"data_file_positions[{path!r}]: expected (leaf, ordinal) or (leaf, ordinal, "
                    f"block_offset, block_length), got {len(pos)} values"
                )
        spec_id = _spec_id_of(add_data_files) if spec_id is None else spec_id
        removed = _delete_rows(remove_delete_files)
        options = _options(
            branch,
            snapshot_properties,
            from_snapshot=validate_from_snapshot,
            conflict_filter=_expression(conflict_detection_filter),
            referenced_data_files=list(validate_data_files_exist),
            validate_deleted_files=validate_deleted_files,
            no_conflicting_data_files=validate_no_conflicting_data_files,
            no_conflicting_delete_files=validate_no_conflicting_delete_files,
            isolation_level=isolation_level,
        )
        self._native.row_delta(
            options,
            add_data_files=_batches(add_data_files) if add_data_files is not None else [],
            add_delete_files=_batches(add_delete_files) if add_delete_files is not None else [],
            remove_delete_files=_batches(removed) if removed is not None else [],
            remove_data_files=list(remove_data_files),
            spec_id=spec_id,
            data_file_positions=[(p, pos[0], int(pos[1])) for p, pos in (data_file_positions or {}).items()],
            data_file_blocks=[
                (p, int(pos[2]), int(pos[3]))
                for p, pos in (data_file_positions or {}).items()
                if len(pos) == 4 and pos[2] is not None and pos[3] is not None
            ],
            plan=_batches(plan) if plan is not None else [],
        )
        return self

    def commit_transaction(self) -> CatalogTable:
        """Commits the changes; updates the table object and returns it."""
        location, metadata = self._native.commit()
        self._committed = True
        self._table.metadata, self._table.metadata_location = metadata, location
        return self._table

    def __enter__(self) -> Transaction:
        return self

    def abort(self) -> None:
        """Gives the transaction up without committing: the files it wrote or was handed
        with :meth:`own_files` are deleted. (Leaving the ``with`` block with an exception
        does this.)"""
        if not self._committed:
            self._native.abort()

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None and not self._committed:
            self.commit_transaction()
        elif exc_type is not None:
            self.abort()


def _options(
    branch: str | None, snapshot_properties: Mapping[str, str] | None, **validation: Any
) -> _native.CommitOptions:
    """How a change is committed: its branch, extra summary entries and validations."""
    return _native.CommitOptions(
        branch=branch, snapshot_properties=list((snapshot_properties or {}).items()), **validation
    )


def commit_transactions(transactions: Sequence[Transaction]) -> list[CatalogTable]:
    """Commits transactions on several tables of one catalog atomically: every table gets its
    changes or none does (a REST catalog's ``/v1/{prefix}/transactions/commit``; embedded
    catalogs raise ``UnsupportedError``). A stale table fails the whole commit with
    ``CommitFailedError`` and is not retried (the tables must be read again and the changes
    redone); the files the transactions wrote are then deleted, and kept when the outcome is
    unknown (``CommitStateUnknownError``). Every transaction is used up either way. Returns the
    tables, updated."""
    txs = list(transactions)
    for tx in txs:
        if tx._committed:
            raise InvalidArgumentError("the transaction was already committed")
    try:
        states = _native.commit_transactions([tx._native for tx in txs])
    except Exception:
        for tx in txs:
            # used up by the native side (its files already handled)
            tx._committed = True
        raise
    for tx, (location, metadata) in zip(txs, states, strict=True):
        tx._committed = True
        tx._table.metadata, tx._table.metadata_location = metadata, location
    return [tx._table for tx in txs]


def create_table_transaction(
    catalog: Any,
    identifier: tuple[str, ...],
    schema: Any,
    partition_spec: Any = None,
    sort_order: Any = None,
    properties: Mapping[str, str] | None = None,
    location: str | None = None,
    format_version: int | None = None,
) -> tuple[_native.Transaction, _native.TableMetadata]:
    """The native transaction that creates the table (a staged create where the catalog has
    one) and the metadata its first data files are written against. Used by
    ``Catalog.create_table_transaction``."""
    args = _new_table_args(identifier, schema, partition_spec, sort_order, properties, location)
    native = _native.Transaction.create(catalog.native, *args, format_version=format_version)
    return native, native.base_metadata


def _new_table_args(
    identifier: tuple[str, ...],
    schema: Any,
    partition_spec: Any,
    sort_order: Any,
    properties: Mapping[str, str] | None,
    location: str | None,
) -> tuple[Any, ...]:
    """A new table's description as the native create calls take it (after the catalog):
    identifier, schema, spec JSON, sort order JSON, location, properties."""
    native_schema = to_schema(schema)
    return (
        (list(identifier[:-1]), identifier[-1]),
        native_schema,
        spec_json(native_schema, partition_spec),
        sort_order_json(native_schema, sort_order),
        location,
        [(k, str(v)) for k, v in (properties or {}).items()],
    )


def create_table(
    catalog: Any,
    identifier: tuple[str, ...],
    schema: Any,
    partition_spec: Any = None,
    sort_order: Any = None,
    properties: Mapping[str, str] | None = None,
    location: str | None = None,
    format_version: int | None = None,
    replace: bool = False,
) -> tuple[str, _native.TableMetadata]:
    """Creates (or with ``replace``, creates or replaces) a table; returns its metadata
    location and metadata. Used by ``Catalog.create_table``."""
    args = _new_table_args(identifier, schema, partition_spec, sort_order, properties, location)
    return _native.create_table(catalog.native, *args, format_version=format_version, replace=replace)
