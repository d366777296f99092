//! Evaluating a bound expression on one flat tuple of values, such as a data file's
//! partition tuple: the Java reference's `Evaluator`.
//!
//! Comparisons follow Java's literal comparators, which are *total* and put null first
//! (`Comparators.nullsFirst()`), not SQL's three-valued logic: for a null value `< x`,
//! `<= x`, `!= x`, `not in (...)` and `not starts with` are true; `> x`, `>= x`, `= x`,
//! `in (...)` and `starts with` are false; `is nan` is false and `is not nan` is true.
//!
//! The value orders are Java's ([`java_compare`]), which differ from [`Literal::compare`]
//! in two places: every NaN (of either sign) is equal to every other NaN and greater than
//! `+Infinity` (`Float.compare`), and UUIDs compare as two *signed* 64-bit halves
//! (`java.util.UUID.compareTo`).

use std::cmp::Ordering;

use super::{BoundExpression, BoundPredicate, BoundReference, Operation};
use crate::error::{Error, Result};
use crate::spec::Literal;

/// Evaluates `expr` on `tuple`, a flat struct of values (a partition tuple): the value of
/// a term is `tuple[term.position[0]]`. Errors when a position is out of the tuple, when a
/// term is nested (`position` longer than one), or when a value is not of the kind of the
/// predicate's literal.
pub fn evaluate_tuple(expr: &BoundExpression, tuple: &[Option<Literal>]) -> Result<bool> {
    Ok(match expr {
        BoundExpression::True => true,
        BoundExpression::False => false,
        BoundExpression::And(l, r) => evaluate_tuple(l, tuple)? && evaluate_tuple(r, tuple)?,
        BoundExpression::Or(l, r) => evaluate_tuple(l, tuple)? || evaluate_tuple(r, tuple)?,
        BoundExpression::Predicate(p) => eval_predicate(p, tuple)?,
    })
}

fn eval_predicate(p: &BoundPredicate, tuple: &[Option<Literal>]) -> Result<bool> {
    let value = tuple_value(p.term(), tuple)?;
    match p {
        BoundPredicate::Unary { op, .. } => Ok(match op {
            Operation::IsNull => value.is_none(),
            Operation::NotNull => value.is_some(),
            Operation::IsNan => value.is_some_and(is_nan),
            Operation::NotNan => !value.is_some_and(is_nan),
            other => return Err(bad_op(*other, "a unary")),
        }),
        BoundPredicate::Literal { op, literal, .. } => {
            use Operation as O;
            match op {
                O::StartsWith | O::NotStartsWith => {
                    let starts = match value {
                        None => false,
                        Some(v) => starts_with(v, literal)?,
                    };
                    Ok(starts == (*op == O::StartsWith))
                }
                _ => {
                    // nulls first: a null value is less than every literal
                    let cmp = match value {
                        None => Ordering::Less,
                        Some(v) => java_compare(v, literal)?,
                    };
                    Ok(match op {
                        O::Lt => cmp.is_lt(),
                        O::LtEq => cmp.is_le(),
                        O::Gt => cmp.is_gt(),
                        O::GtEq => cmp.is_ge(),
                        O::Eq => cmp.is_eq(),
                        O::NotEq => cmp.is_ne(),
                        other => return Err(bad_op(*other, "a comparison")),
                    })
                }
            }
        }
        BoundPredicate::Set { op, literals, .. } => {
            let contained = match value {
                None => false,
                Some(v) => set_contains(literals, v)?,
            };
            match op {
                Operation::In => Ok(contained),
                Operation::NotIn => Ok(!contained),
                other => Err(bad_op(*other, "a set")),
            }
        }
    }
}

fn tuple_value<'a>(
    term: &BoundReference,
    tuple: &'a [Option<Literal>],
) -> Result<Option<&'a Literal>> {
    let pos = flat_position(term)?;
    tuple.get(pos).map(Option::as_ref).ok_or_else(|| {
        Error::invalid_argument(format!(
            "cannot evaluate '{}': position {pos} is outside a tuple of {} values",
            term.name,
            tuple.len()
        ))
    })
}

/// The index of a top-level field of a flat struct (a partition tuple or the list of a
/// manifest's partition summaries).
pub(crate) fn flat_position(term: &BoundReference) -> Result<usize> {
    match term.position.as_slice() {
        [p] => Ok(*p as usize),
        _ => Err(Error::invalid_argument(format!(
            "cannot evaluate '{}' on a flat tuple: it is a nested field (position {:?})",
            term.name, term.position
        ))),
    }
}

fn bad_op(op: Operation, kind: &str) -> Error {
    Error::invalid_argument(format!("'{}' is not {kind} operation", op.symbol()))
}

pub(crate) fn is_nan(v: &Literal) -> bool {
    match v {
        Literal::Float(f) => f.is_nan(),
        Literal::Double(d) => d.is_nan(),
        _ => false,
    }
}

fn starts_with(value: &Literal, prefix: &Literal) -> Result<bool> {
    match (value, prefix) {
        (Literal::String(v), Literal::String(p)) => Ok(v.starts_with(p.as_str())),
        _ => Err(Error::invalid_argument(format!(
            "'starts with' needs string values, not {value} and {prefix}"
        ))),
    }
}

/// Compares two values of the same type with the Java reference's comparators (what
/// `Literal.comparator()` does for non-null values):
/// - floats and doubles with `Float.compare`/`Double.compare`: `-0 < 0`, and every NaN,
///   whatever its sign bit, equals every other NaN and is greater than `+Infinity` (unlike
///   [`Literal::compare`], which puts negative NaNs first as the spec's sort order does);
/// - UUIDs with `java.util.UUID.compareTo`: the two 64-bit halves as *signed* numbers
///   (unlike [`Literal::compare`], which is unsigned as RFC 9562 and Parquet); see
///   apache/iceberg#14216;
/// - everything else as [`Literal::compare`] (strings by code point, which is UTF-8 byte
///   order; binary unsigned byte-wise; decimals by unscaled value).
///
/// Errors for values of different kinds.
pub fn java_compare(a: &Literal, b: &Literal) -> Result<Ordering> {
    match (a, b) {
        (Literal::Float(x), Literal::Float(y)) => {
            Ok(java_float_order(f64::from(*x), f64::from(*y)))
        }
        (Literal::Double(x), Literal::Double(y)) => Ok(java_float_order(*x, *y)),
        (Literal::Uuid(x), Literal::Uuid(y)) => Ok(java_uuid_order(*x, *y)),
        _ => a.compare(b).ok_or_else(|| {
            Error::invalid_argument(format!("cannot compare {a} with {b}: different types"))
        }),
    }
}

fn java_float_order(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        // without NaN the total order is the numeric order with -0 < 0, as Java's
        (false, false) => a.total_cmp(&b),
    }
}

fn java_uuid_order(a: u128, b: u128) -> Ordering {
    let halves = |u: u128| ((u >> 64) as u64 as i64, u as u64 as i64);
    halves(a).cmp(&halves(b))
}

/// Whether `value` is one of `literals` (a bound set: sorted by [`Literal::compare`], no
/// duplicates), with Java's equality (`Set.contains`): equal values of the same kind;
/// `0.0` and `-0.0` are different floats.
pub(crate) fn set_contains(literals: &[Literal], value: &Literal) -> Result<bool> {
    let Some(first) = literals.first() else {
        return Ok(false);
    };
    if first.compare(value).is_none() {
        return Err(Error::invalid_argument(format!(
            "cannot compare {value} with {first}: different types"
        )));
    }
    // Literal::compare and Java's comparator agree on which values are equal (NaN is never
    // a literal of a bound predicate), so the binary search may use the order the set is
    // sorted by.
    Ok(literals
        .binary_search_by(|l| l.compare(value).unwrap_or(Ordering::Less))
        .is_ok())
}

#[cfg(test)]
#[path = "eval_tests.rs"]
mod tests;
