"""Catalogs, shaped like PyIceberg's.

``load_catalog(name, **properties)`` opens a catalog from PyIceberg's property names:

- ``type``: ``"sql"`` (default) or ``"filesystem"`` (Java's ``HadoopCatalog`` layout;
  local disks only, never object stores);
- ``uri``: the SQLite database, ``"sqlite:///relative/catalog.db"`` or
  ``"sqlite:////absolute/catalog.db"`` (SQLAlchemy's form, as PyIceberg takes it) or
  ``"jdbc:sqlite:/path/catalog.db"`` (Java's);
- ``warehouse``: where new tables go, ``"file:///…"`` or a local path.

With neither ``uri`` nor ``warehouse`` it opens the embedded default: ``catalog.db`` and
``warehouse/`` in the folder ``$ICEFLOE_HOME``, or ``./icefloe-warehouse`` when unset.

The SQL catalog uses the tables and columns of Java's ``JdbcCatalog`` and PyIceberg's
``SqlCatalog``, so all three can open the same file. Identifiers are dotted strings
(``"db.events"``) or tuples (``("db", "events")``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import _native
from ._log import log, some_paths
from .errors import AlreadyExistsError, InvalidArgumentError
from .table import Table
from .update.transaction import (
    Transaction,
    commit_transactions,
    create_table,
    create_table_transaction,
    to_schema,
)

__all__ = ["Catalog", "View", "PropertiesUpdateSummary", "PurgeResult", "load_catalog"]

Identifier = str | tuple[str, ...] | list[str]


@dataclass(frozen=True)
class PurgeResult:
    """What :meth:`Catalog.purge_table` did."""

    deleted_files: int
    #: files the metadata names outside the table's location, left in place
    kept_outside_location: list[str] = field(default_factory=list)
    #: files that could not be read or deleted (the purge went on past them)
    failed: list[str] = field(default_factory=list)


def _to_tuple(identifier: Identifier) -> tuple[str, ...]:
    if isinstance(identifier, str):
        return tuple(identifier.split("."))
    return tuple(identifier)


def _namespace(namespace: Identifier) -> list[str]:
    levels = list(_to_tuple(namespace))
    if not levels or any(not level for level in levels):
        raise InvalidArgumentError(f"{namespace!r} is not a namespace")
    return levels


def _ident(identifier: Identifier) -> tuple[list[str], str]:
    parts = _to_tuple(identifier)
    if len(parts) < 2 or any(not p for p in parts):
        raise InvalidArgumentError(f"{identifier!r} is not a table name of the form 'namespace.name'")
    return list(parts[:-1]), parts[-1]


@dataclass(frozen=True)
class PropertiesUpdateSummary:
    """What ``update_namespace_properties`` did, as PyIceberg reports it."""

    removed: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


class View:
    """An Iceberg view loaded from a catalog: its metadata and where it was read from."""

    def __init__(
        self,
        metadata: _native.ViewMetadata,
        metadata_location: str,
        catalog: Catalog,
        identifier: tuple[str, ...],
    ):
        self.metadata = metadata
        self.metadata_location = metadata_location
        self.catalog = catalog
        self.identifier = identifier

    def name(self) -> tuple[str, ...]:
        return self.identifier

    def __repr__(self) -> str:
        return f"View({'.'.join(self.identifier)!r}, {self.metadata_location!r})"


class Catalog:
    """A catalog of namespaces, tables and views (see :func:`load_catalog`)."""

    def __init__(self, native: _native.Catalog, properties: Mapping[str, str]):
        self._native = native
        self.properties = dict(properties)

    @property
    def name(self) -> str:
        return self._native.name

    @property
    def io(self) -> _native.FileIO:
        """The FileIO the catalog's tables are read and written through (chosen by the
        warehouse location's scheme and the catalog's FileIO properties)."""
        return self._native.io

    @property
    def native(self) -> _native.Catalog:
        """The native catalog handle, which transactions and snapshot changes commit
        through."""
        return self._native

    def __repr__(self) -> str:
        return f"Catalog({self.name!r})"

    # --- namespaces ---

    def create_namespace(self, namespace: Identifier, properties: Mapping[str, str] | None = None) -> None:
        """Creates a namespace; ``AlreadyExistsError`` if it exists."""
        self._native.create_namespace(_namespace(namespace), list((properties or {}).items()))

    def create_namespace_if_not_exists(
        self, namespace: Identifier, properties: Mapping[str, str] | None = None
    ) -> None:
        try:
            self.create_namespace(namespace, properties)
        except AlreadyExistsError:
            pass

    def list_namespaces(self, namespace: Identifier = ()) -> list[tuple[str, ...]]:
        """The namespaces directly under ``namespace`` (top-level ones by default)."""
        parent = list(_to_tuple(namespace)) if namespace else []
        return [tuple(ns) for ns in self._native.list_namespaces(parent)]

    def namespace_exists(self, namespace: Identifier) -> bool:
        return self._native.namespace_exists(_namespace(namespace))

    def load_namespace_properties(self, namespace: Identifier) -> dict[str, str]:
        """The namespace's properties (with ``location``, as Java reports it)."""
        return dict(self._native.namespace_properties(_namespace(namespace)))

    def update_namespace_properties(
        self,
        namespace: Identifier,
        removals: Iterable[str] | None = None,
        updates: Mapping[str, str] | None = None,
    ) -> PropertiesUpdateSummary:
        """Removes ``removals`` and sets ``updates`` in one step."""
        levels = _namespace(namespace)
        removals = sorted(set(removals or ()))
        updates = dict(updates or {})
        # stored keys only: `location` is reported by default but not stored unless set
        current = dict(self._native.namespace_properties(levels))
        self._native.update_namespace_properties(levels, removals, list(updates.items()))
        return PropertiesUpdateSummary(
            removed=[k for k in removals if k in current],
            updated=list(updates),
            missing=[k for k in removals if k not in current],
        )

    def drop_namespace(self, namespace: Identifier) -> None:
        """Drops an empty namespace; ``NamespaceNotEmptyError`` if it holds anything."""
        self._native.drop_namespace(_namespace(namespace))

    # --- tables ---

    def list_tables(self, namespace: Identifier) -> list[tuple[str, ...]]:
        return [tuple(ns) + (name,) for ns, name in self._native.list_tables(_namespace(namespace))]

    def table_exists(self, identifier: Identifier) -> bool:
        return self._native.table_exists(_ident(identifier))

    def _table(self, identifier: Identifier, state: tuple[str, _native.TableMetadata]) -> Table:
        location, metadata = state
        return Table(metadata, location, catalog=self, identifier=_to_tuple(identifier))

    def load_table(self, identifier: Identifier) -> Table:
        """The table's current metadata; ``NoSuchTableError`` if there is no such table."""
        return self._table(identifier, self._native.load_table(_ident(identifier)))

    def register_table(self, identifier: Identifier, metadata_location: str) -> Table:
        """Adds the table whose metadata file is ``metadata_location`` under ``identifier``."""
        return self._table(identifier, self._native.register_table(_ident(identifier), metadata_location))

    def rename_table(self, from_identifier: Identifier, to_identifier: Identifier) -> Table:
        self._native.rename_table(_ident(from_identifier), _ident(to_identifier))
        return self.load_table(to_identifier)

    def drop_table(self, identifier: Identifier) -> None:
        """Removes the table from the catalog; its files stay."""
        self._native.drop_table(_ident(identifier))

    def purge_table(self, identifier: Identifier, *, delete_outside_location: bool = False) -> PurgeResult:
        """Removes the table and deletes the files its metadata reaches (data and delete
        files — unless ``gc.enabled`` is false —, manifests, manifest lists, statistics and
        metadata files).

        By default only files inside the table's location (the metadata's ``location``)
        are deleted: the metadata of a registered table may name files of another table or
        outside the warehouse. The files kept are listed in the result and logged as a
        warning (logger ``icefloe``). ``delete_outside_location=True`` deletes every file
        the metadata names, wherever it is, as Java's ``CatalogUtil.dropTableData``."""
        deleted, kept, failed = self._native.purge_table(_ident(identifier), delete_outside_location)
        result = PurgeResult(deleted_files=deleted, kept_outside_location=list(kept), failed=list(failed))
        if kept:
            log.warning(
                "purge of %s kept %d file(s) outside the table's location (pass "
                "delete_outside_location=True to delete them): %s",
                ".".join(_to_tuple(identifier)),
                len(kept),
                some_paths(kept),
            )
        return result

    def default_table_location(self, identifier: Identifier) -> str:
        """Where a table of that name goes when created without a location."""
        return self._native.default_table_location(_ident(identifier))

    def _commit_table(
        self, identifier: Identifier, base: Table | None, metadata: _native.TableMetadata
    ) -> Table:
        """Writes ``metadata`` as the next metadata file of the table and swaps the catalog
        pointer if the table is still at ``base`` (``None``: creates it). Raises
        ``CommitFailedError`` when another writer committed first. The building block of
        table changes (``create_table`` and the operations of ``icefloe.update.transaction``)."""
        base_state = None
        if base is not None:
            if base.metadata_location is None:
                raise InvalidArgumentError("the base of a commit must be a table loaded from this catalog")
            base_state = (base.metadata_location, base.metadata)
        return self._table(identifier, self._native.commit_table(_ident(identifier), base_state, metadata))

    def create_table(
        self,
        identifier: Identifier,
        schema: Any,
        location: str | None = None,
        partition_spec: Any = None,
        sort_order: Any = None,
        properties: Mapping[str, str] | None = None,
        format_version: int | None = None,
    ) -> Table:
        """Creates a table; ``AlreadyExistsError`` if it exists, ``NoSuchNamespaceError``
        without its namespace.

        ``schema`` is an icefloe ``Schema`` or a pyarrow schema (fields without
        ``PARQUET:field_id`` metadata get ids). Columns get fresh ids as Java assigns them.
        ``partition_spec`` and ``sort_order`` are icefloe ``PartitionSpec``/``SortOrder``
        (referring to the schema's ids), or lists: ``[("ts", "day"), ("id", "bucket[16]",
        "id_b")]`` and ``["id", ("ts", "identity", "desc", "nulls-last")]``. The format
        version is ``format_version``, else the ``format-version`` property, else 3. Version
        4 follows the single-file-commits proposal, which Apache Iceberg has not adopted
        (docs/v4.md): it is created only when asked for, and other engines may not read it.
        """
        location_, metadata = create_table(
            self,
            _to_tuple(identifier),
            schema,
            partition_spec,
            sort_order,
            properties,
            location,
            format_version,
        )
        return self._table(identifier, (location_, metadata))

    def create_table_transaction(
        self,
        identifier: Identifier,
        schema: Any,
        location: str | None = None,
        partition_spec: Any = None,
        sort_order: Any = None,
        properties: Mapping[str, str] | None = None,
        format_version: int | None = None,
    ) -> Transaction:
        """A transaction that creates the table when it commits, with the data it appends
        (create-table-as-select): the table does not exist until then, and is created with its
        first snapshot in one commit. The arguments are :meth:`create_table`'s.

        A REST catalog is asked first for the new table's metadata (a staged create: its
        location, the properties the server adds, and the credentials to write there), which
        the data is written against. ``AlreadyExistsError`` at commit if someone created the
        table meanwhile; the files the transaction wrote are then deleted::

            with catalog.create_table_transaction("db.t", arrow_table.schema) as tx:
                tx.append(arrow_table)
        """
        ident = _to_tuple(identifier)
        native, metadata = create_table_transaction(
            self, ident, schema, partition_spec, sort_order, properties, location, format_version
        )
        return Transaction(Table(metadata, None, catalog=self, identifier=ident), native)

    def commit_transactions(self, *transactions: Transaction) -> list[Table]:
        """Commits transactions on several of this catalog's tables atomically (see
        :func:`icefloe.update.transaction.commit_transactions`): every table gets its changes or
        none does; a conflict on any table is ``CommitFailedError`` and is not retried."""
        for tx in transactions:
            if tx._table.catalog is not self:
                raise InvalidArgumentError("every transaction must be on a table of this catalog")
        return commit_transactions(transactions)  # type: ignore[return-value]

    def create_table_if_not_exists(
        self,
        identifier: Identifier,
        schema: Any,
        location: str | None = None,
        partition_spec: Any = None,
        sort_order: Any = None,
        properties: Mapping[str, str] | None = None,
        format_version: int | None = None,
    ) -> Table:
        """As :meth:`create_table`, or the existing table when there is one."""
        try:
            return self.create_table(
                identifier, schema, location, partition_spec, sort_order, properties, format_version
            )
        except AlreadyExistsError:
            return self.load_table(identifier)

    def create_or_replace_table(
        self,
        identifier: Identifier,
        schema: Any,
        location: str | None = None,
        partition_spec: Any = None,
        sort_order: Any = None,
        properties: Mapping[str, str] | None = None,
        format_version: int | None = None,
    ) -> Table:
        """Creates the table, or replaces the existing one's schema, partitioning, sort order,
        location and properties while keeping its history (columns of the same name keep their
        ids); the replaced table has no current snapshot until data is written."""
        location_, metadata = create_table(
            self,
            _to_tuple(identifier),
            schema,
            partition_spec,
            sort_order,
            properties,
            location,
            format_version,
            replace=True,
        )
        return self._table(identifier, (location_, metadata))

    # --- views ---

    def list_views(self, namespace: Identifier) -> list[tuple[str, ...]]:
        return [tuple(ns) + (name,) for ns, name in self._native.list_views(_namespace(namespace))]

    def view_exists(self, identifier: Identifier) -> bool:
        return self._native.view_exists(_ident(identifier))

    def load_view(self, identifier: Identifier) -> View:
        location, metadata = self._native.load_view(_ident(identifier))
        return View(metadata, location, self, _to_tuple(identifier))

    def rename_view(self, from_identifier: Identifier, to_identifier: Identifier) -> None:
        self._native.rename_view(_ident(from_identifier), _ident(to_identifier))

    def drop_view(self, identifier: Identifier) -> None:
        self._native.drop_view(_ident(identifier))

    def create_view(
        self,
        identifier: Identifier,
        schema: Any,
        sql: str | Mapping[str, str],
        dialect: str = "spark",
        default_namespace: Identifier | None = None,
        default_catalog: str | None = None,
        properties: Mapping[str, str] | None = None,
        summary: Mapping[str, str] | None = None,
        location: str | None = None,
    ) -> View:
        """Creates a view; ``AlreadyExistsError`` if a view or table has the name.

        ``sql`` is the query in ``dialect``, or a ``{dialect: sql}`` mapping for several
        dialects. ``schema`` (an icefloe ``Schema`` or a pyarrow schema) is the query's output.
        Unqualified names in the SQL resolve in ``default_namespace`` (by default the view's
        own namespace) and ``default_catalog``. The version summary records
        ``engine-name=icefloe`` plus ``summary``; as Java, view metadata files are gzip
        unless ``write.metadata.compression-codec`` says ``none``."""
        return self._build_view(
            "create",
            identifier,
            schema,
            sql,
            dialect,
            default_namespace,
            default_catalog,
            properties,
            summary,
            location,
        )

    def replace_view(
        self,
        identifier: Identifier,
        schema: Any,
        sql: str | Mapping[str, str],
        dialect: str = "spark",
        default_namespace: Identifier | None = None,
        default_catalog: str | None = None,
        properties: Mapping[str, str] | None = None,
        summary: Mapping[str, str] | None = None,
        location: str | None = None,
    ) -> View:
        """Adds a version to an existing view and makes it current (Java's rules: an identical
        earlier version is re-activated instead; the dialects of the replaced version must all
        stay unless ``replace.drop-dialect.allowed=true``; ``version.history.num-entries``
        versions are kept). ``NoSuchViewError`` without the view; ``CommitFailedError`` when
        another writer changed it meanwhile."""
        return self._build_view(
            "replace",
            identifier,
            schema,
            sql,
            dialect,
            default_namespace,
            default_catalog,
            properties,
            summary,
            location,
        )

    def create_or_replace_view(
        self,
        identifier: Identifier,
        schema: Any,
        sql: str | Mapping[str, str],
        dialect: str = "spark",
        default_namespace: Identifier | None = None,
        default_catalog: str | None = None,
        properties: Mapping[str, str] | None = None,
        summary: Mapping[str, str] | None = None,
        location: str | None = None,
    ) -> View:
        """:meth:`replace_view` when the view exists, else :meth:`create_view`."""
        return self._build_view(
            "create_or_replace",
            identifier,
            schema,
            sql,
            dialect,
            default_namespace,
            default_catalog,
            properties,
            summary,
            location,
        )

    def _build_view(
        self,
        mode: str,
        identifier: Identifier,
        schema: Any,
        sql: str | Mapping[str, str],
        dialect: str,
        default_namespace: Identifier | None,
        default_catalog: str | None,
        properties: Mapping[str, str] | None,
        summary: Mapping[str, str] | None,
        location: str | None,
    ) -> View:
        ident = _to_tuple(identifier)
        queries = [(dialect, sql)] if isinstance(sql, str) else list(sql.items())
        namespace = list(ident[:-1]) if default_namespace is None else list(_to_tuple(default_namespace))
        location_, md = self._native.build_view(
            _ident(ident),
            to_schema(schema),
            queries,
            mode=mode,
            default_namespace=namespace,
            default_catalog=default_catalog,
            summary=[(k, str(v)) for k, v in (summary or {}).items()],
            properties=[(k, str(v)) for k, v in (properties or {}).items()],
            location=location,
        )
        return View(md, location_, self, ident)

    def _commit_view(self, identifier: Identifier, base: View | None, metadata: _native.ViewMetadata) -> View:
        """As :meth:`_commit_table`, for views (create when ``base`` is ``None``, else replace)."""
        base_state = None
        if base is not None:
            if base.metadata_location is None:
                raise InvalidArgumentError("the base of a commit must be a table loaded from this catalog")
            base_state = (base.metadata_location, base.metadata)
        location, md = self._native.commit_view(_ident(identifier), base_state, metadata)
        return View(md, location, self, _to_tuple(identifier))


def load_catalog(name: str = "default", **properties: str) -> Catalog:
    """Opens the catalog ``name`` (see the module docs for the properties). With no
    properties: the embedded default SQLite catalog in ``$ICEFLOE_HOME`` or
    ``./icefloe-warehouse``."""
    props = {k: str(v) for k, v in properties.items() if v is not None}
    return Catalog(_native.Catalog.load(name, list(props.items())), props)
