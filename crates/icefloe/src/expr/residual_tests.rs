//! Residual tests, mirroring the Java reference's `TestResiduals` (and
//! `TestTruncatesResiduals`), plus the nulls-first comparisons Java's evaluator makes.

#![allow(clippy::unwrap_used, clippy::panic)]

use super::*;
use crate::expr::{Datum, Expression, Operation as O};
use crate::spec::partition::{PartitionField, PartitionSpec};
use crate::spec::types::NestedField;
use crate::spec::{Literal, PrimitiveType as P, Schema};

fn schema() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::optional(50, "dateint", P::Int.into()),
            NestedField::optional(51, "hour", P::Int.into()),
            NestedField::optional(52, "ts", P::Timestamp.into()),
            NestedField::optional(53, "double", P::Double.into()),
            NestedField::optional(54, "float", P::Float.into()),
            NestedField::optional(55, "s", P::String.into()),
            NestedField::optional(56, "u", P::Uuid.into()),
        ],
        vec![],
    )
    .unwrap()
}

fn spec(fields: &[(i32, &str, &str)]) -> PartitionSpec {
    PartitionSpec::new(
        0,
        fields
            .iter()
            .enumerate()
            .map(|(i, (source, name, t))| {
                PartitionField::new(*source, 1000 + i as i32, *name, t.parse().unwrap())
            })
            .collect(),
    )
}

fn evaluator(spec: &PartitionSpec, e: Expression, case_sensitive: bool) -> ResidualEvaluator {
    let bound = e.bind(&schema(), case_sensitive).unwrap();
    ResidualEvaluator::new(spec, &schema(), &bound, case_sensitive).unwrap()
}

fn residual(ev: &ResidualEvaluator, partition: Vec<Option<Literal>>) -> String {
    ev.residual_for(&partition).unwrap().to_string()
}

fn lt(col: &str, v: impl Into<Datum>) -> Expression {
    Expression::compare(O::Lt, col, v)
}
fn gt(col: &str, v: impl Into<Datum>) -> Expression {
    Expression::compare(O::Gt, col, v)
}
fn eq(col: &str, v: impl Into<Datum>) -> Expression {
    Expression::compare(O::Eq, col, v)
}
fn and(l: Expression, r: Expression) -> Expression {
    Expression::And(Box::new(l), Box::new(r))
}
fn or(l: Expression, r: Expression) -> Expression {
    Expression::Or(Box::new(l), Box::new(r))
}

fn int(v: i32) -> Option<Literal> {
    Some(Literal::Int(v))
}

// TestResiduals.testIdentityTransformResiduals and testCaseInsensitiveIdentityTransformResiduals
#[test]
fn identity_transform_residuals() {
    let s = spec(&[(50, "dateint", "identity")]);
    for case_sensitive in [true, false] {
        let (d, h) = if case_sensitive {
            ("dateint", "hour")
        } else {
            ("DateInt", "HOUR")
        };
        let e = or(
            or(
                and(lt(d, 20170815), gt("dateint", 20170801)),
                and(eq(d, 20170815), lt(h, 12)),
            ),
            and(eq(d, 20170801), gt(h, 11)),
        );
        let ev = evaluator(&s, e, case_sensitive);
        assert_eq!(residual(&ev, vec![int(20170815)]), format!("{h} < 12"));
        assert_eq!(residual(&ev, vec![int(20170801)]), format!("{h} > 11"));
        assert_eq!(residual(&ev, vec![int(20170812)]), "true");
        assert_eq!(residual(&ev, vec![int(20170817)]), "false");
    }
}

// TestResiduals.testUnpartitionedResiduals
#[test]
fn unpartitioned_residuals() {
    let exprs = [
        Expression::True,
        Expression::False,
        lt("dateint", 5),
        Expression::unary(O::NotNull, "hour"),
        Expression::is_in("dateint", vec![Datum::Int(1), Datum::Int(2), Datum::Int(3)]),
        Expression::unary(O::IsNan, "double"),
        Expression::compare(O::NotStartsWith, "s", "abcd"),
    ];
    for e in exprs {
        let bound = e.bind(&schema(), true).unwrap();
        let ev = ResidualEvaluator::new(&PartitionSpec::unpartitioned(), &schema(), &bound, true)
            .unwrap();
        assert_eq!(ev.residual_for(&[]).unwrap(), bound);
    }
}

// TestResiduals.testIn / testNotIn
#[test]
fn in_and_not_in() {
    let s = spec(&[(50, "dateint", "identity")]);
    let vals = || {
        vec![
            Datum::Int(20170815),
            Datum::Int(20170816),
            Datum::Int(20170817),
        ]
    };
    let ev = evaluator(&s, Expression::is_in("dateint", vals()), true);
    assert_eq!(residual(&ev, vec![int(20170815)]), "true");
    assert_eq!(residual(&ev, vec![int(20180815)]), "false");
    let ev = evaluator(&s, Expression::not_in("dateint", vals()), true);
    assert_eq!(residual(&ev, vec![int(20180815)]), "true");
    assert_eq!(residual(&ev, vec![int(20170815)]), "false");
}

// TestResiduals.testInTimestamp / testNotInTimestamp: day(ts) cannot decide `in` on a day
// that holds one of the values
#[test]
fn in_and_not_in_timestamp() {
    let s = spec(&[(52, "ts_day", "day")]);
    let vals = || {
        vec![
            Datum::String("2019-12-01T00:00:00".into()),
            Datum::String("2019-12-02T00:00:00".into()),
        ]
    };
    let day = crate::spec::literal::days_from_civil(2019, 12, 1) as i32;
    let e = Expression::is_in("ts", vals());
    let bound = e.bind(&schema(), true).unwrap();
    let ev = ResidualEvaluator::new(&s, &schema(), &bound, true).unwrap();
    assert_eq!(ev.residual_for(&[int(day)]).unwrap(), bound);
    assert_eq!(residual(&ev, vec![int(day + 3)]), "false");
    let e = Expression::not_in("ts", vals());
    let bound = e.bind(&schema(), true).unwrap();
    let ev = ResidualEvaluator::new(&s, &schema(), &bound, true).unwrap();
    assert_eq!(ev.residual_for(&[int(day)]).unwrap(), bound);
    assert_eq!(residual(&ev, vec![int(day + 3)]), "true");
    // a day value given as a date is the same number
    assert_eq!(
        ev.residual_for(&[Some(Literal::Date(day + 3))]).unwrap(),
        BoundExpression::True
    );
}

// TestResiduals.testIsNaN / testNotNaN
#[test]
fn is_nan_and_not_nan() {
    for (col, nan, num) in [
        ("double", Literal::Double(f64::NAN), Literal::Double(2.0)),
        ("float", Literal::Float(f32::NAN), Literal::Float(3.0)),
    ] {
        let s = spec(&[(if col == "double" { 53 } else { 54 }, col, "identity")]);
        let ev = evaluator(&s, Expression::unary(O::IsNan, col), true);
        assert_eq!(residual(&ev, vec![Some(nan.clone())]), "true");
        assert_eq!(residual(&ev, vec![Some(num.clone())]), "false");
        let ev = evaluator(&s, Expression::unary(O::NotNan, col), true);
        assert_eq!(residual(&ev, vec![Some(nan)]), "false");
        assert_eq!(residual(&ev, vec![Some(num)]), "true");
    }
}

// TestTruncatesResiduals: truncate decides only away from the boundary's partition
#[test]
fn truncate_residuals() {
    let s = spec(&[(50, "dateint_trunc", "truncate[10]")]);
    let ev = evaluator(&s, lt("dateint", 100), true);
    assert_eq!(residual(&ev, vec![int(90)]), "true");
    assert_eq!(residual(&ev, vec![int(100)]), "false");
    let ev = evaluator(&s, lt("dateint", 105), true);
    assert_eq!(residual(&ev, vec![int(100)]), "dateint < 105");
    let s = spec(&[(55, "s_trunc", "truncate[2]")]);
    let ev = evaluator(&s, Expression::compare(O::StartsWith, "s", "bcd"), true);
    assert_eq!(
        residual(&ev, vec![Some(Literal::String("ab".into()))]),
        "false"
    );
    assert_eq!(
        residual(&ev, vec![Some(Literal::String("bc".into()))]),
        "s starts with 'bcd'"
    );
}

// Java compares nulls first: on a null partition value `<` and `!=` hold, `>`, `=` and `in`
// do not, `not in` does; null starts with nothing
#[test]
fn null_partition_values_compare_first() {
    let s = spec(&[(50, "dateint", "identity"), (55, "s", "identity")]);
    let null_row = vec![None, None];
    let cases: Vec<(Expression, &str)> = vec![
        (lt("dateint", 5), "true"),
        (Expression::compare(O::LtEq, "dateint", 5), "true"),
        (gt("dateint", 5), "false"),
        (Expression::compare(O::GtEq, "dateint", 5), "false"),
        (eq("dateint", 5), "false"),
        (Expression::compare(O::NotEq, "dateint", 5), "true"),
        (
            Expression::is_in("dateint", vec![Datum::Int(1), Datum::Int(2)]),
            "false",
        ),
        (
            Expression::not_in("dateint", vec![Datum::Int(1), Datum::Int(2)]),
            "true",
        ),
        (Expression::unary(O::IsNull, "dateint"), "true"),
        (Expression::unary(O::NotNull, "dateint"), "false"),
        (Expression::compare(O::StartsWith, "s", "a"), "false"),
        (Expression::compare(O::NotStartsWith, "s", "a"), "true"),
    ];
    for (e, want) in cases {
        let text = e.to_string();
        let ev = evaluator(&s, e, true);
        assert_eq!(residual(&ev, null_row.clone()), want, "{text}");
    }
    // through a transform too: truncate's strict `<` holds on null
    let s = spec(&[(50, "dateint_trunc", "truncate[10]")]);
    assert_eq!(
        residual(&evaluator(&s, lt("dateint", 105), true), vec![None]),
        "true"
    );
}

// Java orders floats with Float.compare (-0.0 < 0.0) and UUIDs as two signed longs
// (java.util.UUID.compareTo)
#[test]
fn java_orderings() {
    let s = spec(&[(54, "float", "identity"), (56, "u", "identity")]);
    let ev = evaluator(&s, eq("float", 0.0_f32), true);
    assert_eq!(
        residual(&ev, vec![Some(Literal::Float(-0.0)), None]),
        "false"
    );
    let ev = evaluator(&s, lt("float", 0.0_f32), true);
    assert_eq!(
        residual(&ev, vec![Some(Literal::Float(-0.0)), None]),
        "true"
    );
    // -0.0 and 0.0 are two values of an `in` list (binding keeps both, as Java's set does)
    let zeros = vec![Datum::Float(-0.0), Datum::Float(0.0), Datum::Float(1.0)];
    let ev = evaluator(&s, Expression::is_in("float", zeros), true);
    assert_eq!(residual(&ev, vec![Some(Literal::Float(0.0)), None]), "true");
    assert_eq!(
        residual(&ev, vec![Some(Literal::Float(-0.0)), None]),
        "true"
    );
    assert_eq!(
        residual(&ev, vec![Some(Literal::Float(2.0)), None]),
        "false"
    );
    let high = "80000000-0000-0000-0000-000000000000";
    let low = "00000000-0000-0000-0000-000000000001";
    let ev = evaluator(&s, lt("u", low), true);
    // 0x8000... is a negative most significant long: below 0x0000...01 in Java 17
    let u = uuid::Uuid::parse_str(high).unwrap().as_u128();
    assert_eq!(residual(&ev, vec![None, Some(Literal::Uuid(u))]), "true");
    assert_eq!(
        java_compare(&Literal::Uuid(u), &Literal::Uuid(1)),
        Some(std::cmp::Ordering::Less)
    );
}

// Several fields on one column are tried in spec order, strict before inclusive for each
#[test]
fn several_fields_in_spec_order() {
    let s = spec(&[(50, "b", "bucket[16]"), (50, "t", "truncate[10]")]);
    let ev = evaluator(&s, eq("dateint", 34), true);
    // bucket(34) = 3 (Appendix B): a different bucket decides false whatever the truncate
    assert_eq!(residual(&ev, vec![int(4), int(30)]), "false");
    assert_eq!(residual(&ev, vec![int(3), int(40)]), "false");
    assert_eq!(residual(&ev, vec![int(3), int(30)]), "dateint = 34");
    let ev = evaluator(&s, Expression::compare(O::NotEq, "dateint", 34), true);
    // strict bucket `!= 3` holds first
    assert_eq!(residual(&ev, vec![int(4), int(30)]), "true");
    assert_eq!(residual(&ev, vec![int(3), int(40)]), "true");
    assert_eq!(residual(&ev, vec![int(3), int(30)]), "dateint != 34");
}

#[test]
fn bad_partition_tuples_are_errors() {
    let s = spec(&[(50, "dateint", "identity")]);
    let ev = evaluator(&s, lt("dateint", 5), true);
    assert!(ev.residual_for(&[]).is_err());
    assert!(ev
        .residual_for(&[Some(Literal::String("x".into()))])
        .is_err());
}
