//! Projection of row filters through partition transforms ("Scan Planning"), with the
//! Java reference's exact results (`Projections`, `ProjectionUtil` and each transform's
//! `project`/`projectStrict`).
//!
//! An *inclusive* projection matches the partition of every row the row filter matches (it
//! may match more): partitions it rejects can be skipped. A *strict* projection matches only
//! partitions all of whose rows match the row filter. Both return unbound expressions over
//! the partition field names; bind them to `spec.partition_type(schema)` with
//! [`Expression::bind_struct`].
//!
//! Per predicate, each partition field on the predicate's column contributes a projection or
//! nothing. Inclusive projection ANDs the contributions (starting from `true`), strict
//! projection ORs them (starting from `false`), so a predicate that no field can project
//! becomes `true` (inclusive) or `false` (strict). `void` and unknown transforms contribute
//! nothing.
//!
//! The rules, by transform:
//! - identity: the predicate itself, both ways.
//! - bucket: inclusive `=` and `in` (bucket of each value), strict `!=` and `not in`.
//! - truncate of ints, longs and decimals: ranges widen or narrow by one unit before
//!   truncating (`x < 10` is `p <= truncate(9)` inclusively, `p < truncate(10)` strictly);
//!   `=`/`in` project inclusively only, `!=`/`not in` strictly only.
//! - truncate of strings and binary: comparisons project on the truncated value
//!   (`x < v` is `p <= truncate(v)` inclusively, `p < truncate(v)` strictly). `starts with v`
//!   stays `starts with v` when `v` is shorter than the width, becomes `= v` when it has
//!   exactly the width and `starts with truncate(v)` (inclusive only) when longer;
//!   `not starts with` the same way with `not starts with`/`!=`, and strictly
//!   `not starts with truncate(v)` when longer. Java measures the length in UTF-16 units
//!   here while truncating by code points; so does this module.
//! - year, month, day, hour: as truncate of a long (int for dates), then the fix-up Java
//!   applies for data written by Iceberg 0.10 and earlier, whose time transforms gave one more
//!   than the floor before 1970: inclusive `<=`/`<` on a negative value move up one, `=` on a
//!   negative value becomes `in (v, v + 1)` and `in` gains `v + 1` for negative `v`; strict
//!   `>`/`>=` on a value `<= 0` move up one, `!=` on a negative value becomes
//!   `not in (v, v + 1)` and `not in` gains `v + 1`; strict `=`/`in` and inclusive
//!   `!=`/`not in` project to nothing. The day transform of a date source is exact and
//!   gets no fix-up (Java's `Dates.DAY`), timestamps' day and hour do.
//! - unary predicates (`is null`, `is nan`, ...) keep their operation for every transform
//!   but `void`/unknown.
//!
//! Arithmetic wraps like Java's `int`/`long` (`x < i32::MIN` on an int column projects
//! through `i32::MIN - 1`, which is `i32::MAX`).

use super::{BoundExpression, BoundPredicate, Datum, Expression, Operation, Predicate};
use crate::error::{Error, Result};
use crate::spec::partition::{PartitionField, PartitionSpec};
use crate::spec::transform::{
    bucket_hash, date_to, hash_literal, micros_to, nanos_to, truncate_bytes, truncate_i128,
    truncate_i32, truncate_i64, truncate_str, TimeUnit,
};
use crate::spec::{Literal, PrimitiveType, Transform};

/// Which projection to compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProjectionKind {
    /// Matches at least the partitions of the rows the filter matches.
    Inclusive,
    /// Matches only partitions whose rows all match the filter.
    Strict,
}

/// The inclusive projection of a row filter onto `spec`'s partition fields: if `expr` matches
/// a row, the result matches that row's partition. Java's `Projections.inclusive`.
pub fn inclusive_projection(expr: &BoundExpression, spec: &PartitionSpec) -> Result<Expression> {
    project(expr, spec, ProjectionKind::Inclusive)
}

/// The strict projection of a row filter onto `spec`'s partition fields: if the result
/// matches a partition, `expr` matches every row in it. Java's `Projections.strict`.
pub fn strict_projection(expr: &BoundExpression, spec: &PartitionSpec) -> Result<Expression> {
    project(expr, spec, ProjectionKind::Strict)
}

/// The projection of `expr` of the given kind.
pub fn project(
    expr: &BoundExpression,
    spec: &PartitionSpec,
    kind: ProjectionKind,
) -> Result<Expression> {
    Ok(match expr {
        BoundExpression::True => Expression::True,
        BoundExpression::False => Expression::False,
        BoundExpression::And(l, r) => {
            Expression::and(project(l, spec, kind)?, project(r, spec, kind)?)
        }
        BoundExpression::Or(l, r) => {
            Expression::or(project(l, spec, kind)?, project(r, spec, kind)?)
        }
        BoundExpression::Predicate(p) => project_predicate(p, spec, kind)?,
    })
}

/// The projection of one predicate: the AND (inclusive) or OR (strict) of the projections
/// through every partition field whose source is the predicate's column, in spec order.
pub fn project_predicate(
    pred: &BoundPredicate,
    spec: &PartitionSpec,
    kind: ProjectionKind,
) -> Result<Expression> {
    let field_id = pred.term().field_id;
    let mut result = match kind {
        ProjectionKind::Inclusive => Expression::True,
        ProjectionKind::Strict => Expression::False,
    };
    for field in spec.fields.iter().filter(|f| f.source_id() == field_id) {
        if let Some(p) = project_field(field, pred, kind)? {
            let p = Expression::Predicate(p);
            result = match kind {
                ProjectionKind::Inclusive => Expression::and(result, p),
                ProjectionKind::Strict => Expression::or(result, p),
            };
        }
    }
    Ok(result)
}

/// The projection of `pred` through one partition field, or `None` when the transform gives
/// none (Java's `null`). `pred` must be on the field's source column.
pub fn project_field(
    field: &PartitionField,
    pred: &BoundPredicate,
    kind: ProjectionKind,
) -> Result<Option<Predicate>> {
    let name = field.name.as_str();
    // a partition source is primitive: a nested column's null check projects to nothing
    let Some(source) = pred.term().field_type.as_primitive() else {
        return Ok(None);
    };
    let transform = &field.transform;
    if !matches!(
        transform,
        Transform::Identity | Transform::Void | Transform::Unknown(_)
    ) && !transform.accepts(source)
    {
        return Err(Error::invalid_argument(format!(
            "cannot project '{}' through partition field '{name}': transform '{transform}' \
             cannot be applied to type {source}",
            pred.term().name
        )));
    }
    match transform {
        Transform::Void | Transform::Unknown(_) => Ok(None),
        Transform::Identity => Ok(Some(Predicate {
            term: name.to_string(),
            ..pred.unbind()
        })),
        Transform::Bucket(n) => bucket(name, pred, *n, kind),
        Transform::Truncate(w) => truncate(name, pred, *w, kind),
        Transform::Year => time(name, pred, TimeUnit::Year, kind),
        Transform::Month => time(name, pred, TimeUnit::Month, kind),
        Transform::Day => time(name, pred, TimeUnit::Day, kind),
        Transform::Hour => time(name, pred, TimeUnit::Hour, kind),
    }
}

fn unary(op: Operation, name: &str) -> Predicate {
    Predicate {
        op,
        term: name.to_string(),
        values: Vec::new(),
    }
}

fn make(op: Operation, name: &str, values: Vec<Datum>) -> Predicate {
    Predicate {
        op,
        term: name.to_string(),
        values,
    }
}

fn bucket(
    name: &str,
    pred: &BoundPredicate,
    n: u32,
    kind: ProjectionKind,
) -> Result<Option<Predicate>> {
    use Operation as O;
    let apply = |l: &Literal| -> Result<Datum> { Ok(Datum::Int(bucket_hash(hash_literal(l)?, n))) };
    Ok(match (pred, kind) {
        (BoundPredicate::Unary { op, .. }, _) => Some(unary(*op, name)),
        (BoundPredicate::Literal { op, literal, .. }, ProjectionKind::Inclusive)
            if *op == O::Eq =>
        {
            Some(make(*op, name, vec![apply(literal)?]))
        }
        (BoundPredicate::Literal { op, literal, .. }, ProjectionKind::Strict)
            if *op == O::NotEq =>
        {
            Some(make(*op, name, vec![apply(literal)?]))
        }
        (BoundPredicate::Set { op, literals, .. }, ProjectionKind::Inclusive) if *op == O::In => {
            Some(make(
                *op,
                name,
                literals.iter().map(apply).collect::<Result<_>>()?,
            ))
        }
        (BoundPredicate::Set { op, literals, .. }, ProjectionKind::Strict) if *op == O::NotIn => {
            Some(make(
                *op,
                name,
                literals.iter().map(apply).collect::<Result<_>>()?,
            ))
        }
        _ => None,
    })
}

/// Java's `truncateInteger`/`truncateLong`/`truncateDecimal` (inclusive) and their `Strict`
/// forms, for a transform `f` of the boundary moved by `delta` (-1, 0 or 1) units.
fn ordered<V>(
    op: Operation,
    kind: ProjectionKind,
    f: impl Fn(i8) -> Result<V>,
) -> Result<Option<(Operation, V)>> {
    use Operation as O;
    Ok(Some(match kind {
        ProjectionKind::Inclusive => match op {
            O::Lt => (O::LtEq, f(-1)?),
            O::LtEq => (O::LtEq, f(0)?),
            O::Gt => (O::GtEq, f(1)?),
            O::GtEq => (O::GtEq, f(0)?),
            O::Eq => (O::Eq, f(0)?),
            _ => return Ok(None),
        },
        ProjectionKind::Strict => match op {
            O::Lt => (O::Lt, f(0)?),
            O::LtEq => (O::Lt, f(1)?),
            O::Gt => (O::Gt, f(0)?),
            O::GtEq => (O::Gt, f(-1)?),
            O::NotEq => (O::NotEq, f(0)?),
            _ => return Ok(None),
        },
    }))
}

/// Java's `truncateArray` (inclusive) and `truncateArrayStrict`, for strings and binary: the
/// boundary is truncated as it is.
fn ordered_array(op: Operation, kind: ProjectionKind) -> Option<Operation> {
    use Operation as O;
    match kind {
        ProjectionKind::Inclusive => match op {
            O::Lt | O::LtEq => Some(O::LtEq),
            O::Gt | O::GtEq => Some(O::GtEq),
            O::Eq => Some(O::Eq),
            O::StartsWith => Some(O::StartsWith),
            _ => None,
        },
        ProjectionKind::Strict => match op {
            O::Lt | O::LtEq => Some(O::Lt),
            O::Gt | O::GtEq => Some(O::Gt),
            O::NotEq => Some(O::NotEq),
            _ => None,
        },
    }
}

/// The set operation a transform that loses information can project: `in` inclusively,
/// `not in` strictly.
fn set_op_for(kind: ProjectionKind) -> Operation {
    match kind {
        ProjectionKind::Inclusive => Operation::In,
        ProjectionKind::Strict => Operation::NotIn,
    }
}

/// The number of UTF-16 code units of `s` (Java's `CharSequence.length()`).
fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

fn truncate(
    name: &str,
    pred: &BoundPredicate,
    w: u32,
    kind: ProjectionKind,
) -> Result<Option<Predicate>> {
    let apply = |l: &Literal, delta: i8| -> Result<Datum> { truncate_value(l, delta, w, pred) };
    match pred {
        BoundPredicate::Unary { op, .. } => Ok(Some(unary(*op, name))),
        BoundPredicate::Set { op, literals, .. } => {
            if *op != set_op_for(kind) {
                return Ok(None);
            }
            let values = literals
                .iter()
                .map(|l| apply(l, 0))
                .collect::<Result<Vec<_>>>()?;
            Ok(Some(make(*op, name, values)))
        }
        BoundPredicate::Literal { op, literal, .. } => match literal {
            Literal::String(s) => Ok(truncate_string(name, *op, s, w, kind)),
            Literal::Binary(_) => Ok(match ordered_array(*op, kind) {
                Some(to) => Some(make(to, name, vec![apply(literal, 0)?])),
                None => None,
            }),
            _ => Ok(ordered(*op, kind, |delta| apply(literal, delta))?
                .map(|(to, v)| make(to, name, vec![v]))),
        },
    }
}

fn truncate_string(
    name: &str,
    op: Operation,
    s: &str,
    w: u32,
    kind: ProjectionKind,
) -> Option<Predicate> {
    use Operation as O;
    let value = |v: &str| vec![Datum::String(v.to_string())];
    let len = utf16_len(s);
    let width = w as usize;
    match op {
        O::StartsWith | O::NotStartsWith if len < width => Some(make(op, name, value(s))),
        O::StartsWith if len == width => Some(make(O::Eq, name, value(s))),
        O::NotStartsWith if len == width => Some(make(O::NotEq, name, value(s))),
        O::NotStartsWith => match kind {
            ProjectionKind::Inclusive => None,
            ProjectionKind::Strict => Some(make(op, name, value(truncate_str(s, w)))),
        },
        // longer than the width: inclusively `starts with truncate(v)`, strictly nothing
        _ => ordered_array(op, kind).map(|to| make(to, name, value(truncate_str(s, w)))),
    }
}

/// truncate[w] of `l` moved by `delta` units (ints, longs, decimals; strings and binary
/// only with `delta` 0).
fn truncate_value(l: &Literal, delta: i8, w: u32, pred: &BoundPredicate) -> Result<Datum> {
    Ok(match l {
        Literal::Int(v) => Datum::Int(truncate_i32(v.wrapping_add(i32::from(delta)), w)),
        Literal::Long(v) => Datum::Long(truncate_i64(v.wrapping_add(i64::from(delta)), w)),
        Literal::Decimal(v) => Datum::Decimal {
            unscaled: truncate_i128(v.wrapping_add(i128::from(delta)), w),
            scale: match pred.term().field_type.as_primitive() {
                Some(PrimitiveType::Decimal { scale, .. }) => *scale,
                _ => 0,
            },
        },
        Literal::String(s) if delta == 0 => Datum::String(truncate_str(s, w).to_string()),
        Literal::Binary(b) if delta == 0 => Datum::Binary(truncate_bytes(b, w).to_vec()),
        other => {
            return Err(Error::invalid_argument(format!(
                "cannot project '{}': truncate does not take the value {other}",
                pred.term().name
            )))
        }
    })
}

fn time(
    name: &str,
    pred: &BoundPredicate,
    unit: TimeUnit,
    kind: ProjectionKind,
) -> Result<Option<Predicate>> {
    use PrimitiveType as P;
    let source = pred.term().primitive_type()?;
    let is_date = *source == P::Date;
    if is_date && unit == TimeUnit::Hour {
        return Err(Error::invalid_argument(format!(
            "cannot project '{}' through hour: the column is a date",
            pred.term().name
        )));
    }
    let nanos = matches!(source, P::TimestampNs | P::TimestamptzNs);
    // the transform of a value moved by `delta` units of the source type
    let apply = |l: &Literal, delta: i8| -> Result<i32> {
        Ok(match l {
            Literal::Date(d) => date_to(unit, d.wrapping_add(i32::from(delta))),
            Literal::Timestamp(v)
            | Literal::Timestamptz(v)
            | Literal::TimestampNs(v)
            | Literal::TimestamptzNs(v) => {
                let v = v.wrapping_add(i64::from(delta));
                if nanos {
                    nanos_to(unit, v)
                } else {
                    micros_to(unit, v)
                }
            }
            other => {
                return Err(Error::invalid_argument(format!(
                    "cannot project '{}': {unit:?} does not take the value {other}",
                    pred.term().name
                )))
            }
        })
    };
    let projected: Option<(Operation, Vec<i32>)> = match pred {
        BoundPredicate::Unary { op, .. } => return Ok(Some(unary(*op, name))),
        BoundPredicate::Literal { op, literal, .. } => {
            ordered(*op, kind, |delta| apply(literal, delta))?.map(|(op, v)| (op, vec![v]))
        }
        BoundPredicate::Set { op, literals, .. } => {
            if *op == set_op_for(kind) {
                let values = literals
                    .iter()
                    .map(|l| apply(l, 0))
                    .collect::<Result<Vec<_>>>()?;
                Some((*op, values))
            } else {
                None
            }
        }
    };
    // Java's Dates.DAY is exact; every other time projection gets the pre-0.10 fix-up
    let fixed = if is_date && unit == TimeUnit::Day {
        projected
    } else {
        projected.and_then(|(op, values)| match kind {
            ProjectionKind::Inclusive => fix_inclusive(op, values),
            ProjectionKind::Strict => fix_strict(op, values),
        })
    };
    Ok(fixed.map(|(op, values)| make(op, name, values.into_iter().map(Datum::Int).collect())))
}

/// The values with `v + 1` added for each negative `v`, or `None` when none is negative.
fn with_successors_of_negatives(values: &[i32]) -> Option<Vec<i32>> {
    if !values.iter().any(|v| *v < 0) {
        return None;
    }
    let mut out: Vec<i32> = values.to_vec();
    out.extend(values.iter().filter(|v| **v < 0).map(|v| v + 1));
    out.sort_unstable();
    out.dedup();
    Some(out)
}

/// Java's `fixInclusiveTimeProjection`: also match the partition values that Iceberg 0.10
/// and earlier wrote for times before 1970 (one more than the floor).
fn fix_inclusive(op: Operation, values: Vec<i32>) -> Option<(Operation, Vec<i32>)> {
    use Operation as O;
    let first = values.first().copied().unwrap_or_default();
    match op {
        O::Lt | O::LtEq if first < 0 => Some((op, vec![first + 1])),
        O::Eq if first < 0 => Some((O::In, vec![first, first + 1])),
        O::In => match with_successors_of_negatives(&values) {
            Some(fixed) => Some((O::In, fixed)),
            None => Some((op, values)),
        },
        O::NotIn | O::NotEq => None,
        _ => Some((op, values)),
    }
}

/// Java's `fixStrictTimeProjection`.
fn fix_strict(op: Operation, values: Vec<i32>) -> Option<(Operation, Vec<i32>)> {
    use Operation as O;
    let first = values.first().copied().unwrap_or_default();
    match op {
        O::Lt | O::LtEq => Some((op, values)),
        O::Gt | O::GtEq if first <= 0 => Some((op, vec![first + 1])),
        O::Gt | O::GtEq => Some((op, values)),
        O::NotEq if first < 0 => Some((O::NotIn, vec![first, first + 1])),
        O::NotEq => Some((op, values)),
        O::NotIn => match with_successors_of_negatives(&values) {
            Some(fixed) => Some((O::NotIn, fixed)),
            None => Some((op, values)),
        },
        _ => None,
    }
}

#[cfg(test)]
#[path = "project_tests.rs"]
mod tests;
