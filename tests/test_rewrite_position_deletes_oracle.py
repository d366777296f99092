"""``rewrite_position_delete_files`` (in-process and on Spark) against Java Iceberg 1.11's
``rewrite_position_delete_files`` procedure on twin tables.

One table is written by icefloe (small data files, several commits of position delete
files, a data file removed so that its deletes dangle) and registered twice in a SQLite
catalog shared with Java's ``JdbcCatalog``; icefloe rewrites one copy, Java's procedure the
other. Compared: the procedure's result columns (but the bytes written, which depend on the
writers), the new snapshots' summaries (without byte sizes), the rows and the live deletes
(``position_deletes`` read by Spark), and the data sequence numbers of the new delete files.
"""

from __future__ import annotations

import pytest

import icefloe
from icefloe.executor.position_deletes import write_position_deletes
from test_rewrite_data_files_oracle import _JAVA_ENVIRONMENT, _make, _options_sql, _twin
from test_row_delta_oracle import _live, env  # noqa: F401

pytestmark = pytest.mark.java

_SIZES = {"added-files-size", "removed-files-size", "total-files-size"}
# the procedure's columns but added_bytes_count (the Parquet and Puffin writers differ)
RESULT_COLUMNS = ("rewritten_delete_files_count", "added_delete_files_count", "rewritten_bytes_count")


def _summary(snapshot):
    s = dict(snapshot.summary)
    return {k: v for k, v in s.items() if k not in _JAVA_ENVIRONMENT and k not in _SIZES}


def _new_summaries(t, before):
    snaps = [s for s in t.metadata.snapshots if s.sequence_number > before]
    return [_summary(s) for s in sorted(snaps, key=lambda s: s.sequence_number)]


def _call(spark, name, table, extra=""):
    row = spark.sql(
        f"CALL {name}.system.rewrite_position_delete_files(table => 'db.{table}'{extra})"
    ).collect()[0]
    return tuple(row[c] for c in RESULT_COLUMNS), row["added_bytes_count"]


def _ours(result):
    return tuple(getattr(result, c) for c in RESULT_COLUMNS)


def _rows(spark, name, table):
    spark.sql(f"REFRESH TABLE {name}.db.{table}")
    return sorted(tuple(r) for r in spark.sql(f"select id, cat, v from {name}.db.{table}").collect())


def _deletes(spark, name, table):
    """The live deletes as Java reads them: (data file, position)."""
    spark.sql(f"REFRESH TABLE {name}.db.{table}")
    return sorted(
        tuple(r)
        for r in spark.sql(f"select file_path, pos from {name}.db.{table}.position_deletes").collect()
    )


def _delete_entries(t):
    """(partition, format, record count, data sequence number) of the live delete files."""
    return sorted(
        (e["partition"]["cat"], e["file_format"].lower(), e["record_count"], e["sequence_number"])
        for e in _live(t, 1)
    )


def _delete_bounds(t):
    """(lower, upper) bounds of the live delete files, each a sorted list of (field id, bytes)."""
    return sorted((sorted(e["lower_bounds"] or []), sorted(e["upper_bounds"] or [])) for e in _live(t, 1))


def _with_deletes(cat, version=2):
    """Twelve data files in partitions a and b; position deletes in three commits (two
    files for one data file), then one data file with deletes removed: its deletes dangle."""
    t = _make(cat, version)
    a = sorted(e["file_path"] for e in _live(t, 0) if e["partition"]["cat"] == "a")
    b = sorted(e["file_path"] for e in _live(t, 0) if e["partition"]["cat"] == "b")
    for deletes in (
        {a[0]: [0, 1], a[1]: [2], b[0]: [3]},
        {a[0]: [5], a[2]: [7, 8], b[1]: [0]},
        {a[3]: [4], b[0]: [9], b[2]: [1]},
    ):
        added, _ = write_position_deletes(t.metadata, deletes)
        t.row_delta(add_delete_files=added)
        t = cat.load_table("db.t")
    with t.transaction() as tx:
        tx.delete_files([a[1]])
    return cat.load_table("db.t"), a, b


def test_v2_merges_per_data_file_and_drops_dangling_deletes_as_java(env):
    spark, name, cat, jcat = env
    t, a, b = _with_deletes(cat)
    _twin(cat, t)
    before = t.metadata.last_sequence_number
    expected_rows = _rows(spark, name, "t")
    expected_deletes = [d for d in _deletes(spark, name, "t") if d[0] != a[1]]

    options = {"min-input-files": "2"}
    ours = t.rewrite_position_delete_files(options=options)
    theirs, _ = _call(spark, name, "twin", _options_sql(options))
    assert _ours(ours) == theirs
    # partition a: 5 files (two for a[0], one dangling) into 3, b: 4 files (two for b[0]) into 3
    assert theirs[0] == 9 and theirs[1] == 6

    t, twin = cat.load_table("db.t"), cat.load_table("db.twin")
    assert _new_summaries(t, before) == _new_summaries(twin, before)
    (s,) = _new_summaries(t, before)
    assert s["operation"] == "replace"
    assert _rows(spark, name, "t") == expected_rows == _rows(spark, name, "twin")
    assert _deletes(spark, name, "t") == expected_deletes == _deletes(spark, name, "twin")
    # the new files keep the largest data sequence number of the files they replace
    assert _delete_entries(t) == _delete_entries(twin)
    assert all(e["referenced_data_file"] for e in _live(t, 1))
    # the new files carry the bounds Java's writer keeps: file_path and pos in full
    assert _delete_bounds(t) == _delete_bounds(twin)
    assert all(len(b[0]) == 2 for b in _delete_bounds(t))
    # small files stay candidates: a second run rewrites them again, as Java's does (the
    # bytes read now differ, the files being each engine's)
    again = t.rewrite_position_delete_files(options=options)
    assert _ours(again)[:2] == _call(spark, name, "twin", _options_sql(options))[0][:2] == (6, 6)


def _order_free(summaries):
    """What partial-progress commits changed, whatever their order, and the table after the
    last: Java commits the groups in the order its rewrites finish (it varies from run to
    run), and each commit's manifest counts and totals depend on the commits before it."""
    changes = sorted(
        str(
            {
                k: v
                for k, v in s.items()
                if k == "operation" or k.startswith(("added-", "removed-", "changed-"))
            }
        )
        for s in summaries
    )
    return changes, {k: v for k, v in summaries[-1].items() if k.startswith("total-")}


def test_where_filter_and_partial_progress_equal_javas(env):
    spark, name, cat, jcat = env
    t, a, b = _with_deletes(cat)
    _twin(cat, t)
    before = t.metadata.last_sequence_number
    ours = t.rewrite_position_delete_files(where="cat = 'b'", options={"min-input-files": "2"})
    theirs, _ = _call(spark, name, "twin", ", where => \"cat = 'b'\", options => map('min-input-files', '2')")
    assert _ours(ours) == theirs == (4, 3, ours.rewritten_bytes_count)
    t, twin = cat.load_table("db.t"), cat.load_table("db.twin")
    assert _new_summaries(t, before) == _new_summaries(twin, before)
    assert _deletes(spark, name, "t") == _deletes(spark, name, "twin")

    # partition a alone is left: rewrite-all with one commit per group
    before = t.metadata.last_sequence_number
    options = {"rewrite-all": "true", "partial-progress.enabled": "true", "partial-progress.max-commits": "5"}
    ours = t.rewrite_position_delete_files(options=options)
    theirs, _ = _call(spark, name, "twin", _options_sql(options))
    # b's files are now each engine's own: the bytes read differ
    assert _ours(ours)[:2] == theirs[:2] == (8, 6)
    assert len(ours.snapshot_ids) == 2
    t, twin = cat.load_table("db.t"), cat.load_table("db.twin")
    assert _order_free(_new_summaries(t, before)) == _order_free(_new_summaries(twin, before))
    assert _rows(spark, name, "t") == _rows(spark, name, "twin")
    assert _deletes(spark, name, "t") == _deletes(spark, name, "twin")
    assert _delete_entries(t) == _delete_entries(twin)


def test_upgraded_v3_table_gets_dvs_as_java(env):
    spark, name, cat, jcat = env
    t, a, b = _with_deletes(cat)
    with t.transaction() as tx:
        tx.set_properties({"format-version": "3"})
    t = cat.load_table("db.t")
    assert t.metadata.format_version == 3
    _twin(cat, t)
    before = t.metadata.last_sequence_number
    expected_rows = _rows(spark, name, "t")
    expected_deletes = [d for d in _deletes(spark, name, "t") if d[0] != a[1]]
    # the defaults: partition a has min-input-files (5) delete files, b too few
    ours = t.rewrite_position_delete_files()
    theirs, _ = _call(spark, name, "twin")
    assert _ours(ours) == theirs
    assert theirs[:2] == (5, 3)  # a DV per live data file with deletes
    # the rest (b's position delete files and a's new DVs) with rewrite-all
    options = {"rewrite-all": "true"}
    ours = t.rewrite_position_delete_files(options=options)
    theirs, _ = _call(spark, name, "twin", _options_sql(options))
    assert _ours(ours)[:2] == theirs[:2] == (7, 6)
    t, twin = cat.load_table("db.t"), cat.load_table("db.twin")
    assert _new_summaries(t, before) == _new_summaries(twin, before)
    assert _rows(spark, name, "t") == expected_rows == _rows(spark, name, "twin")
    assert _deletes(spark, name, "t") == expected_deletes == _deletes(spark, name, "twin")
    assert _delete_entries(t) == _delete_entries(twin)
    assert {e["file_format"].lower() for e in _live(t, 1)} == {"puffin"}
    # every position delete is a DV: nothing more to do, for both
    assert t.rewrite_position_delete_files(options=options).rewritten_delete_files_count == 0
    assert _call(spark, name, "twin", _options_sql(options))[0][0] == 0


def test_spark_rewrite_position_delete_files_equals_javas(env):
    import icefloe.spark

    spark, name, cat, jcat = env
    t, a, b = _with_deletes(cat)
    _twin(cat, t)
    before = t.metadata.last_sequence_number
    options = {"min-input-files": "2"}
    ours = icefloe.spark.rewrite_position_delete_files(spark, t, options=options)
    theirs, _ = _call(spark, name, "twin", _options_sql(options))
    assert _ours(ours) == theirs
    t, twin = cat.load_table("db.t"), cat.load_table("db.twin")
    assert _new_summaries(t, before) == _new_summaries(twin, before)
    assert _deletes(spark, name, "t") == _deletes(spark, name, "twin")
    assert _delete_entries(t) == _delete_entries(twin)


def test_options_are_refused_as_java_refuses_them(env):
    spark, name, cat, jcat = env
    t, _, _ = _with_deletes(cat)
    with pytest.raises(
        icefloe.errors.InvalidArgumentError, match="Cannot use options \\[delete-file-threshold\\]"
    ):
        t.rewrite_position_delete_files(options={"delete-file-threshold": "1"})
    with pytest.raises(Exception, match="Cannot use options \\[delete-file-threshold\\]"):
        _call(spark, name, "t", _options_sql({"delete-file-threshold": "1"}))
    with pytest.raises(icefloe.errors.InvalidArgumentError, match="must be > 'min-file-size-bytes'"):
        t.rewrite_position_delete_files(options={"target-file-size-bytes": "10", "min-file-size-bytes": "20"})
