#![allow(clippy::unwrap_used)]

use super::*;
use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, BinaryArray, Date32Array, Decimal128Array, Int32Array, Int64Array,
    LargeBinaryArray, LargeStringArray, StringArray, Time64MicrosecondArray,
    TimestampMicrosecondArray, TimestampNanosecondArray,
};
use arrow_schema::{DataType, TimeUnit as ArrowTimeUnit};

use crate::spec::literal::Literal;
use crate::spec::{PrimitiveType, Transform};
use arrow_array::builder::FixedSizeBinaryBuilder;

const TS: [i64; 8] = [
    0,
    -1,
    1_510_871_468_000_000,
    -3_599_000_001,
    -86_400_000_000,
    -86_400_000_001,
    i64::MAX,
    i64::MIN,
];

fn fixed(width: i32, values: &[Option<&[u8]>]) -> ArrayRef {
    let mut b = FixedSizeBinaryBuilder::with_capacity(values.len(), width);
    for v in values {
        match v {
            Some(v) => b.append_value(v).unwrap(),
            None => b.append_null(),
        }
    }
    Arc::new(b.finish())
}

/// One array per source type, each with nulls and edge values.
fn arrays() -> Vec<(PrimitiveType, ArrayRef)> {
    use PrimitiveType as P;
    let ts = || {
        TS.iter()
            .map(|v| Some(*v))
            .chain([None])
            .collect::<Vec<_>>()
    };
    let strings = vec![
        Some("iceberg"),
        None,
        Some(""),
        Some("😀😁😂🤣"),
        Some("冰山表格"),
        Some("ab"),
        Some("e\u{301}xyz"),
    ];
    let bins: Vec<Option<&[u8]>> = vec![
        Some(&[0, 1, 2, 3]),
        None,
        Some(&[]),
        Some(&[1, 2, 3, 4, 5]),
        Some(&[0xff]),
    ];
    vec![
        (
            P::Int,
            Arc::new(Int32Array::from(vec![
                Some(34),
                None,
                Some(-1),
                Some(0),
                Some(i32::MIN),
                Some(i32::MAX),
                Some(-11),
            ])) as ArrayRef,
        ),
        (
            P::Long,
            Arc::new(Int64Array::from(vec![
                Some(34),
                None,
                Some(-1),
                Some(i64::MIN),
                Some(i64::MAX),
                Some(-11),
            ])),
        ),
        (
            P::Decimal {
                precision: 9,
                scale: 2,
            },
            Arc::new(
                Decimal128Array::from(vec![
                    Some(1420),
                    None,
                    Some(-1065),
                    Some(0),
                    Some(999_999_999),
                    Some(-999_999_999),
                ])
                .with_precision_and_scale(9, 2)
                .unwrap(),
            ),
        ),
        (
            P::Date,
            Arc::new(Date32Array::from(vec![
                Some(17486),
                None,
                Some(-1),
                Some(0),
                Some(-365),
                Some(-366),
                Some(i32::MIN),
                Some(i32::MAX),
            ])),
        ),
        (
            P::Time,
            Arc::new(Time64MicrosecondArray::from(vec![
                Some(81_068_000_000),
                None,
                Some(0),
                Some(86_399_999_999),
            ])),
        ),
        (
            P::Timestamp,
            Arc::new(TimestampMicrosecondArray::from(ts())),
        ),
        (
            P::Timestamptz,
            Arc::new(TimestampMicrosecondArray::from(ts()).with_timezone("UTC")),
        ),
        (
            P::TimestampNs,
            Arc::new(TimestampNanosecondArray::from(ts())),
        ),
        (
            P::TimestamptzNs,
            Arc::new(TimestampNanosecondArray::from(ts()).with_timezone("+00:00")),
        ),
        (P::String, Arc::new(StringArray::from(strings.clone()))),
        (P::String, Arc::new(LargeStringArray::from(strings))),
        (P::Binary, Arc::new(BinaryArray::from(bins.clone()))),
        (P::Binary, Arc::new(LargeBinaryArray::from(bins))),
        (
            P::Fixed(4),
            fixed(4, &[Some(&[0, 1, 2, 3]), None, Some(&[9, 9, 9, 9])]),
        ),
        (
            P::Uuid,
            fixed(
                16,
                &[
                    Some(&0xf79c3e09_677c_4bbd_a479_3f349cb785e7_u128.to_be_bytes()),
                    None,
                    Some(&[0; 16]),
                ],
            ),
        ),
    ]
}

fn transforms() -> Vec<Transform> {
    [
        "identity",
        "bucket[16]",
        "bucket[7]",
        "bucket[2147483647]",
        "truncate[1]",
        "truncate[3]",
        "truncate[10]",
        "year",
        "month",
        "day",
        "hour",
        "void",
    ]
    .iter()
    .map(|s| s.parse().unwrap())
    .collect()
}

#[test]
fn literals_to_array_inverts_array_value() {
    use PrimitiveType as P;
    let cases: Vec<(P, Vec<Option<Literal>>)> = vec![
        (P::Boolean, vec![Some(Literal::Boolean(true)), None]),
        (
            P::Int,
            vec![Some(Literal::Int(-3)), None, Some(Literal::Int(7))],
        ),
        (P::Long, vec![Some(Literal::Long(i64::MIN))]),
        (P::Float, vec![Some(Literal::Float(1.5))]),
        (P::Double, vec![None, Some(Literal::Double(-0.25))]),
        (
            P::Decimal {
                precision: 9,
                scale: 2,
            },
            vec![Some(Literal::Decimal(-1065)), None],
        ),
        (P::Date, vec![Some(Literal::Date(-1))]),
        (P::Time, vec![Some(Literal::Time(1))]),
        (P::Timestamp, vec![Some(Literal::Timestamp(-1))]),
        (P::Timestamptz, vec![Some(Literal::Timestamptz(5))]),
        (P::TimestampNs, vec![Some(Literal::TimestampNs(-5))]),
        (P::TimestamptzNs, vec![Some(Literal::TimestamptzNs(9))]),
        (P::String, vec![Some(Literal::String("冰".into())), None]),
        (
            P::Uuid,
            vec![Some(Literal::Uuid(0xf79c3e09_677c_4bbd_a479_3f349cb785e7))],
        ),
        (P::Fixed(3), vec![Some(Literal::Fixed(vec![1, 2, 3])), None]),
        (
            P::Binary,
            vec![
                Some(Literal::Binary(vec![])),
                Some(Literal::Binary(vec![0xff])),
            ],
        ),
    ];
    for (ty, values) in cases {
        let refs: Vec<Option<&Literal>> = values.iter().map(Option::as_ref).collect();
        let array = literals_to_array(&refs, &ty).unwrap();
        assert_eq!(array.data_type(), &iceberg_to_arrow_type(&ty).unwrap());
        for (i, v) in values.iter().enumerate() {
            assert_eq!(
                array_value(array.as_ref(), i, &ty).unwrap().as_ref(),
                v.as_ref(),
                "{ty}"
            );
        }
    }
    assert!(literals_to_array(&[Some(&Literal::Long(1))], &P::Int).is_err());
    assert!(literals_to_array(&[Some(&Literal::Fixed(vec![1]))], &P::Fixed(2)).is_err());
}

#[test]
fn arrow_type_mapping_round_trips() {
    use PrimitiveType as P;
    for t in [
        P::Int,
        P::Long,
        P::Decimal {
            precision: 9,
            scale: 2,
        },
        P::Date,
        P::Time,
        P::Timestamp,
        P::Timestamptz,
        P::TimestampNs,
        P::TimestamptzNs,
        P::String,
        P::Fixed(7),
        P::Binary,
    ] {
        let dt = iceberg_to_arrow_type(&t).unwrap();
        assert_eq!(arrow_type_to_iceberg(&dt).unwrap(), t, "{dt}");
    }
    assert_eq!(
        iceberg_to_arrow_type(&P::Uuid).unwrap(),
        DataType::FixedSizeBinary(16)
    );
    assert_eq!(
        transform_result_arrow_type(&Transform::Day, &DataType::Date32),
        DataType::Int32
    );
    assert_eq!(
        transform_result_arrow_type(&Transform::Truncate(2), &DataType::Utf8),
        DataType::Utf8
    );
}

#[test]
fn vectorized_equals_scalar() {
    let mut checked = 0;
    for (source, array) in arrays() {
        // also a slice, so that array offsets are exercised
        let sliced = array.slice(1, array.len() - 1);
        for array in [array, sliced] {
            for t in transforms() {
                if !t.accepts(&source) {
                    assert!(
                        transform_array(&t, &source, array.as_ref()).is_err(),
                        "{t} {source}"
                    );
                    continue;
                }
                let out = transform_array(&t, &source, array.as_ref()).unwrap();
                assert_eq!(out.len(), array.len());
                let result_type = t.result_type(&source.clone().into()).unwrap();
                let result_type = result_type.as_primitive().unwrap();
                match t {
                    Transform::Identity | Transform::Truncate(_) | Transform::Void => {
                        assert_eq!(out.data_type(), array.data_type(), "{t} {source}")
                    }
                    _ => assert_eq!(out.data_type(), &DataType::Int32, "{t} {source}"),
                }
                for i in 0..array.len() {
                    let input = array_value(array.as_ref(), i, &source).unwrap();
                    let expected = t.apply(input.as_ref(), &source).unwrap();
                    let got = array_value(out.as_ref(), i, result_type).unwrap();
                    assert_eq!(got, expected, "{t} {source} row {i} input {input:?}");
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 500, "{checked}");
}

#[test]
fn vectorized_spot_values() {
    let a = Int32Array::from(vec![Some(34), None]);
    let out = transform_array(&Transform::Bucket(16), &PrimitiveType::Int, &a).unwrap();
    let out = out.as_any().downcast_ref::<Int32Array>().unwrap();
    assert_eq!(out.value(0), 3);
    assert!(out.is_null(1));
    let s = StringArray::from(vec![Some("iceberg"), None, Some("😀😁😂🤣")]);
    let out = transform_array(&Transform::Truncate(3), &PrimitiveType::String, &s).unwrap();
    let out = out.as_any().downcast_ref::<StringArray>().unwrap();
    assert_eq!(out.value(0), "ice");
    assert!(out.is_null(1));
    assert_eq!(out.value(2), "😀😁😂");
    let ts = TimestampMicrosecondArray::from(vec![-1]).with_timezone("UTC");
    let out = transform_array(&Transform::Identity, &PrimitiveType::Timestamptz, &ts).unwrap();
    assert_eq!(out.data_type(), ts.data_type());
}

#[test]
fn mismatched_types_are_errors() {
    let a = Int64Array::from(vec![1]);
    let err = transform_array(&Transform::Bucket(4), &PrimitiveType::Int, &a).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { .. }));
    assert!(
        err.to_string().contains("Int64") && err.to_string().contains("int"),
        "{err}"
    );
    let ts = TimestampMicrosecondArray::from(vec![1]);
    assert!(transform_array(&Transform::Day, &PrimitiveType::Timestamptz, &ts).is_err());
    let d = Decimal128Array::from(vec![1])
        .with_precision_and_scale(9, 3)
        .unwrap();
    assert!(transform_array(
        &Transform::Identity,
        &PrimitiveType::Decimal {
            precision: 9,
            scale: 2
        },
        &d
    )
    .is_err());
    let f = arrow_array::Float64Array::from(vec![1.0]);
    assert!(transform_array(&Transform::Bucket(4), &PrimitiveType::Double, &f).is_err());
    assert!(matches!(
        transform_array(
            &Transform::Unknown("zorder".into()),
            &PrimitiveType::Long,
            &a
        ),
        Err(Error::Unsupported { .. })
    ));
    assert!(transform_array(
        &Transform::Hour,
        &PrimitiveType::Date,
        &Date32Array::from(vec![1])
    )
    .is_err());
}

#[test]
fn default_arrow_mapping() {
    use PrimitiveType as P;
    for (_, a) in arrays() {
        let t = arrow_type_to_iceberg(a.data_type()).unwrap();
        assert!(arrow_type_matches(&t, a.data_type()));
    }
    assert_eq!(
        arrow_type_to_iceberg(&DataType::FixedSizeBinary(16)).unwrap(),
        P::Fixed(16)
    );
    assert_eq!(
        arrow_type_to_iceberg(&DataType::Timestamp(
            ArrowTimeUnit::Nanosecond,
            Some("UTC".into())
        ))
        .unwrap(),
        P::TimestamptzNs
    );
    assert_eq!(
        arrow_type_to_iceberg(&DataType::Decimal128(38, 10)).unwrap(),
        P::Decimal {
            precision: 38,
            scale: 10
        }
    );
    assert!(arrow_type_to_iceberg(&DataType::Decimal128(10, -2)).is_err());
    assert_eq!(arrow_type_to_iceberg(&DataType::Float32).unwrap(), P::Float);
    assert_eq!(
        arrow_type_to_iceberg(&DataType::Boolean).unwrap(),
        P::Boolean
    );
    assert!(arrow_type_to_iceberg(&DataType::UInt64).is_err());
    assert!(arrow_type_to_iceberg(&DataType::Int8).is_err());
    assert!(arrow_type_to_iceberg(&DataType::Timestamp(ArrowTimeUnit::Millisecond, None)).is_err());
}
