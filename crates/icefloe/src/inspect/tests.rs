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
