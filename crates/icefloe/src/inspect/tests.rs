//! Tests of the metadata tables that need no Java: the row-to-Arrow conversion and the
//! tables of a table without snapshots (the Java comparison is tests/test_inspect_oracle.py).
#![allow(clippy::unwrap_used, clippy::panic)]

use super::*;

#[test]
fn names_parse_case_insensitively() {
    for t in MetadataTableType::ALL {
        assert_eq!(MetadataTableType::parse(t.name()), Some(t));
        assert_eq!(MetadataTableType::parse(&t.name().to_uppercase()), Some(t));
    }
    assert_eq!(MetadataTableType::parse("nope"), None);
}

use arrow_array::cast::AsArray;
use arrow_array::Array;

use crate::spec::types::{ListType, MapType, NestedField, PrimitiveType as P, StructType};

#[test]
fn rows_become_nested_arrow_columns_with_nulls() {
    let schema = Schema::new(
        0,
        vec![
            NestedField::required(1, "id", P::Long.into()),
            NestedField::optional(
                2,
                "m",
                MapType::new(3, P::Int.into(), 4, true, P::Long.into()).into(),
            ),
            NestedField::optional(5, "l", ListType::new(6, true, P::Int.into()).into()),
            NestedField::optional(
                7,
                "s",
                StructType::new(vec![NestedField::optional(8, "x", P::String.into())]).into(),
            ),
        ],
        Vec::new(),
    )
    .unwrap();
    let arrow = Arc::new(schema_to_arrow(&schema).unwrap());
    let rows = vec![
        vec![
            Value::long(1),
            Value::Map(vec![(Value::int(1), Value::long(10))]),
            Value::List(vec![Value::int(7), Value::int(8)]),
            Value::Struct(vec![Value::string("a")]),
        ],
        vec![Value::long(2), Value::Null, Value::Null, Value::Null],
    ];
    let batch = value::rows_to_batch(&rows, &schema, &arrow).unwrap();
    assert_eq!(batch.num_rows(), 2);
    let m = batch.column(1).as_map();
    assert!(m.is_valid(0) && m.is_null(1));
    assert_eq!(m.value_length(0), 1);
    let l = batch.column(2).as_list::<i32>();
    assert_eq!(l.value_length(0), 2);
    assert!(l.is_null(1));
    let s = batch.column(3).as_struct();
    assert!(s.is_null(1));
    assert_eq!(s.column(0).as_string::<i32>().value(0), "a");
}

#[test]
fn an_empty_table_has_every_table_with_no_rows() {
    let md = TableMetadata::from_json_str(
        r#"{"format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
        "location": "/t", "last-sequence-number": 0, "last-updated-ms": 1,
        "last-column-id": 2, "current-schema-id": 0,
        "schemas": [{"type": "struct", "schema-id": 0, "fields": [
            {"id": 1, "name": "id", "required": true, "type": "long"},
            {"id": 2, "name": "ts", "required": false, "type": "timestamptz"}]}],
        "default-spec-id": 0,
        "partition-specs": [{"spec-id": 0, "fields": [
            {"source-id": 2, "field-id": 1000, "name": "ts_day", "transform": "day"}]}],
        "last-partition-id": 1000, "default-sort-order-id": 0,
        "sort-orders": [{"order-id": 0, "fields": []}]}"#,
    )
    .unwrap();
    let io: Arc<dyn FileIO> = Arc::new(crate::io::MemoryFileIO::default());
    let inspect = Inspect::new(Arc::new(md), io).metadata_location("/t/metadata/v1.metadata.json");
    for t in MetadataTableType::ALL {
        let batch = inspect.table(t).unwrap();
        let expected = usize::from(t == MetadataTableType::MetadataLogEntries);
        assert_eq!(batch.num_rows(), expected, "{}", t.name());
    }
    // Java types a day partition as a date
    let files = inspect.schema(MetadataTableType::Files).unwrap();
    let partition = files.field_with_name("partition").unwrap();
    let arrow_schema::DataType::Struct(fields) = partition.data_type() else {
        panic!("partition is a struct")
    };
    assert_eq!(fields[0].name(), "ts_day");
    assert_eq!(fields[0].data_type(), &arrow_schema::DataType::Date32);
    assert!(files.field_with_name("readable_metrics").is_ok());
}

fn two_column_metadata() -> TableMetadata {
    TableMetadata::from_json_str(
        r#"{"format-version": 3, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
        "location": "/t", "last-sequence-number": 0, "last-updated-ms": 1,
        "last-column-id": 3, "current-schema-id": 0, "next-row-id": 0,
        "schemas": [{"type": "struct", "schema-id": 0, "fields": [
            {"id": 1, "name": "id", "required": true, "type": "long"},
            {"id": 2, "name": "ts", "required": false, "type": "timestamptz"},
            {"id": 3, "name": "cat", "required": false, "type": "string"}]}],
        "default-spec-id": 0,
        "partition-specs": [{"spec-id": 0, "fields": [
            {"source-id": 2, "field-id": 1000, "name": "ts_day", "transform": "day"},
            {"source-id": 3, "field-id": 1001, "name": "cat", "transform": "identity"}]}],
        "last-partition-id": 1001, "default-sort-order-id": 0,
        "sort-orders": [{"order-id": 0, "fields": []}]}"#,
    )
    .unwrap()
}

fn sample_entries() -> Vec<crate::manifest::ManifestEntry> {
    use crate::manifest::{DataContentType, DataFile, FileFormat, ManifestEntry};
    use crate::spec::Literal;
    let mut full = DataFile::new(
        DataContentType::PositionDeletes,
        "/t/data/x.puffin",
        FileFormat::Puffin,
        vec![
            Some(Literal::Int(19_000)),
            Some(Literal::String("冰".into())),
        ],
        12,
        3456,
    );
    full.column_sizes = Some(vec![(1, 10), (3, 20)]);
    full.value_counts = Some(vec![(1, 12)]);
    full.null_value_counts = Some(vec![]);
    full.lower_bounds = Some(vec![(1, 5i64.to_le_bytes().to_vec()), (3, b"a".to_vec())]);
    full.upper_bounds = Some(vec![(2, 7i64.to_le_bytes().to_vec())]);
    full.key_metadata = Some(vec![0xde, 0xad]);
    full.split_offsets = Some(vec![4, 1000]);
    full.equality_ids = Some(vec![1, 2]);
    full.sort_order_id = Some(3);
    full.first_row_id = Some(100);
    full.referenced_data_file = Some("/t/data/a.parquet".into());
    full.content_offset = Some(4);
    full.content_size_in_bytes = Some(40);
    let sparse = DataFile::new(
        DataContentType::Data,
        "/t/data/a.parquet",
        FileFormat::Parquet,
        vec![None, None],
        1,
        2,
    );
    vec![
        ManifestEntry {
            status: ManifestStatus::Existing,
            snapshot_id: Some(7),
            sequence_number: Some(2),
            file_sequence_number: Some(3),
            data_file: full,
        },
        ManifestEntry::added(sparse),
    ]
}

/// The columnar builder gives the batch the value-tree rows give (the rows mirror Java's
/// `StaticDataTask` rows field by field, and the Java comparison covers them).
#[test]
fn columnar_files_and_entries_equal_the_value_rows() {
    let md = Arc::new(two_column_metadata());
    let io: Arc<dyn FileIO> = Arc::new(crate::io::MemoryFileIO::default());
    let inspect = Inspect::new(md.clone(), io);
    let entries = sample_entries();
    for (table, as_entries) in [
        (MetadataTableType::Files, false),
        (MetadataTableType::Entries, true),
    ] {
        let layout = inspect.layout(table).unwrap();
        let projection = PartitionProjection::new(&layout.partition, md.partition_specs.first());
        let ctx = || RowContext {
            spec_id: 0,
            partition: &projection,
            partitioned: true,
            metrics: &layout.metrics,
        };
        let rows: Vec<Vec<Value>> = entries
            .iter()
            .map(|e| {
                if as_entries {
                    files::entry_row(e, &ctx()).unwrap()
                } else {
                    files::file_row(&e.data_file, &ctx()).unwrap()
                }
            })
            .collect();
        let expected = rows_to_batch(&rows, &layout.schema, &layout.arrow).unwrap();
        let mut builder = FilesBuilder::new(ctx(), &layout.partition, as_entries);
        for e in &entries {
            if as_entries {
                builder.append_entry(e).unwrap();
            } else {
                builder.append_file(&e.data_file).unwrap();
            }
        }
        let got = builder.finish(&layout.arrow).unwrap();
        assert_eq!(got, expected, "{}", table.name());
    }
}

#[test]
fn position_deletes_schema_is_javas() {
    let md = Arc::new(two_column_metadata());
    let io: Arc<dyn FileIO> = Arc::new(crate::io::MemoryFileIO::default());
    let schema = Inspect::new(md, io)
        .iceberg_schema(MetadataTableType::PositionDeletes)
        .unwrap();
    let names: Vec<(i32, &str, bool)> = schema
        .fields()
        .iter()
        .map(|f| (f.id, f.name.as_str(), f.required))
        .collect();
    assert_eq!(
        names,
        vec![
            (2147483546, "file_path", true),
            (2147483545, "pos", true),
            (2147483544, "row", false),
            (2147483642, "partition", true),
            (2147483643, "spec_id", true),
            (2147483646, "delete_file_path", true),
            (2147483641, "content_offset", false),
            (2147483640, "content_size_in_bytes", false),
        ]
    );
    // the partition fields take the lowest ids no column of any schema uses (1-3 are the
    // table's columns, which `row` holds)
    let crate::spec::Type::Struct(p) = &schema.fields()[3].field_type else {
        panic!("partition is a struct")
    };
    let ids: Vec<i32> = p.fields.iter().map(|f| f.id).collect();
    assert_eq!(ids, vec![4, 5]);
}

fn every_bound_type_metadata() -> TableMetadata {
    TableMetadata::from_json_str(
        r#"{"format-version": 3, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
        "location": "/t", "last-sequence-number": 0, "last-updated-ms": 1,
        "last-column-id": 15, "current-schema-id": 0, "next-row-id": 0,
        "schemas": [{"type": "struct", "schema-id": 0, "fields": [
            {"id": 1, "name": "b", "required": false, "type": "boolean"},
            {"id": 2, "name": "i", "required": false, "type": "int"},
            {"id": 3, "name": "l", "required": false, "type": "long"},
            {"id": 4, "name": "f", "required": false, "type": "float"},
            {"id": 5, "name": "d", "required": false, "type": "double"},
            {"id": 6, "name": "dt", "required": false, "type": "date"},
            {"id": 7, "name": "t", "required": false, "type": "time"},
            {"id": 8, "name": "ts", "required": false, "type": "timestamp"},
            {"id": 9, "name": "tstz", "required": false, "type": "timestamptz"},
            {"id": 10, "name": "tsns", "required": false, "type": "timestamp_ns"},
            {"id": 11, "name": "s", "required": false, "type": "string"},
            {"id": 12, "name": "bin", "required": false, "type": "binary"},
            {"id": 13, "name": "dec", "required": false, "type": "decimal(9, 2)"},
            {"id": 14, "name": "u", "required": false, "type": "uuid"},
            {"id": 15, "name": "fx", "required": false, "type": "fixed[3]"}]}],
        "default-spec-id": 0,
        "partition-specs": [{"spec-id": 0, "fields": []}],
        "last-partition-id": 999, "default-sort-order-id": 0,
        "sort-orders": [{"order-id": 0, "fields": []}]}"#,
    )
    .unwrap()
}

/// The typed bounds of `readable_metrics` (decoded straight into typed columns, strings
/// into the string buffer) equal the value-tree rows' `Literal::from_bytes` for every
/// primitive type, with its promotions (a 4-byte long or double bound, a date bound of a
/// timestamp), the first of two pairs of one id, ids of no column, and files without
/// bounds or counts.
#[test]
fn columnar_typed_bounds_equal_the_value_rows() {
    use crate::manifest::{DataContentType, DataFile, FileFormat};
    let md = Arc::new(every_bound_type_metadata());
    let io: Arc<dyn FileIO> = Arc::new(crate::io::MemoryFileIO::default());
    let inspect = Inspect::new(md.clone(), io);
    let layout = inspect.layout(MetadataTableType::Files).unwrap();
    let le = |v: i64| v.to_le_bytes().to_vec();
    let lower: Vec<(i32, Vec<u8>)> = vec![
        (1, vec![1]),
        (2, 7i32.to_le_bytes().to_vec()),
        (3, (-5i32).to_le_bytes().to_vec()), // a long bound written as an int
        (4, 1.5f32.to_le_bytes().to_vec()),
        (5, 2.5f32.to_le_bytes().to_vec()), // a double bound written as a float
        (6, 19_000i32.to_le_bytes().to_vec()),
        (7, le(3_600_000_000)),
        (8, 19_000i32.to_le_bytes().to_vec()), // a timestamp bound written as a date
        (9, le(1_700_000_000_000_000)),
        (10, le(1_700_000_000_000_000_123)),
        (11, "冰a".as_bytes().to_vec()),
        (12, vec![0, 255]),
        (13, vec![0x30, 0x39]),
        (14, (1u128 << 100).to_be_bytes().to_vec()),
        (15, vec![1, 2, 3]),
        (11, b"second".to_vec()), // the first pair of an id wins
        (99, vec![9]),            // no column of the table
    ];
    let mut full = DataFile::new(
        DataContentType::Data,
        "/t/data/a.parquet",
        FileFormat::Parquet,
        vec![],
        10,
        100,
    );
    full.column_sizes = Some(vec![(3, 30), (11, 110), (99, 1), (3, 31)]);
    full.value_counts = Some((1..=15).map(|id| (id, i64::from(id) * 10)).collect());
    full.null_value_counts = Some(vec![(5, 0)]);
    full.nan_value_counts = Some(vec![(4, 1), (5, 2)]);
    full.upper_bounds = Some(lower.iter().rev().cloned().collect());
    full.lower_bounds = Some(lower);
    let mut some = full.clone();
    some.file_path = "/t/data/b.parquet".into();
    some.lower_bounds = Some(vec![(11, b"x".to_vec()), (3, le(-1))]);
    some.upper_bounds = Some(vec![]);
    let none = DataFile::new(
        DataContentType::Data,
        "/t/data/c.parquet",
        FileFormat::Parquet,
        vec![],
        1,
        2,
    );
    let files = [full, none, some];
    let projection = PartitionProjection::new(&layout.partition, md.partition_specs.first());
    let ctx = || RowContext {
        spec_id: 0,
        partition: &projection,
        partitioned: false,
        metrics: &layout.metrics,
    };
    let rows: Vec<Vec<Value>> = files
        .iter()
        .map(|f| files::file_row(f, &ctx()).unwrap())
        .collect();
    let expected = rows_to_batch(&rows, &layout.schema, &layout.arrow).unwrap();
    let mut builder = FilesBuilder::new(ctx(), &layout.partition, false);
    builder.reserve(2);
    for f in &files {
        builder.append_file(f).unwrap();
    }
    let got = builder.finish(&layout.arrow).unwrap();
    assert_eq!(got, expected);

    // a bound that is not of its column's type names the column
    let mut bad = files[1].clone();
    bad.lower_bounds = Some(vec![(11, vec![0xff, 0xfe])]);
    let mut builder = FilesBuilder::new(ctx(), &layout.partition, false);
    let err = builder.append_file(&bad).unwrap_err().to_string();
    assert!(
        err.contains("bound of column 11") && err.contains("UTF-8"),
        "{err}"
    );
    bad.lower_bounds = Some(vec![(3, vec![1, 2, 3])]);
    let err = builder.append_file(&bad).unwrap_err().to_string();
    assert!(err.contains("bound of column 3"), "{err}");
}
