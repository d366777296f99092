//! Tests of the tuple evaluator, mirroring apache/iceberg's `TestEvaluator` on a flat
//! struct (the nested-struct cases there need row accessors, which a partition tuple does
//! not have).
#![allow(clippy::unwrap_used, clippy::panic)]

use super::*;
use crate::expr::{Datum, Expression, Operation as O};
use crate::spec::types::{NestedField, StructType};
use crate::spec::{Literal, PrimitiveType as P};

fn struct_type() -> StructType {
    StructType::new(vec![
        NestedField::required(13, "x", P::Int.into()),
        NestedField::required(14, "y", P::Double.into()),
        NestedField::optional(15, "z", P::Int.into()),
        NestedField::optional(16, "s", P::String.into()),
        NestedField::optional(17, "f", P::Float.into()),
        NestedField::optional(18, "u", P::Uuid.into()),
        NestedField::optional(19, "b", P::Binary.into()),
    ])
}

fn row(x: i32, y: f64, z: Option<i32>) -> Vec<Option<Literal>> {
    vec![
        Some(Literal::Int(x)),
        Some(Literal::Double(y)),
        z.map(Literal::Int),
        None,
        None,
        None,
        None,
    ]
}

fn with_s(s: Option<&str>) -> Vec<Option<Literal>> {
    let mut r = row(1, 2.0, None);
    r[3] = s.map(|s| Literal::String(s.into()));
    r
}

fn ev(e: Expression, tuple: &[Option<Literal>]) -> bool {
    let bound = e.bind_struct(&struct_type(), true).unwrap();
    evaluate_tuple(&bound, tuple).unwrap()
}

fn c(op: O, col: &str, v: impl Into<Datum>) -> Expression {
    Expression::compare(op, col, v)
}

// testLessThan / testLessThanOrEqual / testGreaterThan / testGreaterThanOrEqual /
// testEqual / testNotEqual
#[test]
fn comparisons() {
    let cases = [
        (O::Lt, 7, false),
        (O::Lt, 6, true),
        (O::LtEq, 7, true),
        (O::LtEq, 6, true),
        (O::LtEq, 8, false),
        (O::Gt, 7, false),
        (O::Gt, 6, false),
        (O::Gt, 8, true),
        (O::GtEq, 7, true),
        (O::GtEq, 6, false),
        (O::GtEq, 8, true),
        (O::Eq, 7, true),
        (O::Eq, 6, false),
        (O::NotEq, 7, false),
        (O::NotEq, 6, true),
    ];
    for (op, x, expected) in cases {
        assert_eq!(
            ev(c(op, "x", 7), &row(x, 8.0, None)),
            expected,
            "{x} {} 7",
            op.symbol()
        );
    }
}

// Java's comparators put null first: `null < 5` is true (not SQL's unknown)
#[test]
fn nulls_compare_first() {
    let r = row(1, 2.0, None);
    assert!(ev(c(O::Lt, "z", 5), &r));
    assert!(ev(c(O::LtEq, "z", 5), &r));
    assert!(!ev(c(O::Gt, "z", 5), &r));
    assert!(!ev(c(O::GtEq, "z", 5), &r));
    assert!(!ev(c(O::Eq, "z", 5), &r));
    assert!(ev(c(O::NotEq, "z", 5), &r));
    assert!(!ev(
        Expression::is_in("z", vec![Datum::Int(5), Datum::Int(6)]),
        &r
    ));
    assert!(ev(
        Expression::not_in("z", vec![Datum::Int(5), Datum::Int(6)]),
        &r
    ));
    assert!(!ev(u(O::IsNan, "f"), &r));
    assert!(ev(u(O::NotNan, "f"), &r));
}

fn u(op: O, col: &str) -> Expression {
    Expression::unary(op, col)
}

// testStartsWith / testNotStartsWith
#[test]
fn starts_with() {
    for (s, expected) in [
        (Some("abc"), true),
        (Some("xabc"), false),
        (Some("Abc"), false),
        (Some("a"), false),
        (Some("abcd"), true),
        (None, false),
    ] {
        assert_eq!(
            ev(c(O::StartsWith, "s", "abc"), &with_s(s)),
            expected,
            "{s:?}"
        );
        assert_eq!(
            ev(c(O::NotStartsWith, "s", "abc"), &with_s(s)),
            !expected,
            "{s:?}"
        );
    }
    assert!(ev(c(O::StartsWith, "s", "房东"), &with_s(Some("房东整租"))));
    assert!(!ev(c(O::StartsWith, "s", "😀"), &with_s(Some("😁"))));
}

// testAlwaysTrue / testAlwaysFalse / testIsNull / testNotNull / testIsNan / testNotNaN
#[test]
fn constants_nulls_and_nans() {
    assert!(evaluate_tuple(&BoundExpression::True, &[]).unwrap());
    assert!(!evaluate_tuple(&BoundExpression::False, &[]).unwrap());
    assert!(ev(u(O::IsNull, "z"), &row(1, 2.0, None)));
    assert!(!ev(u(O::IsNull, "z"), &row(1, 2.0, Some(3))));
    assert!(!ev(u(O::NotNull, "z"), &row(1, 2.0, None)));
    assert!(ev(u(O::NotNull, "z"), &row(1, 2.0, Some(3))));
    assert!(ev(u(O::IsNan, "y"), &row(1, f64::NAN, Some(3))));
    assert!(!ev(u(O::IsNan, "y"), &row(1, 2.0, Some(3))));
    assert!(!ev(u(O::NotNan, "y"), &row(1, f64::NAN, Some(3))));
    assert!(ev(u(O::NotNan, "y"), &row(1, 2.0, Some(3))));
    let mut r = row(1, 2.0, None);
    r[4] = Some(Literal::Float(f32::NAN));
    assert!(ev(u(O::IsNan, "f"), &r));
}

// testAnd / testOr / testNot
#[test]
fn logic() {
    let e = Expression::and(c(O::Eq, "x", 7), u(O::NotNull, "z"));
    assert!(ev(e.clone(), &row(7, 0.0, Some(0))));
    assert!(!ev(e.clone(), &row(8, 0.0, Some(0))));
    assert!(!ev(e.clone(), &row(7, 0.0, None)));
    let e = Expression::or(c(O::Eq, "x", 7), u(O::NotNull, "z"));
    assert!(ev(e.clone(), &row(7, 0.0, None)));
    assert!(ev(e.clone(), &row(8, 0.0, Some(0))));
    assert!(!ev(e, &row(8, 0.0, None)));
    let e = Expression::not(c(O::Eq, "x", 7));
    assert!(!ev(e.clone(), &row(7, 0.0, None)));
    assert!(ev(e, &row(8, 0.0, None)));
}

// testIn / testNotIn
#[test]
fn in_and_not_in() {
    let ints = |vs: &[i32]| vs.iter().map(|v| Datum::Int(*v)).collect::<Vec<_>>();
    let e = Expression::is_in("x", ints(&[7, 8, 9]));
    assert!(ev(e.clone(), &row(7, 0.0, None)));
    assert!(ev(e.clone(), &row(9, 0.0, None)));
    assert!(!ev(e, &row(6, 0.0, None)));
    let e = Expression::not_in("x", ints(&[7, 8, 9]));
    assert!(!ev(e.clone(), &row(8, 0.0, None)));
    assert!(ev(e, &row(6, 0.0, None)));
    let many: Vec<i32> = (0..1000).map(|v| v * 3).collect();
    let e = Expression::is_in("x", ints(&many));
    assert!(ev(e.clone(), &row(2997, 0.0, None)));
    assert!(!ev(e, &row(2998, 0.0, None)));
    let e = Expression::is_in("s", vec![Datum::from("abc"), Datum::from("def")]);
    assert!(ev(e.clone(), &with_s(Some("def"))));
    assert!(!ev(e, &with_s(Some("de"))));
    // doubles: 0.0 and -0.0 are different values in Java's sets and comparisons
    let e = Expression::is_in("y", vec![Datum::Double(0.0), Datum::Double(1.0)]);
    assert!(ev(e.clone(), &row(0, 0.0, None)));
    assert!(!ev(e.clone(), &row(0, -0.0, None)));
    assert!(!ev(e, &row(0, f64::NAN, None)));
    assert!(!ev(c(O::Eq, "y", 0.0), &row(0, -0.0, None)));
    assert!(ev(c(O::Lt, "y", 0.0), &row(0, -0.0, None)));
}

/// Java's `Float.compare`/`Double.compare`: NaN (of either sign) above every number.
#[test]
fn nan_values_compare_as_java() {
    let neg_nan = -f64::NAN;
    assert!(neg_nan.is_sign_negative());
    for v in [f64::NAN, neg_nan] {
        let r = row(0, v, None);
        assert!(!ev(c(O::Lt, "y", 1.0), &r), "{v:?}");
        assert!(ev(c(O::Gt, "y", f64::INFINITY), &r), "{v:?}");
        assert!(!ev(c(O::Eq, "y", 1.0), &r));
        assert!(ev(c(O::NotEq, "y", 1.0), &r));
    }
    assert_eq!(
        java_compare(&Literal::Double(neg_nan), &Literal::Double(f64::NAN)).unwrap(),
        std::cmp::Ordering::Equal
    );
}

/// Java's `UUID.compareTo` compares signed halves: 8000... is the smallest UUID.
#[test]
fn uuids_compare_as_java() {
    let low = "80000000-0000-0000-0000-000000000000";
    let high = "7fffffff-ffff-ffff-ffff-ffffffffffff";
    let mut r = row(0, 0.0, None);
    r[5] = Some(Literal::Uuid(uuid::Uuid::parse_str(low).unwrap().as_u128()));
    assert!(ev(c(O::Lt, "u", high), &r));
    assert!(!ev(c(O::Gt, "u", high), &r));
    assert!(ev(c(O::Eq, "u", low), &r));
    assert!(ev(
        Expression::is_in("u", vec![Datum::from(low), Datum::from(high)]),
        &r
    ));
    // binary values are unsigned
    let mut r = row(0, 0.0, None);
    r[6] = Some(Literal::Binary(vec![0x80]));
    assert!(ev(c(O::Gt, "b", Datum::Binary(vec![0x7f])), &r));
}

#[test]
fn errors() {
    let bound = c(O::Eq, "s", "a")
        .bind_struct(&struct_type(), true)
        .unwrap();
    // position out of the tuple
    assert!(evaluate_tuple(&bound, &[None]).is_err());
    // a value of another kind than the literal
    let mut r = with_s(None);
    r[3] = Some(Literal::Int(1));
    assert!(evaluate_tuple(&bound, &r).is_err());
    let bound = c(O::StartsWith, "s", "a")
        .bind_struct(&struct_type(), true)
        .unwrap();
    assert!(evaluate_tuple(&bound, &r).is_err());
    // but a null is fine
    assert!(!evaluate_tuple(&bound, &with_s(None)).unwrap());
}
