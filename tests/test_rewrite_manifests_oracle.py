"""``Table.rewrite_manifests()`` against Java Iceberg 1.11's Spark action
``rewrite_manifests`` (``SparkActions.rewriteManifests``, what the procedure runs).

One table is written by icefloe and registered twice in a SQLite catalog shared with Java's
``JdbcCatalog``, so both engines start from the same metadata and the same files: icefloe
rewrites one copy, Java's action the other. Compared: which manifests each rewrites or
keeps (the snapshot summaries), the partitions of each new data manifest in order, the
entries' snapshot ids and sequence numbers, and what Java's ``planFiles()`` and Spark read
afterwards.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

import icefloe
from icefloe.executor.position_deletes import write_position_deletes
from test_catalog_oracle import jident
from test_row_delta_oracle import _JAVA_ENVIRONMENT, _java_deletes, _live, _spark_ids, env  # noqa: F401

pytestmark = pytest.mark.java

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("cat", pa.string())])


def _append(t, start, cats):
    ids = list(range(start, start + len(cats)))
    t.append(pa.table({"id": pa.array(ids, pa.int64()), "cat": cats}))


def _data_manifests(manifest_list):
    return [m for m in icefloe.read_manifest_list(manifest_list).to_pylist() if m["content"] == 0]


def _layout(t):
    """Per data manifest (spec id, [(partition, path, snapshot id, sequence numbers)]) with
    ties of one partition in path order (Spark orders only by partition)."""
    out = []
    for m in _data_manifests(t.current_snapshot().manifest_list):
        entries = [
            (
                tuple(sorted(e["partition"].items())),
                e["file_path"],
                e["snapshot_id"],
                e["sequence_number"],
                e["file_sequence_number"],
                e["status"],
            )
            for e in icefloe.read_manifest(m["manifest_path"], m).to_pylist()
        ]
        out.append((m["partition_spec_id"], sorted(entries)))
    return sorted(out)


def _summary(t):
    s = dict(t.current_snapshot().summary)
    return {k: v for k, v in s.items() if k not in _JAVA_ENVIRONMENT}


def test_rewrite_manifests_equals_javas_spark_action(env):
    spark, name, cat, jcat = env
    t = cat.create_table("db.t", SCHEMA, partition_spec=[("cat", "identity")], format_version=2)
    # 12 appends of one file in each of 4 partitions, in rotating order
    for i in range(12):
        cats = ["a", "b", "c", "d"][i % 4 :] + ["a", "b", "c", "d"][: i % 4]
        _append(t, i * 4, cats)
    t = cat.load_table("db.t")
    deletes, _ = write_position_deletes(t.metadata, {_live(t, 0)[0]["file_path"]: [0]})
    t.row_delta(add_delete_files=deletes)
    t = cat.load_table("db.t")
    total = sum(m["manifest_length"] for m in _data_manifests(t.current_snapshot().manifest_list))
    # two manifests' worth of bytes: Java's action asks Spark for 2 ranges of partitions
    t.set_properties({"commit.manifest.target-size-bytes": str(total // 2 + 1)})
    # spec 1 adds a bucket of id; two appends write with it
    with t.update_spec() as u:
        u.add_field("id", "bucket[2]")
    _append(t, 100, ["a", "b"])
    _append(t, 200, ["c", "d"])
    t = cat.load_table("db.t")
    twin = cat.register_table("db.twin", t.metadata_location)
    jtwin = jcat.loadTable(jident(spark, "db.twin"))
    before_ids = _spark_ids(spark, name)
    before_tasks = _java_deletes(jtwin)
    actions = spark._jvm.org.apache.iceberg.spark.actions.SparkActions.get(spark._jsparkSession)

    # the default spec (1): two small manifests merge into one
    t = t.rewrite_manifests()
    actions.rewriteManifests(jtwin).execute()
    twin = cat.load_table("db.twin")
    assert twin.current_snapshot().snapshot_id != t.metadata.current_snapshot_id
    assert _summary(t) == _summary(twin)
    assert (_summary(t)["manifests-created"], _summary(t)["manifests-replaced"]) == ("1", "2")
    assert _layout(t) == _layout(twin)

    # spec 0's 12 data manifests: 2 runs of 2 partitions; its delete manifest (one, small)
    # is left alone
    t = t.rewrite_manifests(spec_id=0)
    result = actions.rewriteManifests(jtwin).specId(0).execute()
    twin = cat.load_table("db.twin")
    assert _summary(t) == _summary(twin)
    s = _summary(t)
    assert (s["manifests-created"], s["manifests-replaced"], s["manifests-kept"], s["entries-processed"]) == (
        "2",
        "12",
        "2",
        "0",
    )
    assert len(list(result.addedManifests())) == 2
    assert _layout(t) == _layout(twin)
    partitions = [[e[0] for e in entries] for spec, entries in _layout(t) if spec == 0]
    assert [sorted(set(p)) for p in partitions] == [
        [(("cat", "a"),), (("cat", "b"),)],
        [(("cat", "c"),), (("cat", "d"),)],
    ]

    # nothing changed for readers; and with nothing to do (spec 1 is one small manifest
    # now), no commit, as in Java
    jt = jcat.loadTable(jident(spark, "db.t"))
    assert _java_deletes(jt) == before_tasks == _java_deletes(jtwin)
    assert _spark_ids(spark, name) == before_ids
    head = t.metadata.current_snapshot_id
    assert t.rewrite_manifests().metadata.current_snapshot_id == head
    jtwin.refresh()
    java_head = jtwin.currentSnapshot().snapshotId()
    actions.rewriteManifests(jtwin).execute()
    jtwin.refresh()
    assert jtwin.currentSnapshot().snapshotId() == java_head


def test_rewrite_manifests_settings_are_checked(env):
    _, _, cat, _ = env
    t = cat.create_table("db.t", SCHEMA, partition_spec=[("cat", "identity")], format_version=2)
    _append(t, 0, ["a"])
    _append(t, 1, ["b"])
    with pytest.raises(icefloe.errors.IcefloeError, match="spec"):
        t.rewrite_manifests(spec_id=5)
    with pytest.raises(icefloe.errors.IcefloeError, match="nope"):
        t.rewrite_manifests(sort_by=["nope"])
    with pytest.raises(ValueError, match="clustering by partition"):
        t.rewrite_manifests(cluster_by_partition=True, spec_id=0)
    t = t.rewrite_manifests(sort_by=["cat"])
    assert [[e[0] for e in entries] for _, entries in _layout(t)] == [[(("cat", "a"),), (("cat", "b"),)]]
    # one manifest that fits: nothing to do on main; a rewrite on a branch is committed there
    head = t.metadata.current_snapshot_id
    assert t.rewrite_manifests().metadata.current_snapshot_id == head
    t.manage_snapshots().create_branch(head, "dev").commit()
    t = cat.load_table("db.t")
    t.rewrite_manifests(branch="dev")
    t = cat.load_table("db.t")
    assert t.metadata.current_snapshot_id == head
    assert t.metadata.refs["dev"].snapshot_id != head
