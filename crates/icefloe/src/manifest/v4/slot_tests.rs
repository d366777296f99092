//! The slot decoder (`slot.rs`) against the value-tree decoder (`avro.rs`): the same
//! entries for every field kind, null and absent fields, nested records, partition
//! tuples of several specs and types, manifest DVs, every projection; the same typed
//! errors on bad input, and no panic on corrupted bytes.

use super::*;
use crate::manifest::{Codec, FieldSummary, ManifestProjection};
use crate::spec::{Literal, PrimitiveType};

use ContentType::*;
use TrackingStatus::*;

pub(super) fn partitioning() -> V4Layout {
    let mut p = V4Layout {
        fields: vec![
            (1000, "day".into(), PrimitiveType::Date),
            (1001, "region".into(), PrimitiveType::String),
            (1002, "bucket".into(), PrimitiveType::Int),
            (1003, "hour".into(), PrimitiveType::Long),
        ],
        specs: Default::default(),
        location: None,
    };
    p.specs.insert(0, vec![1000]);
    p.specs.insert(1, vec![1001, 1000, 1002]);
    p.specs.insert(2, vec![1003]);
    p.specs.insert(3, vec![]);
    p
}

/// A data file entry with every optional field set.
pub(super) fn full_file(i: i64) -> TrackedFile {
    TrackedFile {
        tracking: Tracking {
            status: Existing,
            snapshot_id: Some(7 + i),
            sequence_number: Some(3),
            file_sequence_number: Some(2),
            dv_snapshot_id: Some(9),
            first_row_id: Some(1000 * i),
            deleted_positions: Some(vec![1, 2, 3]),
            replaced_positions: Some(vec![]),
        },
        content_type: Data,
        format_version: 4,
        location: format!("s3://b/data/{i}.parquet"),
        file_format: "parquet".into(),
        record_count: 10 + i,
        file_size_in_bytes: 4096,
        spec_id: Some(1),
        sort_order_id: Some(1),
        deletion_vector: Some(DeletionVector {
            location: "s3://b/dv.puffin".into(),
            offset: 4,
            size_in_bytes: 40,
            cardinality: 2,
            key_metadata: Some(vec![9, 9]),
        }),
        manifest_info: None,
        key_metadata: Some(vec![1, 2]),
        split_offsets: Some(vec![4, 100, 2000]),
        equality_ids: None,
        partition: vec![
            Some(Literal::String(format!("eu-{i}"))),
            Some(Literal::Date(19_000 + i as i32)),
            None,
        ],
        metrics: Metrics {
            column_sizes: Some(vec![(1, 10), (2, 20)]),
            value_counts: Some(vec![(1, 5), (2, 6), (3, 7)]),
            null_value_counts: Some(vec![(1, 0), (2, 1)]),
            nan_value_counts: Some(vec![(3, 0)]),
            lower_bounds: Some(vec![(1, vec![1, 0, 0, 0]), (2, b"a".to_vec())]),
            upper_bounds: Some(vec![(1, vec![9, 0, 0, 0]), (2, b"z".to_vec())]),
        },
    }
}

/// A data file entry with every optional field null.
pub(super) fn bare_file(i: i64) -> TrackedFile {
    TrackedFile {
        tracking: Tracking::new(Added),
        content_type: Data,
        format_version: 4,
        location: format!("d{i}"),
        file_format: "avro".into(),
        record_count: 0,
        file_size_in_bytes: 0,
        spec_id: None,
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

pub(super) fn other_specs(i: i64) -> TrackedFile {
    let mut e = bare_file(i);
    e.spec_id = Some(if i % 2 == 0 { 0 } else { 2 });
    e.partition = vec![if i % 2 == 0 {
        Some(Literal::Date(1))
    } else {
        Some(Literal::Long(i << 40))
    }];
    e.metrics.value_counts = Some(vec![(1, 1)]);
    e.metrics.upper_bounds = Some(vec![(3, vec![])]);
    e
}

pub(super) fn equality_delete(i: i64) -> TrackedFile {
    TrackedFile {
        content_type: EqualityDeletes,
        equality_ids: Some(vec![1, 3]),
        deletion_vector: None,
        tracking: Tracking {
            dv_snapshot_id: None,
            ..full_file(i).tracking
        },
        ..full_file(i)
    }
}

pub(super) fn root_manifest(i: i64) -> TrackedFile {
    let mut info = ManifestInfo {
        added_files_count: 1,
        existing_files_count: 2,
        deleted_files_count: 3,
        replaced_files_count: 4,
        added_rows_count: 5,
        existing_rows_count: 6,
        deleted_rows_count: 7,
        replaced_rows_count: 8,
        min_sequence_number: 1,
        dv: None,
        dv_cardinality: None,
        partitions: Some(vec![
            FieldSummary {
                contains_null: true,
                contains_nan: Some(false),
                lower_bound: Some(vec![1]),
                upper_bound: None,
            },
            FieldSummary::default(),
        ]),
    };
    if i % 2 == 1 {
        info.set_dv([0, 2]).unwrap();
        info.partitions = None;
    }
    TrackedFile {
        content_type: if i % 3 == 0 {
            DeleteManifest
        } else {
            DataManifest
        },
        manifest_info: Some(info),
        file_format: "avro".into(),
        record_count: 3,
        sort_order_id: None,
        deletion_vector: None,
        split_offsets: None,
        partition: Vec::new(),
        spec_id: Some(1),
        tracking: Tracking {
            sequence_number: Some(2),
            file_sequence_number: Some(2),
            ..Tracking::new(Modified)
        },
        ..full_file(i)
    }
}

pub(super) fn projections() -> Vec<Option<ManifestProjection>> {
    vec![
        None,
        Some(ManifestProjection::all()),
        Some(ManifestProjection::minimal()),
        Some(ManifestProjection::scan(vec![1])),
        Some(ManifestProjection::scan(vec![2, 3])),
        Some(ManifestProjection::scan(vec![])),
    ]
}

/// Every entry of `bytes` as the value-tree decoder reads it, or its error.
fn by_tree(
    bytes: &[u8],
    p: &V4Layout,
    projection: Option<&ManifestProjection>,
) -> crate::error::Result<Vec<TrackedFile>> {
    let mut out = Vec::new();
    let push = |_: usize, e: TrackedFile| {
        out.push(e);
        Ok(())
    };
    match projection {
        Some(pr) => visit_v4_manifest_projected(bytes, "f.avro", p, pr, push)?,
        None => visit_v4_manifest_with(bytes, "f.avro", p, push)?,
    };
    Ok(out)
}

/// Every entry of `bytes` as the slot decoder reads it (each cloned out of the slot,
/// with its ordinal checked), or its error.
fn by_slot(
    bytes: &[u8],
    p: &V4Layout,
    projection: Option<&ManifestProjection>,
) -> crate::error::Result<Vec<TrackedFile>> {
    let mut out = Vec::new();
    visit_v4_manifest_slots(bytes, p, projection, |i, e| {
        assert_eq!(i, out.len());
        out.push(e.clone());
        Ok(())
    })
    .map_err(|e| e.in_file("f.avro"))?;
    Ok(out)
}

fn same(bytes: &[u8], p: &V4Layout) -> usize {
    let mut n = 0;
    for pr in projections() {
        let tree = by_tree(bytes, p, pr.as_ref()).unwrap();
        let slot = by_slot(bytes, p, pr.as_ref()).unwrap();
        assert_eq!(slot, tree, "{pr:?}");
        n = slot.len();
    }
    n
}

#[test]
fn slots_decode_what_the_value_tree_decodes() {
    let p = partitioning();
    // full and bare entries alternate, so that a value left in the slot by the entry
    // before would show
    let data: Vec<TrackedFile> = (0..40)
        .map(|i| match i % 3 {
            0 => full_file(i),
            1 => bare_file(i),
            _ => other_specs(i),
        })
        .collect();
    let deletes: Vec<TrackedFile> = (0..5).map(equality_delete).collect();
    let mut root: Vec<TrackedFile> = (0..6).map(root_manifest).collect();
    root.extend(data.iter().take(7).cloned());
    root.push(equality_delete(9));
    for codec in [Codec::Null, Codec::Deflate] {
        for (kind, entries) in [
            (V4ManifestKind::DataLeaf, &data),
            (V4ManifestKind::DeleteLeaf, &deletes),
            (V4ManifestKind::Root, &root),
        ] {
            let bytes = write_v4_manifest_with(kind, entries, codec, &p).unwrap();
            assert_eq!(same(&bytes, &p), entries.len());
            // the whole projection gives the entries as written
            assert_eq!(&by_slot(&bytes, &p, None).unwrap(), entries);
            // without the table's partitioning the tuple is skipped, as the tree's
            // decoder skips it
            let none = V4Layout::none();
            let tree = by_tree(&bytes, &none, None).unwrap();
            assert_eq!(by_slot(&bytes, &none, None).unwrap(), tree);
            assert!(tree.iter().all(|e| e.partition.is_empty()));
        }
    }
}

#[test]
fn the_projection_leaves_out_metrics_as_v3_planning_does() {
    let p = partitioning();
    let bytes =
        write_v4_manifest_with(V4ManifestKind::DataLeaf, &[full_file(1)], Codec::Null, &p).unwrap();
    let scan = ManifestProjection::scan(vec![2]);
    let e = by_slot(&bytes, &p, Some(&scan)).unwrap().remove(0);
    assert_eq!(e.metrics.column_sizes, None);
    assert_eq!(e.metrics.value_counts, Some(vec![(2, 6)]));
    assert_eq!(e.metrics.null_value_counts, Some(vec![(2, 1)]));
    assert_eq!(e.metrics.nan_value_counts, Some(vec![]));
    assert_eq!(e.metrics.lower_bounds, Some(vec![(2, b"a".to_vec())]));
    assert_eq!(e.metrics.upper_bounds, Some(vec![(2, b"z".to_vec())]));
    // what planning always needs is there
    assert_eq!(e.split_offsets, Some(vec![4, 100, 2000]));
    assert_eq!(e.partition, full_file(1).partition);
    assert_eq!(e.deletion_vector, full_file(1).deletion_vector);
}

/// Fields in another order, fields the model does not know (at the top and inside the
/// tuple and the tracking struct), optional fields left out of the schema, and ints
/// written as longs: resolved by id as the tree's decoder resolves them.
#[test]
fn slots_resolve_the_writer_schema_by_id() {
    let p = partitioning();
    let schema = r#"{"type":"record","name":"tracked_file","fields":[
{"name":"content_stats","field-id":146,"type":["null",{"type":"record","name":"cs","fields":[
 {"name":"x","field-id":10200,"type":["null","long"]}]}]},
{"name":"partition","field-id":102,"type":["null",{"type":"record","name":"r102","fields":[
 {"name":"unknown","field-id":1999,"type":["null","string"]},
 {"name":"day","field-id":1000,"type":["null","int"]}]}]},
{"name":"location","field-id":100,"type":"string"},
{"name":"tracking","field-id":147,"type":{"type":"record","name":"r147","fields":[
 {"name":"later","field-id":99,"type":"long"},
 {"name":"status","field-id":0,"type":"long"}]}},
{"name":"content_type","field-id":134,"type":"long"},
{"name":"format_version","field-id":157,"type":"int"},
{"name":"file_format","field-id":101,"type":"string"},
{"name":"record_count","field-id":103,"type":"int"},
{"name":"file_size_in_bytes","field-id":104,"type":"long"},
{"name":"spec_id","field-id":141,"type":["int","null"]},
{"name":"value_counts","field-id":109,"type":["null",{"type":"array","items":{"type":"record","name":"k","fields":[
 {"name":"key","field-id":119,"type":"int"},{"name":"value","field-id":120,"type":"long"}]}}]}
]}"#;
    use crate::manifest::avro::{put_bytes, put_long};
    let mut body = Vec::new();
    for i in 0..3i64 {
        // content_stats: null, then x = i
        if i == 0 {
            put_long(&mut body, 0);
        } else {
            put_long(&mut body, 1);
            put_long(&mut body, 1);
            put_long(&mut body, i);
        }
        // partition: {unknown: "u", day: 5} or null
        if i == 2 {
            put_long(&mut body, 0);
        } else {
            put_long(&mut body, 1);
            put_long(&mut body, 1);
            put_bytes(&mut body, b"u");
            put_long(&mut body, 1);
            put_long(&mut body, 5 + i);
        }
        put_bytes(&mut body, format!("f{i}").as_bytes());
        put_long(&mut body, 77); // later
        put_long(&mut body, 1); // status ADDED
        put_long(&mut body, 0); // data
        put_long(&mut body, 4);
        put_bytes(&mut body, b"parquet");
        put_long(&mut body, 10);
        put_long(&mut body, 100);
        // spec_id: 0 (branch 0 is the int here), or null
        if i == 2 {
            put_long(&mut body, 1);
        } else {
            put_long(&mut body, 0);
            put_long(&mut body, 0);
        }
        put_long(&mut body, 1);
        put_long(&mut body, 1);
        put_long(&mut body, 1);
        put_long(&mut body, 10);
        put_long(&mut body, 0);
    }
    let meta = [
        ("format-version", "4".to_string()),
        ("content", "data".to_string()),
    ];
    let mut w = crate::manifest::avro::ContainerWriter::new(schema, &meta, Codec::Null);
    w.block.extend_from_slice(&body);
    // three entries in one block
    for _ in 0..3 {
        w.end_object().unwrap();
    }
    let bytes = w.finish().unwrap();
    assert_eq!(same(&bytes, &p), 3);
    let e = by_slot(&bytes, &p, None).unwrap();
    assert_eq!(e[0].partition, vec![Some(Literal::Date(5))]);
    assert_eq!(e[1].partition, vec![Some(Literal::Date(6))]);
    assert!(e[2].partition.is_empty());
    assert_eq!(e[2].spec_id, None);
    assert_eq!(e[0].metrics.value_counts, Some(vec![(1, 10)]));
    assert_eq!(e[0].metrics.lower_bounds, None);
}

fn field_of(e: &crate::error::Error) -> String {
    e.location().unwrap().field.clone()
}

/// Writes `entries` with the rules bypassed.
fn write_unchecked(kind: &str, entries: &[TrackedFile]) -> Vec<u8> {
    super::write_unchecked(kind, entries, &partitioning())
}

/// Both decoders fail on `bytes`, with typed errors naming the same field.
fn same_error(bytes: &[u8]) -> crate::error::Error {
    let p = partitioning();
    for pr in projections() {
        let tree = by_tree(bytes, &p, pr.as_ref()).unwrap_err();
        let slot = by_slot(bytes, &p, pr.as_ref()).unwrap_err();
        assert!(
            matches!(slot, crate::error::Error::InvalidMetadata { .. }),
            "{slot:?}"
        );
        assert_eq!(field_of(&slot), field_of(&tree), "{slot} / {tree}");
        assert_eq!(slot.location().unwrap().file, "f.avro");
    }
    by_slot(bytes, &p, None).unwrap_err()
}

#[test]
fn slots_refuse_what_the_rules_forbid() {
    let e = same_error(&write_unchecked(
        "data",
        &[bare_file(0), equality_delete(1)],
    ));
    assert_eq!(field_of(&e), "entries[1].content_type");
    let e = same_error(&write_unchecked("deletes", &[bare_file(0)]));
    assert_eq!(field_of(&e), "entries[0].content_type");
    let e = same_error(&write_unchecked("data", &[root_manifest(1)]));
    assert_eq!(field_of(&e), "entries[0].content_type");
    let mut bad = root_manifest(1);
    bad.manifest_info.as_mut().unwrap().dv_cardinality = None;
    let e = same_error(&write_unchecked("root", &[bad]));
    assert_eq!(field_of(&e), "entries[0].manifest_info.dv_cardinality");
    let mut bad = bare_file(0);
    bad.location.clear();
    let e = same_error(&write_unchecked("data", &[bad]));
    assert_eq!(field_of(&e), "entries[0].location");
    // a tuple of a spec the table does not have
    let mut bad = other_specs(0);
    bad.spec_id = Some(0);
    let bytes = write_unchecked("data", &[bad]);
    let mut p = partitioning();
    p.specs.remove(&0);
    p.specs.insert(5, vec![1000]);
    let tree = by_tree(&bytes, &p, None).unwrap_err();
    let slot = by_slot(&bytes, &p, None).unwrap_err();
    assert_eq!(field_of(&slot), "entries[0].spec_id");
    assert_eq!(field_of(&tree), field_of(&slot));
}

#[test]
fn slots_refuse_unknown_status_content_and_missing_fields() {
    let body_len = {
        let mut out = Vec::new();
        super::avro::encode(&mut out, &bare_file(0), &partitioning()).unwrap();
        out.len()
    };
    // the status is the entry's first byte; the content type follows the tracking
    // struct (status and 7 null branches)
    for (pos, value, field) in [
        (0, 9i64, "entries[0].tracking.status"),
        (8, 1, "entries[0].content_type"),
        (8, -1, "entries[0].content_type"),
    ] {
        let mut bytes = write_unchecked("data", &[bare_file(0)]);
        let start = bytes.len() - body_len - 16;
        bytes[start + pos] = ((value << 1) ^ (value >> 63)) as u8;
        let e = same_error(&bytes);
        assert_eq!(field_of(&e), field, "{e}");
    }
    // a schema without a required field (the location)
    let meta = [
        ("format-version", "4".to_string()),
        ("content", "data".to_string()),
    ];
    let full_schema = super::avro::schema_for(&partitioning()).unwrap();
    let schema = full_schema.replace(r#"{"name":"location","field-id":100,"type":"string"},"#, "");
    assert_ne!(schema, full_schema);
    let mut body = Vec::new();
    super::avro::encode(&mut body, &bare_file(0), &partitioning()).unwrap();
    // drop the location's bytes (a length byte and "d0"), after tracking (8 bytes),
    // content type (1) and format version (1)
    let mut without = body.clone();
    without.drain(10..13);
    let mut w = crate::manifest::avro::ContainerWriter::new(&schema, &meta, Codec::Null);
    w.block.extend_from_slice(&without);
    w.end_object().unwrap();
    let e = same_error(&w.finish().unwrap());
    assert_eq!(field_of(&e), "entries[0].location", "{e}");
    assert!(e.to_string().contains("missing"), "{e}");
    // a required field written as a union holding null: the record count's 0 reads as
    // the null branch, a byte as the value took
    let schema = full_schema.replace(
        r#"{"name":"record_count","field-id":103,"type":"long"}"#,
        r#"{"name":"record_count","field-id":103,"type":["null","long"]}"#,
    );
    assert_ne!(schema, full_schema);
    let mut w = crate::manifest::avro::ContainerWriter::new(&schema, &meta, Codec::Null);
    w.block.extend_from_slice(&body);
    w.end_object().unwrap();
    let e = same_error(&w.finish().unwrap());
    assert_eq!(field_of(&e), "entries[0].record_count", "{e}");
    assert!(e.to_string().contains("missing or null"), "{e}");
}

#[test]
fn slots_refuse_truncated_files_and_never_panic_on_corrupted_bytes() {
    let p = partitioning();
    let root = [root_manifest(1), full_file(1), equality_delete(2)];
    let bytes = write_v4_manifest_with(V4ManifestKind::Root, &root, Codec::Null, &p).unwrap();
    for cut in [0, 3, 10, bytes.len() / 2, bytes.len() - 20, bytes.len() - 1] {
        let e = by_slot(&bytes[..cut], &p, None).unwrap_err();
        assert_eq!(
            e.location().map(|l| l.file.as_str()),
            Some("f.avro"),
            "{e:?}"
        );
    }
    let scan = ManifestProjection::scan(vec![1]);
    for i in 0..bytes.len() {
        for flip in [0x01u8, 0x80, 0xff] {
            let mut b = bytes.clone();
            b[i] ^= flip;
            let projection = (flip == 0x80).then_some(&scan);
            let _ = by_slot(&b, &p, projection);
        }
    }
}
