"""The connector's read splits against Java Iceberg's: Java's Spark scans adapt the split size
to the session's parallelism (``TableScanUtil.adjustSplitSize``: when the scan makes fewer
splits than Spark has slots, the split size shrinks to the scan's size shared by the slots,
16 MiB at least), so a table smaller than a split per slot is still read by every core. The
connector plans the same input partitions, in the same situations, as Java's reader."""

from __future__ import annotations

import pytest

from connector_env import twin_catalogs

JAVA = "split_java"
ICE = "split_ice"
ENABLED = "spark.sql.iceberg.read.adaptive-split-size.enabled"
PARALLELISM = "spark.sql.iceberg.read.adaptive-split-size.parallelism"


@pytest.fixture(scope="module")
def env(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("spark-connector-splits")
    twin_catalogs(spark, root, JAVA, ICE)
    # about 60 MB in 6 files of one row group each (random doubles and strings hardly
    # compress): below one 128 MiB split, above the 16 MiB floor several times over
    spark.sql(
        f"CREATE TABLE {JAVA}.db.t (id bigint, x double, s string) USING iceberg "
        "TBLPROPERTIES ('format-version'='2')"
    )
    spark.sql(
        f"INSERT INTO {JAVA}.db.t SELECT /*+ REPARTITION(6) */ id, rand(7) * 1e9, "
        "concat(uuid(), uuid()) FROM range(600000)"
    )
    # the same rows in a table whose property turns the adaptation off
    spark.sql(
        f"CREATE TABLE {JAVA}.db.fixed USING iceberg TBLPROPERTIES "
        f"('format-version'='2', 'read.split.adaptive-size.enabled'='false') "
        f"AS SELECT * FROM {JAVA}.db.t"
    )
    return spark


def partitions(spark, catalog: str, table: str) -> int:
    return spark.table(f"{catalog}.db.{table}")._jdf.rdd().getNumPartitions()


def sizes(spark, table: str) -> list[int]:
    return [r[0] for r in spark.sql(f"SELECT file_size_in_bytes FROM {JAVA}.db.{table}.files").collect()]


@pytest.mark.java
@pytest.mark.parametrize("parallelism", [None, "2", "5", "16"])
def test_splits_adapt_to_the_sessions_parallelism_as_javas(env, parallelism):
    spark = env
    total = sum(sizes(spark, "t"))
    assert 16 << 20 < total < 128 << 20, total  # one split unadapted, several adapted
    if parallelism is not None:
        spark.conf.set(PARALLELISM, parallelism)
    try:
        java, ours = partitions(spark, JAVA, "t"), partitions(spark, ICE, "t")
    finally:
        spark.conf.unset(PARALLELISM)
    assert ours == java
    # unadapted, the whole table is one 128 MiB split
    assert ours > 1


@pytest.mark.java
def test_splits_do_not_adapt_when_turned_off(env):
    spark = env
    # the table property
    assert partitions(spark, ICE, "fixed") == partitions(spark, JAVA, "fixed") == 1
    # the session setting, over the table's default
    spark.conf.set(ENABLED, "false")
    try:
        assert partitions(spark, ICE, "t") == partitions(spark, JAVA, "t") == 1
    finally:
        spark.conf.unset(ENABLED)
    # a split size given to the read wins over the adaptation
    assert (
        spark.read.option("split-size", str(1 << 30)).table(f"{ICE}.db.t")._jdf.rdd().getNumPartitions() == 1
    )


@pytest.mark.java
def test_adapted_splits_read_every_row_once(env):
    spark = env
    spark.conf.set(PARALLELISM, "16")
    try:
        query = "SELECT count(*), sum(id), sum(length(s)), count(DISTINCT id) FROM {}.db.t WHERE x >= 0"
        ours = spark.sql(query.format(ICE)).collect()
        java = spark.sql(query.format(JAVA)).collect()
    finally:
        spark.conf.unset(PARALLELISM)
    assert ours == java
    assert ours[0][0] == ours[0][3] == 600000


@pytest.mark.java
def test_the_session_switch_wins_over_the_table_property(env):
    spark = env
    spark.conf.set(ENABLED, "true")
    try:
        java, ours = partitions(spark, JAVA, "fixed"), partitions(spark, ICE, "fixed")
    finally:
        spark.conf.unset(ENABLED)
    assert ours == java > 1


@pytest.mark.java
@pytest.mark.parametrize("value", ["0", "-3", "many"])
def test_a_bad_parallelism_is_refused(env, value):
    spark = env
    spark.conf.set(PARALLELISM, value)
    try:
        with pytest.raises(Exception, match="adaptive-split-size.parallelism"):
            partitions(spark, ICE, "t")
    finally:
        spark.conf.unset(PARALLELISM)
