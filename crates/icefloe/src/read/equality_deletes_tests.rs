//! Tests of equality deletes over Arrow batches.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use arrow_array::{
    Decimal128Array, DictionaryArray, Float32Array, Float64Array, Int32Array, Int64Array,
    LargeStringArray, StringArray, StructArray,
};
use arrow_buffer::NullBuffer;
use arrow_schema::{Field, Fields, Schema as ArrowSchema};

use super::*;
use crate::arrow::schema::PARQUET_FIELD_ID;
use crate::spec::types::{NestedField, StructType};
use crate::spec::{PrimitiveType as P, Type};

fn schema() -> Schema {
    let st = StructType::new(vec![NestedField::optional(11, "a", P::Long.into())]);
    Schema::new(
        0,
        vec![
            NestedField::optional(1, "id", P::Long.into()),
            NestedField::optional(2, "s", P::String.into()),
            NestedField::optional(3, "d", P::Double.into()),
            NestedField::optional(
                4,
                "dec",
                P::Decimal {
                    precision: 9,
                    scale: 2,
                }
                .into(),
            ),
            NestedField::optional(10, "st", Type::Struct(Arc::new(st))),
        ],
        Vec::new(),
    )
    .unwrap()
}

fn field(id: i32, name: &str, array: &ArrayRef) -> Field {
    Field::new(name, array.data_type().clone(), true)
        .with_metadata([(PARQUET_FIELD_ID.to_string(), id.to_string())].into())
}

/// A batch of the given (field id, array) columns.
fn batch(columns: Vec<(i32, ArrayRef)>) -> RecordBatch {
    let fields: Vec<Field> = columns
        .iter()
        .map(|(id, a)| field(*id, &format!("c{id}"), a))
        .collect();
    let arrays = columns.into_iter().map(|(_, a)| a).collect();
    RecordBatch::try_new(Arc::new(ArrowSchema::new(fields)), arrays).unwrap()
}

fn longs(v: &[Option<i64>]) -> ArrayRef {
    Arc::new(Int64Array::from(v.to_vec()))
}

fn strings(v: &[Option<&str>]) -> ArrayRef {
    Arc::new(StringArray::from(v.to_vec()))
}

fn doubles(v: &[Option<f64>]) -> ArrayRef {
    Arc::new(Float64Array::from(v.to_vec()))
}

fn keep(d: &EqualityDeletes, b: &RecordBatch) -> Vec<bool> {
    let m = d.keep_mask(b).unwrap();
    assert_eq!(m.null_count(), 0);
    m.iter().map(|v| v.unwrap()).collect()
}

const T: bool = true;
const F: bool = false;

#[test]
fn one_column_key_and_null_equals_null() {
    let mut d = EqualityDeletes::new();
    let dels = batch(vec![(1, longs(&[Some(3), None, Some(3)]))]);
    d.insert_file(&[1], &schema(), [&dels], "del-1.parquet")
        .unwrap();
    assert_eq!(d.sets()[0].len(), 2);
    let data = batch(vec![
        (1, longs(&[Some(1), Some(3), None, Some(4)])),
        (2, strings(&[Some("a"), Some("b"), Some("c"), None])),
    ]);
    assert_eq!(keep(&d, &data), [T, F, F, T]);
}

#[test]
fn multi_column_keys_whatever_the_order_of_the_ids() {
    let mut d = EqualityDeletes::new();
    let dels = batch(vec![
        (2, strings(&[Some("a"), None])),
        (1, longs(&[Some(1), Some(2)])),
    ]);
    d.insert_file(&[2, 1], &schema(), [&dels], "del.parquet")
        .unwrap();
    // the same key in the other order shares the set
    let more = batch(vec![(1, longs(&[Some(5)])), (2, strings(&[Some("e")]))]);
    d.insert_file(&[1, 2], &schema(), [&more], "del2.parquet")
        .unwrap();
    assert_eq!(d.sets().len(), 1);
    assert_eq!(d.sets()[0].field_ids(), [1, 2]);
    let data = batch(vec![
        (
            1,
            longs(&[Some(1), Some(1), Some(2), Some(2), Some(5), None]),
        ),
        (
            2,
            strings(&[Some("a"), Some("b"), None, Some("a"), Some("e"), Some("a")]),
        ),
    ]);
    assert_eq!(keep(&d, &data), [F, T, F, T, F, T]);
}

#[test]
fn nan_equals_nan_and_signed_zeros_differ() {
    let mut d = EqualityDeletes::new();
    // a NaN with another payload and sign than the data's
    let odd_nan = f64::from_bits(0xfff8_0000_0000_0001);
    assert!(odd_nan.is_nan());
    let dels = batch(vec![(3, doubles(&[Some(odd_nan), Some(-0.0)]))]);
    d.insert_file(&[3], &schema(), [&dels], "d.parquet")
        .unwrap();
    let data = batch(vec![(
        3,
        doubles(&[Some(f64::NAN), Some(0.0), Some(-0.0), Some(1.0), None]),
    )]);
    assert_eq!(keep(&d, &data), [F, T, F, T, T]);
}

#[test]
fn delete_columns_are_promoted_to_the_data_type() {
    // a delete file written while `id` was an int and `d` a float, `dec` decimal(5, 2)
    let mut d = EqualityDeletes::new();
    let ints: ArrayRef = Arc::new(Int32Array::from(vec![Some(7), Some(-1)]));
    d.insert_file(&[1], &schema(), [&batch(vec![(1, ints)])], "ints.parquet")
        .unwrap();
    let floats: ArrayRef = Arc::new(Float32Array::from(vec![Some(0.5f32), Some(f32::NAN)]));
    d.insert_file(
        &[3],
        &schema(),
        [&batch(vec![(3, floats)])],
        "floats.parquet",
    )
    .unwrap();
    let decs: ArrayRef = Arc::new(
        Decimal128Array::from(vec![Some(12345i128)])
            .with_precision_and_scale(5, 2)
            .unwrap(),
    );
    d.insert_file(&[4], &schema(), [&batch(vec![(4, decs)])], "decs.parquet")
        .unwrap();
    let data_decs: ArrayRef = Arc::new(
        Decimal128Array::from(vec![Some(12345i128), Some(12346), None, None])
            .with_precision_and_scale(9, 2)
            .unwrap(),
    );
    let data = batch(vec![
        (1, longs(&[Some(7), Some(8), Some(-1), None])),
        (
            3,
            doubles(&[Some(1.0), Some(0.5), Some(2.0), Some(f64::NAN)]),
        ),
        (4, data_decs),
    ]);
    // each file applies on its own
    assert_eq!(d.sets().len(), 3);
    assert_eq!(keep(&d, &data), [F, F, F, F]);
    let data = batch(vec![
        (1, longs(&[Some(8), Some(9)])),
        (3, doubles(&[Some(1.0), Some(0.25)])),
        (
            4,
            Arc::new(
                Decimal128Array::from(vec![Some(1i128), Some(12345)])
                    .with_precision_and_scale(9, 2)
                    .unwrap(),
            ),
        ),
    ]);
    assert_eq!(keep(&d, &data), [T, F]);
}

#[test]
fn nested_key_fields_are_null_where_their_struct_is() {
    let a_field = Arc::new(field(11, "a", &longs(&[])));
    let st = |a: &[Option<i64>], valid: &[bool]| -> ArrayRef {
        Arc::new(
            StructArray::try_new(
                Fields::from(vec![a_field.clone()]),
                vec![longs(a)],
                Some(NullBuffer::from(valid.to_vec())),
            )
            .unwrap(),
        )
    };
    let mut d = EqualityDeletes::new();
    // a null key: deletes rows whose `st.a` is null, through a null struct too
    let dels = batch(vec![(10, st(&[None, Some(2)], &[true, true]))]);
    d.insert_file(&[11], &schema(), [&dels], "nested.parquet")
        .unwrap();
    // row 1: st is null but its child holds 5 (physically): it is null
    let data = batch(vec![(
        10,
        st(
            &[Some(1), Some(5), Some(2), None],
            &[true, false, true, true],
        ),
    )]);
    assert_eq!(keep(&d, &data), [T, F, F, F]);
}

#[test]
fn other_string_layouts_and_missing_data_columns() {
    let mut d = EqualityDeletes::new();
    let dels = batch(vec![(2, strings(&[Some("x"), None]))]);
    d.insert_file(&[2], &schema(), [&dels], "s.parquet")
        .unwrap();
    let large: ArrayRef = Arc::new(LargeStringArray::from(vec![Some("x"), Some("y"), None]));
    assert_eq!(keep(&d, &batch(vec![(2, large)])), [F, T, F]);
    let dict: ArrayRef = Arc::new(
        vec![Some("y"), Some("x"), None]
            .into_iter()
            .collect::<DictionaryArray<arrow_array::types::Int8Type>>(),
    );
    assert_eq!(keep(&d, &batch(vec![(2, dict)])), [T, F, F]);
    // the data batch has no column 2 (dropped, not in the file): all null, all deleted
    // by the null key
    assert_eq!(
        keep(&d, &batch(vec![(1, longs(&[Some(1), Some(2)]))])),
        [F, F]
    );
}

#[test]
fn empty_batches_and_empty_sets() {
    let mut d = EqualityDeletes::new();
    assert!(d.is_empty());
    let data = batch(vec![(1, longs(&[Some(1), None]))]);
    assert_eq!(keep(&d, &data), [T, T]);
    let empty = batch(vec![(1, longs(&[]))]);
    d.insert_file(&[1], &schema(), [&empty], "empty.parquet")
        .unwrap();
    assert!(d.is_empty());
    assert_eq!(keep(&d, &data), [T, T]);
    let dels = batch(vec![(1, longs(&[Some(1)]))]);
    d.insert_file(&[1], &schema(), [&dels], "one.parquet")
        .unwrap();
    assert!(keep(&d, &empty).is_empty());
    assert_eq!(keep(&d, &data), [F, T]);
    // sliced data batches
    let data = batch(vec![(1, longs(&[Some(2), Some(1), Some(1), Some(3)]))]).slice(1, 3);
    assert_eq!(keep(&d, &data), [F, F, T]);
}

#[test]
fn memory_is_bounded_by_the_distinct_delete_keys() {
    let mut set = EqualityDeleteSet::for_schema(&[1], &schema()).unwrap();
    for _ in 0..10 {
        let values: Vec<Option<i64>> = (0..1000).map(|v| Some(v % 100)).collect();
        set.insert_batch(&batch(vec![(1, longs(&values))]), "dup.parquet")
            .unwrap();
    }
    assert_eq!(set.len(), 100);
    // one byte of null flag and eight of value per key
    assert_eq!(set.key_bytes(), 900);
}

#[test]
fn errors_name_the_file_and_the_field() {
    let mut d = EqualityDeletes::new();
    let dels = batch(vec![(2, strings(&[Some("x")]))]);
    let e = d
        .insert_file(&[1], &schema(), [&dels], "s3://b/del.parquet")
        .unwrap_err();
    assert!(e.to_string().contains("s3://b/del.parquet"), "{e}");
    assert!(e.to_string().contains("field id 1"), "{e}");
    // a string column where the key is a long
    let e = d
        .insert_file(
            &[1],
            &schema(),
            [&batch(vec![(1, strings(&[Some("x")]))])],
            "bad.parquet",
        )
        .unwrap_err();
    assert!(e.to_string().contains("bad.parquet"), "{e}");
    // ids that are not primitive fields of the schema
    assert!(EqualityDeleteSet::for_schema(&[99], &schema()).is_err());
    assert!(EqualityDeleteSet::for_schema(&[10], &schema()).is_err());
    assert!(EqualityDeleteSet::new(vec![]).is_err());
    assert!(EqualityDeleteSet::new(vec![(1, DataType::Int64), (1, DataType::Int64)]).is_err());
    // a data column that does not convert to the key's type
    let mut d = EqualityDeletes::new();
    d.insert_file(
        &[1],
        &schema(),
        [&batch(vec![(1, longs(&[Some(1)]))])],
        "ok.parquet",
    )
    .unwrap();
    let data = batch(vec![(
        1,
        Arc::new(StructArray::new_empty_fields(1, None)) as ArrayRef,
    )]);
    assert!(d.keep_mask(&data).is_err());
}
