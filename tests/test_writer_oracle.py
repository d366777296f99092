"""icefloe.executor.write against Java Iceberg 1.11 (PySpark + py4j).

For Java tables created by Spark with several metrics configurations:

- Java's ``ParquetUtil.fileMetrics`` on the files icefloe wrote gives the same value and
  null counts and the same bounds (float/double bounds and NaN counts aside: Java takes
  those from its own writer, not from the footer, see below);
- Spark reads the rows icefloe wrote, equal to the input;
- Java's own writer (Spark appending the same rows) records the same metrics, NaN counts
  and float/double bounds included;
- Java partitions the same rows into the same partition paths (``partitionToPath``) with the
  same record counts.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest

import icefloe
from icefloe.executor.write import write_data_files

pytestmark = pytest.mark.java

DDL = (
    "id bigint, i int, b boolean, f float, d double, dec decimal(9,2), day date, ts timestamp_ntz, "
    "tstz timestamp, s string, bin binary, p struct<x: double, tag: string>, tags array<string>, "
    "attrs map<string, bigint>"
)
FLOAT_IDS = {"f", "d", "p.x"}

CONFIGS = [
    {},
    {"write.metadata.metrics.default": "full"},
    {"write.metadata.metrics.default": "counts", "write.metadata.metrics.column.s": "truncate(4)"},
    {
        "write.metadata.metrics.default": "truncate(3)",
        "write.metadata.metrics.column.id": "none",
        "write.metadata.metrics.column.bin": "full",
        "write.metadata.metrics.column.p.tag": "truncate(1)",
    },
    {"write.metadata.metrics.default": "truncate(1)", "write.metadata.metrics.column.s": "bogus"},
]


def rows_table(n: int = 40) -> pa.Table:
    base = dt.datetime(1969, 12, 31, 22, 0)
    strings = [
        "iceberg",
        "冰山表格冰山表格",
        "😀😁😂🤣",
        "\U0010ffff" * 5,
        "a b/c=d%",
        "",
        "e\u0301xyz",
        "ab",
    ]
    blobs = [b"\xff" * 20, b"\x00\x01", b"", b"\xfe\xff\xff", b"iceberg-table-format"]
    floats = [float("nan"), -0.0, 0.0, 1.5, -2.25, float("inf"), None]
    return pa.table(
        {
            "id": pa.array([k if k % 7 else -(2**63) + k for k in range(n)], pa.int64()),
            "i": pa.array([None if k % 9 == 0 else k * 37 - 500 for k in range(n)], pa.int32()),
            "b": pa.array([None if k % 11 == 0 else k % 2 == 0 for k in range(n)]),
            "f": pa.array([floats[k % len(floats)] for k in range(n)], pa.float32()),
            "d": pa.array([floats[(k + 3) % len(floats)] for k in range(n)], pa.float64()),
            "dec": pa.array(
                [None if k % 8 == 0 else decimal.Decimal(k * 1013 - 20000) / 100 for k in range(n)],
                pa.decimal128(9, 2),
            ),
            "day": pa.array(
                [dt.date(1969, 11, 30) + dt.timedelta(days=9 * k) for k in range(n)], pa.date32()
            ),
            "ts": pa.array(
                [base + dt.timedelta(minutes=53 * k, microseconds=k) for k in range(n)], pa.timestamp("us")
            ),
            "tstz": pa.array(
                [None if k % 10 == 3 else base + dt.timedelta(hours=5 * k) for k in range(n)],
                pa.timestamp("us", tz="UTC"),
            ),
            "s": pa.array([None if k % 6 == 5 else strings[k % len(strings)] + str(k % 3) for k in range(n)]),
            "bin": pa.array([None if k % 13 == 4 else blobs[k % len(blobs)] for k in range(n)], pa.binary()),
            "p": pa.array(
                [
                    None
                    if k % 5 == 4
                    else {"x": floats[k % len(floats)] or 0.5, "tag": strings[k % 3] if k % 2 else None}
                    for k in range(n)
                ],
                pa.struct([pa.field("x", pa.float64(), nullable=True), ("tag", pa.string())]),
            ),
            "tags": pa.array(
                [None if k % 4 == 0 else [strings[j % 8] for j in range(k % 3)] for k in range(n)]
            ),
            "attrs": pa.array(
                [None if k % 6 == 0 else [("k", k), ("z", None)][: k % 3] for k in range(n)],
                pa.map_(pa.string(), pa.int64()),
            ),
        }
    )


def java_table(spark, name: str, props: dict, partitioned_by: str = "") -> Path:
    spark.sql(f"DROP TABLE IF EXISTS java.writer.{name}")
    tblprops = ", ".join(f"'{k}'='{v}'" for k, v in props.items())
    spark.sql(
        f"CREATE TABLE java.writer.{name} ({DDL}) USING iceberg {partitioned_by}"
        + (f" TBLPROPERTIES ({tblprops})" if tblprops else "")
    )
    return Path(spark._icefloe_warehouse) / "writer" / name


def java_file_metrics(jvm, path: str, props: dict) -> dict:
    m = jvm.java.util.HashMap()
    for k, v in props.items():
        m.put(k, v)
    config = jvm.org.apache.iceberg.MetricsConfig.fromProperties(m)
    metrics = jvm.org.apache.iceberg.parquet.ParquetUtil.fileMetrics(
        jvm.org.apache.iceberg.Files.localInput(path), config
    )

    def conv(jmap, f=lambda x: x):
        return {} if jmap is None else {int(k): f(jmap.get(k)) for k in jmap.keySet()}

    as_bytes = jvm.org.apache.iceberg.util.ByteBuffers.toByteArray
    return {
        "record_count": metrics.recordCount(),
        "value_counts": conv(metrics.valueCounts()),
        "null_value_counts": conv(metrics.nullValueCounts()),
        "lower_bounds": conv(metrics.lowerBounds(), lambda b: bytes(as_bytes(b))),
        "upper_bounds": conv(metrics.upperBounds(), lambda b: bytes(as_bytes(b))),
        "column_sizes": conv(metrics.columnSizes()),
    }


def norm(v):
    """Values of pyarrow and PySpark rows in one comparable form."""
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    if isinstance(v, dt.datetime):
        return v.replace(tzinfo=None)
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)) and v and all(isinstance(x, tuple) and len(x) == 2 for x in v):
        return {k: norm(x) for k, x in v}
    if isinstance(v, (list, tuple)):
        return [norm(x) for x in v]
    if isinstance(v, bytearray):
        return bytes(v)
    return v


def spark_rows(df) -> list[dict]:
    out = []
    for r in df.collect():
        d = r.asDict(recursive=True)
        if d.get("attrs") is not None:
            d["attrs"] = dict(d["attrs"])
        out.append({k: norm(v) for k, v in d.items()})
    return sorted(out, key=lambda r: r["id"])


def arrow_rows(table: pa.Table) -> list[dict]:
    out = []
    for r in table.to_pylist():
        r = {k: norm(v) for k, v in r.items()}
        if r["attrs"] == []:
            r["attrs"] = {}
        out.append(r)
    return sorted(out, key=lambda r: r["id"])


@pytest.fixture(scope="module")
def writer_ns(spark):
    spark.sql("CREATE NAMESPACE IF NOT EXISTS java.writer")
    return spark


@pytest.mark.parametrize("k", range(len(CONFIGS)))
def test_metrics_equal_java(writer_ns, tmp_path, k):
    spark = writer_ns
    props = CONFIGS[k]
    data = rows_table()
    table_dir = java_table(spark, f"metrics_{k}", props)
    md = icefloe.TableMetadata.from_path(str(table_dir))
    files = write_data_files(md, data, location_prefix=str(tmp_path / "ours"))
    assert files.num_rows == 1
    ours = {
        c: dict(v)
        for c, v in files.select(
            [
                "value_counts",
                "null_value_counts",
                "nan_value_counts",
                "lower_bounds",
                "upper_bounds",
                "column_sizes",
            ]
        )
        .to_pylist()[0]
        .items()
    }
    path = files.column("file_path")[0].as_py()

    # 1. Java's footer metrics of icefloe's file
    java = java_file_metrics(spark._jvm, path, dict(md.properties))
    float_ids = {md.schema().find_field(n, False).id for n in FLOAT_IDS}
    assert java["record_count"] == data.num_rows
    for key in ["value_counts", "null_value_counts", "lower_bounds", "upper_bounds"]:
        # float and double metrics: Java's writer takes them from its own field metrics
        # (checked below), not from the footer (which counts rows under null structs and
        # has -0.0/+0.0 bounds for zeros)
        j = {fid: b for fid, b in java[key].items() if fid not in float_ids}
        o = {fid: b for fid, b in ours[key].items() if fid not in float_ids}
        assert j == o, key
    assert java["column_sizes"] == ours["column_sizes"]
    repeated = {md.schema().find_field(n, False).id for n in ["tags.element", "attrs.key", "attrs.value"]}
    assert set(ours["column_sizes"]) == set(ours["value_counts"]) | repeated

    # 2. Spark reads the rows back, equal to the input
    assert spark_rows(spark.read.parquet(path)) == arrow_rows(data)

    # 3. Java's own writer on the same rows records the same metrics
    spark.read.parquet(path).coalesce(1).writeTo(f"java.writer.metrics_{k}").append()
    (row,) = spark.sql(
        "SELECT record_count, value_counts, null_value_counts, nan_value_counts, lower_bounds, upper_bounds "
        f"FROM java.writer.metrics_{k}.files"
    ).collect()
    assert row.record_count == data.num_rows
    for key in ["value_counts", "null_value_counts", "nan_value_counts", "lower_bounds", "upper_bounds"]:
        jv = {
            int(a): (bytes(b) if isinstance(b, (bytes, bytearray)) else b)
            for a, b in (row[key] or {}).items()
        }
        assert jv == ours[key], key


PARTITIONINGS = [
    "PARTITIONED BY (month(day), bucket(3, s), truncate(2, s))",
    "PARTITIONED BY (s, dec, b, tstz)",
    "PARTITIONED BY (hours(ts), days(tstz), truncate(10, i), bucket(4, i), years(day))",
    "PARTITIONED BY (bucket(5, bin), truncate(3, bin), bucket(2, dec), truncate(50, dec), ts)",
    "PARTITIONED BY (f, d, day, i, bin)",
]


@pytest.mark.parametrize("k", range(len(PARTITIONINGS)))
def test_partition_paths_equal_java(writer_ns, tmp_path, k):
    spark = writer_ns
    data = rows_table()
    table_dir = java_table(spark, f"parts_{k}", {}, PARTITIONINGS[k])
    md = icefloe.TableMetadata.from_path(str(table_dir))
    ours = write_data_files(md, data, location_prefix=str(tmp_path / "ours"))

    def dirs(paths, counts, root):
        out = Counter()
        for p, c in zip(paths, counts, strict=True):
            rel = p[len(root) + 1 :]
            out[rel.rsplit("/", 1)[0]] += c
        return out

    our_dirs = dirs(
        ours.column("file_path").to_pylist(), ours.column("record_count").to_pylist(), str(tmp_path / "ours")
    )
    # Java partitions the same rows (read from an unpartitioned file icefloe wrote)
    flat = write_data_files(
        icefloe.TableMetadata.from_path(str(java_table(spark, f"flat_{k}", {}))),
        data,
        location_prefix=str(tmp_path / "flat"),
    )
    df = spark.read.parquet(flat.column("file_path")[0].as_py())
    df.writeTo(f"java.writer.parts_{k}").append()
    java_files = spark.sql(f"SELECT file_path, record_count FROM java.writer.parts_{k}.files").collect()
    root = (table_dir / "data").as_uri().replace("file:///", "file:/")
    java_dirs = dirs(
        [r.file_path for r in java_files],
        [r.record_count for r in java_files],
        root if java_files[0].file_path.startswith(root) else str(table_dir / "data"),
    )
    assert our_dirs == java_dirs
    assert sum(our_dirs.values()) == data.num_rows
