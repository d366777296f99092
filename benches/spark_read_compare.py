"""Spark queries through icefloe against the same queries through Java Iceberg's own Spark
catalog, in one Spark session (issue 22's table).

Usage: python benches/spark_read_compare.py [--rows N] [--wide-rows M] [--repeats R]
                                            [--engines java,connector,icefloe,icefloe-pushdown,connector-unadapted]
                                            [--data DIR] [--writers java,icefloe]

Builds (once, cached in DIR/spark_read_<N>_<M>, default /work/bench-data or
$ICEFLOE_BENCH_DATA, outside git) two v3 tables written by Java through Spark SQL into a
Hadoop-layout warehouse, which icefloe opens with its file-system catalog, and the same two
written by icefloe's Python API (``table.append``, one snapshot each) as ``events_ice`` and
``wide_ice``, which Java's Hadoop catalog opens:

- ``bench.events``: N rows (default 10,000,000), partitioned by ``days(ts)`` over 30 days, five
  columns (``id`` long, ``ts`` timestamp, ``cat`` string, ``amount`` double, ``note`` string);
- ``bench.wide``: M rows (default 2,000,000), 30 columns (``id``, ``k`` and 28 doubles), not
  partitioned, read one or two columns at a time.

Each query builds a new DataFrame per run. One warm-up per engine and query (JIT, Python
worker start), then the best of R. Engines:

- ``java``: ``spark.table("java.bench.events")`` (Iceberg's SparkCatalog, vectorised reader);
- ``connector``: ``spark.table("ice.bench.events")``, icefloe's JVM connector
  (``io.icefloe.spark.SparkCatalog``: planning and reading in Rust over JNI);
- ``icefloe``: ``spark.read.format("icefloe").load(...)``, the Python data source;
- ``icefloe-pushdown``: the same with ``pushdown=true``;
- ``connector-unadapted``: the connector with Java's adaptive split size turned off for its
  queries (``spark.sql.iceberg.read.adaptive-split-size.enabled=false``): one task group per
  128 MiB, as the connector planned before it adapted the split size to Spark's slots.

Every engine's answer is checked against Java's (the same query on the same table); a
different answer fails the run. Prints a Markdown table for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import oracle  # noqa: E402  (the Spark session with Java Iceberg)

DAYS = 30
WIDE_DOUBLES = 28


def _events_sql(rows: int) -> list[str]:
    step = DAYS * 86_400_000_000 // rows  # microseconds between rows: 30 days in all
    return [
        "CREATE TABLE java.bench.events (id BIGINT, ts TIMESTAMP, cat STRING, amount DOUBLE, note STRING) "
        "USING iceberg PARTITIONED BY (days(ts)) TBLPROPERTIES ('format-version'='3')",
        "INSERT INTO java.bench.events SELECT id, "
        f"timestamp_micros(1704067200000000 + id * {step}), "
        "chr(97 + CAST(id % 7 AS INT)), "
        "CAST(id % 1000 AS DOUBLE) / 10, "
        "concat('note-', CAST(id % 5000 AS STRING)) "
        f"FROM range({rows})",
    ]


def _wide_sql(rows: int) -> list[str]:
    doubles = ", ".join(f"d{i} DOUBLE" for i in range(WIDE_DOUBLES))
    values = ", ".join(f"CAST((id * {i + 3}) % 10007 AS DOUBLE)" for i in range(WIDE_DOUBLES))
    return [
        f"CREATE TABLE java.bench.wide (id BIGINT, k STRING, {doubles}) USING iceberg "
        "TBLPROPERTIES ('format-version'='3')",
        f"INSERT INTO java.bench.wide SELECT id, chr(97 + CAST(id % 7 AS INT)), {values} FROM range({rows})",
    ]


def _range(days: int) -> str:
    return f"ts >= TIMESTAMP '2024-01-10 00:00:00 UTC' AND ts < TIMESTAMP '2024-01-{10 + days} 00:00:00 UTC'"


# (table, query name, DataFrame -> answer); the answer is compared across engines
QUERIES: list[tuple[str, str, Callable[[Any], Any]]] = [
    ("events", "count()", lambda df: df.count()),
    (
        "events",
        "sum(amount) where cat = 'c'",
        lambda df: round(df.filter("cat = 'c'").agg({"amount": "sum"}).collect()[0][0], 3),
    ),
    ("events", "3-day range count()", lambda df: df.filter(_range(3)).count()),
    ("events", "all columns into noop", lambda df: df.write.format("noop").mode("overwrite").save()),
    ("events", "sum(id)", lambda df: df.agg({"id": "sum"}).collect()[0][0]),
    ("wide", "count()", lambda df: df.count()),
    ("wide", "sum(d7)", lambda df: df.agg({"d7": "sum"}).collect()[0][0]),
    (
        "wide",
        "sum(d3) where k = 'b'",
        lambda df: df.filter("k = 'b'").agg({"d3": "sum"}).collect()[0][0],
    ),
    (
        "wide",
        "d1, d2 into noop",
        lambda df: df.select("d1", "d2").write.format("noop").mode("overwrite").save(),
    ),
]


def ensure_tables(spark, wh: Path, rows: int, wide_rows: int) -> None:
    if (wh / "bench" / "wide" / "metadata").is_dir():
        return
    print(f"writing {rows:,} + {wide_rows:,} rows with Java (minutes) ...", file=sys.stderr, flush=True)
    for stmt in [*_events_sql(rows), *_wide_sql(wide_rows)]:
        spark.sql(stmt)


def _batches(rows: int, make, chunk: int = 1_000_000):
    for start in range(0, rows, chunk):
        yield make(start, min(rows, start + chunk))


def ensure_icefloe_tables(wh: Path, rows: int, wide_rows: int) -> None:
    """The same rows as Java's tables, written by icefloe's Python API (one append each)."""
    if (wh / "bench" / "wide_ice" / "metadata").is_dir():
        return
    import numpy as np
    import pyarrow as pa

    import icefloe

    print(f"writing {rows:,} + {wide_rows:,} rows with icefloe ...", file=sys.stderr, flush=True)
    catalog = icefloe.load_catalog("bench", type="filesystem", warehouse=str(wh))
    step = DAYS * 86_400_000_000 // rows
    events = pa.schema(
        [
            ("id", pa.int64()),
            ("ts", pa.timestamp("us", tz="UTC")),
            ("cat", pa.string()),
            ("amount", pa.float64()),
            ("note", pa.string()),
        ]
    )

    def events_batch(lo: int, hi: int) -> pa.RecordBatch:
        ids = np.arange(lo, hi, dtype=np.int64)
        cats = np.array([chr(97 + i) for i in range(7)], dtype=object)[ids % 7]
        notes = np.array([f"note-{i}" for i in range(5000)], dtype=object)[ids % 5000]
        return pa.record_batch(
            [
                pa.array(ids),
                pa.array(1704067200000000 + ids * step, pa.timestamp("us", tz="UTC")),
                pa.array(cats, pa.string()),
                pa.array((ids % 1000).astype(np.float64) / 10),
                pa.array(notes, pa.string()),
            ],
            schema=events,
        )

    table = catalog.create_table("bench.events_ice", events, partition_spec=[("ts", "day")], format_version=3)
    table.append(pa.RecordBatchReader.from_batches(events, _batches(rows, events_batch)))
    wide = pa.schema(
        [("id", pa.int64()), ("k", pa.string())] + [(f"d{i}", pa.float64()) for i in range(WIDE_DOUBLES)]
    )

    def wide_batch(lo: int, hi: int) -> pa.RecordBatch:
        ids = np.arange(lo, hi, dtype=np.int64)
        ks = np.array([chr(97 + i) for i in range(7)], dtype=object)[ids % 7]
        doubles = [pa.array(((ids * (i + 3)) % 10007).astype(np.float64)) for i in range(WIDE_DOUBLES)]
        return pa.record_batch([pa.array(ids), pa.array(ks, pa.string()), *doubles], schema=wide)

    table = catalog.create_table("bench.wide_ice", wide, format_version=3)
    table.append(pa.RecordBatchReader.from_batches(wide, _batches(wide_rows, wide_batch)))


def engines(spark, wh: Path) -> dict[str, Callable[[str], Any]]:
    def icefloe(table: str, pushdown: bool) -> Any:
        return (
            spark.read.format("icefloe")
            .option("type", "filesystem")
            .option("warehouse", str(wh))
            .option("pushdown", "true" if pushdown else "false")
            .load(f"bench.{table}")
        )

    for key, value in {
        "": "io.icefloe.spark.SparkCatalog",
        ".type": "filesystem",
        ".warehouse": str(wh),
    }.items():
        spark.conf.set(f"spark.sql.catalog.ice{key}", value)
    return {
        "java": lambda table: spark.table(f"java.bench.{table}"),
        "connector": lambda table: spark.table(f"ice.bench.{table}"),
        "icefloe": lambda table: icefloe(table, False),
        "icefloe-pushdown": lambda table: icefloe(table, True),
        "connector-unadapted": lambda table: spark.table(f"ice.bench.{table}"),
    }


# session settings an engine's queries run with (set around its runs, unset after)
ENGINE_CONF: dict[str, dict[str, str]] = {
    "connector-unadapted": {"spark.sql.iceberg.read.adaptive-split-size.enabled": "false"},
}


def time_query(
    make_df: Callable[[str], Any], table: str, run: Callable[[Any], Any], repeats: int
) -> tuple[list[float], Any]:
    times, answers = [], set()
    for _ in range(repeats + 1):  # the first is the warm-up
        t0 = time.perf_counter()
        answers.add(run(make_df(table)))
        times.append((time.perf_counter() - t0) * 1000)
    if len(answers) != 1:
        raise AssertionError(f"different answers across runs: {answers}")
    return times[1:], answers.pop()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--wide-rows", type=int, default=2_000_000)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--engines", default="java,connector")
    ap.add_argument("--writers", default="java,icefloe", help="whose tables to query")
    ap.add_argument("--data", default=os.environ.get("ICEFLOE_BENCH_DATA", "/work/bench-data"))
    ap.add_argument("--jfr", help="record the driver JVM with Java Flight Recorder into this file")
    ap.add_argument("--only", help="run only the queries whose name contains this")
    ap.add_argument("--driver-memory", default="6g")
    args = ap.parse_args()
    wanted = args.engines.split(",")
    if args.jfr:
        # the driver JVM (local mode: the executors too) profiled from its start
        os.environ["PYSPARK_SUBMIT_ARGS"] = (
            "--driver-java-options '-Dlog4j2.level=WARN -Duser.timezone=UTC "
            f"-XX:StartFlightRecording=filename={args.jfr},settings=profile' pyspark-shell"
        )

    import icefloe.spark

    wh = Path(args.data) / f"spark_read_{args.rows}_{args.wide_rows}"
    wh.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp())
    spark = oracle.start_spark(wh, tmp / "vwh", driver_memory=args.driver_memory)
    results: dict[tuple[str, str], dict[str, float]] = {}
    try:
        icefloe.spark.register(spark)
        ensure_tables(spark, wh, args.rows, args.wide_rows)
        writers = args.writers.split(",")
        if "icefloe" in writers:
            ensure_icefloe_tables(wh, args.rows, args.wide_rows)
        make = engines(spark, wh)
        unknown = [e for e in wanted if e not in make]
        if unknown:
            raise SystemExit(f"unknown engines {unknown}; known: {sorted(make)}")
        suffixes = [("java", ""), ("icefloe", "_ice")]
        for writer, suffix in suffixes:
            if writer not in writers:
                continue
            for base, name, run in QUERIES:
                if args.only and args.only not in name:
                    continue
                table = base + suffix
                expected = None
                row: dict[str, float] = {}
                for engine in ["java", *[e for e in wanted if e != "java"]]:
                    conf = ENGINE_CONF.get(engine, {})
                    for key, value in conf.items():
                        spark.conf.set(key, value)
                    try:
                        times, answer = time_query(make[engine], table, run, args.repeats)
                    finally:
                        for key in conf:
                            spark.conf.unset(key)
                    if expected is None:
                        expected = answer
                    elif answer != expected:
                        raise AssertionError(
                            f"{engine} answered {answer!r} to {table} {name}, Java {expected!r}"
                        )
                    if engine in wanted:
                        row[engine] = min(times)
                    print(table, name, engine, [round(t) for t in times], file=sys.stderr, flush=True)
                results[(f"{base} ({writer}-written)", name)] = row
    finally:
        spark.stop()

    print(
        f"\nSpark queries ({os.cpu_count()} cores, local[2]), {args.rows:,}-row `events` and "
        f"{args.wide_rows:,}-row 30-column `wide` written by Java, best of {args.repeats} after a warm-up:\n"
    )
    others = [e for e in wanted if e != "java"]
    print(
        "| table | query | " + " | ".join(wanted) + " | " + " | ".join(f"{e} vs Java" for e in others) + " |"
    )
    print("|---|---|" + "---|" * (len(wanted) + len(others)))
    for (table, name), row in results.items():
        cells = [f"{row[e]:,.0f} ms" for e in wanted]
        ratios = [f"{row[e] / row['java']:.2f}×" for e in others] if "java" in row else []
        print(f"| {table} | {name} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")


if __name__ == "__main__":
    main()
