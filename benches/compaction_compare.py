"""Compaction throughput: ``icefloe.spark.rewrite_data_files`` against Java Iceberg's
``rewrite_data_files`` procedure, in one Spark session, on twin tables.

Usage: python benches/compaction_compare.py [--files F] [--rows-per-file R] [--repeats N]
                                            [--strategy binpack|sort]

Writes (with icefloe) a v3 table of F small files (default 200) of R rows each (default
20,000; five columns: ``id`` long, ``ts`` timestamp, ``cat`` string, ``amount`` double,
``note`` string), partitioned by ``cat`` (4 values), with a DV on every tenth file, into a
SQLite catalog shared with Java's ``JdbcCatalog``. Each repeat registers two fresh twins
of that table's metadata (the same files) and compacts one with each engine
(``rewrite-all``, default target size): icefloe's driver plans in Rust, Spark's executors
read (Rust reader, deletes applied) and write; Java's procedure does its own. Both results
are checked (the same rows as the source, the same number of rewritten files, the new
files meet the target). Prints rows/s (live rows rewritten per second of wall time, best
of N) as a Markdown table for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import oracle  # noqa: E402  (the Spark session with Java Iceberg)


def _build(cat, files: int, rows: int):
    import pyarrow as pa

    from icefloe.executor.position_deletes import write_position_deletes

    schema = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field("ts", pa.timestamp("us")),
            pa.field("cat", pa.string()),
            pa.field("amount", pa.float64()),
            pa.field("note", pa.string()),
        ]
    )
    t = cat.create_table("bench.src", schema, partition_spec=[("cat", "identity")], format_version=3)
    cats = ["a", "b", "c", "d"]
    for i in range(files):
        ids = pa.array(range(i * rows, (i + 1) * rows), pa.int64())
        t.append(
            pa.table(
                {
                    "id": ids,
                    "ts": pa.array(
                        [1_704_067_200_000_000 + j * 1_000_000 for j in range(rows)], pa.timestamp("us")
                    ),
                    "cat": [cats[i % 4]] * rows,
                    "amount": pa.array([(j % 1000) / 10 for j in range(rows)], pa.float64()),
                    "note": [f"note-{j % 5000}" for j in range(rows)],
                },
                schema=schema,
            )
        )
    t = cat.load_table("bench.src")
    live = sorted(e["file_path"] for e in _data_files(t))
    added, _ = write_position_deletes(t.metadata, {p: list(range(0, rows, 97)) for p in live[::10]})
    t.row_delta(add_delete_files=added)
    return cat.load_table("bench.src")


def _data_files(t):
    import icefloe

    out = []
    for m in icefloe.read_manifest_list(t.current_snapshot().manifest_list).to_pylist():
        for e in icefloe.read_manifest(m["manifest_path"], m).to_pylist():
            if e["status"] != 2 and e["content"] == 0:
                out.append(e)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--rows-per-file", type=int, default=20_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--strategy", default="binpack", choices=["binpack", "sort"])
    args = ap.parse_args()

    import icefloe
    import icefloe.spark

    tmp = Path(tempfile.mkdtemp(prefix="compaction_bench_"))
    spark = oracle.start_spark(tmp / "java-wh", tmp / "views", driver_memory="2g")
    from test_catalog_oracle import java_catalog, spark_catalog

    db, wh = str(tmp / "c.db"), (tmp / "wh").as_uri()
    name = spark_catalog(spark, db, wh)
    cat = icefloe.load_catalog(name, uri=f"sqlite:///{db}", warehouse=wh)
    java_catalog(spark, name, db, wh)
    cat.create_namespace("bench")
    src = _build(cat, args.files, args.rows_per_file)
    live_rows = spark.sql(f"select count(*) from {name}.bench.src").collect()[0][0]
    checksum = spark.sql(f"select sum(id), count(distinct note) from {name}.bench.src").collect()[0]
    print(
        f"table: {args.files} files x {args.rows_per_file} rows, {live_rows} live rows, "
        f"{sum(e['file_size_in_bytes'] for e in _data_files(src)) / 1e6:.1f} MB",
        flush=True,
    )
    sort = ", strategy => 'sort', sort_order => 'id DESC'" if args.strategy == "sort" else ""
    best: dict[str, float] = {}
    for r in range(args.repeats):
        for engine in ("java", "icefloe"):
            ident = f"bench.{engine}{r}"
            t = cat.register_table(ident, src.metadata_location)
            start = time.perf_counter()
            if engine == "java":
                row = spark.sql(
                    f"CALL {name}.system.rewrite_data_files(table => '{ident}'{sort}, "
                    "options => map('rewrite-all', 'true'))"
                ).collect()[0]
                rewritten = row["rewritten_data_files_count"]
            else:
                result = icefloe.spark.rewrite_data_files(
                    spark,
                    t,
                    strategy=args.strategy,
                    sort_order="id DESC" if args.strategy == "sort" else None,
                    options={"rewrite-all": "true"},
                )
                rewritten = result.rewritten_data_files_count
            elapsed = time.perf_counter() - start
            spark.sql(f"REFRESH TABLE {name}.{ident}")
            got = spark.sql(f"select sum(id), count(distinct note) from {name}.{ident}").collect()[0]
            count = spark.sql(f"select count(*) from {name}.{ident}").collect()[0][0]
            if (count, tuple(got)) != (live_rows, tuple(checksum)) or rewritten != args.files:
                raise SystemExit(f"{engine}: wrong result {count} {tuple(got)} {rewritten}")
            files = len(_data_files(cat.load_table(ident)))
            print(
                f"{engine} repeat {r}: {elapsed:.2f} s, {live_rows / elapsed:,.0f} rows/s, {files} files",
                flush=True,
            )
            best[engine] = min(best.get(engine, float("inf")), elapsed)
    print()
    print(f"| engine ({args.strategy}) | best of {args.repeats} (s) | rows/s |")
    print("|---|---|---|")
    for engine in ("java", "icefloe"):
        print(f"| {engine} | {best[engine]:.2f} | {live_rows / best[engine]:,.0f} |")
    spark.stop()


if __name__ == "__main__":
    main()
