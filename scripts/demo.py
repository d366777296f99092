"""The main job for now: a real table written by Java Iceberg, inspected by icefloe.

1. Spark with Java Iceberg creates a format-v3 table partitioned by day(ts) and
   bucket(16, id), writes rows in a few commits, evolves the schema and the partition
   spec, and tags and branches a snapshot.
2. The icefloe CLI prints the table's metadata (schema, specs, snapshots, refs).
3. icefloe computes the partition transforms of every row in Rust and checks them against
   the partition values Java stored for the row (Spark's ``_partition`` column).

Run it with ``bash scripts/demo.sh`` (which does the set-up first).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import pyarrow as pa  # noqa: E402

import icefloe  # noqa: E402
from oracle import start_spark  # noqa: E402  (the same Spark set-up as the conformance tests)

T0 = time.monotonic()


def step(msg: str) -> None:
    print(f"\n[{time.monotonic() - T0:6.1f}s] {msg}", flush=True)


def cli(*args: str) -> None:
    print(f"$ icefloe {' '.join(args)}", flush=True)
    subprocess.run(["icefloe", *args], check=True)


def main() -> int:
    work = ROOT / ".cache" / "demo"
    shutil.rmtree(work, ignore_errors=True)
    warehouse = work / "warehouse"
    warehouse.mkdir(parents=True)

    step("starting Spark with Java Iceberg 1.11")
    spark = start_spark(warehouse, work / "views")
    table = "java.db.events"
    table_dir = warehouse / "db" / "events"

    step("Java Iceberg creates a v3 table partitioned by days(ts), bucket(16, id)")
    spark.sql("CREATE NAMESPACE IF NOT EXISTS java.db")
    spark.sql(
        f"""CREATE TABLE {table} (id BIGINT, ts TIMESTAMP, category STRING, amount DECIMAL(10, 2))
            USING iceberg PARTITIONED BY (days(ts), bucket(16, id))
            TBLPROPERTIES ('format-version' = '3')"""
    )
    rows = 10_000
    for batch in range(3):
        step(f"commit {batch + 1}: Spark writes {rows} rows")
        spark.sql(
            f"""INSERT INTO {table}
                SELECT id,
                       TIMESTAMP '2024-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, 0, (id * 7919) % 259200) AS ts,
                       element_at(array('books', 'games', 'music', 'garden'), CAST(id % 4 AS INT) + 1) AS category,
                       CAST((id % 10000) / 100.0 AS DECIMAL(10, 2)) AS amount
                FROM range({batch * rows}, {(batch + 1) * rows})"""
        )
    step("schema and partition evolution, a tag and a branch")
    spark.sql(f"ALTER TABLE {table} ADD COLUMN note STRING")
    spark.sql(f"ALTER TABLE {table} RENAME COLUMN amount TO price")
    spark.sql(f"ALTER TABLE {table} ADD PARTITION FIELD truncate(4, category)")
    spark.sql(
        f"INSERT INTO {table} VALUES (-1, TIMESTAMP '1969-12-31 23:59:59.999999', 'pre-epoch', 1.50, 'evolved')"
    )
    spark.sql(f"ALTER TABLE {table} CREATE TAG first_load AS OF VERSION {first_snapshot(spark, table)}")
    spark.sql(f"ALTER TABLE {table} CREATE BRANCH audit RETAIN 7 DAYS")

    step("icefloe reads the table Java wrote")
    cli("show", str(table_dir))
    cli("schema", str(table_dir), "--all")

    step("icefloe's transforms (Rust, vectorized) against the partitions Java stored")
    data = spark.sql(
        f"SELECT id, ts, category, _partition.ts_day AS day, _partition.id_bucket AS bucket, "
        f"_partition.category_trunc_4 AS trunc FROM {table}"
    ).toArrow()
    day = icefloe.transforms.apply("day", data["ts"].cast(pa.timestamp("us")))
    bucket = icefloe.transforms.apply("bucket[16]", data["id"])
    trunc = icefloe.transforms.apply("truncate[4]", data["category"])
    java_days = data["day"].cast(pa.int32())  # Spark shows day partitions as dates: days from 1970-01-01
    check("day(ts)", day, java_days)
    check("bucket[16](id)", bucket, data["bucket"])
    # rows written before the partition field was added have no truncate value
    written_after = data["trunc"].is_valid()
    check("truncate[4](category)", trunc.filter(written_after), data["trunc"].filter(written_after))
    print(f"{data.num_rows} rows checked", flush=True)

    step("the same transforms from the CLI")
    cli("transform", "bucket[16]", "long", "0", "1", "34", "-1")
    cli("transform", "day", "timestamp", "2024-01-01T00:00:00", "1969-12-31T23:59:59.999999")

    spark.stop()
    step("done")
    return 0


def first_snapshot(spark, table: str) -> int:
    return spark.sql(f"SELECT snapshot_id FROM {table}.snapshots ORDER BY committed_at LIMIT 1").first()[0]


def check(name: str, ours: pa.ChunkedArray, javas: pa.ChunkedArray) -> None:
    ours = pa.chunked_array(ours).combine_chunks() if isinstance(ours, pa.ChunkedArray) else ours
    javas = javas.combine_chunks() if isinstance(javas, pa.ChunkedArray) else javas
    if not ours.cast(pa.string()).equals(javas.cast(pa.string())):
        mismatches = sum(1 for a, b in zip(ours.to_pylist(), javas.to_pylist(), strict=True) if a != b)
        raise SystemExit(f"{name}: icefloe and Java disagree on {mismatches} of {len(ours)} rows")
    print(f"  {name}: icefloe == Java for all {len(ours)} rows", flush=True)


if __name__ == "__main__":
    sys.exit(main())
