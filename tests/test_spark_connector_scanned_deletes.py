"""The connector's row-level writers take each touched data file's deletes from what the
write's scan planned, as Java's Spark writers are handed the scan's rewritable deletes: the
executors writing deletion vectors for a merge-on-read ``DELETE``, ``UPDATE`` or ``MERGE``
read no manifest. The metadata the scan prunes (a v3 table's manifests of other partitions,
a v4 table's leaves that the filter's aggregates rule out) is made unreadable before the
commands run, so a writer that read every live manifest of the snapshot to find a data
file's DV fails on it; the rows must end as Java's same commands leave its twin."""

from __future__ import annotations

import pyarrow as pa
import pytest

from connector_env import twin_catalogs

JAVA = "sd_java"
ICE = "sd_ice"
MOR = {
    "write.delete.mode": "merge-on-read",
    "write.update.mode": "merge-on-read",
    "write.merge.mode": "merge-on-read",
}

pytestmark = pytest.mark.java

# each touches rows of the last batch (ids 300..399, p = 3) only, one data file; the second
# and later ones replace the DV the earlier ones wrote (merged with it)
STATEMENTS = [
    "DELETE FROM {} WHERE p = 3 AND id = 305",
    "DELETE FROM {} WHERE p = 3 AND id IN (306, 350)",
    "UPDATE {} SET v = concat(v, '!') WHERE p = 3 AND id % 10 = 7",
    "MERGE INTO {} t USING (SELECT id FROM range(340, 346)) s "
    "ON t.p = 3 AND t.id = s.id WHEN MATCHED AND s.id % 2 = 0 THEN DELETE "
    "WHEN MATCHED THEN UPDATE SET v = 'merged'",
]


def _data(k: int) -> pa.Table:
    ids = range(100 * k, 100 * k + 100)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "v": pa.array([f"v{i}" for i in ids]),
            "p": pa.array([k] * 100, pa.int32()),
        }
    )


@pytest.fixture(scope="module")
def env(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("spark-connector-scanned-deletes")
    catalog = twin_catalogs(spark, root, JAVA, ICE)
    return spark, catalog


def _create(catalog, name: str, version: int) -> list[str]:
    """Four appends, batch k in partition p = k (v3: partitioned by p, a manifest each; v4:
    a leaf each); returns the manifests or leaves holding batches 0..2, in order."""
    props = {"format-version": str(version), **MOR}
    spec = None
    if version == 4:
        props["commit.v4.root.max-file-entries"] = "0"
    else:
        spec = [("p", "identity")]
    t = catalog.create_table(name, _data(0).schema, partition_spec=spec, properties=props)
    held = []
    for k in range(4):
        t.append(_data(k))
        t = catalog.load_table(name)
        plan = t.scan(row_filter=f"p = {k}").plan_arrow()
        if version == 4:
            held.append(plan.column("v4_leaf")[0].as_py())
        else:
            before = set(held)
            manifests = set(t.inspect.manifests().column("path").to_pylist())
            (new,) = manifests - before - set(held)
            held.append(new)
    return held[:3]


def _break(catalog, name: str, paths: list[str]) -> dict[str, bytes]:
    """Makes ``paths`` unreadable; returns their bytes."""
    t = catalog.load_table(name)
    saved = {}
    for p in paths:
        saved[p] = t.io.read(p)
        # same path, garbage content: not an Avro file any more
        t.io.delete(p)
        t.io.write_new(p, b"not a manifest" * 100)
    return saved


def _restore(catalog, name: str, saved: dict[str, bytes]) -> None:
    t = catalog.load_table(name)
    for p, data in saved.items():
        t.io.delete(p)
        t.io.write_new(p, data)


def _rows(spark, table: str) -> list[tuple]:
    return sorted(tuple(r) for r in spark.sql(f"SELECT id, v FROM {table} WHERE p = 3").collect())


@pytest.mark.parametrize("version", [3, 4])
def test_row_level_writers_read_no_manifest_the_scan_pruned(env, version):
    spark, catalog = env
    ours, java = f"db.sd{version}", f"db.sd{version}_java"
    pruned = _create(catalog, ours, version)
    _create(catalog, java, 3)
    # the manifests of the other partitions (v3) or the leaves the filter rules out (v4) are
    # never planned: only a writer that reads every live manifest meets them
    saved = _break(catalog, ours, pruned)
    for n, statement in enumerate(STATEMENTS):
        if version == 4 and n == 1:
            # a v4 commit that replaces a DV checks that it is live by walking every leaf
            # (the executors do not): the rest runs on the restored tree
            _restore(catalog, ours, saved)
        spark.sql(statement.format(f"{ICE}.{ours}"))
        spark.sql(statement.format(f"{JAVA}.{java}"))
        assert _rows(spark, f"{ICE}.{ours}") == _rows(spark, f"{JAVA}.{java}"), statement
    t = catalog.load_table(ours)
    summary = t.current_snapshot().summary
    # one DV for the one data file, replacing the previous one (merged positions)
    assert summary["added-dvs"] == "1" and summary["removed-dvs"] == "1"
    deleted = {305, 306, 350, 340, 342, 344}
    assert [r[0] for r in _rows(spark, f"{ICE}.{ours}")] == [i for i in range(300, 400) if i not in deleted]
    if version == 3:
        # the broken metadata is what a full read meets
        with pytest.raises(Exception, match="(?i)avro|manifest"):
            spark.sql(f"SELECT count(*) FROM {ICE}.{ours}").collect()
