#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! View metadata: the view spec's examples, a multi-dialect file, round trips, file I/O
//! (plain and gzip) and bad input naming file and field.

use std::collections::HashMap;
use std::io::Write;
use std::sync::Mutex;

use icefloe::error::Error;
use icefloe::io::{FileIO, LocalFileIO};
use icefloe::spec::view_metadata::{ViewHistoryEntry, ViewMetadata, ViewRepresentation};
use serde_json::Value;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/view");
const ALL_FIXTURES: &[&str] = &[
    "spec-example-create.json",
    "spec-example-replace.json",
    "multi-dialect.json",
];

fn fixture_text(name: &str) -> String {
    std::fs::read_to_string(format!("{FIXTURES}/{name}")).unwrap()
}

fn fixture(name: &str) -> ViewMetadata {
    ViewMetadata::read(&LocalFileIO, &format!("{FIXTURES}/{name}")).unwrap()
}

/// An in-memory FileIO, so that bad bytes can be read "from a file".
#[derive(Default)]
struct MemIO(Mutex<HashMap<String, Vec<u8>>>);

impl MemIO {
    fn put(&self, loc: &str, bytes: &[u8]) {
        self.0
            .lock()
            .unwrap()
            .insert(loc.to_string(), bytes.to_vec());
    }
}

impl FileIO for MemIO {
    fn read(&self, location: &str) -> icefloe::Result<Vec<u8>> {
        self.0
            .lock()
            .unwrap()
            .get(location)
            .cloned()
            .ok_or_else(|| Error::not_found(location.to_string()))
    }
    fn write_new(&self, location: &str, bytes: &[u8]) -> icefloe::Result<()> {
        self.put(location, bytes);
        Ok(())
    }
    fn exists(&self, location: &str) -> icefloe::Result<bool> {
        Ok(self.0.lock().unwrap().contains_key(location))
    }
    fn delete(&self, location: &str) -> icefloe::Result<()> {
        self.0.lock().unwrap().remove(location);
        Ok(())
    }
    fn list(&self, _location: &str) -> icefloe::Result<Vec<String>> {
        Ok(Vec::new())
    }
}

const FILE: &str = "mem://views/v1.metadata.json";

fn read_value(v: &Value) -> icefloe::Result<ViewMetadata> {
    let io = MemIO::default();
    io.put(FILE, v.to_string().as_bytes());
    ViewMetadata::read(&io, FILE)
}

fn field_of(e: &Error) -> String {
    let at = e
        .location()
        .unwrap_or_else(|| panic!("no location in {e:?}"));
    assert_eq!(at.file, FILE, "error not tied to the file: {e:?}");
    at.field.clone()
}

/// Follows a path like `versions.0.summary` into a JSON value.
fn at_path<'a>(v: &'a mut Value, path: &[&str]) -> &'a mut Value {
    let mut cur = v;
    for key in path {
        cur = match cur {
            Value::Array(a) => &mut a[key.parse::<usize>().unwrap()],
            Value::Object(m) => m.get_mut(*key).unwrap(),
            other => panic!("cannot descend into {other}"),
        };
    }
    cur
}

fn split(path: &str) -> Vec<&str> {
    path.split('.').collect()
}

fn base() -> Value {
    serde_json::from_str(&fixture_text("multi-dialect.json")).unwrap()
}

fn spec_base() -> Value {
    serde_json::from_str(&fixture_text("spec-example-replace.json")).unwrap()
}

// --- the spec's examples ----------------------------------------------------------------

#[test]
fn spec_example_after_create_parses() {
    let m = fixture("spec-example-create.json");
    assert_eq!(m.format_version, 1);
    assert_eq!(m.view_uuid, None);
    assert_eq!(
        m.location,
        "s3n://my_company/my/warehouse/anorwood.db/common_view"
    );
    assert_eq!(m.current_version_id, 1);
    assert_eq!(
        m.properties.get("comment").map(String::as_str),
        Some("View captures all the data from the table")
    );
    assert_eq!(m.versions.len(), 1);
    let v = m.current_version().unwrap();
    assert_eq!(v.version_id, 1);
    assert_eq!(v.parent_version_id, Some(-1));
    assert_eq!(v.timestamp_ms, 1573518431292);
    assert_eq!(v.operation(), Some("create"));
    assert_eq!(
        v.summary.get("engineVersion").map(String::as_str),
        Some("presto-350")
    );
    assert_eq!(
        v.schema_id, None,
        "the draft puts schema-id on the representation"
    );
    assert_eq!(v.schema_id(), Some(1));
    assert_eq!(v.default_catalog(), Some("iceberg"));
    assert_eq!(v.default_namespace(), Some(&["anorwood".to_string()][..]));
    assert_eq!(v.representations.len(), 1);
    let ViewRepresentation::Sql(r) = &v.representations[0] else {
        panic!("not sql")
    };
    assert_eq!(r.sql, "SELECT *\nFROM\n  base_tab\n");
    assert_eq!(r.dialect, "presto");
    assert_eq!(r.schema_id, Some(1));
    assert_eq!(m.sql_for("presto"), Some("SELECT *\nFROM\n  base_tab\n"));
    assert_eq!(m.sql_for("spark"), None);
    assert_eq!(
        m.version_log,
        vec![ViewHistoryEntry {
            timestamp_ms: 1573518431292,
            version_id: 1
        }]
    );
    assert_eq!(m.current_schema_id, Some(1));
    let s = m.current_schema().unwrap();
    assert_eq!(s.schema_id(), 1);
    let names: Vec<_> = s.fields().iter().map(|f| (f.id, f.name.as_str())).collect();
    assert_eq!(names, vec![(0, "c1"), (1, "c2")]);
    assert_eq!(s.fields()[0].doc.as_deref(), Some(""));
}

#[test]
fn spec_example_after_replace_parses() {
    let m = fixture("spec-example-replace.json");
    assert_eq!(m.current_version_id, 2);
    assert_eq!(m.versions.len(), 2);
    let v = m.current_version().unwrap();
    assert_eq!(v.parent_version_id, Some(1));
    assert_eq!(v.operation(), Some("replace"));
    assert_eq!(
        v.summary.get("engineVersion").map(String::as_str),
        Some("spark-2.4.4")
    );
    assert_eq!(
        m.sql_for("spark"),
        Some("SELECT \"count\"(*) my_cnt\nFROM\n  base_tab\n")
    );
    assert_eq!(m.sql_for("presto"), None, "presto is only in version 1");
    assert_eq!(
        m.version_by_id(1).unwrap().sql_for("PRESTO").unwrap().sql,
        "SELECT *\nFROM\n  base_tab\n"
    );
    let s = m.current_schema().unwrap();
    assert_eq!(s.schema_id(), 2);
    assert_eq!(s.fields()[0].name, "my_cnt");
    assert_eq!(m.schema_by_id(1).unwrap().fields().len(), 2);
    assert!(m.schema_by_id(3).is_none());
    assert!(m.version_by_id(3).is_none());
    let log: Vec<_> = m
        .version_log
        .iter()
        .map(|e| (e.timestamp_ms, e.version_id))
        .collect();
    assert_eq!(log, vec![(1573518431292, 1), (1573518440265, 2)]);
}

#[test]
fn multi_dialect_view_parses() {
    let m = fixture("multi-dialect.json");
    assert_eq!(
        m.view_uuid.as_deref(),
        Some("fa6506c3-7681-40c8-86dc-e36561f83385")
    );
    assert_eq!(m.current_schema_id, None);
    let v = m.current_version().unwrap();
    assert_eq!(v.version_id, 3);
    assert_eq!(v.schema_id, Some(1));
    assert_eq!(v.default_catalog(), Some("prod"));
    assert_eq!(
        v.default_namespace().unwrap(),
        ["default".to_string(), "analytics".to_string()]
    );
    assert_eq!(m.current_schema().unwrap().schema_id(), 1);
    // dialects are matched case-insensitively both ways
    assert!(m
        .sql_for("trino")
        .unwrap()
        .starts_with("SELECT count(*) AS event_count"));
    assert!(m
        .sql_for("SPARK")
        .unwrap()
        .starts_with("SELECT\n    COUNT(*) AS event_count"));
    assert_eq!(m.sql_for("presto"), None);
    // version 2 has no catalog; version 1 its own schema
    assert_eq!(m.version_by_id(2).unwrap().default_catalog(), None);
    assert_eq!(m.version_by_id(1).unwrap().schema_id(), Some(0));
    // the unknown representation is kept verbatim
    match &v.representations[2] {
        ViewRepresentation::Unknown { type_name, json } => {
            assert_eq!(type_name, "substrait");
            assert_eq!(json["plan"], "CgJTUw==");
            assert_eq!(json["extensions"][0], "functions_aggregate_generic");
        }
        other => panic!("{other:?}"),
    }
    // the log records a rollback to version 1 before version 3
    let ids: Vec<_> = m.history().iter().map(|e| e.version_id).collect();
    assert_eq!(ids, vec![1, 2, 1, 3]);
}

// --- round trips ----------------------------------------------------------------------

#[test]
fn fixtures_round_trip() {
    for name in ALL_FIXTURES {
        let m = fixture(name);
        let text = m.to_json_string();
        let back = ViewMetadata::from_json_str(&text).unwrap();
        assert_eq!(back, m, "{name}");
        // and the written JSON equals the input JSON, field for field, apart from what
        // the writer normalises (empty properties dropped, unknown version fields dropped)
        let mut input: Value = serde_json::from_str(&fixture_text(name)).unwrap();
        for v in input["versions"].as_array_mut().unwrap() {
            v.as_object_mut().unwrap().remove("properties");
        }
        let written: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(written, input, "{name}");
    }
}

#[test]
fn written_json_uses_spec_field_names() {
    let written = fixture("multi-dialect.json").to_json();
    let keys = |v: &Value| -> Vec<String> { v.as_object().unwrap().keys().cloned().collect() };
    assert_eq!(
        keys(&written),
        [
            "view-uuid",
            "format-version",
            "location",
            "properties",
            "schemas",
            "current-version-id",
            "versions",
            "version-log"
        ]
    );
    assert_eq!(
        keys(&written["versions"][2]),
        [
            "version-id",
            "timestamp-ms",
            "schema-id",
            "summary",
            "default-catalog",
            "default-namespace",
            "representations"
        ]
    );
    assert_eq!(
        keys(&written["versions"][2]["representations"][0]),
        ["type", "sql", "dialect"]
    );
    assert_eq!(
        keys(&written["version-log"][0]),
        ["timestamp-ms", "version-id"]
    );
    assert_eq!(
        written["versions"][2]["representations"][2]["type"],
        "substrait"
    );

    let draft = fixture("spec-example-create.json").to_json();
    assert_eq!(
        keys(&draft),
        [
            "format-version",
            "location",
            "properties",
            "schemas",
            "current-schema-id",
            "current-version-id",
            "versions",
            "version-log"
        ]
    );
    assert_eq!(
        keys(&draft["versions"][0]["representations"][0]),
        [
            "type",
            "sql",
            "dialect",
            "schema-id",
            "default-catalog",
            "default-namespace"
        ]
    );
    assert_eq!(draft["versions"][0]["parent-version-id"], -1);
}

#[test]
fn field_aliases_and_docs_round_trip() {
    let mut v = spec_base();
    let r = at_path(&mut v, &split("versions.1.representations.0"));
    r["field-aliases"] = serde_json::json!(["cnt"]);
    r["field-docs"] = serde_json::json!([null]);
    let m = read_value(&v).unwrap();
    let ViewRepresentation::Sql(sql) = &m.current_version().unwrap().representations[0] else {
        panic!()
    };
    assert_eq!(sql.field_aliases.as_deref(), Some(&["cnt".to_string()][..]));
    assert_eq!(sql.field_docs, Some(vec![None]));
    assert_eq!(ViewMetadata::from_json(&m.to_json()).unwrap(), m);
}

#[test]
fn write_and_read_back_plain_and_gzip() {
    let dir = std::env::temp_dir().join(format!("icefloe-view-{}", std::process::id()));
    let m = fixture("multi-dialect.json");
    let plain = dir.join("00001-a.metadata.json").display().to_string();
    let gz = dir.join("00002-b.gz.metadata.json").display().to_string();
    m.write(&LocalFileIO, &plain).unwrap();
    m.write(&LocalFileIO, &gz).unwrap();
    let gz_bytes = std::fs::read(&gz).unwrap();
    assert_eq!(&gz_bytes[..2], &[0x1f, 0x8b], "not gzip");
    assert_eq!(ViewMetadata::read(&LocalFileIO, &plain).unwrap(), m);
    assert_eq!(ViewMetadata::read(&LocalFileIO, &gz).unwrap(), m);
    // gzip is recognised by magic bytes even under a plain name
    let disguised = dir.join("00003-c.metadata.json").display().to_string();
    std::fs::write(&disguised, &gz_bytes).unwrap();
    assert_eq!(ViewMetadata::read(&LocalFileIO, &disguised).unwrap(), m);
    // write never overwrites
    assert!(m.write(&LocalFileIO, &plain).is_err());
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn write_refuses_invalid_metadata() {
    let io = MemIO::default();
    let mut m = fixture("multi-dialect.json");
    m.current_version_id = 42;
    let e = m.write(&io, FILE).unwrap_err();
    assert_eq!(field_of(&e), "current-version-id");
    assert!(!io.exists(FILE).unwrap());
}

// --- bad input --------------------------------------------------------------------------

#[test]
fn invalid_json_names_the_file() {
    let io = MemIO::default();
    io.put(FILE, b"{\"format-version\": 1,");
    let e = ViewMetadata::read(&io, FILE).unwrap_err();
    assert!(matches!(e, Error::InvalidJson { .. }), "{e:?}");
    assert_eq!(e.location().unwrap().file, FILE);
    io.put(FILE, &[0xff, 0xfe, b'{']);
    let e = ViewMetadata::read(&io, FILE).unwrap_err();
    assert!(matches!(e, Error::InvalidJson { .. }), "{e:?}");
    io.put(FILE, &[0x1f, 0x8b, 0x08, 0x00]);
    let e = ViewMetadata::read(&io, FILE).unwrap_err();
    assert!(matches!(e, Error::InvalidJson { .. }), "{e:?}");
    assert!(e.to_string().contains(FILE));
}

#[test]
fn format_versions_other_than_1_are_refused() {
    for name in ALL_FIXTURES {
        let mut v: Value = serde_json::from_str(&fixture_text(name)).unwrap();
        v["format-version"] = 2.into();
        let e = read_value(&v).unwrap_err();
        match &e {
            Error::UnsupportedFormatVersion { version, max, .. } => {
                assert_eq!((version, max), (&2, &1))
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(field_of(&e), "format-version");
    }
    let mut v = base();
    v["format-version"] = 0.into();
    let e = read_value(&v).unwrap_err();
    assert!(matches!(e, Error::InvalidMetadata { .. }), "{e:?}");
    assert_eq!(field_of(&e), "format-version");
}

/// Java 1.11 writes view versions whose summary has no `operation`; they must parse.
#[test]
fn summary_without_operation_is_accepted() {
    let mut v = base();
    let obj = at_path(&mut v, &split("versions.0.summary"))
        .as_object_mut()
        .unwrap();
    obj.remove("operation").unwrap();
    let vm = ViewMetadata::from_json(&v).unwrap();
    assert_eq!(vm.versions[0].operation(), None);
}

/// Every required field, removed in turn, is reported as missing at its path.
#[test]
fn missing_required_fields_are_named() {
    let required = [
        "format-version",
        "location",
        "current-version-id",
        "versions",
        "version-log",
        "versions.0.version-id",
        "versions.0.timestamp-ms",
        "versions.0.summary",
        "versions.0.representations",
        "versions.2.representations.1.type",
        "versions.2.representations.1.sql",
        "versions.2.representations.1.dialect",
        "version-log.3.timestamp-ms",
        "version-log.3.version-id",
        "schemas.1.fields",
        "schemas.1.fields.0.name",
    ];
    for path in required {
        for remove in [true, false] {
            let mut v = base();
            let parts = split(path);
            let (last, parent) = parts.split_last().unwrap();
            let obj = at_path(&mut v, parent).as_object_mut().unwrap();
            if remove {
                obj.remove(*last).unwrap();
            } else {
                // null counts as absent
                obj.insert(last.to_string(), Value::Null);
            }
            let e = read_value(&v).unwrap_err();
            assert!(matches!(e, Error::InvalidMetadata { .. }), "{path}: {e:?}");
            let expected = expected_path(path);
            assert_eq!(field_of(&e), expected, "{path}: {e}");
            assert!(e.to_string().contains("missing"), "{path}: {e}");
        }
    }
}

/// `versions.0.summary` -> `versions[0].summary`
fn expected_path(dotted: &str) -> String {
    let mut out = String::new();
    for part in dotted.split('.') {
        if part.parse::<usize>().is_ok() {
            out.push_str(&format!("[{part}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(part);
        }
    }
    out
}

#[test]
fn optional_fields_may_be_absent() {
    for path in [
        "properties",
        "schemas",
        "view-uuid",
        "versions.2.default-catalog",
        "versions.2.default-namespace",
    ] {
        let mut v = if path == "schemas" {
            spec_base()
        } else {
            base()
        };
        if path == "schemas" {
            // without schemas nothing may refer to one
            v.as_object_mut().unwrap().remove("current-schema-id");
            for ver in v["versions"].as_array_mut().unwrap() {
                for r in ver["representations"].as_array_mut().unwrap() {
                    r.as_object_mut().unwrap().remove("schema-id");
                }
            }
        }
        let parts = split(path);
        let (last, parent) = parts.split_last().unwrap();
        at_path(&mut v, parent)
            .as_object_mut()
            .unwrap()
            .remove(*last)
            .unwrap();
        let m = read_value(&v).unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!(ViewMetadata::from_json(&m.to_json()).unwrap(), m, "{path}");
    }
}

/// A wrong JSON type is reported at its path.
#[test]
fn wrong_json_types_are_named() {
    let cases: &[(&str, Value, &str)] = &[
        ("format-version", "1".into(), "format-version"),
        ("location", 5.into(), "location"),
        ("view-uuid", 5.into(), "view-uuid"),
        ("current-version-id", 1.5.into(), "current-version-id"),
        (
            "current-version-id",
            5_000_000_000i64.into(),
            "current-version-id",
        ),
        ("versions", serde_json::json!({}), "versions"),
        ("version-log", "x".into(), "version-log"),
        ("schemas", 1.into(), "schemas"),
        ("properties", serde_json::json!(["a"]), "properties"),
        ("properties", serde_json::json!({"a": 1}), "properties.a"),
        ("versions.1", "x".into(), "versions[1]"),
        (
            "versions.1.version-id",
            "2".into(),
            "versions[1].version-id",
        ),
        (
            "versions.1.timestamp-ms",
            true.into(),
            "versions[1].timestamp-ms",
        ),
        ("versions.1.schema-id", "1".into(), "versions[1].schema-id"),
        (
            "versions.1.summary",
            serde_json::json!([]),
            "versions[1].summary",
        ),
        (
            "versions.1.summary.operation",
            1.into(),
            "versions[1].summary.operation",
        ),
        (
            "versions.1.default-catalog",
            1.into(),
            "versions[1].default-catalog",
        ),
        (
            "versions.1.default-namespace",
            "default".into(),
            "versions[1].default-namespace",
        ),
        (
            "versions.1.default-namespace",
            serde_json::json!(["a", 1]),
            "versions[1].default-namespace[1]",
        ),
        (
            "versions.1.representations",
            serde_json::json!({}),
            "versions[1].representations",
        ),
        (
            "versions.1.representations.0",
            "sql".into(),
            "versions[1].representations[0]",
        ),
        (
            "versions.1.representations.0.type",
            1.into(),
            "versions[1].representations[0].type",
        ),
        (
            "versions.1.representations.0.sql",
            1.into(),
            "versions[1].representations[0].sql",
        ),
        (
            "versions.1.representations.0.dialect",
            serde_json::json!(["trino"]),
            "versions[1].representations[0].dialect",
        ),
        (
            "versions.1.representations.0.field-docs",
            serde_json::json!([1]),
            "versions[1].representations[0].field-docs[0]",
        ),
        ("version-log.0", serde_json::json!([1, 2]), "version-log[0]"),
        (
            "version-log.0.version-id",
            "1".into(),
            "version-log[0].version-id",
        ),
        (
            "schemas.0.fields.1.id",
            "2".into(),
            "schemas[0].fields[1].id",
        ),
    ];
    for (path, value, expected) in cases {
        let mut v = base();
        let parts = split(path);
        let (last, parent) = parts.split_last().unwrap();
        match at_path(&mut v, parent) {
            Value::Array(a) => a[last.parse::<usize>().unwrap()] = value.clone(),
            Value::Object(m) => {
                m.insert(last.to_string(), value.clone());
            }
            other => panic!("{other}"),
        }
        let e = read_value(&v).unwrap_err();
        assert!(matches!(e, Error::InvalidMetadata { .. }), "{path}: {e:?}");
        assert_eq!(field_of(&e), *expected, "{path}: {e}");
    }
    // an unknown type string is UnknownType at the field's path
    let mut v = base();
    v["schemas"][0]["fields"][1]["type"] = "datez".into();
    let e = read_value(&v).unwrap_err();
    assert!(matches!(e, Error::UnknownType { .. }), "{e:?}");
    assert_eq!(field_of(&e), "schemas[0].fields[1].type");
    // the root must be an object
    let e = read_value(&serde_json::json!([1])).unwrap_err();
    assert!(matches!(e, Error::InvalidMetadata { .. }), "{e:?}");
}

#[test]
fn unknown_current_version_is_refused() {
    let mut v = base();
    v["current-version-id"] = 4.into();
    let e = read_value(&v).unwrap_err();
    assert!(matches!(e, Error::InvalidMetadata { .. }), "{e:?}");
    assert_eq!(field_of(&e), "current-version-id");
    assert!(e.to_string().contains("unknown version id 4"), "{e}");
    // no versions at all
    let mut v = base();
    v["versions"] = serde_json::json!([]);
    assert_eq!(field_of(&read_value(&v).unwrap_err()), "current-version-id");
}

#[test]
fn unknown_schema_ids_of_the_current_version_are_refused() {
    // Java's currentSchemaId() fails for these, so a view that has them cannot be used
    let mut v = base();
    v["versions"][2]["schema-id"] = 7.into();
    let e = read_value(&v).unwrap_err();
    assert!(matches!(e, Error::InvalidMetadata { .. }), "{e:?}");
    assert_eq!(field_of(&e), "versions[2].schema-id");
    assert!(e.to_string().contains("unknown schema id 7"), "{e}");

    let mut v = spec_base();
    v["versions"][1]["representations"][0]["schema-id"] = 3.into();
    assert_eq!(
        field_of(&read_value(&v).unwrap_err()),
        "versions[1].representations[0].schema-id"
    );

    let mut v = spec_base();
    v["current-schema-id"] = 3.into();
    assert_eq!(field_of(&read_value(&v).unwrap_err()), "current-schema-id");
}

#[test]
fn older_versions_are_read_unchecked_as_java_reads_them() {
    // Java's ViewMetadataParser checks nothing about versions that are not current
    let mut v = base();
    v["versions"][0]["schema-id"] = (-1).into();
    let m = read_value(&v).unwrap();
    assert_eq!(m.version_by_id(1).unwrap().schema_id, Some(-1));
    assert_eq!(ViewMetadata::from_json(&m.to_json()).unwrap(), m);
    let mut v = spec_base();
    v["versions"][0]["representations"][0]["schema-id"] = 3.into();
    assert!(read_value(&v).is_ok());
    // Java does not read a top-level `current-schema-id` in its own layout (with a
    // `view-uuid`): it is not checked there, and not written
    let mut v = base();
    v["current-schema-id"] = 9.into();
    let m = read_value(&v).unwrap();
    assert!(m.to_json().get("current-schema-id").is_none());
}

#[test]
fn duplicate_dialects_are_read_as_java_reads_them() {
    // Java reads a version with two SQL representations of one dialect (compared
    // case-insensitively) on purpose, so that a replacement can repair the view
    let mut v = base();
    v["versions"][2]["representations"][1]["dialect"] = "SPARK".into();
    let m = read_value(&v).unwrap();
    let current = m.current_version().unwrap();
    let dialects: Vec<&str> = current
        .sql_representations()
        .map(|r| r.dialect.as_str())
        .collect();
    assert_eq!(dialects, ["spark", "SPARK"]);
    // the first one wins a lookup
    assert_eq!(
        m.sql_for("spark"),
        Some(current.sql_representations().next().unwrap().sql.as_str())
    );
    // both are written back, and the file can be written
    let back = ViewMetadata::from_json(&m.to_json()).unwrap();
    assert_eq!(back, m);
    let io = MemIO::default();
    m.write(&io, "mem://v/00001-a.metadata.json").unwrap();
}

#[test]
fn java_layout_is_written_as_java_writes_it() {
    // a file with a view-uuid and the draft's fields: Java reads it and writes none of them
    let mut v = base();
    v["current-schema-id"] = 1.into();
    v["versions"][2]["parent-version-id"] = 2.into();
    let version = v["versions"][2].as_object_mut().unwrap();
    let schema_id = version.remove("schema-id").unwrap();
    let catalog = version.remove("default-catalog").unwrap();
    let namespace = version.remove("default-namespace").unwrap();
    let rep = v["versions"][2]["representations"][0]
        .as_object_mut()
        .unwrap();
    rep.insert("schema-id".into(), schema_id.clone());
    rep.insert("default-catalog".into(), catalog.clone());
    rep.insert("default-namespace".into(), namespace.clone());
    rep.insert("field-aliases".into(), serde_json::json!(["a", "b"]));
    let m = read_value(&v).unwrap();
    let out = m.to_json();
    assert!(out.get("current-schema-id").is_none());
    let keys: Vec<&str> = out["versions"][2]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "version-id",
            "timestamp-ms",
            "schema-id",
            "summary",
            "default-catalog",
            "default-namespace",
            "representations"
        ]
    );
    // the version's own fields, from the representation that had them
    assert_eq!(out["versions"][2]["schema-id"], schema_id);
    assert_eq!(out["versions"][2]["default-catalog"], catalog);
    assert_eq!(out["versions"][2]["default-namespace"], namespace);
    let rep_keys: Vec<&str> = out["versions"][2]["representations"][0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(rep_keys, ["type", "sql", "dialect"]);
    // what it means is unchanged
    let back = ViewMetadata::from_json(&out).unwrap();
    assert_eq!(back.current_schema(), m.current_schema());
    assert_eq!(
        back.current_version().unwrap().default_namespace(),
        m.current_version().unwrap().default_namespace()
    );
    assert_eq!(back.sql_for("spark"), m.sql_for("spark"));
}

#[test]
fn duplicate_ids_are_refused() {
    let mut v = base();
    v["versions"][1]["version-id"] = 1.into();
    assert_eq!(
        field_of(&read_value(&v).unwrap_err()),
        "versions[1].version-id"
    );
    let mut v = base();
    v["schemas"][1]["schema-id"] = 0.into();
    assert_eq!(
        field_of(&read_value(&v).unwrap_err()),
        "schemas[1].schema-id"
    );
}

/// Every truncation of every fixture (plain and gzip) is an error, never a panic.
#[test]
fn truncated_files_are_errors() {
    let io = MemIO::default();
    for name in ALL_FIXTURES {
        let bytes = fixture_text(name).trim_end().as_bytes().to_vec();
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(&bytes).unwrap();
        let gz = enc.finish().unwrap();
        for full in [&bytes, &gz] {
            io.put(FILE, full);
            assert!(ViewMetadata::read(&io, FILE).is_ok(), "{name}");
            for len in 0..full.len() {
                io.put(FILE, &full[..len]);
                let e = ViewMetadata::read(&io, FILE).expect_err("truncated file parsed");
                assert_eq!(
                    e.location().map(|l| l.file.as_str()),
                    Some(FILE),
                    "{name} at {len}: {e:?}"
                );
            }
        }
    }
}

/// Replacing any one value by values of every JSON type never panics.
#[test]
fn every_value_replaced_never_panics() {
    fn paths(v: &Value, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
        match v {
            Value::Object(m) => {
                for (k, c) in m {
                    let mut p = prefix.clone();
                    p.push(k.clone());
                    out.push(p.clone());
                    paths(c, p, out);
                }
            }
            Value::Array(a) => {
                for (i, c) in a.iter().enumerate() {
                    let mut p = prefix.clone();
                    p.push(i.to_string());
                    out.push(p.clone());
                    paths(c, p, out);
                }
            }
            _ => {}
        }
    }
    let replacements = [
        Value::Null,
        true.into(),
        (-1).into(),
        i64::MAX.into(),
        1.5.into(),
        "".into(),
        serde_json::json!([]),
        serde_json::json!({}),
    ];
    for name in ALL_FIXTURES {
        let original: Value = serde_json::from_str(&fixture_text(name)).unwrap();
        let mut all = Vec::new();
        paths(&original, Vec::new(), &mut all);
        for p in &all {
            for r in &replacements {
                let mut v = original.clone();
                let refs: Vec<&str> = p.iter().map(String::as_str).collect();
                *at_path(&mut v, &refs) = r.clone();
                if let Ok(m) = ViewMetadata::from_json(&v) {
                    // whatever parses must round trip
                    assert_eq!(
                        ViewMetadata::from_json(&m.to_json()).unwrap(),
                        m,
                        "{name} {p:?}"
                    );
                }
            }
        }
    }
}
