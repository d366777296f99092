"""The shape of manifest lists (how many manifests, their content and file counts) after the
same sequence of commits by Java Iceberg 1.11 and by icefloe, on twin tables of one SQLite
catalog.

Java's merging producers (merge append, delete, overwrite, row delta) keep a manifest left
with only DELETED entries in the snapshot that deleted them and drop it in the next one
(``MergingSnapshotProducer.apply``); fast appends keep every manifest.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

import icefloe
from test_catalog_oracle import java_catalog, jident
from test_commit import data_files

pytestmark = pytest.mark.java

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("cat", pa.string())])


@pytest.fixture
def twins(spark, tmp_path):
    db, wh = str(tmp_path / "catalog.db"), (tmp_path / "wh").as_uri()
    cat = icefloe.load_catalog("shapes", uri=f"sqlite:///{db}", warehouse=wh)
    cat.create_namespace("db")
    return cat, java_catalog(spark, "shapes", db, wh)


def _shape(manifests):
    """(content, added, existing, deleted files) of each manifest, in manifest-list order."""
    return [
        (m["content"], m["added_files_count"], m["existing_files_count"], m["deleted_files_count"])
        for m in manifests
    ]


def _our_shape(table):
    return _shape(icefloe.read_manifest_list(table.current_snapshot().manifest_list).to_pylist())


def _java_shape(jtable):
    jtable.refresh()
    return _shape(
        [
            {
                "content": m.content().id(),
                "added_files_count": m.addedFilesCount(),
                "existing_files_count": m.existingFilesCount(),
                "deleted_files_count": m.deletedFilesCount(),
            }
            for m in jtable.currentSnapshot().allManifests(jtable.io())
        ]
    )


def _rows(names, cat="x", records=3):
    return [{"path": f"file:///d/{n}.parquet", "records": records, "partition": {"cat": cat}} for n in names]


def _delete_row(name, cat="x"):
    return {
        "content": 1,
        "file_path": f"file:///d/{name}-pos.parquet",
        "file_format": "PARQUET",
        "partition": {"cat": cat},
        "record_count": 1,
        "file_size_in_bytes": 100,
    }


def _delete_schema(t):
    s = icefloe._native.manifest_entries_schema(t.schema(), t.metadata.spec())
    for n in ("status", "snapshot_id", "sequence_number", "file_sequence_number"):
        s = s.remove(s.get_field_index(n))
    return s


class _Java:
    """The same operations through Java's table API."""

    def __init__(self, spark, jtable):
        self.jvm, self.t = spark._jvm, jtable
        self.ib = self.jvm.org.apache.iceberg

    def _data(self, row):
        return (
            self.ib.DataFiles.builder(self.t.spec())
            .withPath(row["path"])
            .withFormat("PARQUET")
            .withFileSizeInBytes(row["records"] * 10)
            .withRecordCount(row["records"])
            .withPartitionPath(f"cat={row['partition']['cat']}")
            .build()
        )

    def _delete(self, row):
        return (
            self.ib.FileMetadata.deleteFileBuilder(self.t.spec())
            .ofPositionDeletes()
            .withPath(row["file_path"])
            .withFormat("PARQUET")
            .withFileSizeInBytes(row["file_size_in_bytes"])
            .withRecordCount(row["record_count"])
            .withPartitionPath(f"cat={row['partition']['cat']}")
            .build()
        )

    def _live_delete(self, path):
        self.t.refresh()
        it = self.t.newScan().planFiles().iterator()
        while it.hasNext():
            for d in it.next().deletes():
                if d.location() == path:
                    return d
        raise AssertionError(f"Java sees no delete file {path}")

    def append(self, rows, merge=False):
        op = self.t.newAppend() if merge else self.t.newFastAppend()
        for r in rows:
            op = op.appendFile(self._data(r))
        op.commit()

    def delete(self, rows):
        op = self.t.newDelete()
        for r in rows:
            op = op.deleteFile(self._data(r))
        op.commit()

    def overwrite(self, removed, added):
        op = self.t.newOverwrite()
        for r in removed:
            op = op.deleteFile(self._data(r))
        for r in added:
            op = op.addFile(self._data(r))
        op.commit()

    def row_delta(self, add_deletes=(), remove_deletes=()):
        op = self.t.newRowDelta()
        for r in add_deletes:
            op = op.addDeletes(self._delete(r))
        for p in remove_deletes:
            op = op.removeDeletes(self._live_delete(p))
        op.commit()


@pytest.mark.parametrize("min_merge", ["100", "3"])
def test_manifests_without_live_files_dropped_as_java(spark, twins, min_merge):
    cat, jcat = twins
    props = {"commit.manifest.min-count-to-merge": min_merge}
    ours = cat.create_table(
        "db.ours", SCHEMA, partition_spec=[("cat", "identity")], format_version=2, properties=props
    )
    ib = spark._jvm.org.apache.iceberg
    schema = ib.SchemaParser.fromJson(ours.schema().to_json())
    spec = ib.PartitionSpecParser.fromJson(schema, ours.metadata.spec().to_json())
    jprops = spark._jvm.java.util.HashMap()
    jprops.put("format-version", "2")
    jprops.put("commit.manifest.min-count-to-merge", min_merge)
    java = _Java(spark, jcat.createTable(jident(spark, "db.java"), schema, spec, jprops))
    dschema = _delete_schema(ours)

    steps = [
        (
            "fast append a, b",
            lambda: ours.append_files(data_files(ours, _rows("ab"))),
            lambda: java.append(_rows("ab")),
        ),
        (
            "fast append c",
            lambda: ours.append_files(data_files(ours, _rows("c"))),
            lambda: java.append(_rows("c")),
        ),
        # a, b's manifest: only DELETED entries, written by this snapshot: kept
        (
            "delete a, b",
            lambda: ours.delete_files(["file:///d/a.parquet", "file:///d/b.parquet"]),
            lambda: java.delete(_rows("ab")),
        ),
        # ... and dropped by the next merging commit
        (
            "merge append d",
            lambda: ours.append_files(data_files(ours, _rows("d")), merge=True),
            lambda: java.append(_rows("d"), merge=True),
        ),
        (
            "fast append g",
            lambda: ours.append_files(data_files(ours, _rows("g"))),
            lambda: java.append(_rows("g")),
        ),
        (
            "overwrite c by e",
            lambda: ours.overwrite_files(["file:///d/c.parquet"], data_files(ours, _rows("e"))),
            lambda: java.overwrite(_rows("c"), _rows("e")),
        ),
        # a fast append keeps the DELETED-only manifest
        (
            "fast append h",
            lambda: ours.append_files(data_files(ours, _rows("h"))),
            lambda: java.append(_rows("h")),
        ),
        ("delete d", lambda: ours.delete_files(["file:///d/d.parquet"]), lambda: java.delete(_rows("d"))),
        (
            "row delta adds x",
            lambda: ours.row_delta(add_delete_files=pa.Table.from_pylist([_delete_row("x")], schema=dschema)),
            lambda: java.row_delta(add_deletes=[_delete_row("x")]),
        ),
        # x's delete manifest: only DELETED entries
        (
            "row delta replaces x by y",
            lambda: ours.row_delta(
                add_delete_files=pa.Table.from_pylist([_delete_row("y")], schema=dschema),
                remove_delete_files=["file:///d/x-pos.parquet"],
            ),
            lambda: java.row_delta(
                add_deletes=[_delete_row("y")], remove_deletes=["file:///d/x-pos.parquet"]
            ),
        ),
        (
            "row delta adds z",
            lambda: ours.row_delta(add_delete_files=pa.Table.from_pylist([_delete_row("z")], schema=dschema)),
            lambda: java.row_delta(add_deletes=[_delete_row("z")]),
        ),
        ("delete h", lambda: ours.delete_files(["file:///d/h.parquet"]), lambda: java.delete(_rows("h"))),
        (
            "merge append k",
            lambda: ours.append_files(data_files(ours, _rows("k")), merge=True),
            lambda: java.append(_rows("k"), merge=True),
        ),
    ]
    dead = {}
    for what, mine, theirs in steps:
        mine()
        theirs()
        ours = cat.load_table("db.ours")
        got, want = _our_shape(ours), _java_shape(java.t)
        assert got == want, what
        dead[what] = sum(1 for m in got if m[1] == 0 and m[2] == 0)
    # the history has DELETED-only manifests kept (by the deleting snapshot, by a fast append)
    # and dropped (by the next merging commit)
    assert dead["delete a, b"] == 1 and dead["merge append d"] == 0
    assert dead["fast append h"] == dead["overwrite c by e"]
    if min_merge == "100":  # nothing merged: the dead manifests stay visible until dropped
        assert dead["fast append h"] == 1 and dead["row delta replaces x by y"] == 1
        assert dead["row delta adds z"] == 0


@pytest.mark.parametrize("target", ["1", "3000"])
def test_new_manifests_roll_at_the_target_size_as_java(spark, twins, target):
    """``commit.manifest.target-size-bytes``: new data and delete manifests roll as Java's
    ``RollingManifestWriter`` rolls them (size checked every 250 entries).

    The targets are below the size of a manifest header (Java's is ~7 KB, icefloe's ~3 KB):
    between the two, icefloe's smaller manifests roll later than Java's."""
    cat, jcat = twins
    props = {"commit.manifest.target-size-bytes": target}
    ours = cat.create_table(
        "db.ours", SCHEMA, partition_spec=[("cat", "identity")], format_version=2, properties=props
    )
    ib = spark._jvm.org.apache.iceberg
    schema = ib.SchemaParser.fromJson(ours.schema().to_json())
    spec = ib.PartitionSpecParser.fromJson(schema, ours.metadata.spec().to_json())
    jprops = spark._jvm.java.util.HashMap()
    jprops.put("format-version", "2")
    jprops.put("commit.manifest.target-size-bytes", target)
    java = _Java(spark, jcat.createTable(jident(spark, "db.java"), schema, spec, jprops))

    files = [
        {"path": f"file:///d/part-{i:05d}-{'x' * 40}.parquet", "records": i + 1, "partition": {"cat": "x"}}
        for i in range(1300)
    ]
    ours.append_files(data_files(ours, files))
    java.append(files)
    got = _our_shape(cat.load_table("db.ours"))
    assert got == _java_shape(java.t)
    assert len(got) > 1

    deletes = [_delete_row(f"del-{i:04d}") for i in range(600)]
    ours.row_delta(add_delete_files=pa.Table.from_pylist(deletes, schema=_delete_schema(ours)))
    java.row_delta(add_deletes=deletes)
    got = _our_shape(cat.load_table("db.ours"))
    assert got == _java_shape(java.t)
    assert sum(1 for m in got if m[0] == 1) > 1
