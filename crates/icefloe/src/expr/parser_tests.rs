#![allow(clippy::unwrap_used, clippy::panic)]

use super::super::{BoundExpression, Datum, Expression, Operation as O};
use crate::error::Error;
use crate::spec::types::NestedField;
use crate::spec::{Literal, PrimitiveType as P, Schema, Type};

fn parse(text: &str) -> Expression {
    match Expression::parse(text) {
        Ok(e) => e,
        Err(e) => panic!("{text:?}: {e}"),
    }
}

fn err(text: &str) -> String {
    match Expression::parse(text) {
        Ok(e) => panic!("{text:?} parsed as {e:?}"),
        Err(e @ Error::InvalidArgument { .. }) => e.to_string(),
        Err(other) => panic!("{text:?}: not an invalid-argument error: {other:?}"),
    }
}

fn cmp(op: O, term: &str, v: impl Into<Datum>) -> Expression {
    Expression::compare(op, term, v)
}

fn and(l: Expression, r: Expression) -> Expression {
    Expression::And(Box::new(l), Box::new(r))
}

fn or(l: Expression, r: Expression) -> Expression {
    Expression::Or(Box::new(l), Box::new(r))
}

fn not(c: Expression) -> Expression {
    Expression::Not(Box::new(c))
}

fn dec(text: &str) -> Datum {
    Datum::decimal(text).unwrap()
}

#[test]
fn comparison_operators() {
    for (sym, op) in [
        ("=", O::Eq),
        ("==", O::Eq),
        ("!=", O::NotEq),
        ("<>", O::NotEq),
        ("<", O::Lt),
        ("<=", O::LtEq),
        (">", O::Gt),
        (">=", O::GtEq),
    ] {
        assert_eq!(parse(&format!("id {sym} 5")), cmp(op, "id", 5_i64), "{sym}");
        assert_eq!(parse(&format!("id{sym}5")), cmp(op, "id", 5_i64), "{sym}");
        // a value first flips the comparison, as in PyIceberg
        assert_eq!(
            parse(&format!("5 {sym} id")),
            cmp(op.flip(), "id", 5_i64),
            "{sym}"
        );
    }
    assert_eq!(parse("-5 < x"), cmp(O::Gt, "x", -5_i64));
    assert_eq!(parse("'a' = s"), cmp(O::Eq, "s", "a"));
}

#[test]
fn unary_set_and_string_operators() {
    assert_eq!(parse("x is null"), Expression::unary(O::IsNull, "x"));
    assert_eq!(parse("x IS NOT NULL"), Expression::unary(O::NotNull, "x"));
    assert_eq!(parse("x is nan"), Expression::unary(O::IsNan, "x"));
    assert_eq!(parse("x Is Not NaN"), Expression::unary(O::NotNan, "x"));
    assert_eq!(
        parse("x in (1, 2, 3)"),
        Expression::is_in("x", vec![1_i64.into(), 2_i64.into(), 3_i64.into()])
    );
    assert_eq!(
        parse("x not in ('a','b')"),
        Expression::not_in("x", vec!["a".into(), "b".into()])
    );
    assert_eq!(parse("x in ()"), Expression::is_in("x", vec![]));
    assert_eq!(
        parse("x in (1, 'a', 1.5, true)"),
        Expression::is_in("x", vec![1_i64.into(), "a".into(), dec("1.5"), true.into()])
    );
    assert_eq!(
        parse("name starts with 'ab'"),
        cmp(O::StartsWith, "name", "ab")
    );
    assert_eq!(
        parse("name NOT STARTS WITH 'ab'"),
        cmp(O::NotStartsWith, "name", "ab")
    );
    assert_eq!(
        parse("x between 1 and 5"),
        and(cmp(O::GtEq, "x", 1_i64), cmp(O::LtEq, "x", 5_i64))
    );
    assert_eq!(
        parse("x not between 1 and 5 and y = 2"),
        and(
            not(and(cmp(O::GtEq, "x", 1_i64), cmp(O::LtEq, "x", 5_i64))),
            cmp(O::Eq, "y", 2_i64)
        )
    );
    assert_eq!(parse("true"), Expression::True);
    assert_eq!(parse(" FALSE "), Expression::False);
}

#[test]
fn like_is_a_prefix_match_or_equality() {
    assert_eq!(parse("name like 'ab%'"), cmp(O::StartsWith, "name", "ab"));
    assert_eq!(
        parse("name not like 'ab%'"),
        cmp(O::NotStartsWith, "name", "ab")
    );
    assert_eq!(parse("name like 'ab'"), cmp(O::Eq, "name", "ab"));
    assert_eq!(parse("name not like 'ab'"), cmp(O::NotEq, "name", "ab"));
    assert_eq!(parse("name like '%'"), cmp(O::StartsWith, "name", ""));
    assert_eq!(
        parse(r"name like '50\%\_off\\%'"),
        cmp(O::StartsWith, "name", r"50%_off\")
    );
    assert_eq!(parse(r"name like 'a\b'"), cmp(O::Eq, "name", r"a\b"));
    let e = err("name like 'a%b'");
    assert!(
        e.contains("only at the end") && e.contains("column 11"),
        "{e}"
    );
    let e = err("name like 'a_b%'");
    assert!(e.contains("'_'") && e.contains("column 11"), "{e}");
    let e = err("name like 5");
    assert!(e.contains("expected a string pattern after 'like'"), "{e}");
}

#[test]
fn precedence_is_not_and_or() {
    let (a, b, c) = (
        cmp(O::Eq, "a", 1_i64),
        cmp(O::Eq, "b", 2_i64),
        cmp(O::Eq, "c", 3_i64),
    );
    assert_eq!(
        parse("a = 1 or b = 2 and c = 3"),
        or(a.clone(), and(b.clone(), c.clone()))
    );
    assert_eq!(
        parse("a = 1 and b = 2 or c = 3"),
        or(and(a.clone(), b.clone()), c.clone())
    );
    assert_eq!(parse("not a = 1 and b = 2"), and(not(a.clone()), b.clone()));
    assert_eq!(
        parse("not (a = 1 and b = 2)"),
        not(and(a.clone(), b.clone()))
    );
    assert_eq!(
        parse("(a = 1 or b = 2) and c = 3"),
        and(or(a.clone(), b.clone()), c.clone())
    );
    assert_eq!(parse("not not a = 1"), not(not(a.clone())));
    assert_eq!(
        parse("not (x is null or y in (1, 2, 3))"),
        not(or(
            Expression::unary(O::IsNull, "x"),
            Expression::is_in("y", vec![1_i64.into(), 2_i64.into(), 3_i64.into()])
        ))
    );
    assert_eq!(
        parse("a = 1 AND b = 2 Or c = 3"),
        or(and(a.clone(), b.clone()), c.clone())
    );
    // chains of one operator group left to right (as a balanced tree, so that long
    // chains stay shallow)
    assert_eq!(
        parse("a = 1 and b = 2 and c = 3"),
        and(and(a.clone(), b.clone()), c.clone())
    );
    assert_eq!(
        parse("a = 1 and b = 2 and c = 3 and a = 1"),
        and(and(a.clone(), b.clone()), and(c.clone(), a.clone()))
    );
}

#[test]
fn long_chains_stay_shallow() {
    fn depth(e: &Expression) -> usize {
        match e {
            Expression::And(l, r) | Expression::Or(l, r) => 1 + depth(l).max(depth(r)),
            Expression::Not(c) => 1 + depth(c),
            _ => 0,
        }
    }
    let text = (0..10_000)
        .map(|i| format!("id = {i}"))
        .collect::<Vec<_>>()
        .join(" or ");
    let e = parse(&text);
    assert!(depth(&e) <= 14, "{}", depth(&e));
    assert_eq!(e.references(), vec!["id"]);
    // nesting is bounded
    let deep = format!("{}x = 1{}", "(".repeat(300), ")".repeat(300));
    assert!(err(&deep).contains("nests more than"));
    let deep = format!("{}x = 1", "not ".repeat(300));
    assert!(err(&deep).contains("nests more than"));
    let ok = format!("{}x = 1{}", "(".repeat(200), ")".repeat(200));
    assert_eq!(parse(&ok), cmp(O::Eq, "x", 1_i64));
}

#[test]
fn values_are_typed_by_how_they_are_written() {
    let v = |text: &str| match parse(&format!("x = {text}")) {
        Expression::Predicate(p) => p.values[0].clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(v("42"), Datum::Long(42));
    assert_eq!(v("-42"), Datum::Long(-42));
    assert_eq!(v("+42"), Datum::Long(42));
    assert_eq!(v("- 42"), Datum::Long(-42));
    assert_eq!(v("9223372036854775807"), Datum::Long(i64::MAX));
    assert_eq!(v("-9223372036854775808"), Datum::Long(i64::MIN));
    assert_eq!(
        v("1.50"),
        Datum::Decimal {
            unscaled: 150,
            scale: 2
        }
    );
    assert_eq!(
        v("-0.001"),
        Datum::Decimal {
            unscaled: -1,
            scale: 3
        }
    );
    assert_eq!(
        v(".5"),
        Datum::Decimal {
            unscaled: 5,
            scale: 1
        }
    );
    assert_eq!(
        v("5."),
        Datum::Decimal {
            unscaled: 5,
            scale: 0
        }
    );
    assert_eq!(
        v("12345678901234567890.123456789012345678"),
        dec("12345678901234567890.123456789012345678")
    );
    assert_eq!(v("1e3"), Datum::Double(1000.0));
    assert_eq!(v("1.5E-3"), Datum::Double(0.0015));
    assert_eq!(v("-2e+2"), Datum::Double(-200.0));
    assert_eq!(v("1e999"), Datum::Double(f64::INFINITY));
    assert_eq!(v("inf"), Datum::Double(f64::INFINITY));
    assert_eq!(v("-Infinity"), Datum::Double(f64::NEG_INFINITY));
    assert!(v("NaN").is_nan());
    assert_eq!(v("true"), Datum::Boolean(true));
    assert_eq!(v("False"), Datum::Boolean(false));
    assert_eq!(v("'it''s'"), Datum::String("it's".into()));
    assert_eq!(v("''"), Datum::String(String::new()));
    assert_eq!(
        v("'héllo \"x\" \n ok'"),
        Datum::String("héllo \"x\" \n ok".into())
    );
    assert_eq!(v("X'0aFF'"), Datum::Binary(vec![0x0a, 0xff]));
    assert_eq!(v("x''"), Datum::Binary(vec![]));
    assert_eq!(
        v("'2024-01-01T00:00:00'"),
        Datum::String("2024-01-01T00:00:00".into())
    );
}

#[test]
fn doubles_print_with_an_exponent_to_read_back_as_doubles() {
    for (v, text) in [
        (1.5, "x = 1.5e0"),
        (-0.1, "x = -0.1e0"),
        (100.0, "x = 100.0e0"),
        (1e16, "x = 1e16"),
        (1.5e-7, "x = 1.5e-7"),
        (f64::INFINITY, "x = inf"),
        (f64::NEG_INFINITY, "x = -inf"),
        (f64::NAN, "x = NaN"),
    ] {
        let e = cmp(O::Eq, "x", v);
        assert_eq!(e.to_string(), text);
        if !v.is_nan() {
            assert_eq!(parse(text), e);
        }
    }
    assert_eq!(cmp(O::Eq, "x", 0.1_f32).to_string(), "x = 0.1e0");
}

#[test]
fn column_names() {
    let term = |text: &str| match parse(text) {
        Expression::Predicate(p) => p.term,
        other => panic!("{other:?}"),
    };
    assert_eq!(term("location.lat > 1"), "location.lat");
    assert_eq!(term("a . b . c is null"), "a.b.c");
    assert_eq!(term("\"my col\" = 1"), "my col");
    assert_eq!(term("`my col` = 1"), "my col");
    assert_eq!(term("\"say \"\"hi\"\"\" = 1"), "say \"hi\"");
    assert_eq!(term("`a``b` = 1"), "a`b");
    assert_eq!(term("\"a b\".c = 1"), "a b.c");
    assert_eq!(term("`x`.\"y\".z = 1"), "x.y.z");
    assert_eq!(term("_a$1 = 1"), "_a$1");
    assert_eq!(term("größe = 1"), "größe");
    assert_eq!(term("x1 = 1"), "x1");
    // keywords are column names where an operator follows them
    assert_eq!(term("not is null"), "not");
    assert_eq!(term("true = false"), "true");
    assert_eq!(term("in in (1)"), "in");
    assert_eq!(term("not not in (1)"), "not");
    assert_eq!(term("starts starts with 'a'"), "starts");
    assert_eq!(term("is.not is not nan"), "is.not");
    assert_eq!(
        parse("not not is null and and = 1 or or < 2"),
        or(
            and(
                not(Expression::unary(O::IsNull, "not")),
                cmp(O::Eq, "and", 1_i64)
            ),
            cmp(O::Lt, "or", 2_i64)
        )
    );
    assert_eq!(
        parse("between between 1 and 2"),
        and(
            cmp(O::GtEq, "between", 1_i64),
            cmp(O::LtEq, "between", 2_i64)
        )
    );
    assert_eq!(
        parse("true and false"),
        and(Expression::True, Expression::False)
    );
}

#[test]
fn errors_say_what_was_expected_and_where() {
    for (text, expected) in [
        (
            "id > ",
            "expected a value after '>' (found the end of the filter) at column 6",
        ),
        ("id > and", "expected a value after '>' (found 'and') at column 6"),
        ("id >  and x = 1", "expected a value after '>' (found 'and') at column 7"),
        (
            "id = null",
            "to test for null, write 'is null' (found 'null') at column 6",
        ),
        ("id <> null", "write 'is not null'"),
        (
            "id 5",
            "expected an operator (=, !=, <, <=, >, >=, is, in, between, like, starts with) \
             after the column name 'id' (found the number 5) at column 4",
        ),
        ("x is", "expected 'null' or 'nan' after 'is' (found the end of the filter) at column 5"),
        ("x is not 5", "expected 'null' or 'nan' after 'is not' (found the number 5) at column 10"),
        ("x in 1", "expected '(' after 'in' (found the number 1) at column 6"),
        ("x not in (1 2)", "expected ',' or ')' in the list of 'not in' (found the number 2) at column 13"),
        ("x in (1,)", "expected a value in the list of 'in' (found ')') at column 9"),
        ("x between 1 or 2", "expected 'and' after the lower bound of 'between' (found 'or') at column 13"),
        ("x starts 'a'", "expected 'with' after 'starts' (found the string 'a') at column 10"),
        ("(a = 1", "expected ')' to close the '(' at column 1 (found the end of the filter) at column 7"),
        ("a = 1)", "expected 'and', 'or' or the end of the filter (found ')') at column 6"),
        ("a = 1 b = 2", "expected 'and', 'or' or the end of the filter (found 'b') at column 7"),
        ("", "expected a predicate, 'not', 'true', 'false' or '(' (found the end of the filter) at column 1"),
        ("a = 1 and", "expected a predicate, 'not', 'true', 'false' or '(' (found the end of the filter) at column 10"),
        ("a = 'abc", "unterminated string (no closing ') at column 5"),
        ("\"abc = 1", "unterminated quoted column name (no closing \") at column 1"),
        ("\"\" = 1", "empty quoted column name at column 1"),
        ("a = 1 # 2", "unexpected character '#' at column 7"),
        ("a ! 1", "unexpected character '!' (write '!=' for not equal) at column 3"),
        ("a = 1.2.3", "unexpected '.' after the number 1.2 at column 5"),
        ("a = 12abc", "unexpected 'a' after the number 12 at column 5"),
        ("a = 1e", "expected the digits of the exponent in the number at column 5"),
        ("a = 99999999999999999999", "the integer 99999999999999999999 is out of the range of a long at column 5"),
        ("a = X'abc'", "expected an even number of hex digits in the binary value at column 5"),
        ("a = -'x'", "expected a number after '-' (found the string 'x') at column 6"),
        ("a = b", "expected a value after '=' (found 'b') at column 5"),
        ("a. = 1", "expected a column name after '.' (found '=') at column 4"),
        ("5 = 6", "expected a column name after '=' (found the number 6) at column 5"),
        ("5 in (1)", "expected a comparison (=, !=, <, <=, >, >=) after the value at the start of a predicate (found 'in') at column 3"),
        ("x = 1 and\n  y >", "expected a value after '>' (found the end of the filter) at line 2, column 6"),
        ("\"é\" > ", "at column 7"),
    ] {
        let e = err(text);
        assert!(e.starts_with("cannot parse filter: "), "{text:?}: {e}");
        assert!(e.contains(expected), "{text:?}:\n  got      {e}\n  expected {expected}");
    }
}

#[test]
fn parses_through_from_str() {
    let e: Expression = "id > 5".parse().unwrap();
    assert_eq!(e, cmp(O::Gt, "id", 5_i64));
    assert!("id >".parse::<Expression>().is_err());
}

// ------------------------------------------------------------------------------------
// Display reads back: generated expressions
// ------------------------------------------------------------------------------------

/// A small deterministic generator (xorshift64*), so that failures reproduce.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    fn i64(&mut self) -> i64 {
        match self.below(4) {
            0 => *self.pick(&[0, 1, -1, i64::MAX, i64::MIN]),
            1 => self.next() as i64,
            _ => (self.next() % 2000) as i64 - 1000,
        }
    }

    fn string(&mut self) -> String {
        let alphabet = [
            "a", "Z", "0", " ", "'", "''", "\"", "`", "%", "_", "\\", "é", "日本", "\n", "\t",
            "and", "or", ")", "(", ",", "X'",
        ];
        (0..self.below(6)).map(|_| *self.pick(&alphabet)).collect()
    }

    fn name(&mut self) -> String {
        let parts = [
            "id", "x", "a_b", "X1", "_", "not", "and", "or", "is", "in", "null", "nan", "true",
            "False", "like", "between", "starts", "with", "inf", "my col", "a\"b", "c`d", "1abc",
            "a-b", "a$b", "é", "it's", "a.b", " ", "ANDx",
        ];
        let n = 1 + self.below(3);
        (0..n)
            .map(|_| *self.pick(&parts))
            .collect::<Vec<_>>()
            .join(".")
    }

    /// A value in a form the parser produces, so that it reads back equal.
    fn exact_datum(&mut self) -> Datum {
        match self.below(7) {
            0 => Datum::Boolean(self.below(2) == 0),
            1 => Datum::Long(self.i64()),
            2 => {
                let scale = 1 + self.below(12) as u32;
                let unscaled = if self.below(4) == 0 {
                    i128::from(self.next()) * i128::from(self.next() >> 4)
                } else {
                    i128::from(self.i64() % 100_000)
                };
                Datum::Decimal {
                    unscaled: if self.below(2) == 0 {
                        unscaled
                    } else {
                        -unscaled
                    },
                    scale,
                }
            }
            3 => loop {
                // any double but NaN (which is not equal to itself)
                let v = match self.below(3) {
                    0 => *self.pick(&[0.0, -0.0, 1.5, 0.1, 1e16, f64::INFINITY, f64::MIN]),
                    1 => (self.next() % 100_000) as f64 / 64.0,
                    _ => f64::from_bits(self.next()),
                };
                if !v.is_nan() {
                    break Datum::Double(v);
                }
            },
            4 => Datum::Binary((0..self.below(5)).map(|_| self.next() as u8).collect()),
            _ => Datum::String(self.string()),
        }
    }

    fn predicate(&mut self) -> Expression {
        let ops = [
            O::IsNull,
            O::NotNull,
            O::IsNan,
            O::NotNan,
            O::Lt,
            O::LtEq,
            O::Gt,
            O::GtEq,
            O::Eq,
            O::NotEq,
            O::StartsWith,
            O::NotStartsWith,
            O::In,
            O::NotIn,
        ];
        let op = *self.pick(&ops);
        let n = if op.is_unary() {
            0
        } else if op.is_set() {
            self.below(5)
        } else {
            1
        };
        let values = (0..n).map(|_| self.exact_datum()).collect();
        let name = self.name();
        Expression::predicate(op, name, values)
    }

    fn expression(&mut self, depth: usize) -> Expression {
        let choice = if depth == 0 { 0 } else { self.below(6) };
        match choice {
            0 | 1 => match self.below(12) {
                0 => Expression::True,
                1 => Expression::False,
                _ => self.predicate(),
            },
            2 => and(self.expression(depth - 1), self.expression(depth - 1)),
            3 => or(self.expression(depth - 1), self.expression(depth - 1)),
            4 => not(self.expression(depth - 1)),
            _ => self.predicate(),
        }
    }
}

#[test]
fn display_parses_back_to_an_equal_expression() {
    let mut g = Gen(0x9E37_79B9_7F4A_7C15);
    for _ in 0..5_000 {
        let e = g.expression(4);
        let text = e.to_string();
        let back = Expression::parse(&text).unwrap_or_else(|err| panic!("{text}\n{err}"));
        assert_eq!(back, e, "{text}");
        // and the text is a fixed point
        assert_eq!(back.to_string(), text);
    }
}

fn all_types_schema() -> Schema {
    let fields = [
        ("b", P::Boolean),
        ("i", P::Int),
        ("l", P::Long),
        ("f", P::Float),
        ("d", P::Double),
        (
            "dec",
            P::Decimal {
                precision: 38,
                scale: 3,
            },
        ),
        (
            "dec0",
            P::Decimal {
                precision: 38,
                scale: 0,
            },
        ),
        ("s", P::String),
        ("dt", P::Date),
        ("t", P::Time),
        ("ts", P::Timestamp),
        ("tstz", P::Timestamptz),
        ("tsn", P::TimestampNs),
        ("tsnz", P::TimestamptzNs),
        ("u", P::Uuid),
        ("fx", P::Fixed(3)),
        ("bin", P::Binary),
    ];
    let fields = fields
        .into_iter()
        .enumerate()
        .map(|(i, (name, ty))| NestedField::optional(i as i32 + 1, name, Type::Primitive(ty)))
        .collect();
    Schema::new(0, fields, vec![]).unwrap()
}

/// Any kind of value with a column of its type: the text need not read back to the same
/// kind of value (an int reads back as a long, a date as a string), but it must bind the
/// same.
fn typed_value(g: &mut Gen) -> (&'static str, Datum) {
    let small = |g: &mut Gen| (g.next() % 4_000_000) as i64 - 2_000_000;
    match g.below(17) {
        0 => ("b", Datum::Boolean(g.below(2) == 0)),
        1 => ("i", Datum::Int(g.next() as i32)),
        2 => ("l", Datum::Long(g.i64())),
        3 => (
            "f",
            Datum::Float(small(g) as f32 / 64.0 + f32::from_bits(g.next() as u32 & 0x3fff_ffff)),
        ),
        4 => (
            "d",
            Datum::Double(f64::from_bits(g.next() >> 2) * *g.pick(&[1.0, -1.0])),
        ),
        5 => (
            "dec",
            Datum::Decimal {
                unscaled: i128::from(g.i64()),
                scale: 3,
            },
        ),
        6 => (
            "dec0",
            Datum::Decimal {
                unscaled: i128::from(g.i64()),
                scale: 0,
            },
        ),
        7 => ("s", Datum::String(g.string())),
        8 => ("dt", Datum::Date(small(g) as i32)),
        9 => ("t", Datum::Time((g.next() % 86_400_000_000) as i64)),
        10 => ("ts", Datum::Timestamp(small(g) * 123_456_789)),
        11 => ("tstz", Datum::Long(small(g) * 123_456_789)),
        12 => ("tsn", Datum::TimestampNs(small(g) * 123_456_789_123)),
        13 => ("tsnz", Datum::Long(small(g))),
        14 => (
            "u",
            Datum::Uuid(u128::from(g.next()) << 64 | u128::from(g.next())),
        ),
        15 => ("fx", Datum::Fixed(vec![g.next() as u8, 0, 255])),
        _ => (
            "bin",
            Datum::Binary((0..g.below(4)).map(|_| g.next() as u8).collect()),
        ),
    }
}

#[test]
fn display_parses_back_to_an_expression_that_binds_the_same() {
    let schema = all_types_schema();
    let mut g = Gen(42);
    let ops = [
        O::Lt,
        O::LtEq,
        O::Gt,
        O::GtEq,
        O::Eq,
        O::NotEq,
        O::In,
        O::NotIn,
    ];
    for _ in 0..5_000 {
        let (column, value) = typed_value(&mut g);
        if value.is_nan() {
            continue;
        }
        let op = *g.pick(&ops);
        let e = if op.is_set() {
            let more = typed_value(&mut g);
            let values = if more.0 == column {
                vec![value, more.1]
            } else {
                vec![value]
            };
            Expression::predicate(op, column, values)
        } else {
            Expression::compare(op, column, value)
        };
        let text = e.to_string();
        let expected = e
            .bind(&schema, true)
            .unwrap_or_else(|err| panic!("{text}: {err}"));
        let back = parse(&text);
        let bound = back
            .bind(&schema, true)
            .unwrap_or_else(|err| panic!("{text} -> {back:?}: {err}"));
        assert_eq!(bound, expected, "{text}");
    }
}

// ------------------------------------------------------------------------------------
// Binding what the parser reads, including the two conveniences beyond Java
// ------------------------------------------------------------------------------------

fn bound_literal(text: &str) -> Literal {
    match parse(text).bind(&all_types_schema(), true) {
        Ok(BoundExpression::Predicate(p)) => match p {
            super::super::BoundPredicate::Literal { literal, .. } => literal,
            other => panic!("{text}: {other:?}"),
        },
        other => panic!("{text}: {other:?}"),
    }
}

#[test]
fn parsed_values_bind_to_the_column_types() {
    assert_eq!(bound_literal("i = 5"), Literal::Int(5));
    assert_eq!(bound_literal("dec = 1.5"), Literal::Decimal(1500));
    assert_eq!(bound_literal("dec = 1.5e0"), Literal::Decimal(1500));
    assert_eq!(bound_literal("dt = '2024-01-31'"), Literal::Date(19753));
    assert_eq!(
        bound_literal("u = 'f79c3e09-677c-4bbd-a479-3f349cb785e7'"),
        Literal::Uuid(0xf79c3e09_677c_4bbd_a479_3f349cb785e7)
    );
    assert_eq!(
        bound_literal("bin = X'0aff'"),
        Literal::Binary(vec![10, 255])
    );
    assert_eq!(
        bound_literal("fx = X'0aff00'"),
        Literal::Fixed(vec![10, 255, 0])
    );
    assert_eq!(
        bound_literal("ts >= '2024-01-01T00:00:00'"),
        Literal::Timestamp(1_704_067_200_000_000)
    );
    // out of range values decide the predicate
    let schema = all_types_schema();
    assert_eq!(
        parse("i < 5000000000").bind(&schema, true).unwrap(),
        BoundExpression::True
    );
    assert_eq!(
        parse("f > 1e300").bind(&schema, true).unwrap(),
        BoundExpression::False
    );
    // NaN is not a value to compare with
    assert!(parse("d = nan").bind(&schema, true).is_err());
}

#[test]
fn decimals_compare_with_float_and_double_columns() {
    // beyond Java: a decimal literal converts to the nearest double
    assert_eq!(bound_literal("d > 9.99"), Literal::Double(9.99));
    assert_eq!(bound_literal("d > -0.1"), Literal::Double(-0.1));
    assert_eq!(bound_literal("f > 0.1"), Literal::Float(0.1));
    let big = format!("f > 1{}.5", "0".repeat(36));
    assert_eq!(bound_literal(&big), Literal::Float(1e36));
    // but not with integer columns (as Java)
    assert!(parse("i > 1.5").bind(&all_types_schema(), true).is_err());
}

#[test]
fn date_only_strings_mean_midnight_for_timestamp_columns() {
    // beyond Java, which rejects a date-only string for a timestamp column
    let midnight = 1_704_067_200_000_000_i64;
    assert_eq!(
        bound_literal("ts >= '2024-01-01'"),
        Literal::Timestamp(midnight)
    );
    assert_eq!(
        bound_literal("tstz >= '2024-01-01'"),
        Literal::Timestamptz(midnight)
    );
    assert_eq!(
        bound_literal("tsn >= '2024-01-01'"),
        Literal::TimestampNs(midnight * 1000)
    );
    assert_eq!(
        bound_literal("tsnz < '1969-12-31'"),
        Literal::TimestamptzNs(-86_400_000_000_000)
    );
    // still an error: a date column with a timestamp, garbage
    let schema = all_types_schema();
    assert!(parse("dt = '2024-01-01T00:00:00'")
        .bind(&schema, true)
        .is_err());
    assert!(parse("ts = '2024-01'").bind(&schema, true).is_err());
    assert!(parse("ts = '2024-01-01 '").bind(&schema, true).is_err());
}
