"""The main job: a real PySpark pipeline on icefloe's embedded default catalog, or on a
REST catalog with S3 storage (``--storage s3-rest``).

Creates a v3 table in the embedded SQLite catalog (``$ICEFLOE_HOME``, here
``.cache/pipeline``), writes a few million generated rows through Spark with the ``icefloe``
data source, deletes a slice with deletion vectors (``icefloe.spark.delete``), evolves the
schema, appends rows with the new column, reads back with a filter Spark pushes down to
icefloe's planner, travels back to the first snapshot, and prints what happened. At the end
Java Iceberg (Spark's own Iceberg catalog over the same SQLite file) reads the table and
must see the same rows. Every step checks its result and the job exits non-zero on any
difference.

With ``--storage s3-rest`` the table lives in Apache Iceberg's REST catalog server with its
warehouse on the local S3 server (moto), both started by ``scripts/servers.sh``
(``scripts/demo.sh --storage s3-rest`` starts and stops them): icefloe's catalog is set in
Spark conf (``spark.icefloe.catalog.lake.*``), the executors read and write S3 with the
credentials the REST server vends, and Java checks through its own REST catalog and S3FileIO.

    bash scripts/demo.sh [--rows 3000000] [--storage local|s3-rest]
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


class Storage:
    """Where the table lives: icefloe's catalog properties, and Spark's conf for the icefloe
    data source and for Java Iceberg's catalog over the same tables."""

    def __init__(self, kind: str, home: Path):
        self.kind = kind
        if kind == "local":
            self.name = "default"
            # the embedded default catalog lives in $ICEFLOE_HOME; Spark's Python workers inherit it
            os.environ["ICEFLOE_HOME"] = str(home)
            self.properties: dict[str, str] = {}
            # a SQL catalog's rows carry the catalog's name, and the embedded default is "default"
            self.java = {
                "type": "jdbc",
                "uri": f"jdbc:sqlite:{home / 'catalog.db'}",
                "jdbc.schema-version": "V1",
                "warehouse": (home / "warehouse").as_uri(),
            }
            self.where = str(home / "catalog.db")
            return
        env = {
            k: os.environ.get(k)
            for k in (
                "ICEFLOE_TEST_REST_S3_URI",
                "ICEFLOE_TEST_REST_S3_WAREHOUSE",
                "ICEFLOE_TEST_S3_ENDPOINT",
            )
        }
        missing = [k for k, v in env.items() if not v]
        if missing:
            raise SystemExit(f"--storage s3-rest needs {', '.join(missing)}: run it through scripts/demo.sh")
        self.name = "lake"
        self.properties = {
            "type": "rest",
            "uri": env["ICEFLOE_TEST_REST_S3_URI"],
            "warehouse": env["ICEFLOE_TEST_REST_S3_WAREHOUSE"],
            "s3.endpoint": env["ICEFLOE_TEST_S3_ENDPOINT"],
            "s3.path-style-access": "true",
            "client.region": "us-east-1",
        }
        # Java's REST catalog with S3FileIO; the credentials are the ones the server vends
        self.java = {
            "type": "rest",
            "uri": self.properties["uri"],
            "warehouse": self.properties["warehouse"],
            "io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
            "s3.endpoint": self.properties["s3.endpoint"],
            "s3.path-style-access": "true",
            "client.region": "us-east-1",
        }
        self.where = f"{self.properties['uri']} (warehouse {self.properties['warehouse']})"

    def jars(self) -> list[str]:
        import oracle  # the Java Iceberg jars that scripts/setup.sh fetched

        jars = [str(oracle.RUNTIME_JAR), str(oracle.SQLITE_JDBC_JAR)]
        if self.kind == "s3-rest":
            jars.append(str(oracle.AWS_BUNDLE_JAR))  # S3FileIO's AWS SDK
        return jars

    def conf(self) -> dict[str, str]:
        conf = {f"spark.sql.catalog.{self.name}": "org.apache.iceberg.spark.SparkCatalog"}
        conf.update({f"spark.sql.catalog.{self.name}.{k}": v for k, v in self.java.items()})
        conf[f"spark.sql.catalog.{self.name}.cache-enabled"] = "false"
        if self.properties:
            # icefloe's data source: its catalog from the conf (register() takes it)
            conf.update({f"spark.icefloe.catalog.{self.name}.{k}": v for k, v in self.properties.items()})
            conf["spark.icefloe.default-catalog"] = self.name
        return conf


def start_spark(storage: Storage):
    from pyspark.sql import SparkSession

    jars = storage.jars()
    os.environ.setdefault("PYSPARK_SUBMIT_ARGS", "--driver-java-options -Dlog4j2.level=WARN pyspark-shell")
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("icefloe-pipeline")
        .config("spark.driver.memory", "2g")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.jars", ",".join(jars))
        .config("spark.driver.extraClassPath", os.pathsep.join(jars))
    )
    # Java Iceberg on the same catalog, to cross-check at the end
    for k, v in storage.conf().items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=3_000_000, help="rows of the first write (default 3,000,000)")
    ap.add_argument("--home", default=str(ROOT / ".cache" / "pipeline"), help="ICEFLOE_HOME for this run")
    ap.add_argument(
        "--storage",
        choices=("local", "s3-rest"),
        default="local",
        help="local: the embedded catalog on local disk (default); s3-rest: a REST catalog on S3",
    )
    args = ap.parse_args()
    n = args.rows

    home = Path(args.home).resolve()
    if home.exists():
        shutil.rmtree(home)
    home.mkdir(parents=True)
    storage = Storage(args.storage, home)
    os.environ["PYSPARK_PYTHON"] = sys.executable

    import pyarrow as pa

    import icefloe
    import icefloe.spark

    log(f"starting Spark (local[2]); the catalog: {storage.where}")
    spark = start_spark(storage)
    icefloe.spark.register(spark)
    catalog = icefloe.load_catalog(storage.name, **storage.properties)

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
    java_table = f"`{storage.name}`.demo.events"
    java_count = spark.table(java_table).count()
    check(java_count == remaining, f"Java sees {java_count:,} rows")
    java_sum = spark.table(java_table).agg({"amount_eur": "sum"}).collect()[0][0]
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
    files = table.scan().plan_arrow().column("file_path").to_pylist()
    log(
        f"done: {remaining:,} live rows in {len(files)} data files, e.g. {files[0]}; the catalog: {storage.where}"
    )
    spark.stop()


if __name__ == "__main__":
    main()
