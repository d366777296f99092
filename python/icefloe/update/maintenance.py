"""Table maintenance that commits nothing: ``table.maintenance.remove_orphan_files(...)``
(Java's ``DeleteOrphanFiles`` action and ``remove_orphan_files`` procedure; the rules are in
Rust, ``icefloe::maintenance::orphan_files``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import _native
from .._log import log, some_paths
from .._time import epoch_millis
from ..errors import InvalidArgumentError
from .compaction import RewriteDataFilesResult, remove_dangling_deletes, rewrite_data_files
from .delete_compaction import RewritePositionDeleteFilesResult, rewrite_position_delete_files
from .snapshots import ExpireSnapshots
from .target import CatalogTable

__all__ = ["MaintenanceTable", "remove_orphan_files"]


def remove_orphan_files(
    table: CatalogTable,
    older_than: Any = None,
    location: str | None = None,
    dry_run: bool = False,
    *,
    prefix_mismatch_mode: str = "error",
    equal_schemes: Mapping[str, str] | None = None,
    equal_authorities: Mapping[str, str] | None = None,
    max_concurrent_deletes: int | None = None,
) -> list[str]:
    """Deletes the files under the table's location (or ``location``, a folder inside it)
    that no metadata of the table reaches and that were last modified before ``older_than``
    (a timezone-aware datetime or milliseconds since the epoch; default three days ago, as
    Java), and returns their locations; ``dry_run=True`` only returns them.

    Valid files are those of every snapshot (manifest lists, manifests, live data and
    delete files), statistics files, the current metadata file and its metadata log, and the
    version hint. Hidden files (``_`` or ``.`` names) and every file of another table inside
    the location are never candidates. A listed file whose path a valid file has under
    another scheme or authority is a *prefix mismatch*: ``prefix_mismatch_mode`` ``error``
    (the default) raises ``ValidationError`` naming them, ``ignore`` keeps them,
    ``delete`` deletes them; ``equal_schemes`` / ``equal_authorities`` (``{"s3a,s3n":
    "s3"}``, the default for schemes) say which are the same. A table loaded from a catalog
    is refreshed first. Deletes run in parallel (``max_concurrent_deletes``); a delete that
    fails is logged as a warning on the ``icefloe`` logger, as Java does, and the file is
    still returned."""
    if max_concurrent_deletes is not None and max_concurrent_deletes < 1:
        raise InvalidArgumentError(
            f"max_concurrent_deletes should have value > 0, value: {max_concurrent_deletes}",
            field="max_concurrent_deletes",
        )
    if table.catalog is not None and table.identifier is not None:
        table.refresh()
    orphans, failed = _native.remove_orphan_files(
        table.io,
        table.metadata,
        table.metadata_location,
        older_than_ms=None if older_than is None else epoch_millis(older_than, "older_than"),
        location=location,
        dry_run=bool(dry_run),
        prefix_mismatch_mode=prefix_mismatch_mode,
        equal_schemes=None if equal_schemes is None else dict(equal_schemes),
        equal_authorities=None if equal_authorities is None else dict(equal_authorities),
        max_concurrent_deletes=max_concurrent_deletes,
    )
    if failed:
        log.warning(
            "could not delete %d orphan files: %s (first error: %s)",
            len(failed),
            some_paths([f for f, _ in failed]),
            failed[0][1],
        )
    return orphans


class MaintenanceTable:
    """``table.maintenance``: PyIceberg's namespace of maintenance operations."""

    def __init__(self, table: CatalogTable):
        self._table = table

    def remove_orphan_files(
        self, older_than: Any = None, location: str | None = None, dry_run: bool = False, **options: Any
    ) -> list[str]:
        """See :func:`remove_orphan_files`."""
        return remove_orphan_files(self._table, older_than, location, dry_run, **options)

    def rewrite_data_files(self, **options: Any) -> RewriteDataFilesResult:
        """Compaction in this process, as Java's ``rewrite_data_files`` procedure; see
        :func:`icefloe.update.compaction.rewrite_data_files`."""
        return rewrite_data_files(self._table, **options)

    def rewrite_position_delete_files(self, **options: Any) -> RewritePositionDeleteFilesResult:
        """Rewrites position delete files in this process, as Java's
        ``rewrite_position_delete_files`` procedure; see
        :func:`icefloe.update.delete_compaction.rewrite_position_delete_files`."""
        return rewrite_position_delete_files(self._table, **options)

    def remove_dangling_deletes(self, **options: Any) -> list[str]:
        """Removes delete files that apply to no live data file (Java's
        ``RemoveDanglingDeleteFiles``); see :func:`icefloe.update.compaction.remove_dangling_deletes`."""
        return remove_dangling_deletes(self._table, **options)

    def expire_snapshots(self) -> ExpireSnapshots:
        """An :class:`icefloe.update.snapshots.ExpireSnapshots` builder, as ``table.expire_snapshots()``."""
        return ExpireSnapshots(self._table)
