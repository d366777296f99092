"""``icefloe.spark.update``: a distributed merge-on-read UPDATE (Spark computes the new values,
executors write the new rows and DVs / position deletes, one row delta), read back by Java
Iceberg (Spark on a JDBC catalog over the same SQLite file)."""

from __future__ import annotations

import pytest

import icefloe
from icefloe.spark import update
from test_catalog_oracle import paths, spark_catalog  # noqa: F401
from test_spark_delete import _table

pytestmark = pytest.mark.java


@pytest.mark.parametrize("version", [2, 3])
def test_update_is_read_by_java(spark, paths, version):  # noqa: F811
    db, wh, _ = paths
    sc = spark_catalog(spark, db, wh)
    cat = icefloe.load_catalog(sc, uri=f"sqlite:///{db}", warehouse=wh)
    t = _table(cat, f"db.u{version}", version)
    expected = {i: (("a", "b", "c")[i % 3], i / 2) for i in range(1200)}

    r = update(
        spark, t, "id < 100 OR (id >= 500 AND id < 520)", {"v": "v + 1000", "category": "upper(category)"}
    )
    changed = [i for i in range(1200) if i < 100 or 500 <= i < 520]
    assert r.updated_rows == len(changed) and r.data_files_added > 0 and r.delete_files_added > 0
    for i in changed:
        expected[i] = (expected[i][0].upper(), expected[i][1] + 1000)

    def java_rows():
        return {row.id: (row.category, row.v) for row in spark.table(f"{sc}.db.u{version}").collect()}

    assert java_rows() == expected
    # again on some of the same rows: in v3 their files' DVs are merged, not doubled
    r2 = update(spark, t, "id < 50", {"v": "v * 2"})
    assert r2.updated_rows == 50
    for i in range(50):
        expected[i] = (expected[i][0], expected[i][1] * 2)
    assert java_rows() == expected
    rows = t.scan(selected_fields=["id", "category", "v"]).to_arrow().to_pylist()
    assert {row["id"]: (row["category"], row["v"]) for row in rows} == expected
    if version == 3:
        refs = [
            d.referenced_data_file
            for d in spark.sql(f"SELECT referenced_data_file FROM {sc}.db.u{version}.delete_files").collect()
        ]
        assert len(refs) == len(set(refs)), "one DV per data file"
    assert update(spark, t, "id < 0", {"v": "0"}).snapshot_id is None


def test_update_refuses_bad_requests(spark, paths):  # noqa: F811
    db, wh, _ = paths
    cat = icefloe.load_catalog("upd", uri=f"sqlite:///{db}", warehouse=wh)
    t = _table(cat, "db.bad", 3)
    with pytest.raises(ValueError, match="does not have: nope"):
        update(spark, t, "id = 1", {"nope": "1"})
    with pytest.raises(ValueError, match="at least one column"):
        update(spark, t, "id = 1", {})
    v1 = _table(cat, "db.v1", 1)
    with pytest.raises(ValueError, match="format version 2"):
        update(spark, v1, "id = 1", {"v": "0"})
