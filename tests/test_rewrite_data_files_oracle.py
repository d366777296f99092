"""``rewrite_data_files`` (in-process and on Spark) against Java Iceberg 1.11's
``rewrite_data_files`` procedure on twin tables.

One table is written by icefloe (small files, position deletes or DVs, equality deletes
committed through Java's ``RowDelta``) and registered twice in a SQLite catalog shared with
Java's ``JdbcCatalog``; icefloe compacts one copy, Java's procedure the other. Compared: the
procedure's result columns, the new snapshots' summaries (``replace``, added/deleted file
and record counts, delete files removed; byte sizes differ since the Parquet writers
differ), the rows Spark reads (Java's reader), and that the new files meet the size target.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import icefloe
from icefloe.executor.position_deletes import write_position_deletes
from test_catalog_oracle import jident
from test_row_delta_oracle import _JAVA_ENVIRONMENT, _live, env  # noqa: F401

pytestmark = pytest.mark.java

SCHEMA = pa.schema(
    [pa.field("id", pa.int64(), nullable=False), pa.field("cat", pa.string()), pa.field("v", pa.string())]
)
# byte counts depend on the Parquet writer (pyarrow vs Java's), not on the rewrite's rules
_SIZES = {"added-files-size", "removed-files-size", "total-files-size"}
RESULT_COLUMNS = (
    "rewritten_data_files_count",
    "added_data_files_count",
    "rewritten_bytes_count",
    "failed_data_files_count",
    "removed_delete_files_count",
)


def _append(t, start, n, cat):
    ids = list(range(start, start + n))
    t.append(
        pa.table({"id": pa.array(ids, pa.int64()), "cat": [cat] * n, "v": [f"value-{i:06d}" for i in ids]})
    )


def _make(cat, version, appends=6, rows=50, props=None):
    t = cat.create_table(
        "db.t",
        SCHEMA,
        partition_spec=[("cat", "identity")],
        format_version=version,
        properties=props or {},
    )
    for i in range(appends):
        for c in ("a", "b"):
            _append(t, (i * 2 + (c == "b")) * rows, rows, c)
    return cat.load_table("db.t")


def _summary(snapshot):
    s = dict(snapshot.summary)
    return {k: v for k, v in s.items() if k not in _JAVA_ENVIRONMENT and k not in _SIZES}


def _new_summaries(t, before):
    """The summaries of the snapshots after ``before``, oldest first."""
    snaps = [s for s in t.metadata.snapshots if s.sequence_number > before]
    return [_summary(s) for s in sorted(snaps, key=lambda s: s.sequence_number)]


def _rows(spark, name, table):
    spark.sql(f"REFRESH TABLE {name}.db.{table}")
    return sorted(tuple(r) for r in spark.sql(f"select id, cat, v from {name}.db.{table}").collect())


def _call(spark, name, table, extra=""):
    row = spark.sql(f"CALL {name}.system.rewrite_data_files(table => 'db.{table}'{extra})").collect()[0]
    return tuple(row[c] for c in RESULT_COLUMNS)


def _ours(result):
    return tuple(getattr(result, c) for c in RESULT_COLUMNS)


def _twin(cat, t):
    return cat.register_table("db.twin", t.metadata_location)


def _options_sql(options):
    pairs = ", ".join(f"'{k}', '{v}'" for k, v in options.items())
    return f", options => map({pairs})"


def _sizes(t):
    return [e["file_size_in_bytes"] for e in _live(t, 0)]


def test_bin_pack_v2_with_position_deletes_equals_javas_procedure(env):
    spark, name, cat, jcat = env
    t = _make(cat, 2)
    # position deletes on two data files of partition a
    a_files = sorted(e["file_path"] for e in _live(t, 0) if e["partition"]["cat"] == "a")
    added, _ = write_position_deletes(t.metadata, {a_files[0]: [0, 1, 2], a_files[1]: [5]})
    t.row_delta(add_delete_files=added)
    t = cat.load_table("db.t")
    _twin(cat, t)
    before = t.metadata.last_sequence_number
    expected_rows = _rows(spark, name, "t")
    assert len(expected_rows) == 6 * 2 * 50 - 4

    options = {"min-input-files": "2"}
    ours = t.rewrite_data_files(options=options)
    theirs = _call(spark, name, "twin", _options_sql(options))
    assert _ours(ours) == theirs
    assert theirs[0] == 12 and theirs[1] == 2

    t = cat.load_table("db.t")
    twin = cat.load_table("db.twin")
    assert _new_summaries(t, before) == _new_summaries(twin, before)
    (s,) = _new_summaries(t, before)
    assert s["operation"] == "replace"
    assert (s["deleted-data-files"], s["added-data-files"], s["deleted-records"]) == ("12", "2", "600")
    assert _rows(spark, name, "t") == expected_rows == _rows(spark, name, "twin")
    # the new files start from the starting snapshot's sequence number, so that deletes
    # committed meanwhile still apply; the v2 position deletes stay (dangling) as in Java
    assert len(_live(t, 1)) == len(_live(twin, 1)) == 2


def test_bin_pack_v3_removes_dvs_and_meets_the_target_size(env):
    spark, name, cat, jcat = env
    t = _make(cat, 3, appends=8, rows=400)
    files = sorted(e["file_path"] for e in _live(t, 0))
    added, _ = write_position_deletes(t.metadata, {files[0]: [0, 1], files[3]: [7]})
    t.row_delta(add_delete_files=added)
    t = cat.load_table("db.t")
    _twin(cat, t)
    before = t.metadata.last_sequence_number
    expected_rows = _rows(spark, name, "t")
    # a target below the partition's bytes: several output files per partition
    total = sum(_sizes(t))
    target = total // 5
    options = {"target-file-size-bytes": str(target), "min-input-files": "2"}
    ours = t.rewrite_data_files(options=options)
    theirs = _call(spark, name, "twin", _options_sql(options))
    assert _ours(ours)[0] == theirs[0] == 16
    assert _ours(ours)[4] == theirs[4] == 2  # the DVs of the rewritten files
    # the same read units (Java's planTaskGroups at the groups' split size); Java's Parquet
    # writer may roll within a unit, since it counts buffered rows uncompressed (checked
    # every 1,000 rows), so its file count can be higher on small files
    assert 4 <= _ours(ours)[1] <= theirs[1]
    t = cat.load_table("db.t")
    twin = cat.load_table("db.twin")
    file_counts = {"added-data-files", "total-data-files"}

    def strip(summaries):
        return [{k: v for k, v in s.items() if k not in file_counts} for s in summaries]

    assert strip(_new_summaries(t, before)) == strip(_new_summaries(twin, before))
    assert _rows(spark, name, "t") == expected_rows == _rows(spark, name, "twin")
    assert _live(t, 1) == [] and _live(twin, 1) == []
    # the target met: no new file above the size Java's writers roll at (target + (max -
    # target) / 2), and nothing left for the same rewrite to do
    write_max = target + (int(target * 1.8) - target) // 2
    assert all(size <= write_max for size in _sizes(t))
    assert t.rewrite_data_files(options=options).rewritten_data_files_count == 0


def test_where_filter_and_partial_progress_equal_javas(env):
    spark, name, cat, jcat = env
    t = _make(cat, 2)
    _twin(cat, t)
    before = t.metadata.last_sequence_number
    ours = t.rewrite_data_files(where="cat = 'a'", options={"min-input-files": "2"})
    theirs = _call(spark, name, "twin", ", where => \"cat = 'a'\", options => map('min-input-files', '2')")
    assert _ours(ours) == theirs
    t, twin = cat.load_table("db.t"), cat.load_table("db.twin")
    assert _new_summaries(t, before) == _new_summaries(twin, before)
    assert {e["partition"]["cat"] for e in _live(t, 0) if e["record_count"] == 300} == {"a"}

    # partition b in groups of 2 files with one commit per group
    before = t.metadata.last_sequence_number
    b_sizes = sorted(e["file_size_in_bytes"] for e in _live(t, 0) if e["partition"]["cat"] == "b")
    assert sum(b_sizes[:3]) > b_sizes[-1] + b_sizes[-2]
    options = {
        "min-input-files": "2",
        # any two files fit, three never do, whatever order planning lists them in
        "max-file-group-size-bytes": str(b_sizes[-1] + b_sizes[-2]),
        "partial-progress.enabled": "true",
        "partial-progress.max-commits": "3",
    }
    ours = t.rewrite_data_files(options=options)
    theirs = _call(spark, name, "twin", _options_sql(options))
    assert _ours(ours) == theirs
    assert len(ours.snapshot_ids) == 3
    t, twin = cat.load_table("db.t"), cat.load_table("db.twin")
    assert sorted(map(str, _new_summaries(t, before))) == sorted(map(str, _new_summaries(twin, before)))
    assert _rows(spark, name, "t") == _rows(spark, name, "twin")


def test_files_with_equality_deletes_are_rewritten_with_the_deletes_applied(env, tmp_path):
    spark, name, cat, jcat = env
    t = _make(cat, 2)
    # an equality delete file on id (Java's RowDelta commits it, partition a)
    path = Path(tmp_path / "eq-deletes.parquet")
    pq.write_table(
        pa.table(
            {"id": pa.array([0, 1, 200], pa.int64())},
            schema=pa.schema(
                [pa.field("id", pa.int64(), nullable=False, metadata={b"PARQUET:field_id": b"1"})]
            ),
        ),
        path,
    )
    jt = jcat.loadTable(jident(spark, "db.t"))
    jvm = spark._jvm
    ids = spark.sparkContext._gateway.new_array(jvm.int, 1)
    ids[0] = 1
    delete_file = (
        jvm.org.apache.iceberg.FileMetadata.deleteFileBuilder(jt.spec())
        .ofEqualityDeletes(ids)
        .withPath(path.as_uri())
        .withFormat("parquet")
        .withFileSizeInBytes(path.stat().st_size)
        .withRecordCount(3)
        .withPartitionPath("cat=a")
        .build()
    )
    jt.newRowDelta().addDeletes(delete_file).commit()
    t = cat.load_table("db.t")
    _twin(cat, t)
    before = t.metadata.last_sequence_number
    expected = _rows(spark, name, "t")
    assert len(expected) == 600 - 3
    # delete-file-threshold 1: every file with a delete is a candidate (Java's option)
    options = {"delete-file-threshold": "1", "min-input-files": "100"}
    ours = t.rewrite_data_files(options=options)
    theirs = _call(spark, name, "twin", _options_sql(options))
    assert _ours(ours) == theirs
    t, twin = cat.load_table("db.t"), cat.load_table("db.twin")
    assert _new_summaries(t, before) == _new_summaries(twin, before)
    assert _rows(spark, name, "t") == expected == _rows(spark, name, "twin")
    # the rewritten rows no longer hold the deleted ids
    new = [e for e in _live(t, 0) if e["sequence_number"] <= before and e["record_count"] == 297]
    assert len(new) == 1
    assert 200 not in pq.read_table(new[0]["file_path"].removeprefix("file://"))["id"].to_pylist()


def test_sort_by_the_table_order_and_by_given_columns(env):
    spark, name, cat, jcat = env
    t = _make(cat, 3, appends=4, rows=100)
    with t.replace_sort_order() as s:
        s.desc("id")
    t = cat.load_table("db.t")
    _twin(cat, t)
    before = t.metadata.last_sequence_number
    options = {"rewrite-all": "true"}
    ours = t.rewrite_data_files(strategy="sort", options=options)
    theirs = _call(spark, name, "twin", ", strategy => 'sort'" + _options_sql(options))
    assert _ours(ours)[0] == theirs[0] == 8
    assert _ours(ours)[1] == theirs[1] == 2
    t, twin = cat.load_table("db.t"), cat.load_table("db.twin")
    assert _new_summaries(t, before) == _new_summaries(twin, before)
    assert _rows(spark, name, "t") == _rows(spark, name, "twin")
    for e in _live(t, 0):
        ids = pq.read_table(e["file_path"].removeprefix("file://"))["id"].to_pylist()
        assert ids == sorted(ids, reverse=True)
        assert e["sort_order_id"] == t.metadata.default_sort_order_id
    # given columns
    ours = t.rewrite_data_files(strategy="sort", sort_order="v ASC NULLS LAST", options=options)
    assert ours.rewritten_data_files_count == 2
    for e in _live(cat.load_table("db.t"), 0):
        vs = pq.read_table(e["file_path"].removeprefix("file://"))["v"].to_pylist()
        assert vs == sorted(vs)


def test_spark_rewrite_data_files_equals_javas_procedure(env):
    import icefloe.spark

    spark, name, cat, jcat = env
    t = _make(cat, 3)
    files = sorted(e["file_path"] for e in _live(t, 0))
    added, _ = write_position_deletes(t.metadata, {files[0]: [3]})
    t.row_delta(add_delete_files=added)
    t = cat.load_table("db.t")
    _twin(cat, t)
    before = t.metadata.last_sequence_number
    expected = _rows(spark, name, "t")
    options = {"min-input-files": "2"}
    ours = icefloe.spark.rewrite_data_files(spark, t, options=options)
    theirs = _call(spark, name, "twin", _options_sql(options))
    assert _ours(ours) == theirs
    t, twin = cat.load_table("db.t"), cat.load_table("db.twin")
    assert _new_summaries(t, before) == _new_summaries(twin, before)
    assert _rows(spark, name, "t") == expected == _rows(spark, name, "twin")


def test_options_are_refused_as_java_refuses_them(env):
    spark, name, cat, jcat = env
    t = _make(cat, 2, appends=1)
    with pytest.raises(icefloe.errors.InvalidArgumentError, match="Cannot use options \\[nope\\]"):
        t.rewrite_data_files(options={"nope": "1"})
    with pytest.raises(icefloe.errors.InvalidArgumentError, match="must be > 'min-file-size-bytes'"):
        t.rewrite_data_files(options={"target-file-size-bytes": "10", "min-file-size-bytes": "20"})
    with pytest.raises(icefloe.errors.InvalidArgumentError, match="no sort order"):
        t.rewrite_data_files(strategy="sort")
    # nothing to do: no commit
    before = cat.load_table("db.t").metadata.current_snapshot_id
    assert t.rewrite_data_files().rewritten_data_files_count == 0
    assert cat.load_table("db.t").metadata.current_snapshot_id == before


def test_remove_dangling_deletes_equals_javas(env):
    spark, name, cat, jcat = env
    t = _make(cat, 2)
    a_files = sorted(e["file_path"] for e in _live(t, 0) if e["partition"]["cat"] == "a")
    b_files = sorted(e["file_path"] for e in _live(t, 0) if e["partition"]["cat"] == "b")
    added, _ = write_position_deletes(t.metadata, {a_files[0]: [0], b_files[0]: [1]})
    t.row_delta(add_delete_files=added)
    t = cat.load_table("db.t")
    _twin(cat, t)
    before = t.metadata.last_sequence_number
    # new sequence numbers for the new files: the old position deletes of partition a then
    # apply to nothing, and the option removes them in a second commit, as Java's
    options = {
        "min-input-files": "2",
        "use-starting-sequence-number": "false",
        "remove-dangling-deletes": "true",
    }
    ours = t.rewrite_data_files(where="cat = 'a'", options=options)
    theirs = _call(spark, name, "twin", ", where => \"cat = 'a'\"" + _options_sql(options))
    assert _ours(ours) == theirs
    assert ours.removed_delete_files_count == 1
    t, twin = cat.load_table("db.t"), cat.load_table("db.twin")
    assert _new_summaries(t, before) == _new_summaries(twin, before)
    assert len(_new_summaries(t, before)) == 2
    assert _rows(spark, name, "t") == _rows(spark, name, "twin")
    assert [e["partition"]["cat"] for e in _live(t, 1)] == ["b"]
    # nothing left to remove: no commit, as Java's action
    assert t.maintenance.remove_dangling_deletes() == []
    actions = spark._jvm.org.apache.iceberg.spark.actions.SparkActions.get(spark._jsparkSession)
    jresult = actions.removeDanglingDeleteFiles(jcat.loadTable(jident(spark, "db.twin"))).execute()
    assert len(list(jresult.removedDeleteFiles())) == 0


def _java_equality_delete(spark, jcat, path, ids, partition):
    """Commits an equality delete file on ``id`` holding ``ids`` through Java's ``RowDelta``."""
    pq.write_table(
        pa.table(
            {"id": pa.array(ids, pa.int64())},
            schema=pa.schema(
                [pa.field("id", pa.int64(), nullable=False, metadata={b"PARQUET:field_id": b"1"})]
            ),
        ),
        path,
    )
    jt = jcat.loadTable(jident(spark, "db.t"))
    jvm = spark._jvm
    field_ids = spark.sparkContext._gateway.new_array(jvm.int, 1)
    field_ids[0] = 1
    delete_file = (
        jvm.org.apache.iceberg.FileMetadata.deleteFileBuilder(jt.spec())
        .ofEqualityDeletes(field_ids)
        .withPath(path.as_uri())
        .withFormat("parquet")
        .withFileSizeInBytes(path.stat().st_size)
        .withRecordCount(len(ids))
        .withPartitionPath(partition)
        .build()
    )
    jt.newRowDelta().addDeletes(delete_file).commit()


def test_equality_deletes_applied_by_compaction_are_removed_as_javas(env, tmp_path):
    spark, name, cat, jcat = env
    t = _make(cat, 2)
    _java_equality_delete(spark, jcat, Path(tmp_path / "eq-a.parquet"), [0, 1, 200], "cat=a")
    _java_equality_delete(spark, jcat, Path(tmp_path / "eq-b.parquet"), [50], "cat=b")
    t = cat.load_table("db.t")
    _twin(cat, t)
    before = t.metadata.last_sequence_number
    expected = _rows(spark, name, "t")
    assert len(expected) == 600 - 4
    # partition a only: its files are rewritten with the deletes applied, and its equality
    # delete file then applies to nothing (older than every data file of the partition),
    # so remove-dangling-deletes drops it in a second commit; b's stays
    options = {"delete-file-threshold": "1", "min-input-files": "100", "remove-dangling-deletes": "true"}
    ours = t.rewrite_data_files(where="cat = 'a'", options=options)
    theirs = _call(spark, name, "twin", ", where => \"cat = 'a'\"" + _options_sql(options))
    assert _ours(ours) == theirs
    assert ours.removed_delete_files_count == 1
    t, twin = cat.load_table("db.t"), cat.load_table("db.twin")
    assert _new_summaries(t, before) == _new_summaries(twin, before)
    assert len(_new_summaries(t, before)) == 2
    assert _rows(spark, name, "t") == expected == _rows(spark, name, "twin")
    assert (
        [e["partition"]["cat"] for e in _live(t, 2)]
        == ["b"]
        == [e["partition"]["cat"] for e in _live(twin, 2)]
    )


def _lineage(spark, name, table):
    spark.sql(f"REFRESH TABLE {name}.db.{table}")
    return sorted(
        tuple(r)
        for r in spark.sql(
            f"select id, _row_id, _last_updated_sequence_number from {name}.db.{table}"
        ).collect()
    )


@pytest.mark.parametrize("engine", ["in-process", "spark"])
def test_v3_compaction_keeps_row_lineage_as_javas(env, engine):
    import icefloe.spark

    spark, name, cat, jcat = env
    t = _make(cat, 3, appends=3, rows=20)
    files = sorted(e["file_path"] for e in _live(t, 0))
    added, _ = write_position_deletes(t.metadata, {files[0]: [1]})
    t.row_delta(add_delete_files=added)
    t = cat.load_table("db.t")
    _twin(cat, t)
    before = _lineage(spark, name, "t")
    assert len({r[1] for r in before}) == len(before) == 119
    options = {"rewrite-all": "true"}
    if engine == "spark":
        ours = icefloe.spark.rewrite_data_files(spark, t, options=options)
    else:
        ours = t.rewrite_data_files(options=options)
    theirs = _call(spark, name, "twin", _options_sql(options))
    assert _ours(ours)[:2] == theirs[:2]
    # Java's rewrite writes _row_id and _last_updated_sequence_number into the new files
    assert _lineage(spark, name, "twin") == before
    assert _lineage(spark, name, "t") == before
    # and icefloe's reader reads the same lineage from both tables
    columns = ["_row_id", "_last_updated_sequence_number"]
    for table in ("db.t", "db.twin"):
        rows = cat.load_table(table).scan().to_arrow(metadata_columns=columns)
        assert sorted(zip(*(rows[c].to_pylist() for c in ["id", *columns]), strict=True)) == before
