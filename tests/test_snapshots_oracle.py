"""Snapshot management and expiry against Java Iceberg 1.11, on SQLite catalogs shared with
Java's `JdbcCatalog`.

Ref operations: one table is registered twice (the same metadata file); icefloe applies a
sequence of operations to one copy, Java's `ManageSnapshots` the same to the other; Java then
loads both and reads the same refs (type, snapshot, retention fields), snapshots, current snapshot
and snapshot log.

Expiry: a table with history made by Java and icefloe (appends, an overwrite, a rewrite, a
branch with its own commit, a tag) is registered in a second catalog; icefloe expires it there,
the table's files are restored, and Java's `ExpireSnapshots` expires the original with the same
options. Both must delete exactly the same files (compared on disk, and with what icefloe
reports) and leave metadata Java reads identically.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pyarrow as pa
import pytest

import icefloe
from test_catalog_oracle import java_catalog, jident
from test_commit import data_files

pytestmark = pytest.mark.java

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False)])


def _catalogs(spark, tmp_path, name):
    db, wh = str(tmp_path / f"{name}.db"), (tmp_path / f"wh-{name}").as_uri()
    cat = icefloe.load_catalog(name, uri=f"sqlite:///{db}", warehouse=wh)
    cat.create_namespace("db")
    return cat, java_catalog(spark, name, db, wh)


def _java_state(jtable):
    """What Java reads of a table's snapshot history."""
    md = jtable.operations().refresh()
    refs = {}
    for name, r in dict(md.refs()).items():
        refs[name] = (
            "branch" if r.isBranch() else "tag",
            r.snapshotId(),
            r.minSnapshotsToKeep(),
            r.maxSnapshotAgeMs(),
            r.maxRefAgeMs(),
        )
    current = md.currentSnapshot()
    return {
        "refs": refs,
        "snapshots": sorted(s.snapshotId() for s in md.snapshots()),
        "parents": sorted((s.snapshotId(), s.parentId()) for s in md.snapshots()),
        "current": None if current is None else current.snapshotId(),
        "log": [e.snapshotId() for e in md.snapshotLog()],
    }


def _rows(tmp_path, *names):
    out = []
    for n in names:
        p = tmp_path / "data" / f"{n}.parquet"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"x")
        out.append({"path": p.as_uri(), "records": 1})
    return out


def _append(t, tmp_path, *names, branch=None):
    t.append_files(data_files(t, _rows(tmp_path, *names)), branch=branch)
    return t.metadata.snapshot_by_ref(branch or "main").snapshot_id


def test_ref_operations_read_by_java_as_javas_own(spark, tmp_path):
    cat, jcat = _catalogs(spark, tmp_path, "refs")
    t = cat.create_table("db.base", SCHEMA, format_version=2)
    s1 = _append(t, tmp_path, "a")
    time.sleep(0.01)
    s2 = _append(t, tmp_path, "b")
    time.sleep(0.01)
    s3 = _append(t, tmp_path, "c")
    staged = _append(t, tmp_path, "w", branch="audit")
    ours = cat.register_table("db.ours", t.metadata_location)
    cat.register_table("db.java", t.metadata_location)
    java = lambda: jcat.loadTable(jident(spark, "db.java"))  # noqa: E731
    ts2 = t.metadata.snapshot_by_id(s2).timestamp_ms

    steps = [
        (
            lambda ms: ms.create_tag(s1, "t1", max_ref_age_ms=86_400_000).create_branch(
                s2, "b", min_snapshots_to_keep=3, max_snapshot_age_ms=1000
            ),
            lambda m: (
                m.createTag("t1", s1)
                .setMaxRefAgeMs("t1", 86_400_000)
                .createBranch("b", s2)
                .setMinSnapshotsToKeep("b", 3)
                .setMaxSnapshotAgeMs("b", 1000)
            ),
        ),
        (lambda ms: ms.rollback_to(s1), lambda m: m.rollbackTo(s1)),
        (lambda ms: ms.set_current_snapshot(s3), lambda m: m.setCurrentSnapshot(s3)),
        (lambda ms: ms.rollback_to_timestamp(ts2 + 1), lambda m: m.rollbackToTime(ts2 + 1)),
        (lambda ms: ms.fast_forward("b", "audit"), lambda m: m.fastForwardBranch("b", "audit")),
        (
            lambda ms: ms.rename_branch("b", "b2").replace_tag("t1", s3).set_max_ref_age_ms("b2", 5_000_000),
            lambda m: m.renameBranch("b", "b2").replaceTag("t1", s3).setMaxRefAgeMs("b2", 5_000_000),
        ),
        (lambda ms: ms.replace_branch("b2", s1), lambda m: m.replaceBranch("b2", s1)),
        # the staged snapshot's parent is s3: a fast-forward
        (
            lambda ms: ms.set_current_snapshot(s3).cherry_pick(staged),
            lambda m: m.setCurrentSnapshot(s3).cherrypick(staged),
        ),
        (lambda ms: ms.remove_tag("t1").remove_branch("b2"), lambda m: m.removeTag("t1").removeBranch("b2")),
    ]
    for i, (ours_op, java_op) in enumerate(steps):
        ours_op(ours.manage_snapshots()).commit()
        java_op(java().manageSnapshots()).commit()
        assert _java_state(jcat.loadTable(jident(spark, "db.ours"))) == _java_state(java()), f"step {i}"
    assert ours.current_snapshot().snapshot_id == staged


def _files(*roots: Path) -> set[str]:
    """The files under the roots, without Hadoop's `.crc` checksum side files (Java's local
    file system deletes them with their file)."""
    return {str(p) for r in roots for p in r.rglob("*") if p.is_file() and not p.name.endswith(".crc")}


def _local(uri: str) -> str:
    return "/" + uri[len("file:") :].lstrip("/")


def _java_data_file(jvm, spec, uri):
    return (
        jvm.org.apache.iceberg.DataFiles.builder(spec)
        .withPath(uri)
        .withFormat("PARQUET")
        .withFileSizeInBytes(1)
        .withRecordCount(1)
        .build()
    )


def _reachable_cleanup(spark, expire):
    """Java's `RemoveSnapshots.withIncrementalCleanup(false)` (package-private: by reflection)."""
    gw = spark.sparkContext._gateway
    jvm = gw.jvm
    types = gw.new_array(jvm.java.lang.Class, 1)
    types[0] = jvm.java.lang.Boolean.TYPE
    method = expire.getClass().getDeclaredMethod("withIncrementalCleanup", types)
    method.setAccessible(True)
    args = gw.new_array(jvm.java.lang.Object, 1)
    args[0] = jvm.java.lang.Boolean.FALSE
    return method.invoke(expire, args)


def _java_delete_file(jvm, spec, uri):
    return (
        jvm.org.apache.iceberg.FileMetadata.deleteFileBuilder(spec)
        .ofPositionDeletes()
        .withPath(uri)
        .withFormat("PARQUET")
        .withFileSizeInBytes(1)
        .withRecordCount(1)
        .build()
    )


@pytest.mark.parametrize("retain_last", [1, 2])
@pytest.mark.parametrize("refs", [True, False], ids=["branch-and-tag", "main-only"])
def test_expiry_deletes_what_java_deletes(spark, tmp_path, retain_last, refs):
    """icefloe deletes what Java's reachable-file cleanup deletes (Java's choice whenever refs
    other than `main` exist; forced for the main-only case, where Java would otherwise clean up
    incrementally and leave the replaced delete file behind although nothing reaches it)."""
    cat, jcat = _catalogs(spark, tmp_path, "exp")
    jvm = spark._jvm
    t = cat.create_table("db.t", SCHEMA, format_version=2)
    jt = jcat.loadTable(jident(spark, "db.t"))
    spec = jt.spec()
    f = {
        r["path"].rsplit("/", 1)[1][0]: _java_data_file(jvm, spec, r["path"])
        for r in _rows(tmp_path, *"abcdefg")
    }
    jt.newFastAppend().appendFile(f["a"]).appendFile(f["b"]).commit()  # s1
    t.refresh()
    t.append_files(data_files(t, [{"path": f["c"].location(), "records": 1}]))  # s2 (icefloe)
    jt.refresh()
    jt.newOverwrite().deleteFile(f["a"]).addFile(f["d"]).commit()  # s3
    s3 = jt.currentSnapshot().snapshotId()
    jt.newRewrite().deleteFile(f["b"]).deleteFile(f["c"]).addFile(f["e"]).commit()  # s4
    s4 = jt.currentSnapshot().snapshotId()
    # br keeps s3's manifests (b, c live; a deleted) alive; the tag keeps the rewrite's
    if refs:
        jt.manageSnapshots().createBranch("br", s3).createTag("tg", s4).commit()
        jt.newFastAppend().appendFile(f["f"]).toBranch("br").commit()  # s5 on br
    # position deletes: d1 replaced by d2, so d1 is live only in snapshots that expire
    d1, d2 = (_java_delete_file(jvm, spec, r["path"]) for r in _rows(tmp_path, "x1", "x2"))
    jt.newRowDelta().addDeletes(d1).commit()
    jt.newRowDelta().removeDeletes(d1).addDeletes(d2).commit()
    jt.newFastAppend().appendFile(f["g"]).commit()  # head
    jt.refresh()
    assert {s.operation() for s in jt.snapshots()} == {"append", "overwrite", "replace", "delete"}
    # statistics files of the first snapshot (expires) and of the head (stays)
    first = min(jt.snapshots(), key=lambda s: s.sequenceNumber()).snapshotId()
    for sid, name in [(first, "stats-old.puffin"), (jt.currentSnapshot().snapshotId(), "stats-new.puffin")]:
        p = tmp_path / "data" / name
        p.write_bytes(b"x")
        stats = jvm.org.apache.iceberg.GenericStatisticsFile(sid, p.as_uri(), 1, 0, jvm.java.util.ArrayList())
        jt.updateStatistics().setStatistics(stats).commit()
    jt.refresh()
    older_than = int(time.time() * 1000) + 1
    location = jt.operations().current().metadataFileLocation()

    roots = [tmp_path / "wh-exp", tmp_path / "data"]
    backup = tmp_path / "backup"
    for r in roots:
        shutil.copytree(r, backup / r.name)
    before = _files(*roots)

    # icefloe, on the same metadata registered in a second catalog
    cat2, jcat2 = _catalogs(spark, tmp_path, "second")
    ours = cat2.register_table("db.t", location)
    # Java deletes files wherever they are (the data files here are outside the table's
    # location): compare with icefloe's explicit choice of the same
    result = (
        ours.expire_snapshots()
        .older_than(older_than)
        .retain_last(retain_last)
        .delete_outside_location(True)
        .commit()
    )
    ours_deleted = before - _files(*roots)
    assert {_local(p) for p in result.deleted_files()} == ours_deleted
    # the history really had something of each kind to lose
    assert result.data_files and result.delete_files and result.manifests and result.manifest_lists
    assert [Path(_local(p)).name for p in result.statistics_files] == ["stats-old.puffin"]

    # restore what icefloe deleted, then Java on the original
    for path in ours_deleted:
        rel = next(Path(path).relative_to(r) for r in roots if Path(path).is_relative_to(r))
        root = next(r for r in roots if Path(path).is_relative_to(r))
        shutil.copy2(backup / root.name / rel, path)
    assert before <= _files(*roots)
    _reachable_cleanup(
        spark, jt.expireSnapshots().expireOlderThan(older_than).retainLast(retain_last)
    ).commit()
    java_deleted = before - _files(*roots)

    assert sorted(ours_deleted) == sorted(java_deleted), (
        sorted(ours_deleted - java_deleted),
        sorted(java_deleted - ours_deleted),
    )
    ours_state = _java_state(jcat2.loadTable(jident(spark, "db.t")))
    assert ours_state == _java_state(jt)
    # what icefloe says it removed is what the table lost
    assert sorted(result.removed_snapshot_ids) == sorted(
        {s.snapshot_id for s in icefloe.Table.from_metadata(_local(location)).snapshots()}
        - set(ours_state["snapshots"])
    )
