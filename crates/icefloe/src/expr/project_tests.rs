//! Projection tests, mirroring the Java reference's `TestTimestampsProjection`,
//! `TestDatesProjection`, `TestBucketingProjection`, `TestTruncatesProjection`,
//! `TestStartsWith`, `TestNotStartsWith` and `TestProjection` (values from those tests,
//! expected results written as partition values).

#![allow(clippy::unwrap_used, clippy::panic)]

use super::*;
use crate::expr::{BoundExpression, Datum, Expression, Operation as O};
use crate::spec::literal::days_from_civil;
use crate::spec::partition::{PartitionField, PartitionSpec};
use crate::spec::types::NestedField;
use crate::spec::{PrimitiveType as P, Schema, Transform};

fn schema() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::optional(1, "ts", P::Timestamp.into()),
            NestedField::optional(2, "d", P::Date.into()),
            NestedField::optional(3, "i", P::Int.into()),
            NestedField::optional(4, "l", P::Long.into()),
            NestedField::optional(
                5,
                "dec",
                P::Decimal {
                    precision: 9,
                    scale: 2,
                }
                .into(),
            ),
            NestedField::optional(6, "s", P::String.into()),
            NestedField::optional(7, "b", P::Binary.into()),
            NestedField::optional(8, "tsn", P::TimestamptzNs.into()),
            NestedField::optional(9, "f", P::Float.into()),
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

fn bind(e: Expression) -> BoundExpression {
    e.bind(&schema(), true).unwrap()
}

/// Both projections of `e`, as text, after checking that they bind to the partition type.
fn both(spec: &PartitionSpec, e: Expression) -> (String, String) {
    let bound = bind(e);
    let inc = inclusive_projection(&bound, spec).unwrap();
    let strict = strict_projection(&bound, spec).unwrap();
    let ptype = spec.partition_type(&schema()).unwrap();
    inc.bind_struct(&ptype, true).unwrap();
    strict.bind_struct(&ptype, true).unwrap();
    (inc.to_string(), strict.to_string())
}

fn ts(s: &str) -> Datum {
    Datum::String(s.to_string())
}

fn cmp(op: O, col: &str, v: impl Into<Datum>) -> Expression {
    Expression::compare(op, col, v)
}

fn month(y: i32, m: i32) -> i32 {
    (y - 1970) * 12 + (m - 1)
}

fn day(y: i64, m: u32, d: u32) -> i64 {
    days_from_civil(y, m, d)
}

/// Asserts inclusive and strict projections of each operation against `value`.
#[track_caller]
fn check_ops(spec: &PartitionSpec, col: &str, value: Datum, expected: &[(O, &str, &str)]) {
    for (op, inc, strict) in expected {
        let got = both(spec, cmp(*op, col, value.clone()));
        assert_eq!(
            (got.0.as_str(), got.1.as_str()),
            (*inc, *strict),
            "{col} {} {value}",
            op.symbol()
        );
    }
}

// TestTimestampsProjection.testMonthStrictLowerBound / testMonthInclusiveLowerBound
#[test]
fn timestamp_month_lower_bound() {
    let s = spec(&[(1, "ts_month", "month")]);
    let m = month(2017, 12);
    check_ops(
        &s,
        "ts",
        ts("2017-12-01T00:00:00"),
        &[
            (
                O::Lt,
                &format!("ts_month <= {}", m - 1),
                &format!("ts_month < {m}"),
            ),
            (
                O::LtEq,
                &format!("ts_month <= {m}"),
                &format!("ts_month < {m}"),
            ),
            (
                O::Gt,
                &format!("ts_month >= {m}"),
                &format!("ts_month > {m}"),
            ),
            (
                O::GtEq,
                &format!("ts_month >= {m}"),
                &format!("ts_month > {}", m - 1),
            ),
            (O::Eq, &format!("ts_month = {m}"), "false"),
            (O::NotEq, "true", &format!("ts_month != {m}")),
        ],
    );
    let pair = vec![ts("2017-12-02T00:00:00"), ts("2017-12-01T00:00:00")];
    assert_eq!(
        both(&s, Expression::is_in("ts", pair.clone())),
        (format!("ts_month in ({m}, {m})"), "false".into())
    );
    assert_eq!(
        both(&s, Expression::not_in("ts", pair)),
        ("true".into(), format!("ts_month not in ({m}, {m})"))
    );
}

// TestTimestampsProjection.testMonthStrictUpperBound / testMonthInclusiveUpperBound
#[test]
fn timestamp_month_upper_bound() {
    let s = spec(&[(1, "ts_month", "month")]);
    let m = month(2017, 12);
    check_ops(
        &s,
        "ts",
        ts("2017-12-31T23:59:59.999999"),
        &[
            (
                O::Lt,
                &format!("ts_month <= {m}"),
                &format!("ts_month < {m}"),
            ),
            (
                O::LtEq,
                &format!("ts_month <= {m}"),
                &format!("ts_month < {}", m + 1),
            ),
            (
                O::Gt,
                &format!("ts_month >= {}", m + 1),
                &format!("ts_month > {m}"),
            ),
            (
                O::GtEq,
                &format!("ts_month >= {m}"),
                &format!("ts_month > {m}"),
            ),
        ],
    );
}

// TestTimestampsProjection.testNegativeMonthStrictLowerBound /
// testNegativeMonthInclusiveLowerBound: the pre-0.10 fix-ups
#[test]
fn timestamp_negative_month_lower_bound() {
    let s = spec(&[(1, "ts_month", "month")]);
    let jan = month(1969, 1); // -12
    check_ops(
        &s,
        "ts",
        ts("1969-01-01T00:00:00"),
        &[
            (
                O::Lt,
                &format!("ts_month <= {jan}"),
                &format!("ts_month < {jan}"),
            ),
            (
                O::LtEq,
                &format!("ts_month <= {}", jan + 1),
                &format!("ts_month < {jan}"),
            ),
            (
                O::Gt,
                &format!("ts_month >= {jan}"),
                &format!("ts_month > {}", jan + 1),
            ),
            (
                O::GtEq,
                &format!("ts_month >= {jan}"),
                &format!("ts_month > {jan}"),
            ),
            (O::Eq, &format!("ts_month in ({jan}, {})", jan + 1), "false"),
            (
                O::NotEq,
                "true",
                &format!("ts_month not in ({jan}, {})", jan + 1),
            ),
        ],
    );
    let pair = vec![ts("1969-03-01T00:00:00"), ts("1969-01-01T00:00:00")];
    let (inc, strict) = both(&s, Expression::is_in("ts", pair.clone()));
    assert_eq!(inc, "ts_month in (-12, -11, -10, -9)");
    assert_eq!(strict, "false");
    let (inc, strict) = both(&s, Expression::not_in("ts", pair));
    assert_eq!(inc, "true");
    assert_eq!(strict, "ts_month not in (-12, -11, -10, -9)");
}

// TestTimestampsProjection.testNegativeMonthStrictUpperBound /
// testNegativeMonthInclusiveUpperBound
#[test]
fn timestamp_negative_month_upper_bound() {
    let s = spec(&[(1, "ts_month", "month")]);
    check_ops(
        &s,
        "ts",
        ts("1969-12-31T23:59:59.999999"),
        &[
            (O::Lt, "ts_month <= 0", "ts_month < -1"),
            (O::LtEq, "ts_month <= 0", "ts_month < 0"),
            (O::Gt, "ts_month >= 0", "ts_month > 0"),
            (O::GtEq, "ts_month >= -1", "ts_month > 0"),
            (O::Eq, "ts_month in (-1, 0)", "false"),
            (O::NotEq, "true", "ts_month not in (-1, 0)"),
        ],
    );
}

// TestTimestampsProjection.testDayStrictEpoch / testDayInclusiveEpoch: day of a timestamp
// gets the fix-ups too (unlike day of a date)
#[test]
fn timestamp_day_epoch() {
    let s = spec(&[(1, "ts_day", "day")]);
    check_ops(
        &s,
        "ts",
        ts("1970-01-01T00:00:00"),
        &[
            (O::Lt, "ts_day <= 0", "ts_day < 0"),
            (O::LtEq, "ts_day <= 0", "ts_day < 0"),
            (O::Gt, "ts_day >= 0", "ts_day > 1"),
            (O::GtEq, "ts_day >= 0", "ts_day > 0"),
            (O::Eq, "ts_day = 0", "false"),
            (O::NotEq, "true", "ts_day != 0"),
        ],
    );
}

// TestTimestampsProjection.testHourStrictLowerBound / testHourInclusiveUpperBound
#[test]
fn timestamp_hour_bounds() {
    let s = spec(&[(1, "ts_hour", "hour")]);
    let h = day(2017, 12, 1) * 24 + 10;
    check_ops(
        &s,
        "ts",
        ts("2017-12-01T10:00:00"),
        &[
            (
                O::Lt,
                &format!("ts_hour <= {}", h - 1),
                &format!("ts_hour < {h}"),
            ),
            (
                O::GtEq,
                &format!("ts_hour >= {h}"),
                &format!("ts_hour > {}", h - 1),
            ),
        ],
    );
    check_ops(
        &s,
        "ts",
        ts("2017-12-01T10:59:59.999999"),
        &[
            (O::Lt, &format!("ts_hour <= {h}"), &format!("ts_hour < {h}")),
            (
                O::LtEq,
                &format!("ts_hour <= {h}"),
                &format!("ts_hour < {}", h + 1),
            ),
            (
                O::Gt,
                &format!("ts_hour >= {}", h + 1),
                &format!("ts_hour > {h}"),
            ),
        ],
    );
}

// TestTimestampsProjection (year) and Java's convertMicros quirk: 1969-12-31T22:00:00.999999
// is hour -3 in Java, and projections use Java's values
#[test]
fn timestamp_year_and_quirk() {
    let s = spec(&[(1, "ts_year", "year")]);
    check_ops(
        &s,
        "ts",
        ts("2017-01-01T00:00:00"),
        &[
            (O::Lt, "ts_year <= 46", "ts_year < 47"),
            (O::GtEq, "ts_year >= 47", "ts_year > 46"),
        ],
    );
    let s = spec(&[(1, "ts_hour", "hour")]);
    check_ops(
        &s,
        "ts",
        ts("1969-12-31T22:00:00.999999"),
        &[(O::Eq, "ts_hour in (-3, -2)", "false")],
    );
}

// Nanosecond timestamps project like microsecond ones (Timestamps.NANOS_TO_*)
#[test]
fn timestamp_nanos() {
    let s = spec(&[(8, "tsn_day", "day")]);
    check_ops(
        &s,
        "tsn",
        ts("1969-12-31T23:59:59.999999999+00:00"),
        &[
            (O::Lt, "tsn_day <= 0", "tsn_day < -1"),
            (O::Eq, "tsn_day in (-1, 0)", "false"),
            (O::Gt, "tsn_day >= 0", "tsn_day > 0"),
        ],
    );
}

// TestDatesProjection.testNegativeMonthStrictLowerBound / testNegativeMonthInclusive*; the day
// of a date is exact and has no fix-up (testNegativeDayStrict / testNegativeDayInclusive)
#[test]
fn date_projections() {
    let s = spec(&[(2, "d_month", "month")]);
    check_ops(
        &s,
        "d",
        Datum::String("1969-01-01".into()),
        &[
            (O::Lt, "d_month <= -12", "d_month < -12"),
            (O::LtEq, "d_month <= -11", "d_month < -12"),
            (O::Gt, "d_month >= -12", "d_month > -11"),
            (O::GtEq, "d_month >= -12", "d_month > -12"),
            (O::Eq, "d_month in (-12, -11)", "false"),
            (O::NotEq, "true", "d_month not in (-12, -11)"),
        ],
    );
    let s = spec(&[(2, "d_day", "day")]);
    let v = day(1969, 1, 1);
    check_ops(
        &s,
        "d",
        Datum::String("1969-01-01".into()),
        &[
            (
                O::Lt,
                &format!("d_day <= {}", v - 1),
                &format!("d_day < {v}"),
            ),
            (
                O::Gt,
                &format!("d_day >= {}", v + 1),
                &format!("d_day > {v}"),
            ),
            (
                O::GtEq,
                &format!("d_day >= {v}"),
                &format!("d_day > {}", v - 1),
            ),
            (O::Eq, &format!("d_day = {v}"), "false"),
            (O::NotEq, "true", &format!("d_day != {v}")),
        ],
    );
    assert!(inclusive_projection(
        &bind(cmp(O::Eq, "d", Datum::String("1969-01-01".into()))),
        &spec(&[(2, "d_hour", "hour")])
    )
    .is_err());
}

// TestBucketingProjection: only = and in project inclusively, != and not in strictly
#[test]
fn bucket_projections() {
    // Appendix B: hash(34) = 2017239379, bucket[16] = 3
    let s = spec(&[(3, "i_bucket", "bucket[16]")]);
    check_ops(
        &s,
        "i",
        Datum::Int(34),
        &[
            (O::Eq, "i_bucket = 3", "false"),
            (O::NotEq, "true", "i_bucket != 3"),
            (O::Lt, "true", "false"),
            (O::GtEq, "true", "false"),
        ],
    );
    let s = spec(&[(4, "l_bucket", "bucket[16]")]);
    let vals = vec![Datum::Long(34), Datum::Long(34), Datum::Long(35)];
    let (inc, strict) = both(&s, Expression::is_in("l", vals.clone()));
    assert!(inc.starts_with("l_bucket in (3, "), "{inc}");
    assert_eq!(strict, "false");
    let (inc, strict) = both(&s, Expression::not_in("l", vals));
    assert_eq!(inc, "true");
    assert!(strict.starts_with("l_bucket not in (3, "), "{strict}");
    let (inc, strict) = both(&s, Expression::unary(O::NotNull, "l"));
    assert_eq!(
        (inc.as_str(), strict.as_str()),
        ("l_bucket is not null", "l_bucket is not null")
    );
}

// TestTruncatesProjection.testIntegerStrictLowerBound / testIntegerInclusiveLowerBound / ...
#[test]
fn truncate_integer_projections() {
    let s = spec(&[(3, "i_trunc", "truncate[10]")]);
    check_ops(
        &s,
        "i",
        Datum::Int(100),
        &[
            (O::Lt, "i_trunc <= 90", "i_trunc < 100"),
            (O::LtEq, "i_trunc <= 100", "i_trunc < 100"),
            (O::Gt, "i_trunc >= 100", "i_trunc > 100"),
            (O::GtEq, "i_trunc >= 100", "i_trunc > 90"),
            (O::Eq, "i_trunc = 100", "false"),
            (O::NotEq, "true", "i_trunc != 100"),
        ],
    );
    check_ops(
        &s,
        "i",
        Datum::Int(99),
        &[
            (O::Lt, "i_trunc <= 90", "i_trunc < 90"),
            (O::LtEq, "i_trunc <= 90", "i_trunc < 100"),
            (O::Gt, "i_trunc >= 100", "i_trunc > 90"),
            (O::GtEq, "i_trunc >= 90", "i_trunc > 90"),
            (O::Eq, "i_trunc = 90", "false"),
            (O::NotEq, "true", "i_trunc != 90"),
        ],
    );
    // Java's int arithmetic wraps: i32::MIN - 1 is i32::MAX, and truncate[10] of i32::MIN
    // is i32::MIN - 2, which wraps to i32::MAX - 1
    check_ops(
        &s,
        "i",
        Datum::Int(i32::MIN),
        &[(O::Lt, "i_trunc <= 2147483640", "i_trunc < 2147483646")],
    );
    let (inc, strict) = both(
        &s,
        Expression::is_in("i", vec![Datum::Int(99), Datum::Int(101)]),
    );
    assert_eq!(
        (inc.as_str(), strict.as_str()),
        ("i_trunc in (90, 100)", "false")
    );
    let s = spec(&[(4, "l_trunc", "truncate[10]")]);
    check_ops(
        &s,
        "l",
        Datum::Long(-1),
        &[
            (O::Gt, "l_trunc >= 0", "l_trunc > -10"),
            (O::GtEq, "l_trunc >= -10", "l_trunc > -10"),
        ],
    );
}

// TestTruncatesProjection.testDecimalStrictLowerBound / testDecimalInclusiveLowerBound
#[test]
fn truncate_decimal_projections() {
    let s = spec(&[(5, "dec_trunc", "truncate[10]")]);
    check_ops(
        &s,
        "dec",
        Datum::decimal("100.00").unwrap(),
        &[
            (O::Lt, "dec_trunc <= 99.90", "dec_trunc < 100.00"),
            (O::LtEq, "dec_trunc <= 100.00", "dec_trunc < 100.00"),
            (O::Gt, "dec_trunc >= 100.00", "dec_trunc > 100.00"),
            (O::GtEq, "dec_trunc >= 100.00", "dec_trunc > 99.90"),
            (O::Eq, "dec_trunc = 100.00", "false"),
            (O::NotEq, "true", "dec_trunc != 100.00"),
        ],
    );
}

// TestTruncatesProjection.testStringStrict / testStringInclusive / testBinary*
#[test]
fn truncate_string_and_binary_projections() {
    let s = spec(&[(6, "s_trunc", "truncate[5]")]);
    check_ops(
        &s,
        "s",
        Datum::String("abcdefg".into()),
        &[
            (O::Lt, "s_trunc <= 'abcde'", "s_trunc < 'abcde'"),
            (O::LtEq, "s_trunc <= 'abcde'", "s_trunc < 'abcde'"),
            (O::Gt, "s_trunc >= 'abcde'", "s_trunc > 'abcde'"),
            (O::GtEq, "s_trunc >= 'abcde'", "s_trunc > 'abcde'"),
            (O::Eq, "s_trunc = 'abcde'", "false"),
            (O::NotEq, "true", "s_trunc != 'abcde'"),
        ],
    );
    let s = spec(&[(7, "b_trunc", "truncate[5]")]);
    check_ops(
        &s,
        "b",
        Datum::Binary(b"abcdefg".to_vec()),
        &[
            (O::Lt, "b_trunc <= X'6162636465'", "b_trunc < X'6162636465'"),
            (O::Eq, "b_trunc = X'6162636465'", "false"),
            (O::NotEq, "true", "b_trunc != X'6162636465'"),
        ],
    );
}

// TestStartsWith / TestNotStartsWith: the prefix's length against the width
#[test]
fn truncate_starts_with() {
    let s = spec(&[(6, "s_trunc", "truncate[4]")]);
    let sw = |v: &str| both(&s, cmp(O::StartsWith, "s", v));
    let nsw = |v: &str| both(&s, cmp(O::NotStartsWith, "s", v));
    assert_eq!(
        sw("ab"),
        (
            "s_trunc starts with 'ab'".into(),
            "s_trunc starts with 'ab'".into()
        )
    );
    assert_eq!(
        sw("abcd"),
        ("s_trunc = 'abcd'".into(), "s_trunc = 'abcd'".into())
    );
    assert_eq!(
        sw("abcde"),
        ("s_trunc starts with 'abcd'".into(), "false".into())
    );
    assert_eq!(
        nsw("ab"),
        (
            "s_trunc not starts with 'ab'".into(),
            "s_trunc not starts with 'ab'".into()
        )
    );
    assert_eq!(
        nsw("abcd"),
        ("s_trunc != 'abcd'".into(), "s_trunc != 'abcd'".into())
    );
    assert_eq!(
        nsw("abcde"),
        ("true".into(), "s_trunc not starts with 'abcd'".into())
    );
    // Java compares the UTF-16 length with the width but truncates by code points: three
    // emoji are six UTF-16 units, "longer" than 4, and truncate to themselves
    assert_eq!(
        sw("😀😁😂"),
        ("s_trunc starts with '😀😁😂'".into(), "false".into())
    );
    assert_eq!(
        nsw("😀😁"),
        ("s_trunc != '😀😁'".into(), "s_trunc != '😀😁'".into())
    );
    // identity keeps starts with both ways
    let s = spec(&[(6, "s_id", "identity")]);
    assert_eq!(
        both(&s, cmp(O::NotStartsWith, "s", "abcde")),
        (
            "s_id not starts with 'abcde'".into(),
            "s_id not starts with 'abcde'".into()
        )
    );
}

// TestProjection.testIdentityProjection / testCaseInsensitiveIdentityProjection: identity
// projects every predicate as it is
#[test]
fn identity_projection() {
    let s = spec(&[(3, "i_id", "identity"), (9, "f_id", "identity")]);
    let cases = [
        (cmp(O::Lt, "i", 100_i32), "i_id < 100"),
        (cmp(O::NotEq, "i", 100_i32), "i_id != 100"),
        (Expression::unary(O::IsNull, "i"), "i_id is null"),
        (Expression::unary(O::IsNan, "f"), "f_id is nan"),
        (
            Expression::not_in("i", vec![Datum::Int(5), Datum::Int(6)]),
            "i_id not in (5, 6)",
        ),
    ];
    for (e, want) in cases {
        let (inc, strict) = both(&s, e);
        assert_eq!((inc.as_str(), strict.as_str()), (want, want));
    }
}

// TestProjection.testBadSparkPartitionFilter / void and unknown transforms: no projection
#[test]
fn void_unknown_and_unpartitioned_columns() {
    let s = spec(&[(3, "i_void", "void"), (4, "l_z", "zorder")]);
    for col in ["i", "l", "s"] {
        let e = if col == "s" {
            cmp(O::Eq, col, "x")
        } else {
            cmp(O::Eq, col, 5_i32)
        };
        assert_eq!(both(&s, e), ("true".into(), "false".into()), "{col}");
    }
    // AND/OR simplify around the constants
    let e = Expression::Or(
        Box::new(cmp(O::Eq, "i", 5_i32)),
        Box::new(cmp(O::Eq, "ts", ts("2017-12-01T00:00:00"))),
    );
    let s = spec(&[(1, "ts_day", "day")]);
    assert_eq!(both(&s, e), ("true".into(), "false".into()));
    let e = Expression::And(
        Box::new(cmp(O::Eq, "i", 5_i32)),
        Box::new(cmp(O::Lt, "ts", ts("2017-12-01T00:00:00"))),
    );
    let d = day(2017, 12, 1);
    assert_eq!(
        both(&s, e),
        (format!("ts_day <= {}", d - 1), "false".into())
    );
}

// Projections' comments: several fields on one column are ANDed (inclusive) and ORed
// (strict), e.g. day(ts) and hour(ts) for ts > 2019-01-01T01:00:00
#[test]
fn several_fields_on_one_column() {
    let s = spec(&[(1, "ts_day", "day"), (1, "ts_hour", "hour")]);
    let d = day(2019, 1, 1);
    let h = d * 24 + 1;
    let (inc, strict) = both(&s, cmp(O::Gt, "ts", ts("2019-01-01T01:00:00")));
    assert_eq!(inc, format!("(ts_day >= {d} and ts_hour >= {h})"));
    assert_eq!(strict, format!("(ts_day > {d} or ts_hour > {h})"));
    let s = spec(&[(3, "b7", "bucket[7]"), (3, "b5", "bucket[5]")]);
    let (inc, strict) = both(&s, cmp(O::Eq, "i", 34_i32));
    let b7 = crate::spec::transform::bucket_i64(34, 7);
    let b5 = crate::spec::transform::bucket_i64(34, 5);
    assert_eq!(inc, format!("(b7 = {b7} and b5 = {b5})"));
    assert_eq!(strict, "false");
    // one field with no projection leaves the other
    let s = spec(&[(3, "i_void", "void"), (3, "i_trunc", "truncate[10]")]);
    assert_eq!(
        both(&s, cmp(O::Lt, "i", 100_i32)),
        ("i_trunc <= 90".into(), "i_trunc < 100".into())
    );
}

#[test]
fn a_transform_that_cannot_apply_is_an_error() {
    let s = spec(&[(9, "f_bucket", "bucket[4]")]);
    assert!(inclusive_projection(&bind(cmp(O::Eq, "f", 1.0_f32)), &s).is_err());
    assert!(project_field(
        &s.fields[0],
        match &bind(cmp(O::Eq, "f", 1.0_f32)) {
            BoundExpression::Predicate(p) => p,
            _ => unreachable!(),
        },
        ProjectionKind::Strict
    )
    .is_err());
    assert_eq!(
        Transform::Bucket(4).to_string(),
        s.fields[0].transform.to_string()
    );
}
