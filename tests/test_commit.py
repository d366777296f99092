"""Creating tables and committing changes from Python, on the embedded SQLite catalog:
``create_table`` (icefloe or pyarrow schemas, partition specs and sort orders given as lists),
transactions as context managers, appends, deletes and overwrites by file, snapshots and
history, create-or-replace, and several processes appending at once."""

from __future__ import annotations

import multiprocessing as mp

import pyarrow as pa
import pyarrow.parquet  # noqa: F401  (pa.parquet)
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


ARROW_SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("ts", pa.timestamp("us")),
        pa.field("cat", pa.string()),
        pa.field("tags", pa.list_(pa.string())),
    ]
)


def data_files(table, rows, spec_id=None):
    """A pyarrow table of data-file rows (no entry columns) for ``table``'s spec."""
    spec = table.metadata.spec() if spec_id is None else table.metadata.spec_by_id(spec_id)
    schema = _native.manifest_entries_schema(table.schema(), spec)
    for name in ("status", "snapshot_id", "sequence_number", "file_sequence_number"):
        schema = schema.remove(schema.get_field_index(name))
    out = []
    for r in rows:
        out.append(
            {
                "content": 0,
                "file_path": r["path"],
                "file_format": "PARQUET",
                "partition": r.get("partition", {}),
                "record_count": r["records"],
                "file_size_in_bytes": r.get("size", r["records"] * 10),
                "value_counts": r.get("value_counts"),
            }
        )
    return pa.Table.from_pylist(out, schema=schema)


def live_paths(table):
    snap = table.current_snapshot()
    if snap is None:
        return []
    out = []
    for m in icefloe.read_manifest_list(snap.manifest_list).to_pylist():
        entries = icefloe.read_manifest(m["manifest_path"], m).to_pylist()
        out.extend(e["file_path"] for e in entries if e["status"] != 2)
    return sorted(out)


def test_create_table_from_a_pyarrow_schema(catalog):
    t = catalog.create_table(
        "db.t",
        ARROW_SCHEMA,
        partition_spec=[("ts", "day"), ("cat", "bucket[4]", "cat_b")],
        sort_order=["id", ("ts", "identity", "desc", "nulls-last")],
        properties={"owner": "me"},
    )
    md = t.metadata
    assert md.format_version == 3
    assert [(f.id, f.name, f.required) for f in md.schema().fields] == [
        (1, "id", True),
        (2, "ts", False),
        (3, "cat", False),
        (4, "tags", False),
    ]
    assert md.schema().find_field("tags.element").id == 5
    spec = md.spec()
    assert [(f.source_id, f.field_id, f.name, f.transform) for f in spec.fields] == [
        (2, 1000, "ts_day", "day"),
        (3, 1001, "cat_b", "bucket[4]"),
    ]
    order = md.sort_order()
    assert order.order_id == 1
    assert [(f.source_id, f.direction, f.null_order) for f in order.fields] == [
        (1, "asc", "nulls-first"),
        (2, "desc", "nulls-last"),
    ]
    assert t.properties["owner"] == "me"
    assert t.properties["write.parquet.compression-codec"] == "zstd"
    assert catalog.load_table("db.t").metadata_location == t.metadata_location
    assert t.snapshots() == [] and t.history() == []

    with pytest.raises(errors.AlreadyExistsError):
        catalog.create_table("db.t", ARROW_SCHEMA)
    same = catalog.create_table_if_not_exists("db.t", ARROW_SCHEMA)
    assert same.metadata_location == t.metadata_location
    with pytest.raises(errors.NoSuchNamespaceError):
        catalog.create_table("nope.t", ARROW_SCHEMA)
    v1 = catalog.create_table("db.v1", md.schema(), format_version=1)
    assert v1.metadata.format_version == 1


def test_transactions_append_and_set_properties(catalog):
    t = catalog.create_table("db.t", ARROW_SCHEMA, partition_spec=[("cat", "identity")])
    with t.transaction() as tx:
        tx.set_properties(owner="etl", stage="1")
        tx.append_files(
            data_files(
                t,
                [
                    {"path": "file:///d/a.parquet", "records": 3, "partition": {"cat": "x"}},
                    {"path": "file:///d/b.parquet", "records": 4, "partition": {"cat": "y"}},
                ],
            )
        )
        tx.remove_properties("stage")
    assert t.properties["owner"] == "etl" and "stage" not in t.properties
    snap = t.current_snapshot()
    assert snap.operation == "append"
    assert snap.summary["added-data-files"] == "2"
    assert snap.summary["added-records"] == "7"
    assert snap.summary["changed-partition-count"] == "2"
    assert snap.first_row_id == 0 and snap.added_rows == 7
    assert t.metadata.next_row_id == 7
    assert [s.snapshot_id for s in t.snapshots()] == [snap.snapshot_id]
    assert t.history() == [(snap.timestamp_ms, snap.snapshot_id)]
    assert live_paths(t) == ["file:///d/a.parquet", "file:///d/b.parquet"]
    entries = icefloe.read_manifest(
        icefloe.read_manifest_list(snap.manifest_list).to_pylist()[0]["manifest_path"]
    )
    assert sorted(p["cat"] for p in entries.column("partition").to_pylist()) == ["x", "y"]

    # an error inside the block commits nothing
    before = t.metadata_location
    with pytest.raises(RuntimeError):
        with t.transaction() as tx:
            tx.set_properties(owner="nobody")
            raise RuntimeError("stop")
    assert catalog.load_table("db.t").metadata_location == before

    t.append_files(data_files(t, [{"path": "file:///d/c.parquet", "records": 5, "partition": {"cat": "x"}}]))
    assert len(t.snapshots()) == 2
    assert t.current_snapshot().summary["total-records"] == "12"
    fresh = catalog.load_table("db.t")
    assert fresh.metadata_location == t.metadata_location
    t.set_properties({"a": "1"})
    assert catalog.load_table("db.t").properties["a"] == "1"
    assert t.refresh().properties["a"] == "1"


def test_delete_and_overwrite_files(catalog):
    t = catalog.create_table("db.t", ARROW_SCHEMA, format_version=2)
    t.append_files(data_files(t, [{"path": f"file:///d/{n}.parquet", "records": 1} for n in "abc"]))
    t.delete_files(["file:///d/b.parquet"])
    assert t.current_snapshot().operation == "delete"
    assert live_paths(t) == ["file:///d/a.parquet", "file:///d/c.parquet"]
    with pytest.raises(errors.ValidationError):
        t.delete_files(["file:///d/b.parquet"])
    t.overwrite_files(["file:///d/a.parquet"], data_files(t, [{"path": "file:///d/z.parquet", "records": 9}]))
    snap = t.current_snapshot()
    assert snap.operation == "overwrite"
    assert snap.summary["total-records"] == "10"
    assert live_paths(t) == ["file:///d/c.parquet", "file:///d/z.parquet"]


def test_row_filter_commits_need_a_filter_and_a_catalog_table(catalog, tmp_path):
    t = catalog.create_table("db.f", ARROW_SCHEMA, format_version=2)
    t.append_files(data_files(t, [{"path": "file:///d/a.parquet", "records": 1}]))
    # None is not "every row": the caller must say what to remove
    with pytest.raises(errors.InvalidArgumentError, match="row filter is required"):
        t.delete_where(None)
    with pytest.raises(errors.InvalidArgumentError, match="row filter is required"):
        t.overwrite_where(None, [])
    assert live_paths(t) == ["file:///d/a.parquet"]
    opened = icefloe.Table.from_metadata(t.metadata_location)
    with pytest.raises(errors.InvalidArgumentError, match="opened from a file"):
        opened.delete_where("true")
    with pytest.raises(errors.InvalidArgumentError, match="opened from a file"):
        opened.manage_snapshots().create_tag("x", t.current_snapshot().snapshot_id).commit()


def test_append_to_a_branch_and_merge_append(catalog):
    t = catalog.create_table("db.t", ARROW_SCHEMA, properties={"commit.manifest.min-count-to-merge": "2"})
    t.append_files(data_files(t, [{"path": "file:///d/a.parquet", "records": 1}]))
    main_id = t.current_snapshot().snapshot_id
    t.append_files(data_files(t, [{"path": "file:///d/b.parquet", "records": 1}]), branch="dev")
    assert t.current_snapshot().snapshot_id == main_id
    dev = t.metadata.snapshot_by_ref("dev")
    assert dev.parent_snapshot_id == main_id
    t.append_files(data_files(t, [{"path": "file:///d/c.parquet", "records": 1}]), merge=True)
    snap = t.current_snapshot()
    assert len(icefloe.read_manifest_list(snap.manifest_list)) == 1
    assert snap.summary["manifests-replaced"] == "1"
    assert live_paths(t) == ["file:///d/a.parquet", "file:///d/c.parquet"]


def test_create_or_replace_keeps_history(catalog):
    t = catalog.create_table("db.t", ARROW_SCHEMA, format_version=2)
    t.append_files(data_files(t, [{"path": "file:///d/a.parquet", "records": 1}]))
    schema = pa.schema([pa.field("cat", pa.string()), pa.field("n", pa.int32())])
    r = catalog.create_or_replace_table("db.t", schema, partition_spec=[("cat", "identity")])
    md = r.metadata
    assert md.current_snapshot_id is None
    assert len(md.snapshots) == 1
    assert md.schema().find_field("cat").id == 3  # kept from the old schema
    assert md.schema().find_field("n").id == 6  # after the old last column id (5)
    assert md.default_spec_id == 1
    new = catalog.create_or_replace_table("db.other", schema)
    assert new.metadata.format_version == 3


def _append_worker(args):
    uri, wh, worker, n = args
    cat = icefloe.load_catalog("test", uri=uri, warehouse=wh)
    for i in range(n):
        t = cat.load_table("db.t")
        # a stale table object is fine: the commit retries on the newest state
        t.append_files(data_files(t, [{"path": f"file:///d/w{worker}-{i}.parquet", "records": worker + 1}]))
    return worker


def test_processes_appending_at_once_lose_nothing(tmp_path):
    uri, wh = f"sqlite:///{tmp_path / 'catalog.db'}", (tmp_path / "wh").as_uri()
    cat = icefloe.load_catalog("test", uri=uri, warehouse=wh)
    cat.create_namespace("db")
    cat.create_table(
        "db.t",
        ARROW_SCHEMA,
        properties={
            "commit.retry.num-retries": "100",
            "commit.retry.min-wait-ms": "5",
            "commit.retry.max-wait-ms": "50",
        },
    )
    workers, n = 4, 5
    with mp.get_context("spawn").Pool(workers) as pool:
        assert sorted(pool.map(_append_worker, [(uri, wh, w, n) for w in range(workers)])) == list(
            range(workers)
        )
    t = cat.load_table("db.t")
    expected = sorted(f"file:///d/w{w}-{i}.parquet" for w in range(workers) for i in range(n))
    assert live_paths(t) == expected
    snaps = t.snapshots()
    assert len(snaps) == workers * n
    assert sorted(s.sequence_number for s in snaps) == list(range(1, workers * n + 1))
    assert t.metadata.next_row_id == sum((w + 1) * n for w in range(workers))
    assert t.current_snapshot().summary["total-data-files"] == str(workers * n)


def test_data_files_from_the_writer_are_committed(catalog):
    from icefloe.executor.write import write_data_files

    t = catalog.create_table("db.w", ARROW_SCHEMA, partition_spec=[("cat", "identity")])
    data = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "cat": ["a", "b", "a"]})
    files = write_data_files(t.metadata, data, task_id=1)
    t.append_files(files)
    snap = t.current_snapshot()
    assert snap.summary["added-records"] == "3"
    assert snap.summary["added-data-files"] == "2"
    assert snap.summary["changed-partition-count"] == "2"
    assert live_paths(t) == sorted(files.column("file_path").to_pylist())
    read = pa.concat_tables(pa.parquet.read_table(p.removeprefix("file://")) for p in live_paths(t))
    assert sorted(read.column("id").to_pylist()) == [1, 2, 3]
