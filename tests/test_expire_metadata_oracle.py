"""Expiry with ``clean_expired_metadata(True)`` against Java's
``ExpireSnapshots.cleanExpiredMetadata(true)``: the same partition specs and schemas are
removed (those no retained snapshot uses; the default spec and current schema stay). One
history with partition and schema evolution is registered twice in a SQLite catalog shared
with Java's ``JdbcCatalog``; icefloe expires one twin, Java the other."""

from __future__ import annotations

import time

import pyarrow as pa
import pytest

from test_catalog_oracle import jident
from test_snapshots_oracle import _catalogs

pytestmark = pytest.mark.java


def _rows(t, start: int, n: int = 20) -> pa.Table:
    cols = {
        "id": pa.array(range(start, start + n), pa.int64()),
        "cat": pa.array([f"c{i % 3}" for i in range(start, start + n)], pa.string()),
    }
    for f in t.schema().fields[2:]:
        cols[f.name] = pa.nulls(n, pa.string())
    return pa.table(cols)


@pytest.mark.parametrize("retain_last", [1, 2, 4])
def test_clean_expired_metadata_as_java(spark, tmp_path, retain_last):
    cat, jcat = _catalogs(spark, tmp_path, f"meta{retain_last}")
    t = cat.create_table(
        "db.t",
        pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("cat", pa.string())]),
        format_version=2,
    )
    with t.update_spec() as u:  # spec 0 is never written with
        u.add_field("id", "bucket[4]")
    t.append(_rows(t, 0))  # spec 1, schema 0
    t.append(_rows(t, 100))
    with t.update_schema() as u:
        u.add_column("note", "string")
    t.append(_rows(t, 200))  # schema 1
    with t.update_spec() as u:
        u.add_identity("cat")
    t.append(_rows(t, 300))  # spec 2
    # remove everything written before spec 2
    old = [task.file_path for task in t.scan().plan_files() if task.spec_id != 2]
    t.delete_files(old)
    with t.update_schema() as u:
        u.add_column("extra", "string")  # schema 2, current
    t.append(_rows(t, 400))

    cat.register_table("db.java", t.metadata_location)
    ours = cat.register_table("db.ours", t.metadata_location)
    older_than = int(time.time() * 1000) + 1
    ours.expire_snapshots().older_than(older_than).retain_last(retain_last).clean_expired_files(
        False
    ).clean_expired_metadata(True).commit()
    jt = jcat.loadTable(jident(spark, "db.java"))
    jt.expireSnapshots().expireOlderThan(older_than).retainLast(retain_last).cleanExpiredFiles(
        False
    ).cleanExpiredMetadata(True).commit()

    jmd = jt.operations().refresh()
    java_specs = sorted(s.specId() for s in jmd.specs())
    java_schemas = sorted(s.schemaId() for s in jmd.schemas())
    ours = cat.load_table("db.ours")
    assert sorted(s.spec_id for s in ours.metadata.specs) == java_specs
    assert sorted(s.schema_id for s in ours.metadata.schemas) == java_schemas
    assert sorted(s.snapshot_id for s in ours.snapshots()) == sorted(s.snapshotId() for s in jmd.snapshots())
    assert 0 not in java_specs, "the history had a spec to clean"
    if retain_last == 1:
        assert java_schemas == [2], "and schemas"
    # and Java reads icefloe's result
    assert sorted(s.specId() for s in jcat.loadTable(jident(spark, "db.ours")).specs().values()) == java_specs
