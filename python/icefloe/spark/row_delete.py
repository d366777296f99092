"""A distributed row-level DELETE for PySpark users: ``icefloe.spark.delete(spark, table,
where)``.

The work of ``icefloe.update.row_deletes`` with Spark's executors doing it: the driver plans the
rows matching ``where``, one Spark task per group of data files reads them (with the
table's existing deletes and the filter applied) and writes deletion vectors (v3, merged
with the live ones) or position delete files (v2); data files whose rows all match are
removed whole; the driver commits one validated row delta and removes the files it wrote
if the commit fails.
"""

from __future__ import annotations

from typing import Any

from ..update.row_deletes import DeleteResult, delete_rows

__all__ = ["DeleteResult", "delete"]


def delete(
    spark: Any,
    table: Any,
    where: Any,
    *,
    branch: str | None = None,
    isolation_level: str = "serializable",
    parallelism: int | None = None,
) -> DeleteResult:
    """Deletes the rows of ``table`` (an :class:`icefloe.Table` loaded from a catalog) that
    match ``where`` (filter text or an icefloe expression) with Spark's executors, in one
    commit. ``isolation_level``: ``"serializable"`` (default, as Java's Spark DELETE) also
    fails when data matching ``where`` was added concurrently; ``"snapshot"`` only when
    conflicting deletes were. ``parallelism``: the number of Spark tasks (default: Spark's
    default parallelism). The table object is refreshed."""
    sc = spark.sparkContext

    def on_executors(fn, groups):
        return sc.parallelize(list(groups), max(1, len(groups))).map(fn).collect()

    return delete_rows(
        table,
        where,
        branch=branch,
        isolation_level=isolation_level,
        groups=parallelism or sc.defaultParallelism,
        map_groups=on_executors,
    )
