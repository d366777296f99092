"""icefloe's Spark DataSource V2 connector (``io.icefloe.spark.SparkCatalog``: catalogs,
planning and reading in the Rust core through JNI) against Java Iceberg, in one Spark session.

One SQLite catalog file is opened by Java's ``JdbcCatalog`` (Spark catalog ``conn_java``) and
by icefloe's connector (``conn_ice``, opening the rows of catalog ``conn_java``), so the same
tables are read both ways with Spark SQL.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import icefloe
import icefloe.spark
from connector_env import twin_catalogs
from icefloe.spark import connector

JAVA = "conn_java"
ICE = "conn_ice"


class FakeBuilder:
    """The part of ``SparkSession.Builder`` that ``configure`` uses."""

    def __init__(self, **options):
        self._options = dict(options)

    def config(self, key, value):
        self._options[key] = value
        return self


def test_configure_adds_the_connector_jars_to_a_builder(monkeypatch):
    jars = [str(p) for p in connector.connector_jars()]
    assert Path(jars[0]).name == "icefloe-spark.jar"
    assert any(Path(j).name.startswith("arrow-c-data-") for j in jars)
    builder = FakeBuilder(**{"spark.jars": "/opt/other.jar", "spark.driver.extraClassPath": "/opt/x.jar"})
    # configure(native_library=) sets the variable in this process: restored after the test
    monkeypatch.setenv(connector.NATIVE_LIBRARY_ENV, "unset")
    monkeypatch.delenv(connector.NATIVE_LIBRARY_ENV)
    assert icefloe.spark.configure(builder) is builder
    assert builder._options["spark.jars"].split(",") == ["/opt/other.jar", *jars]
    assert builder._options["spark.driver.extraClassPath"].split(os.pathsep) == ["/opt/x.jar", *jars]
    assert builder._options["spark.executor.extraClassPath"].split(os.pathsep) == jars
    # configuring twice adds nothing twice
    icefloe.spark.configure(builder)
    assert builder._options["spark.jars"].split(",") == ["/opt/other.jar", *jars]
    assert connector.NATIVE_LIBRARY_ENV not in os.environ
    lib = "/tmp/libicefloe_jni.so"
    icefloe.spark.configure(builder, native_library=lib)
    assert builder._options[f"spark.executorEnv.{connector.NATIVE_LIBRARY_ENV}"] == lib
    assert os.environ[connector.NATIVE_LIBRARY_ENV] == lib


def test_connector_jars_refuse_an_installation_without_them(monkeypatch, tmp_path):
    monkeypatch.setattr(connector, "JAR_DIR", tmp_path)
    with pytest.raises(icefloe.errors.UnsupportedError, match="no Spark connector"):
        connector.connector_jars()


# ---------------------------------------------------------------------------------------------
# against Java, in Spark
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def env(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("spark-connector")
    twin_catalogs(spark, root, JAVA, ICE)
    spark.sql(
        f"CREATE TABLE {JAVA}.db.events (id bigint, category string, ts timestamp, "
        "amount decimal(10,2), score double, d date, ntz timestamp_ntz, n int, "
        "payload struct<a:int, b:string>, tags array<string>, attrs map<string,int>, raw binary) "
        "USING iceberg PARTITIONED BY (category) TBLPROPERTIES ('format-version'='2', "
        "'write.delete.mode'='merge-on-read', 'write.target-file-size-bytes'='2000')"
    )
    values = []
    for i in range(120):
        category = "NULL" if i % 11 == 0 else f"'{'abc'[i % 3]}'"
        values.append(
            f"({i}, {category}, TIMESTAMP '2024-01-{1 + i % 9:02d} {i % 24:02d}:30:00', "
            f"{'NULL' if i % 13 == 0 else f'{i * 1.25:.2f}'}, {(i % 10) / 10}, "
            f"DATE '2024-02-{1 + i % 20:02d}', TIMESTAMP_NTZ '2024-01-{1 + i % 4:02d} {i % 24:02d}:00:00', "
            f"{'NULL' if i % 7 == 3 else i % 6}, named_struct('a', {i % 4}, 'b', 'p{i}'), "
            f"array('t{i % 3}', 'u'), map('k', {i}), X'{i % 256:02X}{(i * 7) % 256:02X}')"
        )
    spark.sql(f"INSERT INTO {JAVA}.db.events VALUES {', '.join(values[:60])}")
    spark.sql(f"INSERT INTO {JAVA}.db.events VALUES {', '.join(values[60:])}")
    # the same rows again, then a delete (position delete files): counts need the rows
    spark.sql(
        f"CREATE TABLE {JAVA}.db.deleted USING iceberg TBLPROPERTIES ('format-version'='2', "
        f"'write.delete.mode'='merge-on-read') AS SELECT * FROM {JAVA}.db.events"
    )
    spark.sql(f"DELETE FROM {JAVA}.db.deleted WHERE id % 10 = 4")
    return spark


@pytest.mark.java
def test_namespaces_and_tables_are_icefloes(env):
    spark = env
    assert [r[0] for r in spark.sql(f"SHOW NAMESPACES IN {ICE}").collect()] == ["db"]
    tables = sorted(r.tableName for r in spark.sql(f"SHOW TABLES IN {ICE}.db").collect())
    assert tables == ["deleted", "events"]
    with pytest.raises(Exception, match="TABLE_OR_VIEW_NOT_FOUND"):
        spark.table(f"{ICE}.db.missing")


@pytest.mark.java
def test_schema_is_javas(env):
    spark = env
    for table in ("events", "deleted"):
        assert spark.table(f"{ICE}.db.{table}").schema == spark.table(f"{JAVA}.db.{table}").schema


@pytest.mark.java
def test_core_errors_arrive_as_typed_java_exceptions(env):
    spark = env
    spark.conf.set("spark.sql.catalog.conn_bad", connector.CATALOG_CLASS)
    spark.conf.set("spark.sql.catalog.conn_bad.type", "nessie")
    spark.conf.set("spark.sql.catalog.conn_bad.warehouse", "/tmp/nowhere")
    with pytest.raises(Exception) as failure:
        spark.sql("SHOW NAMESPACES IN conn_bad").collect()
    text = str(failure.value)
    assert "IcefloeUnsupportedException" in text
    assert "catalog type 'nessie'" in text


def _plan(df) -> str:
    return df._jdf.queryExecution().executedPlan().toString()


@pytest.mark.java
def test_count_star_from_metadata_without_deletes(env):
    spark = env
    df = spark.sql(f"SELECT count(*) FROM {ICE}.db.events")
    assert df.collect()[0][0] == 120
    # answered by a LocalScan: no files read
    assert "LocalTableScan" in _plan(df) and "BatchScan" not in _plan(df)
    # a filter and deletes need the rows: no count from metadata
    for query in (
        f"SELECT count(*) FROM {ICE}.db.events WHERE id > 5",
        f"SELECT count(*) FROM {ICE}.db.deleted",
    ):
        assert "BatchScan" in _plan(spark.sql(query)), query


@pytest.mark.java
def test_pushed_predicates_are_the_safe_ones(env):
    spark = env
    plan = _plan(spark.sql(f"SELECT id FROM {ICE}.db.events WHERE category = 'a' AND score > 0.5"))
    pushed = plan.split("[filters=")[1].split(", limit=")[0].split(", columns=")[0]
    # the string comparison prunes; the float comparison is Spark's alone (its null check,
    # which Spark infers, is pushed: nulls are the same in both)
    assert "category = 'a'" in pushed
    assert "score > 0.5" not in pushed and "score IS NOT NULL" in pushed
    # every predicate is still evaluated by Spark after the scan
    assert "Filter" in plan and "score" in plan.split("BatchScan")[0]


def rows(df) -> list[str]:
    """A DataFrame's rows in a canonical, comparable form (order ignored)."""
    return sorted(repr(tuple(r)) for r in df.collect())


FILTERS = [
    None,
    "id > 100",
    "id <= 40 AND category = 'b'",
    "category IN ('a', 'c')",
    "category IS NULL",
    "NOT (category <=> 'b')",
    "ts >= TIMESTAMP '2024-01-04 00:00:00'",
    "ts < TIMESTAMP '2024-01-03 12:00:00' OR id = 7",
    "d < DATE '2024-02-05' AND ntz > TIMESTAMP_NTZ '2024-01-02 05:00:00'",
    "amount > 100.5 OR amount IS NULL",
    "score > 0.5",
    "NOT (n IN (1, 2))",
    "payload.a = 3",
    "raw = X'0A46'",
]


@pytest.mark.java
@pytest.mark.parametrize("table", ["events", "deleted"])
def test_select_equals_javas(env, table):
    spark = env
    # Java's rows filtered by Spark alone, for the filter Java's own read fails on (an IN on
    # an identity partition column holding nulls: Java's partition Evaluator puts null into a
    # CharSequenceSet, a NullPointerException; see tests/test_spark_source.py)
    java_all = spark.table(f"{JAVA}.db.{table}").localCheckpoint()
    for where in FILTERS:
        clause = f" WHERE {where}" if where else ""
        ours = spark.sql(f"SELECT * FROM {ICE}.db.{table}{clause}")
        try:
            expected = rows(spark.sql(f"SELECT * FROM {JAVA}.db.{table}{clause}"))
        except Exception as e:
            assert "NullPointerException" in str(e), where
            expected = rows(java_all.where(where))
        assert rows(ours) == expected, where


@pytest.mark.java
def test_projection_reads_the_columns_asked_for_nested_too(env):
    spark = env
    query = "SELECT id, payload.a, tags FROM {}.db.deleted WHERE id < 50"
    ours = spark.sql(query.format(ICE))
    assert rows(ours) == rows(spark.sql(query.format(JAVA)))
    plan = _plan(ours)
    assert 'columns=["id","payload.a","tags"]' in plan, plan


@pytest.mark.java
def test_counts_equal_javas(env):
    spark = env
    for query in (
        "SELECT count(*) FROM {}.db.events",
        "SELECT count(*) FROM {}.db.deleted",
        "SELECT count(*) FROM {}.db.deleted WHERE category = 'a'",
        "SELECT count(*) FROM {}.db.events WHERE id > 100",
        "SELECT category, count(*) FROM {}.db.deleted GROUP BY category",
    ):
        assert rows(spark.sql(query.format(ICE))) == rows(spark.sql(query.format(JAVA))), query


@pytest.mark.java
def test_limit(env):
    spark = env
    java = set(rows(spark.sql(f"SELECT * FROM {JAVA}.db.deleted")))
    df = spark.sql(f"SELECT * FROM {ICE}.db.deleted LIMIT 7")
    got = rows(df)
    assert len(got) == 7 and set(got) <= java
    assert "limit=7" in _plan(df)


@pytest.mark.java
def test_time_travel(env):
    spark = env
    first = spark.sql(f"SELECT snapshot_id FROM {JAVA}.db.events.snapshots ORDER BY committed_at").collect()[
        0
    ][0]
    ours = spark.sql(f"SELECT * FROM {ICE}.db.events VERSION AS OF {first}")
    java = spark.sql(f"SELECT * FROM {JAVA}.db.events VERSION AS OF {first}")
    assert rows(ours) == rows(java)
    assert len(rows(ours)) == 60


@pytest.mark.java
def test_a_table_icefloe_wrote(env):
    import pyarrow as pa

    spark = env
    db = spark.conf.get(f"spark.sql.catalog.{ICE}.uri")
    warehouse = spark.conf.get(f"spark.sql.catalog.{ICE}.warehouse")
    catalog = icefloe.load_catalog(JAVA, uri=db, warehouse=warehouse)
    schema = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field("name", pa.string()),
            pa.field("u", pa.binary(16)),
            pa.field("f", pa.binary(3)),
        ]
    )
    table = catalog.create_table("db.written", schema, partition_spec=[("id", "bucket[4]")])
    import uuid

    data = pa.table(
        {
            "id": pa.array(range(50), pa.int64()),
            "name": [None if i % 7 == 0 else f"n{i}" for i in range(50)],
            "u": pa.array([uuid.UUID(int=i).bytes for i in range(50)], schema.field("u").type),
            "f": pa.array([bytes([i, i, i]) for i in range(50)], pa.binary(3)),
        },
        schema=schema,
    )
    table.append(data)
    ours = spark.sql(f"SELECT * FROM {ICE}.db.written WHERE id >= 10")
    java = spark.sql(f"SELECT * FROM {JAVA}.db.written WHERE id >= 10")
    assert ours.schema == java.schema
    assert rows(ours) == rows(java)
    assert spark.sql(f"SELECT count(*) FROM {ICE}.db.written").collect()[0][0] == 50


# ---------------------------------------------------------------------------------------------
# pruning by residual filters, time travel's schema, aggregates, runtime filters
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def more(env):
    """Tables of their own: ``parted`` (identity partitions without nulls, days-partitioned
    timestamps, no deletes), ``parted_deleted`` (the same with a position delete),
    ``counts_only``/``no_metrics`` (metrics modes), ``evolved`` (a schema change between
    snapshots) and ``dim`` (a small dimension table for joins)."""
    spark = env
    spark.sql(
        f"CREATE TABLE {JAVA}.db.parted (id bigint, category string, ts timestamp, amount decimal(10,2), "
        "score double, f float, flag boolean, d date, n int, name string) USING iceberg "
        "PARTITIONED BY (category, days(ts)) TBLPROPERTIES ('format-version'='2', "
        "'write.delete.mode'='merge-on-read')"
    )
    values = []
    for i in range(200):
        values.append(
            f"({i}, '{'abcd'[i % 4]}', TIMESTAMP '2024-03-{1 + i % 6:02d} {i % 24:02d}:15:00', "
            f"{'NULL' if i % 9 == 0 else f'{i * 0.75 - 40:.2f}'}, {-1.5 + (i % 13) / 4}, "
            f"{'NULL' if i % 5 == 0 else f'{i / 8}'}, {str(i % 3 == 0).lower()}, "
            f"DATE '2023-12-{1 + i % 28:02d}', {'NULL' if i % 4 == 1 else i % 50}, 'n{i}')"
        )
    for chunk in (values[:70], values[70:140], values[140:]):
        spark.sql(f"INSERT INTO {JAVA}.db.parted VALUES {', '.join(chunk)}")
    spark.sql(
        f"CREATE TABLE {JAVA}.db.parted_deleted USING iceberg PARTITIONED BY (category) "
        f"TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read') "
        f"AS SELECT * FROM {JAVA}.db.parted"
    )
    spark.sql(f"DELETE FROM {JAVA}.db.parted_deleted WHERE id % 17 = 3")
    for table, mode in (("counts_only", "counts"), ("no_metrics", "none")):
        spark.sql(
            f"CREATE TABLE {JAVA}.db.{table} USING iceberg TBLPROPERTIES ('format-version'='2', "
            f"'write.metadata.metrics.default'='{mode}') AS SELECT * FROM {JAVA}.db.parted"
        )
    spark.sql(
        f"CREATE TABLE {JAVA}.db.evolved (id bigint, label string, v int) USING iceberg "
        "TBLPROPERTIES ('format-version'='2')"
    )
    spark.sql(f"INSERT INTO {JAVA}.db.evolved VALUES (1, 'one', 10), (2, 'two', 20), (3, NULL, 30)")
    spark.sql(f"ALTER TABLE {JAVA}.db.evolved RENAME COLUMN label TO name")
    spark.sql(f"ALTER TABLE {JAVA}.db.evolved ALTER COLUMN v TYPE bigint")
    spark.sql(f"ALTER TABLE {JAVA}.db.evolved ADD COLUMN extra string")
    spark.sql(f"ALTER TABLE {JAVA}.db.evolved DROP COLUMN id")
    spark.sql(f"INSERT INTO {JAVA}.db.evolved VALUES ('four', 40, 'x'), ('five', 50, NULL)")
    spark.sql(f"CREATE TABLE {JAVA}.db.dim (category string, label string) USING iceberg")
    spark.sql(f"INSERT INTO {JAVA}.db.dim VALUES ('a', 'first'), ('b', 'second'), ('z', 'none')")
    return spark


@pytest.mark.java
def test_filters_with_residuals_prune(more):
    spark = more

    # one input partition per file (a tiny split size): a filter on a non-partition column has
    # a residual, which the Rust reader applies, so its files are pruned by their metrics
    # (the connector used to plan such a filter again without it)
    def partitions(where: str) -> int:
        df = spark.read.option("split-size", "1").table(f"{ICE}.db.events")
        return (df.where(where) if where else df)._jdf.rdd().getNumPartitions()

    assert partitions("id > 100") < partitions("")
    for where in ("id > 100", "id > 100 AND category = 'b'", "category IS NULL OR id < 10"):
        query = "SELECT * FROM {}.db.events WHERE " + where
        assert rows(spark.sql(query.format(ICE))) == rows(spark.sql(query.format(JAVA))), where


@pytest.mark.java
def test_time_travel_reads_with_the_snapshots_schema(more):
    spark = more
    snaps = spark.sql(
        f"SELECT snapshot_id, committed_at FROM {JAVA}.db.evolved.snapshots ORDER BY committed_at"
    ).collect()
    first, at = snaps[0][0], snaps[0][1]
    queries = [
        f"SELECT * FROM {{}}.db.evolved VERSION AS OF {first}",
        f"SELECT * FROM {{}}.db.evolved TIMESTAMP AS OF '{at}'",
        "SELECT * FROM {}.db.evolved",
        "SELECT name, v FROM {}.db.evolved WHERE name = 'one'",
    ]
    for query in queries:
        ours, java = spark.sql(query.format(ICE)), spark.sql(query.format(JAVA))
        assert ours.schema == java.schema, query
        assert rows(ours) == rows(java), query
    assert [f.name for f in spark.sql(queries[0].format(ICE)).schema] == ["id", "label", "v"]
    # a filter on a column the snapshot's schema names differently: Java binds pushed filters
    # to the current schema and fails ("Cannot find field 'label'"); icefloe binds them to
    # the snapshot's, so its rows are compared with Java's whole snapshot filtered by Spark
    where = "label = 'two' OR v > 25"
    ours = spark.sql(f"SELECT label, id FROM {ICE}.db.evolved VERSION AS OF {first} WHERE {where}")
    java_all = spark.sql(f"SELECT * FROM {JAVA}.db.evolved VERSION AS OF {first}").localCheckpoint()
    assert rows(ours) == rows(java_all.where(where).select("label", "id"))
    assert len(rows(ours)) == 2


def _pushed_to_metadata(df) -> bool:
    plan = _plan(df)
    return "LocalTableScan" in plan and "BatchScan" not in plan


AGGREGATES = [
    ("parted", "count(*), min(id), max(id), count(amount), min(amount), max(amount)", None),
    ("parted", "max(ts), min(ts), min(d), max(d), count(n), min(n), max(n)", None),
    ("parted", "min(score), max(score), min(f), max(f), count(f), min(flag), max(flag)", None),
    ("parted", "count(*), max(id), min(ts)", "category = 'b'"),
    ("parted", "count(*), count(name)", "category IN ('a', 'c') AND ts >= TIMESTAMP '2024-03-03 00:00:00'"),
    # not from metadata, as in Java: strings (bounds may be truncated), a residual, deletes,
    # metrics modes without bounds or counts, DISTINCT, grouping, expressions
    ("parted", "min(name), max(category)", None),
    ("parted", "count(*), max(id)", "id > 20"),
    ("parted", "count(*), max(id)", "ts >= TIMESTAMP '2024-03-03 10:00:00'"),
    ("parted_deleted", "count(*)", None),
    ("parted_deleted", "max(id), count(n)", None),
    ("counts_only", "count(n), count(*)", None),
    ("counts_only", "max(n)", None),
    ("no_metrics", "count(n)", None),
    ("no_metrics", "count(*)", None),
    ("parted", "count(DISTINCT n)", None),
    ("parted", "max(id + 1)", None),
    ("events", "count(*), max(id)", "category = 'a'"),
]


@pytest.mark.java
@pytest.mark.parametrize(("table", "select", "where"), AGGREGATES)
def test_aggregates_from_metadata_as_javas(more, table, select, where):
    spark = more
    query = f"SELECT {select} FROM {{}}.db.{table}" + (f" WHERE {where}" if where else "")
    ours, java = spark.sql(query.format(ICE)), spark.sql(query.format(JAVA))
    assert rows(ours) == rows(java), query
    # pushed down exactly where Java pushes it down
    assert _pushed_to_metadata(ours) == _pushed_to_metadata(java), (query, _plan(ours), _plan(java))


@pytest.mark.java
def test_aggregates_pushdown_shows_in_explain(more):
    spark = more
    df = spark.sql(f"SELECT min(id), max(ts), count(amount) FROM {ICE}.db.parted WHERE category = 'c'")
    plan = _plan(df)
    assert "LocalTableScan" in plan and "BatchScan" not in plan, plan
    java = spark.sql(f"SELECT min(id), max(ts), count(amount) FROM {JAVA}.db.parted WHERE category = 'c'")
    assert rows(df) == rows(java)
    # a filter that selects whole partitions is not evaluated again by Spark
    # (a Filter node prints "Filter (<condition>)"; the scan's "RuntimeFilters: []" is no node)
    plan = _plan(spark.sql(f"SELECT id FROM {ICE}.db.parted WHERE category = 'c'"))
    assert "Filter (" not in plan, plan
    plan = _plan(spark.sql(f"SELECT id FROM {ICE}.db.parted WHERE category = 'c' AND id > 3"))
    assert "Filter (" in plan, plan


@pytest.mark.java
def test_runtime_filter_prunes_partitions_of_a_join(more):
    spark = more
    query = (
        "SELECT f.id, f.category, d.label FROM {0}.db.parted f JOIN {0}.db.dim d "
        "ON f.category = d.category WHERE d.label = 'second'"
    )
    ours = spark.sql(query.format(ICE))
    assert rows(ours) == rows(spark.sql(query.format(JAVA)))
    # Spark inserts a dynamic pruning filter on the scan (its partition source column)
    plan = _plan(ours)
    assert "dynamicpruning" in plan.lower(), plan
