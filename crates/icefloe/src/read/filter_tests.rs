//! Tests of the residual filter over Arrow batches: each operation on each type, nulls,
//! NaN and signed zeros, nested fields, other Arrow layouts, errors, and a differential
//! test against the crate's row evaluator.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use arrow_array::{
    ArrayRef, DictionaryArray, Float64Array, Int32Array, Int64Array, LargeStringArray, RecordBatch,
    StringViewArray, StructArray,
};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Field, Schema as ArrowSchema};

use super::*;
use crate::arrow::schema::schema_to_arrow;
use crate::expr::{evaluate_tuple, Datum, Expression, Operation as O};
use crate::spec::types::{NestedField, StructType};
use crate::spec::{Literal, PrimitiveType as P, Schema, Type};

/// Flat columns 1..=15 of every primitive type, and a struct `st` (16) holding `a` (17)
/// and a struct `inner` (18) holding `x` (19).
fn schema() -> Schema {
    let inner = StructType::new(vec![NestedField::optional(19, "x", P::Double.into())]);
    let st = StructType::new(vec![
        NestedField::optional(17, "a", P::Long.into()),
        NestedField::optional(18, "inner", Type::Struct(Arc::new(inner))),
    ]);
    Schema::new(
        0,
        vec![
            NestedField::optional(1, "id", P::Long.into()),
            NestedField::optional(2, "f", P::Float.into()),
            NestedField::optional(3, "d", P::Double.into()),
            NestedField::optional(4, "s", P::String.into()),
            NestedField::optional(5, "i", P::Int.into()),
            NestedField::optional(6, "dt", P::Date.into()),
            NestedField::optional(7, "t", P::Time.into()),
            NestedField::optional(8, "ts", P::Timestamp.into()),
            NestedField::optional(9, "tstz", P::Timestamptz.into()),
            NestedField::optional(10, "tsn", P::TimestampNs.into()),
            NestedField::optional(
                11,
                "dec",
                P::Decimal {
                    precision: 9,
                    scale: 2,
                }
                .into(),
            ),
            NestedField::optional(12, "u", P::Uuid.into()),
            NestedField::optional(13, "fx", P::Fixed(3).into()),
            NestedField::optional(14, "b", P::Binary.into()),
            NestedField::optional(15, "bo", P::Boolean.into()),
            NestedField::optional(16, "st", Type::Struct(Arc::new(st))),
        ],
        Vec::new(),
    )
    .unwrap()
}

/// The primitive type of each flat column (index = field id - 1).
fn flat_types() -> Vec<P> {
    schema()
        .fields()
        .iter()
        .take(15)
        .map(|f| f.field_type.as_primitive().unwrap().clone())
        .collect()
}

/// A batch of the test schema: `rows[r][c]` is the value of flat column `c` (ids 1..=15)
/// in row `r`; the struct column holds `a` = row number and `x` = row number as a double,
/// with `st` null in rows `null_st` and `inner` null in rows `null_inner`.
fn batch(rows: &[Vec<Option<Literal>>], null_st: &[usize], null_inner: &[usize]) -> RecordBatch {
    let arrow = Arc::new(schema_to_arrow(&schema()).unwrap());
    let types = flat_types();
    let n = rows.len();
    let mut columns: Vec<ArrayRef> = types
        .iter()
        .enumerate()
        .map(|(c, ty)| {
            let values: Vec<Option<&Literal>> = rows.iter().map(|r| r[c].as_ref()).collect();
            literals_to_array(&values, ty).unwrap()
        })
        .collect();
    let DataType::Struct(st_fields) = arrow.field(15).data_type().clone() else {
        panic!("st is a struct")
    };
    let DataType::Struct(inner_fields) = st_fields[1].data_type().clone() else {
        panic!("inner is a struct")
    };
    let x: ArrayRef = Arc::new(Float64Array::from_iter_values((0..n).map(|r| r as f64)));
    let inner_nulls = NullBuffer::from_iter((0..n).map(|r| !null_inner.contains(&r)));
    let inner: ArrayRef =
        Arc::new(StructArray::try_new(inner_fields, vec![x], Some(inner_nulls)).unwrap());
    let a: ArrayRef = Arc::new(Int64Array::from_iter_values(0..n as i64));
    let st_nulls = NullBuffer::from_iter((0..n).map(|r| !null_st.contains(&r)));
    columns.push(Arc::new(
        StructArray::try_new(st_fields, vec![a, inner], Some(st_nulls)).unwrap(),
    ));
    RecordBatch::try_new(arrow, columns).unwrap()
}

/// Rows with only column `c` set (the others null), one per value.
fn column_rows(c: usize, values: Vec<Option<Literal>>) -> Vec<Vec<Option<Literal>>> {
    values
        .into_iter()
        .map(|v| {
            let mut row = vec![None; 15];
            row[c] = v;
            row
        })
        .collect()
}

fn keep(expr: &Expression, batch: &RecordBatch) -> Vec<bool> {
    let bound = expr.bind(&schema(), true).unwrap();
    let mask = residual_mask(&bound, batch).unwrap();
    assert_eq!(mask.null_count(), 0);
    mask.iter().map(|b| b.unwrap()).collect()
}

fn cmp(op: O, name: &str, v: impl Into<Datum>) -> Expression {
    Expression::compare(op, name, v)
}

const T: bool = true;
const F: bool = false;

#[test]
fn comparisons_on_long_drop_nulls() {
    let b = batch(
        &column_rows(
            0,
            vec![Some(Literal::Long(1)), None, Some(Literal::Long(5))],
        ),
        &[],
        &[],
    );
    assert_eq!(keep(&cmp(O::Lt, "id", 5i64), &b), [T, F, F]);
    assert_eq!(keep(&cmp(O::LtEq, "id", 5i64), &b), [T, F, T]);
    assert_eq!(keep(&cmp(O::Gt, "id", 1i64), &b), [F, F, T]);
    assert_eq!(keep(&cmp(O::GtEq, "id", 1i64), &b), [T, F, T]);
    assert_eq!(keep(&cmp(O::Eq, "id", 5i64), &b), [F, F, T]);
    // a null is not different from 5 either (Java's evaluator would say it is)
    assert_eq!(keep(&cmp(O::NotEq, "id", 5i64), &b), [T, F, F]);
    assert_eq!(keep(&Expression::unary(O::IsNull, "id"), &b), [F, T, F]);
    assert_eq!(keep(&Expression::unary(O::NotNull, "id"), &b), [T, F, T]);
    // an int literal binds to the long column as the binder converts it
    assert_eq!(keep(&cmp(O::Eq, "id", 5i32), &b), [F, F, T]);
    // out of range literals bind to constants
    assert_eq!(keep(&cmp(O::Lt, "i", i64::MAX), &b), [T, T, T]);
}

#[test]
fn in_and_not_in_small_and_large_sets() {
    let b = batch(
        &column_rows(
            0,
            vec![
                Some(Literal::Long(1)),
                None,
                Some(Literal::Long(7)),
                Some(Literal::Long(40)),
            ],
        ),
        &[],
        &[],
    );
    let small: Vec<Datum> = vec![1i64.into(), 40i64.into()];
    assert_eq!(
        keep(&Expression::is_in("id", small.clone()), &b),
        [T, F, F, T]
    );
    assert_eq!(keep(&Expression::not_in("id", small), &b), [F, F, T, F]);
    // more values than SMALL_SET: the hashed path
    let large: Vec<Datum> = (0..100).map(|v| Datum::Long(v * 40 + 1)).collect();
    assert_eq!(
        keep(&Expression::is_in("id", large.clone()), &b),
        [T, F, F, F]
    );
    assert_eq!(keep(&Expression::not_in("id", large), &b), [F, F, T, T]);
    let strings = batch(
        &column_rows(
            3,
            vec![
                Some(Literal::String("a".into())),
                None,
                Some(Literal::String("q".into())),
            ],
        ),
        &[],
        &[],
    );
    let large: Vec<Datum> = (0..50)
        .map(|v| Datum::String(format!("{v}")))
        .chain(["a".into()])
        .collect();
    assert_eq!(
        keep(&Expression::is_in("s", large.clone()), &strings),
        [T, F, F]
    );
    assert_eq!(keep(&Expression::not_in("s", large), &strings), [F, F, T]);
}

fn floats(c: usize) -> RecordBatch {
    let vals = [
        1.0,
        f64::NAN,
        -f64::NAN,
        -0.0,
        0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    let mut values: Vec<Option<Literal>> = vals
        .iter()
        .map(|v| {
            Some(if c == 1 {
                Literal::Float(*v as f32)
            } else {
                Literal::Double(*v)
            })
        })
        .collect();
    values.push(None);
    batch(&column_rows(c, values), &[], &[])
}

#[test]
fn float_and_double_comparisons_put_nan_above_every_number() {
    for (c, name) in [(1, "f"), (2, "d")] {
        let b = floats(c);
        // rows: 1, NaN, -NaN, -0, 0, inf, -inf, null
        let lit = |v: f64| -> Datum {
            if c == 1 {
                Datum::Float(v as f32)
            } else {
                Datum::Double(v)
            }
        };
        assert_eq!(
            keep(&cmp(O::Lt, name, lit(1.0)), &b),
            [F, F, F, T, T, F, T, F],
            "{name}"
        );
        assert_eq!(
            keep(&cmp(O::LtEq, name, lit(1.0)), &b),
            [T, F, F, T, T, F, T, F]
        );
        assert_eq!(
            keep(&cmp(O::Gt, name, lit(1.0)), &b),
            [F, T, T, F, F, T, F, F]
        );
        assert_eq!(
            keep(&cmp(O::GtEq, name, lit(1.0)), &b),
            [T, T, T, F, F, T, F, F]
        );
        assert_eq!(
            keep(&cmp(O::Gt, name, lit(f64::INFINITY)), &b),
            [F, T, T, F, F, F, F, F]
        );
        // -0.0 = 0.0 as IEEE numbers (pyarrow's and Spark's comparisons)
        assert_eq!(
            keep(&cmp(O::Eq, name, lit(0.0)), &b),
            [F, F, F, T, T, F, F, F]
        );
        assert_eq!(
            keep(&cmp(O::Eq, name, lit(-0.0)), &b),
            [F, F, F, T, T, F, F, F]
        );
        assert_eq!(
            keep(&cmp(O::NotEq, name, lit(0.0)), &b),
            [T, T, T, F, F, T, T, F]
        );
        assert_eq!(
            keep(&cmp(O::Lt, name, lit(0.0)), &b),
            [F, F, F, F, F, F, T, F]
        );
        assert_eq!(
            keep(&cmp(O::LtEq, name, lit(-0.0)), &b),
            [F, F, F, T, T, F, T, F]
        );
        assert_eq!(
            keep(&Expression::unary(O::IsNan, name), &b),
            [F, T, T, F, F, F, F, F]
        );
        // a null is not NaN
        assert_eq!(
            keep(&Expression::unary(O::NotNan, name), &b),
            [T, F, F, T, T, T, T, T]
        );
        // sets compare bits (Java's Set.contains, pyarrow's is_in): -0.0 is not 0.0
        let set = vec![lit(0.0), lit(1.0)];
        assert_eq!(
            keep(&Expression::is_in(name, set.clone()), &b),
            [T, F, F, F, T, F, F, F]
        );
        assert_eq!(
            keep(&Expression::not_in(name, set), &b),
            [F, T, T, T, F, T, T, F]
        );
    }
}

#[test]
fn strings_compare_bytewise_and_starts_with() {
    let vals = ["abc", "ab", "b", "", "é"];
    let mut values: Vec<Option<Literal>> = vals
        .iter()
        .map(|v| Some(Literal::String((*v).into())))
        .collect();
    values.push(None);
    let b = batch(&column_rows(3, values), &[], &[]);
    assert_eq!(keep(&cmp(O::Eq, "s", "ab"), &b), [F, T, F, F, F, F]);
    assert_eq!(keep(&cmp(O::NotEq, "s", "ab"), &b), [T, F, T, T, T, F]);
    assert_eq!(keep(&cmp(O::Lt, "s", "b"), &b), [T, T, F, T, F, F]);
    assert_eq!(keep(&cmp(O::Gt, "s", "b"), &b), [F, F, F, F, T, F]);
    let sw = Expression::compare(O::StartsWith, "s", "ab");
    let nsw = Expression::compare(O::NotStartsWith, "s", "ab");
    assert_eq!(keep(&sw, &b), [T, T, F, F, F, F]);
    // a null neither starts nor does not start with 'ab'
    assert_eq!(keep(&nsw, &b), [F, F, T, T, T, F]);
    assert_eq!(
        keep(&Expression::compare(O::StartsWith, "s", ""), &b),
        [T, T, T, T, T, F]
    );

    // the same over the other string layouts the reader may hand over
    let arrow_fields = b.schema().fields().clone();
    let s = b.column(3).as_string::<i32>().clone();
    let layouts: Vec<ArrayRef> = vec![
        Arc::new(LargeStringArray::from_iter(s.iter())),
        Arc::new(StringViewArray::from_iter(s.iter())),
        Arc::new(DictionaryArray::<arrow_array::types::Int32Type>::from_iter(
            s.iter(),
        )),
    ];
    for layout in layouts {
        let mut columns = b.columns().to_vec();
        let mut fields: Vec<Field> = arrow_fields.iter().map(|f| f.as_ref().clone()).collect();
        fields[3] = fields[3].clone().with_data_type(layout.data_type().clone());
        columns[3] = layout;
        let other = RecordBatch::try_new(Arc::new(ArrowSchema::new(fields)), columns).unwrap();
        assert_eq!(keep(&cmp(O::Lt, "s", "b"), &other), [T, T, F, T, F, F]);
        assert_eq!(keep(&nsw, &other), [F, F, T, T, T, F]);
        let set: Vec<Datum> = vec!["ab".into(), "é".into()];
        assert_eq!(
            keep(&Expression::is_in("s", set), &other),
            [F, T, F, F, T, F]
        );
    }
}

#[test]
fn every_primitive_type_compares() {
    // (column, three increasing values, the middle one as a datum)
    let cases: Vec<(usize, &str, [Literal; 3], Datum)> = vec![
        (
            4,
            "i",
            [Literal::Int(-3), Literal::Int(0), Literal::Int(9)],
            Datum::Int(0),
        ),
        (
            5,
            "dt",
            [
                Literal::Date(-1),
                Literal::Date(19000),
                Literal::Date(20000),
            ],
            Datum::Date(19000),
        ),
        (
            6,
            "t",
            [
                Literal::Time(0),
                Literal::Time(1_000_000),
                Literal::Time(86_399_000_000),
            ],
            Datum::Time(1_000_000),
        ),
        (
            7,
            "ts",
            [
                Literal::Timestamp(-5),
                Literal::Timestamp(7),
                Literal::Timestamp(1 << 50),
            ],
            Datum::Timestamp(7),
        ),
        (
            8,
            "tstz",
            [
                Literal::Timestamptz(-5),
                Literal::Timestamptz(7),
                Literal::Timestamptz(1 << 50),
            ],
            Datum::Timestamp(7),
        ),
        (
            9,
            "tsn",
            [
                Literal::TimestampNs(-5),
                Literal::TimestampNs(7),
                Literal::TimestampNs(1 << 60),
            ],
            Datum::TimestampNs(7),
        ),
        (
            10,
            "dec",
            [
                Literal::Decimal(-12345),
                Literal::Decimal(150),
                Literal::Decimal(99_999_999),
            ],
            Datum::Decimal {
                unscaled: 15,
                scale: 1,
            },
        ),
        (
            12,
            "fx",
            [
                Literal::Fixed(vec![0, 0, 1]),
                Literal::Fixed(vec![0, 1, 0]),
                Literal::Fixed(vec![255, 0, 0]),
            ],
            Datum::Fixed(vec![0, 1, 0]),
        ),
        (
            13,
            "b",
            [
                Literal::Binary(vec![]),
                Literal::Binary(vec![1]),
                Literal::Binary(vec![1, 0]),
            ],
            Datum::Binary(vec![1]),
        ),
        (
            14,
            "bo",
            [
                Literal::Boolean(false),
                Literal::Boolean(true),
                Literal::Boolean(true),
            ],
            Datum::Boolean(true),
        ),
        // byte-wise unsigned: 0x80.. is above 0x01.. (Java's UUID.compareTo says below)
        (
            11,
            "u",
            [
                Literal::Uuid(1 << 120),
                Literal::Uuid(2 << 120),
                Literal::Uuid(0x80 << 120),
            ],
            Datum::Uuid(2 << 120),
        ),
    ];
    for (c, name, values, mid) in cases {
        let mut rows: Vec<Option<Literal>> = values.iter().cloned().map(Some).collect();
        rows.push(None);
        let b = batch(&column_rows(c, rows), &[], &[]);
        let boolean = name == "bo";
        let lt = keep(&cmp(O::Lt, name, mid.clone()), &b);
        let eq = keep(&cmp(O::Eq, name, mid.clone()), &b);
        let gt_eq = keep(&cmp(O::GtEq, name, mid.clone()), &b);
        let ne = keep(&cmp(O::NotEq, name, mid.clone()), &b);
        if boolean {
            assert_eq!(eq, [F, T, T, F], "{name}");
            assert_eq!(lt, [T, F, F, F], "{name}");
            continue;
        }
        assert_eq!(lt, [T, F, F, F], "{name} <");
        assert_eq!(eq, [F, T, F, F], "{name} =");
        assert_eq!(gt_eq, [F, T, T, F], "{name} >=");
        assert_eq!(ne, [T, F, T, F], "{name} !=");
        assert_eq!(
            keep(&cmp(O::Gt, name, mid.clone()), &b),
            [F, F, T, F],
            "{name} >"
        );
        assert_eq!(
            keep(&cmp(O::LtEq, name, mid.clone()), &b),
            [T, T, F, F],
            "{name} <="
        );
        let first = Datum::from_literal(&values[0], &flat_types()[c]);
        let set = vec![first, mid.clone()];
        assert_eq!(
            keep(&Expression::is_in(name, set.clone()), &b),
            [T, T, F, F],
            "{name} in"
        );
        assert_eq!(
            keep(&Expression::not_in(name, set), &b),
            [F, F, T, F],
            "{name} not in"
        );
    }
}

#[test]
fn decimal_literals_between_two_values_bind_as_the_binder_does() {
    let b = batch(
        &column_rows(
            10,
            vec![Some(Literal::Decimal(150)), Some(Literal::Decimal(151))],
        ),
        &[],
        &[],
    );
    // 1.505 on a decimal(9, 2) column: < 1.505 is <= 1.50, = matches nothing
    let v = Datum::Decimal {
        unscaled: 1505,
        scale: 3,
    };
    assert_eq!(keep(&cmp(O::Lt, "dec", v.clone()), &b), [T, F]);
    assert_eq!(keep(&cmp(O::Eq, "dec", v.clone()), &b), [F, F]);
    assert_eq!(keep(&cmp(O::NotEq, "dec", v), &b), [T, T]);
}

#[test]
fn nested_fields_are_null_where_a_struct_around_them_is() {
    let rows = column_rows(0, vec![None, None, None, None]);
    // st null in row 1, inner null in row 2
    let b = batch(&rows, &[1], &[2]);
    // a = 0, 1, 2, 3; x = 0.0, 1.0, 2.0, 3.0
    assert_eq!(keep(&cmp(O::GtEq, "st.a", 0i64), &b), [T, F, T, T]);
    assert_eq!(keep(&cmp(O::NotEq, "st.a", 100i64), &b), [T, F, T, T]);
    assert_eq!(
        keep(&Expression::unary(O::IsNull, "st.a"), &b),
        [F, T, F, F]
    );
    assert_eq!(keep(&cmp(O::GtEq, "st.inner.x", 0.0f64), &b), [T, F, F, T]);
    assert_eq!(
        keep(&Expression::unary(O::IsNull, "st.inner.x"), &b),
        [F, T, T, F]
    );
    assert_eq!(
        keep(&Expression::unary(O::NotNull, "st.inner.x"), &b),
        [T, F, F, T]
    );
    assert_eq!(
        keep(&Expression::unary(O::NotNan, "st.inner.x"), &b),
        [T, T, T, T]
    );
    assert_eq!(
        keep(&Expression::unary(O::IsNan, "st.inner.x"), &b),
        [F, F, F, F]
    );
    // null checks on the structs themselves
    assert_eq!(keep(&Expression::unary(O::IsNull, "st"), &b), [F, T, F, F]);
    assert_eq!(
        keep(&Expression::unary(O::IsNull, "st.inner"), &b),
        [F, T, T, F]
    );
    assert_eq!(
        keep(&Expression::unary(O::NotNull, "st.inner"), &b),
        [T, F, F, T]
    );
}

#[test]
fn and_or_combine_with_sql_null_rules() {
    let b = batch(
        &[
            vec![
                Some(Literal::Long(1)),
                None,
                None,
                Some(Literal::String("x".into())),
            ],
            vec![None, None, None, Some(Literal::String("x".into()))],
            vec![None, None, None, None],
            vec![Some(Literal::Long(9)), None, None, None],
        ]
        .into_iter()
        .map(|mut r| {
            r.resize(15, None);
            r
        })
        .collect::<Vec<_>>(),
        &[],
        &[],
    );
    let id_lt = cmp(O::Lt, "id", 5i64);
    let s_eq = cmp(O::Eq, "s", "x");
    // unknown OR true is true; unknown OR false is unknown (dropped)
    assert_eq!(
        keep(&Expression::or(id_lt.clone(), s_eq.clone()), &b),
        [T, T, F, F]
    );
    assert_eq!(
        keep(&Expression::and(id_lt.clone(), s_eq.clone()), &b),
        [T, F, F, F]
    );
    // NOT (id < 5) binds as id >= 5: unknown stays unknown
    assert_eq!(keep(&Expression::not(id_lt.clone()), &b), [F, F, F, T]);
    assert_eq!(
        keep(&Expression::not(Expression::and(id_lt, s_eq)), &b),
        [F, F, F, T]
    );
    assert_eq!(keep(&Expression::True, &b), [T, T, T, T]);
    assert_eq!(keep(&Expression::False, &b), [F, F, F, F]);
}

#[test]
fn empty_batches_give_empty_masks() {
    let b = batch(&[], &[], &[]);
    for e in [
        cmp(O::Eq, "s", "a"),
        Expression::is_in("id", vec![1i64.into(), 2i64.into()]),
        Expression::unary(O::IsNan, "d"),
        Expression::or(cmp(O::Gt, "st.a", 1i64), Expression::unary(O::IsNull, "st")),
        Expression::True,
    ] {
        assert!(keep(&e, &b).is_empty(), "{e}");
    }
}

#[test]
fn sliced_batches_keep_their_offsets() {
    let values: Vec<Option<Literal>> = (0..20).map(|v| Some(Literal::Long(v))).collect();
    let b = batch(&column_rows(0, values), &[3, 4], &[]).slice(3, 5);
    assert_eq!(keep(&cmp(O::Gt, "id", 5i64), &b), [F, F, F, T, T]);
    assert_eq!(keep(&cmp(O::Gt, "st.a", 5i64), &b), [F, F, F, T, T]);
    assert_eq!(
        keep(&Expression::unary(O::IsNull, "st.a"), &b),
        [T, T, F, F, F]
    );
}

#[test]
fn missing_columns_and_wrong_types_are_errors() {
    let b = batch(&column_rows(0, vec![Some(Literal::Long(1))]), &[], &[]);
    let bound = cmp(O::Eq, "id", 1i64).bind(&schema(), true).unwrap();
    // without the column
    let without = b.project(&[1, 2]).unwrap();
    let e = residual_mask(&bound, &without).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
    assert!(e.to_string().contains("field id 1"), "{e}");
    // the column as int32 (not promoted)
    let ints: ArrayRef = Arc::new(Int32Array::from(vec![1]));
    let field = Field::new("id", DataType::Int32, true)
        .with_metadata([(PARQUET_FIELD_ID.to_string(), "1".to_string())].into());
    let wrong = RecordBatch::try_new(Arc::new(ArrowSchema::new(vec![field])), vec![ints]).unwrap();
    let e = residual_mask(&bound, &wrong).unwrap_err();
    assert!(e.to_string().contains("'id' (field id 1)"), "{e}");
    assert!(e.to_string().contains("Int32"), "{e}");
    // a bad field id in the metadata
    let bad = Field::new("id", DataType::Int64, true)
        .with_metadata([(PARQUET_FIELD_ID.to_string(), "one".to_string())].into());
    let longs: ArrayRef = Arc::new(Int64Array::from(vec![1]));
    let bad = RecordBatch::try_new(Arc::new(ArrowSchema::new(vec![bad])), vec![longs]).unwrap();
    assert!(residual_mask(&bound, &bad).is_err());
}

#[test]
fn a_null_partition_value_gets_the_scan_filter() {
    let s = schema();
    let residual = Expression::True.bind(&s, true).unwrap();
    let filter = cmp(O::NotEq, "s", "a").bind(&s, true).unwrap();
    let f = BoundExpression::False;
    let with_null = [Some(Literal::Int(1)), None];
    let without = [Some(Literal::Int(1)), Some(Literal::Int(2))];
    assert_eq!(task_row_filter(&residual, &filter, &with_null), &filter);
    assert_eq!(task_row_filter(&residual, &filter, &without), &residual);
    assert_eq!(task_row_filter(&residual, &filter, &[]), &residual);
    assert_eq!(task_row_filter(&f, &filter, &with_null), &f);
}

// ---------------------------------------------------------------------------------------
// differential: the mask against the crate's row evaluator
// ---------------------------------------------------------------------------------------

/// A small deterministic generator (tests must not depend on a random seed).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A random value of flat column `c`, null one time in eight. Floats include NaN (both
/// signs) and infinities, not `-0.0` (where SQL and Java disagree); uuids are left out
/// (Java orders them by signed halves).
fn random_value(rng: &mut Lcg, c: usize) -> Option<Literal> {
    if rng.below(8) == 0 {
        return None;
    }
    let small = rng.below(7) as i64 - 3;
    Some(match c {
        0 => Literal::Long(small),
        1 | 2 => {
            let v = match rng.below(10) {
                0 => f64::NAN,
                1 => -f64::NAN,
                2 => f64::INFINITY,
                3 => f64::NEG_INFINITY,
                _ => small as f64 / 2.0,
            };
            if c == 1 {
                Literal::Float(v as f32)
            } else {
                Literal::Double(v)
            }
        }
        3 => Literal::String(["", "a", "ab", "abc", "b", "ba", "é"][rng.below(7) as usize].into()),
        4 => Literal::Int(small as i32),
        5 => Literal::Date(small as i32),
        7 => Literal::Timestamp(small),
        10 => Literal::Decimal(i128::from(small) * 50),
        13 => Literal::Binary(vec![rng.below(3) as u8; rng.below(3) as usize]),
        14 => Literal::Boolean(rng.below(2) == 0),
        _ => return None,
    })
}

fn expressions() -> Vec<Expression> {
    let p = |op, name: &str, v: Datum| Expression::compare(op, name, v);
    let mut out = Vec::new();
    for op in [O::Lt, O::LtEq, O::Gt, O::GtEq, O::Eq, O::NotEq] {
        out.push(p(op, "id", 1i64.into()));
        out.push(p(op, "f", Datum::Float(0.5)));
        out.push(p(op, "d", Datum::Double(-1.0)));
        out.push(p(op, "d", Datum::Double(f64::INFINITY)));
        out.push(p(op, "s", "ab".into()));
        out.push(p(op, "i", 0i32.into()));
        out.push(p(op, "dt", Datum::Date(1)));
        out.push(p(op, "ts", Datum::Timestamp(-1)));
        out.push(p(
            op,
            "dec",
            Datum::Decimal {
                unscaled: 50,
                scale: 2,
            },
        ));
        out.push(p(op, "b", Datum::Binary(vec![1])));
        out.push(p(op, "bo", Datum::Boolean(true)));
    }
    for name in ["f", "d", "id", "s"] {
        out.push(Expression::unary(O::IsNull, name));
        out.push(Expression::unary(O::NotNull, name));
    }
    for name in ["f", "d"] {
        out.push(Expression::unary(O::IsNan, name));
        out.push(Expression::unary(O::NotNan, name));
    }
    out.push(p(O::StartsWith, "s", "a".into()));
    out.push(p(O::NotStartsWith, "s", "a".into()));
    let longs: Vec<Datum> = vec![(-1i64).into(), 2i64.into(), 3i64.into()];
    let many: Vec<Datum> = (-40..40).map(|v| Datum::Long(v * 2)).collect();
    let strings: Vec<Datum> = vec!["a".into(), "ba".into()];
    let doubles: Vec<Datum> = vec![Datum::Double(0.5), Datum::Double(f64::INFINITY)];
    out.push(Expression::is_in("id", longs.clone()));
    out.push(Expression::not_in("id", longs));
    out.push(Expression::is_in("id", many.clone()));
    out.push(Expression::not_in("id", many));
    out.push(Expression::is_in("s", strings.clone()));
    out.push(Expression::not_in("s", strings));
    out.push(Expression::is_in("d", doubles.clone()));
    out.push(Expression::not_in("d", doubles));
    // combinations, NOT included (binding pushes it down)
    let n = out.len();
    for k in 0..n {
        let a = out[k].clone();
        let b = out[(k * 7 + 3) % n].clone();
        let c = out[(k * 13 + 5) % n].clone();
        out.push(Expression::and(
            a.clone(),
            Expression::or(b.clone(), c.clone()),
        ));
        out.push(Expression::not(Expression::or(a, Expression::and(b, c))));
    }
    out
}

/// The row-by-row SQL evaluation: a predicate on a null value is unknown (`None`), except
/// the null checks and `is nan`/`is not nan` (a null is not NaN); on a value, the crate's
/// row evaluator decides; AND and OR are Kleene's.
fn sql_eval(e: &BoundExpression, row: &[Option<Literal>]) -> Option<bool> {
    match e {
        BoundExpression::True => Some(true),
        BoundExpression::False => Some(false),
        BoundExpression::And(l, r) => match (sql_eval(l, row), sql_eval(r, row)) {
            (Some(false), _) | (_, Some(false)) => Some(false),
            (Some(true), Some(true)) => Some(true),
            _ => None,
        },
        BoundExpression::Or(l, r) => match (sql_eval(l, row), sql_eval(r, row)) {
            (Some(true), _) | (_, Some(true)) => Some(true),
            (Some(false), Some(false)) => Some(false),
            _ => None,
        },
        BoundExpression::Predicate(p) => {
            let pos = p.term().position[0] as usize;
            let null = row[pos].is_none();
            if null && !matches!(p.op(), O::IsNull | O::NotNull | O::IsNan | O::NotNan) {
                return None;
            }
            Some(evaluate_tuple(e, row).unwrap())
        }
    }
}

#[test]
fn masks_equal_the_row_evaluator_under_sql_null_rules() {
    let mut rng = Lcg(42);
    let rows: Vec<Vec<Option<Literal>>> = (0..600)
        .map(|_| (0..15).map(|c| random_value(&mut rng, c)).collect())
        .collect();
    let b = batch(&rows, &[], &[]);
    let s = schema();
    let mut checked = 0;
    for e in expressions() {
        let bound = e.bind(&s, true).unwrap();
        let mask = residual_mask(&bound, &b).unwrap();
        // the Java evaluator's tuple is the schema's top-level fields in order
        let tuples: Vec<Vec<Option<Literal>>> = rows
            .iter()
            .map(|r| {
                let mut t = r.clone();
                t.push(None);
                t
            })
            .collect();
        for (r, t) in tuples.iter().enumerate() {
            let expected = sql_eval(&bound, t) == Some(true);
            assert_eq!(mask.value(r), expected, "{e} on row {r}: {t:?}");
            checked += 1;
        }
    }
    assert!(checked > 100_000, "{checked}");
}
