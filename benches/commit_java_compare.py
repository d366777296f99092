"""One-file fast appends on the 1,000,000-file table: Java Iceberg (v3) against icefloe (v3
and v4), in one run, commits alternating.

Usage: python benches/commit_java_compare.py [--commits N] [--warmup W]

The table is the one of ``benches/plan_compare.py`` (``.cache/bench/pyi1m``: PyIceberg's
format-v2 table in a SQLite catalog, 100 manifests of 10,000 files, 100 snapshots). Three
copies of its catalog file are made in a scratch directory; on each, icefloe sets
``write.metadata.path`` to the scratch directory (so that no commit writes into the cached
table) and upgrades the table: to v3 for Java and for icefloe's v3, to v4 for icefloe's v4.
Then each commit appends one data file (metadata only: the file is not written):

- Java Iceberg 1.11: ``table.newFastAppend().appendFile(f).commit()`` on ``JdbcCatalog``
  (the SQLite file), in the JVM of a local Spark session; the ``commit()`` call is timed
  from Python, so one py4j round trip is included (the data file is built before);
- icefloe: ``table.append_files(rows)`` through its SQLite catalog, timed from Python (its
  Python layer included).

``--warmup`` commits of each are made first and not counted (the JVM's class loading and
JIT, icefloe's first catalog connection). Prints the median, min and max of each.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa

import icefloe
from icefloe import _native

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benches"))
sys.path.insert(0, str(ROOT / "tests"))

from plan_compare import ensure_table  # noqa: E402

IDENT = "db.t1000000"
DAY = 5  # the partition (days from the epoch) every new file goes to


def icefloe_table(db: Path, scratch: Path, version: int):
    """The table in the catalog file ``db``, writing its metadata under ``scratch`` and
    upgraded to ``version``."""
    cat = icefloe.load_catalog("bench", uri=f"sqlite:///{db}", warehouse=f"file://{scratch}")
    t = cat.load_table(IDENT)
    t.transaction().set_properties({"write.metadata.path": f"file://{scratch}"}).commit_transaction()
    for v in range(t.metadata.format_version + 1, version + 1):
        t = cat.load_table(IDENT)
        t.transaction().upgrade_table_version(v).commit_transaction()
    return cat.load_table(IDENT)


def file_rows(table, i: int) -> pa.Table:
    """One data file's row for ``append_files``: a file of the day partition ``DAY``."""
    spec = table.metadata.spec()
    schema = _native.manifest_entries_schema(table.schema(), spec)
    for name in ("status", "snapshot_id", "sequence_number", "file_sequence_number"):
        schema = schema.remove(schema.get_field_index(name))
    row = {
        "content": 0,
        "file_path": f"file:///bench/data/new-{i}.parquet",
        "file_format": "PARQUET",
        "partition": {"ts_day": DAY},
        "record_count": 100,
        "file_size_in_bytes": 4096,
    }
    return pa.Table.from_pylist([row], schema=schema)


def java_table(spark, db: Path):
    jvm = spark._jvm
    cat = jvm.org.apache.iceberg.jdbc.JdbcCatalog()
    cat.setConf(spark._jsc.hadoopConfiguration())
    props = jvm.java.util.HashMap()
    for k, v in {"uri": f"jdbc:sqlite:{db}", "warehouse": str(db.parent)}.items():
        props.put(k, v)
    cat.initialize("bench", props)
    return cat.loadTable(jvm.org.apache.iceberg.catalog.TableIdentifier.parse(IDENT))


def java_file(spark, jtable, i: int):
    return (
        spark._jvm.org.apache.iceberg.DataFiles.builder(jtable.spec())
        .withPath(f"file:///bench/data/java-{i}.parquet")
        .withFormat("PARQUET")
        .withFileSizeInBytes(4096)
        .withRecordCount(100)
        .withPartitionPath("ts_day=1970-01-06")
        .build()
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--commits", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    args = ap.parse_args()
    wh = ensure_table(1_000_000, 10_000)
    tmp = Path(tempfile.mkdtemp(prefix="commit-compare-"))
    try:
        dbs = {}
        for name in ("java", "v3", "v4"):
            (tmp / name).mkdir()
            dbs[name] = tmp / name / "catalog.db"
            shutil.copy(wh / "catalog.db", dbs[name])
        tables = {
            name: icefloe_table(dbs[name], tmp / name, 4 if name == "v4" else 3)
            for name in ("java", "v3", "v4")
        }
        import oracle

        spark = oracle.start_spark(tmp / "swh", tmp / "svwh")
        try:
            jtable = java_table(spark, dbs["java"])
            assert jtable.operations().current().formatVersion() == 3
            times: dict[str, list[float]] = {"java": [], "v3": [], "v4": []}
            for i in range(args.warmup + args.commits):
                jfile = java_file(spark, jtable, i)
                t0 = time.perf_counter()
                jtable.newFastAppend().appendFile(jfile).commit()
                times["java"].append(time.perf_counter() - t0)
                for name in ("v3", "v4"):
                    rows = file_rows(tables[name], i)
                    t0 = time.perf_counter()
                    tables[name].append_files(rows)
                    times[name].append(time.perf_counter() - t0)
            # every commit landed: the snapshots counted in each catalog's table
            n = args.warmup + args.commits
            jtable.refresh()
            java_snaps = len(list(jtable.snapshots()))
            for name in ("v3", "v4"):
                cat = icefloe.load_catalog("bench", uri=f"sqlite:///{dbs[name]}", warehouse=f"file://{tmp}")
                t = cat.load_table(IDENT)
                assert len(t.snapshots()) == java_snaps, (name, len(t.snapshots()), java_snaps)
            assert java_snaps >= n + 100, java_snaps
        finally:
            spark.stop()
        print(f"\n{args.commits} one-file fast appends each (after {args.warmup} not counted):\n")
        print("| engine | format | median | min | max |")
        print("|---|---|---|---|---|")
        for name, label in (("java", "Java 1.11, v3"), ("v3", "icefloe, v3"), ("v4", "icefloe, v4")):
            ts = [t * 1000 for t in times[name][args.warmup :]]
            engine, fmt = label.split(", ")
            print(
                f"| {engine} | {fmt} | {statistics.median(ts):.1f} ms | {min(ts):.1f} ms | {max(ts):.1f} ms |"
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
