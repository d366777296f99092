"""Format v4 tables through the JVM connector: Spark SQL's row-level commands on a v4 table
end with the rows Java's same commands leave in a v3 twin, and the connector's row-level
commits are handed the tree positions their scan found, so they read the changed files'
leaf entries instead of searching every leaf."""

from __future__ import annotations

import pyarrow as pa
import pytest

from connector_env import twin_catalogs

JAVA = "v4c_java"
ICE = "v4c_ice"
MOR = {
    "write.delete.mode": "merge-on-read",
    "write.update.mode": "merge-on-read",
    "write.merge.mode": "merge-on-read",
}


def _data(lo: int, n: int) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(lo, lo + n), pa.int64()),
            "v": pa.array([f"v{i}" for i in range(lo, lo + n)]),
        }
    )


@pytest.fixture(scope="module")
def env(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("spark-connector-v4")
    catalog = twin_catalogs(spark, root, JAVA, ICE)
    return spark, catalog


def _create(catalog, name: str, version: int):
    props = {"format-version": str(version), **MOR}
    if version == 4:
        # every append flushed into a leaf of its own (the root keeps no data file)
        props["commit.v4.root.max-file-entries"] = "0"
    t = catalog.create_table(name, _data(0, 1).schema, properties=props)
    for k in range(4):
        t.append(_data(100 * k, 100))
    return catalog.load_table(name)


def rows(spark, table: str) -> list[tuple]:
    return sorted(tuple(r) for r in spark.sql(f"SELECT id, v FROM {table}").collect())


STATEMENTS = [
    "DELETE FROM {} WHERE id >= 250 AND id < 260",
    "UPDATE {} SET v = concat(v, '!') WHERE id % 50 = 7",
    "MERGE INTO {} t USING (SELECT id, concat('s', id) AS v FROM range(390, 420)) s "
    "ON t.id = s.id WHEN MATCHED AND s.id % 2 = 0 THEN DELETE "
    "WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *",
    "DELETE FROM {} WHERE id < 3 OR id = 399",
]


@pytest.mark.java
def test_row_level_commands_on_v4_end_as_javas_on_a_v3_twin(env):
    spark, catalog = env
    _create(catalog, "db.rl4", 4)
    _create(catalog, "db.rl3", 3)
    assert rows(spark, f"{ICE}.db.rl4") == rows(spark, f"{JAVA}.db.rl3")
    for statement in STATEMENTS:
        spark.sql(statement.format(f"{ICE}.db.rl4"))
        spark.sql(statement.format(f"{JAVA}.db.rl3"))
        ours = rows(spark, f"{ICE}.db.rl4")
        assert ours == rows(spark, f"{JAVA}.db.rl3"), statement
        # icefloe's own reader of the v4 table agrees with Spark's read of it
        t = catalog.load_table("db.rl4")
        assert t.metadata.format_version == 4
        arrow = t.scan().to_arrow().sort_by("id")
        assert list(zip(arrow.column("id").to_pylist(), arrow.column("v").to_pylist(), strict=True)) == ours
    # 10 deleted; the merge deletes 5 of its 10 matches and inserts 20; 4 deleted
    assert len(ours) == 400 - 10 - 5 + 20 - 4


@pytest.mark.java
def test_a_delete_of_whole_files_reads_only_the_leaves_it_touches(env):
    """The leaves a filter's aggregates rule out are made unreadable: Spark's metadata-only
    DELETE (the connector's `canDeleteWhere`, then the delete by filter) plans with the
    filter, as Java does, so it never opens them. A commit that read every live entry, as
    `canDeleteWhere` did, fails on them (shown by a row delta searching the leaves)."""
    spark, catalog = env
    t = _create(catalog, "db.pos4", 4)
    plan = t.scan().plan_arrow()
    by_leaf = dict(zip(plan.column("v4_leaf").to_pylist(), plan.column("file_path").to_pylist(), strict=True))
    assert len(by_leaf) == 4
    target = t.scan(row_filter="id >= 300").plan_arrow()
    assert target.num_rows == 1
    keep = target.column("v4_leaf")[0].as_py()
    for leaf in by_leaf:
        if leaf != keep:
            # same path, garbage content: not an Avro file any more
            t.io.delete(leaf)
            t.io.write_new(leaf, b"not a manifest" * 100)

    spark.sql(f"DELETE FROM {ICE}.db.pos4 WHERE id >= 300")
    t = catalog.load_table("db.pos4")
    assert t.current_snapshot().summary["deleted-data-files"] == "1"
    assert spark.sql(f"SELECT count(*) FROM {ICE}.db.pos4 WHERE id >= 300").collect()[0][0] == 0

    # a change that searches the leaves meets a broken one
    with pytest.raises(Exception, match="(?i)avro"):
        with t.transaction() as tx:
            tx.row_delta(remove_data_files=[by_leaf[keep]])
