"""Tables written by PyIceberg (a third-party writer) for the scan tests.

``small_table``: real Parquet data in a partitioned v2 table with several appends, a
copy-on-write delete, a column added later, a tag and a branch. ``many_files_table``:
2,000 metadata-only data files (planning never opens them) partitioned by ``day(ts)``,
appended in 20 commits (so 20 manifests), as ``shared/bench/make_pyiceberg_table.py``
builds them, with bounds that differ per file so that metrics pruning has work to do (and
a few files whose category is the one value ``banana``).
"""

from __future__ import annotations

import datetime as dt
import random
import struct
import time
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa


@dataclass
class SmallTable:
    catalog: object
    table: object  # the PyIceberg table, current
    metadata_path: str  # the latest metadata file, as a local path
    snapshots: list  # snapshot ids, oldest first: append, append, append, delete, append
    before_evolution: int  # the last snapshot before column `extra` was added
    empty_metadata_path: str  # a table created with the same schema and no snapshot


def _local(location: str) -> str:
    return location[len("file://") :] if location.startswith("file://") else location


def _catalog(root: Path):
    from pyiceberg.catalog.sql import SqlCatalog

    root.mkdir(parents=True, exist_ok=True)
    catalog = SqlCatalog("scan", uri=f"sqlite:///{root}/catalog.db", warehouse=(root / "wh").as_uri())
    catalog.create_namespace("db")
    return catalog


def small_table(root: Path) -> SmallTable:
    """id long, cat string, ts timestamp, v double, info struct<a int, b string>,
    partitioned by identity(cat); then ``extra`` (int) added."""
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import (
        DoubleType,
        IntegerType,
        LongType,
        NestedField,
        StringType,
        StructType,
        TimestampType,
    )

    catalog = _catalog(root)
    schema = Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "cat", StringType(), required=False),
        NestedField(3, "ts", TimestampType(), required=False),
        NestedField(4, "v", DoubleType(), required=False),
        NestedField(
            5,
            "info",
            StructType(
                NestedField(6, "a", IntegerType(), required=False),
                NestedField(7, "b", StringType(), required=False),
            ),
            required=False,
        ),
    )
    spec = PartitionSpec(
        PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="cat")
    )
    empty = catalog.create_table(
        "db.empty", schema=schema, partition_spec=spec, properties={"format-version": "2"}
    )
    table = catalog.create_table(
        "db.small", schema=schema, partition_spec=spec, properties={"format-version": "2"}
    )

    def rows(lo: int, hi: int, cats: list[str], extra: bool = False) -> pa.Table:
        data = {
            "id": pa.array(range(lo, hi), pa.int64()),
            "cat": pa.array([cats[i % len(cats)] for i in range(hi - lo)], pa.string()),
            "ts": pa.array(
                [dt.datetime(2024, 1, 1) + dt.timedelta(hours=i) for i in range(lo, hi)], pa.timestamp("us")
            ),
            "v": pa.array([i / 2 for i in range(lo, hi)], pa.float64()),
            "info": pa.array(
                [{"a": i, "b": str(i)} for i in range(lo, hi)],
                pa.struct([("a", pa.int32()), ("b", pa.string())]),
            ),
        }
        if extra:
            data["extra"] = pa.array([i % 7 for i in range(lo, hi)], pa.int32())
        return pa.table(data, schema=table.schema().as_arrow())

    def commit(fn) -> None:
        fn()
        time.sleep(0.005)  # distinct snapshot times, for as_of

    commit(lambda: table.append(rows(0, 100, ["a", "b"])))
    commit(lambda: table.append(rows(100, 200, ["b", "c"])))
    commit(lambda: table.append(rows(200, 300, ["d"])))
    commit(lambda: table.delete("id < 10"))  # rewrites the files of 'a' and 'b' of the first append
    before_evolution = table.current_snapshot().snapshot_id
    with table.update_schema() as update:
        update.add_column("extra", IntegerType())
    commit(lambda: table.append(rows(300, 350, ["e", "a"], extra=True)))
    snapshots = [s.snapshot_id for s in table.metadata.snapshots]
    table.manage_snapshots().create_tag(snapshots[1], "t1").commit()
    table.manage_snapshots().create_branch(snapshots[2], "b2").commit()
    table = catalog.load_table("db.small")
    return SmallTable(
        catalog,
        table,
        _local(table.metadata_location),
        snapshots,
        before_evolution,
        _local(empty.metadata_location),
    )


DAY_US = 86_400_000_000


def many_files_table(root: Path, n_files: int = 2000, per_commit: int = 100):
    """A v2 table of ``n_files`` metadata-only Parquet files (id long required, ts timestamp
    required, category string, value double), partitioned by ``day(ts)`` over a year, one
    fast append per ``per_commit`` files. Returns (PyIceberg table, local metadata path)."""
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import DayTransform
    from pyiceberg.typedef import Record
    from pyiceberg.types import DoubleType, LongType, NestedField, StringType, TimestampType

    catalog = _catalog(root)
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "ts", TimestampType(), required=True),
        NestedField(3, "category", StringType(), required=False),
        NestedField(4, "value", DoubleType(), required=False),
    )
    spec = PartitionSpec(PartitionField(2, 1000, DayTransform(), "ts_day"))
    table = catalog.create_table(
        "db.many", schema=schema, partition_spec=spec, properties={"format-version": "2"}
    )
    rng = random.Random(7)
    cats = ["apple", "banana", "cherry", "date", "elder"]
    made = 0
    while made < n_files:
        with table.transaction() as tx:
            with tx.update_snapshot().fast_append() as app:
                for i in range(made, min(made + per_commit, n_files)):
                    day = i * 365 // n_files  # files spread over a year, in order
                    lo_id = i * 1000
                    cat_lo, cat_hi = sorted(rng.sample(cats, 2))
                    nulls = 0 if i % 3 else 10
                    if i % 50 == 7:  # one value and no null: Java prunes `!=` and `not in` by it
                        cat_lo = cat_hi = "banana"
                        nulls = 0
                    all_null = i % 97 == 0  # a few files where category is only nulls
                    lower = {
                        1: struct.pack("<q", lo_id),
                        2: struct.pack("<q", day * DAY_US),
                        4: struct.pack("<d", float(i % 50)),
                    }
                    upper = {
                        1: struct.pack("<q", lo_id + 999),
                        2: struct.pack("<q", day * DAY_US + DAY_US - 1),
                        4: struct.pack("<d", float(i % 50 + 10)),
                    }
                    if not all_null:
                        lower[3] = cat_lo.encode()
                        upper[3] = cat_hi.encode()
                    df = DataFile.from_args(
                        content=DataFileContent.DATA,
                        file_path=f"{root}/data/ts_day={day}/f{i:08d}.parquet",
                        file_format=FileFormat.PARQUET,
                        partition=Record(day),
                        record_count=1000,
                        file_size_in_bytes=100_000 + rng.randrange(1000),
                        column_sizes={1: 8000, 2: 8000, 3: 5000, 4: 8000},
                        value_counts={1: 1000, 2: 1000, 3: 1000, 4: 1000},
                        null_value_counts={1: 0, 2: 0, 3: 1000 if all_null else nulls, 4: 5},
                        nan_value_counts={4: 1 if i % 11 == 0 else 0},
                        lower_bounds=lower,
                        upper_bounds=upper,
                        split_offsets=[4],
                        sort_order_id=0,
                    )
                    df.spec_id = 0
                    app.append_data_file(df)
        made = min(made + per_commit, n_files)
    table = catalog.load_table("db.many")
    return table, _local(table.metadata_location)
