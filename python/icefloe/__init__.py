"""icefloe: Apache Iceberg tables for Python and PySpark, with a Rust core.

The public API:

- :class:`TableMetadata` and :class:`ViewMetadata`: read, inspect and write metadata files.
- :class:`Schema`, :class:`NestedField`, :class:`PartitionSpec`, :class:`SortOrder`,
  :class:`Snapshot`, :class:`SnapshotRef`: read-only views of the metadata.
- :class:`DeletionVector` and :func:`write_deletion_vectors`: v3 deletion vectors in Puffin files.
- :mod:`icefloe.transforms`: partition transforms on pyarrow arrays and scalars.
- :mod:`icefloe.manifest`: manifests and manifest lists as pyarrow tables (read and write).
- :class:`DeletionVector`: v3 deletion vectors (Puffin ``deletion-vector-v1`` blobs).
- :mod:`icefloe.expressions`: row filters (:class:`Expression`), built with PyIceberg's names
  (``EqualTo``, ``And``, ...) or parsed from text (``parse("id > 5 and name like 'a%'")``).
- :class:`Table`: ``Table.from_metadata(path).scan(row_filter=..., selected_fields=...,
  snapshot_id=..., ref=..., as_of=...)`` plans scans in Rust; plans come back as pyarrow
  tables (``plan_arrow``), light task objects (``plan_files``) or packed task groups that
  serialize to bytes for executors (``plan_tasks``).
- :func:`load_catalog`: catalogs shaped like PyIceberg's (the embedded SQLite catalog, shared
  with Java's ``JdbcCatalog`` and PyIceberg's ``SqlCatalog``; file-system tables).
- :mod:`icefloe.writer`: ``write_data_files(table_metadata, pa_table)`` writes Parquet data
  files (partitioned, rolled, with column metrics) and returns their ``data_file`` rows for a
  commit; it needs no catalog, so Spark executors can call it.
- :mod:`icefloe.errors`: the exceptions.
"""

from . import errors, expressions, manifest, transforms, writer
from ._native import (
    BoundExpression,
    DeletionVector,
    Expression,
    NameMapping,
    NestedField,
    PartitionField,
    PartitionSpec,
    Schema,
    Snapshot,
    SnapshotRef,
    SortField,
    SortOrder,
    TableMetadata,
    ViewMetadata,
    ViewVersion,
    __version__,
    write_deletion_vectors,
)
from .catalog import Catalog, View, load_catalog
from .manifest import (
    manifest_metadata,
    read_manifest,
    read_manifest_list,
    write_manifest,
    write_manifest_list,
)
from .table import CombinedScanTask, FileScanTask, ScanPlan, Table, TableScan

__all__ = [
    "Catalog",
    "View",
    "load_catalog",
    "CombinedScanTask",
    "FileScanTask",
    "ScanPlan",
    "Table",
    "TableScan",
    "BoundExpression",
    "DeletionVector",
    "Expression",
    "NameMapping",
    "NestedField",
    "PartitionField",
    "PartitionSpec",
    "Schema",
    "Snapshot",
    "SnapshotRef",
    "SortField",
    "SortOrder",
    "TableMetadata",
    "ViewMetadata",
    "ViewVersion",
    "errors",
    "expressions",
    "manifest",
    "manifest_metadata",
    "read_manifest",
    "read_manifest_list",
    "write_manifest",
    "write_manifest_list",
    "transforms",
    "writer",
    "write_deletion_vectors",
    "__version__",
]
