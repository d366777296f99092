"""Spark's planning step on the 1,000,000-file table: the icefloe data source against Spark
with Java Iceberg, in the same Spark session.

Usage: python benches/spark_plan_compare.py [--files N] [--per-commit K] [--repeats R]

Uses the table of benches/plan_compare.py (built once with PyIceberg into .cache/bench). Both
engines open it through the same SQLite catalog file: the icefloe data source
(``spark.read.format("icefloe")`` with filter pushdown) and Iceberg's ``SparkCatalog`` over
Java's ``JdbcCatalog``. Each measurement builds a new DataFrame and asks for its number of
partitions (``df.rdd.getNumPartitions()``): Spark analyses and optimises the query, the
source plans the scan on the driver and hands its partitions to Spark, and no job runs (the
table's data files are never read, and do not exist). One warm-up plan per engine and
filter first (the JVM's JIT, Spark's Python worker start), then the best of R.

Prints a Markdown table for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benches"))
sys.path.insert(0, str(ROOT / "tests"))

import plan_compare  # noqa: E402  (the table and its catalog)

CATALOG = "bench"  # the name the PyIceberg script gave its SQL catalog
FILTERS = {
    "none": None,
    "id": "id = 4000500",
    "day": "ts >= TIMESTAMP_NTZ '1970-01-05 00:00:00' AND ts < TIMESTAMP_NTZ '1970-01-10 00:00:00'",
}


def icefloe_df(spark, wh: Path, table: str):
    return (
        spark.read.format("icefloe")
        .option("catalog", CATALOG)
        .option("uri", f"sqlite:///{wh / 'catalog.db'}")
        .option("warehouse", wh.as_uri())
        .option("pushdown", "true")
        .load(table)
    )


def java_df(spark, wh: Path, table: str):
    return spark.table(f"{CATALOG}.{table}")


def time_plan(make_df, flt: str | None, repeats: int) -> dict:
    times, parts = [], set()
    for _ in range(repeats + 1):  # the first is the warm-up
        t0 = time.perf_counter()
        df = make_df()
        if flt is not None:
            df = df.filter(flt)
        parts.add(df.rdd.getNumPartitions())
        times.append((time.perf_counter() - t0) * 1000)
    assert len(parts) == 1, parts
    return {"ms": times[1:], "first_ms": times[0], "partitions": parts.pop()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=1_000_000)
    ap.add_argument("--per-commit", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    wh = plan_compare.ensure_table(args.files, args.per_commit)
    table = f"db.t{args.files}"

    import icefloe
    import icefloe.spark
    import oracle

    # icefloe opens the PyIceberg catalog first: it adds the iceberg_type column that
    # Java's JdbcCatalog (schema V1) expects
    icefloe.load_catalog(CATALOG, uri=f"sqlite:///{wh / 'catalog.db'}", warehouse=wh.as_uri()).load_table(
        table
    )
    tmp = Path(tempfile.mkdtemp())
    spark = oracle.start_spark(tmp / "wh", tmp / "vwh", driver_memory="6g")
    try:
        icefloe.spark.register(spark)
        for k, v in {
            "": "org.apache.iceberg.spark.SparkCatalog",
            ".type": "jdbc",
            ".uri": f"jdbc:sqlite:{wh / 'catalog.db'}",
            ".warehouse": wh.as_uri(),
            ".jdbc.schema-version": "V1",
            ".cache-enabled": "false",
        }.items():
            spark.conf.set(f"spark.sql.catalog.{CATALOG}{k}", v)
        results = {}
        for which, flt in FILTERS.items():
            ice = time_plan(lambda: icefloe_df(spark, wh, table), flt, args.repeats)
            java = time_plan(lambda: java_df(spark, wh, table), flt, args.repeats)
            results[which] = (ice, java)
            print(which, ice, java, file=sys.stderr, flush=True)
    finally:
        spark.stop()

    print(
        f"\nSpark's planning step on the {args.files:,}-file table ({os.cpu_count()} cores, local[2]), "
        f"best of {args.repeats} after a warm-up:\n"
    )
    print(
        "| filter | icefloe partitions | icefloe | icefloe first | Java partitions | Java Iceberg | Java first | vs Java |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for which, (ice, java) in results.items():
        i, j = min(ice["ms"]), min(java["ms"])
        print(
            f"| {which} | {ice['partitions']:,} | {i:,.0f} ms | {ice['first_ms']:,.0f} ms | {java['partitions']:,} | "
            f"{j:,.0f} ms | {java['first_ms']:,.0f} ms | {j / i:.1f}× |"
        )


if __name__ == "__main__":
    main()
