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
- :mod:`icefloe.executor`: what runs on executors. ``executor.write.write_data_files(
  table_metadata, pa_table)`` writes Parquet data files (partitioned, rolled, with column
  metrics) and returns their ``data_file`` rows for a commit; ``executor.read.read_tasks``
  reads planned tasks. They need no catalog and load no driver code.
- :mod:`icefloe.errors`: the exceptions.

The package is layered by where code runs (``docs/architecture.md``): ``executor`` below
``scan`` below ``update`` below ``table`` below ``catalog`` below ``spark``. Importing
``icefloe`` loads only the metadata types, errors and expressions; ``Table``, ``Catalog`` and
the other driver names load on first use, so an executor importing ``icefloe.executor.read``
never loads the driver side.
"""

from __future__ import annotations

import importlib
import warnings
from typing import TYPE_CHECKING, Any

from . import errors, expressions
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

if TYPE_CHECKING:
    from . import manifest, transforms
    from .catalog import Catalog, View, load_catalog
    from .executor.tasks import CombinedScanTask, FileScanTask
    from .manifest import (
        manifest_metadata,
        read_manifest,
        read_manifest_list,
        write_manifest,
        write_manifest_list,
    )
    from .scan import ScanPlan, TableScan
    from .table import Table

# name -> the module that defines it, imported on first use (PEP 562)
_LAZY = {
    "Catalog": "catalog",
    "View": "catalog",
    "load_catalog": "catalog",
    "CombinedScanTask": "executor.tasks",
    "FileScanTask": "executor.tasks",
    "ScanPlan": "scan",
    "TableScan": "scan",
    "Table": "table",
    "manifest_metadata": "manifest",
    "read_manifest": "manifest",
    "read_manifest_list": "manifest",
    "write_manifest": "manifest",
    "write_manifest_list": "manifest",
}
_LAZY_MODULES = {"manifest", "transforms", "executor", "scan", "update"}
# modules that moved when the package was layered; the old names still import, with a warning
_MOVED = {
    "reader": "executor.read",
    "writer": "executor.write",
    "deletes": "executor.position_deletes",
    "commit": "update.transaction",
    "snapshots": "update.snapshots",
    "row_deletes": "update.row_deletes",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    if name in _LAZY_MODULES:
        return importlib.import_module(f".{name}", __name__)
    if name in _MOVED:
        warnings.warn(
            f"icefloe.{name} is deprecated: use icefloe.{_MOVED[name]}", DeprecationWarning, stacklevel=2
        )
        return importlib.import_module(f".{_MOVED[name]}", __name__)
    raise AttributeError(f"module 'icefloe' has no attribute {name!r}")


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
    "executor",
    "write_deletion_vectors",
    "__version__",
]
