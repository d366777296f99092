"""Row deltas (``tx.row_delta``, ``icefloe.executor.position_deletes.write_position_deletes``) against Java
Iceberg 1.11.

On a SQLite catalog shared with Java's ``JdbcCatalog`` and a Spark catalog: icefloe commits
DVs (v3), position delete files (v2) and equality deletes; Spark with Java Iceberg returns
exactly the surviving rows; Java's ``planFiles()`` attaches the same delete files icefloe's
manifests hold; the snapshot summary and operation equal those of Java's ``RowDelta.apply()``
of the same change on the same table; a DV Spark wrote is merged into icefloe's new DV.

Validation: on the same concurrent histories, Java's ``RowDelta`` (same options, ``apply()``,
which validates without committing) and icefloe's commit both pass or both fail with the
same kind of error.
"""

from __future__ import annotations

import re

import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
import pyarrow.parquet as pq
import pytest

import icefloe
import icefloe.executor.write
from icefloe import errors
from icefloe.executor.position_deletes import write_position_deletes
from test_catalog_oracle import java_catalog, jident, spark_catalog

pytestmark = pytest.mark.java

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("cat", pa.string())])
_JAVA_ENVIRONMENT = {"iceberg-version", "engine-name", "engine-version", "app-id", "app-name"}


@pytest.fixture
def env(spark, tmp_path):
    db, wh = str(tmp_path / "c.db"), (tmp_path / "wh").as_uri()
    name = spark_catalog(spark, db, wh)
    cat = icefloe.load_catalog(name, uri=f"sqlite:///{db}", warehouse=wh)
    cat.create_namespace("db")
    return spark, name, cat, java_catalog(spark, name, db, wh)


def _make(cat, version, props=None):
    t = cat.create_table(
        "db.t", SCHEMA, partition_spec=[("cat", "identity")], format_version=version, properties=props or {}
    )
    t.append(pa.table({"id": pa.array(range(20), pa.int64()), "cat": ["a"] * 10 + ["b"] * 10}))
    return cat.load_table("db.t")


def _live(t, content):
    """Live entries (as dicts) of ``content`` (0 data, 1 position deletes, 2 equality)."""
    out = []
    for m in icefloe.read_manifest_list(t.current_snapshot().manifest_list).to_pylist():
        for e in icefloe.read_manifest(m["manifest_path"], m).to_pylist():
            if e["status"] != 2 and e["content"] == content:
                out.append(e)
    return out


def _data_file(t, cat_value):
    (f,) = [e for e in _live(t, 0) if e["partition"]["cat"] == cat_value]
    return f


def _ids(path):
    return pq.read_table(path.removeprefix("file://"), columns=["id"])["id"].to_pylist()


def _spark_ids(spark, name):
    return sorted(r[0] for r in spark.sql(f"select id from {name}.db.t").collect())


def _summary(snapshot_summary):
    return {
        k: v for k, v in dict(snapshot_summary).items() if k not in _JAVA_ENVIRONMENT and k != "operation"
    }


def _java_deletes(jtable):
    """data file -> sorted (delete file, content offset) Java's planFiles attaches."""
    jtable.refresh()
    out = {}
    it = jtable.newScan().planFiles().iterator()
    while it.hasNext():
        task = it.next()
        out[task.file().location()] = sorted((d.location(), d.contentOffset()) for d in task.deletes())
    return out


def _our_deletes(t):
    """The same from icefloe's manifests: DVs and file-scoped deletes by their data file,
    partition-scoped deletes for every data file of the partition (with an older or equal
    sequence number, which all data files here have)."""
    out = {e["file_path"]: [] for e in _live(t, 0)}
    data = _live(t, 0)
    for d in _live(t, 1) + _live(t, 2):
        for f in data:
            applies = (
                d["referenced_data_file"] == f["file_path"]
                if d["referenced_data_file"]
                else d["partition"] == f["partition"]
            )
            if d["content"] == 2:
                applies = d["partition"] == f["partition"] and d["sequence_number"] > f["sequence_number"]
            if applies:
                out[f["file_path"]].append((d["file_path"], d["content_offset"]))
    return {k: sorted(v) for k, v in out.items()}


# -- Java objects for the same files ------------------------------------------------------------


def _jdelete(spark, jtable, row):
    jvm = spark._jvm
    b = jvm.org.apache.iceberg.FileMetadata.deleteFileBuilder(jtable.spec())
    if row["content"] == 2:
        ids = spark.sparkContext._gateway.new_array(jvm.int, len(row["equality_ids"]))
        for i, v in enumerate(row["equality_ids"]):
            ids[i] = v
        b = b.ofEqualityDeletes(ids)
    else:
        b = b.ofPositionDeletes()
    b = (
        b.withPath(row["file_path"])
        .withFormat(row["file_format"])
        .withFileSizeInBytes(row["file_size_in_bytes"])
        .withRecordCount(row["record_count"])
        .withPartitionPath(f"cat={row['partition']['cat']}")
    )
    if row.get("referenced_data_file"):
        b = b.withReferencedDataFile(row["referenced_data_file"])
    if row.get("content_offset") is not None:
        b = b.withContentOffset(row["content_offset"]).withContentSizeInBytes(row["content_size_in_bytes"])
    return b.build()


def _jdata(jvm, jtable, row):
    return (
        jvm.org.apache.iceberg.DataFiles.builder(jtable.spec())
        .withPath(row["file_path"])
        .withFormat("PARQUET")
        .withFileSizeInBytes(row["file_size_in_bytes"])
        .withRecordCount(row["record_count"])
        .withPartitionPath(f"cat={row['partition']['cat']}")
        .build()
    )


def _java_live_delete(jtable, path, offset):
    jtable.refresh()
    it = jtable.newScan().planFiles().iterator()
    while it.hasNext():
        for d in it.next().deletes():
            if d.location() == path and (offset is None or d.contentOffset() == offset):
                return d
    raise AssertionError(f"Java sees no delete file {path}@{offset}")


def _java_live_data(jtable, path):
    jtable.refresh()
    it = jtable.newScan().planFiles().iterator()
    while it.hasNext():
        f = it.next().file()
        if f.location() == path:
            return f
    raise AssertionError(f"Java sees no data file {path}")


def _java_row_delta(
    spark,
    jtable,
    *,
    add_data=(),
    add_deletes=(),
    remove_deletes=(),
    remove_data=(),
    from_snapshot=None,
    filter_cat=None,
    exist=(),
    validate_deleted=False,
    isolation=None,
):
    """Java's RowDelta of the same change, applied (validated, not committed)."""
    jvm = spark._jvm
    jtable.refresh()
    rd = jtable.newRowDelta()
    for r in add_data:
        rd = rd.addRows(_jdata(jvm, jtable, r))
    for r in add_deletes:
        rd = rd.addDeletes(_jdelete(spark, jtable, r))
    for r in remove_deletes:
        rd = rd.removeDeletes(_java_live_delete(jtable, r["file_path"], r.get("content_offset")))
    for p in remove_data:
        rd = rd.removeRows(_java_live_data(jtable, p))
    if from_snapshot is not None:
        rd = rd.validateFromSnapshot(from_snapshot)
    if filter_cat is not None:
        rd = rd.conflictDetectionFilter(
            jvm.org.apache.iceberg.expressions.Expressions.equal("cat", filter_cat)
        )
    if exist:
        lst = jvm.java.util.ArrayList()
        for p in exist:
            lst.add(p)
        rd = rd.validateDataFilesExist(lst)
    if validate_deleted:
        rd = rd.validateDeletedFiles()
    if isolation in ("snapshot", "serializable"):
        rd = rd.validateNoConflictingDeleteFiles()
    if isolation == "serializable":
        rd = rd.validateNoConflictingDataFiles()
    return rd.apply()


def _rows(table):
    return table.to_pylist() if isinstance(table, pa.Table) else list(table)


# -- v3: deletion vectors -----------------------------------------------------------------------


def test_v3_dvs_read_by_spark_and_java_and_replaced(env):
    spark, name, cat, jcat = env
    t = _make(cat, 3, {"write.delete.mode": "merge-on-read", "write.update.mode": "merge-on-read"})
    a, b = _data_file(t, "a"), _data_file(t, "b")
    ids_a, ids_b = _ids(a["file_path"]), _ids(b["file_path"])
    jtable = jcat.loadTable(jident(spark, "db.t"))

    added, removed = write_position_deletes(t.metadata, {a["file_path"]: [0, 3], b["file_path"]: [1]})
    assert removed.num_rows == 0 and added.num_rows == 2
    java = _java_row_delta(spark, jtable, add_deletes=_rows(added))
    t.row_delta(add_delete_files=added)
    snap = t.current_snapshot()
    assert snap.operation == java.operation() == "delete"
    assert _summary(snap.summary) == _summary(java.summary())
    assert t.metadata.next_row_id == 20 and snap.added_rows == java.addedRows()
    gone = {ids_a[0], ids_a[3], ids_b[1]}
    assert _spark_ids(spark, name) == sorted(set(range(20)) - gone)
    assert _java_deletes(jtable) == _our_deletes(t)

    # a's DV replaced by one merged with it (remove old + add new in one snapshot)
    added, removed = write_position_deletes(t.metadata, {a["file_path"]: [5]})
    assert [r["content_offset"] for r in _rows(removed)] == [_our_deletes(t)[a["file_path"]][0][1]]
    assert _rows(added)[0]["record_count"] == 3
    start = t.current_snapshot().snapshot_id
    java = _java_row_delta(
        spark, jtable, add_deletes=_rows(added), remove_deletes=_rows(removed), from_snapshot=start
    )
    t.row_delta(
        add_delete_files=added,
        remove_delete_files=removed,
        validate_from_snapshot=start,
        validate_data_files_exist=[a["file_path"]],
        validate_deleted_files=True,
        isolation_level="serializable",
    )
    snap = t.current_snapshot()
    assert snap.operation == java.operation()
    assert _summary(snap.summary) == _summary(java.summary())
    gone |= {ids_a[5]}
    assert _spark_ids(spark, name) == sorted(set(range(20)) - gone)
    assert _java_deletes(jtable) == _our_deletes(t)
    assert all(len(v) == 1 for v in _java_deletes(jtable).values())

    # Spark (Java) deletes a row of b, writing a DV merged with icefloe's; icefloe merges it again
    spark.sql(f"delete from {name}.db.t where id = {ids_b[7]}")
    gone |= {ids_b[7]}
    t = cat.load_table("db.t")
    added, removed = write_position_deletes(t.metadata, {b["file_path"]: [9]})
    assert _rows(added)[0]["record_count"] == 3  # 1 (icefloe) + 7 (Spark) + 9
    t.row_delta(
        add_delete_files=added,
        remove_delete_files=removed,
        validate_from_snapshot=t.current_snapshot().snapshot_id,
    )
    gone |= {ids_b[9]}
    assert _spark_ids(spark, name) == sorted(set(range(20)) - gone)
    assert _java_deletes(jtable) == _our_deletes(t)

    # a v3 table takes no position delete files (Java refuses them too)
    bad = dict(
        _rows(added)[0],
        file_format="PARQUET",
        file_path=t.metadata.location + "/data/x.parquet",
        content_offset=None,
        content_size_in_bytes=None,
    )
    with pytest.raises(Exception) as java_error:
        _java_row_delta(spark, jtable, add_deletes=[bad])
    assert _java_kind(java_error.value) == "IllegalArgumentException"
    with pytest.raises(errors.InvalidArgumentError):
        t.row_delta(add_delete_files=pa.Table.from_pylist([bad], schema=added.schema))


def test_two_new_dvs_for_one_data_file_merged_as_java(env):
    """Two new DVs for one data file in one row delta become one DV, as Java 1.11 merges
    them (``DVUtil.mergeAndWriteDVsIfRequired``); a data file with one new DV keeps it."""
    spark, name, cat, jcat = env
    t = _make(cat, 3)
    a, b = _data_file(t, "a"), _data_file(t, "b")
    ids_a, ids_b = _ids(a["file_path"]), _ids(b["file_path"])
    jtable = jcat.loadTable(jident(spark, "db.t"))
    first, _ = write_position_deletes(t.metadata, {a["file_path"]: [0, 3], b["file_path"]: [2]})
    second, _ = write_position_deletes(t.metadata, {a["file_path"]: [3, 8]})
    both = pa.concat_tables([first, second])
    java = _java_row_delta(spark, jtable, add_deletes=_rows(both))
    it = java.addedDeleteFiles(jtable.io()).iterator()
    java_dvs = {}
    while it.hasNext():
        d = it.next()
        java_dvs[d.referencedDataFile()] = (d.location(), d.recordCount(), d.fileSizeInBytes())
    t.row_delta(add_delete_files=both)
    t = cat.load_table("db.t")
    snap = t.current_snapshot()
    ours = {e["referenced_data_file"]: e for e in _live(t, 1)}
    assert sorted(ours) == sorted(java_dvs) == sorted([a["file_path"], b["file_path"]])
    for target, (_, count, _) in java_dvs.items():
        assert ours[target]["record_count"] == count
    assert ours[b["file_path"]]["file_path"] == _rows(first)[0]["file_path"] == java_dvs[b["file_path"]][0]
    merged = ours[a["file_path"]]
    assert merged["file_path"].endswith(f"/data/merged-dvs-{snap.snapshot_id}-1.puffin")
    # the Puffin files differ in their writer's footer, not in the DV blob (DV sizes in the
    # summary are blob sizes)
    assert merged["file_size_in_bytes"] == len(open(merged["file_path"].removeprefix("file://"), "rb").read())
    assert snap.operation == java.operation() == "delete"
    assert _summary(snap.summary) == _summary(java.summary())
    gone = {ids_a[0], ids_a[3], ids_a[8], ids_b[2]}
    assert _spark_ids(spark, name) == sorted(set(range(20)) - gone)
    assert _java_deletes(jtable) == _our_deletes(t)
    assert all(len(v) == 1 for v in _java_deletes(jtable).values())


# -- v2: position delete files and equality deletes ---------------------------------------------


def test_v2_position_and_equality_deletes(env, tmp_path):
    spark, name, cat, jcat = env
    t = _make(cat, 2)
    a, _b = _data_file(t, "a"), _data_file(t, "b")
    ids_a = _ids(a["file_path"])
    jtable = jcat.loadTable(jident(spark, "db.t"))

    added, removed = write_position_deletes(t.metadata, {a["file_path"]: [2, 4, 6]})
    assert removed.num_rows == 0
    java = _java_row_delta(spark, jtable, add_deletes=_rows(added))
    t.row_delta(add_delete_files=added)
    assert t.current_snapshot().operation == java.operation()
    assert _summary(t.current_snapshot().summary) == _summary(java.summary())
    gone = {ids_a[2], ids_a[4], ids_a[6]}
    assert _spark_ids(spark, name) == sorted(set(range(20)) - gone)
    assert _java_deletes(jtable) == _our_deletes(t)
    # the bounds Java's position delete writer keeps, file_path and pos in full (PyIceberg
    # matches delete files to data files by them), as Java's metadata table shows them
    (bounds,) = spark.sql(f"select lower_bounds, upper_bounds from {name}.db.t.delete_files").collect()
    path_id, pos_id = (
        icefloe._native.RESERVED_FIELD_IDS["file_path"],
        icefloe._native.RESERVED_FIELD_IDS["pos"],
    )
    path = a["file_path"].encode()
    assert bounds.lower_bounds == {path_id: path, pos_id: (2).to_bytes(8, "little")}
    assert bounds.upper_bounds == {path_id: path, pos_id: (6).to_bytes(8, "little")}

    # equality deletes on id in partition b, with a new data file in one row delta
    eq_path = t.metadata.location + "/data/eq-b.parquet"
    eq = pa.table(
        [pa.array([12, 13], pa.int64())],
        schema=pa.schema([pa.field("id", pa.int64(), nullable=False, metadata={"PARQUET:field_id": "1"})]),
    )
    pq.write_table(eq, eq_path.removeprefix("file://"))
    schema = icefloe._native.manifest_entries_schema(t.schema(), t.metadata.spec())
    for n in ("status", "snapshot_id", "sequence_number", "file_sequence_number"):
        schema = schema.remove(schema.get_field_index(n))
    size = len(open(eq_path.removeprefix("file://"), "rb").read())
    eq_row = {
        "content": 2,
        "file_path": eq_path,
        "file_format": "PARQUET",
        "partition": {"cat": "b"},
        "record_count": 2,
        "file_size_in_bytes": size,
        "equality_ids": [1],
    }
    new_data = icefloe.executor.write.write_data_files(
        t.metadata, pa.table({"id": pa.array([12, 40], pa.int64()), "cat": ["b", "b"]})
    )
    java = _java_row_delta(spark, jtable, add_deletes=[eq_row], add_data=new_data.to_pylist())
    t.row_delta(add_delete_files=pa.Table.from_pylist([eq_row], schema=schema), add_data_files=new_data)
    snap = t.current_snapshot()
    assert snap.operation == java.operation() == "overwrite"
    assert _summary(snap.summary) == _summary(java.summary())
    # 12 and 13 gone from the old file; the new 12 is newer than the equality delete
    assert _spark_ids(spark, name) == sorted((set(range(20)) - gone - {12, 13}) | {12, 40})
    assert _java_deletes(jtable) == _our_deletes(t)

    # a v2 table takes no DVs
    dv = dict(_rows(added)[0], file_format="PUFFIN", content_offset=4, content_size_in_bytes=10)
    with pytest.raises(Exception) as java_error:
        _java_row_delta(spark, jtable, add_deletes=[dv])
    assert _java_kind(java_error.value) == "IllegalArgumentException"
    with pytest.raises(errors.InvalidArgumentError):
        t.row_delta(add_delete_files=pa.Table.from_pylist([dv], schema=added.schema))


def test_position_deletes_fold_into_the_first_dv_after_an_upgrade_to_v3(env):
    """A v2 table with a position delete file, upgraded to v3 by icefloe: the first DV for
    that data file also holds the positions of the position delete file scoped to it, which
    the same row delta removes (v3 writers must merge them); Java sees the upgrade, its
    ``RowDelta`` of the same change gives the same summary, Spark reads the same rows and
    Java attaches the DV alone."""
    spark, name, cat, jcat = env
    t = _make(cat, 2)
    a = _data_file(t, "a")
    ids_a = _ids(a["file_path"])
    jtable = jcat.loadTable(jident(spark, "db.t"))
    added, _ = write_position_deletes(t.metadata, {a["file_path"]: [1, 3]})
    t.row_delta(add_delete_files=added)
    (pos_file,) = _rows(added)
    assert pos_file["file_format"] == "PARQUET" and pos_file["referenced_data_file"] == a["file_path"]

    with t.transaction() as tx:
        tx.upgrade_table_version(3)
    t = cat.load_table("db.t")
    assert t.metadata.format_version == 3 and "format-version" not in t.metadata.properties
    jtable.refresh()
    assert jtable.operations().current().formatVersion() == 3
    with pytest.raises(errors.IcefloeError, match="downgrade"):
        with t.transaction() as tx:
            tx.upgrade_table_version(2)

    added, removed = write_position_deletes(t.metadata, {a["file_path"]: [5]})
    assert [r["file_path"] for r in _rows(removed)] == [pos_file["file_path"]]
    (dv,) = _rows(added)
    assert dv["file_format"] == "PUFFIN" and dv["record_count"] == 3
    start = t.current_snapshot().snapshot_id
    java = _java_row_delta(
        spark, jtable, add_deletes=[dv], remove_deletes=_rows(removed), from_snapshot=start
    )
    t.row_delta(add_delete_files=added, remove_delete_files=removed, validate_from_snapshot=start)
    snap = t.current_snapshot()
    assert snap.operation == java.operation() == "delete"
    assert _summary(snap.summary) == _summary(java.summary())
    assert _spark_ids(spark, name) == sorted(set(range(20)) - {ids_a[1], ids_a[3], ids_a[5]})
    assert _java_deletes(jtable) == _our_deletes(t)
    assert _java_deletes(jtable)[a["file_path"]] == [(dv["file_path"], dv["content_offset"])]


# -- validation on concurrent histories ---------------------------------------------------------


def _schema(t):
    s = icefloe._native.manifest_entries_schema(t.schema(), t.metadata.spec())
    for n in ("status", "snapshot_id", "sequence_number", "file_sequence_number"):
        s = s.remove(s.get_field_index(n))
    return s


def _dv(t, data, tag, offset=4):
    """A DV row for ``data`` (validation never reads the blob)."""
    return {
        "content": 1,
        "file_path": f"{t.metadata.location}/data/{tag}.puffin",
        "file_format": "PUFFIN",
        "partition": data["partition"],
        "record_count": 1,
        "file_size_in_bytes": 100,
        "referenced_data_file": data["file_path"],
        "content_offset": offset,
        "content_size_in_bytes": 40,
    }


def _pos(t, data, tag):
    return {
        "content": 1,
        "file_path": f"{t.metadata.location}/data/{tag}-pos.parquet",
        "file_format": "PARQUET",
        "partition": data["partition"],
        "record_count": 1,
        "file_size_in_bytes": 100,
    }


def _eq(t, cat_value, tag):
    return {
        "content": 2,
        "file_path": f"{t.metadata.location}/data/{tag}-eq.parquet",
        "file_format": "PARQUET",
        "partition": {"cat": cat_value},
        "record_count": 1,
        "file_size_in_bytes": 100,
        "equality_ids": [1],
    }


def _new_data(cat_value, tag):
    return {
        "content": 0,
        "file_path": f"file:///nowhere/{tag}.parquet",
        "file_format": "PARQUET",
        "partition": {"cat": cat_value},
        "record_count": 1,
        "file_size_in_bytes": 10,
    }


# each case: (format version, concurrent change, the row delta); the row delta is planned on
# the snapshot before the concurrent change ("start") unless from_start is False
CASES = {
    "dv-same-file": (
        3,
        lambda t, a, b: t.row_delta(add_delete_files=_tbl(t, [_dv(t, a, "c1")])),
        dict(deletes=lambda t, a, b: [_dv(t, a, "mine")]),
    ),
    "dv-other-file-snapshot": (
        3,
        lambda t, a, b: t.row_delta(add_delete_files=_tbl(t, [_dv(t, b, "c1")])),
        dict(deletes=lambda t, a, b: [_dv(t, a, "mine")], isolation="snapshot"),
    ),
    "dv-other-file-filtered": (
        3,
        lambda t, a, b: t.row_delta(add_delete_files=_tbl(t, [_dv(t, b, "c1")])),
        dict(deletes=lambda t, a, b: [_dv(t, a, "mine")], isolation="snapshot", filter_cat="a"),
    ),
    "append-serializable-same": (
        3,
        lambda t, a, b: t.append_files(_tbl(t, [_new_data("a", "x")])),
        dict(deletes=lambda t, a, b: [_dv(t, a, "mine")], isolation="serializable", filter_cat="a"),
    ),
    "append-serializable-other": (
        3,
        lambda t, a, b: t.append_files(_tbl(t, [_new_data("b", "x")])),
        dict(deletes=lambda t, a, b: [_dv(t, a, "mine")], isolation="serializable", filter_cat="a"),
    ),
    "append-snapshot": (
        3,
        lambda t, a, b: t.append_files(_tbl(t, [_new_data("a", "x")])),
        dict(deletes=lambda t, a, b: [_dv(t, a, "mine")], isolation="snapshot"),
    ),
    "referenced-deleted": (
        3,
        lambda t, a, b: t.delete_files([a["file_path"]]),
        dict(deletes=lambda t, a, b: [_dv(t, a, "mine")], exist=True),
    ),
    "referenced-deleted-validated": (
        3,
        lambda t, a, b: t.delete_files([a["file_path"]]),
        dict(deletes=lambda t, a, b: [_dv(t, a, "mine")], exist=True, validate_deleted=True),
    ),
    "referenced-overwritten": (
        3,
        lambda t, a, b: t.overwrite_files([a["file_path"]], _tbl(t, [_new_data("a", "x")])),
        dict(deletes=lambda t, a, b: [_dv(t, a, "mine")], exist=True),
    ),
    "removed-data-new-dv": (
        3,
        lambda t, a, b: t.row_delta(add_delete_files=_tbl(t, [_dv(t, a, "c1")])),
        dict(
            remove_data=True, data=lambda t, a, b: [_new_data("a", "y")], isolation="snapshot", filter_cat="a"
        ),
    ),
    "no-start-old-dv": (
        3,
        lambda t, a, b: t.row_delta(add_delete_files=_tbl(t, [_dv(t, b, "c1")])),
        dict(deletes=lambda t, a, b: [_dv(t, b, "mine", offset=8)], from_start=False),
    ),
    "v2-pos-partition-conflict": (
        2,
        lambda t, a, b: t.row_delta(add_delete_files=_tbl(t, [_pos(t, a, "c1")])),
        dict(deletes=lambda t, a, b: [_eq(t, "a", "mine")], isolation="snapshot", filter_cat="a"),
    ),
    "v2-pos-other-partition": (
        2,
        lambda t, a, b: t.row_delta(add_delete_files=_tbl(t, [_pos(t, b, "c1")])),
        dict(deletes=lambda t, a, b: [_eq(t, "a", "mine")], isolation="snapshot", filter_cat="a"),
    ),
    "v2-eq-serializable-no-filter": (
        2,
        lambda t, a, b: t.row_delta(add_delete_files=_tbl(t, [_eq(t, "b", "c1")])),
        dict(deletes=lambda t, a, b: [_pos(t, a, "mine")], isolation="serializable"),
    ),
    "v2-nothing-checked": (
        2,
        lambda t, a, b: t.row_delta(add_delete_files=_tbl(t, [_eq(t, "a", "c1")])),
        dict(deletes=lambda t, a, b: [_pos(t, a, "mine")]),
    ),
}


def _tbl(t, rows):
    return pa.Table.from_pylist(rows, schema=_schema(t))


def _java_kind(e):
    """ValidationException or IllegalArgumentException (PySpark converts the latter)."""
    text = f"{type(e).__name__} {e}"
    for kind in ("ValidationException", "IllegalArgumentException"):
        if kind in text:
            return kind
    raise e


def _outcome_java(fn):
    try:
        fn()
        return "ok"
    except Exception as e:  # noqa: BLE001  (py4j wraps Java's exception)
        return _java_kind(e)


def _outcome_ours(fn):
    try:
        fn()
        return "ok"
    except errors.ValidationError:
        return "ValidationException"
    except errors.InvalidArgumentError:
        return "IllegalArgumentException"


@pytest.mark.parametrize("case", sorted(CASES))
def test_validation_outcomes_equal_javas(env, case):
    spark, name, cat, jcat = env
    version, concurrent, delta = CASES[case]
    t = _make(cat, version)
    a, b = _data_file(t, "a"), _data_file(t, "b")
    if case == "no-start-old-dv":
        concurrent(t, a, b)
        t = cat.load_table("db.t")
        start = None
    else:
        start = t.current_snapshot().snapshot_id
        concurrent(cat.load_table("db.t"), a, b)
    t = cat.load_table("db.t")
    jtable = jcat.loadTable(jident(spark, "db.t"))
    deletes = delta.get("deletes", lambda *_: [])(t, a, b)
    data = delta.get("data", lambda *_: [])(t, a, b)
    remove_data = [a["file_path"]] if delta.get("remove_data") else []
    exist = [a["file_path"]] if delta.get("exist") else []
    java = _outcome_java(
        lambda: _java_row_delta(
            spark,
            jtable,
            add_data=data,
            add_deletes=deletes,
            remove_data=remove_data,
            from_snapshot=start,
            filter_cat=delta.get("filter_cat"),
            exist=exist,
            validate_deleted=delta.get("validate_deleted", False),
            isolation=delta.get("isolation"),
        )
    )
    filt = None if delta.get("filter_cat") is None else f"cat = '{delta['filter_cat']}'"
    ours = _outcome_ours(
        lambda: t.row_delta(
            add_data_files=_tbl(t, data) if data else (),
            add_delete_files=_tbl(t, deletes) if deletes else (),
            remove_data_files=remove_data,
            validate_from_snapshot=start,
            conflict_detection_filter=filt,
            validate_data_files_exist=exist,
            validate_deleted_files=delta.get("validate_deleted", False),
            isolation_level=delta.get("isolation"),
        )
    )
    assert ours == java


# -- delete and overwrite by row filter ---------------------------------------------------------


def _jexpr(jvm, op, column, value):
    return getattr(jvm.org.apache.iceberg.expressions.Expressions, op)(column, value)


def test_delete_where_and_overwrite_where_match_java(env):
    spark, name, cat, jcat = env
    jvm = spark._jvm
    t = _make(cat, 2)
    a = _data_file(t, "a")
    added, _ = write_position_deletes(t.metadata, {a["file_path"]: [0]})
    t.row_delta(add_delete_files=added)
    ids_a = _ids(a["file_path"])
    jtable = jcat.loadTable(jident(spark, "db.t"))

    # id >= 10: b's rows all match by its metrics; a's cannot match
    java = jtable.newDelete().deleteFromRowFilter(_jexpr(jvm, "greaterThanOrEqual", "id", 10)).apply()
    t.delete_where("id >= 10")
    snap = t.current_snapshot()
    assert snap.operation == java.operation() == "delete"
    assert _summary(snap.summary) == _summary(java.summary())
    assert _spark_ids(spark, name) == sorted(set(range(10)) - {ids_a[0]})

    # id > 3 matches some rows of a only: both refuse
    with pytest.raises(Exception) as java_error:
        jtable.refresh()
        jtable.newDelete().deleteFromRowFilter(_jexpr(jvm, "greaterThan", "id", 3)).apply()
    assert _java_kind(java_error.value) == "ValidationException"
    with pytest.raises(errors.ValidationError):
        t.delete_where("id > 3")

    # overwrite cat = 'a' (its position deletes go with it) with new rows of cat a
    files = icefloe.executor.write.write_data_files(
        t.metadata, pa.table({"id": pa.array([100, 101], pa.int64()), "cat": ["a", "a"]})
    )
    jtable.refresh()
    ow = jtable.newOverwrite().overwriteByRowFilter(_jexpr(jvm, "equal", "cat", "a"))
    for r in files.to_pylist():
        ow = ow.addFile(_jdata(jvm, jtable, r))
    java = ow.validateAddedFilesMatchOverwriteFilter().apply()
    t.overwrite_where("cat = 'a'", files)
    snap = t.current_snapshot()
    assert snap.operation == java.operation() == "overwrite"
    assert _summary(snap.summary) == _summary(java.summary())
    assert _spark_ids(spark, name) == [100, 101]

    # rows that do not match the overwrite filter are refused by both
    other = icefloe.executor.write.write_data_files(
        t.metadata, pa.table({"id": pa.array([7], pa.int64()), "cat": ["z"]})
    )
    jtable.refresh()
    with pytest.raises(Exception) as java_error:
        ow = jtable.newOverwrite().overwriteByRowFilter(_jexpr(jvm, "equal", "cat", "a"))
        ow.addFile(_jdata(jvm, jtable, other.to_pylist()[0])).validateAddedFilesMatchOverwriteFilter().apply()
    assert _java_kind(java_error.value) == "ValidationException"
    with pytest.raises(errors.ValidationError):
        t.overwrite(pa.table({"id": pa.array([7], pa.int64()), "cat": ["z"]}), "cat = 'a'")
    # table.overwrite writes and overwrites in one go
    t.overwrite(pa.table({"id": pa.array([5], pa.int64()), "cat": ["a"]}), "cat = 'a'")
    assert _spark_ids(spark, name) == [5]


# -- rewrite files ------------------------------------------------------------------------------


def _java_rewrite(spark, jtable, delete_paths, new_rows, seq, start):
    jtable.refresh()
    rw = jtable.newRewrite().validateFromSnapshot(start).dataSequenceNumber(seq)
    for p in delete_paths:
        rw = rw.deleteFile(_java_live_data(jtable, p))
    for r in new_rows:
        rw = rw.addFile(_jdata(spark._jvm, jtable, r))
    return rw.apply()


def test_rewrite_files_matches_java(env):
    spark, name, cat, jcat = env
    t = _make(cat, 2)
    t.append(pa.table({"id": pa.array([20, 21], pa.int64()), "cat": ["a", "a"]}))
    t = cat.load_table("db.t")
    paths = sorted(e["file_path"] for e in _live(t, 0) if e["partition"]["cat"] == "a")
    assert len(paths) == 2
    start = t.current_snapshot().snapshot_id
    seq = t.current_snapshot().sequence_number
    compacted = icefloe.executor.write.write_data_files(
        t.metadata, pa.concat_tables([pq.read_table(p.removeprefix("file://")) for p in paths]).cast(SCHEMA)
    )
    jtable = jcat.loadTable(jident(spark, "db.t"))

    # a concurrent position delete of a replaced file: both refuse
    pos, _ = write_position_deletes(t.metadata, {paths[0]: [1]})
    gone = _ids(paths[0])[1]
    cat.load_table("db.t").row_delta(add_delete_files=pos)
    t = cat.load_table("db.t")
    assert (
        _outcome_java(lambda: _java_rewrite(spark, jtable, paths, compacted.to_pylist(), seq, start))
        == _outcome_ours(
            lambda: t.rewrite_files(paths, compacted, data_sequence_number=seq, validate_from_snapshot=start)
        )
        == "ValidationException"
    )

    # a concurrent equality delete is no conflict when the sequence number is kept (it still
    # applies to the compacted rows); the compaction leaves out the row deleted by position
    here = t.current_snapshot().snapshot_id
    eq_path = t.metadata.location + "/data/eq-a.parquet"
    pq.write_table(
        pa.table(
            [pa.array([3], pa.int64())],
            schema=pa.schema(
                [pa.field("id", pa.int64(), nullable=False, metadata={"PARQUET:field_id": "1"})]
            ),
        ),
        eq_path.removeprefix("file://"),
    )
    eq_row = {
        "content": 2,
        "file_path": eq_path,
        "file_format": "PARQUET",
        "partition": {"cat": "a"},
        "record_count": 1,
        "file_size_in_bytes": 100,
        "equality_ids": [1],
    }
    t.row_delta(add_delete_files=_tbl(t, [eq_row]))
    rows = pa.concat_tables([pq.read_table(p.removeprefix("file://")) for p in paths]).cast(SCHEMA)
    compacted = icefloe.executor.write.write_data_files(
        t.metadata, rows.filter(pa.compute.not_equal(rows["id"], gone))
    )
    java = _java_rewrite(spark, jtable, paths, compacted.to_pylist(), seq, here)
    t.rewrite_files(paths, compacted, data_sequence_number=seq, validate_from_snapshot=here)
    snap = t.current_snapshot()
    assert snap.operation == java.operation() == "replace"
    assert _summary(snap.summary) == _summary(java.summary())
    jtable.refresh()
    it = jtable.newScan().planFiles().iterator()
    seqs = {}
    while it.hasNext():
        f = it.next().file()
        seqs[f.location()] = f.dataSequenceNumber()
    assert seqs[compacted.to_pylist()[0]["file_path"]] == seq
    assert _spark_ids(spark, name) == sorted(set(range(22)) - {3, gone})


# -- rewrite manifests --------------------------------------------------------------------------


def test_rewrite_manifests_read_by_java(env):
    spark, name, cat, jcat = env
    t = _make(cat, 3)
    t.append(pa.table({"id": pa.array([20, 21], pa.int64()), "cat": ["a", "b"]}))
    t = cat.load_table("db.t")
    assert sorted(e["partition"]["cat"] for e in _live(t, 0)) == ["a", "a", "b", "b"]  # 2 manifests
    added, _ = write_position_deletes(
        t.metadata, {e["file_path"]: [0] for e in _live(t, 0) if e["partition"]["cat"] == "b"}
    )
    t.row_delta(add_delete_files=added)
    jtable = jcat.loadTable(jident(spark, "db.t"))
    before_files = _java_deletes(jtable)
    before_ids = _spark_ids(spark, name)

    t.rewrite_manifests(cluster_by_partition=True)
    jtable.refresh()
    js = jtable.currentSnapshot()
    assert js.operation() == "replace"
    summary = dict(js.summary())
    assert (
        summary["manifests-created"],
        summary["manifests-replaced"],
        summary["manifests-kept"],
        summary["entries-processed"],
    ) == ("2", "2", "1", "4")
    data_manifests = list(js.dataManifests(jtable.io()))
    assert len(data_manifests) == 2
    assert all(m.existingFilesCount() == 2 and m.addedFilesCount() == 0 for m in data_manifests)
    assert _java_deletes(jtable) == before_files == _our_deletes(t)
    assert _spark_ids(spark, name) == before_ids


@pytest.mark.parametrize("limit", ["10", "1"])
def test_partition_summaries_match_java(env, limit):
    """``write.summary.partition-limit``: ``partition-summaries-included`` and one
    ``partitions.<path>`` entry per changed partition (path URL-encoded) when at most
    ``limit`` partitions changed, as Java's ``SnapshotSummary.Builder``."""
    spark, name, cat, jcat = env
    t = cat.create_table(
        "db.t",
        SCHEMA,
        partition_spec=[("cat", "identity")],
        format_version=2,
        properties={"write.summary.partition-limit": limit},
    )
    jtable = jcat.loadTable(jident(spark, "db.t"))
    jvm = spark._jvm
    files = [
        {
            "content": 0,
            "file_path": f"file:///nowhere/{i}.parquet",
            "file_format": "PARQUET",
            "partition": {"cat": c},
            "record_count": i + 1,
            "file_size_in_bytes": 100 + i,
        }
        for i, c in enumerate(["a b", "x=y/z", "a b"])
    ]

    def java_data(r):
        return (
            jvm.org.apache.iceberg.DataFiles.builder(jtable.spec())
            .withPath(r["file_path"])
            .withFormat("PARQUET")
            .withFileSizeInBytes(r["file_size_in_bytes"])
            .withRecordCount(r["record_count"])
            .withPartition(_jpartition(jvm, jtable, r["partition"]["cat"]))
            .build()
        )

    jtable.refresh()
    app = jtable.newFastAppend()
    for r in files:
        app = app.appendFile(java_data(r))
    java = app.apply()
    t.append_files(pa.Table.from_pylist(files, schema=_schema(t)))
    t = cat.load_table("db.t")
    got, want = _summary(t.current_snapshot().summary), _summary(java.summary())
    assert got == want
    assert ("partition-summaries-included" in got) == (limit == "10")

    # a delete of one file and a row delta in one partition
    jtable.refresh()
    java = jtable.newDelete().deleteFile(_java_live_data(jtable, files[1]["file_path"])).apply()
    t.delete_files([files[1]["file_path"]])
    t = cat.load_table("db.t")
    assert _summary(t.current_snapshot().summary) == _summary(java.summary())
    pos = {
        "content": 1,
        "file_path": "file:///nowhere/d.parquet",
        "file_format": "PARQUET",
        "partition": {"cat": "a b"},
        "record_count": 2,
        "file_size_in_bytes": 50,
    }
    java = _java_row_delta(spark, jtable, add_deletes=[pos], add_data=[])
    t.row_delta(add_delete_files=pa.Table.from_pylist([pos], schema=_schema(t)))
    t = cat.load_table("db.t")
    got = _summary(t.current_snapshot().summary)
    assert got == _summary(java.summary())
    assert "partitions.cat=a+b" in got


def _jpartition(jvm, jtable, value):
    data = jvm.org.apache.iceberg.data.GenericRecord.create(jtable.spec().partitionType())
    data.set(0, value)
    return data


@pytest.mark.parametrize(
    "extra", [{}, {"write.object-storage.partitioned-paths": "false"}, {"write.data.path": "OUTSIDE"}]
)
@pytest.mark.parametrize("partitioned", [True, False])
def test_object_storage_locations_match_java(env, tmp_path, extra, partitioned):
    """``write.object-storage.enabled``: icefloe's writer puts each data file where Java's
    ``ObjectStoreLocationProvider`` puts a file of that name, and Spark reads the rows."""
    spark, name, cat, jcat = env
    props = {"write.object-storage.enabled": "true"}
    props.update({k: (tmp_path / "elsewhere").as_uri() if v == "OUTSIDE" else v for k, v in extra.items()})
    t = cat.create_table(
        "db.t",
        SCHEMA,
        partition_spec=[("cat", "identity")] if partitioned else [],
        format_version=2,
        properties=props,
    )
    # plain partition values: pyarrow decodes %-escapes in file: URIs, Hadoop does not (a
    # writer issue of every location provider, not of this one)
    rows = pa.table({"id": pa.array(range(6), pa.int64()), "cat": ["a", "b", "c", "a", "g", "g"]})
    t.append(rows)
    t = cat.load_table("db.t")
    jtable = jcat.loadTable(jident(spark, "db.t"))
    provider = jtable.locationProvider()
    data = _live(t, 0)
    assert len(data) == (4 if partitioned else 1)
    for f in data:
        # Java's OutputFileFactory name (without partitioned paths it follows the hash after "-")
        file_name = re.search(r"\d{5}-\d+-[0-9a-f-]{36}-\d{5}\.parquet$", f["file_path"]).group(0)
        want = (
            provider.newDataLocation(
                jtable.spec(), _jpartition(spark._jvm, jtable, f["partition"]["cat"]), file_name
            )
            if partitioned
            else provider.newDataLocation(file_name)
        )
        assert f["file_path"] == want
    assert _spark_ids(spark, name) == list(range(6))
