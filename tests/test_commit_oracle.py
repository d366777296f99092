"""icefloe's commits against Java Iceberg 1.11.

New-table metadata: icefloe's `MetadataBuilder::new_table` and Java's
`TableMetadata.newTableMetadata` build the same metadata from the same schema, partition spec,
sort order, location and properties (fresh column ids in Java's order, partition field ids from
1000, sort order id 1, persisted default properties), for format versions 1 to 3.

Create-or-replace: `MetadataBuilder::replace` and Java's `TableMetadata.buildReplacement` on the
same base give the same metadata (column ids kept by name, partition field ids kept by source and
transform in v2+, v1's void carry-over, history kept, `main` removed, the base file logged).

Documents are compared as parsed JSON, without `table-uuid` and `last-updated-ms` (random / the
clock).

Commits on one SQLite catalog file opened by icefloe and by Java's `JdbcCatalog`: Java loads the
tables icefloe writes (v1-v3; fast and merge appends, a branch, delete and overwrite by files) and
sees the same snapshots (ids, parents, sequence numbers, summaries, row ids, manifest lists), the
same manifest-list rows and the same planned files at every snapshot; icefloe's summaries and
manifest-list rows equal those of a Java fast append of the same files; icefloe appends to a
Java-created table; Java and icefloe append alternately from stale views without losing any.
"""

from __future__ import annotations

import json

import pytest

from icefloe import _native

pytestmark = pytest.mark.java

NESTED_SCHEMA = {
    "type": "struct",
    "schema-id": 3,
    "identifier-field-ids": [20],
    "fields": [
        {"id": 20, "name": "id", "required": True, "type": "long"},
        {"id": 21, "name": "ts", "required": False, "type": "timestamptz"},
        {
            "id": 22,
            "name": "tags",
            "required": False,
            "type": {
                "type": "list",
                "element-id": 30,
                "element-required": False,
                "element": {
                    "type": "struct",
                    "fields": [
                        {"id": 31, "name": "k", "required": True, "type": "string"},
                        {"id": 32, "name": "v", "required": False, "type": "double"},
                    ],
                },
            },
        },
        {
            "id": 23,
            "name": "attrs",
            "required": False,
            "type": {
                "type": "map",
                "key-id": 40,
                "key": "string",
                "value-id": 41,
                "value-required": True,
                "value": {"type": "list", "element-id": 42, "element-required": True, "element": "int"},
            },
        },
        {
            "id": 24,
            "name": "loc",
            "required": True,
            "type": {
                "type": "struct",
                "fields": [
                    {"id": 50, "name": "lat", "required": True, "type": "float"},
                    {"id": 51, "name": "city", "required": False, "type": "string"},
                ],
            },
        },
        {"id": 25, "name": "price", "required": False, "type": "decimal(10, 2)"},
    ],
}

SPECS = {
    "unpartitioned": {"spec-id": 0, "fields": []},
    "many": {
        "spec-id": 5,
        "fields": [
            {"source-id": 21, "field-id": 1007, "name": "ts_day", "transform": "day"},
            {"source-id": 20, "field-id": 1003, "name": "id_bucket", "transform": "bucket[16]"},
            {"source-id": 51, "field-id": 1001, "name": "city", "transform": "identity"},
            {"source-id": 25, "field-id": 1000, "name": "price_trunc", "transform": "truncate[4]"},
        ],
    },
}

ORDERS = {
    "unsorted": {"order-id": 0, "fields": []},
    "sorted": {
        "order-id": 4,
        "fields": [
            {"transform": "identity", "source-id": 51, "direction": "asc", "null-order": "nulls-first"},
            {"transform": "bucket[4]", "source-id": 20, "direction": "desc", "null-order": "nulls-last"},
        ],
    },
}


def _java_new_table(jvm, schema_json, spec_json, order_json, location, props):
    ib = jvm.org.apache.iceberg
    schema = ib.SchemaParser.fromJson(schema_json)
    spec = ib.PartitionSpecParser.fromJson(schema, spec_json)
    order = ib.SortOrderParser.fromJson(schema, order_json)
    jprops = jvm.java.util.HashMap()
    for k, v in props.items():
        jprops.put(k, v)
    md = ib.TableMetadata.newTableMetadata(schema, spec, order, location, jprops)
    return json.loads(ib.TableMetadataParser.toJson(md))


def _comparable(doc):
    doc = dict(doc)
    for k in ("table-uuid", "last-updated-ms"):
        doc.pop(k, None)
    return doc


@pytest.mark.parametrize("version", [1, 2, 3])
@pytest.mark.parametrize("spec_name", sorted(SPECS))
@pytest.mark.parametrize("order_name", sorted(ORDERS))
def test_new_table_metadata_matches_java(jvm, version, spec_name, order_name):
    schema_json = json.dumps(NESTED_SCHEMA)
    spec_json = json.dumps(SPECS[spec_name])
    order_json = json.dumps(ORDERS[order_name])
    props = {"format-version": str(version), "owner": "me", "commit.retry.num-retries": "7"}
    location = "file:///tmp/warehouse/db/t"
    java = _java_new_table(jvm, schema_json, spec_json, order_json, location, props)
    ours = json.loads(
        _native.new_table_metadata_json(schema_json, spec_json, order_json, location, list(props.items()))
    )
    assert java["format-version"] == version
    assert _comparable(ours) == _comparable(java)
    assert ours["table-uuid"] and ours["last-updated-ms"] > 0


# ---------------------------------------------------------------------------------------------
# create-or-replace: Java's TableMetadata.buildReplacement
# ---------------------------------------------------------------------------------------------

REPLACEMENT_SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [
        # kept by name (ids come from the base), in another order
        {"id": 1, "name": "price", "required": False, "type": "decimal(10, 2)"},
        {"id": 2, "name": "id", "required": True, "type": "long"},
        # new columns
        {"id": 3, "name": "note", "required": False, "type": "string"},
        {
            "id": 4,
            "name": "loc",
            "required": True,
            "type": {
                "type": "struct",
                "fields": [
                    {"id": 5, "name": "city", "required": False, "type": "string"},
                    {"id": 6, "name": "zip", "required": False, "type": "int"},
                ],
            },
        },
    ],
}

REPLACEMENT_SPECS = {
    "unpartitioned": {"spec-id": 0, "fields": []},
    # id bucket[16] exists in the base's spec: it keeps its field id (v2+)
    "overlapping": {
        "spec-id": 0,
        "fields": [
            {"source-id": 2, "field-id": 1000, "name": "id_bucket", "transform": "bucket[16]"},
            {"source-id": 3, "field-id": 1001, "name": "note", "transform": "identity"},
        ],
    },
}


@pytest.mark.parametrize("version", [1, 2, 3])
@pytest.mark.parametrize("spec_name", sorted(REPLACEMENT_SPECS))
@pytest.mark.parametrize("order_name", ["unsorted", "sorted"])
def test_replacement_matches_java_build_replacement(jvm, version, spec_name, order_name):
    ib = jvm.org.apache.iceberg
    base_props = {"format-version": str(version), "keep": "1"}
    java_base = _java_new_table(
        jvm,
        json.dumps(NESTED_SCHEMA),
        json.dumps(SPECS["many"]),
        json.dumps(ORDERS["sorted"]),
        "file:///tmp/w/db/t",
        base_props,
    )
    base_json = json.dumps(java_base)
    base_location = "file:///tmp/w/db/t/metadata/00000-a.metadata.json"
    base = ib.TableMetadataParser.fromJson(base_location, base_json)

    schema_json = json.dumps(REPLACEMENT_SCHEMA)
    spec_json = json.dumps(REPLACEMENT_SPECS[spec_name])
    order = {
        "order-id": 1,
        "fields": [
            {"transform": "identity", "source-id": 3, "direction": "desc", "null-order": "nulls-last"}
        ],
    }
    order_json = json.dumps(order if order_name == "sorted" else ORDERS["unsorted"])
    schema = ib.SchemaParser.fromJson(schema_json)
    spec = ib.PartitionSpecParser.fromJson(schema, spec_json)
    sort = ib.SortOrderParser.fromJson(schema, order_json)
    props = {"new": "2"}
    jprops = jvm.java.util.HashMap()
    for k, v in props.items():
        jprops.put(k, v)
    java = json.loads(
        ib.TableMetadataParser.toJson(
            base.buildReplacement(schema, spec, sort, "file:///tmp/w/db/t2", jprops)
        )
    )
    ours = json.loads(
        _native.replace_table_metadata_json(
            base_json,
            base_location,
            schema_json,
            spec_json,
            order_json,
            "file:///tmp/w/db/t2",
            list(props.items()),
        )
    )

    def comparable(doc):
        doc = _comparable(doc)
        doc["metadata-log"] = [{"metadata-file": e["metadata-file"]} for e in doc.get("metadata-log", [])]
        return doc

    assert comparable(ours) == comparable(java)
    assert ours["metadata-log"][0]["timestamp-ms"] == java_base["last-updated-ms"]


# ---------------------------------------------------------------------------------------------
# commits on a SQLite catalog shared with Java's JdbcCatalog
# ---------------------------------------------------------------------------------------------

import pyarrow as pa  # noqa: E402

import icefloe  # noqa: E402
from test_catalog_oracle import java_catalog, jident  # noqa: E402
from test_commit import data_files  # noqa: E402

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("cat", pa.string())])


@pytest.fixture
def shared(spark, tmp_path):
    db, wh = str(tmp_path / "catalog.db"), (tmp_path / "wh").as_uri()
    cat = icefloe.load_catalog("shared", uri=f"sqlite:///{db}", warehouse=wh)
    cat.create_namespace("db")
    return cat, java_catalog(spark, "shared", db, wh)


def _java_files(jtable, snapshot_id=None):
    scan = jtable.newScan()
    if snapshot_id is not None:
        scan = scan.useSnapshot(snapshot_id)
    out = []
    it = scan.planFiles().iterator()
    while it.hasNext():
        f = it.next().file()
        out.append(
            (f.location(), f.recordCount(), f.fileSizeInBytes(), f.dataSequenceNumber(), f.firstRowId())
        )
    it.close() if hasattr(it, "close") else None
    return sorted(out)


def _our_files(table, snapshot):
    out = []
    for m in icefloe.read_manifest_list(snapshot.manifest_list).to_pylist():
        for e in icefloe.read_manifest(m["manifest_path"], m).to_pylist():
            if e["status"] != 2:
                out.append(
                    (
                        e["file_path"],
                        e["record_count"],
                        e["file_size_in_bytes"],
                        e["sequence_number"],
                        e["first_row_id"],
                    )
                )
    return sorted(out)


# Java's EnvironmentContext: written into every summary once a Spark catalog has started in
# the JVM (as one has when the catalog oracle ran first); they describe Java's process, not
# the table
_JAVA_ENVIRONMENT = {"iceberg-version", "engine-name", "engine-version", "app-id", "app-name"}


def _java_snapshots(jtable):
    out = {}
    for s in jtable.snapshots():
        out[s.snapshotId()] = {
            "parent": s.parentId(),
            "seq": s.sequenceNumber(),
            "operation": s.operation(),
            "summary": {k: v for k, v in dict(s.summary()).items() if k not in _JAVA_ENVIRONMENT},
            "first_row_id": s.firstRowId(),
            "added_rows": s.addedRows(),
            "manifest_list": s.manifestListLocation(),
            "schema_id": s.schemaId(),
        }
    return out


def _our_snapshots(table):
    return {
        s.snapshot_id: {
            "parent": s.parent_snapshot_id,
            "seq": s.sequence_number,
            "operation": s.operation,
            "summary": {k: v for k, v in s.summary.items() if k != "operation"},
            "first_row_id": s.first_row_id,
            "added_rows": s.added_rows,
            "manifest_list": s.manifest_list,
            "schema_id": s.schema_id,
        }
        for s in table.snapshots()
    }


def _java_manifests(jtable, snapshot):
    out = []
    for m in snapshot.allManifests(jtable.io()):
        out.append(
            (
                m.path(),
                m.length(),
                m.partitionSpecId(),
                m.sequenceNumber(),
                m.minSequenceNumber(),
                m.snapshotId(),
                m.addedFilesCount(),
                m.existingFilesCount(),
                m.deletedFilesCount(),
                m.addedRowsCount(),
                m.existingRowsCount(),
                m.deletedRowsCount(),
                m.firstRowId(),
            )
        )
    return out


def _our_manifests(snapshot):
    return [
        (
            m["manifest_path"],
            m["manifest_length"],
            m["partition_spec_id"],
            m["sequence_number"],
            m["min_sequence_number"],
            m["added_snapshot_id"],
            m["added_files_count"],
            m["existing_files_count"],
            m["deleted_files_count"],
            m["added_rows_count"],
            m["existing_rows_count"],
            m["deleted_rows_count"],
            m.get("first_row_id"),
        )
        for m in icefloe.read_manifest_list(snapshot.manifest_list).to_pylist()
    ]


def _rows(paths_records):
    return [{"path": p, "records": r, "partition": {"cat": "x"}} for p, r in paths_records]


@pytest.mark.parametrize("version", [1, 2, 3])
def test_java_reads_icefloe_commits(spark, shared, version):
    cat, jcat = shared
    t = cat.create_table(
        "db.t",
        SCHEMA,
        partition_spec=[("cat", "identity")],
        format_version=version,
        properties={"commit.manifest.min-count-to-merge": "3"},
    )
    t.append_files(data_files(t, _rows([("file:///d/a.parquet", 3), ("file:///d/b.parquet", 4)])))
    t.append_files(data_files(t, _rows([("file:///d/c.parquet", 5)])), merge=True)
    t.append_files(data_files(t, _rows([("file:///d/d.parquet", 6)])), merge=True)  # 3 manifests: merged
    t.append_files(data_files(t, _rows([("file:///d/e.parquet", 7)])), branch="dev")
    t.delete_files(["file:///d/b.parquet"])
    t.overwrite_files(["file:///d/c.parquet"], data_files(t, _rows([("file:///d/f.parquet", 8)])))

    jtable = jcat.loadTable(jident(spark, "db.t"))
    assert jtable.operations().current().metadataFileLocation() == t.metadata_location
    assert _java_snapshots(jtable) == _our_snapshots(t)
    assert [(h.timestampMillis(), h.snapshotId()) for h in jtable.history()] == t.history()
    for s in t.snapshots():
        js = jtable.snapshot(s.snapshot_id)
        assert _java_manifests(jtable, js) == _our_manifests(s)
        assert _java_files(jtable, s.snapshot_id) == _our_files(t, s)
    assert jtable.refs()["dev"].snapshotId() == t.metadata.snapshot_by_ref("dev").snapshot_id
    assert sorted(p for p, *_ in _java_files(jtable)) == [
        "file:///d/a.parquet",
        "file:///d/d.parquet",
        "file:///d/f.parquet",
    ]
    assert jtable.currentSnapshot().operation() == "overwrite"
    assert int(jtable.currentSnapshot().summary()["total-records"]) == 3 + 6 + 8


def _java_data_file(jvm, spec, path, records, cat="x"):
    return (
        jvm.org.apache.iceberg.DataFiles.builder(spec)
        .withPath(path)
        .withFormat("PARQUET")
        .withFileSizeInBytes(records * 10)
        .withRecordCount(records)
        .withPartitionPath(f"cat={cat}")
        .build()
    )


@pytest.mark.parametrize("version", [2, 3])
def test_summaries_and_manifests_match_a_java_append_of_the_same_files(spark, shared, version):
    """The same files appended by Java (fast append) and by icefloe give the same summaries and
    the same manifest-list rows, apart from paths, lengths and ids."""
    cat, jcat = shared
    jvm = spark._jvm
    ours = cat.create_table("db.ours", SCHEMA, partition_spec=[("cat", "identity")], format_version=version)
    ib = jvm.org.apache.iceberg
    schema = ib.SchemaParser.fromJson(ours.schema().to_json())
    spec = ib.PartitionSpecParser.fromJson(schema, ours.metadata.spec().to_json())
    props = jvm.java.util.HashMap()
    props.put("format-version", str(version))
    jtable = jcat.createTable(jident(spark, "db.java"), schema, spec, props)

    batches = [[("file:///d/a.parquet", 3), ("file:///d/b.parquet", 4)], [("file:///d/c.parquet", 5)]]
    for files in batches:
        ours.append_files(data_files(ours, _rows(files)))
        app = jtable.newFastAppend()
        for p, r in files:
            app = app.appendFile(_java_data_file(jvm, spec, p, r))
        app.commit()
    jtable.refresh()

    java_snaps = sorted(
        _java_snapshots(jtable).values(), key=lambda s: s["seq"] * 10**6 + (s["first_row_id"] or 0)
    )
    our_snaps = sorted(
        _our_snapshots(ours).values(), key=lambda s: s["seq"] * 10**6 + (s["first_row_id"] or 0)
    )
    assert len(java_snaps) == len(our_snaps) == len(batches)
    for j, o in zip(java_snaps, our_snaps, strict=True):
        assert o["summary"] == j["summary"]
        assert (o["seq"], o["first_row_id"], o["added_rows"], o["operation"]) == (
            j["seq"],
            j["first_row_id"],
            j["added_rows"],
            j["operation"],
        )
    strip = lambda rows: [r[2:5] + r[6:] for r in rows]  # noqa: E731  (no path, length, snapshot id)
    assert strip(_our_manifests(ours.current_snapshot())) == strip(
        _java_manifests(jtable, jtable.currentSnapshot())
    )
    assert [f[1:] for f in _our_files(ours, ours.current_snapshot())] == [f[1:] for f in _java_files(jtable)]


def test_icefloe_appends_to_a_java_table_and_java_reads_it(spark, shared):
    cat, jcat = shared
    jvm = spark._jvm
    ib = jvm.org.apache.iceberg
    schema = ib.SchemaParser.fromJson(icefloe._native.schema_from_arrow(SCHEMA).to_json())
    spec = ib.PartitionSpec.builderFor(schema).identity("cat").build()
    props = jvm.java.util.HashMap()
    props.put("format-version", "3")
    jtable = jcat.createTable(jident(spark, "db.j"), schema, spec, props)
    jtable.newFastAppend().appendFile(_java_data_file(jvm, spec, "file:///d/j1.parquet", 2)).commit()

    t = cat.load_table("db.j")
    t.append_files(data_files(t, _rows([("file:///d/i1.parquet", 3)])))
    jtable.refresh()
    assert jtable.currentSnapshot().snapshotId() == t.current_snapshot().snapshot_id
    assert jtable.currentSnapshot().parentId() is not None
    assert _java_files(jtable) == _our_files(t, t.current_snapshot())
    assert [p for p, *_ in _java_files(jtable)] == ["file:///d/i1.parquet", "file:///d/j1.parquet"]
    assert jtable.currentSnapshot().firstRowId() == 2
    assert int(jtable.currentSnapshot().summary()["total-records"]) == 5


def test_java_and_icefloe_appends_interleaved_lose_nothing(spark, shared):
    cat, jcat = shared
    jvm = spark._jvm
    t = cat.create_table("db.t", SCHEMA, partition_spec=[("cat", "identity")])
    jtable = jcat.loadTable(jident(spark, "db.t"))
    spec = jtable.spec()
    expected = []
    for i in range(4):
        # each writer starts from a stale view of the table: the commit must retry
        stale = cat.load_table("db.t")
        jtable.newFastAppend().appendFile(_java_data_file(jvm, spec, f"file:///d/j{i}.parquet", 1)).commit()
        stale.append_files(data_files(stale, _rows([(f"file:///d/i{i}.parquet", 1)])))
        expected += [f"file:///d/j{i}.parquet", f"file:///d/i{i}.parquet"]
    jtable.refresh()
    assert sorted(p for p, *_ in _java_files(jtable)) == sorted(expected)
    t = cat.load_table("db.t")
    assert sorted(f[0] for f in _our_files(t, t.current_snapshot())) == sorted(expected)
    assert len(t.snapshots()) == 8
    assert t.metadata.next_row_id == 8
