"""A table reads its files through its FileIO: the catalog's for a table loaded through a
catalog, the one for the location's scheme for a table opened from a metadata file. The
bindings take that FileIO; none of them falls back to local disk on its own."""

import os
from urllib.parse import urlparse

import pyarrow as pa
import pytest

import icefloe
from icefloe import _native, errors
from icefloe.table import Table


@pytest.fixture
def catalog(tmp_path):
    cat = icefloe.load_catalog(
        "test", uri=f"sqlite:///{tmp_path / 'catalog.db'}", warehouse=(tmp_path / "wh").as_uri()
    )
    cat.create_namespace("db")
    return cat


SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("cat", pa.string())])


def _table_with_two_appends(catalog):
    t = catalog.create_table("db.t", SCHEMA)
    t.append(pa.table({"id": [1, 2, 3], "cat": ["a", "b", "c"]}, schema=SCHEMA))
    t.append(pa.table({"id": [4, 5], "cat": ["d", "e"]}, schema=SCHEMA))
    return catalog.load_table("db.t")


def _local(path: str) -> str:
    return urlparse(path).path if path.startswith("file:") else path


def _move_manifests_to(io, table):
    """Copies the current snapshot's manifest list and manifests into ``io`` and deletes
    them from disk: only a plan that reads through ``io`` can still find them."""
    snap = table.current_snapshot()
    manifests = [m["manifest_path"] for m in icefloe.read_manifest_list(snap.manifest_list).to_pylist()]
    for path in [snap.manifest_list, *manifests]:
        io.write_new(path, table.io.read(path))
        os.remove(_local(path))


def _paths(tasks):
    return sorted(t.file_path for t in tasks)


def test_a_catalog_table_uses_the_catalog_fileio(catalog):
    table = _table_with_two_appends(catalog)
    # the same FileIO, not merely one of the same kind
    assert table.io == catalog.io
    assert table.io != _native.FileIO.in_memory()


def test_planning_reads_through_the_table_fileio(catalog):
    table = _table_with_two_appends(catalog)
    expected = _paths(table.scan().plan_files())
    assert len(expected) == 2
    md = table.metadata
    rewrites = _native.manifests_to_rewrite(table.io, md)

    memory = _native.FileIO.in_memory()
    _move_manifests_to(memory, table)
    in_memory = Table(md, table.metadata_location, table.catalog, table.identifier, io=memory)
    on_disk = Table(md, table.metadata_location, table.catalog, table.identifier)

    # every planning entry point (plain, streamed, packed, payloads) reads through `io`
    assert _paths(in_memory.scan().plan_files()) == expected
    with in_memory.scan().plan_batches() as stream:
        assert sorted(stream.read_all().column("file_path").to_pylist()) == expected
    assert sorted(
        p for g in in_memory.scan().plan_tasks() for p in g.table.column("file_path").to_pylist()
    ) == (expected)
    assert sum(n for _, n in in_memory.scan().plan_task_payloads()) == 2
    assert in_memory.scan().count() == 5
    assert _native.manifests_to_rewrite(in_memory.io, md) == rewrites

    # the manifests are gone from disk: a table reading the catalog's (local) FileIO fails
    with pytest.raises(errors.IcefloeIOError):
        list(on_disk.scan().plan_files())


def test_a_metadata_file_is_read_through_the_fileio_of_its_scheme():
    # no FileIO for hdfs: a clear error naming the scheme, not a local file not found
    with pytest.raises(errors.UnsupportedError, match="hdfs"):
        Table.from_metadata("hdfs://nn/wh/db/t/metadata/v1.metadata.json")
    with pytest.raises(errors.UnsupportedError, match="hdfs"):
        _native.FileIO("hdfs://nn/wh")


def test_a_table_from_a_metadata_file_gets_the_fileio_of_its_location(catalog):
    table = _table_with_two_appends(catalog)
    opened = Table.from_metadata(table.metadata_location)
    assert _paths(opened.scan().plan_files()) == _paths(table.scan().plan_files())
    assert opened.io != catalog.io


def test_scan_options_or_keywords_not_both(catalog):
    table = _table_with_two_appends(catalog)
    with pytest.raises(errors.InvalidArgumentError, match="not both"):
        _native.plan_scan(table.metadata, _native.ScanOptions(), snapshot_id=1)
    schema, batches, _ = _native.plan_scan(table.metadata, _native.ScanOptions(selected=["id"]), io=table.io)
    assert sum(b.num_rows for b in batches) == 2
    with pytest.raises(TypeError):
        _native.ScanOptions(None)  # keyword-only
