"""Changelogs (``table.changes`` / ``table.changelog``, the Spark source's ``changes-from`` /
``changes-to``) against Java Iceberg on the same table and snapshots: Spark's
``<table>.changes`` for the raw rows and the ``create_changelog_view`` procedure (carry-overs
removed; updates computed with identifier columns). The table is written by Java with
copy-on-write operations (appends, UPDATE, DELETE, a compaction that the changelog skips)
and by icefloe; snapshots with delete files are refused by both, with Java's message."""

from __future__ import annotations

import pytest

import icefloe
from icefloe import errors
from icefloe.spark.options import source_options
from test_catalog_oracle import paths, spark_catalog  # noqa: F401

pytestmark = pytest.mark.java


def _key(row: tuple) -> tuple:
    return tuple((v is not None, v) for v in row)


def _sorted(rows) -> list[tuple]:
    return sorted((tuple(r.values()) if isinstance(r, dict) else tuple(r) for r in rows), key=_key)


def _java_view(spark, sc: str, name: str, start: int | None, end: int | None, ids: list[str] | None = None):
    opts = []
    if start is not None:
        opts += ["'start-snapshot-id'", f"'{start}'"]
    if end is not None:
        opts += ["'end-snapshot-id'", f"'{end}'"]
    args = [f"table => 'db.{name}'", "changelog_view => 'cv'"]
    if opts:
        args.append(f"options => map({', '.join(opts)})")
    if ids:
        args.append(f"identifier_columns => array({', '.join(repr(i) for i in ids)})")
    spark.sql(f"CALL {sc}.system.create_changelog_view({', '.join(args)})")
    return _sorted(spark.sql("SELECT * FROM cv").collect())


def _java_table(spark, sc: str, name: str, version: int) -> list[int]:
    """Builds the table with Java; returns its snapshot ids, oldest first."""
    t = f"{sc}.db.{name}"
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {sc}.db")
    spark.sql(
        f"CREATE TABLE {t} (id bigint, category string, v double) USING iceberg PARTITIONED BY (category) "
        f"TBLPROPERTIES ('format-version'='{version}', 'write.update.mode'='copy-on-write', "
        "'write.delete.mode'='copy-on-write', 'write.merge.mode'='copy-on-write')"
    )
    spark.sql(f"INSERT INTO {t} VALUES (1, 'a', 1.0), (2, 'b', 2.0), (3, 'a', 3.0), (4, 'c', 4.0)")
    spark.sql(f"INSERT INTO {t} VALUES (5, 'b', 5.0), (6, 'a', 6.0)")
    # copy-on-write: the files of 'a' are rewritten, the other rows of them carried over
    spark.sql(f"UPDATE {t} SET v = v + 100 WHERE id = 1")
    spark.sql(f"DELETE FROM {t} WHERE id = 2")
    # a compaction (replace): no change in the changelog
    spark.sql(
        f"CALL {sc}.system.rewrite_data_files(table => 'db.{name}', options => map('min-input-files','1'))"
    )
    spark.sql(f"INSERT INTO {t} VALUES (7, 'c', 7.0), (1, 'a', 1.5)")
    return [
        r.snapshot_id
        for r in spark.sql(f"SELECT snapshot_id FROM {t}.snapshots ORDER BY committed_at").collect()
    ]


@pytest.mark.parametrize("version", [2, 3])
def test_changelog_equals_java(spark, paths, version):  # noqa: F811
    db, wh, _ = paths
    sc = spark_catalog(spark, db, wh)
    name = f"chg{version}"
    snaps = _java_table(spark, sc, name, version)
    assert len(snaps) == 6
    cat = icefloe.load_catalog(sc, uri=f"sqlite:///{db}", warehouse=wh)
    t = cat.load_table(f"db.{name}")

    # raw rows: Spark's <table>.changes (the whole history) against table.changes()
    java_raw = _sorted(spark.sql(f"SELECT * FROM {sc}.db.{name}.changes").collect())
    ours_raw = t.changes()
    assert ours_raw.column_names[-3:] == ["_change_type", "_change_ordinal", "_commit_snapshot_id"]
    assert _sorted(ours_raw.to_pylist()) == java_raw
    assert any(r[3] == "DELETE" for r in java_raw)  # the copy-on-write rewrites are in it

    # create_changelog_view over several ranges, with and without identifier columns
    for start, end in [
        (None, None),
        (snaps[0], snaps[3]),
        (snaps[1], snaps[2]),
        (snaps[2], None),
        (snaps[3], snaps[5]),
    ]:
        java = _java_view(spark, sc, name, start, end)
        assert _sorted(t.changelog(start, end).to_pylist()) == java, (start, end)
        java_u = _java_view(spark, sc, name, start, end, ["id"])
        ours_u = t.changelog(start, end, identifier_columns=["id"])
        assert _sorted(ours_u.to_pylist()) == java_u, (start, end)
    kinds = {
        r["_change_type"] for r in t.changelog(snaps[1], snaps[2], identifier_columns=["id"]).to_pylist()
    }
    assert kinds == {"UPDATE_BEFORE", "UPDATE_AFTER"}

    # the Spark source
    icefloe.spark.register(spark)
    options = source_options(cat.name, cat.properties)
    df = (
        spark.read.format("icefloe")
        .options(**options)
        .option("changes-from", str(snaps[0]))
        .option("changes-to", str(snaps[3]))
        .option("identifier-columns", "id")
        .load(f"db.{name}")
    )
    assert df.columns[-3:] == ["_change_type", "_change_ordinal", "_commit_snapshot_id"]
    assert _sorted(df.collect()) == _java_view(spark, sc, name, snaps[0], snaps[3], ["id"])
    raw = (
        spark.read.format("icefloe")
        .options(**options)
        .option("changes", "true")
        .option("changes-raw", "true")
    )
    assert _sorted(raw.load(f"db.{name}").collect()) == java_raw

    # a start that is not an ancestor's parent: both refuse
    with pytest.raises(Exception, match="not a parent ancestor"):
        _java_view(spark, sc, name, snaps[3], snaps[1])
    with pytest.raises(ValueError, match="not a parent ancestor"):
        t.changelog(snaps[3], snaps[1])


@pytest.mark.parametrize("version", [2, 3])
def test_changelog_with_delete_files_is_refused_as_java(spark, paths, version):  # noqa: F811
    """Java 1.11's changelog scan refuses a range with delete files (DVs in v3, position
    deletes in v2, from Java or from icefloe): icefloe says the same."""
    db, wh, _ = paths
    sc = spark_catalog(spark, db, wh)
    name = f"chgd{version}"
    t_sql = f"{sc}.db.{name}"
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {sc}.db")
    spark.sql(
        f"CREATE TABLE {t_sql} (id bigint, category string, v double) USING iceberg "
        f"TBLPROPERTIES ('format-version'='{version}', 'write.delete.mode'='merge-on-read')"
    )
    spark.sql(f"INSERT INTO {t_sql} VALUES (1, 'a', 1.0), (2, 'b', 2.0), (3, 'a', 3.0)")
    first = spark.sql(f"SELECT snapshot_id FROM {t_sql}.snapshots").collect()[0].snapshot_id
    spark.sql(f"DELETE FROM {t_sql} WHERE id = 2")
    cat = icefloe.load_catalog(sc, uri=f"sqlite:///{db}", warehouse=wh)
    t = cat.load_table(f"db.{name}")
    with pytest.raises(Exception, match="Delete files are currently not supported in changelog scans"):
        _java_view(spark, sc, name, None, None)
    with pytest.raises(
        errors.UnsupportedError, match="Delete files are currently not supported in changelog scans"
    ):
        t.changelog()
    # up to the snapshot before the deletes, both answer
    assert _sorted(t.changelog(None, first).to_pylist()) == _java_view(spark, sc, name, None, first)

    # icefloe's own merge-on-read delete: refused too
    t.append(t.scan().to_arrow().slice(0, 1))
    before = t.metadata.current_snapshot_id
    t.delete("id = 1")
    with pytest.raises(errors.UnsupportedError, match="not supported in changelog"):
        t.changes(before)
