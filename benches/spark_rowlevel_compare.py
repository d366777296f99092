"""A merge-on-read ``DELETE`` of one row on a v3 table of many manifests, through icefloe's
JVM connector and through Java Iceberg's Spark catalog, in one Spark session.

Usage: python benches/spark_rowlevel_compare.py [--manifests K] [--files N] [--repeats R]
                                                [--engines java,connector] [--data DIR]

Builds (once, cached in DIR/spark_rowlevel_<K>_<N>, default /work/bench-data or
$ICEFLOE_BENCH_DATA, outside git) twin tables ``db.t_java`` and ``db.t_ice`` in one SQLite
catalog: partitioned by ``p``, 1,000 real rows in partition 0, then K fast appends of N data
files each in partition 1 (metadata only: their files do not exist and are never planned).
Each run deletes one more row of partition 0 (``WHERE p = 0 AND id = k``): planning prunes the
K manifests by their partition summaries, so the statement's cost is the one data file, its DV
and the commit, unless a writer reads manifests its scan pruned. One warm-up per engine, then
each run timed; prints the median and the runs. Run it with the package whose connector jar is
to be measured on ``PYTHONPATH`` (e.g. a worktree's ``python`` against ``/work/main/python``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import oracle  # noqa: E402  (the Spark session with Java Iceberg)
from connector_env import configure_twin_catalogs  # noqa: E402

JAVA, ICE = "rl_java", "rl_ice"


def ensure_tables(root: Path, manifests: int, files: int) -> None:
    import pyarrow as pa

    import icefloe
    from icefloe import _native

    done = root / "done"
    if done.exists():
        return
    root.mkdir(parents=True, exist_ok=True)
    cat = icefloe.load_catalog(JAVA, uri=f"sqlite:///{root / 'catalog.db'}", warehouse=(root / "wh").as_uri())
    cat.create_namespace("db")
    rows = pa.table(
        {
            "id": pa.array(range(1000), pa.int64()),
            "v": pa.array([f"v{i}" for i in range(1000)]),
            "p": pa.array([0] * 1000, pa.int32()),
        }
    )
    props = {
        "format-version": "3",
        "write.delete.mode": "merge-on-read",
        "write.update.mode": "merge-on-read",
        "write.merge.mode": "merge-on-read",
    }
    for name in ("db.t_java", "db.t_ice"):
        t = cat.create_table(name, rows.schema, partition_spec=[("p", "identity")], properties=props)
        t.append(rows)
        t = cat.load_table(name)
        schema = _native.manifest_entries_schema(t.schema(), t.metadata.spec())
        for col in ("status", "snapshot_id", "sequence_number", "file_sequence_number"):
            schema = schema.remove(schema.get_field_index(col))
        for m in range(manifests):
            fake = pa.Table.from_pylist(
                [
                    {
                        "content": 0,
                        "file_path": f"file:///nonexistent/{name}/m{m}/f{i}.parquet",
                        "file_format": "PARQUET",
                        "partition": {"p": 1},
                        "record_count": 100,
                        "file_size_in_bytes": 4096,
                    }
                    for i in range(files)
                ],
                schema=schema,
            )
            t.append_files(fake)
            t = cat.load_table(name)
        print(f"[bench] {name}: 1 + {manifests} x {files} data files", flush=True)
    done.write_text("ok")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--manifests", type=int, default=100)
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--engines", default="java,connector")
    ap.add_argument("--data", default=os.environ.get("ICEFLOE_BENCH_DATA", "/work/bench-data"))
    args = ap.parse_args()
    root = Path(args.data) / f"spark_rowlevel_{args.manifests}_{args.files}"
    ensure_tables(root, args.manifests, args.files)
    tmp = Path(tempfile.mkdtemp())
    spark = oracle.start_spark(tmp / "wh", tmp / "vwh", driver_memory="2g")
    try:
        configure_twin_catalogs(spark, root, JAVA, ICE)
        tables = {"java": f"{JAVA}.db.t_java", "connector": f"{ICE}.db.t_ice"}
        for engine in args.engines.split(","):
            table = tables[engine]
            # the next row to delete: one past the largest deleted so far
            left = spark.sql(f"SELECT min(id) FROM {table} WHERE p = 0").collect()[0][0]
            times = []
            for k in range(args.repeats + 1):
                t0 = time.perf_counter()
                spark.sql(f"DELETE FROM {table} WHERE p = 0 AND id = {left + k}")
                times.append((time.perf_counter() - t0) * 1000)
            runs = times[1:]
            print(
                f"| {engine} | {statistics.median(runs):,.0f} ms | "
                + ", ".join(f"{x:,.0f}" for x in runs)
                + " |",
                flush=True,
            )
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
