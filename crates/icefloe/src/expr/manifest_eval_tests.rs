//! Tests of the manifest evaluator, mirroring apache/iceberg's
//! `TestInclusiveManifestEvaluator` (fixtures of `BaseInclusiveManifestEvaluator`: an
//! identity partition per column, so the row filter is also the partition filter).
#![allow(clippy::unwrap_used, clippy::panic)]

use super::*;
use crate::expr::{Datum, Expression, Operation as O};
use crate::manifest::{FieldSummary, ManifestContent, ManifestFile};
use crate::spec::types::{NestedField, StructType};
use crate::spec::{Literal, PrimitiveType as P};

const INT_MIN: i32 = 30;
const INT_MAX: i32 = 79;

/// The partition type of the Java test's spec: identity of every column (partition fields
/// are optional).
fn partition_type() -> StructType {
    let fields = [
        ("id", P::Int),
        ("all_nulls_missing_nan", P::String),
        ("some_nulls", P::String),
        ("no_nulls", P::String),
        ("float", P::Float),
        ("all_nulls_double", P::Double),
        ("all_nulls_no_nans", P::Float),
        ("all_nans", P::Double),
        ("both_nan_and_null", P::Float),
        ("no_nan_or_null", P::Double),
        ("all_nulls_missing_nan_float", P::Float),
        ("all_same_value_or_null", P::String),
        ("no_nulls_same_value_a", P::String),
    ];
    StructType::new(
        fields
            .into_iter()
            .enumerate()
            .map(|(i, (name, ty))| NestedField::optional(1000 + i as i32, name, ty.into()))
            .collect(),
    )
}

fn b(l: Literal, ty: P) -> Option<Vec<u8>> {
    Some(l.to_bytes(&ty).unwrap())
}

fn summary(
    contains_null: bool,
    contains_nan: Option<bool>,
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
) -> FieldSummary {
    FieldSummary {
        contains_null,
        contains_nan,
        lower_bound: lower,
        upper_bound: upper,
    }
}

fn manifest(partitions: Option<Vec<FieldSummary>>) -> ManifestFile {
    ManifestFile {
        manifest_path: "manifest-list.avro".into(),
        manifest_length: 1024,
        partition_spec_id: 0,
        content: ManifestContent::Data,
        sequence_number: 1,
        min_sequence_number: 1,
        added_snapshot_id: 1,
        added_files_count: Some(5),
        existing_files_count: Some(10),
        deleted_files_count: Some(0),
        added_rows_count: None,
        existing_rows_count: None,
        deleted_rows_count: None,
        partitions,
        key_metadata: None,
        first_row_id: None,
    }
}

fn file() -> ManifestFile {
    let s = |v: &str| b(Literal::String(v.into()), P::String);
    let f = |v: f32| b(Literal::Float(v), P::Float);
    manifest(Some(vec![
        summary(
            false,
            None,
            b(Literal::Int(INT_MIN), P::Int),
            b(Literal::Int(INT_MAX), P::Int),
        ),
        summary(true, None, None, None),
        summary(true, None, s("a"), s("z")),
        summary(false, None, s("a"), s("z")),
        summary(false, None, f(0.0), f(20.0)),
        summary(true, None, None, None),
        summary(true, Some(false), None, None),
        summary(false, Some(true), None, None),
        summary(true, Some(true), None, None),
        summary(false, Some(false), f(0.0), f(20.0)),
        summary(true, None, None, None),
        summary(true, None, s("a"), s("a")),
        summary(false, None, s("a"), s("a")),
    ]))
}

fn read_with(e: Expression, m: &ManifestFile, case_sensitive: bool) -> bool {
    let bound = e.bind_struct(&partition_type(), case_sensitive).unwrap();
    ManifestEvaluator::new(bound).eval(m).unwrap()
}

fn read(e: Expression) -> bool {
    read_with(e, &file(), true)
}

fn c(op: O, col: &str, v: impl Into<Datum>) -> Expression {
    Expression::compare(op, col, v)
}

fn u(op: O, col: &str) -> Expression {
    Expression::unary(op, col)
}

// testAllNulls
#[test]
fn all_nulls() {
    assert!(!read(u(O::NotNull, "all_nulls_missing_nan")));
    assert!(
        read(u(O::NotNull, "all_nulls_missing_nan_float")),
        "NaN may hide"
    );
    assert!(read(u(O::NotNull, "some_nulls")));
    assert!(read(u(O::NotNull, "no_nulls")));
    assert!(!read(c(O::StartsWith, "all_nulls_missing_nan", "asad")));
    assert!(read(c(O::NotStartsWith, "all_nulls_missing_nan", "asad")));
    // a float field of nulls only, known to have no NaN, is all null
    assert!(!read(u(O::NotNull, "all_nulls_no_nans")));
}

// testNoNulls
#[test]
fn no_nulls() {
    assert!(read(u(O::IsNull, "all_nulls_missing_nan")));
    assert!(read(u(O::IsNull, "some_nulls")));
    assert!(!read(u(O::IsNull, "no_nulls")));
    assert!(read(u(O::IsNull, "both_nan_and_null")));
}

// testIsNaN / testNotNaN
#[test]
fn nans() {
    assert!(read(u(O::IsNan, "float")));
    assert!(read(u(O::IsNan, "all_nulls_double")));
    assert!(read(u(O::IsNan, "all_nulls_missing_nan_float")));
    assert!(!read(u(O::IsNan, "all_nulls_no_nans")));
    assert!(read(u(O::IsNan, "all_nans")));
    assert!(read(u(O::IsNan, "both_nan_and_null")));
    assert!(!read(u(O::IsNan, "no_nan_or_null")));

    assert!(read(u(O::NotNan, "float")));
    assert!(read(u(O::NotNan, "all_nulls_double")));
    assert!(read(u(O::NotNan, "all_nulls_no_nans")));
    assert!(!read(u(O::NotNan, "all_nans")));
    assert!(read(u(O::NotNan, "both_nan_and_null")));
    assert!(read(u(O::NotNan, "no_nan_or_null")));
    // comparisons on a field of NaNs only: no bounds; NaN is above every number (Spark's
    // order), so only `>` and `>=` can match (Java reads none)
    assert!(!read(c(O::Lt, "all_nans", 1.0)));
    assert!(read(c(O::GtEq, "all_nans", 1.0)));
    assert!(read(c(O::Gt, "all_nans", 1.0)));
    assert!(!read(c(O::Eq, "all_nans", 1.0)));
    // a field known to hold no NaN is pruned by its upper bound
    assert!(!read(c(O::Gt, "no_nan_or_null", 1e300)));
}

// testMissingColumn / testCaseSensitiveIntegerNotEqRewritten
#[test]
fn missing_columns() {
    assert!(c(O::Lt, "missing", 5)
        .bind_struct(&partition_type(), true)
        .is_err());
    assert!(Expression::not(c(O::Eq, "ID", 5))
        .bind_struct(&partition_type(), true)
        .is_err());
}

// testMissingStats
#[test]
fn missing_stats() {
    let no_stats = manifest(None);
    for e in [
        c(O::Lt, "id", 5),
        c(O::LtEq, "id", 30),
        c(O::Eq, "id", 70),
        c(O::Gt, "id", 78),
        c(O::GtEq, "id", 90),
        c(O::NotEq, "id", 101),
        u(O::IsNull, "id"),
        u(O::NotNull, "id"),
        c(O::StartsWith, "all_nulls_missing_nan", "a"),
        u(O::IsNan, "float"),
        u(O::NotNan, "float"),
        c(O::NotStartsWith, "all_nulls_missing_nan", "a"),
    ] {
        assert!(read_with(e.clone(), &no_stats, true), "{e}");
    }
}

// testNot / testAnd / testOr
#[test]
fn logic() {
    assert!(read(Expression::not(c(O::Lt, "id", INT_MIN - 25))));
    assert!(!read(Expression::not(c(O::Gt, "id", INT_MIN - 25))));
    assert!(!read(Expression::and(
        c(O::Lt, "id", INT_MIN - 25),
        c(O::GtEq, "id", INT_MIN - 30)
    )));
    assert!(!read(Expression::and(
        c(O::Lt, "id", INT_MIN - 25),
        c(O::GtEq, "id", INT_MAX + 1)
    )));
    assert!(read(Expression::and(
        c(O::Gt, "id", INT_MIN - 25),
        c(O::LtEq, "id", INT_MIN)
    )));
    assert!(!read(Expression::or(
        c(O::Lt, "id", INT_MIN - 25),
        c(O::GtEq, "id", INT_MAX + 1)
    )));
    assert!(read(Expression::or(
        c(O::Lt, "id", INT_MIN - 25),
        c(O::GtEq, "id", INT_MAX - 19)
    )));
}

// testIntegerLt / LtEq / Gt / GtEq / Eq / NotEq / NotEqRewritten /
// CaseInsensitiveIntegerNotEqRewritten
#[test]
fn integer_comparisons() {
    let cases = [
        (O::Lt, INT_MIN - 25, false),
        (O::Lt, INT_MIN, false),
        (O::Lt, INT_MIN + 1, true),
        (O::Lt, INT_MAX, true),
        (O::LtEq, INT_MIN - 25, false),
        (O::LtEq, INT_MIN - 1, false),
        (O::LtEq, INT_MIN, true),
        (O::LtEq, INT_MAX, true),
        (O::Gt, INT_MAX + 6, false),
        (O::Gt, INT_MAX, false),
        (O::Gt, INT_MAX - 1, true),
        (O::Gt, INT_MAX - 4, true),
        (O::GtEq, INT_MAX + 6, false),
        (O::GtEq, INT_MAX + 1, false),
        (O::GtEq, INT_MAX, true),
        (O::GtEq, INT_MAX - 4, true),
        (O::Eq, INT_MIN - 25, false),
        (O::Eq, INT_MIN - 1, false),
        (O::Eq, INT_MIN, true),
        (O::Eq, INT_MAX - 4, true),
        (O::Eq, INT_MAX, true),
        (O::Eq, INT_MAX + 1, false),
        (O::Eq, INT_MAX + 6, false),
    ];
    for (op, v, expected) in cases {
        assert_eq!(read(c(op, "id", v)), expected, "id {} {v}", op.symbol());
    }
    for v in [
        INT_MIN - 25,
        INT_MIN - 1,
        INT_MIN,
        INT_MAX - 4,
        INT_MAX,
        INT_MAX + 1,
    ] {
        assert!(read(c(O::NotEq, "id", v)));
        assert!(read(Expression::not(c(O::Eq, "id", v))));
        assert!(read_with(
            Expression::not(c(O::Eq, "ID", v)),
            &file(),
            false
        ));
    }
}

// testStringStartsWith / testStringNotStartsWith
#[test]
fn starts_with() {
    for (col, p, expected) in [
        ("some_nulls", "a", true),
        ("some_nulls", "aa", true),
        ("some_nulls", "dddd", true),
        ("some_nulls", "z", true),
        ("no_nulls", "a", true),
        ("some_nulls", "zzzz", false),
        ("some_nulls", "1", false),
    ] {
        assert_eq!(read(c(O::StartsWith, col, p)), expected, "{col} {p}");
    }
    for (col, p, expected) in [
        ("some_nulls", "a", true),
        ("some_nulls", "aa", true),
        ("some_nulls", "dddd", true),
        ("some_nulls", "z", true),
        ("no_nulls", "a", true),
        ("some_nulls", "zzzz", true),
        ("some_nulls", "1", true),
        ("all_same_value_or_null", "a", true),
        ("all_same_value_or_null", "aa", true),
        ("all_same_value_or_null", "A", true),
        ("all_nulls_missing_nan", "A", true),
        ("no_nulls_same_value_a", "a", false),
        ("no_nulls_same_value_a", "ab", true),
    ] {
        assert_eq!(read(c(O::NotStartsWith, col, p)), expected, "{col} {p}");
    }
}

// testIntegerIn / testIntegerNotIn
#[test]
fn in_and_not_in() {
    let ints = |vs: &[i32]| vs.iter().map(|v| Datum::Int(*v)).collect::<Vec<_>>();
    for (vs, expected) in [
        (vec![INT_MIN - 25, INT_MIN - 24], false),
        (vec![INT_MIN - 2, INT_MIN - 1], false),
        (vec![INT_MIN - 1, INT_MIN], true),
        (vec![INT_MAX - 4, INT_MAX - 3], true),
        (vec![INT_MAX, INT_MAX + 1], true),
        (vec![INT_MAX + 1, INT_MAX + 2], false),
        (vec![INT_MAX + 6, INT_MAX + 7], false),
        (vec![INT_MIN - 1, INT_MAX + 1], false),
    ] {
        assert_eq!(read(Expression::is_in("id", ints(&vs))), expected, "{vs:?}");
        assert!(read(Expression::not_in("id", ints(&vs))), "{vs:?}");
    }
    let strs = || vec![Datum::from("abc"), Datum::from("def")];
    assert!(!read(Expression::is_in("all_nulls_missing_nan", strs())));
    assert!(read(Expression::is_in("some_nulls", strs())));
    assert!(read(Expression::is_in("no_nulls", strs())));
    for col in ["all_nulls_missing_nan", "some_nulls", "no_nulls"] {
        assert!(read(Expression::not_in(col, strs())));
    }
    // more than IN_PREDICATE_LIMIT values: not checked against the bounds
    let many: Vec<i32> = (-400..=0).collect();
    assert!(read(Expression::is_in("id", ints(&many))));
    let limit: Vec<i32> = (-199..=0).collect();
    assert!(!read(Expression::is_in("id", ints(&limit))));
    // ... but a field of nulls only is skipped first
    let many_strs: Vec<Datum> = (0..300).map(|i| Datum::String(format!("v{i}"))).collect();
    assert!(!read(Expression::is_in("all_nulls_missing_nan", many_strs)));
}

// Java reads a missing upper bound (with a lower bound present) as null, below every value
#[test]
fn lower_bound_without_upper_bound() {
    let mut m = file();
    if let Some(p) = m.partitions.as_mut() {
        p[0].upper_bound = None;
    }
    let m = m;
    assert!(!read_with(c(O::Eq, "id", INT_MIN), &m, true));
    assert!(!read_with(c(O::Gt, "id", 0), &m, true));
    assert!(read_with(c(O::Lt, "id", INT_MIN + 1), &m, true));
    assert!(!read_with(
        Expression::is_in("id", vec![Datum::Int(INT_MIN), Datum::Int(INT_MAX)]),
        &m,
        true
    ));
}

// Positions index the summaries: a manifest with fewer summaries than the spec's fields,
// or a nested term, is an error
#[test]
fn bad_positions() {
    let m = manifest(Some(vec![summary(false, None, None, None)]));
    let e = c(O::Eq, "some_nulls", "a")
        .bind_struct(&partition_type(), true)
        .unwrap();
    assert!(ManifestEvaluator::new(e).eval(&m).is_err());
    let e = c(O::Eq, "id", 1)
        .bind_struct(&partition_type(), true)
        .unwrap();
    assert!(!ManifestEvaluator::new(e).eval(&m).unwrap());
}

// ManifestGroup's count filters (applied by scan planning after this evaluator)
#[test]
fn file_counts() {
    let mut m = file();
    assert!(may_have_live_files(&m));
    m.added_files_count = Some(0);
    assert!(may_have_live_files(&m));
    m.existing_files_count = Some(0);
    assert!(!may_have_live_files(&m));
    assert!(!may_have_changed_files(&m));
    m.deleted_files_count = Some(3);
    assert!(may_have_changed_files(&m));
    m.existing_files_count = None;
    assert!(may_have_live_files(&m), "unknown counts may have files");
    m.added_files_count = None;
    m.deleted_files_count = Some(0);
    assert!(may_have_changed_files(&m));
}

// ManifestEvaluator.notEq / notIn with uniqueValue (Java 1.11): a field whose summary has
// no null, no NaN and equal bounds holds one value, which decides `!=` and `not in`
#[test]
fn not_eq_and_not_in_with_one_value() {
    let strs = |vs: &[&str]| vs.iter().map(|v| Datum::from(*v)).collect::<Vec<_>>();
    assert!(!read(c(O::NotEq, "no_nulls_same_value_a", "a")));
    assert!(read(c(O::NotEq, "no_nulls_same_value_a", "b")));
    assert!(!read(Expression::not_in(
        "no_nulls_same_value_a",
        strs(&["a", "b"])
    )));
    assert!(read(Expression::not_in(
        "no_nulls_same_value_a",
        strs(&["b", "c"])
    )));
    assert!(!read(Expression::not(c(
        O::Eq,
        "no_nulls_same_value_a",
        "a"
    ))));
    // a null is not the value
    assert!(read(c(O::NotEq, "all_same_value_or_null", "a")));
    assert!(read(Expression::not_in(
        "all_same_value_or_null",
        strs(&["a", "b"])
    )));
    // different bounds
    assert!(read(c(O::NotEq, "no_nulls", "a")));

    let with = |pos: usize, s: FieldSummary| {
        let mut m = file();
        if let Some(p) = m.partitions.as_mut() {
            p[pos] = s;
        }
        m
    };
    let int = |v: i32| b(Literal::Int(v), P::Int);
    let m = with(0, summary(false, None, int(7), int(7)));
    assert!(!read_with(c(O::NotEq, "id", 7), &m, true));
    assert!(read_with(c(O::NotEq, "id", 8), &m, true));
    let ints = |vs: &[i32]| vs.iter().map(|v| Datum::Int(*v)).collect::<Vec<_>>();
    assert!(!read_with(
        Expression::not_in("id", ints(&[6, 7])),
        &m,
        true
    ));
    assert!(read_with(Expression::not_in("id", ints(&[6, 8])), &m, true));

    // floating point: NaNs must be known to be absent
    let dbl = |v: f64| b(Literal::Double(v), P::Double);
    let one = |nan| with(9, summary(false, nan, dbl(5.0), dbl(5.0)));
    assert!(!read_with(
        c(O::NotEq, "no_nan_or_null", 5.0),
        &one(Some(false)),
        true
    ));
    assert!(read_with(
        c(O::NotEq, "no_nan_or_null", 5.0),
        &one(None),
        true
    ));
    assert!(read_with(
        c(O::NotEq, "no_nan_or_null", 5.0),
        &one(Some(true)),
        true
    ));
    assert!(read_with(
        c(O::NotEq, "no_nan_or_null", 6.0),
        &one(Some(false)),
        true
    ));
    let dbls = |vs: &[f64]| vs.iter().map(|v| Datum::Double(*v)).collect::<Vec<_>>();
    assert!(!read_with(
        Expression::not_in("no_nan_or_null", dbls(&[5.0, 6.0])),
        &one(Some(false)),
        true
    ));
    // -0.0 and 0.0 are two values
    let zeros = with(9, summary(false, Some(false), dbl(-0.0), dbl(0.0)));
    assert!(read_with(c(O::NotEq, "no_nan_or_null", 0.0), &zeros, true));
    let zero = with(9, summary(false, Some(false), dbl(-0.0), dbl(-0.0)));
    assert!(read_with(c(O::NotEq, "no_nan_or_null", 0.0), &zero, true));
    assert!(!read_with(c(O::NotEq, "no_nan_or_null", -0.0), &zero, true));
}
