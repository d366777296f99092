"""``icefloe.spark.merge`` against Spark SQL ``MERGE INTO`` with Java Iceberg on twin tables:
the same rows are appended to two tables in one SQLite catalog; Java merges one
(``write.merge.mode=merge-on-read``), icefloe the other, from the same source; Java then reads
both and must see the same rows. Duplicate source keys must fail as Spark's MERGE does."""

from __future__ import annotations

import pytest

import icefloe
from icefloe import errors
from icefloe.spark import merge
from test_catalog_oracle import paths, spark_catalog  # noqa: F401
from test_spark_delete import _table

pytestmark = pytest.mark.java

_SOURCE_SCHEMA = "id long, category string, v double, op string"


def _twins(spark, paths, version: int, name: str):  # noqa: F811
    db, wh, _ = paths
    sc = spark_catalog(spark, db, wh)
    cat = icefloe.load_catalog(sc, uri=f"sqlite:///{db}", warehouse=wh)
    ours = _table(cat, f"db.{name}_ice", version)
    _table(cat, f"db.{name}_java", version)
    spark.sql(
        f"ALTER TABLE {sc}.db.{name}_java SET TBLPROPERTIES ('write.merge.mode'='merge-on-read',"
        " 'write.update.mode'='merge-on-read', 'write.delete.mode'='merge-on-read')"
    )
    return sc, ours


def _key(row: tuple) -> tuple:
    return tuple((v is not None, v) for v in row)  # NULL keys sort first


def _rows(spark, sc: str, name: str) -> list[tuple]:
    return sorted((tuple(r) for r in spark.table(f"{sc}.db.{name}").collect()), key=_key)


def _source(spark, rows):
    return spark.createDataFrame(rows, _SOURCE_SCHEMA)


_CDC = [
    (1, "a", -1.0, "U"),  # matched: updated
    (2, "b", -2.0, "D"),  # matched: deleted
    (400, "x", -3.0, "U"),  # matched (second append's file)
    (5000, "n", 5.0, "I"),  # not matched: inserted
    (None, "z", 6.0, "I"),  # NULL key: matches nothing, inserted
    (None, "z", 7.0, "I"),  # twice: NULL keys are never duplicates of a target row
    (6000, "n", 8.0, "D"),  # not matched, but the insert's condition excludes it
    (803, "c", 9.0, "U"),
]


@pytest.mark.parametrize("version", [2, 3])
def test_merge_equals_java_merge_into(spark, paths, version):  # noqa: F811
    sc, ours = _twins(spark, paths, version, f"m{version}")
    src = _source(spark, _CDC)
    src.createOrReplaceTempView("cdc_src")
    spark.sql(
        f"""MERGE INTO {sc}.db.m{version}_java t USING cdc_src s ON t.id = s.id
        WHEN MATCHED AND s.op = 'D' THEN DELETE
        WHEN MATCHED THEN UPDATE SET t.category = s.category, t.v = t.v + s.v
        WHEN NOT MATCHED AND s.op != 'D' THEN INSERT (id, category, v) VALUES (s.id, s.category, s.v)"""
    )
    r = merge(
        spark,
        ours,
        src,
        on="t.id = s.id",
        when_matched_delete="s.op = 'D'",
        when_matched_update={"category": "s.category", "v": "t.v + s.v"},
        when_not_matched_insert=("s.op != 'D'", {"id": "s.id", "category": "s.category", "v": "s.v"}),
    )
    assert (r.rows_updated, r.rows_deleted, r.rows_inserted) == (3, 1, 3)
    assert r.delete_files_added > 0 and r.data_files_added > 0
    assert _rows(spark, sc, f"m{version}_ice") == _rows(spark, sc, f"m{version}_java")
    # icefloe's own reader agrees
    ours.refresh()
    mine = sorted((tuple(d.values()) for d in ours.scan().to_arrow().to_pylist()), key=_key)
    assert mine == _rows(spark, sc, f"m{version}_java")
    if version == 3:
        files = spark.sql(f"SELECT referenced_data_file FROM {sc}.db.m3_ice.delete_files").collect()
        assert all(f.referenced_data_file for f in files), "DVs reference their data file"

    # a second merge: UPDATE SET * / INSERT * by join columns, conditioned update clauses in order
    src2 = _source(spark, [(1, "q", 1.5, "U"), (3, "r", 2.5, "U"), (7000, "s", 3.5, "I"), (4, "t", 0.0, "U")])
    src2.createOrReplaceTempView("cdc_src2")
    spark.sql(
        f"""MERGE INTO {sc}.db.m{version}_java t USING (SELECT id, category, v FROM cdc_src2) s ON t.id = s.id
        WHEN MATCHED AND s.v > 2 THEN UPDATE SET *
        WHEN MATCHED AND s.v > 1 THEN UPDATE SET t.v = 100
        WHEN NOT MATCHED THEN INSERT *"""
    )
    r2 = merge(
        spark,
        ours,
        src2.select("id", "category", "v"),
        on=["id"],
        when_matched_update=[("s.v > 2", "*"), ("s.v > 1", {"v": "100"})],
        when_not_matched_insert="*",
    )
    assert (r2.rows_updated, r2.rows_deleted, r2.rows_inserted) == (2, 0, 1)
    assert _rows(spark, sc, f"m{version}_ice") == _rows(spark, sc, f"m{version}_java")
    if version == 3:
        refs = [
            d.referenced_data_file
            for d in spark.sql(f"SELECT referenced_data_file FROM {sc}.db.m3_ice.delete_files").collect()
        ]
        assert len(refs) == len(set(refs)), "one DV per data file"


def test_merge_duplicate_source_keys_fail_as_spark(spark, paths):  # noqa: F811
    sc, ours = _twins(spark, paths, 3, "dup")
    before = ours.metadata.current_snapshot_id
    src = _source(spark, [(10, "a", 1.0, "U"), (10, "b", 2.0, "U"), (9000, "n", 0.0, "I")])
    src.createOrReplaceTempView("dup_src")
    with pytest.raises(Exception, match="MERGE_CARDINALITY_VIOLATION"):
        spark.sql(
            f"""MERGE INTO {sc}.db.dup_java t USING dup_src s ON t.id = s.id
            WHEN MATCHED THEN UPDATE SET t.v = s.v WHEN NOT MATCHED THEN INSERT (id, category, v)
            VALUES (s.id, s.category, s.v)"""
        ).collect()
    with pytest.raises(errors.InvalidArgumentError, match="MERGE_CARDINALITY_VIOLATION"):
        merge(
            spark,
            ours,
            src,
            on=["id"],
            when_matched_update={"v": "s.v"},
            when_not_matched_insert={"id": "s.id", "category": "s.category", "v": "s.v"},
        )
    ours.refresh()
    assert ours.metadata.current_snapshot_id == before

    # a matched clause's condition does not lift the rule (Spark checks before the clauses)
    with pytest.raises(Exception, match="MERGE_CARDINALITY_VIOLATION"):
        spark.sql(
            f"""MERGE INTO {sc}.db.dup_java t USING dup_src s ON t.id = s.id
            WHEN MATCHED AND s.v > 100 THEN DELETE"""
        ).collect()
    with pytest.raises(errors.InvalidArgumentError, match="MERGE_CARDINALITY_VIOLATION"):
        merge(spark, ours, src, on=["id"], when_matched_delete="s.v > 100")

    # duplicate keys that match no target row are fine for an insert-only merge, in both
    src3 = _source(spark, [(9001, "a", 1.0, "I"), (9001, "b", 2.0, "I")])
    src3.createOrReplaceTempView("dup_src3")
    spark.sql(
        f"""MERGE INTO {sc}.db.dup_java t USING dup_src3 s ON t.id = s.id
        WHEN NOT MATCHED THEN INSERT (id, category, v) VALUES (s.id, s.category, s.v)"""
    )
    r = merge(
        spark,
        ours,
        src3,
        on=["id"],
        when_not_matched_insert={"id": "s.id", "category": "s.category", "v": "s.v"},
    )
    assert r.rows_inserted == 2
    assert _rows(spark, sc, "dup_ice") == _rows(spark, sc, "dup_java")


def test_merge_refuses_bad_requests(spark, paths):  # noqa: F811
    db, wh, _ = paths
    cat = icefloe.load_catalog("mrg", uri=f"sqlite:///{db}", warehouse=wh)
    t = _table(cat, "db.mbad", 3)
    src = _source(spark, [(1, "a", 1.0, "U")])
    with pytest.raises(ValueError, match="at least one clause"):
        merge(spark, t, src, on=["id"])
    with pytest.raises(ValueError, match="does not have: nope"):
        merge(spark, t, src, on=["id"], when_matched_update={"nope": "1"})
    v1 = _table(cat, "db.mv1", 1)
    with pytest.raises(ValueError, match="format version 2"):
        merge(spark, v1, src, on=["id"], when_matched_delete=True)
    # nothing matched and nothing to insert: no commit
    before = t.metadata.current_snapshot_id
    r = merge(spark, t, _source(spark, [(-5, "a", 1.0, "U")]), on=["id"], when_matched_delete=True)
    assert r.snapshot_id is None and t.metadata.current_snapshot_id == before
