//! Tests of partitioning and metrics on hand-built batches; expected values are worked out
//! from the rules (and the Java oracle in tests/test_writer_oracle.py checks them against
//! Java on real files).
#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::Arc;

use ::arrow_schema::{DataType, Field, Fields, Schema as ArrowSchema};
use arrow_array::builder::{Float64Builder, Int32Builder, ListBuilder, MapBuilder, StringBuilder};
use arrow_array::{
    ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, FixedSizeBinaryArray,
    Float32Array, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray, StructArray,
    TimestampMicrosecondArray,
};
use arrow_buffer::NullBuffer;

use super::metrics::{leaves, FileMetrics, MetricsCollector};
use super::metrics_config::MetricsConfig;
use super::partition::partition_batch;
use super::*;
use crate::spec::partition::{PartitionField, PartitionSpec};
use crate::spec::{ListType, MapType, NestedField, PrimitiveType as P, Schema, StructType, Type};

fn batch(columns: Vec<ArrayRef>) -> RecordBatch {
    let fields: Vec<Field> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| Field::new(format!("c{i}"), c.data_type().clone(), true))
        .collect();
    RecordBatch::try_new(Arc::new(ArrowSchema::new(fields)), columns).unwrap()
}

fn config(kv: &[(&str, &str)]) -> MetricsConfig {
    let props: Vec<(String, String)> = kv
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    MetricsConfig::from_properties(&props, None, None)
}

fn metrics(schema: &Schema, b: &RecordBatch, c: &MetricsConfig) -> FileMetrics {
    let mut m = MetricsCollector::new(schema);
    m.update(schema, b).unwrap();
    m.finish(schema, c).unwrap()
}

fn get<T: Clone>(v: &[(i32, T)], id: i32) -> Option<T> {
    v.iter().find(|(k, _)| *k == id).map(|(_, x)| x.clone())
}

fn flat_schema() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::optional(1, "b", P::Boolean.into()),
            NestedField::optional(2, "i", P::Int.into()),
            NestedField::optional(3, "l", P::Long.into()),
            NestedField::optional(4, "f", P::Float.into()),
            NestedField::optional(5, "d", P::Double.into()),
            NestedField::optional(
                6,
                "dec",
                P::Decimal {
                    precision: 9,
                    scale: 2,
                }
                .into(),
            ),
            NestedField::optional(7, "date", P::Date.into()),
            NestedField::optional(8, "ts", P::Timestamp.into()),
            NestedField::optional(9, "s", P::String.into()),
            NestedField::optional(10, "bin", P::Binary.into()),
            NestedField::optional(11, "fx", P::Fixed(2).into()),
        ],
        vec![],
    )
    .unwrap()
}

fn flat_batch() -> RecordBatch {
    batch(vec![
        Arc::new(BooleanArray::from(vec![
            Some(true),
            None,
            Some(true),
            Some(true),
        ])),
        Arc::new(Int32Array::from(vec![Some(3), None, Some(-7), Some(5)])),
        Arc::new(Int64Array::from(vec![
            Some(i64::MAX),
            Some(i64::MIN),
            None,
            Some(0),
        ])),
        Arc::new(Float32Array::from(vec![
            Some(f32::NAN),
            Some(0.0),
            Some(-0.0),
            None,
        ])),
        Arc::new(Float64Array::from(vec![
            Some(f64::NAN),
            None,
            Some(f64::NAN),
            None,
        ])),
        Arc::new(
            Decimal128Array::from(vec![Some(-1065), Some(1420), None, Some(0)])
                .with_precision_and_scale(9, 2)
                .unwrap(),
        ),
        Arc::new(Date32Array::from(vec![Some(-1), Some(17486), None, None])),
        Arc::new(TimestampMicrosecondArray::from(vec![
            None, None, None, None,
        ])),
        Arc::new(StringArray::from(vec![
            Some("iceberg table format"),
            Some("😀😁😂🤣😀😁😂🤣😀😁😂🤣😀😁😂🤣😀"),
            None,
            Some("ice"),
        ])),
        Arc::new(BinaryArray::from(vec![
            Some(&[0xffu8; 20][..]),
            Some(&[0x01, 0xff][..]),
            None,
            Some(&[][..]),
        ])),
        Arc::new(
            FixedSizeBinaryArray::try_from_sparse_iter_with_size(
                vec![Some([1u8, 2]), None, Some([0, 9]), Some([1, 1])].into_iter(),
                2,
            )
            .unwrap(),
        ),
    ])
}

#[test]
fn flat_metrics_default_mode() {
    let s = flat_schema();
    let m = metrics(&s, &flat_batch(), &MetricsConfig::default());
    assert_eq!(m.record_count, 4);
    for id in 1..=11 {
        assert_eq!(get(&m.value_counts, id), Some(4), "{id}");
    }
    let nulls: Vec<i64> = (1..=11)
        .map(|id| get(&m.null_value_counts, id).unwrap())
        .collect();
    assert_eq!(nulls, vec![1, 1, 1, 1, 2, 1, 2, 4, 1, 1, 1]);
    // NaN counts only for float and double
    assert_eq!(m.nan_value_counts, vec![(4, 1), (5, 2)]);
    let lo = |id| get(&m.lower_bounds, id);
    let hi = |id| get(&m.upper_bounds, id);
    assert_eq!((lo(1), hi(1)), (Some(vec![1]), Some(vec![1])));
    assert_eq!(lo(2), Some((-7i32).to_le_bytes().to_vec()));
    assert_eq!(hi(3), Some(i64::MAX.to_le_bytes().to_vec()));
    // -0.0 < 0.0 and NaN left out
    assert_eq!(lo(4), Some((-0.0f32).to_le_bytes().to_vec()));
    assert_eq!(hi(4), Some(0.0f32.to_le_bytes().to_vec()));
    // only NaN and nulls: no bounds
    assert_eq!((lo(5), hi(5)), (None, None));
    assert_eq!(lo(6), Some(vec![0xfb, 0xd7])); // -1065 in minimal two's complement
    assert_eq!(hi(6), Some(vec![0x05, 0x8c])); // 1420
    assert_eq!(lo(7), Some((-1i32).to_le_bytes().to_vec()));
    assert_eq!((lo(8), hi(8)), (None, None));
    // strings: truncated to 16 code points; the max is incremented
    assert_eq!(lo(9), Some(b"ice".to_vec()));
    assert_eq!(
        hi(9),
        Some("😀😁😂🤣😀😁😂🤣😀😁😂🤣😀😁😂🤤".as_bytes().to_vec())
    );
    // binary: max of 20 0xFF bytes cannot be truncated and incremented: no upper bound
    assert_eq!(lo(10), Some(vec![]));
    assert_eq!(hi(10), None);
    assert_eq!((lo(11), hi(11)), (Some(vec![0, 9]), Some(vec![1, 2])));
}

#[test]
fn metric_modes() {
    let s = flat_schema();
    let b = flat_batch();
    let m = metrics(
        &s,
        &b,
        &config(&[
            ("write.metadata.metrics.default", "counts"),
            ("write.metadata.metrics.column.s", "truncate(2)"),
            ("write.metadata.metrics.column.bin", "full"),
            ("write.metadata.metrics.column.i", "none"),
        ]),
    );
    assert_eq!(get(&m.value_counts, 2), None);
    assert_eq!(get(&m.null_value_counts, 2), None);
    assert_eq!(get(&m.value_counts, 3), Some(4));
    assert_eq!(get(&m.lower_bounds, 3), None);
    assert_eq!(get(&m.nan_value_counts, 4), Some(1));
    assert_eq!(get(&m.lower_bounds, 9), Some(b"ic".to_vec()));
    // "😀😁…" truncated to 2 code points, the last incremented
    assert_eq!(get(&m.upper_bounds, 9), Some("😀😂".as_bytes().to_vec()));
    assert_eq!(get(&m.upper_bounds, 10), Some(vec![0xff; 20]));
    let ids: Vec<i32> = m.lower_bounds.iter().map(|(k, _)| *k).collect();
    assert_eq!(ids, vec![9, 10]);

    let full = metrics(
        &s,
        &b,
        &config(&[("write.metadata.metrics.default", "full")]),
    );
    assert_eq!(get(&full.lower_bounds, 9), Some(b"ice".to_vec()));
    assert_eq!(
        get(&full.upper_bounds, 9),
        Some("😀😁😂🤣😀😁😂🤣😀😁😂🤣😀😁😂🤣😀".as_bytes().to_vec())
    );
    let none = metrics(
        &s,
        &b,
        &config(&[("write.metadata.metrics.default", "none")]),
    );
    assert!(none.value_counts.is_empty() && none.lower_bounds.is_empty());
    assert!(none.nan_value_counts.is_empty());
}

#[test]
fn metrics_over_several_batches_merge() {
    let s = flat_schema();
    let b = flat_batch();
    let mut c = MetricsCollector::new(&s);
    c.update(&s, &b.slice(0, 2)).unwrap();
    c.update(&s, &b.slice(2, 2)).unwrap();
    let merged = c.finish(&s, &MetricsConfig::default()).unwrap();
    assert_eq!(merged, metrics(&s, &b, &MetricsConfig::default()));
}

fn nested_schema() -> Schema {
    let point = StructType::new(vec![
        NestedField::optional(3, "x", P::Double.into()),
        NestedField::optional(4, "y", P::Int.into()),
    ]);
    Schema::new(
        0,
        vec![
            NestedField::optional(1, "id", P::Long.into()),
            NestedField::optional(2, "p", Type::Struct(Arc::new(point))),
            NestedField::optional(
                5,
                "tags",
                Type::List(Arc::new(ListType::new(6, false, P::Double.into()))),
            ),
            NestedField::optional(
                7,
                "attrs",
                Type::Map(Arc::new(MapType::new(
                    8,
                    P::String.into(),
                    9,
                    false,
                    P::Int.into(),
                ))),
            ),
        ],
        vec![],
    )
    .unwrap()
}

fn nested_batch() -> RecordBatch {
    let x = Arc::new(Float64Array::from(vec![
        Some(1.5),
        Some(9.0),
        None,
        Some(f64::NAN),
    ]));
    let y = Arc::new(Int32Array::from(vec![Some(1), Some(100), Some(2), None]));
    let point_fields = Fields::from(vec![
        Field::new("x", DataType::Float64, true),
        Field::new("y", DataType::Int32, true),
    ]);
    // row 1's struct is null: its children (9.0, 100) are not values
    let p = StructArray::try_new(
        point_fields,
        vec![x, y],
        Some(NullBuffer::from(vec![true, false, true, true])),
    )
    .unwrap();
    let mut tags = ListBuilder::new(Float64Builder::new());
    tags.append_value([Some(1.0), None, Some(f64::NAN)]);
    tags.append_value([]);
    tags.append_null();
    tags.append_value([Some(2.0)]);
    let mut attrs = MapBuilder::new(None, StringBuilder::new(), Int32Builder::new());
    attrs.keys().append_value("k");
    attrs.values().append_value(1);
    attrs.append(true).unwrap();
    attrs.append(false).unwrap();
    attrs.append(true).unwrap();
    attrs.keys().append_value("x");
    attrs.values().append_null();
    attrs.append(true).unwrap();
    batch(vec![
        Arc::new(Int64Array::from(vec![1, 2, 3, 4])),
        Arc::new(p),
        Arc::new(tags.finish()),
        Arc::new(attrs.finish()),
    ])
}

#[test]
fn nested_metrics_as_java() {
    let s = nested_schema();
    assert_eq!(
        leaves(&s).iter().map(|l| l.field_id).collect::<Vec<_>>(),
        vec![1, 3, 4, 6, 8, 9]
    );
    let m = metrics(&s, &nested_batch(), &MetricsConfig::default());
    // struct children: one slot per row, a null struct makes its children null
    // except for floats and doubles, which Java counts only under present parents
    assert_eq!(get(&m.value_counts, 3), Some(3));
    assert_eq!(get(&m.null_value_counts, 3), Some(1));
    assert_eq!(get(&m.value_counts, 4), Some(4));
    assert_eq!(get(&m.nan_value_counts, 3), Some(1));
    assert_eq!(get(&m.lower_bounds, 3), Some(1.5f64.to_le_bytes().to_vec()));
    assert_eq!(get(&m.upper_bounds, 3), Some(1.5f64.to_le_bytes().to_vec()));
    assert_eq!(get(&m.null_value_counts, 4), Some(2));
    assert_eq!(get(&m.upper_bounds, 4), Some(2i32.to_le_bytes().to_vec()));
    // inside lists and maps Java keeps no counts, NaN counts or bounds (only sizes)
    for id in [6, 8, 9] {
        assert_eq!(get(&m.value_counts, id), None, "{id}");
        assert_eq!(get(&m.null_value_counts, id), None, "{id}");
        assert_eq!(get(&m.nan_value_counts, id), None, "{id}");
        assert_eq!(get(&m.lower_bounds, id), None, "{id}");
        assert_eq!(get(&m.upper_bounds, id), None, "{id}");
    }
    let c = MetricsConfig::default();
    let mut coll = MetricsCollector::new(&s);
    coll.update(&s, &nested_batch()).unwrap();
    assert_eq!(coll.measured_leaves(&s, &c), vec![1, 3, 4, 6, 8, 9]);
}

#[test]
fn nested_types_are_checked_inside_lists_and_maps() {
    let s = nested_schema();
    let b = nested_batch();
    let mut cols = b.columns().to_vec();
    let mut tags = ListBuilder::new(Int32Builder::new());
    for _ in 0..4 {
        tags.append_value([Some(1)]);
    }
    cols[2] = Arc::new(tags.finish());
    let err = MetricsCollector::new(&s)
        .update(&s, &batch(cols))
        .unwrap_err()
        .to_string();
    assert!(err.contains("'tags.element'"), "{err}");
}

#[test]
fn mismatched_arrow_types_name_the_column() {
    let s = nested_schema();
    let b = nested_batch();
    let mut cols = b.columns().to_vec();
    cols[0] = Arc::new(Int32Array::from(vec![1, 2, 3, 4]));
    let err = MetricsCollector::new(&s)
        .update(&s, &batch(cols))
        .unwrap_err()
        .to_string();
    assert!(err.contains("'id'") && err.contains("Int32"), "{err}");
    let err = MetricsCollector::new(&s)
        .update(&s, &batch(b.columns()[..2].to_vec()))
        .unwrap_err();
    assert!(err.to_string().contains("2 columns"), "{err}");
}

fn spec(fields: Vec<(i32, &str, &str)>) -> PartitionSpec {
    PartitionSpec::new(
        0,
        fields
            .into_iter()
            .enumerate()
            .map(|(i, (src, name, t))| {
                PartitionField::new(src, 1000 + i as i32, name, t.parse().unwrap())
            })
            .collect(),
    )
}

#[test]
fn partition_groups_rows_by_tuple() {
    let s = flat_schema();
    let b = flat_batch();
    let groups = partition_batch(
        &b,
        &s,
        &spec(vec![(1, "b", "identity"), (9, "s_trunc", "truncate[2]")]),
    )
    .unwrap();
    // (true, "ic"), (null, "😀😁"), (true, null), (true, "ic")
    assert_eq!(groups.len(), 3);
    assert_eq!(groups.group_rows(0), &[0, 3]);
    assert_eq!(groups.group_rows(1), &[1]);
    assert_eq!(groups.group_rows(2), &[2]);
    assert_eq!(
        groups.partitions[0],
        vec![
            Some(Literal::Boolean(true)),
            Some(Literal::String("ic".into()))
        ]
    );
    assert_eq!(groups.partitions[1][0], None);
    assert_eq!(groups.paths[0], "b=true/s_trunc=ic");
    assert_eq!(groups.paths[1], "b=null/s_trunc=%F0%9F%98%80%F0%9F%98%81");
    assert_eq!(groups.paths[2], "b=true/s_trunc=null");
}

#[test]
fn partition_by_time_bucket_and_nested_source() {
    let s = flat_schema();
    let b = flat_batch();
    let g = partition_batch(
        &b,
        &s,
        &spec(vec![
            (7, "date_month", "month"),
            (3, "l_bucket", "bucket[4]"),
        ]),
    )
    .unwrap();
    let expect_month = [Some(-1), Some(574), None, None];
    for (gi, part) in g.partitions.iter().enumerate() {
        for &row in g.group_rows(gi) {
            let m = expect_month[row as usize].map(Literal::Int);
            assert_eq!(part[0], m, "row {row}");
        }
    }
    assert!(g
        .paths
        .iter()
        .any(|p| p.starts_with("date_month=1969-12/l_bucket=")));
    assert!(g.paths.iter().any(|p| p.starts_with("date_month=2017-11/")));

    // a source inside a struct: nulls of the struct make the value null
    let ns = nested_schema();
    let g = partition_batch(&nested_batch(), &ns, &spec(vec![(4, "y", "identity")])).unwrap();
    let values: Vec<_> = g.partitions.iter().map(|p| p[0].clone()).collect();
    assert_eq!(
        values,
        vec![Some(Literal::Int(1)), None, Some(Literal::Int(2))]
    );
    assert_eq!(g.group_rows(1), &[1, 3]);
    // a source inside a list cannot partition
    assert!(partition_batch(&nested_batch(), &ns, &spec(vec![(6, "t", "identity")])).is_err());
}

#[test]
fn unpartitioned_is_one_group_and_float_keys_follow_java_equality() {
    let s = flat_schema();
    let b = flat_batch();
    let g = partition_batch(&b, &s, &PartitionSpec::unpartitioned()).unwrap();
    assert_eq!(g.len(), 1);
    assert_eq!(g.group_rows(0), &[0, 1, 2, 3]);
    assert_eq!(g.paths[0], "");
    // identity on a float: NaN, 0.0, -0.0 and null are four partitions
    let g = partition_batch(&b, &s, &spec(vec![(4, "f", "identity")])).unwrap();
    assert_eq!(g.paths, vec!["f=NaN", "f=0.0", "f=-0.0", "f=null"]);
}

#[test]
fn data_file_keeps_sizes_of_measured_columns() {
    let s = flat_schema();
    let c = config(&[("write.metadata.metrics.column.i", "none")]);
    let mut coll = MetricsCollector::new(&s);
    coll.update(&s, &flat_batch()).unwrap();
    let m = coll.finish(&s, &c).unwrap();
    let ids: Vec<i32> = coll.leaves().iter().map(|l| l.field_id).collect();
    let measured = coll.measured_leaves(&s, &c);
    let written = WrittenFile {
        path: "/t/data/f.parquet".into(),
        file_size_in_bytes: 1234,
        partition: vec![],
        column_sizes: (1..=11).map(|i| i * 10).collect(),
        split_offsets: vec![400, 4],
        sort_order_id: Some(0),
    };
    let f = data_file(written.clone(), m.clone(), &ids, &measured).unwrap();
    let sizes = f.column_sizes.unwrap();
    assert_eq!(sizes.len(), 10);
    assert_eq!(get(&sizes, 2), None);
    assert_eq!(get(&sizes, 3), Some(30));
    assert_eq!(f.split_offsets, Some(vec![4, 400]));
    assert_eq!(f.record_count, 4);
    assert_eq!(f.file_format, FileFormat::Parquet);
    let mut short = written;
    short.column_sizes.pop();
    assert!(data_file(short, m, &ids, &measured).is_err());
}

#[test]
fn arrow_schema_carries_field_ids() {
    let s = nested_schema();
    let a = crate::arrow::schema_to_arrow(&s).unwrap();
    let id = |f: &Field| f.metadata().get("PARQUET:field_id").cloned().unwrap();
    assert_eq!(id(a.field(0)), "1");
    let DataType::Struct(p) = a.field(1).data_type() else {
        panic!("{a:?}")
    };
    assert_eq!(id(&p[1]), "4");
    let DataType::List(e) = a.field(2).data_type() else {
        panic!("{a:?}")
    };
    assert_eq!((e.name().as_str(), id(e).as_str()), ("element", "6"));
    assert!(e.is_nullable()); // the element is optional
    let DataType::Map(entries, _) = a.field(3).data_type() else {
        panic!("{a:?}")
    };
    let DataType::Struct(kv) = entries.data_type() else {
        panic!("{a:?}")
    };
    assert_eq!((id(&kv[0]), id(&kv[1])), ("8".to_string(), "9".to_string()));
    assert!(!kv[0].is_nullable());
}
