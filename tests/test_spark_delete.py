"""``icefloe.spark.delete``: a distributed row-level delete (executors find the rows and
write DVs or position delete files, the driver commits one row delta), checked with Java
Iceberg: Spark on a JDBC catalog over the same SQLite file reads exactly the surviving rows,
and Java's metadata tables show the delete files Java's own merge-on-read would keep (one DV
per data file in v3)."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest

import icefloe
from icefloe import errors
from icefloe.spark import delete
from test_catalog_oracle import paths, spark_catalog  # noqa: F401

pytestmark = pytest.mark.java


def _rows(n: int, offset: int = 0) -> pa.Table:
    ids = pa.array(range(offset, offset + n), pa.int64())
    return pa.table(
        {
            "id": ids,
            "category": pa.array([("a", "b", "c")[i % 3] for i in range(offset, offset + n)], pa.string()),
            "v": pa.array([float(i) / 2 for i in range(offset, offset + n)], pa.float64()),
        }
    )


def _table(cat, name: str, version: int):
    cat.create_namespace_if_not_exists("db")
    t = cat.create_table(
        name,
        _rows(0).schema,
        partition_spec=[("category", "identity")],
        properties={"format-version": str(version)},
    )
    for k in range(3):  # three appends: several data files per partition
        t.append(_rows(400, 400 * k))
    return t


def _ids(rows) -> list[int]:
    return sorted(r["id"] if isinstance(r, dict) else r.id for r in rows)


def _files_under(location: str) -> set[str]:
    root = Path(location.removeprefix("file:"))
    return {str(p) for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("version", [2, 3])
def test_distributed_delete_is_read_by_java(spark, paths, version):  # noqa: F811
    db, wh, _ = paths
    sc = spark_catalog(spark, db, wh)
    cat = icefloe.load_catalog(sc, uri=f"sqlite:///{db}", warehouse=wh)
    t = _table(cat, f"db.t{version}", version)
    expected = set(range(1200))

    r1 = delete(spark, t, "id >= 100 and id < 700 and category != 'c'", parallelism=2)
    gone = {i for i in range(100, 700) if i % 3 != 2}
    assert r1.deleted_rows == len(gone)
    expected -= gone
    assert _ids(t.scan(selected_fields=["id"]).to_arrow().to_pylist()) == sorted(expected)
    assert _ids(spark.table(f"{sc}.db.t{version}").select("id").collect()) == sorted(expected)

    # a second delete touching the same data files: in v3 each file's DV is replaced by a
    # merged one
    r2 = delete(spark, t, "v < 200.0 and category = 'a'", parallelism=3)
    gone2 = {i for i in expected if i < 400 and i % 3 == 0}
    assert r2.deleted_rows == len(gone2)
    expected -= gone2
    assert _ids(spark.table(f"{sc}.db.t{version}").select("id").collect()) == sorted(expected)
    assert t.scan().count() == len(expected)

    deletes = spark.sql(
        f"SELECT file_format, referenced_data_file, record_count FROM {sc}.db.t{version}.delete_files"
    ).collect()
    if version == 3:
        assert r2.delete_files_removed > 0, "the old DVs are replaced"
        assert {d.file_format for d in deletes} == {"PUFFIN"}
        refs = [d.referenced_data_file for d in deletes]
        assert len(refs) == len(set(refs)), "one DV per data file"
        assert sum(d.record_count for d in deletes) == 1200 - len(expected)
    else:
        assert {d.file_format for d in deletes} == {"PARQUET"}
    summary = spark.sql(
        f"SELECT operation, summary FROM {sc}.db.t{version}.snapshots ORDER BY committed_at DESC LIMIT 1"
    ).collect()[0]
    assert summary.operation in ("delete", "overwrite")

    # nothing matches: no snapshot
    before = len(cat.load_table(f"db.t{version}").snapshots())
    assert delete(spark, t, "id > 100000").snapshot_id is None
    assert len(cat.load_table(f"db.t{version}").snapshots()) == before


def test_conflicting_delete_fails_and_leaves_no_files(spark, paths):  # noqa: F811
    db, wh, _ = paths
    sc = spark_catalog(spark, db, wh)
    cat = icefloe.load_catalog(sc, uri=f"sqlite:///{db}", warehouse=wh)
    t = _table(cat, "db.c", 3)
    stale = cat.load_table("db.c")
    delete(spark, t, "category = 'b' and id < 300")
    files_before = _files_under(t.metadata.location)
    metadata_before = t.refresh().metadata_location
    # planned on the stale snapshot: the same data files got DVs meanwhile
    with pytest.raises(errors.ValidationError):
        delete(spark, stale, "category = 'b' and id < 600")
    assert cat.load_table("db.c").metadata_location == metadata_before
    assert _files_under(t.metadata.location) == files_before, "the failed delete's DV files are removed"
    assert _ids(spark.table(f"{sc}.db.c").select("id").collect()) == sorted(
        i for i in range(1200) if not (i % 3 == 1 and i < 300)
    )


def test_bad_requests(spark, paths):  # noqa: F811
    db, wh, _ = paths
    cat = icefloe.load_catalog("bad", uri=f"sqlite:///{db}", warehouse=wh)
    t1 = _table(cat, "db.v1", 1)
    before = cat.load_table("db.v1").metadata_location
    with pytest.raises(errors.ValidationError, match="some, but not all, rows match"):
        delete(spark, t1, "id = 1")  # v1 has no delete files: whole files only
    assert cat.load_table("db.v1").metadata_location == before
    with pytest.raises(ValueError, match="isolation_level"):
        delete(spark, t1, "id = 1", isolation_level="read-committed")
    with pytest.raises(ValueError, match="needs a filter"):
        delete(spark, t1, None)
    with pytest.raises(ValueError, match="from a catalog"):
        delete(spark, icefloe.Table.from_metadata(t1.metadata_location), "id = 1")
    assert os.path.exists(t1.metadata_location.removeprefix("file:"))


def test_spark_overwrite_drops_the_delete_files_too(spark, paths):  # noqa: F811
    """A full overwrite through the data source is Java's overwriteByRowFilter(true): the
    data files and the delete files (here DVs) of the table go."""
    import icefloe.spark

    db, wh, _ = paths
    sc = spark_catalog(spark, db, wh)
    cat = icefloe.load_catalog(sc, uri=f"sqlite:///{db}", warehouse=wh)
    t = _table(cat, "db.ow", 3)
    delete(spark, t, "id < 10")
    assert spark.sql(f"SELECT * FROM {sc}.db.ow.delete_files").count() > 0
    icefloe.spark.register(spark)
    df = spark.createDataFrame([(1, "z", 0.5), (2, "z", 1.5)], "id long, category string, v double")
    df.write.format("icefloe").option("catalog", sc).option("uri", f"sqlite:///{db}").option(
        "warehouse", wh
    ).mode("overwrite").save("db.ow")
    assert sorted((r.id, r.category) for r in spark.table(f"{sc}.db.ow").collect()) == [(1, "z"), (2, "z")]
    assert spark.sql(f"SELECT * FROM {sc}.db.ow.delete_files").count() == 0
    snap = spark.sql(
        f"SELECT operation FROM {sc}.db.ow.snapshots ORDER BY committed_at DESC LIMIT 1"
    ).collect()
    assert snap[0].operation == "overwrite"
