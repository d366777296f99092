"""``table.remove_orphan_files`` (Java's ``DeleteOrphanFiles`` rules): on local tables, on S3
(moto, ``scripts/servers.sh start``), and against Java's ``remove_orphan_files`` procedure on
the same table (marked ``java``)."""

from __future__ import annotations

import os
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pyarrow as pa
import pytest

import icefloe
from icefloe.errors import InvalidArgumentError, ValidationError
from servers_env import server_env

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())])
DAY_MS = 24 * 3600 * 1000


def _rows(n0: int, n: int) -> pa.Table:
    return pa.table(
        {"id": pa.array(range(n0, n0 + n), pa.int64()), "name": [f"r{i}" for i in range(n0, n0 + n)]}
    )


def _now_ms() -> int:
    return int(time.time() * 1000)


def _local(location: str) -> Path:
    return Path(location.removeprefix("file://").removeprefix("file:"))


def _age_all(folder: Path, ms_ago: int) -> None:
    """Makes every file under ``folder`` look last modified ``ms_ago`` ago."""
    t = (_now_ms() - ms_ago) / 1000
    for p in folder.rglob("*"):
        if p.is_file():
            os.utime(p, (t, t))


def _table(catalog, name: str, version: int = 3):
    t = catalog.create_table(name, SCHEMA, properties={"format-version": str(version)})
    t.append(_rows(0, 10))
    t.append(_rows(10, 5))
    t.delete("id < 3")  # a DV (v3) or a position delete file (v2)
    return catalog.load_table(name)


def _paths(locations) -> set[str]:
    """Locations as paths (``file:`` forms and plain paths compare alike)."""
    return {"/" + loc.split(":", 1)[-1].lstrip("/") if loc.startswith("file:") else loc for loc in locations}


@pytest.mark.parametrize("version", [2, 3])
def test_local_orphans_found_and_deleted_and_the_table_intact(tmp_path, version):
    catalog = icefloe.load_catalog(
        "o", uri=f"sqlite:///{tmp_path}/c.db", warehouse=(tmp_path / "wh").as_uri()
    )
    catalog.create_namespace("db")
    t = _table(catalog, "db.t", version)
    root = _local(t.metadata.location)
    # a table nested in this one's location, and one whose location shares its prefix
    nested = catalog.create_table("db.nested", SCHEMA, location=t.metadata.location + "/nested")
    nested.append(_rows(0, 3))
    sibling = catalog.create_table("db.sib", SCHEMA, location=t.metadata.location + "tt")
    sibling.append(_rows(0, 3))
    orphans = {
        root / "data" / "orphan.parquet",
        root / "data" / "deep" / "a=1" / "orphan2.parquet",
        root / "metadata" / "00042-lost.metadata.json",  # a failed commit's metadata
        root / "metadata" / "lost-m0.avro",
    }
    hidden = {root / "data" / "_SUCCESS", root / "data" / ".x.parquet.crc"}
    for p in orphans | hidden:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"x")
    _age_all(tmp_path / "wh", 2 * 3600 * 1000)
    # written during a concurrent commit: newer than the cutoff, so kept
    concurrent = root / "data" / "concurrent.parquet"
    concurrent.write_bytes(b"x")
    cutoff = datetime.now(timezone.utc) - timedelta(hours=1)
    rows_before = t.scan().to_arrow().sort_by("id")

    found = t.remove_orphan_files(older_than=cutoff, dry_run=True)
    assert _paths(found) == {str(p) for p in orphans}
    assert all(p.exists() for p in orphans), "a dry run deletes nothing"
    # the default cutoff (three days ago) finds nothing this young
    assert t.maintenance.remove_orphan_files(dry_run=True) == []

    deleted = t.maintenance.remove_orphan_files(older_than=cutoff)
    assert sorted(deleted) == sorted(found)
    assert not any(p.exists() for p in orphans)
    assert concurrent.exists() and all(p.exists() for p in hidden)
    # every metadata file still referenced is kept, and the table reads the same rows
    t = catalog.load_table("db.t")
    assert _local(t.metadata_location).exists()
    assert t.scan().to_arrow().sort_by("id").equals(rows_before)
    for other in ("db.nested", "db.sib"):
        assert catalog.load_table(other).scan().count() == 3
    # a second run finds nothing
    assert t.remove_orphan_files(older_than=cutoff) == []


def test_location_limits_the_search_and_options_are_checked(tmp_path):
    catalog = icefloe.load_catalog(
        "o", uri=f"sqlite:///{tmp_path}/c.db", warehouse=(tmp_path / "wh").as_uri()
    )
    catalog.create_namespace("db")
    t = _table(catalog, "db.t")
    root = _local(t.metadata.location)
    (root / "data" / "o.parquet").write_bytes(b"x")
    (root / "metadata" / "o.avro").write_bytes(b"x")
    later = _now_ms() + 60_000
    found = t.remove_orphan_files(older_than=later, location=t.metadata.location + "/metadata", dry_run=True)
    assert _paths(found) == {str(root / "metadata" / "o.avro")}
    with pytest.raises(InvalidArgumentError):
        t.remove_orphan_files(older_than=later, prefix_mismatch_mode="none")
    with pytest.raises(InvalidArgumentError):
        t.remove_orphan_files(older_than=later, max_concurrent_deletes=0)
    with pytest.raises(InvalidArgumentError):
        t.remove_orphan_files(older_than=datetime(2020, 1, 1))  # naive datetime
    t.set_properties({"gc.enabled": "false"})
    with pytest.raises(ValidationError, match="gc.enabled"):
        t.remove_orphan_files(older_than=later, dry_run=True)


def test_prefix_mismatch_modes(tmp_path):
    """A data file appended under a ``file:`` location of another authority: the listed file
    has the same path but not the same authority."""
    catalog = icefloe.load_catalog(
        "o", uri=f"sqlite:///{tmp_path}/c.db", warehouse=(tmp_path / "wh").as_uri()
    )
    catalog.create_namespace("db")
    t = catalog.create_table("db.t", SCHEMA)
    root = _local(t.metadata.location)
    t.append(_rows(0, 2))
    data = catalog.load_table("db.t").scan().plan_arrow().column("file_path").to_pylist()[0]
    path = str(_local(data))
    # the table names the file through an authority that the listing does not show
    from test_commit import data_files

    other = root / "data" / "other.parquet"
    other.write_bytes(b"x")
    t.append_files(data_files(t, [{"path": f"file://host{other}", "records": 1}]))
    later = _now_ms() + 60_000
    with pytest.raises(ValidationError, match="host"):
        t.remove_orphan_files(older_than=later, dry_run=True)
    assert t.remove_orphan_files(older_than=later, dry_run=True, prefix_mismatch_mode="ignore") == []
    found = t.remove_orphan_files(older_than=later, dry_run=True, prefix_mismatch_mode="DELETE")
    assert _paths(found) == {str(other)}
    # said to be the same store: not an orphan
    assert t.remove_orphan_files(older_than=later, dry_run=True, equal_authorities={"host": ""}) == []
    assert path


def test_s3_orphans(tmp_path):
    endpoint, bucket = server_env("ICEFLOE_TEST_S3_ENDPOINT", "ICEFLOE_TEST_BUCKET")
    warehouse = f"s3://{bucket}/orphans-{uuid.uuid4().hex[:8]}"
    catalog = icefloe.load_catalog(
        "s3o",
        type="sql",
        uri=f"sqlite:///{tmp_path}/c.db",
        warehouse=warehouse,
        **{
            "s3.endpoint": endpoint,
            "s3.path-style-access": "true",
            "s3.access-key-id": "test",
            "s3.secret-access-key": "test",
            "s3.region": "us-east-1",
        },
    )
    catalog.create_namespace("db")
    t = _table(catalog, "db.t")
    nested = catalog.create_table("db.nested", SCHEMA, location=t.metadata.location + "/nested")
    nested.append(_rows(0, 3))
    sibling = catalog.create_table("db.sib", SCHEMA, location=t.metadata.location + "tt")
    sibling.append(_rows(0, 3))
    loc = t.metadata.location
    orphans = [f"{loc}/data/orphan.parquet", f"{loc}/metadata/00042-lost.metadata.json"]
    for o in orphans + [f"{loc}/data/_SUCCESS"]:
        t.io.write_new(o, b"x")
    # S3 keeps last-modified times in seconds: the cutoff falls between the table's files and
    # a file written by a concurrent commit
    time.sleep(1.5)
    cutoff = _now_ms()
    time.sleep(1.5)
    concurrent = f"{loc}/data/concurrent.parquet"
    t.io.write_new(concurrent, b"x")
    rows_before = t.scan().to_arrow().sort_by("id")
    listed = {f for f, _, _ in t.io.list_files(loc)}
    assert concurrent in listed and not any(f.startswith(loc + "tt/") for f in listed)

    found = t.remove_orphan_files(older_than=cutoff, dry_run=True)
    assert sorted(found) == sorted(orphans)
    assert all(t.io.exists(o) for o in orphans)
    assert sorted(t.remove_orphan_files(older_than=cutoff)) == sorted(orphans)
    assert not any(t.io.exists(o) for o in orphans)
    assert t.io.exists(concurrent) and t.io.exists(f"{loc}/data/_SUCCESS")
    t = catalog.load_table("db.t")
    assert t.scan().to_arrow().sort_by("id").equals(rows_before)
    for other in ("db.nested", "db.sib"):
        assert catalog.load_table(other).scan().count() == 3


@pytest.mark.java
def test_same_orphans_as_javas_procedure(spark, tmp_path):
    """Java's ``remove_orphan_files`` procedure (dry run) and icefloe find the same files on
    the same table: written by icefloe (appends, DVs) and by Java (an insert, a merge-on-read
    delete), with orphans in data/, in a partition folder and in metadata/, hidden files, and
    a file newer than the cutoff. Java's procedure refuses a cutoff less than a day old, so
    the files are aged on disk."""
    from test_catalog_oracle import spark_catalog

    db, wh = str(tmp_path / "c.db"), (tmp_path / "wh").as_uri()
    # Spark's catalog name is the catalog_name of the catalog's rows: icefloe's uses it too
    name = spark_catalog(spark, db, wh)
    catalog = icefloe.load_catalog(name, uri=f"sqlite:///{db}", warehouse=wh)
    catalog.create_namespace("db")
    t = catalog.create_table(
        "db.t",
        SCHEMA,
        partition_spec=[("id", "bucket[2]")],
        properties={"format-version": "3", "write.delete.mode": "merge-on-read"},
    )
    t.append(_rows(0, 10))
    t.delete("id < 2")
    spark.sql(f"INSERT INTO {name}.db.t VALUES (100, 'j'), (101, 'k')")
    spark.sql(f"DELETE FROM {name}.db.t WHERE id = 5")
    t = catalog.load_table("db.t")
    t.append(_rows(20, 3))
    t = catalog.load_table("db.t")
    root = _local(t.metadata.location)
    part = next(p for p in (root / "data").iterdir() if p.is_dir())
    for p in [
        root / "data" / "orphan.parquet",
        part / "orphan2.parquet",
        root / "metadata" / "00099-lost.metadata.json",
        root / "metadata" / "snap-1-1-lost.avro",
        root / "data" / "_SUCCESS",
    ]:
        p.write_bytes(b"x")
    _age_all(tmp_path / "wh", 3 * DAY_MS)
    (root / "data" / "young.parquet").write_bytes(b"x")
    cutoff_ms = _now_ms() - 2 * DAY_MS
    cutoff_sql = datetime.fromtimestamp(cutoff_ms / 1000, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")

    spark.conf.set("spark.sql.session.timeZone", "UTC")
    java = spark.sql(
        f"CALL {name}.system.remove_orphan_files(table => 'db.t', "
        f"older_than => TIMESTAMP '{cutoff_sql}', dry_run => true)"
    ).collect()
    java_found = _paths(r[0] for r in java)
    ours = _paths(t.remove_orphan_files(older_than=cutoff_ms - cutoff_ms % 1000, dry_run=True))
    assert ours == java_found
    assert ours == {
        str(root / "data" / "orphan.parquet"),
        str(part / "orphan2.parquet"),
        str(root / "metadata" / "00099-lost.metadata.json"),
        str(root / "metadata" / "snap-1-1-lost.avro"),
    }
