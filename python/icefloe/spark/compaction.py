"""Compaction with Spark's executors: ``icefloe.spark.rewrite_data_files(spark, table, ...)``
and ``icefloe.spark.rewrite_position_delete_files(spark, table, ...)``.

The work of ``icefloe.update.compaction`` with Spark doing the reading and writing: the
driver plans the file groups (in Rust, Java's planner), one Spark task per read unit (one
per expected output file for bin-pack, one per group for sort) reads its files with the
deletes applied and writes the new data files, and the driver commits each group (or batch
of groups, with partial progress) as a validated ``replace`` snapshot, as Java's
``rewrite_data_files`` procedure does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..update.compaction import RewriteDataFilesResult
from ..update.compaction import rewrite_data_files as _rewrite_data_files
from ..update.delete_compaction import RewritePositionDeleteFilesResult
from ..update.delete_compaction import rewrite_position_delete_files as _rewrite_position_delete_files

__all__ = [
    "RewriteDataFilesResult",
    "rewrite_data_files",
    "RewritePositionDeleteFilesResult",
    "rewrite_position_delete_files",
]


def _on_executors(spark: Any):
    sc = spark.sparkContext

    def run(fn, units):
        units = list(units)
        if not units:
            return []
        # one Spark task per unit; collect keeps the units' order
        return sc.parallelize(units, len(units)).map(fn).collect()

    return run


def rewrite_data_files(
    spark: Any,
    table: Any,
    *,
    strategy: str = "binpack",
    sort_order: Any = None,
    where: Any = None,
    options: Mapping[str, Any] | None = None,
    branch: str | None = None,
    snapshot_properties: Mapping[str, str] | None = None,
) -> RewriteDataFilesResult:
    """Rewrites the data files of ``table`` (an :class:`icefloe.Table` loaded from a
    catalog) with Spark's executors; the arguments are those of
    :func:`icefloe.update.compaction.rewrite_data_files` (Java's procedure options). The
    table object is refreshed."""
    return _rewrite_data_files(
        table,
        strategy=strategy,
        sort_order=sort_order,
        where=where,
        options=options,
        branch=branch,
        snapshot_properties=snapshot_properties,
        map_units=_on_executors(spark),
    )


def rewrite_position_delete_files(
    spark: Any,
    table: Any,
    *,
    where: Any = None,
    options: Mapping[str, Any] | None = None,
    snapshot_properties: Mapping[str, str] | None = None,
) -> RewritePositionDeleteFilesResult:
    """Rewrites the position delete files of ``table`` with Spark's executors (one task per
    unit reads the group's delete files and writes the merged ones; the driver commits);
    the arguments are those of
    :func:`icefloe.update.delete_compaction.rewrite_position_delete_files`."""
    return _rewrite_position_delete_files(
        table,
        where=where,
        options=options,
        snapshot_properties=snapshot_properties,
        map_units=_on_executors(spark),
    )
