//! Table metadata files: the fixtures under `tests/fixtures/metadata/`, version defaults,
//! round trips, and errors that name the file and the field.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use icefloe::io::LocalFileIO;
use icefloe::spec::partition::PartitionField;
use icefloe::spec::snapshot::{Operation, SnapshotRefType};
use icefloe::spec::sort::SortOrder;
use icefloe::spec::table_metadata::TableMetadata;
use icefloe::spec::types::{NestedField, PrimitiveType, StructType};
use icefloe::spec::Transform;
use icefloe::Error;
use serde_json::{json, Value};

fn fixture_path(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/metadata")
        .join(name)
        .display()
        .to_string()
}

fn fixture_json(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixture_path(name)).unwrap()).unwrap()
}

fn read_fixture(name: &str) -> TableMetadata {
    TableMetadata::read(&LocalFileIO, &fixture_path(name)).unwrap()
}

/// A fresh temporary directory for this test process.
fn temp_dir() -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let d = std::env::temp_dir().join(format!(
        "icefloe-tm-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Writes `text` to a metadata file and reads it back through `TableMetadata::read`,
/// returning the error; checks that the error names that file.
fn read_err_text(text: &str) -> Error {
    let dir = temp_dir();
    let path = dir.join("00001-x.metadata.json").display().to_string();
    std::fs::write(&path, text).unwrap();
    let e = TableMetadata::read(&LocalFileIO, &path).unwrap_err();
    assert_eq!(
        e.location().map(|l| l.file.as_str()),
        Some(path.as_str()),
        "{e:?}"
    );
    assert!(e.to_string().contains(&path), "{e}");
    std::fs::remove_dir_all(dir).unwrap();
    e
}

fn read_err(v: &Value) -> Error {
    read_err_text(&v.to_string())
}

fn field(e: &Error) -> &str {
    &e.location().unwrap().field
}

fn remove(v: &mut Value, key: &str) {
    v.as_object_mut().unwrap().remove(key);
}

fn round_trip(m: &TableMetadata) -> Value {
    let text = m.to_json_string(true);
    let back = TableMetadata::from_json_str(&text).unwrap();
    assert_eq!(&back, m);
    let compact = TableMetadata::from_json_str(&m.to_json_string(false)).unwrap();
    assert_eq!(&compact, m);
    serde_json::from_str(&text).unwrap()
}

#[test]
fn v1_deprecated_fields_get_appendix_e_defaults() {
    let m = read_fixture("v1-deprecated.metadata.json");
    assert_eq!(m.format_version, 1);
    assert_eq!(m.table_uuid, None);
    assert_eq!(m.last_sequence_number, 0);
    // single schema becomes the schema list, current id taken from it
    assert_eq!(m.schemas.len(), 1);
    assert_eq!(m.current_schema_id, 0);
    assert_eq!(m.current_schema().unwrap().fields().len(), 4);
    // partition-spec field list becomes spec 0, field ids assigned from 1000
    assert_eq!(m.default_spec_id, 0);
    let spec = m.default_spec().unwrap();
    assert_eq!(
        spec.fields[0],
        PartitionField::new(3, 1000, "ts_day", Transform::Day)
    );
    assert_eq!(
        spec.fields[1],
        PartitionField::new(2, 1001, "category_bucket", Transform::Bucket(8))
    );
    assert_eq!(m.last_partition_id, 1001);
    // unsorted order
    assert_eq!(m.sort_orders, vec![SortOrder::unsorted()]);
    assert_eq!(m.default_sort_order_id, 0);
    // snapshot sequence numbers default to 0; embedded manifests kept
    assert!(m.snapshots.iter().all(|s| s.sequence_number == 0));
    assert_eq!(m.snapshots[0].manifests.as_ref().unwrap().len(), 2);
    assert_eq!(m.snapshots[0].summary, None);
    // main branch created for the current snapshot
    let main = m.snapshot_ref("main").unwrap();
    assert_eq!(main.kind, SnapshotRefType::Branch);
    assert_eq!(main.snapshot_id, 3051729675574597004);
    assert_eq!(
        m.snapshot_by_ref("main").unwrap().operation(),
        Some(Operation::Append)
    );
    assert_eq!(m.property("commit.retry.num-retries"), Some("4"));
}

#[test]
fn v1_last_partition_id_defaults_to_999_when_unpartitioned() {
    let mut v = fixture_json("v1-deprecated.metadata.json");
    v["partition-spec"] = json!([]);
    let m = TableMetadata::from_json_value(&v).unwrap();
    assert_eq!(m.last_partition_id, 999);
    assert!(m.default_spec().unwrap().is_unpartitioned());
}

#[test]
fn v1_round_trip_writes_deprecated_fields() {
    let m = read_fixture("v1-deprecated.metadata.json");
    let out = round_trip(&m);
    assert_eq!(out["schema"], m.current_schema().unwrap().to_json());
    assert_eq!(
        out["partition-spec"],
        m.default_spec().unwrap().fields_to_json()
    );
    assert_eq!(out["partition-spec"][0]["field-id"], 1000);
    assert!(out.get("schemas").is_some());
    assert!(out.get("last-sequence-number").is_none());
    assert!(out.get("next-row-id").is_none());
    // Java writes a missing v1 uuid as null
    assert_eq!(out.get("table-uuid"), Some(&Value::Null));
    for s in out["snapshots"].as_array().unwrap() {
        assert!(s.get("sequence-number").is_none(), "{s}");
    }
    assert_eq!(
        out["snapshots"][0]["manifests"].as_array().unwrap().len(),
        2
    );
}

#[test]
fn v1_prefers_lists_over_deprecated_fields() {
    let mut v = fixture_json("v1-deprecated.metadata.json");
    v["schemas"] = json!([{"type": "struct", "schema-id": 7, "fields": [
        {"id": 1, "name": "only", "required": true, "type": "int"}]}]);
    v["current-schema-id"] = json!(7);
    v["partition-specs"] = json!([{"spec-id": 3, "fields": []}]);
    v["default-spec-id"] = json!(3);
    let m = TableMetadata::from_json_value(&v).unwrap();
    assert_eq!(m.current_schema().unwrap().schema_id(), 7);
    assert_eq!(m.current_schema().unwrap().fields()[0].name, "only");
    assert_eq!(m.default_spec().unwrap().spec_id, 3);
    assert_eq!(m.partition_specs.len(), 1);
}

#[test]
fn v2_fixture_accessors() {
    let m = read_fixture("v2-full.metadata.json");
    assert_eq!(m.format_version, 2);
    assert_eq!(m.last_sequence_number, 34);
    assert_eq!(m.current_schema().unwrap().schema_id(), 1);
    assert_eq!(m.schema_by_id(0).unwrap().fields().len(), 3);
    assert!(m.schema_by_id(9).is_none());
    assert_eq!(m.spec_by_id(0).unwrap().fields.len(), 1);
    assert_eq!(m.default_spec().unwrap().fields.len(), 2);
    assert_eq!(m.default_sort_order().unwrap().order_id, 1);
    assert_eq!(
        m.current_snapshot().unwrap().snapshot_id,
        3055729675574597006
    );
    assert_eq!(
        m.current_snapshot().unwrap().operation(),
        Some(Operation::Overwrite)
    );
    assert_eq!(
        m.snapshot_by_ref("audit").unwrap().snapshot_id,
        3055729675574597005
    );
    assert_eq!(
        m.snapshot_by_ref("release-1").unwrap().snapshot_id,
        3055729675574597004
    );
    assert!(m.snapshot_by_ref("nope").is_none());
    let audit = m.snapshot_ref("audit").unwrap();
    assert_eq!(
        (
            audit.min_snapshots_to_keep,
            audit.max_snapshot_age_ms,
            audit.max_ref_age_ms
        ),
        (Some(3), Some(86400000), Some(604800000))
    );
    assert_eq!(
        m.snapshot_ref("release-1").unwrap().kind,
        SnapshotRefType::Tag
    );
    // time travel by the snapshot log
    assert_eq!(
        m.snapshot_as_of(1700000150000).unwrap().snapshot_id,
        3055729675574597005
    );
    assert_eq!(
        m.snapshot_as_of(1700000100000).unwrap().snapshot_id,
        3055729675574597005
    );
    assert_eq!(
        m.snapshot_as_of(i64::MAX).unwrap().snapshot_id,
        3055729675574597006
    );
    assert!(matches!(
        m.snapshot_as_of(1).unwrap_err(),
        Error::NotFound { .. }
    ));
    let ids: Vec<i64> = m
        .ancestors_of(3055729675574597006)
        .iter()
        .map(|s| s.snapshot_id)
        .collect();
    assert_eq!(
        ids,
        [
            3055729675574597006,
            3055729675574597005,
            3055729675574597004
        ]
    );
    assert!(m.ancestors_of(42).is_empty());
    assert_eq!(m.property("owner"), Some("analytics"));
    assert_eq!(m.property("missing"), None);
    assert_eq!(m.statistics[0].blob_metadata[0].fields, vec![2]);
    assert_eq!(m.partition_statistics[0].file_size_in_bytes, 2048);
    assert_eq!(m.metadata_log.len(), 2);
    let summary = m.snapshots[0].summary.as_ref().unwrap();
    assert_eq!(summary.get("engine-name"), Some("spark"));
    // partition tuple type of the default spec
    let t = m
        .default_spec()
        .unwrap()
        .partition_type(m.current_schema().unwrap())
        .unwrap();
    assert_eq!(
        t,
        StructType::new(vec![
            NestedField::optional(1000, "placed_at_day", PrimitiveType::Int.into()),
            NestedField::optional(1001, "customer_bucket", PrimitiveType::Int.into()),
        ])
    );
}

#[test]
fn v2_round_trip_omits_v1_fields_and_keeps_java_order() {
    let m = read_fixture("v2-full.metadata.json");
    let out = round_trip(&m);
    assert!(out.get("schema").is_none());
    assert!(out.get("partition-spec").is_none());
    assert!(out.get("next-row-id").is_none());
    assert_eq!(out["last-sequence-number"], 34);
    assert_eq!(out["snapshots"][2]["sequence-number"], 34);
    let keys: Vec<&str> = out
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "format-version",
            "table-uuid",
            "location",
            "last-sequence-number",
            "last-updated-ms",
            "last-column-id",
            "current-schema-id",
            "schemas",
            "default-spec-id",
            "partition-specs",
            "last-partition-id",
            "default-sort-order-id",
            "sort-orders",
            "properties",
            "current-snapshot-id",
            "refs",
            "snapshots",
            "statistics",
            "partition-statistics",
            "snapshot-log",
            "metadata-log"
        ]
    );
    // the fixture's own content survives (compare as values, key order aside)
    let input = fixture_json("v2-full.metadata.json");
    for key in [
        "refs",
        "snapshots",
        "statistics",
        "partition-statistics",
        "snapshot-log",
        "metadata-log",
        "partition-specs",
        "sort-orders",
        "properties",
    ] {
        assert_eq!(out[key], input[key], "{key}");
    }
}

#[test]
fn v2_without_refs_gets_main_branch_and_no_snapshot_writes_minus_one() {
    let mut v = fixture_json("v2-full.metadata.json");
    remove(&mut v, "refs");
    let m = TableMetadata::from_json_value(&v).unwrap();
    assert_eq!(m.refs.len(), 1);
    assert_eq!(
        m.snapshot_by_ref("main").unwrap().snapshot_id,
        3055729675574597006
    );

    let mut v = fixture_json("v2-full.metadata.json");
    remove(&mut v, "refs");
    v["current-snapshot-id"] = json!(-1);
    let m = TableMetadata::from_json_value(&v).unwrap();
    assert_eq!(m.current_snapshot_id, None);
    assert!(m.current_snapshot().is_none());
    assert!(m.refs.is_empty());
    let out = round_trip(&m);
    assert_eq!(out["current-snapshot-id"], -1);
}

#[test]
fn refs_without_main_are_kept_as_written() {
    // Java's TableMetadataParser makes a `main` branch only when there is no `refs` field
    let mut v = fixture_json("v2-full.metadata.json");
    remove(&mut v["refs"], "main");
    let m = TableMetadata::from_json_value(&v).unwrap();
    let names: Vec<&str> = m.refs.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["release-1", "audit"]);
    assert!(m.snapshot_ref("main").is_none());
    assert_eq!(m.current_snapshot_id, Some(3055729675574597006));
    assert_eq!(
        m.current_snapshot().unwrap().snapshot_id,
        3055729675574597006
    );
    let out = round_trip(&m);
    assert!(out["refs"].get("main").is_none(), "{}", out["refs"]);
    assert_eq!(out["current-snapshot-id"], json!(3055729675574597006i64));

    // an empty `refs` likewise
    let mut v = fixture_json("v2-full.metadata.json");
    v["refs"] = json!({});
    let m = TableMetadata::from_json_value(&v).unwrap();
    assert!(m.refs.is_empty());
    assert!(m.current_snapshot().is_some());
    assert_eq!(round_trip(&m)["refs"], json!({}));

    // `"refs": null` is not an absent field: Java refuses it as a non-object, and likewise
    // the other lists and objects it looks up with `has`
    for key in [
        "refs",
        "snapshots",
        "properties",
        "statistics",
        "partition-statistics",
        "schemas",
        "partition-specs",
        "sort-orders",
    ] {
        let mut v = fixture_json("v2-full.metadata.json");
        v[key] = Value::Null;
        let e = read_err(&v);
        assert!(matches!(e, Error::InvalidMetadata { .. }), "{key}: {e:?}");
        assert_eq!(field(&e), key);
    }
}

#[test]
fn negative_current_snapshot_ids_name_no_snapshot() {
    // Java accepts a negative id that names no snapshot, as "no current snapshot", when
    // `refs` (without main) is written
    let mut v = fixture_json("v2-full.metadata.json");
    remove(&mut v["refs"], "main");
    v["current-snapshot-id"] = json!(-5);
    let m = TableMetadata::from_json_value(&v).unwrap();
    assert_eq!(m.current_snapshot_id, None);
    assert_eq!(m.refs.len(), 2);
    assert_eq!(round_trip(&m)["current-snapshot-id"], -1);
    // without `refs` Java makes a main branch of it, naming no snapshot
    remove(&mut v, "refs");
    assert_eq!(field(&read_err(&v)), "current-snapshot-id");
    // with a main branch that is a mismatch, as in Java
    let mut v = fixture_json("v2-full.metadata.json");
    v["current-snapshot-id"] = json!(-5);
    assert_eq!(field(&read_err(&v)), "refs.main");
}

#[test]
fn snapshot_sequence_number_0_is_not_written() {
    // a v2 table's snapshot from its v1 days has sequence number 0, which Java omits
    let mut v = fixture_json("v2-full.metadata.json");
    remove(&mut v["snapshots"][0], "sequence-number");
    let m = TableMetadata::from_json_value(&v).unwrap();
    assert_eq!(m.snapshots[0].sequence_number, 0);
    let out = round_trip(&m);
    assert!(out["snapshots"][0].get("sequence-number").is_none());
    assert_eq!(out["snapshots"][2]["sequence-number"], 34);
    let v1 = round_trip(&read_fixture("v1-deprecated.metadata.json"));
    for s in v1["snapshots"].as_array().unwrap() {
        assert!(s.get("sequence-number").is_none(), "{s}");
    }
}

#[test]
fn schemas_must_say_they_are_structs() {
    // Java's SchemaParser reads a schema's `type` first and refuses anything but "struct"
    let mut v = fixture_json("v2-full.metadata.json");
    remove(&mut v["schemas"][1], "type");
    let e = read_err(&v);
    assert!(matches!(e, Error::InvalidMetadata { .. }), "{e:?}");
    assert_eq!(field(&e), "schemas[1].type");
    let mut v = fixture_json("v2-full.metadata.json");
    v["schemas"][1]["type"] = json!("map");
    assert_eq!(field(&read_err(&v)), "schemas[1].type");
    // the deprecated v1 `schema` too
    let mut v = fixture_json("v1-deprecated.metadata.json");
    remove(&mut v["schema"], "type");
    assert_eq!(field(&read_err(&v)), "schema.type");
    // and nested types: a list without its `type`
    let mut v = fixture_json("v2-full.metadata.json");
    v["schemas"][0]["fields"][1]["type"] =
        json!({"element-id": 9, "element": "string", "element-required": true});
    assert_eq!(field(&read_err(&v)), "schemas[0].fields[1].type.type");
}

#[test]
fn v3_fixture_row_lineage_encryption_and_transforms() {
    let m = read_fixture("v3-lineage.metadata.json");
    assert_eq!(m.format_version, 3);
    assert_eq!(m.next_row_id, 375);
    let s = m.current_snapshot().unwrap();
    assert_eq!(
        (s.first_row_id, s.added_rows, s.key_id.as_deref()),
        (Some(250), Some(125), Some("5f819b"))
    );
    assert_eq!(m.encryption_keys.len(), 2);
    assert_eq!(m.encryption_keys[0].encrypted_key_metadata, "aWNlYmVyZwo=");
    assert_eq!(
        m.encryption_keys[0].encrypted_by_id.as_deref(),
        Some("kms-root")
    );
    let spec = m.default_spec().unwrap();
    assert_eq!(spec.fields[1].source_ids, vec![2, 3]);
    assert_eq!(
        spec.fields[1].transform,
        Transform::Unknown("geohash[6]".into())
    );
    let t = spec.partition_type(m.current_schema().unwrap()).unwrap();
    assert_eq!(t.fields[1].field_type, PrimitiveType::String.into());

    let out = round_trip(&m);
    assert_eq!(out["next-row-id"], 375);
    assert_eq!(
        out["encryption-keys"],
        fixture_json("v3-lineage.metadata.json")["encryption-keys"]
    );
    let f = &out["partition-specs"][0]["fields"];
    assert_eq!(f[1]["source-ids"], json!([2, 3]));
    assert!(f[1].get("source-id").is_none());
    assert_eq!(f[0]["source-id"], 4);
    assert!(f[0].get("source-ids").is_none());
    assert_eq!(f[1]["transform"], "geohash[6]");
    assert_eq!(out["snapshots"][1]["first-row-id"], 250);
    assert_eq!(out["snapshots"][1]["added-rows"], 125);
    assert_eq!(out["snapshots"][1]["key-id"], "5f819b");
}

#[test]
fn v3_no_current_snapshot_is_written_as_null() {
    let mut v = fixture_json("v3-lineage.metadata.json");
    remove(&mut v, "refs");
    v["current-snapshot-id"] = json!(-1); // Java's old marker is still accepted
    let m = TableMetadata::from_json_value(&v).unwrap();
    assert_eq!(m.current_snapshot_id, None);
    let out = round_trip(&m);
    assert_eq!(out["current-snapshot-id"], Value::Null);
    assert!(out.as_object().unwrap().contains_key("current-snapshot-id"));
}

#[test]
fn v3_snapshots_without_row_ids_are_accepted() {
    // snapshots from before an upgrade to v3 have no first-row-id / added-rows
    let mut v = fixture_json("v3-lineage.metadata.json");
    for s in v["snapshots"].as_array_mut().unwrap() {
        remove(s, "first-row-id");
        remove(s, "added-rows");
    }
    let m = TableMetadata::from_json_value(&v).unwrap();
    assert!(m.snapshots.iter().all(|s| s.first_row_id.is_none()));
    round_trip(&m);
}

#[test]
fn gzip_files_are_read_by_magic_and_written_by_name() {
    let plain = read_fixture("v2-full.metadata.json");
    assert_eq!(read_fixture("v2-full.gz.metadata.json"), plain);

    let dir = temp_dir();
    for name in ["00002-a.gz.metadata.json", "00002-b.metadata.json.gz"] {
        let loc = dir.join(name).display().to_string();
        plain.write(&LocalFileIO, &loc, true).unwrap();
        let bytes = std::fs::read(&loc).unwrap();
        assert_eq!(&bytes[..2], &[0x1f, 0x8b]);
        assert_eq!(TableMetadata::read(&LocalFileIO, &loc).unwrap(), plain);
    }
    let loc = dir.join("00003-c.metadata.json").display().to_string();
    plain.write(&LocalFileIO, &loc, false).unwrap();
    assert_eq!(std::fs::read(&loc).unwrap()[0], b'{');
    assert_eq!(TableMetadata::read(&LocalFileIO, &loc).unwrap(), plain);
    // never overwrites
    assert!(matches!(
        plain.write(&LocalFileIO, &loc, false).unwrap_err(),
        Error::Io { .. }
    ));
    // the name must agree with the compression
    let e = plain
        .write(
            &LocalFileIO,
            &dir.join("00004.metadata.json").display().to_string(),
            true,
        )
        .unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }));

    // a truncated gzip stream is an error naming the file
    let gz = std::fs::read(fixture_path("v2-full.gz.metadata.json")).unwrap();
    let bad = dir.join("00005.gz.metadata.json");
    std::fs::write(&bad, &gz[..gz.len() / 2]).unwrap();
    let e = TableMetadata::read(&LocalFileIO, &bad.display().to_string()).unwrap_err();
    assert!(matches!(e, Error::InvalidJson { .. }), "{e:?}");
    assert_eq!(e.location().unwrap().file, bad.display().to_string());
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn invalid_json_names_the_file() {
    let e = read_err_text("{\"format-version\": 2,");
    assert!(matches!(e, Error::InvalidJson { .. }), "{e:?}");
    let e = read_err_text("[1, 2]");
    assert!(matches!(e, Error::InvalidMetadata { .. }), "{e:?}");
}

#[test]
fn unsupported_format_versions() {
    for version in [json!(5), json!(0), json!(-3), json!(1_000_000_000_000i64)] {
        let mut v = fixture_json("v2-full.metadata.json");
        v["format-version"] = version.clone();
        let e = read_err(&v);
        match &e {
            Error::UnsupportedFormatVersion {
                version: got, max, ..
            } => {
                assert_eq!(Some(*got), version.as_i64());
                assert_eq!(*max, 4);
            }
            other => panic!("{version}: {other:?}"),
        }
        assert_eq!(field(&e), "format-version");
    }
    // checked before anything else: a v5 file with v5-only content fails on the version
    let e = read_err(&json!({"format-version": 5, "something-new": {}}));
    assert!(matches!(e, Error::UnsupportedFormatVersion { .. }));
    for bad in [json!("x"), json!(2.5), json!(null)] {
        let mut v = fixture_json("v2-full.metadata.json");
        v["format-version"] = bad;
        let e = read_err(&v);
        assert!(matches!(e, Error::InvalidMetadata { .. }), "{e:?}");
        assert_eq!(field(&e), "format-version");
    }
}

#[test]
fn missing_required_fields_per_version() {
    let v1 = [
        "format-version",
        "location",
        "last-updated-ms",
        "last-column-id",
        "schema",
        "partition-spec",
    ];
    let v2 = [
        "format-version",
        "table-uuid",
        "location",
        "last-sequence-number",
        "last-updated-ms",
        "last-column-id",
        "schemas",
        "current-schema-id",
        "partition-specs",
        "default-spec-id",
        "last-partition-id",
        "sort-orders",
        "default-sort-order-id",
    ];
    let v3: Vec<&str> = v2.iter().copied().chain(["next-row-id"]).collect();
    let cases: [(&str, &[&str]); 3] = [
        ("v1-deprecated.metadata.json", &v1),
        ("v2-full.metadata.json", &v2),
        ("v3-lineage.metadata.json", &v3),
    ];
    for (fixture, fields) in cases {
        for key in fields {
            let mut v = fixture_json(fixture);
            remove(&mut v, key);
            let e = read_err(&v);
            assert!(
                matches!(e, Error::InvalidMetadata { .. }),
                "{fixture} {key}: {e:?}"
            );
            assert_eq!(field(&e), *key, "{fixture}: {e}");
        }
    }
    // fields that are optional in v1 are not required there
    let mut v = fixture_json("v1-deprecated.metadata.json");
    for key in [
        "properties",
        "current-snapshot-id",
        "snapshots",
        "snapshot-log",
        "metadata-log",
    ] {
        remove(&mut v, key);
    }
    TableMetadata::from_json_value(&v).unwrap();
    // optional in every version
    let mut v = fixture_json("v3-lineage.metadata.json");
    for key in [
        "properties",
        "refs",
        "current-snapshot-id",
        "snapshots",
        "snapshot-log",
        "metadata-log",
        "encryption-keys",
        "statistics",
        "partition-statistics",
    ] {
        remove(&mut v, key);
    }
    TableMetadata::from_json_value(&v).unwrap();
}

#[test]
fn missing_nested_required_fields_name_the_path() {
    type Edit = fn(&mut Value);
    let cases: [(&str, Edit, &str); 9] = [
        (
            "v2-full.metadata.json",
            |v| remove(&mut v["snapshots"][1], "timestamp-ms"),
            "snapshots[1].timestamp-ms",
        ),
        (
            "v2-full.metadata.json",
            |v| remove(&mut v["snapshots"][2], "snapshot-id"),
            "snapshots[2].snapshot-id",
        ),
        (
            "v2-full.metadata.json",
            |v| remove(&mut v["snapshots"][0], "manifest-list"),
            "snapshots[0].manifest-list",
        ),
        (
            "v2-full.metadata.json",
            |v| remove(&mut v["schemas"][0], "type"),
            "schemas[0].type",
        ),
        (
            "v2-full.metadata.json",
            |v| remove(&mut v["schemas"][1]["fields"][4]["type"], "type"),
            "schemas[1].fields[4].type.type",
        ),
        (
            "v2-full.metadata.json",
            |v| remove(&mut v["refs"]["audit"], "type"),
            "refs.audit.type",
        ),
        (
            "v2-full.metadata.json",
            |v| remove(&mut v["partition-specs"][1]["fields"][1], "field-id"),
            "partition-specs[1].fields[1].field-id",
        ),
        (
            "v2-full.metadata.json",
            |v| remove(&mut v["statistics"][0], "statistics-path"),
            "statistics[0].statistics-path",
        ),
        (
            "v3-lineage.metadata.json",
            |v| remove(&mut v["encryption-keys"][1], "encrypted-key-metadata"),
            "encryption-keys[1].encrypted-key-metadata",
        ),
    ];
    for (fixture, edit, path) in cases {
        let mut v = fixture_json(fixture);
        edit(&mut v);
        let e = read_err(&v);
        assert!(matches!(e, Error::InvalidMetadata { .. }), "{path}: {e:?}");
        assert_eq!(field(&e), path);
    }
}

#[test]
fn wrong_json_types_name_the_path() {
    let cases: Vec<(&str, Value, &str)> = vec![
        ("/last-column-id", json!("5"), "last-column-id"),
        ("/last-updated-ms", json!(1.5), "last-updated-ms"),
        ("/schemas", json!({}), "schemas"),
        ("/table-uuid", json!(7), "table-uuid"),
        ("/properties", json!(["a"]), "properties"),
        ("/properties/owner", json!(5), "properties.owner"),
        (
            "/snapshots/1/timestamp-ms",
            json!("yesterday"),
            "snapshots[1].timestamp-ms",
        ),
        (
            "/snapshots/0/summary/added-records",
            json!(1000),
            "snapshots[0].summary.added-records",
        ),
        (
            "/snapshots/2/summary/operation",
            json!("merge"),
            "snapshots[2].summary.operation",
        ),
        (
            "/refs/audit/snapshot-id",
            json!("3055729675574597005"),
            "refs.audit.snapshot-id",
        ),
        ("/refs", json!([]), "refs"),
        (
            "/sort-orders/1/fields/0/direction",
            json!("sideways"),
            "sort-orders[1].fields[0].direction",
        ),
        (
            "/partition-specs/0/fields/0/transform",
            json!("bucket[x]"),
            "partition-specs[0].fields[0].transform",
        ),
        (
            "/statistics/0/blob-metadata/0/fields",
            json!(["2"]),
            "statistics[0].blob-metadata[0].fields[0]",
        ),
        ("/snapshot-log/1", json!(3), "snapshot-log[1]"),
        ("/current-schema-id", json!(1e40), "current-schema-id"),
        ("/last-column-id", json!(5_000_000_000i64), "last-column-id"),
    ];
    for (pointer, value, path) in cases {
        let mut v = fixture_json("v2-full.metadata.json");
        *v.pointer_mut(pointer).unwrap() = value;
        let e = read_err(&v);
        assert!(
            matches!(e, Error::InvalidMetadata { .. }),
            "{pointer}: {e:?}"
        );
        assert_eq!(field(&e), path, "{pointer}: {e}");
    }
}

#[test]
fn schema_errors_inside_metadata() {
    let mut v = fixture_json("v2-full.metadata.json");
    v["schemas"][1]["fields"][3]["type"] = json!("decimal(12)");
    let e = read_err(&v);
    match &e {
        Error::UnknownType { type_string, .. } => assert_eq!(type_string, "decimal(12)"),
        other => panic!("{other:?}"),
    }
    assert_eq!(field(&e), "schemas[1].fields[3].type");

    let mut v = fixture_json("v2-full.metadata.json");
    v["schemas"][1]["fields"][4]["type"]["value-id"] = json!(2);
    let e = read_err(&v);
    assert!(matches!(e, Error::FieldIdClash { id: 2, .. }), "{e:?}");
    assert!(field(&e).starts_with("schemas[1]"), "{e}");

    // defaults are parsed by the schema code: whatever it reports reaches the caller
    let mut v = fixture_json("v2-full.metadata.json");
    v["schemas"][0]["fields"][1]["initial-default"] = json!(true);
    assert!(TableMetadata::from_json_value(&v).is_err());
}

#[test]
fn broken_references_name_the_field() {
    type Edit = fn(&mut Value);
    let cases: [(&str, Edit, &str); 9] = [
        (
            "v2-full.metadata.json",
            |v| v["current-schema-id"] = json!(5),
            "current-schema-id",
        ),
        (
            "v2-full.metadata.json",
            |v| v["default-spec-id"] = json!(9),
            "default-spec-id",
        ),
        (
            "v2-full.metadata.json",
            |v| v["default-sort-order-id"] = json!(9),
            "default-sort-order-id",
        ),
        (
            "v2-full.metadata.json",
            |v| v["refs"]["audit"]["snapshot-id"] = json!(1),
            "refs.audit.snapshot-id",
        ),
        (
            "v2-full.metadata.json",
            |v| v["current-snapshot-id"] = json!(1),
            "current-snapshot-id",
        ),
        (
            "v2-full.metadata.json",
            |v| v["schemas"][1]["schema-id"] = json!(0),
            "schemas[1].schema-id",
        ),
        (
            "v2-full.metadata.json",
            |v| v["refs"]["main"]["snapshot-id"] = json!(3055729675574597005i64),
            "refs.main.snapshot-id",
        ),
        (
            "v2-full.metadata.json",
            |v| v["snapshots"][2]["sequence-number"] = json!(35),
            "snapshots[2].sequence-number",
        ),
        (
            "v2-full.metadata.json",
            |v| v["partition-specs"][1]["fields"][1]["field-id"] = json!(1000),
            "partition-specs[1].fields[1].field-id",
        ),
    ];
    for (fixture, edit, path) in cases {
        let mut v = fixture_json(fixture);
        edit(&mut v);
        let e = read_err(&v);
        assert!(matches!(e, Error::InvalidMetadata { .. }), "{path}: {e:?}");
        assert_eq!(field(&e), path, "{e}");
    }
    // a main branch without a current snapshot
    let mut v = fixture_json("v2-full.metadata.json");
    remove(&mut v, "current-snapshot-id");
    let e = read_err(&v);
    assert_eq!(field(&e), "refs.main");
}

#[test]
fn truncated_metadata_never_panics() {
    for name in [
        "v1-deprecated.metadata.json",
        "v2-full.metadata.json",
        "v3-lineage.metadata.json",
    ] {
        let text = std::fs::read_to_string(fixture_path(name)).unwrap();
        assert!(TableMetadata::from_json_str(&text).is_ok());
        for end in 0..text.len() {
            // cutting only the trailing newline leaves a complete document
            if !text.is_char_boundary(end) || text[..end].trim_end() == text.trim_end() {
                continue;
            }
            assert!(
                TableMetadata::from_json_str(&text[..end]).is_err(),
                "{name} cut at {end}"
            );
        }
    }
    let gz = std::fs::read(fixture_path("v2-full.gz.metadata.json")).unwrap();
    for end in 0..gz.len() {
        assert!(
            TableMetadata::from_bytes(&gz[..end]).is_err(),
            "gz cut at {end}"
        );
    }
}

#[test]
fn every_field_removed_or_nulled_never_panics() {
    // Remove or null every object member at any depth, one at a time: Ok or Err, never a panic.
    fn paths(v: &Value, prefix: String, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, c) in m {
                    let p = format!("{prefix}/{}", k.replace('~', "~0").replace('/', "~1"));
                    out.push(p.clone());
                    paths(c, p, out);
                }
            }
            Value::Array(a) => {
                for (i, c) in a.iter().enumerate() {
                    paths(c, format!("{prefix}/{i}"), out);
                }
            }
            _ => {}
        }
    }
    for name in [
        "v1-deprecated.metadata.json",
        "v2-full.metadata.json",
        "v3-lineage.metadata.json",
    ] {
        let base = fixture_json(name);
        let mut all = Vec::new();
        paths(&base, String::new(), &mut all);
        for p in &all {
            for replacement in [Value::Null, json!(-1), json!("s"), json!([]), json!({})] {
                let mut v = base.clone();
                *v.pointer_mut(p).unwrap() = replacement;
                let _ = TableMetadata::from_json_value(&v);
            }
        }
    }
}
