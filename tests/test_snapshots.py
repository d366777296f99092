"""Snapshot management and expiry from Python on the embedded SQLite catalog:
``table.manage_snapshots()`` (branches, tags, retention fields, rollback, set current,
cherry-pick, as a context manager), ``table.expire_snapshots()`` (what it removes and deletes),
``table.snapshots()`` and ``table.history()``."""

from __future__ import annotations

import datetime as dt
import os
import time

import pyarrow as pa
import pytest

import icefloe
from icefloe import _native, errors


@pytest.fixture
def catalog(tmp_path):
    cat = icefloe.load_catalog(
        "test", uri=f"sqlite:///{tmp_path / 'catalog.db'}", warehouse=(tmp_path / "wh").as_uri()
    )
    cat.create_namespace("db")
    return cat


SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False)])


def data_files(table, paths):
    schema = _native.manifest_entries_schema(table.schema(), table.metadata.spec())
    for name in ("status", "snapshot_id", "sequence_number", "file_sequence_number"):
        schema = schema.remove(schema.get_field_index(name))
    rows = [
        {
            "content": 0,
            "file_path": p,
            "file_format": "PARQUET",
            "partition": {},
            "record_count": 1,
            "file_size_in_bytes": 10,
        }
        for p in paths
    ]
    return pa.Table.from_pylist(rows, schema=schema)


def append(table, tmp_path, *names, branch=None):
    paths = []
    for n in names:
        p = tmp_path / f"{n}.parquet"
        p.write_bytes(b"x")
        paths.append(p.as_uri())
    table.append_files(data_files(table, paths), branch=branch)
    return table.metadata.snapshot_by_ref(branch or "main").snapshot_id


def uri_path(uri):
    return uri[len("file://") :] if uri.startswith("file://") else uri


def test_branches_tags_and_rollback(catalog, tmp_path):
    t = catalog.create_table("db.t", SCHEMA)
    s1 = append(t, tmp_path, "a")
    time.sleep(0.01)
    s2 = append(t, tmp_path, "b")
    with t.manage_snapshots() as ms:
        ms.create_tag(s1, "v1", max_ref_age_ms=10_000).create_branch(
            s1, "dev", min_snapshots_to_keep=2, max_snapshot_age_ms=500
        )
    refs = catalog.load_table("db.t").metadata.refs
    assert refs["v1"].snapshot_id == s1 and refs["v1"].max_ref_age_ms == 10_000
    assert refs["dev"].snapshot_id == s1
    assert (refs["dev"].min_snapshots_to_keep, refs["dev"].max_snapshot_age_ms) == (2, 500)

    with pytest.raises(errors.ValidationError):
        t.manage_snapshots().create_tag(s2, "dev").commit()
    with pytest.raises(errors.ValidationError):
        t.manage_snapshots().remove_branch("v1").commit()

    t.manage_snapshots().rollback_to(s1).commit()
    assert t.current_snapshot().snapshot_id == s1
    assert [sid for _, sid in t.history()] == [s1, s2, s1]
    with pytest.raises(errors.ValidationError):
        t.manage_snapshots().rollback_to(s2).commit()
    t.manage_snapshots().set_current_snapshot(s2).commit()
    assert t.current_snapshot().snapshot_id == s2
    ts2 = t.metadata.snapshot_by_id(s2).timestamp_ms
    t.manage_snapshots().rollback_to_timestamp(
        dt.datetime.fromtimestamp(ts2 / 1000, dt.timezone.utc)
    ).commit()
    assert t.current_snapshot().snapshot_id == s1
    t.manage_snapshots().remove_tag("v1").remove_branch("dev").commit()
    assert set(catalog.load_table("db.t").metadata.refs) == {"main"}
    assert [s.snapshot_id for s in t.snapshots()] == [s1, s2]


def test_a_stale_table_object_does_not_overwrite_a_moved_branch(catalog, tmp_path):
    t = catalog.create_table("db.t", SCHEMA)
    s1 = append(t, tmp_path, "a")
    t.manage_snapshots().create_branch(s1, "dev").commit()
    s2 = append(t, tmp_path, "x")
    stale = catalog.load_table("db.t")
    s3 = append(t, tmp_path, "b", branch="dev")
    with pytest.raises(errors.ValidationError):
        stale.manage_snapshots().replace_branch("dev", s2).commit()
    assert catalog.load_table("db.t").metadata.refs["dev"].snapshot_id == s3


def test_cherry_pick_of_a_staged_snapshot(catalog, tmp_path):
    t = catalog.create_table("db.t", SCHEMA)
    append(t, tmp_path, "a")
    staged = append(t, tmp_path, "b", branch="audit")
    main2 = append(t, tmp_path, "c")
    t.manage_snapshots().cherry_pick(staged).commit()
    head = t.current_snapshot()
    assert head.snapshot_id != staged and head.parent_snapshot_id == main2
    assert dict(head.summary)["source-snapshot-id"] == str(staged)


def test_expire_deletes_only_unreachable_files(catalog, tmp_path):
    t = catalog.create_table("db.t", SCHEMA)
    s1 = append(t, tmp_path, "a")
    s2 = append(t, tmp_path, "b")
    t.delete_files([(tmp_path / "a.parquet").as_uri()])
    s3 = t.current_snapshot().snapshot_id
    s4 = append(t, tmp_path, "c")
    t.manage_snapshots().create_tag(s2, "keep").commit()
    old_lists = sorted(t.metadata.snapshot_by_id(s).manifest_list for s in (s1, s3))
    result = t.expire_snapshots().older_than(int(time.time() * 1000) + 1).commit()
    assert sorted(result.removed_snapshot_ids) == sorted([s1, s3])
    assert [s.snapshot_id for s in t.snapshots()] == [s2, s4]
    # a.parquet is still live in s2's manifests (the tag keeps s2), and every manifest is
    # still listed by s2 or s4: only the two manifest lists go
    assert result.data_files == [] and result.manifests == []
    assert sorted(result.manifest_lists) == old_lists
    assert not any(os.path.exists(uri_path(p)) for p in old_lists)
    assert os.path.exists(tmp_path / "a.parquet")

    t.manage_snapshots().remove_tag("keep").commit()
    # the data files were appended from outside the table's location: an expiry deletes
    # them only when told to (see test_failed_writes.py for the default)
    result = (
        t.expire_snapshots()
        .older_than(int(time.time() * 1000) + 1)
        .retain_last(1)
        .delete_outside_location(True)
        .commit()
    )
    assert [s.snapshot_id for s in t.snapshots()] == [s4]
    assert result.data_files == [(tmp_path / "a.parquet").as_uri()]
    assert not os.path.exists(tmp_path / "a.parquet")
    for name in ("b", "c"):
        assert os.path.exists(tmp_path / f"{name}.parquet")
    for f in result.deleted_files():
        assert not os.path.exists(uri_path(f))


def test_expire_reports_failed_deletes_and_takes_max_concurrent_deletes(catalog, tmp_path, caplog):
    """A file the expiry cannot delete is reported in ``failed_deletes`` with its error and
    logged (Java logs it; the expiry is committed by then), and the other files are deleted;
    ``max_concurrent_deletes`` is checked as Java's procedure checks it."""
    t = catalog.create_table("db.t", SCHEMA)
    names = [f"f{i}" for i in range(12)]
    append(t, tmp_path, *names)
    t.delete_files([(tmp_path / f"{n}.parquet").as_uri() for n in names])
    append(t, tmp_path, "live")
    with pytest.raises(errors.InvalidArgumentError, match="max_concurrent_deletes"):
        t.expire_snapshots().max_concurrent_deletes(0)
    # f3 becomes a folder with a file in it: deleting it as a file fails
    blocked = tmp_path / "f3.parquet"
    blocked.unlink()
    blocked.mkdir()
    (blocked / "inside").write_bytes(b"x")
    result = (
        t.expire_snapshots()
        .older_than(int(time.time() * 1000) + 1)
        .retain_last(1)
        .delete_outside_location(True)
        .max_concurrent_deletes(3)
        .commit()
    )
    assert len(result.removed_snapshot_ids) == 2
    assert [f for f, _ in result.failed_deletes] == [blocked.as_uri()]
    assert "f3.parquet" in result.failed_deletes[0][1]
    assert "could not delete 1 file(s)" in caplog.text
    assert blocked.is_dir()
    assert sorted(result.data_files) == sorted(
        (tmp_path / f"{n}.parquet").as_uri() for n in names if n != "f3"
    )
    assert not any((tmp_path / f"{n}.parquet").exists() for n in names if n != "f3")
    assert (tmp_path / "live.parquet").exists()
    assert len(list(t.scan().plan_files())) == 1


def test_expire_by_id_and_gc_disabled(catalog, tmp_path):
    t = catalog.create_table("db.t", SCHEMA)
    s1 = append(t, tmp_path, "a")
    s2 = append(t, tmp_path, "b")
    with pytest.raises(ValueError):
        t.expire_snapshots().retain_last(0)
    r = t.expire_snapshots().by_id(s1).clean_expired_files(False).commit()
    assert r.removed_snapshot_ids == [s1] and r.deleted_files() == []
    assert [s.snapshot_id for s in t.snapshots()] == [s2]
    with pytest.raises(errors.InvalidArgumentError):
        t.expire_snapshots().by_id(s2).commit()
    t.set_properties({"gc.enabled": "false"})
    with pytest.raises(errors.ValidationError):
        t.expire_snapshots().commit()
