"""The write distribution and ordering icefloe's connector asks of Spark, against Java Iceberg's
SparkWrite (``RequiresDistributionAndOrdering``): rows clustered by partition for
``write.distribution-mode=hash`` (the default for a partitioned table), ordered for ``range``
(the default for a sorted one), nothing for ``none``; and the partition transforms as Spark
functions (``<catalog>.system.bucket`` and friends), which Spark evaluates the clustering with.

Twin tables (``db.j_<name>`` through Java, ``db.i_<name>`` through icefloe, one SQLite catalog)
take the same unclustered rows; each twin must end with as many data files as Java's.
"""

from __future__ import annotations

import pytest

from connector_env import twin_catalogs

JAVA = "d_java"
ICE = "d_ice"

pytestmark = pytest.mark.java


@pytest.fixture(scope="module")
def env(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("spark-connector-distribution")
    catalog = twin_catalogs(spark, root, JAVA, ICE)
    yield spark, catalog
    spark.conf.unset("spark.sql.iceberg.distribution-mode")


def twins(spark, name: str, sql: str) -> None:
    spark.sql(sql.format(t=f"{JAVA}.db.j_{name}"))
    spark.sql(sql.format(t=f"{ICE}.db.i_{name}"))


def rows(df) -> list[str]:
    return sorted(repr(tuple(r)) for r in df.collect())


def data_files(spark, table: str) -> list[tuple]:
    """(partition, record count) of each live data file, read by Java."""
    return sorted(
        (repr(r[0]), r[1])
        for r in spark.sql(f"SELECT partition, record_count FROM {JAVA}.db.{table}.files").collect()
    )


# 4 input partitions, each with rows of every partition: unclustered
UNCLUSTERED = (
    "SELECT /*+ REPARTITION(4) */ id, concat('c', id % 3) AS cat, "
    "TIMESTAMP '2024-01-01 00:00:00' + make_interval(0, 0, 0, CAST(id % 5 AS int), CAST(id % 7 AS int)) AS ts, "
    "CAST(id * 1.5 AS decimal(10, 2)) AS amount, concat('s', id % 13) AS s FROM range(0, 2000, 1, 4)"
)
SCHEMA = "(id bigint, cat string, ts timestamp, amount decimal(10,2), s string)"


@pytest.mark.parametrize(
    "partitioning",
    ["cat, bucket(4, id)", "days(ts), truncate(2, s)", "hours(ts)", "bucket(3, amount), months(ts)"],
)
def test_hash_distribution_writes_one_file_per_partition_as_javas(env, partitioning):
    spark, catalog = env
    name = "h_" + "".join(c for c in partitioning if c.isalnum())
    twins(
        spark,
        name,
        f"CREATE TABLE {{t}} {SCHEMA} USING iceberg PARTITIONED BY ({partitioning}) "
        "TBLPROPERTIES ('format-version'='2')",
    )
    twins(spark, name, f"INSERT INTO {{t}} {UNCLUSTERED}")
    java, ours = data_files(spark, f"j_{name}"), data_files(spark, f"i_{name}")
    assert ours == java
    # Java's default (hash): one file per partition, not one per partition and task
    assert len(java) == len({p for p, _ in java})
    assert rows(spark.table(f"{ICE}.db.i_{name}")) == rows(spark.table(f"{JAVA}.db.j_{name}"))


@pytest.mark.parametrize("mode", ["none", "hash", "range"])
def test_distribution_mode_property_as_javas(env, mode):
    spark, catalog = env
    name = f"m_{mode}"
    twins(
        spark,
        name,
        f"CREATE TABLE {{t}} {SCHEMA} USING iceberg PARTITIONED BY (cat) "
        f"TBLPROPERTIES ('format-version'='2', 'write.distribution-mode'='{mode}')",
    )
    twins(spark, name, f"INSERT INTO {{t}} {UNCLUSTERED}")
    java, ours = data_files(spark, f"j_{name}"), data_files(spark, f"i_{name}")
    if mode == "none":
        # each of the 4 tasks writes a file for each of the 3 partitions
        assert len(ours) == len(java) == 12
    else:
        assert len(ours) == len(java) == 3
        assert ours == java
    # the session's mode wins over the table's, as Java's
    spark.conf.set("spark.sql.iceberg.distribution-mode", "none" if mode != "none" else "hash")
    try:
        twins(spark, name, f"INSERT INTO {{t}} {UNCLUSTERED}")
    finally:
        spark.conf.unset("spark.sql.iceberg.distribution-mode")
    assert len(data_files(spark, f"i_{name}")) == len(data_files(spark, f"j_{name}"))


def test_sorted_table_is_ordered_as_javas(env):
    spark, catalog = env
    name = "sorted"
    twins(spark, name, f"CREATE TABLE {{t}} {SCHEMA} USING iceberg TBLPROPERTIES ('format-version'='2')")
    for prefix in ("j", "i"):
        # the sort order is set through Java's SQL extensions on both twins
        spark.sql(f"ALTER TABLE {JAVA}.db.{prefix}_{name} WRITE ORDERED BY id DESC NULLS LAST")
    twins(spark, name, f"INSERT INTO {{t}} {UNCLUSTERED}")
    # range distribution by the sort order: each task's file holds a range of ids, in order
    bounds = spark.sql(
        f"SELECT readable_metrics.id.lower_bound AS lo, readable_metrics.id.upper_bound AS hi, record_count "
        f"FROM {JAVA}.db.i_{name}.files ORDER BY lo"
    ).collect()
    for a, b in zip(bounds, bounds[1:], strict=False):
        assert a.hi < b.lo, bounds
    assert sum(r.record_count for r in bounds) == 2000
    java_files = spark.sql(f"SELECT count(*) FROM {JAVA}.db.j_{name}.files").collect()[0][0]
    assert len(bounds) == java_files
    # and the rows within each file are in the table's order (id descending)
    files = [r[0] for r in spark.sql(f"SELECT file_path FROM {JAVA}.db.i_{name}.files").collect()]
    for f in files:
        ids = [r[0] for r in spark.read.parquet(f).select("id").collect()]
        assert ids == sorted(ids, reverse=True)


def test_write_option_turns_the_distribution_off(env):
    spark, catalog = env
    name = "opt"
    twins(spark, name, f"CREATE TABLE {{t}} {SCHEMA} USING iceberg PARTITIONED BY (cat)")
    df = spark.sql(UNCLUSTERED)
    for catalog_name, prefix in ((JAVA, "j"), (ICE, "i")):
        df.writeTo(f"{catalog_name}.db.{prefix}_{name}").option("distribution-mode", "none").append()
    java, ours = data_files(spark, f"j_{name}"), data_files(spark, f"i_{name}")
    assert len(ours) == len(java) == 12


def test_advisory_partition_size_as_javas(env):
    """Java asks Spark for shuffle partitions of its expected file size times the shuffle's
    compression ratio (write.spark.advisory-partition-size-bytes and friends), not Spark's own
    size: with a tiny Spark size, Spark would split each partition's rows over several tasks."""
    spark, _ = env
    name = "advisory"
    twins(spark, name, f"CREATE TABLE {{t}} {SCHEMA} USING iceberg PARTITIONED BY (cat)")
    spark.conf.set("spark.sql.adaptive.advisoryPartitionSizeInBytes", "1024")
    try:
        twins(spark, name, f"INSERT INTO {{t}} {UNCLUSTERED}")
        java, ours = data_files(spark, f"j_{name}"), data_files(spark, f"i_{name}")
        assert ours == java
        assert len(java) == 3
        # the table's size wins over Java's estimate: 1 KB partitions, split as Spark's
        twins(
            spark,
            name,
            "ALTER TABLE {t} SET TBLPROPERTIES ('write.spark.advisory-partition-size-bytes'='1024')",
        )
        twins(spark, name, f"INSERT INTO {{t}} {UNCLUSTERED}")
    finally:
        spark.conf.unset("spark.sql.adaptive.advisoryPartitionSizeInBytes")
    java, ours = data_files(spark, f"j_{name}"), data_files(spark, f"i_{name}")
    assert len(ours) == len(java) > 6


def test_transform_functions_equal_javas(env):
    spark, _ = env
    values = spark.sql(
        "SELECT id, CAST(id - 500 AS int) AS i, CAST(id * 37 - 9000 AS bigint) AS l, "
        "CAST((id - 500) * 1.37 AS decimal(9, 2)) AS dec, concat('s', id, 'ü') AS s, "
        "CAST(concat('b', id) AS binary) AS b, date_add(DATE '1969-06-01', CAST(id * 3 AS int)) AS d, "
        "TIMESTAMP '1969-12-30 00:00:00' + make_interval(0, 0, 0, 0, CAST(id * 5 AS int)) AS ts, "
        "CAST(TIMESTAMP '1969-12-30 00:00:00' + make_interval(0, 0, 0, 0, CAST(id * 5 AS int)) AS timestamp_ntz) AS ntz "
        "FROM range(0, 1000)"
    )
    values.createOrReplaceTempView("tf_values")
    calls = [
        "bucket(16, i)",
        "bucket(7, l)",
        "bucket(5, dec)",
        "bucket(11, s)",
        "bucket(3, b)",
        "bucket(9, d)",
        "bucket(13, ts)",
        "bucket(13, ntz)",
        "truncate(10, i)",
        "truncate(7, l)",
        "truncate(50, dec)",
        "truncate(2, s)",
        "truncate(3, b)",
        "years(d)",
        "months(d)",
        "days(d)",
        "years(ts)",
        "months(ts)",
        "days(ts)",
        "hours(ts)",
        "hours(ntz)",
        "days(ntz)",
    ]
    for call in calls:
        got = spark.sql(
            f"SELECT id, {ICE}.system.{call} AS ours, {JAVA}.system.{call} AS java FROM tf_values"
        ).collect()
        diff = [r for r in got if r.ours != r.java]
        assert not diff, f"{call}: {diff[:5]}"
