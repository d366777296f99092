//! The committed corpus of real manifests, manifest lists and a DV Puffin file under
//! `tests/fixtures/manifest/` (written by Java Iceberg 1.11 and by PyIceberg, see
//! `make_corpus.py` there): icefloe must read each one exactly as Java reports it, a scan
//! projection must keep the scan fields and only the requested bounds, and no mutation of
//! any corpus file may make a reader panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, HashMap};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::Mutex;

use icefloe::io::FileIO;
use icefloe::manifest::{
    read_manifest, read_manifest_list_bytes, visit_manifest, DataFile, FieldSummary, Manifest,
    ManifestEntry, ManifestFile, ManifestProjection, ManifestSource, ReadManifestOptions,
};
use icefloe::puffin::{read_deletion_vector_blob, DeletionVector, PuffinReader};
use icefloe::spec::{Literal, PrimitiveType, Transform, Type};
use icefloe::{Error, Result};
use serde_json::{json, Map, Value};

// ---------------------------------------------------------------------------------------------
// The corpus
// ---------------------------------------------------------------------------------------------

struct CorpusFile {
    name: String,
    bytes: Vec<u8>,
    expected: Value,
}

impl CorpusFile {
    fn kind(&self) -> &str {
        self.expected["kind"].as_str().unwrap()
    }
}

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/manifest")
}

/// Every file with an `.expected.json` next to it, sorted by name.
fn corpus() -> Vec<CorpusFile> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(corpus_dir()).unwrap() {
        let path = entry.unwrap().path();
        let file_name = path.file_name().unwrap().to_str().unwrap().to_string();
        let Some(name) = file_name.strip_suffix(".expected.json") else {
            continue;
        };
        let expected: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let bytes = std::fs::read(corpus_dir().join(name))
            .unwrap_or_else(|e| panic!("{name} has expectations but cannot be read: {e}"));
        out.push(CorpusFile {
            name: name.to_string(),
            bytes,
            expected,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

fn opt_hex(bytes: Option<&[u8]>) -> Value {
    bytes.map_or(Value::Null, |b| Value::String(hex(b)))
}

fn id_map<V: Clone + Into<Value>>(pairs: Option<&[(i32, V)]>) -> Value {
    match pairs {
        None => Value::Null,
        Some(p) => Value::Object(
            p.iter()
                .map(|(k, v)| (k.to_string(), v.clone().into()))
                .collect(),
        ),
    }
}

fn hex_map(pairs: Option<&[(i32, Vec<u8>)]>) -> Value {
    match pairs {
        None => Value::Null,
        Some(p) => Value::Object(
            p.iter()
                .map(|(k, v)| (k.to_string(), Value::String(hex(v))))
                .collect(),
        ),
    }
}

/// What the spec leaves open: an optional map or list may be absent or empty, and an
/// object's key order carries no meaning.
fn normalise(v: &Value) -> Value {
    match v {
        Value::Array(a) if a.is_empty() => Value::Null,
        Value::Object(o) if o.is_empty() => Value::Null,
        Value::Array(a) => Value::Array(a.iter().map(normalise).collect()),
        Value::Object(o) => {
            let sorted: BTreeMap<&String, Value> =
                o.iter().map(|(k, v)| (k, normalise(v))).collect();
            Value::Object(sorted.into_iter().map(|(k, v)| (k.clone(), v)).collect())
        }
        other => other.clone(),
    }
}

/// Compares the fields of `got` with the same fields of `want`, recording mismatches.
/// Every field of `want` must be present in `got` (so new expectations are not silently
/// ignored), except those in `skip`, which the caller compares itself.
fn compare_fields(errors: &mut Vec<String>, ctx: &str, got: &Value, want: &Value, skip: &[&str]) {
    let want = want.as_object().unwrap();
    let got = got.as_object().unwrap();
    for (key, w) in want {
        if skip.contains(&key.as_str()) {
            continue;
        }
        match got.get(key) {
            None => errors.push(format!("{ctx}: icefloe has no field '{key}'")),
            Some(g) if normalise(g) != normalise(w) => {
                errors.push(format!("{ctx}.{key}: icefloe {g}, Java {w}"))
            }
            Some(_) => {}
        }
    }
}

fn fail_on(errors: Vec<String>) {
    if !errors.is_empty() {
        panic!(
            "{} mismatch(es) with Java:\n  {}",
            errors.len(),
            errors.join("\n  ")
        );
    }
}

// ---------------------------------------------------------------------------------------------
// icefloe's view in the shape of the expectations
// ---------------------------------------------------------------------------------------------

fn summary_json(s: &FieldSummary) -> Value {
    json!({
        "contains_null": s.contains_null,
        "contains_nan": s.contains_nan,
        "lower_bound": opt_hex(s.lower_bound.as_deref()),
        "upper_bound": opt_hex(s.upper_bound.as_deref()),
    })
}

fn manifest_file_json(m: &ManifestFile) -> Value {
    json!({
        "manifest_path": m.manifest_path,
        "manifest_length": m.manifest_length,
        "partition_spec_id": m.partition_spec_id,
        "content": m.content.id(),
        "sequence_number": m.sequence_number,
        "min_sequence_number": m.min_sequence_number,
        "added_snapshot_id": m.added_snapshot_id,
        "added_files_count": m.added_files_count,
        "existing_files_count": m.existing_files_count,
        "deleted_files_count": m.deleted_files_count,
        "added_rows_count": m.added_rows_count,
        "existing_rows_count": m.existing_rows_count,
        "deleted_rows_count": m.deleted_rows_count,
        "partitions": m.partitions.as_ref().map(|p| p.iter().map(summary_json).collect::<Vec<_>>()),
        "key_metadata": opt_hex(m.key_metadata.as_deref()),
        "first_row_id": m.first_row_id,
    })
}

/// An entry without its partition (compared separately, by type).
fn entry_json(e: &ManifestEntry) -> Value {
    let f: &DataFile = &e.data_file;
    json!({
        "status": e.status.id(),
        "snapshot_id": e.snapshot_id,
        "sequence_number": e.sequence_number,
        "file_sequence_number": e.file_sequence_number,
        "content": f.content.id(),
        "file_path": f.file_path,
        "file_format": f.file_format.as_str(),
        "record_count": f.record_count,
        "file_size_in_bytes": f.file_size_in_bytes,
        "column_sizes": id_map(f.column_sizes.as_deref()),
        "value_counts": id_map(f.value_counts.as_deref()),
        "null_value_counts": id_map(f.null_value_counts.as_deref()),
        "nan_value_counts": id_map(f.nan_value_counts.as_deref()),
        "lower_bounds": hex_map(f.lower_bounds.as_deref()),
        "upper_bounds": hex_map(f.upper_bounds.as_deref()),
        "key_metadata": opt_hex(f.key_metadata.as_deref()),
        "split_offsets": f.split_offsets,
        "equality_ids": f.equality_ids,
        "sort_order_id": f.sort_order_id,
        "first_row_id": f.first_row_id,
        "referenced_data_file": f.referenced_data_file,
        "content_offset": f.content_offset,
        "content_size_in_bytes": f.content_size_in_bytes,
    })
}

/// Java's partition tuple: `[{"name", "field_id", "type", "value"}]`, the value in
/// single-value JSON text ("null" for null).
fn compare_partition(
    errors: &mut Vec<String>,
    ctx: &str,
    m: &Manifest,
    e: &ManifestEntry,
    want: &Value,
) {
    let spec = &m.metadata.partition_spec;
    let ptype = spec.partition_type(&m.metadata.schema).unwrap();
    let want = want.as_array().unwrap();
    if want.len() != e.data_file.partition.len() || want.len() != spec.fields.len() {
        errors.push(format!(
            "{ctx}.partition: icefloe has {} values for {} spec fields, Java {}",
            e.data_file.partition.len(),
            spec.fields.len(),
            want.len()
        ));
        return;
    }
    for (i, w) in want.iter().enumerate() {
        let field = &spec.fields[i];
        let ctx = format!("{ctx}.partition[{i}]");
        if w["name"] != json!(field.name) || w["field_id"] != json!(field.field_id) {
            errors.push(format!(
                "{ctx}: icefloe field {} ({}), Java {} ({})",
                field.name, field.field_id, w["name"], w["field_id"]
            ));
        }
        let ty = &ptype.fields[i].field_type;
        let java_type = Type::Primitive(PrimitiveType::parse(w["type"].as_str().unwrap()).unwrap());
        // Java types day partitions as date, the spec as int: both hold days from the epoch.
        let day_as_date = field.transform == Transform::Day
            && java_type == Type::Primitive(PrimitiveType::Date)
            && *ty == Type::Primitive(PrimitiveType::Int);
        if java_type != *ty && !day_as_date {
            errors.push(format!("{ctx}: icefloe type {ty:?}, Java {}", w["type"]));
            continue;
        }
        let want_value: Value = serde_json::from_str(w["value"].as_str().unwrap()).unwrap();
        let want_literal = match Literal::from_json_opt(&want_value, &java_type) {
            Ok(Some(Literal::Date(days))) if day_as_date => Some(Literal::Int(days)),
            Ok(v) => v,
            Err(e) => {
                errors.push(format!(
                    "{ctx}: Java's value {want_value} does not parse: {e}"
                ));
                continue;
            }
        };
        let got = &e.data_file.partition[i];
        if *got != want_literal {
            let got_text = got.as_ref().map_or(Value::Null, |l| l.to_json(ty));
            errors.push(format!(
                "{ctx}.value: icefloe {got_text}, Java {want_value}"
            ));
        }
    }
}

fn check_manifest_list(file: &CorpusFile, errors: &mut Vec<String>) {
    let got = read_manifest_list_bytes(&file.bytes)
        .unwrap_or_else(|e| panic!("{}: icefloe cannot read the list: {e}", file.name));
    let want = file.expected["manifests"].as_array().unwrap();
    if got.len() != want.len() {
        errors.push(format!(
            "{}: icefloe reads {} manifests, Java {}",
            file.name,
            got.len(),
            want.len()
        ));
        return;
    }
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        compare_fields(
            errors,
            &format!("{}[{i}]", file.name),
            &manifest_file_json(g),
            w,
            &[],
        );
    }
}

fn check_manifest(file: &CorpusFile, errors: &mut Vec<String>) -> Manifest {
    let m = read_manifest(
        ManifestSource::Bytes(&file.bytes),
        &ReadManifestOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{}: icefloe cannot read the manifest: {e}", file.name));
    let want = &file.expected;
    if json!(m.metadata.format_version) != want["format_version"] {
        errors.push(format!(
            "{}: format version {}, Java {}",
            file.name, m.metadata.format_version, want["format_version"]
        ));
    }
    if json!(m.metadata.content.id()) != want["content"] {
        errors.push(format!(
            "{}: content {}, Java {}",
            file.name,
            m.metadata.content.id(),
            want["content"]
        ));
    }
    let entries = want["entries"].as_array().unwrap();
    if m.entries.len() != entries.len() {
        errors.push(format!(
            "{}: icefloe reads {} entries, Java {}",
            file.name,
            m.entries.len(),
            entries.len()
        ));
        return m;
    }
    for (i, (g, w)) in m.entries.iter().zip(entries).enumerate() {
        let ctx = format!("{}[{i}]", file.name);
        compare_fields(errors, &ctx, &entry_json(g), w, &["partition"]);
        compare_partition(errors, &ctx, &m, g, &w["partition"]);
    }
    m
}

// ---------------------------------------------------------------------------------------------
// Reading agrees with Java
// ---------------------------------------------------------------------------------------------

#[test]
fn corpus_covers_what_it_claims() {
    let files = corpus();
    let text: String = files
        .iter()
        .map(|f| f.expected.to_string())
        .collect::<Vec<_>>()
        .join("\n");
    let kinds: Vec<(&str, &str)> = files
        .iter()
        .map(|f| (f.kind(), f.expected["writer"].as_str().unwrap_or("java")))
        .collect();
    for (kind, writer) in [
        ("manifest_list", "java-api"),
        ("manifest", "java-api"),
        ("manifest", "java-spark"),
        ("manifest_list", "pyiceberg"),
        ("manifest", "pyiceberg"),
        ("puffin", "java"),
    ] {
        assert!(
            kinds.contains(&(kind, writer)),
            "no {kind} written by {writer}"
        );
    }
    for version in 1..=3 {
        assert!(
            files.iter().any(|f| f.kind() == "manifest"
                && f.expected["format_version"] == json!(version)
                && f.expected["content"] == json!(0)),
            "no v{version} data manifest"
        );
    }
    let entries = || {
        files
            .iter()
            .filter(|f| f.kind() == "manifest")
            .flat_map(|f| {
                f.expected["entries"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(move |e| (f, e))
            })
    };
    let has = |pred: &dyn Fn(&CorpusFile, &Value) -> bool| entries().any(|(f, e)| pred(f, e));
    assert!(has(&|_, e| e["status"] == json!(0)), "no EXISTING entry");
    assert!(has(&|_, e| e["status"] == json!(2)), "no DELETED entry");
    assert!(has(&|f, e| f.expected["format_version"] == json!(2)
        && e["content"] == json!(1)
        && !e["referenced_data_file"].is_null()));
    assert!(
        has(&|_, e| !e["equality_ids"].is_null()),
        "no equality deletes"
    );
    assert!(has(&|f, e| f.expected["format_version"] == json!(3)
        && e["file_format"] == json!("PUFFIN")
        && !e["content_offset"].is_null()
        && !e["content_size_in_bytes"].is_null()));
    assert!(
        files.iter().any(|f| f.kind() == "manifest_list"
            && f.expected["manifests"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| !m["first_row_id"].is_null())),
        "no manifest list with first_row_id"
    );
    for transform in ["bucket", "_day", "trunc"] {
        assert!(
            text.contains(transform),
            "no partition field like '{transform}'"
        );
    }
    assert!(
        text.contains("\"type\":\"string\""),
        "no identity string partition"
    );
}

#[test]
fn manifest_lists_match_java() {
    let mut errors = Vec::new();
    let mut n = 0;
    for file in corpus().iter().filter(|f| f.kind() == "manifest_list") {
        check_manifest_list(file, &mut errors);
        n += 1;
    }
    assert!(n >= 4, "only {n} manifest lists in the corpus");
    fail_on(errors);
}

#[test]
fn manifests_match_java_as_stored() {
    let mut errors = Vec::new();
    let mut n = 0;
    for file in corpus().iter().filter(|f| f.kind() == "manifest") {
        check_manifest(file, &mut errors);
        n += 1;
    }
    assert!(n >= 8, "only {n} manifests in the corpus");
    fail_on(errors);
}

/// A scan reads the scan fields exactly as a full read does, with split offsets, no column
/// sizes, and counts and bounds only for the requested columns.
#[test]
fn scan_projection_keeps_scan_fields_and_only_requested_bounds() {
    for file in corpus().iter().filter(|f| f.kind() == "manifest") {
        let full = read_manifest(
            ManifestSource::Bytes(&file.bytes),
            &ReadManifestOptions::default(),
        )
        .unwrap();
        let mut ids: Vec<i32> = full
            .entries
            .iter()
            .flat_map(|e| e.data_file.lower_bounds.iter().flatten().map(|(id, _)| *id))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        let mut requests: Vec<Vec<i32>> = vec![vec![], vec![i32::MAX]];
        requests.extend(ids.iter().map(|id| vec![*id]));
        if ids.len() >= 2 {
            requests.push(vec![ids[ids.len() - 1], ids[0]]);
        }
        for request in requests {
            let scan = read_manifest(
                ManifestSource::Bytes(&file.bytes),
                &ReadManifestOptions::default()
                    .projection(&ManifestProjection::scan(request.clone())),
            )
            .unwrap();
            let ctx = format!("{} scan({request:?})", file.name);
            assert_eq!(scan.metadata, full.metadata, "{ctx}");
            assert_eq!(scan.entries.len(), full.entries.len(), "{ctx}");
            for (i, (s, f)) in scan.entries.iter().zip(&full.entries).enumerate() {
                let ctx = format!("{ctx}[{i}]");
                let (sd, fd) = (&s.data_file, &f.data_file);
                assert_eq!(s.status, f.status, "{ctx}");
                assert_eq!(s.snapshot_id, f.snapshot_id, "{ctx}");
                assert_eq!(s.sequence_number, f.sequence_number, "{ctx}");
                assert_eq!(s.file_sequence_number, f.file_sequence_number, "{ctx}");
                assert_eq!(sd.content, fd.content, "{ctx}");
                assert_eq!(sd.file_path, fd.file_path, "{ctx}");
                assert_eq!(sd.file_format, fd.file_format, "{ctx}");
                assert_eq!(sd.partition, fd.partition, "{ctx}");
                assert_eq!(sd.record_count, fd.record_count, "{ctx}");
                assert_eq!(sd.file_size_in_bytes, fd.file_size_in_bytes, "{ctx}");
                assert_eq!(sd.key_metadata, fd.key_metadata, "{ctx}");
                assert_eq!(sd.equality_ids, fd.equality_ids, "{ctx}");
                assert_eq!(sd.referenced_data_file, fd.referenced_data_file, "{ctx}");
                assert_eq!(sd.content_offset, fd.content_offset, "{ctx}");
                assert_eq!(sd.content_size_in_bytes, fd.content_size_in_bytes, "{ctx}");
                assert_eq!(sd.first_row_id, fd.first_row_id, "{ctx}");
                // no sizes; counts of the requested columns only; split offsets
                assert_eq!(sd.column_sizes, None, "{ctx}");
                for (got, all) in [
                    (&sd.value_counts, &fd.value_counts),
                    (&sd.null_value_counts, &fd.null_value_counts),
                    (&sd.nan_value_counts, &fd.nan_value_counts),
                ] {
                    let mut wanted: Vec<(i32, i64)> = all
                        .iter()
                        .flatten()
                        .filter(|(id, _)| request.contains(id))
                        .copied()
                        .collect();
                    wanted.sort_unstable();
                    let mut got: Vec<(i32, i64)> = got.iter().flatten().copied().collect();
                    got.sort_unstable();
                    assert_eq!(got, wanted, "{ctx}: counts");
                }
                assert_eq!(sd.split_offsets, fd.split_offsets, "{ctx}");
                // only the requested bounds, with the full read's bytes
                for (got, all) in [
                    (&sd.lower_bounds, &fd.lower_bounds),
                    (&sd.upper_bounds, &fd.upper_bounds),
                ] {
                    let wanted: Vec<(i32, Vec<u8>)> = all
                        .iter()
                        .flatten()
                        .filter(|(id, _)| request.contains(id))
                        .cloned()
                        .collect();
                    let mut got: Vec<(i32, Vec<u8>)> = got.iter().flatten().cloned().collect();
                    got.sort_by_key(|(id, _)| *id);
                    let mut wanted = wanted;
                    wanted.sort_by_key(|(id, _)| *id);
                    assert_eq!(got, wanted, "{ctx}: bounds");
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Puffin with deletion vectors
// ---------------------------------------------------------------------------------------------

/// Files in memory, for the Puffin reader.
#[derive(Default)]
struct MemIO {
    files: Mutex<HashMap<String, Vec<u8>>>,
}

impl MemIO {
    fn with(location: &str, bytes: Vec<u8>) -> MemIO {
        let io = MemIO::default();
        io.files.lock().unwrap().insert(location.to_string(), bytes);
        io
    }
}

impl FileIO for MemIO {
    fn read(&self, location: &str) -> Result<Vec<u8>> {
        self.files
            .lock()
            .unwrap()
            .get(location)
            .cloned()
            .ok_or_else(|| Error::invalid_argument(format!("no file {location}")))
    }

    fn write_new(&self, location: &str, bytes: &[u8]) -> Result<()> {
        self.files
            .lock()
            .unwrap()
            .insert(location.to_string(), bytes.to_vec());
        Ok(())
    }

    fn exists(&self, location: &str) -> Result<bool> {
        Ok(self.files.lock().unwrap().contains_key(location))
    }

    fn delete(&self, location: &str) -> Result<()> {
        self.files.lock().unwrap().remove(location);
        Ok(())
    }
    fn list(&self, _location: &str) -> Result<Vec<String>> {
        Ok(self.files.lock().unwrap().keys().cloned().collect())
    }
}

#[test]
fn puffin_dvs_match_java() {
    let files = corpus();
    let puffins: Vec<_> = files.iter().filter(|f| f.kind() == "puffin").collect();
    assert!(!puffins.is_empty());
    for file in puffins {
        let io = MemIO::with("mem://dv.puffin", file.bytes.clone());
        let reader = PuffinReader::open(&io, "mem://dv.puffin", None).unwrap();
        let want_blobs = file.expected["blobs"].as_array().unwrap();
        assert_eq!(reader.blobs().len(), want_blobs.len(), "{}", file.name);
        for (b, w) in reader.blobs().iter().zip(want_blobs) {
            assert_eq!(json!(b.blob_type), w["type"], "{}", file.name);
            assert_eq!(json!(b.fields), w["fields"], "{}", file.name);
            assert_eq!(json!(b.snapshot_id), w["snapshot_id"], "{}", file.name);
            assert_eq!(
                json!(b.sequence_number),
                w["sequence_number"],
                "{}",
                file.name
            );
            assert_eq!(json!(b.offset), w["offset"], "{}", file.name);
            assert_eq!(json!(b.length), w["length"], "{}", file.name);
            assert_eq!(
                json!(b.compression_codec.map(|c| c.as_str())),
                w["compression_codec"],
                "{}",
                file.name
            );
            let props: Map<String, Value> = b
                .properties
                .iter()
                .map(|(k, v)| (k.clone(), json!(v)))
                .collect();
            assert_eq!(
                normalise(&Value::Object(props)),
                normalise(&w["properties"])
            );
            let dv = read_deletion_vector_blob(&reader, b).unwrap();
            let want = file.expected["dvs"]
                .as_array()
                .unwrap()
                .iter()
                .find(|d| d["content_offset"] == json!(b.offset))
                .unwrap();
            assert_eq!(json!(b.length), want["content_size_in_bytes"]);
            assert_eq!(
                json!(dv.iter().collect::<Vec<_>>()),
                want["positions"],
                "{}",
                file.name
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Mutations: no reader may panic, whatever the bytes
// ---------------------------------------------------------------------------------------------

/// splitmix64: a small seeded generator, so that a failure can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

fn zigzag(v: i64) -> Vec<u8> {
    let mut n = ((v << 1) ^ (v >> 63)) as u64;
    let mut out = Vec::new();
    loop {
        let b = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(b);
            return out;
        }
        out.push(b | 0x80);
    }
}

/// Reads a zigzag varint at `pos`; returns the value and the position after it.
fn read_zigzag(bytes: &[u8], mut pos: usize) -> Option<(i64, usize)> {
    let mut raw: u64 = 0;
    let mut shift = 0;
    loop {
        let b = *bytes.get(pos)?;
        pos += 1;
        if shift > 63 {
            return None;
        }
        raw |= u64::from(b & 0x7f) << shift;
        shift += 7;
        if b & 0x80 == 0 {
            return Some((((raw >> 1) as i64) ^ -((raw & 1) as i64), pos));
        }
    }
}

/// The parts of an Avro object container file, enough to rebuild it.
struct Container {
    /// Magic and key-value metadata, up to and excluding the sync marker.
    header: Vec<u8>,
    /// Positions (start, end) of the varints in the header: map block counts and lengths.
    header_varints: Vec<(usize, usize)>,
    codec: String,
    sync: Vec<u8>,
    /// Each block's object count and decompressed payload.
    blocks: Vec<(i64, Vec<u8>)>,
}

fn parse_container(bytes: &[u8]) -> Option<Container> {
    if bytes.get(..4)? != b"Obj\x01" {
        return None;
    }
    let mut pos = 4;
    let mut header_varints = Vec::new();
    let mut codec = "null".to_string();
    loop {
        let (count, next) = read_zigzag(bytes, pos)?;
        header_varints.push((pos, next));
        pos = next;
        if count == 0 {
            break;
        }
        for _ in 0..count.unsigned_abs() {
            let mut kv = Vec::new();
            for _ in 0..2 {
                let (len, next) = read_zigzag(bytes, pos)?;
                header_varints.push((pos, next));
                let end = next.checked_add(usize::try_from(len).ok()?)?;
                kv.push(bytes.get(next..end)?);
                pos = end;
            }
            if kv[0] == b"avro.codec" {
                codec = String::from_utf8(kv[1].to_vec()).ok()?;
            }
        }
    }
    let header = bytes[..pos].to_vec();
    let sync = bytes.get(pos..pos + 16)?.to_vec();
    pos += 16;
    let mut blocks = Vec::new();
    while pos < bytes.len() {
        let (count, next) = read_zigzag(bytes, pos)?;
        let (size, next) = read_zigzag(bytes, next)?;
        let end = next.checked_add(usize::try_from(size).ok()?)?;
        let stored = bytes.get(next..end)?;
        let payload = match codec.as_str() {
            "null" => stored.to_vec(),
            "deflate" => {
                let mut out = Vec::new();
                flate2::read::DeflateDecoder::new(stored)
                    .read_to_end(&mut out)
                    .ok()?;
                out
            }
            _ => return None,
        };
        blocks.push((count, payload));
        pos = end + 16;
    }
    Some(Container {
        header,
        header_varints,
        codec,
        sync,
        blocks,
    })
}

fn compress(codec: &str, payload: &[u8]) -> Vec<u8> {
    match codec {
        "deflate" => {
            let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(payload).unwrap();
            e.finish().unwrap()
        }
        _ => payload.to_vec(),
    }
}

/// Rebuilds the file; `size_override` replaces one block's size varint.
fn build_container(c: &Container, size_override: Option<(usize, i64)>) -> Vec<u8> {
    let mut out = c.header.clone();
    out.extend_from_slice(&c.sync);
    for (i, (count, payload)) in c.blocks.iter().enumerate() {
        let stored = compress(&c.codec, payload);
        out.extend(zigzag(*count));
        match size_override {
            Some((j, size)) if j == i => out.extend(zigzag(size)),
            _ => out.extend(zigzag(stored.len() as i64)),
        }
        out.extend_from_slice(&stored);
        out.extend_from_slice(&c.sync);
    }
    out
}

const INTERESTING: [i64; 14] = [
    0,
    1,
    -1,
    2,
    -2,
    127,
    128,
    255,
    i32::MAX as i64,
    i32::MIN as i64,
    i64::MAX,
    i64::MIN,
    1 << 40,
    -(1 << 40),
];

/// A value near `old` (off by one, negated, doubled, zero) or an interesting one.
fn near(rng: &mut Rng, old: i64) -> i64 {
    let interesting = rng.pick(&INTERESTING);
    rng.pick(&[
        old.wrapping_add(1),
        old.wrapping_sub(1),
        0,
        old.wrapping_neg(),
        old.wrapping_mul(2),
        interesting,
    ])
}

/// Byte-level mutations: bit flips, byte replacements, truncations, insertions and
/// deletions, anywhere in `data`.
fn mutate_bytes(rng: &mut Rng, data: &[u8]) -> Vec<u8> {
    let mut out = data.to_vec();
    if out.is_empty() {
        return out;
    }
    match rng.below(6) {
        0 => {
            for _ in 0..1 + rng.below(4) {
                let i = rng.below(out.len());
                out[i] ^= 1 << rng.below(8);
            }
        }
        1 => {
            for _ in 0..1 + rng.below(3) {
                let i = rng.below(out.len());
                let random = rng.next() as u8;
                out[i] = rng.pick(&[0x00, 0x01, 0x7f, 0x80, 0xff, 0xfe, 0x02, random]);
            }
        }
        2 => out.truncate(rng.below(out.len())),
        3 => {
            let i = rng.below(out.len());
            let varint = zigzag(rng.pick(&INTERESTING));
            out.splice(i..i, varint);
        }
        4 => {
            let i = rng.below(out.len());
            let n = 1 + rng.below(8.min(out.len() - i));
            out.drain(i..i + n);
        }
        _ => {
            // overwrite a run with a copy of another part of the file
            let len = 1 + rng.below(16.min(out.len()));
            let from = rng.below(out.len() - len + 1);
            let to = rng.below(out.len() - len + 1);
            let chunk = out[from..from + len].to_vec();
            out[to..to + len].copy_from_slice(&chunk);
        }
    }
    out
}

/// Avro-aware mutations: change decompressed record bytes (so the record decoder, not
/// only the codec, sees the damage), object counts, block sizes and the header's
/// map counts and string lengths.
fn mutate_avro(rng: &mut Rng, c: &Container) -> Vec<u8> {
    let mut c2 = Container {
        header: c.header.clone(),
        header_varints: c.header_varints.clone(),
        codec: c.codec.clone(),
        sync: c.sync.clone(),
        blocks: c.blocks.clone(),
    };
    let block = rng.below(c2.blocks.len().max(1));
    match rng.below(5) {
        0 | 1 if !c2.blocks.is_empty() => {
            let payload = &c2.blocks[block].1;
            c2.blocks[block].1 = mutate_bytes(rng, payload);
            build_container(&c2, None)
        }
        2 if !c2.blocks.is_empty() => {
            let (count, _) = c2.blocks[block];
            c2.blocks[block].0 = near(rng, count);
            build_container(&c2, None)
        }
        3 if !c2.blocks.is_empty() => {
            let real = compress(&c2.codec, &c2.blocks[block].1).len() as i64;
            let size = near(rng, real);
            build_container(&c2, Some((block, size)))
        }
        _ => {
            let (start, end) = c2.header_varints[rng.below(c2.header_varints.len())];
            let (old, _) = read_zigzag(&c2.header, start).unwrap();
            let new = near(rng, old);
            c2.header.splice(start..end, zigzag(new));
            build_container(&c2, None)
        }
    }
}

/// Every reader that could be given these bytes; results are ignored, a panic fails. The
/// manifest reader's fast path must agree with its plan alone on every input: the same
/// entries, or the same error.
fn read_everything(bytes: &[u8]) {
    for options in [
        ManifestProjection::all(),
        ManifestProjection::scan(vec![1, 2]),
    ] {
        let visit = |with_fast: bool| {
            let mut got = Vec::new();
            let keep = |e: &mut ManifestEntry| {
                got.push(e.clone());
                Ok(())
            };
            let r = if with_fast {
                visit_manifest(
                    ManifestSource::Bytes(bytes),
                    &ReadManifestOptions::default().projection(&options),
                    keep,
                )
            } else {
                visit_manifest(
                    ManifestSource::Bytes(bytes),
                    &ReadManifestOptions::default()
                        .projection(&options)
                        .fast_path(false),
                    keep,
                )
            };
            r.map(|_| format!("{got:?}")).map_err(|e| e.to_string())
        };
        assert_eq!(visit(true), visit(false), "{options:?}");
    }
    let _ = read_manifest_list_bytes(bytes);
}

fn read_puffin_everything(bytes: &[u8]) {
    let _ = DeletionVector::deserialize(bytes);
    let io = MemIO::with("mem://p", bytes.to_vec());
    if let Ok(reader) = PuffinReader::open(&io, "mem://p", None) {
        for blob in reader.blobs() {
            let _ = reader.read_blob(blob);
            let _ = read_deletion_vector_blob(&reader, blob);
        }
    }
    // a file size that disagrees with the bytes
    let _ = PuffinReader::open(&io, "mem://p", Some(bytes.len() as u64 + 7));
    let _ = PuffinReader::open(&io, "mem://p", Some((bytes.len() as u64).saturating_sub(3)));
}

const BYTE_MUTATIONS: usize = 300;
const AVRO_MUTATIONS: usize = 300;

#[test]
fn mutated_corpus_files_never_panic() {
    let files = corpus();
    for (n, file) in files.iter().enumerate() {
        let mut rng = Rng(0x1CEF_10E0 ^ (n as u64).wrapping_mul(0x9E37_79B9));
        if file.kind() == "puffin" {
            let blobs: Vec<(usize, usize)> = file.expected["dvs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| {
                    let off = d["content_offset"].as_u64().unwrap() as usize;
                    (
                        off,
                        off + d["content_size_in_bytes"].as_u64().unwrap() as usize,
                    )
                })
                .collect();
            for _ in 0..BYTE_MUTATIONS + AVRO_MUTATIONS {
                let mutated = mutate_bytes(&mut rng, &file.bytes);
                read_puffin_everything(&mutated);
                let (start, end) = blobs[rng.below(blobs.len())];
                let blob = mutate_bytes(&mut rng, &file.bytes[start..end]);
                let _ = DeletionVector::deserialize(&blob);
                let _ = DeletionVector::deserialize_vector(&blob[blob.len().min(8)..]);
            }
            continue;
        }
        // the unmutated file reads, whatever its kind, through every reader
        read_everything(&file.bytes);
        for _ in 0..BYTE_MUTATIONS {
            read_everything(&mutate_bytes(&mut rng, &file.bytes));
        }
        let container = parse_container(&file.bytes).unwrap_or_else(|| {
            panic!("{}: not an Avro container this test understands", file.name)
        });
        assert!(!container.blocks.is_empty(), "{}", file.name);
        // rebuilding without a mutation gives a file that reads the same
        let rebuilt = build_container(&container, None);
        if file.kind() == "manifest" {
            assert_eq!(
                read_manifest(
                    ManifestSource::Bytes(&rebuilt),
                    &ReadManifestOptions::default()
                )
                .unwrap(),
                read_manifest(
                    ManifestSource::Bytes(&file.bytes),
                    &ReadManifestOptions::default()
                )
                .unwrap(),
                "{}",
                file.name
            );
        } else {
            assert_eq!(
                read_manifest_list_bytes(&rebuilt).unwrap(),
                read_manifest_list_bytes(&file.bytes).unwrap(),
                "{}",
                file.name
            );
        }
        for _ in 0..AVRO_MUTATIONS {
            read_everything(&mutate_avro(&mut rng, &container));
        }
    }
}

/// Decoding straight into Arrow (`manifest_bytes_to_batch`, what Python's `read_manifest`
/// uses) gives the batch of the materialised entries, with and without scan options and
/// inheritance from a manifest list row.
#[test]
fn arrow_decode_equals_the_materialised_entries() {
    use icefloe::arrow::manifest::{entries_to_batch, manifest_bytes_to_batch};
    let files = corpus();
    let rows: Vec<ManifestFile> = files
        .iter()
        .filter(|f| f.kind() == "manifest_list")
        .flat_map(|f| read_manifest_list_bytes(&f.bytes).unwrap())
        .filter(|m| m.first_row_id.is_some())
        .take(1)
        .chain(std::iter::once(
            read_manifest_list_bytes(
                &files
                    .iter()
                    .find(|f| f.kind() == "manifest_list")
                    .unwrap()
                    .bytes,
            )
            .unwrap()
            .remove(0),
        ))
        .collect();
    assert_eq!(rows.len(), 2, "a v3 row with first_row_id and another row");
    let mut n = 0;
    for file in files.iter().filter(|f| f.kind() == "manifest") {
        for options in [
            ManifestProjection::all(),
            ManifestProjection::scan(vec![1, 2]),
        ] {
            for row in std::iter::once(None).chain(rows.iter().map(Some)) {
                let mut m = read_manifest(
                    ManifestSource::Bytes(&file.bytes),
                    &ReadManifestOptions::default().projection(&options),
                )
                .unwrap();
                if let Some(r) = row {
                    m.inherit(r);
                }
                let md = &m.metadata;
                let ptype = md.partition_spec.partition_type(&md.schema).unwrap();
                let want = entries_to_batch(&m.entries, &ptype).unwrap();
                let (got_md, got) = manifest_bytes_to_batch(&file.bytes, &options, row).unwrap();
                assert_eq!(&got_md, md, "{}", file.name);
                assert_eq!(got, want, "{} {options:?} {row:?}", file.name);
                n += got.num_rows();
            }
        }
    }
    assert!(n > 50, "only {n} rows compared");
}
