"""Metadata tables against Java Iceberg: ``table.inspect.<name>()`` equals Spark SQL's
``SELECT * FROM java.<db>.<t>.<name>`` field by field (names, nullability and values, nested
ones too), on Java-written v1/v2/v3 tables (schema and partition evolution, position deletes
and deletion vectors, several snapshots, a branch and a tag), with time travel where Java
allows it, on an icefloe-written table, and through the ``icefloe`` Spark data source."""

from __future__ import annotations

import datetime as dt
import math

import pyarrow as pa
import pytest

import oracle as o

pytestmark = pytest.mark.java

# every table Java 1.11 has
TABLES = [
    "snapshots",
    "history",
    "metadata_log_entries",
    "refs",
    "manifests",
    "all_manifests",
    "files",
    "data_files",
    "delete_files",
    "entries",
    "partitions",
    "all_files",
    "all_data_files",
    "all_delete_files",
    "all_entries",
    "position_deletes",
]
TIME_TRAVEL = [
    "manifests",
    "files",
    "data_files",
    "delete_files",
    "entries",
    "partitions",
    "position_deletes",
]
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def _icefloe():
    import icefloe

    return icefloe


def _rows_sql(version: int, fq: str) -> str:
    return f"""
        CREATE TABLE {fq} (id BIGINT, cat STRING, v DOUBLE, d DATE, ts TIMESTAMP,
                           amount DECIMAL(9, 2), tags ARRAY<STRING>, pt STRUCT<x: INT, y: STRING>)
            USING iceberg PARTITIONED BY (cat)
            TBLPROPERTIES ('format-version'='{version}', 'write.delete.mode'='merge-on-read',
                           'write.update.mode'='merge-on-read', 'write.distribution-mode'='none');
        INSERT INTO {fq} SELECT id, CASE WHEN id % 3 = 0 THEN 'a' WHEN id % 3 = 1 THEN NULL ELSE 'b' END,
            CASE WHEN id % 10 = 0 THEN CAST('NaN' AS DOUBLE) ELSE id / 4.0 END,
            DATE'2024-01-30' + CAST(id % 5 AS INT), TIMESTAMP'2024-01-30 10:00:00' + make_interval(0, 0, 0, 0, id),
            CAST(id AS DECIMAL(9, 2)) / 4, array('x', CAST(id AS STRING)), named_struct('x', CAST(id AS INT), 'y', 'p')
            FROM range(0, 60);
        INSERT INTO {fq} VALUES (100, 'b', -1.5, DATE'1969-12-31', TIMESTAMP'1969-12-31 23:59:59', -0.25,
            array(), named_struct('x', -1, 'y', NULL));
        ALTER TABLE {fq} CREATE TAG first;
        ALTER TABLE {fq} ADD PARTITION FIELD months(d);
        INSERT INTO {fq} VALUES (200, 'a', 2.5, DATE'2024-03-01', NULL, 1.00, NULL, NULL),
            (201, 'q', 0.0, DATE'2024-04-01', TIMESTAMP'2024-04-01 00:00:00', 2.00, array('z'), NULL);
        DELETE FROM {fq} WHERE id % 7 = 0;
        ALTER TABLE {fq} CREATE BRANCH side;
        INSERT INTO {fq}.branch_side VALUES (300, 'side', 1.0, DATE'2025-01-01', NULL, 3.00, NULL, NULL);
        ALTER TABLE {fq} DROP PARTITION FIELD cat;
        INSERT INTO {fq} VALUES (400, 'c', 4.0, DATE'2025-02-01', NULL, 4.00, NULL, NULL);
        UPDATE {fq} SET v = 9.0 WHERE id = 201;
        DELETE FROM {fq} WHERE id = 5
        """


@pytest.fixture(scope="module")
def inspect_tables(spark, java_tables) -> dict[str, str]:
    """Spark name -> icefloe identifier in a ``filesystem`` catalog on the Java warehouse
    (a namespace of its own: the session's manifest fixture makes ``java.mdb.mor_v2/3``)."""
    out = {}
    for version in (2, 3):
        o._sql(spark, "CREATE NAMESPACE IF NOT EXISTS java.inspectdb")
        o._sql(spark, _rows_sql(version, f"java.inspectdb.mor_v{version}"))
        out[f"java.inspectdb.mor_v{version}"] = f"inspectdb.mor_v{version}"
    for name, _ in java_tables:
        if name.startswith("evolve_v"):
            out[f"java.db.{name}"] = f"db.{name}"
    return out


@pytest.fixture(scope="module")
def catalog(spark):
    return _icefloe().load_catalog("fs", type="filesystem", warehouse=str(spark._icefloe_warehouse))


@pytest.fixture(scope="module")
def icefloe_table(spark, catalog) -> str:
    """A table icefloe wrote (appends, partition evolution, a whole-file delete, a tag),
    before Spark first looks at it (Spark's catalog caches tables)."""
    catalog.create_namespace("idb")
    schema = pa.schema([("id", pa.int64()), ("cat", pa.string()), ("x", pa.float64())])
    t = catalog.create_table(
        "idb.ice", schema, partition_spec=[("cat", "identity")], properties={"format-version": "2"}
    )
    t.append(
        pa.table({"id": [1, 2, 3], "cat": ["a", "b", None], "x": [0.5, float("nan"), None]}, schema=schema)
    )
    t.append(pa.table({"id": [4], "cat": ["a"], "x": [1.0]}, schema=schema))
    with t.update_spec() as u:
        u.add_field("id", "bucket[4]")
    t.append(pa.table({"id": [5, 6], "cat": ["c", "c"], "x": [2.0, 3.0]}, schema=schema))
    t.delete("cat = 'b'")
    with t.manage_snapshots() as m:
        m.create_tag(t.current_snapshot().snapshot_id, "t1")
    return "idb.ice"


@pytest.fixture(scope="module")
def deleted_rows_table(spark, catalog) -> str:
    """A v2 table with a position delete file that stores the deleted rows (``row``, which
    Java's writers no longer fill but its readers still read), written with pyarrow and
    committed by icefloe, before Spark first looks at it."""
    import pyarrow.parquet as pq

    from icefloe import _native

    catalog.create_namespace_if_not_exists("idb")
    schema = pa.schema(
        [pa.field("id", pa.int64(), nullable=False), ("cat", pa.string()), ("x", pa.float64())]
    )
    t = catalog.create_table(
        "idb.posrow", schema, partition_spec=[("cat", "identity")], properties={"format-version": "2"}
    )
    t.append(
        pa.table({"id": [1, 2, 3, 4], "cat": ["a", "a", "a", "b"], "x": [0.5, None, 2.5, 3.0]}, schema=schema)
    )
    t = catalog.load_table("idb.posrow")
    (data,) = [f for f in t.inspect.files().to_pylist() if f["partition"]["cat"] == "a"]

    def fid(i):
        return {"PARQUET:field_id": str(i)}

    # the deleted rows hold `id` and `x` but not `cat` (a delete file may store fewer columns)
    row_type = pa.struct(
        [pa.field("id", pa.int64(), False, fid(1)), pa.field("x", pa.float64(), True, fid(3))]
    )
    deletes = pa.table(
        [
            pa.array([data["file_path"]] * 2),
            pa.array([0, 2], pa.int64()),
            pa.array([{"id": 1, "x": 0.5}, {"id": 3, "x": 2.5}], row_type),
        ],
        schema=pa.schema(
            [
                pa.field("file_path", pa.string(), False, fid(2147483546)),
                pa.field("pos", pa.int64(), False, fid(2147483545)),
                pa.field("row", row_type, True, fid(2147483544)),
            ]
        ),
    )
    path = t.metadata.location.removeprefix("file://") + "/data/cat=a/deletes-with-rows.parquet"
    pq.write_table(deletes, path)
    entry_schema = _native.manifest_entries_schema(t.schema(), t.metadata.spec())
    for n in ("status", "snapshot_id", "sequence_number", "file_sequence_number"):
        entry_schema = entry_schema.remove(entry_schema.get_field_index(n))
    row = {
        "content": 1,
        "file_path": path,
        "file_format": "PARQUET",
        "partition": {"cat": "a"},
        "record_count": 2,
        "file_size_in_bytes": len(open(path, "rb").read()),
    }
    t.row_delta(add_delete_files=pa.Table.from_pylist([row], schema=entry_schema))
    return "idb.posrow"


# --- normalising both sides to plain Python values ---------------------------------------


def _micros(v: dt.datetime) -> int:
    # PySpark gives naive local times for TIMESTAMP; pyarrow aware UTC ones (or naive ones,
    # as PySpark, for TIMESTAMP_NTZ)
    if v.tzinfo is None:
        return (v.replace(tzinfo=dt.timezone.utc) - _EPOCH) // dt.timedelta(microseconds=1)
    return (v - _EPOCH) // dt.timedelta(microseconds=1)


def _norm(v):
    from pyspark.sql import Row

    if isinstance(v, Row):
        return {k: _norm(x) for k, x in v.asDict(recursive=False).items()}
    if isinstance(v, dict):
        if not v:
            return []
        return {_norm(k): _norm(x) for k, x in v.items()}
    if isinstance(v, list):
        if v and all(isinstance(x, tuple) and len(x) == 2 for x in v):
            return {_norm(k): _norm(x) for k, x in v}
        return [_norm(x) for x in v]
    if isinstance(v, (bytes, bytearray)):
        return bytes(v)
    if isinstance(v, dt.datetime):
        return ("ts", _micros(v))
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    return v


def _sorted(rows: list) -> list:
    return sorted(rows, key=repr)


def _spark_shape(t) -> object:
    from pyspark.sql import types as T

    if isinstance(t, T.StructType):
        return [(f.name, f.nullable, _spark_shape(f.dataType)) for f in t.fields]
    if isinstance(t, T.ArrayType):
        return ("list", _spark_shape(t.elementType))
    if isinstance(t, T.MapType):
        return ("map", _spark_shape(t.keyType), _spark_shape(t.valueType))
    return None


def _arrow_shape(t) -> object:
    if isinstance(t, pa.Schema):
        return [(f.name, f.nullable, _arrow_shape(f.type)) for f in t]
    if pa.types.is_struct(t):
        fields = [t.field(i) for i in range(t.num_fields)]
        return [(f.name, f.nullable, _arrow_shape(f.type)) for f in fields]
    if pa.types.is_list(t):
        return ("list", _arrow_shape(t.value_type))
    if pa.types.is_map(t):
        return ("map", _arrow_shape(t.key_type), _arrow_shape(t.item_type))
    return None


def _java(spark, fq: str, name: str, version=None):
    """Java's rows; ``version``: a snapshot id or a ref name (Spark's ``VERSION AS OF``)."""
    sql = f"SELECT * FROM {fq}.{name}"
    if version is not None:
        sql += f" VERSION AS OF {version}" if isinstance(version, int) else f" VERSION AS OF '{version}'"
    df = spark.sql(sql)
    return df.schema, _sorted([_norm(r) for r in df.collect()])


def _ours(table, name: str, **kw):
    result = table.inspect.table(name, **kw)
    return result.schema, _sorted([_norm(r) for r in result.to_pylist()])


def _strip_file_scheme(rows: list) -> list:
    # Java's Hadoop tables name their current metadata file `file:/...`; icefloe names it as
    # it was opened (a plain path)
    for r in rows:
        if isinstance(r.get("file"), str) and r["file"].startswith("file:"):
            r["file"] = r["file"][len("file:") :]
    return rows


def _compare(spark, fq: str, table, name: str, version=None, ours_options=None) -> None:
    java_schema, java_rows = _java(spark, fq, name, version)
    our_schema, our_rows = _ours(table, name, **(ours_options or {}))
    assert _arrow_shape(our_schema) == _spark_shape(java_schema), f"{fq}.{name}: schema"
    if name == "metadata_log_entries":
        java_rows, our_rows = _strip_file_scheme(java_rows), _strip_file_scheme(our_rows)
    assert len(our_rows) == len(java_rows), f"{fq}.{name}: {len(our_rows)} rows, Java {len(java_rows)}"
    for ours, java in zip(our_rows, java_rows, strict=True):
        for key in java:
            assert ours.get(key) == java[key], f"{fq}.{name}: field {key}\n ours {ours}\n java {java}"
        assert ours == java


@pytest.mark.parametrize("name", TABLES)
def test_metadata_tables_equal_java(spark, inspect_tables, catalog, name):
    for fq, ident in sorted(inspect_tables.items()):
        _compare(spark, fq, catalog.load_table(ident), name)


@pytest.mark.parametrize("name", TIME_TRAVEL)
def test_time_travel_equals_java(spark, inspect_tables, catalog, name):
    for fq, ident in sorted(inspect_tables.items()):
        table = catalog.load_table(ident)
        snapshots = table.snapshots()
        for snapshot in (snapshots[0], snapshots[len(snapshots) // 2]):
            sid = snapshot.snapshot_id
            _compare(spark, fq, table, name, sid, {"snapshot_id": sid})
        for ref_name in table.metadata.refs:
            _compare(spark, fq, table, name, ref_name, {"ref": ref_name})


@pytest.mark.parametrize("name", TABLES)
def test_icefloe_written_table_equals_java(spark, catalog, icefloe_table, name):
    _compare(spark, f"java.{icefloe_table}", catalog.load_table(icefloe_table), name)


def test_position_deletes_with_stored_rows_equal_java(spark, catalog, deleted_rows_table):
    table = catalog.load_table(deleted_rows_table)
    _compare(spark, f"java.{deleted_rows_table}", table, "position_deletes")
    rows = table.inspect.position_deletes().to_pylist()
    assert sorted((r["pos"], r["row"]["id"], r["row"]["cat"]) for r in rows) == [(0, 1, None), (2, 3, None)]


def test_all_tables_refuse_time_travel(catalog, inspect_tables):
    table = catalog.load_table("inspectdb.mor_v2")
    with pytest.raises(ValueError, match="cannot select a snapshot"):
        table.inspect.table("all_files", snapshot_id=table.current_snapshot().snapshot_id)


def test_spark_source_reads_metadata_tables(spark, inspect_tables):
    from icefloe.spark import register

    register(spark)
    warehouse = str(spark._icefloe_warehouse)
    for name in ("files", "snapshots", "partitions", "entries", "position_deletes"):
        df = (
            spark.read.format("icefloe")
            .option("type", "filesystem")
            .option("warehouse", warehouse)
            .load(f"inspectdb.mor_v3.{name}")
        )
        java = spark.table(f"java.inspectdb.mor_v3.{name}")
        assert _spark_shape(df.schema) == _spark_shape(java.schema), name
        assert _sorted([_norm(r) for r in df.collect()]) == _sorted([_norm(r) for r in java.collect()]), name
    tag = spark.table("java.inspectdb.mor_v3.refs").where("type = 'TAG'").collect()[0]["snapshot_id"]
    df = (
        spark.read.format("icefloe")
        .option("type", "filesystem")
        .option("warehouse", warehouse)
        .option("snapshot-id", str(tag))
        .load("inspectdb.mor_v3.files")
    )
    java = spark.sql(f"SELECT * FROM java.inspectdb.mor_v3.files VERSION AS OF {tag}")
    assert _sorted([_norm(r) for r in df.collect()]) == _sorted([_norm(r) for r in java.collect()])


def test_unknown_metadata_table_is_an_error(catalog, inspect_tables):
    with pytest.raises(ValueError, match="unknown metadata table"):
        catalog.load_table("inspectdb.mor_v2").inspect.table("nope")


# filters and projection: the same text is a Spark SQL WHERE clause and an icefloe row filter
FILTERS = {
    "files": [
        "partition.cat = 'a'",
        "partition.cat IS NULL",
        "record_count > 5 AND content = 0",
        "content = 1 OR file_size_in_bytes < 1000",
        "readable_metrics.id.lower_bound >= 10",
        "spec_id = 0 AND partition.d_month IS NOT NULL",
    ],
    "entries": ["status = 1", "data_file.partition.cat = 'b'", "data_file.content <> 0 AND snapshot_id > 0"],
    "all_files": ["content = 2 OR partition.cat IN ('a', 'q')"],
    "partitions": ["record_count > 3", "partition.cat = 'b'"],
    "manifests": ["added_data_files_count > 0"],
    "snapshots": ["operation = 'append'"],
    "position_deletes": ["pos < 3", "partition.cat = 'a'", "spec_id = 1 AND pos >= 0"],
}


@pytest.mark.parametrize("name", sorted(FILTERS))
def test_filtered_metadata_tables_equal_spark_sql(spark, inspect_tables, catalog, name):
    for version in (2, 3):
        fq, table = f"java.inspectdb.mor_v{version}", catalog.load_table(f"inspectdb.mor_v{version}")
        for where in FILTERS[name]:
            java = _sorted(
                [_norm(r) for r in spark.sql(f"SELECT * FROM {fq}.{name} WHERE {where}").collect()]
            )
            ours = _sorted([_norm(r) for r in table.inspect.table(name, row_filter=where).to_pylist()])
            assert ours == java, f"{fq}.{name} WHERE {where}"


def test_filter_with_time_travel_equals_spark_sql(spark, inspect_tables, catalog):
    table = catalog.load_table("inspectdb.mor_v3")
    for snapshot in table.snapshots()[1:4]:
        sid = snapshot.snapshot_id
        for name, where in (("files", "partition.cat = 'b'"), ("entries", "status = 1")):
            java = spark.sql(f"SELECT * FROM java.inspectdb.mor_v3.{name} VERSION AS OF {sid} WHERE {where}")
            ours = table.inspect.table(name, snapshot_id=sid, row_filter=where)
            assert _sorted([_norm(r) for r in ours.to_pylist()]) == _sorted(
                [_norm(r) for r in java.collect()]
            )


def test_selected_fields_equal_spark_sql(spark, inspect_tables, catalog):
    table = catalog.load_table("inspectdb.mor_v3")
    fq = "java.inspectdb.mor_v3"
    # columns in the table's order (Java's Schema.select keeps it, whatever the order asked)
    ours = table.inspect.files(selected_fields=["record_count", "file_path", "partition"])
    java = spark.sql(f"SELECT file_path, partition, record_count FROM {fq}.files")
    assert _arrow_shape(ours.schema) == _spark_shape(java.schema)
    assert _sorted([_norm(r) for r in ours.to_pylist()]) == _sorted([_norm(r) for r in java.collect()])
    # a struct's field: the struct with only that field
    ours = table.inspect.files(
        selected_fields=["file_path", "partition.cat", "readable_metrics.id.upper_bound"]
    )
    assert ours.column_names == ["file_path", "partition", "readable_metrics"]
    java = spark.sql(
        f"SELECT file_path, struct(partition.cat AS cat) AS partition, "
        f"struct(struct(readable_metrics.id.upper_bound AS upper_bound) AS id) AS readable_metrics FROM {fq}.files"
    )
    assert _sorted([_norm(r) for r in ours.to_pylist()]) == _sorted([_norm(r) for r in java.collect()])
    with pytest.raises(LookupError):
        table.inspect.files(selected_fields=["nope"])


def test_spark_source_metadata_table_filters_and_columns(spark, inspect_tables):
    from icefloe.spark import register

    register(spark)
    warehouse = str(spark._icefloe_warehouse)
    for pushdown in ("true", "false"):
        for name, columns, where in (
            ("files", "content,file_path,partition,record_count", "partition.cat = 'a'"),
            ("files", "content,file_path,record_count", "content = 1 AND record_count >= 1"),
            ("entries", "status,snapshot_id,data_file", "status = 1 OR data_file.content = 1"),
            ("position_deletes", "file_path,pos,partition,delete_file_path", "pos < 3"),
        ):
            df = (
                spark.read.format("icefloe")
                .option("type", "filesystem")
                .option("warehouse", warehouse)
                .option("columns", columns)
                .option("pushdown", pushdown)
                .load(f"inspectdb.mor_v3.{name}")
                .where(where)
            )
            java = spark.sql(f"SELECT {columns} FROM java.inspectdb.mor_v3.{name} WHERE {where}")
            assert df.columns == java.columns
            assert _spark_shape(df.schema) == _spark_shape(java.schema), (name, where)
            assert _sorted([_norm(r) for r in df.collect()]) == _sorted([_norm(r) for r in java.collect()]), (
                name,
                where,
                pushdown,
            )
