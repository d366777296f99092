"""``table.delete(where)``: whole data files removed where every row matches, deletion
vectors (v3) or position delete files (v2) for the rest, one commit; v1 tables lose whole
files only. Java Iceberg (Spark on a JDBC catalog over the same SQLite file) reads the
surviving rows."""

from __future__ import annotations

import pytest

import icefloe
from icefloe import errors
from test_catalog_oracle import paths, spark_catalog  # noqa: F401
from test_spark_delete import _ids, _table

pytestmark = pytest.mark.java


@pytest.mark.parametrize("version", [1, 2, 3])
def test_table_delete(spark, paths, version):  # noqa: F811
    db, wh, _ = paths
    sc = spark_catalog(spark, db, wh)
    cat = icefloe.load_catalog(sc, uri=f"sqlite:///{db}", warehouse=wh)
    t = _table(cat, f"db.d{version}", version)
    live = set(range(1200))

    # every row of the 'a' files matches: they go whole, no delete file is written
    r = t.delete("category = 'a'")
    assert (r.deleted_rows, r.data_files_removed, r.delete_files_added) == (400, 3, 0)
    live -= {i for i in live if i % 3 == 0}
    assert _ids(spark.table(f"{sc}.db.d{version}").select("id").collect()) == sorted(live)
    files = {row.file_path for row in spark.sql(f"SELECT file_path FROM {sc}.db.d{version}.files").collect()}
    assert len(files) == 6

    if version == 1:
        before = cat.load_table(f"db.d{version}").metadata_location
        with pytest.raises(errors.ValidationError):
            t.delete("id < 50")  # would need a delete file
        assert cat.load_table(f"db.d{version}").metadata_location == before
        return

    r = t.delete("id < 50 or id >= 1190")
    gone = {i for i in live if i < 50 or i >= 1190}
    assert r.deleted_rows == len(gone) and r.data_files_removed == 0 and r.delete_files_added > 0
    live -= gone
    assert _ids(spark.table(f"{sc}.db.d{version}").select("id").collect()) == sorted(live)
    assert _ids(t.scan(selected_fields=["id"]).to_arrow().to_pylist()) == sorted(live)
    assert t.delete("id < 0").snapshot_id is None
