"""The write distribution of icefloe's merge-on-read ``DELETE``, ``UPDATE`` and ``MERGE INTO``
against Java Iceberg's ``SparkPositionDeltaWrite`` (``SparkWriteUtil.positionDeltaRequirements``):
deletes clustered by ``_spec_id`` and ``_partition``, the rows an ``UPDATE`` or ``MERGE`` inserts
by the table's partition transforms too (``hash``, the default of
``write.<command>.distribution-mode``), ordered by the same for ``range``, nothing for ``none``.

Twin tables (``db.j_<name>`` through Java, ``db.i_<name>`` through icefloe, one SQLite catalog)
take the same rows and statements in one Spark session, with 4 shuffle partitions that Spark
may not coalesce and no broadcast joins, so that the distribution decides which task writes
which rows. Each twin must end with the same data and delete files per partition, written by
the same Spark tasks (the partition id that starts each file's name), and the same rows.
"""

from __future__ import annotations

import os

import pytest

from connector_env import twin_catalogs

JAVA = "dd_java"
ICE = "dd_ice"

pytestmark = pytest.mark.java

SESSION = {
    "spark.sql.shuffle.partitions": "4",
    "spark.sql.adaptive.coalescePartitions.enabled": "false",
    "spark.sql.autoBroadcastJoinThreshold": "-1",
}


@pytest.fixture(scope="module")
def env(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("spark-connector-delta-distribution")
    catalog = twin_catalogs(spark, root, JAVA, ICE)
    before = {k: spark.conf.get(k, None) for k in SESSION}
    for k, v in SESSION.items():
        spark.conf.set(k, v)
    yield spark, catalog
    for k, v in before.items():
        if v is None:
            spark.conf.unset(k)
        else:
            spark.conf.set(k, v)


def twins(spark, name: str, sql: str) -> None:
    spark.sql(sql.format(t=f"{JAVA}.db.j_{name}"))
    spark.sql(sql.format(t=f"{ICE}.db.i_{name}"))


def rows(df) -> list[str]:
    return sorted(repr(tuple(r)) for r in df.collect())


def task(path: str) -> str:
    """The Spark partition id that starts a written file's name (Java's and icefloe's)."""
    return os.path.basename(path).split("-")[0]


def files(spark, table: str, kind: str) -> list[tuple]:
    """(partition, record count, writing task) of each live file of ``kind`` (``data_files``,
    ``delete_files``: a DV in v3), read by Java; an unpartitioned table's have no partition."""
    return sorted(
        (repr(r.asDict().get("partition")), r.record_count, task(r.file_path))
        for r in spark.sql(f"SELECT * FROM {JAVA}.db.{table}.{kind}").collect()
    )


def data_files(spark, table: str) -> list[tuple]:
    return files(spark, table, "data_files")


def delete_files(spark, table: str) -> list[tuple]:
    return files(spark, table, "delete_files")


def written_by_last_commit(spark, table: str) -> list[tuple]:
    """(partition, record count, writing task) of the data files the last snapshot added."""
    return sorted(
        (repr(r.data_file.asDict().get("partition")), r.data_file.record_count, task(r.data_file.file_path))
        for r in spark.sql(
            f"SELECT data_file FROM {JAVA}.db.{table}.entries WHERE status = 1 AND data_file.content = 0 "
            f"AND snapshot_id = (SELECT snapshot_id FROM {JAVA}.db.{table}.snapshots "
            "ORDER BY committed_at DESC LIMIT 1)"
        ).collect()
    )


def per_partition(files: list[tuple]) -> dict[str, int]:
    out: dict[str, int] = {}
    for p, *_ in files:
        out[p] = out.get(p, 0) + 1
    return out


# 4 input partitions, each with rows of every table partition
ROWS = (
    "SELECT /*+ REPARTITION(4) */ id, concat('c', id % 4) AS cat, concat('s', id % 13) AS s "
    "FROM range(0, {n}, 1, 4)"
)


def make_twins(spark, name: str, version: int, mode: str, partitioning: str = "cat") -> None:
    twins(
        spark,
        name,
        f"CREATE TABLE {{t}} (id bigint, cat string, s string) USING iceberg "
        f"PARTITIONED BY ({partitioning}) "
        f"TBLPROPERTIES ('format-version'='{version}', 'write.delete.mode'='merge-on-read', "
        "'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read', "
        f"'write.delete.distribution-mode'='{mode}', 'write.update.distribution-mode'='{mode}', "
        f"'write.merge.distribution-mode'='{mode}')",
    )
    # hash (the append default): one data file per partition in both twins
    twins(spark, name, f"INSERT INTO {{t}} {ROWS.format(n=2000)}")


def assert_same_files(spark, name: str, same_tasks: bool, same_delete_tasks: bool | None = None) -> None:
    """The same files per partition; with ``same_tasks``, the same rows written by the same
    tasks (not where the scan's tasks, which icefloe and Java plan differently, decide: mode
    ``none`` on a scan without a join, and ``range``, whose bounds Spark samples from them;
    nor for the deletes of an unpartitioned table, clustered by ``_file``, whose names differ)."""
    if same_delete_tasks is None:
        same_delete_tasks = same_tasks
    jd, idata = data_files(spark, f"j_{name}"), data_files(spark, f"i_{name}")
    jdel, idel = delete_files(spark, f"j_{name}"), delete_files(spark, f"i_{name}")
    assert per_partition(idata) == per_partition(jd)
    assert per_partition(idel) == per_partition(jdel)
    if same_tasks:
        assert idata == jd
    if same_delete_tasks:
        assert idel == jdel
    assert rows(spark.table(f"{ICE}.db.i_{name}")) == rows(spark.table(f"{JAVA}.db.j_{name}"))


MODES = ["none", "hash", "range"]
CASES = [(m, 2) for m in MODES] + [("hash", 3), ("none", 3)]


@pytest.mark.parametrize(("mode", "version"), CASES)
def test_merge_writes_files_per_partition_as_javas(env, mode, version):
    spark, _ = env
    name = f"merge_{mode}_v{version}"
    make_twins(spark, name, version, mode)
    # matched rows updated in place (same partition), others moved, unmatched ones inserted
    # into every partition and a new one: the join's 4 tasks each hold rows of every partition
    twins(
        spark,
        name,
        "MERGE INTO {t} t USING (SELECT id, concat('c', id % 5) AS cat, 'm' AS s FROM range(1000, 3000)) s "
        "ON t.id = s.id "
        "WHEN MATCHED AND t.id % 2 = 0 THEN UPDATE SET t.s = s.s "
        "WHEN MATCHED THEN UPDATE SET t.cat = s.cat "
        "WHEN NOT MATCHED THEN INSERT *",
    )
    # the join's shuffle hands the write the same rows in the same tasks in both twins, except
    # in range mode: Spark samples its bounds from keys that hold the twins' differing file
    # names, so a bound inside a partition splits its rows between tasks differently
    assert_same_files(spark, name, same_tasks=mode != "range")
    if mode == "hash":
        # Java's: one new data file per partition, and the inserts spread over tasks by
        # partition rather than all in one task
        added = written_by_last_commit(spark, f"i_{name}")
        assert len({p for p, _, _ in added}) == len(added) == 5
        assert len({t for _, _, t in added}) > 1


@pytest.mark.parametrize(("mode", "version"), CASES)
def test_update_writes_files_per_partition_as_javas(env, mode, version):
    spark, _ = env
    name = f"update_{mode}_v{version}"
    make_twins(spark, name, version, mode)
    twins(spark, name, "UPDATE {t} SET cat = concat(cat, 'x'), s = 'u' WHERE id % 3 = 0")
    assert_same_files(spark, name, same_tasks=mode == "hash")


@pytest.mark.parametrize(("mode", "version"), [("none", 2), ("hash", 2), ("range", 3)])
def test_delete_writes_files_per_partition_as_javas(env, mode, version):
    spark, _ = env
    name = f"delete_{mode}_v{version}"
    make_twins(spark, name, version, mode)
    twins(
        spark,
        name,
        "DELETE FROM {t} WHERE id IN (SELECT id * 7 FROM range(0, 300))",
    )
    assert_same_files(spark, name, same_tasks=True)


@pytest.mark.parametrize("matched", ["WHEN MATCHED THEN DELETE ", ""])
def test_merge_inserting_only_spreads_partitions_over_tasks_as_javas(env, matched):
    """A MERGE whose source rows all miss the table: every row an insert with null metadata
    columns, which a clustering by ``_file`` alone put in one task. (Without a ``MATCHED``
    clause Spark makes the MERGE an append, which takes the append's distribution.)"""
    spark, _ = env
    name = "merge_inserts" + ("_d" if matched else "")
    make_twins(spark, name, 2, "hash", partitioning="bucket(8, id)")
    twins(
        spark,
        name,
        "MERGE INTO {t} t USING (SELECT id, concat('c', id % 4) AS cat, 'n' AS s FROM range(5000, 7000)) s "
        f"ON t.id = s.id {matched}"
        "WHEN NOT MATCHED THEN INSERT *",
    )
    assert_same_files(spark, name, same_tasks=True)
    added = written_by_last_commit(spark, f"i_{name}")
    assert len({p for p, _, _ in added}) == len(added) == 8
    assert len({t for _, _, t in added}) > 1


def test_unpartitioned_merge_as_javas(env):
    spark, _ = env
    name = "merge_unpartitioned"
    twins(
        spark,
        name,
        "CREATE TABLE {t} (id bigint, cat string, s string) USING iceberg "
        "TBLPROPERTIES ('format-version'='3', 'write.merge.mode'='merge-on-read')",
    )
    twins(spark, name, f"INSERT INTO {{t}} {ROWS.format(n=2000)}")
    twins(
        spark,
        name,
        "MERGE INTO {t} t USING (SELECT id, 'u' AS cat, 'm' AS s FROM range(1000, 3000)) s "
        "ON t.id = s.id WHEN MATCHED THEN UPDATE SET t.s = s.s WHEN NOT MATCHED THEN INSERT *",
    )
    assert_same_files(spark, name, same_tasks=True, same_delete_tasks=False)
    # Java's: every new row in one task (their metadata columns, the clustering, are nulls)
    assert len(written_by_last_commit(spark, f"i_{name}")) == 1


def test_write_options_and_session_mode_as_javas(env):
    """The session's ``spark.sql.iceberg.distribution-mode`` wins over the table's
    ``write.merge.distribution-mode``, as Java's."""
    spark, _ = env
    name = "merge_session"
    make_twins(spark, name, 2, "hash")
    spark.conf.set("spark.sql.iceberg.distribution-mode", "none")
    try:
        twins(
            spark,
            name,
            "MERGE INTO {t} t USING (SELECT id, concat('c', id % 4) AS cat, 'm' AS s FROM range(1000, 3000)) s "
            "ON t.id = s.id WHEN MATCHED THEN UPDATE SET t.s = s.s WHEN NOT MATCHED THEN INSERT *",
        )
    finally:
        spark.conf.unset("spark.sql.iceberg.distribution-mode")
    assert_same_files(spark, name, same_tasks=True)
    # none: each of the join's 4 tasks writes a file for each partition it holds rows of
    assert max(per_partition(data_files(spark, f"i_{name}")).values()) > 2


def test_advisory_partition_size_as_javas(env):
    """Java asks Spark for shuffle partitions of its expected file size times the shuffle's
    compression ratio (384 MB for zstd Parquet behind lz4 shuffles), not Spark's own size:
    with a tiny Spark size, Spark would split each partition's rows over several tasks."""
    spark, _ = env
    name = "merge_advisory"
    make_twins(spark, name, 2, "hash")
    spark.conf.set("spark.sql.adaptive.advisoryPartitionSizeInBytes", "1024")
    try:
        twins(
            spark,
            name,
            "MERGE INTO {t} t USING (SELECT id, concat('c', id % 4) AS cat, 'm' AS s FROM range(1000, 9000)) s "
            "ON t.id = s.id WHEN MATCHED THEN UPDATE SET t.s = s.s WHEN NOT MATCHED THEN INSERT *",
        )
    finally:
        spark.conf.unset("spark.sql.adaptive.advisoryPartitionSizeInBytes")
    assert_same_files(spark, name, same_tasks=True)
    added = written_by_last_commit(spark, f"i_{name}")
    assert len({p for p, _, _ in added}) == len(added) == 4


@pytest.mark.parametrize("layout", ["sorted", "fanout-off"])
def test_local_ordering_as_javas(env, layout):
    """A sorted table, or fanout writers off (``write.spark.fanout.enabled=false``), orders the
    rows within a task by ``_spec_id``, ``_partition``, ``_file``, ``_pos`` then the table's
    ordering, as Java's: the new rows of each file are in the table's order."""
    spark, _ = env
    name = "merge_" + layout.replace("-", "_")
    make_twins(spark, name, 2, "hash")
    if layout == "sorted":
        for prefix in ("j", "i"):
            # through Java's SQL extensions on both twins (one catalog)
            spark.sql(f"ALTER TABLE {JAVA}.db.{prefix}_{name} WRITE ORDERED BY id DESC NULLS LAST")
    else:
        twins(spark, name, "ALTER TABLE {t} SET TBLPROPERTIES ('write.spark.fanout.enabled'='false')")
    twins(
        spark,
        name,
        "MERGE INTO {t} t USING (SELECT id, concat('c', id % 4) AS cat, 'm' AS s FROM range(1000, 3000)) s "
        "ON t.id = s.id WHEN MATCHED THEN UPDATE SET t.s = s.s WHEN NOT MATCHED THEN INSERT *",
    )
    assert_same_files(spark, name, same_tasks=True)
    added = spark.sql(
        f"SELECT data_file.file_path AS f FROM {JAVA}.db.i_{name}.entries WHERE status = 1 AND data_file.content = 0 "
        f"AND snapshot_id = (SELECT snapshot_id FROM {JAVA}.db.i_{name}.snapshots ORDER BY committed_at DESC LIMIT 1)"
    ).collect()
    assert len(added) == 4
    for r in added:
        ids = [x[0] for x in spark.read.parquet(r.f).select("id").collect()]
        expected = sorted(ids, reverse=True) if layout == "sorted" else ids
        assert ids == expected
