//! Residuals: what is left of a row filter for the rows of one partition (Java's
//! `ResidualEvaluator`).
//!
//! For each predicate and each partition field on its column, in spec order: if the strict
//! projection holds for the partition, every row matches and the predicate becomes `true`;
//! otherwise, if the inclusive projection fails, no row matches and it becomes `false`; when
//! no field decides, the predicate stays. `AND`/`OR` simplify around the constants.
//!
//! Partition values are compared as Java does (`Literal.comparator()`): nulls first, so on a
//! null partition value `p < 5` and `p != 5` hold and `p > 5`, `p = 5` do not; `in` never
//! holds for null and `not in` always does. Floats order like `Float.compare` (`-0.0 < 0.0`,
//! NaN above everything) and UUIDs like `java.util.UUID.compareTo` on Java 17 (the two
//! halves as signed longs). Java fails on `starts with` against a null partition value; here
//! null starts with nothing, as in Java's row `Evaluator`.

use std::borrow::Cow;
use std::cmp::Ordering;

use super::project::{project_field, ProjectionKind};
use super::{BoundExpression, BoundPredicate, Expression, Operation};
use crate::error::{Error, Result};
use crate::spec::partition::PartitionSpec;
use crate::spec::types::{NestedField, StructType};
use crate::spec::{Literal, PrimitiveType, Schema, Type};

/// Computes residuals of one bound row filter for the partitions of one spec. The
/// projections of every predicate are computed and bound once, in [`ResidualEvaluator::new`];
/// [`ResidualEvaluator::residual_for`] only compares values.
#[derive(Debug, Clone)]
pub struct ResidualEvaluator {
    expr: BoundExpression,
    /// `None` for an unpartitioned spec: the residual is the expression itself.
    plan: Option<Node>,
}

#[derive(Debug, Clone)]
enum Node {
    Const(bool),
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    Leaf(Leaf),
}

#[derive(Debug, Clone)]
struct Leaf {
    pred: BoundPredicate,
    /// Per partition field on the predicate's column, in spec order: the strict and the
    /// inclusive projection bound to the partition type.
    fields: Vec<(Check, Check)>,
}

/// A projection bound to the partition type.
#[derive(Debug, Clone)]
enum Check {
    /// The transform projects nothing.
    Absent,
    /// Binding decided it (a value out of range, an `in` list that became empty).
    Const(bool),
    Pred(BoundPredicate),
}

impl ResidualEvaluator {
    /// Prepares residuals of `expr` (bound to `schema`) for partitions of `spec`.
    /// `case_sensitive` applies to binding the projections to the partition field names.
    pub fn new(
        spec: &PartitionSpec,
        schema: &Schema,
        expr: &BoundExpression,
        case_sensitive: bool,
    ) -> Result<Self> {
        if spec.fields.is_empty() {
            return Ok(ResidualEvaluator {
                expr: expr.clone(),
                plan: None,
            });
        }
        let partition_type = lenient_partition_type(spec, schema);
        let plan = compile(expr, spec, &partition_type, case_sensitive)?;
        Ok(ResidualEvaluator {
            expr: expr.clone(),
            plan: Some(plan),
        })
    }

    /// The row filter this evaluator was made for.
    pub fn expression(&self) -> &BoundExpression {
        &self.expr
    }

    /// The residual for the rows of the partition with these values (one per partition
    /// field, in spec order; `None` for null). Errors when a value has the wrong type for its
    /// field or the tuple is too short.
    pub fn residual_for(&self, partition: &[Option<Literal>]) -> Result<BoundExpression> {
        match &self.plan {
            None => Ok(self.expr.clone()),
            Some(plan) => residual(plan, partition),
        }
    }
}

/// The partition type, with `unknown` for fields whose source column is gone or whose
/// transform cannot apply (Java's partition type does the same for dropped sources; such
/// fields are never projected to, since no predicate can name their column).
fn lenient_partition_type(spec: &PartitionSpec, schema: &Schema) -> StructType {
    let fields = spec
        .fields
        .iter()
        .map(|f| {
            let result = schema
                .field_by_id(f.source_id())
                .and_then(|src| f.transform.result_type(&src.field_type).ok())
                .unwrap_or(Type::Primitive(PrimitiveType::Unknown));
            NestedField::optional(f.field_id, f.name.clone(), result)
        })
        .collect();
    StructType::new(fields)
}

fn compile(
    expr: &BoundExpression,
    spec: &PartitionSpec,
    partition_type: &StructType,
    case_sensitive: bool,
) -> Result<Node> {
    let sub = |e: &BoundExpression| compile(e, spec, partition_type, case_sensitive);
    Ok(match expr {
        BoundExpression::True => Node::Const(true),
        BoundExpression::False => Node::Const(false),
        BoundExpression::And(l, r) => Node::And(Box::new(sub(l)?), Box::new(sub(r)?)),
        BoundExpression::Or(l, r) => Node::Or(Box::new(sub(l)?), Box::new(sub(r)?)),
        BoundExpression::Predicate(p) => {
            let mut fields = Vec::new();
            for field in spec
                .fields
                .iter()
                .filter(|f| f.source_id() == p.term().field_id)
            {
                let bind = |kind| -> Result<Check> {
                    Ok(match project_field(field, p, kind)? {
                        None => Check::Absent,
                        Some(projected) => match Expression::Predicate(projected)
                            .bind_struct(partition_type, case_sensitive)?
                        {
                            BoundExpression::True => Check::Const(true),
                            BoundExpression::False => Check::Const(false),
                            BoundExpression::Predicate(bp) => Check::Pred(bp),
                            other => {
                                return Err(Error::invalid_argument(format!(
                                    "projection of '{}' bound to a compound expression {other}",
                                    p.term().name
                                )))
                            }
                        },
                    })
                };
                let strict = bind(ProjectionKind::Strict)?;
                let inclusive = bind(ProjectionKind::Inclusive)?;
                if !matches!((&strict, &inclusive), (Check::Absent, Check::Absent)) {
                    fields.push((strict, inclusive));
                }
            }
            Node::Leaf(Leaf {
                pred: p.clone(),
                fields,
            })
        }
    })
}

fn residual(node: &Node, partition: &[Option<Literal>]) -> Result<BoundExpression> {
    Ok(match node {
        Node::Const(true) => BoundExpression::True,
        Node::Const(false) => BoundExpression::False,
        Node::And(l, r) => {
            let left = residual(l, partition)?;
            if left == BoundExpression::False {
                return Ok(left);
            }
            BoundExpression::and(left, residual(r, partition)?)
        }
        Node::Or(l, r) => {
            let left = residual(l, partition)?;
            if left == BoundExpression::True {
                return Ok(left);
            }
            BoundExpression::or(left, residual(r, partition)?)
        }
        Node::Leaf(leaf) => {
            for (strict, inclusive) in &leaf.fields {
                if check(strict, partition)? == Some(true) {
                    return Ok(BoundExpression::True);
                }
                if check(inclusive, partition)? == Some(false) {
                    return Ok(BoundExpression::False);
                }
            }
            BoundExpression::Predicate(leaf.pred.clone())
        }
    })
}

fn check(c: &Check, partition: &[Option<Literal>]) -> Result<Option<bool>> {
    Ok(match c {
        Check::Absent => None,
        Check::Const(b) => Some(*b),
        Check::Pred(p) => Some(eval_partition(p, partition)?),
    })
}

/// Evaluates a predicate on the partition type against partition values, as Java's
/// `ResidualEvaluator` does (see the module documentation).
fn eval_partition(pred: &BoundPredicate, partition: &[Option<Literal>]) -> Result<bool> {
    use Operation as O;
    let term = pred.term();
    let pos = term.position.first().copied().unwrap_or_default() as usize;
    let value = partition.get(pos).ok_or_else(|| {
        Error::invalid_argument(format!(
            "partition tuple has {} values; '{}' is field {}",
            partition.len(),
            term.name,
            pos + 1
        ))
    })?;
    let value = value.as_ref();
    Ok(match pred {
        BoundPredicate::Unary { op, .. } => {
            let nan = matches!(value, Some(Literal::Float(f)) if f.is_nan())
                || matches!(value, Some(Literal::Double(d)) if d.is_nan());
            match op {
                O::IsNull => value.is_none(),
                O::NotNull => value.is_some(),
                O::IsNan => nan,
                _ => !nan,
            }
        }
        BoundPredicate::Literal { op, literal, .. } => match op {
            O::StartsWith | O::NotStartsWith => {
                let starts = match value {
                    None => false,
                    Some(Literal::String(s)) => match literal {
                        Literal::String(prefix) => s.starts_with(prefix.as_str()),
                        other => return Err(mismatch(&term.name, other, literal)),
                    },
                    Some(other) => return Err(mismatch(&term.name, other, literal)),
                };
                starts == (*op == O::StartsWith)
            }
            _ => {
                // nulls first
                let ord = match value {
                    None => Ordering::Less,
                    Some(v) => {
                        java_compare(v, literal).ok_or_else(|| mismatch(&term.name, v, literal))?
                    }
                };
                match op {
                    O::Lt => ord == Ordering::Less,
                    O::LtEq => ord != Ordering::Greater,
                    O::Gt => ord == Ordering::Greater,
                    O::GtEq => ord != Ordering::Less,
                    O::Eq => ord == Ordering::Equal,
                    _ => ord != Ordering::Equal,
                }
            }
        },
        BoundPredicate::Set { op, literals, .. } => {
            let contains = match value {
                None => false,
                Some(v) => {
                    let mut found = false;
                    for l in literals {
                        let c = java_compare(v, l).ok_or_else(|| mismatch(&term.name, v, l))?;
                        if c == Ordering::Equal {
                            found = true;
                            break;
                        }
                    }
                    found
                }
            };
            contains == (*op == O::In)
        }
    })
}

fn mismatch(name: &str, value: &Literal, literal: &Literal) -> Error {
    Error::invalid_argument(format!(
        "partition value {value} of '{name}' cannot be compared with {literal}"
    ))
}

/// Dates and ints are the same numbers (the day transform's values are one or the other
/// depending on who built the partition tuple).
fn as_int_like<'a>(v: &'a Literal, like: &Literal) -> Cow<'a, Literal> {
    match (v, like) {
        (Literal::Date(d), Literal::Int(_)) => Cow::Owned(Literal::Int(*d)),
        (Literal::Int(i), Literal::Date(_)) => Cow::Owned(Literal::Date(*i)),
        _ => Cow::Borrowed(v),
    }
}

/// Java's ordering of two non-null values of one type (`Literal.comparator()`).
pub(crate) fn java_compare(a: &Literal, b: &Literal) -> Option<Ordering> {
    let a = as_int_like(a, b);
    Some(match (a.as_ref(), b) {
        (Literal::Float(x), Literal::Float(y)) => java_double_compare(f64::from(*x), f64::from(*y)),
        (Literal::Double(x), Literal::Double(y)) => java_double_compare(*x, *y),
        (Literal::Uuid(x), Literal::Uuid(y)) => {
            let halves = |u: u128| ((u >> 64) as u64 as i64, u as u64 as i64);
            halves(*x).cmp(&halves(*y))
        }
        (a, b) => a.compare(b)?,
    })
}

/// `Double.compare`/`Float.compare`: NaN equals NaN and is above everything, `-0.0 < 0.0`.
fn java_double_compare(x: f64, y: f64) -> Ordering {
    match (x.is_nan(), y.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => x.total_cmp(&y),
    }
}

#[cfg(test)]
#[path = "residual_tests.rs"]
mod tests;
