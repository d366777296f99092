"""The main job: a real PySpark pipeline on icefloe's embedded default catalog.

Creates a v3 table in the embedded SQLite catalog (``$ICEFLOE_HOME``, here
``.cache/pipeline``), writes a few million generated rows through Spark with the ``icefloe``
data source, deletes a slice with deletion vectors (``icefloe.spark.delete``), evolves the
schema, appends rows with the new column, reads back with a filter Spark pushes down to
icefloe's planner, travels back to the first snapshot, and prints what happened. At the end
Java Iceberg (Spark's own Iceberg catalog over the same SQLite file) reads the table and
must see the same rows. Every step checks its result and the job exits non-zero on any
difference.

    bash scripts/demo.sh [--rows 3000000]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

T0 = time.monotonic()


def log(message: str) -> None:
    print(f"[{time.monotonic() - T0:6.1f}s] {message}", flush=True)


def check(ok: bool, what: str) -> None:
    if not ok:
        log(f"FAILED: {what}")
        raise SystemExit(1)
    log(f"  ok: {what}")


def start_spark(home: Path):
    from pyspark.sql import SparkSession

    import oracle  # the Java Iceberg jars that scripts/setup.sh fetched

    jars = [str(oracle.RUNTIME_JAR), str(oracle.SQLITE_JDBC_JAR)]
    os.environ.setdefault("PYSPARK_SUBMIT_ARGS", "--driver-java-options -Dlog4j2.level=WARN pyspark-shell")
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("icefloe-pipeline")
        .config("spark.driver.memory", "2g")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.jars", ",".join(jars))
        .config("spark.driver.extraClassPath", os.pathsep.join(jars))
        # Java Iceberg on the same SQLite catalog file, to cross-check at the end; a SQL
        # catalog's rows carry the catalog's name, and the embedded default is "default"
        .config("spark.sql.catalog.default", "org.apache.iceberg.spark.SparkCatalog")
        .config("spark.sql.catalog.default.type", "jdbc")
        .config("spark.sql.catalog.default.uri", f"jdbc:sqlite:{home / 'catalog.db'}")
        .config("spark.sql.catalog.default.jdbc.schema-version", "V1")
        .config("spark.sql.catalog.default.warehouse", (home / "warehouse").as_uri())
        .config("spark.sql.catalog.default.cache-enabled", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=3_000_000, help="rows of the first write (default 3,000,000)")
    ap.add_argument("--home", default=str(ROOT / ".cache" / "pipeline"), help="ICEFLOE_HOME for this run")
    args = ap.parse_args()
    n = args.rows

    home = Path(args.home).resolve()
    if home.exists():
        shutil.rmtree(home)
    home.mkdir(parents=True)
    # the embedded default catalog lives in $ICEFLOE_HOME; Spark's Python workers inherit it
    os.environ["ICEFLOE_HOME"] = str(home)
    os.environ["PYSPARK_PYTHON"] = sys.executable

    import pyarrow as pa

    import icefloe
    import icefloe.spark

    log(f"starting Spark (local[2]); ICEFLOE_HOME={home}")
    spark = start_spark(home)
    icefloe.spark.register(spark)
    catalog = icefloe.load_catalog()

    log("1. create a v3 table demo.events, partitioned by day(ts)")
    catalog.create_namespace("demo")
    schema = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field("ts", pa.timestamp("us", tz="UTC")),
            pa.field("category", pa.string()),
            pa.field("amount", pa.float64()),
        ]
    )
    table = catalog.create_table("demo.events", schema, partition_spec=[("ts", "day")])
    check(table.metadata.format_version == 3, "format version 3")

    log(f"2. write {n:,} generated rows through Spark (df.write.format('icefloe'))")
    events = spark.range(n).selectExpr(
        "id",
        # 30 days of January 2025, one event every ~1.3 s
        f"timestamp_seconds(1735689600 + (id * 2592000) div {n}) AS ts",
        "element_at(array('sale', 'refund', 'view', 'cart'), cast(id % 4 + 1 AS int)) AS category",
        "CAST((id * 7919) % 10000 / 100.0 AS double) AS amount",
    )
    events.write.format("icefloe").mode("append").save("demo.events")
    table.refresh()
    first = table.current_snapshot()
    files = table.scan().plan_arrow()
    log(
        f"   snapshot {first.snapshot_id}: {files.num_rows} data files, "
        f"{sum(files.column('record_count').to_pylist()):,} rows"
    )
    check(table.scan().count() == n, f"the table has {n:,} rows")

    log("3. delete the small refunds (category = 'refund' and amount < 10) with deletion vectors")
    result = icefloe.spark.delete(spark, table, "category = 'refund' and amount < 10.0")
    expected_deleted = events.where("category = 'refund' and amount < 10.0").count()
    log(
        f"   {result.deleted_rows:,} rows in {result.data_files} data files; "
        f"{result.delete_files_added} DVs added, snapshot {result.snapshot_id}"
    )
    check(result.deleted_rows == expected_deleted, f"{expected_deleted:,} rows deleted")
    remaining = n - expected_deleted

    log("4. evolve the schema: rename amount -> amount_eur, add channel (string)")
    with table.update_schema() as update:
        update.rename_column("amount", "amount_eur")
        update.add_column("channel", "string")
    log(f"   schema {table.metadata.current_schema_id}: {[f.name for f in table.schema().fields]}")

    extra = 100_000
    log(f"5. append {extra:,} rows that have a channel")
    spark.range(n, n + extra).selectExpr(
        "id",
        "timestamp_seconds(1738368000 + id % 86400) AS ts",
        "'sale' AS category",
        "CAST(id % 5000 / 100.0 AS double) AS amount_eur",
        "element_at(array('web', 'app'), cast(id % 2 + 1 AS int)) AS channel",
    ).write.format("icefloe").mode("append").save("demo.events")
    remaining += extra

    log("6. read back with a filter Spark pushes down to icefloe")

    def events_df(pushdown: bool = False):
        # a new DataFrame per query: with pushdown on, Spark 4.1 would reuse a DataFrame's
        # last pushed-down plan for a later query on it (see the README)
        reader = spark.read.format("icefloe")
        if pushdown:
            reader = reader.option("pushdown", "true")
        return reader.load("demo.events")

    where = "ts >= timestamp'2025-01-29 00:00:00' AND category = 'sale'"
    got = events_df(pushdown=True).where(where).count()
    expected = events.where(where).count() + extra
    all_files = table.scan().plan_arrow().num_rows
    pruned = table.scan(row_filter="ts >= '2025-01-29T00:00:00+00:00' and category = 'sale'").plan_arrow()
    log(f"   {got:,} rows; icefloe planned {pruned.num_rows} of {all_files} data files")
    check(got == expected, f"{expected:,} rows match the filter")
    check(pruned.num_rows < all_files, "partition pruning skipped files")
    check(
        events_df().where("channel IS NOT NULL").count() == extra,
        "only the new rows have a channel; older files read it as null",
    )
    check(events_df().count() == remaining, f"{remaining:,} rows in the table")

    log(f"7. time travel to the first snapshot ({first.snapshot_id})")
    old = spark.read.format("icefloe").option("snapshot-id", str(first.snapshot_id)).load("demo.events")
    check(old.count() == n, f"{n:,} rows at the first snapshot")
    check("amount" in old.columns and "channel" not in old.columns, "with the schema of that snapshot")

    log("8. Java Iceberg reads the same table from the same catalog")
    java_count = spark.table("`default`.demo.events").count()
    check(java_count == remaining, f"Java sees {java_count:,} rows")
    java_sum = spark.table("`default`.demo.events").agg({"amount_eur": "sum"}).collect()[0][0]
    ours = events_df().agg({"amount_eur": "sum"}).collect()[0][0]
    check(abs(java_sum - ours) < 1e-6 * max(1.0, abs(ours)), f"same sum(amount_eur) = {ours:,.2f}")

    table.refresh()
    log("what happened:")
    for s in table.snapshots():
        summary = dict(s.summary)
        log(
            f"   snapshot {s.snapshot_id} {summary.get('operation', ''):9} "
            f"+{int(summary.get('added-records', 0)):>9,} rows  "
            f"+{int(summary.get('added-data-files', 0)):>3} data files  "
            f"+{int(summary.get('added-delete-files', 0)):>3} delete files  "
            f"total {int(summary.get('total-records', 0)):>9,} rows, "
            f"{int(summary.get('total-position-deletes', 0)):,} deleted by position"
        )
    log(f"done: {remaining:,} live rows; the catalog is {home / 'catalog.db'}")
    spark.stop()


if __name__ == "__main__":
    main()
