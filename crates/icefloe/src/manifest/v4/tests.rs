//! v4 manifests: round trips, the seed's examples as golden root entries, bad input.

use super::*;
use crate::manifest::Codec;

use ContentType::*;
use TrackingStatus::*;

fn file(status: TrackingStatus, location: &str, rows: i64) -> TrackedFile {
    TrackedFile {
        tracking: Tracking::new(status),
        content_type: Data,
        format_version: 4,
        location: location.to_string(),
        file_format: "parquet".to_string(),
        record_count: rows,
        file_size_in_bytes: 100 * rows,
        spec_id: Some(0),
        sort_order_id: None,
        deletion_vector: None,
        manifest_info: None,
        key_metadata: None,
        split_offsets: None,
        equality_ids: None,
        partition: Vec::new(),
        metrics: Metrics::default(),
    }
}

fn info(added: i32, existing: i32) -> ManifestInfo {
    ManifestInfo {
        added_files_count: added,
        existing_files_count: existing,
        deleted_files_count: 0,
        replaced_files_count: 0,
        added_rows_count: i64::from(added) * 10,
        existing_rows_count: i64::from(existing) * 10,
        deleted_rows_count: 0,
        replaced_rows_count: 0,
        min_sequence_number: 1,
        dv: None,
        dv_cardinality: None,
        partitions: None,
    }
}

/// A data manifest entry of `files` entries (its record_count: the leaf's entry count).
fn manifest(status: TrackingStatus, location: &str, files: i32) -> TrackedFile {
    TrackedFile {
        content_type: DataManifest,
        file_format: "avro".to_string(),
        record_count: i64::from(files),
        manifest_info: Some(info(files, 0)),
        sort_order_id: None,
        ..file(status, location, 0)
    }
}

fn dv(location: &str, cardinality: i64) -> DeletionVector {
    DeletionVector {
        location: location.to_string(),
        offset: 4,
        size_in_bytes: 40,
        cardinality,
        key_metadata: None,
    }
}

fn round_trip(kind: V4ManifestKind, entries: &[TrackedFile]) -> V4Manifest {
    let bytes = write_v4_manifest(kind, entries, Codec::Deflate).unwrap();
    let m = read_v4_manifest(&bytes, "mem://root.avro").unwrap();
    assert_eq!(m.kind, kind);
    assert_eq!(m.entries, entries);
    m
}

/// `(status, content type, location)` of each entry: the golden form of a root.
fn shape(m: &V4Manifest) -> Vec<(TrackingStatus, ContentType, &str)> {
    m.entries
        .iter()
        .map(|e| (e.tracking.status, e.content_type, e.location.as_str()))
        .collect()
}

#[test]
fn every_root_entry_kind_round_trips() {
    let mut data = file(Added, "d1.parquet", 10);
    data.tracking = Tracking {
        status: Modified,
        snapshot_id: Some(7),
        sequence_number: Some(3),
        file_sequence_number: Some(2),
        dv_snapshot_id: Some(7),
        first_row_id: Some(1000),
        deleted_positions: None,
        replaced_positions: None,
    };
    data.deletion_vector = Some(DeletionVector {
        key_metadata: Some(vec![1, 2]),
        ..dv("dv.puffin", 3)
    });
    data.split_offsets = Some(vec![4, 1000, 2000]);
    data.sort_order_id = Some(1);
    data.key_metadata = Some(vec![9; 16]);
    let eq = TrackedFile {
        content_type: EqualityDeletes,
        equality_ids: Some(vec![1, 3]),
        ..file(Added, "eq.parquet", 2)
    };
    let mut m1 = manifest(Modified, "m1.avro", 3);
    let mut i = info(3, 0);
    i.set_dv([1]).unwrap();
    m1.manifest_info = Some(i);
    m1.tracking.deleted_positions = Some(vec![0xAB]);
    m1.tracking.sequence_number = Some(5);
    m1.tracking.file_sequence_number = Some(5);
    let del_manifest = TrackedFile {
        content_type: DeleteManifest,
        ..manifest(Existing, "dm.avro", 1)
    };
    let entries = [data, eq, m1, del_manifest];
    let m = round_trip(V4ManifestKind::Root, &entries);
    let dv = m.entries[2]
        .manifest_info
        .as_ref()
        .unwrap()
        .decode_dv(3)
        .unwrap()
        .unwrap();
    assert_eq!(dv.iter().collect::<Vec<_>>(), [1]);
    // every codec, and an empty manifest
    for codec in [Codec::Null, Codec::Deflate, Codec::Snappy, Codec::Zstd] {
        let bytes = write_v4_manifest(V4ManifestKind::Root, &entries, codec).unwrap();
        assert_eq!(read_v4_manifest(&bytes, "r").unwrap().entries, entries);
    }
    round_trip(V4ManifestKind::Root, &[]);
}

#[test]
fn leaves_round_trip() {
    round_trip(
        V4ManifestKind::DataLeaf,
        &[file(Added, "d1", 1), file(Existing, "d2", 2)],
    );
    let eq = TrackedFile {
        content_type: EqualityDeletes,
        equality_ids: Some(vec![1]),
        ..file(Added, "eq", 2)
    };
    round_trip(V4ManifestKind::DeleteLeaf, &[eq]);
}

#[test]
fn many_entries_span_blocks() {
    let entries: Vec<_> = (0..5000)
        .map(|i| file(Existing, &format!("s3://bucket/data/{i:08}.parquet"), i))
        .collect();
    let m = round_trip(V4ManifestKind::DataLeaf, &entries);
    assert_eq!(m.entries.len(), 5000);
    // the visitor sees the same entries with their ordinals, one at a time
    let bytes = write_v4_manifest(V4ManifestKind::DataLeaf, &entries, Codec::Zstd).unwrap();
    let mut seen = 0;
    let kind = visit_v4_manifest(&bytes, "leaf", |i, e| {
        assert_eq!(e, entries[i]);
        assert_eq!(i, seen);
        seen += 1;
        Ok(())
    })
    .unwrap();
    assert_eq!((kind, seen), (V4ManifestKind::DataLeaf, 5000));
}

// --- the seed's examples: the root entries after each snapshot -------------------------

/// Appends to the root manifest: D4, then D5, go into the root as ADDED data files.
#[test]
fn seed_append_to_root() {
    let a = round_trip(V4ManifestKind::Root, &[manifest(Added, "M1", 3)]);
    assert_eq!(shape(&a), [(Added, DataManifest, "M1")]);
    let b = round_trip(
        V4ManifestKind::Root,
        &[manifest(Existing, "M1", 3), file(Added, "D4", 1)],
    );
    assert_eq!(
        shape(&b),
        [(Existing, DataManifest, "M1"), (Added, Data, "D4")]
    );
    let c = round_trip(
        V4ManifestKind::Root,
        &[
            manifest(Existing, "M1", 3),
            file(Existing, "D4", 1),
            file(Added, "D5", 1),
        ],
    );
    assert_eq!(
        shape(&c),
        [
            (Existing, DataManifest, "M1"),
            (Existing, Data, "D4"),
            (Added, Data, "D5")
        ]
    );
}

/// Appends with a new data manifest: M2 (D4, D5, D6) is added next to M1.
#[test]
fn seed_append_new_data_manifest() {
    let leaf = round_trip(
        V4ManifestKind::DataLeaf,
        &[
            file(Added, "D4", 1),
            file(Added, "D5", 1),
            file(Added, "D6", 1),
        ],
    );
    assert_eq!(leaf.entries.len(), 3);
    let b = round_trip(
        V4ManifestKind::Root,
        &[manifest(Existing, "M1", 3), manifest(Added, "M2", 3)],
    );
    assert_eq!(
        shape(&b),
        [(Existing, DataManifest, "M1"), (Added, DataManifest, "M2")]
    );
}

/// Removing a file from the root: D1 becomes DELETED, D2 stays.
#[test]
fn seed_remove_from_root() {
    let b = round_trip(
        V4ManifestKind::Root,
        &[file(Deleted, "D1", 1), file(Existing, "D2", 1)],
    );
    assert_eq!(shape(&b), [(Deleted, Data, "D1"), (Existing, Data, "D2")]);
}

/// M1 with its manifest DV removing ordinal `pos`, as upstream writes it: the entry is
/// MODIFIED, the cumulative DV is inline in manifest_info, this snapshot's change in
/// tracking.deleted_positions (the seed's separate type-5 entry DV1; docs/v4.md).
fn m1_minus(pos: i64) -> TrackedFile {
    let mut m1 = manifest(Modified, "M1", 3);
    let mut i = info(3, 0);
    i.set_dv([pos]).unwrap();
    m1.tracking.deleted_positions = i.dv.clone();
    m1.manifest_info = Some(i);
    m1
}

/// Removing a file from a leaf: D2 (ordinal 1 of M1) is removed by M1's manifest DV.
#[test]
fn seed_remove_from_leaf() {
    let b = round_trip(V4ManifestKind::Root, &[m1_minus(1)]);
    assert_eq!(shape(&b), [(Modified, DataManifest, "M1")]);
    let mi = b.entries[0].manifest_info.as_ref().unwrap();
    let dv = mi.decode_dv(3).unwrap().unwrap();
    assert_eq!(dv.iter().collect::<Vec<_>>(), [1]);
    assert_eq!(mi.dv_cardinality, Some(1));
}

/// Overwrite in the root: D1 replaced by D2, then D2 by D3.
#[test]
fn seed_overwrite_in_root() {
    let b = round_trip(
        V4ManifestKind::Root,
        &[file(Deleted, "D1", 1), file(Added, "D2", 1)],
    );
    assert_eq!(shape(&b), [(Deleted, Data, "D1"), (Added, Data, "D2")]);
    let c = round_trip(
        V4ManifestKind::Root,
        &[file(Deleted, "D2", 1), file(Added, "D3", 1)],
    );
    assert_eq!(shape(&c), [(Deleted, Data, "D2"), (Added, Data, "D3")]);
}

/// Overwrite in a leaf: D2 removed from M1 by its DV, D4 added to the root.
#[test]
fn seed_overwrite_in_leaf() {
    let b = round_trip(V4ManifestKind::Root, &[m1_minus(1), file(Added, "D4", 1)]);
    assert_eq!(
        shape(&b),
        [(Modified, DataManifest, "M1"), (Added, Data, "D4")]
    );
}

/// Root-only row delta: D1 gets DV1 (on its own entry, upstream's form), D2 is added.
#[test]
fn seed_root_only_row_delta() {
    let mut d1 = file(Modified, "D1", 10);
    d1.deletion_vector = Some(dv("DV1.puffin", 2));
    d1.tracking.dv_snapshot_id = Some(2);
    let b = round_trip(V4ManifestKind::Root, &[d1, file(Added, "D2", 1)]);
    assert_eq!(shape(&b), [(Modified, Data, "D1"), (Added, Data, "D2")]);
    let v = b.entries[0].deletion_vector.as_ref().unwrap();
    assert_eq!((v.location.as_str(), v.cardinality), ("DV1.puffin", 2));
}

/// Compaction during an append: M1 - {0} and M2 - {1} compacted into M3 (D2, D3, D4,
/// D6), marked EXISTING as the seed's compaction rule says; D7 added.
#[test]
fn seed_compaction_during_append() {
    let a = {
        let mut m1 = manifest(Existing, "M1", 3);
        let mut i = info(3, 0);
        i.set_dv([0]).unwrap();
        m1.manifest_info = Some(i);
        let mut m2 = manifest(Existing, "M2", 3);
        let mut i = info(3, 0);
        i.set_dv([1]).unwrap();
        m2.manifest_info = Some(i);
        round_trip(V4ManifestKind::Root, &[m1, m2])
    };
    assert_eq!(
        shape(&a),
        [
            (Existing, DataManifest, "M1"),
            (Existing, DataManifest, "M2")
        ]
    );
    let b = round_trip(
        V4ManifestKind::Root,
        &[manifest(Existing, "M3", 4), file(Added, "D7", 1)],
    );
    assert_eq!(
        shape(&b),
        [(Existing, DataManifest, "M3"), (Added, Data, "D7")]
    );
}

// --- bad input ---------------------------------------------------------------------------

fn field_of(e: &crate::error::Error) -> String {
    e.location().unwrap().field.clone()
}

#[test]
fn writer_refuses_what_the_rules_forbid() {
    // a leaf mixing data and deletes
    let eq = TrackedFile {
        content_type: EqualityDeletes,
        equality_ids: Some(vec![1]),
        ..file(Added, "eq", 2)
    };
    let e = write_v4_manifest(
        V4ManifestKind::DataLeaf,
        &[file(Added, "d", 1), eq.clone()],
        Codec::Null,
    )
    .unwrap_err();
    assert_eq!(field_of(&e), "entries[1].content_type", "{e}");
    let e = write_v4_manifest(
        V4ManifestKind::DeleteLeaf,
        &[file(Added, "d", 1)],
        Codec::Null,
    )
    .unwrap_err();
    assert_eq!(field_of(&e), "entries[0].content_type", "{e}");
    // a leaf holding a manifest (depth > 2)
    let e = write_v4_manifest(
        V4ManifestKind::DataLeaf,
        &[manifest(Added, "m", 1)],
        Codec::Null,
    )
    .unwrap_err();
    assert_eq!(field_of(&e), "entries[0].content_type", "{e}");
    // manifest_info exactly on manifests
    let mut m = manifest(Added, "m", 1);
    m.manifest_info = None;
    let e = write_v4_manifest(V4ManifestKind::Root, &[m], Codec::Null).unwrap_err();
    assert_eq!(field_of(&e), "entries[0].manifest_info", "{e}");
    let mut d = file(Added, "d", 1);
    d.manifest_info = Some(info(1, 0));
    let e = write_v4_manifest(V4ManifestKind::Root, &[d], Codec::Null).unwrap_err();
    assert_eq!(field_of(&e), "entries[0].manifest_info", "{e}");
    // a DV only on data entries
    let mut m = manifest(Added, "m", 1);
    m.deletion_vector = Some(dv("x", 1));
    let e = write_v4_manifest(V4ManifestKind::Root, &[m], Codec::Null).unwrap_err();
    assert_eq!(field_of(&e), "entries[0].deletion_vector", "{e}");
    // equality ids required for equality deletes, and only there
    let e = write_v4_manifest(
        V4ManifestKind::Root,
        &[TrackedFile {
            equality_ids: None,
            ..eq
        }],
        Codec::Null,
    )
    .unwrap_err();
    assert_eq!(field_of(&e), "entries[0].equality_ids", "{e}");
    // a manifest DV without its cardinality
    let mut m = manifest(Added, "m", 1);
    m.manifest_info.as_mut().unwrap().dv = Some(vec![0]);
    let e = write_v4_manifest(V4ManifestKind::Root, &[m], Codec::Null).unwrap_err();
    assert_eq!(
        field_of(&e),
        "entries[0].manifest_info.dv_cardinality",
        "{e}"
    );
}

/// Writes `entries` with the rules bypassed, so the reader's checks can be tested.
fn write_unchecked(kind: &str, entries: &[TrackedFile]) -> Vec<u8> {
    let meta = [
        ("format-version", "4".to_string()),
        ("content", kind.to_string()),
    ];
    let mut w = crate::manifest::avro::ContainerWriter::new(&full_schema(), &meta, Codec::Null);
    for e in entries {
        super::avro::encode(&mut w.block, e, &V4Layout::none()).unwrap();
        w.end_object().unwrap();
    }
    w.finish().unwrap()
}

/// The writer schema of an unpartitioned table.
fn full_schema() -> String {
    super::avro::schema_for(&V4Layout::none()).unwrap()
}

fn read_err(bytes: &[u8]) -> crate::error::Error {
    let e = read_v4_manifest(bytes, "s3://b/meta/leaf.avro").unwrap_err();
    assert_eq!(e.location().unwrap().file, "s3://b/meta/leaf.avro", "{e}");
    e
}

#[test]
fn reader_refuses_mixed_leaves_and_manifests_in_leaves() {
    let eq = TrackedFile {
        content_type: EqualityDeletes,
        equality_ids: Some(vec![1]),
        ..file(Added, "eq", 2)
    };
    let e = read_err(&write_unchecked("data", &[file(Added, "d", 1), eq]));
    assert_eq!(field_of(&e), "entries[1].content_type");
    let e = read_err(&write_unchecked("deletes", &[file(Added, "d", 1)]));
    assert_eq!(field_of(&e), "entries[0].content_type");
    let e = read_err(&write_unchecked("data", &[manifest(Added, "m", 1)]));
    assert_eq!(field_of(&e), "entries[0].content_type");
}

#[test]
fn reader_refuses_unknown_content_and_status() {
    // content type 1 (position deletes) is not a v4 content type, nor is 5 (the seed's
    // MANIFEST_DV, which upstream did not adopt)
    for bad in [1, 5, -1] {
        let mut bytes = write_unchecked("root", &[file(Added, "d", 1)]);
        // the content type follows the 8-byte tracking struct (status + 7 null branches)
        let header_end = bytes.len() - write_unchecked_body_len(&file(Added, "d", 1)) - 16;
        let pos = header_end + 8;
        assert_eq!(bytes[pos], 0, "content type 0 is one zig-zag byte");
        bytes[pos] = ((bad << 1) ^ (bad >> 31)) as u8;
        let e = read_err(&bytes);
        assert_eq!(field_of(&e), "entries[0].content_type", "{e}");
        assert!(e.to_string().contains("unknown content type"), "{e}");
    }
    let mut bytes = write_unchecked("root", &[file(Added, "d", 1)]);
    let header_end = bytes.len() - write_unchecked_body_len(&file(Added, "d", 1)) - 16;
    bytes[header_end] = 9 << 1; // status 9
    let e = read_err(&bytes);
    assert_eq!(field_of(&e), "entries[0].tracking.status", "{e}");
}

/// The encoded length of one entry.
fn write_unchecked_body_len(e: &TrackedFile) -> usize {
    let mut out = Vec::new();
    super::avro::encode(&mut out, e, &V4Layout::none()).unwrap();
    out.len()
}

#[test]
fn reader_refuses_bad_metadata_and_missing_fields() {
    let meta_only = |meta: &[(&str, String)]| {
        crate::manifest::avro::ContainerWriter::new(&full_schema(), meta, Codec::Null)
            .finish()
            .unwrap()
    };
    let e = read_err(&meta_only(&[("content", "root".into())]));
    assert_eq!(field_of(&e), "format-version");
    let e = read_err(&meta_only(&[
        ("format-version", "3".into()),
        ("content", "root".into()),
    ]));
    assert_eq!(field_of(&e), "format-version");
    let e = read_err(&meta_only(&[("format-version", "4".into())]));
    assert_eq!(field_of(&e), "content");
    let e = read_err(&meta_only(&[
        ("format-version", "4".into()),
        ("content", "leaf".into()),
    ]));
    assert_eq!(field_of(&e), "content");

    // a writer schema without a required field: the entry's location
    let schema =
        full_schema().replace(r#"{"name":"location","field-id":100,"type":"string"},"#, "");
    assert_ne!(schema, full_schema());
    let meta = [
        ("format-version", "4".to_string()),
        ("content", "root".to_string()),
    ];
    let mut w = crate::manifest::avro::ContainerWriter::new(&schema, &meta, Codec::Null);
    let mut full = Vec::new();
    super::avro::encode(&mut full, &file(Added, "d", 1), &V4Layout::none()).unwrap();
    // drop the location's bytes (a length byte and "d"), after tracking (8 bytes),
    // content type (1) and format version (1)
    full.drain(10..12);
    w.block.extend_from_slice(&full);
    w.end_object().unwrap();
    let e = read_err(&w.finish().unwrap());
    assert_eq!(field_of(&e), "entries[0].location", "{e}");
    assert!(e.to_string().contains("missing"), "{e}");
}

#[test]
fn reader_refuses_truncated_and_garbage_files() {
    let bytes = write_v4_manifest(
        V4ManifestKind::Root,
        &[manifest(Added, "m1", 3), file(Added, "d", 1)],
        Codec::Null,
    )
    .unwrap();
    for cut in [0, 3, 10, bytes.len() / 2, bytes.len() - 20, bytes.len() - 1] {
        let e = read_v4_manifest(&bytes[..cut], "t.avro").unwrap_err();
        assert!(
            e.location().is_some_and(|l| l.file == "t.avro"),
            "{cut}: {e:?}"
        );
    }
    let e = read_v4_manifest(b"not avro at all", "t.avro").unwrap_err();
    assert!(e.to_string().contains("t.avro"), "{e}");
}

#[test]
fn manifest_dv_out_of_range_or_miscounted() {
    let mut i = info(3, 0);
    i.set_dv([0, 3]).unwrap();
    let e = i.decode_dv(3).unwrap_err();
    assert_eq!(field_of(&e), "manifest_info.dv", "{e}");
    assert!(i.decode_dv(4).is_ok());
    i.dv_cardinality = Some(5);
    let e = i.decode_dv(4).unwrap_err();
    assert_eq!(field_of(&e), "manifest_info.dv_cardinality", "{e}");
    i.dv = Some(vec![1, 2, 3]);
    let e = i.decode_dv(4).unwrap_err();
    assert_eq!(field_of(&e), "manifest_info.dv", "{e}");
}

/// The complex row delta, in upstream's form (DVs on their data entries, so the seed's
/// delete manifest DVM1 of DV1 and DV2 does not exist: DM1's entries D1 and D2 carry
/// them). Snapshot 2 deletes more rows of D1: DM1's manifest DV removes D1's leaf entry
/// (ordinal 0), D1 is restated in the root with DV4 (DV1's positions and the new ones),
/// and the updated rows go to D3 in a new data manifest DM2.
#[test]
fn seed_complex_row_delta() {
    let mut d1 = file(Existing, "D1", 10);
    d1.deletion_vector = Some(dv("DV1.puffin", 2));
    let mut d2 = file(Existing, "D2", 10);
    d2.deletion_vector = Some(dv("DV2.puffin", 1));
    let leaf = round_trip(V4ManifestKind::DataLeaf, &[d1, d2]);
    assert_eq!(leaf.entries.len(), 2);

    let mut dm1 = m1_minus(0);
    dm1.location = "DM1".into();
    dm1.manifest_info.as_mut().unwrap().existing_files_count = 2;
    let mut d1 = file(Modified, "D1", 10);
    d1.deletion_vector = Some(dv("DV4.puffin", 5));
    d1.tracking.dv_snapshot_id = Some(2);
    let b = round_trip(V4ManifestKind::Root, &[dm1, d1, manifest(Added, "DM2", 1)]);
    assert_eq!(
        shape(&b),
        [
            (Modified, DataManifest, "DM1"),
            (Modified, Data, "D1"),
            (Added, DataManifest, "DM2")
        ]
    );
    assert_eq!(
        b.entries[1].deletion_vector.as_ref().unwrap().cardinality,
        5
    );
}

/// Any corrupted byte gives a result or an error, never a panic, and never an
/// allocation the file's size cannot account for.
#[test]
fn corrupted_bytes_never_panic() {
    let mut m1 = manifest(Modified, "m1", 3);
    m1.manifest_info.as_mut().unwrap().set_dv([2]).unwrap();
    let eq = TrackedFile {
        content_type: EqualityDeletes,
        equality_ids: Some(vec![1, 2]),
        split_offsets: Some(vec![4]),
        ..file(Added, "eq", 2)
    };
    let bytes = write_v4_manifest(V4ManifestKind::Root, &[m1, eq], Codec::Null).unwrap();
    for i in 0..bytes.len() {
        for flip in [0x01u8, 0x80, 0xff] {
            let mut b = bytes.clone();
            b[i] ^= flip;
            let _ = read_v4_manifest(&b, "x.avro");
        }
    }
}

/// Fields the model does not read (`partition`, `content_stats`, later additions) are
/// skipped by their writer schema: the reader resolves fields by id, not by position.
#[test]
fn reader_skips_fields_it_does_not_model() {
    let schema = full_schema().replace(
        r#"{"name":"spec_id""#,
        r#"{"name":"partition","field-id":102,"type":{"type":"record","name":"r102","fields":[
            {"name":"x","field-id":1000,"type":["null","int"]}]}},
           {"name":"spec_id""#,
    );
    assert_ne!(schema, full_schema());
    let meta = [
        ("format-version", "4".to_string()),
        ("content", "data".to_string()),
    ];
    let entry = file(Added, "d", 1);
    let mut body = Vec::new();
    super::avro::encode(&mut body, &entry, &V4Layout::none()).unwrap();
    // after tracking (8), content type (1), format version (1), "d" (2), "parquet" (8),
    // record count (1) and file size 100 (2): the partition tuple (x = 7)
    body.splice(23..23, [0x02, 0x0e]);
    let mut w = crate::manifest::avro::ContainerWriter::new(&schema, &meta, Codec::Null);
    w.block.extend_from_slice(&body);
    w.end_object().unwrap();
    let m = read_v4_manifest(&w.finish().unwrap(), "p.avro").unwrap();
    assert_eq!(m.entries, [entry]);
}

/// A table's layout stores the paths under its location relative to it (entries and
/// DVs), qualifies a scheme-less local path elsewhere with `file://`, and every reader
/// (whole entries, reused slots, entries by ordinal) gives them back absolute.
#[test]
fn paths_are_stored_relative_to_the_table_location_and_read_back_absolute() {
    let table = V4Layout {
        location: Some("s3://b/wh/t".to_string()),
        ..V4Layout::none()
    };
    let mut with_dv = file(Added, "s3://b/wh/t/data/a.parquet", 10);
    with_dv.deletion_vector = Some(dv("s3://b/wh/t/data/a-dv.puffin", 2));
    let entries = vec![
        with_dv,
        file(Added, "gs://other/b.parquet", 10),
        file(Added, "/local/c.parquet", 10),
        manifest(Added, "s3://b/wh/t/metadata/leaf.avro", 4),
    ];
    let bytes =
        write_v4_manifest_with(V4ManifestKind::Root, &entries, Codec::Deflate, &table).unwrap();

    // as stored: read without a location
    let stored = read_v4_manifest(&bytes, "mem://root.avro").unwrap();
    let locations: Vec<&str> = stored.entries.iter().map(|e| e.location.as_str()).collect();
    assert_eq!(
        locations,
        [
            "data/a.parquet",
            "gs://other/b.parquet",
            "file:///local/c.parquet",
            "metadata/leaf.avro"
        ]
    );
    let stored_dv = stored.entries[0].deletion_vector.as_ref().unwrap();
    assert_eq!(stored_dv.location, "data/a-dv.puffin");

    // read back with the table's layout: absolute again, by every reader
    let mut expected = entries.clone();
    expected[2].location = "file:///local/c.parquet".to_string();
    let read = read_v4_manifest_with(&bytes, "mem://root.avro", &table).unwrap();
    assert_eq!(read.entries, expected);
    // the fast path and the step decoder alone
    for fast in [true, false] {
        let mut slots = Vec::new();
        let keep = |_, e: &mut TrackedFile| {
            slots.push(e.clone());
            Ok(())
        };
        if fast {
            visit_v4_manifest_slots(&bytes, &table, None, keep).unwrap();
        } else {
            visit_v4_manifest_slots_stepwise(&bytes, &table, None, keep).unwrap();
        }
        assert_eq!(slots, expected, "fast path: {fast}");
    }
    let (_, at) = v4_entries_at(&bytes, "mem://root.avro", &table, &[0, 3]).unwrap();
    assert_eq!(at, vec![(0, expected[0].clone()), (3, expected[3].clone())]);

    // the same file under another location names the files there
    let moved = V4Layout {
        location: Some("file:/copy/t".to_string()),
        ..V4Layout::none()
    };
    let read = read_v4_manifest_with(&bytes, "mem://root.avro", &moved).unwrap();
    assert_eq!(read.entries[0].location, "file:/copy/t/data/a.parquet");
    let moved_dv = read.entries[0].deletion_vector.as_ref().unwrap();
    assert_eq!(moved_dv.location, "file:/copy/t/data/a-dv.puffin");
    assert_eq!(read.entries[1].location, "gs://other/b.parquet");

    // a relative path in a table without a location: an error naming the entry
    let no_location = V4Layout {
        location: Some(String::new()),
        ..V4Layout::none()
    };
    let e = read_v4_manifest_with(&bytes, "mem://root.avro", &no_location).unwrap_err();
    assert_eq!(field_of(&e), "entries[0].location", "{e}");
    assert!(e.to_string().contains("data/a.parquet"), "{e}");

    // a scheme-less relative path outside the location has no v4 form
    let stray = file(Added, "elsewhere/d.parquet", 1);
    let e =
        write_v4_manifest_with(V4ManifestKind::Root, &[stray], Codec::Deflate, &table).unwrap_err();
    assert_eq!(field_of(&e), "entries[0].location", "{e}");
    assert!(e.to_string().contains("'elsewhere/d.parquet'"), "{e}");
}
