"""icefloe tables in PySpark: a Spark 4.1 Python data source named ``icefloe``.

::

    import icefloe.spark
    icefloe.spark.register(spark)

    df = (spark.read.format("icefloe")
          .option("catalog", "prod").option("uri", "sqlite:////data/catalog.db")
          .option("warehouse", "file:///data/warehouse")
          .load("db.events"))                      # options: snapshot-id, as-of-timestamp,
                                                   # branch, tag, columns, metadata-columns
    df.where("id > 5").count()                     # .option("pushdown", "true"): into planning
    df.write.format("icefloe").mode("append").save("db.events")    # or mode("overwrite")
    icefloe.spark.delete(spark, catalog.load_table("db.events"), "id < 100")   # DVs, on executors
    icefloe.spark.update(spark, table, "id < 100", {"amount": "amount * 2"})   # merge-on-read
    icefloe.spark.merge(spark, table, source_df, on=["id"], when_matched_update="*",
                        when_not_matched_insert="*")                          # MERGE INTO

Without catalog options the embedded default catalog is used (``$ICEFLOE_HOME``, see
:func:`icefloe.load_catalog`), resolved in Spark's Python workers: set ``ICEFLOE_HOME``
before the Spark session starts. The Python workers must run an interpreter that has
icefloe installed (``PYSPARK_PYTHON``).

The Spark catalog of the JVM connector (``io.icefloe.spark.SparkCatalog``: SQL over icefloe's
catalogs, planning and reading in Rust) is turned on with :func:`configure`, see
:mod:`icefloe.spark.connector`.
"""

from __future__ import annotations

from .compaction import (
    RewriteDataFilesResult,
    RewritePositionDeleteFilesResult,
    rewrite_data_files,
    rewrite_position_delete_files,
)
from .connector import configure, connector_jars
from .merge import MergeResult, merge
from .row_delete import DeleteResult, delete
from .row_update import UpdateResult, update
from .source import FILTER_PUSHDOWN_CONF, WRITE_ID_KEY, IcefloeDataSource, register

__all__ = [
    "configure",
    "connector_jars",
    "register",
    "delete",
    "DeleteResult",
    "update",
    "UpdateResult",
    "rewrite_data_files",
    "RewriteDataFilesResult",
    "rewrite_position_delete_files",
    "RewritePositionDeleteFilesResult",
    "merge",
    "MergeResult",
    "IcefloeDataSource",
    "WRITE_ID_KEY",
    "FILTER_PUSHDOWN_CONF",
]
