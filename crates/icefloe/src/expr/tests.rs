#![allow(clippy::unwrap_used, clippy::panic)]

use super::*;
use crate::spec::types::{NestedField, StructType};
use crate::spec::{Literal, PrimitiveType as P, Schema, Type};
use std::sync::Arc;

fn schema() -> Schema {
    let location = StructType::new(vec![
        NestedField::required(10, "lat", P::Double.into()),
        NestedField::optional(11, "lon", P::Double.into()),
    ]);
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", P::Long.into()),
            NestedField::optional(2, "small", P::Int.into()),
            NestedField::optional(3, "Name", P::String.into()),
            NestedField::optional(
                4,
                "price",
                P::Decimal {
                    precision: 9,
                    scale: 2,
                }
                .into(),
            ),
            NestedField::optional(5, "ts", P::Timestamp.into()),
            NestedField::optional(6, "tstz", P::Timestamptz.into()),
            NestedField::optional(7, "d", P::Date.into()),
            NestedField::optional(8, "f", P::Float.into()),
            NestedField::optional(9, "location", Type::Struct(Arc::new(location))),
        ],
        vec![],
    )
    .unwrap()
}

fn bind(e: Expression) -> BoundExpression {
    e.bind(&schema(), true).unwrap()
}

fn lit(b: &BoundExpression) -> (Operation, i32, Literal) {
    match b {
        BoundExpression::Predicate(BoundPredicate::Literal { op, term, literal }) => {
            (*op, term.field_id, literal.clone())
        }
        other => panic!("not a literal predicate: {other:?}"),
    }
}

#[test]
fn binds_names_and_converts_values() {
    let b = bind(Expression::compare(Operation::Lt, "id", 5_i32));
    assert_eq!(lit(&b), (Operation::Lt, 1, Literal::Long(5)));
    let b = bind(Expression::compare(
        Operation::GtEq,
        "ts",
        "2024-01-01T00:00:00",
    ));
    assert_eq!(lit(&b).2, Literal::Timestamp(1_704_067_200_000_000));
    // timestamptz takes any offset and converts to UTC
    let b = bind(Expression::compare(
        Operation::Eq,
        "tstz",
        "2024-01-01T01:00:00+01:00",
    ));
    assert_eq!(lit(&b).2, Literal::Timestamptz(1_704_067_200_000_000));
    let b = bind(Expression::compare(Operation::Eq, "d", "1970-01-02"));
    assert_eq!(lit(&b).2, Literal::Date(1));
    let b = bind(Expression::compare(Operation::Eq, "location.lat", 1.5_f64));
    match &b {
        BoundExpression::Predicate(p) => assert_eq!(p.term().position, vec![8, 0]),
        _ => panic!(),
    }
    // case-insensitive binding
    let b = Expression::compare(Operation::Eq, "name", "x")
        .bind(&schema(), false)
        .unwrap();
    assert_eq!(lit(&b).1, 3);
    assert!(Expression::compare(Operation::Eq, "name", "x")
        .bind(&schema(), true)
        .is_err());
}

#[test]
fn out_of_range_values_decide_the_predicate() {
    let big = i64::from(i32::MAX) + 1;
    assert_eq!(
        bind(Expression::compare(Operation::Lt, "small", big)),
        BoundExpression::True
    );
    assert_eq!(
        bind(Expression::compare(Operation::Eq, "small", big)),
        BoundExpression::False
    );
    assert_eq!(
        bind(Expression::compare(Operation::Gt, "small", -big - 1)),
        BoundExpression::True
    );
    assert_eq!(
        bind(Expression::compare(Operation::Gt, "f", 1e300_f64)),
        BoundExpression::False
    );
    // in: values out of range are dropped
    let b = bind(Expression::is_in(
        "small",
        vec![Datum::Long(big), Datum::Long(3)],
    ));
    assert_eq!(lit(&b), (Operation::Eq, 2, Literal::Int(3)));
    assert_eq!(
        bind(Expression::is_in("small", vec![Datum::Long(big)])),
        BoundExpression::False
    );
    assert_eq!(
        bind(Expression::not_in("small", vec![Datum::Long(big)])),
        BoundExpression::True
    );
}

#[test]
fn decimals_rescale_and_compare_between_values() {
    let b = bind(Expression::compare(
        Operation::Eq,
        "price",
        Datum::decimal("1.5").unwrap(),
    ));
    assert_eq!(lit(&b).2, Literal::Decimal(150));
    let b = bind(Expression::compare(Operation::Lt, "price", "1.234"));
    assert_eq!(lit(&b), (Operation::Lt, 4, Literal::Decimal(124)));
    let b = bind(Expression::compare(Operation::LtEq, "price", "-1.234"));
    assert_eq!(lit(&b), (Operation::LtEq, 4, Literal::Decimal(-124)));
    assert_eq!(
        bind(Expression::compare(Operation::Eq, "price", "1.234")),
        BoundExpression::False
    );
    // doubles round half up through their shortest text, as Java's BigDecimal.valueOf
    let b = bind(Expression::compare(Operation::Eq, "price", 1.005_f64));
    assert_eq!(lit(&b).2, Literal::Decimal(101));
    let b = bind(Expression::compare(Operation::Eq, "price", 7_i32));
    assert_eq!(lit(&b).2, Literal::Decimal(700));
}

#[test]
fn unary_rules_follow_java() {
    assert_eq!(
        bind(Expression::unary(Operation::IsNull, "id")),
        BoundExpression::False
    );
    assert_eq!(
        bind(Expression::unary(Operation::NotNull, "id")),
        BoundExpression::True
    );
    assert!(Expression::unary(Operation::IsNan, "id")
        .bind(&schema(), true)
        .is_err());
    assert!(matches!(
        bind(Expression::unary(Operation::IsNan, "f")),
        BoundExpression::Predicate(BoundPredicate::Unary {
            op: Operation::IsNan,
            ..
        })
    ));
    assert!(Expression::compare(Operation::Eq, "f", f64::NAN)
        .bind(&schema(), true)
        .is_err());
    assert!(Expression::compare(Operation::StartsWith, "id", "a")
        .bind(&schema(), true)
        .is_err());
    assert!(Expression::compare(Operation::Eq, "id", "abc")
        .bind(&schema(), true)
        .is_err());
    assert!(Expression::compare(Operation::Eq, "location", 1_i32)
        .bind(&schema(), true)
        .is_err());
    assert!(Expression::compare(Operation::Eq, "nope", 1_i32)
        .bind(&schema(), true)
        .is_err());
}

#[test]
fn not_is_pushed_into_predicates() {
    let e = Expression::not(Expression::and(
        Expression::compare(Operation::Lt, "id", 5_i64),
        Expression::not(Expression::unary(Operation::IsNull, "Name")),
    ));
    let r = e.clone().rewrite_not();
    assert_eq!(r.to_string(), "(id >= 5 or Name is null)");
    let b = bind(e);
    assert_eq!(b.to_string(), "(id >= 5 or Name is null)");
    assert_eq!(b.field_ids(), vec![1, 3]);
    // constants simplify
    assert_eq!(
        Expression::and(Expression::True, Expression::False),
        Expression::False
    );
    assert_eq!(
        Expression::or(Expression::False, Expression::unary(Operation::IsNull, "x")).to_string(),
        "x is null"
    );
}

#[test]
fn json_form_round_trips_and_matches_java_names() {
    let e = Expression::and(
        Expression::not(Expression::compare(Operation::LtEq, "id", 5_i64)),
        Expression::or(
            Expression::is_in("Name", vec!["a".into(), "b".into()]),
            Expression::unary(Operation::IsNull, "price"),
        ),
    );
    let j = e.to_json();
    assert_eq!(
        j,
        serde_json::json!({"type": "and",
            "left": {"type": "not", "child": {"type": "lt-eq", "term": "id", "value": 5}},
            "right": {"type": "or",
                "left": {"type": "in", "term": "Name", "values": ["a", "b"]},
                "right": {"type": "is-null", "term": "price"}}})
    );
    assert_eq!(Expression::from_json(&j, None).unwrap(), e);
    assert_eq!(
        Expression::from_json(&serde_json::json!(true), None).unwrap(),
        Expression::True
    );
    // with a schema, values are read by the column type
    let j = serde_json::json!({"type": "eq", "term": "price", "value": "1.50"});
    let e = Expression::from_json(&j, Some(&schema())).unwrap();
    assert_eq!(lit(&bind(e)).2, Literal::Decimal(150));
    let j = serde_json::json!({"type": "gt", "term": {"type": "reference", "term": "ts"}, "value": "2024-01-01T00:00:00"});
    let e = Expression::from_json(&j, Some(&schema())).unwrap();
    assert_eq!(lit(&bind(e)).2, Literal::Timestamp(1_704_067_200_000_000));
    // bound expressions write their values in the column's JSON form
    let b = bind(Expression::compare(Operation::Gt, "d", "2024-01-31"));
    assert_eq!(
        b.to_json(),
        serde_json::json!({"type": "gt", "term": "d", "value": "2024-01-31"})
    );
    // errors name the path
    let err =
        Expression::from_json(&serde_json::json!({"type": "and", "left": true}), None).unwrap_err();
    assert!(err.to_string().contains("right"), "{err}");
    let err =
        Expression::from_json(&serde_json::json!({"type": "lt", "term": "x"}), None).unwrap_err();
    assert!(err.to_string().contains("value"), "{err}");
}

#[test]
fn required_fields_in_optional_structs_can_be_null() {
    // location is optional: its required child lat is null when location is
    let b = bind(Expression::unary(Operation::IsNull, "location.lat"));
    assert!(
        matches!(b, BoundExpression::Predicate(BoundPredicate::Unary { .. })),
        "{b:?}"
    );
    assert_eq!(
        bind(Expression::unary(Operation::IsNull, "id")),
        BoundExpression::False
    );
    // 0.0 and -0.0 are two values of an in-list
    let b = bind(Expression::is_in(
        "f",
        vec![Datum::Double(0.0), Datum::Double(-0.0)],
    ));
    match b {
        BoundExpression::Predicate(BoundPredicate::Set { literals, .. }) => {
            assert_eq!(literals.len(), 2)
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn schema_select_keeps_parents_of_nested_fields() {
    let s = schema();
    let sel = s
        .select(&["location.lon".to_string(), "id".to_string()], true)
        .unwrap();
    let names: Vec<_> = sel
        .field_names()
        .into_iter()
        .map(|(_, n)| n.to_string())
        .collect();
    assert_eq!(names, vec!["id", "location", "location.lon"]);
    assert!(s.select(&["nope".to_string()], true).is_err());
    let sel = s.select(&["NAME".to_string()], false).unwrap();
    assert_eq!(sel.fields().len(), 1);
}

#[test]
fn a_required_field_of_an_optional_struct_can_be_null() {
    let inner = StructType::new(vec![NestedField::required(3, "lat", P::Double.into())]);
    let outer = StructType::new(vec![NestedField::required(5, "lon", P::Double.into())]);
    let schema = Schema::new(
        0,
        vec![
            NestedField::optional(1, "loc", Type::Struct(Arc::new(inner))),
            NestedField::required(4, "pos", Type::Struct(Arc::new(outer))),
        ],
        vec![],
    )
    .unwrap();
    // as Java: the struct may be null, so its required field may be
    let b = Expression::unary(Operation::IsNull, "loc.lat")
        .bind(&schema, true)
        .unwrap();
    assert_eq!(b.to_string(), "loc.lat is null");
    assert_eq!(
        Expression::unary(Operation::IsNull, "pos.lon")
            .bind(&schema, true)
            .unwrap(),
        BoundExpression::False
    );
}

/// Java's Binder binds null checks on a struct (Spark pushes `st IS NULL` into Iceberg
/// scans); every other predicate on one is refused. A required struct's null checks fold.
#[test]
fn null_checks_bind_on_structs_and_nothing_else_does() {
    let b = bind(Expression::unary(Operation::IsNull, "location"));
    match &b {
        BoundExpression::Predicate(BoundPredicate::Unary { op, term }) => {
            assert_eq!(*op, Operation::IsNull);
            assert_eq!(term.field_id, 9);
            assert!(matches!(term.field_type, Type::Struct(_)));
            assert!(!term.required);
            assert!(term.primitive_type().is_err());
        }
        other => panic!("not a null check: {other:?}"),
    }
    // negated through NOT, and written back as JSON for the executor's residual
    let b = bind(Expression::not(Expression::unary(
        Operation::IsNull,
        "location",
    )));
    assert_eq!(
        b.to_json(),
        serde_json::json!({"type": "not-null", "term": "location"})
    );
    for e in [
        Expression::compare(Operation::Eq, "location", 1_i32),
        Expression::unary(Operation::IsNan, "location"),
        Expression::is_in("location", vec![Datum::Int(1), Datum::Int(2)]),
    ] {
        let err = e.bind(&schema(), true).unwrap_err().to_string();
        assert!(err.contains("location"), "{err}");
    }
    let required = Schema::new(
        0,
        vec![NestedField::required(
            1,
            "r",
            Type::Struct(Arc::new(StructType::new(vec![NestedField::optional(
                2,
                "x",
                P::Int.into(),
            )]))),
        )],
        vec![],
    )
    .unwrap();
    let is_null = Expression::unary(Operation::IsNull, "r");
    assert_eq!(
        is_null.bind(&required, true).unwrap(),
        BoundExpression::False
    );
    let not_null = Expression::unary(Operation::NotNull, "r");
    assert_eq!(
        not_null.bind(&required, true).unwrap(),
        BoundExpression::True
    );
}

/// A struct's nullness is not its children's: a struct may be null while its children
/// have no null counted (the writer counts leaf columns only), so the metrics of its
/// children never prune nor claim a struct's null check.
#[test]
fn struct_null_checks_are_not_decided_by_the_children_metrics() {
    use crate::manifest::{DataContentType, DataFile, FileFormat};
    let mut file = DataFile::new(
        DataContentType::Data,
        "f.parquet",
        FileFormat::Parquet,
        vec![],
        10,
        100,
    );
    file.value_counts = Some(vec![(10, 10), (11, 10)]);
    file.null_value_counts = Some(vec![(10, 0), (11, 0)]);
    for op in [Operation::IsNull, Operation::NotNull] {
        let bound = bind(Expression::unary(op, "location"));
        assert!(InclusiveMetricsEvaluator::new(bound.clone())
            .eval(&file)
            .unwrap());
        assert!(!StrictMetricsEvaluator::new(bound).eval(&file).unwrap());
    }
}
