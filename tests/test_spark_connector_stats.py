"""The connector's scan statistics against Java Iceberg's: Spark's optimizer takes a DSv2
scan's size and row count from ``SupportsReportStatistics`` (without them a scan is taken
as too large to broadcast, so every join with a small icefloe table shuffled both sides).
The connector reports Java's numbers (``SparkScan.estimateStatistics``): the snapshot
summary's total for an unfiltered partitioned table, else the planned tasks' estimates,
times the read schema's default row size."""

from __future__ import annotations

import pytest

from connector_env import twin_catalogs

JAVA = "stats_java"
ICE = "stats_ice"


@pytest.fixture(scope="module")
def env(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("spark-connector-stats")
    twin_catalogs(spark, root, JAVA, ICE)
    spark.sql(
        f"CREATE TABLE {JAVA}.db.u (id bigint, name string, amount double) USING iceberg "
        "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')"
    )
    spark.sql(
        f"CREATE TABLE {JAVA}.db.p (id bigint, category string, amount double) USING iceberg "
        "PARTITIONED BY (category) TBLPROPERTIES ('format-version'='3', "
        "'write.delete.mode'='merge-on-read')"
    )
    for start in (0, 1000, 5000):
        rows = f"range({start}, {start + 700 + start // 10})"
        spark.sql(f"INSERT INTO {JAVA}.db.u SELECT id, concat('n', id), id / 3.0 FROM {rows}")
        spark.sql(f"INSERT INTO {JAVA}.db.p SELECT id, chr(97 + CAST(id % 4 AS INT)), id / 3.0 FROM {rows}")
    spark.sql(f"DELETE FROM {JAVA}.db.p WHERE id % 10 = 0")
    spark.sql(f"DELETE FROM {JAVA}.db.u WHERE id % 10 = 0")
    spark.sql(f"CREATE TABLE {JAVA}.db.empty (id bigint) USING iceberg")
    return spark


def _int(value) -> int:
    # py4j hands a Scala BigInt over as a Python int, or as an object when it cannot
    return value if isinstance(value, int) else int(value.toString())


def _stats(s) -> tuple[int, int | None]:
    rows = s.rowCount()
    return _int(s.sizeInBytes()), _int(rows.get()) if rows.isDefined() else None


def stats(df) -> tuple[tuple[int, int | None], tuple[int, int | None]]:
    """The statistics of the scan (the plan's leaf) and of the whole optimized plan."""
    plan = df._jdf.queryExecution().optimizedPlan()
    return _stats(plan.collectLeaves().head().stats()), _stats(plan.stats())


QUERIES = [
    ("u", None, None),
    ("u", ["id"], None),
    ("u", None, "id > 1500"),
    ("p", None, None),
    ("p", ["amount"], None),
    ("p", None, "category = 'b'"),
    ("p", ["id"], "amount > 100"),
    ("empty", None, None),
]


@pytest.mark.java
@pytest.mark.parametrize("table,columns,where", QUERIES)
def test_scan_statistics_are_javas(env, table, columns, where):
    spark = env

    def df(catalog):
        d = spark.table(f"{catalog}.db.{table}")
        if where:
            d = d.where(where)
        return d.select(*columns) if columns else d

    java, ours = stats(df(JAVA)), stats(df(ICE))
    assert ours == java
    (size, rows), _ = ours
    if table == "empty":
        assert (size, rows) == (0, 0)
    else:
        assert rows is not None and rows > 0 and 0 < size < 1 << 40


@pytest.mark.java
def test_a_small_table_is_broadcast_in_a_join_as_with_java(env):
    spark = env
    query = (
        "SELECT count(*), sum(b.amount) FROM range(20000) r JOIN {}.db.u b ON r.id = b.id WHERE b.amount > 10"
    )
    plans = {}
    for catalog in (JAVA, ICE):
        df = spark.sql(query.format(catalog))
        plans[catalog] = df._jdf.queryExecution().executedPlan().toString()
        assert df.collect() == spark.sql(query.format(JAVA)).collect()
    assert "BroadcastHashJoin" in plans[JAVA]
    assert "BroadcastHashJoin" in plans[ICE], plans[ICE]
