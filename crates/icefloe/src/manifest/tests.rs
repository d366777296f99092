#![allow(clippy::unwrap_used, clippy::panic, clippy::type_complexity)]

use super::*;
use crate::io::FileIO;
use crate::spec::partition::{PartitionField, PartitionSpec};
use crate::spec::{NestedField, PrimitiveType as P, Schema, Transform, Type};

use crate::io::MemoryFileIO as MemIO;

fn prim(id: i32, name: &str, p: P) -> NestedField {
    NestedField::optional(id, name, Type::Primitive(p))
}

/// A schema with one column of each partitionable type and a spec with one identity
/// field per column plus day(ts), bucket and truncate.
fn schema_and_spec() -> (Schema, PartitionSpec) {
    let schema = Schema::new(
        3,
        vec![
            prim(1, "b", P::Boolean),
            prim(2, "i", P::Int),
            prim(3, "l", P::Long),
            prim(4, "f", P::Float),
            prim(5, "d", P::Double),
            prim(
                6,
                "dec",
                P::Decimal {
                    precision: 10,
                    scale: 2,
                },
            ),
            prim(7, "dt", P::Date),
            prim(8, "t", P::Time),
            prim(9, "ts", P::Timestamp),
            prim(10, "tstz", P::Timestamptz),
            prim(11, "s", P::String),
            prim(12, "u", P::Uuid),
            prim(13, "fx", P::Fixed(3)),
            prim(14, "bin", P::Binary),
            prim(15, "ns", P::TimestampNs),
            prim(
                16,
                "dec2",
                P::Decimal {
                    precision: 12,
                    scale: 2,
                },
            ),
        ],
        vec![],
    )
    .unwrap();
    let mut fields: Vec<PartitionField> = (1..=16)
        .map(|i| PartitionField::new(i, 1000 + i, format!("p{i}"), Transform::Identity))
        .collect();
    fields.push(PartitionField::new(9, 1017, "ts-day", Transform::Day));
    fields.push(PartitionField::new(
        11,
        1018,
        "s_bucket",
        Transform::Bucket(16),
    ));
    (schema, PartitionSpec::new(5, fields))
}

fn partition_values(k: i64) -> Vec<Option<Literal>> {
    vec![
        Some(Literal::Boolean(k % 2 == 0)),
        Some(Literal::Int(k as i32 - 3)),
        Some(Literal::Long(k * 1_000_000_007)),
        Some(Literal::Float(if k == 2 {
            f32::NAN
        } else {
            k as f32 * 0.5
        })),
        Some(Literal::Double(-(k as f64) * 1.25)),
        Some(Literal::Decimal(-12345 + i128::from(k))),
        Some(Literal::Date(19000 + k as i32)),
        Some(Literal::Time(3_600_000_000 + k)),
        Some(Literal::Timestamp(1_700_000_000_000_000 + k)),
        Some(Literal::Timestamptz(-5 + k)),
        Some(Literal::String(format!("s-{k}-é"))),
        Some(Literal::Uuid(
            0x0123_4567_89ab_cdef_0123_4567_89ab_cdef + u128::from(k as u8),
        )),
        Some(Literal::Fixed(vec![1, 2, k as u8])),
        Some(Literal::Binary(vec![0xff, k as u8])),
        Some(Literal::TimestampNs(1_700_000_000_000_000_123 + k)),
        if k == 1 {
            None
        } else {
            Some(Literal::Decimal(i128::from(k) * 100))
        },
        Some(Literal::Int(19000 + k as i32)),
        None,
    ]
}

fn full_file(content: DataContentType, k: i64, format_version: i32) -> DataFile {
    let mut df = DataFile::new(
        content,
        format!("s3://bucket/data/file-{k}.parquet"),
        FileFormat::Parquet,
        partition_values(k),
        100 + k,
        4096 + k,
    );
    df.column_sizes = Some(vec![(1, 10 + k), (2, 20)]);
    df.value_counts = Some(vec![(1, 100), (2, 100)]);
    df.null_value_counts = Some(vec![(1, 0), (2, k)]);
    df.nan_value_counts = Some(vec![(4, 1)]);
    df.lower_bounds = Some(vec![(1, vec![0]), (11, b"aaa".to_vec())]);
    df.upper_bounds = Some(vec![(1, vec![1]), (11, b"zzz".to_vec())]);
    df.key_metadata = Some(vec![9, 8, 7]);
    df.split_offsets = Some(vec![4, 1000 + k]);
    df.sort_order_id = Some(1);
    if format_version >= 2 {
        if content == DataContentType::EqualityDeletes {
            df.equality_ids = Some(vec![1, 2]);
        }
        if content == DataContentType::PositionDeletes {
            df.referenced_data_file = Some("s3://bucket/data/ref.parquet".into());
        }
    }
    if format_version >= 3 {
        if content == DataContentType::Data {
            df.first_row_id = Some(1000 * k);
        } else {
            df.content_offset = Some(4);
            df.content_size_in_bytes = Some(40 + k);
        }
    }
    df
}

fn write(
    io: &MemIO,
    location: &str,
    format_version: i32,
    content: ManifestContent,
    entries: &[ManifestEntry],
    codec: Codec,
) -> ManifestFile {
    let (schema, spec) = schema_and_spec();
    let mut w = ManifestWriter::new(format_version, content, &schema, &spec, 77, codec).unwrap();
    for e in entries {
        w.add_entry(e.clone()).unwrap();
    }
    w.finish(io, location).unwrap()
}

const CODECS: [Codec; 4] = [Codec::Null, Codec::Deflate, Codec::Snappy, Codec::Zstd];

fn entries_for(format_version: i32, content: DataContentType, full: bool) -> Vec<ManifestEntry> {
    (0..5)
        .map(|k| {
            let mut df = full_file(content, k, format_version);
            if !full {
                df = DataFile::new(
                    content,
                    df.file_path,
                    FileFormat::Unknown("lance".into()),
                    vec![None; df.partition.len()],
                    df.record_count,
                    df.file_size_in_bytes,
                );
            }
            let status = match k % 3 {
                0 => ManifestStatus::Added,
                1 => ManifestStatus::Existing,
                _ => ManifestStatus::Deleted,
            };
            let explicit = status != ManifestStatus::Added || k == 3;
            ManifestEntry {
                status,
                snapshot_id: if k == 0 { None } else { Some(10 + k) },
                sequence_number: explicit.then_some(k),
                file_sequence_number: explicit.then_some(k + 1),
                data_file: df,
            }
        })
        .collect()
}

#[test]
fn manifest_round_trip_every_version_codec_and_nulls() {
    let io = MemIO::default();
    let (schema, spec) = schema_and_spec();
    for format_version in 1..=3 {
        let contents: &[DataContentType] = if format_version == 1 {
            &[DataContentType::Data]
        } else {
            &[
                DataContentType::Data,
                DataContentType::PositionDeletes,
                DataContentType::EqualityDeletes,
            ]
        };
        for &content in contents {
            for full in [true, false] {
                for codec in CODECS {
                    let mcontent = if content == DataContentType::Data {
                        ManifestContent::Data
                    } else {
                        ManifestContent::Deletes
                    };
                    let mut entries = entries_for(format_version, content, full);
                    let loc = format!("m-{format_version}-{content:?}-{full}-{codec:?}.avro");
                    let mf = write(&io, &loc, format_version, mcontent, &entries, codec);
                    let m = read_manifest(
                        ManifestSource::file(&io, &loc),
                        &ReadManifestOptions::default(),
                    )
                    .unwrap();
                    assert_eq!(m.metadata.format_version, format_version);
                    assert_eq!(m.metadata.content, mcontent);
                    assert_eq!(m.metadata.schema_id, 3);
                    assert_eq!(m.metadata.schema, schema);
                    assert_eq!(m.metadata.partition_spec, spec);
                    if format_version == 1 {
                        // v1 has no sequence numbers and requires snapshot ids
                        for e in &mut entries {
                            e.sequence_number = None;
                            e.file_sequence_number = None;
                            e.snapshot_id = e.snapshot_id.or(Some(77));
                        }
                    }
                    // Debug form: NaN partition values compare equal
                    assert_eq!(
                        format!("{:?}", m.entries),
                        format!("{entries:?}"),
                        "v{format_version} {content:?} {codec:?}"
                    );
                    assert_eq!(mf.manifest_length, io.read(&loc).unwrap().len() as i64);
                    assert_eq!(mf.added_files_count, Some(2));
                    assert_eq!(mf.existing_files_count, Some(2));
                    assert_eq!(mf.deleted_files_count, Some(1));
                    assert_eq!(mf.added_rows_count, Some(100 + 103));
                    assert_eq!(mf.existing_rows_count, Some(101 + 104));
                    assert_eq!(mf.deleted_rows_count, Some(102));
                    // live explicit sequence numbers: 1 (existing), 3 (added), 4 (existing)
                    assert_eq!(mf.min_sequence_number, 1);
                    assert_eq!(mf.sequence_number, UNASSIGNED_SEQUENCE_NUMBER);
                    assert_eq!(mf.partition_spec_id, 5);
                    assert_eq!(mf.content, mcontent);
                }
            }
        }
    }
}

/// Versions that cannot hold a field drop it, as Java's writers do.
#[test]
fn fields_a_version_lacks_are_dropped() {
    let io = MemIO::default();
    let e = ManifestEntry::added(full_file(DataContentType::Data, 1, 3));
    write(
        &io,
        "v2.avro",
        2,
        ManifestContent::Data,
        std::slice::from_ref(&e),
        Codec::Null,
    );
    let m = read_manifest(
        ManifestSource::file(&io, "v2.avro"),
        &ReadManifestOptions::default(),
    )
    .unwrap();
    assert_eq!(m.entries[0].data_file.first_row_id, None);
    let mut expected = e.data_file.clone();
    expected.first_row_id = None;
    assert_eq!(m.entries[0].data_file, expected);
}

#[test]
fn field_summaries_are_computed_while_writing() {
    let io = MemIO::default();
    let entries: Vec<_> = (0..4)
        .map(|k| ManifestEntry::added(full_file(DataContentType::Data, k, 2)))
        .collect();
    let mf = write(
        &io,
        "s.avro",
        2,
        ManifestContent::Data,
        &entries,
        Codec::Null,
    );
    let p = mf.partitions.unwrap();
    assert_eq!(p.len(), 18);
    // p2: int k - 3 over k = 0..4
    assert_eq!(p[1].lower_bound, Some((-3i32).to_le_bytes().to_vec()));
    assert_eq!(p[1].upper_bound, Some(0i32.to_le_bytes().to_vec()));
    assert!(!p[1].contains_null);
    assert_eq!(p[1].contains_nan, Some(false));
    // p4: floats with a NaN at k = 2; bounds over the others (0, 0.5, 1.5)
    assert_eq!(p[3].contains_nan, Some(true));
    assert_eq!(p[3].lower_bound, Some(0f32.to_le_bytes().to_vec()));
    assert_eq!(p[3].upper_bound, Some(1.5f32.to_le_bytes().to_vec()));
    // p5: doubles -k * 1.25: lower -3.75, upper -0.0
    assert_eq!(p[4].lower_bound, Some((-3.75f64).to_le_bytes().to_vec()));
    assert_eq!(p[4].upper_bound, Some((-0.0f64).to_le_bytes().to_vec()));
    // p16: null at k = 1
    assert!(p[15].contains_null);
    // last field always null: no bounds
    assert!(p[17].contains_null);
    assert_eq!(p[17].lower_bound, None);
    assert_eq!(p[17].upper_bound, None);
    // strings compare by bytes
    assert_eq!(p[10].lower_bound, Some("s-0-é".as_bytes().to_vec()));
    assert_eq!(p[10].upper_bound, Some("s-3-é".as_bytes().to_vec()));
}

fn manifest_file(content: ManifestContent, seq: i64, first_row_id: Option<i64>) -> ManifestFile {
    ManifestFile {
        manifest_path: "m.avro".into(),
        manifest_length: 10,
        partition_spec_id: 5,
        content,
        sequence_number: seq,
        min_sequence_number: seq,
        added_snapshot_id: 500,
        added_files_count: Some(1),
        existing_files_count: Some(1),
        deleted_files_count: Some(0),
        added_rows_count: Some(10),
        existing_rows_count: Some(20),
        deleted_rows_count: Some(0),
        partitions: None,
        key_metadata: None,
        first_row_id,
    }
}

fn manifest_with(
    format_version: i32,
    content: ManifestContent,
    entries: Vec<ManifestEntry>,
) -> Manifest {
    let (schema, spec) = schema_and_spec();
    Manifest {
        metadata: ManifestMetadata {
            schema,
            schema_id: 3,
            partition_spec: spec,
            format_version,
            content,
        },
        entries,
    }
}

fn entry(
    status: ManifestStatus,
    snap: Option<i64>,
    seq: Option<i64>,
    fseq: Option<i64>,
    rows: i64,
    first_row_id: Option<i64>,
) -> ManifestEntry {
    let mut df = DataFile::new(
        DataContentType::Data,
        "f",
        FileFormat::Parquet,
        vec![],
        rows,
        1,
    );
    df.first_row_id = first_row_id;
    ManifestEntry {
        status,
        snapshot_id: snap,
        sequence_number: seq,
        file_sequence_number: fseq,
        data_file: df,
    }
}

#[test]
fn inheritance_table() {
    use ManifestStatus::*;
    type Case = (
        ManifestStatus,
        Option<i64>,
        Option<i64>,
        Option<i64>,
        Option<i64>,
        Option<i64>,
    );
    // (status, snapshot, seq, file seq) -> expected (snapshot, seq, file seq) with manifest seq 7
    let cases: &[(Case, (Option<i64>, Option<i64>, Option<i64>))] = &[
        (
            (Added, None, None, None, None, None),
            (Some(500), Some(7), Some(7)),
        ),
        (
            (Added, Some(1), Some(3), Some(4), None, None),
            (Some(1), Some(3), Some(4)),
        ),
        (
            (Added, None, Some(3), None, None, None),
            (Some(500), Some(3), Some(7)),
        ),
        (
            (Existing, None, None, None, None, None),
            (Some(500), None, None),
        ),
        (
            (Existing, Some(2), Some(2), Some(2), None, None),
            (Some(2), Some(2), Some(2)),
        ),
        (
            (Deleted, None, None, None, None, None),
            (Some(500), None, None),
        ),
        (
            (Deleted, Some(9), Some(5), Some(6), None, None),
            (Some(9), Some(5), Some(6)),
        ),
    ];
    for ((status, snap, seq, fseq, _, _), expected) in cases {
        let mut m = manifest_with(
            2,
            ManifestContent::Data,
            vec![entry(*status, *snap, *seq, *fseq, 1, None)],
        );
        m.inherit(&manifest_file(ManifestContent::Data, 7, None));
        let e = &m.entries[0];
        assert_eq!(
            (e.snapshot_id, e.sequence_number, e.file_sequence_number),
            *expected,
            "{status:?} {snap:?} {seq:?} {fseq:?}"
        );
    }
}

#[test]
fn v1_manifests_and_zero_sequence_numbers_inherit_zero_for_every_status() {
    use ManifestStatus::*;
    for (format_version, list_seq) in [(1, 7), (2, 0)] {
        let mut m = manifest_with(
            format_version,
            ManifestContent::Data,
            vec![
                entry(Existing, None, None, None, 1, None),
                entry(Added, None, None, None, 1, None),
            ],
        );
        m.inherit(&manifest_file(ManifestContent::Data, list_seq, None));
        for e in &m.entries {
            assert_eq!(
                (e.sequence_number, e.file_sequence_number),
                (Some(0), Some(0))
            );
        }
    }
}

#[test]
fn first_row_id_inheritance() {
    use ManifestStatus::*;
    let entries = vec![
        entry(Added, None, None, None, 10, None),
        entry(Existing, Some(1), Some(1), Some(1), 5, Some(3)),
        // a DELETED entry without an id gets none and uses none up (as Java reads it)
        entry(Deleted, Some(1), Some(1), Some(1), 6, None),
        entry(Added, None, None, None, 7, None),
        entry(Existing, Some(1), Some(1), Some(1), 2, None),
        entry(Deleted, Some(1), Some(1), Some(1), 4, Some(99)),
    ];
    let mut m = manifest_with(3, ManifestContent::Data, entries.clone());
    m.inherit(&manifest_file(ManifestContent::Data, 7, Some(1000)));
    let ids: Vec<_> = m.entries.iter().map(|e| e.data_file.first_row_id).collect();
    assert_eq!(
        ids,
        vec![Some(1000), Some(3), None, Some(1010), Some(1017), Some(99)]
    );

    // a manifest without first_row_id leaves nulls
    let mut m = manifest_with(3, ManifestContent::Data, entries.clone());
    m.inherit(&manifest_file(ManifestContent::Data, 7, None));
    let ids: Vec<_> = m.entries.iter().map(|e| e.data_file.first_row_id).collect();
    assert_eq!(ids, vec![None, Some(3), None, None, None, Some(99)]);

    // delete files never get one
    let mut del = entry(Added, None, None, None, 10, None);
    del.data_file.content = DataContentType::PositionDeletes;
    let mut m = manifest_with(3, ManifestContent::Deletes, vec![del]);
    m.inherit(&manifest_file(ManifestContent::Deletes, 7, Some(1000)));
    assert_eq!(m.entries[0].data_file.first_row_id, None);
    // entries_inherited leaves the manifest as read
    let m = manifest_with(3, ManifestContent::Data, entries);
    let inherited = m.entries_inherited(&manifest_file(ManifestContent::Data, 7, Some(5)));
    assert_eq!(inherited[0].data_file.first_row_id, Some(5));
    assert_eq!(m.entries[0].data_file.first_row_id, None);
}

/// The options of `read_manifest` change only what they name: reading a file or its
/// bytes, inheriting while reading or afterwards, with or without the fast path, give the
/// same manifest; only a file source names the file in errors.
#[test]
fn read_manifest_options_agree() {
    // entries are compared as Debug text: they hold NaN values, which are not equal to
    // themselves (and metadata with ==: its Debug text shows hash map order)
    let dbg = |v: &dyn std::fmt::Debug| format!("{v:?}");
    let io = MemIO::default();
    let entries = entries_for(3, DataContentType::Data, true);
    let mut mf = write(
        &io,
        "o.avro",
        3,
        ManifestContent::Data,
        &entries,
        Codec::Deflate,
    );
    mf.sequence_number = 4;
    mf.first_row_id = Some(10);
    let bytes = io.read("o.avro").unwrap();
    let from_file = read_manifest(
        ManifestSource::file(&io, "o.avro"),
        &ReadManifestOptions::default(),
    )
    .unwrap();
    let from_bytes = read_manifest(
        ManifestSource::Bytes(&bytes),
        &ReadManifestOptions::default(),
    )
    .unwrap();
    assert_eq!(from_file.metadata, from_bytes.metadata);
    assert_eq!(dbg(&from_file.entries), dbg(&from_bytes.entries));
    let mut inherited_after = from_bytes.clone();
    inherited_after.inherit(&mf);
    for fast_path in [true, false] {
        let options = ReadManifestOptions::default()
            .inherit_from(&mf)
            .fast_path(fast_path);
        let inherited_while = read_manifest(ManifestSource::Bytes(&bytes), &options).unwrap();
        assert_eq!(inherited_while.metadata, inherited_after.metadata);
        assert_eq!(
            dbg(&inherited_while.entries),
            dbg(&inherited_after.entries),
            "fast path {fast_path}"
        );
        let mut visited = Vec::new();
        let metadata = visit_manifest(ManifestSource::file(&io, "o.avro"), &options, |e| {
            visited.push(e.clone());
            Ok(())
        })
        .unwrap();
        assert_eq!(metadata, inherited_after.metadata);
        assert_eq!(dbg(&visited), dbg(&inherited_after.entries));
    }
    let cut = &bytes[..bytes.len() - 3];
    io.write_new("cut.avro", cut).unwrap();
    let in_file = read_manifest(
        ManifestSource::file(&io, "cut.avro"),
        &ReadManifestOptions::default(),
    )
    .unwrap_err();
    assert!(in_file.to_string().contains("cut.avro"), "{in_file}");
    let no_file =
        read_manifest(ManifestSource::Bytes(cut), &ReadManifestOptions::default()).unwrap_err();
    assert!(!no_file.to_string().contains("cut.avro"), "{no_file}");
}

#[test]
fn read_for_a_list_row_applies_inheritance_and_projection() {
    let io = MemIO::default();
    let entries = entries_for(3, DataContentType::Data, true);
    let mut mf = write(
        &io,
        "p.avro",
        3,
        ManifestContent::Data,
        &entries,
        Codec::Deflate,
    );
    mf.sequence_number = 9;
    mf.first_row_id = Some(50);
    let m = read_manifest(
        ManifestSource::file(&io, &mf.manifest_path),
        &ReadManifestOptions::default()
            .projection(&ManifestProjection::scan(vec![11]))
            .inherit_from(&mf),
    )
    .unwrap();
    let e = &m.entries[0];
    assert_eq!(e.snapshot_id, Some(77));
    assert_eq!(e.sequence_number, Some(9));
    let df = &e.data_file;
    assert_eq!(df.column_sizes, None);
    // counts only for the filtered column; split offsets for split planning
    let orig = &entries[0].data_file;
    let only_11 = |v: &Option<Vec<(i32, i64)>>| {
        v.as_ref().map(|v| {
            v.iter()
                .copied()
                .filter(|(id, _)| *id == 11)
                .collect::<Vec<_>>()
        })
    };
    assert_eq!(df.value_counts, only_11(&orig.value_counts));
    assert_eq!(df.null_value_counts, only_11(&orig.null_value_counts));
    assert_eq!(df.split_offsets, orig.split_offsets);
    let minimal = read_manifest(
        ManifestSource::file(&io, &mf.manifest_path),
        &ReadManifestOptions::default()
            .projection(&ManifestProjection::minimal())
            .inherit_from(&mf),
    )
    .unwrap();
    let md = &minimal.entries[0].data_file;
    assert_eq!(
        (&md.value_counts, &md.split_offsets, &md.lower_bounds),
        (&None, &None, &None)
    );
    assert_eq!(df.lower_bounds, Some(vec![(11, b"aaa".to_vec())]));
    assert_eq!(df.upper_bounds, Some(vec![(11, b"zzz".to_vec())]));
    assert_eq!(df.partition, entries[0].data_file.partition);
    assert_eq!(df.first_row_id, Some(0));
    let none = read_manifest(
        ManifestSource::file(&io, &mf.manifest_path),
        &ReadManifestOptions::default()
            .projection(&ManifestProjection::scan(vec![]))
            .inherit_from(&mf),
    )
    .unwrap();
    assert_eq!(none.entries[0].data_file.lower_bounds, None);
    // several filtered columns (a search, not the one-column compare): column 1 is dropped
    let two = read_manifest(
        ManifestSource::file(&io, &mf.manifest_path),
        &ReadManifestOptions::default()
            .projection(&ManifestProjection::scan(vec![7, 11]))
            .inherit_from(&mf),
    )
    .unwrap();
    let tf = &two.entries[0].data_file;
    assert_eq!(tf.lower_bounds, Some(vec![(11, b"aaa".to_vec())]));
    assert_eq!(tf.upper_bounds, Some(vec![(11, b"zzz".to_vec())]));
    assert_eq!(
        df.lower_bound(11, &P::String).unwrap(),
        Some(Literal::String("aaa".into()))
    );
}

#[test]
fn manifest_list_round_trip_every_version_and_codec() {
    let io = MemIO::default();
    for format_version in 1..=3 {
        for codec in CODECS {
            let mut full = manifest_file(ManifestContent::Data, UNASSIGNED_SEQUENCE_NUMBER, None);
            full.added_snapshot_id = 42;
            full.min_sequence_number = 3;
            full.key_metadata = Some(vec![1, 2]);
            full.partitions = Some(vec![
                FieldSummary {
                    contains_null: true,
                    contains_nan: Some(false),
                    lower_bound: Some(vec![1]),
                    upper_bound: Some(vec![2, 3]),
                },
                FieldSummary::default(),
            ]);
            let mut kept = manifest_file(ManifestContent::Data, 4, Some(7));
            kept.manifest_path = "old.avro".into();
            let mut deletes =
                manifest_file(ManifestContent::Deletes, UNASSIGNED_SEQUENCE_NUMBER, None);
            deletes.added_snapshot_id = 42;
            let mut sparse = manifest_file(ManifestContent::Data, 2, None);
            sparse.added_snapshot_id = 1;
            sparse.partitions = Some(vec![]);
            let mut input = vec![full, kept, sparse];
            if format_version >= 2 {
                input.push(deletes);
            }
            if format_version == 1 {
                for m in &mut input {
                    m.added_files_count = None;
                    m.deleted_rows_count = None;
                }
            }
            let loc = format!("list-{format_version}-{codec:?}.avro");
            let w = write_manifest_list(
                &io,
                &loc,
                format_version,
                42,
                Some(41),
                8,
                Some(100),
                &input,
                codec,
            )
            .unwrap();
            let read = read_manifest_list(&io, &loc).unwrap();
            assert_eq!(read, w.manifests);
            assert_eq!(w.length, io.read(&loc).unwrap().len() as i64);
            match format_version {
                1 => {
                    assert!(read.iter().all(|m| m.sequence_number == 0
                        && m.min_sequence_number == 0
                        && m.content == ManifestContent::Data
                        && m.first_row_id.is_none()));
                    assert_eq!(read[0].partitions, input[0].partitions);
                    assert_eq!(w.next_row_id, None);
                }
                2 => {
                    assert_eq!(
                        (read[0].sequence_number, read[0].min_sequence_number),
                        (8, 3)
                    );
                    assert_eq!(read[1].sequence_number, 4);
                    assert_eq!(
                        (read[3].sequence_number, read[3].min_sequence_number),
                        (8, 8)
                    );
                    assert_eq!(read[3].content, ManifestContent::Deletes);
                    assert!(read.iter().all(|m| m.first_row_id.is_none()));
                }
                _ => {
                    // new data manifests get ids from 100 by added + existing rows; a kept
                    // id stays; delete manifests get none
                    let ids: Vec<_> = read.iter().map(|m| m.first_row_id).collect();
                    assert_eq!(ids, vec![Some(100), Some(7), Some(130), None]);
                    assert_eq!(w.next_row_id, Some(160));
                }
            }
            let mut expected = input[0].clone();
            expected.sequence_number = read[0].sequence_number;
            expected.min_sequence_number = read[0].min_sequence_number;
            expected.first_row_id = read[0].first_row_id;
            assert_eq!(read[0], expected);
        }
    }
}

#[test]
fn list_writer_refuses_unassigned_sequence_numbers_of_other_snapshots() {
    let mut w = ManifestListWriter::new(2, 42, None, 8, None, Codec::Null).unwrap();
    let m = manifest_file(ManifestContent::Data, UNASSIGNED_SEQUENCE_NUMBER, None);
    assert!(w.add(&m).is_err());
    assert!(ManifestListWriter::new(3, 42, None, 8, None, Codec::Null).is_err());
}

// ---------------------------------------------------------------------------------------
// Files written by a generic Avro library: our writer's output must be valid Avro that
// the apache-avro crate decodes with our schema, and v1-style files written by it (no
// sequence numbers, no content) must read with the v2 defaults.
// ---------------------------------------------------------------------------------------

#[test]
fn our_files_are_valid_avro_for_another_reader() {
    let io = MemIO::default();
    // apache-avro 0.21 decodes a `fixed` uuid as a string, so the uuid partition field
    // (index 11) is left out of this cross-check
    let (schema, spec) = schema_and_spec();
    let fields: Vec<_> = spec
        .fields
        .iter()
        .filter(|f| f.field_id != 1012)
        .cloned()
        .collect();
    let spec = PartitionSpec::new(5, fields);
    for format_version in 1..=3 {
        let entries = entries_for(format_version, DataContentType::Data, true);
        let mut w = ManifestWriter::new(
            format_version,
            ManifestContent::Data,
            &schema,
            &spec,
            1,
            Codec::Snappy,
        )
        .unwrap();
        for mut e in entries.clone() {
            e.data_file.partition.remove(11);
            w.add_entry(e).unwrap();
        }
        let bytes = w.finish_to_bytes("x").unwrap().0;
        let reader = apache_avro::Reader::new(&bytes[..]).unwrap();
        let n = reader.collect::<Result<Vec<_>, _>>().unwrap().len();
        assert_eq!(n, entries.len());
        let list_loc = format!("l{format_version}.avro");
        let mf = manifest_file(ManifestContent::Data, 1, None);
        write_manifest_list(
            &io,
            &list_loc,
            format_version,
            1,
            None,
            1,
            Some(0),
            &[mf.clone(), mf],
            Codec::Deflate,
        )
        .unwrap();
        let bytes = io.read(&list_loc).unwrap();
        let n = apache_avro::Reader::new(&bytes[..])
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap()
            .len();
        assert_eq!(n, 2);
    }
}

const V1_LIST_SCHEMA: &str = r#"{"type":"record","name":"manifest_file","fields":[
 {"name":"manifest_path","type":"string","field-id":500},
 {"name":"manifest_length","type":"long","field-id":501},
 {"name":"partition_spec_id","type":"int","field-id":502},
 {"name":"added_snapshot_id","type":["null","long"],"default":null,"field-id":503},
 {"name":"added_data_files_count","type":["null","int"],"default":null,"field-id":504}]}"#;

#[test]
fn v1_list_from_another_writer_reads_with_defaults() {
    use apache_avro::types::Value as V;
    let schema = apache_avro::Schema::parse_str(V1_LIST_SCHEMA).unwrap();
    let mut w = apache_avro::Writer::new(&schema, Vec::new());
    w.append(V::Record(vec![
        ("manifest_path".into(), V::String("a.avro".into())),
        ("manifest_length".into(), V::Long(12)),
        ("partition_spec_id".into(), V::Int(0)),
        (
            "added_snapshot_id".into(),
            V::Union(1, Box::new(V::Long(5))),
        ),
        (
            "added_data_files_count".into(),
            V::Union(1, Box::new(V::Int(3))),
        ),
    ]))
    .unwrap();
    let bytes = w.into_inner().unwrap();
    let read = list::read_manifest_list_bytes(&bytes).unwrap();
    assert_eq!(read.len(), 1);
    let m = &read[0];
    assert_eq!(
        (m.sequence_number, m.min_sequence_number, m.content),
        (0, 0, ManifestContent::Data)
    );
    assert_eq!(m.added_files_count, Some(3));
    assert_eq!(m.added_snapshot_id, 5);
    assert_eq!(m.existing_files_count, None);
}

// ---------------------------------------------------------------------------------------
// Bad input
// ---------------------------------------------------------------------------------------

fn small_manifest() -> Vec<u8> {
    let (schema, spec) = schema_and_spec();
    let mut w =
        ManifestWriter::new(3, ManifestContent::Data, &schema, &spec, 1, Codec::Null).unwrap();
    w.add(full_file(DataContentType::Data, 1, 3)).unwrap();
    w.finish_to_bytes("x").unwrap().0
}

/// The length of the header: up to and including the first sync marker.
fn header_len(bytes: &[u8]) -> usize {
    let c = avro::Container::open(bytes).unwrap();
    let _ = c;
    // the sync marker is the last 16 bytes of the file too
    let sync = &bytes[bytes.len() - 16..];
    bytes.windows(16).position(|w| w == sync).unwrap() + 16
}

#[test]
fn truncation_at_every_byte_is_an_error() {
    let bytes = small_manifest();
    assert!(read_manifest(
        ManifestSource::Bytes(&bytes),
        &ReadManifestOptions::default()
    )
    .is_ok());
    // cut right after the header, a file is a valid empty manifest: that cut is skipped
    let header_end = header_len(&bytes);
    assert!(read_manifest(
        ManifestSource::Bytes(&bytes[..header_end]),
        &ReadManifestOptions::default()
    )
    .unwrap()
    .entries
    .is_empty());
    for n in (0..bytes.len()).filter(|n| *n != header_end) {
        assert!(
            read_manifest(
                ManifestSource::Bytes(&bytes[..n]),
                &ReadManifestOptions::default()
            )
            .is_err(),
            "truncated at {n} of {}",
            bytes.len()
        );
    }
    let io = MemIO::default();
    let mf = manifest_file(ManifestContent::Data, 1, None);
    write_manifest_list(&io, "l", 2, 1, None, 1, None, &[mf], Codec::Null).unwrap();
    let list = io.read("l").unwrap();
    let header_end = header_len(&list);
    for n in (0..list.len()).filter(|n| *n != header_end) {
        assert!(
            list::read_manifest_list_bytes(&list[..n]).is_err(),
            "list truncated at {n}"
        );
    }
}

#[test]
fn errors_name_the_file_and_field() {
    let io = MemIO::default();
    io.write_new("bad-magic.avro", b"Obj\x02rest").unwrap();
    let e = read_manifest(
        ManifestSource::file(&io, "bad-magic.avro"),
        &ReadManifestOptions::default(),
    )
    .unwrap_err();
    assert_eq!(e.location().unwrap().file, "bad-magic.avro");
    assert!(e.to_string().contains("magic"), "{e}");

    // a valid Avro file that is not a manifest
    let schema = apache_avro::Schema::parse_str(
        r#"{"type":"record","name":"x","fields":[{"name":"a","type":"int"}]}"#,
    )
    .unwrap();
    let mut w = apache_avro::Writer::new(&schema, Vec::new());
    w.add_user_metadata("schema".into(), schema_and_spec().0.to_json().to_string())
        .unwrap();
    w.add_user_metadata("partition-spec".into(), "[]").unwrap();
    w.append(apache_avro::types::Value::Record(vec![(
        "a".into(),
        apache_avro::types::Value::Int(1),
    )]))
    .unwrap();
    io.write_new("other.avro", &w.into_inner().unwrap())
        .unwrap();
    let e = read_manifest(
        ManifestSource::file(&io, "other.avro"),
        &ReadManifestOptions::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("not a manifest"), "{e}");
    assert_eq!(e.location().unwrap().file, "other.avro");
    assert!(read_manifest_list(&io, "other.avro")
        .unwrap_err()
        .to_string()
        .contains("not a manifest list"));

    // an unknown status value: patch the first entry's status byte (offset of block data)
    let bytes = small_manifest();
    let c = avro::Container::open(&bytes).unwrap();
    let mut first = None;
    c.for_each_block(|_, b| {
        first = Some(b.to_vec());
        Ok(())
    })
    .unwrap();
    let block = first.unwrap();
    let at = bytes
        .windows(block.len())
        .position(|w| w == block.as_slice())
        .unwrap();
    let mut bad = bytes.clone();
    bad[at] = 2 * 7; // zigzag 7
    let e =
        read_manifest(ManifestSource::Bytes(&bad), &ReadManifestOptions::default()).unwrap_err();
    assert!(e.to_string().contains("unknown status 7"), "{e}");
    assert_eq!(e.location().unwrap().field, "entries[0].status");
    // content 9 in data_file (right after status and three null unions)
    let mut bad = bytes.clone();
    bad[at + 5] = 2 * 9;
    let e =
        read_manifest(ManifestSource::Bytes(&bad), &ReadManifestOptions::default()).unwrap_err();
    assert_eq!(
        e.location().unwrap().field,
        "entries[0].data_file.content",
        "{e}"
    );
    // a null file_path: make the union... file_path is required (not a union), so a
    // negative length is the corruption to test
    let mut bad = bytes;
    bad[at + 6] = 1; // zigzag -1
    let e =
        read_manifest(ManifestSource::Bytes(&bad), &ReadManifestOptions::default()).unwrap_err();
    assert_eq!(
        e.location().unwrap().field,
        "entries[0].data_file.file_path",
        "{e}"
    );
}

#[test]
fn random_mutations_never_panic() {
    let mut inputs = vec![small_manifest()];
    let io = MemIO::default();
    let mf = manifest_file(ManifestContent::Data, 1, None);
    let mut w = ManifestListWriter::new(3, 1, None, 1, Some(0), Codec::Null).unwrap();
    w.add(&mf).unwrap();
    let _ = &io;
    inputs.push(w.finish_to_bytes().unwrap().0);
    let (schema, spec) = schema_and_spec();
    for codec in [Codec::Deflate, Codec::Snappy, Codec::Zstd] {
        let mut w =
            ManifestWriter::new(2, ManifestContent::Data, &schema, &spec, 1, codec).unwrap();
        w.add(full_file(DataContentType::Data, 2, 2)).unwrap();
        inputs.push(w.finish_to_bytes("x").unwrap().0);
    }
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for input in &inputs {
        for _ in 0..400 {
            let mut b = input.clone();
            let n = 1 + (next() % 4) as usize;
            for _ in 0..n {
                let i = (next() as usize) % b.len();
                match next() % 3 {
                    0 => b[i] = next() as u8,
                    1 => b[i] ^= 1 << (next() % 8),
                    _ => b[i] = 0xff,
                }
            }
            for options in [ManifestProjection::all(), ManifestProjection::scan(vec![1])] {
                let _ = fast_and_plan_agree(&b, &options);
            }
            let _ = list::read_manifest_list_bytes(&b);
        }
    }
    // pure garbage
    for len in [0usize, 1, 3, 4, 5, 20, 200] {
        let mut g: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        if len >= 4 {
            g[..4].copy_from_slice(avro::MAGIC);
        }
        assert!(read_manifest(ManifestSource::Bytes(&g), &ReadManifestOptions::default()).is_err());
        assert!(list::read_manifest_list_bytes(&g).is_err());
    }
}

#[test]
fn codec_names() {
    assert_eq!(Codec::parse("gzip").unwrap(), Codec::Deflate);
    assert_eq!(Codec::parse("ZSTD").unwrap(), Codec::Zstd);
    assert_eq!(Codec::parse("uncompressed").unwrap(), Codec::Null);
    assert!(Codec::parse("lzma").is_err());
    assert_eq!(Codec::default(), Codec::Deflate);
}

#[test]
fn java_schema_shapes() {
    let (schema, spec) = schema_and_spec();
    let w = ManifestWriter::new(2, ManifestContent::Data, &schema, &spec, 1, Codec::Null).unwrap();
    let bytes = w.finish_to_bytes("x").unwrap().0;
    let c = avro::Container::open(&bytes).unwrap();
    let text = std::str::from_utf8(c.meta("avro.schema").unwrap()).unwrap();
    let v: serde_json::Value = serde_json::from_str(text).unwrap();
    assert_eq!(v["name"], "manifest_entry");
    let df = &v["fields"][4];
    assert_eq!(df["name"], "data_file");
    assert_eq!(df["field-id"], 2);
    assert_eq!(df["type"]["name"], "r2");
    let part = &df["type"]["fields"][3];
    assert_eq!(part["type"]["name"], "r102");
    // partition field names are made Avro-compatible as Java does
    assert_eq!(part["type"]["fields"][16]["name"], "ts_x2Dday");
    assert_eq!(part["type"]["fields"][16]["field-id"], 1017);
    assert_eq!(part["type"]["fields"][5]["type"][1]["name"], "decimal_10_2");
    assert_eq!(part["type"]["fields"][5]["type"][1]["size"], 5);
    // the second decimal(10, 2) refers to the named type
    assert_eq!(
        part["type"]["fields"][15]["type"][1]["name"],
        "decimal_12_2"
    );
    let cs = &df["type"]["fields"][6];
    assert_eq!(cs["name"], "column_sizes");
    assert_eq!(cs["type"][0], "null");
    assert_eq!(cs["type"][1]["logicalType"], "map");
    assert_eq!(cs["type"][1]["items"]["name"], "k117_v118");
    assert_eq!(cs["type"][1]["items"]["fields"][0]["field-id"], 117);
    assert_eq!(c.meta_str("content").unwrap(), Some("data"));
    assert_eq!(c.meta_str("format-version").unwrap(), Some("2"));
    assert_eq!(c.meta_str("partition-spec-id").unwrap(), Some("5"));
    // a second field of the same decimal type refers to the named type, as Java writes
    // it; our reader resolves the reference
    let schema2 = Schema::new(
        0,
        vec![prim(
            1,
            "a",
            P::Decimal {
                precision: 10,
                scale: 2,
            },
        )],
        vec![],
    )
    .unwrap();
    let spec2 = PartitionSpec::new(
        0,
        vec![
            PartitionField::new(1, 1000, "a1", Transform::Identity),
            PartitionField::new(1, 1001, "a2", Transform::Identity),
        ],
    );
    let mut w =
        ManifestWriter::new(2, ManifestContent::Data, &schema2, &spec2, 1, Codec::Null).unwrap();
    let parts = vec![
        Some(Literal::Decimal(-5)),
        Some(Literal::Decimal(123_456_789_012)),
    ];
    w.add(DataFile::new(
        DataContentType::Data,
        "a",
        FileFormat::Avro,
        parts.clone(),
        1,
        1,
    ))
    .unwrap();
    let bytes = w.finish_to_bytes("x").unwrap().0;
    let c = avro::Container::open(&bytes).unwrap();
    let v: serde_json::Value = serde_json::from_slice(c.meta("avro.schema").unwrap()).unwrap();
    let pf = &v["fields"][4]["type"]["fields"][3]["type"]["fields"];
    assert_eq!(pf[1]["type"][1], "decimal_10_2");
    let m = read_manifest(
        ManifestSource::Bytes(&bytes),
        &ReadManifestOptions::default(),
    )
    .unwrap();
    assert_eq!(m.entries[0].data_file.partition, parts);
    let mut w =
        ManifestWriter::new(2, ManifestContent::Data, &schema2, &spec2, 1, Codec::Null).unwrap();
    let too_big = vec![Some(Literal::Decimal(10i128.pow(12))), None];
    assert!(w
        .add(DataFile::new(
            DataContentType::Data,
            "a",
            FileFormat::Avro,
            too_big,
            1,
            1
        ))
        .is_err());

    assert_eq!(writer::decimal_required_bytes(9), 4);
    assert_eq!(writer::decimal_required_bytes(10), 5);
    assert_eq!(writer::decimal_required_bytes(18), 8);
    assert_eq!(writer::decimal_required_bytes(38), 16);
}

#[test]
fn codec_from_table_property() {
    use crate::spec::table_metadata::TableMetadata;
    let with = |props: &str| {
        TableMetadata::from_json_str(&format!(
            r#"{{"format-version": 1, "location": "x", "last-updated-ms": 0, "last-column-id": 1,
               "schema": {{"type": "struct", "fields": [{{"id": 1, "name": "a", "required": true, "type": "int"}}]}},
               "partition-spec": [], "properties": {{{props}}}}}"#
        ))
        .unwrap()
    };
    assert_eq!(Codec::for_table(&with("")).unwrap(), Codec::Deflate);
    assert_eq!(
        Codec::for_table(&with(r#""write.avro.compression-codec": "zstd""#)).unwrap(),
        Codec::Zstd
    );
    assert_eq!(
        Codec::for_table(&with(r#""write.avro.compression-codec": "uncompressed""#)).unwrap(),
        Codec::Null
    );
    let e = Codec::for_table(&with(r#""write.avro.compression-codec": "brotli""#)).unwrap_err();
    assert_eq!(
        e.location().unwrap().field,
        "properties.write.avro.compression-codec"
    );
}

/// The word-at-a-time varint decoding and skipping agree with a byte-at-a-time reference
/// on every length from 1 to 10 bytes, at every alignment, and on overlong and truncated
/// values.
#[test]
fn varint_fast_paths_match_the_reference() {
    fn reference(
        buf: &[u8],
        mut pos: usize,
        n: usize,
    ) -> std::result::Result<(Vec<i64>, usize), ()> {
        let mut out = Vec::new();
        for _ in 0..n {
            let (mut v, mut shift) = (0u64, 0u32);
            loop {
                let b = *buf.get(pos).ok_or(())?;
                pos += 1;
                v |= u64::from(b & 0x7f) << shift;
                if b & 0x80 == 0 {
                    break;
                }
                shift += 7;
                if shift > 63 {
                    return Err(());
                }
            }
            out.push(((v >> 1) as i64) ^ -((v & 1) as i64));
        }
        Ok((out, pos))
    }
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for round in 0..3000 {
        let mut buf = Vec::new();
        let count = 1 + (next() % 12) as usize;
        for _ in 0..count {
            // lengths 1..=11 bytes; 11 is overlong
            let len = 1 + (next() % if round % 3 == 0 { 11 } else { 10 }) as usize;
            for i in 0..len {
                let low = (next() % 128) as u8;
                buf.push(if i + 1 < len { low | 0x80 } else { low });
            }
        }
        let cut = if round % 5 == 0 {
            (next() as usize) % (buf.len() + 1)
        } else {
            buf.len()
        };
        let buf = &buf[..cut];
        for n in 0..=count {
            let want = reference(buf, 0, n);
            let mut cur = avro::Cursor::new(buf);
            assert_eq!(
                cur.skip_longs(n).is_ok(),
                want.is_ok(),
                "skip {n} of {buf:?}"
            );
            if let Ok((_, end)) = want {
                assert_eq!(buf.len() - cur.remaining(), end, "skip end {n} of {buf:?}");
            }
            let mut cur = avro::Cursor::new(buf);
            let got: Result<Vec<i64>> = (0..n).map(|_| cur.long()).collect();
            match (&want, got) {
                (Ok((vals, end)), Ok(g)) => {
                    assert_eq!(vals, &g, "{buf:?}");
                    assert_eq!(buf.len() - cur.remaining(), *end);
                }
                (Err(()), Err(_)) => {}
                (w, g) => panic!("{buf:?}: reference {w:?}, fast {g:?}"),
            }
        }
    }
}

/// Entries decoded into the reused slot of `visit_manifest` are the entries that
/// `read_manifest` returns, whatever the previous entry held or the callback left
/// in the slot: full and bare files alternate, so every list is filled, emptied and
/// refilled with other lengths.
#[test]
fn visiting_in_one_slot_gives_the_same_entries() {
    let io = MemIO::default();
    for format_version in 1..=3 {
        for content in [DataContentType::Data, DataContentType::EqualityDeletes] {
            if format_version == 1 && content != DataContentType::Data {
                continue;
            }
            let full = entries_for(format_version, content, true);
            let bare = entries_for(format_version, content, false);
            let mut entries = Vec::new();
            for (i, (f, b)) in full.into_iter().zip(bare).enumerate() {
                let mut f = f;
                if i == 2 {
                    // fewer bounds than the entry before
                    if let Some(l) = f.data_file.lower_bounds.as_mut() {
                        l.truncate(1);
                    }
                }
                if i % 2 == 0 {
                    entries.push(f);
                    entries.push(b);
                } else {
                    entries.push(b);
                    entries.push(f);
                }
            }
            let mcontent = if content == DataContentType::Data {
                ManifestContent::Data
            } else {
                ManifestContent::Deletes
            };
            for codec in [Codec::Null, Codec::Deflate] {
                let loc = format!("visit-{format_version}-{content:?}-{codec:?}.avro");
                let mf = write(&io, &loc, format_version, mcontent, &entries, codec);
                let bytes = io.read(&loc).unwrap();
                for options in [
                    ManifestProjection::all(),
                    ManifestProjection::minimal(),
                    ManifestProjection::scan(vec![1, 3]),
                    ManifestProjection::scan(vec![2]),
                ] {
                    let mut expected = read_manifest(
                        ManifestSource::Bytes(&bytes),
                        &ReadManifestOptions::default().projection(&options),
                    )
                    .unwrap();
                    let (plan_entries, fast) = fast_and_plan_agree(&bytes, &options).unwrap();
                    // the partition of every type goes through the plan's field decoder,
                    // from the fast path
                    assert_eq!(fast, entries.len());
                    assert_eq!(plan_entries.len(), entries.len());
                    expected.inherit(&mf);
                    let mut got = Vec::new();
                    let mut n = 0;
                    visit_manifest(
                        ManifestSource::Bytes(&bytes),
                        &ReadManifestOptions::default()
                            .projection(&options)
                            .inherit_from(&mf),
                        |e| {
                            got.push(e.clone());
                            // what a careless caller may leave behind
                            if n % 3 == 1 {
                                e.data_file.first_row_id = Some(-1);
                                e.data_file.sort_order_id = Some(-1);
                                e.data_file.partition.clear();
                                e.data_file.file_path.push_str("-junk");
                                e.data_file.key_metadata = Some(vec![9]);
                                e.sequence_number = Some(-5);
                            } else if n % 3 == 2 {
                                e.data_file = DataFile::new(
                                    DataContentType::Data,
                                    "",
                                    FileFormat::Avro,
                                    Vec::new(),
                                    0,
                                    0,
                                );
                            }
                            n += 1;
                            Ok(())
                        },
                    )
                    .unwrap();
                    assert_eq!(
                        format!("{got:?}"),
                        format!("{:?}", expected.entries),
                        "v{format_version} {content:?} {codec:?} {options:?}"
                    );
                }
            }
        }
    }
}

/// A writer schema for a v2 data manifest with only the required data file fields and
/// the partition record as `partition` (the JSON of its type).
fn bare_manifest_schema(partition: &str, file_format: &str) -> String {
    format!(
        r#"{{"type":"record","name":"manifest_entry","fields":[
 {{"name":"status","type":"int","field-id":0}},
 {{"name":"data_file","field-id":2,"type":{{"type":"record","name":"r2","fields":[
  {{"name":"file_path","type":"string","field-id":100}},
  {{"name":"file_format","type":{file_format},"field-id":101}},
  {{"name":"partition","field-id":102,"type":{partition}}},
  {{"name":"record_count","type":"long","field-id":103}},
  {{"name":"file_size_in_bytes","type":"long","field-id":104}}]}}}}]}}"#
    )
}

/// Writes entries of the bare schema with apache-avro (another writer than ours) under a
/// spec of two identity fields, `a` (1000) and `b` (1001), both ints; `partition` builds
/// the Avro value of the tuple of entry `i`.
fn bare_manifest(
    partition_schema: &str,
    partition: impl Fn(usize) -> apache_avro::types::Value,
    n: usize,
) -> Vec<u8> {
    use apache_avro::types::Value as V;
    bare_manifest_with(
        partition_schema,
        partition,
        r#""string""#,
        |_| V::String("PARQUET".into()),
        n,
    )
}

/// [`bare_manifest`] with `file_format` of Avro type `format_schema`, its value for entry
/// `i` built by `format`.
fn bare_manifest_with(
    partition_schema: &str,
    partition: impl Fn(usize) -> apache_avro::types::Value,
    format_schema: &str,
    format: impl Fn(usize) -> apache_avro::types::Value,
    n: usize,
) -> Vec<u8> {
    use apache_avro::types::Value as V;
    let schema =
        apache_avro::Schema::parse_str(&bare_manifest_schema(partition_schema, format_schema))
            .unwrap();
    let mut w = apache_avro::Writer::new(&schema, Vec::new());
    let table_schema = r#"{"type":"struct","schema-id":0,"fields":[
 {"id":1,"name":"a","required":false,"type":"int"},
 {"id":2,"name":"b","required":false,"type":"int"}]}"#;
    let spec = r#"[{"name":"a","transform":"identity","source-id":1,"field-id":1000},
 {"name":"b","transform":"identity","source-id":2,"field-id":1001}]"#;
    w.add_user_metadata("schema".into(), table_schema).unwrap();
    w.add_user_metadata("partition-spec".into(), spec).unwrap();
    w.add_user_metadata("format-version".into(), "2").unwrap();
    w.add_user_metadata("content".into(), "data").unwrap();
    for i in 0..n {
        let file = V::Record(vec![
            ("file_path".into(), V::String(format!("f{i}.parquet"))),
            ("file_format".into(), format(i)),
            ("partition".into(), partition(i)),
            ("record_count".into(), V::Long(1)),
            ("file_size_in_bytes".into(), V::Long(10)),
        ]);
        w.append(V::Record(vec![
            ("status".into(), V::Int(1)),
            ("data_file".into(), file),
        ]))
        .unwrap();
    }
    w.into_inner().unwrap()
}

/// The reused slot keeps no partition value of an earlier entry (nor one a callback left
/// in it): not when the tuple of the next entry is null, nor for a spec field that the
/// file's partition record lacks.
#[test]
fn visiting_resets_partition_values_that_an_entry_does_not_write() {
    use apache_avro::types::Value as V;
    let visit_all = |bytes: &[u8]| {
        let mut got = Vec::new();
        visit_manifest(
            ManifestSource::Bytes(bytes),
            &ReadManifestOptions::default().projection(&ManifestProjection::all()),
            |e| {
                got.push(e.data_file.partition.clone());
                // a careless caller writes into the tuple
                for v in e.data_file.partition.iter_mut() {
                    *v = Some(Literal::Int(-7));
                }
                Ok(())
            },
        )
        .unwrap();
        got
    };
    // a partition record that may be null, in a union
    let nullable = r#"["null",{"type":"record","name":"r102","fields":[
 {"name":"a","type":["null","int"],"field-id":1000},
 {"name":"b","type":["null","int"],"field-id":1001}]}]"#;
    let bytes = bare_manifest(
        nullable,
        |i| match i {
            1 => V::Union(0, Box::new(V::Null)),
            _ => V::Union(
                1,
                Box::new(V::Record(vec![
                    ("a".into(), V::Union(1, Box::new(V::Int(i as i32)))),
                    ("b".into(), V::Union(0, Box::new(V::Null))),
                ])),
            ),
        },
        3,
    );
    let int = |v: i32| Some(Literal::Int(v));
    assert_eq!(
        visit_all(&bytes),
        vec![vec![int(0), None], vec![None, None], vec![int(2), None]]
    );
    // a partition record without the spec's field `b`
    let without_b = r#"{"type":"record","name":"r102","fields":[
 {"name":"a","type":["null","int"],"field-id":1000}]}"#;
    let bytes = bare_manifest(
        without_b,
        |i| V::Record(vec![("a".into(), V::Union(1, Box::new(V::Int(i as i32))))]),
        2,
    );
    assert_eq!(
        visit_all(&bytes),
        vec![vec![int(0), None], vec![int(1), None]]
    );
}

/// `file_format` as writers spell it, as Avro string or bytes: the upper-case names
/// without a UTF-8 check, any other case through the same parse; bytes that are not UTF-8
/// are an error naming the field.
#[test]
fn file_formats_of_every_spelling_and_invalid_utf8() {
    use apache_avro::types::Value as V;
    let record = r#"{"type":"record","name":"r102","fields":[]}"#;
    let names = ["PARQUET", "avro", "ORC", "Parquet", "puffin"];
    let read = |bytes: &[u8]| -> Result<Vec<FileFormat>> {
        let mut got = Vec::new();
        visit_manifest(
            ManifestSource::Bytes(bytes),
            &ReadManifestOptions::default().projection(&ManifestProjection::minimal()),
            |e| {
                got.push(e.data_file.file_format.clone());
                Ok(())
            },
        )?;
        let m = read_manifest(
            ManifestSource::Bytes(bytes),
            &ReadManifestOptions::default(),
        )?;
        let all: Vec<FileFormat> = m
            .entries
            .iter()
            .map(|e| e.data_file.file_format.clone())
            .collect();
        assert_eq!(got, all);
        Ok(got)
    };
    use FileFormat::*;
    let want = vec![Parquet, Avro, Orc, Parquet, Puffin];
    for (schema, value) in [
        (
            r#""string""#,
            &(|i: usize| V::String(names[i].into())) as &dyn Fn(usize) -> V,
        ),
        (r#""bytes""#, &|i: usize| {
            V::Bytes(names[i].as_bytes().to_vec())
        }),
        (r#"["null","string"]"#, &|i: usize| {
            V::Union(1, Box::new(V::String(names[i].into())))
        }),
    ] {
        let bytes = bare_manifest_with(record, |_| V::Record(vec![]), schema, value, names.len());
        assert_eq!(read(&bytes).unwrap(), want, "{schema}");
    }
    let bytes = bare_manifest_with(
        record,
        |_| V::Record(vec![]),
        r#""bytes""#,
        |i| {
            V::Bytes(if i == 1 {
                vec![b'P', 0xff]
            } else {
                b"PARQUET".to_vec()
            })
        },
        2,
    );
    let err = read(&bytes).unwrap_err().to_string();
    assert!(
        err.contains("file_format") && err.contains("UTF-8"),
        "{err}"
    );
}

/// Reads `bytes` with `options` through the fast path and without it, every entry decoded
/// into the one reused slot, and checks that the two agree: the same entries, or the same
/// error. Gives the entries and how many of them the fast path decoded.
fn fast_and_plan_agree(
    bytes: &[u8],
    options: &ManifestProjection,
) -> Result<(Vec<ManifestEntry>, usize)> {
    let visit = |use_fast: bool| {
        let mut got = Vec::new();
        let r = reader::visit_entries(bytes, options, None, use_fast, |e| {
            got.push(e.clone());
            Ok(())
        });
        r.map(|(_, fast)| (got, fast))
    };
    let (with_fast, plan_only) = (visit(true), visit(false));
    match (&with_fast, &plan_only) {
        // Debug form: NaN partition values compare equal
        (Ok((a, _)), Ok((b, _))) => assert_eq!(format!("{a:?}"), format!("{b:?}"), "{options:?}"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{options:?}"),
        (a, b) => panic!("fast path {a:?}, plan alone {b:?} ({options:?})"),
    }
    assert_eq!(plan_only.map(|(_, fast)| fast).unwrap_or(0), 0);
    with_fast
}

fn all_options() -> [ManifestProjection; 5] {
    [
        ManifestProjection::all(),
        ManifestProjection::minimal(),
        ManifestProjection::scan(vec![1]),
        ManifestProjection::scan(vec![1, 11]),
        ManifestProjection {
            bounds_for: Some(vec![11]),
            counts_for: vec![2],
            ..ManifestProjection::minimal()
        },
    ]
}

/// The fast path decodes the entries of the usual shapes, values of every length included
/// (Java's random snapshot ids take 9 or 10 bytes), into the reused slot.
#[test]
fn fast_path_decodes_values_of_every_length() {
    let p = |id, name: &str, t| NestedField::optional(id, name, Type::Primitive(t));
    let schema = Schema::new(
        0,
        vec![p(1, "ts", P::Timestamptz), p(11, "s", P::String)],
        vec![],
    )
    .unwrap();
    let spec = PartitionSpec::new(
        0,
        vec![PartitionField::new(1, 1000, "ts_day", Transform::Day)],
    );
    for format_version in 1..=3 {
        for codec in [Codec::Null, Codec::Deflate] {
            let mut w = ManifestWriter::new(
                format_version,
                ManifestContent::Data,
                &schema,
                &spec,
                7_283_401_928_117_604_331,
                codec,
            )
            .unwrap();
            let mut written = Vec::new();
            for k in 0..8i64 {
                let mut df = full_file(DataContentType::Data, k, format_version);
                df.partition = vec![(k != 5).then_some(Literal::Int(19_000 + k as i32))];
                match k {
                    1 => df.file_size_in_bytes = i64::MAX,
                    3 => df.column_sizes = Some(vec![(1, i64::MIN), (11, 5)]),
                    4 => df.lower_bounds = Some(vec![(1, vec![7; 200])]),
                    6 => df.split_offsets = Some(vec![4, 1 << 62]),
                    7 => df.record_count = -(1 << 40),
                    _ => {}
                }
                written.push(df.clone());
                w.add(df).unwrap();
            }
            let bytes = w.finish_to_bytes("x").unwrap().0;
            for options in all_options() {
                let (got, fast) = fast_and_plan_agree(&bytes, &options).unwrap();
                let ctx = format!("v{format_version} {codec:?} {options:?}");
                assert_eq!(fast, written.len(), "{ctx}");
                for (e, df) in got.iter().zip(&written) {
                    assert_eq!(e.snapshot_id, Some(7_283_401_928_117_604_331), "{ctx}");
                    assert_eq!(e.data_file.file_path, df.file_path, "{ctx}");
                    assert_eq!(e.data_file.partition, df.partition, "{ctx}");
                    assert_eq!(
                        e.data_file.file_size_in_bytes, df.file_size_in_bytes,
                        "{ctx}"
                    );
                    assert_eq!(e.data_file.record_count, df.record_count, "{ctx}");
                    if options.stats {
                        assert_eq!(e.data_file.column_sizes, df.column_sizes, "{ctx}");
                        assert_eq!(e.data_file.lower_bounds, df.lower_bounds, "{ctx}");
                    }
                    if options.stats || options.split_offsets {
                        assert_eq!(e.data_file.split_offsets, df.split_offsets, "{ctx}");
                    }
                }
            }
        }
    }
}

/// An entry the fast path gives up on without an error (arrays in blocks of a negative
/// count, followed by their byte size: valid Avro that Iceberg writers do not write) is
/// decoded by the plan, in the same reused slot, between entries that the fast path
/// decodes.
#[test]
fn fast_path_gives_up_on_blocks_with_byte_sizes_and_the_plan_decodes_them() {
    use avro::{put_bytes, put_int, put_long, ContainerWriter};
    let schema = r#"{"type":"record","name":"manifest_entry","fields":[
 {"name":"status","type":"int","field-id":0},
 {"name":"data_file","field-id":2,"type":{"type":"record","name":"r2","fields":[
  {"name":"file_path","type":"string","field-id":100},
  {"name":"file_format","type":"string","field-id":101},
  {"name":"partition","field-id":102,"type":{"type":"record","name":"r102","fields":[]}},
  {"name":"record_count","type":"long","field-id":103},
  {"name":"file_size_in_bytes","type":"long","field-id":104},
  {"name":"column_sizes","field-id":108,"type":["null",{"type":"array","items":{
   "type":"record","name":"k117_v118","fields":[{"name":"key","type":"int","field-id":117},
   {"name":"value","type":"long","field-id":118}]}}]},
  {"name":"lower_bounds","field-id":125,"type":["null",{"type":"array","items":{
   "type":"record","name":"k126_v127","fields":[{"name":"key","type":"int","field-id":126},
   {"name":"value","type":"bytes","field-id":127}]}}]},
  {"name":"split_offsets","field-id":132,"type":["null",{"type":"array","items":"long"}]}
 ]}}]}"#;
    let metadata = unpartitioned_v2_metadata();
    // an array block: its count, negated with the byte size after it when `sized`
    let block = |out: &mut Vec<u8>, n: i64, items: &[u8], sized: bool| {
        if sized {
            put_long(out, -n);
            put_long(out, items.len() as i64);
        } else {
            put_long(out, n);
        }
        out.extend_from_slice(items);
    };
    for codec in [Codec::Null, Codec::Deflate] {
        let mut w = ContainerWriter::new(schema, &metadata, codec);
        for k in 0..5i64 {
            let sized = k == 2 || k == 3;
            let b = &mut w.block;
            put_int(b, 1);
            put_bytes(b, format!("f{k}.parquet").as_bytes());
            put_bytes(b, b"PARQUET");
            put_long(b, 10 + k);
            put_long(b, 1000 + k);
            let mut items = Vec::new();
            put_int(&mut items, 1);
            put_long(&mut items, 300 + k);
            put_long(b, 1); // column_sizes: the array branch
            block(b, 1, &items, sized && k == 2);
            put_long(b, 0);
            let mut items = Vec::new();
            put_int(&mut items, 1);
            put_bytes(&mut items, &[k as u8; 3]);
            put_long(b, 1);
            block(b, 1, &items, sized);
            put_long(b, 0);
            let mut items = Vec::new();
            put_long(&mut items, 4);
            put_long(&mut items, 4096 * k);
            put_long(b, 1);
            block(b, 2, &items, sized);
            put_long(b, 0);
            w.end_object().unwrap();
        }
        let bytes = w.finish().unwrap();
        for options in all_options() {
            let ctx = format!("{codec:?} {options:?}");
            let (got, fast) = fast_and_plan_agree(&bytes, &options).unwrap();
            assert_eq!(fast, 3, "entries 2 and 3 by the plan: {ctx}");
            for (k, e) in got.iter().enumerate() {
                let k = k as i64;
                assert_eq!(e.data_file.file_path, format!("f{k}.parquet"), "{ctx}");
                assert_eq!(e.data_file.record_count, 10 + k, "{ctx}");
                assert_eq!(e.data_file.file_size_in_bytes, 1000 + k, "{ctx}");
                // bounds of other columns only: an empty list; none wanted: null
                let want_bounds = match &options.bounds_for {
                    Some(ids) if ids.is_empty() => None,
                    Some(ids) if !ids.contains(&1) => Some(vec![]),
                    _ => Some(vec![(1, vec![k as u8; 3])]),
                };
                assert_eq!(e.data_file.lower_bounds, want_bounds, "{ctx}");
                let want_sizes = options.stats.then(|| vec![(1, 300 + k)]);
                assert_eq!(e.data_file.column_sizes, want_sizes, "{ctx}");
                let want_offsets =
                    (options.stats || options.split_offsets).then(|| vec![4, 4096 * k]);
                assert_eq!(e.data_file.split_offsets, want_offsets, "{ctx}");
            }
        }
    }
}

/// Where the plan fails, the fast path gives up and the error is the plan's: a partition
/// value out of its type's range, a union branch that does not exist, a status or content
/// that is not known.
#[test]
fn fast_path_leaves_every_error_to_the_plan() {
    use apache_avro::types::Value as V;
    let long_partition = r#"{"type":"record","name":"r102","fields":[
 {"name":"a","type":["null","long"],"field-id":1000},
 {"name":"b","type":["null","long"],"field-id":1001}]}"#;
    let tuple = |a: i64| {
        V::Record(vec![
            ("a".into(), V::Union(1, Box::new(V::Long(a)))),
            ("b".into(), V::Union(0, Box::new(V::Null))),
        ])
    };
    // a and b are int columns: a long partition value must fit in an int
    let ok = bare_manifest(long_partition, |i| tuple(i as i64), 3);
    let (got, fast) = fast_and_plan_agree(&ok, &ManifestProjection::all()).unwrap();
    assert_eq!(fast, 3);
    assert_eq!(
        got[2].data_file.partition,
        vec![Some(Literal::Int(2)), None]
    );
    let bad = bare_manifest(
        long_partition,
        |i| tuple(if i == 1 { 1 << 40 } else { 0 }),
        3,
    );
    let err = fast_and_plan_agree(&bad, &ManifestProjection::all()).unwrap_err();
    assert!(err.to_string().contains("out of int range"), "{err}");
    assert!(err.to_string().contains("entries[1]"), "{err}");

    // the bytes of an entry changed in place: status 1 -> 7, then the partition's union
    // branch 1 -> 5 (both are one-byte varints, 2 -> 14 and 2 -> 10)
    let i = find_entry_start(&ok, 1);
    let mut bad_status = ok.clone();
    bad_status[i] = 14;
    let err = fast_and_plan_agree(&bad_status, &ManifestProjection::all()).unwrap_err();
    assert!(err.to_string().contains("unknown status 7"), "{err}");
    let mut bad_branch = ok.clone();
    let j = i + 1 + 1 + "f1.parquet".len() + 1 + "PARQUET".len();
    assert_eq!(bad_branch[j], 2, "the union branch of partition field a");
    bad_branch[j] = 10;
    let err = fast_and_plan_agree(&bad_branch, &ManifestProjection::all()).unwrap_err();
    assert!(err.to_string().contains("union branch 5"), "{err}");
}

/// Where entry `n` of the bare manifest (status 1, then the path `f{n}.parquet`) starts.
fn find_entry_start(bytes: &[u8], n: usize) -> usize {
    let path = format!("f{n}.parquet");
    let mut needle = vec![2u8, (path.len() * 2) as u8];
    needle.extend_from_slice(path.as_bytes());
    bytes
        .windows(needle.len())
        .position(|w| w == needle)
        .unwrap()
}

/// The key-value metadata of a v2 data manifest of a table with one int column `a`,
/// unpartitioned, for containers written by hand.
fn unpartitioned_v2_metadata() -> [(&'static str, String); 4] {
    let table_schema = r#"{"type":"struct","schema-id":0,"fields":[
 {"id":1,"name":"a","required":false,"type":"int"}]}"#;
    [
        ("schema", table_schema.to_string()),
        ("partition-spec", "[]".to_string()),
        ("format-version", "2".to_string()),
        ("content", "data".to_string()),
    ]
}

/// Files whose fields are not laid out as the spec lists them (another order, a field
/// this reader does not know, a union with null second) have no fast path: the plan
/// decodes every entry, with the same values as in the usual layout.
#[test]
fn files_of_an_unusual_layout_are_decoded_by_the_plan() {
    use avro::{put_bytes, put_int, put_long, ContainerWriter};
    let field = |name: &str, id: i32, ty: &str| {
        format!(r#"{{"name":"{name}","type":{ty},"field-id":{id}}}"#)
    };
    let count = field("record_count", 103, r#""long""#);
    let size = field("file_size_in_bytes", 104, r#""long""#);
    let key_null_first = field("key_metadata", 131, r#"["null","bytes"]"#);
    let key_null_second = field("key_metadata", 131, r#"["bytes","null"]"#);
    let unknown = field("x_writer_note", 9000, r#""int""#);
    /// The fields after the partition, the union branch of a present key_metadata, an
    /// unknown int between the count and the size, the size first, and whether the fast
    /// path decodes the file.
    struct Layout<'a> {
        fields: Vec<&'a String>,
        key_branch: i64,
        with_unknown: bool,
        size_first: bool,
        usual: bool,
    }
    let layout = |fields, key_branch, with_unknown, size_first, usual| Layout {
        fields,
        key_branch,
        with_unknown,
        size_first,
        usual,
    };
    let layouts = [
        layout(vec![&count, &size, &key_null_first], 1, false, false, true),
        layout(vec![&size, &count, &key_null_first], 1, false, true, false),
        layout(
            vec![&count, &unknown, &size, &key_null_first],
            1,
            true,
            false,
            false,
        ),
        layout(
            vec![&count, &size, &key_null_second],
            0,
            false,
            false,
            false,
        ),
    ];
    let metadata = unpartitioned_v2_metadata();
    for Layout {
        fields,
        key_branch,
        with_unknown,
        size_first,
        usual,
    } in layouts
    {
        let schema = format!(
            r#"{{"type":"record","name":"manifest_entry","fields":[
 {{"name":"status","type":"int","field-id":0}},
 {{"name":"data_file","field-id":2,"type":{{"type":"record","name":"r2","fields":[
  {{"name":"file_path","type":"string","field-id":100}},
  {{"name":"file_format","type":"string","field-id":101}},
  {{"name":"partition","field-id":102,"type":{{"type":"record","name":"r102","fields":[]}}}},
  {}]}}}}]}}"#,
            fields
                .iter()
                .map(|f| f.as_str())
                .collect::<Vec<_>>()
                .join(","),
        );
        let mut w = ContainerWriter::new(&schema, &metadata, Codec::Null);
        for k in 0..3i64 {
            let b = &mut w.block;
            put_int(b, 1);
            put_bytes(b, format!("f{k}.parquet").as_bytes());
            put_bytes(b, b"PARQUET");
            let (first, second) = if size_first {
                (1000 + k, 10 + k)
            } else {
                (10 + k, 1000 + k)
            };
            put_long(b, first);
            if with_unknown {
                put_int(b, 77);
            }
            put_long(b, second);
            put_long(b, key_branch);
            put_bytes(b, &[k as u8; 2]);
            w.end_object().unwrap();
        }
        let bytes = w.finish().unwrap();
        for options in all_options() {
            let ctx = format!("{fields:?} {options:?}");
            let (got, fast) = fast_and_plan_agree(&bytes, &options).unwrap();
            assert_eq!(fast, if usual { 3 } else { 0 }, "{ctx}");
            for (k, e) in got.iter().enumerate() {
                let k = k as i64;
                assert_eq!(e.data_file.file_path, format!("f{k}.parquet"), "{ctx}");
                assert_eq!(e.data_file.record_count, 10 + k, "{ctx}");
                assert_eq!(e.data_file.file_size_in_bytes, 1000 + k, "{ctx}");
                assert_eq!(e.data_file.key_metadata, Some(vec![k as u8; 2]), "{ctx}");
            }
        }
    }
}
