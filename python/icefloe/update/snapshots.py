"""Snapshot management and expiry (``table.manage_snapshots()``, ``table.expire_snapshots()``).

The work is done in Rust (``icefloe::commit::manage_snapshots`` and ``::expire``); these
builders only collect the operations.

``manage_snapshots()`` is shaped like PyIceberg's: operations are chained and committed
together by ``.commit()`` or at the end of a ``with`` block::

    with table.manage_snapshots() as ms:
        ms.create_tag(snapshot_id, "v1").create_branch(snapshot_id, "audit")

If another writer moved a branch or tag the operations touch before they commit, the
commit fails with ``ValidationFailed`` instead of overwriting that change.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .. import _native
from .._log import log, some_paths
from .._time import epoch_millis
from ..errors import InvalidArgumentError
from .target import CatalogTable, catalog_state

__all__ = ["ManageSnapshots", "ExpireSnapshots", "ExpireResult"]


def _catalog_table(table: CatalogTable) -> None:
    if table.catalog is None or table.identifier is None:
        raise InvalidArgumentError("this table was opened from a file, not loaded from a catalog")


class ManageSnapshots:
    """Branch, tag and current-snapshot changes, committed together by :meth:`commit`."""

    def __init__(self, table: CatalogTable):
        _catalog_table(table)
        self._table = table
        self._ops: list[dict[str, Any]] = []
        self._committed = False

    def _add(self, op: str, **args: Any) -> ManageSnapshots:
        self._ops.append({"op": op, **{k: v for k, v in args.items() if v is not None}})
        return self

    def _retention(
        self,
        name: str,
        max_ref_age_ms: int | None,
        max_snapshot_age_ms: int | None = None,
        min_snapshots_to_keep: int | None = None,
    ) -> None:
        if min_snapshots_to_keep is not None:
            self._add("set_min_snapshots_to_keep", name=name, value=min_snapshots_to_keep)
        if max_snapshot_age_ms is not None:
            self._add("set_max_snapshot_age_ms", name=name, value=max_snapshot_age_ms)
        if max_ref_age_ms is not None:
            self._add("set_max_ref_age_ms", name=name, value=max_ref_age_ms)

    def create_tag(
        self, snapshot_id: int, tag_name: str, max_ref_age_ms: int | None = None
    ) -> ManageSnapshots:
        self._add("create_tag", name=tag_name, snapshot_id=snapshot_id)
        self._retention(tag_name, max_ref_age_ms)
        return self

    def create_branch(
        self,
        snapshot_id: int | None,
        branch_name: str,
        max_ref_age_ms: int | None = None,
        max_snapshot_age_ms: int | None = None,
        min_snapshots_to_keep: int | None = None,
    ) -> ManageSnapshots:
        """A branch at ``snapshot_id`` (``None``: the current snapshot), with optional
        retention settings of its own."""
        self._add("create_branch", name=branch_name, snapshot_id=snapshot_id)
        self._retention(branch_name, max_ref_age_ms, max_snapshot_age_ms, min_snapshots_to_keep)
        return self

    def remove_tag(self, tag_name: str) -> ManageSnapshots:
        return self._add("remove_tag", name=tag_name)

    def remove_branch(self, branch_name: str) -> ManageSnapshots:
        return self._add("remove_branch", name=branch_name)

    def rename_branch(self, branch_name: str, new_name: str) -> ManageSnapshots:
        return self._add("rename_branch", name=branch_name, new_name=new_name)

    def replace_branch(self, branch_name: str, snapshot_id: int) -> ManageSnapshots:
        """Points an existing branch at ``snapshot_id``, keeping its retention settings."""
        return self._add("replace_branch", name=branch_name, snapshot_id=snapshot_id)

    def replace_tag(self, tag_name: str, snapshot_id: int) -> ManageSnapshots:
        return self._add("replace_tag", name=tag_name, snapshot_id=snapshot_id)

    def fast_forward(self, branch_name: str, to_ref: str) -> ManageSnapshots:
        """Moves ``branch_name`` to where ``to_ref`` points; the branch must be an ancestor."""
        return self._add("replace_branch_with_ref", name=branch_name, to=to_ref, fast_forward=True)

    def set_min_snapshots_to_keep(self, branch_name: str, value: int) -> ManageSnapshots:
        return self._add("set_min_snapshots_to_keep", name=branch_name, value=value)

    def set_max_snapshot_age_ms(self, branch_name: str, value: int) -> ManageSnapshots:
        return self._add("set_max_snapshot_age_ms", name=branch_name, value=value)

    def set_max_ref_age_ms(self, ref_name: str, value: int) -> ManageSnapshots:
        return self._add("set_max_ref_age_ms", name=ref_name, value=value)

    def set_current_snapshot(self, snapshot_id: int) -> ManageSnapshots:
        """Makes any snapshot of the table current."""
        return self._add("set_current_snapshot", snapshot_id=snapshot_id)

    def rollback_to(self, snapshot_id: int) -> ManageSnapshots:
        """Makes an ancestor of the current snapshot current."""
        return self._add("rollback_to", snapshot_id=snapshot_id)

    def rollback_to_timestamp(self, timestamp: Any) -> ManageSnapshots:
        """Makes current the newest ancestor of the current snapshot older than
        ``timestamp`` (a timezone-aware datetime or milliseconds since the epoch)."""
        return self._add("rollback_to_time", timestamp_ms=epoch_millis(timestamp, "timestamp"))

    def cherry_pick(self, snapshot_id: int) -> ManageSnapshots:
        """Applies a snapshot (e.g. one staged for write-audit-publish) to ``main``: a
        fast-forward when its parent is the current snapshot, else its appended files in a
        new snapshot (summary ``source-snapshot-id``, ``published-wap-id``)."""
        return self._add("cherry_pick", snapshot_id=snapshot_id)

    def commit(self) -> CatalogTable:
        """Commits the operations; updates the table object and returns it."""
        t = self._table
        location, metadata = _native.manage_snapshots(
            *catalog_state(t),
            json.dumps(self._ops),
        )
        self._committed = True
        t.metadata, t.metadata_location = metadata, location
        return t

    def __enter__(self) -> ManageSnapshots:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None and not self._committed:
            self.commit()


@dataclass
class ExpireResult:
    """What an expiry removed from the metadata and deleted from storage."""

    removed_snapshot_ids: list[int] = field(default_factory=list)
    removed_refs: list[str] = field(default_factory=list)
    data_files: list[str] = field(default_factory=list)
    delete_files: list[str] = field(default_factory=list)
    manifests: list[str] = field(default_factory=list)
    manifest_lists: list[str] = field(default_factory=list)
    statistics_files: list[str] = field(default_factory=list)
    #: files only expired snapshots reached that lie outside the table's location, left in
    #: place (see :meth:`ExpireSnapshots.delete_outside_location`)
    kept_outside_location: list[str] = field(default_factory=list)
    #: ``(location, error)`` of the files that could not be deleted: left behind as orphans
    #: (the expiry is committed by then) and logged as a warning, as Java does
    failed_deletes: list[tuple[str, str]] = field(default_factory=list)

    def deleted_files(self) -> list[str]:
        return sorted(
            self.data_files + self.delete_files + self.manifests + self.manifest_lists + self.statistics_files
        )


class ExpireSnapshots:
    """Snapshot expiry per the table's ``history.expire.*`` properties, overridden by
    :meth:`older_than` and :meth:`retain_last`; :meth:`by_id` expires given snapshots too.
    :meth:`commit` deletes the files only expired snapshots reached (unless
    ``clean_expired_files(False)``) and returns an :class:`ExpireResult`."""

    def __init__(self, table: CatalogTable):
        _catalog_table(table)
        self._table = table
        self._older_than: int | None = None
        self._retain_last: int | None = None
        self._ids: list[int] = []
        self._clean = True
        self._clean_metadata = False
        self._outside = False
        self._max_concurrent_deletes: int | None = None

    def older_than(self, timestamp: Any) -> ExpireSnapshots:
        self._older_than = epoch_millis(timestamp, "older_than")
        return self

    def retain_last(self, n: int) -> ExpireSnapshots:
        if n < 1:
            raise InvalidArgumentError(f"number of snapshots to retain must be at least 1, cannot be: {n}")
        self._retain_last = n
        return self

    def by_id(self, *snapshot_ids: int) -> ExpireSnapshots:
        self._ids.extend(snapshot_ids)
        return self

    def clean_expired_files(self, clean: bool) -> ExpireSnapshots:
        self._clean = bool(clean)
        return self

    def delete_outside_location(self, delete: bool) -> ExpireSnapshots:
        """Whether expired files outside the table's location are deleted too. Off by
        default: the metadata may name files of another table (a registered table, data
        files appended from elsewhere); they are kept, listed in
        ``ExpireResult.kept_outside_location`` and logged as a warning. Java deletes them."""
        self._outside = bool(delete)
        return self

    def max_concurrent_deletes(self, n: int) -> ExpireSnapshots:
        """How many delete requests run at once (Java's ``max_concurrent_deletes``). On S3 and
        Azure each request is a bulk delete of up to ``s3.delete.batch-size`` files (250);
        elsewhere one file. Default: the FileIO's ``io.fetch-concurrency`` (16) on object
        stores, 4 on local files."""
        if n < 1:
            raise InvalidArgumentError(
                f"max_concurrent_deletes should have value > 0, value: {n}", field="max_concurrent_deletes"
            )
        self._max_concurrent_deletes = n
        return self

    def clean_expired_metadata(self, clean: bool) -> ExpireSnapshots:
        """Also removes the partition specs and schemas that no retained snapshot uses (the
        default spec and the current schema always stay), as Java's
        ``cleanExpiredMetadata``. Off by default, as in Java."""
        self._clean_metadata = bool(clean)
        return self

    def commit(self) -> ExpireResult:
        t = self._table
        native_catalog, (namespace, name), _ = catalog_state(t)
        out = _native.expire_snapshots(
            native_catalog,
            (namespace, name),
            older_than_ms=self._older_than,
            retain_last=self._retain_last,
            snapshot_ids=list(self._ids),
            clean_expired_files=self._clean,
            clean_expired_metadata=self._clean_metadata,
            delete_outside_location=self._outside,
            max_concurrent_deletes=self._max_concurrent_deletes,
        )
        t.refresh()
        kept = list(out["kept_outside_location"])
        if kept:
            log.warning(
                "expiry of %s kept %d file(s) outside the table's location (use "
                "delete_outside_location(True) to delete them): %s",
                ".".join([*namespace, name]),
                len(kept),
                some_paths(kept),
            )
        failed = list(zip(out["failed_delete_files"], out["failed_delete_errors"], strict=True))
        if failed:
            log.warning(
                "expiry of %s could not delete %d file(s), left as orphans: %s (first error: %s)",
                ".".join([*namespace, name]),
                len(failed),
                some_paths([f for f, _ in failed]),
                failed[0][1],
            )
        return ExpireResult(
            removed_snapshot_ids=[int(i) for i in out["removed_snapshot_ids"]],
            removed_refs=list(out["removed_refs"]),
            data_files=list(out["data_files"]),
            delete_files=list(out["delete_files"]),
            manifests=list(out["manifests"]),
            manifest_lists=list(out["manifest_lists"]),
            statistics_files=list(out["statistics_files"]),
            kept_outside_location=kept,
            failed_deletes=failed,
        )
