//! Tests of the metrics evaluators. Each group names the Java test it mirrors
//! (apache/iceberg `api/src/test/java/org/apache/iceberg/expressions/`); the files and
//! schemas are the Java tests' fixtures.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::Arc;

use super::*;
use crate::expr::{Datum, Expression, Operation as O};
use crate::manifest::{DataContentType, DataFile, FileFormat};
use crate::spec::types::{NestedField, StructType};
use crate::spec::{Literal, PrimitiveType as P, Schema, Type};

fn bytes(l: Literal, ty: P) -> Vec<u8> {
    l.to_bytes(&ty).unwrap()
}

#[allow(clippy::too_many_arguments)]
fn data_file(
    records: i64,
    values: Option<Vec<(i32, i64)>>,
    nulls: Option<Vec<(i32, i64)>>,
    nans: Option<Vec<(i32, i64)>>,
    lower: Option<Vec<(i32, Vec<u8>)>>,
    upper: Option<Vec<(i32, Vec<u8>)>>,
) -> DataFile {
    let mut f = DataFile::new(
        DataContentType::Data,
        "file.avro",
        FileFormat::Avro,
        vec![],
        records,
        10,
    );
    f.value_counts = values;
    f.null_value_counts = nulls;
    f.nan_value_counts = nans;
    f.lower_bounds = lower;
    f.upper_bounds = upper;
    f
}

const INT_MIN: i32 = 30;
const INT_MAX: i32 = 79;

fn lt(c: &str, v: impl Into<Datum>) -> Expression {
    Expression::compare(O::Lt, c, v)
}
fn lt_eq(c: &str, v: impl Into<Datum>) -> Expression {
    Expression::compare(O::LtEq, c, v)
}
fn gt(c: &str, v: impl Into<Datum>) -> Expression {
    Expression::compare(O::Gt, c, v)
}
fn gt_eq(c: &str, v: impl Into<Datum>) -> Expression {
    Expression::compare(O::GtEq, c, v)
}
fn eq(c: &str, v: impl Into<Datum>) -> Expression {
    Expression::compare(O::Eq, c, v)
}
fn not_eq(c: &str, v: impl Into<Datum>) -> Expression {
    Expression::compare(O::NotEq, c, v)
}
fn starts(c: &str, v: &str) -> Expression {
    Expression::compare(O::StartsWith, c, v)
}
fn not_starts(c: &str, v: &str) -> Expression {
    Expression::compare(O::NotStartsWith, c, v)
}
fn is_null(c: &str) -> Expression {
    Expression::unary(O::IsNull, c)
}
fn not_null(c: &str) -> Expression {
    Expression::unary(O::NotNull, c)
}
fn is_nan(c: &str) -> Expression {
    Expression::unary(O::IsNan, c)
}
fn not_nan(c: &str) -> Expression {
    Expression::unary(O::NotNan, c)
}
fn ints(vs: &[i32]) -> Vec<Datum> {
    vs.iter().map(|v| Datum::Int(*v)).collect()
}
fn strs(vs: &[&str]) -> Vec<Datum> {
    vs.iter().map(|v| Datum::from(*v)).collect()
}

// --- fixtures of TestInclusiveMetricsEvaluator ------------------------------------------

fn inclusive_schema() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", P::Int.into()),
            NestedField::optional(2, "no_stats", P::Int.into()),
            NestedField::required(3, "required", P::String.into()),
            NestedField::optional(4, "all_nulls", P::String.into()),
            NestedField::optional(5, "some_nulls", P::String.into()),
            NestedField::optional(6, "no_nulls", P::String.into()),
            NestedField::optional(7, "all_nans", P::Double.into()),
            NestedField::optional(8, "some_nans", P::Float.into()),
            NestedField::optional(9, "no_nans", P::Float.into()),
            NestedField::optional(10, "all_nulls_double", P::Double.into()),
            NestedField::optional(11, "all_nans_v1_stats", P::Float.into()),
            NestedField::optional(12, "nan_and_null_only", P::Double.into()),
            NestedField::optional(13, "no_nan_stats", P::Double.into()),
            NestedField::optional(14, "some_empty", P::String.into()),
        ],
        vec![],
    )
    .unwrap()
}

fn inclusive_file() -> DataFile {
    data_file(
        50,
        Some((4..=14).map(|id| (id, 50)).collect()),
        Some(vec![
            (4, 50),
            (5, 10),
            (6, 0),
            (10, 50),
            (11, 0),
            (12, 1),
            (14, 0),
        ]),
        Some(vec![(7, 50), (8, 10), (9, 0)]),
        Some(vec![
            (1, bytes(Literal::Int(INT_MIN), P::Int)),
            (11, bytes(Literal::Float(f32::NAN), P::Float)),
            (12, bytes(Literal::Double(f64::NAN), P::Double)),
            (14, bytes(Literal::String(String::new()), P::String)),
        ]),
        Some(vec![
            (1, bytes(Literal::Int(INT_MAX), P::Int)),
            (11, bytes(Literal::Float(f32::NAN), P::Float)),
            (12, bytes(Literal::Double(f64::NAN), P::Double)),
            (
                14,
                bytes(
                    Literal::String("房东整租霍营小区二层两居室".into()),
                    P::String,
                ),
            ),
        ]),
    )
}

fn string_file(lower: &str, upper: &str) -> DataFile {
    data_file(
        50,
        Some(vec![(3, 20)]),
        Some(vec![(3, 2)]),
        None,
        Some(vec![(3, lower.as_bytes().to_vec())]),
        Some(vec![(3, upper.as_bytes().to_vec())]),
    )
}

fn inc_in(schema: &Schema, e: Expression, f: &DataFile) -> bool {
    InclusiveMetricsEvaluator::new(e.bind(schema, true).unwrap())
        .eval(f)
        .unwrap()
}

fn inc(e: Expression, f: &DataFile) -> bool {
    inc_in(&inclusive_schema(), e, f)
}

// TestInclusiveMetricsEvaluator.testAllNulls / testNoNulls
#[test]
fn inclusive_nulls() {
    let f = inclusive_file();
    assert!(!inc(not_null("all_nulls"), &f));
    for e in [
        lt("all_nulls", "a"),
        lt_eq("all_nulls", "a"),
        gt("all_nulls", "a"),
        gt_eq("all_nulls", "a"),
        eq("all_nulls", "a"),
        starts("all_nulls", "a"),
    ] {
        assert!(!inc(e.clone(), &f), "{e}");
    }
    assert!(inc(not_starts("all_nulls", "a"), &f));
    assert!(inc(not_null("some_nulls"), &f));
    assert!(inc(not_null("no_nulls"), &f));

    assert!(inc(is_null("all_nulls"), &f));
    assert!(inc(is_null("some_nulls"), &f));
    assert!(!inc(is_null("no_nulls"), &f));
}

// TestInclusiveMetricsEvaluator.testIsNaN / testNotNaN
#[test]
fn inclusive_nans() {
    let f = inclusive_file();
    assert!(inc(is_nan("all_nans"), &f));
    assert!(inc(is_nan("some_nans"), &f));
    assert!(!inc(is_nan("no_nans"), &f));
    assert!(!inc(is_nan("all_nulls_double"), &f), "nulls only: no NaN");
    assert!(inc(is_nan("no_nan_stats"), &f));
    assert!(inc(is_nan("all_nans_v1_stats"), &f));
    assert!(inc(is_nan("nan_and_null_only"), &f));

    assert!(!inc(not_nan("all_nans"), &f));
    assert!(inc(not_nan("some_nans"), &f));
    assert!(inc(not_nan("no_nans"), &f));
    assert!(inc(not_nan("all_nulls_double"), &f));
    assert!(inc(not_nan("no_nan_stats"), &f));
    assert!(inc(not_nan("all_nans_v1_stats"), &f));
    assert!(inc(not_nan("nan_and_null_only"), &f));
}

// TestInclusiveMetricsEvaluator.testRequiredColumn / testMissingColumn /
// testCaseSensitiveIntegerNotEqRewritten
#[test]
fn inclusive_required_and_missing_columns() {
    let f = inclusive_file();
    assert!(inc(not_null("required"), &f));
    assert!(!inc(is_null("required"), &f));
    assert!(lt("missing", 5).bind(&inclusive_schema(), true).is_err());
    assert!(Expression::not(eq("ID", 5))
        .bind(&inclusive_schema(), true)
        .is_err());
}

// TestInclusiveMetricsEvaluator.testMissingStats
#[test]
fn inclusive_missing_stats() {
    let f = data_file(50, None, None, None, None, None);
    for e in [
        lt("no_stats", 5),
        lt_eq("no_stats", 30),
        eq("no_stats", 70),
        gt("no_stats", 78),
        gt_eq("no_stats", 90),
        not_eq("no_stats", 101),
        is_null("no_stats"),
        not_null("no_stats"),
        is_nan("some_nans"),
        not_nan("some_nans"),
    ] {
        assert!(inc(e.clone(), &f), "{e}");
    }
}

// TestInclusiveMetricsEvaluator.testZeroRecordFile; plus Java's "record count < 0 may match"
#[test]
fn inclusive_record_counts() {
    let exprs = [
        lt("id", 5),
        lt_eq("id", 30),
        eq("id", 70),
        gt("id", 78),
        gt_eq("id", 90),
        not_eq("id", 101),
        is_null("some_nulls"),
        not_null("some_nulls"),
        is_nan("some_nans"),
        not_nan("some_nans"),
    ];
    let empty = data_file(0, None, None, None, None, None);
    for e in &exprs {
        assert!(!inc(e.clone(), &empty), "{e}");
    }
    // an imported Avro file with an unknown (-1) count: even a contradicted bound is moot
    let mut unknown = inclusive_file();
    unknown.record_count = -1;
    assert!(inc(lt("id", INT_MIN - 25), &unknown));
    assert!(!inc(lt("id", INT_MIN - 25), &inclusive_file()));
}

// TestInclusiveMetricsEvaluator.testNot / testAnd / testOr
#[test]
fn inclusive_logic() {
    let f = inclusive_file();
    assert!(inc(Expression::not(lt("id", INT_MIN - 25)), &f));
    assert!(!inc(Expression::not(gt("id", INT_MIN - 25)), &f));
    assert!(!inc(
        Expression::and(lt("id", INT_MIN - 25), gt_eq("id", INT_MIN - 30)),
        &f
    ));
    assert!(!inc(
        Expression::and(lt("id", INT_MIN - 25), gt_eq("id", INT_MAX + 1)),
        &f
    ));
    assert!(inc(
        Expression::and(gt("id", INT_MIN - 25), lt_eq("id", INT_MIN)),
        &f
    ));
    assert!(!inc(
        Expression::or(lt("id", INT_MIN - 25), gt_eq("id", INT_MAX + 1)),
        &f
    ));
    assert!(inc(
        Expression::or(lt("id", INT_MIN - 25), gt_eq("id", INT_MAX - 19)),
        &f
    ));
}

// TestInclusiveMetricsEvaluator.testIntegerLt / LtEq / Gt / GtEq / Eq / NotEq /
// NotEqRewritten / CaseInsensitiveIntegerNotEqRewritten
#[test]
fn inclusive_integer_comparisons() {
    let f = inclusive_file();
    let cases: Vec<(Expression, bool)> = vec![
        (lt("id", INT_MIN - 25), false),
        (lt("id", INT_MIN), false),
        (lt("id", INT_MIN + 1), true),
        (lt("id", INT_MAX), true),
        (lt_eq("id", INT_MIN - 25), false),
        (lt_eq("id", INT_MIN - 1), false),
        (lt_eq("id", INT_MIN), true),
        (lt_eq("id", INT_MAX), true),
        (gt("id", INT_MAX + 6), false),
        (gt("id", INT_MAX), false),
        (gt("id", INT_MAX - 1), true),
        (gt("id", INT_MAX - 4), true),
        (gt_eq("id", INT_MAX + 6), false),
        (gt_eq("id", INT_MAX + 1), false),
        (gt_eq("id", INT_MAX), true),
        (gt_eq("id", INT_MAX - 4), true),
        (eq("id", INT_MIN - 25), false),
        (eq("id", INT_MIN - 1), false),
        (eq("id", INT_MIN), true),
        (eq("id", INT_MAX - 4), true),
        (eq("id", INT_MAX), true),
        (eq("id", INT_MAX + 1), false),
        (eq("id", INT_MAX + 6), false),
    ];
    for (e, expected) in cases {
        assert_eq!(inc(e.clone(), &f), expected, "{e}");
    }
    for v in [
        INT_MIN - 25,
        INT_MIN - 1,
        INT_MIN,
        INT_MAX - 4,
        INT_MAX,
        INT_MAX + 1,
        INT_MAX + 6,
    ] {
        assert!(inc(not_eq("id", v), &f));
        assert!(inc(Expression::not(eq("id", v)), &f));
        let e = Expression::not(eq("ID", v))
            .bind(&inclusive_schema(), false)
            .unwrap();
        assert!(InclusiveMetricsEvaluator::new(e).eval(&f).unwrap());
    }
}

// TestInclusiveMetricsEvaluator.testStringStartsWith
#[test]
fn inclusive_starts_with() {
    let f = inclusive_file();
    let f2 = string_file("aa", "dC");
    let f3 = string_file("1str1", "3str3");
    let f4 = string_file("abc", "イロハニホヘト");
    assert!(inc(starts("required", "a"), &f), "no stats");
    assert!(inc(starts("required", "a"), &f2));
    assert!(inc(starts("required", "aa"), &f2));
    assert!(inc(starts("required", "aaa"), &f2));
    assert!(inc(starts("required", "1s"), &f3));
    assert!(inc(starts("required", "1str1x"), &f3));
    assert!(inc(starts("required", "ff"), &f4));
    assert!(!inc(starts("required", "aB"), &f2));
    assert!(!inc(starts("required", "dWX"), &f2));
    assert!(!inc(starts("required", "5"), &f3));
    assert!(!inc(starts("required", "3str3x"), &f3));
    assert!(inc(starts("some_empty", "房东整租霍"), &f));
    assert!(!inc(starts("all_nulls", ""), &f));
    // UnicodeUtil.truncateStringMax("イロハニホヘト", 4): the last kept code point + 1
    assert!(!inc(starts("required", "イロハヌ"), &f4));
}

// TestInclusiveMetricsEvaluator.testStringNotStartsWith
#[test]
fn inclusive_not_starts_with() {
    let f = inclusive_file();
    let f2 = string_file("aa", "dC");
    let f3 = string_file("1str1", "3str3");
    let f4 = string_file("abc", "イロハニホヘト");
    for (p, file) in [
        ("a", &f),
        ("a", &f2),
        ("aa", &f2),
        ("aaa", &f2),
        ("1s", &f3),
        ("1str1x", &f3),
        ("ff", &f4),
        ("aB", &f2),
        ("dWX", &f2),
        ("5", &f3),
        ("3str3x", &f3),
        ("イロハヌ", &f4),
    ] {
        assert!(inc(not_starts("required", p), file), "{p}");
    }
    // no nulls and both bounds start with the prefix: every value does, none matches
    let mut same = string_file("abc", "abd");
    same.null_value_counts = Some(vec![(3, 0)]);
    assert!(!inc(not_starts("required", "ab"), &same));
    assert!(inc(not_starts("required", "abc"), &same));
    // with a null count unknown, nulls may match `not starts with` (Java's nulls-first)
    same.null_value_counts = None;
    assert!(inc(not_starts("required", "ab"), &same));
}

// TestInclusiveMetricsEvaluator.testIntegerIn / testIntegerNotIn
#[test]
fn inclusive_in() {
    let f = inclusive_file();
    let cases = [
        (vec![INT_MIN - 25, INT_MIN - 24], false),
        (vec![INT_MIN - 2, INT_MIN - 1], false),
        (vec![INT_MIN - 1, INT_MIN], true),
        (vec![INT_MAX - 4, INT_MAX - 3], true),
        (vec![INT_MAX, INT_MAX + 1], true),
        (vec![INT_MAX + 1, INT_MAX + 2], false),
        (vec![INT_MAX + 6, INT_MAX + 7], false),
        // one below and one above the bounds: none in between
        (vec![INT_MIN - 1, INT_MAX + 1], false),
    ];
    for (vs, expected) in cases {
        assert_eq!(
            inc(Expression::is_in("id", ints(&vs)), &f),
            expected,
            "{vs:?}"
        );
        assert!(inc(Expression::not_in("id", ints(&vs)), &f), "{vs:?}");
    }
    assert!(!inc(
        Expression::is_in("all_nulls", strs(&["abc", "def"])),
        &f
    ));
    assert!(inc(
        Expression::is_in("some_nulls", strs(&["abc", "def"])),
        &f
    ));
    assert!(inc(
        Expression::is_in("no_nulls", strs(&["abc", "def"])),
        &f
    ));
    for c in ["all_nulls", "some_nulls", "no_nulls"] {
        assert!(inc(Expression::not_in(c, strs(&["abc", "def"])), &f));
    }
    // more values than IN_PREDICATE_LIMIT are not checked against the bounds
    let many: Vec<i32> = (-400..=0).collect();
    assert!(inc(Expression::is_in("id", ints(&many)), &f));
    let limit: Vec<i32> = (-199..=0).collect();
    assert_eq!(limit.len(), IN_PREDICATE_LIMIT);
    assert!(!inc(Expression::is_in("id", ints(&limit)), &f));
    let over: Vec<i32> = (-200..=0).collect();
    assert!(inc(Expression::is_in("id", ints(&over)), &f));
}

// TestMetricsEvaluatorsNaNHandling: fixtures
fn nan_schema() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::required(1, "all_nan", P::Double.into()),
            NestedField::required(2, "max_nan", P::Double.into()),
            NestedField::optional(3, "min_max_nan", P::Float.into()),
            NestedField::required(4, "all_nan_null_bounds", P::Double.into()),
            NestedField::optional(5, "some_nan_correct_bounds", P::Float.into()),
        ],
        vec![],
    )
    .unwrap()
}

fn nan_file() -> DataFile {
    let d = |v: f64| bytes(Literal::Double(v), P::Double);
    let fl = |v: f32| bytes(Literal::Float(v), P::Float);
    data_file(
        50,
        Some((1..=5).map(|id| (id, 10)).collect()),
        Some((1..=5).map(|id| (id, 0)).collect()),
        Some(vec![(1, 10), (4, 10), (5, 5)]),
        Some(vec![
            (1, d(f64::NAN)),
            (2, d(7.0)),
            (3, fl(f32::NAN)),
            (5, fl(7.0)),
        ]),
        Some(vec![
            (1, d(f64::NAN)),
            (2, d(f64::NAN)),
            (3, fl(f32::NAN)),
            (5, fl(22.0)),
        ]),
    )
}

fn inc_nan(e: Expression) -> bool {
    inc_in(&nan_schema(), e, &nan_file())
}

// TestMetricsEvaluatorsNaNHandling.testInclusiveMetricsEvaluator*
#[test]
fn inclusive_nan_bounds() {
    for op in [O::Lt, O::LtEq] {
        let c = |col: &str, v: f64| Expression::compare(op, col, v);
        assert!(!inc_nan(c("all_nan", 1.0)));
        assert!(!inc_nan(c("max_nan", 1.0)));
        assert!(inc_nan(c("max_nan", 10.0)));
        assert!(
            inc_nan(c("min_max_nan", 1.0)),
            "NaN lower bound decides nothing"
        );
        assert!(!inc_nan(c("all_nan_null_bounds", 1.0)));
        assert!(!inc_nan(c("some_nan_correct_bounds", 1.0)));
        assert!(inc_nan(c("some_nan_correct_bounds", 10.0)));
    }
    // NaN is above every number (Spark's order): a file that may hold NaN may match `>`
    // and `>=` whatever its bounds (Java prunes `all_nan`, `all_nan_null_bounds` and
    // `some_nan_correct_bounds > 30`, NaN rows and all)
    for op in [O::Gt, O::GtEq] {
        let c = |col: &str, v: f64| Expression::compare(op, col, v);
        assert!(inc_nan(c("all_nan", 1.0)));
        assert!(inc_nan(c("max_nan", 1.0)));
        assert!(inc_nan(c("max_nan", 10.0)));
        assert!(inc_nan(c("min_max_nan", 1.0)));
        assert!(inc_nan(c("all_nan_null_bounds", 1.0)));
        assert!(inc_nan(c("some_nan_correct_bounds", 1.0)));
        assert!(inc_nan(c("some_nan_correct_bounds", 10.0)));
        assert!(inc_nan(Expression::compare(
            op,
            "some_nan_correct_bounds",
            30_i32
        )));
    }
    assert!(!inc_nan(eq("all_nan", 1.0)));
    assert!(!inc_nan(eq("max_nan", 1.0)));
    assert!(inc_nan(eq("max_nan", 10.0)));
    assert!(inc_nan(eq("min_max_nan", 1.0)));
    assert!(!inc_nan(eq("all_nan_null_bounds", 1.0)));
    assert!(!inc_nan(eq("some_nan_correct_bounds", 1.0)));
    assert!(inc_nan(eq("some_nan_correct_bounds", 10.0)));
    assert!(!inc_nan(eq("some_nan_correct_bounds", 30_i32)));
    for (col, v) in [
        ("all_nan", 1.0),
        ("max_nan", 1.0),
        ("max_nan", 10.0),
        ("min_max_nan", 1.0),
        ("all_nan_null_bounds", 1.0),
        ("some_nan_correct_bounds", 1.0),
        ("some_nan_correct_bounds", 10.0),
        ("some_nan_correct_bounds", 30.0),
    ] {
        assert!(inc_nan(not_eq(col, v)));
        assert!(inc_nan(Expression::not_in(
            col,
            vec![Datum::Double(v), Datum::Double(v + 0.5)]
        )));
    }
    let three = || vec![Datum::Double(1.0), Datum::Double(10.0), Datum::Double(30.0)];
    assert!(!inc_nan(Expression::is_in("all_nan", three())));
    assert!(inc_nan(Expression::is_in("max_nan", three())));
    assert!(inc_nan(Expression::is_in("min_max_nan", three())));
    assert!(!inc_nan(Expression::is_in("all_nan_null_bounds", three())));
    assert!(inc_nan(Expression::is_in(
        "some_nan_correct_bounds",
        three()
    )));
    assert!(!inc_nan(Expression::is_in(
        "some_nan_correct_bounds",
        vec![Datum::Double(1.0), Datum::Double(30.0)]
    )));
}

/// Java compares floats with `Float.compare`: a NaN bound with the sign bit set is still
/// above every number (`Literal::compare`'s total order would put it first).
#[test]
fn negative_nan_bounds_use_java_order() {
    let neg_nan = f64::from_bits(f64::NAN.to_bits() | (1 << 63));
    assert!(neg_nan.is_nan() && neg_nan.is_sign_negative());
    let d = |v: f64| bytes(Literal::Double(v), P::Double);
    let f = data_file(
        50,
        Some(vec![(2, 10)]),
        Some(vec![(2, 0)]),
        None,
        Some(vec![(2, d(7.0))]),
        Some(vec![(2, d(neg_nan))]),
    );
    assert!(inc_in(&nan_schema(), gt("max_nan", 100.0), &f));
    assert!(inc_in(&nan_schema(), eq("max_nan", 100.0), &f));
    // strict: an upper bound of NaN is never below a value
    assert!(!strict_in(&nan_schema(), lt("max_nan", 100.0), &f));
    assert!(!strict_in(&nan_schema(), lt_eq("max_nan", 100.0), &f));
    // -0.0 < 0.0 in Java's order
    let g = data_file(
        50,
        Some(vec![(2, 10)]),
        Some(vec![(2, 0)]),
        None,
        Some(vec![(2, d(-0.0))]),
        Some(vec![(2, d(-0.0))]),
    );
    assert!(!inc_in(&nan_schema(), eq("max_nan", 0.0), &g));
    assert!(inc_in(&nan_schema(), lt("max_nan", 0.0), &g));
    // without NaN counts the file may hold NaN rows, which `<` does not take
    assert!(!strict_in(&nan_schema(), lt("max_nan", 0.0), &g));
    let g_no_nan = DataFile {
        nan_value_counts: Some(vec![(2, 0)]),
        ..g
    };
    assert!(strict_in(&nan_schema(), lt("max_nan", 0.0), &g_no_nan));
}

/// One semantics for NaN, whichever file a row is in: NaN is above every number, so a
/// NaN row matches `>` and `>=` (as the reader's residual and Spark decide) and no file
/// that may hold one is pruned by them; it matches no `<`, `<=`, `=` or `in`.
#[test]
fn nan_rows_match_greater_than_in_pruning_and_strict_evaluation() {
    let d = |v: f64| bytes(Literal::Double(v), P::Double);
    // values 0.5 and 1.0, and NaN: the upper bound leaves NaN out
    let file = |nans: Option<i64>| {
        data_file(
            3,
            Some(vec![(2, 3)]),
            Some(vec![(2, 0)]),
            nans.map(|n| vec![(2, n)]),
            Some(vec![(2, d(0.5))]),
            Some(vec![(2, d(1.0))]),
        )
    };
    for nans in [Some(1), None] {
        let f = file(nans);
        assert!(inc_in(&nan_schema(), gt("max_nan", 1.0), &f), "{nans:?}");
        assert!(inc_in(&nan_schema(), gt_eq("max_nan", 2.0), &f), "{nans:?}");
        // NaN matches no `<` / `=`: the bounds still decide
        assert!(!inc_in(&nan_schema(), lt("max_nan", 0.5), &f), "{nans:?}");
        assert!(!inc_in(&nan_schema(), eq("max_nan", 2.0), &f), "{nans:?}");
        // and so not every row is below 2.0
        assert!(
            !strict_in(&nan_schema(), lt("max_nan", 2.0), &f),
            "{nans:?}"
        );
        // every row is above 0.1, the NaN row too
        assert!(strict_in(&nan_schema(), gt("max_nan", 0.1), &f), "{nans:?}");
    }
    // known to hold no NaN: the upper bound prunes
    let f = file(Some(0));
    assert!(!inc_in(&nan_schema(), gt("max_nan", 1.0), &f));
    assert!(strict_in(&nan_schema(), lt("max_nan", 2.0), &f));
}

// "missing value_counts when null counts exist": nulls-only cannot be concluded
#[test]
fn inclusive_null_counts_without_value_counts() {
    let mut f = inclusive_file();
    f.value_counts = None;
    assert!(inc(not_null("all_nulls"), &f));
    assert!(inc(lt("all_nulls", "a"), &f));
    // NaN counts alone cannot prove "NaN only" either
    assert!(inc(not_nan("all_nans"), &f));
    assert!(inc(is_null("all_nulls"), &f));
    assert!(!inc(is_null("no_nulls"), &f));
    // a present value count with no entry for the column is the same
    f.value_counts = Some(vec![(1, 50)]);
    assert!(inc(not_null("all_nulls"), &f));
}

fn nested_schema() -> Schema {
    let location = StructType::new(vec![
        NestedField::required(10, "lat", P::Double.into()),
        NestedField::optional(11, "name", P::String.into()),
    ]);
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", P::Long.into()),
            NestedField::optional(2, "location", Type::Struct(Arc::new(location))),
            NestedField::optional(3, "u", P::Uuid.into()),
            NestedField::optional(4, "b", P::Binary.into()),
            NestedField::optional(
                5,
                "price",
                P::Decimal {
                    precision: 9,
                    scale: 2,
                }
                .into(),
            ),
            NestedField::optional(6, "ts", P::Timestamp.into()),
        ],
        vec![],
    )
    .unwrap()
}

// Nested columns: the inclusive evaluator uses their metrics like any column's; the strict
// evaluator never claims a match from them (Java's StrictMetricsEvaluator.isNestedColumn)
#[test]
fn nested_columns() {
    let s = nested_schema();
    let d = |v: f64| bytes(Literal::Double(v), P::Double);
    let f = data_file(
        50,
        Some(vec![(10, 50), (11, 50)]),
        Some(vec![(10, 0), (11, 50)]),
        Some(vec![(10, 0)]),
        Some(vec![(10, d(1.0))]),
        Some(vec![(10, d(2.0))]),
    );
    assert!(!inc_in(&s, gt("location.lat", 3.0), &f));
    assert!(inc_in(&s, gt("location.lat", 1.5), &f));
    assert!(!inc_in(&s, not_null("location.name"), &f));
    assert!(!strict_in(&s, lt("location.lat", 3.0), &f));
    // a top-level column with these counts would be all non-null; nested, no claim
    let mut g = f.clone();
    g.null_value_counts = Some(vec![(10, 0), (11, 0)]);
    assert!(!strict_in(&s, not_null("location.name"), &g));
    assert!(!strict_in(&s, is_null("location.name"), &f));
    assert!(!strict_in(
        &s,
        Expression::not_in("location.lat", vec![Datum::Double(5.0), Datum::Double(6.0)]),
        &f
    ));
    // is nan / is not nan have no nested check in Java
    assert!(strict_in(&s, not_nan("location.lat"), &f));
    // the same metrics on a top-level column do decide
    let top = data_file(
        50,
        Some(vec![(1, 50)]),
        Some(vec![(1, 0)]),
        None,
        Some(vec![(1, bytes(Literal::Long(1), P::Long))]),
        Some(vec![(1, bytes(Literal::Long(2), P::Long))]),
    );
    assert!(strict_in(&s, lt("id", 3_i64), &top));
}

// Other types: bounds decode per type (promoted int bounds of a long column, decimals,
// timestamps), binary compares unsigned bytes, malformed bounds are errors
#[test]
fn typed_bounds() {
    let s = nested_schema();
    // an int bound (4 bytes) written before `id` was promoted to long
    let f = data_file(
        50,
        None,
        None,
        None,
        Some(vec![
            (1, 5_i32.to_le_bytes().to_vec()),
            (4, vec![0x10]),
            (
                5,
                bytes(
                    Literal::Decimal(150),
                    P::Decimal {
                        precision: 9,
                        scale: 2,
                    },
                ),
            ),
            (6, bytes(Literal::Timestamp(1_000), P::Timestamp)),
        ]),
        Some(vec![
            (1, 9_i32.to_le_bytes().to_vec()),
            (4, vec![0x80, 0x01]),
            (
                5,
                bytes(
                    Literal::Decimal(-5),
                    P::Decimal {
                        precision: 9,
                        scale: 2,
                    },
                ),
            ),
            (6, bytes(Literal::Timestamp(2_000), P::Timestamp)),
        ]),
    );
    assert!(!inc_in(&s, lt("id", 5_i64), &f));
    assert!(inc_in(&s, lt("id", 6_i64), &f));
    assert!(!inc_in(&s, gt("id", 9_i64), &f));
    assert!(!inc_in(&s, lt("b", Datum::Binary(vec![0x0f])), &f));
    // 0x80 is above 0x7f unsigned
    assert!(inc_in(&s, gt("b", Datum::Binary(vec![0x7f])), &f));
    assert!(!inc_in(&s, gt("b", Datum::Binary(vec![0x80, 0x01])), &f));
    assert!(!inc_in(
        &s,
        lt("price", Datum::decimal("1.50").unwrap()),
        &f
    ));
    assert!(!inc_in(
        &s,
        gt_eq("price", Datum::decimal("0.00").unwrap()),
        &f
    ));
    assert!(!inc_in(&s, gt("ts", "1970-01-01T00:00:00.002"), &f));
    assert!(inc_in(&s, gt("ts", "1970-01-01T00:00:00.001"), &f));

    // malformed bounds: an error, not a guess
    let mut bad = f.clone();
    bad.lower_bounds = Some(vec![(1, vec![1, 2, 3])]);
    let e = lt("id", 5_i64).bind(&s, true).unwrap();
    assert!(InclusiveMetricsEvaluator::new(e).eval(&bad).is_err());
    let schema = inclusive_schema();
    let mut bad = string_file("a", "b");
    bad.lower_bounds = Some(vec![(3, vec![0xff, 0xfe])]);
    let e = lt("required", "b").bind(&schema, true).unwrap();
    assert!(InclusiveMetricsEvaluator::new(e).eval(&bad).is_err());
    // ... but only when needed: an `and` stops at its first false
    let e = Expression::and(lt("required", "0"), gt("required", "a"));
    let mut half = string_file("a", "b");
    half.upper_bounds = Some(vec![(3, vec![0xff])]);
    assert!(!inc_in(&schema, e, &half));
    let e = Expression::and(lt("required", "b"), gt("required", "a"))
        .bind(&schema, true)
        .unwrap();
    assert!(InclusiveMetricsEvaluator::new(e).eval(&half).is_err());
}

/// UUIDs compare as Java's `UUID.compareTo` (signed halves): 0x8000... is below 0x7fff...
#[test]
fn uuid_bounds_use_java_order() {
    let s = nested_schema();
    let low: u128 = 0x8000_0000_0000_0000_0000_0000_0000_0000;
    let high: u128 = 0x0000_0000_0000_0000_0000_0000_0000_0001;
    let f = data_file(
        50,
        None,
        None,
        None,
        Some(vec![(3, bytes(Literal::Uuid(low), P::Uuid))]),
        Some(vec![(3, bytes(Literal::Uuid(high), P::Uuid))]),
    );
    let mid = uuid::Uuid::from_u128(0xffff_0000_0000_0000_0000_0000_0000_0000);
    // signed: 0x8000.. < 0xffff.. < 0x0000..01, so the value may be inside
    assert!(inc_in(&s, eq("u", mid.to_string().as_str()), &f));
    let above = uuid::Uuid::from_u128(0x7000_0000_0000_0000_0000_0000_0000_0000);
    assert!(!inc_in(&s, eq("u", above.to_string().as_str()), &f));
}

/// The inclusive `starts with` truncates bounds to the prefix's length in bytes; Java
/// truncates the decoded strings to the prefix's length in UTF-16 units and compares with
/// its `CharSeqComparator` (a high surrogate above every other char). Both decide alike.
#[test]
fn starts_with_bytes_agree_with_java_chars() {
    fn java_cmp(a: &[u16], b: &[u16]) -> std::cmp::Ordering {
        let hi = |c: u16| (0xD800..=0xDBFF).contains(&c);
        for (x, y) in a.iter().zip(b) {
            match (hi(*x), hi(*y)) {
                (true, false) => return std::cmp::Ordering::Greater,
                (false, true) => return std::cmp::Ordering::Less,
                _ => {}
            }
            if x != y {
                return x.cmp(y);
            }
        }
        a.len().cmp(&b.len())
    }
    fn java_trunc_cmp(bound: &str, prefix: &str) -> std::cmp::Ordering {
        let b: Vec<u16> = bound.encode_utf16().collect();
        let p: Vec<u16> = prefix.encode_utf16().collect();
        let n = p.len().min(b.len());
        java_cmp(&b[..n], &p)
    }
    let words = [
        "",
        "a",
        "ab",
        "abc",
        "b",
        "z",
        "é",
        "éa",
        "aé",
        "\u{ffff}",
        "\u{e000}",
        "😀",
        "a😀",
        "😀a",
        "😁",
        "a\u{e000}",
        "a\u{ffff}",
        "房东",
        "イロハ",
        "\u{10ffff}",
        "aa😀b",
    ];
    for bound in words {
        for prefix in words {
            assert_eq!(
                truncated_cmp(bound.as_bytes(), prefix.as_bytes()),
                java_trunc_cmp(bound, prefix),
                "bound {bound:?} prefix {prefix:?}"
            );
        }
    }
}

// --- TestStrictMetricsEvaluator --------------------------------------------------------

fn strict_schema() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", P::Int.into()),
            NestedField::optional(2, "no_stats", P::Int.into()),
            NestedField::required(3, "required", P::String.into()),
            NestedField::optional(4, "all_nulls", P::String.into()),
            NestedField::optional(5, "some_nulls", P::String.into()),
            NestedField::optional(6, "no_nulls", P::String.into()),
            NestedField::required(7, "always_5", P::Int.into()),
            NestedField::optional(8, "all_nans", P::Double.into()),
            NestedField::optional(9, "some_nans", P::Float.into()),
            NestedField::optional(10, "no_nans", P::Float.into()),
            NestedField::optional(11, "all_nulls_double", P::Double.into()),
            NestedField::optional(12, "all_nans_v1_stats", P::Float.into()),
            NestedField::optional(13, "nan_and_null_only", P::Double.into()),
            NestedField::optional(14, "no_nan_stats", P::Double.into()),
        ],
        vec![],
    )
    .unwrap()
}

fn strict_file() -> DataFile {
    let int = |v: i32| bytes(Literal::Int(v), P::Int);
    data_file(
        50,
        Some(
            [4, 5, 6, 8, 9, 10, 11, 12, 13, 14]
                .iter()
                .map(|id| (*id, 50))
                .collect(),
        ),
        Some(vec![(4, 50), (5, 10), (6, 0), (11, 50), (12, 0), (13, 1)]),
        Some(vec![(8, 50), (9, 10), (10, 0)]),
        Some(vec![
            (1, int(INT_MIN)),
            (7, int(5)),
            (12, bytes(Literal::Float(f32::NAN), P::Float)),
            (13, bytes(Literal::Double(f64::NAN), P::Double)),
        ]),
        Some(vec![
            (1, int(INT_MAX)),
            (7, int(5)),
            (12, bytes(Literal::Float(f32::NAN), P::Float)),
            (13, bytes(Literal::Double(f64::NAN), P::Double)),
        ]),
    )
}

fn strict_string_file(lower: &str, upper: &str) -> DataFile {
    data_file(
        50,
        Some(vec![(4, 50), (5, 50), (6, 50)]),
        Some(vec![(4, 50), (5, 10), (6, 0)]),
        None,
        Some(vec![(5, lower.as_bytes().to_vec())]),
        Some(vec![(5, upper.as_bytes().to_vec())]),
    )
}

fn strict_in(schema: &Schema, e: Expression, f: &DataFile) -> bool {
    StrictMetricsEvaluator::new(e.bind(schema, true).unwrap())
        .eval(f)
        .unwrap()
}

fn strict(e: Expression, f: &DataFile) -> bool {
    strict_in(&strict_schema(), e, f)
}

// TestStrictMetricsEvaluator.testAllNulls / testNoNulls / testSomeNulls
#[test]
fn strict_nulls() {
    let f = strict_file();
    assert!(!strict(not_null("all_nulls"), &f));
    assert!(!strict(not_null("some_nulls"), &f));
    assert!(strict(not_null("no_nulls"), &f));
    assert!(strict(not_eq("all_nulls", "a"), &f));
    assert!(strict(is_null("all_nulls"), &f));
    assert!(!strict(is_null("some_nulls"), &f));
    assert!(!strict(is_null("no_nulls"), &f));
    let f2 = strict_string_file("bbb", "eee");
    assert!(!strict(lt("some_nulls", "ggg"), &f2));
    assert!(!strict(lt_eq("some_nulls", "eee"), &f2));
    assert!(!strict(gt("some_nulls", "aaa"), &f2));
    assert!(!strict(gt_eq("some_nulls", "bbb"), &f2));
    let f3 = strict_string_file("bbb", "bbb");
    assert!(!strict(eq("some_nulls", "bbb"), &f3));
}

// TestStrictMetricsEvaluator.testIsNaN / testNotNaN
#[test]
fn strict_nans() {
    let f = strict_file();
    assert!(strict(is_nan("all_nans"), &f));
    for c in [
        "some_nans",
        "no_nans",
        "all_nulls_double",
        "no_nan_stats",
        "all_nans_v1_stats",
        "nan_and_null_only",
    ] {
        assert!(!strict(is_nan(c), &f), "{c}");
    }
    assert!(!strict(not_nan("all_nans"), &f));
    assert!(!strict(not_nan("some_nans"), &f));
    assert!(strict(not_nan("no_nans"), &f));
    assert!(strict(not_nan("all_nulls_double"), &f));
    assert!(!strict(not_nan("no_nan_stats"), &f));
    assert!(!strict(not_nan("all_nans_v1_stats"), &f));
    assert!(!strict(not_nan("nan_and_null_only"), &f));
}

// TestStrictMetricsEvaluator.testRequiredColumn / testMissingStats / testZeroRecordFile
#[test]
fn strict_required_missing_and_empty() {
    let f = strict_file();
    assert!(strict(not_null("required"), &f));
    assert!(!strict(is_null("required"), &f));
    let exprs = [
        lt("no_stats", 5),
        lt_eq("no_stats", 30),
        eq("no_stats", 70),
        gt("no_stats", 78),
        gt_eq("no_stats", 90),
        not_eq("no_stats", 101),
        is_null("no_stats"),
        not_null("no_stats"),
        is_nan("all_nans"),
        not_nan("all_nans"),
    ];
    let missing = data_file(50, None, None, None, None, None);
    for e in &exprs {
        assert!(!strict(e.clone(), &missing), "{e}");
    }
    for records in [0, -1] {
        let empty = data_file(records, None, None, None, None, None);
        for e in &exprs {
            assert!(strict(e.clone(), &empty), "{e}");
        }
    }
}

// TestStrictMetricsEvaluator.testNot / testAnd / testOr
#[test]
fn strict_logic() {
    let f = strict_file();
    assert!(strict(Expression::not(lt("id", INT_MIN - 25)), &f));
    assert!(!strict(Expression::not(gt("id", INT_MIN - 25)), &f));
    assert!(!strict(
        Expression::and(gt("id", INT_MIN - 25), lt_eq("id", INT_MIN)),
        &f
    ));
    assert!(!strict(
        Expression::and(lt("id", INT_MIN - 25), gt_eq("id", INT_MIN - 30)),
        &f
    ));
    assert!(strict(
        Expression::and(lt("id", INT_MAX + 6), gt_eq("id", INT_MIN - 30)),
        &f
    ));
    assert!(!strict(
        Expression::or(lt("id", INT_MIN - 25), gt_eq("id", INT_MAX + 1)),
        &f
    ));
    assert!(!strict(
        Expression::or(lt("id", INT_MIN - 25), gt_eq("id", INT_MAX - 19)),
        &f
    ));
    assert!(strict(
        Expression::or(lt("id", INT_MIN - 25), gt_eq("id", INT_MIN)),
        &f
    ));
}

// TestStrictMetricsEvaluator.testIntegerLt ... testIntegerNotEqRewritten
#[test]
fn strict_integer_comparisons() {
    let f = strict_file();
    let cases: Vec<(Expression, bool)> = vec![
        (lt("id", INT_MIN), false),
        (lt("id", INT_MIN + 1), false),
        (lt("id", INT_MAX), false),
        (lt("id", INT_MAX + 1), true),
        (lt_eq("id", INT_MIN - 1), false),
        (lt_eq("id", INT_MIN), false),
        (lt_eq("id", INT_MAX), true),
        (lt_eq("id", INT_MAX + 1), true),
        (gt("id", INT_MAX), false),
        (gt("id", INT_MAX - 1), false),
        (gt("id", INT_MIN), false),
        (gt("id", INT_MIN - 1), true),
        (gt_eq("id", INT_MAX + 1), false),
        (gt_eq("id", INT_MAX), false),
        (gt_eq("id", INT_MIN + 1), false),
        (gt_eq("id", INT_MIN), true),
        (eq("id", INT_MIN - 25), false),
        (eq("id", INT_MIN), false),
        (eq("id", INT_MAX - 4), false),
        (eq("id", INT_MAX), false),
        (eq("id", INT_MAX + 1), false),
        (eq("always_5", INT_MIN - 25), true),
    ];
    for (e, expected) in cases {
        assert_eq!(strict(e.clone(), &f), expected, "{e}");
    }
    for (v, expected) in [
        (INT_MIN - 25, true),
        (INT_MIN - 1, true),
        (INT_MIN, false),
        (INT_MAX - 4, false),
        (INT_MAX, false),
        (INT_MAX + 1, true),
        (INT_MAX + 6, true),
    ] {
        assert_eq!(strict(not_eq("id", v), &f), expected, "!= {v}");
        assert_eq!(
            strict(Expression::not(eq("id", v)), &f),
            expected,
            "not = {v}"
        );
    }
}

// TestStrictMetricsEvaluator.testIntegerIn / testIntegerNotIn
#[test]
fn strict_in_and_not_in() {
    let f = strict_file();
    for vs in [
        vec![INT_MIN - 25, INT_MIN - 24],
        vec![INT_MIN - 1, INT_MIN],
        vec![INT_MAX - 4, INT_MAX - 3],
        vec![INT_MAX, INT_MAX + 1],
        vec![INT_MAX + 1, INT_MAX + 2],
    ] {
        assert!(!strict(Expression::is_in("id", ints(&vs)), &f), "{vs:?}");
    }
    assert!(strict(Expression::is_in("always_5", ints(&[5, 6])), &f));
    assert!(!strict(
        Expression::is_in("all_nulls", strs(&["abc", "def"])),
        &f
    ));
    let f3 = strict_string_file("bbb", "bbb");
    assert!(!strict(
        Expression::is_in("some_nulls", strs(&["abc", "def"])),
        &f3
    ));
    assert!(!strict(
        Expression::is_in("no_nulls", strs(&["abc", "def"])),
        &f
    ));

    for (vs, expected) in [
        (vec![INT_MIN - 25, INT_MIN - 24], true),
        (vec![INT_MIN - 1, INT_MIN], false),
        (vec![INT_MAX - 4, INT_MAX - 3], false),
        (vec![INT_MAX, INT_MAX + 1], false),
        (vec![INT_MAX + 1, INT_MAX + 2], true),
        // below and above, none in between
        (vec![INT_MIN - 1, INT_MAX + 1], true),
    ] {
        assert_eq!(
            strict(Expression::not_in("id", ints(&vs)), &f),
            expected,
            "{vs:?}"
        );
    }
    assert!(!strict(Expression::not_in("always_5", ints(&[5, 6])), &f));
    assert!(strict(
        Expression::not_in("all_nulls", strs(&["abc", "def"])),
        &f
    ));
    assert!(strict(
        Expression::not_in("some_nulls", strs(&["abc", "def"])),
        &f3
    ));
    assert!(!strict(
        Expression::not_in("no_nulls", strs(&["abc", "def"])),
        &f
    ));
    // strings in a set compare by their bytes
    let g = strict_string_file("abc", "abc");
    let mut g = g;
    g.null_value_counts = Some(vec![(5, 0)]);
    assert!(strict(
        Expression::is_in("some_nulls", strs(&["abc", "x"])),
        &g
    ));
    assert!(!strict(
        Expression::is_in("some_nulls", strs(&["abd", "x"])),
        &g
    ));
    // Java 1.11 decides `starts with` and `not starts with` from the bounds too
    assert!(strict(starts("some_nulls", "a"), &g));
    assert!(strict(not_starts("some_nulls", "b"), &g));
}

// StrictMetricsEvaluator.startsWith / notStartsWith (Java 1.11)
#[test]
fn strict_starts_with() {
    let file = |lower: &str, upper: &str, nulls: i64| {
        data_file(
            50,
            Some(vec![(5, 50)]),
            Some(vec![(5, nulls)]),
            None,
            Some(vec![(5, lower.as_bytes().to_vec())]),
            Some(vec![(5, upper.as_bytes().to_vec())]),
        )
    };
    let f = file("abc", "abd", 0);
    assert!(strict(starts("some_nulls", "ab"), &f));
    assert!(strict(starts("some_nulls", "a"), &f));
    assert!(strict(starts("some_nulls", ""), &f));
    // the upper bound does not start with the prefix
    assert!(!strict(starts("some_nulls", "abc"), &f));
    // a bound shorter than the prefix
    assert!(!strict(starts("some_nulls", "abcd"), &f));
    assert!(!strict(starts("some_nulls", "b"), &f));
    assert!(strict(
        starts("some_nulls", "房东"),
        &file("房东整租", "房东整租霍营", 0)
    ));
    assert!(!strict(
        starts("some_nulls", "房东整"),
        &file("房东", "房东整租霍营", 0)
    ));
    // a null does not start with anything
    assert!(!strict(starts("some_nulls", "ab"), &file("abc", "abd", 1)));
    let mut g = f.clone();
    g.null_value_counts = None;
    assert!(!strict(starts("some_nulls", "ab"), &g));
    // null counts without the column: no nulls (as for the other comparisons)
    g.null_value_counts = Some(vec![]);
    assert!(strict(starts("some_nulls", "ab"), &g));
    // both bounds are needed
    let mut h = f.clone();
    h.upper_bounds = None;
    assert!(!strict(starts("some_nulls", "ab"), &h));
    let mut h = f.clone();
    h.lower_bounds = None;
    assert!(!strict(starts("some_nulls", "ab"), &h));

    // `not starts with`: every value is above or below the values with the prefix
    assert!(strict(not_starts("some_nulls", "b"), &f));
    assert!(strict(not_starts("some_nulls", "aa"), &f));
    assert!(strict(not_starts("some_nulls", "abe"), &f));
    assert!(strict(
        not_starts("some_nulls", "abcd0"),
        &file("abd", "abz", 0)
    ));
    assert!(!strict(not_starts("some_nulls", "ab"), &f));
    assert!(!strict(not_starts("some_nulls", "abd"), &f));
    assert!(!strict(not_starts("some_nulls", "abc"), &f));
    assert!(!strict(not_starts("some_nulls", ""), &f));
    // nulls do not start with the prefix: they match, whatever their count
    assert!(strict(
        not_starts("some_nulls", "b"),
        &file("abc", "abd", 10)
    ));
    let nulls = data_file(
        50,
        Some(vec![(5, 50)]),
        Some(vec![(5, 50)]),
        None,
        None,
        None,
    );
    assert!(strict(not_starts("some_nulls", "a"), &nulls));
    // one bound is enough
    let mut h = f.clone();
    h.upper_bounds = None;
    assert!(strict(not_starts("some_nulls", "aa"), &h));
    assert!(!strict(not_starts("some_nulls", "b"), &h));
    let mut h = f.clone();
    h.lower_bounds = None;
    assert!(strict(not_starts("some_nulls", "b"), &h));
    assert!(!strict(
        not_starts("some_nulls", "b"),
        &data_file(50, None, None, None, None, None)
    ));
    // bounds that are not UTF-8 are errors, as Java's decoding
    let bad = data_file(50, None, None, None, Some(vec![(5, vec![0xff])]), None);
    let e = not_starts("some_nulls", "b")
        .bind(&strict_schema(), true)
        .unwrap();
    assert!(StrictMetricsEvaluator::new(e).eval(&bad).is_err());

    // nested columns: never decided
    let s = nested_schema();
    let n = data_file(
        50,
        Some(vec![(11, 50)]),
        Some(vec![(11, 0)]),
        None,
        Some(vec![(11, b"abc".to_vec())]),
        Some(vec![(11, b"abd".to_vec())]),
    );
    assert!(!strict_in(&s, starts("location.name", "ab"), &n));
    assert!(!strict_in(&s, not_starts("location.name", "b"), &n));
}

// InclusiveMetricsEvaluator.uniqueValue decodes both bounds before it looks at the NaN
// count: a malformed bound is an error even for a column with NaNs
#[test]
fn unique_value_decodes_bounds_before_the_nan_count() {
    let s = inclusive_schema();
    let f = data_file(
        50,
        Some(vec![(8, 50)]),
        Some(vec![(8, 0)]),
        Some(vec![(8, 3)]),
        Some(vec![(8, vec![1, 2, 3])]),
        Some(vec![(8, bytes(Literal::Float(1.0), P::Float))]),
    );
    let e = not_eq("some_nans", 1.0_f32).bind(&s, true).unwrap();
    assert!(InclusiveMetricsEvaluator::new(e).eval(&f).is_err());
    // well-formed bounds: the NaNs rule the unique value out
    let mut g = f.clone();
    g.lower_bounds = Some(vec![(8, bytes(Literal::Float(1.0), P::Float))]);
    assert!(inc_in(&s, not_eq("some_nans", 1.0_f32), &g));
    g.nan_value_counts = Some(vec![(8, 0)]);
    assert!(!inc_in(&s, not_eq("some_nans", 1.0_f32), &g));
}

// TestMetricsEvaluatorsNaNHandling.testStrictMetricsEvaluator*
#[test]
fn strict_nan_bounds() {
    let s = nan_schema();
    let f = nan_file();
    let st = |e: Expression| strict_in(&s, e, &f);
    for op in [O::Lt, O::LtEq] {
        let c = |col: &str, v: f64| Expression::compare(op, col, v);
        assert!(!st(c("all_nan", 1.0)));
        assert!(!st(c("max_nan", 10.0)));
        assert!(!st(c("min_max_nan", 1.0)));
        assert!(!st(c("all_nan_null_bounds", 1.0)));
        assert!(!st(c("some_nan_correct_bounds", 30.0)));
    }
    for op in [O::Gt, O::GtEq] {
        let c = |col: &str, v: f64| Expression::compare(op, col, v);
        assert!(!st(c("all_nan", 1.0)));
        assert!(st(c("max_nan", 1.0)));
        assert!(!st(c("max_nan", 10.0)));
        assert!(!st(c("min_max_nan", 1.0)));
        assert!(!st(c("all_nan_null_bounds", 1.0)));
        assert!(!st(Expression::compare(
            op,
            "some_nan_correct_bounds",
            30_i32
        )));
    }
    assert!(st(not_eq("all_nan", 1.0)));
    assert!(st(not_eq("max_nan", 1.0)));
    assert!(!st(not_eq("max_nan", 10.0)));
    assert!(!st(not_eq("min_max_nan", 1.0)));
    assert!(st(not_eq("all_nan_null_bounds", 1.0)));
    assert!(st(not_eq("some_nan_correct_bounds", 1.0)));
    assert!(!st(not_eq("some_nan_correct_bounds", 10.0)));
    assert!(st(not_eq("some_nan_correct_bounds", 30_i32)));
    for (col, v) in [
        ("all_nan", 1.0),
        ("max_nan", 1.0),
        ("max_nan", 10.0),
        ("min_max_nan", 1.0),
        ("all_nan_null_bounds", 1.0),
        ("some_nan_correct_bounds", 1.0),
        ("some_nan_correct_bounds", 10.0),
        ("some_nan_correct_bounds", 30.0),
    ] {
        assert!(!st(eq(col, v)), "{col} = {v}");
        assert!(!st(Expression::is_in(
            col,
            vec![Datum::Double(v), Datum::Double(v + 0.5)]
        )));
    }
    let three = || vec![Datum::Double(1.0), Datum::Double(10.0), Datum::Double(30.0)];
    assert!(st(Expression::not_in("all_nan", three())));
    assert!(!st(Expression::not_in("max_nan", three())));
    assert!(st(Expression::not_in(
        "max_nan",
        vec![Datum::Double(1.0), Datum::Double(2.0)]
    )));
    assert!(!st(Expression::not_in("min_max_nan", three())));
    assert!(st(Expression::not_in("all_nan_null_bounds", three())));
    assert!(!st(Expression::not_in("some_nan_correct_bounds", three())));
    assert!(st(Expression::not_in(
        "some_nan_correct_bounds",
        vec![Datum::Double(1.0), Datum::Double(2.0)]
    )));
    assert!(st(Expression::not_in(
        "some_nan_correct_bounds",
        vec![Datum::Double(30.0), Datum::Double(31.0)]
    )));
}
